/* Tests of the ncu CSV parser, the summarizer and the failure detection (no ncu, no GPU). */
#include "test.h"
#include "eval/ncu.h"
#include "eval/eval.h"
#include "eval/ncu_csv.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>

static const char *data_dir(void)
{
	const char *r = getenv("REPO");
	static char buf[512];
	snprintf(buf, sizeof(buf), "%s/tests/data/ncu", r && *r ? r : ".");
	return buf;
}

static int parse_file(const char *name, struct ncu_report *rep)
{
	struct strbuf sb = STRBUF_INIT;
	char *path = xasprintf("%s/%s", data_dir(), name), *err = NULL;
	int rc = strbuf_read_file(&sb, path, 0) ? -2 : ncu_csv_parse(sb.buf, sb.len, rep, &err);
	free(err);
	free(path);
	strbuf_release(&sb);
	return rc;
}

TEST(ncu_number_formats)
{
	double v;
	CHECK(ncu_parse_number("1,234.5", &v) == 0 && v == 1234.5);
	CHECK(ncu_parse_number("3,221,225,472", &v) == 0 && v == 3221225472.0);
	CHECK(ncu_parse_number(" -2.5e3 ", &v) == 0 && v == -2500);
	CHECK(ncu_parse_number("n/a", &v) == -1);
	CHECK(ncu_parse_number("", &v) == -1);
	CHECK(ncu_parse_number("12,34", &v) == -1);
	CHECK(ncu_parse_number("(256, 1, 1)", &v) == -1);
	v = 2;
	CHECK_STR(ncu_unit_to_base("usecond", &v), "nsecond");
	CHECK(v == 2000);
	v = 1.5;
	CHECK_STR(ncu_unit_to_base("Gbyte/second", &v), "byte/second");
	CHECK(v == 1.5e9);
}

TEST(ncu_csv_raw_two_kernels)
{
	struct ncu_report rep = NCU_REPORT_INIT;
	CHECK_INT(parse_file("raw-synthetic-two-kernels.csv", &rep), 0);
	CHECK_INT(rep.format, NCU_FMT_RAW);
	CHECK_INT(rep.nr, 2);
	CHECK_HAS(rep.kernels[0].name, "gemm_kernel<cute::tuple<cute::C<128>");
	CHECK_STR(rep.kernels[0].block, "(256, 1, 1)");
	CHECK(ncu_kernel_value(&rep.kernels[0], "gpu__time_duration.sum", -1) == 1482336);
	CHECK(ncu_kernel_value(&rep.kernels[0], "dram__bytes_read.sum", -1) == 3221225472.0);
	const struct ncu_metric *m = ncu_kernel_metric(&rep.kernels[1],
		"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active");
	CHECK(m && !m->has_value);
	CHECK_STR(m->text, "n/a");
	CHECK(ncu_kernel_metric(&rep.kernels[0], "Kernel Name") == NULL);
	ncu_report_release(&rep);
}

TEST(ncu_csv_details_page)
{
	struct ncu_report rep = NCU_REPORT_INIT;
	CHECK_INT(parse_file("details-synthetic-relu.csv", &rep), 0);
	CHECK_INT(rep.format, NCU_FMT_DETAILS);
	CHECK_INT(rep.nr, 1);
	const struct ncu_kernel *k = &rep.kernels[0];
	CHECK(ncu_kernel_value(k, "dram__throughput.avg.pct_of_peak_sustained_elapsed", -1) == 91.73);
	CHECK(ncu_kernel_value(k, "gpu__time_duration.sum", -1) == 52704);
	CHECK(ncu_kernel_value(k, "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", -1) == 91.73);
	/* "Memory Throughput" of the Memory Workload Analysis section is a rate, kept apart */
	CHECK(ncu_kernel_value(k, "Memory Workload Analysis: Memory Throughput", -1) == 4371203000000.0);
	CHECK(ncu_kernel_value(k, "launch__occupancy_limit_warps", -1) == 8);
	ncu_report_release(&rep);
}

/* Every captured file under tests/data/ncu parses into kernels and a classified summary: the
 * lead's real H200 captures dropped there are checked without code changes. */
TEST(ncu_csv_every_fixture)
{
	DIR *d = opendir(data_dir());
	CHECK(d);
	struct dirent *de;
	int n = 0;
	while ((de = readdir(d))) {
		if (!ends_with(de->d_name, ".csv"))
			continue;
		struct ncu_report rep = NCU_REPORT_INIT;
		int rc = parse_file(de->d_name, &rep);
		if (rc || !rep.nr) {
			test_fail(__FILE__, __LINE__, "%s: rc %d, %zu kernels", de->d_name, rc, rep.nr);
			ncu_report_release(&rep);
			break;
		}
		struct ncu_summary s;
		struct strbuf out = STRBUF_INIT;
		ncu_summarize(&rep, &s, &out);
		if (s.bound == NCU_BOUND_UNKNOWN || !strstr(out.buf, "bound      "))
			test_fail(__FILE__, __LINE__, "%s: no classification: %s", de->d_name, out.buf);
		strbuf_release(&out);
		ncu_report_release(&rep);
		n++;
	}
	closedir(d);
	CHECK(n >= 3);
}

TEST(ncu_csv_malformed_input)
{
	struct ncu_report rep = NCU_REPORT_INIT;
	char *err = NULL;
	const char *hdr = "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"nsecond\"\n";
	/* no table at all */
	CHECK_INT(ncu_csv_parse("==PROF== nothing\nhello\n", 22, &rep, &err), -1);
	CHECK_HAS(err, "no CSV table");
	free(err);
	ncu_report_release(&rep);
	/* an unterminated quote after a good row keeps the good row */
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "%s\"0\",\"k\",\"5\"\n\"1\",\"broken,\"6\n", hdr);
	CHECK_INT(ncu_csv_parse(sb.buf, sb.len, &rep, &err), 0);
	CHECK_INT(rep.nr, 1);
	ncu_report_release(&rep);
	/* an unterminated quote and nothing else */
	strbuf_reset(&sb);
	strbuf_addf(&sb, "%s\"0\",\"k\n", hdr);
	CHECK_INT(ncu_csv_parse(sb.buf, sb.len, &rep, &err), -1);
	CHECK_HAS(err, "unterminated");
	free(err);
	ncu_report_release(&rep);
	/* wrong column counts: skipped, flagged; none right is an error */
	strbuf_reset(&sb);
	strbuf_addf(&sb, "%s\"0\",\"k\"\n\"1\",\"k\",\"7\",\"extra\"\n", hdr);
	CHECK_INT(ncu_csv_parse(sb.buf, sb.len, &rep, &err), -1);
	CHECK_HAS(err, "columns");
	free(err);
	ncu_report_release(&rep);
	strbuf_reset(&sb);
	strbuf_addf(&sb, "%s\"0\",\"k\"\n\"1\",\"k\",\"7\"\n", hdr);
	CHECK_INT(ncu_csv_parse(sb.buf, sb.len, &rep, &err), 0);
	CHECK_INT(rep.nr, 1);
	CHECK_INT(rep.truncated, 1);
	ncu_report_release(&rep);
	/* a huge field: the row is dropped at the field cap, the parse survives */
	strbuf_reset(&sb);
	strbuf_addstr(&sb, hdr);
	strbuf_addstr(&sb, "\"0\",\"");
	for (unsigned i = 0; i < NCU_CSV_MAX_FIELD + 10; i++)
		strbuf_addch(&sb, 'x');
	strbuf_addstr(&sb, "\",\"1\"\n\"1\",\"k\",\"2\"\n");
	CHECK_INT(ncu_csv_parse(sb.buf, sb.len, &rep, &err), 0);
	CHECK_INT(rep.nr, 1);
	CHECK(ncu_kernel_value(&rep.kernels[0], "gpu__time_duration.sum", -1) == 2);
	ncu_report_release(&rep);
	/* binary garbage, with NULs: no crash, no table */
	strbuf_reset(&sb);
	unsigned x = 12345;
	for (int i = 0; i < 100000; i++) {
		x = x * 1103515245u + 12345u;
		strbuf_addch(&sb, (int)(x >> 16) & 0xff);
	}
	int rc = ncu_csv_parse(sb.buf, sb.len, &rep, &err);
	CHECK(rc == 0 || rc == -1);
	free(err);
	err = NULL;
	ncu_report_release(&rep);
	/* quoted quotes and embedded commas in kernel names */
	strbuf_reset(&sb);
	strbuf_addf(&sb, "%s\"0\",\"k<\"\"a\"\", 1>(int, float)\",\"1,024\"\r\n", hdr);
	CHECK_INT(ncu_csv_parse(sb.buf, sb.len, &rep, &err), 0);
	CHECK_STR(rep.kernels[0].name, "k<\"a\", 1>(int, float)");
	CHECK(ncu_kernel_value(&rep.kernels[0], "gpu__time_duration.sum", -1) == 1024);
	ncu_report_release(&rep);
	strbuf_release(&sb);
}

static void one_kernel(struct ncu_report *rep, double sm, double mem, double dram)
{
	char buf[1024];
	char *err = NULL;
	int n = snprintf(buf, sizeof(buf),
		"\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"sm__throughput.avg.pct_of_peak_sustained_elapsed\","
		"\"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed\","
		"\"dram__throughput.avg.pct_of_peak_sustained_elapsed\"\n"
		"\"\",\"\",\"nsecond\",\"%%\",\"%%\",\"%%\"\n\"0\",\"k\",\"1000\",\"%g\",\"%g\",\"%g\"\n", sm, mem, dram);
	ncu_csv_parse(buf, (size_t)n, rep, &err);
	free(err);
}

TEST(ncu_summary_classification)
{
	struct ncu_report rep = NCU_REPORT_INIT;
	struct ncu_summary s;
	one_kernel(&rep, 12, 85, 84);
	ncu_summarize(&rep, &s, NULL);
	CHECK_INT(s.bound, NCU_BOUND_MEMORY);
	ncu_report_release(&rep);
	one_kernel(&rep, 80, 40, 20);
	ncu_summarize(&rep, &s, NULL);
	CHECK_INT(s.bound, NCU_BOUND_COMPUTE);
	ncu_report_release(&rep);
	one_kernel(&rep, 30, 45, 40);   /* both under 60%: neither unit is busy */
	ncu_summarize(&rep, &s, NULL);
	CHECK_INT(s.bound, NCU_BOUND_LATENCY);
	ncu_report_release(&rep);
	one_kernel(&rep, 59.9, 60, 10); /* the threshold is inclusive for memory */
	ncu_summarize(&rep, &s, NULL);
	CHECK_INT(s.bound, NCU_BOUND_MEMORY);
	ncu_report_release(&rep);

	struct strbuf out = STRBUF_INIT;
	CHECK_INT(parse_file("raw-synthetic-wgmma.csv", &rep), 0);
	ncu_summarize(&rep, &s, &out);
	CHECK_INT(s.bound, NCU_BOUND_COMPUTE);
	CHECK_HAS(out.buf, "compute-bound: compute (SM) at 79% of peak");
	CHECK_HAS(out.buf, "tensor pipes active 81% of cycles");
	CHECK_HAS(out.buf, "limited by registers: 168/thread");
	CHECK_HAS(out.buf, "top: math pipe throttle");
	ncu_report_release(&rep);
	strbuf_release(&out);

	CHECK_INT(parse_file("raw-synthetic-two-kernels.csv", &rep), 0);
	ncu_summarize(&rep, &s, &out);
	CHECK(fabs(s.total_ns - (1482336 + 18208)) < 1);
	CHECK_INT(s.top, 0);
	CHECK(fabs(s.st_ways - 4.0) < 1e-9);
	CHECK(fabs(s.ld_ways - 1.0) < 1e-9);
	CHECK_STR(s.occ_limiter, "registers");
	CHECK_HAS(out.buf, "4.0-way bank conflicts on stores");
	ncu_report_release(&rep);
	strbuf_release(&out);
}

TEST(ncu_failure_detection)
{
	char *why = NULL;
	struct strbuf names = STRBUF_INIT;
	CHECK_INT(ncu_classify_output("==PROF== Connected\n==ERROR== ERR_NVGPUCTRPERM - The user does "
				      "not have permission to access NVIDIA GPU Performance Counters\n", &why, NULL),
		  NCU_E_PERMISSION);
	CHECK(ncu_unavailable(NCU_E_PERMISSION));
	free(why);
	CHECK_INT(ncu_classify_output("==ERROR== LibraryNotLoaded: failed to load libcuda\n", &why, NULL),
		  NCU_E_UNSUPPORTED);
	free(why);
	CHECK_INT(ncu_classify_output("==ERROR== Device not supported.\n", &why, NULL), NCU_E_UNSUPPORTED);
	CHECK(ncu_unavailable(NCU_E_UNSUPPORTED));
	free(why);
	CHECK_INT(ncu_classify_output("phase load\n==WARNING== No kernels were profiled.\n", &why, NULL),
		  NCU_E_NO_KERNELS);
	CHECK(!ncu_unavailable(NCU_E_NO_KERNELS));
	free(why);
	CHECK_INT(ncu_classify_output("==ERROR== Failed to find metric regex:^sm__pipe_tensor_op_gmma_cycles_active"
				      "\\.(sum|avg|min|max)$\n==ERROR== Failed to find metric bad_metric_xyz\n",
				      &why, &names), NCU_E_METRIC);
	CHECK_STR(names.buf, "sm__pipe_tensor_op_gmma_cycles_active\nbad_metric_xyz\n");
	free(why);
	CHECK_INT(ncu_classify_output("==ERROR== The application returned an error code (3).\n", &why, NULL),
		  NCU_E_FAILED);
	CHECK_HAS(why, "The application returned an error code");
	free(why);
	CHECK_INT(ncu_classify_output("==PROF== all fine\n", &why, NULL), NCU_OK);
	CHECK(why == NULL);
	CHECK(ncu_unavailable(NCU_E_MISSING));
	CHECK_STR(ncu_status_name(NCU_E_PERMISSION), "permission");
	strbuf_release(&names);
}

/* A real capture from the H200 (bench/gpu_session.sh profile): the summary's numbers are the
 * ones ncu itself reported for the fp32 SGEMM example at 4096^3. */
TEST(ncu_h200_capture_summary_matches_ncu)
{
	struct ncu_report rep = NCU_REPORT_INIT;
	CHECK_INT(parse_file("h200_gemm_fp32_sm80.csv", &rep), 0);
	CHECK_INT(rep.nr, 1);
	struct ncu_summary s;
	struct strbuf out = STRBUF_INIT;
	ncu_summarize(&rep, &s, &out);
	CHECK_INT(s.bound, NCU_BOUND_COMPUTE);
	CHECK(fabs(s.sm_pct - 83.76) < 0.01);              /* sm__throughput...pct_of_peak */
	CHECK(fabs(s.dram_pct - 4.92) < 0.01);             /* dram__throughput...pct_of_peak */
	CHECK(fabs(s.total_ns - 2876064) < 1);             /* gpu__time_duration.sum */
	CHECK(fabs(s.regs - 128) < 0.5);                   /* launch__registers_per_thread */
	CHECK(fabs(s.occ_pct - 23.85) < 0.01);             /* sm__warps_active...pct_of_peak */
	CHECK_HAS(out.buf, "compute-bound");
	CHECK_HAS(out.buf, "128 registers/thread");
	CHECK_HAS(out.buf, "limited by registers");
	strbuf_release(&out);
	ncu_report_release(&rep);
}

/* Fuzz finding: an ID past the range of long was cast (undefined behaviour). */
TEST(ncu_csv_huge_id_is_not_cast)
{
	const char *csv = "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"nsecond\"\n"
			  "\"1.1e46\",\"k\",\"5\"\n";
	struct ncu_report rep = NCU_REPORT_INIT;
	char *err = NULL;
	CHECK_INT(ncu_csv_parse(csv, strlen(csv), &rep, &err), 0);
	CHECK_INT((int)rep.nr, 1);
	CHECK_INT((int)rep.kernels[0].id, 0);
	ncu_report_release(&rep);
	free(err);
}

/* Fuzz finding: a runner report's trial count past the range of int was cast when formatted
 * (undefined behaviour, caught by UBSan under `make asan`). */
TEST(eval_format_huge_trials_count)
{
	struct eval_result r = EVAL_RESULT_INIT;
	char *err = NULL;
	CHECK_INT(eval_result_from_report(&r, "{\"verdict\":\"pass\",\"timing\":{\"median_ms\":1,"
					  "\"trials\":6.5e14}}", &err), 0);
	struct strbuf sb = STRBUF_INIT;
	eval_format(&r, task_builtin("kb1/19_relu"), &sb);
	CHECK_HAS(sb.buf, "650000000000000 trials");
	strbuf_release(&sb);
	eval_result_release(&r);
}

/* Issue 20: torch.compile's figure from tools/torch_eager.py is shown beside eager's, and a
 * torch.compile that failed is said to have failed (not silently dropped). */
TEST(eval_format_shows_torch_compile)
{
	struct eval_result r = EVAL_RESULT_INIT;
	char *err = NULL;
	CHECK_INT(eval_result_from_report(&r, "{\"verdict\":\"pass\",\"metrics\":{\"ms\":2,"
					  "\"speedup_vs_torch\":0.5,\"speedup_vs_torch_compile\":0.25},"
					  "\"baseline\":{\"torch_eager\":{\"ms\":1,\"torch\":\"2.11\","
					  "\"compile_ms\":0.5,\"compile_mode\":\"max-autotune\"}}}", &err), 0);
	struct strbuf sb = STRBUF_INIT;
	eval_format(&r, task_builtin("hopper/gemm_bf16_4096_bias_relu"), &sb);
	CHECK_HAS(sb.buf, "1.0000 ms eager");
	CHECK_HAS(sb.buf, "0.5000 ms torch.compile (max-autotune): speedup 0.250x");
	strbuf_release(&sb);
	eval_result_release(&r);

	r = (struct eval_result)EVAL_RESULT_INIT;
	CHECK_INT(eval_result_from_report(&r, "{\"verdict\":\"pass\",\"metrics\":{\"ms\":2},"
					  "\"baseline\":{\"torch_eager\":{\"ms\":1,\"torch\":\"2.11\","
					  "\"compile_error\":\"BackendCompilerFailed: no triton\"}}}", &err), 0);
	eval_format(&r, task_builtin("hopper/gemm_bf16_4096"), &sb);
	CHECK_HAS(sb.buf, "torch.compile failed: BackendCompilerFailed: no triton");
	strbuf_release(&sb);
	eval_result_release(&r);
}
