/* Tests of module tasks' description parser (common/task_module.c): the tensor list in ABI
 * order, scalars, the lowered twin, and the refusal of every malformed or oversized field the
 * reference process could send. */
#include "test.h"
#include "common/task_module.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define GOOD_HEAD "{\"file\": \"/m/lin.py\", \"name\": \"lin\", \"device\": \"cpu\", \"torch\": \"2.5\", " \
	"\"dtype\": \"fp32\", \"precision\": \"strict\", \"workload\": \"gemm-like\", "
#define GOOD_TENSORS "\"inputs\": [{\"name\": \"x\", \"shape\": [32, 64], \"dtype\": \"fp32\"}], " \
	"\"params\": [{\"name\": \"fc.weight\", \"shape\": [48, 64], \"dtype\": \"fp32\", \"role\": \"parameter\"}, " \
	"{\"name\": \"running_mean\", \"shape\": [48], \"dtype\": \"fp32\", \"role\": \"buffer\"}], " \
	"\"outputs\": [{\"name\": \"out\", \"shape\": [32, 48], \"dtype\": \"fp32\"}]"

static char *perr(const char *text)
{
	char *err = NULL;
	struct module_desc *md = module_desc_parse(text, strlen(text), "m.py", &err);
	if (md) {
		module_desc_free(md);
		return NULL;
	}
	return err ? err : xstrdup("(no message)");
}

#define CHECK_PERR(text, want)                                                 \
	do {                                                                   \
		char *e_ = perr(text);                                         \
		if (!e_) {                                                     \
			test_fail(__FILE__, __LINE__, "parsed, expected \"%s\"", want); \
			return;                                                \
		}                                                              \
		CHECK_HAS(e_, want);                                           \
		CHECK(!strchr(e_, '\n'));                                      \
		free(e_);                                                      \
	} while (0)

TEST(module_desc_abi_order)
{
	const char *j = GOOD_HEAD GOOD_TENSORS ", \"scalars\": [{\"name\": \"eps\", \"value\": 1e-5, "
		"\"from\": \"get_init_inputs\"}], \"flops\": 196608, \"bytes\": 26816, \"lowered\": null, "
		"\"lowered_why\": \"the module has parameters\"}";
	char *err = NULL;
	struct module_desc *md = module_desc_parse(j, strlen(j), "m.py", &err);
	CHECK(md != NULL);
	if (!md) {
		free(err);
		return;
	}
	CHECK_INT(md->ntensors, 4);
	CHECK_INT(md->ninputs, 1);
	CHECK_INT(md->nparams, 2);
	CHECK_INT(md->noutputs, 1);
	CHECK_STR(md->tensors[0].name, "x");
	CHECK_INT(md->tensors[0].role, MROLE_INPUT);
	CHECK_STR(md->tensors[1].name, "fc.weight");
	CHECK_INT(md->tensors[1].role, MROLE_PARAMETER);
	CHECK_INT(md->tensors[2].role, MROLE_BUFFER);
	CHECK_INT(md->tensors[3].role, MROLE_OUTPUT);
	CHECK_INT((int)md->tensors[3].shape[1], 48);
	CHECK_INT(md->nscalars, 1);
	CHECK(md->scalars[0].from_init);
	CHECK(md->flops == 196608);
	CHECK(md->lowered == NULL);
	struct strbuf sb = STRBUF_INIT;
	module_desc_format(md, &sb);
	CHECK_HAS(sb.buf, "  1  parameter fc.weight            fp32  [48, 64]");
	CHECK_HAS(sb.buf, "lowered   no: the module has parameters");
	CHECK_HAS(sb.buf, "mode      eval (Model().eval())\n");
	strbuf_reset(&sb);
	module_desc_to_json(md, &sb);
	CHECK_HAS(sb.buf, "\"role\": \"buffer\"");
	CHECK_HAS(sb.buf, "\"mode\": \"eval\"");
	strbuf_release(&sb);
	module_desc_free(md);
}

/* the mode forward is judged in, and the submodules it changes: printed with how to pick the
 * other one */
TEST(module_desc_mode)
{
	const char *j = GOOD_HEAD GOOD_TENSORS ", \"mode\": \"eval\", \"mode_modules\": "
		"[\"BatchNorm2d bn\", \"Dropout drop\"]}";
	char *err = NULL;
	struct module_desc *md = module_desc_parse(j, strlen(j), "m.py", &err);
	CHECK(md != NULL);
	if (!md) {
		free(err);
		return;
	}
	CHECK_STR(md->mode, "eval");
	CHECK_STR(md->mode_modules, "BatchNorm2d bn, Dropout drop");
	struct strbuf sb = STRBUF_INIT;
	module_desc_format(md, &sb);
	CHECK_HAS(sb.buf, "mode      eval (Model().eval()): BatchNorm2d bn, Dropout drop compute as in "
		  "inference (running statistics, no dropout); KernelBench runs Model() in training "
		  "mode: CUTEGEN = {\"mode\": \"train\"} judges that\n");
	module_desc_free(md);
	j = GOOD_HEAD GOOD_TENSORS ", \"mode\": \"train\", \"mode_modules\": [\"BatchNorm1d norm\"]}";
	md = module_desc_parse(j, strlen(j), "m.py", &err);
	CHECK(md != NULL);
	if (md) {
		strbuf_reset(&sb);
		module_desc_format(md, &sb);
		CHECK_HAS(sb.buf, "mode      train (training mode, CUTEGEN \"mode\": \"train\"): "
			  "BatchNorm1d norm computes as in training");
		strbuf_reset(&sb);
		module_desc_to_json(md, &sb);
		CHECK_HAS(sb.buf, "\"mode\": \"train\"");
		CHECK_HAS(sb.buf, "\"mode_modules\": \"BatchNorm1d norm\"");
		module_desc_free(md);
	}
	strbuf_release(&sb);
	CHECK_PERR(GOOD_HEAD GOOD_TENSORS ", \"mode\": \"inference\"}", "unknown mode 'inference' (eval or train)");
	CHECK_PERR(GOOD_HEAD GOOD_TENSORS ", \"mode_modules\": \"bn\"}", "'mode_modules' that is not an array");
	CHECK_PERR(GOOD_HEAD GOOD_TENSORS ", \"mode_modules\": [3]}", "not a short line of text");
	CHECK_PERR(GOOD_HEAD GOOD_TENSORS ", \"mode_modules\": [\"a\\nb\"]}", "not a short line of text");
}

TEST(module_desc_lowered_twin)
{
	const char *j = GOOD_HEAD "\"inputs\": [{\"name\": \"A\", \"shape\": [64, 128], \"dtype\": \"fp32\"}, "
		"{\"name\": \"B\", \"shape\": [128, 96], \"dtype\": \"fp32\"}], \"params\": [], "
		"\"outputs\": [{\"name\": \"out\", \"shape\": [64, 96], \"dtype\": \"fp32\"}], "
		"\"flops\": null, \"bytes\": 1, \"lowered\": {\"name\": \"mm\", \"op\": \"gemm\", "
		"\"dtype\": \"fp32\", \"precision\": \"strict\", \"m\": 64, \"n\": 96, \"k\": 128}}";
	char *err = NULL;
	struct module_desc *md = module_desc_parse(j, strlen(j), "m.py", &err);
	CHECK(md != NULL);
	if (!md) {
		free(err);
		return;
	}
	CHECK(md->lowered != NULL);
	CHECK_INT(md->lowered->op, OP_GEMM);
	CHECK_INT((int)md->lowered->k, 128);
	CHECK(md->flops < 0);
	module_desc_free(md);
	/* a twin that does not check is refused with the task parser's words */
	CHECK_PERR(GOOD_HEAD GOOD_TENSORS ", \"lowered\": {\"name\": \"mm\", \"op\": \"gemm\", "
		   "\"dtype\": \"fp32\", \"m\": -3, \"n\": 1, \"k\": 1}}", "does not check");
}

TEST(module_desc_refusals)
{
	CHECK_PERR("[1]", "is not a JSON object");
	CHECK_PERR("{", "is not JSON");
	/* the parser's quote of the input holds its raw newline: the message is still one line */
	CHECK_PERR("{\"file\": \"/m/n\\\numpy\"}", "is not JSON");
	CHECK_PERR(GOOD_HEAD "\"outputs\": []}", "lacks the array 'inputs'");
	CHECK_PERR("{\"name\": \"x\"}", "lacks the string 'file'");
	CHECK_PERR(GOOD_HEAD "\"inputs\": [], \"params\": [], \"outputs\": []}", "has no input tensor");
	CHECK_PERR(GOOD_HEAD "\"inputs\": [{\"name\": \"x\", \"shape\": [2], \"dtype\": \"complex\"}], "
		   "\"params\": [], \"outputs\": []}", "the dtype 'complex', which no kernel here takes");
	CHECK_PERR(GOOD_HEAD "\"inputs\": [{\"name\": \"x\", \"shape\": [-2], \"dtype\": \"fp32\"}], "
		   "\"params\": [], \"outputs\": []}", "not a non-negative integer");
	CHECK_PERR(GOOD_HEAD "\"inputs\": [{\"name\": \"x\", \"shape\": [1,1,1,1,1,1,1,1,1], "
		   "\"dtype\": \"fp32\"}], \"params\": [], \"outputs\": []}", "at most 8 sizes");
	CHECK_PERR(GOOD_HEAD "\"inputs\": [{\"name\": \"x\", \"shape\": [4294967296, 4294967296], "
		   "\"dtype\": \"fp32\"}], \"params\": [], \"outputs\": []}", "more than 2^53 elements");
	CHECK_PERR(GOOD_HEAD "\"inputs\": [{\"name\": \"x\\n\", \"shape\": [2], \"dtype\": \"fp32\"}], "
		   "\"params\": [], \"outputs\": []}", "control character");
	CHECK_PERR("{\"file\": \"f\", \"name\": \"n\", \"dtype\": \"fp32\", \"precision\": \"strict\", "
		   "\"workload\": \"magic\"}", "unknown workload class 'magic'");
	CHECK_PERR(GOOD_HEAD GOOD_TENSORS ", \"scalars\": [{\"name\": \"s\", \"value\": \"x\"}]}",
		   "not a finite number");
	CHECK_PERR(GOOD_HEAD GOOD_TENSORS ", \"flops\": -1}", "not a non-negative number");
	CHECK_PERR(GOOD_HEAD "\"inputs\": [{\"name\": \"w\", \"shape\": [2], \"dtype\": \"fp32\"}], "
		   "\"params\": [{\"name\": \"w\", \"shape\": [2], \"dtype\": \"fp32\", \"role\": \"ghost\"}], "
		   "\"outputs\": []}", "role 'ghost'");
	/* caps: too many tensors, a huge description */
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, GOOD_HEAD "\"inputs\": [");
	for (int i = 0; i <= MODULE_MAX_TENSORS; i++)
		strbuf_addf(&sb, "%s{\"name\": \"t%d\", \"shape\": [1], \"dtype\": \"fp32\"}", i ? ", " : "", i);
	strbuf_addf(&sb, "], \"params\": [], \"outputs\": []}");
	CHECK_PERR(sb.buf, "more than 256 tensors");
	strbuf_reset(&sb);
	strbuf_addf(&sb, "{\"file\": \"");
	for (int i = 0; i < MODULE_DESC_MAX; i += 8)
		strbuf_addf(&sb, "aaaaaaaa");
	strbuf_addf(&sb, "\"}");
	CHECK_PERR(sb.buf, "is larger than");
	strbuf_release(&sb);
}

TEST(module_spec_forms)
{
	CHECK(task_spec_is_module("a/b.py"));
	CHECK(!task_spec_is_module(".py"));
	CHECK(!task_spec_is_module("kb1/19_relu"));
	CHECK(!task_spec_is_module("t.json"));
}
