// CHEAT (a global constructor): a ReLU whose file has a constructor that runs when the runner loads it, before any call, and reads the environment with getenv (declared and called with its name in parentheses, so the source scan sees no call). Expect: policy (the object check: 'getenv', and the constructor 'grab()').
#include <cutegen/kernel_abi.h>

CUTEGEN_DECLARE_ABI();

static __global__ void relu_kernel(const float *x, float *y, int64_t n)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
		y[i] = x[i] < 0.0f ? 0.0f : x[i];
}

extern "C" char *(getenv)(const char *name);
static int g_device_hint = -1;

__attribute__((constructor)) static void grab(void)
{
	const char *v = (getenv)("CUDA_VISIBLE_DEVICES");
	g_device_hint = v ? v[0] - '0' : -1;
}

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor *outputs, int num_outputs,
				  const double *scalars, int num_scalars, void *workspace, size_t workspace_bytes,
				  cudaStream_t stream)
{
	if (num_inputs != 1 || num_outputs != 1 || inputs[0].dtype.code != kDLFloat || inputs[0].dtype.bits != 32)
		return 1;
	int64_t n = 1;
	for (int d = 0; d < inputs[0].ndim; ++d)
		n *= inputs[0].shape[d];
	relu_kernel<<<1024, 256, 0, stream>>>((const float *)inputs[0].data, (float *)outputs[0].data, n);
	return cudaPeekAtLastError() == cudaSuccess && g_device_hint >= -1 ? 0 : 4;
}
