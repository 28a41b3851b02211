/*
 * Row softmax or log-softmax (ops softmax, log_softmax) over the last dimension for the
 * cutegen kernel contract (docs/kernel-abi.md): the builtin family template generalizing
 * kernels/softmax_fp32.cu.
 *
 * cutegen-space: CG_P_THREADS=128,256,512,1024 CG_P_MODE=0,1,2,3 CG_P_CLUSTER=1,2,4,8,16
 * cutegen-start: CG_P_THREADS=256 CG_P_MODE=1 CG_P_CLUSTER=16
 * cutegen-stages: structure=CG_P_MODE,CG_P_CLUSTER tile=CG_P_THREADS
 *
 * Input x [rows.., cols] (any leading dims are rows), CG_T_IN; output y of the same shape,
 * CG_T_OUT (each float, cute::half_t or cute::bfloat16_t; CG_T_OUT = CG_T_IN by default; the
 * math is fp32, each result rounded once to CG_T_OUT). CG_LOG = 1 gives log_softmax. The math subtracts the row max, so large inputs do not overflow; a row
 * of -inf gives NaN, as in PyTorch.
 *
 * A thread block cluster of C CTAs owns one row at a time (persistent clusters walk the
 * rows); CTA r of the cluster owns the r-th slice of the row. One kernel template, two paths,
 * and a second template for rows that fit in registers:
 *   - CG_P_MODE = 1, staged (one read): C = CG_P_CLUSTER. Every 16-byte load of the slice is
 *     issued at once as cp.async into shared memory; an online (max, sum of exp) is folded per
 *     thread tile by tile as the data lands; the pairs are reduced over the CTA (warp
 *     shuffles) and over the cluster (distributed shared memory); then the slice is
 *     normalized from shared memory and written tile by tile, each tile's loads of the next
 *     row starting once its results are stored. When the
 *     slice does not fit one CTA's shared memory (227 KB), or such clusters cannot be
 *     resident, or the vectors are 2-byte (misaligned 16-bit data), it falls back to mode 0.
 *   - CG_P_MODE = 0, streamed (two reads): the same, but the normalize pass reads x again
 *     from global memory; C is the smallest power of two that gives every SM a CTA (few long
 *     rows are spread over a cluster), CG_P_CLUSTER is not used.
 *   - CG_P_MODE = 2, one row per warp in registers: each warp holds a whole row (up to 16
 *     vectors per lane: 4096 16-bit or 2048 fp32 elements), issues all its 16-byte loads at
 *     once, reduces max and sum by shuffles alone (no barrier, no shared memory), writes; the
 *     CTA's CG_P_THREADS / 32 warps do as many rows. For short rows, where a CTA or cluster per
 *     row leaves most threads idle and pays a cluster barrier per row.
 *   - CG_P_MODE = 3, one row per CTA in registers: the same over CG_P_THREADS threads (up to 16
 *     vectors each, 8 at 1024 threads: 128 KB of row), two CTA reductions. For medium rows.
 *   Modes 2 and 3 go on as mode 1 when the row does not fit; CG_P_CLUSTER is not used.
 * CG_P_THREADS threads per CTA; in modes 0 and 1 each thread moves 1024 / CG_P_THREADS vectors
 * per tile, so a tile is 1024 vectors of 16 bytes whatever the CTA size.
 * Vectors are 16 bytes of the wider of CG_T_IN and CG_T_OUT (x's loads are 8 bytes when y is
 * fp32 and x 16-bit; y is written by a TiledCopy of its own type with the same thread and
 * value layout) when cols is a multiple of them and the pointers are aligned to them, else
 * one element. Every load and store is predicated by an identity tensor against the
 * slice's end.
 * Not for: softmax over a dimension other than the last.
 */
#include <cutegen/kernel_abi.h>

#include <cooperative_groups.h>
#include <cute/tensor.hpp>
#include <cute/arch/cluster_sm90.hpp>

CUTEGEN_DECLARE_ABI();

#ifndef CG_T_IN
#define CG_T_IN float
#endif
#ifndef CG_T_OUT
#define CG_T_OUT CG_T_IN
#endif
#ifndef CG_LOG
#define CG_LOG 0
#endif
#ifndef CG_P_THREADS
#define CG_P_THREADS 256
#endif
#ifndef CG_P_MODE
#define CG_P_MODE 1
#endif
#ifndef CG_P_CLUSTER
#define CG_P_CLUSTER 16
#endif

namespace kernel {

using namespace cute;
namespace cg = cooperative_groups;

constexpr float kLog2e = 1.4426950408889634f;

/* (max, sum of exp(x - max)) pairs: the state of an online softmax. */
struct MaxSum {
	float m, s;
};

__device__ __forceinline__ MaxSum combine(MaxSum a, MaxSum b)
{
	float m = fmaxf(a.m, b.m);
	if (m == -INFINITY)
		return {m, 0.0f};
	return {m, a.s * exp2f((a.m - m) * kLog2e) + b.s * exp2f((b.m - m) * kLog2e)};
}

/* cp.async.wait_group with a runtime count (at most `n` of this thread's groups pending). */
__device__ __forceinline__ void cp_async_wait_at_most(int n)
{
	switch (n) {
	case 0: cp_async_wait<0>(); break;
	case 1: cp_async_wait<1>(); break;
	case 2: cp_async_wait<2>(); break;
	case 3: cp_async_wait<3>(); break;
	case 4: cp_async_wait<4>(); break;
	case 5: cp_async_wait<5>(); break;
	case 6: cp_async_wait<6>(); break;
	default: cp_async_wait<7>(); break;
	}
}

/* Reduces each thread's pair over the CTA; every thread gets the result. */
template <int kThreads>
__device__ MaxSum block_reduce(MaxSum v, MaxSum *scratch /* [kThreads/32] */)
{
	CUTE_UNROLL
	for (int off = 16; off > 0; off /= 2) {
		MaxSum o{__shfl_xor_sync(0xffffffffu, v.m, off), __shfl_xor_sync(0xffffffffu, v.s, off)};
		v = combine(v, o);
	}
	int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	if (lane == 0)
		scratch[warp] = v;
	__syncthreads();
	v = scratch[0];
	CUTE_UNROLL
	for (int w = 1; w < kThreads / 32; ++w)
		v = combine(v, scratch[w]);
	return v;
}

template <class T, class TO, int kThreads, bool kStaged, bool kLog, class TiledCopy,
	  class AsyncCopy, class OutCopy, class BlkTiler>
__global__ static __launch_bounds__(kThreads)
void softmax_device(int rows, int cols, int slice, T const *x, TO *y,
		    BlkTiler blk_tiler, TiledCopy tiled_copy, AsyncCopy async_copy, OutCopy out_copy)
{
	//
	// Static preconditions
	//
	CUTE_STATIC_ASSERT_V(size(tiled_copy) == Int<kThreads>{});                 // NumThreads
	CUTE_STATIC_ASSERT_V(size(async_copy) == Int<kThreads>{});                 // NumThreads
	CUTE_STATIC_ASSERT_V(size(out_copy) == Int<kThreads>{});                   // NumThreads
	CUTE_STATIC_ASSERT_V(rank(blk_tiler) == Int<1>{});                         // (BLK)
	CUTE_STATIC_ASSERT_V(size(blk_tiler) % size(tiled_copy) == Int<0>{});      // whole copy tiles

	// Persistent clusters: cluster `cid` of `n_clusters` does rows cid, cid + n_clusters, ...
	int cluster = int(size(cute::cluster_shape()));
	int rank = int(cute::block_rank_in_cluster());
	int cid = blockIdx.x / cluster;
	int n_clusters = gridDim.x / cluster;

	//
	// Full tensors (64-bit row stride: rows x cols may pass 2^31)
	//
	Tensor mX = make_tensor(make_gmem_ptr(x), make_shape(rows, cols),
				make_stride(int64_t(cols), Int<1>{}));                    // (ROWS,COLS)
	Tensor mY = make_tensor(make_gmem_ptr(y), make_shape(rows, cols),
				make_stride(int64_t(cols), Int<1>{}));                    // (ROWS,COLS)
	Tensor cXY = make_identity_tensor(make_shape(cols));                      // (COLS) -> col

	//
	// This CTA's slice of a row, cut into BLK tiles; the last tile may run past the slice
	// (and past the row), which the predicates mask.
	//
	int slice_end = min(cols, (rank + 1) * slice);
	auto slice_tiles = [&](auto &&row_tensor) {
		return local_tile(local_tile(row_tensor, make_shape(slice), make_coord(rank)),
				  blk_tiler, make_coord(_));                        // (BLK,t)
	};
	Tensor cX = slice_tiles(cXY);                                            // (BLK,t) -> col

	//
	// Shared memory: the staged slice, and the reduction scratch
	//
	extern __shared__ float4 smem_raw[];
	__shared__ MaxSum warp_scratch[kThreads / 32];
	__shared__ MaxSum cta_result[2];  // by row parity: a neighbour may still read the last one
	Tensor sX = make_tensor(make_smem_ptr(reinterpret_cast<T *>(smem_raw)),
				make_shape(size<0>(cX), kStaged ? size<1>(cX) : 1));  // (BLK,t)

	//
	// Copy partitions (the global ones are re-sliced per row)
	//
	ThrCopy thr_copy = tiled_copy.get_slice(threadIdx.x);
	ThrCopy thr_async = async_copy.get_slice(threadIdx.x);
	ThrCopy thr_out = out_copy.get_slice(threadIdx.x);
	Tensor tXsX = thr_copy.partition_D(sX);                                   // (CPY,CPY_N,t)
	Tensor tXcX = thr_copy.partition_S(cX);                                   // (CPY,CPY_N,t) -> col
	Tensor tXrX = make_fragment_like(tXsX(_,_,0));                            // (CPY,CPY_N)
	Tensor tXpX = make_tensor<bool>(make_shape(size<1>(tXsX)));               // (CPY_N)
	int n_tiles = size<2>(tXcX);

	auto set_predicates = [&](int t) {
		CUTE_UNROLL
		for (int v = 0; v < size(tXpX); ++v)
			tXpX(v) = get<0>(tXcX(0, v, t)) < slice_end;  // a vector is all in or all out
	};
	// Every load of a slice in flight at once: cp.async into shared memory, one commit group
	// per tile so pass 1 can fold tile t as soon as it lands. Each thread later reads back
	// only what it copied itself (the two TiledCopys partition alike), so no CTA barrier
	// guards the buffer.
	Tensor tAsX = thr_async.partition_D(sX);                                  // (CPY,CPY_N,t)
	auto load_tile = [&](int row, int t) {
		Tensor tAgX = thr_async.partition_S(slice_tiles(mX(row, _)));     // (CPY,CPY_N,t)
		set_predicates(t);
		copy_if(async_copy, tXpX, tAgX(_,_,t), tAsX(_,_,t));
		cp_async_fence();
	};

	if constexpr (kStaged) {
		if (cid < rows)
			for (int t = 0; t < n_tiles; ++t)
				load_tile(cid, t);
	}
	int parity = 0;
	for (int row = cid; row < rows; row += n_clusters) {
		Tensor tXgX = thr_copy.partition_S(slice_tiles(mX(row, _)));     // (CPY,CPY_N,t)
		Tensor tYgY = thr_out.partition_D(slice_tiles(mY(row, _)));      // (CPY,CPY_N,t)

		//
		// Pass 1: fold (max, sum of exp) per thread over the slice
		//
		MaxSum acc{-INFINITY, 0.0f};
		for (int t = 0; t < n_tiles; ++t) {
			set_predicates(t);
			fill(tXrX, T(-INFINITY));
			if constexpr (kStaged) {
				cp_async_wait_at_most(n_tiles - 1 - t);
				copy_if(tiled_copy, tXpX, tXsX(_,_,t), tXrX);
			} else {
				copy_if(tiled_copy, tXpX, tXgX(_,_,t), tXrX);
			}
			float m = acc.m;
			CUTE_UNROLL
			for (int i = 0; i < size(tXrX); ++i)
				m = fmaxf(m, float(tXrX(i)));
			if (m != -INFINITY) {
				// x - m first: exact for nearby values, so large magnitudes lose nothing
				float sum = acc.s * exp2f((acc.m - m) * kLog2e);
				CUTE_UNROLL
				for (int i = 0; i < size(tXrX); ++i)
					sum += exp2f((float(tXrX(i)) - m) * kLog2e);
				acc = {m, sum};
			}
		}

		//
		// Reduce over the CTA, then over the cluster through distributed shared memory
		//
		acc = block_reduce<kThreads>(acc, warp_scratch);
		if (threadIdx.x == 0)
			cta_result[parity] = acc;
		cute::cluster_sync();  // every CTA's result for this row is written
		if (cluster > 1) {
			cg::cluster_group cl = cg::this_cluster();
			MaxSum row_acc{-INFINITY, 0.0f};
			for (int r = 0; r < cluster; ++r)
				row_acc = combine(row_acc, *cl.map_shared_rank(&cta_result[parity], r));
			acc = row_acc;
		}

		//
		// Pass 2: normalize and write tile by tile; once a tile's results are stored (so its
		// values have left shared memory), the loads of this thread's part of the tile in the
		// next row start, while the rest of this row is written
		//
		float inv_s = 1.0f / acc.s;
		float log_s = logf(acc.s);
		int next = row + n_clusters;
		for (int t = 0; t < n_tiles; ++t) {
			set_predicates(t);
			if constexpr (kStaged)
				copy_if(tiled_copy, tXpX, tXsX(_,_,t), tXrX);
			else
				copy_if(tiled_copy, tXpX, tXgX(_,_,t), tXrX);
			if constexpr (std::is_same<T, TO>::value) {
				CUTE_UNROLL
				for (int i = 0; i < size(tXrX); ++i) {
					float d = float(tXrX(i)) - acc.m;
					if constexpr (kLog)
						tXrX(i) = T(d - log_s);
					else
						tXrX(i) = T(exp2f(d * kLog2e) * inv_s);
				}
				copy_if(out_copy, tXpX, tXrX, tYgY(_,_,t));
			} else {  // another output type: the results in registers of their own
				Tensor tYrY = make_tensor<TO>(shape(tXrX));               // (CPY,CPY_N)
				CUTE_UNROLL
				for (int i = 0; i < size(tXrX); ++i) {
					float d = float(tXrX(i)) - acc.m;
					if constexpr (kLog)
						tYrY(i) = TO(d - log_s);
					else
						tYrY(i) = TO(exp2f(d * kLog2e) * inv_s);
				}
				copy_if(out_copy, tXpX, tYrY, tYgY(_,_,t));
			}
			if constexpr (kStaged) {
				asm volatile("" ::: "memory");  // the tile's shared loads stay before its refill
				if (next < rows)
					load_tile(next, t);
			}
		}
		parity ^= 1;
	}
	// No CTA may exit (freeing its cta_result) while a neighbour still reads it.
	cute::cluster_sync();
}

/* Reduces v over a group of kGroup threads with op: a warp (shuffles alone), or the whole CTA
 * (kGroup = kThreads > 32) through scratch; every thread of the group gets the result. */
template <int kGroup, class Op>
__device__ __forceinline__ float group_reduce(float v, Op op, float *scratch /* [kGroup/32] */)
{
	CUTE_UNROLL
	for (int off = 16; off > 0; off /= 2)
		v = op(v, __shfl_xor_sync(0xffffffffu, v, off));
	if constexpr (kGroup > 32) {
		int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
		__syncthreads();  // the scratch's previous reduction has been read by every thread
		if (lane == 0)
			scratch[warp] = v;
		__syncthreads();
		v = scratch[0];
		CUTE_UNROLL
		for (int w = 1; w < kGroup / 32; ++w)
			v = op(v, scratch[w]);
	}
	return v;
}

struct OpMax {
	__device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct OpSum {
	__device__ float operator()(float a, float b) const { return a + b; }
};

/*
 * Modes 2 and 3, the row in registers: a group of kGroup threads (a warp in mode 2, the CTA in
 * mode 3) owns a row at a time and holds all of it, kVPT vectors per thread, loaded at once
 * (every load of the row in flight), so the row is read once with no shared-memory staging,
 * no cluster and, in mode 2, no barrier: max and sum are exact reductions over registers, and
 * the normalized row is written from them. The row is seen as kVPT tiles of kGroup * VEC
 * elements; the predicates mask what lies past its end.
 */
template <class T, class TO, int kThreads, int kGroup, int kVPT, bool kLog, class TiledCopy,
	  class OutCopy>
__global__ static __launch_bounds__(kThreads)
void softmax_regs_device(int rows, int cols, T const *x, TO *y, TiledCopy tiled_copy,
			 OutCopy out_copy)
{
	//
	// Static preconditions
	//
	CUTE_STATIC_ASSERT_V(size(tiled_copy) == Int<kGroup>{});                  // NumThreads
	CUTE_STATIC_ASSERT_V(size(out_copy) == Int<kGroup>{});                    // NumThreads
	static_assert(kThreads % kGroup == 0 && kGroup % 32 == 0, "rowwise: whole warps per row");
	constexpr int kBlk = decltype(size<0>(typename TiledCopy::Tiler_MN{}))::value;  // kGroup*VEC
	constexpr int kGroups = kThreads / kGroup;                                // rows per CTA
	int group = threadIdx.x / kGroup, gtid = threadIdx.x % kGroup;
	__shared__ float scratch[kThreads / 32];

	//
	// Full tensors (64-bit row stride)
	//
	Tensor mX = make_tensor(make_gmem_ptr(x), make_shape(rows, cols),
				make_stride(int64_t(cols), Int<1>{}));                    // (ROWS,COLS)
	Tensor mY = make_tensor(make_gmem_ptr(y), make_shape(rows, cols),
				make_stride(int64_t(cols), Int<1>{}));                    // (ROWS,COLS)
	// One row as kVPT tiles, whatever cols is: the part past cols is never touched
	auto row_tiles = [&](auto &&row_tensor) {
		return local_tile(make_tensor(row_tensor.data(), make_shape(Int<kBlk * kVPT>{})),
				  Shape<Int<kBlk>>{}, make_coord(_));               // (BLK,V)
	};
	Tensor cR = local_tile(make_identity_tensor(make_shape(Int<kBlk * kVPT>{})),
			       Shape<Int<kBlk>>{}, make_coord(_));                // (BLK,V) -> col

	//
	// Copy partitions and the registers that hold the row
	//
	ThrCopy thr_copy = tiled_copy.get_slice(gtid);
	ThrCopy thr_out = out_copy.get_slice(gtid);
	Tensor tXcR = thr_copy.partition_S(cR);                                   // (CPY,CPY_N,V) -> col
	Tensor tXrX = make_tensor<T>(shape(tXcR));                                // (CPY,CPY_N,V)
	Tensor tXcV = tXcR(0,_,_);                                                // (CPY_N,V) -> col
	Tensor tXpX = make_tensor<bool>(shape(tXcV));                             // (CPY_N,V)
	CUTE_UNROLL
	for (int i = 0; i < size(tXpX); ++i)
		tXpX(i) = get<0>(tXcV(i)) < cols;  // a vector is all in or all out

	for (int row = blockIdx.x * kGroups + group; row < rows; row += gridDim.x * kGroups) {
		Tensor tXgX = thr_copy.partition_S(row_tiles(mX(row, _)));        // (CPY,CPY_N,V)
		Tensor tXgY = thr_out.partition_D(row_tiles(mY(row, _)));         // (CPY,CPY_N,V)
		fill(tXrX, T(-INFINITY));
		CUTE_UNROLL
		for (int v = 0; v < kVPT; ++v)
			copy_if(tiled_copy, tXpX(_,v), tXgX(_,_,v), tXrX(_,_,v));

		float m = -INFINITY;
		CUTE_UNROLL
		for (int i = 0; i < size(tXrX); ++i)
			m = fmaxf(m, float(tXrX(i)));
		m = group_reduce<kGroup>(m, OpMax{}, scratch);
		float s = 0.0f;
		CUTE_UNROLL
		for (int i = 0; i < size(tXrX); ++i)
			s += exp2f((float(tXrX(i)) - m) * kLog2e);  // -inf padding adds 0
		s = group_reduce<kGroup>(s, OpSum{}, scratch);

		float inv_s = 1.0f / s;
		float log_s = logf(s);
		if constexpr (std::is_same<T, TO>::value) {
			CUTE_UNROLL
			for (int i = 0; i < size(tXrX); ++i) {
				float d = float(tXrX(i)) - m;
				if constexpr (kLog)
					tXrX(i) = T(d - log_s);
				else
					tXrX(i) = T(exp2f(d * kLog2e) * inv_s);
			}
			CUTE_UNROLL
			for (int v = 0; v < kVPT; ++v)
				copy_if(out_copy, tXpX(_,v), tXrX(_,_,v), tXgY(_,_,v));
		} else {  // another output type: each tile's results in registers of their own
			CUTE_UNROLL
			for (int v = 0; v < kVPT; ++v) {
				Tensor tXrV = tXrX(_,_,v);                                // (CPY,CPY_N)
				Tensor tYrY = make_tensor<TO>(shape(tXrV));               // (CPY,CPY_N)
				CUTE_UNROLL
				for (int i = 0; i < size(tYrY); ++i) {
					float d = float(tXrV(i)) - m;
					if constexpr (kLog)
						tYrY(i) = TO(d - log_s);
					else
						tYrY(i) = TO(exp2f(d * kLog2e) * inv_s);
				}
				copy_if(out_copy, tXpX(_,v), tYrY, tXgY(_,_,v));
			}
		}
	}
}

/*
 * The configuration, from the task and the parameters. kThreads threads per CTA; VEC
 * elements per access (16 bytes, or 1 element for rows that are not 16-byte aligned);
 * kUnroll accesses per thread per tile (1024 accesses per tile); a staged slice may take up
 * to kSmemMax bytes of shared memory (Hopper's 227 KB opt-in, less the static scratch);
 * clusters of up to 16 CTAs (non-portable above 8).
 */
using T = CG_T_IN;
using TOut = CG_T_OUT;
constexpr bool kLogSoftmax = CG_LOG;
constexpr int kThreads = CG_P_THREADS;
constexpr int kMode = CG_P_MODE;
constexpr int kCluster = CG_P_CLUSTER;
constexpr int kUnroll = 1024 / kThreads;
constexpr int kSmemMax = 227 * 1024 - 1024;
constexpr int kMaxCluster = 16;

template <class U>
constexpr bool kFloatType = std::is_same<U, float>::value || std::is_same<U, cute::half_t>::value ||
			    std::is_same<U, cute::bfloat16_t>::value;
static_assert(kFloatType<T> && kFloatType<TOut>,
	      "rowwise: CG_T_IN and CG_T_OUT must be float, cute::half_t or cute::bfloat16_t");
static_assert(CG_LOG == 0 || CG_LOG == 1, "rowwise: CG_LOG must be 0 or 1");
static_assert(kThreads == 128 || kThreads == 256 || kThreads == 512 || kThreads == 1024,
	      "rowwise: CG_P_THREADS must be 128, 256, 512 or 1024");
static_assert(kMode >= 0 && kMode <= 3, "rowwise: CG_P_MODE must be 0, 1, 2 or 3");
static_assert(kCluster == 1 || kCluster == 2 || kCluster == 4 || kCluster == 8 || kCluster == 16,
	      "rowwise: CG_P_CLUSTER must be 1, 2, 4, 8 or 16");

template <int VEC>
struct Config {
	static constexpr int kBlk = kThreads * VEC * kUnroll;
	static constexpr int kBytes = int(sizeof(T)) * VEC;
	// cp.async moves 4, 8 or 16 bytes: 2-byte vectors are never staged.
	static constexpr bool kCanStage = kBytes >= 4;
	using CopyOp = UniversalCopy<cute::uint_byte_t<kBytes>>;
	using AsyncOp = conditional_t<kBytes == 16, SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>,
				      conditional_t<kBytes == 8, SM80_CP_ASYNC_CACHEALWAYS<uint64_t>,
						    conditional_t<kBytes == 4, SM80_CP_ASYNC_CACHEALWAYS<uint32_t>,
								  CopyOp>>>;
	using TiledCopy = decltype(make_tiled_copy(Copy_Atom<CopyOp, T>{},
						   Layout<Shape<Int<kThreads>>>{},   // threads
						   Layout<Shape<Int<VEC>>>{}));       // values per access
	// The same partitioning by cp.async, for the staged path's all-at-once loads.
	using AsyncCopy = decltype(make_tiled_copy(Copy_Atom<AsyncOp, T>{},
						   Layout<Shape<Int<kThreads>>>{},
						   Layout<Shape<Int<VEC>>>{}));
	// y's stores: the same partitioning in y's type
	using OutOp = UniversalCopy<cute::uint_byte_t<int(sizeof(TOut)) * VEC>>;
	using OutCopy = decltype(make_tiled_copy(Copy_Atom<OutOp, TOut>{},
						 Layout<Shape<Int<kThreads>>>{},
						 Layout<Shape<Int<VEC>>>{}));
	using BlkTiler = Shape<Int<kBlk>>;                                      // (BLK)

	static int slice(int cols, int cluster) { return (int)ceil_div(ceil_div(cols, cluster), VEC) * VEC; }
	static int64_t smem_bytes(int cols, int cluster)
	{
		return ceil_div(int64_t(slice(cols, cluster)), int64_t(kBlk)) * kBlk * int64_t(sizeof(T));
	}
};

/* Launches persistent clusters; -1 when this cluster shape cannot be resident at all. */
template <int VEC, bool kStaged>
int launch_softmax(int rows, int cols, int cluster, T const *x, TOut *y, cudaStream_t stream)
{
	using C = Config<VEC>;
	int slice = C::slice(cols, cluster);
	int smem = kStaged ? (int)C::smem_bytes(cols, cluster) : 0;
	auto kernel = softmax_device<T, TOut, kThreads, kStaged, kLogSoftmax, typename C::TiledCopy,
				     typename C::AsyncCopy, typename C::OutCopy, typename C::BlkTiler>;
	if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem) != cudaSuccess) {
		(void)cudaGetLastError();
		return -1;
	}
	if (cluster > 8 &&
	    cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess) {
		(void)cudaGetLastError();
		return -1;
	}

	cudaLaunchConfig_t config = {};
	cudaLaunchAttribute attr[1];
	attr[0].id = cudaLaunchAttributeClusterDimension;
	attr[0].val.clusterDim.x = cluster;
	attr[0].val.clusterDim.y = 1;
	attr[0].val.clusterDim.z = 1;
	config.gridDim = dim3((unsigned)cluster);
	config.blockDim = dim3(kThreads);
	config.dynamicSmemBytes = smem;
	config.stream = stream;
	config.attrs = attr;
	config.numAttrs = 1;
	int max_clusters = 0;
	if (cudaOccupancyMaxActiveClusters(&max_clusters, kernel, &config) != cudaSuccess ||
	    max_clusters < 1) {
		(void)cudaGetLastError();
		return -1;
	}
	config.gridDim = dim3((unsigned)(min(rows, max_clusters) * cluster));
	if (cudaLaunchKernelEx(&config, kernel, rows, cols, slice, x, y, typename C::BlkTiler{},
			       typename C::TiledCopy{}, typename C::AsyncCopy{}, typename C::OutCopy{}) != cudaSuccess)
		return 4;
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
}

/* Mode 2 or 3 with kVPT vectors per thread: one row per warp (kGroup 32) or per CTA. */
template <int VEC, int kGroup, int kVPT>
int launch_regs(int rows, int cols, T const *x, TOut *y, cudaStream_t stream)
{
	using C = Config<VEC>;
	using TiledCopy = decltype(make_tiled_copy(Copy_Atom<typename C::CopyOp, T>{},
						   Layout<Shape<Int<kGroup>>>{},     // threads
						   Layout<Shape<Int<VEC>>>{}));       // values per access
	using OutCopy = decltype(make_tiled_copy(Copy_Atom<typename C::OutOp, TOut>{},
						 Layout<Shape<Int<kGroup>>>{},
						 Layout<Shape<Int<VEC>>>{}));
	constexpr int kGroups = kThreads / kGroup;
	int64_t ctas = ceil_div(int64_t(rows), int64_t(kGroups));
	dim3 grid((unsigned)min(ctas, int64_t(INT32_MAX)));
	softmax_regs_device<T, TOut, kThreads, kGroup, kVPT, kLogSoftmax, TiledCopy, OutCopy>
		<<<grid, kThreads, 0, stream>>>(rows, cols, x, y, TiledCopy{}, OutCopy{});
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
}

/*
 * The most vectors a thread of a kThreads CTA holds in modes 2 and 3 without spilling: the
 * registers a thread may have (65536 / kThreads, at most 255) less 40 for the rest, over a
 * vector's cost, 4 registers plus, for 16-bit data, the 8 its fp32 values take (ptxas keeps
 * them between the max, sum and write loops). 16-bit: 16 vectors at 128 or 256 threads, 4 at
 * 512, 2 at 1024; fp32: 16, 8, 4. src/agent/builtin_policy.c (rowwise_regs_fit) mirrors it.
 */
constexpr int regs_max_vpt()
{
	int regs = (65536 / kThreads < 255 ? 65536 / kThreads : 255) - 40;
	int cost = sizeof(T) == 2 ? 12 : 6;
	int v = 16;
	while (v > 1 && v * cost > regs)
		v /= 2;
	return v;
}

/* Modes 2 and 3: the fewest vectors per thread that hold the row; -1 when it does not fit. */
template <int VEC, int kGroup>
int dispatch_regs(int rows, int cols, T const *x, TOut *y, cudaStream_t stream)
{
	constexpr int kMax = regs_max_vpt();
	int64_t per = int64_t(kGroup) * VEC;
	if (cols <= per)
		return launch_regs<VEC, kGroup, 1>(rows, cols, x, y, stream);
	if (kMax >= 2 && cols <= 2 * per)
		return launch_regs<VEC, kGroup, (kMax >= 2 ? 2 : 1)>(rows, cols, x, y, stream);
	if (kMax >= 4 && cols <= 4 * per)
		return launch_regs<VEC, kGroup, (kMax >= 4 ? 4 : 1)>(rows, cols, x, y, stream);
	if (kMax >= 8 && cols <= 8 * per)
		return launch_regs<VEC, kGroup, (kMax >= 8 ? 8 : 1)>(rows, cols, x, y, stream);
	if (kMax >= 16 && cols <= 16 * per)
		return launch_regs<VEC, kGroup, (kMax >= 16 ? 16 : 1)>(rows, cols, x, y, stream);
	return -1;
}

template <int VEC>
int dispatch(int rows, int cols, T const *x, TOut *y, cudaStream_t stream)
{
	// Modes 2 and 3 (the row in registers of a warp or of the CTA); a row too long for them
	// goes on as mode 1 (one read, staged).
	if constexpr (kMode == 2 || kMode == 3) {
		int rc = dispatch_regs<VEC, kMode == 2 ? 32 : kThreads>(rows, cols, x, y, stream);
		if (rc >= 0)
			return rc;
	}
	// Mode 1 (one read): the parameter's cluster, when its slices fit in shared memory.
	if constexpr (kMode != 0 && Config<VEC>::kCanStage) {
		if (Config<VEC>::smem_bytes(cols, kCluster) <= kSmemMax) {
			int rc = launch_softmax<VEC, true>(rows, cols, kCluster, x, y, stream);
			if (rc >= 0)
				return rc;
		}
	}
	// Mode 0 (two reads), and mode 1's fallback: enough CTAs to cover the SMs, so few rows
	// are spread over larger clusters; smaller clusters when those cannot be resident.
	int dev = 0, sms = 132;
	if (cudaGetDevice(&dev) == cudaSuccess)
		cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
	int c_fill = 1;
	while (c_fill < kMaxCluster && (int64_t)rows * c_fill < sms)
		c_fill *= 2;
	for (int c = c_fill; c >= 1; c /= 2) {
		int rc = launch_softmax<VEC, false>(rows, cols, c, x, y, stream);
		if (rc >= 0)
			return rc;
	}
	return 5;
}

/* Whether a DLPack dtype is U. */
template <class U>
bool is_t(DLDataType d)
{
	if (d.lanes != 1)
		return false;
	if (std::is_same<U, float>::value)
		return d.code == kDLFloat && d.bits == 32;
	if (std::is_same<U, cute::half_t>::value)
		return d.code == kDLFloat && d.bits == 16;
	return d.code == kDLBfloat && d.bits == 16;
}

} // namespace kernel

using namespace kernel;

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor *outputs,
				  int num_outputs, const double *scalars, int num_scalars,
				  void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
	(void)scalars;
	(void)num_scalars;
	(void)workspace;
	(void)workspace_bytes;
	if (num_inputs != 1 || num_outputs != 1)
		return 1;
	const DLTensor *xt = &inputs[0];
	DLTensor *yt = &outputs[0];
	if (xt->ndim < 1 || xt->ndim != yt->ndim || xt->data == nullptr || yt->data == nullptr)
		return 1;
	if (!is_t<T>(xt->dtype) || !is_t<TOut>(yt->dtype))
		return 1;
	int64_t stride = 1;
	for (int d = xt->ndim - 1; d >= 0; --d) {
		if (xt->shape[d] != yt->shape[d] || xt->shape[d] < 0)
			return 1;
		if (xt->shape[d] > 1 && ((xt->strides && xt->strides[d] != stride) ||
					 (yt->strides && yt->strides[d] != stride)))
			return 1;
		stride *= xt->shape[d];
	}
	int64_t cols = xt->shape[xt->ndim - 1];
	int64_t rows = cols > 0 ? stride / cols : 0;
	if (rows == 0 || cols == 0)
		return 0;
	if (cols * kMaxCluster > INT32_MAX || rows * kMaxCluster > INT32_MAX)
		return 2;
	const T *x = (const T *)((const char *)xt->data + xt->byte_offset);
	TOut *y = (TOut *)((char *)yt->data + yt->byte_offset);
	constexpr int kVec = 16 / (sizeof(T) > sizeof(TOut) ? sizeof(T) : sizeof(TOut));
	if (cols % kVec == 0 && (uintptr_t)x % (sizeof(T) * kVec) == 0 &&
	    (uintptr_t)y % (sizeof(TOut) * kVec) == 0)
		return dispatch<kVec>((int)rows, (int)cols, x, y, stream);
	return dispatch<1>((int)rows, (int)cols, x, y, stream);
}
