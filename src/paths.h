/*
 * Where cutegen finds what it needs at run time: the CUTLASS/CuTe headers, its own include/
 * (the kernel ABI header), the runner, nvcc. Each returns a heap string the caller frees, or
 * NULL when not found. Resolution: environment override first, then the layout of the
 * source tree beside the binary (build/cutegen -> ../third_party, ../include).
 */
#ifndef CUTEGEN_PATHS_H
#define CUTEGEN_PATHS_H

/* $CUTLASS_DIR/include, else <repo>/third_party/cutlass/include; must hold cute/tensor.hpp. */
char *paths_cutlass_include(void);
/* The CUTLASS version string ("4.2.0.0"), from its VERSION file or version.h; "unknown". */
char *paths_cutlass_version(const char *include_dir);
/* <repo>/include, holding cutegen/kernel_abi.h. */
char *paths_abi_include(void);
/* $CUTEGEN_RUNNER, else cutegen-runner beside the cutegen binary. */
char *paths_runner(void);
/* $NVCC, else nvcc in PATH, else /usr/local/cuda/bin/nvcc. */
char *paths_nvcc(void);
/* A program in PATH (or under /usr/local/cuda/bin), or NULL. */
char *paths_find_program(const char *name);

#endif
