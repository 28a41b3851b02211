/*
 * Module tasks: a PyTorch module in KernelBench's format (`class Model`, `get_inputs()`,
 * `get_init_inputs()`), as the reference process (tools/reference.py) describes it. This file
 * only parses and checks that description (a JSON object from a child process: untrusted, capped
 * field by field); running the process is eval/reference.c's job, so the runner, which links
 * common/task.c, needs none of it.
 *
 * The kernel's arguments for a module (docs/kernel-abi.md, "Module tasks"): forward's tensor
 * inputs in order, then the module's parameters and buffers in state_dict order, then forward's
 * outputs; numbers among forward's arguments and get_init_inputs() become scalars.
 *
 * Usage:
 *   1. struct module_desc *md = module_desc_parse(json, len, "m.py", &err);
 *   2. read md->tensors (ABI order), md->scalars, md->lowered (a built-in task, or NULL);
 *   3. module_desc_free(md).
 */
#ifndef CUTEGEN_TASK_MODULE_H
#define CUTEGEN_TASK_MODULE_H

#include <stddef.h>
#include <stdint.h>

#include "common/task.h"
#include "util/strbuf.h"

#define MODULE_MAX_TENSORS 256
#define MODULE_MAX_SCALARS 64
#define MODULE_MAX_DIMS 8
#define MODULE_DESC_MAX (1 << 20) /* bytes of one describe reply */

enum module_role { MROLE_INPUT = 0, MROLE_PARAMETER, MROLE_BUFFER, MROLE_OUTPUT };

struct module_tensor {
	char *name;        /* forward's argument name, the state_dict key, or "out"/"outN" */
	enum module_role role;
	char dtype[12];    /* "fp32", "fp16", "bf16", "fp64", "i64", "i32", "i16", "i8", "u8", "bool",
			      "fp8_e4m3" */
	int ndim;          /* 0..MODULE_MAX_DIMS */
	int64_t shape[MODULE_MAX_DIMS];
};

struct module_scalar {
	char *name;
	double value;
	int from_init;     /* 1: from get_init_inputs(), 0: a number among forward's arguments */
};

struct module_desc {
	char *file, *name;      /* absolute path of the module file, its stem */
	char *device, *torch;   /* where describe ran ("cuda", "cpu"), torch.__version__ */
	char *dtype;            /* of the floating inputs ("fp32"...), "mixed" or "none" */
	char *precision;        /* the contract's name, or "none" */
	char *workload;         /* gemm-like, memory-bound, reduction, convolution, attention, other */
	char *workload_why;
	char *lowered_why;      /* why (not) lowered */
	char *mode;             /* "eval" (Model().eval(), the default) or "train" (CUTEGEN "mode") */
	char *mode_modules;     /* the submodules that compute otherwise in the other mode
				   ("BatchNorm2d bn, Dropout drop"), or NULL */
	double flops;           /* torch.utils.flop_counter's count; < 0 when unknown */
	double bytes;           /* inputs, parameters, buffers and outputs, each once */
	int ntensors, ninputs, nparams, noutputs;
	struct module_tensor *tensors; /* ABI order: inputs, parameters/buffers, outputs */
	int nscalars;
	struct module_scalar *scalars;
	struct task *lowered;   /* the equal built-in task, or NULL */
};

/* Parses the "describe" object of the reference protocol (docs/tasks.md). NULL on error with a
 * heap one-line message in *err. The result is freed with module_desc_free. */
struct module_desc *module_desc_parse(const char *text, size_t len, const char *origin, char **err);
void module_desc_free(struct module_desc *md);

/* 1 when the spec names a module task: a path ending in ".py". */
int task_spec_is_module(const char *spec);

/* 1 when path is a directory. */
int task_spec_is_dir(const char *path);
/* The module files of a directory (a module suite): its *.py files but those whose name starts
 * with '_' or '.', as absolute paths in name order, at most MODULE_DIR_MAX. Returns their count
 * (0 is not an error) and a heap array of heap strings in *paths (free each, then the array), or
 * -1 with a heap message in *err. */
#define MODULE_DIR_MAX 4096
int module_dir_list(const char *dir, char ***paths, char **err);

/* Appends the tensor list as `task show` prints it (one line a tensor, ABI order, then the
 * scalars). */
void module_desc_format(const struct module_desc *md, struct strbuf *out);
const char *module_role_name(enum module_role r);
/* Appends the mode forward is judged in, with the submodules it changes and how to pick the
 * other ("eval (Model().eval()): BatchNorm2d bn computes as in inference; ..."). */
void module_mode_note(const struct module_desc *md, struct strbuf *out);
/* The description as `task show --json` prints it (tensors in ABI order with their roles,
 * scalars, workload, the lowered task's canonical JSON or null); appends to out. */
void module_desc_to_json(const struct module_desc *md, struct strbuf *out);

#endif
