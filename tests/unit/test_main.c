/* The unit-test runner; see test.h. */
#include "test.h"
#include "util/fsutil.h"
#include "util/xalloc.h"

#include <stdarg.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

struct test {
	const char *name, *file;
	void (*fn)(void);
};

static struct test *tests;
static size_t ntests, alloc_tests;
static int failed_here;
static char tmpdir[256];

void test_register(const char *name, const char *file, void (*fn)(void))
{
	ALLOC_GROW(tests, ntests + 1, alloc_tests);
	tests[ntests++] = (struct test){ name, file, fn };
}

void test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "    %s:%d: ", file, line);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	failed_here = 1;
}

const char *test_tmpdir(void)
{
	if (!tmpdir[0]) {
		const char *base = getenv("TMPDIR");
		snprintf(tmpdir, sizeof(tmpdir), "%s/cutegen-unit-XXXXXX", base ? base : "/tmp");
		if (!mkdtemp(tmpdir))
			die("cannot make a temporary directory");
	}
	return tmpdir;
}

const char *test_write_file(const char *name, const char *text)
{
	static char path[512];
	snprintf(path, sizeof(path), "%s/%s", test_tmpdir(), name);
	if (write_file_atomic(path, text, strlen(text)))
		die("cannot write %s", path);
	return path;
}

static int cmp(const void *a, const void *b)
{
	const struct test *x = a, *y = b;
	int c = strcmp(x->file, y->file);
	return c ? c : strcmp(x->name, y->name);
}

int main(int argc, char **argv)
{
	const char *pattern = argc > 1 ? argv[1] : NULL;
	int passed = 0, failed = 0;
	qsort(tests, ntests, sizeof(*tests), cmp);
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t i = 0; i < ntests; i++) {
		struct test *t = &tests[i];
		if (pattern && !strstr(t->name, pattern) && !strstr(t->file, pattern))
			continue;
		fflush(stdout);
		fflush(stderr);
		pid_t pid = fork();
		if (pid == 0) {
			t->fn();
			if (tmpdir[0])
				remove_tree(tmpdir);
			fflush(stdout);
			_exit(failed_here ? 1 : 0);
		}
		int status = 0;
		waitpid(pid, &status, 0);
		int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
		if (WIFSIGNALED(status))
			fprintf(stderr, "    crashed with signal %d\n", WTERMSIG(status));
		printf("%s %s (%s)\n", ok ? "ok  " : "FAIL", t->name, t->file);
		if (ok)
			passed++;
		else
			failed++;
	}
	printf("unit: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
