/* Tests of the error convention: result codes (util/err.h), their exit statuses in one place
 * (cmd/exit.c), and the outliers converted to it (strbuf reads, ncu, the LLM, build_kernel_file). */
#include "test.h"
#include "cmd/cutegen.h"
#include "common/verdict.h"
#include "eval/build.h"
#include "eval/ncu.h"
#include "eval/policy.h"
#include "llm/llm.h"
#include "util/err.h"
#include "util/strbuf.h"

#include <stdio.h>
#include <unistd.h>

TEST(err_codes_map_to_exit_statuses_in_one_place)
{
	CHECK_INT(exit_status_for(CG_OK), EXIT_OK);
	CHECK_INT(exit_status_for(CG_USAGE), EXIT_USAGE);
	CHECK_INT(exit_status_for(CG_INPUT), EXIT_INPUT);
	CHECK_INT(exit_status_for(CG_INPUT_TOOBIG), EXIT_INPUT);
	CHECK_INT(exit_status_for(CG_INPUT_NOTREG), EXIT_INPUT);
	CHECK_INT(exit_status_for(CG_REJECTED), EXIT_VERDICT);
	CHECK_INT(exit_status_for(CG_ENV), EXIT_ENV);
	CHECK_INT(exit_status_for(CG_IO), EXIT_ENV);
	CHECK_INT(exit_status_for(CG_EXTERNAL), EXIT_EXTERNAL);
	CHECK_INT(exit_status_for(CG_TIMEOUT), EXIT_EXTERNAL);
	CHECK_INT(exit_status_for(CG_INTERRUPTED), 130);
	CHECK_INT(exit_status_for(CG_ERROR), EXIT_INTERNAL);
	CHECK_INT(exit_status_for(CG_INTERNAL), EXIT_INTERNAL);
	CHECK_STR(cg_name(CG_INPUT_TOOBIG), "input");
	CHECK_STR(cg_name(-1), "error");
	/* ncu's statuses are extended codes: their exit statuses are those cmd_profile had */
	CHECK_INT(exit_status_for(NCU_E_MISSING), EXIT_ENV);
	CHECK_INT(exit_status_for(NCU_E_PERMISSION), EXIT_ENV);
	CHECK_INT(exit_status_for(NCU_E_SETUP), EXIT_ENV);
	CHECK_INT(exit_status_for(NCU_E_KERNEL), EXIT_VERDICT);
	CHECK_INT(exit_status_for(NCU_E_TIMEOUT), EXIT_EXTERNAL);
	CHECK_INT(exit_status_for(NCU_E_METRIC), EXIT_EXTERNAL);
	CHECK_STR(ncu_status_name(NCU_E_KERNEL), "kernel_failed");
	CHECK_STR(ncu_status_name(NCU_E_SETUP), "setup");
	/* the LLM's errors only through their mapping */
	CHECK_INT(exit_status_for(llm_error_code(LLM_ERR_CONFIG)), EXIT_USAGE);
	CHECK_INT(exit_status_for(llm_error_code(LLM_ERR_REPLAY_END)), EXIT_INPUT);
	CHECK_INT(exit_status_for(llm_error_code(LLM_ERR_IO)), EXIT_ENV);
}

TEST(strbuf_read_file_says_missing_or_too_big)
{
	struct strbuf sb = STRBUF_INIT;
	CHECK_INT(strbuf_read_file(&sb, "/nonexistent/cutegen-test", 0), CG_INPUT);
	char path[] = "/tmp/cutegen-err-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK_INT((int)write(fd, "0123456789", 10), 10);
	close(fd);
	CHECK_INT(strbuf_read_file(&sb, path, 4), CG_INPUT_TOOBIG);
	strbuf_reset(&sb);
	CHECK_INT(strbuf_read_file(&sb, path, 0), 0);
	CHECK_INT(sb.len, 10);
	unlink(path);
	strbuf_release(&sb);
}

/* The bug of issue 17: a kernel file that cannot be read came back as the policy's verdict. */
TEST(build_kernel_file_missing_is_input_not_a_verdict)
{
	struct kernel_build kb = { 0 };
	struct strbuf src = STRBUF_INIT;
	struct policy_report pol = POLICY_REPORT_INIT;
	struct build_result br = BUILD_RESULT_INIT;
	int b = build_kernel_file("/nonexistent/kernel.cu", &kb, &src, &pol, &br);
	CHECK_INT(b, CG_INPUT);
	CHECK(b != CG_REJECTED);
	CHECK_INT(exit_status_for(b), EXIT_INPUT);
	build_result_release(&br);
	policy_report_release(&pol);
	strbuf_release(&src);
}

/* Verdicts are an enum inside and the same names outside (reports, stores, --json). */
TEST(verdict_names_round_trip)
{
	static const char *const names[] = {
		"pass", "incorrect", "precision", "inputs_modified", "stale_output", "timing_escape",
		"launch_error", "cuda_error", "abi_error", "timeout", "crash", "no_device",
		"task_error", "runner_error", "policy", "compile_error", "bad_reply"
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		enum verdict v = verdict_parse(names[i]);
		CHECK(v != VERDICT_UNKNOWN && v != VERDICT_NONE);
		CHECK_STR(verdict_name(v), names[i]);
	}
	CHECK_INT(verdict_parse("pass"), VERDICT_PASS);
	CHECK_INT(verdict_parse(NULL), VERDICT_NONE);
	CHECK_INT(verdict_parse("no-such-verdict"), VERDICT_UNKNOWN);
	CHECK_STR(verdict_name(VERDICT_NONE), "");
}
