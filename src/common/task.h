/*
 * The task model: what kernel to write. An op with its shapes, dtypes, parameters, input
 * distributions, precision contract and tolerances, read from JSON (custom task files and the
 * built-in suites under tasks/) and validated field by field.
 *
 * Both cutegen and cutegen-runner link this module: cutegen resolves a task and hands the
 * runner its canonical JSON (task_to_json), from which the runner rebuilds the same struct.
 * Not for: how a task is checked or timed (runner/) or prompted (agent).
 *
 * Usage:
 *   1. struct task *t = task_parse_json(text, len, "file.json", &err)   (or task_load(name_or_path))
 *   2. read the fields; task_tensors() lists the kernel's arguments as the ABI passes them;
 *   3. task_free(t).
 */
#ifndef CUTEGEN_TASK_H
#define CUTEGEN_TASK_H

#include <stdint.h>

#include "util/strbuf.h"

enum dtype { DT_INVALID = 0, DT_FP32, DT_FP16, DT_BF16, DT_FP8_E4M3 };

enum op {
	OP_INVALID = 0,
	OP_GEMM,        /* C = epilogue(alpha * A @ B), batched, layouts, masks, structured inputs */
	OP_MATVEC,      /* y(M,1) = A(M,K) @ x(K,1) */
	OP_SCALAR_MUL,  /* C = A * s */
	OP_DIAG_MATMUL, /* C(N,M) = diag(a(N)) @ B(N,M) */
	OP_ELEMENTWISE, /* y = act(x) */
	OP_SOFTMAX,     /* softmax over the last dimension */
	OP_LOG_SOFTMAX
};

enum act {
	ACT_NONE = 0, ACT_RELU, ACT_LEAKY_RELU, ACT_SIGMOID, ACT_TANH, ACT_SWISH, ACT_GELU_ERF,
	ACT_GELU_TANH, ACT_SELU, ACT_HARDSIGMOID, ACT_SOFTPLUS, ACT_SOFTSIGN, ACT_ELU,
	ACT_HARDTANH, ACT_MINGPT_GELU, ACT_SILU /* = swish, named as a GEMM epilogue */
};

enum layout { LAYOUT_ROW = 0, LAYOUT_COL }; /* of the logical (M,K) A and (K,N) B */
enum structure { STRUCT_GENERAL = 0, STRUCT_SYMMETRIC, STRUCT_UPPER, STRUCT_LOWER };
enum mask { MASK_NONE = 0, MASK_UPPER, MASK_LOWER };

/*
 * Precision contracts. strict: fp32 data computed in fp32 (TF32 or 16-bit shortcuts fail).
 * tf32: fp32 data, TF32 tensor-core products allowed. fp16/bf16/fp8: inputs of that type,
 * products and sums in fp32 at least.
 */
enum precision { PREC_INVALID = 0, PREC_STRICT, PREC_TF32, PREC_FP16, PREC_BF16, PREC_FP8 };

/* Input distributions; each reaches different behaviour of a kernel. */
enum dist {
	DIST_UNIFORM = 0, /* U[0,1), what KernelBench uses */
	DIST_NORMAL,      /* N(0,1), signed */
	DIST_LARGE,       /* U(-R,R) with R large for the op (saturation, overflow paths) */
	DIST_BRANCHES,    /* values packed around every branch point of an activation */
	DIST_SPARSE,      /* GEMM precision probe: few nonzero terms per dot product */
	DIST_COUNT
};

#define TASK_MAX_DIMS 4
#define TASK_MAX_TENSORS 6
#define TASK_MAX_SCALARS 4

struct task {
	char *name;          /* "kb1/19_relu", or from the file name */
	char *description;
	enum op op;
	enum dtype in_dtype;  /* dtype of every input tensor */
	enum dtype out_dtype;
	enum precision precision;

	/* GEMM family (gemm, matvec): logical sizes */
	int64_t batch, m, n, k;
	int m_ndims;                  /* >1: M is split into these leading dims (3D/4D tensor-matrix) */
	int64_t m_dims[TASK_MAX_DIMS];
	enum layout a_layout, b_layout;
	enum structure a_struct, b_struct;
	enum mask out_mask;
	double alpha;                 /* 1.0 unless set */
	int epi_bias;                 /* adds a bias vector of N */
	enum act epi_act;             /* ACT_NONE, ACT_RELU, ACT_GELU_ERF, ACT_GELU_TANH, ACT_SILU */

	/* elementwise, scalar_mul, softmax: the tensor's shape; diag_matmul uses n and m */
	int ndim;
	int64_t shape[TASK_MAX_DIMS];

	/* activation and its parameters (PyTorch's names and defaults) */
	enum act act;
	double negative_slope; /* leaky_relu, 0.01 */
	double elu_alpha;      /* elu, 1.0 */
	double min_val, max_val; /* hardtanh, -1 and 1 */
	double sp_beta, sp_threshold; /* softplus, 1 and 20 */
	double scalar;         /* scalar_mul */

	/* checking */
	int n_dists;
	enum dist dists[DIST_COUNT]; /* defaults per op when the file names none */
	int seeds;                   /* seeds per distribution, default 2 */
	double rtol, atol;           /* < 0: the contract's defaults (see runner) */
};

/* One argument of the kernel, in the order the ABI passes them (inputs, then outputs). */
struct tensor_spec {
	const char *name;     /* "A", "B", "a", "bias", "x", "C", "y" (static strings) */
	int is_output;
	enum dtype dtype;
	int ndim;
	int64_t shape[TASK_MAX_DIMS + 1]; /* row-major, contiguous, as PyTorch would hold it */
	enum structure structure;         /* how the runner fills it: of the stored matrix, so a
					     col-layout upper A is stored lower */
};

/* Parses and validates. NULL on error with a heap message in *err ("field 'm' must be ..."). */
struct task *task_parse_json(const char *text, size_t len, const char *origin, char **err);
/* A built-in name ("kb1/19_relu") or a path to a JSON file. */
struct task *task_load(const char *name_or_path, char **err);
void task_free(struct task *t);
/* A deep copy, freed with task_free. */
struct task *task_dup(const struct task *t);
/* 1 when a and b hold the same spec field by field (names and descriptions included). */
int task_equal(const struct task *a, const struct task *b);
/* The built-in task of that name ("kb1/19_relu", or a unique number prefix like "kb1/19"),
 * or NULL. Owned by the suite cache: never freed, valid for the life of the process. */
const struct task *task_builtin(const char *name);

/* Canonical JSON of the whole spec (every field, defaults filled in); appends to out. */
void task_to_json(const struct task *t, struct strbuf *out);

/* The kernel's tensor arguments; returns their count. gemm: A [batch?, M or m_dims..., K]
 * (a_layout row) or [batch?, K, M] (col), B [batch?, K, N] (row) or [batch?, N, K] (col), bias [N]
 * in out_dtype when epilogue.bias, C [batch?, M or m_dims..., N]; the batch dim only when
 * batch > 1. matvec: A [M, K], x [K, 1] -> y [M, 1]. scalar_mul: A -> C. diag_matmul: a [N],
 * B [N, M] -> C [N, M]. elementwise, softmax, log_softmax: x -> y. */
int task_tensors(const struct task *t, struct tensor_spec out[TASK_MAX_TENSORS]);
/* The kernel's scalar arguments (alpha, slope, ...); returns their count; names are static. */
int task_scalars(const struct task *t, double vals[TASK_MAX_SCALARS],
		 const char *names[TASK_MAX_SCALARS]);

/* Useful floating-point work (2*M*N*K for a GEMM, skipping masked halves) and the fewest
 * bytes a kernel must move (each input read once, each output written once). */
double task_flops(const struct task *t);
double task_min_bytes(const struct task *t);
/* The bytes the op must move to or from DRAM when timed after an L2 flush: every input read
 * once, and every output written once less what an L2 of l2_bytes can still hold when the
 * timing ends (writes of a small output need not reach DRAM). The plausibility bound's count. */
double task_dram_bytes(const struct task *t, double l2_bytes);
/* 1 for the GEMM family (compute-bound baselines: cuBLASLt), 0 for memory-bound ops. */
int task_is_gemm_like(const struct task *t);

/* How outputs are judged: |got - want| <= atol + rtol |want| elementwise, and for the GEMM
 * family also <= eps_scale times the computation's scale (sum |a||b| of each element). */
struct task_tolerance {
	double rtol, atol;
	double eps_scale; /* GEMM family; 0 otherwise */
};

/* The tolerance of t's op and precision contract for inputs of distribution dist (the task
 * file's rtol/atol override the defaults). */
void task_tolerance(const struct task *t, enum dist dist, struct task_tolerance *tol);

#ifdef __CUDACC__
#define TASK_HOST_DEVICE __host__ __device__
#else
#define TASK_HOST_DEVICE
#endif

/*
 * The tolerance of one GEMM output element, from the contract's figures (task_tolerance) and
 * the element's exact values: scale = |alpha| sum |a||b|, bias (0 without one), x = alpha *
 * sum a*b + bias (the activation's argument) and want = act(x). One definition for the
 * runner's compare kernels (device) and the unit tests (host); docs/evaluation.md derives it.
 * A smooth activation (GELU, SiLU, ...) computed in fp32 is off by a few fp32 roundings of its
 * argument, not of its result: GELU(x) = x/2 (1 + tanh(..)) for x < -1 cancels in the
 * 1 + tanh, so its fp32 error is ~2^-24 |x| where |want| may be a thousandth of |x|.
 */
static inline TASK_HOST_DEVICE double task_gemm_element_tol(double eps_scale, double rtol, double atol,
							     int act, double scale, double bias, double x,
							     double want)
{
	double ab = bias < 0 ? -bias : bias, ax = x < 0 ? -x : x, aw = want < 0 ? -want : want;
	double sc = scale + ab * 1e-7; /* the bias add is one more rounding */
	double t = eps_scale * sc * (act != ACT_NONE ? 1.2 : 1.0);
	if (act != ACT_NONE && act != ACT_RELU)
		t += 8.0 * (1.0 / 16777216.0) * ax; /* 8 fp32 unit roundoffs (2^-24) of x */
	return t + rtol * aw + atol;
}
/* "gemm", "elementwise" or "rowwise": which stage machine the agent uses. */
const char *task_workload(const struct task *t);
/* A one-line summary of the sizes ("M=4096 N=4096 K=4096 B^T +bias"); appends to out. */
void task_shape_summary(const struct task *t, struct strbuf *out);

/* Names <-> enums; name functions return static strings, parse functions 0 on unknown. */
const char *dtype_name(enum dtype d);
enum dtype dtype_parse(const char *s);
int dtype_size(enum dtype d);
const char *op_name(enum op o);
enum op op_parse(const char *s);
const char *act_name(enum act a);
enum act act_parse(const char *s);
const char *precision_name(enum precision p);
enum precision precision_parse(const char *s);
const char *dist_name(enum dist d);
int dist_parse(const char *s); /* -1 on unknown */

/* Built-in suites: "kb1", "hopper", "llm". Returns the number of task names written into *names
 * (static strings), or -1 for an unknown suite. */
int suite_tasks(const char *suite, const char *const **names);
/* Every built-in suite name, NULL-terminated. */
extern const char *const builtin_suites[];

#endif
