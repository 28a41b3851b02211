/*
 * The llm interface: opening a backend, completing, recording transcripts. The settings live
 * in llm_settings.c (values) and llm_config.c (file, environment, flags), errors in
 * llm_error.c, replies in llm_reply.c and llm_parse.c, the HTTP call in llm_http_call.c, the
 * wire formats in llm_openai.c and llm_anthropic.c, the other backends in llm_cmd.c and
 * llm_replay.c.
 */
#include "llm/llm_impl.h"
#include "common/proc.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct llm_backend *find_backend(const char *name)
{
	const struct llm_backend *all[] = { &llm_backend_openai, &llm_backend_anthropic,
					    &llm_backend_cmd, &llm_backend_replay };
	for (size_t i = 0; i < ARRAY_SIZE(all); i++)
		if (!strcmp(all[i]->name, name))
			return all[i];
	return NULL;
}

struct llm *llm_open(const struct llm_config *cfg, int *rcp, char **err)
{
	struct llm *m = xcalloc(1, sizeof(*m));
	int rc;
	const char *key = NULL;
	int explicit_env = cfg->api_key_env != NULL;
	m->record_fd = -1;
	llm_config_copy(&m->cfg, cfg);
	rc = llm_config_resolve(&m->cfg, err);
	if (rc)
		goto out;
	if (!strcmp(m->cfg.backend, "builtin")) {
		*err = xstrdup("the builtin backend is no language model: it is the offline policy of "
			       "'cutegen run --backend builtin' over cutegen's own CuTe kernel families; "
			       "choose openai, anthropic, cmd or replay here");
		rc = LLM_ERR_CONFIG;
		goto out;
	}
	m->be = find_backend(m->cfg.backend);
	if (!m->be)
		BUG("backend '%s' resolved but not found", m->cfg.backend);
	if (!strcmp(m->cfg.backend, "openai") || !strcmp(m->cfg.backend, "anthropic")) {
		rc = llm_config_key(&m->cfg, explicit_env, &key, err);
		if (rc)
			goto out;
		if (key) {
			size_t n = strlen(key);
			while (n && isspace((unsigned char)key[n - 1]))
				n--;
			m->api_key = xstrndup(key, n);
			if (strpbrk(m->api_key, "\r\n")) {
				rc = LLM_ERR_CONFIG;
				*err = xasprintf("the key in %s contains a line break; set it to the "
						 "key alone", m->cfg.api_key_env);
				goto out;
			}
		}
		m->http = http_open();
		if (!m->http) {
			rc = LLM_ERR_NETWORK;
			*err = xstrdup("cannot initialize libcurl");
			goto out;
		}
	}
	if (m->cfg.record_path) {
		m->record_fd = open(m->cfg.record_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
				    0644);
		if (m->record_fd < 0) {
			rc = LLM_ERR_IO;
			*err = xasprintf("cannot open transcript '%s' for recording: %s",
					 m->cfg.record_path, strerror(errno));
			goto out;
		}
	}
	rc = m->be->open ? m->be->open(m, err) : LLM_OK;
out:
	*rcp = rc;
	if (rc) {
		m->be = NULL; /* a backend whose open failed has cleaned up after itself */
		llm_close(m);
		return NULL;
	}
	return m;
}

void llm_set_progress(struct llm *m, llm_progress_fn fn, void *ctx)
{
	m->progress = fn;
	m->progress_ctx = ctx;
}

const struct llm_config *llm_config_of(const struct llm *m)
{
	return &m->cfg;
}

static const char *stop_name(enum llm_stop s)
{
	return s == LLM_STOP_END ? "end" : s == LLM_STOP_LENGTH ? "length" : "other";
}

/* Appends the reply to the record transcript as one JSON line, in one write. */
static int record_reply(struct llm *m, const struct llm_reply *r, char **err)
{
	json_t *j = json_pack("{s:s, s:s, s:{s:I, s:I, s:I}, s:s, s:s?, s:f, s:I}",
			      "reply", r->text ? r->text : "", "stop", stop_name(r->stop),
			      "usage", "in", (json_int_t)r->in_tokens, "out",
			      (json_int_t)r->out_tokens, "cached", (json_int_t)r->cached_tokens,
			      "backend", m->cfg.backend, "model", r->model ? r->model : m->cfg.model,
			      "seconds", r->seconds, "attempts", (json_int_t)r->attempts);
	if (!j)
		BUG("cannot build a transcript line");
	char *line = json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(j);
	size_t n = strlen(line);
	line[n] = '\n'; /* json_dumps leaves room: rewrite the NUL, write n+1 bytes */
	size_t off = 0;
	int rc = LLM_OK;
	while (off < n + 1) {
		ssize_t w = write(m->record_fd, line + off, n + 1 - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			rc = LLM_ERR_IO;
			*err = xasprintf("cannot append to transcript '%s': %s", m->cfg.record_path,
					 strerror(errno));
			break;
		}
		off += (size_t)w;
	}
	line[n] = '\0';
	free(line);
	return rc;
}

int llm_complete(struct llm *m, const struct llm_message *msgs, int n, struct llm_reply *out,
		 char **err)
{
	int rc;
	*err = NULL;
	memset(out, 0, sizeof(*out));
	if (n < 1) {
		*err = xstrdup("no messages to send");
		return LLM_ERR_CONFIG;
	}
	for (int i = 0; i < n; i++)
		if (!msgs[i].role || !msgs[i].content ||
		    (strcmp(msgs[i].role, "system") && strcmp(msgs[i].role, "user") &&
		     strcmp(msgs[i].role, "assistant"))) {
			*err = xasprintf("message %d needs a role (system, user or assistant) and "
					 "content", i + 1);
			return LLM_ERR_CONFIG;
		}
	double start = now_s();
	rc = m->be->complete(m, msgs, n, out, err);
	if (!out->seconds)
		out->seconds = now_s() - start;
	if (!out->attempts)
		out->attempts = 1;
	if (!out->text)
		out->text = xstrdup("");
	if (rc)
		goto out;
	out->cost_usd = llm_cost(llm_config_price(&m->cfg, out->model ? out->model : m->cfg.model),
				 out->in_tokens, out->out_tokens, out->cached_tokens,
				 out->cache_write_tokens);
	if (!out->cost_usd && out->model && m->cfg.model && strcmp(out->model, m->cfg.model))
		out->cost_usd = llm_cost(llm_config_price(&m->cfg, m->cfg.model), out->in_tokens,
					 out->out_tokens, out->cached_tokens, out->cache_write_tokens);
	if (m->record_fd >= 0)
		rc = record_reply(m, out, err);
out:
	return rc;
}

void llm_close(struct llm *m)
{
	if (!m)
		return;
	if (m->be && m->be->close)
		m->be->close(m);
	if (m->record_fd >= 0)
		close(m->record_fd);
	http_close(m->http);
	if (m->api_key) {
		/* do not leave the key lying in freed memory */
		volatile char *k = m->api_key;
		while (*k)
			*k++ = 0;
		free(m->api_key);
	}
	llm_config_release(&m->cfg);
	free(m);
}
