/*
 * "Did you mean ...?": picks, from a list of known names, the ones closest to a word the user
 * typed, the way git's help.c does for mistyped commands (a weighted edit distance in which a
 * swap of two neighbours is free, plus matches of a prefix, a suffix or a whole component).
 * It only ranks names; callers word the message (suggest_format helps).
 */
#ifndef CUTEGEN_SUGGEST_H
#define CUTEGEN_SUGGEST_H

#include <stddef.h>

struct strbuf;

/*
 * Weighted edit distance from a to b with git's weights: swap of adjacent characters 0,
 * substitution 2, insertion 1, deletion 3.
 */
int suggest_distance(const char *a, const char *b);

/*
 * Fills out[0..max-1] with the names in cands[0..n-1] closest to word (pointers into cands, in
 * the order of cands) and returns how many; 0 when none is close enough to be worth naming.
 * A name is close when word is one of its components (split at '/', '_', '-': "relu" and "19"
 * in "kb1/19_relu"), a prefix or suffix of it, or within a small edit distance of it or of its
 * part after the last '/'. Only the closest group is returned.
 */
size_t suggest_similar(const char *word, const char *const *cands, size_t n, const char **out,
		       size_t max);

/*
 * Appends " (did you mean 'a'?)" or " (did you mean one of 'a', 'b'?)" for the k names, each
 * written as prefix + name (e.g. "--" for flags). Appends nothing when k is 0.
 */
void suggest_format(struct strbuf *sb, const char *prefix, const char *const *names, size_t k);

#endif
