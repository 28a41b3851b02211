/* libFuzzer target for the reply parser (src/agent/reply.c): fenced code blocks and SEARCH/REPLACE
 * edits. Input: the current kernel, a NUL byte, then the reply (no NUL: no current kernel).
 * The first byte's low bit says whether the backend reported the reply cut off.
 * Any input either fails with a message or gives a source within the cap. `make fuzz-run`. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/reply.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	int truncated = data[0] & 1;
	data++, size--;
	const uint8_t *nul = memchr(data, 0, size);
	char *current = NULL;
	const char *text = (const char *)data;
	size_t len = size;
	if (nul) {
		current = xstrndup((const char *)data, (size_t)(nul - data));
		text = (const char *)nul + 1;
		len = size - (size_t)(nul - data) - 1;
	}
	/* the reply as a separate heap block so that reads past its end are caught */
	char *t = xmalloc(len ? len : 1);
	memcpy(t, text, len);
	struct strbuf out = STRBUF_INIT;
	enum reply_form form = REPLY_NONE;
	char *err = NULL, *note = NULL;
	if (reply_parse(t, len, truncated, current, &out, &form, &note, &err)) {
		if (note)
			BUG("reply_parse failed with a note");
		if (!err)
			BUG("reply_parse failed without a message");
	} else {
		if (err || form == REPLY_NONE || out.len > REPLY_MAX_SOURCE || strlen(out.buf) > out.len)
			BUG("reply_parse succeeded with a bad result");
		(void)reply_form_name(form);
	}
	free(err);
	free(note);
	strbuf_release(&out);
	free(t);
	free(current);
	return 0;
}
