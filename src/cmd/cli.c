/*
 * Helpers every subcommand shares: messages in the house format, help pages, and what eval and
 * profile share (their flags, the task, the kernel built). Kept out of main.c so that the unit
 * tests link them too.
 */
#include "cmd/cutegen.h"
#include "eval/build.h"
#include "eval/eval.h"
#include "eval/reference.h"
#include "llm/llm_config.h"
#include "util/strbuf.h"
#include "common/embedded.h"
#include "eval/policy.h"
#include "agent/agent.h"
#include "agent/feedback.h"
#include "common/task.h"
#include "util/fsutil.h"
#include "util/opt.h"
#include "util/xalloc.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char last_error[1024];

void error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	va_start(ap, fmt);
	vreportf("error: ", fmt, ap);
	va_end(ap);
}

const char *error_last(void)
{
	return last_error;
}

void warning(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreportf("warning: ", fmt, ap);
	va_end(ap);
}

int print_help_page(const char *name)
{
	char *path = xasprintf("docs/cli/%s.txt", name);
	const struct embedded_file *f = embedded_find(path);
	free(path);
	if (!f)
		return -1;
	fwrite(f->data, 1, f->len, stdout);
	return 0;
}


int check_arch_option(const char *arch)
{
	char gencode[96];
	if (!arch || !build_parse_arch(arch, gencode, sizeof(gencode)))
		return 0;
	error("option '--arch': '%s' is not a GPU architecture nvcc knows; use one of %s "
	      "(sm_90a for H100/H200)", arch, build_known_archs());
	return -1;
}

int build_kernel_file(const char *kernel, const struct kernel_build *kb, struct strbuf *src,
		      struct policy_report *pol, struct build_result *br)
{
	struct build_opts bo = BUILD_OPTS_INIT;
	bo.arch = kb->arch;
	bo.cache_dir = kb->cache_dir;
	bo.no_cache = kb->no_cache;
	bo.deadline_s = kb->deadline_s;
	int r = strbuf_read_file(src, kernel, POLICY_MAX_SOURCE);
	if (r) {
		/* bad input, not a verdict: CG_INPUT (exit 3) with the reason */
		if (r == CG_INPUT_TOOBIG)
			error("kernel '%s' is larger than %u bytes", kernel, POLICY_MAX_SOURCE);
		else
			error("cannot read kernel '%s': %s", kernel, strbuf_read_strerror(r, kernel));
		return r;
	}
	char *err = NULL;
	int b = build_checked(&bo, src->buf, src->len, pol, br, &err);
	if (b && b != CG_REJECTED)
		error("%s", err);
	free(err);
	return b;
}

int kernel_flags_parse(int argc, char **argv, const struct opt *extra, int nextra,
		       struct kernel_flags *f, int *np, const char *cmd)
{
	const struct opt shared[] = {
		{ "task", 't', OPT_STRING, &f->task },
		{ "arch", 0, OPT_STRING, &f->build.arch },
		{ "device", 0, OPT_INT_NONNEG, &f->device },
		{ "json", 0, OPT_BOOL, &f->json },
		{ "deadline", 0, OPT_DOUBLE_NONNEG, &f->deadline },
		{ "compile-deadline", 0, OPT_DOUBLE_NONNEG, &f->build.deadline_s },
		{ "so", 0, OPT_STRING, &f->so },
		{ "cache-dir", 0, OPT_STRING, &f->build.cache_dir },
		{ "no-cache", 0, OPT_BOOL, &f->build.no_cache },
		{ "keep-scratch", 0, OPT_BOOL, &f->keep_scratch },
	};
	size_t ns = ARRAY_SIZE(shared);
	struct opt *opts = xcalloc(ns + (size_t)nextra, sizeof(*opts));
	memcpy(opts, shared, sizeof(shared));
	if (nextra)
		memcpy(opts + ns, extra, (size_t)nextra * sizeof(*opts));
	char err[256];
	int rc = opt_parse(argc, argv, opts, (int)ns + nextra, np, err, sizeof(err));
	free(opts);
	if (rc) {
		error("%s; see 'cutegen help %s'", err, cmd);
		return -1;
	}
	return 0;
}

int kernel_job_prepare(struct kernel_job *kj, const struct kernel_flags *f, const char *kernel)
{
	int trc = CG_INPUT;
	if (f->modules)
		kj->task = cli_task_load_any(f->task, f->json, &kj->module, &trc);
	else
		kj->task = cli_task_load(f->task, f->json, &trc);
	if (!kj->task && !kj->module)
		return trc;
	if (f->so) {
		kj->so_path = f->so;
		return CG_OK;
	}
	int b = build_kernel_file(kernel, &f->build, &kj->src, &kj->pol, &kj->br);
	if (b == CG_REJECTED) {
		feedback_policy(&kj->pol, &kj->txt);
	} else if (!b) {
		/* what the user reads names their file, not the kernel.cu nvcc compiled */
		diag_list_map_file(&kj->br.diags, "kernel.cu", kernel);
		if (kj->br.ok)
			kj->so_path = kj->br.so_path;
		else
			feedback_compile_file(&kj->br, kj->src.buf, kj->src.len, f->build.deadline_s,
					      kernel, &kj->txt);
	}
	return b;
}

void kernel_job_release(struct kernel_job *kj)
{
	task_free(kj->task);
	module_desc_free(kj->module);
	kj->module = NULL;
	strbuf_release(&kj->src);
	strbuf_release(&kj->txt);
	policy_report_release(&kj->pol);
	build_result_release(&kj->br);
	kj->task = NULL;
	kj->so_path = NULL;
}
struct task *cli_task_load_any(const char *spec, int quiet, struct module_desc **mdp, int *code)
{
	struct task *t = NULL;
	struct module_desc *md = NULL;
	char *err = NULL;
	int rc = task_resolve_judgeable(spec, &t, &md, &err);
	*mdp = NULL;
	if (rc) {
		error("%s", err);
		*code = rc;
	} else if (md && t && !quiet) {
		fprintf(stderr, "note: module '%s' is judged as the built-in %s task '%s' (%s)\n", spec,
			op_name(t->op), t->name, md->lowered_why ? md->lowered_why : "lowered");
	}
	free(err);
	if (!rc && !t) {
		*mdp = md; /* judged through the reference process */
		return NULL;
	}
	module_desc_free(md);
	return t;
}

struct task *cli_task_load(const char *spec, int quiet, int *code)
{
	struct module_desc *md = NULL;
	struct task *t = cli_task_load_any(spec, quiet, &md, code);
	if (!t && md) {
		error("module '%s' is not one of cutegen's built-in ops (%s); this command takes built-in "
		      "tasks only, while 'cutegen eval KERNEL --task %s' judges it through the reference "
		      "process; 'cutegen task show %s' shows its tensors", spec,
		      md->lowered_why ? md->lowered_why : "not lowered", spec, spec);
		*code = CG_ENV;
		module_desc_free(md);
	}
	return t;
}

void cli_check_env(void)
{
	char *why = NULL;
	eval_call_limit(&why);
	if (why)
		warning("%s", why);
	free(why);
	why = NULL;
	agent_hang_floor(&why);
	if (why)
		warning("%s", why);
	free(why);
}

void cli_python_from_config(void)
{
	const char *cur = getenv("CUTEGEN_PYTHON");
	if (cur && *cur)
		return;
	char *path = config_path();
	struct strbuf sb = STRBUF_INIT;
	if (strbuf_read_file(&sb, path, 1 << 20) == 0) {
		json_t *root = json_loadb(sb.buf, sb.len, 0, NULL);
		const char *py = json_string_value(json_object_get(root, "python"));
		if (py && *py)
			setenv("CUTEGEN_PYTHON", py, 1);
		json_decref(root);
	}
	strbuf_release(&sb);
	free(path);
}
