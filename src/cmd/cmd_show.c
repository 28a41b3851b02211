/*
 * `cutegen show RUN_DIR [--json]`: the history of one run as a table (node, iteration, stage,
 * kind, verdict, outcome, time, speedup, roofline fraction, what changed) with totals, or as
 * JSON (history_to_json); with --kernel, the source of its best kernel (or of node N) exactly
 * as it was judged, for `cutegen build` and `cutegen eval`.
 */
#include "cmd/cutegen.h"
#include "store/history.h"
#include "report/report.h"
#include "util/opt.h"

#include <stdio.h>
#include <stdlib.h>

/* --kernel: the best node's (or node N's) source on stdout; consumes h. */
static int show_kernel(struct run_history *h, const char *dir, int node)
{
	const struct store_node *n = node ? NULL : h->best_node;
	for (size_t i = 0; node && i < h->n; i++)
		if (h->nodes[i].id == node)
			n = &h->nodes[i];
	int rc = EXIT_OK;
	if (node && !n) {
		error("run '%s' has no node %d (it has %zu)", dir, node, h->n);
		rc = EXIT_USAGE;
	} else if (!n) {
		error("run '%s' has no correct kernel; 'cutegen show %s' lists the nodes, and "
		      "--kernel --node N prints any node's source", dir, dir);
		rc = EXIT_VERDICT;
	} else if (!n->source) {
		error("node %ld of run '%s' has no source (its reply held no kernel)", n->id, dir);
		rc = EXIT_VERDICT;
	} else {
		fputs(n->source, stdout);
	}
	history_release(h);
	return rc;
}

int cmd_show(int argc, char **argv)
{
	int json = 0, npos = 0, kernel = 0, node = 0;
	struct opt opts[] = {
		{ "json", 0, OPT_BOOL, &json },
		{ "kernel", 0, OPT_BOOL, &kernel },
		{ "node", 0, OPT_INT, &node },
	};
	char oerr[256];
	if (opt_parse(argc, argv, opts, 3, &npos, oerr, sizeof(oerr))) {
		error("%s; see 'cutegen help show'", oerr);
		return EXIT_USAGE;
	}
	if (npos != 1) {
		error("usage: cutegen show RUN_DIR [--json | --kernel [--node N]]");
		return EXIT_USAGE;
	}
	if (node && !kernel) {
		error("--node N goes with --kernel (the source of node N)");
		return EXIT_USAGE;
	}
	if (kernel && json) {
		error("give --kernel or --json, not both");
		return EXIT_USAGE;
	}
	struct run_history h;
	char *err = NULL;
	if (history_load(&h, argv[1], &err)) {
		error("%s", err);
		free(err);
		history_release(&h);
		return EXIT_INPUT;
	}
	if (kernel)
		return show_kernel(&h, argv[1], node);
	if (json) {
		json_t *o = history_to_json(&h);
		char *s = json_dumps(o, JSON_INDENT(2));
		printf("%s\n", s ? s : "{}");
		free(s);
		json_decref(o);
	} else {
		struct strbuf sb = STRBUF_INIT;
		report_show_text(&sb, &h);
		fwrite(sb.buf, 1, sb.len, stdout);
		strbuf_release(&sb);
	}
	history_release(&h);
	return EXIT_OK;
}
