/* Tests of the primitives: strbuf caps, sha256 vectors, option parsing, child processes. */
#include "test.h"
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include "common/proc.h"
#include "util/err.h"
#include "util/fsutil.h"
#include "util/opt.h"
#include "util/sha256.h"
#include "util/strbuf.h"
#include "util/suggest.h"
#include "util/xalloc.h"

TEST(strbuf_grows_and_caps)
{
	struct strbuf sb = STRBUF_INIT;
	CHECK_STR(sb.buf, "");
	for (int i = 0; i < 1000; i++)
		CHECK_INT(strbuf_addf(&sb, "%d,", i % 10), 0);
	CHECK_INT(sb.len, 2000);
	strbuf_release(&sb);
	sb.cap = 5;
	CHECK_INT(strbuf_addstr(&sb, "abcd"), 0);
	CHECK_INT(strbuf_addstr(&sb, "ef"), -1);
	CHECK_STR(sb.buf, "abcd");
	CHECK_INT(strbuf_addch(&sb, 'e'), 0);
	CHECK_INT(strbuf_addch(&sb, 'f'), -1);
	CHECK_STR(sb.buf, "abcde");
	strbuf_release(&sb);
}

/* Red team 6: `task check FIFO` waited forever in open() for a writer that never came. */
TEST(strbuf_read_file_refuses_a_fifo_nobody_writes_to_at_once)
{
	alarm(10); /* a regression hangs: SIGALRM fails the test instead */
	struct strbuf sb = STRBUF_INIT;
	char *fifo = xasprintf("%s/fifo", test_tmpdir());
	CHECK(mkfifo(fifo, 0600) == 0);
	CHECK_INT(strbuf_read_file(&sb, fifo, 1 << 20), CG_INPUT_NOTREG);
	CHECK_STR(strbuf_read_strerror(CG_INPUT_NOTREG, fifo),
		  "it is a FIFO with no process writing to it, not a regular file");
	CHECK_INT(sb.len, 0);
	struct stat st;
	CHECK(stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
	free(fifo);
	strbuf_release(&sb);
}

/* What is no file to read fails at once, saying what it is; /dev/null reads as empty. */
TEST(strbuf_read_file_refuses_directories_and_devices)
{
	alarm(10);
	struct strbuf sb = STRBUF_INIT;
	CHECK_INT(strbuf_read_file(&sb, test_tmpdir(), 0), CG_INPUT_NOTREG);
	CHECK_INT(errno, EISDIR);
	CHECK_STR(strbuf_read_strerror(CG_INPUT_NOTREG, test_tmpdir()),
		  "it is a directory, not a regular file");
	/* /dev/zero with no cap would eat all memory; /dev/tty would wait on the keyboard */
	CHECK_INT(strbuf_read_file(&sb, "/dev/zero", 0), CG_INPUT_NOTREG);
	CHECK_STR(strbuf_read_strerror(CG_INPUT_NOTREG, "/dev/zero"),
		  "it is a character device, not a regular file");
	CHECK_INT(strbuf_read_file(&sb, "/dev/urandom", 1 << 20), CG_INPUT_NOTREG);
	CHECK_INT(sb.len, 0);
	CHECK_INT(strbuf_read_file(&sb, "/dev/null", 16), 0);
	CHECK_INT(sb.len, 0);
	CHECK_INT(strbuf_read_file(&sb, "/nonexistent/cutegen-test", 0), CG_INPUT);
	CHECK_STR(strbuf_read_strerror(CG_INPUT, "/nonexistent/cutegen-test"), "No such file or directory");
	strbuf_release(&sb);
}

/* A pipe some process writes to is read to its end: /dev/stdin of `cat t.json | cutegen ...`
 * and bash's <(...), both /proc/self/fd/N, with the data there already or still to come. */
TEST(strbuf_read_file_reads_a_pipe_with_a_writer)
{
	alarm(10);
	struct strbuf sb = STRBUF_INIT;
	int p[2];
	CHECK(pipe(p) == 0);
	CHECK_INT(write(p[1], "{\"a\": 1}", 8), 8);
	close(p[1]);
	char *path = xasprintf("/proc/self/fd/%d", p[0]);
	CHECK_INT(strbuf_read_file(&sb, path, 1 << 20), 0);
	CHECK_STR(sb.buf, "{\"a\": 1}");
	close(p[0]);
	free(path);

	/* the writer is there but writes later: the read waits for it */
	CHECK(pipe(p) == 0);
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		usleep(200 * 1000);
		(void)!write(p[1], "late", 4);
		_exit(0);
	}
	close(p[1]);
	strbuf_reset(&sb);
	path = xasprintf("/proc/self/fd/%d", p[0]);
	CHECK_INT(strbuf_read_file(&sb, path, 1 << 20), 0);
	CHECK_STR(sb.buf, "late");
	waitpid(pid, NULL, 0);
	close(p[0]);
	free(path);
	strbuf_release(&sb);
}

static char *slurp(const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	if (strbuf_read_file(&sb, path, 1 << 20)) {
		strbuf_release(&sb);
		return xstrdup("(unreadable)");
	}
	return strbuf_detach(&sb, NULL);
}

/* Whether dir holds a file whose name has ".tmp." in it (a temporary left behind). */
static int has_tmp(const char *dir)
{
	struct child_process cp = CHILD_PROCESS_INIT;
	struct strbuf out = STRBUF_INIT;
	const char *argv[] = { "ls", "-a", dir, NULL };
	cp.argv = argv;
	cp.out = &out;
	int r = run_command(&cp) == 0 && strstr(out.buf, ".tmp.") != NULL;
	strbuf_release(&out);
	return r;
}

/* Red team 1: the report's output paths were replaced by rename(): a symbolic link by a file
 * (its target untouched), a FIFO or device by a regular file. */
TEST(write_file_atomic_replaces_files_and_follows_links)
{
	const char *d = test_tmpdir();
	char *file = xasprintf("%s/out.md", d), *link = xasprintf("%s/link.md", d);
	char *target = xasprintf("%s/sub/target.md", d), *dangling = xasprintf("%s/dangling.md", d);
	char *sub = xasprintf("%s/sub", d);
	struct stat st;
	CHECK_INT(write_file_atomic(file, "one\n", 4), 0);
	CHECK_INT(write_file_atomic(file, "two\n", 4), 0);
	char *got = slurp(file);
	CHECK_STR(got, "two\n");
	free(got);
	/* a relative link into another directory: the link stays, its target gets the text */
	CHECK(mkdir(sub, 0755) == 0);
	CHECK_INT(write_file_atomic(target, "old\n", 4), 0);
	CHECK(symlink("sub/target.md", link) == 0);
	CHECK_INT(write_file_atomic(link, "new\n", 4), 0);
	CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
	got = slurp(target);
	CHECK_STR(got, "new\n");
	free(got);
	/* a link to a file not there yet: made there, as a shell's '>' would */
	CHECK(symlink("sub/made.md", dangling) == 0);
	CHECK_INT(write_file_atomic(dangling, "made\n", 5), 0);
	CHECK(lstat(dangling, &st) == 0 && S_ISLNK(st.st_mode));
	char *made = xasprintf("%s/made.md", sub);
	got = slurp(made);
	CHECK_STR(got, "made\n");
	free(got);
	free(made);
	/* a directory is an error, and no temporary is left anywhere */
	CHECK_INT(write_file_atomic(sub, "x", 1), -1);
	CHECK_INT(errno, EISDIR);
	CHECK(!has_tmp(d) && !has_tmp(sub));
	/* a loop of links fails instead of going round */
	char *l1 = xasprintf("%s/l1", d), *l2 = xasprintf("%s/l2", d);
	CHECK(symlink("l2", l1) == 0 && symlink("l1", l2) == 0);
	CHECK_INT(write_file_atomic(l1, "x", 1), -1);
	CHECK_INT(errno, ELOOP);
	free(l1);
	free(l2);
	free(file);
	free(link);
	free(target);
	free(dangling);
	free(sub);
}

TEST(write_file_atomic_writes_fifos_and_devices_in_place)
{
	alarm(10);
	const char *d = test_tmpdir();
	char *fifo = xasprintf("%s/fifo", d);
	struct stat st;
	CHECK(mkfifo(fifo, 0600) == 0);
	/* the reader is there first, so that the write's open() need not wait */
	int rd = open(fifo, O_RDONLY | O_NONBLOCK);
	CHECK(rd >= 0);
	CHECK_INT(write_file_atomic(fifo, "through\n", 8), 0);
	char buf[32] = "";
	CHECK_INT(read(rd, buf, sizeof(buf) - 1), 8);
	CHECK_STR(buf, "through\n");
	close(rd);
	CHECK(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
	CHECK(!has_tmp(d));
	/* a device (/dev/full, made here: as root the old code replaced the real one) */
	if (geteuid() == 0) {
		char *full = xasprintf("%s/full", d);
		CHECK(mknod(full, S_IFCHR | 0666, makedev(1, 7)) == 0);
		CHECK_INT(write_file_atomic(full, "x", 1), -1);
		CHECK_INT(errno, ENOSPC);
		CHECK(lstat(full, &st) == 0 && S_ISCHR(st.st_mode));
		CHECK(!has_tmp(d));
		free(full);
	}
	free(fifo);
}

/* /dev/stdout (here /proc/self/fd/1, the same link one step on, which rename() cannot touch)
 * of a shell's '>> log': the text goes through the descriptor, after what the log held. */
TEST(write_file_atomic_to_standard_output_appends_through_it)
{
	char *log = xasprintf("%s/log", test_tmpdir());
	CHECK_INT(write_file_atomic(log, "before\n", 7), 0);
	fflush(stdout);
	int saved = dup(1), fd = open(log, O_WRONLY | O_APPEND);
	CHECK(saved >= 0 && fd >= 0);
	dup2(fd, 1);
	close(fd);
	int rc = write_file_atomic("/proc/self/fd/1", "report\n", 7);
	int e = errno;
	dup2(saved, 1);
	close(saved);
	errno = e;
	CHECK_INT(rc, 0);
	char *got = slurp(log);
	CHECK_STR(got, "before\nreport\n");
	free(got);
	free(log);
}

TEST(sha256_known_vectors)
{
	char hex[65];
	sha256_hex("", 0, hex);
	CHECK_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	sha256_hex("abc", 3, hex);
	CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	sha256_hex(m, strlen(m), hex);
	CHECK_STR(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(opt_parse_mixed_and_errors)
{
	int json = 0, iters = 5;
	const char *model = NULL;
	double temp = 0;
	struct opt opts[] = {
		{ "json", 0, OPT_BOOL, &json },
		{ "iters", 'n', OPT_INT, &iters },
		{ "model", 'm', OPT_STRING, &model },
		{ "temperature", 0, OPT_DOUBLE, &temp },
	};
	char *argv[] = { "cmd", "a", "--json", "--iters=7", "b", "-m", "gpt", "--temperature", "0.5", "--", "--c", NULL };
	int np = 0;
	char err[128];
	CHECK_INT(opt_parse(11, argv, opts, 4, &np, err, sizeof(err)), 0);
	CHECK_INT(np, 3);
	CHECK_STR(argv[1], "a");
	CHECK_STR(argv[2], "b");
	CHECK_STR(argv[3], "--c");
	CHECK_INT(json, 1);
	CHECK_INT(iters, 7);
	CHECK_STR(model, "gpt");
	CHECK(temp == 0.5);

	char *bad1[] = { "cmd", "--nope", NULL };
	CHECK_INT(opt_parse(2, bad1, opts, 4, &np, err, sizeof(err)), -1);
	CHECK_STR(err, "unknown option '--nope'");
	char *bad2[] = { "cmd", "--iters", "x7", NULL };
	CHECK_INT(opt_parse(3, bad2, opts, 4, &np, err, sizeof(err)), -1);
	CHECK_STR(err, "option '--iters' needs an integer (got \"x7\")");
	char *bad3[] = { "cmd", "--model", NULL };
	CHECK_INT(opt_parse(2, bad3, opts, 4, &np, err, sizeof(err)), -1);
	CHECK_STR(err, "option '--model' needs a value");
	char *bad4[] = { "cmd", "--json=1", NULL };
	CHECK_INT(opt_parse(2, bad4, opts, 4, &np, err, sizeof(err)), -1);
}

TEST(opt_env_seconds_default_value_and_refusals)
{
	double v = -1;
	unsetenv("CUTEGEN_TEST_SECONDS");
	CHECK_INT(opt_env_seconds("CUTEGEN_TEST_SECONDS", 30, 1, &v), 0);
	CHECK(v == 30);
	setenv("CUTEGEN_TEST_SECONDS", "2.5", 1);
	CHECK_INT(opt_env_seconds("CUTEGEN_TEST_SECONDS", 30, 1, &v), 0);
	CHECK(v == 2.5);
	setenv("CUTEGEN_TEST_SECONDS", "0", 1);
	CHECK_INT(opt_env_seconds("CUTEGEN_TEST_SECONDS", 30, 1, &v), 0);
	CHECK(v == 0);
	CHECK_INT(opt_env_seconds("CUTEGEN_TEST_SECONDS", 120, 0, &v), -1);
	CHECK(v == 120);
	static const char *const bad[] = { "soon", "10x", "-1", "nan" };
	for (int i = 0; i < 4; i++) {
		setenv("CUTEGEN_TEST_SECONDS", bad[i], 1);
		CHECK_INT(opt_env_seconds("CUTEGEN_TEST_SECONDS", 30, 1, &v), -1);
		CHECK(v == 30);
	}
	unsetenv("CUTEGEN_TEST_SECONDS");
}

TEST(proc_captures_exit_and_stdin)
{
	struct strbuf out = STRBUF_INIT;
	const char *argv[] = { "sh", "-c", "cat; echo err >&2; exit 3", NULL };
	struct child_process cp = CHILD_PROCESS_INIT;
	cp.argv = argv;
	cp.in_data = "hello";
	cp.in_len = 5;
	cp.out = &out;
	cp.err = &out;
	CHECK_INT(run_command(&cp), 0);
	CHECK_INT(cp.status, 3);
	CHECK_STR(out.buf, "helloerr\n");
	strbuf_release(&out);
}

TEST(proc_deadline_kills_whole_group)
{
	struct strbuf out = STRBUF_INIT;
	/* the grandchild holds stdout open: only a group kill ends the read */
	const char *argv[] = { "sh", "-c", "sleep 30 & sleep 30", NULL };
	struct child_process cp = CHILD_PROCESS_INIT;
	cp.argv = argv;
	cp.out = &out;
	cp.deadline_s = 0.3;
	double t0 = now_s();
	CHECK_INT(run_command(&cp), 0);
	CHECK(now_s() - t0 < 5);
	CHECK_INT(cp.timed_out, 1);
	CHECK_INT(cp.signaled, 1);
	CHECK_INT(cp.status, 128 + 9);
	strbuf_release(&out);
}

TEST(proc_caps_output_and_reports_missing_program)
{
	struct strbuf out = STRBUF_INIT;
	out.cap = 100;
	const char *argv[] = { "sh", "-c", "yes | head -c 100000", NULL };
	struct child_process cp = CHILD_PROCESS_INIT;
	cp.argv = argv;
	cp.out = &out;
	CHECK_INT(run_command(&cp), 0);
	CHECK_INT(out.len, 100);
	CHECK_INT(cp.out_truncated, 1);
	strbuf_release(&out);

	const char *argv2[] = { "no-such-program-xyz", NULL };
	struct child_process cp2 = CHILD_PROCESS_INIT;
	cp2.argv = argv2;
	CHECK_INT(run_command(&cp2), -1);
	CHECK_HAS(cp2.errmsg, "no such program 'no-such-program-xyz'");
}

/* Kills the helper whose pid a test's child printed first ("PID\n..."): it left our reach. */
static void kill_printed_pid(const struct strbuf *out)
{
	long pid = out->len ? strtol(out->buf, NULL, 10) : 0;
	if (pid > 1)
		kill((pid_t)pid, SIGKILL);
}

TEST(proc_escaped_helper_holds_no_one)
{
	/* a helper in a session of its own (out of the process group a kill reaches) holds
	 * stdout and stderr for 8 s: once the child is gone, a grace, then the pipes are given up */
	const char *argv[] = { "sh", "-c", "setsid sleep 8 & echo $!; echo done >&2", NULL };
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	struct child_process cp = CHILD_PROCESS_INIT;
	cp.argv = argv;
	cp.out = &out;
	cp.err = &err;
	double t0 = now_s();
	CHECK_INT(run_command(&cp), 0);
	CHECK(now_s() - t0 < 5);
	CHECK_INT(cp.status, 0);
	CHECK_INT(cp.timed_out, 0);
	CHECK_STR(err.buf, "done\n");
	kill_printed_pid(&out);

	/* the same past a deadline: killed at it, and not waited for after it */
	const char *argv2[] = { "sh", "-c", "setsid sleep 8 & echo $!; sleep 8", NULL };
	struct child_process cp2 = CHILD_PROCESS_INIT;
	strbuf_reset(&out);
	cp2.argv = argv2;
	cp2.out = &out;
	cp2.deadline_s = 0.3;
	t0 = now_s();
	CHECK_INT(run_command(&cp2), 0);
	CHECK(now_s() - t0 < 5);
	CHECK_INT(cp2.timed_out, 1);
	kill_printed_pid(&out);
	strbuf_release(&out);
	strbuf_release(&err);
}

TEST(proc_stderr_cap_is_its_own)
{
	/* 100 KB on stderr past its 100-byte cap: stdout is whole, err keeps its last bytes */
	const char *argv[] = { "sh", "-c", "yes x | head -c 100000 >&2; echo END >&2; echo out", NULL };
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	struct child_process cp = CHILD_PROCESS_INIT;
	cp.argv = argv;
	cp.out = &out;
	cp.err = &err;
	cp.err_tail = 1;
	err.cap = 100;
	CHECK_INT(run_command(&cp), 0);
	CHECK_STR(out.buf, "out\n");
	CHECK_INT(cp.out_truncated, 0);
	CHECK_INT(cp.err_truncated, 1);
	CHECK_INT(err.len, 100);
	CHECK(ends_with(err.buf, "x\nx\nEND\n"));
	strbuf_release(&out);
	strbuf_release(&err);
}

TEST(proc_env_is_cleared_and_edited)
{
	struct strbuf out = STRBUF_INIT;
	setenv("CUTEGEN_SECRET_TEST", "s3cret", 1);
	const char *argv[] = { "sh", "-c", "echo \"[$CUTEGEN_SECRET_TEST][$FOO]\"", NULL };
	const char *env[] = { "FOO=bar", NULL };
	struct child_process cp = CHILD_PROCESS_INIT;
	cp.argv = argv;
	cp.env = env;
	cp.clear_env = 1;
	cp.out = &out;
	CHECK_INT(run_command(&cp), 0);
	CHECK_STR(out.buf, "[][bar]\n");
	strbuf_release(&out);
}

/* A child in a network namespace of its own cannot reach a loopback server of ours. */
TEST(proc_new_netns_cuts_loopback)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	CHECK_INT(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	CHECK_INT(listen(fd, 8), 0);
	CHECK_INT(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	char script[128];
	snprintf(script, sizeof(script), "exec 3<>/dev/tcp/127.0.0.1/%d", ntohs(sa.sin_port));
	const char *argv[] = { "bash", "-c", script, NULL };
	for (int ns = 0; ns < 2; ns++) {
		struct child_process cp = CHILD_PROCESS_INIT;
		cp.argv = argv;
		cp.new_netns = ns;
		cp.deadline_s = 10;
		CHECK_INT(run_command(&cp), 0);
		if (!ns) {
			CHECK_INT(cp.netns_applied, 0);
			CHECK_INT(cp.status, 0); /* the connection works without the namespace */
		} else if (cp.netns_applied) {
			CHECK(cp.status != 0);
		} else {
			CHECK(geteuid() != 0); /* only unprivileged users fall back */
		}
	}
	close(fd);
}

TEST(opt_parse_ranges_name_the_flag)
{
	int iters = 5, device = 0;
	double deadline = 0, wall = 0;
	struct opt opts[] = {
		{ "iters", 0, OPT_INT_POS, &iters },
		{ "device", 0, OPT_INT_NONNEG, &device },
		{ "deadline", 0, OPT_DOUBLE_NONNEG, &deadline },
		{ "max-wall", 0, OPT_DOUBLE_POS, &wall },
	};
	int np = 0;
	char err[256];
	char *good[] = { "cmd", "--iters", "1", "--device=0", "--deadline", "0", "--max-wall", "0.5", NULL };
	CHECK_INT(opt_parse(8, good, opts, 4, &np, err, sizeof(err)), 0);
	CHECK_INT(iters, 1);
	CHECK(wall == 0.5);
	char *b1[] = { "cmd", "--deadline", "-5", NULL };
	CHECK_INT(opt_parse(3, b1, opts, 4, &np, err, sizeof(err)), -1);
	CHECK_STR(err, "option '--deadline' must be 0 or more (got \"-5\")");
	char *b2[] = { "cmd", "--iters=0", NULL };
	CHECK_INT(opt_parse(2, b2, opts, 4, &np, err, sizeof(err)), -1);
	CHECK_STR(err, "option '--iters' must be at least 1 (got \"0\")");
	char *b3[] = { "cmd", "--device", "-1", NULL };
	CHECK_INT(opt_parse(3, b3, opts, 4, &np, err, sizeof(err)), -1);
	CHECK_STR(err, "option '--device' must be 0 or more (got \"-1\")");
	char *b4[] = { "cmd", "--max-wall", "0", NULL };
	CHECK_INT(opt_parse(3, b4, opts, 4, &np, err, sizeof(err)), -1);
	CHECK_STR(err, "option '--max-wall' must be more than 0 (got \"0\")");
	char *b5[] = { "cmd", "--iter", "3", NULL };
	CHECK_INT(opt_parse(3, b5, opts, 4, &np, err, sizeof(err)), -1);
	CHECK_STR(err, "unknown option '--iter' (did you mean '--iters'?)");
}

TEST(suggest_names_close_ones_only)
{
	const char *cmds[] = { "help", "eval", "build", "run", "runs", "resume", "report", "suite" };
	const char *best[4];
	CHECK_INT(suggest_similar("evl", cmds, 8, best, 4), 1);
	CHECK_STR(best[0], "eval");
	CHECK_INT(suggest_similar("biuld", cmds, 8, best, 4), 1);
	CHECK_STR(best[0], "build");
	CHECK_INT(suggest_similar("xyzzy", cmds, 8, best, 4), 0);
	CHECK_INT(suggest_similar("", cmds, 8, best, 4), 0);
	const char *tasks[] = { "kb1/1_square_matmul", "kb1/19_relu", "kb1/20_leaky_relu",
				"kb1/23_softmax", "hopper/gemm_bf16_4096" };
	CHECK_INT(suggest_similar("kb1/19_rleu", tasks, 5, best, 4), 1);
	CHECK_STR(best[0], "kb1/19_relu");
	CHECK_INT(suggest_similar("19", tasks, 5, best, 4), 1);
	CHECK_STR(best[0], "kb1/19_relu");
	CHECK_INT(suggest_similar("relu", tasks, 5, best, 4), 2);
	CHECK_STR(best[0], "kb1/19_relu");
	CHECK_STR(best[1], "kb1/20_leaky_relu");
	CHECK_INT(suggest_similar("softmx", tasks, 5, best, 4), 1);
	CHECK_STR(best[0], "kb1/23_softmax");
	CHECK_INT(suggest_distance("rleu", "relu"), 0);
	CHECK_INT(suggest_distance("evl", "eval"), 1);
	struct strbuf sb = STRBUF_INIT;
	suggest_format(&sb, "--", best, 2);
	CHECK_STR(sb.buf, " (did you mean one of '--kb1/23_softmax', '--kb1/20_leaky_relu'?)");
	strbuf_release(&sb);
}
