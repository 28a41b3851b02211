/*
 * CPU check of the class-2 forgers (tests/redteam/forge_libc_*.cu): loads a kernel library the
 * way the runner does (optionally confined first, as the runner is) and calls its entry point
 * once with no tensors. The forgers reach libc's syscall() by a route no static check sees, so
 * what they manage is what the confinement lets through: tests/e2e/judge.sh looks at the files
 * and the report pipe (fd 3) afterwards. No GPU: the forgers act before any CUDA call.
 *   forge-harness KERNEL.so [--confine]
 */
#include "../../runner/confine.h"

#include <cutegen/kernel_abi.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	char err[256];
	if (argc > 2 && !strcmp(argv[2], "--confine") && confine_process(3, err, sizeof(err))) {
		fprintf(stderr, "forge-harness: %s\n", err);
		return 2;
	}
	void *so = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	cutegen_launch_fn launch = so ? (cutegen_launch_fn)dlsym(so, "cutegen_launch") : NULL;
	if (!launch) {
		fprintf(stderr, "forge-harness: %s\n", dlerror());
		return 2;
	}
	int rc = launch(NULL, 0, NULL, 0, NULL, 0, NULL, 0, NULL);
	printf("returned %d\n", rc);
	return 0;
}
