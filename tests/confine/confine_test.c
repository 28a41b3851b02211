/*
 * CPU test of the runner's seccomp filters (runner/confine.c): a child process installs them
 * as the runner does and checks, call by call, that what must fail fails and what the runner
 * and CUDA need still works. Prints "ok - ..." / "not ok - ..." and a closing count; exits 1 on
 * any failure. No GPU, no CUDA.
 */
#include "../../runner/confine.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int failed, passed;

static void check(int cond, const char *what)
{
	printf("%s - %s\n", cond ? "ok" : "not ok", what);
	fflush(stdout);
	if (cond)
		passed++;
	else
		failed++;
}

static void *thread_fn(void *arg)
{
	return arg;
}

/* A thread made before the filter (as CUDA's are) tries to open a file for writing when told */
static int go;
static int early_result = -2, early_errno;
static const char *early_path;

static void *early_thread(void *arg)
{
	while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
		usleep(1000);
	early_result = open(early_path, O_WRONLY | O_CREAT, 0644);
	early_errno = errno;
	return arg;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/tmp";
	char path[4096], ro[4096];
	snprintf(path, sizeof(path), "%s/confine-test-created", dir);
	snprintf(ro, sizeof(ro), "%s/confine-test-existing", dir);
	unlink(path);
	FILE *f = fopen(ro, "w");
	if (!f) {
		fprintf(stderr, "cannot write '%s'\n", ro);
		return 2;
	}
	fputs("x\n", f);
	fclose(f);
	int report[2], before[2], other[2];
	if (pipe(report) || pipe(before))
		return 2;
	/* the pipe's read ends stay open here so writes do not raise SIGPIPE */
	char early[4096];
	snprintf(early, sizeof(early), "%s/confine-test-early", dir);
	unlink(early);
	early_path = early;
	pthread_t early_th;
	if (pthread_create(&early_th, NULL, early_thread, NULL))
		return 2;
	char err[256];
	if (confine_process(report[1], err, sizeof(err))) {
		printf("not ok - confine_process: %s\n", err);
		return 1;
	}
	check(1, "the filter installs");
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	pthread_join(early_th, NULL);
	check(early_result < 0 && early_errno == EPERM && access(early, F_OK) != 0,
	      "a thread made before the filter is confined too");
	int fd = open(path, O_WRONLY | O_CREAT, 0644);
	check(fd < 0 && errno == EPERM, "open(O_WRONLY|O_CREAT) fails with EPERM");
	fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDWR | O_CREAT, 0644);
	check(fd < 0 && errno == EPERM, "raw openat(O_RDWR|O_CREAT) fails with EPERM");
	fd = open(ro, O_WRONLY | O_TRUNC);
	check(fd < 0 && errno == EPERM, "open of an existing file for writing fails");
	fd = open(ro, O_RDONLY);
	check(fd >= 0, "open read-only still works (dlopen needs it)");
	if (fd >= 0)
		close(fd);
	check(access(path, F_OK) != 0, "no file was created");
	check(unlink(ro) != 0 && errno == EPERM && access(ro, F_OK) == 0, "unlink fails");
	check(rename(ro, path) != 0 && errno == EPERM, "rename fails");
	char *const av[] = { "/bin/true", NULL };
	check(execv("/bin/true", av) != 0 && errno == EPERM, "execve fails");
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	check(pid < 0 && errno == EPERM, "fork fails");
	check(socket(AF_INET, SOCK_STREAM, 0) < 0 && errno == EPERM, "socket fails");
	check(socket(AF_UNIX, SOCK_STREAM, 0) < 0 && errno == EPERM, "unix socket fails");
	check(kill(getppid(), 0) != 0 && errno == EPERM, "kill(parent) fails");
	check(kill(0, 0) != 0 && errno == EPERM, "kill(0) (the process group) fails");
	check(kill(getpid(), 0) == 0, "kill(self, 0) works");
	struct rlimit rl;
	check(getrlimit(RLIMIT_NOFILE, &rl) == 0 && setrlimit(RLIMIT_NOFILE, &rl) == 0,
	      "its own resource limits can be read and set");
	check(prlimit(getppid(), RLIMIT_NOFILE, NULL, &rl) != 0 && errno == EPERM,
	      "another process's resource limits cannot");
	check(write(report[1], "r", 1) == 1, "write to the report fd works");
	check(write(before[1], "b", 1) == 1, "write to a descriptor open before the filter works (CUDA's)");
	check(pipe(other) == 0, "a pipe can still be made");
	check(write(other[1], "o", 1) < 0 && errno == EPERM, "write to a descriptor opened after it fails");
	check(syscall(SYS_write, other[1], "o", 1) < 0 && errno == EPERM, "raw write to another fd fails");
	check(write(1, "", 0) == 0, "write to stdout works");
	char c = 'x';
	check(ioctl(0, TIOCSTI, &c) != 0 && errno == EPERM, "ioctl(TIOCSTI), typing into a terminal, fails");
	int sz = 0;
	check(ioctl(report[0], FIONREAD, &sz) == 0, "other ioctls work (CUDA's driver needs them)");
	pthread_t th;
	check(pthread_create(&th, NULL, thread_fn, NULL) == 0 && pthread_join(th, NULL) == 0,
	      "threads can still be made");
	void *lib = dlopen("libz.so.1", RTLD_NOW);
	check(lib != NULL || access("/lib/x86_64-linux-gnu/libz.so.1", F_OK) != 0,
	      "dlopen of a new library works before the second filter");
	void *m = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	check(m == MAP_FAILED && errno == EPERM, "anonymous executable mmap fails already (constructors run in dlopen)");
	int rfd = open(ro, O_RDONLY);
	m = rfd >= 0 ? mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, rfd, 0) : MAP_FAILED;
	check(m != MAP_FAILED, "executable mmap of a file works before the second filter (dlopen)");
	void *wx = rfd >= 0 ? mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE, rfd, 0) : MAP_FAILED;
	check(wx == MAP_FAILED && errno == EPERM, "writable and executable at once fails");
	void *rw = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	check(rw != MAP_FAILED && mprotect(rw, 4096, PROT_READ | PROT_EXEC) != 0 && errno == EPERM,
	      "mprotect to executable fails already");
	if (rfd >= 0)
		close(rfd);

	if (confine_no_new_exec(err, sizeof(err))) {
		printf("not ok - confine_no_new_exec: %s\n", err);
		return 1;
	}
	void *w = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	check(w == MAP_FAILED && errno == EPERM, "mmap(PROT_EXEC) fails after the second filter");
	void *d = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	check(d != MAP_FAILED, "mmap without PROT_EXEC works");
	check(d != MAP_FAILED && mprotect(d, 4096, PROT_READ | PROT_EXEC) != 0 && errno == EPERM,
	      "mprotect(PROT_EXEC) fails");
	check(dlopen("libutil.so.1", RTLD_NOW) == NULL, "dlopen of a library not yet loaded fails");
	check(open(path, O_WRONLY | O_CREAT, 0644) < 0, "the first filter still holds");
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
