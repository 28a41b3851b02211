/* Tests of the backends that need no network, through the public llm.h interface: replay
 * (order, running out, recorded errors), record -> replay round trip, cmd, and open errors. */
#include "test.h"
#include "cmd/cutegen.h"
#include "llm/llm.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <unistd.h>

static const struct llm_message hello[] = { { "system", "be brief" }, { "user", "hello" } };

TEST(replay_in_order_then_runs_out)
{
	struct llm_config cfg;
	char *err = NULL;
	int rc;
	llm_config_init(&cfg);
	llm_config_set(&cfg.backend, "replay");
	llm_config_set(&cfg.replay_path, test_write_file("t.jsonl",
		"{\"reply\": \"first\", \"usage\": {\"in\": 3, \"out\": 4, \"cached\": 1}, \"model\": \"m\"}\n"
		"\n"
		"{\"error\": {\"kind\": \"rate_limited\", \"message\": \"slow down\"}}\n"
		"{\"reply\": \"third\", \"stop\": \"length\"}\n"));
	llm_config_set_price(&cfg, "m", 1e6, 1e6, 0);
	struct llm *m = llm_open(&cfg, &rc, &err);
	CHECK(m != NULL);
	struct llm_reply r = LLM_REPLY_INIT;
	CHECK_INT(llm_complete(m, hello, 2, &r, &err), LLM_OK);
	CHECK_STR(r.text, "first");
	CHECK_INT(r.in_tokens, 3);
	CHECK_INT(r.cached_tokens, 1);
	CHECK(r.cost_usd > 6.99 && r.cost_usd < 7.01); /* 3 in (1 cached at the in price) + 4 out */
	CHECK_HAS(r.request_json, "\"be brief\"");
	llm_reply_release(&r);
	CHECK_INT(llm_complete(m, hello, 2, &r, &err), LLM_ERR_RATE_LIMIT);
	CHECK_HAS(err, "slow down");
	free(err);
	llm_reply_release(&r);
	CHECK_INT(llm_complete(m, hello, 2, &r, &err), LLM_OK);
	CHECK_STR(r.text, "third");
	CHECK_INT(r.stop, LLM_STOP_LENGTH);
	llm_reply_release(&r);
	CHECK_INT(llm_complete(m, hello, 2, &r, &err), LLM_ERR_REPLAY_END);
	CHECK_HAS(err, "has no reply left: it holds 3 and this is request 4");
	free(err);
	llm_reply_release(&r);
	llm_close(m);
	llm_config_release(&cfg);
}

TEST(replay_bad_transcripts)
{
	const char *bad[] = { "", "{\"reply\": 1}", "not json", "{\"reply\":\"x\",\"stop\":\"maybe\"}",
			      "{\"error\": {\"kind\": \"nope\"}}" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct llm_config cfg;
		char *err = NULL;
		int rc;
		llm_config_init(&cfg);
		llm_config_set(&cfg.replay_path, test_write_file("bad.jsonl", bad[i]));
		CHECK(llm_open(&cfg, &rc, &err) == NULL);
		CHECK_INT(rc, LLM_ERR_INPUT);
		CHECK_HAS(err, "bad.jsonl'");
		free(err);
		llm_config_release(&cfg);
	}
}

TEST(record_then_replay_round_trip)
{
	struct llm_config cfg;
	char *err = NULL;
	int rc;
	char rec[512];
	snprintf(rec, sizeof(rec), "%s/rec.jsonl", test_tmpdir());
	llm_config_init(&cfg);
	llm_config_set(&cfg.llm_cmd, "tr a-z A-Z");
	llm_config_set(&cfg.record_path, rec);
	struct llm *m = llm_open(&cfg, &rc, &err);
	CHECK(m != NULL);
	struct llm_reply r = LLM_REPLY_INIT;
	const struct llm_message one[] = { { "user", "say \"hi\"\n" } };
	CHECK_INT(llm_complete(m, one, 1, &r, &err), LLM_OK);
	CHECK_STR(r.text, "SAY \"HI\"\n");
	llm_reply_release(&r);
	CHECK_INT(llm_complete(m, hello, 2, &r, &err), LLM_OK);
	CHECK_STR(r.text, "[SYSTEM]\nBE BRIEF\n\n[USER]\nHELLO\n");
	llm_reply_release(&r);
	llm_close(m);
	llm_config_release(&cfg);

	llm_config_init(&cfg);
	llm_config_set(&cfg.replay_path, rec);
	m = llm_open(&cfg, &rc, &err);
	CHECK(m != NULL);
	CHECK_STR(llm_config_of(m)->backend, "replay");
	CHECK_INT(llm_complete(m, one, 1, &r, &err), LLM_OK);
	CHECK_STR(r.text, "SAY \"HI\"\n");
	llm_reply_release(&r);
	CHECK_INT(llm_complete(m, one, 1, &r, &err), LLM_OK);
	CHECK_STR(r.text, "[SYSTEM]\nBE BRIEF\n\n[USER]\nHELLO\n");
	llm_reply_release(&r);
	CHECK_INT(llm_complete(m, one, 1, &r, &err), LLM_ERR_REPLAY_END);
	free(err);
	llm_reply_release(&r);
	llm_close(m);
	llm_config_release(&cfg);
}

TEST(cmd_errors)
{
	struct llm_config cfg;
	char *err = NULL;
	int rc;
	const struct llm_message one[] = { { "user", "x" } };
	struct llm_reply r = LLM_REPLY_INIT;
	llm_config_init(&cfg);
	llm_config_set(&cfg.llm_cmd, "echo line1 >&2; echo bad thing >&2; exit 7");
	struct llm *m = llm_open(&cfg, &rc, &err);
	CHECK(m != NULL);
	CHECK_INT(llm_complete(m, one, 1, &r, &err), LLM_ERR_COMMAND);
	CHECK_HAS(err, "exited with 7: line1|bad thing");
	free(err);
	llm_reply_release(&r);
	llm_close(m);
	llm_config_set(&cfg.llm_cmd, "sleep 10");
	cfg.request_timeout_s = 0.2;
	m = llm_open(&cfg, &rc, &err);
	CHECK_INT(llm_complete(m, one, 1, &r, &err), LLM_ERR_TIMEOUT);
	CHECK_HAS(err, "did not finish within 0.2 s");
	free(err);
	llm_reply_release(&r);
	llm_close(m);
	/* a NUL in the output: refused whole, not a reply cut at the NUL */
	llm_config_set(&cfg.llm_cmd, "printf 'a\\000b'");
	cfg.request_timeout_s = 10;
	m = llm_open(&cfg, &rc, &err);
	CHECK_INT(llm_complete(m, one, 1, &r, &err), LLM_ERR_MALFORMED);
	CHECK_HAS(err, "the reply holds a NUL byte (at byte 1 of its text)");
	free(err);
	llm_reply_release(&r);
	llm_close(m);
	llm_config_release(&cfg);
}

TEST(open_errors)
{
	struct llm_config cfg;
	char *err = NULL;
	int rc;
	unsetenv("OPENAI_API_KEY");
	unsetenv("ANTHROPIC_API_KEY");
	unsetenv("OPENAI_BASE_URL");
	llm_config_init(&cfg);
	CHECK(llm_open(&cfg, &rc, &err) == NULL);
	CHECK_INT(rc, LLM_ERR_NO_KEY);
	CHECK_STR(err, "no API key: set OPENAI_API_KEY or use --api-key-env NAME");
	free(err);
	setenv("OPENAI_API_KEY", "two\nlines", 1);
	CHECK(llm_open(&cfg, &rc, &err) == NULL);
	CHECK_INT(rc, LLM_ERR_CONFIG);
	CHECK_HAS(err, "contains a line break");
	free(err);
	llm_config_set(&cfg.llm_cmd, "cat");
	llm_config_set(&cfg.record_path, "/nonexistent/dir/rec.jsonl");
	CHECK(llm_open(&cfg, &rc, &err) == NULL);
	CHECK_INT(rc, LLM_ERR_IO);
	CHECK_HAS(err, "cannot open transcript '/nonexistent/dir/rec.jsonl' for recording");
	free(err);
	llm_config_release(&cfg);
	CHECK_STR(llm_error_name(LLM_ERR_RATE_LIMIT), "rate_limited");
	CHECK_INT(llm_error_from_name("timeout"), LLM_ERR_TIMEOUT);
	CHECK_INT(exit_status_for(llm_error_code(LLM_ERR_NO_KEY)), 4);
	CHECK_INT(exit_status_for(llm_error_code(LLM_ERR_SERVER)), 5);
}
