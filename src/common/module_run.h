/*
 * The module-run file (RUN.json): what the evaluator hands the runner to judge a kernel on a
 * module that is not lowered to a built-in op (/work/notes/module-contract.md step 4,
 * docs/evaluation.md "Module tasks"): the tensor list in ABI order, the scalars, the tolerance,
 * the limits and the cases, each a set of CUDA IPC handles into the reference process's memory
 * (inputs, the task-dtype reference and the truth of every output). The evaluator builds it
 * from the reference process's "prepare" reply, which is untrusted: so is this file, and every
 * field is checked and capped here (handles 128 lowercase hex digits, sizes, counts, bytes =
 * numel x dtype size, shapes equal to the tensor list's).
 * Not for: opening the handles (runner/runner.c), running the reference (eval/reference.c).
 *
 * Usage:
 *   1. struct module_run *mr = module_run_parse(text, len, &err)   (NULL: *err says why);
 *   2. read mr->tensors (ABI order), mr->cases[k].inputs/ref/truth;
 *   3. module_run_free(mr).
 */
#ifndef CUTEGEN_MODULE_RUN_H
#define CUTEGEN_MODULE_RUN_H

#include <stddef.h>
#include <stdint.h>

#define MRUN_MAX_TEXT (8 << 20)   /* bytes of RUN.json */
#define MRUN_MAX_TENSORS 256
#define MRUN_MAX_SCALARS 64
#define MRUN_MAX_DIMS 8
#define MRUN_MIN_CASES 2
#define MRUN_MAX_CASES 64
#define MRUN_MAX_BYTES (1ll << 40)   /* of one tensor */
#define MRUN_IPC_BYTES 64            /* sizeof(cudaIpcMemHandle_t) */

/* Element types of module tensors (the describe names). */
enum mrun_dtype {
	MDT_INVALID = 0, MDT_FP32, MDT_FP16, MDT_BF16, MDT_FP8, MDT_FP64, MDT_I64, MDT_I32, MDT_I16,
	MDT_I8, MDT_U8, MDT_BOOL
};
enum mrun_dtype mrun_dtype_parse(const char *s);
const char *mrun_dtype_name(enum mrun_dtype d);
int mrun_dtype_size(enum mrun_dtype d);
int mrun_dtype_is_float(enum mrun_dtype d);

/* A module check's error over its budget in words of a factor of about 3 ("3 to 10 times its
 * budget", "within its budget", "not finite") into buf; returns buf. What a failed module check
 * tells (the runner's message, the model's feedback) instead of the truth's value: the cases are
 * the same for every candidate of a run, so a quoted value could be tabulated and replayed. */
const char *mrun_error_words(double ratio, char *buf, size_t n);

enum mrun_role { MRUN_INPUT = 0, MRUN_PARAMETER, MRUN_BUFFER, MRUN_OUTPUT };

struct mrun_tensor {
	char *name;
	enum mrun_role role;
	enum mrun_dtype dtype;
	int ndim;
	int64_t shape[MRUN_MAX_DIMS];
	int64_t numel;
	int64_t bytes;
};

struct mrun_handle {
	unsigned char ipc[MRUN_IPC_BYTES];
	int64_t offset, bytes;
	enum mrun_dtype dtype;
};

struct mrun_case {
	int seed;
	char dist[16];
	struct mrun_handle *inputs; /* ninputs: one per non-output tensor, ABI order */
	struct mrun_handle *ref;    /* noutputs: the forward in the task's dtypes */
	struct mrun_handle *truth;  /* noutputs: float64 (or fp32) forward */
};

struct module_run {
	char *name, *file;
	int ntensors, ninputs, noutputs;  /* ninputs: inputs, parameters and buffers */
	struct mrun_tensor *tensors;      /* ABI order: non-outputs, then outputs */
	int nscalars;
	char **scalar_names;
	double *scalars;
	char precision[16];
	int truth_fp64;                   /* 1: truth is float64; 0: fp32 */
	double multiple, ulps;            /* the tolerance */
	double flops, bytes;              /* < 0 when unknown */
	double limit_gbps, limit_tflops;  /* 0 when not given */
	int ncases;
	struct mrun_case *cases;
};

/* Parses and checks RUN.json. NULL with a heap one-line message in *err. */
struct module_run *module_run_parse(const char *text, size_t len, char **err);
void module_run_free(struct module_run *mr);

#endif
