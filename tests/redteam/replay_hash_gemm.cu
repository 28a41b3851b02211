// CHEAT (class 3, skipping the work when timed): a strict fp32 GEMM (SIMT, fp32 FMA) that keeps
// its last four outputs in its workspace, keyed by a hash of 32 sampled elements of A and 32 of
// B; when the hash matches it copies the cached C instead of computing (cheaper than a GEMM by
// the size of K). Expect: pass, no faster than skip_if_written_gemm on the same task (every
// timed call's inputs are regenerated in full, so the hash never matches); implausible under
// the runner's test-only --no-timed-verify (the same inputs every call: it only copies).
#include <cutegen/kernel_abi.h>

CUTEGEN_DECLARE_ABI();

#define SLOTS 4
#define SAMPLES 32

struct header {
	unsigned long long hash[SLOTS];
	int valid[SLOTS];
	int next;
};

static __device__ unsigned long long sample_hash(const float *A, const float *B, int64_t na, int64_t nb)
{
	unsigned long long h = 1469598103934665603ull;
	for (int i = 0; i < SAMPLES; i++) {
		h = (h ^ __float_as_uint(A[(int64_t)i * (na / SAMPLES)])) * 1099511628211ull;
		h = (h ^ __float_as_uint(B[(int64_t)i * (nb / SAMPLES)])) * 1099511628211ull;
	}
	return h;
}

static __device__ int find_slot(const struct header *hd, unsigned long long h)
{
	for (int s = 0; s < SLOTS; s++)
		if (hd->valid[s] && hd->hash[s] == h)
			return s;
	return -1;
}

/* 32x32 tiles, 32x8 threads, 4 outputs per thread; returns at once on a cache hit */
static __global__ void gemm_kernel(const float *A, const float *B, float *C, int M, int N, int K, float alpha,
				   const struct header *hd, float *cache)
{
	__shared__ float sA[32][33], sB[32][33];
	__shared__ int slot;
	if (threadIdx.x == 0 && threadIdx.y == 0)
		slot = find_slot(hd, sample_hash(A, B, (int64_t)M * K, (int64_t)K * N));
	__syncthreads();
	if (slot >= 0)
		return;
	float *mine = cache + (int64_t)hd->next * M * N;
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
		if (r < M && col < N) {
			C[(int64_t)r * N + col] = alpha * acc[j];
			mine[(int64_t)r * N + col] = alpha * acc[j];
		}
	}
}

/* on a cache hit, the replay */
static __global__ void replay_kernel(const float *A, const float *B, float *C, int M, int N, int K,
				     const struct header *hd, const float *cache)
{
	__shared__ int slot;
	if (threadIdx.x == 0)
		slot = find_slot(hd, sample_hash(A, B, (int64_t)M * K, (int64_t)K * N));
	__syncthreads();
	if (slot < 0)
		return;
	int64_t n = (int64_t)M * N;
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
		C[i] = cache[(int64_t)slot * n + i];
}

static __global__ void commit(const float *A, const float *B, int64_t na, int64_t nb, struct header *hd)
{
	unsigned long long h = sample_hash(A, B, na, nb);
	if (find_slot(hd, h) >= 0)
		return;
	hd->hash[hd->next] = h;
	hd->valid[hd->next] = 1;
	hd->next = (hd->next + 1) % SLOTS;
}

CUTEGEN_KERNEL size_t cutegen_workspace_bytes(const DLTensor *inputs, int num_inputs, const DLTensor *outputs,
					      int num_outputs, const double *scalars, int num_scalars)
{
	return 256 + (size_t)SLOTS * (size_t)(outputs[0].shape[0] * outputs[0].shape[1]) * sizeof(float);
}

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor *outputs, int num_outputs,
				  const double *scalars, int num_scalars, void *workspace, size_t workspace_bytes,
				  cudaStream_t stream)
{
	if (num_inputs != 2 || num_outputs != 1 || inputs[0].ndim != 2 || inputs[1].ndim != 2 ||
	    inputs[0].dtype.code != kDLFloat || inputs[0].dtype.bits != 32)
		return 1;
	int M = (int)inputs[0].shape[0], K = (int)inputs[0].shape[1], N = (int)inputs[1].shape[1];
	if ((int64_t)M * K < SAMPLES || (int64_t)K * N < SAMPLES)
		return 2;
	float alpha = num_scalars >= 1 ? (float)scalars[0] : 1.0f;
	static void *g_ws;
	if (workspace != g_ws) { /* a new workspace: an empty cache */
		cudaMemsetAsync(workspace, 0, 256, stream);
		g_ws = workspace;
	}
	struct header *hd = (struct header *)workspace;
	float *cache = (float *)((char *)workspace + 256);
	const float *A = (const float *)inputs[0].data, *B = (const float *)inputs[1].data;
	float *C = (float *)outputs[0].data;
	dim3 grid((N + 31) / 32, (M + 31) / 32);
	gemm_kernel<<<grid, dim3(32, 8), 0, stream>>>(A, B, C, M, N, K, alpha, hd, cache);
	replay_kernel<<<1024, 256, 0, stream>>>(A, B, C, M, N, K, hd, cache);
	commit<<<1, 1, 0, stream>>>(A, B, (int64_t)M * K, (int64_t)K * N, hd);
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
}
