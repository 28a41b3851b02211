/*
 * `cutegen profile KERNEL.cu --task T`: the policy check and the compile (as `cutegen eval`
 * does them), then Nsight Compute on the runner's --profile mode, and a summary of what bounds
 * the kernel. With --so, profiles an already built library. --json prints the raw metrics too.
 */
#include "eval/build.h"
#include "cmd/cutegen.h"
#include "agent/feedback.h"
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
	const char *task_name = NULL, *arch = NULL, *so = NULL, *cache_dir = NULL, *ncu = NULL;
	int json = 0, device = 0, no_cache = 0, keep = 0, np = 0;
	double deadline = 0, compile_deadline = 0;
	char err[256];
	struct opt opts[] = {
		{ "task", 't', OPT_STRING, &task_name },
		{ "arch", 0, OPT_STRING, &arch },
		{ "device", 0, OPT_INT_NONNEG, &device },
		{ "json", 0, OPT_BOOL, &json },
		{ "deadline", 0, OPT_DOUBLE_NONNEG, &deadline },
		{ "compile-deadline", 0, OPT_DOUBLE_NONNEG, &compile_deadline },
		{ "so", 0, OPT_STRING, &so },
		{ "cache-dir", 0, OPT_STRING, &cache_dir },
		{ "no-cache", 0, OPT_BOOL, &no_cache },
		{ "keep-scratch", 0, OPT_BOOL, &keep },
		{ "ncu", 0, OPT_STRING, &ncu },
	};
	if (opt_parse(argc, argv, opts, (int)ARRAY_SIZE(opts), &np, err, sizeof(err))) {
		error("%s; see 'cutegen help profile'", err);
		return EXIT_USAGE;
	}
	if ((np != 1 && !(np == 0 && so)) || !task_name) {
		error(!task_name ? "profile needs --task NAME_OR_FILE (see 'cutegen tasks')"
				 : "profile needs one kernel file or --so LIB.so; usage: cutegen profile "
				   "KERNEL.cu --task TASK");
		return EXIT_USAGE;
	}
	if (check_arch_option(arch))
		return EXIT_USAGE;
	const char *kernel = np ? argv[1] : so;
	char *terr = NULL;
	struct task *t = task_load(task_name, &terr);
	if (!t) {
		error("%s", terr);
		free(terr);
		return EXIT_INPUT;
	}

	int rc = EXIT_INTERNAL;
	struct strbuf src = STRBUF_INIT, txt = STRBUF_INIT;
	struct policy_report pol = POLICY_REPORT_INIT;
	struct build_result br = BUILD_RESULT_INIT;
	struct ncu_result nr = NCU_RESULT_INIT;
	char *nerr = NULL;
	const char *so_path = so;
	json_t *out = json_object();
	json_object_set_new(out, "kernel", json_string(kernel));
	json_object_set_new(out, "task", json_string(t->name));

	if (!so) {
		struct build_opts bo = BUILD_OPTS_INIT;
		bo.arch = arch;
		bo.cache_dir = cache_dir;
		bo.no_cache = no_cache;
		bo.deadline_s = compile_deadline;
		int b = build_kernel_file(kernel, &bo, &src, &pol, &br);
		if (b && b != CG_REJECTED) {
			rc = exit_status_for(b);
			if (cg_primary(b) == CG_INPUT) { /* --json says so too, with the reason */
				json_object_set_new(out, "status", json_string("input_error"));
				json_object_set_new(out, "message", json_string(error_last()));
			}
			goto out;
		}
		if (b == CG_REJECTED) {
			feedback_policy(&pol, &txt);
			error("kernel '%s' is rejected by the policy check:\n%s", kernel, txt.buf);
			rc = EXIT_VERDICT;
			goto out;
		}
		if (!br.ok) {
			diag_list_map_file(&br.diags, "kernel.cu", kernel);
			feedback_compile_file(&br, src.buf, src.len, compile_deadline, kernel, &txt);
			error("kernel '%s' does not compile:\n%s", kernel, txt.buf);
			rc = EXIT_VERDICT;
			goto out;
		}
		so_path = br.so_path;
	}

	struct ncu_opts no = NCU_OPTS_INIT;
	no.ncu = ncu;
	no.device = device;
	no.deadline_s = deadline;
	no.cache_dir = cache_dir;
	no.no_cache = no_cache;
	no.keep_scratch = keep;
	int st = ncu_profile(&no, t, so_path, &nr, &nerr);
	rc = exit_status_for(st); /* ncu's codes are extended codes of util/err.h */
	json_object_set_new(out, "status", json_string(ncu_status_name(st)));
	if (st != NCU_OK) {
		json_object_set_new(out, "message", json_string(nerr ? nerr : ""));
		json_object_set_new(out, "unavailable", json_boolean(ncu_unavailable(st)));
		if (!json)
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
	if (!json) {
		printf("profile   %s on %s%s\n", kernel, t->name, nr.cache_hit ? " (cached)" : "");
		fputs(nr.summary, stdout);
		if (nr.report.truncated)
			printf("note       some rows of ncu's output could not be read or were past a cap\n");
	}
out:
	if (json && json_object_get(out, "status")) {
		char *s = json_dumps(out, JSON_INDENT(2) | JSON_SORT_KEYS);
		puts(s);
		free(s);
	}
	json_decref(out);
	strbuf_release(&src);
	strbuf_release(&txt);
	policy_report_release(&pol);
	build_result_release(&br);
	ncu_result_release(&nr);
	free(nerr);
	task_free(t);
	return rc;
}
