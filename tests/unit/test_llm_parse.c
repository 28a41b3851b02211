/* Tests of the wire-format parsers: OpenAI and Anthropic bodies and stream events, on good and
 * malformed input, and error bodies of every dialect. */
#include "test.h"
#include "llm/llm_impl.h"
#include "util/xalloc.h"

#include <stdlib.h>

/* Feeds a whole SSE text through a parse in chunks of `chunk` bytes; returns the first error. */
static int feed(struct llm_parse *p, const char *text, size_t chunk, char **err)
{
	size_t n = strlen(text);
	for (size_t i = 0; i < n; i += chunk) {
		int rc = llm_parse_feed(p, text + i, i + chunk > n ? n - i : chunk, err);
		if (rc)
			return rc;
	}
	return 0;
}

TEST(openai_body_good)
{
	struct llm_parse p;
	char *err = NULL;
	const char *b = "{\"id\":\"c\",\"model\":\"gpt-x\",\"choices\":[{\"index\":0,\"message\":"
			"{\"role\":\"assistant\",\"content\":\"hi there\"},\"finish_reason\":\"length\"}],"
			"\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":5,"
			"\"prompt_tokens_details\":{\"cached_tokens\":4}}}";
	llm_parse_init(&p, openai_parse_event);
	CHECK_INT(openai_parse_body(&p, b, strlen(b), &err), LLM_OK);
	CHECK_STR(p.text.buf, "hi there");
	CHECK_INT(p.stop, LLM_STOP_LENGTH);
	CHECK_STR(p.stop_raw, "length");
	CHECK_STR(p.model, "gpt-x");
	CHECK_INT(p.in_tokens, 12);
	CHECK_INT(p.out_tokens, 5);
	CHECK_INT(p.cached_tokens, 4);
	llm_parse_release(&p);
}

/* a server's token counts cannot cancel the run's budget (negative) nor overflow its totals */
TEST(openai_body_token_counts_bounded)
{
	const char *b = "{\"choices\":[{\"message\":{\"content\":\"x\"},\"finish_reason\":\"stop\"}],"
			"\"usage\":{\"prompt_tokens\":-5,\"completion_tokens\":1e30,"
			"\"prompt_tokens_details\":{\"cached_tokens\":NaN}}}";
	struct llm_parse p;
	char *err = NULL;
	llm_parse_init(&p, openai_parse_event);
	/* NaN is no JSON: the body is malformed; without it the counts are bounded */
	CHECK_INT(openai_parse_body(&p, b, strlen(b), &err), LLM_ERR_MALFORMED);
	free(err);
	err = NULL;
	llm_parse_release(&p);
	const char *c = "{\"choices\":[{\"message\":{\"content\":\"x\"},\"finish_reason\":\"stop\"}],"
			"\"usage\":{\"prompt_tokens\":-5,\"completion_tokens\":1e30}}";
	llm_parse_init(&p, openai_parse_event);
	CHECK_INT(openai_parse_body(&p, c, strlen(c), &err), LLM_OK);
	CHECK_INT(p.in_tokens, 0);
	CHECK_INT(p.out_tokens, LLM_TOKENS_MAX);
	llm_parse_release(&p);
	/* text with \u0000: refused (jansson refuses it in JSON), not cut there */
	const char *z = "{\"choices\":[{\"message\":{\"content\":\"ab\\u0000c\"},\"finish_reason\":\"stop\"}]}";
	llm_parse_init(&p, openai_parse_event);
	CHECK_INT(openai_parse_body(&p, z, strlen(z), &err), LLM_ERR_MALFORMED);
	CHECK_HAS(err, "u0000");
	free(err);
	llm_parse_release(&p);
}

TEST(openai_body_malformed)
{
	const char *bad[] = { "", "not json", "[1,2]", "{\"choices\":[]}",
			      "{\"choices\":[{\"message\":{\"content\":5}}]}", "{\"choices\":7}" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct llm_parse p;
		char *err = NULL;
		llm_parse_init(&p, openai_parse_event);
		CHECK_INT(openai_parse_body(&p, bad[i], strlen(bad[i]), &err), LLM_ERR_MALFORMED);
		CHECK_HAS(err, "malformed reply from the server");
		free(err);
		llm_parse_release(&p);
	}
	/* a 200 that carries an error object */
	struct llm_parse p;
	char *err = NULL;
	const char *b = "{\"error\":{\"message\":\"boom\",\"type\":\"server_error\"}}";
	llm_parse_init(&p, openai_parse_event);
	CHECK_INT(openai_parse_body(&p, b, strlen(b), &err), LLM_ERR_SERVER);
	CHECK_HAS(err, "boom");
	free(err);
	llm_parse_release(&p);
}

static const char *openai_sse =
	"data: {\"id\":\"c\",\"model\":\"m1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}],\"usage\":null}\n\n"
	"data: {\"id\":\"c\",\"model\":\"m1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"},\"finish_reason\":null}]}\n\n"
	": comment\n\n"
	"data: {\"id\":\"c\",\"model\":\"m1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo \\u00e9\"},\"finish_reason\":null}]}\n\n"
	"data: {\"id\":\"c\",\"model\":\"m1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
	"data: {\"id\":\"c\",\"model\":\"m1\",\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":3,\"prompt_tokens_details\":{\"cached_tokens\":1}}}\n\n"
	"data: [DONE]\n\n";

TEST(openai_stream_in_any_chunking)
{
	for (size_t chunk = 1; chunk <= 64; chunk *= 2) {
		struct llm_parse p;
		char *err = NULL;
		llm_parse_init(&p, openai_parse_event);
		CHECK_INT(feed(&p, openai_sse, chunk, &err), 0);
		CHECK_STR(p.text.buf, "Hello \xc3\xa9");
		CHECK_INT(p.finished, 1);
		CHECK_INT(p.stop, LLM_STOP_END);
		CHECK_INT(p.in_tokens, 9);
		CHECK_INT(p.out_tokens, 3);
		CHECK_INT(p.cached_tokens, 1);
		CHECK_STR(p.model, "m1");
		llm_parse_release(&p);
	}
}

TEST(openai_stream_truncated_and_malformed)
{
	struct llm_parse p;
	char *err = NULL;
	llm_parse_init(&p, openai_parse_event);
	/* everything but [DONE]: not finished, which the HTTP layer reports as truncated */
	const char *cut = strstr(openai_sse, "data: [DONE]");
	CHECK_INT(llm_parse_feed(&p, openai_sse, (size_t)(cut - openai_sse), &err), 0);
	CHECK_INT(p.finished, 0);
	llm_parse_release(&p);

	llm_parse_init(&p, openai_parse_event);
	CHECK_INT(feed(&p, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: {oops\n\n", 7,
		       &err), LLM_ERR_MALFORMED);
	CHECK_HAS(err, "not a JSON object");
	free(err);
	llm_parse_release(&p);

	llm_parse_init(&p, openai_parse_event);
	CHECK_INT(feed(&p, "data: [DONE]\n\ndata: {}\n\n", 100, &err), LLM_ERR_MALFORMED);
	CHECK_HAS(err, "after [DONE]");
	free(err);
	llm_parse_release(&p);
}

TEST(openai_stream_error_event)
{
	struct llm_parse p;
	char *err = NULL;
	llm_parse_init(&p, openai_parse_event);
	CHECK_INT(feed(&p, "data: {\"error\":{\"message\":\"overloaded now\",\"type\":\"server_error\"}}\n\n",
		       10, &err), 0);
	CHECK_INT(p.error_status, 500);
	CHECK_STR(p.error_msg, "overloaded now");
	llm_parse_release(&p);
}

TEST(anthropic_body_good_and_bad)
{
	struct llm_parse p;
	char *err = NULL;
	const char *b = "{\"id\":\"msg\",\"type\":\"message\",\"model\":\"claude-x\",\"content\":["
			"{\"type\":\"thinking\",\"thinking\":\"hmm\"},{\"type\":\"text\",\"text\":\"a\"},"
			"{\"type\":\"text\",\"text\":\"b\"}],\"stop_reason\":\"max_tokens\","
			"\"usage\":{\"input_tokens\":10,\"output_tokens\":7,"
			"\"cache_read_input_tokens\":30,\"cache_creation_input_tokens\":5}}";
	llm_parse_init(&p, anthropic_parse_event);
	CHECK_INT(anthropic_parse_body(&p, b, strlen(b), &err), LLM_OK);
	CHECK_STR(p.text.buf, "ab");
	CHECK_INT(p.stop, LLM_STOP_LENGTH);
	CHECK_INT(p.in_tokens, 45);
	CHECK_INT(p.cached_tokens, 30);
	CHECK_INT(p.out_tokens, 7);
	CHECK_STR(p.model, "claude-x");
	llm_parse_release(&p);

	const char *bad[] = { "{", "{\"content\":\"x\"}", "{\"content\":[{\"type\":\"text\"}]}" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		llm_parse_init(&p, anthropic_parse_event);
		CHECK_INT(anthropic_parse_body(&p, bad[i], strlen(bad[i]), &err), LLM_ERR_MALFORMED);
		free(err);
		llm_parse_release(&p);
	}
}

static const char *anthropic_sse =
	"event: message_start\n"
	"data: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"claude-x\",\"usage\":{\"input_tokens\":20,\"output_tokens\":1,\"cache_read_input_tokens\":8,\"cache_creation_input_tokens\":0}}}\n\n"
	"event: content_block_start\n"
	"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
	"event: ping\ndata: {\"type\": \"ping\"}\n\n"
	"event: content_block_delta\n"
	"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi \"}}\n\n"
	"event: content_block_delta\n"
	"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"you\"}}\n\n"
	"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
	"event: message_delta\n"
	"data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":15}}\n\n"
	"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

TEST(anthropic_stream_in_any_chunking)
{
	for (size_t chunk = 1; chunk <= 128; chunk *= 2) {
		struct llm_parse p;
		char *err = NULL;
		llm_parse_init(&p, anthropic_parse_event);
		CHECK_INT(feed(&p, anthropic_sse, chunk, &err), 0);
		CHECK_STR(p.text.buf, "Hi you");
		CHECK_INT(p.finished, 1);
		CHECK_INT(p.stop, LLM_STOP_END);
		CHECK_STR(p.stop_raw, "end_turn");
		CHECK_INT(p.in_tokens, 28);
		CHECK_INT(p.cached_tokens, 8);
		CHECK_INT(p.out_tokens, 15);
		llm_parse_release(&p);
	}
}

TEST(anthropic_stream_errors)
{
	struct llm_parse p;
	char *err = NULL;
	llm_parse_init(&p, anthropic_parse_event);
	CHECK_INT(feed(&p, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\","
		       "\"message\":\"Overloaded\"}}\n\n", 9, &err), 0);
	CHECK_INT(p.error_status, 529);
	CHECK_STR(p.error_msg, "Overloaded");
	llm_parse_release(&p);

	llm_parse_init(&p, anthropic_parse_event);
	CHECK_INT(feed(&p, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\","
		       "\"delta\":{\"type\":\"text_delta\"}}\n\n", 100, &err), LLM_ERR_MALFORMED);
	CHECK_HAS(err, "text_delta without 'text'");
	free(err);
	llm_parse_release(&p);

	llm_parse_init(&p, anthropic_parse_event);
	CHECK_INT(feed(&p, "event: message_start\ndata: [1]\n\n", 100, &err), LLM_ERR_MALFORMED);
	free(err);
	llm_parse_release(&p);
}

TEST(parse_text_cap)
{
	struct llm_parse p;
	char *err = NULL;
	llm_parse_init(&p, openai_parse_event);
	p.text.cap = 10;
	CHECK_INT(llm_parse_add_text(&p, "0123456789", 10, &err), LLM_OK);
	CHECK_INT(llm_parse_add_text(&p, "x", 1, &err), LLM_ERR_TOO_BIG);
	CHECK_HAS(err, "passed the cap");
	free(err);
	llm_parse_release(&p);
}

TEST(error_body_dialects)
{
	struct {
		const char *body, *msg, *type;
	} cases[] = {
		{ "{\"error\":{\"message\":\"Incorrect API key\",\"type\":\"invalid_request_error\"}}",
		  "Incorrect API key", "invalid_request_error" },
		{ "{\"type\":\"error\",\"error\":{\"type\":\"not_found_error\",\"message\":\"model: x\"}}",
		  "model: x", "not_found_error" },
		{ "{\"error\":\"model 'llama' not found\"}", "model 'llama' not found", NULL },
		{ "{\"object\":\"error\",\"message\":\"bad model\",\"type\":\"BadRequestError\"}", "bad model",
		  "BadRequestError" },
		{ "{\"detail\":\"Not Found\"}", "Not Found", NULL },
		{ "<html>\n<b>502 Bad Gateway</b>\n</html>", "<html> <b>502 Bad Gateway</b> </html>", NULL },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *type = NULL;
		char *msg = llm_error_body_message(cases[i].body, strlen(cases[i].body), &type);
		CHECK_STR(msg, cases[i].msg);
		if (cases[i].type)
			CHECK_STR(type, cases[i].type);
		else
			CHECK(type == NULL);
		free(msg);
		free(type);
	}
	CHECK(llm_error_body_message("  \n", 3, NULL) == NULL);
}

TEST(scrub_and_render)
{
	char *s = xstrdup("key sk-abcdef here and sk-abcdef again");
	llm_scrub(&s, "sk-abcdef");
	CHECK_STR(s, "key [redacted] here and [redacted] again");
	free(s);
	struct strbuf sb = STRBUF_INIT;
	struct llm_message one[] = { { "user", "just this" } };
	llm_render_plain(one, 1, &sb);
	CHECK_STR(sb.buf, "just this");
	strbuf_reset(&sb);
	struct llm_message two[] = { { "system", "be brief" }, { "user", "hi" } };
	llm_render_plain(two, 2, &sb);
	CHECK_STR(sb.buf, "[system]\nbe brief\n\n[user]\nhi\n");
	strbuf_release(&sb);
}
