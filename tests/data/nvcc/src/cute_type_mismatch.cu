// Wrong CuTe usage: a rank-2 tiled copy partitions a rank-1 tensor (parser fixture).
#include <cute/tensor.hpp>

using namespace cute;

template <class T>
__global__ void copy_kernel(const T *src, T *dst, int n)
{
	Tensor mS = make_tensor(make_gmem_ptr(src), make_shape(n));   // (N)
	Tensor mD = make_tensor(make_gmem_ptr(dst), make_shape(n));   // (N)
	auto tiled_copy = make_tiled_copy(Copy_Atom<UniversalCopy<T>, T>{},
					  Layout<Shape<_32, _8>>{},
					  Layout<Shape<_1, _4>>{});
	auto thr_copy = tiled_copy.get_slice(threadIdx.x);
	Tensor tS = thr_copy.partition_S(mS);
	Tensor tD = thr_copy.partition_D(mD);
	copy(tiled_copy, tS, tD);
}

void launch(const float *s, float *d, int n)
{
	copy_kernel<float><<<1, 256>>>(s, d, n);
}
