/*
 * Retrieval against the real index (the CUTLASS headers cutegen compiles against, the CuTe
 * examples, the notes it ships) and the real stage machines: for each situation, a chunk that
 * must come and chunks that must not. Also the stage guidance a strict fp32 GEMM reads.
 */
#include "test.h"

#include "agent/agent.h"
#include "agent/rag.h"
#include "agent/stages.h"
#include "common/task.h"
#include "eval/build.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

struct situation {
	const char *name;
	const char *task;
	int stage;
	const char *error;     /* a compile error, or NULL */
	const char *failure;   /* another failure, or NULL */
	const char *expect;    /* text that must be retrieved (NULL = none required) */
	const char *forbid[4]; /* text that must not be */
};

static const struct situation cases[] = {
	{ "ReLU stage 0", "kb1/19_relu", 0, NULL, NULL, "local_tile",
	  { "wait_on_dependent_grids", "launch_dependent_grids", "make_tiled_mma", NULL } },
	{ "ReLU stage 1 (vectorized copies)", "kb1/19_relu", 1, NULL, NULL, "copy_if",
	  { "make_tiled_mma", "GMMA", "wait_on_dependent_grids", NULL } },
	{ "ReLU stage 2 (launch shape)", "kb1/19_relu", 2, NULL, NULL, NULL,
	  { "make_tiled_mma", "wait_on_dependent_grids", "warpgroup", NULL } },
	{ "strict fp32 GEMM stage 0", "kb1/1_square_matmul", 0, NULL, NULL, "local_tile",
	  { "wait_on_dependent_grids", "GMMA", NULL } },
	{ "strict fp32 GEMM stage 4 (warp specialization)", "kb1/1_square_matmul", 4, NULL, NULL, NULL,
	  { "GMMA", "warpgroup", "wgmma", NULL } },
	{ "bf16 GEMM stage 3 (tensor-core atoms)", "hopper/gemm_bf16_4096", 3, NULL, NULL, "make_tiled_mma",
	  { "wait_on_dependent_grids", NULL } },
	{ "ReLU with an error naming make_tiled_mma", "kb1/19_relu", 1,
	  "kernel.cu(30): error: no instance of function template \"cute::make_tiled_mma\" matches "
	  "the argument list\n", NULL, "make_tiled_mma", { "wait_on_dependent_grids", NULL } },
	{ "ReLU stage 2 with unwritten outputs", "kb1/19_relu", 2, NULL,
	  "7 of 4195328 elements wrong (7 never written) with 'uniform' inputs", "elem_less",
	  { "make_tiled_mma", "wait_on_dependent_grids", NULL } },
};

TEST(rag_retrieval_fits_the_situation)
{
	char *inc = build_find_cutlass_include();
	if (!inc) {
		fprintf(stderr, "  no CUTLASS headers (run 'make'): the retrieval cases need them\n");
		CHECK(inc);
		return;
	}
	char *db = xasprintf("%s/situations/docs.db", test_tmpdir()), *err = NULL;
	struct rag_build_opts o = RAG_BUILD_OPTS_INIT;
	o.cutlass_include = inc;
	CHECK_INT(rag_build(db, &o, NULL, &err), 0);
	struct rag *r = rag_open(db, &err);
	CHECK(r);
	for (size_t i = 0; r && i < ARRAY_SIZE(cases); i++) {
		const struct situation *c = &cases[i];
		struct task *t = task_load(c->task, &err);
		CHECK(t);
		if (!t)
			continue;
		struct stage_machine sm = STAGE_MACHINE_INIT;
		CHECK_INT(stages_load(task_workload(t), NULL, &sm, &err), 0);
		struct rag_situation s = { 0 };
		s.memory_bound = !task_is_gemm_like(t);
		s.strict_fp32 = t->precision == PREC_STRICT;
		s.stage_topic = sm.stages[c->stage].docs;
		s.error = c->error;
		s.failure = c->failure;
		struct strbuf out = STRBUF_INIT;
		int n = rag_retrieve(r, &s, 3, 4000, &out);
		if (n <= 0 || (c->expect && !strstr(out.buf, c->expect)))
			fprintf(stderr, "  %s: %d chunks, expected '%s':\n%.600s\n", c->name, n,
				c->expect ? c->expect : "", out.buf);
		CHECK(n > 0);
		if (c->expect)
			CHECK(strstr(out.buf, c->expect));
		for (int f = 0; c->forbid[f]; f++) {
			if (strcasestr(out.buf, c->forbid[f]))
				fprintf(stderr, "  %s: got '%s'\n", c->name, c->forbid[f]);
			CHECK(!strcasestr(out.buf, c->forbid[f]));
		}
		strbuf_release(&out);
		stage_machine_release(&sm);
		task_free(t);
	}
	rag_close(r);
	free(db);
	free(inc);
}

TEST(stage_guidance_follows_the_contract)
{
	char *err = NULL;
	struct task *strict = task_load("kb1/1_square_matmul", &err);
	struct task *bf16 = task_load("hopper/gemm_bf16_4096", &err);
	CHECK(strict && bf16);
	struct stage_machine sm = STAGE_MACHINE_INIT;
	CHECK_INT(stages_load("gemm", NULL, &sm, &err), 0);
	for (size_t i = 0; i < sm.n; i++) {
		if (sm.stages[i].tensor_cores)
			continue; /* skipped under strict */
		struct strbuf g = STRBUF_INIT;
		CHECK_INT(agent_stage_guidance(&sm.stages[i], strict, &g, &err), 0);
		if (strstr(g.buf, "WGMMA") || strstr(g.buf, "tensor cores fed"))
			fprintf(stderr, "  strict stage %zu: %.300s\n", i, g.buf);
		CHECK(!strstr(g.buf, "WGMMA") && !strstr(g.buf, "tensor cores fed"));
		CHECK(!strstr(g.buf, "{{"));
		strbuf_release(&g);
	}
	struct strbuf g = STRBUF_INIT;
	CHECK_INT(agent_stage_guidance(&sm.stages[4], bf16, &g, &err), 0);
	CHECK_HAS(g.buf, "tensor cores fed");
	strbuf_reset(&g);
	CHECK_INT(agent_stage_guidance(&sm.stages[4], strict, &g, &err), 0);
	CHECK_HAS(g.buf, "FP32 pipes fed");
	strbuf_release(&g);
	stage_machine_release(&sm);
	task_free(strict);
	task_free(bf16);
}
