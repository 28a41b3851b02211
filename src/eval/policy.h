/*
 * Policy check: what a candidate kernel's source may not do, judged statically before it is
 * compiled (docs/policy.md lists the rules and why each exists). It reads the text only:
 * comments and the insides of string and character literals are ignored, line continuations
 * are joined, and every finding names the line of the original text where it starts.
 * Not for: catching everything. A determined source can hide a call from any static check;
 * the runner measures what the kernel does (stray streams, missing work, slow syncs).
 *
 * Usage:
 *   1. struct policy_report rep = POLICY_REPORT_INIT;
 *   2. policy_check(source, len, &rep): returns the number of violations (0 = clean);
 *   3. read rep.items[0..rep.nr); policy_format(&rep, &sb) renders them one a line;
 *   4. policy_report_release(&rep).
 */
#ifndef CUTEGEN_POLICY_H
#define CUTEGEN_POLICY_H

#include <stddef.h>

#include "util/strbuf.h"

/* Sources longer than this are rejected whole (rule "too-large"). */
#define POLICY_MAX_SOURCE (4u << 20)
/* At most this many violations are listed (the count in dropped says how many more). */
#define POLICY_MAX_VIOLATIONS 100

struct policy_violation {
	int line;          /* 1-based line of the source; 0 for the file as a whole */
	const char *rule;  /* static rule id: "no-sync", "include-allowlist", ... */
	char *message;     /* what and why, e.g. "cudaDeviceSynchronize is not allowed: ..." */
};

struct policy_report {
	struct policy_violation *items;
	size_t nr, alloc;
	size_t dropped;
};

#define POLICY_REPORT_INIT { NULL, 0, 0, 0 }

/* Checks source[0..len) and appends what it finds to rep; returns rep->nr + rep->dropped. */
int policy_check(const char *source, size_t len, struct policy_report *rep);

void policy_report_release(struct policy_report *rep);

/*
 * One line a violation, in line order:
 *   line 12: rule 'no-sync': cudaDeviceSynchronize is not allowed: the runner synchronizes;
 *   launch on the given stream
 * (file-wide ones say "file" instead of "line N").
 */
void policy_format(const struct policy_report *rep, struct strbuf *out);

/* The rule ids with a one-line summary each, ending with { NULL, NULL }. */
struct policy_rule {
	const char *id;
	const char *summary;
};
extern const struct policy_rule policy_rules[];

#endif
