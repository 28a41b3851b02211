/*
 * The names of the result codes of err.h. Not for: exit statuses (cmd/exit.c).
 */
#include "util/err.h"

const char *cg_name(int rc)
{
	static const char *const names[] = {
		"ok", "usage", "input", "rejected", "env", "external", "timeout", "io",
		"interrupted", "internal"
	};
	int p = cg_primary(rc);
	return p >= 0 && p < (int)(sizeof(names) / sizeof(*names)) ? names[p] : "error";
}
