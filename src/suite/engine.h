/*
 * The suite engine: runs every task of a suite, each as its own `cutegen run TASK --out
 * SUITE_DIR/runs/NNN-name` child, either on a pool of local workers (one per GPU, K sharing a
 * GPU, or N compile-only CPU workers: pool.c, workers.c) or as a Slurm job array whose elements
 * run `cutegen suite-worker MANIFEST --index I` (slurm_array.c). The suite store (suite_store.h)
 * aggregates the runs. docs/suite.md explains the whole.
 * Not for: parsing flags or printing the summary (cmd/cmd_suite.c does both), the runs
 * themselves (cmd/cmd_run.c), or scheduling cluster nodes (Slurm does that).
 *
 * Usage:
 *   1. fill struct suite_opts (SUITE_OPTS_INIT, then the command's flags);
 *   2. suite_open(); suite_prepare(ss, SUITE_OR_LIST, dir, &o, &err); suite_session_begin();
 *   3. suite_run_local() or suite_run_slurm(), which fill struct suite_outcome;
 *   4. print the summary from the store (suite_rows, suite_summarize); suite_opts_release().
 * Every function returns CG_OK or a code of util/err.h with a heap message in *err (the
 * caller frees it). While a run goes on, the engine shows progress on stderr unless
 * o->quiet or o->json (as git's progress.c does).
 */
#ifndef CUTEGEN_SUITE_ENGINE_H
#define CUTEGEN_SUITE_ENGINE_H

#include <jansson.h>

struct suite_store;

#define SUITE_RUN_ARGS_MAX 256 /* flags passed through to `cutegen run` */

struct suite_opts {
	const char *out, *gpus, *run_args, *partition, *time_limit;
	int json, resume, quiet, attempts, slurm, gpus_per_task, chunk, no_wait, per_gpu;
	double task_timeout, poll_s, wait_timeout;
	char **pass;   /* flags passed through to `cutegen run` (heap vector of heap strings) */
	int npass;
};

#define SUITE_OPTS_INIT { .attempts = 2, .gpus_per_task = 1, .per_gpu = 1, .chunk = 1, \
			  .poll_s = 10 }

/* Appends a copy of a flag for `cutegen run`; frees them all. */
void suite_opts_pass_add(struct suite_opts *o, const char *a);
void suite_opts_release(struct suite_opts *o);

/*
 * Adds the tasks of WHAT (a built-in suite name, or a file with one task a line) to the store
 * and settles the run flags: given ones replace the stored ones, none given reuses them (a
 * resume). CG_INPUT for a bad task list (and for a store error: exit 3, as before).
 */
int suite_prepare(struct suite_store *ss, const char *what, const char *suite_dir,
		  struct suite_opts *o, char **err);

/*
 * What would make a new suite fail at once, checked before anything is written (so that a
 * usage error or a machine without GPUs leaves no suite.db behind): the task list (CG_INPUT);
 * for the local pool the workers (CG_ENV: no GPU or runner) and compile-only workers without
 * recorded evaluations (CG_USAGE); for Slurm, sbatch on PATH (CG_ENV). Writes nothing.
 */
int suite_check(const char *what, const struct suite_opts *o, char **err);

/* What a run of the engine did, for the command's summary and exit status. */
struct suite_outcome {
	double wall_s;
	int failed;          /* tasks failed for good */
	int interrupted;     /* ^C: 1 when the suite stopped early */
	json_t *busy;        /* local pool: [{worker, gpu, busy_s, tasks, busy_share}]; or NULL */
	char job[32];        /* Slurm --no-wait: the submitted job; "" otherwise */
};

void suite_outcome_release(struct suite_outcome *out);

/*
 * The local pool: one worker thread per GPU of o->gpus ("all", "0,1,3", "cpu:N"), K per GPU
 * with o->per_gpu. ^C once: no new tasks; twice: the running runs are killed; the outcome is
 * still filled and the store still closed off. CG_ENV when no GPU or runner is found, CG_USAGE
 * for compile-only workers without recorded evaluations, CG_ERROR for a store error.
 */
int suite_run_local(struct suite_store *ss, const char *suite_dir, const struct suite_opts *o,
		    long session, struct suite_outcome *out, char **err);

/*
 * Slurm: submits the pending tasks as job arrays (again for lost or failed elements, up to
 * o->attempts) and tracks them, merging each task's result file. CG_ENV when sbatch fails,
 * CG_EXTERNAL when tracking fails, CG_INTERRUPTED on ^C (the job goes on), CG_ERROR for a
 * store error. With o->no_wait it returns after the first submission, out->job set.
 */
int suite_run_slurm(struct suite_store *ss, const char *suite_dir, const struct suite_opts *o,
		    long session, struct suite_outcome *out, char **err);

/*
 * One Slurm array element (`cutegen suite-worker MANIFEST --index I`): runs its tasks and
 * writes their result files. Each task's line goes to stderr (it is the element's log), and so
 * do errors of single tasks. CG_INPUT for a bad manifest or element (*err set for a manifest
 * that cannot be read or lacks the element), CG_ERROR when a result file cannot be written;
 * *failed counts tasks not done.
 */
int suite_worker_element(const char *manifest, long index, int *failed, char **err);

#endif
