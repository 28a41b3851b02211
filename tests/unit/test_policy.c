/* Tests of the static policy check: each rule, what it must ignore, and line numbers. */
#include "test.h"

#include <stdlib.h>

#include "eval/policy.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* A valid candidate around `body`, which starts on line 5. */
static char *wrap(const char *body)
{
	return xasprintf("#include <cutegen/kernel_abi.h>\n"
			 "#include <cute/tensor.hpp>\n"
			 "CUTEGEN_DECLARE_ABI();\n"
			 "// body follows\n"
			 "%s\n"
			 "CUTEGEN_KERNEL int cutegen_launch(const DLTensor *i, int ni, DLTensor *o,\n"
			 "  int no, const double *s, int ns, void *w, size_t wb, cudaStream_t st)\n"
			 "{ return 0; }\n",
			 body);
}

/* Checks `body` and renders the report; returns the number of violations. */
static int check(const char *body, struct strbuf *out)
{
	char *src = wrap(body);
	struct policy_report rep = POLICY_REPORT_INIT;
	int n = policy_check(src, strlen(src), &rep);
	strbuf_reset(out);
	policy_format(&rep, out);
	policy_report_release(&rep);
	free(src);
	return n;
}

TEST(policy_clean_cute_kernel_passes)
{
	struct strbuf src = STRBUF_INIT, out = STRBUF_INIT;
	CHECK_INT(strbuf_read_file(&src, "tests/data/kernels/ok_relu_cute.cu", 0), 0);
	struct policy_report rep = POLICY_REPORT_INIT;
	int n = policy_check(src.buf, src.len, &rep);
	policy_format(&rep, &out);
	CHECK_STR(out.buf, "");
	CHECK_INT(n, 0);
	policy_report_release(&rep);
	strbuf_release(&src);
	strbuf_release(&out);
}

TEST(policy_each_rule_names_line_and_rule)
{
	static const struct {
		const char *body, *expect;
	} cases[] = {
		{ "void f() { cudaDeviceSynchronize(); }",
		  "line 5: rule 'no-sync': cudaDeviceSynchronize is not allowed: the runner "
		  "synchronizes; launch on the given stream\n" },
		{ "void f(cudaStream_t s) { cudaStreamSynchronize(s); }", "line 5: rule 'no-sync'" },
		{ "void f(void *d, void *h) { cudaMemcpy(d, h, 4, cudaMemcpyHostToDevice); }",
		  "line 5: rule 'no-sync': cudaMemcpy is not allowed: it blocks the host" },
		{ "cudaStream_t s; void f() { cudaStreamCreateWithFlags(&s, 1); }",
		  "line 5: rule 'no-streams': cudaStreamCreateWithFlags is not allowed" },
		{ "cudaEvent_t e; void f() { cudaEventCreate(&e); }", "line 5: rule 'no-streams'" },
		{ "void f() { cudaSetDevice(1); }", "line 5: rule 'no-device-control'" },
		{ "void f() { cudaDeviceReset(); }", "line 5: rule 'no-device-control'" },
		{ "void f(float **p) { cudaMalloc(p, 4); }",
		  "line 5: rule 'no-alloc': cudaMalloc is not allowed: memory comes from the runner" },
		{ "void f(float **p, cudaStream_t s) { cudaMallocAsync(p, 4, s); }", "rule 'no-alloc'" },
		{ "void f(float *p) { cudaFree(p); }", "rule 'no-alloc': cudaFree" },
		{ "void f(float **p) { cudaMallocManaged(p, 4); }", "rule 'no-alloc'" },
		{ "void *f() { return malloc(16); }", "line 5: rule 'no-alloc': malloc" },
		{ "float *f() { return new float[4]; }", "line 5: rule 'no-alloc': operator new" },
		{ "__managed__ float x;", "rule 'no-alloc': __managed__" },
		{ "void f() { cublasHandle_t h; cublasCreate(&h); }",
		  "line 5: rule 'no-vendor-libs': cublasHandle_t is not allowed" },
		{ "int op = CUBLAS_OP_N;", "rule 'no-vendor-libs'" },
		{ "void f() { cudnnCreate(0); }", "rule 'no-vendor-libs'" },
		{ "#include <cublasLt.h>", "line 5: rule 'no-vendor-libs': #include <cublasLt.h>" },
		{ "#include <cufft.h>", "rule 'no-vendor-libs'" },
		{ "#include \"cutlass/gemm/device/gemm_universal_adapter.h\"",
		  "line 5: rule 'no-prebuilt-gemm': #include <cutlass/gemm/device/" },
		{ "#include <cutlass/gemm/collective/collective_builder.hpp>", "rule 'no-prebuilt-gemm'" },
		{ "using G = cutlass::gemm::device::GemmUniversalAdapter<int>;",
		  "rule 'no-prebuilt-gemm': gemm::device" },
		{ "using K = cutlass::gemm::kernel::GemmUniversal<int>;", "rule 'no-prebuilt-gemm'" },
		{ "using B = typename CollectiveBuilder<int>::CollectiveOp;", "rule 'no-prebuilt-gemm'" },
		{ "void f() { FILE *fp = fopen(\"x\", \"r\"); }", "line 5: rule 'no-os': fopen" },
		{ "const char *f() { return getenv(\"HOME\"); }", "rule 'no-os': getenv" },
		{ "void f() { std::system(\"ls\"); }", "rule 'no-os': system" },
		{ "void f() { ::open(\"x\", 0); }", "rule 'no-os': open" },
		{ "void f() { fork(); }", "rule 'no-os': fork" },
		{ "void f() { execvp(\"sh\", 0); }", "rule 'no-os': execvp" },
		{ "void f() { socket(2, 1, 0); }", "rule 'no-os': socket" },
		{ "void f() { dlopen(\"libcublas.so\", 1); }", "rule 'no-os': dlopen" },
		{ "void f() { std::thread t; }", "rule 'no-os': std::thread" },
		{ "#include <fstream>", "line 5: rule 'include-allowlist': #include <fstream>" },
		{ "#include <cuda.h>", "rule 'include-allowlist': #include <cuda.h> is not allowed: the driver API" },
		{ "#include <vector>", "rule 'include-allowlist'" },
		{ "#include <cutlass/util/device_memory.h>", "rule 'include-allowlist'" },
		{ "#include <cute/../../../etc/passwd>", "rule 'include-allowlist'" },
		{ "#define H <cublas_v2.h>\n#include H", "line 6: rule 'include-allowlist': a computed #include" },
		{ "#include_next <cute/tensor.hpp>", "rule 'include-allowlist'" },
		{ "#define CAT(a, b) a##b", "line 5: rule 'no-obfuscation': token pasting" },
		{ "#define CAT(a, b) a %:%: b", "rule 'no-obfuscation'" },
		{ "%:include <fstream>", "rule 'no-obfuscation': the digraph" },
		{ "int cuda\\u0044eviceSynchronize;", "rule 'no-obfuscation'" },
		{ "#define SYNC cudaDeviceSynchronize", "line 5: rule 'no-sync'" },
		{ "void f() { asm volatile(\"syscall\"); }", "line 5: rule 'no-os': inline assembly" },
	};
	struct strbuf out = STRBUF_INIT;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int n = check(cases[i].body, &out);
		if (n < 1 || !strstr(out.buf, cases[i].expect)) {
			test_fail(__FILE__, __LINE__, "case %zu: %s\n  wanted: %s\n  got (%d): %s", i,
				  cases[i].body, cases[i].expect, n, out.buf);
			return;
		}
	}
	strbuf_release(&out);
}

TEST(policy_allows_what_kernels_need)
{
	static const char *ok[] = {
		"#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n#include <cuda/std/cstdint>\n"
		"#include <cooperative_groups.h>\n#include <cutlass/numeric_types.h>\n"
		"#include <cutlass/arch/mma_sm90.h>\n#include <cute/atom/mma_atom.hpp>\n"
		"#include <cstdio>\n#include <cmath>\n#include <mma.h>\n#include <dlpack/dlpack.h>",
		"__global__ void k() { printf(\"hi %d\\n\", 1); }",
		"void f(void *d, cudaStream_t s) { cudaMemsetAsync(d, 0, 4, s); cudaMemcpyAsync(d, d, 4, cudaMemcpyDeviceToDevice, s); }",
		"void f(const void *k) { cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 1 << 17); }",
		"struct S { void free(); int open; S(const S &) = delete; void g() { this->free(); } };",
		"void f(char *p) { new (p) int(3); }",
		"template <class T> void f(T t) { cute::copy(t, t); t.free(); }",
		"int big = 1'000'000; char c = 'x';",
		"__device__ void f(unsigned *p) { asm volatile(\"red.global.add.u32 [%0], 1;\" :: \"l\"(p)); }",
		"__device__ void f() { asm volatile(\"exit;\"); }",
		"using TiledMma = decltype(cute::make_tiled_mma(cute::SM90_64x64x16_F32BF16BF16_SS<cute::GMMA::Major::K, cute::GMMA::Major::K>{}));",
	};
	struct strbuf out = STRBUF_INIT;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		int n = check(ok[i], &out);
		if (n) {
			test_fail(__FILE__, __LINE__, "case %zu flagged: %s\n  %s", i, ok[i], out.buf);
			return;
		}
	}
	strbuf_release(&out);
}

TEST(policy_ignores_comments_and_strings_and_keeps_lines)
{
	struct strbuf out = STRBUF_INIT;
	const char *body =
		"// cudaDeviceSynchronize(); #include <fstream>\n"          /* 5 */
		"/* cudaMalloc(&p, 4);\n"                                    /* 6 */
		"   cublasSgemm(...) */ const char *a = \"cudaFree(p)\";\n"  /* 7 */
		"const char *b = R\"x(cudaStreamCreate \" )\" cudnn)x\";\n" /* 8 */
		"const char *c = \"esc \\\" cudaSetDevice(0)\"; char q = '\\'';\n" /* 9 */
		"#define LONG_MACRO(x) \\\n"                                 /* 10 */
		"   (x + 1)\n"                                               /* 11 */
		"void f() { cudaDevice\\\nSynchronize(); }\n"                /* 12-13 */
		"int g() { return 0; } /* multi\n"                          /* 14 */
		" line */ void h() { getenv(\"X\"); }";                      /* 15 */
	CHECK_INT(check(body, &out), 2);
	CHECK_HAS(out.buf, "line 12: rule 'no-sync': cudaDeviceSynchronize");
	CHECK_HAS(out.buf, "line 15: rule 'no-os': getenv");
	strbuf_release(&out);
}

TEST(policy_requires_entry_point_and_abi)
{
	struct policy_report rep = POLICY_REPORT_INIT;
	struct strbuf out = STRBUF_INIT;
	const char *declared_only =
		"#include <cutegen/kernel_abi.h>\n"
		"CUTEGEN_KERNEL int cutegen_launch(const DLTensor *, int, DLTensor *, int,\n"
		"  const double *, int, void *, size_t, cudaStream_t);\n"
		"// CUTEGEN_DECLARE_ABI();\n";
	CHECK_INT(policy_check(declared_only, strlen(declared_only), &rep), 2);
	policy_format(&rep, &out);
	CHECK_HAS(out.buf, "file: rule 'entry-point': cutegen_launch is not defined");
	CHECK_HAS(out.buf, "file: rule 'abi-version': ");
	policy_report_release(&rep);
	/* the ABI may also be declared by hand */
	const char *by_hand =
		"extern \"C\" const int cutegen_abi_version = 1;\n"
		"extern \"C\" int cutegen_launch(const DLTensor *a, int b, DLTensor *c, int d,\n"
		"  const double *e, int f, void *g, size_t h, cudaStream_t s) { return (f(0)); }\n";
	CHECK_INT(policy_check(by_hand, strlen(by_hand), &rep), 0);
	policy_report_release(&rep);
	CHECK_INT(policy_check("", 0, &rep), 2);
	policy_report_release(&rep);
	strbuf_release(&out);
}

TEST(policy_lists_in_line_order_and_dedups)
{
	struct strbuf out = STRBUF_INIT;
	CHECK_INT(check("void f() { cudaFree(0); cudaFree(0);\n cudaDeviceSynchronize(); }\n"
			"#include <fstream>", &out), 3);
	const char *a = strstr(out.buf, "line 5:"), *b = strstr(out.buf, "line 6:"),
		   *c = strstr(out.buf, "line 7:");
	CHECK(a && b && c && a < b && b < c);
	strbuf_release(&out);
}

TEST(policy_malformed_input_never_crashes)
{
	static const char *cases[] = {
		"\"", "'", "R\"", "R\"abc", "R\"abc(", "R\"abc(xx)ab", "/*", "/", "\\", "\\\n",
		"#", "#include", "#include <", "#include \"", "#include <a\n>", "##", "%:", "a\\\r\n",
		"cutegen_launch(", "cutegen_launch((((", "new", "delete", "::", "std::",
		"asm(", "asm(\"sys", "R\"01234567890123456789(x)01234567890123456789\"",
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = strlen(cases[i]);
		char *copy = xmalloc(n ? n : 1); /* no NUL after it: ASan sees overreads */
		memcpy(copy, cases[i], n);
		struct policy_report rep = POLICY_REPORT_INIT;
		policy_check(copy, n, &rep);
		policy_report_release(&rep);
		free(copy);
	}
	/* every prefix of the clean kernel, and random bytes */
	struct strbuf src = STRBUF_INIT;
	CHECK_INT(strbuf_read_file(&src, "tests/data/kernels/ok_relu_cute.cu", 0), 0);
	for (size_t len = 0; len <= src.len; len += 3) {
		char *copy = xmalloc(len ? len : 1);
		memcpy(copy, src.buf, len);
		struct policy_report rep = POLICY_REPORT_INIT;
		policy_check(copy, len, &rep);
		policy_report_release(&rep);
		free(copy);
	}
	unsigned s = 99;
	for (int round = 0; round < 300; round++) {
		char buf[400];
		size_t n = (s = s * 1103515245 + 12345) >> 16 & 0xff;
		for (size_t i = 0; i < n; i++) {
			s = s * 1103515245 + 12345;
			buf[i] = "#include<>\"'/*\\\nR(x)%:cudaMalloc ##"[(s >> 16) % 35];
		}
		struct policy_report rep = POLICY_REPORT_INIT;
		policy_check(buf, n, &rep);
		policy_report_release(&rep);
	}
	/* too large, and too many violations */
	struct policy_report rep = POLICY_REPORT_INIT;
	CHECK_INT(policy_check(src.buf, POLICY_MAX_SOURCE + 1, &rep), 1);
	CHECK_STR(rep.items[0].rule, "too-large");
	policy_report_release(&rep);
	strbuf_reset(&src);
	for (int i = 0; i < 300; i++)
		strbuf_addf(&src, "void f%d() { cudaFree(0); }\n", i);
	CHECK_INT(policy_check(src.buf, src.len, &rep), 302);
	CHECK_INT(rep.nr, POLICY_MAX_VIOLATIONS);
	policy_report_release(&rep);
	strbuf_release(&src);
}

/* ---- the object check ---- */

TEST(policy_symbol_allowlist_groups)
{
	static const struct {
		const char *name, *group;
	} cases[] = {
		{ "cudaLaunchKernel", "cuda-launch" },
		{ "__cudaRegisterFunction", "cuda-launch" },
		{ "cudaLaunchKernelExC", "cuda-launch" },
		{ "cudaOccupancyMaxActiveClusters", "cuda-query" },
		{ "cudaDeviceGetAttribute", "cuda-query" },
		{ "cudaPeekAtLastError", "cuda-error" },
		{ "cudaMemsetAsync", "cuda-async" },
		{ "cuTensorMapEncodeTiled", "tma-descriptor" },
		{ "sinf", "libm" },
		{ "expl", "libm" },
		{ "sqrt", "libm" },
		{ "memcpy", "libc-memory" },
		{ "__memcpy_chk", "libc-memory" },
		{ "__printf_chk", "stdio" },
		{ "puts", "stdio" },
		{ "_ZNSo3putEc", "stdio" },
		{ "_ZSt4cerr", "stdio" },
		{ "__cxa_guard_acquire", "c++-runtime" },
		{ "_ZSt16__throw_bad_castv", "c++-runtime" },
		{ "_ZNSt8ios_base4InitC1Ev", "c++-runtime" },
		{ "_ZSt21ios_base_library_initv", "c++-runtime" },
		{ "atexit", "c++-runtime" },
		{ "__udivti3", "arithmetic" },
		{ "__isnan", "arithmetic" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *g = policy_symbol_allowed(cases[i].name);
		if (!g || strcmp(g, cases[i].group)) {
			test_fail(__FILE__, __LINE__, "'%s' is in group %s, want %s", cases[i].name,
				  g ? g : "(none)", cases[i].group);
			return;
		}
	}
	/* what the policy forbids, and names that only look like allowed ones */
	static const char *refused[] = {
		"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaStreamCreate",
		"cudaStreamCreateWithFlags", "cudaEventCreate", "cudaEventRecord", "cudaEventQuery",
		"cudaStreamQuery", "cudaMalloc", "cudaMallocAsync", "cudaFree", "cudaMemcpy",
		"cudaMemset", "cudaLaunchHostFunc", "cudaGetDriverEntryPoint",
		"cudaGetDriverEntryPointByVersion", "cudaSetDevice", "cudaDeviceReset",
		"cuCtxSynchronize", "cuLaunchKernel", "cublasLtMatmul", "cublasSgemm", "open",
		"write", "_exit", "exit", "getenv", "dlsym", "dlopen", "syscall", "fopen", "malloc",
		"free", "_Znwm", "_ZdlPv", "_Znam", "environ", "__open_chk", "__fprintf_chk",
		"memcpy@GLIBC_2.2.5", "sinx", "sinff", "_ZSt4cin", "__cudaRegisterManagedVar", "",
		"stderr", "fprintf", "pthread_create",
	};
	for (size_t i = 0; i < ARRAY_SIZE(refused); i++)
		if (policy_symbol_allowed(refused[i])) {
			test_fail(__FILE__, __LINE__, "'%s' is allowed (%s)", refused[i],
				  policy_symbol_allowed(refused[i]));
			return;
		}
	CHECK(policy_symbol_allowed(NULL) == NULL);
	CHECK(policy_rule_is_object("symbol-allowlist"));
	CHECK(!policy_rule_is_object("no-sync"));
	CHECK_HAS(policy_object_rules_version(), "cuda-launch:cudaLaunchKernel;");
}

static void read_data(const char *name, struct strbuf *sb)
{
	char *p = xasprintf("tests/data/objdump/%s", name);
	strbuf_reset(sb);
	if (strbuf_read_file(sb, p, 0))
		test_fail(__FILE__, __LINE__, "cannot read %s", p);
	free(p);
}

static const struct obj_symbol *sym(const struct obj_info *o, const char *name)
{
	for (size_t i = 0; i < o->nsyms; i++)
		if (!strcmp(o->syms[i].name, name))
			return &o->syms[i];
	return NULL;
}

TEST(policy_parse_objdump_reads_symbols_and_relocations)
{
	struct strbuf sb = STRBUF_INIT;
	struct obj_info o = OBJ_INFO_INIT;
	read_data("bad.txt", &sb);
	CHECK_INT(policy_parse_objdump(sb.buf, sb.len, &o), 0);
	CHECK(o.error == NULL);
	CHECK_INT((int)o.nsyms, 19);
	const struct obj_symbol *s = sym(&o, "_ZN6kernel5scaleEPKfPflf"); /* after ".hidden " */
	CHECK(s != NULL);
	CHECK_STR(s->section, ".text");
	CHECK_INT((int)s->value, 0x10);
	CHECK_INT((int)s->size, 0x12b);
	CHECK_INT(s->bind, 'g');
	CHECK_INT(s->kind, 'F');
	CHECK_INT(sym(&o, "environ")->bind, 'w');
	CHECK_STR(sym(&o, "environ")->section, "*UND*");
	CHECK_INT(sym(&o, "fast_copy")->kind, 'i');
	CHECK_INT(sym(&o, ".text.startup")->kind, 'd');
	CHECK_STR(sym(&o, "g_table")->section, "*COM*");
	CHECK(sym(&o, "memcpy@GLIBC_2.2.5") != NULL);
	/* relocations: the NONE one has no target and is dropped */
	CHECK_INT((int)o.nrelocs, 9);
	CHECK_STR(o.relocs[0].section, ".text");
	CHECK_STR(o.relocs[0].target, "cublasLtMatmul");
	CHECK_INT((int)o.relocs[0].offset, 0x280);
	CHECK_INT((int)o.relocs[0].addend, -4);
	CHECK_STR(o.relocs[5].section, ".init_array");
	CHECK_STR(o.relocs[5].target, ".text.startup");
	CHECK_INT((int)o.relocs[5].addend, 0);
	CHECK_STR(o.relocs[6].target, ".text.startup");
	CHECK_INT((int)o.relocs[6].addend, 0x70);
	obj_info_release(&o);

	/* a real object of nvcc's */
	read_data("clean_scalar_mul.txt", &sb);
	CHECK_INT(policy_parse_objdump(sb.buf, sb.len, &o), 0);
	CHECK(sym(&o, "cutegen_launch") != NULL);
	CHECK(sym(&o, "__cudaRegisterFatBinary") != NULL);
	obj_info_release(&o);
	strbuf_release(&sb);
}

TEST(policy_parse_objdump_refuses_what_it_cannot_read)
{
	static const char *bad[] = {
		"",
		"kernel.o:     file format elf64-x86-64\n",
		"SYMBOL TABLE:\nthis is not a symbol line at all\n",
		"SYMBOL TABLE:\n0000000000000000 g     F .text\n",
		"SYMBOL TABLE:\n000000000000000g g     F .text\t0000000000000001 f\n",
		"SYMBOL TABLE:\n0000000000000000 g     F .text\t0000000000000001 \n",
		"SYMBOL TABLE:\n\nRELOCATION RECORDS FOR [.text]:\nzz R_X86_64_64 f\n",
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct obj_info o = OBJ_INFO_INIT;
		if (policy_parse_objdump(bad[i], strlen(bad[i]), &o) != -1 || !o.error) {
			test_fail(__FILE__, __LINE__, "accepted case %zu", i);
			obj_info_release(&o);
			return;
		}
		/* an unreadable object is refused, never admitted */
		struct policy_report rep = POLICY_REPORT_INIT;
		CHECK_INT(policy_check_object(&o, "", 0, &rep), 1);
		CHECK_STR(rep.items[0].rule, "object-check");
		CHECK_HAS(rep.items[0].message, "could not be checked");
		policy_report_release(&rep);
		obj_info_release(&o);
	}
}

TEST(policy_parse_disasm_finds_system_calls)
{
	struct strbuf sb = STRBUF_INIT;
	struct obj_info o = OBJ_INFO_INIT;
	read_data("bad_disasm.txt", &sb);
	CHECK_INT(policy_parse_disasm(sb.buf, sb.len, &o), 0);
	/* syscall, int $0x80 and sysenter; not int3, $0x80 as an operand or a label's name */
	CHECK_INT((int)o.ninsns, 3);
	CHECK_STR(o.insns[0].text, "syscall");
	CHECK_STR(o.insns[0].function, "cutegen_launch");
	CHECK_STR(o.insns[0].section, ".text");
	CHECK_INT((int)o.insns[0].offset, 0x27f);
	CHECK_STR(o.insns[1].text, "int $0x80");
	CHECK_STR(o.insns[2].text, "sysenter");
	obj_info_release(&o);
	read_data("clean_scalar_mul_disasm.txt", &sb);
	CHECK_INT(policy_parse_disasm(sb.buf, sb.len, &o), 0);
	CHECK_INT((int)o.ninsns, 0);
	obj_info_release(&o);
	strbuf_release(&sb);
}

/* Parses a pair of data files and checks them against source; returns the rendered report. */
static int check_obj(const char *syms, const char *dis, const char *source, struct strbuf *out)
{
	struct strbuf sb = STRBUF_INIT;
	struct obj_info o = OBJ_INFO_INIT;
	read_data(syms, &sb);
	policy_parse_objdump(sb.buf, sb.len, &o);
	read_data(dis, &sb);
	policy_parse_disasm(sb.buf, sb.len, &o);
	struct policy_report rep = POLICY_REPORT_INIT;
	int n = policy_check_object(&o, source, strlen(source), &rep);
	strbuf_reset(out);
	policy_format(&rep, out);
	policy_report_release(&rep);
	obj_info_release(&o);
	strbuf_release(&sb);
	return n;
}

TEST(policy_check_object_admits_nvccs_own_output)
{
	struct strbuf src = STRBUF_INIT, out = STRBUF_INIT;
	read_data("clean_scalar_mul.cu", &src);
	CHECK_INT(check_obj("clean_scalar_mul.txt", "clean_scalar_mul_disasm.txt", src.buf, &out), 0);
	CHECK_STR(out.buf ? out.buf : "", "");
	strbuf_release(&src);
	strbuf_release(&out);
}

TEST(policy_check_object_names_symbols_functions_and_lines)
{
	struct strbuf out = STRBUF_INIT;
	const char *src = "#include <cutegen/kernel_abi.h>\n"
			  "extern \"C\" int mm(void *) __asm__(\"cub\" \"lasLt\" \"Matmul\");\n"
			  "extern \"C\" char **environ __attribute__((weak));\n"
			  "extern \"C\" int open(const char *, int) { return -1; }\n";
	int n = check_obj("bad.txt", "bad_disasm.txt", src, &out);
	/* cublasLtMatmul, environ, memcpy@; 3 syscalls; open and fast_copy defined; grab and
	 * the .fini_array entry */
	CHECK_INT(n, 10);
	CHECK_HAS(out.buf, "line 2: rule 'symbol-allowlist': the object code references "
			   "'cublasLtMatmul' (referenced from cutegen_launch), which is not on the "
			   "allowlist: the point is to write the kernel");
	CHECK_HAS(out.buf, "(the source spells the name only in an asm string");
	CHECK_HAS(out.buf, "line 3: rule 'symbol-allowlist': the object code has a weak reference "
			   "to 'environ' (referenced from cutegen_launch)");
	CHECK_HAS(out.buf, "'memcpy@GLIBC_2.2.5', a versioned symbol (.symver)");
	CHECK_HAS(out.buf, "rule 'no-syscall': host code in 'cutegen_launch' contains a 'syscall' "
			   "instruction (at .text+0x27f)");
	CHECK_HAS(out.buf, "line 4: rule 'no-interposing': the kernel defines 'open'");
	CHECK_HAS(out.buf, "'fast_copy' as an indirect function (ifunc)");
	CHECK_HAS(out.buf, "rule 'no-load-time-code': '_ZL4grabv' runs when the kernel is loaded "
			   "(an entry of .init_array");
	CHECK_HAS(out.buf, "'cutegen_launch' runs when the kernel is unloaded (an entry of "
			   ".fini_array");
	/* allowed: sinf, atexit, nvcc's registration, g++'s initialization of globals, a
	 * common symbol of the kernel's own */
	CHECK(!strstr(out.buf, "sinf"));
	CHECK(!strstr(out.buf, "'atexit'"));
	CHECK(!strstr(out.buf, "__sti____cudaRegisterAll"));
	CHECK(!strstr(out.buf, "_GLOBAL__sub_I_"));
	CHECK(!strstr(out.buf, "g_table"));
	strbuf_release(&out);
}

TEST(policy_check_object_allows_a_kernels_own_c_names)
{
	/* extern "C" kernels and globals of the kernel's own are not library names */
	struct obj_info o = OBJ_INFO_INIT;
	const char *text = "SYMBOL TABLE:\n"
			   "0000000000000000 g     F .text\t0000000000000040 cuda_relu\n"
			   "0000000000000040 g     F .text\t0000000000000040 dlrm_kernel\n"
			   "0000000000000000 g     O .bss\t0000000000000004 scale_table\n"
			   "0000000000000080 g     F .text\t0000000000000040 cudaLaunchKernel\n"
			   "00000000000000c0 g     F .text\t0000000000000040 cuMemAlloc\n";
	CHECK_INT(policy_parse_objdump(text, strlen(text), &o), 0);
	struct policy_report rep = POLICY_REPORT_INIT;
	CHECK_INT(policy_check_object(&o, "", 0, &rep), 2);
	CHECK_HAS(rep.items[0].message, "defines 'cudaLaunchKernel'");
	CHECK_HAS(rep.items[1].message, "defines 'cuMemAlloc'");
	policy_report_release(&rep);
	obj_info_release(&o);
}

TEST(policy_check_object_uses_demangled_names)
{
	struct obj_info o = OBJ_INFO_INIT;
	const char *text = "SYMBOL TABLE:\n"
			   "0000000000000000 g     F .text\t0000000000000040 cutegen_launch\n"
			   "0000000000000000         *UND*\t0000000000000000 _ZN3evil4openEPKc\n"
			   "\nRELOCATION RECORDS FOR [.text]:\nOFFSET           TYPE              VALUE\n"
			   "0000000000000008 R_X86_64_PLT32    _ZN3evil4openEPKc-0x0000000000000004\n";
	CHECK_INT(policy_parse_objdump(text, strlen(text), &o), 0);
	o.syms[1].plain = xstrdup("evil::open(char const*)");
	const char *src = "namespace evil { int open(const char *); }\n"
			  "int f() {\n  return evil::open(\"x\");\n}\n";
	struct policy_report rep = POLICY_REPORT_INIT;
	CHECK_INT(policy_check_object(&o, src, strlen(src), &rep), 1);
	CHECK_INT(rep.items[0].line, 1); /* found by the base name "open" */
	CHECK_HAS(rep.items[0].message, "references 'evil::open(char const*)' (_ZN3evil4openEPKc)");
	policy_report_release(&rep);
	obj_info_release(&o);
}
