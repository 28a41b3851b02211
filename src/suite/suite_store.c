/*
 * The suite store (suite.db) and the suite's aggregate (fast_p, geometric means). See suite_store.h.
 * Not for: running workers or Slurm (engine.h: pool.c, slurm_array.c).
 */
#include "suite/suite_store.h"
#include "store/store.h"
#include "util/fsutil.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define RESULT_MAX (64 * 1024)

const double suite_fast_p_thresholds[SUITE_FAST_P_N] = { 0, 0.5, 1, 1.5, 2, 3 };

struct suite_store {
	sqlite3 *db;
	char *path;
};

static const char schema[] =
	"CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);"
	"CREATE TABLE IF NOT EXISTS tasks ("
	" id INTEGER PRIMARY KEY, spec TEXT NOT NULL, run_dir TEXT NOT NULL,"
	" status TEXT NOT NULL DEFAULT 'pending', attempts INTEGER NOT NULL DEFAULT 0,"
	" worker TEXT, gpu INTEGER NOT NULL DEFAULT -1, exit_code INTEGER NOT NULL DEFAULT -1,"
	" wall_s REAL NOT NULL DEFAULT 0, started REAL NOT NULL DEFAULT 0,"
	" finished REAL NOT NULL DEFAULT 0, correct INTEGER NOT NULL DEFAULT 0,"
	" best_ms REAL NOT NULL DEFAULT -1, best_speedup REAL NOT NULL DEFAULT -1,"
	" best_roof REAL NOT NULL DEFAULT -1, message TEXT, torch INTEGER NOT NULL DEFAULT 0,"
	" torch_speedup REAL NOT NULL DEFAULT -1, compile_speedup REAL NOT NULL DEFAULT -1,"
	" torch_error TEXT);"
	"CREATE TABLE IF NOT EXISTS sessions (id INTEGER PRIMARY KEY, mode TEXT, started REAL,"
	" wall_s REAL NOT NULL DEFAULT 0);"
	"CREATE TABLE IF NOT EXISTS workers (session INTEGER NOT NULL, worker TEXT NOT NULL,"
	" busy_s REAL NOT NULL DEFAULT 0, tasks INTEGER NOT NULL DEFAULT 0,"
	" PRIMARY KEY (session, worker));";

static double unix_now(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return tv.tv_sec + tv.tv_usec / 1e6;
}

static int db_fail(struct suite_store *ss, const char *what, char **err)
{
	*err = xasprintf("suite store '%s': %s: %s", ss->path, what, sqlite3_errmsg(ss->db));
	return -1;
}

void suite_task_init(struct suite_task *t)
{
	memset(t, 0, sizeof(*t));
	t->id = -1;
	t->gpu = -1;
	t->exit_code = -1;
	t->best_ms = t->best_speedup = t->best_roof = -1;
	t->torch_speedup = t->compile_speedup = -1;
}

void suite_task_release(struct suite_task *t)
{
	free(t->spec);
	free(t->run_dir);
	free(t->status);
	free(t->worker);
	free(t->message);
	free(t->torch_error);
	long id = t->id;
	suite_task_init(t);
	t->id = id;
}

struct suite_store *suite_open(const char *suite_dir, char **err)
{
	if (mkdir_p(suite_dir)) {
		*err = xasprintf("cannot create suite directory '%s': %s", suite_dir, strerror(errno));
		return NULL;
	}
	struct suite_store *ss = xcalloc(1, sizeof(*ss));
	ss->path = xasprintf("%s/suite.db", suite_dir);
	if (sqlite3_open_v2(ss->path, &ss->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
	    SQLITE_OK) {
		db_fail(ss, "cannot open", err);
		suite_close(ss);
		return NULL;
	}
	sqlite3_busy_timeout(ss->db, 5000);
	char *msg = NULL;
	if (sqlite3_exec(ss->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", NULL, NULL,
			 NULL) != SQLITE_OK ||
	    sqlite3_exec(ss->db, schema, NULL, NULL, &msg) != SQLITE_OK) {
		*err = xasprintf("suite store '%s': cannot create its tables: %s", ss->path,
				 msg ? msg : sqlite3_errmsg(ss->db));
		sqlite3_free(msg);
		suite_close(ss);
		return NULL;
	}
	/* a suite.db from before `--torch` figures: their columns added (the rows keep theirs) */
	sqlite3_stmt *probe = NULL;
	if (sqlite3_prepare_v2(ss->db, "SELECT torch_error FROM tasks LIMIT 0", -1, &probe, NULL) !=
	    SQLITE_OK &&
	    sqlite3_exec(ss->db, "BEGIN;"
			 "ALTER TABLE tasks ADD COLUMN torch INTEGER NOT NULL DEFAULT 0;"
			 "ALTER TABLE tasks ADD COLUMN torch_speedup REAL NOT NULL DEFAULT -1;"
			 "ALTER TABLE tasks ADD COLUMN compile_speedup REAL NOT NULL DEFAULT -1;"
			 "ALTER TABLE tasks ADD COLUMN torch_error TEXT; COMMIT;", NULL, NULL,
			 &msg) != SQLITE_OK) {
		*err = xasprintf("suite store '%s': cannot add the PyTorch columns: %s", ss->path,
				 msg ? msg : sqlite3_errmsg(ss->db));
		sqlite3_free(msg);
		sqlite3_finalize(probe);
		suite_close(ss);
		return NULL;
	}
	sqlite3_finalize(probe);
	return ss;
}

void suite_close(struct suite_store *ss)
{
	if (!ss)
		return;
	sqlite3_close(ss->db);
	free(ss->path);
	free(ss);
}

static sqlite3_stmt *prep(struct suite_store *ss, const char *sql, char **err)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(ss->db, sql, -1, &st, NULL) != SQLITE_OK) {
		db_fail(ss, sql, err);
		return NULL;
	}
	return st;
}

/* Steps a prepared statement to its end and finalizes it. */
static int run_stmt(struct suite_store *ss, sqlite3_stmt *st, const char *what, char **err)
{
	int rc = sqlite3_step(st);
	int ret = 0;
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		ret = db_fail(ss, what, err);
	sqlite3_finalize(st);
	return ret;
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

int suite_meta_set(struct suite_store *ss, const char *key, const char *value, char **err)
{
	sqlite3_stmt *st = prep(ss, value ? "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)"
					  : "DELETE FROM meta WHERE key = ?", err);
	if (!st)
		return -1;
	bind_text(st, 1, key);
	if (value)
		bind_text(st, 2, value);
	return run_stmt(ss, st, "cannot write a setting", err);
}

char *suite_meta_get(struct suite_store *ss, const char *key)
{
	char *err = NULL;
	sqlite3_stmt *st = prep(ss, "SELECT value FROM meta WHERE key = ?", &err);
	free(err);
	if (!st)
		return NULL;
	bind_text(st, 1, key);
	char *v = NULL;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		v = xstrdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return v;
}

int suite_add_task(struct suite_store *ss, long id, const char *spec, const char *run_dir,
		   char **err)
{
	sqlite3_stmt *st = prep(ss, "SELECT spec FROM tasks WHERE id = ?", err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) == SQLITE_ROW) {
		const char *have = (const char *)sqlite3_column_text(st, 0);
		int same = have && !strcmp(have, spec);
		if (!same)
			*err = xasprintf("suite store '%s' has task %ld as '%s', not '%s': the suite "
					 "changed; use another --out directory", ss->path, id,
					 have ? have : "", spec);
		sqlite3_finalize(st);
		return same ? 0 : -1;
	}
	sqlite3_finalize(st);
	st = prep(ss, "INSERT INTO tasks (id, spec, run_dir) VALUES (?, ?, ?)", err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	bind_text(st, 2, spec);
	bind_text(st, 3, run_dir);
	return run_stmt(ss, st, "cannot add a task", err);
}

static char *col_str(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);
	return s ? xstrdup((const char *)s) : NULL;
}

int suite_rows(struct suite_store *ss, struct suite_task **out, size_t *n, char **err)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *st = prep(ss, "SELECT id, spec, run_dir, status, attempts, worker, gpu, "
				"exit_code, wall_s, started, finished, correct, best_ms, best_speedup, "
				"best_roof, message, torch, torch_speedup, compile_speedup, torch_error FROM tasks "
				"ORDER BY id", err);
	if (!st)
		return -1;
	size_t alloc = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ALLOC_GROW(*out, *n + 1, alloc);
		struct suite_task *t = &(*out)[(*n)++];
		suite_task_init(t);
		t->id = sqlite3_column_int64(st, 0);
		t->spec = col_str(st, 1);
		t->run_dir = col_str(st, 2);
		t->status = col_str(st, 3);
		t->attempts = sqlite3_column_int(st, 4);
		t->worker = col_str(st, 5);
		t->gpu = sqlite3_column_int(st, 6);
		t->exit_code = sqlite3_column_int(st, 7);
		t->wall_s = sqlite3_column_double(st, 8);
		t->started = sqlite3_column_double(st, 9);
		t->finished = sqlite3_column_double(st, 10);
		t->correct = sqlite3_column_int(st, 11);
		t->best_ms = sqlite3_column_double(st, 12);
		t->best_speedup = sqlite3_column_double(st, 13);
		t->best_roof = sqlite3_column_double(st, 14);
		t->message = col_str(st, 15);
		t->torch = sqlite3_column_int(st, 16);
		t->torch_speedup = sqlite3_column_double(st, 17);
		t->compile_speedup = sqlite3_column_double(st, 18);
		t->torch_error = col_str(st, 19);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		suite_rows_free(*out, *n);
		*out = NULL;
		*n = 0;
		return db_fail(ss, "cannot read the tasks", err);
	}
	return 0;
}

void suite_rows_free(struct suite_task *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		suite_task_release(&t[i]);
	free(t);
}

int suite_failure_is_permanent(const struct suite_task *t)
{
	/* `cutegen run`'s exit codes for bad usage (2), bad input (3) and what the machine lacks
	 * (4: no GPU, no recorded evaluation, no nvcc): the same run fails the same way again */
	return t->status && !strcmp(t->status, "failed") &&
	       (t->exit_code == 2 || t->exit_code == 3 || t->exit_code == 4);
}

static int requeue(struct suite_store *ss, int max_attempts, int transient_only, int *requeued,
		   char **err);

int suite_requeue(struct suite_store *ss, int max_attempts, int *requeued, char **err)
{
	return requeue(ss, max_attempts, 0, requeued, err);
}

int suite_requeue_transient(struct suite_store *ss, int max_attempts, int *requeued, char **err)
{
	return requeue(ss, max_attempts, 1, requeued, err);
}

static int requeue(struct suite_store *ss, int max_attempts, int transient_only, int *requeued,
		   char **err)
{
	*requeued = 0;
	char *msg = NULL;
	if (sqlite3_exec(ss->db, "UPDATE tasks SET status = 'failed', message = 'interrupted: its "
			 "driver stopped while it ran' WHERE status = 'running'", NULL, NULL, &msg) !=
	    SQLITE_OK) {
		*err = xasprintf("suite store '%s': %s", ss->path, msg);
		sqlite3_free(msg);
		return -1;
	}
	sqlite3_stmt *st = prep(ss, transient_only
				    ? "UPDATE tasks SET status = 'pending' WHERE status = 'failed' "
				      "AND attempts < ? AND exit_code NOT IN (2, 3, 4)"
				    : "UPDATE tasks SET status = 'pending' WHERE status = 'failed' "
				      "AND attempts < ?", err);
	if (!st)
		return -1;
	sqlite3_bind_int(st, 1, max_attempts);
	if (run_stmt(ss, st, "cannot re-queue tasks", err))
		return -1;
	*requeued = sqlite3_changes(ss->db);
	return 0;
}

int suite_task_start(struct suite_store *ss, long id, const char *worker, int gpu, char **err)
{
	sqlite3_stmt *st = prep(ss, "UPDATE tasks SET status = 'running', attempts = attempts + 1, "
				"worker = ?, gpu = ?, started = ?, finished = 0, exit_code = -1, "
				"message = NULL WHERE id = ?", err);
	if (!st)
		return -1;
	bind_text(st, 1, worker);
	sqlite3_bind_int(st, 2, gpu);
	sqlite3_bind_double(st, 3, unix_now());
	sqlite3_bind_int64(st, 4, id);
	return run_stmt(ss, st, "cannot start a task", err);
}

int suite_task_finish(struct suite_store *ss, const struct suite_task *t, char **err)
{
	sqlite3_stmt *st = prep(ss, "UPDATE tasks SET status = ?, exit_code = ?, wall_s = ?, "
				"finished = ?, correct = ?, best_ms = ?, best_speedup = ?, "
				"best_roof = ?, message = ?, worker = coalesce(?, worker), "
				"started = CASE WHEN ? > 0 THEN ? ELSE started END, torch = ?, "
				"torch_speedup = ?, compile_speedup = ?, torch_error = ? WHERE id = ?", err);
	if (!st)
		return -1;
	bind_text(st, 1, t->status ? t->status : "failed");
	sqlite3_bind_int(st, 2, t->exit_code);
	sqlite3_bind_double(st, 3, t->wall_s);
	sqlite3_bind_double(st, 4, t->finished > 0 ? t->finished : unix_now());
	sqlite3_bind_int(st, 5, t->correct);
	sqlite3_bind_double(st, 6, t->best_ms);
	sqlite3_bind_double(st, 7, t->best_speedup);
	sqlite3_bind_double(st, 8, t->best_roof);
	bind_text(st, 9, t->message);
	bind_text(st, 10, t->worker);
	sqlite3_bind_double(st, 11, t->started);
	sqlite3_bind_double(st, 12, t->started);
	sqlite3_bind_int(st, 13, t->torch);
	sqlite3_bind_double(st, 14, t->torch_speedup);
	sqlite3_bind_double(st, 15, t->compile_speedup);
	bind_text(st, 16, t->torch_error);
	sqlite3_bind_int64(st, 17, t->id);
	return run_stmt(ss, st, "cannot finish a task", err);
}

int suite_session_begin(struct suite_store *ss, long *session, const char *mode, char **err)
{
	sqlite3_stmt *st = prep(ss, "INSERT INTO sessions (mode, started) VALUES (?, ?)", err);
	if (!st)
		return -1;
	bind_text(st, 1, mode);
	sqlite3_bind_double(st, 2, unix_now());
	if (run_stmt(ss, st, "cannot begin a session", err))
		return -1;
	*session = (long)sqlite3_last_insert_rowid(ss->db);
	return 0;
}

int suite_session_end(struct suite_store *ss, long session, double wall_s, char **err)
{
	sqlite3_stmt *st = prep(ss, "UPDATE sessions SET wall_s = ? WHERE id = ?", err);
	if (!st)
		return -1;
	sqlite3_bind_double(st, 1, wall_s);
	sqlite3_bind_int64(st, 2, session);
	return run_stmt(ss, st, "cannot end a session", err);
}

int suite_add_busy(struct suite_store *ss, long session, const char *worker, double busy_s,
		   int tasks, char **err)
{
	sqlite3_stmt *st = prep(ss, "INSERT INTO workers (session, worker, busy_s, tasks) "
				"VALUES (?, ?, ?, ?) ON CONFLICT (session, worker) DO UPDATE SET "
				"busy_s = busy_s + excluded.busy_s, tasks = tasks + excluded.tasks",
				err);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, session);
	bind_text(st, 2, worker);
	sqlite3_bind_double(st, 3, busy_s);
	sqlite3_bind_int(st, 4, tasks);
	return run_stmt(ss, st, "cannot record busy time", err);
}

int suite_read_run(const char *run_dir, struct suite_task *t, char **err)
{
	char *db = xasprintf("%s/run.db", run_dir);
	int exists = file_exists(db);
	free(db);
	if (!exists) {
		*err = xasprintf("run directory '%s' has no run store", run_dir);
		return -1;
	}
	struct store_run run = { 0 };
	struct store_node *nodes = NULL;
	size_t n = 0;
	int rc = -1;
	struct store *s = store_open(run_dir, STORE_READONLY, err);
	if (!s)
		goto out;
	if (store_run_get(s, &run, err) || store_nodes(s, &nodes, &n, err))
		goto out;
	t->correct = 0;
	t->best_ms = t->best_speedup = t->best_roof = -1;
	for (size_t i = 0; i < n; i++)
		if (nodes[i].id == run.best_node && run.best_node > 0) {
			t->correct = 1;
			t->best_ms = nodes[i].ms;
			t->best_speedup = nodes[i].speedup;
			t->best_roof = nodes[i].roofline_fraction;
		}
	struct store_torch tf;
	store_torch_parse(run.torch_json, &tf);
	t->torch = tf.asked;
	t->torch_speedup = t->correct ? tf.speedup_eager : -1;
	t->compile_speedup = t->correct ? tf.speedup_compile : -1;
	free(t->torch_error);
	t->torch_error = NULL;
	if (tf.asked && t->correct && tf.speedup_eager < 0)
		t->torch_error = xasprintf("PyTorch eager: %s", tf.error);
	else if (tf.asked && t->correct && tf.speedup_compile < 0)
		t->torch_error = xasprintf("torch.compile: %s", tf.compile_error);
	if (!t->message && run.stop_reason)
		t->message = xstrdup(run.stop_reason);
	rc = 0;
out:
	store_nodes_free(nodes, n);
	store_run_release(&run);
	store_close(s);
	return rc;
}

static char *result_path(const char *suite_dir, long id)
{
	return xasprintf("%s/results/%ld.json", suite_dir, id);
}

int suite_result_write(const char *suite_dir, const struct suite_task *t, char **err)
{
	char *dir = xasprintf("%s/results", suite_dir);
	char *path = result_path(suite_dir, t->id);
	json_t *o = json_pack("{s:I, s:s?, s:s, s:i, s:s?, s:i, s:f, s:f, s:f, s:b, s:f, s:f, s:f, "
			      "s:s?, s:b, s:f, s:f, s:s?}", "id", (json_int_t)t->id, "spec", t->spec, "status",
			      t->status ? t->status : "failed", "exit_code", t->exit_code,
			      "worker", t->worker, "gpu", t->gpu, "wall_s", t->wall_s, "started",
			      t->started, "finished", t->finished, "correct", t->correct,
			      "best_ms", t->best_ms, "best_speedup", t->best_speedup, "best_roof",
			      t->best_roof, "message", t->message, "torch", t->torch, "torch_speedup",
			      t->torch_speedup, "compile_speedup", t->compile_speedup, "torch_error",
			      t->torch_error);
	char *txt = o ? json_dumps(o, JSON_COMPACT) : NULL;
	int rc = -1;
	if (!txt) {
		*err = xasprintf("cannot encode the result of task %ld", t->id);
		goto out;
	}
	if (mkdir_p(dir) || write_file_atomic(path, txt, strlen(txt))) {
		*err = xasprintf("cannot write '%s': %s", path, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	free(txt);
	if (o)
		json_decref(o);
	free(dir);
	free(path);
	return rc;
}

static double jnum(json_t *o, const char *k, double dflt)
{
	json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : dflt;
}

static char *jstrdup(json_t *o, const char *k, size_t cap)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? xstrndup(s, cap) : NULL;
}

int suite_result_read(const char *suite_dir, long id, struct suite_task *t, char **err)
{
	char *path = result_path(suite_dir, id);
	struct strbuf sb = STRBUF_INIT;
	json_t *o = NULL;
	int rc = -1;
	int r = strbuf_read_file(&sb, path, RESULT_MAX);
	if (r == CG_INPUT && errno == ENOENT) {
		rc = 1;
		goto out;
	}
	if (r) {
		*err = xasprintf(r == CG_INPUT_TOOBIG ? "result file '%s' is larger than 64 KiB"
					 : "cannot read result file '%s'", path);
		goto out;
	}
	o = json_loadb(sb.buf, sb.len, 0, NULL);
	const char *status = json_string_value(json_object_get(o, "status"));
	if (!json_is_object(o) || !status || (strcmp(status, "done") && strcmp(status, "failed")) ||
	    jnum(o, "id", -1) != id) {
		*err = xasprintf("result file '%s' is damaged (not a result of task %ld)", path, id);
		goto out;
	}
	suite_task_release(t);
	t->id = id;
	t->status = xstrdup(status);
	t->spec = jstrdup(o, "spec", 4096);
	t->worker = jstrdup(o, "worker", 256);
	t->message = jstrdup(o, "message", 4096);
	t->exit_code = (int)jnum(o, "exit_code", -1);
	t->gpu = (int)jnum(o, "gpu", -1);
	t->wall_s = jnum(o, "wall_s", 0);
	t->started = jnum(o, "started", 0);
	t->finished = jnum(o, "finished", 0);
	t->correct = json_is_true(json_object_get(o, "correct"));
	t->best_ms = jnum(o, "best_ms", -1);
	t->best_speedup = jnum(o, "best_speedup", -1);
	t->best_roof = jnum(o, "best_roof", -1);
	t->torch = json_is_true(json_object_get(o, "torch"));
	t->torch_speedup = jnum(o, "torch_speedup", -1);
	t->compile_speedup = jnum(o, "compile_speedup", -1);
	t->torch_error = jstrdup(o, "torch_error", 4096);
	rc = 0;
out:
	if (o)
		json_decref(o);
	strbuf_release(&sb);
	free(path);
	return rc;
}

void suite_summarize(const struct suite_task *t, size_t n, struct suite_summary *s)
{
	memset(s, 0, sizeof(*s));
	double log_sp = 0, log_roof = 0, log_eager = 0, log_compile = 0;
	int fast[SUITE_FAST_P_N] = { 0 }, fast_eager[SUITE_FAST_P_N] = { 0 },
	    fast_compile[SUITE_FAST_P_N] = { 0 };
	for (size_t i = 0; i < n; i++) {
		s->tasks++;
		const char *st = t[i].status ? t[i].status : "";
		if (!strcmp(st, "done"))
			s->done++;
		else if (!strcmp(st, "failed"))
			s->failed++;
		else if (!strcmp(st, "running"))
			s->running++;
		else
			s->pending++;
		s->n_torch += t[i].torch;
		if (strcmp(st, "done") || !t[i].correct)
			continue;
		s->correct++;
		/* against PyTorch: only a figure counts (p = 0 too: correct and compared) */
		double se = t[i].torch_speedup, sc = t[i].compile_speedup;
		for (int p = 0; p < SUITE_FAST_P_N; p++) {
			fast_eager[p] += se > 0 && se > suite_fast_p_thresholds[p];
			fast_compile[p] += sc > 0 && sc > suite_fast_p_thresholds[p];
		}
		if (se > 0) {
			log_eager += log(se);
			s->n_eager++;
		}
		if (sc > 0) {
			log_compile += log(sc);
			s->n_compile++;
		}
		double sp = t[i].best_speedup;
		for (int p = 0; p < SUITE_FAST_P_N; p++)
			if (p == 0 || sp > suite_fast_p_thresholds[p])
				fast[p]++;
		if (sp > 0) {
			log_sp += log(sp);
			s->n_speedup++;
		}
		if (t[i].best_roof > 0) {
			log_roof += log(t[i].best_roof);
			s->n_roof++;
		}
	}
	for (int p = 0; p < SUITE_FAST_P_N; p++) {
		s->fast_p[p] = s->tasks ? (double)fast[p] / s->tasks : 0;
		s->fast_p_eager[p] = s->tasks ? (double)fast_eager[p] / s->tasks : 0;
		s->fast_p_compile[p] = s->tasks ? (double)fast_compile[p] / s->tasks : 0;
	}
	s->geomean_eager = s->n_eager ? exp(log_eager / s->n_eager) : 0;
	s->geomean_compile = s->n_compile ? exp(log_compile / s->n_compile) : 0;
	s->geomean_speedup = s->n_speedup ? exp(log_sp / s->n_speedup) : 0;
	s->geomean_roof = s->n_roof ? exp(log_roof / s->n_roof) : 0;
}

char *suite_run_dir_name(long id, const char *spec)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "%03ld-", id);
	size_t len = strlen(spec);
	if (len > 5 && !strcmp(spec + len - 5, ".json")) {
		/* a task file: its base name */
		len -= 5;
		const char *slash = memrchr(spec, '/', len);
		if (slash) {
			len -= (size_t)(slash + 1 - spec);
			spec = slash + 1;
		}
	}
	for (size_t i = 0; i < len && sb.len < 84; i++) {
		char c = spec[i];
		if (c == '/')
			c = '_';
		else if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			   c == '.' || c == '-' || c == '_'))
			continue;
		strbuf_addch(&sb, c);
	}
	return strbuf_detach(&sb, NULL);
}
