/*
 * The runner's device code: deterministic input generators (a counter-based hash of seed and
 * element index, so inputs can be re-derived to check the candidate left them untouched),
 * poison fills, fp64 references for the elementwise family and softmax, and the comparison
 * kernel that reduces a whole output to error statistics on the GPU; the GEMM reference (a tiled
 * SIMT GEMM accumulating in fp64, with its |A||B| scale) and the sampled check of single output
 * elements that verifies timed calls. No vendor library: this file is the whole trusted
 * reference of the candidate's process. See devkern.h.
 * Not for: baselines (cuBLASLt, in cutegen-baseline: baseline.c, blas.c).
 */
#include "devkern.h"
#include "common/module_budget.h"
#include "common/task.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define POISON_F32 0x7FC0BAD5u
#define POISON_BF16 0x7FD5u
#define POISON_F16 0x7E15u
#define POISON_F64 0x7FF8BAD5BAD5BAD5ull
#define POISON_BYTE 0xA5u /* integer and bool outputs */

/* scratch of the sampled check: the counters, the list, got/want/tol per listed position, then
 * the partial dot products (fp64 sum and scale) of every sample's slices of K */
#define SAMPLE_IDX_OFF 256
#define SAMPLE_VAL_OFF (SAMPLE_IDX_OFF + DK_MAX_CHECK_SAMPLES * 8)
#define SAMPLE_PART_OFF (SAMPLE_VAL_OFF + 3 * DK_MAX_CHECK_SAMPLES * 8)
#define SAMPLE_MAX_PARTS 32768   /* samples x splits */
#define SAMPLE_MAX_SPLITS 64
#define SAMPLE_K_PER_BLOCK 16384 /* K elements per block, at most */
#define SAMPLE_THREADS 256

/* murmur3's finalizer: a bijection of 32 bits whose output bits each depend on every input bit */
__device__ __forceinline__ uint32_t fmix32(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x85EBCA6Bu;
	h ^= h >> 13;
	h *= 0xC2B2AE35u;
	return h ^ (h >> 16);
}

/* U[0,1) as a float with a full mantissa at every magnitude (the precision probe needs inputs
 * that TF32 or fp16 rounding changes) */
__device__ __forceinline__ float uf01(uint32_t h)
{
	return fminf(__uint2float_rn(h) * 0x1p-32f, 0x1.fffffep-1f);
}

/* N(0,1) by Box-Muller in fp32 (u1 in (0,1]: |z| up to 6.8) */
__device__ __forceinline__ float normalf(uint32_t h)
{
	float u1 = __uint2float_rn(h) * 0x1p-32f + 0x1p-33f, u2 = uf01(fmix32(h ^ 0x5BD1E995u));
	return sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
}

__device__ float gen_value(const struct dk_fill &f, int64_t idx)
{
	int64_t key = idx;
	/* only structured matrices need the row and column: 64-bit divisions are software
	 * routines on the GPU, most of what a fill of a multi-GB tensor cost */
	if (f.structure != STRUCT_GENERAL) {
		int64_t mat = f.rows * f.cols;
		int64_t within = idx % mat, base = idx - within;
		int64_t r = within / f.cols, c = within % f.cols;
		if (f.structure == STRUCT_SYMMETRIC && r > c)
			key = base + c * f.cols + r;
		else if (f.structure == STRUCT_UPPER && r > c)
			return 0.0f;
		else if (f.structure == STRUCT_LOWER && r < c)
			return 0.0f;
	}
	/* One 32-bit hash per element, about ten integer operations: a fill of a multi-GB input
	 * (every timed call regenerates its inputs) runs near the memory's write rate, where the
	 * 64-bit hash it replaced cost several times that. A bijection of the element's low 32
	 * bits for a given seed, so no two elements of a 2^32 block share a value by construction. */
	uint32_t sk = fmix32((uint32_t)f.seed ^ fmix32((uint32_t)(f.seed >> 32) + 0x9E3779B9u));
	uint32_t h = fmix32(((uint32_t)key ^ (uint32_t)((uint64_t)key >> 32) * 0x85EBCA77u) * 0x9E3779B1u + sk);
	switch (f.dist) {
	case DIST_UNIFORM:
		return uf01(h);
	case DIST_NORMAL:
		return normalf(h);
	case DIST_LARGE:
		return (2.0f * uf01(h) - 1.0f) * f.range;
	case DIST_SPARSE:
		return uf01(h) < f.density ? normalf(fmix32(h + 0x27D4EB2Fu)) : 0.0f;
	case DIST_BRANCHES: {
		float u = 2.0f * uf01(fmix32(h + 0x165667B1u)) - 1.0f;
		float p = f.nbranch ? f.branch[(h >> 8) % (uint32_t)f.nbranch] : 0.0f;
		switch (h & 3) {
		case 0: return p;
		case 1: return p + u * 1e-3f;
		case 2: return p + u;
		default: return u * 25.0f;
		}
	}
	}
	return 0.0f;
}

template <typename T> __device__ __forceinline__ T from_float(float v);
template <> __device__ __forceinline__ float from_float<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <> __device__ __forceinline__ __nv_fp8_e4m3 from_float<__nv_fp8_e4m3>(float v) { return __nv_fp8_e4m3(v); }

__device__ __forceinline__ double load_as_double(const void *p, int dtype, int64_t i)
{
	switch (dtype) {
	case DK_FP16: return (double)__half2float(((const __half *)p)[i]);
	case DK_BF16: return (double)__bfloat162float(((const __nv_bfloat16 *)p)[i]);
	case DK_FP8: return (double)(float)(((const __nv_fp8_e4m3 *)p)[i]);
	case DK_FP64: return ((const double *)p)[i];
	case DK_I64: return (double)((const long long *)p)[i];
	case DK_I32: return (double)((const int *)p)[i];
	case DK_I16: return (double)((const short *)p)[i];
	case DK_I8: return (double)((const signed char *)p)[i];
	case DK_U8:
	case DK_BOOL: return (double)((const unsigned char *)p)[i];
	default: return (double)((const float *)p)[i];
	}
}

/* The bits of an integer or bool element, for exact comparison. */
__device__ __forceinline__ unsigned long long load_bits(const void *p, int dtype, int64_t i)
{
	switch (dtype) {
	case DK_I64: return ((const unsigned long long *)p)[i];
	case DK_I32: return ((const unsigned int *)p)[i];
	case DK_I16: return ((const unsigned short *)p)[i];
	default: return ((const unsigned char *)p)[i];
	}
}

__device__ __forceinline__ int dk_is_int(int dtype)
{
	return dtype >= DK_I64 && dtype <= DK_BOOL;
}

__device__ __forceinline__ int is_poison(const void *p, int dtype, int64_t i)
{
	switch (dtype) {
	case DK_FP16: return ((const uint16_t *)p)[i] == POISON_F16;
	case DK_BF16: return ((const uint16_t *)p)[i] == POISON_BF16;
	case DK_FP8: return ((const unsigned char *)p)[i] == 0x7F; /* dk_poison's e4m3 NaN */
	case DK_FP64: return ((const unsigned long long *)p)[i] == POISON_F64;
	case DK_I64: return ((const unsigned long long *)p)[i] == 0xA5A5A5A5A5A5A5A5ull;
	case DK_I32: return ((const uint32_t *)p)[i] == 0xA5A5A5A5u;
	case DK_I16: return ((const uint16_t *)p)[i] == 0xA5A5u;
	case DK_I8:
	case DK_U8:
	case DK_BOOL: return ((const unsigned char *)p)[i] == POISON_BYTE;
	default: return ((const uint32_t *)p)[i] == POISON_F32;
	}
}

#define GRID_STRIDE(i, n) for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
			       i += (int64_t)gridDim.x * blockDim.x)

template <typename T> __global__ void fill_kernel(T *p, struct dk_fill f)
{
	GRID_STRIDE(i, f.numel) p[i] = from_float<T>(gen_value(f, i));
}

template <typename T> __device__ __forceinline__ bool same_bits(const T &a, const T &b)
{
	const unsigned char *x = (const unsigned char *)&a, *y = (const unsigned char *)&b;
	for (unsigned k = 0; k < sizeof(T); k++)
		if (x[k] != y[k])
			return false;
	return true;
}

template <typename T> __global__ void verify_kernel(const T *p, struct dk_fill f, unsigned long long *bad)
{
	unsigned long long local = 0;
	GRID_STRIDE(i, f.numel) {
		T want = from_float<T>(gen_value(f, i));
		local += !same_bits(want, p[i]);
	}
	if (local)
		atomicAdd(bad, local);
}

static unsigned grid_for(int64_t n)
{
	int64_t blocks = (n + 255) / 256;
	return (unsigned)(blocks < 132 * 32 ? (blocks < 1 ? 1 : blocks) : 132 * 32);
}

extern "C" int dk_fill(void *ptr, const struct dk_fill *f, void *stream)
{
	cudaStream_t s = (cudaStream_t)stream;
	unsigned g = grid_for(f->numel);
	switch (f->dtype) {
	case DK_FP16: fill_kernel<<<g, 256, 0, s>>>((__half *)ptr, *f); break;
	case DK_BF16: fill_kernel<<<g, 256, 0, s>>>((__nv_bfloat16 *)ptr, *f); break;
	case DK_FP8: fill_kernel<<<g, 256, 0, s>>>((__nv_fp8_e4m3 *)ptr, *f); break;
	default: fill_kernel<<<g, 256, 0, s>>>((float *)ptr, *f); break;
	}
	return (int)cudaGetLastError();
}

extern "C" int dk_verify_fill(const void *ptr, const struct dk_fill *f, unsigned long long *mismatches,
			      void *scratch, void *stream)
{
	cudaStream_t s = (cudaStream_t)stream;
	unsigned long long *d = (unsigned long long *)scratch;
	cudaMemsetAsync(d, 0, sizeof(*d), s);
	unsigned g = grid_for(f->numel);
	switch (f->dtype) {
	case DK_FP16: verify_kernel<<<g, 256, 0, s>>>((const __half *)ptr, *f, d); break;
	case DK_BF16: verify_kernel<<<g, 256, 0, s>>>((const __nv_bfloat16 *)ptr, *f, d); break;
	case DK_FP8: verify_kernel<<<g, 256, 0, s>>>((const __nv_fp8_e4m3 *)ptr, *f, d); break;
	default: verify_kernel<<<g, 256, 0, s>>>((const float *)ptr, *f, d); break;
	}
	cudaError_t e = cudaMemcpyAsync(mismatches, d, sizeof(*d), cudaMemcpyDeviceToHost, s);
	if (e == cudaSuccess)
		e = cudaStreamSynchronize(s);
	return (int)e;
}

__global__ void poison32(uint32_t *p, int64_t n) { GRID_STRIDE(i, n) p[i] = POISON_F32; }
__global__ void poison16(uint16_t *p, int64_t n, uint16_t v) { GRID_STRIDE(i, n) p[i] = v; }
__global__ void poison64(unsigned long long *p, int64_t n) { GRID_STRIDE(i, n) p[i] = POISON_F64; }

static int dk_size(int dtype)
{
	switch (dtype) {
	case DK_FP64: case DK_I64: return 8;
	case DK_FP32: case DK_I32: return 4;
	case DK_FP16: case DK_BF16: case DK_I16: return 2;
	default: return 1;
	}
}

extern "C" int dk_poison(void *ptr, int dtype, int64_t numel, void *stream)
{
	cudaStream_t s = (cudaStream_t)stream;
	unsigned g = grid_for(numel);
	if (dtype == DK_FP32)
		poison32<<<g, 256, 0, s>>>((uint32_t *)ptr, numel);
	else if (dtype == DK_FP16 || dtype == DK_BF16)
		poison16<<<g, 256, 0, s>>>((uint16_t *)ptr, numel, dtype == DK_FP16 ? POISON_F16 : POISON_BF16);
	else if (dtype == DK_FP64)
		poison64<<<g, 256, 0, s>>>((unsigned long long *)ptr, numel);
	else if (dtype >= DK_I64 && dtype <= DK_BOOL)
		cudaMemsetAsync(ptr, (int)POISON_BYTE, (size_t)numel * (size_t)dk_size(dtype), s);
	else
		cudaMemsetAsync(ptr, 0x7F, (size_t)numel, s); /* fp8 e4m3 NaN */
	return (int)cudaGetLastError();
}

template <typename T> __global__ void convert_kernel(T *dst, const void *src, int src_dtype, int64_t n, int absval)
{
	GRID_STRIDE(i, n) {
		float v = (float)load_as_double(src, src_dtype, i);
		dst[i] = from_float<T>(absval ? fabsf(v) : v);
	}
}

extern "C" int dk_convert(void *dst, int dst_dtype, const void *src, int src_dtype, int64_t numel,
			  int absval, void *stream)
{
	cudaStream_t s = (cudaStream_t)stream;
	unsigned g = grid_for(numel);
	switch (dst_dtype) {
	case DK_FP16: convert_kernel<<<g, 256, 0, s>>>((__half *)dst, src, src_dtype, numel, absval); break;
	case DK_BF16: convert_kernel<<<g, 256, 0, s>>>((__nv_bfloat16 *)dst, src, src_dtype, numel, absval); break;
	default: convert_kernel<<<g, 256, 0, s>>>((float *)dst, src, src_dtype, numel, absval); break;
	}
	return (int)cudaGetLastError();
}

/* PyTorch's definitions, in fp64. */
__device__ double act64(int act, double x, const double *p)
{
	const double kSqrt2OverPi = 0.79788456080286535588;
	switch (act) {
	case ACT_RELU: return x > 0 ? x : 0.0;
	case ACT_LEAKY_RELU: return x > 0 ? x : p[0] * x;
	case ACT_SIGMOID: return 1.0 / (1.0 + exp(-x));
	case ACT_TANH: return tanh(x);
	case ACT_SWISH:
	case ACT_SILU: return x / (1.0 + exp(-x));
	case ACT_GELU_ERF: return 0.5 * x * (1.0 + erf(x * 0.70710678118654752440));
	case ACT_GELU_TANH:
	case ACT_MINGPT_GELU: return 0.5 * x * (1.0 + tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
	case ACT_SELU: {
		const double alpha = 1.6732632423543772848170429916717;
		const double scale = 1.0507009873554804934193349852946;
		return scale * (x > 0 ? x : alpha * expm1(x));
	}
	case ACT_HARDSIGMOID: return x <= -3.0 ? 0.0 : (x >= 3.0 ? 1.0 : x / 6.0 + 0.5);
	case ACT_SOFTPLUS: return x * p[0] > p[1] ? x : log1p(exp(p[0] * x)) / p[0];
	case ACT_SOFTSIGN: return x / (1.0 + fabs(x));
	case ACT_ELU: return x > 0 ? x : p[0] * expm1(x);
	case ACT_HARDTANH: return x < p[0] ? p[0] : (x > p[1] ? p[1] : x);
	default: return x;
	}
}

/* Where statistics accumulate on the device; copied into struct dk_stats at the end. */
struct dev_stats {
	unsigned long long bad, nan, inf, unwritten;
	unsigned long long max_abs_bits, max_ratio_bits;
	unsigned long long worst_index, first_bad;
	unsigned long long row_hist[DK_BUCKETS], col_hist[DK_BUCKETS];
	unsigned long long tail_rows_bad, tail_cols_bad;
	unsigned int nsamples;
	long long s_index[DK_MAX_SAMPLES];
	double s_got[DK_MAX_SAMPLES], s_want[DK_MAX_SAMPLES], s_tol[DK_MAX_SAMPLES];
};

/* Module tasks' comparison (dk_module_compare): the budget's sums, then dev_stats. */
struct mdev_stats {
	double sum_err, sum_abs_truth;
	unsigned long long finite;
	double worst_got, worst_want, worst_budget;
	unsigned long long max_scaled_bits;
	dev_stats st;
};

/* The GEMM epilogue's reference and tolerance from an accumulation (sum a*b) and its scale
 * (sum |a||b|), both exact or fp64: shared by the whole-output compare and the sampled one. */
__device__ __forceinline__ void gemm_want_tol(const dk_compare &c, int64_t r, int64_t col, double ref,
					      double scale, double *want, double *tol)
{
	double acc = c.alpha * ref;
	double b = c.bias ? load_as_double(c.bias, c.bias_dtype, col) : 0.0;
	acc += b;
	double w = act64(c.epi_act, acc, c.p);
	if (c.mask) {
		int64_t rr = r % c.mask_n;
		if ((c.mask == MASK_UPPER && rr > col) || (c.mask == MASK_LOWER && rr < col))
			w = 0.0;
	}
	*want = w;
	*tol = task_gemm_element_tol(c.eps_scale, c.rtol, c.atol, c.epi_act, fabs(c.alpha) * scale, b, acc, w);
}

__device__ __forceinline__ void want_tol(const dk_compare &c, int64_t i, double *want, double *tol)
{
	int64_t r = i / c.cols, col = i % c.cols;
	double w = 0;
	switch (c.kind) {
	case DK_REF_BUFFER:
		gemm_want_tol(c, r, col, (double)c.ref[i], (double)c.scale[i], want, tol);
		return;
	case DK_REF_ELEMENTWISE:
		w = act64(c.act, load_as_double(c.x, c.x_dtype, i), c.p);
		break;
	case DK_REF_SCALAR_MUL:
		w = load_as_double(c.x, c.x_dtype, i) * c.p[0];
		break;
	case DK_REF_DIAG:
		w = load_as_double(c.aux, c.aux_dtype, r) * load_as_double(c.x, c.x_dtype, i);
		break;
	case DK_REF_SOFTMAX:
		w = exp(load_as_double(c.x, c.x_dtype, i) - c.rowstat[2 * r]) / c.rowstat[2 * r + 1];
		break;
	case DK_REF_LOG_SOFTMAX:
		w = load_as_double(c.x, c.x_dtype, i) - c.rowstat[2 * r] - log(c.rowstat[2 * r + 1]);
		break;
	}
	*want = w;
	*tol = c.rtol * fabs(w) + c.atol;
}

__device__ __forceinline__ unsigned long long dbits(double v)
{
	return (unsigned long long)__double_as_longlong(v);
}

__device__ __forceinline__ void warp_max_atomic(unsigned long long *dst, double v)
{
	for (int o = 16; o > 0; o /= 2)
		v = fmax(v, __shfl_down_sync(0xffffffffu, v, o));
	if ((threadIdx.x & 31) == 0 && v > 0)
		atomicMax(dst, dbits(v));
}

/* A wrong element i of a rows x cols output: its row and column histograms, the tail counts
 * (the last rows and columns: a kernel that forgets a remainder tile), the first one and a
 * sample of them. Shared by the built-in compare and the module compare. */
__device__ void record_bad(dev_stats *st, int64_t i, int64_t rows, int64_t cols, double got, double want,
			   double tol)
{
	int64_t tail_r = rows - (rows / DK_BUCKETS > 1 ? rows / DK_BUCKETS : 1);
	int64_t tail_c = cols - (cols / DK_BUCKETS > 1 ? cols / DK_BUCKETS : 1);
	int64_t r = i / cols, col = i % cols;
	atomicAdd(&st->row_hist[r * DK_BUCKETS / rows], 1ull);
	atomicAdd(&st->col_hist[col * DK_BUCKETS / cols], 1ull);
	if (r >= tail_r)
		atomicAdd(&st->tail_rows_bad, 1ull);
	if (col >= tail_c)
		atomicAdd(&st->tail_cols_bad, 1ull);
	atomicMin(&st->first_bad, (unsigned long long)i);
	unsigned slot = atomicAdd(&st->nsamples, 1u);
	if (slot < DK_MAX_SAMPLES) {
		st->s_index[slot] = i;
		st->s_got[slot] = got;
		st->s_want[slot] = want;
		st->s_tol[slot] = tol;
	}
}

__global__ void compare_kernel(dk_compare c, dev_stats *st)
{
	int64_t n = c.rows * c.cols;
	double local_abs = 0, local_ratio = 0;
	GRID_STRIDE(i, n) {
		double want, tol;
		want_tol(c, i, &want, &tol);
		double got = load_as_double(c.out, c.out_dtype, i);
		double err = fabs(got - want);
		int bad = !(err <= tol);
		if (!bad) {
			local_abs = fmax(local_abs, err);
			if (tol > 0)
				local_ratio = fmax(local_ratio, err / tol);
			continue;
		}
		int unwritten = is_poison(c.out, c.out_dtype, i);
		atomicAdd(&st->bad, 1ull);
		if (unwritten)
			atomicAdd(&st->unwritten, 1ull);
		else if (isnan(got))
			atomicAdd(&st->nan, 1ull);
		else if (isinf(got))
			atomicAdd(&st->inf, 1ull);
		double ratio = tol > 0 ? err / tol : INFINITY;
		if (!isnan(err)) {
			local_abs = fmax(local_abs, err);
			local_ratio = fmax(local_ratio, ratio);
		} else {
			local_ratio = INFINITY;
		}
		record_bad(st, i, c.rows, c.cols, got, want, tol);
	}
	warp_max_atomic(&st->max_abs_bits, local_abs);
	warp_max_atomic(&st->max_ratio_bits, local_ratio);
}

/* Second pass: an element that reaches the maximum ratio. */
__global__ void worst_kernel(dk_compare c, dev_stats *st)
{
	int64_t n = c.rows * c.cols;
	double target = __longlong_as_double((long long)st->max_ratio_bits);
	if (target <= 0)
		return;
	GRID_STRIDE(i, n) {
		double want, tol;
		want_tol(c, i, &want, &tol);
		double err = fabs(load_as_double(c.out, c.out_dtype, i) - want);
		double ratio = tol > 0 ? err / tol : INFINITY;
		if (ratio >= target || (isnan(err) && isinf(target)))
			atomicMin(&st->worst_index, (unsigned long long)i);
	}
}

extern "C" size_t dk_scratch_bytes(void)
{
	size_t a = sizeof(dev_stats) + 256, b = SAMPLE_PART_OFF + 2 * SAMPLE_MAX_PARTS * sizeof(double);
	size_t m = sizeof(mdev_stats) + 256;
	a = a > m ? a : m;
	return a > b ? a : b;
}

extern "C" int dk_compare_run(const struct dk_compare *c, struct dk_stats *out, void *scratch, void *stream)
{
	cudaStream_t s = (cudaStream_t)stream;
	dev_stats init;
	memset(&init, 0, sizeof(init));
	init.worst_index = init.first_bad = ~0ull;
	dev_stats *d = (dev_stats *)scratch;
	cudaError_t e = cudaMemcpyAsync(d, &init, sizeof(init), cudaMemcpyHostToDevice, s);
	if (e)
		return (int)e;
	unsigned g = grid_for(c->rows * c->cols);
	compare_kernel<<<g, 256, 0, s>>>(*c, d);
	dev_stats h;
	e = cudaMemcpyAsync(&h, d, sizeof(h), cudaMemcpyDeviceToHost, s);
	if (!e)
		e = cudaStreamSynchronize(s);
	if (!e && h.bad) { /* the worst element only matters to a failure: a second pass then */
		worst_kernel<<<g, 256, 0, s>>>(*c, d);
		e = cudaMemcpyAsync(&h, d, sizeof(h), cudaMemcpyDeviceToHost, s);
		if (!e)
			e = cudaStreamSynchronize(s);
	}
	if (!e)
		e = cudaGetLastError();
	if (e)
		return (int)e;
	memset(out, 0, sizeof(*out));
	out->bad = h.bad;
	out->nan = h.nan;
	out->inf = h.inf;
	out->unwritten = h.unwritten;
	out->checked = (unsigned long long)(c->rows * c->cols);
	memcpy(&out->max_abs_err, &h.max_abs_bits, sizeof(double));
	memcpy(&out->max_ratio, &h.max_ratio_bits, sizeof(double));
	out->worst_index = h.worst_index == ~0ull ? -1 : (long long)h.worst_index;
	out->first_bad = h.first_bad == ~0ull ? -1 : (long long)h.first_bad;
	memcpy(out->row_hist, h.row_hist, sizeof(h.row_hist));
	memcpy(out->col_hist, h.col_hist, sizeof(h.col_hist));
	out->tail_rows_bad = h.tail_rows_bad;
	out->tail_cols_bad = h.tail_cols_bad;
	out->nsamples = h.nsamples < DK_MAX_SAMPLES ? (int)h.nsamples : DK_MAX_SAMPLES;
	for (int k = 0; k < out->nsamples; k++) {
		out->samples[k].index = h.s_index[k];
		out->samples[k].got = h.s_got[k];
		out->samples[k].want = h.s_want[k];
		out->samples[k].tol = h.s_tol[k];
	}
	return 0;
}

/* One block per row: max, then sum of exp(x - max), both in fp64. */
/* Block b: the max and the sum of exp(x - max) of row b, or with a list (the sampled check's
 * positions), of the row of position idx[b] alone. */
__global__ void rowstats_kernel(double *stat, const void *x, int dtype, int64_t cols, const long long *idx)
{
	__shared__ double red[32];
	int64_t r = idx ? idx[blockIdx.x] / cols : (int64_t)blockIdx.x;
	int64_t off = r * cols;
	double m = -INFINITY;
	for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
		m = fmax(m, load_as_double(x, dtype, off + j));
	for (int o = 16; o > 0; o /= 2)
		m = fmax(m, __shfl_down_sync(0xffffffffu, m, o));
	if ((threadIdx.x & 31) == 0)
		red[threadIdx.x / 32] = m;
	__syncthreads();
	if (threadIdx.x < 32) {
		m = threadIdx.x < blockDim.x / 32 ? red[threadIdx.x] : -INFINITY;
		for (int o = 16; o > 0; o /= 2)
			m = fmax(m, __shfl_down_sync(0xffffffffu, m, o));
		if (threadIdx.x == 0)
			red[0] = m;
	}
	__syncthreads();
	m = red[0];
	__syncthreads();
	double s = 0;
	for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
		s += exp(load_as_double(x, dtype, off + j) - m);
	for (int o = 16; o > 0; o /= 2)
		s += __shfl_down_sync(0xffffffffu, s, o);
	if ((threadIdx.x & 31) == 0)
		red[threadIdx.x / 32] = s;
	__syncthreads();
	if (threadIdx.x == 0) {
		double t = 0;
		for (unsigned w = 0; w < blockDim.x / 32; w++)
			t += red[w];
		stat[2 * r] = m;
		stat[2 * r + 1] = t;
	}
}

extern "C" int dk_softmax_rowstats(double *rowstat, const void *x, int dtype, int64_t rows, int64_t cols,
				   void *stream)
{
	if (rows > 0x7fffffff)
		return (int)cudaErrorInvalidValue;
	rowstats_kernel<<<(unsigned)rows, 512, 0, (cudaStream_t)stream>>>(rowstat, x, dtype, cols, NULL);
	return (int)cudaGetLastError();
}

extern "C" int dk_flush_l2(void *buf, size_t bytes, void *stream)
{
	static int v;
	v ^= 1;
	return (int)cudaMemsetAsync(buf, v, bytes, (cudaStream_t)stream);
}

/*
 * The gate holds its stream closed and, while it does, counts the output elements that are
 * no longer poison: work that escaped to another stream runs beside it and shows up here.
 * It needs no second stream of ours (whose work the hardware might queue behind the gate):
 * one block, already resident, does the count once the host says the escaped work has had
 * its time (flag 1), or when the timeout passes.
 */
__global__ void gate_kernel(volatile int *flag, long long max_cycles, const void *out, int dtype,
			    int64_t n, unsigned long long *written)
{
	__shared__ unsigned long long sum;
	if (threadIdx.x == 0) {
		sum = 0;
		long long t0 = clock64();
		while (*flag == 0 && clock64() - t0 < max_cycles)
			__nanosleep(1000);
	}
	__syncthreads();
	unsigned long long local = 0;
	for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
		local += !is_poison(out, dtype, i);
	if (local)
		atomicAdd(&sum, local);
	__syncthreads();
	if (threadIdx.x == 0)
		*(volatile unsigned long long *)written = sum;
}

extern "C" int dk_gate(volatile int *host_flag, double timeout_s, const void *out, int dtype, int64_t numel,
		       unsigned long long *host_written, void *stream)
{
	int *dflag = NULL;
	unsigned long long *dwritten = NULL;
	cudaError_t e = cudaHostGetDevicePointer((void **)&dflag, (void *)host_flag, 0);
	if (!e)
		e = cudaHostGetDevicePointer((void **)&dwritten, (void *)host_written, 0);
	if (e)
		return (int)e;
	/* clock64 counts SM cycles: 2 GHz is an upper bound on today's clocks */
	gate_kernel<<<1, 1024, 0, (cudaStream_t)stream>>>(dflag, (long long)(timeout_s * 2e9), out, dtype,
							   numel, dwritten);
	return (int)cudaGetLastError();
}



/* ---- GEMM reference --------------------------------------------------------------------- */

__device__ __forceinline__ float gemm_a(const dk_gemm &g, int64_t b, int64_t m, int64_t k)
{
	int64_t i = g.a_col ? (b * g.k + k) * g.m + m : (b * g.m + m) * g.k + k;
	return (float)load_as_double(g.A, g.a_dtype, i);
}

__device__ __forceinline__ float gemm_b(const dk_gemm &g, int64_t b, int64_t k, int64_t n)
{
	int64_t bb = g.b_batched ? b : 0;
	int64_t i = g.b_col ? (bb * g.n + n) * g.k + k : (bb * g.k + k) * g.n + n;
	return (float)load_as_double(g.B, g.b_dtype, i);
}

#define RT 64 /* output tile */
#define RK 16 /* k step */

/* 256 threads, a 64x64 tile of C, each thread 4x4 elements strided by 16. Operands are exact
 * in fp32 (every input type widens exactly); products and sums are fp64. The scale, a sum of
 * positive terms that only sizes the tolerance, is summed in fp32 (relative error far below
 * what it is used for), which leaves the fp64 units to the reference itself. */
__global__ void __launch_bounds__(256) gemm_ref_kernel(dk_gemm g, float *ref, float *scale)
{
	__shared__ float As[RK][RT], Bs[RK][RT];
	int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
	int64_t b = blockIdx.z, m0 = (int64_t)blockIdx.y * RT, n0 = (int64_t)blockIdx.x * RT;
	double acc[4][4];
	float sc[4][4];
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			acc[i][j] = 0, sc[i][j] = 0;
	for (int64_t k0 = 0; k0 < g.k; k0 += RK) {
		for (int q = 0; q < 4; q++) {
			int e = tid + 256 * q, mm, kk, nn, kb;
			if (g.a_col) { mm = e % RT; kk = e / RT; } else { kk = e % RK; mm = e / RK; }
			if (g.b_col) { kb = e % RK; nn = e / RK; } else { nn = e % RT; kb = e / RT; }
			int64_t gm = m0 + mm, gk = k0 + kk, gn = n0 + nn, gkb = k0 + kb;
			As[kk][mm] = gm < g.m && gk < g.k ? gemm_a(g, b, gm, gk) : 0.0f;
			Bs[kb][nn] = gn < g.n && gkb < g.k ? gemm_b(g, b, gkb, gn) : 0.0f;
		}
		__syncthreads();
		for (int kk = 0; kk < RK; kk++) {
			float a[4], bv[4];
			double ad[4], bd[4];
			for (int i = 0; i < 4; i++) {
				a[i] = As[kk][ty + 16 * i];
				bv[i] = Bs[kk][tx + 16 * i];
				ad[i] = a[i];
				bd[i] = bv[i];
			}
			for (int i = 0; i < 4; i++)
				for (int j = 0; j < 4; j++) {
					acc[i][j] = fma(ad[i], bd[j], acc[i][j]);
					sc[i][j] = fmaf(fabsf(a[i]), fabsf(bv[j]), sc[i][j]);
				}
		}
		__syncthreads();
	}
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++) {
			int64_t m = m0 + ty + 16 * i, n = n0 + tx + 16 * j;
			if (m < g.m && n < g.n) {
				int64_t o = (b * g.m + m) * g.n + n;
				ref[o] = (float)acc[i][j];
				scale[o] = sc[i][j];
			}
		}
}

static int dot_ref(const struct dk_gemm *g, float *ref, float *scale, void *scratch, cudaStream_t s);

extern "C" int dk_gemm_ref(const struct dk_gemm *g, float *ref, float *scale, void *scratch, void *stream)
{
	if (scratch && g->batch * g->m * g->n <= DK_MAX_CHECK_SAMPLES)
		return dot_ref(g, ref, scale, scratch, (cudaStream_t)stream);
	if (g->batch > 65535 || (g->m + RT - 1) / RT > 65535)
		return (int)cudaErrorInvalidValue;
	dim3 grid((unsigned)((g->n + RT - 1) / RT), (unsigned)((g->m + RT - 1) / RT), (unsigned)g->batch);
	gemm_ref_kernel<<<grid, 256, 0, (cudaStream_t)stream>>>(*g, ref, scale);
	return (int)cudaGetLastError();
}

/* ---- sampled check ---------------------------------------------------------------------- */

struct sample_dev {
	unsigned long long bad;
	unsigned long long first_bad; /* lowest bad position in the list */
};


/* A GEMM sample's dot product is split over blocks along K, each block's threads striding its
 * slice (coalesced along A's rows), so the check reads the sampled rows at the memory's rate
 * instead of one warp walking all of K (a matvec with K = 2^20 took tens of ms per trial).
 * Partial sums, in fp64, go to parts[sample][split][2]; sample_kernel adds them in order. */

__global__ void __launch_bounds__(SAMPLE_THREADS) sample_dot_kernel(dk_gemm g, int64_t cols,
								  const long long *idx, int splits,
								  double *parts)
{
	__shared__ double red[2][SAMPLE_THREADS / 32];
	int w = blockIdx.y, sp = blockIdx.x, tid = threadIdx.x;
	int64_t i = idx ? idx[w] : w, r = i / cols, col = i % cols;
	int64_t b = r / g.m, m = r % g.m;
	int64_t chunk = (g.k + splits - 1) / splits, k0 = sp * chunk, k1 = k0 + chunk < g.k ? k0 + chunk : g.k;
	double acc = 0, sc = 0;
	for (int64_t k = k0 + tid; k < k1; k += SAMPLE_THREADS) {
		double a = gemm_a(g, b, m, k), bv = gemm_b(g, b, k, col);
		acc = fma(a, bv, acc);
		sc = fma(fabs(a), fabs(bv), sc);
	}
	for (int o = 16; o > 0; o /= 2) {
		acc += __shfl_down_sync(0xffffffffu, acc, o);
		sc += __shfl_down_sync(0xffffffffu, sc, o);
	}
	if ((tid & 31) == 0) {
		red[0][tid / 32] = acc;
		red[1][tid / 32] = sc;
	}
	__syncthreads();
	if (tid)
		return;
	acc = sc = 0;
	for (int q = 0; q < SAMPLE_THREADS / 32; q++) {
		acc += red[0][q];
		sc += red[1][q];
	}
	parts[2 * ((int64_t)w * splits + sp)] = acc;
	parts[2 * ((int64_t)w * splits + sp) + 1] = sc;
}

/* One thread per listed output element: its reference (for a GEMM, the dot product and its
 * scale in fp64 over all of K, from sample_dot_kernel's partial sums; else what the
 * whole-output compare computes) against the output. */
__global__ void sample_kernel(int is_gemm, dk_compare c, const long long *idx, int n, int splits,
			      const double *parts, sample_dev *st, double *vals)
{
	int w = (int)(blockIdx.x * blockDim.x + threadIdx.x);
	if (w >= n)
		return;
	int64_t i = idx[w], r = i / c.cols, col = i % c.cols;
	double want, tol;
	if (is_gemm) {
		double acc = 0, sc = 0;
		for (int sp = 0; sp < splits; sp++) {
			acc += parts[2 * ((int64_t)w * splits + sp)];
			sc += parts[2 * ((int64_t)w * splits + sp) + 1];
		}
		/* the whole-output check rounds the reference to fp32: so does this one */
		gemm_want_tol(c, r, col, (double)(float)acc, (double)(float)sc, &want, &tol);
	} else {
		want_tol(c, i, &want, &tol);
	}
	double got = load_as_double(c.out, c.out_dtype, i);
	if (fabs(got - want) <= tol)
		return;
	atomicAdd(&st->bad, 1ull);
	atomicMin(&st->first_bad, (unsigned long long)w);
	vals[3 * w] = got;
	vals[3 * w + 1] = want;
	vals[3 * w + 2] = tol;
}

/* The whole reference of a small output from the partial sums: ref and scale as fp32. */
__global__ void dot_finish_kernel(const double *parts, int splits, int n, float *ref, float *scale)
{
	int w = (int)(blockIdx.x * blockDim.x + threadIdx.x);
	if (w >= n)
		return;
	double acc = 0, sc = 0;
	for (int sp = 0; sp < splits; sp++) {
		acc += parts[2 * ((int64_t)w * splits + sp)];
		sc += parts[2 * ((int64_t)w * splits + sp) + 1];
	}
	ref[w] = (float)acc;
	scale[w] = (float)sc;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return x < y ? -1 : x > y;
}

/* How many blocks split one sample's K: enough that none walks more than SAMPLE_K_PER_BLOCK,
 * within the scratch's room for partial sums. */
static int sample_splits(int64_t k, int n)
{
	int64_t s = (k + SAMPLE_K_PER_BLOCK - 1) / SAMPLE_K_PER_BLOCK;
	int64_t room = SAMPLE_MAX_PARTS / (n > 0 ? n : 1);
	if (s > SAMPLE_MAX_SPLITS)
		s = SAMPLE_MAX_SPLITS;
	if (s > room)
		s = room;
	return s < 1 ? 1 : (int)s;
}

static int dot_ref(const struct dk_gemm *g, float *ref, float *scale, void *scratch, cudaStream_t s)
{
	int n = (int)(g->batch * g->m * g->n), splits = sample_splits(g->k, n);
	double *parts = (double *)((char *)scratch + SAMPLE_PART_OFF);
	sample_dot_kernel<<<dim3((unsigned)splits, (unsigned)n), SAMPLE_THREADS, 0, s>>>(*g, g->n, NULL, splits, parts);
	dot_finish_kernel<<<(unsigned)((n + 255) / 256), 256, 0, s>>>(parts, splits, n, ref, scale);
	return (int)cudaGetLastError();
}

extern "C" int dk_sample_check(const struct dk_gemm *g, const struct dk_compare *c, const long long *idx,
			       int n, struct dk_sample_stats *out, void *scratch, void *stream)
{
	cudaStream_t s = (cudaStream_t)stream;
	if (n <= 0 || n > DK_MAX_CHECK_SAMPLES)
		return (int)cudaErrorInvalidValue;
	sample_dev init;
	memset(&init, 0, sizeof(init));
	init.first_bad = ~0ull;
	sample_dev *d = (sample_dev *)scratch;
	long long *didx = (long long *)((char *)scratch + SAMPLE_IDX_OFF);
	double *vals = (double *)((char *)scratch + SAMPLE_VAL_OFF);
	double *parts = (double *)((char *)scratch + SAMPLE_PART_OFF);
	cudaError_t e = cudaMemcpyAsync(d, &init, sizeof(init), cudaMemcpyHostToDevice, s);
	if (!e)
		e = cudaMemcpyAsync(didx, idx, (size_t)n * sizeof(*idx), cudaMemcpyHostToDevice, s);
	if (e)
		return (int)e;
	int splits = g ? sample_splits(g->k, n) : 0;
	if (g)
		sample_dot_kernel<<<dim3((unsigned)splits, (unsigned)n), SAMPLE_THREADS, 0, s>>>(*g, c->cols, didx,
												 splits, parts);
	/* softmax: the statistics of the sampled rows alone, each once (a whole pass over the
	 * input was most of what a sampled check of a multi-GB softmax cost) */
	if (!g && (c->kind == DK_REF_SOFTMAX || c->kind == DK_REF_LOG_SOFTMAX)) {
		long long rows[DK_MAX_CHECK_SAMPLES];
		int nr = 0;
		for (int i = 0; i < n; i++)
			rows[i] = idx[i] / c->cols;
		qsort(rows, (size_t)n, sizeof(rows[0]), cmp_ll);
		for (int i = 0; i < n; i++)
			if (!nr || rows[i] != rows[nr - 1])
				rows[nr++] = rows[i];
		for (int i = 0; i < nr; i++)
			rows[i] *= c->cols; /* rowstats_kernel takes positions */
		long long *drows = (long long *)parts; /* unused by a softmax's check */
		e = cudaMemcpyAsync(drows, rows, (size_t)nr * sizeof(rows[0]), cudaMemcpyHostToDevice, s);
		if (e)
			return (int)e;
		rowstats_kernel<<<(unsigned)nr, 512, 0, s>>>((double *)c->rowstat, c->x, c->x_dtype, c->cols, drows);
	}
	sample_kernel<<<(unsigned)((n + 255) / 256), 256, 0, s>>>(g != NULL, *c, didx, n, splits, parts, d, vals);
	sample_dev h;
	double v[3] = { 0, 0, 0 };
	e = cudaMemcpyAsync(&h, d, sizeof(h), cudaMemcpyDeviceToHost, s);
	if (!e)
		e = cudaStreamSynchronize(s);
	if (!e && h.bad && h.first_bad < (unsigned long long)n) {
		e = cudaMemcpyAsync(v, vals + 3 * h.first_bad, sizeof(v), cudaMemcpyDeviceToHost, s);
		if (!e)
			e = cudaStreamSynchronize(s);
	}
	if (!e)
		e = cudaGetLastError();
	if (e)
		return (int)e;
	out->checked = n;
	out->bad = h.bad;
	out->first_bad = h.bad ? idx[h.first_bad] : -1;
	out->got = v[0];
	out->want = v[1];
	out->tol = v[2];
	return 0;
}

/* ---- fp32 FMA rate (the measured SIMT peak; cutegen-baseline) --------------------------- */

#define FMA_CHAINS 8
#define FMA_ITERS 4096

__global__ void fma_kernel(float *out, float seed)
{
	float v[FMA_CHAINS];
	for (int c = 0; c < FMA_CHAINS; c++)
		v[c] = seed + (float)(threadIdx.x + c);
	for (int i = 0; i < FMA_ITERS; i++)
#pragma unroll
		for (int c = 0; c < FMA_CHAINS; c++)
			v[c] = fmaf(v[c], 0.999999f, 1e-7f);
	float s = 0;
	for (int c = 0; c < FMA_CHAINS; c++)
		s += v[c];
	if (s == 12345.678f) /* never: keeps the loop */
		out[0] = s;
}

extern "C" int dk_fma_rate(int sms, double *tflops, void *stream)
{
	cudaStream_t s = (cudaStream_t)stream;
	float *out = NULL;
	cudaEvent_t e0, e1;
	cudaError_t e = cudaMalloc((void **)&out, sizeof(float));
	if (e)
		return (int)e;
	cudaEventCreate(&e0);
	cudaEventCreate(&e1);
	unsigned blocks = (unsigned)sms * 8, threads = 256;
	double best = 0;
	for (int rep = 0; rep < 4; rep++) {
		cudaEventRecord(e0, s);
		fma_kernel<<<blocks, threads, 0, s>>>(out, 1.0f + rep);
		cudaEventRecord(e1, s);
		e = cudaEventSynchronize(e1);
		if (e)
			break;
		float ms = 0;
		cudaEventElapsedTime(&ms, e0, e1);
		double f = 2.0 * FMA_CHAINS * FMA_ITERS * (double)blocks * threads / (ms * 1e-3) / 1e12;
		if (rep && f > best) /* the first is a warm-up */
			best = f;
	}
	cudaEventDestroy(e0);
	cudaEventDestroy(e1);
	cudaFree(out);
	*tflops = best;
	return e ? (int)e : (int)cudaGetLastError();
}

/* ---- module tasks: the candidate against the reference process's truth ------------------- */


/* want (the truth), the budget and whether got is within it, for element i. */
__device__ __forceinline__ int mcheck(const dk_mcompare &c, double E, double mean_t, int64_t i, double *got,
				      double *want, double *budget)
{
	if (dk_is_int(c.got_dtype)) {
		/* exact: the float64 forward's, or the task dtype's (an argmax over values that tie
		 * within the task dtype's rounding may pick either) */
		unsigned long long g = load_bits(c.got, c.got_dtype, i), t = load_bits(c.truth, c.truth_dtype, i);
		unsigned long long r = load_bits(c.ref, c.got_dtype, i);
		*got = load_as_double(c.got, c.got_dtype, i);
		*want = load_as_double(c.truth, c.truth_dtype, i);
		*budget = 0;
		return g == t || g == r;
	}
	double t = load_as_double(c.truth, c.truth_dtype, i);
	double g = load_as_double(c.got, c.got_dtype, i);
	*got = g;
	*want = t;
	double r = isfinite(t) ? load_as_double(c.ref, c.got_dtype, i) : 0;
	return mb_check(g, r, t, E, mean_t, c.multiple, c.ulps, c.got_dtype, budget);
}

__global__ void msum_kernel(dk_mcompare c, mdev_stats *m)
{
	double se = 0, st = 0;
	unsigned long long n = 0;
	if (!dk_is_int(c.got_dtype)) {
		GRID_STRIDE(i, c.numel) {
			double t = load_as_double(c.truth, c.truth_dtype, i);
			double r = load_as_double(c.ref, c.got_dtype, i);
			if (!isfinite(t))
				continue;
			double e = fabs(r - t);
			se += isfinite(e) ? e : fabs(t);
			st += fabs(t);
			n++;
		}
	}
	for (int o = 16; o > 0; o /= 2) {
		se += __shfl_down_sync(0xffffffffu, se, o);
		st += __shfl_down_sync(0xffffffffu, st, o);
		n += __shfl_down_sync(0xffffffffu, n, o);
	}
	if ((threadIdx.x & 31) == 0 && n) {
		atomicAdd(&m->sum_err, se);
		atomicAdd(&m->sum_abs_truth, st);
		atomicAdd(&m->finite, n);
	}
}

__global__ void mcompare_kernel(dk_mcompare c, double E, double mean_t, mdev_stats *m)
{
	dev_stats *st = &m->st;
	double local_abs = 0, local_ratio = 0, local_scaled = 0;
	GRID_STRIDE(i, c.numel) {
		double got, want, budget;
		int ok = mcheck(c, E, mean_t, i, &got, &want, &budget);
		double err = fabs(got - want);
		if (isnan(got) && isnan(want))
			err = 0;
		double ratio = budget > 0 ? err / budget : (err > 0 ? INFINITY : 0);
		if (ok) {
			if (isfinite(err)) {
				local_abs = fmax(local_abs, err);
				local_ratio = fmax(local_ratio, ratio);
				local_scaled = fmax(local_scaled, err / fmax(fabs(want), mean_t + 1e-300));
			}
			continue;
		}
		int unwritten = is_poison(c.got, c.got_dtype, i);
		atomicAdd(&st->bad, 1ull);
		if (unwritten)
			atomicAdd(&st->unwritten, 1ull);
		else if (isnan(got))
			atomicAdd(&st->nan, 1ull);
		else if (isinf(got))
			atomicAdd(&st->inf, 1ull);
		if (!isnan(err)) {
			local_abs = fmax(local_abs, err);
			local_ratio = fmax(local_ratio, ratio);
			local_scaled = fmax(local_scaled, isfinite(err) ? err / fmax(fabs(want), mean_t + 1e-300) : INFINITY);
		} else {
			local_ratio = INFINITY;
			local_scaled = INFINITY;
		}
		record_bad(st, i, c.rows, c.cols, got, want, budget);
	}
	warp_max_atomic(&st->max_abs_bits, local_abs);
	warp_max_atomic(&st->max_ratio_bits, local_ratio);
	warp_max_atomic(&m->max_scaled_bits, local_scaled);
}

__global__ void mworst_kernel(dk_mcompare c, double E, double mean_t, mdev_stats *m)
{
	double target = __longlong_as_double((long long)m->st.max_ratio_bits);
	if (!(target > 0))
		return;
	GRID_STRIDE(i, c.numel) {
		double got, want, budget;
		mcheck(c, E, mean_t, i, &got, &want, &budget);
		double err = fabs(got - want);
		if (isnan(got) && isnan(want))
			err = 0;
		double ratio = budget > 0 ? err / budget : (err > 0 ? INFINITY : 0);
		if (ratio >= target || (isnan(err) && isinf(target)))
			atomicMin(&m->st.worst_index, (unsigned long long)i);
	}
}

__global__ void mworst_values_kernel(dk_mcompare c, double E, double mean_t, mdev_stats *m)
{
	unsigned long long i = m->st.worst_index;
	if (i == ~0ull)
		return;
	mcheck(c, E, mean_t, (int64_t)i, &m->worst_got, &m->worst_want, &m->worst_budget);
}

extern "C" int dk_module_compare(const struct dk_mcompare *c, struct dk_stats *out, struct dk_mextra *mx,
				 void *scratch, void *stream)
{
	cudaStream_t s = (cudaStream_t)stream;
	mdev_stats init;
	memset(&init, 0, sizeof(init));
	init.st.worst_index = init.st.first_bad = ~0ull;
	mdev_stats *d = (mdev_stats *)scratch;
	mdev_stats h;
	cudaError_t e = cudaMemcpyAsync(d, &init, sizeof(init), cudaMemcpyHostToDevice, s);
	unsigned g = grid_for(c->numel);
	double E = c->E, mean_t = c->mean_abs_truth;
	if (!c->have_stats) { /* ref and truth are fixed per case: their sums once */
		if (!e) {
			msum_kernel<<<g, 256, 0, s>>>(*c, d);
			e = cudaMemcpyAsync(&h, d, sizeof(h), cudaMemcpyDeviceToHost, s);
		}
		if (!e)
			e = cudaStreamSynchronize(s);
		if (e)
			return (int)e;
		E = h.finite ? h.sum_err / (double)h.finite : 0;
		mean_t = h.finite ? h.sum_abs_truth / (double)h.finite : 0;
	}
	if (e)
		return (int)e;
	mcompare_kernel<<<g, 256, 0, s>>>(*c, E, mean_t, d);
	mworst_kernel<<<g, 256, 0, s>>>(*c, E, mean_t, d);
	mworst_values_kernel<<<1, 1, 0, s>>>(*c, E, mean_t, d);
	e = cudaMemcpyAsync(&h, d, sizeof(h), cudaMemcpyDeviceToHost, s);
	if (!e)
		e = cudaStreamSynchronize(s);
	if (!e)
		e = cudaGetLastError();
	if (e)
		return (int)e;
	const dev_stats *hs = &h.st;
	memset(out, 0, sizeof(*out));
	out->bad = hs->bad;
	out->nan = hs->nan;
	out->inf = hs->inf;
	out->unwritten = hs->unwritten;
	out->checked = (unsigned long long)c->numel;
	memcpy(&out->max_abs_err, &hs->max_abs_bits, sizeof(double));
	memcpy(&out->max_ratio, &hs->max_ratio_bits, sizeof(double));
	out->worst_index = hs->worst_index == ~0ull ? -1 : (long long)hs->worst_index;
	out->first_bad = hs->first_bad == ~0ull ? -1 : (long long)hs->first_bad;
	memcpy(out->row_hist, hs->row_hist, sizeof(hs->row_hist));
	memcpy(out->col_hist, hs->col_hist, sizeof(hs->col_hist));
	out->tail_rows_bad = hs->tail_rows_bad;
	out->tail_cols_bad = hs->tail_cols_bad;
	out->nsamples = hs->nsamples < DK_MAX_SAMPLES ? (int)hs->nsamples : DK_MAX_SAMPLES;
	for (int k = 0; k < out->nsamples; k++) {
		out->samples[k].index = hs->s_index[k];
		out->samples[k].got = hs->s_got[k];
		out->samples[k].want = hs->s_want[k];
		out->samples[k].tol = hs->s_tol[k];
	}
	mx->E = E;
	mx->mean_abs_truth = mean_t;
	memcpy(&mx->max_scaled_err, &h.max_scaled_bits, sizeof(double));
	mx->worst_index = out->worst_index;
	mx->worst_got = h.worst_got;
	mx->worst_want = h.worst_want;
	mx->worst_budget = h.worst_budget;
	return 0;
}

__global__ void bytes_differ_kernel(const unsigned char *a, const unsigned char *b, int64_t n,
				    unsigned long long *diff)
{
	unsigned long long local = 0;
	GRID_STRIDE(i, n)
		local += a[i] != b[i];
	for (int o = 16; o > 0; o /= 2)
		local += __shfl_down_sync(0xffffffffu, local, o);
	if ((threadIdx.x & 31) == 0 && local)
		atomicAdd(diff, local);
}

extern "C" int dk_bytes_differ(const void *a, const void *b, size_t n, unsigned long long *diff, void *scratch,
			       void *stream)
{
	cudaStream_t s = (cudaStream_t)stream;
	unsigned long long *d = (unsigned long long *)scratch;
	cudaError_t e = cudaMemsetAsync(d, 0, sizeof(*d), s);
	if (!e && n)
		bytes_differ_kernel<<<grid_for((int64_t)n), 256, 0, s>>>((const unsigned char *)a,
									  (const unsigned char *)b, (int64_t)n, d);
	if (!e)
		e = cudaMemcpyAsync(diff, d, sizeof(*d), cudaMemcpyDeviceToHost, s);
	if (!e)
		e = cudaStreamSynchronize(s);
	return e ? (int)e : (int)cudaGetLastError();
}

/* splitmix64's finalizer: a bijection of 64-bit words */
__device__ __forceinline__ unsigned long long hash_mix(unsigned long long z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#define HASH_POS 0x9e3779b97f4a7c15ull /* odd: the byte offset's weight */

/* The sum (mod 2^64) of hash_mix(value + offset * HASH_POS) over the 32-bit words of the body
 * and the single bytes of the head and tail; block 0's thread 0 takes the bytes. */
__global__ void hash_kernel(const unsigned char *p, int64_t head, const unsigned int *w, int64_t nw,
			    int64_t n, unsigned long long *out)
{
	unsigned long long local = 0;
	GRID_STRIDE(i, nw)
		local += hash_mix((unsigned long long)w[i] + (unsigned long long)(head + 4 * i) * HASH_POS);
	if (blockIdx.x == 0 && threadIdx.x == 0) {
		for (int64_t i = 0; i < head; i++)
			local += hash_mix((unsigned long long)p[i] + (unsigned long long)i * HASH_POS);
		for (int64_t i = head + 4 * nw; i < n; i++)
			local += hash_mix((unsigned long long)p[i] + (unsigned long long)i * HASH_POS);
	}
	for (int o = 16; o > 0; o /= 2)
		local += __shfl_down_sync(0xffffffffu, local, o);
	if ((threadIdx.x & 31) == 0 && local)
		atomicAdd(out, local);
}

extern "C" int dk_hash(const void *p, size_t n, unsigned long long *h, void *scratch, void *stream)
{
	cudaStream_t s = (cudaStream_t)stream;
	unsigned long long *d = (unsigned long long *)scratch;
	const unsigned char *b = (const unsigned char *)p;
	int64_t head = (int64_t)((4 - ((uintptr_t)b & 3)) & 3);
	if (head > (int64_t)n)
		head = (int64_t)n;
	int64_t nw = ((int64_t)n - head) / 4;
	cudaError_t e = cudaMemsetAsync(d, 0, sizeof(*d), s);
	if (!e && n)
		hash_kernel<<<grid_for(nw), 256, 0, s>>>(b, head, (const unsigned int *)(b + head), nw,
							 (int64_t)n, d);
	if (!e)
		e = cudaGetLastError();
	if (!e)
		e = cudaMemcpyAsync(h, d, sizeof(*d), cudaMemcpyDeviceToHost, s);
	if (!e)
		e = cudaStreamSynchronize(s);
	return (int)e;
}

extern "C" int dk_preload(void)
{
	struct cudaFuncAttributes a;
	const void *fns[] = {
		(const void *)gate_kernel, (const void *)gemm_ref_kernel, (const void *)sample_kernel,
		(const void *)sample_dot_kernel, (const void *)dot_finish_kernel,
		(const void *)compare_kernel, (const void *)worst_kernel, (const void *)rowstats_kernel,
		(const void *)poison32, (const void *)poison16, (const void *)poison64,
		(const void *)msum_kernel, (const void *)mcompare_kernel, (const void *)mworst_kernel,
		(const void *)mworst_values_kernel, (const void *)bytes_differ_kernel,
		(const void *)hash_kernel,
		(const void *)verify_kernel<float>, (const void *)verify_kernel<__half>,
		(const void *)verify_kernel<__nv_bfloat16>, (const void *)verify_kernel<__nv_fp8_e4m3>,
		(const void *)fill_kernel<float>, (const void *)fill_kernel<__half>,
		(const void *)fill_kernel<__nv_bfloat16>, (const void *)fill_kernel<__nv_fp8_e4m3>,
	};
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		cudaError_t e = cudaFuncGetAttributes(&a, fns[i]);
		if (e)
			return (int)e;
	}
	return 0;
}
