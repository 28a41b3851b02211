/*
 * Diagnostics from a CUDA compile: parses what nvcc and the tools it drives print (the EDG front
 * end of cudafe++/cicc, ptxas, nvlink, the host gcc, the linker, nvcc itself) into records, and
 * renders the first error the way a person (or the model) should read it: the location, the
 * message, the template instantiation chain trimmed to what matters, and the numbered source
 * lines around the line in the candidate.
 * Not for: running the compiler (build.c does) or judging a kernel (the evaluator does).
 *
 * The input is untrusted bytes: any length, any content, NULs included. The parser reads only
 * inside [log, log+len), keeps at most DIAG_MAX_RECORDS records, each message at most
 * DIAG_MAX_TEXT bytes and at most DIAG_MAX_FRAMES frames (counting the rest), and always ends.
 *
 * Usage:
 *   1. struct diag_list dl = DIAG_LIST_INIT;
 *   2. diag_parse(log, len, &dl);
 *   3. read dl.items[0..dl.nr); diag_first_error(&dl) finds the one to show;
 *      diag_format_first_error(&dl, source, source_len, "kernel.cu", &sb) renders it;
 *   4. diag_list_release(&dl).
 */
#ifndef CUTEGEN_NVCC_DIAG_H
#define CUTEGEN_NVCC_DIAG_H

#include <stddef.h>

#include "util/strbuf.h"

#define DIAG_MAX_RECORDS 500
#define DIAG_MAX_FRAMES 64
#define DIAG_MAX_TEXT 4096

/* Ordered by weight: a record at least DIAG_ERROR means the compile failed. */
enum diag_severity {
	DIAG_INFO,    /* ptxas info: resource usage */
	DIAG_NOTE,    /* note, remark */
	DIAG_WARNING,
	DIAG_ERROR,
	DIAG_FATAL    /* catastrophic error, fatal error, nvcc fatal: the compile stopped there */
};

/* One line of an instantiation chain, as the compiler printed it (innermost first). */
struct diag_frame {
	char *text;   /* e.g. `instantiation of "void f<T>(T) [with T=float]"` (no location) */
	char *file;   /* where the instantiation happened; the diagnostic's own file when the
		       * compiler wrote only "at line N"; NULL when none was given */
	int line;     /* 0 when none */
};

struct diag {
	enum diag_severity severity;
	char *tool;      /* who said it: "front end", "gcc", "ptxas", "nvlink", "nvcc", "ld" */
	char *file;      /* as printed (kernel.cu, /path/cute/layout.hpp); NULL when none */
	int line;        /* 0 when none */
	int column;      /* 1-based; 0 when none (the front end's caret gives one) */
	char *message;   /* the message, continuation lines ("argument types are: ...") joined by
			  * newlines; never NULL */
	char *code;      /* the diagnostic's number if printed ("177-D"), else NULL */
	struct diag_frame *frames; /* instantiation context, innermost first */
	size_t nframes, frames_alloc;
	size_t frames_dropped;     /* frames past DIAG_MAX_FRAMES, or "[ N ... not shown ]" */
};

struct diag_list {
	struct diag *items;
	size_t nr, alloc;
	size_t dropped;  /* records past DIAG_MAX_RECORDS */
	int nerrors;     /* records at DIAG_ERROR or above, dropped ones included */
};

#define DIAG_LIST_INIT { NULL, 0, 0, 0, 0 }

/* Appends the records found in log[0..len) to dl. Never fails; unknown lines are skipped. */
void diag_parse(const char *log, size_t len, struct diag_list *dl);

/*
 * Renames the file `from` (as nvcc printed it, e.g. "kernel.cu", the name build.c compiles the
 * source under) to `to` in every record and frame, so that what the user reads names their own
 * file (editors jump to "my_relu.cu:12:5"). For display only: the model is shown kernel.cu.
 */
void diag_list_map_file(struct diag_list *dl, const char *from, const char *to);

/* Frees every record; dl is empty and reusable afterwards. */
void diag_list_release(struct diag_list *dl);

/* "error", "warning", ... */
const char *diag_severity_name(enum diag_severity s);

/* The first record at DIAG_ERROR or above, or NULL. The pointer lives as long as dl. */
const struct diag *diag_first_error(const struct diag_list *dl);

/*
 * Copies s into out, shortened for reading: template argument lists nested deeper than
 * max_depth angle brackets become "<...>", each "[with ...]" clause is cut to max_with bytes,
 * and the whole to max_len bytes (ending in "..."). 0 for a cap means no cap.
 */
void diag_shorten(const char *s, int max_depth, size_t max_with, size_t max_len,
		  struct strbuf *out);

/*
 * Renders the first error (or, if none, nothing and returns -1) into out:
 *
 *   kernel.cu:11:12: error: identifier "thrice" is undefined
 *     detected during instantiation of "void apply(T *, int) [with T=float]" at line 16 of kernel.cu
 *        8 | {
 *        9 | 	int i = blockIdx.x * blockDim.x + threadIdx.x;
 *       10 | 	if (i < n)
 *   >   11 | 		x[i] = thrice(x[i]) + twice(x[i]);
 *          |            ^
 *       12 | ...
 *
 * The chain keeps the innermost frame in the user's file (main_file, e.g. "kernel.cu"; matched
 * by base name) and the outermost frame, with "... N more" between. When the error itself is
 * in a header, the source lines shown are those around that innermost user frame. Notes that
 * follow the error (candidates that failed deduction) are listed after it, at most two.
 * source may be NULL (no excerpt). Returns 0 when something was written.
 */
int diag_format_first_error(const struct diag_list *dl, const char *source, size_t source_len,
			    const char *main_file, struct strbuf *out);

/* Renders one record on one line, "file:line:col: severity: message" (first message line). */
void diag_format_one(const struct diag *d, struct strbuf *out);

#endif
