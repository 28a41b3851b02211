/*
 * The reference process of module tasks: runs tools/reference.py (embedded) with the user's
 * python3 and torch, in a process group of its own under a deadline, and asks it to describe a
 * KernelBench-format module (docs/tasks.md, "The reference process"). It never runs inside the
 * evaluator or next to a candidate.
 * Not for: parsing the description (common/task_module.c), judging kernels (eval.c, runner/).
 *
 * Usage:
 *   1. struct task *t; struct module_desc *md;
 *      rc = task_resolve(spec, &t, &md, &err)   (a built-in name, a JSON file or a .py module)
 *   2. t is the task to judge (a module's built-in twin when it is lowered; NULL for a module
 *      that is not); md is the module's description (NULL for JSON and built-in tasks);
 *   3. task_free(t); module_desc_free(md).
 */
#ifndef CUTEGEN_REFERENCE_H
#define CUTEGEN_REFERENCE_H

#include "common/task.h"
#include "common/task_module.h"
#include "util/err.h"

#include <jansson.h>

#define REFERENCE_DEADLINE_S 300.0 /* default; $CUTEGEN_REFERENCE_TIMEOUT overrides (seconds) */
#define REFERENCE_SEED 42
/* tools/reference.py's exit status when a reply cannot be written: its reply channel is closed
 * (a module that closed file descriptors it did not open) */
#define REFERENCE_EXIT_CHANNEL 74

/* Extended codes (CG_ENV) for a machine where no module can be described: no python that
 * speaks the protocol, or one without torch. Callers that describe many modules stop at them. */
#define REFERENCE_E_NO_PYTHON CG_EXT(CG_ENV, 32)
#define REFERENCE_E_NO_TORCH CG_EXT(CG_ENV, 33)

/* The python that runs the reference: $CUTEGEN_PYTHON (set by `cutegen --python PATH`), else
 * python3 from PATH. Static string. */
const char *reference_python(void);

/*
 * Describes the module file. 0 and *out on success; otherwise a code of util/err.h with a heap
 * message in *err that says what to do: CG_ENV (no python, no torch, a GPU feature the machine
 * lacks), CG_INPUT (the file does not import, has no Model, get_inputs or get_init_inputs,
 * returns non-tensors..., or it crashes, ends the process or closes its reply channel),
 * CG_TIMEOUT (the process did not answer within the deadline and was killed, its whole
 * process group; a reply that arrived whole is used even when the process had to be killed
 * after it), CG_EXTERNAL (it broke the protocol).
 */
int reference_describe(const char *file, struct module_desc **out, char **err);

/*
 * Starts the reference process and reads its hello only (for `cutegen doctor`): 0 with heap
 * strings *executable (the python) and *torch (its torch version, or NULL with the import error
 * in *torch_error), or a code with a heap message in *err when no python answers.
 */
int reference_probe(char **executable, char **torch, char **torch_error, char **err);

/*
 * "prepare" (docs/evaluation.md, "Module tasks"): the reference process computes the cases of
 * a module that is not lowered (inputs, the task-dtype reference and the float64 truth of
 * every output, each a CUDA IPC handle into its own GPU memory) and, asked for, the PyTorch
 * eager and torch.compile baselines; then it waits, holding every tensor, until released.
 *   1. struct reference_session *rs; json_t *prep;
 *      rc = reference_prepare(md, &po, &rs, &prep, &err)  (0: rs alive, prep = the reply's
 *      "prepare" object, owned by the caller; else a code as reference_describe's, CG_ENV for
 *      kinds "memory", "ipc" and "gpu", and nothing left running);
 *   2. hand the handles to the runner (RUN.json);
 *   3. reference_release(rs): sends {"op":"release"}, lets it exit, kills its process group and
 *      reaps it, whatever happened before. Always call it once rs is set.
 */
struct reference_prepare_opts {
	int device;
	int quick;                /* fewer cases */
	int baselines;            /* time eager and torch.compile too */
	const char *precision;    /* the contract's name ("strict", ...) */
	double memory_fraction;   /* of free GPU memory the cases may take; 0 = 0.55 (the runner
				     needs about one case without its fp64 truth beside them: KernelBench norms at
				     full size take 28-32 GiB a case, two of them did not fit 0.35 on the H200) */
	double deadline_s;        /* for the reply; 0 = $CUTEGEN_REFERENCE_TIMEOUT or 300 s */
};
#define REFERENCE_PREPARE_OPTS_INIT { 0, 0, 0, NULL, 0, 0 }
#define REFERENCE_PREPARE_MAX (8 << 20) /* bytes of the prepare reply */
struct reference_session;
int reference_prepare(const struct module_desc *md, const struct reference_prepare_opts *po,
		      struct reference_session **rs, json_t **prepared, char **err);
/* The contract a module is judged by: describe's, "strict" when it named none. Static. */
const char *reference_precision(const struct module_desc *md);
/* Writes the module-run file the runner reads (cutegen-runner --module PATH: the tensor list,
 * scalars, contract, truth, tolerance, FLOPs, bytes, limits and the prepare reply's cases),
 * after checking the reply's tensor list is describe's. 0, or -1 with a heap message in *err
 * (CG_EXTERNAL: the reference's fault, or the file cannot be written). */
int reference_write_run(const struct module_desc *md, json_t *prepared, double lim_gbps,
			double lim_tflops, const char *path, char **err);
/* The process id (its process group) of the reference, for tests and logs. */
int reference_session_pid(const struct reference_session *rs);
void reference_release(struct reference_session *rs);
/* 1 while the reference process has not exited (it holds the cases' tensors). */
int reference_session_alive(struct reference_session *rs);
/* Kills the process group of every reference session not yet released: for a signal handler
 * that ends the program at once (async-signal-safe; reaps nothing). */
void reference_kill_all(void);

/*
 * A reference session kept across evaluations of one module (the agent loop's candidates,
 * docs/evaluation.md "Module tasks"): eval_run reuses it while it was prepared for the same
 * module file, device, quick, baselines and precision and its process is alive, and prepares
 * afresh into it otherwise. Caller-owned, never shared between threads.
 *   1. struct reference_keep k = REFERENCE_KEEP_INIT; eval_opts.keep = &k;
 *   2. eval_run(...) as often as needed (it fills, reuses or drops what k holds);
 *   3. reference_keep_release(&k) once at the end: no reference process outlives it.
 */
struct reference_keep {
	struct reference_session *rs; /* NULL: nothing kept */
	json_t *prep;                 /* its prepare reply (the cases' handles; owned) */
	char *file, *precision;       /* what it was prepared for (owned) */
	int device, quick, baselines;
	int prepares;                 /* prepares made into this slot (logs and tests) */
	int reuses;                   /* evaluations that reused a kept session */
};
#define REFERENCE_KEEP_INIT { NULL, NULL, NULL, NULL, 0, 0, 0, 0, 0 }
/* 1 when k holds a session prepared for this module and these options (pure: no liveness). */
int reference_keep_matches(const struct reference_keep *k, const struct module_desc *md,
			   const struct reference_prepare_opts *po);
/* Takes rs and prep (owned from now on) as what k keeps, prepared for md and po; k must hold
 * nothing (reference_keep_drop first). */
void reference_keep_set(struct reference_keep *k, struct reference_session *rs, json_t *prep,
			const struct module_desc *md, const struct reference_prepare_opts *po);
/* Releases the kept session (its process ends) and forgets it; counters stay. NULL or empty:
 * nothing. */
void reference_keep_drop(struct reference_keep *k);
/* As reference_keep_drop; what k owns is freed. Call once when done with k. */
void reference_keep_release(struct reference_keep *k);

/* A task from a spec: a built-in name or JSON file (task_load) or a module (.py). See the usage
 * above; returns 0 or a code of util/err.h with a heap message in *err. */
int task_resolve(const char *spec, struct task **t, struct module_desc **md, char **err);

/* As task_resolve, for the commands that judge a kernel: a module that is not lowered to a
 * built-in op gives *t NULL and *md its description, which the evaluator judges through the
 * reference process (eval_opts.module). *md may be NULL only when the caller wants built-in
 * tasks alone: then such a module fails with CG_INPUT and a message saying so. */
int task_resolve_judgeable(const char *spec, struct task **t, struct module_desc **md, char **err);

#endif
