/*
 * The reply parser: turns a model's reply (untrusted text of any size and shape) into the next
 * kernel source. Two forms are accepted, with prose around them:
 *   - a whole file in a fenced block (```cuda, ```cpp, ```c++, ```cu, ```c or a bare ```): the
 *     last complete block that contains `cutegen_launch` wins;
 *   - search/replace edits against the current kernel, any number of
 *         <<<<<<< SEARCH
 *         (lines of the current kernel)
 *         =======
 *         (their replacement)
 *         >>>>>>> REPLACE
 *     applied in order; each SEARCH must match exactly once (trailing whitespace on a line is
 *     ignored when matching).
 * A reply it cannot use (no code, cut off, an edit that does not apply, too large) gives an
 * error meant for the model ("your reply had no code block ..."), never a crash.
 * Not for: judging the code (policy.c, build.c).
 *
 * Usage: struct strbuf src = STRBUF_INIT; enum reply_form form;
 *        if (reply_parse(text, len, truncated, current, &src, &form, &err)) -> tell the model err
 *        (heap, the caller frees it); else src holds the new kernel.
 */
#ifndef CUTEGEN_REPLY_H
#define CUTEGEN_REPLY_H

#include <stddef.h>

#include "util/strbuf.h"

#define REPLY_MAX_TEXT ((size_t)4 << 20)   /* replies longer than this are refused */
#define REPLY_MAX_SOURCE ((size_t)1 << 20) /* a kernel longer than this is refused */
#define REPLY_MAX_EDITS 64
#define REPLY_MAX_LINES 20000         /* edits apply to kernels of at most this many lines */

enum reply_form { REPLY_NONE = 0, REPLY_FILE, REPLY_EDITS };

/*
 * Parses text[0..len). truncated: the backend said the reply was cut off at max tokens.
 * current: the kernel the edits apply to (NULL when there is none yet: edits are refused).
 * On success returns 0 with the new source in *out (reset first) and its form in *form; on
 * failure -1 with *err, a message addressed to the model.
 */
int reply_parse(const char *text, size_t len, int truncated, const char *current,
		struct strbuf *out, enum reply_form *form, char **err);

const char *reply_form_name(enum reply_form f);

#endif
