// CHEAT (a library function defined by the kernel, a versioned symbol): a ReLU that defines open itself (an alias of its own function) and calls memcpy by a .symver-pinned version; neither name is called in the source. Expect: policy (the object check: the definition of 'open', the versioned 'memcpy@GLIBC_2.2.5').
#include <cutegen/kernel_abi.h>

CUTEGEN_DECLARE_ABI();

static __global__ void relu_kernel(const float *x, float *y, int64_t n)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
		y[i] = x[i] < 0.0f ? 0.0f : x[i];
}

extern "C" int my_open(const char *, int) { return -1; }
extern "C" int open(const char *, int) __attribute__((alias("my_open")));
extern "C" void *pinned_copy(void *, const void *, unsigned long);
__asm__(".symver pinned_copy, memcpy@GLIBC_2.2.5");

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
	char a[4] = "abc", b[4];
	pinned_copy(b, a, 4);
	return cudaPeekAtLastError() == cudaSuccess && b[0] == 'a' ? 0 : 4;
}
