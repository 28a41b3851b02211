// CHEAT: a kernel that never finishes (spins on a flag nobody sets). Expect: timeout (the runner's deadline kills it).
#include <cutegen/kernel_abi.h>

CUTEGEN_DECLARE_ABI();

static __global__ void spin_kernel(const float *x, float *y, volatile int *never)
{
	while (*never == 0)
		;
	y[0] = x[0];
}

__device__ int g_never;

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor *outputs, int num_outputs,
				  const double *scalars, int num_scalars, void *workspace, size_t workspace_bytes,
				  cudaStream_t stream)
{
	if (num_inputs != 1 || num_outputs != 1)
		return 1;
	int *never = nullptr;
	if (cudaGetSymbolAddress((void **)&never, g_never) != cudaSuccess)
		return 4;
	spin_kernel<<<1, 32, 0, stream>>>((const float *)inputs[0].data, (float *)outputs[0].data, never);
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
}
