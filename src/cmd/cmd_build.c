/*
 * `cutegen build KERNEL.cu`: the policy check, then the compile, of one candidate, as the
 * evaluator does them; prints the verdict (violations, the first compiler error with its
 * source lines, or the shared object and whether it came from the cache).
 */
#include "eval/build.h"
#include "cmd/cutegen.h"
#include "cmd/ticker.h"
#include "eval/nvcc_diag.h"
#include "eval/policy.h"
#include "util/opt.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Splits "a b  c" into a NULL-terminated heap vector (the strings point into a copy). */
static char **split_flags(const char *s, char **copy)
{
	*copy = xstrdup(s ? s : "");
	char **v = xcalloc(strlen(*copy) / 2 + 2, sizeof(char *));
	size_t n = 0;
	for (char *tok = strtok(*copy, " \t\n"); tok; tok = strtok(NULL, " \t\n"))
		v[n++] = tok;
	v[n] = NULL;
	return v;
}

/* --cutlass names a CUTLASS checkout (with include/) or its include/ directory. */
static char *cutlass_include_of(const char *dir)
{
	char *inc = xasprintf("%s/include/cute/tensor.hpp", dir);
	FILE *f = fopen(inc, "r");
	free(inc);
	if (f) {
		fclose(f);
		return xasprintf("%s/include", dir);
	}
	return xstrdup(dir);
}

static json_t *violations_json(const struct policy_report *rep)
{
	json_t *a = json_array();
	for (size_t i = 0; i < rep->nr; i++)
		json_array_append_new(a, json_pack("{s:i, s:s, s:s}", "line", rep->items[i].line,
						   "rule", rep->items[i].rule, "message",
						   rep->items[i].message));
	return a;
}

static json_t *diags_json(const struct diag_list *dl)
{
	json_t *a = json_array();
	for (size_t i = 0; i < dl->nr; i++) {
		const struct diag *d = &dl->items[i];
		json_t *o = json_pack("{s:s, s:s, s:i, s:i, s:s}", "severity",
				      diag_severity_name(d->severity), "tool", d->tool, "line",
				      d->line, "column", d->column, "message", d->message);
		json_object_set_new(o, "file", d->file ? json_string(d->file) : json_null());
		json_t *ctx = json_array();
		for (size_t k = 0; k < d->nframes; k++)
			json_array_append_new(ctx, json_pack("{s:s, s:s?, s:i}", "text",
							     d->frames[k].text, "file",
							     d->frames[k].file, "line",
							     d->frames[k].line));
		json_object_set_new(o, "context", ctx);
		json_array_append_new(a, o);
	}
	return a;
}

static void print_json(json_t *o)
{
	char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
	puts(s);
	free(s);
}

/* The last `lines` lines of a log, for failures the parser found nothing in. */
static const char *log_tail(const char *log, size_t len, int lines)
{
	const char *p = log + len;
	while (p > log && lines >= 0) {
		p--;
		if (*p == '\n')
			lines--;
	}
	return p == log ? p : p + 1;
}

int cmd_build(int argc, char **argv)
{
	const char *arch = NULL, *cache_dir = NULL, *nvcc = NULL, *cutlass = NULL, *flags = NULL;
	int no_cache = 0, json = 0, no_policy = 0, show_log = 0, no_source_scan = 0, quiet = 0;
	double deadline = 0;
	struct opt opts[] = {
		{ "arch", 0, OPT_STRING, &arch },
		{ "cache-dir", 0, OPT_STRING, &cache_dir },
		{ "no-cache", 0, OPT_BOOL, &no_cache },
		{ "json", 0, OPT_BOOL, &json },
		{ "deadline", 0, OPT_DOUBLE_NONNEG, &deadline },
		{ "nvcc", 0, OPT_STRING, &nvcc },
		{ "cutlass", 0, OPT_STRING, &cutlass },
		{ "flags", 0, OPT_STRING, &flags },
		{ "no-policy", 0, OPT_BOOL, &no_policy },
		{ "no-source-scan", 0, OPT_BOOL, &no_source_scan },
		{ "log", 0, OPT_BOOL, &show_log },
		{ "quiet", 'q', OPT_BOOL, &quiet },
	};
	char err[256];
	int npos = 0;
	if (opt_parse(argc, argv, opts, (int)ARRAY_SIZE(opts), &npos, err, sizeof(err))) {
		error("%s; 'cutegen help build' lists the options", err);
		return EXIT_USAGE;
	}
	if (npos != 1) {
		error("build takes one kernel file (got %d); usage: cutegen build KERNEL.cu", npos);
		return EXIT_USAGE;
	}
	if (check_arch_option(arch))
		return EXIT_USAGE;
	const char *file = argv[1];

	int rc = EXIT_OK;
	struct strbuf src = STRBUF_INIT, text = STRBUF_INIT;
	struct policy_report rep = POLICY_REPORT_INIT;
	struct build_result res = BUILD_RESULT_INIT;
	char *flags_copy = NULL, *cutlass_inc = NULL, *berr = NULL;
	char **extra = NULL;
	json_t *out = json_object();
	json_object_set_new(out, "file", json_string(file));

	int r = strbuf_read_file(&src, file, 16u << 20);
	if (r) {
		error("cannot read kernel '%s': %s", file,
		      r == CG_INPUT_TOOBIG ? "larger than 16 MiB" : strbuf_read_strerror(r, file));
		json_object_set_new(out, "ok", json_false());
		json_object_set_new(out, "stage", json_string("input"));
		json_object_set_new(out, "error", json_string(error_last()));
		rc = EXIT_INPUT;
		goto done;
	}

	if (!no_policy && !no_source_scan && policy_check(src.buf, src.len, &rep)) {
		policy_format(&rep, &text);
		if (json) {
			json_object_set_new(out, "ok", json_false());
			json_object_set_new(out, "stage", json_string("policy"));
			json_object_set_new(out, "violations", violations_json(&rep));
		} else {
			error("kernel '%s' breaks the kernel policy (docs/policy.md); it was not "
			      "compiled:", file);
			fputs(text.buf, stderr);
		}
		rc = EXIT_VERDICT;
		goto done;
	}

	struct build_opts bo = BUILD_OPTS_INIT;
	bo.nvcc = nvcc;
	bo.arch = arch;
	bo.cache_dir = cache_dir;
	bo.no_cache = no_cache;
	bo.deadline_s = deadline;
	bo.no_symbol_check = no_policy;
	if (cutlass)
		bo.cutlass_include = cutlass_inc = cutlass_include_of(cutlass);
	if (flags)
		bo.extra_flags = (const char *const *)(extra = split_flags(flags, &flags_copy));
	/* nvcc takes 30-50 s on CuTe kernels: say so on a terminal (a cache hit ends at once) */
	char *what = xasprintf("compiling %s (nvcc, %s)", file, arch ? arch : BUILD_DEFAULT_ARCH);
	struct ticker *tk = ticker_start(what, quiet || json);
	int b = build_kernel(&bo, src.buf, src.len, &res, &berr);
	ticker_stop(tk);
	free(what);
	if (b) {
		error("%s", berr);
		rc = exit_status_for(b);
		goto done;
	}

	/* diagnostics name the user's file (editors jump to it), not the kernel.cu nvcc saw */
	diag_list_map_file(&res.diags, "kernel.cu", file);
	if (show_log && !json && res.log_len)
		fwrite(res.log, 1, res.log_len, stderr);
	if (res.rejected) {
		/* the object check refused what nvcc compiled: no .so was linked */
		if (json) {
			json_object_set_new(out, "ok", json_false());
			json_object_set_new(out, "stage", json_string("policy"));
			json_object_set_new(out, "cache_hit", json_boolean(res.cache_hit));
			json_object_set_new(out, "key", json_string(res.key));
			json_object_set_new(out, "violations", violations_json(&res.symbols));
		} else {
			strbuf_reset(&text);
			policy_format(&res.symbols, &text);
			error("kernel '%s' breaks the kernel policy (docs/policy.md): the object check "
			      "refused its compiled code, and it was not linked:", file);
			fputs(text.buf, stderr);
		}
		rc = EXIT_VERDICT;
		goto done;
	}
	if (json) {
		json_object_set_new(out, "ok", json_boolean(res.ok));
		json_object_set_new(out, "stage", json_string(res.ok ? "done" : "compile"));
		json_object_set_new(out, "so_path", res.so_path ? json_string(res.so_path)
								: json_null());
		json_object_set_new(out, "cache_hit", json_boolean(res.cache_hit));
		json_object_set_new(out, "compile_s", json_real(res.compile_s));
		json_object_set_new(out, "check_s", json_real(res.check_s));
		json_object_set_new(out, "status", json_integer(res.status));
		json_object_set_new(out, "timed_out", json_boolean(res.timed_out));
		json_object_set_new(out, "key", json_string(res.key));
		json_object_set_new(out, "diagnostics", diags_json(&res.diags));
		if (!res.ok) {
			diag_format_first_error(&res.diags, src.buf, src.len, file, &text);
			json_object_set_new(out, "first_error", json_string(text.buf));
			if (show_log)
				json_object_set_new(out, "log", json_string(res.log));
		}
	}
	if (res.timed_out) {
		if (!json)
			error("compile exceeded its deadline of %g s and was stopped; raise --deadline "
			      "or simplify the kernel", deadline > 0 ? deadline
								  : BUILD_DEFAULT_DEADLINE_S);
		rc = EXIT_VERDICT;
		goto done;
	}
	if (!res.ok) {
		if (!json) {
			error("kernel '%s' does not compile (nvcc exit %d after %.1f s%s):", file,
			      res.status, res.compile_s, res.cache_hit ? ", cached" : "");
			strbuf_reset(&text);
			if (diag_format_first_error(&res.diags, src.buf, src.len, file, &text))
				fputs(log_tail(res.log, res.log_len, 40), stderr);
			else
				fputs(text.buf, stderr);
		}
		rc = EXIT_VERDICT;
		goto done;
	}
	if (!json) {
		printf("%s\n", res.so_path);
		if (res.cache_hit)
			printf("cache hit (first compiled in %.1f s)\n", res.compile_s);
		else
			printf("compiled in %.1f s\n", res.compile_s);
		size_t warnings = 0;
		for (size_t i = 0; i < res.diags.nr; i++)
			warnings += res.diags.items[i].severity == DIAG_WARNING;
		if (warnings)
			printf("%zu compiler warning%s (--log shows them)\n", warnings,
			       warnings == 1 ? "" : "s");
	}

done:
	if (json && json_object_get(out, "stage"))
		print_json(out);
	json_decref(out);
	strbuf_release(&src);
	strbuf_release(&text);
	policy_report_release(&rep);
	build_result_release(&res);
	free(flags_copy);
	free(extra);
	free(cutlass_inc);
	free(berr);
	return rc;
}
