/*
 * Prompt building: fills the templates under prompts/ (system.txt, generate.txt, fix.txt,
 * optimize.txt) with the task, the kernel contract, the current kernel and its measurements,
 * the history, the stage's guidance and the feedback, and keeps the result within a size
 * budget by shortening the history (oldest lines first), then the feedback, then dropping the
 * optional profile and docs, each cut saying so in the text.
 *
 * The system message holds what does not change during a run (the role, the contract, the
 * target, the task), so it is byte-identical across calls and a provider's prompt cache can
 * keep it; the user message holds what changes.
 *
 * Templates: {{name}} is replaced by a value; {{#name}}...{{/name}} is kept only when name is
 * non-empty. An unknown name or an unclosed section is an error (templates are checked).
 * Not for: choosing what to ask (agent.c) or sending it (llm.h).
 */
#ifndef CUTEGEN_PROMPT_H
#define CUTEGEN_PROMPT_H

#include <stddef.h>

#include "common/task.h"
#include "common/task_module.h"
#include "util/strbuf.h"

#define PROMPT_DEFAULT_BUDGET ((size_t)160 << 10)

struct prompt_var {
	const char *name;
	const char *value; /* NULL = "" */
};

/* Renders tmpl with vars into out (appending); 0, or -1 with *err. */
int prompt_render(const char *tmpl, const struct prompt_var *vars, size_t nvars,
		  struct strbuf *out, char **err);

/* Everything a prompt may hold; NULL strings are empty. */
struct prompt_input {
	const struct task *task;     /* NULL for a module that is not lowered (module is set) */
	const struct module_desc *module; /* a module that is not lowered: its description */
	const char *module_file;     /* a module judged as its built-in twin (task): the file */
	const char *module_source;   /* the module file's text (either kind), or NULL */
	const char *system_tmpl, *user_tmpl;
	const char *target;          /* the GPU, toolkit, CUTLASS and the exact build line */
	const char *kernel;          /* the current kernel (the one edits apply to) */
	const char *kernel_status;   /* "0.412 ms, 1.93x the baseline, 61% of the roofline" */
	const char *best_status;     /* the best verified kernel's numbers */
	const char *history;         /* one line per node, oldest first */
	const char *stage_name, *stage_guidance, *stage_watch;
	int stage_index, stage_count;
	const char *feedback;        /* what happened to the last candidate */
	const char *profile;         /* profiler summary (optional) */
	const char *docs;            /* retrieved CuTe documentation (optional) */
	size_t budget;               /* bytes of system + user; 0 = PROMPT_DEFAULT_BUDGET */
};

/* Fills system and user (both reset first). -1 with *err when a template is broken or the
 * prompt cannot fit the budget even with history, feedback, profile and docs cut. */
int prompt_build(const struct prompt_input *in, struct strbuf *system, struct strbuf *user,
		 char **err);

/* The task as the model should see it: op, sizes, dtypes, the precision contract and its
 * tolerances, the arguments of cutegen_launch in ABI order, the scalars. Appends to out. */
void prompt_describe_task(const struct task *t, struct strbuf *out);

/* A module task as the model should see it: the module's source (the reference the kernel
 * must match), the arguments of cutegen_launch in ABI order with names, roles, shapes and
 * dtypes (as `task show` prints them), the scalars, the module contract (docs/kernel-abi.md,
 * "Module tasks"), how it is checked, and the workload class with what it means for the
 * stages. source may be NULL; it is cut to PROMPT_MODULE_SOURCE_MAX bytes. Appends to out. */
#define PROMPT_MODULE_SOURCE_MAX (48 << 10)
void prompt_describe_module(const struct module_desc *md, const char *source, struct strbuf *out);

/* The stage machine (prompts/stages/NAME.txt) for a module's workload class: "gemm" for
 * gemm-like, convolution and attention, "rowwise" for reduction, "elementwise" for
 * memory-bound and anything else. */
const char *prompt_module_stages(const char *workload);

#endif
