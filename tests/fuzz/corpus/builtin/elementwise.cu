/*
 * A stand-in for builtin/elementwise.cu in the tests (CUTEGEN_BUILTIN_DIR): a plain-CUDA ReLU
 * with the same kind of declared space, small enough to compile in a second or two.
 * cutegen-space: CG_P_THREADS=128,256,512 CG_P_UNROLL=1,2,4 CG_P_WAVES=0,1
 * cutegen-start: CG_P_THREADS=256 CG_P_UNROLL=1 CG_P_WAVES=0
 * cutegen-stages: tile=CG_P_UNROLL,CG_P_THREADS grid=CG_P_WAVES
 */
#include <cutegen/kernel_abi.h>

#ifndef CG_P_THREADS
#define CG_P_THREADS 256
#endif
#ifndef CG_P_UNROLL
#define CG_P_UNROLL 1
#endif
#ifndef CG_P_WAVES
#define CG_P_WAVES 0
#endif

namespace kernel {

__global__ void relu_kernel(const float *x, float *y, long n)
{
	long stride = (long)gridDim.x * blockDim.x * CG_P_UNROLL;
	for (long base = (long)blockIdx.x * blockDim.x * CG_P_UNROLL; base < n; base += stride)
		for (int u = 0; u < CG_P_UNROLL; u++) {
			long i = base + u * (long)blockDim.x + threadIdx.x;
			if (i < n)
				y[i] = x[i] > 0.0f ? x[i] : 0.0f;
		}
}

} // namespace kernel

CUTEGEN_DECLARE_ABI();

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor *outputs,
				  int num_outputs, const double *scalars, int num_scalars,
				  void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
	if (num_inputs != 1 || num_outputs != 1)
		return 1;
	long n = 1;
	for (int d = 0; d < inputs[0].ndim; d++)
		n *= inputs[0].shape[d];
	long per_block = (long)CG_P_THREADS * CG_P_UNROLL;
	long blocks = (n + per_block - 1) / per_block;
	if (CG_P_WAVES && blocks > 132 * 8)
		blocks = 132 * 8;
	kernel::relu_kernel<<<(unsigned)blocks, CG_P_THREADS, 0, stream>>>(
		(const float *)inputs[0].data, (float *)outputs[0].data, n);
	return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
