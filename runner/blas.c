/* cuBLASLt references and baselines; see blas.h. */
#include "blas.h"
#include "devkern.h"
#include "common/task.h"

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORKSPACE_BYTES (64u << 20)
#define MAX_ALGOS 8

struct blas_plan {
	cublasLtHandle_t h;
	cublasLtMatmulDesc_t op;
	cublasLtMatrixLayout_t la, lb, lc;
	cublasLtMatmulAlgo_t algo;
	void *ws;
	const void *A, *B;
	void *C;
	float alpha, beta;
	char desc[128];
};

static cudaDataType_t cuda_type(int dk)
{
	switch (dk) {
	case DK_FP16: return CUDA_R_16F;
	case DK_BF16: return CUDA_R_16BF;
	case DK_FP8: return CUDA_R_8F_E4M3;
	default: return CUDA_R_32F;
	}
}

static int set_batch(cublasLtMatrixLayout_t l, int64_t batch, int64_t stride)
{
	if (batch <= 1)
		return 0;
	int32_t b = (int32_t)batch;
	return cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &b, sizeof(b)) ||
	       cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
						sizeof(stride));
}

void blas_plan_free(struct blas_plan *p)
{
	if (!p)
		return;
	if (p->la) cublasLtMatrixLayoutDestroy(p->la);
	if (p->lb) cublasLtMatrixLayoutDestroy(p->lb);
	if (p->lc) cublasLtMatrixLayoutDestroy(p->lc);
	if (p->op) cublasLtMatmulDescDestroy(p->op);
	if (p->h) cublasLtDestroy(p->h);
	if (p->ws) cudaFree(p->ws);
	free(p);
}

static int run_algo(struct blas_plan *p, const cublasLtMatmulAlgo_t *algo, cudaStream_t s)
{
	return (int)cublasLtMatmul(p->h, p->op, &p->alpha, p->B, p->la, p->A, p->lb, &p->beta, p->C,
				   p->lc, p->C, p->lc, algo, p->ws, WORKSPACE_BYTES, s);
}

int blas_plan_run(struct blas_plan *p, void *stream)
{
	return run_algo(p, &p->algo, (cudaStream_t)stream);
}

int blas_plan_bind(struct blas_plan *p, const void *A, const void *B, const void *bias)
{
	p->A = A;
	p->B = B;
	if (bias && cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)))
		return -1;
	return 0;
}

const char *blas_plan_describe(const struct blas_plan *p)
{
	return p->desc;
}

/* Median of 3 event-timed runs of one algorithm; negative when it fails. */
static float time_algo(struct blas_plan *p, const cublasLtMatmulAlgo_t *algo, cudaStream_t s)
{
	cudaEvent_t e0, e1;
	float t[3] = { -1, -1, -1 };
	cudaEventCreate(&e0);
	cudaEventCreate(&e1);
	if (run_algo(p, algo, s) == 0) {
		for (int i = 0; i < 3; i++) {
			cudaEventRecord(e0, s);
			if (run_algo(p, algo, s))
				break;
			cudaEventRecord(e1, s);
			cudaEventSynchronize(e1);
			cudaEventElapsedTime(&t[i], e0, e1);
		}
	}
	cudaEventDestroy(e0);
	cudaEventDestroy(e1);
	cudaGetLastError();
	if (t[2] < 0)
		return -1;
	float a = t[0], b = t[1], c = t[2];
	return a > b ? (b > c ? b : (a > c ? c : a)) : (a > c ? a : (b > c ? c : b));
}

struct blas_plan *blas_plan_new(const struct gemm_desc *d, const void *A, const void *B, void *C,
				int tune, void *stream, char *err, size_t errlen)
{
	struct blas_plan *p = calloc(1, sizeof(*p));
	cudaStream_t s = (cudaStream_t)stream;
	cublasStatus_t st;
	const char *what = "cublasLtCreate";
	p->A = A;
	p->B = B;
	p->C = C;
	p->alpha = d->alpha;
	p->beta = 0.0f;
	if ((st = cublasLtCreate(&p->h)))
		goto fail;
	if (cudaMalloc(&p->ws, WORKSPACE_BYTES)) {
		snprintf(err, errlen, "cannot allocate the cuBLASLt workspace");
		blas_plan_free(p);
		return NULL;
	}
	cublasComputeType_t ct = d->compute == BLAS_FP32_PEDANTIC ? CUBLAS_COMPUTE_32F_PEDANTIC
				 : d->compute == BLAS_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32
				 : CUBLAS_COMPUTE_32F;
	what = "cublasLtMatmulDescCreate";
	if ((st = cublasLtMatmulDescCreate(&p->op, ct, CUDA_R_32F)))
		goto fail;
	/* C^T(N,M) = B^T(N,K) A^T(K,M) in column-major terms. */
	cublasOperation_t ta = d->b_col ? CUBLAS_OP_T : CUBLAS_OP_N;
	cublasOperation_t tb = d->a_col ? CUBLAS_OP_T : CUBLAS_OP_N;
	what = "matmul attributes";
	if ((st = cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta))) ||
	    (st = cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb))))
		goto fail;
	if (d->bias || d->epi_act) {
		cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_DEFAULT;
		if (d->epi_act == ACT_RELU)
			epi = d->bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
		else if (d->epi_act == ACT_GELU_TANH)
			epi = d->bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
		else if (d->epi_act == ACT_NONE)
			epi = CUBLASLT_EPILOGUE_BIAS;
		else {
			snprintf(err, errlen, "cuBLASLt has no fused epilogue for activation '%s'",
				 act_name((enum act)d->epi_act));
			blas_plan_free(p);
			return NULL;
		}
		what = "epilogue attributes";
		if ((st = cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi))))
			goto fail;
		if (d->bias) {
			cudaDataType_t bt = cuda_type(d->bias_dtype);
			if ((st = cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &d->bias,
								 sizeof(d->bias))) ||
			    (st = cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt,
								 sizeof(bt))))
				goto fail;
		}
	}
	what = "matrix layouts";
	if ((st = cublasLtMatrixLayoutCreate(&p->la, cuda_type(d->b_dtype), d->b_col ? d->k : d->n,
					     d->b_col ? d->n : d->k, d->b_col ? d->k : d->n)) ||
	    (st = cublasLtMatrixLayoutCreate(&p->lb, cuda_type(d->a_dtype), d->a_col ? d->m : d->k,
					     d->a_col ? d->k : d->m, d->a_col ? d->m : d->k)) ||
	    (st = cublasLtMatrixLayoutCreate(&p->lc, cuda_type(d->out_dtype), d->n, d->m, d->n)))
		goto fail;
	if (set_batch(p->la, d->batch, d->b_batched ? d->k * d->n : 0) ||
	    set_batch(p->lb, d->batch, d->m * d->k) || set_batch(p->lc, d->batch, d->m * d->n)) {
		st = CUBLAS_STATUS_INVALID_VALUE;
		goto fail;
	}

	cublasLtMatmulPreference_t pref;
	cublasLtMatmulHeuristicResult_t res[MAX_ALGOS];
	int nres = 0;
	uint64_t wsb = WORKSPACE_BYTES;
	cublasLtMatmulPreferenceCreate(&pref);
	cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof(wsb));
	what = "cublasLtMatmulAlgoGetHeuristic";
	st = cublasLtMatmulAlgoGetHeuristic(p->h, p->op, p->la, p->lb, p->lc, p->lc, pref,
					    tune ? MAX_ALGOS : 1, res, &nres);
	cublasLtMatmulPreferenceDestroy(pref);
	if (st)
		goto fail;
	if (nres == 0) {
		snprintf(err, errlen, "cuBLASLt has no algorithm for this GEMM");
		blas_plan_free(p);
		return NULL;
	}
	int best = 0;
	float best_ms = -1;
	if (tune && nres > 1) {
		for (int i = 0; i < nres; i++) {
			float ms = time_algo(p, &res[i].algo, s);
			if (ms > 0 && (best_ms < 0 || ms < best_ms)) {
				best_ms = ms;
				best = i;
			}
		}
		if (best_ms < 0) {
			snprintf(err, errlen, "none of cuBLASLt's %d candidate algorithms ran", nres);
			blas_plan_free(p);
			return NULL;
		}
	}
	p->algo = res[best].algo;
	snprintf(p->desc, sizeof(p->desc), "cuBLASLt heuristic %d of %d%s", best + 1, nres,
		 tune ? " (fastest)" : "");
	return p;
fail:
	snprintf(err, errlen, "%s failed: cuBLAS status %d", what, (int)st);
	blas_plan_free(p);
	return NULL;
}

size_t blas_version(void)
{
	return cublasLtGetVersion();
}
