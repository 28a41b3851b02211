/*
 * Rendering of runs and suites (see report.h). The charts are SVG written here, with one
 * element per plotted node carrying the node's value in data-* attributes and a <title>, so
 * a test (and a reader hovering a point) can check every number against the store.
 */
#include "report/report.h"
#include "common/embedded.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CAP_LINE 300     /* a message or change line in a table */
#define CAP_TEXT 65536   /* the stop reason, the profile summary */

void report_html_escape(struct strbuf *out, const char *s, size_t max)
{
	if (!s)
		return;
	size_t i = 0;
	for (; s[i] && i < max; i++) {
		switch (s[i]) {
		case '&': strbuf_addstr(out, "&amp;"); break;
		case '<': strbuf_addstr(out, "&lt;"); break;
		case '>': strbuf_addstr(out, "&gt;"); break;
		case '"': strbuf_addstr(out, "&quot;"); break;
		case '\'': strbuf_addstr(out, "&#39;"); break;
		default:
			if ((unsigned char)s[i] < 0x20 && s[i] != '\n' && s[i] != '\t')
				strbuf_addch(out, ' ');
			else
				strbuf_addch(out, s[i]);
		}
	}
	if (s[i])
		strbuf_addstr(out, "...");
}

void report_text_clean(struct strbuf *out, const char *s, size_t max)
{
	if (!s)
		return;
	size_t i = 0;
	for (; s[i] && i < max; i++) {
		unsigned char c = (unsigned char)s[i];
		strbuf_addch(out, c < 0x20 || c == 0x7f || c == '|' ? ' ' : c);
	}
	if (s[i])
		strbuf_addstr(out, "...");
}

/*
 * s cut for a table cell, heap: whole when it fits in max bytes; else up to its last whole
 * word that fits, then ell. A message of NODE_MESSAGE_MAX bytes or more that does not end in
 * "..." was cut when it was stored (older cutegens cut mid-word): its last word goes too.
 */
static char *clip_words(const char *s, size_t max, const char *ell)
{
	size_t n = strlen(s);
	int cut_stored = n >= NODE_MESSAGE_MAX && !(n >= 3 && !strcmp(s + n - 3, "..."));
	if (n <= max && !cut_stored)
		return xstrdup(s);
	size_t k = n < max ? n : max, j = k;
	if (!(j < n && s[j] == ' '))
		while (j > 0 && s[j] != ' ')
			j--;
	if (j < k / 2)
		j = k; /* one long word: cut it */
	while (j > 0 && (s[j - 1] == ' ' || s[j - 1] == ',' || s[j - 1] == ';' || s[j - 1] == ':'))
		j--;
	return xasprintf("%.*s%s", (int)j, s, ell);
}

/* ---- syntax highlighting ---- */

static const char *const cuda_keywords[] = {
	"auto", "bool", "break", "case", "char", "const", "constexpr", "continue", "default",
	"do", "double", "else", "enum", "extern", "false", "float", "for", "if", "inline", "int",
	"long", "namespace", "nullptr", "return", "short", "signed", "size_t", "sizeof", "static",
	"static_assert", "struct", "switch", "template", "true", "typedef", "typename", "unsigned",
	"using", "void", "volatile", "while", "class", "public", "private", "decltype", "int64_t",
	"int32_t", "uint32_t", "uint64_t", "__global__", "__device__", "__host__", "__shared__",
	"__forceinline__", "__restrict__", "__syncthreads", "CUTE_STATIC_ASSERT_V",
	"CUTE_UNROLL", "CUTEGEN_KERNEL", "CUTEGEN_DECLARE_ABI", NULL,
};

static int is_keyword(const char *s, size_t n)
{
	for (const char *const *k = cuda_keywords; *k; k++)
		if (strlen(*k) == n && !memcmp(*k, s, n))
			return 1;
	return 0;
}

static void span(struct strbuf *out, const char *cls, const char *s, size_t n)
{
	char *t = xstrndup(s, n);
	strbuf_addf(out, "<span class=\"%s\">", cls);
	report_html_escape(out, t, n);
	strbuf_addstr(out, "</span>");
	free(t);
}

void report_highlight_cuda(struct strbuf *out, const char *src)
{
	const char *p = src;
	int line_start = 1;
	while (*p) {
		const char *q = p;
		if (line_start && (*p == ' ' || *p == '\t')) {
			strbuf_addch(out, *p++);
			continue;
		}
		if (line_start && *p == '#') {
			while (*q && *q != '\n')
				q++;
			span(out, "pp", p, (size_t)(q - p));
		} else if (p[0] == '/' && p[1] == '/') {
			while (*q && *q != '\n')
				q++;
			span(out, "cm", p, (size_t)(q - p));
		} else if (p[0] == '/' && p[1] == '*') {
			const char *e = strstr(p + 2, "*/");
			q = e ? e + 2 : p + strlen(p);
			span(out, "cm", p, (size_t)(q - p));
		} else if (*p == '"' || *p == '\'') {
			char quote = *p;
			q = p + 1;
			while (*q && *q != quote && *q != '\n') {
				if (*q == '\\' && q[1])
					q++;
				q++;
			}
			if (*q == quote)
				q++;
			span(out, "st", p, (size_t)(q - p));
		} else if (isdigit((unsigned char)*p) ||
			   (*p == '.' && isdigit((unsigned char)p[1]))) {
			while (isalnum((unsigned char)*q) || *q == '.' || *q == '_' ||
			       ((*q == '+' || *q == '-') && (q[-1] == 'e' || q[-1] == 'E') &&
				!(p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))))
				q++;
			span(out, "nu", p, (size_t)(q - p));
		} else if (isalpha((unsigned char)*p) || *p == '_') {
			while (isalnum((unsigned char)*q) || *q == '_')
				q++;
			if (is_keyword(p, (size_t)(q - p))) {
				span(out, "kw", p, (size_t)(q - p));
			} else {
				char *t = xstrndup(p, (size_t)(q - p));
				report_html_escape(out, t, (size_t)-1);
				free(t);
			}
		} else {
			char c[2] = { *p, 0 };
			report_html_escape(out, c, 1);
			q = p + 1;
		}
		line_start = q > p && q[-1] == '\n';
		p = q;
		if (*p == '\n') {
			strbuf_addch(out, '\n');
			p++;
			line_start = 1;
		}
	}
}

/* ---- terminal ---- */

static void fmt_num(char *buf, size_t len, const char *fmt, double v)
{
	if (v < 0 || !isfinite(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, fmt, v);
}

/* "done (the reason)": the run's status and why it stopped, cleaned for the terminal. */
static void add_status(struct strbuf *out, const struct run_history *h)
{
	report_text_clean(out, h->run.status, 40);
	if (h->run.stop_reason) {
		strbuf_addstr(out, " (");
		report_text_clean(out, h->run.stop_reason, CAP_LINE);
		strbuf_addch(out, ')');
	}
}

/* `cutegen run --torch`'s figures in a line or two (terminal and Markdown). */
static void report_torch_text(struct strbuf *out, const struct store_torch *t)
{
	strbuf_addstr(out, "PyTorch: ");
	if (t->speedup_eager > 0) {
		strbuf_addf(out, "eager %.4g ms, speedup %.3fx", t->eager_ms, t->speedup_eager);
		if (t->torch[0]) {
			strbuf_addstr(out, " (torch ");
			report_text_clean(out, t->torch, 32);
			strbuf_addstr(out, ")");
		}
	} else {
		strbuf_addstr(out, "no eager figure: ");
		report_text_clean(out, t->error, CAP_LINE);
	}
	if (t->speedup_compile > 0) {
		strbuf_addf(out, "; torch.compile %.4g ms", t->compile_ms);
		if (t->compile_mode[0]) {
			strbuf_addstr(out, " (");
			report_text_clean(out, t->compile_mode, 32);
			strbuf_addstr(out, ")");
		}
		strbuf_addf(out, ", speedup %.3fx\n", t->speedup_compile);
	} else if (strcmp(t->compile_error, t->error)) {
		strbuf_addstr(out, "; torch.compile failed: ");
		report_text_clean(out, t->compile_error, CAP_LINE);
		strbuf_addstr(out, "\n");
	} else {
		strbuf_addstr(out, "\n");
	}
}

void report_show_text(struct strbuf *out, const struct run_history *h)
{
	strbuf_addstr(out, "run ");
	report_text_clean(out, h->dir, 1000);
	strbuf_addstr(out, ": task ");
	report_text_clean(out, h->run.task_name, 200);
	strbuf_addstr(out, ", status ");
	add_status(out, h);
	strbuf_addf(out, "\n\n%4s %4s %5s %-8s %-14s %-11s %8s %9s %8s %8s  %s\n", "NODE", "ITER",
		    "STAGE", "KIND", "VERDICT", "OUTCOME", "TIME_S", "MS", "SPEEDUP", "ROOFLINE",
		    "CHANGE");
	for (size_t i = 0; i < h->n; i++) {
		const struct store_node *x = &h->nodes[i];
		char t[32], ms[32], sp[32], rf[32];
		fmt_num(t, sizeof(t), "%.1f", x->total_s);
		fmt_num(ms, sizeof(ms), "%.4g", x->ms);
		fmt_num(sp, sizeof(sp), "%.3gx", x->speedup);
		fmt_num(rf, sizeof(rf), "%.2f", x->roofline_fraction);
		struct strbuf kind = STRBUF_INIT, verdict = STRBUF_INIT, outcome = STRBUF_INIT;
		report_text_clean(&kind, x->kind, 8);
		report_text_clean(&verdict, x->verdict, 14);
		report_text_clean(&outcome, x->outcome, 11);
		strbuf_addf(out, "%4ld %4d %5d %-8s %-14s %-11s %8s %9s %8s %8s  ", x->id, x->iteration,
			    x->stage, kind.buf, verdict.buf, outcome.buf, t, ms, sp, rf);
		char *line = clip_words(x->change ? x->change : (x->message ? x->message : ""),
					CAP_LINE, "...");
		report_text_clean(out, line, CAP_LINE + 3);
		free(line);
		strbuf_addch(out, '\n');
		strbuf_release(&kind);
		strbuf_release(&verdict);
		strbuf_release(&outcome);
	}
	if (!h->n)
		strbuf_addstr(out, "(no nodes yet)\n");
	strbuf_addf(out, "\n%zu nodes, %ld passed; best: ", h->n, h->passed);
	if (h->best_node) {
		char sp[32], rf[32];
		fmt_num(sp, sizeof(sp), "%.3gx", h->speedup);
		fmt_num(rf, sizeof(rf), "%.2f", h->roofline_fraction);
		strbuf_addf(out, "node %ld, speedup %s, roofline fraction %s\n", h->best, sp, rf);
	} else {
		strbuf_addstr(out, "none (no correct kernel)\n");
	}
	if (h->torch.asked)
		report_torch_text(out, &h->torch);
	strbuf_addf(out, "tokens: %ld in, %ld out; cost $%.4f\n", h->tokens_in, h->tokens_out,
		    h->cost_usd);
	double other = h->total_s - h->llm_s - h->compile_s - h->eval_s - h->profile_s;
	strbuf_addf(out, "time: %.1f s total = model %.1f s + compile %.1f s", h->total_s, h->llm_s,
		    h->compile_s - h->compile_ahead_s);
	if (h->compile_ahead_s > 0)
		strbuf_addf(out, " + compile (ahead, parallel) %.1f s", h->compile_ahead_s);
	strbuf_addf(out, " + evaluate %.1f s + profile %.1f s + other %.1f s\n", h->eval_s,
		    h->profile_s, other > 0 ? other : 0);
	if (h->cut_s > 0)
		strbuf_addf(out, "(%.1f s of it in work an environment error cut short: no node above "
			    "holds it)\n", h->cut_s);
}

/* ---- charts ---- */

#define CW 960.0
#define CH 300.0
#define ML 62.0
#define MR 20.0
#define MT 20.0
#define MB 40.0

static double xpos(size_t i, size_t n)
{
	return n <= 1 ? ML + (CW - ML - MR) / 2 : ML + (CW - ML - MR) * (double)i / (double)(n - 1);
}

/* A node the agent kept as its new best. */
static int is_best(const struct store_node *x)
{
	return x->outcome && !strcmp(x->outcome, "best");
}

/*
 * The speedup and roofline fraction of each passing node, with stage boundaries. Each measured
 * node is a point (a hollow one when the agent did not keep it); the lines join only the best
 * so far, as a step at each new best, so a rolled-back node is a point off the line. The
 * roofline fraction is drawn first, as a wide pale band with rings, and the speedup over it,
 * thin with dots: when the two are equal both stay visible.
 */
static void chart_speedup(struct strbuf *out, const struct run_history *h)
{
	double ymax = 1.0;
	for (size_t i = 0; i < h->n; i++) {
		double s = h->nodes[i].speedup, r = h->nodes[i].roofline_fraction;
		if (s > ymax && isfinite(s))
			ymax = s;
		if (r > ymax && isfinite(r))
			ymax = r;
	}
	ymax *= 1.1;
	double ph = CH - MT - MB;
#define YPOS(v) (MT + ph * (1.0 - (v) / ymax))
	strbuf_addf(out, "<svg id=\"chart-speedup\" xmlns=\"http://www.w3.org/2000/svg\" "
		    "width=\"%g\" height=\"%g\" viewBox=\"0 0 %g %g\" role=\"img\">\n", CW, CH, CW, CH);
	strbuf_addf(out, "<title>speedup and roofline fraction per node, and the best so far</title>\n");
	for (int t = 0; t <= 4; t++) {
		double v = ymax * t / 4, y = YPOS(v);
		strbuf_addf(out, "<line x1=\"%g\" y1=\"%.1f\" x2=\"%g\" y2=\"%.1f\" stroke=\"#eee\"/>"
			    "<text x=\"%g\" y=\"%.1f\" text-anchor=\"end\">%.2f</text>\n", ML, y, CW - MR,
			    y, ML - 5, y + 4, v);
	}
	strbuf_addf(out, "<line class=\"axis\" x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" "
		    "stroke=\"#666\"/><line class=\"axis\" x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\" "
		    "stroke=\"#666\"/>\n", ML, MT, ML, CH - MB, ML, CH - MB, CW - MR, CH - MB);
	/* y = 1: as fast as the baseline */
	strbuf_addf(out, "<line x1=\"%g\" y1=\"%.1f\" x2=\"%g\" y2=\"%.1f\" stroke=\"#999\" "
		    "stroke-dasharray=\"2,3\"/>\n", ML, YPOS(1.0), CW - MR, YPOS(1.0));
	for (size_t i = 1; i < h->n; i++)
		if (h->nodes[i].stage != h->nodes[i - 1].stage) {
			double x = (xpos(i - 1, h->n) + xpos(i, h->n)) / 2;
			strbuf_addf(out, "<line class=\"stage-boundary\" data-stage=\"%d\" x1=\"%.1f\" "
				    "y1=\"%g\" x2=\"%.1f\" y2=\"%g\" stroke=\"#c77\" "
				    "stroke-dasharray=\"4,3\"/><text x=\"%.1f\" y=\"%g\">stage %d</text>\n",
				    h->nodes[i].stage, x, MT, x, CH - MB, x + 3, MT + 10, h->nodes[i].stage);
		}
	for (int series = 1; series >= 0; series--) { /* roofline first, speedup over it */
		const char *color = series ? "#e08a00" : "#1f6fd1";
		const char *name = series ? "roofline" : "speedup";
		struct strbuf pts = STRBUF_INIT, vals = STRBUF_INIT;
		double cur = -1;
		for (size_t i = 0; i < h->n; i++) {
			const struct store_node *x = &h->nodes[i];
			double v = series ? x->roofline_fraction : x->speedup;
			if (is_best(x) && v >= 0 && isfinite(v)) {
				if (cur >= 0) /* the step up (or down) at the new best */
					strbuf_addf(&pts, "%.1f,%.1f ", xpos(i, h->n), YPOS(cur));
				cur = v;
			}
			if (cur >= 0)
				strbuf_addf(&pts, "%.1f,%.1f ", xpos(i, h->n), YPOS(cur));
			strbuf_addf(&vals, cur >= 0 ? "%s%.9g" : "%s-", i ? " " : "", cur);
		}
		if (pts.len)
			strbuf_addf(out, "<polyline class=\"best-so-far %s\" data-values=\"%s\" "
				    "fill=\"none\" stroke=\"%s\" stroke-width=\"%s\" stroke-opacity=\"%s\" "
				    "stroke-linejoin=\"round\" points=\"%s\"/>\n", name, vals.buf, color,
				    series ? "7" : "2", series ? "0.35" : "1", pts.buf);
		strbuf_release(&pts);
		strbuf_release(&vals);
		for (size_t i = 0; i < h->n; i++) {
			const struct store_node *x = &h->nodes[i];
			double v = series ? x->roofline_fraction : x->speedup;
			if (v < 0 || !isfinite(v))
				continue;
			const char *fill = series ? "none" : is_best(x) ? color : "#fff";
			strbuf_addf(out, "<circle class=\"point %s\" data-node=\"%ld\" data-%s=\"%.9g\" "
				    "data-outcome=\"", name, x->id, name, v);
			report_html_escape(out, x->outcome, 40);
			strbuf_addf(out, "\" cx=\"%.1f\" cy=\"%.1f\" r=\"%s\" fill=\"%s\" stroke=\"%s\" "
				    "stroke-width=\"2\"><title>node %ld: %s %.4g (", xpos(i, h->n), YPOS(v),
				    series ? "6.5" : "3.5", fill, color, x->id,
				    series ? "roofline fraction" : "speedup", v);
			report_html_escape(out, x->outcome, 40);
			strbuf_addstr(out, ")</title></circle>\n");
		}
	}
	for (size_t i = 0; i < h->n; i++)
		if (h->n <= 40 || i % (h->n / 20 + 1) == 0)
			strbuf_addf(out, "<text x=\"%.1f\" y=\"%g\" text-anchor=\"middle\">%ld</text>\n",
				    xpos(i, h->n), CH - MB + 15, h->nodes[i].id);
	strbuf_addf(out, "<text class=\"axis-label\" data-axis=\"x\" x=\"%g\" y=\"%g\" "
		    "text-anchor=\"middle\">node (in the order made)</text>\n",
		    ML + (CW - ML - MR) / 2, CH - 8);
	strbuf_addf(out, "<text class=\"axis-label\" data-axis=\"y\" x=\"0\" y=\"0\" "
		    "text-anchor=\"middle\" transform=\"translate(14 %g) rotate(-90)\">speedup (x), "
		    "roofline fraction</text>\n", MT + ph / 2);
	strbuf_addstr(out, "</svg>\n<p class=\"legend\"><span><i style=\"background:#1f6fd1\"></i>"
		      "speedup over the baseline (dots; the line: the best so far)</span><span><i "
		      "style=\"background:#e08a00;opacity:0.5\"></i>fraction of the roofline (rings; "
		      "the band: the best so far)</span><span><i style=\"background:#c77\"></i>stage "
		      "boundary</span><span class=\"muted\">hollow: a node not kept (slower, rolled "
		      "back); dotted: 1.0 (as fast as the baseline); only passing nodes have "
		      "values</span></p>\n");
#undef YPOS
}

static const struct {
	const char *verdict, *color;
} verdict_colors[] = {
	{ "pass", "#2e9d3e" }, { "compile_error", "#d64545" }, { "incorrect", "#e07b39" },
	{ "precision", "#e0a339" }, { "bad_reply", "#8c8c8c" }, { "policy", "#7a4fd1" },
	{ "timeout", "#a33" }, { "crash", "#611" }, { "cuda_error", "#b5346b" },
};

static const char *verdict_color(const char *v)
{
	for (size_t i = 0; i < sizeof(verdict_colors) / sizeof(verdict_colors[0]); i++)
		if (v && !strcmp(v, verdict_colors[i].verdict))
			return verdict_colors[i].color;
	return "#555";
}

static void chart_verdicts(struct strbuf *out, const struct run_history *h)
{
	double cell = h->n ? (CW - 20) / (double)h->n : 0, height = 36;
	if (cell > 40)
		cell = 40;
	strbuf_addf(out, "<svg id=\"chart-verdicts\" xmlns=\"http://www.w3.org/2000/svg\" "
		    "width=\"%g\" height=\"%g\" viewBox=\"0 0 %g %g\" role=\"img\">\n"
		    "<title>verdict of each node</title>\n", CW, height + 24, CW, height + 24);
	for (size_t i = 0; i < h->n; i++) {
		const struct store_node *x = &h->nodes[i];
		strbuf_addf(out, "<rect class=\"verdict\" data-node=\"%ld\" data-verdict=\"", x->id);
		report_html_escape(out, x->verdict, 40);
		strbuf_addf(out, "\" x=\"%.2f\" y=\"5\" width=\"%.2f\" height=\"%g\" fill=\"%s\" "
			    "stroke=\"#fff\"><title>node %ld: ", 10 + cell * (double)i, cell, height,
			    verdict_color(x->verdict), x->id);
		report_html_escape(out, x->verdict, 40);
		strbuf_addstr(out, ", ");
		report_html_escape(out, x->outcome, 40);
		strbuf_addstr(out, "</title></rect>\n");
	}
	/* node numbers under the cells, thinned out when they would crowd */
	size_t every = cell >= 14 ? 1 : (size_t)(14 / (cell > 0 ? cell : 1)) + 1;
	for (size_t i = 0; i < h->n; i += every)
		strbuf_addf(out, "<text x=\"%.2f\" y=\"%g\" text-anchor=\"middle\">%ld</text>\n",
			    10 + cell * ((double)i + 0.5), height + 18, h->nodes[i].id);
	strbuf_addstr(out, "</svg>\n<p class=\"legend\" id=\"verdict-legend\"><span class=\"muted\">"
		      "one cell per node, in order, colored by its verdict:</span>");
	/* legend: the verdicts that occur, in the order first seen */
	for (size_t i = 0; i < h->n; i++) {
		int seen = 0;
		for (size_t j = 0; j < i && !seen; j++)
			seen = h->nodes[j].verdict && h->nodes[i].verdict &&
			       !strcmp(h->nodes[j].verdict, h->nodes[i].verdict);
		if (seen)
			continue;
		strbuf_addstr(out, "<span class=\"verdict-key\" data-verdict=\"");
		report_html_escape(out, h->nodes[i].verdict ? h->nodes[i].verdict : "?", 40);
		strbuf_addf(out, "\"><i style=\"background:%s\"></i>",
			    verdict_color(h->nodes[i].verdict));
		report_html_escape(out, h->nodes[i].verdict ? h->nodes[i].verdict : "?", 40);
		strbuf_addstr(out, "</span>");
	}
	strbuf_addstr(out, "</p>\n");
}

/* ---- pages ---- */

static void fill_skeleton(struct strbuf *out, const char *title, const char *body)
{
	const struct embedded_file *f = embedded_find("report/report.html");
	const char *sk = f ? f->data : "<!DOCTYPE html><html><head><meta charset=\"utf-8\">"
				       "<title>{{TITLE}}</title></head><body>{{BODY}}</body></html>";
	const char *p = sk;
	for (;;) {
		const char *a = strstr(p, "{{TITLE}}"), *b = strstr(p, "{{BODY}}");
		const char *m = a && (!b || a < b) ? a : b;
		if (!m) {
			strbuf_addstr(out, p);
			break;
		}
		strbuf_add(out, p, (size_t)(m - p));
		if (m == a) {
			report_html_escape(out, title, 500);
			p = m + 9;
		} else {
			strbuf_addstr(out, body);
			p = m + 8;
		}
	}
}

static void kv_num(struct strbuf *out, const char *k, const char *fmt, double v)
{
	char buf[64];
	fmt_num(buf, sizeof(buf), fmt, v);
	strbuf_addf(out, "<tr><td>%s</td><td class=\"num\">%s</td></tr>\n", k, buf);
}

static void fmt_when(double t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;
	if (t <= 0 || !gmtime_r(&tt, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M UTC", &tm))
		snprintf(buf, len, "-");
}

void report_run_html(struct strbuf *out, const struct run_history *h)
{
	struct strbuf b = STRBUF_INIT;
	char when[64];
	strbuf_addstr(&b, "<h1>cutegen run: ");
	report_html_escape(&b, h->run.task_name, 200);
	strbuf_addstr(&b, "</h1>\n<p class=\"muted\">");
	report_html_escape(&b, h->dir, 1000);
	fmt_when(h->run.started, when, sizeof(when));
	strbuf_addf(&b, ", started %s</p>\n", when);
	strbuf_addstr(&b, "<h2>Summary</h2>\n<table class=\"kv\">\n<tr><td>status</td><td>");
	report_html_escape(&b, h->run.status, 40);
	if (h->run.stop_reason) {
		strbuf_addstr(&b, ": ");
		report_html_escape(&b, h->run.stop_reason, CAP_LINE);
	}
	strbuf_addf(&b, "</td></tr>\n<tr><td>nodes</td><td class=\"num\">%zu (%ld passed)</td></tr>\n",
		    h->n, h->passed);
	if (h->best_node)
		strbuf_addf(&b, "<tr><td>best node</td><td class=\"num\" id=\"best-node\">%ld</td></tr>\n",
			    h->best);
	else
		strbuf_addstr(&b, "<tr><td>best node</td><td id=\"best-node\">none</td></tr>\n");
	kv_num(&b, "speedup over the baseline", "%.3fx", h->speedup);
	kv_num(&b, "speedup over cuBLAS", "%.3fx", h->speedup_cublas);
	kv_num(&b, "speedup over PyTorch", "%.3fx", h->speedup_torch);
	if (h->torch.asked && h->best_node) {
		kv_num(&b, "speedup over torch.compile", "%.3fx", h->torch.speedup_compile);
		if (h->torch.error[0] || h->torch.compile_error[0]) {
			strbuf_addstr(&b, "<tr><td>PyTorch figures</td><td id=\"torch-error\">");
			report_html_escape(&b, h->torch.error[0] ? h->torch.error
								 : h->torch.compile_error, CAP_LINE);
			strbuf_addstr(&b, "</td></tr>\n");
		}
	}
	kv_num(&b, "fraction of the roofline", "%.3f", h->roofline_fraction);
	kv_num(&b, "best time (ms)", "%.4g", h->ms);
	strbuf_addf(&b, "<tr><td>tokens</td><td class=\"num\" id=\"tokens\">%ld in, %ld out</td></tr>\n"
		    "<tr><td>cost</td><td class=\"num\" id=\"cost\">$%.4f</td></tr>\n",
		    h->tokens_in, h->tokens_out, h->cost_usd);
	double other = h->total_s - h->llm_s - h->compile_s - h->eval_s - h->profile_s;
	strbuf_addf(&b, "<tr><td>time</td><td>%.1f s: model %.1f s, compile %.1f s", h->total_s,
		    h->llm_s, h->compile_s - h->compile_ahead_s);
	if (h->compile_ahead_s > 0)
		strbuf_addf(&b, ", compile (ahead, parallel) %.1f s", h->compile_ahead_s);
	strbuf_addf(&b, ", evaluate %.1f s, profile %.1f s, other %.1f s</td></tr>\n</table>\n",
		    h->eval_s, h->profile_s, other > 0 ? other : 0);
	if (!h->best_node)
		strbuf_addstr(&b, "<p class=\"warn\" id=\"no-correct\">This run has no correct kernel: "
			      "no node passed the evaluation. The history below shows what failed.</p>\n");

	strbuf_addstr(&b, "<h2>Speedup and roofline fraction</h2>\n");
	chart_speedup(&b, h);
	strbuf_addstr(&b, "<h2>Verdicts</h2>\n");
	chart_verdicts(&b, h);

	strbuf_addstr(&b, "<h2>History</h2>\n<table id=\"history\">\n<tr><th>node</th><th>iter</th>"
		      "<th>stage</th><th>kind</th><th>verdict</th><th>outcome</th><th>time (s)</th>"
		      "<th>speedup</th><th>roofline</th><th>change / message</th></tr>\n");
	for (size_t i = 0; i < h->n; i++) {
		const struct store_node *x = &h->nodes[i];
		char t[32], sp[32], rf[32];
		fmt_num(t, sizeof(t), "%.1f", x->total_s);
		fmt_num(sp, sizeof(sp), "%.3gx", x->speedup);
		fmt_num(rf, sizeof(rf), "%.2f", x->roofline_fraction);
		strbuf_addf(&b, "<tr><td class=\"num\">%ld</td><td class=\"num\">%d</td>"
			    "<td class=\"num\">%d</td><td>", x->id, x->iteration, x->stage);
		report_html_escape(&b, x->kind, 20);
		strbuf_addstr(&b, "</td><td>");
		report_html_escape(&b, x->verdict, 40);
		strbuf_addstr(&b, "</td><td>");
		report_html_escape(&b, x->outcome, 40);
		strbuf_addf(&b, "</td><td class=\"num\">%s</td><td class=\"num\">%s</td>"
			    "<td class=\"num\">%s</td><td>", t, sp, rf);
		if (x->change) {
			char *c = clip_words(x->change, CAP_LINE, "\u2026");
			report_html_escape(&b, c, CAP_LINE + 3);
			free(c);
		}
		if (x->message && *x->message) {
			/* the whole message on hover; the cell shows whole words */
			char *m = clip_words(x->message, CAP_LINE, "\u2026");
			strbuf_addstr(&b, x->change ? "<br>" : "");
			strbuf_addstr(&b, "<span class=\"muted message\" title=\"");
			report_html_escape(&b, x->message, CAP_TEXT);
			strbuf_addstr(&b, "\">");
			report_html_escape(&b, m, CAP_LINE + 3);
			strbuf_addstr(&b, "</span>");
			free(m);
		}
		strbuf_addstr(&b, "</td></tr>\n");
	}
	strbuf_addstr(&b, "</table>\n");

	if (h->profile) {
		/* the agent profiles the best kernel of the moment: the last new best before the
		 * node the profile was stored with */
		long of = 0;
		for (size_t i = 0; i < h->n && h->nodes[i].id < h->profile_node; i++)
			if (h->nodes[i].outcome && !strcmp(h->nodes[i].outcome, "best"))
				of = h->nodes[i].id;
		if (of)
			strbuf_addf(&b, "<h2 id=\"profile\" data-node=\"%ld\" data-stored-with=\"%ld\">"
				    "Profile of node %ld (the best kernel when node %ld was made)</h2>\n",
				    of, h->profile_node, of, h->profile_node);
		else
			strbuf_addf(&b, "<h2 id=\"profile\" data-stored-with=\"%ld\">Profile (taken "
				    "while node %ld was made)</h2>\n", h->profile_node, h->profile_node);
		strbuf_addstr(&b, "<pre class=\"profile\">");
		report_html_escape(&b, h->profile, CAP_TEXT);
		strbuf_addstr(&b, "</pre>\n");
	}
	if (h->best_node && h->best_node->source) {
		strbuf_addf(&b, "<h2>Best kernel (node %ld)</h2>\n<pre class=\"code\" id=\"best-source\">",
			    h->best);
		report_highlight_cuda(&b, h->best_node->source);
		strbuf_addstr(&b, "</pre>\n");
	}
	struct strbuf title = STRBUF_INIT;
	strbuf_addf(&title, "cutegen: %s", h->run.task_name ? h->run.task_name : "run");
	fill_skeleton(out, title.buf, b.buf);
	strbuf_release(&title);
	strbuf_release(&b);
}

void report_run_markdown(struct strbuf *out, const struct run_history *h)
{
	char sp[32], rf[32], cb[32], pt[32];
	fmt_num(sp, sizeof(sp), "%.3fx", h->speedup);
	fmt_num(rf, sizeof(rf), "%.3f", h->roofline_fraction);
	fmt_num(cb, sizeof(cb), "%.3fx", h->speedup_cublas);
	fmt_num(pt, sizeof(pt), "%.3fx", h->speedup_torch);
	strbuf_addstr(out, "### cutegen run: `");
	report_text_clean(out, h->run.task_name, 200);
	strbuf_addstr(out, "`\n\n- status: ");
	add_status(out, h);
	strbuf_addf(out, "\n- nodes: %zu (%ld passed)\n", h->n, h->passed);
	if (h->best_node)
		strbuf_addf(out, "- best: node %ld, speedup %s over the baseline (cuBLAS %s, PyTorch %s), "
			    "roofline fraction %s\n", h->best, sp, cb, pt, rf);
	else
		strbuf_addstr(out, "- best: **no correct kernel**\n");
	if (h->torch.asked && h->best_node) {
		strbuf_addstr(out, "- ");
		report_torch_text(out, &h->torch);
	}
	strbuf_addf(out, "- tokens: %ld in, %ld out; cost $%.4f; time %.1f s\n\n", h->tokens_in,
		    h->tokens_out, h->cost_usd, h->total_s);
	strbuf_addstr(out, "| node | stage | kind | verdict | outcome | speedup | roofline | change |\n"
			   "| ---: | ---: | --- | --- | --- | ---: | ---: | --- |\n");
	for (size_t i = 0; i < h->n; i++) {
		const struct store_node *x = &h->nodes[i];
		fmt_num(sp, sizeof(sp), "%.3gx", x->speedup);
		fmt_num(rf, sizeof(rf), "%.2f", x->roofline_fraction);
		strbuf_addf(out, "| %ld | %d | ", x->id, x->stage);
		report_text_clean(out, x->kind, 20);
		strbuf_addstr(out, " | ");
		report_text_clean(out, x->verdict, 40);
		strbuf_addstr(out, " | ");
		report_text_clean(out, x->outcome, 40);
		strbuf_addf(out, " | %s | %s | ", sp, rf);
		report_text_clean(out, x->change, 200);
		strbuf_addstr(out, " |\n");
	}
}

/* ---- suites ---- */

double report_fast_p(const double *speedups, size_t n, double p)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += speedups[i] >= 0 && speedups[i] > p;
	return n ? (double)k / (double)n : 0;
}

static double geomean(const struct report_task *t, size_t n, int which)
{
	double s = 0;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const struct run_history *h = t[i].run;
		if (!h || !h->best_node)
			continue;
		double v = which == 0 ? h->speedup : which == 1 ? h->speedup_cublas
				      : which == 2 ? h->speedup_torch : h->roofline_fraction;
		if (v > 0 && isfinite(v)) {
			s += log(v);
			k++;
		}
	}
	return k ? exp(s / (double)k) : -1;
}

static void chart_fast_p(struct strbuf *out, const double *sp, size_t n)
{
	double ph = CH - MT - MB, pw = CW - ML - MR;
	strbuf_addf(out, "<svg id=\"chart-fastp\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" "
		    "height=\"%g\" viewBox=\"0 0 %g %g\" role=\"img\">\n<title>fast_p: share of tasks "
		    "correct and more than p times as fast as the baseline</title>\n", CW, CH, CW, CH);
	for (int t = 0; t <= 4; t++) {
		double y = MT + ph * (1 - t / 4.0);
		strbuf_addf(out, "<line x1=\"%g\" y1=\"%.1f\" x2=\"%g\" y2=\"%.1f\" stroke=\"#eee\"/>"
			    "<text x=\"%g\" y=\"%.1f\" text-anchor=\"end\">%.2f</text>\n", ML, y,
			    CW - MR, y, ML - 5, y + 4, t / 4.0);
	}
	struct strbuf pts = STRBUF_INIT, dots = STRBUF_INIT;
	for (int i = 0; i <= 30; i++) {
		double p = i / 10.0, f = report_fast_p(sp, n, p);
		double x = ML + pw * p / 3.0, y = MT + ph * (1 - f);
		strbuf_addf(&pts, "%.1f,%.1f ", x, y);
		strbuf_addf(&dots, "<circle class=\"point fastp\" data-p=\"%.1f\" data-fast=\"%.6g\" "
			    "cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"#1f6fd1\"><title>fast_%.1f = %.3g"
			    "</title></circle>\n", p, f, x, y, p, f);
		if (i % 5 == 0)
			strbuf_addf(&dots, "<text x=\"%.1f\" y=\"%g\" text-anchor=\"middle\">%.1f</text>\n",
				    x, CH - MB + 15, p);
	}
	strbuf_addf(out, "<polyline fill=\"none\" stroke=\"#1f6fd1\" stroke-width=\"2\" points=\"%s\"/>\n%s",
		    pts.buf, dots.buf);
	strbuf_addf(out, "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">p (speedup threshold)</text>\n"
		    "</svg>\n", ML + pw / 2, CH - 5);
	strbuf_release(&pts);
	strbuf_release(&dots);
}

static double *suite_speedups(const struct report_task *t, size_t n)
{
	double *sp = xcalloc(n ? n : 1, sizeof(double));
	for (size_t i = 0; i < n; i++)
		sp[i] = t[i].run && t[i].run->best_node ? t[i].run->speedup : -1;
	return sp;
}

static const double torch_ps[] = { 0, 0.5, 1, 1.5, 2, 3 };

/* fast_p of a suite against the baseline, PyTorch eager and torch.compile (`run --torch`),
 * each over ALL tasks (a task without the figure counts as not fast). */
struct torch_fastp {
	int asked; /* runs asked for the PyTorch figures: none, no table */
	struct {
		const char *label, *key;
		int have; /* tasks with the figure */
		double fast[ARRAY_SIZE(torch_ps)];
	} row[3];
};

static void torch_fastp_of(const struct report_task *t, size_t n, struct torch_fastp *f)
{
	static const char *label[3] = { "the baseline", "PyTorch eager", "torch.compile" };
	static const char *key[3] = { "baseline", "eager", "compile" };
	double *sp = xcalloc(n ? n : 1, sizeof(double));
	f->asked = 0;
	for (size_t i = 0; i < n; i++)
		f->asked += t[i].run && t[i].run->torch.asked;
	for (int w = 0; w < 3; w++) {
		f->row[w].label = label[w];
		f->row[w].key = key[w];
		f->row[w].have = 0;
		for (size_t i = 0; i < n; i++) {
			const struct run_history *h = t[i].run;
			double v = !h || !h->best_node ? -1
				 : w == 0		? h->speedup
				 : !h->torch.asked	? -1
				 : w == 1		? h->torch.speedup_eager
							: h->torch.speedup_compile;
			sp[i] = v > 0 ? v : -1;
			f->row[w].have += v > 0;
		}
		for (size_t p = 0; p < ARRAY_SIZE(torch_ps); p++)
			f->row[w].fast[p] = report_fast_p(sp, n, torch_ps[p]);
	}
	free(sp);
}

/* Why a task asked for the PyTorch figures lacks one ("torch.compile failed: " and its error,
 * or "no PyTorch figure: " and eager's), or NULL when it has both or was not asked. */
static const char *torch_missing(const struct run_history *h, const char **why)
{
	if (!h || !h->torch.asked || !h->best_node ||
	    (h->torch.speedup_eager > 0 && h->torch.speedup_compile > 0))
		return NULL;
	*why = h->torch.speedup_eager > 0 ? h->torch.compile_error : h->torch.error;
	return h->torch.speedup_eager > 0 ? "torch.compile failed: " : "no PyTorch figure: ";
}

/* The fast_p table as Markdown lines, with why a figure is missing. Nothing when no run was
 * asked for them. */
static void suite_torch_markdown(struct strbuf *out, const struct report_task *t, size_t n)
{
	struct torch_fastp f;
	torch_fastp_of(t, n, &f);
	if (!f.asked)
		return;
	strbuf_addstr(out, "\nfast_p over all tasks (a task without the figure counts as "
			   "not fast):\n\n| against | tasks with the figure |");
	for (size_t p = 0; p < ARRAY_SIZE(torch_ps); p++)
		strbuf_addf(out, " fast_%g |", torch_ps[p]);
	strbuf_addstr(out, "\n| --- | ---: |");
	for (size_t p = 0; p < ARRAY_SIZE(torch_ps); p++)
		strbuf_addstr(out, " ---: |");
	for (int w = 0; w < 3; w++) {
		strbuf_addf(out, "\n| %s | %d of %zu |", f.row[w].label, f.row[w].have, n);
		for (size_t p = 0; p < ARRAY_SIZE(torch_ps); p++)
			strbuf_addf(out, " %.2f |", f.row[w].fast[p]);
	}
	strbuf_addstr(out, "\n");
	for (size_t i = 0; i < n; i++) {
		const char *why = NULL, *lead = torch_missing(t[i].run, &why);
		if (!lead)
			continue;
		strbuf_addstr(out, "\n- `");
		report_text_clean(out, t[i].run->run.task_name, 200);
		strbuf_addstr(out, "`: ");
		report_text_clean(out, lead, 40);
		report_text_clean(out, why, 640);
		strbuf_addstr(out, " (counted as not fast)");
	}
	strbuf_addstr(out, "\n");
}

/* The same as an HTML table (id "fastp-torch") and a list (id "torch-errors"). */
static void suite_torch_html(struct strbuf *out, const struct report_task *t, size_t n)
{
	struct torch_fastp f;
	torch_fastp_of(t, n, &f);
	if (!f.asked)
		return;
	strbuf_addstr(out, "<h2>fast_p against PyTorch</h2>\n<p>Over all tasks: a task "
		      "without the figure (no torch, torch.compile failed) counts as not "
		      "fast.</p>\n<table id=\"fastp-torch\">\n<tr><th>against</th>"
		      "<th>tasks with the figure</th>");
	for (size_t p = 0; p < ARRAY_SIZE(torch_ps); p++)
		strbuf_addf(out, "<th>fast_%g</th>", torch_ps[p]);
	strbuf_addstr(out, "</tr>\n");
	for (int w = 0; w < 3; w++) {
		strbuf_addf(out, "<tr data-against=\"%s\"><td>%s</td><td class=\"num\">%d of "
			    "%zu</td>", f.row[w].key, f.row[w].label, f.row[w].have, n);
		for (size_t p = 0; p < ARRAY_SIZE(torch_ps); p++)
			strbuf_addf(out, "<td class=\"num\">%.2f</td>", f.row[w].fast[p]);
		strbuf_addstr(out, "</tr>\n");
	}
	strbuf_addstr(out, "</table>\n<ul id=\"torch-errors\">\n");
	for (size_t i = 0; i < n; i++) {
		const char *why = NULL, *lead = torch_missing(t[i].run, &why);
		if (!lead)
			continue;
		strbuf_addstr(out, "<li>");
		report_html_escape(out, t[i].run->run.task_name, 200);
		strbuf_addstr(out, ": ");
		strbuf_addstr(out, lead);
		report_html_escape(out, why, 640);
		strbuf_addstr(out, " (counted as not fast)</li>\n");
	}
	strbuf_addstr(out, "</ul>\n");
}

void report_task_why(struct strbuf *out, const struct report_task *t)
{
	const struct run_history *h = t->run;
	if (h && h->best_node) {
		/* stopped before its end (a suite interrupted, a worker lost): why, and that the
		 * figures are those of the best kernel before the stop */
		if (t->status && !strcmp(t->status, "failed") && t->message && *t->message) {
			report_text_clean(out, t->message, CAP_LINE);
			strbuf_addstr(out, " (the figures: its best kernel before that)");
		}
		return;
	}
	size_t from = out->len;
	if (t->message && *t->message) {
		report_text_clean(out, t->message, CAP_LINE);
	} else if (h) {
		const struct store_node *last = NULL;
		for (size_t i = h->n; i-- > 0;)
			if (h->nodes[i].verdict && strcmp(h->nodes[i].verdict, "pass")) {
				last = &h->nodes[i];
				break;
			}
		if (h->run.stop_reason && *h->run.stop_reason)
			report_text_clean(out, h->run.stop_reason, CAP_LINE);
		if (last) {
			strbuf_addf(out, "%slast failure: node %ld ", out->len > from ? "; " : "",
				    last->id);
			report_text_clean(out, last->verdict, 40);
			if (last->message && *last->message) {
				strbuf_addstr(out, ": ");
				report_text_clean(out, last->message, CAP_LINE);
			}
		}
		if (out->len == from)
			strbuf_addstr(out, h->n ? "no node passed" : "no node was made");
	} else if (t->error) {
		report_text_clean(out, t->error, CAP_LINE);
	}
}

static const char *task_status(const struct report_task *t)
{
	if (t->status)
		return t->status;
	return t->run ? t->run->run.status : "unreadable";
}

void report_suite_html(struct strbuf *out, const char *suite_dir, const struct report_task *t,
		       size_t n)
{
	struct strbuf b = STRBUF_INIT, why = STRBUF_INIT;
	strbuf_addstr(&b, "<h1>cutegen suite: ");
	report_html_escape(&b, suite_dir, 1000);
	strbuf_addf(&b, "</h1>\n<p class=\"muted\">%zu tasks (each counted once: a retried task by "
		    "its final attempt)</p>\n<h2>Tasks</h2>\n<table id=\"tasks\">\n"
		    "<tr><th>task</th><th>run</th><th>status</th><th>nodes</th><th>best</th>"
		    "<th>speedup</th><th>vs cuBLAS</th><th>vs PyTorch</th><th>roofline</th>"
		    "<th>why it failed</th></tr>\n", n);
	for (size_t i = 0; i < n; i++) {
		const struct run_history *h = t[i].run;
		strbuf_reset(&why);
		report_task_why(&why, &t[i]);
		if (!h) {
			strbuf_addstr(&b, t[i].status ? "<tr class=\"norun\"><td>"
						      : "<tr class=\"unreadable\"><td>");
			report_html_escape(&b, t[i].name ? t[i].name : "?", 300);
			strbuf_addstr(&b, "</td><td>-</td><td>");
			report_html_escape(&b, task_status(&t[i]), 40);
			strbuf_addstr(&b, "</td><td colspan=\"6\"></td><td class=\"why\">");
			report_html_escape(&b, why.buf, CAP_LINE);
			strbuf_addstr(&b, "</td></tr>\n");
			continue;
		}
		char sp[32], cb[32], pt[32], rf[32];
		fmt_num(sp, sizeof(sp), "%.3fx", h->best_node ? h->speedup : -1);
		fmt_num(cb, sizeof(cb), "%.3fx", h->best_node ? h->speedup_cublas : -1);
		fmt_num(pt, sizeof(pt), "%.3fx", h->best_node ? h->speedup_torch : -1);
		fmt_num(rf, sizeof(rf), "%.3f", h->best_node ? h->roofline_fraction : -1);
		strbuf_addstr(&b, "<tr class=\"task\" data-task=\"");
		report_html_escape(&b, h->run.task_name, 200);
		strbuf_addf(&b, "\" data-speedup=\"%.9g\"><td>", h->best_node ? h->speedup : -1);
		report_html_escape(&b, h->run.task_name, 200);
		strbuf_addstr(&b, "</td><td>");
		report_html_escape(&b, h->dir, 300);
		strbuf_addstr(&b, "</td><td>");
		report_html_escape(&b, task_status(&t[i]), 40);
		if (t[i].attempts > 1)
			strbuf_addf(&b, " (%d attempts)", t[i].attempts);
		strbuf_addf(&b, "</td><td class=\"num\">%zu</td><td>", h->n);
		if (h->best_node)
			strbuf_addf(&b, "%ld", h->best);
		else
			strbuf_addstr(&b, "no correct kernel");
		strbuf_addf(&b, "</td><td class=\"num\">%s</td><td class=\"num\">%s</td>"
			    "<td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"why\">", sp,
			    cb, pt, rf);
		report_html_escape(&b, why.buf, CAP_LINE);
		strbuf_addstr(&b, "</td></tr>\n");
	}
	char g0[32], g1[32], g2[32], g3[32];
	fmt_num(g0, sizeof(g0), "%.3fx", geomean(t, n, 0));
	fmt_num(g1, sizeof(g1), "%.3fx", geomean(t, n, 1));
	fmt_num(g2, sizeof(g2), "%.3fx", geomean(t, n, 2));
	fmt_num(g3, sizeof(g3), "%.3f", geomean(t, n, 3));
	strbuf_addf(&b, "<tr id=\"geomean\"><th colspan=\"5\">geometric mean (correct kernels)</th>"
		    "<th class=\"num\">%s</th><th class=\"num\">%s</th><th class=\"num\">%s</th>"
		    "<th class=\"num\">%s</th><th></th></tr>\n</table>\n", g0, g1, g2, g3);
	double *sp = suite_speedups(t, n);
	strbuf_addstr(&b, "<h2>fast_p</h2>\n<p>The share of tasks whose kernel is correct and more "
		      "than p times as fast as the baseline (fast_0 = share correct).</p>\n");
	chart_fast_p(&b, sp, n);
	free(sp);
	suite_torch_html(&b, t, n);
	struct strbuf title = STRBUF_INIT;
	strbuf_addf(&title, "cutegen suite: %s", suite_dir);
	fill_skeleton(out, title.buf, b.buf);
	strbuf_release(&title);
	strbuf_release(&b);
	strbuf_release(&why);
}

void report_suite_markdown(struct strbuf *out, const char *suite_dir,
			   const struct report_task *t, size_t n)
{
	struct strbuf why = STRBUF_INIT;
	strbuf_addstr(out, "### cutegen suite: `");
	report_text_clean(out, suite_dir, 500);
	strbuf_addf(out, "`\n\n%zu tasks, each counted once (a retried task by its final attempt)\n\n"
			 "| task | status | speedup | vs cuBLAS | vs PyTorch | roofline | why it failed |\n"
			 "| --- | --- | ---: | ---: | ---: | ---: | --- |\n", n);
	for (size_t i = 0; i < n; i++) {
		const struct run_history *h = t[i].run;
		strbuf_reset(&why);
		report_task_why(&why, &t[i]);
		char sp[32] = "-", cb[32] = "-", pt[32] = "-", rf[32] = "-";
		if (h) {
			fmt_num(sp, sizeof(sp), "%.3fx", h->best_node ? h->speedup : -1);
			fmt_num(cb, sizeof(cb), "%.3fx", h->best_node ? h->speedup_cublas : -1);
			fmt_num(pt, sizeof(pt), "%.3fx", h->best_node ? h->speedup_torch : -1);
			fmt_num(rf, sizeof(rf), "%.3f", h->best_node ? h->roofline_fraction : -1);
		}
		strbuf_addstr(out, "| ");
		report_text_clean(out, h ? h->run.task_name : t[i].name ? t[i].name : "?", 200);
		strbuf_addstr(out, " | ");
		report_text_clean(out, h && !h->best_node && !t[i].status ? "no correct kernel"
									     : task_status(&t[i]),
				  40);
		if (t[i].attempts > 1)
			strbuf_addf(out, " (%d attempts)", t[i].attempts);
		strbuf_addf(out, " | %s | %s | %s | %s | ", sp, cb, pt, rf);
		strbuf_addstr(out, why.len ? why.buf : "-");
		strbuf_addstr(out, " |\n");
	}
	double *sp = suite_speedups(t, n);
	char g[32];
	fmt_num(g, sizeof(g), "%.3fx", geomean(t, n, 0));
	strbuf_addf(out, "\ngeometric mean speedup: %s; fast_0 %.2f, fast_1 %.2f, fast_2 %.2f\n", g,
		    report_fast_p(sp, n, 0), report_fast_p(sp, n, 1), report_fast_p(sp, n, 2));
	free(sp);
	suite_torch_markdown(out, t, n);
	strbuf_release(&why);
}
