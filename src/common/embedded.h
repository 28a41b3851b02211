/*
 * Text files shipped inside the binary (prompt templates, suites, help pages, the HTML report
 * skeleton), generated at build time by tools/embed.c from the files in the tree.
 */
#ifndef CUTEGEN_EMBEDDED_H
#define CUTEGEN_EMBEDDED_H

#include <stddef.h>

struct embedded_file {
	const char *name; /* path relative to the repository root, e.g. "prompts/system.txt" */
	const char *data; /* NUL-terminated, static */
	size_t len;
};

extern const struct embedded_file embedded_files[]; /* ends with a NULL name */

/* The file named `name`, or NULL. */
const struct embedded_file *embedded_find(const char *name);

#endif
