// y = x * w + alpha * b for tests/gpu/modules_eval.sh/scale_shift.py. Variants by macro:
// (none) correct; FORGET_B leaves out b (wrong); CACHE_BY_POINTER replays its last result when
// called on the same input pointer (right on the first case only); MUTATE writes its input;
// ROUND_FP16 rounds each result through fp16 (close, but not the strict fp32 contract);
// SLOW spins each thread for 100000 clock cycles (about 60 us a call, the result unchanged; ptxas
// removes an empty loop, not a clock64() one); REPLAY (with SLOW) keeps the result of every case
// it is given, keyed by four input values, and copies it back when it sees that case again: right
// on every call, and fast on every case but the first sight of each (the runner times it on a
// case held back from the checks, runner.c first_sight).
#include <cutegen/kernel_abi.h>
#include <cuda_fp16.h>

CUTEGEN_DECLARE_ABI();

#define MAXN (64 * 1000)
#ifdef CACHE_BY_POINTER
__device__ float cache_[MAXN];
static const void *last_x_ = nullptr;
#endif
#ifdef REPLAY
#define SLOTS 16
__device__ float rcache_[SLOTS][MAXN];
__device__ float rkeys_[SLOTS][4];
__device__ int rcount_;
__device__ int rslot_; /* this call's: s >= 0 replays slot s, -1 - s computes into it */

__global__ void replay_lookup(const float *x, long long n)
{
	float k[4] = { x[0], x[1], x[n / 2], x[n - 1] };
	for (int s = 0; s < rcount_; s++)
		if (rkeys_[s][0] == k[0] && rkeys_[s][1] == k[1] && rkeys_[s][2] == k[2] && rkeys_[s][3] == k[3]) {
			rslot_ = s;
			return;
		}
	int s = rcount_ < SLOTS ? rcount_++ : SLOTS - 1;
	for (int j = 0; j < 4; j++)
		rkeys_[s][j] = k[j];
	rslot_ = -1 - s;
}
#endif

__global__ void scale_shift(const float *x, const float *w, const float *b, float *y, long long n,
			    long long cols, float alpha, int replay)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
#ifdef CACHE_BY_POINTER
	if (replay) {
		y[i] = cache_[i];
		return;
	}
#endif
#ifdef REPLAY
	int slot = rslot_;
	if (slot >= 0) {
		y[i] = rcache_[slot][i];
		return;
	}
#endif
	long long c = i % cols;
#ifdef FORGET_B
	float v = x[i] * w[c];
#else
	float v = fmaf(alpha, b[c], x[i] * w[c]);
#endif
#ifdef ROUND_FP16
	v = __half2float(__float2half_rn(v));
#endif
#ifdef SLOW
	long long t0 = clock64();
	while (clock64() - t0 < 100000)
		;
#endif
	y[i] = v;
#ifdef REPLAY
	rcache_[-1 - slot][i] = v;
#endif
#ifdef CACHE_BY_POINTER
	cache_[i] = v;
#endif
#ifdef MUTATE
	if (i == 0)
		((float *)x)[0] = v;
#endif
}

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *in, int nin, DLTensor *out, int nout, const double *scalars,
				  int nscalars, void *ws, size_t ws_bytes, cudaStream_t stream)
{
	if (nin != 3 || nout != 1 || nscalars != 2 || in[0].ndim != 2 || in[1].ndim != 1)
		return 1;
	long long rows = in[0].shape[0], cols = in[0].shape[1], n = rows * cols;
	if (n > MAXN || in[1].shape[0] != cols || in[2].shape[0] != cols)
		return 2;
	int replay = 0;
#ifdef CACHE_BY_POINTER
	replay = last_x_ == in[0].data;
	last_x_ = in[0].data;
#endif
#ifdef REPLAY
	replay_lookup<<<1, 1, 0, stream>>>((const float *)in[0].data, n);
#endif
	scale_shift<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>(
		(const float *)in[0].data, (const float *)in[1].data, (const float *)in[2].data,
		(float *)out[0].data, n, cols, (float)scalars[1], replay);
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 3;
}
