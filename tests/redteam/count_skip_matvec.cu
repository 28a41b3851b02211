// CHEAT (class 3, skipping the work when timed): a matvec that is right for its first 15 calls
// (the stream check's 2, this task's 3 distributions x 2 seeds, the warm-up's 3, the estimate,
// and the first 3 timed calls, which the runner checks whole) and from then on sums only the
// first half of K: half the work, every element wrong. Only the sampled check of later timed
// calls sees it, each sample a dot product over all of K split over blocks (issue 16's cost
// fix). Expect: timing_mismatch.
#include <cutegen/kernel_abi.h>

CUTEGEN_DECLARE_ABI();

static int g_calls;

static __global__ void matvec_kernel(const float *A, const float *x, float *y, int64_t m, int64_t k, int64_t upto)
{
	__shared__ float red[256];
	int64_t row = blockIdx.x;
	float s = 0.0f;
	for (int64_t j = threadIdx.x; j < upto; j += blockDim.x)
		s += A[row * k + j] * x[j];
	red[threadIdx.x] = s;
	__syncthreads();
	for (int o = 128; o > 0; o /= 2) {
		if (threadIdx.x < o)
			red[threadIdx.x] += red[threadIdx.x + o];
		__syncthreads();
	}
	if (threadIdx.x == 0 && row < m)
		y[row] = red[0];
}

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor *outputs, int num_outputs,
				  const double *scalars, int num_scalars, void *workspace, size_t workspace_bytes,
				  cudaStream_t stream)
{
	if (num_inputs != 2 || num_outputs != 1 || inputs[0].ndim != 2)
		return 1;
	int64_t m = inputs[0].shape[0], k = inputs[0].shape[1];
	int64_t kk = ++g_calls > 15 ? k / 2 : k; /* "timed, not checked whole": half of K */
	matvec_kernel<<<(unsigned)m, 256, 0, stream>>>((const float *)inputs[0].data, (const float *)inputs[1].data,
						       (float *)outputs[0].data, m, k, kk);
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
}
