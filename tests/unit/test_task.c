/* Tests of the task model: validation messages, defaults, canonical JSON round trips, the
 * kernel's arguments, work and traffic counts, and the built-in suites. */
#include "test.h"
#include "common/task.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdlib.h>

/* Parses text as if from "t.json"; returns the error (heap) or NULL when it parsed. */
static char *parse_err(const char *text)
{
	char *err = NULL;
	struct task *t = task_parse_json(text, strlen(text), "dir/t.json", &err);
	if (t) {
		task_free(t);
		return NULL;
	}
	return err ? err : xstrdup("(no message)");
}

/* The error for text contains want; also the message is one line. */
#define CHECK_ERR(text, want)                                                  \
	do {                                                                   \
		char *e_ = parse_err(text);                                    \
		if (!e_) {                                                     \
			test_fail(__FILE__, __LINE__, "parsed, expected error \"%s\"", want); \
			return;                                                \
		}                                                              \
		int ok_ = strstr(e_, want) && !strchr(e_, '\n');               \
		if (!ok_)                                                      \
			test_fail(__FILE__, __LINE__, "error \"%s\" does not contain \"%s\"", e_, want); \
		free(e_);                                                      \
		if (!ok_)                                                      \
			return;                                                \
	} while (0)

static struct task *parse_ok(const char *text)
{
	char *err = NULL;
	struct task *t = task_parse_json(text, strlen(text), "dir/t.json", &err);
	if (!t) {
		fprintf(stderr, "    unexpected error: %s\n", err);
		free(err);
	}
	return t;
}

#define GEMM "\"op\": \"gemm\", \"m\": 64, \"n\": 64, \"k\": 64"
#define ELEM "\"op\": \"elementwise\", \"shape\": [8, 8]"

TEST(task_error_missing_and_unknown_op)
{
	CHECK_ERR("{\"name\": \"x\"}", "task 'x': field 'op' is required (one of: gemm, matvec, "
		  "scalar_mul, diag_matmul, elementwise, softmax, log_softmax)");
	CHECK_ERR("{\"op\": \"conv2d\"}", "task 't': field 'op' must be one of: gemm, matvec, "
		  "scalar_mul, diag_matmul, elementwise, softmax, log_softmax (got \"conv2d\")");
	CHECK_ERR("{\"op\": 3}", "field 'op' must be one of:");
}

TEST(task_error_sizes)
{
	CHECK_ERR("{\"name\": \"g\", \"op\": \"gemm\", \"m\": -3, \"n\": 4, \"k\": 4}",
		  "task 'g': field 'm' must be a positive integer (got -3)");
	CHECK_ERR("{\"op\": \"gemm\", \"m\": 4, \"n\": 0, \"k\": 4}",
		  "field 'n' must be a positive integer (got 0)");
	CHECK_ERR("{\"op\": \"gemm\", \"m\": 4, \"n\": 4}",
		  "task 't': field 'k' is required and must be a positive integer");
	CHECK_ERR("{\"op\": \"gemm\", \"n\": 4, \"k\": 4}", "field 'm' is required");
	CHECK_ERR("{\"op\": \"gemm\", \"m\": \"4096\", \"n\": 4, \"k\": 4}",
		  "field 'm' must be a positive integer (got \"4096\")");
	CHECK_ERR("{\"op\": \"gemm\", \"m\": 4096.5, \"n\": 4, \"k\": 4}",
		  "field 'm' must be a positive integer (got 4096.5)");
	CHECK_ERR("{" GEMM ", \"batch\": 0}", "field 'batch' must be a positive integer (got 0)");
	CHECK_ERR("{\"op\": \"matvec\", \"m\": 4}", "field 'k' is required");
	CHECK_ERR("{\"op\": \"diag_matmul\", \"n\": 4, \"m\": null}",
		  "field 'm' must be a positive integer (got null)");
	CHECK_ERR("{\"op\": \"softmax\"}", "field 'shape' is required for op 'softmax'");
	CHECK_ERR("{\"op\": \"softmax\", \"shape\": []}",
		  "field 'shape' must be an array of 1 to 4 positive integers (got [])");
	CHECK_ERR("{\"op\": \"softmax\", \"shape\": [1, 2, 3, 4, 5]}", "field 'shape' must be");
	CHECK_ERR("{\"op\": \"softmax\", \"shape\": [4, 0]}",
		  "field 'shape[1]' must be a positive integer (got 0)");
	CHECK_ERR("{\"op\": \"scalar_mul\", \"shape\": [4]}",
		  "field 'scalar' is required and must be a number");
	CHECK_ERR("{\"op\": \"scalar_mul\", \"shape\": [4], \"scalar\": \"pi\"}",
		  "field 'scalar' must be a number (got \"pi\")");
}

TEST(task_error_overflow)
{
	/* 2^31 x 2^32 fp32: the element count fits in int64, the bytes do not */
	CHECK_ERR("{\"name\": \"big\", \"op\": \"gemm\", \"m\": 2147483648, \"n\": 1, \"k\": 4294967296}",
		  "task 'big': sizes too large: tensor 'A' [2147483648, 4294967296] of fp32 "
		  "overflows a 64-bit byte count");
	CHECK_ERR("{\"op\": \"elementwise\", \"activation\": \"relu\", "
		  "\"shape\": [4294967296, 4294967296]}", "tensor 'x' [4294967296, 4294967296]");
	CHECK_ERR("{\"op\": \"gemm\", \"n\": 1, \"k\": 1, \"m_dims\": [4294967296, 4294967296, 4]}",
		  "field 'm_dims' has a product that overflows 64 bits");
	CHECK_ERR("{\"op\": \"gemm\", \"m\": 99999999999999999999, \"n\": 1, \"k\": 1}",
		  "invalid JSON at line 1");
	/* batch multiplies in too */
	CHECK_ERR("{\"op\": \"gemm\", \"batch\": 1099511627776, \"m\": 1048576, \"n\": 1, \"k\": 1024}",
		  "overflows a 64-bit byte count");
}

TEST(task_error_unknown_and_misplaced_fields)
{
	CHECK_ERR("{\"op\": \"gemm\", \"m\": 4, \"n\": 4, \"kk\": 4}",
		  "task 't': unknown field 'kk'; did you mean 'k'? (fields here: name, description, op,");
	CHECK_ERR("{" GEMM ", \"aplha\": 2}", "unknown field 'aplha'; did you mean 'alpha'?");
	CHECK_ERR("{" GEMM ", \"zzzzzz\": 2}", "unknown field 'zzzzzz' (fields here:");
	CHECK_ERR("{\"suite\": \"mine\", \"tasks\": []}", "this is a suite file");
	/* keys are quoted safely: one line, cut when long (CHECK_ERR rejects newlines) */
	CHECK_ERR("{" GEMM ", \"a\\nb\": 1}", "unknown field 'a?b'");
	CHECK_ERR("{" GEMM ", \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\": 1}",
		  "unknown field 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...'");
	CHECK_ERR("{" ELEM ", \"activation\": \"relu\", \"params\": {\"\\u0001\": 1}}",
		  "field 'params.?' does not apply");
	CHECK_ERR("{" GEMM ", \"shape\": [4, 4]}",
		  "field 'shape' does not apply to op 'gemm'");
	CHECK_ERR("{" ELEM ", \"activation\": \"relu\", \"epilogue\": {\"bias\": true}}",
		  "field 'epilogue' does not apply to op 'elementwise'");
	CHECK_ERR("{" ELEM ", \"activation\": \"relu\", \"mask\": \"upper\"}",
		  "field 'mask' does not apply to op 'elementwise'");
	CHECK_ERR("{\"op\": \"matvec\", \"m\": 4, \"k\": 4, \"n\": 1}",
		  "field 'n' does not apply to op 'matvec'");
	CHECK_ERR("{" GEMM ", \"epilogue\": {\"bias\": true, \"act\": \"relu\"}}",
		  "unknown field 'epilogue.act' (fields here: bias, activation)");
	CHECK_ERR("{" GEMM ", \"epilogue\": {\"bais\": true}}",
		  "unknown field 'epilogue.bais'; did you mean 'epilogue.bias'?");
	CHECK_ERR("{" GEMM ", \"tolerance\": {\"rtol\": 1e-3, \"eps\": 1}}",
		  "unknown field 'tolerance.eps'");
}

TEST(task_error_enums)
{
	CHECK_ERR("{" GEMM ", \"dtype\": \"fp64\"}",
		  "field 'dtype' must be one of: fp32, fp16, bf16, fp8_e4m3 (got \"fp64\")");
	CHECK_ERR("{" GEMM ", \"dtype\": \"bf16\", \"out_dtype\": \"fp8_e4m3\"}",
		  "field 'out_dtype' must be one of: fp32, fp16, bf16 (got \"fp8_e4m3\")");
	CHECK_ERR("{" GEMM ", \"a_layout\": \"column\"}",
		  "field 'a_layout' must be one of: row, col (got \"column\")");
	CHECK_ERR("{" GEMM ", \"b_structure\": \"triangular\"}",
		  "field 'b_structure' must be one of: general, symmetric, upper, lower");
	CHECK_ERR("{" GEMM ", \"mask\": \"triu\"}", "field 'mask' must be one of: none, upper, lower");
	CHECK_ERR("{" GEMM ", \"precision\": \"fp64\"}",
		  "field 'precision' must be one of: strict, tf32, fp16, bf16, fp8");
	CHECK_ERR("{" ELEM ", \"activation\": \"swiss\"}",
		  "field 'activation' must be one of: relu, leaky_relu, sigmoid, tanh, swish, gelu, "
		  "gelu_tanh, selu, hardsigmoid, softplus, softsign, elu, hardtanh, mingpt_gelu, silu "
		  "(got \"swiss\")");
	CHECK_ERR("{" ELEM ", \"activation\": \"none\"}", "field 'activation' must be one of: relu,");
	CHECK_ERR("{" ELEM "}", "field 'activation' is required (one of: relu,");
	CHECK_ERR("{" GEMM ", \"epilogue\": {\"activation\": \"tanh\"}}",
		  "field 'epilogue.activation' must be one of: none, relu, gelu, gelu_tanh, silu "
		  "(got \"tanh\")");
	CHECK_ERR("{" GEMM ", \"epilogue\": {\"bias\": 1}}",
		  "field 'epilogue.bias' must be true or false (got 1)");
	CHECK_ERR("{" GEMM ", \"epilogue\": true}", "field 'epilogue' must be an object");
}

TEST(task_error_precision_contract)
{
	CHECK_ERR("{" GEMM ", \"dtype\": \"bf16\", \"precision\": \"strict\"}",
		  "field 'precision' 'strict' needs dtype 'fp32' (got dtype 'bf16'; use precision 'bf16')");
	CHECK_ERR("{" GEMM ", \"dtype\": \"fp16\", \"precision\": \"tf32\"}",
		  "field 'precision' 'tf32' needs dtype 'fp32'");
	CHECK_ERR("{" ELEM ", \"activation\": \"relu\", \"precision\": \"tf32\"}",
		  "field 'precision' 'tf32' applies only to ops gemm and matvec (got op 'elementwise'");
	CHECK_ERR("{" GEMM ", \"precision\": \"bf16\"}",
		  "field 'precision' 'bf16' needs dtype 'bf16' (got dtype 'fp32')");
	CHECK_ERR("{" GEMM ", \"dtype\": \"bf16\", \"precision\": \"fp16\"}",
		  "field 'precision' 'fp16' needs dtype 'fp16' (got dtype 'bf16')");
	CHECK_ERR("{" GEMM ", \"out_dtype\": \"bf16\"}",
		  "field 'out_dtype' must be 'fp32' under precision 'strict' (got 'bf16')");
	CHECK_ERR("{" ELEM ", \"activation\": \"relu\", \"dtype\": \"fp8_e4m3\"}",
		  "field 'precision' 'fp8' applies only to op 'gemm' (got op 'elementwise')");
	CHECK_ERR("{" GEMM ", \"dtype\": \"fp8_e4m3\"}",
		  "precision 'fp8' needs a_layout 'row' and b_layout 'col'");
	/* and what is allowed */
	struct task *t = parse_ok("{" GEMM ", \"precision\": \"tf32\"}");
	CHECK(t);
	task_free(t);
	t = parse_ok("{\"op\": \"matvec\", \"m\": 4, \"k\": 4, \"precision\": \"tf32\"}");
	CHECK(t);
	task_free(t);
	t = parse_ok("{" ELEM ", \"activation\": \"relu\", \"dtype\": \"bf16\", \"out_dtype\": \"fp32\"}");
	CHECK(t);
	CHECK_INT(t->precision, PREC_BF16);
	task_free(t);
}

TEST(task_error_gemm_shapes)
{
	CHECK_ERR("{\"op\": \"gemm\", \"m\": 100, \"n\": 4, \"k\": 4, \"m_dims\": [16, 1024]}",
		  "field 'm_dims' must multiply to m = 100 (got product 16384)");
	CHECK_ERR("{\"op\": \"gemm\", \"n\": 4, \"k\": 4, \"m_dims\": [16, -2]}",
		  "field 'm_dims[1]' must be a positive integer (got -2)");
	CHECK_ERR("{\"op\": \"gemm\", \"n\": 4, \"k\": 4, \"m_dims\": [1, 2, 3, 4]}",
		  "field 'm_dims' must be an array of 1 to 3 positive integers");
	CHECK_ERR("{\"op\": \"gemm\", \"m\": 8, \"n\": 8, \"k\": 4, \"a_structure\": \"symmetric\"}",
		  "field 'a_structure' 'symmetric' needs a square A (m == k; got m 8, k 4)");
	CHECK_ERR("{\"op\": \"gemm\", \"m\": 4, \"n\": 8, \"k\": 4, \"b_structure\": \"symmetric\"}",
		  "needs a square B");
	CHECK_ERR("{" GEMM ", \"batch\": 2, \"mask\": \"upper\"}",
		  "field 'mask' needs a plain 2D GEMM (batch 1, no m_dims)");
	CHECK_ERR("{\"op\": \"gemm\", \"n\": 4, \"k\": 4, \"m_dims\": [2, 2], \"a_structure\": \"upper\"}",
		  "field 'a_structure' needs a plain 2D GEMM");
	CHECK_ERR("{\"op\": \"gemm\", \"n\": 4, \"k\": 4, \"m_dims\": [2, 2], \"a_layout\": \"col\"}",
		  "field 'a_layout' 'col' needs a 2D A (drop m_dims)");
	CHECK_ERR("{" GEMM ", \"alpha\": \"2\"}", "field 'alpha' must be a number (got \"2\")");
}

TEST(task_error_activation_params)
{
	CHECK_ERR("{" ELEM ", \"activation\": \"relu\", \"params\": {\"negative_slope\": 0.1}}",
		  "field 'params.negative_slope' does not apply: activation 'relu' takes no parameters");
	CHECK_ERR("{" ELEM ", \"activation\": \"leaky_relu\", \"params\": {\"slope\": 0.1}}",
		  "field 'params.slope' does not apply to activation 'leaky_relu' (its parameters: "
		  "negative_slope)");
	CHECK_ERR("{" ELEM ", \"activation\": \"hardtanh\", \"params\": {\"min_val\": 2, \"max_val\": 1}}",
		  "field 'params.min_val' must be below 'params.max_val' (got 2 and 1)");
	CHECK_ERR("{" ELEM ", \"activation\": \"softplus\", \"params\": {\"beta\": 0}}",
		  "field 'params.beta' must be a positive number (got 0)");
	CHECK_ERR("{" ELEM ", \"activation\": \"elu\", \"params\": {\"alpha\": \"one\"}}",
		  "field 'params.alpha' must be a number (got \"one\")");
	CHECK_ERR("{" ELEM ", \"activation\": \"elu\", \"params\": [1]}", "field 'params' must be an object");
}

TEST(task_error_checking_fields)
{
	CHECK_ERR("{" GEMM ", \"seeds\": 0}", "field 'seeds' must be an integer from 1 to 16 (got 0)");
	CHECK_ERR("{" GEMM ", \"seeds\": 17}", "field 'seeds' must be an integer from 1 to 16 (got 17)");
	CHECK_ERR("{" GEMM ", \"tolerance\": {\"rtol\": -1e-3}}",
		  "field 'tolerance.rtol' must be a number >= 0, or null for the contract's default (got -0.001)");
	CHECK_ERR("{" GEMM ", \"tolerance\": {\"atol\": \"tiny\"}}", "field 'tolerance.atol' must be a number >= 0");
	CHECK_ERR("{" GEMM ", \"distributions\": [\"uniform\", \"gauss\"]}",
		  "field 'distributions[1]' must be one of: uniform, normal, large, branches, sparse (got \"gauss\")");
	CHECK_ERR("{" GEMM ", \"distributions\": []}", "field 'distributions' must be a non-empty array");
	CHECK_ERR("{" GEMM ", \"distributions\": [\"normal\", \"normal\"]}",
		  "field 'distributions[1]' repeats 'normal'");
	CHECK_ERR("{" GEMM ", \"distributions\": [\"branches\"]}",
		  "field 'distributions[0]' 'branches' does not apply to op 'gemm'");
	CHECK_ERR("{" ELEM ", \"activation\": \"relu\", \"distributions\": [\"sparse\"]}",
		  "'sparse' does not apply to op 'elementwise'");
}

TEST(task_error_json_and_names)
{
	CHECK_ERR("{\n  \"op\": \"gemm\",\n}", "task file 'dir/t.json': invalid JSON at line 3, column 1:");
	CHECK_ERR("", "invalid JSON at line 1");
	/* a module file under another name: the error says what makes it a task */
	CHECK_ERR("# a model\n\nimport torch\n", "(it reads as Python: a PyTorch module in KernelBench's "
		  "format is a task when its file name ends in .py)");
	CHECK_ERR("{\"op\": \"a\nb\"}", "invalid JSON at line 1"); /* raw newline in a string */
	CHECK_ERR("{\"op\": \"gemm\", \"op\": \"gemm\"}", "duplicate object key");
	CHECK_ERR("[1, 2]", "task 't': expected a JSON object of the task's fields (got [1,2])");
	CHECK_ERR("{\"name\": \"../evil\", " GEMM "}", "field 'name' must be 1-128 characters");
	CHECK_ERR("{\"name\": \"a b\", " GEMM "}", "field 'name' must be");
	CHECK_ERR("{\"name\": 7, " GEMM "}", "field 'name' must be");
	CHECK_ERR("{\"description\": 7, " GEMM "}", "field 'description' must be a string");
}

/* Parses len bytes of text (NULs and all) as "dir/t.json": the error (heap), or NULL. */
static char *parse_bytes_err(const char *text, size_t len)
{
	char *err = NULL;
	struct task *t = task_parse_json(text, len, "dir/t.json", &err);
	task_free(t);
	return t ? NULL : err ? err : xstrdup("(no message)");
}

/* Red team 14: a UTF-8 byte order mark got "'[' or '{' expected near '\ufeff'", UTF-16
 * "unable to decode byte 0xff", and a NUL "'}' expected near end of file". */
TEST(task_file_encodings_are_named)
{
	static const char json[] = "{\"op\": \"gemm\", \"m\": 64, \"n\": 64, \"k\": 64}";
	char buf[512], *e;
	size_t n = strlen(json);
	/* a UTF-8 mark is skipped: the file is the task */
	memcpy(buf, "\xef\xbb\xbf", 3);
	memcpy(buf + 3, json, n);
	CHECK(!(e = parse_bytes_err(buf, n + 3)));
	/* UTF-16 with its mark (what Windows' "Unicode" saves), and without, either byte order */
	for (int be = 0; be <= 1; be++)
		for (int bom = 0; bom <= 1; bom++) {
			size_t k = 0;
			if (bom) {
				buf[k++] = be ? '\xfe' : '\xff';
				buf[k++] = be ? '\xff' : '\xfe';
			}
			for (size_t i = 0; i < n; i++) {
				buf[k++] = be ? 0 : json[i];
				buf[k++] = be ? json[i] : 0;
			}
			e = parse_bytes_err(buf, k);
			CHECK_STR(e, be ? "task file 'dir/t.json' is UTF-16 (big-endian); save it as UTF-8"
					: "task file 'dir/t.json' is UTF-16 (little-endian); save it as UTF-8");
			free(e);
		}
	e = parse_bytes_err("\xff\xfe\0\0{\0\0\0", 8);
	CHECK_STR(e, "task file 'dir/t.json' is UTF-32 (little-endian); save it as UTF-8");
	free(e);
	memcpy(buf, json, n);
	buf[10] = '\0';
	e = parse_bytes_err(buf, n);
	CHECK_STR(e, "task file 'dir/t.json' has a NUL byte at offset 10; save it as UTF-8 text");
	free(e);
	/* ordinary bad JSON keeps its message */
	e = parse_bytes_err("\xef\xbb\xbf{", 4);
	CHECK_HAS(e, "task file 'dir/t.json': invalid JSON at line 1");
	free(e);
}

TEST(task_defaults_filled)
{
	struct task *t = parse_ok("{" GEMM "}");
	CHECK(t);
	CHECK_STR(t->name, "t"); /* from dir/t.json */
	CHECK_STR(t->description, "");
	CHECK_INT(t->in_dtype, DT_FP32);
	CHECK_INT(t->out_dtype, DT_FP32);
	CHECK_INT(t->precision, PREC_STRICT);
	CHECK_INT(t->batch, 1);
	CHECK_INT(t->m_ndims, 1);
	CHECK_INT(t->m_dims[0], 64);
	CHECK(t->alpha == 1.0);
	CHECK_INT(t->epi_bias, 0);
	CHECK_INT(t->epi_act, ACT_NONE);
	CHECK_INT(t->seeds, 2);
	CHECK(t->rtol < 0 && t->atol < 0);
	CHECK_INT(t->n_dists, 3);
	CHECK_INT(t->dists[0], DIST_UNIFORM);
	CHECK_INT(t->dists[1], DIST_NORMAL);
	CHECK_INT(t->dists[2], DIST_SPARSE);
	task_free(t);

	t = parse_ok("{" ELEM ", \"activation\": \"leaky_relu\"}");
	CHECK(t);
	CHECK(t->negative_slope == 0.01);
	CHECK(t->elu_alpha == 1.0 && t->min_val == -1.0 && t->max_val == 1.0);
	CHECK(t->sp_beta == 1.0 && t->sp_threshold == 20.0);
	CHECK_INT(t->n_dists, 4);
	CHECK_INT(t->dists[3], DIST_BRANCHES);
	task_free(t);

	t = parse_ok("{\"op\": \"log_softmax\", \"shape\": [3, 5]}");
	CHECK(t);
	CHECK_INT(t->n_dists, 3);
	CHECK_INT(t->dists[2], DIST_LARGE);
	task_free(t);

	t = parse_ok("{\"op\": \"diag_matmul\", \"n\": 3, \"m\": 5, \"dtype\": \"fp16\"}");
	CHECK(t);
	CHECK_INT(t->n_dists, 2);
	CHECK_INT(t->precision, PREC_FP16);
	CHECK_INT(t->out_dtype, DT_FP16);
	task_free(t);

	t = parse_ok("{\"op\": \"gemm\", \"m\": 64, \"n\": 64, \"k\": 64, \"dtype\": \"fp8_e4m3\", "
		     "\"b_layout\": \"col\"}");
	CHECK(t);
	CHECK_INT(t->precision, PREC_FP8);
	CHECK_INT(t->out_dtype, DT_BF16);
	task_free(t);

	/* m from m_dims, and m with a matching m_dims */
	t = parse_ok("{\"op\": \"gemm\", \"n\": 4, \"k\": 4, \"m_dims\": [3, 5]}");
	CHECK(t);
	CHECK_INT(t->m, 15);
	CHECK_INT(t->m_ndims, 2);
	task_free(t);
	t = parse_ok("{\"op\": \"gemm\", \"m\": 15, \"n\": 4, \"k\": 4, \"m_dims\": [3, 5]}");
	CHECK(t);
	task_free(t);
}

static int roundtrip(const struct task *t)
{
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	char *err = NULL;
	task_to_json(t, &a);
	struct task *u = task_parse_json(a.buf, a.len, "x.json", &err);
	int ok = 0;
	if (!u) {
		fprintf(stderr, "    %s: %s\n", t->name, err);
	} else {
		task_to_json(u, &b);
		ok = task_equal(t, u) && !strcmp(a.buf, b.buf);
		if (!ok)
			fprintf(stderr, "    %s does not round-trip:\n%s\n%s\n", t->name, a.buf, b.buf);
	}
	free(err);
	task_free(u);
	strbuf_release(&a);
	strbuf_release(&b);
	return ok;
}

TEST(task_roundtrip_every_builtin)
{
	int total = 0;
	for (int s = 0; builtin_suites[s]; s++) {
		const char *const *names;
		int n = suite_tasks(builtin_suites[s], &names);
		CHECK(n > 0);
		for (int i = 0; i < n; i++) {
			char *err = NULL;
			struct task *t = task_load(names[i], &err);
			CHECK(t);
			CHECK_STR(t->name, names[i]);
			CHECK(t->description[0]);
			CHECK(roundtrip(t));
			task_free(t);
			total++;
		}
	}
	CHECK_INT(total, 33 + 12 + 54); /* kb1, hopper, llm */
}

TEST(task_roundtrip_custom_fields)
{
	const char *texts[] = {
		"{\"name\": \"c/1\", \"description\": \"q\\\"uote\\\\ \\n tab\\t \\u00e9 \\u0001\", "
		"\"op\": \"gemm\", \"m\": 15, \"n\": 7, \"k\": 9, \"m_dims\": [3, 5], \"batch\": 3, "
		"\"b_layout\": \"col\", \"alpha\": 0.1, \"epilogue\": {\"bias\": true, \"activation\": \"silu\"}, "
		"\"dtype\": \"fp16\", \"out_dtype\": \"fp32\", \"distributions\": [\"sparse\", \"large\"], "
		"\"seeds\": 16, \"tolerance\": {\"rtol\": 1e-3, \"atol\": 0}}",
		"{\"op\": \"gemm\", \"m\": 9, \"n\": 9, \"k\": 9, \"a_layout\": \"col\", \"a_structure\": \"upper\", "
		"\"b_structure\": \"lower\", \"mask\": \"lower\", \"precision\": \"tf32\", \"alpha\": -3.14159e-7, "
		"\"tolerance\": {\"atol\": 1e-30}}",
		"{\"op\": \"elementwise\", \"shape\": [2, 3, 4, 5], \"activation\": \"hardtanh\", "
		"\"params\": {\"min_val\": -0.5, \"max_val\": 2.75}, \"distributions\": [\"branches\"]}",
		"{\"op\": \"elementwise\", \"shape\": [7], \"activation\": \"softplus\", "
		"\"params\": {\"beta\": 0.3, \"threshold\": 1e300}}",
		"{\"op\": \"scalar_mul\", \"shape\": [7, 7], \"scalar\": 0.1, \"dtype\": \"bf16\"}",
		"{\"op\": \"softmax\", \"shape\": [7]}",
	};
	for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
		struct task *t = parse_ok(texts[i]);
		CHECK(t);
		CHECK(roundtrip(t));
		task_free(t);
	}
}

TEST(task_canonical_json_fields)
{
	char *err = NULL;
	struct task *t = task_load("kb1/20_leaky_relu", &err);
	CHECK(t);
	struct strbuf sb = STRBUF_INIT;
	task_to_json(t, &sb);
	CHECK_HAS(sb.buf, "\"shape\": [4096, 393216]");
	CHECK_HAS(sb.buf, "\"activation\": \"leaky_relu\"");
	CHECK_HAS(sb.buf, "\"params\": {\"negative_slope\": 0.01}");
	CHECK_HAS(sb.buf, "\"precision\": \"strict\"");
	CHECK_HAS(sb.buf, "\"tolerance\": {\"rtol\": null, \"atol\": null}");
	CHECK(!strstr(sb.buf, "\"m\""));
	strbuf_release(&sb);
	task_free(t);
	t = task_load("kb1/5", &err);
	CHECK(t);
	task_to_json(t, &sb);
	CHECK_HAS(sb.buf, "\"scalar\": 3.14,");
	strbuf_release(&sb);
	task_free(t);
}

static const char *dims(const struct tensor_spec *s)
{
	static char buf[128];
	size_t n = 0;
	buf[0] = 0;
	for (int i = 0; i < s->ndim; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%lld", i ? "," : "", (long long)s->shape[i]);
	return buf;
}

static struct task *builtin(const char *name)
{
	char *err = NULL;
	struct task *t = task_load(name, &err);
	if (!t)
		fprintf(stderr, "    %s\n", err);
	free(err);
	return t;
}

TEST(task_tensors_of_gemms)
{
	struct tensor_spec ts[TASK_MAX_TENSORS];
	struct task *t = builtin("kb1/1_square_matmul");
	CHECK(t);
	CHECK_INT(task_tensors(t, ts), 3);
	CHECK_STR(ts[0].name, "A");
	CHECK_STR(dims(&ts[0]), "4096,4096");
	CHECK_STR(ts[1].name, "B");
	CHECK_STR(ts[2].name, "C");
	CHECK_INT(ts[2].is_output, 1);
	CHECK_INT(ts[0].is_output, 0);
	CHECK_INT(ts[0].dtype, DT_FP32);
	task_free(t);

	t = builtin("kb1/3_batched_matmul");
	CHECK(t);
	CHECK_INT(task_tensors(t, ts), 3);
	CHECK_STR(dims(&ts[0]), "128,512,1024");
	CHECK_STR(dims(&ts[1]), "128,1024,2048");
	CHECK_STR(dims(&ts[2]), "128,512,2048");
	task_free(t);

	t = builtin("kb1/10_3d_tensor_matmul");
	CHECK(t);
	CHECK_INT(task_tensors(t, ts), 3);
	CHECK_STR(dims(&ts[0]), "16,1024,2048");
	CHECK_STR(dims(&ts[1]), "2048,768");
	CHECK_STR(dims(&ts[2]), "16,1024,768");
	task_free(t);

	t = builtin("kb1/11_4d_tensor_matmul");
	CHECK(t);
	CHECK_INT(task_tensors(t, ts), 3);
	CHECK_STR(dims(&ts[0]), "8,256,512,256");
	CHECK_STR(dims(&ts[1]), "256,768");
	CHECK_STR(dims(&ts[2]), "8,256,512,768");
	task_free(t);

	t = builtin("kb1/16_matmul_transposed_a");
	CHECK(t);
	task_tensors(t, ts);
	CHECK_STR(dims(&ts[0]), "8192,2048");
	CHECK_STR(dims(&ts[1]), "8192,4096");
	CHECK_STR(dims(&ts[2]), "2048,4096");
	task_free(t);

	t = builtin("kb1/17_matmul_transposed_b");
	CHECK(t);
	task_tensors(t, ts);
	CHECK_STR(dims(&ts[0]), "2048,8192");
	CHECK_STR(dims(&ts[1]), "4096,8192");
	CHECK_STR(dims(&ts[2]), "2048,4096");
	task_free(t);

	t = builtin("kb1/18_matmul_transposed_both");
	CHECK(t);
	task_tensors(t, ts);
	CHECK_STR(dims(&ts[0]), "8192,2048");
	CHECK_STR(dims(&ts[1]), "4096,8192");
	task_free(t);

	t = builtin("kb1/14_upper_triangular_matmul");
	CHECK(t);
	task_tensors(t, ts);
	CHECK_INT(ts[0].structure, STRUCT_UPPER);
	CHECK_INT(ts[1].structure, STRUCT_UPPER);
	CHECK_INT(ts[2].structure, STRUCT_GENERAL);
	CHECK_INT(t->out_mask, MASK_UPPER);
	task_free(t);

	t = builtin("kb1/13_symmetric_matmul");
	CHECK(t);
	task_tensors(t, ts);
	CHECK_INT(ts[0].structure, STRUCT_SYMMETRIC);
	CHECK_INT(ts[1].structure, STRUCT_SYMMETRIC);
	task_free(t);

	/* a transposed triangle is stored as the other triangle */
	t = parse_ok("{\"op\": \"gemm\", \"m\": 8, \"n\": 8, \"k\": 8, \"a_layout\": \"col\", "
		     "\"a_structure\": \"upper\"}");
	CHECK(t);
	task_tensors(t, ts);
	CHECK_INT(ts[0].structure, STRUCT_LOWER);
	task_free(t);

	t = builtin("hopper/gemm_bf16_4096_bias_relu");
	CHECK(t);
	CHECK_INT(task_tensors(t, ts), 4);
	CHECK_STR(ts[2].name, "bias");
	CHECK_STR(dims(&ts[2]), "4096");
	CHECK_INT(ts[2].dtype, DT_BF16);
	CHECK_INT(ts[2].is_output, 0);
	CHECK_STR(ts[3].name, "C");
	CHECK_INT(t->epi_act, ACT_RELU);
	task_free(t);

	t = builtin("hopper/gemm_fp8_8192");
	CHECK(t);
	CHECK_INT(task_tensors(t, ts), 3);
	CHECK_INT(ts[0].dtype, DT_FP8_E4M3);
	CHECK_STR(dims(&ts[1]), "8192,8192");
	CHECK_INT(ts[2].dtype, DT_BF16);
	task_free(t);
}

TEST(task_tensors_of_other_ops)
{
	struct tensor_spec ts[TASK_MAX_TENSORS];
	struct task *t = builtin("kb1/4_matvec");
	CHECK(t);
	CHECK_INT(task_tensors(t, ts), 3);
	CHECK_STR(ts[0].name, "A");
	CHECK_STR(dims(&ts[0]), "2048,1048576");
	CHECK_STR(ts[1].name, "x");
	CHECK_STR(dims(&ts[1]), "1048576,1");
	CHECK_STR(ts[2].name, "y");
	CHECK_STR(dims(&ts[2]), "2048,1");
	task_free(t);

	t = builtin("kb1/12_diag_matmul");
	CHECK(t);
	CHECK_INT(task_tensors(t, ts), 3);
	CHECK_STR(ts[0].name, "a");
	CHECK_STR(dims(&ts[0]), "4096");
	CHECK_STR(dims(&ts[1]), "4096,4096");
	CHECK_STR(dims(&ts[2]), "4096,4096");
	task_free(t);

	t = builtin("kb1/23_softmax");
	CHECK(t);
	CHECK_INT(task_tensors(t, ts), 2);
	CHECK_STR(ts[0].name, "x");
	CHECK_STR(dims(&ts[0]), "4096,393216");
	CHECK_STR(ts[1].name, "y");
	CHECK_INT(ts[1].is_output, 1);
	CHECK_STR(task_workload(t), "rowwise");
	task_free(t);

	t = builtin("kb1/5_scalar_mul");
	CHECK(t);
	CHECK_INT(task_tensors(t, ts), 2);
	CHECK_STR(dims(&ts[1]), "65536,16384");
	task_free(t);
}

TEST(task_scalars_per_op)
{
	double v[TASK_MAX_SCALARS];
	const char *n[TASK_MAX_SCALARS];
	struct task *t = builtin("kb1/1_square_matmul");
	CHECK(t);
	CHECK_INT(task_scalars(t, v, n), 1);
	CHECK_STR(n[0], "alpha");
	CHECK(v[0] == 1.0);
	task_free(t);

	t = builtin("kb1/20_leaky_relu");
	CHECK(t);
	CHECK_INT(task_scalars(t, v, n), 1);
	CHECK_STR(n[0], "negative_slope");
	CHECK(v[0] == 0.01);
	task_free(t);

	t = builtin("kb1/32_hardtanh");
	CHECK(t);
	CHECK_INT(task_scalars(t, v, n), 2);
	CHECK_STR(n[0], "min_val");
	CHECK_STR(n[1], "max_val");
	CHECK(v[0] == -1.0 && v[1] == 1.0);
	task_free(t);

	t = builtin("kb1/29_softplus");
	CHECK(t);
	CHECK_INT(task_scalars(t, v, n), 2);
	CHECK_STR(n[0], "beta");
	CHECK_STR(n[1], "threshold");
	CHECK(v[0] == 1.0 && v[1] == 20.0);
	task_free(t);

	t = builtin("kb1/31_elu");
	CHECK(t);
	CHECK_INT(task_scalars(t, v, n), 1);
	CHECK_STR(n[0], "alpha");
	task_free(t);

	t = builtin("kb1/5_scalar_mul");
	CHECK(t);
	CHECK_INT(task_scalars(t, v, n), 1);
	CHECK_STR(n[0], "scalar");
	CHECK(v[0] == 3.14);
	task_free(t);

	const char *none[] = { "kb1/19_relu", "kb1/23_softmax", "kb1/4_matvec", "kb1/12_diag_matmul" };
	for (size_t i = 0; i < ARRAY_SIZE(none); i++) {
		t = builtin(none[i]);
		CHECK(t);
		CHECK_INT(task_scalars(t, v, n), 0);
		task_free(t);
	}
}

/* Brute force of the multiply-adds a structured, masked GEMM must do. */
static double brute_macs(int M, int N, int K, enum structure sa, enum structure sb, enum mask mk)
{
	double c = 0;
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			if ((mk == MASK_UPPER && j < i) || (mk == MASK_LOWER && j > i))
				continue;
			for (int k = 0; k < K; k++) {
				if ((sa == STRUCT_UPPER && k < i) || (sa == STRUCT_LOWER && k > i))
					continue;
				if ((sb == STRUCT_UPPER && j < k) || (sb == STRUCT_LOWER && j > k))
					continue;
				c++;
			}
		}
	return c;
}

TEST(task_flops_structured_matches_brute_force)
{
	static const char *const sn[] = { "general", "symmetric", "upper", "lower" };
	static const char *const mn[] = { "none", "upper", "lower" };
	static const int sizes[][3] = { { 5, 5, 5 }, { 4, 7, 6 }, { 9, 3, 5 }, { 1, 1, 1 }, { 6, 2, 11 } };
	for (size_t z = 0; z < ARRAY_SIZE(sizes); z++)
		for (int a = 0; a < 4; a++)
			for (int b = 0; b < 4; b++)
				for (int m = 0; m < 3; m++) {
					if (a == STRUCT_SYMMETRIC || b == STRUCT_SYMMETRIC)
						continue;
					int M = sizes[z][0], N = sizes[z][1], K = sizes[z][2];
					char text[256];
					snprintf(text, sizeof(text), "{\"op\": \"gemm\", \"m\": %d, \"n\": %d, "
						 "\"k\": %d, \"a_structure\": \"%s\", \"b_structure\": \"%s\", "
						 "\"mask\": \"%s\"}", M, N, K, sn[a], sn[b], mn[m]);
					struct task *t = parse_ok(text);
					CHECK(t);
					double want = 2 * brute_macs(M, N, K, (enum structure)a,
								     (enum structure)b, (enum mask)m);
					if (task_flops(t) != want)
						fprintf(stderr, "    %s: %g != %g\n", text, task_flops(t), want);
					CHECK(task_flops(t) == want);
					task_free(t);
				}
}

TEST(task_flops_and_bytes)
{
	struct task *t = builtin("kb1/1_square_matmul");
	CHECK(t);
	CHECK(task_flops(t) == 2.0 * 4096 * 4096 * 4096);
	CHECK(task_min_bytes(t) == 3.0 * 4096 * 4096 * 4);
	CHECK(task_is_gemm_like(t));
	CHECK_STR(task_workload(t), "gemm");

	/* the plausibility bound's bytes: all inputs, the outputs less what an L2 can hold */
	CHECK(task_dram_bytes(t, 0) == task_min_bytes(t));
	CHECK(task_dram_bytes(t, 50e6) == 2.0 * 4096 * 4096 * 4 + (4096.0 * 4096 * 4 - 50e6));
	CHECK(task_dram_bytes(t, 1e9) == 2.0 * 4096 * 4096 * 4);
	task_free(t);

	t = builtin("kb1/3_batched_matmul");
	CHECK(t);
	CHECK(task_flops(t) == 2.0 * 128 * 512 * 2048 * 1024);
	CHECK(task_min_bytes(t) == 4.0 * 128 * (512.0 * 1024 + 1024.0 * 2048 + 512.0 * 2048));
	task_free(t);

	/* triangular x triangular, masked: N(N+1)(N+2)/6 multiply-adds, about 1/6 of dense */
	t = builtin("kb1/14_upper_triangular_matmul");
	CHECK(t);
	CHECK(task_flops(t) == 2.0 * 4096.0 * 4097.0 * 4098.0 / 6);
	task_free(t);
	t = builtin("kb1/15_lower_triangular_matmul");
	CHECK(t);
	CHECK(task_flops(t) == 2.0 * 4096.0 * 4097.0 * 4098.0 / 6);
	task_free(t);
	t = builtin("kb1/13_symmetric_matmul");
	CHECK(t);
	CHECK(task_flops(t) == 2.0 * 4096 * 4096 * 4096);
	task_free(t);

	t = builtin("kb1/4_matvec");
	CHECK(t);
	CHECK(task_flops(t) == 2.0 * 2048 * 1048576);
	CHECK(task_min_bytes(t) == 4.0 * (2048.0 * 1048576 + 1048576 + 2048));
	CHECK(task_is_gemm_like(t));
	task_free(t);

	t = builtin("kb1/19_relu");
	CHECK(t);
	CHECK(task_flops(t) == 4096.0 * 393216);
	CHECK(task_min_bytes(t) == 2.0 * 4096 * 393216 * 4);
	CHECK(!task_is_gemm_like(t));
	CHECK_STR(task_workload(t), "elementwise");
	task_free(t);

	t = builtin("kb1/23_softmax");
	CHECK(t);
	CHECK(task_flops(t) == 5.0 * 4096 * 393216);
	task_free(t);

	t = builtin("kb1/12_diag_matmul");
	CHECK(t);
	CHECK(task_min_bytes(t) == 4.0 * (4096 + 2.0 * 4096 * 4096));
	CHECK_STR(task_workload(t), "elementwise");
	task_free(t);

	t = builtin("hopper/gemm_fp8_8192");
	CHECK(t);
	CHECK(task_min_bytes(t) == 8192.0 * 8192 * (1 + 1 + 2));
	task_free(t);
}

TEST(task_load_names_and_files)
{
	char *err = NULL;
	struct task *t = task_load("kb1/19", &err);
	CHECK(t);
	CHECK_STR(t->name, "kb1/19_relu");
	task_free(t);
	t = task_load("kb1/1", &err);
	CHECK(t);
	CHECK_STR(t->name, "kb1/1_square_matmul");
	task_free(t);
	CHECK(task_builtin("hopper/gemm_bf16_4096") != NULL);
	CHECK(task_builtin("hopper/gemm") == NULL);
	CHECK(task_builtin("nosuite/1") == NULL);

	CHECK(!task_load("kb1/99", &err));
	CHECK_HAS(err, "no built-in task 'kb1/99'; 'cutegen tasks --suite kb1' lists them");
	free(err);
	CHECK(!task_load("/nonexistent/t.json", &err));
	CHECK_HAS(err, "cannot read task file '/nonexistent/t.json': No such file or directory");
	free(err);

	const char *p = test_write_file("my-gemm.json", "{\"op\": \"gemm\", \"m\": 8, \"n\": 8, \"k\": 8}");
	t = task_load(p, &err);
	CHECK(t);
	CHECK_STR(t->name, "my-gemm");
	task_free(t);

	p = test_write_file("bad.json", "{\"op\": \"gemm\", \"m\": 8, \"n\": 8}");
	CHECK(!task_load(p, &err));
	CHECK_HAS(err, "task 'bad': field 'k' is required");
	free(err);

	struct strbuf big = STRBUF_INIT;
	strbuf_addstr(&big, "{\"description\": \"");
	for (int i = 0; i < (1 << 20); i++)
		strbuf_addch(&big, 'x');
	strbuf_addstr(&big, "\"}");
	p = test_write_file("big.json", big.buf);
	strbuf_release(&big);
	CHECK(!task_load(p, &err));
	CHECK_HAS(err, "is larger than 1 MiB");
	free(err);
}

TEST(task_suites)
{
	const char *const *names;
	CHECK_INT(suite_tasks("kb1", &names), 33);
	CHECK_STR(names[0], "kb1/1_square_matmul");
	CHECK_STR(names[18], "kb1/19_relu");
	CHECK_STR(names[32], "kb1/88_mingpt_gelu");
	CHECK_INT(suite_tasks("hopper", &names), 12);
	CHECK_INT(suite_tasks("kb2", &names), -1);
	CHECK_STR(builtin_suites[0], "kb1");
	CHECK_STR(builtin_suites[1], "hopper");
	CHECK_STR(builtin_suites[2], "llm");
	CHECK(builtin_suites[3] == NULL);

	/* the exact KernelBench shapes */
	struct task *t = builtin("kb1/8_matmul_irregular");
	CHECK(t);
	CHECK(t->m == 8205 && t->k == 2949 && t->n == 5921);
	task_free(t);
	t = builtin("kb1/6_matmul_large_k");
	CHECK(t);
	CHECK(t->m == 256 && t->k == 524288 && t->n == 256);
	task_free(t);
	t = builtin("kb1/88_mingpt_gelu");
	CHECK(t);
	CHECK(t->shape[0] == 8192 && t->shape[1] == 8192 && t->act == ACT_MINGPT_GELU);
	task_free(t);

	/* every kb1 task is fp32 strict; every hopper task a tensor-core GEMM */
	CHECK_INT(suite_tasks("kb1", &names), 33);
	for (int i = 0; i < 33; i++) {
		const struct task *b = task_builtin(names[i]);
		CHECK(b && b->in_dtype == DT_FP32 && b->precision == PREC_STRICT);
	}
	int n = suite_tasks("hopper", &names);
	for (int i = 0; i < n; i++) {
		const struct task *b = task_builtin(names[i]);
		CHECK(b && b->op == OP_GEMM && b->in_dtype != DT_FP32);
	}

	/* llm: 16-bit and fp8 only; every GEMM's B stored as nn.Linear holds it, (N, K) */
	n = suite_tasks("llm", &names);
	CHECK(n >= 40);
	int gemms = 0, rows = 0, fp8 = 0, decode = 0;
	for (int i = 0; i < n; i++) {
		const struct task *b = task_builtin(names[i]);
		CHECK(b && !strncmp(names[i], "llm/", 4) && b->in_dtype != DT_FP32);
		if (!b)
			continue;
		if (b->op == OP_GEMM) {
			gemms++;
			CHECK(b->b_layout == LAYOUT_COL && b->a_layout == LAYOUT_ROW);
			fp8 += b->in_dtype == DT_FP8_E4M3;
			decode += b->m <= 128;
		} else {
			CHECK(b->op == OP_SOFTMAX || b->op == OP_LOG_SOFTMAX);
			rows++;
		}
	}
	CHECK(gemms >= 30 && rows >= 5 && fp8 >= 3 && decode >= 12);
	struct task *q = builtin("llm/llama8b_qkv_m1");
	CHECK(q && q->m == 1 && q->n == 6144 && q->k == 4096 && q->in_dtype == DT_BF16);
	task_free(q);
	q = builtin("llm/llama70b_down_m4096");
	CHECK(q && q->m == 4096 && q->n == 8192 && q->k == 28672);
	task_free(q);
}

TEST(task_enum_names_round_trip)
{
	for (int d = DT_FP32; d <= DT_FP8_E4M3; d++)
		CHECK_INT(dtype_parse(dtype_name((enum dtype)d)), d);
	for (int o = OP_GEMM; o <= OP_LOG_SOFTMAX; o++)
		CHECK_INT(op_parse(op_name((enum op)o)), o);
	for (int a = ACT_RELU; a <= ACT_SILU; a++)
		CHECK_INT(act_parse(act_name((enum act)a)), a);
	for (int p = PREC_STRICT; p <= PREC_FP8; p++)
		CHECK_INT(precision_parse(precision_name((enum precision)p)), p);
	for (int d = 0; d < DIST_COUNT; d++)
		CHECK_INT(dist_parse(dist_name((enum dist)d)), d);
	CHECK_INT(dtype_parse("fp64"), DT_INVALID);
	CHECK_INT(op_parse("conv"), OP_INVALID);
	CHECK_INT(act_parse("nope"), ACT_NONE);
	CHECK_INT(precision_parse(""), PREC_INVALID);
	CHECK_INT(dist_parse("gauss"), -1);
	CHECK_INT(dtype_size(DT_FP32), 4);
	CHECK_INT(dtype_size(DT_BF16), 2);
	CHECK_INT(dtype_size(DT_FP8_E4M3), 1);
	CHECK_STR(act_name(ACT_GELU_ERF), "gelu");
}

static const char *tf32_gemm_json(const char *precision)
{
	static char buf[512];
	snprintf(buf, sizeof(buf),
		 "{\"name\": \"t\", \"op\": \"gemm\", \"dtype\": \"fp32\", \"precision\": \"%s\", "
		 "\"m\": 1000, \"n\": 1000, \"k\": 1028, \"b_layout\": \"col\", "
		 "\"epilogue\": {\"bias\": true, \"activation\": \"gelu_tanh\"}}", precision);
	return buf;
}

static float f32_with_bits(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof(f));
	return f;
}

static uint32_t bits_of(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof(u));
	return u;
}

/* The worst single product for TF32: both operands 1 + 2^-10 - 2^-23 (the 13 dropped bits all
 * ones above a power of two). Truncating them (what a tensor core may do) must pass the tf32
 * contract; the same product fails strict, and operands rounded to bf16 fail tf32 (1 + 2^-8,
 * exact in TF32, is a tie bf16 rounds to 1: the contract still tells TF32 from bf16). */
TEST(task_tolerance_tf32_allows_truncated_operands)
{
	struct task *t = parse_ok(tf32_gemm_json("tf32"));
	struct task *s = parse_ok(tf32_gemm_json("strict"));
	CHECK(t && s);
	struct task_tolerance tt, ts;
	task_tolerance(t, DIST_SPARSE, &tt);
	task_tolerance(s, DIST_SPARSE, &ts);
	float a = f32_with_bits(0x3F801FFFu), at = f32_with_bits(bits_of(a) & 0xFFFFE000u);
	double want = (double)a * a, trunc = (double)at * at;
	double tol_t = task_gemm_element_tol(tt.eps_scale, tt.rtol, tt.atol, ACT_NONE, want, 0, want, want);
	double tol_s = task_gemm_element_tol(ts.eps_scale, ts.rtol, ts.atol, ACT_NONE, want, 0, want, want);
	CHECK(fabs(trunc - want) > ldexp(1.0, -10) * want); /* beyond a round-to-nearest budget */
	CHECK(fabs(trunc - want) <= tol_t);
	CHECK(fabs(trunc - want) > 100 * tol_s);
	float b = 1.0f + 0x1p-8f, bb = f32_with_bits((bits_of(b) + 0x7FFFu + ((bits_of(b) >> 16) & 1)) & 0xFFFF0000u);
	double wb = (double)b * b;
	CHECK(bb == 1.0f);
	CHECK(fabs((double)bb * bb - wb) >
	      task_gemm_element_tol(tt.eps_scale, tt.rtol, tt.atol, ACT_NONE, wb, 0, wb, wb));
	task_free(t);
	task_free(s);
}

static double gelu_tanh64(double x)
{
	return 0.5 * x * (1.0 + tanh(0.79788456080286535588 * (x + 0.044715 * x * x * x)));
}

/* gemm_sm90's and gemm_simt's epilogue: GELU(tanh) evaluated in fp32 */
static float gelu_tanh32(float x)
{
	float u = 0.79788456080286536f * (x + 0.044715f * x * x * x);
	return 0.5f * x * (1.0f + tanhf(u));
}

/* An output whose dot product is (nearly) empty, as the sparse probe makes, is GELU(bias): the
 * fp32 epilogue cancels in 1 + tanh for negative arguments (at -3 the result is a thousandth of
 * the argument), so its error is fp32 roundings of the argument, far above rtol |want|. The
 * tf32_nt GPU test failed on exactly such elements (16 of 1e6, 3.7x) before the tolerance
 * counted them; a wrong activation must still fail. */
TEST(task_tolerance_gemm_epilogue_counts_fp32_activation)
{
	const char *prec[] = { "tf32", "strict" };
	for (int p = 0; p < 2; p++) {
		struct task *t = parse_ok(tf32_gemm_json(prec[p]));
		CHECK(t);
		struct task_tolerance tol;
		task_tolerance(t, DIST_SPARSE, &tol);
		double worst = 0;
		int beyond_old = 0;
		for (float x = -9.0f; x <= 9.0f; x += 1.0f / 1024 + 1e-7f) {
			double want = gelu_tanh64(x), err = fabs((double)gelu_tanh32(x) - want);
			double tl = task_gemm_element_tol(tol.eps_scale, tol.rtol, tol.atol, ACT_GELU_TANH,
							  0, x, x, want);
			if (err / tl > worst)
				worst = err / tl;
			/* without the activation's term */
			if (err > tol.eps_scale * 1.2 * fabs(x) * 1e-7 + tol.rtol * fabs(want) + tol.atol)
				beyond_old++;
			/* and it is not so wide that GELU(erf) passes for GELU(tanh) (1e-4 apart here) */
			double other = 0.5 * x * (1.0 + erf(x * 0.70710678118654752440));
			if (fabs(x) > 0.9 && fabs(x) < 1.6)
				CHECK(fabs(other - want) > 10 * tl);
		}
		CHECK(worst <= 1.0);
		CHECK(beyond_old > 100); /* the term is needed */
		task_free(t);
	}
}
