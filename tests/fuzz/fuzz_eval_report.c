/* libFuzzer target for the reading of runner reports (eval_result_from_report in src/eval/eval.c):
 * the runner executes untrusted kernels in its own address space, so its report is untrusted.
 * The result is also formatted, for a GEMM and an elementwise task. `make fuzz-run`. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eval/eval.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xstrndup((const char *)data, size);
	struct eval_result r = EVAL_RESULT_INIT;
	char *err = NULL;
	if (eval_result_from_report(&r, text, &err) == 0) {
		const char *names[] = { "kb1/1_square_matmul", "kb1/19_relu" };
		for (int i = 0; i < 2; i++) {
			const struct task *t = task_builtin(names[i]);
			if (!t)
				BUG("no builtin task '%s'", names[i]);
			struct strbuf sb = STRBUF_INIT;
			eval_format(&r, t, &sb);
			strbuf_release(&sb);
		}
		(void)eval_passed(&r);
	} else if (!err) {
		BUG("eval_result_from_report failed without a message");
	}
	free(err);
	eval_result_release(&r);
	free(text);
	return 0;
}
