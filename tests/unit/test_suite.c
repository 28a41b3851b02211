/* Tests of the suite store (suite.db), its aggregate (fast_p, geomeans) and the Slurm parsers. */
#include "test.h"
#include <math.h>
#include <stdlib.h>
#include "suite/slurm.h"
#include "store/store.h"
#include "suite/suite_store.h"
#include "util/fsutil.h"
#include "util/xalloc.h"

TEST(suite_summary_fast_p_and_geomean)
{
	struct suite_task t[4];
	for (int i = 0; i < 4; i++)
		suite_task_init(&t[i]);
	char done[] = "done", failed[] = "failed";
	t[0].status = done; t[0].correct = 1; t[0].best_speedup = 2.0; t[0].best_roof = 0.5;
	t[1].status = done; t[1].correct = 1; t[1].best_speedup = 0.5; t[1].best_roof = 0.2;
	t[2].status = done; t[2].correct = 0;
	t[3].status = failed;
	struct suite_summary s;
	suite_summarize(t, 4, &s);
	CHECK_INT(s.tasks, 4);
	CHECK_INT(s.done, 3);
	CHECK_INT(s.failed, 1);
	CHECK_INT(s.correct, 2);
	CHECK(fabs(s.fast_p[0] - 0.5) < 1e-12);  /* 2 of 4 correct */
	CHECK(fabs(s.fast_p[1] - 0.25) < 1e-12); /* > 0.5x: only the 2x one (0.5 is not > 0.5) */
	CHECK(fabs(s.fast_p[2] - 0.25) < 1e-12);
	CHECK(fabs(s.fast_p[4] - 0.0) < 1e-12);  /* > 2x: none */
	CHECK(fabs(s.geomean_speedup - 1.0) < 1e-12);
	CHECK(fabs(s.geomean_roof - sqrt(0.1)) < 1e-12);
}

/* `--torch`: fast_p against eager and torch.compile over ALL tasks; no figure = not fast */
TEST(suite_summary_fast_p_against_torch)
{
	struct suite_task t[5];
	for (int i = 0; i < 5; i++)
		suite_task_init(&t[i]);
	char done[] = "done", failed[] = "failed";
	for (int i = 0; i < 4; i++) {
		t[i].status = done;
		t[i].correct = 1;
		t[i].best_speedup = 1.0;
		t[i].torch = 1;
	}
	t[0].torch_speedup = 3.0; t[0].compile_speedup = 1.5;
	t[1].torch_speedup = 1.2; /* torch.compile failed: no compile figure */
	t[2].torch_speedup = 0.4; t[2].compile_speedup = 0.3;
	/* t[3]: no torch at all; t[4]: failed, but its (stale) figures must not count */
	t[4].status = failed; t[4].torch = 1; t[4].torch_speedup = 9; t[4].compile_speedup = 9;
	struct suite_summary s;
	suite_summarize(t, 5, &s);
	CHECK_INT(s.n_torch, 5);
	CHECK_INT(s.n_eager, 3);
	CHECK_INT(s.n_compile, 2);
	CHECK(fabs(s.fast_p_eager[0] - 0.6) < 1e-12);   /* 3 of 5 have the figure */
	CHECK(fabs(s.fast_p_eager[2] - 0.4) < 1e-12);   /* > 1x: 3.0 and 1.2 */
	CHECK(fabs(s.fast_p_eager[4] - 0.2) < 1e-12);   /* > 2x: 3.0 */
	CHECK(fabs(s.fast_p_compile[0] - 0.4) < 1e-12);
	CHECK(fabs(s.fast_p_compile[2] - 0.2) < 1e-12); /* > 1x: 1.5 only */
	CHECK(fabs(s.fast_p_compile[3] - 0.0) < 1e-12); /* > 1.5x: none (1.5 is not > 1.5) */
	CHECK(fabs(s.geomean_eager - cbrt(3.0 * 1.2 * 0.4)) < 1e-12);
	CHECK(fabs(s.geomean_compile - sqrt(1.5 * 0.3)) < 1e-12);
	CHECK(fabs(s.fast_p[0] - 0.8) < 1e-12); /* the baseline's figure is unchanged */
	/* a suite without --torch: no figures, none asked */
	for (int i = 0; i < 5; i++)
		t[i].torch = 0, t[i].torch_speedup = t[i].compile_speedup = -1;
	suite_summarize(t, 5, &s);
	CHECK_INT(s.n_torch, 0);
	CHECK(s.fast_p_eager[0] == 0 && s.geomean_eager == 0);
}

/* a suite.db made before the PyTorch columns gets them on open; rows keep what they had */
TEST(suite_store_torch_columns)
{
	char *err = NULL;
	char *dir = xasprintf("%s/old", test_tmpdir());
	CHECK_INT(mkdir_p(dir), 0);
	char *db = xasprintf("%s/suite.db", dir);
	char *cmd = xasprintf("sqlite3 '%s' \"CREATE TABLE tasks (id INTEGER PRIMARY KEY, spec TEXT "
			      "NOT NULL, run_dir TEXT NOT NULL, status TEXT NOT NULL DEFAULT "
			      "'pending', attempts INTEGER NOT NULL DEFAULT 0, worker TEXT, gpu "
			      "INTEGER NOT NULL DEFAULT -1, exit_code INTEGER NOT NULL DEFAULT -1, "
			      "wall_s REAL NOT NULL DEFAULT 0, started REAL NOT NULL DEFAULT 0, "
			      "finished REAL NOT NULL DEFAULT 0, correct INTEGER NOT NULL DEFAULT 0, "
			      "best_ms REAL NOT NULL DEFAULT -1, best_speedup REAL NOT NULL DEFAULT "
			      "-1, best_roof REAL NOT NULL DEFAULT -1, message TEXT); INSERT INTO "
			      "tasks (id, spec, run_dir, status, correct, best_speedup) VALUES (0, "
			      "'a', 'd/000-a', 'done', 1, 2.5);\"", db);
	CHECK_INT(system(cmd), 0);
	struct suite_store *ss = suite_open(dir, &err);
	CHECK(ss);
	struct suite_task *rows;
	size_t n;
	CHECK_INT(suite_rows(ss, &rows, &n, &err), 0);
	CHECK_INT(n, 1);
	CHECK(fabs(rows[0].best_speedup - 2.5) < 1e-12);
	CHECK_INT(rows[0].torch, 0);
	CHECK(rows[0].torch_speedup < 0 && rows[0].compile_speedup < 0 && !rows[0].torch_error);
	rows[0].torch = 1;
	rows[0].torch_speedup = 1.25;
	rows[0].torch_error = xstrdup("torch.compile: BackendCompilerFailed");
	CHECK_INT(suite_task_finish(ss, &rows[0], &err), 0);
	suite_rows_free(rows, n);
	suite_close(ss);
	ss = suite_open(dir, &err); /* opening again adds nothing twice */
	CHECK(ss);
	CHECK_INT(suite_rows(ss, &rows, &n, &err), 0);
	CHECK_INT(rows[0].torch, 1);
	CHECK(fabs(rows[0].torch_speedup - 1.25) < 1e-12);
	CHECK(rows[0].compile_speedup < 0);
	CHECK_STR(rows[0].torch_error, "torch.compile: BackendCompilerFailed");
	/* the result file of a remote worker carries them too */
	rows[0].id = 5;
	CHECK_INT(suite_result_write(dir, &rows[0], &err), 0);
	struct suite_task back;
	suite_task_init(&back);
	CHECK_INT(suite_result_read(dir, 5, &back, &err), 0);
	CHECK_INT(back.torch, 1);
	CHECK(fabs(back.torch_speedup - 1.25) < 1e-12);
	CHECK_STR(back.torch_error, "torch.compile: BackendCompilerFailed");
	suite_task_release(&back);
	suite_rows_free(rows, n);
	suite_close(ss);
	free(cmd);
	free(db);
	free(dir);
}

/* run.db's torch_json read back: figures, and why one is missing */
TEST(store_torch_figures_parse)
{
	struct store_torch t;
	store_torch_parse(NULL, &t);
	CHECK_INT(t.asked, 0);
	CHECK(t.speedup_eager < 0);
	store_torch_parse("{\"eager_ms\": 0.03, \"speedup_vs_torch\": 3, \"compile_mode\": "
			  "\"default\", \"compile_error\": \"BackendCompilerFailed\"}", &t);
	CHECK_INT(t.asked, 1);
	CHECK(fabs(t.speedup_eager - 3) < 1e-12 && t.speedup_compile < 0);
	CHECK_STR(t.compile_error, "BackendCompilerFailed");
	CHECK_STR(t.error, "");
	store_torch_parse("{\"error\": \"no torch: No module named 'torch'\"}", &t);
	CHECK_STR(t.error, "no torch: No module named 'torch'");
	CHECK_STR(t.compile_error, "no torch: No module named 'torch'");
	store_torch_parse("not json", &t);
	CHECK(t.asked && t.error[0]);
}

TEST(suite_store_roundtrip_and_requeue)
{
	char *err = NULL;
	struct suite_store *ss = suite_open(test_tmpdir(), &err);
	CHECK(ss);
	CHECK_INT(suite_add_task(ss, 0, "kb1/19_relu", "d/000-kb1_19_relu", &err), 0);
	CHECK_INT(suite_add_task(ss, 1, "kb1/20", "d/001", &err), 0);
	CHECK_INT(suite_add_task(ss, 0, "kb1/19_relu", "d/000-kb1_19_relu", &err), 0);
	CHECK_INT(suite_add_task(ss, 1, "other", "d/001", &err), -1); /* the suite changed */
	free(err);
	err = NULL;
	CHECK_INT(suite_task_start(ss, 0, "gpu0", 0, &err), 0);
	CHECK_INT(suite_task_start(ss, 1, "gpu1", 1, &err), 0);
	struct suite_task r;
	suite_task_init(&r);
	r.id = 0;
	r.status = "done";
	r.exit_code = 0;
	r.correct = 1;
	r.best_speedup = 1.5;
	CHECK_INT(suite_task_finish(ss, &r, &err), 0);
	int requeued = -1;
	/* task 1 was left running: a dead driver's; it fails, then is re-queued (1 < 2 attempts) */
	CHECK_INT(suite_requeue(ss, 2, &requeued, &err), 0);
	CHECK_INT(requeued, 1);
	struct suite_task *rows;
	size_t n;
	CHECK_INT(suite_rows(ss, &rows, &n, &err), 0);
	CHECK_INT(n, 2);
	CHECK_STR(rows[0].status, "done");
	CHECK(fabs(rows[0].best_speedup - 1.5) < 1e-12);
	CHECK_STR(rows[1].status, "pending");
	CHECK_INT(rows[1].attempts, 1);
	suite_rows_free(rows, n);
	CHECK_INT(suite_task_start(ss, 1, "gpu1", 1, &err), 0);
	CHECK_INT(suite_requeue(ss, 2, &requeued, &err), 0);
	CHECK_INT(requeued, 0); /* 2 attempts spent: it stays failed */
	suite_close(ss);
}

TEST(suite_result_file_roundtrip)
{
	char *err = NULL;
	struct suite_task t, back;
	suite_task_init(&t);
	suite_task_init(&back);
	t.id = 7;
	t.status = "failed";
	t.exit_code = 137;
	t.message = "killed by signal 9";
	CHECK_INT(suite_result_read(test_tmpdir(), 7, &back, &err), 1);
	CHECK_INT(suite_result_write(test_tmpdir(), &t, &err), 0);
	CHECK_INT(suite_result_read(test_tmpdir(), 7, &back, &err), 0);
	CHECK_STR(back.status, "failed");
	CHECK_INT(back.exit_code, 137);
	CHECK_STR(back.message, "killed by signal 9");
	suite_task_release(&back);
	test_write_file("results/8.json", "{\"id\": 9, \"status\": \"done\"}");
	CHECK_INT(suite_result_read(test_tmpdir(), 8, &back, &err), -1);
	free(err);
}

TEST(suite_run_dir_names)
{
	char *a = suite_run_dir_name(3, "kb1/19_relu");
	CHECK_STR(a, "003-kb1_19_relu");
	free(a);
	a = suite_run_dir_name(12, "/x/y/my task$.json");
	CHECK_STR(a, "012-mytask");
	free(a);
}

TEST(slurm_parse_states_of_an_array)
{
	const char *out = "1234_0|COMPLETED\n1234_0.batch|COMPLETED\n1234_1|CANCELLED by 0\n"
			  "1234_[2-3,5%2]|PENDING\n999_4|FAILED\n1234_4|NODE_FAIL\n"
			  "1234_77|FAILED\ngarbage\n1234_6|REQUEUED\n";
	char st[7][SLURM_STATE_MAX] = { "" };
	int set = slurm_parse_states(out, strlen(out), "1234", 7, st);
	CHECK_INT(set, 7);
	CHECK_STR(st[0], "COMPLETED");
	CHECK_STR(st[1], "CANCELLED by 0");
	CHECK_STR(st[2], "PENDING");
	CHECK_STR(st[3], "PENDING");
	CHECK_STR(st[4], "NODE_FAIL");
	CHECK_STR(st[5], "PENDING");
	CHECK_STR(st[6], "REQUEUED");
	CHECK_INT(slurm_class(st[0]), SLURM_COMPLETED);
	CHECK_INT(slurm_class(st[1]), SLURM_FAILED);
	CHECK_INT(slurm_class(st[4]), SLURM_LOST);
	CHECK_INT(slurm_class("PREEMPTED"), SLURM_LOST);
	CHECK_INT(slurm_class(st[6]), SLURM_ACTIVE);
	CHECK_INT(slurm_class(""), SLURM_UNSEEN);
	/* a state longer than the field is cut, not overflowed */
	char big[300];
	snprintf(big, sizeof(big), "1234_0|%0200d\n", 0);
	CHECK_INT(slurm_parse_states(big, strlen(big), "1234", 1, st), 1);
	CHECK_INT(strlen(st[0]), SLURM_STATE_MAX - 1);
}

TEST(slurm_parse_job_ids)
{
	char job[SLURM_JOB_MAX];
	CHECK_INT(slurm_parse_job_id("4242\n", job), 0);
	CHECK_STR(job, "4242");
	CHECK_INT(slurm_parse_job_id("17;cluster\n", job), 0);
	CHECK_STR(job, "17");
	CHECK_INT(slurm_parse_job_id("sbatch: error: x", job), -1);
	CHECK_INT(slurm_parse_job_id("", job), -1);
}
