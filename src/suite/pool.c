/*
 * The local pool of the suite engine: one worker thread per GPU (or K sharing one, or N
 * compile-only CPU workers), taking tasks from one queue and re-queueing failed ones up to
 * --attempts; progress on stderr while it runs (one line per ended task, a status line on a
 * terminal). Not for: finding the GPUs (workers.c) or running a task (task_run.c).
 */
#include "suite/engine.h"
#include "suite/engine_impl.h"
#include "common/paths.h"
#include "common/proc.h"
#include "suite/suite_store.h"
#include "util/err.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct pool {
	pthread_mutex_t mu;
	struct suite_store *ss;
	struct suite_task *rows;
	size_t nrows;
	long *queue;  /* row indices still to run */
	size_t qhead, qlen;
	int running, done, failed, max_attempts, alive;
	double started, task_wall_sum;
	int task_wall_n;
	double *task_started; /* per worker: when its task began (0 = idle), for the ETA */
	int nworkers;
	const struct suite_opts *o;
	int tty;
	char *store_err;
};

static void fmt_secs(char *buf, size_t len, double s)
{
	if (s < 0)
		snprintf(buf, len, "?");
	else if (s < 120)
		snprintf(buf, len, "%.0fs", s);
	else if (s < 7200)
		snprintf(buf, len, "%.0fm%02.0fs", floor(s / 60), fmod(s, 60));
	else
		snprintf(buf, len, "%.0fh%02.0fm", floor(s / 3600), fmod(s / 60, 60));
}

/*
 * "3/12 done, 2 running, 1 failed | ETA 4m10s | best 2.31x 1.80x 1.20x" (caller holds mu).
 * The ETA comes from the tasks that finished (their mean wall): "estimating" until one has;
 * each running task is charged what the mean leaves of it, the queue the mean each, spread
 * over the workers. A task already past the mean makes it "overdue", never "0s".
 */
static void progress_text(struct pool *p, int nworkers, char *buf, size_t len)
{
	size_t left = p->qlen - p->qhead;
	char e[64];
	if (!p->task_wall_n || nworkers < 1) {
		snprintf(e, sizeof(e), "estimating");
	} else {
		double mean = p->task_wall_sum / p->task_wall_n, work = mean * (double)left, now = now_s();
		int overdue = 0;
		for (int i = 0; i < p->nworkers && p->task_started; i++) {
			if (p->task_started[i] <= 0)
				continue;
			double el = now - p->task_started[i];
			if (el < mean)
				work += mean - el;
			else
				overdue++;
		}
		double eta = work / nworkers;
		if (eta < 1 && overdue)
			snprintf(e, sizeof(e), "overdue (%d past the %.0fs a task took)", overdue, mean);
		else /* a task still running a fraction of a second short of the mean: 1s, not 0s */
			fmt_secs(e, sizeof(e), p->running > 0 && eta < 1 ? 1 : eta);
	}
	int n = snprintf(buf, len, "%d/%zu done, %d running, %d failed | ETA %s", p->done, p->nrows,
			 p->running, p->failed, e);
	/* the three best speedups so far */
	double top[3] = { 0, 0, 0 };
	for (size_t i = 0; i < p->nrows; i++) {
		double s = p->rows[i].status && !strcmp(p->rows[i].status, "done") ? p->rows[i].best_speedup : 0;
		for (int k = 0; k < 3; k++)
			if (s > top[k]) {
				for (int j = 2; j > k; j--)
					top[j] = top[j - 1];
				top[k] = s;
				break;
			}
	}
	if (top[0] > 0 && n > 0 && (size_t)n < len) {
		n += snprintf(buf + n, len - (size_t)n, " | best");
		for (int k = 0; k < 3 && top[k] > 0 && (size_t)n < len; k++)
			n += snprintf(buf + n, len - (size_t)n, " %.2fx", top[k]);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct pool *p = w->pool;
	const struct suite_opts *o = p->o;
	for (;;) {
		pthread_mutex_lock(&p->mu);
		if (suite_interrupted || p->qhead >= p->qlen || p->store_err) {
			p->alive--;
			pthread_mutex_unlock(&p->mu);
			return NULL;
		}
		struct suite_task *row = &p->rows[p->queue[p->qhead++]];
		char *err = NULL;
		if (suite_task_start(p->ss, row->id, w->name, w->device, &err)) {
			p->store_err = err;
			p->alive--;
			pthread_mutex_unlock(&p->mu);
			return NULL;
		}
		row->attempts++;
		free(row->status);
		row->status = xstrdup("running");
		p->running++;
		p->task_started[w->index] = now_s();
		pthread_mutex_unlock(&p->mu);

		struct suite_task res;
		suite_task_init(&res);
		suite_run_one(row, o->pass, o->npass, w->device, w->name, (const char *const *)w->env,
			o->task_timeout, &suite_running_runs[w->index], &res);

		pthread_mutex_lock(&p->mu);
		p->running--;
		p->task_started[w->index] = 0;
		w->busy_s += res.wall_s;
		w->tasks++;
		p->task_wall_sum += res.wall_s;
		p->task_wall_n++;
		if (suite_failure_is_permanent(&res) && row->attempts < p->max_attempts) {
			char *m = xasprintf("%s (not retried: exit %d fails the same way again; fix "
					    "the cause, then --resume)", res.message ? res.message : "",
					    res.exit_code);
			free(res.message);
			res.message = m;
		}
		if (suite_task_finish(p->ss, &res, &err) && !p->store_err)
			p->store_err = err;
		int failed = strcmp(res.status, "done") != 0;
		/* a failure a retry cannot change (exit 2, 3, 4) is not retried */
		int retry = failed && row->attempts < p->max_attempts && !suite_interrupted &&
			    !suite_failure_is_permanent(&res);
		if (failed && !retry)
			p->failed++;
		else if (!failed)
			p->done++;
		if (retry)
			p->queue[p->qlen++] = row - p->rows; /* room: the queue holds attempts * rows */
		free(row->status);
		row->status = xstrdup(res.status);
		row->best_speedup = res.best_speedup;
		if (p->tty)
			fputs("\r\033[K", stderr);
		if (!o->json && !o->quiet) {
			char prog[200];
			progress_text(p, 1, prog, sizeof(prog));
			fprintf(stderr, "%-6s %-28s %-6s %6.1fs", failed ? (retry ? "retry" : "failed")
				: "done", row->spec, w->name, res.wall_s);
			if (res.correct && res.best_speedup > 0)
				fprintf(stderr, "  %.2fx", res.best_speedup);
			else if (!failed && !res.correct)
				fprintf(stderr, "  no correct kernel");
			if (failed)
				fprintf(stderr, "  (%.120s)", res.message ? res.message : "");
			fputc('\n', stderr);
		}
		pthread_mutex_unlock(&p->mu);
		suite_task_release(&res);
	}
}


static int has_recorded_evals(const struct suite_opts *o)
{
	for (int i = 0; i < o->npass; i++)
		if (!strcmp(o->pass[i], "--recorded-evals") ||
		    !strncmp(o->pass[i], "--recorded-evals=", 17))
			return 1;
	const char *e = getenv("CUTEGEN_RECORDED_EVALS");
	return e && *e;
}


int suite_check(const char *what, const struct suite_opts *o, char **err)
{
	int rc = suite_tasklist_check(what, err);
	if (rc)
		return rc;
	if (o->slurm) {
		char *sbatch = paths_find_program("sbatch");
		int have = sbatch != NULL;
		free(sbatch);
		if (!have) {
			*err = xstrdup("--slurm needs sbatch, which is not on PATH: run the suite on a "
				       "Slurm login node, or without --slurm");
			return CG_ENV;
		}
		return CG_OK;
	}
	struct worker *ws = NULL;
	int nw = 0;
	if ((rc = suite_workers_make(o->gpus, &ws, &nw, err)))
		return rc;
	rc = CG_OK;
	if (ws[0].device < 0 && !has_recorded_evals(o)) {
		*err = xstrdup("--gpus cpu:N runs compile-only workers: they compile with nvcc and "
			       "take each kernel's evaluation from --recorded-evals DIR (give it "
			       "after the suite's flags)");
		rc = CG_USAGE;
	}
	suite_workers_free(ws, nw);
	return rc;
}

int suite_run_local(struct suite_store *ss, const char *suite_dir, const struct suite_opts *o,
		    long session, struct suite_outcome *out, char **err)
{
	struct worker *ws = NULL;
	int nw = 0, rc = CG_ERROR;
	struct pool p;
	memset(&p, 0, sizeof(p));
	memset(out, 0, sizeof(*out));
	pthread_mutex_init(&p.mu, NULL);
	json_t *busy = json_array();
	if ((rc = suite_workers_make(o->gpus, &ws, &nw, err)))
		goto out;
	if (o->per_gpu > 1 && ws[0].device >= 0)
		suite_workers_share_gpus(&ws, &nw, o->per_gpu, suite_dir);
	if (ws[0].device < 0 && !has_recorded_evals(o)) {
		*err = xstrdup("--gpus cpu:N runs compile-only workers: they compile with nvcc and "
			       "take each kernel's evaluation from --recorded-evals DIR (give it "
			       "after the suite's flags)");
		rc = CG_USAGE;
		goto out;
	}
	int requeued = 0;
	if (suite_requeue(ss, o->attempts, &requeued, err) ||
	    suite_rows(ss, &p.rows, &p.nrows, err))
		goto out;
	p.ss = ss;
	p.o = o;
	p.max_attempts = o->attempts;
	p.tty = isatty(2) && !o->json && !o->quiet;
	p.queue = xcalloc(p.nrows * (size_t)o->attempts + 1, sizeof(*p.queue));
	for (size_t i = 0; i < p.nrows; i++) {
		if (!strcmp(p.rows[i].status, "pending"))
			p.queue[p.qlen++] = (long)i;
		else if (!strcmp(p.rows[i].status, "done"))
			p.done++;
		else
			p.failed++;
	}
	if (!o->json && !o->quiet)
		fprintf(stderr, "suite %s: %zu tasks, %zu to run (%d re-queued), %d done before; %d "
			"worker%s (%s)\n", suite_dir, p.nrows, p.qlen, requeued, p.done, nw,
			nw == 1 ? "" : "s", ws[0].device < 0 ? "compile-only, recorded evaluations"
					    : o->per_gpu > 1 ? "sharing each GPU, evaluations in turn"
							     : "one per GPU");
	suite_signals_catch();
	signal(SIGPIPE, SIG_IGN);
	p.started = now_s();
	p.alive = nw;
	p.task_started = xcalloc((size_t)nw, sizeof(double));
	p.nworkers = nw;
	for (int i = 0; i < nw; i++) {
		ws[i].pool = &p;
		ws[i].index = i;
		if (pthread_create(&ws[i].thread, NULL, worker_main, &ws[i]))
			die("cannot start a worker thread");
	}
	for (;;) {
		pthread_mutex_lock(&p.mu);
		int alive = p.alive;
		if (p.tty && alive) {
			char prog[200];
			progress_text(&p, nw, prog, sizeof(prog));
			fprintf(stderr, "\r\033[K[suite] %s", prog);
			fflush(stderr);
		}
		pthread_mutex_unlock(&p.mu);
		if (!alive)
			break;
		usleep(200 * 1000);
	}
	for (int i = 0; i < nw; i++)
		pthread_join(ws[i].thread, NULL);
	if (p.tty)
		fputs("\r\033[K", stderr);
	suite_signals_restore();
	double wall = now_s() - p.started;
	for (int i = 0; i < nw; i++) {
		if (suite_add_busy(ss, session, ws[i].name, ws[i].busy_s, ws[i].tasks, err))
			goto out;
		json_array_append_new(busy, json_pack("{s:s, s:i, s:f, s:i, s:f}", "worker", ws[i].name,
						      "gpu", ws[i].device, "busy_s", ws[i].busy_s,
						      "tasks", ws[i].tasks, "busy_share",
						      wall > 0 ? ws[i].busy_s / wall : 0));
	}
	if (suite_session_end(ss, session, wall, err))
		goto out;
	if (p.store_err) {
		*err = p.store_err;
		p.store_err = NULL;
		goto out;
	}
	out->wall_s = wall;
	out->failed = p.failed;
	out->interrupted = suite_interrupted != 0;
	out->busy = json_incref(busy);
	rc = CG_OK;
out:
	free(p.store_err);
	free(p.queue);
	free(p.task_started);
	suite_rows_free(p.rows, p.nrows);
	suite_workers_free(ws, nw);
	json_decref(busy);
	pthread_mutex_destroy(&p.mu);
	return rc;
}
