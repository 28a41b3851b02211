/*
 * The "openai" backend: chat completions as OpenAI defines them and as OpenAI-compatible
 * servers (vLLM, SGLang, llama.cpp, Ollama, Together, DeepSeek...) speak them.
 * POST {base}/chat/completions with a Bearer key; the reply read whole or as a stream of
 * server-sent events ("data: {chunk}" ... "data: [DONE]") with usage in the last chunk.
 * Not for: retries and timeouts (http.c), error wording (llm_http_call.c).
 */
#include "llm/llm_impl.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static enum llm_stop map_finish(const char *r)
{
	if (!strcmp(r, "stop"))
		return LLM_STOP_END;
	if (!strcmp(r, "length"))
		return LLM_STOP_LENGTH;
	return LLM_STOP_OTHER;
}


static void read_usage(struct llm_parse *p, json_t *usage)
{
	if (!json_is_object(usage))
		return;
	p->in_tokens = llm_json_long(json_object_get(usage, "prompt_tokens"));
	p->out_tokens = llm_json_long(json_object_get(usage, "completion_tokens"));
	json_t *details = json_object_get(usage, "prompt_tokens_details");
	long cached = llm_json_long(json_object_get(details, "cached_tokens"));
	if (!cached) /* DeepSeek */
		cached = llm_json_long(json_object_get(usage, "prompt_cache_hit_tokens"));
	p->cached_tokens = cached;
}

static void read_model(struct llm_parse *p, json_t *obj)
{
	json_t *model = json_object_get(obj, "model");
	if (json_is_string(model) && !p->model)
		p->model = xstrdup(json_string_value(model));
}

static void set_stop(struct llm_parse *p, const char *reason)
{
	llm_parse_stopped(p, reason, map_finish(reason));
}

int openai_parse_body(struct llm_parse *p, const char *body, size_t len, char **err)
{
	json_error_t jerr;
	int rc = LLM_OK;
	json_t *j = json_loadb(body, len, 0, &jerr);
	if (!json_is_object(j)) {
		rc = j ? llm_malformed(err, "not a JSON object")
		       : (*err = xasprintf("malformed reply from the server: not JSON (%s at "
					   "byte %d)", jerr.text, jerr.position),
			  LLM_ERR_MALFORMED);
		goto out;
	}
	if (json_object_get(j, "error") && !json_object_get(j, "choices")) {
		char *msg = llm_error_body_message(body, len, NULL);
		*err = xasprintf("the server answered with an error: %s", msg ? msg : "?");
		free(msg);
		rc = LLM_ERR_SERVER;
		goto out;
	}
	json_t *choices = json_object_get(j, "choices");
	json_t *c0 = json_array_get(choices, 0);
	json_t *msg = json_object_get(c0, "message");
	if (!json_is_object(msg)) {
		rc = llm_malformed(err, "no 'choices[0].message' object");
		goto out;
	}
	json_t *content = json_object_get(msg, "content");
	json_t *refusal = json_object_get(msg, "refusal");
	if (json_is_string(content)) {
		rc = llm_parse_add_text(p, json_string_value(content), json_string_length(content),
					err);
	} else if (json_is_string(refusal)) {
		rc = llm_parse_add_text(p, json_string_value(refusal), json_string_length(refusal),
					err);
		if (!rc)
			set_stop(p, "refusal");
	} else if (content && !json_is_null(content)) {
		rc = llm_malformed(err, "'choices[0].message.content' is not a string");
	}
	if (rc)
		goto out;
	json_t *finish = json_object_get(c0, "finish_reason");
	if (json_is_string(finish) && !p->stopped)
		set_stop(p, json_string_value(finish));
	read_usage(p, json_object_get(j, "usage"));
	read_model(p, j);
	p->finished = 1;
out:
	json_decref(j);
	return rc;
}

/* The HTTP status that an error object inside a 200 stream stands for. */
static long stream_error_status(json_t *e)
{
	json_t *code = json_object_get(e, "code");
	json_t *type = json_object_get(e, "type");
	if (json_is_integer(code) && json_integer_value(code) >= 400 &&
	    json_integer_value(code) < 600)
		return (long)json_integer_value(code);
	const char *t = json_is_string(type) ? json_string_value(type) : "";
	if (!strcmp(t, "invalid_request_error"))
		return 400;
	if (!strcmp(t, "rate_limit_exceeded") || !strcmp(t, "rate_limit_error"))
		return 429;
	return 500;
}

int openai_parse_event(struct llm_parse *p, const struct sse_event *ev, char **err)
{
	json_error_t jerr;
	int rc = LLM_OK;
	if (!strcmp(ev->data, "[DONE]")) {
		p->finished = 1;
		return LLM_OK;
	}
	if (p->finished)
		return llm_malformed(err, "data after [DONE]");
	json_t *j = json_loadb(ev->data, ev->data_len, 0, &jerr);
	if (!json_is_object(j)) {
		*err = xasprintf("malformed reply from the server: a stream chunk is not a JSON "
				 "object (%s)", j ? "wrong type" : jerr.text);
		rc = LLM_ERR_MALFORMED;
		goto out;
	}
	json_t *e = json_object_get(j, "error");
	if (e && !json_is_null(e)) {
		p->error_status = json_is_object(e) ? stream_error_status(e) : 500;
		free(p->error_msg);
		p->error_msg = llm_error_body_message(ev->data, ev->data_len, NULL);
		goto out;
	}
	read_model(p, j);
	json_t *choices = json_object_get(j, "choices");
	if (choices && !json_is_array(choices)) {
		rc = llm_malformed(err, "'choices' in a stream chunk is not an array");
		goto out;
	}
	json_t *c0 = json_array_get(choices, 0);
	if (c0) {
		json_t *delta = json_object_get(c0, "delta");
		json_t *content = json_object_get(delta, "content");
		if (json_is_string(content) && json_string_length(content))
			rc = llm_parse_add_text(p, json_string_value(content),
						json_string_length(content), err);
		else if (content && !json_is_null(content) && !json_is_string(content))
			rc = llm_malformed(err, "'delta.content' is not a string");
		if (rc)
			goto out;
		json_t *refusal = json_object_get(delta, "refusal");
		if (json_is_string(refusal) && json_string_length(refusal)) {
			rc = llm_parse_add_text(p, json_string_value(refusal),
						json_string_length(refusal), err);
			if (rc)
				goto out;
			set_stop(p, "refusal");
		}
		json_t *finish = json_object_get(c0, "finish_reason");
		if (json_is_string(finish) && !(p->stopped && p->stop_raw &&
						!strcmp(p->stop_raw, "refusal")))
			set_stop(p, json_string_value(finish));
	}
	json_t *usage = json_object_get(j, "usage");
	if (json_is_object(usage))
		read_usage(p, usage);
out:
	json_decref(j);
	return rc;
}

static char *build_body(const struct llm_config *cfg, const struct llm_message *msgs, int n)
{
	json_t *body = json_object();
	json_t *arr = json_array();
	json_object_set_new(body, "model", json_string(cfg->model));
	for (int i = 0; i < n; i++)
		json_array_append_new(arr, json_pack("{s:s, s:s}", "role", msgs[i].role,
						     "content", msgs[i].content));
	json_object_set_new(body, "messages", arr);
	if (cfg->temperature >= 0)
		json_object_set_new(body, "temperature", json_real(cfg->temperature));
	if (cfg->max_tokens > 0)
		json_object_set_new(body, cfg->token_param, json_integer(cfg->max_tokens));
	if (cfg->reasoning_effort)
		json_object_set_new(body, "reasoning_effort", json_string(cfg->reasoning_effort));
	if (cfg->stream) {
		json_object_set_new(body, "stream", json_true());
		json_object_set_new(body, "stream_options",
				    json_pack("{s:b}", "include_usage", 1));
	}
	char *s = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	if (!s)
		die("out of memory");
	return s;
}

static int openai_complete(struct llm *m, const struct llm_message *msgs, int n,
			   struct llm_reply *out, char **err)
{
	struct llm_parse parse;
	char *url = xasprintf("%s/chat/completions", m->cfg.base_url);
	char *auth = m->api_key ? xasprintf("Authorization: Bearer %s", m->api_key) : NULL;
	char *hint = xasprintf("check %s (or pick another with --api-key-env NAME)",
			       m->cfg.api_key_env);
	const char *headers[] = { "Content-Type: application/json",
				  m->cfg.stream ? "Accept: text/event-stream" : "Accept: application/json",
				  auth, NULL };
	llm_parse_init(&parse, openai_parse_event);
	out->request_json = build_body(&m->cfg, msgs, n);
	struct llm_http_call call = { url, m->cfg.base_url, headers, out->request_json,
				      m->cfg.stream, openai_parse_body, &parse, hint };
	int rc = llm_http_call(m, &call, out, err);
	llm_parse_release(&parse);
	if (auth) {
		memset(auth, 0, strlen(auth));
		free(auth);
	}
	free(hint);
	free(url);
	return rc;
}

const struct llm_backend llm_backend_openai = { "openai", NULL, openai_complete, NULL };
