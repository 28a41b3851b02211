/*
 * Profiling feedback: runs Nsight Compute on one compiled candidate through the runner's
 * --profile mode, parses the CSV (ncu_csv.h), and summarizes what matters in a few lines a model
 * and a person can act on (bound, occupancy and its limiter, top stalls, bank conflicts, tensor
 * pipes), keeping the raw metrics as JSON for the run store.
 * Not for: correctness or timing (eval.h: ncu's timings are taken with the clocks unlocked and
 * with replay, they are not the numbers we report) or compiling (build.h).
 *
 * The command cutegen runs (scratch paths vary):
 *   ncu --clock-control none --profile-from-start off --csv --page raw --print-units base
 *       --log-file SCRATCH/ncu.csv --metrics M1,M2,...
 *       cutegen-runner --task SCRATCH/task.json --kernel K.so --out SCRATCH/report.json
 *                      --device N --profile
 * (for a module that is not lowered, --module SCRATCH/run.json: the reference process
 * prepares 3 cases, and is released once ncu is done)
 * The runner calls the candidate once to warm up, then once between cudaProfilerStart() and
 * cudaProfilerStop(): only the candidate's kernels are profiled. When ncu rejects metric names
 * ("Failed to find metric"), those are dropped and the run retried; when that fails too, the
 * sections form is used: --page details --section SpeedOfLight --section Occupancy ...
 *
 * Usage:
 *   1. struct ncu_opts o = NCU_OPTS_INIT; adjust;
 *   2. struct ncu_result r = NCU_RESULT_INIT; int st = ncu_profile(&o, task, so, &r, &err);
 *   3. st == NCU_OK: read r.summary, r.raw, r.report; else *err says why, and
 *      ncu_unavailable(st) tells whether profiling cannot work on this machine at all (say so
 *      once and stop asking) or just failed for this kernel;
 *   4. ncu_result_release(&r); free(err).
 */
#ifndef CUTEGEN_NCU_H
#define CUTEGEN_NCU_H

#include <jansson.h>

#include "eval/ncu_csv.h"
#include "util/err.h"
#include "common/task.h"
#include "common/task_module.h"
#include "util/strbuf.h"

/* What ncu_profile() returns: extended codes of util/err.h (cg_primary() gives the kind); for a
 * module whose reference process failed, reference_prepare's code ("failed"). */
enum ncu_status {
	NCU_OK = CG_OK,
	NCU_E_MISSING = CG_EXT(CG_ENV, 1),         /* no ncu program here */
	NCU_E_PERMISSION = CG_EXT(CG_ENV, 2),      /* ERR_NVGPUCTRPERM: the counters are restricted */
	NCU_E_UNSUPPORTED = CG_EXT(CG_ENV, 3),     /* the GPU or driver cannot be profiled by this ncu */
	NCU_E_SETUP = CG_EXT(CG_ENV, 4),           /* no runner, no scratch space, unreadable .so */
	NCU_E_KERNEL = CG_EXT(CG_REJECTED, 1),     /* the candidate failed under the runner (its
						    * verdict says how) */
	NCU_E_TIMEOUT = CG_EXT(CG_TIMEOUT, 1),     /* past the deadline */
	NCU_E_NO_KERNELS = CG_EXT(CG_EXTERNAL, 1), /* ncu profiled no kernel (it launched none?) */
	NCU_E_OUTPUT = CG_EXT(CG_EXTERNAL, 2),     /* ncu's output could not be read as CSV */
	NCU_E_METRIC = CG_EXT(CG_EXTERNAL, 3),     /* ncu does not know some metric names (retried
						    * internally) */
	NCU_E_FAILED = CG_EXT(CG_EXTERNAL, 4)      /* another ncu error */
};

/* "missing", "permission", ...: stable names for JSON and logs. */
const char *ncu_status_name(int status);
/* 1 when status means no kernel can be profiled on this machine (missing, permission,
 * unsupported): the loop says "profiling unavailable: ..." once and goes on without it. */
int ncu_unavailable(int status);

struct reference_keep;

struct ncu_opts {
	const char *ncu;         /* path of ncu; NULL = $CUTEGEN_NCU, else PATH, /usr/local/cuda/bin */
	const char *runner;      /* NULL = paths_runner() */
	int device;
	double deadline_s;       /* per ncu run; 0 = NCU_DEFAULT_DEADLINE_S */
	const char *cache_dir;   /* NULL = ${XDG_CACHE_HOME:-~/.cache}/cutegen/ncu */
	int no_cache;
	const char *scratch_root;/* NULL = $TMPDIR or /tmp */
	int keep_scratch;
	const struct module_desc *module; /* with task NULL: a module that is not lowered, its
				     cases prepared by the reference process (eval/reference.h)
				     for as long as ncu runs */
	struct reference_keep *drop_first; /* with module: a kept session (the agent's) that lets
				     its cases go just before this prepare, so that two
				     references' cases are never on the GPU at once; NULL: none */
};
#define NCU_OPTS_INIT { NULL, NULL, 0, 0, NULL, 0, NULL, 0, NULL, NULL }
#define NCU_DEFAULT_DEADLINE_S 300.0
#define NCU_LOG_CAP (8u << 20)

enum ncu_bound { NCU_BOUND_UNKNOWN = 0, NCU_BOUND_MEMORY, NCU_BOUND_COMPUTE, NCU_BOUND_LATENCY };
const char *ncu_bound_name(enum ncu_bound b); /* "memory-bound", ... */

/*
 * The numbers the summary is made of, over all profiled kernels: throughputs are averages
 * weighted by each kernel's duration; the launch and occupancy facts are those of the kernel
 * that took longest (`top`). Negative = not measured.
 */
struct ncu_summary {
	enum ncu_bound bound;
	size_t kernels;
	size_t top;              /* index of the longest kernel in the report */
	double total_ns;
	double sm_pct, mem_pct, dram_pct, l2_pct, l1_pct;
	double dram_bytes;
	double occ_pct, occ_theoretical_pct;
	const char *occ_limiter; /* "registers", "shared memory", "warps", "blocks", or NULL */
	double regs, smem_bytes, block, grid, waves;
	double tensor_pct, fma_pct;
	double ld_ways, st_ways; /* shared-memory wavefronts per ideal wavefront (1 = none) */
};

/*
 * Classification thresholds (percent of peak, docs/cli/profile.txt repeats them):
 * latency-bound when both compute (sm__throughput) and memory (gpu__compute_memory_throughput,
 * else the highest of DRAM/L2/L1) are below NCU_LATENCY_PCT: neither unit is busy, so the
 * kernel waits (too few warps or too little work in flight per warp); otherwise memory-bound
 * when memory >= compute, else compute-bound. This is Nsight Compute's own Speed Of Light rule.
 */
#define NCU_LATENCY_PCT 60.0

/* Fills s from rep and appends the summary lines to out (out may be NULL). */
void ncu_summarize(const struct ncu_report *rep, struct ncu_summary *s, struct strbuf *out);

/* The report as JSON: {"format", "kernels": [{"id","name","block","grid","metrics":
 * {NAME: {"value": N|null, "unit", "text"}}}]}. New reference. */
json_t *ncu_report_json(const struct ncu_report *rep);

/*
 * Reads ncu's output for the known failures. Returns NCU_OK when none is recognized, else the
 * status, with *why (heap string) a one-line explanation that says what to do. For
 * NCU_E_METRIC, names (when not NULL) receives the rejected metric names, one per line.
 */
int ncu_classify_output(const char *output, char **why, struct strbuf *names);

/* The metric list cutegen asks for, NULL-terminated. */
extern const char *const ncu_metrics[];

struct ncu_result {
	struct ncu_report report;
	struct ncu_summary sum;
	char *summary;        /* the summary lines (heap) */
	json_t *raw;          /* ncu_report_json() plus "argv" and "cache_key" (owned) */
	char *log;            /* what ncu and the runner printed (capped), NULL on a cache hit */
	int cache_hit;
	int runner_status;    /* exit status of ncu (it passes on the runner's), -1 if not run */
	char *runner_verdict; /* the runner's verdict in --profile mode, when it wrote a report */
};
#define NCU_RESULT_INIT { NCU_REPORT_INIT, { 0 }, NULL, NULL, NULL, 0, -1, NULL }

/* Profiles so_path on task t; see Usage above. Returns an enum ncu_status. */
int ncu_profile(const struct ncu_opts *o, const struct task *t, const char *so_path,
		struct ncu_result *r, char **err);
void ncu_result_release(struct ncu_result *r);

/*
 * The profiling hook of the agent loop: profiles the kernel in so_path on task t with the
 * default options and appends its summary for the model (achieved bandwidth and throughput,
 * stall reasons, occupancy...) to summary. Returns NCU_OK, or a status with *err (the caller
 * frees it); ncu_unavailable() of it says the loop should not try again.
 */
int ncu_profile_summary(const struct task *t, const char *so_path, struct strbuf *summary,
			char **err);

#endif
