/*
 * One task's run, shared by the local pool and Slurm array elements: `cutegen run` as a child
 * with its output captured into RUN_DIR/worker.log, and the ^C state of the suite.
 * Not for: choosing which task runs where (pool.c, slurm_array.c).
 */
#include "suite/engine.h"
#include "suite/engine_impl.h"
#include "common/paths.h"
#include "common/proc.h"
#include "suite/suite_store.h"
#include "util/fsutil.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#define RUN_LOG_MAX (1u << 20)   /* a worker's captured output */

volatile sig_atomic_t suite_interrupted;
volatile pid_t suite_running_runs[WORKERS_MAX];

double suite_unix_now(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return tv.tv_sec + tv.tv_usec / 1e6;
}

const char *suite_cutegen_path(void)
{
	static char *p;
	if (!p)
		p = xasprintf("%s/cutegen", cutegen_libexec_dir());
	return p;
}

/* The last "error: ..." line of a run's output, or its last line. Heap. */
static char *last_error_line(const char *log)
{
	const char *best = NULL, *last = NULL;
	for (const char *p = log; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (len) {
			last = p;
			if (!strncmp(p, "error: ", 7))
				best = p;
		}
		p = nl ? nl + 1 : p + len;
	}
	const char *s = best ? best : last;
	if (!s)
		return NULL;
	return xstrndup(s, strcspn(s, "\n") > 300 ? 300 : strcspn(s, "\n"));
}

/* A run directory left by an earlier attempt moves aside: RUN_DIR.attempt-N. */
static void move_aside(const char *run_dir)
{
	if (!dir_exists(run_dir))
		return;
	for (int k = 1; k < 1000; k++) {
		char *to = xasprintf("%s.attempt-%d", run_dir, k);
		int taken = dir_exists(to);
		if (!taken)
			rename(run_dir, to);
		free(to);
		if (!taken)
			return;
	}
}


static void on_signal(int sig)
{
	(void)sig;
	if (suite_interrupted == 2)
		_exit(128 + SIGINT); /* as the shell reports a death by ^C */
	if (suite_interrupted == 1) {
		suite_interrupted = 2;
		for (int i = 0; i < WORKERS_MAX; i++)
			if (suite_running_runs[i] > 0)
				kill(-suite_running_runs[i], SIGKILL);
		return;
	}
	suite_interrupted = 1;
}

void suite_outcome_release(struct suite_outcome *out)
{
	if (out->busy)
		json_decref(out->busy);
	out->busy = NULL;
}

void suite_signals_catch(void)
{
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
}

void suite_signals_restore(void)
{
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
}

void suite_run_one(const struct suite_task *row, char *const *pass, int npass, int device,
		   const char *worker, const char *const *env, double timeout,
		   volatile pid_t *pid_slot, struct suite_task *res)
{
	suite_task_release(res);
	res->id = row->id;
	res->spec = xstrdup(row->spec);
	res->worker = xstrdup(worker);
	res->gpu = device;
	move_aside(row->run_dir);
	const char **argv = xcalloc((size_t)npass + 10, sizeof(*argv));
	int k = 0;
	char dev[16];
	argv[k++] = suite_cutegen_path();
	argv[k++] = "run";
	argv[k++] = row->spec;
	argv[k++] = "--out";
	argv[k++] = row->run_dir;
	argv[k++] = "--quiet";
	if (device >= 0) {
		snprintf(dev, sizeof(dev), "%d", device);
		argv[k++] = "--device";
		argv[k++] = dev;
	}
	for (int i = 0; i < npass; i++)
		argv[k++] = pass[i];
	struct strbuf log = STRBUF_INIT;
	log.cap = RUN_LOG_MAX;
	struct child_process cp = CHILD_PROCESS_INIT;
	cp.argv = argv;
	cp.env = env;
	cp.out = &log;
	cp.err = &log;
	cp.deadline_s = timeout;
	cp.pid_slot = pid_slot;
	res->started = suite_unix_now();
	int started = !run_command(&cp);
	res->finished = suite_unix_now();
	res->wall_s = res->finished - res->started;
	res->exit_code = started ? cp.status : -1;
	mkdir_p(row->run_dir);
	char *log_path = xasprintf("%s/worker.log", row->run_dir);
	write_file_atomic(log_path, log.buf, log.len);
	free(log_path);

	char *err = NULL;
	int ok = started && !cp.timed_out && !cp.signaled && (cp.status == 0 || cp.status == 1);
	if (ok && suite_read_run(row->run_dir, res, &err)) {
		ok = 0;
		res->message = err;
		err = NULL;
	}
	res->status = xstrdup(ok ? "done" : "failed");
	if (!ok && !res->message) {
		if (!started)
			res->message = xasprintf("cannot start '%s': %s", argv[0], cp.errmsg);
		else if (cp.timed_out)
			res->message = xasprintf("timed out after %.0f s (--task-timeout)", timeout);
		else if (cp.signaled && suite_interrupted == 2)
			res->message = xstrdup("stopped: the suite was interrupted twice");
		else if (cp.signaled)
			res->message = xasprintf("killed by signal %d", cp.status - 128);
		else {
			char *line = last_error_line(log.buf);
			res->message = xasprintf("exit %d: %s", cp.status, line ? line : "(no output)");
			free(line);
		}
	}
	free(err);
	strbuf_release(&log);
	free(argv);
}
