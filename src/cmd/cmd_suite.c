/*
 * `cutegen suite SUITE|LIST --out SUITE_DIR`: every task of a suite, each as its own
 * `cutegen run TASK --out SUITE_DIR/runs/NNN-name` child, either on a pool of local workers
 * (one per GPU, or N compile-only CPU workers) or as a Slurm job array whose elements run
 * `cutegen suite-worker MANIFEST --index I`. The suite store (suite.h) aggregates the runs;
 * the progress, the closing summary and --json (fast_p, geometric means, busy shares) are
 * printed here. docs/suite.md explains the whole.
 * Not for: the runs themselves (cmd_run.c) or scheduling cluster nodes (Slurm does that).
 */
#include "cmd/cutegen.h"
#include "common/paths.h"
#include "common/proc.h"
#include "suite/slurm.h"
#include "suite/suite.h"
#include "common/task.h"
#include "util/fsutil.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define LIST_MAX (1u << 20)      /* a task list file */
#define TASKS_MAX 10000
#define WORKERS_MAX 256
#define RUN_LOG_MAX (1u << 20)   /* a worker's captured output */
#define MANIFEST_MAX (16u << 20)
#define RUN_ARGS_MAX 256

struct suite_opts {
	const char *out, *gpus, *run_args, *partition, *time_limit;
	int json, resume, quiet, attempts, slurm, gpus_per_task, chunk, no_wait, per_gpu;
	double task_timeout, poll_s, wait_timeout;
	char **pass;   /* flags passed through to `cutegen run` (heap vector of heap strings) */
	int npass;
};

static double unix_now(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return tv.tv_sec + tv.tv_usec / 1e6;
}

static void pass_add(struct suite_opts *o, const char *a)
{
	o->pass = xrealloc(o->pass, sizeof(*o->pass) * (size_t)(o->npass + 1));
	o->pass[o->npass++] = xstrdup(a);
}

static void pass_free(struct suite_opts *o)
{
	for (int i = 0; i < o->npass; i++)
		free(o->pass[i]);
	free(o->pass);
	o->pass = NULL;
	o->npass = 0;
}

/* --name VALUE or --name=VALUE at argv[*i]; 1 when it is that flag (value set or NULL). */
static int flag_value(int argc, char **argv, int *i, const char *name, const char **val)
{
	const char *a = argv[*i];
	size_t nl = strlen(name);
	if (strncmp(a, "--", 2) || strncmp(a + 2, name, nl))
		return 0;
	if (a[2 + nl] == '=') {
		*val = a + 3 + nl;
		return 1;
	}
	if (a[2 + nl])
		return 0;
	*val = *i + 1 < argc ? argv[++*i] : NULL;
	return 1;
}

static int parse_num(const char *flag, const char *v, double lo, double *out)
{
	char *end;
	if (!v || !*v) {
		error("%s needs a value; see 'cutegen help suite'", flag);
		return -1;
	}
	double d = strtod(v, &end);
	if (*end || !(d >= lo)) {
		error("%s must be a number of at least %g (got \"%s\")", flag, lo, v);
		return -1;
	}
	*out = d;
	return 0;
}

static int parse_suite_opts(int argc, char **argv, struct suite_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->attempts = 2;
	o->gpus_per_task = 1;
	o->per_gpu = 1;
	o->chunk = 1;
	o->poll_s = 10;
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i], *v = NULL;
		double d;
		if (!strcmp(a, "--")) {
			while (++i < argc)
				pass_add(o, argv[i]);
			break;
		}
#define STRFLAG(name, field) \
		if (flag_value(argc, argv, &i, name, &v)) { \
			if (!v) { error("--%s needs a value; see 'cutegen help suite'", name); return -1; } \
			o->field = v; continue; }
#define NUMFLAG(name, lo, assign) \
		if (flag_value(argc, argv, &i, name, &v)) { \
			if (parse_num("--" name, v, lo, &d)) return -1; \
			assign; continue; }
		STRFLAG("out", out);
		STRFLAG("gpus", gpus);
		STRFLAG("run-args", run_args);
		STRFLAG("partition", partition);
		STRFLAG("time", time_limit);
		NUMFLAG("attempts", 1, o->attempts = (int)d);
		NUMFLAG("gpus-per-task", 0, o->gpus_per_task = (int)d);
		NUMFLAG("chunk", 1, o->chunk = (int)d);
		NUMFLAG("per-gpu", 1, o->per_gpu = (int)d);
		NUMFLAG("task-timeout", 0, o->task_timeout = d);
		NUMFLAG("poll", 0.1, o->poll_s = d);
		NUMFLAG("wait-timeout", 0, o->wait_timeout = d);
#undef STRFLAG
#undef NUMFLAG
		if (!strcmp(a, "-o")) {
			if (++i >= argc) {
				error("-o needs a directory");
				return -1;
			}
			o->out = argv[i];
		} else if (!strcmp(a, "--json")) {
			o->json = 1;
		} else if (!strcmp(a, "--resume")) {
			o->resume = 1;
		} else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
			o->quiet = 1;
		} else if (!strcmp(a, "--slurm")) {
			o->slurm = 1;
		} else if (!strcmp(a, "--no-wait")) {
			o->no_wait = 1;
		} else if (!strcmp(a, "--device") || !strncmp(a, "--device=", 9)) {
			error("--device is chosen per worker by 'cutegen suite'; use --gpus");
			return -1;
		} else {
			pass_add(o, a);
		}
	}
	if (o->run_args) {
		/* split on blanks; no quoting (a value with a blank goes after "--") */
		char *copy = xstrdup(o->run_args), *save = NULL;
		for (char *tok = strtok_r(copy, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save))
			pass_add(o, tok);
		free(copy);
	}
	if (o->npass > RUN_ARGS_MAX) {
		error("more than %d flags for 'cutegen run'", RUN_ARGS_MAX);
		return -1;
	}
	return 0;
}

/* ---- the task list ---- */

struct task_list {
	char **specs;
	int n;
};

static void task_list_release(struct task_list *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->specs[i]);
	free(l->specs);
	l->specs = NULL;
	l->n = 0;
}

static void task_list_add(struct task_list *l, const char *spec)
{
	l->specs = xrealloc(l->specs, sizeof(*l->specs) * (size_t)(l->n + 1));
	l->specs[l->n++] = xstrdup(spec);
}

/* A built-in suite name, or a file with one task (built-in name or task file) a line; task
 * files named relative to the list are resolved against its directory, to absolute paths. */
static int load_task_list(const char *what, struct task_list *l, char **err)
{
	const char *const *names;
	int n = suite_tasks(what, &names);
	if (n >= 0) {
		for (int i = 0; i < n; i++)
			task_list_add(l, names[i]);
		return 0;
	}
	struct strbuf sb = STRBUF_INIT;
	int r = strbuf_read_file(&sb, what, LIST_MAX);
	if (r) {
		*err = r == -2 ? xasprintf("task list '%s' is larger than 1 MiB", what)
			       : xasprintf("'%s' is neither a built-in suite (kb1, hopper) nor a "
					   "readable task list file", what);
		strbuf_release(&sb);
		return -1;
	}
	char *dir = xstrdup(what);
	char *slash = strrchr(dir, '/');
	if (slash)
		slash[1] = 0;
	else
		strcpy(dir, "");
	int rc = 0;
	char *save = NULL;
	for (char *line = strtok_r(sb.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		while (*line == ' ' || *line == '\t')
			line++;
		size_t len = strlen(line);
		while (len && (line[len - 1] == ' ' || line[len - 1] == '\t' || line[len - 1] == '\r'))
			line[--len] = 0;
		if (!len || line[0] == '#')
			continue;
		if (l->n >= TASKS_MAX) {
			*err = xasprintf("task list '%s' has more than %d tasks", what, TASKS_MAX);
			rc = -1;
			break;
		}
		if (task_builtin(line)) {
			task_list_add(l, line);
			continue;
		}
		char *path = line[0] == '/' ? xstrdup(line) : xasprintf("%s%s", dir, line);
		char real[PATH_MAX];
		if (!realpath(path, real)) {
			*err = xasprintf("task list '%s': '%s' is neither a built-in task nor a task "
					 "file", what, line);
			free(path);
			rc = -1;
			break;
		}
		task_list_add(l, real);
		free(path);
	}
	free(dir);
	strbuf_release(&sb);
	if (!rc && !l->n) {
		*err = xasprintf("task list '%s' names no task", what);
		rc = -1;
	}
	return rc;
}

/* ---- one task's run (shared by the local pool and suite-worker) ---- */

static const char *cutegen_path(void)
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

/*
 * ^C (or TERM) once: no new tasks, the running ones finish. Twice: the running runs are
 * stopped now (their process groups killed: each counts as failed, "interrupted") and the
 * summary is still written. A third: exit at once (the runs die with us).
 */
static volatile sig_atomic_t suite_interrupted;
static volatile pid_t running_runs[WORKERS_MAX];

static void on_signal(int sig)
{
	(void)sig;
	if (suite_interrupted == 2)
		_exit(130);
	if (suite_interrupted == 1) {
		suite_interrupted = 2;
		for (int i = 0; i < WORKERS_MAX; i++)
			if (running_runs[i] > 0)
				kill(-running_runs[i], SIGKILL);
		return;
	}
	suite_interrupted = 1;
}

/*
 * Runs `cutegen run SPEC --out RUN_DIR --quiet [--device N] ARGS...` and fills res (status,
 * exit code, wall, best, message). A run that exits 0 (a verified kernel) or 1 (it ran, no
 * correct kernel) is done; anything else (other exit codes, a signal, the deadline) failed.
 */
static void run_one(const struct suite_task *row, char *const *pass, int npass, int device,
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
	argv[k++] = cutegen_path();
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
	res->started = unix_now();
	int started = !run_command(&cp);
	res->finished = unix_now();
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

/* ---- the local pool ---- */

struct worker {
	char name[48];
	int device;   /* -1 for compile-only CPU workers */
	char *env[3]; /* for its runs: the GPU's turn lock and build jobs when workers share a GPU */
	int index;    /* its slot in running_runs */
	double busy_s;
	int tasks;
	pthread_t thread;
	struct pool *pool;
};

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

/* "3/12 done, 2 running, 1 failed | ETA 4m10s | best 2.31x 1.80x 1.20x" (caller holds mu). */
static void progress_text(struct pool *p, int nworkers, char *buf, size_t len)
{
	size_t left = p->qlen - p->qhead;
	double eta = -1;
	if (p->task_wall_n && nworkers)
		eta = p->task_wall_sum / p->task_wall_n * (double)(left + (size_t)p->running) / nworkers;
	char e[32];
	fmt_secs(e, sizeof(e), eta);
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
		pthread_mutex_unlock(&p->mu);

		struct suite_task res;
		suite_task_init(&res);
		run_one(row, o->pass, o->npass, w->device, w->name, (const char *const *)w->env,
			o->task_timeout, &running_runs[w->index], &res);

		pthread_mutex_lock(&p->mu);
		p->running--;
		w->busy_s += res.wall_s;
		w->tasks++;
		p->task_wall_sum += res.wall_s;
		p->task_wall_n++;
		if (suite_task_finish(p->ss, &res, &err) && !p->store_err)
			p->store_err = err;
		int failed = strcmp(res.status, "done") != 0;
		int retry = failed && row->attempts < p->max_attempts && !suite_interrupted;
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

/* --gpus: "all" (every GPU cutegen-runner --devices lists), "0,1,3", or "cpu:N". */
static int make_workers(const char *spec, struct worker **out, int *n, char **err)
{
	*out = NULL;
	*n = 0;
	if (spec && !strncmp(spec, "cpu:", 4)) {
		char *end;
		long k = strtol(spec + 4, &end, 10);
		if (*end || k < 1 || k > WORKERS_MAX) {
			*err = xasprintf("--gpus cpu:N needs N from 1 to %d (got \"%s\")", WORKERS_MAX, spec);
			return -1;
		}
		*out = xcalloc((size_t)k, sizeof(**out));
		for (int i = 0; i < k; i++) {
			snprintf((*out)[i].name, sizeof((*out)[i].name), "cpu%d", i);
			(*out)[i].device = -1;
		}
		*n = (int)k;
		return 0;
	}
	if (spec && strcmp(spec, "all")) {
		*out = xcalloc(WORKERS_MAX, sizeof(**out));
		const char *p = spec;
		while (*p) {
			char *end;
			long d = strtol(p, &end, 10);
			if (end == p || d < 0 || d > 1023 || (*end && *end != ',') || *n >= WORKERS_MAX) {
				*err = xasprintf("--gpus takes all, a list of device numbers like 0,1,3, "
						 "or cpu:N (got \"%s\")", spec);
				free(*out);
				*out = NULL;
				*n = 0;
				return -1;
			}
			snprintf((*out)[*n].name, sizeof((*out)[*n].name), "gpu%ld", d);
			(*out)[(*n)++].device = (int)d;
			p = *end ? end + 1 : end;
		}
		return 0;
	}
	/* all: ask the runner */
	char *runner = paths_runner();
	if (!runner) {
		*err = xstrdup("cutegen-runner not found (build it with 'make'); without GPUs use "
			       "--gpus cpu:N with --recorded-evals DIR");
		return -1;
	}
	struct strbuf sb = STRBUF_INIT;
	sb.cap = 1 << 20;
	const char *argv[] = { runner, "--devices", NULL };
	struct child_process cp = CHILD_PROCESS_INIT;
	cp.argv = argv;
	cp.out = &sb;
	cp.deadline_s = 60;
	json_t *j = NULL;
	int rc = -1;
	if (run_command(&cp)) {
		*err = xasprintf("cannot list GPUs: %s", cp.errmsg);
		goto out;
	}
	j = json_loads(sb.buf, 0, NULL);
	size_t nd = json_array_size(json_object_get(j, "devices"));
	if (!nd) {
		*err = xstrdup("no CUDA device found; without GPUs use --gpus cpu:N (compile-only "
			       "workers, with --recorded-evals DIR)");
		goto out;
	}
	if (nd > WORKERS_MAX)
		nd = WORKERS_MAX;
	*out = xcalloc(nd, sizeof(**out));
	for (size_t i = 0; i < nd; i++) {
		snprintf((*out)[i].name, sizeof((*out)[i].name), "gpu%zu", i);
		(*out)[i].device = (int)i;
	}
	*n = (int)nd;
	rc = 0;
out:
	if (j)
		json_decref(j);
	strbuf_release(&sb);
	free(runner);
	return rc;
}

/*
 * --per-gpu K: K workers on each GPU. Their runs take turns on the GPU through a lock file per
 * GPU in the suite directory (CUTEGEN_GPU_LOCK: evaluations and profiles hold it), so their
 * nvcc compiles overlap but no two timings share the GPU; each run's parallel compiles are
 * scaled down so that all the workers together keep about two per core busy.
 */
static void share_gpus(struct worker **ws, int *nw, int k, const char *suite_dir)
{
	int n = *nw * k;
	if (n > WORKERS_MAX)
		n = WORKERS_MAX;
	struct worker *out = xcalloc((size_t)n, sizeof(*out));
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	long jobs = (2 * (cores > 0 ? cores : 1) + n - 1) / n;
	const char *set = getenv("CUTEGEN_BUILD_JOBS");
	for (int i = 0; i < n; i++) {
		const struct worker *g = &(*ws)[i / k];
		snprintf(out[i].name, sizeof(out[i].name), "%.32s.%d", g->name, i % k);
		out[i].device = g->device;
		out[i].env[0] = xasprintf("CUTEGEN_GPU_LOCK=%s/gpu%d.lock", suite_dir, g->device);
		if (!(set && *set))
			out[i].env[1] = xasprintf("CUTEGEN_BUILD_JOBS=%ld", jobs < 2 ? 2 : jobs);
	}
	free(*ws);
	*ws = out;
	*nw = n;
}

static void free_workers(struct worker *ws, int nw)
{
	for (int i = 0; i < nw; i++)
		for (int e = 0; ws[i].env[e]; e++)
			free(ws[i].env[e]);
	free(ws);
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

/* ---- summary ---- */

static void print_summary(struct suite_store *ss, const char *suite_dir, long session,
			  double wall_s, const struct suite_opts *o, json_t *busy)
{
	struct suite_task *rows = NULL;
	size_t n = 0;
	char *err = NULL;
	if (suite_rows(ss, &rows, &n, &err)) {
		error("%s", err);
		free(err);
		return;
	}
	struct suite_summary s;
	suite_summarize(rows, n, &s);
	if (o->json) {
		json_t *fp = json_object();
		for (int p = 0; p < SUITE_FAST_P_N; p++) {
			char k[16];
			snprintf(k, sizeof(k), "%g", suite_fast_p_thresholds[p]);
			json_object_set_new(fp, k, json_real(s.fast_p[p]));
		}
		json_t *tasks = json_array();
		for (size_t i = 0; i < n; i++) {
			const struct suite_task *t = &rows[i];
			json_array_append_new(tasks, json_pack(
				"{s:I, s:s, s:s, s:s, s:i, s:s?, s:i, s:f, s:b, s:o, s:o, s:o, s:s?}",
				"id", (json_int_t)t->id, "task", t->spec, "run_dir", t->run_dir,
				"status", t->status, "attempts", t->attempts, "worker", t->worker,
				"exit_code", t->exit_code, "wall_s", t->wall_s, "correct", t->correct,
				"best_ms", t->best_ms >= 0 ? json_real(t->best_ms) : json_null(),
				"speedup", t->best_speedup > 0 ? json_real(t->best_speedup) : json_null(),
				"roofline_fraction", t->best_roof > 0 ? json_real(t->best_roof) : json_null(),
				"message", t->message));
		}
		json_t *j = json_pack("{s:s, s:I, s:i, s:i, s:i, s:i, s:i, s:i, s:o, s:o, s:o, s:f, s:o, "
				      "s:o}", "suite_dir", suite_dir, "session", (json_int_t)session,
				      "tasks", s.tasks, "done", s.done, "failed", s.failed, "pending",
				      s.pending, "running", s.running, "correct", s.correct,
				      "fast_p", fp, "geomean_speedup",
				      s.n_speedup ? json_real(s.geomean_speedup) : json_null(),
				      "geomean_roofline_fraction",
				      s.n_roof ? json_real(s.geomean_roof) : json_null(), "wall_s", wall_s,
				      "workers", busy ? json_incref(busy) : json_array(), "results", tasks);
		char *txt = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
		puts(txt);
		free(txt);
		json_decref(j);
	} else {
		printf("suite     %s: %d tasks, %d done (%d with a correct kernel), %d failed, %d "
		       "not run\n", suite_dir, s.tasks, s.done, s.correct, s.failed,
		       s.pending + s.running);
		printf("fast_p   ");
		for (int p = 0; p < SUITE_FAST_P_N; p++)
			printf(" p=%g %.0f%%", suite_fast_p_thresholds[p], s.fast_p[p] * 100);
		printf("\n");
		if (s.n_speedup)
			printf("geomean   %.3fx the baseline over %d correct tasks", s.geomean_speedup,
			       s.n_speedup);
		if (s.n_roof)
			printf("%s%.0f%% of the roofline over %d", s.n_speedup ? "; " : "geomean   ",
			       s.geomean_roof * 100, s.n_roof);
		if (s.n_speedup || s.n_roof)
			printf("\n");
		for (size_t i = 0; i < n; i++)
			if (!strcmp(rows[i].status, "failed"))
				printf("failed    %s after %d attempt%s: %.200s\n", rows[i].spec,
				       rows[i].attempts, rows[i].attempts == 1 ? "" : "s",
				       rows[i].message ? rows[i].message : "");
		if (busy && json_array_size(busy) && wall_s > 0) {
			printf("busy      wall %.1f s:", wall_s);
			size_t i;
			json_t *w;
			json_array_foreach(busy, i, w)
				printf(" %s %.0f%%", json_string_value(json_object_get(w, "worker")),
				       json_number_value(json_object_get(w, "busy_share")) * 100);
			printf("\n");
		}
	}
	suite_rows_free(rows, n);
}

/* Runs args/tasks into the store; 0 or an exit code (printed). */
static int prepare_store(struct suite_store *ss, const char *what, const char *suite_dir,
			 struct suite_opts *o)
{
	struct task_list l = { 0 };
	char *err = NULL;
	int rc = EXIT_INPUT;
	if (load_task_list(what, &l, &err))
		goto out;
	for (int i = 0; i < l.n; i++) {
		char *name = suite_run_dir_name(i, l.specs[i]);
		char *dir = xasprintf("%s/runs/%s", suite_dir, name);
		int r = suite_add_task(ss, i, l.specs[i], dir, &err);
		free(name);
		free(dir);
		if (r)
			goto out;
	}
	/* the run flags: given ones replace the stored ones; none given reuses them (resume) */
	if (o->npass) {
		json_t *a = json_array();
		for (int i = 0; i < o->npass; i++)
			json_array_append_new(a, json_string(o->pass[i]));
		char *txt = json_dumps(a, JSON_COMPACT);
		json_decref(a);
		int r = suite_meta_set(ss, "run_args", txt, &err);
		free(txt);
		if (r)
			goto out;
	} else {
		char *txt = suite_meta_get(ss, "run_args");
		json_t *a = txt ? json_loads(txt, 0, NULL) : NULL;
		size_t i;
		json_t *v;
		json_array_foreach(a, i, v)
			if (json_is_string(v) && o->npass < RUN_ARGS_MAX)
				pass_add(o, json_string_value(v));
		if (a)
			json_decref(a);
		free(txt);
	}
	if (suite_meta_set(ss, "source", what, &err))
		goto out;
	rc = 0;
out:
	if (rc)
		error("%s", err);
	free(err);
	task_list_release(&l);
	return rc;
}

static int run_pool(struct suite_store *ss, const char *suite_dir, const struct suite_opts *o,
		    long session)
{
	struct worker *ws = NULL;
	int nw = 0, rc = EXIT_INTERNAL;
	char *err = NULL;
	struct pool p;
	memset(&p, 0, sizeof(p));
	pthread_mutex_init(&p.mu, NULL);
	json_t *busy = json_array();
	if (make_workers(o->gpus, &ws, &nw, &err)) {
		error("%s", err);
		rc = EXIT_ENV;
		goto out;
	}
	if (o->per_gpu > 1 && ws[0].device >= 0)
		share_gpus(&ws, &nw, o->per_gpu, suite_dir);
	if (ws[0].device < 0 && !has_recorded_evals(o)) {
		error("--gpus cpu:N runs compile-only workers: they compile with nvcc and take each "
		      "kernel's evaluation from --recorded-evals DIR (give it after the suite's flags)");
		rc = EXIT_USAGE;
		goto out;
	}
	int requeued = 0;
	if (suite_requeue(ss, o->attempts, &requeued, &err) ||
	    suite_rows(ss, &p.rows, &p.nrows, &err)) {
		error("%s", err);
		goto out;
	}
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
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	p.started = now_s();
	p.alive = nw;
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
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	double wall = now_s() - p.started;
	for (int i = 0; i < nw; i++) {
		if (suite_add_busy(ss, session, ws[i].name, ws[i].busy_s, ws[i].tasks, &err)) {
			error("%s", err);
			goto out;
		}
		json_array_append_new(busy, json_pack("{s:s, s:i, s:f, s:i, s:f}", "worker", ws[i].name,
						      "gpu", ws[i].device, "busy_s", ws[i].busy_s,
						      "tasks", ws[i].tasks, "busy_share",
						      wall > 0 ? ws[i].busy_s / wall : 0));
	}
	if (suite_session_end(ss, session, wall, &err)) {
		error("%s", err);
		goto out;
	}
	if (p.store_err) {
		error("%s", p.store_err);
		goto out;
	}
	print_summary(ss, suite_dir, session, wall, o, busy);
	if (suite_interrupted)
		rc = 130;
	else
		rc = p.failed ? EXIT_VERDICT : EXIT_OK;
out:
	free(err);
	free(p.store_err);
	free(p.queue);
	suite_rows_free(p.rows, p.nrows);
	free_workers(ws, nw);
	json_decref(busy);
	pthread_mutex_destroy(&p.mu);
	return rc;
}

/* ---- Slurm ---- */

static char *shell_quote(const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addch(&sb, '\'');
	for (; *s; s++)
		if (*s == '\'')
			strbuf_addstr(&sb, "'\\''");
		else
			strbuf_addch(&sb, *s);
	strbuf_addch(&sb, '\'');
	return strbuf_detach(&sb, NULL);
}

/* One submission: its job, manifest, and which rows each element holds. */
struct submission {
	char job[SLURM_JOB_MAX];
	char *manifest;
	int nelem;
	long **elem_ids;  /* elem_ids[e]: row ids, terminated by -1 */
};

static void submission_release(struct submission *s)
{
	for (int e = 0; e < s->nelem; e++)
		free(s->elem_ids[e]);
	free(s->elem_ids);
	free(s->manifest);
	memset(s, 0, sizeof(*s));
}

/* Writes the manifest and job script for the pending rows and submits the array. */
static int slurm_submit_pending(struct suite_store *ss, const char *suite_dir,
				const struct suite_opts *o, struct suite_task *rows, size_t n,
				long session, struct submission *sub, char **err)
{
	char *abs_dir = realpath(suite_dir, NULL);
	char *sdir = xasprintf("%s/slurm", abs_dir ? abs_dir : suite_dir);
	char *script = NULL, *qexe = NULL, *qman = NULL, *array = NULL, *output = NULL;
	char *part = NULL, *tl = NULL, *gpt = NULL;
	json_t *m = json_object(), *elems = json_array(), *args = json_array();
	int rc = -1, npend = 0;
	for (size_t i = 0; i < n; i++)
		npend += !strcmp(rows[i].status, "pending");
	sub->nelem = (npend + o->chunk - 1) / o->chunk;
	sub->elem_ids = xcalloc((size_t)sub->nelem + 1, sizeof(*sub->elem_ids));
	int e = -1, in_elem = o->chunk;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(rows[i].status, "pending"))
			continue;
		if (in_elem == o->chunk) {
			e++;
			in_elem = 0;
			sub->elem_ids[e] = xcalloc((size_t)o->chunk + 1, sizeof(long));
			json_array_append_new(elems, json_array());
		}
		sub->elem_ids[e][in_elem++] = rows[i].id;
		sub->elem_ids[e][in_elem] = -1;
		json_array_append_new(json_array_get(elems, (size_t)e),
				      json_pack("{s:I, s:s, s:s}", "id", (json_int_t)rows[i].id,
						"spec", rows[i].spec, "run_dir", rows[i].run_dir));
	}
	for (int i = 0; i < o->npass; i++)
		json_array_append_new(args, json_string(o->pass[i]));
	json_object_set_new(m, "suite_dir", json_string(abs_dir ? abs_dir : suite_dir));
	json_object_set_new(m, "cpu", json_boolean(o->gpus_per_task == 0 ||
						   (o->gpus && !strncmp(o->gpus, "cpu:", 4))));
	json_object_set_new(m, "task_timeout", json_real(o->task_timeout));
	json_object_set_new(m, "run_args", args);
	json_object_set_new(m, "elements", elems);
	if (mkdir_p(sdir)) {
		*err = xasprintf("cannot create '%s': %s", sdir, strerror(errno));
		goto out;
	}
	sub->manifest = xasprintf("%s/submit-%ld.json", sdir, session);
	script = xasprintf("%s/submit-%ld.sh", sdir, session);
	if (json_dump_file(m, sub->manifest, JSON_INDENT(1))) {
		*err = xasprintf("cannot write '%s'", sub->manifest);
		goto out;
	}
	qexe = shell_quote(cutegen_path());
	qman = shell_quote(sub->manifest);
	char *body = xasprintf("#!/bin/sh\n# generated by cutegen suite, do not edit\n"
			       "exec %s suite-worker %s --index \"$SLURM_ARRAY_TASK_ID\"\n", qexe, qman);
	int wr = write_file_atomic(script, body, strlen(body));
	free(body);
	if (wr || chmod(script, 0755)) {
		*err = xasprintf("cannot write '%s': %s", script, strerror(errno));
		goto out;
	}
	array = xasprintf("--array=0-%d", sub->nelem - 1);
	output = xasprintf("--output=%s/submit-%ld_%%a.out", sdir, session);
	const char *argv[16];
	int k = 0;
	argv[k++] = "sbatch";
	argv[k++] = "--parsable";
	argv[k++] = "--job-name=cutegen-suite";
	argv[k++] = array;
	argv[k++] = output;
	if (o->partition)
		argv[k++] = part = xasprintf("--partition=%s", o->partition);
	if (o->time_limit)
		argv[k++] = tl = xasprintf("--time=%s", o->time_limit);
	if (!json_is_true(json_object_get(m, "cpu"))) {
		argv[k++] = "--ntasks=1";
		argv[k++] = gpt = xasprintf("--gpus-per-task=%d", o->gpus_per_task);
	}
	argv[k++] = script;
	argv[k] = NULL;
	if (slurm_submit(argv, sub->job, err))
		goto out;
	char *active = xasprintf("%s %s", sub->job, sub->manifest);
	int r = suite_meta_set(ss, "slurm_active", active, err);
	free(active);
	if (r)
		goto out;
	for (int el = 0; el < sub->nelem; el++)
		for (long *id = sub->elem_ids[el]; *id >= 0; id++) {
			char w[64];
			snprintf(w, sizeof(w), "slurm:%s_%d", sub->job, el);
			if (suite_task_start(ss, *id, w, -1, err))
				goto out;
		}
	rc = 0;
out:
	json_decref(m);
	free(abs_dir);
	free(sdir);
	free(script);
	free(qexe);
	free(qman);
	free(array);
	free(output);
	free(part);
	free(tl);
	free(gpt);
	return rc;
}

/* Reads a manifest (capped) as JSON. */
static json_t *load_manifest(const char *path, char **err)
{
	struct strbuf sb = STRBUF_INIT;
	int r = strbuf_read_file(&sb, path, MANIFEST_MAX);
	json_t *m = r ? NULL : json_loadb(sb.buf, sb.len, 0, NULL);
	if (!json_is_object(m) || !json_is_array(json_object_get(m, "elements"))) {
		*err = xasprintf(r == -2 ? "manifest '%s' is larger than 16 MiB"
				 : "cannot read manifest '%s' (missing or damaged)", path);
		if (m)
			json_decref(m);
		m = NULL;
	}
	strbuf_release(&sb);
	return m;
}

/* Rebuilds a submission's element map from its manifest (for a resumed driver). */
static int submission_from_manifest(const char *job, const char *manifest, struct submission *sub,
				    char **err)
{
	json_t *m = load_manifest(manifest, err);
	if (!m)
		return -1;
	json_t *elems = json_object_get(m, "elements");
	snprintf(sub->job, sizeof(sub->job), "%s", job);
	sub->manifest = xstrdup(manifest);
	sub->nelem = (int)json_array_size(elems);
	sub->elem_ids = xcalloc((size_t)sub->nelem + 1, sizeof(*sub->elem_ids));
	for (int e = 0; e < sub->nelem; e++) {
		json_t *el = json_array_get(elems, (size_t)e);
		size_t k = json_array_size(el);
		sub->elem_ids[e] = xcalloc(k + 1, sizeof(long));
		for (size_t i = 0; i < k; i++)
			sub->elem_ids[e][i] = (long)json_integer_value(
				json_object_get(json_array_get(el, i), "id"));
		sub->elem_ids[e][k] = -1;
	}
	json_decref(m);
	return 0;
}

/*
 * Tracks a submitted array until every element ended, merging each task's result file into
 * the store as it appears. An element that ended without a task's result marks that task
 * failed (with the element's state); *lost counts tasks of preempted/node-failed elements.
 */
static int slurm_track(struct suite_store *ss, const char *suite_dir, const struct suite_opts *o,
		       struct submission *sub, int *lost, char **err)
{
	int n = sub->nelem, rc = -1;
	char (*states)[SLURM_STATE_MAX] = xcalloc((size_t)n, SLURM_STATE_MAX);
	int *final = xcalloc((size_t)n, sizeof(int));
	double *unseen_since = xcalloc((size_t)n, sizeof(double));
	double t0 = now_s();
	*lost = 0;
	for (;;) {
		char *qerr = NULL;
		if (slurm_query(sub->job, n, states, &qerr)) {
			/* a query may fail while the controller is busy: retried, bounded by the wait */
			if (!o->quiet && !o->json)
				fprintf(stderr, "warning: %s\n", qerr);
			free(qerr);
		}
		int open = 0;
		for (int e = 0; e < n; e++) {
			if (final[e])
				continue;
			char *done_marker = xasprintf("%s.done-%d", sub->manifest, e);
			int marked = file_exists(done_marker);
			free(done_marker);
			enum slurm_class c = slurm_class(states[e]);
			if (c == SLURM_UNSEEN) {
				if (!unseen_since[e])
					unseen_since[e] = now_s();
				/* forgotten by the controller (MinJobAge) and no accounting */
				if (marked || now_s() - unseen_since[e] > 120)
					c = marked ? SLURM_COMPLETED : SLURM_LOST;
			} else {
				unseen_since[e] = 0;
			}
			/* merge what the element has written so far */
			for (long *id = sub->elem_ids[e]; *id >= 0; id++) {
				struct suite_task t;
				suite_task_init(&t);
				int r = suite_result_read(suite_dir, *id, &t, err);
				if (r < 0) {
					suite_task_release(&t);
					goto out;
				}
				if (r == 0 && suite_task_finish(ss, &t, err)) {
					suite_task_release(&t);
					goto out;
				}
				/* merged: the file is renamed so a later attempt's is not mistaken */
				char *merged = xasprintf("%s/results/%ld.%s_%d.json", suite_dir, *id,
							 sub->job, e);
				if (r == 0) {
					char *from = xasprintf("%s/results/%ld.json", suite_dir, *id);
					rename(from, merged);
					free(from);
				} else if (r == 1 && file_exists(merged)) {
					r = 2; /* merged at an earlier poll, while the element still ran */
				}
				free(merged);
				if (r == 1 && (c == SLURM_COMPLETED || c == SLURM_FAILED || c == SLURM_LOST)) {
					/* the element ended without this task's result */
					t.id = *id;
					t.status = xstrdup("failed");
					t.message = xasprintf("Slurm array element %s_%d ended %s without a "
							      "result", sub->job, e,
							      states[e][0] ? states[e] : "(no state)");
					if (suite_task_finish(ss, &t, err)) {
						suite_task_release(&t);
						goto out;
					}
					if (c == SLURM_LOST)
						(*lost)++;
				}
				suite_task_release(&t);
			}
			if (c == SLURM_COMPLETED || c == SLURM_FAILED || c == SLURM_LOST)
				final[e] = 1;
			else
				open++;
		}
		if (!open)
			break;
		if (suite_interrupted) {
			*err = xasprintf("interrupted; job %s goes on: 'cutegen suite ... --slurm --resume' "
					 "tracks it again", sub->job);
			goto out;
		}
		if (o->wait_timeout > 0 && now_s() - t0 > o->wait_timeout) {
			*err = xasprintf("job %s did not end within --wait-timeout %.0f s; it goes on: "
					 "'cutegen suite ... --slurm --resume' tracks it again", sub->job,
					 o->wait_timeout);
			goto out;
		}
		if (!o->quiet && !o->json && isatty(2)) {
			fprintf(stderr, "\r\033[K[suite] job %s: %d of %d elements still queued or running",
				sub->job, open, n);
			fflush(stderr);
		}
		usleep((useconds_t)(o->poll_s * 1e6));
	}
	if (!o->quiet && !o->json && isatty(2))
		fputs("\r\033[K", stderr);
	rc = suite_meta_set(ss, "slurm_active", NULL, err);
out:
	free(states);
	free(final);
	free(unseen_since);
	return rc;
}

static int run_slurm(struct suite_store *ss, const char *suite_dir, const struct suite_opts *o,
		     long session)
{
	char *err = NULL;
	int rc = EXIT_INTERNAL;
	struct suite_task *rows = NULL;
	size_t n = 0;
	struct submission sub = { 0 };
	double t0 = now_s();
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* a driver that stopped while its job ran: track that job first */
	char *active = suite_meta_get(ss, "slurm_active");
	if (active) {
		char job[SLURM_JOB_MAX] = "";
		char *sp = strchr(active, ' ');
		int lost;
		if (sp && (size_t)(sp - active) < sizeof(job)) {
			memcpy(job, active, (size_t)(sp - active));
			job[sp - active] = 0;
		}
		if (!sp || submission_from_manifest(job, sp + 1, &sub, &err) ||
		    slurm_track(ss, suite_dir, o, &sub, &lost, &err)) {
			error("%s", err ? err : "damaged slurm_active setting");
			goto out;
		}
		submission_release(&sub);
	}
	for (int round = 0;; round++) {
		int requeued, lost = 0;
		suite_rows_free(rows, n);
		rows = NULL;
		if (suite_requeue(ss, o->attempts, &requeued, &err) ||
		    suite_rows(ss, &rows, &n, &err)) {
			error("%s", err);
			goto out;
		}
		int npend = 0;
		for (size_t i = 0; i < n; i++)
			npend += !strcmp(rows[i].status, "pending");
		if (!npend)
			break;
		if (slurm_submit_pending(ss, suite_dir, o, rows, n, session * 100 + round, &sub, &err)) {
			error("%s", err);
			rc = EXIT_ENV;
			goto out;
		}
		if (!o->json && !o->quiet)
			fprintf(stderr, "suite %s: submitted %d tasks as Slurm job array %s (%d "
				"elements)\n", suite_dir, npend, sub.job, sub.nelem);
		if (o->no_wait) {
			if (!o->json)
				printf("submitted job %s; 'cutegen suite ... --slurm --resume' merges its "
				       "results\n", sub.job);
			rc = EXIT_OK;
			goto out;
		}
		if (slurm_track(ss, suite_dir, o, &sub, &lost, &err)) {
			error("%s", err);
			rc = suite_interrupted ? 130 : EXIT_EXTERNAL;
			goto out;
		}
		submission_release(&sub);
		if (round >= o->attempts + 1)
			break;
	}
	double wall = now_s() - t0;
	if (suite_session_end(ss, session, wall, &err)) {
		error("%s", err);
		goto out;
	}
	print_summary(ss, suite_dir, session, wall, o, NULL);
	suite_rows_free(rows, n);
	rows = NULL;
	if (suite_rows(ss, &rows, &n, &err)) {
		error("%s", err);
		goto out;
	}
	rc = EXIT_OK;
	for (size_t i = 0; i < n; i++)
		if (strcmp(rows[i].status, "done"))
			rc = EXIT_VERDICT;
out:
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	free(active);
	free(err);
	submission_release(&sub);
	suite_rows_free(rows, n);
	return rc;
}

int cmd_suite(int argc, char **argv)
{
	struct suite_opts o;
	if (argc < 2 || argv[1][0] == '-') {
		error("usage: cutegen suite SUITE|TASK_LIST_FILE --out SUITE_DIR [options]; "
		      "see 'cutegen help suite'");
		return EXIT_USAGE;
	}
	if (parse_suite_opts(argc, argv, &o)) {
		pass_free(&o);
		return EXIT_USAGE;
	}
	if (!o.out) {
		error("suite needs --out SUITE_DIR (its store, run directories and logs go there)");
		pass_free(&o);
		return EXIT_USAGE;
	}
	char *err = NULL;
	int rc = EXIT_INTERNAL;
	long session = 0;
	struct suite_store *ss = suite_open(o.out, &err);
	if (!ss) {
		error("%s", err);
		rc = EXIT_INPUT;
		goto out;
	}
	rc = prepare_store(ss, argv[1], o.out, &o);
	if (rc)
		goto out;
	if (suite_session_begin(ss, &session, o.slurm ? "slurm" : "local", &err)) {
		error("%s", err);
		rc = EXIT_INTERNAL;
		goto out;
	}
	rc = o.slurm ? run_slurm(ss, o.out, &o, session) : run_pool(ss, o.out, &o, session);
out:
	free(err);
	suite_close(ss);
	pass_free(&o);
	return rc;
}

/* `cutegen suite-worker MANIFEST --index I`: one Slurm array element. */
int cmd_suite_worker(int argc, char **argv)
{
	long index = -1;
	if (argc == 4 && !strcmp(argv[2], "--index")) {
		char *end;
		index = strtol(argv[3], &end, 10);
		if (*end || index < 0)
			index = -1;
	}
	if (index < 0) {
		error("usage: cutegen suite-worker MANIFEST --index N (run by a Slurm job array)");
		return EXIT_USAGE;
	}
	char *err = NULL;
	json_t *m = load_manifest(argv[1], &err);
	if (!m) {
		error("%s", err);
		free(err);
		return EXIT_INPUT;
	}
	int rc = EXIT_OK;
	json_t *el = json_array_get(json_object_get(m, "elements"), (size_t)index);
	const char *suite_dir = json_string_value(json_object_get(m, "suite_dir"));
	json_t *args = json_object_get(m, "run_args");
	size_t na = json_array_size(args);
	char **pass = xcalloc(na + 1, sizeof(*pass));
	int np = 0;
	for (size_t i = 0; i < na && i < RUN_ARGS_MAX; i++)
		if (json_is_string(json_array_get(args, i)))
			pass[np++] = (char *)json_string_value(json_array_get(args, i));
	int cpu = json_is_true(json_object_get(m, "cpu"));
	json_t *to = json_object_get(m, "task_timeout");
	double timeout = json_is_number(to) ? json_number_value(to) : 0;
	if (!json_is_array(el) || !suite_dir) {
		error("manifest '%s' has no element %ld", argv[1], index);
		rc = EXIT_INPUT;
		goto out;
	}
	const char *job = getenv("SLURM_ARRAY_JOB_ID");
	char worker[96];
	snprintf(worker, sizeof(worker), "slurm:%.40s_%ld", job ? job : "?", index);
	size_t i;
	json_t *t;
	json_array_foreach(el, i, t) {
		struct suite_task row, res;
		suite_task_init(&row);
		suite_task_init(&res);
		row.id = (long)json_integer_value(json_object_get(t, "id"));
		const char *spec = json_string_value(json_object_get(t, "spec"));
		const char *dir = json_string_value(json_object_get(t, "run_dir"));
		if (!spec || !dir) {
			error("manifest '%s': element %ld names a task without spec or run_dir", argv[1],
			      index);
			rc = EXIT_INPUT;
			continue;
		}
		/* a re-queued element does not redo a task that already has a result */
		if (suite_result_read(suite_dir, row.id, &res, &err) == 0 &&
		    !strcmp(res.status, "done")) {
			suite_task_release(&res);
			continue;
		}
		free(err);
		err = NULL;
		row.spec = xstrdup(spec);
		row.run_dir = xstrdup(dir);
		/* Slurm gives the element its GPUs as CUDA_VISIBLE_DEVICES: device 0 is ours */
		run_one(&row, pass, np, cpu ? -1 : 0, worker, NULL, timeout, NULL, &res);
		fprintf(stderr, "%s %s: %s (exit %d)%s%s\n", worker, spec, res.status, res.exit_code,
			res.message ? ": " : "", res.message ? res.message : "");
		if (suite_result_write(suite_dir, &res, &err)) {
			error("%s", err);
			free(err);
			err = NULL;
			rc = EXIT_INTERNAL;
		} else if (strcmp(res.status, "done")) {
			rc = EXIT_VERDICT;
		}
		suite_task_release(&row);
		suite_task_release(&res);
	}
	char *marker = xasprintf("%s.done-%ld", argv[1], index);
	write_file_atomic(marker, "", 0);
	free(marker);
out:
	free(err);
	free(pass);
	json_decref(m);
	return rc;
}
