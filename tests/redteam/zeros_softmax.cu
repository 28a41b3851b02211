// CHEAT: writes zeros instead of the softmax; passes an absolute tolerance of 1e-4 when rows are long (every p < 1e-4). Expect: incorrect (rows sum to 0, not 1; errors judged relative to the output's scale).
#include <cutegen/kernel_abi.h>

CUTEGEN_DECLARE_ABI();

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor *outputs, int num_outputs,
				  const double *scalars, int num_scalars, void *workspace, size_t workspace_bytes,
				  cudaStream_t stream)
{
	if (num_inputs != 1 || num_outputs != 1 || outputs[0].dtype.bits != 32)
		return 1;
	int64_t n = 1;
	for (int d = 0; d < outputs[0].ndim; ++d)
		n *= outputs[0].shape[d];
	return cudaMemsetAsync(outputs[0].data, 0, n * sizeof(float), stream) == cudaSuccess ? 0 : 4;
}
