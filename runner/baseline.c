/*
 * cutegen-baseline: what a candidate is compared with and bounded by, measured in a process
 * that never loads a candidate: cuBLASLt on the task (best of its heuristic candidates, timed
 * under the candidate's protocol: protocol.h), the copy bandwidth of the GPU (the roofline of memory-bound ops), and the compute peak of the
 * task's precision, measured (cuBLASLt on a large square GEMM; an FMA loop for fp32 SIMT) and
 * from the hardware's figures (SMs x clock x operations per clock). cuBLASLt is linked here
 * and nowhere else: the runner, which loads the candidate, has no vendor library to offer it.
 * The evaluator (src/eval/eval.c) runs this first and caches its JSON per task, GPU and driver.
 * Not for: judging a candidate (runner.c).
 *
 *   cutegen-baseline --task TASK.json [--device N] [--quick]   (JSON on stdout)
 *   cutegen-baseline --identify [--device N]   (name, UUID, driver: the cache key; exit 3
 *                                               when there is no device)
 *   cutegen-baseline --precision P [--device N] [--quick]   (a module task: no task for
 *                    cuBLASLt, the copy bandwidth and the peak of contract P alone; P "none"
 *                    gives no peak)
 */
#include "blas.h"
#include "devkern.h"
#include "limits.h"
#include "protocol.h"
#include "common/task.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <cuda_runtime.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TRIALS_MAX 100

struct base {
	const struct task *t;
	int device, quick;
	struct cudaDeviceProp prop;
	cudaStream_t s;
	void *flush;
	size_t flush_bytes;
};

static int dk_of(enum dtype d)
{
	switch (d) {
	case DT_FP16: return DK_FP16;
	case DT_BF16: return DK_BF16;
	case DT_FP8_E4M3: return DK_FP8;
	default: return DK_FP32;
	}
}

/* Median event time of a cuBLASLt plan on its fixed inputs, L2 flushed before each call: the
 * measured compute peak (a bound, not a baseline: time_task times the baseline). -1 on failure. */
static double time_plan(struct base *b, struct blas_plan *p, int trials, double *p10, double *p90)
{
	cudaEvent_t ev[2 * TRIALS_MAX];
	double ms[TRIALS_MAX];
	if (trials > TRIALS_MAX)
		trials = TRIALS_MAX;
	for (int i = 0; i < 3; i++)
		if (blas_plan_run(p, b->s))
			return -1;
	for (int i = 0; i < 2 * trials; i++)
		cudaEventCreate(&ev[i]);
	for (int i = 0; i < trials; i++) {
		dk_flush_l2(b->flush, b->flush_bytes, b->s);
		cudaEventRecord(ev[2 * i], b->s);
		blas_plan_run(p, b->s);
		cudaEventRecord(ev[2 * i + 1], b->s);
	}
	double med = -1;
	if (cudaStreamSynchronize(b->s) == cudaSuccess) {
		for (int i = 0; i < trials; i++) {
			float f = 0;
			cudaEventElapsedTime(&f, ev[2 * i], ev[2 * i + 1]);
			ms[i] = f;
		}
		med = protocol_median(ms, trials);
		if (p10)
			*p10 = ms[trials / 10];
		if (p90)
			*p90 = ms[trials - 1 - trials / 10];
	}
	for (int i = 0; i < 2 * trials; i++)
		cudaEventDestroy(ev[i]);
	cudaGetLastError();
	return med;
}

static double copy_bandwidth_gbps(struct base *b)
{
	size_t bytes = (size_t)1 << 30;
	void *x = NULL, *y = NULL;
	if (cudaMalloc(&x, bytes) || cudaMalloc(&y, bytes)) {
		cudaFree(x);
		cudaGetLastError();
		return -1;
	}
	cudaMemsetAsync(x, 1, bytes, b->s);
	double ms[10];
	cudaEvent_t e0, e1;
	cudaEventCreate(&e0);
	cudaEventCreate(&e1);
	int n = b->quick ? 5 : 10;
	for (int i = 0; i < n; i++) {
		cudaEventRecord(e0, b->s);
		cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice, b->s);
		cudaEventRecord(e1, b->s);
		cudaEventSynchronize(e1);
		float f = 0;
		cudaEventElapsedTime(&f, e0, e1);
		ms[i] = f;
	}
	cudaEventDestroy(e0);
	cudaEventDestroy(e1);
	cudaFree(x);
	cudaFree(y);
	return 2.0 * (double)bytes / (protocol_median(ms, n) * 1e-3) / 1e9;
}

#define MAX_SETS 3 /* input sets the timed calls rotate over, as the runner's */

/* The task's tensors, once per input set (outputs: set 0 only), with the fill of each. */
struct operands {
	struct tensor_spec ts[TASK_MAX_TENSORS];
	int nt, nsets;
	int64_t numel[TASK_MAX_TENSORS], rows[TASK_MAX_TENSORS], cols[TASK_MAX_TENSORS];
	void *d[MAX_SETS][TASK_MAX_TENSORS];
};

static void *operand(struct operands *op, int k, const char *name)
{
	for (int i = 0; i < op->nt; i++)
		if (!strcmp(op->ts[i].name, name))
			return op->d[op->ts[i].is_output ? 0 : k][i];
	return NULL;
}

/* Every input of set k regenerated in distribution dist from seed, as the runner does it
 * (protocol_fill). */
static int fill_set(struct base *b, struct operands *op, int k, enum dist dist, uint64_t seed)
{
	for (int i = 0; i < op->nt; i++) {
		if (op->ts[i].is_output)
			continue;
		struct dk_fill f;
		protocol_fill(b->t, &op->ts[i], i, op->numel[i], op->rows[i], op->cols[i], dist, seed, &f);
		if (dk_fill(op->d[k][i], &f, b->s))
			return -1;
	}
	return 0;
}

/*
 * cuBLASLt on the task, timed under the candidate's protocol (protocol.h): before each timed
 * call, outside the events, the next input set regenerated in a distribution and from a seed
 * drawn then, the output poisoned, the L2 flushed; the time is the largest per-distribution
 * median. Only the checks of the runner are missing (cuBLASLt is trusted); the stream is
 * synchronized after each call as the runner's checks do, so the GPU sees the same gaps.
 * Returns the time, -1 on failure; by_dist, p10/p90 and trials filled.
 */
static double time_task(struct base *b, struct blas_plan *p, struct operands *op, double by_dist[DIST_COUNT],
			double *p10, double *p90, int *ntrials)
{
	const struct task *t = b->t;
	static cudaEvent_t ev[2 * PROTOCOL_MAX_TRIALS];
	double ms[PROTOCOL_MAX_TRIALS];
	enum dist dist[PROTOCOL_MAX_TRIALS];
	int out = -1;
	for (int i = 0; i < op->nt; i++)
		if (op->ts[i].is_output)
			out = i;
	if (out < 0)
		return -1;
	int odt = dk_of(op->ts[out].dtype);
	for (int i = 0; i < 3; i++)
		if (blas_plan_run(p, b->s))
			return -1;
	for (int i = 0; i < 2 * PROTOCOL_MAX_TRIALS; i++)
		cudaEventCreate(&ev[i]);
	double med = -1;
	dk_flush_l2(b->flush, b->flush_bytes, b->s);
	cudaEventRecord(ev[0], b->s);
	blas_plan_run(p, b->s);
	cudaEventRecord(ev[1], b->s);
	float est = 0;
	if (cudaEventSynchronize(ev[1]) || cudaEventElapsedTime(&est, ev[0], ev[1]))
		goto out;
	int trials = protocol_trials(est, b->quick);
	for (int i = 0; i < trials; i++) {
		int k = i % op->nsets;
		dist[i] = protocol_draw_dist(t);
		if (fill_set(b, op, k, dist[i], protocol_draw_seed()) ||
		    blas_plan_bind(p, operand(op, k, "A"), operand(op, k, t->op == OP_MATVEC ? "x" : "B"),
				   operand(op, k, "bias")) ||
		    dk_poison(op->d[0][out], odt, op->numel[out], b->s))
			goto out;
		dk_flush_l2(b->flush, b->flush_bytes, b->s);
		cudaEventRecord(ev[2 * i], b->s);
		int rc = blas_plan_run(p, b->s);
		cudaEventRecord(ev[2 * i + 1], b->s);
		if (rc || cudaStreamSynchronize(b->s))
			goto out;
	}
	for (int i = 0; i < trials; i++) {
		float f = 0;
		cudaEventElapsedTime(&f, ev[2 * i], ev[2 * i + 1]);
		ms[i] = f;
	}
	med = protocol_worst_median(ms, dist, trials, by_dist);
	protocol_median(ms, trials); /* sorts: the percentiles */
	*p10 = ms[trials / 10];
	*p90 = ms[trials - 1 - trials / 10];
	*ntrials = trials;
out:
	blas_plan_bind(p, operand(op, 0, "A"), operand(op, 0, t->op == OP_MATVEC ? "x" : "B"), operand(op, 0, "bias"));
	for (int i = 0; i < 2 * PROTOCOL_MAX_TRIALS; i++)
		cudaEventDestroy(ev[i]);
	cudaGetLastError();
	return med;
}

/* Up to MAX_SETS input sets while they take at most half the free memory, as the runner's. */
static int alloc_operands(struct base *b, struct operands *op, char *err, size_t errlen)
{
	size_t in_bytes = 0, fr = 0, tot = 0;
	op->nt = task_tensors(b->t, op->ts);
	op->nsets = 1;
	for (int i = 0; i < op->nt; i++) {
		int64_t n = 1;
		for (int k = 0; k < op->ts[i].ndim; k++)
			n *= op->ts[i].shape[k];
		op->numel[i] = n;
		op->cols[i] = op->ts[i].shape[op->ts[i].ndim - 1];
		op->rows[i] = op->ts[i].ndim >= 2 ? op->ts[i].shape[op->ts[i].ndim - 2] : 1;
		if (cudaMalloc(&op->d[0][i], (size_t)n * (size_t)dtype_size(op->ts[i].dtype))) {
			snprintf(err, errlen, "no memory for tensor '%s'", op->ts[i].name);
			return -1;
		}
		if (!op->ts[i].is_output)
			in_bytes += (size_t)n * (size_t)dtype_size(op->ts[i].dtype);
	}
	if (cudaMemGetInfo(&fr, &tot))
		return 0;
	for (int k = 1; k < MAX_SETS && in_bytes * (size_t)k <= fr / 2; k++) {
		for (int i = 0; i < op->nt; i++)
			if (!op->ts[i].is_output &&
			    cudaMalloc(&op->d[k][i], (size_t)op->numel[i] * (size_t)dtype_size(op->ts[i].dtype))) {
				cudaGetLastError();
				for (int j = 0; j < op->nt; j++) {
					cudaFree(op->d[k][j]);
					op->d[k][j] = NULL;
				}
				return 0;
			}
		op->nsets = k + 1;
	}
	return 0;
}

static void free_operands(struct operands *op)
{
	for (int k = 0; k < MAX_SETS; k++)
		for (int i = 0; i < op->nt; i++)
			cudaFree(op->d[k][i]);
}

static void add_cublaslt(struct base *b, json_t *o)
{
	const struct task *t = b->t;
	struct operands op;
	memset(&op, 0, sizeof(op));
	char err[256] = "";
	struct blas_plan *p = NULL;
	if (alloc_operands(b, &op, err, sizeof(err)))
		goto out;
	/* the plan is chosen on uniform inputs (a seed no timed call uses), then timed */
	if (fill_set(b, &op, 0, DIST_UNIFORM, 100))
		goto out;
	const void *B = operand(&op, 0, t->op == OP_MATVEC ? "x" : "B");
	int64_t bnumel = 0;
	for (int i = 0; i < op.nt; i++)
		if (!strcmp(op.ts[i].name, t->op == OP_MATVEC ? "x" : "B"))
			bnumel = op.numel[i];
	const void *bias = operand(&op, 0, "bias");
	struct gemm_desc g;
	memset(&g, 0, sizeof(g));
	g.batch = t->batch > 0 ? t->batch : 1;
	g.m = t->m;
	g.n = t->op == OP_MATVEC ? 1 : t->n;
	g.k = t->k;
	g.a_col = t->op == OP_GEMM && t->a_layout == LAYOUT_COL;
	g.b_col = t->op == OP_GEMM && t->b_layout == LAYOUT_COL;
	g.b_batched = g.batch > 1 && bnumel == g.batch * g.k * g.n;
	g.a_dtype = g.b_dtype = dk_of(t->in_dtype);
	g.out_dtype = dk_of(t->out_dtype);
	g.compute = t->precision == PREC_TF32 ? BLAS_TF32 : BLAS_FP32;
	g.alpha = (float)(t->op == OP_GEMM ? t->alpha : 1.0);
	g.bias = bias;
	g.bias_dtype = bias ? dk_of(t->out_dtype) : 0;
	g.epi_act = t->epi_act == ACT_GELU_ERF ? ACT_GELU_TANH : t->epi_act;
	void *C = NULL;
	for (int i = 0; i < op.nt; i++)
		if (op.ts[i].is_output)
			C = op.d[0][i];
	p = blas_plan_new(&g, operand(&op, 0, "A"), B, C, 1, b->s, err, sizeof(err));
	if (!p)
		goto out;
	double by_dist[DIST_COUNT], p10 = 0, p90 = 0;
	int trials = 0;
	double ms = time_task(b, p, &op, by_dist, &p10, &p90, &trials);
	if (ms <= 0) {
		snprintf(err, sizeof(err), "cuBLASLt failed on this task");
		goto out;
	}
	json_t *c = json_object();
	json_object_set_new(c, "kind", json_string("cublaslt"));
	json_object_set_new(c, "protocol", json_string(PROTOCOL_NAME));
	json_object_set_new(c, "median_ms", json_real(ms));
	json_t *bd = json_object();
	for (int d = 0; d < DIST_COUNT; d++)
		if (by_dist[d] >= 0)
			json_object_set_new(bd, dist_name((enum dist)d), json_real(by_dist[d]));
	json_object_set_new(c, "median_ms_by_dist", bd);
	json_object_set_new(c, "p10_ms", json_real(p10));
	json_object_set_new(c, "p90_ms", json_real(p90));
	json_object_set_new(c, "trials", json_integer(trials));
	json_object_set_new(c, "input_sets", json_integer(op.nsets));
	json_object_set_new(c, "algo", json_string(blas_plan_describe(p)));
	json_object_set_new(c, "tflops", json_real(task_flops(t) / (ms * 1e-3) / 1e12));
	json_object_set_new(o, "cublaslt", c);
out:
	if (err[0])
		json_object_set_new(o, "cublaslt_error", json_string(err));
	blas_plan_free(p);
	free_operands(&op);
	cudaGetLastError();
}

/* cuBLASLt's rate on a large square GEMM of the task's types: the measured compute peak. */
static double measured_gemm_peak(struct base *b, json_t *o)
{
	const struct task *t = b->t;
	int64_t n = t->in_dtype == DT_FP32 ? 4096 : 8192;
	struct gemm_desc d;
	memset(&d, 0, sizeof(d));
	d.a_dtype = d.b_dtype = dk_of(t->in_dtype);
	d.out_dtype = dk_of(t->out_dtype);
	d.compute = t->precision == PREC_TF32 ? BLAS_TF32 : BLAS_FP32;
	d.batch = 1;
	d.m = d.n = d.k = n;
	d.b_col = t->in_dtype == DT_FP8_E4M3; /* cuBLASLt's fp8 path wants K-major B */
	d.alpha = 1;
	size_t isz = (size_t)dtype_size(t->in_dtype), osz = (size_t)dtype_size(t->out_dtype);
	void *A = NULL, *B = NULL, *C = NULL;
	double tf = -1;
	struct blas_plan *p = NULL;
	if (cudaMalloc(&A, (size_t)(n * n) * isz) || cudaMalloc(&B, (size_t)(n * n) * isz) ||
	    cudaMalloc(&C, (size_t)(n * n) * osz))
		goto out;
	struct dk_fill f;
	memset(&f, 0, sizeof(f));
	f.dtype = dk_of(t->in_dtype);
	f.dist = DIST_NORMAL;
	f.numel = n * n;
	f.rows = f.cols = n;
	f.seed = 77;
	dk_fill(A, &f, b->s);
	f.seed = 78;
	dk_fill(B, &f, b->s);
	char err[256];
	p = blas_plan_new(&d, A, B, C, 1, b->s, err, sizeof(err));
	if (!p) {
		json_object_set_new(o, "peak_error", json_string(err));
		goto out;
	}
	double ms = time_plan(b, p, 10, NULL, NULL);
	if (ms > 0)
		tf = 2.0 * (double)n * (double)n * (double)n / (ms * 1e-3) / 1e12;
	json_object_set_new(o, "peak_gemm", json_sprintf("cuBLASLt %lld^3 %s", (long long)n, dtype_name(t->in_dtype)));
out:
	blas_plan_free(p);
	cudaFree(A);
	cudaFree(B);
	cudaFree(C);
	cudaGetLastError();
	return tf;
}

static void uuid_string(const cudaUUID_t *u, char *buf, size_t len)
{
	const unsigned char *b = (const unsigned char *)u->bytes;
	snprintf(buf, len, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
		 b[14], b[15]);
}

static json_t *device_json(int dev, const struct cudaDeviceProp *p)
{
	char uuid[64];
	uuid_string(&p->uuid, uuid, sizeof(uuid));
	int drv = 0, rt = 0, clk = 0, mclk = 0, bus = 0;
	cudaDriverGetVersion(&drv);
	cudaRuntimeGetVersion(&rt);
	cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, dev);
	cudaDeviceGetAttribute(&mclk, cudaDevAttrMemoryClockRate, dev);
	cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, dev);
	json_t *o = json_object();
	json_object_set_new(o, "name", json_string(p->name));
	json_object_set_new(o, "uuid", json_string(uuid));
	json_object_set_new(o, "driver", json_integer(drv));
	json_object_set_new(o, "runtime", json_integer(rt));
	json_object_set_new(o, "cublaslt", json_integer((json_int_t)blas_version()));
	json_object_set_new(o, "cc", json_sprintf("%d.%d", p->major, p->minor));
	json_object_set_new(o, "sms", json_integer(p->multiProcessorCount));
	json_object_set_new(o, "clock_khz", json_integer(clk));
	json_object_set_new(o, "mem_clock_khz", json_integer(mclk));
	json_object_set_new(o, "bus_bits", json_integer(bus));
	json_object_set_new(o, "l2_bytes", json_integer(p->l2CacheSize));
	return o;
}

static int emit(json_t *o)
{
	char *s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	puts(s);
	free(s);
	json_decref(o);
	return fflush(stdout) ? 3 : 0;
}

/* A module task (--precision): the copy roofline and the peak of its contract, measured (FMA
 * loop for strict fp32) and theoretical; nothing of cuBLASLt. "none": no compute bound. */
static int module_baseline(struct base *b, json_t *o, const char *prec_name)
{
	int none = !strcmp(prec_name, "none");
	enum precision prec = none ? PREC_STRICT : precision_parse(prec_name);
	if (!prec) {
		json_object_set_new(o, "error", json_sprintf("unknown precision '%.32s'", prec_name));
		emit(o);
		return 4;
	}
	b->flush_bytes = (size_t)(b->prop.l2CacheSize > 0 ? b->prop.l2CacheSize : 64 << 20) * 2;
	if (cudaStreamCreateWithFlags(&b->s, cudaStreamNonBlocking) || cudaMalloc(&b->flush, b->flush_bytes)) {
		json_object_set_new(o, "error", json_string("cannot create a stream or the L2 flush buffer"));
		emit(o);
		return 3;
	}
	double t0 = (double)clock() / CLOCKS_PER_SEC;
	json_object_set_new(o, "task", json_string("module"));
	json_object_set_new(o, "precision", json_string(prec_name));
	json_object_set_new(o, "copy_gbps", json_real(copy_bandwidth_gbps(b)));
	int mclk = 0, bus = 0, clk = 0;
	cudaDeviceGetAttribute(&mclk, cudaDevAttrMemoryClockRate, b->device);
	cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, b->device);
	cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, b->device);
	json_object_set_new(o, "dram_gbps_theoretical", json_real(limits_dram_gbps(mclk, bus)));
	if (!none) {
		double theo = limits_peak_tflops(b->prop.major, b->prop.multiProcessorCount, clk, prec);
		double measured = -1;
		json_object_set_new(o, "peak_theoretical_tflops", json_real(theo));
		if (prec == PREC_STRICT && dk_fma_rate(b->prop.multiProcessorCount, &measured, b->s) == 0)
			json_object_set_new(o, "peak_fma_tflops", json_real(measured));
		json_object_set_new(o, "peak_limit_tflops", json_real(fmax(measured, theo)));
	}
	json_object_set_new(o, "baseline_cpu_s", json_real((double)clock() / CLOCKS_PER_SEC - t0));
	return emit(o);
}

int main(int argc, char **argv)
{
	struct base b;
	memset(&b, 0, sizeof(b));
	const char *task_path = NULL, *prec_name = NULL;
	int identify = 0;
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(argv[i], "--identify"))
			identify = 1;
		else if (!strcmp(argv[i], "--quick"))
			b.quick = 1;
		else if (v && !strcmp(argv[i], "--task"))
			task_path = argv[++i];
		else if (v && !strcmp(argv[i], "--precision"))
			prec_name = argv[++i];
		else if (v && !strcmp(argv[i], "--device"))
			b.device = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: cutegen-baseline --task TASK.json [--device N] [--quick]\n"
				"       cutegen-baseline --precision P [--device N] [--quick]\n"
				"       cutegen-baseline --identify [--device N]\n");
			return 2;
		}
	}
	json_t *o = json_object();
	int ndev = 0;
	cudaError_t e = cudaGetDeviceCount(&ndev);
	if (e || b.device < 0 || b.device >= ndev || cudaSetDevice(b.device) ||
	    cudaGetDeviceProperties(&b.prop, b.device)) {
		json_object_set_new(o, "error", json_sprintf("no CUDA device %d (%s)", b.device,
							     cudaGetErrorString(e ? e : cudaErrorNoDevice)));
		emit(o);
		return 3;
	}
	json_object_set_new(o, "device", device_json(b.device, &b.prop));
	if (identify)
		return emit(o);
	if (!task_path && prec_name)
		return module_baseline(&b, o, prec_name);
	if (!task_path) {
		fprintf(stderr, "cutegen-baseline: --task or --precision is required\n");
		return 2;
	}
	struct strbuf text = STRBUF_INIT;
	char *err = NULL;
	struct task *t = NULL;
	if (strbuf_read_file(&text, task_path, 1 << 20) == 0)
		t = task_parse_json(text.buf, text.len, task_path, &err);
	strbuf_release(&text);
	if (!t) {
		json_object_set_new(o, "error", json_sprintf("task: %s", err ? err : "cannot read the file"));
		free(err);
		emit(o);
		return 4;
	}
	b.t = t;
	double t0 = (double)clock() / CLOCKS_PER_SEC;
	b.flush_bytes = (size_t)(b.prop.l2CacheSize > 0 ? b.prop.l2CacheSize : 64 << 20) * 2;
	if (cudaStreamCreateWithFlags(&b.s, cudaStreamNonBlocking) || cudaMalloc(&b.flush, b.flush_bytes)) {
		json_object_set_new(o, "error", json_string("cannot create a stream or the L2 flush buffer"));
		emit(o);
		return 3;
	}
	json_object_set_new(o, "task", json_string(t->name));
	json_object_set_new(o, "precision", json_string(precision_name(t->precision)));
	json_object_set_new(o, "copy_gbps", json_real(copy_bandwidth_gbps(&b)));
	int mclk = 0, bus = 0, clk = 0;
	cudaDeviceGetAttribute(&mclk, cudaDevAttrMemoryClockRate, b.device);
	cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, b.device);
	cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, b.device);
	json_object_set_new(o, "dram_gbps_theoretical", json_real(limits_dram_gbps(mclk, bus)));
	double theo = limits_peak_tflops(b.prop.major, b.prop.multiProcessorCount, clk, t->precision);
	json_object_set_new(o, "peak_theoretical_tflops", json_real(theo));
	double measured = -1;
	if (task_is_gemm_like(t)) {
		measured = measured_gemm_peak(&b, o);
		json_object_set_new(o, "peak_tflops", json_real(measured));
		add_cublaslt(&b, o);
	}
	if (t->precision == PREC_STRICT) {
		double fma = -1;
		if (dk_fma_rate(b.prop.multiProcessorCount, &fma, b.s) == 0) {
			json_object_set_new(o, "peak_fma_tflops", json_real(fma));
			measured = fmax(measured, fma);
		}
	}
	json_object_set_new(o, "peak_limit_tflops", json_real(fmax(measured, theo)));
	json_object_set_new(o, "baseline_cpu_s", json_real((double)clock() / CLOCKS_PER_SEC - t0));
	task_free(t);
	return emit(o);
}
