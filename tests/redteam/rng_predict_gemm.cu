// CHEAT (runner memory): a strict fp32 GEMM that reads the runner's PRNG state from the runner's own stack (the candidate runs in the runner's process), predicts the 256 positions a sampled timed call will be checked at, and on those calls computes only the tiles holding them plus a third of the rest: about 3x its honest speed, under the plausibility limit. Expect: pass no faster than skip_if_written_gemm.cu (the same core, honest); today: pass at ~3x.
//
// How: struct ctx (runner/runner.c) lives in main's frame, above this call on the stack, and holds
// the words launch, ws, ws_bytes in a row and s a few words after (session 32 put the ABI area's
// pointer between them): the candidate knows all four. Its PRNG
// word `rng` lies below them in the struct; it is found as the word that moves by xorshift64*
// steps between calls. A timed call advances it once (the input seed), a sampled check 256
// times (its positions, drawn after the call from this state): so a call after a 257-step
// advance, or the 4th of a run of 1-step advances (the first 3 timed calls are checked in
// full), is a sampled call, and the positions it will be checked at are known before it runs.
// No forbidden symbol, no system call: plain loads from the stack.
#include <cutegen/kernel_abi.h>
#include <stdint.h>

CUTEGEN_DECLARE_ABI();

#define NSAMP 256
#define KEEP_MOD 3 /* on sampled calls, tiles computed beside the predicted ones: 1 in KEEP_MOD */

struct picks {
	int n;
	long long idx[NSAMP];
};

static uint64_t step(uint64_t x)
{
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	return x;
}

/* steps from a to b (1..max), or 0 */
static int steps_between(uint64_t a, uint64_t b, int max)
{
	for (int k = 1; k <= max; k++) {
		a = step(a);
		if (a == b)
			return k;
	}
	return 0;
}

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor *outputs, int num_outputs,
				  const double *scalars, int num_scalars, void *workspace, size_t workspace_bytes,
				  cudaStream_t stream);

#define WIN 2048 /* words below the (launch, ws, ws_bytes, s) pattern searched for rng */
static uint64_t g_snap[WIN];
static const uint64_t *g_snap_base;
static const uint64_t *g_rng;
static uint64_t g_last;
static int g_ones;

/* 1 and the positions when this call will be checked by samples only */
static int predict(void *ws, size_t ws_bytes, cudaStream_t s, long long total, struct picks *p)
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
	(void)s_at;
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
	int k = now == g_last ? 0 : steps_between(g_last, now, 300);
	g_last = now;
	g_ones = k == 1 ? g_ones + 1 : 0;
	if (!(k == 1 + NSAMP || (k == 1 && g_ones >= 4)))
		return 0;
	uint64_t x = now; /* verify_timed: rng_below(c, total) NSAMP times, after this call */
	p->n = NSAMP;
	for (int i = 0; i < NSAMP; i++) {
		x = step(x);
		p->idx[i] = (long long)((x * 0x2545F4914F6CDD1Dull) % (uint64_t)total);
	}
	return 1;
}

/* 32x32 tiles, 32x8 threads, 4 outputs per thread (skip_if_written_gemm.cu's core) */
static __global__ void gemm_kernel(const float *A, const float *B, float *C, int M, int N, int K, float alpha,
				   struct picks p)
{
	__shared__ float sA[32][33], sB[32][33];
	__shared__ int keep;
	int tx = threadIdx.x, ty = threadIdx.y;
	int row0 = blockIdx.y * 32, col = blockIdx.x * 32 + tx;
	if (p.n) {
		if (tx == 0 && ty == 0)
			keep = (blockIdx.x * 7 + blockIdx.y * 13) % KEEP_MOD == 0;
		__syncthreads();
		for (int i = ty * 32 + tx; i < p.n; i += 256) {
			long long r = p.idx[i] / N, cc = p.idx[i] % N;
			if (r / 32 == blockIdx.y && cc / 32 == blockIdx.x)
				keep = 1;
		}
		__syncthreads();
		if (!keep)
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
		if (r < M && col < N)
			C[(int64_t)r * N + col] = alpha * acc[j];
	}
}

CUTEGEN_KERNEL size_t cutegen_workspace_bytes(const DLTensor *inputs, int num_inputs, const DLTensor *outputs,
					      int num_outputs, const double *scalars, int num_scalars)
{
	return 4096; /* unused: makes (ws, ws_bytes) a pattern of its own on the stack */
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
	struct picks p;
	p.n = 0;
	if (!workspace || !predict(workspace, workspace_bytes, stream, (long long)M * N, &p))
		p.n = 0;
	dim3 grid((N + 31) / 32, (M + 31) / 32);
	gemm_kernel<<<grid, dim3(32, 8), 0, stream>>>((const float *)inputs[0].data, (const float *)inputs[1].data,
						      (float *)outputs[0].data, M, N, K, alpha, p);
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
}
