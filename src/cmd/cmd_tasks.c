/*
 * `cutegen tasks` lists the built-in tasks; `cutegen task show|check` prints one spec or
 * validates task files. Printing only: the task model lives in task.c.
 */
#include "cmd/cutegen.h"
#include "common/paths.h"
#include "common/task.h"
#include "common/task_module.h"
#include "eval/reference.h"
#include "util/opt.h"
#include "util/strbuf.h"
#include "util/suggest.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "fp32" or "fp8_e4m3->bf16" */
static char *dtype_summary(const struct task *t)
{
	if (t->in_dtype == t->out_dtype)
		return xstrdup(dtype_name(t->in_dtype));
	return xasprintf("%s->%s", dtype_name(t->in_dtype), dtype_name(t->out_dtype));
}

/* "gemm" or "elementwise:relu" */
static char *op_summary(const struct task *t)
{
	if (t->op == OP_ELEMENTWISE)
		return xasprintf("%s:%s", op_name(t->op), act_name(t->act));
	return xstrdup(op_name(t->op));
}

static json_t *task_row_json(const char *suite, const struct task *t)
{
	struct strbuf shape = STRBUF_INIT;
	task_shape_summary(t, &shape);
	json_t *o = json_object();
	json_object_set_new(o, "name", json_string(t->name));
	json_object_set_new(o, "suite", json_string(suite));
	json_object_set_new(o, "op", json_string(op_name(t->op)));
	if (t->op == OP_ELEMENTWISE)
		json_object_set_new(o, "activation", json_string(act_name(t->act)));
	json_object_set_new(o, "dtype", json_string(dtype_name(t->in_dtype)));
	json_object_set_new(o, "out_dtype", json_string(dtype_name(t->out_dtype)));
	json_object_set_new(o, "precision", json_string(precision_name(t->precision)));
	json_object_set_new(o, "workload", json_string(task_workload(t)));
	json_object_set_new(o, "shape", json_string(shape.buf));
	json_object_set_new(o, "flops", json_real(task_flops(t)));
	json_object_set_new(o, "min_bytes", json_real(task_min_bytes(t)));
	json_object_set_new(o, "description", json_string(t->description));
	strbuf_release(&shape);
	return o;
}

/* `cutegen tasks --suite DIR`: each module file of DIR, described by the reference process. */
static int list_module_dir(const char *dir, int as_json)
{
	char **paths = NULL, *err = NULL;
	int n = module_dir_list(dir, &paths, &err), worst = EXIT_OK;
	if (n < 0) {
		error("%s", err);
		free(err);
		return EXIT_INPUT;
	}
	if (!n) {
		error("directory '%s' holds no module file (*.py in KernelBench's format)", dir);
		return EXIT_INPUT;
	}
	json_t *arr = json_array();
	if (!as_json)
		printf("%-32s %-20s %-6s %-9s %s\n", "MODULE", "LOWERED TO", "DTYPE", "PRECISION", "WORKLOAD");
	for (int i = 0; i < n; i++) {
		struct task *t = NULL;
		struct module_desc *md = NULL;
		int rc = task_resolve(paths[i], &t, &md, &err);
		const char *base = strrchr(paths[i], '/') + 1;
		if (rc) {
			fflush(stdout);
			error("%s", err);
			free(err);
			err = NULL;
			if (worst == EXIT_OK)
				worst = exit_status_for(rc);
			if (rc == REFERENCE_E_NO_PYTHON || rc == REFERENCE_E_NO_TORCH) {
				/* every other module would fail the same way: their names still */
				for (int j = i; j < n; j++) {
					if (as_json)
						json_array_append_new(arr, json_pack("{s:s,s:s}", "module", paths[j],
										     "error", "not described: no PyTorch"));
					else
						printf("%-32s %-20s %-6s %-9s %s\n", strrchr(paths[j], '/') + 1,
						       "?", "?", "?", "? (describing it needs PyTorch)");
					free(paths[j]);
				}
				break;
			}
		} else if (as_json) {
			json_array_append_new(arr, json_pack("{s:s,s:s,s:s?,s:s,s:s,s:s}", "module", paths[i],
							     "name", md->name, "lowered_to",
							     t ? op_name(t->op) : NULL, "dtype", md->dtype,
							     "precision", md->precision, "workload", md->workload));
		} else {
			printf("%-32s %-20s %-6s %-9s %s\n", base, t ? op_name(t->op) : "- (module only)",
			       md->dtype, md->precision, md->workload);
		}
		task_free(t);
		module_desc_free(md);
		free(paths[i]);
	}
	free(paths);
	if (as_json) {
		char *s = json_dumps(arr, JSON_INDENT(2));
		puts(s);
		free(s);
	}
	json_decref(arr);
	return worst;
}

/* After the built-in tasks: the module suites shipped beside this cutegen (its checkout's
 * tasks/), with their file counts and how to list or run one. Nothing when there are none. */
static void print_module_suites(void)
{
	static const char *const dirs[] = { "tasks/modules/level1", "tasks/modules/level2",
					    "tasks/kb1_modules" };
	int header = 0;
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		char *dir = xasprintf("%s/../%s", cutegen_libexec_dir(), dirs[i]), *err = NULL;
		char **paths = NULL;
		int n = module_dir_list(dir, &paths, &err);
		free(err);
		for (int j = 0; j < n; j++)
			free(paths[j]);
		free(paths);
		if (n > 0) {
			if (!header++)
				printf("\nModule suites (PyTorch modules in KernelBench's format): 'cutegen "
				       "tasks --suite DIR'\ndescribes each module, 'cutegen suite DIR/' runs "
				       "them:\n");
			char *real = realpath(dir, NULL);
			printf("  %-40s %d modules\n", real ? real : dir, n);
			free(real);
		}
		free(dir);
	}
}

int cmd_tasks(int argc, char **argv)
{
	const char *suite = NULL;
	int as_json = 0, npos = 0, rc = EXIT_OK;
	char err[256];
	struct opt opts[] = {
		{ "suite", 's', OPT_STRING, &suite },
		{ "json", 0, OPT_BOOL, &as_json },
	};
	if (opt_parse(argc, argv, opts, ARRAY_SIZE(opts), &npos, err, sizeof(err))) {
		error("%s; 'cutegen help tasks' lists the options", err);
		return EXIT_USAGE;
	}
	if (npos) {
		error("'cutegen tasks' takes no arguments (got '%s'); use 'cutegen task show %s'",
		      argv[1], argv[1]);
		return EXIT_USAGE;
	}
	const char *const *names;
	if (suite && suite_tasks(suite, &names) < 0 && task_spec_is_dir(suite))
		return list_module_dir(suite, as_json);
	if (suite && suite_tasks(suite, &names) < 0) {
		struct strbuf all = STRBUF_INIT;
		for (int i = 0; builtin_suites[i]; i++)
			strbuf_addf(&all, "%s%s", i ? ", " : "", builtin_suites[i]);
		error("no suite '%s' (suites: %s, or a directory of module files)", suite, all.buf);
		strbuf_release(&all);
		return EXIT_USAGE;
	}

	/* rows: name, op, dtype, precision, shape */
	enum { NCOL = 5 };
	static const char *const head[NCOL] = { "NAME", "OP", "DTYPE", "PRECISION", "SHAPE" };
	char **cells = NULL;
	size_t nrows = 0, alloc = 0;
	int width[NCOL];
	json_t *arr = json_array();
	for (int c = 0; c < NCOL; c++)
		width[c] = (int)strlen(head[c]);
	for (int s = 0; builtin_suites[s]; s++) {
		if (suite && strcmp(suite, builtin_suites[s]))
			continue;
		int n = suite_tasks(builtin_suites[s], &names);
		for (int i = 0; i < n; i++) {
			const struct task *t = task_builtin(names[i]);
			if (!t)
				BUG("built-in task '%s' not found", names[i]);
			if (as_json) {
				json_array_append_new(arr, task_row_json(builtin_suites[s], t));
				continue;
			}
			struct strbuf shape = STRBUF_INIT;
			task_shape_summary(t, &shape);
			ALLOC_GROW(cells, (nrows + 1) * NCOL, alloc);
			char **row = &cells[nrows++ * NCOL];
			row[0] = xstrdup(t->name);
			row[1] = op_summary(t);
			row[2] = dtype_summary(t);
			row[3] = xstrdup(precision_name(t->precision));
			row[4] = strbuf_detach(&shape, NULL);
			for (int c = 0; c < NCOL; c++)
				if ((int)strlen(row[c]) > width[c])
					width[c] = (int)strlen(row[c]);
		}
	}
	if (as_json) {
		char *s = json_dumps(arr, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
		puts(s);
		free(s);
		goto out;
	}
	for (size_t r = 0; r <= nrows; r++) {
		const char *const *row = r ? (const char *const *)&cells[(r - 1) * NCOL] : head;
		for (int c = 0; c < NCOL - 1; c++)
			printf("%-*s  ", width[c], row[c]);
		printf("%s\n", row[NCOL - 1]);
	}
	if (!suite)
		print_module_suites();
out:
	for (size_t i = 0; i < nrows * NCOL; i++)
		free(cells[i]);
	free(cells);
	json_decref(arr);
	return rc;
}

/* "134.2 GFLOP", "6.44 GB" */
static void print_si(const char *label, double v, const char *unit)
{
	static const char *const pre[] = { "", "k", "M", "G", "T", "P" };
	int p = 0;
	while (v >= 1000 && p < 5) {
		v /= 1000;
		p++;
	}
	printf("%-12s%.4g %s%s\n", label, v, pre[p], unit);
}

static void print_task(const struct task *t)
{
	struct strbuf sb = STRBUF_INIT;
	task_shape_summary(t, &sb);
	printf("%-12s%s\n", "task", t->name);
	if (t->description[0])
		printf("%-12s%s\n", "description", t->description);
	if (t->op == OP_ELEMENTWISE)
		printf("%-12s%s, activation %s (workload %s)\n", "op", op_name(t->op), act_name(t->act),
		       task_workload(t));
	else
		printf("%-12s%s (workload %s)\n", "op", op_name(t->op), task_workload(t));
	printf("%-12s%s in, %s out, precision %s\n", "dtype", dtype_name(t->in_dtype),
	       dtype_name(t->out_dtype), precision_name(t->precision));
	printf("%-12s%s\n", "sizes", sb.buf);

	struct tensor_spec ts[TASK_MAX_TENSORS];
	int n = task_tensors(t, ts);
	printf("tensors     (in ABI order, row-major contiguous)\n");
	for (int i = 0; i < n; i++) {
		strbuf_reset(&sb);
		for (int d = 0; d < ts[i].ndim; d++)
			strbuf_addf(&sb, "%s%lld", d ? ", " : "", (long long)ts[i].shape[d]);
		static const char *const st[] = { "", "symmetric", "upper triangular",
						   "lower triangular" };
		printf("  %-4s %-5s %-9s [%s]%s%s\n", ts[i].is_output ? "out" : "in", ts[i].name,
		       dtype_name(ts[i].dtype), sb.buf, ts[i].structure ? "  " : "",
		       st[ts[i].structure]);
	}
	double vals[TASK_MAX_SCALARS];
	const char *names[TASK_MAX_SCALARS];
	int ns = task_scalars(t, vals, names);
	printf("%-12s", "scalars");
	for (int i = 0; i < ns; i++)
		printf("%s%s = %g", i ? ", " : "", names[i], vals[i]);
	printf("%s\n", ns ? "" : "none");
	printf("%-12s", "inputs");
	for (int i = 0; i < t->n_dists; i++)
		printf("%s%s", i ? ", " : "", dist_name(t->dists[i]));
	printf("; %d seed%s each\n", t->seeds, t->seeds == 1 ? "" : "s");
	printf("%-12s", "tolerance");
	if (t->rtol < 0 && t->atol < 0)
		printf("the %s contract's defaults\n", precision_name(t->precision));
	else {
		if (t->rtol < 0)
			printf("rtol default");
		else
			printf("rtol %g", t->rtol);
		if (t->atol < 0)
			printf(", atol default\n");
		else
			printf(", atol %g\n", t->atol);
	}
	print_si("work", task_flops(t), "FLOP");
	print_si("traffic", task_min_bytes(t), "B (each input read once, each output written once)");
	strbuf_release(&sb);
}

static int task_show(int argc, char **argv)
{
	int as_json = 0, npos = 0;
	char err[256];
	struct opt opts[] = { { "json", 0, OPT_BOOL, &as_json } };
	if (opt_parse(argc, argv, opts, ARRAY_SIZE(opts), &npos, err, sizeof(err))) {
		error("%s; 'cutegen help task' lists the options", err);
		return EXIT_USAGE;
	}
	if (npos != 1) {
		error("'cutegen task show' takes one task name or file (got %d)", npos);
		return EXIT_USAGE;
	}
	char *msg = NULL;
	struct task *t = NULL;
	struct module_desc *md = NULL;
	int rc = task_resolve(argv[1], &t, &md, &msg);
	if (rc) {
		error("%s", msg);
		free(msg);
		return exit_status_for(rc);
	}
	if (md) {
		struct strbuf sb = STRBUF_INIT;
		if (as_json) {
			module_desc_to_json(md, &sb);
			fputs(sb.buf, stdout);
		} else {
			module_desc_format(md, &sb);
			fputs(sb.buf, stdout);
			if (t) {
				printf("\nthe built-in twin it is judged as:\n");
				print_task(t);
			}
		}
		strbuf_release(&sb);
		module_desc_free(md);
		task_free(t);
		return EXIT_OK;
	}
	if (as_json) {
		struct strbuf sb = STRBUF_INIT;
		task_to_json(t, &sb);
		fputs(sb.buf, stdout);
		strbuf_release(&sb);
	} else {
		print_task(t);
	}
	task_free(t);
	return EXIT_OK;
}

static int task_check(int argc, char **argv)
{
	int npos = 0, bad = 0, worst = EXIT_OK;
	char err[256];
	if (opt_parse(argc, argv, NULL, 0, &npos, err, sizeof(err))) {
		error("%s; 'cutegen help task' lists the options", err);
		return EXIT_USAGE;
	}
	if (!npos) {
		error("'cutegen task check' needs at least one task file");
		return EXIT_USAGE;
	}
	for (int i = 1; i <= npos; i++) {
		char *msg = NULL;
		struct task *t = NULL;
		struct module_desc *md = NULL;
		int rc = task_resolve(argv[i], &t, &md, &msg);
		if (rc) {
			fflush(stdout);
			error("%s", msg);
			free(msg);
			worst = worst == EXIT_OK || exit_status_for(rc) == EXIT_INPUT ? exit_status_for(rc) : worst;
			bad++;
			continue;
		}
		if (md && !t)
			printf("ok %s (module '%s', not lowered: %s)\n", argv[i], md->name,
			       md->lowered_why ? md->lowered_why : "no reason given");
		else if (md)
			printf("ok %s (module '%s', lowered to the built-in %s)\n", argv[i], md->name,
			       op_name(t->op));
		else
			printf("ok %s (task '%s', %s)\n", argv[i], t->name, op_name(t->op));
		module_desc_free(md);
		task_free(t);
	}
	return bad ? worst : EXIT_OK;
}

int cmd_task(int argc, char **argv)
{
	if (argc < 2) {
		error("'cutegen task' needs a subcommand: show or check ('cutegen help task')");
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "show"))
		return task_show(argc - 1, argv + 1);
	if (!strcmp(argv[1], "check"))
		return task_check(argc - 1, argv + 1);
	const char *subs[] = { "show", "check" }, *best[2];
	struct strbuf hint = STRBUF_INIT;
	suggest_format(&hint, "", best, suggest_similar(argv[1], subs, 2, best, 2));
	error("'%s' is not a 'cutegen task' subcommand%s; use show or check", argv[1], hint.buf);
	strbuf_release(&hint);
	return EXIT_USAGE;
}
