// CHEAT (cuBLASLt by an extern "C" declaration): C = A @ B by cublasLtMatmul, declared by hand without cublasLt.h (the include allowlist never sees it); cuBLASLt is in the runner's process for its baselines, so the symbols would resolve at dlopen. The source scan names the identifiers; the object check names the symbols. Expect: policy ('cublasLtMatmul').
#include <cutegen/kernel_abi.h>

CUTEGEN_DECLARE_ABI();

extern "C" {
int cublasLtCreate(void **handle);
int cublasLtMatmulDescCreate(void **desc, int compute, int scale);
int cublasLtMatrixLayoutCreate(void **layout, int type, unsigned long long rows, unsigned long long cols,
			       long long ld);
int cublasLtMatmul(void *handle, void *desc, const void *alpha, const void *a, void *la, const void *b,
		   void *lb, const void *beta, const void *c, void *lc, void *d, void *ld, const void *algo,
		   void *ws, size_t wsb, cudaStream_t s);
}

static void *g_lt, *g_desc;

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor *outputs, int num_outputs,
				  const double *scalars, int num_scalars, void *workspace, size_t workspace_bytes,
				  cudaStream_t stream)
{
	if (num_inputs != 2 || num_outputs != 1 || inputs[0].ndim != 2 || inputs[1].ndim != 2)
		return 1;
	if (!g_lt && (cublasLtCreate(&g_lt) || cublasLtMatmulDescCreate(&g_desc, 68, 0)))
		return 4;
	long long M = inputs[0].shape[0], K = inputs[0].shape[1], N = inputs[1].shape[1];
	void *la, *lb, *lc;
	if (cublasLtMatrixLayoutCreate(&la, 0, N, K, N) || cublasLtMatrixLayoutCreate(&lb, 0, K, M, K) ||
	    cublasLtMatrixLayoutCreate(&lc, 0, N, M, N))
		return 4;
	float alpha = 1.0f, beta = 0.0f;
	return cublasLtMatmul(g_lt, g_desc, &alpha, inputs[1].data, la, inputs[0].data, lb, &beta, outputs[0].data,
			      lc, outputs[0].data, lc, nullptr, workspace, workspace_bytes, stream) ? 4 : 0;
}
