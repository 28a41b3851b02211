/*
 * Export of a run's best kernel for use outside cutegen: NAME.cu (the kernel as verified, plus
 * a plain C launch function taking raw device pointers, sizes and a cudaStream_t that builds
 * the DLTensors and calls cutegen_launch), NAME.h (its C declaration), include/ (the ABI header
 * and dlpack.h), CMakeLists.txt (a shared library, the verified -gencode, CUTLASS_INCLUDE_DIR
 * as a cache variable), NAME_torch.cpp + setup.py (a PyTorch extension calling the kernel on
 * the current stream), example.py (compares with the task's PyTorch reference), task.json and
 * export.json (tensors and scalars). Templates are embedded from export/.
 * Not for: compiling or checking the kernel (the tests do that with nvcc).
 */
#ifndef CUTEGEN_EXPORT_H
#define CUTEGEN_EXPORT_H

#include "store/history.h"

struct export_opts {
	const char *out_dir;     /* created if missing */
	const char *name;        /* C identifier for the files and functions; NULL = from the task */
	const char *arch;        /* "sm_90a"; NULL = the run's --arch, else sm_90a */
	const char *cutlass_include; /* default of the CMake cache variable; NULL = where cutegen
					finds CUTLASS, else "" */
};

/* Writes the files; returns 0, or -1 with a heap message in *err (no correct kernel, a task
 * the store cannot give back, an unwritable directory). *name_out (heap, may be NULL) gets the
 * name used. */
int export_run(const struct run_history *h, const struct export_opts *o, char **name_out,
	       char **err);

#endif
