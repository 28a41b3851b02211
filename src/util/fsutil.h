/* Small file-system helpers. Each returns 0 or -1 with errno set; none prints. */
#ifndef CUTEGEN_FSUTIL_H
#define CUTEGEN_FSUTIL_H

#include <stddef.h>

/* mkdir -p with mode 0755. */
int mkdir_p(const char *path);
/*
 * Writes data to path, replacing what was there. Where path is missing or a regular file, it
 * writes a temporary file beside it and rename()s it into place, so a reader never sees half a
 * file. A symbolic link stays: its final target gets the content (the same way, beside the
 * target). What is neither is written in place and never replaced: the file standard output or
 * standard error already writes to (/dev/stdout, /dev/fd/2, ...) through that descriptor, a
 * FIFO, device or socket by opening it for writing (a FIFO waits for its reader, as a shell's
 * '>' does). A directory fails with EISDIR.
 */
int write_file_atomic(const char *path, const void *data, size_t len);
/*
 * Where a writer that replaces path by rename() must rename onto, for writers that make the
 * temporary file themselves (an SQLite index): path itself, or the final target of a chain of
 * symbolic links (the link stays, its target gets the content). Returns 0 and a heap string the
 * caller frees in *target when that target is missing or a regular file; else -1 with errno
 * set (EISDIR for a directory, EINVAL for a FIFO, device or socket, which rename() would
 * replace; ELOOP for a loop) and *target NULL. path_kind() names what is there for messages.
 */
int replace_target(const char *path, char **target);
/* "a directory", "a FIFO", "a character device", ... for messages: what path names, symbolic
 * links followed; "a regular file", or "a missing file" where stat() fails. Static string. */
const char *path_kind(const char *path);
int file_exists(const char *path);
int dir_exists(const char *path);
/* Removes a directory tree (like rm -rf); a missing path is not an error. */
int remove_tree(const char *path);
/* Directory of the running executable (from /proc/self/exe), heap string; NULL if unknown. */
char *exe_dir(void);

#endif
