/* Small file-system helpers. Each returns 0 or -1 with errno set; none prints. */
#ifndef CUTEGEN_FSUTIL_H
#define CUTEGEN_FSUTIL_H

#include <stddef.h>

/* mkdir -p with mode 0755. */
int mkdir_p(const char *path);
/* Writes data to path through a temporary file and rename(), so a reader never sees half a file. */
int write_file_atomic(const char *path, const void *data, size_t len);
int file_exists(const char *path);
int dir_exists(const char *path);
/* Removes a directory tree (like rm -rf); a missing path is not an error. */
int remove_tree(const char *path);
/* Directory of the running executable (from /proc/self/exe), heap string; NULL if unknown. */
char *exe_dir(void);

#endif
