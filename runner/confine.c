/*
 * seccomp-BPF filters of the runner; see confine.h. A filter is a list of rules, one per
 * system call: the call's number selects a block that returns (allow, or fail with an errno,
 * possibly after looking at one argument); a call no rule names is allowed. Denied calls fail
 * with EPERM rather than killing the process, so the runner survives a candidate's attempt and
 * still reports (the attempt gains nothing); calls whose arguments live in memory the filter
 * cannot read (clone3, openat2) fail with ENOSYS, which makes glibc fall back to the older call
 * that the filter can judge.
 */
#include "confine.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define CONFINE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define CONFINE_ARCH AUDIT_ARCH_AARCH64
#else
#error "confine.c: seccomp filters are written for x86_64 and aarch64 only"
#endif

#define MAX_INSNS 2048
#define MAX_WRITE_FDS 200 /* a jump over the list must fit in 8 bits */
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i)) /* little endian: low half */

struct prog {
	struct sock_filter f[MAX_INSNS];
	int n;
};

static void emit(struct prog *p, struct sock_filter ins)
{
	if (p->n < MAX_INSNS)
		p->f[p->n] = ins;
	p->n++;
}

#define STMT(code, k) ((struct sock_filter)BPF_STMT(code, k))
#define JUMP(code, k, jt, jf) ((struct sock_filter)BPF_JUMP(code, k, jt, jf))
#define RET_ALLOW STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define RET_ERRNO(e) STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))

/* A rule's block: skipped unless the call number (in the accumulator) is nr; every block
 * returns, so after a skipped block the accumulator still holds the number. */
static void rule_begin(struct prog *p, long nr, int body_len)
{
	emit(p, JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, (unsigned char)body_len));
}

static void deny(struct prog *p, long nr, int e)
{
	rule_begin(p, nr, 1);
	emit(p, RET_ERRNO(e));
}

/* Denied when (args[argi] & mask) != 0, allowed otherwise. */
static void deny_if_flags(struct prog *p, long nr, int argi, unsigned mask)
{
	rule_begin(p, nr, 4);
	emit(p, STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(argi)));
	emit(p, JUMP(BPF_JMP | BPF_JSET | BPF_K, mask, 0, 1));
	emit(p, RET_ERRNO(EPERM));
	emit(p, RET_ALLOW);
}

/* Allowed when (args[argi] & mask) != 0 (clone with CLONE_THREAD), denied otherwise. */
static void allow_if_flags(struct prog *p, long nr, int argi, unsigned mask)
{
	rule_begin(p, nr, 4);
	emit(p, STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(argi)));
	emit(p, JUMP(BPF_JMP | BPF_JSET | BPF_K, mask, 0, 1));
	emit(p, RET_ALLOW);
	emit(p, RET_ERRNO(EPERM));
}

/* Allowed when the low 32 bits of args[argi] are one of vals[0..n), denied otherwise. */
static void allow_if_one_of(struct prog *p, long nr, int argi, const unsigned *vals, int n)
{
	rule_begin(p, nr, 1 + n + 2);
	emit(p, STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(argi)));
	for (int i = 0; i < n; i++) /* equal: jump over the rest to the allow */
		emit(p, JUMP(BPF_JMP | BPF_JEQ | BPF_K, vals[i], (unsigned char)(n - i), 0));
	emit(p, RET_ERRNO(EPERM));
	emit(p, RET_ALLOW);
}

/* Denied when the low 32 bits of args[argi] are one of vals[0..n), allowed otherwise. */
static void deny_if_one_of(struct prog *p, long nr, int argi, const unsigned *vals, int n)
{
	rule_begin(p, nr, 1 + n + 2);
	emit(p, STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(argi)));
	for (int i = 0; i < n; i++) /* equal: jump over the rest to the deny */
		emit(p, JUMP(BPF_JMP | BPF_JEQ | BPF_K, vals[i], (unsigned char)(n - i), 0));
	emit(p, RET_ALLOW);
	emit(p, RET_ERRNO(EPERM));
}

/* mmap: executable memory only from a file (dlopen maps the candidate's code so), never
 * anonymous and never writable at once (code made at run time). */
static void mmap_exec_from_files_only(struct prog *p)
{
	rule_begin(p, __NR_mmap, 8);
	emit(p, STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(2)));                    /* prot */
	emit(p, JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 1, 0));
	emit(p, RET_ALLOW);                                                    /* not executable */
	emit(p, JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_WRITE, 3, 0));           /* writable too: deny */
	emit(p, STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(3)));                    /* flags */
	emit(p, JUMP(BPF_JMP | BPF_JSET | BPF_K, MAP_ANONYMOUS, 1, 0));
	emit(p, RET_ALLOW);                                                    /* a file's code */
	emit(p, RET_ERRNO(EPERM));
}

static void prologue(struct prog *p)
{
	emit(p, STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)));
	emit(p, JUMP(BPF_JMP | BPF_JEQ | BPF_K, CONFINE_ARCH, 1, 0));
	emit(p, STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
	emit(p, STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)));
#if defined(__x86_64__)
	/* the x32 ABI's numbers: none of them is for us */
	emit(p, JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));
	emit(p, RET_ERRNO(EPERM));
#endif
}

static int install(struct prog *p, char *err, size_t errlen)
{
	emit(p, RET_ALLOW);
	if (p->n > MAX_INSNS) {
		snprintf(err, errlen, "seccomp filter too long (%d instructions)", p->n);
		return -1;
	}
	struct sock_fprog fp = { (unsigned short)p->n, p->f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		snprintf(err, errlen, "prctl(PR_SET_NO_NEW_PRIVS): %s", strerror(errno));
		return -1;
	}
	/* TSYNC: every thread of the process, not only this one. CUDA's threads exist already,
	 * and code of the candidate can run on them (a host callback runs on one). */
	long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &fp);
	if (r) {
		snprintf(err, errlen, "installing the seccomp filter on every thread: %s", r > 0
			 ? "a thread could not take it" : strerror(errno));
		return -1;
	}
	return 0;
}

int confine_process(int report_fd, char *err, size_t errlen)
{
	static struct prog p; /* 8 KiB: not on the stack */
	p.n = 0;
	prologue(&p);

	/* no new programs, no new processes; threads stay allowed (CUDA makes some) */
	deny(&p, __NR_execve, EPERM);
	deny(&p, __NR_execveat, EPERM);
#ifdef __NR_fork
	deny(&p, __NR_fork, EPERM);
	deny(&p, __NR_vfork, EPERM);
#endif
	allow_if_flags(&p, __NR_clone, 0, CLONE_THREAD);
	deny(&p, __NR_clone3, ENOSYS);

	/* no network, no other processes' memory or signals */
	static const long net[] = { __NR_socket, __NR_socketpair, __NR_connect, __NR_bind, __NR_listen,
				    __NR_accept, __NR_accept4, __NR_sendto, __NR_sendmsg, __NR_sendmmsg };
	for (size_t i = 0; i < sizeof(net) / sizeof(net[0]); i++)
		deny(&p, net[i], EPERM);
	static const long proc[] = { __NR_ptrace, __NR_process_vm_readv, __NR_process_vm_writev,
				     __NR_pidfd_open, __NR_pidfd_getfd, __NR_pidfd_send_signal,
				     __NR_rt_sigqueueinfo, __NR_rt_tgsigqueueinfo, __NR_kcmp,
				     __NR_setns, __NR_unshare, __NR_bpf, __NR_io_uring_setup,
				     __NR_io_uring_enter, __NR_io_uring_register, __NR_memfd_create,
				     __NR_userfaultfd, __NR_init_module, __NR_finit_module,
				     __NR_kexec_load, __NR_mount, __NR_umount2, __NR_chroot,
				     __NR_pivot_root, __NR_perf_event_open, __NR_mq_open,
				     __NR_mq_timedsend, __NR_msgget, __NR_msgsnd, __NR_add_key,
				     __NR_request_key, __NR_keyctl };
	for (size_t i = 0; i < sizeof(proc) / sizeof(proc[0]); i++)
		deny(&p, proc[i], EPERM);
	/* ioctl stays (CUDA talks to its driver through it), but not the two that push input into
	 * a terminal (the user's shell, through a read-only /dev/tty) */
	static const unsigned tty_inject[] = { TIOCSTI, TIOCLINUX };
	deny_if_one_of(&p, __NR_ioctl, 1, tty_inject, 2);
	unsigned self = (unsigned)getpid();
	allow_if_one_of(&p, __NR_kill, 0, &self, 1);
	allow_if_one_of(&p, __NR_tgkill, 0, &self, 1);
	allow_if_one_of(&p, __NR_tkill, 0, &self, 1);
	unsigned self_or_0[2] = { 0, self }; /* resource limits: of this process only */
	allow_if_one_of(&p, __NR_prlimit64, 0, self_or_0, 2);

	/* files: read-only opens only (dlopen of the candidate needs them), no changes to the
	 * file system */
	unsigned wflags = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND;
#ifdef __NR_open
	deny_if_flags(&p, __NR_open, 1, wflags);
	deny(&p, __NR_creat, EPERM);
#endif
	deny_if_flags(&p, __NR_openat, 2, wflags);
	deny(&p, __NR_openat2, ENOSYS);
	static const long fs[] = {
		__NR_unlinkat, __NR_renameat2, __NR_mkdirat, __NR_linkat, __NR_symlinkat,
		__NR_fchmod, __NR_fchmodat, __NR_fchown, __NR_fchownat, __NR_truncate, __NR_ftruncate,
		__NR_fallocate, __NR_mknodat, __NR_utimensat, __NR_setxattr, __NR_lsetxattr,
		__NR_fsetxattr, __NR_removexattr, __NR_lremovexattr, __NR_fremovexattr,
		__NR_name_to_handle_at, __NR_open_by_handle_at,
		__NR_sendfile, __NR_splice, __NR_tee, __NR_vmsplice, __NR_copy_file_range,
#ifdef __NR_unlink
		__NR_unlink, __NR_rename, __NR_renameat, __NR_rmdir, __NR_mkdir, __NR_link,
		__NR_symlink, __NR_chmod, __NR_chown, __NR_lchown, __NR_mknod, __NR_utime,
		__NR_utimes, __NR_futimesat,
#endif
	};
	for (size_t i = 0; i < sizeof(fs) / sizeof(fs[0]); i++)
		deny(&p, fs[i], EPERM);

	/* writes reach stdout, stderr, the report pipe, and the descriptors open now (CUDA's own:
	 * device files, eventfds and pipes its threads may signal through; the runner itself
	 * holds no file open for writing here); none opened from now on */
	/* no code made at run time, even before the candidate is loaded: its constructors run
	 * inside dlopen */
	mmap_exec_from_files_only(&p);
	deny_if_flags(&p, __NR_mprotect, 2, PROT_EXEC);
	deny_if_flags(&p, __NR_pkey_mprotect, 2, PROT_EXEC);

	unsigned fds[MAX_WRITE_FDS];
	int nfd = 0;
	fds[nfd++] = 1;
	fds[nfd++] = 2;
	if (report_fd > 2)
		fds[nfd++] = (unsigned)report_fd;
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	while (d && (de = readdir(d)) && nfd < MAX_WRITE_FDS) {
		char *end;
		long fd = strtol(de->d_name, &end, 10);
		if (*end || end == de->d_name || fd <= 2 || fd == report_fd || fd == dirfd(d))
			continue;
		fds[nfd++] = (unsigned)fd;
	}
	if (d)
		closedir(d);
	static const long wr[] = { __NR_write, __NR_writev, __NR_pwrite64, __NR_pwritev, __NR_pwritev2 };
	for (size_t i = 0; i < sizeof(wr) / sizeof(wr[0]); i++)
		allow_if_one_of(&p, wr[i], 0, fds, nfd);
	return install(&p, err, errlen);
}

int confine_no_new_exec(char *err, size_t errlen)
{
	static struct prog p;
	p.n = 0;
	prologue(&p);
	deny_if_flags(&p, __NR_mmap, 2, PROT_EXEC);
	deny_if_flags(&p, __NR_mprotect, 2, PROT_EXEC);
	deny_if_flags(&p, __NR_pkey_mprotect, 2, PROT_EXEC);
	deny(&p, __NR_remap_file_pages, EPERM);
	return install(&p, err, errlen);
}
