// Module tasks/modules/level1/40_LayerNorm.py: nn.LayerNorm((64, 256, 256)) over x [16,64,256,256].
// ABI (docs/kernel-abi.md, "Module tasks"): inputs x, then the parameters ln.weight and ln.bias
// (normalized_shape each, state_dict order); outputs out (x's shape); no scalars
// (normalized_shape is a tuple, not a number). eps is LayerNorm's default, 1e-5.
/*
 * Each row (the leading dimensions of x) normalizes over N = numel(weight) elements, here 4 Mi
 * per row and only 16 rows, so one CTA per row would leave the GPU idle: the row is split over
 * P CTAs and reduced through the workspace (cutegen_workspace_bytes, 2 doubles per CTA).
 *   1. stats: CTA (p, row) sums x and x*x over its slice in fp64 -> ws[row][p];
 *   2. apply: CTA (p, row) reduces the row's P partials (fp64), mean and
 *      rstd = 1/sqrt(E[x^2] - mean^2 + eps), and writes (x - mean) * rstd * w + b rounded once.
 * x is viewed through a CuTe layout as [rows, N], weight and bias as [N]. fp64 moments make the
 * variance's cancellation harmless for the inputs the judge draws (|mean| / std up to ~1e6).
 */
#include <cutegen/kernel_abi.h>

#include <cute/tensor.hpp>

CUTEGEN_DECLARE_ABI();

namespace kernel {

using namespace cute;

constexpr int kThreads = 256;
constexpr int64_t kMaxSplit = 256;

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

template <class TX>
__global__ void __launch_bounds__(kThreads) stats(TX X, double *ws)
{
	__shared__ double red[kThreads / 32];
	int64_t row = blockIdx.y, P = gridDim.x, N = size<1>(X);
	double s = 0.0, q = 0.0;
	for (int64_t i = blockIdx.x * (int64_t)kThreads + threadIdx.x; i < N; i += P * kThreads) {
		double v = X(row, i);
		s += v;
		q += v * v;
	}
	s = block_sum(s, red);
	q = block_sum(q, red);
	if (threadIdx.x == 0) {
		ws[(row * P + blockIdx.x) * 2] = s;
		ws[(row * P + blockIdx.x) * 2 + 1] = q;
	}
}

template <class TX, class TW, class TY>
__global__ void __launch_bounds__(kThreads) apply(TX X, TW W, TW Bi, TY Y, const double *ws, double eps)
{
	__shared__ double red[kThreads / 32];
	int64_t row = blockIdx.y, P = gridDim.x, N = size<1>(X);
	double s = 0.0, q = 0.0;
	for (int64_t p = threadIdx.x; p < P; p += kThreads) {
		s += ws[(row * P + p) * 2];
		q += ws[(row * P + p) * 2 + 1];
	}
	double mean = block_sum(s, red) / (double)N;
	double var = block_sum(q, red) / (double)N - mean * mean;
	double rstd = 1.0 / sqrt((var > 0.0 ? var : 0.0) + eps);
	for (int64_t i = blockIdx.x * (int64_t)kThreads + threadIdx.x; i < N; i += P * kThreads)
		Y(row, i) = (float)(((double)X(row, i) - mean) * rstd * (double)W(i) + (double)Bi(i));
}

struct Shape {
	int64_t rows, N, P;
};

/* 0 and the shape when the arguments are LayerNorm's; nonzero otherwise. */
static int shape_of(const DLTensor *in, int nin, const DLTensor *out, int nout, Shape *sh)
{
	if (nin != 3 || nout != 1)
		return 1;
	const DLTensor &x = in[0], &w = in[1], &b = in[2], &y = out[0];
	const DLTensor *all[] = { &x, &w, &b, &y };
	for (const DLTensor *t : all)
		if (t->dtype.code != kDLFloat || t->dtype.bits != 32 || t->dtype.lanes != 1)
			return 1;
	if (w.ndim < 1 || w.ndim > x.ndim || b.ndim != w.ndim || y.ndim != x.ndim)
		return 1;
	int lead = x.ndim - w.ndim;
	sh->rows = 1;
	sh->N = 1;
	for (int d = 0; d < x.ndim; ++d) {
		if (y.shape[d] != x.shape[d])
			return 1;
		if (d < lead) {
			sh->rows *= x.shape[d];
		} else {
			if (w.shape[d - lead] != x.shape[d] || b.shape[d - lead] != x.shape[d])
				return 1;
			sh->N *= x.shape[d];
		}
	}
	int64_t P = (sh->N + 16 * kThreads - 1) / (16 * kThreads);
	sh->P = P < 1 ? 1 : P > kMaxSplit ? kMaxSplit : P;
	if (sh->rows > 65535)
		return 2;
	return 0;
}

} // namespace kernel

CUTEGEN_KERNEL size_t cutegen_workspace_bytes(const DLTensor *in, int nin, const DLTensor *out, int nout,
					      const double *sc, int nsc)
{
	(void)sc;
	(void)nsc;
	kernel::Shape sh;
	if (kernel::shape_of(in, nin, out, nout, &sh))
		return 0;
	return (size_t)(sh.rows * sh.P * 2) * sizeof(double);
}

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *in, int nin, DLTensor *out, int nout,
				  const double *sc, int nsc, void *ws, size_t wsb, cudaStream_t stream)
{
	using namespace cute;
	(void)sc;
	if (nsc != 0)
		return 1;
	kernel::Shape sh;
	int rc = kernel::shape_of(in, nin, out, nout, &sh);
	if (rc)
		return rc;
	if (sh.rows == 0 || sh.N == 0)
		return 0;
	if (ws == nullptr || wsb < (size_t)(sh.rows * sh.P * 2) * sizeof(double))
		return 1;
	auto L = make_layout(make_shape(sh.rows, sh.N), LayoutRight{});
	auto LW = make_layout(make_shape(sh.N));
	auto X = make_tensor(make_gmem_ptr((const float *)in[0].data), L);
	auto W = make_tensor(make_gmem_ptr((const float *)in[1].data), LW);
	auto B = make_tensor(make_gmem_ptr((const float *)in[2].data), LW);
	auto Y = make_tensor(make_gmem_ptr((float *)out[0].data), L);
	dim3 grid((unsigned)sh.P, (unsigned)sh.rows);
	kernel::stats<<<grid, kernel::kThreads, 0, stream>>>(X, (double *)ws);
	kernel::apply<<<grid, kernel::kThreads, 0, stream>>>(X, W, B, Y, (const double *)ws, 1e-5);
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
}
