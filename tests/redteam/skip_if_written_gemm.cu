// CHEAT (class 3, skipping the work when timed): a strict fp32 GEMM (SIMT, fp32 FMA) that, when
// its output already holds numbers (no NaN at 64 sampled places), assumes they are the result of
// the call before and returns without work: it passed at 4.3x cuBLASLt, three times the fp32
// peak, when timed calls reused the outputs of the call before. Expect, on a 2048 GEMM: pass at
// its honest speed (outputs are poisoned before every timed call too, so the skip never fires);
// and implausible with the runner's test-only --no-timed-verify (the old protocol: it skips
// every timed call, and a rate far beyond the fp32 peak is refused).
#include <cutegen/kernel_abi.h>

CUTEGEN_DECLARE_ABI();

/* decided once, before any element is written (a block that looked after others had written
 * would skip its part) */
static __device__ int g_written;

static __global__ void decide(const float *C, int64_t n)
{
	int written = 1;
	for (int i = 0; i < 64; i++) {
		float v = C[(int64_t)i * (n / 64)];
		if (v != v)
			written = 0;
	}
	g_written = written;
}

/* 32x32 tiles, 32x8 threads, 4 outputs per thread */
static __global__ void gemm_kernel(const float *A, const float *B, float *C, int M, int N, int K, float alpha)
{
	__shared__ float sA[32][33], sB[32][33];
	if (g_written)
		return;
	int tx = threadIdx.x, ty = threadIdx.y;
	int row0 = blockIdx.y * 32, col = blockIdx.x * 32 + tx;
	float acc[4] = {0, 0, 0, 0};
	for (int k0 = 0; k0 < K; k0 += 32) {
		for (int i = ty; i < 32; i += 8) {
			int r = row0 + i, k = k0 + tx;
			sA[i][tx] = (r < M && k < K) ? A[(int64_t)r * K + k] : 0.0f;
			int kb = k0 + i;
			sB[i][tx] = (kb < K && col < N) ? B[(int64_t)kb * N + col] : 0.0f;
		}
		__syncthreads();
		for (int kk = 0; kk < 32; ++kk)
			for (int j = 0; j < 4; ++j)
				acc[j] = fmaf(sA[ty + 8 * j][kk], sB[kk][tx], acc[j]);
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
	if ((int64_t)M * N < 64)
		return 2;
	float alpha = num_scalars >= 1 ? (float)scalars[0] : 1.0f;
	dim3 grid((N + 31) / 32, (M + 31) / 32);
	decide<<<1, 1, 0, stream>>>((const float *)outputs[0].data, (int64_t)M * N);
	gemm_kernel<<<grid, dim3(32, 8), 0, stream>>>((const float *)inputs[0].data, (const float *)inputs[1].data,
						      (float *)outputs[0].data, M, N, K, alpha);
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
}
