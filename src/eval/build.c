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

int build_kernel(const struct build_opts *opts, const char *source, size_t len,
		 struct build_result *out, char **err)
{
	char *cache_dir = NULL, *cutlass = NULL, *abi_inc = NULL, *work = NULL, *entry = NULL;
	char *cutlass_version = NULL, *tmp_root = NULL, *path = NULL;
	char **argv = NULL, **link_argv = NULL;
	struct strbuf abi = STRBUF_INIT, log = STRBUF_INIT;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	*err = NULL;

	char gencode[64];
	const char *arch = opts->arch ? opts->arch : BUILD_DEFAULT_ARCH;
	if (build_parse_arch(arch, gencode, sizeof(gencode))) {
		*err = xasprintf("arch '%s' is not a GPU architecture nvcc knows; use one of "
				 "%s (sm_90a for H100/H200)", arch, build_known_archs());
		rc = CG_USAGE;
		goto out;
	}

	if (opts->cutlass_include) {
		cutlass = realpath(opts->cutlass_include, NULL);
		if (!cutlass || !has_cute(cutlass)) {
			*err = xasprintf("no CuTe headers in '%s' (expected cute/tensor.hpp there)",
					 opts->cutlass_include);
			rc = CG_ENV;
			goto out;
		}
	} else if (!(cutlass = build_find_cutlass_include())) {
		*err = xstrdup("cannot find the CUTLASS headers; set CUTLASS_DIR to a CUTLASS "
			       "checkout (with include/cute)");
		rc = CG_ENV;
		goto out;
	}

	/* where entries (or, without the cache, the one build) live */
	if (opts->no_cache) {
		const char *t = getenv("TMPDIR");
		work = xasprintf("%s/cutegen-build.XXXXXX", t && *t ? t : "/tmp");
		if (!mkdtemp(work)) {
			*err = xasprintf("cannot create a directory like '%s': %s", work,
					 strerror(errno));
			rc = CG_IO;
			goto out;
		}
	} else {
		cache_dir = opts->cache_dir ? xstrdup(opts->cache_dir) : build_default_cache_dir();
		if (!cache_dir) {
			*err = xstrdup("no cache directory: set XDG_CACHE_HOME or HOME, or pass "
				       "--cache-dir");
			rc = CG_IO;
			goto out;
		}
		tmp_root = xasprintf("%s/tmp", cache_dir);
		if (mkdir_p(tmp_root)) {
			*err = xasprintf("cannot create the cache directory '%s': %s", tmp_root,
					 strerror(errno));
			rc = CG_IO;
			goto out;
		}
		/* absolute, since nvcc runs inside the scratch directory */
		char *abs = realpath(cache_dir, NULL);
		if (abs) {
			free(cache_dir);
			cache_dir = abs;
			free(tmp_root);
			tmp_root = xasprintf("%s/tmp", cache_dir);
		}
	}

	rc = abi_header(opts, cache_dir ? cache_dir : work, &abi, &abi_inc, err);
	if (rc)
		goto out;

	argv = build_argv(opts, cutlass, abi_inc, err);
	if (!argv) {
		rc = CG_USAGE;
		goto out;
	}
	const char *version = build_nvcc_version(argv[0], err);
	if (!version) {
		rc = CG_ENV;
		goto out;
	}
	path = xasprintf("%s/cutlass/version.h", cutlass);
	cutlass_version = read_small(path);
	/* The key names what is compiled, not where from: nvcc by its --version, CUTLASS by its
	 * version header and the ABI header by its text (all hashed), so a cache filled on one
	 * machine serves another with the same tools (the bundle carried to the GPU machine). */
	size_t nargs = 0;
	while (argv[nargs])
		nargs++;
	const char **key_argv = xcalloc(nargs + 1, sizeof(char *));
	char *cutlass_arg = xasprintf("-I%s", cutlass), *abi_arg = xasprintf("-I%s", abi_inc);
	for (size_t i = 0; i < nargs; i++)
		key_argv[i] = i == 0 ? "nvcc" : !strcmp(argv[i], cutlass_arg) ? "-I<cutlass>"
			    : !strcmp(argv[i], abi_arg) ? "-I<cutegen abi>" : argv[i];
	build_cache_key(source, len, key_argv, version, cutlass_version, abi.buf,
			opts->no_symbol_check ? "off" : policy_object_rules_version(), out->key);
	free(key_argv);
	free(cutlass_arg);
	free(abi_arg);

	if (cache_dir) {
		entry = xasprintf("%s/%.2s/%s", cache_dir, out->key, out->key);
		if (dir_exists(entry)) {
			if (!read_entry(entry, out)) {
				out->cache_hit = 1;
				diag_parse(out->log, out->log_len, &out->diags);
				goto out;
			}
			remove_tree(entry); /* damaged (an older format, a disk error): rebuild */
		}
		work = xasprintf("%s/%s.XXXXXX", tmp_root, out->key);
		if (!mkdtemp(work)) {
			*err = xasprintf("cannot create a directory like '%s': %s", work,
					 strerror(errno));
			rc = CG_IO;
			goto out;
		}
	}

	free(path);
	path = xasprintf("%s/kernel.cu", work);
	if (write_file_atomic(path, source, len)) {
		*err = xasprintf("cannot write '%s': %s", path, strerror(errno));
		rc = CG_IO;
		goto out;
	}

	/* nvcc's temporaries go to the build directory, so a killed compile leaves none in /tmp */
	char *tmpdir_env = xasprintf("TMPDIR=%s", work);
	const char *env[] = { tmpdir_env, "LC_ALL=C", NULL };
	double deadline = opts->deadline_s > 0 ? opts->deadline_s : BUILD_DEFAULT_DEADLINE_S;
	log.cap = opts->log_cap ? opts->log_cap : BUILD_DEFAULT_LOG_CAP;
	/* 1. compile the candidate alone to an object */
	struct child_process cp = CHILD_PROCESS_INIT;
	cp.argv = (const char *const *)argv;
	cp.env = env;
	cp.dir = work;
	cp.out = &log;
	cp.err = &log;
	cp.deadline_s = deadline;
	int run = run_command(&cp);
	if (run) {
		*err = xasprintf("cannot run nvcc: %s", cp.errmsg);
		rc = CG_ENV;
		free(tmpdir_env);
		goto out;
	}
	out->status = cp.status;
	out->timed_out = cp.timed_out;
	out->log_truncated = cp.out_truncated;
	out->compile_s = cp.wall_s;
	int signaled = cp.signaled;
	free(path);
	path = xasprintf("%s/kernel.o", work);
	int compiled = cp.status == 0 && !cp.timed_out && file_exists(path);

	/* 2. judge what it references, before anything is linked to it */
	int driver = 0;
	if (compiled) {
		rc = check_object(opts, work, source, len, out, &driver, err);
		if (rc) {
			free(tmpdir_env);
			goto out;
		}
		if (opts->no_symbol_check) {
			/* read all the same: whether the link needs libcuda */
			policy_report_release(&out->symbols);
			out->rejected = 0;
		}
	}

	/* 3. only an admitted object becomes a shared object */
	if (compiled && !out->rejected) {
		link_argv = build_link_argv(opts, driver, err);
		if (!link_argv) {
			rc = CG_USAGE;
			free(tmpdir_env);
			goto out;
		}
		struct child_process lp = CHILD_PROCESS_INIT;
		lp.argv = (const char *const *)link_argv;
		lp.env = env;
		lp.dir = work;
		lp.out = &log;
		lp.err = &log;
		lp.deadline_s = deadline - cp.wall_s > 30 ? deadline - cp.wall_s : 30;
		run = run_command(&lp);
		if (run) {
			*err = xasprintf("cannot run nvcc: %s", lp.errmsg);
			rc = CG_ENV;
			free(tmpdir_env);
			goto out;
		}
		out->status = lp.status;
		out->timed_out = lp.timed_out;
		out->log_truncated |= lp.out_truncated;
		out->compile_s += lp.wall_s;
		signaled |= lp.signaled;
	}
	free(tmpdir_env);
	unlink(path); /* the .so is what is kept */
	free(path);
	path = xasprintf("%s/kernel.so", work);
	out->ok = compiled && !out->rejected && out->status == 0 && !out->timed_out &&
		  file_exists(path);
	if (!out->ok && !out->rejected && out->status == 0)
		out->status = out->timed_out ? 124 : 1; /* "exit 0 but no .so" is a failure too */

	char *log_path = xasprintf("%s/log", work);
	int wrc = write_file_atomic(log_path, log.buf, log.len);
	free(log_path);
	if (!wrc)
		wrc = write_result_file(work, out);
	if (wrc) {
		*err = xasprintf("cannot write into '%s': %s", work, strerror(errno));
		rc = CG_IO;
		goto out;
	}
	out->log = strbuf_detach(&log, &out->log_len);
	diag_parse(out->log, out->log_len, &out->diags);

	int cacheable = cache_dir && !out->timed_out && !signaled &&
			(out->ok || out->rejected || says_something_of_source(&out->diags));
	if (!cache_dir) {
		out->dir = xstrdup(work);
	} else if (cacheable) {
		char *parent = xasprintf("%s/%.2s", cache_dir, out->key);
		int mk = mkdir_p(parent);
		free(parent);
		if (mk || rename(work, entry)) {
			/* another process installed the same entry first: use theirs */
			remove_tree(work);
			if (!dir_exists(entry)) {
				*err = xasprintf("cannot install the cache entry '%s': %s", entry,
						 strerror(errno));
				rc = CG_IO;
				goto out;
			}
		}
		out->dir = xstrdup(entry);
	} else {
		/* a compile cut short says nothing about the source: keep nothing */
		remove_tree(work);
		out->ok = 0;
	}
	if (out->ok) {
		out->so_path = xasprintf("%s/kernel.so", out->dir);
	}
	free(work);
	work = NULL;

out:
	if (rc) {
		if (work)
			remove_tree(work);
		build_result_release(out);
	} else if (!out->log) {
		out->log = xstrdup("");
	}
	free(work);
	build_argv_free(argv);
	build_argv_free(link_argv);
	free(cache_dir);
	free(cutlass);
	free(abi_inc);
	free(entry);
	free(cutlass_version);
	free(tmp_root);
	free(path);
	strbuf_release(&abi);
	strbuf_release(&log);
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
