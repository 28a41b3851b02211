// Follows the ABI but does not compile: an undefined identifier on line 10 (e2e test data).
#include <cutegen/kernel_abi.h>

__global__ void scale(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		float v = x[i];
		// the factor was never declared
		x[i] = v * scale_factor;
	}
}

CUTEGEN_DECLARE_ABI();

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor *outputs,
				  int num_outputs, const double *scalars, int num_scalars,
				  void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
	int n = (int)outputs[0].shape[0];
	scale<<<(n + 255) / 256, 256, 0, stream>>>((float *)outputs[0].data, n);
	return 0;
}
