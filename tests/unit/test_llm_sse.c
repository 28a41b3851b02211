/* Tests of the SSE parser: framing, line endings, comments, caps, and events split anywhere. */
#include "test.h"
#include "llm/sse.h"
#include "util/strbuf.h"

#include <stdlib.h>

/* Collects events as "event|data|id;" into a strbuf. */
static int collect(void *ctx, const struct sse_event *ev)
{
	struct strbuf *sb = ctx;
	strbuf_addf(sb, "%s|%s|%s;", ev->event, ev->data, ev->id);
	return 0;
}

static char *parse_in_chunks(const char *text, size_t chunk, int *rc, int *pending)
{
	struct strbuf out = STRBUF_INIT;
	struct sse_parser p;
	size_t n = strlen(text);
	sse_init(&p, 0, collect, &out);
	*rc = 0;
	for (size_t i = 0; i < n && !*rc; i += chunk)
		*rc = sse_feed(&p, text + i, i + chunk > n ? n - i : chunk);
	*pending = sse_pending(&p);
	sse_release(&p);
	return strbuf_detach(&out, NULL);
}

static const char *openai_stream =
	": keep-alive\n\n"
	"data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n"
	"data: {\"choices\":[{\"delta\":{\"content\":\"lo\"}}]}\n\n"
	"data: [DONE]\n\n";

static const char *openai_expected =
	"|{\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}|;"
	"|{\"choices\":[{\"delta\":{\"content\":\"lo\"}}]}|;"
	"|[DONE]|;";

TEST(sse_openai_framing)
{
	int rc, pending;
	char *got = parse_in_chunks(openai_stream, 1 << 20, &rc, &pending);
	CHECK_INT(rc, 0);
	CHECK_INT(pending, 0);
	CHECK_STR(got, openai_expected);
	free(got);
}

TEST(sse_event_split_across_every_chunk_size)
{
	for (size_t chunk = 1; chunk < 40; chunk++) {
		int rc, pending;
		char *got = parse_in_chunks(openai_stream, chunk, &rc, &pending);
		CHECK_INT(rc, 0);
		CHECK_STR(got, openai_expected);
		free(got);
	}
}

TEST(sse_named_events_and_multiline_data)
{
	int rc, pending;
	char *got = parse_in_chunks("event: message_start\ndata: {\"a\":1}\n\n"
				    "event: ping\ndata: {}\nid: 7\n\n"
				    "data: line1\ndata:line2\ndata\n\n"
				    "retry: 100\nunknown: x\n\n", 5, &rc, &pending);
	CHECK_INT(rc, 0);
	/* an event name does not outlive its event; id does; "data" without colon adds "" */
	CHECK_STR(got, "message_start|{\"a\":1}|;ping|{}|7;|line1\nline2\n|7;");
	free(got);
}

TEST(sse_crlf_and_cr_line_endings_split_between_chunks)
{
	const char *text = "event: a\r\ndata: x\r\n\r\nevent: b\rdata: y\r\r";
	for (size_t chunk = 1; chunk < 8; chunk++) {
		int rc, pending;
		char *got = parse_in_chunks(text, chunk, &rc, &pending);
		CHECK_INT(rc, 0);
		CHECK_STR(got, "a|x|;b|y|;");
		CHECK_INT(pending, 0);
		free(got);
	}
}

TEST(sse_bom_and_pending_partial_event)
{
	int rc, pending;
	char *got = parse_in_chunks("\xEF\xBB\xBF" "data: a\n\ndata: cut", 4, &rc, &pending);
	CHECK_INT(rc, 0);
	CHECK_STR(got, "|a|;");
	CHECK_INT(pending, 1); /* "data: cut" never got its blank line */
	free(got);
	got = parse_in_chunks("data: whole\n", 100, &rc, &pending);
	CHECK_STR(got, "");
	CHECK_INT(pending, 1);
	free(got);
}

TEST(sse_cap_on_line_and_event)
{
	struct strbuf out = STRBUF_INIT;
	struct sse_parser p;
	sse_init(&p, 16, collect, &out);
	CHECK_INT(sse_feed(&p, "data: 0123456789\n\n", 18), 0);
	CHECK_INT(sse_feed(&p, "data: 0123456789abcdef", 22), SSE_TOO_BIG);
	sse_release(&p);
	/* many short data lines that add up past the cap */
	sse_init(&p, 16, collect, &out);
	CHECK_INT(sse_feed(&p, "data: 01234\ndata: 56789\ndata: abcde\n", 36), SSE_TOO_BIG);
	sse_release(&p);
	strbuf_release(&out);
}

static int stop_at_second(void *ctx, const struct sse_event *ev)
{
	int *n = ctx;
	return ++*n == 2 ? 42 : 0;
}

TEST(sse_callback_error_stops_the_feed)
{
	int n = 0;
	struct sse_parser p;
	sse_init(&p, 0, stop_at_second, &n);
	CHECK_INT(sse_feed(&p, "data: 1\n\ndata: 2\n\ndata: 3\n\n", 27), 42);
	CHECK_INT(n, 2);
	sse_release(&p);
}
