/* The builtin agent's space parser, rendering and policy walk (builtin_policy.c). */
#include "agent/builtin_policy.h"
#include "common/task.h"
#include "test.h"
#include "util/xalloc.h"

#include <stdlib.h>

static const char *tmpl =
	"/*\n"
	" * a test family\n"
	" * cutegen-space: CG_P_A=1,2,4 CG_P_B=10,20 CG_P_T=128x64,64x64\n"
	" * cutegen-start: CG_P_A=2 CG_P_T=64x64\n"
	" * cutegen-stages: first=CG_P_A second=CG_P_B,CG_P_T\n"
	" */\n"
	"int x;\n";

static int parse(const char *text, struct builtin_space *sp, char **err)
{
	memset(sp, 0, sizeof(*sp));
	snprintf(sp->family, sizeof(sp->family), "elementwise");
	sp->file = xstrdup("t.cu");
	sp->text = xstrdup(text);
	return builtin_space_parse(text, "t.cu", sp, err);
}

TEST(builtin_space_parses_header)
{
	struct builtin_space sp;
	char *err = NULL;
	CHECK_INT(parse(tmpl, &sp, &err), 0);
	CHECK_INT(sp.nparams, 3);
	CHECK_STR(sp.params[2].name, "CG_P_T");
	CHECK_STR(sp.params[2].vals[0], "128x64");
	CHECK_INT(sp.start[0], 1);
	CHECK_INT(sp.start[1], 0);
	CHECK_INT(sp.start[2], 1);
	CHECK_INT(sp.nstages, 2);
	CHECK_STR(sp.stages[1].name, "second");
	CHECK_INT(sp.stages[1].nparams, 2);
	builtin_space_release(&sp);
}

TEST(builtin_space_errors_name_the_problem)
{
	struct {
		const char *text, *msg;
	} cases[] = {
		{ "// cutegen-start: CG_P_A=1\n// cutegen-stages: s=CG_P_A\n", "no '// cutegen-space:'" },
		{ "// cutegen-space: CG_P_A=1\n// cutegen-stages: s=CG_P_A\n", "no '// cutegen-start:'" },
		{ "// cutegen-space: A=1\n// cutegen-start:\n// cutegen-stages: s=A\n", "not NAME=V1,V2" },
		{ "// cutegen-space: CG_P_A=1,1\n// cutegen-start:\n// cutegen-stages: s=CG_P_A\n",
		  "repeated" },
		{ "// cutegen-space: CG_P_A=1,x\n// cutegen-start:\n// cutegen-stages: s=CG_P_A\n",
		  "bad" },
		{ "// cutegen-space: CG_P_A=1\n// cutegen-start: CG_P_A=3\n// cutegen-stages: s=CG_P_A\n",
		  "one of its values" },
		{ "// cutegen-space: CG_P_A=1\n// cutegen-start:\n// cutegen-stages: s=CG_P_B\n",
		  "does not declare" },
		{ "// cutegen-space: CG_P_A=1\n// cutegen-start:\n// cutegen-stages: s=CG_P_A,CG_P_A\n",
		  "already has" },
		{ "// cutegen-space: CG_P_A=1 CG_P_A=2\n// cutegen-start:\n// cutegen-stages: s=CG_P_A\n",
		  "declared twice" },
		{ "// cutegen-space: CG_P_A=1\n// cutegen-start:\n// cutegen-stages:\n", "no stages" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct builtin_space sp;
		char *err = NULL;
		int r = parse(cases[i].text, &sp, &err);
		if (r != -1 || !err || !strstr(err, cases[i].msg)) {
			test_fail(__FILE__, __LINE__, "case %zu: got %d '%s', expected '%s'", i, r,
				  err ? err : "(none)", cases[i].msg);
			return;
		}
		CHECK_HAS(err, "t.cu");
		free(err);
		builtin_space_release(&sp);
	}
}

TEST(builtin_render_and_read_back)
{
	struct builtin_space sp;
	char *err = NULL;
	CHECK_INT(parse(tmpl, &sp, &err), 0);
	const struct task *t = task_builtin("kb1/19_relu");
	CHECK(t);
	struct builtin_config c, back;
	memcpy(c.v, sp.start, sizeof(c.v));
	c.v[2] = 0;
	struct strbuf src = STRBUF_INIT;
	builtin_render(&sp, t, &c, &src);
	CHECK_HAS(src.buf, "// cutegen-builtin: family=elementwise CG_P_A=2 CG_P_B=10 CG_P_T=128x64\n");
	CHECK_HAS(src.buf, "#define CG_ACT Relu\n");
	CHECK_HAS(src.buf, "#define CG_T_IN float\n");
	CHECK_HAS(src.buf, "#define CG_P_T_0 128\n#define CG_P_T_1 64\n");
	CHECK_HAS(src.buf, "int x;\n");
	CHECK_INT(builtin_config_of(&sp, src.buf, &back), 0);
	CHECK(!memcmp(back.v, c.v, sizeof(int) * 3));
	CHECK_INT(builtin_config_of(&sp, "// cutegen-builtin: family=other CG_P_A=2\n", &back), -1);
	CHECK_INT(builtin_config_of(&sp, "// cutegen-builtin: family=elementwise CG_P_A=3\n", &back), -1);
	CHECK_INT(builtin_config_parse(&sp, "CG_P_Q=1", &back, &err), -1);
	CHECK_HAS(err, "CG_P_A in {1,2,4}");
	free(err);
	strbuf_release(&src);
	builtin_space_release(&sp);
}

TEST(builtin_render_gemm_macros)
{
	struct builtin_space sp;
	char *err = NULL;
	CHECK_INT(parse(tmpl, &sp, &err), 0);
	struct builtin_config c;
	memcpy(c.v, sp.start, sizeof(c.v));
	struct strbuf src = STRBUF_INIT;
	builtin_render(&sp, task_builtin("kb1/18_matmul_transposed_both"), &c, &src);
	CHECK_HAS(src.buf, "#define CG_A_COL 1\n#define CG_B_COL 1\n#define CG_BATCHED 0\n");
	strbuf_reset(&src);
	builtin_render(&sp, task_builtin("kb1/14_upper_triangular_matmul"), &c, &src);
	CHECK_HAS(src.buf, "#define CG_A_STRUCT 2\n#define CG_B_STRUCT 2\n#define CG_OUT_MASK 1\n");
	strbuf_reset(&src);
	builtin_render(&sp, task_builtin("hopper/gemm_bf16_4096_bias_relu"), &c, &src);
	CHECK_HAS(src.buf, "#define CG_T_IN cute::bfloat16_t\n");
	CHECK_HAS(src.buf, "#define CG_EPI_BIAS 1\n#define CG_EPI_ACT EpiRelu\n");
	strbuf_reset(&src);
	builtin_render(&sp, task_builtin("hopper/gemm_fp8_8192"), &c, &src);
	CHECK_HAS(src.buf, "#define CG_T_IN cute::float_e4m3_t\n#define CG_T_OUT cute::bfloat16_t\n");
	strbuf_release(&src);
	builtin_space_release(&sp);
}

/* a cost model for the walk: every setting's time, -1 = fails */
static double cost(const struct builtin_config *c)
{
	static const double a[] = { 3, 2, 1.5 }, b[] = { 0, 0.25 }, t[] = { -0.5, 0 };
	if (c->v[0] == 0 && c->v[1] == 1)
		return -1;
	return a[c->v[0]] + b[c->v[1]] + t[c->v[2]];
}

static int walk(const struct builtin_space *sp, struct builtin_tried *tried, int *stages)
{
	const struct task *t = task_builtin("kb1/19_relu");
	int n = 0, stage;
	struct builtin_config c;
	char *what;
	while (!builtin_next(sp, t, tried, n, &c, &stage, &what)) {
		double ms = cost(&c);
		tried[n] = (struct builtin_tried){ c, ms >= 0, ms, -1, 0 };
		stages[n++] = stage;
		free(what);
		if (n == 64)
			break;
	}
	return n;
}

TEST(builtin_policy_walks_stages_and_keeps_the_best)
{
	struct builtin_space sp;
	char *err = NULL;
	CHECK_INT(parse(tmpl, &sp, &err), 0);
	struct builtin_tried tried[64];
	int stages[64];
	int n = walk(&sp, tried, stages);
	/* start (A=2 B=10 T=64x64), stage 1: A=1, A=4 -> A=4 best (1.5); stage 2 around A=4:
	 * (B,T) in {10,20}x{128x64,64x64} minus the base: 3 candidates */
	CHECK_INT(n, 6);
	CHECK_INT(stages[0], 0);
	CHECK_INT(stages[1], 1);
	CHECK_INT(stages[2], 1);
	CHECK_INT(stages[3], 2);
	CHECK_INT(stages[5], 2);
	CHECK_INT(tried[1].cfg.v[0], 0);
	CHECK_INT(tried[2].cfg.v[0], 2);
	for (int i = 3; i < n; i++)
		CHECK_INT(tried[i].cfg.v[0], 2); /* stage 2 builds on stage 1's best */
	/* the best of the walk: A=4 B=10 T=128x64 at 1.0 */
	int best = -1;
	for (int i = 0; i < n; i++)
		if (tried[i].passed && (best < 0 || tried[i].ms < tried[best].ms))
			best = i;
	CHECK_INT(tried[best].cfg.v[1], 0);
	CHECK_INT(tried[best].cfg.v[2], 0);
	/* deterministic: the same measurements, the same walk; a prefix resumes it */
	struct builtin_tried again[64];
	int st2[64];
	CHECK_INT(walk(&sp, again, st2), n);
	for (int i = 0; i < n; i++) /* field by field: the struct has padding */
		CHECK(!memcmp(again[i].cfg.v, tried[i].cfg.v, sizeof(int) * 3) &&
		      again[i].passed == tried[i].passed && again[i].ms == tried[i].ms);
	struct builtin_config c;
	int stage;
	char *what;
	CHECK_INT(builtin_next(&sp, task_builtin("kb1/19_relu"), tried, 3, &c, &stage, &what), 0);
	CHECK(!memcmp(c.v, tried[3].cfg.v, sizeof(int) * 3));
	CHECK_HAS(what, "builtin elementwise, second:");
	free(what);
	builtin_space_release(&sp);
}

TEST(builtin_policy_failing_start_still_explores)
{
	/* start at A=1 B=20: fails; the walk goes on around it and finds correct ones */
	struct builtin_space sp;
	char *err = NULL;
	CHECK_INT(parse("// cutegen-space: CG_P_A=1,2,4 CG_P_B=10,20 CG_P_T=128x64,64x64\n"
			"// cutegen-start: CG_P_A=1 CG_P_B=20\n"
			"// cutegen-stages: first=CG_P_A second=CG_P_B,CG_P_T\n", &sp, &err), 0);
	struct builtin_tried tried[64];
	int stages[64];
	int n = walk(&sp, tried, stages);
	CHECK(!tried[0].passed);
	int passed = 0;
	for (int i = 0; i < n; i++)
		passed += tried[i].passed;
	CHECK(passed > 0);
	builtin_space_release(&sp);
}

TEST(builtin_families_of_tasks)
{
	char *err = NULL;
	CHECK_STR(builtin_family_file(task_builtin("kb1/19_relu"), NULL, &err), "builtin/elementwise.cu");
	CHECK_STR(builtin_family_file(task_builtin("kb1/5_scalar_mul"), NULL, &err), "builtin/elementwise.cu");
	CHECK_STR(builtin_family_file(task_builtin("kb1/23_softmax"), NULL, &err), "builtin/rowwise.cu");
	CHECK_STR(builtin_family_file(task_builtin("kb1/4_matvec"), NULL, &err), "builtin/matvec.cu");
	CHECK_STR(builtin_family_file(task_builtin("kb1/12_diag_matmul"), NULL, &err), "builtin/diag_matmul.cu");
	CHECK_STR(builtin_family_file(task_builtin("kb1/1_square_matmul"), NULL, &err), "builtin/gemm_simt.cu");
	CHECK_STR(builtin_family_file(task_builtin("hopper/gemm_fp8_8192"), "sm_90a", &err), "builtin/gemm_sm90.cu");
	/* no TMA/WGMMA on sm_80: the widening SIMT family takes 16-bit GEMMs there */
	CHECK_STR(builtin_family_file(task_builtin("hopper/gemm_bf16_4096"), "sm_80", &err), "builtin/gemm_simt.cu");
	CHECK_STR(builtin_family_file(task_builtin("hopper/gemm_bf16_4096"), "sm_90a", &err), "builtin/gemm_sm90.cu");
	struct task *t = task_dup(task_builtin("hopper/gemm_fp8_8192"));
	t->b_layout = LAYOUT_ROW; /* fp8 WGMMA reads K-major operands: B is transposed first */
	CHECK_STR(builtin_family_file(t, NULL, &err), "builtin/gemm_sm90.cu");
	task_free(t);
}

/* Issue 20: a 16-bit, fp8 or tf32 GEMM whose operand rows (K; M of a col A; N of a row B) are
 * not a multiple of 16 bytes runs on gemm_sm90 (its pad path copies those operands to padded
 * rows first), not on the SIMT fallback; strict fp32 and layouts WGMMA cannot read stay on
 * gemm_simt, and so does every GEMM without sm_90a. */
TEST(builtin_gemm_family_follows_alignment)
{
	char *err = NULL;
	struct task *t = task_dup(task_builtin("hopper/gemm_bf16_4096"));
	t->m = 2048, t->n = 3072, t->k = 1999; /* the class example: bf16, odd K */
	CHECK_STR(builtin_family_file(t, "sm_90a", &err), "builtin/gemm_sm90.cu");
	CHECK_STR(builtin_family_file(t, NULL, &err), "builtin/gemm_sm90.cu");
	CHECK_STR(builtin_family_file(t, "sm_80", &err), "builtin/gemm_simt.cu");
	t->k = 4096;
	t->a_layout = LAYOUT_COL;
	t->m = 1001; /* A [K,M]: its rows are M long */
	CHECK_STR(builtin_family_file(t, "sm_90a", &err), "builtin/gemm_sm90.cu");
	t->a_layout = LAYOUT_ROW;
	t->in_dtype = t->out_dtype = DT_FP16, t->precision = PREC_FP16;
	t->b_layout = LAYOUT_ROW;
	t->n = 4097; /* fp16, B [K,N] with N odd */
	CHECK_STR(builtin_family_file(t, "sm_90a", &err), "builtin/gemm_sm90.cu");
	t->batch = 3, t->k = 63; /* batched, odd K and N */
	CHECK_STR(builtin_family_file(t, "sm_90a", &err), "builtin/gemm_sm90.cu");
	t->batch = 1, t->m = 1, t->k = 1027, t->a_layout = LAYOUT_COL; /* decode, A [K,1] */
	CHECK_STR(builtin_family_file(t, "sm_90a", &err), "builtin/gemm_sm90.cu");
	t->k = 0;
	CHECK_STR(builtin_family_file(t, "sm_90a", &err), "builtin/gemm_simt.cu");
	task_free(t);

	/* fp8 e4m3: odd K and a multiple of 8 that is not one of 16 one-byte elements both pad;
	 * fp8 WGMMA reads K-major operands: another layout is transposed into the workspace */
	t = task_dup(task_builtin("hopper/gemm_fp8_8192"));
	t->k = 4104;
	CHECK_STR(builtin_family_file(t, "sm_90a", &err), "builtin/gemm_sm90.cu");
	t->k = 520, t->m = 256, t->n = 384;
	CHECK_STR(builtin_family_file(t, "sm_90a", &err), "builtin/gemm_sm90.cu");
	t->b_layout = LAYOUT_ROW;
	CHECK_STR(builtin_family_file(t, "sm_90a", &err), "builtin/gemm_sm90.cu");
	task_free(t);

	/* strict fp32 at any alignment: SIMT (no tensor cores under the strict contract) */
	t = task_dup(task_builtin("kb1/1_square_matmul"));
	t->k = 1999;
	CHECK_STR(builtin_family_file(t, "sm_90a", &err), "builtin/gemm_simt.cu");
	t->b_layout = LAYOUT_COL;
	CHECK_STR(builtin_family_file(t, "sm_90a", &err), "builtin/gemm_simt.cu");
	task_free(t);

	/* the space of the fallback parses for a 16-bit task, and the move is gemm_sm90 ->
	 * gemm_simt, nothing after it */
	struct builtin_space sp, next;
	t = task_dup(task_builtin("hopper/gemm_bf16_4096"));
	CHECK_INT(builtin_space_for(t, "sm_90a", NULL, &sp, &err), 0);
	CHECK_STR(sp.family, "gemm_sm90");
	CHECK_INT(builtin_space_fallback(t, &sp, NULL, &next, &err), 1);
	CHECK_STR(next.family, "gemm_simt");
	struct builtin_space none;
	CHECK_INT(builtin_space_fallback(t, &next, NULL, &none, &err), 0);
	builtin_space_release(&next);
	builtin_space_release(&sp);
	task_free(t);
}

/* A family is abandoned when every candidate tried was refused as unsupported, not when one
 * of several was (a split-K whose workspace is too large) nor when one passed. */
TEST(builtin_unsupported_family)
{
	struct builtin_tried tr[3] = { 0 };
	CHECK_INT(builtin_unsupported(tr, 0), 0);
	tr[0].unsupported = 1;
	CHECK_INT(builtin_unsupported(tr, 1), 1);
	tr[1].unsupported = 1;
	CHECK_INT(builtin_unsupported(tr, 2), 1);
	tr[2].passed = 1;
	CHECK_INT(builtin_unsupported(tr, 3), 0);
	tr[2].passed = 0; /* incorrect, not refused */
	CHECK_INT(builtin_unsupported(tr, 3), 0);
}

TEST(builtin_policy_stops_at_the_roofline_between_stages)
{
	struct builtin_space sp;
	char *err = NULL;
	CHECK_INT(parse(tmpl, &sp, &err), 0);
	const struct task *t = task_builtin("kb1/19_relu");
	struct builtin_tried tried[8];
	struct builtin_config c;
	int stage;
	char *what = NULL;
	/* a start at 98% of the roofline ends the walk at once */
	CHECK_INT(builtin_next(&sp, t, tried, 0, &c, &stage, &what), 0);
	free(what);
	tried[0] = (struct builtin_tried){ c, 1, 2.0, 0.98, 0 };
	CHECK_INT(builtin_next(&sp, t, tried, 1, &c, &stage, &what), 2);
	/* at 90% it goes on; a stage-1 candidate at 99% does not cut its own stage short ... */
	tried[0].roof = 0.90;
	CHECK_INT(builtin_next(&sp, t, tried, 1, &c, &stage, &what), 0);
	free(what);
	CHECK_INT(stage, 1);
	tried[1] = (struct builtin_tried){ c, 1, 1.0, 0.99, 0 };
	CHECK_INT(builtin_next(&sp, t, tried, 2, &c, &stage, &what), 0);
	free(what);
	CHECK_INT(stage, 1);
	/* ... but ends the walk once the stage is measured; a failed fast one does not count */
	tried[2] = (struct builtin_tried){ c, 0, 0.5, 0.99, 0 };
	CHECK_INT(builtin_next(&sp, t, tried, 3, &c, &stage, &what), 2);
	tried[1].roof = 0.5;
	CHECK_INT(builtin_next(&sp, t, tried, 3, &c, &stage, &what), 0);
	free(what);
	CHECK_INT(stage, 2);
	builtin_space_release(&sp);
}

/* the tile stage of the SIMT GEMM around its start: how many smaller tiles it tries (-1: the
 * family does not load, or a stage-1 candidate changes something else than TILE and BK) */
static int smaller_tiles_tried(const struct task *t)
{
	struct builtin_space sp;
	char *err = NULL;
	if (builtin_space_for(t, NULL, NULL, &sp, &err)) {
		free(err);
		return -1;
	}
	struct builtin_tried tried[32];
	struct builtin_config c;
	int stage, n = 0, smaller = 0;
	char *what = NULL;
	while (n < 32 && !builtin_next(&sp, t, tried, n, &c, &stage, &what)) {
		if (stage == 1 && !strstr(what, "CG_P_TILE") && !strstr(what, "CG_P_BK"))
			smaller = -1000;
		smaller += stage == 1 && strstr(what, "CG_P_TILE 128x128 ->") != NULL;
		free(what);
		tried[n] = (struct builtin_tried){ c, 1, 1.0, -1, 0 };
		n++;
	}
	builtin_space_release(&sp);
	return smaller < 0 ? -1 : smaller;
}

TEST(builtin_gemm_tries_smaller_tiles_only_when_the_grid_is_thin)
{
	/* 4096^2: 1024 tiles of 128x128, over seven waves: smaller tiles cannot help */
	CHECK_INT(smaller_tiles_tried(task_builtin("kb1/1_square_matmul")), 0);
	struct task *t = task_dup(task_builtin("kb1/1_square_matmul"));
	t->m = t->n = 1024; /* 64 tiles on 132 SMs */
	CHECK(smaller_tiles_tried(t) > 0);
	task_free(t);
}

/* The start point builtin_start gives the task, formatted into sb. */
static const char *start_of(const struct builtin_space *sp, const struct task *t, struct strbuf *sb)
{
	struct builtin_config c;
	strbuf_reset(sb);
	builtin_start(sp, t, &c);
	builtin_config_format(sp, &c, sb);
	return sb->buf;
}

TEST(builtin_gemm_starts_split_k_when_the_tiles_cannot_fill_the_gpu)
{
	struct builtin_space sp;
	char *err = NULL;
	struct builtin_config c;
	struct strbuf s = STRBUF_INIT;
	/* kb1/6: 256x256 from K = 524288 is four 128x128 tiles: 64 k slices, 256 CTAs */
	CHECK_INT(builtin_space_for(task_builtin("kb1/6_matmul_large_k"), NULL, NULL, &sp, &err), 0);
	builtin_start(&sp, task_builtin("kb1/6_matmul_large_k"), &c);
	builtin_config_format(&sp, &c, &s);
	CHECK_HAS(s.buf, "CG_P_SPLIT_K=64");
	/* 4096^2 fills the GPU: the declared start, no split */
	strbuf_reset(&s);
	builtin_start(&sp, task_builtin("kb1/1_square_matmul"), &c);
	builtin_config_format(&sp, &c, &s);
	CHECK_HAS(s.buf, "CG_P_SPLIT_K=1");
	CHECK_HAS(s.buf, "CG_P_TILE=128x128 ");
	/* 1000^3: 64 tiles, K too short to split: 128 x 64 tiles, 128 of them (0.97 of a wave);
	 * 512^3: 16 tiles: 64 x 64, 64 of them */
	struct task *t = task_dup(task_builtin("kb1/1_square_matmul"));
	t->m = t->n = t->k = 1000;
	CHECK_HAS(start_of(&sp, t, &s), "CG_P_TILE=128x64 ");
	CHECK_HAS(s.buf, "CG_P_SPLIT_K=1");
	t->m = t->n = t->k = 512;
	CHECK_HAS(start_of(&sp, t, &s), "CG_P_TILE=64x64 ");
	task_free(t);
	strbuf_release(&s);
	builtin_space_release(&sp);
}

/* Issue 20, small M: a decode GEMM (one 128-row M tile) starts gemm_sm90 at BN = 128 without
 * CTA pairs along M, and the walk never tries a pair (its second CTA would multiply zero rows);
 * a prefill GEMM keeps the declared start. */
TEST(builtin_sm90_decode_start)
{
	struct builtin_space sp;
	char *err = NULL;
	struct task *t = task_dup(task_builtin("hopper/gemm_bf16_4096"));
	t->b_layout = LAYOUT_COL;
	CHECK_INT(builtin_space_for(t, "sm_90a", NULL, &sp, &err), 0);
	struct builtin_config c;
	struct strbuf sb = STRBUF_INIT;
	builtin_start(&sp, t, &c);
	builtin_config_format(&sp, &c, &sb);
	CHECK_HAS(sb.buf, "CG_P_BN=256");
	CHECK_HAS(sb.buf, "CG_P_CLUSTER_M=2");
	strbuf_reset(&sb);
	t->m = 16;
	builtin_start(&sp, t, &c);
	builtin_config_format(&sp, &c, &sb);
	CHECK_HAS(sb.buf, "CG_P_BN=128");
	CHECK_HAS(sb.buf, "CG_P_CLUSTER_M=1");
	struct builtin_tried tried[128];
	int n = 0, stage, pairs = 0;
	char *what = NULL;
	while (n < 128 && !builtin_next(&sp, t, tried, n, &c, &stage, &what)) {
		free(what);
		strbuf_reset(&sb);
		builtin_config_format(&sp, &c, &sb);
		pairs += strstr(sb.buf, "CG_P_CLUSTER_M=2") != NULL;
		tried[n] = (struct builtin_tried){ c, 1, 1.0 + n, -1, 0 };
		n++;
	}
	CHECK(n > 5);
	CHECK_INT(pairs, 0);
	strbuf_release(&sb);
	builtin_space_release(&sp);
	task_free(t);
}

/* Issue 20, tf32: an fp32 GEMM under the `tf32` contract runs on tensor cores (gemm_sm90 with
 * CG_T_IN cute::tfloat32_t; an MN-major operand, B row as `A @ B` holds it, transposed first;
 * a K that is not a multiple of 4 through its pad path); strict fp32 stays on gemm_simt; BK = 128, where two 4-byte
 * stages do not fit, is never tried. */
TEST(builtin_tf32_on_tensor_cores)
{
	char *err = NULL;
	struct task *t = task_dup(task_builtin("kb1/1_square_matmul"));
	CHECK_STR(builtin_family_file(t, "sm_90a", &err), "builtin/gemm_simt.cu"); /* strict */
	t->precision = PREC_TF32;
	CHECK_STR(builtin_family_file(t, "sm_90a", &err), "builtin/gemm_sm90.cu"); /* B row */
	t->a_layout = LAYOUT_COL;
	CHECK_STR(builtin_family_file(t, "sm_90a", &err), "builtin/gemm_sm90.cu"); /* and A col */
	t->a_layout = LAYOUT_ROW;
	t->b_layout = LAYOUT_COL;
	CHECK_STR(builtin_family_file(t, "sm_90a", &err), "builtin/gemm_sm90.cu");
	CHECK_STR(builtin_family_file(t, "sm_80", &err), "builtin/gemm_simt.cu");
	t->k = 4098; /* rows not a multiple of 4 floats: the pad path */
	CHECK_STR(builtin_family_file(t, "sm_90a", &err), "builtin/gemm_sm90.cu");
	t->k = 4096;
	struct builtin_space sp;
	CHECK_INT(builtin_space_for(t, "sm_90a", NULL, &sp, &err), 0);
	struct builtin_config c;
	struct strbuf sb = STRBUF_INIT;
	builtin_start(&sp, t, &c);
	builtin_render(&sp, t, &c, &sb);
	CHECK_HAS(sb.buf, "#define CG_T_IN cute::tfloat32_t\n#define CG_T_OUT float\n");
	/* 32-deep k-tiles of 128 x 128: six stages in shared memory (two at 128 x 256 x 64) */
	CHECK_HAS(sb.buf, "#define CG_P_BN 128\n#define CG_P_BK 32\n");
	CHECK_HAS(sb.buf, "#define CG_P_STAGES 6\n");
	struct builtin_tried tried[128];
	int n = 0, stage, bk128 = 0;
	char *what = NULL;
	while (n < 128 && !builtin_next(&sp, t, tried, n, &c, &stage, &what)) {
		free(what);
		strbuf_reset(&sb);
		builtin_config_format(&sp, &c, &sb);
		bk128 += strstr(sb.buf, "CG_P_BK=128") != NULL;
		tried[n] = (struct builtin_tried){ c, 1, 1.0 + n, -1, 0 };
		n++;
	}
	CHECK(n > 3);
	CHECK_INT(bk128, 0);
	strbuf_release(&sb);
	builtin_space_release(&sp);
	task_free(t);
}

/* The lines of text that hold `has` and not `lacks`. */
static int lines_with(const char *text, const char *has, const char *lacks)
{
	int n = 0;
	for (const char *p = text; *p;) {
		const char *end = strchr(p, '\n');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char *line = xstrndup(p, len);
		n += strstr(line, has) && !strstr(line, lacks);
		free(line);
		p += len + (end != NULL);
	}
	return n;
}

/* Lines of text that hold both a and b. */
static int lines_with_both(const char *text, const char *a, const char *b)
{
	return lines_with(text, a, "\x01") - lines_with(text, a, b);
}

/* The configs a whole walk tries for t after `first` (none: from the start; each measured
 * slower than the last), formatted one a line into out. */
static int walk_from(const struct builtin_space *sp, const struct task *t,
		     const struct builtin_config *first, struct strbuf *out)
{
	struct builtin_tried tried[128];
	struct builtin_config c;
	int n = 0, stage;
	char *what = NULL;
	if (first)
		tried[n++] = (struct builtin_tried){ *first, 1, 1.0, -1, 0 };
	while (n < 128 && !builtin_next(sp, t, tried, n, &c, &stage, &what)) {
		free(what);
		builtin_config_format(sp, &c, out);
		strbuf_addch(out, '\n');
		tried[n] = (struct builtin_tried){ c, 1, 1.0 + n, -1, 0 };
		n++;
	}
	return n;
}

static int walk_all(const struct builtin_space *sp, const struct task *t, struct strbuf *out)
{
	return walk_from(sp, t, NULL, out);
}

/* The smem order of MN-major atoms is tried only where an operand is read MN-major: a 16-bit
 * A @ B (B row), not nn.Linear's A @ W^T (B col), nor tf32 or fp8 whose MN-major operands are
 * transposed first (the same kernel again, a compile and an evaluation for nothing). */
TEST(builtin_mn_order_only_for_mn_major)
{
	struct builtin_space sp;
	struct strbuf sb = STRBUF_INIT;
	char *err = NULL;
	struct task *t = task_dup(task_builtin("hopper/gemm_bf16_4096"));
	const struct {
		enum dtype in;
		enum precision prec;
		enum layout b;
		int tried;
	} cases[] = {
		{ DT_BF16, PREC_BF16, LAYOUT_ROW, 1 },
		{ DT_BF16, PREC_BF16, LAYOUT_COL, 0 },
		{ DT_FP32, PREC_TF32, LAYOUT_ROW, 0 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		t->in_dtype = cases[i].in;
		t->out_dtype = cases[i].in == DT_FP32 ? DT_FP32 : t->out_dtype;
		t->precision = cases[i].prec;
		t->a_layout = LAYOUT_ROW;
		t->b_layout = cases[i].b;
		CHECK_INT(builtin_space_for(t, "sm_90a", NULL, &sp, &err), 0);
		CHECK_STR(sp.family, "gemm_sm90");
		struct builtin_config c;
		builtin_start(&sp, t, &c);
		strbuf_reset(&sb);
		builtin_config_format(&sp, &c, &sb);
		const char *start = strstr(sb.buf, "CG_P_MN_ORDER=");
		CHECK(start != NULL);
		char other[32];
		snprintf(other, sizeof(other), "CG_P_MN_ORDER=%c", start && start[14] == '1' ? '0' : '1');
		strbuf_reset(&sb);
		CHECK(walk_all(&sp, t, &sb) > 3);
		CHECK_INT(strstr(sb.buf, other) != NULL, cases[i].tried);
		builtin_space_release(&sp);
	}
	strbuf_release(&sb);
	task_free(t);
}

/* Issue 20, softmax rows: a short row starts one per warp in registers (mode 2), a medium one
 * one per CTA in registers (mode 3, the fewest threads holding it at 4 vectors each), long rows
 * one read over the smallest cluster whose slices fit 100 KB and whose CTAs number 8 an SM
 * (a 1.5 MB row: 16), few rows two reads over CTAs enough to cover the SMs (mode 0); register
 * modes are never tried
 * where the row does not fit them (the kernel would run mode 1 again). */
TEST(builtin_softmax_start_by_row_length)
{
	struct builtin_space sp;
	char *err = NULL;
	struct task *t = task_dup(task_builtin("kb1/23_softmax"));
	CHECK_INT(builtin_space_for(t, "sm_90a", NULL, &sp, &err), 0);
	struct builtin_config c;
	struct strbuf sb = STRBUF_INIT;
	static const struct {
		enum dtype dt;
		int64_t rows, cols;
		const char *start;
	} cases[] = {
		{ DT_FP16, 65536, 2048, "CG_P_THREADS=128 CG_P_MODE=2 CG_P_CLUSTER=1" },
		{ DT_FP16, 8, 128, "CG_P_THREADS=128 CG_P_MODE=2 CG_P_CLUSTER=1" },
		{ DT_FP32, 4096, 1024, "CG_P_THREADS=128 CG_P_MODE=2 CG_P_CLUSTER=1" },
		{ DT_FP16, 4096, 4096, "CG_P_THREADS=128 CG_P_MODE=3 CG_P_CLUSTER=1" },
		{ DT_BF16, 512, 8192, "CG_P_THREADS=256 CG_P_MODE=3 CG_P_CLUSTER=1" },
		{ DT_FP32, 4096, 16384, "CG_P_THREADS=1024 CG_P_MODE=3 CG_P_CLUSTER=1" },
		{ DT_FP16, 64, 8192, "CG_P_THREADS=256 CG_P_MODE=0 CG_P_CLUSTER=1" },
		{ DT_BF16, 256, 32768, "CG_P_THREADS=256 CG_P_MODE=0 CG_P_CLUSTER=1" },
		{ DT_BF16, 32, 131072, "CG_P_THREADS=256 CG_P_MODE=0 CG_P_CLUSTER=1" },
		{ DT_BF16, 512, 128256, "CG_P_THREADS=256 CG_P_MODE=1 CG_P_CLUSTER=4" },
		{ DT_BF16, 2048, 128256, "CG_P_THREADS=256 CG_P_MODE=1 CG_P_CLUSTER=4" },
		{ DT_FP16, 4096, 65536, "CG_P_THREADS=256 CG_P_MODE=1 CG_P_CLUSTER=2" },
		{ DT_FP32, 4096, 393216, "CG_P_THREADS=256 CG_P_MODE=1 CG_P_CLUSTER=16" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		t->in_dtype = t->out_dtype = cases[i].dt;
		t->ndim = 2;
		t->shape[0] = cases[i].rows;
		t->shape[1] = cases[i].cols;
		strbuf_reset(&sb);
		builtin_start(&sp, t, &c);
		builtin_config_format(&sp, &c, &sb);
		if (strcmp(sb.buf, cases[i].start))
			test_fail(__FILE__, __LINE__, "%lldx%lld: start %s, expected %s",
				  (long long)cases[i].rows, (long long)cases[i].cols, sb.buf, cases[i].start);
	}
	/* fp16 x 4096: one row per warp needs 16 vectors a lane, which 128 or 256 threads hold;
	 * at 512 or 1024 threads a lane holds 4 or 2: never tried */
	t->in_dtype = t->out_dtype = DT_FP16;
	t->shape[0] = 4096;
	t->shape[1] = 4096;
	strbuf_reset(&sb);
	CHECK(walk_all(&sp, t, &sb) > 6);
	CHECK_HAS(sb.buf, "CG_P_THREADS=128 CG_P_MODE=2 CG_P_CLUSTER=1\n");
	CHECK(!strstr(sb.buf, "CG_P_THREADS=512 CG_P_MODE=2"));
	CHECK(!strstr(sb.buf, "CG_P_THREADS=1024 CG_P_MODE=2"));
	CHECK(!strstr(sb.buf, "CG_P_MODE=3 CG_P_CLUSTER=2"));
	/* 393216 fp32 fits no register mode */
	t->in_dtype = t->out_dtype = DT_FP32;
	t->shape[1] = 393216;
	strbuf_reset(&sb);
	walk_all(&sp, t, &sb);
	CHECK(!strstr(sb.buf, "CG_P_MODE=2") && !strstr(sb.buf, "CG_P_MODE=3"));
	strbuf_release(&sb);
	builtin_space_release(&sp);
	task_free(t);
}

/* Issue 20, small M: an LLM-inference GEMM whose 128 x 256 tiles leave SMs idle (M = 256,
 * N = 5120: 40 tiles on 132 SMs) starts gemm_sm90 at 128 x 128 (80 tiles; 160 of 64 x 128 fill
 * their two waves no better), at N = 2048 at 64 x 128 (64 tiles against 32); a decode GEMM
 * (M <= 64) at BM = 64; a square 4096 GEMM keeps 128 x 256 and never tries 64-row tiles. */
TEST(builtin_sm90_small_m_tiles)
{
	struct builtin_space sp;
	char *err = NULL;
	struct task *t = task_dup(task_builtin("hopper/gemm_bf16_4096"));
	t->b_layout = LAYOUT_COL;
	CHECK_INT(builtin_space_for(t, "sm_90a", NULL, &sp, &err), 0);
	struct builtin_config c;
	struct strbuf sb = STRBUF_INIT;
	builtin_start(&sp, t, &c);
	builtin_config_format(&sp, &c, &sb);
	CHECK_HAS(sb.buf, "CG_P_BM=128 CG_P_BN=256");
	strbuf_reset(&sb);
	CHECK(walk_all(&sp, t, &sb) > 5);
	/* 64-row tiles only as the two-CTAs-an-SM point (64 x 128, CG_P_CTAS = 2) or in
	 * ping-pong at 64 x 256 (two in flight a CTA) */
	CHECK_INT(lines_with(sb.buf, "CG_P_BM=64", "CG_P_CTAS=2") -
			  lines_with_both(sb.buf, "CG_P_BM=64 CG_P_BN=256", "CG_P_PINGPONG=1"),
		  0);
	CHECK(lines_with_both(sb.buf, "CG_P_BM=64 CG_P_BN=256", "CG_P_PINGPONG=1") > 0);
	CHECK(lines_with(sb.buf, "CG_P_BM=64 CG_P_BN=128", "CG_P_CTAS=1") > 0);
	CHECK_INT(lines_with(sb.buf, "CG_P_CTAS=2", "CG_P_BM=64 CG_P_BN=128"), 0);
	CHECK(!strstr(sb.buf, "CG_P_SPLIT_K=2"));
	CHECK(!strstr(sb.buf, "CG_P_REDUCE=1")); /* with split-K only */
	CHECK(!strstr(sb.buf, "CG_P_BK=32")); /* for 4-byte tf32 only */
	/* a GELU epilogue starts at 128 x 128 (half the epilogue a tile); ReLU keeps 128 x 256 */
	t->epi_act = ACT_GELU_TANH;
	CHECK_HAS(start_of(&sp, t, &sb), "CG_P_BM=128 CG_P_BN=128");
	t->epi_act = ACT_RELU;
	CHECK_HAS(start_of(&sp, t, &sb), "CG_P_BM=128 CG_P_BN=256");
	t->epi_act = ACT_NONE;
	t->m = 256;
	t->n = 5120;
	CHECK_HAS(start_of(&sp, t, &sb), "CG_P_BM=128 CG_P_BN=128");
	CHECK_HAS(sb.buf, "CG_P_CLUSTER_M=2");
	t->n = 2048;
	CHECK_HAS(start_of(&sp, t, &sb), "CG_P_BM=64 CG_P_BN=128");
	t->n = 5120;
	/* fp8 at 4096^3: 128 x 128 x 128 (one promotion per 128 of K, not per 64) */
	struct task *f8 = task_dup(task_builtin("hopper/gemm_fp8_8192"));
	f8->m = f8->n = f8->k = 4096;
	CHECK_HAS(start_of(&sp, f8, &sb), "CG_P_BM=128 CG_P_BN=128 CG_P_BK=128 ");
	task_free(f8);
	t->m = 512; /* 128 x 256: 4 x 20 tiles, too few; 128 x 128: 4 x 40, enough */
	CHECK_HAS(start_of(&sp, t, &sb), "CG_P_BM=128 CG_P_BN=128");
	t->m = 16;
	CHECK_HAS(start_of(&sp, t, &sb), "CG_P_BM=64 CG_P_BN=128");
	CHECK_HAS(sb.buf, "CG_P_CLUSTER_M=1");
	/* decode, N = 5120: 40 tiles, so the walk tries split-K (2 and 4 k-ranges) */
	strbuf_reset(&sb);
	walk_all(&sp, t, &sb);
	CHECK_HAS(sb.buf, "CG_P_SPLIT_K=2");
	CHECK_HAS(sb.buf, "CG_P_SPLIT_K=4");
	strbuf_release(&sb);
	builtin_space_release(&sp);
	task_free(t);
}

/* Ping-pong (CG_P_PINGPONG = 1: two MMA warpgroups on tiles of their own, one's main loop in
 * the other's epilogue) is tried in the tile stage where one warpgroup holds a tile's
 * accumulators (BM x BN up to 128 x 128, 64 x 128 for fp8), one CTA an SM, persistent, not
 * with the last-unit reduction at 128 rows (its sums spill); the start of 16-bit GEMMs whose
 * tiles fill the GPU at K <= 1024 only. */
TEST(builtin_sm90_pingpong)
{
	struct builtin_space sp;
	char *err = NULL;
	struct strbuf sb = STRBUF_INIT;
	struct task *t = task_dup(task_builtin("hopper/gemm_bf16_4096"));
	t->b_layout = LAYOUT_COL;
	CHECK_INT(builtin_space_for(t, "sm_90a", NULL, &sp, &err), 0);
	CHECK_HAS(start_of(&sp, t, &sb), "CG_P_PINGPONG=0");
	strbuf_reset(&sb);
	walk_all(&sp, t, &sb);
	/* from the 128 x 256 start: 128 x 128 in ping-pong, never 128 x 256 */
	CHECK(lines_with_both(sb.buf, "CG_P_BM=128 CG_P_BN=128", "CG_P_PINGPONG=1") > 0);
	CHECK_INT(lines_with_both(sb.buf, "CG_P_BM=128 CG_P_BN=256", "CG_P_PINGPONG=1"), 0);
	CHECK_INT(lines_with_both(sb.buf, "CG_P_CTAS=2", "CG_P_PINGPONG=1"), 0);
	CHECK_INT(lines_with_both(sb.buf, "CG_P_PERSISTENT=0", "CG_P_PINGPONG=1"), 0);
	/* bias + GELU at K = 768 (start 128 x 128): ping-pong at that tile */
	t->k = 768;
	t->n = 3072;
	t->m = 6144;
	t->epi_bias = 1;
	t->epi_act = ACT_GELU_TANH;
	CHECK_HAS(start_of(&sp, t, &sb), "CG_P_BM=128 CG_P_BN=128 CG_P_BK=64");
	CHECK_HAS(sb.buf, "CG_P_PERSISTENT=1");
	CHECK_HAS(sb.buf, "CG_P_CTAS=1 CG_P_REDUCE=0 CG_P_PINGPONG=1");
	strbuf_reset(&sb);
	walk_all(&sp, t, &sb);
	CHECK(lines_with_both(sb.buf, "CG_P_BM=128 CG_P_BN=128 CG_P_BK=64", "CG_P_PINGPONG=0") > 0);
	/* the plain GEMM at K = 768 too (128 x 128, not the declared 128 x 256); K = 2048, fp8
	 * and tf32 at K = 768 do not start in ping-pong; nor does small M (split-K start) */
	t->epi_bias = 0;
	t->epi_act = ACT_NONE;
	CHECK_HAS(start_of(&sp, t, &sb), "CG_P_BM=128 CG_P_BN=128 CG_P_BK=64");
	CHECK_HAS(sb.buf, "CG_P_PINGPONG=1");
	t->k = 2048;
	CHECK_HAS(start_of(&sp, t, &sb), "CG_P_BM=128 CG_P_BN=256");
	CHECK_HAS(sb.buf, "CG_P_PINGPONG=0");
	t->k = 768;
	t->m = 256;
	CHECK_HAS(start_of(&sp, t, &sb), "CG_P_PINGPONG=0");
	t->m = 6144;
	struct task *f8k = task_dup(task_builtin("hopper/gemm_fp8_8192"));
	f8k->m = 6144, f8k->n = 3072, f8k->k = 768;
	CHECK_HAS(start_of(&sp, f8k, &sb), "CG_P_PINGPONG=0");
	task_free(f8k);
	/* decode M = 128, split-K start: ping-pong with the last-unit reduction only at 64 rows */
	t->epi_bias = 0;
	t->epi_act = ACT_NONE;
	t->m = 128, t->n = 6144, t->k = 4096;
	strbuf_reset(&sb);
	walk_all(&sp, t, &sb);
	CHECK(lines_with_both(sb.buf, "CG_P_PINGPONG=1", "CG_P_REDUCE=0") > 0);
	CHECK_INT(lines_with_both(sb.buf, "CG_P_BM=128", "CG_P_REDUCE=1 CG_P_PINGPONG=1"), 0);
	/* fp8: ping-pong at 64 x 128 only (two sets of accumulators), also at 4096^3, where
	 * 128-row tiles fill the GPU twice over */
	struct task *f8 = task_dup(task_builtin("hopper/gemm_fp8_8192"));
	f8->m = f8->n = f8->k = 4096;
	strbuf_reset(&sb);
	walk_all(&sp, f8, &sb);
	CHECK_INT(lines_with_both(sb.buf, "CG_P_BM=128", "CG_P_PINGPONG=1"), 0);
	CHECK(lines_with_both(sb.buf, "CG_P_BM=64 CG_P_BN=128", "CG_P_PINGPONG=1") > 0);
	CHECK_INT(lines_with_both(sb.buf, "CG_P_BM=64", "CG_P_PINGPONG=0"), 0);
	task_free(f8);
	strbuf_release(&sb);
	builtin_space_release(&sp);
	task_free(t);
}

/* Issue 20, decode: a start whose tiles do not cover the SMs starts split-K, with the k-ranges
 * that give the busiest SM the least work (M = 16, N = 4096, K = 4096: 32 tiles of 64 x 128,
 * 4 ranges = 128 units in one wave; N = 6144: 48 tiles, 8 ranges = 384 units in 3 waves, 3/8
 * of a tile per SM); fewer where the partial sums would move more than a quarter of the bytes
 * of A and B (M = 128), none where even 2 would (M = 128, K = 512),
 * or the tiles fill the GPU; a 128-row tile is never tried for M <= 64. */
TEST(builtin_sm90_decode_split_start)
{
	struct builtin_space sp;
	char *err = NULL;
	struct task *t = task_dup(task_builtin("hopper/gemm_bf16_4096"));
	t->b_layout = LAYOUT_COL;
	t->m = 16;
	CHECK_INT(builtin_space_for(t, "sm_90a", NULL, &sp, &err), 0);
	struct builtin_config c;
	struct strbuf sb = STRBUF_INIT;
	builtin_start(&sp, t, &c);
	builtin_config_format(&sp, &c, &sb);
	CHECK_HAS(sb.buf, "CG_P_BM=64 CG_P_BN=128");
	CHECK_HAS(sb.buf, "CG_P_SPLIT_K=4 ");
	t->n = 6144;
	CHECK_HAS(start_of(&sp, t, &sb), "CG_P_SPLIT_K=8 ");
	strbuf_reset(&sb);
	walk_all(&sp, t, &sb);
	CHECK(!strstr(sb.buf, "CG_P_BM=128"));
	CHECK_HAS(sb.buf, "CG_P_SPLIT_K=3 ");
	/* the reduction in the last unit of a tile (CG_P_REDUCE=1) lost to the second kernel
	 * on the H100 wherever it ran: the walk never turns it on, nor does the start; asked
	 * for, the walk may turn it off (with split-K: without, it is the same kernel) */
	CHECK(!strstr(sb.buf, "CG_P_REDUCE=1"));
	CHECK_HAS(start_of(&sp, t, &sb), "CG_P_REDUCE=0");
	{
		struct builtin_config on;
		builtin_start(&sp, t, &on);
		char *perr = NULL;
		CHECK(builtin_config_parse(&sp, "CG_P_REDUCE=1", &on, &perr) == 0);
		free(perr);
		strbuf_reset(&sb);
		walk_from(&sp, t, &on, &sb);
		CHECK_HAS(sb.buf, "CG_P_REDUCE=0");
		CHECK_INT(lines_with(sb.buf, "CG_P_SPLIT_K=1 ", "CG_P_REDUCE=0"), 0);
	}
	/* M = 128, N = 6144, K = 4096 (llama8b qkv): 48 tiles, 8 ranges would write and read
	 * 50 MB of partials beside A's and B's 51 MB (0.50x cuBLASLt on the H100 against 0.72x
	 * without); within a quarter of A and B: 2 */
	t->m = 128, t->k = 4096;
	CHECK_HAS(start_of(&sp, t, &sb), "CG_P_SPLIT_K=2 ");
	t->m = 128, t->n = 4096, t->k = 512; /* 32 tiles; 4 ranges of partials = 16 MB > 5 MB */
	CHECK_HAS(start_of(&sp, t, &sb), "CG_P_SPLIT_K=1 ");
	t->m = 4096, t->k = 4096;
	CHECK_HAS(start_of(&sp, t, &sb), "CG_P_SPLIT_K=1 ");
	strbuf_release(&sb);
	builtin_space_release(&sp);
	task_free(t);
}
