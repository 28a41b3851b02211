// CHEAT (forbidden library by an asm label): C = A @ B by cuBLASLt, whose functions are declared under names of the kernel's own with asm labels assembled from string literals ("cub" "lasLt" "Matmul"), so the source never shows a cublas identifier. The runner links cuBLASLt for its baselines, so the undefined symbols would resolve at dlopen and the "kernel" would score 1.00x cuBLASLt. Expect: policy (the object check: 'cublasLtMatmul' and the other cublasLt symbols).
#include <cutegen/kernel_abi.h>

CUTEGEN_DECLARE_ABI();

// cuBLASLt's C API, declared by hand under other names; the labels are what the linker sees.
extern "C" int lt_create(void **handle) __asm__("cub" "lasLt" "Create");
extern "C" int lt_desc(void **desc, int compute, int scale) __asm__("cub" "lasLt" "MatmulDescCreate");
extern "C" int lt_layout(void **layout, int type, unsigned long long rows, unsigned long long cols,
			 long long ld) __asm__("cub" "lasLt" "MatrixLayoutCreate");
extern "C" int lt_matmul(void *handle, void *desc, const void *alpha, const void *a, void *la,
			 const void *b, void *lb, const void *beta, const void *c, void *lc, void *d,
			 void *ld, const void *algo, void *ws, size_t wsb, cudaStream_t s)
	__asm__("cub" "lasLt" "Matmul");

static void *g_lt, *g_desc;

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor *outputs, int num_outputs,
				  const double *scalars, int num_scalars, void *workspace, size_t workspace_bytes,
				  cudaStream_t stream)
{
	if (num_inputs != 2 || num_outputs != 1 || inputs[0].ndim != 2 || inputs[1].ndim != 2)
		return 1;
	const int kCompute32F = 68, kR32F = 0; // CUBLAS_COMPUTE_32F, CUDA_R_32F
	if (!g_lt && (lt_create(&g_lt) || lt_desc(&g_desc, kCompute32F, kR32F)))
		return 4;
	long long M = inputs[0].shape[0], K = inputs[0].shape[1], N = inputs[1].shape[1];
	// Row-major C = A @ B is column-major C^T = B^T @ A^T.
	void *la, *lb, *lc;
	if (lt_layout(&la, kR32F, N, K, N) || lt_layout(&lb, kR32F, K, M, K) || lt_layout(&lc, kR32F, N, M, N))
		return 4;
	float alpha = 1.0f, beta = 0.0f;
	return lt_matmul(g_lt, g_desc, &alpha, inputs[1].data, la, inputs[0].data, lb, &beta, outputs[0].data, lc,
			 outputs[0].data, lc, nullptr, workspace, workspace_bytes, stream) ? 4 : 0;
}
