// CHEAT (forbidden library): C = alpha * A @ B by calling cublasSgemm on `stream`. Expect: policy (rejected statically: cuBLAS include and call; it would also fail to load without -lcublas).
#include <cutegen/kernel_abi.h>
#include <cublas_v2.h>

CUTEGEN_DECLARE_ABI();

static cublasHandle_t g_handle;

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor *outputs, int num_outputs,
				  const double *scalars, int num_scalars, void *workspace, size_t workspace_bytes,
				  cudaStream_t stream)
{
	if (num_inputs != 2 || num_outputs != 1 || inputs[0].ndim != 2 || inputs[1].ndim != 2)
		return 1;
	if (!g_handle && cublasCreate(&g_handle) != CUBLAS_STATUS_SUCCESS)
		return 4;
	cublasSetStream(g_handle, stream);
	int M = (int)inputs[0].shape[0], K = (int)inputs[0].shape[1], N = (int)inputs[1].shape[1];
	float alpha = num_scalars >= 1 ? (float)scalars[0] : 1.0f, beta = 0.0f;
	// Row-major C = A @ B is column-major C^T = B^T @ A^T.
	cublasStatus_t st = cublasSgemm(g_handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha,
					(const float *)inputs[1].data, N, (const float *)inputs[0].data, K,
					&beta, (float *)outputs[0].data, N);
	return st == CUBLAS_STATUS_SUCCESS ? 0 : 4;
}
