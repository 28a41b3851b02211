/* Unit tests of the report renderers (escaping, highlighting, fast_p) and the store's v1 -> v2
 * migration (the profile column). */
#include "test.h"

#include "store/history.h"
#include "report/report.h"
#include "store/store.h"
#include "util/fsutil.h"
#include "util/xalloc.h"

#include <sqlite3.h>
#include <stdlib.h>

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
	struct run_history h;
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
