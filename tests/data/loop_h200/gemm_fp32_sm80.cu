/*
 * Strict fp32 GEMM, C = alpha * A @ B, for the cutegen kernel contract (docs/kernel-abi.md).
 *
 * Row-major A [M,K] (or [L,M,K]), B [K,N] (or [L,K,N], or [K,N] shared by every batch),
 * C [M,N] (or [L,M,N]). FP32 SIMT FMA only: no TF32, no tensor cores, so it meets the
 * `strict` precision contract. The design is CUTLASS's SIMT SGEMM in CuTe, after
 * examples/cute/tutorial/sgemm_sm80.cu:
 *   - 128x128x16 CTA tile, 256 threads, each thread owns an 8x8 block of C held as two 4x4
 *     quads 64 rows/cols apart (a permuted 16x16 TiledMMA of UniversalFMA), so the
 *     shared->register copies are 128-bit LDS; 128 registers, two CTAs per SM;
 *   - a 3-stage cp.async (SM80_CP_ASYNC_CACHEALWAYS) shared-memory pipeline; A is K-major in
 *     global memory and is transposed into an M-major shared tile by 32-bit cp.async (the
 *     pad of 4 floats keeps those stores free of bank conflicts and the LDS.128 aligned);
 *     B is N-major in both and moves in 128-bit cp.async when N % 4 == 0 (else 32-bit);
 *   - partial tiles: M and N by identity tensors and predicates (copy_if), K by shifting
 *     the k-tiles so the one partial tile is the first, read with a k predicate into a
 *     zeroed shared buffer (as CUTLASS's sm80_mma_multistage does).
 * Not for: other layouts (A.T, B.T), bias or activation epilogues, 16-bit inputs; it returns
 * nonzero for arguments it does not handle.
 */
#include <cutegen/kernel_abi.h>

#include <cute/tensor.hpp>

CUTEGEN_DECLARE_ABI();

namespace kernel {

using namespace cute;

template <class TA, class TB, class SmemLayoutA, class SmemLayoutB>
struct SharedStorage {
	ArrayEngine<TA, cosize_v<SmemLayoutA>> A;
	ArrayEngine<TB, cosize_v<SmemLayoutB>> B;
};

template <class ProblemShape, class CtaTiler,
	  class TA, class AStride, class ASmemLayout, class TiledCopyA, class S2RAtomA,
	  class TB, class BStride, class BSmemLayout, class TiledCopyB, class S2RAtomB,
	  class TC, class CStride, class TiledMma, class Alpha>
__global__ static __launch_bounds__(decltype(size(TiledMma{}))::value)
void gemm_device(ProblemShape shape_MNKL, CtaTiler cta_tiler,
		 TA const *A, AStride dA, ASmemLayout sA_layout, TiledCopyA copy_a, S2RAtomA s2r_atom_a,
		 TB const *B, BStride dB, BSmemLayout sB_layout, TiledCopyB copy_b, S2RAtomB s2r_atom_b,
		 TC *C, CStride dC, TiledMma mma, Alpha alpha)
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

	//
	// Full tensors: this CTA's batch
	//
	Tensor mA = make_tensor(make_gmem_ptr(A), select<0,2,3>(shape_MNKL), dA)(_,_,blockIdx.z); // (M,K)
	Tensor mB = make_tensor(make_gmem_ptr(B), select<1,2,3>(shape_MNKL), dB)(_,_,blockIdx.z); // (N,K)
	Tensor mC = make_tensor(make_gmem_ptr(C), select<0,1,3>(shape_MNKL), dC)(_,_,blockIdx.z); // (M,N)

	//
	// CTA tiles
	//
	auto cta_coord = make_coord(blockIdx.x, blockIdx.y, _);              // (m,n,k)
	Tensor gA = local_tile(mA, cta_tiler, cta_coord, Step<_1, X,_1>{});  // (BLK_M,BLK_K,k)
	Tensor gB = local_tile(mB, cta_tiler, cta_coord, Step< X,_1,_1>{});  // (BLK_N,BLK_K,k)
	Tensor gC = local_tile(mC, cta_tiler, cta_coord, Step<_1,_1, X>{});  // (BLK_M,BLK_N)

	// What is left of the problem from this tile's origin; the k residue is in (-BLK_K, 0].
	int m_residue = size<0>(mA) - int(blockIdx.x) * int(size<0>(gA));
	int n_residue = size<0>(mB) - int(blockIdx.y) * int(size<0>(gB));
	int k_residue = size<1>(mA) - int(size<1>(gA)) * int(size<2>(gA));
	// Shift the k-tiles so the partial one comes first: tile 0 covers [k_residue, k_residue+BLK_K)
	// and only its columns >= -k_residue exist; every later tile is whole.
	gA = domain_offset(make_coord(0, k_residue, 0), gA);                 // (BLK_M,BLK_K,k)
	gB = domain_offset(make_coord(0, k_residue, 0), gB);                 // (BLK_N,BLK_K,k)

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
	// One predicate per copy vector along M (N); broadcast over K.
	Tensor tApA = make_tensor<bool>(make_shape(size<1>(tAsA), size<2>(tAsA)), Stride<_1,_0>{}); // (CPY_M,CPY_K)
	Tensor tBpB = make_tensor<bool>(make_shape(size<1>(tBsB), size<2>(tBsB)), Stride<_1,_0>{}); // (CPY_N,CPY_K)
	CUTE_UNROLL
	for (int m = 0; m < size<0>(tApA); ++m)
		tApA(m, 0) = get<0>(tAcA(0, m, 0)) < m_residue;
	CUTE_UNROLL
	for (int n = 0; n < size<0>(tBpB); ++n)
		tBpB(n, 0) = get<0>(tBcB(0, n, 0)) < n_residue;

	//
	// MMA partition and accumulators
	//
	ThrMMA thr_mma = mma.get_slice(threadIdx.x);
	Tensor tCgC = thr_mma.partition_C(gC);                               // (MMA,MMA_M,MMA_N)
	Tensor tCrA = thr_mma.partition_fragment_A(sA(_,_,0));               // (MMA,MMA_M,MMA_K)
	Tensor tCrB = thr_mma.partition_fragment_B(sB(_,_,0));               // (MMA,MMA_N,MMA_K)
	Tensor tCrC = thr_mma.make_fragment_C(tCgC);                         // (MMA,MMA_M,MMA_N)
	CUTE_STATIC_ASSERT_V((shape(tCrC) == take<0,3>(shape(tCgC))));       // (MMA,MMA_M,MMA_N)
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
	// Prologue: tile 0 (the k residue) into stage 0, whole tiles into stages 1..PIPE-2
	//
	auto K_PIPE_MAX = size<3>(tAsA);
	int k_tile_count = size<2>(gA);
	int k_tile_next = 0;

	// Zero the shared tiles so the k columns tile 0 does not read are zeros.
	clear(tAsA);
	clear(tBsB);
	if (k_tile_count <= 0) {
		clear(tApA);
		clear(tBpB);
	}
	CUTE_UNROLL
	for (int k = 0; k < size<2>(tAsA); ++k) {
		if (get<1>(tAcA(0, 0, k)) >= -k_residue)
			copy_if(copy_a, tApA(_, k), tAgA(_,_,k,k_tile_next), tAsA(_,_,k,0));
	}
	CUTE_UNROLL
	for (int k = 0; k < size<2>(tBsB); ++k) {
		if (get<1>(tBcB(0, 0, k)) >= -k_residue)
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
	// Epilogue: C = alpha * acc, predicated on the M and N residues
	//
	Tensor cC = make_identity_tensor(shape(gC));                        // (BLK_M,BLK_N) -> (m,n)
	Tensor tCcC = thr_mma.partition_C(cC);                               // (MMA,MMA_M,MMA_N) -> (m,n)
	CUTE_UNROLL
	for (int i = 0; i < size(tCrC); ++i)
		tCrC(i) = alpha * tCrC(i);
	Tensor tCpC = cute::lazy::transform(tCcC, [&](auto c) {
		return elem_less(c, make_coord(m_residue, n_residue));
	});                                                                  // (MMA,MMA_M,MMA_N)
	copy_if(tCpC, tCrC, tCgC);
}

/*
 * The configuration: every tunable choice of the kernel, in one place. Measured on H200
 * (TFLOP/s): 4096^3 47.4 (cuBLAS 49.7), 8205x5921x2949 43.5; 128x128x8 with 4 stages gave
 * 47.3 and 41.0. kVecB is the width
 * of B's global->shared copy (4: 128-bit cp.async, needs N % 4 == 0 and 16-byte aligned rows;
 * 1: 32-bit, any N).
 */
template <int kVecB>
int gemm_rr(int M, int N, int K, int L, int64_t a_batch, int64_t b_batch, int64_t c_batch,
	    float alpha, float const *A, float const *B, float *C, cudaStream_t stream)
{
	auto prob_shape = make_shape(M, N, K, L);                           // (M,N,K,L)

	// Row-major A (M,K): K-major. Row-major B (K,N) seen as (N,K): N-major. Row-major C.
	auto dA = make_stride(K, Int<1>{}, a_batch);                        // (dM,dK,dL)
	auto dB = make_stride(Int<1>{}, N, b_batch);                        // (dN,dK,dL)
	auto dC = make_stride(N, Int<1>{}, c_batch);                        // (dM,dN,dL)

	auto bM = Int<128>{};
	auto bN = Int<128>{};
	auto bK = Int<16>{};
	auto bP = Int<3>{};                                                  // pipeline stages
	auto cta_tiler = make_shape(bM, bN, bK);                            // (BLK_M,BLK_N,BLK_K)

	// M-major (N-major) shared tiles, columns padded by 4 floats: A's transposing 32-bit
	// stores hit 32 distinct banks and each column stays 16-byte aligned for LDS.128.
	auto sA = make_layout(make_shape(bM, bK, bP),
			      make_stride(Int<1>{}, bM + Int<4>{}, (bM + Int<4>{}) * bK)); // (m,k,p)
	auto sB = make_layout(make_shape(bN, bK, bP),
			      make_stride(Int<1>{}, bN + Int<4>{}, (bN + Int<4>{}) * bK)); // (n,k,p)

	// A: 32x8 threads, k fastest (a warp reads 4 rows x 32 bytes), one float each.
	TiledCopy copyA = make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEALWAYS<float>, float>{},
					  Layout<Shape<_32,_8>, Stride<_8,_1>>{},
					  Layout<Shape<_1,_1>>{});
	// B: n fastest, kVecB floats per cp.async.
	using CopyOpB = SM80_CP_ASYNC_CACHEALWAYS<cute::uint_byte_t<4 * kVecB>>;
	TiledCopy copyB = make_tiled_copy(Copy_Atom<CopyOpB, float>{},
					  Layout<Shape<Int<128 / kVecB>, Int<256 / (128 / kVecB)>>>{},
					  Layout<Shape<Int<kVecB>, _1>>{});

	// 16x16 threads; thread (tm,tn) owns rows {4tm..4tm+3, 64+4tm..64+4tm+3} and the same
	// columns, so its A and B fragments are two 128-bit loads each per k.
	TiledMMA mmaC = make_tiled_mma(UniversalFMA<float, float, float>{},
				       Layout<Shape<_16,_16,_1>>{},
				       Tile<Layout<Shape<_16,_4,_2>, Stride<_4,_1,_64>>,
					    Layout<Shape<_16,_4,_2>, Stride<_4,_1,_64>>,
					    _1>{});
	auto s2r_atom = Copy_Atom<AutoVectorizingCopy, float>{};

	int smem_size = int(sizeof(SharedStorage<float, float, decltype(sA), decltype(sB)>));
	auto kernel = gemm_device<decltype(prob_shape), decltype(cta_tiler),
		float, decltype(dA), decltype(sA), decltype(copyA), decltype(s2r_atom),
		float, decltype(dB), decltype(sB), decltype(copyB), decltype(s2r_atom),
		float, decltype(dC), decltype(mmaC), float>;
	if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_size) !=
	    cudaSuccess)
		return 3;

	dim3 block(size(mmaC));
	dim3 grid(size(ceil_div(M, bM)), size(ceil_div(N, bN)), L);
	kernel<<<grid, block, smem_size, stream>>>(prob_shape, cta_tiler,
		A, dA, sA, copyA, s2r_atom,
		B, dB, sB, copyB, s2r_atom,
		C, dC, mmaC, alpha);
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
}

int is_fp32_contiguous(const DLTensor *t)
{
	if (t->data == nullptr || t->dtype.code != kDLFloat || t->dtype.bits != 32 ||
	    t->dtype.lanes != 1)
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

} // namespace kernel

using namespace kernel;

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor *outputs,
				  int num_outputs, const double *scalars, int num_scalars,
				  void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
	(void)workspace;
	(void)workspace_bytes;
	if (num_inputs != 2 || num_outputs != 1)
		return 1;
	const DLTensor *a = &inputs[0], *b = &inputs[1];
	DLTensor *c = &outputs[0];
	if (!is_fp32_contiguous(a) || !is_fp32_contiguous(b) || !is_fp32_contiguous(c))
		return 1;
	if (a->ndim < 2 || a->ndim > 3 || c->ndim != a->ndim || b->ndim < 2 || b->ndim > a->ndim)
		return 1;

	int64_t L = a->ndim == 3 ? a->shape[0] : 1;
	int64_t M = a->shape[a->ndim - 2], K = a->shape[a->ndim - 1];
	int64_t N = b->shape[b->ndim - 1];
	if (b->shape[b->ndim - 2] != K || c->shape[c->ndim - 2] != M || c->shape[c->ndim - 1] != N)
		return 1;
	if (c->ndim == 3 && c->shape[0] != L)
		return 1;
	if (b->ndim == 3 && b->shape[0] != L)
		return 1;
	// 32-bit coordinates inside one matrix; grid limits on the tile counts.
	const int64_t lim = INT32_MAX;
	if (M * K >= lim || K * N >= lim || M * N >= lim || L > 65535 || (N + 127) / 128 > 65535)
		return 2;
	if (M == 0 || N == 0 || L == 0)
		return 0;

	float alpha = num_scalars >= 1 && scalars != nullptr ? (float)scalars[0] : 1.0f;
	int64_t b_batch = b->ndim == 3 ? K * N : 0;
	const float *A = (const float *)((const char *)a->data + a->byte_offset);
	const float *B = (const float *)((const char *)b->data + b->byte_offset);
	float *C = (float *)((char *)c->data + c->byte_offset);

	bool vec_b = N % 4 == 0 && ((uintptr_t)B % 16) == 0;
	if (vec_b)
		return gemm_rr<4>((int)M, (int)N, (int)K, (int)L, M * K, b_batch, M * N, alpha, A, B, C,
				  stream);
	return gemm_rr<1>((int)M, (int)N, (int)K, (int)L, M * K, b_batch, M * N, alpha, A, B, C,
			  stream);
}
