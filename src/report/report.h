/*
 * Rendering runs for people: the terminal history table (`cutegen show`), the self-contained
 * HTML page with SVG charts and the Markdown summary (`cutegen report`), for one run or a
 * suite of runs. Inputs come from run stores (history.h) and are untrusted: every string is
 * escaped for its target (HTML entities; control characters removed for terminals and
 * Markdown) and cut to a cap. Not for: reading the store (history.c) or exporting (export.c).
 *
 * Every function appends to out (a caller-owned strbuf) and never prints.
 */
#ifndef CUTEGEN_REPORT_H
#define CUTEGEN_REPORT_H

#include "store/history.h"
#include "util/strbuf.h"

/* Appends s with &<>"' escaped, at most max bytes of it (then "..."); NULL appends nothing. */
void report_html_escape(struct strbuf *out, const char *s, size_t max);
/* Appends s for a terminal or a Markdown table: control characters and '|' become spaces,
 * at most max bytes (then "..."). */
void report_text_clean(struct strbuf *out, const char *s, size_t max);
/* Appends CUDA C++ source as HTML with <span class="kw|cm|st|nu|pp"> around keywords,
 * comments, strings, numbers and preprocessor lines; everything escaped. */
void report_highlight_cuda(struct strbuf *out, const char *src);

/* The history table and totals, as `cutegen show` prints them. */
void report_show_text(struct strbuf *out, const struct run_history *h);
/* The HTML page of one run (the embedded skeleton report/report.html filled in). */
void report_run_html(struct strbuf *out, const struct run_history *h);
void report_run_markdown(struct strbuf *out, const struct run_history *h);

/*
 * One task of a suite, counted once however often it was attempted: its (final) run, or why
 * there is none, and what the suite store says of it. Nothing here is owned by the report.
 */
struct report_task {
	const struct run_history *run; /* NULL when there is no readable run */
	const char *name;    /* the task, shown when run is NULL (a spec or a directory) */
	const char *error;   /* why run is NULL: an unreadable store, no run directory */
	const char *status;  /* the suite's status for it (done, failed...), NULL outside a suite */
	const char *message; /* the suite's note on it (why it failed), or NULL */
	int attempts;        /* how many times it was started; 0 unknown */
};

/*
 * Why a task has no correct kernel, in a line (appended to out): the suite's message, else the
 * run's stop reason and its last failed node's verdict and message, else the error. With a
 * correct kernel, nothing, unless the suite marked the task failed (stopped before its end):
 * then its message and that the figures are the best kernel's before the stop.
 */
void report_task_why(struct strbuf *out, const struct report_task *t);

/* A suite's page and summary: a row per task (with why it failed), geomeans, fast_p. */
void report_suite_html(struct strbuf *out, const char *suite_dir, const struct report_task *t,
		       size_t n);
void report_suite_markdown(struct strbuf *out, const char *suite_dir,
			   const struct report_task *t, size_t n);

/* fast_p: the share of runs with a correct kernel at least p times as fast as the baseline
 * (speedup > p; p = 0 counts every correct kernel). speedups[i] < 0 = no correct kernel. */
double report_fast_p(const double *speedups, size_t n, double p);

#endif
