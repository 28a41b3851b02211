// Static shared memory past the 227 KiB an sm_90 block may use: ptxas rejects it.
__global__ void big_smem(float *x)
{
	__shared__ float buf[64 * 1024];
	buf[threadIdx.x] = x[threadIdx.x];
	__syncthreads();
	x[threadIdx.x] = buf[(threadIdx.x + 1) % 256];
}
