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

/* A suite: runs[i] loaded, or NULL with errs[i] saying why it could not be read. */
void report_suite_html(struct strbuf *out, const char *suite_dir, struct run_history **runs,
		       char **errs, size_t n);
void report_suite_markdown(struct strbuf *out, const char *suite_dir, struct run_history **runs,
			   char **errs, size_t n);

/* fast_p: the share of runs with a correct kernel at least p times as fast as the baseline
 * (speedup > p; p = 0 counts every correct kernel). speedups[i] < 0 = no correct kernel. */
double report_fast_p(const double *speedups, size_t n, double p);

#endif
