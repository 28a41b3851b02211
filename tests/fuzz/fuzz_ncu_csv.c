/* libFuzzer target for the Nsight Compute CSV parser (src/eval/ncu_csv.c); the seeds are recorded
 * ncu output. `make fuzz-run`. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eval/ncu_csv.h"
#include "util/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xmalloc(size ? size : 1);
	memcpy(text, data, size);
	struct ncu_report rep = NCU_REPORT_INIT;
	char *err = NULL;
	if (ncu_csv_parse(text, size, &rep, &err) && !err)
		BUG("ncu_csv_parse failed without a message");
	for (size_t i = 0; i < rep.nr; i++) {
		const struct ncu_kernel *k = &rep.kernels[i];
		for (size_t j = 0; j < k->nr; j++)
			if (ncu_kernel_metric(k, k->metrics[j].name) == NULL)
				BUG("metric '%s' not found by name", k->metrics[j].name);
		(void)ncu_kernel_value(k, "gpu__time_duration.sum", -1);
	}
	free(err);
	ncu_report_release(&rep);
	free(text);
	return 0;
}
