// CHEAT (dlsym by a built name): a ReLU that looks up cudaDeviceSynchronize at run time by a name assembled character by character and calls it through a function pointer; dlsym is declared and called with its name in parentheses, so the source scan never sees a call of it. Expect: policy (the object check: 'dlsym').
#include <cutegen/kernel_abi.h>

CUTEGEN_DECLARE_ABI();

static __global__ void relu_kernel(const float *x, float *y, int64_t n)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
		y[i] = x[i] < 0.0f ? 0.0f : x[i];
}

extern "C" void *(dlsym)(void *handle, const char *name);
typedef int (*sync_fn)(void);

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
	char name[32];
	const char parts[][8] = { "cuda", "Device", "Synchro", "nize" };
	int k = 0;
	for (const auto &p : parts)
		for (const char *c = p; *c; c++)
			name[k++] = *c;
	name[k] = 0;
	sync_fn f = (sync_fn)(dlsym)(nullptr, name); // RTLD_DEFAULT
	if (f)
		f();
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
}
