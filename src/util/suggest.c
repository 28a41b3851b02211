/* "Did you mean": ranking known names against a mistyped word; see suggest.h. */
#include "util/suggest.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define SUGGEST_MAX_LEN 256 /* longer words or names are never close */

int suggest_distance(const char *a, const char *b)
{
	/* git's levenshtein.c: three rows, a transposition counts as one step of weight 0 */
	const int w = 0, s = 2, ins = 1, del = 3;
	size_t la = strlen(a), lb = strlen(b);
	if (la > SUGGEST_MAX_LEN || lb > SUGGEST_MAX_LEN)
		return INT_MAX / 2;
	int *row0 = xcalloc(lb + 1, sizeof(int)), *row1 = xcalloc(lb + 1, sizeof(int)),
	    *row2 = xcalloc(lb + 1, sizeof(int));
	for (size_t j = 0; j <= lb; j++)
		row1[j] = (int)j * ins;
	for (size_t i = 0; i < la; i++) {
		row2[0] = (int)(i + 1) * del;
		for (size_t j = 0; j < lb; j++) {
			row2[j + 1] = row1[j] + s * (a[i] != b[j]);
			if (i > 0 && j > 0 && a[i - 1] == b[j] && a[i] == b[j - 1] &&
			    row2[j + 1] > row0[j - 1] + w)
				row2[j + 1] = row0[j - 1] + w;
			if (row2[j + 1] > row1[j + 1] + del)
				row2[j + 1] = row1[j + 1] + del;
			if (row2[j + 1] > row2[j] + ins)
				row2[j + 1] = row2[j] + ins;
		}
		int *t = row0;
		row0 = row1;
		row1 = row2;
		row2 = t;
	}
	int d = row1[lb];
	free(row0);
	free(row1);
	free(row2);
	return d;
}

static int is_sep(char c)
{
	return c == '/' || c == '_' || c == '-';
}

/* word is a whole component of name: "relu" in "kb1/19_relu", "19" in "kb1/19_relu" */
static int has_component(const char *name, const char *word)
{
	size_t wl = strlen(word);
	if (!wl)
		return 0;
	for (const char *p = name; (p = strstr(p, word)); p++)
		if ((p == name || is_sep(p[-1])) && (!p[wl] || is_sep(p[wl])))
			return 1;
	return 0;
}

static int starts(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

static int ends(const char *s, const char *p)
{
	size_t a = strlen(s), b = strlen(p);
	return a >= b && !strcmp(s + a - b, p);
}

/* lower is closer; INT_MAX when not close at all */
static int score(const char *word, const char *name)
{
	size_t wl = strlen(word);
	if (!wl || wl > SUGGEST_MAX_LEN)
		return INT_MAX;
	if (has_component(name, word))
		return 0;
	if (wl >= 2 && (starts(name, word) || ends(name, word)))
		return 1;
	const char *base = strrchr(name, '/');
	int d = suggest_distance(word, name);
	if (base) {
		int db = suggest_distance(word, base + 1);
		if (db < d)
			d = db;
	}
	/* as git: a swap is free, so "rleu" is as close to "relu" as a prefix; beyond that, the
	 * word must stay recognisable (no more edits than it has letters, and fewer than 7) */
	if (d >= 7 || d > (int)wl)
		return INT_MAX;
	return 2 + d;
}

size_t suggest_similar(const char *word, const char *const *cands, size_t n, const char **out,
		       size_t max)
{
	int best = INT_MAX;
	int *sc = xcalloc(n ? n : 1, sizeof(int));
	for (size_t i = 0; i < n; i++) {
		sc[i] = score(word, cands[i]);
		if (sc[i] < best)
			best = sc[i];
	}
	size_t k = 0;
	for (size_t i = 0; i < n && k < max && best != INT_MAX; i++)
		if (sc[i] == best)
			out[k++] = cands[i];
	free(sc);
	return k;
}

void suggest_format(struct strbuf *sb, const char *prefix, const char *const *names, size_t k)
{
	if (!k)
		return;
	strbuf_addstr(sb, k == 1 ? " (did you mean " : " (did you mean one of ");
	for (size_t i = 0; i < k; i++)
		strbuf_addf(sb, "%s'%s%s'", i ? ", " : "", prefix, names[i]);
	strbuf_addstr(sb, "?)");
}
