/*
 * What the modules of the suite engine share (engine.h is their public face): one task's run
 * (task_run.c), the workers of the local pool (workers.c) and the ^C state.
 * Not for: callers outside src/suite/.
 */
#ifndef CUTEGEN_SUITE_ENGINE_IMPL_H
#define CUTEGEN_SUITE_ENGINE_IMPL_H

#include <pthread.h>
#include <signal.h>
#include <sys/types.h>

struct suite_task;
struct pool;

#define WORKERS_MAX 256

/*
 * ^C (or TERM) once: no new tasks, the running ones finish. Twice: the running runs are
 * stopped now (their process groups killed: each counts as failed, "interrupted") and the
 * summary is still written. A third: exit at once (the runs die with us).
 * suite_signals_catch() installs the handler, suite_signals_restore() the defaults.
 */
extern volatile sig_atomic_t suite_interrupted;
extern volatile pid_t suite_running_runs[WORKERS_MAX];
void suite_signals_catch(void);
void suite_signals_restore(void);

double suite_unix_now(void);

/* The cutegen binary beside this one (runs and Slurm elements start it). Static string. */
const char *suite_cutegen_path(void);

/*
 * Runs `cutegen run SPEC --out RUN_DIR --quiet [--device N] ARGS...` and fills res (status,
 * exit code, wall, best, message). A run that exits 0 (a verified kernel) or 1 (it ran, no
 * correct kernel) is done; anything else (other exit codes, a signal, the deadline) failed.
 */
void suite_run_one(const struct suite_task *row, char *const *pass, int npass, int device,
		   const char *worker, const char *const *env, double timeout,
		   volatile pid_t *pid_slot, struct suite_task *res);

/* CG_INPUT (with *err) when WHAT is neither a built-in suite nor a readable task list. */
int suite_tasklist_check(const char *what, char **err);

/* One worker of the local pool. */
struct worker {
	char name[48];
	int device;   /* -1 for compile-only CPU workers */
	char *env[3]; /* for its runs: the GPU's turn lock and build jobs when workers share a GPU */
	int index;    /* its slot in suite_running_runs */
	double busy_s;
	int tasks;
	pthread_t thread;
	struct pool *pool;
};

/* --gpus: "all" (every GPU cutegen-runner --devices lists), "0,1,3" (each once, each one the
 * runner lists), or "cpu:N". CG_USAGE for a bad spec, CG_ENV when no runner or GPU (or not a
 * listed one) is found (the exit statuses 2 and 4 of `cutegen suite`). */
int suite_workers_make(const char *spec, struct worker **out, int *n, char **err);
/* --per-gpu K: K workers on each GPU, taking GPU turns through a lock file in suite_dir. */
void suite_workers_share_gpus(struct worker **ws, int *nw, int k, const char *suite_dir);
void suite_workers_free(struct worker *ws, int nw);

#endif
