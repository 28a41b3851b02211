/*
 * Structured debugging feedback: what the model is told about a candidate that failed, built
 * from what each stage of the judgement found. A compile error becomes the first error with
 * its instantiation chain trimmed and the numbered source lines around it; a policy violation
 * its rule lines; a wrong result the evaluator's message plus where the wrong elements are
 * (coordinates with got / want / tolerance, unwritten counts, how they cluster); a crash the
 * CUDA error and, when compute-sanitizer is installed, its memcheck report; a timeout the
 * deadline and the phase. Each text is capped (FEEDBACK_MAX) with a note when cut.
 * Not for: deciding whether to retry (agent.c).
 */
#ifndef CUTEGEN_FEEDBACK_H
#define CUTEGEN_FEEDBACK_H

#include <stddef.h>

#include "eval/build.h"
#include "eval/eval.h"
#include "eval/policy.h"
#include "common/task.h"
#include "util/strbuf.h"

#define FEEDBACK_MAX ((size_t)12 << 10)

/* "the policy check rejected the kernel before compiling:\n" (or, for the object check's
 * rules, "... the kernel's object code before linking it:") + one line per violation. */
void feedback_policy(const struct policy_report *rep, struct strbuf *out);

/* The compile's first error (diag_format_first_error), or the deadline, or the log's end. */
void feedback_compile(const struct build_result *br, const char *source, size_t len,
		      double deadline_s, struct strbuf *out);
/* The same, with the source named main_file (the user's path, after diag_list_map_file). */
void feedback_compile_file(const struct build_result *br, const char *source, size_t len,
			   double deadline_s, const char *main_file, struct strbuf *out);

/* A failed evaluation: verdict, message, and from the report the failing check's where,
 * counts and samples. Nothing for a pass. */
void feedback_eval(const struct eval_result *er, struct strbuf *out);

/*
 * Runs `compute-sanitizer --tool memcheck --print-limit 5 RUNNER --task T --kernel SO ...`
 * and appends the errors it reports (with the faulting kernel.cu lines) to out.
 * Returns 0 when it ran, 1 when compute-sanitizer is not installed, -1 on failure (*err).
 */
int feedback_memcheck(const char *runner, const struct task *t, const char *so_path,
		      double deadline_s, struct strbuf *out, char **err);

/* The useful lines of a compute-sanitizer log (errors, addresses, kernel.cu frames), capped;
 * appends to out and returns how many error records it saw. */
int feedback_memcheck_extract(const char *log, size_t len, struct strbuf *out);

/* Cuts out to FEEDBACK_MAX bytes (head kept), noting the cut. */
void feedback_cap(struct strbuf *out, size_t from);

#endif
