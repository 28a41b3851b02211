/*
 * kcheck: a developer's check of one cutegen kernel .so on a GPU, without the runner.
 * Loads the .so, makes inputs on the device, runs cutegen_launch, compares with a naive
 * reference computed on the GPU in fp64, and times the kernel with CUDA events.
 * Not the evaluator: no policy, no distributions beyond uniform/normal, no L2 flush.
 *
 *   kcheck relu    SO N0 [N1 ...]       [--bf16] [--offset E] [--dist u|n] [--time]
 *   kcheck softmax SO ROWS COLS         [--log] [--time]
 *   kcheck gemm    SO M N K [--batch L] [--bshared] [--alpha A] [--time]
 *
 * Prints one line: "PASS|FAIL op shape max_err=... [ms=... GB/s|TFLOP/s=...]".
 * Build: nvcc -O2 -std=c++17 -I include -o kcheck tests/kernels/kcheck.cu -ldl
 */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <vector>

#include <cuda_bf16.h>
#include <cutegen/kernel_abi.h>

#define CK(x)                                                                          \
	do {                                                                           \
		cudaError_t e_ = (x);                                                  \
		if (e_ != cudaSuccess) {                                               \
			fprintf(stderr, "cuda error %s at %s:%d\n", cudaGetErrorString(e_), \
				__FILE__, __LINE__);                                   \
			exit(3);                                                       \
		}                                                                      \
	} while (0)

__device__ float hash_uniform(uint64_t i, uint64_t seed)
{
	uint64_t z = i * 0x9E3779B97F4A7C15ull + seed * 0xBF58476D1CE4E5B9ull + 1;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	z ^= z >> 31;
	return (float)((z >> 40) * (1.0 / 16777216.0));  // [0,1)
}

__global__ void init_kernel(float *p, int64_t n, uint64_t seed, int dist, float scale)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
	     i += (int64_t)gridDim.x * blockDim.x) {
		float u = hash_uniform(i, seed);
		if (dist == 1) {  // roughly normal: sum of 4 uniforms, centred
			float s = u + hash_uniform(i, seed + 11) + hash_uniform(i, seed + 23) +
				  hash_uniform(i, seed + 37);
			u = (s - 2.0f) * 1.7320508f;
		}
		p[i] = u * scale;
	}
}

__global__ void f2bf_kernel(const float *a, __nv_bfloat16 *b, int64_t n)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
	     i += (int64_t)gridDim.x * blockDim.x)
		b[i] = __float2bfloat16(a[i]);
}

__global__ void fill_nan(float *p, int64_t n)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
	     i += (int64_t)gridDim.x * blockDim.x)
		p[i] = __int_as_float(0x7fc00000);
}

/* max |got - ref| / (scale_i) over i, with NaN counted as infinite error. */
__device__ unsigned long long g_bad;
__device__ float g_maxerr;

__device__ void atomic_maxf(float *a, float v)
{
	if (!(v == v))
		v = INFINITY;
	atomicMax((int *)a, __float_as_int(v));  // v >= 0
}

__global__ void relu_check(const float *x, const void *y, int64_t n, int bf16)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
	     i += (int64_t)gridDim.x * blockDim.x) {
		float xv = x[i], yv;
		if (bf16) {
			xv = __bfloat162float(__float2bfloat16(xv));
			yv = __bfloat162float(((const __nv_bfloat16 *)y)[i]);
		} else {
			yv = ((const float *)y)[i];
		}
		float r = xv < 0 ? 0.0f : xv;
		float e = fabsf(yv - r);
		if (!(e == 0.0f)) {
			atomicAdd(&g_bad, 1ull);
			atomic_maxf(&g_maxerr, e);
		}
	}
}

/* One block per row, fp64 reference; error relative to max(|ref|, 1e-30) for softmax,
 * absolute for log-softmax (values are O(log cols)). */
__global__ void softmax_check(const float *x, const float *y, int64_t rows, int64_t cols, int log)
{
	__shared__ double red[32];
	__shared__ double bc;
	for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
		const float *xr = x + r * cols;
		const float *yr = y + r * cols;
		double m = -INFINITY;
		for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
			m = fmax(m, (double)xr[c]);
		for (int o = 16; o; o /= 2)
			m = fmax(m, __shfl_xor_sync(~0u, m, o));
		if (threadIdx.x % 32 == 0)
			red[threadIdx.x / 32] = m;
		__syncthreads();
		if (threadIdx.x == 0) {
			double mm = red[0];
			for (int w = 1; w < blockDim.x / 32; ++w)
				mm = fmax(mm, red[w]);
			bc = mm;
		}
		__syncthreads();
		m = bc;
		__syncthreads();
		double s = 0;
		for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
			s += exp((double)xr[c] - m);
		for (int o = 16; o; o /= 2)
			s += __shfl_xor_sync(~0u, s, o);
		if (threadIdx.x % 32 == 0)
			red[threadIdx.x / 32] = s;
		__syncthreads();
		if (threadIdx.x == 0) {
			double ss = 0;
			for (int w = 0; w < blockDim.x / 32; ++w)
				ss += red[w];
			bc = ss;
		}
		__syncthreads();
		s = bc;
		__syncthreads();
		for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
			double ref = log ? ((double)xr[c] - m - ::log(s)) : exp((double)xr[c] - m) / s;
			double e = log ? fabs(yr[c] - ref) / fmax(1.0, fabs(ref))
				       : fabs(yr[c] - ref) / fmax(fabs(ref), 1e-30);
			if (log ? e > 1e-5 : e > 1e-4)
				atomicAdd(&g_bad, 1ull);
			atomic_maxf(&g_maxerr, (float)e);
		}
	}
}

__global__ void bf2f_kernel(const __nv_bfloat16 *a, float *b, int64_t n)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
	     i += (int64_t)gridDim.x * blockDim.x)
		b[i] = __bfloat162float(a[i]);
}

/* C(m,n) vs fp64 sum; error normalized by sum |a||b|. */
__global__ void gemm_check(const float *A, const float *B, const float *C, int64_t L, int64_t M,
			   int64_t N, int64_t K, int bshared, double alpha, double tol)
{
	int64_t total = L * M * N;
	for (int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; idx < total;
	     idx += (int64_t)gridDim.x * blockDim.x) {
		int64_t n = idx % N, m = (idx / N) % M, l = idx / (M * N);
		const float *a = A + l * M * K + m * K;
		const float *b = B + (bshared ? 0 : l * K * N) + n;
		double s = 0, sa = 0;
		for (int64_t k = 0; k < K; ++k) {
			double p = (double)a[k] * (double)b[k * N];
			s += p;
			sa += fabs(p);
		}
		s *= alpha;
		sa *= fabs(alpha);
		double e = fabs((double)C[idx] - s) / fmax(sa, 1e-30);
		if (!(e <= tol))
			atomicAdd(&g_bad, 1ull);
		atomic_maxf(&g_maxerr, (float)e);
	}
}

static cutegen_launch_fn g_launch;

static DLTensor make_t(void *p, std::vector<int64_t> &shape, std::vector<int64_t> &strides, int bf16)
{
	strides.assign(shape.size(), 1);
	for (int i = (int)shape.size() - 2; i >= 0; --i)
		strides[i] = strides[i + 1] * shape[i + 1];
	DLTensor t = {};
	t.data = p;
	t.device = {kDLCUDA, 0};
	t.ndim = (int)shape.size();
	t.dtype = {(uint8_t)(bf16 ? kDLBfloat : kDLFloat), (uint8_t)(bf16 ? 16 : 32), 1};
	t.shape = shape.data();
	t.strides = strides.data();
	return t;
}

static void init(float *p, int64_t n, uint64_t seed, int dist, float scale = 1.0f)
{
	init_kernel<<<2048, 256>>>(p, n, seed, dist, scale);
	CK(cudaGetLastError());
}

static void reset_err()
{
	unsigned long long z = 0;
	float f = 0;
	CK(cudaMemcpyToSymbol(g_bad, &z, sizeof z));
	CK(cudaMemcpyToSymbol(g_maxerr, &f, sizeof f));
}

static void get_err(unsigned long long *bad, float *maxerr)
{
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpyFromSymbol(bad, g_bad, sizeof *bad));
	CK(cudaMemcpyFromSymbol(maxerr, g_maxerr, sizeof *maxerr));
}

template <class F>
static double time_ms(F call, int iters)
{
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	std::vector<float> v;
	cudaEvent_t e0, e1;
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	for (int i = 0; i < 3; ++i)
		call(s);
	for (int i = 0; i < iters; ++i) {
		CK(cudaEventRecord(e0, s));
		int rc = call(s);
		CK(cudaEventRecord(e1, s));
		CK(cudaEventSynchronize(e1));
		if (rc)
			return -rc;
		float ms;
		CK(cudaEventElapsedTime(&ms, e0, e1));
		v.push_back(ms);
	}
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: see the comment at the top of kcheck.cu\n");
		return 2;
	}
	std::string op = argv[1];
	void *h = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 2;
	}
	g_launch = (cutegen_launch_fn)dlsym(h, "cutegen_launch");
	if (!g_launch) {
		fprintf(stderr, "no cutegen_launch\n");
		return 2;
	}
	std::vector<int64_t> dims;
	int bf16 = 0, logsm = 0, do_time = 0, dist = 1, bshared = 0;
	int64_t offset = 0, L = 0;
	double alpha = 1.0;
	for (int i = 3; i < argc; ++i) {
		std::string a = argv[i];
		if (a == "--bf16") bf16 = 1;
		else if (a == "--log") logsm = 1;
		else if (a == "--time") do_time = 1;
		else if (a == "--bshared") bshared = 1;
		else if (a == "--offset") offset = atoll(argv[++i]);
		else if (a == "--batch") L = atoll(argv[++i]);
		else if (a == "--alpha") alpha = atof(argv[++i]);
		else if (a == "--dist") dist = argv[++i][0] == 'n' ? 1 : 0;
		else dims.push_back(atoll(a.c_str()));
	}
	std::string shape_s;
	for (auto d : dims)
		shape_s += (shape_s.empty() ? "" : "x") + std::to_string(d);
	unsigned long long bad = 0;
	float maxerr = 0;
	double ms = 0, rate = 0;
	const char *unit = "";
	int rc = 0;

	if (op == "relu") {
		int64_t n = 1;
		for (auto d : dims)
			n *= d;
		float *x, *y, *xf;
		CK(cudaMalloc(&xf, n * 4));
		CK(cudaMalloc(&x, (n + offset) * 4 + 64));
		CK(cudaMalloc(&y, (n + offset) * 4 + 64));
		init(xf, n, 7, dist);
		int es = bf16 ? 2 : 4;
		char *xp = (char *)x + offset * es, *yp = (char *)y + offset * es;
		if (bf16)
			f2bf_kernel<<<2048, 256>>>(xf, (__nv_bfloat16 *)xp, n);
		else
			CK(cudaMemcpy(xp, xf, n * 4, cudaMemcpyDeviceToDevice));
		fill_nan<<<2048, 256>>>(y, (n + offset) * es / 4 + 16);
		std::vector<int64_t> sx = dims, sy = dims, tx, ty;
		DLTensor in = make_t(xp, sx, tx, bf16), out = make_t(yp, sy, ty, bf16);
		rc = g_launch(&in, 1, &out, 1, nullptr, 0, nullptr, 0, 0);
		CK(cudaDeviceSynchronize());
		reset_err();
		relu_check<<<2048, 256>>>(xf, yp, n, bf16);
		get_err(&bad, &maxerr);
		// guard: the element after the output is untouched (NaN)
		float guard;
		CK(cudaMemcpy(&guard, yp + n * es, 4, cudaMemcpyDeviceToHost));
		if (guard == guard && !bf16)
			bad++;
		if (do_time) {
			ms = time_ms([&](cudaStream_t s) { return g_launch(&in, 1, &out, 1, nullptr, 0, nullptr, 0, s); }, 20);
			rate = 2.0 * n * es / (ms * 1e-3) / 1e9;
			unit = "GB/s";
		}
	} else if (op == "softmax") {
		int64_t rows = dims.at(0), cols = dims.at(1), n = rows * cols;
		float *x, *y;
		CK(cudaMalloc(&x, n * 4));
		CK(cudaMalloc(&y, n * 4 + 64));
		init(x, n, 9, dist, 4.0f);
		fill_nan<<<2048, 256>>>(y, n + 16);
		std::vector<int64_t> sx = dims, sy = dims, tx, ty;
		DLTensor in = make_t(x, sx, tx, 0), out = make_t(y, sy, ty, 0);
		rc = g_launch(&in, 1, &out, 1, nullptr, 0, nullptr, 0, 0);
		CK(cudaDeviceSynchronize());
		reset_err();
		softmax_check<<<std::min<int64_t>(rows, 4096), 256>>>(x, y, rows, cols, logsm);
		get_err(&bad, &maxerr);
		if (do_time) {
			ms = time_ms([&](cudaStream_t s) { return g_launch(&in, 1, &out, 1, nullptr, 0, nullptr, 0, s); }, 20);
			rate = 2.0 * n * 4 / (ms * 1e-3) / 1e9;
			unit = "GB/s";
		}
	} else if (op == "gemm") {
		int64_t M = dims.at(0), N = dims.at(1), K = dims.at(2), Lb = L ? L : 1;
		float *A, *B, *C;
		int64_t nb = (bshared ? 1 : Lb) * K * N;
		CK(cudaMalloc(&A, Lb * M * K * 4 + 64));
		CK(cudaMalloc(&B, nb * 4 + 64));
		CK(cudaMalloc(&C, Lb * M * N * 4 + 64));
		init(A, Lb * M * K, 3, dist);
		init(B, nb, 5, dist);
		fill_nan<<<2048, 256>>>(C, Lb * M * N + 16);
		std::vector<int64_t> sa, sb, sc, ta, tb, tc;
		if (L) {
			sa = {L, M, K};
			sc = {L, M, N};
			sb = bshared ? std::vector<int64_t>{K, N} : std::vector<int64_t>{L, K, N};
		} else {
			sa = {M, K};
			sb = {K, N};
			sc = {M, N};
		}
		// bf16: A and B rounded to bf16 (the float copies too, so the reference sees the
		// same inputs), C in bf16 converted back for the check.
		__nv_bfloat16 *Ah = nullptr, *Bh = nullptr, *Ch = nullptr;
		if (bf16) {
			CK(cudaMalloc(&Ah, Lb * M * K * 2 + 64));
			CK(cudaMalloc(&Bh, nb * 2 + 64));
			CK(cudaMalloc(&Ch, Lb * M * N * 2 + 64));
			f2bf_kernel<<<2048, 256>>>(A, Ah, Lb * M * K);
			f2bf_kernel<<<2048, 256>>>(B, Bh, nb);
			bf2f_kernel<<<2048, 256>>>(Ah, A, Lb * M * K);
			bf2f_kernel<<<2048, 256>>>(Bh, B, nb);
			CK(cudaMemset(Ch, 0xff, Lb * M * N * 2 + 64));  // NaN
		}
		DLTensor in[2] = {make_t(bf16 ? (void *)Ah : A, sa, ta, bf16), make_t(bf16 ? (void *)Bh : B, sb, tb, bf16)};
		DLTensor out = make_t(bf16 ? (void *)Ch : C, sc, tc, bf16);
		double sc_alpha[1] = {alpha};
		rc = g_launch(in, 2, &out, 1, sc_alpha, 1, nullptr, 0, 0);
		CK(cudaDeviceSynchronize());
		if (bf16)
			bf2f_kernel<<<2048, 256>>>(Ch, C, Lb * M * N + 1);
		reset_err();
		gemm_check<<<4096, 256>>>(A, B, C, Lb, M, N, K, bshared, alpha, bf16 ? 8e-3 : 1e-5);
		get_err(&bad, &maxerr);
		float guard;
		CK(cudaMemcpy(&guard, C + Lb * M * N, 4, cudaMemcpyDeviceToHost));
		if (guard == guard)
			bad++;
		if (do_time) {
			ms = time_ms([&](cudaStream_t s) { return g_launch(in, 2, &out, 1, sc_alpha, 1, nullptr, 0, s); }, 10);
			rate = 2.0 * Lb * M * N * K / (ms * 1e-3) / 1e12;
			unit = "TFLOP/s";
		}
	} else {
		fprintf(stderr, "unknown op\n");
		return 2;
	}
	printf("%s %s%s%s %s rc=%d bad=%llu max_err=%.3g", (rc == 0 && bad == 0) ? "PASS" : "FAIL",
	       op.c_str(), bf16 ? "(bf16)" : "", logsm ? "(log)" : "", shape_s.c_str(), rc, bad,
	       maxerr);
	if (do_time)
		printf(" ms=%.4f %s=%.1f", ms, unit, rate);
	printf("\n");
	return (rc == 0 && bad == 0) ? 0 : 1;
}
