// LayerNorm over the last dimension (one block per row, fp32, two passes over the row held in
// registers) for tests/gpu/modules_eval.sh/layernorm.py: x [rows, 256], weight [256], bias [256].
#include <cutegen/kernel_abi.h>

CUTEGEN_DECLARE_ABI();

static __device__ __forceinline__ float block_sum(float v, float *sh)
{
	for (int o = 16; o > 0; o /= 2)
		v += __shfl_down_sync(0xffffffffu, v, o);
	if ((threadIdx.x & 31) == 0)
		sh[threadIdx.x / 32] = v;
	__syncthreads();
	float t = 0;
	for (int k = 0; k < (int)(blockDim.x / 32); k++)
		t += sh[k];
	__syncthreads();
	return t;
}

__global__ void layernorm(const float *x, const float *w, const float *b, float *y, int cols)
{
	__shared__ float sh[32];
	const float *xr = x + (long long)blockIdx.x * cols;
	float v = threadIdx.x < (unsigned)cols ? xr[threadIdx.x] : 0.f;
	float mean = block_sum(v, sh) / cols;
	float d = threadIdx.x < (unsigned)cols ? v - mean : 0.f;
	float var = block_sum(d * d, sh) / cols;
	float inv = rsqrtf(var + 1e-5f);
	if (threadIdx.x < (unsigned)cols)
		y[(long long)blockIdx.x * cols + threadIdx.x] = d * inv * w[threadIdx.x] + b[threadIdx.x];
}

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *in, int nin, DLTensor *out, int nout, const double *scalars,
				  int nscalars, void *ws, size_t ws_bytes, cudaStream_t stream)
{
	if (nin != 3 || nout != 1 || in[0].ndim != 2 || in[0].shape[1] != 256)
		return 1;
	layernorm<<<(unsigned)in[0].shape[0], 256, 0, stream>>>((const float *)in[0].data,
								(const float *)in[1].data, (const float *)in[2].data,
								(float *)out[0].data, 256);
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 3;
}
