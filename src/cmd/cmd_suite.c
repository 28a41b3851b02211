/*
 * `cutegen suite SUITE|LIST --out SUITE_DIR` and `cutegen suite-worker MANIFEST --index I`:
 * the command parses the flags, drives the suite engine (suite/engine.h: the local pool or a
 * Slurm job array), prints the closing summary or --json (fast_p, geometric means, busy
 * shares) and chooses the exit status. docs/suite.md explains the whole.
 * Not for: running the tasks (src/suite/) or the runs themselves (cmd_run.c).
 */
#include "cmd/cutegen.h"
#include "suite/engine.h"
#include "suite/suite_store.h"
#include "util/err.h"
#include "util/fsutil.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --name VALUE or --name=VALUE at argv[*i]; 1 when it is that flag (value set or NULL). */
static int flag_value(int argc, char **argv, int *i, const char *name, const char **val)
{
	const char *a = argv[*i];
	size_t nl = strlen(name);
	if (strncmp(a, "--", 2) || strncmp(a + 2, name, nl))
		return 0;
	if (a[2 + nl] == '=') {
		*val = a + 3 + nl;
		return 1;
	}
	if (a[2 + nl])
		return 0;
	*val = *i + 1 < argc ? argv[++*i] : NULL;
	return 1;
}

static int parse_num(const char *flag, const char *v, double lo, double *out)
{
	char *end;
	if (!v || !*v) {
		error("%s needs a value; see 'cutegen help suite'", flag);
		return -1;
	}
	double d = strtod(v, &end);
	if (*end || !(d >= lo)) {
		error("%s must be a number of at least %g (got \"%s\")", flag, lo, v);
		return -1;
	}
	*out = d;
	return 0;
}

static int parse_suite_opts(int argc, char **argv, struct suite_opts *o)
{
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i], *v = NULL;
		double d;
		if (!strcmp(a, "--")) {
			while (++i < argc)
				suite_opts_pass_add(o, argv[i]);
			break;
		}
#define STRFLAG(name, field) \
		if (flag_value(argc, argv, &i, name, &v)) { \
			if (!v) { error("--%s needs a value; see 'cutegen help suite'", name); return -1; } \
			o->field = v; continue; }
#define NUMFLAG(name, lo, assign) \
		if (flag_value(argc, argv, &i, name, &v)) { \
			if (parse_num("--" name, v, lo, &d)) return -1; \
			assign; continue; }
		STRFLAG("out", out);
		STRFLAG("gpus", gpus);
		STRFLAG("run-args", run_args);
		STRFLAG("partition", partition);
		STRFLAG("time", time_limit);
		NUMFLAG("attempts", 1, o->attempts = (int)d);
		NUMFLAG("gpus-per-task", 0, o->gpus_per_task = (int)d);
		NUMFLAG("chunk", 1, o->chunk = (int)d);
		NUMFLAG("per-gpu", 1, o->per_gpu = (int)d);
		NUMFLAG("task-timeout", 0, o->task_timeout = d);
		NUMFLAG("poll", 0.1, o->poll_s = d);
		NUMFLAG("wait-timeout", 0, o->wait_timeout = d);
#undef STRFLAG
#undef NUMFLAG
		if (!strcmp(a, "-o")) {
			if (++i >= argc) {
				error("-o needs a directory");
				return -1;
			}
			o->out = argv[i];
		} else if (!strcmp(a, "--json")) {
			o->json = 1;
		} else if (!strcmp(a, "--resume")) {
			o->resume = 1;
		} else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
			o->quiet = 1;
		} else if (!strcmp(a, "--slurm")) {
			o->slurm = 1;
		} else if (!strcmp(a, "--no-wait")) {
			o->no_wait = 1;
		} else if (!strcmp(a, "--device") || !strncmp(a, "--device=", 9)) {
			error("--device is chosen per worker by 'cutegen suite'; use --gpus");
			return -1;
		} else {
			suite_opts_pass_add(o, a);
		}
	}
	if (o->run_args) {
		/* split on blanks; no quoting (a value with a blank goes after "--") */
		char *copy = xstrdup(o->run_args), *save = NULL;
		for (char *tok = strtok_r(copy, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save))
			suite_opts_pass_add(o, tok);
		free(copy);
	}
	if (o->npass > SUITE_RUN_ARGS_MAX) {
		error("more than %d flags for 'cutegen run'", SUITE_RUN_ARGS_MAX);
		return -1;
	}
	return 0;
}

/* ---- summary ---- */

static json_t *fast_p_json(const double *f)
{
	json_t *fp = json_object();
	for (int p = 0; p < SUITE_FAST_P_N; p++) {
		char k[16];
		snprintf(k, sizeof(k), "%g", suite_fast_p_thresholds[p]);
		json_object_set_new(fp, k, json_real(f[p]));
	}
	return fp;
}

static void print_fast_p(const char *label, const double *f)
{
	printf("%s", label);
	for (int p = 0; p < SUITE_FAST_P_N; p++)
		printf(" p=%g %.0f%%", suite_fast_p_thresholds[p], f[p] * 100);
}

static void print_summary(struct suite_store *ss, const char *suite_dir, long session,
			  double wall_s, const struct suite_opts *o, json_t *busy)
{
	struct suite_task *rows = NULL;
	size_t n = 0;
	char *err = NULL;
	if (suite_rows(ss, &rows, &n, &err)) {
		error("%s", err);
		free(err);
		return;
	}
	struct suite_summary s;
	suite_summarize(rows, n, &s);
	if (o->json) {
		json_t *fp = fast_p_json(s.fast_p);
		json_t *tasks = json_array();
		for (size_t i = 0; i < n; i++) {
			const struct suite_task *t = &rows[i];
			json_array_append_new(tasks, json_pack(
				"{s:I, s:s, s:s, s:s, s:i, s:s?, s:i, s:f, s:b, s:o, s:o, s:o, s:s?}",
				"id", (json_int_t)t->id, "task", t->spec, "run_dir", t->run_dir,
				"status", t->status, "attempts", t->attempts, "worker", t->worker,
				"exit_code", t->exit_code, "wall_s", t->wall_s, "correct", t->correct,
				"best_ms", t->best_ms >= 0 ? json_real(t->best_ms) : json_null(),
				"speedup", t->best_speedup > 0 ? json_real(t->best_speedup) : json_null(),
				"roofline_fraction", t->best_roof > 0 ? json_real(t->best_roof) : json_null(),
				"message", t->message));
			if (t->torch) {
				json_t *x = json_array_get(tasks, json_array_size(tasks) - 1);
				json_object_set_new(x, "speedup_vs_torch", t->torch_speedup > 0 ?
						    json_real(t->torch_speedup) : json_null());
				json_object_set_new(x, "speedup_vs_torch_compile",
						    t->compile_speedup > 0 ?
						    json_real(t->compile_speedup) : json_null());
				json_object_set_new(x, "torch_error", t->torch_error ?
						    json_string(t->torch_error) : json_null());
			}
		}
		json_t *j = json_pack("{s:s, s:I, s:i, s:i, s:i, s:i, s:i, s:i, s:o, s:o, s:o, s:f, s:o, "
				      "s:o}", "suite_dir", suite_dir, "session", (json_int_t)session,
				      "tasks", s.tasks, "done", s.done, "failed", s.failed, "pending",
				      s.pending, "running", s.running, "correct", s.correct,
				      "fast_p", fp, "geomean_speedup",
				      s.n_speedup ? json_real(s.geomean_speedup) : json_null(),
				      "geomean_roofline_fraction",
				      s.n_roof ? json_real(s.geomean_roof) : json_null(), "wall_s", wall_s,
				      "workers", busy ? json_incref(busy) : json_array(), "results", tasks);
		/* --torch: fast_p against PyTorch eager and torch.compile (null when no run was
		   asked for them) */
		json_object_set_new(j, "fast_p_vs_torch", s.n_torch ? fast_p_json(s.fast_p_eager)
								   : json_null());
		json_object_set_new(j, "fast_p_vs_torch_compile",
				    s.n_torch ? fast_p_json(s.fast_p_compile) : json_null());
		json_object_set_new(j, "torch", json_pack(
			"{s:i, s:i, s:i, s:o, s:o}", "tasks_asked", s.n_torch, "with_eager", s.n_eager,
			"with_compile", s.n_compile, "geomean_speedup_vs_torch",
			s.n_eager ? json_real(s.geomean_eager) : json_null(),
			"geomean_speedup_vs_torch_compile",
			s.n_compile ? json_real(s.geomean_compile) : json_null()));
		char *txt = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
		puts(txt);
		free(txt);
		json_decref(j);
	} else {
		printf("suite     %s: %d tasks, %d done (%d with a correct kernel), %d failed, %d "
		       "not run\n", suite_dir, s.tasks, s.done, s.correct, s.failed,
		       s.pending + s.running);
		print_fast_p("fast_p   ", s.fast_p);
		printf("  (vs the baseline)\n");
		if (s.n_torch) {
			print_fast_p("  eager  ", s.fast_p_eager);
			printf("  (vs PyTorch eager: %d of %d tasks have the figure)\n", s.n_eager,
			       s.tasks);
			print_fast_p("  compile", s.fast_p_compile);
			printf("  (vs torch.compile: %d of %d tasks have the figure)\n", s.n_compile,
			       s.tasks);
		}
		if (s.n_speedup)
			printf("geomean   %.3fx the baseline over %d correct tasks", s.geomean_speedup,
			       s.n_speedup);
		if (s.n_roof)
			printf("%s%.0f%% of the roofline over %d", s.n_speedup ? "; " : "geomean   ",
			       s.geomean_roof * 100, s.n_roof);
		if (s.n_speedup || s.n_roof)
			printf("\n");
		if (s.n_eager || s.n_compile) {
			printf("geomean   ");
			if (s.n_eager)
				printf("%.3fx PyTorch eager over %d", s.geomean_eager, s.n_eager);
			if (s.n_compile)
				printf("%s%.3fx torch.compile over %d", s.n_eager ? "; " : "",
				       s.geomean_compile, s.n_compile);
			printf("\n");
		}
		for (size_t i = 0; i < n; i++)
			if (rows[i].torch_error)
				printf("torch     %s: %.400s (counted as not fast)\n", rows[i].spec,
				       rows[i].torch_error);
		for (size_t i = 0; i < n; i++)
			if (!strcmp(rows[i].status, "failed"))
				printf("failed    %s after %d attempt%s: %.200s\n", rows[i].spec,
				       rows[i].attempts, rows[i].attempts == 1 ? "" : "s",
				       rows[i].message ? rows[i].message : "");
		if (busy && json_array_size(busy) && wall_s > 0) {
			printf("busy      wall %.1f s:", wall_s);
			size_t i;
			json_t *w;
			json_array_foreach(busy, i, w)
				printf(" %s %.0f%%", json_string_value(json_object_get(w, "worker")),
				       json_number_value(json_object_get(w, "busy_share")) * 100);
			printf("\n");
		}
	}
	suite_rows_free(rows, n);
}

/* Runs args/tasks into the store; 0 or an exit code (printed). */

int cmd_suite(int argc, char **argv)
{
	struct suite_opts o = SUITE_OPTS_INIT;
	if (argc < 2 || argv[1][0] == '-') {
		error("usage: cutegen suite SUITE|TASK_LIST_FILE --out SUITE_DIR [options]; "
		      "see 'cutegen help suite'");
		return EXIT_USAGE;
	}
	if (parse_suite_opts(argc, argv, &o)) {
		suite_opts_release(&o);
		return EXIT_USAGE;
	}
	if (!o.out) {
		error("suite needs --out SUITE_DIR (its store, run directories and logs go there)");
		suite_opts_release(&o);
		return EXIT_USAGE;
	}
	char *err = NULL;
	int rc = EXIT_INTERNAL, r;
	long session = 0;
	struct suite_outcome out = { 0 };
	struct suite_store *ss = NULL;
	/* a new suite: everything that can be checked is checked before anything is written, so
	 * a usage error or a machine without GPUs leaves no suite.db (and no directory) behind */
	char *db = xasprintf("%s/suite.db", o.out);
	int existed = file_exists(db);
	free(db);
	if (!existed && (r = suite_check(argv[1], &o, &err))) {
		rc = exit_status_for(r);
		goto out;
	}
	ss = suite_open(o.out, &err);
	if (!ss) {
		rc = EXIT_INPUT;
		goto out;
	}
	r = suite_prepare(ss, argv[1], o.out, &o, &err);
	if (r) {
		rc = exit_status_for(r);
		goto out;
	}
	if (suite_session_begin(ss, &session, o.slurm ? "slurm" : "local", &err)) {
		rc = EXIT_INTERNAL;
		goto out;
	}
	r = o.slurm ? suite_run_slurm(ss, o.out, &o, session, &out, &err)
		    : suite_run_local(ss, o.out, &o, session, &out, &err);
	if (r) {
		rc = exit_status_for(r);
		goto out;
	}
	if (o.slurm && o.no_wait) {
		if (!o.json)
			printf("submitted job %s; 'cutegen suite ... --slurm --resume' merges its "
			       "results\n", out.job);
		rc = EXIT_OK;
		goto out;
	}
	print_summary(ss, o.out, session, out.wall_s, &o, out.busy);
	if (out.interrupted)
		rc = EXIT_INTERRUPTED;
	else
		rc = out.failed ? EXIT_VERDICT : EXIT_OK;
out:
	if (err)
		error("%s", err);
	free(err);
	suite_outcome_release(&out);
	suite_close(ss);
	suite_opts_release(&o);
	return rc;
}

/* `cutegen suite-worker MANIFEST --index I`: one Slurm array element. */
int cmd_suite_worker(int argc, char **argv)
{
	long index = -1;
	if (argc == 4 && !strcmp(argv[2], "--index")) {
		char *end;
		index = strtol(argv[3], &end, 10);
		if (*end || index < 0)
			index = -1;
	}
	if (index < 0) {
		error("usage: cutegen suite-worker MANIFEST --index N (run by a Slurm job array)");
		return EXIT_USAGE;
	}
	char *err = NULL;
	int failed = 0;
	int r = suite_worker_element(argv[1], index, &failed, &err);
	if (err)
		error("%s", err);
	free(err);
	if (r)
		return exit_status_for(r);
	return failed ? EXIT_VERDICT : EXIT_OK;
}
