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
#include "eval/reference.h"
#include "util/fsutil.h"
#include "util/opt.h"
#include "util/sha256.h"
#include "util/xalloc.h"

#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RUNNER_LOG_CAP (1u << 20)
#define REPORT_CAP (16u << 20)

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

int eval_keeps_reference(const struct eval_result *r)
{
	switch (r->verdict) {
	case VERDICT_PASS:
	case VERDICT_INCORRECT:
	case VERDICT_PRECISION:
	case VERDICT_INPUTS_MODIFIED:
	case VERDICT_STALE_OUTPUT:
	case VERDICT_TIMING_ESCAPE:
	case VERDICT_TIMING_MISMATCH:
	case VERDICT_IMPLAUSIBLE:
		break;
	default:
		return 0;
	}
	return json_is_true(json_object_get(json_object_get(r->report, "module"), "reference_intact"));
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

/* ---- baselines: their own process, cached ---------------------------------------------- */

#define BASELINE_VERSION "2" /* part of the cache key: bump when the baseline's JSON or its protocol
                                * changes (2: cuBLASLt timed under the candidate's protocol) */

static char *baseline_program(const char *runner)
{
	const char *env = getenv("CUTEGEN_BASELINE");
	if (env && *env)
		return xstrdup(env);
	const char *slash = strrchr(runner, '/');
	return slash ? xasprintf("%.*s/cutegen-baseline", (int)(slash - runner), runner)
		     : xstrdup("cutegen-baseline");
}

static char *baseline_cache_dir(const struct eval_opts *o)
{
	if (o->baseline_cache)
		return xstrdup(o->baseline_cache);
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	if (xdg && *xdg)
		return xasprintf("%s/cutegen/baseline", xdg);
	return home && *home ? xasprintf("%s/.cache/cutegen/baseline", home) : NULL;
}

/* Runs the baseline program with args; its stdout as a JSON object, or NULL with *why set. */
static json_t *run_baseline(const char *prog, const char *const *args, const char *dir, double deadline,
			    char **why)
{
	const char *argv[12];
	int n = 0;
	argv[n++] = prog;
	for (int i = 0; args[i] && n < 11; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	out.cap = 1 << 20;
	err.cap = 1 << 16;
	struct child_process cp = CHILD_PROCESS_INIT;
	cp.argv = argv;
	cp.clear_env = 1;
	cp.dir = dir;
	cp.out = &out;
	cp.err = &err;
	cp.deadline_s = deadline;
	json_t *j = NULL;
	if (run_command(&cp)) {
		*why = xstrdup(cp.errmsg);
		goto out;
	}
	j = json_loads(out.buf ? out.buf : "", 0, NULL);
	if (!json_is_object(j) || cp.status != 0 || json_object_get(j, "error")) {
		const char *e = json_string_value(json_object_get(j, "error"));
		*why = e ? xstrdup(e) : xasprintf("%s exited with status %d%s", prog, cp.status,
						  cp.timed_out ? " (deadline)" : "");
		if (j)
			json_decref(j);
		j = NULL;
	}
out:
	strbuf_release(&out);
	strbuf_release(&err);
	return j;
}

/* `cutegen-baseline --identify` starts CUDA (a fraction of a second): once per device and
 * process, since a process's GPUs do not change under it. */
static pthread_mutex_t id_lock = PTHREAD_MUTEX_INITIALIZER;
static json_t *id_cache[64];

static json_t *identify(const char *prog, int device, const char *dir, char **why)
{
	int slot = device >= 0 && device < 64 ? device : -1;
	json_t *id = NULL;
	pthread_mutex_lock(&id_lock);
	if (slot >= 0 && id_cache[slot])
		id = json_incref(id_cache[slot]);
	pthread_mutex_unlock(&id_lock);
	if (id)
		return id;
	char dev[16];
	snprintf(dev, sizeof(dev), "%d", device);
	const char *idargs[] = { "--identify", "--device", dev, NULL };
	id = run_baseline(prog, idargs, dir, 120, why);
	if (id && slot >= 0) {
		pthread_mutex_lock(&id_lock);
		if (!id_cache[slot])
			id_cache[slot] = json_incref(id);
		pthread_mutex_unlock(&id_lock);
	}
	return id;
}

/*
 * The baseline of this task on this GPU: from the cache (keyed by the task's canonical JSON,
 * the GPU's name and UUID, the driver, CUDA runtime and cuBLASLt versions, and --quick), else measured by cutegen-baseline and
 * stored. NULL with *why when it cannot be had (no baseline program, no GPU): the evaluation
 * goes on without baselines and without the evaluator's plausibility bound.
 */
static json_t *get_baseline(const struct eval_opts *o, const struct task *t, const char *runner,
			    const char *dir, const char *task_path, int *cached, char **why)
{
	/* a module: no task for cuBLASLt, the copy roofline and the peak of its precision alone */
	const char *mprec = t ? NULL : reference_precision(o->module);
	char *prog = baseline_program(runner), *cache = NULL, *path = NULL;
	char dev[16];
	snprintf(dev, sizeof(dev), "%d", o->device);
	json_t *id = NULL, *b = NULL;
	struct strbuf key = STRBUF_INIT, text = STRBUF_INIT;
	*cached = 0;
	if (access(prog, X_OK)) {
		*why = xasprintf("no baseline program '%s' (build it with 'make')", prog);
		goto out;
	}
	id = identify(prog, o->device, dir, why);
	if (!id)
		goto out;
	/* the task, and the GPU as --identify describes it: name, UUID, driver, CUDA runtime,
	 * cuBLASLt version, clocks */
	char *idtext = json_dumps(json_object_get(id, "device"), JSON_COMPACT | JSON_SORT_KEYS);
	if (t)
		task_to_json(t, &key);
	else
		strbuf_addf(&key, "module precision %s", mprec);
	strbuf_addf(&key, "\n%s\n%d\n" BASELINE_VERSION, idtext ? idtext : "", o->quick);
	free(idtext);
	char hex[65];
	sha256_hex(key.buf, key.len, hex);
	cache = baseline_cache_dir(o);
	if (cache) {
		path = xasprintf("%s/%s.json", cache, hex);
		if (strbuf_read_file(&text, path, 1 << 20) == 0) {
			b = json_loads(text.buf, 0, NULL);
			if (json_is_object(b)) {
				*cached = 1;
				goto out;
			}
			if (b)
				json_decref(b);
			b = NULL;
		}
	}
	const char *args[] = { t ? "--task" : "--precision", t ? task_path : mprec, "--device", dev,
			       o->quick ? "--quick" : NULL, NULL };
	b = run_baseline(prog, args, dir, 600, why);
	if (b && path && mkdir_p(cache) == 0) {
		char *s = json_dumps(b, JSON_COMPACT | JSON_SORT_KEYS);
		write_file_atomic(path, s, strlen(s)); /* a cache: failing to write it costs time only */
		free(s);
	}
out:
	if (id)
		json_decref(id);
	strbuf_release(&key);
	strbuf_release(&text);
	free(prog);
	free(cache);
	free(path);
	return b;
}

/* The limits no real kernel passes (docs/evaluation.md): bandwidth, the larger of 1.05 x the
 * measured copy bandwidth and the DRAM's theoretical one; compute, 1.05 x the larger of the
 * measured and the theoretical peak of the task's precision. 0 = unknown. */
static void limits_of(json_t *b, double *gbps, double *tflops)
{
	double copy = num_at(b, "copy_gbps", NULL), dram = num_at(b, "dram_gbps_theoretical", NULL);
	double peak = num_at(b, "peak_limit_tflops", NULL);
	*gbps = copy > 0 ? fmax(1.05 * copy, dram) : 0;
	*tflops = peak > 0 ? 1.05 * peak : 0;
}

/* ---- the report: accepted or not ------------------------------------------------------ */

/*
 * Whether what came through the report pipe is the runner's report: exactly one JSON object
 * carrying the nonce, from a runner that exited 0 after its final phase line ("report").
 * Returns the report (owned), or NULL with *why and *malformed (1 when the text is no JSON
 * object at all: a runner error more likely than a forgery).
 */
static json_t *accept_report(const struct strbuf *pipe_text, const char *nonce, int status,
			     const char *phase, char **why, int *malformed)
{
	*malformed = 0;
	json_error_t je;
	const char *text = pipe_text->buf ? pipe_text->buf : "";
	if (!pipe_text->len) {
		*why = xstrdup("no report arrived");
		return NULL;
	}
	json_t *rep = json_loadb(text, pipe_text->len, JSON_DISABLE_EOF_CHECK, &je);
	if (!json_is_object(rep)) {
		*why = xasprintf("the runner's report is not a JSON object (%s)", je.text);
		*malformed = 1;
		goto bad;
	}
	size_t end = je.position;
	while (end < pipe_text->len && strchr(" \t\r\n", text[end]))
		end++;
	if (end < pipe_text->len) {
		*why = xstrdup("more than one report arrived");
		goto bad;
	}
	const char *got = json_string_value(json_object_get(rep, "nonce"));
	if (!got || strcmp(got, nonce)) {
		*why = xstrdup(got ? "the report carries the wrong nonce" : "the report carries no nonce");
		goto bad;
	}
	if (status != 0) {
		*why = xasprintf("the runner exited with status %d after the report", status);
		goto bad;
	}
	if (strcmp(phase, "report")) {
		*why = xasprintf("the runner's last phase line is '%s', not 'report'", phase);
		goto bad;
	}
	json_object_del(rep, "nonce");
	return rep;
bad:
	if (rep)
		json_decref(rep);
	return NULL;
}

/*
 * A pass must show the protocol that earns it: the runner confined, every timed call on fresh
 * inputs and checked (whole or sampled: as many checks as trials). A runner whose state was
 * patched in-process to skip them reports what it did; NULL when the report shows it all,
 * else why not (heap).
 */
static char *protocol_missing(json_t *rep)
{
	json_t *tm = json_object_get(rep, "timing"), *tc = json_object_get(tm, "timed_calls");
	double trials = num_at(tm, "trials", NULL);
	double checks = num_at(tc, "full_checks", NULL) + num_at(tc, "sampled_checks", NULL);
	if (!json_is_true(json_object_get(rep, "confined")))
		return xstrdup("the report does not say the runner was confined");
	if (!json_is_true(json_object_get(tc, "enabled")) || !json_is_true(json_object_get(tc, "inputs_regenerated")))
		return xstrdup("the report does not say the timed calls got fresh inputs and were checked");
	if (!(trials >= 1) || checks != trials)
		return xasprintf("the report gives %.0f trials but %.0f checks of timed calls", trials, checks);
	/* a module's held-back cases were given to the kernel in timed calls, first there */
	json_t *held = json_object_get(json_object_get(rep, "module"), "held_back_cases");
	if (json_array_size(held) && !(num_at(json_object_get(tm, "first_sight"), "calls", NULL) >= 1))
		return xstrdup("the report holds cases back for timing but shows no timed call on one");
	return NULL;
}

/* The baseline's figures into the report, and the metrics that compare with them. */
static void merge_baseline(struct eval_result *r, const struct task *t, const struct module_desc *md,
			   json_t *b, int cached, const char *why, double lim_gbps, double lim_tflops)
{
	json_t *base = json_object();
	int gemm = t && task_is_gemm_like(t);
	json_object_set_new(base, "kind", json_string(gemm ? "cublaslt" : "copy_roofline"));
	if (!b) {
		json_object_set_new(base, "error", json_string(why ? why : "no baseline"));
		json_object_set_new(r->report, "baseline", base);
		return;
	}
	static const char *keep[] = { "copy_gbps", "dram_gbps_theoretical", "peak_tflops", "peak_gemm",
				      "peak_fma_tflops", "peak_theoretical_tflops", "peak_limit_tflops",
				      "cublaslt", "cublaslt_error", "peak_error", "device" };
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
		json_t *v = json_object_get(b, keep[i]);
		if (v)
			json_object_set(base, keep[i], v);
	}
	json_object_set_new(base, "cached", json_boolean(cached));
	json_t *lim = json_object();
	json_object_set_new(lim, "gbps", json_real(lim_gbps));
	json_object_set_new(lim, "tflops", json_real(lim_tflops));
	json_object_set_new(base, "limits", lim);
	json_object_set_new(r->report, "baseline", base);
	json_t *metrics = json_object_get(r->report, "metrics");
	if (!json_is_object(metrics) || !(r->ms > 0))
		return;
	double copy = num_at(b, "copy_gbps", NULL), peak = num_at(b, "peak_tflops", NULL);
	double bytes = t ? task_min_bytes(t) : md->bytes;
	double t_mem = copy > 0 && bytes > 0 ? bytes / (copy * 1e9) * 1e3 : -1, t_roof = t_mem;
	if (!t && md->flops > 0) {
		/* a module: the compute side of its roofline from torch's flop count and the peak of
		 * its precision (measured, else the hardware's) */
		double mpeak = num_at(b, "peak_limit_tflops", NULL);
		if (mpeak > 0)
			t_roof = fmax(t_roof, md->flops / (mpeak * 1e12) * 1e3);
	}
	if (gemm) {
		if (peak > 0)
			t_roof = fmax(t_roof, task_flops(t) / (peak * 1e12) * 1e3);
		double cb = num_at(b, "cublaslt", "median_ms");
		if (cb > 0) {
			json_object_set_new(metrics, "speedup_vs_cublas", json_real(cb / r->ms));
			json_object_set_new(metrics, "speedup_vs_baseline", json_real(cb / r->ms));
		}
	} else if (t_mem > 0) {
		json_object_set_new(metrics, "speedup_vs_baseline", json_real(t_mem / r->ms));
	}
	if (t_roof > 0) {
		json_object_set_new(metrics, "roofline_ms", json_real(t_roof));
		json_object_set_new(metrics, "roofline_fraction", json_real(t_roof / r->ms));
	}
	r->speedup = num_at(metrics, "speedup_vs_baseline", NULL);
	r->roofline_fraction = num_at(metrics, "roofline_fraction", NULL);
}

/* The evaluator's own bound on a passing report's time: the check that counts, since the
 * runner's process holds untrusted code. */
static void check_plausible(struct eval_result *r, const struct task *t, const struct module_desc *md,
			    json_t *b, double lim_gbps, double lim_tflops)
{
	if (!eval_passed(r))
		return;
	if (!(r->ms > 0) || !isfinite(r->ms)) {
		r->verdict = VERDICT_IMPLAUSIBLE;
		free(r->message);
		r->message = xasprintf("the report says pass but gives no positive time (ms = %g)", r->ms);
		return;
	}
	double l2 = num_at(b, "device", "l2_bytes");
	/* a module's inputs are copied in before each call and L2 flushed: each tensor once */
	double bytes = t ? task_dram_bytes(t, l2 > 0 ? l2 : 0) : md->bytes;
	double flops = t ? task_flops(t) : md->flops;
	const char *prec = t ? precision_name(t->precision) : reference_precision(md);
	double gbps = bytes / (r->ms * 1e-3) / 1e9, tflops = flops / (r->ms * 1e-3) / 1e12;
	char *msg = NULL;
	if (lim_gbps > 0 && bytes > 0 && gbps > lim_gbps)
		msg = xasprintf("%.4f ms means moving %.0f MB at %.0f GB/s, beyond this GPU's limit of %.0f GB/s "
				"(the larger of 1.05 x its measured copy bandwidth and its DRAM's theoretical "
				"bandwidth): no kernel can; its time was bent (work skipped or moved out of the "
				"timed calls)", r->ms, bytes / 1e6, gbps, lim_gbps);
	else if (lim_tflops > 0 && flops > 0 && tflops > lim_tflops)
		msg = xasprintf("%.4f ms means %.1f TFLOP/s of %s work, beyond this GPU's limit of %.1f TFLOP/s "
				"(1.05 x the larger of the measured and the theoretical peak of that precision): "
				"no kernel can; its time was bent (work skipped or moved out of the timed calls)",
				r->ms, tflops, prec, lim_tflops);
	if (!msg)
		return;
	r->verdict = VERDICT_IMPLAUSIBLE;
	free(r->message);
	r->message = msg;
	json_object_set_new(r->report, "verdict", json_string(verdict_name(VERDICT_IMPLAUSIBLE)));
	json_object_set_new(r->report, "message", json_string(msg));
}

/* ---- module tasks: the reference process's cases, handed to the runner ------------------ */

/* The reference process's eager and torch.compile times as baseline.torch_eager (the shape
 * eval --torch gives built-in tasks), with the speedups. */
static void merge_module_torch(struct eval_result *r, const struct module_desc *md, json_t *prep)
{
	json_t *bl = json_object_get(prep, "baselines");
	json_t *base = json_object_get(r->report, "baseline");
	json_t *metrics = json_object_get(r->report, "metrics");
	if (!json_is_object(bl) || !r->report)
		return;
	if (!base) {
		base = json_object();
		json_object_set_new(r->report, "baseline", base);
	}
	json_t *te = json_object();
	double eager = num_at(bl, "eager_ms", NULL), cms = num_at(bl, "compile_ms", NULL);
	json_object_set_new(te, "source", json_string("reference process"));
	if (md->torch)
		json_object_set_new(te, "torch", json_string(md->torch));
	if (eager > 0)
		json_object_set_new(te, "ms", json_real(eager));
	else
		json_object_set_new(te, "error", json_string("the reference process gave no eager time"));
	if (cms > 0)
		json_object_set_new(te, "compile_ms", json_real(cms));
	const char *mode = json_string_value(json_object_get(bl, "compile_mode"));
	const char *cerr = json_string_value(json_object_get(bl, "compile_error"));
	if (mode)
		json_object_set_new(te, "compile_mode", json_string(mode));
	if (cerr)
		json_object_set_new(te, "compile_error", json_sprintf("%.1000s", cerr));
	json_t *bd = json_object_get(bl, "median_ms_by_dist");
	if (json_is_object(bd))
		json_object_set(te, "median_ms_by_dist", bd);
	json_object_set_new(base, "torch_eager", te);
	if (json_is_object(metrics) && r->ms > 0) {
		if (eager > 0) {
			r->speedup_torch = eager / r->ms;
			json_object_set_new(metrics, "speedup_vs_torch", json_real(r->speedup_torch));
			json_object_set_new(metrics, "speedup_vs_eager", json_real(r->speedup_torch));
		}
		if (cms > 0)
			json_object_set_new(metrics, "speedup_vs_torch_compile", json_real(cms / r->ms));
	}
}

/* A module's report whose module.reference_intact is false: the kernel wrote the reference
 * process's tensors through their IPC mappings (or their hash could not be taken after it). A
 * pass becomes inputs_modified, whatever the runner said. */
static void reference_intact(struct eval_result *r)
{
	json_t *mod = json_object_get(r->report, "module");
	if (!json_is_false(json_object_get(mod, "reference_intact")) || !eval_passed(r))
		return;
	const char *herr = json_string_value(json_object_get(mod, "reference_hash_error"));
	char *msg = herr ? xasprintf("%.500s; a pass needs the reference's tensors unchanged after the kernel", herr)
		    : xstrdup("the kernel wrote the reference process's tensors through their CUDA IPC "
			      "mappings (the cases' pristine inputs, reference or truth outputs changed "
			      "between before the kernel was loaded and after its last call); a kernel "
			      "may write its outputs only");
	r->verdict = VERDICT_INPUTS_MODIFIED;
	free(r->message);
	r->message = msg;
	json_object_set_new(r->report, "verdict", json_string(verdict_name(r->verdict)));
	json_object_set_new(r->report, "message", json_string(msg));
}

static int make_nonce(char hex[33])
{
	unsigned char raw[16];
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, raw, sizeof(raw)) : -1;
	if (fd >= 0)
		close(fd);
	if (n != (ssize_t)sizeof(raw))
		return -1;
	for (int i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", raw[i]);
	return 0;
}

double eval_call_limit(char **why)
{
	double v;
	if (opt_env_seconds("CUTEGEN_CALL_LIMIT", 30, 1, &v) && why)
		*why = xasprintf("CUTEGEN_CALL_LIMIT='%s' is not a number of seconds (0 for no "
				 "limit); using 30", getenv("CUTEGEN_CALL_LIMIT"));
	return v;
}

int eval_run(const struct eval_opts *o, const struct task *t, const char *so_path,
	     struct eval_result *r, char **err)
{
	int rc = -1, turn = -1;
	/* $CUTEGEN_RUNNER, as for memcheck, ncu and doctor, else beside the cutegen binary */
	char *runner = o->runner ? xstrdup(o->runner) : paths_runner();
	if (!runner)
		runner = xasprintf("%s/cutegen-runner", cutegen_libexec_dir());
	char *dir = NULL, *task_path = NULL, *so_abs = NULL, *why = NULL, *base_why = NULL;
	struct strbuf sb = STRBUF_INIT, log = STRBUF_INIT, pipe_text = STRBUF_INIT;
	json_t *base = NULL;
	int base_cached = 0;
	char nonce[33], nonce_line[40];
	double t0 = now_s();
	const struct module_desc *md = t ? NULL : o->module;
	struct reference_session *rs = NULL;
	json_t *prep = NULL;
	struct reference_keep *kept = NULL; /* o->keep once it holds this module's session: kept
					       at out only when eval_keeps_reference says so */
	int keep_ok = 0;
	if (!t && !md)
		BUG("eval_run without a task or a module");

	if (access(runner, X_OK)) {
		*err = xasprintf("cannot run the evaluator '%s': build it with 'make'", runner);
		goto out;
	}
	so_abs = realpath(so_path, NULL);
	if (!so_abs) {
		*err = xasprintf("kernel library '%s' not found", so_path);
		goto out;
	}
	if (make_nonce(nonce)) {
		*err = xstrdup("cannot read /dev/urandom for the report's nonce");
		goto out;
	}
	snprintf(nonce_line, sizeof(nonce_line), "%s\n", nonce);
	const char *tmp = o->scratch_root ? o->scratch_root : getenv("TMPDIR");
	dir = xasprintf("%s/cutegen-eval-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		*err = xasprintf("cannot make a scratch directory under '%s'", tmp && *tmp ? tmp : "/tmp");
		goto out;
	}
	task_path = xasprintf("%s/%s", dir, t ? "task.json" : "run.json");
	if (t)
		task_to_json(t, &sb);
	if (t && write_file_atomic(task_path, sb.buf, sb.len)) {
		*err = xasprintf("cannot write '%s'", task_path);
		goto out;
	}

	if (md) {
		/* no GPU, no reference process: the verdict a built-in task gets from the runner */
		char *derr = NULL;
		json_t *devs = eval_list_devices(runner, 1, &derr);
		json_t *list = json_object_get(devs, "devices");
		if (devs && json_array_size(list) <= (size_t)o->device) {
			const char *why_nd = json_string_value(json_object_get(devs, "error"));
			r->verdict = VERDICT_NO_DEVICE;
			r->message = json_array_size(list)
				? xasprintf("no CUDA device %d (this machine has %zu)", o->device, json_array_size(list))
				: xasprintf("no CUDA device: kernels can be compiled but not evaluated (%s); a "
					    "module's reference process needs the GPU too", why_nd ? why_nd : "none found");
			r->wall_s = now_s() - t0;
			json_decref(devs);
			free(derr);
			rc = 0;
			goto out;
		}
		json_decref(devs);
		free(derr);
	}
	double turn_t0 = now_s();
	turn = gpu_turn_take(); /* given back at out: baselines and the torch baseline time the GPU */
	double gpu_wait_s = now_s() - turn_t0; /* other processes' evaluations, not this one's cost */
	double lim_gbps = 0, lim_tflops = 0;
	if (!o->no_baseline) {
		base = get_baseline(o, t, runner, dir, task_path, &base_cached, &base_why);
		if (base)
			limits_of(base, &lim_gbps, &lim_tflops);
	}
	if (md) {
		/* the module's cases, in the reference process, which holds them on the GPU until
		 * released after the runner */
		struct reference_prepare_opts po = REFERENCE_PREPARE_OPTS_INIT;
		po.device = o->device;
		po.quick = o->quick;
		po.baselines = o->torch;
		po.precision = reference_precision(md);
		/* torch.compile's max-autotune takes minutes: a longer wait for the baselines, unless
		 * the user set one ($CUTEGEN_REFERENCE_TIMEOUT) */
		const char *rt = getenv("CUTEGEN_REFERENCE_TIMEOUT");
		if (o->torch && !(rt && *rt))
			po.deadline_s = 1200;
		struct reference_keep *k = o->keep;
		if (k && reference_keep_matches(k, md, &po) && reference_session_alive(k->rs)) {
			k->reuses++; /* its cases as they were: the last runner found them intact */
		} else {
			reference_keep_drop(k); /* another module or options, or its process ended */
			int prc = reference_prepare(md, &po, &rs, &prep, err);
			if (prc) {
				r->code = prc;
				goto out;
			}
			if (k) {
				k->prepares++;
				reference_keep_set(k, rs, prep, md, &po);
				rs = NULL;
				prep = NULL;
			}
		}
		if (k)
			kept = k;
		if (reference_write_run(md, kept ? kept->prep : prep, lim_gbps, lim_tflops, task_path, err)) {
			r->code = CG_EXTERNAL;
			goto out;
		}
	}

	char devbuf[16], gbuf[32], tbuf[32], cbuf[32];
	snprintf(devbuf, sizeof(devbuf), "%d", o->device);
	double call_limit = eval_call_limit(NULL);
	snprintf(gbuf, sizeof(gbuf), "%.1f", lim_gbps);
	snprintf(tbuf, sizeof(tbuf), "%.2f", lim_tflops);
	const char *argv[20];
	int n = 0;
	argv[n++] = runner;
	argv[n++] = t ? "--task" : "--module"; argv[n++] = task_path;
	argv[n++] = "--kernel"; argv[n++] = so_abs;
	argv[n++] = "--report-fd"; argv[n++] = "3";
	argv[n++] = "--device"; argv[n++] = devbuf;
	if (lim_gbps > 0) { argv[n++] = "--limit-gbps"; argv[n++] = gbuf; }
	if (lim_tflops > 0) { argv[n++] = "--limit-tflops"; argv[n++] = tbuf; }
	if (o->quick) argv[n++] = "--quick";
	if (call_limit > 0) {
		snprintf(cbuf, sizeof(cbuf), "%g", call_limit);
		argv[n++] = "--call-limit"; argv[n++] = cbuf;
	}
	argv[n] = NULL;

	struct proc_limits lim = { 0 };
	lim.nofile = 4096;           /* CUDA and the candidate need a few dozen */
	lim.fsize_bytes = 1ull << 32;
	lim.core_bytes = 0;
	/* RLIMIT_NPROC counts every process of the user and root is exempt: a bound on a fork
	 * bomb for ordinary users, meaningless as root (docs/containment.md) */
	if (geteuid() != 0)
		lim.nproc = 16384;
	struct child_process cp = CHILD_PROCESS_INIT;
	cp.argv = argv;
	cp.clear_env = 1;
	cp.dir = dir;
	cp.in_data = nonce_line;
	cp.in_len = strlen(nonce_line);
	log.cap = RUNNER_LOG_CAP;
	cp.out = &log;
	cp.err = &log;
	pipe_text.cap = REPORT_CAP;
	cp.extra = &pipe_text;
	cp.extra_fd = 3;
	cp.deadline_s = o->deadline_s > 0 ? o->deadline_s : 600;
	cp.limits = &lim;
	const char *netns = getenv("CUTEGEN_RUNNER_NETNS");
	cp.new_netns = !(netns && !strcmp(netns, "0"));
	int started = run_command(&cp) == 0;
	/* the runner has ended (or never started): the reference process lets its tensors go,
	 * unless the slot keeps them for the next candidate (decided at out) */
	reference_release(rs);
	rs = NULL;
	if (!started) {
		*err = xasprintf("%s", cp.errmsg);
		goto out;
	}
	r->exit_status = cp.status;
	r->netns = cp.netns_applied;
	r->wall_s = now_s() - t0; /* baselines (or their cache) included: the evaluation's cost */
	r->last_phase = last_phase(log.buf);
	r->log = strbuf_detach(&log, NULL);
	rc = 0;
	if (cp.timed_out) {
		r->verdict = VERDICT_TIMEOUT;
		r->message = xasprintf("the evaluation did not finish within its deadline of %.0f s "
				       "(it was at: %s); a kernel that never returns, or one far too slow "
				       "for this size", cp.deadline_s, r->last_phase);
		goto out;
	}
	if (cp.signaled) {
		r->verdict = VERDICT_CRASH;
		r->message = xasprintf("the runner died with %s (signal %d) while at: %s; the kernel's "
				       "host code crashed", signal_name(cp.status - 128), cp.status - 128,
				       r->last_phase);
		goto out;
	}
	if (!pipe_text.len) {
		r->verdict = VERDICT_RUNNER_ERROR;
		r->message = xasprintf("the runner exited with status %d and wrote no report (at: %s)",
				       cp.status, r->last_phase);
		goto out;
	}
	int malformed = 0;
	json_t *rep = cp.out_truncated && pipe_text.len >= pipe_text.cap ? NULL
		      : accept_report(&pipe_text, nonce, cp.status, r->last_phase, &why, &malformed);
	if (!rep && malformed) {
		r->verdict = VERDICT_RUNNER_ERROR;
		r->message = why;
		why = NULL;
		goto out;
	}
	if (!rep) {
		r->verdict = VERDICT_UNTRUSTED_REPORT;
		r->message = xasprintf("the runner's report was refused: %s (at: %s). The evaluator accepts "
				       "one report carrying the nonce it gave the runner, from a runner that "
				       "ended normally; code in the kernel's process that writes a verdict of "
				       "its own, or ends the process, gets this", why ? why : "it is too large",
				       r->last_phase);
		goto out;
	}
	take_report(r, rep);
	if (md)
		reference_intact(r);
	char *missing = eval_passed(r) ? protocol_missing(r->report) : NULL;
	if (missing) {
		r->verdict = VERDICT_UNTRUSTED_REPORT;
		free(r->message);
		r->message = xasprintf("the runner's report says pass but %s: a pass must show the whole "
				       "protocol (code in the kernel's process that changes the runner's "
				       "state gets this)", missing);
		free(missing);
		goto out;
	}
	if (!o->no_baseline || base) {
		merge_baseline(r, t, md, base, base_cached, base_why, lim_gbps, lim_tflops);
		check_plausible(r, t, md, base, lim_gbps, lim_tflops);
	}
	if (md && eval_passed(r))
		merge_module_torch(r, md, kept ? kept->prep : prep);
	else if (o->torch && eval_passed(r))
		torch_baseline(o, dir, task_path, r);
	json_object_set_new(r->report, "runner_wall_s", json_real(cp.wall_s));
	json_object_set_new(r->report, "gpu_wait_s", json_real(gpu_wait_s));
out:
	if (kept) {
		keep_ok = rc == 0 && eval_keeps_reference(r);
		if (r->report)
			json_object_set_new(r->report, "reference_session", json_pack(
				"{s:s,s:i,s:i}", "next", keep_ok ? "kept" : "released",
				"prepares", kept->prepares, "reuses", kept->reuses));
		if (!keep_ok)
			reference_keep_drop(kept); /* the next candidate gets a fresh prepare */
	}
	reference_release(rs);
	json_decref(prep);
	gpu_turn_give(turn);
	if (dir && !o->keep_scratch)
		remove_tree(dir);
	if (base)
		json_decref(base);
	free(runner);
	free(dir);
	free(task_path);
	free(so_abs);
	free(why);
	free(base_why);
	strbuf_release(&sb);
	strbuf_release(&log);
	strbuf_release(&pipe_text);
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
	json_t *mod = json_object_get(rep, "module");
	if (!t && json_is_object(mod))
		strbuf_addf(out, "contract  %.16s (module, truth %.8s, %.0f cases from the reference process)\n",
			    json_string_value(json_object_get(rep, "precision")) ?
			    json_string_value(json_object_get(rep, "precision")) : "?",
			    json_string_value(json_object_get(mod, "truth")) ?
			    json_string_value(json_object_get(mod, "truth")) : "?", num_at(mod, "cases", NULL));
	if (r->message && *r->message)
		strbuf_addf(out, "why       %s\n", r->message);
	json_t *checks = json_object_get(rep, "checks");
	if (json_is_object(mod)) {
		/* the budget used, and the element closest to (or furthest past) it */
		json_t *c, *worst = NULL;
		size_t i;
		double wr = -1;
		json_array_foreach(checks, i, c) {
			double x = num_at(c, "max_err_over_budget", NULL);
			if (x > wr && json_object_get(c, "worst")) {
				wr = x;
				worst = c;
			}
		}
		strbuf_addf(out, "budget    %.3g x max(|ref - truth|, E max(1, |truth| / mean|truth|)) + %.3g ulp of the "
			    "output dtype at |truth|\n", num_at(mod, "tolerance", "multiple"),
			    num_at(mod, "tolerance", "ulps"));
		if (worst) {
			json_t *w = json_object_get(worst, "worst");
			char *idx = json_dumps(json_object_get(w, "index"), JSON_COMPACT);
			strbuf_addf(out, "worst     '%.64s' %s: got %.9g, want %.9g, budget %.3g (E %.3g, %.3g of "
				    "the budget)\n",
				    json_string_value(json_object_get(worst, "output")) ?
				    json_string_value(json_object_get(worst, "output")) : "?", idx ? idx : "?",
				    num_at(w, "got", NULL), num_at(w, "want", NULL), num_at(w, "budget", NULL),
				    num_at(worst, "E", NULL), wr);
			free(idx);
		}
	}
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
		json_t *tc = json_object_get(tm, "timed_calls");
		if (json_is_true(json_object_get(tc, "enabled")))
			strbuf_addf(out, "timed     every call on fresh inputs and checked (%.0f whole, %.0f sampled), "
				    "+%.4f ms/trial outside the timing (%.4f regenerating inputs)\n",
				    num_at(tc, "full_checks", NULL), num_at(tc, "sampled_checks", NULL),
				    num_at(tc, "overhead_ms_per_trial", NULL), num_at(tc, "regenerate_ms_per_trial", NULL));
		json_t *fs = json_object_get(tm, "first_sight");
		if (fs)
			strbuf_addf(out, "new cases %.0f timed calls on cases held back from the checks: %.4f ms at best "
				    "(all calls %.4f ms)%s\n", num_at(fs, "calls", NULL), num_at(fs, "min_ms", NULL),
				    num_at(fs, "median_ms", NULL),
				    json_is_true(json_object_get(fs, "replay")) ?
					    ": faster on cases it knew, it replays stored results; timed on a new case" : "");
		double host = num_at(tm, "host_ms_per_call", NULL);
		if (host >= 0)
			strbuf_addf(out, "crosscheck host clock %.4f ms/call vs events %.4f ms/call\n", host,
				    num_at(tm, "event_ms_per_call_warm", NULL));
	}
	json_t *base = json_object_get(rep, "baseline");
	if (pass && r->ms > 0) {
		strbuf_addf(out, "rate      %.2f TFLOP/s, %.1f GB/s\n", r->tflops, r->gbps);
		const char *berr = json_string_value(json_object_get(base, "error"));
		if (berr)
			strbuf_addf(out, "baseline  unavailable: %s (no speedups; the runner's bound only)\n", berr);
		json_t *cb = json_object_get(base, "cublaslt");
		if (cb)
			strbuf_addf(out, "cuBLASLt  %.4f ms (%.2f TFLOP/s, %s): speedup %.3fx\n",
				    num_at(cb, "median_ms", NULL), num_at(cb, "tflops", NULL),
				    json_string_value(json_object_get(cb, "algo")), r->speedup);
		else if (json_object_get(base, "cublaslt_error"))
			strbuf_addf(out, "cuBLASLt  unavailable: %s\n",
				    json_string_value(json_object_get(base, "cublaslt_error")));
		double copy = num_at(base, "copy_gbps", NULL), peak = num_at(base, "peak_tflops", NULL);
		json_t *lim = json_object_get(base, "limits");
		if (lim)
			strbuf_addf(out, "limits    %.0f GB/s, %.1f TFLOP/s (beyond either: implausible)%s\n",
				    num_at(lim, "gbps", NULL), num_at(lim, "tflops", NULL),
				    json_is_true(json_object_get(base, "cached")) ? "; baselines cached" : "");
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
