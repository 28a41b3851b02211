/*
 * Where cutegen finds the programs it runs: its runner, nvcc, ncu, compute-sanitizer. Each
 * returns a heap string the caller frees, or NULL when not found: an environment override
 * first, then beside the cutegen binary or in PATH. (The CUTLASS headers: build.h.)
 */
#ifndef CUTEGEN_PATHS_H
#define CUTEGEN_PATHS_H

/* $CUTEGEN_RUNNER, else cutegen-runner beside the cutegen binary. */
char *paths_runner(void);
/* The directory of the cutegen binary and its runner (build/), or $CUTEGEN_LIBEXEC. Static
 * string, never NULL (".", when it cannot be found). */
const char *cutegen_libexec_dir(void);
/* $NVCC, else nvcc in PATH, else /usr/local/cuda/bin/nvcc. */
char *paths_nvcc(void);
/* A program in PATH (or under /usr/local/cuda/bin), or NULL. */
char *paths_find_program(const char *name);



/* The CUTLASS version ("4.2.0.0") of an include/ directory, from the VERSION file beside it or
 * cutlass/version.h; "unknown" when neither says. Heap string. */
char *paths_cutlass_version(const char *include_dir);
#endif
