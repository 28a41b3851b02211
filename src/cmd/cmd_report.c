/*
 * `cutegen report RUN_OR_SUITE_DIR [--html OUT.html] [--md OUT.md]`: one self-contained HTML
 * page (inline CSS, SVG charts, no JavaScript) and/or a Markdown summary of a run, or of a
 * suite (what `cutegen suite` wrote: suite.db and runs/, or any directory of run directories;
 * each task counts once). With neither flag, prints the Markdown.
 * docs/report.md describes the page.
 */
#include "cmd/cutegen.h"
#include "store/history.h"
#include "report/report.h"
#include "suite/suite_store.h"
#include "util/fsutil.h"
#include "util/opt.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SUITE_MAX_RUNS 5000

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int write_out(const char *path, const struct strbuf *sb)
{
	if (write_file_atomic(path, sb->buf, sb->len)) {
		error("cannot write '%s': %s", path, strerror(errno));
		return EXIT_ENV;
	}
	return EXIT_OK;
}

/* "NNN-name.attempt-K" -> K (and the length of "NNN-name" in *base); 0 when not so named. */
static int attempt_of(const char *name, size_t *base)
{
	const char *p = strstr(name, ".attempt-");
	if (!p || !p[9])
		return 0;
	char *end;
	long k = strtol(p + 9, &end, 10);
	if (*end || k < 1 || k > 1000000)
		return 0;
	*base = (size_t)(p - name);
	return (int)k;
}

/*
 * The subdirectories of dir holding a run.db, sorted; NULL when there are none. A suite keeps
 * a retried task's earlier attempts beside it as NAME.attempt-K: each task counts once, by
 * NAME (its final attempt), or by its highest K when NAME itself is missing.
 */
static char **suite_dirs(const char *dir, size_t *n)
{
	char **v = NULL;
	size_t alloc = 0;
	*n = 0;
	DIR *d = opendir(dir);
	if (!d)
		return NULL;
	struct dirent *e;
	while ((e = readdir(d)) && *n < SUITE_MAX_RUNS) {
		if (e->d_name[0] == '.')
			continue;
		char *p = xasprintf("%s/%s", dir, e->d_name);
		if (dir_exists(p) && history_is_run_dir(p)) {
			ALLOC_GROW(v, *n + 1, alloc);
			v[(*n)++] = p;
		} else {
			free(p);
		}
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(char *), cmp_str);
	size_t dl = strlen(dir) + 1, kept = 0;
	for (size_t i = 0; i < *n; i++) {
		size_t base, obase;
		int k = attempt_of(v[i] + dl, &base);
		int superseded = 0;
		for (size_t j = 0; k && j < *n && !superseded; j++) {
			if (j == i || strncmp(v[j] + dl, v[i] + dl, base))
				continue;
			const char *other = v[j] + dl;
			int ok = attempt_of(other, &obase);
			/* the final attempt (NAME itself), or a later NAME.attempt-K' */
			superseded = (!other[base] && !ok) || (ok && obase == base && ok > k);
		}
		if (superseded)
			free(v[i]);
		else
			v[kept++] = v[i];
	}
	*n = kept;
	return v;
}

/* Loads the run in dir into *h (heap); NULL with *err when it cannot be read. */
static struct run_history *load_run(const char *dir, char **err)
{
	struct run_history *h = xcalloc(1, sizeof(*h));
	if (history_load(h, dir, err)) {
		warning("%s", *err);
		history_release(h);
		free(h);
		return NULL;
	}
	return h;
}

/*
 * A suite directory (suite.db + runs/): one task per row of suite.db, with the suite's status,
 * attempts and message, and its run when the run directory holds one. -1 when suite.db cannot
 * be read (printed).
 */
static int suite_tasks_of(const char *dir, struct report_task **out, size_t *n,
			  struct suite_task **rows, size_t *nrows)
{
	char *err = NULL;
	struct suite_store *ss = suite_open(dir, &err);
	if (!ss || suite_rows(ss, rows, nrows, &err)) {
		error("cannot read the suite in '%s': %s", dir, err ? err : "?");
		free(err);
		suite_close(ss);
		return -1;
	}
	suite_close(ss);
	struct report_task *t = xcalloc(*nrows ? *nrows : 1, sizeof(*t));
	for (size_t i = 0; i < *nrows; i++) {
		struct suite_task *r = &(*rows)[i];
		t[i].name = r->spec;
		t[i].status = r->status;
		t[i].attempts = r->attempts;
		t[i].message = r->status && strcmp(r->status, "done") ? r->message : NULL;
		/* the row names SUITE_DIR/runs/NNN-name as the suite was given it (maybe relative
		 * to another directory): the run is looked for under the directory given here */
		const char *base = r->run_dir ? strrchr(r->run_dir, '/') : NULL;
		char *rd = r->run_dir ? xasprintf("%s/runs/%s", dir, base ? base + 1 : r->run_dir)
				      : NULL;
		if (rd && history_is_run_dir(rd)) {
			char *lerr = NULL;
			t[i].run = load_run(rd, &lerr);
			t[i].error = lerr; /* freed by the caller */
		} else {
			t[i].error = xstrdup(r->status && !strcmp(r->status, "pending")
					     ? "not run yet" : "no run directory (the run never started)");
		}
		free(rd);
	}
	*out = t;
	*n = *nrows;
	return 0;
}

int cmd_report(int argc, char **argv)
{
	const char *html = NULL, *md = NULL;
	int npos = 0, rc = EXIT_OK;
	struct opt opts[] = {
		{ "html", 0, OPT_STRING, &html },
		{ "md", 0, OPT_STRING, &md },
	};
	char oerr[256];
	if (opt_parse(argc, argv, opts, 2, &npos, oerr, sizeof(oerr))) {
		error("%s; see 'cutegen help report'", oerr);
		return EXIT_USAGE;
	}
	if (npos != 1) {
		error("usage: cutegen report RUN_OR_SUITE_DIR [--html OUT.html] [--md OUT.md]");
		return EXIT_USAGE;
	}
	const char *dir = argv[1];
	struct strbuf h_out = STRBUF_INIT, m_out = STRBUF_INIT;
	if (!dir_exists(dir)) {
		error("'%s' is not a directory: give a run directory (holding run.db) or a suite "
		      "directory (holding run directories)", dir);
		return EXIT_INPUT;
	}
	if (history_is_run_dir(dir)) {
		struct run_history h;
		char *err = NULL;
		if (history_load(&h, dir, &err)) {
			error("%s", err);
			free(err);
			history_release(&h);
			return EXIT_INPUT;
		}
		if (html)
			report_run_html(&h_out, &h);
		report_run_markdown(&m_out, &h);
		history_release(&h);
	} else {
		/* a suite directory (suite.db, runs under runs/), or a directory of runs */
		char *sdb = xasprintf("%s/suite.db", dir);
		int is_suite = file_exists(sdb);
		free(sdb);
		struct report_task *t = NULL;
		struct suite_task *rows = NULL;
		size_t n = 0, nrows = 0;
		char **dirs = NULL;
		if (is_suite) {
			if (suite_tasks_of(dir, &t, &n, &rows, &nrows))
				return EXIT_INPUT;
		} else {
			dirs = suite_dirs(dir, &n);
			t = xcalloc(n ? n : 1, sizeof(*t));
			for (size_t i = 0; i < n; i++) {
				char *lerr = NULL;
				t[i].name = dirs[i];
				t[i].run = load_run(dirs[i], &lerr);
				t[i].error = lerr;
			}
		}
		if (!n) {
			error("'%s' holds no run (no run.db) and no run directories: give the directory "
			      "`cutegen run --out` wrote, one that holds several, or a suite directory",
			      dir);
			free(t);
			suite_rows_free(rows, nrows);
			return EXIT_INPUT;
		}
		if (html)
			report_suite_html(&h_out, dir, t, n);
		report_suite_markdown(&m_out, dir, t, n);
		for (size_t i = 0; i < n; i++) {
			if (t[i].run)
				history_release((struct run_history *)t[i].run);
			free((void *)t[i].run);
			free((char *)t[i].error);
			if (dirs)
				free(dirs[i]);
		}
		free(t);
		free(dirs);
		suite_rows_free(rows, nrows);
	}
	if (html)
		rc = write_out(html, &h_out);
	if (!rc && md)
		rc = write_out(md, &m_out);
	if (!rc && !html && !md)
		fwrite(m_out.buf, 1, m_out.len, stdout);
	strbuf_release(&h_out);
	strbuf_release(&m_out);
	return rc;
}
