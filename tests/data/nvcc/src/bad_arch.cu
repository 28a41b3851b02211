// Compiled for an architecture nvcc does not know (regen.sh passes compute_99): nvcc fatal.
__global__ void k(float *x, int n)
{
	int unused = 3;
	unsigned u = 4;
	if (n < u)
		x[threadIdx.x] = 0.0f;
}
