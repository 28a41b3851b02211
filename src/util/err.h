/*
 * Result codes: the one error convention of every module below the commands (the rule is
 * written in docs/architecture.md). A function that can fail returns an int: 0 (CG_OK) on
 * success, otherwise one of the codes below, with the details in a message (a heap `char **err`
 * the caller frees, or a caller's strbuf). The code says what KIND of failure it was, so that
 * the command can choose the exit status in one place (cmd/exit.c); the message says what
 * happened and what to do. Modules never print and never choose exit statuses.
 *
 * Like SQLite's extended result codes, a module that must tell finer kinds apart (ncu's
 * "counters restricted", a file too large) makes extended codes from a primary one with
 * CG_EXT(primary, n); cg_primary() gives the primary code back. A plain -1 is CG_ERROR: it
 * failed, of no particular kind (most functions need no more: the message tells the user).
 * Not for: verdicts on kernels (eval/verdict.h), which are results, not failures.
 */
#ifndef CUTEGEN_ERR_H
#define CUTEGEN_ERR_H

enum cg_code {
	CG_ERROR = -1,      /* failed; no particular kind (the message says what) */
	CG_OK = 0,
	CG_USAGE = 1,       /* a bad option or argument given by the caller */
	CG_INPUT = 2,       /* bad input: a file missing, unreadable, malformed or too large */
	CG_REJECTED = 3,    /* judged and refused (the policy check); a verdict, not a crash */
	CG_ENV = 4,         /* the machine lacks something: nvcc, CUTLASS, a GPU, a key, the runner */
	CG_EXTERNAL = 5,    /* an outside program or service failed: the model server, ncu, Slurm */
	CG_TIMEOUT = 6,     /* past its deadline */
	CG_IO = 7,          /* cannot write: the disk, a cache, a store */
	CG_INTERRUPTED = 8, /* stopped by ^C or TERM */
	CG_INTERNAL = 9     /* a broken invariant (a bug in cutegen) */
};

#define CG_EXT(primary, n) ((primary) | ((n) << 8))

/* Extended codes of util/: strbuf_read_file's input past its cap, and its path that names no
 * file to read (a directory, a device, a FIFO no process writes to). */
#define CG_INPUT_TOOBIG CG_EXT(CG_INPUT, 1)
#define CG_INPUT_NOTREG CG_EXT(CG_INPUT, 2)

/* The primary code of a (possibly extended) code; CG_ERROR for any negative value. */
static inline int cg_primary(int rc)
{
	return rc < 0 ? CG_ERROR : rc & 0xff;
}

/* "usage", "input", ... for messages and tests; "error" for unknown codes. Static string. */
const char *cg_name(int rc);

#endif
