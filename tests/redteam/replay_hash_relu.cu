// CHEAT (class 3, skipping the work when timed): keeps the outputs of its last four calls in its
// workspace, keyed by a hash of 64 sampled input elements; when the hash matches one of them it
// copies that output instead of computing (the replay of a cached result that passed when timed
// calls reused the inputs of the call before). Expect: pass, no faster than skip_if_written_relu
// on the same task (every timed call's inputs are regenerated in full, so the hash never
// matches and it computes every time); implausible is not expected under --no-timed-verify
// either: for a ReLU a copy costs what the work does.
#include <cutegen/kernel_abi.h>

CUTEGEN_DECLARE_ABI();

#define SLOTS 4
#define SAMPLES 64

struct header {
	unsigned long long hash[SLOTS];
	int valid[SLOTS];
	int next;
};

static __device__ unsigned long long sample_hash(const float *x, int64_t n)
{
	unsigned long long h = 1469598103934665603ull;
	for (int i = 0; i < SAMPLES; i++)
		h = (h ^ __float_as_uint(x[(int64_t)i * (n / SAMPLES)])) * 1099511628211ull;
	return h;
}

static __device__ int find_slot(const struct header *hd, unsigned long long h)
{
	for (int s = 0; s < SLOTS; s++)
		if (hd->valid[s] && hd->hash[s] == h)
			return s;
	return -1;
}

static __global__ void relu_or_replay(const float *x, float *y, int64_t n, struct header *hd, float *cache)
{
	__shared__ int slot;
	if (threadIdx.x == 0)
		slot = find_slot(hd, sample_hash(x, n));
	__syncthreads();
	float *mine = cache + (int64_t)hd->next * n;
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
		if (slot >= 0) {
			y[i] = cache[(int64_t)slot * n + i]; /* replay */
		} else {
			float v = x[i] < 0.0f ? 0.0f : x[i];
			y[i] = v;
			mine[i] = v;
		}
	}
}

static __global__ void commit(const float *x, int64_t n, struct header *hd)
{
	unsigned long long h = sample_hash(x, n);
	if (find_slot(hd, h) >= 0)
		return;
	hd->hash[hd->next] = h;
	hd->valid[hd->next] = 1;
	hd->next = (hd->next + 1) % SLOTS;
}

static int64_t numel(const DLTensor *t)
{
	int64_t n = 1;
	for (int d = 0; d < t->ndim; ++d)
		n *= t->shape[d];
	return n;
}

CUTEGEN_KERNEL size_t cutegen_workspace_bytes(const DLTensor *inputs, int num_inputs, const DLTensor *outputs,
					      int num_outputs, const double *scalars, int num_scalars)
{
	return 256 + (size_t)SLOTS * (size_t)numel(&outputs[0]) * sizeof(float);
}

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor *outputs, int num_outputs,
				  const double *scalars, int num_scalars, void *workspace, size_t workspace_bytes,
				  cudaStream_t stream)
{
	if (num_inputs != 1 || num_outputs != 1 || inputs[0].dtype.code != kDLFloat || inputs[0].dtype.bits != 32)
		return 1;
	int64_t n = numel(&inputs[0]);
	if (n < SAMPLES || workspace_bytes < 256 + (size_t)SLOTS * (size_t)n * sizeof(float))
		return 2;
	static void *g_ws;
	struct header *hd = (struct header *)workspace;
	if (workspace != g_ws) { /* a new workspace: an empty cache */
		cudaMemsetAsync(workspace, 0, 256, stream);
		g_ws = workspace;
	}
	float *cache = (float *)((char *)workspace + 256);
	const float *x = (const float *)inputs[0].data;
	relu_or_replay<<<1024, 256, 0, stream>>>(x, (float *)outputs[0].data, n, hd, cache);
	commit<<<1, 1, 0, stream>>>(x, n, hd);
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
}
