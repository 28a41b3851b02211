/* libFuzzer target for the wire formats of both LLM protocols (src/llm/llm_openai.c,
 * src/llm/llm_anthropic.c, src/llm/llm_parse.c): the first byte picks OpenAI or Anthropic and a whole JSON
 * body or an SSE stream (fed in chunks) and the error-body reader; the rest is the server's
 * bytes. `make fuzz-run`. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "llm/llm_impl.h"
#include "util/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	int anthropic = data[0] & 1, stream = data[0] & 2;
	size_t chunk = (size_t)(data[0] >> 2) + 1;
	data++, size--;
	char *body = xmalloc(size ? size : 1);
	memcpy(body, data, size);
	struct llm_parse p;
	llm_parse_init(&p, anthropic ? anthropic_parse_event : openai_parse_event);
	char *err = NULL;
	int rc = LLM_OK;
	if (stream) {
		for (size_t i = 0; i < size && rc == LLM_OK; i += chunk)
			rc = llm_parse_feed(&p, body + i, size - i < chunk ? size - i : chunk, &err);
	} else {
		rc = anthropic ? anthropic_parse_body(&p, body, size, &err)
			       : openai_parse_body(&p, body, size, &err);
	}
	if (rc != LLM_OK && !err)
		BUG("parse failed without a message");
	free(err);
	struct llm_reply r = LLM_REPLY_INIT;
	llm_parse_to_reply(&p, &r);
	if (!r.text || strlen(r.text) > LLM_MAX_TEXT)
		BUG("reply text missing or past the cap");
	llm_reply_release(&r);
	llm_parse_release(&p);
	char *type = NULL;
	char *msg = llm_error_body_message(body, size, &type);
	free(msg);
	free(type);
	free(body);
	return 0;
}
