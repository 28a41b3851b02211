/*
 * The runner's device code, checked on the GPU without a candidate (tests/gpu/devkern_laws.sh
 * builds and runs it): the input generator's laws (uniform in [0,1) with mean 1/2; normal with
 * mean 0 and variance 1; large within (-R, R); sparse nonzero at the density asked; branches a
 * quarter exactly at a branch point), its determinism (verify_fill finds its own fill intact and
 * one changed element) and seed dependence, and the sampled check (dot products split along K)
 * agreeing with the tiled reference on a matvec of K = 2^20 and a 256^3 GEMM, a wrong element
 * found; the sampled check of a softmax, which computes its sampled rows' statistics. Prints "ok - ..." / "not ok - ..." lines; exit 1 on any failure.
 */
#include "devkern.h"
#include "common/task.h"

#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

static int fails;
static void check(bool ok, const char *what, double a = 0, double b = 0)
{
	printf("%s - %s (%g, %g)\n", ok ? "ok" : "not ok", what, a, b);
	fails += !ok;
}

static std::vector<float> fill_host(const struct dk_fill &f, float *d)
{
	std::vector<float> h((size_t)f.numel);
	dk_fill(d, &f, 0);
	cudaMemcpy(h.data(), d, h.size() * 4, cudaMemcpyDeviceToHost);
	return h;
}

static struct dk_fill base_fill(int dist, int64_t n, uint64_t seed)
{
	struct dk_fill f;
	memset(&f, 0, sizeof(f));
	f.dtype = DK_FP32;
	f.dist = dist;
	f.seed = seed;
	f.numel = n;
	f.rows = 1;
	f.cols = n;
	f.range = 100.0f;
	f.density = 0.01f;
	f.nbranch = 1;
	return f;
}

static void laws(void)
{
	const int64_t n = 1 << 22;
	float *d = NULL;
	cudaMalloc(&d, (size_t)n * 4);
	std::vector<float> h = fill_host(base_fill(DIST_UNIFORM, n, 12345), d);
	double s = 0, lo = 1, hi = 0;
	for (float v : h) {
		s += v;
		lo = fmin(lo, v);
		hi = fmax(hi, v);
	}
	check(fabs(s / n - 0.5) < 2e-3 && lo >= 0 && hi < 1, "uniform: mean 1/2, within [0,1)", s / n, hi);
	h = fill_host(base_fill(DIST_NORMAL, n, 777), d);
	double m = 0, v2 = 0;
	for (float v : h)
		m += v;
	m /= n;
	for (float v : h)
		v2 += (v - m) * (v - m);
	v2 /= n;
	check(fabs(m) < 3e-3 && fabs(v2 - 1) < 5e-3, "normal: mean 0, variance 1", m, v2);
	h = fill_host(base_fill(DIST_LARGE, n, 9), d);
	double amax = 0;
	for (float v : h)
		amax = fmax(amax, fabs(v));
	check(amax <= 100 && amax > 99, "large: within [-100, 100], reaching near it", amax, 100);
	h = fill_host(base_fill(DIST_SPARSE, n, 10), d);
	int64_t nz = 0;
	for (float v : h)
		nz += v != 0;
	check(fabs((double)nz / n - 0.01) < 1e-3, "sparse: nonzero at the density asked (0.01)", (double)nz / n, 0.01);
	struct dk_fill fb = base_fill(DIST_BRANCHES, n, 11);
	fb.branch[0] = 0.5f;
	h = fill_host(fb, d);
	int64_t at = 0;
	for (float v : h)
		at += v == 0.5f;
	check(fabs((double)at / n - 0.25) < 3e-3, "branches: a quarter exactly at the branch point", (double)at / n, 0.25);
	/* determinism: verify_fill re-derives the fill; one changed element is found */
	void *scratch = NULL;
	cudaMalloc(&scratch, dk_scratch_bytes());
	struct dk_fill fu = base_fill(DIST_NORMAL, n, 4242);
	dk_fill(d, &fu, 0);
	unsigned long long bad = 99;
	dk_verify_fill(d, &fu, &bad, scratch, 0);
	check(bad == 0, "verify_fill finds its own fill intact", (double)bad, 0);
	float one = 3.0f;
	cudaMemcpy(d + 1000, &one, 4, cudaMemcpyHostToDevice);
	dk_verify_fill(d, &fu, &bad, scratch, 0);
	check(bad == 1, "verify_fill finds one changed element", (double)bad, 1);
	/* seeds: two seeds give different inputs */
	std::vector<float> a = fill_host(base_fill(DIST_UNIFORM, 4096, 1), d), b = fill_host(base_fill(DIST_UNIFORM, 4096, 2), d);
	int same = 0;
	for (int i = 0; i < 4096; i++)
		same += a[i] == b[i];
	check(same < 8, "two seeds give different inputs", same, 0);
	cudaFree(scratch);
	cudaFree(d);
}

/* the sampled check against the tiled reference: every position of C = ref passes, one moved fails */
static void sampled(int64_t m, int64_t nn, int64_t k, const char *what)
{
	float *A, *B, *ref, *scale, *C;
	cudaMalloc(&A, (size_t)(m * k) * 4);
	cudaMalloc(&B, (size_t)(k * nn) * 4);
	cudaMalloc(&ref, (size_t)(m * nn) * 4);
	cudaMalloc(&scale, (size_t)(m * nn) * 4);
	cudaMalloc(&C, (size_t)(m * nn) * 4);
	struct dk_fill f = base_fill(DIST_NORMAL, m * k, 5);
	f.rows = m;
	f.cols = k;
	dk_fill(A, &f, 0);
	f = base_fill(DIST_NORMAL, k * nn, 6);
	f.rows = k;
	f.cols = nn;
	dk_fill(B, &f, 0);
	dk_gemm g;
	memset(&g, 0, sizeof(g));
	g.a_dtype = g.b_dtype = DK_FP32;
	g.batch = 1;
	g.m = m;
	g.n = nn;
	g.k = k;
	g.A = A;
	g.B = B;
	dk_gemm_ref(&g, ref, scale, NULL, 0); /* the tiled kernel, against which the split dots are checked */
	cudaMemcpy(C, ref, (size_t)(m * nn) * 4, cudaMemcpyDeviceToDevice);
	dk_compare c;
	memset(&c, 0, sizeof(c));
	c.kind = DK_REF_BUFFER;
	c.out_dtype = DK_FP32;
	c.rows = m;
	c.cols = nn;
	c.out = C;
	c.alpha = 1;
	c.eps_scale = ldexp(8 * sqrt((double)k) + 16, -24);
	c.rtol = ldexp(1.0, -22);
	void *scratch = NULL;
	cudaMalloc(&scratch, dk_scratch_bytes());
	int64_t total = m * nn, n = total < DK_MAX_CHECK_SAMPLES ? total : DK_MAX_CHECK_SAMPLES;
	std::vector<long long> idx((size_t)n);
	for (int64_t i = 0; i < n; i++)
		idx[(size_t)i] = (long long)(i * (total / n));
	if (total <= DK_MAX_CHECK_SAMPLES) { /* the reference of a small output: split dots too */
		float *ref2, *scale2;
		cudaMalloc(&ref2, (size_t)total * 4);
		cudaMalloc(&scale2, (size_t)total * 4);
		dk_gemm_ref(&g, ref2, scale2, scratch, 0);
		std::vector<float> r1((size_t)total), r2((size_t)total), s1((size_t)total);
		cudaMemcpy(r1.data(), ref, (size_t)total * 4, cudaMemcpyDeviceToHost);
		cudaMemcpy(r2.data(), ref2, (size_t)total * 4, cudaMemcpyDeviceToHost);
		cudaMemcpy(s1.data(), scale, (size_t)total * 4, cudaMemcpyDeviceToHost);
		double worst = 0;
		for (int64_t i = 0; i < total; i++)
			worst = fmax(worst, fabs((double)r1[i] - r2[i]) / (c.eps_scale * s1[i] + 1e-30));
		char msg[160];
		snprintf(msg, sizeof(msg), "%s: the split-K reference of a small output agrees with the tiled one "
			 "(worst error over tolerance)", what);
		check(worst <= 1.0, msg, worst, 1);
		cudaFree(ref2);
		cudaFree(scale2);
	}
	dk_sample_stats ss;
	cudaEvent_t e0, e1;
	cudaEventCreate(&e0);
	cudaEventCreate(&e1);
	cudaEventRecord(e0, 0);
	int rc = dk_sample_check(&g, &c, idx.data(), (int)n, &ss, scratch, 0);
	cudaEventRecord(e1, 0);
	cudaEventSynchronize(e1);
	float ms = 0;
	cudaEventElapsedTime(&ms, e0, e1);
	char buf[200];
	snprintf(buf, sizeof(buf), "%s: %lld sampled positions agree with the tiled reference (rc, ms)", what, (long long)n);
	check(rc == 0 && ss.bad == 0 && ss.checked == n, buf, rc, ms);
	long long victim = idx[(size_t)(n / 2)];
	float v = 0;
	cudaMemcpy(&v, C + victim, 4, cudaMemcpyDeviceToHost);
	v += 1e6f; /* far beyond any tolerance here (K = 2^20: about 330) */
	cudaMemcpy(C + victim, &v, 4, cudaMemcpyHostToDevice);
	rc = dk_sample_check(&g, &c, idx.data(), (int)n, &ss, scratch, 0);
	snprintf(buf, sizeof(buf), "%s: a wrong element is found at its position", what);
	check(rc == 0 && ss.bad == 1 && ss.first_bad == victim, buf, (double)ss.first_bad, (double)victim);
	cudaFree(A);
	cudaFree(B);
	cudaFree(ref);
	cudaFree(scale);
	cudaFree(C);
	cudaFree(scratch);
}

/* the sampled check of a softmax computes the statistics of its sampled rows itself: with the
 * row statistics wiped, a right output passes and a wrong element is found */
static void sampled_softmax(int64_t rows, int64_t cols)
{
	int64_t total = rows * cols;
	float *x, *y;
	double *rowstat;
	cudaMalloc(&x, (size_t)total * 4);
	cudaMalloc(&y, (size_t)total * 4);
	cudaMalloc(&rowstat, (size_t)rows * 16);
	struct dk_fill f = base_fill(DIST_NORMAL, total, 31);
	f.rows = rows;
	f.cols = cols;
	std::vector<float> h = fill_host(f, x), out((size_t)total);
	for (int64_t r = 0; r < rows; r++) {
		double m = -INFINITY, sum = 0;
		for (int64_t j = 0; j < cols; j++)
			m = fmax(m, h[(size_t)(r * cols + j)]);
		for (int64_t j = 0; j < cols; j++)
			sum += exp(h[(size_t)(r * cols + j)] - m);
		for (int64_t j = 0; j < cols; j++)
			out[(size_t)(r * cols + j)] = (float)(exp(h[(size_t)(r * cols + j)] - m) / sum);
	}
	cudaMemcpy(y, out.data(), (size_t)total * 4, cudaMemcpyHostToDevice);
	cudaMemset(rowstat, 0, (size_t)rows * 16);
	dk_compare c;
	memset(&c, 0, sizeof(c));
	c.kind = DK_REF_SOFTMAX;
	c.out_dtype = DK_FP32;
	c.rows = rows;
	c.cols = cols;
	c.out = y;
	c.x = x;
	c.x_dtype = DK_FP32;
	c.rowstat = rowstat;
	c.rtol = 1e-5 + ldexp(sqrt((double)cols), -23);
	c.atol = 1e-3 / cols;
	void *scratch = NULL;
	cudaMalloc(&scratch, dk_scratch_bytes());
	std::vector<long long> idx(1024);
	for (int i = 0; i < 1024; i++)
		idx[(size_t)i] = (long long)((i * 2654435761ull) % (unsigned long long)total);
	dk_sample_stats ss;
	int rc = dk_sample_check(NULL, &c, idx.data(), 1024, &ss, scratch, 0);
	char buf[160];
	snprintf(buf, sizeof(buf), "softmax %lldx%lld: 1024 sampled positions right, row statistics computed for them",
		 (long long)rows, (long long)cols);
	check(rc == 0 && ss.bad == 0, buf, rc, (double)ss.bad);
	long long victim = idx[500];
	float v = out[(size_t)victim] * 2 + 1e-3f;
	cudaMemcpy(y + victim, &v, 4, cudaMemcpyHostToDevice);
	rc = dk_sample_check(NULL, &c, idx.data(), 1024, &ss, scratch, 0);
	snprintf(buf, sizeof(buf), "softmax %lldx%lld: a wrong element is found", (long long)rows, (long long)cols);
	check(rc == 0 && ss.bad == 1 && ss.first_bad == victim, buf, (double)ss.first_bad, (double)victim);
	cudaFree(x);
	cudaFree(y);
	cudaFree(rowstat);
	cudaFree(scratch);
}

int main(void)
{
	if (cudaSetDevice(0) != cudaSuccess) {
		printf("not ok - no CUDA device\n");
		return 1;
	}
	laws();
	sampled(256, 1, 1 << 20, "matvec K=2^20");
	sampled(256, 256, 256, "GEMM 256^3");
	sampled_softmax(64, 65536);
	sampled_softmax(4096, 1024);
	cudaError_t e = cudaDeviceSynchronize();
	check(e == cudaSuccess, "no CUDA error", (double)e, 0);
	return fails ? 1 : 0;
}
