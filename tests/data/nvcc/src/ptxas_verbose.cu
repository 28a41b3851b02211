// Compiles cleanly; regen.sh adds -Xptxas -v so ptxas prints its info lines (parser fixture).
__global__ void saxpy(float a, const float *x, float *y, int n)
{
	__shared__ float buf[256];
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	buf[threadIdx.x] = i < n ? x[i] : 0.0f;
	__syncthreads();
	if (i < n)
		y[i] = a * buf[threadIdx.x] + y[i];
}
