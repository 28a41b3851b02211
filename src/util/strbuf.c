/* Growable strings with caps; see strbuf.h. */
#include "strbuf.h"
#include "xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* Whether st may be read as a file: a regular file, a FIFO or pipe (see fifo_has_writer) or
 * /dev/null (the empty file, as in CUTEGEN_CONFIG=/dev/null). Not a directory, a socket, a
 * terminal nor an endless device such as /dev/zero. */
static int readable_kind(const struct stat *st)
{
	struct stat null;
	if (S_ISREG(st->st_mode) || S_ISFIFO(st->st_mode))
		return 1;
	return S_ISCHR(st->st_mode) && !stat("/dev/null", &null) && S_ISCHR(null.st_mode) &&
	       null.st_rdev == st->st_rdev;
}

/* The first read of a FIFO opened O_NONBLOCK, into sb: 0 when a process writes to it (data
 * came, or none yet), CG_INPUT_NOTREG at an end of file straight away (no process writes to
 * it: a named FIFO nobody feeds, which a blocking open() would wait on forever). */
static int fifo_first_read(struct strbuf *sb, int fd)
{
	char tmp[4096];
	for (;;) {
		ssize_t n = read(fd, tmp, sizeof(tmp));
		if (n > 0)
			return strbuf_add(sb, tmp, (size_t)n) ? CG_INPUT_TOOBIG : 0;
		if (n == 0)
			return CG_INPUT_NOTREG;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		if (errno != EINTR)
			return CG_INPUT;
	}
}

int strbuf_read_file(struct strbuf *sb, const char *path, size_t max_bytes)
{
	/* O_NONBLOCK: open() of a FIFO waits for a writer; this one returns at once and the
	 * first read says whether one is there. Cleared before the real reads. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return CG_INPUT;
	size_t old_cap = sb->cap;
	if (max_bytes)
		sb->cap = sb->len + max_bytes;
	struct stat st;
	int r = fstat(fd, &st) ? CG_INPUT : readable_kind(&st) ? 0 : CG_INPUT_NOTREG;
	if (!r && S_ISFIFO(st.st_mode))
		r = fifo_first_read(sb, fd);
	int fl;
	if (!r && ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0))
		r = CG_INPUT;
	if (!r)
		r = strbuf_read_fd(sb, fd);
	if (r == CG_INPUT_NOTREG)
		errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
	int saved = errno;
	sb->cap = old_cap;
	close(fd);
	errno = saved;
	return r;
}

const char *strbuf_read_strerror(int r, const char *path)
{
	static const struct {
		unsigned type;
		const char *text;
	} kinds[] = {
		{ S_IFDIR, "it is a directory, not a regular file" },
		{ S_IFIFO, "it is a FIFO with no process writing to it, not a regular file" },
		{ S_IFCHR, "it is a character device, not a regular file" },
		{ S_IFBLK, "it is a block device, not a regular file" },
		{ S_IFSOCK, "it is a socket, not a regular file" },
	};
	if (r == CG_INPUT_TOOBIG)
		return "it is larger than the limit";
	if (r != CG_INPUT_NOTREG)
		return strerror(errno);
	struct stat st;
	if (!stat(path, &st))
		for (size_t i = 0; i < sizeof(kinds) / sizeof(*kinds); i++)
			if ((st.st_mode & S_IFMT) == kinds[i].type)
				return kinds[i].text;
	return "it is not a regular file";
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
