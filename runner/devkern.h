/*
 * The runner's own device code (devkern.cu), behind a C interface: input generators and their
 * verification, poison fills, the trusted elementwise/softmax references computed in fp64, and
 * the comparison that turns a candidate's output into error statistics, all on the GPU so
 * that checking a 6 GB output costs milliseconds; the GEMM reference (tiled SIMT, fp64
 * accumulation) and a sampled check for the outputs of timed calls. No vendor library here.
 * Every function launches on `stream` and returns a cudaError_t as int (0 = success).
 */
#ifndef CUTEGEN_RUNNER_DEVKERN_H
#define CUTEGEN_RUNNER_DEVKERN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element types the runner handles: the first four are enum dtype's of src/common/task.h;
 * all are enum mrun_dtype's of src/common/module_run.h (module tasks), same values. */
enum dk_dtype { DK_FP32 = 1, DK_FP16 = 2, DK_BF16 = 3, DK_FP8 = 4, DK_FP64 = 5, DK_I64 = 6,
		DK_I32 = 7, DK_I16 = 8, DK_I8 = 9, DK_U8 = 10, DK_BOOL = 11 };

/* How a tensor is filled. Values follow enum dist / enum structure of src/common/task.h. */
struct dk_fill {
	int dtype;
	int dist;           /* DIST_* */
	int structure;      /* STRUCT_* over the last two dims (square) */
	uint64_t seed;
	int64_t numel;
	int64_t rows, cols; /* last two dims (rows = 1 for 1-D) */
	float range;        /* half-width for DIST_LARGE */
	float density;      /* nonzero probability for DIST_SPARSE */
	int nbranch;        /* branch points for DIST_BRANCHES */
	float branch[4];
};

int dk_fill(void *ptr, const struct dk_fill *f, void *stream);
/* Counts elements that differ (bitwise) from what dk_fill wrote; *mismatches on the host. */
int dk_verify_fill(const void *ptr, const struct dk_fill *f, unsigned long long *mismatches,
		   void *scratch, void *stream);
/* Fills with the runner's poison NaN (a payload no arithmetic produces); integer and bool
 * tensors with bytes 0xA5 (no bool, an unlikely integer). Any dtype of enum dk_dtype. */
int dk_poison(void *ptr, int dtype, int64_t numel, void *stream);
/* dst[i] = |src[i]|, converted to dst_dtype (fp32/bf16/fp16): operands of the scale GEMM,
 * and fp8 operands widened exactly to bf16 for the reference. */
int dk_convert(void *dst, int dst_dtype, const void *src, int src_dtype, int64_t numel, int absval,
	       void *stream);

/* The reference a comparison uses. */
enum dk_ref_kind {
	DK_REF_BUFFER = 0,   /* ref[] (fp32) and scale[] (fp32, per element) from GEMMs */
	DK_REF_ELEMENTWISE,  /* act(x) in fp64 */
	DK_REF_SCALAR_MUL,   /* x * s */
	DK_REF_DIAG,         /* a[r] * B[r][c] */
	DK_REF_SOFTMAX,      /* from per-row max and sum computed in fp64 */
	DK_REF_LOG_SOFTMAX
};

struct dk_compare {
	int kind;
	int out_dtype;
	int64_t rows, cols;       /* the output viewed as [rows, cols] (cols = last dim) */
	const void *out;
	/* DK_REF_BUFFER */
	const float *ref, *scale; /* GEMM accumulations: sum a*b and sum |a||b| */
	const void *bias; int bias_dtype; /* optional, per column */
	int epi_act;              /* ACT_* applied after alpha*acc+bias */
	double alpha;
	int mask;                 /* MASK_* */
	int64_t mask_n;           /* the square size the mask applies to (last two dims) */
	/* elementwise family */
	const void *x; int x_dtype;
	const void *aux; int aux_dtype; /* diag vector */
	int act;
	double p[4];              /* activation parameters / scalar */
	const double *rowstat;    /* softmax: [rows][2] = max, sum exp(x-max) */
	/* tolerance: |got-ref| <= eps_scale*scale + rtol*|ref| + atol */
	double eps_scale, rtol, atol;
};

#define DK_MAX_SAMPLES 16
#define DK_BUCKETS 64

struct dk_stats {
	unsigned long long bad, nan, inf, unwritten, checked;
	double max_abs_err, max_ratio;          /* max |got-ref|, max |got-ref|/tol */
	long long worst_index;                  /* element with max_ratio */
	long long first_bad;                    /* lowest bad flat index, -1 if none */
	unsigned long long row_hist[DK_BUCKETS], col_hist[DK_BUCKETS];
	unsigned long long tail_rows_bad, tail_cols_bad; /* bad in the last 1/64 of rows / cols */
	int nsamples;
	struct { long long index; double got, want, tol; } samples[DK_MAX_SAMPLES];
};

/* scratch: device memory of at least dk_scratch_bytes(). Synchronizes the stream. */
size_t dk_scratch_bytes(void);
int dk_softmax_rowstats(double *rowstat, const void *x, int dtype, int64_t rows, int64_t cols,
			void *stream);
int dk_compare_run(const struct dk_compare *c, struct dk_stats *out, void *scratch, void *stream);

/*
 * A gate on a stream: a one-block kernel that holds the stream closed until the host writes
 * nonzero into *host_flag (pinned, mapped), or ~timeout_s passes, then counts the elements of
 * `out` that no longer hold the poison into *host_written (pinned, mapped; valid once the
 * stream is synchronized). Work queued behind it on that stream cannot start before it ends;
 * work launched on any other stream can, and is what the count sees.
 */
int dk_gate(volatile int *host_flag, double timeout_s, const void *out, int dtype, int64_t numel,
	    unsigned long long *host_written, void *stream);
/* Loads the runner's own kernels now: with lazy module loading, the first launch of a kernel
 * waits for kernels already running, which would deadlock behind a closed gate; and loading
 * them all before the process is confined keeps module loading out of the confined part. */
int dk_preload(void);

/* Writes `bytes` of a buffer larger than L2, so the next kernel starts from a cold cache. */
int dk_flush_l2(void *buf, size_t bytes, void *stream);

/* A GEMM as the task stores it: C[b][m][n] = sum_k A(b,m,k) B(b,k,n). A is [batch][M][K] (or
 * [batch][K][M] with a_col), B is [batch or 1][K][N] (or [..][N][K] with b_col). */
struct dk_gemm {
	int a_dtype, b_dtype;
	int64_t batch, m, n, k;
	int a_col, b_col, b_batched;
	const void *A, *B;
};
/* ref = sum a*b and scale = sum |a||b| over K, accumulated in fp64 and stored as fp32, for
 * every element of C (batch*M*N each): the reference and the scale of the tolerance. With
 * scratch (dk_scratch_bytes()), an output of at most DK_MAX_CHECK_SAMPLES elements (a matvec's)
 * gets the sampled check's dot products split along K instead of the tiled kernel, which gives
 * such an output a block or two walking all of K. */
int dk_gemm_ref(const struct dk_gemm *g, float *ref, float *scale, void *scratch, void *stream);

/* The sampled check: the listed flat output positions (host array, at most
 * DK_MAX_CHECK_SAMPLES) against a reference computed for those positions alone, in fp64 (a
 * dot product over all of K for a GEMM: g non-NULL, c->kind DK_REF_BUFFER with ref/scale
 * unused; else the whole-output compare's reference, c as for dk_compare_run; for softmax the
 * row statistics of the sampled rows are computed here, into c->rowstat). scratch:
 * dk_scratch_bytes(). Synchronizes the stream. */
#define DK_MAX_CHECK_SAMPLES 4096
struct dk_sample_stats {
	int checked;
	unsigned long long bad;
	long long first_bad;      /* flat output index of a bad sample, -1 if none */
	double got, want, tol;    /* at first_bad */
};
int dk_sample_check(const struct dk_gemm *g, const struct dk_compare *c, const long long *idx, int n,
		    struct dk_sample_stats *out, void *scratch, void *stream);


/*
 * Module tasks (docs/evaluation.md, "Module tasks"): the candidate's output `got` against the
 * reference process's float64 (or fp32) truth and its task-dtype forward `ref`, element by
 * element: with e_ref = |ref - truth| and E its mean over the tensor,
 *   budget = multiple * max(e_ref, E * max(1, |truth| / mean|truth|)) + ulps * ulp_out(truth)
 * (ulp_out: the spacing of got's dtype at |truth|, at least its smallest subnormal spacing);
 * NaN in truth wants NaN, +-inf wants the same inf; integer and bool outputs exactly the truth's
 * or ref's value (near ties, an argmax in the task dtype may pick another index).
 * Fills st like dk_compare_run (samples' tol = the budget; max_ratio = max |got-truth| / budget)
 * and mx with the budget's terms and the worst element (on a pass too). scratch:
 * dk_scratch_bytes(). Synchronizes the stream.
 */
struct dk_mcompare {
	int got_dtype, truth_dtype; /* ref has got_dtype */
	int64_t numel, rows, cols;  /* cols = the last dim (1 for a scalar), rows = numel / cols */
	const void *got, *ref, *truth;
	double multiple, ulps;
	int have_stats;             /* 1: E and mean_abs_truth below are ref's and truth's (from an
				       earlier compare of the same case): the pass that sums them
				       is skipped */
	double E, mean_abs_truth;
};
struct dk_mextra {
	double E, mean_abs_truth;   /* over the finite truth elements */
	double max_scaled_err;      /* max |got-truth| / max(|truth|, mean|truth|) (precision verdict) */
	long long worst_index;      /* -1 when every error is 0 */
	double worst_got, worst_want, worst_budget;
};
int dk_module_compare(const struct dk_mcompare *c, struct dk_stats *st, struct dk_mextra *mx,
		      void *scratch, void *stream);
/* Counts the bytes of a and b (n bytes each) that differ into *diff (host). Synchronizes. */
int dk_bytes_differ(const void *a, const void *b, size_t n, unsigned long long *diff, void *scratch,
		    void *stream);

/* A 64-bit hash of n bytes at p into *h: the sum mod 2^64 of a bijective mix of each 32-bit
 * word (single bytes at an unaligned head and the tail) plus its byte offset times an odd
 * constant, so one changed word changes it; the same bytes at the same alignment give the same
 * hash on every run. scratch: dk_scratch_bytes(). Synchronizes the stream. */
int dk_hash(const void *p, size_t n, unsigned long long *h, void *scratch, void *stream);

/* The fp32 FMA rate of an FMA loop on every SM (TFLOP/s, best of three runs): the measured
 * fp32 SIMT peak. Synchronizes the stream. */
int dk_fma_rate(int sms, double *tflops, void *stream);

#ifdef __cplusplus
}
#endif
#endif
