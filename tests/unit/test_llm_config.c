/* Tests of the llm settings: file, environment and flags in order of precedence; resolving
 * defaults; whether a backend is configured; prices and cost. */
#include "test.h"
#include "cmd/cutegen.h"
#include "llm/llm_config.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdlib.h>

static void clean_env(void)
{
	const char *vars[] = { "CUTEGEN_CONFIG", "XDG_CONFIG_HOME", "CUTEGEN_BACKEND", "CUTEGEN_MODEL",
			       "CUTEGEN_BASE_URL", "CUTEGEN_API_KEY_ENV", "CUTEGEN_LLM_CMD",
			       "CUTEGEN_REPLAY", "CUTEGEN_RECORD", "CUTEGEN_TEMPERATURE",
			       "CUTEGEN_MAX_TOKENS", "CUTEGEN_REASONING_EFFORT", "CUTEGEN_LLM_TIMEOUT",
			       "CUTEGEN_LLM_RETRIES", "CUTEGEN_LLM_BACKOFF", "OPENAI_API_KEY",
			       "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL" };
	for (size_t i = 0; i < ARRAY_SIZE(vars); i++)
		unsetenv(vars[i]);
}

static const char *file_json =
	"{\"llm\": {\"backend\": \"openai\", \"model\": \"from-file\", \"base_url\": "
	"\"http://127.0.0.1:1/v1\", \"temperature\": 0.5, \"retries\": 1, \"stream\": false, "
	"\"max_tokens\": 77},"
	" \"prices\": {\"from-file\": {\"in\": 2, \"out\": 8}, \"gpt-5*\": {\"in\": 1.25, \"out\": 10, "
	"\"cached\": 0.125}}, \"agent\": {\"whatever\": 1}}";

TEST(config_file_then_env_then_flags)
{
	struct llm_config cfg;
	char *err = NULL;
	clean_env();
	setenv("CUTEGEN_CONFIG", test_write_file("config.json", file_json), 1);
	CHECK_INT(config_load_llm(&cfg, &err), 0);
	CHECK_STR(cfg.model, "from-file");
	CHECK(cfg.temperature == 0.5);
	CHECK_INT(cfg.max_retries, 1);
	CHECK_INT(cfg.stream, 0);
	CHECK_INT(cfg.max_tokens, 77);
	CHECK_INT((int)cfg.nprices, 2);
	llm_config_release(&cfg);

	setenv("CUTEGEN_MODEL", "from-env", 1);
	setenv("CUTEGEN_LLM_RETRIES", "5", 1);
	CHECK_INT(config_load_llm(&cfg, &err), 0);
	CHECK_STR(cfg.model, "from-env");
	CHECK_INT(cfg.max_retries, 5);
	CHECK_STR(cfg.base_url, "http://127.0.0.1:1/v1"); /* untouched by env */

	struct llm_flags f;
	struct opt opts[LLM_FLAGS_MAX];
	int n = llm_flags_opts(&f, opts);
	char *argv[] = { "llm", "--model", "from-flag", "--retries", "0", "--temperature", "0",
			 "--no-stream", "prompt", NULL };
	int npos = 0;
	char ebuf[128];
	CHECK_INT(opt_parse(9, argv, opts, n, &npos, ebuf, sizeof(ebuf)), 0);
	CHECK_INT(npos, 1);
	CHECK_INT(llm_flags_apply(&f, &cfg, &err), 0);
	CHECK_STR(cfg.model, "from-flag");
	CHECK_INT(cfg.max_retries, 0);
	CHECK(cfg.temperature == 0);
	CHECK_INT(cfg.stream, 0);
	CHECK_INT(cfg.max_tokens, 77); /* not given as a flag: the file's value stays */
	llm_config_release(&cfg);
}

TEST(config_default_path_and_missing_file)
{
	struct llm_config cfg;
	char *err = NULL;
	clean_env();
	setenv("XDG_CONFIG_HOME", "/nonexistent-xdg", 1);
	char *p = config_path();
	CHECK_STR(p, "/nonexistent-xdg/cutegen/config.json");
	free(p);
	CHECK_INT(config_load_llm(&cfg, &err), 0); /* a missing default file is fine */
	CHECK(cfg.model == NULL);
	llm_config_release(&cfg);
	setenv("CUTEGEN_CONFIG", "/nonexistent/config.json", 1);
	CHECK_INT(config_load_llm(&cfg, &err), LLM_ERR_INPUT); /* a named one must exist */
	CHECK_HAS(err, "cannot read config '/nonexistent/config.json'");
	free(err);
	llm_config_release(&cfg);
}

TEST(config_file_errors)
{
	struct {
		const char *json, *msg;
	} cases[] = {
		{ "{\"llm\": {\"modle\": \"x\"}}", "unknown key 'llm.modle'" },
		{ "{\"llm\": {\"api_key\": \"sk\"}}", "keys do not go in the file" },
		{ "{\"llm\": {\"retries\": \"3\"}}", "'llm.retries' must be an integer" },
		{ "{\"llm\": {\"stream\": 1}}", "'llm.stream' must be true or false" },
		{ "{\"llm\": []}", "'llm' must be an object" },
		{ "{\"prices\": {\"m\": {\"in\": -1}}}", "'prices.m.in' must be a number >= 0" },
		{ "{\"llm\": {,}}", "line 1 column" },
		{ "[]", "expected a JSON object" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct llm_config cfg;
		char *err = NULL;
		llm_config_init(&cfg);
		CHECK_INT(config_parse_llm(&cfg, cases[i].json, strlen(cases[i].json), "c.json", &err),
			  LLM_ERR_INPUT);
		CHECK_HAS(err, cases[i].msg);
		CHECK_HAS(err, "config 'c.json'");
		free(err);
		llm_config_release(&cfg);
	}
}

TEST(config_env_errors_and_implied_backend)
{
	struct llm_config cfg;
	char *err = NULL;
	clean_env();
	setenv("XDG_CONFIG_HOME", "/nonexistent-xdg", 1);
	setenv("CUTEGEN_TEMPERATURE", "warm", 1);
	CHECK_INT(config_load_llm(&cfg, &err), LLM_ERR_CONFIG);
	CHECK_HAS(err, "CUTEGEN_TEMPERATURE must be a number");
	free(err);
	llm_config_release(&cfg);
	unsetenv("CUTEGEN_TEMPERATURE");
	/* a command in the environment beats the file's backend */
	setenv("CUTEGEN_CONFIG", test_write_file("c.json", "{\"llm\":{\"backend\":\"anthropic\"}}"), 1);
	setenv("CUTEGEN_LLM_CMD", "cat", 1);
	CHECK_INT(config_load_llm(&cfg, &err), 0);
	CHECK_STR(cfg.backend, "cmd");
	llm_config_release(&cfg);
}

TEST(flags_validate_and_imply_backend)
{
	struct llm_config cfg;
	struct llm_flags f;
	struct opt opts[LLM_FLAGS_MAX];
	char *err = NULL;
	int n = llm_flags_opts(&f, opts);
	CHECK(n <= LLM_FLAGS_MAX);
	llm_config_init(&cfg);
	llm_config_set(&cfg.backend, "openai");
	f.replay = "t.jsonl";
	CHECK_INT(llm_flags_apply(&f, &cfg, &err), 0);
	CHECK_STR(cfg.backend, "replay");
	f.retries = 99;
	CHECK_INT(llm_flags_apply(&f, &cfg, &err), LLM_ERR_CONFIG);
	CHECK_HAS(err, "--retries must be 0 to 20");
	free(err);
	f.retries = 2;
	f.max_tokens = 0;
	CHECK_INT(llm_flags_apply(&f, &cfg, &err), LLM_ERR_CONFIG);
	CHECK_HAS(err, "--max-tokens must be positive");
	free(err);
	llm_config_release(&cfg);
}

TEST(resolve_defaults_and_backend_choice)
{
	struct llm_config cfg;
	char *err = NULL;
	clean_env();
	llm_config_init(&cfg);
	CHECK_INT(llm_config_resolve(&cfg, &err), 0);
	CHECK_STR(cfg.backend, "openai");
	CHECK_STR(cfg.base_url, "https://api.openai.com/v1");
	CHECK_STR(cfg.model, "gpt-5");
	CHECK_STR(cfg.api_key_env, "OPENAI_API_KEY");
	CHECK_STR(cfg.token_param, "max_completion_tokens");
	llm_config_release(&cfg);

	llm_config_set(&cfg.model, "claude-opus-4-1");
	CHECK_INT(llm_config_resolve(&cfg, &err), 0);
	CHECK_STR(cfg.backend, "anthropic");
	CHECK_STR(cfg.base_url, "https://api.anthropic.com");
	CHECK_STR(cfg.api_key_env, "ANTHROPIC_API_KEY");
	llm_config_release(&cfg);

	setenv("ANTHROPIC_API_KEY", "k", 1);
	CHECK_INT(llm_config_resolve(&cfg, &err), 0);
	CHECK_STR(cfg.backend, "anthropic"); /* the only key there is */
	llm_config_release(&cfg);

	setenv("OPENAI_BASE_URL", "http://localhost:8000/v1///", 1);
	llm_config_set(&cfg.backend, "openai");
	CHECK_INT(llm_config_resolve(&cfg, &err), 0);
	CHECK_STR(cfg.base_url, "http://localhost:8000/v1");
	CHECK_STR(cfg.token_param, "max_tokens"); /* not OpenAI itself */
	llm_config_release(&cfg);

	llm_config_set(&cfg.backend, "bogus");
	CHECK_INT(llm_config_resolve(&cfg, &err), LLM_ERR_CONFIG);
	CHECK_HAS(err, "unknown backend 'bogus'");
	free(err);
	llm_config_release(&cfg);

	llm_config_set(&cfg.backend, "cmd");
	CHECK_INT(llm_config_resolve(&cfg, &err), LLM_ERR_CONFIG);
	CHECK_HAS(err, "--llm-cmd");
	free(err);
	llm_config_release(&cfg);
}

TEST(configured_and_described_without_keys)
{
	struct llm_config cfg;
	struct strbuf sb = STRBUF_INIT;
	clean_env();
	setenv("XDG_CONFIG_HOME", "/nonexistent-xdg", 1);
	llm_config_init(&cfg);
	CHECK(!llm_configured(&cfg));
	setenv("OPENAI_API_KEY", "sk-secret-value-1234", 1);
	CHECK(llm_configured(&cfg));
	doctor_describe_backends(NULL, &sb);
	CHECK_HAS(sb.buf, "openai     configured: model gpt-5 at https://api.openai.com/v1, key in OPENAI_API_KEY");
	CHECK_HAS(sb.buf, "anthropic  not configured: set ANTHROPIC_API_KEY (model claude-sonnet-4-5 at https://api.anthropic.com)");
	CHECK_HAS(sb.buf, "default: openai\n");
	CHECK_HAS(sb.buf, "cmd        not configured");
	CHECK(!strstr(sb.buf, "sk-secret-value-1234"));
	strbuf_release(&sb);
	unsetenv("OPENAI_API_KEY");
	/* an own server needs no key */
	llm_config_set(&cfg.base_url, "http://127.0.0.1:8000/v1");
	CHECK(llm_configured(&cfg));
	/* unless a variable was named */
	llm_config_set(&cfg.api_key_env, "MY_KEY");
	CHECK(!llm_configured(&cfg));
	llm_config_release(&cfg);
	llm_config_set(&cfg.llm_cmd, "cat");
	CHECK(llm_configured(&cfg));
	llm_config_release(&cfg);
}

TEST(prices_and_cost)
{
	struct llm_config cfg;
	llm_config_init(&cfg);
	llm_config_set_price(&cfg, "gpt-5*", 1.25, 10, 0.125);
	llm_config_set_price(&cfg, "gpt-5-mini*", 0.25, 2, 0);
	llm_config_set_price(&cfg, "gpt-5", 1, 1, 1);
	CHECK(llm_config_price(&cfg, "gpt-5")->in == 1);           /* exact wins */
	CHECK(llm_config_price(&cfg, "gpt-5-mini-x")->in == 0.25); /* longest prefix */
	CHECK(llm_config_price(&cfg, "gpt-5.1")->in == 1.25);
	CHECK(llm_config_price(&cfg, "o3") == NULL);
	/* 1M in of which 200k cached, 100k out at gpt-5* prices: 0.8*1.25 + 0.2*0.125 + 0.1*10 */
	double c = llm_cost(llm_config_price(&cfg, "gpt-5.1"), 1000000, 100000, 200000, 0);
	CHECK(c > 2.0249999 && c < 2.0250001);
	/* no cached price: cached tokens cost as prompt tokens */
	c = llm_cost(llm_config_price(&cfg, "gpt-5-mini-x"), 1000000, 0, 500000, 0);
	CHECK(c > 0.2499999 && c < 0.2500001);
	CHECK(llm_cost(NULL, 100, 100, 0, 0) == 0);
	/* Anthropic: 1M in = 600k read from the cache + 300k written to it + 100k plain */
	llm_config_set_price(&cfg, "claude*", 3, 15, 0.3)->cache_write = 3.75;
	c = llm_cost(llm_config_price(&cfg, "claude-x"), 1000000, 0, 600000, 300000);
	CHECK(fabs(c - (0.1 * 3 + 0.6 * 0.3 + 0.3 * 3.75)) < 1e-9);
	llm_config_release(&cfg);
}
