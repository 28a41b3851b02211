// An undefined identifier inside a kernel template (test fixture for the diagnostics parser).
#include <cute/tensor.hpp>

using namespace cute;

template <class T>
__global__ void scale(T *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] * scale_factor;
}

void launch(float *x, int n)
{
	scale<float><<<(n + 255) / 256, 256>>>(x, n);
}
