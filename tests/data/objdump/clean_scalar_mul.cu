// scalar_mul: C = A * s
#include <cutegen/kernel_abi.h>
CUTEGEN_DECLARE_ABI();

namespace kernel {
__global__ void scale(const float *a, float *c, int64_t n, float s)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
	     i += (int64_t)gridDim.x * blockDim.x)
		c[i] = a[i] * s;
}
} // namespace kernel

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *in, int nin, DLTensor *out, int nout,
				  const double *sc, int nsc, void *ws, size_t wsb, cudaStream_t stream)
{
	if (nin != 1 || nout != 1 || nsc != 1 || in[0].dtype.code != kDLFloat || in[0].dtype.bits != 32)
		return 1;
	int64_t n = 1;
	for (int d = 0; d < in[0].ndim; ++d)
		n *= in[0].shape[d];
	kernel::scale<<<1024, 256, 0, stream>>>((const float *)in[0].data, (float *)out[0].data, n,
						(float)sc[0]);
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
}
