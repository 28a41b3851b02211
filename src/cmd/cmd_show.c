/*
 * `cutegen show RUN_DIR [--json]`: the history of one run as a table (node, iteration, stage,
 * kind, verdict, outcome, time, speedup, roofline fraction, what changed) with totals, or as
 * JSON (history_to_json).
 */
#include "cmd/cutegen.h"
#include "store/history.h"
#include "report/report.h"
#include "util/opt.h"

#include <stdio.h>
#include <stdlib.h>

int cmd_show(int argc, char **argv)
{
	int json = 0, npos = 0;
	struct opt opts[] = { { "json", 0, OPT_BOOL, &json } };
	char oerr[256];
	if (opt_parse(argc, argv, opts, 1, &npos, oerr, sizeof(oerr))) {
		error("%s; see 'cutegen help show'", oerr);
		return EXIT_USAGE;
	}
	if (npos != 1) {
		error("usage: cutegen show RUN_DIR [--json]");
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
