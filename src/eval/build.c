/*
 * Compiling a candidate with nvcc, with a content-addressed cache; see build.h.
 */
#include "eval/build.h"
#include "common/paths.h"
#include "common/embedded.h"
#include "eval/policy.h"
#include "common/proc.h"
#include "util/fsutil.h"
#include "util/sha256.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ABI_HEADER "cutegen/kernel_abi.h"

/*
 * The GPU architectures NVIDIA has defined (compute capability x 10), and which of them take the
 * arch-specific 'a' and family 'f' suffixes. A name outside the table is a typo (sm_999), caught
 * as a usage error before nvcc runs; add new architectures here as they appear.
 */
static const struct {
	int cc;
	unsigned a : 1, f : 1;
} known_archs[] = {
	{ 50, 0, 0 }, { 52, 0, 0 }, { 53, 0, 0 }, { 60, 0, 0 }, { 61, 0, 0 }, { 62, 0, 0 },
	{ 70, 0, 0 }, { 72, 0, 0 }, { 75, 0, 0 }, { 80, 0, 0 }, { 86, 0, 0 }, { 87, 0, 0 },
	{ 88, 0, 0 }, { 89, 0, 0 }, { 90, 1, 0 }, { 100, 1, 1 }, { 101, 1, 1 }, { 103, 1, 1 },
	{ 110, 1, 1 }, { 120, 1, 1 }, { 121, 1, 1 },
};

const char *build_known_archs(void)
{
	return "sm_75, sm_80, sm_86, sm_87, sm_88, sm_89, sm_90, sm_90a, sm_100, sm_100a, sm_100f, "
	       "sm_103, sm_103a, sm_103f, sm_110, sm_110a, sm_110f, sm_120, sm_120a, sm_120f, "
	       "sm_121, sm_121a, sm_121f";
}

int build_parse_arch(const char *arch, char *gencode, size_t size)
{
	if (!arch || strncmp(arch, "sm_", 3))
		return -1;
	const char *p = arch + 3;
	size_t digits = 0;
	while (isdigit((unsigned char)p[digits]))
		digits++;
	if (digits < 2 || digits > 3)
		return -1;
	const char *suffix = p + digits;
	if (*suffix && strcmp(suffix, "a") && strcmp(suffix, "f"))
		return -1;
	int cc = atoi(p);
	size_t k = 0;
	while (k < ARRAY_SIZE(known_archs) && known_archs[k].cc != cc)
		k++;
	if (k == ARRAY_SIZE(known_archs) || (*suffix == 'a' && !known_archs[k].a) ||
	    (*suffix == 'f' && !known_archs[k].f))
		return -1;
	int n = snprintf(gencode, size, "arch=compute_%s,code=%s", p, arch);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* The nvcc to run: the given one, nvcc from PATH, or CUDA's default place. Heap string. */
static char *resolve_nvcc(const char *nvcc)
{
	if (nvcc)
		return xstrdup(nvcc);
	char *p = paths_find_program("nvcc"); /* PATH, then /usr/local/cuda/bin */
	return p ? p : xstrdup("nvcc");
}

char **build_argv(const struct build_opts *opts, const char *cutlass_include,
		  const char *abi_include, char **err)
{
	char gencode[64];
	const char *arch = opts->arch ? opts->arch : BUILD_DEFAULT_ARCH;
	if (build_parse_arch(arch, gencode, sizeof(gencode))) {
		*err = xasprintf("arch '%s' is not a GPU architecture nvcc knows; use one of "
				 "%s (sm_90a for H100/H200)", arch, build_known_archs());
		return NULL;
	}
	const char *fixed[] = { "-std=c++17", "-O3", "-Xcompiler", "-fPIC", "-gencode", gencode };
	size_t nextra = 0;
	while (opts->extra_flags && opts->extra_flags[nextra])
		nextra++;
	char **argv = xcalloc(ARRAY_SIZE(fixed) + nextra + 14, sizeof(char *));
	size_t n = 0;
	argv[n++] = resolve_nvcc(opts->nvcc);
	for (size_t i = 0; i < ARRAY_SIZE(fixed); i++)
		argv[n++] = xstrdup(fixed[i]);
	argv[n++] = xasprintf("-I%s", cutlass_include);
	argv[n++] = xasprintf("-I%s", abi_include);
	argv[n++] = xstrdup("--expt-relaxed-constexpr");
	argv[n++] = xstrdup("-DNDEBUG");
	/* CUTLASS then calls the TMA encoders by name (visible to the object check), not through
	 * cudaGetDriverEntryPoint, which hands out any driver function */
	argv[n++] = xstrdup("-DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL=1");
	argv[n++] = xstrdup("-lineinfo");
	for (size_t i = 0; i < nextra; i++)
		argv[n++] = xstrdup(opts->extra_flags[i]);
	argv[n++] = xstrdup("-c");
	argv[n++] = xstrdup("-o");
	argv[n++] = xstrdup("kernel.o");
	argv[n++] = xstrdup("kernel.cu");
	argv[n] = NULL;
	return argv;
}

char **build_link_argv(const struct build_opts *opts, int driver, char **err)
{
	char gencode[64];
	const char *arch = opts->arch ? opts->arch : BUILD_DEFAULT_ARCH;
	if (build_parse_arch(arch, gencode, sizeof(gencode))) {
		*err = xasprintf("arch '%s' is not of the form sm_XY, sm_XYa or sm_XYf "
				 "(e.g. sm_90a for H100/H200)", arch);
		return NULL;
	}
	const char *fixed[] = { "-std=c++17", "-O3", "-shared", "-Xcompiler", "-fPIC",
				"-gencode", gencode };
	size_t nextra = 0;
	while (opts->extra_flags && opts->extra_flags[nextra])
		nextra++;
	char **argv = xcalloc(ARRAY_SIZE(fixed) + nextra + 6, sizeof(char *));
	size_t n = 0;
	argv[n++] = resolve_nvcc(opts->nvcc);
	for (size_t i = 0; i < ARRAY_SIZE(fixed); i++)
		argv[n++] = xstrdup(fixed[i]);
	for (size_t i = 0; i < nextra; i++)
		argv[n++] = xstrdup(opts->extra_flags[i]);
	argv[n++] = xstrdup("-o");
	argv[n++] = xstrdup("kernel.so");
	argv[n++] = xstrdup("kernel.o");
	if (driver)
		argv[n++] = xstrdup("-lcuda"); /* the TMA encoders; the stub links, the driver loads */
	argv[n] = NULL;
	return argv;
}

void build_argv_free(char **argv)
{
	if (!argv)
		return;
	for (char **a = argv; *a; a++)
		free(*a);
	free(argv);
}

/* Each part is hashed with its length first, so no two part lists hash alike. */
static void hash_part(struct sha256 *c, const char *tag, const void *data, size_t len)
{
	char head[64];
	int n = snprintf(head, sizeof(head), "%s %zu\n", tag, len);
	sha256_update(c, head, (size_t)n);
	sha256_update(c, data, len);
}

void build_cache_key(const char *source, size_t len, const char *const *argv,
		     const char *nvcc_version, const char *cutlass_version,
		     const char *abi_header, const char *check_rules, char key[65])
{
	struct sha256 c;
	sha256_init(&c);
	hash_part(&c, "cutegen-build-v2", "", 0);
	hash_part(&c, "check", check_rules, strlen(check_rules));
	hash_part(&c, "source", source, len);
	for (const char *const *a = argv; a && *a; a++)
		hash_part(&c, "arg", *a, strlen(*a));
	hash_part(&c, "nvcc", nvcc_version, strlen(nvcc_version));
	hash_part(&c, "cutlass", cutlass_version, strlen(cutlass_version));
	hash_part(&c, "abi", abi_header, strlen(abi_header));
	sha256_final_hex(&c, key);
}

char *build_default_cache_dir(void)
{
	const char *xdg = getenv("XDG_CACHE_HOME");
	if (xdg && *xdg)
		return xasprintf("%s/cutegen/build", xdg);
	const char *home = getenv("HOME");
	if (home && *home)
		return xasprintf("%s/.cache/cutegen/build", home);
	return NULL;
}

static int has_cute(const char *inc)
{
	char *p = xasprintf("%s/cute/tensor.hpp", inc);
	int ok = file_exists(p);
	free(p);
	return ok;
}

char *build_find_cutlass_include(void)
{
	const char *env = getenv("CUTLASS_DIR");
	char *cand;
	if (env && *env) {
		cand = xasprintf("%s/include", env);
		if (has_cute(cand))
			goto found;
		free(cand);
	}
	char *exe = exe_dir();
	if (exe) {
		cand = xasprintf("%s/../third_party/cutlass/include", exe);
		free(exe);
		if (has_cute(cand))
			goto found;
		free(cand);
	}
	cand = xstrdup("third_party/cutlass/include");
	if (has_cute(cand))
		goto found;
	free(cand);
	return NULL;
found: {
	/* absolute, so that nvcc finds it from its own working directory */
	char *abs = realpath(cand, NULL);
	free(cand);
	return abs;
}
}

const char *build_nvcc_version(const char *nvcc, char **err)
{
	static struct {
		char *prog, *version;
	} seen[8];
	static size_t nseen;
	for (size_t i = 0; i < nseen; i++)
		if (!strcmp(seen[i].prog, nvcc))
			return seen[i].version;

	struct strbuf out = STRBUF_INIT;
	const char *argv[] = { nvcc, "--version", NULL };
	struct child_process cp = CHILD_PROCESS_INIT;
	if (capture_command(&cp, argv, &out, 64 * 1024, 1, 60)) {
		*err = xasprintf("cannot run nvcc: %s; install the CUDA toolkit or pass --nvcc PATH",
				 cp.errmsg);
		strbuf_release(&out);
		return NULL;
	}
	if (cp.status != 0) {
		*err = xasprintf("'%s --version' failed (exit %d): %.200s", nvcc, cp.status, out.buf);
		strbuf_release(&out);
		return NULL;
	}
	char *version = strbuf_detach(&out, NULL);
	if (nseen < ARRAY_SIZE(seen)) {
		seen[nseen].prog = xstrdup(nvcc);
		seen[nseen].version = version;
		nseen++;
	}
	/* past 8 programs the string leaks deliberately: callers hold it as static */
	return version;
}

void build_result_release(struct build_result *r)
{
	free(r->so_path);
	free(r->dir);
	free(r->log);
	diag_list_release(&r->diags);
	policy_report_release(&r->symbols);
	memset(r, 0, sizeof(*r));
}

/* The "result" file of a cache entry. */
static int write_result_file(const char *dir, const struct build_result *r)
{
	char *path = xasprintf("%s/result", dir);
	char *text = xasprintf("status %d\ntimed_out %d\ncompile_s %.3f\nlog_truncated %d\n"
			       "rejected %d\ncheck_s %.3f\n",
			       r->status, r->timed_out, r->compile_s, r->log_truncated, r->rejected,
			       r->check_s);
	int rc = write_file_atomic(path, text, strlen(text));
	free(text);
	free(path);
	if (rc)
		return rc;
	/* the object check's verdict, one violation a line: LINE \t RULE \t MESSAGE */
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < r->symbols.nr; i++) {
		const struct policy_violation *v = &r->symbols.items[i];
		strbuf_addf(&sb, "%d\t%s\t", v->line, v->rule);
		for (const char *m = v->message; *m; m++)
			strbuf_addch(&sb, *m == '\n' || *m == '\t' ? ' ' : *m);
		strbuf_addch(&sb, '\n');
	}
	path = xasprintf("%s/symbols", dir);
	rc = write_file_atomic(path, sb.buf ? sb.buf : "", sb.len);
	free(path);
	strbuf_release(&sb);
	return rc;
}

/* The "symbols" file back into a report; -1 when it is missing or damaged. */
static int read_symbols(const char *path, struct policy_report *rep)
{
	struct strbuf sb = STRBUF_INIT;
	int rc = -1;
	if (strbuf_read_file(&sb, path, 1 << 20))
		goto out;
	for (char *l = sb.buf; l && *l;) {
		char *nl = strchr(l, '\n');
		if (nl)
			*nl = '\0';
		char *t1 = strchr(l, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
		if (!t2)
			goto out;
		*t1 = *t2 = '\0';
		const char *rule = NULL;
		for (const struct policy_rule *pr = policy_rules; pr->id; pr++)
			if (!strcmp(pr->id, t1 + 1))
				rule = pr->id;
		if (!rule)
			goto out;
		ALLOC_GROW(rep->items, rep->nr + 1, rep->alloc);
		rep->items[rep->nr].line = atoi(l);
		rep->items[rep->nr].rule = rule;
		rep->items[rep->nr].message = xstrdup(t2 + 1);
		rep->nr++;
		l = nl ? nl + 1 : NULL;
	}
	rc = 0;
out:
	strbuf_release(&sb);
	return rc;
}

/* Fills r from a cache entry; -1 when it is missing or damaged. */
static int read_entry(const char *dir, struct build_result *r)
{
	struct strbuf sb = STRBUF_INIT, log = STRBUF_INIT;
	char *path = xasprintf("%s/result", dir);
	int rc = -1;
	if (strbuf_read_file(&sb, path, 4096))
		goto out;
	int status, timed_out, trunc, rejected;
	double secs, check_s;
	if (sscanf(sb.buf, "status %d\ntimed_out %d\ncompile_s %lf\nlog_truncated %d\nrejected %d\n"
		   "check_s %lf", &status, &timed_out, &secs, &trunc, &rejected, &check_s) != 6)
		goto out;
	free(path);
	path = xasprintf("%s/symbols", dir);
	if (read_symbols(path, &r->symbols) || (rejected && !r->symbols.nr))
		goto out;
	free(path);
	path = xasprintf("%s/log", dir);
	if (strbuf_read_file(&log, path, 0))
		goto out;
	free(path);
	path = xasprintf("%s/kernel.so", dir);
	if (status == 0 && !rejected && !file_exists(path))
		goto out;
	r->status = status;
	r->timed_out = timed_out;
	r->compile_s = secs;
	r->log_truncated = trunc;
	r->rejected = rejected;
	r->check_s = check_s;
	r->log = strbuf_detach(&log, &r->log_len);
	r->ok = status == 0 && !rejected;
	r->so_path = r->ok ? path : NULL;
	if (!r->ok)
		free(path);
	path = NULL;
	r->dir = xstrdup(dir);
	rc = 0;
out:
	if (rc)
		policy_report_release(&r->symbols);
	free(path);
	strbuf_release(&sb);
	strbuf_release(&log);
	return rc;
}

/* The ABI header text, and the -I directory holding it (written under base when embedded). */
static int abi_header(const struct build_opts *opts, const char *base, struct strbuf *text,
		      char **include_dir, char **err)
{
	if (opts->abi_include) {
		char *p = xasprintf("%s/" ABI_HEADER, opts->abi_include);
		int rc = strbuf_read_file(text, p, 1 << 20);
		if (rc)
			*err = xasprintf("cannot read '%s': %s", p, strerror(errno));
		free(p);
		if (!rc && !(*include_dir = realpath(opts->abi_include, NULL)))
			*include_dir = xstrdup(opts->abi_include);
		return rc ? CG_ENV : 0;
	}
	const struct embedded_file *f = embedded_find("include/" ABI_HEADER);
	if (!f)
		BUG("the ABI header is not embedded");
	strbuf_add(text, f->data, f->len);
	char *inc = xasprintf("%s/include", base);
	char *dir = xasprintf("%s/cutegen", inc);
	char *path = xasprintf("%s/kernel_abi.h", dir);
	struct strbuf have = STRBUF_INIT;
	int rc = 0;
	if (strbuf_read_file(&have, path, 1 << 20) || have.len != f->len ||
	    memcmp(have.buf, f->data, f->len)) {
		if (mkdir_p(dir) || write_file_atomic(path, f->data, f->len)) {
			*err = xasprintf("cannot write '%s': %s", path, strerror(errno));
			rc = CG_IO;
		}
	}
	strbuf_release(&have);
	free(path);
	free(dir);
	if (rc)
		free(inc);
	else
		*include_dir = inc;
	return rc;
}

static char *read_small(const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	if (strbuf_read_file(&sb, path, 1 << 20))
		strbuf_reset(&sb);
	return strbuf_detach(&sb, NULL);
}

/*
 * Whether a failed compile's diagnostics point into a file: an error in the source or a
 * header is a fact about the source, worth caching; "nvcc fatal: could not open output
 * file" is a fact about this machine at this moment, and is not.
 */
static int says_something_of_source(const struct diag_list *dl)
{
	for (size_t i = 0; i < dl->nr; i++)
		if (dl->items[i].severity >= DIAG_ERROR && dl->items[i].file && dl->items[i].line > 0)
			return 1;
	return 0;
}

/* Output of objdump past this is not read: the object is refused instead. */
#define OBJDUMP_OUTPUT_CAP (64u << 20)

/* Runs a binutils program in dir, capturing stdout; 0, or CG_ENV with *err. */
static int run_tool(const char *const *argv, const char *dir, struct strbuf *out, size_t cap,
		    int *truncated, char **err)
{
	struct strbuf errs = STRBUF_INIT;
	errs.cap = 4096;
	out->cap = cap;
	struct child_process cp = CHILD_PROCESS_INIT;
	const char *env[] = { "LC_ALL=C", NULL };
	cp.argv = argv;
	cp.env = env;
	cp.dir = dir;
	cp.out = out;
	cp.err = &errs;
	cp.deadline_s = 120;
	int rc = 0;
	if (run_command(&cp)) {
		*err = xasprintf("cannot run %s: %s; install binutils (objdump and c++filt), which "
				 "the object check of every kernel needs", argv[0], cp.errmsg);
		rc = CG_ENV;
	} else if (cp.status != 0 && !cp.out_truncated) {
		*err = xasprintf("'%s %s' failed (exit %d): %.300s", argv[0], argv[1], cp.status,
				 errs.buf ? errs.buf : "");
		rc = CG_ENV;
	}
	*truncated = cp.out_truncated;
	strbuf_release(&errs);
	return rc;
}

/* Gives the C++ names the check may mention their demangled form (c++filt), best effort. */
static void demangle(const struct build_opts *opts, const char *dir, struct obj_info *o)
{
	struct strbuf in = STRBUF_INIT, out = STRBUF_INIT;
	size_t *idx = xcalloc(o->nsyms + 1, sizeof(size_t)), n = 0;
	for (size_t i = 0; i < o->nsyms && in.len < (8u << 20); i++) {
		const struct obj_symbol *s = &o->syms[i];
		if (!starts_with(s->name, "_Z") || (strcmp(s->section, "*UND*") && s->kind != 'F'))
			continue;
		strbuf_addf(&in, "%s\n", s->name);
		idx[n++] = i;
	}
	if (n) {
		const char *argv[] = { opts->cxxfilt ? opts->cxxfilt : "c++filt", NULL };
		struct child_process cp = CHILD_PROCESS_INIT;
		cp.argv = argv;
		cp.dir = dir;
		cp.in_data = in.buf;
		cp.in_len = in.len;
		out.cap = 4 * in.len + 4096;
		cp.out = &out;
		cp.deadline_s = 60;
		if (!run_command(&cp) && cp.status == 0 && !cp.out_truncated) {
			char *l = out.buf;
			for (size_t k = 0; k < n && l && *l; k++) {
				char *nl = strchr(l, '\n');
				if (!nl)
					break;
				o->syms[idx[k]].plain = xstrndup(l, (size_t)(nl - l));
				l = nl + 1;
			}
		}
	}
	free(idx);
	strbuf_release(&in);
	strbuf_release(&out);
}

/*
 * The object check of dir/kernel.o (docs/policy.md, "The object code"): fills out->symbols
 * and out->rejected; *driver says whether the link needs libcuda (the TMA encoders). 0, or
 * CG_ENV with *err when the tools cannot run.
 */
static int check_object(const struct build_opts *opts, const char *dir, const char *source,
			size_t len, struct build_result *out, int *driver, char **err)
{
	double t0 = now_s();
	struct obj_info o = OBJ_INFO_INIT;
	struct strbuf text = STRBUF_INIT;
	const char *objdump = opts->objdump ? opts->objdump : "objdump";
	const char *syms_argv[] = { objdump, "-wtr", "kernel.o", NULL };
	const char *dis_argv[] = { objdump, "-wd", "--no-show-raw-insn", "kernel.o", NULL };
	int truncated = 0;
	int rc = run_tool(syms_argv, dir, &text, OBJDUMP_OUTPUT_CAP, &truncated, err);
	if (rc)
		goto out;
	if (truncated)
		o.error = xasprintf("objdump's symbol table is larger than %u MiB",
				    OBJDUMP_OUTPUT_CAP >> 20);
	else
		policy_parse_objdump(text.buf ? text.buf : "", text.len, &o);
	strbuf_release(&text);
	if (!o.error) {
		rc = run_tool(dis_argv, dir, &text, OBJDUMP_OUTPUT_CAP, &truncated, err);
		if (rc)
			goto out;
		if (truncated)
			o.error = xasprintf("the disassembly of the host code is larger than %u MiB",
					    OBJDUMP_OUTPUT_CAP >> 20);
		else
			policy_parse_disasm(text.buf ? text.buf : "", text.len, &o);
	}
	if (policy_check_object(&o, source, len, &out->symbols)) {
		/* say it with C++ names: only now, since a clean object needs none */
		demangle(opts, dir, &o);
		policy_report_release(&out->symbols);
		policy_check_object(&o, source, len, &out->symbols);
	}
	out->rejected = out->symbols.nr > 0 || out->symbols.dropped > 0;
	*driver = 0;
	for (size_t i = 0; i < o.nsyms; i++) {
		const char *group = policy_symbol_allowed(o.syms[i].name);
		if (!strcmp(o.syms[i].section, "*UND*") && group && !strcmp(group, "tma-descriptor"))
			*driver = 1;
	}
	out->check_s = now_s() - t0;
out:
	strbuf_release(&text);
	obj_info_release(&o);
	return rc;
}

/* One build's places and tools (build_kernel's steps share them). */
struct build_job {
	char *cache_dir, *tmp_root;  /* NULL without the cache */
	char *work;                  /* the scratch (or, without the cache, the build) directory */
	char *entry;                 /* the cache entry of the key */
	char *cutlass, *abi_inc;     /* include directories */
	char **argv;                 /* nvcc's */
	struct strbuf abi;           /* the ABI header's text (part of the key) */
};
#define BUILD_JOB_INIT { NULL, NULL, NULL, NULL, NULL, NULL, NULL, STRBUF_INIT }

static void build_job_release(struct build_job *j)
{
	free(j->cache_dir);
	free(j->tmp_root);
	free(j->work);
	free(j->entry);
	free(j->cutlass);
	free(j->abi_inc);
	build_argv_free(j->argv);
	strbuf_release(&j->abi);
}

/* The target and the CUTLASS headers. */
static int job_check_tools(struct build_job *j, const struct build_opts *opts, char **err)
{
	char gencode[64];
	const char *arch = opts->arch ? opts->arch : BUILD_DEFAULT_ARCH;
	if (build_parse_arch(arch, gencode, sizeof(gencode))) {
		*err = xasprintf("arch '%s' is not a GPU architecture nvcc knows; use one of "
				 "%s (sm_90a for H100/H200)", arch, build_known_archs());
		return CG_USAGE;
	}
	if (opts->cutlass_include) {
		j->cutlass = realpath(opts->cutlass_include, NULL);
		if (!j->cutlass || !has_cute(j->cutlass)) {
			*err = xasprintf("no CuTe headers in '%s' (expected cute/tensor.hpp there)",
					 opts->cutlass_include);
			return CG_ENV;
		}
	} else if (!(j->cutlass = build_find_cutlass_include())) {
		*err = xstrdup("cannot find the CUTLASS headers; set CUTLASS_DIR to a CUTLASS "
			       "checkout (with include/cute)");
		return CG_ENV;
	}
	return CG_OK;
}

/* mkdtemp on a template, with the error message of the build. */
static int make_scratch(char *tmpl, char **err)
{
	if (mkdtemp(tmpl))
		return CG_OK;
	*err = xasprintf("cannot create a directory like '%s': %s", tmpl, strerror(errno));
	return CG_IO;
}

/* Where entries (or, without the cache, the one build) live. */
static int job_dirs(struct build_job *j, const struct build_opts *opts, char **err)
{
	if (opts->no_cache) {
		const char *t = getenv("TMPDIR");
		j->work = xasprintf("%s/cutegen-build.XXXXXX", t && *t ? t : "/tmp");
		return make_scratch(j->work, err);
	}
	j->cache_dir = opts->cache_dir ? xstrdup(opts->cache_dir) : build_default_cache_dir();
	if (!j->cache_dir) {
		*err = xstrdup("no cache directory: set XDG_CACHE_HOME or HOME, or pass --cache-dir");
		return CG_IO;
	}
	j->tmp_root = xasprintf("%s/tmp", j->cache_dir);
	if (mkdir_p(j->tmp_root)) {
		*err = xasprintf("cannot create the cache directory '%s': %s", j->tmp_root,
				 strerror(errno));
		return CG_IO;
	}
	/* absolute, since nvcc runs inside the scratch directory */
	char *abs = realpath(j->cache_dir, NULL);
	if (abs) {
		free(j->cache_dir);
		j->cache_dir = abs;
		free(j->tmp_root);
		j->tmp_root = xasprintf("%s/tmp", j->cache_dir);
	}
	return CG_OK;
}

/*
 * nvcc's command line and the cache key. The key names what is compiled, not where from: nvcc
 * by its --version, CUTLASS by its version header and the ABI header by its text (all
 * hashed), so a cache filled on one machine serves another with the same tools (the bundle
 * carried to the GPU machine).
 */
static int job_key(struct build_job *j, const struct build_opts *opts, const char *source,
		   size_t len, char key[65], char **err)
{
	int rc = abi_header(opts, j->cache_dir ? j->cache_dir : j->work, &j->abi, &j->abi_inc, err);
	if (rc)
		return rc;
	j->argv = build_argv(opts, j->cutlass, j->abi_inc, err);
	if (!j->argv)
		return CG_USAGE;
	const char *version = build_nvcc_version(j->argv[0], err);
	if (!version)
		return CG_ENV;
	char *path = xasprintf("%s/cutlass/version.h", j->cutlass);
	char *cutlass_version = read_small(path);
	size_t nargs = 0;
	while (j->argv[nargs])
		nargs++;
	const char **key_argv = xcalloc(nargs + 1, sizeof(char *));
	char *cutlass_arg = xasprintf("-I%s", j->cutlass), *abi_arg = xasprintf("-I%s", j->abi_inc);
	for (size_t i = 0; i < nargs; i++)
		key_argv[i] = i == 0 ? "nvcc" : !strcmp(j->argv[i], cutlass_arg) ? "-I<cutlass>"
			    : !strcmp(j->argv[i], abi_arg) ? "-I<cutegen abi>" : j->argv[i];
	build_cache_key(source, len, key_argv, version, cutlass_version, j->abi.buf,
			opts->no_symbol_check ? "off" : policy_object_rules_version(), key);
	free(key_argv);
	free(cutlass_arg);
	free(abi_arg);
	free(cutlass_version);
	free(path);
	return CG_OK;
}

/* The cache entry of the key: *hit when it holds the result (out filled), else a fresh
 * scratch directory to build in. */
static int job_lookup(struct build_job *j, struct build_result *out, int *hit, char **err)
{
	j->entry = xasprintf("%s/%.2s/%s", j->cache_dir, out->key, out->key);
	if (dir_exists(j->entry)) {
		if (!read_entry(j->entry, out)) {
			out->cache_hit = 1;
			diag_parse(out->log, out->log_len, &out->diags);
			*hit = 1;
			return CG_OK;
		}
		remove_tree(j->entry); /* damaged (an older format, a disk error): rebuild */
	}
	j->work = xasprintf("%s/%s.XXXXXX", j->tmp_root, out->key);
	return make_scratch(j->work, err);
}

/*
 * Builds in the scratch directory: (1) nvcc compiles the candidate alone to an object, (2) the
 * object check judges what it references before anything is linked to it, (3) only an
 * admitted object is linked into the shared object. What nvcc said is recorded there.
 */
static int job_compile(struct build_job *j, const struct build_opts *opts, const char *source,
		       size_t len, struct build_result *out, int *signaled, char **err)
{
	struct strbuf log = STRBUF_INIT;
	char **link_argv = NULL, *tmpdir_env = NULL;
	int rc = CG_IO;
	char *path = xasprintf("%s/kernel.cu", j->work);
	if (write_file_atomic(path, source, len)) {
		*err = xasprintf("cannot write '%s': %s", path, strerror(errno));
		goto out;
	}
	/* nvcc's temporaries go to the build directory, so a killed compile leaves none in /tmp */
	tmpdir_env = xasprintf("TMPDIR=%s", j->work);
	const char *env[] = { tmpdir_env, "LC_ALL=C", NULL };
	double deadline = opts->deadline_s > 0 ? opts->deadline_s : BUILD_DEFAULT_DEADLINE_S;
	log.cap = opts->log_cap ? opts->log_cap : BUILD_DEFAULT_LOG_CAP;
	struct child_process cp = CHILD_PROCESS_INIT;
	cp.argv = (const char *const *)j->argv;
	cp.env = env;
	cp.dir = j->work;
	cp.out = &log;
	cp.err = &log;
	cp.deadline_s = deadline;
	if (run_command(&cp)) {
		*err = xasprintf("cannot run nvcc: %s", cp.errmsg);
		rc = CG_ENV;
		goto out;
	}
	out->status = cp.status;
	out->timed_out = cp.timed_out;
	out->log_truncated = cp.out_truncated;
	out->compile_s = cp.wall_s;
	*signaled = cp.signaled;
	free(path);
	path = xasprintf("%s/kernel.o", j->work);
	int compiled = cp.status == 0 && !cp.timed_out && file_exists(path);

	int driver = 0;
	if (compiled) {
		rc = check_object(opts, j->work, source, len, out, &driver, err);
		if (rc)
			goto out;
		if (opts->no_symbol_check) {
			/* read all the same: whether the link needs libcuda */
			policy_report_release(&out->symbols);
			out->rejected = 0;
		}
	}
	if (compiled && !out->rejected) {
		link_argv = build_link_argv(opts, driver, err);
		if (!link_argv) {
			rc = CG_USAGE;
			goto out;
		}
		struct child_process lp = CHILD_PROCESS_INIT;
		lp.argv = (const char *const *)link_argv;
		lp.env = env;
		lp.dir = j->work;
		lp.out = &log;
		lp.err = &log;
		lp.deadline_s = deadline - cp.wall_s > 30 ? deadline - cp.wall_s : 30;
		if (run_command(&lp)) {
			*err = xasprintf("cannot run nvcc: %s", lp.errmsg);
			rc = CG_ENV;
			goto out;
		}
		out->status = lp.status;
		out->timed_out = lp.timed_out;
		out->log_truncated |= lp.out_truncated;
		out->compile_s += lp.wall_s;
		*signaled |= lp.signaled;
	}
	unlink(path); /* the .so is what is kept */
	free(path);
	path = xasprintf("%s/kernel.so", j->work);
	out->ok = compiled && !out->rejected && out->status == 0 && !out->timed_out &&
		  file_exists(path);
	if (!out->ok && !out->rejected && out->status == 0)
		out->status = out->timed_out ? 124 : 1; /* "exit 0 but no .so" is a failure too */
	free(path);
	path = xasprintf("%s/log", j->work);
	int wrc = write_file_atomic(path, log.buf, log.len);
	if (!wrc)
		wrc = write_result_file(j->work, out);
	if (wrc) {
		*err = xasprintf("cannot write into '%s': %s", j->work, strerror(errno));
		rc = CG_IO;
		goto out;
	}
	out->log = strbuf_detach(&log, &out->log_len);
	diag_parse(out->log, out->log_len, &out->diags);
	rc = CG_OK;
out:
	free(path);
	free(tmpdir_env);
	build_argv_free(link_argv);
	strbuf_release(&log);
	return rc;
}

/* Keeps the build: as the cache entry (when it says something of the source), or in place
 * without the cache; a compile cut short keeps nothing. */
static int job_keep(struct build_job *j, struct build_result *out, int signaled, char **err)
{
	int cacheable = j->cache_dir && !out->timed_out && !signaled &&
			(out->ok || out->rejected || says_something_of_source(&out->diags));
	if (!j->cache_dir) {
		out->dir = xstrdup(j->work);
	} else if (cacheable) {
		char *parent = xasprintf("%s/%.2s", j->cache_dir, out->key);
		int mk = mkdir_p(parent);
		free(parent);
		if (mk || rename(j->work, j->entry)) {
			/* another process installed the same entry first: use theirs */
			remove_tree(j->work);
			if (!dir_exists(j->entry)) {
				*err = xasprintf("cannot install the cache entry '%s': %s", j->entry,
						 strerror(errno));
				return CG_IO;
			}
		}
		out->dir = xstrdup(j->entry);
	} else {
		/* a compile cut short says nothing about the source: keep nothing */
		remove_tree(j->work);
		out->ok = 0;
	}
	if (out->ok)
		out->so_path = xasprintf("%s/kernel.so", out->dir);
	free(j->work);
	j->work = NULL;
	return CG_OK;
}

int build_kernel(const struct build_opts *opts, const char *source, size_t len,
		 struct build_result *out, char **err)
{
	struct build_job j = BUILD_JOB_INIT;
	int rc, signaled = 0, hit = 0;
	memset(out, 0, sizeof(*out));
	*err = NULL;
	if ((rc = job_check_tools(&j, opts, err)) || (rc = job_dirs(&j, opts, err)) ||
	    (rc = job_key(&j, opts, source, len, out->key, err)))
		goto out;
	if (j.cache_dir && ((rc = job_lookup(&j, out, &hit, err)) || hit))
		goto out;
	rc = job_compile(&j, opts, source, len, out, &signaled, err);
	if (!rc)
		rc = job_keep(&j, out, signaled, err);
out:
	if (rc) {
		if (j.work)
			remove_tree(j.work);
		build_result_release(out);
	} else if (!out->log) {
		out->log = xstrdup("");
	}
	build_job_release(&j);
	return rc;
}

int build_checked(const struct build_opts *opts, const char *source, size_t len,
		  struct policy_report *pol, struct build_result *out, char **err)
{
	if (policy_check(source, len, pol))
		return CG_REJECTED;
	int rc = build_kernel(opts, source, len, out, err);
	if (rc || !out->rejected)
		return rc;
	/* the object check decides: its violations become the policy's */
	for (size_t i = 0; i < out->symbols.nr; i++) {
		ALLOC_GROW(pol->items, pol->nr + 1, pol->alloc);
		pol->items[pol->nr] = out->symbols.items[i];
		pol->items[pol->nr].message = xstrdup(out->symbols.items[i].message);
		pol->nr++;
	}
	pol->dropped += out->symbols.dropped;
	return CG_REJECTED;
}
