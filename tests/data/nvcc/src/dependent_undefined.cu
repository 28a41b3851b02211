// A name that depends on a template parameter is looked up at instantiation: the error carries
// a one-frame "detected during instantiation of" context (parser fixture).
template <class T>
__device__ T twice(T v) { return v + v; }

template <class T>
__global__ void apply(T *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = thrice(x[i]) + twice(x[i]);
}

void launch(float *x, int n)
{
	apply<float><<<(n + 255) / 256, 256>>>(x, n);
}
