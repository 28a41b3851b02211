/*
 * The profiling hook of the agent loop: from a configurable stage on, the agent profiles its
 * best kernel and puts the summary in the prompt. The profiler itself (Nsight Compute: ncu on
 * the runner's --profile mode, its CSV parsed and summarized) is ncu.h; this is the narrow
 * interface the loop needs.
 */
#ifndef CUTEGEN_PROFILE_H
#define CUTEGEN_PROFILE_H

#include "common/task.h"
#include "util/strbuf.h"

/*
 * Profiles the kernel in so_path on task t and appends a short summary for the model
 * (achieved bandwidth and throughput, stall reasons, occupancy...) to summary.
 * Returns 0 on success, 1 when no profiler is available (*err says why, once is enough to
 * tell the user), -1 when profiling failed (*err). The caller frees *err.
 */
int profile_kernel(const struct task *t, const char *so_path, struct strbuf *summary, char **err);

#endif
