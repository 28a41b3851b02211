/*
 * The static policy check of a candidate's source; see policy.h and docs/policy.md.
 *
 * Three steps:
 *   1. clean: join line continuations, blank comments, and mark the insides of string and
 *      character literals (raw strings included), keeping for every character the line of the
 *      original text it came from;
 *   2. tokenize what is left into identifiers and the punctuation the rules need;
 *   3. walk the tokens: preprocessor directives (#include against the allowlist), names from
 *      the tables below (each with the condition under which it counts), and the file-wide
 *      requirements (cutegen_launch defined, the ABI version declared).
 * Macro bodies are code like any other, so "#define S cudaDeviceSynchronize" is caught at the
 * #define; token pasting, which could build a name the tables would not see, is refused.
 */
#include "eval/policy.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const struct policy_rule policy_rules[] = {
	{ "no-vendor-libs", "no cuBLAS, cuBLASLt, cuDNN, cuFFT, cuSPARSE, cuSOLVER or cuTENSOR" },
	{ "no-prebuilt-gemm", "no prebuilt CUTLASS GEMM/conv kernels (device, kernel, collective)" },
	{ "no-streams", "no creating streams or events: launch on the stream you are given" },
	{ "no-sync", "no synchronizing: no device/stream/event syncs, blocking copies, host callbacks" },
	{ "no-device-control", "no changing the device: cudaSetDevice, cudaDeviceReset, limits, IPC" },
	{ "no-alloc", "no allocating memory per call: use the workspace the runner provides" },
	{ "no-os", "no files, environment, processes, threads, network or dynamic loading" },
	{ "include-allowlist", "#include only CuTe, CUTLASS, the CUDA runtime, DLPack and a few std headers" },
	{ "no-obfuscation", "no token pasting (##), digraph directives or escaped identifiers" },
	{ "entry-point", "cutegen_launch must be defined" },
	{ "abi-version", "the ABI version must be declared with CUTEGEN_DECLARE_ABI()" },
	{ "too-large", "the source must be smaller than 4 MiB" },
	{ NULL, NULL },
};

/* ---- step 1: clean ---- */

struct clean {
	char *text;   /* the cleaned characters */
	int *line;    /* line of each character in the original */
	char *lit;    /* 1 where the character is inside a string or character literal */
	size_t n;
};

static void put(struct clean *c, char ch, int line, int lit)
{
	c->text[c->n] = ch;
	c->line[c->n] = line;
	c->lit[c->n] = (char)lit;
	c->n++;
}

/*
 * Reads the source through line continuations: next() returns the next character and its
 * line, or -1 at the end.
 */
struct reader {
	const char *s;
	size_t len, pos;
	int line;
};

static int peek_at(struct reader *r, size_t *pos, int *line)
{
	for (;;) {
		if (*pos >= r->len)
			return -1;
		char ch = r->s[*pos];
		if (ch == '\\') {
			size_t k = *pos + 1;
			if (k < r->len && r->s[k] == '\r')
				k++;
			if (k < r->len && r->s[k] == '\n') {
				*pos = k + 1;
				(*line)++;
				continue;
			}
		}
		return (unsigned char)ch;
	}
}

static int next(struct reader *r, int *line)
{
	int ch = peek_at(r, &r->pos, &r->line);
	if (ch < 0)
		return -1;
	*line = r->line;
	r->pos++;
	if (ch == '\n')
		r->line++;
	return ch;
}

static int peek(struct reader *r)
{
	size_t pos = r->pos;
	int line = r->line;
	return peek_at(r, &pos, &line);
}

static int is_ident(int ch)
{
	return ch >= 0 && (isalnum(ch) || ch == '_');
}

static void clean_source(const char *src, size_t len, struct clean *c)
{
	c->text = xmalloc(len + 1);
	c->line = xmalloc((len + 1) * sizeof(int));
	c->lit = xmalloc(len + 1);
	c->n = 0;
	struct reader r = { src, len, 0, 1 };
	int prev = ' ', num_run = 0, line, ch;
	while ((ch = next(&r, &line)) >= 0) {
		if (ch == '/' && peek(&r) == '/') {
			while ((ch = peek(&r)) >= 0 && ch != '\n')
				next(&r, &line);
			put(c, ' ', line, 0);
			prev = ' ';
			continue;
		}
		if (ch == '/' && peek(&r) == '*') {
			next(&r, &line);
			put(c, ' ', line, 0);
			while ((ch = next(&r, &line)) >= 0) {
				if (ch == '*' && peek(&r) == '/') {
					next(&r, &line);
					break;
				}
				if (ch == '\n')
					put(c, '\n', line, 0);
			}
			prev = ' ';
			continue;
		}
		if (ch == '"' && prev == 'R' && c->n >= 1 &&
		    (c->n < 2 || !is_ident((unsigned char)c->text[c->n - 2]) ||
		     strchr("uUL8", c->text[c->n - 2]))) {
			/* raw string R"delim( ... )delim" */
			char delim[20];
			size_t dn = 0;
			put(c, '"', line, 0);
			while ((ch = peek(&r)) >= 0 && ch != '(' && dn < 16) {
				delim[dn++] = (char)ch;
				next(&r, &line);
				put(c, (char)ch, line, 1);
			}
			int body_line = line;
			if (next(&r, &body_line) >= 0)
				put(c, '(', body_line, 1);
			/* the body ends at )delim" ; continuations are not joined inside it, but
			 * next() does: good enough for blanking */
			size_t match = 0;
			while ((ch = next(&r, &line)) >= 0) {
				put(c, ch == '\n' ? '\n' : (char)ch, line, ch != '\n');
				if (match == 0 && ch == ')')
					match = 1;
				else if (match >= 1 && match <= dn && ch == delim[match - 1])
					match++;
				else if (match == dn + 1 && ch == '"')
					break;
				else
					match = ch == ')' ? 1 : 0;
			}
			c->lit[c->n - 1] = 0;
			prev = '"';
			num_run = 0;
			continue;
		}
		if (ch == '\'' && num_run && is_ident(peek(&r))) {
			/* digit separator: 1'000'000 */
			put(c, '\'', line, 0);
			continue;
		}
		if (ch == '"' || ch == '\'') {
			int quote = ch;
			put(c, (char)ch, line, 0);
			while ((ch = next(&r, &line)) >= 0) {
				if (ch == '\\') {
					put(c, ' ', line, 1);
					int esc = next(&r, &line);
					if (esc >= 0)
						put(c, esc == '\n' ? '\n' : ' ', line, esc != '\n');
					continue;
				}
				if (ch == quote || ch == '\n') {
					/* an unterminated literal ends at the line's end */
					put(c, (char)ch, line, 0);
					break;
				}
				put(c, (char)ch, line, 1);
			}
			prev = quote;
			num_run = 0;
			continue;
		}
		if (is_ident(ch)) {
			if (!is_ident(prev) && prev != '\'' && prev != '.')
				num_run = isdigit(ch) != 0;
		} else if (ch != '.') {
			num_run = 0;
		}
		put(c, ch ? (char)ch : ' ', line, 0);
		prev = ch;
	}
	c->text[c->n] = '\0';
	c->line[c->n] = r.line;
	c->lit[c->n] = 0;
}

/* ---- step 2: tokens ---- */

enum tok_kind { T_IDENT, T_NUMBER, T_PUNCT };

struct tok {
	enum tok_kind kind;
	const char *p;
	size_t n;
	int line;
	size_t off;     /* offset in the cleaned text */
	int bol;        /* first token of its line */
};

struct toks {
	struct tok *v;
	size_t nr, alloc;
};

static void tokenize(const struct clean *c, struct toks *t)
{
	int bol = 1;
	for (size_t i = 0; i < c->n;) {
		char ch = c->text[i];
		if (c->lit[i]) {
			i++;
			continue;
		}
		if (ch == '\n') {
			bol = 1;
			i++;
			continue;
		}
		if (isspace((unsigned char)ch)) {
			i++;
			continue;
		}
		struct tok k = { T_PUNCT, c->text + i, 1, c->line[i], i, bol };
		bol = 0;
		if (isalpha((unsigned char)ch) || ch == '_' || (unsigned char)ch >= 0x80) {
			size_t j = i;
			while (j < c->n && !c->lit[j] &&
			       (is_ident((unsigned char)c->text[j]) || (unsigned char)c->text[j] >= 0x80))
				j++;
			k.kind = T_IDENT;
			k.n = j - i;
		} else if (isdigit((unsigned char)ch)) {
			size_t j = i;
			while (j < c->n && !c->lit[j] &&
			       (is_ident((unsigned char)c->text[j]) || c->text[j] == '.' ||
				c->text[j] == '\''))
				j++;
			k.kind = T_NUMBER;
			k.n = j - i;
		} else {
			static const char *two[] = { "::", "->", "##", "%:", "<:", ":>", "<%", "%>" };
			for (size_t w = 0; w < ARRAY_SIZE(two); w++)
				if (i + 1 < c->n && ch == two[w][0] && c->text[i + 1] == two[w][1] &&
				    !c->lit[i + 1]) {
					k.n = 2;
					break;
				}
		}
		ALLOC_GROW(t->v, t->nr + 1, t->alloc);
		t->v[t->nr++] = k;
		i += k.n;
	}
}

static int tok_is(const struct toks *t, size_t i, const char *s)
{
	return i < t->nr && t->v[i].n == strlen(s) && !memcmp(t->v[i].p, s, t->v[i].n);
}

/* ---- step 3: rules ---- */

static void add(struct policy_report *rep, int line, const char *rule, char *message)
{
	for (size_t i = 0; i < rep->nr; i++)
		if (rep->items[i].line == line && !strcmp(rep->items[i].message, message)) {
			free(message);
			return;
		}
	if (rep->nr >= POLICY_MAX_VIOLATIONS) {
		rep->dropped++;
		free(message);
		return;
	}
	ALLOC_GROW(rep->items, rep->nr + 1, rep->alloc);
	rep->items[rep->nr].line = line;
	rep->items[rep->nr].rule = rule;
	rep->items[rep->nr].message = message;
	rep->nr++;
}

/* How a name in the tables counts. */
enum match {
	M_ANY,    /* the identifier anywhere (distinctive names: cudaMalloc) */
	M_PREFIX, /* any identifier starting with it (cudaMallocAsync, cudaEventCreateWithFlags) */
	M_IPREFIX,/* the same, ignoring case (CUBLAS_OP_N, cublasLtMatmul) */
	M_CALL,   /* a call of a free function (libc names: open, free): NAME( not after . -> or
		   * a qualifier other than std:: and :: */
	M_STD,    /* std::NAME */
};

struct name_rule {
	const char *name;
	enum match match;
	const char *rule;
	const char *why;
};

#define WHY_SYNC "the runner synchronizes; launch on the given stream"
#define WHY_BLOCKING "it blocks the host; use the Async form on the given stream"
#define WHY_STREAM "launch on the stream cutegen_launch is given; the runner times with its own events"
#define WHY_DEVICE "the runner owns the device and its settings"
#define WHY_ALLOC "memory comes from the runner: declare cutegen_workspace_bytes() and use the workspace argument"
#define WHY_OS "a kernel may not touch files, the environment, processes, threads or the network"
#define WHY_VENDOR "the point is to write the kernel; vendor libraries are the baseline it is compared with"
#define WHY_GEMM "prebuilt CUTLASS GEMM kernels are not allowed; build the kernel from CuTe atoms"

static const struct name_rule names[] = {
	{ "cublas", M_IPREFIX, "no-vendor-libs", WHY_VENDOR },
	{ "cudnn", M_IPREFIX, "no-vendor-libs", WHY_VENDOR },
	{ "cufft", M_IPREFIX, "no-vendor-libs", WHY_VENDOR },
	{ "cusparse", M_IPREFIX, "no-vendor-libs", WHY_VENDOR },
	{ "cusolver", M_IPREFIX, "no-vendor-libs", WHY_VENDOR },
	{ "cutensor", M_PREFIX, "no-vendor-libs", WHY_VENDOR },

	{ "GemmUniversalAdapter", M_ANY, "no-prebuilt-gemm", WHY_GEMM },
	{ "GemmUniversal", M_ANY, "no-prebuilt-gemm", WHY_GEMM },
	{ "GemmUniversalBase", M_ANY, "no-prebuilt-gemm", WHY_GEMM },
	{ "CollectiveBuilder", M_ANY, "no-prebuilt-gemm", WHY_GEMM },
	{ "DefaultGemm", M_PREFIX, "no-prebuilt-gemm", WHY_GEMM },

	{ "cudaStreamCreate", M_PREFIX, "no-streams", WHY_STREAM },
	{ "cudaEventCreate", M_PREFIX, "no-streams", WHY_STREAM },
	{ "cuStreamCreate", M_PREFIX, "no-streams", WHY_STREAM },
	{ "cuEventCreate", M_PREFIX, "no-streams", WHY_STREAM },
	{ "cudaGraphCreate", M_PREFIX, "no-streams", WHY_STREAM },
	{ "cudaStreamBeginCapture", M_PREFIX, "no-streams", WHY_STREAM },

	{ "cudaDeviceSynchronize", M_ANY, "no-sync", WHY_SYNC },
	{ "cudaStreamSynchronize", M_ANY, "no-sync", WHY_SYNC },
	{ "cudaEventSynchronize", M_ANY, "no-sync", WHY_SYNC },
	{ "cudaThreadSynchronize", M_ANY, "no-sync", WHY_SYNC },
	{ "cudaStreamQuery", M_ANY, "no-sync", WHY_SYNC },
	{ "cudaEventQuery", M_ANY, "no-sync", WHY_SYNC },
	{ "cuCtxSynchronize", M_ANY, "no-sync", WHY_SYNC },
	{ "cuStreamSynchronize", M_ANY, "no-sync", WHY_SYNC },
	{ "cudaMemcpy", M_ANY, "no-sync", WHY_BLOCKING },
	{ "cudaMemcpy2D", M_ANY, "no-sync", WHY_BLOCKING },
	{ "cudaMemcpy3D", M_ANY, "no-sync", WHY_BLOCKING },
	{ "cudaMemcpyToSymbol", M_ANY, "no-sync", WHY_BLOCKING },
	{ "cudaMemcpyFromSymbol", M_ANY, "no-sync", WHY_BLOCKING },
	{ "cudaMemset", M_ANY, "no-sync", WHY_BLOCKING },
	{ "cudaMemset2D", M_ANY, "no-sync", WHY_BLOCKING },
	{ "cudaMemset3D", M_ANY, "no-sync", WHY_BLOCKING },
	{ "cudaLaunchHostFunc", M_ANY, "no-sync", "host callbacks run on the host, outside the timed stream" },
	{ "cudaStreamAddCallback", M_ANY, "no-sync", "host callbacks run on the host, outside the timed stream" },

	{ "cudaSetDevice", M_PREFIX, "no-device-control", WHY_DEVICE },
	{ "cudaDeviceReset", M_ANY, "no-device-control", WHY_DEVICE },
	{ "cudaDeviceSetLimit", M_ANY, "no-device-control", WHY_DEVICE },
	{ "cudaSetValidDevices", M_ANY, "no-device-control", WHY_DEVICE },
	{ "cudaIpc", M_PREFIX, "no-device-control", WHY_DEVICE },
	{ "cudaGetDriverEntryPoint", M_PREFIX, "no-device-control", "the driver API is not allowed" },
	{ "cuGetProcAddress", M_PREFIX, "no-device-control", "the driver API is not allowed" },
	{ "cuCtx", M_PREFIX, "no-device-control", "the driver API is not allowed" },
	{ "cuDevice", M_PREFIX, "no-device-control", "the driver API is not allowed" },
	{ "cuModule", M_PREFIX, "no-device-control", "the driver API is not allowed" },
	{ "cuLaunch", M_PREFIX, "no-device-control", "the driver API is not allowed" },

	{ "cudaMalloc", M_PREFIX, "no-alloc", WHY_ALLOC },
	{ "cudaFree", M_PREFIX, "no-alloc", WHY_ALLOC },
	{ "cudaHostAlloc", M_ANY, "no-alloc", WHY_ALLOC },
	{ "cudaHostRegister", M_ANY, "no-alloc", WHY_ALLOC },
	{ "cudaMemPool", M_PREFIX, "no-alloc", WHY_ALLOC },
	{ "cudaMallocFromPoolAsync", M_ANY, "no-alloc", WHY_ALLOC },
	{ "cuMemAlloc", M_PREFIX, "no-alloc", WHY_ALLOC },
	{ "cuMemFree", M_PREFIX, "no-alloc", WHY_ALLOC },
	{ "cuMemCreate", M_PREFIX, "no-alloc", WHY_ALLOC },
	{ "__managed__", M_ANY, "no-alloc", WHY_ALLOC },
	{ "malloc", M_CALL, "no-alloc", WHY_ALLOC },
	{ "calloc", M_CALL, "no-alloc", WHY_ALLOC },
	{ "realloc", M_CALL, "no-alloc", WHY_ALLOC },
	{ "free", M_CALL, "no-alloc", WHY_ALLOC },
	{ "aligned_alloc", M_CALL, "no-alloc", WHY_ALLOC },
	{ "posix_memalign", M_CALL, "no-alloc", WHY_ALLOC },
	{ "memalign", M_CALL, "no-alloc", WHY_ALLOC },
	{ "valloc", M_CALL, "no-alloc", WHY_ALLOC },
	{ "make_unique", M_STD, "no-alloc", WHY_ALLOC },
	{ "make_shared", M_STD, "no-alloc", WHY_ALLOC },
	{ "vector", M_STD, "no-alloc", WHY_ALLOC },

	{ "fopen", M_CALL, "no-os", WHY_OS }, { "freopen", M_CALL, "no-os", WHY_OS },
	{ "fdopen", M_CALL, "no-os", WHY_OS }, { "tmpfile", M_CALL, "no-os", WHY_OS },
	{ "tmpnam", M_CALL, "no-os", WHY_OS }, { "mkstemp", M_CALL, "no-os", WHY_OS },
	{ "open", M_CALL, "no-os", WHY_OS }, { "openat", M_CALL, "no-os", WHY_OS },
	{ "creat", M_CALL, "no-os", WHY_OS }, { "opendir", M_CALL, "no-os", WHY_OS },
	{ "unlink", M_CALL, "no-os", WHY_OS }, { "remove", M_CALL, "no-os", WHY_OS },
	{ "rename", M_CALL, "no-os", WHY_OS }, { "mkdir", M_CALL, "no-os", WHY_OS },
	{ "rmdir", M_CALL, "no-os", WHY_OS }, { "chdir", M_CALL, "no-os", WHY_OS },
	{ "fread", M_CALL, "no-os", WHY_OS }, { "fwrite", M_CALL, "no-os", WHY_OS },
	{ "fscanf", M_CALL, "no-os", WHY_OS }, { "scanf", M_CALL, "no-os", WHY_OS },
	{ "fgets", M_CALL, "no-os", WHY_OS }, { "getline", M_CALL, "no-os", WHY_OS },
	{ "getenv", M_CALL, "no-os", WHY_OS }, { "secure_getenv", M_CALL, "no-os", WHY_OS },
	{ "setenv", M_CALL, "no-os", WHY_OS }, { "putenv", M_CALL, "no-os", WHY_OS },
	{ "unsetenv", M_CALL, "no-os", WHY_OS }, { "clearenv", M_CALL, "no-os", WHY_OS },
	{ "system", M_CALL, "no-os", WHY_OS }, { "popen", M_CALL, "no-os", WHY_OS },
	{ "fork", M_CALL, "no-os", WHY_OS }, { "vfork", M_CALL, "no-os", WHY_OS },
	{ "clone", M_CALL, "no-os", WHY_OS }, { "execl", M_CALL, "no-os", WHY_OS },
	{ "execle", M_CALL, "no-os", WHY_OS }, { "execlp", M_CALL, "no-os", WHY_OS },
	{ "execv", M_CALL, "no-os", WHY_OS }, { "execve", M_CALL, "no-os", WHY_OS },
	{ "execvp", M_CALL, "no-os", WHY_OS }, { "execvpe", M_CALL, "no-os", WHY_OS },
	{ "fexecve", M_CALL, "no-os", WHY_OS }, { "posix_spawn", M_CALL, "no-os", WHY_OS },
	{ "posix_spawnp", M_CALL, "no-os", WHY_OS }, { "socket", M_CALL, "no-os", WHY_OS },
	{ "connect", M_CALL, "no-os", WHY_OS }, { "bind", M_CALL, "no-os", WHY_OS },
	{ "listen", M_CALL, "no-os", WHY_OS }, { "accept", M_CALL, "no-os", WHY_OS },
	{ "getaddrinfo", M_CALL, "no-os", WHY_OS }, { "gethostbyname", M_CALL, "no-os", WHY_OS },
	{ "dlopen", M_CALL, "no-os", WHY_OS }, { "dlsym", M_CALL, "no-os", WHY_OS },
	{ "dlmopen", M_CALL, "no-os", WHY_OS }, { "pthread_create", M_CALL, "no-os", WHY_OS },
	{ "thrd_create", M_CALL, "no-os", WHY_OS }, { "mmap", M_CALL, "no-os", WHY_OS },
	{ "mprotect", M_CALL, "no-os", WHY_OS }, { "ioctl", M_CALL, "no-os", WHY_OS },
	{ "syscall", M_CALL, "no-os", WHY_OS }, { "ptrace", M_CALL, "no-os", WHY_OS },
	{ "kill", M_CALL, "no-os", WHY_OS }, { "signal", M_CALL, "no-os", WHY_OS },
	{ "sigaction", M_CALL, "no-os", WHY_OS }, { "atexit", M_CALL, "no-os", WHY_OS },
	{ "exit", M_CALL, "no-os", WHY_OS }, { "_exit", M_CALL, "no-os", WHY_OS },
	{ "_Exit", M_CALL, "no-os", WHY_OS }, { "quick_exit", M_CALL, "no-os", WHY_OS },
	{ "thread", M_STD, "no-os", WHY_OS }, { "jthread", M_STD, "no-os", WHY_OS },
	{ "async", M_STD, "no-os", WHY_OS }, { "ifstream", M_STD, "no-os", WHY_OS },
	{ "ofstream", M_STD, "no-os", WHY_OS }, { "fstream", M_STD, "no-os", WHY_OS },
	{ "filesystem", M_STD, "no-os", WHY_OS }, { "cin", M_STD, "no-os", WHY_OS },
};

static int name_matches(const struct name_rule *nr, const struct toks *t, size_t i)
{
	const struct tok *k = &t->v[i];
	size_t len = strlen(nr->name);
	switch (nr->match) {
	case M_ANY:
		return k->n == len && !memcmp(k->p, nr->name, len);
	case M_PREFIX:
		return k->n >= len && !memcmp(k->p, nr->name, len);
	case M_IPREFIX:
		return k->n >= len && !strncasecmp(k->p, nr->name, len);
	case M_STD:
		return k->n == len && !memcmp(k->p, nr->name, len) && i >= 2 &&
		       tok_is(t, i - 1, "::") && tok_is(t, i - 2, "std");
	case M_CALL:
		if (k->n != len || memcmp(k->p, nr->name, len) || !tok_is(t, i + 1, "("))
			return 0;
		if (i >= 1 && (tok_is(t, i - 1, ".") || tok_is(t, i - 1, "->")))
			return 0; /* a member: tensor.free(), p->open() */
		if (i >= 1 && tok_is(t, i - 1, "::"))
			return i < 2 || tok_is(t, i - 2, "std") || t->v[i - 2].kind != T_IDENT;
		/* after a type it declares a function of that name ("void free();"), not a call */
		if (i >= 1 && t->v[i - 1].kind == T_IDENT && !tok_is(t, i - 1, "return") &&
		    !tok_is(t, i - 1, "else") && !tok_is(t, i - 1, "do") &&
		    !tok_is(t, i - 1, "case") && !tok_is(t, i - 1, "throw"))
			return 0;
		return 1;
	}
	return 0;
}

static char *tok_str(const struct tok *k)
{
	return xstrndup(k->p, k->n);
}

static void check_names(const struct toks *t, struct policy_report *rep)
{
	for (size_t i = 0; i < t->nr; i++) {
		const struct tok *k = &t->v[i];
		if (k->kind != T_IDENT)
			continue;
		for (size_t r = 0; r < ARRAY_SIZE(names); r++) {
			if (!name_matches(&names[r], t, i))
				continue;
			char *name = tok_str(k);
			add(rep, k->line, names[r].rule,
			    xasprintf("%s%s is not allowed: %s",
				      names[r].match == M_STD ? "std::" : "", name, names[r].why));
			free(name);
			break;
		}
		/* cutlass::gemm::device::..., gemm::kernel::, conv::collective::, cutlass::library */
		static const char *ns[] = { "gemm", "conv" };
		static const char *sub[] = { "device", "kernel", "collective" };
		for (size_t a = 0; a < ARRAY_SIZE(ns); a++)
			for (size_t b = 0; b < ARRAY_SIZE(sub); b++)
				if (tok_is(t, i, ns[a]) && tok_is(t, i + 1, "::") &&
				    tok_is(t, i + 2, sub[b]))
					add(rep, k->line, "no-prebuilt-gemm",
					    xasprintf("%s::%s is not allowed: %s", ns[a], sub[b],
						      WHY_GEMM));
		if (tok_is(t, i, "cutlass") && tok_is(t, i + 1, "::") && tok_is(t, i + 2, "library"))
			add(rep, k->line, "no-prebuilt-gemm",
			    xasprintf("cutlass::library is not allowed: %s", WHY_GEMM));
		if (tok_is(t, i, "new")) {
			/* placement new builds in memory you have; plain new allocates */
			int placement = tok_is(t, i + 1, "(") && !tok_is(t, i + 2, "std") &&
					!tok_is(t, i + 2, "nothrow");
			if (!placement || (i && tok_is(t, i - 1, "operator")))
				add(rep, k->line, "no-alloc",
				    xasprintf("operator new is not allowed: %s", WHY_ALLOC));
		}
		if (tok_is(t, i, "delete") && !(i && tok_is(t, i - 1, "=")))
			add(rep, k->line, "no-alloc",
			    xasprintf("delete is not allowed: %s", WHY_ALLOC));
		if ((unsigned char)k->p[0] >= 0x80)
			add(rep, k->line, "no-obfuscation",
			    xstrdup("identifiers must be plain ASCII"));
	}
}

/* ---- includes ---- */

static const char *const std_headers[] = {
	"cuda_runtime.h", "cuda_runtime_api.h", "cuda_fp16.h", "cuda_fp16.hpp", "cuda_bf16.h",
	"cuda_bf16.hpp", "cuda_fp8.h", "cuda_fp8.hpp", "cuda_fp6.h", "cuda_fp4.h", "mma.h",
	"cuda_pipeline.h", "cuda_awbarrier.h", "cuda_awbarrier_primitives.h", "vector_types.h",
	"vector_functions.h", "math_constants.h", "cooperative_groups.h", "dlpack/dlpack.h",
	"cutegen/kernel_abi.h", "cstdint", "stdint.h", "cstddef", "stddef.h", "cmath", "math.h",
	"type_traits", "utility", "limits", "algorithm", "array", "cassert", "assert.h", "climits",
	"limits.h", "cfloat", "float.h", "tuple", "cstdio", "stdio.h", "initializer_list",
	"numeric", "functional", "cstring", "string.h", "iterator", "bit",
	"cuda/barrier", "cuda/pipeline", "cuda/ptx", "cuda/atomic", "cuda/annotated_ptr",
	"cuda/functional", "cuda/type_traits", "cuda/cmath", "cuda/utility",
};

static const char *const allowed_prefixes[] = { "cute/", "cutlass/", "cuda/std/",
						 "cooperative_groups/" };

static const char *const gemm_dirs[] = {
	"cutlass/gemm/device/", "cutlass/gemm/kernel/", "cutlass/gemm/collective/",
	"cutlass/epilogue/collective/", "cutlass/conv/device/", "cutlass/conv/kernel/",
	"cutlass/conv/collective/", "cutlass/library/", "cutlass/util/reference/",
};

static void check_include(const char *path, int line, struct policy_report *rep)
{
	static const char *vendor[] = { "cublas", "cudnn", "cufft", "cusparse", "cusolver",
					"cutensor", "nvrtc" };
	for (size_t i = 0; i < ARRAY_SIZE(vendor); i++)
		for (const char *p = path; *p; p++)
			if (!strncasecmp(p, vendor[i], strlen(vendor[i]))) {
				add(rep, line, "no-vendor-libs",
				    xasprintf("#include <%s> is not allowed: %s", path, WHY_VENDOR));
				return;
			}
	for (size_t i = 0; i < ARRAY_SIZE(gemm_dirs); i++)
		if (starts_with(path, gemm_dirs[i])) {
			add(rep, line, "no-prebuilt-gemm",
			    xasprintf("#include <%s> is not allowed: %s", path, WHY_GEMM));
			return;
		}
	if (strstr(path, "..")) {
		add(rep, line, "include-allowlist",
		    xasprintf("#include <%s> is not allowed: no '..' in include paths", path));
		return;
	}
	if (starts_with(path, "cutlass/util/")) {
		add(rep, line, "include-allowlist",
		    xasprintf("#include <%s> is not allowed: CUTLASS's host utilities allocate and "
			      "synchronize; use cute/ and the numeric/arch headers", path));
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(allowed_prefixes); i++)
		if (starts_with(path, allowed_prefixes[i]))
			return;
	for (size_t i = 0; i < ARRAY_SIZE(std_headers); i++)
		if (!strcmp(path, std_headers[i]))
			return;
	if (!strcmp(path, "cuda.h")) {
		add(rep, line, "include-allowlist",
		    xstrdup("#include <cuda.h> is not allowed: the driver API is not part of the "
			    "kernel contract; cuda_runtime.h comes with cutegen/kernel_abi.h"));
		return;
	}
	add(rep, line, "include-allowlist",
	    xasprintf("#include <%s> is not allowed: include only cute/..., cutlass/... "
		      "(not gemm device/kernel/collective), the CUDA runtime and type headers, "
		      "dlpack/dlpack.h, cutegen/kernel_abi.h and the std headers docs/policy.md "
		      "lists", path));
}

/* Directives: #include against the allowlist; #include_next and #import are refused. */
static void check_directives(const struct clean *c, const struct toks *t,
			     struct policy_report *rep)
{
	for (size_t i = 0; i < t->nr; i++) {
		const struct tok *k = &t->v[i];
		int hash = tok_is(t, i, "#") || tok_is(t, i, "%:");
		if (!hash || !k->bol || i + 1 >= t->nr)
			continue;
		if (tok_is(t, i, "%:"))
			add(rep, k->line, "no-obfuscation",
			    xstrdup("the digraph %: is not allowed: write #"));
		const struct tok *d = &t->v[i + 1];
		if (memchr(c->text + k->off, '\n', d->off - k->off))
			continue; /* a lone # ends at its line */
		if (tok_is(t, i + 1, "include_next") || tok_is(t, i + 1, "import")) {
			add(rep, d->line, "include-allowlist",
			    xasprintf("#%.*s is not allowed: use #include", (int)d->n, d->p));
			continue;
		}
		if (!tok_is(t, i + 1, "include"))
			continue;
		/* the raw text after "include", to the end of the line */
		size_t p = d->off + d->n;
		while (p < c->n && (c->text[p] == ' ' || c->text[p] == '\t'))
			p++;
		char open = p < c->n ? c->text[p] : 0, close = open == '<' ? '>' : '"';
		if (open != '<' && open != '"') {
			add(rep, d->line, "include-allowlist",
			    xstrdup("a computed #include (a macro naming the header) is not allowed: "
				    "write the header's name"));
			continue;
		}
		size_t q = p + 1;
		while (q < c->n && c->text[q] != close && c->text[q] != '\n')
			q++;
		if (q >= c->n || c->text[q] != close || q - p - 1 > 512) {
			add(rep, d->line, "include-allowlist", xstrdup("a malformed #include"));
			continue;
		}
		char *path = xstrndup(c->text + p + 1, q - p - 1);
		check_include(path, d->line, rep);
		free(path);
	}
}

/* ---- file-wide ---- */

static void check_file(const struct toks *t, struct policy_report *rep)
{
	int launch = 0, abi = 0;
	for (size_t i = 0; i < t->nr; i++) {
		if (tok_is(t, i, "##") || (tok_is(t, i, "%:") && tok_is(t, i + 1, "%:")))
			add(rep, t->v[i].line, "no-obfuscation",
			    xstrdup("token pasting (##) is not allowed: it can build names this "
				    "check cannot see; write names out in full"));
		if (tok_is(t, i, "CUTEGEN_DECLARE_ABI") && tok_is(t, i + 1, "("))
			abi = 1;
		if (tok_is(t, i, "cutegen_abi_version") && (i == 0 || !tok_is(t, i - 1, "::")))
			abi = 1;
		if (tok_is(t, i, "cutegen_launch") && tok_is(t, i + 1, "(")) {
			/* a definition: the parameter list is followed by a body */
			int depth = 0;
			size_t j = i + 1;
			for (; j < t->nr; j++) {
				if (tok_is(t, j, "("))
					depth++;
				else if (tok_is(t, j, ")") && --depth == 0)
					break;
			}
			if (tok_is(t, j + 1, "{"))
				launch = 1;
		}
	}
	if (!launch)
		add(rep, 0, "entry-point",
		    xstrdup("cutegen_launch is not defined: define CUTEGEN_KERNEL int "
			    "cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor "
			    "*outputs, int num_outputs, const double *scalars, int num_scalars, void "
			    "*workspace, size_t workspace_bytes, cudaStream_t stream) { ... } "
			    "(include/cutegen/kernel_abi.h)"));
	if (!abi)
		add(rep, 0, "abi-version",
		    xstrdup("the ABI version is not declared: add CUTEGEN_DECLARE_ABI(); at file "
			    "scope"));
}

/* asm("...") bodies are strings; look inside them for system calls and library names. */
static void check_asm(const struct clean *c, const struct toks *t, struct policy_report *rep)
{
	for (size_t i = 0; i < t->nr; i++) {
		if (!tok_is(t, i, "asm") && !tok_is(t, i, "__asm__") && !tok_is(t, i, "__asm"))
			continue;
		/* the literal text up to the matching ')' */
		size_t start = t->v[i].off + t->v[i].n;
		int depth = 0;
		for (size_t p = start; p < c->n; p++) {
			if (!c->lit[p] && c->text[p] == '(')
				depth++;
			else if (!c->lit[p] && c->text[p] == ')' && --depth <= 0)
				break;
			if (!c->lit[p])
				continue;
			static const char *bad[] = { "syscall", "sysenter", "int $0x80", "int 0x80",
						     "cudaDevice", "cudaStream", "cudaMalloc",
						     "cudaFree", "cublas", "cudnn" };
			for (size_t b = 0; b < ARRAY_SIZE(bad); b++) {
				size_t n = strlen(bad[b]);
				if (p + n <= c->n && !memcmp(c->text + p, bad[b], n)) {
					add(rep, c->line[p], "no-os",
					    xasprintf("inline assembly naming '%s' is not allowed: "
						      "asm is for PTX in device code", bad[b]));
					p += n - 1;
					break;
				}
			}
		}
	}
}

int policy_check(const char *source, size_t len, struct policy_report *rep)
{
	if (len > POLICY_MAX_SOURCE) {
		add(rep, 0, "too-large",
		    xasprintf("the source is %zu bytes; the most a candidate may have is %u", len,
			      POLICY_MAX_SOURCE));
		return (int)(rep->nr + rep->dropped);
	}
	struct clean c;
	clean_source(source ? source : "", source ? len : 0, &c);
	struct toks t = { NULL, 0, 0 };
	tokenize(&c, &t);
	/* backslashes left outside literals are universal character names: \u0044 */
	for (size_t i = 0; i < c.n; i++)
		if (c.text[i] == '\\' && !c.lit[i]) {
			add(rep, c.line[i], "no-obfuscation",
			    xstrdup("a backslash outside a string (a universal character name?) is "
				    "not allowed: write identifiers in plain ASCII"));
			break;
		}
	check_directives(&c, &t, rep);
	check_names(&t, rep);
	check_asm(&c, &t, rep);
	check_file(&t, rep);
	free(t.v);
	free(c.text);
	free(c.line);
	free(c.lit);
	return (int)(rep->nr + rep->dropped);
}

void policy_report_release(struct policy_report *rep)
{
	for (size_t i = 0; i < rep->nr; i++)
		free(rep->items[i].message);
	free(rep->items);
	memset(rep, 0, sizeof(*rep));
}

static int by_line(const void *a, const void *b)
{
	const struct policy_violation *x = *(const struct policy_violation *const *)a;
	const struct policy_violation *y = *(const struct policy_violation *const *)b;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x < y ? -1 : x > y;
}

void policy_format(const struct policy_report *rep, struct strbuf *out)
{
	const struct policy_violation **v = xcalloc(rep->nr + 1, sizeof(*v));
	for (size_t i = 0; i < rep->nr; i++)
		v[i] = &rep->items[i];
	qsort(v, rep->nr, sizeof(*v), by_line);
	for (size_t i = 0; i < rep->nr; i++) {
		if (v[i]->line)
			strbuf_addf(out, "line %d: ", v[i]->line);
		else
			strbuf_addstr(out, "file: ");
		strbuf_addf(out, "rule '%s': %s\n", v[i]->rule, v[i]->message);
	}
	if (rep->dropped)
		strbuf_addf(out, "(%zu more violations not listed)\n", rep->dropped);
	free(v);
}
