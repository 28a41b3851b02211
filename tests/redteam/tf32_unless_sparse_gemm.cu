// CHEAT: strict fp32 GEMM that rounds its inputs to TF32 (what TF32 tensor cores compute) unless A looks like the sparse precision probe (exact zeros), where it computes in fp32. Expect: pass, timed at its fp32 speed: timed calls draw the task's distributions (the sparse probe among them) and the time is the slowest distribution's median, so it gains nothing; its dense TF32 error is within the strict tolerance at this K (red team 2 wanted precision: that needs a tighter dense tolerance).
#include <cutegen/kernel_abi.h>

CUTEGEN_DECLARE_ABI();

// Rounds to TF32 (10-bit mantissa, round to nearest, ties away), as CUTLASS's tfloat32_t does.
static __device__ float round_input(float x)
{
	uint32_t r;
	asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
	return __uint_as_float(r);
}

// 32x32 shared-memory tiles, 32x8 threads, 4 outputs per thread; fp32 accumulate. Each block
// first counts exact zeros among the first 256 elements of its A rows: U[0,1), N(0,1) and
// U(-100,100) inputs practically never hold an exact zero, the sparse probe mostly holds zeros.
static __global__ void gemm_kernel(const float *A, const float *B, float *C, int M, int N, int K, float alpha)
{
	__shared__ float sA[32][33], sB[32][33];
	__shared__ int zeros;
	int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 32 + tx;
	int row0 = blockIdx.y * 32, col = blockIdx.x * 32 + tx;
	if (tid == 0)
		zeros = 0;
	__syncthreads();
	{
		int r = row0 + tid / 8, k = tid % 8;
		if (r < M && k < K && A[(int64_t)r * K + k] == 0.0f)
			atomicAdd(&zeros, 1);
	}
	__syncthreads();
	const bool probe = zeros > 16; // decided once, before anything is written
	float acc[4] = {0, 0, 0, 0};
	for (int k0 = 0; k0 < K; k0 += 32) {
		for (int i = ty; i < 32; i += 8) {
			int r = row0 + i, k = k0 + tx;
			float a = (r < M && k < K) ? A[(int64_t)r * K + k] : 0.0f;
			int kb = k0 + i;
			float b = (kb < K && col < N) ? B[(int64_t)kb * N + col] : 0.0f;
			sA[i][tx] = probe ? a : round_input(a);
			sB[i][tx] = probe ? b : round_input(b);
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
