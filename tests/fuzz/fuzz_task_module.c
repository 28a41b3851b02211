/*
 * libFuzzer target for the module description parser (common/task_module.c): the reply of the
 * reference process, which ran user code, is untrusted. Any input either fails with a one-line
 * message or gives a description whose tensors respect the caps, and which formats (text and
 * JSON) without fault. Built by `make fuzz` (build-fuzz/fuzz_task_module), seeds in
 * tests/fuzz/corpus/task_module/.
 */
#include "common/task_module.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *err = NULL;
	struct module_desc *md = module_desc_parse((const char *)data, size, "fuzz.py", &err);
	if (!md) {
		if (!err || strchr(err, '\n'))
			BUG("parse error without a one-line message");
		free(err);
		return 0;
	}
	if (md->ntensors > MODULE_MAX_TENSORS || md->nscalars > MODULE_MAX_SCALARS ||
	    md->ninputs + md->nparams + md->noutputs != md->ntensors || !md->ninputs || !md->noutputs)
		BUG("description past its caps or with inconsistent counts");
	for (int i = 0; i < md->ntensors; i++)
		if (md->tensors[i].ndim < 0 || md->tensors[i].ndim > MODULE_MAX_DIMS)
			BUG("tensor rank out of range");
	struct strbuf sb = STRBUF_INIT;
	module_desc_format(md, &sb);
	module_desc_to_json(md, &sb);
	strbuf_release(&sb);
	module_desc_free(md);
	return 0;
}
