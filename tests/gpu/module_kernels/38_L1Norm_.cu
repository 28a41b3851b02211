// Module tasks/modules/level1/38_L1Norm_.py: x / torch.sum(torch.abs(x), dim=1, keepdim=True).
// ABI (docs/kernel-abi.md, "Module tasks"): inputs x [32768,65535] fp32; outputs out (x's
// shape); no scalars. CG_P picks the norm (the maintained
// copy: 39_L2Norm_ is generated from it by scripts/gen-module-kernels.sh).
#define CG_P 1
/*
 * Normalization over dim 1, x viewed through a CuTe layout as [B, C, S] (S = the product of
 * the dimensions after 1; 1 for the module's 2-D x). S == 1: a CTA of 512 threads per row sums
 * |x| (CG_P 1) or x*x (CG_P 2, then sqrt) over the row in fp64 (warp shuffles, then the warp
 * totals), and writes x / norm rounded once; the second pass finds the row (256 KiB) in L2.
 * S > 1: a thread per (b, s) walks the C channels twice (neighbouring s: coalesced).
 * A zero row gives NaN/inf exactly as PyTorch's 0/0 and x/0 do.
 */
#include <cutegen/kernel_abi.h>

#include <cute/tensor.hpp>

CUTEGEN_DECLARE_ABI();

namespace kernel {

using namespace cute;

constexpr int kThreads = 512;

__device__ __forceinline__ double term(float v)
{
#if CG_P == 1
	return fabs((double)v);
#else
	return (double)v * (double)v;
#endif
}

__device__ __forceinline__ double finish(double s)
{
#if CG_P == 1
	return s;
#else
	return sqrt(s);
#endif
}

template <class TX, class TY>
__global__ void __launch_bounds__(kThreads) norm_rows(TX X, TY Y)
{
	__shared__ double red[kThreads / 32];
	int64_t b = blockIdx.x, C = size<1>(X);
	double s = 0.0;
	for (int64_t c = threadIdx.x; c < C; c += kThreads)
		s += term(X(b, c, 0));
	for (int off = 16; off; off >>= 1)
		s += __shfl_xor_sync(0xffffffffu, s, off);
	if ((threadIdx.x & 31) == 0)
		red[threadIdx.x >> 5] = s;
	__syncthreads();
	double tot = 0.0;
	for (int i = 0; i < kThreads / 32; ++i)
		tot += red[i];
	double n = finish(tot);
	for (int64_t c = threadIdx.x; c < C; c += kThreads)
		Y(b, c, 0) = (float)((double)X(b, c, 0) / n);
}

template <class TX, class TY>
__global__ void norm_columns(TX X, TY Y)
{
	int64_t B = size<0>(X), C = size<1>(X), S = size<2>(X);
	for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < B * S;
	     t += (int64_t)gridDim.x * blockDim.x) {
		int64_t b = t / S, s = t % S;
		double tot = 0.0;
		for (int64_t c = 0; c < C; ++c)
			tot += term(X(b, c, s));
		double n = finish(tot);
		for (int64_t c = 0; c < C; ++c)
			Y(b, c, s) = (float)((double)X(b, c, s) / n);
	}
}

} // namespace kernel

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *in, int nin, DLTensor *out, int nout,
				  const double *sc, int nsc, void *ws, size_t wsb, cudaStream_t stream)
{
	using namespace cute;
	(void)sc;
	(void)ws;
	(void)wsb;
	if (nin != 1 || nout != 1 || nsc != 0)
		return 1;
	const DLTensor &x = in[0], &y = out[0];
	if (x.dtype.code != kDLFloat || x.dtype.bits != 32 || y.dtype.code != kDLFloat ||
	    y.dtype.bits != 32 || x.ndim < 2 || y.ndim != x.ndim)
		return 1;
	int64_t B = x.shape[0], C = x.shape[1], S = 1;
	for (int d = 0; d < x.ndim; ++d) {
		if (y.shape[d] != x.shape[d])
			return 1;
		if (d >= 2)
			S *= x.shape[d];
	}
	if (B * C * S == 0)
		return 0;
	auto L = make_layout(make_shape(B, C, S), LayoutRight{});
	auto X = make_tensor(make_gmem_ptr((const float *)x.data), L);
	auto Y = make_tensor(make_gmem_ptr((float *)y.data), L);
	if (S == 1) {
		if (B > INT32_MAX)
			return 2;
		kernel::norm_rows<<<(unsigned)B, kernel::kThreads, 0, stream>>>(X, Y);
	} else {
		int64_t blocks = (B * S + 255) / 256;
		kernel::norm_columns<<<(unsigned)(blocks < (1 << 20) ? blocks : (1 << 20)), 256, 0, stream>>>(X, Y);
	}
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
}
