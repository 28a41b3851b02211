// Follows the ABI but breaks the policy: it synchronizes the device (line 16) and includes
// <fstream> (line 4). e2e test data: `cutegen build` must refuse it without running nvcc.
#include <cutegen/kernel_abi.h>
#include <fstream>

__global__ void zero(float *x, int n) { int i = threadIdx.x; if (i < n) x[i] = 0.0f; }

CUTEGEN_DECLARE_ABI();

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor *outputs,
				  int num_outputs, const double *scalars, int num_scalars,
				  void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
	// cudaDeviceSynchronize() in this comment is fine
	zero<<<1, 256, 0, stream>>>((float *)outputs[0].data, 256);
	return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}
