/*
 * A growable, always NUL-terminated byte buffer (after git's strbuf), with an optional cap for
 * buffers fed by untrusted input: once a cap is set, an append that would pass it fails with
 * -1 and leaves the buffer as it was, so callers can report "too big" instead of eating memory.
 * No higher-level APIs from here.
 */
#ifndef CUTEGEN_STRBUF_H
#define CUTEGEN_STRBUF_H

#include "util/err.h"

#include <stdarg.h>
#include <stddef.h>

struct strbuf {
	char *buf;   /* always valid and NUL-terminated, also when empty */
	size_t len;
	size_t alloc;
	size_t cap;  /* 0 = no cap; else the most bytes len may reach */
};

extern char strbuf_empty[];
#define STRBUF_INIT { strbuf_empty, 0, 0, 0 }

void strbuf_init(struct strbuf *sb, size_t hint);
/* Frees the contents; the strbuf is empty and usable again afterwards. */
void strbuf_release(struct strbuf *sb);
/* Hands the heap string to the caller (who frees it) and resets the strbuf. */
char *strbuf_detach(struct strbuf *sb, size_t *len);
void strbuf_reset(struct strbuf *sb);
/* Replaces control characters (a newline among them) with '?' in place, so that a message
 * quoting untrusted text (a JSON parser's "near '...'") stays one line. Returns msg. */
char *str_one_line(char *msg);
void strbuf_setlen(struct strbuf *sb, size_t len);

/* Appends; each returns 0, or -1 when the cap would be passed (buffer unchanged). */
int strbuf_add(struct strbuf *sb, const void *data, size_t len);
int strbuf_addstr(struct strbuf *sb, const char *s);
int strbuf_addch(struct strbuf *sb, int c);
int strbuf_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);

void strbuf_trim(struct strbuf *sb);
int strbuf_starts_with(const struct strbuf *sb, const char *prefix);

/* Reads all of fd into sb (appending). Returns 0, CG_INPUT on a read error (errno set), or
 * CG_INPUT_TOOBIG past the cap (util/err.h). */
int strbuf_read_fd(struct strbuf *sb, int fd);
/*
 * Reads a whole file (appending). Returns 0, CG_INPUT when it cannot be opened or read (errno
 * set), CG_INPUT_TOOBIG if larger than max_bytes (0 = any), or CG_INPUT_NOTREG, without
 * waiting, for what is not a file to read: a directory (errno EISDIR), a device, a socket or a
 * FIFO no process writes to (errno EINVAL). A FIFO or pipe some process writes to
 * (/dev/stdin of a pipeline, bash's <(...)) is read to its end; /dev/null reads as empty.
 */
int strbuf_read_file(struct strbuf *sb, const char *path, size_t max_bytes);
/* Why strbuf_read_file(path) returned r, to follow "cannot read 'PATH': ": "it is a FIFO with
 * no process writing to it, not a regular file", "it is a directory, ...", or strerror(errno)
 * for a plain CG_INPUT (so call it before anything else sets errno). Static string. */
const char *strbuf_read_strerror(int r, const char *path);

/* Helpers on plain strings. */
int starts_with(const char *s, const char *prefix);
int ends_with(const char *s, const char *suffix);

#endif
