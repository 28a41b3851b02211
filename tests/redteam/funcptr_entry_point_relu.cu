// CHEAT (a function pointer from a name built at run time): a ReLU that asks the CUDA runtime for a driver function by a name assembled at run time (cuCtxSynchronize) and calls it through the pointer; cudaGetDriverEntryPoint is declared under another name with an asm label split into literals. Expect: policy (the object check: 'cudaGetDriverEntryPoint').
#include <cutegen/kernel_abi.h>

CUTEGEN_DECLARE_ABI();

static __global__ void relu_kernel(const float *x, float *y, int64_t n)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
		y[i] = x[i] < 0.0f ? 0.0f : x[i];
}

extern "C" int entry_point(const char *name, void **fn, unsigned long long flags, int *status)
	__asm__("cudaGetDriver" "EntryPoint");
typedef int (*drv_fn)(void);

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
	char name[24] = "cu";
	const char *rest[] = { "Ctx", "Synchronize" };
	int k = 2;
	for (const char *r : rest)
		for (const char *c = r; *c; c++)
			name[k++] = *c;
	name[k] = 0;
	void *fn = nullptr;
	int status = 0;
	if (!entry_point(name, &fn, 0, &status) && fn)
		((drv_fn)fn)();
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
}
