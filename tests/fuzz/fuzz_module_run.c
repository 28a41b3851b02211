/*
 * libFuzzer target for the module-run file parser (common/module_run.c): RUN.json carries the
 * reference process's reply, which ran user code, so the runner treats it as untrusted. Any
 * input either fails with a one-line message or gives a run whose counts, sizes and handles
 * respect the caps and agree with each other. Built by `make fuzz` (build-fuzz/fuzz_module_run),
 * seeds in tests/fuzz/corpus/module_run/.
 */
#include "common/module_run.h"
#include "util/xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *err = NULL;
	struct module_run *mr = module_run_parse((const char *)data, size, &err);
	if (!mr) {
		if (!err || strchr(err, '\n'))
			BUG("parse error without a one-line message");
		free(err);
		return 0;
	}
	if (mr->ntensors > MRUN_MAX_TENSORS || mr->nscalars > MRUN_MAX_SCALARS ||
	    mr->ninputs + mr->noutputs != mr->ntensors || !mr->ninputs || !mr->noutputs ||
	    mr->ncases < MRUN_MIN_CASES || mr->ncases > MRUN_MAX_CASES)
		BUG("run past its caps or with inconsistent counts");
	for (int i = 0; i < mr->ntensors; i++) {
		const struct mrun_tensor *t = &mr->tensors[i];
		if (t->ndim < 0 || t->ndim > MRUN_MAX_DIMS || t->bytes != t->numel * mrun_dtype_size(t->dtype) ||
		    t->bytes > MRUN_MAX_BYTES || (i < mr->ninputs) != (t->role != MRUN_OUTPUT))
			BUG("tensor %d past its caps", i);
	}
	for (int k = 0; k < mr->ncases; k++)
		for (int i = 0; i < mr->ntensors; i++) {
			const struct mrun_handle *h = i < mr->ninputs ? &mr->cases[k].inputs[i]
								      : &mr->cases[k].ref[i - mr->ninputs];
			if (h->bytes != mr->tensors[i].bytes || h->offset < 0 || h->offset > MRUN_MAX_BYTES)
				BUG("handle of case %d, tensor %d disagrees with the tensor list", k, i);
		}
	module_run_free(mr);
	return 0;
}
