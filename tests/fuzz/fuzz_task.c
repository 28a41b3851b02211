/*
 * libFuzzer target for the task parser: any input either fails with a one-line message or
 * gives a task whose canonical JSON reads back to the same task. Build and run (clang):
 *   make build/gen/embedded.c
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Isrc -o build/fuzz-task \
 *     tests/fuzz/fuzz_task.c src/common/task.c src/common/embedded_find.c src/util/[a-z]*.c build/gen/embedded.c -ljansson
 *   mkdir -p build/fuzz-corpus && build/fuzz-task -max_total_time=60 build/fuzz-corpus
 */
#include "common/task.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *err = NULL;
	struct task *t = task_parse_json((const char *)data, size, "fuzz.json", &err);
	if (!t) {
		if (!err || strchr(err, '\n'))
			BUG("parse error without a one-line message");
		free(err);
		return 0;
	}
	struct strbuf sb = STRBUF_INIT;
	task_to_json(t, &sb);
	struct task *u = task_parse_json(sb.buf, sb.len, "fuzz.json", &err);
	if (!u)
		BUG("canonical JSON does not parse: %s\n%s", err, sb.buf);
	if (!task_equal(t, u))
		BUG("canonical JSON does not round-trip:\n%s", sb.buf);
	struct tensor_spec ts[TASK_MAX_TENSORS];
	double v[TASK_MAX_SCALARS];
	const char *n[TASK_MAX_SCALARS];
	task_tensors(t, ts);
	task_scalars(t, v, n);
	/* skip the per-row count of huge structured GEMMs: it is O(M) by design */
	if (t->m < (1 << 20))
		(void)task_flops(t);
	(void)task_min_bytes(t);
	strbuf_release(&sb);
	task_free(t);
	task_free(u);
	return 0;
}
