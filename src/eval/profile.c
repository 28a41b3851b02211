/*
 * The profiling hook of the agent loop (see profile.h), on the ncu module: Nsight Compute runs
 * the runner's --profile mode and its metrics become a few summary lines. When ncu is missing
 * or may not read the counters, this returns 1 so the loop says so once and goes on.
 */
#include "eval/profile.h"
#include "eval/ncu.h"
#include "util/xalloc.h"

int profile_kernel(const struct task *t, const char *so_path, struct strbuf *summary, char **err)
{
	struct ncu_opts o = NCU_OPTS_INIT;
	struct ncu_result r = NCU_RESULT_INIT;
	int st = ncu_profile(&o, t, so_path, &r, err);
	int rc = 0;
	if (st == NCU_OK)
		strbuf_addstr(summary, r.summary ? r.summary : "");
	else
		rc = ncu_unavailable(st) ? 1 : -1;
	ncu_result_release(&r);
	return rc;
}
