/*
 * Build: compiles one candidate kernel (a CUDA C++17 source text) into a shared object with
 * nvcc, under a deadline, with its output captured (capped) and parsed into diagnostics,
 * judges the compiled object code before linking it (the object check of policy.h), and
 * caches the outcome by content: the same source, flags, compiler and headers give the same
 * .so (or the same failure, or the same rejection, and log) at once, without running nvcc.
 * Not for: the source scan (policy_check, before this), loading or running the .so (the
 * runner), or judging results (the evaluator).
 *
 * Three steps, inside a fresh directory holding the source as kernel.cu (so diagnostics name
 * "kernel.cu" whatever the caller called the file):
 *   1. nvcc -std=c++17 -O3 -Xcompiler -fPIC -gencode arch=compute_XY[a],code=sm_XY[a]
 *           -I<CUTLASS include> -I<ABI include> --expt-relaxed-constexpr -DNDEBUG
 *           -DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL=1 -lineinfo [extra flags]
 *           -c -o kernel.o kernel.cu
 *   2. the object check: `objdump -wtr kernel.o` and `objdump -wd --no-show-raw-insn
 *      kernel.o` (c++filt for messages) judged by policy_check_object(); a violation ends
 *      the build here with r.rejected and r.symbols;
 *   3. nvcc -std=c++17 -O3 -shared -Xcompiler -fPIC -gencode ... [extra flags]
 *           -o kernel.so kernel.o [-lcuda when it calls the TMA encoders]
 * Together they do what one `nvcc -shared -o kernel.so kernel.cu` does; the check adds two
 * objdump runs (tens of milliseconds).
 *
 * The cache: DIR/KEY[0..2]/KEY/ holds kernel.cu, kernel.so (when it compiled and was
 * admitted), log, result and symbols (the object check's violations, so a hit gives the same
 * verdict). KEY is the sha256 of the source, the full argument list, `nvcc --version`, the
 * CUTLASS version header, the ABI header and the object check's rules. An entry is built in
 * DIR/tmp/ and renamed into place, so processes sharing DIR never see half an entry; when two
 * race, the first rename wins and both use its entry. Compiles that ran past the deadline or died from a signal are not
 * cached (they say nothing about the source).
 *
 * Usage:
 *   1. struct build_opts o = BUILD_OPTS_INIT; set what differs from the defaults;
 *   2. struct build_result r = BUILD_RESULT_INIT;
 *      rc = build_kernel(&o, src, len, &r, &err);
 *      rc != 0: nothing was judged (err says why; the caller frees it), a code of
 *      util/err.h: CG_USAGE for a bad option (arch), CG_ENV when nvcc or objdump cannot be
 *      run or CUTLASS is missing, CG_IO when the cache or a scratch directory cannot be
 *      written;
 *      rc == 0: r.ok says whether the source compiled and its object was admitted (then
 *      r.so_path is the .so); r.rejected with r.symbols when the object check refused it;
 *      r.diags has the parsed log;
 *   3. build_result_release(&r).
 */
#ifndef CUTEGEN_BUILD_H
#define CUTEGEN_BUILD_H

#include <stddef.h>

#include "eval/nvcc_diag.h"
#include "util/err.h"

#define BUILD_DEFAULT_ARCH "sm_90a"
#define BUILD_DEFAULT_DEADLINE_S 300.0
#define BUILD_DEFAULT_LOG_CAP (1u << 20)

struct build_opts {
	const char *nvcc;            /* program; NULL = "nvcc" from PATH, else
				      * /usr/local/cuda/bin/nvcc */
	const char *arch;            /* "sm_90a" (default), "sm_80", "sm_100a": sm_ + digits + [a|f] */
	const char *cutlass_include; /* directory holding cute/ and cutlass/; NULL =
				      * build_find_cutlass_include() */
	const char *abi_include;     /* directory holding cutegen/kernel_abi.h; NULL = the copy
				      * embedded in cutegen, written into the cache directory */
	const char *cache_dir;       /* NULL = build_default_cache_dir() */
	int no_cache;                /* neither read nor write the cache: compile in a fresh
				      * directory under $TMPDIR, left for the caller */
	double deadline_s;           /* 0 = BUILD_DEFAULT_DEADLINE_S */
	size_t log_cap;              /* bytes of compiler output kept; 0 = BUILD_DEFAULT_LOG_CAP */
	const char *const *extra_flags; /* NULL-terminated, appended before -o; may be NULL */
	const char *objdump;         /* NULL = "objdump" from PATH */
	const char *cxxfilt;         /* NULL = "c++filt" from PATH */
	int no_symbol_check;         /* link whatever the object check finds (cutegen build
				      * --no-policy); objdump still says whether -lcuda is needed */
};

#define BUILD_OPTS_INIT { 0 }

#include "eval/policy.h"

struct build_result {
	int ok;              /* nvcc exited 0, the object was admitted and so_path exists */
	int rejected;        /* the object check refused the object: symbols says why; no .so */
	struct policy_report symbols; /* the object check's violations */
	double check_s;      /* the object check's wall time */
	char *so_path;       /* the shared object (in the cache entry); NULL unless ok */
	char *dir;           /* the entry's directory (with kernel.cu, log, result) */
	int cache_hit;       /* came from the cache: nvcc did not run */
	double compile_s;    /* nvcc's wall time, compile and link (on a hit: that of the build
			      * that made it) */
	int status;          /* nvcc's exit status (128+signal when killed) */
	int timed_out;       /* killed at the deadline */
	int log_truncated;   /* output past log_cap was dropped */
	char *log;           /* nvcc's stdout and stderr, merged; never NULL after a build */
	size_t log_len;
	struct diag_list diags;
	char key[65];        /* the cache key, hex */
};

#define BUILD_RESULT_INIT { 0 }

/* Compiles (or finds in the cache) one source; see the usage above. */
int build_kernel(const struct build_opts *opts, const char *source, size_t len,
		 struct build_result *out, char **err);

void build_result_release(struct build_result *r);

/*
 * The argument list of the compile (step 1; argv[0] = the nvcc program), NULL-terminated; the
 * caller frees it with build_argv_free(). Returns NULL with *err set when the arch is invalid.
 */
char **build_argv(const struct build_opts *opts, const char *cutlass_include,
		  const char *abi_include, char **err);
/* The same for the link (step 3); driver adds -lcuda. */
char **build_link_argv(const struct build_opts *opts, int driver, char **err);
void build_argv_free(char **argv);

/*
 * "sm_90a" -> 0, filling gencode with "arch=compute_90a,code=sm_90a"; -1 when it is not of the
 * form sm_XY[a|f] or names no architecture NVIDIA has defined (sm_999, sm_80a).
 */
int build_parse_arch(const char *arch, char *gencode, size_t size);

/* The architectures build_parse_arch accepts, as a list for messages; static string. */
const char *build_known_archs(void);

/*
 * The cache key for a source and argv, given the compiler's version text, the header
 * contents it depends on and the object check's rules (policy_object_rules_version(), or
 * "off"). Pure: tests call it directly.
 */
void build_cache_key(const char *source, size_t len, const char *const *argv,
		     const char *nvcc_version, const char *cutlass_version,
		     const char *abi_header, const char *check_rules, char key[65]);

/* ${XDG_CACHE_HOME:-$HOME/.cache}/cutegen/build, heap string; NULL when neither is set. */
char *build_default_cache_dir(void);

/*
 * Where CUTLASS's include/ is: $CUTLASS_DIR/include, else third_party/cutlass/include next to
 * the cutegen binary's parent (the source tree), else under the current directory. Heap
 * string; NULL when none holds cute/tensor.hpp.
 */
char *build_find_cutlass_include(void);

/*
 * `nvcc --version` of the given program, run once per process and program (cached); static
 * string, NULL when the program cannot be run (then *err says why, caller frees).
 */
const char *build_nvcc_version(const char *nvcc, char **err);

struct policy_report;

/*
 * What eval, profile and the agent do with a candidate: the policy check, and only when it
 * passes, build_kernel(). Returns CG_REJECTED when the policy rejected the source (pol
 * says why; nvcc did not run) or the object check rejected its object (pol has the object's
 * violations too, and out->rejected is set), 0 when the build was judged (r->ok says whether
 * it compiled and was admitted), or another code of util/err.h with *err, as build_kernel().
 */
int build_checked(const struct build_opts *opts, const char *source, size_t len,
		  struct policy_report *pol, struct build_result *out, char **err);

#endif
