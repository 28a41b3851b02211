/*
 * The CuTe knowledge index; see rag.h. The chunkers are heuristic scanners, not parsers: they
 * track braces outside comments and literals, treat namespace braces as transparent, and cut
 * at the end of each declaration at namespace scope. Good enough for CUTLASS's regular style;
 * on anything odd they still produce chunks (split at RAG_CHUNK_MAX_BYTES), never fail.
 */
#include "agent/rag.h"
#include "eval/build.h"
#include "common/embedded.h"
#include "common/paths.h"
#include "common/proc.h"
#include "util/fsutil.h"
#include "util/sha256.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define RAG_SCHEMA_VERSION "rag-v1"

struct rag {
	sqlite3 *db;
};

/* ---- declaration names ---------------------------------------------------------------------- */

static int is_ident_start(int c)
{
	return isalpha(c) || c == '_';
}

static int is_ident(int c)
{
	return isalnum(c) || c == '_';
}

/* Copies decl without comments and preprocessor lines, blanks collapsed. */
static char *strip_code(const char *s, size_t len)
{
	struct strbuf sb = STRBUF_INIT;
	int bol = 1;
	for (size_t i = 0; i < len;) {
		if (bol) {
			size_t j = i;
			while (j < len && (s[j] == ' ' || s[j] == '\t'))
				j++;
			if (j < len && s[j] == '#') {
				while (j < len && s[j] != '\n')
					j++;
				i = j;
				continue;
			}
		}
		bol = 0;
		if (s[i] == '/' && i + 1 < len && s[i + 1] == '/') {
			while (i < len && s[i] != '\n')
				i++;
			continue;
		}
		if (s[i] == '/' && i + 1 < len && s[i + 1] == '*') {
			i += 2;
			while (i + 1 < len && !(s[i] == '*' && s[i + 1] == '/'))
				i++;
			i += 2;
			continue;
		}
		char c = s[i++];
		if (c == '\n')
			bol = 1;
		if (isspace((unsigned char)c)) {
			if (sb.len && sb.buf[sb.len - 1] != ' ')
				strbuf_addch(&sb, ' ');
		} else {
			strbuf_addch(&sb, c);
		}
	}
	return strbuf_detach(&sb, NULL);
}

static const char *skip_ws(const char *p)
{
	while (*p == ' ')
		p++;
	return p;
}

/* p at an opening bracket o; returns past its balanced close (or the end). */
static const char *skip_balanced(const char *p, char o, char c)
{
	int d = 0;
	for (; *p; p++) {
		if (*p == o)
			d++;
		else if (*p == c && --d == 0)
			return p + 1;
	}
	return p;
}

static int token_is(const char *p, const char *w)
{
	size_t n = strlen(w);
	return !strncmp(p, w, n) && !is_ident(p[n]);
}

static int is_macro_token(const char *p, size_t n)
{
	int upper = 0;
	for (size_t i = 0; i < n; i++) {
		if (islower((unsigned char)p[i]))
			return 0;
		upper |= isupper((unsigned char)p[i]);
	}
	return upper && n > 3;
}

char *rag_decl_name(const char *decl, size_t len)
{
	char *code = strip_code(decl, len);
	char *name = NULL;
	const char *p = skip_ws(code);
	static const char *const specifiers[] = {
		"static", "inline", "constexpr", "consteval", "extern", "friend", "virtual",
		"explicit", "__device__", "__host__", "__global__", "__forceinline__", "typename",
		"CUTE_HOST_DEVICE", "CUTE_DEVICE", "CUTE_HOST", "CUTLASS_HOST_DEVICE", "CUTLASS_DEVICE",
		"CUTLASS_HOST", "CUTE_INLINE_CONSTANT", "CUTLASS_GLOBAL", "[[nodiscard]]",
	};
	/* template headers, specifiers and macro decorations */
	for (int guard = 0; *p && guard < 64; guard++) {
		if (token_is(p, "template")) {
			p = skip_ws(p + 8);
			if (*p == '<')
				p = skip_balanced(p, '<', '>');
			p = skip_ws(p);
			continue;
		}
		int hit = 0;
		for (size_t i = 0; i < ARRAY_SIZE(specifiers); i++)
			if (!strncmp(p, specifiers[i], strlen(specifiers[i])) &&
			    !is_ident(p[strlen(specifiers[i])])) {
				p = skip_ws(p + strlen(specifiers[i]));
				hit = 1;
				break;
			}
		if (hit)
			continue;
		if (token_is(p, "__launch_bounds__") || token_is(p, "alignas")) {
			p = strchr(p, '(');
			p = p ? skip_ws(skip_balanced(p, '(', ')')) : "";
			continue;
		}
		break;
	}
	if (token_is(p, "struct") || token_is(p, "class") || token_is(p, "union") || token_is(p, "enum")) {
		p = skip_ws(p + (token_is(p, "union") ? 5 : token_is(p, "enum") ? 4 : token_is(p, "class") ? 5 : 6));
		if (token_is(p, "class") || token_is(p, "struct"))
			p = skip_ws(p + (token_is(p, "class") ? 5 : 6));
		for (int guard = 0; guard < 8; guard++) {
			const char *q = p;
			while (is_ident(*q))
				q++;
			if (q > p && (token_is(p, "alignas") || (is_macro_token(p, (size_t)(q - p)) && skip_ws(q)[0] == '('))) {
				p = skip_ws(skip_balanced(strchr(p, '('), '(', ')'));
				continue;
			}
			if (*p == '[' && p[1] == '[') {
				const char *e = strstr(p, "]]");
				p = e ? skip_ws(e + 2) : "";
				continue;
			}
			break;
		}
		const char *q = p;
		while (is_ident(*q) || (*q == ':' && q[1] == ':'))
			q += *q == ':' ? 2 : 1;
		if (q > p)
			name = xstrndup(p, (size_t)(q - p));
		goto out;
	}
	if (token_is(p, "using")) {
		p = skip_ws(p + 5);
		if (token_is(p, "namespace"))
			goto out;
		const char *q = p;
		while (is_ident(*q) || (*q == ':' && q[1] == ':'))
			q += *q == ':' ? 2 : 1;
		if (q > p)
			name = xstrndup(p, (size_t)(q - p));
		goto out;
	}
	/* a function (the name before the first call parenthesis) or a variable */
	int angle = 0;
	for (const char *q = p; *q; q++) {
		if (*q == '<' && q[1] != '<' && (q == p || q[-1] != '<'))
			angle++;
		else if (*q == '>' && angle > 0 && q[-1] != '-')
			angle--;
		else if (*q == '{' || *q == ';')
			break;
		else if (*q == '=' && angle == 0 && q[1] != '=' && q[-1] != '=' && q[-1] != '!' &&
			 q[-1] != '<' && q[-1] != '>' && !strstr(p, "operator")) {
			const char *e = q;
			while (e > p && e[-1] == ' ')
				e--;
			const char *b = e;
			while (b > p && is_ident(b[-1]))
				b--;
			if (e > b)
				name = xstrndup(b, (size_t)(e - b));
			goto out;
		} else if (*q == '(' && angle == 0) {
			const char *e = q;
			while (e > p && e[-1] == ' ')
				e--;
			const char *op = NULL;
			for (const char *s = p; (s = strstr(s, "operator")) && s < q + 3; s++)
				if ((s == p || !is_ident(s[-1])) && !is_ident(s[8]))
					op = s;
			if (op) {
				const char *oe = op + 8;
				while (*oe == ' ')
					oe++;
				if (oe[0] == '(' && oe[1] == ')')
					oe += 2;
				else
					while (*oe && *oe != '(' && *oe != ' ')
						oe++;
				name = xstrndup(op, (size_t)(oe - op));
				goto out;
			}
			const char *b = e;
			while (b > p && is_ident(b[-1]))
				b--;
			if (e == b)
				continue;
			if ((e - b == 8 && !strncmp(b, "decltype", 8)) || (e - b == 6 && !strncmp(b, "sizeof", 6)) ||
			    (e - b == 7 && !strncmp(b, "alignof", 7)) || is_macro_token(b, (size_t)(e - b)) ||
			    (e - b == 17 && !strncmp(b, "__launch_bounds__", 17))) {
				q = skip_balanced(q, '(', ')') - 1;
				continue;
			}
			name = xstrndup(b, (size_t)(e - b));
			goto out;
		}
	}
out:
	free(code);
	return name;
}

/* ---- chunkers ------------------------------------------------------------------------------- */

/* lines[0..nlines] are line offsets with lines[nlines] == len; emits lines a..b (0-based,
 * inclusive), split into parts at the size cap. */
static void emit(rag_chunk_fn fn, void *data, const char *title, const char *text,
		 const size_t *lines, int a, int b)
{
	if (a < 0)
		a = 0;
	while (a <= b) {
		size_t start = lines[a];
		int e = a;
		while (e < b && lines[e + 2] - start <= RAG_CHUNK_MAX_BYTES)
			e++;
		size_t end = lines[e + 1];
		if (end - start > RAG_CHUNK_MAX_BYTES)
			end = start + RAG_CHUNK_MAX_BYTES;
		fn(data, title ? title : "", a + 1, e + 1, text + start, end - start);
		a = e + 1;
	}
}

static size_t *line_offsets(const char *text, size_t len, int *n)
{
	size_t alloc = 0, nr = 0;
	size_t *lines = NULL;
	ALLOC_GROW(lines, 1, alloc);
	lines[nr++] = 0;
	for (size_t i = 0; i < len; i++)
		if (text[i] == '\n' && i + 1 < len) {
			ALLOC_GROW(lines, nr + 1, alloc);
			lines[nr++] = i + 1;
		}
	ALLOC_GROW(lines, nr + 1, alloc);
	lines[nr] = len;
	*n = (int)nr;
	return lines;
}

#define MAX_NEST 256

void rag_chunk_cpp(const char *text, size_t len, rag_chunk_fn fn, void *data)
{
	int n;
	size_t *lines = line_offsets(text, len, &n);
	unsigned char transparent[MAX_NEST];
	int raw = 0, depth = 0, in_comment = 0;
	int start = -1, in_decl = 0, decl_code = -1, ns_pending = 0, paren = 0;
	for (int i = 0; i < n; i++) {
		const char *s = text + lines[i], *e = text + lines[i + 1];
		const char *p = s;
		while (p < e && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
			p++;
		int blank = p == e;
		int comment_only = in_comment || (p + 1 < e && p[0] == '/' && (p[1] == '/' || p[1] == '*'));
		int preproc = !in_comment && p < e && *p == '#';
		int ns_line = !in_comment && depth == 0 &&
			      ((e - p > 9 && !strncmp(p, "namespace", 9) && !is_ident(p[9])) ||
			       (e - p > 10 && !strncmp(p, "extern \"C\"", 10)));
		int starts_decl = 0;
		if (depth == 0 && !in_decl) {
			if (blank || preproc) {
				start = -1;
				if (preproc)
					continue;
			} else if (comment_only && !in_decl) {
				if (start < 0)
					start = i;
			}
		}
		/* scan the code on this line */
		int closed_to_zero = 0, semi_at_zero = 0, code = 0;
		char quote = 0;
		for (const char *q = s; q < e; q++) {
			if (in_comment) {
				if (q + 1 < e && q[0] == '*' && q[1] == '/') {
					in_comment = 0;
					q++;
				}
				continue;
			}
			if (quote) {
				if (*q == '\\')
					q++;
				else if (*q == quote || *q == '\n')
					quote = 0;
				continue;
			}
			if (q + 1 < e && q[0] == '/' && q[1] == '/')
				break;
			if (q + 1 < e && q[0] == '/' && q[1] == '*') {
				in_comment = 1;
				q++;
				continue;
			}
			if (preproc)
				continue;
			if (*q == '"' || (*q == '\'' && (q == s || !isxdigit((unsigned char)q[-1])))) {
				quote = *q;
				code = 1;
				continue;
			}
			if (!isspace((unsigned char)*q))
				code = 1;
			if (*q == '{') {
				int tr = depth == 0 && !in_decl && (ns_line || ns_pending);
				ns_pending = 0;
				if (raw < MAX_NEST)
					transparent[raw] = (unsigned char)tr;
				raw++;
				if (!tr)
					depth++;
			} else if (*q == '}') {
				if (raw > 0) {
					raw--;
					int tr = raw < MAX_NEST ? transparent[raw] : 0;
					/* "= {}" default arguments close no body */
					if (!tr && depth > 0 && --depth == 0 && paren == 0)
						closed_to_zero = 1;
				}
			} else if (*q == ';' && depth == 0 && paren == 0) {
				semi_at_zero = 1;
			} else if (*q == '(' && depth == 0) {
				paren++;
			} else if (*q == ')' && depth == 0 && paren > 0) {
				paren--;
			}
			if (code && depth == 0 && !in_decl && !ns_line && !ns_pending && !starts_decl &&
			    !isspace((unsigned char)*q) && *q != '}' && *q != ';' && *q != '{') {
				starts_decl = 1;
				in_decl = 1;
				decl_code = i;
				if (start < 0)
					start = i;
			}
		}
		if (ns_line && !memchr(s, '{', (size_t)(e - s)))
			ns_pending = 1; /* "namespace cute" with its brace on the next line */
		if (ns_line && in_decl && start >= 0 && i > start) {
			/* a declaration left open (a macro call without ';') ends at a namespace */
			char *title = rag_decl_name(text + lines[decl_code], lines[i] - lines[decl_code]);
			emit(fn, data, title, text, lines, start, i - 1);
			free(title);
			in_decl = 0;
			paren = 0;
			depth = 0;
		}
		if (ns_line || (!in_decl && code)) {
			/* namespace lines and stray closing braces belong to no chunk */
			start = -1;
			continue;
		}
		if (in_decl && depth == 0 && (closed_to_zero || semi_at_zero)) {
			char *title = rag_decl_name(text + lines[decl_code], lines[i + 1] - lines[decl_code]);
			emit(fn, data, title, text, lines, start, i);
			free(title);
			in_decl = 0;
			paren = 0;
			start = -1;
		}
	}
	if (in_decl && start >= 0) {
		char *title = rag_decl_name(text + lines[decl_code], lines[n] - lines[decl_code]);
		emit(fn, data, title, text, lines, start, n - 1);
		free(title);
	}
	free(lines);
}

void rag_chunk_markdown(const char *text, size_t len, const char *file_title, rag_chunk_fn fn,
			void *data)
{
	int n;
	size_t *lines = line_offsets(text, len, &n);
	int start = 0, fence = 0;
	char *title = xstrdup(file_title ? file_title : "");
	for (int i = 0; i <= n; i++) {
		const char *s = i < n ? text + lines[i] : "";
		int heading = 0;
		if (i < n && !strncmp(s, "```", 3))
			fence = !fence;
		else if (i < n && !fence && s[0] == '#') {
			const char *h = s;
			while (*h == '#')
				h++;
			heading = h - s <= 6 && (*h == ' ' || *h == '\t');
		}
		if (i == n || heading) {
			if (i > start) {
				/* skip a preamble of blank lines only */
				int empty = 1;
				for (size_t b = lines[start]; b < lines[i]; b++)
					if (!isspace((unsigned char)text[b]))
						empty = 0;
				if (!empty)
					emit(fn, data, title, text, lines, start, i - 1);
			}
			if (i == n)
				break;
			const char *h = s;
			while (*h == '#')
				h++;
			while (*h == ' ' || *h == '\t')
				h++;
			const char *he = h;
			while (he < text + lines[i + 1] && *he != '\n' && *he != '\r')
				he++;
			free(title);
			title = xstrndup(h, (size_t)(he - h));
			start = i;
		}
	}
	free(title);
	free(lines);
}

/* ---- building ------------------------------------------------------------------------------- */

char *rag_default_db_path(void)
{
	const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
	if (x && *x)
		return xasprintf("%s/cutegen/docs.db", x);
	return xasprintf("%s/.cache/cutegen/docs.db", h && *h ? h : "/tmp");
}

struct file_list {
	char **paths; /* relative to the walk's root */
	size_t nr, alloc;
};

static void file_list_release(struct file_list *l)
{
	for (size_t i = 0; i < l->nr; i++)
		free(l->paths[i]);
	free(l->paths);
	memset(l, 0, sizeof(*l));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Files under root/rel (recursively) whose names end in one of exts (NULL-terminated). */
static void walk(const char *root, const char *rel, const char *const *exts, struct file_list *l,
		 int depth)
{
	char *dir = xasprintf("%s/%s", root, rel);
	DIR *d = depth < 12 ? opendir(dir) : NULL;
	free(dir);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char *sub = *rel ? xasprintf("%s/%s", rel, de->d_name) : xstrdup(de->d_name);
		char *full = xasprintf("%s/%s", root, sub);
		struct stat st;
		if (stat(full, &st) == 0 && S_ISDIR(st.st_mode)) {
			walk(root, sub, exts, l, depth + 1);
			free(sub);
		} else if (stat(full, &st) == 0 && S_ISREG(st.st_mode)) {
			int ok = 0;
			for (int i = 0; exts[i]; i++)
				ok |= ends_with(de->d_name, exts[i]);
			if (ok && l->nr < 100000) {
				ALLOC_GROW(l->paths, l->nr + 1, l->alloc);
				l->paths[l->nr++] = sub;
			} else {
				free(sub);
			}
		} else {
			free(sub);
		}
		free(full);
	}
	closedir(d);
}

/* Headers for other architectures than SM80/SM90 and the generated sparse/extended GMMA
 * variants: large, and noise for the kernels cutegen writes. */
static int off_target(const char *path)
{
	static const char *const skip[] = {
		"sparse", "_ext.", "sm100", "sm101", "sm103", "sm110", "sm120", "sm12x", "blackwell",
		"synclog",
	};
	for (size_t i = 0; i < ARRAY_SIZE(skip); i++)
		if (strstr(path, skip[i]))
			return 1;
	return 0;
}

struct builder {
	sqlite3 *db;
	sqlite3_stmt *ins;
	const char *file, *kind;
	size_t chunks, bytes;
	int rc;
};

/*
 * Names the chunk declares inside it: in CUTLASS style a function's name starts its line
 * ("  partition_S(STensor&& stensor) const {"), and so do member aliases ("using X = ...").
 */
static void declared_names(const char *text, size_t len, struct strbuf *out)
{
	for (size_t i = 0; i < len;) {
		size_t j = i;
		while (j < len && (text[j] == ' ' || text[j] == '\t'))
			j++;
		size_t b = j;
		if (j + 6 < len && !strncmp(text + j, "using ", 6))
			b = j = j + 6;
		while (j < len && is_ident(text[j]))
			j++;
		size_t e = j;
		while (j < len && text[j] == ' ')
			j++;
		if (e > b && e - b < 64 && is_ident_start(text[b]) && j < len &&
		    (text[j] == '(' || text[j] == '=') && !(e - b == 6 && !strncmp(text + b, "return", 6)) &&
		    !(e - b == 2 && !strncmp(text + b, "if", 2)) && !(e - b == 3 && !strncmp(text + b, "for", 3)) &&
		    !(e - b == 5 && !strncmp(text + b, "while", 5)) && !(e - b == 6 && !strncmp(text + b, "switch", 6)) &&
		    !(text[j] == '=' && strncmp(text + (b >= 6 ? b - 6 : b), "using ", 6))) {
			strbuf_add(out, text + b, e - b);
			strbuf_addch(out, ' ');
		}
		while (i < len && text[i] != '\n')
			i++;
		i++;
	}
}

static void add_chunk(void *data, const char *title, int start, int end, const char *text, size_t len)
{
	struct builder *b = data;
	if (b->rc != SQLITE_OK && b->rc != SQLITE_DONE)
		return;
	sqlite3_reset(b->ins);
	sqlite3_bind_text(b->ins, 1, title, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(b->ins, 2, text, (int)len, SQLITE_TRANSIENT);
	sqlite3_bind_text(b->ins, 3, b->file, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(b->ins, 4, start);
	sqlite3_bind_int(b->ins, 5, end);
	sqlite3_bind_text(b->ins, 6, b->kind, -1, SQLITE_STATIC);
	struct strbuf names = STRBUF_INIT;
	if (strcmp(b->kind, "note"))
		declared_names(text, len, &names);
	sqlite3_bind_text(b->ins, 7, names.buf, (int)names.len, SQLITE_TRANSIENT);
	b->rc = sqlite3_step(b->ins);
	strbuf_release(&names);
	b->chunks++;
	b->bytes += len;
}

static void index_text(struct builder *b, const char *file, const char *kind, const char *text,
		       size_t len)
{
	b->file = file;
	b->kind = kind;
	if (ends_with(file, ".md")) {
		const char *base = strrchr(file, '/');
		rag_chunk_markdown(text, len, base ? base + 1 : file, add_chunk, b);
	} else {
		rag_chunk_cpp(text, len, add_chunk, b);
	}
}

/* What the index is built from; equal fingerprints mean an index need not be rebuilt. */
static void fingerprint(const char *inc, const char *examples, const char *notes_dir, int all,
			char hex[65])
{
	struct sha256 h;
	sha256_init(&h);
	char *ver = paths_cutlass_version(inc);
	char *head = xasprintf("%s\n%s\n%s\n%s\n%d\n", RAG_SCHEMA_VERSION, inc, ver,
			       examples ? examples : "", all);
	sha256_update(&h, head, strlen(head));
	free(head);
	free(ver);
	if (notes_dir) {
		struct file_list l = { 0 };
		const char *const md[] = { ".md", NULL };
		walk(notes_dir, "", md, &l, 0);
		if (l.nr)
		qsort(l.paths, l.nr, sizeof(char *), cmp_str);
		for (size_t i = 0; i < l.nr; i++) {
			struct strbuf sb = STRBUF_INIT;
			char *p = xasprintf("%s/%s", notes_dir, l.paths[i]);
			if (strbuf_read_file(&sb, p, RAG_FILE_MAX_BYTES) == 0) {
				sha256_update(&h, l.paths[i], strlen(l.paths[i]) + 1);
				sha256_update(&h, sb.buf, sb.len);
			}
			free(p);
			strbuf_release(&sb);
		}
		file_list_release(&l);
	} else {
		for (const struct embedded_file *f = embedded_files; f->name; f++)
			if (starts_with(f->name, "docs/cute/") && ends_with(f->name, ".md")) {
				sha256_update(&h, f->name, strlen(f->name) + 1);
				sha256_update(&h, f->data, f->len);
			}
	}
	sha256_final_hex(&h, hex);
}

struct sources {
	char *inc, *examples;
};

static int resolve_sources(const struct rag_build_opts *o, struct sources *s, char **err)
{
	s->inc = o->cutlass_include ? xstrdup(o->cutlass_include) : build_find_cutlass_include();
	if (!s->inc) {
		*err = xstrdup("no CUTLASS/CuTe headers found; run 'make deps' or set CUTLASS_DIR");
		return -1;
	}
	if (o->examples_dir)
		s->examples = xstrdup(o->examples_dir);
	else {
		s->examples = xasprintf("%s/../examples/cute", s->inc);
		if (!dir_exists(s->examples)) {
			free(s->examples);
			s->examples = NULL;
		}
	}
	return 0;
}

static int index_tree(struct builder *b, const char *root, const char *sub, const char *prefix,
		      const char *kind, const char *const *exts, int all, size_t *files)
{
	struct file_list l = { 0 };
	walk(root, sub, exts, &l, 0);
	if (l.nr)
		qsort(l.paths, l.nr, sizeof(char *), cmp_str);
	for (size_t i = 0; i < l.nr; i++) {
		if (!all && off_target(l.paths[i]))
			continue;
		struct strbuf sb = STRBUF_INIT;
		char *p = xasprintf("%s/%s", root, l.paths[i]);
		if (strbuf_read_file(&sb, p, RAG_FILE_MAX_BYTES) == 0) {
			char *name = xasprintf("%s%s", prefix, l.paths[i]);
			index_text(b, name, kind, sb.buf, sb.len);
			free(name);
			(*files)++;
		}
		free(p);
		strbuf_release(&sb);
		if (b->rc != SQLITE_DONE && b->rc != SQLITE_OK)
			break;
	}
	file_list_release(&l);
	return b->rc == SQLITE_DONE || b->rc == SQLITE_OK ? 0 : -1;
}

int rag_build(const char *db_path, const struct rag_build_opts *o, struct rag_build_stats *stats,
	      char **err)
{
	struct sources src = { 0 };
	struct builder b = { 0 };
	char *tmp = NULL, *dir = NULL, *target = NULL, fp[65];
	int rc = -1;
	double t0 = now_s();
	size_t files = 0;
	*err = NULL;
	/* the index is renamed into place: onto a symbolic link's target, never over a device */
	if (replace_target(db_path, &target)) {
		if (errno == EISDIR || errno == EINVAL)
			*err = xasprintf("cannot write the index to '%s': it is %s, not a regular file "
					 "(the index is an SQLite database; name a file with --out)",
					 db_path, path_kind(db_path));
		else
			*err = xasprintf("cannot write the index to '%s': %s", db_path, strerror(errno));
		goto out;
	}
	db_path = target;
	if (resolve_sources(o, &src, err))
		goto out;
	dir = xstrdup(db_path);
	char *slash = strrchr(dir, '/');
	if (slash) {
		*slash = 0;
		if (*dir && mkdir_p(dir)) {
			*err = xasprintf("cannot make the directory '%s'", dir);
			goto out;
		}
	}
	tmp = xasprintf("%s.tmp-%d", db_path, (int)getpid());
	unlink(tmp);
	if (sqlite3_open(tmp, &b.db) != SQLITE_OK) {
		*err = xasprintf("cannot create the index '%s': %s", tmp, sqlite3_errmsg(b.db));
		goto out;
	}
	const char *schema =
		"PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
		"CREATE TABLE meta(k TEXT PRIMARY KEY, v TEXT);"
		"CREATE VIRTUAL TABLE chunks USING fts5(title, body, file, names, start UNINDEXED, "
		"end UNINDEXED, kind UNINDEXED, tokenize='porter unicode61');"
		"BEGIN;";
	char *emsg = NULL;
	if (sqlite3_exec(b.db, schema, NULL, NULL, &emsg) != SQLITE_OK) {
		*err = xasprintf("cannot create the index tables (does this SQLite have FTS5?): %s",
				 emsg ? emsg : sqlite3_errmsg(b.db));
		sqlite3_free(emsg);
		goto out;
	}
	if (sqlite3_prepare_v2(b.db, "INSERT INTO chunks(title, body, file, start, end, kind, names) "
			       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", -1, &b.ins, NULL) != SQLITE_OK) {
		*err = xasprintf("cannot prepare the index insert: %s", sqlite3_errmsg(b.db));
		goto out;
	}
	b.rc = SQLITE_OK;
	const char *const hpp[] = { ".hpp", NULL }, *const h[] = { ".h", ".hpp", NULL };
	const char *const cu[] = { ".cu", ".cuh", ".hpp", NULL }, *const md[] = { ".md", NULL };
	int r = index_tree(&b, src.inc, "cute", "", "header", hpp, o->all_arches, &files);
	if (!r)
		r = index_tree(&b, src.inc, "cutlass/arch", "", "header", h, o->all_arches, &files);
	if (!r)
		r = index_tree(&b, src.inc, "cutlass/pipeline", "", "header", h, o->all_arches, &files);
	static const char *const numeric[] = { "cutlass/numeric_types.h", "cutlass/numeric_conversion.h",
					       "cutlass/numeric_size.h", "cutlass/barrier.h" };
	for (size_t i = 0; !r && i < ARRAY_SIZE(numeric); i++) {
		struct strbuf sb = STRBUF_INIT;
		char *p = xasprintf("%s/%s", src.inc, numeric[i]);
		if (strbuf_read_file(&sb, p, RAG_FILE_MAX_BYTES) == 0) {
			index_text(&b, numeric[i], "header", sb.buf, sb.len);
			files++;
		}
		free(p);
		strbuf_release(&sb);
	}
	if (!r && src.examples)
		r = index_tree(&b, src.examples, "", "examples/cute/", "example", cu, o->all_arches, &files);
	if (!r && o->notes_dir)
		r = index_tree(&b, o->notes_dir, "", "docs/cute/", "note", md, 1, &files);
	else if (!r)
		for (const struct embedded_file *f = embedded_files; f->name; f++)
			if (starts_with(f->name, "docs/cute/") && ends_with(f->name, ".md")) {
				index_text(&b, f->name, "note", f->data, f->len);
				files++;
			}
	if (r || (b.rc != SQLITE_DONE && b.rc != SQLITE_OK)) {
		*err = xasprintf("cannot write the index: %s", sqlite3_errmsg(b.db));
		goto out;
	}
	fingerprint(src.inc, src.examples, o->notes_dir, o->all_arches, fp);
	char *meta = sqlite3_mprintf("INSERT INTO meta VALUES('fingerprint', %Q);"
				     "INSERT INTO chunks(chunks) VALUES('optimize'); COMMIT;", fp);
	int er = sqlite3_exec(b.db, meta, NULL, NULL, &emsg);
	sqlite3_free(meta);
	if (er != SQLITE_OK) {
		*err = xasprintf("cannot finish the index: %s", emsg ? emsg : "");
		sqlite3_free(emsg);
		goto out;
	}
	sqlite3_finalize(b.ins);
	b.ins = NULL;
	sqlite3_close(b.db);
	b.db = NULL;
	if (rename(tmp, db_path)) {
		*err = xasprintf("cannot move the index into place at '%s': %s", db_path,
				 strerror(errno));
		goto out;
	}
	if (stats) {
		stats->files = files;
		stats->chunks = b.chunks;
		stats->bytes = b.bytes;
		stats->seconds = now_s() - t0;
	}
	rc = 0;
out:
	if (b.ins)
		sqlite3_finalize(b.ins);
	if (b.db)
		sqlite3_close(b.db);
	if (rc && tmp)
		unlink(tmp);
	free(tmp);
	free(dir);
	free(target);
	free(src.inc);
	free(src.examples);
	return rc;
}

struct rag *rag_open(const char *db_path, char **err)
{
	sqlite3 *db = NULL;
	*err = NULL;
	if (!file_exists(db_path)) {
		*err = xasprintf("no index at '%s'; build it with 'cutegen docs index'", db_path);
		return NULL;
	}
	if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		*err = xasprintf("cannot open the index '%s': %s", db_path, sqlite3_errmsg(db));
		sqlite3_close(db);
		return NULL;
	}
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, "SELECT v FROM meta WHERE k='fingerprint'", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW) {
		*err = xasprintf("'%s' is not a cutegen docs index; rebuild it with 'cutegen docs index'", db_path);
		sqlite3_finalize(st);
		sqlite3_close(db);
		return NULL;
	}
	sqlite3_finalize(st);
	struct rag *r = xcalloc(1, sizeof(*r));
	r->db = db;
	return r;
}

static char *stored_fingerprint(struct rag *r)
{
	sqlite3_stmt *st = NULL;
	char *v = NULL;
	if (sqlite3_prepare_v2(r->db, "SELECT v FROM meta WHERE k='fingerprint'", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		v = xstrdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return v;
}

struct rag *rag_open_default(const char *db_path, int *built, char **err)
{
	char *path = db_path ? xstrdup(db_path) : rag_default_db_path();
	struct rag_build_opts o = RAG_BUILD_OPTS_INIT;
	struct sources src = { 0 };
	struct rag *r = NULL;
	char fp[65];
	if (built)
		*built = 0;
	*err = NULL;
	if (resolve_sources(&o, &src, err))
		goto out;
	fingerprint(src.inc, src.examples, NULL, 0, fp);
	char *e = NULL;
	r = rag_open(path, &e);
	free(e);
	if (r) {
		char *have = stored_fingerprint(r);
		int fresh = have && !strcmp(have, fp);
		free(have);
		if (fresh)
			goto out;
		rag_close(r);
		r = NULL;
	}
	if (rag_build(path, &o, NULL, err))
		goto out;
	if (built)
		*built = 1;
	r = rag_open(path, err);
out:
	free(path);
	free(src.inc);
	free(src.examples);
	return r;
}

void rag_close(struct rag *r)
{
	if (!r)
		return;
	sqlite3_close(r->db);
	free(r);
}

/* ---- searching ------------------------------------------------------------------------------ */

static int stopword(const char *w)
{
	static const char *const words[] = {
		"a", "an", "the", "and", "or", "of", "to", "in", "on", "for", "with", "how", "what",
		"is", "are", "be", "by", "do", "does", "use", "using", "from", "this", "that", "it",
		"as", "at", "not", "no", "into", "when", "why", "can", "i", "my", "we", "you", "via",
	};
	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		if (!strcasecmp(w, words[i]))
			return 1;
	return 0;
}

/* Splits a query into words (identifiers kept whole: make_tiled_copy, Copy_Atom). */
static int query_words(const char *q, char words[][64], int max)
{
	int n = 0;
	for (const char *p = q; *p && n < max;) {
		if (!is_ident(*p)) {
			p++;
			continue;
		}
		const char *b = p;
		while (is_ident(*p))
			p++;
		size_t len = (size_t)(p - b);
		while (len && *b == '_') {
			b++;
			len--;
		}
		if (len < 2 || len >= 64)
			continue;
		char w[64];
		memcpy(w, b, len);
		w[len] = 0;
		if (stopword(w))
			continue;
		int dup = 0;
		for (int i = 0; i < n; i++)
			dup |= !strcmp(words[i], w);
		if (!dup)
			strcpy(words[n++], w);
	}
	return n;
}

void rag_hits_free(struct rag_hit *hits, int n)
{
	for (int i = 0; i < n; i++) {
		free(hits[i].file);
		free(hits[i].title);
		free(hits[i].kind);
		free(hits[i].text);
	}
	free(hits);
}

/* `w` is one of the space-separated words of `list`. */
static int has_word(const char *list, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = list; (p = strstr(p, w)); p++)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return 1;
	return 0;
}

static int hit_cmp(const void *a, const void *b)
{
	double x = ((const struct rag_hit *)a)->score, y = ((const struct rag_hit *)b)->score;
	return x < y ? 1 : x > y ? -1 : 0;
}

int rag_search(struct rag *r, const char *query, int k, struct rag_hit **hits, char **err)
{
	char words[24][64];
	int nw = query_words(query, words, 24);
	*hits = NULL;
	*err = NULL;
	if (!nw || k <= 0)
		return 0;
	struct strbuf m = STRBUF_INIT;
	for (int i = 0; i < nw; i++) {
		/* a phrase of the identifier's parts, as the tokenizer splits it */
		strbuf_addstr(&m, i ? " OR \"" : "\"");
		for (const char *c = words[i]; *c; c++)
			strbuf_addch(&m, *c == '_' ? ' ' : *c);
		strbuf_addch(&m, '"');
	}
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(r->db,
		"SELECT file, start, end, title, kind, body, bm25(chunks, 10.0, 1.0, 2.0, 5.0), names "
		"FROM chunks WHERE chunks MATCH ?1 ORDER BY bm25(chunks, 10.0, 1.0, 2.0, 5.0) LIMIT ?2", -1, &st, NULL);
	if (rc != SQLITE_OK) {
		*err = xasprintf("index query failed: %s", sqlite3_errmsg(r->db));
		strbuf_release(&m);
		return -1;
	}
	sqlite3_bind_text(st, 1, m.buf, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 2, k * 8 > 80 ? k * 8 : 80);
	struct rag_hit *h = NULL;
	size_t nh = 0, alloc = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ALLOC_GROW(h, nh + 1, alloc);
		struct rag_hit *x = &h[nh++];
		x->file = xstrdup((const char *)sqlite3_column_text(st, 0));
		x->start = sqlite3_column_int(st, 1);
		x->end = sqlite3_column_int(st, 2);
		x->title = xstrdup((const char *)sqlite3_column_text(st, 3));
		x->kind = xstrdup((const char *)sqlite3_column_text(st, 4));
		x->text = xstrdup((const char *)sqlite3_column_text(st, 5));
		double score = -sqlite3_column_double(st, 6);
		const char *names = (const char *)sqlite3_column_text(st, 7);
		/* a chunk that declares a name the query gives outranks mentions of it; earlier
		 * query words (the error's own identifiers come first) weigh more */
		double boost = 1;
		for (int i = 0; i < nw; i++) {
			const char *t = x->title, *dc = strrchr(t, ':');
			if (dc)
				t = dc + 1;
			int ident = strchr(words[i], '_') || strlen(words[i]) > 3;
			double b = 1;
			if (ident && !strcasecmp(t, words[i]))
				b = i == 0 ? 4 : i == 1 ? 3 : 2; /* declares it */
			else if (ident && strchr(words[i], '_') && names && has_word(names, words[i]))
				b = i == 0 ? 3 : i == 1 ? 2.2 : 1.5; /* declares it as a member */
			if (b > boost)
				boost = b;
		}
		x->score = score * boost;
	}
	sqlite3_finalize(st);
	strbuf_release(&m);
	if (rc != SQLITE_DONE) {
		*err = xasprintf("index query failed: %s", sqlite3_errmsg(r->db));
		rag_hits_free(h, (int)nh);
		return -1;
	}
	qsort(h, nh, sizeof(*h), hit_cmp);
	int n = nh < (size_t)k ? (int)nh : k;
	for (size_t i = (size_t)n; i < nh; i++) {
		free(h[i].file);
		free(h[i].title);
		free(h[i].kind);
		free(h[i].text);
	}
	*hits = h;
	return n;
}

/* Appends hits[0..n) that fit the budget (the first cut to fit); returns how many. */
static int append_hits(struct rag_hit *h, int n, int k, size_t byte_budget, struct strbuf *out)
{
	int added = 0;
	size_t used = 0;
	for (int i = 0; i < n && added < k; i++) {
		char *head = xasprintf("// %s:%d-%d  %s\n", h[i].file, h[i].start, h[i].end, h[i].title);
		size_t need = strlen(head) + strlen(h[i].text) + 1;
		if (used + need > byte_budget) {
			if (added || strlen(head) + 64 > byte_budget) {
				free(head);
				break;
			}
			/* the best chunk, cut to fit */
			size_t room = byte_budget - strlen(head) - 1;
			strbuf_addstr(out, head);
			strbuf_add(out, h[i].text, room);
			strbuf_addch(out, '\n');
			free(head);
			added++;
			break;
		}
		strbuf_addstr(out, head);
		strbuf_addstr(out, h[i].text);
		if (!h[i].text[0] || h[i].text[strlen(h[i].text) - 1] != '\n')
			strbuf_addch(out, '\n');
		used += need;
		free(head);
		added++;
	}
	return added;
}

int rag_query(struct rag *r, const char *query, int k, size_t byte_budget, struct strbuf *out)
{
	struct rag_hit *h = NULL;
	char *err = NULL;
	int n = rag_search(r, query, k, &h, &err);
	free(err);
	if (n < 0)
		return -1;
	int added = append_hits(h, n, k, byte_budget, out);
	rag_hits_free(h, n);
	return added;
}

/* ---- retrieval for a situation ---------------------------------------------------------------- */

static int has_ci(const char *hay, const char *needle)
{
	size_t k = strlen(needle);
	for (const char *p = hay; *p; p++)
		if (!strncasecmp(p, needle, k))
			return 1;
	return 0;
}

/* Topics that do not fit a situation, each as the words that give a chunk away. */
static const char *const pdl_words[] = { "wait_on_dependent_grids", "launch_dependent_grids",
					 "griddepcontrol", "GridDependency", NULL };
static const char *const mma_words[] = { "make_tiled_mma", "TiledMMA", "MMA_Atom", "mma_unpack",
					 "GMMA", "warpgroup", "tcgen05", "UMMA", "mma.sync",
					 "partition_fragment", NULL };
static const char *const tensor_core_words[] = { "GMMA", "warpgroup", "tcgen05", "UMMA", "tf32",
						 "tfloat32", "tensor core", "half_t", "bfloat16",
						 "SM80_16x8", "mma.sync", NULL };

/* Whether a hit speaks of a topic (one of words) that the query (the error, the stage's
 * topic) did not ask for: a query naming any of the words asks for the whole topic. */
static int off_topic(const struct rag_hit *h, const char *const *words, const char *asked)
{
	for (const char *const *w = words; *w; w++)
		if (has_ci(asked, *w))
			return 0;
	for (const char *const *w = words; *w; w++)
		if (has_ci(h->title, *w) || has_ci(h->text, *w))
			return 1;
	return 0;
}

/* What to read about a failure that is not a compile error, by the words that give it away. */
static const struct {
	const char *needle, *topic;
} failure_topics[] = {
	{ "never written", "copy_if elem_less make_identity_tensor predication" },
	{ "misaligned address", "recast alignment uint128_t" },
	{ "illegal memory access", "elem_less copy_if make_identity_tensor" },
	{ "out of bounds", "elem_less copy_if make_identity_tensor" },
	{ "too many resources requested", "launch bounds registers" },
	{ "shared memory", "shared memory layout smem" },
};

int rag_retrieve(struct rag *r, const struct rag_situation *sit, int k, size_t byte_budget,
		 struct strbuf *out)
{
	struct strbuf q = STRBUF_INIT;
	if (sit->error && *sit->error)
		rag_terms_from_error(sit->error, &q);
	for (size_t i = 0; sit->failure && i < ARRAY_SIZE(failure_topics); i++)
		if (has_ci(sit->failure, failure_topics[i].needle)) {
			strbuf_addf(&q, "%s%s", q.len ? " " : "", failure_topics[i].topic);
			break;
		}
	if (sit->stage_topic && *sit->stage_topic)
		strbuf_addf(&q, "%s%s", q.len ? " " : "", sit->stage_topic);
	if (!q.len) {
		strbuf_release(&q);
		return 0;
	}
	struct rag_hit *h = NULL;
	char *err = NULL;
	int n = rag_search(r, q.buf, k * 6, &h, &err);
	free(err);
	if (n < 0) {
		strbuf_release(&q);
		return -1;
	}
	/* drop what does not fit the task: its class, its contract, the step it is at */
	int kept = 0;
	for (int i = 0; i < n; i++) {
		int drop = off_topic(&h[i], pdl_words, q.buf) ||
			   (sit->memory_bound && off_topic(&h[i], mma_words, q.buf)) ||
			   (sit->strict_fp32 && off_topic(&h[i], tensor_core_words, q.buf));
		/* another overload of a name already taken says little new */
		for (int j = 0; j < kept && !drop; j++)
			drop = !strcmp(h[j].title, h[i].title);
		if (drop) {
			free(h[i].file);
			free(h[i].title);
			free(h[i].kind);
			free(h[i].text);
			continue;
		}
		h[kept++] = h[i];
	}
	int added = append_hits(h, kept, k, byte_budget, out);
	rag_hits_free(h, kept);
	strbuf_release(&q);
	return added;
}

/* ---- identifiers from compile errors ---------------------------------------------------------- */

static int noise_identifier(const char *w, size_t n)
{
	static const char *const words[] = {
		"const", "volatile", "int", "float", "double", "char", "bool", "void", "long",
		"short", "unsigned", "signed", "auto", "class", "struct", "typename", "template",
		"decltype", "operator", "static", "constexpr", "inline", "return", "sizeof", "std",
		"cute", "cutlass", "detail", "error", "note", "warning", "instantiation", "detected",
		"during", "required", "from", "here", "with", "argument", "types", "type", "line",
		"file", "function", "overloaded", "instance", "matches", "list", "member", "has",
		"no", "of", "in", "at", "and", "the", "is", "not", "failed", "static_assert",
		"assertion", "expression", "__device__", "__host__", "__global__", "true", "false",
		"nullptr", "this", "kernel", "Args", "Engine", "Layout", "Shape", "Stride", "Tensor",
		"SEngine", "SLayout", "DEngine", "DLayout", "TA", "TB", "TC", "uint128_t", "half_t",
		"bfloat16_t", "tfloat32_t", "float_e4m3_t", "underscore", "integral_constant",
		"tuple", "Int", "int32_t", "int64_t", "uint32_t", "uint64_t", "size_t",
	};
	if (n < 3)
		return 1;
	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		if (strlen(words[i]) == n && !strncmp(w, words[i], n))
			return 1;
	if (w[0] == '_' && isdigit((unsigned char)w[1]))
		return 1;
	/* template parameter names: one capital letter word of <= 2 chars handled above; plain
	 * lower-case English words say nothing about CuTe */
	int underscore = memchr(w, '_', n) != NULL, upper = 0, digit = 0;
	for (size_t i = 0; i < n; i++) {
		upper |= isupper((unsigned char)w[i]);
		digit |= isdigit((unsigned char)w[i]);
	}
	if (n > 2 && w[n - 2] == '_' && w[n - 1] == 't')
		return 1;
	return !underscore && !upper && !digit;
}

/*
 * How much b (a name inside line) is the subject of an error: 2 for the quoted member of
 * 'has no member "partition_S"', 1 for another name that opens a quoted string
 * ('"cute::make_tiled_copy"'), 0 otherwise.
 */
static int subject_quote(const char *line, const char *b)
{
	const char *p = b;
	while (p > line && (is_ident(p[-1]) || p[-1] == ':'))
		p--;
	if (p == line || p[-1] != '"')
		return 0;
	if (p - line >= 8 && !strncmp(p - 8, "member \"", 8))
		return 2;
	return 1;
}

struct term {
	char w[80];
	int score, first;
};

void rag_terms_from_error(const char *text, struct strbuf *query)
{
	struct term terms[64];
	int nt = 0, order = 0;
	/* two passes: error lines, then the rest (instantiation context) */
	for (int pass = 0; pass < 2; pass++) {
		for (const char *line = text; line && *line;) {
			const char *eol = strchr(line, '\n');
			size_t ll = eol ? (size_t)(eol - line) : strlen(line);
			int is_err = 0;
			for (const char *s = line; s + 6 <= line + ll; s++)
				if (!strncmp(s, "error", 5) && (s[5] == ':' || s[5] == ' ')) {
					is_err = 1;
					break;
				}
			if (is_err == !pass) {
				for (const char *p = line; p < line + ll;) {
					if (!is_ident_start((unsigned char)*p) || (p > line && is_ident(p[-1]))) {
						p++;
						continue;
					}
					const char *b = p;
					while (p < line + ll && is_ident(*p))
						p++;
					size_t n = (size_t)(p - b);
					if (n >= sizeof(terms[0].w) || noise_identifier(b, n))
						continue;
					int qualified = b >= line + 2 && b[-1] == ':' && b[-2] == ':';
					/* the error's subject is quoted: has no member "partition_S",
					 * no instance of overloaded function "cute::make_tiled_copy" */
					int subject = pass == 0 ? subject_quote(line, b) : 0;
					int sc = (pass == 0 ? 4 : 1) + (qualified ? 2 : 0) + 6 * subject +
						 (memchr(b, '_', n) ? 1 : 0);
					int found = -1;
					for (int i = 0; i < nt; i++)
						if (strlen(terms[i].w) == n && !strncmp(terms[i].w, b, n))
							found = i;
					if (found >= 0) {
						if (sc > terms[found].score)
							terms[found].score = sc;
					} else if (nt < (int)ARRAY_SIZE(terms)) {
						memcpy(terms[nt].w, b, n);
						terms[nt].w[n] = 0;
						terms[nt].score = sc;
						terms[nt].first = order++;
						nt++;
					}
				}
			}
			line = eol ? eol + 1 : NULL;
		}
	}
	/* best score first, then first appearance */
	for (int i = 1; i < nt; i++)
		for (int j = i; j > 0; j--) {
			struct term *a = &terms[j - 1], *b = &terms[j];
			if (b->score > a->score || (b->score == a->score && b->first < a->first)) {
				struct term t = *a;
				*a = *b;
				*b = t;
			}
		}
	for (int i = 0; i < nt && i < 10; i++)
		strbuf_addf(query, "%s%s", query->len ? " " : "", terms[i].w);
}
