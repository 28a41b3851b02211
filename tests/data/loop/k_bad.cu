// relu, first try: calls a helper that does not exist
#include <cutegen/kernel_abi.h>

__global__ void relu_kernel(const float *x, float *y, long n)
{
	long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = clamp_positive(x[i]);
}

CUTEGEN_DECLARE_ABI();

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor *outputs,
				  int num_outputs, const double *scalars, int num_scalars,
				  void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
	if (num_inputs != 1 || num_outputs != 1)
		return 1;
	long n = 1;
	for (int d = 0; d < inputs[0].ndim; d++)
		n *= inputs[0].shape[d];
	const int threads = 256;
	relu_kernel<<<(unsigned)((n + threads - 1) / threads), threads, 0, stream>>>(
		(const float *)inputs[0].data, (float *)outputs[0].data, n);
	return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
