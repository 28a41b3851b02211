/*
 * The suite store: one SQLite database per suite directory (SUITE_DIR/suite.db) holding the
 * suite's settings (meta), one row per task (its run directory, status, worker, attempts, exit
 * code, wall time and the best result read from the task's own run store) and the busy time of
 * every worker of every session. It aggregates runs; the runs themselves live in their own run
 * directories (SUITE_DIR/runs/NNN-name/run.db). docs/suite.md documents the schema.
 *
 * Only the process that drives the suite (`cutegen suite`) writes suite.db. Workers that run
 * elsewhere (Slurm array elements) write one result file per task (SUITE_DIR/results/ID.json,
 * suite_result_write) that the driver merges (suite_result_read + suite_task_finish).
 * Not for: running anything (engine.h) or talking to Slurm (slurm.h).
 *
 * Usage:
 *   1. struct suite_store *ss = suite_open(suite_dir, &err);
 *   2. suite_add_task() for each task (kept when already there); suite_meta_set/get;
 *   3. suite_requeue() before a (re)start; suite_rows() to read the rows;
 *      suite_task_start() / suite_task_finish() as workers take and end tasks;
 *   4. suite_summarize() over the rows; suite_close(ss).
 * Every function returns 0 or -1 with a heap message in *err (the caller frees it).
 * Not thread-safe: callers serialize (pool.c holds one mutex around it).
 */
#ifndef CUTEGEN_SUITE_STORE_H
#define CUTEGEN_SUITE_STORE_H

#include <stddef.h>

struct suite_store;

/* One task's row. Strings are heap copies owned by the struct (suite_task_release). */
struct suite_task {
	long id;            /* 0-based position in the suite */
	char *spec;         /* what `cutegen run` is given: a built-in name or a task file */
	char *run_dir;      /* SUITE_DIR/runs/NNN-name */
	char *status;       /* pending | running | done | failed */
	int attempts;       /* how many times a worker started it */
	char *worker;       /* "gpu0", "cpu1", "slurm:1234_5"; NULL before the first start */
	int gpu;            /* the local GPU it ran on; -1 none or unknown */
	int exit_code;      /* of its `cutegen run`; -1 unknown, 128+N = killed by signal N */
	double wall_s, started, finished; /* started/finished: unix seconds, 0 = not yet */
	int correct;        /* the run stored a verified kernel */
	double best_ms, best_speedup, best_roof; /* of the best kernel; < 0 unknown */
	/* `cutegen run --torch` (a run flag the suite passes on): torch = the run was asked for
	 * the PyTorch figures; its best kernel's speedup over PyTorch eager and over
	 * torch.compile (< 0 none), and why one is missing (no torch, torch.compile failed) */
	int torch;
	double torch_speedup, compile_speedup;
	char *torch_error;
	char *message;      /* why it failed, or the run's stop reason */
};

void suite_task_init(struct suite_task *t);
void suite_task_release(struct suite_task *t);

/* Opens (creating the directory and database when needed) SUITE_DIR/suite.db. */
struct suite_store *suite_open(const char *suite_dir, char **err);
void suite_close(struct suite_store *ss);

/* Settings by key (value NULL deletes). get: heap copy or NULL when absent. */
int suite_meta_set(struct suite_store *ss, const char *key, const char *value, char **err);
char *suite_meta_get(struct suite_store *ss, const char *key);

/* Adds task `id` (pending) unless a row with that id exists; a row with the same id and
 * another spec is an error (the suite changed under the directory). */
int suite_add_task(struct suite_store *ss, long id, const char *spec, const char *run_dir,
		   char **err);
/* Every row in id order; *out is a heap array freed with suite_rows_free. */
int suite_rows(struct suite_store *ss, struct suite_task **out, size_t *n, char **err);
void suite_rows_free(struct suite_task *t, size_t n);

/* A (re)start: rows left "running" by a driver that died become failed ("interrupted"), then
 * failed rows with fewer than max_attempts attempts become pending again. *requeued counts
 * them. */
int suite_requeue(struct suite_store *ss, int max_attempts, int *requeued, char **err);
/* The same within one session (a retry): failures that cannot change are left failed. */
int suite_requeue_transient(struct suite_store *ss, int max_attempts, int *requeued, char **err);
/*
 * 1 when t failed in a way a retry cannot change: its run exited 2 (usage), 3 (bad input) or
 * 4 (the machine lacks something: no GPU, no recorded evaluation). A later resume still runs
 * it again (the user may have fixed the cause); retries within a session do not.
 */
int suite_failure_is_permanent(const struct suite_task *t);
/* A worker took the task: status running, attempts + 1, worker, gpu, started = now. */
int suite_task_start(struct suite_store *ss, long id, const char *worker, int gpu, char **err);
/* Writes the result fields of t (status, exit code, times, best, message) to row t->id. */
int suite_task_finish(struct suite_store *ss, const struct suite_task *t, char **err);

/* Adds busy seconds of one worker in session `session` (a session = one driver process). */
int suite_add_busy(struct suite_store *ss, long session, const char *worker, double busy_s,
		   int tasks, char **err);
/* A new session's id (1, 2, ...), its start time stored. */
int suite_session_begin(struct suite_store *ss, long *session, const char *mode, char **err);
int suite_session_end(struct suite_store *ss, long session, double wall_s, char **err);

/*
 * Reads the run directory's store (RUN_DIR/run.db) into t: correct, best_ms, best_speedup,
 * best_roof, the PyTorch figures (torch, torch_speedup, compile_speedup, torch_error) and, when t->message is NULL, the run's stop reason. -1 when there is no run
 * store (the run died before creating it).
 */
int suite_read_run(const char *run_dir, struct suite_task *t, char **err);

/* Result files of remote workers: SUITE_DIR/results/ID.json (written atomically). */
int suite_result_write(const char *suite_dir, const struct suite_task *t, char **err);
/* Reads one back into t (t->id kept); 1 when there is none yet, -1 on a damaged file. */
int suite_result_read(const char *suite_dir, long id, struct suite_task *t, char **err);

/* The aggregate of a suite, computed from its rows. */
#define SUITE_FAST_P_N 6
extern const double suite_fast_p_thresholds[SUITE_FAST_P_N]; /* 0, 0.5, 1, 1.5, 2, 3 */

struct suite_summary {
	int tasks, pending, running, done, failed, correct;
	/* share of ALL tasks that are correct and faster than the baseline by more than p (p = 0:
	 * correct with a known speedup > 0, i.e. the correctness rate among measured runs) */
	double fast_p[SUITE_FAST_P_N];
	double geomean_speedup;     /* over correct tasks with a speedup; 0 when none */
	double geomean_roof;        /* over correct tasks with a roofline fraction; 0 when none */
	int n_speedup, n_roof;
	/* `--torch`: the same share against PyTorch eager and against torch.compile, each over
	 * ALL tasks (a task without the figure counts as not fast; p = 0: correct with the
	 * figure); n_torch tasks were asked for the figures, n_eager / n_compile have them */
	double fast_p_eager[SUITE_FAST_P_N], fast_p_compile[SUITE_FAST_P_N];
	double geomean_eager, geomean_compile; /* over the tasks with the figure; 0 when none */
	int n_torch, n_eager, n_compile;
};

void suite_summarize(const struct suite_task *t, size_t n, struct suite_summary *s);

/* A run directory name for a task: "NNN-" + the spec with '/' as '_' and ".json" dropped,
 * only [A-Za-z0-9._-] kept, at most 80 characters. Heap string. */
char *suite_run_dir_name(long id, const char *spec);

#endif
