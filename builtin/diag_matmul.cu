/*
 * C = diag(a) @ B, i.e. C[i,j] = a[i] * B[i,j] (op diag_matmul), for the cutegen kernel
 * contract (docs/kernel-abi.md): an elementwise kernel over B with a row factor, in the
 * structure of kernels/relu_fp32.cu. a and B are CG_T_IN (float, cute::half_t or
 * cute::bfloat16_t), C is CG_T_OUT (one of the same; CG_T_IN by default); the product is
 * formed in fp32, where the product of two 16-bit values is exact, and rounded once to C.
 *
 * cutegen-space: CG_P_THREADS=128,256,512 CG_P_UNROLL=1,2,4
 * cutegen-start: CG_P_THREADS=256 CG_P_UNROLL=4
 * cutegen-stages: tile=CG_P_UNROLL,CG_P_THREADS
 *
 * Inputs a [N], B [N,M]; output C [N,M]. A tile is CG_P_THREADS x CG_P_UNROLL vectors of one
 * row of B; tile t is row t / col_tiles, column tile t % col_tiles, so a CTA reads a[row]
 * once and every thread issues CG_P_UNROLL independent 16-byte loads and stores, predicated
 * per vector by an identity tensor against M. Vectors are VEC elements, as many as fit 16
 * bytes of the wider of the two types (4 floats, 8 16-bit values), when every row starts
 * aligned to them (M % VEC == 0 and aligned pointers), else 1 element (coalesced scalar
 * accesses) for the whole launch. B is loaded and C stored by two TiledCopies of the same
 * thread and value layout, so a thread's elements of both line up. CTAs stride over the tiles
 * when there are more than a grid can hold.
 * Not for: fp8, broadcasting or strided inputs; short rows (M much smaller than a tile) waste
 * most of each CTA.
 */
#include <cutegen/kernel_abi.h>

#include <cute/tensor.hpp>

CUTEGEN_DECLARE_ABI();

#ifndef CG_P_THREADS
#define CG_P_THREADS 256
#endif
#ifndef CG_P_UNROLL
#define CG_P_UNROLL 4
#endif
#ifndef CG_T_IN
#define CG_T_IN float
#endif
#ifndef CG_T_OUT
#define CG_T_OUT CG_T_IN
#endif

namespace kernel {

using namespace cute;

template <class TA, class TC, class CopyIn, class CopyOut, class CtaTiler>
__global__ static __launch_bounds__(decltype(size(CopyIn{}))::value)
void diag_matmul_device(int64_t n_rows, int64_t m_cols, int64_t col_tiles, TA const *a,
			TA const *b, TC *c, CtaTiler cta_tiler, CopyIn copy_in, CopyOut copy_out)
{
	//
	// Static preconditions
	//
	CUTE_STATIC_ASSERT_V(rank(cta_tiler) == Int<1>{});                        // (BLK)
	CUTE_STATIC_ASSERT_V(size(cta_tiler) % size(copy_in) == Int<0>{});        // whole copy tiles
	CUTE_STATIC_ASSERT_V(size(copy_in) == size(copy_out));                    // NumThreads

	//
	// Full tensors (64-bit row stride)
	//
	Tensor mB = make_tensor(make_gmem_ptr(b), make_shape(n_rows, m_cols),
				make_stride(m_cols, Int<1>{}));                           // (N,M)
	Tensor mC = make_tensor(make_gmem_ptr(c), make_shape(n_rows, m_cols),
				make_stride(m_cols, Int<1>{}));                           // (N,M)
	Tensor cM = make_identity_tensor(make_shape(m_cols));                     // (M) -> j

	ThrCopy thr_in = copy_in.get_slice(threadIdx.x);
	ThrCopy thr_out = copy_out.get_slice(threadIdx.x);

	for (int64_t tile = blockIdx.x; tile < n_rows * col_tiles; tile += gridDim.x) {
		int64_t row = tile / col_tiles;
		auto cta_coord = make_coord(tile - row * col_tiles);

		//
		// CTA tiles of this row
		//
		Tensor gB = local_tile(mB(row, _), cta_tiler, cta_coord);          // (BLK)
		Tensor gC = local_tile(mC(row, _), cta_tiler, cta_coord);          // (BLK)
		Tensor cB = local_tile(cM, cta_tiler, cta_coord);                  // (BLK) -> j

		//
		// Copy partitions: VEC contiguous elements per atom, CPY_N atoms per thread
		//
		Tensor tBgB = thr_in.partition_S(gB);                              // (CPY,CPY_N)
		Tensor tCgC = thr_out.partition_D(gC);                             // (CPY,CPY_N)
		Tensor tBcB = thr_in.partition_S(cB);                              // (CPY,CPY_N) -> j
		CUTE_STATIC_ASSERT_V(size(tBgB) == size(tCgC));                    // the same elements
		Tensor tBpB = make_tensor<bool>(make_shape(size<1>(tBgB)));        // (CPY_N)
		CUTE_UNROLL
		for (int v = 0; v < size(tBpB); ++v)
			tBpB(v) = get<0>(tBcB(0, v)) < m_cols;  // M % VEC == 0: all in or out

		//
		// Load, scale in fp32, round once, store
		//
		float s = float(a[row]);
		Tensor tBrB = make_fragment_like(tBgB);                            // (CPY,CPY_N)
		Tensor tCrC = make_fragment_like(tCgC);                            // (CPY,CPY_N)
		copy_if(copy_in, tBpB, tBgB, tBrB);
		CUTE_UNROLL
		for (int i = 0; i < size(tBrB); ++i)
			tCrC(i) = TC(s * float(tBrB(i)));
		copy_if(copy_out, tBpB, tCrC, tCgC);
	}
}

/*
 * The configuration: kThreads threads, kUnroll vectors of VEC elements per thread per tile.
 */
using TIn = CG_T_IN;
using TOut = CG_T_OUT;
constexpr int kThreads = CG_P_THREADS;
constexpr int kUnroll = CG_P_UNROLL;
constexpr int kVec = 16 / (sizeof(TIn) > sizeof(TOut) ? sizeof(TIn) : sizeof(TOut));
template <class T>
constexpr bool kFloatType = std::is_same<T, float>::value || std::is_same<T, cute::half_t>::value ||
			    std::is_same<T, cute::bfloat16_t>::value;
static_assert(kFloatType<TIn> && kFloatType<TOut>,
	      "diag_matmul: CG_T_IN and CG_T_OUT must be float, cute::half_t or cute::bfloat16_t");
static_assert(kThreads == 128 || kThreads == 256 || kThreads == 512,
	      "diag_matmul: CG_P_THREADS must be 128, 256 or 512");
static_assert(kUnroll == 1 || kUnroll == 2 || kUnroll == 4, "diag_matmul: CG_P_UNROLL must be 1, 2 or 4");

template <int VEC>
int launch_diag_matmul(int64_t n, int64_t m, TIn const *a, TIn const *b, TOut *c,
		       cudaStream_t stream)
{
	using CopyIn = decltype(make_tiled_copy(Copy_Atom<UniversalCopy<cute::uint_byte_t<sizeof(TIn) * VEC>>, TIn>{},
						Layout<Shape<Int<kThreads>>>{},   // threads
						Layout<Shape<Int<VEC>>>{}));       // values per atom
	using CopyOut = decltype(make_tiled_copy(Copy_Atom<UniversalCopy<cute::uint_byte_t<sizeof(TOut) * VEC>>, TOut>{},
						 Layout<Shape<Int<kThreads>>>{},
						 Layout<Shape<Int<VEC>>>{}));
	using CtaTiler = Shape<Int<kThreads * VEC * kUnroll>>;                 // (BLK)

	int64_t col_tiles = ceil_div(m, int64_t(kThreads * VEC * kUnroll));
	if (n > INT64_MAX / col_tiles)
		return 2;
	int64_t blocks = std::min(n * col_tiles, int64_t(INT32_MAX));
	diag_matmul_device<<<dim3((unsigned)blocks), dim3(kThreads), 0, stream>>>(
		n, m, col_tiles, a, b, c, CtaTiler{}, CopyIn{}, CopyOut{});
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
	if (num_inputs != 2 || num_outputs != 1)
		return 1;
	const DLTensor *at = &inputs[0], *bt = &inputs[1];
	DLTensor *ct = &outputs[0];
	if (!is_type<TIn>(at) || !is_type<TIn>(bt) || !is_type<TOut>(ct))
		return 1;
	if (at->ndim != 1 || bt->ndim != 2 || ct->ndim != 2)
		return 1;
	int64_t n = bt->shape[0], m = bt->shape[1];
	if (n < 0 || m < 0 || at->shape[0] != n || ct->shape[0] != n || ct->shape[1] != m)
		return 1;
	// Row-major contiguity (a stride of a size-1 dimension does not matter)
	if ((at->strides && n > 1 && at->strides[0] != 1) ||
	    (bt->strides && ((m > 1 && bt->strides[1] != 1) || (n > 1 && bt->strides[0] != m))) ||
	    (ct->strides && ((m > 1 && ct->strides[1] != 1) || (n > 1 && ct->strides[0] != m))))
		return 1;
	if (n == 0 || m == 0)
		return 0;
	const TIn *a = (const TIn *)((const char *)at->data + at->byte_offset);
	const TIn *b = (const TIn *)((const char *)bt->data + bt->byte_offset);
	TOut *c = (TOut *)((char *)ct->data + ct->byte_offset);
	if (m % kVec == 0 && (uintptr_t)b % (sizeof(TIn) * kVec) == 0 && (uintptr_t)c % (sizeof(TOut) * kVec) == 0)
		return launch_diag_matmul<kVec>(n, m, a, b, c, stream);
	return launch_diag_matmul<1>(n, m, a, b, c, stream);
}
