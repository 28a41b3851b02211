/* libFuzzer target for the nvcc diagnostics parser and formatter: `make fuzz`, then
 * mkdir -p build-fuzz/corpus-diag && build-fuzz/fuzz_nvcc_diag build-fuzz/corpus-diag tests/data/nvcc
 * (new inputs go into the first directory; the logs are the seeds). */
#include <stddef.h>
#include <stdint.h>

#include "eval/nvcc_diag.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct diag_list dl = DIAG_LIST_INIT;
	diag_parse((const char *)data, size, &dl);
	struct strbuf out = STRBUF_INIT;
	diag_format_first_error(&dl, (const char *)data, size, "kernel.cu", &out);
	for (size_t i = 0; i < dl.nr; i++)
		diag_format_one(&dl.items[i], &out);
	strbuf_release(&out);
	diag_list_release(&dl);
	return 0;
}
