/*
 * The agent loop (see agent.h). Each node is: decide what to ask (generate, fix, optimize),
 * build the prompt, call the model, parse the reply into a kernel, policy check, compile,
 * evaluate (or look the evaluation up in recorded reports), format feedback, judge it against
 * the best, store it in one transaction, then apply it to the state. apply_node() is the only
 * place the state changes, and it reads nothing but the stored node, so agent_restore()
 * rebuilds the state of a killed run by applying its stored nodes in order.
 */
#include "common/verdict.h"
#include "agent/agent.h"
#include "agent/builtin_policy.h"
#include "agent/feedback.h"
#include "common/paths.h"
#include "common/proc.h"
#include "eval/policy.h"
#include "eval/ncu.h"
#include "eval/reference.h"
#include "agent/rag.h"
#include "agent/prompt.h"
#include "agent/reply.h"
#include "agent/stages.h"
#include "util/fsutil.h"
#include "util/opt.h"
#include "util/sha256.h"
#include "util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

volatile sig_atomic_t agent_interrupted;

#define HISTORY_MAX ((size_t)64 << 10)

struct agent {
	const struct task *task;
	struct store *store;
	struct llm *llm;
	struct agent_opts o;
	struct reference_keep ref_keep; /* a module that does not lower: the reference session every
					   candidate of the run is judged against (o.eval.keep) */
	struct stage_machine sm;
	struct strbuf t_system, t_generate, t_fix, t_optimize;
	int profile_from;

	/* the state, rebuilt by apply_node() */
	int stage;            /* index into sm.stages */
	int stage_steps;      /* steps finished in this stage */
	int stage_stall;      /* steps in a row without progress */
	int step;             /* the current step's number (1-based once started) */
	int step_open;        /* a step is in progress (its first try failed) */
	int attempt;          /* the next node's attempt within the step */
	int steps_no_correct; /* stage 0 steps that ended without a correct kernel */
	char *cur_src;        /* the last accepted kernel (optimizations start from it) */
	long cur_node;
	double cur_ms;
	char *fail_src;       /* the failing candidate a fix edits */
	long fail_node;
	char *best_src;
	long best_node;
	double best_ms, best_speedup, best_roof;
	char *best_so;        /* its shared object, when built in this process */
	char *feedback;       /* for the next prompt */
	struct strbuf history;
	char *target;         /* the target and build line for the prompts, made once */

	/* profiling */
	char *profile;
	long profiled_node;
	int profile_unavailable;
	int memcheck_noted;   /* the module note on memcheck was given */
	int stop_code;        /* agent_stop_code() */
	double eval_wall_max; /* the longest evaluation of this process that ended in a verdict
				 other than timeout (eval_deadline) */

	/* retrieval of CuTe documentation (docs/cute, headers, examples) */
	struct rag *rag;
	int rag_unavailable;

	/* the builtin policy (o.builtin): its family and what it has tried */
	struct builtin_space bsp;
	struct builtin_tried *tried;
	int ntried;
	size_t tried_alloc;
	int prebuilt_stage;   /* the stage whose candidates are compiled ahead, in parallel */
	char prebuild_phase[96]; /* the status line's phase while a node waits (outlives the event) */
	/* compile-ahead (prebuild_start): the stage's candidates, compiled in the background by
	 * a manager process (pre_pid) that reports each one built on a pipe (pre_fd) */
	struct builtin_config pre_cfg[BUILTIN_STAGE_CANDIDATES_MAX];
	int pre_done[BUILTIN_STAGE_CANDIDATES_MAX];
	int pre_n, pre_fd;
	pid_t pre_pid;

	struct agent_totals totals;
	enum agent_stop stop;
	char *stop_msg;
};

const char *agent_stop_name(enum agent_stop s)
{
	switch (s) {
	case AGENT_RUNNING: return "running";
	case AGENT_STOP_DONE: return "done";
	case AGENT_STOP_ITERS: return "iterations";
	case AGENT_STOP_TOKENS: return "tokens";
	case AGENT_STOP_COST: return "cost";
	case AGENT_STOP_WALL: return "wall_time";
	case AGENT_STOP_NO_CORRECT: return "no_correct_kernel";
	case AGENT_STOP_NO_MODEL: return "no_model";
	case AGENT_STOP_MODEL_ERROR: return "model_error";
	case AGENT_STOP_ENV_ERROR: return "environment";
	case AGENT_STOP_INTERRUPTED: return "interrupted";
	}
	return "unknown";
}

static void emit(struct agent *a, enum agent_event_kind kind, const char *text,
		 const struct store_node *node)
{
	if (!a->o.on_event)
		return;
	struct agent_event ev = { kind, text, node, 0, &a->totals };
	a->o.on_event(a->o.ctx, &ev);
}

static void on_tokens(void *ctx, long tokens)
{
	struct agent *a = ctx;
	if (!a->o.on_event)
		return;
	struct agent_event ev = { AGENT_EV_TOKENS, NULL, NULL, tokens, &a->totals };
	a->o.on_event(a->o.ctx, &ev);
}

/* The kernel refused the task's arguments (cutegen_launch returned nonzero): "launch_error",
 * or "unsupported" where the runner names that verdict apart. */
static int refused(const struct store_node *n)
{
	return n->verdict && (verdict_parse(n->verdict) == VERDICT_LAUNCH_ERROR ||
			      !strcmp(n->verdict, "unsupported"));
}

static void set_stop(struct agent *a, enum agent_stop s, char *msg)
{
	a->stop = s;
	free(a->stop_msg);
	a->stop_msg = msg;
}

static void set_str(char **dst, const char *src)
{
	char *t = src ? xstrdup(src) : NULL;
	free(*dst);
	*dst = t;
}

static int stage_guidance(const struct stage *st, int tc, struct strbuf *out, char **err);

/* A module that is not lowered: described by its own description, not a built-in task. */
static int module_only(const struct agent *a)
{
	return a->o.module && !a->o.module->lowered;
}

static const char *precision_of(const struct agent *a)
{
	return module_only(a) ? (a->o.module->precision ? a->o.module->precision : "none")
			      : precision_name(a->task->precision);
}

static int strict_fp32(const struct agent *a)
{
	return !strcmp(precision_of(a), "strict");
}

static int stage_applies(const struct agent *a, int i)
{
	return !(a->sm.stages[i].tensor_cores && strict_fp32(a));
}

static void enter_stage(struct agent *a, int i, int replay)
{
	a->stage = i;
	a->stage_steps = 0;
	a->stage_stall = 0;
	a->totals.stage = i;
	a->totals.stage_name = i < (int)a->sm.n ? a->sm.stages[i].name : "done";
	if (!replay && i < (int)a->sm.n) {
		char *t = xasprintf("stage %d/%zu: %s", i, a->sm.n - 1, a->sm.stages[i].name);
		emit(a, AGENT_EV_STAGE, t, NULL);
		free(t);
	}
}

/* Moves to the next stage that applies; stops the run when none is left. */
static void next_stage(struct agent *a, int replay)
{
	int i = a->stage + 1;
	while (i < (int)a->sm.n && !stage_applies(a, i)) {
		if (!replay) {
			char *t = xasprintf("skipping stage %d (%s): the %s precision contract does not allow "
					    "tensor cores", i, a->sm.stages[i].name, precision_of(a));
			emit(a, AGENT_EV_NOTE, t, NULL);
			free(t);
		}
		i++;
	}
	enter_stage(a, i, replay);
	if (i >= (int)a->sm.n)
		set_stop(a, AGENT_STOP_DONE, xasprintf("every stage of the %s stage machine ran",
						      a->sm.workload));
}

static void fmt_metrics(struct strbuf *sb, double ms, double speedup, double roof)
{
	if (ms < 0) {
		strbuf_addstr(sb, "time not measured");
		return;
	}
	strbuf_addf(sb, "%.4g ms", ms);
	if (speedup > 0)
		strbuf_addf(sb, ", %.2fx the baseline", speedup);
	if (roof > 0)
		strbuf_addf(sb, ", %.0f%% of the roofline", roof * 100);
}

static int passed(const struct store_node *n)
{
	return verdict_parse(n->verdict) == VERDICT_PASS;
}

/*
 * What the agent does with a node: its outcome, from the state before it. Pure: the same state
 * and node give the same answer, live and on resume.
 */
static const char *judge(const struct agent *a, const struct store_node *n)
{
	if (passed(n)) {
		if (!a->best_src || a->best_ms < 0 || (n->ms >= 0 && n->ms < a->best_ms))
			return "best";
		if (n->ms < 0 || n->ms <= a->best_ms * (1 + a->o.noise))
			return "kept";
		return "slower";
	}
	if (n->attempt < a->o.fix_attempts)
		return "failed";
	return a->best_src ? "rolled_back" : "abandoned";
}

static void end_step(struct agent *a, int progress, int replay)
{
	a->step_open = 0;
	a->attempt = 0;
	a->stage_steps++;
	a->stage_stall = progress ? 0 : a->stage_stall + 1;
	const struct stage *st = &a->sm.stages[a->stage];
	if (a->stage == 0) {
		/* stage 0 ends with the first correct kernel, or gives up after its budget */
		if (a->best_src)
			next_stage(a, replay);
		else if (a->stage_steps >= st->max_iters)
			set_stop(a, AGENT_STOP_NO_CORRECT,
				 xasprintf("no correct kernel after %d attempts at stage 0 (each with up "
					   "to %d fixes)", a->stage_steps, a->o.fix_attempts));
		return;
	}
	if (a->stage_steps >= st->max_iters || a->stage_stall >= st->patience)
		next_stage(a, replay);
}

static void builtin_stage_machine(struct agent *a);

/* The run goes on with family next (taken over), from its start. */
static void use_family(struct agent *a, struct builtin_space *next)
{
	builtin_space_release(&a->bsp);
	a->bsp = *next;
	a->ntried = 0;
	stage_machine_release(&a->sm);
	builtin_stage_machine(a);
	a->stage = 0;
	a->totals.stage_name = a->sm.stages[0].name; /* the old machine's names are freed */
	a->prebuilt_stage = -1;
}

/*
 * A resumed run replays a node that is no candidate of its family: when that family had given
 * no correct kernel (refused as unsupported, or its walk over with none correct) and the node
 * is a candidate of its fallback, the run had moved there (switch_family); it moves again, so
 * the fallback's walk continues where it was.
 */
static void replay_fallback(struct agent *a, const char *src)
{
	struct builtin_space next;
	struct builtin_config bc;
	char *err = NULL;
	if (a->best_src || a->ntried == 0 ||
	    builtin_space_fallback(a->task, &a->bsp, a->o.builtin_dir, &next, &err) <= 0) {
		free(err);
		return;
	}
	if (builtin_config_of(&next, src, &bc))
		builtin_space_release(&next);
	else
		use_family(a, &next);
}

static void apply_node(struct agent *a, const struct store_node *n, int replay)
{
	struct strbuf fb = STRBUF_INIT, line = STRBUF_INIT;
	const char *outcome = n->outcome;
	double before = a->best_ms;

	a->totals.nodes++;
	a->totals.tokens_in += n->tokens_in;
	a->totals.tokens_out += n->tokens_out;
	a->totals.cost_usd += n->cost_usd;
#define ADD(f) a->totals.f += n->f > 0 ? n->f : 0
	ADD(llm_s);
	ADD(compile_s);
	ADD(eval_s);
	ADD(evaluator_s);
	ADD(profile_s);
	ADD(compile_ahead_s);
#undef ADD
	a->totals.wall_s += n->total_s > 0 ? n->total_s : 0;
	a->step = n->step;
	struct builtin_config bc;
	if (a->o.builtin && replay && n->source && builtin_config_of(&a->bsp, n->source, &bc))
		replay_fallback(a, n->source);
	if (a->o.builtin && !builtin_config_of(&a->bsp, n->source, &bc)) {
		ALLOC_GROW(a->tried, (size_t)a->ntried + 1, a->tried_alloc);
		a->tried[a->ntried++] = (struct builtin_tried){ bc, passed(n), n->ms, n->roofline_fraction,
			refused(n) };
	}

	strbuf_addf(&line, "#%d stage %d %s", n->iteration, n->stage, n->kind);
	if (n->change)
		strbuf_addf(&line, " (%.160s)", n->change);
	strbuf_addf(&line, ": %s", n->verdict);

	if (n->feedback)
		strbuf_addstr(&fb, n->feedback);
	if (!strcmp(outcome, "best") || !strcmp(outcome, "kept")) {
		int first = !a->best_src;
		set_str(&a->cur_src, n->source);
		a->cur_node = n->id;
		a->cur_ms = n->ms;
		strbuf_addf(&line, " ");
		fmt_metrics(&line, n->ms, n->speedup, n->roofline_fraction);
		if (!strcmp(outcome, "best")) {
			set_str(&a->best_src, n->source);
			a->best_node = n->id;
			a->best_ms = n->ms;
			a->best_speedup = n->speedup;
			a->best_roof = n->roofline_fraction;
			a->totals.best_node = n->id;
			a->totals.best_ms = n->ms;
			a->totals.best_speedup = n->speedup;
			a->totals.best_roof = n->roofline_fraction;
			strbuf_addstr(&line, " -> new best");
			if (first) {
				strbuf_addstr(&fb, "The kernel is correct: ");
			} else {
				strbuf_addf(&fb, "Your change passed and is %.1f%% faster than the previous "
						 "best (%.4g ms): ", before > 0 ? (before - n->ms) / before * 100 : 0,
					    before);
			}
			fmt_metrics(&fb, n->ms, n->speedup, n->roofline_fraction);
			strbuf_addstr(&fb, ". It is now the best kernel and the one to improve.\n");
		} else {
			strbuf_addstr(&line, " -> kept (within noise of the best)");
			strbuf_addf(&fb, "Your change passed at %.4g ms, within noise of the best (%.4g ms): "
					 "it is kept as the current kernel.\n", n->ms, a->best_ms);
		}
		int progress = first || (n->ms >= 0 && before > 0 &&
					 n->ms <= before * (1 - a->sm.stages[a->stage].min_gain));
		set_str(&a->fail_src, NULL);
		a->fail_node = 0;
		end_step(a, progress, replay);
	} else if (!strcmp(outcome, "slower")) {
		double pct = (n->ms - a->best_ms) / a->best_ms * 100;
		strbuf_addf(&line, " %.4g ms -> %.0f%% slower, rolled back", n->ms, pct);
		strbuf_addf(&fb, "Your change made it %.0f%% slower: %.4g ms vs %.4g ms for the best; "
				 "it was rolled back. The current kernel below is the one before it.\n",
			    pct, n->ms, a->best_ms);
		set_str(&a->fail_src, NULL);
		end_step(a, 0, replay);
	} else {
		/* failed: fix next, or give up on this step */
		if (n->message)
			strbuf_addf(&line, " (%.200s)", n->message);
		if (!strcmp(outcome, "failed")) {
			a->step_open = 1;
			a->attempt = n->attempt + 1;
			if (n->source) {
				set_str(&a->fail_src, n->source);
				a->fail_node = n->id;
			}
			strbuf_addstr(&line, " -> fix");
		} else {
			strbuf_addf(&fb, "\nThat was the last of %d attempts to fix this change: it is %s.%s\n",
				    a->o.fix_attempts + 1,
				    a->best_src ? "rolled back" : "abandoned",
				    a->best_src ? " The current kernel below is the last verified one; try "
						  "a different change." : " Start again from a simpler kernel.");
			strbuf_addstr(&line, a->best_src ? " -> rolled back" : " -> abandoned");
			set_str(&a->fail_src, NULL);
			a->fail_node = 0;
			end_step(a, 0, replay);
		}
	}
	free(a->feedback);
	a->feedback = strbuf_detach(&fb, NULL);
	strbuf_addch(&line, '\n');
	for (size_t i = 0; i < line.len - 1; i++)
		if (line.buf[i] == '\n')
			line.buf[i] = ' ';
	if (a->history.len + line.len < HISTORY_MAX)
		strbuf_addstr(&a->history, line.buf);
	snprintf(a->totals.last_verdict, sizeof(a->totals.last_verdict), "%s", n->verdict);
	strbuf_release(&line);
}

/* The builtin family's stages as the stage machine: "start", then those it declares. */
static void builtin_stage_machine(struct agent *a)
{
	struct stage_machine *m = &a->sm;
	m->workload = xasprintf("builtin %s", a->bsp.family);
	m->origin = xstrdup(a->bsp.file);
	m->n = m->alloc = (size_t)a->bsp.nstages + 1;
	m->stages = xcalloc(m->n, sizeof(*m->stages));
	for (size_t i = 0; i < m->n; i++) {
		struct stage *st = &m->stages[i];
		st->index = (int)i;
		st->name = xstrdup(i ? a->bsp.stages[i - 1].name : "start");
		st->max_iters = st->patience = 1 << 20; /* the policy moves on, not the counters */
		st->watch = xstrdup("ms");
		st->guidance = xstrdup("");
	}
}

static int load_text(const char *dir, const char *name, struct strbuf *sb, char **err)
{
	return prompt_file_load(dir, name, sb, err);
}

struct agent *agent_new(const struct task *t, struct store *s, struct llm *llm,
			const struct agent_opts *opts, char **err)
{
	struct agent *a = xcalloc(1, sizeof(*a));
	a->task = t;
	a->store = s;
	a->llm = llm;
	a->o = *opts;
	if (a->o.noise < 0)
		a->o.noise = 0.02;
	strbuf_init(&a->t_system, 0);
	strbuf_init(&a->t_generate, 0);
	strbuf_init(&a->t_fix, 0);
	strbuf_init(&a->t_optimize, 0);
	strbuf_init(&a->history, 0);
	if (!t && !module_only(a))
		BUG("agent_new: neither a task nor a module that does not lower");
	if (module_only(a) && a->o.builtin) {
		*err = xasprintf("module '%s' is not one of cutegen's built-in ops: the builtin agent "
				 "has no kernel family for it; a run needs a model",
				 opts->module->file);
		agent_free(a);
		return NULL;
	}
	struct reference_keep k0 = REFERENCE_KEEP_INIT;
	a->ref_keep = k0;
	if (module_only(a)) {
		a->o.eval.module = opts->module; /* judged through the reference process */
		a->o.eval.keep = &a->ref_keep;   /* one prepare for the run while candidates keep it */
	}
	if (a->o.builtin) {
		a->o.fix_attempts = 0; /* a family's candidate is measured, not repaired */
		if (builtin_space_for(t, opts->build.arch, opts->builtin_dir, &a->bsp, err)) {
			agent_free(a);
			return NULL;
		}
		builtin_stage_machine(a);
	}
	/* the builtin policy writes no prompts; a module that is not lowered takes the stage
	   machine of its workload class */
	const char *machine = module_only(a) ? prompt_module_stages(opts->module->workload)
			      : task_workload(t);
	if (!a->o.builtin &&
	    (stages_load(machine, opts->prompts_dir, &a->sm, err) ||
	     load_text(opts->prompts_dir, "system.txt", &a->t_system, err) ||
	     load_text(opts->prompts_dir, "generate.txt", &a->t_generate, err) ||
	     load_text(opts->prompts_dir, "fix.txt", &a->t_fix, err) ||
	     load_text(opts->prompts_dir, "optimize.txt", &a->t_optimize, err))) {
		agent_free(a);
		return NULL;
	}
	a->profile_from = opts->profile_from_stage >= 0 ? opts->profile_from_stage
			  : !strcmp(machine, "gemm") ? 2 : 1;
	a->best_ms = a->best_speedup = a->best_roof = -1;
	a->cur_ms = -1;
	a->prebuilt_stage = -1;
	a->totals.best_ms = a->totals.best_speedup = a->totals.best_roof = -1;
	a->totals.stage_name = a->sm.stages[0].name;
	if (llm)
		llm_set_progress(llm, on_tokens, a);
	return a;
}

static void prebuild_stop(struct agent *a);

void agent_free(struct agent *a)
{
	if (!a)
		return;
	reference_keep_release(&a->ref_keep); /* no reference process outlives the run */
	prebuild_stop(a);
	builtin_space_release(&a->bsp);
	free(a->tried);
	stage_machine_release(&a->sm);
	strbuf_release(&a->t_system);
	strbuf_release(&a->t_generate);
	strbuf_release(&a->t_fix);
	strbuf_release(&a->t_optimize);
	strbuf_release(&a->history);
	free(a->cur_src);
	free(a->fail_src);
	free(a->target);
	free(a->best_src);
	free(a->best_so);
	free(a->feedback);
	free(a->profile);
	if (a->rag)
		rag_close(a->rag);
	free(a->stop_msg);
	free(a);
}

enum agent_stop agent_stop(const struct agent *a)
{
	return a->stop;
}

const char *agent_stop_message(const struct agent *a)
{
	return a->stop_msg ? a->stop_msg : "";
}

int agent_stop_code(const struct agent *a)
{
	return a->stop_code;
}

const struct agent_totals *agent_totals(const struct agent *a)
{
	return &a->totals;
}

const char *agent_best_source(const struct agent *a)
{
	return a->best_src;
}

char *agent_change_line(const char *reply)
{
	const char *p = reply;
	int fenced = 0;
	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		const char *q = p;
		while (q < p + n && (*q == ' ' || *q == '*' || *q == '#' || *q == '-'))
			q++;
		if (!strncmp(q, "```", 3) || !strncmp(q, "~~~", 3)) {
			fenced = !fenced; /* a Change: line may come before or after the code, not in it */
		} else if (!fenced && (size_t)(p + n - q) > 7 && !strncasecmp(q, "change:", 7)) {
			q += 7;
			while (q < p + n && (*q == ' ' || *q == '*'))
				q++;
			size_t m = (size_t)(p + n - q);
			while (m && (q[m - 1] == ' ' || q[m - 1] == '\r' || q[m - 1] == '*'))
				m--;
			if (m)
				return xstrndup(q, m > 300 ? 300 : m);
		}
		p = nl ? nl + 1 : NULL;
	}
	return NULL;
}

int agent_restore(struct agent *a, char **err)
{
	struct store_node *nodes;
	size_t n;
	if (store_nodes(a->store, &nodes, &n, err))
		return -1;
	struct store_run run;
	if (!store_run_get(a->store, &run, err)) { /* the time of nodes cut short, not in a row */
		a->totals.wall_s += run.cut_s;
		a->totals.cut_s += run.cut_s;
		a->totals.llm_s += run.cut_llm_s;
		a->totals.compile_s += run.cut_compile_s;
		a->totals.eval_s += run.cut_eval_s;
		a->totals.compiles += run.cut_compiles;
		store_run_release(&run);
	} else {
		free(*err);
		*err = NULL;
	}
	for (size_t i = 0; i < n && a->stop == AGENT_RUNNING; i++) {
		if (!nodes[i].outcome || !*nodes[i].outcome) {
			*err = xasprintf("node %ld in the run store has no outcome", nodes[i].id);
			store_nodes_free(nodes, n);
			return -1;
		}
		apply_node(a, &nodes[i], 1);
	}
	/* a stop reached by the stored nodes themselves (every stage ran) stays; budgets are
	 * checked again by agent_run with the current limits */
	store_nodes_free(nodes, n);
	return 0;
}

static int budget_left(struct agent *a)
{
	const struct agent_totals *t = &a->totals;
	if (a->stop != AGENT_RUNNING)
		return 0;
	if (agent_interrupted) {
		set_stop(a, AGENT_STOP_INTERRUPTED, xstrdup("interrupted: continue with `cutegen resume`"));
		return 0;
	}
	if (t->nodes >= a->o.iters) {
		set_stop(a, AGENT_STOP_ITERS, xasprintf("the iteration budget ran out (%d of %d nodes)",
							t->nodes, a->o.iters));
		return 0;
	}
	if (a->o.max_tokens_total > 0 && t->tokens_in + t->tokens_out >= a->o.max_tokens_total) {
		set_stop(a, AGENT_STOP_TOKENS, xasprintf("the token budget ran out (%ld of %ld tokens)",
							 t->tokens_in + t->tokens_out,
							 a->o.max_tokens_total));
		return 0;
	}
	if (a->o.max_cost > 0 && t->cost_usd >= a->o.max_cost) {
		set_stop(a, AGENT_STOP_COST, xasprintf("the cost budget ran out ($%.4f of $%.4f)",
						       t->cost_usd, a->o.max_cost));
		return 0;
	}
	if (a->o.max_wall > 0 && t->wall_s >= a->o.max_wall) {
		set_stop(a, AGENT_STOP_WALL, xasprintf("the wall-time budget ran out (%.0f of %.0f s)",
						       t->wall_s, a->o.max_wall));
		return 0;
	}
	return 1;
}

/* Builds the best kernel's .so again when it is not at hand (after a resume). */
static const char *best_so(struct agent *a)
{
	if (a->best_so || !a->best_src)
		return a->best_so;
	struct build_result br = BUILD_RESULT_INIT;
	char *err = NULL;
	if (!build_kernel(&a->o.build, a->best_src, strlen(a->best_src), &br, &err) && br.ok)
		a->best_so = xstrdup(br.so_path);
	free(err);
	build_result_release(&br);
	return a->best_so;
}

static void maybe_profile(struct agent *a, struct store_node *n)
{
	if (a->stage < a->profile_from || !a->best_src || a->profiled_node == a->best_node ||
	    a->profile_unavailable)
		return;
	double t0 = now_s();
	emit(a, AGENT_EV_PHASE, "profile", NULL);
	struct strbuf sb = STRBUF_INIT;
	char *err = NULL;
	const char *so = best_so(a);
	int r = NCU_E_SETUP;
	if (so && module_only(a)) {
		/* a module: ncu runs the runner on cases its reference process prepares. The kept
		 * session lets its cases go just before (when ncu is there and its cache misses):
		 * two references' cases beside the runner's do not fit the GPU at KernelBench
		 * sizes; the next candidate prepares afresh */
		struct ncu_opts no = NCU_OPTS_INIT;
		no.drop_first = &a->ref_keep;
		struct ncu_result nr = NCU_RESULT_INIT;
		no.module = a->o.module;
		no.device = a->o.eval.device;
		no.runner = a->o.eval.runner;
		r = ncu_profile(&no, NULL, so, &nr, &err);
		if (r == NCU_OK)
			strbuf_addstr(&sb, nr.summary ? nr.summary : "");
		ncu_result_release(&nr);
	} else if (so) {
		r = ncu_profile_summary(a->task, so, &sb, &err);
	}
	if (r == NCU_OK) {
		free(a->profile);
		a->profile = strbuf_detach(&sb, NULL);
		a->profiled_node = a->best_node;
		n->profile = xstrdup(a->profile); /* the node owns its copy */
	} else if (ncu_unavailable(r)) {
		a->profile_unavailable = 1;
		emit(a, AGENT_EV_NOTE, err, NULL);
	} else {
		char *t = xasprintf("profiling the best kernel failed: %s", err ? err : "no .so");
		emit(a, AGENT_EV_NOTE, t, NULL);
		free(t);
		a->profiled_node = a->best_node; /* do not retry the same kernel */
	}
	free(err);
	strbuf_release(&sb);
	n->profile_s = now_s() - t0;
}

/* Reads the recorded runner report at path into er. */
static int eval_recorded_file(const char *path, struct eval_result *er, char **err)
{
	struct strbuf sb = STRBUF_INIT;
	int rc = strbuf_read_file(&sb, path, 64u << 20);
	if (rc) {
		*err = xasprintf("no recorded evaluation for this kernel: '%s' is missing (the sha256 "
				 "of the kernel source); record it on a GPU with --record-evals", path);
	} else if (eval_result_from_report(er, sb.buf, err)) {
		char *e = xasprintf("recorded evaluation '%s': %s", path, *err);
		free(*err);
		*err = e;
		rc = -1;
	} else {
		json_t *rs = json_object_get(er->report, "runner_s");
		er->wall_s = json_is_number(rs) ? json_number_value(rs) : 0;
	}
	strbuf_release(&sb);
	return rc ? -1 : 0;
}

/* DIR/<sha256 of src><suffix>.json: where a kernel's evaluation is recorded (suffix "" for a
 * node's, ".torch" for the one with the PyTorch baselines). */
static char *recorded_path(const char *dir, const char *src, const char *suffix)
{
	char sha[65];
	sha256_hex(src, strlen(src), sha);
	return xasprintf("%s/%s%s.json", dir, sha, suffix);
}

/* Evaluates from a recorded runner report keyed by the source's sha256. */
static int eval_recorded(struct agent *a, const char *src, struct eval_result *er, char **err)
{
	char *path = recorded_path(a->o.recorded_evals, src, "");
	int rc = eval_recorded_file(path, er, err);
	free(path);
	return rc;
}

/* Saves er's report as recorded_path(RECORD_DIR, src, suffix). */
static void record_eval(struct agent *a, const char *src, const char *suffix,
			const struct eval_result *er)
{
	if (!er->report)
		return;
	char *path = recorded_path(a->o.record_evals, src, suffix);
	char *text = json_dumps(er->report, JSON_INDENT(2) | JSON_SORT_KEYS);
	if (mkdir_p(a->o.record_evals) || !text || write_file_atomic(path, text, strlen(text))) {
		char *t = xasprintf("cannot record the evaluation to '%s'", path);
		emit(a, AGENT_EV_NOTE, t, NULL);
		free(t);
	}
	free(text);
	free(path);
}

/*
 * The PyTorch evaluation of the best kernel, from recordings: RECORDED/<sha>.torch.json, or
 * else the node's own RECORDED/<sha>.json when its report carries baseline.torch_eager (a
 * recording made with --torch). 1 when neither exists (*err says what to record).
 */
static int eval_recorded_torch(struct agent *a, const char *src, struct eval_result *er,
			       char **err)
{
	char *tpath = recorded_path(a->o.recorded_evals, src, ".torch");
	char *path = recorded_path(a->o.recorded_evals, src, "");
	int rc;
	if (file_exists(tpath)) {
		rc = eval_recorded_file(tpath, er, err);
	} else {
		rc = eval_recorded_file(path, er, err);
		if (!rc && !json_object_get(json_object_get(er->report, "baseline"), "torch_eager")) {
			*err = xasprintf("no recorded evaluation with the PyTorch baselines: '%s' is "
					 "missing and '%s' has no baseline.torch_eager; record them on "
					 "a GPU with --torch --record-evals", tpath, path);
			rc = 1;
		}
	}
	free(tpath);
	free(path);
	return rc;
}

json_t *agent_judge_torch(struct agent *a)
{
	if (!a->best_src || a->best_node <= 0)
		return NULL;
	json_t *o = json_object();
	json_object_set_new(o, "node", json_integer(a->best_node));
	struct eval_result er = EVAL_RESULT_INIT;
	char *err = NULL;
	int r;
	emit(a, AGENT_EV_PHASE, "torch", NULL);
	double t0 = now_s();
	if (a->o.recorded_evals) {
		r = eval_recorded_torch(a, a->best_src, &er, &err);
	} else {
		const char *so = best_so(a);
		struct eval_opts eo = a->o.eval;
		eo.torch = 1; /* what `cutegen eval --torch` asks: the same protocol */
		if (!so) {
			err = xstrdup("the best kernel did not build again (see 'cutegen build')");
			r = -1;
		} else {
			r = eval_run(&eo, a->task, so, &er, &err);
		}
		if (!r && a->o.record_evals)
			record_eval(a, a->best_src, ".torch", &er);
	}
	a->totals.eval_s += now_s() - t0;
	a->totals.wall_s += now_s() - t0;
	json_t *te = json_object_get(json_object_get(er.report, "baseline"), "torch_eager");
	json_t *metrics = json_object_get(er.report, "metrics");
	if (r > 0) {
		json_object_set_new(o, "error", json_string(err));
	} else if (r) {
		json_object_set_new(o, "error", json_sprintf("cannot evaluate with the PyTorch "
							     "baselines: %s", err));
	} else if (!eval_passed(&er)) {
		/* the kernel passed before: a flaky kernel or a changed machine, said as it is */
		json_object_set_new(o, "error", json_sprintf("the best kernel failed its evaluation "
							     "with the PyTorch baselines: %s: %.300s",
							     verdict_name(er.verdict),
							     er.message ? er.message : ""));
	} else if (!json_is_object(te)) {
		json_object_set_new(o, "error", json_string("the evaluation gave no PyTorch figures "
							    "(baseline.torch_eager)"));
	} else {
		json_t *v;
		if (er.ms > 0)
			json_object_set_new(o, "ms", json_real(er.ms));
		if (json_is_string(v = json_object_get(te, "torch")))
			json_object_set(o, "torch", v);
		if (json_is_number(v = json_object_get(te, "ms")) && json_number_value(v) > 0)
			json_object_set(o, "eager_ms", v);
		else
			json_object_set_new(o, "error", json_sprintf("no PyTorch eager time: %s",
				json_string_value(json_object_get(te, "error")) ?
				json_string_value(json_object_get(te, "error")) : "none given"));
		if (json_is_number(v = json_object_get(te, "compile_ms")) && json_number_value(v) > 0)
			json_object_set(o, "compile_ms", v);
		if (json_is_string(v = json_object_get(te, "compile_mode")))
			json_object_set(o, "compile_mode", v);
		if (json_is_string(v = json_object_get(te, "compile_error")))
			json_object_set_new(o, "compile_error", json_sprintf("%.1000s",
									     json_string_value(v)));
		else if (!json_object_get(o, "compile_ms") && !json_object_get(o, "error"))
			json_object_set_new(o, "compile_error",
					    json_string("no torch.compile time was given"));
		if (json_is_number(v = json_object_get(metrics, "speedup_vs_torch")))
			json_object_set(o, "speedup_vs_torch", v);
		if (json_is_number(v = json_object_get(metrics, "speedup_vs_torch_compile")))
			json_object_set(o, "speedup_vs_torch_compile", v);
	}
	free(err);
	eval_result_release(&er);
	return o;
}

static void first_line(const char *s, char **out)
{
	const char *p = s;
	while (*p == '\n' || *p == ' ')
		p++;
	const char *nl = strchr(p, '\n');
	size_t n = nl ? (size_t)(nl - p) : strlen(p);
	if (n <= NODE_MESSAGE_MAX) {
		*out = xstrndup(p, n);
		return;
	}
	/* too long: up to the last whole word that fits, then "..." */
	size_t k = NODE_MESSAGE_MAX - 3;
	while (k > NODE_MESSAGE_MAX / 2 && p[k] != ' ')
		k--;
	while (k > 0 && p[k - 1] == ' ')
		k--;
	*out = xasprintf("%.*s...", (int)k, p);
}

static void status_line(struct strbuf *sb, const char *label, double ms, double speedup,
			double roof)
{
	strbuf_addf(sb, "%s: ", label);
	fmt_metrics(sb, ms, speedup, roof);
}

/*
 * Retrieved CuTe documentation for the next prompt: the CuTe/CUTLASS names in the latest
 * compile error (for an error inside make_tiled_copy, its declaration and an example of its
 * use) and the stage's docs: topic, filtered to fit the task's class and contract. The index is built on first use; when it cannot be, the run
 * says so once and goes on without.
 */
#define DOCS_BUDGET 4000

static void retrieve_docs(struct agent *a, const struct stage *st, struct strbuf *out)
{
	if (a->o.no_docs || a->rag_unavailable)
		return;
	if (!a->rag) {
		char *err = NULL;
		int built = 0;
		a->rag = rag_open_default(NULL, &built, &err);
		if (!a->rag) {
			char *t = xasprintf("documentation retrieval unavailable: %s", err ? err : "no index");
			emit(a, AGENT_EV_NOTE, t, NULL);
			free(t);
			free(err);
			a->rag_unavailable = 1;
			return;
		}
	}
	struct rag_situation sit = { 0 };
	sit.memory_bound = module_only(a) ? !!strcmp(prompt_module_stages(a->o.module->workload), "gemm")
					  : !task_is_gemm_like(a->task);
	sit.strict_fp32 = strict_fp32(a);
	sit.stage_topic = st->docs;
	if (a->feedback && strstr(a->feedback, "did not compile"))
		sit.error = a->feedback;
	else if (a->step_open)
		sit.failure = a->feedback; /* a wrong result or a crash being fixed */
	rag_retrieve(a->rag, &sit, 3, DOCS_BUDGET, out);
}

int agent_stage_guidance(const struct stage *st, const struct task *t, struct strbuf *out,
			 char **err)
{
	return stage_guidance(st, t->precision != PREC_STRICT, out, err);
}

static int stage_guidance(const struct stage *st, int tc, struct strbuf *out, char **err)
{
	struct prompt_var v[] = { { "tensor_cores", tc ? "1" : "" }, { "fp32_fma", tc ? "" : "1" } };
	char *e = NULL;
	if (prompt_render(st->guidance ? st->guidance : "", v, ARRAY_SIZE(v), out, &e)) {
		*err = xasprintf("stage %d's guidance: %s", st->index, e);
		free(e);
		return -1;
	}
	return 0;
}

/* The GPU family an arch is for, in words. */
static const char *arch_gpus(const char *arch)
{
	static const struct { const char *prefix, *gpus; } m[] = {
		{ "sm_90", "Hopper: H100 / H200" }, { "sm_100", "Blackwell: B200 / GB200" },
		{ "sm_120", "Blackwell: RTX 50xx / RTX PRO" }, { "sm_89", "Ada: L4 / L40S / RTX 40xx" },
		{ "sm_80", "Ampere: A100" }, { "sm_86", "Ampere: A10 / RTX 30xx" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(m); i++)
		if (!strncmp(arch, m[i].prefix, strlen(m[i].prefix)))
			return m[i].gpus;
	return NULL;
}

/*
 * The facts of the target the prompts state once: the arch and its GPUs, the CUDA toolkit and
 * CUTLASS versions, and the exact nvcc line (build_argv, the include paths written
 * symbolically so the text does not depend on the machine). What cannot be found is left out.
 */
static void target_facts(struct agent *a, struct strbuf *out)
{
	const struct build_opts *bo = &a->o.build;
	const char *arch = bo->arch ? bo->arch : BUILD_DEFAULT_ARCH;
	const char *gpus = arch_gpus(arch);
	char *err = NULL;
	strbuf_addf(out, "- GPU architecture: %s%s%s%s\n", arch, gpus ? " (" : "", gpus ? gpus : "",
		    gpus ? ")" : "");
	char **argv = build_argv(bo, "$CUTLASS/include", "$CUTEGEN/include", &err);
	if (argv) {
		const char *v = build_nvcc_version(argv[0], &err);
		const char *rel = v ? strstr(v, "release ") : NULL;
		if (rel) {
			size_t n = strcspn(rel + 8, "\n");
			strbuf_addf(out, "- CUDA toolkit: release %.*s\n", (int)n, rel + 8);
		}
		free(err);
		err = NULL;
		char *inc = bo->cutlass_include ? xstrdup(bo->cutlass_include) : build_find_cutlass_include();
		char *cv = inc ? paths_cutlass_version(inc) : NULL;
		if (cv)
			strbuf_addf(out, "- CUTLASS / CuTe: %s\n", cv);
		free(cv);
		free(inc);
		strbuf_addstr(out, "- build (kernel.cu -> kernel.o -> kernel.so, loaded with dlopen; "
				   "the object is checked for allowed symbols between the steps):\n"
				   "    nvcc");
		for (char **p = argv + 1; *p; p++)
			strbuf_addf(out, " %s", *p);
		strbuf_addch(out, '\n');
		build_argv_free(argv);
		char **link = build_link_argv(bo, 0, &err);
		if (link) {
			strbuf_addstr(out, "    nvcc");
			for (char **p = link + 1; *p; p++)
				strbuf_addf(out, " %s", *p);
			strbuf_addstr(out, "   (+ -lcuda when the object calls the driver: TMA)\n");
			build_argv_free(link);
		}
	}
	free(err);
}

static int build_prompt(struct agent *a, const char *kind, const char *kernel,
			struct strbuf *sys, struct strbuf *user, char **err)
{
	const struct stage *st = &a->sm.stages[a->stage];
	struct strbuf ks = STRBUF_INIT, bs = STRBUF_INIT, docs = STRBUF_INIT, guide = STRBUF_INIT;
	retrieve_docs(a, st, &docs);
	if (stage_guidance(st, !strict_fp32(a), &guide, err)) {
		strbuf_release(&docs);
		return -1;
	}
	if (a->best_src) {
		status_line(&ks, "the current kernel", a->cur_ms, a->cur_node == a->best_node ?
			    a->best_speedup : -1, a->cur_node == a->best_node ? a->best_roof : -1);
		status_line(&bs, "the best verified kernel", a->best_ms, a->best_speedup, a->best_roof);
	}
	if (!a->target) {
		struct strbuf t = STRBUF_INIT;
		target_facts(a, &t);
		while (t.len && t.buf[t.len - 1] == '\n')
			t.buf[--t.len] = '\0';
		a->target = strbuf_detach(&t, NULL);
	}
	struct prompt_input in = { 0 };
	in.task = module_only(a) ? NULL : a->task;
	in.module = module_only(a) ? a->o.module : NULL;
	in.module_file = module_only(a) ? NULL : a->o.module_file;
	in.module_source = a->o.module_source;
	in.target = a->target;
	in.system_tmpl = a->t_system.buf;
	/*
	 * A fix of a reply that gave no candidate (unusable, too large) has nothing to show as
	 * "the candidate that failed": ask again as the step began (the first kernel, or the
	 * stage's change to the current best), the feedback saying what was wrong with the reply.
	 */
	if (!strcmp(kind, "fix") && !a->fail_src)
		kind = a->best_src ? "optimize" : "generate";
	in.user_tmpl = !strcmp(kind, "fix") ? a->t_fix.buf
		       : !strcmp(kind, "optimize") ? a->t_optimize.buf : a->t_generate.buf;
	in.kernel = kernel;
	in.kernel_status = ks.buf;
	in.best_status = bs.buf;
	in.history = a->history.buf;
	in.stage_name = st->name;
	in.stage_guidance = guide.buf;
	in.stage_watch = st->watch;
	in.stage_index = a->stage;
	in.stage_count = (int)a->sm.n;
	in.feedback = a->feedback;
	in.profile = a->profile;
	in.docs = docs.len ? docs.buf : NULL;
	in.budget = a->o.prompt_budget;
	int rc = prompt_build(&in, sys, user, err);
	strbuf_release(&guide);
	strbuf_release(&ks);
	strbuf_release(&bs);
	strbuf_release(&docs);
	return rc;
}

/* The compile of candidate c into the build cache, in this (child) process. */
static void prebuild_one(struct agent *a, const struct builtin_config *c)
{
	struct strbuf src = STRBUF_INIT;
	struct policy_report pol = POLICY_REPORT_INIT;
	struct build_result br = BUILD_RESULT_INIT;
	char *err = NULL;
	builtin_render(&a->bsp, a->task, c, &src);
	build_checked(&a->o.build, src.buf, src.len, &pol, &br, &err);
}

/* fork(), the child tied to this process: it dies with it (PR_SET_PDEATHSIG), and ends at once
 * if this one is gone before it could tie itself. */
static pid_t fork_tied(void)
{
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0 && (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent))
		_exit(0);
	return pid;
}

/* The manager process: compiles pre_cfg[0..pre_n) in order, `jobs` child processes at once,
 * writing each one's index to fd once it has ended; exits when all have. */
static void prebuild_manager(struct agent *a, long jobs, int fd)
{
	pid_t pid[BUILTIN_STAGE_CANDIDATES_MAX];
	int next = 0, running = 0;
	while (next < a->pre_n || running > 0) {
		while (next < a->pre_n && running < jobs) {
			pid[next] = fork_tied(); /* a compile dies with its manager */
			if (pid[next] == 0) {
				prebuild_one(a, &a->pre_cfg[next]);
				_exit(0);
			}
			if (pid[next] < 0) { /* no process: the node compiles it itself */
				unsigned char b = (unsigned char)next;
				(void)!write(fd, &b, 1);
			} else {
				running++;
			}
			next++;
		}
		pid_t w = waitpid(-1, NULL, 0); /* the manager's own children only */
		if (w < 0)
			break;
		running--;
		for (int i = 0; i < next; i++)
			if (pid[i] == w) {
				unsigned char b = (unsigned char)i;
				(void)!write(fd, &b, 1);
			}
	}
}

/*
 * Compile-ahead: the candidates the walk has left in this stage are compiled in the background
 * by a manager process, at most CUTEGEN_BUILD_JOBS (or one per processor but one, at least 2,
 * up to 16) at once, in the order they will be tried; each node waits only for its own
 * (prebuild_wait) and finds it in the build cache, so the first is measured as soon as it is
 * built while the others compile, through the evaluations too. (A walk capped in time, a class
 * table's or a suite's, used to measure only the few candidates of a stage that had all
 * compiled before the first was measured.) Only as many as the iteration budget has nodes left:
 * a suite's runs at --iters 3 compiled whole stages they never judged, on shared cores. An
 * earlier stage's manager is stopped.
 */
static void prebuild_start(struct agent *a)
{
	prebuild_stop(a);
	int n = builtin_pending(&a->bsp, a->task, a->tried, a->ntried, a->pre_cfg);
	int left = a->o.iters - a->totals.nodes; /* this node included */
	if (n > left)
		n = left;
	/* one processor left for the evaluations the compiles now run beside (the judge's host
	 * clock), but at least two compiles */
	long jobs = sysconf(_SC_NPROCESSORS_ONLN) - 1;
	if (jobs < 2)
		jobs = 2;
	const char *e = getenv("CUTEGEN_BUILD_JOBS");
	if (e && *e)
		jobs = strtol(e, NULL, 10);
	if (jobs > 16)
		jobs = 16;
	int fds[2];
	if (n < 2 || jobs < 2 || pipe2(fds, O_CLOEXEC))
		return;
	a->pre_n = n;
	for (int i = 0; i < n; i++)
		a->pre_done[i] = 0;
	fflush(NULL);
	pid_t pid = fork_tied();
	if (pid == 0) {
		close(fds[0]);
		prebuild_manager(a, jobs, fds[1]);
		_exit(0);
	}
	close(fds[1]);
	if (pid < 0) {
		close(fds[0]);
		a->pre_n = 0;
		return;
	}
	a->pre_pid = pid;
	a->pre_fd = fds[0];
	char *t = xasprintf("compiling the %d candidates of this stage in the background, %ld at a "
			    "time, each measured once it is built", n, jobs < n ? jobs : n);
	emit(a, AGENT_EV_INFO, t, NULL);
	free(t);
}

/* Waits until the compile-ahead of candidate c has ended; the seconds waited. */
static double prebuild_wait(struct agent *a, const struct builtin_config *c)
{
	double t0 = now_s();
	int i = 0;
	while (i < a->pre_n && memcmp(a->pre_cfg[i].v, c->v, sizeof(c->v)))
		i++;
	if (i == a->pre_n || a->pre_done[i])
		return 0;
	int busy = 0;
	for (int j = 0; j < a->pre_n; j++)
		busy += !a->pre_done[j];
	snprintf(a->prebuild_phase, sizeof(a->prebuild_phase),
		 "waiting for this candidate's compile (%d of the stage's %d not yet built)", busy,
		 a->pre_n);
	emit(a, AGENT_EV_PHASE, a->prebuild_phase, NULL);
	while (!a->pre_done[i]) {
		unsigned char b;
		ssize_t r = read(a->pre_fd, &b, 1);
		if (r == 1 && b < a->pre_n) {
			a->pre_done[b] = 1;
		} else if (r < 0 && errno == EINTR) {
			continue;
		} else { /* the manager is gone: the node compiles what is left itself */
			for (int j = 0; j < a->pre_n; j++)
				a->pre_done[j] = 1;
		}
	}
	return now_s() - t0;
}

/* The compile-ahead ends now (a new stage, or the run is over): its manager and the compiles
 * it runs are stopped. */
static void prebuild_stop(struct agent *a)
{
	if (a->pre_pid > 0) {
		kill(a->pre_pid, SIGKILL); /* its compiles die with it (PR_SET_PDEATHSIG) */
		waitpid(a->pre_pid, NULL, 0);
		close(a->pre_fd);
	}
	a->pre_pid = 0;
	a->pre_n = 0;
}

/*
 * The family gives this task no correct kernel: every candidate so far was refused as
 * unsupported (a size or alignment it does not take), or its walk is over and none was correct
 * (why says which). The run moves to the fallback family, from its start, with a note; 1 (and
 * the run stopped) when there is none or it cannot be loaded.
 */
static int switch_family(struct agent *a, char *why)
{
	struct builtin_space next;
	char *err = NULL;
	int r = builtin_space_fallback(a->task, &a->bsp, a->o.builtin_dir, &next, &err);
	if (r <= 0) {
		set_stop(a, AGENT_STOP_NO_CORRECT,
			 r < 0 ? err : xasprintf("the builtin %s family %s and no other family takes it",
						 a->bsp.family, why));
		free(why);
		return 1;
	}
	char *t = xasprintf("the builtin %s family %s: moving to the %s family", a->bsp.family, why,
			    next.family);
	emit(a, AGENT_EV_NOTE, t, NULL);
	free(t);
	free(why);
	use_family(a, &next);
	return 0;
}

/*
 * How many candidates the walk still has after next (the one about to be tried) if none of
 * them beats the best: the plan the status line counts against ("node 3/10", not the budget).
 */
static int walk_left(struct agent *a, const struct builtin_config *next)
{
	struct builtin_tried *t = xcalloc((size_t)a->ntried + 1, sizeof(*t));
	size_t alloc = (size_t)a->ntried + 1;
	int n = a->ntried;
	if (n)
		memcpy(t, a->tried, (size_t)n * sizeof(*t));
	/* passes, never faster than the best, roofline unknown (no early stop) */
	t[n++] = (struct builtin_tried){ .cfg = *next, .passed = 1, .ms = 1e30, .roof = -1 };
	int left = 0, stage;
	struct builtin_config c;
	char *what;
	while (left < 100000 && !builtin_next(&a->bsp, a->task, t, n, &c, &stage, &what)) {
		free(what);
		ALLOC_GROW(t, (size_t)n + 1, alloc);
		t[n++] = (struct builtin_tried){ .cfg = c, .passed = 1, .ms = 1e30, .roof = -1 };
		left++;
	}
	free(t);
	return left;
}

/*
 * The builtin policy's next candidate into src, with the node's kind, stage and change; the
 * agent's stage follows the policy's. 1 when the walk is over (the run stops).
 */
static int builtin_node(struct agent *a, struct store_node *n, struct strbuf *src)
{
	struct builtin_config cfg;
	int stage;
	char *what = NULL;
	if (builtin_unsupported(a->tried, a->ntried) &&
	    switch_family(a, xasprintf("refused this task as unsupported (%d candidates)", a->ntried)))
		return 1;
	int over = builtin_next(&a->bsp, a->task, a->tried, a->ntried, &cfg, &stage, &what);
	if (over == 1 && !a->best_src && a->ntried > 0) {
		/* a walk with no correct kernel (a family's bug on this shape, say): the next family */
		if (switch_family(a, xasprintf("gave no correct kernel in its %d candidates", a->ntried)))
			return 1;
		over = builtin_next(&a->bsp, a->task, a->tried, a->ntried, &cfg, &stage, &what);
	}
	if (over == 2) {
		set_stop(a, AGENT_STOP_DONE,
			 xasprintf("the best kernel reached %.0f%% of the roofline after %d candidates of "
				   "the builtin %s family: the policy stops there", a->best_roof * 100,
				   a->ntried, a->bsp.family));
		return 1;
	}
	if (over) {
		if (a->best_src)
			set_stop(a, AGENT_STOP_DONE,
				 xasprintf("the builtin policy walked every stage of the %s family (%d "
					   "candidates)", a->bsp.family, a->ntried));
		else
			set_stop(a, AGENT_STOP_NO_CORRECT,
				 xasprintf("none of the %d candidates of the builtin %s family was correct",
					   a->ntried, a->bsp.family));
		return 1;
	}
	while (a->stage < stage && a->stop == AGENT_RUNNING)
		next_stage(a, 0);
	a->totals.planned = a->ntried + 1 + walk_left(a, &cfg);
	if (stage != a->prebuilt_stage) {
		a->prebuilt_stage = stage;
		prebuild_start(a);
	}
	n->compile_ahead_s = prebuild_wait(a, &cfg);
	a->step++;
	n->kind = xstrdup(a->best_src ? "optimize" : "generate");
	n->parent = a->cur_node;
	n->change = what; /* heap: the node owns it */
	builtin_render(&a->bsp, a->task, &cfg, src);
	return 0;
}

/*
 * One node while it is made. Its store_node owns every string (heap, the rule of store.h):
 * the phases below fill them and node_release() frees them once, whichever way the node ends.
 */
struct node_work {
	struct store_node n;
	struct store_llm_call call;   /* its strings are the reply's, which lives as long */
	struct llm_reply reply;
	struct strbuf src, fb;        /* the candidate, and what the next prompt says about it */
	struct build_result br;
	struct eval_result er;
	const char *base;             /* the kernel this node edits */
	int have_src;
	double t0;
};

static void node_release(struct node_work *w)
{
	store_node_release(&w->n);
	llm_reply_release(&w->reply);
	strbuf_release(&w->src);
	strbuf_release(&w->fb);
	build_result_release(&w->br);
	eval_result_release(&w->er);
}

/*
 * The node ends without a node of its own because something outside the candidate failed:
 * the loop stops (why: taken), and the model call that was made is still recorded, with
 * what went wrong.
 */
static void stop_and_record_call(struct agent *a, enum agent_stop stop, char *why,
				 struct store_llm_call *call, const char *call_error)
{
	set_stop(a, stop, why);
	call->error = call_error;
	char *serr = NULL;
	if (store_add_call(a->store, call, &serr))
		free(serr);
}

/* What the node is (kind, parent, stage, step) and, for the builtin policy and the seed,
 * its source. 1 when there is no node to make (the walk is over, no model). */
static int node_start(struct agent *a, struct node_work *w)
{
	struct store_node *n = &w->n;
	n->iteration = a->totals.nodes + 1;
	n->ms = n->speedup = n->roofline_fraction = -1;
	if (a->o.builtin) {
		if (builtin_node(a, n, &w->src))
			return 1; /* the walk is over */
		w->have_src = 1;
	} else if (a->totals.nodes == 0 && a->o.seed_source) {
		n->kind = xstrdup("seed");
		a->step++;
	} else if (a->step_open) {
		n->kind = xstrdup("fix");
		n->attempt = a->attempt;
		n->parent = a->fail_node ? a->fail_node : a->cur_node;
		w->base = a->fail_src ? a->fail_src : a->cur_src;
	} else {
		a->step++;
		n->kind = xstrdup(a->best_src ? "optimize" : "generate");
		n->parent = a->cur_node;
		w->base = a->cur_src;
	}
	n->stage = a->stage;
	n->step = a->step;
	if (strcmp(n->kind, "seed") && !a->llm && !a->o.builtin) {
		set_stop(a, AGENT_STOP_NO_MODEL,
			 xstrdup("no model configured: only the seed kernel was judged"));
		return 1;
	}
	if (!a->o.builtin)
		maybe_profile(a, n); /* the policy reads measurements, not profiles */
	if (!a->o.builtin && !strcmp(n->kind, "seed")) {
		strbuf_addstr(&w->src, a->o.seed_source);
		w->have_src = 1;
		n->change = xstrdup("the seed kernel given with --seed-kernel");
	}
	return 0;
}

/* Asks the model and parses its reply into the source (or the bad_reply verdict). 1 when
 * the model failed (the loop stops), -1 with *err when the prompt cannot be built. */
static int node_ask_model(struct agent *a, struct node_work *w, char **err)
{
	struct store_node *n = &w->n;
	struct strbuf sys = STRBUF_INIT, user = STRBUF_INIT;
	char *perr = NULL, *lerr = NULL, *rerr = NULL;
	int rc = -1;
	if (build_prompt(a, n->kind, w->base, &sys, &user, &perr)) {
		*err = xasprintf("cannot build the prompt: %s", perr);
		goto out;
	}
	n->prompt = xstrdup(user.buf);
	struct llm_message msgs[2] = { { "system", sys.buf }, { "user", user.buf } };
	emit(a, AGENT_EV_PHASE, "llm", NULL);
	struct llm_reply *r = &w->reply;
	int lrc = llm_complete(a->llm, msgs, 2, r, &lerr);
	n->llm_s = r->seconds;
	n->tokens_in = r->in_tokens;
	n->tokens_out = r->out_tokens;
	n->cost_usd = r->cost_usd;
	w->call = (struct store_llm_call){
		.request_json = r->request_json, .response_raw = r->response_raw,
		.reply_text = r->text, .model = r->model, .stop = r->stop_raw,
		.in_tokens = r->in_tokens, .out_tokens = r->out_tokens,
		.cached_tokens = r->cached_tokens, .cache_write_tokens = r->cache_write_tokens,
		.cost_usd = r->cost_usd,
		.seconds = r->seconds, .attempts = r->attempts,
	};
	if (lrc == LLM_ERR_TOO_BIG) {
		/* the model's fault, not the backend's: say so and go on */
		w->call.error = "the reply passed the size cap; fed back to the model";
		n->verdict = xstrdup(verdict_name(VERDICT_BAD_REPLY));
		strbuf_addf(&w->fb, "Your reply could not be used: %s. Reply with the kernel only "
				    "(SEARCH/REPLACE edits, or the whole file once), no long "
				    "explanations.\n", lerr ? lerr : "it was too large");
		first_line(lerr ? lerr : "the reply was too large", &n->message);
		rc = 0;
		goto out;
	}
	if (lrc != LLM_OK) {
		a->totals.tokens_in += r->in_tokens;
		a->totals.tokens_out += r->out_tokens;
		a->totals.cost_usd += r->cost_usd;
		stop_and_record_call(a, AGENT_STOP_MODEL_ERROR,
				     xasprintf("the model failed (%s): %s", llm_error_name(lrc),
					       lerr ? lerr : "no message"), &w->call, lerr);
		rc = 1;
		goto out;
	}
	n->change = agent_change_line(r->text);
	enum reply_form form;
	char *note = NULL;
	if (reply_parse(r->text ? r->text : "", r->text ? strlen(r->text) : 0,
			r->stop == LLM_STOP_LENGTH, w->base, &w->src, &form, &note, &rerr)) {
		n->verdict = xstrdup(verdict_name(VERDICT_BAD_REPLY));
		strbuf_addf(&w->fb, "Your reply could not be used: %s.\n", rerr);
		first_line(rerr, &n->message);
	} else {
		w->have_src = 1;
		if (note) {
			/* the model learns which part of its reply was compiled */
			strbuf_addf(&w->fb, "From your reply I took %s.\n", note);
			emit(a, AGENT_EV_NOTE, w->fb.buf, NULL);
			free(note);
		}
	}
	rc = 0;
out:
	free(perr);
	free(lerr);
	free(rerr);
	strbuf_release(&sys);
	strbuf_release(&user);
	return rc;
}

/* The policy check and the compile (verdicts policy, compile_error). 1 when the compiler
 * cannot run (the loop stops). */
static int node_build(struct agent *a, struct node_work *w)
{
	struct store_node *n = &w->n;
	struct policy_report pol = POLICY_REPORT_INIT;
	char *berr = NULL;
	int rc = 0;
	n->source = xstrdup(w->src.buf);
	emit(a, AGENT_EV_PHASE, "compile", NULL);
	double c0 = now_s();
	int b = build_checked(&a->o.build, w->src.buf, w->src.len, &pol, &w->br, &berr);
	n->compile_s = now_s() - c0; /* the policy check and a cache lookup are compile time too */
	if (b == CG_REJECTED) {
		n->verdict = xstrdup(verdict_name(VERDICT_POLICY));
		if (w->br.rejected) { /* the object check's: nvcc compiled it */
			n->compile_s = w->br.cache_hit ? 0 : w->br.compile_s;
			if (w->br.cache_hit)
				a->totals.cache_hits++;
			else
				a->totals.compiles++;
		}
		feedback_policy(&pol, &w->fb);
		if (pol.nr)
			n->message = xasprintf("line %d: rule '%s'", pol.items[0].line, pol.items[0].rule);
		goto out;
	}
	if (b) {
		stop_and_record_call(a, AGENT_STOP_ENV_ERROR, xasprintf("cannot compile: %s", berr),
				     &w->call, "the candidate could not be compiled (environment)");
		rc = 1;
		goto out;
	}
	n->compile_log = w->br.log ? xstrdup(w->br.log) : NULL;
	if (w->br.cache_hit)
		a->totals.cache_hits++;
	else
		a->totals.compiles++;
	if (!w->br.ok) {
		n->verdict = xstrdup(verdict_name(VERDICT_COMPILE_ERROR));
		feedback_compile(&w->br, w->src.buf, w->src.len, a->o.build.deadline_s, &w->fb);
		const struct diag *d = diag_first_error(&w->br.diags);
		if (d) {
			struct strbuf one = STRBUF_INIT;
			diag_format_one(d, &one);
			n->message = strbuf_detach(&one, NULL);
		} else {
			n->message = xstrdup(w->br.timed_out ? "compile deadline passed" : "nvcc failed");
		}
	}
out:
	policy_report_release(&pol);
	free(berr);
	return rc;
}

/* A crash or a CUDA error: compute-sanitizer's first finding goes into the feedback. */
static void node_memcheck(struct agent *a, struct node_work *w)
{
	if (module_only(a)) {
		/* compute-sanitizer would need the reference process's cases as well: not in reach */
		if (!a->memcheck_noted)
			emit(a, AGENT_EV_NOTE, "memcheck skipped: a module that does not lower is run "
			     "on its reference process's cases, which compute-sanitizer does not get; "
			     "the verdict's message is the feedback", NULL);
		a->memcheck_noted = 1;
		return;
	}
	emit(a, AGENT_EV_PHASE, "memcheck", NULL);
	char *runner = a->o.eval.runner ? xstrdup(a->o.eval.runner) : paths_runner();
	char *merr = NULL;
	double m0 = now_s();
	if (runner && feedback_memcheck(runner, a->task, w->br.so_path, 300, &w->fb, &merr) < 0) {
		char *t = xasprintf("memcheck: %s", merr);
		emit(a, AGENT_EV_NOTE, t, NULL);
		free(t);
	}
	w->n.eval_s += now_s() - m0;
	free(merr);
	free(runner);
}

/*
 * The deadline of a candidate's evaluation: the user's (--deadline), else, once an evaluation
 * has ended in this process, four times the longest so far and at least
 * $CUTEGEN_EVAL_HANG_FLOOR seconds (120); the evaluator's 600 s for the first. A candidate that
 * never returns (a deadlocked pipeline: on the H200 a builtin family's two-CTAs-an-SM point
 * waited forever for registers) then costs a couple of minutes, not ten; the first evaluation
 * measures the baselines and the task's reference too, so the bound is generous.
 */
static double eval_deadline(const struct agent *a)
{
	if (a->o.eval.deadline_s > 0 || a->eval_wall_max <= 0)
		return a->o.eval.deadline_s;
	double floor_s = agent_hang_floor(NULL);
	return 4 * a->eval_wall_max > floor_s ? 4 * a->eval_wall_max : floor_s;
}

double agent_hang_floor(char **why)
{
	double v;
	if (opt_env_seconds("CUTEGEN_EVAL_HANG_FLOOR", 120, 0, &v) && why)
		*why = xasprintf("CUTEGEN_EVAL_HANG_FLOOR='%s' is not a positive number of seconds; "
				 "using 120", getenv("CUTEGEN_EVAL_HANG_FLOOR"));
	return v;
}

/* The evaluation of a compiled candidate. 1 when it cannot run or there is no GPU (the loop
 * stops). */
static int node_evaluate(struct agent *a, struct node_work *w)
{
	struct store_node *n = &w->n;
	struct eval_result *er = &w->er;
	char *eerr = NULL;
	int rc = 1;
	emit(a, AGENT_EV_PHASE, "evaluate", NULL);
	double e0 = now_s();
	struct eval_opts eo = a->o.eval;
	eo.deadline_s = eval_deadline(a);
	int r = a->o.recorded_evals ? eval_recorded(a, w->src.buf, er, &eerr)
				    : eval_run(&eo, a->task, w->br.so_path, er, &eerr);
	n->eval_s = now_s() - e0;
	if (!r && er->verdict != VERDICT_TIMEOUT && er->wall_s > a->eval_wall_max)
		a->eval_wall_max = er->wall_s;
	if (r) {
		a->stop_code = er->code; /* a module's reference: its own fault, a hang, the machine */
		stop_and_record_call(a, AGENT_STOP_ENV_ERROR, xasprintf("cannot evaluate: %s", eerr),
				     &w->call, "the candidate could not be evaluated (environment)");
		goto out;
	}
	a->totals.evals++;
	if (er->verdict == VERDICT_NO_DEVICE) {
		/* not the kernel's fault: no later node can do better here */
		stop_and_record_call(a, AGENT_STOP_ENV_ERROR,
				     xasprintf("cannot evaluate: %s", er->message), &w->call,
				     "the candidate could not be evaluated (no GPU)");
		goto out;
	}
	n->evaluator_s = er->wall_s;
	if (a->o.record_evals && !a->o.recorded_evals)
		record_eval(a, w->src.buf, "", er);
	n->verdict = xstrdup(verdict_name(er->verdict));
	if (er->report)
		n->report_json = json_dumps(er->report, JSON_COMPACT | JSON_SORT_KEYS);
	if (eval_passed(er)) {
		n->ms = er->ms;
		n->speedup = er->speedup;
		n->roofline_fraction = er->roofline_fraction;
		n->message = xstrdup("correct");
	} else {
		feedback_eval(er, &w->fb);
		first_line(er->message && *er->message ? er->message : verdict_name(er->verdict),
			   &n->message);
		if ((er->verdict == VERDICT_CUDA_ERROR || er->verdict == VERDICT_CRASH) &&
		    !a->o.recorded_evals && !a->o.no_memcheck)
			node_memcheck(a, w);
	}
	rc = 0;
out:
	free(eerr);
	return rc;
}

/* Judges the node, stores it with its model call, and applies it to the loop's state. */
static int node_record(struct agent *a, struct node_work *w, char **err)
{
	struct store_node *n = &w->n;
	if (!n->verdict)
		n->verdict = xstrdup(verdict_name(VERDICT_BAD_REPLY));
	n->feedback = w->fb.len ? strbuf_detach(&w->fb, NULL) : NULL;
	n->outcome = xstrdup(judge(a, n));
	n->total_s = now_s() - w->t0;
	if (store_add_node(a->store, n, a->llm && strcmp(n->kind, "seed") ? &w->call : NULL, err))
		return -1;
	if (!strcmp(n->outcome, "best")) {
		free(a->best_so);
		a->best_so = w->br.ok ? xstrdup(w->br.so_path) : NULL;
	}
	apply_node(a, n, 0);
	if (!strcmp(n->outcome, "best") && a->o.run_dir) {
		char *path = xasprintf("%s/best.cu", a->o.run_dir);
		if (write_file_atomic(path, n->source, strlen(n->source)))
			emit(a, AGENT_EV_NOTE, "cannot write best.cu in the run directory", NULL);
		free(path);
	}
	emit(a, AGENT_EV_NODE, NULL, n);
	return 0;
}

/*
 * A node that something outside the candidate cut short is not stored (a resume makes it
 * again), but its time was spent: the run keeps it (store_run_add_cut), so the summary and
 * `show` add up.
 */
static void cut_short(struct agent *a, const struct store_node *n, double t0, int compiles)
{
	double ahead = n->compile_ahead_s > 0 ? n->compile_ahead_s : 0;
	double compile = n->compile_s > 0 ? n->compile_s : 0;
	struct store_cut c = { now_s() - t0, n->llm_s, compile + ahead, n->eval_s, compiles };
	a->totals.wall_s += c.total_s;
	a->totals.cut_s += c.total_s;
	a->totals.llm_s += n->llm_s > 0 ? n->llm_s : 0;
	a->totals.compile_s += compile;
	a->totals.compile_ahead_s += ahead;
	a->totals.eval_s += n->eval_s > 0 ? n->eval_s : 0;
	char *err = NULL;
	if (store_run_add_cut(a->store, &c, &err)) {
		emit(a, AGENT_EV_NOTE, err, NULL);
		free(err);
	}
}

/* One node: ask, parse, check, compile, evaluate, judge, store, apply. 0, or -1 with *err
 * (a prompt that cannot be built, a store that cannot be written). */
static int run_node(struct agent *a, char **err)
{
	struct node_work w = { .reply = LLM_REPLY_INIT, .src = STRBUF_INIT, .fb = STRBUF_INIT,
			       .br = BUILD_RESULT_INIT, .er = EVAL_RESULT_INIT, .t0 = now_s() };
	int compiles = a->totals.compiles;
	int rc = node_start(a, &w);
	int started = !rc;
	if (!rc && !a->o.builtin && strcmp(w.n.kind, "seed"))
		rc = node_ask_model(a, &w, err);
	if (!rc && w.have_src)
		rc = node_build(a, &w);
	if (!rc && w.have_src && !w.n.verdict)
		rc = node_evaluate(a, &w);
	if (!rc)
		rc = node_record(a, &w, err);
	else if (rc == 1 && started) /* stopped by the model, the compiler or the runner */
		cut_short(a, &w.n, w.t0, a->totals.compiles - compiles);
	node_release(&w);
	return rc < 0 ? -1 : 0;
}

int agent_run(struct agent *a, char **err)
{
	if (a->stop == AGENT_RUNNING && a->totals.nodes == 0) {
		enter_stage(a, 0, 0);
	} else if (a->stop == AGENT_RUNNING) {
		char *t = xasprintf("resuming at node %d, stage %d/%zu: %s", a->totals.nodes + 1, a->stage,
				    a->sm.n - 1, a->sm.stages[a->stage].name);
		emit(a, AGENT_EV_STAGE, t, NULL);
		free(t);
	}
	int rc = 0;
	while (budget_left(a))
		if (run_node(a, err)) {
			rc = -1;
			break;
		}
	/* the loop is over: the kept reference ends here, while the caller's signal handlers
	 * (a second ^C kills it, reference_kill_all) are still in place; so do the compiles of a
	 * stage the walk did not finish (a wall limit, ^C) */
	reference_keep_drop(&a->ref_keep);
	prebuild_stop(a);
	return rc;
}
