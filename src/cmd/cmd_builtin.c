/*
 * `cutegen builtin TASK`: what the builtin agent would tune for a task (its kernel family, the
 * parameters with their values, the start point and the stages), and with --source the
 * candidate kernel for one setting. Printing only: the family and policy live in agent/builtin_policy.c.
 */
#include "agent/builtin_policy.h"
#include "cmd/cutegen.h"
#include "common/task_module.h"
#include "common/task.h"
#include "util/opt.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *space_json(const struct builtin_space *sp, const struct builtin_config *cfg)
{
	json_t *params = json_array(), *stages = json_array();
	for (int i = 0; i < sp->nparams; i++) {
		json_t *vals = json_array();
		for (int v = 0; v < sp->params[i].nvals; v++)
			json_array_append_new(vals, json_string(sp->params[i].vals[v]));
		json_array_append_new(params, json_pack("{s:s, s:o, s:s, s:s}", "name",
							sp->params[i].name, "values", vals, "start",
							sp->params[i].vals[sp->start[i]], "value",
							sp->params[i].vals[cfg->v[i]]));
	}
	for (int s = 0; s < sp->nstages; s++) {
		json_t *ps = json_array();
		for (int k = 0; k < sp->stages[s].nparams; k++)
			json_array_append_new(ps, json_string(sp->params[sp->stages[s].params[k]].name));
		json_array_append_new(stages, json_pack("{s:s, s:o}", "name", sp->stages[s].name,
							"params", ps));
	}
	struct strbuf c = STRBUF_INIT;
	builtin_config_format(sp, cfg, &c);
	json_t *o = json_pack("{s:s, s:s, s:o, s:o, s:s}", "family", sp->family, "file", sp->file,
			      "params", params, "stages", stages, "config", c.buf);
	strbuf_release(&c);
	return o;
}

static void print_space(const struct task *t, const struct builtin_space *sp)
{
	printf("%s: the builtin %s family (%s)\n", t->name, sp->family, sp->file);
	printf("parameters (start in brackets):\n");
	for (int i = 0; i < sp->nparams; i++) {
		printf("   %-16s", sp->params[i].name);
		for (int v = 0; v < sp->params[i].nvals; v++)
			printf(v == sp->start[i] ? " [%s]" : " %s", sp->params[i].vals[v]);
		printf("\n");
	}
	printf("stages: 0 start");
	for (int s = 0; s < sp->nstages; s++) {
		printf(", %d %s (", s + 1, sp->stages[s].name);
		for (int k = 0; k < sp->stages[s].nparams; k++)
			printf("%s%s", k ? " " : "", sp->params[sp->stages[s].params[k]].name);
		printf(")");
	}
	printf("\n");
}

/* The walk when every candidate passes as fast as the start: each stage around the start. */
static void print_plan(const struct task *t, const struct builtin_space *sp)
{
	struct builtin_tried *tried = NULL;
	int n = 0, stage;
	size_t alloc = 0;
	struct builtin_config c;
	char *what;
	while (!builtin_next(sp, t, tried, n, &c, &stage, &what)) {
		printf("%3d  stage %d  %s\n", n + 1, stage, what);
		free(what);
		ALLOC_GROW(tried, (size_t)n + 1, alloc);
		tried[n++] = (struct builtin_tried){ c, 1, 1.0, -1, 0 }; /* roofline unknown: no early stop */
	}
	printf("%d candidates (when none beats the start; each new best moves the next stages)\n", n);
	free(tried);
}

int cmd_builtin(int argc, char **argv)
{
	const char *set = NULL, *arch = NULL;
	int as_json = 0, source = 0, plan = 0, npos = 0, rc = EXIT_OK;
	char oerr[256];
	struct opt opts[] = {
		{ "set", 0, OPT_STRING, &set },
		{ "source", 0, OPT_BOOL, &source },
		{ "plan", 0, OPT_BOOL, &plan },
		{ "arch", 0, OPT_STRING, &arch },
		{ "json", 0, OPT_BOOL, &as_json },
	};
	if (opt_parse(argc, argv, opts, ARRAY_SIZE(opts), &npos, oerr, sizeof(oerr))) {
		error("%s; 'cutegen help builtin' lists the options", oerr);
		return EXIT_USAGE;
	}
	if (npos != 1) {
		error("builtin needs one task (got %d): usage: cutegen builtin TASK [--set 'NAME=V ...'] "
		      "[--source] [--json]", npos);
		return EXIT_USAGE;
	}
	if (source + as_json + plan > 1) {
		error("--source prints a kernel, --json the family, --plan the walk: give one");
		return EXIT_USAGE;
	}
	char *err = NULL;
	struct builtin_space sp;
	memset(&sp, 0, sizeof(sp));
	int tcode = CG_INPUT;
	struct module_desc *md = NULL;
	struct task *t = cli_task_load_any(argv[1], 0, &md, &tcode);
	if (!t && md) {
		error("module '%s' is not one of cutegen's built-in ops (%s): the builtin agent has no "
		      "kernel family for it; 'cutegen run %s' with a model (OPENAI_API_KEY, "
		      "ANTHROPIC_API_KEY or --backend; 'cutegen llm' shows them) generates kernels for it",
		      argv[1], md->lowered_why ? md->lowered_why : "not lowered", argv[1]);
		module_desc_free(md);
		return EXIT_ENV;
	}
	if (!t)
		return exit_status_for(tcode);
	const char *dir = getenv("CUTEGEN_BUILTIN_DIR");
	if (builtin_space_for(t, arch, dir && *dir ? dir : NULL, &sp, &err)) {
		error("%s", err);
		rc = EXIT_INPUT;
		goto out;
	}
	struct builtin_config cfg;
	builtin_start(&sp, t, &cfg);
	if (set && builtin_config_parse(&sp, set, &cfg, &err)) {
		error("--set: %s", err);
		rc = EXIT_USAGE;
		goto out;
	}
	if (source) {
		struct strbuf src = STRBUF_INIT;
		builtin_render(&sp, t, &cfg, &src);
		fwrite(src.buf, 1, src.len, stdout);
		strbuf_release(&src);
	} else if (plan) {
		print_plan(t, &sp);
	} else if (as_json) {
		json_t *o = space_json(&sp, &cfg);
		json_dumpf(o, stdout, JSON_INDENT(2));
		printf("\n");
		json_decref(o);
	} else {
		print_space(t, &sp);
	}
out:
	free(err);
	builtin_space_release(&sp);
	task_free(t);
	return rc;
}
