/*
 * The reply parser: turns a model's reply (untrusted text of any size and shape) into the next
 * kernel source. Reasoning (<think>, <thinking>, <reasoning> blocks) is ignored. Three forms
 * are accepted, with prose around them:
 *   - a whole file in a fenced block (``` or ~~~, any info string): the last complete block
 *     that defines the entry point (`int cutegen_launch(`, not a call in a usage snippet);
 *     with no fence at all, a raw file after a line or two of prose, up to its last code line;
 *   - a unified diff (```diff, or bare @@ hunks): its hunks are applied as edits, their line
 *     numbers ignored;
 *   - search/replace edits against the current kernel, any number of
 *         <<<<<<< SEARCH
 *         (lines of the current kernel)
 *         =======
 *         (their replacement)
 *         >>>>>>> REPLACE
 *     applied in order; each SEARCH must match exactly once (trailing whitespace on a line is
 *     ignored when matching; when the text is found only with leading blanks ignored, in exactly
 *     one place, that place is taken and the note says so; in several, the message says that
 *     only the indentation differs).
 * A reply it cannot use (no code, cut off, an edit that does not apply, too large) gives an
 * error meant for the model ("your reply had no code block ..."), never a crash.
 * Not for: judging the code (policy.c, build.c).
 *
 * Usage: struct strbuf src = STRBUF_INIT; enum reply_form form;
 *        if (reply_parse(text, len, truncated, current, &src, &form, &note, &err)) -> tell the model err
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
 * On success returns 0 with the new source in *out (reset first) and its form in *form, and,
 * when note is not NULL, in *note (heap, or NULL when there was no choice to report) which part
 * of the reply was taken ("code block 2 of 3 (reply lines 5-40), the one that defines
 * cutegen_launch"); on failure -1 with *err, a message addressed to the model.
 */
int reply_parse(const char *text, size_t len, int truncated, const char *current,
		struct strbuf *out, enum reply_form *form, char **note, char **err);

const char *reply_form_name(enum reply_form f);

#endif
