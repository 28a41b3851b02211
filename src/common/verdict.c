/* Verdict names (see verdict.h). Not for: deciding verdicts (eval/, agent/). */
#include "common/verdict.h"

#include <string.h>

static const char *const names[] = {
	[VERDICT_NONE] = "",
	[VERDICT_PASS] = "pass",
	[VERDICT_INCORRECT] = "incorrect",
	[VERDICT_PRECISION] = "precision",
	[VERDICT_INPUTS_MODIFIED] = "inputs_modified",
	[VERDICT_STALE_OUTPUT] = "stale_output",
	[VERDICT_TIMING_ESCAPE] = "timing_escape",
	[VERDICT_TIMING_MISMATCH] = "timing_mismatch",
	[VERDICT_IMPLAUSIBLE] = "implausible",
	[VERDICT_UNTRUSTED_REPORT] = "untrusted_report",
	[VERDICT_LAUNCH_ERROR] = "launch_error",
	[VERDICT_CUDA_ERROR] = "cuda_error",
	[VERDICT_ABI_ERROR] = "abi_error",
	[VERDICT_TIMEOUT] = "timeout",
	[VERDICT_CRASH] = "crash",
	[VERDICT_NO_DEVICE] = "no_device",
	[VERDICT_TASK_ERROR] = "task_error",
	[VERDICT_RUNNER_ERROR] = "runner_error",
	[VERDICT_POLICY] = "policy",
	[VERDICT_COMPILE_ERROR] = "compile_error",
	[VERDICT_BAD_REPLY] = "bad_reply",
	[VERDICT_UNKNOWN] = "unknown",
};

const char *verdict_name(enum verdict v)
{
	return (unsigned)v < sizeof(names) / sizeof(*names) ? names[v] : "unknown";
}

enum verdict verdict_parse(const char *name)
{
	if (!name || !*name)
		return VERDICT_NONE;
	for (unsigned v = VERDICT_PASS; v < VERDICT_UNKNOWN; v++)
		if (!strcmp(names[v], name))
			return (enum verdict)v;
	return VERDICT_UNKNOWN;
}
