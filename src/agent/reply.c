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

/* A fence line: up to 3 spaces, then 3+ backticks; *info set to what follows them. */
static int is_fence(const struct line *l, size_t *ticks, const char **info, size_t *info_len)
{
	size_t i = 0, n = rtrim_len(l);
	while (i < n && i < 3 && l->p[i] == ' ')
		i++;
	size_t k = 0;
	while (i < n && l->p[i] == '`')
		i++, k++;
	if (k < 3)
		return 0;
	while (i < n && (l->p[i] == ' ' || l->p[i] == '\t'))
		i++;
	*ticks = k;
	*info = l->p + i;
	*info_len = n - i;
	return 1;
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

/* A short printable quote of a line for a message. */
static char *quote_line(const struct line *l)
{
	size_t n = rtrim_len(l), i = 0;
	while (i < n && (l->p[i] == ' ' || l->p[i] == '\t'))
		i++;
	size_t m = n - i > 80 ? 80 : n - i;
	char *q = xstrndup(l->p + i, m);
	for (char *c = q; *c; c++)
		if ((unsigned char)*c < ' ')
			*c = ' ';
	if (n - i > 80) {
		char *t = xasprintf("%s...", q);
		free(q);
		q = t;
	}
	return q;
}

struct edit {
	size_t s0, s1; /* SEARCH lines [s0, s1) of the reply */
	size_t r0, r1; /* REPLACE lines */
};

static int parse_edits(const struct lines *L, int truncated, struct edit **out, size_t *nout,
		       char **err)
{
	struct edit *v = NULL;
	size_t n = 0, alloc = 0;
	for (size_t i = 0; i < L->n; i++) {
		if (!is_marker(&L->v[i], '<', "SEARCH"))
			continue;
		if (n == REPLY_MAX_EDITS) {
			*err = xasprintf("your reply has more than %d SEARCH/REPLACE edits: make fewer, "
					 "larger edits, or reply with the whole file", REPLY_MAX_EDITS);
			goto fail;
		}
		struct edit e = { i + 1, 0, 0, 0 };
		size_t j = i + 1;
		while (j < L->n && !is_marker(&L->v[j], '=', NULL) && !is_marker(&L->v[j], '<', "SEARCH"))
			j++;
		if (j == L->n || !is_marker(&L->v[j], '=', NULL)) {
			*err = xasprintf("edit %zu is incomplete: its SEARCH part has no ======= line after "
					 "it%s", n + 1, truncated ? " (your reply was cut off at the token limit)" : "");
			goto fail;
		}
		e.s1 = j;
		e.r0 = j + 1;
		size_t k = j + 1;
		while (k < L->n && !is_marker(&L->v[k], '>', "REPLACE") && !is_marker(&L->v[k], '<', "SEARCH"))
			k++;
		if (k == L->n || !is_marker(&L->v[k], '>', "REPLACE")) {
			*err = xasprintf("edit %zu is incomplete: no >>>>>>> REPLACE line ends it%s", n + 1,
					 truncated ? " (your reply was cut off at the token limit)" : "");
			goto fail;
		}
		e.r1 = k;
		ALLOC_GROW(v, n + 1, alloc);
		v[n++] = e;
		i = k;
	}
	*out = v;
	*nout = n;
	return 0;
fail:
	free(v);
	return -1;
}

/* Applies the edits one after another to current; the result in out. */
static int apply_edits(const struct lines *R, const struct edit *edits, size_t ne,
		       const char *current, struct strbuf *out, char **err)
{
	struct strbuf cur = STRBUF_INIT, next = STRBUF_INIT;
	strbuf_addstr(&cur, current);
	int rc = -1;
	for (size_t e = 0; e < ne; e++) {
		const struct edit *ed = &edits[e];
		size_t k = ed->s1 - ed->s0;
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
		size_t found = 0, at = 0, first_at[4];
		for (size_t i = 0; i + k <= K.n; i++) {
			size_t j = 0;
			while (j < k && lines_equal(&K.v[i + j], &R->v[ed->s0 + j]))
				j++;
			if (j == k) {
				if (found < ARRAY_SIZE(first_at))
					first_at[found] = i + 1;
				if (!found)
					at = i;
				found++;
			}
		}
		if (found != 1) {
			char *q = quote_line(&R->v[ed->s0]);
			if (!found) {
				/* where its first line alone matches, to say how close it came */
				size_t line1 = 0;
				for (size_t i = 0; i < K.n && !line1; i++)
					if (lines_equal(&K.v[i], &R->v[ed->s0]))
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
				struct strbuf w = STRBUF_INIT;
				for (size_t i = 0; i < found && i < ARRAY_SIZE(first_at); i++)
					strbuf_addf(&w, "%s%zu", i ? ", " : "", first_at[i]);
				*err = xasprintf("edit %zu did not apply: its SEARCH text (starting \"%s\") "
						 "was found %zu times (at lines %s%s): include more "
						 "surrounding lines so it matches exactly once", e + 1, q, found,
						 w.buf, found > ARRAY_SIZE(first_at) ? ", ..." : "");
				strbuf_release(&w);
			}
			free(q);
			free(K.v);
			goto out;
		}
		strbuf_reset(&next);
		add_lines(&next, K.v, 0, at);
		add_lines(&next, R->v, ed->r0, ed->r1);
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

static int take_fenced(const struct lines *L, int truncated, struct strbuf *out, char **err)
{
	size_t best0 = 0, best1 = 0, blocks = 0;
	int have = 0, open = 0;
	size_t open_ticks = 0, start = 0;
	for (size_t i = 0; i < L->n; i++) {
		size_t ticks, il;
		const char *info;
		if (!is_fence(&L->v[i], &ticks, &info, &il))
			continue;
		if (!open) {
			open = 1;
			open_ticks = ticks;
			start = i + 1;
		} else if (il == 0 && ticks >= open_ticks) {
			open = 0;
			blocks++;
			int has = 0;
			for (size_t j = start; j < i && !has; j++)
				has = mem_has(L->v[j].p, L->v[j].n, "cutegen_launch");
			if (has) {
				best0 = start;
				best1 = i;
				have = 1;
			}
		}
	}
	if (have) {
		strbuf_reset(out);
		add_lines(out, L->v, best0, best1);
		if (out->len > REPLY_MAX_SOURCE) {
			*err = xasprintf("the kernel in your reply is larger than %zu bytes", REPLY_MAX_SOURCE);
			return -1;
		}
		return 0;
	}
	if (open) {
		*err = xasprintf("your reply was cut off before its code block closed%s: reply with a "
				 "shorter kernel, or with SEARCH/REPLACE edits of the current one",
				 truncated ? " (it reached the token limit)" : "");
		return -1;
	}
	if (blocks) {
		*err = xstrdup("your reply's code block has no cutegen_launch entry point: reply with the "
			       "whole .cu file (includes, kernels and the extern \"C\" cutegen_launch) in "
			       "one ```cuda block");
		return -1;
	}
	/* No fence at all: a reply that is nothing but a source file is taken whole. */
	size_t first = 0;
	while (first < L->n && rtrim_len(&L->v[first]) == 0)
		first++;
	if (first < L->n) {
		const struct line *l = &L->v[first];
		int looks = l->n && (l->p[0] == '#' || (l->n > 1 && l->p[0] == '/' &&
							 (l->p[1] == '/' || l->p[1] == '*')));
		int has = 0;
		for (size_t j = first; j < L->n && !has; j++)
			has = mem_has(L->v[j].p, L->v[j].n, "cutegen_launch");
		if (looks && has) {
			strbuf_reset(out);
			add_lines(out, L->v, first, L->n);
			if (out->len > REPLY_MAX_SOURCE) {
				*err = xasprintf("the kernel in your reply is larger than %zu bytes",
						 REPLY_MAX_SOURCE);
				return -1;
			}
			return 0;
		}
	}
	*err = xasprintf("your reply had no code block%s: reply with the whole kernel in one ```cuda "
			 "fenced block, or with SEARCH/REPLACE edits of the current kernel",
			 truncated ? " (it was cut off at the token limit)" : "");
	return -1;
}

int reply_parse(const char *text, size_t len, int truncated, const char *current,
		struct strbuf *out, enum reply_form *form, char **err)
{
	struct lines L = { 0 };
	struct edit *edits = NULL;
	size_t ne = 0;
	int rc = -1;
	*form = REPLY_NONE;
	if (len > REPLY_MAX_TEXT) {
		*err = xasprintf("your reply is %zu bytes, more than the %zu accepted: reply with the "
				 "kernel only", len, REPLY_MAX_TEXT);
		return -1;
	}
	split_lines(text, len, &L);
	if (parse_edits(&L, truncated, &edits, &ne, err))
		goto out;
	if (ne) {
		if (!current) {
			*err = xstrdup("your reply has SEARCH/REPLACE edits, but there is no kernel to edit "
				       "yet: reply with the whole kernel in one ```cuda fenced block");
			goto out;
		}
		if (apply_edits(&L, edits, ne, current, out, err))
			goto out;
		*form = REPLY_EDITS;
		rc = 0;
		goto out;
	}
	if (take_fenced(&L, truncated, out, err))
		goto out;
	*form = REPLY_FILE;
	rc = 0;
out:
	free(L.v);
	free(edits);
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
