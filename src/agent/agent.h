/*
 * The agent loop: one evolving CuTe kernel for one task, generated, tested and refined in
 * stages (docs/agent.md). Stage 0 asks for the simplest correct kernel; a failure enters a
 * bounded debug loop fed by structured feedback; then the workload's optimization stages
 * (prompts/stages/WORKLOAD.txt) take one measured change per step, keeping the best verified
 * kernel and rolling back what is slower or wrong. Every node goes to the run store in one
 * transaction, and the loop's state is a pure function of the stored nodes, so a killed run
 * resumes exactly where its last complete node left it.
 * Not for: printing (cmd_run.c renders the events) or model configuration (llm/llm_config.h).
 *
 * Usage:
 *   1. struct agent_opts o = AGENT_OPTS_INIT; fill budgets, build/eval options, callbacks;
 *   2. struct agent *a = agent_new(task, store, llm_or_NULL, &o, &err);
 *   3. a resumed run: agent_restore(a, &err) replays the stored nodes;
 *   4. agent_run(a, &err) loops until a stop condition (0), or fails (-1, *err);
 *      agent_stop(a) and agent_totals(a) say why it stopped and what it cost; a module's
 *      reference process, kept across the run's candidates, has ended when it returns (and
 *      at the latest in agent_free);
 *   5. agent_free(a).
 */
#ifndef CUTEGEN_AGENT_H
#define CUTEGEN_AGENT_H

#include <signal.h>
#include <stddef.h>

#include "eval/build.h"
#include "eval/eval.h"
#include "llm/llm.h"
#include "store/store.h"
#include "common/task.h"
#include "common/task_module.h"

/* Set from a signal handler: the loop stops after the node in progress. */
extern volatile sig_atomic_t agent_interrupted;

enum agent_stop {
	AGENT_RUNNING = 0,
	AGENT_STOP_DONE,        /* every stage ran */
	AGENT_STOP_ITERS,       /* the node budget ran out */
	AGENT_STOP_TOKENS,
	AGENT_STOP_COST,
	AGENT_STOP_WALL,
	AGENT_STOP_NO_CORRECT,  /* stage 0 spent its budget without a correct kernel */
	AGENT_STOP_NO_MODEL,    /* no model: only the seed kernel was judged */
	AGENT_STOP_MODEL_ERROR, /* the model backend failed (after its retries) */
	AGENT_STOP_ENV_ERROR,   /* nvcc, the runner or a recorded evaluation is missing */
	AGENT_STOP_INTERRUPTED
};

/* "done", "iterations", ...: stable names for --json and the store. */
const char *agent_stop_name(enum agent_stop s);

/* What the loop has used so far and where it stands. */
struct agent_totals {
	int nodes, compiles, cache_hits, evals;
	long tokens_in, tokens_out;
	double cost_usd;
	double wall_s, llm_s, compile_s, eval_s, evaluator_s, profile_s;
	double compile_ahead_s;  /* compiles made ahead in parallel (builtin walks); in wall_s */
	double cut_s;            /* of wall_s: nodes cut short by an environment error (not stored) */
	long best_node;
	double best_ms, best_speedup, best_roof; /* < 0 = none yet */
	int stage;
	const char *stage_name;
	int planned;             /* builtin walks: the nodes the walk will have made in all if no
				    later candidate beats the best (a new best can move it); 0 = not
				    known (model runs: the --iters budget is the plan) */
	char last_verdict[32];   /* of the last node, "" before the first */
};

enum agent_event_kind {
	AGENT_EV_STAGE,     /* entered a stage: text = its name */
	AGENT_EV_PHASE,     /* a node's phase begins: text = "llm", "compile", "evaluate"... */
	AGENT_EV_TOKENS,    /* the model's reply is streaming: tokens = received so far */
	AGENT_EV_NODE,      /* a node is stored: node */
	AGENT_EV_NOTE,      /* something the user should read once: text */
	AGENT_EV_INFO       /* what is happening, a line of progress (--quiet drops it): text */
};

struct agent_event {
	enum agent_event_kind kind;
	const char *text;
	const struct store_node *node;
	long tokens;
	const struct agent_totals *totals;
};

typedef void (*agent_event_fn)(void *ctx, const struct agent_event *ev);

struct agent_opts {
	int iters;               /* nodes in all (model calls + seed); default 20 */
	int fix_attempts;        /* fixes per step after its first try; default 3 */
	long max_tokens_total;   /* in + out; 0 = no limit */
	double max_cost;         /* USD; 0 = no limit */
	double max_wall;         /* seconds of node time; 0 = no limit */
	int profile_from_stage;  /* -1 = the workload's default (gemm 2, others 1) */
	double noise;            /* a pass slower than the best by more than this fraction is a
				    regression; default 0.02 */
	size_t prompt_budget;    /* bytes; 0 = PROMPT_DEFAULT_BUDGET */
	const char *prompts_dir; /* overrides of prompts/ files; NULL = built in */
	const char *recorded_evals; /* evaluate from DIR/<sha256 of source>.json, not the GPU */
	const char *record_evals;   /* save every runner report as DIR/<sha256 of source>.json */
	const char *seed_source;    /* a first kernel to judge instead of asking for one */
	const char *run_dir;        /* best.cu is kept up to date here; may be NULL */
	int no_memcheck;            /* never run compute-sanitizer on crashes */
	int no_docs;                /* put no retrieved CuTe documentation in prompts */
	int builtin;                /* no model: the builtin policy proposes every kernel */
	const char *builtin_dir;    /* its kernel families from DIR, not the embedded builtin/ */
	struct build_opts build;
	struct eval_opts eval;
	agent_event_fn on_event;
	void *ctx;
	/* module tasks: one that is not lowered is described to the model as the module (module:
	   its description; its ABI, its workload's stage machine: prompt_module_stages); one
	   judged as its built-in twin t is described as t plus where it comes from (module_file);
	   module_source, the file's text, is shown in either case */
	const struct module_desc *module;
	const char *module_file;
	const char *module_source;
};

#define AGENT_OPTS_INIT { 20, 3, 0, 0, 0, -1, 0.02, 0, NULL, NULL, NULL, NULL, NULL, 0, 0, 0, \
			  NULL, BUILD_OPTS_INIT, EVAL_OPTS_INIT, NULL, NULL, NULL, NULL, NULL }

struct agent;

/* Copies opts (its strings must outlive the agent); llm may be NULL when a seed is given or
 * opts->builtin is set (the builtin policy: its family's stages replace the stage machine).
 * t may be NULL when opts->module is a module that does not lower: each candidate is then
 * judged through its reference process (eval_opts.module, set here) and profiled on the cases
 * it prepares; the builtin policy refuses it (no kernel family: *err says a model is needed). */
struct agent *agent_new(const struct task *t, struct store *s, struct llm *llm,
			const struct agent_opts *opts, char **err);
/* Replays the nodes already in the store (resume). */
int agent_restore(struct agent *a, char **err);
/* Runs until a stop condition; 0, or -1 with *err when the loop itself failed (store). */
int agent_run(struct agent *a, char **err);
enum agent_stop agent_stop(const struct agent *a);
/* The stop in words ("the iteration budget (12 nodes) ran out"); owned by a. */
const char *agent_stop_message(const struct agent *a);
/* For AGENT_STOP_ENV_ERROR: the code of util/err.h the evaluation gave (CG_INPUT: a module's
 * reference failed by the module's own fault, CG_TIMEOUT: it hung), 0 when none was given. */
int agent_stop_code(const struct agent *a);

/* The least deadline of an evaluation after a run's first: $CUTEGEN_EVAL_HANG_FLOOR seconds,
 * else 120. A value that is no positive number: 120, and *why (when why is given) says so, for
 * the command to print. */
double agent_hang_floor(char **why);
const struct agent_totals *agent_totals(const struct agent *a);
/* The best verified kernel's source, or NULL; owned by a. */
const char *agent_best_source(const struct agent *a);
/*
 * `cutegen run --torch`: judges the best kernel once more with the PyTorch baselines (eval_run
 * with eval_opts.torch, as `cutegen eval --torch`; with recorded_evals, the recording
 * RECORDED/<sha256>.torch.json, or the node's own when it carries baseline.torch_eager; with
 * record_evals, it is saved under that name). Returns a new JSON object for the run store:
 * {"node", "ms", "torch", "eager_ms", "compile_ms", "compile_mode", "speedup_vs_torch",
 * "speedup_vs_torch_compile"}, with "error" when there is no eager figure (no torch, the
 * evaluation failed) and "compile_error" when torch.compile gave none; never fails the run.
 * NULL when the run has no correct kernel. Its time counts as evaluation in the totals.
 */
json_t *agent_judge_torch(struct agent *a);
void agent_free(struct agent *a);

/*
 * A stage's guidance for a task: its {{#tensor_cores}}...{{/tensor_cores}} sections kept when
 * the precision contract allows tensor cores, its {{#fp32_fma}}...{{/fp32_fma}} ones under a
 * strict fp32 contract. Appends to out; -1 with *err for a broken section.
 */
struct stage;
int agent_stage_guidance(const struct stage *st, const struct task *t, struct strbuf *out,
			 char **err);

/* The reply's "Change: ..." line (what the model says it did), heap, or NULL. */
char *agent_change_line(const char *reply);

#endif
