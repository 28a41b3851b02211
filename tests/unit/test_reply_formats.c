/*
 * The reply formats real models write, as a table: each reply and what the parser must make of
 * it (the kernel taken, which block, the edits applied) or the clear refusal it must give.
 */
#include "test.h"

#include "agent/agent.h"
#include "agent/reply.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define KERNEL                                                                                   \
	"#include <cutegen/kernel_abi.h>\n"                                                      \
	"namespace relu {\n"                                                                     \
	"__global__ void k(const float *x, float *y, long n)\n"                                  \
	"{\n"                                                                                    \
	"\tlong i = blockIdx.x * (long)blockDim.x + threadIdx.x;\n"                              \
	"\tif (i < n)\n"                                                                         \
	"\t\ty[i] = x[i] > 0.f ? x[i] : 0.f;\n"                                                  \
	"}\n"                                                                                    \
	"} // namespace relu\n"                                                                  \
	"CUTEGEN_DECLARE_ABI();\n"                                                               \
	"CUTEGEN_KERNEL int\n"                                                                   \
	"cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor *outputs, int num_outputs,\n" \
	"\t       const double *scalars, int num_scalars, void *workspace, size_t workspace_bytes,\n" \
	"\t       cudaStream_t stream)\n"                                                        \
	"{\n"                                                                                    \
	"\tconst int threads = 256;\n"                                                           \
	"\treturn 0;\n"                                                                          \
	"}\n"

#define EDIT(s, r) "<<<<<<< SEARCH\n" s "\n=======\n" r "\n>>>>>>> REPLACE\n"

struct row {
	const char *name;
	const char *reply;
	int has_current;       /* the edits apply to KERNEL */
	int rc;
	const char *out_exact; /* the kernel taken, exactly */
	const char *out_has, *out_lacks;
	const char *note_has;  /* which part was taken */
	const char *err_has;   /* the refusal */
	const char *change;    /* the Change: line found */
};

static const struct row rows[] = {
	{ "kernel fence followed by a usage snippet",
	  "Change: a relu\n```cuda\n" KERNEL "```\nCall it like this:\n```cpp\n"
	  "int rc = cutegen_launch(in, 1, out, 1, nullptr, 0, nullptr, 0, stream);\n```\n",
	  0, 0, KERNEL, NULL, NULL, "code block 1 of 2", NULL, "a relu" },
	{ "unified diff that mentions cutegen_launch: applied as edits",
	  "Change: more threads\n```diff\n--- a/kernel.cu\n+++ b/kernel.cu\n"
	  "@@ -16,4 +16,4 @@ cutegen_launch(const DLTensor *inputs, int num_inputs,\n {\n"
	  "-\tconst int threads = 256;\n+\tconst int threads = 512;\n \treturn 0;\n }\n```\n",
	  1, 0, NULL, "\tconst int threads = 512;\n", "@@", "unified diff (1 hunk", NULL,
	  "more threads" },
	{ "a bare unified diff, no fence",
	  "--- kernel.cu\n+++ kernel.cu\n@@ -1,1 +1,1 @@\n-\tconst int threads = 256;\n"
	  "+\tconst int threads = 128;\n",
	  1, 0, NULL, "threads = 128;", "threads = 256", "unified diff", NULL, NULL },
	{ "edits inside <think> are ignored, the final ones applied",
	  "<think>\nMaybe 1024?\n" EDIT("\tconst int threads = 256;", "\tconst int threads = 1024;")
	  "No, 512.\n</think>\nChange: 512 threads\n"
	  EDIT("\tconst int threads = 256;", "\tconst int threads = 512;"),
	  1, 0, NULL, "threads = 512;", "1024", "reasoning block", NULL, "512 threads" },
	{ "reasoning whose opening tag the server stripped",
	  "Let me think.\n" EDIT("\tconst int threads = 256;", "\tconst int threads = 1024;")
	  "</think>\n" EDIT("\tconst int threads = 256;", "\tconst int threads = 64;"),
	  1, 0, NULL, "threads = 64;", "1024", NULL, NULL, NULL },
	{ "a kernel fence inside <thinking> and the final one after",
	  "<thinking>\n```cuda\n// draft\nCUTEGEN_KERNEL int cutegen_launch() { return 1; }\n```\n"
	  "</thinking>\n```cuda\n" KERNEL "```\n",
	  0, 0, KERNEL, NULL, NULL, "reasoning", NULL, NULL },
	{ "~~~ fences", "Change: tilde\n~~~cuda\n" KERNEL "~~~\n", 0, 0, KERNEL, NULL, NULL, NULL,
	  NULL, "tilde" },
	{ "one prose line, then the raw file",
	  "Here is the complete kernel:\n" KERNEL, 0, 0, KERNEL, NULL, NULL,
	  "no code fence", NULL, NULL },
	{ "raw file then a Change: line: the line is not code and is kept",
	  KERNEL "\nChange: grid-stride loop\n", 0, 0, KERNEL, NULL, NULL, NULL, NULL,
	  "grid-stride loop" },
	{ "Change: line after the fenced code is kept",
	  "```cuda\n" KERNEL "```\nChange: vectorized loads\n", 0, 0, KERNEL, NULL, NULL, NULL, NULL,
	  "vectorized loads" },
	{ "SEARCH with spaces for tabs, unique: applied",
	  EDIT("    const int threads = 256;", "    const int threads = 128;"),
	  1, 0, NULL, "const int threads = 128;", "threads = 256", "indentation ignored", NULL, NULL },
	{ "SEARCH text absent: the quote keeps its tab",
	  EDIT("\tthis line is not in the kernel", "\tnor this"),
	  1, -1, NULL, NULL, NULL, NULL, "starting \"\tthis line is not in the kernel\") was not found",
	  NULL },
	{ "a usage snippet alone: refused, saying none defines the entry point",
	  "```cpp\nint rc = cutegen_launch(in, 1, out, 1, nullptr, 0, nullptr, 0, s);\n```\n",
	  0, -1, NULL, NULL, NULL, NULL, "none defines it", NULL },
	{ "a diff with no kernel to apply it to: refused",
	  "```diff\n@@ -1 +1 @@\n-a\n+b\n```\n", 0, -1, NULL, NULL, NULL, NULL,
	  "no kernel to change yet", NULL },
	{ "code block without an entry point names CUTEGEN_KERNEL, not extern \"C\"",
	  "```cuda\n__global__ void k() {}\n```\n", 0, -1, NULL, NULL, NULL, NULL,
	  "CUTEGEN_KERNEL int cutegen_launch(...) definition", NULL },
};

TEST(reply_formats_table)
{
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		const struct row *r = &rows[i];
		struct strbuf out = STRBUF_INIT;
		enum reply_form f;
		char *note = NULL, *err = NULL;
		int rc = reply_parse(r->reply, strlen(r->reply), 0, r->has_current ? KERNEL : NULL,
				     &out, &f, &note, &err);
		if (rc != r->rc)
			fprintf(stderr, "  row '%s': rc %d (%s)\n", r->name, rc, err ? err : "no error");
		CHECK_INT(rc, r->rc);
		if (r->out_exact && rc == 0 && strcmp(out.buf, r->out_exact))
			fprintf(stderr, "  row '%s': took\n%s\n", r->name, out.buf);
		if (r->out_exact)
			CHECK_STR(out.buf, r->out_exact);
		if (r->out_has)
			CHECK_HAS(out.buf, r->out_has);
		if (r->out_lacks)
			CHECK(!strstr(out.buf, r->out_lacks));
		if (r->note_has) {
			if (!note || !strstr(note, r->note_has))
				fprintf(stderr, "  row '%s': note '%s'\n", r->name, note ? note : "(none)");
			CHECK(note && strstr(note, r->note_has));
		}
		if (r->err_has) {
			if (!err || !strstr(err, r->err_has))
				fprintf(stderr, "  row '%s': error '%s'\n", r->name, err ? err : "(none)");
			CHECK(err && strstr(err, r->err_has));
		}
		if (err)
			CHECK(!strstr(err, "extern \"C\""));
		if (r->change) {
			char *c = agent_change_line(r->reply);
			if (!c || strcmp(c, r->change))
				fprintf(stderr, "  row '%s': change '%s'\n", r->name, c ? c : "(none)");
			CHECK(c && !strcmp(c, r->change));
			free(c);
		}
		free(note);
		free(err);
		strbuf_release(&out);
	}
}

/* Indentation-only differences that match twice: the message says only the indentation differs. */
TEST(reply_indentation_only_ambiguous)
{
	const char *cur = "a\n\tx = 1;\nb\n  x = 1;\n";
	struct strbuf out = STRBUF_INIT;
	enum reply_form f;
	char *err = NULL;
	const char *r = EDIT("    x = 1;", "    x = 2;");
	CHECK_INT(reply_parse(r, strlen(r), 0, cur, &out, &f, NULL, &err), -1);
	CHECK_HAS(err, "only the indentation differs");
	CHECK_HAS(err, "matches 2 places (lines 2, 4)");
	CHECK_HAS(err, "starting \"    x = 1;\"");
	free(err);
	strbuf_release(&out);
}
