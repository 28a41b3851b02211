/*
 * Profiling with Nsight Compute; see ncu.h. Containment follows eval.c: ncu (and the runner it
 * starts) run in a process group of their own, killed whole at the deadline, in a scratch
 * directory, with an environment holding no secrets and capped output. Results are cached by
 * the content of the .so, the canonical task, the device and the metric list.
 */
#include "common/verdict.h"
#include "eval/ncu.h"
#include "eval/reference.h"
#include "common/paths.h"
#include "common/proc.h"
#include "util/fsutil.h"
#include "util/sha256.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STALL_PREFIX "smsp__average_warps_issue_stalled_"
#define STALL_SUFFIX "_per_issue_active.ratio"
#define CACHE_VERSION "ncu-cache-v1"

const char *const ncu_metrics[] = {
	"gpu__time_duration.sum",
	"sm__throughput.avg.pct_of_peak_sustained_elapsed",
	"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
	"dram__throughput.avg.pct_of_peak_sustained_elapsed",
	"lts__throughput.avg.pct_of_peak_sustained_elapsed",
	"l1tex__throughput.avg.pct_of_peak_sustained_active",
	"dram__bytes_read.sum",
	"dram__bytes_write.sum",
	"sm__warps_active.avg.pct_of_peak_sustained_active",
	"sm__maximum_warps_per_active_cycle_pct",
	"launch__occupancy_limit_registers",
	"launch__occupancy_limit_shared_mem",
	"launch__occupancy_limit_warps",
	"launch__occupancy_limit_blocks",
	"launch__registers_per_thread",
	"launch__shared_mem_per_block_static",
	"launch__shared_mem_per_block_dynamic",
	"launch__block_size",
	"launch__grid_size",
	"launch__waves_per_multiprocessor",
	"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
	"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
	"sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active",
	STALL_PREFIX "long_scoreboard" STALL_SUFFIX,
	STALL_PREFIX "barrier" STALL_SUFFIX,
	STALL_PREFIX "mio_throttle" STALL_SUFFIX,
	STALL_PREFIX "lg_throttle" STALL_SUFFIX,
	STALL_PREFIX "math_pipe_throttle" STALL_SUFFIX,
	STALL_PREFIX "short_scoreboard" STALL_SUFFIX,
	STALL_PREFIX "wait" STALL_SUFFIX,
	STALL_PREFIX "not_selected" STALL_SUFFIX,
	STALL_PREFIX "selected" STALL_SUFFIX,
	STALL_PREFIX "dispatch_stall" STALL_SUFFIX,
	STALL_PREFIX "membar" STALL_SUFFIX,
	STALL_PREFIX "imc_miss" STALL_SUFFIX,
	STALL_PREFIX "no_instruction" STALL_SUFFIX,
	STALL_PREFIX "drain" STALL_SUFFIX,
	STALL_PREFIX "sleeping" STALL_SUFFIX,
	STALL_PREFIX "branch_resolving" STALL_SUFFIX,
	STALL_PREFIX "tex_throttle" STALL_SUFFIX,
	"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
	"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
	"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
	"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
	NULL,
};

static const char *const sections[] = {
	"SpeedOfLight", "MemoryWorkloadAnalysis", "Occupancy", "LaunchStats", "WarpStateStats",
	"ComputeWorkloadAnalysis", "SchedulerStats", NULL,
};

const char *ncu_status_name(int status)
{
	switch (status) {
	case NCU_OK: return "ok";
	case NCU_E_MISSING: return "missing";
	case NCU_E_PERMISSION: return "permission";
	case NCU_E_UNSUPPORTED: return "unsupported";
	case NCU_E_NO_KERNELS: return "no_kernels";
	case NCU_E_KERNEL: return "kernel_failed";
	case NCU_E_TIMEOUT: return "timeout";
	case NCU_E_OUTPUT: return "bad_output";
	case NCU_E_METRIC: return "unknown_metric";
	case NCU_E_SETUP: return "setup";
	default: return "failed";
	}
}

int ncu_unavailable(int status)
{
	return status == NCU_E_MISSING || status == NCU_E_PERMISSION || status == NCU_E_UNSUPPORTED;
}

const char *ncu_bound_name(enum ncu_bound b)
{
	switch (b) {
	case NCU_BOUND_MEMORY: return "memory-bound";
	case NCU_BOUND_COMPUTE: return "compute-bound";
	case NCU_BOUND_LATENCY: return "latency-bound";
	default: return "unknown";
	}
}

/* ---- failures ------------------------------------------------------------------------------ */

/* The line of `out` holding `at`, without its "==ERROR== " prefix, capped. */
static char *line_at(const char *out, const char *at)
{
	const char *b = at, *e = at;
	while (b > out && b[-1] != '\n')
		b--;
	while (*e && *e != '\n')
		e++;
	if (!strncmp(b, "==ERROR== ", 10))
		b += 10;
	size_t n = (size_t)(e - b);
	return xstrndup(b, n > 300 ? 300 : n);
}

int ncu_classify_output(const char *out, char **why, struct strbuf *names)
{
	const char *p;
	*why = NULL;
	if ((p = strstr(out, "ERR_NVGPUCTRPERM"))) {
		*why = xstrdup("ncu may not read the GPU performance counters (ERR_NVGPUCTRPERM); "
			       "run as root, or load the driver with NVreg_RestrictProfilingToAdminUsers=0");
		return NCU_E_PERMISSION;
	}
	if ((p = strstr(out, "Failed to find metric"))) {
		/* "==ERROR== Failed to find metric regex:^NAME\.(sum|...)$" or "... metric NAME" */
		for (const char *s = out; (s = strstr(s, "Failed to find metric")); s++) {
			const char *n = s + strlen("Failed to find metric");
			while (*n == ' ')
				n++;
			if (!strncmp(n, "regex:", 6))
				n += 6;
			if (*n == '^')
				n++;
			size_t len = 0;
			while (n[len] && n[len] != '\n' && n[len] != ' ' && n[len] != '$' &&
			       n[len] != '\\' && n[len] != '(' && n[len] != '\r')
				len++;
			/* "name.(sum|avg)" leaves a trailing dot: drop it */
			while (len && n[len - 1] == '.')
				len--;
			if (names && len)
				strbuf_addf(names, "%.*s\n", (int)len, n);
		}
		char *l = line_at(out, p);
		*why = xasprintf("ncu does not know a metric: %s", l);
		free(l);
		return NCU_E_METRIC;
	}
	static const char *const unsupported[] = {
		"LibraryNotLoaded", "Device not supported", "device is not supported",
		"not supported on this device", "Failed to load", "No supported devices",
		"unrecognised option", "unrecognized option",
	};
	for (size_t i = 0; i < ARRAY_SIZE(unsupported); i++)
		if ((p = strstr(out, unsupported[i]))) {
			char *l = line_at(out, p);
			*why = xasprintf("this ncu cannot profile here: %s", l);
			free(l);
			return NCU_E_UNSUPPORTED;
		}
	if ((p = strstr(out, "No kernels were profiled"))) {
		*why = xstrdup("ncu profiled no kernel: the candidate launched none between "
			       "cudaProfilerStart and cudaProfilerStop (or it failed before)");
		return NCU_E_NO_KERNELS;
	}
	if ((p = strstr(out, "==ERROR=="))) {
		char *l = line_at(out, p);
		*why = xasprintf("ncu failed: %s", l);
		free(l);
		return NCU_E_FAILED;
	}
	return NCU_OK;
}

/* ---- summary ------------------------------------------------------------------------------- */

static double val(const struct ncu_kernel *k, const char *name)
{
	return ncu_kernel_value(k, name, -1);
}

static double ways(double wavefronts, double conflicts)
{
	if (wavefronts <= 0 || conflicts < 0)
		return -1;
	if (conflicts >= wavefronts)
		conflicts = wavefronts - 1;
	return wavefronts / (wavefronts - conflicts);
}

/* Time-weighted mean of one metric over the kernels that have it; -1 when none does. */
static double weighted(const struct ncu_report *rep, const char *name)
{
	double sw = 0, sv = 0;
	for (size_t i = 0; i < rep->nr; i++) {
		double v = val(&rep->kernels[i], name);
		if (v < 0)
			continue;
		double w = val(&rep->kernels[i], "gpu__time_duration.sum");
		if (w <= 0)
			w = 1;
		sw += w;
		sv += v * w;
	}
	return sw > 0 ? sv / sw : -1;
}

static double max3(double a, double b, double c)
{
	double m = a > b ? a : b;
	return m > c ? m : c;
}

struct stall {
	const char *name;
	double v;
};

static int stall_cmp(const void *a, const void *b)
{
	double x = ((const struct stall *)a)->v, y = ((const struct stall *)b)->v;
	return x < y ? 1 : x > y ? -1 : 0;
}

static void fmt_bytes(struct strbuf *out, double b)
{
	if (b >= 1e9)
		strbuf_addf(out, "%.2f GB", b / 1e9);
	else if (b >= 1e6)
		strbuf_addf(out, "%.2f MB", b / 1e6);
	else if (b >= 1e3)
		strbuf_addf(out, "%.1f KB", b / 1e3);
	else
		strbuf_addf(out, "%.0f B", b);
}

static void fmt_time(struct strbuf *out, double ns)
{
	if (ns >= 1e6)
		strbuf_addf(out, "%.3f ms", ns / 1e6);
	else
		strbuf_addf(out, "%.2f us", ns / 1e3);
}

/* The numbers of the summary: totals, time-weighted throughputs, the bound, and the launch
 * and pipe metrics of the longest kernel (s->top). */
static void summary_numbers(const struct ncu_report *rep, struct ncu_summary *s)
{
	double best = -1;
	for (size_t i = 0; i < rep->nr; i++) {
		double t = val(&rep->kernels[i], "gpu__time_duration.sum");
		if (t > 0)
			s->total_ns += t;
		if (t > best) {
			best = t;
			s->top = i;
		}
	}
	const struct ncu_kernel *k = &rep->kernels[s->top];
	s->sm_pct = weighted(rep, "sm__throughput.avg.pct_of_peak_sustained_elapsed");
	s->dram_pct = weighted(rep, "dram__throughput.avg.pct_of_peak_sustained_elapsed");
	s->l2_pct = weighted(rep, "lts__throughput.avg.pct_of_peak_sustained_elapsed");
	s->l1_pct = weighted(rep, "l1tex__throughput.avg.pct_of_peak_sustained_active");
	s->mem_pct = weighted(rep, "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed");
	if (s->mem_pct < 0)
		s->mem_pct = max3(s->dram_pct, s->l2_pct, s->l1_pct);
	s->dram_bytes = 0;
	for (size_t i = 0; i < rep->nr; i++) {
		double r = val(&rep->kernels[i], "dram__bytes_read.sum");
		double w = val(&rep->kernels[i], "dram__bytes_write.sum");
		s->dram_bytes += (r > 0 ? r : 0) + (w > 0 ? w : 0);
	}
	if (s->sm_pct < 0 && s->mem_pct < 0)
		s->bound = NCU_BOUND_UNKNOWN;
	else if (s->sm_pct < NCU_LATENCY_PCT && s->mem_pct < NCU_LATENCY_PCT)
		s->bound = NCU_BOUND_LATENCY;
	else
		s->bound = s->mem_pct >= s->sm_pct ? NCU_BOUND_MEMORY : NCU_BOUND_COMPUTE;

	s->occ_pct = val(k, "sm__warps_active.avg.pct_of_peak_sustained_active");
	s->occ_theoretical_pct = val(k, "sm__maximum_warps_per_active_cycle_pct");
	s->regs = val(k, "launch__registers_per_thread");
	double st = val(k, "launch__shared_mem_per_block_static");
	double dy = val(k, "launch__shared_mem_per_block_dynamic");
	s->smem_bytes = st < 0 && dy < 0 ? -1 : (st > 0 ? st : 0) + (dy > 0 ? dy : 0);
	s->block = val(k, "launch__block_size");
	s->grid = val(k, "launch__grid_size");
	s->waves = val(k, "launch__waves_per_multiprocessor");
	static const struct {
		const char *metric, *what;
	} limits[] = {
		{ "launch__occupancy_limit_registers", "registers" },
		{ "launch__occupancy_limit_shared_mem", "shared memory" },
		{ "launch__occupancy_limit_warps", "warps" },
		{ "launch__occupancy_limit_blocks", "blocks" },
	};
	double lim = -1;
	for (size_t i = 0; i < ARRAY_SIZE(limits); i++) {
		double v = val(k, limits[i].metric);
		if (v >= 0 && (lim < 0 || v < lim)) {
			lim = v;
			s->occ_limiter = limits[i].what;
		}
	}
	double hmma = val(k, "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active");
	/* on Hopper the hmma pipe metric counts HGMMA/QGMMA too (ncu --query-metrics, gh100);
	 * sm__pipe_tensor_cycles_active covers every tensor op (imma, dmma...) */
	double all = val(k, "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active");
	s->tensor_pct = hmma > all ? hmma : all;
	s->fma_pct = val(k, "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active");
	s->ld_ways = ways(val(k, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
			  val(k, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"));
	s->st_ways = ways(val(k, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"),
			  val(k, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"));
}

/* "bound      memory-bound: DRAM at 91% of peak, ..." */
static void print_bound(const struct ncu_report *rep, const struct ncu_summary *s,
			struct strbuf *out)
{
	strbuf_addf(out, "bound      %s: ", ncu_bound_name(s->bound));
	if (s->bound == NCU_BOUND_MEMORY || s->bound == NCU_BOUND_LATENCY) {
		if (s->dram_pct >= 0)
			strbuf_addf(out, "DRAM at %.0f%% of peak, ", s->dram_pct);
		else if (s->mem_pct >= 0)
			strbuf_addf(out, "memory at %.0f%% of peak, ", s->mem_pct);
		if (s->sm_pct >= 0)
			strbuf_addf(out, "compute %.0f%%", s->sm_pct);
	} else if (s->bound == NCU_BOUND_COMPUTE) {
		strbuf_addf(out, "compute (SM) at %.0f%% of peak, memory %.0f%%", s->sm_pct,
			    s->mem_pct);
	} else {
		strbuf_addstr(out, "no throughput metrics");
	}
	if (s->l2_pct >= 0 && s->l1_pct >= 0)
		strbuf_addf(out, "; L2 %.0f%%, L1 %.0f%%", s->l2_pct, s->l1_pct);
	strbuf_addch(out, '\n');
}

/* "time       1.2 ms in 1 kernel launch ...; DRAM traffic ..." */
static void print_time(const struct ncu_report *rep, const struct ncu_summary *s,
		       struct strbuf *out)
{
	if (s->total_ns > 0) {
		strbuf_addstr(out, "time       ");
		fmt_time(out, s->total_ns);
		strbuf_addf(out, " in %zu kernel launch%s (under ncu, clocks not locked)", rep->nr,
			    rep->nr == 1 ? "" : "es");
		if (s->dram_bytes > 0) {
			strbuf_addstr(out, "; DRAM traffic ");
			fmt_bytes(out, s->dram_bytes);
			strbuf_addf(out, " (%.0f GB/s)", s->dram_bytes / s->total_ns);
		}
		strbuf_addch(out, '\n');
	}
}

/* "occupancy  achieved 48% of theoretical 50% (limited by ...) ..." */
static void print_occupancy(const struct ncu_report *rep, const struct ncu_summary *s,
			    struct strbuf *out)
{
	if (s->occ_pct >= 0 || s->regs >= 0) {
		strbuf_addstr(out, "occupancy  ");
		if (s->occ_pct >= 0)
			strbuf_addf(out, "achieved %.0f%%", s->occ_pct);
		if (s->occ_theoretical_pct >= 0)
			strbuf_addf(out, " of theoretical %.0f%%", s->occ_theoretical_pct);
		if (s->occ_limiter && s->occ_theoretical_pct >= 0 && s->occ_theoretical_pct < 99.5) {
			strbuf_addf(out, " (limited by %s", s->occ_limiter);
			if (!strcmp(s->occ_limiter, "registers") && s->regs >= 0)
				strbuf_addf(out, ": %.0f/thread", s->regs);
			else if (!strcmp(s->occ_limiter, "shared memory") && s->smem_bytes >= 0) {
				strbuf_addstr(out, ": ");
				fmt_bytes(out, s->smem_bytes);
				strbuf_addstr(out, "/block");
			} else if (s->block > 0)
				strbuf_addf(out, ": %.0f threads/block", s->block);
			strbuf_addch(out, ')');
		}
		strbuf_addstr(out, ";");
		if (s->regs >= 0)
			strbuf_addf(out, " %.0f registers/thread,", s->regs);
		if (s->smem_bytes >= 0) {
			strbuf_addstr(out, " shared ");
			fmt_bytes(out, s->smem_bytes);
			strbuf_addstr(out, "/block,");
		}
		if (s->block > 0)
			strbuf_addf(out, " block %.0f, grid %.0f", s->block, s->grid);
		if (s->waves >= 0)
			strbuf_addf(out, " (%.2f waves)", s->waves);
		strbuf_addch(out, '\n');
	}
}

/* "stalls     top: ...": the stalls of the longest kernel, as shares of all stall reasons */
static void print_stalls(const struct ncu_kernel *k, struct strbuf *out)
{
	struct stall stalls[32];
	size_t ns = 0;
	double total = 0;
	size_t plen = strlen(STALL_PREFIX), slen = strlen(STALL_SUFFIX);
	for (size_t i = 0; i < k->nr && ns < ARRAY_SIZE(stalls); i++) {
		const struct ncu_metric *m = &k->metrics[i];
		size_t n = strlen(m->name);
		if (!m->has_value || n <= plen + slen || strncmp(m->name, STALL_PREFIX, plen) ||
		    strcmp(m->name + n - slen, STALL_SUFFIX) || m->value <= 0)
			continue;
		/* "selected" is the warp issuing, not a stall */
		if (!strcmp(m->name, STALL_PREFIX "selected" STALL_SUFFIX))
			continue;
		stalls[ns].name = m->name + plen;
		stalls[ns++].v = m->value;
		total += m->value;
	}
	if (ns && total > 0) {
		qsort(stalls, ns, sizeof(stalls[0]), stall_cmp);
		strbuf_addstr(out, "stalls     top:");
		for (size_t i = 0; i < ns && i < 3; i++) {
			size_t n = strlen(stalls[i].name) - slen;
			strbuf_addstr(out, i ? ", " : " ");
			for (size_t j = 0; j < n; j++)
				strbuf_addch(out, stalls[i].name[j] == '_' ? ' ' : stalls[i].name[j]);
			strbuf_addf(out, " %.0f%%", 100 * stalls[i].v / total);
		}
		strbuf_addstr(out, " (of stalled warp-cycles per issued instruction)\n");
	}
}

/* "shared     2.0-way bank conflicts on loads" */
static void print_shared(const struct ncu_report *rep, const struct ncu_summary *s,
			 struct strbuf *out)
{
	if (s->ld_ways > 0 || s->st_ways > 0) {
		int any = 0;
		strbuf_addstr(out, "shared     ");
		if (s->ld_ways >= 1.05) {
			strbuf_addf(out, "%.1f-way bank conflicts on loads", s->ld_ways);
			any = 1;
		}
		if (s->st_ways >= 1.05) {
			strbuf_addf(out, "%s%.1f-way bank conflicts on stores", any ? ", " : "", s->st_ways);
			any = 1;
		}
		if (!any)
			strbuf_addstr(out, "no bank conflicts");
		strbuf_addch(out, '\n');
	}
}

/* "tensor     tensor pipes active 80% of cycles" */
static void print_tensor(const struct ncu_report *rep, const struct ncu_summary *s,
			 struct strbuf *out)
{
	if (s->tensor_pct >= 0) {
		if (s->tensor_pct < 1) {
			strbuf_addstr(out, "tensor     tensor pipes idle");
			if (s->fma_pct >= 1)
				strbuf_addf(out, " (FMA pipe %.0f%%: an FFMA-only kernel)", s->fma_pct);
		} else {
			strbuf_addf(out, "tensor     tensor pipes active %.0f%% of cycles", s->tensor_pct);
		}
		strbuf_addch(out, '\n');
	}
}

/* "kernels    3 launches; longest: NAME 1.1 ms (90%)" */
static void print_kernels(const struct ncu_report *rep, const struct ncu_summary *s,
			  struct strbuf *out)
{
	const struct ncu_kernel *k = &rep->kernels[s->top];
	double best = val(k, "gpu__time_duration.sum");
	if (rep->nr > 1 && s->total_ns > 0) {
		strbuf_addf(out, "kernels    %zu launches; longest: ", rep->nr);
		const char *nm = k->name;
		strbuf_addf(out, "%.80s%s ", nm, strlen(nm) > 80 ? "..." : "");
		fmt_time(out, best);
		strbuf_addf(out, " (%.0f%%)\n", 100 * best / s->total_ns);
	}
}

void ncu_summarize(const struct ncu_report *rep, struct ncu_summary *s, struct strbuf *out)
{
	memset(s, 0, sizeof(*s));
	s->kernels = rep->nr;
	if (!rep->nr) {
		if (out)
			strbuf_addstr(out, "no kernel was profiled\n");
		return;
	}
	summary_numbers(rep, s);
	if (!out)
		return;
	print_bound(rep, s, out);
	print_time(rep, s, out);
	print_occupancy(rep, s, out);
	print_stalls(&rep->kernels[s->top], out);
	print_shared(rep, s, out);
	print_tensor(rep, s, out);
	print_kernels(rep, s, out);
}

json_t *ncu_report_json(const struct ncu_report *rep)
{
	json_t *o = json_object();
	json_object_set_new(o, "format", json_string(rep->format == NCU_FMT_DETAILS ? "details"
						     : rep->format == NCU_FMT_RAW ? "raw" : "none"));
	json_object_set_new(o, "truncated", json_boolean(rep->truncated));
	json_t *ks = json_array();
	for (size_t i = 0; i < rep->nr; i++) {
		const struct ncu_kernel *k = &rep->kernels[i];
		json_t *kj = json_object(), *ms = json_object();
		json_object_set_new(kj, "id", json_integer(k->id));
		json_object_set_new(kj, "name", json_string(k->name));
		json_object_set_new(kj, "block", json_string(k->block));
		json_object_set_new(kj, "grid", json_string(k->grid));
		for (size_t j = 0; j < k->nr; j++) {
			const struct ncu_metric *m = &k->metrics[j];
			json_object_set_new(ms, m->name,
					    json_pack("{s:o,s:s,s:s}", "value",
						      m->has_value ? json_real(m->value) : json_null(),
						      "unit", m->unit, "text", m->text));
		}
		json_object_set_new(kj, "metrics", ms);
		json_array_append_new(ks, kj);
	}
	json_object_set_new(o, "kernels", ks);
	return o;
}

/* ---- running ncu ----------------------------------------------------------------------------- */

void ncu_result_release(struct ncu_result *r)
{
	ncu_report_release(&r->report);
	free(r->summary);
	free(r->log);
	free(r->runner_verdict);
	if (r->raw)
		json_decref(r->raw);
	struct ncu_result z = NCU_RESULT_INIT;
	*r = z;
}

static char *default_cache_dir(void)
{
	const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
	if (x && *x)
		return xasprintf("%s/cutegen/ncu", x);
	return xasprintf("%s/.cache/cutegen/ncu", h && *h ? h : "/tmp");
}

static int hash_file(const char *path, char hex[65])
{
	struct strbuf sb = STRBUF_INIT;
	int rc = strbuf_read_file(&sb, path, 1u << 30);
	if (!rc)
		sha256_hex(sb.buf, sb.len, hex);
	strbuf_release(&sb);
	return rc;
}

/* Builds ncu's argv into av (static strings and the caller's); returns the count. */
static int build_argv(const char **av, const char *ncu, const char *metrics, int details,
		      const char *log_path, const char *runner, int module, const char *task_path,
		      const char *so, const char *dev)
{
	int n = 0;
	av[n++] = ncu;
	av[n++] = "--clock-control"; av[n++] = "none";
	av[n++] = "--profile-from-start"; av[n++] = "off";
	av[n++] = "--csv";
	av[n++] = "--print-units"; av[n++] = "base";
	av[n++] = "--log-file"; av[n++] = log_path;
	if (details) {
		av[n++] = "--page"; av[n++] = "details";
		for (int i = 0; sections[i]; i++) {
			av[n++] = "--section";
			av[n++] = sections[i];
		}
	} else {
		av[n++] = "--page"; av[n++] = "raw";
		av[n++] = "--metrics"; av[n++] = metrics;
	}
	av[n++] = runner;
	av[n++] = module ? "--module" : "--task"; av[n++] = task_path;
	av[n++] = "--kernel"; av[n++] = so;
	av[n++] = "--device"; av[n++] = dev;
	av[n++] = "--profile";
	av[n++] = "--no-confine"; /* ncu's injected library talks to ncu over a socket */
	av[n] = NULL;
	return n;
}

/* 1 when `name` is one of the lines of `list`. */
static int line_in(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; (p = strstr(p, name)); p++)
		if ((p == list || p[-1] == '\n') && (p[n] == '\n' || !p[n]))
			return 1;
	return 0;
}

static void metrics_arg(struct strbuf *sb, const struct strbuf *dropped)
{
	strbuf_reset(sb);
	for (int i = 0; ncu_metrics[i]; i++) {
		/* ncu names a rejected metric by its base ("sm__x" for "sm__x.avg.pct_...") */
		char *base = xstrdup(ncu_metrics[i]), *dot = strchr(base, '.');
		if (dot)
			*dot = 0;
		int drop = line_in(dropped->buf, ncu_metrics[i]) || line_in(dropped->buf, base);
		free(base);
		if (drop)
			continue;
		if (sb->len)
			strbuf_addch(sb, ',');
		strbuf_addstr(sb, ncu_metrics[i]);
	}
}

/* The text to parse: the --log-file when it holds the table, else what ncu printed. */
static const char *pick_output(const struct strbuf *logf, const struct strbuf *printed)
{
	if (strstr(logf->buf, "\"ID\""))
		return logf->buf;
	return printed->buf;
}

static void finish(struct ncu_result *r, const char *key, const char *const *argv)
{
	struct strbuf sb = STRBUF_INIT;
	ncu_summarize(&r->report, &r->sum, &sb);
	r->summary = strbuf_detach(&sb, NULL);
	r->raw = ncu_report_json(&r->report);
	json_object_set_new(r->raw, "cache_key", json_string(key));
	json_object_set_new(r->raw, "bound", json_string(ncu_bound_name(r->sum.bound)));
	json_object_set_new(r->raw, "total_ns", json_real(r->sum.total_ns));
	if (argv) {
		json_t *a = json_array();
		for (int i = 0; argv[i]; i++)
			json_array_append_new(a, json_string(argv[i]));
		json_object_set_new(r->raw, "argv", a);
	}
}

/* ncu (o->ncu, $CUTEGEN_NCU, PATH) and the runner, or NCU_E_MISSING / NCU_E_SETUP. */
static int find_tools(const struct ncu_opts *o, char **ncu, char **runner, char **err)
{
	const char *env_ncu = getenv("CUTEGEN_NCU");
	*ncu = o->ncu ? xstrdup(o->ncu)
	     : env_ncu && *env_ncu ? xstrdup(env_ncu) : paths_find_program("ncu");
	if (!*ncu || access(*ncu, X_OK)) {
		*err = xasprintf("ncu (Nsight Compute) not found%s%s%s; install Nsight Compute or put "
				 "ncu on PATH", *ncu ? " at '" : " in PATH or /usr/local/cuda/bin",
				 *ncu ? *ncu : "", *ncu ? "'" : "");
		return NCU_E_MISSING;
	}
	*runner = o->runner ? xstrdup(o->runner) : paths_runner();
	if (!*runner || access(*runner, X_OK)) {
		*err = xasprintf("cannot run the runner '%s': build it with 'make'",
				 *runner ? *runner : "cutegen-runner");
		return NCU_E_SETUP;
	}
	return NCU_OK;
}

/* The cache key: what was profiled (the .so's hash, the canonical task), on what (device,
 * CUDA_VISIBLE_DEVICES), with which question (the metrics). */
static void profile_key(const char *so_hex, const struct strbuf *task_json, const char *dev,
			char key[65])
{
	struct sha256 h;
	sha256_init(&h);
	sha256_update(&h, CACHE_VERSION, strlen(CACHE_VERSION) + 1);
	sha256_update(&h, so_hex, 64);
	sha256_update(&h, task_json->buf, task_json->len + 1);
	sha256_update(&h, dev, strlen(dev) + 1);
	const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
	sha256_update(&h, cvd ? cvd : "", cvd ? strlen(cvd) + 1 : 1);
	for (int i = 0; ncu_metrics[i]; i++)
		sha256_update(&h, ncu_metrics[i], strlen(ncu_metrics[i]) + 1);
	sha256_final_hex(&h, key);
}

/* A cached profile of the key into r: 1 when there is one. */
static int from_cache(const char *cache_file, const char *key, struct ncu_result *r)
{
	struct strbuf csv = STRBUF_INIT;
	int hit = 0;
	if (strbuf_read_file(&csv, cache_file, NCU_LOG_CAP) == 0) {
		char *perr = NULL;
		if (ncu_csv_parse(csv.buf, csv.len, &r->report, &perr) == 0 && r->report.nr) {
			r->cache_hit = 1;
			finish(r, key, NULL);
			hit = 1;
		} else {
			ncu_report_release(&r->report);
		}
		free(perr);
	}
	strbuf_release(&csv);
	return hit;
}

/* The runner's report of an attempt (its verdict into r->runner_verdict); NULL if none. */
/* Without --report-fd the runner prints its report as one line "report {...}": for diagnosis
 * only, nothing here is a verdict. */
static json_t *read_runner_report(const struct strbuf *printed, struct ncu_result *r)
{
	free(r->runner_verdict);
	r->runner_verdict = NULL;
	json_t *rep = NULL;
	const char *line = printed->buf ? strstr(printed->buf, "report {") : NULL;
	while (line && line != printed->buf && line[-1] != '\n')
		line = strstr(line + 1, "report {");
	if (line) {
		const char *e = strchr(line, '\n');
		rep = json_loadb(line + 7, e ? (size_t)(e - line - 7) : strlen(line + 7), 0, NULL);
	}
	if (rep) {
		const char *v = json_string_value(json_object_get(rep, "verdict"));
		if (v)
			r->runner_verdict = xstrdup(v);
	}
	return rep;
}

/*
 * Why an attempt gave no profile, from what ncu said (c: ncu_classify_output's status, *why
 * its words) and the runner's report: the candidate failing is NCU_E_KERNEL; nothing wrong
 * said but no rows is NCU_E_OUTPUT (pr: the CSV parse failed) or NCU_E_NO_KERNELS.
 */
static int attempt_failure(int c, char **why, const struct ncu_result *r, json_t *rep,
			   const char *perr, int pr, int status)
{
	if (c != NCU_OK && c != NCU_E_NO_KERNELS)
		return c;
	const char *v = r->runner_verdict;
	if (v && verdict_parse(v) != VERDICT_PASS) {
		const char *m = json_string_value(json_object_get(rep, "message"));
		free(*why);
		*why = xasprintf("the candidate failed while being profiled (%s): %s", v, m ? m : "");
		return NCU_E_KERNEL;
	}
	if (c == NCU_OK) {
		*why = xasprintf("%s (ncu exit status %d)", perr ? perr : "ncu printed no kernel rows",
				 status);
		return pr ? NCU_E_OUTPUT : NCU_E_NO_KERNELS;
	}
	return c;
}

/* One run of ncu on the runner, its output (both streams) captured into printed. */
static int run_ncu(const struct ncu_opts *o, const char **argv, const char *dir,
		   const char *cvd_env, struct strbuf *printed, struct child_process *cp)
{
	static const struct proc_limits lim = { .nofile = 4096, .fsize_bytes = 1ull << 32 };
	const char *env[] = { cvd_env, NULL };
	strbuf_reset(printed);
	printed->cap = NCU_LOG_CAP;
	cp->clear_env = 1;
	cp->env = cvd_env ? env : NULL;
	cp->dir = dir;
	cp->limits = &lim;
	return capture_command(cp, argv, printed, NCU_LOG_CAP, 1,
			       o->deadline_s > 0 ? o->deadline_s : NCU_DEFAULT_DEADLINE_S);
}

int ncu_profile(const struct ncu_opts *o, const struct task *t, const char *so_path,
		struct ncu_result *r, char **err)
{
	int st = NCU_E_SETUP;
	char *ncu = NULL, *runner = NULL, *so = NULL, *dir = NULL, *cache = NULL, *cache_file = NULL;
	char *task_path = NULL, *log_path = NULL;
	struct strbuf sb = STRBUF_INIT, metrics = STRBUF_INIT, dropped = STRBUF_INIT;
	struct strbuf printed = STRBUF_INIT, logf = STRBUF_INIT;
	char so_hex[65], key[65], dev[16];
	const char *argv[64];
	const struct module_desc *md = t ? NULL : o->module;
	struct reference_session *rs = NULL;
	json_t *prep = NULL;
	*err = NULL;
	if (!t && !md)
		BUG("ncu_profile without a task or a module");

	st = find_tools(o, &ncu, &runner, err);
	if (st)
		goto out;
	st = NCU_E_SETUP;
	so = realpath(so_path, NULL);
	if (!so || hash_file(so, so_hex)) {
		*err = xasprintf("kernel library '%s' cannot be read", so_path);
		goto out;
	}
	snprintf(dev, sizeof(dev), "%d", o->device);

	if (t) {
		task_to_json(t, &sb);
	} else { /* a module: its description and its file's content */
		char mod_hex[65];
		module_desc_to_json(md, &sb);
		if (hash_file(md->file, mod_hex) == 0)
			strbuf_add(&sb, mod_hex, 64);
	}
	profile_key(so_hex, &sb, dev, key);
	cache = o->cache_dir ? xstrdup(o->cache_dir) : default_cache_dir();
	cache_file = xasprintf("%s/%s.csv", cache, key);
	if (!o->no_cache && from_cache(cache_file, key, r)) {
		st = NCU_OK;
		goto out;
	}

	const char *tmp = o->scratch_root ? o->scratch_root : getenv("TMPDIR");
	dir = xasprintf("%s/cutegen-ncu-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		*err = xasprintf("cannot make a scratch directory under '%s'", tmp && *tmp ? tmp : "/tmp");
		free(dir);
		dir = NULL;
		goto out;
	}
	task_path = xasprintf("%s/%s", dir, t ? "task.json" : "run.json");
	log_path = xasprintf("%s/ncu.csv", dir);
	if (t && write_file_atomic(task_path, sb.buf, sb.len)) {
		*err = xasprintf("cannot write '%s'", task_path);
		goto out;
	}
	if (md) {
		/* the reference process holds the cases while ncu runs the runner on them */
		struct reference_prepare_opts po = REFERENCE_PREPARE_OPTS_INIT;
		po.device = o->device;
		po.quick = 1;
		po.precision = reference_precision(md);
		reference_keep_drop(o->drop_first);
		int prc = reference_prepare(md, &po, &rs, &prep, err);
		if (!prc && reference_write_run(md, prep, 0, 0, task_path, err))
			prc = CG_EXTERNAL;
		if (prc) {
			st = prc; /* the reference's code: exit 3 for the module's fault, 4, 5 */
			goto out;
		}
	}

	const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
	char *cvd_env = cvd ? xasprintf("CUDA_VISIBLE_DEVICES=%s", cvd) : NULL;
	int details = 0;
	int turn = gpu_turn_take(); /* see eval's: no other process's timing shares the GPU */
	for (int attempt = 0; attempt < 5; attempt++) {
		metrics_arg(&metrics, &dropped);
		build_argv(argv, ncu, metrics.buf, details, log_path, runner, md != NULL, task_path,
			   so, dev);
		unlink(log_path);
		strbuf_reset(&logf);
		struct child_process cp = CHILD_PROCESS_INIT;
		if (run_ncu(o, argv, dir, cvd_env, &printed, &cp)) {
			*err = xasprintf("cannot run '%s': %s", ncu, cp.errmsg);
			st = NCU_E_MISSING;
			break;
		}
		r->runner_status = cp.status;
		if (cp.timed_out) {
			*err = xasprintf("ncu did not finish within %.0f s", cp.deadline_s);
			st = NCU_E_TIMEOUT;
			break;
		}
		int lr = strbuf_read_file(&logf, log_path, NCU_LOG_CAP);
		if (lr == CG_INPUT_TOOBIG)
			strbuf_reset(&logf);
		/* everything it said, for the classification and for the caller */
		struct strbuf all = STRBUF_INIT;
		strbuf_add(&all, logf.buf, logf.len);
		strbuf_add(&all, printed.buf, printed.len);
		free(r->log);
		r->log = strbuf_detach(&all, NULL);

		json_t *rep = read_runner_report(&printed, r);

		const char *text = pick_output(&logf, &printed);
		char *perr = NULL;
		ncu_report_release(&r->report);
		int pr = ncu_csv_parse(text, strlen(text), &r->report, &perr);
		if (pr == 0 && r->report.nr) {
			free(perr);
			if (rep)
				json_decref(rep);
			if (!o->no_cache && !mkdir_p(cache))
				write_file_atomic(cache_file, text, strlen(text));
			finish(r, key, argv);
			st = NCU_OK;
			break;
		}
		char *why = NULL;
		struct strbuf names = STRBUF_INIT;
		int c = ncu_classify_output(r->log, &why, &names);
		if (c == NCU_E_METRIC && !details) {
			/* drop what it does not know and ask again; when nothing can be named, or it
			 * keeps failing, ask for the sections instead */
			size_t before = dropped.len;
			strbuf_add(&dropped, names.buf, names.len);
			if (dropped.len == before || attempt >= 2)
				details = 1;
			free(why);
			free(perr);
			strbuf_release(&names);
			if (rep)
				json_decref(rep);
			continue;
		}
		strbuf_release(&names);
		/* the candidate may be the cause: the runner's verdict says so */
		c = attempt_failure(c, &why, r, rep, perr, pr, cp.status);
		free(perr);
		if (rep)
			json_decref(rep);
		*err = why;
		st = c;
		break;
	}
	gpu_turn_give(turn);
	free(cvd_env);
	if (st == NCU_E_SETUP && !*err)
		*err = xstrdup("ncu kept rejecting the metrics it was asked for");

out:
	reference_release(rs);
	json_decref(prep);
	if (dir && !o->keep_scratch)
		remove_tree(dir);
	free(ncu);
	free(runner);
	free(so);
	free(dir);
	free(cache);
	free(cache_file);
	free(task_path);
	free(log_path);
	strbuf_release(&sb);
	strbuf_release(&metrics);
	strbuf_release(&dropped);
	strbuf_release(&printed);
	strbuf_release(&logf);
	return st;
}

int ncu_profile_summary(const struct task *t, const char *so_path, struct strbuf *summary,
			char **err)
{
	struct ncu_opts o = NCU_OPTS_INIT;
	struct ncu_result r = NCU_RESULT_INIT;
	int st = ncu_profile(&o, t, so_path, &r, err);
	if (st == NCU_OK)
		strbuf_addstr(summary, r.summary ? r.summary : "");
	ncu_result_release(&r);
	return st;
}
