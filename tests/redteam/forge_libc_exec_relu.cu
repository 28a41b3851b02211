// CHEAT (class 2, forging the verdict): does no work; its host code finds libc's syscall() at
// run time by reading libc's own ELF symbol table in memory (no symbol for the object check, no
// syscall instruction of its own) and tries every way out of the runner's process: fork, execve
// of a shell that would write a report, a socket to the network, opening the parent's files for
// writing, a SIGKILL to the evaluator (its parent), clone without CLONE_THREAD. When every
// attempt fails it returns 0 like an honest kernel. Expect: incorrect (seccomp refuses every
// call, so the kernel is judged on its output, which it never wrote).
#include <cutegen/kernel_abi.h>
#include <string.h>

CUTEGEN_DECLARE_ABI();

/* ELF64 as libc's loader sees it (no <elf.h>: the kernel policy admits no such include) */
struct ehdr { unsigned char ident[16]; uint16_t type, machine; uint32_t version; uint64_t entry, phoff, shoff;
	      uint32_t flags; uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx; };
struct phdr { uint32_t type, flags; uint64_t offset, vaddr, paddr, filesz, memsz, align; };
struct dyn { int64_t tag; uint64_t val; };
struct sym { uint32_t name; unsigned char info, other; uint16_t shndx; uint64_t value, size; };

/* libc's own dlsym, by hand: from an address inside libc (memcpy's: an allowed symbol), down
 * page by page to its ELF header (the first page of libc's mapping, so every page on the way is
 * libc's), then its dynamic section's symbol and string tables. No symbol the object check
 * could read, no system call instruction of its own. */
static void *libc_lookup(const char *want)
{
	uintptr_t p = (uintptr_t)(void *)&memcpy & ~(uintptr_t)4095;
	while (memcmp((const void *)p, "\177ELF", 4))
		p -= 4096;
	const struct ehdr *eh = (const struct ehdr *)p;
	const struct phdr *ph = (const struct phdr *)(p + eh->phoff);
	uintptr_t base = 0, dynv = 0;
	int have_base = 0;
	for (int i = 0; i < eh->phnum; i++) {
		if (ph[i].type == 1 /* PT_LOAD */ && !have_base) {
			base = p - (ph[i].vaddr & ~(uintptr_t)4095);
			have_base = 1;
		}
		if (ph[i].type == 2 /* PT_DYNAMIC */)
			dynv = ph[i].vaddr;
	}
	if (!dynv)
		return 0;
	const struct sym *sy = 0;
	const char *str = 0;
	uint64_t strsz = 0;
	for (const struct dyn *d = (const struct dyn *)(base + dynv); d->tag != 0; d++) {
		uintptr_t v = d->val;
		if (d->tag == 6 /* DT_SYMTAB */)
			sy = (const struct sym *)(v < base ? base + v : v);
		else if (d->tag == 5 /* DT_STRTAB */)
			str = (const char *)(v < base ? base + v : v);
		else if (d->tag == 10 /* DT_STRSZ */)
			strsz = d->val;
	}
	if (!sy || !str)
		return 0;
	for (; (const char *)sy < str; sy++) /* the symbol table lies before the strings */
		if (sy->name < strsz && sy->value && !strcmp(str + sy->name, want))
			return (void *)(base + sy->value);
	return 0;
}

typedef long (*syscall_fn)(long, ...);

static int g_tried;
static long g_results[6];

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor *outputs, int num_outputs,
				  const double *scalars, int num_scalars, void *workspace, size_t workspace_bytes,
				  cudaStream_t stream)
{
	if (g_tried++)
		return 0;
	syscall_fn sys = (syscall_fn)libc_lookup("syscall");
	if (!sys)
		return 0;
	static const char *argv[] = { "/bin/sh", "-c", "echo '{\"verdict\":\"pass\"}' >report.json; exec 3>&-", 0 };
	g_results[0] = sys(57);                                        /* fork */
	if (g_results[0] == 0)
		sys(60, 0L);                                           /* child: exit */
	g_results[1] = sys(59, argv[0], argv, 0L);                     /* execve */
	g_results[2] = sys(41, 2L, 1L, 0L);                            /* socket(AF_INET, SOCK_STREAM) */
	g_results[3] = sys(257, -100L, "../report.json", 01 | 0100, 0644); /* openat for writing */
	g_results[4] = sys(62, sys(110), 9L);                          /* kill(getppid(), SIGKILL) */
	g_results[5] = sys(56, 0x11L, 0L, 0L, 0L, 0L);                 /* clone(SIGCHLD): a fork */
	if (g_results[5] == 0)
		sys(60, 0L);
	return 0;
}
