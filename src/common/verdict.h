/*
 * Verdicts on a candidate kernel: what the policy check, the build and the evaluator concluded.
 * One enum for the code, one name per verdict for the outside (the runner's JSON report, the
 * run store's `verdict` column, --json output, the HTML report): verdict_name() and
 * verdict_parse() convert, and the names never change (stores and reports keep them).
 * Not for: failures of cutegen itself (util/err.h): a verdict is a result, not an error.
 */
#ifndef CUTEGEN_VERDICT_H
#define CUTEGEN_VERDICT_H

enum verdict {
	VERDICT_NONE = 0,        /* not judged yet */
	VERDICT_PASS,            /* correct */
	/* the evaluator's (the runner's report) */
	VERDICT_INCORRECT,
	VERDICT_PRECISION,       /* close, but not within the task's precision contract */
	VERDICT_INPUTS_MODIFIED,
	VERDICT_STALE_OUTPUT,
	VERDICT_TIMING_ESCAPE,
	VERDICT_TIMING_MISMATCH, /* a timed call's output was wrong, the checked calls right */
	VERDICT_IMPLAUSIBLE,     /* a time beyond the GPU's copy roofline or compute peak */
	VERDICT_UNTRUSTED_REPORT,/* the report lacked the nonce, came twice, or the runner did not
				    end the way a runner ends (the evaluator's, not the runner's) */
	VERDICT_LAUNCH_ERROR,
	VERDICT_CUDA_ERROR,
	VERDICT_ABI_ERROR,
	VERDICT_TIMEOUT,
	VERDICT_CRASH,
	VERDICT_NO_DEVICE,
	VERDICT_TASK_ERROR,
	VERDICT_RUNNER_ERROR,
	/* before the evaluator: the agent's */
	VERDICT_POLICY,          /* the policy check refused the source */
	VERDICT_COMPILE_ERROR,
	VERDICT_BAD_REPLY,       /* the model's reply held no usable kernel */
	VERDICT_UNKNOWN          /* a name this build does not know (read from elsewhere) */
};

/* "pass", "incorrect", ...; "" for VERDICT_NONE, "unknown" for VERDICT_UNKNOWN. Static. */
const char *verdict_name(enum verdict v);
/* The verdict of a name; VERDICT_NONE for NULL or "", VERDICT_UNKNOWN for other names. */
enum verdict verdict_parse(const char *name);

#endif
