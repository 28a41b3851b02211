/*
 * An incremental parser for server-sent events (text/event-stream, the WHATWG framing that
 * OpenAI and Anthropic stream their replies in). Bytes go in as they arrive from the network, in
 * chunks of any size; whole events come out through a callback. Lines may end in LF, CRLF or CR
 * (also when the CR and the LF land in different chunks); ":" lines are comments; "data" lines
 * of one event are joined with "\n"; "event" names it; a blank line dispatches it.
 * Every line and event is capped: a stream that passes the cap fails cleanly.
 * Not for: what the events mean (llm_openai.c and llm_anthropic.c decide that).
 *
 * Usage:
 *   1. struct sse_parser p; sse_init(&p, max_event_bytes, on_event, ctx);
 *   2. sse_feed(&p, chunk, len) for each chunk; it calls on_event(ctx, &ev) for every event that
 *      completes; a nonzero return from on_event stops the feed and is returned;
 *   3. sse_pending(&p) at the end of the stream tells whether a partial event was left over;
 *   4. sse_release(&p).
 */
#ifndef CUTEGEN_SSE_H
#define CUTEGEN_SSE_H

#include <stddef.h>

#include "util/strbuf.h"

/* One event; its strings live until the callback returns. */
struct sse_event {
	const char *event; /* the "event:" field, "" when absent (the spec's "message") */
	const char *data;  /* "data:" lines joined by "\n", NUL-terminated */
	size_t data_len;
	const char *id;    /* the "id:" field, "" when absent */
};

typedef int (*sse_event_fn)(void *ctx, const struct sse_event *ev);

#define SSE_TOO_BIG (-1000) /* sse_feed's return when a line or event passed the cap */

struct sse_parser {
	struct strbuf line, event, data, id;
	int has_data;    /* a "data" field was seen since the last dispatch */
	int after_cr;    /* the last byte fed was a CR: a following LF belongs to it */
	int started;     /* past a possible leading byte-order mark */
	size_t max_event;
	long events;     /* events dispatched so far */
	sse_event_fn fn;
	void *ctx;
};

/* max_event bounds one line and one event's data (bytes); 0 means 1 MiB. */
void sse_init(struct sse_parser *p, size_t max_event, sse_event_fn fn, void *ctx);
/* 0, SSE_TOO_BIG, or the first nonzero value on_event returned. */
int sse_feed(struct sse_parser *p, const char *buf, size_t len);
/* Nonzero when bytes of an event that never completed (no blank line after it) are buffered. */
int sse_pending(const struct sse_parser *p);
/* Frees the buffers; sse_init again to reuse. */
void sse_release(struct sse_parser *p);

#endif
