/*
 * The timing protocol that cutegen-runner (the candidate) and cutegen-baseline (cuBLASLt) share,
 * so the two are timed alike (docs/evaluation.md, "Evaluation"): the fill parameters of an input
 * in a distribution and seed, the distribution and seed each timed call draws, the number of
 * trials, and the statistic (the median of each distribution's calls; the time is the largest).
 * Host code only, no CUDA calls: unit-tested in tests/unit/test_protocol.c.
 */
#ifndef CUTEGEN_RUNNER_PROTOCOL_H
#define CUTEGEN_RUNNER_PROTOCOL_H

#include "devkern.h"
#include "common/task.h"

#include <stdint.h>

#define PROTOCOL_NAME "regenerated-v1" /* what the reports say timed them */
#define PROTOCOL_MAX_TRIALS 200

/*
 * The dk_fill of input tensor number `ti` (its spec, element count and last two dims) of task t
 * in distribution `dist` from `seed`: the seed mixed with the distribution and the tensor, the
 * range of the `large` distribution (the tf32 range probe's for a tf32 GEMM), the density of the
 * sparse probe (about 8 nonzero products per dot product), the activation's branch points.
 */
void protocol_fill(const struct task *t, const struct tensor_spec *spec, int ti, int64_t numel,
		   int64_t rows, int64_t cols, enum dist dist, uint64_t seed, struct dk_fill *f);

/* A random number from the kernel (getrandom), drawn at the moment of use: no generator state
 * in the process that a candidate could read to predict a seed or a sampled position. */
uint64_t protocol_random(void);
int64_t protocol_random_below(int64_t n);

/* What a timed call draws: a distribution among the task's (uniform when it names none), and a
 * seed that no check uses (checks use the task's small seeds). */
enum dist protocol_draw_dist(const struct task *t);
uint64_t protocol_draw_seed(void);

/* Timed calls for a call of `est_ms` (one cold call): enough for a stable median, within
 * PROTOCOL_MAX_TRIALS (fewer with quick). */
int protocol_trials(double est_ms, int quick);

/*
 * The statistic: the median of the times of each distribution's calls into by_dist[d] (-1 for a
 * distribution no call drew), and, returned, the largest of them: an implementation fast on one
 * kind of input only is timed on its slowest. n > 0; ms and dist are not changed.
 */
double protocol_worst_median(const double *ms, const enum dist *dist, int n, double by_dist[DIST_COUNT]);

/* The median of n values (n > 0); sorts v. */
double protocol_median(double *v, int n);

/*
 * Module tasks, whose timed calls draw among the reference's few cases (docs/evaluation.md,
 * "Module tasks"): the cases held back from the checks, so that timing gives the kernel cases it
 * has never seen. group[k] is the first case of case k's distribution; held[k] is set to 1 for
 * the last case of each distribution that has two or more, then for others from the end that
 * are not the first of their distribution, up to min(3, ncases / 2), or for the last case when
 * every distribution has one (ncases >= 2). Returns how many.
 */
int protocol_hold_back(const int *group, int ncases, int *held);

/* The case of the next timed call, `left` calls to go with this one: uniform over the cases,
 * except that a held-back case not yet seen is drawn with probability unseen / left, so each
 * comes up before the last call, at a random place. */
int protocol_draw_case(const int *held, const int *seen, int ncases, int left);

/*
 * The time of n timed calls whose statistic is `worst`, first[i] marking the calls on a case the
 * kernel had not been given before: `worst` unless the fastest of those (*best) is over 1.25x
 * it (2x when there is one such call: one call's noise) plus PROTOCOL_FIRST_SLACK_MS (a kernel
 * that replays what it stored for the cases it knows: what the work takes shows on first
 * sight; the fastest, so that noise, which only slows a call, does not move an honest time),
 * then *best. *nfirst: how many such calls (0: `worst`, *best infinite); *replay: 1 when *best.
 */
#define PROTOCOL_FIRST_SLACK_MS 0.005 /* launch jitter of a call of a few microseconds */
double protocol_first_sight(const double *ms, const int *first, int n, double worst, double *best,
			    int *nfirst, int *replay);

#endif
