/*
 * Exit statuses from result codes: the one place where a module's failure (util/err.h) becomes
 * what the user's shell sees (cutegen.h lists the statuses; the help pages in docs/cli/ document them).
 * Not for: verdicts on kernels, whose exit status each command chooses from the verdict.
 */
#include "cmd/cutegen.h"
#include "util/err.h"

int exit_status_for(int rc)
{
	switch (cg_primary(rc)) {
	case CG_OK:
		return EXIT_OK;
	case CG_USAGE:
		return EXIT_USAGE;
	case CG_INPUT:
		return EXIT_INPUT;
	case CG_REJECTED:
		return EXIT_VERDICT;
	case CG_ENV:
	case CG_IO: /* a cache or scratch directory that cannot be written: the machine's */
		return EXIT_ENV;
	case CG_EXTERNAL:
	case CG_TIMEOUT:
		return EXIT_EXTERNAL;
	case CG_INTERRUPTED:
		return EXIT_INTERRUPTED;
	default:
		return EXIT_INTERNAL;
	}
}
