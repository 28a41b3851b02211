/*
 * Confinement of the runner's process with seccomp-BPF, in two steps around the candidate's
 * dlopen (docs/containment.md says what each step closes and what it leaves open).
 * Not for: resource limits and the scrubbed environment, which the evaluator applies when it
 * starts the runner (src/eval/eval.c); nor for anything CUDA: this file links without it, so a
 * CPU test (tests/confine/confine_test.c) can install the same filters in a small process.
 *
 * Usage:
 *   1. initialise CUDA and make every allocation you can;
 *   2. confine_process(report_fd, ...): from here on no exec, fork, sockets, ptrace, signals to
 *      other processes, files opened for writing, file system changes, and write() only to
 *      fds 1, 2, report_fd and those open at this moment (CUDA's). Read-only opens stay
 *      allowed (dlopen needs them);
 *   3. dlopen the candidate, dlsym its entry points;
 *   4. confine_no_new_exec(): no mmap/mprotect/pkey_mprotect with PROT_EXEC from here on.
 * Both return 0, or -1 with a message in err (the kernel refused the filter).
 * Filters apply to every thread of the process (those that exist too: seccomp's TSYNC) and to
 * those made later, for the life of the process; they cannot be removed.
 */
#ifndef CUTEGEN_RUNNER_CONFINE_H
#define CUTEGEN_RUNNER_CONFINE_H

#include <stddef.h>

int confine_process(int report_fd, char *err, size_t errlen);
int confine_no_new_exec(char *err, size_t errlen);

#endif
