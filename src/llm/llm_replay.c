/*
 * The "replay" backend: replies read in order from a transcript, so a run can be repeated
 * without a model (tests, demos, debugging the agent). The transcript is JSON Lines, one reply
 * per line, as llm_config.record_path writes them (format in docs/llm.md):
 *   {"reply": "text", "stop": "end", "usage": {"in": 10, "out": 20, "cached": 0}}
 *   {"error": {"kind": "rate_limited", "message": "..."}}
 * The whole file is read and checked at llm_open; the prompts sent are not compared.
 */
#include "llm/llm_impl.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TRANSCRIPT ((size_t)64 << 20)

struct entry {
	char *text, *stop_raw, *model, *line;
	enum llm_stop stop;
	long in, out, cached;
	int error;        /* an llm_error to return instead of a reply, 0 = none */
	char *error_msg;
};

struct replay {
	struct entry *e;
	size_t n, alloc, next;
};

static long int_field(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_integer(v) && json_integer_value(v) > 0 ? (long)json_integer_value(v) : 0;
}

static int parse_line(struct replay *r, const char *path, int lineno, const char *line,
		      size_t len, char **err)
{
	json_error_t jerr;
	int rc = LLM_OK;
	json_t *j = json_loadb(line, len, 0, &jerr);
	json_t *reply = json_object_get(j, "reply");
	json_t *error = json_object_get(j, "error");
	if (!json_is_object(j) || (!json_is_string(reply) && !json_is_object(error))) {
		*err = xasprintf("transcript '%s' line %d: %s", path, lineno,
				 !j ? jerr.text : "expected an object with \"reply\" (a string) or "
						  "\"error\" (an object)");
		rc = LLM_ERR_INPUT;
		goto out;
	}
	ALLOC_GROW(r->e, r->n + 1, r->alloc);
	struct entry *e = &r->e[r->n++];
	memset(e, 0, sizeof(*e));
	e->line = xstrndup(line, len);
	if (json_is_object(error)) {
		json_t *kind = json_object_get(error, "kind");
		json_t *msg = json_object_get(error, "message");
		e->error = json_is_string(kind) ? llm_error_from_name(json_string_value(kind)) : -1;
		if (e->error <= 0) {
			*err = xasprintf("transcript '%s' line %d: error.kind must name an error "
					 "(rate_limited, server, timeout, ...)", path, lineno);
			rc = LLM_ERR_INPUT;
			goto out;
		}
		e->error_msg = xstrdup(json_is_string(msg) ? json_string_value(msg)
							   : "error recorded in the transcript");
		e->text = xstrdup("");
		goto out;
	}
	e->text = xstrndup(json_string_value(reply), json_string_length(reply));
	json_t *stop = json_object_get(j, "stop");
	const char *s = json_is_string(stop) ? json_string_value(stop) : "end";
	if (!strcmp(s, "end"))
		e->stop = LLM_STOP_END;
	else if (!strcmp(s, "length"))
		e->stop = LLM_STOP_LENGTH;
	else if (!strcmp(s, "other"))
		e->stop = LLM_STOP_OTHER;
	else {
		*err = xasprintf("transcript '%s' line %d: stop must be end, length or other (got "
				 "\"%.40s\")", path, lineno, s);
		rc = LLM_ERR_INPUT;
		goto out;
	}
	e->stop_raw = xstrdup(s);
	json_t *usage = json_object_get(j, "usage");
	e->in = int_field(usage, "in");
	e->out = int_field(usage, "out");
	e->cached = int_field(usage, "cached");
	json_t *model = json_object_get(j, "model");
	if (json_is_string(model))
		e->model = xstrdup(json_string_value(model));
out:
	json_decref(j);
	return rc;
}

static void replay_close(struct llm *m)
{
	struct replay *r = m->state;
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++) {
		free(r->e[i].text);
		free(r->e[i].stop_raw);
		free(r->e[i].model);
		free(r->e[i].line);
		free(r->e[i].error_msg);
	}
	free(r->e);
	free(r);
	m->state = NULL;
}

static int replay_open(struct llm *m, char **err)
{
	struct strbuf sb = STRBUF_INIT;
	struct replay *r = xcalloc(1, sizeof(*r));
	const char *path = m->cfg.replay_path;
	int rc = LLM_OK;
	m->state = r;
	int fr = strbuf_read_file(&sb, path, MAX_TRANSCRIPT);
	if (fr == CG_INPUT_TOOBIG) {
		*err = xasprintf("transcript '%s' is larger than %zu bytes", path, MAX_TRANSCRIPT);
		rc = LLM_ERR_INPUT;
		goto out;
	}
	if (fr) {
		*err = xasprintf("cannot read transcript '%s': %s", path, strbuf_read_strerror(fr, path));
		rc = LLM_ERR_INPUT;
		goto out;
	}
	int lineno = 0;
	for (const char *p = sb.buf; p < sb.buf + sb.len;) {
		const char *nl = memchr(p, '\n', (size_t)(sb.buf + sb.len - p));
		const char *end = nl ? nl : sb.buf + sb.len;
		lineno++;
		const char *q = p;
		while (q < end && (*q == ' ' || *q == '\t' || *q == '\r'))
			q++;
		if (q < end) {
			rc = parse_line(r, path, lineno, p, (size_t)(end - p), err);
			if (rc)
				goto out;
		}
		p = end + 1;
	}
	if (!r->n) {
		*err = xasprintf("transcript '%s' has no replies", path);
		rc = LLM_ERR_INPUT;
	}
out:
	strbuf_release(&sb);
	if (rc)
		replay_close(m);
	return rc;
}

static int replay_complete(struct llm *m, const struct llm_message *msgs, int n,
			   struct llm_reply *out, char **err)
{
	struct replay *r = m->state;
	out->request_json = llm_messages_json(&m->cfg, msgs, n);
	if (r->next >= r->n) {
		*err = xasprintf("transcript '%s' has no reply left: it holds %zu and this is "
				 "request %zu", m->cfg.replay_path, r->n, r->next + 1);
		r->next++;
		return LLM_ERR_REPLAY_END;
	}
	struct entry *e = &r->e[r->next++];
	out->response_raw = xstrdup(e->line);
	if (e->error) {
		*err = xasprintf("%s (replayed from '%s')", e->error_msg, m->cfg.replay_path);
		return e->error;
	}
	out->text = xstrdup(e->text);
	out->stop = e->stop;
	out->stop_raw = xstrdup(e->stop_raw);
	out->model = e->model ? xstrdup(e->model) : NULL;
	out->in_tokens = e->in;
	out->out_tokens = e->out;
	out->cached_tokens = e->cached;
	return LLM_OK;
}

const struct llm_backend llm_backend_replay = { "replay", replay_open, replay_complete,
						replay_close };
