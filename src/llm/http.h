/*
 * HTTP POST for the model backends, on libcurl, with the behaviour of a careful client:
 * a connect timeout and a deadline for each attempt, every response body capped, and retries
 * with exponential backoff and jitter on 429, 5xx (529 included), dropped connections, streams
 * cut short and timeouts, honouring the server's Retry-After (capped). 400/401/403/404 and the
 * like are never retried. Connections are kept alive between calls on one handle.
 * Not for: what the bodies mean (the llm_* backends), or printing anything.
 *
 * Usage:
 *   1. struct http *h = http_open();
 *   2. fill a struct http_request (URL, headers, body, limits, optional stream hooks);
 *      struct http_response res = HTTP_RESPONSE_INIT;
 *   3. rc = http_post(h, &req, &res, &err): HTTP_OK when the last attempt got a response of
 *      any status (read res.status), otherwise why no response came (err says it in words);
 *   4. http_response_release(&res), as many calls as you like, then http_close(h).
 * Secrets in headers (API keys) are sent and never copied into res, err or any log.
 */
#ifndef CUTEGEN_HTTP_H
#define CUTEGEN_HTTP_H

#include <stddef.h>

#include "util/strbuf.h"

enum http_rc {
	HTTP_OK = 0,
	HTTP_E_CONNECT,  /* could not connect (refused, unreachable); retried */
	HTTP_E_RESOLVE,  /* the host name does not resolve; not retried */
	HTTP_E_TIMEOUT,  /* connect timeout or the attempt's deadline passed; retried */
	HTTP_E_DROPPED,  /* the connection broke mid-reply; retried */
	HTTP_E_TRUNCATED,/* a stream ended cleanly but before its end marker; retried */
	HTTP_E_TOOBIG,   /* a body passed its cap; not retried */
	HTTP_E_ABORTED,  /* a stream hook refused the body (malformed); not retried */
	HTTP_E_OTHER     /* TLS, bad URL, ...: curl's words in err; not retried */
};

/* What an end hook returns for a stream that stopped before its terminator. */
#define HTTP_STREAM_TRUNCATED (-1)

/*
 * Hooks for replies read as they arrive (streams). They see only bodies of 2xx responses.
 * begin: before each attempt (reset the parse state);
 * data:  bytes as they arrive; a nonzero return aborts the attempt (HTTP_E_ABORTED, not retried)
 *        and *err (heap, set by the hook) is the message;
 * end:   after the body ended: 0 = complete, HTTP_STREAM_TRUNCATED = no end marker (HTTP_E_TRUNCATED,
 *        retried), or an HTTP status (e.g. 529) that an error event inside the
 *        stream stands for: it replaces res.status and is retried or not like that status.
 */
struct http_hooks {
	void *ctx;
	void (*begin)(void *ctx);
	int (*data)(void *ctx, const char *p, size_t n, char **err);
	int (*end)(void *ctx);
};

struct http_request {
	const char *url;
	const char *shown_url;        /* the URL named in messages (e.g. the base URL); NULL = url */
	const char *const *headers;   /* "Name: value", NULL-terminated */
	const char *body;
	size_t body_len;
	double connect_timeout_s;     /* 0 = 10 s */
	double timeout_s;             /* whole-attempt deadline; 0 = 600 s */
	size_t max_body;              /* cap on a body; 0 = 8 MiB. With hooks, a 2xx body past it is
					 not an error: res.body keeps its first max_body bytes */
	int max_retries;              /* retries after the first attempt (0 = one attempt) */
	double backoff_base_s;        /* first retry's backoff; 0 = 0.5 s */
	double backoff_max_s;         /* cap on a computed backoff; 0 = 8 s */
	double retry_after_max_s;     /* cap on a server's Retry-After; 0 = 60 s */
	const struct http_hooks *hooks; /* NULL = read the whole body into res.body */
};

struct http_response {
	long status;            /* of the last attempt; 0 = no response */
	struct strbuf body;     /* raw body of the last attempt (capped); caller releases */
	int body_cut;           /* a 2xx stream body longer than max_body was cut in res.body */
	double retry_after_s;   /* the last Retry-After in seconds, -1 = none */
	char request_id[96];    /* x-request-id / request-id of the last response, "" = none */
	int attempts;           /* attempts made, >= 1 */
	double seconds;         /* wall time of all attempts and waits */
};

#define HTTP_RESPONSE_INIT { 0, STRBUF_INIT, 0, -1, "", 0, 0 }

struct http *http_open(void);
void http_close(struct http *h);

/*
 * POSTs req and retries as described above. Returns an enum http_rc. err receives a heap
 * message for any rc but HTTP_OK (e.g. "cannot connect to http://127.0.0.1:9/v1: Connection
 * refused"); the caller frees it. res is filled either way (attempts, seconds, last status).
 */
int http_post(struct http *h, const struct http_request *req, struct http_response *res,
	      char **err);

void http_response_release(struct http_response *res);

/* Whether a response with this status is worth another attempt (408, 409, 429, 5xx). */
int http_status_retryable(long status);

/*
 * Seconds to wait before retry number `retry` (1 = the first retry). A server's Retry-After
 * (retry_after_s >= 0) wins, capped at retry_after_max_s; otherwise base * 2^(retry-1) capped at
 * max_s, less up to a quarter of jitter (jitter01 in [0,1) picks how much).
 */
double http_backoff_s(int retry, double retry_after_s, double base_s, double max_s,
		      double retry_after_max_s, double jitter01);

/*
 * Parses a Retry-After value: delta-seconds ("3", "1.5") or an HTTP date, relative to now_epoch.
 * Returns seconds >= 0, or -1 when the value is not understood.
 */
double http_parse_retry_after(const char *value, double now_epoch);

#endif
