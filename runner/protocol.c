/*
 * The timing protocol shared by the runner and the baseline process: see protocol.h.
 * Not for: the timing loops themselves (runner.c time_it, baseline.c time_plan), which differ in
 * what they call and check, not in how they time.
 */
#include "protocol.h"
#include "util/osrand.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void protocol_fill(const struct task *t, const struct tensor_spec *spec, int ti, int64_t numel,
		   int64_t rows, int64_t cols, enum dist dist, uint64_t seed, struct dk_fill *f)
{
	memset(f, 0, sizeof(*f));
	switch (spec->dtype) {
	case DT_FP16: f->dtype = DK_FP16; break;
	case DT_BF16: f->dtype = DK_BF16; break;
	case DT_FP8_E4M3: f->dtype = DK_FP8; break;
	default: f->dtype = DK_FP32; break;
	}
	f->dist = dist;
	f->structure = spec->structure;
	f->seed = 0x5eed0000ull + seed * 1000003ull + (uint64_t)dist * 7919ull + (uint64_t)ti;
	f->numel = numel;
	f->rows = rows;
	f->cols = cols;
	f->range = t->in_dtype == DT_FP8_E4M3 ? 400.0f : 100.0f;
	/* the tf32 contract's range probe: TF32 keeps fp32's exponent, fp16 (the same mantissa at
	 * twice the rate) overflows past 65504 */
	if (task_is_gemm_like(t) && t->precision == PREC_TF32 && dist == DIST_LARGE)
		f->range = 1e5f;
	double k = (double)(t->k > 0 ? t->k : 1);
	f->density = (float)fmin(1.0, sqrt(8.0 / k));
	if (t->op == OP_GEMM && t->epi_bias && !strcmp(spec->name, "bias") && dist == DIST_SPARSE)
		f->dist = DIST_NORMAL;
	switch (t->act) {
	case ACT_HARDTANH: f->nbranch = 2; f->branch[0] = (float)t->min_val; f->branch[1] = (float)t->max_val; break;
	case ACT_HARDSIGMOID: f->nbranch = 3; f->branch[0] = -3; f->branch[1] = 3; f->branch[2] = 0; break;
	case ACT_SOFTPLUS: f->nbranch = 2; f->branch[0] = (float)(t->sp_threshold / t->sp_beta); f->branch[1] = 0; break;
	default: f->nbranch = 1; f->branch[0] = 0; break;
	}
}

uint64_t protocol_random(void)
{
	uint64_t v = 0;
	os_random64(&v);
	return v;
}

int64_t protocol_random_below(int64_t n)
{
	return n > 0 ? (int64_t)(protocol_random() % (uint64_t)n) : 0;
}

enum dist protocol_draw_dist(const struct task *t)
{
	return t->n_dists > 0 ? t->dists[protocol_random_below(t->n_dists)] : DIST_UNIFORM;
}

uint64_t protocol_draw_seed(void)
{
	return (protocol_random() >> 34) + 1000000;
}

int protocol_trials(double est_ms, int quick)
{
	double n = fmax(quick ? 5 : 10, (quick ? 100.0 : 400.0) / (est_ms + 0.05));
	return (int)fmin(PROTOCOL_MAX_TRIALS, n);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double protocol_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double protocol_worst_median(const double *ms, const enum dist *dist, int n, double by_dist[DIST_COUNT])
{
	double *v = xmalloc((size_t)(n > 0 ? n : 1) * sizeof(double)), worst = -1;
	for (int d = 0; d < DIST_COUNT; d++) {
		int k = 0;
		for (int i = 0; i < n; i++)
			if (dist[i] == (enum dist)d)
				v[k++] = ms[i];
		by_dist[d] = k ? protocol_median(v, k) : -1;
		if (k && by_dist[d] > worst)
			worst = by_dist[d];
	}
	free(v);
	return worst;
}

int protocol_hold_back(const int *group, int ncases, int *held)
{
	int n = 0, want = ncases / 2 < 3 ? ncases / 2 : 3;
	for (int k = 0; k < ncases; k++)
		held[k] = 0;
	for (int k = ncases - 1; k > 0; k--) { /* the last of each distribution with two or more */
		int last = group[k] != k;
		for (int j = k + 1; j < ncases && last; j++)
			last = group[j] != group[k];
		held[k] = last && n < 3;
		n += held[k];
	}
	for (int k = ncases - 1; k > 0 && n < want; k--)
		if (!held[k] && group[k] != k) {
			held[k] = 1;
			n++;
		}
	if (!n && ncases > 1) {
		held[ncases - 1] = 1;
		n = 1;
	}
	return n;
}

int protocol_draw_case(const int *held, const int *seen, int ncases, int left)
{
	int unseen = 0;
	for (int k = 0; k < ncases; k++)
		unseen += held[k] && !seen[k];
	if (unseen && protocol_random_below(left > 0 ? left : 1) < unseen) {
		int j = (int)protocol_random_below(unseen);
		for (int k = 0; k < ncases; k++)
			if (held[k] && !seen[k] && j-- == 0)
				return k;
	}
	return (int)protocol_random_below(ncases);
}

double protocol_first_sight(const double *ms, const int *first, int n, double worst, double *best,
			    int *nfirst, int *replay)
{
	*best = INFINITY;
	*nfirst = 0;
	for (int i = 0; i < n; i++)
		if (first[i]) {
			*best = fmin(*best, ms[i]);
			(*nfirst)++;
		}
	/* one first sight (3 cases or fewer) is one call's noise too: then 2x */
	*replay = *nfirst > 0 && *best > (*nfirst > 1 ? 1.25 : 2.0) * worst + PROTOCOL_FIRST_SLACK_MS;
	return *replay ? *best : worst;
}
