/* Tests of the CuTe docs index: chunking, declared names, error terms, search ranking. */
#include "test.h"
#include "agent/rag.h"
#include "util/fsutil.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <stdlib.h>

struct collected {
	struct strbuf sb;
	int n;
};

static void collect(void *data, const char *title, int start, int end, const char *text, size_t len)
{
	struct collected *c = data;
	strbuf_addf(&c->sb, "[%s %d-%d]", title, start, end);
	c->n++;
	(void)text;
	(void)len;
}

static const char header[] =
	"#pragma once\n"                                   /* 1 */
	"#include <cute/config.hpp>\n"                     /* 2 */
	"namespace cute\n"                                 /* 3 */
	"{\n"                                              /* 4 */
	"\n"                                               /* 5 */
	"/// A copy atom.\n"                               /* 6 */
	"template <class... Args>\n"                       /* 7 */
	"struct Copy_Atom;\n"                              /* 8 */
	"\n"                                               /* 9 */
	"// Make a tiled copy.\n"                          /* 10 */
	"template <class... Args,\n"                       /* 11 */
	"          class ValLayout = Layout<_1>>\n"        /* 12 */
	"CUTE_HOST_DEVICE\n"                               /* 13 */
	"auto\n"                                           /* 14 */
	"make_tiled_copy(Copy_Atom<Args...> const& atom,\n" /* 15 */
	"                ValLayout const& v = {})  // {\n"  /* 16 */
	"{\n"                                              /* 17 */
	"  auto s = \"}\"; if (1) { return 1; }\n"         /* 18 */
	"}\n"                                              /* 19 */
	"\n"                                               /* 20 */
	"template <class T>\n"                             /* 21 */
	"struct alignas(16) ThrCopy : Base<T> {\n"         /* 22 */
	"  template <class S>\n"                           /* 23 */
	"  CUTE_HOST_DEVICE auto\n"                        /* 24 */
	"  partition_S(S&& s) const { return s; }\n"       /* 25 */
	"};\n"                                             /* 26 */
	"using DefaultCopy = AutoVectorizingCopyWithAssumedAlignment<8>;\n" /* 27 */
	"CUTE_HOST_DEVICE constexpr\n"                     /* 28 */
	"bool operator==(A const&, B const&) { return true; }\n" /* 29 */
	"} // end namespace cute\n";                       /* 30 */

TEST(rag_chunk_cpp_declarations)
{
	struct collected c = { STRBUF_INIT, 0 };
	rag_chunk_cpp(header, strlen(header), collect, &c);
	CHECK_STR(c.sb.buf, "[Copy_Atom 6-8][make_tiled_copy 10-19][ThrCopy 21-26]"
			    "[DefaultCopy 27-27][operator== 28-29]");
	strbuf_release(&c.sb);
}

TEST(rag_chunk_caps_size)
{
	struct strbuf big = STRBUF_INIT;
	strbuf_addstr(&big, "struct Huge {\n");
	for (int i = 0; i < 2000; i++)
		strbuf_addf(&big, "  int member_%d;\n", i);
	strbuf_addstr(&big, "};\n");
	struct collected c = { STRBUF_INIT, 0 };
	rag_chunk_cpp(big.buf, big.len, collect, &c);
	CHECK(c.n >= (int)(big.len / RAG_CHUNK_MAX_BYTES));
	CHECK_HAS(c.sb.buf, "[Huge 1-");
	CHECK_HAS(c.sb.buf, "-2002]");
	strbuf_release(&c.sb);
	strbuf_release(&big);
	/* unbalanced and binary input never crashes */
	struct collected d = { STRBUF_INIT, 0 };
	rag_chunk_cpp("}}}{ struct X { \"unterminated\n/* open comment", 44, collect, &d);
	char junk[4096];
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (char)(i * 131 + 7);
	rag_chunk_cpp(junk, sizeof(junk), collect, &d);
	rag_chunk_markdown(junk, sizeof(junk), "junk", collect, &d);
	strbuf_release(&d.sb);
}

TEST(rag_chunk_markdown_sections)
{
	const char *md = "# Tiled copy\nintro\n\n## Predication\ntext\n```cpp\n# not a heading\n```\n"
			 "### Deeper\nmore\n";
	struct collected c = { STRBUF_INIT, 0 };
	rag_chunk_markdown(md, strlen(md), "03.md", collect, &c);
	CHECK_STR(c.sb.buf, "[Tiled copy 1-3][Predication 4-8][Deeper 9-10]");
	strbuf_release(&c.sb);
}

TEST(rag_decl_names)
{
	const char *cases[][2] = {
		{ "template <class T>\nCUTE_HOST_DEVICE constexpr\nauto\nlocal_tile(T&& t, int x)\n{", "local_tile" },
		{ "struct SM80_CP_ASYNC_CACHEALWAYS\n{", "SM80_CP_ASYNC_CACHEALWAYS" },
		{ "template <int B, int M, int S>\nstruct Swizzle\n{", "Swizzle" },
		{ "decltype(auto) get_slice(int i) {", "get_slice" },
		{ "using X = Layout<_1>;", "X" },
		{ "static constexpr int kStages = 4;", "kStages" },
		{ "__global__ void __launch_bounds__(128) gemm_device(float* p) {", "gemm_device" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *n = rag_decl_name(cases[i][0], strlen(cases[i][0]));
		CHECK_STR(n, cases[i][1]);
		free(n);
	}
}

TEST(rag_terms_from_errors)
{
	struct strbuf q = STRBUF_INIT;
	rag_terms_from_error(
		"kernel.cu(47): error: no instance of overloaded function \"cute::make_tiled_copy\" matches the argument list\n"
		"            argument types are: (cute::Copy_Atom<cute::SM80_CP_ASYNC_CACHEALWAYS<cute::uint128_t>, float>, int)\n"
		"          detected during instantiation of \"void gemm_device<TA>(const TA *) [with TA=float]\" at line 120\n", &q);
	CHECK(starts_with(q.buf, "make_tiled_copy "));
	CHECK_HAS(q.buf, "Copy_Atom");
	CHECK_HAS(q.buf, "SM80_CP_ASYNC_CACHEALWAYS");
	CHECK(!strstr(q.buf, "uint128_t"));
	CHECK(!strstr(q.buf, "float"));
	strbuf_reset(&q);
	rag_terms_from_error("k.cu(63): error: class \"cute::TiledCopy<cute::Copy_Atom<X>, L>\" has no member \"partition_S\"\n", &q);
	CHECK(starts_with(q.buf, "partition_S "));
	CHECK_HAS(q.buf, "TiledCopy");
	strbuf_release(&q);
}

static const char *make_tree(void)
{
	const char *root = test_tmpdir();
	char *p = xasprintf("%s/inc/cute/algorithm", root);
	mkdir_p(p);
	free(p);
	p = xasprintf("%s/notes", root);
	mkdir_p(p);
	free(p);
	test_write_file("inc/cute/tensor.hpp", "#pragma once\n");
	test_write_file("inc/cute/algorithm/copy.hpp",
		"namespace cute {\n"
		"// Mentions make_tiled_copy and predication in passing, many times: make_tiled_copy\n"
		"// make_tiled_copy make_tiled_copy make_tiled_copy tiled copy predication.\n"
		"template <class P, class S, class D>\nvoid\ncopy_if(P const& pred, S const& src, D& dst)\n"
		"{\n  for (int i = 0; i < size(src); ++i) if (pred(i)) dst(i) = src(i);\n}\n"
		"}\n");
	p = xasprintf("%s/inc/cute/atom", root);
	mkdir_p(p);
	free(p);
	test_write_file("inc/cute/atom/copy_atom.hpp",
		"namespace cute {\n/// Produce a TiledCopy.\ntemplate <class A>\nauto\n"
		"make_tiled_copy(A const& atom)\n{\n  return atom;\n}\n}\n");
	test_write_file("notes/03-copy.md", "# Copy\nabout copies\n\n## Predication\nuse copy_if with an identity tensor\n");
	return root;
}

TEST(rag_build_and_rank)
{
	const char *root = make_tree();
	char *inc = xasprintf("%s/inc", root), *notes = xasprintf("%s/notes", root);
	char *db = xasprintf("%s/idx/docs.db", root), *err = NULL;
	struct rag_build_opts o = RAG_BUILD_OPTS_INIT;
	o.cutlass_include = inc;
	o.notes_dir = notes;
	o.examples_dir = "/nonexistent";
	struct rag_build_stats st;
	CHECK_INT(rag_build(db, &o, &st, &err), 0);
	CHECK_INT(st.files, 4);
	struct rag *r = rag_open(db, &err);
	CHECK(r);
	struct rag_hit *h = NULL;
	/* the declaration beats the chunk that only mentions the name, however often */
	int n = rag_search(r, "make_tiled_copy", 5, &h, &err);
	CHECK(n >= 2);
	CHECK_STR(h[0].file, "cute/atom/copy_atom.hpp");
	CHECK_STR(h[0].title, "make_tiled_copy");
	CHECK_INT(h[0].start, 2);
	rag_hits_free(h, n);
	n = rag_search(r, "predication", 5, &h, &err);
	CHECK(n >= 2);
	CHECK_STR(h[0].title, "Predication");
	CHECK_STR(h[0].kind, "note");
	rag_hits_free(h, n);
	CHECK_INT(rag_search(r, "the of and", 5, &h, &err), 0);
	/* the budget */
	struct strbuf out = STRBUF_INIT;
	CHECK_INT(rag_query(r, "make_tiled_copy", 5, 100000, &out), 2);
	CHECK(starts_with(out.buf, "// cute/atom/copy_atom.hpp:2-"));
	strbuf_reset(&out);
	CHECK_INT(rag_query(r, "make_tiled_copy", 5, 120, &out), 1);
	CHECK(out.len <= 121);
	strbuf_release(&out);
	rag_close(r);
	free(inc);
	free(notes);
	free(db);
}
