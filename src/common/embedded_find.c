/* Lookup in the table written by tools/embed.c; see embedded.h. */
#include "common/embedded.h"

#include <string.h>

const struct embedded_file *embedded_find(const char *name)
{
	for (const struct embedded_file *f = embedded_files; f->name; f++)
		if (!strcmp(f->name, name))
			return f;
	return NULL;
}
