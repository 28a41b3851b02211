/* File-system helpers; see fsutil.h. */
#include "fsutil.h"
#include "xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int mkdir_p(const char *path)
{
	char *p = xstrdup(path);
	int rc = 0;
	for (char *s = p + 1; ; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;
			*s = '\0';
			if (mkdir(p, 0755) && errno != EEXIST) {
				rc = -1;
				break;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	if (!rc && !dir_exists(path)) {
		errno = ENOTDIR;
		rc = -1;
	}
	int e = errno;
	free(p);
	errno = e;
	return rc;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The temporary file beside path, then rename() over it. */
static int replace_file(const char *path, const void *data, size_t len)
{
	char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int rc = -1;
	if (fd < 0)
		goto out;
	if (write_all(fd, data, len) || fsync(fd)) {
		int e = errno;
		close(fd);
		unlink(tmp);
		errno = e;
		goto out;
	}
	if (close(fd) || rename(tmp, path)) {
		int e = errno;
		unlink(tmp);
		errno = e;
		goto out;
	}
	rc = 0;
out:
	free(tmp);
	return rc;
}

/* A FIFO, device or socket: opened and written, never replaced. No fsync: pipes and most
 * devices refuse it. */
static int write_in_place(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -1;
	if (write_all(fd, data, len)) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return close(fd);
}

/* 1 or 2 when st is the file that descriptor writes to; else -1. */
static int std_fd_of(const struct stat *st)
{
	for (int fd = 1; fd <= 2; fd++) {
		struct stat o;
		if (!fstat(fd, &o) && o.st_dev == st->st_dev && o.st_ino == st->st_ino)
			return fd;
	}
	return -1;
}

int write_file_atomic(const char *path, const void *data, size_t len)
{
	struct stat st;
	if (!stat(path, &st)) {
		/* /dev/stdout of a shell's '>> log': reopening or replacing the file would lose
		 * what the log held; the descriptor appends where the shell meant. */
		int fd = std_fd_of(&st);
		if (fd >= 0)
			return write_all(fd, data, len);
		if (S_ISDIR(st.st_mode)) {
			errno = EISDIR;
			return -1;
		}
		if (!S_ISREG(st.st_mode))
			return write_in_place(path, data, len);
	} else if (errno != ENOENT) {
		return -1;
	}
	char *target;
	if (replace_target(path, &target))
		return -1;
	int rc = replace_file(target, data, len);
	int e = errno;
	free(target);
	errno = e;
	return rc;
}

/* What the symbolic link link points to, a relative target read from the link's directory.
 * Heap string; NULL with errno set. */
static char *link_target(const char *link)
{
	char buf[PATH_MAX];
	ssize_t n = readlink(link, buf, sizeof(buf));
	if (n < 0)
		return NULL;
	if ((size_t)n >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	buf[n] = '\0';
	const char *slash = strrchr(link, '/');
	if (buf[0] == '/' || !slash)
		return xstrdup(buf);
	return xasprintf("%.*s/%s", (int)(slash - link), link, buf);
}

int replace_target(const char *path, char **target)
{
	char *p = xstrdup(path);
	*target = NULL;
	for (int depth = 0;; depth++) {
		struct stat st;
		if (lstat(p, &st)) {
			if (errno != ENOENT)
				break;
			*target = p; /* missing (a dangling link's target too): made there */
			return 0;
		}
		if (S_ISREG(st.st_mode)) {
			*target = p;
			return 0;
		}
		if (!S_ISLNK(st.st_mode)) {
			errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
			break;
		}
		if (depth == 40) { /* the kernel's own limit on a chain of links */
			errno = ELOOP;
			break;
		}
		char *next = link_target(p);
		if (!next)
			break;
		free(p);
		p = next;
	}
	int e = errno;
	free(p);
	errno = e;
	return -1;
}

const char *path_kind(const char *path)
{
	struct stat st;
	if (stat(path, &st))
		return "a missing file";
	if (S_ISREG(st.st_mode))
		return "a regular file";
	if (S_ISDIR(st.st_mode))
		return "a directory";
	if (S_ISFIFO(st.st_mode))
		return "a FIFO";
	if (S_ISCHR(st.st_mode))
		return "a character device";
	if (S_ISBLK(st.st_mode))
		return "a block device";
	if (S_ISSOCK(st.st_mode))
		return "a socket";
	return "a special file";
}

int file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int dir_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int remove_tree(const char *path)
{
	struct stat st;
	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlink(path);
	DIR *d = opendir(path);
	if (!d)
		return -1;
	struct dirent *de;
	int rc = 0;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *sub = xasprintf("%s/%s", path, de->d_name);
		if (remove_tree(sub))
			rc = -1;
		free(sub);
	}
	closedir(d);
	if (rmdir(path))
		rc = -1;
	return rc;
}

char *exe_dir(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	char *slash = strrchr(buf, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	return xstrdup(buf);
}
