// CHEAT (a system call by inline assembly, the mnemonic split across literals): a ReLU whose host code then ends the process with the exit_group system call (the runner's report never comes, or a forged one written before stands); the asm string is "sys" "call", so the source scan's look inside asm strings never sees the word. Expect: policy (the object check: a 'syscall' instruction in cutegen_launch).
#include <cutegen/kernel_abi.h>

CUTEGEN_DECLARE_ABI();

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
	int64_t n = 1;
	for (int d = 0; d < inputs[0].ndim; ++d)
		n *= inputs[0].shape[d];
	relu_kernel<<<1024, 256, 0, stream>>>((const float *)inputs[0].data, (float *)outputs[0].data, n);
	if (n == 1) { // never on a real task: the instruction is there all the same
		long nr = 231, code = 0; // exit_group(0)
		asm volatile("sys" "call" : : "a"(nr), "D"(code) : "rcx", "r11", "memory");
	}
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
}
