/*
 * Loading a run for inspection (see history.h): the store's rows plus what reports derive from
 * them (the best node, its report's metrics, totals).
 */
#include "common/verdict.h"
#include "store/history.h"
#include "util/fsutil.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

int history_is_run_dir(const char *dir)
{
	char *p = xasprintf("%s/run.db", dir);
	int r = file_exists(p);
	free(p);
	return r;
}

static double num_at(json_t *o, const char *a, const char *b)
{
	json_t *v = json_object_get(json_object_get(o, a), b);
	return json_is_number(v) ? json_number_value(v) : -1;
}

static void read_report(struct run_history *h)
{
	h->speedup = h->speedup_cublas = h->speedup_torch = h->roofline_fraction = h->ms = -1;
	if (!h->best_node)
		return;
	h->speedup = h->best_node->speedup;
	h->roofline_fraction = h->best_node->roofline_fraction;
	h->ms = h->best_node->ms;
	if (!h->best_report)
		return;
	json_t *rep = json_loads(h->best_report, 0, NULL);
	if (!json_is_object(rep)) {
		json_decref(rep);
		return;
	}
	/* a stored report is the runner's report, or an evaluation wrapping it */
	json_t *inner = json_object_get(rep, "report");
	json_t *r = json_is_object(inner) ? inner : rep;
	h->speedup_cublas = num_at(r, "metrics", "speedup_vs_cublas");
	h->speedup_torch = num_at(r, "metrics", "speedup_vs_torch");
	if (h->speedup < 0)
		h->speedup = num_at(r, "metrics", "speedup_vs_baseline");
	if (h->roofline_fraction < 0)
		h->roofline_fraction = num_at(r, "metrics", "roofline_fraction");
	json_decref(rep);
}

int history_load(struct run_history *h, const char *run_dir, char **err)
{
	memset(h, 0, sizeof(*h));
	h->dir = xstrdup(run_dir);
	if (!dir_exists(run_dir)) {
		struct stat st;
		*err = stat(run_dir, &st) ? xasprintf("run directory '%s' does not exist", run_dir)
					  : xasprintf("'%s' is not a directory; a run is a directory "
						      "holding run.db (cutegen run --out DIR)", run_dir);
		return -1;
	}
	struct store *s = store_open(run_dir, STORE_READONLY, err); /* inspecting never writes */
	if (!s)
		return -1;
	int rc = -1;
	h->schema_version = store_schema_version(s);
	if (store_run_get(s, &h->run, err) || store_nodes(s, &h->nodes, &h->n, err))
		goto out;
	if (h->n > HISTORY_MAX_NODES) {
		*err = xasprintf("run store '%s' holds %zu nodes, more than a report renders (%d)",
				 store_path(s), h->n, HISTORY_MAX_NODES);
		goto out;
	}
	h->best = h->run.best_node;
	if (h->best <= 0)
		for (size_t i = 0; i < h->n; i++)
			if (h->nodes[i].outcome && !strcmp(h->nodes[i].outcome, "best"))
				h->best = h->nodes[i].id;
	for (size_t i = 0; i < h->n; i++) {
		const struct store_node *x = &h->nodes[i];
		if (x->id == h->best)
			h->best_node = x;
		h->tokens_in += x->tokens_in;
		h->tokens_out += x->tokens_out;
		h->cost_usd += x->cost_usd;
		h->llm_s += x->llm_s > 0 ? x->llm_s : 0;
		h->compile_s += x->compile_s > 0 ? x->compile_s : 0;
		h->eval_s += x->eval_s > 0 ? x->eval_s : 0;
		h->profile_s += x->profile_s > 0 ? x->profile_s : 0;
		h->total_s += x->total_s > 0 ? x->total_s : 0;
		h->compile_s += x->compile_ahead_s > 0 ? x->compile_ahead_s : 0;
		h->compile_ahead_s += x->compile_ahead_s > 0 ? x->compile_ahead_s : 0;
		h->passed += verdict_parse(x->verdict) == VERDICT_PASS;
		if (x->stage + 1 > h->stages)
			h->stages = x->stage + 1;
		if (x->profile_sha[0])
			h->profile_node = x->id;
	}
	/* work that left no node: its time is the run's */
	h->total_s += h->run.cut_s;
	h->cut_s = h->run.cut_s;
	h->llm_s += h->run.cut_llm_s;
	h->compile_s += h->run.cut_compile_s;
	h->eval_s += h->run.cut_eval_s;
	if (!h->best_node)
		h->best = 0;
	if (h->best_node && h->best_node->source &&
	    strlen(h->best_node->source) > HISTORY_MAX_SOURCE) {
		*err = xasprintf("run store '%s': the best kernel (node %ld) is larger than %u bytes",
				 store_path(s), h->best, HISTORY_MAX_SOURCE);
		goto out;
	}
	if (h->best_node)
		h->best_report = store_get_blob(s, h->best_node->report_sha, NULL);
	if (h->profile_node)
		for (size_t i = 0; i < h->n; i++)
			if (h->nodes[i].id == h->profile_node)
				h->profile = store_get_blob(s, h->nodes[i].profile_sha, NULL);
	read_report(h);
	store_torch_parse(h->run.torch_json, &h->torch);
	if (h->torch.asked)
		h->speedup_torch = h->best_node ? h->torch.speedup_eager : -1;
	rc = 0;
out:
	store_close(s);
	return rc;
}

void history_release(struct run_history *h)
{
	free(h->dir);
	store_run_release(&h->run);
	store_nodes_free(h->nodes, h->n);
	free(h->best_report);
	free(h->profile);
	memset(h, 0, sizeof(*h));
}

static json_t *num_or_null(double v)
{
	return v < 0 ? json_null() : json_real(v);
}

static json_t *str_or_null(const char *s)
{
	json_t *v = s ? json_string(s) : json_null();
	return v ? v : json_string("(not UTF-8)");
}

json_t *history_to_json(const struct run_history *h)
{
	json_t *nodes = json_array();
	for (size_t i = 0; i < h->n; i++) {
		const struct store_node *x = &h->nodes[i];
		json_t *o = json_object();
		json_object_set_new(o, "id", json_integer(x->id));
		json_object_set_new(o, "iteration", json_integer(x->iteration));
		json_object_set_new(o, "stage", json_integer(x->stage));
		json_object_set_new(o, "step", json_integer(x->step));
		json_object_set_new(o, "attempt", json_integer(x->attempt));
		json_object_set_new(o, "parent", x->parent > 0 ? json_integer(x->parent) : json_null());
		json_object_set_new(o, "kind", str_or_null(x->kind));
		json_object_set_new(o, "verdict", str_or_null(x->verdict));
		json_object_set_new(o, "outcome", str_or_null(x->outcome));
		json_object_set_new(o, "message", str_or_null(x->message));
		json_object_set_new(o, "change", str_or_null(x->change));
		json_object_set_new(o, "has_profile", json_boolean(x->profile_sha[0] != 0));
		json_object_set_new(o, "ms", num_or_null(x->ms));
		json_object_set_new(o, "speedup", num_or_null(x->speedup));
		json_object_set_new(o, "roofline_fraction", num_or_null(x->roofline_fraction));
		json_object_set_new(o, "total_s", num_or_null(x->total_s));
		json_object_set_new(o, "tokens_in", json_integer(x->tokens_in));
		json_object_set_new(o, "tokens_out", json_integer(x->tokens_out));
		json_object_set_new(o, "cost_usd", json_real(x->cost_usd));
		json_array_append_new(nodes, o);
	}
	json_t *best = json_null();
	if (h->best_node)
		best = json_pack("{s:I, s:o, s:o, s:o, s:o, s:o}", "node", (json_int_t)h->best,
				 "ms", num_or_null(h->ms), "speedup", num_or_null(h->speedup),
				 "speedup_vs_cublas", num_or_null(h->speedup_cublas),
				 "speedup_vs_torch", num_or_null(h->speedup_torch),
				 "roofline_fraction", num_or_null(h->roofline_fraction));
	json_t *totals = json_pack("{s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:I}",
				   "tokens_in", (json_int_t)h->tokens_in,
				   "tokens_out", (json_int_t)h->tokens_out, "cost_usd", h->cost_usd,
				   "llm_s", h->llm_s, "compile_s", h->compile_s,
				   "compile_ahead_s", h->compile_ahead_s, "eval_s", h->eval_s,
				   "profile_s", h->profile_s, "total_s", h->total_s, "cut_s", h->cut_s,
				   "passed", (json_int_t)h->passed);
	json_t *o = json_object();
	json_object_set_new(o, "dir", json_string(h->dir));
	json_object_set_new(o, "task", str_or_null(h->run.task_name));
	json_object_set_new(o, "status", str_or_null(h->run.status));
	json_object_set_new(o, "stop_reason", str_or_null(h->run.stop_reason));
	json_object_set_new(o, "started", json_real(h->run.started));
	json_object_set_new(o, "finished", h->run.finished > 0 ? json_real(h->run.finished) : json_null());
	json_object_set_new(o, "resumes", json_integer(h->run.resumes));
	json_object_set_new(o, "schema_version", json_integer(h->schema_version));
	json_object_set_new(o, "best", best ? best : json_null());
	json_t *tj = h->run.torch_json ? json_loads(h->run.torch_json, 0, NULL) : NULL;
	json_object_set_new(o, "torch", json_is_object(tj) ? tj : json_null());
	if (tj && !json_is_object(tj))
		json_decref(tj);
	json_object_set_new(o, "totals", totals ? totals : json_null());
	json_object_set_new(o, "nodes", nodes);
	return o;
}
