// Module tasks/modules/level2/4_Residual_Add_LayerNorm.py: nn.LayerNorm(hidden)(x + residual).
// ABI (docs/kernel-abi.md, "Module tasks"): inputs x [32,1024,1024], residual (same), then the
// parameters ln.weight [hidden], ln.bias [hidden] (state_dict order); outputs out (x's shape);
// scalars hidden (get_init_inputs). eps is LayerNorm's default, 1e-5.
/*
 * A CTA of 256 threads per row of `hidden` elements (the rows: every leading dimension, viewed
 * through a CuTe layout as [rows, hidden]). Each thread keeps its elements of s = x + residual
 * in registers (fp64, so the sum is exact), the CTA reduces the mean, then the sum of squared
 * deviations (two passes over registers, no cancellation), and writes
 * (s - mean) * rstd * weight + bias rounded once to fp32. hidden <= 256 * kPer.
 */
#include <cutegen/kernel_abi.h>

#include <cute/tensor.hpp>

CUTEGEN_DECLARE_ABI();

namespace kernel {

using namespace cute;

constexpr int kThreads = 256;
constexpr int kPer = 16; /* elements a thread holds: hidden <= 4096 */

__device__ __forceinline__ double block_sum(double v, double *red)
{
	for (int off = 16; off; off >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, off);
	int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
	__syncthreads();
	if (lane == 0)
		red[w] = v;
	__syncthreads();
	double s = 0.0;
	for (int i = 0; i < kThreads / 32; ++i)
		s += red[i];
	return s;
}

template <class TX, class TW>
__global__ void __launch_bounds__(kThreads) residual_layernorm(TX X, TX Rs, TW W, TW Bi, float *y,
							       double eps)
{
	__shared__ double red[kThreads / 32];
	int64_t row = blockIdx.x;
	int H = (int)size<1>(X);
	auto Y = make_tensor(make_gmem_ptr(y), layout(X));
	double v[kPer];
	double s = 0.0;
#pragma unroll
	for (int k = 0; k < kPer; ++k) {
		int h = threadIdx.x + k * kThreads;
		v[k] = h < H ? (double)X(row, h) + (double)Rs(row, h) : 0.0;
		s += v[k];
	}
	double mean = block_sum(s, red) / H;
	double q = 0.0;
#pragma unroll
	for (int k = 0; k < kPer; ++k) {
		int h = threadIdx.x + k * kThreads;
		double d = h < H ? v[k] - mean : 0.0;
		q += d * d;
	}
	double rstd = 1.0 / sqrt(block_sum(q, red) / H + eps);
#pragma unroll
	for (int k = 0; k < kPer; ++k) {
		int h = threadIdx.x + k * kThreads;
		if (h < H)
			Y(row, h) = (float)((v[k] - mean) * rstd * (double)W(h) + (double)Bi(h));
	}
}

} // namespace kernel

static bool is_f32(const DLTensor &t)
{
	return t.dtype.code == kDLFloat && t.dtype.bits == 32 && t.dtype.lanes == 1;
}

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *in, int nin, DLTensor *out, int nout,
				  const double *sc, int nsc, void *ws, size_t wsb, cudaStream_t stream)
{
	using namespace cute;
	(void)ws;
	(void)wsb;
	if (nin != 4 || nout != 1 || nsc != 1)
		return 1;
	const DLTensor &x = in[0], &r = in[1], &w = in[2], &b = in[3], &y = out[0];
	if (!is_f32(x) || !is_f32(r) || !is_f32(w) || !is_f32(b) || !is_f32(y) || x.ndim < 1 ||
	    r.ndim != x.ndim || y.ndim != x.ndim || w.ndim != 1 || b.ndim != 1)
		return 1;
	int64_t H = x.shape[x.ndim - 1], rows = 1;
	for (int d = 0; d < x.ndim; ++d) {
		if (r.shape[d] != x.shape[d] || y.shape[d] != x.shape[d])
			return 1;
		if (d < x.ndim - 1)
			rows *= x.shape[d];
	}
	if (w.shape[0] != H || b.shape[0] != H || (double)H != sc[0])
		return 1;
	if (H > kernel::kThreads * kernel::kPer || rows > INT32_MAX)
		return 2;
	if (rows == 0 || H == 0)
		return 0;
	auto L = make_layout(make_shape(rows, (int64_t)H), LayoutRight{});
	auto X = make_tensor(make_gmem_ptr((const float *)x.data), L);
	auto R = make_tensor(make_gmem_ptr((const float *)r.data), L);
	auto LW = make_layout(make_shape((int64_t)H));
	auto W = make_tensor(make_gmem_ptr((const float *)w.data), LW);
	auto B = make_tensor(make_gmem_ptr((const float *)b.data), LW);
	kernel::residual_layernorm<<<(unsigned)rows, kernel::kThreads, 0, stream>>>(X, R, W, B,
									     (float *)y.data, 1e-5);
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
}
