/*
 * C = diag(a) @ B, i.e. C[i,j] = a[i] * B[i,j] (op diag_matmul), fp32, for the cutegen kernel
 * contract (docs/kernel-abi.md): an elementwise kernel over B with a row factor, in the
 * structure of kernels/relu_fp32.cu.
 *
 * cutegen-space: CG_P_THREADS=128,256,512 CG_P_UNROLL=1,2,4
 * cutegen-start: CG_P_THREADS=256 CG_P_UNROLL=4
 * cutegen-stages: tile=CG_P_UNROLL,CG_P_THREADS
 *
 * Inputs a [N], B [N,M]; output C [N,M]. A tile is CG_P_THREADS x CG_P_UNROLL vectors of one
 * row of B; tile t is row t / col_tiles, column tile t % col_tiles, so a CTA reads a[row]
 * once and every thread issues CG_P_UNROLL independent 16-byte loads and stores, predicated
 * per vector by an identity tensor against M. Vectors are 4 floats when every row starts
 * 16-byte aligned (M % 4 == 0 and aligned pointers), else 1 float (coalesced scalar
 * accesses) for the whole launch. CTAs stride over the tiles when there are more than a grid
 * can hold.
 * Not for: other dtypes, broadcasting or strided inputs; short rows (M much smaller than a
 * tile) waste most of each CTA.
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

namespace kernel {

using namespace cute;

template <class TiledCopy, class CtaTiler>
__global__ static __launch_bounds__(decltype(size(TiledCopy{}))::value)
void diag_matmul_device(int64_t n_rows, int64_t m_cols, int64_t col_tiles, float const *a,
			float const *b, float *c, CtaTiler cta_tiler, TiledCopy tiled_copy)
{
	//
	// Static preconditions
	//
	CUTE_STATIC_ASSERT_V(rank(cta_tiler) == Int<1>{});                        // (BLK)
	CUTE_STATIC_ASSERT_V(size(cta_tiler) % size(tiled_copy) == Int<0>{});      // whole copy tiles

	//
	// Full tensors (64-bit row stride)
	//
	Tensor mB = make_tensor(make_gmem_ptr(b), make_shape(n_rows, m_cols),
				make_stride(m_cols, Int<1>{}));                           // (N,M)
	Tensor mC = make_tensor(make_gmem_ptr(c), make_shape(n_rows, m_cols),
				make_stride(m_cols, Int<1>{}));                           // (N,M)
	Tensor cM = make_identity_tensor(make_shape(m_cols));                     // (M) -> j

	ThrCopy thr_copy = tiled_copy.get_slice(threadIdx.x);

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
		Tensor tBgB = thr_copy.partition_S(gB);                            // (CPY,CPY_N)
		Tensor tCgC = thr_copy.partition_D(gC);                            // (CPY,CPY_N)
		Tensor tBcB = thr_copy.partition_S(cB);                            // (CPY,CPY_N) -> j
		Tensor tBpB = make_tensor<bool>(make_shape(size<1>(tBgB)));        // (CPY_N)
		CUTE_UNROLL
		for (int v = 0; v < size(tBpB); ++v)
			tBpB(v) = get<0>(tBcB(0, v)) < m_cols;  // M % VEC == 0: all in or out

		//
		// Load, scale, store
		//
		float s = a[row];
		Tensor tBrB = make_fragment_like(tBgB);                            // (CPY,CPY_N)
		copy_if(tiled_copy, tBpB, tBgB, tBrB);
		CUTE_UNROLL
		for (int i = 0; i < size(tBrB); ++i)
			tBrB(i) = s * tBrB(i);
		copy_if(tiled_copy, tBpB, tBrB, tCgC);
	}
}

/*
 * The configuration: kThreads threads, kUnroll vectors of VEC floats per thread per tile.
 */
constexpr int kThreads = CG_P_THREADS;
constexpr int kUnroll = CG_P_UNROLL;
static_assert(kThreads == 128 || kThreads == 256 || kThreads == 512,
	      "diag_matmul: CG_P_THREADS must be 128, 256 or 512");
static_assert(kUnroll == 1 || kUnroll == 2 || kUnroll == 4, "diag_matmul: CG_P_UNROLL must be 1, 2 or 4");

template <int VEC>
int launch_diag_matmul(int64_t n, int64_t m, float const *a, float const *b, float *c,
		       cudaStream_t stream)
{
	using CopyOp = UniversalCopy<cute::uint_byte_t<4 * VEC>>;
	using TiledCopy = decltype(make_tiled_copy(Copy_Atom<CopyOp, float>{},
						   Layout<Shape<Int<kThreads>>>{},   // threads
						   Layout<Shape<Int<VEC>>>{}));       // values per atom
	using CtaTiler = Shape<Int<kThreads * VEC * kUnroll>>;                 // (BLK)

	int64_t col_tiles = ceil_div(m, int64_t(kThreads * VEC * kUnroll));
	if (n > INT64_MAX / col_tiles)
		return 2;
	int64_t blocks = std::min(n * col_tiles, int64_t(INT32_MAX));
	diag_matmul_device<<<dim3((unsigned)blocks), dim3(kThreads), 0, stream>>>(
		n, m, col_tiles, a, b, c, CtaTiler{}, TiledCopy{});
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
}

bool is_f32(const DLTensor *t)
{
	return t->data != nullptr && t->dtype.code == kDLFloat && t->dtype.bits == 32 &&
	       t->dtype.lanes == 1;
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
	if (!is_f32(at) || !is_f32(bt) || !is_f32(ct))
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
	const float *a = (const float *)((const char *)at->data + at->byte_offset);
	const float *b = (const float *)((const char *)bt->data + bt->byte_offset);
	float *c = (float *)((char *)ct->data + ct->byte_offset);
	if (m % 4 == 0 && (uintptr_t)b % 16 == 0 && (uintptr_t)c % 16 == 0)
		return launch_diag_matmul<4>(n, m, a, b, c, stream);
	return launch_diag_matmul<1>(n, m, a, b, c, stream);
}
