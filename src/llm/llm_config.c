/*
 * The llm settings from the config file, the environment and flags; see llm_config.h.
 * The file never holds keys: it names the variable that does.
 */
#include "llm/llm_config.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CONFIG_FILE ((size_t)1 << 20)

char *config_path(void)
{
	const char *env = getenv("CUTEGEN_CONFIG");
	if (env && *env)
		return xstrdup(env);
	const char *xdg = getenv("XDG_CONFIG_HOME");
	if (xdg && *xdg)
		return xasprintf("%s/cutegen/config.json", xdg);
	const char *home = getenv("HOME");
	return xasprintf("%s/.config/cutegen/config.json", home && *home ? home : ".");
}

enum kind { K_STRING, K_DOUBLE, K_INT, K_BOOL };

/* The keys of the file's "llm" section and where they go. */
struct key {
	const char *name;
	enum kind kind;
	size_t off;
};

#define STR(name, field) { name, K_STRING, offsetof(struct llm_config, field) }
#define DBL(name, field) { name, K_DOUBLE, offsetof(struct llm_config, field) }
#define INT(name, field) { name, K_INT, offsetof(struct llm_config, field) }
static const struct key keys[] = {
	STR("backend", backend), STR("base_url", base_url), STR("model", model),
	STR("api_key_env", api_key_env), DBL("temperature", temperature),
	INT("max_tokens", max_tokens), STR("token_param", token_param),
	STR("reasoning_effort", reasoning_effort), DBL("connect_timeout", connect_timeout_s),
	DBL("timeout", request_timeout_s), INT("retries", max_retries),
	DBL("backoff", backoff_base_s), { "stream", K_BOOL, offsetof(struct llm_config, stream) },
	STR("cmd", llm_cmd), STR("replay", replay_path), STR("record", record_path),
};

static int set_key(struct llm_config *cfg, const struct key *k, json_t *v, const char *path,
		   char **err)
{
	void *field = (char *)cfg + k->off;
	switch (k->kind) {
	case K_STRING:
		if (!json_is_string(v) && !json_is_null(v))
			break;
		llm_config_set((char **)field, json_is_null(v) ? NULL : json_string_value(v));
		return 0;
	case K_DOUBLE:
		if (!json_is_number(v))
			break;
		*(double *)field = json_number_value(v);
		return 0;
	case K_INT:
		if (!json_is_integer(v) || json_integer_value(v) < INT_MIN ||
		    json_integer_value(v) > INT_MAX)
			break;
		*(int *)field = (int)json_integer_value(v);
		return 0;
	case K_BOOL:
		if (!json_is_boolean(v))
			break;
		*(int *)field = json_is_true(v);
		return 0;
	}
	static const char *what[] = { "a string", "a number", "an integer", "true or false" };
	*err = xasprintf("config '%s': 'llm.%s' must be %s", path, k->name, what[k->kind]);
	return LLM_ERR_INPUT;
}

static int price_field(json_t *row, const char *k, double *out, const char *path,
		       const char *model, char **err)
{
	json_t *v = json_object_get(row, k);
	*out = 0;
	if (!v)
		return 0;
	if (!json_is_number(v) || json_number_value(v) < 0) {
		*err = xasprintf("config '%s': 'prices.%s.%s' must be a number >= 0 (USD per "
				 "million tokens)", path, model, k);
		return LLM_ERR_INPUT;
	}
	*out = json_number_value(v);
	return 0;
}

int config_parse_llm(struct llm_config *cfg, const char *text, size_t len, const char *path,
		     char **err)
{
	json_error_t jerr;
	int rc = 0;
	json_t *root = json_loadb(text, len, 0, &jerr);
	if (!root) {
		*err = str_one_line(xasprintf("config '%s' line %d column %d: %s", path, jerr.line,
					      jerr.column, jerr.text));
		return LLM_ERR_INPUT;
	}
	if (!json_is_object(root)) {
		*err = xasprintf("config '%s': expected a JSON object", path);
		rc = LLM_ERR_INPUT;
		goto out;
	}
	json_t *llm = json_object_get(root, "llm");
	if (llm && !json_is_object(llm)) {
		*err = xasprintf("config '%s': 'llm' must be an object", path);
		rc = LLM_ERR_INPUT;
		goto out;
	}
	const char *name;
	json_t *v;
	json_object_foreach(llm, name, v) {
		const struct key *k = NULL;
		for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
			if (!strcmp(keys[i].name, name))
				k = &keys[i];
		if (!k) {
			if (!strcmp(name, "api_key"))
				*err = xasprintf("config '%s': keys do not go in the file; put it in an "
						 "environment variable and name that in "
						 "'llm.api_key_env'", path);
			else
				*err = xasprintf("config '%s': unknown key 'llm.%s' (see docs/llm.md "
						 "for the keys)", path, name);
			rc = LLM_ERR_INPUT;
			goto out;
		}
		rc = set_key(cfg, k, v, path, err);
		if (rc)
			goto out;
	}
	json_t *prices = json_object_get(root, "prices");
	if (prices && !json_is_object(prices)) {
		*err = xasprintf("config '%s': 'prices' must be an object of model names", path);
		rc = LLM_ERR_INPUT;
		goto out;
	}
	json_object_foreach(prices, name, v) {
		double in, outp, cached, cwrite;
		if (!json_is_object(v)) {
			*err = xasprintf("config '%s': 'prices.%s' must be an object like {\"in\": "
					 "1.25, \"out\": 10, \"cached\": 0.125}", path, name);
			rc = LLM_ERR_INPUT;
			goto out;
		}
		if ((rc = price_field(v, "in", &in, path, name, err)) ||
		    (rc = price_field(v, "out", &outp, path, name, err)) ||
		    (rc = price_field(v, "cached", &cached, path, name, err)) ||
		    (rc = price_field(v, "cache_write", &cwrite, path, name, err)))
			goto out;
		llm_config_set_price(cfg, name, in, outp, cached)->cache_write = cwrite;
	}
out:
	json_decref(root);
	return rc;
}

static int env_double(const char *name, double *out, char **err)
{
	const char *v = getenv(name);
	char *end;
	if (!v || !*v)
		return 0;
	errno = 0;
	double x = strtod(v, &end);
	if (errno || *end || !isfinite(x)) {
		*err = xasprintf("%s must be a number (got \"%.40s\")", name, v);
		return LLM_ERR_CONFIG;
	}
	*out = x;
	return 0;
}

static int env_int(const char *name, int *out, char **err)
{
	const char *v = getenv(name);
	char *end;
	if (!v || !*v)
		return 0;
	errno = 0;
	long x = strtol(v, &end, 10);
	if (errno || *end || x < INT_MIN || x > INT_MAX) {
		*err = xasprintf("%s must be an integer (got \"%.40s\")", name, v);
		return LLM_ERR_CONFIG;
	}
	*out = (int)x;
	return 0;
}

static void env_string(const char *name, char **field)
{
	const char *v = getenv(name);
	if (v && *v)
		llm_config_set(field, v);
}

int config_apply_env(struct llm_config *cfg, char **err)
{
	int rc;
	const char *cmd = getenv("CUTEGEN_LLM_CMD"), *replay = getenv("CUTEGEN_REPLAY");
	const char *backend = getenv("CUTEGEN_BACKEND");
	env_string("CUTEGEN_BACKEND", &cfg->backend);
	env_string("CUTEGEN_MODEL", &cfg->model);
	env_string("CUTEGEN_BASE_URL", &cfg->base_url);
	env_string("CUTEGEN_API_KEY_ENV", &cfg->api_key_env);
	env_string("CUTEGEN_LLM_CMD", &cfg->llm_cmd);
	env_string("CUTEGEN_REPLAY", &cfg->replay_path);
	env_string("CUTEGEN_RECORD", &cfg->record_path);
	env_string("CUTEGEN_REASONING_EFFORT", &cfg->reasoning_effort);
	/* a command or transcript named here outranks the file's backend */
	if (!(backend && *backend)) {
		if (cmd && *cmd)
			llm_config_set(&cfg->backend, "cmd");
		else if (replay && *replay)
			llm_config_set(&cfg->backend, "replay");
	}
	if ((rc = env_double("CUTEGEN_TEMPERATURE", &cfg->temperature, err)) ||
	    (rc = env_int("CUTEGEN_MAX_TOKENS", &cfg->max_tokens, err)) ||
	    (rc = env_double("CUTEGEN_LLM_TIMEOUT", &cfg->request_timeout_s, err)) ||
	    (rc = env_int("CUTEGEN_LLM_RETRIES", &cfg->max_retries, err)) ||
	    (rc = env_double("CUTEGEN_LLM_BACKOFF", &cfg->backoff_base_s, err)))
		return rc;
	return 0;
}

int config_load_llm(struct llm_config *cfg, char **err)
{
	struct strbuf sb = STRBUF_INIT;
	char *path = config_path();
	int explicit_path = getenv("CUTEGEN_CONFIG") && *getenv("CUTEGEN_CONFIG");
	int rc = 0;
	llm_config_init(cfg);
	int r = strbuf_read_file(&sb, path, MAX_CONFIG_FILE);
	if (r == CG_INPUT_TOOBIG) {
		*err = xasprintf("config '%s' is larger than %zu bytes", path, MAX_CONFIG_FILE);
		rc = LLM_ERR_INPUT;
		goto out;
	}
	if (r && (errno != ENOENT || explicit_path)) {
		*err = xasprintf("cannot read config '%s': %s%s", path, strbuf_read_strerror(r, path),
				 explicit_path ? " (named by CUTEGEN_CONFIG)" : "");
		rc = LLM_ERR_INPUT;
		goto out;
	}
	if (!r && (rc = config_parse_llm(cfg, sb.buf, sb.len, path, err)))
		goto out;
	rc = config_apply_env(cfg, err);
out:
	strbuf_release(&sb);
	free(path);
	return rc;
}

int llm_flags_opts(struct llm_flags *f, struct opt *o)
{
	memset(f, 0, sizeof(*f));
	f->temperature = f->timeout = NAN;
	f->max_tokens = f->retries = INT_MIN;
	int n = 0;
	o[n++] = (struct opt){ "backend", 0, OPT_STRING, &f->backend };
	o[n++] = (struct opt){ "model", 'm', OPT_STRING, &f->model };
	o[n++] = (struct opt){ "base-url", 0, OPT_STRING, &f->base_url };
	o[n++] = (struct opt){ "api-key-env", 0, OPT_STRING, &f->api_key_env };
	o[n++] = (struct opt){ "temperature", 0, OPT_DOUBLE, &f->temperature };
	o[n++] = (struct opt){ "max-tokens", 0, OPT_INT, &f->max_tokens };
	o[n++] = (struct opt){ "reasoning-effort", 0, OPT_STRING, &f->reasoning_effort };
	o[n++] = (struct opt){ "llm-cmd", 0, OPT_STRING, &f->llm_cmd };
	o[n++] = (struct opt){ "replay", 0, OPT_STRING, &f->replay };
	o[n++] = (struct opt){ "record", 0, OPT_STRING, &f->record };
	o[n++] = (struct opt){ "timeout", 0, OPT_DOUBLE, &f->timeout };
	o[n++] = (struct opt){ "retries", 0, OPT_INT, &f->retries };
	o[n++] = (struct opt){ "no-stream", 0, OPT_BOOL, &f->no_stream };
	if (n > LLM_FLAGS_MAX)
		BUG("LLM_FLAGS_MAX is too small");
	return n;
}

int llm_flags_apply(const struct llm_flags *f, struct llm_config *cfg, char **err)
{
	if (f->backend)
		llm_config_set(&cfg->backend, f->backend);
	else if (f->llm_cmd)
		llm_config_set(&cfg->backend, "cmd");
	else if (f->replay)
		llm_config_set(&cfg->backend, "replay");
	if (f->model)
		llm_config_set(&cfg->model, f->model);
	if (f->base_url)
		llm_config_set(&cfg->base_url, f->base_url);
	if (f->api_key_env)
		llm_config_set(&cfg->api_key_env, f->api_key_env);
	if (f->reasoning_effort)
		llm_config_set(&cfg->reasoning_effort, f->reasoning_effort);
	if (f->llm_cmd)
		llm_config_set(&cfg->llm_cmd, f->llm_cmd);
	if (f->replay)
		llm_config_set(&cfg->replay_path, f->replay);
	if (f->record)
		llm_config_set(&cfg->record_path, f->record);
	if (!isnan(f->temperature)) {
		if (f->temperature < 0 || f->temperature > 2) {
			*err = xasprintf("--temperature must be 0 to 2 (got %g)", f->temperature);
			return LLM_ERR_CONFIG;
		}
		cfg->temperature = f->temperature;
	}
	if (f->max_tokens != INT_MIN) {
		if (f->max_tokens <= 0) {
			*err = xasprintf("--max-tokens must be positive (got %d)", f->max_tokens);
			return LLM_ERR_CONFIG;
		}
		cfg->max_tokens = f->max_tokens;
	}
	if (!isnan(f->timeout)) {
		if (!(f->timeout > 0)) {
			*err = xasprintf("--timeout must be a positive number of seconds (got %g)",
					 f->timeout);
			return LLM_ERR_CONFIG;
		}
		cfg->request_timeout_s = f->timeout;
	}
	if (f->retries != INT_MIN) {
		if (f->retries < 0 || f->retries > 20) {
			*err = xasprintf("--retries must be 0 to 20 (got %d)", f->retries);
			return LLM_ERR_CONFIG;
		}
		cfg->max_retries = f->retries;
	}
	if (f->no_stream)
		cfg->stream = 0;
	return 0;
}
