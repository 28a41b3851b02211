/* libFuzzer target for replay transcripts (src/llm/llm_replay.c): the input is written to a file
 * under $TMPDIR, opened as the replay backend, and replayed to the end. `make fuzz-run`. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llm/llm.h"
#include "util/xalloc.h"

static char path[4096];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!path[0]) {
		const char *tmp = getenv("TMPDIR");
		snprintf(path, sizeof(path), "%s/fuzz-replay-%d.jsonl", tmp ? tmp : "/tmp",
			 (int)getpid());
	}
	FILE *f = fopen(path, "wb");
	if (!f)
		BUG("cannot write '%s'", path);
	if (size && fwrite(data, 1, size, f) != size)
		BUG("cannot write '%s'", path);
	fclose(f);
	struct llm_config cfg;
	llm_config_init(&cfg);
	llm_config_set(&cfg.backend, "replay");
	llm_config_set(&cfg.replay_path, path);
	int rc = 0;
	char *err = NULL;
	struct llm *m = llm_open(&cfg, &rc, &err);
	if (!m) {
		if (!err)
			BUG("llm_open failed without a message");
	} else {
		struct llm_message msg = { "user", "write a kernel" };
		for (int i = 0; i < 1000; i++) {
			struct llm_reply r = LLM_REPLY_INIT;
			free(err);
			err = NULL;
			rc = llm_complete(m, &msg, 1, &r, &err);
			llm_reply_release(&r);
			if (rc == LLM_ERR_REPLAY_END)
				break;
			if (rc != LLM_OK && !err)
				BUG("llm_complete failed without a message");
		}
		llm_close(m);
	}
	free(err);
	llm_config_release(&cfg);
	unlink(path);
	return 0;
}
