/*
 * `cutegen runs [DIR...] [--task T] [--status S] [--json]`: lists run directories (the DIRs
 * given, or ./runs when none is; a directory of runs is searched one level down) with their task,
 * status, node count, best speedup and start time. A directory that is not a readable run is
 * listed with its error, never skipped silently.
 */
#include "cmd/cutegen.h"
#include "store/history.h"
#include "util/fsutil.h"
#include "util/opt.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RUNS_MAX 10000

struct dirlist {
	char **v;
	size_t n, alloc;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* dir itself when it is a run, its runs/ when it is a suite directory (suite.db), else its
 * subdirectories that are runs (sorted). */
static void collect(struct dirlist *l, const char *dir, int explicit)
{
	char *suite_db = xasprintf("%s/suite.db", dir), *suite_runs = xasprintf("%s/runs", dir);
	int is_suite = file_exists(suite_db) && dir_exists(suite_runs);
	free(suite_db);
	if (is_suite) { /* a suite directory: its runs are under runs/ */
		collect(l, suite_runs, 0);
		free(suite_runs);
		return;
	}
	free(suite_runs);
	if (history_is_run_dir(dir) || (explicit && !dir_exists(dir))) {
		ALLOC_GROW(l->v, l->n + 1, l->alloc);
		l->v[l->n++] = xstrdup(dir);
		return;
	}
	DIR *d = opendir(dir);
	if (!d)
		return;
	size_t first = l->n;
	struct dirent *e;
	while ((e = readdir(d)) && l->n < RUNS_MAX) {
		if (e->d_name[0] == '.')
			continue;
		char *p = xasprintf("%s/%s", dir, e->d_name);
		if (dir_exists(p) && (history_is_run_dir(p) || explicit)) {
			ALLOC_GROW(l->v, l->n + 1, l->alloc);
			l->v[l->n++] = p;
		} else {
			free(p);
		}
	}
	closedir(d);
	if (l->n > first) /* l->v is NULL when nothing was found: qsort(NULL, 0) is undefined */
		qsort(l->v + first, l->n - first, sizeof(char *), cmp_str);
}

static void fmt_time(double t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;
	if (t <= 0 || !localtime_r(&tt, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M", &tm))
		snprintf(buf, len, "-");
}

int cmd_runs(int argc, char **argv)
{
	const char *task = NULL, *status = NULL;
	int json = 0, npos = 0;
	struct opt opts[] = {
		{ "task", 0, OPT_STRING, &task },
		{ "status", 0, OPT_STRING, &status },
		{ "json", 0, OPT_BOOL, &json },
	};
	char oerr[256];
	if (opt_parse(argc, argv, opts, 3, &npos, oerr, sizeof(oerr))) {
		error("%s; see 'cutegen help runs'", oerr);
		return EXIT_USAGE;
	}
	static const char *const statuses[] = { "running", "done", "stopped", "failed",
						"interrupted" };
	if (status) {
		size_t k = 0;
		while (k < ARRAY_SIZE(statuses) && strcmp(statuses[k], status))
			k++;
		if (k == ARRAY_SIZE(statuses)) {
			error("--status '%s' is not a run status; use one of running, done, stopped, "
			      "failed, interrupted", status);
			return EXIT_USAGE;
		}
	}
	struct dirlist l = { 0 };
	int empty = 0;
	/* the directories given, or ./runs when none is: never both, so `runs DIR` lists DIR */
	if (!npos && dir_exists("runs"))
		collect(&l, "runs", 0);
	for (int i = 1; i <= npos; i++) {
		size_t before = l.n;
		collect(&l, argv[i], 1);
		if (l.n == before) {
			error("'%s' holds no run (no run.db in it or in its subdirectories)", argv[i]);
			empty++;
		}
	}
	json_t *arr = json_array();
	int shown = 0, bad = 0;
	for (size_t i = 0; i < l.n; i++) {
		struct run_history h;
		char *err = NULL;
		if (history_load(&h, l.v[i], &err)) {
			bad++;
			if (json)
				json_array_append_new(arr, json_pack("{s:s, s:s}", "dir", l.v[i], "error",
								     err));
			else
				error("%s", err);
			free(err);
			history_release(&h);
			continue;
		}
		if ((task && (!h.run.task_name || !strstr(h.run.task_name, task))) ||
		    (status && (!h.run.status || strcmp(h.run.status, status)))) {
			history_release(&h);
			continue;
		}
		if (!json && !shown)
			printf("%-40s %-24s %-11s %5s %8s  %s\n", "RUN", "TASK", "STATUS", "NODES",
			       "BEST", "STARTED");
		shown++;
		if (json) {
			json_t *o = history_to_json(&h);
			json_object_del(o, "nodes");
			json_object_set_new(o, "nodes", json_integer((json_int_t)h.n));
			json_array_append_new(arr, o);
		} else {
			char t[32], best[32];
			fmt_time(h.run.started, t, sizeof(t));
			if (h.speedup >= 0)
				snprintf(best, sizeof(best), "%.2fx", h.speedup);
			else
				snprintf(best, sizeof(best), "%s", h.best ? "?" : "-");
			printf("%-40.200s %-24.200s %-11.40s %5zu %8s  %s\n", l.v[i],
			       h.run.task_name ? h.run.task_name : "?",
			       h.run.status ? h.run.status : "?", h.n, best, t);
		}
		history_release(&h);
	}
	if (json) {
		char *s = json_dumps(arr, JSON_INDENT(2));
		printf("%s\n", s ? s : "[]");
		free(s);
	} else if (!shown && !bad && !empty) {
		if (status || task)
			printf("no runs match (%d looked at)\n", (int)l.n);
		else
			printf("no runs found in ./runs; give a run directory, or a directory of runs\n");
	}
	json_decref(arr);
	for (size_t i = 0; i < l.n; i++)
		free(l.v[i]);
	free(l.v);
	return bad || empty ? EXIT_INPUT : EXIT_OK;
}
