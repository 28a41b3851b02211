/*
 * The evaluator: measures the baselines in a process of their own (cutegen-baseline, cached per
 * task, GPU and driver), runs cutegen-runner on one compiled candidate in a process group of its
 * own, with a deadline, resource limits, a scrubbed environment and a scratch directory, reads
 * its JSON report from a pipe, accepts it only if it carries the nonce given to the runner on
 * stdin and the runner ended the way a runner ends, bounds its time by what the GPU can do
 * (implausible), and turns the outcome into a verdict with diagnostics. A crash, hang or sticky
 * CUDA error in the candidate becomes a verdict here, never a failure of cutegen.
 * Not for: compiling (build.h) or policy (policy.h); cmd_eval strings the three together.
 *
 * Usage:
 *   1. struct eval_opts o = EVAL_OPTS_INIT; adjust;
 *   2. struct eval_result r = EVAL_RESULT_INIT; eval_run(&o, task, so_path, &r, &err);
 *   3. read r (verdict, message, report, metrics); eval_result_release(&r).
 */
#ifndef CUTEGEN_EVAL_H
#define CUTEGEN_EVAL_H

#include "common/verdict.h"

#include <jansson.h>

#include "common/task.h"
#include "common/task_module.h"

struct reference_keep;

struct eval_opts {
	const char *runner;      /* path of cutegen-runner; NULL = beside the cutegen binary */
	int device;
	double deadline_s;       /* whole evaluation; 0 = default (600 s) */
	int quick;               /* one seed per distribution, fewer trials */
	int no_baseline;         /* no baseline process: no speedups, and no plausibility bound
				    here (the runner's, from the GPU's figures, remains) */
	const char *scratch_root;/* NULL = $TMPDIR or /tmp */
	int keep_scratch;
	int torch;               /* also time PyTorch eager (tools/torch_eager.py) when python3
				    with torch is here; adds baseline.torch_eager, eager and
				    torch.compile figures, to the report */
	const char *baseline_cache; /* where baselines are cached; NULL = $XDG_CACHE_HOME or
				       ~/.cache, then cutegen/baseline. The baseline program is
				       $CUTEGEN_BASELINE, else cutegen-baseline beside the runner */
	const struct module_desc *module; /* with task NULL: judge this module (not lowered to a
				       built-in op) through the reference process: its cases
				       prepared there (with eager and torch.compile baselines
				       when torch is set), handed to the runner as CUDA IPC
				       handles (docs/evaluation.md, "Module tasks") */
	struct reference_keep *keep; /* with module: a caller-owned slot (eval/reference.h) whose
				       session is reused while it fits and prepared into when it
				       does not; kept after a runner that ended normally with its
				       reference intact (eval_keeps_reference). NULL: prepared and
				       released within each evaluation */
};
#define EVAL_OPTS_INIT { NULL, 0, 0, 0, 0, NULL, 0, 0, NULL, NULL, NULL }

struct eval_result {
	enum verdict verdict; /* VERDICT_PASS, or how it failed (common/verdict.h): among them
				 timing_mismatch (a timed call's output was wrong), implausible (a
				 time beyond the GPU's limits), untrusted_report (the report failed
				 the nonce or the runner's ending) */
	char *message;      /* one paragraph a model and a person can act on */
	json_t *report;     /* the runner's report, or NULL when it wrote none (owned) */
	char *last_phase;   /* the runner's last phase line, e.g. "check normal seed 0" */
	char *log;          /* the runner's output (capped) */
	int exit_status;    /* runner exit code, or 128+signal */
	double wall_s;      /* the whole evaluation: baselines (measured or cached) and runner;
			       report.runner_wall_s is the runner's part */
	/* metrics (negative when unknown) */
	double ms, tflops, gbps, speedup, roofline_fraction, speedup_torch;
	int netns;          /* the runner ran without network (a network namespace of its own) */
	int code;           /* when eval_run returns -1: a code of util/err.h for the exit status
			       (CG_INPUT: the module's reference failed; CG_TIMEOUT: it hung;
			       CG_ENV: the machine), 0 when none was set */
};
#define EVAL_RESULT_INIT { VERDICT_NONE, NULL, NULL, NULL, NULL, 0, 0, -1, -1, -1, -1, -1, -1, 0, 0 }

/* Returns 0 when a verdict was reached (pass or not), -1 when the evaluation could not run at
 * all (no runner binary, no scratch space, a module's reference process that failed): *err then
 * says why (heap string) and r->code may give its code. t may be NULL with o->module set. */
/* Seconds one call of the candidate may take in the runner before its verdict is timeout:
 * $CUTEGEN_CALL_LIMIT, 0 for none, else 30 (a call of any sensible kernel for the largest
 * tasks takes well under a second; the timing loop calls it hundreds of times). A value that
 * is no such number: 30, and *why (when why is given) says so, for the command to print. */
double eval_call_limit(char **why);

int eval_run(const struct eval_opts *o, const struct task *t, const char *so_path,
	     struct eval_result *r, char **err);
void eval_result_release(struct eval_result *r);

/* Fills r from a runner report already on disk (recorded runs stand in for the GPU in tests). */
int eval_result_from_report(struct eval_result *r, const char *report_json, char **err);

/* Human-readable multi-line summary of a result (t NULL for a module task). */
void eval_format(const struct eval_result *r, const struct task *t, struct strbuf *out);

/* 1 when a kept reference session may serve the next candidate after r: the runner ended
 * normally (a verdict of the kernel's results: pass, incorrect, precision, inputs_modified,
 * stale_output, timing_escape, timing_mismatch or implausible) and its report says
 * module.reference_intact true. Anything else (a crash, timeout, runner, launch, CUDA or ABI
 * error, a refused report, no such field) drops the session. */
int eval_keeps_reference(const struct eval_result *r);

/* 1 when the verdict means the kernel is correct. */
int eval_passed(const struct eval_result *r);

/*
 * The GPUs the runner sees (`cutegen-runner --devices`): its JSON ({"devices": [...]}, owned by
 * the caller), or NULL with *err (the runner could not run, or printed no JSON). brief
 * (--devices --brief: what `run` and `suite` ask before they start) reads properties only and
 * makes no context on any GPU, so a suite's runs may ask while other GPUs time kernels.
 */
json_t *eval_list_devices(const char *runner, int brief, char **err);

#endif
