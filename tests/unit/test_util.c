/* Tests of the primitives: strbuf caps, sha256 vectors, option parsing, child processes. */
#include "test.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
#include "common/proc.h"
#include "util/opt.h"
#include "util/sha256.h"
#include "util/strbuf.h"
#include "util/suggest.h"

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
