/*
 * `cutegen export RUN_DIR --out DIR [--name NAME] [--arch sm_XY]`: writes the run's best
 * kernel as a standalone library (export.h lists the files).
 */
#include "cmd/cutegen.h"
#include "report/export.h"
#include "store/history.h"
#include "util/opt.h"

#include <stdio.h>
#include <stdlib.h>

int cmd_export(int argc, char **argv)
{
	struct export_opts o = { 0 };
	int npos = 0;
	struct opt opts[] = {
		{ "out", 'o', OPT_STRING, &o.out_dir },
		{ "name", 0, OPT_STRING, &o.name },
		{ "arch", 0, OPT_STRING, &o.arch },
		{ "cutlass-include", 0, OPT_STRING, &o.cutlass_include },
	};
	char oerr[256];
	if (opt_parse(argc, argv, opts, 4, &npos, oerr, sizeof(oerr))) {
		error("%s; see 'cutegen help export'", oerr);
		return EXIT_USAGE;
	}
	if (npos != 1 || !o.out_dir) {
		error("usage: cutegen export RUN_DIR --out DIR [--name NAME] [--arch sm_XY]");
		return EXIT_USAGE;
	}
	struct run_history h;
	char *err = NULL, *name = NULL;
	if (history_load(&h, argv[1], &err)) {
		error("%s", err);
		free(err);
		history_release(&h);
		return EXIT_INPUT;
	}
	int rc = EXIT_OK;
	if (export_run(&h, &o, &name, &err)) {
		error("%s", err);
		free(err);
		rc = h.best_node ? EXIT_INPUT : EXIT_VERDICT;
	} else {
		printf("exported node %ld of %s to %s: %s.cu, %s.h, CMakeLists.txt, %s_torch.cpp, "
		       "setup.py, example.py\n", h.best, argv[1], o.out_dir, name, name, name);
	}
	free(name);
	history_release(&h);
	return rc;
}
