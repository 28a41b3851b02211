/*
 * Helpers every subcommand shares: messages in the house format and help pages. Kept out of main.c so that the unit tests link them too.
 */
#include "cmd/cutegen.h"
#include "eval/build.h"
#include "common/embedded.h"
#include "eval/policy.h"
#include "util/fsutil.h"
#include "util/xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

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

int print_help_page(const char *name)
{
	char *path = xasprintf("docs/cli/%s.txt", name);
	const struct embedded_file *f = embedded_find(path);
	free(path);
	if (!f)
		return -1;
	fwrite(f->data, 1, f->len, stdout);
	return 0;
}


int build_kernel_file(const char *kernel, const struct build_opts *bo, struct strbuf *src,
		      struct policy_report *pol, struct build_result *br)
{
	int r = strbuf_read_file(src, kernel, POLICY_MAX_SOURCE);
	if (r) {
		if (r == CG_INPUT_TOOBIG)
			error("kernel '%s' is larger than %u bytes", kernel, POLICY_MAX_SOURCE);
		else
			error("cannot read kernel '%s'", kernel);
		return r;
	}
	char *err = NULL;
	int b = build_checked(bo, src->buf, src->len, pol, br, &err);
	if (b && b != CG_REJECTED)
		error("%s", err);
	free(err);
	return b;
}
