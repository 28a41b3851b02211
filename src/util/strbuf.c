/* Growable strings with caps; see strbuf.h. */
#include "strbuf.h"
#include "xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char strbuf_empty[1];

void strbuf_init(struct strbuf *sb, size_t hint)
{
	sb->buf = strbuf_empty;
	sb->len = sb->alloc = sb->cap = 0;
	if (hint) {
		sb->buf = xmalloc(hint + 1);
		sb->alloc = hint + 1;
		sb->buf[0] = '\0';
	}
}

void strbuf_release(struct strbuf *sb)
{
	size_t cap = sb->cap;
	if (sb->alloc)
		free(sb->buf);
	strbuf_init(sb, 0);
	sb->cap = cap;
}

char *strbuf_detach(struct strbuf *sb, size_t *len)
{
	char *r = sb->alloc ? sb->buf : xstrdup("");
	if (len)
		*len = sb->len;
	size_t cap = sb->cap;
	strbuf_init(sb, 0);
	sb->cap = cap;
	return r;
}

void strbuf_reset(struct strbuf *sb)
{
	strbuf_setlen(sb, 0);
}

void strbuf_setlen(struct strbuf *sb, size_t len)
{
	if (len > sb->len)
		BUG("strbuf_setlen beyond length");
	sb->len = len;
	if (sb->alloc)
		sb->buf[len] = '\0';
}

static int grow(struct strbuf *sb, size_t extra)
{
	if (sb->cap && (extra > sb->cap || sb->len > sb->cap - extra))
		return -1;
	size_t need = sb->len + extra + 1;
	if (need <= sb->alloc)
		return 0;
	char *old = sb->alloc ? sb->buf : NULL;
	size_t alloc = sb->alloc;
	sb->buf = xgrow(old, need, &alloc, 1);
	if (!old)
		sb->buf[0] = '\0';
	sb->alloc = alloc;
	return 0;
}

int strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	if (grow(sb, len))
		return -1;
	memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
	return 0;
}

int strbuf_addstr(struct strbuf *sb, const char *s)
{
	return strbuf_add(sb, s, strlen(s));
}

int strbuf_addch(struct strbuf *sb, int c)
{
	char ch = (char)c;
	return strbuf_add(sb, &ch, 1);
}

int strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	size_t n = fmt_len(fmt, ap);
	if (grow(sb, n))
		return -1;
	vsnprintf(sb->buf + sb->len, n + 1, fmt, ap);
	sb->len += n;
	return 0;
}

int strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
	return r;
}

void strbuf_trim(struct strbuf *sb)
{
	size_t b = 0, e = sb->len;
	while (b < e && isspace((unsigned char)sb->buf[b]))
		b++;
	while (e > b && isspace((unsigned char)sb->buf[e - 1]))
		e--;
	if (!sb->alloc)
		return;
	memmove(sb->buf, sb->buf + b, e - b);
	sb->len = e - b;
	sb->buf[sb->len] = '\0';
}

int strbuf_starts_with(const struct strbuf *sb, const char *prefix)
{
	return starts_with(sb->buf, prefix);
}

int strbuf_read_fd(struct strbuf *sb, int fd)
{
	char tmp[65536];
	for (;;) {
		ssize_t n = read(fd, tmp, sizeof(tmp));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return CG_INPUT;
		}
		if (n == 0)
			return 0;
		if (strbuf_add(sb, tmp, (size_t)n))
			return CG_INPUT_TOOBIG;
	}
}

int strbuf_read_file(struct strbuf *sb, const char *path, size_t max_bytes)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return CG_INPUT;
	size_t old_cap = sb->cap;
	if (max_bytes)
		sb->cap = sb->len + max_bytes;
	int r = strbuf_read_fd(sb, fd);
	int saved = errno;
	sb->cap = old_cap;
	close(fd);
	errno = saved;
	return r;
}

int starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

char *str_one_line(char *msg)
{
	for (char *p = msg; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return msg;
}
