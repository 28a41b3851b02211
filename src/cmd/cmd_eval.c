/*
 * `cutegen eval KERNEL.cu --task T`: judges one kernel with no model in the loop: the policy
 * check, the compile (cached), then the evaluator. Prints a readable summary or, with --json,
 * one JSON object (docs/evaluation.md has its schema).
 */
#include "common/verdict.h"
#include "eval/build.h"
#include "cmd/cutegen.h"
#include "eval/eval.h"
#include "eval/policy.h"
#include "common/task.h"
#include "common/task_module.h"
#include "util/opt.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_json(json_t *o)
{
	char *s = json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS);
	puts(s);
	free(s);
}

static json_t *diags_json(const struct diag_list *dl, size_t max)
{
	json_t *a = json_array();
	for (size_t i = 0; i < dl->nr && json_array_size(a) < max; i++) {
		const struct diag *d = &dl->items[i];
		if (d->severity < DIAG_WARNING)
			continue;
		json_t *o = json_object();
		json_object_set_new(o, "severity", json_string(diag_severity_name(d->severity)));
		json_object_set_new(o, "file", d->file ? json_string(d->file) : json_null());
		json_object_set_new(o, "line", json_integer(d->line));
		json_object_set_new(o, "column", json_integer(d->column));
		json_object_set_new(o, "message", json_string(d->message));
		json_array_append_new(a, o);
	}
	return a;
}

int cmd_eval(int argc, char **argv)
{
	struct kernel_flags f = { 0 };
	int quick = 0, no_baseline = 0, torch = 0, np = 0;
	const struct opt opts[] = {
		{ "quick", 0, OPT_BOOL, &quick },
		{ "no-baseline", 0, OPT_BOOL, &no_baseline },
		{ "torch", 0, OPT_BOOL, &torch },
	};
	if (kernel_flags_parse(argc, argv, opts, (int)ARRAY_SIZE(opts), &f, &np, "eval"))
		return EXIT_USAGE;
	if (np != 1) {
		error("eval needs one kernel file (got %d); usage: cutegen eval KERNEL.cu --task TASK",
		      np);
		return EXIT_USAGE;
	}
	if (!f.task) {
		error("eval needs --task NAME_OR_FILE (see 'cutegen tasks')");
		return EXIT_USAGE;
	}
	if (check_arch_option(f.build.arch))
		return EXIT_USAGE;
	const char *kernel = argv[1];
	int rc = EXIT_INTERNAL;
	struct kernel_job kj = KERNEL_JOB_INIT;
	struct eval_result er = EVAL_RESULT_INIT;
	char *eerr = NULL;
	json_t *out = json_object();
	f.modules = 1; /* a module that is not lowered is judged through the reference process */
	int b = kernel_job_prepare(&kj, &f, kernel);
	if (!kj.task && !kj.module) {
		rc = exit_status_for(b);
		goto out;
	}
	const struct task *t = kj.task;
	const struct module_desc *md = kj.module;
	struct build_result *br = &kj.br;
	json_object_set_new(out, "kernel", json_string(kernel));
	json_object_set_new(out, "task", json_string(t ? t->name : md->name ? md->name : f.task));
	if (task_spec_is_module(f.task)) {
		json_object_set_new(out, "module", json_string(f.task));
		json_object_set_new(out, "lowered_to", t ? json_string(op_name(t->op)) : json_null());
	}
	json_object_set_new(out, "precision", json_string(t ? precision_name(t->precision)
						     : md->precision ? md->precision : "strict"));
	if (b && b != CG_REJECTED) {
		rc = exit_status_for(b);
		if (cg_primary(b) == CG_INPUT) { /* --json says so too, with the reason */
			json_object_set_new(out, "stage", json_string("input"));
			json_object_set_new(out, "verdict", json_string("input_error"));
			json_object_set_new(out, "message", json_string(error_last()));
		}
		goto out;
	}
	if (b == CG_REJECTED) {
		json_object_set_new(out, "stage", json_string("policy"));
		json_object_set_new(out, "verdict", json_string("policy"));
		json_object_set_new(out, "message", json_string(kj.txt.buf));
		if (!f.json)
			printf("verdict   FAIL: policy (rejected before %s)\n%s",
			       br->rejected ? "linking: the object check" : "compiling", kj.txt.buf);
		rc = EXIT_VERDICT;
		goto out;
	}
	if (!f.so) {
		json_t *bj = json_object();
		json_object_set_new(bj, "ok", json_boolean(br->ok));
		json_object_set_new(bj, "cache_hit", json_boolean(br->cache_hit));
		json_object_set_new(bj, "compile_s", json_real(br->compile_s));
		json_object_set_new(bj, "key", json_string(br->key));
		json_object_set_new(bj, "so", br->so_path ? json_string(br->so_path) : json_null());
		json_object_set_new(bj, "diagnostics", diags_json(&br->diags, 20));
		json_object_set_new(out, "build", bj);
		if (!br->ok) {
			json_object_set_new(out, "stage", json_string("compile"));
			json_object_set_new(out, "verdict", json_string("compile_error"));
			json_object_set_new(out, "message", json_string(kj.txt.buf));
			if (!f.json)
				printf("verdict   FAIL: compile_error\n%s", kj.txt.buf);
			rc = EXIT_VERDICT;
			goto out;
		}
		if (!f.json)
			printf("compiled  %s in %.1f s%s\n", kernel, br->compile_s,
			       br->cache_hit ? " (cache hit)" : "");
	}

	struct eval_opts eo = EVAL_OPTS_INIT;
	eo.device = f.device;
	eo.deadline_s = f.deadline;
	eo.quick = quick;
	eo.no_baseline = no_baseline;
	eo.keep_scratch = f.keep_scratch;
	eo.torch = torch;
	eo.module = t ? NULL : md;
	if (eval_run(&eo, t, kj.so_path, &er, &eerr)) {
		error("%s", eerr);
		rc = er.code ? exit_status_for(er.code) : EXIT_ENV;
		if (f.json) { /* --json says so too, with the reason */
			json_object_set_new(out, "stage", json_string(md ? "reference" : "evaluate"));
			json_object_set_new(out, "verdict", json_string(cg_primary(er.code) == CG_INPUT ?
									 "input_error" : "reference_error"));
			json_object_set_new(out, "message", json_string(eerr));
		}
		goto out;
	}
	json_object_set_new(out, "stage", json_string("evaluate"));
	json_object_set_new(out, "verdict", json_string(verdict_name(er.verdict)));
	json_object_set_new(out, "message", json_string(er.message ? er.message : ""));
	json_object_set_new(out, "evaluator_s", json_real(er.wall_s));
	if (er.last_phase)
		json_object_set_new(out, "last_phase", json_string(er.last_phase));
	if (er.report)
		json_object_set_new(out, "report", json_incref(er.report));
	/* the figures a reader compares, at the top: speedups and the roofline ratio */
	json_t *metrics = json_object_get(er.report, "metrics");
	static const char *top[] = { "speedup_vs_baseline", "speedup_vs_torch", "speedup_vs_eager",
				     "speedup_vs_torch_compile", "roofline_fraction" };
	for (size_t i = 0; eval_passed(&er) && i < ARRAY_SIZE(top); i++) {
		json_t *v = json_object_get(metrics, top[i]);
		if (json_is_number(v))
			json_object_set(out, top[i], v);
	}
	if (!f.json) {
		struct strbuf txt = STRBUF_INIT;
		eval_format(&er, t, &txt);
		fputs(txt.buf, stdout);
		strbuf_release(&txt);
	}
	rc = eval_passed(&er) ? EXIT_OK : er.verdict == VERDICT_NO_DEVICE ? EXIT_ENV
					: er.verdict == VERDICT_TASK_ERROR ? EXIT_INPUT : EXIT_VERDICT;
out:
	if (f.json && json_object_get(out, "verdict"))
		print_json(out);
	json_decref(out);
	eval_result_release(&er);
	free(eerr);
	kernel_job_release(&kj);
	return rc;
}
