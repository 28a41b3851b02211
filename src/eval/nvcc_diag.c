/*
 * Parser and first-error formatter for nvcc's output; see nvcc_diag.h.
 *
 * The shapes it knows (each seen in tests/data/nvcc/ (the .log files)):
 *   FILE(LINE): error: MSG                        the EDG front end (cudafe++/cicc); then
 *       indented continuation lines, a source echo ("  " + the line, tabs as one space), a
 *       caret line, and "detected during instantiation of ... at line N [of FILE]" or
 *       "detected during:" followed by one frame a line, innermost first;
 *   FILE:LINE:COL: error: MSG                     gcc (the host compiler and the preprocessor),
 *       with "FILE: In instantiation of ...:" and "FILE:L:C:   required from ..." context lines;
 *   ptxas error   : MSG, ptxas FILE, line N; error   : MSG, nvcc fatal   : MSG, nvlink error : MSG;
 *   ...: undefined reference to `X'               the linker.
 * Everything else (summaries, "Remark:" hints, gcc's "|" echoes) is skipped.
 */
#include "eval/nvcc_diag.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

struct span {
	const char *p;
	size_t n;
};

static int sp_starts(struct span s, const char *prefix)
{
	size_t k = strlen(prefix);
	return s.n >= k && !memcmp(s.p, prefix, k);
}

static struct span sp_trim(struct span s)
{
	while (s.n && (s.p[0] == ' ' || s.p[0] == '\t'))
		s.p++, s.n--;
	while (s.n && isspace((unsigned char)s.p[s.n - 1]))
		s.n--;
	return s;
}

static int sp_blank(struct span s)
{
	return sp_trim(s).n == 0;
}

static int sp_indented(struct span s)
{
	return s.n && (s.p[0] == ' ' || s.p[0] == '\t');
}

/* Finds needle in s; returns its offset or -1. */
static long sp_find(struct span s, const char *needle, size_t from)
{
	size_t k = strlen(needle);
	for (size_t i = from; i + k <= s.n; i++)
		if (!memcmp(s.p + i, needle, k))
			return (long)i;
	return -1;
}

static long sp_rfind(struct span s, const char *needle)
{
	size_t k = strlen(needle);
	if (k > s.n)
		return -1;
	for (size_t i = s.n - k + 1; i-- > 0;)
		if (!memcmp(s.p + i, needle, k))
			return (long)i;
	return -1;
}

/* Parses up to 9 digits at s.p[*i]; returns -1 when there are none. */
static int parse_uint(struct span s, size_t *i)
{
	long v = 0;
	size_t start = *i, k = *i;
	while (k < s.n && isdigit((unsigned char)s.p[k]) && k - start < 9)
		v = v * 10 + (s.p[k++] - '0');
	if (k == start)
		return -1;
	while (k < s.n && isdigit((unsigned char)s.p[k]))
		k++;  /* absurdly long numbers: keep the first digits, skip the rest */
	*i = k;
	return (int)v;
}

/* A heap copy of at most DIAG_MAX_TEXT bytes, NULs turned into spaces. */
static char *sp_dup(struct span s)
{
	size_t n = s.n > DIAG_MAX_TEXT ? DIAG_MAX_TEXT : s.n;
	char *r = xmalloc(n + 4);
	for (size_t i = 0; i < n; i++)
		r[i] = s.p[i] ? s.p[i] : ' ';
	if (n < s.n) {
		memcpy(r + n, "...", 3);
		n += 3;
	}
	r[n] = '\0';
	return r;
}

const char *diag_severity_name(enum diag_severity s)
{
	switch (s) {
	case DIAG_INFO: return "info";
	case DIAG_NOTE: return "note";
	case DIAG_WARNING: return "warning";
	case DIAG_ERROR: return "error";
	case DIAG_FATAL: return "fatal error";
	}
	return "?";
}

/*
 * Matches a severity word at s.p[*i] (and, for the front end, a "#177-D" number), followed by
 * optional spaces and ": ". Returns 0 and advances *i past the colon and one space.
 */
static int match_severity(struct span s, size_t *i, enum diag_severity *sev, struct span *code)
{
	static const struct {
		const char *word;
		enum diag_severity sev;
	} words[] = {
		{ "catastrophic error", DIAG_FATAL }, { "fatal error", DIAG_FATAL },
		{ "internal error", DIAG_FATAL }, { "fatal", DIAG_FATAL },
		{ "error", DIAG_ERROR }, { "warning", DIAG_WARNING }, { "remark", DIAG_NOTE },
		{ "note", DIAG_NOTE }, { "info", DIAG_INFO },
	};
	struct span rest = { s.p + *i, s.n - *i };
	for (size_t w = 0; w < ARRAY_SIZE(words); w++) {
		if (!sp_starts(rest, words[w].word))
			continue;
		size_t k = strlen(words[w].word);
		code->p = NULL;
		code->n = 0;
		if (k + 1 < rest.n && rest.p[k] == ' ' && rest.p[k + 1] == '#') {
			size_t c = k + 2;
			while (c < rest.n && rest.p[c] != ':' && rest.p[c] != ' ')
				c++;
			code->p = rest.p + k + 2;
			code->n = c - (k + 2);
			k = c;
		}
		while (k < rest.n && rest.p[k] == ' ')
			k++;
		if (k >= rest.n || rest.p[k] != ':')
			continue;
		k++;
		if (k < rest.n && rest.p[k] == ' ')
			k++;
		*sev = words[w].sev;
		*i += k;
		return 0;
	}
	return -1;
}

static struct diag *new_diag(struct diag_list *dl, enum diag_severity sev, const char *tool)
{
	if (sev >= DIAG_ERROR)
		dl->nerrors++;
	if (dl->nr >= DIAG_MAX_RECORDS) {
		dl->dropped++;
		return NULL;
	}
	ALLOC_GROW(dl->items, dl->nr + 1, dl->alloc);
	struct diag *d = &dl->items[dl->nr++];
	memset(d, 0, sizeof(*d));
	d->severity = sev;
	d->tool = xstrdup(tool);
	return d;
}

static void add_frame(struct diag *d, struct span text, const char *file, size_t file_len,
		      int line)
{
	if (d->nframes >= DIAG_MAX_FRAMES) {
		d->frames_dropped++;
		return;
	}
	ALLOC_GROW(d->frames, d->nframes + 1, d->frames_alloc);
	struct diag_frame *f = &d->frames[d->nframes++];
	f->text = sp_dup(sp_trim(text));
	f->file = file ? xstrndup(file, file_len) : NULL;
	f->line = line;
}

/* Appends "\n" + line to d->message, within DIAG_MAX_TEXT. */
static void append_message(struct diag *d, struct span line)
{
	size_t have = strlen(d->message);
	if (have >= DIAG_MAX_TEXT)
		return;
	char *more = sp_dup(line);
	size_t n = strlen(more);
	if (have + 1 + n > DIAG_MAX_TEXT)
		n = DIAG_MAX_TEXT - have - 1;
	d->message = xrealloc(d->message, have + n + 2);
	d->message[have] = '\n';
	memcpy(d->message + have + 1, more, n);
	d->message[have + 1 + n] = '\0';
	free(more);
}

/*
 * One front-end frame: `instantiation of "..." at line N of FILE`, `... at line N` (in the
 * diagnostic's own file), or "[ N instantiation contexts not shown ]".
 */
static void parse_edg_frame(struct diag *d, struct span t)
{
	t = sp_trim(t);
	if (sp_starts(t, "[") && sp_find(t, "not shown", 0) >= 0) {
		size_t i = 1;
		while (i < t.n && t.p[i] == ' ')
			i++;
		int n = parse_uint(t, &i);
		d->frames_dropped += n > 0 ? (size_t)n : 1;
		return;
	}
	long at = sp_rfind(t, " at line ");
	if (at < 0) {
		add_frame(d, t, NULL, 0, 0);
		return;
	}
	size_t i = (size_t)at + 9;
	int line = parse_uint(t, &i);
	const char *file = d->file;
	size_t file_len = d->file ? strlen(d->file) : 0;
	if (i + 4 <= t.n && !memcmp(t.p + i, " of ", 4)) {
		file = t.p + i + 4;
		file_len = t.n - (i + 4);
	}
	struct span text = { t.p, (size_t)at };
	add_frame(d, text, file, file_len, line < 0 ? 0 : line);
}

static int is_caret_line(struct span s)
{
	int caret = 0;
	for (size_t i = 0; i < s.n; i++) {
		if (s.p[i] == '^')
			caret++;
		else if (s.p[i] != ' ' && s.p[i] != '\t' && s.p[i] != '\r')
			return 0;
	}
	return caret == 1;
}

/* FILE(LINE): SEVERITY: MSG. Fills the header fields; returns 0 on a match. */
static int match_edg_header(struct span s, struct span *file, int *line, enum diag_severity *sev,
			    struct span *code, struct span *msg)
{
	if (!s.n || sp_indented(s))
		return -1;
	for (size_t open = 1; open < s.n; open++) {
		if (s.p[open] != '(')
			continue;
		size_t i = open + 1;
		int l = parse_uint(s, &i);
		if (l < 0 || i + 2 >= s.n || s.p[i] != ')' || s.p[i + 1] != ':' || s.p[i + 2] != ' ')
			continue;
		i += 3;
		if (match_severity(s, &i, sev, code))
			continue;
		file->p = s.p;
		file->n = open;
		*line = l;
		msg->p = s.p + i;
		msg->n = s.n - i;
		return 0;
	}
	return -1;
}

/*
 * The lines after a front-end header, up to a blank or unindented line: continuation lines of
 * the message, the source echo and its caret, and the instantiation context.
 */
static size_t parse_edg_block(struct diag *d, const struct span *lines, size_t nlines, size_t j)
{
	size_t start = j;
	while (j < nlines && sp_indented(lines[j]) && !sp_blank(lines[j]))
		j++;
	size_t end = j, caret = end, ctx = end;
	for (size_t k = start; k < end; k++) {
		struct span t = sp_trim(lines[k]);
		if (ctx == end && sp_starts(t, "detected during"))
			ctx = k;
		if (caret == end && ctx == end && k > start && is_caret_line(lines[k]))
			caret = k;
	}
	size_t msg_end = caret < end ? caret - 1 : ctx; /* the line above the caret is the echo */
	if (d) {
		for (size_t k = start; k < msg_end; k++)
			append_message(d, sp_trim(lines[k]));
		if (caret < end) {
			const char *c = memchr(lines[caret].p, '^', lines[caret].n);
			size_t col = (size_t)(c - lines[caret].p);
			d->column = col >= 2 ? (int)(col - 1) : 1;  /* the echo is indented by two */
		}
		for (size_t k = ctx; k < end; k++) {
			struct span t = sp_trim(lines[k]);
			if (k == ctx) {
				t.p += 15, t.n -= 15;  /* "detected during" */
				if (t.n && t.p[0] == ':')
					continue;
			}
			parse_edg_frame(d, t);
		}
	}
	return end;
}

/* gcc: FILE:LINE[:COL]: SEVERITY: MSG, or (sev_required=0) FILE:LINE:COL:   required from X. */
static int match_gcc(struct span s, struct span *file, int *line, int *col,
		     enum diag_severity *sev, struct span *msg)
{
	if (!s.n || sp_indented(s))
		return -1;
	for (size_t colon = 1; colon < s.n; colon++) {
		if (s.p[colon] != ':')
			continue;
		size_t i = colon + 1;
		int l = parse_uint(s, &i);
		if (l < 0 || i >= s.n || s.p[i] != ':')
			continue;
		i++;
		size_t save = i;
		int c = parse_uint(s, &i);
		if (c >= 0 && i < s.n && s.p[i] == ':')
			i++;
		else {
			c = 0;
			i = save;
		}
		while (i < s.n && s.p[i] == ' ')
			i++;
		struct span code;
		if (match_severity(s, &i, sev, &code)) {
			/* a context line: "required from here", "in 'constexpr' expansion of" */
			*sev = DIAG_NOTE;
			msg->p = s.p + i;
			msg->n = s.n - i;
			file->p = s.p;
			file->n = colon;
			*line = l;
			*col = c;
			return 1;
		}
		file->p = s.p;
		file->n = colon;
		*line = l;
		*col = c;
		msg->p = s.p + i;
		msg->n = s.n - i;
		return 0;
	}
	return -1;
}

/* "TOOL SEVERITY : MSG" and "ptxas FILE, line N; SEVERITY : MSG". */
static int match_tool(struct span s, struct diag_list *dl)
{
	static const char *tools[] = { "nvcc", "ptxas", "nvlink", "fatbinary", "cicc",
				       "cudafe++", "nvdisasm", "cuobjdump" };
	for (size_t t = 0; t < ARRAY_SIZE(tools); t++) {
		size_t k = strlen(tools[t]);
		if (s.n <= k + 1 || memcmp(s.p, tools[t], k) || s.p[k] != ' ')
			continue;
		size_t i = k + 1;
		struct span file = { NULL, 0 };
		int line = 0;
		long semi = sp_find(s, ", line ", i);
		if (semi > 0) {
			/* ptxas FILE.ptx, line 12; error   : ... */
			size_t j = (size_t)semi + 7;
			int l = parse_uint(s, &j);
			if (l >= 0 && j < s.n && s.p[j] == ';') {
				file.p = s.p + i;
				file.n = (size_t)semi - i;
				line = l;
				i = j + 1;
				while (i < s.n && s.p[i] == ' ')
					i++;
			}
		}
		enum diag_severity sev;
		struct span code;
		if (match_severity(s, &i, &sev, &code))
			return -1;
		struct diag *d = new_diag(dl, sev, tools[t]);
		if (!d)
			return 0;
		struct span msg = { s.p + i, s.n - i };
		d->message = sp_dup(sp_trim(msg));
		if (file.p) {
			d->file = sp_dup(file);
			d->line = line;
		}
		return 0;
	}
	return -1;
}

/* The linker: "...: undefined reference to `foo'", "/usr/bin/ld: cannot find -lx". */
static int match_linker(struct span s, struct diag_list *dl)
{
	long u = sp_find(s, "undefined reference to", 0);
	long ld = sp_find(s, "ld: ", 0);
	long coll = sp_starts(s, "collect2: ") ? 0 : -1;
	if (u < 0 && ld < 0 && coll < 0)
		return -1;
	struct span msg;
	enum diag_severity sev = DIAG_ERROR;
	if (u >= 0) {
		msg.p = s.p + u;
		msg.n = s.n - (size_t)u;
	} else if (coll == 0) {
		msg.p = s.p + 10;
		msg.n = s.n - 10;
		if (sp_starts(msg, "error: "))
			msg.p += 7, msg.n -= 7;
	} else {
		/* only ".../ld: " at the start of a word, not "build: " */
		if (ld > 0 && s.p[ld - 1] != '/' && s.p[ld - 1] != ' ')
			return -1;
		msg.p = s.p + ld + 4;
		msg.n = s.n - (size_t)ld - 4;
		if (sp_starts(msg, "warning: ")) {
			sev = DIAG_WARNING;
			msg.p += 9, msg.n -= 9;
		} else if (sp_starts(msg, "error: ")) {
			msg.p += 7, msg.n -= 7;
		} else if (sp_find(msg, "in function", 0) >= 0 || sp_blank(msg)) {
			return 0;  /* "ld: x.o: in function `f':" introduces the next line */
		}
	}
	struct diag *d = new_diag(dl, sev, coll == 0 ? "collect2" : "ld");
	if (d)
		d->message = sp_dup(sp_trim(msg));
	return 0;
}

/* Indented lines after a tool's line; ptxas info's ("0 bytes stack frame, ...") are kept. */
static size_t skip_detail_lines(struct diag_list *dl, const struct span *lines, size_t nlines,
				size_t i)
{
	struct diag *last = dl->nr ? &dl->items[dl->nr - 1] : NULL;
	while (i < nlines && sp_indented(lines[i]) && !sp_blank(lines[i])) {
		if (last && last->severity == DIAG_INFO)
			append_message(last, sp_trim(lines[i]));
		i++;
	}
	return i;
}

void diag_parse(const char *log, size_t len, struct diag_list *dl)
{
	if (!log)
		return;
	struct span *lines = NULL;
	size_t nlines = 0, alloc = 0;
	for (size_t pos = 0; pos < len;) {
		const char *nl = memchr(log + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (log + pos)) : len - pos;
		struct span l = { log + pos, n };
		if (l.n && l.p[l.n - 1] == '\r')
			l.n--;
		ALLOC_GROW(lines, nlines + 1, alloc);
		lines[nlines++] = l;
		pos += n + 1;
	}

	/* gcc prints its instantiation context before the error it belongs to */
	struct diag pending = { 0 };
	for (size_t i = 0; i < nlines;) {
		struct span s = lines[i], file, code, msg;
		int line, col;
		enum diag_severity sev;
		if (!match_edg_header(s, &file, &line, &sev, &code, &msg)) {
			struct diag *d = new_diag(dl, sev, "front end");
			if (d) {
				d->file = sp_dup(file);
				d->line = line;
				d->message = sp_dup(sp_trim(msg));
				if (code.n)
					d->code = sp_dup(code);
			}
			i = parse_edg_block(d, lines, nlines, i + 1);
			continue;
		}
		if (!match_tool(s, dl)) {
			i = skip_detail_lines(dl, lines, nlines, i + 1);
			continue;
		}
		int g = match_gcc(s, &file, &line, &col, &sev, &msg);
		if (g == 1) {
			/* FILE:L:C:   required from ... */
			if (!pending.message) {
				pending.message = xstrdup("");
			}
			add_frame(&pending, msg, file.p, file.n, line);
			i++;
			continue;
		}
		if (g == 0) {
			struct diag *d = new_diag(dl, sev, "gcc");
			if (d) {
				d->file = sp_dup(file);
				d->line = line;
				d->column = col;
				d->message = sp_dup(sp_trim(msg));
				if (pending.nframes && sev != DIAG_NOTE) {
					d->frames = pending.frames;
					d->nframes = pending.nframes;
					d->frames_alloc = pending.frames_alloc;
					d->frames_dropped = pending.frames_dropped;
					pending.frames = NULL;
					pending.nframes = pending.frames_alloc = pending.frames_dropped = 0;
				}
			}
			i++;
			/* gcc's echo: "    3 | code" and "      |   ^~~" */
			while (i < nlines && sp_indented(lines[i]) && sp_find(lines[i], "|", 0) >= 0)
				i++;
			continue;
		}
		long inst = sp_find(s, ": In instantiation of ", 0);
		if (inst > 0 && !sp_indented(s)) {
			if (!pending.message)
				pending.message = xstrdup("");
			struct span t = { s.p + inst + 5, s.n - (size_t)inst - 5 };
			if (t.n && t.p[t.n - 1] == ':')
				t.n--;
			add_frame(&pending, t, s.p, (size_t)inst, 0);
			i++;
			continue;
		}
		if (!match_linker(s, dl)) {
			i = skip_detail_lines(dl, lines, nlines, i + 1);
			continue;
		}
		if (sp_starts(s, "error: ")) {
			struct diag *d = new_diag(dl, DIAG_ERROR, "compiler");
			if (d)
				d->message = sp_dup(sp_trim((struct span){ s.p + 7, s.n - 7 }));
		}
		i++;
	}
	for (size_t k = 0; k < pending.nframes; k++) {
		free(pending.frames[k].text);
		free(pending.frames[k].file);
	}
	free(pending.frames);
	free(pending.message);
	free(lines);
}

static void diag_release(struct diag *d)
{
	free(d->tool);
	free(d->file);
	free(d->message);
	free(d->code);
	for (size_t k = 0; k < d->nframes; k++) {
		free(d->frames[k].text);
		free(d->frames[k].file);
	}
	free(d->frames);
}

void diag_list_release(struct diag_list *dl)
{
	for (size_t i = 0; i < dl->nr; i++)
		diag_release(&dl->items[i]);
	free(dl->items);
	memset(dl, 0, sizeof(*dl));
}

void diag_list_map_file(struct diag_list *dl, const char *from, const char *to)
{
	for (size_t i = 0; i < dl->nr; i++) {
		struct diag *d = &dl->items[i];
		if (d->file && !strcmp(d->file, from)) {
			free(d->file);
			d->file = xstrdup(to);
		}
		for (size_t k = 0; k < d->nframes; k++)
			if (d->frames[k].file && !strcmp(d->frames[k].file, from)) {
				free(d->frames[k].file);
				d->frames[k].file = xstrdup(to);
			}
	}
}

const struct diag *diag_first_error(const struct diag_list *dl)
{
	for (size_t i = 0; i < dl->nr; i++)
		if (dl->items[i].severity >= DIAG_ERROR)
			return &dl->items[i];
	return NULL;
}

/* ---- shortening ---- */

static int opens_at(const char *s, size_t i)
{
	return s[i] == '<' && s[i + 1] != '<' && s[i + 1] != '=' && !(i > 0 && s[i - 1] == '<');
}

static int closes_at(const char *s, size_t i)
{
	return s[i] == '>' && !(i > 0 && s[i - 1] == '-') && s[i + 1] != '=';
}

/* The index of the '>' closing the '<' at s[i], or 0 when it is not closed. */
static size_t matching_close(const char *s, size_t i)
{
	int depth = 0;
	for (size_t j = i; s[j]; j++) {
		if (opens_at(s, j))
			depth++;
		else if (closes_at(s, j) && --depth == 0)
			return j;
	}
	return 0;
}

/*
 * Template argument lists nested deeper than max_depth become "<...>", unless they are short
 * (cute::C<32> stays as it is).
 */
static void elide_depth(const char *s, int max_depth, struct strbuf *out)
{
	int depth = 0;
	for (size_t i = 0; s[i]; i++) {
		if (opens_at(s, i)) {
			if (depth < max_depth) {
				depth++;
				strbuf_addch(out, '<');
				continue;
			}
			size_t j = matching_close(s, i);
			if (!j) {
				strbuf_addstr(out, "<...");
				return;
			}
			if (j - i <= 16)
				strbuf_add(out, s + i, j - i + 1);
			else
				strbuf_addstr(out, "<...>");
			i = j;
			continue;
		}
		if (closes_at(s, i) && depth > 0)
			depth--;
		strbuf_addch(out, s[i]);
	}
}

/* Each "[with ...]" clause cut to max_with bytes. */
static void cut_with(const char *s, size_t max_with, struct strbuf *out)
{
	for (size_t i = 0; s[i];) {
		if (strncmp(s + i, "[with ", 6)) {
			strbuf_addch(out, s[i++]);
			continue;
		}
		size_t j = i + 1;
		int depth = 1;
		while (s[j] && depth) {
			if (s[j] == '[')
				depth++;
			else if (s[j] == ']')
				depth--;
			j++;
		}
		/* clause is s[i..j), "]" included when depth reached 0 */
		size_t n = j - i;
		if (n <= max_with) {
			strbuf_add(out, s + i, n);
		} else {
			strbuf_add(out, s + i, max_with);
			strbuf_addstr(out, " ...]");
		}
		i = j;
	}
}

void diag_shorten(const char *s, int max_depth, size_t max_with, size_t max_len,
		  struct strbuf *out)
{
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	if (max_depth > 0)
		elide_depth(s, max_depth, &a);
	else
		strbuf_addstr(&a, s);
	if (max_with)
		cut_with(a.buf, max_with, &b);
	else
		strbuf_addstr(&b, a.buf);
	if (max_len && b.len > max_len) {
		strbuf_setlen(&b, max_len);
		strbuf_addstr(&b, "...");
	}
	strbuf_add(out, b.buf, b.len);
	strbuf_release(&a);
	strbuf_release(&b);
}

/* ---- formatting ---- */

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static int is_main_file(const char *file, const char *main_file)
{
	if (!file)
		return 0;
	if (!main_file)
		return !strchr(file, '/');
	return !strcmp(base_name(file), base_name(main_file));
}

void diag_format_one(const struct diag *d, struct strbuf *out)
{
	if (d->file && d->line && d->column)
		strbuf_addf(out, "%s:%d:%d: ", d->file, d->line, d->column);
	else if (d->file && d->line)
		strbuf_addf(out, "%s:%d: ", d->file, d->line);
	else if (d->file)
		strbuf_addf(out, "%s: ", d->file);
	else
		strbuf_addf(out, "%s: ", d->tool);
	strbuf_addf(out, "%s: ", diag_severity_name(d->severity));
	const char *nl = strchr(d->message, '\n');
	struct strbuf first = STRBUF_INIT;
	strbuf_add(&first, d->message, nl ? (size_t)(nl - d->message) : strlen(d->message));
	diag_shorten(first.buf, 3, 200, 600, out);
	strbuf_release(&first);
}

static void format_frame(const struct diag_frame *f, struct strbuf *out)
{
	strbuf_addstr(out, "  in ");
	diag_shorten(f->text, 3, 160, 400, out);
	if (f->file && f->line)
		strbuf_addf(out, " at %s:%d", f->file, f->line);
	else if (f->line)
		strbuf_addf(out, " at line %d", f->line);
	strbuf_addch(out, '\n');
}

/* The numbered lines [line-3, line+3] of source, line marked, a caret under column. */
static void format_excerpt(const char *src, size_t len, int line, int column, struct strbuf *out)
{
	int lo = line - 3 < 1 ? 1 : line - 3, hi = line + 3, cur = 1;
	for (size_t pos = 0; pos <= len && cur <= hi;) {
		const char *nl = memchr(src + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (src + pos)) : len - pos;
		if (!nl && n == 0 && pos == len)
			break;
		if (cur >= lo) {
			size_t shown = n > 300 ? 300 : n;
			strbuf_addf(out, "%c %5d | ", cur == line ? '>' : ' ', cur);
			for (size_t k = 0; k < shown; k++)
				strbuf_addch(out, src[pos + k] ? src[pos + k] : ' ');
			if (shown < n)
				strbuf_addstr(out, "...");
			strbuf_addch(out, '\n');
			if (cur == line && column > 0 && (size_t)column <= shown + 1) {
				strbuf_addstr(out, "        | ");
				for (int k = 0; k < column - 1; k++)
					strbuf_addch(out, src[pos + k] == '\t' ? '\t' : ' ');
				strbuf_addstr(out, "^\n");
			}
		}
		if (!nl)
			break;
		pos += n + 1;
		cur++;
	}
}

int diag_format_first_error(const struct diag_list *dl, const char *source, size_t source_len,
			    const char *main_file, struct strbuf *out)
{
	const struct diag *d = diag_first_error(dl);
	if (!d)
		return -1;
	diag_format_one(d, out);
	strbuf_addch(out, '\n');
	for (const char *m = strchr(d->message, '\n'); m; m = strchr(m + 1, '\n')) {
		const char *e = strchr(m + 1, '\n');
		struct strbuf cont = STRBUF_INIT;
		strbuf_add(&cont, m + 1, e ? (size_t)(e - m - 1) : strlen(m + 1));
		strbuf_addstr(out, "    ");
		diag_shorten(cont.buf, 3, 200, 400, out);
		strbuf_addch(out, '\n');
		strbuf_release(&cont);
	}

	/* the chain: innermost, innermost in the user's file, outermost */
	size_t n = d->nframes, user = n;
	for (size_t k = 0; k < n; k++)
		if (is_main_file(d->frames[k].file, main_file)) {
			user = k;
			break;
		}
	if (n) {
		size_t keep[3], nkeep = 0;
		keep[nkeep++] = 0;
		if (user < n && user != 0)
			keep[nkeep++] = user;
		if (n - 1 != keep[nkeep - 1])
			keep[nkeep++] = n - 1;
		strbuf_addstr(out, "  detected during (innermost first):\n");
		for (size_t k = 0; k < nkeep; k++) {
			if (k && keep[k] > keep[k - 1] + 1)
				strbuf_addf(out, "  ... %zu more\n", keep[k] - keep[k - 1] - 1);
			format_frame(&d->frames[keep[k]], out);
		}
		if (d->frames_dropped)
			strbuf_addf(out, "  ... %zu more not shown\n", d->frames_dropped);
	}

	/* notes right after it: "candidate function template ... failed deduction" */
	size_t idx = (size_t)(d - dl->items), shown = 0;
	for (size_t k = idx + 1; k < dl->nr && dl->items[k].severity == DIAG_NOTE && shown < 2;
	     k++, shown++) {
		strbuf_addstr(out, "  ");
		diag_format_one(&dl->items[k], out);
		strbuf_addch(out, '\n');
	}

	/*
	 * Errors that point at nvcc's generated files rather than the kernel: say what they mean.
	 * A kernel in an anonymous namespace is named by the host stub (kernel.cudafe1.stub.c)
	 * through _GLOBAL__N_..., which CuTe's own anonymous namespaces make ambiguous once
	 * `using namespace cute` is in scope.
	 */
	if (strstr(d->message, "_GLOBAL__N_") && strstr(d->message, "ambiguous"))
		strbuf_addstr(out, "  what it means: nvcc's generated host stub (the .stub.c file, not "
				   "your code) cannot name a __global__ function that is inside an "
				   "anonymous namespace, because CuTe has anonymous namespaces of its own "
				   "(and `using namespace cute` brings them in). Put your kernels and "
				   "helpers in a named namespace (namespace kernel { ... }) and launch "
				   "them as kernel::name<<<...>>>.\n");

	if (source) {
		int line = 0, col = 0;
		if (is_main_file(d->file, main_file) && d->line) {
			line = d->line;
			col = d->column;
		} else if (user < n && d->frames[user].line) {
			line = d->frames[user].line;
		}
		if (line) {
			strbuf_addf(out, "%s:\n", main_file ? main_file : "source");
			format_excerpt(source, source_len, line, col, out);
		}
	}
	if (dl->nerrors > 1)
		strbuf_addf(out, "(%d more error%s after this one)\n", dl->nerrors - 1,
			    dl->nerrors - 1 == 1 ? "" : "s");
	return 0;
}
