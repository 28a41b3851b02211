/*
 * What the llm backends share and the unit tests reach into: the backend table, the state of a
 * reply being assembled from a body or a stream, the wire-format parsers and the HTTP call with
 * its error mapping. Only llm*.c and tests/unit include this; everyone else uses llm.h.
 */
#ifndef CUTEGEN_LLM_IMPL_H
#define CUTEGEN_LLM_IMPL_H

#include "llm/http.h"
#include "llm/llm.h"
#include "llm/sse.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <stdlib.h>

#define LLM_MAX_TEXT ((size_t)8 << 20)    /* cap on a reply's text */
#define LLM_MAX_EVENT ((size_t)1 << 20)   /* cap on one SSE event */
#define LLM_MAX_STREAM ((size_t)64 << 20) /* cap on a whole reply stream */

struct llm_backend {
	const char *name;
	/* checks the resolved m->cfg, sets m->state; LLM_OK or an error with *err */
	int (*open)(struct llm *m, char **err);
	int (*complete)(struct llm *m, const struct llm_message *msgs, int n,
			struct llm_reply *out, char **err);
	void (*close)(struct llm *m);
};

extern const struct llm_backend llm_backend_openai, llm_backend_anthropic, llm_backend_cmd,
	llm_backend_replay;

struct llm {
	struct llm_config cfg;         /* resolved copy */
	const struct llm_backend *be;
	char *api_key;                 /* from the environment; only ever put in a header */
	struct http *http;
	void *state;                   /* the backend's */
	llm_progress_fn progress;
	void *progress_ctx;
	int record_fd;                 /* -1 = not recording */
};

/* A reply being assembled, from one body or from stream events. */
struct llm_parse {
	struct strbuf text;        /* capped at LLM_MAX_TEXT */
	enum llm_stop stop;
	char *stop_raw, *model;
	long in_tokens, out_tokens, cached_tokens, cache_write_tokens;
	long a_input, a_reads, a_writes; /* anthropic's parts of in_tokens, kept across events */
	int finished;              /* the stream's end marker arrived ([DONE], message_stop) */
	int stopped;               /* a stop reason arrived */
	long error_status;         /* an error event inside a stream: the status it stands for */
	char *error_msg;           /* and its message */
	long deltas;               /* text pieces received */
	size_t stream_bytes;
	struct sse_parser sse;
	int (*on_event)(struct llm_parse *p, const struct sse_event *ev, char **err);
	char *event_err;           /* set by on_event when it fails */
	llm_progress_fn progress;
	void *progress_ctx;
};

void llm_parse_init(struct llm_parse *p,
		    int (*on_event)(struct llm_parse *, const struct sse_event *, char **));
/* Forgets everything received (a new attempt). */
void llm_parse_reset(struct llm_parse *p);
void llm_parse_release(struct llm_parse *p);
/* Appends text from a delta; LLM_OK or LLM_ERR_TOO_BIG with *err. */
/* LLM_ERR_MALFORMED with *err when the n bytes at s (at byte base of the reply's text) hold a
 * NUL: C strings would cut the reply there and the model would hear of a reply "cut off" */
int llm_text_nul(const char *s, size_t n, size_t base, char **err);
int llm_parse_add_text(struct llm_parse *p, const char *s, size_t n, char **err);
/* Moves what was parsed into out (text, stop, usage, model). */
void llm_parse_to_reply(struct llm_parse *p, struct llm_reply *out);
/* Feeds stream bytes to the SSE parser and on_event; LLM_OK or an error with *err. */
int llm_parse_feed(struct llm_parse *p, const char *buf, size_t n, char **err);

/* OpenAI chat completions: a whole (non-streamed) body, and one stream event. */
/* The reply stopped: its reason as the server said it, and what that means (the backends of
 * both wire protocols). */
static inline void llm_parse_stopped(struct llm_parse *p, const char *reason, enum llm_stop stop)
{
	free(p->stop_raw);
	p->stop_raw = xstrdup(reason);
	p->stop = stop;
	p->stopped = 1;
}

/* A JSON number as a long (token counts); 0 for anything else. */
/* A token count of a server's usage: a negative, NaN or missing one counts 0 (a server must
 * not cancel out --max-tokens-total), a larger one than any context holds LLM_TOKENS_MAX (no
 * overflow in the run's totals). */
#define LLM_TOKENS_MAX 1000000000L
static inline long llm_json_long(json_t *j)
{
	double v = json_is_integer(j) ? (double)json_integer_value(j) : json_is_real(j) ? json_real_value(j) : 0;
	if (!(v > 0))
		return 0;
	return v >= (double)LLM_TOKENS_MAX ? LLM_TOKENS_MAX : (long)v;
}

/* LLM_ERR_MALFORMED with "malformed reply from the server: WHAT" in *err. */
static inline int llm_malformed(char **err, const char *what)
{
	*err = xasprintf("malformed reply from the server: %s", what);
	return LLM_ERR_MALFORMED;
}

int openai_parse_body(struct llm_parse *p, const char *body, size_t len, char **err);
int openai_parse_event(struct llm_parse *p, const struct sse_event *ev, char **err);
/* Anthropic messages: likewise. */
int anthropic_parse_body(struct llm_parse *p, const char *body, size_t len, char **err);
int anthropic_parse_event(struct llm_parse *p, const struct sse_event *ev, char **err);

/*
 * The message in an error body of any of the dialects seen in the wild:
 * {"error":{"message":..}} (OpenAI, Anthropic), {"error":".."} (Ollama), {"message":..}
 * (vLLM), {"detail":..} (FastAPI); else the body's start as text. Heap string, or NULL for an
 * empty body. *type, when not NULL, receives error.type (heap) if there is one.
 */
char *llm_error_body_message(const char *body, size_t len, char **type);

/* How a backend describes its HTTP exchange to llm_http_call. */
struct llm_http_call {
	const char *url, *shown_url;
	const char *const *headers;
	const char *body;
	int stream;
	int (*parse_body)(struct llm_parse *, const char *, size_t, char **);
	struct llm_parse *parse;
	const char *key_hint;    /* what to say on 401/403: "check OPENAI_API_KEY" */
};

/*
 * POSTs with m's timeouts and retries, parses the reply into out, and maps every failure to an
 * enum llm_error with a message that says what to fix. Fills out->attempts, seconds,
 * response_raw (API key scrubbed).
 */
int llm_http_call(struct llm *m, const struct llm_http_call *call, struct llm_reply *out,
		  char **err);

/* {"backend", "model", "messages"}: the request_json of backends without a wire body. Heap. */
char *llm_messages_json(const struct llm_config *cfg, const struct llm_message *msgs, int n);

/* Renders msgs as plain text (for the cmd backend and hashing). */
void llm_render_plain(const struct llm_message *msgs, int n, struct strbuf *out);

/* Replaces every occurrence of secret in the heap string *s by "[redacted]". */
void llm_scrub(char **s, const char *secret);

#endif
