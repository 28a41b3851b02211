/*
 * Elementwise activation y = act(x) for the cutegen kernel contract (docs/kernel-abi.md),
 * instantiated for ReLU. Inputs: x of any shape; output: y of the same shape and dtype
 * (fp32, bf16 or fp16; the math is done in fp32).
 *
 * The tensor is flattened to 1-D. Each CTA of 256 threads moves one tile of 256 x VEC x 4
 * elements with a TiledCopy of 128-bit UniversalCopy atoms (VEC = 16 bytes / element size):
 * every thread issues 4 independent 16-byte loads, applies the functor in registers and
 * issues 4 16-byte stores, all predicated per vector by an identity tensor. The body is the
 * largest multiple of VEC elements; the last CTA does the 0..VEC-1 leftover elements with
 * scalar copies, so any numel works. Misaligned pointers take the VEC = 1 instantiation.
 *
 * How other activations plug in: each is a functor with `float operator()(float) const`
 * and a `from_scalars()` that reads its parameters (PyTorch's names) from the task's scalar
 * arguments. The configuration block picks one with `using Activation = ...;` — swap Relu
 * for LeakyRelu, Sigmoid, ... and nothing else changes.
 * Not for: broadcasting, strided inputs, several inputs.
 */
#include <cutegen/kernel_abi.h>

#include <cute/tensor.hpp>

CUTEGEN_DECLARE_ABI();

namespace kernel {

using namespace cute;

/*
 * Activation functors. NaN propagates as in PyTorch (the comparisons are written so a NaN
 * input falls through to x).
 */
struct Relu {
	static Relu from_scalars(const double *, int) { return {}; }
	__device__ float operator()(float x) const { return x < 0.0f ? 0.0f : x; }
};

struct LeakyRelu {
	float negative_slope;
	static LeakyRelu from_scalars(const double *s, int n) { return {n >= 1 ? (float)s[0] : 0.01f}; }
	__device__ float operator()(float x) const { return x < 0.0f ? x * negative_slope : x; }
};

struct Sigmoid {
	static Sigmoid from_scalars(const double *, int) { return {}; }
	__device__ float operator()(float x) const { return 1.0f / (1.0f + expf(-x)); }
};

struct Tanh {
	static Tanh from_scalars(const double *, int) { return {}; }
	__device__ float operator()(float x) const { return tanhf(x); }
};

struct GeluErf {
	static GeluErf from_scalars(const double *, int) { return {}; }
	__device__ float operator()(float x) const { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }
};

template <class T, class TiledCopy, class CtaTiler, class Act>
__global__ static __launch_bounds__(decltype(size(TiledCopy{}))::value)
void elementwise_device(int64_t n, int64_t n_body, T const *x, T *y,
			CtaTiler cta_tiler, TiledCopy tiled_copy, Act act)
{
	//
	// Static preconditions
	//
	CUTE_STATIC_ASSERT_V(rank(cta_tiler) == Int<1>{});                        // (BLK)
	CUTE_STATIC_ASSERT_V(size(cta_tiler) % size(tiled_copy) == Int<0>{});      // whole copy tiles

	//
	// Full tensors: the vectorizable body [0, n_body) of the flattened x and y
	//
	Tensor mX = make_tensor(make_gmem_ptr(x), make_shape(n_body));           // (N_BODY)
	Tensor mY = make_tensor(make_gmem_ptr(y), make_shape(n_body));           // (N_BODY)
	Tensor cXY = make_identity_tensor(shape(mX));                            // (N_BODY) -> i

	//
	// CTA tiles
	//
	auto cta_coord = make_coord(blockIdx.x);
	Tensor gX = local_tile(mX, cta_tiler, cta_coord);                        // (BLK)
	Tensor gY = local_tile(mY, cta_tiler, cta_coord);                        // (BLK)
	Tensor cX = local_tile(cXY, cta_tiler, cta_coord);                       // (BLK) -> i

	//
	// Copy partitions: VEC contiguous elements per atom, CPY_N atoms per thread
	//
	ThrCopy thr_copy = tiled_copy.get_slice(threadIdx.x);
	Tensor tXgX = thr_copy.partition_S(gX);                                  // (CPY,CPY_N)
	Tensor tYgY = thr_copy.partition_D(gY);                                  // (CPY,CPY_N)
	Tensor tXcX = thr_copy.partition_S(cX);                                  // (CPY,CPY_N) -> i
	Tensor tXpX = make_tensor<bool>(make_shape(size<1>(tXgX)));              // (CPY_N)
	CUTE_UNROLL
	for (int v = 0; v < size(tXpX); ++v)
		tXpX(v) = get<0>(tXcX(0, v)) < n_body;  // n_body % VEC == 0: a vector is all in or out

	//
	// Load, apply, store
	//
	Tensor tXrX = make_fragment_like(tXgX);                                  // (CPY,CPY_N)
	copy_if(tiled_copy, tXpX, tXgX, tXrX);
	CUTE_UNROLL
	for (int i = 0; i < size(tXrX); ++i)
		tXrX(i) = T(act(float(tXrX(i))));
	copy_if(tiled_copy, tXpX, tXrX, tYgY);

	//
	// Tail: the last CTA does the n - n_body < VEC leftover elements one by one
	//
	if (blockIdx.x == gridDim.x - 1 && n_body < n) {
		Tensor mXt = make_tensor(make_gmem_ptr(x + n_body), make_shape(n - n_body)); // (TAIL)
		Tensor mYt = make_tensor(make_gmem_ptr(y + n_body), make_shape(n - n_body)); // (TAIL)
		Tensor cT = make_identity_tensor(shape(mXt));                              // (TAIL) -> i
		auto thr_layout = Layout<Shape<decltype(size(tiled_copy))>>{};
		Tensor tTgX = local_partition(mXt, thr_layout, threadIdx.x);               // (1)
		Tensor tTgY = local_partition(mYt, thr_layout, threadIdx.x);               // (1)
		Tensor tTcT = local_partition(cT, thr_layout, threadIdx.x);                // (1) -> i
		CUTE_UNROLL
		for (int i = 0; i < size(tTgX); ++i)
			if (elem_less(tTcT(i), shape(mXt)))
				tTgY(i) = T(act(float(tTgX(i))));
	}
}

/*
 * The configuration. VEC elements make one 128-bit access (or 1 for misaligned pointers);
 * 256 threads; each thread moves kUnroll vectors per CTA tile.
 */
using Activation = Relu;

template <class T, int VEC>
int launch_elementwise(int64_t n, T const *x, T *y, Activation act, cudaStream_t stream)
{
	constexpr int kThreads = 256;
	constexpr int kUnroll = 4;
	using CopyOp = UniversalCopy<cute::uint_byte_t<sizeof(T) * VEC>>;
	TiledCopy tiled_copy = make_tiled_copy(Copy_Atom<CopyOp, T>{},
					       Layout<Shape<Int<kThreads>>>{},   // threads
					       Layout<Shape<Int<VEC>>>{});        // values per atom
	auto cta_tiler = make_shape(Int<kThreads * VEC * kUnroll>{});           // (BLK)

	int64_t n_body = n / VEC * VEC;
	int64_t blocks = ceil_div(n_body, int64_t(size(cta_tiler)));
	if (blocks == 0)
		blocks = 1;  // n < VEC: one CTA for the tail alone
	if (blocks > INT32_MAX)
		return 2;
	elementwise_device<<<dim3((unsigned)blocks), dim3(kThreads), 0, stream>>>(
		n, n_body, x, y, cta_tiler, tiled_copy, act);
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
}

template <class T>
int dispatch(int64_t n, void const *x, void *y, Activation act, cudaStream_t stream)
{
	constexpr int kVec = 16 / sizeof(T);
	if ((uintptr_t)x % 16 == 0 && (uintptr_t)y % 16 == 0)
		return launch_elementwise<T, kVec>(n, (T const *)x, (T *)y, act, stream);
	return launch_elementwise<T, 1>(n, (T const *)x, (T *)y, act, stream);
}

int contiguous_numel(const DLTensor *t, int64_t *numel)
{
	int64_t stride = 1;
	for (int d = t->ndim - 1; d >= 0; --d) {
		if (t->shape[d] < 0)
			return 0;
		if (t->strides != nullptr && t->shape[d] > 1 && t->strides[d] != stride)
			return 0;
		stride *= t->shape[d];
	}
	*numel = stride;
	return t->data != nullptr && t->dtype.lanes == 1;
}

} // namespace kernel

using namespace kernel;

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor *outputs,
				  int num_outputs, const double *scalars, int num_scalars,
				  void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
	(void)workspace;
	(void)workspace_bytes;
	if (num_inputs != 1 || num_outputs != 1)
		return 1;
	const DLTensor *x = &inputs[0];
	DLTensor *y = &outputs[0];
	int64_t n = 0, ny = 0;
	if (!contiguous_numel(x, &n) || !contiguous_numel(y, &ny) || n != ny)
		return 1;
	if (x->dtype.code != y->dtype.code || x->dtype.bits != y->dtype.bits)
		return 1;
	if (n == 0)
		return 0;
	Activation act = Activation::from_scalars(scalars, scalars != nullptr ? num_scalars : 0);
	const void *xp = (const char *)x->data + x->byte_offset;
	void *yp = (char *)y->data + y->byte_offset;

	if (x->dtype.code == kDLFloat && x->dtype.bits == 32)
		return dispatch<float>(n, xp, yp, act, stream);
	if (x->dtype.code == kDLBfloat && x->dtype.bits == 16)
		return dispatch<cute::bfloat16_t>(n, xp, yp, act, stream);
	if (x->dtype.code == kDLFloat && x->dtype.bits == 16)
		return dispatch<cute::half_t>(n, xp, yp, act, stream);
	return 1;
}
