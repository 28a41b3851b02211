/*
 * Tests of the build module: arch parsing, the nvcc command line, the cache key, and the cache
 * and deadline behaviour of build_kernel against a fake nvcc (a shell script that counts its
 * runs). The real nvcc runs in tests/e2e/build.sh.
 */
#include "test.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "eval/build.h"
#include "util/fsutil.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

TEST(build_parse_arch_accepts_sm_forms_only)
{
	char g[64];
	CHECK_INT(build_parse_arch("sm_90a", g, sizeof(g)), 0);
	CHECK_STR(g, "arch=compute_90a,code=sm_90a");
	CHECK_INT(build_parse_arch("sm_80", g, sizeof(g)), 0);
	CHECK_STR(g, "arch=compute_80,code=sm_80");
	CHECK_INT(build_parse_arch("sm_100a", g, sizeof(g)), 0);
	CHECK_INT(build_parse_arch("sm_120f", g, sizeof(g)), 0);
	static const char *bad[] = { "", "sm_", "sm_9", "sm_9000", "sm_90b", "sm_90aa",
				     "compute_90", "90a", "sm_90a;rm", "sm_90 a", "sm_999",
				     "sm_99", "sm_80a", "sm_90f", "sm_91", NULL };
	for (int i = 0; bad[i]; i++)
		if (!build_parse_arch(bad[i], g, sizeof(g))) {
			test_fail(__FILE__, __LINE__, "accepted arch '%s'", bad[i]);
			return;
		}
	CHECK_INT(build_parse_arch(NULL, g, sizeof(g)), -1);
}

TEST(build_argv_is_the_documented_command)
{
	const char *extra[] = { "-Xptxas", "-v", NULL };
	struct build_opts o = BUILD_OPTS_INIT;
	o.nvcc = "/opt/nvcc";
	o.extra_flags = extra;
	char *err = NULL;
	char **argv = build_argv(&o, "/c/include", "/abi", &err);
	CHECK(argv != NULL);
	struct strbuf sb = STRBUF_INIT;
	for (char **a = argv; *a; a++)
		strbuf_addf(&sb, "%s%s", a == argv ? "" : " ", *a);
	CHECK_STR(sb.buf, "/opt/nvcc -std=c++17 -O3 -Xcompiler -fPIC -gencode "
			  "arch=compute_90a,code=sm_90a -I/c/include -I/abi --expt-relaxed-constexpr "
			  "-DNDEBUG -DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL=1 -lineinfo -Xptxas -v "
			  "-c -o kernel.o kernel.cu");
	build_argv_free(argv);
	/* the link of the admitted object; -lcuda only for the TMA encoders */
	for (int driver = 0; driver < 2; driver++) {
		argv = build_link_argv(&o, driver, &err);
		CHECK(argv != NULL);
		strbuf_reset(&sb);
		for (char **a = argv; *a; a++)
			strbuf_addf(&sb, "%s%s", a == argv ? "" : " ", *a);
		CHECK_STR(sb.buf, driver ? "/opt/nvcc -std=c++17 -O3 -shared -Xcompiler -fPIC "
					   "-gencode arch=compute_90a,code=sm_90a -Xptxas -v -o "
					   "kernel.so kernel.o -lcuda"
					 : "/opt/nvcc -std=c++17 -O3 -shared -Xcompiler -fPIC "
					   "-gencode arch=compute_90a,code=sm_90a -Xptxas -v -o "
					   "kernel.so kernel.o");
		build_argv_free(argv);
	}
	o.arch = "sm_9x";
	CHECK(build_argv(&o, "/c", "/a", &err) == NULL);
	CHECK_HAS(err, "arch 'sm_9x' is not a GPU architecture nvcc knows");
	free(err);
	strbuf_release(&sb);
}

TEST(build_cache_key_covers_every_input)
{
	const char *argv1[] = { "nvcc", "-O3", "kernel.cu", NULL };
	const char *argv2[] = { "nvcc", "-O2", "kernel.cu", NULL };
	const char *argv3[] = { "nvcc", "-O", "3kernel.cu", NULL };
	char k0[65], k[65];
	build_cache_key("src", 3, argv1, "v13.0", "4.2.0", "abi", "rules", k0);
	CHECK_INT(strlen(k0), 64);
	build_cache_key("src", 3, argv1, "v13.0", "4.2.0", "abi", "rules", k);
	CHECK_STR(k, k0);
	build_cache_key("srd", 3, argv1, "v13.0", "4.2.0", "abi", "rules", k);
	CHECK(strcmp(k, k0));
	build_cache_key("src", 3, argv2, "v13.0", "4.2.0", "abi", "rules", k);
	CHECK(strcmp(k, k0));
	build_cache_key("src", 3, argv3, "v13.0", "4.2.0", "abi", "rules", k); /* same bytes, other split */
	CHECK(strcmp(k, k0));
	build_cache_key("src", 3, argv1, "v13.1", "4.2.0", "abi", "rules", k);
	CHECK(strcmp(k, k0));
	build_cache_key("src", 3, argv1, "v13.0", "4.3.0", "abi", "rules", k);
	CHECK(strcmp(k, k0));
	build_cache_key("src", 3, argv1, "v13.0", "4.2.0", "abi2", "rules", k);
	CHECK(strcmp(k, k0));
	build_cache_key("src\0x", 5, argv1, "v13.0", "4.2.0", "abi", "rules", k); /* bytes past a NUL */
	CHECK(strcmp(k, k0));
}

TEST(build_default_cache_dir_follows_xdg)
{
	setenv("XDG_CACHE_HOME", "/x/cache", 1);
	char *d = build_default_cache_dir();
	CHECK_STR(d, "/x/cache/cutegen/build");
	free(d);
	unsetenv("XDG_CACHE_HOME");
	setenv("HOME", "/home/u", 1);
	d = build_default_cache_dir();
	CHECK_STR(d, "/home/u/.cache/cutegen/build");
	free(d);
}

/*
 * A fake nvcc: answers --version, appends a line to runs for each compile (-c), and behaves
 * by what kernel.cu contains: SLEEP sleeps 5 s, BROKEN fails with a front-end error, else
 * kernel.o (a copy of the source); the link makes kernel.so and appends to links. A fake
 * objdump prints a symbol table that references open when the object holds EVIL, and a
 * syscall instruction when it holds SYSCALL.
 */
struct fake {
	char nvcc[512], cutlass[512], cache[512], runs[512], objdump[512], links[512];
};

static void fake_setup(struct fake *f)
{
	const char *t = test_tmpdir();
	snprintf(f->runs, sizeof(f->runs), "%s/runs", t);
	snprintf(f->cache, sizeof(f->cache), "%s/cache", t);
	snprintf(f->cutlass, sizeof(f->cutlass), "%s/cutlass/include", t);
	char *p = xasprintf("%s/cute", f->cutlass);
	mkdir_p(p);
	free(p);
	p = xasprintf("%s/cutlass", f->cutlass);
	mkdir_p(p);
	free(p);
	test_write_file("cutlass/include/cute/tensor.hpp", "// fake\n");
	test_write_file("cutlass/include/cutlass/version.h", "#define CUTLASS_MAJOR 9\n");
	snprintf(f->links, sizeof(f->links), "%s/links", t);
	char *script = xasprintf(
		"#!/bin/sh\n"
		"if [ \"$1\" = --version ]; then echo 'fake nvcc, release 99.9'; exit 0; fi\n"
		"case \" $* \" in *' -c '*) ;; *) echo \"$*\" >> '%s'; echo ELF > kernel.so; "
		"exit 0;; esac\n"
		"echo \"$PWD $TMPDIR\" >> '%s'\n"
		"if grep -q SLEEP kernel.cu; then sleep 5; fi\n"
		"if grep -q BROKEN kernel.cu; then\n"
		"  echo 'kernel.cu(2): error: identifier \"BROKEN\" is undefined'\n"
		"  echo '    BROKEN;'\n  echo '    ^'\n  echo\n"
		"  echo '1 error detected in the compilation of \"kernel.cu\".'\n  exit 2\nfi\n"
		"cp kernel.cu kernel.o\n",
		f->links, f->runs);
	snprintf(f->nvcc, sizeof(f->nvcc), "%s", test_write_file("nvcc", script));
	free(script);
	chmod(f->nvcc, 0755);
	snprintf(f->objdump, sizeof(f->objdump), "%s", test_write_file("objdump",
		"#!/bin/sh\n"
		"[ -f kernel.o ] || exit 1\n"
		"if [ \"$1\" = -wtr ]; then\n"
		"  printf '\\nkernel.o:     file format elf64-x86-64\\n\\nSYMBOL TABLE:\\n'\n"
		"  printf '0000000000000000 g     F .text\\t0000000000000040 cutegen_launch\\n'\n"
		"  printf '0000000000000000         *UND*\\t0000000000000000 cudaPeekAtLastError\\n'\n"
		"  grep -q EVIL kernel.o && "
		"printf '0000000000000000         *UND*\\t0000000000000000 open\\n'\n"
		"  printf '\\nRELOCATION RECORDS FOR [.text]:\\nOFFSET           TYPE              VALUE\\n'\n"
		"  grep -q EVIL kernel.o && "
		"printf '0000000000000010 R_X86_64_PLT32    open-0x0000000000000004\\n'\n"
		"  exit 0\n"
		"fi\n"
		"printf '\\nDisassembly of section .text:\\n\\n0000000000000000 <cutegen_launch>:\\n'\n"
		"printf '   0:\\tsub    $0x8,%%rsp\\n'\n"
		"grep -q SYSCALL kernel.o && printf '   4:\\tsyscall\\n'\n"
		"exit 0\n"));
	chmod(f->objdump, 0755);
}

static int runs(const struct fake *f)
{
	struct strbuf sb = STRBUF_INIT;
	int n = 0;
	if (!strbuf_read_file(&sb, f->runs, 0))
		for (size_t i = 0; i < sb.len; i++)
			n += sb.buf[i] == '\n';
	strbuf_release(&sb);
	return n;
}

static struct build_opts fake_opts(const struct fake *f)
{
	struct build_opts o = BUILD_OPTS_INIT;
	o.nvcc = f->nvcc;
	o.cutlass_include = f->cutlass;
	o.cache_dir = f->cache;
	o.objdump = f->objdump;
	o.cxxfilt = "cat";
	return o;
}

static int count_entries(const char *dir)
{
	char *cmd = xasprintf("find '%s' -mindepth 1 2>/dev/null | wc -l", dir);
	FILE *p = popen(cmd, "r");
	int n = -1;
	if (p) {
		if (fscanf(p, "%d", &n) != 1)
			n = -1;
		pclose(p);
	}
	free(cmd);
	return n;
}

TEST(build_compiles_then_hits_the_cache)
{
	struct fake f;
	fake_setup(&f);
	struct build_opts o = fake_opts(&f);
	struct build_result r = BUILD_RESULT_INIT;
	char *err = NULL;
	const char *src = "__global__ void k() {}\n";
	CHECK_INT(build_kernel(&o, src, strlen(src), &r, &err), 0);
	CHECK_INT(r.ok, 1);
	CHECK_INT(r.cache_hit, 0);
	CHECK_INT(r.status, 0);
	CHECK(file_exists(r.so_path));
	char *want = xasprintf("/%.2s/%s/kernel.so", r.key, r.key);
	CHECK(ends_with(r.so_path, want));
	free(want);
	CHECK_INT(runs(&f), 1);
	char *so = xstrdup(r.so_path);
	build_result_release(&r);

	/* the ABI header came from the binary into the cache */
	char *abi = xasprintf("%s/include/cutegen/kernel_abi.h", f.cache);
	CHECK(file_exists(abi));
	free(abi);
	/* the compile ran in the entry's directory with TMPDIR there; tmp/ is empty again */
	struct strbuf sb = STRBUF_INIT;
	strbuf_read_file(&sb, f.runs, 0);
	CHECK_HAS(sb.buf, "/cache/tmp/");
	strbuf_release(&sb);
	char *tmp = xasprintf("%s/tmp", f.cache);
	CHECK_INT(count_entries(tmp), 0);
	free(tmp);

	CHECK_INT(build_kernel(&o, src, strlen(src), &r, &err), 0);
	CHECK_INT(r.ok, 1);
	CHECK_INT(r.cache_hit, 1);
	CHECK_STR(r.so_path, so);
	CHECK_INT(runs(&f), 1);
	build_result_release(&r);

	/* other flags: another entry */
	const char *extra[] = { "-DX=1", NULL };
	o.extra_flags = extra;
	CHECK_INT(build_kernel(&o, src, strlen(src), &r, &err), 0);
	CHECK_INT(r.cache_hit, 0);
	CHECK(strcmp(r.so_path, so));
	CHECK_INT(runs(&f), 2);
	build_result_release(&r);
	free(so);
}

TEST(build_failure_is_parsed_and_cached)
{
	struct fake f;
	fake_setup(&f);
	struct build_opts o = fake_opts(&f);
	struct build_result r = BUILD_RESULT_INIT;
	char *err = NULL;
	const char *src = "void f() {\n  BROKEN;\n}\n";
	for (int round = 0; round < 2; round++) {
		CHECK_INT(build_kernel(&o, src, strlen(src), &r, &err), 0);
		CHECK_INT(r.ok, 0);
		CHECK_INT(r.cache_hit, round);
		CHECK_INT(r.status, 2);
		CHECK(r.so_path == NULL);
		CHECK_HAS(r.log, "identifier \"BROKEN\" is undefined");
		const struct diag *d = diag_first_error(&r.diags);
		CHECK(d != NULL);
		CHECK_INT(d->line, 2);
		CHECK_INT(d->column, 3);
		build_result_release(&r);
	}
	CHECK_INT(runs(&f), 1);
}

static int count_lines(const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	int n = 0;
	if (!strbuf_read_file(&sb, path, 0))
		for (size_t i = 0; i < sb.len; i++)
			n += sb.buf[i] == '\n';
	strbuf_release(&sb);
	return n;
}

TEST(build_object_check_rejects_before_linking_and_caches_the_verdict)
{
	struct fake f;
	fake_setup(&f);
	struct build_opts o = fake_opts(&f);
	struct build_result r = BUILD_RESULT_INIT;
	char *err = NULL;
	const char *src = "// EVIL\nextern \"C\" int cg_o(const char *, int) __asm__(\"op\" \"en\");\n";
	for (int round = 0; round < 2; round++) {
		CHECK_INT(build_kernel(&o, src, strlen(src), &r, &err), 0);
		CHECK_INT(r.ok, 0);
		CHECK_INT(r.rejected, 1);
		CHECK_INT(r.cache_hit, round);
		CHECK(r.so_path == NULL);
		CHECK_INT((int)r.symbols.nr, 1);
		CHECK_STR(r.symbols.items[0].rule, "symbol-allowlist");
		CHECK_HAS(r.symbols.items[0].message, "references 'open' (referenced from cutegen_launch)");
		/* the asm label is found although no identifier "open" is in the source */
		CHECK_INT(r.symbols.items[0].line, 2);
		build_result_release(&r);
	}
	CHECK_INT(runs(&f), 1);
	CHECK_INT(count_lines(f.links), 0); /* never linked */

	/* build_checked turns it into the policy's verdict */
	struct policy_report pol = POLICY_REPORT_INIT;
	const char *ok_src = "// EVIL\n#include <cutegen/kernel_abi.h>\nCUTEGEN_DECLARE_ABI();\n"
			     "CUTEGEN_KERNEL int cutegen_launch(const DLTensor *i, int ni, DLTensor *o, "
			     "int no, const double *s, int ns, void *w, size_t wb, cudaStream_t st) "
			     "{ return 0; }\n";
	CHECK_INT(build_checked(&o, ok_src, strlen(ok_src), &pol, &r, &err), CG_REJECTED);
	CHECK_INT((int)pol.nr, 1);
	CHECK_HAS(pol.items[0].message, "'open'");
	policy_report_release(&pol);
	build_result_release(&r);

	/* a syscall instruction in host code */
	const char *sys = "// SYSCALL\n";
	CHECK_INT(build_kernel(&o, sys, strlen(sys), &r, &err), 0);
	CHECK_INT(r.rejected, 1);
	CHECK_STR(r.symbols.items[0].rule, "no-syscall");
	CHECK_HAS(r.symbols.items[0].message, "'cutegen_launch' contains a 'syscall' instruction");
	build_result_release(&r);

	/* a clean object is linked; without the check the evil one is too (another key) */
	const char *clean = "__global__ void k() {}\n";
	CHECK_INT(build_kernel(&o, clean, strlen(clean), &r, &err), 0);
	CHECK_INT(r.ok, 1);
	CHECK_INT(r.rejected, 0);
	CHECK(file_exists(r.so_path));
	build_result_release(&r);
	o.no_symbol_check = 1;
	CHECK_INT(build_kernel(&o, src, strlen(src), &r, &err), 0);
	CHECK_INT(r.ok, 1);
	CHECK_INT(r.cache_hit, 0);
	build_result_release(&r);
	CHECK_INT(count_lines(f.links), 2);

	/* no objdump: an environment error, nothing cached */
	o.no_symbol_check = 0;
	o.objdump = "/nonexistent/objdump";
	const char *other = "// other\n";
	CHECK_INT(build_kernel(&o, other, strlen(other), &r, &err), CG_ENV);
	CHECK_HAS(err, "install binutils");
	free(err);
	err = NULL;
}

TEST(build_deadline_kills_and_is_not_cached)
{
	struct fake f;
	fake_setup(&f);
	struct build_opts o = fake_opts(&f);
	o.deadline_s = 0.3;
	struct build_result r = BUILD_RESULT_INIT;
	char *err = NULL;
	const char *src = "// SLEEP\n";
	for (int round = 0; round < 2; round++) {
		CHECK_INT(build_kernel(&o, src, strlen(src), &r, &err), 0);
		CHECK_INT(r.ok, 0);
		CHECK_INT(r.timed_out, 1);
		CHECK_INT(r.cache_hit, 0);
		CHECK(r.compile_s < 3);
		build_result_release(&r);
	}
	CHECK_INT(runs(&f), 2);
	/* nothing left behind: only include/ and an empty tmp/ */
	char *tmp = xasprintf("%s/tmp", f.cache);
	CHECK_INT(count_entries(tmp), 0);
	free(tmp);
}

TEST(build_no_cache_builds_in_tmpdir)
{
	struct fake f;
	fake_setup(&f);
	struct build_opts o = fake_opts(&f);
	o.no_cache = 1;
	setenv("TMPDIR", test_tmpdir(), 1);
	struct build_result r = BUILD_RESULT_INIT;
	char *err = NULL;
	for (int round = 0; round < 2; round++) {
		CHECK_INT(build_kernel(&o, "x", 1, &r, &err), 0);
		CHECK_INT(r.ok, 1);
		CHECK_INT(r.cache_hit, 0);
		CHECK(starts_with(r.so_path, test_tmpdir()));
		CHECK_HAS(r.so_path, "/cutegen-build.");
		build_result_release(&r);
	}
	CHECK_INT(runs(&f), 2);
	CHECK(!dir_exists(f.cache));
}

TEST(build_environment_and_usage_errors)
{
	struct fake f;
	fake_setup(&f);
	struct build_opts o = fake_opts(&f);
	struct build_result r = BUILD_RESULT_INIT;
	char *err = NULL;
	o.arch = "gfx90a";
	CHECK_INT(build_kernel(&o, "x", 1, &r, &err), CG_USAGE);
	CHECK_HAS(err, "arch 'gfx90a'");
	free(err);
	o.arch = NULL;
	o.nvcc = "/nonexistent/nvcc";
	CHECK_INT(build_kernel(&o, "x", 1, &r, &err), CG_ENV);
	CHECK_HAS(err, "cannot run nvcc");
	free(err);
	o.nvcc = f.nvcc;
	o.cutlass_include = "/nonexistent";
	CHECK_INT(build_kernel(&o, "x", 1, &r, &err), CG_ENV);
	CHECK_HAS(err, "no CuTe headers in '/nonexistent'");
	free(err);
	o.cutlass_include = f.cutlass;
	o.cache_dir = "/proc/cannot/write/here";
	CHECK_INT(build_kernel(&o, "x", 1, &r, &err), CG_IO);
	CHECK_HAS(err, "cannot create the cache directory");
	free(err);
	CHECK_INT(runs(&f), 0);
}

TEST(build_concurrent_processes_share_one_entry)
{
	struct fake f;
	fake_setup(&f);
	struct build_opts o = fake_opts(&f);
	pid_t kids[4];
	for (int i = 0; i < 4; i++) {
		kids[i] = fork();
		if (kids[i] == 0) {
			struct build_result r = BUILD_RESULT_INIT;
			char *err = NULL;
			int rc = build_kernel(&o, "same", 4, &r, &err);
			int ok = !rc && r.ok && file_exists(r.so_path);
			_exit(ok ? 0 : 1);
		}
	}
	for (int i = 0; i < 4; i++) {
		int st = 0;
		waitpid(kids[i], &st, 0);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	struct build_result r = BUILD_RESULT_INIT;
	char *err = NULL;
	CHECK_INT(build_kernel(&o, "same", 4, &r, &err), 0);
	CHECK_INT(r.cache_hit, 1);
	char *entry_parent = xasprintf("%s/%.2s", f.cache, r.key);
	CHECK_INT(count_entries(entry_parent), 1 + 5); /* KEY/: kernel.cu .so log result symbols */
	free(entry_parent);
	char *tmp = xasprintf("%s/tmp", f.cache);
	CHECK_INT(count_entries(tmp), 0);
	free(tmp);
	build_result_release(&r);
}
