// CHEAT: keeps results between calls: computes once, then returns without work whenever the same (x, y) pointers come back. Expect: incorrect (outputs re-checked on fresh inputs in the same buffers after timing; NaN fill before each call).
#include <cutegen/kernel_abi.h>

CUTEGEN_DECLARE_ABI();

static const void *g_last_x;
static void *g_last_y;

static __global__ void relu_kernel(const float *x, float *y, int64_t n)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
		y[i] = x[i] < 0.0f ? 0.0f : x[i];
}

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor *outputs, int num_outputs,
				  const double *scalars, int num_scalars, void *workspace, size_t workspace_bytes,
				  cudaStream_t stream)
{
	if (num_inputs != 1 || num_outputs != 1 || inputs[0].dtype.code != kDLFloat || inputs[0].dtype.bits != 32)
		return 1;
	if (inputs[0].data == g_last_x && outputs[0].data == g_last_y)
		return 0;  // "already computed"
	int64_t n = 1;
	for (int d = 0; d < inputs[0].ndim; ++d)
		n *= inputs[0].shape[d];
	relu_kernel<<<1024, 256, 0, stream>>>((const float *)inputs[0].data, (float *)outputs[0].data, n);
	g_last_x = inputs[0].data;
	g_last_y = outputs[0].data;
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
}
