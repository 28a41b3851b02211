/*
 * Matrix-vector product y = A @ x (op matvec) with fp32 FMA accumulation, for the cutegen
 * kernel contract (docs/kernel-abi.md). A and x are CG_T_IN (float, cute::half_t or
 * cute::bfloat16_t), y is CG_T_OUT (one of the same; CG_T_IN by default): 16-bit elements
 * are widened to fp32 as they are loaded and the row's sum is rounded once to y. Purely
 * bandwidth-bound: every element of A is read once (KernelBench 4: M = 2048, K = 1048576,
 * 8 GB of A).
 *
 * cutegen-space: CG_P_THREADS=128,256,512 CG_P_ROWS=1,2,4 CG_P_SPLIT=1,2,4,8
 * cutegen-start: CG_P_THREADS=256 CG_P_ROWS=1 CG_P_SPLIT=1
 * cutegen-stages: split=CG_P_SPLIT tile=CG_P_THREADS,CG_P_ROWS
 *
 * Inputs A [M,K], x [K,1]; output y [M,1]. CTA (b, s) of a (ceil(M / ROWS), SPLIT) grid
 * owns rows b*ROWS .. b*ROWS+ROWS-1 and the s-th of SPLIT chunks of K. Its chunk is cut into
 * tiles of THREADS x 4 vectors (16 bytes each) moved by a TiledCopy of 128-bit atoms; per
 * tile a thread loads its 4 vectors of x once and its 4 vectors of each of the ROWS rows,
 * and folds them into per-element accumulators with fmaf; loads are predicated by an
 * identity tensor against the chunk's end (the predicated-out elements read as 0). The
 * accumulators are summed per thread, over the warp by shuffles and over the CTA through
 * shared memory, always in the same order: the result is deterministic.
 * SPLIT = 1 writes y directly. SPLIT > 1 writes the partial sums to the workspace
 * ([SPLIT, M] floats, cutegen_workspace_bytes) and a second kernel adds the SPLIT partials
 * of each row in order into y (no atomics).
 * Vectors are 16 bytes (4 floats, 8 16-bit values) when K is a multiple of them and A and x
 * are 16-byte aligned, else 1 element.
 * Not for: fp8, a batch of vectors (x with more than one column).
 */
#include <cutegen/kernel_abi.h>

#include <cute/tensor.hpp>

CUTEGEN_DECLARE_ABI();

#ifndef CG_P_THREADS
#define CG_P_THREADS 256
#endif
#ifndef CG_P_ROWS
#define CG_P_ROWS 1
#endif
#ifndef CG_P_SPLIT
#define CG_P_SPLIT 1
#endif
#ifndef CG_T_IN
#define CG_T_IN float
#endif
#ifndef CG_T_OUT
#define CG_T_OUT CG_T_IN
#endif

namespace kernel {

using namespace cute;

template <int kThreads, int kRows, class TA, class TO, class TiledCopy, class BlkTiler>
__global__ static __launch_bounds__(kThreads)
void matvec_device(int m, int k, int chunk, TA const *a, TA const *x, TO *out,
		   BlkTiler blk_tiler, TiledCopy tiled_copy)
{
	//
	// Static preconditions
	//
	CUTE_STATIC_ASSERT_V(size(tiled_copy) == Int<kThreads>{});                 // NumThreads
	CUTE_STATIC_ASSERT_V(rank(blk_tiler) == Int<1>{});                         // (BLK)
	CUTE_STATIC_ASSERT_V(size(blk_tiler) % size(tiled_copy) == Int<0>{});      // whole copy tiles

	int row0 = blockIdx.x * kRows;
	int s = blockIdx.y;

	//
	// Full tensors (64-bit row stride: A passes 2^31 elements)
	//
	Tensor mA = make_tensor(make_gmem_ptr(a), make_shape(m, k),
				make_stride(int64_t(k), Int<1>{}));                       // (M,K)
	Tensor mX = make_tensor(make_gmem_ptr(x), make_shape(k));                 // (K)
	Tensor cK = make_identity_tensor(make_shape(k));                          // (K) -> k

	//
	// This CTA's chunk of K, cut into BLK tiles; the last tile may run past the chunk (and
	// past K), which the predicates mask.
	//
	int chunk_end = min(k, (s + 1) * chunk);
	auto chunk_tiles = [&](auto &&vec) {
		return local_tile(local_tile(vec, make_shape(chunk), make_coord(s)),
				  blk_tiler, make_coord(_));                        // (BLK,t)
	};
	Tensor gX = chunk_tiles(mX);                                              // (BLK,t)
	Tensor cX = chunk_tiles(cK);                                              // (BLK,t) -> k

	//
	// Copy partitions: VEC contiguous elements per atom, CPY_N atoms per thread per tile
	//
	ThrCopy thr_copy = tiled_copy.get_slice(threadIdx.x);
	Tensor tXgX = thr_copy.partition_S(gX);                                   // (CPY,CPY_N,t)
	Tensor tXcX = thr_copy.partition_S(cX);                                   // (CPY,CPY_N,t) -> k
	Tensor tXrX = make_fragment_like(tXgX(_,_,0));                            // (CPY,CPY_N)
	Tensor tArA = make_fragment_like(tXgX(_,_,0));                            // (CPY,CPY_N)
	Tensor tXpX = make_tensor<bool>(make_shape(size<1>(tXgX)));               // (CPY_N)
	Tensor acc = make_tensor<float>(make_shape(size(tXrX), Int<kRows>{}));    // (CPY*CPY_N,ROWS)
	clear(acc);
	int n_tiles = size<2>(tXgX);

	// Rows past M (the last CTA when M % ROWS != 0) recompute row M-1 and are not written.
	int rows_clamped[kRows];
	CUTE_UNROLL
	for (int r = 0; r < kRows; ++r)
		rows_clamped[r] = min(row0 + r, m - 1);

	//
	// Main loop: x's vectors once per tile, then each row's, folded by FMA
	//
	for (int t = 0; t < n_tiles; ++t) {
		CUTE_UNROLL
		for (int v = 0; v < size(tXpX); ++v)
			tXpX(v) = get<0>(tXcX(0, v, t)) < chunk_end;  // a vector is all in or all out
		clear(tXrX);
		copy_if(tiled_copy, tXpX, tXgX(_,_,t), tXrX);
		CUTE_UNROLL
		for (int r = 0; r < kRows; ++r) {
			Tensor tAgA = thr_copy.partition_S(chunk_tiles(mA(rows_clamped[r], _))); // (CPY,CPY_N,t)
			clear(tArA);
			copy_if(tiled_copy, tXpX, tAgA(_,_,t), tArA);
			CUTE_UNROLL
			for (int i = 0; i < size(tArA); ++i)
				acc(i, r) = fmaf(float(tArA(i)), float(tXrX(i)), acc(i, r));
		}
	}

	//
	// Reduce each row over the thread, the warp and the CTA, in a fixed order
	//
	__shared__ float warp_sums[kRows][kThreads / 32];
	int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	CUTE_UNROLL
	for (int r = 0; r < kRows; ++r) {
		float v = 0.0f;
		CUTE_UNROLL
		for (int i = 0; i < size<0>(acc); ++i)
			v += acc(i, r);
		CUTE_UNROLL
		for (int off = 16; off > 0; off /= 2)
			v += __shfl_xor_sync(0xffffffffu, v, off);
		if (lane == 0)
			warp_sums[r][warp] = v;
	}
	__syncthreads();
	if (threadIdx.x < kRows && row0 + int(threadIdx.x) < m) {
		int r = threadIdx.x;
		float v = 0.0f;
		for (int w = 0; w < kThreads / 32; ++w)
			v += warp_sums[r][w];
		out[int64_t(s) * m + row0 + r] = TO(v);
	}
}

/* y[i] = sum over s of partial[s, i], in order of s, rounded once to TO. */
template <class TO>
__global__ void sum_splits_device(int m, int split, float const *partial, TO *y)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= m)
		return;
	float v = 0.0f;
	for (int s = 0; s < split; ++s)
		v += partial[int64_t(s) * m + i];
	y[i] = TO(v);
}

/*
 * The configuration: kThreads threads, kRows rows per CTA, kSplit CTAs per row, 4 vectors of
 * VEC elements per thread per tile.
 */
using TIn = CG_T_IN;
using TOut = CG_T_OUT;
constexpr int kVec = 16 / sizeof(TIn);
template <class T>
constexpr bool kFloatType = std::is_same<T, float>::value || std::is_same<T, cute::half_t>::value ||
			    std::is_same<T, cute::bfloat16_t>::value;
static_assert(kFloatType<TIn> && kFloatType<TOut>,
	      "matvec: CG_T_IN and CG_T_OUT must be float, cute::half_t or cute::bfloat16_t");
constexpr int kThreads = CG_P_THREADS;
constexpr int kRows = CG_P_ROWS;
constexpr int kSplit = CG_P_SPLIT;
constexpr int kUnroll = 4;
static_assert(kThreads == 128 || kThreads == 256 || kThreads == 512,
	      "matvec: CG_P_THREADS must be 128, 256 or 512");
static_assert(kRows == 1 || kRows == 2 || kRows == 4, "matvec: CG_P_ROWS must be 1, 2 or 4");
static_assert(kSplit == 1 || kSplit == 2 || kSplit == 4 || kSplit == 8,
	      "matvec: CG_P_SPLIT must be 1, 2, 4 or 8");

size_t workspace_for(int64_t m) { return kSplit > 1 ? size_t(kSplit) * size_t(m) * sizeof(float) : 0; }

template <int VEC>
int launch_matvec(int m, int k, TIn const *a, TIn const *x, TOut *y, float *ws,
		  cudaStream_t stream)
{
	using CopyOp = UniversalCopy<cute::uint_byte_t<sizeof(TIn) * VEC>>;
	using TiledCopy = decltype(make_tiled_copy(Copy_Atom<CopyOp, TIn>{},
						   Layout<Shape<Int<kThreads>>>{},   // threads
						   Layout<Shape<Int<VEC>>>{}));       // values per atom
	using BlkTiler = Shape<Int<kThreads * VEC * kUnroll>>;                 // (BLK)

	int chunk = (int)ceil_div(ceil_div(k, kSplit), VEC) * VEC;
	dim3 grid((unsigned)ceil_div(m, kRows), (unsigned)kSplit);
	if constexpr (kSplit == 1) {
		matvec_device<kThreads, kRows><<<grid, dim3(kThreads), 0, stream>>>(
			m, k, chunk, a, x, y, BlkTiler{}, TiledCopy{});
		return cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
	}
	matvec_device<kThreads, kRows><<<grid, dim3(kThreads), 0, stream>>>(
		m, k, chunk, a, x, ws, BlkTiler{}, TiledCopy{});
	if (cudaPeekAtLastError() != cudaSuccess)
		return 4;
	sum_splits_device<<<dim3((unsigned)ceil_div(m, 256)), dim3(256), 0, stream>>>(m, kSplit, ws, y);
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
}

/* Whether a tensor holds T (float, cute::half_t or cute::bfloat16_t). */
template <class T>
bool is_type(const DLTensor *t)
{
	if (t->data == nullptr || t->dtype.lanes != 1)
		return false;
	if (std::is_same<T, float>::value)
		return t->dtype.code == kDLFloat && t->dtype.bits == 32;
	if (std::is_same<T, cute::half_t>::value)
		return t->dtype.code == kDLFloat && t->dtype.bits == 16;
	return t->dtype.code == kDLBfloat && t->dtype.bits == 16;
}

/* The row-major [rows, cols] check (a stride of a size-1 dimension does not matter). */
bool is_matrix(const DLTensor *t, int64_t rows, int64_t cols)
{
	if (t->ndim != 2 || t->shape[0] != rows || t->shape[1] != cols)
		return false;
	if (t->strides == nullptr)
		return true;
	return (cols <= 1 || t->strides[1] == 1) && (rows <= 1 || t->strides[0] == cols);
}

} // namespace kernel

using namespace kernel;

CUTEGEN_KERNEL size_t cutegen_workspace_bytes(const DLTensor *inputs, int num_inputs,
					      const DLTensor *outputs, int num_outputs,
					      const double *scalars, int num_scalars)
{
	(void)outputs;
	(void)num_outputs;
	(void)scalars;
	(void)num_scalars;
	if (num_inputs < 1 || inputs[0].ndim != 2 || inputs[0].shape[0] < 0)
		return 0;
	return workspace_for(inputs[0].shape[0]);
}

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor *outputs,
				  int num_outputs, const double *scalars, int num_scalars,
				  void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
	(void)scalars;
	(void)num_scalars;
	if (num_inputs != 2 || num_outputs != 1)
		return 1;
	const DLTensor *at = &inputs[0], *xt = &inputs[1];
	DLTensor *yt = &outputs[0];
	if (!is_type<TIn>(at) || !is_type<TIn>(xt) || !is_type<TOut>(yt) || at->ndim != 2)
		return 1;
	int64_t m = at->shape[0], k = at->shape[1];
	if (m < 0 || k < 0 || !is_matrix(at, m, k) || !is_matrix(xt, k, 1) || !is_matrix(yt, m, 1))
		return 1;
	if (m == 0)
		return 0;
	if (m > INT32_MAX - kRows || k > INT32_MAX - kVec * kSplit)
		return 2;
	if (workspace_bytes < workspace_for(m) || (kSplit > 1 && workspace == nullptr))
		return 1;
	TOut *y = (TOut *)((char *)yt->data + yt->byte_offset);
	if (k == 0) {
		// An empty sum: y = 0 (all-zero bytes are 0 in every type here).
		return cudaMemsetAsync(y, 0, size_t(m) * sizeof(TOut), stream) == cudaSuccess ? 0 : 4;
	}
	const TIn *a = (const TIn *)((const char *)at->data + at->byte_offset);
	const TIn *x = (const TIn *)((const char *)xt->data + xt->byte_offset);
	if (k % kVec == 0 && (uintptr_t)a % 16 == 0 && (uintptr_t)x % 16 == 0)
		return launch_matvec<kVec>((int)m, (int)k, a, x, y, (float *)workspace, stream);
	return launch_matvec<1>((int)m, (int)k, a, x, y, (float *)workspace, stream);
}
