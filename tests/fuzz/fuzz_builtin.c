/* libFuzzer target for the builtin families' space headers (builtin_space_parse in
 * src/agent/builtin_policy.c; templates can come from a user's CUTEGEN_BUILTIN_DIR) and the
 * walk over a parsed space: every candidate renders, reads back as itself, and the walk ends. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/builtin_policy.h"
#include "util/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xmalloc(size + 1);
	memcpy(text, data, size);
	text[size] = 0;
	struct builtin_space sp;
	memset(&sp, 0, sizeof(sp));
	strcpy(sp.family, "elementwise");
	sp.file = xstrdup("fuzz.cu");
	sp.text = text;
	char *err = NULL;
	if (builtin_space_parse(text, "fuzz.cu", &sp, &err)) {
		if (!err)
			BUG("builtin_space_parse failed without a message");
		free(err);
		builtin_space_release(&sp);
		return 0;
	}
	const struct task *t = task_builtin("kb1/23_softmax");
	struct builtin_tried tried[300];
	int n = 0, stage;
	struct builtin_config c, back;
	char *what;
	while (n < 300 && !builtin_next(&sp, t, tried, n, &c, &stage, &what)) {
		for (int i = 0; i < n; i++)
			if (!memcmp(tried[i].cfg.v, c.v, sizeof(int) * (size_t)sp.nparams))
				BUG("the walk proposed a candidate twice");
		struct strbuf src = STRBUF_INIT;
		builtin_render(&sp, t, &c, &src);
		if (builtin_config_of(&sp, src.buf, &back) ||
		    memcmp(back.v, c.v, sizeof(int) * (size_t)sp.nparams))
			BUG("a candidate does not read back as itself");
		strbuf_release(&src);
		free(what);
		tried[n] = (struct builtin_tried){ c, (n * 7) % 5 != 0, 1.0 + ((n * 13) % 11), (n % 9) / 8.0, 0 };
		n++;
	}
	if (n == 300)
		BUG("the walk did not end");
	builtin_space_release(&sp);
	return 0;
}
