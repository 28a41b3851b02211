/* libFuzzer target for the server-sent events parser (src/llm/sse.c): the input is fed in chunks
 * whose sizes come from its first byte (so CR/LF pairs split across chunks get exercised), under
 * a small cap so that the overflow path is reached too. `make fuzz-run`. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "llm/sse.h"
#include "util/xalloc.h"

static int on_event(void *ctx, const struct sse_event *ev)
{
	size_t *sum = ctx;
	if (ev->data[ev->data_len] != '\0')
		BUG("event data is not NUL-terminated");
	*sum += ev->data_len + strlen(ev->event) + strlen(ev->id);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	size_t chunk = (size_t)(data[0] & 15) + 1;
	size_t cap = data[0] & 16 ? 64 : 0;
	data++, size--;
	size_t sum = 0;
	struct sse_parser p;
	sse_init(&p, cap, on_event, &sum);
	for (size_t i = 0; i < size; i += chunk) {
		size_t n = size - i < chunk ? size - i : chunk;
		char *c = xmalloc(n);  /* each chunk its own block: overreads are caught */
		memcpy(c, data + i, n);
		int rc = sse_feed(&p, c, n);
		free(c);
		if (rc)
			break;
	}
	(void)sse_pending(&p);
	sse_release(&p);
	return 0;
}
