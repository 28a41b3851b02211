/*
 * `cutegen profile KERNEL.cu --task T`: the policy check and the compile (as `cutegen eval`
 * does them), then Nsight Compute on the runner's --profile mode, and a summary of what bounds
 * the kernel. With --so, profiles an already built library. --json prints the raw metrics too.
 */
#include "eval/build.h"
#include "cmd/cutegen.h"
#include "eval/ncu.h"
#include "common/paths.h"
#include "eval/policy.h"
#include "common/task.h"
#include "util/opt.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_profile(int argc, char **argv)
{
	struct kernel_flags f = { 0 };
	const char *ncu = NULL;
	int np = 0;
	const struct opt opts[] = { { "ncu", 0, OPT_STRING, &ncu } };
	if (kernel_flags_parse(argc, argv, opts, 1, &f, &np, "profile"))
		return EXIT_USAGE;
	if ((np != 1 && !(np == 0 && f.so)) || !f.task) {
		error(!f.task ? "profile needs --task NAME_OR_FILE (see 'cutegen tasks')"
			      : "profile needs one kernel file or --so LIB.so; usage: cutegen profile "
				"KERNEL.cu --task TASK");
		return EXIT_USAGE;
	}
	if (check_arch_option(f.build.arch))
		return EXIT_USAGE;
	const char *kernel = np ? argv[1] : f.so;
	json_t *out = json_object();
	struct kernel_job kj = KERNEL_JOB_INIT;
	struct ncu_result nr = NCU_RESULT_INIT;
	char *nerr = NULL;
	int rc = EXIT_INTERNAL;
	f.modules = 1; /* a module that is not lowered: its reference process prepares the cases */
	int b = kernel_job_prepare(&kj, &f, kernel);
	if (!kj.task && !kj.module) {
		rc = exit_status_for(b);
		goto out;
	}
	const struct task *t = kj.task;
	json_object_set_new(out, "kernel", json_string(kernel));
	json_object_set_new(out, "task", json_string(t ? t->name : kj.module->name ? kj.module->name : f.task));
	if (b == CG_REJECTED) {
		error("kernel '%s' is rejected by the policy check:\n%s", kernel, kj.txt.buf);
		rc = EXIT_VERDICT;
		goto out;
	}
	if (b) {
		rc = exit_status_for(b);
		if (cg_primary(b) == CG_INPUT) { /* --json says so too, with the reason */
			json_object_set_new(out, "status", json_string("input_error"));
			json_object_set_new(out, "message", json_string(error_last()));
		}
		goto out;
	}
	if (!kj.so_path) {
		error("kernel '%s' does not compile:\n%s", kernel, kj.txt.buf);
		rc = EXIT_VERDICT;
		goto out;
	}

	struct ncu_opts no = NCU_OPTS_INIT;
	no.ncu = ncu;
	no.device = f.device;
	no.deadline_s = f.deadline;
	no.cache_dir = f.build.cache_dir;
	no.no_cache = f.build.no_cache;
	no.keep_scratch = f.keep_scratch;
	no.module = t ? NULL : kj.module;
	int st = ncu_profile(&no, t, kj.so_path, &nr, &nerr);
	rc = exit_status_for(st); /* ncu's codes are extended codes of util/err.h */
	json_object_set_new(out, "status", json_string(ncu_status_name(st)));
	if (st != NCU_OK) {
		json_object_set_new(out, "message", json_string(nerr ? nerr : ""));
		json_object_set_new(out, "unavailable", json_boolean(ncu_unavailable(st)));
		if (!f.json)
			error("%s%s", ncu_unavailable(st) ? "profiling unavailable: " : "profiling failed: ",
			      nerr ? nerr : ncu_status_name(st));
		goto out;
	}
	json_object_set_new(out, "summary", json_string(nr.summary));
	json_object_set_new(out, "bound", json_string(ncu_bound_name(nr.sum.bound)));
	json_object_set_new(out, "cache_hit", json_boolean(nr.cache_hit));
	if (nr.runner_verdict)
		json_object_set_new(out, "runner_verdict", json_string(nr.runner_verdict));
	json_object_set_new(out, "profile", json_incref(nr.raw));
	if (!f.json) {
		printf("profile   %s on %s%s\n", kernel, t ? t->name : kj.module->name, nr.cache_hit ? " (cached)" : "");
		fputs(nr.summary, stdout);
		if (nr.report.truncated)
			printf("note       some rows of ncu's output could not be read or were past a cap\n");
	}
out:
	if (f.json && json_object_get(out, "status")) {
		char *s = json_dumps(out, JSON_INDENT(2) | JSON_SORT_KEYS);
		puts(s);
		free(s);
	}
	json_decref(out);
	ncu_result_release(&nr);
	free(nerr);
	kernel_job_release(&kj);
	return rc;
}
