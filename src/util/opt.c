/* Option parsing; see opt.h. */
#include "opt.h"
#include "util/strbuf.h"
#include "util/suggest.h"
#include "util/xalloc.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int set_value(const struct opt *o, const char *name, const char *v, char *err, int errlen)
{
	char *end;
	switch (o->type) {
	case OPT_STRING:
		*(const char **)o->value = v;
		return 0;
	case OPT_INT:
	case OPT_INT_NONNEG:
	case OPT_INT_POS: {
		errno = 0;
		long long x = strtoll(v, &end, 10);
		if (errno || end == v || *end || x < -2147483647LL || x > 2147483647LL) {
			snprintf(err, (size_t)errlen, "option '%s' needs an integer (got \"%s\")", name, v);
			return -1;
		}
		if ((o->type == OPT_INT_NONNEG && x < 0) || (o->type == OPT_INT_POS && x < 1)) {
			snprintf(err, (size_t)errlen, "option '%s' must be %s (got \"%s\")", name,
				 o->type == OPT_INT_NONNEG ? "0 or more" : "at least 1", v);
			return -1;
		}
		*(int *)o->value = (int)x;
		return 0;
	}
	case OPT_DOUBLE:
	case OPT_DOUBLE_NONNEG:
	case OPT_DOUBLE_POS: {
		errno = 0;
		double x = strtod(v, &end);
		if (errno || end == v || *end || !isfinite(x)) {
			snprintf(err, (size_t)errlen, "option '%s' needs a number (got \"%s\")", name, v);
			return -1;
		}
		if ((o->type == OPT_DOUBLE_NONNEG && x < 0) || (o->type == OPT_DOUBLE_POS && !(x > 0))) {
			snprintf(err, (size_t)errlen, "option '%s' must be %s (got \"%s\")", name,
				 o->type == OPT_DOUBLE_NONNEG ? "0 or more" : "more than 0", v);
			return -1;
		}
		*(double *)o->value = x;
		return 0;
	}
	case OPT_BOOL:
		break;
	}
	return -1;
}

/* "unknown option '--iter'; did you mean '--iters'?" */
static void unknown_option(const char *shown, const struct opt *opts, int nopts, char *err,
			   int errlen)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "unknown option '%s'", shown);
	if (shown[1] == '-' && nopts > 0) {
		const char **names = xcalloc((size_t)nopts, sizeof(char *));
		const char *best[4];
		for (int k = 0; k < nopts; k++)
			names[k] = opts[k].name;
		size_t nb = suggest_similar(shown + 2, names, (size_t)nopts, best, 4);
		suggest_format(&sb, "--", best, nb);
		free(names);
	}
	snprintf(err, (size_t)errlen, "%s", sb.buf);
	strbuf_release(&sb);
}

int opt_parse(int argc, char **argv, const struct opt *opts, int nopts, int *npos,
	      char *err, int errlen)
{
	int np = 0, only_pos = 0;
	for (int i = 1; i < argc; i++) {
		char *a = argv[i];
		if (only_pos || a[0] != '-' || !a[1]) {
			argv[1 + np++] = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			only_pos = 1;
			continue;
		}
		const struct opt *o = NULL;
		const char *inline_val = NULL;
		char shown[64];
		if (a[1] == '-') {
			const char *name = a + 2;
			const char *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);
			for (int k = 0; k < nopts; k++)
				if (strlen(opts[k].name) == len && !strncmp(opts[k].name, name, len))
					o = &opts[k];
			snprintf(shown, sizeof(shown), "--%.*s", (int)len, name);
			if (eq)
				inline_val = eq + 1;
		} else {
			for (int k = 0; k < nopts; k++)
				if (opts[k].short_name && opts[k].short_name == a[1])
					o = &opts[k];
			snprintf(shown, sizeof(shown), "-%c", a[1]);
			if (a[2])
				inline_val = a + 2;
		}
		if (!o) {
			unknown_option(shown, opts, nopts, err, errlen);
			return -1;
		}
		if (o->type == OPT_BOOL) {
			if (inline_val) {
				snprintf(err, (size_t)errlen, "option '%s' takes no value", shown);
				return -1;
			}
			*(int *)o->value = 1;
			continue;
		}
		const char *v = inline_val;
		if (!v) {
			if (i + 1 >= argc) {
				snprintf(err, (size_t)errlen, "option '%s' needs a value", shown);
				return -1;
			}
			v = argv[++i];
		}
		if (set_value(o, shown, v, err, errlen))
			return -1;
	}
	*npos = np;
	return 0;
}

int opt_env_seconds(const char *name, double dflt, int zero_ok, double *v)
{
	const char *env = getenv(name);
	*v = dflt;
	if (!env || !*env)
		return 0;
	char *end = NULL;
	double d = strtod(env, &end);
	if (*end || !(zero_ok ? d >= 0 : d > 0))
		return -1;
	*v = d;
	return 0;
}
