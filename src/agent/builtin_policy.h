/*
 * The builtin agent's kernel families and its policy (no model). A family is a parameterized
 * CuTe kernel under builtin/ (embedded) that declares its own search space in three comment
 * lines (builtin/README.md): every parameter with its values, the start point, and the stages
 * that group the parameters. A candidate is the template with a block of #defines before it
 * (the task's types and layouts, and one value per parameter), so it is one self-contained
 * kernel file, judged by the same evaluator as any model's kernel.
 *
 * The policy is a pure function of what was tried: the start point first, then stage by stage
 * every combination of the stage's parameter values around the best kernel so far (pruned
 * where a combination cannot help the task), best kept. The same task and measurements give
 * the same walk, and a resumed run continues it from its stored nodes.
 *
 * Usage:
 *   1. struct builtin_space sp; builtin_space_for(task, arch, dir_or_NULL, &sp, &err);
 *   2. builtin_next(&sp, task, tried, ntried, &cfg, &stage) picks the next candidate (1: done);
 *      builtin_render(&sp, task, &cfg, &src) writes its source; builtin_config_of(&sp, src, &cfg)
 *      reads a candidate's configuration back from its first line;
 *   3. builtin_space_release(&sp).
 * Not for: running candidates (agent.c does, through the evaluator).
 */
#ifndef CUTEGEN_BUILTIN_POLICY_H
#define CUTEGEN_BUILTIN_POLICY_H

#include "common/task.h"
#include "util/strbuf.h"

#define BUILTIN_PARAMS_MAX 12
#define BUILTIN_VALUES_MAX 12
#define BUILTIN_STAGES_MAX 6
#define BUILTIN_STAGE_CANDIDATES_MAX 24
#define BUILTIN_VALUE_LEN 24

struct builtin_param {
	char name[32];                                        /* "CG_P_THREADS" */
	int nvals;
	char vals[BUILTIN_VALUES_MAX][BUILTIN_VALUE_LEN];     /* "256", "128x64" */
};

struct builtin_stage {
	char name[32];
	int nparams;
	int params[BUILTIN_PARAMS_MAX]; /* indices into builtin_space.params */
};

struct builtin_space {
	char family[32];                /* "elementwise" */
	char *file;                     /* "builtin/elementwise.cu" */
	char *text;                     /* the template */
	int nparams;
	struct builtin_param params[BUILTIN_PARAMS_MAX];
	int start[BUILTIN_PARAMS_MAX];  /* value index per parameter */
	int nstages;
	struct builtin_stage stages[BUILTIN_STAGES_MAX];
};

/* One point of a space: a value index per parameter. */
struct builtin_config {
	int v[BUILTIN_PARAMS_MAX];
};

/* What became of a candidate already tried. */
struct builtin_tried {
	struct builtin_config cfg;
	int passed;
	double ms;
	double roof; /* its fraction of the roofline, < 0 unknown */
	int unsupported; /* the kernel refused the task's arguments (cutegen_launch nonzero) */
};

/* 1 when candidates were tried and every one was refused as unsupported: the family cannot
 * take the task (the agent moves to builtin_space_fallback's family). */
int builtin_unsupported(const struct builtin_tried *tried, int ntried);

/* The walk stops once its best kernel reaches this fraction of the roofline: what is left to
 * gain is within the noise of the measurement. */
#define BUILTIN_ROOF_STOP 0.97

/* The family file for a task ("builtin/gemm_simt.cu"), or NULL with *err saying why none fits. */
const char *builtin_family_file(const struct task *t, const char *arch, char **err);
/* Loads the task's family (from dir/<file> when dir is given, else the embedded copy) and
 * parses its declared space; 0, or -1 with *err naming the file and the line. */
int builtin_space_for(const struct task *t, const char *arch, const char *dir,
		      struct builtin_space *sp, char **err);
/* The family a run moves to when every candidate it tried of `file` was refused as unsupported
 * (gemm_sm90 -> gemm_simt), or NULL. */
const char *builtin_fallback_file(const struct task *t, const char *file);
/* Loads into *next the family after cur's (builtin_fallback_file): 1, 0 when there is none,
 * -1 with *err. */
int builtin_space_fallback(const struct task *t, const struct builtin_space *cur,
			   const char *dir, struct builtin_space *next, char **err);
/* Parses the three header lines of a template's text (exposed for the tests). */
int builtin_space_parse(const char *text, const char *origin, struct builtin_space *sp,
			char **err);
void builtin_space_release(struct builtin_space *sp);

/* The candidate's full source: the first line names the family and the configuration. */
void builtin_render(const struct builtin_space *sp, const struct task *t,
		    const struct builtin_config *cfg, struct strbuf *out);
/* Reads the configuration from a rendered candidate's first line; 0, or -1 when the source
 * is not a candidate of this space. */
int builtin_config_of(const struct builtin_space *sp, const char *src, struct builtin_config *cfg);
/* "CG_P_THREADS=256 CG_P_UNROLL=4"; appends to out. */
void builtin_config_format(const struct builtin_space *sp, const struct builtin_config *cfg,
			   struct strbuf *out);
/* Sets parameters from "NAME=VALUE NAME=VALUE" (an unknown name or value is an error). */
int builtin_config_parse(const struct builtin_space *sp, const char *text,
			 struct builtin_config *cfg, char **err);

/* The walk's start point for a task: the declared start, or what the task makes better (a SIMT
 * GEMM whose tiles cannot fill the GPU starts split-K). */
void builtin_start(const struct builtin_space *sp, const struct task *t, struct builtin_config *cfg);

/*
 * The next candidate after `tried` (in the order they were tried): 0 with *cfg, its stage
 * (0 = the start point, i = the space's stage i-1) and *what (a heap "tile: CG_P_UNROLL 4 -> 8"),
 * 1 when the walk is over, 2 when it stops early because its best kernel reached
 * BUILTIN_ROOF_STOP of the roofline.
 */
int builtin_next(const struct builtin_space *sp, const struct task *t,
		 const struct builtin_tried *tried, int ntried, struct builtin_config *cfg,
		 int *stage, char **what);
/* The candidates of the current stage not tried yet (what the next nodes will try, whatever
 * they measure: the stage's base is fixed); the count. */
int builtin_pending(const struct builtin_space *sp, const struct task *t,
		    const struct builtin_tried *tried, int ntried,
		    struct builtin_config out[BUILTIN_STAGE_CANDIDATES_MAX]);

#endif
