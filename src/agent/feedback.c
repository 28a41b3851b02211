/*
 * Debugging feedback for the model (see feedback.h). Everything here reads results that came
 * from untrusted places (compiler logs, runner reports, sanitizer output): every text is capped
 * and every JSON field is type-checked before use.
 */
#include "common/verdict.h"
#include "agent/feedback.h"
#include "common/paths.h"
#include "eval/policy.h"
#include "common/proc.h"
#include "common/module_run.h"
#include "util/fsutil.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void feedback_cap(struct strbuf *out, size_t from)
{
	if (out->len - from <= FEEDBACK_MAX)
		return;
	size_t cut = out->len - from - FEEDBACK_MAX;
	strbuf_setlen(out, from + FEEDBACK_MAX);
	strbuf_addf(out, "\n[... %zu more bytes not shown]\n", cut);
}

void feedback_policy(const struct policy_report *rep, struct strbuf *out)
{
	size_t from = out->len;
	int object = 0;
	for (size_t i = 0; i < rep->nr; i++)
		object |= policy_rule_is_object(rep->items[i].rule);
	strbuf_addstr(out, object ? "The policy check rejected the kernel's object code before "
				    "linking it:\n"
				  : "The policy check rejected the kernel before compiling it:\n");
	policy_format(rep, out);
	feedback_cap(out, from);
}

void feedback_compile(const struct build_result *br, const char *source, size_t len,
		      double deadline_s, struct strbuf *out)
{
	feedback_compile_file(br, source, len, deadline_s, "kernel.cu", out);
}

void feedback_compile_file(const struct build_result *br, const char *source, size_t len,
			   double deadline_s, const char *main_file, struct strbuf *out)
{
	size_t from = out->len;
	if (br->timed_out) {
		strbuf_addf(out, "The compile did not finish within its deadline of %.0f s: too many or "
				 "too deep template instantiations; simplify the kernel.\n",
			    deadline_s > 0 ? deadline_s : BUILD_DEFAULT_DEADLINE_S);
		return;
	}
	strbuf_addstr(out, "The kernel did not compile. The first error:\n");
	if (diag_format_first_error(&br->diags, source, len, main_file, out)) {
		/* no parsed error: the end of the log is the best there is */
		size_t n = br->log_len, keep = n > 3000 ? 3000 : n;
		strbuf_addf(out, "nvcc exited with status %d; the end of its output:\n", br->status);
		if (br->log)
			strbuf_add(out, br->log + n - keep, keep);
		strbuf_addch(out, '\n');
	} else if (br->diags.nerrors > 1) {
		strbuf_addf(out, "(%d errors in all; fix this one first, the others often follow from it)\n",
			    br->diags.nerrors);
	}
	feedback_cap(out, from);
}

static void add_value(struct strbuf *out, json_t *v)
{
	if (json_is_number(v))
		strbuf_addf(out, "%.9g", json_number_value(v));
	else if (json_is_string(v))
		strbuf_addstr(out, json_string_value(v));
	else
		strbuf_addstr(out, "?");
}

static void add_check(struct strbuf *out, json_t *c)
{
	json_t *where = json_object_get(c, "where");
	const char *dist = json_string_value(json_object_get(c, "dist"));
	const char *when = json_string_value(json_object_get(c, "when"));
	strbuf_addf(out, "Failing check: '%s' inputs, seed %lld%s%s:\n", dist ? dist : "?",
		    (long long)json_integer_value(json_object_get(c, "seed")), when ? ", " : "",
		    when ? when : "");
	if (json_is_string(where))
		strbuf_addf(out, "  %.1500s\n", json_string_value(where));
	/* a module's cases are the same for every candidate of a run: its checks say how far off
	 * an element is in words of a factor of about 3, never the truth's value, which a kernel
	 * could tabulate and replay (mrun_error_words) */
	int module = json_object_get(c, "case") != NULL;
	char words[64];
	json_t *mr = json_object_get(c, "max_err_over_tol");
	if (json_is_number(mr) && json_number_value(mr) > 0) {
		if (module)
			strbuf_addf(out, "  largest error: %s\n",
				    mrun_error_words(json_number_value(mr), words, sizeof(words)));
		else
			strbuf_addf(out, "  largest error: %.3g times the tolerance\n", json_number_value(mr));
	}
	json_t *tol = json_object_get(c, "tolerance");
	if (json_is_object(tol))
		strbuf_addf(out, "  tolerance: |got - want| <= eps_scale*scale + rtol*|want| + atol with "
				 "eps_scale %.3g, rtol %.3g, atol %.3g\n",
			    json_number_value(json_object_get(tol, "eps_scale")),
			    json_number_value(json_object_get(tol, "rtol")),
			    json_number_value(json_object_get(tol, "atol")));
	json_t *samples = json_object_get(c, "samples");
	if (json_is_array(samples) && json_array_size(samples)) {
		strbuf_addstr(out, module ? "  wrong elements (index: got, how far off):\n" :
					    "  wrong elements (index: got vs want, tolerance):\n");
		size_t i;
		json_t *s;
		json_array_foreach(samples, i, s) {
			if (i == 8)
				break;
			strbuf_addstr(out, "    [");
			json_t *idx = json_object_get(s, "index");
			if (json_is_array(idx)) {
				size_t j;
				json_t *x;
				json_array_foreach(idx, j, x) {
					if (j == 6)
						break;
					strbuf_addf(out, "%s%lld", j ? ", " : "", (long long)json_integer_value(x));
				}
			} else {
				add_value(out, idx);
			}
			strbuf_addstr(out, "]: got ");
			json_t *got = json_object_get(s, "got");
			if (json_is_string(got) && !strcmp(json_string_value(got), "nan"))
				strbuf_addstr(out, "NaN (never written, or computed NaN)");
			else
				add_value(out, got);
			if (module) {
				json_t *w = json_object_get(s, "want"), *tl = json_object_get(s, "tol");
				double r = json_is_number(got) && json_is_number(w) && json_is_number(tl) &&
						   json_number_value(tl) > 0 ?
					   fabs(json_number_value(got) - json_number_value(w)) / json_number_value(tl) :
					   NAN;
				strbuf_addf(out, ", %s\n", mrun_error_words(r, words, sizeof(words)));
				continue;
			}
			strbuf_addstr(out, " vs want ");
			add_value(out, json_object_get(s, "want"));
			strbuf_addstr(out, ", tol ");
			add_value(out, json_object_get(s, "tol"));
			strbuf_addch(out, '\n');
		}
	}
}

void feedback_eval(const struct eval_result *er, struct strbuf *out)
{
	if (eval_passed(er))
		return;
	size_t from = out->len;
	strbuf_addf(out, "The kernel compiled but failed its evaluation: verdict %s.\n", verdict_name(er->verdict));
	if (er->message && *er->message)
		strbuf_addf(out, "%.3000s\n", er->message);
	json_t *checks = json_object_get(er->report, "checks");
	if (json_is_array(checks)) {
		size_t i;
		json_t *c;
		json_array_foreach(checks, i, c)
			if (json_is_false(json_object_get(c, "ok"))) {
				add_check(out, c);
				break;
			}
	}
	if (er->verdict == VERDICT_TIMEOUT && er->last_phase &&
	    (!er->message || !strstr(er->message, er->last_phase)))
		strbuf_addf(out, "It was at this phase when the deadline passed: %s\n", er->last_phase);
	if (er->verdict == VERDICT_TIMEOUT)
		strbuf_addstr(out, "A kernel that never returns is usually waiting on a barrier that "
				   "never completes: an mbarrier's phase parity, or the bytes a TMA "
				   "barrier expects against those its copies deliver; producer and "
				   "consumer counts that differ; a cluster sync or __syncthreads some "
				   "threads never reach (an early return); setmaxnreg raising registers "
				   "while more than one CTA shares the SM (they are never freed); a loop "
				   "bound read from uninitialized memory.\n");
	if (er->verdict == VERDICT_PRECISION)
		strbuf_addstr(out, "The precision contract forbids the shortcut this takes (TF32 or "
				   "16-bit products, approximate math): compute in full fp32.\n");
	feedback_cap(out, from);
}

int feedback_memcheck_extract(const char *log, size_t len, struct strbuf *out)
{
	const char *p = log, *end = log + len;
	int records = 0, lines = 0;
	while (p < end && lines < 40) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *next = nl ? nl + 1 : end;
		if (n > 10 && !memcmp(p, "=========", 9)) {
			const char *t = p + 9;
			size_t tn = n - 9;
			while (tn && *t == ' ')
				t++, tn--;
			int indented = t - p > 10;
			int skip = tn == 0 || (tn >= 17 && !memcmp(t, "COMPUTE-SANITIZER", 17)) ||
				   (tn >= 10 && !memcmp(t, "Host Frame", 10)) ||
				   (tn >= 10 && !memcmp(t, "Saved host", 10));
			if (!skip) {
				if (!indented && !(tn >= 13 && !memcmp(t, "ERROR SUMMARY", 13)))
					records++;
				strbuf_addf(out, "%.*s%.*s\n", indented ? 4 : 0, "    ",
					    (int)(tn > 300 ? 300 : tn), t);
				lines++;
			}
		}
		p = next;
	}
	return records;
}

int feedback_memcheck(const char *runner, const struct task *t, const char *so_path,
		      double deadline_s, struct strbuf *out, char **err)
{
	char *san = paths_find_program("compute-sanitizer");
	if (!san)
		return 1;
	int rc = -1;
	char *dir = NULL, *task_path = NULL, *so_abs = realpath(so_path, NULL);
	struct strbuf sb = STRBUF_INIT, log = STRBUF_INIT;
	const char *tmp = getenv("TMPDIR");
	dir = xasprintf("%s/cutegen-memcheck-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!so_abs || !mkdtemp(dir)) {
		*err = xasprintf("cannot prepare a memcheck run of '%s'", so_path);
		goto out;
	}
	task_path = xasprintf("%s/task.json", dir);
	task_to_json(t, &sb);
	if (write_file_atomic(task_path, sb.buf, sb.len)) {
		*err = xasprintf("cannot write '%s'", task_path);
		goto out;
	}
	/* no --report-fd: the runner prints its report on stdout, which only the log keeps; no
	 * seccomp either (--no-confine): the sanitizer's code in the process needs its IPC */
	const char *argv[] = { san, "--tool", "memcheck", "--print-limit", "5", runner, "--task",
			       task_path, "--kernel", so_abs, "--quick", "--no-confine", NULL };
	struct child_process cp = CHILD_PROCESS_INIT;
	cp.argv = argv;
	cp.clear_env = 1;
	cp.dir = dir;
	log.cap = 256 << 10;
	cp.out = &log;
	cp.err = &log;
	cp.deadline_s = deadline_s > 0 ? deadline_s : 300;
	if (run_command(&cp)) {
		*err = xasprintf("compute-sanitizer: %s", cp.errmsg);
		goto out;
	}
	size_t from = out->len;
	strbuf_addstr(out, "compute-sanitizer memcheck on the same kernel says:\n");
	if (!feedback_memcheck_extract(log.buf, log.len, out)) {
		strbuf_setlen(out, from);
		strbuf_addf(out, "compute-sanitizer memcheck found no memory error%s.\n",
			    cp.timed_out ? " before its deadline" : "");
	}
	rc = 0;
out:
	if (dir && dir_exists(dir))
		remove_tree(dir);
	free(san);
	free(dir);
	free(task_path);
	free(so_abs);
	strbuf_release(&sb);
	strbuf_release(&log);
	return rc;
}
