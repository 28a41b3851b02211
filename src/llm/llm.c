/*
 * The llm interface: configuration values, opening a backend, completing, recording
 * transcripts, usage and cost, and what the HTTP backends share (the reply being assembled, the
 * HTTP call with its error mapping, error bodies). The wire formats live in llm_openai.c and
 * llm_anthropic.c, the other backends in llm_cmd.c and llm_replay.c.
 */
#include "llm/config.h"
#include "llm/llm_impl.h"
#include "util/err.h"
#include "common/proc.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OPENAI_DEFAULT_URL "https://api.openai.com/v1"
#define ANTHROPIC_DEFAULT_URL "https://api.anthropic.com"

/* ---- errors ---- */

static const struct {
	int err;
	const char *name;
	int code; /* its kind: a result code of util/err.h */
} errors[] = {
	{ LLM_OK, "ok", CG_OK },
	{ LLM_ERR_CONFIG, "config", CG_USAGE },
	{ LLM_ERR_NO_KEY, "no_key", CG_ENV },
	{ LLM_ERR_AUTH, "auth", CG_ENV },
	{ LLM_ERR_BAD_REQUEST, "bad_request", CG_EXTERNAL },
	{ LLM_ERR_NOT_FOUND, "not_found", CG_EXTERNAL },
	{ LLM_ERR_RATE_LIMIT, "rate_limited", CG_EXTERNAL },
	{ LLM_ERR_SERVER, "server", CG_EXTERNAL },
	{ LLM_ERR_NETWORK, "network", CG_EXTERNAL },
	{ LLM_ERR_TIMEOUT, "timeout", CG_EXTERNAL },
	{ LLM_ERR_MALFORMED, "malformed", CG_EXTERNAL },
	{ LLM_ERR_TRUNCATED, "truncated", CG_EXTERNAL },
	{ LLM_ERR_TOO_BIG, "too_big", CG_EXTERNAL },
	{ LLM_ERR_COMMAND, "command", CG_EXTERNAL },
	{ LLM_ERR_REPLAY_END, "replay_end", CG_INPUT },
	{ LLM_ERR_INPUT, "input", CG_INPUT },
	{ LLM_ERR_IO, "io", CG_IO },
};

const char *llm_error_name(int err)
{
	for (size_t i = 0; i < ARRAY_SIZE(errors); i++)
		if (errors[i].err == err)
			return errors[i].name;
	return "unknown";
}

int llm_error_from_name(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(errors); i++)
		if (!strcmp(errors[i].name, name))
			return errors[i].err;
	return -1;
}

int llm_error_code(int err)
{
	for (size_t i = 0; i < ARRAY_SIZE(errors); i++)
		if (errors[i].err == err)
			return errors[i].code;
	return CG_INTERNAL;
}

/* ---- configuration values ---- */

void llm_config_init(struct llm_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->temperature = -1;
	cfg->connect_timeout_s = 10;
	cfg->request_timeout_s = 600;
	cfg->max_retries = 3;
	cfg->backoff_base_s = 0.5;
	cfg->stream = 1;
}

void llm_config_release(struct llm_config *cfg)
{
	char **strs[] = { &cfg->backend, &cfg->base_url, &cfg->model, &cfg->api_key_env,
			  &cfg->token_param, &cfg->reasoning_effort, &cfg->llm_cmd,
			  &cfg->replay_path, &cfg->record_path };
	for (size_t i = 0; i < ARRAY_SIZE(strs); i++)
		free(*strs[i]);
	for (size_t i = 0; i < cfg->nprices; i++)
		free(cfg->prices[i].model);
	free(cfg->prices);
	llm_config_init(cfg);
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

void llm_config_copy(struct llm_config *dst, const struct llm_config *src)
{
	*dst = *src;
	dst->backend = dup_or_null(src->backend);
	dst->base_url = dup_or_null(src->base_url);
	dst->model = dup_or_null(src->model);
	dst->api_key_env = dup_or_null(src->api_key_env);
	dst->token_param = dup_or_null(src->token_param);
	dst->reasoning_effort = dup_or_null(src->reasoning_effort);
	dst->llm_cmd = dup_or_null(src->llm_cmd);
	dst->replay_path = dup_or_null(src->replay_path);
	dst->record_path = dup_or_null(src->record_path);
	dst->prices = NULL;
	dst->nprices = dst->alloc_prices = 0;
	for (size_t i = 0; i < src->nprices; i++)
		llm_config_set_price(dst, src->prices[i].model, src->prices[i].in,
				     src->prices[i].out, src->prices[i].cached);
}

void llm_config_set(char **field, const char *value)
{
	char *old = *field;
	*field = dup_or_null(value);
	free(old);
}

void llm_config_set_price(struct llm_config *cfg, const char *model, double in, double out,
			  double cached)
{
	struct llm_price *p = NULL;
	for (size_t i = 0; i < cfg->nprices; i++)
		if (!strcmp(cfg->prices[i].model, model))
			p = &cfg->prices[i];
	if (!p) {
		ALLOC_GROW(cfg->prices, cfg->nprices + 1, cfg->alloc_prices);
		p = &cfg->prices[cfg->nprices++];
		p->model = xstrdup(model);
	}
	p->in = in;
	p->out = out;
	p->cached = cached;
}

const struct llm_price *llm_config_price(const struct llm_config *cfg, const char *model)
{
	const struct llm_price *best = NULL;
	size_t best_len = 0;
	if (!model)
		return NULL;
	for (size_t i = 0; i < cfg->nprices; i++) {
		const char *k = cfg->prices[i].model;
		size_t n = strlen(k);
		if (!strcmp(k, model))
			return &cfg->prices[i];
		if (n && k[n - 1] == '*' && !strncmp(k, model, n - 1) && n > best_len) {
			best = &cfg->prices[i];
			best_len = n;
		}
	}
	return best;
}

double llm_cost(const struct llm_price *p, long in, long out, long cached)
{
	if (!p)
		return 0;
	if (cached > in)
		cached = in;
	/* a cached token with no price of its own is charged as a prompt token */
	double pc = p->cached > 0 ? p->cached : p->in;
	return ((double)(in - cached) * p->in + (double)cached * pc + (double)out * p->out) / 1e6;
}

static int backend_known(const char *b)
{
	return !strcmp(b, "openai") || !strcmp(b, "anthropic") || !strcmp(b, "cmd") ||
	       !strcmp(b, "replay") || !strcmp(b, "builtin");
}

static int env_set(const char *name)
{
	const char *v = name ? getenv(name) : NULL;
	return v && *v;
}

int llm_config_resolve(struct llm_config *cfg, char **err)
{
	if (!cfg->backend) {
		const char *b = "openai";
		if (cfg->llm_cmd)
			b = "cmd";
		else if (cfg->replay_path)
			b = "replay";
		else if (cfg->model && starts_with(cfg->model, "claude"))
			b = "anthropic";
		else if (!env_set("OPENAI_API_KEY") && env_set("ANTHROPIC_API_KEY") && !cfg->base_url)
			b = "anthropic";
		cfg->backend = xstrdup(b);
	}
	if (!backend_known(cfg->backend)) {
		*err = xasprintf("unknown backend '%s'; use openai, anthropic, cmd, replay or builtin",
				 cfg->backend);
		return LLM_ERR_CONFIG;
	}
	int openai = !strcmp(cfg->backend, "openai");
	int anthropic = !strcmp(cfg->backend, "anthropic");
	if (openai || anthropic) {
		if (!cfg->base_url) {
			const char *e = getenv(openai ? "OPENAI_BASE_URL" : "ANTHROPIC_BASE_URL");
			cfg->base_url = xstrdup(e && *e ? e : openai ? OPENAI_DEFAULT_URL
								    : ANTHROPIC_DEFAULT_URL);
		}
		size_t n = strlen(cfg->base_url);
		while (n && cfg->base_url[n - 1] == '/')
			cfg->base_url[--n] = '\0';
		if (!starts_with(cfg->base_url, "http://") && !starts_with(cfg->base_url, "https://")) {
			*err = xasprintf("base URL '%s' must start with http:// or https://",
					 cfg->base_url);
			return LLM_ERR_CONFIG;
		}
		for (const char *c = cfg->base_url; *c; c++)
			if ((unsigned char)*c <= ' ') {
				*err = xasprintf("base URL '%s' contains a space or control character",
						 cfg->base_url);
				return LLM_ERR_CONFIG;
			}
		if (!cfg->model)
			cfg->model = xstrdup(openai ? "gpt-5" : "claude-sonnet-4-5");
		if (!cfg->api_key_env)
			cfg->api_key_env = xstrdup(openai ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY");
		if (openai && !cfg->token_param)
			cfg->token_param = xstrdup(strstr(cfg->base_url, "://api.openai.com")
						   ? "max_completion_tokens" : "max_tokens");
		if (openai && strcmp(cfg->token_param, "max_tokens") &&
		    strcmp(cfg->token_param, "max_completion_tokens")) {
			*err = xasprintf("token_param '%s' must be max_tokens or "
					 "max_completion_tokens", cfg->token_param);
			return LLM_ERR_CONFIG;
		}
		if (anthropic && cfg->reasoning_effort &&
		    strcmp(cfg->reasoning_effort, "none") && strcmp(cfg->reasoning_effort, "minimal") &&
		    strcmp(cfg->reasoning_effort, "low") && strcmp(cfg->reasoning_effort, "medium") &&
		    strcmp(cfg->reasoning_effort, "high")) {
			*err = xasprintf("reasoning effort '%s' is not one of none, minimal, low, "
					 "medium, high", cfg->reasoning_effort);
			return LLM_ERR_CONFIG;
		}
	}
	if (!strcmp(cfg->backend, "cmd") && (!cfg->llm_cmd || !*cfg->llm_cmd)) {
		*err = xstrdup("backend 'cmd' needs a command: use --llm-cmd 'CMD' or set "
			       "CUTEGEN_LLM_CMD");
		return LLM_ERR_CONFIG;
	}
	if (!strcmp(cfg->backend, "replay") && (!cfg->replay_path || !*cfg->replay_path)) {
		*err = xstrdup("backend 'replay' needs a transcript: use --replay FILE or set "
			       "CUTEGEN_REPLAY");
		return LLM_ERR_CONFIG;
	}
	if (cfg->temperature > 2 || isnan(cfg->temperature)) {
		*err = xasprintf("temperature %g is out of range; use 0 to 2", cfg->temperature);
		return LLM_ERR_CONFIG;
	}
	if (cfg->max_tokens < 0) {
		*err = xasprintf("max_tokens must be positive (got %d)", cfg->max_tokens);
		return LLM_ERR_CONFIG;
	}
	if (!(cfg->request_timeout_s > 0) || !(cfg->connect_timeout_s > 0)) {
		*err = xstrdup("timeouts must be positive numbers of seconds");
		return LLM_ERR_CONFIG;
	}
	if (cfg->max_retries < 0 || cfg->max_retries > 20) {
		*err = xasprintf("retries must be 0 to 20 (got %d)", cfg->max_retries);
		return LLM_ERR_CONFIG;
	}
	if (!(cfg->backoff_base_s >= 0) || cfg->backoff_base_s > 60) {
		*err = xstrdup("backoff must be 0 to 60 seconds");
		return LLM_ERR_CONFIG;
	}
	return LLM_OK;
}

static int default_host(const struct llm_config *cfg)
{
	return strstr(cfg->base_url, "://api.openai.com") ||
	       strstr(cfg->base_url, "://api.anthropic.com");
}

/*
 * The key for a resolved HTTP backend: LLM_OK with *key set (or NULL when none is needed: a
 * server of one's own at a non-default URL and no variable asked for), or LLM_ERR_NO_KEY.
 */
static int find_key(const struct llm_config *cfg, int env_explicit, const char **key, char **err)
{
	const char *v = getenv(cfg->api_key_env);
	*key = NULL;
	if (v && *v) {
		*key = v;
		return LLM_OK;
	}
	if (!env_explicit && !default_host(cfg))
		return LLM_OK;
	if (err) {
		if (env_explicit)
			*err = xasprintf("no API key: the variable '%s' (--api-key-env) is not set",
					 cfg->api_key_env);
		else
			*err = xasprintf("no API key: set %s or use --api-key-env NAME",
					 cfg->api_key_env);
	}
	return LLM_ERR_NO_KEY;
}

int llm_configured(const struct llm_config *cfg)
{
	struct llm_config c;
	char *err = NULL;
	const char *key;
	int ok = 0;
	llm_config_copy(&c, cfg);
	int explicit_env = cfg->api_key_env != NULL;
	if (llm_config_resolve(&c, &err))
		goto out;
	if (!strcmp(c.backend, "cmd") || !strcmp(c.backend, "replay") || !strcmp(c.backend, "builtin"))
		ok = 1;
	else
		ok = find_key(&c, explicit_env, &key, NULL) == LLM_OK;
out:
	free(err);
	llm_config_release(&c);
	return ok;
}

static void describe_one(const struct llm_config *base, const char *backend, struct strbuf *out)
{
	struct llm_config c;
	char *err = NULL;
	const char *key;
	llm_config_copy(&c, base);
	int explicit_env = base->api_key_env != NULL;
	int chosen = base->backend && !strcmp(base->backend, backend);
	if (!chosen) {
		/* describe this backend with the shared settings, not another backend's */
		llm_config_set(&c.backend, backend);
		if (base->backend) {
			llm_config_set(&c.base_url, NULL);
			llm_config_set(&c.model, NULL);
			llm_config_set(&c.api_key_env, NULL);
			explicit_env = 0;
		}
	}
	strbuf_addf(out, "  %-10s ", backend);
	if (llm_config_resolve(&c, &err)) {
		if (!strcmp(backend, "cmd"))
			strbuf_addstr(out, "not configured: set CUTEGEN_LLM_CMD or use --llm-cmd 'CMD'\n");
		else if (!strcmp(backend, "replay"))
			strbuf_addstr(out, "not configured: use --replay FILE (a recorded transcript)\n");
		else
			strbuf_addf(out, "not configured: %s\n", err);
		goto out;
	}
	if (!strcmp(backend, "cmd")) {
		strbuf_addf(out, "configured: runs '%.200s'\n", c.llm_cmd);
	} else if (!strcmp(backend, "replay")) {
		strbuf_addf(out, "configured: replays '%.200s'\n", c.replay_path);
	} else if (find_key(&c, explicit_env, &key, NULL) == LLM_OK) {
		strbuf_addf(out, "configured: model %s at %s, ", c.model, c.base_url);
		if (key)
			strbuf_addf(out, "key in %s\n", c.api_key_env);
		else
			strbuf_addstr(out, "no key (own server)\n");
	} else {
		strbuf_addf(out, "not configured: set %s (model %s at %s)\n", c.api_key_env, c.model,
			    c.base_url);
	}
out:
	free(err);
	llm_config_release(&c);
}

void llm_describe_backends(const struct llm_config *cfg, struct strbuf *out)
{
	struct llm_config loaded;
	char *err = NULL;
	llm_config_init(&loaded);
	if (!cfg) {
		if (config_load_llm(&loaded, &err)) {
			strbuf_addf(out, "  (config: %s)\n", err);
			free(err);
			err = NULL;
		}
		cfg = &loaded;
	}
	struct llm_config chosen;
	llm_config_copy(&chosen, cfg);
	if (llm_config_resolve(&chosen, &err) == LLM_OK)
		strbuf_addf(out, "  default: %s%s\n", chosen.backend,
			    llm_configured(cfg) ? "" : " (not configured: cutegen run uses the builtin agent)");
	else
		strbuf_addf(out, "  default: none (%s)\n", err);
	free(err);
	llm_config_release(&chosen);
	const char *names[] = { "openai", "anthropic", "cmd", "replay" };
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		describe_one(cfg, names[i], out);
	strbuf_addf(out, "  %-10s always available: no model, cutegen's own CuTe kernel families tuned "
			 "by measurement (what 'cutegen run' uses when no model is configured)\n",
		    "builtin");
	llm_config_release(&loaded);
}

/* ---- replies ---- */

void llm_reply_release(struct llm_reply *r)
{
	free(r->text);
	free(r->stop_raw);
	free(r->model);
	free(r->request_json);
	free(r->response_raw);
	memset(r, 0, sizeof(*r));
}

void llm_scrub(char **s, const char *secret)
{
	if (!*s || !secret || strlen(secret) < 4 || !strstr(*s, secret))
		return;
	struct strbuf sb = STRBUF_INIT;
	size_t n = strlen(secret);
	const char *p = *s, *hit;
	while ((hit = strstr(p, secret))) {
		strbuf_add(&sb, p, (size_t)(hit - p));
		strbuf_addstr(&sb, "[redacted]");
		p = hit + n;
	}
	strbuf_addstr(&sb, p);
	free(*s);
	*s = strbuf_detach(&sb, NULL);
}

void llm_render_plain(const struct llm_message *msgs, int n, struct strbuf *out)
{
	if (n == 1 && !strcmp(msgs[0].role, "user")) {
		strbuf_addstr(out, msgs[0].content);
		return;
	}
	for (int i = 0; i < n; i++) {
		if (i)
			strbuf_addstr(out, "\n\n");
		strbuf_addf(out, "[%s]\n%s", msgs[i].role, msgs[i].content);
	}
	strbuf_addch(out, '\n');
}

/* ---- the reply being assembled ---- */

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

int llm_parse_add_text(struct llm_parse *p, const char *s, size_t n, char **err)
{
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

/* ---- the HTTP call shared by the openai and anthropic backends ---- */

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

/* ---- open, complete, close ---- */

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
		rc = find_key(&m->cfg, explicit_env, &key, err);
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
				 out->in_tokens, out->out_tokens, out->cached_tokens);
	if (!out->cost_usd && out->model && m->cfg.model && strcmp(out->model, m->cfg.model))
		out->cost_usd = llm_cost(llm_config_price(&m->cfg, m->cfg.model), out->in_tokens,
					 out->out_tokens, out->cached_tokens);
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
