/* The kept reference session's pure decisions: which reports let it serve the next candidate
 * (eval_keeps_reference) and which options it fits (reference_keep_matches). */
#include "test.h"
#include "eval/eval.h"
#include "eval/reference.h"

#include <jansson.h>

static int keeps(enum verdict v, const char *report)
{
	struct eval_result r = EVAL_RESULT_INIT;
	r.verdict = v;
	r.report = report ? json_loads(report, 0, NULL) : NULL;
	int k = eval_keeps_reference(&r);
	eval_result_release(&r);
	return k;
}

TEST(refkeep_keeps_after_a_normal_end_with_the_reference_intact)
{
	const char *intact = "{\"module\":{\"reference_intact\":true}}";
	CHECK_INT(keeps(VERDICT_PASS, intact), 1);
	CHECK_INT(keeps(VERDICT_INCORRECT, intact), 1);
	CHECK_INT(keeps(VERDICT_PRECISION, intact), 1);
	CHECK_INT(keeps(VERDICT_INPUTS_MODIFIED, intact), 1);
	CHECK_INT(keeps(VERDICT_STALE_OUTPUT, intact), 1);
	CHECK_INT(keeps(VERDICT_TIMING_ESCAPE, intact), 1);
	CHECK_INT(keeps(VERDICT_TIMING_MISMATCH, intact), 1);
	CHECK_INT(keeps(VERDICT_IMPLAUSIBLE, intact), 1);
}

TEST(refkeep_drops_when_the_reference_changed_or_no_hash_was_reported)
{
	CHECK_INT(keeps(VERDICT_PASS, "{\"module\":{\"reference_intact\":false}}"), 0);
	CHECK_INT(keeps(VERDICT_INCORRECT, "{\"module\":{\"reference_intact\":false}}"), 0);
	CHECK_INT(keeps(VERDICT_PASS, "{\"module\":{}}"), 0);
	CHECK_INT(keeps(VERDICT_PASS, "{\"module\":{\"reference_intact\":\"true\"}}"), 0);
	CHECK_INT(keeps(VERDICT_PASS, "{\"reference_intact\":true}"), 0);
	CHECK_INT(keeps(VERDICT_PASS, NULL), 0);
}

TEST(refkeep_drops_when_the_runner_did_not_end_normally)
{
	const char *intact = "{\"module\":{\"reference_intact\":true}}";
	CHECK_INT(keeps(VERDICT_CRASH, intact), 0);
	CHECK_INT(keeps(VERDICT_TIMEOUT, intact), 0);
	CHECK_INT(keeps(VERDICT_RUNNER_ERROR, intact), 0);
	CHECK_INT(keeps(VERDICT_UNTRUSTED_REPORT, intact), 0);
	CHECK_INT(keeps(VERDICT_LAUNCH_ERROR, intact), 0);
	CHECK_INT(keeps(VERDICT_CUDA_ERROR, intact), 0);
	CHECK_INT(keeps(VERDICT_ABI_ERROR, intact), 0);
	CHECK_INT(keeps(VERDICT_TASK_ERROR, intact), 0);
	CHECK_INT(keeps(VERDICT_NO_DEVICE, intact), 0);
	CHECK_INT(keeps(VERDICT_NONE, intact), 0);
}

TEST(refkeep_matches_the_module_and_options_it_was_prepared_for)
{
	struct reference_keep k = REFERENCE_KEEP_INIT;
	struct module_desc md, other;
	memset(&md, 0, sizeof(md));
	memset(&other, 0, sizeof(other));
	md.file = (char *)"/m/a.py";
	other.file = (char *)"/m/b.py";
	struct reference_prepare_opts po = REFERENCE_PREPARE_OPTS_INIT;
	po.device = 1;
	po.quick = 1;
	po.baselines = 0;
	po.precision = "tf32";
	CHECK_INT(reference_keep_matches(&k, &md, &po), 0); /* nothing kept */
	/* a session stands in as a non-NULL pointer: matches never touches it */
	k.rs = (struct reference_session *)&k;
	k.file = (char *)"/m/a.py";
	k.precision = (char *)"tf32";
	k.device = 1;
	k.quick = 1;
	CHECK_INT(reference_keep_matches(&k, &md, &po), 1);
	CHECK_INT(reference_keep_matches(&k, &other, &po), 0);
	struct reference_prepare_opts p2 = po;
	p2.device = 0;
	CHECK_INT(reference_keep_matches(&k, &md, &p2), 0);
	p2 = po;
	p2.quick = 0;
	CHECK_INT(reference_keep_matches(&k, &md, &p2), 0);
	p2 = po;
	p2.baselines = 1;
	CHECK_INT(reference_keep_matches(&k, &md, &p2), 0);
	p2 = po;
	p2.precision = NULL; /* "strict" */
	CHECK_INT(reference_keep_matches(&k, &md, &p2), 0);
	k.precision = (char *)"strict";
	CHECK_INT(reference_keep_matches(&k, &md, &p2), 1);
	CHECK_INT(reference_keep_matches(NULL, &md, &po), 0);
}
