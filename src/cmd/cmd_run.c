/*
 * `cutegen run TASK` and `cutegen resume RUN_DIR`: the agent loop on one task, with its model
 * configuration, budgets and run store set up here, its progress shown as a live status line
 * on a terminal (plain log lines otherwise), and a summary (or --json object) at the end with
 * where the time went. The loop itself is agent.c.
 */
#include "common/verdict.h"
#include "agent/agent.h"
#include "agent/builtin_policy.h"
#include "llm/llm_config.h"
#include "eval/eval.h"
#include "cmd/cutegen.h"
#include "llm/llm.h"
#include "common/paths.h"
#include "common/proc.h"
#include "store/store.h"
#include "common/task.h"
#include "common/task_module.h"
#include "eval/reference.h"
#include "util/fsutil.h"
#include "util/opt.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SEED_MAX ((size_t)1 << 20)

/* The options run and resume share; strings point into argv or the stored config. */
/* --iters not given: 20 nodes with a model, BUILTIN_ITERS with the builtin agent */
#define ITERS_UNSET INT_MIN /* the option parser takes no int below -INT_MAX */
#define ITERS_MODEL 20
#define BUILTIN_ITERS 64

struct run_opts {
	int iters, fix_attempts, profile_from_stage, quiet, json, no_memcheck, no_docs;
	int builtin; /* no model: the builtin policy proposes the kernels */
	int torch;   /* judge the best kernel once more against PyTorch eager and torch.compile */
	long max_tokens_total;
	double max_cost, max_wall, noise, compile_deadline, eval_deadline;
	int prompt_budget, device;
	const char *out, *seed, *seed_from, *recorded, *record, *prompts, *arch, *cache_dir;
};

struct ui {
	int tty, quiet, json;
	int status_shown;
	const char *phase;
	long tokens;
	int iters;
};

static void clear_status(struct ui *u)
{
	if (u->status_shown) {
		fputs("\r\033[K", stderr);
		u->status_shown = 0;
	}
}

static void show_status(struct ui *u, const struct agent_totals *t)
{
	if (!u->tty || u->quiet || u->json)
		return;
	char best[64] = "none yet";
	if (t->best_ms >= 0)
		snprintf(best, sizeof(best), "%.4g ms", t->best_ms);
	if (t->best_speedup > 0)
		snprintf(best + strlen(best), sizeof(best) - strlen(best), " %.2fx", t->best_speedup);
	/* of the walk's plan when it is shorter than the budget ("node 3/10", not 3/64) */
	int of = t->planned > 0 && t->planned < u->iters ? t->planned : u->iters;
	int k = t->nodes + 1 < of ? t->nodes + 1 : of; /* after the last node: N/N */
	fprintf(stderr, "\r\033[K[stage %d %s] node %d/%d %s | last %s | best %s | %ld tok",
		t->stage, t->stage_name ? t->stage_name : "", k, of,
		u->phase ? u->phase : "", t->last_verdict[0] ? t->last_verdict : "-", best,
		t->tokens_in + t->tokens_out + u->tokens);
	if (t->cost_usd > 0)
		fprintf(stderr, " | $%.3f", t->cost_usd);
	fflush(stderr);
	u->status_shown = 1;
}

static void on_event(void *ctx, const struct agent_event *ev)
{
	struct ui *u = ctx;
	const struct agent_totals *t = ev->totals;
	if (u->json && ev->kind != AGENT_EV_NOTE)
		return;
	switch (ev->kind) {
	case AGENT_EV_PHASE:
		u->phase = ev->text;
		u->tokens = 0;
		show_status(u, t);
		return;
	case AGENT_EV_TOKENS:
		u->tokens = ev->tokens;
		show_status(u, t);
		return;
	case AGENT_EV_STAGE:
		if (u->quiet)
			return;
		clear_status(u);
		fprintf(stderr, "== %s\n", ev->text);
		return;
	case AGENT_EV_INFO:
		if (u->quiet)
			return;
		/* fall through */
	case AGENT_EV_NOTE:
		clear_status(u);
		fprintf(stderr, "note: %s\n", ev->text);
		return;
	case AGENT_EV_NODE: {
		u->phase = NULL;
		u->tokens = 0;
		if (u->quiet)
			return;
		const struct store_node *n = ev->node;
		clear_status(u);
		fprintf(stderr, "node %-3ld stage %d %-8s %-14s", n->id, n->stage, n->kind, n->verdict);
		if (n->ms >= 0)
			fprintf(stderr, " %.4g ms", n->ms);
		if (n->speedup > 0)
			fprintf(stderr, " %.2fx", n->speedup);
		fprintf(stderr, " -> %s", n->outcome);
		if (verdict_parse(n->verdict) != VERDICT_PASS && n->message)
			fprintf(stderr, "  (%.100s)", n->message);
		fprintf(stderr, "  [llm %.1fs compile %.1fs eval %.1fs", n->llm_s > 0 ? n->llm_s : 0,
			n->compile_s > 0 ? n->compile_s : 0, n->eval_s > 0 ? n->eval_s : 0);
		if (n->tokens_in + n->tokens_out)
			fprintf(stderr, ", %ld+%ld tok", n->tokens_in, n->tokens_out);
		fprintf(stderr, "]\n");
		show_status(u, t);
		return;
	}
	}
}

static void on_signal(int sig)
{
	(void)sig;
	if (agent_interrupted) { /* a second ^C: stop now, the kept reference process with us */
		reference_kill_all();
		_exit(EXIT_INTERRUPTED);
	}
	agent_interrupted = 1;
}

static const char *run_status(enum agent_stop s)
{
	switch (s) {
	case AGENT_STOP_DONE: return "done";
	case AGENT_STOP_ITERS: case AGENT_STOP_TOKENS: case AGENT_STOP_COST: case AGENT_STOP_WALL:
	case AGENT_STOP_NO_MODEL:
		return "stopped";
	case AGENT_STOP_INTERRUPTED: return "interrupted";
	default: return "failed";
	}
}

static json_t *budgets_json(const struct run_opts *r)
{
	return json_pack("{s:i, s:i, s:I, s:f, s:f}", "iters", r->iters, "fix_attempts", r->fix_attempts,
			 "max_tokens_total", (json_int_t)r->max_tokens_total, "max_cost", r->max_cost,
			 "max_wall", r->max_wall);
}

static void jset_str(json_t *o, const char *k, const char *v)
{
	if (v)
		json_object_set_new(o, k, json_string(v));
}

static json_t *agent_opts_json(const struct run_opts *r);

/* What a resume needs to run the same loop again (never a key: keys stay in the environment). */
static json_t *config_json(const struct llm_config *c, const struct run_opts *r)
{
	if (r->builtin)
		return json_pack("{s:{s:s}, s:o}", "llm", "backend", "builtin", "agent",
				 agent_opts_json(r));
	json_t *l = c ? json_object() : NULL;
	if (c) {
		jset_str(l, "backend", c->backend);
		jset_str(l, "model", c->model);
		jset_str(l, "base_url", c->base_url);
		jset_str(l, "api_key_env", c->api_key_env);
		jset_str(l, "llm_cmd", c->llm_cmd);
		jset_str(l, "replay_path", c->replay_path);
		jset_str(l, "reasoning_effort", c->reasoning_effort);
		if (c->temperature >= 0)
			json_object_set_new(l, "temperature", json_real(c->temperature));
		if (c->max_tokens > 0)
			json_object_set_new(l, "max_tokens", json_integer(c->max_tokens));
	}
	return json_pack("{s:o?, s:o}", "llm", c ? l : NULL, "agent", agent_opts_json(r));
}

static json_t *agent_opts_json(const struct run_opts *r)
{
	json_t *a = json_object();
	jset_str(a, "prompts_dir", r->prompts);
	jset_str(a, "recorded_evals", r->recorded);
	jset_str(a, "record_evals", r->record);
	jset_str(a, "arch", r->arch);
	jset_str(a, "cache_dir", r->cache_dir);
	json_object_set_new(a, "profile_from_stage", json_integer(r->profile_from_stage));
	json_object_set_new(a, "noise", json_real(r->noise));
	json_object_set_new(a, "prompt_budget", json_integer(r->prompt_budget));
	json_object_set_new(a, "no_memcheck", json_boolean(r->no_memcheck));
	if (r->torch)
		json_object_set_new(a, "torch", json_true());
	json_object_set_new(a, "device", json_integer(r->device));
	json_object_set_new(a, "compile_deadline", json_real(r->compile_deadline));
	json_object_set_new(a, "eval_deadline", json_real(r->eval_deadline));
	return a;
}

/*
 * Where the time went: the parts add up to the total. compile is the compile phase of each
 * node (policy check, cache lookup, nvcc); compile (ahead, parallel) the wall of the compiles
 * a builtin walk makes for a whole stage at once; evaluate the evaluator's wall here (with
 * --recorded-evals, reading the reports; the runner's own time when they were made is given
 * beside it); cutegen what is left (prompts, store, retrieval), never below 0.
 */
static void print_time(const struct agent_totals *tt, int recorded)
{
	double parts = tt->llm_s + tt->compile_s + tt->compile_ahead_s + tt->eval_s + tt->profile_s;
	double own = tt->wall_s > parts ? tt->wall_s - parts : 0;
#define PART(name, x) printf("%s %.1f s (%.0f%%)", name, (x), (x) / tt->wall_s * 100)
	printf("time      %.1f s: ", tt->wall_s);
	PART("llm", tt->llm_s);
	PART(", compile", tt->compile_s);
	if (tt->compile_ahead_s > 0)
		PART(", compile (ahead, parallel)", tt->compile_ahead_s);
	PART(", evaluate", tt->eval_s);
	if (recorded && tt->evaluator_s > 0)
		printf(" [recorded evaluations: the runner took %.1f s when they were made]",
		       tt->evaluator_s);
	PART(", profile", tt->profile_s);
	PART(", cutegen", own);
	printf("\n");
#undef PART
	if (tt->cut_s > 0)
		printf("          (%.1f s of it in work an environment error cut short: no node holds "
		       "it, the run does)\n", tt->cut_s);
}

/* The PyTorch figures of --torch in the closing lines (tj: agent_judge_torch's object). */
static void print_torch(json_t *tj)
{
	double eager = json_number_value(json_object_get(tj, "eager_ms"));
	double cms = json_number_value(json_object_get(tj, "compile_ms"));
	const char *e = json_string_value(json_object_get(tj, "error"));
	const char *ce = json_string_value(json_object_get(tj, "compile_error"));
	const char *ver = json_string_value(json_object_get(tj, "torch"));
	const char *mode = json_string_value(json_object_get(tj, "compile_mode"));
	if (eager > 0)
		printf("PyTorch   eager %.4g ms (torch %s): %.2fx\n", eager, ver ? ver : "?",
		       json_number_value(json_object_get(tj, "speedup_vs_torch")));
	else
		printf("PyTorch   no eager figure: %.300s\n", e ? e : "none given");
	if (cms > 0)
		printf("PyTorch   torch.compile %.4g ms (%s): %.2fx\n", cms, mode ? mode : "?",
		       json_number_value(json_object_get(tj, "speedup_vs_torch_compile")));
	else if (eager > 0 || ce)
		printf("PyTorch   torch.compile failed: %.300s\n", ce ? ce : "no time given");
	if (e || !(cms > 0))
		printf("          (the run's result stands; these figures are only a comparison)\n");
}

/* print_summary ran: a --json failure after it needs no object of its own (json_failure) */
static int summary_printed;

static void print_summary(const char *run_dir, const char *task_name, const char *prec,
			  struct agent *a, struct store *s, const struct llm *m, int builtin, int json,
			  int quiet, int recorded, json_t *torch)
{
	summary_printed = 1;
	const struct agent_totals *tt = agent_totals(a);
	double accounted = tt->llm_s + tt->compile_s + tt->compile_ahead_s + tt->eval_s + tt->profile_s;
	double overhead = tt->wall_s > accounted ? tt->wall_s - accounted : 0;
	char *best_path = xasprintf("%s/best.cu", run_dir);
	if (json) {
		json_t *o = json_object();
		json_object_set_new(o, "run_dir", json_string(run_dir));
		json_object_set_new(o, "store", json_string(store_path(s)));
		json_object_set_new(o, "task", json_string(task_name));
		json_object_set_new(o, "precision", json_string(prec));
		if (m)
			json_object_set_new(o, "llm", json_pack("{s:s, s:s}", "backend",
							       llm_config_of(m)->backend, "model",
							       llm_config_of(m)->model));
		else
			json_object_set_new(o, "llm", json_pack("{s:s}", "backend", builtin ? "builtin"
										   : "none"));
		json_object_set_new(o, "status", json_string(run_status(agent_stop(a))));
		json_object_set_new(o, "stop", json_string(agent_stop_name(agent_stop(a))));
		json_object_set_new(o, "stop_reason", json_string(agent_stop_message(a)));
		json_object_set_new(o, "nodes", json_integer(tt->nodes));
		json_object_set_new(o, "stage", json_integer(tt->stage));
		json_object_set_new(o, "compiles", json_integer(tt->compiles));
		json_object_set_new(o, "compile_cache_hits", json_integer(tt->cache_hits));
		json_object_set_new(o, "evaluations", json_integer(tt->evals));
		if (tt->best_node > 0) {
			json_t *b = json_object();
			json_object_set_new(b, "node", json_integer(tt->best_node));
			json_object_set_new(b, "ms", tt->best_ms >= 0 ? json_real(tt->best_ms) : json_null());
			json_object_set_new(b, "speedup", tt->best_speedup > 0 ? json_real(tt->best_speedup)
									    : json_null());
			json_object_set_new(b, "roofline_fraction", tt->best_roof > 0 ? json_real(tt->best_roof)
										     : json_null());
			json_object_set_new(b, "source", json_string(best_path));
			json_object_set_new(o, "best", b);
		} else {
			json_object_set_new(o, "best", json_null());
		}
		if (torch)
			json_object_set(o, "torch", torch);
		json_object_set_new(o, "tokens_in", json_integer(tt->tokens_in));
		json_object_set_new(o, "tokens_out", json_integer(tt->tokens_out));
		json_object_set_new(o, "tokens_cached", json_integer(store_cached_tokens(s)));
		json_object_set_new(o, "cost_usd", json_real(tt->cost_usd));
		json_object_set_new(o, "time", json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}",
							 "total_s", tt->wall_s, "llm_s", tt->llm_s,
							 "compile_s", tt->compile_s, "compile_ahead_s",
							 tt->compile_ahead_s, "eval_s", tt->eval_s,
							 "evaluator_s", tt->evaluator_s, "profile_s",
							 tt->profile_s, "overhead_s", overhead,
							 "cut_s", tt->cut_s));
		char *txt = json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS);
		puts(txt);
		free(txt);
		json_decref(o);
		free(best_path);
		return;
	}
	printf("run       %s (%s)\n", run_dir, task_name);
	printf("stopped   %s: %s\n", run_status(agent_stop(a)), agent_stop_message(a));
	if (tt->best_node > 0) {
		printf("best      node %ld", tt->best_node);
		if (tt->best_ms >= 0)
			printf(", %.4g ms", tt->best_ms);
		if (tt->best_speedup > 0)
			printf(", %.2fx the baseline", tt->best_speedup);
		if (tt->best_roof > 0)
			printf(", %.0f%% of the roofline", tt->best_roof * 100);
		printf(" (%s contract) -> %s\n", prec, best_path);
	} else {
		printf("best      no correct kernel\n");
	}
	if (torch)
		print_torch(torch);
	printf("nodes     %d (%d compiles, %d compile-cache hits, %d evaluations)\n", tt->nodes,
	       tt->compiles, tt->cache_hits, tt->evals);
	printf("model     %ld tokens in, %ld out", tt->tokens_in, tt->tokens_out);
	long cached = store_cached_tokens(s);
	if (cached > 0)
		printf(" (%ld of the input from the prompt cache)", cached);
	if (tt->cost_usd > 0)
		printf(", $%.4f", tt->cost_usd);
	printf("\n");
	if (!quiet && tt->wall_s > 0)
		print_time(tt, recorded);
	free(best_path);
}

/*
 * The exit status after a function of the run store failed (its message printed): the store's
 * kind of failure (store_error_code: 4 when run.db could not be written or read, 3 when it is
 * damaged), with a hint when another program held it locked or the disk was full. resumable:
 * the run row is there, so `cutegen resume` can continue once the cause is gone.
 */
static int store_failure(struct store *s, const char *run_dir, int resumable)
{
	char *then = resumable ? xasprintf("'cutegen resume %s'", run_dir)
			       : xstrdup("run the command again");
	if (store_disk_full(s))
		fprintf(stderr, "hint: the disk is full; free some space, then %s\n", then);
	else if (store_busy(s))
		fprintf(stderr, "hint: another program holds '%s' locked (a sqlite3 shell in a "
			"transaction, a backup?); end it, then %s\n", store_path(s), then);
	free(then);
	int c = store_error_code(s);
	return exit_status_for(c ? c : CG_IO);
}

/*
 * With --json, a command that fails before its summary still prints one object, so that a
 * caller reading stdout learns why: {"run_dir", "status": "error", "error", "exit_code"}.
 * Returns rc.
 */
static int json_failure(int json, const char *run_dir, int rc)
{
	if (!json || !rc || summary_printed)
		return rc;
	json_t *o = json_pack("{s:s?, s:s, s:s, s:i}", "run_dir", run_dir, "status", "error",
			      "error", error_last(), "exit_code", rc);
	char *txt = o ? json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
	if (txt)
		puts(txt);
	free(txt);
	json_decref(o);
	return rc;
}

static int exit_code_for(struct agent *a, int llm_rc)
{
	switch (agent_stop(a)) {
	case AGENT_STOP_MODEL_ERROR: return llm_rc ? llm_rc : EXIT_EXTERNAL;
	case AGENT_STOP_ENV_ERROR: /* a module's reference may say whose fault it was */
		return agent_stop_code(a) ? exit_status_for(agent_stop_code(a)) : EXIT_ENV;
	case AGENT_STOP_INTERRUPTED: return EXIT_INTERRUPTED;
	default: return agent_totals(a)->best_node > 0 ? EXIT_OK : EXIT_VERDICT;
	}
}

/*
 * Runs the loop on an open store; shared by run and resume. t is the task, or NULL for a module
 * that does not lower (md, then judged through the reference process); module_file is the
 * module a run comes from (lowered or not), for the prompts.
 */
static int drive(const char *run_dir, const struct task *t, const struct module_desc *md,
		 struct store *s, struct llm *m, const struct run_opts *r, const char *seed_src,
		 int resume, const char *module_file)
{
	if (!t && !md)
		BUG("drive: neither a task nor a module");
	const char *task_name = t ? t->name : md->name;
	const char *prec = t ? precision_name(t->precision) : md->precision ? md->precision : "none";
	struct strbuf msrc = STRBUF_INIT; /* a module's source, for the prompts (when readable) */
	if (module_file && strbuf_read_file(&msrc, module_file, 1 << 20))
		strbuf_release(&msrc);
	struct ui u = { 0 };
	u.tty = isatty(2);
	u.quiet = r->quiet;
	u.json = r->json;
	u.iters = r->iters;
	struct agent_opts o = AGENT_OPTS_INIT;
	o.iters = r->iters;
	o.fix_attempts = r->fix_attempts;
	o.max_tokens_total = r->max_tokens_total;
	o.max_cost = r->max_cost;
	o.max_wall = r->max_wall;
	o.profile_from_stage = r->profile_from_stage;
	o.noise = r->noise;
	o.prompt_budget = (size_t)r->prompt_budget;
	o.prompts_dir = r->prompts;
	o.recorded_evals = r->recorded;
	o.record_evals = r->record;
	o.seed_source = seed_src;
	o.run_dir = run_dir;
	o.module_file = module_file;
	o.module = md; /* one that does not lower: the agent judges it through its reference */
	o.module_source = msrc.len ? msrc.buf : NULL;
	o.no_memcheck = r->no_memcheck;
	o.no_docs = r->no_docs;
	o.builtin = r->builtin;
	o.builtin_dir = getenv("CUTEGEN_BUILTIN_DIR");
	if (o.builtin_dir && !*o.builtin_dir)
		o.builtin_dir = NULL;
	o.build.arch = r->arch;
	o.build.cache_dir = r->cache_dir;
	o.build.deadline_s = r->compile_deadline;
	o.eval.device = r->device;
	o.eval.deadline_s = r->eval_deadline;
	o.on_event = on_event;
	o.ctx = &u;

	char *err = NULL;
	int rc = EXIT_INTERNAL;
	json_t *torch = NULL;
	struct agent *a = agent_new(t, s, m, &o, &err);
	if (!a) {
		error("%s", err);
		rc = EXIT_INPUT;
		goto out;
	}
	if (resume && agent_restore(a, &err)) {
		error("%s", err);
		/* a node the store holds that cannot be replayed: the store is damaged */
		rc = store_error_code(s) ? store_failure(s, run_dir, 1) : EXIT_INPUT;
		goto out;
	}
	if (!r->quiet && !r->json)
		fprintf(stderr, "%s %s -> %s\n", resume ? "resuming" : "run", task_name, run_dir);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	int lr = agent_run(a, &err);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	clear_status(&u);
	if (lr) {
		error("%s", err);
		/* a store that could not be written is not a bug: every node that committed is
		 * kept, and resume goes on once the cause (a full disk, a lock) is gone */
		if (store_error_code(s))
			rc = store_failure(s, run_dir, 1);
		char *ferr = NULL;
		store_run_finish(s, "failed", err, agent_totals(a)->best_node, &ferr);
		free(ferr);
		goto out;
	}
	char *ferr = NULL;
	if (r->torch && agent_totals(a)->best_node > 0 && agent_stop(a) != AGENT_STOP_INTERRUPTED) {
		torch = agent_judge_torch(a);
		char *tjs = torch ? json_dumps(torch, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
		if (tjs && store_run_set_torch(s, tjs, &ferr)) {
			error("%s (the PyTorch figures are printed below only)", ferr);
			free(ferr);
			ferr = NULL;
		}
		free(tjs);
	} else if (r->torch && !r->quiet && !r->json) {
		fprintf(stderr, "note: --torch: no correct kernel to compare with PyTorch\n");
	}
	if (store_run_finish(s, run_status(agent_stop(a)), agent_stop_message(a),
			     agent_totals(a)->best_node, &ferr)) {
		error("%s", ferr);
		free(ferr);
		rc = store_failure(s, run_dir, 1);
		goto out;
	}
	print_summary(run_dir, task_name, prec, a, s, m, r->builtin, r->json, r->quiet,
		      r->recorded != NULL, torch);
	if (agent_stop(a) == AGENT_STOP_MODEL_ERROR || agent_stop(a) == AGENT_STOP_ENV_ERROR)
		error("%s", agent_stop_message(a));
	rc = exit_code_for(a, agent_stop(a) == AGENT_STOP_MODEL_ERROR ? EXIT_EXTERNAL : 0);
out:
	free(err);
	if (torch)
		json_decref(torch);
	agent_free(a);
	strbuf_release(&msrc);
	return rc;
}

static int parse_opts(int argc, char **argv, struct run_opts *r, struct llm_flags *lf, int *np,
		      const char *cmd)
{
	struct opt opts[LLM_FLAGS_MAX + 32];
	int n = llm_flags_opts(lf, opts);
	double max_tokens_total = -1;
	struct opt own[] = {
		{ "iters", 0, OPT_INT_POS, &r->iters },
		{ "fix-attempts", 0, OPT_INT_NONNEG, &r->fix_attempts },
		{ "max-tokens-total", 0, OPT_DOUBLE_NONNEG, &max_tokens_total },
		{ "max-cost", 0, OPT_DOUBLE_NONNEG, &r->max_cost },
		{ "max-wall", 0, OPT_DOUBLE_NONNEG, &r->max_wall },
		{ "out", 'o', OPT_STRING, &r->out },
		{ "profile-from-stage", 0, OPT_INT, &r->profile_from_stage },
		{ "quiet", 'q', OPT_BOOL, &r->quiet },
		{ "json", 0, OPT_BOOL, &r->json },
		{ "seed-kernel", 0, OPT_STRING, &r->seed },
		{ "seed", 0, OPT_STRING, &r->seed_from },
		{ "recorded-evals", 0, OPT_STRING, &r->recorded },
		{ "record-evals", 0, OPT_STRING, &r->record },
		{ "prompts", 0, OPT_STRING, &r->prompts },
		{ "prompt-budget", 0, OPT_INT_NONNEG, &r->prompt_budget },
		{ "noise", 0, OPT_DOUBLE, &r->noise },
		{ "arch", 0, OPT_STRING, &r->arch },
		{ "cache-dir", 0, OPT_STRING, &r->cache_dir },
		{ "device", 0, OPT_INT_NONNEG, &r->device },
		{ "compile-deadline", 0, OPT_DOUBLE_NONNEG, &r->compile_deadline },
		{ "deadline", 0, OPT_DOUBLE_NONNEG, &r->eval_deadline },
		{ "no-memcheck", 0, OPT_BOOL, &r->no_memcheck },
		{ "no-docs", 0, OPT_BOOL, &r->no_docs },
		{ "torch", 0, OPT_BOOL, &r->torch },
	};
	for (size_t i = 0; i < ARRAY_SIZE(own); i++)
		opts[n++] = own[i];
	char err[256];
	if (opt_parse(argc, argv, opts, n, np, err, sizeof(err))) {
		error("%s; see 'cutegen help %s'", err, cmd);
		return EXIT_USAGE;
	}
	if (max_tokens_total >= 0)
		r->max_tokens_total = (long)max_tokens_total;
	if (r->noise < 0 || r->noise > 1) {
		error("option '--noise' must be a fraction from 0 to 1, 0.02 for 2%% (got %g)",
		      r->noise);
		return EXIT_USAGE;
	}
	if (check_arch_option(r->arch))
		return EXIT_USAGE;
	if (r->profile_from_stage < -1) {
		error("option '--profile-from-stage' must be a stage number, or -1 for never (got %d)",
		      r->profile_from_stage);
		return EXIT_USAGE;
	}
	return 0;
}

static void run_opts_defaults(struct run_opts *r)
{
	memset(r, 0, sizeof(*r));
	r->iters = ITERS_UNSET;
	r->fix_attempts = 3;
	r->profile_from_stage = -1;
	r->noise = 0.02;
	r->max_tokens_total = 0;
}

/*
 * The model backend, or NULL with *rc = 0 when none is configured. Whether one is configured is
 * judged on the settings as given, before the defaults fill them in: a key variable filled in by
 * the defaults is not one the user asked for, so a keyless server of one's own (OPENAI_BASE_URL,
 * --base-url) counts. A backend named explicitly (--backend openai) is opened whatever the
 * case, so a missing key is an error that says what to set rather than a silent fallback.
 */
static struct llm *open_model(struct llm_config *cfg, int *rc)
{
	char *err = NULL;
	int named = cfg->backend != NULL;
	int configured = llm_configured(cfg);
	struct llm_config resolved;
	llm_config_copy(&resolved, cfg);
	int r = llm_config_resolve(&resolved, &err);
	named = named && strcmp(resolved.backend, "builtin");
	llm_config_release(&resolved);
	if (r) {
		error("%s", err);
		free(err);
		*rc = exit_status_for(llm_error_code(r));
		return NULL;
	}
	*rc = 0;
	if (!configured && !named)
		return NULL;
	struct llm *m = llm_open(cfg, &r, &err);
	if (!m) {
		error("%s", err);
		free(err);
		*rc = exit_status_for(llm_error_code(r));
	}
	return m;
}

/*
 * Applies the LLM flags over the settings loaded (lrc: what loading them returned) and opens
 * the backend they name: 0 with *m (NULL when no model is configured) and *builtin set when
 * the backend is the builtin agent, or the exit status after printing the error.
 */
static int open_backend(const struct llm_flags *lf, struct llm_config *cfg, int lrc, char **err,
			struct llm **m, int *builtin)
{
	if (!lrc)
		lrc = llm_flags_apply(lf, cfg, err);
	if (lrc) {
		error("%s", *err);
		return exit_status_for(llm_error_code(lrc));
	}
	*builtin = cfg->backend && !strcmp(cfg->backend, "builtin");
	int rc = 0;
	if (!*builtin)
		*m = open_model(cfg, &rc);
	return rc;
}

static char *default_run_dir(const char *task_name)
{
	char stamp[32];
	time_t now = time(NULL);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", localtime(&now));
	char *name = xstrdup(task_name ? task_name : "task");
	for (char *c = name; *c; c++)
		if (*c == '/' || *c == ' ')
			*c = '_';
	char *d = xasprintf("runs/%s-%s", name, stamp);
	free(name);
	return d;
}

/* The task's builtin family, loaded before a run directory is made; -1 after an error. */
static int open_builtin(const struct task *t, const struct run_opts *r, const char *what,
			struct builtin_space *sp)
{
	char *err = NULL;
	const char *dir = getenv("CUTEGEN_BUILTIN_DIR");
	if (builtin_space_for(t, r->arch, dir && *dir ? dir : NULL, sp, &err)) {
		error("%s%s", what, err);
		free(err);
		return -1;
	}
	return 0;
}

static int check_builtin(const struct task *t, const struct run_opts *r)
{
	struct builtin_space sp;
	if (open_builtin(t, r, "", &sp))
		return -1;
	builtin_space_release(&sp);
	return 0;
}

/* --seed builtin: the builtin family's start kernel is the seed a model improves on. */
static int seed_builtin(const struct task *t, const struct run_opts *r, struct strbuf *out)
{
	struct builtin_space sp;
	if (open_builtin(t, r, "--seed builtin: ", &sp))
		return -1;
	struct builtin_config cfg;
	memcpy(cfg.v, sp.start, sizeof(cfg.v));
	builtin_render(&sp, t, &cfg, out);
	builtin_space_release(&sp);
	return 0;
}

/*
 * Before anything is compiled: the run evaluates every kernel on a GPU, so a machine without
 * one (or without device --device) is said at once, not after the compiles (--recorded-evals
 * stands in for the GPU and needs none).
 */
static int check_device(const struct run_opts *r)
{
	if (r->recorded)
		return 0;
	char *runner = paths_runner(), *err = NULL;
	if (!runner) {
		error("cutegen-runner not found: build it with 'make' (or set CUTEGEN_RUNNER)");
		return EXIT_ENV;
	}
	json_t *j = eval_list_devices(runner, 1, &err);
	free(runner);
	if (!j) {
		error("cannot list the GPUs: %s; 'cutegen doctor' checks the setup", err);
		free(err);
		return EXIT_ENV;
	}
	int n = (int)json_array_size(json_object_get(j, "devices")), rc = 0;
	const char *why = json_string_value(json_object_get(j, "error"));
	if (!n) {
		error("no CUDA device%s%s%s: a run evaluates every kernel on a GPU ('cutegen doctor' "
		      "checks the setup); 'cutegen build' compiles without one, and --recorded-evals "
		      "DIR stands in for the GPU", why ? " (" : "", why ? why : "", why ? ")" : "");
		rc = EXIT_ENV;
	} else if (r->device >= n) {
		error("no CUDA device %d: this machine has %d (give --device 0 to %d)", r->device, n,
		      n - 1);
		rc = EXIT_ENV;
	}
	json_decref(j);
	return rc;
}

int cmd_run(int argc, char **argv)
{
	struct run_opts r;
	struct llm_flags lf;
	int np = 0;
	run_opts_defaults(&r);
	int prc = parse_opts(argc, argv, &r, &lf, &np, "run");
	if (prc)
		return prc;
	if (np != 1) {
		error("run needs one task (got %d): usage: cutegen run TASK [options]; "
		      "'cutegen tasks' lists the built-in ones", np);
		return EXIT_USAGE;
	}
	if (!r.recorded)
		r.recorded = getenv("CUTEGEN_RECORDED_EVALS");
	if (r.recorded && !*r.recorded)
		r.recorded = NULL;

	int rc = EXIT_INTERNAL;
	char *err = NULL, *run_dir = NULL;
	struct strbuf seed = STRBUF_INIT, sb = STRBUF_INIT;
	struct llm_config cfg;
	struct llm *m = NULL;
	struct store *s = NULL;
	json_t *cj = NULL, *bj = NULL;
	llm_config_init(&cfg);
	struct task *t = NULL;
	struct module_desc *md = NULL;
	int trc = task_resolve(argv[1], &t, &md, &err);
	if (trc) {
		error("%s", err);
		rc = exit_status_for(trc);
		goto out;
	}
	if (r.seed && r.seed_from) {
		error("give either --seed builtin or --seed-kernel FILE, not both");
		rc = EXIT_USAGE;
		goto out;
	}
	if (r.seed_from && strcmp(r.seed_from, "builtin")) {
		r.seed = r.seed_from; /* --seed FILE is --seed-kernel FILE */
		r.seed_from = NULL;
	}
	if (r.seed) {
		int sr = strbuf_read_file(&seed, r.seed, SEED_MAX);
		if (sr) {
			error(sr == CG_INPUT_TOOBIG ? "seed kernel '%s' is larger than 1 MiB" : "cannot read seed kernel '%s'",
			      r.seed);
			rc = EXIT_INPUT;
			goto out;
		}
	}
	rc = open_backend(&lf, &cfg, config_load_llm(&cfg, &err), &err, &m, &r.builtin);
	if (rc)
		goto out;
	if (!m && !r.seed && !r.seed_from && !r.builtin) {
		r.builtin = 1;
		if (!r.quiet && !r.json)
			fprintf(stderr, "note: no model configured (OPENAI_API_KEY, ANTHROPIC_API_KEY, "
				"--backend cmd/replay): the builtin agent tunes cutegen's own CuTe "
				"kernels; 'cutegen llm' shows the backends\n");
	}
	if (!t && (r.builtin || r.seed_from)) {
		/* a module that is no built-in op has no kernel family: a run needs a model */
		error("module '%s' is not one of cutegen's built-in ops (%s): the builtin agent has "
		      "no kernel family for it, so a run needs a model (OPENAI_API_KEY, "
		      "ANTHROPIC_API_KEY or --backend; 'cutegen llm' shows them)%s",
		      argv[1], md->lowered_why ? md->lowered_why : "not lowered",
		      r.seed_from ? "; --seed builtin has no start kernel for it either: give "
				    "--seed-kernel FILE or none" : "");
		rc = r.seed_from && !r.builtin ? EXIT_USAGE : EXIT_ENV;
		goto out;
	}
	if (!t && !r.quiet && !r.json)
		fprintf(stderr, "note: module '%s' is no built-in op (%s): each kernel is judged "
			"through its reference process (the module's python)\n", argv[1],
			md->lowered_why ? md->lowered_why : "not lowered");
	if (t && md && !r.quiet && !r.json)
		fprintf(stderr, "note: module '%s' is judged as the built-in %s task '%s' (%s)\n", argv[1],
			op_name(t->op), t->name, md->lowered_why ? md->lowered_why : "lowered");
	if (r.builtin && (r.seed || r.seed_from)) {
		error("the builtin agent starts from its own kernel family: --seed and --seed-kernel "
		      "are for runs with a model");
		rc = EXIT_USAGE;
		goto out;
	}
	if (r.builtin && check_builtin(t, &r)) { /* t is set: a module without one was refused */
		rc = EXIT_INPUT;
		goto out;
	}
	if (r.seed_from && seed_builtin(t, &r, &seed)) {
		rc = EXIT_INPUT;
		goto out;
	}
	if ((rc = check_device(&r)))
		goto out;
	rc = EXIT_INTERNAL;
	if (!m && !r.builtin && !r.quiet && !r.json)
		fprintf(stderr, "note: no model configured: judging the seed kernel only\n");
	if (r.iters == ITERS_UNSET)
		r.iters = r.builtin ? BUILTIN_ITERS : ITERS_MODEL;
	run_dir = r.out ? xstrdup(r.out) : default_run_dir(t ? t->name : md->name);
	/* takes the run's lock, held to the end (store_close); refuses a directory that holds a
	 * run, or files of the user's, before anything is written there */
	s = store_open(run_dir, STORE_CREATE, &err);
	if (!s) {
		error("%s", err);
		rc = EXIT_INPUT;
		goto out;
	}
	/* a module that does not lower stores its description as the run's task: resume and
	   export describe the file again (its tensors as they are now) */
	if (t)
		task_to_json(t, &sb);
	else
		module_desc_to_json(md, &sb);
	cj = config_json(m ? llm_config_of(m) : NULL, &r);
	if (md) { /* a module run: which file, judged as which built-in op (null: none) */
		json_object_set_new(cj, "module", json_string(md->file));
		json_object_set_new(cj, "lowered_to", t ? json_string(op_name(t->op)) : json_null());
	}
	bj = budgets_json(&r);
	char *cjs = json_dumps(cj, JSON_COMPACT | JSON_SORT_KEYS);
	char *bjs = json_dumps(bj, JSON_COMPACT | JSON_SORT_KEYS);
	struct store_run run = { 0 };
	run.task_name = t ? t->name : md->name;
	run.task_json = sb.buf;
	run.config_json = cjs;
	run.budgets_json = bjs;
	run.cutegen_version = CUTEGEN_VERSION;
	int br = store_run_begin(s, &run, &err);
	free(cjs);
	free(bjs);
	if (br) {
		error("%s", err);
		rc = store_failure(s, run_dir, 0);
		goto out;
	}
	rc = drive(run_dir, t, md, s, m, &r, r.seed || r.seed_from ? seed.buf : NULL, 0,
		   md ? md->file : NULL);
out:
	json_failure(r.json, run_dir, rc);
	free(err);
	free(run_dir);
	strbuf_release(&seed);
	strbuf_release(&sb);
	if (cj)
		json_decref(cj);
	if (bj)
		json_decref(bj);
	llm_close(m);
	llm_config_release(&cfg);
	store_close(s);
	task_free(t);
	module_desc_free(md);
	return rc;
}

static const char *jstr(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* Fills what the command line left unset from the stored configuration. */
static void restore_opts(struct run_opts *r, const struct run_opts *given, json_t *agent,
			 json_t *budgets)
{
#define KEEP_STR(f, key) if (!given->f) r->f = jstr(agent, key)
	KEEP_STR(prompts, "prompts_dir");
	KEEP_STR(recorded, "recorded_evals");
	KEEP_STR(record, "record_evals");
	KEEP_STR(arch, "arch");
	KEEP_STR(cache_dir, "cache_dir");
#undef KEEP_STR
	json_t *v;
#define KEEP_NUM(f, obj, key, unset) \
	if (given->f == (unset) && json_is_number(v = json_object_get(obj, key))) \
		r->f = json_number_value(v)
	KEEP_NUM(profile_from_stage, agent, "profile_from_stage", -1);
	KEEP_NUM(noise, agent, "noise", 0.02);
	KEEP_NUM(prompt_budget, agent, "prompt_budget", 0);
	KEEP_NUM(device, agent, "device", 0);
	KEEP_NUM(compile_deadline, agent, "compile_deadline", 0);
	KEEP_NUM(eval_deadline, agent, "eval_deadline", 0);
	KEEP_NUM(iters, budgets, "iters", ITERS_UNSET);
	KEEP_NUM(fix_attempts, budgets, "fix_attempts", 3);
	KEEP_NUM(max_tokens_total, budgets, "max_tokens_total", 0);
	KEEP_NUM(max_cost, budgets, "max_cost", 0);
	KEEP_NUM(max_wall, budgets, "max_wall", 0);
#undef KEEP_NUM
	if (!given->no_memcheck && json_is_true(json_object_get(agent, "no_memcheck")))
		r->no_memcheck = 1;
	if (!given->torch && json_is_true(json_object_get(agent, "torch")))
		r->torch = 1;
}

int cmd_resume(int argc, char **argv)
{
	struct run_opts r, given;
	struct llm_flags lf;
	int np = 0;
	run_opts_defaults(&r);
	int prc = parse_opts(argc, argv, &r, &lf, &np, "resume");
	if (prc)
		return prc;
	if (np != 1) {
		error("resume needs one run directory (got %d): usage: cutegen resume RUN_DIR", np);
		return EXIT_USAGE;
	}
	if (r.seed || r.seed_from || r.out) {
		error("--seed, --seed-kernel and --out belong to 'cutegen run'; resume continues RUN_DIR "
		      "in place");
		return EXIT_USAGE;
	}
	given = r;
	const char *run_dir = argv[1];
	int rc = EXIT_INTERNAL;
	char *err = NULL;
	struct store_run run = { 0 };
	struct llm_config cfg;
	struct llm *m = NULL;
	struct task *t = NULL;
	struct module_desc *md = NULL;
	json_t *conf = NULL, *budgets = NULL;
	llm_config_init(&cfg);
	/* the run's lock, held to the end (store_close): a second resume or run of RUN_DIR
	 * is refused while this one writes it */
	struct store *s = store_open(run_dir, STORE_EXISTING, &err);
	if (!s) {
		error("%s", err);
		rc = EXIT_INPUT;
		goto out;
	}
	if (store_run_get(s, &run, &err)) {
		error("%s", err);
		rc = store_failure(s, run_dir, 0);
		goto out;
	}
	conf = json_loads(run.config_json ? run.config_json : "{}", 0, NULL);
	budgets = json_loads(run.budgets_json ? run.budgets_json : "{}", 0, NULL);
	const char *mfile = jstr(conf, "module");
	if (mfile && json_is_null(json_object_get(conf, "lowered_to"))) {
		/* a module that does not lower: described again from its file, as the evaluator
		   and the prompts see it now */
		int drc = reference_describe(mfile, &md, &err);
		if (drc) {
			error("run '%s' is of module '%s', which must be described again to go on: %s; "
			      "fix or restore that file, then resume again", run_dir, mfile, err);
			rc = exit_status_for(drc);
			goto out;
		}
		if (md->lowered) {
			error("module '%s' now lowers to the built-in %s task, which run '%s' was not "
			      "judged as: start a new run ('cutegen run %s')", mfile,
			      op_name(md->lowered->op), run_dir, mfile);
			rc = EXIT_INPUT;
			goto out;
		}
	} else {
		t = task_parse_json(run.task_json, strlen(run.task_json), "the run's task", &err);
	}
	if ((!t && !md) || !conf || !budgets) {
		error("run store '%s' is damaged: %s", store_path(s),
		      t || md ? "bad configuration" : err);
		rc = EXIT_INPUT;
		goto out;
	}
	restore_opts(&r, &given, json_object_get(conf, "agent"), budgets);
	if (!r.recorded)
		r.recorded = getenv("CUTEGEN_RECORDED_EVALS");
	if (r.recorded && !*r.recorded)
		r.recorded = NULL;
	if ((rc = check_device(&r)))
		goto out;
	rc = EXIT_INTERNAL;

	/* the model: file and environment, then the stored choice, then the flags */
	int lrc = config_load_llm(&cfg, &err);
	json_t *l = json_object_get(conf, "llm");
	if (!lrc && json_is_object(l)) {
		const char *v;
		if ((v = jstr(l, "backend")))
			llm_config_set(&cfg.backend, v);
		if ((v = jstr(l, "model")))
			llm_config_set(&cfg.model, v);
		if ((v = jstr(l, "base_url")))
			llm_config_set(&cfg.base_url, v);
		/* the backend's own key variable was filled in by the defaults, not asked for:
		   leaving it unset keeps a keyless server of one's own usable on resume */
		if ((v = jstr(l, "api_key_env")) && strcmp(v, "OPENAI_API_KEY") &&
		    strcmp(v, "ANTHROPIC_API_KEY"))
			llm_config_set(&cfg.api_key_env, v);
		if ((v = jstr(l, "llm_cmd")))
			llm_config_set(&cfg.llm_cmd, v);
		if ((v = jstr(l, "replay_path")))
			llm_config_set(&cfg.replay_path, v);
		if ((v = jstr(l, "reasoning_effort")))
			llm_config_set(&cfg.reasoning_effort, v);
		json_t *x;
		if (json_is_number(x = json_object_get(l, "temperature")))
			cfg.temperature = json_number_value(x);
		if (json_is_integer(x = json_object_get(l, "max_tokens")))
			cfg.max_tokens = (int)json_integer_value(x);
	}
	if (!lrc && (lf.backend || lf.llm_cmd || lf.replay)) {
		/* a new backend on the command line replaces the stored one whole */
		llm_config_set(&cfg.llm_cmd, NULL);
		llm_config_set(&cfg.replay_path, NULL);
		llm_config_set(&cfg.base_url, NULL);
		llm_config_set(&cfg.model, NULL);
		llm_config_set(&cfg.api_key_env, NULL);
		llm_config_set(&cfg.backend, NULL);
	}
	rc = open_backend(&lf, &cfg, lrc, &err, &m, &r.builtin);
	if (rc)
		goto out;
	if (md && r.builtin) {
		error("module '%s' is not one of cutegen's built-in ops: the builtin agent has no "
		      "kernel family for it, so run '%s' goes on with a model only (OPENAI_API_KEY, "
		      "ANTHROPIC_API_KEY or --backend; 'cutegen llm' shows them)", md->file, run_dir);
		rc = EXIT_ENV;
		goto out;
	}
	if (!m && !r.builtin) {
		error("no model configured to continue run '%s' with: set OPENAI_API_KEY / "
		      "ANTHROPIC_API_KEY, or --backend cmd/replay (or --backend builtin)", run_dir);
		rc = EXIT_ENV;
		goto out;
	}
	if (r.iters == ITERS_UNSET)
		r.iters = r.builtin ? BUILTIN_ITERS : ITERS_MODEL;
	/* the budgets in force now (stored ones, or raised on this command line) are the run's */
	json_t *nb = budgets_json(&r);
	char *nbs = json_dumps(nb, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(nb);
	int sr = store_run_resumed(s, nbs, &err);
	free(nbs);
	if (sr) {
		error("%s", err);
		rc = store_failure(s, run_dir, 1);
		goto out;
	}
	rc = drive(run_dir, t, md, s, m, &r, NULL, 1, mfile);
out:
	json_failure(r.json, run_dir, rc);
	free(err);
	module_desc_free(md);
	if (conf)
		json_decref(conf);
	if (budgets)
		json_decref(budgets);
	store_run_release(&run);
	llm_close(m);
	llm_config_release(&cfg);
	store_close(s);
	task_free(t);
	return rc;
}
