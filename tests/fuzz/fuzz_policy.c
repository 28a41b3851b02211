/* libFuzzer target for the policy check: `make fuzz`, then
 * mkdir -p build-fuzz/corpus-policy && build-fuzz/fuzz_policy build-fuzz/corpus-policy tests/data/kernels
 * (new inputs go into the first directory; the kernels are the seeds). */
#include <stddef.h>
#include <stdint.h>

#include "eval/policy.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct policy_report rep = POLICY_REPORT_INIT;
	policy_check((const char *)data, size, &rep);
	struct strbuf out = STRBUF_INIT;
	policy_format(&rep, &out);
	strbuf_release(&out);
	policy_report_release(&rep);
	return 0;
}
