/*
 * error: and warning: lines for the user (see cutegen.h). Kept out of main.c so that the unit
 * tests, which link every cmd_*.c but not main.c, get them too (and not glibc's error(3)).
 */
#include "cutegen.h"

#include <stdarg.h>
#include <stdio.h>

void error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("error: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void warning(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("warning: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}
