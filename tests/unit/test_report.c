/* Unit tests of the report renderers (escaping, highlighting, fast_p), the store's v1 -> v2
 * migration (the profile column), and how the store opens a run: one writer at a time (the
 * run's lock), readers that never write, stores that are empty or damaged. */
#include "test.h"

#include "store/history.h"
#include "report/report.h"
#include "store/store.h"
#include "util/err.h"
#include "util/fsutil.h"
#include "util/sha256.h"
#include "util/xalloc.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

TEST(report_html_escape_caps)
{
	struct strbuf sb = STRBUF_INIT;
	report_html_escape(&sb, "<script>&\"'\x1b", 100);
	CHECK_STR(sb.buf, "&lt;script&gt;&amp;&quot;&#39; ");
	strbuf_reset(&sb);
	report_html_escape(&sb, "abcdef", 3);
	CHECK_STR(sb.buf, "abc...");
	strbuf_reset(&sb);
	report_text_clean(&sb, "a|b\x1b[31mc\n", 100);
	CHECK_STR(sb.buf, "a b [31mc ");
	strbuf_release(&sb);
}

TEST(report_highlight_spans_and_escapes)
{
	struct strbuf sb = STRBUF_INIT;
	report_highlight_cuda(&sb, "#include <cute/tensor.hpp>\n__global__ void k() { // a<b\n"
				   "\tconst char *s = \"<x>\"; int n = 0x10 + 1.5e-3f; /* c */ }\n");
	CHECK_HAS(sb.buf, "<span class=\"pp\">#include &lt;cute/tensor.hpp&gt;</span>");
	CHECK_HAS(sb.buf, "<span class=\"kw\">__global__</span>");
	CHECK_HAS(sb.buf, "<span class=\"cm\">// a&lt;b</span>");
	CHECK_HAS(sb.buf, "<span class=\"st\">&quot;&lt;x&gt;&quot;</span>");
	CHECK_HAS(sb.buf, "<span class=\"nu\">0x10</span>");
	CHECK_HAS(sb.buf, "<span class=\"nu\">1.5e-3f</span>");
	CHECK_HAS(sb.buf, "<span class=\"cm\">/* c */</span>");
	CHECK(!strstr(sb.buf, "<x>"));
	strbuf_release(&sb);
}

TEST(report_fast_p_counts_correct_and_faster)
{
	double sp[] = { 1.5, 0.8, -1, 3.2 };
	CHECK(report_fast_p(sp, 4, 0) == 0.75);
	CHECK(report_fast_p(sp, 4, 1) == 0.5);
	CHECK(report_fast_p(sp, 4, 3) == 0.25);
	CHECK(report_fast_p(sp, 0, 1) == 0);
}

/* A task with a correct kernel says nothing in "why it failed", unless the suite marked it
 * failed (stopped at the suite's interruption): then the suite's message, and that its figures
 * are those of its best kernel before the stop. */
TEST(report_task_why_of_a_stopped_task_with_a_kernel)
{
	struct store_node node = { 0 };
	struct run_history h = { 0 };
	h.nodes = &node;
	h.n = 1;
	h.best_node = &node;
	struct report_task t = { .run = &h, .status = "done" };
	struct strbuf sb = STRBUF_INIT;
	report_task_why(&sb, &t);
	CHECK_INT((int)sb.len, 0);
	t.status = "failed";
	t.message = "stopped: the suite was interrupted twice";
	report_task_why(&sb, &t);
	CHECK_STR(sb.buf, "stopped: the suite was interrupted twice (the figures: its best kernel "
			  "before that)");
	strbuf_reset(&sb);
	h.best_node = NULL; /* no correct kernel: the message alone */
	report_task_why(&sb, &t);
	CHECK_STR(sb.buf, "stopped: the suite was interrupted twice");
	strbuf_release(&sb);
}

TEST(store_migrates_v1_to_v2_and_keeps_profiles)
{
	char *dir = xasprintf("%s/run", test_tmpdir());
	char *path = xasprintf("%s/run.db", dir);
	char *err = NULL;
	struct store *s = store_open(dir, STORE_CREATE, &err);
	CHECK(s);
	struct store_run r = { 0 };
	r.task_name = "t/relu";
	r.task_json = "{}";
	CHECK_INT(store_run_begin(s, &r, &err), 0);
	struct store_node n = { 0 };
	n.iteration = 1;
	n.kind = "generate";
	n.verdict = "pass";
	n.outcome = "best";
	n.source = "__global__ void k() {}";
	n.ms = n.speedup = n.roofline_fraction = -1;
	CHECK_INT(store_add_node(s, &n, NULL, &err), 0);
	store_close(s);
	/* make it a version 1 database: no profile column (nor the later cache_write_tokens) */
	sqlite3 *db;
	CHECK_INT(sqlite3_open(path, &db), SQLITE_OK);
	CHECK_INT(sqlite3_exec(db, "ALTER TABLE nodes DROP COLUMN profile_sha; ALTER TABLE llm_calls "
				   "DROP COLUMN cache_write_tokens; "
				   "ALTER TABLE nodes DROP COLUMN compile_ahead_s; "
				   "ALTER TABLE runs DROP COLUMN cut_s; ALTER TABLE runs DROP COLUMN cut_llm_s; "
				   "ALTER TABLE runs DROP COLUMN cut_compile_s; "
				   "ALTER TABLE runs DROP COLUMN cut_eval_s; "
				   "ALTER TABLE runs DROP COLUMN cut_compiles; "
				   "ALTER TABLE runs DROP COLUMN torch_json; UPDATE meta SET "
				   "value = '1' WHERE key = 'schema_version'", NULL, NULL, NULL),
		  SQLITE_OK);
	sqlite3_close(db);
	/* a reader reads the old schema through a migrated copy in memory, and leaves the file
	 * at version 1 */
	struct run_history h;
	CHECK_INT(history_load(&h, dir, &err), 0);
	CHECK_INT(h.n, 1);
	CHECK_STR(h.best_node->source, "__global__ void k() {}");
	history_release(&h);
	CHECK_INT(sqlite3_open(path, &db), SQLITE_OK);
	sqlite3_stmt *st;
	CHECK_INT(sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'schema_version'", -1,
				     &st, NULL), SQLITE_OK);
	CHECK_INT(sqlite3_step(st), SQLITE_ROW);
	CHECK_INT(sqlite3_column_int(st, 0), 1);
	sqlite3_finalize(st);
	sqlite3_close(db);
	s = store_open(dir, STORE_EXISTING, &err);
	CHECK(s);
	CHECK_INT(store_schema_version(s), STORE_SCHEMA_VERSION);
	n = (struct store_node){ 0 };
	n.iteration = 2;
	n.kind = "optimize";
	n.verdict = "pass";
	n.outcome = "slower";
	n.profile = "dram throughput 91% of peak";
	n.ms = n.speedup = n.roofline_fraction = -1;
	CHECK_INT(store_add_node(s, &n, NULL, &err), 0);
	store_close(s);
	CHECK_INT(history_load(&h, dir, &err), 0);
	CHECK_INT(h.n, 2);
	CHECK_INT(h.best, 1);
	CHECK_INT(h.profile_node, 2);
	CHECK_STR(h.profile, "dram throughput 91% of peak");
	CHECK_STR(h.best_node->source, "__global__ void k() {}");
	CHECK(!h.run.torch_json && !h.torch.asked); /* schema 5's column, empty after migrating */
	history_release(&h);
	free(dir);
	free(path);
}

TEST(history_errors_are_clear)
{
	char *err = NULL;
	struct run_history h;
	CHECK_INT(history_load(&h, "/nonexistent/run", &err), -1);
	CHECK_HAS(err, "does not exist");
	free(err);
	history_release(&h);
	char *dir = xasprintf("%s/bad", test_tmpdir());
	CHECK_INT(mkdir_p(dir), 0);
	test_write_file("bad/run.db", "this is not sqlite");
	err = NULL;
	CHECK_INT(history_load(&h, dir, &err), -1);
	CHECK_HAS(err, "not a database");
	free(err);
	history_release(&h);
	free(dir);
}

/* The sha256 of a file's content and its mtime in ns: what a reader must leave as it was. */
static void file_print(const char *path, char sha[65], long long *mtime_ns)
{
	struct strbuf sb = STRBUF_INIT;
	struct stat st;
	sha[0] = 0;
	*mtime_ns = -1;
	if (strbuf_read_file(&sb, path, 64u << 20) == 0)
		sha256_hex(sb.buf, sb.len, sha);
	if (!stat(path, &st))
		*mtime_ns = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
	strbuf_release(&sb);
}

/* A store in dir with a run and one node, closed. */
static int make_run(const char *dir)
{
	char *err = NULL;
	struct store *s = store_open(dir, STORE_CREATE, &err);
	if (!s) {
		free(err);
		return -1;
	}
	struct store_run r = { 0 };
	r.task_name = "t/relu";
	r.task_json = "{}";
	struct store_node n = { 0 };
	n.iteration = 1;
	n.kind = "generate";
	n.verdict = "pass";
	n.outcome = "best";
	n.source = "__global__ void k() {}";
	n.ms = n.speedup = n.roofline_fraction = -1;
	int rc = store_run_begin(s, &r, &err) || store_add_node(s, &n, NULL, &err) ? -1 : 0;
	free(err);
	store_close(s);
	return rc;
}

TEST(store_one_writer_at_a_time)
{
	char *dir = xasprintf("%s/run", test_tmpdir());
	char *err = NULL;
	CHECK_INT(make_run(dir), 0);
	struct store *w = store_open(dir, STORE_EXISTING, &err);
	CHECK(w);
	/* a second writer, resume or run, is refused at once, naming the first one's pid */
	char pid[32];
	snprintf(pid, sizeof(pid), "(pid %ld)", (long)getpid());
	CHECK(!store_open(dir, STORE_EXISTING, &err));
	CHECK_HAS(err, "is in use: another cutegen process");
	CHECK_HAS(err, pid);
	CHECK_HAS(err, "cutegen resume");
	free(err);
	err = NULL;
	CHECK(!store_open(dir, STORE_CREATE, &err));
	CHECK_HAS(err, "is in use");
	free(err);
	err = NULL;
	/* a reader is not a writer: it reads while the run is written */
	struct store *r = store_open(dir, STORE_READONLY, &err);
	CHECK(r);
	struct store_node *nodes = NULL;
	size_t nn = 0;
	CHECK_INT(store_nodes(r, &nodes, &nn, &err), 0);
	CHECK_INT(nn, 1);
	store_nodes_free(nodes, nn);
	/* and cannot write */
	CHECK_INT(store_run_finish(r, "done", "x", 1, &err), -1);
	CHECK_INT(store_error_code(r), CG_IO);
	free(err);
	err = NULL;
	store_close(r);
	/* the lock goes with the writer */
	store_close(w);
	w = store_open(dir, STORE_EXISTING, &err);
	CHECK(w);
	CHECK_INT(store_error_code(w), CG_OK);
	store_close(w);
	free(dir);
}

TEST(store_readers_never_write)
{
	char *dir = xasprintf("%s/run", test_tmpdir());
	char *path = xasprintf("%s/run.db", dir);
	char *err = NULL, sha0[65], sha1[65];
	long long t0, t1;
	CHECK_INT(make_run(dir), 0);
	file_print(path, sha0, &t0);
	struct run_history h;
	CHECK_INT(history_load(&h, dir, &err), 0);
	CHECK_INT(h.n, 1);
	history_release(&h);
	file_print(path, sha1, &t1);
	CHECK_STR(sha1, sha0);
	CHECK_INT(t1, t0);
	/* a finished run is read as it is: no -wal or -shm made beside it */
	char *wal = xasprintf("%s-wal", path), *shm = xasprintf("%s-shm", path);
	CHECK(!file_exists(wal) && !file_exists(shm));
	free(wal);
	free(shm);
	/* an empty file is no run, and stays empty: neither a reader nor resume makes a schema */
	CHECK_INT(truncate(path, 0), 0);
	CHECK(!store_open(dir, STORE_READONLY, &err));
	CHECK_HAS(err, "holds no run: its run.db is an empty database");
	free(err);
	err = NULL;
	CHECK(!store_open(dir, STORE_EXISTING, &err));
	CHECK_HAS(err, "holds no run");
	free(err);
	err = NULL;
	struct stat st;
	CHECK_INT(stat(path, &st), 0);
	CHECK_INT(st.st_size, 0);
	/* run into it: an empty database is what a run killed before its first commit leaves */
	struct store *s = store_open(dir, STORE_CREATE, &err);
	CHECK(s);
	store_close(s);
	free(path);
	free(dir);
}

TEST(store_emptied_is_damaged_not_recreated)
{
	char *dir = xasprintf("%s/run", test_tmpdir());
	char *path = xasprintf("%s/run.db", dir);
	char *err = NULL, sha0[65], sha1[65];
	long long t0, t1;
	CHECK_INT(make_run(dir), 0);
	sqlite3 *db;
	CHECK_INT(sqlite3_open(path, &db), SQLITE_OK);
	CHECK_INT(sqlite3_exec(db, "DELETE FROM llm_calls; DELETE FROM nodes; DELETE FROM blobs; "
				   "DELETE FROM runs; DELETE FROM meta", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	file_print(path, sha0, &t0);
	int modes[] = { STORE_READONLY, STORE_EXISTING, STORE_CREATE };
	for (size_t i = 0; i < ARRAY_SIZE(modes); i++) {
		CHECK(!store_open(dir, modes[i], &err));
		CHECK_HAS(err, "is damaged: it has tables but no schema version");
		free(err);
		err = NULL;
	}
	file_print(path, sha1, &t1);
	CHECK_STR(sha1, sha0);
	/* the schema version back, the rows still gone: no run */
	CHECK_INT(sqlite3_open(path, &db), SQLITE_OK);
	char *sql = xasprintf("INSERT INTO meta VALUES ('schema_version', '%d')",
			      STORE_SCHEMA_VERSION);
	CHECK_INT(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	free(sql);
	sqlite3_close(db);
	CHECK(!store_open(dir, STORE_READONLY, &err));
	CHECK_HAS(err, "holds no run");
	free(err);
	free(path);
	free(dir);
}

TEST(store_create_keeps_out_of_user_files)
{
	char *dir = xasprintf("%s/mine", test_tmpdir());
	char *err = NULL;
	CHECK_INT(mkdir_p(dir), 0);
	const char *kernel = test_write_file("mine/best.cu", "// my kernel\n");
	CHECK(!store_open(dir, STORE_CREATE, &err));
	CHECK_HAS(err, "exists and holds files that are not a cutegen run");
	free(err);
	err = NULL;
	struct strbuf sb = STRBUF_INIT;
	CHECK_INT(strbuf_read_file(&sb, kernel, 1024), 0);
	CHECK_STR(sb.buf, "// my kernel\n");
	strbuf_release(&sb);
	char *db = xasprintf("%s/run.db", dir), *lock = xasprintf("%s/run.lock", dir);
	CHECK(!file_exists(db) && !file_exists(lock));
	/* an empty directory is fine, and so is one that only a killed run's lock is in */
	char *empty = xasprintf("%s/empty", test_tmpdir());
	CHECK_INT(mkdir_p(empty), 0);
	struct store *s = store_open(empty, STORE_CREATE, &err);
	CHECK(s);
	store_close(s);
	char *locked = xasprintf("%s/locked", test_tmpdir());
	CHECK_INT(mkdir_p(locked), 0);
	test_write_file("locked/run.lock", "12345\n");
	s = store_open(locked, STORE_CREATE, &err);
	CHECK(s);
	store_close(s);
	free(db);
	free(lock);
	free(empty);
	free(locked);
	free(dir);
}
