/*
 * The "anthropic" backend: the Messages API. POST {base}/v1/messages with x-api-key and
 * anthropic-version headers; system prompts go in the top-level "system"; max_tokens is
 * required. Streams are server-sent events: message_start, content_block_start/delta/stop,
 * message_delta (stop reason, usage), message_stop, ping, and error (e.g. overloaded).
 * reasoning_effort turns on extended thinking with a budget of tokens; only text blocks make
 * the reply.
 * Not for: retries and timeouts (http.c), error wording (llm_http_call.c).
 */
#include "llm/llm_impl.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_MAX_TOKENS 8192

static enum llm_stop map_stop(const char *r)
{
	if (!strcmp(r, "end_turn") || !strcmp(r, "stop_sequence"))
		return LLM_STOP_END;
	if (!strcmp(r, "max_tokens") || !strcmp(r, "model_context_window_exceeded"))
		return LLM_STOP_LENGTH;
	return LLM_STOP_OTHER;
}


/*
 * Anthropic counts input_tokens without the cache: in = input + cache reads + cache writes,
 * cached = cache reads. Fields absent from a message_delta's usage keep their values.
 */
static void read_usage(struct llm_parse *p, json_t *u, long *input, long *reads, long *writes)
{
	if (!json_is_object(u))
		return;
	json_t *v;
	if ((v = json_object_get(u, "input_tokens")) && !json_is_null(v))
		*input = llm_json_long(v);
	if ((v = json_object_get(u, "cache_read_input_tokens")) && !json_is_null(v))
		*reads = llm_json_long(v);
	if ((v = json_object_get(u, "cache_creation_input_tokens")) && !json_is_null(v))
		*writes = llm_json_long(v);
	if ((v = json_object_get(u, "output_tokens")) && !json_is_null(v))
		p->out_tokens = llm_json_long(v);
	p->in_tokens = *input + *reads + *writes;
	p->cached_tokens = *reads;
	p->cache_write_tokens = *writes;
}

static void set_stop(struct llm_parse *p, const char *reason)
{
	llm_parse_stopped(p, reason, map_stop(reason));
}

static long error_status(const char *type)
{
	static const struct {
		const char *type;
		long status;
	} map[] = {
		{ "invalid_request_error", 400 }, { "authentication_error", 401 },
		{ "billing_error", 402 }, { "permission_error", 403 }, { "not_found_error", 404 },
		{ "request_too_large", 413 }, { "rate_limit_error", 429 }, { "api_error", 500 },
		{ "timeout_error", 504 }, { "overloaded_error", 529 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(map); i++)
		if (!strcmp(map[i].type, type))
			return map[i].status;
	return 500;
}

int anthropic_parse_body(struct llm_parse *p, const char *body, size_t len, char **err)
{
	json_error_t jerr;
	int rc = LLM_OK;
	json_t *j = json_loadb(body, len, 0, &jerr);
	if (!json_is_object(j)) {
		if (j)
			rc = llm_malformed(err, "not a JSON object");
		else {
			*err = xasprintf("malformed reply from the server: not JSON (%s at byte %d)",
					 jerr.text, jerr.position);
			rc = LLM_ERR_MALFORMED;
		}
		goto out;
	}
	json_t *content = json_object_get(j, "content");
	if (!json_is_array(content)) {
		rc = llm_malformed(err, "no 'content' array");
		goto out;
	}
	size_t i;
	json_t *block;
	json_array_foreach(content, i, block) {
		json_t *type = json_object_get(block, "type");
		json_t *text = json_object_get(block, "text");
		if (!json_is_string(type) || strcmp(json_string_value(type), "text"))
			continue;
		if (!json_is_string(text)) {
			rc = llm_malformed(err, "a text block has no 'text' string");
			goto out;
		}
		rc = llm_parse_add_text(p, json_string_value(text), json_string_length(text), err);
		if (rc)
			goto out;
	}
	json_t *stop = json_object_get(j, "stop_reason");
	if (json_is_string(stop))
		set_stop(p, json_string_value(stop));
	read_usage(p, json_object_get(j, "usage"), &p->a_input, &p->a_reads, &p->a_writes);
	json_t *model = json_object_get(j, "model");
	if (json_is_string(model))
		p->model = xstrdup(json_string_value(model));
	p->finished = 1;
out:
	json_decref(j);
	return rc;
}

int anthropic_parse_event(struct llm_parse *p, const struct sse_event *ev, char **err)
{
	json_error_t jerr;
	int rc = LLM_OK;
	if (!strcmp(ev->event, "ping"))
		return LLM_OK;
	json_t *j = json_loadb(ev->data, ev->data_len, 0, &jerr);
	if (!json_is_object(j)) {
		*err = xasprintf("malformed reply from the server: a '%s' event is not a JSON "
				 "object (%s)", ev->event[0] ? ev->event : "message",
				 j ? "wrong type" : jerr.text);
		rc = LLM_ERR_MALFORMED;
		goto out;
	}
	json_t *tj = json_object_get(j, "type");
	const char *type = json_is_string(tj) ? json_string_value(tj) : ev->event;
	if (p->finished) {
		rc = llm_malformed(err, "events after message_stop");
		goto out;
	}
	if (!strcmp(type, "message_start")) {
		json_t *msg = json_object_get(j, "message");
		json_t *model = json_object_get(msg, "model");
		if (!json_is_object(msg)) {
			rc = llm_malformed(err, "message_start without a 'message'");
			goto out;
		}
		if (json_is_string(model) && !p->model)
			p->model = xstrdup(json_string_value(model));
		read_usage(p, json_object_get(msg, "usage"), &p->a_input, &p->a_reads, &p->a_writes);
	} else if (!strcmp(type, "content_block_delta")) {
		json_t *delta = json_object_get(j, "delta");
		json_t *dt = json_object_get(delta, "type");
		if (!json_is_string(dt)) {
			rc = llm_malformed(err, "content_block_delta without a delta type");
			goto out;
		}
		if (!strcmp(json_string_value(dt), "text_delta")) {
			json_t *text = json_object_get(delta, "text");
			if (!json_is_string(text)) {
				rc = llm_malformed(err, "text_delta without 'text'");
				goto out;
			}
			rc = llm_parse_add_text(p, json_string_value(text), json_string_length(text),
						err);
		} else if (p->progress) {
			/* thinking: no text for the reply, but the counter should move */
			p->deltas++;
			p->progress(p->progress_ctx, p->deltas + (long)(p->text.len / 4));
		}
	} else if (!strcmp(type, "message_delta")) {
		json_t *delta = json_object_get(j, "delta");
		json_t *stop = json_object_get(delta, "stop_reason");
		if (json_is_string(stop))
			set_stop(p, json_string_value(stop));
		read_usage(p, json_object_get(j, "usage"), &p->a_input, &p->a_reads, &p->a_writes);
	} else if (!strcmp(type, "message_stop")) {
		p->finished = 1;
	} else if (!strcmp(type, "error")) {
		json_t *e = json_object_get(j, "error");
		json_t *et = json_object_get(e, "type");
		p->error_status = error_status(json_is_string(et) ? json_string_value(et) : "");
		free(p->error_msg);
		p->error_msg = llm_error_body_message(ev->data, ev->data_len, NULL);
	}
	/* content_block_start/stop, ping and types added later are ignored */
out:
	json_decref(j);
	return rc;
}

static long thinking_budget(const char *effort)
{
	if (!effort || !strcmp(effort, "none") || !strcmp(effort, "minimal"))
		return 0;
	if (!strcmp(effort, "low"))
		return 2048;
	if (!strcmp(effort, "medium"))
		return 8192;
	return 16384;
}

static char *build_body(const struct llm_config *cfg, const struct llm_message *msgs, int n)
{
	json_t *body = json_object();
	json_t *arr = json_array();
	struct strbuf system = STRBUF_INIT;
	long budget = thinking_budget(cfg->reasoning_effort);
	long max_tokens = cfg->max_tokens > 0 ? cfg->max_tokens : DEFAULT_MAX_TOKENS;
	if (budget && max_tokens <= budget)
		max_tokens = budget + DEFAULT_MAX_TOKENS;
	json_object_set_new(body, "model", json_string(cfg->model));
	json_object_set_new(body, "max_tokens", json_integer(max_tokens));
	for (int i = 0; i < n; i++) {
		if (!strcmp(msgs[i].role, "system")) {
			if (system.len)
				strbuf_addstr(&system, "\n\n");
			strbuf_addstr(&system, msgs[i].content);
			continue;
		}
		json_array_append_new(arr, json_pack("{s:s, s:s}", "role", msgs[i].role,
						     "content", msgs[i].content));
	}
	/*
	 * The system text is the fixed part of every prompt (the agent puts the role, contract,
	 * target and task there): marked cacheable, later calls read it from the prompt cache at
	 * a tenth of the price. Below the model's minimum (1024 tokens for most) it is simply not
	 * cached.
	 */
	if (system.len)
		json_object_set_new(body, "system",
				    json_pack("[{s:s, s:s, s:{s:s}}]", "type", "text", "text",
					      system.buf, "cache_control", "type", "ephemeral"));
	json_object_set_new(body, "messages", arr);
	if (budget)
		json_object_set_new(body, "thinking", json_pack("{s:s, s:I}", "type", "enabled",
								"budget_tokens", (json_int_t)budget));
	else if (cfg->temperature >= 0) /* thinking does not take a temperature */
		json_object_set_new(body, "temperature",
				    json_real(cfg->temperature > 1 ? 1 : cfg->temperature));
	if (cfg->stream)
		json_object_set_new(body, "stream", json_true());
	char *s = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	strbuf_release(&system);
	if (!s)
		die("out of memory");
	return s;
}

static int anthropic_complete(struct llm *m, const struct llm_message *msgs, int n,
			      struct llm_reply *out, char **err)
{
	struct llm_parse parse;
	int has_v1 = ends_with(m->cfg.base_url, "/v1");
	char *url = xasprintf("%s%s/messages", m->cfg.base_url, has_v1 ? "" : "/v1");
	char *key = m->api_key ? xasprintf("x-api-key: %s", m->api_key) : NULL;
	char *hint = xasprintf("check %s (or pick another with --api-key-env NAME)",
			       m->cfg.api_key_env);
	const char *headers[] = { "Content-Type: application/json",
				  "anthropic-version: 2023-06-01",
				  m->cfg.stream ? "Accept: text/event-stream" : "Accept: application/json",
				  key, NULL };
	int nonempty = 0, rc;
	for (int i = 0; i < n; i++)
		nonempty |= strcmp(msgs[i].role, "system") != 0;
	llm_parse_init(&parse, anthropic_parse_event);
	if (!nonempty) {
		*err = xstrdup("the anthropic backend needs a user message besides the system prompt");
		rc = LLM_ERR_CONFIG;
		goto out;
	}
	out->request_json = build_body(&m->cfg, msgs, n);
	struct llm_http_call call = { url, m->cfg.base_url, headers, out->request_json,
				      m->cfg.stream, anthropic_parse_body, &parse, hint };
	rc = llm_http_call(m, &call, out, err);
out:
	llm_parse_release(&parse);
	if (key) {
		memset(key, 0, strlen(key));
		free(key);
	}
	free(hint);
	free(url);
	return rc;
}

const struct llm_backend llm_backend_anthropic = { "anthropic", NULL, anthropic_complete, NULL };
