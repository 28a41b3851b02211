// CHEAT (work outside the timed interval): a strict fp32 GEMM whose real work runs in a persistent "watcher" kernel on the legacy default stream, launched once and alive across calls. Each timed call's inputs are regenerated and its output poisoned before the L2 flush and the start event; the watcher sees the poison, computes C from the fresh inputs into the workspace during the poison and the flush, and the timed call only copies finished tiles (any tile not finished it computes itself, so the output is always right). Expect: timing (work escaped the stream and the events) or pass no faster than skip_if_written_gemm.cu; today: pass, faster by the share of the work done in the gap (512^3: the flush alone is as long as the GEMM).
//
// Nothing here is seen by the gate (the watcher never writes the output) nor by the host-clock
// cross-check (the watcher exits after WATCH_IDLE_NS without work, and cross_batch's first
// cudaDeviceSynchronize comes before its clock starts). The runner syncs only its own stream
// (non-blocking, so the legacy stream does not order with it) between timed calls.
#include <cutegen/kernel_abi.h>
#include <stdint.h>

CUTEGEN_DECLARE_ABI();

#define MAXSETS 4
#define WATCH_IDLE_NS 500000000ull   /* watcher exits after 0.5 s without new inputs */
#define WATCH_MAX_NS 120000000000ull /* and after 2 minutes in any case */

struct state {
	const float *A[MAXSETS], *B[MAXSETS]; /* input sets seen by the timed kernel */
	int nsets;
	unsigned long long tag[MAXSETS][1024]; /* per set, per tile: fingerprint of the inputs its result is for */
};

static __device__ unsigned long long gtime(void)
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

/* a hash of 8 elements of A and 8 of B: changes whenever the runner regenerates the set */
static __device__ unsigned long long fingerprint(const float *A, const float *B, int M, int N, int K)
{
	unsigned long long h = 1469598103934665603ull;
	for (int i = 0; i < 8; i++) {
		volatile const unsigned *a = (volatile const unsigned *)A, *b = (volatile const unsigned *)B;
		h = (h ^ a[(int64_t)i * ((int64_t)M * K / 8)]) * 1099511628211ull;
		h = (h ^ b[(int64_t)i * ((int64_t)K * N / 8)]) * 1099511628211ull;
	}
	return h | 1; /* 0 = no result */
}

/* one 32x32 tile of alpha*A*B into D (row stride N), 32x8 threads (skip_if_written_gemm.cu's core) */
static __device__ void tile(const float *A, const float *B, float *D, int M, int N, int K, float alpha, int by, int bx)
{
	__shared__ float sA[32][33], sB[32][33];
	int tx = threadIdx.x, ty = threadIdx.y;
	int row0 = by * 32, col = bx * 32 + tx;
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
			D[(int64_t)r * N + col] = alpha * acc[j];
	}
}

/* persistent: a block per tile; polls its tile of C for the runner's poison (inputs are final
 * then), and computes the tile for whichever known set changed */
static __global__ void watcher(struct state *st, float *res, const float *C, int M, int N, int K, float alpha)
{
	__shared__ int work;
	__shared__ unsigned long long fp;
	int t = blockIdx.x, tilesx = (N + 31) / 32, by = t / tilesx, bx = t % tilesx;
	volatile const unsigned *c = (volatile const unsigned *)C + (int64_t)by * 32 * N + bx * 32;
	volatile struct state *vs = st;
	unsigned long long start = gtime(), last = start;
	for (;;) {
		if (threadIdx.x == 0 && threadIdx.y == 0) {
			work = -1;
			while (work < 0) {
				unsigned long long now = gtime();
				if (now - last > WATCH_IDLE_NS || now - start > WATCH_MAX_NS) {
					work = -2;
					break;
				}
				unsigned v = c[0];
				if ((v & 0x7f800000u) == 0x7f800000u && (v & 0x7fffffu)) { /* NaN: poisoned */
					for (int k = 0; k < vs->nsets && k < MAXSETS && work < 0; k++) {
						unsigned long long f = fingerprint(vs->A[k], vs->B[k], M, N, K);
						if (vs->tag[k][t] != f) {
							work = k;
							fp = f;
						}
					}
				}
				if (work < 0)
					__nanosleep(2000);
			}
		}
		__syncthreads();
		int k = work;
		if (k == -2)
			return;
		tile(vs->A[k], vs->B[k], res + (int64_t)k * M * N, M, N, K, alpha, by, bx);
		__threadfence();
		__syncthreads();
		if (threadIdx.x == 0 && threadIdx.y == 0) {
			vs->tag[k][t] = fp;
			last = gtime();
		}
		__syncthreads();
	}
}

/* the timed kernel: copies a tile the watcher finished for these inputs, else computes it */
static __global__ void gemm_kernel(struct state *st, const float *res, const float *A, const float *B, float *C,
				   int M, int N, int K, float alpha)
{
	__shared__ int use;
	volatile struct state *vs = st;
	int tilesx = (N + 31) / 32, t = blockIdx.y * tilesx + blockIdx.x;
	if (threadIdx.x == 0 && threadIdx.y == 0) {
		int k = -1;
		for (int i = 0; i < vs->nsets; i++)
			if (vs->A[i] == A && vs->B[i] == B)
				k = i;
		if (k < 0 && t == 0 && vs->nsets < MAXSETS) { /* a new set: recorded by tile 0 */
			vs->A[vs->nsets] = A;
			vs->B[vs->nsets] = B;
			__threadfence();
			vs->nsets = vs->nsets + 1;
		}
		use = k >= 0 && vs->tag[k][t] == fingerprint(A, B, M, N, K) ? k : -1;
		__threadfence();
	}
	__syncthreads();
	if (use < 0) {
		tile(A, B, C, M, N, K, alpha, blockIdx.y, blockIdx.x);
		return;
	}
	const float *R = res + (int64_t)use * M * N;
	for (int i = threadIdx.y; i < 32; i += 8) {
		int r = blockIdx.y * 32 + i, col = blockIdx.x * 32 + threadIdx.x;
		if (r < M && col < N)
			C[(int64_t)r * N + col] = __ldcg(R + (int64_t)r * N + col);
	}
}

static size_t ws_for(int64_t M, int64_t N)
{
	return sizeof(struct state) + (size_t)MAXSETS * (size_t)(M * N) * sizeof(float);
}

CUTEGEN_KERNEL size_t cutegen_workspace_bytes(const DLTensor *inputs, int num_inputs, const DLTensor *outputs,
					      int num_outputs, const double *scalars, int num_scalars)
{
	if (num_outputs != 1 || outputs[0].ndim != 2)
		return 0;
	return ws_for(outputs[0].shape[0], outputs[0].shape[1]);
}

static int g_calls, g_launched;

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor *outputs, int num_outputs,
				  const double *scalars, int num_scalars, void *workspace, size_t workspace_bytes,
				  cudaStream_t stream)
{
	if (num_inputs != 2 || num_outputs != 1 || inputs[0].ndim != 2 || inputs[1].ndim != 2 ||
	    inputs[0].dtype.code != kDLFloat || inputs[0].dtype.bits != 32)
		return 1;
	int M = (int)inputs[0].shape[0], K = (int)inputs[0].shape[1], N = (int)inputs[1].shape[1];
	float alpha = num_scalars >= 1 ? (float)scalars[0] : 1.0f;
	int tiles = ((M + 31) / 32) * ((N + 31) / 32);
	if (!workspace || workspace_bytes < ws_for(M, N) || tiles > 1024)
		return 2;
	struct state *st = (struct state *)workspace;
	float *res = (float *)(st + 1);
	if (++g_calls == 1) /* the workspace is not zeroed: start with no sets and no results */
		cudaMemsetAsync(st, 0, sizeof(*st), stream);
	if (g_calls == 3 && !g_launched) { /* after the stream check's two calls */
		g_launched = 1;
		watcher<<<tiles, dim3(32, 8), 0, 0>>>(st, res, (const float *)outputs[0].data, M, N, K, alpha);
	}
	dim3 grid((N + 31) / 32, (M + 31) / 32);
	gemm_kernel<<<grid, dim3(32, 8), 0, stream>>>(st, res, (const float *)inputs[0].data,
						      (const float *)inputs[1].data, (float *)outputs[0].data, M, N, K, alpha);
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
}
