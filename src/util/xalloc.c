/* Allocation wrappers that abort on failure; see xalloc.h. */
#include "xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Noreturn void oom(size_t n)
{
	fprintf(stderr, "fatal: out of memory (asked for %zu bytes)\n", n);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
	if (!p)
		oom(nmemb * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p = xmalloc(len + 1);
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

size_t fmt_len(const char *fmt, va_list ap)
{
	va_list cp;
	va_copy(cp, ap);
	int n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		BUG("bad format '%s'", fmt);
	return (size_t)n;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	size_t n = fmt_len(fmt, ap);
	char *p = xmalloc(n + 1);
	vsnprintf(p, n + 1, fmt, ap);
	va_end(ap);
	return p;
}

void *xgrow(void *arr, size_t need, size_t *alloc, size_t elsize)
{
	if (need <= *alloc)
		return arr;
	size_t n = *alloc ? *alloc : 8;
	while (n < need)
		n = n + n / 2 + 8;
	if (n > (size_t)-1 / elsize)
		oom((size_t)-1);
	*alloc = n;
	return xrealloc(arr, n * elsize);
}

void vreportf(const char *prefix, const char *fmt, va_list ap)
{
	fputs(prefix, stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreportf("fatal: ", fmt, ap);
	va_end(ap);
	exit(128);
}

void bug_at(const char *file, int line, const char *fmt, ...)
{
	char prefix[256];
	snprintf(prefix, sizeof(prefix), "BUG: %s:%d: ", file, line);
	va_list ap;
	va_start(ap, fmt);
	vreportf(prefix, fmt, ap);
	va_end(ap);
	abort();
}
