/*
 * Language-model backends behind one interface: "openai" (any OpenAI-compatible chat
 * completions server: OpenAI, vLLM, SGLang, llama.cpp, Ollama, Together, DeepSeek...),
 * "anthropic" (the messages API), "cmd" (pipe the prompt into any command) and "replay"
 * (replies read in order from a recorded transcript). Any backend can also record its replies
 * to a transcript that "replay" reads back.
 * Not for: prompts (the agent), configuration files and flags (llm/llm_config.h), printing.
 *
 * Usage:
 *   1. struct llm_config cfg; llm_config_init(&cfg); then fill it (config_load_llm() and
 *      llm_flags_apply() in llm_config.h do so from the config file, environment and flags);
 *   2. struct llm *m = llm_open(&cfg, &err): checks the config (key present, transcript
 *      readable...) and copies it, so cfg may be released right after;
 *   3. struct llm_reply r = LLM_REPLY_INIT; rc = llm_complete(m, msgs, n, &r, &err) as often as
 *      needed; rc is LLM_OK or an enum llm_error, err a heap message saying what to fix;
 *      llm_reply_release(&r) after each call, whatever rc was;
 *   4. llm_close(m).
 * The API key is read from the environment at llm_open and only ever sent in a request header:
 * it is never in request_json, response_raw, error messages or transcripts.
 */
#ifndef CUTEGEN_LLM_H
#define CUTEGEN_LLM_H

#include <stddef.h>

#include "util/strbuf.h"

/* Errors of llm_open/llm_complete. Each has a name (llm_error_name) and an exit code. */
enum llm_error {
	LLM_OK = 0,
	LLM_ERR_CONFIG,      /* the configuration is wrong: unknown backend, bad value */
	LLM_ERR_NO_KEY,      /* the API key's environment variable is not set */
	LLM_ERR_AUTH,        /* 401/403: the key was refused */
	LLM_ERR_BAD_REQUEST, /* 400/413/422: the server refused the request; its words in err */
	LLM_ERR_NOT_FOUND,   /* 404: no such model, or a wrong base URL */
	LLM_ERR_RATE_LIMIT,  /* 429 still after the retries */
	LLM_ERR_SERVER,      /* 5xx/529 still after the retries */
	LLM_ERR_NETWORK,     /* cannot connect, connection dropped (after the retries) */
	LLM_ERR_TIMEOUT,     /* no complete reply within the deadline (after the retries) */
	LLM_ERR_MALFORMED,   /* the reply is not what the protocol says */
	LLM_ERR_TRUNCATED,   /* the reply stream was cut off before its end (after the retries) */
	LLM_ERR_TOO_BIG,     /* the reply passed its cap */
	LLM_ERR_COMMAND,     /* the cmd backend's command failed */
	LLM_ERR_REPLAY_END,  /* the transcript has no reply left */
	LLM_ERR_INPUT,       /* the transcript file is unreadable or malformed */
	LLM_ERR_IO           /* cannot write the record transcript */
};

/* "auth", "rate_limited", ...: stable names used in --json output and transcripts. */
const char *llm_error_name(int err);
/* The error whose name that is, or -1. */
int llm_error_from_name(const char *name);
/* The kind of this error as a result code of util/err.h (CG_USAGE for a bad configuration,
 * CG_ENV for a missing or refused key, CG_EXTERNAL for the server, ...); the command turns it
 * into its exit status with exit_status_for(). */
int llm_error_code(int err);

/* Per-model prices in USD per million tokens; 0 = unknown. */
struct llm_price {
	char *model;   /* exact model name, or a prefix ending in '*' ("gpt-5*") */
	double in, out, cached;
	double cache_write;   /* prompt tokens written to the cache; 0 = charged as "in" */
};

/*
 * Everything a backend needs. Strings are heap copies owned by the config (set them with
 * llm_config_set); NULL means "not set: use the backend's default".
 */
struct llm_config {
	char *backend;           /* "openai" | "anthropic" | "cmd" | "replay"; NULL = pick one */
	char *base_url;          /* openai: https://api.openai.com/v1; anthropic: https://api.anthropic.com */
	char *model;             /* openai: gpt-5; anthropic: claude-sonnet-4-5 */
	char *api_key_env;       /* name of the key's variable: OPENAI_API_KEY / ANTHROPIC_API_KEY */
	double temperature;      /* < 0 = not sent (server default) */
	int max_tokens;          /* 0 = openai: not sent; anthropic: 8192 */
	char *token_param;       /* openai: "max_tokens" or "max_completion_tokens"; NULL = the
				    latter for api.openai.com, the former elsewhere */
	char *reasoning_effort;  /* openai: sent as reasoning_effort; anthropic: thinking budget */
	double connect_timeout_s;/* default 10 */
	double request_timeout_s;/* one attempt's deadline (cmd: the command's), default 600 */
	int max_retries;         /* default 3 */
	double backoff_base_s;   /* first retry's wait unless the server says; default 0.5 */
	int stream;              /* read the reply as it is generated (SSE); default 1 */
	char *llm_cmd;           /* cmd: run with sh -c, prompt on stdin, reply on stdout */
	char *replay_path;       /* replay: the transcript to read */
	char *record_path;       /* any backend: append each reply to this transcript */
	struct llm_price *prices;/* the price table (config file "prices") */
	size_t nprices, alloc_prices;
};

/* Defaults as above, strings NULL. */
void llm_config_init(struct llm_config *cfg);
/* Frees the strings and the price table; the config is as after llm_config_init. */
void llm_config_release(struct llm_config *cfg);
/* Deep copy into dst (initialized or released by the caller beforehand). */
void llm_config_copy(struct llm_config *dst, const struct llm_config *src);
/* Replaces *field (one of cfg's strings) by a copy of value (NULL clears it). */
void llm_config_set(char **field, const char *value);
/* Adds or replaces one price table row (its cache_write price 0); returns it (owned by cfg,
 * valid until the next row is added). */
struct llm_price *llm_config_set_price(struct llm_config *cfg, const char *model, double in,
				       double out, double cached);
/* The row for model (exact name first, then the longest matching "prefix*"), or NULL. */
const struct llm_price *llm_config_price(const struct llm_config *cfg, const char *model);

/*
 * Fills what is unset with defaults: the backend (cmd if llm_cmd is set, replay if
 * replay_path is, anthropic for a "claude*" model, else openai unless only ANTHROPIC_API_KEY
 * is set), its base URL (OPENAI_BASE_URL / ANTHROPIC_BASE_URL, then the public one), model and
 * key variable. Returns LLM_OK or LLM_ERR_CONFIG (unknown backend, bad value) with *err.
 */
int llm_config_resolve(struct llm_config *cfg, char **err);

/*
 * Whether cfg names a usable model backend: its key variable is set (or a non-default base
 * URL that may need none), or a command or transcript is given. Does not contact anything.
 */
int llm_configured(const struct llm_config *cfg);

/*
 * The key for a resolved HTTP backend config: LLM_OK with *key set (or NULL when none is
 * needed: a server of one's own at a non-default URL and no variable asked for, env_explicit
 * 0), or LLM_ERR_NO_KEY with *err (when err is not NULL) saying which variable to set.
 * env_explicit: the key variable was named by the user, not filled in by the resolve.
 */
int llm_config_key(const struct llm_config *cfg, int env_explicit, const char **key, char **err);

struct llm_message {
	const char *role;    /* "system", "user" or "assistant" */
	const char *content;
};

enum llm_stop {
	LLM_STOP_END = 0,    /* the model finished */
	LLM_STOP_LENGTH,     /* cut off at max_tokens: the text is incomplete */
	LLM_STOP_OTHER       /* content filter, refusal, tool call... (stop_raw says which) */
};

/* One completion and what it cost. All strings are heap, freed by llm_reply_release. */
struct llm_reply {
	char *text;            /* the reply ("" on error) */
	enum llm_stop stop;
	char *stop_raw;        /* the server's word: "stop", "length", "end_turn", ... or NULL */
	char *model;           /* the model that answered, as the server names it, or NULL */
	long in_tokens;        /* prompt tokens, cached ones included; 0 = unknown */
	long out_tokens;       /* generated tokens (reasoning included); 0 = unknown */
	long cached_tokens;    /* the part of in_tokens read from the prompt cache */
	long cache_write_tokens; /* the part written to it (Anthropic's cache_creation_input_tokens) */
	double cost_usd;       /* from the price table; 0 = unknown price */
	double seconds;        /* wall time, retries and waits included */
	int attempts;          /* requests made (1 = no retry) */
	char *request_json;    /* the body sent (no key), for the run store; cmd and replay:
				  {"backend", "model", "messages"} */
	char *response_raw;    /* the raw body of the last attempt (SSE text when streaming),
				  capped; NULL when none */
};

#define LLM_REPLY_INIT { 0 }

void llm_reply_release(struct llm_reply *r);

/* USD for these token counts at this price (in includes cached and writes): see docs/llm.md. */
double llm_cost(const struct llm_price *p, long in, long out, long cached, long writes);

struct llm;

/* Called while a reply streams in, with an estimate of the tokens received so far. */
typedef void (*llm_progress_fn)(void *ctx, long tokens_so_far);

/* Opens a backend for cfg (resolved on a copy). NULL with an error code in *rc and *err. */
struct llm *llm_open(const struct llm_config *cfg, int *rc, char **err);
/* Sets the live progress callback (NULL = none). */
void llm_set_progress(struct llm *m, llm_progress_fn fn, void *ctx);
/* The resolved configuration in use (backend, model, base_url...); owned by m. */
const struct llm_config *llm_config_of(const struct llm *m);
/*
 * Sends msgs[0..n-1] and waits for the whole reply, retrying what is worth retrying.
 * out must be LLM_REPLY_INIT or released; it is filled also on error (attempts, seconds,
 * request_json, response_raw) and must be released either way.
 */
int llm_complete(struct llm *m, const struct llm_message *msgs, int n, struct llm_reply *out,
		 char **err);
void llm_close(struct llm *m);

#endif
