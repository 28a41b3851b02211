// One thread per element: the simplest correct CuTe ReLU (stage 0 of the demo run).
#include <cutegen/kernel_abi.h>

#include <cute/tensor.hpp>

CUTEGEN_DECLARE_ABI();

using namespace cute;

template <class TensorX, class TensorY>
__global__ void relu_kernel(TensorX mX, TensorY mY)
{
	int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < size(mX)) {
		float v = mX(i);
		mY(i) = v > 0.0f ? v : 0.0f;
	}
}

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *in, int nin, DLTensor *out, int nout,
				  const double *s, int ns, void *ws, size_t wsb, cudaStream_t stream)
{
	if (nin != 1 || nout != 1 || in[0].dtype.bits != 32)
		return 1;
	int64_t n = 1;
	for (int d = 0; d < in[0].ndim; d++)
		n *= in[0].shape[d];
	Tensor mX = make_tensor(make_gmem_ptr((const float *)in[0].data), make_layout(n)); // (n)
	Tensor mY = make_tensr(make_gmem_ptr((float *)out[0].data), make_layout(n));      // (n)
	int threads = 256;
	int64_t blocks = (n + threads - 1) / threads;
	relu_kernel<<<(unsigned)blocks, threads, 0, stream>>>(mX, mY);
	return 0;
}
