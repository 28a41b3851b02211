/*
 * Policy check: what a candidate kernel's source may not do, judged statically before it is
 * compiled (docs/policy.md lists the rules and why each exists), and, below, the object check
 * of its compiled host code before it is linked. It reads the text only:
 * comments and the insides of string and character literals are ignored, line continuations
 * are joined, and every finding names the line of the original text where it starts.
 * Not for: catching everything. A determined source can hide a call from any static check;
 * the runner measures what the kernel does (stray streams, missing work, slow syncs).
 *
 * Usage:
 *   1. struct policy_report rep = POLICY_REPORT_INIT;
 *   2. policy_check(source, len, &rep): returns the number of violations (0 = clean);
 *   3. read rep.items[0..rep.nr); policy_format(&rep, &sb) renders them one a line;
 *   4. policy_report_release(&rep).
 */
#ifndef CUTEGEN_POLICY_H
#define CUTEGEN_POLICY_H

#include <stddef.h>

#include "util/strbuf.h"

/* Sources longer than this are rejected whole (rule "too-large"). */
#define POLICY_MAX_SOURCE (4u << 20)
/* At most this many violations are listed (the count in dropped says how many more). */
#define POLICY_MAX_VIOLATIONS 100

struct policy_violation {
	int line;          /* 1-based line of the source; 0 for the file as a whole */
	const char *rule;  /* static rule id: "no-sync", "include-allowlist", ... */
	char *message;     /* what and why, e.g. "cudaDeviceSynchronize is not allowed: ..." */
};

struct policy_report {
	struct policy_violation *items;
	size_t nr, alloc;
	size_t dropped;
};

#define POLICY_REPORT_INIT { NULL, 0, 0, 0 }

/* Checks source[0..len) and appends what it finds to rep; returns rep->nr + rep->dropped. */
int policy_check(const char *source, size_t len, struct policy_report *rep);

void policy_report_release(struct policy_report *rep);

/*
 * One line a violation, in line order:
 *   line 12: rule 'no-sync': cudaDeviceSynchronize is not allowed: the runner synchronizes;
 *   launch on the given stream
 * (file-wide ones say "file" instead of "line N").
 */
void policy_format(const struct policy_report *rep, struct strbuf *out);

/* The rule ids with a one-line summary each, ending with { NULL, NULL }. */
struct policy_rule {
	const char *id;
	const char *summary;
};
extern const struct policy_rule policy_rules[];

/*
 * The object-code check: what the candidate's compiled host object (kernel.o, before the CUDA
 * runtime is linked in) references and defines, read from objdump's output. The source scan
 * above reads text, which an asm label assembled from two literals, a parenthesized name or a
 * weak reference slips past; the symbol table does not lie about what the code will call.
 * build.c runs the tools and calls these; docs/policy.md lists the allowlist and why.
 *
 * Usage:
 *   1. struct obj_info o = OBJ_INFO_INIT;
 *   2. policy_parse_objdump(text of `objdump -wtr kernel.o`, &o) and
 *      policy_parse_disasm(text of `objdump -wd --no-show-raw-insn kernel.o`, &o): 0, or -1
 *      with o.error set (the check then rejects the object: what cannot be read is not
 *      admitted);
 *   3. optionally set o.syms[i].plain to the demangled name (c++filt) for messages;
 *   4. policy_check_object(&o, source, len, &rep) appends the violations to rep;
 *   5. obj_info_release(&o).
 */
struct obj_symbol {
	char *name;          /* as in the object: a C name or a mangled C++ name */
	char *plain;         /* demangled, or NULL (then name is shown) */
	char *section;       /* "*UND*" when undefined, "*COM*", ".text", ... */
	unsigned long long value, size;
	char bind;           /* 'l' local, 'g' global, 'u' unique, 'w' weak, ' ' none */
	char kind;           /* 'F' function, 'O' object, 'd' section, 'f' file, 'i' ifunc, ' ' */
};

struct obj_reloc {
	char *section;       /* the section the relocation patches: ".text", ".init_array" */
	unsigned long long offset;
	char *target;        /* a symbol's name or a section's name */
	long long addend;
};

/* A syscall-type instruction found in host code. */
struct obj_insn {
	char *section;
	char *function;      /* the symbol objdump names the code after */
	unsigned long long offset;
	char *text;          /* "syscall", "sysenter", "int $0x80" */
};

struct obj_info {
	struct obj_symbol *syms;
	size_t nsyms, asyms;
	struct obj_reloc *relocs;
	size_t nrelocs, arelocs;
	struct obj_insn *insns;
	size_t ninsns, ainsns;
	char *error;         /* why the output could not be read; NULL when it could */
};

#define OBJ_INFO_INIT { 0 }

/* Parses the symbol table and relocation records of `objdump -wtr`; -1 sets o->error. */
int policy_parse_objdump(const char *text, size_t len, struct obj_info *o);
/* Keeps the syscall-type instructions of `objdump -wd --no-show-raw-insn`; -1 sets o->error. */
int policy_parse_disasm(const char *text, size_t len, struct obj_info *o);
void obj_info_release(struct obj_info *o);

/*
 * Whether the candidate's object may reference this (undefined) symbol: the id of the
 * allowlist group it is in ("cuda-launch", "libm", "c++-runtime", ...), or NULL.
 */
const char *policy_symbol_allowed(const char *name);

/*
 * The violations of the object: undefined symbols off the allowlist (weak ones too),
 * syscall-type instructions, definitions of library names, symbol versions, indirect
 * functions, constructors other than the compiler's own. Each names the symbol, the function
 * referencing it and, when the source shows it, the line. Returns the count appended.
 */
int policy_check_object(const struct obj_info *o, const char *source, size_t len,
			struct policy_report *rep);

/* Whether a rule id is one of the object check's (the rest are the source scan's). */
int policy_rule_is_object(const char *rule);

/* A text that changes whenever the object check's rules change (hashed into build keys). */
const char *policy_object_rules_version(void);

#endif
