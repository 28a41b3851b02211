/*
 * The HTTP call shared by the openai and anthropic backends: POST with timeouts and retries,
 * stream or body into a struct llm_parse, and every failure mapped to an enum llm_error with a
 * message that says what to fix. Not for: the wire formats (llm_openai.c, llm_anthropic.c).
 */
#include "llm/llm_impl.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct stream_ctx {
	struct llm_parse *parse;
	const struct llm_http_call *call;
	struct http_response *res;
	int fail_rc;     /* a late parse failure found by the end hook */
	char *fail_msg;
	int feed_rc;     /* why the data hook refused */
};

static void hook_begin(void *ctx)
{
	struct stream_ctx *sc = ctx;
	llm_parse_reset(sc->parse);
	free(sc->fail_msg);
	sc->fail_msg = NULL;
	sc->fail_rc = sc->feed_rc = 0;
}

static int hook_data(void *ctx, const char *p, size_t n, char **err)
{
	struct stream_ctx *sc = ctx;
	int rc = llm_parse_feed(sc->parse, p, n, err);
	if (rc)
		sc->feed_rc = rc;
	return rc;
}

static int hook_end(void *ctx)
{
	struct stream_ctx *sc = ctx;
	struct llm_parse *p = sc->parse;
	if (p->error_status)
		return (int)p->error_status;
	if (!p->sse.events) {
		/* a server that ignores "stream": true answers with one JSON body */
		const char *b = sc->res->body.buf;
		size_t n = sc->res->body.len;
		while (n && isspace((unsigned char)*b)) {
			b++;
			n--;
		}
		if (n && *b == '{' && !sc->res->body_cut) {
			sc->fail_rc = sc->call->parse_body(p, b, n, &sc->fail_msg);
			return 0;
		}
	}
	if (!p->finished)
		return HTTP_STREAM_TRUNCATED;
	return 0;
}

static char *with_attempts(char *msg, int attempts)
{
	if (attempts <= 1)
		return msg;
	char *r = xasprintf("%s (after %d attempts)", msg, attempts);
	free(msg);
	return r;
}

static int status_error(struct llm *m, const struct llm_http_call *call, long status,
			const char *msg, const char *request_id, int attempts, char **err)
{
	int rc;
	char extra[160] = "";
	const char *what, *hint;
	char *hint_buf = NULL;
	size_t k = 0;
	if (request_id && *request_id)
		k += (size_t)snprintf(extra, sizeof(extra), " [request id %.90s]", request_id);
	if (attempts > 1 && k < sizeof(extra))
		snprintf(extra + k, sizeof(extra) - k, " (after %d attempts)", attempts);
	if (status == 401 || status == 403) {
		rc = LLM_ERR_AUTH;
		what = "the server refused the API key";
		hint = call->key_hint;
	} else if (status == 404) {
		rc = LLM_ERR_NOT_FOUND;
		what = "not found";
		hint = hint_buf = xasprintf("check the model name '%s' and the base URL (OpenAI-"
					    "compatible servers usually end in /v1)", m->cfg.model);
	} else if (status == 429) {
		rc = LLM_ERR_RATE_LIMIT;
		what = "rate limited";
		hint = "wait and try again, or raise --retries";
	} else if (status >= 500) {
		rc = LLM_ERR_SERVER;
		what = "server error";
		hint = "try again later";
	} else if (status >= 400) {
		rc = LLM_ERR_BAD_REQUEST;
		what = "the server rejected the request";
		hint = "fix what it names (model, --max-tokens, --temperature...)";
	} else {
		*err = xasprintf("unexpected HTTP %ld from %s%s; check the base URL", status,
				 call->shown_url, extra);
		return LLM_ERR_MALFORMED;
	}
	*err = xasprintf("%s at %s (HTTP %ld: %s)%s; %s", what, call->shown_url, status,
			 msg ? msg : "no message", extra, hint);
	free(hint_buf);
	return rc;
}

int llm_http_call(struct llm *m, const struct llm_http_call *call, struct llm_reply *out,
		  char **err)
{
	struct http_response res = HTTP_RESPONSE_INIT;
	struct stream_ctx sc = { call->parse, call, &res, 0, NULL, 0 };
	struct http_hooks hooks = { &sc, hook_begin, hook_data, hook_end };
	struct http_request req = {
		.url = call->url,
		.shown_url = call->shown_url,
		.headers = call->headers,
		.body = call->body,
		.body_len = strlen(call->body),
		.connect_timeout_s = m->cfg.connect_timeout_s,
		.timeout_s = m->cfg.request_timeout_s,
		.max_body = LLM_MAX_TEXT,
		.max_retries = m->cfg.max_retries,
		.backoff_base_s = m->cfg.backoff_base_s > 0 ? m->cfg.backoff_base_s : 0.001,
		.hooks = call->stream ? &hooks : NULL,
	};
	char *herr = NULL;
	int rc = LLM_OK;

	call->parse->progress = m->progress;
	call->parse->progress_ctx = m->progress_ctx;
	int hrc = http_post(m->http, &req, &res, &herr);
	out->attempts = res.attempts;
	out->seconds = res.seconds;
	if (res.body.len) {
		out->response_raw = xstrndup(res.body.buf, res.body.len);
		llm_scrub(&out->response_raw, m->api_key);
	}
	switch (hrc) {
	case HTTP_OK:
		break;
	case HTTP_E_TIMEOUT:
		rc = LLM_ERR_TIMEOUT;
		break;
	case HTTP_E_TRUNCATED:
		rc = LLM_ERR_TRUNCATED;
		break;
	case HTTP_E_TOOBIG:
		rc = LLM_ERR_TOO_BIG;
		break;
	case HTTP_E_ABORTED:
		rc = sc.feed_rc ? sc.feed_rc : LLM_ERR_MALFORMED;
		break;
	default:
		rc = LLM_ERR_NETWORK;
		break;
	}
	if (rc) {
		*err = with_attempts(herr, res.attempts);
		herr = NULL;
		goto out;
	}
	if (res.status / 100 != 2) {
		char *msg = NULL;
		if (call->stream && call->parse->error_status == res.status && call->parse->error_msg)
			msg = xstrdup(call->parse->error_msg);
		else
			msg = llm_error_body_message(res.body.buf, res.body.len, NULL);
		rc = status_error(m, call, res.status, msg, res.request_id, res.attempts, err);
		free(msg);
		goto out;
	}
	if (call->stream) {
		if (sc.fail_rc) {
			rc = sc.fail_rc;
			*err = sc.fail_msg;
			sc.fail_msg = NULL;
			goto out;
		}
	} else {
		rc = call->parse_body(call->parse, res.body.buf, res.body.len, err);
		if (rc)
			goto out;
	}
	llm_parse_to_reply(call->parse, out);
out:
	if (rc && *err)
		llm_scrub(err, m->api_key);
	free(herr);
	free(sc.fail_msg);
	http_response_release(&res);
	return rc;
}
