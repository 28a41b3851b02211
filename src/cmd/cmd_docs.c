/*
 * `cutegen docs index [--out DB]` and `cutegen docs search QUERY [-n K] [--json]`: the CuTe
 * knowledge index (rag.h) for people, the same one the agent queries.
 */
#include "cmd/cutegen.h"
#include "agent/rag.h"
#include "util/opt.h"
#include "util/strbuf.h"
#include "util/suggest.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A few lines of the chunk that say most: the first lines that hold a query word, else its start. */
static void snippet(const char *text, const char *query, struct strbuf *out)
{
	int shown = 0;
	char q[256];
	snprintf(q, sizeof(q), "%s", query);
	for (const char *line = text; line && *line && shown < 4;) {
		const char *eol = strchr(line, '\n');
		size_t n = eol ? (size_t)(eol - line) : strlen(line);
		int hit = 0;
		char *save = NULL, *copy = xstrdup(q);
		for (char *w = strtok_r(copy, " \t_:,.", &save); w && !hit; w = strtok_r(NULL, " \t_:,.", &save))
			if (strlen(w) > 3 && memmem(line, n, w, strlen(w)))
				hit = 1;
		free(copy);
		if (hit) {
			strbuf_addf(out, "    %.*s%s\n", (int)(n > 110 ? 110 : n), line, n > 110 ? "..." : "");
			shown++;
		}
		line = eol ? eol + 1 : NULL;
	}
	if (!shown) {
		const char *line = text;
		for (int i = 0; i < 2 && line && *line; i++) {
			const char *eol = strchr(line, '\n');
			size_t n = eol ? (size_t)(eol - line) : strlen(line);
			strbuf_addf(out, "    %.*s\n", (int)(n > 110 ? 110 : n), line);
			line = eol ? eol + 1 : NULL;
		}
	}
}

static int docs_index(int argc, char **argv)
{
	const char *out = NULL, *cutlass = NULL, *notes = NULL, *examples = NULL;
	int all = 0, np = 0;
	char err[256];
	struct opt opts[] = {
		{ "out", 'o', OPT_STRING, &out },
		{ "cutlass-include", 0, OPT_STRING, &cutlass },
		{ "examples", 0, OPT_STRING, &examples },
		{ "notes", 0, OPT_STRING, &notes },
		{ "all-arches", 0, OPT_BOOL, &all },
	};
	if (opt_parse(argc, argv, opts, (int)ARRAY_SIZE(opts), &np, err, sizeof(err)) || np) {
		error("%s; see 'cutegen help docs'", np ? "docs index takes no arguments" : err);
		return EXIT_USAGE;
	}
	char *path = out ? xstrdup(out) : rag_default_db_path();
	struct rag_build_opts o = RAG_BUILD_OPTS_INIT;
	o.cutlass_include = cutlass;
	o.examples_dir = examples;
	o.notes_dir = notes;
	o.all_arches = all;
	struct rag_build_stats st = { 0 };
	char *e = NULL;
	int rc = EXIT_OK;
	if (rag_build(path, &o, &st, &e)) {
		error("%s", e);
		rc = EXIT_ENV;
	} else {
		printf("indexed %zu files into %zu chunks (%.1f MB) in %.1f s: %s\n", st.files, st.chunks,
		       st.bytes / 1e6, st.seconds, path);
	}
	free(e);
	free(path);
	return rc;
}

static int docs_search(int argc, char **argv)
{
	const char *db = NULL, *error_file = NULL;
	int k = 5, json = 0, np = 0;
	char err[256];
	struct opt opts[] = {
		{ "db", 0, OPT_STRING, &db },
		{ "n", 'n', OPT_INT, &k },
		{ "json", 0, OPT_BOOL, &json },
		{ "error", 0, OPT_STRING, &error_file },
	};
	if (opt_parse(argc, argv, opts, (int)ARRAY_SIZE(opts), &np, err, sizeof(err))) {
		error("%s; see 'cutegen help docs'", err);
		return EXIT_USAGE;
	}
	if ((np < 1 && !error_file) || k <= 0 || k > 100) {
		if (np < 1)
			error("docs search needs a query; usage: cutegen docs search QUERY [-n K]");
		else
			error("option '-n' must be between 1 and 100 (got %d)", k);
		return EXIT_USAGE;
	}
	struct strbuf q = STRBUF_INIT;
	for (int i = 1; i <= np; i++)
		strbuf_addf(&q, "%s%s", i > 1 ? " " : "", argv[i]);
	if (error_file) {
		struct strbuf et = STRBUF_INIT;
		int r = strbuf_read_file(&et, error_file, 1u << 20);
		if (r) {
			error("cannot read the compiler error file '%s': %s", error_file,
			      strbuf_read_strerror(r, error_file));
			strbuf_release(&et);
			strbuf_release(&q);
			return EXIT_INPUT;
		}
		rag_terms_from_error(et.buf, &q);
		strbuf_release(&et);
		if (!json)
			printf("query: %s\n", q.buf);
	}
	char *e = NULL;
	int built = 0, rc = EXIT_OK;
	struct rag *r = NULL;
	if (db)
		r = rag_open(db, &e);
	else {
		r = rag_open_default(NULL, &built, &e);
		if (built)
			fprintf(stderr, "cutegen: built the docs index first (cutegen docs index)\n");
	}
	struct rag_hit *h = NULL;
	int n = 0;
	if (!r) {
		error("%s", e);
		rc = EXIT_ENV;
		goto out;
	}
	n = rag_search(r, q.buf, k, &h, &e);
	if (n < 0) {
		error("%s", e);
		rc = EXIT_INTERNAL;
		n = 0;
		goto out;
	}
	if (json) {
		json_t *a = json_array();
		for (int i = 0; i < n; i++)
			json_array_append_new(a, json_pack("{s:s,s:i,s:i,s:s,s:s,s:f,s:s}", "file", h[i].file,
							   "start", h[i].start, "end", h[i].end, "title",
							   h[i].title, "kind", h[i].kind, "score", h[i].score,
							   "text", h[i].text));
		char *s = json_dumps(a, JSON_INDENT(2));
		puts(s);
		free(s);
		json_decref(a);
	} else {
		struct strbuf sb = STRBUF_INIT;
		for (int i = 0; i < n; i++) {
			strbuf_addf(&sb, "%d. %s:%d-%d  %s  [%s]\n", i + 1, h[i].file, h[i].start, h[i].end,
				    h[i].title, h[i].kind);
			snippet(h[i].text, q.buf, &sb);
		}
		if (!n)
			strbuf_addstr(&sb, "no match\n");
		fputs(sb.buf, stdout);
		strbuf_release(&sb);
		if (!n)
			rc = EXIT_VERDICT;
	}
out:
	rag_hits_free(h, n);
	rag_close(r);
	free(e);
	strbuf_release(&q);
	return rc;
}

int cmd_docs(int argc, char **argv)
{
	if (argc < 2) {
		error("docs needs a subcommand: 'cutegen docs index' or 'cutegen docs search QUERY'");
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "index"))
		return docs_index(argc - 1, argv + 1);
	if (!strcmp(argv[1], "search"))
		return docs_search(argc - 1, argv + 1);
	const char *subs[] = { "index", "search" }, *best[2];
	struct strbuf hint = STRBUF_INIT;
	suggest_format(&hint, "", best, suggest_similar(argv[1], subs, 2, best, 2));
	error("no docs subcommand '%s'%s; use 'index' or 'search'", argv[1], hint.buf);
	strbuf_release(&hint);
	return EXIT_USAGE;
}
