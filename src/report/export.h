/*
 * Export of a run's best kernel for use outside cutegen: NAME.cu (the kernel as verified, plus
 * a plain C launch function taking raw device pointers, sizes and a cudaStream_t that builds
 * the DLTensors and calls cutegen_launch), NAME.h (its C declaration), include/ (the ABI header
 * and dlpack.h), CMakeLists.txt (a shared library, the verified -gencode, CUTLASS_INCLUDE_DIR
 * as a cache variable), NAME_torch.cpp + setup.py (a PyTorch extension calling the kernel on
 * the current stream), example.py (compares with the task's PyTorch reference), task.json and
 * export.json (tensors and scalars). A module run (or a kernel with a module file) also gets
 * NAME_model.py, a ModelNew that replaces the module's Model (see export_kernel_module).
 * Templates are embedded from export/.
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
	int kernel_only;         /* only NAME.cu, the kernel exactly as verified (what `cutegen
				    build` and `cutegen eval` take), no launch API */
	int force;               /* overwrite files the user changed */
	char **note_out;         /* when not NULL: a heap warning for the user, or left alone (a
				    module run whose module no longer describes: no ModelNew) */
	int *verified_out;       /* when not NULL: set to 1 when the export's arch is the one the
				    kernel was verified on, 0 when --arch asked for another */
};

/* Writes the files and OUT/.cutegen-export, the manifest of what it wrote (sha256 per file);
 * returns 0, CG_USAGE when a file there changed since cutegen wrote it (or was never
 * cutegen's) and force is not set (nothing is written; *err names the files), or -1 with a
 * heap message in *err (no correct kernel, a task the store cannot give back, an unwritable
 * directory).
 * *name_out (heap, may be NULL) gets the name used. */
int export_run(const struct run_history *h, const struct export_opts *o, char **name_out,
	       char **err);

/*
 * A kernel and a module file, without a run (`cutegen export --kernel K.cu --task M.py`):
 * NAME.cu (the kernel as given), include/, NAME_model.py (ModelNew: a drop-in for the module's
 * Model that calls the kernel through ctypes), NAME_reference.py (the module file) and
 * export.json (the module's tensor list). md is the module's description (reference_describe).
 * Returns as export_run.
 */
struct module_desc;
int export_kernel_module(const char *source, const struct module_desc *md,
			 const struct export_opts *o, char **name_out, char **err);

#endif
