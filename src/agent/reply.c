/*
 * The reply parser (see reply.h). It works on lines (a view of the text, never modified), so
 * any byte sequence is safe: NULs end nothing, \r\n and \n both end lines, and every loop is
 * bounded by the line count. Messages address the model, since they go back to it.
 */
#include "agent/reply.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct line {
	const char *p;
	size_t n;   /* without the line end */
};

struct lines {
	struct line *v;
	size_t n, alloc;
};

static void split_lines(const char *text, size_t len, struct lines *out)
{
	size_t start = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i == len || text[i] == '\n') {
			if (i == len && start == len)
				break; /* no empty last line after a final newline */
			size_t n = i - start;
			if (n && text[start + n - 1] == '\r')
				n--;
			ALLOC_GROW(out->v, out->n + 1, out->alloc);
			out->v[out->n].p = text + start;
			out->v[out->n].n = n;
			out->n++;
			start = i + 1;
		}
	}
}

static size_t rtrim_len(const struct line *l)
{
	size_t n = l->n;
	while (n && (l->p[n - 1] == ' ' || l->p[n - 1] == '\t' || l->p[n - 1] == '\r'))
		n--;
	return n;
}

static int lines_equal(const struct line *a, const struct line *b)
{
	size_t na = rtrim_len(a), nb = rtrim_len(b);
	return na == nb && !memcmp(a->p, b->p, na);
}

/* Whether the line is a marker: optional indent, 5..9 copies of ch, then optional word. */
static int is_marker(const struct line *l, char ch, const char *word)
{
	size_t i = 0, n = rtrim_len(l);
	while (i < n && (l->p[i] == ' ' || l->p[i] == '\t'))
		i++;
	size_t k = 0;
	while (i < n && l->p[i] == ch)
		i++, k++;
	if (k < 5 || k > 9)
		return 0;
	if (!word)
		return i == n;
	while (i < n && l->p[i] == ' ')
		i++;
	size_t wl = strlen(word);
	return n - i == wl && !memcmp(l->p + i, word, wl);
}

static int mem_has(const char *p, size_t n, const char *needle)
{
	size_t k = strlen(needle);
	for (size_t i = 0; i + k <= n; i++)
		if (p[i] == needle[0] && !memcmp(p + i, needle, k))
			return 1;
	return 0;
}

static void add_lines(struct strbuf *out, const struct line *v, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		strbuf_add(out, v[i].p, v[i].n);
		strbuf_addch(out, '\n');
	}
}

/*
 * A short printable quote of a line for a message, its indentation kept (tabs as tabs): when
 * an edit fails on indentation, the quote shows what the model wrote.
 */
static char *quote_line(const struct line *l)
{
	size_t n = rtrim_len(l), i = 0;
	size_t m = n - i > 80 ? 80 : n - i;
	char *q = xstrndup(l->p + i, m);
	for (char *c = q; *c; c++)
		if ((unsigned char)*c < ' ' && *c != '\t')
			*c = ' ';
	if (n - i > 80) {
		char *t = xasprintf("%s...", q);
		free(q);
		q = t;
	}
	return q;
}

/* The line without its leading and trailing blanks. */
static void trim_both(const struct line *l, const char **p, size_t *n)
{
	size_t e = rtrim_len(l), b = 0;
	while (b < e && (l->p[b] == ' ' || l->p[b] == '\t'))
		b++;
	*p = l->p + b;
	*n = e - b;
}

static int lines_equal_ws(const struct line *a, const struct line *b)
{
	const char *pa, *pb;
	size_t na, nb;
	trim_both(a, &pa, &na);
	trim_both(b, &pb, &nb);
	return na == nb && !memcmp(pa, pb, na);
}

/* An edit: SEARCH lines and their replacement, as views (into the reply or, for a unified
 * diff, into its lines past the one-character prefix). */
struct edit {
	struct lines search, repl;
};

struct edits {
	struct edit *v;
	size_t n, alloc;
};

static void edits_release(struct edits *e)
{
	for (size_t i = 0; i < e->n; i++) {
		free(e->v[i].search.v);
		free(e->v[i].repl.v);
	}
	free(e->v);
	memset(e, 0, sizeof(*e));
}

static void lines_push(struct lines *L, const char *p, size_t n)
{
	ALLOC_GROW(L->v, L->n + 1, L->alloc);
	L->v[L->n].p = p;
	L->v[L->n].n = n;
	L->n++;
}

static int edits_add(struct edits *E, struct edit *e, char **err)
{
	if (E->n == REPLY_MAX_EDITS) {
		free(e->search.v);
		free(e->repl.v);
		*err = xasprintf("your reply has more than %d edits: make fewer, larger edits, or "
				 "reply with the whole file", REPLY_MAX_EDITS);
		return -1;
	}
	ALLOC_GROW(E->v, E->n + 1, E->alloc);
	E->v[E->n++] = *e;
	return 0;
}

static int parse_edits(const struct lines *L, int truncated, struct edits *E, char **err)
{
	for (size_t i = 0; i < L->n; i++) {
		if (!is_marker(&L->v[i], '<', "SEARCH"))
			continue;
		size_t j = i + 1;
		while (j < L->n && !is_marker(&L->v[j], '=', NULL) && !is_marker(&L->v[j], '<', "SEARCH"))
			j++;
		if (j == L->n || !is_marker(&L->v[j], '=', NULL)) {
			*err = xasprintf("edit %zu is incomplete: its SEARCH part has no ======= line after "
					 "it%s", E->n + 1, truncated ? " (your reply was cut off at the token limit)" : "");
			return -1;
		}
		size_t k = j + 1;
		while (k < L->n && !is_marker(&L->v[k], '>', "REPLACE") && !is_marker(&L->v[k], '<', "SEARCH"))
			k++;
		if (k == L->n || !is_marker(&L->v[k], '>', "REPLACE")) {
			*err = xasprintf("edit %zu is incomplete: no >>>>>>> REPLACE line ends it%s", E->n + 1,
					 truncated ? " (your reply was cut off at the token limit)" : "");
			return -1;
		}
		struct edit e = { { 0 }, { 0 } };
		for (size_t x = i + 1; x < j; x++)
			lines_push(&e.search, L->v[x].p, L->v[x].n);
		for (size_t x = j + 1; x < k; x++)
			lines_push(&e.repl, L->v[x].p, L->v[x].n);
		if (edits_add(E, &e, err))
			return -1;
		i = k;
	}
	return 0;
}

static int starts(const struct line *l, const char *s)
{
	size_t k = strlen(s);
	return l->n >= k && !memcmp(l->p, s, k);
}

static int is_hunk_header(const struct line *l)
{
	return starts(l, "@@ ") || (l->n == 2 && starts(l, "@@"));
}

/*
 * The hunks of a unified diff in lines [from, to) as edits: context and '-' lines are what to
 * find, context and '+' lines what replaces them; the line numbers are not trusted. 0 with no
 * hunk found leaves E empty.
 */
static int parse_diff(const struct lines *L, size_t from, size_t to, struct edits *E, char **err)
{
	for (size_t i = from; i < to; i++) {
		if (!is_hunk_header(&L->v[i]))
			continue;
		struct edit e = { { 0 }, { 0 } };
		size_t j = i + 1;
		for (; j < to; j++) {
			const struct line *l = &L->v[j];
			if (is_hunk_header(l) || starts(l, "--- ") || starts(l, "+++ ") ||
			    starts(l, "diff "))
				break;
			if (l->n == 0) {
				lines_push(&e.search, l->p, 0);
				lines_push(&e.repl, l->p, 0);
			} else if (l->p[0] == ' ') {
				lines_push(&e.search, l->p + 1, l->n - 1);
				lines_push(&e.repl, l->p + 1, l->n - 1);
			} else if (l->p[0] == '-') {
				lines_push(&e.search, l->p + 1, l->n - 1);
			} else if (l->p[0] == '+') {
				lines_push(&e.repl, l->p + 1, l->n - 1);
			} else if (l->p[0] == '\\') {
				continue; /* "\ No newline at end of file" */
			} else {
				break;
			}
		}
		/* blank lines after the hunk are prose spacing, not context */
		while (e.search.n && e.repl.n && !e.search.v[e.search.n - 1].n &&
		       !e.repl.v[e.repl.n - 1].n) {
			e.search.n--;
			e.repl.n--;
		}
		if (edits_add(E, &e, err))
			return -1;
		i = j - 1;
	}
	return 0;
}

/* Counts where k search lines match K, exactly or (ws) with leading blanks ignored. */
static size_t find_edit(const struct lines *K, const struct lines *S, int ws, size_t *at,
			size_t *first_at, size_t nfirst)
{
	size_t found = 0, k = S->n;
	for (size_t i = 0; i + k <= K->n; i++) {
		size_t j = 0;
		while (j < k && (ws ? lines_equal_ws(&K->v[i + j], &S->v[j])
				    : lines_equal(&K->v[i + j], &S->v[j])))
			j++;
		if (j == k) {
			if (found < nfirst)
				first_at[found] = i + 1;
			if (!found)
				*at = i;
			found++;
		}
	}
	return found;
}

/* Applies the edits one after another to current; the result in out. *ws_edits counts the
 * edits that matched only with indentation ignored. */
static int apply_edits(const struct edits *E, const char *current, struct strbuf *out,
		       int *ws_edits, char **err)
{
	struct strbuf cur = STRBUF_INIT, next = STRBUF_INIT;
	strbuf_addstr(&cur, current);
	int rc = -1;
	*ws_edits = 0;
	for (size_t e = 0; e < E->n; e++) {
		const struct edit *ed = &E->v[e];
		size_t k = ed->search.n;
		struct lines K = { 0 };
		split_lines(cur.buf, cur.len, &K);
		if (K.n > REPLY_MAX_LINES || k > REPLY_MAX_LINES / 4) {
			/* bounds the matching work (lines x search lines) on untrusted input */
			*err = xasprintf("edit %zu is too large to match (%zu search lines against a kernel "
					 "of %zu lines): reply with the whole file", e + 1, k, K.n);
			free(K.v);
			goto out;
		}
		if (k == 0) {
			*err = xasprintf("edit %zu has an empty SEARCH part: quote the exact lines of the "
					 "current kernel to replace", e + 1);
			free(K.v);
			goto out;
		}
		size_t at = 0, first_at[4];
		size_t found = find_edit(&K, &ed->search, 0, &at, first_at, ARRAY_SIZE(first_at));
		size_t ws_found = 0;
		if (!found) {
			/* spaces for tabs and the like: unique modulo indentation is unambiguous */
			ws_found = find_edit(&K, &ed->search, 1, &at, first_at, ARRAY_SIZE(first_at));
			if (ws_found == 1) {
				found = 1;
				(*ws_edits)++;
			}
		}
		if (found != 1) {
			char *q = quote_line(&ed->search.v[0]);
			struct strbuf w = STRBUF_INIT;
			size_t nf = found ? found : ws_found;
			for (size_t i = 0; i < nf && i < ARRAY_SIZE(first_at); i++)
				strbuf_addf(&w, "%s%zu", i ? ", " : "", first_at[i]);
			if (ws_found > 1) {
				*err = xasprintf("edit %zu did not apply: its SEARCH text (%zu lines, "
						 "starting \"%s\") was not found as written; only the "
						 "indentation differs from the kernel's, and ignoring it "
						 "the text matches %zu places (lines %s%s). Copy the lines "
						 "with their exact indentation (tabs or spaces) and enough of "
						 "them to match once", e + 1, k, q, ws_found, w.buf,
						 ws_found > ARRAY_SIZE(first_at) ? ", ..." : "");
			} else if (!found) {
				/* where its first line alone matches, to say how close it came */
				size_t line1 = 0;
				for (size_t i = 0; i < K.n && !line1; i++)
					if (lines_equal_ws(&K.v[i], &ed->search.v[0]))
						line1 = i + 1;
				if (line1)
					*err = xasprintf("edit %zu did not apply: its SEARCH text (%zu lines, "
							 "starting \"%s\") was not found in the current "
							 "kernel; its first line matches line %zu but "
							 "the lines after it differ. Copy the lines "
							 "exactly as they are now", e + 1, k, q, line1);
				else
					*err = xasprintf("edit %zu did not apply: its SEARCH text (%zu lines, "
							 "starting \"%s\") was not found in the current "
							 "kernel%s. Copy the lines exactly as they are now",
							 e + 1, k, q, e ? " (as changed by the edits before it)" : "");
			} else {
				*err = xasprintf("edit %zu did not apply: its SEARCH text (starting \"%s\") "
						 "was found %zu times (at lines %s%s): include more "
						 "surrounding lines so it matches exactly once", e + 1, q, found,
						 w.buf, found > ARRAY_SIZE(first_at) ? ", ..." : "");
			}
			strbuf_release(&w);
			free(q);
			free(K.v);
			goto out;
		}
		strbuf_reset(&next);
		add_lines(&next, K.v, 0, at);
		add_lines(&next, ed->repl.v, 0, ed->repl.n);
		add_lines(&next, K.v, at + k, K.n);
		free(K.v);
		if (next.len > REPLY_MAX_SOURCE) {
			*err = xasprintf("the kernel after edit %zu is larger than %zu bytes", e + 1,
					 REPLY_MAX_SOURCE);
			goto out;
		}
		struct strbuf t = cur;
		cur = next;
		next = t;
	}
	strbuf_reset(out);
	strbuf_add(out, cur.buf, cur.len);
	rc = 0;
out:
	strbuf_release(&cur);
	strbuf_release(&next);
	return rc;
}

static int is_ident(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/*
 * Whether lines [from, to) define the entry point: "int cutegen_launch(" with the return type
 * before the name (on the same line or the one before), not a call ("rc = cutegen_launch(")
 * nor a mention in a comment.
 */
static int defines_entry(const struct lines *L, size_t from, size_t to)
{
	static const char name[] = "cutegen_launch";
	for (size_t i = from; i < to; i++) {
		const struct line *l = &L->v[i];
		for (size_t x = 0; x + sizeof(name) - 1 <= l->n; x++) {
			if (memcmp(l->p + x, name, sizeof(name) - 1) || (x && is_ident(l->p[x - 1])))
				continue;
			size_t y = x + sizeof(name) - 1;
			while (y < l->n && (l->p[y] == ' ' || l->p[y] == '\t'))
				y++;
			if (y < l->n && l->p[y] != '(')
				continue;
			/* the word before it: on this line, else at the end of the previous one */
			const char *p = l->p;
			size_t b = x;
			while (b && (p[b - 1] == ' ' || p[b - 1] == '\t'))
				b--;
			if (!b && i > from) {
				p = L->v[i - 1].p;
				b = rtrim_len(&L->v[i - 1]);
			}
			if (b >= 3 && !memcmp(p + b - 3, "int", 3) && (b == 3 || !is_ident(p[b - 4])))
				return 1;
		}
	}
	return 0;
}

static int mentions_entry(const struct lines *L, size_t from, size_t to)
{
	for (size_t j = from; j < to; j++)
		if (mem_has(L->v[j].p, L->v[j].n, "cutegen_launch"))
			return 1;
	return 0;
}

static int has_hunks(const struct lines *L, size_t from, size_t to)
{
	for (size_t j = from; j < to; j++)
		if (is_hunk_header(&L->v[j]))
			return 1;
	return 0;
}

/* A fence line: up to 3 spaces, then 3+ backticks or tildes; *info set to what follows. */
static int is_fence_any(const struct line *l, char *ch, size_t *ticks, const char **info,
			size_t *info_len)
{
	size_t i = 0, n = rtrim_len(l);
	while (i < n && i < 3 && l->p[i] == ' ')
		i++;
	if (i >= n || (l->p[i] != '`' && l->p[i] != '~'))
		return 0;
	char c = l->p[i];
	size_t k = 0;
	while (i < n && l->p[i] == c)
		i++, k++;
	if (k < 3)
		return 0;
	while (i < n && (l->p[i] == ' ' || l->p[i] == '\t'))
		i++;
	*ch = c;
	*ticks = k;
	*info = l->p + i;
	*info_len = n - i;
	return 1;
}

struct block {
	size_t from, to;   /* content lines */
	int diff;          /* ```diff / ```patch, or hunks inside */
	int defines;
};

#define MAX_BLOCKS 256

/* Whether a line starts source code (the raw-file form, after prose). */
static int code_start(const struct line *l)
{
	static const char *const w[] = { "#include", "#pragma", "#define", "//", "/*", "template",
					 "__global__", "namespace", "using ", "struct ", "CUTEGEN_" };
	for (size_t i = 0; i < ARRAY_SIZE(w); i++)
		if (starts(l, w[i]))
			return 1;
	return 0;
}

static int source_end(const struct line *l)
{
	size_t n = rtrim_len(l);
	return n && (l->p[n - 1] == '}' || l->p[n - 1] == ';' || l->p[0] == '#' ||
		     (n > 1 && l->p[0] == '/' && l->p[1] == '/'));
}

static int take_source(const struct lines *L, size_t from, size_t to, struct strbuf *out, char **err)
{
	strbuf_reset(out);
	add_lines(out, L->v, from, to);
	if (out->len > REPLY_MAX_SOURCE) {
		*err = xasprintf("the kernel in your reply is larger than %zu bytes", REPLY_MAX_SOURCE);
		return -1;
	}
	return 0;
}

/*
 * The whole-file and diff forms. The kernel is the last complete fenced block that defines the
 * entry point; a unified diff (```diff, or hunks) is taken as edits; with no fence, a raw file
 * after at most a few lines of prose. *form and *note say what was taken.
 */
static int take_fenced(const struct lines *L, int truncated, const char *current,
		       struct strbuf *out, enum reply_form *form, struct strbuf *note, char **err)
{
	struct block b[MAX_BLOCKS];
	size_t nb = 0, nall = 0;
	int open = 0;
	char open_ch = 0;
	size_t open_ticks = 0, start = 0, info_diff = 0;
	for (size_t i = 0; i < L->n; i++) {
		size_t ticks, il;
		const char *info;
		char ch;
		if (!is_fence_any(&L->v[i], &ch, &ticks, &info, &il))
			continue;
		if (!open) {
			open = 1;
			open_ch = ch;
			open_ticks = ticks;
			start = i + 1;
			info_diff = (il >= 4 && !memcmp(info, "diff", 4)) ||
				    (il >= 5 && !memcmp(info, "patch", 5));
		} else if (il == 0 && ch == open_ch && ticks >= open_ticks) {
			open = 0;
			nall++;
			if (nb < MAX_BLOCKS) {
				b[nb].from = start;
				b[nb].to = i;
				b[nb].diff = info_diff || has_hunks(L, start, i);
				b[nb].defines = !b[nb].diff && defines_entry(L, start, i);
				nb++;
			}
		}
	}
	/* the kernel: the last block that defines the entry point */
	for (size_t x = nb; x-- > 0;) {
		if (!b[x].defines)
			continue;
		if (nall > 1)
			strbuf_addf(note, "code block %zu of %zu (reply lines %zu-%zu), the one that "
				    "defines cutegen_launch", x + 1, nall, b[x].from, b[x].to);
		*form = REPLY_FILE;
		return take_source(L, b[x].from, b[x].to, out, err);
	}
	/* a unified diff: its hunks as edits of the current kernel */
	struct edits E = { 0 };
	int rc = -1;
	size_t dfrom = 0, dto = 0;
	for (size_t x = nb; x-- > 0;)
		if (b[x].diff) {
			dfrom = b[x].from;
			dto = b[x].to;
			break;
		}
	if (!dto && !nall && has_hunks(L, 0, L->n))
		dto = L->n;
	if (dto) {
		if (parse_diff(L, dfrom, dto, &E, err))
			goto out;
		if (!E.n) {
			*err = xstrdup("your reply's diff has no hunks (no @@ line): reply with "
				       "SEARCH/REPLACE edits or the whole file");
			goto out;
		}
		if (!current) {
			*err = xstrdup("your reply is a diff, but there is no kernel to change yet: "
				       "reply with the whole kernel in one ```cuda fenced block");
			goto out;
		}
		int ws = 0;
		if (apply_edits(&E, current, out, &ws, err))
			goto out;
		strbuf_addf(note, "the unified diff (%zu hunk%s, applied as edits, its line numbers "
			    "ignored)", E.n, E.n == 1 ? "" : "s");
		if (ws)
			strbuf_addf(note, "; %d of them matched only with indentation ignored", ws);
		*form = REPLY_EDITS;
		rc = 0;
		goto out;
	}
	if (open) {
		*err = xasprintf("your reply was cut off before its code block closed%s: reply with a "
				 "shorter kernel%s", truncated ? " (it reached the token limit)" : "",
				 current ? ", or with SEARCH/REPLACE edits of the current one"
					 : " and less prose before it");
		goto out;
	}
	if (nall) {
		int calls = 0;
		for (size_t x = 0; x < nb; x++)
			calls |= mentions_entry(L, b[x].from, b[x].to);
		if (calls)
			*err = xstrdup("your reply's code blocks call or mention cutegen_launch but none "
				       "defines it: reply with the whole .cu file (includes, kernels and "
				       "the CUTEGEN_KERNEL int cutegen_launch(...) definition) in one "
				       "```cuda block");
		else
			*err = xstrdup("your reply's code block has no cutegen_launch entry point: reply "
				       "with the whole .cu file (includes, kernels and the CUTEGEN_KERNEL "
				       "int cutegen_launch(...) definition) in one ```cuda block");
		goto out;
	}
	/* No fence at all: a raw source file, after at most a few lines of prose, up to its
	   last line of code (a Change: line or prose after it is not code). */
	size_t first = 0;
	while (first < L->n && first < 8 && !code_start(&L->v[first]))
		first++;
	if (first < L->n && code_start(&L->v[first])) {
		size_t last = L->n;
		while (last > first && !source_end(&L->v[last - 1]))
			last--;
		if (last > first && defines_entry(L, first, last)) {
			if (first || last < L->n)
				strbuf_addf(note, "the source file in reply lines %zu-%zu (no code fence)",
					    first + 1, last);
			*form = REPLY_FILE;
			rc = take_source(L, first, last, out, err);
			goto out;
		}
	}
	*err = xasprintf("your reply had no code block%s: reply with the whole kernel in one ```cuda "
			 "fenced block%s", truncated ? " (it was cut off at the token limit)" : "",
			 current ? ", or with SEARCH/REPLACE edits of the current kernel"
				 : " (there is no kernel to edit yet)");
out:
	edits_release(&E);
	return rc;
}

static const char *find_ci(const char *p, const char *end, const char *needle)
{
	size_t k = strlen(needle);
	for (; p + k <= end; p++)
		if (!strncasecmp(p, needle, k))
			return p;
	return NULL;
}

/*
 * The reply without its reasoning: <think>, <thinking> and <reasoning> blocks (closed ones;
 * an unclosed tag is left as text), and, when a closing tag comes with no opening one (some
 * servers strip it), everything before it. Returns how many blocks were dropped.
 */
static int strip_reasoning(const char *text, size_t len, struct strbuf *out)
{
	static const char *const tags[] = { "think", "thinking", "reasoning" };
	const char *p = text, *end = text + len;
	int dropped = 0;
	/* a close with no open before it */
	for (size_t t = 0; t < ARRAY_SIZE(tags); t++) {
		char close[24], open[24];
		snprintf(close, sizeof(close), "</%s>", tags[t]);
		snprintf(open, sizeof(open), "<%s>", tags[t]);
		const char *c = find_ci(p, end, close);
		if (c && !find_ci(p, c, open)) {
			p = c + strlen(close);
			dropped++;
		}
	}
	while (p < end) {
		const char *best = NULL;
		size_t bt = 0;
		for (size_t t = 0; t < ARRAY_SIZE(tags); t++) {
			char open[24];
			snprintf(open, sizeof(open), "<%s>", tags[t]);
			const char *o = find_ci(p, best ? best : end, open);
			if (o && (!best || o < best)) {
				best = o;
				bt = t;
			}
		}
		if (!best)
			break;
		char close[24];
		snprintf(close, sizeof(close), "</%s>", tags[bt]);
		const char *c = find_ci(best, end, close);
		if (!c) {
			break; /* unclosed: not a reasoning block we can delimit */
		}
		strbuf_add(out, p, (size_t)(best - p));
		strbuf_addch(out, '\n');
		p = c + strlen(close);
		dropped++;
	}
	strbuf_add(out, p, (size_t)(end - p));
	return dropped;
}

int reply_parse(const char *text, size_t len, int truncated, const char *current,
		struct strbuf *out, enum reply_form *form, char **note, char **err)
{
	struct lines L = { 0 };
	struct edits E = { 0 };
	struct strbuf clean = STRBUF_INIT, what = STRBUF_INIT;
	int rc = -1;
	*form = REPLY_NONE;
	if (note)
		*note = NULL;
	if (len > REPLY_MAX_TEXT) {
		*err = xasprintf("your reply is %zu bytes, more than the %zu accepted: reply with the "
				 "kernel only", len, REPLY_MAX_TEXT);
		return -1;
	}
	int thought = strip_reasoning(text, len, &clean);
	split_lines(clean.buf, clean.len, &L);
	if (parse_edits(&L, truncated, &E, err))
		goto out;
	if (E.n) {
		if (!current) {
			*err = xstrdup("your reply has SEARCH/REPLACE edits, but there is no kernel to edit "
				       "yet: reply with the whole kernel in one ```cuda fenced block");
			goto out;
		}
		int ws = 0;
		if (apply_edits(&E, current, out, &ws, err))
			goto out;
		if (ws)
			strbuf_addf(&what, "%zu SEARCH/REPLACE edit%s (%d matched only with indentation "
				    "ignored: copy lines with their exact tabs or spaces)", E.n,
				    E.n == 1 ? "" : "s", ws);
		*form = REPLY_EDITS;
		rc = 0;
		goto out;
	}
	if (take_fenced(&L, truncated, current, out, form, &what, err))
		goto out;
	rc = 0;
out:
	if (!rc && thought)
		strbuf_addf(&what, "%s(the code inside your reasoning block%s was ignored)",
			    what.len ? " " : "the code after your reasoning ", thought > 1 ? "s" : "");
	if (!rc && note && what.len)
		*note = strbuf_detach(&what, NULL);
	if (rc)
		*form = REPLY_NONE;
	strbuf_release(&what);
	strbuf_release(&clean);
	free(L.v);
	edits_release(&E);
	return rc;
}

const char *reply_form_name(enum reply_form f)
{
	switch (f) {
	case REPLY_FILE: return "file";
	case REPLY_EDITS: return "edits";
	default: return "none";
	}
}
