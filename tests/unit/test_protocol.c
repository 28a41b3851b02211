/* The timing protocol the runner and the baseline process share (runner/protocol.c): the
 * statistic (per-distribution medians, the largest reported), the fill parameters, the draws and
 * the trial count; for module tasks, the cases held back for timing and the first-sight time. */
#include "test.h"
#include "../../runner/protocol.h"
#include "common/task.h"

#include <math.h>
#include <stdlib.h>

static struct task *parse(const char *json)
{
	char *err = NULL;
	struct task *t = task_parse_json(json, strlen(json), "t.json", &err);
	if (!t)
		fprintf(stderr, "task: %s\n", err ? err : "?");
	free(err);
	return t;
}

TEST(protocol_worst_median_by_dist)
{
	/* uniform: 1 3 2 (median 2); normal: 5 4 9 7 (median 6); sparse: 0.5 (median 0.5) */
	double ms[] = { 1, 5, 3, 4, 0.5, 2, 9, 7 };
	enum dist d[] = { DIST_UNIFORM, DIST_NORMAL, DIST_UNIFORM, DIST_NORMAL, DIST_SPARSE,
			  DIST_UNIFORM, DIST_NORMAL, DIST_NORMAL };
	double by[DIST_COUNT];
	double worst = protocol_worst_median(ms, d, 8, by);
	CHECK(fabs(worst - 6.0) < 1e-12);
	CHECK(fabs(by[DIST_UNIFORM] - 2.0) < 1e-12);
	CHECK(fabs(by[DIST_NORMAL] - 6.0) < 1e-12);
	CHECK(fabs(by[DIST_SPARSE] - 0.5) < 1e-12);
	CHECK(by[DIST_LARGE] < 0 && by[DIST_BRANCHES] < 0);
	CHECK(ms[0] == 1 && ms[7] == 7); /* the inputs are left as they were */
	/* one distribution alone: the plain median */
	double one[] = { 4, 1, 3 };
	enum dist u[] = { DIST_UNIFORM, DIST_UNIFORM, DIST_UNIFORM };
	CHECK(fabs(protocol_worst_median(one, u, 3, by) - 3.0) < 1e-12);
	double even[] = { 4, 1, 3, 2 };
	CHECK(fabs(protocol_median(even, 4) - 2.5) < 1e-12);
}

TEST(protocol_fill_parameters)
{
	struct task *t = parse("{\"name\": \"t/tf32\", \"op\": \"gemm\", \"dtype\": \"fp32\", \"precision\": \"tf32\", "
			       "\"m\": 64, \"n\": 32, \"k\": 128, \"epilogue\": {\"bias\": true, \"activation\": \"none\"}}");
	CHECK(t);
	struct tensor_spec ts[TASK_MAX_TENSORS];
	int nt = task_tensors(t, ts), ia = -1, ibias = -1;
	for (int i = 0; i < nt; i++) {
		if (!strcmp(ts[i].name, "A"))
			ia = i;
		if (!strcmp(ts[i].name, "bias"))
			ibias = i;
	}
	CHECK(ia >= 0 && ibias >= 0);
	struct dk_fill f;
	protocol_fill(t, &ts[ia], ia, 64 * 128, 64, 128, DIST_LARGE, 1, &f);
	CHECK_INT(f.dtype, DK_FP32);
	CHECK_INT(f.dist, DIST_LARGE);
	CHECK(f.range == 1e5f); /* the tf32 range probe */
	CHECK_INT(f.numel, 64 * 128);
	CHECK_INT(f.rows, 64);
	CHECK_INT(f.cols, 128);
	/* the checks' inputs as before the protocol was shared: the runner's seed formula */
	CHECK(f.seed == 0x5eed0000ull + 1ull * 1000003ull + (uint64_t)DIST_LARGE * 7919ull + (uint64_t)ia);
	CHECK(fabs(f.density - sqrt(8.0 / 128)) < 1e-6);
	uint64_t s1 = f.seed;
	protocol_fill(t, &ts[ia], ia, 64 * 128, 64, 128, DIST_NORMAL, 1, &f);
	CHECK(f.seed != s1 && f.range == 100.0f);
	protocol_fill(t, &ts[ibias], ibias, 32, 1, 32, DIST_SPARSE, 1, &f);
	CHECK_INT(f.dist, DIST_NORMAL); /* the bias is not part of the sparse precision probe */
	protocol_fill(t, &ts[ia], ia, 64 * 128, 64, 128, DIST_SPARSE, 1, &f);
	CHECK_INT(f.dist, DIST_SPARSE);
	task_free(t);

	t = parse("{\"name\": \"t/fp8\", \"op\": \"gemm\", \"dtype\": \"fp8_e4m3\", \"out_dtype\": \"bf16\", "
		  "\"precision\": \"fp8\", \"m\": 64, \"n\": 64, \"k\": 64, \"b_layout\": \"col\"}");
	CHECK(t);
	nt = task_tensors(t, ts);
	protocol_fill(t, &ts[0], 0, 64 * 64, 64, 64, DIST_LARGE, 7, &f);
	CHECK_INT(f.dtype, DK_FP8);
	CHECK(f.range == 400.0f);
	task_free(t);

	char *err = NULL;
	t = task_load("kb1/32_hardtanh", &err);
	CHECK(t);
	nt = task_tensors(t, ts);
	protocol_fill(t, &ts[0], 0, 1000, 1, 1000, DIST_BRANCHES, 0, &f);
	CHECK_INT(f.nbranch, 2);
	CHECK(f.branch[0] == -1.0f && f.branch[1] == 1.0f);
	CHECK(f.range == 100.0f);
	CHECK(f.density == 1.0f); /* no K: the sparse density is moot */
	task_free(t);
}

TEST(protocol_draws)
{
	struct task *t = parse("{\"name\": \"t/relu\", \"op\": \"elementwise\", \"dtype\": \"fp32\", \"precision\": \"strict\", "
			       "\"shape\": [8, 8], \"activation\": \"relu\", \"distributions\": [\"normal\", \"branches\"]}");
	CHECK(t);
	int seen[DIST_COUNT] = { 0 };
	for (int i = 0; i < 400; i++)
		seen[protocol_draw_dist(t)]++;
	CHECK(seen[DIST_NORMAL] > 100 && seen[DIST_BRANCHES] > 100);
	CHECK(seen[DIST_NORMAL] + seen[DIST_BRANCHES] == 400);
	/* timed seeds are never the checks' small ones, and differ */
	uint64_t a = protocol_draw_seed(), b = protocol_draw_seed();
	CHECK(a >= 1000000 && b >= 1000000);
	CHECK(a != b);
	for (int i = 0; i < 100; i++) {
		int64_t r = protocol_random_below(7);
		CHECK(r >= 0 && r < 7);
	}
	task_free(t);
}

TEST(protocol_trial_count)
{
	CHECK_INT(protocol_trials(0.001, 0), PROTOCOL_MAX_TRIALS); /* short calls: the most */
	CHECK_INT(protocol_trials(1000.0, 0), 10);                 /* long calls: at least 10 */
	CHECK_INT(protocol_trials(1000.0, 1), 5);
	CHECK_INT(protocol_trials(3.95, 0), 100);                  /* 400 ms of calls */
	CHECK_INT(protocol_trials(1.95, 1), 50);
}

/* A module's held-back cases: the last of each distribution with two or more, then others that
 * are not the first of theirs, up to min(3, cases / 2); the last when every distribution has
 * one; never the first case of a distribution. */
static const char *held_of(const int *group, int n)
{
	static char buf[64];
	int held[64], p = 0;
	protocol_hold_back(group, n, held);
	buf[0] = 0;
	for (int k = 0; k < n; k++)
		if (held[k])
			p += snprintf(buf + p, sizeof(buf) - (size_t)p, "%d ", k);
	return buf;
}

TEST(protocol_hold_back_cases)
{
	int three[] = { 0, 1, 2, 0, 1, 2 }; /* module, normal, large, twice */
	CHECK_STR(held_of(three, 6), "3 4 5 ");
	int one[] = { 0, 0, 0, 0, 0, 0 }; /* the module's own distribution only */
	CHECK_STR(held_of(one, 6), "3 4 5 ");
	int quick[] = { 0, 1, 2 };
	CHECK_STR(held_of(quick, 3), "2 ");
	int two[] = { 0, 1 };
	CHECK_STR(held_of(two, 2), "1 ");
	int same[] = { 0, 0 };
	CHECK_STR(held_of(same, 2), "1 ");
	int four[] = { 0, 1, 2, 0 };
	CHECK_STR(held_of(four, 4), "3 ");
	int twotwo[] = { 0, 1, 0, 1 }; /* module and normal, twice */
	CHECK_STR(held_of(twotwo, 4), "2 3 ");
	int many[20];
	for (int k = 0; k < 20; k++)
		many[k] = k % 3;
	CHECK_STR(held_of(many, 20), "17 18 19 ");
	int held[6];
	CHECK_INT(protocol_hold_back(three, 6, held), 3);
}

/* Every held-back case comes up in the timed calls, however few, and the others are drawn too. */
TEST(protocol_draw_case_reaches_the_held_back)
{
	int held[6] = { 0, 0, 0, 1, 1, 1 };
	int trials[] = { 3, 4, 10, 40 };
	for (size_t t = 0; t < sizeof(trials) / sizeof(trials[0]); t++)
		for (int run = 0; run < 200; run++) {
			int seen[6] = { 1, 1, 1, 0, 0, 0 }, drawn[6] = { 0 };
			for (int i = 0; i < trials[t]; i++) {
				int k = protocol_draw_case(held, seen, 6, trials[t] - i);
				CHECK(k >= 0 && k < 6);
				seen[k] = 1;
				drawn[k]++;
			}
			CHECK(seen[3] && seen[4] && seen[5]);
			if (trials[t] == 3)
				CHECK(drawn[0] + drawn[1] + drawn[2] == 0);
		}
	/* nothing held back: uniform */
	int none[6] = { 0 }, seen[6] = { 0 }, count[6] = { 0 };
	for (int i = 0; i < 600; i++)
		count[protocol_draw_case(none, seen, 6, 10)]++;
	for (int k = 0; k < 6; k++)
		CHECK(count[k] > 40);
}

/* The time on first sight: kept where a kernel is as fast on new cases as on known ones (noise
 * only slows a call: the fastest first sight counts), the first sight's where it is over 1.25x. */
TEST(protocol_first_sight_times_replays_on_new_cases)
{
	double ms[8] = { 1.0, 1.02, 0.98, 1.01, 1.0, 0.99, 1.03, 1.0 };
	int first[8] = { 0, 1, 0, 0, 1, 0, 0, 1 };
	double best;
	int n, replay;
	CHECK(protocol_first_sight(ms, first, 8, 1.0, &best, &n, &replay) == 1.0);
	CHECK_INT(n, 3);
	CHECK_INT(replay, 0);
	CHECK(fabs(best - 0.99) < 1e-12 || fabs(best - 1.0) < 1e-12 || fabs(best - 1.02) < 1e-12);
	ms[1] = 5.0; /* one slow first sight (noise): the fastest is 1.0 */
	CHECK(protocol_first_sight(ms, first, 8, 1.0, &best, &n, &replay) == 1.0);
	CHECK_INT(replay, 0);
	double rp[8] = { 0.1, 1.0, 0.1, 0.1, 1.1, 0.1, 0.1, 1.05 }; /* replays but on first sight */
	CHECK(protocol_first_sight(rp, first, 8, 0.1, &best, &n, &replay) == 1.0);
	CHECK_INT(replay, 1);
	/* one first sight: 2x, one call's noise (1.5x) is not a replay, 3x is */
	int one[8] = { 0, 1, 0, 0, 0, 0, 0, 0 };
	double jit[8] = { 1.0, 1.5, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0 };
	CHECK(protocol_first_sight(jit, one, 8, 1.0, &best, &n, &replay) == 1.0);
	CHECK_INT(replay, 0);
	jit[1] = 3.0;
	CHECK(protocol_first_sight(jit, one, 8, 1.0, &best, &n, &replay) == 3.0);
	CHECK_INT(replay, 1);
	/* a call of microseconds: launch jitter (the slack) is no replay */
	double tiny[8] = { 0.003, 0.006, 0.003, 0.003, 0.006, 0.003, 0.003, 0.006 };
	CHECK(protocol_first_sight(tiny, first, 8, 0.003, &best, &n, &replay) == 0.003);
	CHECK_INT(replay, 0);
	int nofirst[8] = { 0 };
	CHECK(protocol_first_sight(rp, nofirst, 8, 0.1, &best, &n, &replay) == 0.1);
	CHECK_INT(n, 0);
	CHECK_INT(replay, 0);
}
