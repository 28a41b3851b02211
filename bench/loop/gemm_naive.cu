// One thread per element of C, fp32 FMA over K: the simplest correct CuTe GEMM (stage 0).
#include <cutegen/kernel_abi.h>

#include <cute/tensor.hpp>

CUTEGEN_DECLARE_ABI();

using namespace cute;

template <class TensorA, class TensorB, class TensorC>
__global__ void gemm_kernel(TensorA mA, TensorB mB, TensorC mC, float alpha)
{
	int m = blockIdx.y * blockDim.y + threadIdx.y;
	int n = blockIdx.x * blockDim.x + threadIdx.x;
	if (m >= size<0>(mC) || n >= size<1>(mC))
		return;
	float acc = 0.0f;
	for (int k = 0; k < size<1>(mA); k++)
		acc = fmaf(mA(m, k), mB(k, n), acc);
	mC(m, n) = alpha * acc;
}

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *in, int nin, DLTensor *out, int nout,
				  const double *s, int ns, void *ws, size_t wsb, cudaStream_t stream)
{
	if (nin != 2 || nout != 1 || in[0].ndim != 2 || in[1].ndim != 2)
		return 1;
	int M = (int)in[0].shape[0], K = (int)in[0].shape[1], N = (int)in[1].shape[1];
	if (in[1].shape[0] != K)
		return 2;
	float alpha = ns > 0 ? (float)s[0] : 1.0f;
	Tensor mA = make_tensor(make_gmem_ptr((const float *)in[0].data), make_shape(M, K), make_stride(K, Int<1>{})); // (M,K)
	Tensor mB = make_tensor(make_gmem_ptr((const float *)in[1].data), make_shape(K, N), make_stride(N, Int<1>{})); // (K,N)
	Tensor mC = make_tensor(make_gmem_ptr((float *)out[0].data), make_shape(M, N), make_stride(N, Int<1>{}));      // (M,N)
	dim3 block(32, 8);
	dim3 grid((N + 31) / 32, (M + 7) / 8);
	gemm_kernel<<<grid, block, 0, stream>>>(mA, mB, mC, alpha);
	return 0;
}
