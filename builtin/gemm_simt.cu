/*
 * Strict fp32 GEMM family, C = mask(act(alpha * op(A) @ op(B) + bias)), for the cutegen kernel
 * contract (docs/kernel-abi.md) and the builtin agent (builtin/README.md).
 *
 * cutegen-space: CG_P_TILE=128x128,128x64,64x128,64x64 CG_P_BK=8,16,32 CG_P_STAGES=2,3,4 CG_P_SPLIT_K=1,2,4,8,16,32,64
 * cutegen-start: CG_P_TILE=128x128 CG_P_BK=16 CG_P_STAGES=3 CG_P_SPLIT_K=1
 * cutegen-stages: tile=CG_P_TILE,CG_P_BK pipeline=CG_P_STAGES split=CG_P_SPLIT_K
 *
 * What: every fp32 `gemm` task with `strict` precision: A row [M,K] or col [K,M], B row [K,N]
 * or col [N,K], a leading batch L (B may be 2-D and shared), split M (A [m_dims...,K]),
 * symmetric or triangular A/B, an upper/lower output mask, bias [N] and an activation.
 * FP32 SIMT FMA only: no TF32, no tensor cores.
 *
 * How: kernels/gemm_fp32_sm80.cu (CUTLASS's SIMT SGEMM in CuTe) made generic:
 *   - BMxBNxBK CTA tile, always 256 threads as a 16x16 TiledMMA of UniversalFMA; a thread owns
 *     (BM/16)x(BN/16) of C as 4-wide runs 64 rows/cols apart, so every shared->register load
 *     is a 128-bit LDS whatever the tile;
 *   - shared tiles are M-major / N-major (columns padded by 4 floats). An operand that is
 *     MN-major in global memory (A col, B row) moves in 128-bit cp.async (narrower when the
 *     tile has fewer vectors than threads; 32-bit when M or N is not a multiple of 4); a
 *     K-major one (A row, B col) is transposed by 32-bit cp.async, conflict-free thanks to
 *     the pad. A symmetric A (B) is read through its faster layout (A == A^T);
 *   - a STAGES-deep cp.async pipeline over a k range [k_lo, k_hi): the one partial k-tile
 *     comes first and is read with a k predicate into a zeroed shared buffer; M and N
 *     residues by identity tensors and predicates; C leaves in 128-bit stores when N % 4 == 0;
 *   - triangular A/B shrink each CTA's k range to where both are nonzero (upper A and B:
 *     k in [m0, n1)); with an output mask, CTAs whose tile is wholly masked only write zeros,
 *     and the epilogue zeroes masked elements one by one;
 *   - split-K (CG_P_SPLIT_K > 1): blockIdx.z also picks a slice of the CTA's k range; each
 *     slice writes raw partial sums to the workspace [S,L,M,N] and a second kernel sums them
 *     in a fixed order (deterministic, no atomics) and applies alpha, bias, act and the mask.
 *   - 16-bit or fp8 inputs (the fallback for the GEMMs gemm_sm90.cu cannot take: K, or the
 *     MN extent of an MN-major operand, not a multiple of 16 bytes; arches without TMA/WGMMA;
 *     fp8 in other layouts): a first kernel widens A, B (and the bias) to fp32 in the
 *     workspace, the same fp32 SIMT kernel multiplies them, and a 16-bit C is written by the
 *     reduction kernel from raw fp32 sums (fp32 accumulation throughout; correct for every
 *     shape and alignment, not fast: no tensor cores).
 * Not for: TF32. Returns nonzero for arguments it does not handle; a parameter outside the
 * space above is a static_assert.
 */
#include <cutegen/kernel_abi.h>

#include <cute/tensor.hpp>

#include <type_traits>

CUTEGEN_DECLARE_ABI();

// Task macros (builtin/README.md); the defaults are kb1/1, C = A @ B.
#ifndef CG_T_IN
#define CG_T_IN float
#endif
#ifndef CG_T_OUT
#define CG_T_OUT float
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
#ifndef CG_EPI_BIAS
#define CG_EPI_BIAS 0
#endif
#ifndef CG_EPI_ACT
#define CG_EPI_ACT EpiIdentity
#endif

// Parameters (the cutegen-space above).
#ifndef CG_P_TILE_0
#define CG_P_TILE_0 128
#endif
#ifndef CG_P_TILE_1
#define CG_P_TILE_1 128
#endif
#ifndef CG_P_BK
#define CG_P_BK 16
#endif
#ifndef CG_P_STAGES
#define CG_P_STAGES 3
#endif
#ifndef CG_P_SPLIT_K
#define CG_P_SPLIT_K 1
#endif

static_assert(std::is_same<CG_T_IN, float>::value || std::is_same<CG_T_IN, cute::half_t>::value ||
	      std::is_same<CG_T_IN, cute::bfloat16_t>::value ||
	      std::is_same<CG_T_IN, cute::float_e4m3_t>::value,
	      "gemm_simt: CG_T_IN must be float, cute::half_t, cute::bfloat16_t or cute::float_e4m3_t");
static_assert(std::is_same<CG_T_OUT, float>::value ||
	      (!std::is_same<CG_T_IN, float>::value &&
	       (std::is_same<CG_T_OUT, cute::half_t>::value ||
		std::is_same<CG_T_OUT, cute::bfloat16_t>::value)),
	      "gemm_simt: CG_T_OUT must be float (or cute::half_t / cute::bfloat16_t for 16-bit inputs)");
static_assert(CG_P_TILE_0 == 64 || CG_P_TILE_0 == 128, "gemm_simt: CG_P_TILE BM must be 64 or 128");
static_assert(CG_P_TILE_1 == 64 || CG_P_TILE_1 == 128, "gemm_simt: CG_P_TILE BN must be 64 or 128");
static_assert(CG_P_BK == 8 || CG_P_BK == 16 || CG_P_BK == 32, "gemm_simt: CG_P_BK must be 8, 16 or 32");
static_assert(CG_P_STAGES >= 2 && CG_P_STAGES <= 4, "gemm_simt: CG_P_STAGES must be 2, 3 or 4");
static_assert(CG_P_SPLIT_K >= 1 && CG_P_SPLIT_K <= 64 && (CG_P_SPLIT_K & (CG_P_SPLIT_K - 1)) == 0,
	      "gemm_simt: CG_P_SPLIT_K must be a power of two in 1..64");
static_assert(CG_A_STRUCT >= 0 && CG_A_STRUCT <= 3 && CG_B_STRUCT >= 0 && CG_B_STRUCT <= 3,
	      "gemm_simt: CG_A_STRUCT/CG_B_STRUCT must be 0..3");
static_assert(CG_OUT_MASK >= 0 && CG_OUT_MASK <= 2, "gemm_simt: CG_OUT_MASK must be 0, 1 or 2");
static_assert(!(CG_BATCHED && CG_SPLIT_M), "gemm_simt: batched and split-M exclude each other");
static_assert(!(CG_SPLIT_M && CG_A_COL), "gemm_simt: split-M needs a row-major A");

namespace kernel {

using namespace cute;

//
// Epilogue activations (PyTorch semantics), applied to alpha * acc + bias
//
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
struct EpiGeluTanh {
	__device__ float operator()(float x) const
	{
		return 0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
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

/*
 * What the task guarantees and asks beyond the product, and the epilogue's run-time values.
 * kAStruct/kBStruct: 2 upper, 3 lower (anything else: nothing to exploit); kMask: 0 none,
 * 1 upper (C[i][j] = 0 for j < i), 2 lower (for j > i); kSplit: write raw partial sums to
 * the workspace slice of blockIdx.z instead of C.
 */
template <int kAStruct_, int kBStruct_, int kMask_, bool kBias_, bool kSplit_, class Act_>
struct Options {
	static constexpr int kAStruct = kAStruct_;
	static constexpr int kBStruct = kBStruct_;
	static constexpr int kMask = kMask_;
	static constexpr bool kBias = kBias_;
	static constexpr bool kSplit = kSplit_;
	using Act = Act_;

	float alpha;
	float const *bias;    // [N] when kBias
	int splits;           // S: blockIdx.z = l * S + s
	bool vec_c;           // N % 4 == 0 and C (the workspace) 16-byte aligned: 128-bit stores
	int64_t split_stride; // elements between two partial slices (L*M*N) when kSplit

	__host__ __device__ static bool masked(int i, int j)
	{
		return (kMask == 1 && j < i) || (kMask == 2 && j > i);
	}
	// Is every element of rows [m0,m1) x cols [n0,n1) masked?
	__host__ __device__ static bool tile_masked(int m0, int m1, int n0, int n1)
	{
		return (kMask == 1 && n1 <= m0) || (kMask == 2 && m1 <= n0);
	}
	__device__ float finish(float acc, int n) const
	{
		float v = alpha * acc;
		if constexpr (kBias)
			v += bias[n];
		return Act{}(v);
	}
};

template <class TA, class TB, class SmemLayoutA, class SmemLayoutB>
struct SharedStorage {
	ArrayEngine<TA, cosize_v<SmemLayoutA>> A;
	ArrayEngine<TB, cosize_v<SmemLayoutB>> B;
};

template <class ProblemShape, class CtaTiler,
	  class TA, class AStride, class ASmemLayout, class TiledCopyA, class S2RAtomA,
	  class TB, class BStride, class BSmemLayout, class TiledCopyB, class S2RAtomB,
	  class TC, class CStride, class TiledMma, class Opt>
__global__ static __launch_bounds__(decltype(size(TiledMma{}))::value, 2)
void gemm_device(ProblemShape shape_MNKL, CtaTiler cta_tiler,
		 TA const *A, AStride dA, ASmemLayout sA_layout, TiledCopyA copy_a, S2RAtomA s2r_atom_a,
		 TB const *B, BStride dB, BSmemLayout sB_layout, TiledCopyB copy_b, S2RAtomB s2r_atom_b,
		 TC *C, CStride dC, TiledMma mma, Opt opt)
{
	//
	// Static preconditions
	//
	CUTE_STATIC_ASSERT_V(rank(shape_MNKL) == Int<4>{});                 // (M,N,K,L)
	CUTE_STATIC_ASSERT_V(rank(cta_tiler) == Int<3>{});                  // (BLK_M,BLK_N,BLK_K)
	CUTE_STATIC_ASSERT_V(size(copy_a) == size(mma));                    // NumThreads
	CUTE_STATIC_ASSERT_V(size(copy_b) == size(mma));                    // NumThreads
	static_assert(is_static<ASmemLayout>::value);
	static_assert(is_static<BSmemLayout>::value);
	CUTE_STATIC_ASSERT_V(size<0>(ASmemLayout{}) == size<0>(cta_tiler)); // BLK_M
	CUTE_STATIC_ASSERT_V(size<0>(BSmemLayout{}) == size<1>(cta_tiler)); // BLK_N
	CUTE_STATIC_ASSERT_V(size<1>(ASmemLayout{}) == size<2>(cta_tiler)); // BLK_K
	CUTE_STATIC_ASSERT_V(size<1>(BSmemLayout{}) == size<2>(cta_tiler)); // BLK_K
	CUTE_STATIC_ASSERT_V(congruent(select<0,2,3>(shape_MNKL), dA));     // dA for (M,K,L)
	CUTE_STATIC_ASSERT_V(congruent(select<1,2,3>(shape_MNKL), dB));     // dB for (N,K,L)
	CUTE_STATIC_ASSERT_V(congruent(select<0,1,3>(shape_MNKL), dC));     // dC for (M,N,L)

	// blockIdx.z = batch * S + split; with split-K, C is the workspace and the split its slice.
	int split = int(blockIdx.z) % opt.splits;
	int batch = int(blockIdx.z) / opt.splits;
	if constexpr (Opt::kSplit)
		C += int64_t(split) * opt.split_stride;

	//
	// Full tensors: this CTA's batch
	//
	Tensor mA = make_tensor(make_gmem_ptr(A), select<0,2,3>(shape_MNKL), dA)(_,_,batch); // (M,K)
	Tensor mB = make_tensor(make_gmem_ptr(B), select<1,2,3>(shape_MNKL), dB)(_,_,batch); // (N,K)
	Tensor mC = make_tensor(make_gmem_ptr(C), select<0,1,3>(shape_MNKL), dC)(_,_,batch); // (M,N)

	//
	// CTA tiles
	//
	auto cta_coord = make_coord(blockIdx.x, blockIdx.y, _);              // (m,n,k)
	Tensor gA = local_tile(mA, cta_tiler, cta_coord, Step<_1, X,_1>{});  // (BLK_M,BLK_K,k)
	Tensor gB = local_tile(mB, cta_tiler, cta_coord, Step< X,_1,_1>{});  // (BLK_N,BLK_K,k)
	Tensor gC = local_tile(mC, cta_tiler, cta_coord, Step<_1,_1, X>{});  // (BLK_M,BLK_N)

	int M = size<0>(mA), N = size<0>(mB), K = size<1>(mA);
	int m0 = int(blockIdx.x) * int(size<0>(gA));
	int n0 = int(blockIdx.y) * int(size<0>(gB));
	// What is left of the problem from this tile's origin.
	int m_residue = M - m0;
	int n_residue = N - n0;
	int m1 = m0 + min(m_residue, int(size<0>(gA)));                     // rows [m0,m1)
	int n1 = n0 + min(n_residue, int(size<0>(gB)));                     // cols [n0,n1)

	//
	// MMA partition of C and its store (also what a wholly masked tile writes through)
	//
	ThrMMA thr_mma = mma.get_slice(threadIdx.x);
	Tensor tCgC = thr_mma.partition_C(gC);                               // (MMA,MMA_M,MMA_N)
	Tensor tCrC = thr_mma.make_fragment_C(tCgC);                         // (MMA,MMA_M,MMA_N)
	Tensor cC = make_identity_tensor(shape(gC));                        // (BLK_M,BLK_N) -> (m,n)
	Tensor tCcC = thr_mma.partition_C(cC);                               // (MMA,MMA_M,MMA_N) -> (m,n)
	CUTE_STATIC_ASSERT_V((shape(tCrC) == take<0,3>(shape(tCgC))));       // (MMA,MMA_M,MMA_N)
	CUTE_STATIC_ASSERT_V(size<0>(tCrC) == Int<1>{});
	CUTE_STATIC_ASSERT_V(size<2>(tCrC) % Int<4>{} == Int<0>{});

	// tCrC -> tCgC predicated on the M and N residues. A thread's values come in runs of 4
	// along N starting at a multiple of 4 (MmaPerm), so when N % 4 == 0 (vec_c) a run is
	// wholly inside or outside the matrix and goes out as one 128-bit store.
	auto store_c = [&]() {
		if (opt.vec_c) {
			CUTE_UNROLL
			for (int i = 0; i < size<1>(tCrC); ++i) {
				CUTE_UNROLL
				for (int j = 0; j < size<2>(tCrC); j += 4) {
					if (elem_less(tCcC(0,i,j), make_coord(m_residue, n_residue)))
						*reinterpret_cast<float4 *>(&tCgC(0,i,j)) =
							make_float4(tCrC(0,i,j), tCrC(0,i,j+1),
								    tCrC(0,i,j+2), tCrC(0,i,j+3));
				}
			}
		} else {
			CUTE_UNROLL
			for (int i = 0; i < size(tCrC); ++i)
				if (elem_less(tCcC(i), make_coord(m_residue, n_residue)))
					tCgC(i) = tCrC(i);
		}
	};

	if (Opt::tile_masked(m0, m1, n0, n1)) {
		// The split-K reduction writes the zeros of masked elements itself.
		if constexpr (!Opt::kSplit) {
			clear(tCrC);
			store_c();
		}
		return;
	}

	//
	// This CTA's k range [k_lo, k_hi): where triangular A and B can both be nonzero, then
	// this split's slice of it (in whole BLK_K tiles from k_lo)
	//
	int k_lo = 0, k_hi = K;
	if constexpr (Opt::kAStruct == 2) // A[i][k] = 0 for k < i
		k_lo = max(k_lo, m0);
	if constexpr (Opt::kAStruct == 3) // A[i][k] = 0 for k > i
		k_hi = min(k_hi, m1);
	if constexpr (Opt::kBStruct == 2) // B[k][j] = 0 for k > j
		k_hi = min(k_hi, n1);
	if constexpr (Opt::kBStruct == 3) // B[k][j] = 0 for k < j
		k_lo = max(k_lo, n0);
	if constexpr (Opt::kSplit) {
		int64_t len = max(k_hi - k_lo, 0);
		int64_t bk = size<2>(cta_tiler);
		int64_t chunk = (len + opt.splits - 1) / opt.splits;
		chunk = (chunk + bk - 1) / bk * bk;
		int64_t lo = k_lo + int64_t(split) * chunk;
		int64_t hi = lo + chunk;
		k_hi = int(min(hi, int64_t(k_hi)));
		k_lo = int(min(lo, int64_t(k_hi)));
	}
	int bk = size<2>(cta_tiler);
	int k_tiles = k_hi > k_lo ? (k_hi - k_lo + bk - 1) / bk : 0;
	// Shift the k-tiles so the partial one comes first: tile 0 covers [k_start, k_start+BLK_K)
	// and only its columns >= k_skip are in the range; every later tile is whole and the last
	// ends at k_hi.
	int k_start = k_hi - k_tiles * bk;
	int k_skip = k_lo - k_start;                                         // in [0, BLK_K) when k_tiles > 0
	gA = domain_offset(make_coord(0, k_start, 0), gA);                   // (BLK_M,BLK_K,k)
	gB = domain_offset(make_coord(0, k_start, 0), gB);                   // (BLK_N,BLK_K,k)

	//
	// Shared memory
	//
	extern __shared__ char shared_memory[];
	using Storage = SharedStorage<TA, TB, ASmemLayout, BSmemLayout>;
	Storage &smem = *reinterpret_cast<Storage *>(shared_memory);
	Tensor sA = make_tensor(make_smem_ptr(smem.A.begin()), sA_layout);  // (BLK_M,BLK_K,PIPE)
	Tensor sB = make_tensor(make_smem_ptr(smem.B.begin()), sB_layout);  // (BLK_N,BLK_K,PIPE)

	//
	// Copy partitions (global -> shared), with identity tensors for the predicates
	//
	ThrCopy thr_copy_a = copy_a.get_slice(threadIdx.x);
	Tensor tAgA = thr_copy_a.partition_S(gA);                            // (CPY,CPY_M,CPY_K,k)
	Tensor tAsA = thr_copy_a.partition_D(sA);                            // (CPY,CPY_M,CPY_K,PIPE)
	ThrCopy thr_copy_b = copy_b.get_slice(threadIdx.x);
	Tensor tBgB = thr_copy_b.partition_S(gB);                            // (CPY,CPY_N,CPY_K,k)
	Tensor tBsB = thr_copy_b.partition_D(sB);                            // (CPY,CPY_N,CPY_K,PIPE)
	CUTE_STATIC_ASSERT_V(size<1>(tAgA) == size<1>(tAsA));                // CPY_M
	CUTE_STATIC_ASSERT_V(size<2>(tAgA) == size<2>(tAsA));                // CPY_K
	CUTE_STATIC_ASSERT_V(size<1>(tBgB) == size<1>(tBsB));                // CPY_N
	CUTE_STATIC_ASSERT_V(size<2>(tBgB) == size<2>(tBsB));                // CPY_K

	Tensor cA = make_identity_tensor(shape(take<0,2>(sA_layout)));      // (BLK_M,BLK_K) -> (m,k)
	Tensor cB = make_identity_tensor(shape(take<0,2>(sB_layout)));      // (BLK_N,BLK_K) -> (n,k)
	Tensor tAcA = thr_copy_a.partition_S(cA);                            // (CPY,CPY_M,CPY_K) -> (m,k)
	Tensor tBcB = thr_copy_b.partition_S(cB);                            // (CPY,CPY_N,CPY_K) -> (n,k)
	// One predicate per copy vector along M (N); broadcast over K. A vector never straddles
	// the M (N) edge: vectors wider than one float are only used when M (N) % 4 == 0.
	Tensor tApA = make_tensor<bool>(make_shape(size<1>(tAsA), size<2>(tAsA)), Stride<_1,_0>{}); // (CPY_M,CPY_K)
	Tensor tBpB = make_tensor<bool>(make_shape(size<1>(tBsB), size<2>(tBsB)), Stride<_1,_0>{}); // (CPY_N,CPY_K)
	CUTE_UNROLL
	for (int m = 0; m < size<0>(tApA); ++m)
		tApA(m, 0) = get<0>(tAcA(0, m, 0)) < m_residue;
	CUTE_UNROLL
	for (int n = 0; n < size<0>(tBpB); ++n)
		tBpB(n, 0) = get<0>(tBcB(0, n, 0)) < n_residue;

	//
	// MMA fragments and accumulators
	//
	Tensor tCrA = thr_mma.partition_fragment_A(sA(_,_,0));               // (MMA,MMA_M,MMA_K)
	Tensor tCrB = thr_mma.partition_fragment_B(sB(_,_,0));               // (MMA,MMA_N,MMA_K)
	CUTE_STATIC_ASSERT_V((size<1>(tCgC) == size<1>(tCrA)));              // MMA_M
	CUTE_STATIC_ASSERT_V((size<2>(tCgC) == size<1>(tCrB)));              // MMA_N
	clear(tCrC);

	// Shared -> register copies, retiled to the MMA's partitioning.
	TiledCopy s2r_copy_a = make_tiled_copy_A(s2r_atom_a, mma);
	ThrCopy s2r_thr_copy_a = s2r_copy_a.get_slice(threadIdx.x);
	Tensor tXsA = s2r_thr_copy_a.partition_S(sA);                        // (CPY,MMA_M,MMA_K,PIPE)
	Tensor tXrA = s2r_thr_copy_a.retile_D(tCrA);                         // (CPY,MMA_M,MMA_K)
	TiledCopy s2r_copy_b = make_tiled_copy_B(s2r_atom_b, mma);
	ThrCopy s2r_thr_copy_b = s2r_copy_b.get_slice(threadIdx.x);
	Tensor tXsB = s2r_thr_copy_b.partition_S(sB);                        // (CPY,MMA_N,MMA_K,PIPE)
	Tensor tXrB = s2r_thr_copy_b.retile_D(tCrB);                         // (CPY,MMA_N,MMA_K)

	//
	// Prologue: tile 0 (the partial one) into stage 0, whole tiles into stages 1..PIPE-2
	//
	auto K_PIPE_MAX = size<3>(tAsA);
	int k_tile_count = k_tiles;
	int k_tile_next = 0;

	// Zero the shared tiles so the k columns tile 0 does not read (and rows/cols past the
	// M/N edge, never written) are zeros.
	clear(tAsA);
	clear(tBsB);
	if (k_tile_count <= 0) {
		clear(tApA);
		clear(tBpB);
	}
	CUTE_UNROLL
	for (int k = 0; k < size<2>(tAsA); ++k) {
		if (get<1>(tAcA(0, 0, k)) >= k_skip)
			copy_if(copy_a, tApA(_, k), tAgA(_,_,k,k_tile_next), tAsA(_,_,k,0));
	}
	CUTE_UNROLL
	for (int k = 0; k < size<2>(tBsB); ++k) {
		if (get<1>(tBcB(0, 0, k)) >= k_skip)
			copy_if(copy_b, tBpB(_, k), tBgB(_,_,k,k_tile_next), tBsB(_,_,k,0));
	}
	cp_async_fence();
	--k_tile_count;
	if (k_tile_count > 0)
		++k_tile_next;

	CUTE_UNROLL
	for (int k_pipe = 1; k_pipe < K_PIPE_MAX - 1; ++k_pipe) {
		if (k_tile_count <= 0) {
			clear(tApA);
			clear(tBpB);
		}
		copy_if(copy_a, tApA, tAgA(_,_,_,k_tile_next), tAsA(_,_,_,k_pipe));
		copy_if(copy_b, tBpB, tBgB(_,_,_,k_tile_next), tBsB(_,_,_,k_pipe));
		cp_async_fence();
		--k_tile_count;
		if (k_tile_count > 0)
			++k_tile_next;
	}

	//
	// Main loop: global->shared PIPE-1 tiles ahead, shared->register one k-block ahead
	//
	int smem_pipe_read = 0;
	int smem_pipe_write = K_PIPE_MAX - 1;
	Tensor tXsA_p = tXsA(_,_,_,smem_pipe_read);
	Tensor tXsB_p = tXsB(_,_,_,smem_pipe_read);
	auto K_BLOCK_MAX = size<2>(tCrA);
	CUTE_STATIC_ASSERT_V(K_BLOCK_MAX == size<2>(tXrA));

	if (K_BLOCK_MAX > 1) {
		cp_async_wait<K_PIPE_MAX - 2>();
		__syncthreads();
		copy(s2r_atom_a, tXsA_p(_,_,Int<0>{}), tXrA(_,_,Int<0>{}));
		copy(s2r_atom_b, tXsB_p(_,_,Int<0>{}), tXrB(_,_,Int<0>{}));
	}

	CUTE_NO_UNROLL
	while (k_tile_count > -(K_PIPE_MAX - 1)) {
		CUTE_UNROLL
		for (int k_block = 0; k_block < K_BLOCK_MAX; ++k_block) {
			if (k_block == K_BLOCK_MAX - 1) {
				tXsA_p = tXsA(_,_,_,smem_pipe_read);
				tXsB_p = tXsB(_,_,_,smem_pipe_read);
				cp_async_wait<K_PIPE_MAX - 2>();
				__syncthreads();
			}
			auto k_block_next = (k_block + Int<1>{}) % K_BLOCK_MAX;
			copy(s2r_atom_a, tXsA_p(_,_,k_block_next), tXrA(_,_,k_block_next));
			copy(s2r_atom_b, tXsB_p(_,_,k_block_next), tXrB(_,_,k_block_next));
			if (k_block == 0) {
				if (k_tile_count <= 0) {
					clear(tApA);
					clear(tBpB);
				}
				copy_if(copy_a, tApA, tAgA(_,_,_,k_tile_next), tAsA(_,_,_,smem_pipe_write));
				copy_if(copy_b, tBpB, tBgB(_,_,_,k_tile_next), tBsB(_,_,_,smem_pipe_write));
				cp_async_fence();
				--k_tile_count;
				if (k_tile_count > 0)
					++k_tile_next;
				smem_pipe_write = smem_pipe_read;
				smem_pipe_read = (smem_pipe_read == K_PIPE_MAX - 1) ? 0 : smem_pipe_read + 1;
			}
			gemm(mma, tCrA(_,_,k_block), tCrB(_,_,k_block), tCrC);
		}
	}
	cp_async_wait<0>();

	//
	// Epilogue: the raw partial sums for split-K, else C = mask(act(alpha * acc + bias))
	//
	if constexpr (!Opt::kSplit) {
		CUTE_UNROLL
		for (int i = 0; i < size(tCrC); ++i) {
			int m = get<0>(tCcC(i)), n = get<1>(tCcC(i));
			// Columns past N are never stored; clamp so the bias read stays in bounds.
			float v = opt.finish(tCrC(i), n0 + min(n, n_residue - 1));
			tCrC(i) = Opt::masked(m0 + m, n0 + n) ? 0.0f : v;
		}
	}
	store_c();
}

/*
 * Split-K second pass: C[l,m,n] = mask(act(alpha * sum_s W[s,l,m,n] + bias[n])), summing the
 * S slices in order so the result does not depend on scheduling.
 */
template <class TC, class Opt>
__global__ static __launch_bounds__(256)
void splitk_reduce(float const *W, TC *C, int64_t count, int M, int N, Opt opt)
{
	int64_t mn = int64_t(M) * N;
	for (int64_t idx = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; idx < count;
	     idx += int64_t(gridDim.x) * blockDim.x) {
		int64_t r = idx % mn;
		int m = int(r / N), n = int(r % N);
		float v = 0.0f;
		if (!Opt::masked(m, n)) {
			float acc = 0.0f;
			for (int s = 0; s < opt.splits; ++s)
				acc += W[s * count + idx];
			v = opt.finish(acc, n);
		}
		C[idx] = static_cast<TC>(v);
	}
}

// Widens n elements of T to fp32 (the 16-bit and fp8 inputs of the fallback path).
template <class T>
__global__ static __launch_bounds__(256)
void widen(T const *src, float *dst, int64_t n)
{
	for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
	     i += int64_t(gridDim.x) * blockDim.x)
		dst[i] = static_cast<float>(src[i]);
}

template <class T>
int widen_launch(T const *src, float *dst, int64_t n, cudaStream_t stream)
{
	int64_t blocks = (n + 255) / 256;
	if (blocks > 8192)
		blocks = 8192;
	if (blocks < 1)
		return 0;
	widen<T><<<dim3((unsigned)blocks), dim3(256), 0, stream>>>(src, dst, n);
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
}

/*
 * The configuration: every tunable choice of the kernel, in one place.
 */
constexpr int kThreads = 256;

// Global->shared copy of one operand tile (kMN x kBK, MN-major in shared memory), 256 threads.
// K-major in global (A row, B col): 32x8 threads, k fastest (a warp reads 4 rows x 32 bytes),
// one float each, transposed by the store. MN-major (A col, B row): mn fastest, V floats per
// cp.async, V = kVec (4, or 1 when M/N is not a multiple of 4) but at most what gives every
// thread one vector of the smallest tiles (64x8: V = 2).
template <int kMN, int kBK, bool kMnMajor, int kVec>
auto make_g2s_copy()
{
	if constexpr (!kMnMajor) {
		return make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEALWAYS<float>, float>{},
				       Layout<Shape<_32,_8>, Stride<_8,_1>>{},
				       Layout<Shape<_1,_1>>{});
	} else {
		constexpr int kV = kVec < kMN * kBK / kThreads ? kVec : kMN * kBK / kThreads;
		static_assert(kV >= 1 && kBK % (kThreads * kV / kMN) == 0, "copy threads do not tile BK");
		using CopyOp = SM80_CP_ASYNC_CACHEALWAYS<cute::uint_byte_t<4 * kV>>;
		return make_tiled_copy(Copy_Atom<CopyOp, float>{},
				       Layout<Shape<Int<kMN / kV>, Int<kThreads * kV / kMN>>>{},
				       Layout<Shape<Int<kV>, _1>>{});
	}
}

// One MMA dimension of kB (64 or 128) over 16 threads: thread t owns 4t..4t+3 (+64 for 128),
// so its fragment of each k column is one (two) 128-bit loads.
template <int kB>
using MmaPerm = Layout<Shape<_16,_4,Int<kB / 64>>, Stride<_4,_1,_64>>;

struct Problem {
	int M, N, K, L;
	int64_t a_batch, b_batch, c_batch; // element strides between batches (0: shared)
	float const *A, *B;
	float *C;                          // C, or the workspace when split
};

/*
 * kAMn/kBMn: A (B) is MN-major in global memory; kVec: 4 when every MN-major operand has
 * its M (N) a multiple of 4 and a 16-byte aligned base, else 1.
 */
template <int kBM, int kBN, int kBK, int kStages, bool kAMn, bool kBMn, int kVec, class Opt>
int gemm_run(Problem const &p, Opt opt, cudaStream_t stream)
{
	auto prob_shape = make_shape(p.M, p.N, p.K, p.L);                   // (M,N,K,L)

	// (M,K) view of A: K-major when row [M,K], M-major when col [K,M] (or symmetric row).
	// (N,K) view of B: N-major when row [K,N], K-major when col [N,K]. Row-major C.
	auto dA = [&] {
		if constexpr (kAMn)
			return make_stride(Int<1>{}, p.M, p.a_batch);               // (dM,dK,dL)
		else
			return make_stride(p.K, Int<1>{}, p.a_batch);
	}();
	auto dB = [&] {
		if constexpr (kBMn)
			return make_stride(Int<1>{}, p.N, p.b_batch);               // (dN,dK,dL)
		else
			return make_stride(p.K, Int<1>{}, p.b_batch);
	}();
	auto dC = make_stride(p.N, Int<1>{}, p.c_batch);                    // (dM,dN,dL)

	auto bM = Int<kBM>{};
	auto bN = Int<kBN>{};
	auto bK = Int<kBK>{};
	auto bP = Int<kStages>{};                                            // pipeline stages
	auto cta_tiler = make_shape(bM, bN, bK);                            // (BLK_M,BLK_N,BLK_K)

	// M-major (N-major) shared tiles, columns padded by 4 floats: the transposing 32-bit
	// stores hit 32 distinct banks and each column stays 16-byte aligned for LDS.128.
	auto sA = make_layout(make_shape(bM, bK, bP),
			      make_stride(Int<1>{}, bM + Int<4>{}, (bM + Int<4>{}) * bK)); // (m,k,p)
	auto sB = make_layout(make_shape(bN, bK, bP),
			      make_stride(Int<1>{}, bN + Int<4>{}, (bN + Int<4>{}) * bK)); // (n,k,p)

	auto copyA = make_g2s_copy<kBM, kBK, kAMn, kVec>();
	auto copyB = make_g2s_copy<kBN, kBK, kBMn, kVec>();

	// 16x16 threads; thread (tm,tn) owns a (BM/16)x(BN/16) block of C in 4-wide runs.
	TiledMMA mmaC = make_tiled_mma(UniversalFMA<float, float, float>{},
				       Layout<Shape<_16,_16,_1>>{},
				       Tile<MmaPerm<kBM>, MmaPerm<kBN>, _1>{});
	static_assert(decltype(size(mmaC))::value == kThreads);
	auto s2r_atom = Copy_Atom<AutoVectorizingCopy, float>{};

	int smem_size = int(sizeof(SharedStorage<float, float, decltype(sA), decltype(sB)>));
	auto kernel = gemm_device<decltype(prob_shape), decltype(cta_tiler),
		float, decltype(dA), decltype(sA), decltype(copyA), decltype(s2r_atom),
		float, decltype(dB), decltype(sB), decltype(copyB), decltype(s2r_atom),
		float, decltype(dC), decltype(mmaC), Opt>;
	if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_size) !=
	    cudaSuccess)
		return 3;

	dim3 block(kThreads);
	dim3 grid((p.M + kBM - 1) / kBM, (p.N + kBN - 1) / kBN, p.L * opt.splits);
	kernel<<<grid, block, smem_size, stream>>>(prob_shape, cta_tiler,
		p.A, dA, sA, copyA, s2r_atom,
		p.B, dB, sB, copyB, s2r_atom,
		p.C, dC, mmaC, opt);
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
}

template <bool kAMn, bool kBMn, class Opt>
int gemm_dispatch(Problem const &p, bool vec, Opt opt, cudaStream_t stream)
{
	constexpr int BM = CG_P_TILE_0, BN = CG_P_TILE_1, BK = CG_P_BK, P = CG_P_STAGES;
	if constexpr (kAMn || kBMn) {
		if (vec)
			return gemm_run<BM, BN, BK, P, kAMn, kBMn, 4>(p, opt, stream);
	}
	return gemm_run<BM, BN, BK, P, kAMn, kBMn, 1>(p, opt, stream);
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
	else
		return d.code == 10 /* kDLFloat8_e4m3fn (DLPack 1.0) */ && d.bits == 8;
}

template <class T>
int is_contiguous(const DLTensor *t)
{
	if (t->data == nullptr || !is_dtype<T>(t))
		return 0;
	int64_t stride = 1;
	for (int d = t->ndim - 1; d >= 0; --d) {
		if (t->shape[d] < 0)
			return 0;
		if (t->strides != nullptr && t->shape[d] > 1 && t->strides[d] != stride)
			return 0;
		stride *= t->shape[d];
	}
	return 1;
}

int64_t numel(const DLTensor *t)
{
	int64_t n = 1;
	for (int d = 0; d < t->ndim; ++d)
		n *= t->shape[d];
	return n;
}

using TIn = CG_T_IN;
using TOut = CG_T_OUT;
constexpr int kSplits = CG_P_SPLIT_K;
constexpr bool kWiden = !std::is_same_v<TIn, float>;      // inputs widened to fp32 first
constexpr bool kRaw = kSplits > 1 || !std::is_same_v<TOut, float>; // raw sums, then reduce
constexpr int64_t kWorkspaceMax = int64_t(1) << 32;

// Floats rounded up to 16 bytes.
int64_t f16b(int64_t n)
{
	return (n + 3) / 4 * 4;
}

/*
 * The workspace, in floats: [raw sums: S copies of C when kRaw][A widened][B widened][bias
 * widened] (each 16-byte aligned); 0 floats when nothing is needed, -1 beyond kWorkspaceMax
 * (the launch then returns 2). Offsets of A, B and the bias into *oa, *ob, *obias.
 */
int64_t workspace_floats(const DLTensor *in, int num_in, const DLTensor *c, int64_t *oa,
			 int64_t *ob, int64_t *obias)
{
	int64_t n = kRaw ? f16b(int64_t(kSplits) * numel(c)) : 0;
	*oa = *ob = *obias = n;
	if (kWiden && num_in >= 2) {
		*oa = n;
		n += f16b(numel(&in[0]));
		*ob = n;
		n += f16b(numel(&in[1]));
		*obias = n;
		if (CG_EPI_BIAS && num_in >= 3)
			n += f16b(numel(&in[2]));
	}
	return n * int64_t(sizeof(float)) <= kWorkspaceMax ? n : -1;
}

} // namespace kernel

using namespace kernel;

CUTEGEN_KERNEL size_t cutegen_workspace_bytes(const DLTensor *inputs, int num_inputs,
					      const DLTensor *outputs, int num_outputs,
					      const double *scalars, int num_scalars)
{
	(void)scalars;
	(void)num_scalars;
	if (num_outputs != 1 || inputs == nullptr || num_inputs != 2 + CG_EPI_BIAS)
		return 0;
	int64_t oa, ob, obias;
	int64_t n = workspace_floats(inputs, num_inputs, &outputs[0], &oa, &ob, &obias);
	return n > 0 ? size_t(n) * sizeof(float) : 0;
}

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor *outputs,
				  int num_outputs, const double *scalars, int num_scalars,
				  void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
	if (num_inputs != 2 + CG_EPI_BIAS || num_outputs != 1)
		return 1;
	const DLTensor *a = &inputs[0], *b = &inputs[1];
	DLTensor *c = &outputs[0];
	if (!is_contiguous<TIn>(a) || !is_contiguous<TIn>(b) || !is_contiguous<TOut>(c))
		return 1;

	// Shapes: batched [L,..]; split-M A [m_dims...,K] and C [m_dims...,N]; else 2-D.
	int64_t L = 1;
	if (CG_BATCHED) {
		if (a->ndim != 3 || c->ndim != 3 || b->ndim < 2 || b->ndim > 3)
			return 1;
		L = a->shape[0];
		if (c->shape[0] != L || (b->ndim == 3 && b->shape[0] != L))
			return 1;
	} else if (CG_SPLIT_M) {
		if (a->ndim < 2 || c->ndim != a->ndim || b->ndim != 2)
			return 1;
		for (int d = 0; d < a->ndim - 2; ++d)
			if (c->shape[d] != a->shape[d])
				return 1;
	} else if (a->ndim != 2 || b->ndim != 2 || c->ndim != 2) {
		return 1;
	}
	int64_t a0 = a->shape[a->ndim - 2], a1 = a->shape[a->ndim - 1];
	int64_t b0 = b->shape[b->ndim - 2], b1 = b->shape[b->ndim - 1];
	int64_t M = CG_A_COL ? a1 : a0, K = CG_A_COL ? a0 : a1;
	int64_t N = CG_B_COL ? b0 : b1, Kb = CG_B_COL ? b1 : b0;
	int64_t c_rows = c->shape[c->ndim - 2];
	if (CG_SPLIT_M) {
		// M and C's rows are the products of the leading dimensions.
		for (int d = 0; d < a->ndim - 2; ++d) {
			M *= a->shape[d];
			c_rows *= c->shape[d];
		}
	}
	if (Kb != K || c_rows != M || c->shape[c->ndim - 1] != N)
		return 1;
	const float *bias = nullptr;
	if (CG_EPI_BIAS) {
		const DLTensor *t = &inputs[2];
		if (!is_contiguous<TOut>(t) || t->ndim != 1 || t->shape[0] != N)
			return 1;
		bias = (const float *)((const char *)t->data + t->byte_offset);
	}
	// Symmetric operands are read through their MN-major layout (A == A^T needs M == K).
	constexpr bool a_sym = CG_A_STRUCT == 1 && !CG_A_COL;
	constexpr bool b_sym = CG_B_STRUCT == 1 && CG_B_COL;
	if ((a_sym && M != K) || (b_sym && N != K))
		return 1;

	// 32-bit coordinates inside one matrix; grid limits.
	const int64_t lim = INT32_MAX;
	if (M * K >= lim || K * N >= lim || M * N >= lim || (N + CG_P_TILE_1 - 1) / CG_P_TILE_1 > 65535 ||
	    (M + CG_P_TILE_0 - 1) / CG_P_TILE_0 > lim || L * kSplits > 65535)
		return 2;
	if (M == 0 || N == 0 || L == 0)
		return 0;

	float alpha = num_scalars >= 1 && scalars != nullptr ? (float)scalars[0] : 1.0f;
	Problem p;
	p.M = (int)M;
	p.N = (int)N;
	p.K = (int)K;
	p.L = (int)L;
	p.a_batch = CG_BATCHED ? M * K : 0;
	p.b_batch = CG_BATCHED && b->ndim == 3 ? K * N : 0;
	p.c_batch = M * N;
	p.A = (const float *)((const char *)a->data + a->byte_offset);
	p.B = (const float *)((const char *)b->data + b->byte_offset);
	TOut *C = (TOut *)((char *)c->data + c->byte_offset);
	p.C = (float *)C; // used only when !kRaw, where TOut is float
	int64_t oa, ob, obias;
	int64_t need = workspace_floats(inputs, num_inputs, c, &oa, &ob, &obias);
	if (need < 0)
		return 2;
	if (need > 0 && (workspace == nullptr || workspace_bytes < size_t(need) * sizeof(float) ||
			 (uintptr_t)workspace % 16 != 0))
		return 1;
	float *ws = (float *)workspace;
	if constexpr (kWiden) {
		int rc = widen_launch((TIn const *)p.A, ws + oa, numel(a), stream);
		if (!rc)
			rc = widen_launch((TIn const *)p.B, ws + ob, numel(b), stream);
		if (!rc && bias)
			rc = widen_launch((TOut const *)bias, ws + obias, N, stream);
		if (rc)
			return rc;
		p.A = ws + oa;
		p.B = ws + ob;
		if (bias)
			bias = ws + obias;
	}

	// Triangular structure is exploited for row-major operands only (where upper/lower
	// is stated of the operand as multiplied).
	constexpr int a_struct = CG_A_COL ? 0 : CG_A_STRUCT;
	constexpr int b_struct = CG_B_COL ? 0 : CG_B_STRUCT;
	using Opt = Options<a_struct, b_struct, CG_OUT_MASK, CG_EPI_BIAS != 0, kRaw, CG_EPI_ACT>;
	Opt opt;
	opt.alpha = alpha;
	opt.bias = bias;
	opt.splits = kSplits;
	opt.split_stride = L * M * N;
	opt.vec_c = N % 4 == 0 && (uintptr_t)C % 16 == 0;
	if (kRaw) {
		p.C = ws;
		opt.vec_c = N % 4 == 0;
	}

	constexpr bool a_mn = CG_A_COL || a_sym;
	constexpr bool b_mn = !CG_B_COL || b_sym;
	bool vec = (!a_mn || (M % 4 == 0 && (uintptr_t)p.A % 16 == 0)) &&
		   (!b_mn || (N % 4 == 0 && (uintptr_t)p.B % 16 == 0));
	int rc = gemm_dispatch<a_mn, b_mn>(p, vec, opt, stream);
	if (kRaw) {
		if (rc != 0)
			return rc;
		int64_t count = L * M * N;
		int64_t blocks = (count + 255) / 256;
		if (blocks > 4096)
			blocks = 4096;
		splitk_reduce<<<dim3((unsigned)blocks), dim3(256), 0, stream>>>(
			(const float *)ws, C, count, (int)M, (int)N, opt);
		rc = cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
	}
	return rc;
}
