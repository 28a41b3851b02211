/*
 * Allocation that never returns NULL, and the two ways a program stops on purpose.
 * Allocation failure aborts through here: no caller checks malloc by hand.
 * die() is for main/cmd_* only; library code returns an error instead.
 * BUG() marks a broken invariant (a bug in cutegen), never bad input.
 */
#ifndef CUTEGEN_XALLOC_H
#define CUTEGEN_XALLOC_H

#include <stdarg.h>
#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* printf into a fresh heap string; the caller frees it. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* How many bytes vsnprintf would print (ap is left as it was); BUG() on a bad format. */
size_t fmt_len(const char *fmt, va_list ap);
/* PREFIX, the message and a newline to stderr: the one way messages are written (die, BUG,
 * and the commands' error and warning). */
void vreportf(const char *prefix, const char *fmt, va_list ap);

/* Grow *arr (of *alloc elements of elsize) so that it holds at least `need` elements. */
void *xgrow(void *arr, size_t need, size_t *alloc, size_t elsize);
#define ALLOC_GROW(arr, need, alloc) ((arr) = xgrow((arr), (need), &(alloc), sizeof(*(arr))))

_Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void bug_at(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define BUG(...) bug_at(__FILE__, __LINE__, __VA_ARGS__)

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
