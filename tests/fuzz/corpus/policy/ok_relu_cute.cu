// A small, clean CuTe elementwise ReLU that follows the cutegen kernel ABI (y = max(x, 0) over
// one fp32 tensor of any shape). Test data for the build module and the policy check.
#include <cutegen/kernel_abi.h>

#include <cute/tensor.hpp>

using namespace cute;

// Each CTA owns one tile of kTile elements; thread t handles elements t, t+kThreads, ...
template <int kThreads, int kTile>
__global__ void relu_kernel(const float *x, float *y, int n)
{
	CUTE_STATIC_ASSERT(kTile % kThreads == 0, "the tile must split evenly over the threads");
	Tensor mX = make_tensor(make_gmem_ptr(x), make_shape(n));             // (N)
	Tensor mY = make_tensor(make_gmem_ptr(y), make_shape(n));             // (N)
	Tensor cX = make_identity_tensor(make_shape(n));                      // (N) -> coord
	auto tiler = make_shape(Int<kTile>{});
	Tensor gX = local_tile(mX, tiler, make_coord(blockIdx.x));            // (TILE)
	Tensor gY = local_tile(mY, tiler, make_coord(blockIdx.x));            // (TILE)
	Tensor gC = local_tile(cX, tiler, make_coord(blockIdx.x));            // (TILE)
	auto thr = Layout<Shape<Int<kThreads>>>{};
	Tensor tX = local_partition(gX, thr, threadIdx.x);                    // (TILE/THR)
	Tensor tY = local_partition(gY, thr, threadIdx.x);                    // (TILE/THR)
	Tensor tC = local_partition(gC, thr, threadIdx.x);                    // (TILE/THR)
	CUTE_UNROLL
	for (int i = 0; i < size(tX); ++i) {
		if (elem_less(tC(i), make_shape(n))) {
			float v = tX(i);
			tY(i) = v > 0.0f ? v : 0.0f;
		}
	}
}

CUTEGEN_DECLARE_ABI();

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor *outputs,
				  int num_outputs, const double *scalars, int num_scalars,
				  void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
	(void)scalars, (void)num_scalars, (void)workspace, (void)workspace_bytes;
	if (num_inputs != 1 || num_outputs != 1)
		return 1;
	const DLTensor &in = inputs[0];
	const DLTensor &out = outputs[0];
	if (in.dtype.code != kDLFloat || in.dtype.bits != 32 || out.dtype.code != kDLFloat ||
	    out.dtype.bits != 32 || in.ndim != out.ndim)
		return 2;
	int64_t n = 1;
	for (int d = 0; d < in.ndim; d++) {
		if (in.shape[d] != out.shape[d])
			return 3;
		n *= in.shape[d];
	}
	if (n == 0)
		return 0;
	if (n > INT32_MAX)
		return 4;
	constexpr int kThreads = 256, kTile = 1024;
	const float *x = reinterpret_cast<const float *>(static_cast<const char *>(in.data) + in.byte_offset);
	float *y = reinterpret_cast<float *>(static_cast<char *>(out.data) + out.byte_offset);
	int blocks = (int)((n + kTile - 1) / kTile);
	relu_kernel<kThreads, kTile><<<blocks, kThreads, 0, stream>>>(x, y, (int)n);
	return cudaGetLastError() == cudaSuccess ? 0 : 5;
}
