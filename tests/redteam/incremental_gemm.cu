// CHEAT (class 3, skipping the work when timed): a strict fp32 GEMM (SIMT, fp32 FMA, the same
// core as skip_if_written_gemm.cu) that keeps C and copies of A and B in its workspace, diffs the
// new A and B against the copies (a memory-bound read), and recomputes only the 32x32 tiles of C
// whose rows or columns changed, copying the rest from the cached C. Its output is right on any
// input; it is fast only when most of the inputs are those of an earlier call, which timed calls
// whose inputs change in a few elements gave it. Expect: pass at an honest speed, no faster than
// skip_if_written_gemm.cu on the same task (every timed call gets inputs regenerated in full, so
// every tile is recomputed).
#include <cutegen/kernel_abi.h>

CUTEGEN_DECLARE_ABI();

struct header {
	int valid; /* C, A and B copies hold an earlier call's */
};

/* rows[m] / cols[n] = 1 where A's row m / B's column n differs from the copy; the copy updated */
static __global__ void diff_a(const float *A, float *Acopy, int *rows, int64_t mk, int K)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < mk; i += (int64_t)gridDim.x * blockDim.x) {
		float v = A[i];
		if (__float_as_uint(v) != __float_as_uint(Acopy[i])) {
			rows[i / K] = 1;
			Acopy[i] = v;
		}
	}
}

static __global__ void diff_b(const float *B, float *Bcopy, int *cols, int64_t kn, int N)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < kn; i += (int64_t)gridDim.x * blockDim.x) {
		float v = B[i];
		if (__float_as_uint(v) != __float_as_uint(Bcopy[i])) {
			cols[i % N] = 1;
			Bcopy[i] = v;
		}
	}
}

/* 32x32 tiles, 32x8 threads, 4 outputs per thread; a tile none of whose rows and columns
 * changed is copied from the cache */
static __global__ void gemm_kernel(const float *A, const float *B, float *C, int M, int N, int K, float alpha,
				   const struct header *hd, const int *rows, const int *cols, float *cache)
{
	__shared__ float sA[32][33], sB[32][33];
	__shared__ int dirty;
	int tx = threadIdx.x, ty = threadIdx.y;
	int row0 = blockIdx.y * 32, col = blockIdx.x * 32 + tx;
	if (tx == 0 && ty == 0)
		dirty = !hd->valid;
	__syncthreads();
	if (ty == 0) {
		if ((row0 + tx < M && rows[row0 + tx]) || (col < N && cols[col]))
			dirty = 1;
	}
	__syncthreads();
	if (!dirty) {
		for (int j = 0; j < 4; ++j) {
			int r = row0 + ty + 8 * j;
			if (r < M && col < N)
				C[(int64_t)r * N + col] = cache[(int64_t)r * N + col];
		}
		return;
	}
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
			cache[(int64_t)r * N + col] = alpha * acc[j];
		}
	}
}

static __global__ void mark_valid(struct header *hd)
{
	hd->valid = 1;
}

static size_t bytes_for(int64_t M, int64_t N, int64_t K)
{
	return 256 + (size_t)(M * N + M * K + K * N) * sizeof(float) + (size_t)(M + N) * sizeof(int);
}

CUTEGEN_KERNEL size_t cutegen_workspace_bytes(const DLTensor *inputs, int num_inputs, const DLTensor *outputs,
					      int num_outputs, const double *scalars, int num_scalars)
{
	return bytes_for(inputs[0].shape[0], inputs[1].shape[1], inputs[0].shape[1]);
}

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor *outputs, int num_outputs,
				  const double *scalars, int num_scalars, void *workspace, size_t workspace_bytes,
				  cudaStream_t stream)
{
	if (num_inputs != 2 || num_outputs != 1 || inputs[0].ndim != 2 || inputs[1].ndim != 2 ||
	    inputs[0].dtype.code != kDLFloat || inputs[0].dtype.bits != 32)
		return 1;
	int M = (int)inputs[0].shape[0], K = (int)inputs[0].shape[1], N = (int)inputs[1].shape[1];
	if (workspace_bytes < bytes_for(M, N, K))
		return 2;
	float alpha = num_scalars >= 1 ? (float)scalars[0] : 1.0f;
	static void *g_ws;
	struct header *hd = (struct header *)workspace;
	if (workspace != g_ws) { /* a new workspace: nothing cached */
		cudaMemsetAsync(hd, 0, sizeof(*hd), stream);
		g_ws = workspace;
	}
	float *cache = (float *)((char *)workspace + 256);
	float *Acopy = cache + (int64_t)M * N, *Bcopy = Acopy + (int64_t)M * K;
	int *rows = (int *)(Bcopy + (int64_t)K * N), *cols = rows + M;
	const float *A = (const float *)inputs[0].data, *B = (const float *)inputs[1].data;
	cudaMemsetAsync(rows, 0, (size_t)(M + N) * sizeof(int), stream);
	diff_a<<<1024, 256, 0, stream>>>(A, Acopy, rows, (int64_t)M * K, K);
	diff_b<<<1024, 256, 0, stream>>>(B, Bcopy, cols, (int64_t)K * N, N);
	dim3 grid((N + 31) / 32, (M + 31) / 32);
	gemm_kernel<<<grid, dim3(32, 8), 0, stream>>>(A, B, (float *)outputs[0].data, M, N, K, alpha, hd, rows,
						      cols, cache);
	mark_valid<<<1, 1, 0, stream>>>(hd);
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
}
