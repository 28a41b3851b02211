/*
 * `cutegen export RUN_DIR --out DIR [--name NAME] [--arch sm_XY]`: writes the run's best
 * kernel as a standalone library (export.h lists the files).
 */
#include "cmd/cutegen.h"
#include "report/export.h"
#include "store/history.h"
#include "util/err.h"
#include "util/opt.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>

int cmd_export(int argc, char **argv)
{
	struct export_opts o = { 0 };
	int npos = 0, verified = 1;
	struct opt opts[] = {
		{ "out", 'o', OPT_STRING, &o.out_dir },
		{ "name", 0, OPT_STRING, &o.name },
		{ "arch", 0, OPT_STRING, &o.arch },
		{ "cutlass-include", 0, OPT_STRING, &o.cutlass_include },
		{ "kernel-only", 0, OPT_BOOL, &o.kernel_only },
		{ "force", 'f', OPT_BOOL, &o.force },
	};
	o.verified_out = &verified;
	char oerr[256];
	if (opt_parse(argc, argv, opts, (int)ARRAY_SIZE(opts), &npos, oerr, sizeof(oerr))) {
		error("%s; see 'cutegen help export'", oerr);
		return EXIT_USAGE;
	}
	if (npos != 1 || !o.out_dir) {
		error("usage: cutegen export RUN_DIR --out DIR [--name NAME] [--arch sm_XY] "
		      "[--kernel-only] [--force]");
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
	int rc = EXIT_OK, er = export_run(&h, &o, &name, &err);
	if (er) {
		error("%s", err);
		free(err);
		rc = er == CG_USAGE ? exit_status_for(er) : h.best_node ? EXIT_INPUT : EXIT_VERDICT;
	} else if (o.kernel_only) {
		printf("exported node %ld of %s to %s/%s.cu: the kernel as verified (cutegen build, "
		       "cutegen eval take it)\n", h.best, argv[1], o.out_dir, name);
	} else {
		printf("exported node %ld of %s to %s: %s.cu, %s.h, CMakeLists.txt, %s_torch.cpp, "
		       "setup.py, example.py\n", h.best, argv[1], o.out_dir, name, name, name);
	}
	if (!er && !verified)
		fprintf(stderr, "warning: the kernel was not verified on %s (CMakeLists.txt says on "
			"which it was); judge it there with 'cutegen eval'\n", o.arch);
	free(name);
	history_release(&h);
	return rc;
}
