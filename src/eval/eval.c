/*
 * The evaluator; see eval.h. Containment here: own process group killed whole at the
 * deadline, a scratch working directory, an environment holding no secrets (only PATH, HOME,
 * TMPDIR, LANG and CUDA_VISIBLE_DEVICES pass), no core files, and caps on open files, file size
 * and captured output. docs/evaluation.md says what is and is not contained.
 */
#include "common/verdict.h"
#include "eval/eval.h"
#include "common/embedded.h"
#include "common/paths.h"
#include "common/proc.h"
#include "util/fsutil.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RUNNER_LOG_CAP (1u << 20)

void eval_result_release(struct eval_result *r)
{
	free(r->message);
	free(r->last_phase);
	free(r->log);
	if (r->report)
		json_decref(r->report);
	struct eval_result z = EVAL_RESULT_INIT;
	*r = z;
}

int eval_passed(const struct eval_result *r)
{
	return r->verdict == VERDICT_PASS;
}

static double num_at(json_t *o, const char *a, const char *b)
{
	json_t *x = json_object_get(o, a);
	if (b)
		x = json_object_get(x, b);
	return json_is_number(x) ? json_number_value(x) : -1;
}

static void take_report(struct eval_result *r, json_t *rep)
{
	r->report = rep;
	const char *v = json_string_value(json_object_get(rep, "verdict"));
	r->verdict = v ? verdict_parse(v) : VERDICT_RUNNER_ERROR;
	const char *m = json_string_value(json_object_get(rep, "message"));
	free(r->message);
	r->message = xstrdup(m && *m ? m : (v ? "" : "the runner's report has no verdict"));
	r->ms = num_at(rep, "metrics", "ms");
	r->tflops = num_at(rep, "metrics", "tflops");
	r->gbps = num_at(rep, "metrics", "gbps");
	r->speedup = num_at(rep, "metrics", "speedup_vs_baseline");
	r->roofline_fraction = num_at(rep, "metrics", "roofline_fraction");
	r->speedup_torch = num_at(rep, "metrics", "speedup_vs_torch");
}

/*
 * PyTorch eager on the same task, in its own process (python3 + torch may be absent: then
 * the report says why and nothing fails). Adds baseline.torch_eager (with torch.compile's figure,
 * compile_ms, or why there is none, compile_error) and metrics.speedup_vs_torch and
 * speedup_vs_torch_compile.
 */
static void torch_baseline(const struct eval_opts *o, const char *dir, const char *task_path,
			   struct eval_result *r)
{
	const struct embedded_file *f = embedded_find("tools/torch_eager.py");
	json_t *base = json_object_get(r->report, "baseline");
	json_t *metrics = json_object_get(r->report, "metrics");
	if (!f || !base || !metrics)
		return;
	char *script = xasprintf("%s/torch_eager.py", dir);
	char *out = xasprintf("%s/torch.json", dir);
	char dev[16];
	snprintf(dev, sizeof(dev), "%d", o->device);
	struct strbuf log = STRBUF_INIT, res = STRBUF_INIT;
	log.cap = 1 << 16;
	json_t *tj = NULL;
	if (write_file_atomic(script, f->data, f->len) == 0) {
		const char *argv[] = { "python3", script, task_path, out, "--device", dev, NULL };
		struct child_process cp = CHILD_PROCESS_INIT;
		cp.argv = argv;
		cp.clear_env = 1;
		cp.dir = dir;
		cp.out = &log;
		cp.err = &log;
		cp.deadline_s = 600; /* torch.compile's max-autotune takes minutes */
		if (run_command(&cp) == 0 && cp.status == 0 && strbuf_read_file(&res, out, 1 << 16) == 0)
			tj = json_loads(res.buf, 0, NULL);
		if (!tj)
			tj = json_pack("{s:s}", "error", cp.errmsg[0] ? cp.errmsg : "python3 torch_eager.py failed");
	}
	if (tj) {
		double ms = num_at(tj, "ms", NULL);
		if (ms > 0 && r->ms > 0) {
			r->speedup_torch = ms / r->ms;
			json_object_set_new(metrics, "speedup_vs_torch", json_real(r->speedup_torch));
		}
		double cms = num_at(tj, "compile_ms", NULL);
		if (cms > 0 && r->ms > 0)
			json_object_set_new(metrics, "speedup_vs_torch_compile", json_real(cms / r->ms));
		json_object_set_new(base, "torch_eager", tj);
	}
	strbuf_release(&log);
	strbuf_release(&res);
	free(script);
	free(out);
}

int eval_result_from_report(struct eval_result *r, const char *report_json, char **err)
{
	json_error_t je;
	json_t *rep = json_loads(report_json, 0, &je);
	if (!rep || !json_is_object(rep)) {
		*err = xasprintf("runner report is not a JSON object (line %d: %s)", je.line, je.text);
		if (rep)
			json_decref(rep);
		return -1;
	}
	take_report(r, rep);
	return 0;
}

static char *last_phase(const char *log)
{
	const char *p = NULL;
	for (const char *s = log; (s = strstr(s, "phase ")); s += 6)
		if (s == log || s[-1] == '\n')
			p = s + 6;
	if (!p)
		return xstrdup("start");
	const char *e = strchr(p, '\n');
	return xstrndup(p, e ? (size_t)(e - p) : strlen(p));
}

static const char *signal_name(int sig)
{
	switch (sig) {
	case 6: return "SIGABRT";
	case 7: return "SIGBUS";
	case 8: return "SIGFPE";
	case 9: return "SIGKILL";
	case 11: return "SIGSEGV";
	case 4: return "SIGILL";
	default: return "a signal";
	}
}

int eval_run(const struct eval_opts *o, const struct task *t, const char *so_path,
	     struct eval_result *r, char **err)
{
	int rc = -1, turn = -1;
	/* $CUTEGEN_RUNNER, as for memcheck, ncu and doctor, else beside the cutegen binary */
	char *runner = o->runner ? xstrdup(o->runner) : paths_runner();
	if (!runner)
		runner = xasprintf("%s/cutegen-runner", cutegen_libexec_dir());
	char *dir = NULL, *task_path = NULL, *report_path = NULL, *so_abs = NULL;
	struct strbuf sb = STRBUF_INIT, log = STRBUF_INIT;

	if (access(runner, X_OK)) {
		*err = xasprintf("cannot run the evaluator '%s': build it with 'make'", runner);
		goto out;
	}
	so_abs = realpath(so_path, NULL);
	if (!so_abs) {
		*err = xasprintf("kernel library '%s' not found", so_path);
		goto out;
	}
	const char *tmp = o->scratch_root ? o->scratch_root : getenv("TMPDIR");
	dir = xasprintf("%s/cutegen-eval-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		*err = xasprintf("cannot make a scratch directory under '%s'", tmp && *tmp ? tmp : "/tmp");
		goto out;
	}
	task_path = xasprintf("%s/task.json", dir);
	report_path = xasprintf("%s/report.json", dir);
	task_to_json(t, &sb);
	if (write_file_atomic(task_path, sb.buf, sb.len)) {
		*err = xasprintf("cannot write '%s'", task_path);
		goto out;
	}

	char devbuf[16];
	snprintf(devbuf, sizeof(devbuf), "%d", o->device);
	const char *argv[16];
	int n = 0;
	argv[n++] = runner;
	argv[n++] = "--task"; argv[n++] = task_path;
	argv[n++] = "--kernel"; argv[n++] = so_abs;
	argv[n++] = "--out"; argv[n++] = report_path;
	argv[n++] = "--device"; argv[n++] = devbuf;
	if (o->quick) argv[n++] = "--quick";
	if (o->no_baseline) argv[n++] = "--no-baseline";
	argv[n] = NULL;

	struct proc_limits lim = { 0 };
	lim.nofile = 4096;           /* CUDA, cuBLASLt and the candidate need a few dozen */
	lim.fsize_bytes = 1ull << 32; /* the report and the candidate's scribbles in its scratch */
	lim.core_bytes = 0;
	/* RLIMIT_NPROC counts every process of the user and root is exempt: a bound on a fork
	 * bomb for ordinary users, meaningless as root (docs/containment.md) */
	if (geteuid() != 0)
		lim.nproc = 16384;
	struct child_process cp = CHILD_PROCESS_INIT;
	cp.argv = argv;
	cp.clear_env = 1;
	cp.dir = dir;
	log.cap = RUNNER_LOG_CAP;
	cp.out = &log;
	cp.err = &log;
	cp.deadline_s = o->deadline_s > 0 ? o->deadline_s : 600;
	cp.limits = &lim;
	const char *netns = getenv("CUTEGEN_RUNNER_NETNS");
	cp.new_netns = !(netns && !strcmp(netns, "0"));
	turn = gpu_turn_take(); /* given back at out: the torch baseline times the GPU too */
	if (run_command(&cp)) {
		*err = xasprintf("%s", cp.errmsg);
		goto out;
	}
	r->exit_status = cp.status;
	r->netns = cp.netns_applied;
	r->wall_s = cp.wall_s;
	r->last_phase = last_phase(log.buf);
	r->log = strbuf_detach(&log, NULL);

	strbuf_reset(&sb);
	if (!cp.timed_out && !cp.signaled && strbuf_read_file(&sb, report_path, 64u << 20) == 0) {
		char *perr = NULL;
		if (eval_result_from_report(r, sb.buf, &perr) == 0) {
			if (o->torch && eval_passed(r))
				torch_baseline(o, dir, task_path, r);
			rc = 0;
			goto out;
		}
		r->verdict = VERDICT_RUNNER_ERROR;
		r->message = perr;
		rc = 0;
		goto out;
	}
	if (cp.timed_out) {
		r->verdict = VERDICT_TIMEOUT;
		r->message = xasprintf("the evaluation did not finish within its deadline of %.0f s "
				       "(it was at: %s); a kernel that never returns, or one far too slow "
				       "for this size", cp.deadline_s, r->last_phase);
	} else if (cp.signaled) {
		r->verdict = VERDICT_CRASH;
		r->message = xasprintf("the runner died with %s (signal %d) while at: %s; the kernel's "
				       "host code crashed", signal_name(cp.status - 128), cp.status - 128,
				       r->last_phase);
	} else {
		r->verdict = VERDICT_RUNNER_ERROR;
		r->message = xasprintf("the runner exited with status %d and wrote no report (at: %s)",
				       cp.status, r->last_phase);
	}
	rc = 0;
out:
	gpu_turn_give(turn);
	if (dir && !o->keep_scratch)
		remove_tree(dir);
	free(runner);
	free(dir);
	free(task_path);
	free(report_path);
	free(so_abs);
	strbuf_release(&sb);
	strbuf_release(&log);
	return rc;
}

static void fmt_ms(struct strbuf *out, const char *label, json_t *tm)
{
	/* %.0f, not a cast to int: the report is untrusted and the count may be out of range */
	strbuf_addf(out, "%-9s %.4f ms median (p10 %.4f, p90 %.4f, %.0f trials, L2 flushed)\n", label,
		    num_at(tm, "median_ms", NULL), num_at(tm, "p10_ms", NULL), num_at(tm, "p90_ms", NULL),
		    num_at(tm, "trials", NULL));
}

void eval_format(const struct eval_result *r, const struct task *t, struct strbuf *out)
{
	json_t *rep = r->report;
	int pass = eval_passed(r);
	strbuf_addf(out, "verdict   %s%s%s\n", pass ? "PASS" : "FAIL: ", pass ? "" : verdict_name(r->verdict),
		    t ? "" : "");
	if (t)
		strbuf_addf(out, "contract  %s (%s)\n", precision_name(t->precision), dtype_name(t->in_dtype));
	if (r->message && *r->message)
		strbuf_addf(out, "why       %s\n", r->message);
	json_t *checks = json_object_get(rep, "checks");
	if (json_array_size(checks)) {
		size_t i, ok = 0;
		json_t *c;
		json_array_foreach(checks, i, c)
			ok += json_is_true(json_object_get(c, "ok"));
		strbuf_addf(out, "checks    %zu of %zu passed (distributions x seeds, outputs poisoned, inputs verified)\n",
			    ok, json_array_size(checks));
	}
	json_t *tm = json_object_get(rep, "timing");
	if (tm) {
		fmt_ms(out, "time", tm);
		double host = num_at(tm, "host_ms_per_call", NULL);
		if (host >= 0)
			strbuf_addf(out, "crosscheck host clock %.4f ms/call vs events %.4f ms/call\n", host,
				    num_at(tm, "event_ms_per_call_warm", NULL));
	}
	json_t *base = json_object_get(rep, "baseline");
	if (pass && r->ms > 0) {
		strbuf_addf(out, "rate      %.2f TFLOP/s, %.1f GB/s\n", r->tflops, r->gbps);
		json_t *cb = json_object_get(base, "cublaslt");
		if (cb)
			strbuf_addf(out, "cuBLASLt  %.4f ms (%.2f TFLOP/s, %s): speedup %.3fx\n",
				    num_at(cb, "median_ms", NULL), num_at(cb, "tflops", NULL),
				    json_string_value(json_object_get(cb, "algo")), r->speedup);
		else if (json_object_get(base, "cublaslt_error"))
			strbuf_addf(out, "cuBLASLt  unavailable: %s\n",
				    json_string_value(json_object_get(base, "cublaslt_error")));
		double copy = num_at(base, "copy_gbps", NULL), peak = num_at(base, "peak_tflops", NULL);
		if (copy > 0)
			strbuf_addf(out, "roofline  copy %.0f GB/s%s", copy, peak > 0 ? "" : "\n");
		if (peak > 0)
			strbuf_addf(out, ", GEMM peak %.1f TFLOP/s (%s)\n", peak,
				    json_string_value(json_object_get(base, "peak_gemm")));
		json_t *te = json_object_get(base, "torch_eager");
		if (te && num_at(te, "ms", NULL) > 0)
			strbuf_addf(out, "PyTorch   %.4f ms eager (torch %s): speedup %.3fx\n", num_at(te, "ms", NULL),
				    json_string_value(json_object_get(te, "torch")), r->speedup_torch);
		else if (te)
			strbuf_addf(out, "PyTorch   unavailable: %s\n", json_string_value(json_object_get(te, "error")));
		if (te && num_at(te, "compile_ms", NULL) > 0)
			strbuf_addf(out, "PyTorch   %.4f ms torch.compile (%s): speedup %.3fx\n",
				    num_at(te, "compile_ms", NULL),
				    json_string_value(json_object_get(te, "compile_mode")),
				    num_at(r->report, "metrics", "speedup_vs_torch_compile"));
		else if (te && json_object_get(te, "compile_error"))
			strbuf_addf(out, "PyTorch   torch.compile failed: %.300s\n",
				    json_string_value(json_object_get(te, "compile_error")));
		if (r->roofline_fraction > 0)
			strbuf_addf(out, "fraction  %.3f of the roofline\n", r->roofline_fraction);
	}
	if (!pass && r->last_phase && (r->verdict == VERDICT_TIMEOUT || r->verdict == VERDICT_CRASH))
		strbuf_addf(out, "phase     %s\n", r->last_phase);
}

json_t *eval_list_devices(const char *runner, int brief, char **err)
{
	struct strbuf out = STRBUF_INIT;
	const char *argv[] = { runner, "--devices", brief ? "--brief" : NULL, NULL };
	struct child_process cp = CHILD_PROCESS_INIT;
	json_t *j = NULL;
	if (capture_command(&cp, argv, &out, 1 << 20, 0, 60)) {
		*err = xstrdup(cp.errmsg);
	} else {
		j = json_loads(out.buf, 0, NULL);
		if (!j)
			*err = xasprintf("the runner's device probe failed (exit %d)", cp.status);
	}
	strbuf_release(&out);
	return j;
}
