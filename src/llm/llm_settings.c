/*
 * The llm settings as values: defaults, copies, the price table and what a call costs, filling
 * in what is unset (llm_config_resolve), and finding the API key. Not for: reading them from the
 * config file, the environment or flags (llm_config.c), describing them (cutegen doctor).
 */
#include "llm/llm.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define OPENAI_DEFAULT_URL "https://api.openai.com/v1"
#define ANTHROPIC_DEFAULT_URL "https://api.anthropic.com"

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
				     src->prices[i].out, src->prices[i].cached)->cache_write =
			src->prices[i].cache_write;
}

void llm_config_set(char **field, const char *value)
{
	char *old = *field;
	*field = dup_or_null(value);
	free(old);
}

struct llm_price *llm_config_set_price(struct llm_config *cfg, const char *model, double in,
				       double out, double cached)
{
	struct llm_price *p = NULL;
	for (size_t i = 0; i < cfg->nprices; i++)
		if (!strcmp(cfg->prices[i].model, model))
			p = &cfg->prices[i];
	if (!p) {
		ALLOC_GROW(cfg->prices, cfg->nprices + 1, cfg->alloc_prices);
		p = &cfg->prices[cfg->nprices++];
		p->model = xstrdup(model);
		p->cache_write = 0;
	}
	p->in = in;
	p->out = out;
	p->cached = cached;
	return p;
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

double llm_cost(const struct llm_price *p, long in, long out, long cached, long writes)
{
	if (!p)
		return 0;
	if (cached > in)
		cached = in;
	if (writes > in - cached)
		writes = in - cached;
	/* a cached or written token with no price of its own is charged as a prompt token */
	double pc = p->cached > 0 ? p->cached : p->in;
	double pw = p->cache_write > 0 ? p->cache_write : p->in;
	return ((double)(in - cached - writes) * p->in + (double)cached * pc +
		(double)writes * pw + (double)out * p->out) / 1e6;
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

int llm_config_key(const struct llm_config *cfg, int env_explicit, const char **key, char **err)
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
		ok = llm_config_key(&c, explicit_env, &key, NULL) == LLM_OK;
out:
	free(err);
	llm_config_release(&c);
	return ok;
}
