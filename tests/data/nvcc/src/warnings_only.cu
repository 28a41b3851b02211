// Compiles, with front-end warnings (parser fixture).
__global__ void k(float *x, int n)
{
	int unused = 3;
	unsigned u = 4;
	if (n < u)
		x[threadIdx.x] = 0.0f;
}
