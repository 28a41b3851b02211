/*
 * `cutegen report RUN_OR_SUITE_DIR [--html OUT.html] [--md OUT.md]`: one self-contained HTML
 * page (inline CSS, SVG charts, no JavaScript) and/or a Markdown summary of a run, or of a
 * suite (a directory of run directories). With neither flag, prints the Markdown.
 * docs/report.md describes the page.
 */
#include "cmd/cutegen.h"
#include "store/history.h"
#include "report/report.h"
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

/* The subdirectories of dir holding a run.db, sorted; NULL when there are none. */
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
	return v;
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
		size_t n = 0;
		char **dirs = suite_dirs(dir, &n);
		if (!n) {
			error("'%s' holds no run (no run.db) and no run directories: give the directory "
			      "`cutegen run --out` wrote, or one that holds several", dir);
			return EXIT_INPUT;
		}
		struct run_history **runs = xcalloc(n, sizeof(*runs));
		char **errs = xcalloc(n, sizeof(*errs));
		for (size_t i = 0; i < n; i++) {
			runs[i] = xcalloc(1, sizeof(struct run_history));
			if (history_load(runs[i], dirs[i], &errs[i])) {
				warning("%s", errs[i]);
				history_release(runs[i]);
				free(runs[i]);
				runs[i] = NULL;
			}
		}
		if (html)
			report_suite_html(&h_out, dir, runs, errs, n);
		report_suite_markdown(&m_out, dir, runs, errs, n);
		for (size_t i = 0; i < n; i++) {
			if (runs[i])
				history_release(runs[i]);
			free(runs[i]);
			free(errs[i]);
			free(dirs[i]);
		}
		free(runs);
		free(errs);
		free(dirs);
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
