/*
 * Child processes: one API for running nvcc, the runner, ncu and `cmd` model backends.
 * In the style of git's run-command, plus what git lacks: a deadline, a process group of the
 * child's own that is killed whole (SIGKILL to -pgid) when the deadline passes or the child
 * exits, resource limits, and output captured into capped buffers.
 * Not for: shell pipelines (pass argv; use {"sh","-c",...} explicitly when a shell is wanted).
 *
 * Usage:
 *   1. struct child_process cp = CHILD_PROCESS_INIT;
 *   2. set cp.argv (NULL-terminated) and what else you need: env, dir, stdin data, capture
 *      buffers (set their .cap to bound them), deadline, limits;
 *   3. run_command(&cp): returns 0 once the child ran and was reaped (whatever its exit),
 *      -1 when it could not be started (cp.errmsg says why: "no such program 'nvcc'");
 *   4. read cp.status (exit code, or 128+signal), cp.timed_out, cp.out_truncated, cp.wall_s.
 * Once the child has exited (or was killed at the deadline), what it left holding its pipes (a
 * helper in its group, or one that escaped it with setsid) gets a grace of 2 s; then its group
 * is killed and the pipes are given up: leftovers never keep run_command waiting.
 * The caller owns every buffer it passed; run_command never frees them.
 */
#ifndef CUTEGEN_PROC_H
#define CUTEGEN_PROC_H

#include <stddef.h>
#include <sys/types.h>

#include "util/strbuf.h"

struct proc_limits {
	unsigned long long as_bytes;    /* RLIMIT_AS; 0 = unchanged */
	unsigned long long cpu_s;       /* RLIMIT_CPU */
	unsigned long long fsize_bytes; /* RLIMIT_FSIZE */
	unsigned long long nofile;      /* RLIMIT_NOFILE */
	unsigned long long nproc;       /* RLIMIT_NPROC */
	unsigned long long core_bytes;  /* RLIMIT_CORE; applied always (0 = no core files) */
};

struct child_process {
	const char *const *argv;    /* argv[0] is looked up in PATH */
	const char *const *env;     /* "K=V" to set, "K" to unset, applied on top of the base env */
	int clear_env;              /* base env is empty (plus PATH, HOME, TMPDIR, LANG kept) */
	const char *dir;            /* working directory of the child; NULL = ours */
	const char *in_data;        /* written to the child's stdin; NULL = /dev/null */
	size_t in_len;
	struct strbuf *out;         /* captures stdout (bounded by out->cap); NULL = see inherit */
	struct strbuf *err;         /* captures stderr; may equal out to merge both */
	int err_tail;               /* err apart from out keeps its last err->cap bytes, not its
				       first (the end of a traceback is what a message quotes) */
	int inherit_out, inherit_err; /* with out/err NULL: 1 = our fd, 0 = /dev/null */
	struct strbuf *extra;       /* captures a third pipe (bounded by extra->cap), which the
				       child sees as descriptor extra_fd (> 2): a channel apart
				       from stdout/stderr, e.g. the runner's report */
	int extra_fd;
	double deadline_s;          /* 0 = none */
	const struct proc_limits *limits; /* NULL = none */
	int new_netns;              /* run in a new network namespace (no network but a loopback
				       that is down) where permitted (root); silently not otherwise */
	volatile pid_t *pid_slot;   /* NULL, or set to the child's pid (its process group) while it
				       runs and to 0 once it is reaped: for a signal handler to kill */

	/* results */
	int status;                 /* exit code, or 128+signal number */
	int signaled;               /* the child died from a signal (status-128 is the signal) */
	int timed_out;              /* killed because the deadline passed */
	int out_truncated;          /* some of stdout (merged with stderr or not) or of the extra
				       pipe was dropped at its buffer's cap */
	int err_truncated;          /* some of stderr captured apart was dropped at err's cap */
	int netns_applied;          /* new_netns was asked for and the namespace was made */
	double wall_s;
	char errmsg[256];
};

#define CHILD_PROCESS_INIT { 0 }

int run_command(struct child_process *cp);

/*
 * git's capture_command: runs argv (with cp's other settings) with its stdout, and its stderr
 * too when with_stderr, captured into out (at most cap bytes) within deadline_s seconds.
 * Returns run_command's result; cp says how the child ended.
 */
int capture_command(struct child_process *cp, const char **argv, struct strbuf *out, size_t cap,
		    int with_stderr, double deadline_s);

/*
 * Interactive children (git's start_command/finish_command, for a process that answers
 * requests line by line and must stay alive between them: the reference process of module
 * tasks, which holds GPU memory the runner opens meanwhile). Same argv/env/limits/process
 * group/deadline as run_command; stdin is a pipe of ours, stdout is read line by line (cp->out
 * must be set but is not filled: lines go to the caller), stderr goes to cp->err (capped) as
 * it comes. The deadline (cp->deadline_s from the start) bounds every read and the finish.
 *   1. struct child_session *s = child_session_start(&cp)  (NULL: cp.errmsg says why);
 *   2. child_session_write(s, "...\n", n); child_session_read_line(s, &line, cap, timeout_s) ...;
 *   3. child_session_finish(s, grace_s): closes its stdin, lets it exit within grace_s (and
 *      the deadline), then kills its whole process group and reaps it; cp.status, signaled,
 *      timed_out, wall_s as after run_command. Frees s. Nothing of the child survives it.
 */
struct child_session;
struct child_session *child_session_start(struct child_process *cp);
enum { CHILD_LINE_OK = 0, CHILD_LINE_EOF, CHILD_LINE_TIMEOUT, CHILD_LINE_TOOLONG };
/* The next line of its stdout without the newline, at most cap bytes, in line (reset first),
 * waiting at most timeout_s (0: up to the session's deadline only):
 * CHILD_LINE_OK, _EOF (stdout closed: it exited or closed it), _TIMEOUT (the wait ended:
 * its process group was killed, cp->timed_out set), _TOOLONG (more than cap bytes without a
 * newline). */
int child_session_read_line(struct child_session *s, struct strbuf *line, size_t cap, double timeout_s);
/* Writes all of data to its stdin; -1 when it closed it (EPIPE: no SIGPIPE). */
int child_session_write(struct child_session *s, const char *data, size_t len);
pid_t child_session_pid(const struct child_session *s);
/* 1 while the child has not exited (checked without reaping it) and its stdout is open. */
int child_session_alive(struct child_session *s);
void child_session_finish(struct child_session *s, double grace_s);

/* "SIGSEGV" for the signals a crash dies of (SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGKILL too),
 * "a signal" for others. Static. */
const char *signal_name(int sig);

/* Seconds on a monotonic clock. */
double now_s(void);

/*
 * The GPU's turn: with $CUTEGEN_GPU_LOCK naming a file, waits for an exclusive flock(2) on it
 * and returns its descriptor (-1 when the variable is unset or the file cannot be opened:
 * then nothing is held). Evaluations and profiles hold it while they run, so processes that
 * share one GPU (`cutegen suite --per-gpu N`) overlap their compiles but never their timings.
 */
int gpu_turn_take(void);
void gpu_turn_give(int fd);

#endif
