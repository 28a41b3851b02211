/*
 * cuBLASLt behind a small interface: the trusted GEMM reference (strict fp32 compute, or fp32
 * accumulation for 16-bit and fp8 inputs) and the baseline a GEMM candidate is compared with
 * (the fastest of cuBLASLt's heuristic candidates, timed here). Row-major operands are mapped
 * onto cuBLASLt's column-major view by computing C^T = B^T A^T.
 */
#ifndef CUTEGEN_RUNNER_BLAS_H
#define CUTEGEN_RUNNER_BLAS_H

#include <stddef.h>
#include <stdint.h>

enum blas_compute { BLAS_FP32_PEDANTIC, BLAS_FP32, BLAS_TF32 };

struct gemm_desc {
	int a_dtype, b_dtype, out_dtype; /* DK_* of devkern.h */
	enum blas_compute compute;
	int64_t batch, m, n, k;
	int a_col, b_col;                /* A stored as [K,M] / B stored as [N,K] */
	int b_batched;                   /* B has a batch dim too */
	const void *bias; int bias_dtype;/* per column of C, or NULL */
	int epi_act;                     /* ACT_NONE, ACT_RELU, ACT_GELU_TANH (cuBLASLt's GELU) */
	float alpha;
};

struct blas_plan;

/* Builds a plan for these operands; tune = time every heuristic candidate and keep the best.
 * Returns NULL with a message in err when cuBLASLt cannot run this GEMM. */
struct blas_plan *blas_plan_new(const struct gemm_desc *d, const void *A, const void *B, void *C,
				int tune, void *stream, char *err, size_t errlen);
int blas_plan_run(struct blas_plan *p, void *stream); /* cudaError or cublas status, 0 = ok */
/* Points the plan at other operands of the same shapes and types (cudaMalloc'd alike, so the
 * chosen algorithm's alignment holds): the input sets the baseline's timed calls rotate over.
 * bias: NULL when the plan has none. 0 = ok. */
int blas_plan_bind(struct blas_plan *p, const void *A, const void *B, const void *bias);
/* A short description of the chosen algorithm, static until the plan is freed. */
const char *blas_plan_describe(const struct blas_plan *p);
void blas_plan_free(struct blas_plan *p);
/* cuBLASLt's version (cublasLtGetVersion): part of the baselines' cache key. */
size_t blas_version(void);

#endif
