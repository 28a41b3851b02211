/*
 * Retrieval of CuTe knowledge: an SQLite FTS5 index over the installed CuTe and CUTLASS headers
 * (cute/ recursively, cutlass/arch, cutlass/pipeline, cutlass/numeric_*.h), the CuTe examples
 * (<cutlass>/examples/cute) and the notes cutegen ships (docs/cute/NAME.md, embedded), chunked by
 * declaration (C++: one top-level struct/class/function/alias with the comment above it;
 * Markdown: one section per heading). The agent queries it with the identifiers of the latest
 * compile error and the stage's topic, filtered by the task's class and contract (rag_retrieve); `cutegen docs` exposes the same to people.
 * Ranking: BM25 with the declared name (title) weighted far above the body, and a further boost
 * for chunks that declare an identifier the query names, so a declaration outranks mentions.
 * Not for: prompting (the agent decides what to ask and where the text goes).
 *
 * Usage:
 *   1. struct rag *r = rag_open_default(NULL, &err)   (builds or rebuilds the index when it is
 *      missing or stale), or rag_build() then rag_open();
 *   2. rag_query(r, "tiled copy predication", 5, 6000, &sb) appends the best chunks;
 *      rag_search() returns them as records;
 *   3. rag_close(r).
 */
#ifndef CUTEGEN_RAG_H
#define CUTEGEN_RAG_H

#include <stddef.h>

#include "util/strbuf.h"

#define RAG_CHUNK_MAX_BYTES 6000   /* longer declarations are split into parts */
#define RAG_FILE_MAX_BYTES (4u << 20)

struct rag;

struct rag_build_opts {
	const char *cutlass_include; /* NULL = paths_cutlass_include() */
	const char *examples_dir;    /* NULL = <cutlass_include>/../examples/cute when present */
	const char *notes_dir;       /* NULL = the notes embedded in cutegen (docs/cute/NAME.md) */
	int all_arches;              /* also index SM100+ and sparse/extended GMMA headers */
};
#define RAG_BUILD_OPTS_INIT { NULL, NULL, NULL, 0 }

struct rag_build_stats {
	size_t files, chunks, bytes;
	double seconds;
};

/* ${XDG_CACHE_HOME:-~/.cache}/cutegen/docs.db; heap string. */
char *rag_default_db_path(void);

/*
 * Builds the index at db_path (written to a temporary file and renamed into place). Returns 0,
 * or -1 with *err (heap string). stats may be NULL.
 */
int rag_build(const char *db_path, const struct rag_build_opts *o, struct rag_build_stats *stats,
	      char **err);

/* Opens an index read-only. NULL with *err when it is missing or not an index. */
struct rag *rag_open(const char *db_path, char **err);

/*
 * Opens db_path (NULL = the default path), first (re)building it when it is missing or was
 * built from other CUTLASS headers or other notes than these. *built is set to 1 when it
 * (re)built (may be NULL).
 */
struct rag *rag_open_default(const char *db_path, int *built, char **err);
void rag_close(struct rag *r);

struct rag_hit {
	char *file;   /* "cute/algorithm/copy.hpp", "examples/cute/tutorial/tiled_copy_if.cu",
			 "docs/cute/03-tiled-copy.md" */
	int start, end; /* 1-based lines */
	char *title;  /* the declared name or the heading */
	char *kind;   /* "header", "example", "note" */
	char *text;
	double score; /* higher is better */
};

/* Up to k best chunks for query. Returns the count (>= 0), -1 with *err. *hits: free with
 * rag_hits_free. */
int rag_search(struct rag *r, const char *query, int k, struct rag_hit **hits, char **err);
void rag_hits_free(struct rag_hit *hits, int n);

/*
 * Appends the top chunks for query to out, each as "// FILE:START-END  TITLE\n" + text, while
 * they fit in byte_budget (the first one is cut to fit). Returns how many were appended, or
 * -1 on a database error.
 */
int rag_query(struct rag *r, const char *query, int k, size_t byte_budget, struct strbuf *out);

/* What the agent is at, for rag_retrieve. */
struct rag_situation {
	int memory_bound;        /* elementwise / row-wise class: no MMA text */
	int strict_fp32;         /* strict fp32 contract: no tensor-core text */
	const char *stage_topic; /* the stage's "docs:" line, or NULL */
	const char *error;       /* the latest compile error, or NULL */
	const char *failure;     /* the latest other failure (wrong result, CUDA error), or NULL */
};

/*
 * Retrieval for a situation: the identifiers of the error (or the topic of a failure: unwritten
 * outputs and out-of-bounds accesses ask for predication, a misaligned address for alignment),
 * then the stage's topic, and of the
 * best chunks for them (one per declared name: no second overload), those that fit the task: never programmatic dependent launch, no MMA
 * text for a memory-bound class, no tensor-core text under a strict fp32 contract (each unless
 * the error or the topic names it). Appends up to k within byte_budget as rag_query does;
 * returns how many, 0 when there is nothing to ask, -1 on a database error.
 */
int rag_retrieve(struct rag *r, const struct rag_situation *sit, int k, size_t byte_budget,
		 struct strbuf *out);

/*
 * Appends to query (space-separated) the CuTe/CUTLASS identifiers in a compiler error, most
 * telling first: names on error lines before names from instantiation context, qualified
 * cute::/cutlass:: names and names with underscores, no C++ keywords, standard types or
 * template parameter names. At most 10.
 */
void rag_terms_from_error(const char *compiler_error_text, struct strbuf *query);

/* Chunking, exposed for tests. The callback gets each chunk; 1-based inclusive lines. */
typedef void (*rag_chunk_fn)(void *data, const char *title, int start, int end,
			     const char *text, size_t len);
void rag_chunk_cpp(const char *text, size_t len, rag_chunk_fn fn, void *data);
void rag_chunk_markdown(const char *text, size_t len, const char *file_title, rag_chunk_fn fn,
			void *data);
/* The name a C++ declaration declares ("make_tiled_copy", "Copy_Atom"); heap string or NULL. */
char *rag_decl_name(const char *decl, size_t len);

#endif
