/*
 * RUN.json (common/module_run.c): what the runner accepts of the evaluator's file, which
 * carries the reference process's untrusted reply; and the interactive child the evaluator
 * keeps the reference process in (common/proc.c, child_session).
 */
#include "test.h"
#include "common/module_run.h"
#include "common/proc.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#define HEX "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff" \
	    "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

/* A valid file: x [2,3] fp32, w [3] fp32 parameter, out [2,3] fp32; two cases. The hook
 * replaces the first occurrence of `from` by `to` (NULL: none). */
static char *run_json(const char *from, const char *to)
{
	const char *h_x = "{\"ipc\":\"" HEX "\",\"offset\":0,\"bytes\":24,\"dtype\":\"fp32\",\"shape\":[2,3]}";
	const char *h_w = "{\"ipc\":\"" HEX "\",\"offset\":512,\"bytes\":12,\"dtype\":\"fp32\",\"shape\":[3]}";
	const char *h_t = "{\"ipc\":\"" HEX "\",\"offset\":1024,\"bytes\":48,\"dtype\":\"fp64\",\"shape\":[2,3]}";
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "{\"name\":\"m\",\"file\":\"/abs/m.py\",\"tensors\":["
			   "{\"name\":\"x\",\"role\":\"input\",\"dtype\":\"fp32\",\"shape\":[2,3]},"
			   "{\"name\":\"w\",\"role\":\"parameter\",\"dtype\":\"fp32\",\"shape\":[3]},"
			   "{\"name\":\"out\",\"role\":\"output\",\"dtype\":\"fp32\",\"shape\":[2,3]}],"
			   "\"scalars\":[{\"name\":\"eps\",\"value\":1e-5}],\"precision\":\"strict\","
			   "\"truth\":\"fp64\",\"tolerance\":{\"multiple\":8,\"ulps\":4},\"flops\":12,"
			   "\"bytes\":84,\"limits\":{\"gbps\":3000,\"tflops\":60},\"cases\":[");
	for (int k = 0; k < 2; k++)
		strbuf_addf(&sb, "%s{\"seed\":%d,\"dist\":\"module\",\"inputs\":[%s,%s],\"ref\":[%s],\"truth\":[%s]}",
			    k ? "," : "", k + 1, h_x, h_w, h_x, h_t);
	strbuf_addstr(&sb, "]}");
	char *s = strbuf_detach(&sb, NULL);
	if (from) {
		char *at = strstr(s, from);
		if (!at)
			return s;
		char *r = xasprintf("%.*s%s%s", (int)(at - s), s, to, at + strlen(from));
		free(s);
		s = r;
	}
	return s;
}

static char *parse_err(const char *from, const char *to)
{
	char *text = run_json(from, to), *err = NULL;
	struct module_run *mr = module_run_parse(text, strlen(text), &err);
	free(text);
	if (mr) {
		module_run_free(mr);
		return xstrdup("(parsed)");
	}
	return err;
}

TEST(module_run_parses_a_valid_file)
{
	char *text = run_json(NULL, NULL), *err = NULL;
	struct module_run *mr = module_run_parse(text, strlen(text), &err);
	free(text);
	CHECK(mr);
	CHECK_INT(mr->ntensors, 3);
	CHECK_INT(mr->ninputs, 2);
	CHECK_INT(mr->noutputs, 1);
	CHECK_INT(mr->tensors[2].numel, 6);
	CHECK_INT(mr->tensors[2].bytes, 24);
	CHECK_INT(mr->tensors[1].role, MRUN_PARAMETER);
	CHECK_INT(mr->nscalars, 1);
	CHECK_STR(mr->scalar_names[0], "eps");
	CHECK(mr->truth_fp64 && mr->multiple == 8 && mr->ulps == 4);
	CHECK_INT(mr->ncases, 2);
	CHECK_INT(mr->cases[1].seed, 2);
	CHECK_INT(mr->cases[0].inputs[1].offset, 512);
	CHECK_INT(mr->cases[0].truth[0].dtype, MDT_FP64);
	CHECK_INT(mr->cases[0].ref[0].ipc[0], 0x00);
	CHECK_INT(mr->cases[0].ref[0].ipc[15], 0xff);
	CHECK(mr->limit_gbps == 3000 && mr->limit_tflops == 60);
	module_run_free(mr);
}

TEST(module_run_refuses_bad_handles)
{
	char *e;
	/* 127 hex digits, an uppercase digit, a non-hex one */
	CHECK_HAS(e = parse_err("\"ipc\":\"00", "\"ipc\":\"0"), "must be 128 lowercase hex digits"); free(e);
	CHECK_HAS(e = parse_err("\"ipc\":\"00", "\"ipc\":\"0A"), "128 lowercase hex digits"); free(e);
	CHECK_HAS(e = parse_err("\"ipc\":\"00", "\"ipc\":\"0g"), "128 lowercase hex digits"); free(e);
	/* bytes that do not match numel x size, a dtype or shape other than the tensor's */
	CHECK_HAS(e = parse_err("\"bytes\":24", "\"bytes\":25"), "holds 25 bytes, but 6 elements of fp32 are 24"); free(e);
	CHECK_HAS(e = parse_err("\"bytes\":24,\"dtype\":\"fp32\"", "\"bytes\":12,\"dtype\":\"fp16\""), "holds fp16, want fp32"); free(e);
	/* the output listed as [3,2]: its handles, [2,3], no longer match */
	CHECK_HAS(e = parse_err("\"shape\":[2,3]}]", "\"shape\":[3,2]}]"), "'out' has another shape than the tensor list"); free(e);
	CHECK_HAS(e = parse_err("\"dtype\":\"fp32\",\"shape\":[3]}", "\"dtype\":\"fp32\",\"shape\":[1,3]}"), "another shape"); free(e);
	/* the truth of a float output must be the declared truth's dtype */
	CHECK_HAS(e = parse_err("\"bytes\":48,\"dtype\":\"fp64\"", "\"bytes\":24,\"dtype\":\"fp32\""), "holds fp32, want fp64"); free(e);
	/* offsets and sizes capped */
	CHECK_HAS(e = parse_err("\"offset\":512", "\"offset\":-1"), "\"offset\" must be an integer in [0, 2^40]"); free(e);
	CHECK_HAS(e = parse_err("\"offset\":512", "\"offset\":2199023255553"), "\"offset\" must be"); free(e);
	/* counts: handles per case */
	CHECK_HAS(e = parse_err("\"ref\":[", "\"ref\":[{},"), "\"ref\" must list 1 handles"); free(e);
}

TEST(module_run_refuses_bad_lists_and_caps)
{
	char *e;
	CHECK_HAS(e = parse_err("\"cases\":[", "\"cases\":[],\"x\":["), "\"cases\" must list 2 to 64 cases"); free(e);
	CHECK_HAS(e = parse_err("\"role\":\"input\"", "\"role\":\"weight\""), "must be input, parameter, buffer or output"); free(e);
	CHECK_HAS(e = parse_err("\"dtype\":\"fp32\",\"shape\":[2,3]}", "\"dtype\":\"complex64\",\"shape\":[2,3]}"), "unknown dtype 'complex64'"); free(e);
	CHECK_HAS(e = parse_err("\"shape\":[2,3]}", "\"shape\":[1,1,1,1,1,1,1,1,2,3]}"), "at most 8 sizes"); free(e);
	CHECK_HAS(e = parse_err("\"shape\":[2,3]}", "\"shape\":[1048576,1048576,1048576]}"), "2^40 elements"); free(e);
	CHECK_HAS(e = parse_err("\"multiple\":8", "\"multiple\":0"), "\"multiple\" in (0, 1e6]"); free(e);
	CHECK_HAS(e = parse_err("\"truth\":\"fp64\"", "\"truth\":\"fp16\""), "\"truth\" must be fp64 or fp32"); free(e);
	CHECK_HAS(e = parse_err("\"precision\":\"strict\"", "\"precision\":\"fast\""), "\"precision\" must be"); free(e);
	CHECK_HAS(e = parse_err("\"value\":1e-5", "\"value\":\"x\""), "finite \"value\""); free(e);
	/* outputs last, in ABI order */
	CHECK_HAS(e = parse_err("{\"name\":\"x\",\"role\":\"input\"", "{\"name\":\"o0\",\"role\":\"output\",\"dtype\":\"fp32\",\"shape\":[1]},{\"name\":\"x\",\"role\":\"input\""),
		  "outputs must come last"); free(e);
	/* more than 256 tensors */
	struct strbuf sb = STRBUF_INIT;
	strbuf_addstr(&sb, "{\"tensors\":[");
	for (int i = 0; i < 257; i++)
		strbuf_addf(&sb, "%s{\"name\":\"t%d\",\"role\":\"input\",\"dtype\":\"fp32\",\"shape\":[1]}", i ? "," : "", i);
	strbuf_addstr(&sb, "]}");
	struct module_run *mr = module_run_parse(sb.buf, sb.len, &e);
	CHECK(!mr);
	CHECK_HAS(e, "\"tensors\" must list 2 to 256 tensors");
	free(e);
	strbuf_release(&sb);
	/* not JSON; too large */
	CHECK(!module_run_parse("[1,2", 4, &e));
	CHECK_HAS(e, "not a JSON object");
	free(e);
	CHECK(!module_run_parse("{}", (size_t)MRUN_MAX_TEXT + 1, &e));
	CHECK_HAS(e, "larger than");
	free(e);
}

TEST(module_run_dtypes)
{
	CHECK_INT(mrun_dtype_size(mrun_dtype_parse("i64")), 8);
	CHECK_INT(mrun_dtype_size(mrun_dtype_parse("bool")), 1);
	CHECK_INT(mrun_dtype_size(mrun_dtype_parse("fp8_e4m3")), 1);
	CHECK_INT(mrun_dtype_parse("float32"), MDT_INVALID);
	CHECK(mrun_dtype_is_float(MDT_BF16) && !mrun_dtype_is_float(MDT_I32));
}

TEST(child_session_lines_release_and_kill)
{
	/* answers each line with "got LINE"; ignores end of input: finish must kill it */
	const char *argv[] = { "sh", "-c", "trap '' TERM; echo hello; while read l; do echo \"got $l\"; done; sleep 30", NULL };
	struct strbuf mark = STRBUF_INIT, err = STRBUF_INIT, line = STRBUF_INIT;
	struct child_process cp = CHILD_PROCESS_INIT;
	cp.argv = argv;
	cp.out = &mark;
	cp.err = &err;
	struct child_session *s = child_session_start(&cp);
	CHECK(s);
	pid_t pid = child_session_pid(s);
	CHECK_INT(child_session_read_line(s, &line, 100, 5), CHILD_LINE_OK);
	CHECK_STR(line.buf, "hello");
	CHECK_INT(child_session_write(s, "one\ntwo\n", 8), 0);
	CHECK_INT(child_session_read_line(s, &line, 100, 5), CHILD_LINE_OK);
	CHECK_STR(line.buf, "got one");
	CHECK_INT(child_session_read_line(s, &line, 100, 5), CHILD_LINE_OK);
	CHECK_STR(line.buf, "got two");
	/* a line longer than the cap */
	CHECK_INT(child_session_write(s, "0123456789\n", 11), 0);
	CHECK_INT(child_session_read_line(s, &line, 5, 5), CHILD_LINE_TOOLONG);
	double t0 = now_s();
	child_session_finish(s, 0.3);
	CHECK(now_s() - t0 < 5);
	CHECK_INT(cp.signaled, 1);
	CHECK(kill(pid, 0) != 0); /* reaped, its group killed */
	strbuf_release(&mark);
	strbuf_release(&err);
	strbuf_release(&line);
}

TEST(child_session_read_times_out_and_kills)
{
	const char *argv[] = { "sh", "-c", "echo err >&2; sleep 30", NULL };
	struct strbuf mark = STRBUF_INIT, err = STRBUF_INIT, line = STRBUF_INIT;
	struct child_process cp = CHILD_PROCESS_INIT;
	cp.argv = argv;
	cp.out = &mark;
	cp.err = &err;
	struct child_session *s = child_session_start(&cp);
	CHECK(s);
	double t0 = now_s();
	CHECK_INT(child_session_read_line(s, &line, 100, 0.3), CHILD_LINE_TIMEOUT);
	CHECK(now_s() - t0 < 5);
	CHECK_INT(cp.timed_out, 1);
	child_session_finish(s, 5);
	CHECK(now_s() - t0 < 5); /* already killed: no grace to wait out */
	CHECK_HAS(err.buf, "err");
	strbuf_release(&mark);
	strbuf_release(&err);
	strbuf_release(&line);
}

TEST(child_session_eof_and_missing_program)
{
	const char *argv[] = { "sh", "-c", "echo last; exit 4", NULL };
	struct strbuf mark = STRBUF_INIT, line = STRBUF_INIT;
	struct child_process cp = CHILD_PROCESS_INIT;
	cp.argv = argv;
	cp.out = &mark;
	struct child_session *s = child_session_start(&cp);
	CHECK(s);
	CHECK_INT(child_session_read_line(s, &line, 100, 5), CHILD_LINE_OK);
	CHECK_INT(child_session_read_line(s, &line, 100, 5), CHILD_LINE_EOF);
	child_session_finish(s, 5);
	CHECK_INT(cp.status, 4);
	const char *nope[] = { "cutegen-no-such-program", NULL };
	struct child_process cp2 = CHILD_PROCESS_INIT;
	cp2.argv = nope;
	cp2.out = &mark;
	CHECK(!child_session_start(&cp2));
	CHECK_HAS(cp2.errmsg, "no such program");
	strbuf_release(&mark);
	strbuf_release(&line);
}

#include "common/module_budget.h"

TEST(module_budget_ulps)
{
	CHECK(mb_ulp(1.0, MB_FP32) == ldexp(1, -23));
	CHECK(mb_ulp(1.999, MB_FP32) == ldexp(1, -23));
	CHECK(mb_ulp(-2.0, MB_FP32) == ldexp(1, -22));
	CHECK(mb_ulp(0.0, MB_FP32) == ldexp(1, -149));
	CHECK(mb_ulp(1e-45, MB_FP32) == ldexp(1, -149)); /* subnormal: the smallest spacing */
	CHECK(mb_ulp(1.0, MB_FP16) == ldexp(1, -10));
	CHECK(mb_ulp(65504, MB_FP16) == 32);
	CHECK(mb_ulp(1.0, MB_BF16) == ldexp(1, -7));
	CHECK(mb_ulp(1.0, MB_FP64) == ldexp(1, -52));
	CHECK(mb_ulp(INFINITY, MB_FP32) == ldexp(1, -149));
}

TEST(module_budget_rules)
{
	double b;
	/* within 8x the reference's own error (plus 4 ulps), not beyond */
	CHECK(mb_check(1.0 + 7e-7, 1.0 + 1e-7, 1.0, 1e-7, 1.0, 8, 4, MB_FP32, &b));
	CHECK(fabs(b - (8e-7 + 4 * ldexp(1, -23))) < 1e-15);
	CHECK(!mb_check(1.0 + 2e-6, 1.0 + 1e-7, 1.0, 1e-7, 1.0, 8, 4, MB_FP32, &b));
	/* TF32- or fp16-sized errors fail a strict fp32 budget by far */
	CHECK(!mb_check(1.0 + 5e-4, 1.0 + 1e-7, 1.0, 1e-7, 1.0, 8, 4, MB_FP32, &b));
	/* large elements: E scaled by |t| / mean|t| */
	CHECK(mb_check(100 + 5e-5, 100, 100, 1e-7, 1.0, 8, 4, MB_FP32, &b));
	/* near a zero of the truth, where the reference happens to be exact: E is the floor (without
	 * it the budget is 8 E |t| / mean|t| + 4 ulps, under 1e-9 here, and a correct kernel whose
	 * rounding differs fails) */
	CHECK(mb_check(1e-3 + 5e-7, 1e-3, 1e-3, 1e-7, 1.0, 8, 4, MB_FP32, &b));
	CHECK(b >= 8e-7);
	/* NaN wants NaN; an infinity the same infinity; a NaN where a number is wanted fails */
	CHECK(mb_check(NAN, 0, NAN, 1e-7, 1.0, 8, 4, MB_FP32, &b));
	CHECK(!mb_check(0.0, 0, NAN, 1e-7, 1.0, 8, 4, MB_FP32, &b));
	CHECK(mb_check(INFINITY, INFINITY, INFINITY, 0, 1.0, 8, 4, MB_FP32, &b));
	CHECK(!mb_check(-INFINITY, INFINITY, INFINITY, 0, 1.0, 8, 4, MB_FP32, &b));
	CHECK(!mb_check(NAN, 1.0, 1.0, 1e-7, 1.0, 8, 4, MB_FP32, &b));
	/* a task dtype that overflowed (fp16 inf) where the truth did not: |t| is its error */
	CHECK(mb_check(70000, INFINITY, 70000.0, 0, 70000.0, 8, 4, MB_FP16, &b));
	CHECK(mb_check(INFINITY, INFINITY, 70000.0, 0, 70000.0, 8, 4, MB_FP16, &b)); /* as PyTorch */
	CHECK(!mb_check(-INFINITY, INFINITY, 70000.0, 0, 70000.0, 8, 4, MB_FP16, &b));
	/* an all-zero truth: the ulp floor alone, no division by zero */
	CHECK(mb_check(0.0, 0.0, 0.0, 0, 0, 8, 4, MB_FP32, &b));
	CHECK(!mb_check(1e-30, 0.0, 0.0, 0, 0, 8, 4, MB_FP32, &b));
}
