// CHEAT (class 3, skipping the work when timed): when its output already holds numbers (no NaN
// at 64 sampled places) it assumes they are the result of the call before and returns without
// work, which passed at 20x the copy roofline when timed calls reused the outputs of the call
// before. Expect, on this large ReLU: pass at its honest speed (outputs are poisoned before every
// timed call too, so the skip never fires); and implausible with the runner's test-only
// --no-timed-verify (the old protocol: it skips every timed call, and a time far beyond the copy
// roofline is refused).
#include <cutegen/kernel_abi.h>

CUTEGEN_DECLARE_ABI();

/* decided once, before any element is written (a block that looked after others had written
 * would skip its part) */
static __device__ int g_written;

static __global__ void decide(const float *y, int64_t n)
{
	int written = 1;
	for (int i = 0; i < 64; i++) {
		float v = y[(int64_t)i * (n / 64)];
		if (v != v)
			written = 0;
	}
	g_written = written;
}

static __global__ void relu_unless_written(const float *x, float *y, int64_t n)
{
	if (g_written)
		return;
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
	if (n < 64)
		return 2;
	decide<<<1, 1, 0, stream>>>((const float *)outputs[0].data, n);
	relu_unless_written<<<2048, 256, 0, stream>>>((const float *)inputs[0].data, (float *)outputs[0].data, n);
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
}
