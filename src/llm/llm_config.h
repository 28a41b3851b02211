/*
 * Where the llm settings come from, in rising precedence: the config file, the environment,
 * the command line. The file is $CUTEGEN_CONFIG, else ${XDG_CONFIG_HOME:-~/.config}/cutegen/
 * config.json (format in docs/llm.md); a missing default file is not an error.
 * Not for: using the settings (llm.h), or other modules' sections of the file (they read their
 * own; unknown top-level sections are ignored here).
 *
 * Usage (what `cutegen llm` and `cutegen run` do):
 *   1. struct llm_flags f; struct opt opts[LLM_FLAGS_MAX + N]; int n = llm_flags_opts(&f, opts);
 *      append the command's own options after opts[n-1], then opt_parse(...);
 *   2. struct llm_config cfg; config_load_llm(&cfg, &err)   (file, then environment);
 *   3. llm_flags_apply(&f, &cfg, &err)                        (flags win);
 *   4. llm_open(&cfg, ...) or llm_configured(&cfg); llm_config_release(&cfg).
 * Errors are LLM_ERR_CONFIG (a bad value: CG_USAGE) or LLM_ERR_INPUT (an unreadable or
 * malformed file: CG_INPUT), as llm_error_code() maps them, with a heap message in *err.
 */
#ifndef CUTEGEN_LLM_CONFIG_H
#define CUTEGEN_LLM_CONFIG_H

#include <stddef.h>

#include "llm/llm.h"
#include "util/opt.h"

/* The config file's path (heap), whether or not it exists. */
char *config_path(void);

/* llm_config_init(cfg), then the file's "llm" and "prices" sections, then the environment. */
int config_load_llm(struct llm_config *cfg, char **err);

/* Applies one config file's text to cfg; path names it in messages. */
int config_parse_llm(struct llm_config *cfg, const char *text, size_t len, const char *path,
		     char **err);

/*
 * Applies the environment: CUTEGEN_BACKEND, CUTEGEN_MODEL, CUTEGEN_BASE_URL,
 * CUTEGEN_API_KEY_ENV, CUTEGEN_LLM_CMD, CUTEGEN_REPLAY, CUTEGEN_RECORD, CUTEGEN_TEMPERATURE,
 * CUTEGEN_MAX_TOKENS, CUTEGEN_REASONING_EFFORT, CUTEGEN_LLM_TIMEOUT, CUTEGEN_LLM_RETRIES,
 * CUTEGEN_LLM_BACKOFF. (The keys themselves, OPENAI_API_KEY and the like, are read at
 * llm_open; OPENAI_BASE_URL and ANTHROPIC_BASE_URL by llm_config_resolve.)
 */
int config_apply_env(struct llm_config *cfg, char **err);

/* The common LLM flags' values as parsed; "unset" until opt_parse sets them. */
struct llm_flags {
	const char *backend, *model, *base_url, *api_key_env, *reasoning_effort, *llm_cmd;
	const char *replay, *record;
	double temperature, timeout; /* NAN = unset */
	int max_tokens, retries;     /* INT_MIN = unset */
	int no_stream;
};

#define LLM_FLAGS_MAX 14

/*
 * Marks every flag unset and writes their struct opt entries (--backend, --model, --base-url,
 * --api-key-env, --temperature, --max-tokens, --reasoning-effort, --llm-cmd, --replay,
 * --record, --timeout, --retries, --no-stream) to opts, which has room for LLM_FLAGS_MAX.
 * Returns how many were written. opts point into f: keep f alive while parsing.
 */
int llm_flags_opts(struct llm_flags *f, struct opt *opts);

/* Applies the flags that were given on top of cfg. --llm-cmd or --replay without --backend
 * also pick their backend. */
int llm_flags_apply(const struct llm_flags *f, struct llm_config *cfg, char **err);

#endif
