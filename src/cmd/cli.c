/*
 * Helpers every subcommand shares: messages in the house format and help pages. Kept out of main.c so that the unit tests link them too.
 */
#include "cmd/cutegen.h"
#include "eval/build.h"
#include "common/embedded.h"
#include "eval/policy.h"
#include "util/fsutil.h"
#include "util/xalloc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char last_error[1024];

void error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	va_start(ap, fmt);
	fputs("error: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

const char *error_last(void)
{
	return last_error;
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


int check_arch_option(const char *arch)
{
	char gencode[96];
	if (!arch || !build_parse_arch(arch, gencode, sizeof(gencode)))
		return 0;
	error("option '--arch': '%s' is not a GPU architecture nvcc knows; use one of %s "
	      "(sm_90a for H100/H200)", arch, build_known_archs());
	return -1;
}

int build_kernel_file(const char *kernel, const struct build_opts *bo, struct strbuf *src,
		      struct policy_report *pol, struct build_result *br)
{
	int r = strbuf_read_file(src, kernel, POLICY_MAX_SOURCE);
	if (r) {
		/* bad input, not a verdict: CG_INPUT (exit 3) with the reason */
		if (r == CG_INPUT_TOOBIG)
			error("kernel '%s' is larger than %u bytes", kernel, POLICY_MAX_SOURCE);
		else
			error("cannot read kernel '%s': %s", kernel, strerror(errno));
		return r;
	}
	char *err = NULL;
	int b = build_checked(bo, src->buf, src->len, pol, br, &err);
	if (b && b != CG_REJECTED)
		error("%s", err);
	free(err);
	return b;
}
