/*
 * The reference process of module tasks: runs tools/reference.py (embedded) with the user's
 * python3 and torch, in a process group of its own under a deadline, and asks it to describe a
 * KernelBench-format module (docs/tasks.md, "The reference process"). It never runs inside the
 * evaluator or next to a candidate.
 * Not for: parsing the description (common/task_module.c), judging kernels (eval.c, runner/).
 *
 * Usage:
 *   1. struct task *t; struct module_desc *md;
 *      rc = task_resolve(spec, &t, &md, &err)   (a built-in name, a JSON file or a .py module)
 *   2. t is the task to judge (a module's built-in twin when it is lowered; NULL for a module
 *      that is not); md is the module's description (NULL for JSON and built-in tasks);
 *   3. task_free(t); module_desc_free(md).
 */
#ifndef CUTEGEN_REFERENCE_H
#define CUTEGEN_REFERENCE_H

#include "common/task.h"
#include "common/task_module.h"
#include "util/err.h"

#define REFERENCE_DEADLINE_S 300.0 /* default; $CUTEGEN_REFERENCE_TIMEOUT overrides (seconds) */
#define REFERENCE_SEED 42

/* Extended codes (CG_ENV) for a machine where no module can be described: no python that
 * speaks the protocol, or one without torch. Callers that describe many modules stop at them. */
#define REFERENCE_E_NO_PYTHON CG_EXT(CG_ENV, 32)
#define REFERENCE_E_NO_TORCH CG_EXT(CG_ENV, 33)

/* The python that runs the reference: $CUTEGEN_PYTHON (set by `cutegen --python PATH`), else
 * python3 from PATH. Static string. */
const char *reference_python(void);

/*
 * Describes the module file. 0 and *out on success; otherwise a code of util/err.h with a heap
 * message in *err that says what to do: CG_ENV (no python, no torch, a GPU feature the machine
 * lacks), CG_INPUT (the file does not import, has no Model, get_inputs or get_init_inputs,
 * returns non-tensors...), CG_TIMEOUT (the process did not answer within the deadline and was
 * killed, its whole process group), CG_EXTERNAL (it broke the protocol).
 */
int reference_describe(const char *file, struct module_desc **out, char **err);

/*
 * Starts the reference process and reads its hello only (for `cutegen doctor`): 0 with heap
 * strings *executable (the python) and *torch (its torch version, or NULL with the import error
 * in *torch_error), or a code with a heap message in *err when no python answers.
 */
int reference_probe(char **executable, char **torch, char **torch_error, char **err);

/* A task from a spec: a built-in name or JSON file (task_load) or a module (.py). See the usage
 * above; returns 0 or a code of util/err.h with a heap message in *err. */
int task_resolve(const char *spec, struct task **t, struct module_desc **md, char **err);

/* As task_resolve, for the commands that judge a kernel today: a module that is not lowered to a
 * built-in op fails with CG_ENV and a message that it needs the reference-process evaluation,
 * which is not in this build yet. *md may be NULL when the caller does not want it. */
int task_resolve_judgeable(const char *spec, struct task **t, struct module_desc **md, char **err);

#endif
