/*
 * The reply being assembled from one body or from stream events, shared by the HTTP backends,
 * and the message inside an error body. The wire formats' own parsers live in llm_openai.c and
 * llm_anthropic.c.
 */
#include "llm/llm_impl.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static int parse_on_sse(void *ctx, const struct sse_event *ev)
{
	struct llm_parse *p = ctx;
	int rc = p->on_event(p, ev, &p->event_err);
	return rc;
}

void llm_parse_init(struct llm_parse *p,
		    int (*on_event)(struct llm_parse *, const struct sse_event *, char **))
{
	memset(p, 0, sizeof(*p));
	strbuf_init(&p->text, 0);
	p->text.cap = LLM_MAX_TEXT;
	p->on_event = on_event;
	sse_init(&p->sse, LLM_MAX_EVENT, parse_on_sse, p);
}

void llm_parse_release(struct llm_parse *p)
{
	strbuf_release(&p->text);
	free(p->stop_raw);
	free(p->model);
	free(p->error_msg);
	free(p->event_err);
	sse_release(&p->sse);
	p->stop_raw = p->model = p->error_msg = p->event_err = NULL;
}

void llm_parse_reset(struct llm_parse *p)
{
	llm_progress_fn fn = p->progress;
	void *ctx = p->progress_ctx;
	int (*on_event)(struct llm_parse *, const struct sse_event *, char **) = p->on_event;
	llm_parse_release(p);
	llm_parse_init(p, on_event);
	p->progress = fn;
	p->progress_ctx = ctx;
}

int llm_text_nul(const char *s, size_t n, size_t base, char **err)
{
	const char *z = memchr(s, 0, n);
	if (!z)
		return LLM_OK;
	*err = xasprintf("the reply holds a NUL byte (at byte %zu of its text); a reply is text, "
			 "so it is not used (a model command that prints binary output, or a server "
			 "that sent \\u0000)", base + (size_t)(z - s));
	return LLM_ERR_MALFORMED;
}

int llm_parse_add_text(struct llm_parse *p, const char *s, size_t n, char **err)
{
	if (llm_text_nul(s, n, p->text.len, err))
		return LLM_ERR_MALFORMED;
	if (strbuf_add(&p->text, s, n)) {
		*err = xasprintf("the reply passed the cap of %zu bytes of text", LLM_MAX_TEXT);
		return LLM_ERR_TOO_BIG;
	}
	p->deltas++;
	if (p->progress) {
		long est = (long)(p->text.len / 4);
		p->progress(p->progress_ctx, est > p->deltas ? est : p->deltas);
	}
	return LLM_OK;
}

int llm_parse_feed(struct llm_parse *p, const char *buf, size_t n, char **err)
{
	p->stream_bytes += n;
	if (p->stream_bytes > LLM_MAX_STREAM) {
		*err = xasprintf("the reply stream passed the cap of %zu bytes", LLM_MAX_STREAM);
		return LLM_ERR_TOO_BIG;
	}
	int rc = sse_feed(&p->sse, buf, n);
	if (rc == SSE_TOO_BIG) {
		*err = xasprintf("an event in the reply stream passed the cap of %zu bytes",
				 LLM_MAX_EVENT);
		return LLM_ERR_TOO_BIG;
	}
	if (rc) {
		*err = p->event_err ? p->event_err : xstrdup("malformed event in the reply stream");
		p->event_err = NULL;
		return rc;
	}
	return LLM_OK;
}

void llm_parse_to_reply(struct llm_parse *p, struct llm_reply *out)
{
	free(out->text);
	out->text = strbuf_detach(&p->text, NULL);
	p->text.cap = LLM_MAX_TEXT;
	out->stop = p->stop;
	free(out->stop_raw);
	out->stop_raw = p->stop_raw;
	p->stop_raw = NULL;
	free(out->model);
	out->model = p->model;
	p->model = NULL;
	out->in_tokens = p->in_tokens;
	out->out_tokens = p->out_tokens;
	out->cached_tokens = p->cached_tokens;
	out->cache_write_tokens = p->cache_write_tokens;
}

char *llm_error_body_message(const char *body, size_t len, char **type)
{
	json_error_t jerr;
	char *msg = NULL;
	if (type)
		*type = NULL;
	while (len && isspace((unsigned char)*body)) {
		body++;
		len--;
	}
	while (len && isspace((unsigned char)body[len - 1]))
		len--;
	if (!len)
		return NULL;
	json_t *j = json_loadb(body, len, 0, &jerr);
	if (json_is_object(j)) {
		json_t *e = json_object_get(j, "error");
		json_t *m = NULL, *t = NULL;
		if (json_is_object(e)) {
			m = json_object_get(e, "message");
			t = json_object_get(e, "type");
			if (!json_is_string(t))
				t = json_object_get(e, "code");
		} else if (json_is_string(e)) {
			m = e;
		}
		if (!json_is_string(m))
			m = json_object_get(j, "message");
		if (!json_is_string(m))
			m = json_object_get(j, "detail");
		if (!json_is_string(t))
			t = json_object_get(j, "type");
		if (json_is_string(m))
			msg = xstrdup(json_string_value(m));
		else if (json_is_object(json_object_get(j, "detail")) ||
			 json_is_array(json_object_get(j, "detail")))
			msg = json_dumps(json_object_get(j, "detail"), JSON_COMPACT);
		if (type && json_is_string(t) && strcmp(json_string_value(t), "error"))
			*type = xstrdup(json_string_value(t));
	}
	json_decref(j);
	if (!msg) {
		/* not JSON we know: show its start, one line, printable */
		size_t n = len < 300 ? len : 300;
		msg = xstrndup(body, n);
		for (char *c = msg; *c; c++)
			if (!isprint((unsigned char)*c))
				*c = ' ';
	}
	if (strlen(msg) > 600)
		strcpy(msg + 597, "...");
	return msg;
}
