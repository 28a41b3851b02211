/*
 * Child processes with deadlines, process groups, limits and capped capture; see proc.h.
 * Everything that allocates happens before fork(): between fork and exec the child calls
 * only async-signal-safe functions, and reports an exec failure through a close-on-exec pipe.
 */
#include "common/proc.h"
#include "util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

int capture_command(struct child_process *cp, const char **argv, struct strbuf *out, size_t cap,
		    int with_stderr, double deadline_s)
{
	out->cap = cap;
	cp->argv = argv;
	cp->out = out;
	cp->err = with_stderr ? out : NULL;
	cp->deadline_s = deadline_s;
	return run_command(cp);
}

const char *signal_name(int sig)
{
	switch (sig) {
	case SIGABRT: return "SIGABRT";
	case SIGBUS: return "SIGBUS";
	case SIGFPE: return "SIGFPE";
	case SIGKILL: return "SIGKILL";
	case SIGSEGV: return "SIGSEGV";
	case SIGILL: return "SIGILL";
	default: return "a signal";
	}
}

double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* pump(): what may hold a child's pipes open once it has exited gets this long; the child's
 * exit is looked for at least this often */
#define PUMP_GRACE_S 2.0
#define PUMP_POLL_S 0.1

#define CLOSE_RANGE_CLOEXEC_FLAG (1u << 2) /* CLOSE_RANGE_CLOEXEC, Linux 5.11 */

int gpu_turn_take(void)
{
	const char *path = getenv("CUTEGEN_GPU_LOCK");
	if (!path || !*path)
		return -1;
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	while (flock(fd, LOCK_EX) && errno == EINTR)
		;
	return fd;
}

void gpu_turn_give(int fd)
{
	if (fd >= 0)
		close(fd); /* closing drops the lock */
}

static int env_key_eq(const char *a, const char *b)
{
	while (*a && *a != '=' && *a == *b && *b != '=') {
		a++;
		b++;
	}
	return (*a == '=' || !*a) && (*b == '=' || !*b);
}

/* Builds the child's environment: base (all of ours, or a few safe ones) with edits applied. */
static char **build_env(const struct child_process *cp)
{
	size_t n = 0, alloc = 0;
	char **v = NULL;
	static const char *keep[] = { "PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "CUDA_VISIBLE_DEVICES" };
	for (char **e = environ; *e; e++) {
		int take = !cp->clear_env;
		for (size_t k = 0; !take && k < ARRAY_SIZE(keep); k++)
			take = env_key_eq(*e, keep[k]);
		if (take) {
			ALLOC_GROW(v, n + 1, alloc);
			v[n++] = *e;
		}
	}
	for (const char *const *e = cp->env; e && *e; e++) {
		size_t j = 0;
		for (size_t i = 0; i < n; i++)
			if (!env_key_eq(v[i], *e))
				v[j++] = v[i];
		n = j;
		if (strchr(*e, '=')) {
			ALLOC_GROW(v, n + 1, alloc);
			v[n++] = (char *)*e;
		}
	}
	ALLOC_GROW(v, n + 1, alloc);
	v[n] = NULL;
	return v;
}

/* Resolves argv[0] in PATH before fork, so the child needs no allocation. */
static char *resolve_program(const char *name, const char *path_env)
{
	if (strchr(name, '/'))
		return access(name, X_OK) == 0 ? xstrdup(name) : NULL;
	const char *p = path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
	while (*p) {
		const char *c = strchr(p, ':');
		size_t len = c ? (size_t)(c - p) : strlen(p);
		char *cand = xasprintf("%.*s/%s", (int)len, len ? p : ".", name);
		if (access(cand, X_OK) == 0)
			return cand;
		free(cand);
		if (!c)
			break;
		p = c + 1;
	}
	return NULL;
}

static void set_limit(int res, unsigned long long v)
{
	struct rlimit rl = { (rlim_t)v, (rlim_t)v };
	setrlimit(res, &rl);
}

static _Noreturn void child_fail(int fd, const char *what)
{
	int e = errno;
	char msg[128];
	size_t n = 0;
	for (const char *s = what; *s && n < 100; s++)
		msg[n++] = *s;
	msg[n++] = ':';
	msg[n++] = (char)e;
	(void)!write(fd, msg, n);
	_exit(127);
}

/* The pipes of one child: stdin, stdout, stderr, the extra one (cp->extra, fd cp->extra_fd in
 * the child), and the exec report (close-on-exec). */
struct child_pipes {
	int in[2], out[2], err[2], x[2], ex[2];
};

/* In the child, between fork and exec: async-signal-safe calls only. Never returns. */
static _Noreturn void child_start(const struct child_process *cp, const struct child_pipes *p,
				  int devnull, pid_t parent, const char *prog, char **envp)
{
	int exfd = p->ex[1];
	/* It runs in a process group of its own (a deadline kills the group), which signals to
	 * ours do not reach: so it dies with the thread that started it, and no run, compile or
	 * evaluation outlives cutegen. */
	setpgid(0, 0);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(127);
	signal(SIGPIPE, SIG_DFL);
	int in = cp->in_data ? p->in[0] : devnull;
	int o = cp->out ? p->out[1] : (cp->inherit_out ? 1 : devnull);
	int e = cp->err ? (cp->err == cp->out ? p->out[1] : p->err[1])
			: (cp->inherit_err ? 2 : devnull);
	if (dup2(in, 0) < 0 || (o != 1 && dup2(o, 1) < 0) || (e != 2 && dup2(e, 2) < 0))
		child_fail(exfd, "dup2");
	if (cp->extra) {
		/* the exec-failure pipe must not be where the extra one goes */
		if (exfd == cp->extra_fd)
			exfd = fcntl(exfd, F_DUPFD_CLOEXEC, cp->extra_fd + 1);
		/* dup2 onto itself keeps close-on-exec: cleared by hand below */
		if (p->x[1] != cp->extra_fd && dup2(p->x[1], cp->extra_fd) < 0)
			child_fail(exfd, "dup2");
	}
	/* nothing of ours leaks into the child but 0-2 and the extra pipe: every other
	 * descriptor closes at exec (a log file cutegen holds open must not be writable by a
	 * candidate in the runner) */
	if (syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC_FLAG))
		for (int fd = 3; fd < 4096; fd++)
			fcntl(fd, F_SETFD, FD_CLOEXEC);
	if (cp->extra && fcntl(cp->extra_fd, F_SETFD, 0) < 0)
		child_fail(exfd, "fcntl");
	if (cp->dir && chdir(cp->dir))
		child_fail(exfd, "chdir");
	if (cp->limits) {
		const struct proc_limits *l = cp->limits;
		if (l->as_bytes) set_limit(RLIMIT_AS, l->as_bytes);
		if (l->cpu_s) set_limit(RLIMIT_CPU, l->cpu_s);
		if (l->fsize_bytes) set_limit(RLIMIT_FSIZE, l->fsize_bytes);
		if (l->nofile) set_limit(RLIMIT_NOFILE, l->nofile);
		if (l->nproc) set_limit(RLIMIT_NPROC, l->nproc);
		set_limit(RLIMIT_CORE, l->core_bytes);
	}
	/* a network namespace of its own: only a loopback, down; EPERM without root */
	if (cp->new_netns && unshare(CLONE_NEWNET) == 0)
		(void)!write(exfd, "N", 1);
	execve(prog, (char *const *)cp->argv, envp);
	child_fail(exfd, "exec");
}

/* Reads the exec report until exec closes it: "N" when the network namespace was made, then a
 * failure message. 0 when the program runs, -1 (child reaped, cp->errmsg set) when not. */
static int read_exec_report(struct child_process *cp, int ex_fd, pid_t pid)
{
	char exmsg[160];
	ssize_t exn = 0, got;
	while (exn < (ssize_t)sizeof(exmsg) &&
	       ((got = read(ex_fd, exmsg + exn, sizeof(exmsg) - (size_t)exn)) > 0 ||
		(got < 0 && errno == EINTR)))
		exn += got > 0 ? got : 0;
	if (exn > 0 && exmsg[0] == 'N') {
		cp->netns_applied = 1;
		memmove(exmsg, exmsg + 1, (size_t)--exn);
	}
	if (exn <= 0)
		return 0;
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	int e = (unsigned char)exmsg[exn - 1];
	snprintf(cp->errmsg, sizeof(cp->errmsg), "cannot run '%s': %.*s failed: %s", cp->argv[0],
		 (int)(exn - 2), exmsg, strerror(e));
	return -1;
}

/* Appends child output to sb up to its cap; past it, keeps its first cap bytes (with tail, its
 * last: the end of a traceback is what a message quotes) and sets *cut. */
static void sink_add(struct strbuf *sb, const char *buf, size_t n, int tail, int *cut)
{
	if (!strbuf_add(sb, buf, n))
		return;
	*cut = 1;
	if (!tail) {
		size_t room = sb->cap > sb->len ? sb->cap - sb->len : 0;
		strbuf_add(sb, buf, room);
		return;
	}
	if (n >= sb->cap) {
		strbuf_reset(sb);
		strbuf_add(sb, buf + n - sb->cap, sb->cap);
		return;
	}
	size_t drop = sb->len + n - sb->cap; /* < sb->len, since n < cap */
	memmove(sb->buf, sb->buf + drop, sb->len - drop);
	strbuf_setlen(sb, sb->len - drop);
	strbuf_add(sb, buf, n);
}

/* Whether the child has exited (it is not reaped: reap() does that). */
static int child_exited(pid_t pid)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	return !waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) && si.si_pid == pid;
}

/* Kills the child's process group, and the child itself should it have left the group. */
static void kill_child(pid_t pid)
{
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
}

/*
 * Feeds stdin and drains stdout/stderr until all close, or the deadline (*deadline, 0 = none)
 * passes: then the group is killed and *deadline cleared. Once the child has exited or been
 * killed, what holds its pipes open (a helper it left in its group, or one that escaped it with
 * setsid) gets PUMP_GRACE_S more: then the group is killed and the pipes are closed unread, so
 * no leftover can keep us waiting. A child that exits without reading all its stdin must not
 * kill us with SIGPIPE: EPIPE will do. Closes the pipes it ends.
 */
static void pump(struct child_process *cp, struct child_pipes *p, pid_t pid, double *deadline)
{
	struct sigaction ign, old_pipe;
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &ign, &old_pipe);
	if (p->in[1] >= 0)
		fcntl(p->in[1], F_SETFL, O_NONBLOCK);
	size_t in_off = 0;
	double stop = 0; /* when the pipes are given up: the child's end (or the kill at the
			    * deadline) plus the grace */
	struct strbuf *sinks[3] = { cp->out, cp->err == cp->out ? NULL : cp->err, cp->extra };
	int *cuts[3] = { &cp->out_truncated, &cp->err_truncated, &cp->out_truncated };
	int *fds[3] = { &p->out[0], &p->err[0], &p->x[0] };
	for (;;) {
		struct pollfd pfd[4];
		int np = 0, idx[4];
		for (int k = 0; k < 3; k++)
			if (*fds[k] >= 0) {
				pfd[np].fd = *fds[k];
				pfd[np].events = POLLIN;
				idx[np++] = k;
			}
		if (p->in[1] >= 0) {
			pfd[np].fd = p->in[1];
			pfd[np].events = POLLOUT;
			idx[np++] = 3;
		}
		if (!np)
			break;
		if (!stop && child_exited(pid))
			stop = now_s() + PUMP_GRACE_S;
		if (stop && now_s() >= stop) {
			kill_child(pid);
			for (int i = 0; i < np; i++)
				close(pfd[i].fd);
			p->out[0] = p->err[0] = p->x[0] = p->in[1] = -1;
			break;
		}
		/* the child's exit is polled for: at most PUMP_POLL_S between looks */
		double until = stop ? stop : now_s() + PUMP_POLL_S;
		if (*deadline) {
			double left = *deadline - now_s();
			if (left <= 0) {
				/* a child that exited in time did not time out: only its leftovers did */
				kill_child(pid);
				*deadline = 0;
				if (!stop)
					cp->timed_out = 1;
				stop = stop ? now_s() : now_s() + PUMP_GRACE_S;
				continue;
			}
			if (*deadline < until)
				until = *deadline;
		}
		double wait = until - now_s();
		int r = poll(pfd, (nfds_t)np, wait > 0 ? (int)(wait * 1000) + 1 : 0);
		if (r < 0 && errno != EINTR)
			break;
		for (int i = 0; r > 0 && i < np; i++) {
			if (!pfd[i].revents)
				continue;
			int k = idx[i];
			if (k == 3) {
				ssize_t w = write(p->in[1], cp->in_data + in_off, cp->in_len - in_off);
				if (w > 0)
					in_off += (size_t)w;
				if ((w < 0 && errno != EAGAIN && errno != EINTR) || in_off == cp->in_len ||
				    (pfd[i].revents & (POLLERR | POLLHUP))) {
					close(p->in[1]);
					p->in[1] = -1;
				}
				continue;
			}
			char buf[65536];
			ssize_t n = read(*fds[k], buf, sizeof(buf));
			if (n > 0) {
				sink_add(sinks[k], buf, (size_t)n, k == 1 && cp->err_tail, cuts[k]);
			} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
				close(*fds[k]);
				*fds[k] = -1;
			}
		}
	}
	sigaction(SIGPIPE, &old_pipe, NULL);
}

/* Waits for the child (killing its group at the deadline), then kills what it left in its
 * group; fills cp's status. */
static void reap(struct child_process *cp, pid_t pid, double deadline)
{
	int status = 0;
	for (;;) {
		if (deadline) {
			pid_t w = waitpid(pid, &status, WNOHANG);
			if (w == pid)
				break;
			if (now_s() >= deadline) {
				kill_child(pid);
				cp->timed_out = 1;
				deadline = 0;
				continue;
			}
			usleep(2000);
			continue;
		}
		if (waitpid(pid, &status, 0) == pid || errno != EINTR)
			break;
	}
	if (cp->pid_slot)
		*cp->pid_slot = 0;
	/* The candidate may have left helpers behind in its group: they go too. */
	kill(-pid, SIGKILL);
	if (WIFEXITED(status)) {
		cp->status = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		cp->status = 128 + WTERMSIG(status);
		cp->signaled = 1;
	}
}

/*
 * Starts cp's child: resolves the program, makes the pipes (stdin when in_data or pipe_in,
 * stdout/stderr/extra when captured), forks, execs, reads the exec report. 0 with *pid and
 * *start set and the parent's ends of the pipes open in *p; -1 with cp->errmsg (nothing left
 * running, every pipe closed by the caller).
 */
static int spawn(struct child_process *cp, struct child_pipes *p, int pipe_in, pid_t *pid_out,
		 double *start)
{
	int rc = -1, devnull = -1;
	char **envp = NULL;
	char *prog = NULL;

	cp->status = -1;
	cp->signaled = cp->timed_out = cp->out_truncated = cp->err_truncated = cp->netns_applied = 0;
	cp->errmsg[0] = '\0';
	if (!cp->argv || !cp->argv[0])
		BUG("run_command without argv");
	if (cp->extra && cp->extra_fd <= 2)
		BUG("run_command: extra_fd %d must be above 2", cp->extra_fd);

	prog = resolve_program(cp->argv[0], getenv("PATH"));
	if (!prog) {
		snprintf(cp->errmsg, sizeof(cp->errmsg), "no such program '%s' (not found in PATH)",
			 cp->argv[0]);
		return -1;
	}
	envp = build_env(cp);
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (pipe2(p->ex, O_CLOEXEC) || ((cp->in_data || pipe_in) && pipe2(p->in, O_CLOEXEC)) ||
	    (cp->out && pipe2(p->out, O_CLOEXEC)) ||
	    (cp->err && cp->err != cp->out && pipe2(p->err, O_CLOEXEC)) ||
	    (cp->extra && pipe2(p->x, O_CLOEXEC))) {
		snprintf(cp->errmsg, sizeof(cp->errmsg), "cannot create pipes: %s", strerror(errno));
		goto out;
	}

	*start = now_s();
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(cp->errmsg, sizeof(cp->errmsg), "cannot fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		if (pipe_in && !cp->in_data) {
			/* child_start reads in_data only to choose stdin: any non-NULL will do */
			cp->in_data = "";
		}
		child_start(cp, p, devnull, parent, prog, envp);
	}
	setpgid(pid, pid); /* also from the parent, to win the race with kill(-pid) */
	if (cp->pid_slot)
		*cp->pid_slot = pid;
	close(p->ex[1]);
	p->ex[1] = -1;
	if (p->in[0] >= 0) { close(p->in[0]); p->in[0] = -1; }
	if (p->out[1] >= 0) { close(p->out[1]); p->out[1] = -1; }
	if (p->err[1] >= 0) { close(p->err[1]); p->err[1] = -1; }
	if (p->x[1] >= 0) { close(p->x[1]); p->x[1] = -1; }

	if (read_exec_report(cp, p->ex[0], pid)) {
		if (cp->pid_slot)
			*cp->pid_slot = 0;
		goto out;
	}
	*pid_out = pid;
	rc = 0;
out:
	if (devnull >= 0)
		close(devnull);
	free(envp);
	free(prog);
	return rc;
}

static void close_pipes(struct child_pipes *p)
{
	for (int i = 0; i < 2; i++) {
		if (p->in[i] >= 0) close(p->in[i]);
		if (p->out[i] >= 0) close(p->out[i]);
		if (p->err[i] >= 0) close(p->err[i]);
		if (p->ex[i] >= 0) close(p->ex[i]);
		if (p->x[i] >= 0) close(p->x[i]);
		p->in[i] = p->out[i] = p->err[i] = p->ex[i] = p->x[i] = -1;
	}
}

#define PIPES_INIT { { -1, -1 }, { -1, -1 }, { -1, -1 }, { -1, -1 }, { -1, -1 } }

int run_command(struct child_process *cp)
{
	struct child_pipes p = PIPES_INIT;
	pid_t pid = 0;
	double start = 0;
	int rc = -1;
	if (spawn(cp, &p, 0, &pid, &start))
		goto out;
	double deadline = cp->deadline_s > 0 ? start + cp->deadline_s : 0;
	pump(cp, &p, pid, &deadline);
	reap(cp, pid, deadline);
	cp->wall_s = now_s() - start;
	rc = 0;
out:
	if (cp->pid_slot)
		*cp->pid_slot = 0;
	close_pipes(&p);
	return rc;
}

/* ---- interactive children --------------------------------------------------------------- */

struct child_session {
	struct child_process *cp;
	struct child_pipes p;
	pid_t pid;
	double start, deadline;  /* deadline 0 = none */
	struct strbuf pending;   /* stdout read past the last line handed out */
	int out_eof;
};

struct child_session *child_session_start(struct child_process *cp)
{
	if (!cp->out || cp->in_data || cp->extra)
		BUG("child_session_start wants cp->out, no in_data and no extra pipe");
	struct child_session *s = xcalloc(1, sizeof(*s));
	struct child_pipes p0 = PIPES_INIT;
	s->cp = cp;
	s->p = p0;
	strbuf_init(&s->pending, 0);
	if (spawn(cp, &s->p, 1, &s->pid, &s->start)) {
		close_pipes(&s->p);
		strbuf_release(&s->pending);
		free(s);
		return NULL;
	}
	s->deadline = cp->deadline_s > 0 ? s->start + cp->deadline_s : 0;
	return s;
}

pid_t child_session_pid(const struct child_session *s)
{
	return s->pid;
}

int child_session_alive(struct child_session *s)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	/* WNOWAIT: an exited child stays a zombie for child_session_finish to reap */
	if (s->out_eof || waitid(P_PID, (id_t)s->pid, &si, WEXITED | WNOHANG | WNOWAIT))
		return 0;
	return si.si_pid == 0;
}

/* Drains stderr (when captured apart) into cp->err without blocking. */
static void drain_err(struct child_session *s)
{
	if (s->p.err[0] < 0)
		return;
	for (;;) {
		struct pollfd pf = { s->p.err[0], POLLIN, 0 };
		if (poll(&pf, 1, 0) <= 0 || !pf.revents)
			return;
		char buf[4096];
		ssize_t n = read(s->p.err[0], buf, sizeof(buf));
		if (n > 0) {
			sink_add(s->cp->err, buf, (size_t)n, s->cp->err_tail, &s->cp->err_truncated);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		close(s->p.err[0]);
		s->p.err[0] = -1;
		return;
	}
}

int child_session_read_line(struct child_session *s, struct strbuf *line, size_t cap, double timeout_s)
{
	double until = s->deadline;
	if (timeout_s > 0 && (!until || now_s() + timeout_s < until))
		until = now_s() + timeout_s;
	strbuf_reset(line);
	for (;;) {
		char *nl = s->pending.len ? memchr(s->pending.buf, '\n', s->pending.len) : NULL;
		if (nl) {
			size_t n = (size_t)(nl - s->pending.buf);
			if (n > cap)
				return CHILD_LINE_TOOLONG;
			strbuf_add(line, s->pending.buf, n);
			memmove(s->pending.buf, nl + 1, s->pending.len - n - 1);
			s->pending.len -= n + 1;
			s->pending.buf[s->pending.len] = '\0';
			return CHILD_LINE_OK;
		}
		if (s->pending.len > cap)
			return CHILD_LINE_TOOLONG;
		if (s->out_eof || s->p.out[0] < 0)
			return CHILD_LINE_EOF;
		struct pollfd pf[2];
		int np = 0;
		pf[np].fd = s->p.out[0];
		pf[np++].events = POLLIN;
		if (s->p.err[0] >= 0) {
			pf[np].fd = s->p.err[0];
			pf[np++].events = POLLIN;
		}
		int timeout = -1;
		if (until) {
			double left = until - now_s();
			if (left <= 0) {
				kill(-s->pid, SIGKILL);
				s->cp->timed_out = 1;
				return CHILD_LINE_TIMEOUT;
			}
			timeout = (int)(left * 1000) + 1;
		}
		int r = poll(pf, (nfds_t)np, timeout);
		if (r < 0 && errno != EINTR)
			return CHILD_LINE_EOF;
		if (r <= 0)
			continue;
		if (np > 1 && pf[1].revents)
			drain_err(s);
		if (!pf[0].revents)
			continue;
		char buf[65536];
		ssize_t n = read(s->p.out[0], buf, sizeof(buf));
		if (n > 0)
			strbuf_add(&s->pending, buf, (size_t)n);
		else if (n == 0 || (errno != EINTR && errno != EAGAIN))
			s->out_eof = 1;
	}
}

int child_session_write(struct child_session *s, const char *data, size_t len)
{
	if (s->p.in[1] < 0)
		return -1;
	struct sigaction ign, old_pipe;
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &ign, &old_pipe);
	size_t off = 0;
	int rc = 0;
	while (off < len) {
		ssize_t w = write(s->p.in[1], data + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			rc = -1;
			break;
		}
		off += (size_t)w;
	}
	sigaction(SIGPIPE, &old_pipe, NULL);
	return rc;
}

void child_session_finish(struct child_session *s, double grace_s)
{
	if (!s)
		return;
	struct child_process *cp = s->cp;
	if (s->p.in[1] >= 0) {
		close(s->p.in[1]);
		s->p.in[1] = -1;
	}
	/* what it still writes is drained (into nothing, or cp->err) until it closes its ends,
	 * the grace passes or the deadline does */
	double deadline = now_s() + (grace_s > 0 ? grace_s : 0);
	if (s->deadline && s->deadline < deadline)
		deadline = s->deadline;
	if (!(deadline > now_s()))
		deadline = now_s() + 0.001;
	struct strbuf sink = STRBUF_INIT;
	sink.cap = 1;
	struct strbuf *save_out = cp->out;
	cp->out = &sink; /* stdout past the protocol is not kept */
	int save_trunc = cp->out_truncated;
	pump(cp, &s->p, s->pid, &deadline);
	reap(cp, s->pid, deadline);
	cp->out = save_out;
	cp->out_truncated = save_trunc;
	if (cp->timed_out && s->deadline && now_s() < s->deadline)
		cp->timed_out = 0; /* killed at the end of the grace: not the deadline */
	strbuf_release(&sink);
	cp->wall_s = now_s() - s->start;
	if (cp->pid_slot)
		*cp->pid_slot = 0;
	close_pipes(&s->p);
	strbuf_release(&s->pending);
	free(s);
}
