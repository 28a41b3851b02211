// CHEAT: fp32 GEMM whose inputs are rounded to fp16 before the fp32 multiply-add. Expect: precision (fails the strict fp32 contract; KernelBench's own 4096 check passes it).
#include <cutegen/kernel_abi.h>
#include <cuda_fp16.h>
CUTEGEN_DECLARE_ABI();

// Rounds each input to fp16 and back.
static __device__ float round_input(float x) { return __half2float(__float2half_rn(x)); }

// 32x32 shared-memory tiles, 32x8 threads, 4 outputs per thread; fp32 accumulate.
static __global__ void gemm_kernel(const float *A, const float *B, float *C, int M, int N, int K, float alpha)
{
	__shared__ float sA[32][33], sB[32][33];
	int tx = threadIdx.x, ty = threadIdx.y;
	int row0 = blockIdx.y * 32, col = blockIdx.x * 32 + tx;
	float acc[4] = {0, 0, 0, 0};
	for (int k0 = 0; k0 < K; k0 += 32) {
		for (int i = ty; i < 32; i += 8) {
			int r = row0 + i, k = k0 + tx;
			sA[i][tx] = (r < M && k < K) ? round_input(A[(int64_t)r * K + k]) : 0.0f;
			int kb = k0 + i;
			sB[i][tx] = (kb < K && col < N) ? round_input(B[(int64_t)kb * N + col]) : 0.0f;
		}
		__syncthreads();
		for (int kk = 0; kk < 32; ++kk)
			for (int j = 0; j < 4; ++j)
				acc[j] += sA[ty + 8 * j][kk] * sB[kk][tx];
		__syncthreads();
	}
	for (int j = 0; j < 4; ++j) {
		int r = row0 + ty + 8 * j;
		if (r < M && col < N)
			C[(int64_t)r * N + col] = alpha * acc[j];
	}
}

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor *outputs, int num_outputs,
				  const double *scalars, int num_scalars, void *workspace, size_t workspace_bytes,
				  cudaStream_t stream)
{
	if (num_inputs != 2 || num_outputs != 1 || inputs[0].ndim != 2 || inputs[1].ndim != 2 ||
	    inputs[0].dtype.code != kDLFloat || inputs[0].dtype.bits != 32)
		return 1;
	int M = (int)inputs[0].shape[0], K = (int)inputs[0].shape[1], N = (int)inputs[1].shape[1];
	float alpha = num_scalars >= 1 ? (float)scalars[0] : 1.0f;
	dim3 grid((N + 31) / 32, (M + 31) / 32);
	gemm_kernel<<<grid, dim3(32, 8), 0, stream>>>((const float *)inputs[0].data, (const float *)inputs[1].data,
						      (float *)outputs[0].data, M, N, K, alpha);
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
}
