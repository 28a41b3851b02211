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
	{ "symbol-allowlist", "the object code may call only the allowlist (docs/policy.md)" },
	{ "no-syscall", "no system call instructions in host code" },
	{ "no-interposing", "no defining library names, symbol versions or indirect functions" },
	{ "no-load-time-code", "no constructors or destructors of your own" },
	{ "object-check", "the object code must be readable by the check" },
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

/* ---- the object code ---- */

/*
 * The allowlist of what a candidate's host object may reference, in groups. Patterns are
 * exact names or globs with '*' (mangled names as the object spells them). Besides these:
 * libm by base name with its f/l variants (libm_names), and the fortified __NAME_chk form of
 * a libc or stdio name listed here.
 */
struct sym_group {
	const char *id;
	const char *const *patterns;
};

static const char *const g_cuda_launch[] = {
	/* what nvcc emits for <<<>>>, kernel registration and __device__ variables */
	"__cudaPushCallConfiguration", "__cudaPopCallConfiguration", "__cudaLaunchKernel",
	"__cudaGetKernel", "__cudaRegisterFatBinary", "__cudaRegisterFatBinaryEnd",
	"__cudaUnregisterFatBinary", "__cudaRegisterFunction", "__cudaRegisterVar",
	"__cudaRegisterLinkedBinary_*", /* -rdc=true */
	/* launching on the given stream, with attributes and clusters */
	"cudaLaunchKernel", "cudaLaunchKernelExC", "cudaLaunchCooperativeKernel",
	"cudaFuncSetAttribute", "cudaFuncGetAttributes", "cudaFuncSetCacheConfig",
	"cudaFuncGetName", "cudaFuncSetSharedMemConfig", NULL,
};
static const char *const g_cuda_query[] = {
	"cudaGetDevice", "cudaGetDeviceCount", "cudaDeviceGetAttribute", "cudaGetDeviceProperties",
	"cudaGetDeviceProperties_v2", "cudaDeviceGetLimit", "cudaDeviceGetCacheConfig",
	"cudaDeviceGetSharedMemConfig",
	"cudaDeviceGetStreamPriorityRange", "cudaDriverGetVersion", "cudaRuntimeGetVersion",
	"cudaPointerGetAttributes", "cudaStreamGetPriority", "cudaStreamGetFlags",
	"cudaStreamGetDevice", "cudaGetSymbolAddress", "cudaGetSymbolSize", "cudaOccupancy*", NULL,
};
static const char *const g_cuda_error[] = {
	"cudaGetLastError", "cudaPeekAtLastError", "cudaGetErrorString", "cudaGetErrorName", NULL,
};
static const char *const g_cuda_async[] = {
	"cudaMemcpyAsync", "cudaMemcpy2DAsync", "cudaMemcpy3DAsync", "cudaMemsetAsync",
	"cudaMemset2DAsync", "cudaMemset3DAsync", "cudaMemcpyToSymbolAsync",
	"cudaMemcpyFromSymbolAsync", NULL,
};
/* TMA descriptors: CuTe's make_tma_copy encodes them on the host (pure functions; the build
 * defines CUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL so CUTLASS calls them by name instead of
 * through cudaGetDriverEntryPoint, which would hand out any driver function) */
static const char *const g_tma[] = {
	"cuTensorMapEncodeTiled", "cuTensorMapEncodeIm2col", "cuTensorMapEncodeIm2colWide",
	"cuTensorMapReplaceAddress", NULL,
};
/* pure arithmetic: libgcc's helpers (128-bit division, complex products) and glibc's
 * classification functions behind isnan/isinf in host code */
static const char *const g_arith[] = {
	"__udivti3", "__divti3", "__umodti3", "__modti3", "__udivmodti4", "__muldc3", "__mulsc3",
	"__divdc3", "__divsc3", "__popcountdi2", "__clzdi2", "__ctzdi2", "__powidf2", "__powisf2",
	"__isnan", "__isnanf", "__isinf", "__isinff", "__finite", "__finitef", "__fpclassify",
	"__fpclassifyf", "__signbit", "__signbitf", "__*_finite", NULL,
};
static const char *const g_libc[] = {
	"memcpy", "memmove", "memset", "memcmp", "memchr", "strlen", "strnlen", "strcmp",
	"strncmp", "strchr", "strrchr", "strstr", "strcpy", "strncpy", "strcat", "strncat",
	"abs", "labs", "llabs", "abort", "__assert_fail", "__stack_chk_fail", NULL,
};
static const char *const g_stdio[] = {
	"printf", "vprintf", "puts", "putchar",
	/* std::cerr / std::cout insertion: CUTLASS's TMA setup reports a failed encode there */
	"_ZSt4cerr", "_ZSt4cout", "_ZNSo*", "_ZSt16__ostream_insert*", "_ZStlsISt11char_traitsIcEE*",
	"_ZNKSt5ctypeIcE13_M_widen_initEv", "_ZSt4endlIcSt11char_traitsIcEERSt13basic_ostreamIT_T0_ES6_",
	NULL,
};
static const char *const g_cxx[] = {
	/* function-local statics, exceptions and unwinding, as g++ emits them */
	"__cxa_guard_acquire", "__cxa_guard_release", "__cxa_guard_abort", "__gxx_personality_v0",
	"_Unwind_Resume", "__cxa_begin_catch", "__cxa_end_catch", "__cxa_rethrow",
	"__cxa_allocate_exception", "__cxa_free_exception", "__cxa_throw", "__cxa_pure_virtual",
	"__cxa_deleted_virtual", "__cxa_call_terminate", "_ZSt9terminatev", "_ZSt*__throw_*",
	"_ZTISt*", "_ZTVN10__cxxabiv1*",
	/* destructors of globals and nvcc's unregistration at exit; <iostream>'s static init */
	"__cxa_atexit", "__dso_handle", "atexit", "_ZNSt8ios_base4InitC1Ev",
	/* <iostream>'s static init as libstdc++ 13 and later emit it (gcc 13+ hosts: the H200's) */
	"_ZSt21ios_base_library_initv",
	"_ZNSt8ios_base4InitD1Ev", "_GLOBAL_OFFSET_TABLE_", NULL,
};

static const struct sym_group sym_groups[] = {
	{ "cuda-launch", g_cuda_launch }, { "cuda-query", g_cuda_query },
	{ "cuda-error", g_cuda_error },   { "cuda-async", g_cuda_async },
	{ "tma-descriptor", g_tma },      { "arithmetic", g_arith },
	{ "libc-memory", g_libc },
	{ "stdio", g_stdio },             { "c++-runtime", g_cxx },
};

static const char *const libm_names[] = {
	"acos", "asin", "atan", "atan2", "cos", "sin", "tan", "acosh", "asinh", "atanh", "cosh",
	"sinh", "tanh", "exp", "exp2", "expm1", "exp10", "log", "log10", "log1p", "log2", "logb",
	"ilogb", "pow", "sqrt", "cbrt", "hypot", "erf", "erfc", "tgamma", "lgamma", "ceil",
	"floor", "trunc", "round", "lround", "llround", "rint", "lrint", "llrint", "nearbyint",
	"fmod", "remainder", "remquo", "fdim", "fmax", "fmin", "fma", "fabs", "copysign", "frexp",
	"ldexp", "modf", "scalbn", "scalbln", "nextafter", "nexttoward", "nan", "sincos",
};

/* '*' matches any run of characters; everything else matches itself. */
static int glob_match(const char *pat, const char *s)
{
	if (!*pat)
		return !*s;
	if (*pat == '*') {
		for (;; s++) {
			if (glob_match(pat + 1, s))
				return 1;
			if (!*s)
				return 0;
		}
	}
	return *s == *pat && glob_match(pat + 1, s + 1);
}

static const char *group_of(const char *name, int only_c)
{
	for (size_t g = 0; g < ARRAY_SIZE(sym_groups); g++) {
		if (only_c && strcmp(sym_groups[g].id, "libc-memory") && strcmp(sym_groups[g].id, "stdio"))
			continue;
		for (const char *const *p = sym_groups[g].patterns; *p; p++)
			if (glob_match(*p, name))
				return sym_groups[g].id;
	}
	return NULL;
}

static int is_libm(const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < ARRAY_SIZE(libm_names); i++) {
		size_t k = strlen(libm_names[i]);
		if (strncmp(name, libm_names[i], k))
			continue;
		if (n == k || (n == k + 1 && (name[k] == 'f' || name[k] == 'l')))
			return 1;
	}
	return 0;
}

const char *policy_symbol_allowed(const char *name)
{
	if (!name || !*name || strchr(name, '@') || strlen(name) > 4096)
		return NULL;
	const char *g = group_of(name, 0);
	if (g)
		return g;
	if (is_libm(name))
		return "libm";
	/* the fortified forms _FORTIFY_SOURCE turns calls into: __memcpy_chk, __printf_chk */
	size_t n = strlen(name);
	if (n > 6 && !strncmp(name, "__", 2) && !strcmp(name + n - 4, "_chk")) {
		char *base = xstrndup(name + 2, n - 6);
		g = group_of(base, 1);
		free(base);
		return g;
	}
	return NULL;
}

int policy_rule_is_object(const char *rule)
{
	static const char *ids[] = { "symbol-allowlist", "no-syscall", "no-interposing",
				     "no-load-time-code", "object-check" };
	for (size_t i = 0; rule && i < ARRAY_SIZE(ids); i++)
		if (!strcmp(rule, ids[i]))
			return 1;
	return 0;
}

const char *policy_object_rules_version(void)
{
	static char *v;
	if (!v) {
		struct strbuf sb = STRBUF_INIT;
		/* bump the tag when the check or its messages change: cached verdicts hold both */
		strbuf_addstr(&sb, "object-check v1;");
		for (size_t g = 0; g < ARRAY_SIZE(sym_groups); g++)
			for (const char *const *p = sym_groups[g].patterns; *p; p++)
				strbuf_addf(&sb, "%s:%s;", sym_groups[g].id, *p);
		for (size_t i = 0; i < ARRAY_SIZE(libm_names); i++)
			strbuf_addf(&sb, "libm:%s;", libm_names[i]);
		v = strbuf_detach(&sb, NULL);
	}
	return v;
}

/* -- reading objdump's output -- */

void obj_info_release(struct obj_info *o)
{
	for (size_t i = 0; i < o->nsyms; i++) {
		free(o->syms[i].name);
		free(o->syms[i].plain);
		free(o->syms[i].section);
	}
	for (size_t i = 0; i < o->nrelocs; i++) {
		free(o->relocs[i].section);
		free(o->relocs[i].target);
	}
	for (size_t i = 0; i < o->ninsns; i++) {
		free(o->insns[i].section);
		free(o->insns[i].function);
		free(o->insns[i].text);
	}
	free(o->syms);
	free(o->relocs);
	free(o->insns);
	free(o->error);
	memset(o, 0, sizeof(*o));
}

/* Cuts text into lines: (*line, *n) is the next one (without '\n'); 0 at the end. */
static int next_line(const char *text, size_t len, size_t *pos, const char **line, size_t *n)
{
	if (*pos >= len)
		return 0;
	const char *p = text + *pos, *e = memchr(p, '\n', len - *pos);
	*line = p;
	*n = e ? (size_t)(e - p) : len - *pos;
	*pos += *n + (e != NULL);
	return 1;
}

static int parse_hex(const char *s, size_t n, unsigned long long *v)
{
	if (n == 0 || n > 16)
		return -1;
	unsigned long long x = 0;
	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)s[i], d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else
			return -1;
		x = x << 4 | (unsigned)d;
	}
	*v = x;
	return 0;
}

static int parse_fail(struct obj_info *o, size_t lineno, const char *what, const char *line,
		      size_t n)
{
	free(o->error);
	o->error = xasprintf("objdump's output line %zu: %s (\"%.*s\")", lineno, what,
			     (int)(n > 80 ? 80 : n), line);
	return -1;
}

/* "0000000000000010 g     F .text\t000000000000012b .hidden name" */
static int parse_symbol(struct obj_info *o, const char *l, size_t n, size_t lineno)
{
	unsigned long long value, size;
	if (n < 26 || parse_hex(l, 16, &value) || l[16] != ' ' || l[24] != ' ')
		return parse_fail(o, lineno, "not a symbol", l, n);
	const char *flags = l + 17;
	const char *sec = l + 25, *tab = memchr(sec, '\t', n - 25);
	if (!tab || tab == sec)
		return parse_fail(o, lineno, "no section", l, n);
	const char *p = tab + 1, *end = l + n;
	const char *sp = memchr(p, ' ', (size_t)(end - p));
	if (!sp || parse_hex(p, (size_t)(sp - p), &size))
		return parse_fail(o, lineno, "no size", l, n);
	p = sp + 1;
	static const char *vis[] = { ".hidden ", ".protected ", ".internal " };
	for (size_t i = 0; i < ARRAY_SIZE(vis); i++)
		if ((size_t)(end - p) > strlen(vis[i]) && !strncmp(p, vis[i], strlen(vis[i]))) {
			p += strlen(vis[i]);
			break;
		}
	if (p >= end)
		return parse_fail(o, lineno, "no name", l, n);
	ALLOC_GROW(o->syms, o->nsyms + 1, o->asyms);
	struct obj_symbol *s = &o->syms[o->nsyms++];
	memset(s, 0, sizeof(*s));
	s->name = xstrndup(p, (size_t)(end - p));
	s->section = xstrndup(sec, (size_t)(tab - sec));
	s->value = value;
	s->size = size;
	s->bind = flags[1] == 'w' ? 'w' : flags[0] == '!' ? 'g' : flags[0];
	s->kind = flags[4] == 'i' ? 'i' : flags[5] == 'd' ? 'd' : flags[6];
	return 0;
}

/* "0000000000000005 R_X86_64_PLT32    name-0x0000000000000004" */
static int parse_reloc(struct obj_info *o, const char *sec, const char *l, size_t n,
		       size_t lineno)
{
	unsigned long long off;
	const char *end = l + n;
	const char *sp = memchr(l, ' ', n);
	if (!sp || parse_hex(l, (size_t)(sp - l), &off))
		return parse_fail(o, lineno, "not a relocation", l, n);
	const char *p = sp;
	while (p < end && *p == ' ')
		p++;
	while (p < end && *p != ' ')
		p++; /* the type */
	while (p < end && *p == ' ')
		p++;
	if (p >= end) /* a relocation without a symbol (R_X86_64_NONE) */
		return 0;
	const char *tend = end;
	long long addend = 0;
	/* the addend objdump appends: NAME+0x... or NAME-0x... */
	for (const char *q = end - 1; q > p + 2; q--) {
		if ((q[-2] == '+' || q[-2] == '-') && q[-1] == '0' && q[0] == 'x') {
			unsigned long long a;
			if (!parse_hex(q + 1, (size_t)(end - q - 1), &a)) {
				addend = q[-2] == '-' ? -(long long)a : (long long)a;
				tend = q - 2;
			}
			break;
		}
		if (!isxdigit((unsigned char)*q))
			break;
	}
	ALLOC_GROW(o->relocs, o->nrelocs + 1, o->arelocs);
	struct obj_reloc *r = &o->relocs[o->nrelocs++];
	r->section = xstrdup(sec);
	r->offset = off;
	r->target = xstrndup(p, (size_t)(tend - p));
	r->addend = addend;
	return 0;
}

int policy_parse_objdump(const char *text, size_t len, struct obj_info *o)
{
	enum { NONE, SYMS, RELOCS } state = NONE;
	char *sec = NULL;
	const char *l;
	size_t n, pos = 0, lineno = 0;
	int rc = 0, saw_table = 0;
	while (!rc && next_line(text, len, &pos, &l, &n)) {
		lineno++;
		if (n == 0) {
			if (state == SYMS)
				state = NONE;
			continue;
		}
		if (n == 13 && !memcmp(l, "SYMBOL TABLE:", 13)) {
			state = SYMS;
			saw_table = 1;
			continue;
		}
		if (n > 25 && !memcmp(l, "RELOCATION RECORDS FOR [", 24) && l[n - 2] == ']' &&
		    l[n - 1] == ':') {
			free(sec);
			sec = xstrndup(l + 24, n - 26);
			state = RELOCS;
			continue;
		}
		if (state == SYMS)
			rc = parse_symbol(o, l, n, lineno);
		else if (state == RELOCS && !(n >= 6 && !memcmp(l, "OFFSET", 6)))
			rc = parse_reloc(o, sec, l, n, lineno);
		/* else: the file name line, "no symbols", headers */
	}
	free(sec);
	if (!rc && !saw_table) {
		free(o->error);
		o->error = xstrdup("objdump printed no symbol table");
		rc = -1;
	}
	return rc;
}

/* Whether an instruction's text is a system call: syscall, sysenter, int $0x80. */
static const char *syscall_insn(const char *t, size_t n)
{
	static const char *words[] = { "syscall", "sysenter" };
	for (size_t w = 0; w < ARRAY_SIZE(words); w++) {
		size_t k = strlen(words[w]);
		for (size_t i = 0; i + k <= n; i++)
			if (!memcmp(t + i, words[w], k) && (i == 0 || !is_ident((unsigned char)t[i - 1])) &&
			    (i + k == n || !is_ident((unsigned char)t[i + k])))
				return words[w];
	}
	for (size_t i = 0; i + 3 <= n; i++)
		if (!memcmp(t + i, "int", 3) && (i == 0 || isspace((unsigned char)t[i - 1])) &&
		    i + 3 < n && isspace((unsigned char)t[i + 3])) {
			const char *p = t + i + 3, *e = t + n;
			while (p < e && isspace((unsigned char)*p))
				p++;
			if (e - p >= 5 && !memcmp(p, "$0x80", 5))
				return "int $0x80";
		}
	return NULL;
}

int policy_parse_disasm(const char *text, size_t len, struct obj_info *o)
{
	char *sec = NULL, *fn = NULL;
	const char *l;
	size_t n, pos = 0, lineno = 0;
	while (next_line(text, len, &pos, &l, &n)) {
		lineno++;
		static const char head[] = "Disassembly of section ";
		if (n > sizeof(head) && !memcmp(l, head, sizeof(head) - 1) && l[n - 1] == ':') {
			free(sec);
			sec = xstrndup(l + sizeof(head) - 1, n - sizeof(head));
			continue;
		}
		/* "0000000000000010 <name>:" */
		if (n > 20 && l[16] == ' ' && l[17] == '<' && l[n - 2] == '>' && l[n - 1] == ':') {
			free(fn);
			fn = xstrndup(l + 18, n - 20);
			continue;
		}
		/* "   5c:\tinstruction" */
		size_t i = 0;
		while (i < n && l[i] == ' ')
			i++;
		size_t h = i;
		while (i < n && isxdigit((unsigned char)l[i]))
			i++;
		if (i == h || i + 1 >= n || l[i] != ':' || l[i + 1] != '\t')
			continue;
		unsigned long long off;
		if (parse_hex(l + h, i - h, &off))
			continue;
		const char *t = l + i + 2;
		size_t tn = n - i - 2;
		const char *cut = memchr(t, '#', tn); /* objdump's comment */
		if (cut)
			tn = (size_t)(cut - t);
		cut = memchr(t, '<', tn);
		if (cut)
			tn = (size_t)(cut - t);
		const char *what = syscall_insn(t, tn);
		if (!what)
			continue;
		ALLOC_GROW(o->insns, o->ninsns + 1, o->ainsns);
		struct obj_insn *in = &o->insns[o->ninsns++];
		in->section = xstrdup(sec ? sec : "?");
		in->function = xstrdup(fn ? fn : "?");
		in->offset = off;
		in->text = xstrdup(what);
	}
	free(sec);
	free(fn);
	return 0;
}

/* -- judging the object -- */

struct objctx {
	const struct obj_info *o;
	struct clean c;
	struct toks t;
};

static const char *shown(const struct obj_symbol *s)
{
	return s->plain && *s->plain ? s->plain : s->name;
}

static const struct obj_symbol *find_symbol(const struct obj_info *o, const char *name)
{
	for (size_t i = 0; i < o->nsyms; i++)
		if (!strcmp(o->syms[i].name, name) && o->syms[i].kind != 'd')
			return &o->syms[i];
	return NULL;
}

/* The function symbol covering section+offset, or NULL. */
static const struct obj_symbol *function_at(const struct obj_info *o, const char *sec,
					    unsigned long long off)
{
	const struct obj_symbol *best = NULL;
	for (size_t i = 0; i < o->nsyms; i++) {
		const struct obj_symbol *s = &o->syms[i];
		if (s->kind != 'F' || strcmp(s->section, sec) || s->value > off)
			continue;
		if (off < s->value + (s->size ? s->size : 1) && (!best || s->value >= best->value))
			best = s;
	}
	return best;
}

static int is_code_section(const char *sec)
{
	return starts_with(sec, ".text") || (!starts_with(sec, ".rela") && !starts_with(sec, ".data") &&
					     !starts_with(sec, ".rodata") && !starts_with(sec, ".bss") &&
					     !starts_with(sec, ".eh_frame") && !starts_with(sec, ".init_array") &&
					     !starts_with(sec, ".fini_array") && !starts_with(sec, ".gcc_except") &&
					     !starts_with(sec, ".nv") && !starts_with(sec, ".debug") &&
					     !starts_with(sec, ".ctors") && !starts_with(sec, ".dtors") &&
					     !starts_with(sec, ".preinit_array"));
}

/* " (referenced from f, g)" for the first functions whose code refers to name. */
static void where_used(const struct obj_info *o, const char *name, struct strbuf *out)
{
	const struct obj_symbol *seen[3];
	size_t nseen = 0, data = 0;
	for (size_t i = 0; i < o->nrelocs && nseen < ARRAY_SIZE(seen); i++) {
		const struct obj_reloc *r = &o->relocs[i];
		if (strcmp(r->target, name))
			continue;
		if (!is_code_section(r->section)) {
			data++;
			continue;
		}
		const struct obj_symbol *f = function_at(o, r->section, r->offset);
		if (!f)
			continue;
		size_t k = 0;
		while (k < nseen && seen[k] != f)
			k++;
		if (k == nseen)
			seen[nseen++] = f;
	}
	if (!nseen && !data)
		return;
	strbuf_addstr(out, " (referenced from ");
	for (size_t k = 0; k < nseen; k++)
		strbuf_addf(out, "%s%.160s", k ? ", " : "", shown(seen[k]));
	if (!nseen)
		strbuf_addstr(out, "data");
	strbuf_addch(out, ')');
}

/* The identifier a demangled name ends with: "ns::f<int>(float)" -> "f". Heap string. */
static char *base_identifier(const char *plain)
{
	const char *end = plain + strlen(plain);
	const char *paren = strchr(plain, '(');
	if (paren && paren > plain)
		end = paren;
	/* drop trailing template arguments */
	while (end > plain && end[-1] == '>') {
		int depth = 0;
		const char *p = end;
		while (p > plain) {
			p--;
			if (*p == '>')
				depth++;
			else if (*p == '<' && --depth == 0)
				break;
		}
		end = p;
	}
	const char *start = end;
	while (start > plain && is_ident((unsigned char)start[-1]))
		start--;
	return xstrndup(start, (size_t)(end - start));
}

/*
 * Where the source shows a symbol: the first identifier of that name, else an asm label or
 * asm statement whose string literals, joined, contain it. 0 when neither does. *via_asm is
 * set when it was an asm.
 */
static int source_line(const struct objctx *x, const char *ident, const char *joined,
		       int *via_asm)
{
	*via_asm = 0;
	if (ident && *ident)
		for (size_t i = 0; i < x->t.nr; i++)
			if (x->t.v[i].kind == T_IDENT && x->t.v[i].n == strlen(ident) &&
			    !memcmp(x->t.v[i].p, ident, x->t.v[i].n))
				return x->t.v[i].line;
	if (!joined || !*joined)
		return 0;
	/* an asm label spelling exactly the name first, then any asm string containing it */
	for (int exact = 1; exact >= 0; exact--)
	for (size_t i = 0; i < x->t.nr; i++) {
		if (!tok_is(&x->t, i, "asm") && !tok_is(&x->t, i, "__asm__") && !tok_is(&x->t, i, "__asm"))
			continue;
		struct strbuf lit = STRBUF_INIT;
		int depth = 0;
		for (size_t p = x->t.v[i].off + x->t.v[i].n; p < x->c.n; p++) {
			if (!x->c.lit[p] && x->c.text[p] == '(')
				depth++;
			else if (!x->c.lit[p] && x->c.text[p] == ')' && --depth <= 0)
				break;
			if (x->c.lit[p] && lit.len < 65536)
				strbuf_addch(&lit, x->c.text[p]);
		}
		int hit = lit.len && (exact ? !strcmp(lit.buf, joined) : strstr(lit.buf, joined) != NULL);
		strbuf_release(&lit);
		if (hit) {
			*via_asm = 1;
			return x->t.v[i].line;
		}
	}
	return 0;
}

/* OS names the source scan's table lacks (a kernel may neither call nor define them). */
static const char *const reserved_names[] = {
	"read", "write", "close", "pread", "pwrite", "lseek", "dup", "dup2", "dup3", "pipe",
	"getpid", "raise", "environ", "__environ", "stdout", "stderr", "stdin",
	"program_invocation_name", "program_invocation_short_name", "dlclose", "dlerror", "dladdr",
	"dlinfo", "dlvsym", "dl_iterate_phdr",
};
/* The why of the source scan's table for a C name, if it has one. */
static const char *known_why(const char *name, const char **rule)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < ARRAY_SIZE(reserved_names); i++)
		if (!strcmp(name, reserved_names[i])) {
			*rule = "no-os";
			return WHY_OS;
		}
	for (size_t r = 0; r < ARRAY_SIZE(names); r++) {
		size_t k = strlen(names[r].name);
		int hit = 0;
		switch (names[r].match) {
		case M_ANY:
		case M_CALL:
			hit = n == k && !memcmp(name, names[r].name, k);
			break;
		case M_PREFIX:
			hit = n >= k && !memcmp(name, names[r].name, k);
			break;
		case M_IPREFIX:
			hit = n >= k && !strncasecmp(name, names[r].name, k);
			break;
		case M_STD:
			break;
		}
		if (hit) {
			*rule = names[r].rule;
			return names[r].why;
		}
	}
	return NULL;
}

/* Prefixes of the libraries in the runner's process: a kernel defines no such name. */
static const char *const reserved_prefixes[] = {
	"__cuda", "__libc_", "_dl_", "__cxa_", "__gxx_", "_Unwind_", "pthread_", "__nv_", "_Znw",
	"_Zna", "_Zdl", "_Zda",
};

static int is_reserved_definition(const char *name)
{
	const char *rule;
	if (policy_symbol_allowed(name) || known_why(name, &rule))
		return 1;
	for (size_t i = 0; i < ARRAY_SIZE(reserved_names); i++)
		if (!strcmp(name, reserved_names[i]))
			return 1;
	for (size_t i = 0; i < ARRAY_SIZE(reserved_prefixes); i++)
		if (starts_with(name, reserved_prefixes[i]))
			return 1;
	/* the runtime and driver APIs: cudaMalloc, cuMemAlloc (not a kernel's own cuda_relu) */
	if (starts_with(name, "cu") && (isupper((unsigned char)name[2]) ||
					(starts_with(name, "cuda") && isupper((unsigned char)name[4]))))
		return 1;
	return 0;
}

#define WHY_ALLOWLIST                                                                        \
	"the host code of a kernel may call only the CUDA runtime's launch, attribute, "          \
	"occupancy, error and async copy/memset functions, libm, memory and string functions "   \
	"and printf (docs/policy.md, 'The object code')"

static void add_at(struct policy_report *rep, int line, const char *rule, struct strbuf *msg)
{
	add(rep, line, rule, strbuf_detach(msg, NULL));
}

/* The line where the source shows a symbol; *via_asm when only an asm string does. */
static int line_of(const struct objctx *x, const struct obj_symbol *s, const char *name,
		   int *via_asm)
{
	char *ident = base_identifier(s ? shown(s) : name);
	int line = source_line(x, ident, name, via_asm);
	free(ident);
	return line;
}

static void check_undefined(const struct objctx *x, struct policy_report *rep)
{
	const struct obj_info *o = x->o;
	for (size_t i = 0; i < o->nsyms; i++) {
		const struct obj_symbol *s = &o->syms[i];
		if (strcmp(s->section, "*UND*") || policy_symbol_allowed(s->name))
			continue;
		struct strbuf msg = STRBUF_INIT;
		const char *rule = "symbol-allowlist", *why = NULL;
		char *at = strchr(s->name, '@');
		if (at) {
			strbuf_addf(&msg, "the object code references '%.200s', a versioned symbol "
				    "(.symver)", s->name);
			why = "a kernel may not pick library symbols by version";
		} else {
			strbuf_addf(&msg, "the object code %s '%.200s'",
				    s->bind == 'w' ? "has a weak reference to" : "references",
				    shown(s));
			if (s->plain && strcmp(s->plain, s->name))
				strbuf_addf(&msg, " (%.200s)", s->name);
			const char *r2;
			why = known_why(s->name, &r2);
		}
		where_used(o, s->name, &msg);
		int via_asm, line = line_of(x, s, s->name, &via_asm);
		strbuf_addf(&msg, ", which is not on the allowlist: %s", why ? why : WHY_ALLOWLIST);
		if (line && via_asm)
			strbuf_addstr(&msg, " (the source spells the name only in an asm string: an "
					    "asm label or inline assembly)");
		add_at(rep, line, rule, &msg);
	}
}

static void check_syscalls(const struct objctx *x, struct policy_report *rep)
{
	const struct obj_info *o = x->o;
	for (size_t i = 0; i < o->ninsns; i++) {
		const struct obj_insn *in = &o->insns[i];
		const struct obj_symbol *f = find_symbol(o, in->function);
		struct strbuf msg = STRBUF_INIT;
		strbuf_addf(&msg, "host code in '%.160s' contains a '%s' instruction (at %s+0x%llx)",
			    f ? shown(f) : in->function, in->text, in->section, in->offset);
		int via_asm, line = source_line(x, NULL, "sys", &via_asm);
		if (!line)
			line = source_line(x, NULL, "int", &via_asm);
		if (!line)
			line = source_line(x, NULL, ".byte", &via_asm);
		strbuf_addstr(&msg, ": a kernel makes no system calls; asm is for PTX in device code");
		add_at(rep, line, "no-syscall", &msg);
	}
}

static void check_definitions(const struct objctx *x, struct policy_report *rep)
{
	const struct obj_info *o = x->o;
	for (size_t i = 0; i < o->nsyms; i++) {
		const struct obj_symbol *s = &o->syms[i];
		if (!strcmp(s->section, "*UND*") || s->bind == 'l' || s->kind == 'd' || s->kind == 'f')
			continue;
		struct strbuf msg = STRBUF_INIT;
		if (strchr(s->name, '@'))
			strbuf_addf(&msg, "the kernel defines '%.200s', a versioned symbol (.symver): "
				    "a kernel may not stand in for library symbols", s->name);
		else if (s->kind == 'i')
			strbuf_addf(&msg, "the kernel defines '%.200s' as an indirect function (ifunc): "
				    "its resolver runs while the kernel is loaded", shown(s));
		else if (is_reserved_definition(s->name) ||
			 ((starts_with(s->name, "_ZSt") || starts_with(s->name, "_ZNSt") ||
			   starts_with(s->name, "_ZNKSt")) && s->bind != 'w'))
			strbuf_addf(&msg, "the kernel defines '%.200s', a name of the C, C++ or CUDA "
				    "libraries (an alias, an asm label or a definition of its own): "
				    "a kernel may not stand in for library functions", shown(s));
		else
			continue;
		char *ident = base_identifier(shown(s));
		int via_asm, line = source_line(x, ident, s->name, &via_asm);
		free(ident);
		add_at(rep, line, "no-interposing", &msg);
	}
}

/* Every entry of .init_array (and the like) must be the compiler's: nvcc's registration of
 * the kernels, or g++'s initialization of globals, which is checked like any other code. */
static void check_load_time(const struct objctx *x, struct policy_report *rep)
{
	const struct obj_info *o = x->o;
	static const char *tables[] = { ".init_array", ".fini_array", ".preinit_array", ".ctors",
					".dtors" };
	for (size_t i = 0; i < o->nrelocs; i++) {
		const struct obj_reloc *r = &o->relocs[i];
		size_t t = 0;
		while (t < ARRAY_SIZE(tables) && !starts_with(r->section, tables[t]))
			t++;
		if (t == ARRAY_SIZE(tables))
			continue;
		const struct obj_symbol *f = find_symbol(o, r->target);
		if (!f) /* section-relative: the function at that offset */
			f = function_at(o, r->target, (unsigned long long)r->addend);
		const char *name = f ? f->name : r->target;
		if (!strcmp(r->section, ".init_array") &&
		    (!strcmp(name, "_ZL24__sti____cudaRegisterAllv") ||
		     starts_with(name, "_GLOBAL__sub_I_")))
			continue;
		struct strbuf msg = STRBUF_INIT;
		strbuf_addf(&msg, "'%.160s' runs when the kernel is %s (an entry of %s: "
			    "__attribute__((constructor)) or the like)", f ? shown(f) : name,
			    t == 1 || t == 4 ? "unloaded" : "loaded", r->section);
		char *ident = base_identifier(f ? shown(f) : name);
		int via_asm, line = source_line(x, ident, NULL, &via_asm);
		free(ident);
		strbuf_addstr(&msg, ": a kernel's code runs inside cutegen_launch, where the runner "
				    "calls and times it");
		add_at(rep, line, "no-load-time-code", &msg);
	}
}

int policy_check_object(const struct obj_info *o, const char *source, size_t len,
			struct policy_report *rep)
{
	size_t before = rep->nr + rep->dropped;
	if (o->error) {
		add(rep, 0, "object-check",
		    xasprintf("the kernel's object code could not be checked: %s", o->error));
		return (int)(rep->nr + rep->dropped - before);
	}
	struct objctx x = { o, { 0 }, { NULL, 0, 0 } };
	clean_source(source ? source : "", source && len <= POLICY_MAX_SOURCE ? len : 0, &x.c);
	tokenize(&x.c, &x.t);
	check_undefined(&x, rep);
	check_syscalls(&x, rep);
	check_definitions(&x, rep);
	check_load_time(&x, rep);
	free(x.t.v);
	free(x.c.text);
	free(x.c.line);
	free(x.c.lit);
	return (int)(rep->nr + rep->dropped - before);
}
