// cutegen-space: CG_P_BM=128,64 CG_P_BN=128,256 CG_P_BK=64,128,32 CG_P_SPLIT_K=1,2,3,4,8 CG_P_MN_ORDER=0,1 CG_P_STAGES=2,3,4,5,6,7 CG_P_PERSISTENT=0,1 CG_P_CLUSTER_M=1,2 CG_P_CTAS=1,2 CG_P_REDUCE=0,1 CG_P_PINGPONG=0,1
// cutegen-start: CG_P_BM=128 CG_P_BN=256 CG_P_BK=64 CG_P_SPLIT_K=1 CG_P_MN_ORDER=1 CG_P_STAGES=4 CG_P_PERSISTENT=1 CG_P_CLUSTER_M=2 CG_P_CTAS=1 CG_P_REDUCE=0 CG_P_PINGPONG=0
// cutegen-stages: tile=CG_P_BM,CG_P_BN,CG_P_BK,CG_P_CTAS,CG_P_PINGPONG split=CG_P_SPLIT_K,CG_P_REDUCE smem=CG_P_MN_ORDER pipeline=CG_P_STAGES schedule=CG_P_PERSISTENT,CG_P_CLUSTER_M
/*
 * Hopper tensor-core GEMM family for cutegen's builtin agent (builtin/README.md):
 * C = act(alpha * op(A) @ op(B) + bias) with fp16, bf16 or fp8 e4m3 inputs, fp32 accumulation,
 * and fp16, bf16 or fp32 output, under the kernel contract (docs/kernel-abi.md).
 *
 * How: kernels/gemm_bf16_sm90.cu (measured correct on an H200) generalized; its design is kept:
 *   - BM x BN x BK CTA tile (BM = CG_P_BM, 128 or 64); warp-specialized: one producer
 *     warpgroup (40 registers) whose first thread issues the TMA loads, and BM / 64 MMA
 *     warpgroups (232 registers) of 64 rows each, a 64 x BN x (16 or 32) WGMMA per
 *     instruction, both operands from shared memory. BM = 64 is for small M (decode and
 *     LLM-inference M of a few hundred): half the rows of zero-filled MMA work at M <= 64,
 *     twice the tiles where 128-row tiles leave SMs idle, smaller stages (more of them fit);
 *   - a STAGES-deep shared-memory ring with a transaction mbarrier per stage (TMA -> MMA,
 *     "full") and an arrival mbarrier per stage (MMA -> TMA, "empty"); one WGMMA batch stays
 *     in flight while the previous stage is released. STAGES is clamped to what fits in
 *     227 KB for the tile (so 128x256x128 in 16 bits runs 2 stages whatever is asked);
 *   - operand layouts as they lie in memory: K-major when A is row-major [M,K] or B is
 *     col [N,K]; MN-major when A is col [K,M] or B is row [K,N] (16-bit WGMMA reads MN-major
 *     shared memory through the descriptor's transpose bit, so nothing is transposed).
 *     Shared-memory atoms are the widest swizzle the tile's contiguous extent allows.
 *     MN-major tiles stack their 64 x 8 atoms along M/N first (CG_P_MN_ORDER=0, the first
 *     design: TMA boxes of 64 x 8, BMN/64 x BK/8 of them per stage) or along K first (1,
 *     CUTLASS's order: BMN/64 boxes of 64 x BK, up to 1.5x faster in the H200 walks of
 *     bench/results/2026-12-03_h200_builtin_hopper.json, hence the start, with the persistent
 *     schedule and CTA pairs that won there too); K-major tiles are the same either way;
 *     fp8 WGMMA takes K-major operands only: fp8 needs A row and B col (static_assert);
 *   - tf32 (CG_T_IN cute::tfloat32_t: fp32 tensors under the `tf32` contract, read as they lie,
 *     the tensor cores using 10 of the 23 mantissa bits, rounded or dropped: the `tf32` contract
 *     allows either, docs/evaluation.md): K-major only, like fp8 (A row, B col),
 *     fp32 output; 4-byte elements fit 2 stages of 128x256x64 and none of BK = 128;
 *   - fp8: the tensor cores accumulate fp8 products with fewer bits than fp32, which over
 *     K = 8192 is far outside the fp8 contract's 2^-10; so each k-tile is summed alone in a
 *     second set of accumulators and added to the fp32 ones (one WGMMA batch per k-tile, not
 *     two in flight). For the register room, BN = 256 runs as 128 for fp8;
 *   - batch (CG_BATCHED) and split M (CG_SPLIT_M) are one 3-D (M,K,L) view per operand:
 *     the TMA descriptors carry L as a third dimension, the tile scheduler an l coordinate;
 *   - tiles are numbered (m fastest within groups of 8 M-tiles, then n, then l) so CTAs that
 *     run at the same time share A and B strips in L2. CG_P_PERSISTENT=0 launches one CTA per
 *     tile; 1 launches one CTA per SM, each walking tiles blockIdx.x, +gridDim.x, ...: the
 *     producer and the MMA warpgroups count k-iterations across tiles, so the ring's stage
 *     and mbarrier parity carry over, and the producer fills the ring with the next tile
 *     while the MMA warpgroups run the epilogue;
 *   - CG_P_CTAS=2 (64 x 128 tiles, 16-bit or tf32): two CTAs per SM (registers capped at
 *     128 a thread by __launch_bounds__ and not moved by setmaxnreg, the stages clamped to
 *     half the shared memory; the persistent grid counts what the occupancy API says is
 *     resident), so one CTA's MMAs run while the other's warpgroups are in their epilogue:
 *     for a short K (GEMM + bias + GELU at K = 768, the H100's ncu: tensor pipes 28% active)
 *     the epilogue is as long as the main loop;
 *   - CG_P_PINGPONG=1 (ping-pong, CUTLASS's other warp-specialized schedule): two MMA
 *     warpgroups, each with a whole BM x BN tile (one warpgroup's tiled MMA, BM / 64 WGMMAs
 *     along M; BM x BN up to 128 x 128, 64 x 128 for fp8, for the registers) on units of its
 *     own, this CTA's units 0, 2, 4, ... and 1, 3, 5, ...; their main loops take turns on the
 *     one ring (two named barriers), so one warpgroup's MMAs run while the other is in its
 *     epilogue: the tensor cores are not idle during the stores, which is most of a short-K
 *     tile's time (the cooperative default stops both warpgroups for the epilogue). The
 *     producer is unchanged; each warpgroup counts the other's k-tiles to keep the ring's
 *     stage and parity. Without CG_P_PERSISTENT, one CTA per two units;
 *   - CG_P_CLUSTER_M=2: clusters of 2 CTAs on neighbouring M-tiles of one N-tile; each CTA
 *     loads half of the B tile and TMA multicasts it into both CTAs' rings (B is read from
 *     L2 once per pair). A stage's empty barrier then counts the MMA threads of both CTAs
 *     (each arrives on its own and on its peer's barrier), the barriers are initialized
 *     before a cluster-wide sync, and the producer stays until all its stages are released
 *     so no peer arrives on the barriers of an exited CTA. Where the M-tiles are odd, the
 *     last pair's second CTA loads zeros past M and stores nothing;
 *   - CG_P_SPLIT_K = S > 1 (few tiles: small M, large K): each tile's k-tiles are cut in S
 *     contiguous ranges, one work unit each (S times the CTAs); a unit writes its raw fp32
 *     sums to the workspace [S,L,M,N] and a second kernel adds the S partials in order
 *     (deterministic, no atomics) and applies the epilogue. S is clamped to the k-tiles.
 *     CG_P_REDUCE=1: no second kernel; each unit counts itself done on its tile's counter
 *     (the workspace, zeroed on the stream first) after its partials, and the last to finish
 *     adds the others' partials to its own, in order of the k-ranges (the same sums as the
 *     second kernel's), and runs the epilogue. No unit waits for another;
 *   - partial tiles: TMA zero-fills out-of-bounds parts of every box (M, N and K residues);
 *     the epilogue stores through an identity-tensor predicate. Epilogue in fp32 registers:
 *     alpha, + bias[n] (CG_EPI_BIAS), CG_EPI_ACT, the CG_OUT_MASK triangle as zeros;
 *   - the pad path (issue 20), decided at run time from the shapes: TMA needs every global
 *     stride a multiple of 16 bytes, so an operand whose rows are not (K for A row and B col,
 *     M for A col, N for B row not a multiple of 8 elements in 16 bits, 16 in fp8, 4 in tf32)
 *     is first copied by a small memory-bound kernel (pad_rows, on the same stream) into the
 *     workspace with its rows rounded up to 16 bytes; the GEMM then reads the copy through
 *     descriptors whose extents are still the real K, M or N, so the pad columns are out of
 *     bounds and zero-filled, never read. Only misaligned operands are copied; C is written
 *     in place (any N: a column pair leaves in one store only where its address is aligned).
 *   - the transposed copy: tf32 and fp8 WGMMA read both operands K-major from shared memory,
 *     so an MN-major operand of those types (B row-major [K,N], as `A @ B` holds it; A col)
 *     is first transposed into the workspace by a tiled copy (transpose_rows, same stream)
 *     with its K rows rounded up to 16 bytes, and the GEMM reads the copy K-major.
 * Not for: strict fp32 (gemm_simt.cu), fp8 output, K == 0 (those return 2), operands whose
 * base address is not 16-byte aligned (1). No TMA-store epilogue (column pairs are stored
 * from registers: without ping-pong they stall the MMAs); the pad path's copy and the
 * transposed copy cost a read and a write of the operand per call
 * (memory-bound, beside the GEMM's O(MNK)).
 */
#include <cutegen/kernel_abi.h>

#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/arch/reg_reconfig.h>
#include <cutlass/numeric_types.h>

CUTEGEN_DECLARE_ABI();

/* ---- task macros (cutegen writes them before this text) ---- */
#ifndef CG_T_IN
#define CG_T_IN cute::bfloat16_t
#endif
#ifndef CG_T_OUT
#define CG_T_OUT cute::bfloat16_t
#endif
#ifndef CG_A_COL
#define CG_A_COL 0
#endif
#ifndef CG_B_COL
#define CG_B_COL 0
#endif
#ifndef CG_BATCHED
#define CG_BATCHED 0
#endif
#ifndef CG_SPLIT_M
#define CG_SPLIT_M 0
#endif
#ifndef CG_A_STRUCT
#define CG_A_STRUCT 0
#endif
#ifndef CG_B_STRUCT
#define CG_B_STRUCT 0
#endif
#ifndef CG_OUT_MASK
#define CG_OUT_MASK 0
#endif
#ifndef CG_P_REDUCE
#define CG_P_REDUCE 0
#endif
#ifndef CG_EPI_BIAS
#define CG_EPI_BIAS 0
#endif
#ifndef CG_EPI_ACT
#define CG_EPI_ACT EpiIdentity
#endif

/* ---- parameters (the space above) ---- */
#ifndef CG_P_BM
#define CG_P_BM 128
#endif
#ifndef CG_P_BN
#define CG_P_BN 256
#endif
#ifndef CG_P_BK
#define CG_P_BK 64
#endif
#ifndef CG_P_STAGES
#define CG_P_STAGES 4
#endif
#ifndef CG_P_PERSISTENT
#define CG_P_PERSISTENT 0
#endif
#ifndef CG_P_CLUSTER_M
#define CG_P_CLUSTER_M 1
#endif
#ifndef CG_P_CTAS
#define CG_P_CTAS 1
#endif
#ifndef CG_P_MN_ORDER
#define CG_P_MN_ORDER 0
#endif
#ifndef CG_P_SPLIT_K
#define CG_P_SPLIT_K 1
#endif
#ifndef CG_P_PINGPONG
#define CG_P_PINGPONG 0
#endif

namespace kernel {

using namespace cute;

/* ---- epilogue activations, in fp32 (PyTorch's definitions) ---- */
struct EpiIdentity {
	__device__ float operator()(float x) const { return x; }
};
struct EpiRelu {
	__device__ float operator()(float x) const { return x > 0.0f ? x : 0.0f; }
};
struct EpiGeluErf {
	__device__ float operator()(float x) const
	{
		return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
	}
};
/* PyTorch's formula with tanhf: on the H100 it ran GEMM + bias + GELU at K = 768 at 0.65x
 * cuBLASLt against 0.58x for x sigmoid(2u) with a MUFU exponential and a fast divide, in one
 * run (bench/family_ab.sh, 2026-12-05) */
struct EpiGeluTanh {
	__device__ float operator()(float x) const
	{
		float u = 0.79788456080286536f * (x + 0.044715f * x * x * x);  // sqrt(2/pi)
		return 0.5f * x * (1.0f + tanhf(u));
	}
};
/* x / (1 + exp(-x)) with the divisor kept in [1, 2] (e = exp(-|x|)), where the fast divide is
 * within a few ulp: exp(-x) past 2^126 (x < -87) sends the IEEE division down its slow path
 * (builtin/elementwise.cu's sigmoid_times says what it cost) */
struct EpiSilu {
	__device__ float operator()(float x) const
	{
		float e = expf(-fabsf(x));
		return __fdividef(x >= 0.0f ? x : x * e, 1.0f + e);
	}
};

template <class TA, class TB, class SmemLayoutA, class SmemLayoutB>
struct SharedStorage {
	alignas(128) ArrayEngine<TA, cosize_v<SmemLayoutA>> A;
	alignas(128) ArrayEngine<TB, cosize_v<SmemLayoutB>> B;
	uint64_t full_barrier[size<2>(SmemLayoutA{})];   // TMA has landed stage p
	uint64_t empty_barrier[size<2>(SmemLayoutA{})];  // the MMAs are done reading stage p
	int split_last[2];  // CG_P_REDUCE: this unit ends its tile (one per MMA warpgroup: ping-pong)
};

/*
 * Tile t of tiles_m x tiles_n x L -> (m, n, l): M-tiles vary fastest inside groups of kGroupM
 * rows of tiles, so the CTAs of one wave read few distinct A and B strips. A bijection.
 */
constexpr int kGroupM = 8;

__device__ __forceinline__ void tile_coord(int t, int tiles_m, int tiles_n, int &m, int &n, int &l)
{
	int per_batch = tiles_m * tiles_n;
	l = t / per_batch;
	int r = t - l * per_batch;
	int first_m = r / (kGroupM * tiles_n) * kGroupM;
	int group_m = min(tiles_m - first_m, kGroupM);
	int rr = r - first_m * tiles_n;                                      // [0, group_m * tiles_n)
	m = first_m + rr % group_m;
	n = rr / group_m;
}

/* *p through the read-only path (ld.global.nc): the bias is never written by the kernel, so
 * its loads need not wait behind the stores of C */
template <class T>
__device__ __forceinline__ T ldg_value(T const *p)
{
	using E = uint_bit_t<sizeof_bits_v<T>>;
	E bits = __ldg(reinterpret_cast<E const *>(p));
	T v;
	memcpy(&v, &bits, sizeof v);
	return v;
}

/* One output element of the epilogue, in fp32 before its conversion to TC: act(alpha * acc +
 * bias[gn]), or zero in the masked triangle (CG_OUT_MASK). Shared by the fused epilogue and
 * the split-K reduction. */
template <class TC, class Epi>
__device__ __forceinline__ float epilogue_value(float acc, int gm, int gn, float alpha,
						TC const *bias, Epi epi)
{
	float v = alpha * acc;
	if constexpr (CG_EPI_BIAS)
		v += float(ldg_value(bias + gn));
	v = epi(v);
	if constexpr (CG_OUT_MASK == 1)
		v = gm > gn ? 0.0f : v;
	if constexpr (CG_OUT_MASK == 2)
		v = gm < gn ? 0.0f : v;
	return v;
}

/*
 * Split-K's second kernel: C[l,m,n] = epilogue(sum over s, in order, of W[s,l,m,n]), W the
 * workspace of raw fp32 sums the S k-ranges of each tile wrote.
 */
template <class TC, class Epi>
__global__ void splitk_reduce(int M, int N, int L, int S, float const *W, TC *C, TC const *bias,
			      float alpha, Epi epi)
{
	int64_t mn = int64_t(M) * N, total = mn * L;
	for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
	     i += int64_t(gridDim.x) * blockDim.x) {
		float acc = 0.0f;
		for (int s = 0; s < S; ++s)
			acc += W[int64_t(s) * total + i];
		int64_t r = i % mn;
		C[i] = TC(epilogue_value<TC>(acc, int(r / N), int(r % N), alpha, bias, epi));
	}
}

// A CTA's threads: the producer warpgroup, then the tiled MMA's threads (twice over in ping-pong:
// a warpgroup's tiled MMA, two warpgroups)
template <class TiledMma>
constexpr int cta_threads()
{
	return 128 + int(decltype(size(TiledMma{}))::value) * (CG_P_PINGPONG ? 2 : 1);
}

template <class ProblemShape, class CtaTiler,
	  class TA, class SmemLayoutA, class TmaA,
	  class TB, class SmemLayoutB, class TmaB,
	  class TC, class CStride, class TiledMma, class Epi, int ClusterM>
__global__ static __launch_bounds__(cta_threads<TiledMma>(), CG_P_CTAS)
void gemm_device(ProblemShape shape_MNKL, CtaTiler cta_tiler,
		 __grid_constant__ TmaA const tma_a, __grid_constant__ TmaB const tma_b,
		 TC *C, CStride dC, TC const *bias, TiledMma mma, float alpha, Epi epi,
		 int splits, float *W, int *counters)
{
	using FullBarrier = cutlass::arch::ClusterTransactionBarrier;
	using EmptyBarrier = cutlass::arch::ClusterBarrier;
	constexpr bool kPromote = sizeof_bits_v<TA> == 8;  // fp8: k-tile sums promoted to fp32
	constexpr int kCluster = ClusterM;                // CTAs along M sharing (multicasting) B

	//
	// Static preconditions
	//
	CUTE_STATIC_ASSERT_V(rank(shape_MNKL) == Int<4>{});                  // (M,N,K,L)
	CUTE_STATIC_ASSERT_V(rank(cta_tiler) == Int<3>{});                   // (BLK_M,BLK_N,BLK_K)
	static_assert(is_static<SmemLayoutA>::value);
	static_assert(is_static<SmemLayoutB>::value);
	CUTE_STATIC_ASSERT_V(size<0>(SmemLayoutA{}) == size<0>(cta_tiler));  // BLK_M
	CUTE_STATIC_ASSERT_V(size<0>(SmemLayoutB{}) == size<1>(cta_tiler));  // BLK_N
	CUTE_STATIC_ASSERT_V(size<1>(SmemLayoutA{}) == size<2>(cta_tiler));  // BLK_K
	CUTE_STATIC_ASSERT_V(size<1>(SmemLayoutB{}) == size<2>(cta_tiler));  // BLK_K
	CUTE_STATIC_ASSERT_V(size<2>(SmemLayoutA{}) == size<2>(SmemLayoutB{})); // PIPE
	CUTE_STATIC_ASSERT_V(rank(dC) == Int<3>{});                          // (dM,dN,dL)

	//
	// Full tensors (A and B as TMA coordinate tensors)
	//
	auto [M, N, K, L] = shape_MNKL;
	Tensor mA = tma_a.get_tma_tensor(make_shape(M, K, L));               // (M,K,L)
	Tensor mB = tma_b.get_tma_tensor(make_shape(N, K, L));               // (N,K,L)
	Tensor mC = make_tensor(make_gmem_ptr(C), make_shape(M, N, L), dC);  // (M,N,L)

	//
	// CTA tiles, all of them: a tile is chosen by its (m,n,l) below
	//
	auto all = make_coord(_, _, _);
	Tensor gA = local_tile(mA, cta_tiler, all, Step<_1, X,_1>{});        // (BLK_M,BLK_K,m,k,l)
	Tensor gB = local_tile(mB, cta_tiler, all, Step< X,_1,_1>{});        // (BLK_N,BLK_K,n,k,l)
	Tensor gC = local_tile(mC, cta_tiler, all, Step<_1,_1, X>{});        // (BLK_M,BLK_N,m,n,l)

	//
	// Shared memory
	//
	extern __shared__ char shared_memory[];
	using Storage = SharedStorage<TA, TB, SmemLayoutA, SmemLayoutB>;
	Storage &smem = *reinterpret_cast<Storage *>(shared_memory);
	Tensor sA = make_tensor(make_smem_ptr(smem.A.begin()), SmemLayoutA{}); // (BLK_M,BLK_K,PIPE)
	Tensor sB = make_tensor(make_smem_ptr(smem.B.begin()), SmemLayoutB{}); // (BLK_N,BLK_K,PIPE)

	//
	// Copy partitions: TMA, one elected thread issues whole tiles. In a cluster, CTA `rank`
	// loads its 1/kCluster slice of the B tile and multicasts it to every CTA of the cluster
	//
	int rank = blockIdx.x % kCluster;                                  // 1-D grid, (kCluster,1,1) clusters
	auto [tAgA, tAsA] = tma_partition(tma_a, Int<0>{}, Layout<_1>{},
					  group_modes<0,2>(sA), group_modes<0,2>(gA)); // (TMA,m,k,l), (TMA,PIPE)
	auto [tBgB, tBsB] = tma_partition(tma_b, rank, Layout<Int<kCluster>>{},
					  group_modes<0,2>(sB), group_modes<0,2>(gB)); // (TMA,n,k,l), (TMA,PIPE)
	// What lands in one stage of this CTA: its A tile and the whole B tile
	constexpr int kTmaBytes =
		int(size<0>(SmemLayoutA{}) * size<1>(SmemLayoutA{})) * int(sizeof_bits_v<TA>) / 8 +
		int(size<0>(SmemLayoutB{}) * size<1>(SmemLayoutB{})) * int(sizeof_bits_v<TB>) / 8;
	uint16_t mcast_mask = uint16_t((1u << kCluster) - 1);

	constexpr int K_PIPE_MAX = decltype(size<1>(tAsA))::value;
	int tiles_m = size<2>(gA);
	int tiles_n = size<2>(gB);
	int k_tiles = size<3>(gA);
	// Cluster tiles: kCluster M-tiles side by side (the last may reach past M: zero-filled
	// loads, no stores), numbered like tiles
	int tiles_mc = (tiles_m + kCluster - 1) / kCluster;
	// Work units: cluster tiles x k-ranges (splits = 1 but with split-K); unit u is k-range
	// u % splits of cluster tile u / splits
	int num_ctiles = tiles_mc * tiles_n * int(size<4>(gA)) * splits;
	auto k_range = [&](int u, int &k_begin, int &k_end) {
		int s = u % splits;
		k_begin = int(int64_t(s) * k_tiles / splits);
		k_end = int(int64_t(s + 1) * k_tiles / splits);
	};
	int cluster_id = blockIdx.x / kCluster, num_clusters = gridDim.x / kCluster;
	int warp_group = threadIdx.x / 128;

	if (threadIdx.x == 0) {
		CUTE_UNROLL
		for (int p = 0; p < K_PIPE_MAX; ++p) {
			FullBarrier::init(&smem.full_barrier[p], 1);
			// every thread of the MMA warpgroup(s) that consume a stage, in every CTA of
			// the cluster (what this CTA multicasts): size(mma) is one warpgroup in ping-pong
			EmptyBarrier::init(&smem.empty_barrier[p], size(mma) * kCluster);
		}
		cutlass::arch::fence_barrier_init();
	}
	if constexpr (kCluster > 1)
		cute::cluster_sync();  // the peers' barriers are initialized before any multicast
	else
		__syncthreads();

	//
	// Producer warpgroup: one thread streams the k-tiles of this CTA's tiles into the ring.
	// `it` counts k-iterations over all of them, so stage and parity carry across tiles.
	//
	// Registers move from the producer to the MMA warpgroups (setmaxnreg), except with two
	// CTAs an SM: there both hold the whole register file at the 128 a thread their
	// __launch_bounds__ gives, and an MMA warpgroup's increase would wait for registers no
	// CTA frees before it exits (on the H200, the walks and the GPU test that reached a
	// CG_P_CTAS = 2 candidate stalled there until they were killed)
	if (warp_group == 0) {
		if constexpr (CG_P_CTAS == 1)
			cutlass::arch::warpgroup_reg_dealloc<40>();
		if (threadIdx.x == 0) {
			uint32_t it = 0;
			for (int ct = cluster_id; ct < num_ctiles; ct += num_clusters) {
				int mc, n, l, k_begin, k_end;
				tile_coord(ct / splits, tiles_mc, tiles_n, mc, n, l);
				k_range(ct, k_begin, k_end);
				int m = mc * kCluster + rank;
				for (int k_tile = k_begin; k_tile < k_end; ++k_tile, ++it) {
					int pipe = it % K_PIPE_MAX;
					uint32_t use = it / K_PIPE_MAX;
					if (use > 0)  // wait until the MMAs have released this stage's last use
						EmptyBarrier::wait(&smem.empty_barrier[pipe], (use - 1) & 1);
					FullBarrier::arrive_and_expect_tx(&smem.full_barrier[pipe], kTmaBytes);
					copy(tma_a.with(smem.full_barrier[pipe]), tAgA(_,m,k_tile,l), tAsA(_,pipe));
					if constexpr (kCluster > 1)
						copy(tma_b.with(smem.full_barrier[pipe], mcast_mask),
						     tBgB(_,n,k_tile,l), tBsB(_,pipe));
					else
						copy(tma_b.with(smem.full_barrier[pipe]), tBgB(_,n,k_tile,l),
						     tBsB(_,pipe));
				}
			}
			if constexpr (kCluster > 1) {
				// Stay until every stage's last use is released by the MMAs of all the
				// cluster's CTAs: their arrivals on this CTA's barriers have then landed,
				// and this CTA may exit
				for (int p = 0; p < K_PIPE_MAX; ++p, ++it) {
					uint32_t use = it / K_PIPE_MAX;
					if (use > 0)
						EmptyBarrier::wait(&smem.empty_barrier[it % K_PIPE_MAX],
								   (use - 1) & 1);
				}
			}
		}
		return;
	}
	if constexpr (CG_P_CTAS == 1)
		cutlass::arch::warpgroup_reg_alloc<232>();

	//
	// MMA partition (consumer warpgroups): the "fragments" of A and B are shared-memory
	// descriptors. CG_P_PINGPONG: two warpgroups, each with the whole tiled MMA (one
	// warpgroup) on units of its own: mma_wg takes this CTA's units mma_wg, mma_wg + 2, ...
	//
	int mma_thread = threadIdx.x - 128;
	int mma_wg = 0;
	if constexpr (CG_P_PINGPONG) {
		mma_wg = mma_thread / 128;
		mma_thread %= 128;
	}
	ThrMMA thr_mma = mma.get_thread_slice(mma_thread);
	Tensor tCsA = thr_mma.partition_A(sA);                               // (MMA,MMA_M,MMA_K,PIPE)
	Tensor tCsB = thr_mma.partition_B(sB);                               // (MMA,MMA_N,MMA_K,PIPE)
	Tensor tCgC = thr_mma.partition_C(gC);                               // (MMA,MMA_M,MMA_N,m,n,l)
	Tensor tCrC = thr_mma.make_fragment_C(tCgC(_,_,_,0,0,0));            // (MMA,MMA_M,MMA_N)
	Tensor tCrT = make_fragment_like(tCrC);                              // (MMA,MMA_M,MMA_N) fp8: one k-tile
	Tensor tCrA = thr_mma.make_fragment_A(tCsA);                         // (MMA,MMA_M,MMA_K,PIPE)
	Tensor tCrB = thr_mma.make_fragment_B(tCsB);                         // (MMA,MMA_N,MMA_K,PIPE)

	// Tile coordinates of this thread's accumulators, for the epilogue predicates
	Tensor cC = make_identity_tensor(select<0,1>(cta_tiler));            // (BLK_M,BLK_N) -> (m,n)
	Tensor tCcC = thr_mma.partition_C(cC);                               // (MMA,MMA_M,MMA_N) -> (m,n)

	// Stage p is free again for this cluster's producers (the TMA of every CTA writes it)
	auto release = [&](int p) {
		if constexpr (kCluster > 1) {
			CUTE_UNROLL
			for (int c = 0; c < kCluster; ++c)
				EmptyBarrier::arrive(&smem.empty_barrier[p], c, 1);
		} else {
			EmptyBarrier::arrive(&smem.empty_barrier[p]);
		}
	};

	// CG_P_PINGPONG: the two warpgroups' main loops run in turn, unit by unit (named barriers
	// 3 and 4: the warpgroup of unit u+1 waits until that of unit u has passed the ring's
	// waits of all its stages), so one's main loop runs while the other is in its epilogue.
	// The turn also keeps the ring's parities right: a warpgroup skips the other's stages
	// (`it` counts them too), and it waits on a stage's barrier only once every earlier use
	// of the stage has landed, so a phase two uses old never passes for the one awaited
	constexpr uint32_t kTurnThreads = 2 * 128;
	uint32_t it = 0;
	int seq = 0;  // this CTA's units in order
	for (int ct = cluster_id; ct < num_ctiles; ct += num_clusters, ++seq) {
		int mc, n, l, k_begin, k_end;
		tile_coord(ct / splits, tiles_mc, tiles_n, mc, n, l);
		k_range(ct, k_begin, k_end);
		int m = mc * kCluster + rank;
		if constexpr (CG_P_PINGPONG) {
			if (seq % 2 != mma_wg) {
				it += k_end - k_begin;  // the other warpgroup's unit
				continue;
			}
			if (seq > 0)
				cutlass::arch::NamedBarrier::sync(kTurnThreads, 3 + mma_wg);
		}
		clear(tCrC);

		//
		// Main loop: wait for the stage, issue its MMAs, and once the previous stage's MMAs
		// have retired (one batch stays in flight) release that stage to the producer
		//
		CUTE_NO_UNROLL
		for (int k_tile = k_begin; k_tile < k_end; ++k_tile, ++it) {
			int pipe = it % K_PIPE_MAX;
			FullBarrier::wait(&smem.full_barrier[pipe], (it / K_PIPE_MAX) & 1);
			if constexpr (kPromote) {
				// fp8 WGMMA accumulates with fewer bits than fp32: sum each k-tile alone
				// and add it to the fp32 accumulators once its MMAs are done
				clear(tCrT);
				warpgroup_fence_operand(tCrT);
				warpgroup_arrive();
				gemm(mma, tCrA(_,_,_,pipe), tCrB(_,_,_,pipe), tCrT);
				warpgroup_commit_batch();
				warpgroup_wait<0>();
				warpgroup_fence_operand(tCrT);
				release(pipe);
				CUTE_UNROLL
				for (int i = 0; i < size(tCrC); ++i)
					tCrC(i) += tCrT(i);
			} else {
				warpgroup_fence_operand(tCrC);
				warpgroup_arrive();
				gemm(mma, tCrA(_,_,_,pipe), tCrB(_,_,_,pipe), tCrC);
				warpgroup_commit_batch();
				warpgroup_wait<1>();  // the MMAs of iteration it-1 are done
				warpgroup_fence_operand(tCrC);
				if (k_tile > k_begin)
					release((it - 1) % K_PIPE_MAX);
			}
		}
		// The next unit's warpgroup may start on the ring (its MMAs overlap these last ones)
		if constexpr (CG_P_PINGPONG) {
			if (ct + num_clusters < num_ctiles)
				cutlass::arch::NamedBarrier::arrive(kTurnThreads, 3 + (1 - mma_wg));
		}
		if constexpr (!kPromote) {
			warpgroup_wait<0>();
			warpgroup_fence_operand(tCrC);  // no read of the accumulators moves above the wait
			// The unit's last stage, so the producer may refill it (every k-range is
			// nonempty: K > 0 and splits <= k_tiles)
			release((it - 1) % K_PIPE_MAX);
		}

		//
		// Epilogue: C = act(alpha * acc + bias) in TC, predicated on the M and N residues;
		// the masked triangle of C (CG_OUT_MASK) is written as zeros. In the WGMMA
		// accumulator layout, values 2j and 2j+1 are columns n and n+1 of one row: such a
		// pair leaves in one 2-element store where both are in bounds and the pair's address
		// is aligned (one element at a time otherwise). Element-wise 16-bit stores had the
		// store queue throttling the MMA warps (ncu "lg throttle", 23% of stalls at 4096^3).
		//
		int m0 = m * int(size<0>(cta_tiler));
		int n0 = n * int(size<1>(cta_tiler));
		if constexpr (CG_P_SPLIT_K > 1) {
			// Split-K: the raw sums of this k-range to W[s,l], predicated on the M and N
			// residues
			int s = ct % splits;
			Tensor mW = make_tensor(make_gmem_ptr(W), make_shape(M, N, L * splits),
						make_stride(int64_t(N), Int<1>{}, int64_t(M) * N)); // (M,N,S*L)
			Tensor gW = local_tile(mW, cta_tiler, all, Step<_1,_1, X>{});  // (BLK_M,BLK_N,m,n,sl)
			Tensor tCgW = thr_mma.partition_C(gW)(_,_,_,m,n,s * int(L) + l); // (MMA,MMA_M,MMA_N)
			CUTE_UNROLL
			for (int i = 0; i < size(tCrC); ++i) {
				int gm = m0 + int(get<0>(tCcC(i)));
				int gn = n0 + int(get<1>(tCcC(i)));
				if (gm < int(M) && gn < int(N))
					tCgW(i) = tCrC(i);
			}
			if constexpr (CG_P_REDUCE == 0) {
				continue;  // the second kernel adds the partials and runs the epilogue
			} else {
				// The last unit of the tile to count itself done adds the others'
				// partials to its own, in order of s, and runs the epilogue below
				if (m0 >= int(M))
					continue;  // the cluster's second CTA past M: no tile
				__threadfence();  // this thread's partials, before the count
				cutlass::arch::NamedBarrier::sync(size(mma), 1 + mma_wg);
				if (mma_thread == 0)
					smem.split_last[mma_wg] = atomicAdd(&counters[(int64_t(l) * tiles_n + n) *
									  (tiles_mc * kCluster) + m], 1) ==
							  splits - 1;
				cutlass::arch::NamedBarrier::sync(size(mma), 1 + mma_wg);
				if (!smem.split_last[mma_wg])
					continue;
				__threadfence();  // the other units' partials, after their counts
				// The S partials of each element re-read from L2 (this unit's too: it
				// is in W) and added in order of s from zero, the second kernel's
				// sums. The loads of kChunk elements are issued before any add waits,
				// split after split: one L2 latency per split and chunk. One element's
				// S loads after another's (each load awaited by its add) was one L2
				// latency per element and split: on the H100, 0.17-0.43x cuBLASLt
				// where the second kernel gave 0.73-0.87x
				int64_t slot = int64_t(L) * M * N;  // W[s+1] - W[s]
				constexpr int kChunk = 16;
				static_assert(decltype(size(tCrC))::value % kChunk == 0,
					      "gemm_sm90: accumulators in chunks of 16");
				CUTE_UNROLL
				for (int i0 = 0; i0 < size(tCrC); i0 += kChunk) {
					CUTE_UNROLL
					for (int i = i0; i < i0 + kChunk; ++i)
						tCrC(i) = 0.0f;
					for (int r = 0; r < splits; ++r) {
						CUTE_UNROLL
						for (int i = i0; i < i0 + kChunk; ++i) {
							int gm = m0 + int(get<0>(tCcC(i)));
							int gn = n0 + int(get<1>(tCcC(i)));
							if (gm < int(M) && gn < int(N))  // L2, not a stale L1 line
								tCrC(i) += __ldcg(raw_pointer_cast(&tCgW(i)) +
										  (r - s) * slot);
						}
					}
				}
			}
		}
		Tensor tCgCt = tCgC(_,_,_,m,n,l);                            // (MMA,MMA_M,MMA_N)
		auto value = [&](float acc, int gm, int gn) {
			return TC(epilogue_value<TC>(acc, gm, gn, alpha, bias, epi));
		};
		struct alignas(2 * sizeof(TC)) Pair {
			TC v[2];
		};
		static_assert(decltype(size(tCrC))::value % 2 == 0, "gemm_sm90: odd accumulator count");
		auto is_pair = [&](int i) {  // compile-time after unrolling: the layouts are static
			return get<0>(tCcC(i + 1)) == get<0>(tCcC(i)) &&
			       get<1>(tCcC(i + 1)) == get<1>(tCcC(i)) + 1 &&
			       raw_pointer_cast(&tCgCt(i + 1)) == raw_pointer_cast(&tCgCt(i)) + 1;
		};
		// A whole tile whose column pairs are all aligned (N even, C aligned): no predicate
		// and no branch per pair, the values first and then the stores, so the bias loads
		// of the tile issue together and the elements' arithmetic interleaves. Per pair,
		// with a branch, a load and a store between, the epilogue of GEMM + bias + GELU at
		// K = 768 ran as one dependent chain per thread, as long as the main loop (the
		// H100's ncu: stalls on the bias loads 35%, on fixed-latency dependencies 31%,
		// tensor pipes 22% active). In one run on the H100 (bench/family_ab.sh): bias + GELU
		// 0.47x -> 0.65x cuBLASLt, the plain GEMM at that shape 0.59x -> 0.61x
		if (m0 + int(size<0>(cta_tiler)) <= int(M) && n0 + int(size<1>(cta_tiler)) <= int(N) &&
		    int(N) % 2 == 0 && reinterpret_cast<uintptr_t>(C) % sizeof(Pair) == 0) {
			CUTE_UNROLL
			for (int i = 0; i < size(tCrC); ++i)
				tCrC(i) = epilogue_value<TC>(tCrC(i), m0 + int(get<0>(tCcC(i))),
							     n0 + int(get<1>(tCcC(i))), alpha, bias, epi);
			CUTE_UNROLL
			for (int i = 0; i < size(tCrC); i += 2) {
				if (is_pair(i)) {
					*reinterpret_cast<Pair *>(raw_pointer_cast(&tCgCt(i))) =
						Pair{{TC(tCrC(i)), TC(tCrC(i + 1))}};
				} else {
					tCgCt(i) = TC(tCrC(i));
					tCgCt(i + 1) = TC(tCrC(i + 1));
				}
			}
			continue;
		}
		CUTE_UNROLL
		for (int i = 0; i < size(tCrC); i += 2) {
			int gm = m0 + int(get<0>(tCcC(i)));
			int gn = n0 + int(get<1>(tCcC(i)));
			TC *p = raw_pointer_cast(&tCgCt(i));
			if (is_pair(i) && gm < int(M) && gn + 1 < int(N) &&
			    reinterpret_cast<uintptr_t>(p) % sizeof(Pair) == 0) {
				*reinterpret_cast<Pair *>(p) = Pair{{value(tCrC(i), gm, gn),
								     value(tCrC(i + 1), gm, gn + 1)}};
				continue;
			}
			CUTE_UNROLL
			for (int j = i; j < i + 2; ++j) {
				int jm = m0 + int(get<0>(tCcC(j)));
				int jn = n0 + int(get<1>(tCcC(j)));
				if (jm < int(M) && jn < int(N))
					tCgCt(j) = value(tCrC(j), jm, jn);
			}
		}
	}
}

/*
 * The shared-memory atom for a BMN x BK tile of T: the widest swizzle whose span fits the
 * contiguous extent (K for K-major, M or N for MN-major).
 */
template <class T, GMMA::Major Major, int BMN, int BK>
constexpr auto smem_atom()
{
	constexpr int bytes = (Major == GMMA::Major::K ? BK : BMN) * int(sizeof_bits_v<T>) / 8;
	if constexpr (Major == GMMA::Major::K) {
		if constexpr (bytes % 128 == 0)
			return GMMA::Layout_K_SW128_Atom<T>{};
		else if constexpr (bytes % 64 == 0)
			return GMMA::Layout_K_SW64_Atom<T>{};
		else
			return GMMA::Layout_K_SW32_Atom<T>{};
	} else {
		if constexpr (bytes % 128 == 0)
			return GMMA::Layout_MN_SW128_Atom<T>{};
		else if constexpr (bytes % 64 == 0)
			return GMMA::Layout_MN_SW64_Atom<T>{};
		else
			return GMMA::Layout_MN_SW32_Atom<T>{};
	}
}

/* The order atoms tile a (BMN,BK,PIPE) shared-memory tile in: MN first, or K first. */
template <GMMA::Major Major>
constexpr auto smem_order()
{
	if constexpr (Major == GMMA::Major::MN && CG_P_MN_ORDER == 1)
		return Step<_2,_1,_3>{};
	else
		return Step<_1,_2,_3>{};
}

/*
 * The configuration: tile, stages, smem atoms, MMA atom and TMA atoms, in one place.
 */
using TIn = CG_T_IN;
using TOut = CG_T_OUT;
constexpr int kBM = CG_P_BM;
// fp8 keeps a second set of accumulators (kPromote): 128 x 256 would not fit in registers
constexpr int kBN = sizeof_bits_v<TIn> == 8 && CG_P_BN > 128 ? 128 : CG_P_BN;
constexpr int kBK = CG_P_BK;
constexpr int kInBytes = int(sizeof_bits_v<TIn>) / 8;
constexpr int kStageBytes = (kBM + kBN) * kBK * kInBytes;
// an SM's 228 KB shared by CG_P_CTAS CTAs, less the 1 KB the system keeps per CTA and 1 KB of
// barriers and alignment
constexpr int kSmemMax = 228 * 1024 / CG_P_CTAS - 2048;
constexpr int kStages = CG_P_STAGES < kSmemMax / kStageBytes ? CG_P_STAGES : kSmemMax / kStageBytes;
constexpr int kClusterM = CG_P_CLUSTER_M;
constexpr bool kPingPong = CG_P_PINGPONG == 1;
// tf32 and fp8 WGMMA read K-major operands only: an MN-major one (A col, B row) is transposed
// into the workspace first (kTransA, kTransB), and the GEMM reads the copy (kColA, kColB: the
// layout gemm_run sees)
constexpr bool kKMajorOnly = std::is_same_v<TIn, tfloat32_t> || std::is_same_v<TIn, float_e4m3_t>;
constexpr bool kTransA = kKMajorOnly && CG_A_COL;
constexpr bool kTransB = kKMajorOnly && !CG_B_COL;
constexpr bool kColA = CG_A_COL && !kTransA;
constexpr bool kColB = CG_B_COL || kTransB;
constexpr GMMA::Major kMajorA = kColA ? GMMA::Major::MN : GMMA::Major::K;
constexpr GMMA::Major kMajorB = kColB ? GMMA::Major::K : GMMA::Major::MN;

static_assert(std::is_same_v<TIn, half_t> || std::is_same_v<TIn, bfloat16_t> ||
		      std::is_same_v<TIn, float_e4m3_t> || std::is_same_v<TIn, tfloat32_t>,
	      "gemm_sm90: CG_T_IN must be cute::half_t, cute::bfloat16_t, cute::float_e4m3_t or "
	      "cute::tfloat32_t");
static_assert(!std::is_same_v<TIn, tfloat32_t> || std::is_same_v<TOut, float>,
	      "gemm_sm90: tf32 inputs need fp32 C");
static_assert(std::is_same_v<TOut, half_t> || std::is_same_v<TOut, bfloat16_t> ||
		      std::is_same_v<TOut, float>,
	      "gemm_sm90: CG_T_OUT must be cute::half_t, cute::bfloat16_t or float");
static_assert(!(CG_SPLIT_M && CG_BATCHED), "gemm_sm90: split M and batch do not combine");
static_assert(!(CG_SPLIT_M && CG_A_COL), "gemm_sm90: split M needs A row-major");
static_assert(CG_OUT_MASK >= 0 && CG_OUT_MASK <= 2, "gemm_sm90: CG_OUT_MASK is 0, 1 or 2");
static_assert(CG_P_BM == 128 || CG_P_BM == 64, "gemm_sm90: CG_P_BM is 128 or 64");
static_assert(CG_P_BN == 128 || CG_P_BN == 256, "gemm_sm90: CG_P_BN is 128 or 256");
static_assert(kBK == 32 || kBK == 64 || kBK == 128, "gemm_sm90: CG_P_BK is 32, 64 or 128");
static_assert(CG_P_STAGES >= 2 && kStages >= 2, "gemm_sm90: CG_P_STAGES >= 2, and 2 must fit");
static_assert(CG_P_PERSISTENT == 0 || CG_P_PERSISTENT == 1, "gemm_sm90: CG_P_PERSISTENT is 0 or 1");
static_assert(kClusterM == 1 || kClusterM == 2, "gemm_sm90: CG_P_CLUSTER_M is 1 or 2");
static_assert(CG_P_CTAS == 1 || CG_P_CTAS == 2, "gemm_sm90: CG_P_CTAS is 1 or 2");
// two CTAs an SM cap a thread at 128 registers (256 threads) or 85 (384): only one 64 x 128
// warpgroup tile of fp32 accumulators (64 a thread) fits, not fp8's second set
static_assert(CG_P_CTAS == 1 || (kBM == 64 && kBN == 128 && sizeof_bits_v<CG_T_IN> != 8),
	      "gemm_sm90: CG_P_CTAS = 2 needs BM = 64, BN = 128 and 16-bit or tf32 inputs");
static_assert(CG_P_MN_ORDER == 0 || CG_P_MN_ORDER == 1, "gemm_sm90: CG_P_MN_ORDER is 0 or 1");
static_assert(CG_P_SPLIT_K >= 1 && CG_P_SPLIT_K <= 8, "gemm_sm90: CG_P_SPLIT_K is 1 to 8");
static_assert(CG_P_PINGPONG == 0 || CG_P_PINGPONG == 1, "gemm_sm90: CG_P_PINGPONG is 0 or 1");
// ping-pong: one warpgroup holds a whole tile's fp32 accumulators (128 a thread at most; fp8
// keeps a second set), and the two MMA warpgroups take the registers of a whole SM
static_assert(!kPingPong || (kBM * kBN * (sizeof_bits_v<CG_T_IN> == 8 ? 2 : 1) <= 128 * 128 &&
			     CG_P_CTAS == 1),
	      "gemm_sm90: CG_P_PINGPONG = 1 needs BM x BN <= 128 x 128 (64 x 128 for fp8) and "
	      "CG_P_CTAS = 1");

/*
 * The pad path's copy: src holds `rows` packed rows of `cols` elements (a row's byte length not
 * a multiple of 16, so most rows start misaligned); dst gets them `ld` elements apart, ld the
 * multiple of 16 bytes above cols, the pad columns as zeros (never read as data: they are
 * outside the TMA extent; zeros keep the workspace free of stale values). Each thread writes
 * one 16-byte vector of a dst row and reads its source with the widest loads the source
 * address allows (16, 8 or 4 bytes, else one element at a time; neighbouring threads read
 * neighbouring bytes, so the loads coalesce whatever their width). E is the element as a raw
 * unsigned integer of its size.
 */
template <class E>
__global__ void pad_rows(E const *__restrict__ src, E *__restrict__ dst, int64_t rows,
			 int64_t cols, int64_t ld)
{
	constexpr int V = 16 / int(sizeof(E));
	union Vec {
		uint4 u;
		uint2 h[2];
		uint32_t w[4];
		E e[V];
	};
	int64_t vecs = ld / V;  // 16-byte vectors per dst row
	int64_t total = rows * vecs;
	for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
	     i += int64_t(gridDim.x) * blockDim.x) {
		int64_t r = i / vecs;
		int64_t c = (i - r * vecs) * V;
		E const *s = src + r * cols + c;
		uintptr_t a = reinterpret_cast<uintptr_t>(s);
		Vec v;
		if (c + V <= cols && a % 16 == 0) {
			v.u = __ldg(reinterpret_cast<uint4 const *>(s));
		} else if (c + V <= cols && a % 8 == 0) {
			v.h[0] = __ldg(reinterpret_cast<uint2 const *>(s));
			v.h[1] = __ldg(reinterpret_cast<uint2 const *>(s) + 1);
		} else if (c + V <= cols && a % 4 == 0) {
			CUTE_UNROLL
			for (int j = 0; j < 4; ++j)
				v.w[j] = __ldg(reinterpret_cast<uint32_t const *>(s) + j);
		} else {
			CUTE_UNROLL
			for (int j = 0; j < V; ++j)
				v.e[j] = c + j < cols ? __ldg(s + j) : E(0);
		}
		*reinterpret_cast<uint4 *>(dst + r * ld + c) = v.u;
	}
}

/*
 * The transposed copy: src holds L matrices of `rows` x `cols` elements, row-major (an
 * MN-major operand: rows = K); dst gets each transposed, `cols` rows of `ld` elements (ld >=
 * rows, a multiple of 16 bytes; the columns from rows to ld as zeros). 32 x 32 tiles through
 * shared memory, so both the reads (along src rows) and the writes (along dst rows) coalesce.
 */
template <class E>
__global__ void transpose_rows(E const *__restrict__ src, E *__restrict__ dst, int64_t rows,
			       int64_t cols, int64_t ld, int64_t L)
{
	__shared__ E tile[32][33];
	int64_t ty = (ld + 31) / 32;  // tiles along dst rows (src rows, the pad included)
	for (int64_t l = blockIdx.z; l < L; l += gridDim.z)
		for (int64_t by = blockIdx.y; by < ty; by += gridDim.y) {
			E const *s = src + l * rows * cols;
			E *d = dst + l * cols * ld;
			int64_t r0 = by * 32, c0 = int64_t(blockIdx.x) * 32;
			for (int i = threadIdx.y; i < 32; i += blockDim.y) {
				int64_t r = r0 + i, c = c0 + threadIdx.x;
				tile[i][threadIdx.x] = r < rows && c < cols ? __ldg(s + r * cols + c) : E(0);
			}
			__syncthreads();
			for (int i = threadIdx.y; i < 32; i += blockDim.y) {
				int64_t c = c0 + i, r = r0 + threadIdx.x;
				if (c < cols && r < ld)
					d[c * ld + r] = tile[threadIdx.x][i];
			}
			__syncthreads();
		}
}

/* transpose_rows for TIn on stream (the caller checks the launch). */
void transpose_launch(TIn const *src, TIn *dst, int64_t rows, int64_t cols, int64_t ld, int64_t L,
		      cudaStream_t stream)
{
	using E = uint_bit_t<sizeof_bits_v<TIn>>;
	int64_t ty = (ld + 31) / 32;
	dim3 grid(unsigned((cols + 31) / 32), unsigned(ty < 65535 ? ty : 65535),
		  unsigned(L < 65535 ? L : 65535));
	transpose_rows<E><<<grid, dim3(32, 8), 0, stream>>>(reinterpret_cast<E const *>(src),
							    reinterpret_cast<E *>(dst), rows, cols, ld, L);
}

/* pad_rows for TIn on stream (the caller checks the launch with cudaPeekAtLastError). */
void pad_launch(TIn const *src, TIn *dst, int64_t rows, int64_t cols, int64_t ld,
		cudaStream_t stream)
{
	using E = uint_bit_t<sizeof_bits_v<TIn>>;
	int64_t vecs = rows * (ld * kInBytes / 16);
	int64_t blocks = (vecs + 255) / 256;
	pad_rows<E><<<unsigned(blocks < 132 * 16 ? blocks : 132 * 16), 256, 0, stream>>>(
		reinterpret_cast<E const *>(src), reinterpret_cast<E *>(dst), rows, cols, ld);
}

/*
 * A, B, C as (M,K,L), (N,K,L), (M,N,L) views of row-major storage whose rows are lda and ldb
 * elements apart (the real K, M or N, or the padded copy's rounded-up row: 16-byte multiples
 * either way); the extents stay the real M, N, K, so a padded copy's pad columns lie outside
 * the TMA descriptors and are never loaded (TMA zero-fills the out-of-bounds parts of a box).
 */
int gemm_run(int M, int N, int K, int L, float alpha, TIn const *A, int64_t lda, TIn const *B,
	     int64_t ldb, TOut const *bias, TOut *C, float *W, int *counters, cudaStream_t stream)
{
	auto prob_shape = make_shape(M, N, K, L);                          // (M,N,K,L)
	int64_t MN = int64_t(M) * N;
	auto dA = [&] {
		if constexpr (kColA)
			return make_stride(Int<1>{}, lda, int64_t(K) * lda);      // [L,K,lda]: M-major
		else
			return make_stride(lda, Int<1>{}, int64_t(M) * lda);      // [L,M,lda]: K-major
	}();
	auto dB = [&] {
		if constexpr (kColB)
			return make_stride(ldb, Int<1>{}, int64_t(N) * ldb);      // [L,N,ldb]: K-major
		else
			return make_stride(Int<1>{}, ldb, int64_t(K) * ldb);      // [L,K,ldb]: N-major
	}();
	auto dC = make_stride(int64_t(N), Int<1>{}, MN);                     // [L,M,N]

	auto bM = Int<kBM>{};
	auto bN = Int<kBN>{};
	auto bK = Int<kBK>{};
	auto bP = Int<kStages>{};                                            // pipeline stages
	auto cta_tiler = make_shape(bM, bN, bK);                            // (BLK_M,BLK_N,BLK_K)

	auto sA = tile_to_shape(smem_atom<TIn, kMajorA, kBM, kBK>(), make_shape(bM, bK, bP),
				smem_order<kMajorA>());
	auto sB = tile_to_shape(smem_atom<TIn, kMajorB, kBN, kBK>(), make_shape(bN, bK, bP),
				smem_order<kMajorB>());

	// BM / 64 warpgroups stacked along M, each a 64 x BLK_N x (16 or 32) WGMMA per instruction;
	// CG_P_PINGPONG: one warpgroup (two run it, on tiles of their own), BM / 64 WGMMAs along M
	TiledMMA tiled_mma = make_tiled_mma(
		GMMA::ss_op_selector<TIn, TIn, float, Shape<_64, decltype(bN), decltype(bK)>,
				     kMajorA, kMajorB>(),
		Layout<Shape<Int<kPingPong ? 1 : kBM / 64>,_1,_1>>{});

	Tensor mA = make_tensor(A, make_shape(M, K, L), dA);
	Tensor mB = make_tensor(B, make_shape(N, K, L), dB);
	Copy_Atom tmaA = make_tma_atom(SM90_TMA_LOAD{}, mA, sA(_,_,0), make_shape(bM, bK));
	// B is multicast to the kClusterM CTAs of a cluster, each loading a 1/kClusterM slice
	using TmaOpB = conditional_t<(kClusterM > 1), SM90_TMA_LOAD_MULTICAST, SM90_TMA_LOAD>;
	Copy_Atom tmaB = make_tma_atom(TmaOpB{}, mB, sB(_,_,0), make_shape(bN, bK), Int<kClusterM>{});

	int smem_size = int(sizeof(SharedStorage<TIn, TIn, decltype(sA), decltype(sB)>));
	auto kernel = gemm_device<decltype(prob_shape), decltype(cta_tiler),
				  TIn, decltype(sA), decltype(tmaA),
				  TIn, decltype(sB), decltype(tmaB),
				  TOut, decltype(dC), decltype(tiled_mma), CG_EPI_ACT, kClusterM>;
	if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_size) !=
	    cudaSuccess)
		return 3;
	// two CTAs an SM need the largest shared-memory carveout (the driver may pick a smaller one)
	if (CG_P_CTAS > 1 &&
	    cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
				 int(cudaSharedmemCarveoutMaxShared)) != cudaSuccess)
		return 3;
	// Work units: cluster tiles (kClusterM M-tiles each) times k-ranges; a CTA per M-tile
	int k_tiles = (K + kBK - 1) / kBK;
	int splits = CG_P_SPLIT_K < k_tiles ? CG_P_SPLIT_K : k_tiles;
	int64_t ctiles = int64_t(((M + kBM - 1) / kBM + kClusterM - 1) / kClusterM) *
			 ((N + kBN - 1) / kBN) * L * splits;
	if (ctiles * kClusterM > INT32_MAX)
		return 2;
	// a producer warpgroup, then the MMA warpgroups (twice the tiled MMA's with CG_P_PINGPONG)
	dim3 block(cta_threads<decltype(tiled_mma)>());
	cudaLaunchConfig_t config = {};
	cudaLaunchAttribute attr[1];
	attr[0].id = cudaLaunchAttributeClusterDimension;
	attr[0].val.clusterDim.x = kClusterM;
	attr[0].val.clusterDim.y = 1;
	attr[0].val.clusterDim.z = 1;
	config.blockDim = block;
	config.dynamicSmemBytes = smem_size;
	config.stream = stream;
	config.attrs = attr;
	config.numAttrs = kClusterM > 1 ? 1 : 0;
	int clusters = int(ctiles);
	if (CG_P_PERSISTENT) {
		// CG_P_CTAS CTAs per SM (where they fit): as many clusters as can be resident at once
		int dev = 0, sms = 0, resident = 0, per_sm = 0;
		if (cudaGetDevice(&dev) != cudaSuccess ||
		    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
		    sms < 1)
			return 3;
		if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, int(block.x), smem_size) !=
		    cudaSuccess)
			(void)cudaGetLastError();  // keep one per SM
		per_sm = per_sm < 1 ? 1 : per_sm > CG_P_CTAS ? CG_P_CTAS : per_sm;
		resident = sms * per_sm / kClusterM;
		if (kClusterM > 1) {
			config.gridDim = dim3(unsigned(resident * kClusterM));
			int n = 0;
			if (cudaOccupancyMaxActiveClusters(&n, kernel, &config) != cudaSuccess)
				(void)cudaGetLastError();  // keep the SM count; clear it for the check below
			else if (n > 0)
				resident = n < resident ? n : resident;
		}
		clusters = clusters < resident ? clusters : resident;
	} else if (kPingPong) {
		clusters = (clusters + 1) / 2;  // a unit for each of the two MMA warpgroups
	}
	config.gridDim = dim3(unsigned(clusters * kClusterM));
	if constexpr (kClusterM > 1) {
		if (cudaLaunchKernelEx(&config, kernel, prob_shape, cta_tiler, tmaA, tmaB, C, dC, bias,
				       tiled_mma, alpha, CG_EPI_ACT{}, splits, W, counters) != cudaSuccess)
			return 4;
	} else {
		kernel<<<config.gridDim, block, smem_size, stream>>>(prob_shape, cta_tiler, tmaA, tmaB,
								     C, dC, bias, tiled_mma, alpha,
								     CG_EPI_ACT{}, splits, W, counters);
	}
	// #if, not if constexpr: a discarded launch of the template still had nvcc warn (#20280)
	// that its instantiation needs a definition, one warning on every candidate without a split
#if CG_P_SPLIT_K > 1 && !CG_P_REDUCE
	int64_t total = int64_t(M) * N * L;
	int64_t blocks = (total + 255) / 256;
	splitk_reduce<<<unsigned(blocks < 132 * 16 ? blocks : 132 * 16), 256, 0, stream>>>(
		M, N, L, splits, W, C, bias, alpha, CG_EPI_ACT{});
#endif
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
}

template <class T>
bool is_dtype(const DLTensor *t)
{
	DLDataType d = t->dtype;
	if (d.lanes != 1)
		return false;
	if constexpr (std::is_same_v<T, float>)
		return d.code == kDLFloat && d.bits == 32;
	else if constexpr (std::is_same_v<T, half_t>)
		return d.code == kDLFloat && d.bits == 16;
	else if constexpr (std::is_same_v<T, bfloat16_t>)
		return d.code == kDLBfloat && d.bits == 16;
	else if constexpr (std::is_same_v<T, tfloat32_t>)
		return d.code == kDLFloat && d.bits == 32; // fp32 storage, read as tf32
	else
		return d.code == 10 /* kDLFloat8_e4m3fn (DLPack 1.0) */ && d.bits == 8;
}

/* A contiguous row-major device tensor of T with a 16-byte aligned base, or false. */
template <class T>
bool is_dl_tensor(const DLTensor *t, int ndim_min)
{
	if (t->data == nullptr || t->ndim < ndim_min || t->ndim > 8 || !is_dtype<T>(t) ||
	    t->byte_offset != 0 || (uintptr_t)t->data % 16 != 0)
		return false;
	int64_t expect = 1;
	for (int d = t->ndim - 1; d >= 0; --d) {
		if (t->shape[d] < 0)
			return false;
		if (t->strides != nullptr && t->shape[d] > 1 && t->strides[d] != expect)
			return false;
		expect *= t->shape[d];
	}
	return true;
}

} // namespace kernel

using namespace kernel;

/* M, N, K, L of the arguments, checked (dtypes, shapes, contiguity, base alignment): 0, or what
 * cutegen_launch returns for them (1 bad arguments, 2 unsupported). */
static int gemm_shapes(const DLTensor *inputs, int num_inputs, const DLTensor *outputs,
		       int num_outputs, int64_t *pM, int64_t *pN, int64_t *pK, int64_t *pL)
{
	if (num_inputs != 2 + CG_EPI_BIAS || num_outputs != 1 || inputs == nullptr ||
	    outputs == nullptr)
		return 1;
	const DLTensor *a = &inputs[0], *b = &inputs[1];
	const DLTensor *bias = CG_EPI_BIAS ? &inputs[2] : nullptr;
	const DLTensor *c = &outputs[0];
	int nd = CG_BATCHED ? 3 : 2;
	if (!is_dl_tensor<TIn>(a, nd) || !is_dl_tensor<TIn>(b, nd) || !is_dl_tensor<TOut>(c, nd))
		return 1;
	if ((!CG_SPLIT_M && a->ndim != nd) || b->ndim != nd || c->ndim != a->ndim)
		return 1;

	// M, K, L from A; N from B; C must agree
	int64_t L = CG_BATCHED ? a->shape[0] : 1;
	int64_t M = 1, K, N;
	if (CG_SPLIT_M) {
		for (int d = 0; d + 1 < a->ndim; ++d) {
			if (a->shape[d] != c->shape[d])
				return 1;
			M *= a->shape[d];
		}
		K = a->shape[a->ndim - 1];
	} else {
		int r = nd - 2;
		M = CG_A_COL ? a->shape[r + 1] : a->shape[r];
		K = CG_A_COL ? a->shape[r] : a->shape[r + 1];
	}
	{
		int r = nd - 2;
		N = CG_B_COL ? b->shape[r] : b->shape[r + 1];
		int64_t kb = CG_B_COL ? b->shape[r + 1] : b->shape[r];
		if (kb != K || c->shape[c->ndim - 1] != N || (!CG_SPLIT_M && c->shape[r] != M))
			return 1;
		if (CG_BATCHED && (b->shape[0] != L || c->shape[0] != L))
			return 1;
	}
	if (bias && (!is_dl_tensor<TOut>(bias, 1) || bias->ndim != 1 || bias->shape[0] != N))
		return 1;

	// Rows whose byte length is not a multiple of 16 (TMA's stride rule) take the pad path
	// (plan_workspace); K == 0 has no k-tile to run
	if (K == 0)
		return 2;
	if (M >= INT32_MAX || N >= INT32_MAX || K >= INT32_MAX || L >= INT32_MAX)
		return 2;
	*pM = M;
	*pN = N;
	*pK = K;
	*pL = L;
	return 0;
}

/*
 * The workspace: [A padded][B padded][split-K's partials: S raw fp32 copies of C][CG_P_REDUCE:
 * an int count a tile], each part present only where needed and starting at a multiple of 128
 * bytes (the runner's buffer is 256-byte aligned; TMA and pad_rows' vector stores need 16). An
 * operand is padded where the byte length of its rows (its contiguous extent: K for A row and B
 * col, M for A col, N for B row) is not a multiple of 16, which the TMA descriptors need of every
 * stride; it is then copied with rows of `ld` elements, rounded up to the next multiple of 16
 * bytes. An operand tf32/fp8 WGMMA cannot read (MN-major) is always copied, transposed: its rows
 * are then K long.
 */
struct Plan {
	int64_t a_rows, a_cols, lda, a_off;   // A as rows x cols; lda its rows' stride in the
	int64_t b_rows, b_cols, ldb, b_off;   // GEMM; off: where its copy goes, -1 for none
	int64_t w_off, w_floats;              // split-K's partials (0 floats without split-K)
	int64_t c_off, counters;              // CG_P_REDUCE: a count a tile (0 without)
	int64_t bytes;                        // the whole workspace, 0 for none
};

constexpr int64_t kAlign = 16 / kInBytes;                   // elements per 16 bytes
constexpr int64_t kPartialsMax = int64_t(1) << 30;          // floats: 4 GB of partial sums
constexpr int64_t kWorkspaceMax = int64_t(1) << 34;         // bytes, padded copies included

static int64_t round_up(int64_t n, int64_t to)
{
	return (n + to - 1) / to * to;
}

/* The plan for (M,N,K,L): 0, or 2 when it needs more than kPartialsMax / kWorkspaceMax. */
static int plan_workspace(int64_t M, int64_t N, int64_t K, int64_t L, Plan *p)
{
	// as the GEMM reads them: a transposed copy is K-major
	p->a_cols = kColA ? M : K;
	p->a_rows = L * (kColA ? K : M);
	p->b_cols = kColB ? K : N;
	p->b_rows = L * (kColB ? N : K);
	// Sizes are below 2^31 each, their products are not: what could overflow is bounded in
	// double first
	int64_t off = 0;
	bool big = false;
	auto part = [&](int64_t rows, int64_t cols, bool trans, int64_t *ld, int64_t *at) {
		*ld = round_up(cols, kAlign);
		*at = -1;
		if (*ld == cols && !trans)
			return;
		big = big || double(rows) * double(*ld) * kInBytes > double(kWorkspaceMax);
		if (!big) {
			*at = off;
			off = round_up(off + rows * *ld * kInBytes, 128);
		}
	};
	part(p->a_rows, p->a_cols, kTransA, &p->lda, &p->a_off);
	part(p->b_rows, p->b_cols, kTransB, &p->ldb, &p->b_off);
	p->w_off = off;
	p->w_floats = 0;
	if (CG_P_SPLIT_K > 1) {
		big = big || double(CG_P_SPLIT_K) * double(M) * double(N) * double(L) >
				     double(kPartialsMax);
		if (!big)
			p->w_floats = int64_t(CG_P_SPLIT_K) * M * N * L;
	}
	off += p->w_floats * int64_t(sizeof(float));
	p->c_off = off;
	p->counters = 0;
	if (CG_P_SPLIT_K > 1 && CG_P_REDUCE && !big) {
		p->c_off = off = round_up(off, 128);
		p->counters = ((M + kBM - 1) / kBM + kClusterM - 1) / kClusterM * kClusterM *
			      ((N + kBN - 1) / kBN) * L;
		off += p->counters * int64_t(sizeof(int));
	}
	p->bytes = off;
	return big || p->bytes > kWorkspaceMax ? 2 : 0;
}

CUTEGEN_KERNEL size_t cutegen_workspace_bytes(const DLTensor *inputs, int num_inputs,
					      const DLTensor *outputs, int num_outputs,
					      const double *scalars, int num_scalars)
{
	(void)scalars;
	(void)num_scalars;
	int64_t M, N, K, L;
	Plan p;
	if (gemm_shapes(inputs, num_inputs, outputs, num_outputs, &M, &N, &K, &L) ||
	    plan_workspace(M, N, K, L, &p))
		return 0;
	return size_t(p.bytes);
}

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor *outputs,
				  int num_outputs, const double *scalars, int num_scalars,
				  void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
	int64_t M, N, K, L;
	int rc = gemm_shapes(inputs, num_inputs, outputs, num_outputs, &M, &N, &K, &L);
	if (rc)
		return rc;
	if (M == 0 || N == 0 || L == 0)
		return 0;
	Plan p;
	if (plan_workspace(M, N, K, L, &p))
		return 2; /* more than 4 GB of partial sums, or 16 GB in all */
	if (p.bytes > 0 && (workspace == nullptr || workspace_bytes < size_t(p.bytes) ||
			    reinterpret_cast<uintptr_t>(workspace) % 128 != 0))
		return 1;
	float alpha = num_scalars >= 1 && scalars != nullptr ? (float)scalars[0] : 1.0f;
	const DLTensor *bias = CG_EPI_BIAS ? &inputs[2] : nullptr;
	char *ws = static_cast<char *>(workspace);
	TIn const *A = (TIn const *)inputs[0].data;
	TIn const *B = (TIn const *)inputs[1].data;
	// The pad path and the transposed copies: those operands first, copied on the stream the
	// GEMM then runs on (a transposed source is L x K x M for A, L x K x N for B)
	if (p.a_off >= 0) {
		TIn *a = reinterpret_cast<TIn *>(ws + p.a_off);
		if (kTransA)
			transpose_launch(A, a, K, M, p.lda, L, stream);
		else
			pad_launch(A, a, p.a_rows, p.a_cols, p.lda, stream);
		A = a;
	}
	if (p.b_off >= 0) {
		TIn *b = reinterpret_cast<TIn *>(ws + p.b_off);
		if (kTransB)
			transpose_launch(B, b, K, N, p.ldb, L, stream);
		else
			pad_launch(B, b, p.b_rows, p.b_cols, p.ldb, stream);
		B = b;
	}
	if ((p.a_off >= 0 || p.b_off >= 0) && cudaPeekAtLastError() != cudaSuccess)
		return 4;
	// CG_P_REDUCE: the tiles' counts of units done start at zero (the workspace's contents
	// are undefined, and no count survives a call)
	int *counters = p.counters > 0 ? reinterpret_cast<int *>(ws + p.c_off) : nullptr;
	if (counters && cudaMemsetAsync(counters, 0, size_t(p.counters) * sizeof(int), stream) !=
				cudaSuccess)
		return 4;
	return gemm_run((int)M, (int)N, (int)K, (int)L, alpha, A, p.lda, B, p.ldb,
			bias ? (TOut const *)bias->data : nullptr, (TOut *)outputs[0].data,
			p.w_floats > 0 ? reinterpret_cast<float *>(ws + p.w_off) : nullptr,
			counters, stream);
}
