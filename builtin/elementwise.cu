/*
 * Elementwise y = act(x) (ops elementwise and scalar_mul) for the cutegen kernel contract
 * (docs/kernel-abi.md): the builtin family template generalizing kernels/relu_fp32.cu.
 *
 * cutegen-space: CG_P_THREADS=128,256,512 CG_P_UNROLL=1,2,4,8 CG_P_WAVES=0,1,2,4
 * cutegen-start: CG_P_THREADS=128 CG_P_UNROLL=1 CG_P_WAVES=0
 * cutegen-stages: tile=CG_P_UNROLL,CG_P_THREADS grid=CG_P_WAVES
 *
 * Inputs: x of any shape, CG_T_IN; output: y of the same shape, CG_T_OUT (each float,
 * cute::half_t or cute::bfloat16_t; CG_T_OUT = CG_T_IN by default); the math is done in fp32
 * with PyTorch's formulas and rounded once to CG_T_OUT, and NaN propagates as in PyTorch. CG_ACT picks the functor (Relu ... MinGptGelu, ScalarMul);
 * its scalars are read in task_scalars() order, PyTorch's defaults when absent.
 *
 * The tensor is flattened to 1-D. A tile is CG_P_THREADS x CG_P_UNROLL vectors of VEC
 * elements (16 bytes of the wider of the two types), moved by TiledCopies of UniversalCopy
 * atoms, one for x and one for y with the same thread and value layout: every thread issues
 * CG_P_UNROLL independent loads, applies the functor in registers and issues as many stores,
 * predicated per vector by an identity tensor. CG_P_WAVES = 0 launches one CTA per
 * tile; otherwise a persistent grid of WAVES x (resident CTAs per SM x SMs) CTAs loops over
 * the tiles. The body is the largest multiple of VEC elements; the last CTA does the
 * 0..VEC-1 leftover elements with scalar copies, so any numel works. Misaligned pointers
 * take the VEC = 1 instantiation.
 * Not for: broadcasting, strided inputs, several inputs, fp8.
 */
#include <cutegen/kernel_abi.h>

#include <cute/tensor.hpp>

CUTEGEN_DECLARE_ABI();

#ifndef CG_T_IN
#define CG_T_IN float
#endif
#ifndef CG_T_OUT
#define CG_T_OUT CG_T_IN
#endif
#ifndef CG_ACT
#define CG_ACT Relu
#endif
#ifndef CG_P_THREADS
#define CG_P_THREADS 256
#endif
#ifndef CG_P_UNROLL
#define CG_P_UNROLL 4
#endif
#ifndef CG_P_WAVES
#define CG_P_WAVES 0
#endif

namespace kernel {

using namespace cute;

/*
 * Activation functors: `float operator()(float) const` and `from_scalars()`, which reads the
 * parameters (PyTorch's names and defaults) from the task's scalar arguments. Comparisons
 * are written so that a NaN input takes the branch that returns NaN, as PyTorch does.
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

/*
 * sigmoid(x) = 1 / (1 + exp(-x)) and silu(x) = x sigmoid(x), written with e = exp(-|x|) <= 1
 * so the divisor 1 + e stays in [1, 2]: x >= 0 gives 1 / (1 + e), x < 0 gives e / (1 + e).
 * As PyTorch writes them, exp(-x) reaches 2^126 and beyond for x below -87 (inf below -88),
 * where the IEEE division leaves its fast path: on 64 N(0, 1) inputs, where every warp has such
 * a lane, bf16 SiLU took 0.236 ms against 0.138 ms on N(0, 1) (8192 x 12288 on an H100,
 * bench/results/2026-12-05_h100_class_table.json).
 * With the divisor in [1, 2] the fast divide (__fdividef, 2 ulp there) is exact enough: within
 * a few ulp of the double-precision value everywhere, the limits kept (sigmoid(-inf) = 0,
 * silu(+inf) = inf, silu(-inf) = -inf * 0 = NaN as in PyTorch, NaN in NaN out).
 */
__device__ __forceinline__ float sigmoid_times(float x, float num_pos)
{
	float e = expf(-fabsf(x));
	return __fdividef(x >= 0.0f ? num_pos : num_pos * e, 1.0f + e);
}

struct Sigmoid {
	static Sigmoid from_scalars(const double *, int) { return {}; }
	__device__ float operator()(float x) const
	{
		// NaN: e is NaN, and so is the quotient
		return sigmoid_times(x, 1.0f);
	}
};

struct Tanh {
	static Tanh from_scalars(const double *, int) { return {}; }
	__device__ float operator()(float x) const { return tanhf(x); }
};

struct Swish {
	static Swish from_scalars(const double *, int) { return {}; }
	// PyTorch's silu, x / (1 + exp(-x)), as x / (1 + e) or x e / (1 + e) (sigmoid_times)
	__device__ float operator()(float x) const { return sigmoid_times(x, x); }
};

struct GeluErf {
	static GeluErf from_scalars(const double *, int) { return {}; }
	__device__ float operator()(float x) const { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }
};

/* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))); x^3 overflowing gives tanh(+-inf) = +-1. */
__device__ __forceinline__ float gelu_tanh(float x)
{
	constexpr float kSqrt2OverPi = 0.79788456080286535588f;
	float inner = kSqrt2OverPi * (x + 0.044715f * (x * x * x));
	return 0.5f * x * (1.0f + tanhf(inner));
}

struct GeluTanh {
	static GeluTanh from_scalars(const double *, int) { return {}; }
	__device__ float operator()(float x) const { return gelu_tanh(x); }
};

/* KernelBench 88's NewGELU: the same formula as GeluTanh. */
struct MinGptGelu {
	static MinGptGelu from_scalars(const double *, int) { return {}; }
	__device__ float operator()(float x) const { return gelu_tanh(x); }
};

/*
 * exp(x) - 1 for x <= 0 (PyTorch now calls expm1f). expm1f's extra accuracy near 0 costs
 * nearly twice the instructions of expf and left ELU and SELU compute-bound (0.94 of the
 * roofline); here the subtraction is exact and the error stays within expf's ulp of 1
 * (6e-8 absolute, 1e-7 after SELU's scale): within a fifth of the elementwise tolerance
 * (docs/evaluation.md).
 */
__device__ __forceinline__ float exp_minus_one(float x) { return expf(x) - 1.0f; }

struct Selu {
	static Selu from_scalars(const double *, int) { return {}; }
	__device__ float operator()(float x) const
	{
		constexpr float kAlpha = 1.6732632423543772848170429916717f;
		constexpr float kScale = 1.0507009873554804934193349852946f;
		return kScale * (x > 0.0f ? x : kAlpha * exp_minus_one(x));
	}
};

struct HardSigmoid {
	static HardSigmoid from_scalars(const double *, int) { return {}; }
	// relu6(x + 3) / 6 written with comparisons (fminf/fmaxf would swallow a NaN).
	__device__ float operator()(float x) const
	{
		return x <= -3.0f ? 0.0f : (x >= 3.0f ? 1.0f : (x + 3.0f) / 6.0f);
	}
};

struct Softplus {
	float beta, inv_beta, threshold;
	static Softplus from_scalars(const double *s, int n)
	{
		float beta = n >= 1 ? (float)s[0] : 1.0f;
		return {beta, 1.0f / beta, n >= 2 ? (float)s[1] : 20.0f};
	}
	// x when beta x > threshold, else log1p(exp(beta x)) / beta, computed on one path as
	// max(z, 0) + log1p(exp(-|z|)) so a large threshold cannot overflow exp; a NaN passes
	// through the log1p term. One path and no division: 60% of the instructions of two
	// branches and a divide, which made this op compute-bound (0.86 of the roofline).
	__device__ float operator()(float x) const
	{
		float z = beta * x;
		if (z > threshold)
			return x;
		return (fmaxf(z, 0.0f) + log1pf(expf(-fabsf(z)))) * inv_beta;
	}
};

struct Softsign {
	static Softsign from_scalars(const double *, int) { return {}; }
	__device__ float operator()(float x) const { return x / (1.0f + fabsf(x)); }
};

struct Elu {
	float alpha;
	static Elu from_scalars(const double *s, int n) { return {n >= 1 ? (float)s[0] : 1.0f}; }
	__device__ float operator()(float x) const { return x > 0.0f ? x : alpha * exp_minus_one(x); }
};

struct HardTanh {
	float min_val, max_val;
	static HardTanh from_scalars(const double *s, int n)
	{
		return {n >= 1 ? (float)s[0] : -1.0f, n >= 2 ? (float)s[1] : 1.0f};
	}
	__device__ float operator()(float x) const
	{
		return x < min_val ? min_val : (x > max_val ? max_val : x);
	}
};

struct ScalarMul {
	float s;
	static ScalarMul from_scalars(const double *s, int n) { return {n >= 1 ? (float)s[0] : 1.0f}; }
	__device__ float operator()(float x) const { return x * s; }
};

template <class TI, class TO, class CopyIn, class CopyOut, class CtaTiler, class Act>
__global__ static __launch_bounds__(decltype(size(CopyIn{}))::value)
void elementwise_device(int64_t n, int64_t n_body, int64_t n_tiles, TI const *x, TO *y,
			CtaTiler cta_tiler, CopyIn copy_in, CopyOut copy_out, Act act)
{
	//
	// Static preconditions
	//
	CUTE_STATIC_ASSERT_V(rank(cta_tiler) == Int<1>{});                        // (BLK)
	CUTE_STATIC_ASSERT_V(size(cta_tiler) % size(copy_in) == Int<0>{});        // whole copy tiles
	CUTE_STATIC_ASSERT_V(size(copy_in) == size(copy_out));                    // NumThreads

	//
	// Full tensors: the vectorizable body [0, n_body) of the flattened x and y
	//
	Tensor mX = make_tensor(make_gmem_ptr(x), make_shape(n_body));           // (N_BODY)
	Tensor mY = make_tensor(make_gmem_ptr(y), make_shape(n_body));           // (N_BODY)
	Tensor cXY = make_identity_tensor(shape(mX));                            // (N_BODY) -> i

	ThrCopy thr_in = copy_in.get_slice(threadIdx.x);
	ThrCopy thr_out = copy_out.get_slice(threadIdx.x);

	//
	// Tiles: one per CTA (n_tiles == gridDim.x) or a persistent grid striding over them
	//
	for (int64_t tile = blockIdx.x; tile < n_tiles; tile += gridDim.x) {
		auto cta_coord = make_coord(tile);
		Tensor gX = local_tile(mX, cta_tiler, cta_coord);                // (BLK)
		Tensor gY = local_tile(mY, cta_tiler, cta_coord);                // (BLK)
		Tensor cX = local_tile(cXY, cta_tiler, cta_coord);               // (BLK) -> i

		// Copy partitions: VEC contiguous elements per atom, CPY_N atoms per thread
		Tensor tXgX = thr_in.partition_S(gX);                            // (CPY,CPY_N)
		Tensor tYgY = thr_out.partition_D(gY);                           // (CPY,CPY_N)
		Tensor tXcX = thr_in.partition_S(cX);                            // (CPY,CPY_N) -> i
		CUTE_STATIC_ASSERT_V(size(tXgX) == size(tYgY));                  // the same elements
		Tensor tXpX = make_tensor<bool>(make_shape(size<1>(tXgX)));      // (CPY_N)
		CUTE_UNROLL
		for (int v = 0; v < size(tXpX); ++v)
			tXpX(v) = get<0>(tXcX(0, v)) < n_body;  // n_body % VEC == 0: all in or out

		// Load, apply in fp32, round once, store
		Tensor tXrX = make_fragment_like(tXgX);                          // (CPY,CPY_N)
		Tensor tYrY = make_fragment_like(tYgY);                          // (CPY,CPY_N)
		copy_if(copy_in, tXpX, tXgX, tXrX);
		CUTE_UNROLL
		for (int i = 0; i < size(tXrX); ++i)
			tYrY(i) = TO(act(float(tXrX(i))));
		copy_if(copy_out, tXpX, tYrY, tYgY);
	}

	//
	// Tail: the last CTA does the n - n_body < VEC leftover elements one by one
	//
	if (blockIdx.x == gridDim.x - 1 && n_body < n) {
		Tensor mXt = make_tensor(make_gmem_ptr(x + n_body), make_shape(n - n_body)); // (TAIL)
		Tensor mYt = make_tensor(make_gmem_ptr(y + n_body), make_shape(n - n_body)); // (TAIL)
		Tensor cT = make_identity_tensor(shape(mXt));                              // (TAIL) -> i
		auto thr_layout = Layout<Shape<decltype(size(copy_in))>>{};
		Tensor tTgX = local_partition(mXt, thr_layout, threadIdx.x);               // (1)
		Tensor tTgY = local_partition(mYt, thr_layout, threadIdx.x);               // (1)
		Tensor tTcT = local_partition(cT, thr_layout, threadIdx.x);                // (1) -> i
		CUTE_UNROLL
		for (int i = 0; i < size(tTgX); ++i)
			if (elem_less(tTcT(i), shape(mXt)))
				tTgY(i) = TO(act(float(tTgX(i))));
	}
}

/*
 * The configuration, from the task and the parameters. VEC elements make one 128-bit access
 * (or 1 for misaligned pointers); kThreads threads; each thread moves kUnroll vectors per
 * tile; kWaves = 0 is one CTA per tile, else the persistent grid's waves.
 */
using TIn = CG_T_IN;
using TOut = CG_T_OUT;
using Activation = CG_ACT;
constexpr int kThreads = CG_P_THREADS;
constexpr int kUnroll = CG_P_UNROLL;
constexpr int kWaves = CG_P_WAVES;
constexpr int kVec = 16 / (sizeof(TIn) > sizeof(TOut) ? sizeof(TIn) : sizeof(TOut));

template <class T>
constexpr bool kFloatType = std::is_same<T, float>::value || std::is_same<T, cute::half_t>::value ||
			    std::is_same<T, cute::bfloat16_t>::value;
static_assert(kFloatType<TIn> && kFloatType<TOut>,
	      "elementwise: CG_T_IN and CG_T_OUT must be float, cute::half_t or cute::bfloat16_t");
static_assert(kThreads == 128 || kThreads == 256 || kThreads == 512,
	      "elementwise: CG_P_THREADS must be 128, 256 or 512");
static_assert(kUnroll == 1 || kUnroll == 2 || kUnroll == 4 || kUnroll == 8,
	      "elementwise: CG_P_UNROLL must be 1, 2, 4 or 8");
static_assert(kWaves == 0 || kWaves == 1 || kWaves == 2 || kWaves == 4,
	      "elementwise: CG_P_WAVES must be 0, 1, 2 or 4");

template <int VEC>
int launch_elementwise(int64_t n, TIn const *x, TOut *y, Activation act, cudaStream_t stream)
{
	using CopyIn = decltype(make_tiled_copy(Copy_Atom<UniversalCopy<cute::uint_byte_t<sizeof(TIn) * VEC>>, TIn>{},
						Layout<Shape<Int<kThreads>>>{},   // threads
						Layout<Shape<Int<VEC>>>{}));       // values per atom
	using CopyOut = decltype(make_tiled_copy(Copy_Atom<UniversalCopy<cute::uint_byte_t<sizeof(TOut) * VEC>>, TOut>{},
						 Layout<Shape<Int<kThreads>>>{},
						 Layout<Shape<Int<VEC>>>{}));
	using CtaTiler = Shape<Int<kThreads * VEC * kUnroll>>;                 // (BLK)
	auto kernel = elementwise_device<TIn, TOut, CopyIn, CopyOut, CtaTiler, Activation>;

	int64_t n_body = n / VEC * VEC;
	int64_t n_tiles = ceil_div(n_body, int64_t(kThreads * VEC * kUnroll));
	int64_t blocks = n_tiles;
	if (kWaves > 0) {
		int dev = 0, sms = 0, per_sm = 0;
		if (cudaGetDevice(&dev) != cudaSuccess ||
		    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
		    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0) != cudaSuccess)
			return 3;
		blocks = std::min(blocks, int64_t(kWaves) * std::max(per_sm, 1) * std::max(sms, 1));
	}
	if (blocks == 0)
		blocks = 1;  // n < VEC: one CTA for the tail alone
	if (blocks > INT32_MAX)
		return 2;
	kernel<<<dim3((unsigned)blocks), dim3(kThreads), 0, stream>>>(
		n, n_body, n_tiles, x, y, CtaTiler{}, CopyIn{}, CopyOut{}, act);
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
}

int dispatch(int64_t n, void const *x, void *y, Activation act, cudaStream_t stream)
{
	if ((uintptr_t)x % (sizeof(TIn) * kVec) == 0 && (uintptr_t)y % (sizeof(TOut) * kVec) == 0)
		return launch_elementwise<kVec>(n, (TIn const *)x, (TOut *)y, act, stream);
	return launch_elementwise<1>(n, (TIn const *)x, (TOut *)y, act, stream);
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

/* Whether a DLPack dtype is T. */
template <class T>
bool is_t(DLDataType d)
{
	if (d.lanes != 1)
		return false;
	if (std::is_same<T, float>::value)
		return d.code == kDLFloat && d.bits == 32;
	if (std::is_same<T, cute::half_t>::value)
		return d.code == kDLFloat && d.bits == 16;
	return d.code == kDLBfloat && d.bits == 16;
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
	if (!is_t<TIn>(x->dtype) || !is_t<TOut>(y->dtype))
		return 1;
	if (n == 0)
		return 0;
	Activation act = Activation::from_scalars(scalars, scalars != nullptr ? num_scalars : 0);
	const void *xp = (const char *)x->data + x->byte_offset;
	void *yp = (char *)y->data + y->byte_offset;
	return dispatch(n, xp, yp, act, stream);
}
