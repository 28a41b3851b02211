/* Server-sent events parser; see sse.h. */
#include "llm/sse.h"

#include <string.h>

void sse_init(struct sse_parser *p, size_t max_event, sse_event_fn fn, void *ctx)
{
	memset(p, 0, sizeof(*p));
	p->max_event = max_event ? max_event : (size_t)1 << 20;
	strbuf_init(&p->line, 0);
	strbuf_init(&p->event, 0);
	strbuf_init(&p->data, 0);
	strbuf_init(&p->id, 0);
	p->line.cap = p->max_event;
	p->data.cap = p->max_event;
	p->event.cap = 256;
	p->id.cap = 1024;
	p->fn = fn;
	p->ctx = ctx;
}

void sse_release(struct sse_parser *p)
{
	strbuf_release(&p->line);
	strbuf_release(&p->event);
	strbuf_release(&p->data);
	strbuf_release(&p->id);
}

int sse_pending(const struct sse_parser *p)
{
	return p->line.len > 0 || p->has_data;
}

static int dispatch(struct sse_parser *p)
{
	int rc = 0;
	if (p->has_data) {
		/* the spec drops the final "\n" that the last data line added */
		if (p->data.len)
			strbuf_setlen(&p->data, p->data.len - 1);
		struct sse_event ev = { p->event.buf, p->data.buf, p->data.len, p->id.buf };
		p->events++;
		rc = p->fn(p->ctx, &ev);
	}
	p->has_data = 0;
	strbuf_reset(&p->data);
	strbuf_reset(&p->event);
	return rc;
}

static int process_line(struct sse_parser *p)
{
	const char *l = p->line.buf;
	size_t n = p->line.len;
	if (!n)
		return dispatch(p);
	if (l[0] == ':')
		return 0;
	const char *colon = memchr(l, ':', n);
	size_t flen = colon ? (size_t)(colon - l) : n;
	const char *v = colon ? colon + 1 : l + n;
	if (colon && *v == ' ')
		v++;
	size_t vlen = (size_t)(l + n - v);
	if (flen == 4 && !memcmp(l, "data", 4)) {
		if (strbuf_add(&p->data, v, vlen) || strbuf_addch(&p->data, '\n'))
			return SSE_TOO_BIG;
		p->has_data = 1;
	} else if (flen == 5 && !memcmp(l, "event", 5)) {
		strbuf_reset(&p->event);
		if (strbuf_add(&p->event, v, vlen))
			return SSE_TOO_BIG;
	} else if (flen == 2 && !memcmp(l, "id", 2)) {
		strbuf_reset(&p->id);
		if (!memchr(v, '\0', vlen) && strbuf_add(&p->id, v, vlen))
			return SSE_TOO_BIG;
	}
	/* "retry" and unknown fields are ignored, as the spec says */
	return 0;
}

int sse_feed(struct sse_parser *p, const char *buf, size_t len)
{
	size_t i = 0;
	if (!p->started && len) {
		/* a UTF-8 byte-order mark may open the stream; skip it if it comes whole */
		if (len >= 3 && !memcmp(buf, "\xEF\xBB\xBF", 3))
			i = 3;
		p->started = 1;
	}
	while (i < len) {
		char c = buf[i];
		if (p->after_cr) {
			p->after_cr = 0;
			if (c == '\n') {
				i++;
				continue;
			}
		}
		if (c == '\n' || c == '\r') {
			p->after_cr = c == '\r';
			int rc = process_line(p);
			strbuf_reset(&p->line);
			i++;
			if (rc)
				return rc;
			continue;
		}
		/* copy the run up to the next line end in one go */
		size_t j = i;
		while (j < len && buf[j] != '\n' && buf[j] != '\r')
			j++;
		if (strbuf_add(&p->line, buf + i, j - i))
			return SSE_TOO_BIG;
		i = j;
	}
	return 0;
}
