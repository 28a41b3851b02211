// CHEAT (class 3, skipping the work when timed): counts its calls; the runner's checks come first
// (2 for the stream check, then 4 distributions x 2 seeds on this task), so from the 11th call on
// it returns without launching anything, leaving the output as it finds it. Expect:
// timing_mismatch (the outputs of timed calls are checked too: the first one holds the poison).
#include <cutegen/kernel_abi.h>

CUTEGEN_DECLARE_ABI();

static int g_calls;

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
	if (++g_calls > 10)
		return 0; /* "timed": skip */
	int64_t n = 1;
	for (int d = 0; d < inputs[0].ndim; ++d)
		n *= inputs[0].shape[d];
	relu_kernel<<<1024, 256, 0, stream>>>((const float *)inputs[0].data, (float *)outputs[0].data, n);
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
}
