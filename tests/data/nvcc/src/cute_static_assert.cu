// A layout whose shape and stride are not congruent: a static_assert inside cute fires.
#include <cute/tensor.hpp>

using namespace cute;

template <int M, int N>
__global__ void fill(float *x)
{
	auto layout = make_layout(Shape<Int<M>, Int<N>>{}, Stride<_1>{});
	Tensor t = make_tensor(make_gmem_ptr(x), layout);
	t(threadIdx.x) = 1.0f;
}

void launch(float *x)
{
	fill<4, 8><<<1, 32>>>(x);
}
