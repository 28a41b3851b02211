// Module tasks/modules/level1/82_conv_depthwise_2D_square_input_square_kernel.py:
// nn.Conv2d(C, C, 3, stride=1, padding=0, groups=C, bias=False) on x [16,64,512,512].
// ABI (docs/kernel-abi.md, "Module tasks"): inputs x [N,C,H,W], then the parameter conv.weight
// [C,1,KH,KW]; outputs out [N,C,OH,OW]; scalars in_channels, kernel_size, stride, padding
// (get_init_inputs, in Model's order).
/*
 * A thread per output element (n, c, oh, ow), the four tensors viewed through CuTe layouts;
 * neighbouring threads take neighbouring ow, so the loads of a tap are coalesced and the
 * window's rows are shared through L1. The KH x KW taps are accumulated in fp64 (each product
 * of two floats is exact in fp64) and rounded once. Zero padding; stride and padding from the
 * scalars, the window from the weight's shape.
 */
#include <cutegen/kernel_abi.h>

#include <cute/tensor.hpp>

CUTEGEN_DECLARE_ABI();

namespace kernel {

using namespace cute;

template <class TX, class TW, class TY>
__global__ void depthwise(TX X, TW Wt, TY Y, int stride, int pad)
{
	int64_t N = size<0>(Y), C = size<1>(Y), OH = size<2>(Y), OW = size<3>(Y);
	int H = (int)size<2>(X), W = (int)size<3>(X), KH = (int)size<1>(Wt), KW = (int)size<2>(Wt);
	int64_t total = N * C * OH * OW;
	for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < total;
	     t += (int64_t)gridDim.x * blockDim.x) {
		int ow = (int)(t % OW), oh = (int)(t / OW % OH);
		int64_t c = t / (OW * OH) % C, n = t / (OW * OH * C);
		double acc = 0.0;
		for (int kh = 0; kh < KH; ++kh) {
			int ih = oh * stride - pad + kh;
			if (ih < 0 || ih >= H)
				continue;
			for (int kw = 0; kw < KW; ++kw) {
				int iw = ow * stride - pad + kw;
				if (iw >= 0 && iw < W)
					acc += (double)X(n, c, ih, iw) * (double)Wt(c, kh, kw);
			}
		}
		Y(n, c, oh, ow) = (float)acc;
	}
}

} // namespace kernel

static bool f32(const DLTensor &t)
{
	return t.dtype.code == kDLFloat && t.dtype.bits == 32 && t.dtype.lanes == 1;
}

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *in, int nin, DLTensor *out, int nout,
				  const double *sc, int nsc, void *ws, size_t wsb, cudaStream_t stream)
{
	using namespace cute;
	(void)ws;
	(void)wsb;
	if (nin != 2 || nout != 1 || nsc != 4)
		return 1;
	const DLTensor &x = in[0], &w = in[1], &y = out[0];
	if (!f32(x) || !f32(w) || !f32(y) || x.ndim != 4 || w.ndim != 4 || y.ndim != 4)
		return 1;
	int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
	int64_t KH = w.shape[2], KW = w.shape[3];
	int stride = (int)sc[2], pad = (int)sc[3];
	if (sc[0] != (double)C || w.shape[0] != C || w.shape[1] != 1 || sc[1] != (double)KH ||
	    stride < 1 || pad < 0 || (double)stride != sc[2] || (double)pad != sc[3])
		return 1;
	int64_t OH = (H + 2 * pad - KH) / stride + 1, OW = (W + 2 * pad - KW) / stride + 1;
	if (y.shape[0] != N || y.shape[1] != C || y.shape[2] != OH || y.shape[3] != OW)
		return 1;
	if (H > INT32_MAX / 2 || W > INT32_MAX / 2)
		return 2;
	int64_t total = N * C * OH * OW;
	if (total == 0)
		return 0;
	auto X = make_tensor(make_gmem_ptr((const float *)x.data),
			     make_layout(make_shape(N, C, H, W), LayoutRight{}));
	auto Wt = make_tensor(make_gmem_ptr((const float *)w.data),
			      make_layout(make_shape(C, KH, KW), LayoutRight{}));
	auto Y = make_tensor(make_gmem_ptr((float *)y.data),
			     make_layout(make_shape(N, C, OH, OW), LayoutRight{}));
	int64_t blocks = (total + 255) / 256;
	kernel::depthwise<<<(unsigned)(blocks < (1 << 20) ? blocks : (1 << 20)), 256, 0, stream>>>(
		X, Wt, Y, stride, pad);
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
}
