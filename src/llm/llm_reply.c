/*
 * Replies and the plain rendering of messages: releasing a reply, scrubbing a secret out of a
 * string, rendering messages as text for the cmd backend. Not for: assembling a reply from the
 * wire (llm_parse.c).
 */
#include "llm/llm_impl.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

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
