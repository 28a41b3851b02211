/*
 * A finished (or still running, or killed) run as the inspection commands see it: the run row,
 * every node, the best node with its source and runner report, the latest profile summary, and
 * totals of where the tokens, money and time went. Read from RUN_DIR/run.db through store.h.
 * Not for: rendering (report.h) or changing a run (agent.c).
 *
 * Everything here came from a database file, so it is untrusted: renderers escape every string.
 *
 * Usage:
 *   1. struct run_history h; history_load(&h, run_dir, &err)  (0, or -1 with a heap message);
 *   2. read the fields; history_to_json() for --json;
 *   3. history_release(&h).
 */
#ifndef CUTEGEN_HISTORY_H
#define CUTEGEN_HISTORY_H

#include <jansson.h>
#include <stddef.h>

#include "store/store.h"

/* Caps on what a report renders from a database (a huge blob fails cleanly, see history.c). */
#define HISTORY_MAX_NODES 100000
#define HISTORY_MAX_SOURCE (4u << 20)

struct run_history {
	char *dir;                 /* the run directory as given */
	int schema_version;
	struct store_run run;
	struct store_node *nodes;  /* id order */
	size_t n;
	long best;                 /* the best verified node (run.best_node, or the last node the
				      agent marked best when the run did not finish); 0 = none */
	const struct store_node *best_node; /* points into nodes, or NULL */
	char *best_report;         /* the best node's runner report (JSON text), or NULL */
	char *profile;             /* the latest profile summary in the store, or NULL */
	long profile_node;         /* the node it was stored with */
	/* the best node's report */
	double speedup, speedup_cublas, speedup_torch, roofline_fraction, ms; /* < 0 unknown */
	/* `cutegen run --torch`: the best kernel judged against PyTorch eager and torch.compile
	 * (run.torch_json read back; torch.asked 0 when the run was not asked). With it,
	 * speedup_torch is its eager figure. */
	struct store_torch torch;
	/* totals over the nodes, and the run's nodes cut short (run.cut_*) */
	long tokens_in, tokens_out, passed;
	double cost_usd, llm_s, compile_s, eval_s, profile_s, total_s;
	double compile_ahead_s;    /* compiles made ahead, in parallel (part of compile_s) */
	double cut_s;              /* of total_s: nodes cut short by an environment error */
	int stages;                /* highest stage index + 1 */
};

/* Loads the run in run_dir, opening run.db read-only (STORE_READONLY: nothing is written, no
 * lock is taken). Errors: no run.db, not a database, an empty or damaged one, a newer schema,
 * no run row. */
int history_load(struct run_history *h, const char *run_dir, char **err);
void history_release(struct run_history *h);

/* The whole history as a JSON object (new reference): run, totals, best, nodes. */
json_t *history_to_json(const struct run_history *h);

/* 1 when dir holds a run.db. */
int history_is_run_dir(const char *dir);

#endif
