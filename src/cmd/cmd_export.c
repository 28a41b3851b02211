/*
 * `cutegen export RUN_DIR --out DIR [--name NAME] [--arch sm_XY]`: writes the run's best
 * kernel as a standalone library (export.h lists the files); a module run also gets a ModelNew.
 * `cutegen export --kernel K.cu --task M.py --out DIR`: a kernel and its module, no run.
 */
#include "cmd/cutegen.h"
#include "eval/reference.h"
#include "report/export.h"
#include "store/history.h"
#include "util/err.h"
#include "util/opt.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>

#define KERNEL_MAX (1 << 20)

/* `cutegen export --kernel K.cu --task M.py --out DIR`: ModelNew for a kernel of a module. */
static int export_module(const char *kernel, const char *task, int npos, struct export_opts *o)
{
	if (!kernel || !task || npos != 0 || !o->out_dir || o->kernel_only) {
		error("usage: cutegen export --kernel K.cu --task MODULE.py --out DIR [--name NAME] "
		      "[--arch sm_XY] [--force] (no RUN_DIR, no --kernel-only)");
		return EXIT_USAGE;
	}
	if (!task_spec_is_module(task)) {
		error("--task '%s' is not a module file: export --kernel takes a KernelBench-format "
		      "module (.py); a JSON or built-in task is exported from a run (cutegen export RUN_DIR)",
		      task);
		return EXIT_USAGE;
	}
	struct strbuf src = STRBUF_INIT;
	int r = strbuf_read_file(&src, kernel, KERNEL_MAX);
	if (r) {
		if (r == CG_INPUT_TOOBIG)
			error("kernel '%s' is larger than 1 MiB", kernel);
		else
			error("cannot read kernel '%s': %s", kernel, strbuf_read_strerror(r, kernel));
		strbuf_release(&src);
		return EXIT_INPUT;
	}
	struct module_desc *md = NULL;
	char *err = NULL, *name = NULL;
	int rc = EXIT_OK, dr = reference_describe(task, &md, &err);
	if (dr) {
		error("%s", err);
		rc = exit_status_for(dr);
		goto out;
	}
	int er = export_kernel_module(src.buf, md, o, &name, &err);
	if (er) {
		error("%s", err);
		rc = er == CG_USAGE ? exit_status_for(er) : EXIT_INPUT;
		goto out;
	}
	printf("exported %s with module %s to %s: %s.cu, %s_model.py (ModelNew; python3 %s/%s_model.py "
	       "--check compares it with Model on a GPU), %s_reference.py\n", kernel, md->name,
	       o->out_dir, name, name, o->out_dir, name, name);
	fprintf(stderr, "note: cutegen has not judged this kernel here; 'cutegen eval %s --task %s' "
		"does\n", kernel, task);
out:
	free(err);
	free(name);
	module_desc_free(md);
	strbuf_release(&src);
	return rc;
}

int cmd_export(int argc, char **argv)
{
	struct export_opts o = { 0 };
	int npos = 0, verified = 1;
	const char *kernel = NULL, *task = NULL;
	struct opt opts[] = {
		{ "kernel", 0, OPT_STRING, &kernel },
		{ "task", 0, OPT_STRING, &task },
		{ "out", 'o', OPT_STRING, &o.out_dir },
		{ "name", 0, OPT_STRING, &o.name },
		{ "arch", 0, OPT_STRING, &o.arch },
		{ "cutlass-include", 0, OPT_STRING, &o.cutlass_include },
		{ "kernel-only", 0, OPT_BOOL, &o.kernel_only },
		{ "force", 'f', OPT_BOOL, &o.force },
	};
	char *note = NULL;
	o.verified_out = &verified;
	o.note_out = &note;
	char oerr[256];
	if (opt_parse(argc, argv, opts, (int)ARRAY_SIZE(opts), &npos, oerr, sizeof(oerr))) {
		error("%s; see 'cutegen help export'", oerr);
		return EXIT_USAGE;
	}
	if (kernel || task)
		return export_module(kernel, task, npos, &o);
	if (npos != 1 || !o.out_dir) {
		error("usage: cutegen export RUN_DIR --out DIR [--name NAME] [--arch sm_XY] "
		      "[--kernel-only] [--force]\n   or: cutegen export --kernel K.cu --task MODULE.py "
		      "--out DIR [--name NAME] [--arch sm_XY] [--force]");
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
	if (note)
		fprintf(stderr, "warning: %s\n", note);
	free(note);
	if (!er && !verified)
		fprintf(stderr, "warning: the kernel was not verified on %s (CMakeLists.txt says on "
			"which it was); judge it there with 'cutegen eval'\n", o.arch);
	free(name);
	history_release(&h);
	return rc;
}
