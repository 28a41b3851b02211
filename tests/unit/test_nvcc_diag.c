/*
 * Tests of the nvcc diagnostics parser and the first-error formatter, on real nvcc 13.0 logs
 * (tests/data/nvcc/NAME.log, from tests/data/nvcc/src/NAME.cu) and on malformed input.
 */
#include "test.h"

#include <stdlib.h>

#include "eval/nvcc_diag.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* Reads tests/data/nvcc/NAME.log (or .cu with src/) into sb; the tests run from the repo root. */
static int fixture(const char *path, struct strbuf *sb)
{
	char *p = xasprintf("tests/data/%s", path);
	int rc = strbuf_read_file(sb, p, 0);
	if (rc)
		fprintf(stderr, "cannot read fixture %s (run from the repository root)\n", p);
	free(p);
	return rc;
}

static void parse_fixture(const char *name, struct diag_list *dl)
{
	struct strbuf sb = STRBUF_INIT;
	char *p = xasprintf("nvcc/%s.log", name);
	if (!fixture(p, &sb))
		diag_parse(sb.buf, sb.len, dl);
	free(p);
	strbuf_release(&sb);
}

/* The formatted first error of a fixture, with its source; heap string. */
static char *first_error_of(const char *name)
{
	struct diag_list dl = DIAG_LIST_INIT;
	struct strbuf src = STRBUF_INIT, out = STRBUF_INIT;
	char *p = xasprintf("nvcc/src/%s.cu", name);
	fixture(p, &src);
	parse_fixture(name, &dl);
	diag_format_first_error(&dl, src.buf, src.len, "kernel.cu", &out);
	diag_list_release(&dl);
	strbuf_release(&src);
	free(p);
	return strbuf_detach(&out, NULL);
}

TEST(diag_undefined_identifier)
{
	struct diag_list dl = DIAG_LIST_INIT;
	parse_fixture("undefined_identifier", &dl);
	CHECK_INT(dl.nr, 1);
	CHECK_INT(dl.nerrors, 1);
	const struct diag *d = &dl.items[0];
	CHECK_INT(d->severity, DIAG_ERROR);
	CHECK_STR(d->file, "kernel.cu");
	CHECK_INT(d->line, 11);
	CHECK_INT(d->column, 17); /* the caret under "scale_factor", tabs counting one */
	CHECK_STR(d->message, "identifier \"scale_factor\" is undefined");
	CHECK_INT(d->nframes, 0);
	diag_list_release(&dl);
}

TEST(diag_dependent_name_has_one_frame_in_the_same_file)
{
	struct diag_list dl = DIAG_LIST_INIT;
	parse_fixture("dependent_undefined", &dl);
	CHECK_INT(dl.nr, 1);
	const struct diag *d = &dl.items[0];
	CHECK_INT(d->line, 11);
	CHECK_INT(d->column, 10);
	CHECK_INT(d->nframes, 1);
	CHECK_STR(d->frames[0].text, "instantiation of \"void apply(T *, int) [with T=float]\"");
	CHECK_STR(d->frames[0].file, "kernel.cu"); /* "at line 16" names the error's own file */
	CHECK_INT(d->frames[0].line, 16);
	diag_list_release(&dl);
}

TEST(diag_cute_static_assert_chain)
{
	struct diag_list dl = DIAG_LIST_INIT;
	parse_fixture("cute_static_assert", &dl);
	CHECK_INT(dl.nr, 3);
	CHECK_INT(dl.nerrors, 3);
	const struct diag *d = &dl.items[0];
	CHECK(ends_with(d->file, "cute/stride.hpp"));
	CHECK_INT(d->line, 116);
	CHECK_STR(d->message, "static assertion failed with \"Mismatched Ranks\"");
	CHECK_INT(d->nframes, 4);
	CHECK(ends_with(d->frames[0].file, "cute/layout.hpp"));
	CHECK_INT(d->frames[0].line, 171);
	CHECK_STR(d->frames[2].file, "kernel.cu");
	CHECK_INT(d->frames[2].line, 11);
	CHECK_STR(d->frames[3].file, "kernel.cu");
	CHECK_INT(d->frames[3].line, 16);
	/* a frame with only "at line 117" is in the error's file */
	CHECK(ends_with(dl.items[1].frames[0].file, "cute/stride.hpp"));
	CHECK_INT(dl.items[1].frames[0].line, 117);
	diag_list_release(&dl);
}

TEST(diag_cute_type_mismatch_errors_notes_and_continuations)
{
	struct diag_list dl = DIAG_LIST_INIT;
	parse_fixture("cute_type_mismatch", &dl);
	CHECK_INT(dl.nerrors, 14);
	int notes = 0, user_errors = 0;
	const struct diag *zip = NULL;
	for (size_t i = 0; i < dl.nr; i++) {
		const struct diag *d = &dl.items[i];
		notes += d->severity == DIAG_NOTE;
		user_errors += d->severity == DIAG_ERROR && !strcmp(d->file, "kernel.cu");
		if (!zip && strstr(d->message, "zip2_by\" matches"))
			zip = d;
	}
	CHECK(notes >= 10);
	CHECK_INT(user_errors, 5);
	CHECK(zip != NULL);
	/* the "argument types are: (...)" line belongs to the message, not to the source echo */
	CHECK_HAS(zip->message, "\nargument types are: (const cute::Layout<");
	CHECK_INT(zip->column, 12);
	CHECK_INT(dl.items[6].severity, DIAG_NOTE);
	CHECK_STR(dl.items[6].code, "3327-D");
	diag_list_release(&dl);
}

TEST(diag_gcc_ptxas_nvcc_shapes)
{
	struct diag_list dl = DIAG_LIST_INIT;
	parse_fixture("missing_include", &dl);
	CHECK_INT(dl.nr, 1);
	CHECK_INT(dl.items[0].severity, DIAG_FATAL);
	CHECK_STR(dl.items[0].tool, "gcc");
	CHECK_INT(dl.items[0].line, 3);
	CHECK_INT(dl.items[0].column, 10);
	CHECK_HAS(dl.items[0].message, "no_such_header.hpp: No such file or directory");
	diag_list_release(&dl);

	parse_fixture("too_much_smem", &dl);
	CHECK_INT(dl.nr, 1);
	CHECK_STR(dl.items[0].tool, "ptxas");
	CHECK_INT(dl.items[0].severity, DIAG_ERROR);
	CHECK_HAS(dl.items[0].message, "uses too much shared data (0x40000 bytes, 0x38c00 max)");
	CHECK(dl.items[0].file == NULL);
	diag_list_release(&dl);

	parse_fixture("bad_arch", &dl);
	CHECK_INT(dl.nr, 1);
	CHECK_STR(dl.items[0].tool, "nvcc");
	CHECK_INT(dl.items[0].severity, DIAG_FATAL);
	CHECK_STR(dl.items[0].message, "Unsupported gpu architecture 'compute_99'");
	diag_list_release(&dl);

	parse_fixture("ptxas_verbose", &dl);
	CHECK_INT(dl.nr, 5);
	CHECK_INT(dl.nerrors, 0);
	CHECK_INT(dl.items[2].severity, DIAG_INFO);
	CHECK_HAS(dl.items[2].message, "\n0 bytes stack frame, 0 bytes spill stores");
	CHECK_HAS(dl.items[3].message, "Used 10 registers");
	diag_list_release(&dl);
}

TEST(diag_warnings_only_has_no_first_error)
{
	struct diag_list dl = DIAG_LIST_INIT;
	parse_fixture("warnings_only", &dl);
	CHECK_INT(dl.nr, 1);
	CHECK_INT(dl.items[0].severity, DIAG_WARNING);
	CHECK_STR(dl.items[0].code, "177-D");
	CHECK_INT(dl.nerrors, 0);
	CHECK(diag_first_error(&dl) == NULL);
	struct strbuf out = STRBUF_INIT;
	CHECK_INT(diag_format_first_error(&dl, "x", 1, "kernel.cu", &out), -1);
	CHECK_INT(out.len, 0);
	diag_list_release(&dl);
}

TEST(diag_synthetic_linker_ptxas_gcc_context)
{
	const char *log =
		"/usr/bin/ld: kernel.o: in function `launch(float*)':\n"
		"kernel.cu:(.text+0x1c): undefined reference to `helper(float*)'\n"
		"collect2: error: ld returned 1 exit status\n"
		"ptxas /tmp/tmpxft_0001_kernel.ptx, line 42; error   : Arguments mismatch for instruction 'mma'\n"
		"kernel.cu: In instantiation of 'void f(T) [with T = float]':\n"
		"kernel.cu:20:6:   required from here\n"
		"kernel.cu:12:3: error: 'g' was not declared in this scope\n"
		"   12 |   g(x);\n"
		"      |   ^\n"
		"kernel.cu(5): error: too many instantiations\n"
		"          detected during:\n"
		"            instantiation of \"A<N>\" at line 9\n"
		"            [ 37 instantiation contexts not shown ]\n"
		"            instantiation of \"void k()\" at line 30 of kernel.cu\n"
		"\n"
		"nvlink error   : Undefined reference to '_Z3fooi' in 'kernel.o'\n"
		"error: something without a location\n";
	struct diag_list dl = DIAG_LIST_INIT;
	diag_parse(log, strlen(log), &dl);
	CHECK_INT(dl.nr, 7);
	CHECK_STR(dl.items[0].tool, "ld");
	CHECK_STR(dl.items[0].message, "undefined reference to `helper(float*)'");
	CHECK_STR(dl.items[1].tool, "collect2");
	CHECK_STR(dl.items[2].tool, "ptxas");
	CHECK_STR(dl.items[2].file, "/tmp/tmpxft_0001_kernel.ptx");
	CHECK_INT(dl.items[2].line, 42);
	CHECK_STR(dl.items[2].message, "Arguments mismatch for instruction 'mma'");
	CHECK_STR(dl.items[3].tool, "gcc");
	CHECK_INT(dl.items[3].line, 12);
	CHECK_INT(dl.items[3].nframes, 2);
	CHECK_HAS(dl.items[3].frames[0].text, "instantiation of 'void f(T) [with T = float]'");
	CHECK_INT(dl.items[3].frames[1].line, 20);
	CHECK_INT(dl.items[4].nframes, 2);
	CHECK_INT(dl.items[4].frames_dropped, 37);
	CHECK_INT(dl.items[4].frames[1].line, 30);
	CHECK_STR(dl.items[5].tool, "nvlink");
	CHECK_STR(dl.items[6].message, "something without a location");
	diag_list_release(&dl);
}

TEST(diag_shorten_caps_templates)
{
	struct strbuf out = STRBUF_INIT;
	diag_shorten("A<B<C<D<int, float, double, long, char>>>>", 2, 0, 0, &out);
	CHECK_STR(out.buf, "A<B<C<...>>>");
	strbuf_reset(&out);
	diag_shorten("A<B<C<32>>>", 1, 0, 0, &out); /* short lists stay */
	CHECK_STR(out.buf, "A<B<C<32>>>");
	strbuf_reset(&out);
	diag_shorten("f(x->y, a<=b, c<<d) [with T=a_very_long_argument_list]", 1, 12, 0, &out);
	CHECK_STR(out.buf, "f(x->y, a<=b, c<<d) [with T=a_ve ...]");
	strbuf_reset(&out);
	diag_shorten("0123456789", 0, 0, 4, &out);
	CHECK_STR(out.buf, "0123...");
	strbuf_reset(&out);
	diag_shorten("unbalanced <<< >>> <x", 1, 5, 100, &out); /* must just end */
	CHECK(out.len > 0);
	strbuf_release(&out);
}

TEST(diag_format_first_error_in_user_file)
{
	char *s = first_error_of("dependent_undefined");
	CHECK_HAS(s, "kernel.cu:11:10: error: identifier \"thrice\" is undefined\n");
	CHECK_HAS(s, "  in instantiation of \"void apply(T *, int) [with T=float]\" at kernel.cu:16\n");
	CHECK_HAS(s, "      8 | {\n");
	CHECK_HAS(s, ">    11 | \t\tx[i] = thrice(x[i]) + twice(x[i]);\n");
	CHECK_HAS(s, "        | \t\t       ^\n");
	CHECK_HAS(s, "     14 | void launch(float *x, int n)\n");
	CHECK(!strstr(s, "   15 |"));
	CHECK(!strstr(s, "more error"));
	free(s);
}

TEST(diag_format_first_error_in_cute_header_shows_user_lines)
{
	char *s = first_error_of("cute_type_mismatch");
	CHECK_HAS(s, "cute/atom/copy_atom.hpp:223:5: error: static assertion failed with "
		     "\"Rank of tensor to be partitioned too small.\"\n");
	/* innermost frame, the innermost in kernel.cu, the outermost */
	CHECK_HAS(s, "  in instantiation of \"auto cute::TiledCopy<");
	CHECK_HAS(s, "::partition_S(STensor &&) const [with TiledCopy=");
	CHECK_HAS(s, " ...]\" at kernel.cu:15\n");
	CHECK_HAS(s, "  in instantiation of \"void copy_kernel(const T *, T *, int) [with T=float]\" at kernel.cu:22\n");
	CHECK_HAS(s, ">    15 | \tTensor tS = thr_copy.partition_S(mS);\n");
	CHECK_HAS(s, "(13 more errors after this one)\n");
	free(s);

	s = first_error_of("cute_static_assert");
	CHECK_HAS(s, "  ... 1 more\n");
	CHECK_HAS(s, ">    11 | \tt(threadIdx.x) = 1.0f;\n");
	CHECK_HAS(s, "at kernel.cu:16\n");
	CHECK_HAS(s, "(2 more errors after this one)\n");
	free(s);

	s = first_error_of("too_much_smem"); /* no location: the message alone */
	CHECK_STR(s, "ptxas: error: Entry function '_Z8big_smemPf' uses too much shared data "
		     "(0x40000 bytes, 0x38c00 max)\n");
	free(s);
}

TEST(diag_format_excerpt_edges)
{
	const char *log = "kernel.cu(1): error: at the first line\n"
			  "kernel.cu(3): error: at the last line, no newline after it\n";
	const char *src = "a\nb\nlast";
	struct diag_list dl = DIAG_LIST_INIT;
	diag_parse(log, strlen(log), &dl);
	struct strbuf out = STRBUF_INIT;
	CHECK_INT(diag_format_first_error(&dl, src, strlen(src), "kernel.cu", &out), 0);
	CHECK_HAS(out.buf, ">     1 | a\n");
	CHECK_HAS(out.buf, "      3 | last\n");
	/* a line past the end of the source, and no source at all */
	dl.items[0].line = 99;
	dl.items[0].column = 500;
	strbuf_reset(&out);
	diag_format_first_error(&dl, src, strlen(src), "kernel.cu", &out);
	CHECK(!strstr(out.buf, "|"));
	strbuf_reset(&out);
	CHECK_INT(diag_format_first_error(&dl, NULL, 0, NULL, &out), 0);
	strbuf_release(&out);
	diag_list_release(&dl);
}

/* Parses a copy that ends exactly at len (no NUL after it), so ASan sees any overread. */
static void parse_exact(const char *data, size_t len)
{
	char *copy = xmalloc(len ? len : 1);
	memcpy(copy, data, len);
	struct diag_list dl = DIAG_LIST_INIT;
	diag_parse(copy, len, &dl);
	struct strbuf out = STRBUF_INIT;
	diag_format_first_error(&dl, copy, len, "kernel.cu", &out);
	for (size_t i = 0; i < dl.nr; i++)
		diag_format_one(&dl.items[i], &out);
	strbuf_release(&out);
	diag_list_release(&dl);
	free(copy);
}

TEST(diag_truncated_fixtures_never_crash)
{
	const char *names[] = { "nvcc/cute_static_assert.log", "nvcc/missing_include.log",
				"nvcc/ptxas_verbose.log" };
	for (size_t f = 0; f < sizeof(names) / sizeof(names[0]); f++) {
		struct strbuf sb = STRBUF_INIT;
		CHECK_INT(fixture(names[f], &sb), 0);
		for (size_t len = 0; len <= sb.len; len++)
			parse_exact(sb.buf, len);
		strbuf_release(&sb);
	}
	/* the big one: every 7th prefix */
	struct strbuf sb = STRBUF_INIT;
	CHECK_INT(fixture("nvcc/cute_type_mismatch.log", &sb), 0);
	for (size_t len = 0; len <= sb.len; len += 7)
		parse_exact(sb.buf, len);
	strbuf_release(&sb);
}

TEST(diag_malformed_input)
{
	static const char *cases[] = {
		"", "\n", "(", "kernel.cu(", "kernel.cu()", "kernel.cu(12)", "kernel.cu(12):",
		"kernel.cu(12): ", "kernel.cu(12): error", "kernel.cu(12): error:",
		"kernel.cu(99999999999999999999999): error: huge line number\n",
		"(1): error: empty file name\n",
		"kernel.cu(3): warning #: no number\n",
		"          detected during:\n            instantiation of \"x\" at line\n",
		"kernel.cu(3): error: x\n  ^\n          detected during instantiation of \"y\" at line 4 of\n",
		"kernel.cu(3): error: x\n^\n^\n^\n",
		"kernel.cu(3): error: x\n          detected during:\n            [ not shown ]\n",
		"a:1:2: error\na:1:: error: x\n:1:2: error: x\n",
		"ptxas error", "ptxas error :", "ptxas a, line ; error : x", "ptxas a, line 5",
		"nvcc fatal   :", "ld: ", "undefined reference to", "collect2: ",
		"x: In instantiation of ", "x:1:1:   required from here",
		"\r\n\r\n\r", "kernel.cu(1): error: a\r\n  b\r\n  ^\r\n",
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		parse_exact(cases[i], strlen(cases[i]));

	/* NULs inside, a line of a megabyte, many records, deep frames */
	const char nul[] = "kernel.cu(1): error: a\0b\nkernel.cu(2): err\0or: c\n";
	parse_exact(nul, sizeof(nul) - 1);
	struct diag_list dl = DIAG_LIST_INIT;
	diag_parse(nul, sizeof(nul) - 1, &dl);
	CHECK_INT(dl.nr, 1);
	CHECK_STR(dl.items[0].message, "a b");
	diag_list_release(&dl);

	struct strbuf big = STRBUF_INIT;
	strbuf_addstr(&big, "kernel.cu(1): error: ");
	for (int i = 0; i < 1 << 20; i++)
		strbuf_addch(&big, "<>[(x"[i % 5]);
	parse_exact(big.buf, big.len);
	diag_parse(big.buf, big.len, &dl);
	CHECK_INT(dl.nr, 1);
	CHECK(strlen(dl.items[0].message) <= DIAG_MAX_TEXT + 3);
	diag_list_release(&dl);

	strbuf_reset(&big);
	for (int i = 0; i < 2000; i++)
		strbuf_addf(&big, "kernel.cu(%d): error: e%d\n", i + 1, i);
	diag_parse(big.buf, big.len, &dl);
	CHECK_INT(dl.nr, DIAG_MAX_RECORDS);
	CHECK_INT(dl.dropped, 2000 - DIAG_MAX_RECORDS);
	CHECK_INT(dl.nerrors, 2000);
	diag_list_release(&dl);

	strbuf_reset(&big);
	strbuf_addstr(&big, "kernel.cu(1): error: deep\n          detected during:\n");
	for (int i = 0; i < 500; i++)
		strbuf_addf(&big, "            instantiation of \"f<%d>\" at line %d\n", i, i);
	diag_parse(big.buf, big.len, &dl);
	CHECK_INT(dl.items[0].nframes, DIAG_MAX_FRAMES);
	CHECK_INT(dl.items[0].frames_dropped, 500 - DIAG_MAX_FRAMES);
	diag_list_release(&dl);

	/* random bytes */
	unsigned s = 12345;
	for (int round = 0; round < 200; round++) {
		strbuf_reset(&big);
		int n = (int)((s = s * 1103515245 + 12345) >> 16) % 600;
		for (int i = 0; i < n; i++) {
			s = s * 1103515245 + 12345;
			strbuf_addch(&big, "kernel.cu(1): error warning:#^ \n\t\"[]<>ptxas,line;"[(s >> 16) % 47]);
		}
		parse_exact(big.buf, big.len);
	}
	strbuf_release(&big);
}

TEST(diag_anonymous_namespace_stub_is_explained)
{
	char *t = first_error_of("anonymous_namespace");
	CHECK_HAS(t, "is ambiguous");
	CHECK_HAS(t, "Put your kernels and helpers in a named namespace");
	CHECK_HAS(t, ".stub.c file, not your code");
	free(t);
	/* an ordinary error gets no such text */
	t = first_error_of("undefined_identifier");
	CHECK(!strstr(t, "named namespace"));
	free(t);
}
