/*
 * The workers of the local pool: which GPUs there are (--gpus all asks `cutegen-runner
 * --devices`, or a list, or N compile-only CPU workers) and K workers sharing each GPU.
 * Not for: running tasks on them (pool.c).
 */
#include "suite/engine_impl.h"
#include "common/paths.h"
#include "eval/eval.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* How many GPUs cutegen-runner --devices lists: >= 0, or -1 with *err. */
static int count_devices(char **err)
{
	char *runner = paths_runner();
	if (!runner) {
		*err = xstrdup("cutegen-runner not found (build it with 'make'); without GPUs use "
			       "--gpus cpu:N with --recorded-evals DIR");
		return -1;
	}
	char *lerr = NULL;
	json_t *j = eval_list_devices(runner, 1, &lerr);
	free(runner);
	if (!j) {
		*err = xasprintf("cannot list GPUs: %s", lerr);
		free(lerr);
		return -1;
	}
	int nd = (int)json_array_size(json_object_get(j, "devices"));
	json_decref(j);
	if (!nd)
		*err = xstrdup("no CUDA device found; without GPUs use --gpus cpu:N (compile-only "
			       "workers, with --recorded-evals DIR)");
	return nd ? nd : -1;
}

static void add_worker(struct worker *ws, int *n, const char *prefix, int device, int i)
{
	snprintf(ws[*n].name, sizeof(ws[*n].name), "%s%d", prefix, i);
	ws[(*n)++].device = device;
}

int suite_workers_make(const char *spec, struct worker **out, int *n, char **err)
{
	*out = NULL;
	*n = 0;
	if (spec && !strncmp(spec, "cpu:", 4)) {
		char *end;
		long k = strtol(spec + 4, &end, 10);
		if (end == spec + 4 || *end || k < 1 || k > WORKERS_MAX) {
			*err = xasprintf("--gpus cpu:N needs N from 1 to %d (got \"%s\")", WORKERS_MAX, spec);
			return CG_USAGE;
		}
		*out = xcalloc((size_t)k, sizeof(**out));
		for (int i = 0; i < k; i++)
			add_worker(*out, n, "cpu", -1, i);
		return CG_OK;
	}
	/* a list of device numbers, each once, each one the runner lists: checked before the
	 * suite writes anything */
	int list[WORKERS_MAX], nl = 0;
	if (spec && strcmp(spec, "all")) {
		const char *p = spec;
		do {
			char *end;
			long d = strtol(p, &end, 10);
			int again = 0;
			for (int i = 0; i < nl; i++)
				again |= list[i] == d;
			if (end == p || d < 0 || d > 1023 || (*end && *end != ',') || nl >= WORKERS_MAX ||
			    again) {
				*err = again ? xasprintf("--gpus lists device %ld twice; --per-gpu K gives "
							 "each GPU K workers", d)
					     : xasprintf("--gpus takes all, a list of device numbers like "
							 "0,1,3, or cpu:N (got \"%s\")", spec);
				return CG_USAGE;
			}
			list[nl++] = (int)d;
			p = *end ? end + 1 : end;
		} while (*p);
	}
	int nd = count_devices(err);
	if (nd < 0)
		return CG_ENV;
	for (int i = 0; i < nl; i++)
		if (list[i] >= nd) {
			*err = xasprintf("--gpus names device %d; this machine has %d CUDA device%s "
					 "(0%s%d)", list[i], nd, nd == 1 ? "" : "s", nd == 1 ? "" : " to ",
					 nd == 1 ? 0 : nd - 1);
			return CG_ENV;
		}
	if (!nl) /* all */
		for (nl = 0; nl < nd && nl < WORKERS_MAX; nl++)
			list[nl] = nl;
	*out = xcalloc((size_t)nl, sizeof(**out));
	for (int i = 0; i < nl; i++)
		add_worker(*out, n, "gpu", list[i], list[i]);
	return CG_OK;
}

/*
 * --per-gpu K: K workers on each GPU. Their runs take turns on the GPU through a lock file per
 * GPU in the suite directory (CUTEGEN_GPU_LOCK: evaluations and profiles hold it), so their
 * nvcc compiles overlap but no two timings share the GPU; a CUTEGEN_GPU_LOCK the suite was given
 * is kept (device 0's, PATH.gpuN for device N), so a suite beside other evaluations takes turns
 * with them too; each run's parallel compiles are
 * scaled down so that all the workers together keep about two per core busy.
 */
void suite_workers_share_gpus(struct worker **ws, int *nw, int k, const char *suite_dir)
{
	int n = *nw * k;
	if (n > WORKERS_MAX)
		n = WORKERS_MAX;
	struct worker *out = xcalloc((size_t)n, sizeof(*out));
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	long jobs = (2 * (cores > 0 ? cores : 1) + n - 1) / n;
	const char *set = getenv("CUTEGEN_BUILD_JOBS");
	const char *mine = getenv("CUTEGEN_GPU_LOCK");
	for (int i = 0; i < n; i++) {
		const struct worker *g = &(*ws)[i / k];
		snprintf(out[i].name, sizeof(out[i].name), "%.32s.%d", g->name, i % k);
		out[i].device = g->device;
		if (mine && *mine) /* the user's lock: other processes on this GPU take turns with us */
			out[i].env[0] = g->device ? xasprintf("CUTEGEN_GPU_LOCK=%s.gpu%d", mine, g->device)
						  : xasprintf("CUTEGEN_GPU_LOCK=%s", mine);
		else
			out[i].env[0] = xasprintf("CUTEGEN_GPU_LOCK=%s/gpu%d.lock", suite_dir, g->device);
		if (!(set && *set))
			out[i].env[1] = xasprintf("CUTEGEN_BUILD_JOBS=%ld", jobs < 2 ? 2 : jobs);
	}
	free(*ws);
	*ws = out;
	*nw = n;
}

void suite_workers_free(struct worker *ws, int nw)
{
	for (int i = 0; i < nw; i++)
		for (int e = 0; ws[i].env[e]; e++)
			free(ws[i].env[e]);
	free(ws);
}
