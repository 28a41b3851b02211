/* libFuzzer target for the stage file parser (stages_parse in src/agent/stages.c): stage files come
 * from a user's --prompts directory. `make fuzz-run`. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/stages.h"
#include "util/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xmalloc(size ? size : 1);
	memcpy(text, data, size);
	struct stage_machine m = STAGE_MACHINE_INIT;
	char *err = NULL;
	if (stages_parse(text, size, "fuzz.txt", &m, &err)) {
		if (!err)
			BUG("stages_parse failed without a message");
	} else {
		if (m.n == 0 || m.n > STAGES_MAX)
			BUG("stages_parse gave %zu stages", m.n);
		for (size_t i = 0; i < m.n; i++)
			if (m.stages[i].index != (int)i || m.stages[i].max_iters < 1 ||
			    !m.stages[i].name || !m.stages[i].guidance)
				BUG("stage %zu is malformed", i);
	}
	free(err);
	stage_machine_release(&m);
	free(text);
	return 0;
}
