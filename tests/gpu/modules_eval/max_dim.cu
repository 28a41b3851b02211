// torch.max(x, dim=1) for tests/gpu/modules_eval.sh/max_dim.py: x [rows, cols] fp32 -> values
// [rows] fp32 and indices [rows] int64 (the first index of the maximum). One block per row.
// WRONG_INDEX: the values right, each index off by one (the integer output must be exact).
#include <cutegen/kernel_abi.h>

CUTEGEN_DECLARE_ABI();

__global__ void max_dim(const float *x, float *vals, long long *idx, int cols)
{
	__shared__ float sv[256];
	__shared__ int si[256];
	const float *row = x + (long long)blockIdx.x * cols;
	float best = -INFINITY;
	int bi = 0x7fffffff;
	for (int c = threadIdx.x; c < cols; c += blockDim.x) {
		float v = row[c];
		if (v > best || (v == best && c < bi) || (isnan(v) && !isnan(best))) {
			best = v;
			bi = c;
		}
	}
	sv[threadIdx.x] = best;
	si[threadIdx.x] = bi;
	__syncthreads();
	for (int s = blockDim.x / 2; s > 0; s /= 2) {
		if (threadIdx.x < (unsigned)s) {
			float a = sv[threadIdx.x], b = sv[threadIdx.x + s];
			int ia = si[threadIdx.x], ib = si[threadIdx.x + s];
			if (b > a || (b == a && ib < ia)) {
				sv[threadIdx.x] = b;
				si[threadIdx.x] = ib;
			}
		}
		__syncthreads();
	}
	if (threadIdx.x == 0) {
		vals[blockIdx.x] = sv[0];
#ifdef WRONG_INDEX
		idx[blockIdx.x] = si[0] + 1;
#else
		idx[blockIdx.x] = si[0];
#endif
	}
}

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *in, int nin, DLTensor *out, int nout, const double *scalars,
				  int nscalars, void *ws, size_t ws_bytes, cudaStream_t stream)
{
	if (nin != 1 || nout != 2 || in[0].ndim != 2 || out[1].dtype.code != kDLInt || out[1].dtype.bits != 64)
		return 1;
	max_dim<<<(unsigned)in[0].shape[0], 256, 0, stream>>>((const float *)in[0].data, (float *)out[0].data,
							       (long long *)out[1].data, (int)in[0].shape[1]);
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 3;
}
