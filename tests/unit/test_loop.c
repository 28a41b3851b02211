/* Unit tests of the agent loop's modules: reply parsing, stage files, prompts, the run store,
 * feedback formatting. */
#include "test.h"

#include "agent/agent.h"
#include "agent/feedback.h"
#include "common/module_run.h"
#include "agent/prompt.h"
#include "agent/reply.h"
#include "agent/stages.h"
#include "store/store.h"
#include "common/task.h"
#include "util/fsutil.h"
#include "util/xalloc.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>

static const char *K =
	"#include <cutegen/kernel_abi.h>\n"
	"__global__ void k(float *y) { y[0] = 1; }\n"
	"CUTEGEN_DECLARE_ABI();\n"
	"CUTEGEN_KERNEL int cutegen_launch() { return 0; }\n";

static int parse(const char *text, int trunc, const char *cur, struct strbuf *out, char **err)
{
	enum reply_form f;
	return reply_parse(text, strlen(text), trunc, cur, out, &f, NULL, err);
}

TEST(reply_takes_last_fenced_block_with_entry_point)
{
	struct strbuf out = STRBUF_INIT;
	char *err = NULL;
	char *text = xasprintf("Change: x\nHere is a sketch:\n```cpp\nint helper();\n```\nAnd the kernel:\n"
			       "```cuda\n%s```\nand a note\n```python\nprint(1)\n```\n", K);
	CHECK_INT(parse(text, 0, NULL, &out, &err), 0);
	CHECK_STR(out.buf, K);
	free(text);
	/* \r\n line ends, a bare fence, more backticks */
	strbuf_reset(&out);
	CHECK_INT(parse("````\r\nint cutegen_launch();\r\n````\r\n", 0, NULL, &out, &err), 0);
	CHECK_STR(out.buf, "int cutegen_launch();\n");
	strbuf_release(&out);
}

TEST(reply_without_code_or_cut_off_is_feedback)
{
	struct strbuf out = STRBUF_INIT;
	char *err = NULL;
	CHECK_INT(parse("I cannot help with that.", 0, NULL, &out, &err), -1);
	CHECK_HAS(err, "your reply had no code block");
	free(err);
	CHECK_INT(parse("```cuda\n#include <x>\nint cutegen_launch", 1, NULL, &out, &err), -1);
	CHECK_HAS(err, "cut off before its code block closed (it reached the token limit)");
	free(err);
	CHECK_INT(parse("```cuda\n__global__ void k() {}\n```\n", 0, NULL, &out, &err), -1);
	CHECK_HAS(err, "no cutegen_launch entry point");
	free(err);
	/* a bare file with no fence is accepted */
	CHECK_INT(parse(K, 0, NULL, &out, &err), 0);
	CHECK_STR(out.buf, K);
	strbuf_release(&out);
}

TEST(reply_edits_apply_in_order)
{
	struct strbuf out = STRBUF_INIT;
	char *err = NULL;
	const char *r = "Change: two edits\n"
			"<<<<<<< SEARCH\n__global__ void k(float *y) { y[0] = 1; }   \n=======\n"
			"__global__ void k(float *y) { y[0] = 2; }\n>>>>>>> REPLACE\n"
			"prose between\n"
			"<<<<<<< SEARCH\n  y[0] = 2; }\n=======\nnever\n>>>>>>> REPLACE\n";
	/* second SEARCH does not match a whole line: reported, nothing applied */
	CHECK_INT(parse(r, 0, K, &out, &err), -1);
	CHECK_HAS(err, "edit 2 did not apply");
	CHECK_HAS(err, "(as changed by the edits before it)");
	free(err);
	const char *r2 = "<<<<<<< SEARCH\n__global__ void k(float *y) { y[0] = 1; }\n=======\n"
			 "__global__ void k(float *y) { y[0] = 2; }\n>>>>>>> REPLACE\n"
			 "<<<<<<< SEARCH\nCUTEGEN_DECLARE_ABI();\n=======\n>>>>>>> REPLACE\n";
	CHECK_INT(parse(r2, 0, K, &out, &err), 0);
	CHECK_HAS(out.buf, "y[0] = 2;");
	CHECK(!strstr(out.buf, "CUTEGEN_DECLARE_ABI"));
	CHECK(!strstr(out.buf, "y[0] = 1;"));
	strbuf_release(&out);
}

TEST(reply_edit_errors_say_why)
{
	struct strbuf out = STRBUF_INIT;
	char *err = NULL;
	const char *dup = "a\nx\nb\nx\n";
	CHECK_INT(parse("<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n", 0, dup, &out, &err), -1);
	CHECK_HAS(err, "was found 2 times (at lines 2, 4)");
	free(err);
	CHECK_INT(parse("<<<<<<< SEARCH\na\nzzz\n=======\ny\n>>>>>>> REPLACE\n", 0, dup, &out, &err), -1);
	CHECK_HAS(err, "its first line matches line 1 but the lines after it differ");
	free(err);
	CHECK_INT(parse("<<<<<<< SEARCH\nx\n=======\ny\n", 1, dup, &out, &err), -1);
	CHECK_HAS(err, "edit 1 is incomplete: no >>>>>>> REPLACE line");
	CHECK_HAS(err, "cut off at the token limit");
	free(err);
	CHECK_INT(parse("<<<<<<< SEARCH\nx\n>>>>>>> REPLACE\n", 0, dup, &out, &err), -1);
	CHECK_HAS(err, "has no ======= line");
	free(err);
	CHECK_INT(parse("<<<<<<< SEARCH\n=======\ny\n>>>>>>> REPLACE\n", 0, dup, &out, &err), -1);
	CHECK_HAS(err, "empty SEARCH");
	free(err);
	CHECK_INT(parse("<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n", 0, NULL, &out, &err), -1);
	CHECK_HAS(err, "no kernel to edit yet");
	free(err);
	strbuf_release(&out);
}

TEST(reply_malformed_and_huge_inputs_end_cleanly)
{
	struct strbuf out = STRBUF_INIT;
	char *err = NULL;
	enum reply_form f;
	/* NULs, lone markers, fences everywhere */
	const char junk[] = "```\0```\n<<<<<<< SEARCH\n\0\n=======\n```cuda\n>>>>>>> REPLACE\n```";
	int r = reply_parse(junk, sizeof(junk) - 1, 0, "x\n", &out, &f, NULL, &err);
	CHECK(r == 0 || r == -1);
	free(err);
	err = NULL;
	/* too big */
	size_t n = REPLY_MAX_TEXT + 10;
	char *big = xmalloc(n + 1);
	memset(big, '`', n);
	big[n] = 0;
	CHECK_INT(reply_parse(big, n, 0, NULL, &out, &f, NULL, &err), -1);
	CHECK_HAS(err, "more than the");
	free(err);
	/* many lines of fences, within the cap: linear, ends */
	for (size_t i = 0; i < 1000000; i++)
		big[i] = i % 4 == 3 ? '\n' : '`';
	CHECK_INT(reply_parse(big, 1000000, 0, NULL, &out, &f, NULL, &err), -1);
	free(err);
	/* an edit against a kernel of too many lines is refused, not slow */
	char *cur = xmalloc(2 * (REPLY_MAX_LINES + 5) + 1);
	for (int i = 0; i < REPLY_MAX_LINES + 5; i++)
		cur[2 * i] = 'a', cur[2 * i + 1] = '\n';
	cur[2 * (REPLY_MAX_LINES + 5)] = 0;
	CHECK_INT(parse("<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n", 0, cur, &out, &err), -1);
	CHECK_HAS(err, "too large to match");
	free(err);
	free(cur);
	free(big);
	strbuf_release(&out);
}

TEST(agent_change_line)
{
	char *c = agent_change_line("**Change:** tile 128x128 for reuse\n```cuda\n");
	CHECK_STR(c, "tile 128x128 for reuse");
	free(c);
	CHECK(!agent_change_line("```cuda\nChange: inside code\n```"));
	CHECK(!agent_change_line("no change line"));
}

TEST(stages_parse_a_machine)
{
	const char *text = "# comment\nstage: 0\nname: correct\nmax_iters: 2\nmin_gain: 0\nwatch: verdict\n"
			   "---\nbe correct\n\n%%\nstage: 1\nname: mma\nneeds: tensor_cores\npatience: 1\n"
			   "---\nuse MMA_Atom<SM80_16x8x8_F32TF32TF32F32_TN>\n";
	struct stage_machine m = STAGE_MACHINE_INIT;
	char *err = NULL;
	CHECK_INT(stages_parse(text, strlen(text), "t.txt", &m, &err), 0);
	CHECK_INT(m.n, 2);
	CHECK_STR(m.stages[0].name, "correct");
	CHECK_INT(m.stages[0].max_iters, 2);
	CHECK_STR(m.stages[0].guidance, "be correct");
	CHECK_INT(m.stages[1].tensor_cores, 1);
	CHECK_INT(m.stages[1].patience, 1);
	CHECK_INT(m.stages[1].max_iters, 3); /* default */
	CHECK(m.stages[1].min_gain == 0.03);
	CHECK_HAS(m.stages[1].guidance, "SM80_16x8x8");
	stage_machine_release(&m);
}

TEST(stages_errors_name_the_line)
{
	struct stage_machine m = STAGE_MACHINE_INIT;
	char *err = NULL;
	const char *bad[][2] = {
		{ "stage: 1\n---\nx\n", "t.txt:1: stages must be numbered 0, 1, 2... in order" },
		{ "stage: 0\nmax_iters: zero\n---\n", "t.txt:2: bad value for 'max_iters'" },
		{ "stage: 0\ncolour: red\n---\n", "t.txt:2: unknown key 'colour'" },
		{ "name: x\n", "before the first 'stage:' line" },
		{ "stage: 0\nname: x\n", "has no '---' line" },
		{ "# nothing\n", "no stages" },
		{ "stage: 0\nneeds: magic\n---\n", "bad value for 'needs'" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		CHECK_INT(stages_parse(bad[i][0], strlen(bad[i][0]), "t.txt", &m, &err), -1);
		CHECK_HAS(err, bad[i][1]);
		free(err);
		err = NULL;
	}
}

TEST(stages_builtin_machines_load)
{
	const char *w[] = { "gemm", "elementwise", "rowwise" };
	size_t want[] = { 6, 4, 4 };
	for (size_t i = 0; i < 3; i++) {
		struct stage_machine m = STAGE_MACHINE_INIT;
		char *err = NULL;
		CHECK_INT(stages_load(w[i], NULL, &m, &err), 0);
		CHECK_INT(m.n, want[i]);
		CHECK(strlen(m.stages[m.n - 1].guidance) > 100);
		stage_machine_release(&m);
	}
	struct stage_machine g = STAGE_MACHINE_INIT;
	char *err = NULL;
	CHECK_INT(stages_load("gemm", NULL, &g, &err), 0);
	CHECK_INT(g.stages[3].tensor_cores, 1);
	CHECK_HAS(g.stages[2].guidance, "SM80_CP_ASYNC_CACHEGLOBAL");
	stage_machine_release(&g);
	/* a --prompts directory overrides a file */
	char *sd = xasprintf("%s/stages", test_tmpdir());
	mkdir_p(sd);
	free(sd);
	test_write_file("stages/rowwise.txt", "stage: 0\nname: mine\n---\nmy guidance\n");
	CHECK_INT(stages_load("rowwise", test_tmpdir(), &g, &err), 0);
	CHECK_STR(g.stages[0].name, "mine");
	stage_machine_release(&g);
}

TEST(prompt_render_placeholders_and_sections)
{
	struct prompt_var v[] = { { "a", "A" }, { "empty", "" }, { "b", "B" } };
	struct strbuf out = STRBUF_INIT;
	char *err = NULL;
	CHECK_INT(prompt_render("x {{a}} {{#b}}[{{b}}]{{/b}}{{#empty}}gone{{/empty}}.", v, 3, &out, &err), 0);
	CHECK_STR(out.buf, "x A [B].");
	strbuf_reset(&out);
	CHECK_INT(prompt_render("{{#empty}}\nline\n{{/empty}}\nnext\n", v, 3, &out, &err), 0);
	CHECK_STR(out.buf, "next\n");
	CHECK_INT(prompt_render("{{nope}}", v, 3, &out, &err), -1);
	CHECK_HAS(err, "unknown placeholder '{{nope}}'");
	free(err);
	CHECK_INT(prompt_render("{{#a}} open", v, 3, &out, &err), -1);
	CHECK_HAS(err, "not closed");
	free(err);
	CHECK_INT(prompt_render("{{a", v, 3, &out, &err), -1);
	free(err);
	strbuf_release(&out);
}

static struct task *relu_task(void)
{
	const char *j = "{\"name\": \"t/relu\", \"op\": \"elementwise\", \"dtype\": \"fp32\", "
			"\"precision\": \"strict\", \"shape\": [1024, 4097], \"activation\": \"relu\"}";
	char *err = NULL;
	struct task *t = task_parse_json(j, strlen(j), "t.json", &err);
	free(err);
	return t;
}

TEST(prompt_build_fits_the_budget)
{
	struct task *t = relu_task();
	CHECK(t);
	struct strbuf hist = STRBUF_INIT, sys = STRBUF_INIT, user = STRBUF_INIT, fb = STRBUF_INIT;
	for (int i = 1; i <= 2000; i++)
		strbuf_addf(&hist, "#%d stage 1 optimize: pass 0.1 ms -> kept\n", i);
	for (int i = 0; i < 3000; i++)
		strbuf_addstr(&fb, "feedback line ");
	struct prompt_input in = { 0 };
	in.task = t;
	in.system_tmpl = "SYSTEM";
	in.user_tmpl = "{{task}}K:{{kernel}}\nH:{{history}}\nF:{{feedback}}\n{{#profile}}P:{{profile}}{{/profile}}";
	in.kernel = K;
	in.history = hist.buf;
	in.feedback = fb.buf;
	in.profile = "dram 91%";
	in.budget = 8000;
	char *err = NULL;
	CHECK_INT(prompt_build(&in, &sys, &user, &err), 0);
	CHECK(sys.len + user.len <= 8000);
	CHECK_HAS(user.buf, "earlier lines not shown");
	CHECK_HAS(user.buf, "#2000 stage 1");        /* the newest history stays */
	CHECK_HAS(user.buf, "bytes cut to fit the prompt");
	CHECK_HAS(user.buf, "inputs[0] x");
	CHECK_HAS(user.buf, "[1024, 4097]");
	CHECK_HAS(user.buf, "precision contract: strict");
	CHECK_HAS(user.buf, K);                        /* the kernel is never cut */
	/* a kernel larger than the budget is an error, not a silent cut */
	in.budget = 100;
	CHECK_INT(prompt_build(&in, &sys, &user, &err), -1);
	CHECK_HAS(err, "over its budget");
	free(err);
	strbuf_release(&hist);
	strbuf_release(&fb);
	strbuf_release(&sys);
	strbuf_release(&user);
	task_free(t);
}

TEST(prompt_builtin_templates_render)
{
	struct task *t = relu_task();
	const char *names[] = { "generate.txt", "fix.txt", "optimize.txt" };
	struct strbuf sysT = STRBUF_INIT, sys = STRBUF_INIT, user = STRBUF_INIT;
	struct strbuf first_sys = STRBUF_INIT;
	char *err = NULL;
	CHECK_INT(prompt_file_load(NULL, "system.txt", &sysT, &err), 0);
	for (size_t i = 0; i < 3; i++) {
		struct strbuf u = STRBUF_INIT;
		CHECK_INT(prompt_file_load(NULL, names[i], &u, &err), 0);
		struct prompt_input in = { 0 };
		in.task = t;
		in.system_tmpl = sysT.buf;
		in.user_tmpl = u.buf;
		in.kernel = K;
		in.feedback = "FEEDBACK-TEXT";
		in.stage_guidance = "GUIDANCE-TEXT";
		in.stage_name = "correct";
		in.target = "- GPU architecture: sm_90a";
		in.history = i ? "1 generate: compile_error" : NULL;
		CHECK_INT(prompt_build(&in, &sys, &user, &err), 0);
		CHECK_HAS(user.buf, "FEEDBACK-TEXT");
		CHECK(!strstr(user.buf, "{{"));
		CHECK_HAS(sys.buf, "cutegen_launch");
		/* the fixed part: the same bytes whatever the kind of node, holding the task and
		   the target; the user message does not repeat the task */
		if (!i)
			strbuf_add(&first_sys, sys.buf, sys.len);
		CHECK_STR(sys.buf, first_sys.buf);
		CHECK_HAS(sys.buf, "\nThe task\ntask: ");
		CHECK_HAS(sys.buf, "Target and build\n- GPU architecture: sm_90a");
		CHECK_HAS(sys.buf, "|got - want| <= ");
		CHECK(!strstr(user.buf, "task: "));
		strbuf_release(&u);
	}
	strbuf_release(&first_sys);
	strbuf_release(&sysT);
	strbuf_release(&sys);
	strbuf_release(&user);
	task_free(t);
}

/* Issue 18: a module that is no built-in op is described to the model as the module: its
 * source, the arguments in ABI order (inputs, parameters, outputs) with their roles, shapes and
 * dtypes, the scalars, the module contract of docs/kernel-abi.md and the measured-tolerance
 * check. The description is the one tools/reference.py gives for tests/data/modules/suite
 * files under tests/fake_torch (tests/e2e/module_prepare.sh checks the fixture is current). */
static struct module_desc *fixture_module(const char *name, struct strbuf *src)
{
	struct strbuf j = STRBUF_INIT;
	char *path = xasprintf("tests/data/modules/prompt/%s.describe.json", name);
	char *py = xasprintf("tests/data/modules/suite/%s.py", name);
	char *err = NULL;
	struct module_desc *md = NULL;
	if (strbuf_read_file(&j, path, 1 << 20) == 0 && strbuf_read_file(src, py, 1 << 20) == 0)
		md = module_desc_parse(j.buf, j.len, path, &err);
	free(err);
	free(path);
	free(py);
	strbuf_release(&j);
	return md;
}

TEST(prompt_module_not_lowered_shows_the_module)
{
	struct strbuf src = STRBUF_INIT, sysT = STRBUF_INIT, sys = STRBUF_INIT, user = STRBUF_INIT;
	struct module_desc *md = fixture_module("4_linear", &src);
	CHECK(md != NULL);
	if (!md)
		return;
	char *err = NULL;
	CHECK_INT(prompt_file_load(NULL, "system.txt", &sysT, &err), 0);
	struct prompt_input in = { 0 };
	in.module = md;
	in.module_source = src.buf;
	in.system_tmpl = sysT.buf;
	in.user_tmpl = "K:{{kernel}}";
	in.kernel = K;
	CHECK_INT(prompt_build(&in, &sys, &user, &err), 0);
	CHECK_HAS(sys.buf, "task: module 4_linear");
	CHECK_HAS(sys.buf, "```python\nimport torch\n");
	CHECK_HAS(sys.buf, "return self.fc(x)\n");
	CHECK_HAS(sys.buf, "  inputs[0] input     x                    fp32  [32, 64]\n");
	CHECK_HAS(sys.buf, "  inputs[1] parameter fc.weight            fp32  [48, 64]\n");
	CHECK_HAS(sys.buf, "  inputs[2] parameter fc.bias              fp32  [48]\n");
	CHECK_HAS(sys.buf, "  outputs[0] output    out                  fp32  [32, 48]\n");
	CHECK_HAS(sys.buf, "scalars (const double *scalars, in order): in_features = 64 (from "
		  "get_init_inputs), out_features = 48 (from get_init_inputs)");
	CHECK_HAS(sys.buf, "the module contract: For a module task");
	CHECK_HAS(sys.buf, "then the module's parameters and");
	CHECK_HAS(sys.buf, "precision contract: strict (fp32 data computed in fp32");
	CHECK_HAS(sys.buf, "mode: forward is judged as the module computes in eval (Model().eval())\n");
	CHECK_HAS(sys.buf, "checked against the module run in float64");
	CHECK_HAS(sys.buf, "workload class: memory-bound (");
	CHECK(!strstr(sys.buf, "\nop: "));  /* no built-in op is claimed */
	/* a module that is lowered: the twin's description, and where it comes from */
	struct task *t = relu_task();
	in.module = NULL;
	in.task = t;
	in.module_file = "/m/2_relu.py";
	in.module_source = "def forward(self, x):\n    return torch.relu(x)\n";
	CHECK_INT(prompt_build(&in, &sys, &user, &err), 0);
	CHECK_HAS(sys.buf, "inputs[0] x");
	CHECK_HAS(sys.buf, "this task is the PyTorch module /m/2_relu.py, judged as the built-in op");
	CHECK_HAS(sys.buf, "```python\ndef forward(self, x):\n    return torch.relu(x)\n```\n");
	task_free(t);
	module_desc_free(md);
	strbuf_release(&src);
	strbuf_release(&sysT);
	strbuf_release(&sys);
	strbuf_release(&user);
}

/* The loop takes a module that does not lower with no task (its stage machine from the
 * workload class); the builtin agent, which has no family for it, refuses it saying a run needs
 * a model, rather than dereferencing the missing task. */
TEST(agent_module_not_lowered_needs_a_model_for_builtin)
{
	struct strbuf src = STRBUF_INIT;
	struct module_desc *md = fixture_module("4_linear", &src);
	CHECK(md != NULL);
	if (!md)
		return;
	struct agent_opts o = AGENT_OPTS_INIT;
	o.module = md;
	o.module_source = src.buf;
	char *err = NULL;
	struct agent *a = agent_new(NULL, NULL, NULL, &o, &err);
	CHECK(a != NULL);
	CHECK(!err);
	agent_free(a);
	o.builtin = 1;
	a = agent_new(NULL, NULL, NULL, &o, &err);
	CHECK(a == NULL);
	CHECK(err && strstr(err, "the builtin agent has no kernel family for it; a run needs a model"));
	free(err);
	module_desc_free(md);
	strbuf_release(&src);
}

/* The workload class picks the stage machine; each of them loads. */
TEST(prompt_module_workload_picks_the_stages)
{
	const char *w[][2] = { { "gemm-like", "gemm" }, { "convolution", "gemm" }, { "attention", "gemm" },
			       { "reduction", "rowwise" }, { "memory-bound", "elementwise" },
			       { "other", "elementwise" } };
	for (size_t i = 0; i < ARRAY_SIZE(w); i++) {
		CHECK_STR(prompt_module_stages(w[i][0]), w[i][1]);
		struct stage_machine m = STAGE_MACHINE_INIT;
		char *err = NULL;
		CHECK_INT(stages_load(prompt_module_stages(w[i][0]), NULL, &m, &err), 0);
		stage_machine_release(&m);
	}
	/* the reduction fixture's description says so, and what it means */
	struct strbuf src = STRBUF_INIT, d = STRBUF_INIT;
	struct module_desc *md = fixture_module("5_row_sum", &src);
	CHECK(md != NULL);
	if (!md)
		return;
	CHECK_STR(prompt_module_stages(md->workload), "rowwise");
	prompt_describe_module(md, src.buf, &d);
	CHECK_HAS(d.buf, "workload class: reduction (");
	CHECK_HAS(d.buf, "reduce in registers and shared memory");
	CHECK_HAS(d.buf, "scale = 0.5 (from get_init_inputs)");
	/* a source over the cap is cut, saying so */
	struct strbuf big = STRBUF_INIT;
	for (int i = 0; i < 8000; i++)
		strbuf_addstr(&big, "# a long comment line\n");
	strbuf_reset(&d);
	prompt_describe_module(md, big.buf, &d);
	CHECK_HAS(d.buf, "more bytes of the module file not shown");
	CHECK(d.len < PROMPT_MODULE_SOURCE_MAX + 8000);
	module_desc_free(md);
	strbuf_release(&big);
	strbuf_release(&src);
	strbuf_release(&d);
}

TEST(store_open_insert_reopen)
{
	char *dir = xasprintf("%s/run", test_tmpdir());
	char *err = NULL;
	struct store *s = store_open(dir, STORE_CREATE, &err);
	CHECK(s);
	CHECK_INT(store_schema_version(s), STORE_SCHEMA_VERSION);
	struct store_run r = { 0 };
	r.task_name = "t/relu";
	r.task_json = "{}";
	r.budgets_json = "{\"iters\": 3}";
	CHECK_INT(store_run_begin(s, &r, &err), 0);
	struct store_node n = { 0 };
	n.iteration = 1;
	n.kind = "generate";
	n.verdict = "pass";
	n.outcome = "best";
	n.source = "kernel text";
	n.feedback = "fb";
	n.ms = 0.5;
	n.speedup = -1;
	n.tokens_in = 10;
	n.total_s = 2;
	struct store_llm_call c = { 0 };
	c.reply_text = "reply";
	CHECK_INT(store_add_node(s, &n, &c, &err), 0);
	CHECK_INT(n.id, 1);
	/* a bad kind is refused by the schema, and the transaction leaves nothing behind */
	struct store_node bad = n;
	bad.kind = "dance";
	CHECK_INT(store_add_node(s, &bad, &c, &err), -1);
	free(err);
	err = NULL;
	CHECK_INT(store_run_finish(s, "done", "every stage ran", 1, &err), 0);
	store_close(s);
	/* a second run in the same directory is refused */
	CHECK(!store_open(dir, STORE_CREATE, &err));
	CHECK_HAS(err, "already holds a run");
	free(err);
	s = store_open(dir, STORE_EXISTING, &err);
	CHECK(s);
	struct store_node *nodes;
	size_t nn;
	CHECK_INT(store_nodes(s, &nodes, &nn, &err), 0);
	CHECK_INT(nn, 1);
	CHECK_STR(nodes[0].source, "kernel text");
	CHECK_STR(nodes[0].outcome, "best");
	CHECK(nodes[0].ms == 0.5 && nodes[0].speedup < 0);
	store_nodes_free(nodes, nn);
	struct store_run got;
	CHECK_INT(store_run_get(s, &got, &err), 0);
	CHECK_STR(got.status, "done");
	CHECK_INT(got.best_node, 1);
	store_run_release(&got);
	CHECK_INT(store_run_resumed(s, "{\"iters\": 9}", &err), 0);
	CHECK_INT(store_run_get(s, &got, &err), 0);
	CHECK_STR(got.status, "running");
	CHECK_INT(got.resumes, 1);
	CHECK_STR(got.budgets_json, "{\"iters\": 9}");
	store_run_release(&got);
	store_close(s);
	free(dir);
}

TEST(store_migrates_and_refuses_newer)
{
	char *dir = xasprintf("%s/old", test_tmpdir());
	char *path = xasprintf("%s/run.db", dir);
	char *err = NULL;
	mkdir_p(dir);
	/* version 0: an empty database file (what a crash before the first commit leaves) */
	sqlite3 *db;
	CHECK_INT(sqlite3_open(path, &db), SQLITE_OK);
	sqlite3_close(db);
	struct store *s = store_open(dir, STORE_CREATE, &err);
	CHECK(s);
	CHECK_INT(store_schema_version(s), STORE_SCHEMA_VERSION);
	store_close(s);
	CHECK_INT(sqlite3_open(path, &db), SQLITE_OK);
	sqlite3_exec(db, "UPDATE meta SET value = '99' WHERE key = 'schema_version'", NULL, NULL, NULL);
	sqlite3_close(db);
	CHECK(!store_open(dir, STORE_CREATE, &err));
	CHECK_HAS(err, "schema version 99, newer than this cutegen understands");
	free(err);
	char *none = xasprintf("%s/none", test_tmpdir());
	CHECK(!store_open(none, STORE_EXISTING, &err));
	free(none);
	CHECK_HAS(err, "holds no run");
	free(err);
	free(dir);
	free(path);
}

TEST(feedback_eval_shows_where_and_samples)
{
	struct eval_result er = EVAL_RESULT_INIT;
	char *err = NULL;
	const char *rep = "{\"verdict\":\"incorrect\",\"message\":\"3 wrong\",\"checks\":["
			  "{\"dist\":\"normal\",\"seed\":1,\"ok\":true},"
			  "{\"dist\":\"large\",\"seed\":0,\"when\":\"first\",\"ok\":false,\"max_err_over_tol\":12.5,"
			  "\"where\":\"3 of 100 elements wrong; errors only in columns 96..99\","
			  "\"samples\":[{\"index\":[0,97],\"got\":1.5,\"want\":2,\"tol\":1e-6},"
			  "{\"index\":[1,98],\"got\":\"nan\",\"want\":2,\"tol\":1e-6},{\"index\":\"odd\"}]}]}";
	CHECK_INT(eval_result_from_report(&er, rep, &err), 0);
	struct strbuf out = STRBUF_INIT;
	feedback_eval(&er, &out);
	CHECK_HAS(out.buf, "verdict incorrect");
	CHECK_HAS(out.buf, "Failing check: 'large' inputs, seed 0, first");
	CHECK_HAS(out.buf, "errors only in columns 96..99");
	CHECK_HAS(out.buf, "12.5 times the tolerance");
	CHECK_HAS(out.buf, "[0, 97]: got 1.5 vs want 2, tol 1e-06");
	CHECK_HAS(out.buf, "[1, 98]: got NaN");
	strbuf_release(&out);
	eval_result_release(&er);
	/* a timeout names the phase and the usual causes of a kernel that never returns */
	CHECK_INT(eval_result_from_report(&er, "{\"verdict\":\"pass\"}", &err), 0);
	er.verdict = VERDICT_TIMEOUT;
	er.last_phase = xstrdup("timing");
	feedback_eval(&er, &out);
	CHECK_HAS(out.buf, "verdict timeout");
	CHECK_HAS(out.buf, "phase when the deadline passed: timing");
	CHECK_HAS(out.buf, "mbarrier's phase parity");
	CHECK_HAS(out.buf, "setmaxnreg");
	strbuf_release(&out);
	eval_result_release(&er);
	/* a pass says nothing */
	CHECK_INT(eval_result_from_report(&er, "{\"verdict\":\"pass\"}", &err), 0);
	feedback_eval(&er, &out);
	CHECK_INT(out.len, 0);
	eval_result_release(&er);
}

/* A module check (it names its case): the run's cases are the same for every candidate, so the
 * feedback says how far off an element is in words, never the truth's value or its budget. */
TEST(feedback_eval_module_check_quotes_no_truth)
{
	struct eval_result er = EVAL_RESULT_INIT;
	char *err = NULL;
	const char *rep = "{\"verdict\":\"incorrect\",\"message\":\"1 wrong\",\"checks\":["
			  "{\"case\":2,\"dist\":\"large\",\"seed\":123457,\"ok\":false,\"max_err_over_tol\":47.25,"
			  "\"where\":\"output 'out': 1 of 1 elements outside the budget\","
			  "\"samples\":[{\"index\":[0],\"got\":1.5,\"want\":2.7182818,\"tol\":0.0257},"
			  "{\"index\":[1],\"got\":\"nan\",\"want\":3.1415927,\"tol\":0.01}]}]}";
	CHECK_INT(eval_result_from_report(&er, rep, &err), 0);
	struct strbuf out = STRBUF_INIT;
	feedback_eval(&er, &out);
	CHECK_HAS(out.buf, "Failing check: 'large' inputs, seed 123457");
	CHECK_HAS(out.buf, "largest error: 30 to 100 times its budget");
	CHECK_HAS(out.buf, "[0]: got 1.5, 30 to 100 times its budget");
	CHECK_HAS(out.buf, "[1]: got NaN (never written, or computed NaN), not finite");
	CHECK(!strstr(out.buf, "2.718"));
	CHECK(!strstr(out.buf, "3.14"));
	CHECK(!strstr(out.buf, "0.0257"));
	CHECK(!strstr(out.buf, "want"));
	strbuf_release(&out);
	eval_result_release(&er);
	char w[64];
	CHECK_STR(mrun_error_words(0.5, w, sizeof(w)), "within its budget");
	CHECK_STR(mrun_error_words(1.5, w, sizeof(w)), "1 to 3 times its budget");
	CHECK_STR(mrun_error_words(3, w, sizeof(w)), "3 to 10 times its budget");
	CHECK_STR(mrun_error_words(2500, w, sizeof(w)), "1000 to 3000 times its budget");
	CHECK_STR(mrun_error_words(1e30, w, sizeof(w)), "over 1e10 times its budget");
	CHECK_STR(mrun_error_words(NAN, w, sizeof(w)), "not finite");
	CHECK_STR(mrun_error_words(INFINITY, w, sizeof(w)), "not finite");
}

TEST(feedback_memcheck_extract_keeps_the_errors)
{
	const char *log = "========= COMPUTE-SANITIZER\n"
			  "phase check uniform seed 0\n"
			  "========= Invalid __global__ write of size 4 bytes\n"
			  "=========     at relu_kernel(const float *, float *, long)+0x70 in kernel.cu:8\n"
			  "=========     by thread (0,0,0) in block (16388,0,0)\n"
			  "=========     Address 0x7f0000 is out of bounds\n"
			  "=========     Saved host backtrace up to driver entry point at kernel launch time\n"
			  "=========     Host Frame: [0x2f] in libcuda.so.1\n"
			  "========= \n"
			  "========= ERROR SUMMARY: 1 error\n";
	struct strbuf out = STRBUF_INIT;
	CHECK_INT(feedback_memcheck_extract(log, strlen(log), &out), 1);
	CHECK_HAS(out.buf, "Invalid __global__ write of size 4 bytes\n    at relu_kernel");
	CHECK_HAS(out.buf, "kernel.cu:8");
	CHECK_HAS(out.buf, "ERROR SUMMARY: 1 error");
	CHECK(!strstr(out.buf, "Host Frame"));
	CHECK(!strstr(out.buf, "phase"));
	strbuf_release(&out);
}

TEST(feedback_policy_and_cap)
{
	struct policy_report rep = POLICY_REPORT_INIT;
	const char *src = "#include <cutegen/kernel_abi.h>\nvoid f() { cudaDeviceSynchronize(); }\n";
	CHECK(policy_check(src, strlen(src), &rep) > 0);
	struct strbuf out = STRBUF_INIT;
	feedback_policy(&rep, &out);
	CHECK_HAS(out.buf, "The policy check rejected the kernel before compiling it:");
	CHECK_HAS(out.buf, "line 2: rule 'no-sync'");
	policy_report_release(&rep);
	strbuf_reset(&out);
	for (int i = 0; i < 5000; i++)
		strbuf_addstr(&out, "0123456789");
	feedback_cap(&out, 0);
	CHECK(out.len < FEEDBACK_MAX + 100);
	CHECK_HAS(out.buf, "more bytes not shown");
	strbuf_release(&out);
}
