/*
 * Stage machines: the ordered stages the agent walks for one workload class ("gemm",
 * "elementwise", "rowwise"), read from text files users can read and edit
 * (prompts/stages/WORKLOAD.txt, embedded; a --prompts DIR overrides them). Format
 * (docs/agent.md has the full text):
 *
 *   # comments before the first stage
 *   stage: 0
 *   name: correct
 *   max_iters: 3
 *   min_gain: 0
 *   patience: 2
 *   watch: verdict
 *   needs: tensor_cores        (optional: skipped under a strict fp32 contract)
 *   ---
 *   guidance text for the model, any number of lines
 *   %%
 *   stage: 1
 *   ...
 *
 * Stages are numbered 0, 1, 2... in order; stage 0 is "make it correct".
 * Not for: deciding when to move on (agent.c applies the rules).
 */
#ifndef CUTEGEN_STAGES_H
#define CUTEGEN_STAGES_H

#include <stddef.h>

#include "util/strbuf.h"

#define STAGES_MAX 16
#define STAGES_MAX_FILE ((size_t)256 << 10)

struct stage {
	int index;
	char *name;          /* "tiling + shared-memory layout" */
	int max_iters;       /* steps (a change plus its fixes) the stage may take; >= 1 */
	double min_gain;     /* a step must beat the best by this fraction to count as progress */
	int patience;        /* the stage ends after this many steps in a row without progress */
	char *watch;         /* metrics the stage cares about, comma-separated, shown to the model */
	int tensor_cores;    /* "needs: tensor_cores": skipped when the contract is strict fp32 */
	char *docs;          /* "docs: local_tile make_identity_tensor": what to retrieve from the
				CuTe index in this stage; NULL = nothing but the error's names */
	char *guidance;      /* the text given to the model in this stage */
};

struct stage_machine {
	char *workload;
	char *origin;        /* the file it came from ("prompts/stages/gemm.txt" or a path) */
	struct stage *stages;
	size_t n, alloc;
};

#define STAGE_MACHINE_INIT { NULL, NULL, NULL, 0, 0 }

/* Parses a stage file's text; 0, or -1 with *err naming origin and line. */
int stages_parse(const char *text, size_t len, const char *origin, struct stage_machine *out,
		 char **err);
/* Loads the machine of a workload: DIR/stages/WORKLOAD.txt when dir is given and holds it,
 * else the embedded prompts/stages/WORKLOAD.txt. */
int stages_load(const char *workload, const char *dir, struct stage_machine *out, char **err);
void stage_machine_release(struct stage_machine *m);

/*
 * A prompt text file (the templates and stage files): DIR/NAME when dir is given and holds it,
 * else the embedded prompts/NAME. Appends to out; 0, or -1 with *err.
 */
int prompt_file_load(const char *dir, const char *name, struct strbuf *out, char **err);

#endif
