/*
 * cutegen-runner: evaluates one compiled candidate for one task, in a process of its own, and
 * writes one JSON report. It makes inputs from seeds, runs the candidate on poisoned outputs,
 * checks that the inputs are untouched, compares against trusted references (fp64 device code
 * of its own, devkern.cu: no vendor library is linked or loaded here), times it with events and
 * a cold L2 while verifying the outputs of the timed calls too (poisoned outputs, inputs rotated
 * over buffer sets and regenerated with a new seed, every output or a sample checked),
 * cross-checks the event
 * timing with the host clock, re-checks on fresh inputs after timing, and refuses a time beyond
 * the limits it is given (implausible). Baselines are measured elsewhere (cutegen-baseline).
 *
 * The candidate is confined (confine.h) before it is loaded; the report goes to an inherited
 * pipe (--report-fd) and carries the nonce the evaluator wrote on stdin, read and closed before
 * the candidate is loaded (docs/containment.md).
 *
 * A crash, hang or sticky CUDA error in the candidate ends only this process: the evaluator
 * (src/eval/eval.c) reads the last "phase ..." line of stdout to say where it happened.
 * Not for: compiling (src/eval/build.c) or deciding what to try next (the agent).
 *
 *   cutegen-runner --task TASK.json --kernel K.so [--report-fd N] [--device N] [--quick]
 *                  [--trials N] [--limit-gbps G] [--limit-tflops T]
 *                  (with --report-fd, the first line of stdin is the nonce; without it, the
 *                   report is printed on stdout as one line "report {...}", for people)
 *   cutegen-runner --task TASK.json --kernel K.so --profile
 *                  (one warm-up call, then one call between cudaProfilerStart/Stop, for
 *                   `ncu --profile-from-start off`: only the candidate's kernels are profiled)
 *   cutegen-runner --module RUN.json --kernel K.so [--report-fd N] [--device N] [--quick] ...
 *                  (a module task that is not lowered: RUN.json, written by the evaluator from
 *                   the reference process's "prepare" reply, lists the tensors and the cases as
 *                   CUDA IPC handles into the reference process's memory, opened here before
 *                   confinement; the candidate gets buffers of its own, the case's inputs
 *                   copied in before each call, and its outputs are compared with the float64
 *                   truth within the measured budget: docs/evaluation.md, "Module tasks";
 *                   --lib is another name for --kernel)
 *   cutegen-runner --devices            (JSON list of CUDA devices; exit 3 when none)
 *   --no-confine: no seccomp filters, for profilers and sanitizers (ncu, compute-sanitizer)
 *                  whose code in this process talks to their front end; refused with
 *                  --report-fd, so nothing run this way is a verdict.
 *   --no-timed-verify (tests only): times as before issue 16, outputs not poisoned nor checked
 *                  between timed calls, inputs neither rotated nor regenerated, so the red-team
 *                  tests can show that the implausible check still stops a kernel that skips
 *                  its work when timed.
 */
#include "confine.h"
#include "devkern.h"
#include "limits.h"
#include "protocol.h"
#include "common/module_run.h"
#include "common/task.h"
#include "common/verdict.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <cutegen/kernel_abi.h>
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define RUNNER_REPORT_VERSION 2
#define MAX_TRIALS PROTOCOL_MAX_TRIALS
#define MAX_SETS 3          /* input buffer sets timed calls rotate over */
#define FULL_CHECKED 3      /* timed calls whose whole output is checked */
#define GEMM_SAMPLES 256    /* positions checked of every other timed call: a GEMM's (a dot */
#define OTHER_SAMPLES 1024  /* product over K each), or another op's */
#define NONCE_MAX 64
#define MAX_GUARDS 8        /* regions besides struct ctx that state_hash covers */
#define RUNNER_MAX_TENSORS MRUN_MAX_TENSORS /* a module's; a built-in task has TASK_MAX_TENSORS */
#define RUNNER_MAX_DIMS MRUN_MAX_DIMS
#define RUNNER_MAX_SCALARS MRUN_MAX_SCALARS

struct tensor {
	struct tensor_spec spec;
	void *d;
	int64_t numel;
	size_t bytes;
	int64_t rows, cols;   /* last two dims */
	int64_t shape[RUNNER_MAX_DIMS], strides[RUNNER_MAX_DIMS];
	int mdtype;           /* a module's tensor: its dk_dtype (enum mrun_dtype); 0 = spec.dtype */
	struct dk_fill fill;
	void *set[MAX_SETS];  /* inputs: the buffers timed calls rotate over (set[0] = d) */
};

struct timing {
	int trials;
	double median_ms, p10_ms, p90_ms, min_ms, mean_ms;
};

/* The opened IPC allocations: one cudaIpcOpenMemHandle per distinct handle (a handle opened
 * twice in one process fails, and tensors of one case, or the parameters every case shares,
 * often lie in one allocation of PyTorch's caching allocator). [lo, hi) is the byte range of it
 * the run file's tensors cover: what the integrity hash reads (the allocation's own size is
 * not known to the runtime API). */
struct ipc_open {
	unsigned char h[MRUN_IPC_BYTES];
	char *base;
	uint64_t lo, hi;
	unsigned long long hash_before;
};

struct ctx {
	struct task *t;
	const char *task_path, *kernel_path;
	int device, quick, trials_override, profile, no_timed_verify, no_confine;
	int report_fd;             /* -1: print the report on stdout */
	char nonce[NONCE_MAX + 1];
	double limit_gbps, limit_tflops; /* 0 = none given */
	/* --call-limit: seconds a call of the candidate may take before it counts as never
	 * returning (0: none); hung: it did, and the device is not touched again */
	double call_limit_s;
	int hung;
	/* device-wide waits past 2 ms during which the thread was preempted (not judged) */
	int escape_preempted;
	int nsets;                 /* input sets timed calls rotate over */
	struct gate_mem *gate;

	struct tensor tens[RUNNER_MAX_TENSORS];
	int ntens, n_in, n_out;
	double scalars[RUNNER_MAX_SCALARS];
	const char *scalar_names[RUNNER_MAX_SCALARS];
	int nscalars;

	/* module tasks (--module): the run file, and per case the opened handles' device pointers
	 * (inputs, ref and truth, in the orders of mr->cases) */
	const char *module_path;
	struct module_run *mr;
	struct mcase {
		void **in, **ref, **truth;
		double *E, *mean_abs_truth; /* per output, once computed (have_stats) */
		int *have_stats;
	} *mcases;
	int *held_back; /* per case: not given to the kernel before timing (protocol_hold_back) */
	int *seen;      /* per case: its inputs were given to the kernel in a call */
	int cur_case;
	struct ipc_open *ipc;      /* the opened allocations (nipc), kept for the hashes */
	int nipc;
	int hashed;                /* hash_before is set in each: the candidate is judged against
				      tensors hashed before it was loaded */

	void *so;
	cutegen_launch_fn launch;
	void *ws;
	size_t ws_bytes;
	struct abi_area *abi;      /* what the kernel is handed (build_dl), between guard pages */

	cudaStream_t s;
	cudaEvent_t join[2];       /* the legacy and per-thread default streams, joined into s */
	struct cudaDeviceProp prop;
	void *scratch, *flush_buf;
	size_t flush_bytes;

	/* GEMM family references */
	int gemm_like;
	struct dk_gemm gd;   /* A and B point at the current input set */
	float *ref, *scale;
	double *rowstat;

	json_t *report, *checks;
	enum verdict verdict;
	struct strbuf message;
	double t_start;

	/* more of the runner's state the candidate's host code must leave as it was (state_hash):
	 * arrays of the caller in use across its calls (time_it's) */
	struct guard {
		const void *p;
		size_t n;
	} guards[MAX_GUARDS];
	int nguards;
};

static double wall_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Seconds of CPU this thread has used. */
static double thread_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void phase(const char *name)
{
	printf("phase %s\n", name);
	fflush(stdout);
}

static void fail(struct ctx *c, enum verdict verdict, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fail(struct ctx *c, enum verdict verdict, const char *fmt, ...)
{
	if (c->verdict != VERDICT_PASS)
		return; /* the first failure is the verdict */
	c->verdict = verdict;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&c->message, fmt, ap);
	va_end(ap);
}

static int dk_of(enum dtype d)
{
	switch (d) {
	case DT_FP16: return DK_FP16;
	case DT_BF16: return DK_BF16;
	case DT_FP8_E4M3: return DK_FP8;
	default: return DK_FP32;
	}
}

/* A module tensor's DLPack type (mrun_dtype values). */
static DLDataType dl_type_module(int md)
{
	DLDataType t = { kDLFloat, 32, 1 };
	switch (md) {
	case MDT_FP16: t.bits = 16; break;
	case MDT_BF16: t.code = kDLBfloat; t.bits = 16; break;
	case MDT_FP8: t.code = 10; t.bits = 8; break;
	case MDT_FP64: t.bits = 64; break;
	case MDT_I64: t.code = kDLInt; t.bits = 64; break;
	case MDT_I32: t.code = kDLInt; t.bits = 32; break;
	case MDT_I16: t.code = kDLInt; t.bits = 16; break;
	case MDT_I8: t.code = kDLInt; t.bits = 8; break;
	case MDT_U8: t.code = kDLUInt; t.bits = 8; break;
	case MDT_BOOL: t.code = 6 /* kDLBool in DLPack 0.8 */; t.bits = 8; break;
	default: break;
	}
	return t;
}

static DLDataType dl_type(enum dtype d)
{
	DLDataType t = { kDLFloat, 32, 1 };
	switch (d) {
	case DT_FP16: t.bits = 16; break;
	case DT_BF16: t.code = kDLBfloat; t.bits = 16; break;
	case DT_FP8_E4M3: t.code = 10 /* kDLFloat8_e4m3fn in DLPack 1.0 */; t.bits = 8; break;
	default: break;
	}
	return t;
}

/* The dk_dtype of a tensor, built-in or module. */
static int tdk(const struct tensor *x)
{
	return x->mdtype ? x->mdtype : dk_of(x->spec.dtype);
}

/* ---- set-up ---------------------------------------------------------------------------- */

/* The report, once: to the report pipe (then closed), or as one "report {...}" line on
 * stdout when no pipe was given. */
static int write_report(struct ctx *c)
{
	json_object_set_new(c->report, "verdict", json_string(verdict_name(c->verdict)));
	json_object_set_new(c->report, "message", json_string(c->message.buf));
	json_object_set_new(c->report, "runner_s", json_real(wall_s() - c->t_start));
	if (c->nonce[0])
		json_object_set_new(c->report, "nonce", json_string(c->nonce));
	char *text = json_dumps(c->report, JSON_COMPACT | JSON_SORT_KEYS);
	int rc = 0;
	if (c->report_fd < 0) {
		printf("report %s\n", text);
		rc = fflush(stdout) ? -1 : 0;
	} else {
		size_t len = strlen(text), off = 0;
		while (off < len) {
			ssize_t w = write(c->report_fd, text + off, len - off);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				rc = -1;
				break;
			}
			off += (size_t)w;
		}
		if (close(c->report_fd))
			rc = -1;
		c->report_fd = -1;
	}
	if (rc)
		fprintf(stderr, "cutegen-runner: cannot write the report\n");
	free(text);
	return rc;
}

/* The evaluator's nonce: one line of at most NONCE_MAX hex digits on stdin, which is then
 * closed (replaced by /dev/null) so that nothing loaded later can read it there. */
static int read_nonce(struct ctx *c)
{
	char buf[NONCE_MAX + 2];
	size_t n = 0;
	while (n < sizeof(buf)) {
		ssize_t r = read(0, buf + n, sizeof(buf) - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		if (memchr(buf, '\n', n))
			break;
	}
	int devnull = open("/dev/null", O_RDONLY);
	if (devnull < 0 || dup2(devnull, 0) < 0) {
		fail(c, VERDICT_RUNNER_ERROR, "cannot close stdin");
		return -1;
	}
	close(devnull);
	size_t len = 0;
	while (len < n && isxdigit((unsigned char)buf[len]))
		len++;
	if (len < 16 || len > NONCE_MAX || len >= n || buf[len] != '\n') {
		fail(c, VERDICT_RUNNER_ERROR, "no nonce on stdin (with --report-fd, the first line of stdin must be "
		     "16 to %d hex digits)", NONCE_MAX);
		return -1;
	}
	memcpy(c->nonce, buf, len);
	c->nonce[len] = '\0';
	explicit_bzero(buf, sizeof(buf));
	return 0;
}

static int cuda_ok(struct ctx *c, cudaError_t e, const char *what)
{
	if (e == cudaSuccess)
		return 1;
	fail(c, VERDICT_RUNNER_ERROR, "%s: %s (%s)", what, cudaGetErrorName(e), cudaGetErrorString(e));
	return 0;
}

static int alloc_tensors(struct ctx *c)
{
	struct tensor_spec specs[TASK_MAX_TENSORS];
	c->ntens = task_tensors(c->t, specs);
	for (int i = 0; i < c->ntens; i++) {
		struct tensor *x = &c->tens[i];
		x->spec = specs[i];
		x->numel = 1;
		for (int d = x->spec.ndim - 1; d >= 0; d--) {
			x->strides[d] = x->numel;
			x->shape[d] = x->spec.shape[d];
			x->numel *= x->spec.shape[d];
		}
		x->cols = x->spec.shape[x->spec.ndim - 1];
		x->rows = x->spec.ndim >= 2 ? x->spec.shape[x->spec.ndim - 2] : 1;
		x->bytes = (size_t)x->numel * (size_t)dtype_size(x->spec.dtype);
		if (x->spec.is_output)
			c->n_out++;
		else
			c->n_in++;
		cudaError_t e = cudaMalloc(&x->d, x->bytes);
		if (e) {
			fail(c, VERDICT_RUNNER_ERROR, "cannot allocate tensor '%s' (%.2f GB): %s", x->spec.name,
			     (double)x->bytes / 1e9, cudaGetErrorString(e));
			return -1;
		}
	}
	return 0;
}

/*
 * What the kernel is handed: its DLTensors, their shapes and strides, and the scalars, copies
 * made before every call in pages of their own between two inaccessible ones. The runner never
 * reads them back, so a kernel that writes through a shape pointer (shape[-4] was the runner's
 * numel of that tensor, which sized the poisoning and the checks) changes nothing the judge
 * uses, and one that reaches past the copies faults.
 */
struct abi_area {
	DLTensor ins[RUNNER_MAX_TENSORS], outs[RUNNER_MAX_TENSORS];
	int64_t shape[RUNNER_MAX_TENSORS][RUNNER_MAX_DIMS], strides[RUNNER_MAX_TENSORS][RUNNER_MAX_DIMS];
	double scalars[RUNNER_MAX_SCALARS];
};

static struct abi_area *abi_area_map(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t body = (sizeof(struct abi_area) + (size_t)pg - 1) / (size_t)pg * (size_t)pg;
	char *m = mmap(NULL, body + 2 * (size_t)pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	/* the copies end where the upper guard page begins: an overrun past them faults at once */
	char *start = m + pg + (body - sizeof(struct abi_area)) / 8 * 8;
	if (mprotect(m + pg, body, PROT_READ | PROT_WRITE))
		return NULL;
	return (struct abi_area *)start;
}

/* Fills c->abi from the runner's own state (its copies for this call). */
static void build_dl(struct ctx *c)
{
	struct abi_area *a = c->abi;
	int ni = 0, no = 0;
	for (int i = 0; i < c->ntens; i++) {
		struct tensor *x = &c->tens[i];
		DLTensor dl;
		memset(&dl, 0, sizeof(dl));
		memcpy(a->shape[i], x->shape, sizeof(a->shape[i]));
		memcpy(a->strides[i], x->strides, sizeof(a->strides[i]));
		dl.data = x->d;
		dl.device.device_type = kDLCUDA;
		dl.device.device_id = c->device;
		dl.ndim = x->spec.ndim;
		dl.dtype = x->mdtype ? dl_type_module(x->mdtype) : dl_type(x->spec.dtype);
		dl.shape = a->shape[i];
		dl.strides = a->strides[i];
		if (x->spec.is_output)
			a->outs[no++] = dl;
		else
			a->ins[ni++] = dl;
	}
	memcpy(a->scalars, c->scalars, sizeof(a->scalars));
}

/* The first vendor library (cuBLAS, cuBLASLt, cuDNN) mapped into this process, or NULL. */
static const char *vendor_mapped(char *buf, size_t len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	const char *found = NULL;
	if (!f)
		return NULL;
	while (!found && fgets(buf, (int)len, f))
		if (strstr(buf, "libcublas") || strstr(buf, "libcudnn"))
			found = strrchr(buf, ' ') ? strrchr(buf, ' ') + 1 : buf;
	fclose(f);
	return found;
}

/* ---- the runner's state against the candidate's host code -------------------------------
 * The candidate's host code runs in this process (its constructors at dlopen,
 * cutegen_workspace_bytes, cutegen_launch) and can read and write the runner's memory: struct
 * ctx lives in main's frame, where a scan of the stack finds it (tests/redteam/
 * rng_predict_gemm.cu reads it). What the judgement rests on is hashed before each entry into
 * the candidate's code and again when it returns: ctx (the tensors in use, the limits, the
 * reference's pointers, the verdict), the task, the module run (its tolerance, its cases), the
 * cases' opened pointers, the IPC allocations' hashes and the regions the caller registered
 * (time_it's arrays of events, distributions and cases; main's timing once measured). Nothing
 * of the runner runs while the candidate's code does (no threads, no signal handlers) and none
 * of these is written by the device, so a difference is the candidate's write: the verdict
 * untrusted_report. What it does not cover (docs/containment.md): the heap of the report's
 * JSON, the rest of the frames above the call, the code itself after an mprotect the candidate
 * found in libc; and a write undone before the call returns changes nothing the runner reads. */
static uint64_t hash_mix(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t w;
	for (; n >= 8; n -= 8, b += 8) {
		memcpy(&w, b, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	for (; n; n--, b++)
		h = (h ^ *b) * 0x100000001b3ull;
	return h;
}

static uint64_t state_hash(const struct ctx *c)
{
	uint64_t h = 0xcbf29ce484222325ull;
	int nt = c->ntens < 0 ? 0 : c->ntens > RUNNER_MAX_TENSORS ? RUNNER_MAX_TENSORS : c->ntens;
	h = hash_mix(h, c, offsetof(struct ctx, tens));
	h = hash_mix(h, c->tens, (size_t)nt * sizeof(c->tens[0]));
	h = hash_mix(h, &c->ntens, sizeof(*c) - offsetof(struct ctx, ntens));
	if (c->t)
		h = hash_mix(h, c->t, sizeof(*c->t));
	const struct module_run *mr = c->mr;
	if (mr) {
		h = hash_mix(h, mr, sizeof(*mr));
		if (mr->tensors)
			h = hash_mix(h, mr->tensors, (size_t)mr->ntensors * sizeof(mr->tensors[0]));
		if (mr->cases)
			h = hash_mix(h, mr->cases, (size_t)mr->ncases * sizeof(mr->cases[0]));
		for (int k = 0; c->mcases && k < mr->ncases; k++) {
			const struct mcase *mc = &c->mcases[k];
			h = hash_mix(h, mc, sizeof(*mc));
			if (mc->in)
				h = hash_mix(h, mc->in, (size_t)mr->ninputs * sizeof(void *));
			if (mc->ref)
				h = hash_mix(h, mc->ref, (size_t)mr->noutputs * sizeof(void *));
			if (mc->truth)
				h = hash_mix(h, mc->truth, (size_t)mr->noutputs * sizeof(void *));
		}
		if (c->held_back)
			h = hash_mix(h, c->held_back, (size_t)mr->ncases * sizeof(int));
		if (c->seen)
			h = hash_mix(h, c->seen, (size_t)mr->ncases * sizeof(int));
	}
	if (c->ipc)
		h = hash_mix(h, c->ipc, (size_t)c->nipc * sizeof(c->ipc[0]));
	for (int i = 0; i < c->nguards && i < MAX_GUARDS; i++)
		h = hash_mix(h, c->guards[i].p, c->guards[i].n);
	return h;
}

/* Fails the candidate whose code (`where`) changed the runner's state: -1, else 0. */
static int state_unchanged(struct ctx *c, uint64_t before, const char *where)
{
	if (state_hash(c) == before)
		return 0;
	fail(c, VERDICT_UNTRUSTED_REPORT, "the kernel's host code wrote the runner's memory (%s changed the "
	     "judge's state: its tensors, limits, references or timings): a kernel may write its outputs "
	     "and workspace only, and this judgement cannot be trusted", where);
	return -1;
}

/* Registers a region of the caller's that the candidate's calls must leave as it was (static
 * storage: it stays valid after the caller returns); n = 0 clears the list. */
static void guard_region(struct ctx *c, const void *p, size_t n)
{
	if (!n)
		c->nguards = 0;
	else if (c->nguards < MAX_GUARDS)
		c->guards[c->nguards++] = (struct guard){ p, n };
}

static int load_kernel(struct ctx *c)
{
	uint64_t before = state_hash(c);
	void *so = dlopen(c->kernel_path, RTLD_NOW | RTLD_LOCAL); /* runs its constructors */
	if (state_unchanged(c, before, "loading the kernel (its constructors)"))
		return -1;
	c->so = so;
	if (!c->so) {
		fail(c, VERDICT_ABI_ERROR, "cannot load the kernel: %s", dlerror());
		return -1;
	}
	const int *ver = dlsym(c->so, "cutegen_abi_version");
	c->launch = (cutegen_launch_fn)dlsym(c->so, "cutegen_launch");
	if (!c->launch) {
		fail(c, VERDICT_ABI_ERROR, "the kernel exports no 'cutegen_launch' (declare it with CUTEGEN_KERNEL)");
		return -1;
	}
	char line[512];
	const char *lib = vendor_mapped(line, sizeof(line));
	if (lib) {
		line[strcspn(line, "\n")] = '\0';
		fail(c, VERDICT_POLICY, "loading the kernel brought a vendor library into the process (%s): "
		     "kernels must not use cuBLAS, cuBLASLt or cuDNN", lib);
		return -1;
	}
	char cerr[256];
	if (!c->no_confine && confine_no_new_exec(cerr, sizeof(cerr))) {
		fail(c, VERDICT_RUNNER_ERROR, "cannot forbid new executable memory: %s", cerr);
		return -1;
	}
	if (!ver || *ver != CUTEGEN_ABI_VERSION) {
		fail(c, VERDICT_ABI_ERROR, "the kernel's cutegen_abi_version is %s (want %d: add CUTEGEN_DECLARE_ABI();)",
		     ver ? "another" : "missing", CUTEGEN_ABI_VERSION);
		return -1;
	}
	cutegen_workspace_fn wsfn = (cutegen_workspace_fn)dlsym(c->so, "cutegen_workspace_bytes");
	if (wsfn) {
		build_dl(c);
		before = state_hash(c);
		size_t ws_bytes = wsfn(c->abi->ins, c->n_in, c->abi->outs, c->n_out, c->abi->scalars, c->nscalars);
		if (state_unchanged(c, before, "cutegen_workspace_bytes"))
			return -1;
		c->ws_bytes = ws_bytes;
		if (c->ws_bytes > ((size_t)64 << 30)) {
			fail(c, VERDICT_ABI_ERROR, "the kernel asks for %zu bytes of workspace (limit 64 GiB)", c->ws_bytes);
			return -1;
		}
		if (c->ws_bytes && !cuda_ok(c, cudaMalloc(&c->ws, c->ws_bytes), "allocating the workspace"))
			return -1;
	}
	return 0;
}

/* ---- inputs --------------------------------------------------------------------------- */

/* The fill of input ti: the protocol's (protocol.c), which the baseline process uses too. */
static void set_fill(struct ctx *c, struct tensor *x, int ti, enum dist dist, uint64_t seed)
{
	protocol_fill(c->t, &x->spec, ti, x->numel, x->rows, x->cols, dist, seed, &x->fill);
}

static int module_load_case(struct ctx *c, int k);

/* Inputs for a call: generated from (dist, seed); a module's, copied from case seed % ncases,
 * or case 0 where that one is held back for timing (module_hold_back). */
static int fill_inputs(struct ctx *c, enum dist dist, int seed)
{
	if (c->mr) {
		int k = seed % c->mr->ncases;
		return module_load_case(c, c->held_back[k] ? 0 : k);
	}
	for (int i = 0; i < c->ntens; i++) {
		struct tensor *x = &c->tens[i];
		if (x->spec.is_output) {
			if (!cuda_ok(c, (cudaError_t)dk_poison(x->d, tdk(x), x->numel, c->s), "poisoning outputs"))
				return -1;
			continue;
		}
		set_fill(c, x, i, dist, seed);
		if (!cuda_ok(c, (cudaError_t)dk_fill(x->d, &x->fill, c->s), "generating inputs"))
			return -1;
	}
	return cuda_ok(c, cudaStreamSynchronize(c->s), "generating inputs") ? 0 : -1;
}

/* 0 = all inputs as generated; -1 = verdict set. */
static int verify_inputs(struct ctx *c)
{
	for (int i = 0; i < c->ntens; i++) {
		struct tensor *x = &c->tens[i];
		if (x->spec.is_output)
			continue;
		unsigned long long bad = 0;
		if (!cuda_ok(c, (cudaError_t)dk_verify_fill(x->d, &x->fill, &bad, c->scratch, c->s), "checking inputs"))
			return -1;
		if (bad) {
			fail(c, VERDICT_INPUTS_MODIFIED, "the kernel modified its input '%s' (%llu of %lld elements changed); "
			     "inputs are read-only", x->spec.name, bad, (long long)x->numel);
			return -1;
		}
	}
	return 0;
}

/* ---- calling the candidate -------------------------------------------------------------- */

/* Launches once. Returns 0, or -1 with the verdict set (launch errors, nonzero return). */
static int call_candidate(struct ctx *c)
{
	build_dl(c);
	uint64_t before = state_hash(c);
	int rc = c->launch(c->abi->ins, c->n_in, c->abi->outs, c->n_out, c->abi->scalars, c->nscalars, c->ws,
			   c->ws_bytes, c->s);
	if (state_unchanged(c, before, "cutegen_launch"))
		return -1;
	if (rc) {
		fail(c, VERDICT_LAUNCH_ERROR, "cutegen_launch returned %d: the kernel rejected these arguments", rc);
		return -1;
	}
	/* work the kernel queued on the default streams (<<<g, b, 0, 0>>>, cudaStreamPerThread),
	 * which the non-blocking stream s is not ordered after, is part of the call: s waits for
	 * it, so the stop event, the syncs and the checks all come after it */
	if (!cuda_ok(c, cudaEventRecord(c->join[0], cudaStreamLegacy), "joining the default streams") ||
	    !cuda_ok(c, cudaEventRecord(c->join[1], cudaStreamPerThread), "joining the default streams") ||
	    !cuda_ok(c, cudaStreamWaitEvent(c->s, c->join[0], 0), "joining the default streams") ||
	    !cuda_ok(c, cudaStreamWaitEvent(c->s, c->join[1], 0), "joining the default streams"))
		return -1;
	cudaError_t e = cudaGetLastError();
	if (e) {
		fail(c, e == cudaErrorLaunchFailure || e == cudaErrorIllegalAddress ? VERDICT_CUDA_ERROR : VERDICT_LAUNCH_ERROR,
		     "launching the kernel failed: %s (%s)", cudaGetErrorName(e), cudaGetErrorString(e));
		return -1;
	}
	return 0;
}

/* Waits for the candidate's stream like cudaStreamSynchronize, for at most c->call_limit_s:
 * past it the verdict is timeout and c->hung is set (the kernel still runs; the report is
 * written without another wait on the device, and the process exit ends the kernel). A kernel
 * that never returns (an mbarrier wait that no arrival satisfies) costs the limit, not the
 * evaluation's whole deadline. Polls: a spin for the first millisecond, then 100 us sleeps. */
static cudaError_t wait_candidate(struct ctx *c)
{
	if (c->call_limit_s <= 0)
		return cudaStreamSynchronize(c->s);
	double t0 = wall_s();
	for (;;) {
		cudaError_t e = cudaStreamQuery(c->s);
		if (e != cudaErrorNotReady)
			return e;
		double waited = wall_s() - t0;
		if (waited > c->call_limit_s) {
			c->hung = 1;
			return cudaErrorNotReady;
		}
		if (waited > 1e-3)
			usleep(100);
	}
}

static int sync_candidate(struct ctx *c)
{
	cudaError_t e = wait_candidate(c);
	if (c->hung) {
		fail(c, VERDICT_TIMEOUT, "the kernel had not finished %.0f s after it was called (the "
		     "runner's limit for one call, $CUTEGEN_CALL_LIMIT): it never returns, or is far "
		     "too slow for this size", c->call_limit_s);
		return -1;
	}
	if (e == cudaSuccess) {
		/* the given stream is done; nothing else may be running: a kernel left behind on
		 * another stream (working in the gaps, or at the runner's own buffers) outlives the
		 * call. A device-wide synchronize that waits is that; one that never returns, the
		 * deadline's. The wait is wall time, and a thread preempted during it waited for a
		 * CPU, not the device (four rounds of nvcc on the H100 machine's 16 cores made an
		 * elementwise kernel "busy 4.03 ms after"): preempted, the synchronize counts only
		 * as long as the thread was on a CPU (it spins on one while it waits: CUDA's
		 * default schedule with one context), and a short one is counted, not judged. */
		struct rusage r0, r1;
		int ru = getrusage(RUSAGE_THREAD, &r0) == 0;
		double c0 = thread_cpu_s(), t0 = wall_s();
		e = cudaDeviceSynchronize();
		double waited = wall_s() - t0, on_cpu = thread_cpu_s() - c0;
		int preempted = ru && getrusage(RUSAGE_THREAD, &r1) == 0 && r1.ru_nivcsw > r0.ru_nivcsw;
		if (e == cudaSuccess && waited > 2e-3 && preempted && on_cpu <= 2e-3) {
			c->escape_preempted++;
		} else if (e == cudaSuccess && waited > 2e-3) {
			fail(c, VERDICT_TIMING_ESCAPE, "work launched by the kernel outlived the call: the device "
			     "was still busy %.2f ms after the given stream finished; all work belongs on "
			     "the given stream and ends with it", waited * 1e3);
			return -1;
		}
	}
	if (e == cudaSuccess)
		e = cudaGetLastError();
	if (e) {
		fail(c, VERDICT_CUDA_ERROR, "the kernel failed on the device: %s (%s)", cudaGetErrorName(e),
		     cudaGetErrorString(e));
		return -1;
	}
	return 0;
}

/* ---- references and comparison ---------------------------------------------------------- */

static struct tensor *find_tensor(struct ctx *c, const char *name)
{
	for (int i = 0; i < c->ntens; i++)
		if (!strcmp(c->tens[i].spec.name, name))
			return &c->tens[i];
	return NULL;
}

static struct tensor *output(struct ctx *c)
{
	for (int i = 0; i < c->ntens; i++)
		if (c->tens[i].spec.is_output)
			return &c->tens[i];
	BUG("task without output");
}

static struct tensor *first_input(struct ctx *c)
{
	for (int i = 0; i < c->ntens; i++)
		if (!c->tens[i].spec.is_output)
			return &c->tens[i];
	BUG("task without input");
}

/* The tolerance of each op and contract: task_tolerance() in src/common/task.c. */
static void tolerances(struct ctx *c, enum dist dist, struct dk_compare *cmp)
{
	struct task_tolerance tol;
	task_tolerance(c->t, dist, &tol);
	cmp->rtol = tol.rtol;
	cmp->atol = tol.atol;
	cmp->eps_scale = tol.eps_scale;
}

static struct tensor *gemm_b_tensor(struct ctx *c)
{
	return find_tensor(c, c->t->op == OP_MATVEC ? "x" : "B");
}

static int setup_gemm_refs(struct ctx *c)
{
	const struct task *t = c->t;
	struct tensor *A = find_tensor(c, "A"), *B = gemm_b_tensor(c), *C = output(c);
	if (!A || !B)
		BUG("gemm task without A/B");
	struct dk_gemm *d = &c->gd;
	memset(d, 0, sizeof(*d));
	d->batch = t->batch > 0 ? t->batch : 1;
	d->m = t->m;
	d->n = t->op == OP_MATVEC ? 1 : t->n;
	d->k = t->k;
	d->a_col = t->op == OP_GEMM && t->a_layout == LAYOUT_COL;
	d->b_col = t->op == OP_GEMM && t->b_layout == LAYOUT_COL;
	d->b_batched = d->batch > 1 && B->numel == d->batch * d->k * d->n;
	d->a_dtype = d->b_dtype = dk_of(t->in_dtype);
	size_t cn = (size_t)C->numel;
	if (!cuda_ok(c, cudaMalloc((void **)&c->ref, cn * 4), "allocating the reference") ||
	    !cuda_ok(c, cudaMalloc((void **)&c->scale, cn * 4), "allocating the reference"))
		return -1;
	return 0;
}

static int compute_reference(struct ctx *c)
{
	const struct task *t = c->t;
	if (c->gemm_like) {
		c->gd.A = find_tensor(c, "A")->d;
		c->gd.B = gemm_b_tensor(c)->d;
		if (!cuda_ok(c, (cudaError_t)dk_gemm_ref(&c->gd, c->ref, c->scale, c->scratch, c->s), "the GEMM reference"))
			return -1;
	} else if (t->op == OP_SOFTMAX || t->op == OP_LOG_SOFTMAX) {
		struct tensor *x = first_input(c);
		if (!cuda_ok(c, (cudaError_t)dk_softmax_rowstats(c->rowstat, x->d, dk_of(x->spec.dtype), x->numel / x->cols,
							   x->cols, c->s), "softmax reference"))
			return -1;
	}
	return 0;
}

static void fill_compare(struct ctx *c, enum dist dist, struct dk_compare *cmp)
{
	const struct task *t = c->t;
	struct tensor *out = output(c);
	memset(cmp, 0, sizeof(*cmp));
	cmp->out = out->d;
	cmp->out_dtype = dk_of(out->spec.dtype);
	cmp->cols = out->cols;
	cmp->rows = out->numel / out->cols;
	for (int i = 0; i < c->nscalars && i < 4; i++)
		cmp->p[i] = c->scalars[i];
	struct tensor *x = first_input(c);
	cmp->x = x->d;
	cmp->x_dtype = dk_of(x->spec.dtype);
	switch (t->op) {
	case OP_GEMM:
	case OP_MATVEC: {
		cmp->kind = DK_REF_BUFFER;
		cmp->ref = c->ref;
		cmp->scale = c->scale;
		cmp->alpha = t->op == OP_GEMM ? t->alpha : 1.0;
		cmp->epi_act = t->epi_act;
		struct tensor *bias = t->epi_bias ? find_tensor(c, "bias") : NULL;
		if (bias) {
			cmp->bias = bias->d;
			cmp->bias_dtype = dk_of(bias->spec.dtype);
		}
		cmp->mask = t->out_mask;
		cmp->mask_n = t->m;
		break;
	}
	case OP_ELEMENTWISE:
		cmp->kind = DK_REF_ELEMENTWISE;
		cmp->act = t->act;
		break;
	case OP_SCALAR_MUL:
		cmp->kind = DK_REF_SCALAR_MUL;
		cmp->p[0] = t->scalar;
		break;
	case OP_DIAG_MATMUL:
		cmp->kind = DK_REF_DIAG;
		cmp->aux = x->d; /* the diagonal vector is the first input */
		cmp->aux_dtype = cmp->x_dtype;
		cmp->x = find_tensor(c, "B")->d;
		break;
	case OP_SOFTMAX:
	case OP_LOG_SOFTMAX:
		cmp->kind = t->op == OP_SOFTMAX ? DK_REF_SOFTMAX : DK_REF_LOG_SOFTMAX;
		cmp->rowstat = c->rowstat;
		break;
	default:
		BUG("op %d", (int)t->op);
	}
	tolerances(c, dist, cmp);
}

/* "[i, j]" of a flat index into the output. */
static void coords_in(const struct tensor *out, long long idx, char *buf, size_t len)
{
	int64_t co[RUNNER_MAX_DIMS];
	for (int d = out->spec.ndim - 1; d >= 0; d--) {
		co[d] = idx % out->shape[d];
		idx /= out->shape[d];
	}
	size_t n = (size_t)snprintf(buf, len, "[");
	for (int d = 0; d < out->spec.ndim && n < len; d++)
		n += (size_t)snprintf(buf + n, len - n, "%s%lld", d ? ", " : "", (long long)co[d]);
	if (n < len)
		snprintf(buf + n, len - n, "]");
}

static void coords(struct ctx *c, long long idx, char *buf, size_t len)
{
	coords_in(output(c), idx, buf, len);
}

static json_t *coords_json_in(const struct tensor *out, long long idx)
{
	int64_t co[RUNNER_MAX_DIMS];
	for (int d = out->spec.ndim - 1; d >= 0; d--) {
		co[d] = idx % out->shape[d];
		idx /= out->shape[d];
	}
	json_t *a = json_array();
	for (int d = 0; d < out->spec.ndim; d++)
		json_array_append_new(a, json_integer(co[d]));
	return a;
}

static json_t *coords_json(struct ctx *c, long long idx)
{
	return coords_json_in(output(c), idx);
}

/* Describes where bad elements cluster, from the row and column histograms. */
static void describe_clusters(const struct dk_stats *st, int64_t rows, int64_t cols, struct strbuf *sb)
{
	if (!st->bad)
		return;
	const char *axis[2] = { "rows", "columns" };
	const unsigned long long *hist[2] = { st->row_hist, st->col_hist };
	int64_t extent[2] = { rows, cols };
	unsigned long long tail[2] = { st->tail_rows_bad, st->tail_cols_bad };
	int said = 0;
	for (int a = 0; a < 2; a++) {
		if (extent[a] < 2)
			continue;
		if (tail[a] == st->bad && extent[a] >= DK_BUCKETS) {
			int64_t w = extent[a] / DK_BUCKETS > 1 ? extent[a] / DK_BUCKETS : 1;
			strbuf_addf(sb, "; all wrong elements are in the last %lld %s (%lld-%lld: the tail)",
				    (long long)w, axis[a], (long long)(extent[a] - w), (long long)extent[a] - 1);
			said = 1;
			continue;
		}
		int used = 0, lo = -1, hi = -1;
		for (int b = 0; b < DK_BUCKETS; b++)
			if (hist[a][b]) {
				used++;
				if (lo < 0)
					lo = b;
				hi = b;
			}
		int64_t nb = extent[a] < DK_BUCKETS ? extent[a] : DK_BUCKETS;
		if (used && used <= nb / 4) {
			strbuf_addf(sb, "; wrong elements lie only in %s %lld-%lld of %lld", axis[a],
				    (long long)(lo * extent[a] / DK_BUCKETS),
				    (long long)((hi + 1) * extent[a] / DK_BUCKETS) - 1, (long long)extent[a]);
			said = 1;
		}
	}
	if (!said && st->bad * 2 > st->checked)
		strbuf_addstr(sb, "; most of the output is wrong");
	else if (!said)
		strbuf_addstr(sb, "; wrong elements are spread over rows and columns");
}

static json_t *stats_json(struct ctx *c, const struct dk_stats *st, enum dist dist, int seed,
			  const struct dk_compare *cmp, struct strbuf *summary)
{
	json_t *o = json_object();
	json_object_set_new(o, "dist", json_string(dist_name(dist)));
	json_object_set_new(o, "seed", json_integer(seed));
	json_object_set_new(o, "ok", json_boolean(st->bad == 0));
	json_object_set_new(o, "checked", json_integer((json_int_t)st->checked));
	json_object_set_new(o, "bad", json_integer((json_int_t)st->bad));
	json_object_set_new(o, "nan", json_integer((json_int_t)st->nan));
	json_object_set_new(o, "inf", json_integer((json_int_t)st->inf));
	json_object_set_new(o, "unwritten", json_integer((json_int_t)st->unwritten));
	json_object_set_new(o, "max_abs_err", json_real(isfinite(st->max_abs_err) ? st->max_abs_err : -1));
	json_object_set_new(o, "max_err_over_tol", json_real(isfinite(st->max_ratio) ? st->max_ratio : -1));
	json_t *tol = json_object();
	json_object_set_new(tol, "eps_scale", json_real(cmp->eps_scale));
	json_object_set_new(tol, "rtol", json_real(cmp->rtol));
	json_object_set_new(tol, "atol", json_real(cmp->atol));
	json_object_set_new(o, "tolerance", tol);
	if (!st->bad)
		return o;

	struct tensor *out = output(c);
	int64_t rows = out->numel / out->cols;
	char at[96];
	strbuf_addf(summary, "%llu of %llu elements wrong", st->bad, st->checked);
	if (st->unwritten)
		strbuf_addf(summary, " (%llu never written)", st->unwritten);
	if (st->nan)
		strbuf_addf(summary, " (%llu NaN)", st->nan);
	if (st->inf)
		strbuf_addf(summary, " (%llu Inf)", st->inf);
	strbuf_addf(summary, " with '%s' inputs (seed %d)", dist_name(dist), seed);
	if (st->first_bad >= 0) {
		coords(c, st->first_bad, at, sizeof(at));
		strbuf_addf(summary, "; first at %s", at);
	}
	describe_clusters(st, rows, out->cols, summary);
	json_object_set_new(o, "where", json_string(summary->buf));

	/* samples sorted by index, first few */
	json_t *samples = json_array();
	int order[DK_MAX_SAMPLES];
	for (int i = 0; i < st->nsamples; i++)
		order[i] = i;
	for (int i = 1; i < st->nsamples; i++)
		for (int j = i; j > 0 && st->samples[order[j]].index < st->samples[order[j - 1]].index; j--) {
			int tmp = order[j]; order[j] = order[j - 1]; order[j - 1] = tmp;
		}
	for (int i = 0; i < st->nsamples && i < 8; i++) {
		const __typeof__(st->samples[0]) *s = &st->samples[order[i]];
		json_t *e = json_object();
		json_object_set_new(e, "index", coords_json(c, s->index));
		json_object_set_new(e, "got", isfinite(s->got) ? json_real(s->got) : json_string(isnan(s->got) ? "nan" : (s->got > 0 ? "inf" : "-inf")));
		json_object_set_new(e, "want", json_real(s->want));
		json_object_set_new(e, "tol", json_real(s->tol));
		json_array_append_new(samples, e);
	}
	json_object_set_new(o, "samples", samples);
	if (st->worst_index >= 0)
		json_object_set_new(o, "worst_index", coords_json(c, st->worst_index));
	json_t *rh = json_array(), *ch = json_array();
	for (int b = 0; b < DK_BUCKETS; b++) {
		json_array_append_new(rh, json_integer((json_int_t)st->row_hist[b]));
		json_array_append_new(ch, json_integer((json_int_t)st->col_hist[b]));
	}
	json_object_set_new(o, "row_buckets", rh);
	json_object_set_new(o, "col_buckets", ch);
	return o;
}

/*
 * Whether wrong elements are merely imprecise: every element written, none NaN or Inf, and
 * the worst error a small fraction of the scale (of sum |a||b| for a GEMM, of |want| else).
 * A logic error is off by the order of the scale; TF32 or fp16 rounding by about 2^-11.
 */
static int reduced_precision(struct ctx *c, const struct dk_stats *st, const struct dk_compare *cmp)
{
	if (st->unwritten || st->nan || st->inf || !isfinite(st->max_ratio))
		return 0;
	double tol_unit = c->gemm_like ? cmp->eps_scale : cmp->rtol;
	return tol_unit > 0 && st->max_ratio * tol_unit < 4e-3;
}

/*
 * The candidate's work must be on the stream it is given. A gate kernel holds that stream
 * closed while the candidate is called, waits for escaped work to have its time, then counts
 * the output elements written: any written before the gate opens ran elsewhere (another
 * stream, the legacy default stream, a per-thread stream), where the event timer would not
 * see it. The gate counts by itself, so nothing of ours has to run beside it. With lazy module
 * loading (CUDA's default) the first launch of a kernel waits for running kernels, so nothing
 * may be launched for the first time behind the gate: the candidate is called once before
 * it, and the gate kernel is loaded by dk_preload(). (Eager loading would do it too, but it
 * loads all of cuBLASLt at start, seconds of every evaluation.)
 */
struct gate_mem {
	int flag;
	unsigned long long written;
};

static int check_stream_escape(struct ctx *c, json_t *note)
{
	struct gate_mem *g = c->gate; /* allocated and its kernel loaded before confinement */
	int rc = -1;
	if (fill_inputs(c, DIST_UNIFORM, 7) || call_candidate(c) || sync_candidate(c) ||
	    fill_inputs(c, DIST_UNIFORM, 7))
		goto out;
	volatile int *flag = &g->flag;
	*flag = 0;
	g->written = ~0ull;
	struct tensor *out = output(c);
	if (!cuda_ok(c, (cudaError_t)dk_gate(flag, 10.0, out->d, tdk(out), out->numel,
					    &g->written, c->s), "closing the gate"))
		goto out;
	int called = call_candidate(c) == 0;
	usleep(50000); /* time for escaped work to run */
	*flag = 1;
	if (!called || sync_candidate(c))
		goto out;
	json_object_set_new(note, "stream_check", json_string("ok"));
	if (g->written) {
		fail(c, VERDICT_TIMING_ESCAPE, "%llu output elements were written while the stream the kernel was "
		     "given was held closed: the kernel launches work on another stream (or the default "
		     "stream), which escapes timing and ordering; launch on the given stream", g->written);
		goto out;
	}
	rc = 0;
out:
	g->flag = 1;
	if (!c->hung)
		cudaStreamSynchronize(c->s);
	return rc;
}

/* One correctness check: fresh inputs, poisoned outputs, one call, compare. 0 = correct. */
static int check_once(struct ctx *c, enum dist dist, int seed, const char *label)
{
	if (fill_inputs(c, dist, seed) || call_candidate(c) || sync_candidate(c) || verify_inputs(c) ||
	    compute_reference(c))
		return -1;
	struct dk_compare cmp;
	struct dk_stats st;
	fill_compare(c, dist, &cmp);
	if (!cuda_ok(c, (cudaError_t)dk_compare_run(&cmp, &st, c->scratch, c->s), "comparing outputs"))
		return -1;
	struct strbuf summary = STRBUF_INIT;
	json_t *o = stats_json(c, &st, dist, seed, &cmp, &summary);
	json_object_set_new(o, "when", json_string(label));
	json_array_append_new(c->checks, o);
	int rc = 0;
	if (st.bad) {
		if (!strcmp(label, "after_timing"))
			fail(c, VERDICT_STALE_OUTPUT, "correct at first, but wrong on fresh inputs after timing "
			     "(results kept between calls?): %s", summary.buf);
		else if (reduced_precision(c, &st, &cmp))
			fail(c, VERDICT_PRECISION, "close but not within the '%s' contract: errors up to %.3g times "
			     "the tolerance, the size reduced-precision arithmetic makes (TF32, fp16 or "
			     "approximate math?): %s", precision_name(c->t->precision), st.max_ratio, summary.buf);
		else
			fail(c, VERDICT_INCORRECT, "%s", summary.buf);
		rc = -1;
	}
	strbuf_release(&summary);
	return rc;
}

/* ---- module tasks: the reference process's cases ------------------------------------------ */


static void *module_open(struct ctx *c, struct ipc_open *tab, int *n, int cap, const struct mrun_handle *h,
			 const char *what)
{
	static char nothing; /* a tensor of 0 elements: no allocation to open, never dereferenced */
	if (!h->bytes)
		return &nothing;
	for (int i = 0; i < *n; i++)
		if (!memcmp(tab[i].h, h->ipc, MRUN_IPC_BYTES)) {
			if ((uint64_t)h->offset < tab[i].lo)
				tab[i].lo = (uint64_t)h->offset;
			if ((uint64_t)h->offset + (uint64_t)h->bytes > tab[i].hi)
				tab[i].hi = (uint64_t)h->offset + (uint64_t)h->bytes;
			return tab[i].base + h->offset;
		}
	if (*n >= cap) {
		fail(c, VERDICT_RUNNER_ERROR, "the module-run file holds more than %d distinct IPC handles", cap);
		return NULL;
	}
	cudaIpcMemHandle_t mh;
	memcpy(&mh, h->ipc, sizeof(mh) < MRUN_IPC_BYTES ? sizeof(mh) : MRUN_IPC_BYTES);
	void *p = NULL;
	cudaError_t e = cudaIpcOpenMemHandle(&p, mh, cudaIpcMemLazyEnablePeerAccess);
	if (e) {
		fail(c, VERDICT_RUNNER_ERROR, "cannot open the reference process's tensor %s over CUDA IPC: %s (%s); "
		     "the reference process must still hold it, on the same GPU (--device), and this "
		     "machine must allow CUDA IPC between processes", what, cudaGetErrorName(e),
		     cudaGetErrorString(e));
		return NULL;
	}
	memcpy(tab[*n].h, h->ipc, MRUN_IPC_BYTES);
	tab[*n].base = (char *)p;
	tab[*n].lo = (uint64_t)h->offset;
	tab[*n].hi = (uint64_t)h->offset + (uint64_t)h->bytes;
	(*n)++;
	return (char *)p + h->offset;
}

/* Reads RUN.json; the tensor list and the scalars into the context. 0, or -1 with the verdict
 * set (a bad file is the evaluator's or the reference's bug: task_error with the reason). */
static int module_parse(struct ctx *c)
{
	struct strbuf text = STRBUF_INIT;
	char *err = NULL;
	if (strbuf_read_file(&text, c->module_path, MRUN_MAX_TEXT)) {
		fail(c, VERDICT_TASK_ERROR, "cannot read the module-run file '%s'", c->module_path);
		strbuf_release(&text);
		return -1;
	}
	c->mr = module_run_parse(text.buf, text.len, &err);
	strbuf_release(&text);
	if (!c->mr) {
		fail(c, VERDICT_TASK_ERROR, "%s", err);
		free(err);
		return -1;
	}
	struct module_run *mr = c->mr;
	c->ntens = mr->ntensors;
	c->n_in = mr->ninputs;
	c->n_out = mr->noutputs;
	for (int i = 0; i < mr->ntensors; i++) {
		const struct mrun_tensor *mt = &mr->tensors[i];
		struct tensor *x = &c->tens[i];
		x->spec.name = mt->name;
		x->spec.is_output = mt->role == MRUN_OUTPUT;
		x->spec.ndim = mt->ndim;
		x->mdtype = (int)mt->dtype;
		x->numel = mt->numel;
		x->bytes = (size_t)mt->bytes;
		int64_t st = 1;
		for (int d = mt->ndim - 1; d >= 0; d--) {
			x->shape[d] = mt->shape[d];
			x->strides[d] = st;
			st *= mt->shape[d] ? mt->shape[d] : 1;
		}
		x->cols = mt->ndim && mt->shape[mt->ndim - 1] > 0 ? mt->shape[mt->ndim - 1] : 1;
		x->rows = x->numel / x->cols;
	}
	c->nscalars = mr->nscalars;
	for (int i = 0; i < mr->nscalars; i++) {
		c->scalars[i] = mr->scalars[i];
		c->scalar_names[i] = mr->scalar_names[i];
	}
	json_t *m = json_object();
	json_object_set_new(m, "name", json_string(mr->name));
	json_object_set_new(m, "file", json_string(mr->file));
	json_object_set_new(m, "truth", json_string(mr->truth_fp64 ? "fp64" : "fp32"));
	json_object_set_new(m, "cases", json_integer(mr->ncases));
	json_object_set_new(m, "tolerance", json_pack("{s:f,s:f}", "multiple", mr->multiple, "ulps", mr->ulps));
	json_object_set_new(c->report, "module", m);
	json_object_set_new(c->report, "task", json_string(mr->name));
	json_object_set_new(c->report, "precision", json_string(mr->precision));
	if (!(c->limit_gbps > 0))
		c->limit_gbps = mr->limit_gbps;
	if (!(c->limit_tflops > 0))
		c->limit_tflops = mr->limit_tflops;
	return 0;
}

static void module_hold_back(struct ctx *c);

/* Opens every handle (before confinement) and allocates the candidate's own buffers. */
static int module_setup(struct ctx *c)
{
	struct module_run *mr = c->mr;
	int cap = mr->ncases * mr->ntensors * 2 + 1, n = 0;
	struct ipc_open *tab = xcalloc((size_t)cap, sizeof(*tab));
	int rc = -1;
	c->mcases = xcalloc((size_t)mr->ncases, sizeof(*c->mcases));
	c->held_back = xcalloc((size_t)mr->ncases, sizeof(int));
	c->seen = xcalloc((size_t)mr->ncases, sizeof(int));
	for (int k = 0; k < mr->ncases; k++) {
		struct mcase *mc = &c->mcases[k];
		const struct mrun_case *rc_ = &mr->cases[k];
		mc->in = xcalloc((size_t)mr->ninputs + 1, sizeof(void *));
		mc->ref = xcalloc((size_t)mr->noutputs + 1, sizeof(void *));
		mc->truth = xcalloc((size_t)mr->noutputs + 1, sizeof(void *));
		mc->E = xcalloc((size_t)mr->noutputs + 1, sizeof(double));
		mc->mean_abs_truth = xcalloc((size_t)mr->noutputs + 1, sizeof(double));
		mc->have_stats = xcalloc((size_t)mr->noutputs + 1, sizeof(int));
		char what[192];
		for (int i = 0; i < mr->ninputs; i++) {
			snprintf(what, sizeof(what), "'%s' of case %d", mr->tensors[i].name, k);
			if (!(mc->in[i] = module_open(c, tab, &n, cap, &rc_->inputs[i], what)))
				goto out;
		}
		for (int o = 0; o < mr->noutputs; o++) {
			snprintf(what, sizeof(what), "'%s' (reference) of case %d", mr->tensors[mr->ninputs + o].name, k);
			if (!(mc->ref[o] = module_open(c, tab, &n, cap, &rc_->ref[o], what)))
				goto out;
			snprintf(what, sizeof(what), "'%s' (truth) of case %d", mr->tensors[mr->ninputs + o].name, k);
			if (!(mc->truth[o] = module_open(c, tab, &n, cap, &rc_->truth[o], what)))
				goto out;
		}
	}
	json_object_set_new(json_object_get(c->report, "module"), "ipc_allocations", json_integer(n));
	module_hold_back(c); /* before any call of the kernel: the stream check's too */
	for (int i = 0; i < c->ntens; i++) {
		struct tensor *x = &c->tens[i];
		cudaError_t e = cudaMalloc(&x->d, x->bytes ? x->bytes : 1);
		if (e) {
			fail(c, VERDICT_RUNNER_ERROR, "cannot allocate tensor '%s' (%.2f GB): %s", x->spec.name,
			     (double)x->bytes / 1e9, cudaGetErrorString(e));
			goto out;
		}
	}
	rc = 0;
out:
	c->ipc = tab; /* kept: the integrity hash reads them */
	c->nipc = n;
	return rc;
}

static json_t *hash_json(unsigned long long h)
{
	return json_sprintf("%016llx", h);
}

/* Hashes every opened IPC allocation (the range the tensors cover). Before the candidate is
 * loaded (after: 0) the hashes are kept; after its last call they are compared, and the report
 * gets module.reference_intact and module.reference_hashes. The reference process keeps these
 * tensors for later candidates (docs/evaluation.md, "Module tasks"), so a candidate that wrote
 * them through the mappings fails, and the evaluator lets the session go. 0, or -1 with the
 * verdict set (before) or the report saying why the hash could not be taken (after). */
static int module_hash(struct ctx *c, int after)
{
	json_t *mod = json_object_get(c->report, "module");
	json_t *list = after ? json_array() : NULL;
	int changed = 0;
	for (int i = 0; i < c->nipc; i++) {
		struct ipc_open *a = &c->ipc[i];
		unsigned long long h = 0;
		cudaError_t e = (cudaError_t)dk_hash(a->base + a->lo, (size_t)(a->hi - a->lo), &h, c->scratch, c->s);
		if (e && !after) {
			fail(c, VERDICT_RUNNER_ERROR, "cannot hash the reference process's tensors: %s",
			     cudaGetErrorString(e));
			return -1;
		}
		if (e) {
			json_object_set_new(mod, "reference_intact", json_false());
			json_object_set_new(mod, "reference_hash_error", json_sprintf(
				"cannot hash the reference process's tensors after the kernel: %s (the "
				"session is not reused)", cudaGetErrorString(e)));
			json_decref(list);
			return -1;
		}
		if (!after) {
			a->hash_before = h;
			continue;
		}
		changed += h != a->hash_before;
		json_array_append_new(list, json_pack("{s:I,s:o,s:o}", "bytes", (json_int_t)(a->hi - a->lo),
						      "before", hash_json(a->hash_before), "after", hash_json(h)));
	}
	if (!after) {
		c->hashed = 1;
		return 0;
	}
	json_object_set_new(mod, "reference_intact", json_boolean(!changed));
	json_object_set_new(mod, "reference_hashes", list);
	if (changed)
		fail(c, VERDICT_INPUTS_MODIFIED, "the kernel wrote the reference process's tensors through "
		     "their CUDA IPC mappings (%d of %d allocations changed: the cases' pristine inputs, "
		     "reference or truth outputs); a kernel may write its outputs only", changed, c->nipc);
	return 0;
}

static int poison_outputs(struct ctx *c)
{
	for (int i = 0; i < c->ntens; i++) {
		struct tensor *x = &c->tens[i];
		if (x->spec.is_output &&
		    !cuda_ok(c, (cudaError_t)dk_poison(x->d, tdk(x), x->numel, c->s), "poisoning outputs"))
			return -1;
	}
	return 0;
}

/* Case k's inputs copied into the candidate's buffers (the current input set), its outputs
 * poisoned; on the stream, not synchronized. */
static int module_copy_case(struct ctx *c, int k)
{
	for (int i = 0; i < c->ntens; i++) {
		struct tensor *x = &c->tens[i];
		if (x->spec.is_output || !x->bytes)
			continue;
		if (!cuda_ok(c, cudaMemcpyAsync(x->d, c->mcases[k].in[i], x->bytes, cudaMemcpyDeviceToDevice, c->s),
			     "copying a case's inputs"))
			return -1;
	}
	c->cur_case = k;
	c->seen[k] = 1;
	return poison_outputs(c);
}

static int module_load_case(struct ctx *c, int k)
{
	if (module_copy_case(c, k))
		return -1;
	return cuda_ok(c, cudaStreamSynchronize(c->s), "copying a case's inputs") ? 0 : -1;
}

/* The inputs of case k as the reference made them: the candidate must not write them. */
static int module_verify_inputs(struct ctx *c, int k)
{
	for (int i = 0; i < c->ntens; i++) {
		struct tensor *x = &c->tens[i];
		if (x->spec.is_output)
			continue;
		unsigned long long diff = 0;
		if (!cuda_ok(c, (cudaError_t)dk_bytes_differ(x->d, c->mcases[k].in[i], x->bytes, &diff, c->scratch, c->s),
			     "checking inputs"))
			return -1;
		if (diff) {
			fail(c, VERDICT_INPUTS_MODIFIED, "the kernel modified its input '%s' (%llu of %zu bytes changed); "
			     "inputs, parameters and buffers are read-only", x->spec.name, diff, x->bytes);
			return -1;
		}
	}
	return 0;
}

static json_t *num_or_name(double v)
{
	return isfinite(v) ? json_real(v) : json_string(isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf"));
}

/*
 * Every output of the current call against case k's truth. Appends one check per output to the
 * report (when: label) and sets the verdict on the first failure: after timing, stale; in a
 * timed call, timing_mismatch; else precision when the only errors are those of lower-precision
 * arithmetic (a strict fp32 module's outputs off by at most 4e-3 of their scale, every element
 * written and finite: TF32 or fp16 products), otherwise incorrect. 0 = all within the budget.
 */
static int module_compare(struct ctx *c, int k, const char *label, int trial, int trials)
{
	struct module_run *mr = c->mr;
	const struct mrun_case *mc = &mr->cases[k];
	for (int o = 0; o < mr->noutputs; o++) {
		struct tensor *out = &c->tens[mr->ninputs + o];
		struct dk_mcompare cmp;
		memset(&cmp, 0, sizeof(cmp));
		cmp.got_dtype = out->mdtype;
		cmp.truth_dtype = mrun_dtype_is_float(out->mdtype) ? (mr->truth_fp64 ? DK_FP64 : DK_FP32) : out->mdtype;
		cmp.numel = out->numel;
		cmp.cols = out->cols;
		cmp.rows = out->rows;
		cmp.got = out->d;
		cmp.ref = c->mcases[k].ref[o];
		cmp.truth = c->mcases[k].truth[o];
		cmp.multiple = mr->multiple;
		cmp.ulps = mr->ulps;
		struct mcase *mk = &c->mcases[k];
		cmp.have_stats = mk->have_stats[o];
		cmp.E = mk->E[o];
		cmp.mean_abs_truth = mk->mean_abs_truth[o];
		struct dk_stats st;
		struct dk_mextra mx;
		if (!cuda_ok(c, (cudaError_t)dk_module_compare(&cmp, &st, &mx, c->scratch, c->s), "comparing outputs"))
			return -1;
		mk->E[o] = mx.E;
		mk->mean_abs_truth[o] = mx.mean_abs_truth;
		mk->have_stats[o] = 1;
		json_t *j = json_object();
		json_object_set_new(j, "when", trial >= 0 ? json_sprintf("timed call %d", trial) : json_string(label));
		json_object_set_new(j, "case", json_integer(k));
		json_object_set_new(j, "seed", json_integer(mc->seed));
		json_object_set_new(j, "dist", json_string(mc->dist));
		json_object_set_new(j, "output", json_string(out->spec.name));
		json_object_set_new(j, "ok", json_boolean(st.bad == 0));
		json_object_set_new(j, "checked", json_integer((json_int_t)st.checked));
		json_object_set_new(j, "bad", json_integer((json_int_t)st.bad));
		json_object_set_new(j, "nan", json_integer((json_int_t)st.nan));
		json_object_set_new(j, "inf", json_integer((json_int_t)st.inf));
		json_object_set_new(j, "unwritten", json_integer((json_int_t)st.unwritten));
		json_object_set_new(j, "E", json_real(mx.E));
		json_object_set_new(j, "mean_abs_truth", json_real(mx.mean_abs_truth));
		json_object_set_new(j, "max_abs_err", num_or_name(st.max_abs_err));
		json_object_set_new(j, "max_err_over_budget", num_or_name(st.max_ratio));
		json_object_set_new(j, "max_err_over_scale", num_or_name(mx.max_scaled_err));
		if (mx.worst_index >= 0) {
			json_t *w = json_object();
			json_object_set_new(w, "index", coords_json_in(out, mx.worst_index));
			json_object_set_new(w, "got", num_or_name(mx.worst_got));
			json_object_set_new(w, "want", num_or_name(mx.worst_want));
			json_object_set_new(w, "budget", num_or_name(mx.worst_budget));
			json_object_set_new(j, "worst", w);
		}
		json_object_set_new(j, "max_err_over_tol", num_or_name(st.max_ratio)); /* as built-ins say it */
		if (!st.bad) {
			/* a passing timed call adds nothing to the report: there may be hundreds */
			if (trial < 0)
				json_array_append_new(c->checks, j);
			else
				json_decref(j);
			continue;
		}
		json_t *samples = json_array();
		for (int q = 0; q < st.nsamples && q < 8; q++) {
			json_t *e = json_object();
			json_object_set_new(e, "index", coords_json_in(out, st.samples[q].index));
			json_object_set_new(e, "got", num_or_name(st.samples[q].got));
			json_object_set_new(e, "want", num_or_name(st.samples[q].want));
			json_object_set_new(e, "tol", num_or_name(st.samples[q].tol));
			json_array_append_new(samples, e);
		}
		json_object_set_new(j, "samples", samples);
		struct strbuf sb = STRBUF_INIT;
		char at[128];
		strbuf_addf(&sb, "output '%s': %llu of %llu elements outside the budget", out->spec.name, st.bad,
			    st.checked);
		if (st.unwritten)
			strbuf_addf(&sb, " (%llu never written)", st.unwritten);
		if (st.nan)
			strbuf_addf(&sb, " (%llu NaN)", st.nan);
		if (st.inf)
			strbuf_addf(&sb, " (%llu Inf)", st.inf);
		strbuf_addf(&sb, " with case %d ('%s' inputs, seed %d)", k, mc->dist, mc->seed);
		/* no value of the truth here (the report's "worst" and "samples" keep them for the
		 * user): this message reaches the model, and the run's cases do not change */
		if (mx.worst_index >= 0) {
			char words[64];
			coords_in(out, mx.worst_index, at, sizeof(at));
			strbuf_addf(&sb, "; worst at %s: got %.9g, %s", at, mx.worst_got,
				    mrun_error_words(st.max_ratio, words, sizeof(words)));
		}
		strbuf_addf(&sb, " (budget = %g x max(|ref - truth|, E max(1, |truth| / mean|truth|)) + %g ulp, "
			    "truth %s)", mr->multiple, mr->ulps, mr->truth_fp64 ? "fp64" : "fp32");
		describe_clusters(&st, out->rows, out->cols, &sb);
		json_object_set_new(j, "where", json_string(sb.buf));
		json_array_append_new(c->checks, j);
		if (trial >= 0)
			fail(c, VERDICT_TIMING_MISMATCH, "timed call %d of %d gave a wrong output (%s), although the "
			     "checked calls were right: outputs of timed calls are checked too, on a case drawn "
			     "per call; a kernel that skips or replays its work when timed fails here",
			     trial + 1, trials, sb.buf);
		else if (!strcmp(label, "after_timing"))
			fail(c, VERDICT_STALE_OUTPUT, "correct at first, but wrong after timing (results kept between "
			     "calls?): %s", sb.buf);
		else if (!strcmp(mr->precision, "strict") && out->mdtype == MDT_FP32 && !st.unwritten && !st.nan &&
			 !st.inf && mx.max_scaled_err < 4e-3)
			fail(c, VERDICT_PRECISION, "close but not within the 'strict' contract: errors up to %.3g of "
			     "the outputs' scale, the size reduced-precision arithmetic makes (TF32, fp16 or "
			     "approximate math?): %s", mx.max_scaled_err, sb.buf);
		else
			fail(c, VERDICT_INCORRECT, "%s", sb.buf);
		strbuf_release(&sb);
		return -1;
	}
	return 0;
}

/* One correctness check of case k: its inputs, poisoned outputs, one call, inputs unmodified,
 * every output within the budget. */
static int module_check_once(struct ctx *c, int k, const char *label)
{
	if (module_load_case(c, k) || call_candidate(c) || sync_candidate(c) || module_verify_inputs(c, k))
		return -1;
	return module_compare(c, k, label, -1, 0);
}

/* The group a timed call's time is counted in: the distribution of its case (the first case
 * of that distribution stands for it). */
static int module_group(struct ctx *c, int k)
{
	for (int j = 0; j < k; j++)
		if (!strcmp(c->mr->cases[j].dist, c->mr->cases[k].dist))
			return j;
	return k;
}

/* The cases held back from the checks before timing (protocol_hold_back), into the report. */
static void module_hold_back(struct ctx *c)
{
	int *group = xcalloc((size_t)c->mr->ncases, sizeof(int));
	for (int k = 0; k < c->mr->ncases; k++)
		group[k] = module_group(c, k);
	protocol_hold_back(group, c->mr->ncases, c->held_back);
	free(group);
	json_t *list = json_array();
	for (int k = 0; k < c->mr->ncases; k++)
		if (c->held_back[k])
			json_array_append_new(list, json_integer(k));
	json_object_set_new(json_object_get(c->report, "module"), "held_back_cases", list);
}

/* Before confinement: the comparison's kernels run once (their first launches, module
 * loading), on case 0's inputs as they are; the result does not count. */
static int module_compare_warm(struct ctx *c)
{
	struct dk_mcompare cmp;
	struct dk_stats st;
	struct dk_mextra mx;
	struct tensor *out = &c->tens[c->mr->ninputs];
	memset(&cmp, 0, sizeof(cmp));
	cmp.got_dtype = cmp.truth_dtype = out->mdtype;
	cmp.numel = out->numel;
	cmp.rows = out->rows;
	cmp.cols = out->cols;
	cmp.got = cmp.ref = cmp.truth = out->d;
	cmp.multiple = 1;
	unsigned long long diff;
	struct tensor *in = first_input(c);
	return cuda_ok(c, (cudaError_t)dk_module_compare(&cmp, &st, &mx, c->scratch, c->s), "warming the comparison") &&
	       cuda_ok(c, (cudaError_t)dk_bytes_differ(in->d, in->d, in->bytes, &diff, c->scratch, c->s),
		       "warming the comparison") ? 0 : -1;
}

/* ---- timing ---------------------------------------------------------------------------- */

/* Points every input at buffer set k. */
static void use_set(struct ctx *c, int k)
{
	for (int i = 0; i < c->ntens; i++)
		if (!c->tens[i].spec.is_output)
			c->tens[i].d = c->tens[i].set[k];
}

/*
 * The input sets timed calls rotate over: up to MAX_SETS, while they take at most half of the
 * free memory (huge tensors get fewer; every timed call's inputs are regenerated anyway).
 * Allocated before the candidate is loaded.
 */
static void alloc_sets(struct ctx *c)
{
	size_t in_bytes = 0, fr = 0, tot = 0;
	for (int i = 0; i < c->ntens; i++)
		if (!c->tens[i].spec.is_output) {
			c->tens[i].set[0] = c->tens[i].d;
			in_bytes += c->tens[i].bytes;
		}
	c->nsets = 1;
	if (c->no_timed_verify || cudaMemGetInfo(&fr, &tot))
		return;
	for (int k = 1; k < MAX_SETS && in_bytes * (size_t)k <= fr / 2; k++) {
		int ok = 1;
		for (int i = 0; i < c->ntens && ok; i++) {
			struct tensor *x = &c->tens[i];
			if (!x->spec.is_output && cudaMalloc(&x->set[k], x->bytes)) {
				cudaGetLastError();
				x->set[k] = NULL;
				ok = 0;
			}
		}
		if (!ok) {
			for (int i = 0; i < c->ntens; i++)
				if (c->tens[i].set[k]) {
					cudaFree(c->tens[i].set[k]);
					c->tens[i].set[k] = NULL;
				}
			break;
		}
		c->nsets = k + 1;
	}
}

/* Fills set k with the timed calls' inputs: uniform, a seed per set. */
static int fill_sets(struct ctx *c)
{
	for (int k = 0; k < c->nsets; k++) {
		use_set(c, k);
		for (int i = 0; i < c->ntens; i++) {
			struct tensor *x = &c->tens[i];
			if (x->spec.is_output)
				continue;
			set_fill(c, x, i, DIST_UNIFORM, 100 + k);
			if (!cuda_ok(c, (cudaError_t)dk_fill(x->d, &x->fill, c->s), "generating inputs"))
				return -1;
		}
	}
	use_set(c, 0);
	return cuda_ok(c, cudaStreamSynchronize(c->s), "generating inputs") ? 0 : -1;
}

/* Fresh inputs for a timed call: every input of the current set regenerated from a seed drawn
 * now, in a distribution drawn now from the task's (the precision probe among them, so a
 * kernel cannot keep full precision for the checks alone), so nothing of an earlier call is
 * reusable: not its result, not a part of it for the inputs that did not change. */
static int regenerate_inputs(struct ctx *c, enum dist dist)
{
	uint64_t seed = protocol_draw_seed();
	for (int i = 0; i < c->ntens; i++) {
		struct tensor *x = &c->tens[i];
		if (x->spec.is_output)
			continue;
		set_fill(c, x, i, dist, seed);
		if (!cuda_ok(c, (cudaError_t)dk_fill(x->d, &x->fill, c->s), "generating inputs"))
			return -1;
	}
	return 0;
}

struct timed_stats {
	int full, sampled;
	long long samples;
};

/* The outputs of timed call `trial` against the inputs it was given: the whole output (every
 * the first FULL_CHECKED calls), else positions drawn now, after the call (GEMM_SAMPLES, each
 * against an fp64 dot product over all of K, or OTHER_SAMPLES), so a kernel cannot know which.
 * With fresh inputs in every call there is nothing to replay; what sampling leaves is a kernel
 * that skips a sliver of its work, which gains it as little time as it has a chance to pass.
 * 0 = right. */
static int verify_timed(struct ctx *c, int trial, int trials, enum dist dist, struct timed_stats *ts)
{
	/* the inputs first: the reference below is computed from the buffers as they are after
	 * the call, so a kernel that zeroed B and wrote a zero C would match it */
	if (verify_inputs(c))
		return -1;
	struct dk_compare cmp;
	fill_compare(c, dist, &cmp);
	char at[96];
	if (trial < FULL_CHECKED) {
		struct dk_stats st;
		if (compute_reference(c) ||
		    !cuda_ok(c, (cudaError_t)dk_compare_run(&cmp, &st, c->scratch, c->s), "checking a timed call"))
			return -1;
		ts->full++;
		if (!st.bad)
			return 0;
		struct strbuf summary = STRBUF_INIT;
		json_t *o = stats_json(c, &st, dist, trial, &cmp, &summary);
		json_object_set_new(o, "when", json_sprintf("timed call %d", trial));
		json_array_append_new(c->checks, o);
		fail(c, VERDICT_TIMING_MISMATCH, "timed call %d of %d gave a wrong output (%s), although the checked "
		     "calls were right: outputs of timed calls are checked too, on inputs that change "
		     "between calls; a kernel that skips or replays its work when timed fails here",
		     trial + 1, trials, summary.buf);
		strbuf_release(&summary);
		return -1;
	}
	long long idx[DK_MAX_CHECK_SAMPLES];
	int n = 0;
	int64_t total = output(c)->numel;
	for (int i = 0; i < (c->gemm_like ? GEMM_SAMPLES : OTHER_SAMPLES) && n < DK_MAX_CHECK_SAMPLES; i++)
		idx[n++] = protocol_random_below(total);
	/* softmax: dk_sample_check computes the statistics of the sampled rows of these inputs */
	if (c->gemm_like) {
		c->gd.A = find_tensor(c, "A")->d;
		c->gd.B = gemm_b_tensor(c)->d;
	}
	struct dk_sample_stats ss;
	if (!cuda_ok(c, (cudaError_t)dk_sample_check(c->gemm_like ? &c->gd : NULL, &cmp, idx, n, &ss,
						     c->scratch, c->s), "checking a timed call"))
		return -1;
	ts->sampled++;
	ts->samples += n;
	if (!ss.bad)
		return 0;
	coords(c, ss.first_bad, at, sizeof(at));
	json_t *o = json_object();
	json_object_set_new(o, "when", json_sprintf("timed call %d", trial));
	json_object_set_new(o, "ok", json_false());
	json_object_set_new(o, "checked", json_integer(ss.checked));
	json_object_set_new(o, "bad", json_integer((json_int_t)ss.bad));
	json_array_append_new(c->checks, o);
	fail(c, VERDICT_TIMING_MISMATCH, "timed call %d of %d gave a wrong output (%llu of %d sampled elements "
	     "wrong; at %s got %g, want %g within %g), although the checked calls were right: outputs "
	     "of timed calls are checked too, on inputs that change between calls; a kernel that "
	     "skips or replays its work when timed fails here", trial + 1, trials, ss.bad, ss.checked,
	     at, ss.got, ss.want, ss.tol);
	return -1;
}

/* A module's timed calls on cases the kernel had not been given before against the time of
 * all of them (protocol_first_sight), into timing.first_sight; returns the time. */
static double first_sight(const double *ms, const int *first, int trials, double worst, json_t *tj)
{
	double best;
	int n, replay;
	double t = protocol_first_sight(ms, first, trials, worst, &best, &n, &replay);
	if (!n)
		return worst;
	json_t *f = json_pack("{s:i,s:f,s:f,s:b}", "calls", n, "min_ms", best, "median_ms", worst,
			      "replay", replay);
	if (replay)
		json_object_set_new(f, "note", json_sprintf(
			"the kernel took %.4f ms at best on a case it had not been given before and %.4f ms on "
			"the cases it had: it replays stored results; timed at %.4f ms", best, worst, best));
	json_object_set_new(tj, "first_sight", f);
	return t;
}

/*
 * Event timing of the candidate with a cold L2 before each trial; median and spread. Before
 * each timed call, outside the events (like the L2 flush): the next input set, regenerated in
 * full from a new seed, outputs poisoned; after it, the outputs verified. The events bracket
 * the candidate's call alone, as before; what the rest costs is reported as overhead per
 * trial (the regeneration also on its own, timed by events of its own).
 */
static int time_it(struct ctx *c, struct timing *tm, json_t *tj)
{
	/* static, so that state_hash may cover them while the candidate's calls run (guard_region):
	 * the events, the distributions, which cases were first seen and the groups; the times are
	 * read off the events after the calls, so ms stays on the stack */
	static cudaEvent_t ev[2 * MAX_TRIALS], rg[2 * MAX_TRIALS];
	double ms[MAX_TRIALS];
	static enum dist tdist[MAX_TRIALS];
	static int first[MAX_TRIALS]; /* a module's case the kernel had not been given before */
	static int tgroup[MAX_TRIALS]; /* what the per-distribution medians group by */
	struct timed_stats ts = { 0, 0, 0 };
	memset(tm, 0, sizeof(*tm));
	struct tensor *out = output(c);
	for (int i = 0; i < 3; i++) /* warm-up */
		if (call_candidate(c))
			return -1;
	if (sync_candidate(c))
		return -1;
	for (int i = 0; i < 2; i++)
		cudaEventCreate(&ev[i]);
	dk_flush_l2(c->flush_buf, c->flush_bytes, c->s);
	cudaEventRecord(ev[0], c->s);
	if (call_candidate(c))
		return -1;
	cudaEventRecord(ev[1], c->s);
	if (sync_candidate(c))
		return -1;
	float est = 0;
	cudaEventElapsedTime(&est, ev[0], ev[1]);
	int trials = c->trials_override ? c->trials_override : protocol_trials(est, c->quick);
	if (trials > MAX_TRIALS)
		trials = MAX_TRIALS;
	for (int i = 2; i < 2 * trials; i++)
		cudaEventCreate(&ev[i]);
	for (int i = 0; i < 2 * trials; i++)
		cudaEventCreate(&rg[i]);
	guard_region(c, ev, sizeof(ev[0]) * 2 * (size_t)trials);
	guard_region(c, rg, sizeof(rg[0]) * 2 * (size_t)trials);
	guard_region(c, tdist, sizeof(tdist[0]) * (size_t)trials);
	guard_region(c, first, sizeof(first[0]) * (size_t)trials);
	guard_region(c, tgroup, sizeof(tgroup[0]) * (size_t)trials);
	double t_loop = wall_s();
	for (int i = 0; i < trials; i++) {
		/* the inputs of this call: a built-in task's drawn from one of its distributions and a
		 * seed drawn now; a module's, one of the reference's cases drawn now */
		int k = c->mr && !c->no_timed_verify ?
				protocol_draw_case(c->held_back, c->seen, c->mr->ncases, trials - i) : 0;
		tdist[i] = c->no_timed_verify || c->mr ? DIST_UNIFORM : protocol_draw_dist(c->t);
		if (c->no_timed_verify)
			k = c->cur_case;
		first[i] = c->mr && !c->seen[k];
		tgroup[i] = c->mr ? module_group(c, k) : (int)tdist[i];
		if (!c->no_timed_verify) {
			use_set(c, i % c->nsets);
			cudaEventRecord(rg[2 * i], c->s);
			if (c->mr ? module_copy_case(c, k) : regenerate_inputs(c, tdist[i]))
				return -1;
			cudaEventRecord(rg[2 * i + 1], c->s);
			/* a module's outputs were poisoned with its case's inputs */
			if (!c->mr &&
			    !cuda_ok(c, (cudaError_t)dk_poison(out->d, tdk(out), out->numel, c->s), "poisoning outputs"))
				return -1;
		}
		dk_flush_l2(c->flush_buf, c->flush_bytes, c->s);
		cudaEventRecord(ev[2 * i], c->s);
		if (call_candidate(c))
			return -1;
		cudaEventRecord(ev[2 * i + 1], c->s);
		if (c->no_timed_verify)
			continue;
		if (sync_candidate(c))
			return -1;
		if (c->mr && first[i]) { /* a held-back case: its check, as before timing */
			char when[64];
			snprintf(when, sizeof(when), "timed call %d, the case first seen", i);
			if (module_verify_inputs(c, k) || module_compare(c, k, when, -1, 0))
				return -1;
			ts.full++;
		} else if (c->mr) { /* the truth is precomputed: every timed call's outputs checked in full */
			if (module_compare(c, k, "timed", i, trials))
				return -1;
			ts.full++;
		} else if (verify_timed(c, i, trials, tdist[i], &ts)) {
			return -1;
		}
	}
	if (sync_candidate(c))
		return -1;
	guard_region(c, NULL, 0);
	double loop_ms = (wall_s() - t_loop) * 1e3;
	use_set(c, 0);
	double sum = 0, regen_ms = 0;
	for (int i = 0; i < trials; i++) {
		float f = 0, r = 0;
		cudaEventElapsedTime(&f, ev[2 * i], ev[2 * i + 1]);
		ms[i] = f;
		sum += f;
		if (!c->no_timed_verify && cudaEventElapsedTime(&r, rg[2 * i], rg[2 * i + 1]) == cudaSuccess)
			regen_ms += r / trials;
	}
	cudaGetLastError();
	for (int i = 0; i < 2 * trials; i++) {
		cudaEventDestroy(ev[i]);
		cudaEventDestroy(rg[i]);
	}
	/* the median of each distribution the timed calls drew; the time is the largest (a kernel
	 * fast on one kind of input only is timed on its slowest): the protocol's statistic, the
	 * baseline's too */
	double by_dist[DIST_COUNT];
	double worst = protocol_worst_median(ms, tdist, trials, by_dist);
	json_t *bydist = json_object();
	if (c->mr) { /* a module: by the distribution of the cases drawn */
		double by[MAX_TRIALS];
		worst = 0;
		for (int d = 0; d < c->mr->ncases; d++) {
			int n = 0;
			for (int i = 0; i < trials; i++)
				if (tgroup[i] == d)
					by[n++] = ms[i];
			if (!n)
				continue;
			double med = protocol_median(by, n);
			json_object_set_new(bydist, c->mr->cases[d].dist, json_real(med));
			worst = fmax(worst, med);
		}
	} else {
		for (int d = 0; d < DIST_COUNT; d++)
			if (by_dist[d] >= 0)
				json_object_set_new(bydist, dist_name((enum dist)d), json_real(by_dist[d]));
	}
	if (c->mr)
		worst = first_sight(ms, first, trials, worst, tj);
	protocol_median(ms, trials); /* sorts: the percentiles below */
	tm->trials = trials;
	tm->median_ms = worst;
	tm->p10_ms = ms[trials / 10];
	tm->p90_ms = ms[trials - 1 - trials / 10];
	tm->min_ms = ms[0];
	tm->mean_ms = sum / trials;
	json_t *v = json_object();
	json_object_set_new(v, "enabled", json_boolean(!c->no_timed_verify));
	json_object_set_new(v, "protocol", json_string(c->no_timed_verify ? "fixed" : c->mr ? "module-cases" : PROTOCOL_NAME));
	json_object_set_new(v, "input_sets", json_integer(c->nsets));
	json_object_set_new(v, "inputs_regenerated", json_boolean(!c->no_timed_verify));
	if (c->mr) /* "regenerated": each call's inputs copied from a case drawn for it */
		json_object_set_new(v, "inputs", json_string("a reference case drawn per call, copied in"));
	json_object_set_new(v, "regenerate_ms_per_trial", json_real(regen_ms));
	json_object_set_new(v, "full_checks", json_integer(ts.full));
	json_object_set_new(v, "sampled_checks", json_integer(ts.sampled));
	json_object_set_new(v, "samples", json_integer(ts.samples));
	json_object_set_new(v, "overhead_ms_per_trial", json_real(loop_ms / trials - tm->mean_ms));
	json_object_set_new(tj, "timed_calls", v);
	json_object_set_new(tj, "median_ms_by_dist", bydist);
	return 0;
}

static json_t *timing_json(const struct timing *tm)
{
	json_t *o = json_object();
	json_object_set_new(o, "trials", json_integer(tm->trials));
	json_object_set_new(o, "median_ms", json_real(tm->median_ms));
	json_object_set_new(o, "p10_ms", json_real(tm->p10_ms));
	json_object_set_new(o, "p90_ms", json_real(tm->p90_ms));
	json_object_set_new(o, "min_ms", json_real(tm->min_ms));
	json_object_set_new(o, "mean_ms", json_real(tm->mean_ms));
	json_object_set_new(o, "spread", json_real(tm->median_ms > 0 ? (tm->p90_ms - tm->p10_ms) / tm->median_ms : 0));
	return o;
}

/*
 * The host clock over a batch of back-to-back calls, fenced by a device-wide synchronize,
 * against events on our stream over the same batch: work moved to another stream escapes
 * the events but not the host clock. When the host launches faster than the kernels run, the
 * two agree but for the batch's two ends (tens of microseconds); when it is slower, the
 * events span the launches too. So a legitimate kernel stays within 1.25x plus 50 us over the
 * batch, while an escaped one shows the events timing launches only. A host thread preempted
 * at the wrong moment looks like an escape too: a batch that fails is tried twice more, and
 * the best of the three judged.
 */
static int cross_batch(struct ctx *c, int n, double *host_ms, double *ev_ms)
{
	cudaEvent_t e0, e1;
	cudaEventCreate(&e0);
	cudaEventCreate(&e1);
	int rc = -1;
	if (!cuda_ok(c, cudaDeviceSynchronize(), "cross-check"))
		goto out;
	double t0 = wall_s();
	cudaEventRecord(e0, c->s);
	for (int i = 0; i < n; i++)
		if (call_candidate(c))
			goto out;
	cudaEventRecord(e1, c->s);
	cudaError_t e = cudaDeviceSynchronize();
	*host_ms = (wall_s() - t0) * 1e3 / n;
	if (e) {
		fail(c, VERDICT_CUDA_ERROR, "the kernel failed on the device: %s", cudaGetErrorString(e));
		goto out;
	}
	float ev_total = 0;
	cudaEventElapsedTime(&ev_total, e0, e1);
	*ev_ms = ev_total / n;
	rc = 0;
out:
	cudaEventDestroy(e0);
	cudaEventDestroy(e1);
	return rc;
}

static int cross_check(struct ctx *c, double event_ms_hint, json_t *timing)
{
	int n = (int)fmax(5, fmin(100, 50.0 / (event_ms_hint + 0.01)));
	double host_ms = 0, ev_ms = 0, excess = INFINITY;
	for (int attempt = 0; attempt < 3 && excess > 0; attempt++) {
		double h, ev;
		if (cross_batch(c, n, &h, &ev))
			return -1;
		double x = h - (1.25 * ev + 0.05 / n);
		if (x < excess) {
			excess = x;
			host_ms = h;
			ev_ms = ev;
		}
	}
	json_object_set_new(timing, "host_ms_per_call", json_real(host_ms));
	json_object_set_new(timing, "event_ms_per_call_warm", json_real(ev_ms));
	if (excess > 0) {
		fail(c, VERDICT_TIMING_ESCAPE, "the host clock sees %.4f ms per call but events on the given stream "
		     "see %.4f ms: the kernel does work outside the stream it was given", host_ms, ev_ms);
		return -1;
	}
	return 0;
}


/* ---- plausibility ----------------------------------------------------------------------- */

/*
 * A time beyond what the GPU can do is a measurement the candidate bent, never a result:
 * the bytes the op must move to or from DRAM over the time against --limit-gbps, its useful
 * FLOPs (the task model's count: triangular and masked GEMMs count their work) against
 * --limit-tflops. The evaluator computes both limits from the baseline process and applies
 * the same check to this report: its check is the one that counts. Without them (a person
 * running the runner, `cutegen eval --no-baseline`) the GPU's own figures bound it.
 */
static void plausibility(struct ctx *c, double ms, json_t *metrics)
{
	/* a module: its bytes (each tensor once: its inputs are copied in and L2 flushed before
	 * each call) and torch's FLOP count, when known; contract "none" has no compute bound */
	enum precision prec = c->mr ? precision_parse(c->mr->precision) : c->t->precision;
	if (!(c->limit_gbps > 0) || !(c->limit_tflops > 0)) {
		int clk = 0, mclk = 0, bus = 0;
		cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, c->device);
		cudaDeviceGetAttribute(&mclk, cudaDevAttrMemoryClockRate, c->device);
		cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, c->device);
		if (!(c->limit_gbps > 0) && mclk > 0 && bus > 0)
			c->limit_gbps = 1.05 * limits_dram_gbps(mclk, bus);
		if (!(c->limit_tflops > 0) && clk > 0 && prec)
			c->limit_tflops = 1.05 * limits_peak_tflops(c->prop.major, c->prop.multiProcessorCount,
								     clk, prec);
	}
	json_t *lim = json_object();
	json_object_set_new(lim, "gbps", json_real(c->limit_gbps));
	json_object_set_new(lim, "tflops", json_real(c->limit_tflops));
	json_object_set_new(metrics, "limits", lim);
	double bytes = c->mr ? c->mr->bytes : task_dram_bytes(c->t, (double)c->prop.l2CacheSize);
	double flops = c->mr ? c->mr->flops : task_flops(c->t);
	double gbps = bytes / (ms * 1e-3) / 1e9, tflops = flops / (ms * 1e-3) / 1e12;
	json_object_set_new(metrics, "dram_bytes", json_real(bytes));
	if (c->limit_gbps > 0 && bytes > 0 && gbps > c->limit_gbps)
		fail(c, VERDICT_IMPLAUSIBLE, "%.4f ms means moving %.0f MB at %.0f GB/s, beyond the limit of %.0f GB/s "
		     "(the GPU's copy roofline or DRAM bandwidth, plus 5%%): no kernel can; its time was bent "
		     "(work skipped or moved out of the timed calls)", ms, bytes / 1e6, gbps, c->limit_gbps);
	else if (c->limit_tflops > 0 && flops > 0 && tflops > c->limit_tflops)
		fail(c, VERDICT_IMPLAUSIBLE, "%.4f ms means %.1f TFLOP/s of %s work, beyond the limit of %.1f TFLOP/s "
		     "(the compute peak of this precision on this GPU, plus 5%%): no kernel can; its time "
		     "was bent (work skipped or moved out of the timed calls)", ms, tflops,
		     c->mr ? c->mr->precision : precision_name(c->t->precision), c->limit_tflops);
}

/* ---- main ------------------------------------------------------------------------------- */

/* What a failed device query means, in words a user can act on. */
static const char *no_device_reason(cudaError_t e)
{
	int drv = 0;
	cudaDriverGetVersion(&drv);
	if (e == cudaErrorInsufficientDriver && drv == 0)
		return "no NVIDIA driver on this machine";
	if (e == cudaErrorNoDevice || e == cudaSuccess)
		return "the driver sees no GPU";
	return cudaGetErrorString(e);
}

/* --devices: the GPUs as JSON. brief (--devices --brief, what `cutegen run` and `suite` ask
 * before they start) reads properties only, making no context on any GPU: a suite's runs ask
 * while other GPUs time kernels. */
static int list_devices(int brief)
{
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);
	json_t *o = json_object(), *a = json_array();
	if (e || n == 0) {
		json_object_set_new(o, "error", json_string(no_device_reason(e)));
		n = 0;
	}
	int drv = 0, rt = 0;
	cudaDriverGetVersion(&drv);
	cudaRuntimeGetVersion(&rt);
	json_object_set_new(o, "driver_version", json_integer(drv));
	json_object_set_new(o, "runtime_version", json_integer(rt));
	for (int i = 0; i < n; i++) {
		struct cudaDeviceProp p;
		if (cudaGetDeviceProperties(&p, i))
			continue;
		size_t fr = 0, tot = 0;
		if (!brief) {
			cudaSetDevice(i);
			cudaMemGetInfo(&fr, &tot);
		}
		json_t *d = json_object();
		json_object_set_new(d, "index", json_integer(i));
		json_object_set_new(d, "name", json_string(p.name));
		json_object_set_new(d, "cc", json_sprintf("%d.%d", p.major, p.minor));
		json_object_set_new(d, "sms", json_integer(p.multiProcessorCount));
		json_object_set_new(d, "memory_gb", json_real((double)p.totalGlobalMem / 1e9));
		if (!brief)
			json_object_set_new(d, "free_gb", json_real((double)fr / 1e9));
		json_object_set_new(d, "l2_mb", json_real(p.l2CacheSize / 1e6));
		json_array_append_new(a, d);
	}
	json_object_set_new(o, "devices", a);
	char *s = json_dumps(o, JSON_INDENT(1));
	puts(s);
	free(s);
	json_decref(o);
	return n ? 0 : 3;
}

static void usage(void)
{
	fprintf(stderr, "usage: cutegen-runner --task TASK.json --kernel K.so [--report-fd N] [--device N] "
		"[--quick] [--trials N] [--limit-gbps G] [--limit-tflops T] [--call-limit S] [--profile]\n"
		"       cutegen-runner --module RUN.json --kernel K.so [same options]\n"
		"       cutegen-runner --devices [--brief]\n");
}

int main(int argc, char **argv)
{
	struct ctx c;
	memset(&c, 0, sizeof(c));
	c.verdict = VERDICT_PASS;
	c.report_fd = -1;
	strbuf_init(&c.message, 0);
	c.t_start = wall_s();
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--devices"))
			return list_devices(v && !strcmp(v, "--brief"));
		else if (!strcmp(a, "--quick"))
			c.quick = 1;
		else if (!strcmp(a, "--profile"))
			c.profile = 1;
		else if (!strcmp(a, "--no-timed-verify"))
			c.no_timed_verify = 1;
		else if (!strcmp(a, "--no-confine"))
			c.no_confine = 1;
		else if (v && !strcmp(a, "--task"))
			c.task_path = argv[++i];
		else if (v && (!strcmp(a, "--kernel") || !strcmp(a, "--lib")))
			c.kernel_path = argv[++i];
		else if (v && !strcmp(a, "--module"))
			c.module_path = argv[++i];
		else if (v && !strcmp(a, "--report-fd"))
			c.report_fd = atoi(argv[++i]);
		else if (v && !strcmp(a, "--device"))
			c.device = atoi(argv[++i]);
		else if (v && !strcmp(a, "--trials"))
			c.trials_override = atoi(argv[++i]);
		else if (v && !strcmp(a, "--limit-gbps"))
			c.limit_gbps = atof(argv[++i]);
		else if (v && !strcmp(a, "--limit-tflops"))
			c.limit_tflops = atof(argv[++i]);
		else if (v && !strcmp(a, "--call-limit"))
			c.call_limit_s = atof(argv[++i]);
		else {
			usage();
			return 2;
		}
	}
	if (!!c.task_path == !!c.module_path || !c.kernel_path) {
		usage();
		return 2;
	}
	if (c.report_fd >= 0 && (c.report_fd <= 2 || fcntl(c.report_fd, F_GETFD) < 0)) {
		fprintf(stderr, "cutegen-runner: --report-fd %d is not an open descriptor above 2\n", c.report_fd);
		return 2;
	}
	if (c.no_confine && c.report_fd >= 0) {
		fprintf(stderr, "cutegen-runner: --no-confine is for profilers and sanitizers; a report "
			"on --report-fd needs the confined process\n");
		return 2;
	}
	if (c.trials_override < 0 || c.trials_override > MAX_TRIALS)
		c.trials_override = MAX_TRIALS;
	setvbuf(stdout, NULL, _IOLBF, 0);
	c.report = json_object();
	c.checks = json_array();
	json_object_set_new(c.report, "report_version", json_integer(RUNNER_REPORT_VERSION));
	json_object_set_new(c.report, "kernel", json_string(c.kernel_path));
	/* first of all: a report without the nonce is refused, whatever it says */
	if (c.report_fd >= 0 && read_nonce(&c))
		goto report;

	if (c.module_path) {
		phase("module");
		if (module_parse(&c))
			goto report;
		goto device;
	}
	phase("task");
	struct strbuf text = STRBUF_INIT;
	char *err = NULL;
	if (strbuf_read_file(&text, c.task_path, 1 << 20)) {
		fail(&c, VERDICT_TASK_ERROR, "cannot read the task file '%s'", c.task_path);
		goto report;
	}
	c.t = task_parse_json(text.buf, text.len, c.task_path, &err);
	strbuf_release(&text);
	if (!c.t) {
		fail(&c, VERDICT_TASK_ERROR, "%s", err);
		free(err);
		goto report;
	}
	json_object_set_new(c.report, "task", json_string(c.t->name));
	json_object_set_new(c.report, "precision", json_string(precision_name(c.t->precision)));
	c.gemm_like = task_is_gemm_like(c.t);
	c.nscalars = task_scalars(c.t, c.scalars, c.scalar_names);

device:
	phase("device");
	int ndev = 0;
	cudaError_t e = cudaGetDeviceCount(&ndev);
	if (e || ndev == 0) {
		fail(&c, VERDICT_NO_DEVICE, "no CUDA device: kernels can be compiled but not evaluated (%s)",
		     no_device_reason(e));
		goto report;
	}
	if (c.device < 0 || c.device >= ndev) {
		fail(&c, VERDICT_NO_DEVICE, "no CUDA device %d (this machine has %d)", c.device, ndev);
		goto report;
	}
	if (!cuda_ok(&c, cudaSetDevice(c.device), "selecting the device") ||
	    !cuda_ok(&c, cudaGetDeviceProperties(&c.prop, c.device), "reading device properties") ||
	    !cuda_ok(&c, cudaStreamCreateWithFlags(&c.s, cudaStreamNonBlocking), "creating a stream") ||
	    !cuda_ok(&c, cudaEventCreateWithFlags(&c.join[0], cudaEventDisableTiming), "creating an event") ||
	    !cuda_ok(&c, cudaEventCreateWithFlags(&c.join[1], cudaEventDisableTiming), "creating an event") ||
	    !cuda_ok(&c, cudaMalloc(&c.scratch, dk_scratch_bytes()), "allocating scratch"))
		goto report;
	if (!(c.abi = abi_area_map())) {
		fail(&c, VERDICT_RUNNER_ERROR, "cannot map the kernel's argument pages: %s", strerror(errno));
		goto report;
	}
	json_t *dev = json_object();
	json_object_set_new(dev, "name", json_string(c.prop.name));
	json_object_set_new(dev, "index", json_integer(c.device));
	json_object_set_new(dev, "cc", json_sprintf("%d.%d", c.prop.major, c.prop.minor));
	json_object_set_new(dev, "sms", json_integer(c.prop.multiProcessorCount));
	json_object_set_new(c.report, "device", dev);
	c.flush_bytes = (size_t)(c.prop.l2CacheSize > 0 ? c.prop.l2CacheSize : 64 << 20) * 2;
	if (!cuda_ok(&c, cudaMalloc(&c.flush_buf, c.flush_bytes), "allocating the L2 flush buffer"))
		goto report;

	if (c.mr) {
		/* the reference process's tensors, opened before confinement */
		phase("open");
		if (module_setup(&c))
			goto report;
	} else {
		phase("alloc");
		if (alloc_tensors(&c))
			goto report;
	}
	if (c.gemm_like && setup_gemm_refs(&c))
		goto report;
	if (c.t && (c.t->op == OP_SOFTMAX || c.t->op == OP_LOG_SOFTMAX)) {
		int64_t rows = output(&c)->numel / output(&c)->cols;
		if (!cuda_ok(&c, cudaMalloc((void **)&c.rowstat, (size_t)rows * 2 * sizeof(double)), "allocating row statistics"))
			goto report;
	}
	if (!cuda_ok(&c, cudaHostAlloc((void **)&c.gate, sizeof(*c.gate), cudaHostAllocMapped), "allocating the gate") ||
	    !cuda_ok(&c, (cudaError_t)dk_preload(), "loading the runner's kernels"))
		goto report;
	alloc_sets(&c);
	/* module loading before confinement: dk_preload loaded every runner kernel, and a fill and
	 * a reference run once here, so what CUDA does on first launches happens unconfined */
	if (fill_inputs(&c, DIST_UNIFORM, 0) || (c.t ? compute_reference(&c) : module_compare_warm(&c)))
		goto report;
	/* the reference's tensors as the candidate finds them, while this is cutegen's code only */
	if (c.mr) {
		phase("hash");
		if (module_hash(&c, 0))
			goto report;
	}

	phase("confine");
	char cerr[256];
	if (!c.no_confine && confine_process(c.report_fd >= 0 ? c.report_fd : 1, cerr, sizeof(cerr))) {
		fail(&c, VERDICT_RUNNER_ERROR, "cannot confine the process before loading the kernel: %s", cerr);
		goto report;
	}
	json_object_set_new(c.report, "confined", json_boolean(!c.no_confine));
	phase("load");
	if (load_kernel(&c))
		goto report;
	double setup_s = wall_s() - c.t_start;
	json_object_set_new(c.report, "setup_s", json_real(setup_s));

	if (c.profile) {
		phase("profile");
		if (fill_inputs(&c, DIST_UNIFORM, 100) || call_candidate(&c) || sync_candidate(&c))
			goto report;
		cudaProfilerStart();
		if (call_candidate(&c) == 0)
			sync_candidate(&c);
		cudaProfilerStop();
		goto report;
	}

	/* correctness: the work is on the given stream, then every distribution, every seed */
	double t_check = wall_s();
	phase("stream check");
	if (check_stream_escape(&c, c.report))
		goto report;
	if (c.mr) { /* every case the reference prepared but those held back for timing */
		for (int k = 0; k < c.mr->ncases && c.verdict == VERDICT_PASS; k++) {
			if (c.held_back[k])
				continue;
			char ph[64];
			snprintf(ph, sizeof(ph), "check case %d (%.16s, seed %d)", k, c.mr->cases[k].dist,
				 c.mr->cases[k].seed);
			phase(ph);
			module_check_once(&c, k, "before_timing");
		}
		goto checked;
	}
	int seeds = c.t->seeds > 0 ? c.t->seeds : 2;
	if (c.quick && seeds > 1)
		seeds = 1;
	for (int d = 0; d < c.t->n_dists && c.verdict == VERDICT_PASS; d++)
		for (int s = 0; s < seeds && c.verdict == VERDICT_PASS; s++) {
			char ph[64];
			snprintf(ph, sizeof(ph), "check %s seed %d", dist_name(c.t->dists[d]), s);
			phase(ph);
			check_once(&c, c.t->dists[d], s, "before_timing");
		}
	if (c.verdict == VERDICT_PASS && c.gemm_like && c.t->precision == PREC_TF32) {
		phase("check range probe");
		check_once(&c, DIST_LARGE, 0, "before_timing");
	}
checked:
	json_object_set_new(c.report, "check_s", json_real(wall_s() - t_check));
	if (c.verdict != VERDICT_PASS)
		goto report;

	phase("timing");
	double t_time = wall_s();
	struct timing tm;
	json_t *timing = json_object();
	json_object_set_new(c.report, "timing", timing);
	if ((!c.mr && fill_sets(&c)) || time_it(&c, &tm, timing))
		goto report;
	/* the time the report gives, kept in this frame while the cross-check and the re-check
	 * call the candidate again: its writes to it are the state hash's too */
	guard_region(&c, &tm, sizeof(tm));
	json_t *tj = timing_json(&tm);
	json_object_update(timing, tj);
	json_decref(tj);
	phase("cross-check");
	if (cross_check(&c, tm.median_ms, timing))
		goto report;
	json_object_set_new(c.report, "timing_s", json_real(wall_s() - t_time));

	/* a held-back case no timed call drew (fewer trials than such cases): its check now */
	for (int k = 0; c.mr && k < c.mr->ncases; k++)
		if (c.held_back[k] && !c.seen[k] && module_check_once(&c, k, "held back, after timing"))
			goto report;

	phase("recheck");
	if (c.mr ? module_check_once(&c, (int)protocol_random_below(c.mr->ncases), "after_timing")
		 : check_once(&c, DIST_NORMAL, 1000, "after_timing"))
		goto report;

	json_t *metrics = json_object();
	double flops = c.mr ? c.mr->flops : task_flops(c.t), bytes = c.mr ? c.mr->bytes : task_min_bytes(c.t);
	json_object_set_new(metrics, "ms", json_real(tm.median_ms));
	json_object_set_new(metrics, "tflops", json_real(flops > 0 ? flops / (tm.median_ms * 1e-3) / 1e12 : -1));
	json_object_set_new(metrics, "gbps", json_real(bytes > 0 ? bytes / (tm.median_ms * 1e-3) / 1e9 : -1));
	json_object_set_new(c.report, "metrics", metrics);
	plausibility(&c, tm.median_ms, metrics);

report:
	if (c.mr && c.hashed) {
		/* after the candidate's last call, whatever it left running on other streams done
		 * (a kernel past its call limit still runs: no hash, the session is not reused) */
		phase("hash after");
		cudaError_t se = c.hung ? cudaErrorNotReady : cudaDeviceSynchronize();
		if (se) {
			json_t *mod = json_object_get(c.report, "module");
			json_object_set_new(mod, "reference_intact", json_false());
			json_object_set_new(mod, "reference_hash_error", json_sprintf(
				"the device failed before the hash after the kernel: %s (the session is not "
				"reused)", c.hung ? "the kernel was still running past its call limit"
						  : cudaGetErrorString(se)));
		} else {
			module_hash(&c, 1);
		}
	}
	phase("report");
	json_object_set_new(c.report, "checks", c.checks);
	if (c.escape_preempted)
		json_object_set_new(c.report, "escape_waits_preempted", json_integer(c.escape_preempted));
	int rc = write_report(&c) ? 3 : 0;
	fflush(stdout);
	fflush(stderr);
	/* _exit: no atexit handler or destructor of the candidate runs after the report */
	_exit(rc);
}
