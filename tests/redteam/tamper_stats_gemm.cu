// CHEAT (device memory of the runner): a "strict fp32 GEMM" that does no work on timed calls. It reads the runner's scratch pointer from struct ctx on the runner's stack and, for the timed loop only, runs a watcher kernel on the legacy default stream that keeps writing 0 into the first word of that scratch: the `bad` count of every check (dk_compare_run, dk_sample_check, dk_verify_fill all keep it there), so the runner reads "0 wrong" for outputs that still hold the poison. Each timed call spins for the time 100 TFLOP/s would take (under the 178 TFLOP/s strict limit: about 2x cuBLASLt). Checked calls, the cross-check and the re-check are honest. Expect: timing (work outlived the call on another stream; or timing_mismatch once checks cannot be written to); today: pass at ~2x cuBLASLt with no work (untested on a GPU).
//
// Timed calls are told by the runner's PRNG word, which only the timed loop advances (found as
// in rng_predict_gemm.cu). The watcher exits 100 ms after the last timed call, before the
// cross-check's first cudaDeviceSynchronize matters (its clock starts after it).
#include <cutegen/kernel_abi.h>
#include <cuda_runtime.h>
#include <stdint.h>

CUTEGEN_DECLARE_ABI();

#define TARGET_TFLOPS 100.0
#define IDLE_NS 100000000ull

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor *outputs, int num_outputs,
				  const double *scalars, int num_scalars, void *workspace, size_t workspace_bytes,
				  cudaStream_t stream);

static uint64_t step(uint64_t x)
{
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	return x;
}

static int steps_between(uint64_t a, uint64_t b, int max)
{
	for (int k = 1; k <= max; k++) {
		a = step(a);
		if (a == b)
			return k;
	}
	return 0;
}

#define WIN 2048
static uint64_t g_snap[WIN];
static const uint64_t *g_snap_base, *g_rng;
static uint64_t g_last;
static void *g_scratch;

/* 1 when this call is a timed one (the runner's PRNG moved since the last call) */
static int timed_call(void *ws, size_t ws_bytes, cudaStream_t s)
{
	const uint64_t *sp = (const uint64_t *)__builtin_frame_address(0);
	const uint64_t *pat = 0, *s_at = 0;
	for (int i = 0; i < (1 << 17) && !pat; i++)
		if (sp[i] == (uint64_t)(uintptr_t)&cutegen_launch && sp[i + 1] == (uint64_t)(uintptr_t)ws &&
		    sp[i + 2] == (uint64_t)ws_bytes)
			for (int j = 3; j < 8 && !pat; j++) /* s: after ws_bytes, maybe past new fields */
				if (sp[i + j] == (uint64_t)(uintptr_t)s)
					pat = sp + i, s_at = sp + i + j;
	if (!pat)
		return 0;
	/* struct ctx: ... s; cudaEvent_t join[2]; struct cudaDeviceProp prop; void *scratch; ... */
	size_t off = (sizeof(struct cudaDeviceProp) + 7) & ~(size_t)7;
	g_scratch = *(void *const *)((const char *)(s_at + 3) + off);
	const uint64_t *lo = pat - WIN > sp ? pat - WIN : sp;
	if (!g_rng) {
		if (g_snap_base == lo)
			for (int j = 0; lo + j < pat && !g_rng; j++)
				if (lo[j] != g_snap[j] && steps_between(g_snap[j], lo[j], 300)) {
					g_rng = lo + j;
					g_last = g_snap[j];
				}
		for (int j = 0; lo + j < pat; j++)
			g_snap[j] = lo[j];
		g_snap_base = lo;
		if (!g_rng)
			return 0;
	}
	uint64_t now = *g_rng;
	int moved = now != g_last;
	g_last = now;
	return moved;
}

static __device__ unsigned long long gtime(void)
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

struct state {
	unsigned long long beat; /* bumped by every timed call */
};

/* one block: every thread keeps storing 0 into `bad` (a store every few nanoseconds, so the
 * copy that reads the count after a check always finds 0); thread 0 ends it 100 ms after the
 * last timed call */
static __global__ void watcher(volatile unsigned long long *bad, volatile struct state *st)
{
	__shared__ volatile int stop;
	if (threadIdx.x == 0)
		stop = 0;
	__syncthreads();
	if (threadIdx.x) {
		while (!stop)
			*bad = 0;
		return;
	}
	unsigned long long seen = st->beat, last = gtime();
	for (;;) {
		*bad = 0;
		unsigned long long b = st->beat, now = gtime();
		if (b != seen) {
			seen = b;
			last = now;
		} else if (now - last > IDLE_NS) {
			stop = 1;
			return;
		}
	}
}

static __global__ void pretend(volatile struct state *st, unsigned long long ns)
{
	unsigned long long t0 = gtime();
	st->beat = st->beat + 1;
	while (gtime() - t0 < ns)
		;
}

/* 32x32 tiles, 32x8 threads, 4 outputs per thread (skip_if_written_gemm.cu's core) */
static __global__ void gemm_kernel(const float *A, const float *B, float *C, int M, int N, int K, float alpha)
{
	__shared__ float sA[32][33], sB[32][33];
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

CUTEGEN_KERNEL size_t cutegen_workspace_bytes(const DLTensor *inputs, int num_inputs, const DLTensor *outputs,
					      int num_outputs, const double *scalars, int num_scalars)
{
	return 4096;
}

static int g_calls, g_watching;

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor *outputs, int num_outputs,
				  const double *scalars, int num_scalars, void *workspace, size_t workspace_bytes,
				  cudaStream_t stream)
{
	if (num_inputs != 2 || num_outputs != 1 || inputs[0].ndim != 2 || inputs[1].ndim != 2 ||
	    inputs[0].dtype.code != kDLFloat || inputs[0].dtype.bits != 32 || !workspace)
		return 1;
	int M = (int)inputs[0].shape[0], K = (int)inputs[0].shape[1], N = (int)inputs[1].shape[1];
	float alpha = num_scalars >= 1 ? (float)scalars[0] : 1.0f;
	struct state *st = (struct state *)workspace;
	if (++g_calls == 1)
		cudaMemsetAsync(st, 0, sizeof(*st), stream);
	if (timed_call(workspace, workspace_bytes, stream) && g_scratch) {
		if (!g_watching) { /* once: it lives through the timed loop, then exits */
			g_watching = 1;
			watcher<<<1, 1024, 0, 0>>>((volatile unsigned long long *)g_scratch, st);
		}
		double ns = 2.0 * M * N * K / (TARGET_TFLOPS * 1e12) * 1e9;
		pretend<<<1, 1, 0, stream>>>(st, (unsigned long long)ns);
		return cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
	}
	dim3 grid((N + 31) / 32, (M + 31) / 32);
	gemm_kernel<<<grid, dim3(32, 8), 0, stream>>>((const float *)inputs[0].data, (const float *)inputs[1].data,
						      (float *)outputs[0].data, M, N, K, alpha);
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
}
