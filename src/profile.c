/*
 * The profiling hook (see profile.h). Not implemented yet: the ncu driver and its summary are
 * the profiling module's job. Saying "not available" keeps the agent honest: its prompts
 * carry no profile, and the run's log says why once.
 */
#include "profile.h"
#include "util/xalloc.h"

int profile_kernel(const struct task *t, const char *so_path, struct strbuf *summary, char **err)
{
	(void)t;
	(void)so_path;
	(void)summary;
	*err = xstrdup("profiler not available: Nsight Compute support (ncu) is not built into this "
		       "cutegen yet; prompts go without a profile");
	return 1;
}
