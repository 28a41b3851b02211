/*
 * The builtin agent's families and policy (see builtin_policy.h and builtin/README.md).
 */
#include "agent/builtin_policy.h"
#include "common/embedded.h"
#include "util/fsutil.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEMPLATE_MAX ((size_t)1 << 20)
#define SM90_SMS 132 /* used only to prune split-K candidates; any Hopper part is close */

/* ---- which family ---- */

/*
 * Whether gemm_sm90 can take a GEMM task (what its cutegen_launch returns 2 for, decided
 * before any candidate is built): K > 0 and sizes below 2^31. fp32 inputs go there under the
 * `tf32` contract only (as tf32, fp32 out); fp8 and tf32 WGMMA read both operands K-major, so
 * an MN-major one (A col, B row: `A @ B`) is transposed into the workspace first. Any row
 * length: an operand whose rows are not a multiple of 16 bytes (TMA's stride rule) is copied
 * to a padded one in the workspace first (gemm_sm90's pad path, issue 20); a task whose copies or split-K partials exceed its workspace limit is refused by every
 * candidate at run time and moves to gemm_simt then (builtin_fallback_file).
 */
static int sm90_takes(const struct task *t)
{
	int tf32 = t->in_dtype == DT_FP32;
	if (tf32 && (t->precision != PREC_TF32 || t->out_dtype != DT_FP32))
		return 0; /* strict fp32: no tensor cores */
	if (t->k <= 0)
		return 0;
	return t->m < INT32_MAX && t->n < INT32_MAX && t->k < INT32_MAX;
}

const char *builtin_fallback_file(const struct task *t, const char *file)
{
	if (t->op == OP_GEMM && file && !strcmp(file, "builtin/gemm_sm90.cu"))
		return "builtin/gemm_simt.cu";
	return NULL;
}

const char *builtin_family_file(const struct task *t, const char *arch, char **err)
{
	switch (t->op) {
	case OP_ELEMENTWISE:
	case OP_SCALAR_MUL:
		if (t->in_dtype == DT_FP8_E4M3)
			break;
		return "builtin/elementwise.cu";
	case OP_DIAG_MATMUL:
		if (t->in_dtype == DT_FP8_E4M3)
			break;
		return "builtin/diag_matmul.cu";
	case OP_MATVEC:
		if (t->in_dtype == DT_FP8_E4M3)
			break;
		return "builtin/matvec.cu";
	case OP_SOFTMAX:
	case OP_LOG_SOFTMAX:
		if (t->in_dtype == DT_FP8_E4M3)
			break;
		return "builtin/rowwise.cu";
	case OP_GEMM:
		/* gemm_sm90 (TMA + WGMMA, misaligned rows padded) where the task meets its
		 * constraints, else gemm_simt, which takes every shape and layout (16-bit and fp8
		 * inputs widened) */
		if ((!arch || !strcmp(arch, "sm_90a")) && sm90_takes(t))
			return "builtin/gemm_sm90.cu";
		return "builtin/gemm_simt.cu";
	default:
		break;
	}
	*err = xasprintf("the builtin agent has no kernel family for %s with %s inputs; use a model "
			 "(--backend openai, anthropic or cmd)", op_name(t->op), dtype_name(t->in_dtype));
	return NULL;
}

/* ---- the space a template declares ---- */

/* The rest of the line after "// cutegen-KEY:" in text, or NULL. */
static char *header_line(const char *text, const char *key)
{
	char tag[48];
	snprintf(tag, sizeof(tag), "cutegen-%s:", key);
	for (const char *p = text; (p = strstr(p, tag)); p += strlen(tag)) {
		const char *ls = p;
		while (ls > text && ls[-1] != '\n')
			ls--;
		const char *q = ls;
		while (q < p && (*q == ' ' || *q == '\t' || *q == '/' || *q == '*'))
			q++;
		if (q != p)
			continue; /* mentioned inside other text, not a header line */
		const char *v = p + strlen(tag);
		const char *nl = strchr(v, '\n');
		return xstrndup(v, nl ? (size_t)(nl - v) : strlen(v));
	}
	return NULL;
}

static int find_param(const struct builtin_space *sp, const char *name, size_t len)
{
	for (int i = 0; i < sp->nparams; i++)
		if (strlen(sp->params[i].name) == len && !strncmp(sp->params[i].name, name, len))
			return i;
	return -1;
}

static int find_value(const struct builtin_param *p, const char *v, size_t len)
{
	for (int i = 0; i < p->nvals; i++)
		if (strlen(p->vals[i]) == len && !strncmp(p->vals[i], v, len))
			return i;
	return -1;
}

static int valid_value(const char *v, size_t len)
{
	/* a number, or two joined by 'x' (a pair) */
	int digits = 0, xs = 0;
	for (size_t i = 0; i < len; i++) {
		if (isdigit((unsigned char)v[i]))
			digits++;
		else if (v[i] == 'x' && digits && i + 1 < len && !xs)
			xs++;
		else
			return 0;
	}
	return digits > 0 && len < BUILTIN_VALUE_LEN;
}

static int valid_name(const char *s, size_t len)
{
	if (len < 6 || len >= 32 || strncmp(s, "CG_P_", 5))
		return 0;
	for (size_t i = 5; i < len; i++)
		if (!isupper((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) && s[i] != '_')
			return 0;
	return 1;
}

/* The next item of the comma-separated list [*v, end) into *item, *len; 0 after the last. */
static int next_item(const char **v, const char *end, const char **item, size_t *len)
{
	if (*v > end)
		return 0;
	const char *c = memchr(*v, ',', (size_t)(end - *v));
	if (!c)
		c = end;
	*item = *v;
	*len = (size_t)(c - *v);
	*v = c + 1;
	return 1;
}

/* Splits "a b  c" into words; calls fn on each; stops at the first nonzero. */
typedef int (*word_fn)(struct builtin_space *sp, const char *w, size_t len, const char *origin,
		       char **err);

static int each_word(struct builtin_space *sp, const char *line, word_fn fn, const char *origin,
		     char **err)
{
	const char *p = line;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '\r')
			return 0;
		const char *e = p;
		while (*e && *e != ' ' && *e != '\t' && *e != '\r')
			e++;
		if (fn(sp, p, (size_t)(e - p), origin, err))
			return -1;
		p = e;
	}
}

static int space_word(struct builtin_space *sp, const char *w, size_t len, const char *origin,
		      char **err)
{
	const char *eq = memchr(w, '=', len);
	if (!eq || !valid_name(w, (size_t)(eq - w))) {
		*err = xasprintf("%s: cutegen-space: '%.*s' is not NAME=V1,V2 with NAME a CG_P_ macro",
				 origin, (int)len, w);
		return -1;
	}
	if (find_param(sp, w, (size_t)(eq - w)) >= 0 || sp->nparams == BUILTIN_PARAMS_MAX) {
		*err = xasprintf("%s: cutegen-space: '%.*s' is declared twice or is one parameter too "
				 "many (at most %d)", origin, (int)(eq - w), w, BUILTIN_PARAMS_MAX);
		return -1;
	}
	struct builtin_param *p = &sp->params[sp->nparams];
	memset(p, 0, sizeof(*p));
	memcpy(p->name, w, (size_t)(eq - w));
	const char *v = eq + 1, *end = w + len, *item;
	size_t n;
	while (next_item(&v, end, &item, &n)) {
		if (!valid_value(item, n) || p->nvals == BUILTIN_VALUES_MAX ||
		    find_value(p, item, n) >= 0) {
			*err = xasprintf("%s: cutegen-space: %s has a bad, repeated or one too many value "
					 "'%.*s' (numbers or pairs like 128x64, at most %d)", origin,
					 p->name, (int)n, item, BUILTIN_VALUES_MAX);
			return -1;
		}
		memcpy(p->vals[p->nvals++], item, n);
	}
	sp->nparams++;
	return 0;
}

static int start_word(struct builtin_space *sp, const char *w, size_t len, const char *origin,
		      char **err)
{
	const char *eq = memchr(w, '=', len);
	int i = eq ? find_param(sp, w, (size_t)(eq - w)) : -1;
	int v = i >= 0 ? find_value(&sp->params[i], eq + 1, (size_t)(w + len - eq - 1)) : -1;
	if (v < 0) {
		*err = xasprintf("%s: cutegen-start: '%.*s' is not a parameter of cutegen-space set to "
				 "one of its values", origin, (int)len, w);
		return -1;
	}
	sp->start[i] = v;
	return 0;
}

static int stage_word(struct builtin_space *sp, const char *w, size_t len, const char *origin,
		      char **err)
{
	const char *eq = memchr(w, '=', len);
	if (!eq || eq == w || (size_t)(eq - w) >= sizeof(sp->stages[0].name) ||
	    sp->nstages == BUILTIN_STAGES_MAX) {
		*err = xasprintf("%s: cutegen-stages: '%.*s' is not NAME=PARAM,PARAM (at most %d "
				 "stages)", origin, (int)len, w, BUILTIN_STAGES_MAX);
		return -1;
	}
	struct builtin_stage *st = &sp->stages[sp->nstages];
	memset(st, 0, sizeof(*st));
	memcpy(st->name, w, (size_t)(eq - w));
	const char *v = eq + 1, *end = w + len, *item;
	size_t n;
	while (next_item(&v, end, &item, &n)) {
		int i = find_param(sp, item, n);
		int again = 0;
		for (int k = 0; k < st->nparams; k++)
			again |= st->params[k] == i;
		if (i < 0 || again) {
			*err = xasprintf("%s: cutegen-stages: stage %s names '%.*s', which cutegen-space "
					 "does not declare or the stage already has", origin, st->name,
					 (int)n, item);
			return -1;
		}
		st->params[st->nparams++] = i;
	}
	sp->nstages++;
	return 0;
}

int builtin_space_parse(const char *text, const char *origin, struct builtin_space *sp,
			char **err)
{
	const char *keys[] = { "space", "start", "stages" };
	word_fn fns[] = { space_word, start_word, stage_word };
	for (int k = 0; k < 3; k++) {
		char *line = header_line(text, keys[k]);
		if (!line) {
			*err = xasprintf("%s has no '// cutegen-%s:' line (builtin/README.md)", origin,
					 keys[k]);
			return -1;
		}
		int r = each_word(sp, line, fns[k], origin, err);
		free(line);
		if (r)
			return -1;
	}
	if (!sp->nparams || !sp->nstages) {
		*err = xasprintf("%s declares no parameters or no stages", origin);
		return -1;
	}
	return 0;
}

static int space_load(const char *file, const char *dir, struct builtin_space *sp, char **err);

int builtin_space_for(const struct task *t, const char *arch, const char *dir,
		      struct builtin_space *sp, char **err)
{
	memset(sp, 0, sizeof(*sp));
	const char *file = builtin_family_file(t, arch, err);
	if (!file)
		return -1;
	return space_load(file, dir, sp, err);
}

int builtin_space_fallback(const struct task *t, const struct builtin_space *cur,
			   const char *dir, struct builtin_space *next, char **err)
{
	char file[64];
	snprintf(file, sizeof(file), "builtin/%s.cu", cur->family);
	const char *f = builtin_fallback_file(t, file);
	memset(next, 0, sizeof(*next));
	if (!f)
		return 0;
	return space_load(f, dir, next, err) ? -1 : 1;
}

static int space_load(const char *file, const char *dir, struct builtin_space *sp, char **err)
{
	const char *base = strrchr(file, '/') + 1;
	if (dir) {
		struct strbuf sb = STRBUF_INIT;
		char *path = xasprintf("%s/%s", dir, base);
		int r = strbuf_read_file(&sb, path, TEMPLATE_MAX);
		if (r) {
			*err = xasprintf("cannot read the builtin family '%s' (CUTEGEN_BUILTIN_DIR): %s",
					 path, r == CG_INPUT_TOOBIG ? "larger than 1 MiB" : "missing or unreadable");
			free(path);
			strbuf_release(&sb);
			return -1;
		}
		sp->file = path;
		sp->text = strbuf_detach(&sb, NULL);
	} else {
		const struct embedded_file *f = embedded_find(file);
		if (!f) {
			*err = xasprintf("this cutegen has no builtin family %s", file);
			return -1;
		}
		sp->file = xstrdup(file);
		sp->text = xstrdup(f->data);
	}
	snprintf(sp->family, sizeof(sp->family), "%.*s", (int)(strlen(base) - 3), base);
	if (builtin_space_parse(sp->text, sp->file, sp, err)) {
		builtin_space_release(sp);
		return -1;
	}
	return 0;
}

void builtin_space_release(struct builtin_space *sp)
{
	free(sp->file);
	free(sp->text);
	memset(sp, 0, sizeof(*sp));
}

/* ---- candidates ---- */

static const char *ctype(enum dtype d)
{
	switch (d) {
	case DT_FP16: return "cute::half_t";
	case DT_BF16: return "cute::bfloat16_t";
	case DT_FP8_E4M3: return "cute::float_e4m3_t";
	default: return "float";
	}
}

static const char *act_functor(enum act a)
{
	switch (a) {
	case ACT_RELU: return "Relu";
	case ACT_LEAKY_RELU: return "LeakyRelu";
	case ACT_SIGMOID: return "Sigmoid";
	case ACT_TANH: return "Tanh";
	case ACT_SWISH: case ACT_SILU: return "Swish";
	case ACT_GELU_ERF: return "GeluErf";
	case ACT_GELU_TANH: return "GeluTanh";
	case ACT_SELU: return "Selu";
	case ACT_HARDSIGMOID: return "HardSigmoid";
	case ACT_SOFTPLUS: return "Softplus";
	case ACT_SOFTSIGN: return "Softsign";
	case ACT_ELU: return "Elu";
	case ACT_HARDTANH: return "HardTanh";
	case ACT_MINGPT_GELU: return "MinGptGelu";
	default: return "Identity";
	}
}

static const char *epi_functor(enum act a)
{
	switch (a) {
	case ACT_RELU: return "EpiRelu";
	case ACT_GELU_ERF: return "EpiGeluErf";
	case ACT_GELU_TANH: return "EpiGeluTanh";
	case ACT_SILU: case ACT_SWISH: return "EpiSilu";
	default: return "EpiIdentity";
	}
}

static int structure_code(enum structure s)
{
	return s == STRUCT_SYMMETRIC ? 1 : s == STRUCT_UPPER ? 2 : s == STRUCT_LOWER ? 3 : 0;
}

void builtin_config_format(const struct builtin_space *sp, const struct builtin_config *cfg,
			   struct strbuf *out)
{
	for (int i = 0; i < sp->nparams; i++)
		strbuf_addf(out, "%s%s=%s", i ? " " : "", sp->params[i].name,
			    sp->params[i].vals[cfg->v[i]]);
}

void builtin_render(const struct builtin_space *sp, const struct task *t,
		    const struct builtin_config *cfg, struct strbuf *out)
{
	strbuf_addf(out, "// cutegen-builtin: family=%s ", sp->family);
	builtin_config_format(sp, cfg, out);
	/* nothing task-specific beyond the macros: tasks that need the same kernel (GEMMs of
	 * other sizes) render the same source, so they share one compile */
	strbuf_addf(out, "\n// Written by cutegen's builtin agent: the kernel family builtin/%s.cu "
			 "with the settings below.\n", sp->family);
	strbuf_addf(out, "#define CG_T_IN %s\n#define CG_T_OUT %s\n",
		    t->in_dtype == DT_FP32 && !strcmp(sp->family, "gemm_sm90") ? "cute::tfloat32_t"
									     : ctype(t->in_dtype),
		    ctype(t->out_dtype));
	switch (t->op) {
	case OP_ELEMENTWISE:
		strbuf_addf(out, "#define CG_ACT %s\n", act_functor(t->act));
		break;
	case OP_SCALAR_MUL:
		strbuf_addstr(out, "#define CG_ACT ScalarMul\n");
		break;
	case OP_SOFTMAX:
	case OP_LOG_SOFTMAX:
		strbuf_addf(out, "#define CG_LOG %d\n", t->op == OP_LOG_SOFTMAX);
		break;
	case OP_GEMM:
		strbuf_addf(out, "#define CG_A_COL %d\n#define CG_B_COL %d\n#define CG_BATCHED %d\n"
				 "#define CG_SPLIT_M %d\n#define CG_A_STRUCT %d\n#define CG_B_STRUCT %d\n"
				 "#define CG_OUT_MASK %d\n#define CG_EPI_BIAS %d\n#define CG_EPI_ACT %s\n",
			    t->a_layout == LAYOUT_COL, t->b_layout == LAYOUT_COL, t->batch > 1,
			    t->m_ndims > 1, structure_code(t->a_struct), structure_code(t->b_struct),
			    t->out_mask == MASK_UPPER ? 1 : t->out_mask == MASK_LOWER ? 2 : 0,
			    t->epi_bias != 0, epi_functor(t->epi_act));
		break;
	default:
		break;
	}
	for (int i = 0; i < sp->nparams; i++) {
		const char *v = sp->params[i].vals[cfg->v[i]];
		const char *x = strchr(v, 'x');
		if (x)
			strbuf_addf(out, "#define %s_0 %.*s\n#define %s_1 %s\n", sp->params[i].name,
				    (int)(x - v), v, sp->params[i].name, x + 1);
		else
			strbuf_addf(out, "#define %s %s\n", sp->params[i].name, v);
	}
	strbuf_addstr(out, sp->text);
}

int builtin_config_parse(const struct builtin_space *sp, const char *text,
			 struct builtin_config *cfg, char **err)
{
	const char *p = text;
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (!*p || *p == '\n' || *p == '\r')
			return 0;
		const char *e = p;
		while (*e && *e != ' ' && *e != '\t' && *e != ',' && *e != '\n' && *e != '\r')
			e++;
		const char *eq = memchr(p, '=', (size_t)(e - p));
		int i = eq ? find_param(sp, p, (size_t)(eq - p)) : -1;
		int v = i >= 0 ? find_value(&sp->params[i], eq + 1, (size_t)(e - eq - 1)) : -1;
		if (v < 0) {
			if (err) {
				struct strbuf sb = STRBUF_INIT;
				for (int k = 0; k < sp->nparams; k++) {
					strbuf_addf(&sb, "%s%s in {", k ? "; " : "", sp->params[k].name);
					for (int j = 0; j < sp->params[k].nvals; j++)
						strbuf_addf(&sb, "%s%s", j ? "," : "", sp->params[k].vals[j]);
					strbuf_addch(&sb, '}');
				}
				*err = xasprintf("'%.*s' is not a setting of the %s family (%s)", (int)(e - p),
						 p, sp->family, sb.buf);
				strbuf_release(&sb);
			}
			return -1;
		}
		cfg->v[i] = v;
		p = e;
	}
}

int builtin_config_of(const struct builtin_space *sp, const char *src, struct builtin_config *cfg)
{
	char head[64];
	int n = snprintf(head, sizeof(head), "// cutegen-builtin: family=%s ", sp->family);
	if (!src || strncmp(src, head, (size_t)n))
		return -1;
	memcpy(cfg->v, sp->start, sizeof(cfg->v));
	struct builtin_config c = *cfg;
	if (builtin_config_parse(sp, src + n, &c, NULL))
		return -1;
	*cfg = c;
	return 0;
}

/* ---- the policy ---- */

/* The number of a parameter's value in cfg (of a pair, the first or second), or dflt. */
static long pval(const struct builtin_space *sp, const struct builtin_config *cfg,
		 const char *name, int second, long dflt)
{
	int i = find_param(sp, name, strlen(name));
	if (i < 0)
		return dflt;
	const char *v = sp->params[i].vals[cfg->v[i]];
	const char *x = strchr(v, 'x');
	long n = strtol(second && x ? x + 1 : v, NULL, 10);
	return n < 1 << 20 ? n : 1 << 20; /* no overflow in the products below */
}

static long ceil_div(long a, long b)
{
	return b > 0 ? (a + b - 1) / b : 0;
}

/* The part of its waves a grid of `tiles` CTAs (one an SM) keeps busy. */
static double wave_fill(long tiles)
{
	return tiles > 0 ? (double)tiles / (double)(ceil_div(tiles, SM90_SMS) * SM90_SMS) : 0;
}

/* The output tiles of a SIMT GEMM candidate: its grid before any split-K. */
static long simt_tiles(const struct builtin_space *sp, const struct task *t,
		       const struct builtin_config *c)
{
	return ceil_div(t->m, pval(sp, c, "CG_P_TILE", 0, 128)) *
	       ceil_div(t->n, pval(sp, c, "CG_P_TILE", 1, 128)) * (t->batch > 1 ? t->batch : 1);
}

/* A gemm_sm90 task whose M fits one 128-row tile (decode: M = 1..128). */
static int sm90_one_m_tile(const struct task *t)
{
	return t->op == OP_GEMM && t->m <= 128;
}

/* The output tiles of a gemm_sm90 GEMM at BM x BN (fp8 runs BN = 256 as 128). */
static long sm90_tiles(const struct task *t, long bm, long bn)
{
	if (t->in_dtype == DT_FP8_E4M3 && bn > 128)
		bn = 128;
	return ceil_div(t->m, bm) * ceil_div(t->n, bn) * (t->batch > 1 ? t->batch : 1);
}

/* Sets a parameter to a value of its list (nothing when the space has neither). */
static void set_value(const struct builtin_space *sp, struct builtin_config *cfg, const char *name,
		      const char *v)
{
	int i = find_param(sp, name, strlen(name));
	int j = i < 0 ? -1 : find_value(&sp->params[i], v, strlen(v));
	if (j >= 0)
		cfg->v[i] = j;
}

/* A rowwise task's row: its length, its count and the elements of one vector (16 bytes when
 * the length is a multiple of them, else one element, as builtin/rowwise.cu chooses). */
static long row_cols(const struct task *t)
{
	return t->ndim ? (long)t->shape[t->ndim - 1] : 0;
}

static long row_count(const struct task *t)
{
	long rows = 1;
	for (int i = 0; i + 1 < t->ndim; i++)
		rows *= (long)t->shape[i];
	return rows;
}

static long row_vec(const struct task *t)
{
	long v = 16 / dtype_size(t->in_dtype);
	return row_cols(t) % v == 0 ? v : 1;
}

/* Whether rowwise's modes 2 and 3 (the row in the registers of a warp, or of the CTA) hold
 * the task's row with `threads` threads per CTA: builtin/rowwise.cu's regs_max_vpt(), the
 * most vectors per thread that do not spill. */
static int rowwise_regs_fit(const struct task *t, long mode, long threads)
{
	long regs = (65536 / threads < 255 ? 65536 / threads : 255) - 40;
	long cost = dtype_size(t->in_dtype) == 2 ? 12 : 6, vpt = 16;
	while (vpt > 1 && vpt * cost > regs)
		vpt /= 2;
	long group = mode == 2 ? 32 : threads;
	return row_cols(t) <= group * row_vec(t) * vpt;
}

/*
 * 1 when a candidate (of a stage around base) cannot help this task or duplicates another:
 * smaller GEMM tiles or split-K where the tiles already fill the GPU, another smem order where
 * no operand is MN-major, one-read softmax modes
 * whose row cannot fit on chip, cluster sizes without the mode that uses them, pipeline depths
 * the shared memory clamps.
 */
static int pruned(const struct builtin_space *sp, const struct task *t,
		  const struct builtin_config *c, const struct builtin_config *base)
{
	if (!strcmp(sp->family, "gemm_sm90")) {
		/* the template clamps STAGES to what fits in a CTA's share of the SM's 228 KB (and
		 * fp8 tiles to BN = 128): asking for more than fits is the same kernel again */
		int fp8 = t->in_dtype == DT_FP8_E4M3;
		long bm = pval(sp, c, "CG_P_BM", 0, 128), bn = pval(sp, c, "CG_P_BN", 0, 128);
		long bk = pval(sp, c, "CG_P_BK", 0, 64), ctas = pval(sp, c, "CG_P_CTAS", 0, 1);
		long stages = pval(sp, c, "CG_P_STAGES", 0, 2);
		if (fp8 && bn > 128 && bn != pval(sp, base, "CG_P_BN", 0, 128))
			return 1;
		long fit = (228L * 1024 / ctas - 2048) /
			   ((bm + (fp8 && bn > 128 ? 128 : bn)) * bk * dtype_size(t->in_dtype));
		if (fit < 2)
			return 1; /* tf32 at BK = 128: two stages do not fit (a static_assert) */
		/* BK = 32 is for 4-byte tf32 (128-byte rows, as 64 are for 16 bits): 16-bit and
		 * fp8 k-tiles that short halve the MMAs per barrier */
		if (bk == 32 && dtype_size(t->in_dtype) != 4 && bk != pval(sp, base, "CG_P_BK", 0, 64))
			return 1;
		if (stages > fit && stages != pval(sp, base, "CG_P_STAGES", 0, 2))
			return 1;
		/* the smem order of MN-major atoms: the same kernel where both operands are read
		 * K-major (A row and B col, or tf32/fp8, whose MN-major operands are transposed
		 * first) */
		int mn_major = !(fp8 || t->in_dtype == DT_FP32) &&
			       (t->a_layout == LAYOUT_COL || t->b_layout == LAYOUT_ROW);
		if (!mn_major && pval(sp, c, "CG_P_MN_ORDER", 0, 0) != pval(sp, base, "CG_P_MN_ORDER", 0, 0))
			return 1;
		/* the reduction in the last unit (CG_P_REDUCE) is the same kernel without split-K;
		 * with two CTAs an SM (128 registers a thread) its sums spill (ptxas: 148 bytes of
		 * spill stores, none with the second kernel). And where it runs it loses to the
		 * second kernel even with its loads issued 16 at a time (H100, two rounds each:
		 * llama8b_o_m64 0.65x cuBLASLt against 0.81x, bf16 16 x 8192 x 4096 0.81x against
		 * 0.87x, llama8b_qkv_m128 at two k-ranges 0.61x against 0.67x;
		 * bench/results/2026-12-06_h100_session33.json): the walk does not turn it on (a
		 * --set that asks for it keeps it, and the walk may turn it off) */
		long reduce = pval(sp, c, "CG_P_REDUCE", 0, 0);
		if (reduce != pval(sp, base, "CG_P_REDUCE", 0, 0) &&
		    (reduce || pval(sp, c, "CG_P_SPLIT_K", 0, 1) == 1))
			return 1;
		/* ping-pong (two MMA warpgroups on tiles of their own, one's main loop in the
		 * other's epilogue): a tile whose accumulators one warpgroup holds (BM x BN up to
		 * 128 x 128, 64 x 128 for fp8: the template's static_assert), one CTA an SM, over
		 * the persistent walk (without it a CTA has two tiles, and the second waits out the
		 * first's main loop with nothing after it to overlap); not with the last-unit
		 * reduction at 128 rows, whose sums then spill (ptxas: 32 bytes) */
		long pingpong = pval(sp, c, "CG_P_PINGPONG", 0, 0);
		long accs = bm * (fp8 && bn > 128 ? 128 : bn) * (fp8 ? 2 : 1); /* a warpgroup's, x 128 */
		if (pingpong && (accs > 128 * 128 || ctas > 1 || !pval(sp, c, "CG_P_PERSISTENT", 0, 1) ||
				 (reduce && bm > 64)))
			return 1;
		/* one M tile: the second CTA of an M pair only multiplies zero-filled rows */
		if (sm90_one_m_tile(t) && pval(sp, c, "CG_P_CLUSTER_M", 0, 1) > 1)
			return 1;
		/* 64-row tiles help small M only: where 128-row tiles of this BN fill the GPU
		 * twice over (and M > 64), they halve the work per B load for nothing; but in
		 * ping-pong at a full warpgroup tile (64 x 256, fp8's 64 x 128: as many accumulators
		 * as 128 x 128) two are in flight a CTA, as a 128-row tile's two warpgroups are */
		if (bm < 128 && t->m > 64 && sm90_tiles(t, 128, bn) >= 2 * SM90_SMS && ctas == 1 &&
		    !(pingpong && accs == 128 * 128) && bm != pval(sp, base, "CG_P_BM", 0, 128))
			return 1;
		/* two CTAs an SM: 64 x 128 tiles of 16-bit or tf32 inputs only (the template's
		 * static_assert: registers), where one CTA's MMAs can run in the other's epilogue */
		if (ctas > 1 && (bm != 64 || bn != 128 || fp8))
			return 1;
		/* M <= 64 at BM = 128: the same tiles, twice the (zero-filled) MMA work */
		if (bm == 128 && t->m <= 64 && bm != pval(sp, base, "CG_P_BM", 0, 128))
			return 1;
		/* split-K only where the tiles do not cover the SMs, each k-range 4 k-tiles or
		 * more (its partial sums cost a write and a read of C per range), the units
		 * within four waves */
		long split = pval(sp, c, "CG_P_SPLIT_K", 0, 1);
		long tiles = sm90_tiles(t, bm, bn);
		if (split > 1 && (tiles >= SM90_SMS || t->k / (split * bk) < 4 ||
				  tiles * split > 4 * SM90_SMS))
			return 1;
	}
	if (!strcmp(sp->family, "gemm_simt")) {
		/* a smaller tile only helps a grid that does not fill the GPU well: with two waves
		 * of base tiles or more, it adds traffic and buys no occupancy */
		long area = pval(sp, c, "CG_P_TILE", 0, 128) * pval(sp, c, "CG_P_TILE", 1, 128);
		long base_area = pval(sp, base, "CG_P_TILE", 0, 128) * pval(sp, base, "CG_P_TILE", 1, 128);
		if (area < base_area && simt_tiles(sp, t, base) >= 2 * SM90_SMS)
			return 1;
		long split = pval(sp, c, "CG_P_SPLIT_K", 0, 1);
		if (split > 1) {
			long tiles = simt_tiles(sp, t, c);
			if (tiles >= SM90_SMS || tiles * split > 4 * SM90_SMS ||
			    t->k / split < 32 * pval(sp, c, "CG_P_BK", 0, 16))
				return 1;
		}
	}
	if (!strcmp(sp->family, "rowwise")) {
		long mode = pval(sp, c, "CG_P_MODE", 0, 0), cluster = pval(sp, c, "CG_P_CLUSTER", 0, 1);
		long row_bytes = (long)(t->ndim ? t->shape[t->ndim - 1] : 0) * dtype_size(t->in_dtype);
		if (mode != 1 && cluster > 1)
			return 1; /* only mode 1 uses the cluster */
		if (mode == 1 && row_bytes > cluster * 200L * 1024)
			return 1; /* the kernel would fall back to two reads: a duplicate */
		if (mode >= 2 && !rowwise_regs_fit(t, mode, pval(sp, c, "CG_P_THREADS", 0, 256)))
			return 1; /* the kernel would go on as mode 1 */
	}
	return 0;
}

/*
 * A softmax's start by its row: a row of up to 8 vectors a lane (4 KB: 2048 16-bit or 1024
 * fp32 elements) one per warp in registers (mode 2); a longer one that a CTA holds at 4
 * vectors a thread, with rows enough for two CTAs an SM, one per CTA in registers (mode 3,
 * the fewest threads that do); long rows, many of them, one read through shared memory over
 * the smallest cluster whose slices fit two CTAs an SM (100 KB) and whose CTAs number 8 an SM
 * (H100, log-softmax over a 128256-token vocabulary, 384 rows: 16 CTAs a row 0.33 of the
 * roofline, 8 0.57, 4 0.71, 2 0.69); few rows (decode attention), two reads over as many CTAs
 * a row as cover the SMs (mode 0; the second read from L2): H100, two rounds each,
 * bench/results/2026-12-06_h100_session33.json: 256 x 32768 bf16 0.52 of the roofline against
 * one read over clusters of 16, 8, 4 CTAs 0.10, 0.21, 0.34 and one row per 1024-thread CTA
 * 0.03; 32 x 131072 bf16 0.27 against 0.22, 0.28, 0.30, 0.27 over 16, 8, 4, 2. The structure
 * stage tries the others.
 */
static void rowwise_start(const struct builtin_space *sp, const struct task *t,
			  struct builtin_config *cfg)
{
	long vectors = ceil_div(row_cols(t), row_vec(t));
	if (vectors <= 32 * 8) {
		set_value(sp, cfg, "CG_P_MODE", "2");
		set_value(sp, cfg, "CG_P_THREADS", "128");
		set_value(sp, cfg, "CG_P_CLUSTER", "1");
		return;
	}
	if (row_count(t) < 2 * SM90_SMS) {
		set_value(sp, cfg, "CG_P_MODE", "0");
		set_value(sp, cfg, "CG_P_CLUSTER", "1");
		return;
	}
	static const char *const threads[] = { "128", "256", "512", "1024" };
	for (int i = 0; i < 4; i++) {
		long n = atol(threads[i]);
		if (n * 4 >= vectors && rowwise_regs_fit(t, 3, n)) {
			set_value(sp, cfg, "CG_P_MODE", "3");
			set_value(sp, cfg, "CG_P_THREADS", threads[i]);
			set_value(sp, cfg, "CG_P_CLUSTER", "1");
			return;
		}
	}
	long row_bytes = row_cols(t) * dtype_size(t->in_dtype);
	static const char *const clusters[] = { "1", "2", "4", "8" };
	for (int i = 0; i < 4; i++) {
		long n = atol(clusters[i]);
		if (row_bytes <= n * 100L * 1024 && row_count(t) * n >= 8 * SM90_SMS) {
			set_value(sp, cfg, "CG_P_MODE", "1");
			set_value(sp, cfg, "CG_P_CLUSTER", clusters[i]);
			return;
		}
	}
}

/*
 * split-K for a gemm_sm90 start whose tiles do not cover the SMs (decode and small-M GEMMs:
 * 32 to 80 tiles on 132 SMs): the k-ranges per tile that give the busiest SM the least work,
 * ceil(tiles * S / SMs) units of 1/S of a tile each, a smaller S unless a larger one saves 5%;
 * only where its partial sums (S raw fp32 C's, written and read) stay within a quarter of the
 * bytes A and B move. The split stage still tries the others. (H100, llm suite: at M = 128,
 * N = 6144, K = 4096 eight k-ranges, partials as large as A and B, ran at 0.50x cuBLASLt
 * against 0.72x without a split; at M = 16 eight gave 0.90x against 0.71x.)
 */
static void sm90_start_split(const struct builtin_space *sp, const struct task *t,
			     struct builtin_config *cfg)
{
	int i = find_param(sp, "CG_P_SPLIT_K", strlen("CG_P_SPLIT_K"));
	if (i < 0)
		return;
	long tiles = sm90_tiles(t, pval(sp, cfg, "CG_P_BM", 0, 128), pval(sp, cfg, "CG_P_BN", 0, 128));
	long batch = t->batch > 1 ? t->batch : 1;
	double ab_bytes = (double)batch * (double)(t->m + t->n) * (double)t->k * dtype_size(t->in_dtype);
	double best = 0;
	for (int v = 0; v < sp->params[i].nvals; v++) {
		struct builtin_config c = *cfg;
		c.v[i] = v;
		long split = pval(sp, &c, "CG_P_SPLIT_K", 0, 1);
		if (split > 1 && (pruned(sp, t, &c, cfg) ||
				  4 * 8.0 * split * batch * (double)t->m * (double)t->n > ab_bytes))
			continue;
		double busiest = (double)ceil_div(tiles * split, SM90_SMS) / (double)split;
		if (best == 0 || busiest < 0.95 * best) {
			best = busiest;
			cfg->v[i] = v; /* the values are listed in increasing order */
		}
	}
}

/* gemm_sm90's start for a task (builtin_start). */
static void sm90_start(const struct builtin_space *sp, const struct task *t,
		       struct builtin_config *cfg)
{
	if (dtype_size(t->in_dtype) == 4) {
		/* tf32: a 64-deep k-tile of 4-byte elements is 96 KB at 128 x 256, two stages in
		 * shared memory (ncu on the H100: long-scoreboard stalls 71%); 32 deep runs four.
		 * And 128 x 128 x 32 runs six (half the accumulators a thread): on the H200 at
		 * 3072^3, B col, 0.89x cuBLASLt against 0.82x at 128 x 256 x 32 with four, in two
		 * runs (bench/set_ab.sh; bench/results/2026-12-05_h200_sweep_suites.json) */
		set_value(sp, cfg, "CG_P_BK", "32");
		set_value(sp, cfg, "CG_P_BN", "128");
		set_value(sp, cfg, "CG_P_STAGES", "6");
	}
	if (t->in_dtype == DT_FP8_E4M3) {
		/* fp8: each k-tile's products are summed alone and promoted to fp32 after a wait for
		 * all its MMAs; a 128-deep k-tile halves the waits (H100, 4096^3: 0.63x cuBLASLt at
		 * 128 x 128 x 128, 0.43x at the 64-deep start, stop 26's walk and this one's) */
		set_value(sp, cfg, "CG_P_BN", "128");
		set_value(sp, cfg, "CG_P_BK", "128");
	}
	if (t->op == OP_GEMM && t->epi_act != ACT_NONE && t->epi_act != ACT_RELU)
		/* a GELU or SiLU epilogue: half the accumulators a thread, half the epilogue a
		 * tile (H200, bias + GELU(tanh) at K = 768: 128 x 256 0.29x cuBLASLt, 128 x 128
		 * 0.43x, one walk; bench/results/2026-12-05_h200_modules_classes.json). With the
		 * whole-tile epilogue the two are even (0.61x each, the plain GEMM at that shape
		 * 0.61x too: the fused epilogue costs nothing more; 2026-12-05_h200_sweep_suites) */
		set_value(sp, cfg, "CG_P_BN", "128");
	if (sm90_one_m_tile(t)) {
		/* decode-sized M: one M tile, so the N tiles are all the parallelism there is:
		 * the narrower BN doubles them, and a CTA pair along M would idle one of the two;
		 * at M <= 64 a 64-row tile does half the zero-filled MMA work */
		set_value(sp, cfg, "CG_P_BN", "128");
		set_value(sp, cfg, "CG_P_CLUSTER_M", "1");
		if (t->m <= 64)
			set_value(sp, cfg, "CG_P_BM", "64");
	} else if (t->op == OP_GEMM && sm90_tiles(t, 128, pval(sp, cfg, "CG_P_BN", 0, 256)) < SM90_SMS) {
		/* small M (LLM inference, M of a few hundred): the declared 128 x 256 tiles leave
		 * SMs idle; narrower ones first, then 64-row ones only where they fill the waves
		 * enough better to pay for being slower a tile: on the H100 at M = 256, N = 5120
		 * (80 tiles of 128 x 128 or 160 of 64 x 128, both filling 61% of their waves) the
		 * 64-row start ran at 0.52x cuBLASLt, 128 rows at 0.73x: 1/0.71 = 1.4 */
		set_value(sp, cfg, "CG_P_BN", "128");
		if (wave_fill(sm90_tiles(t, 64, 128)) > 1.4 * wave_fill(sm90_tiles(t, 128, 128)))
			set_value(sp, cfg, "CG_P_BM", "64");
	} else {
		if (dtype_size(t->in_dtype) == 2 && t->k <= 1024 &&
		    find_param(sp, "CG_P_PINGPONG", strlen("CG_P_PINGPONG")) >= 0) {
			/* 16-bit at short K (a transformer MLP's K = 768 or 1024): the epilogue is
			 * as long as the main loop, so 128 x 128 in ping-pong, one warpgroup's
			 * main loop in the other's epilogue. On the H100 at 6144 x 3072 x 768, B
			 * col, in one run each (bench/results/2026-12-06_h100_session31.json):
			 * bias + GELU(tanh) 0.68x -> 0.74x cuBLASLt, the plain GEMM 0.64x (its
			 * 128 x 256 start) -> 0.70x; at K = 4096 it lost (0.91x -> 0.79x) */
			set_value(sp, cfg, "CG_P_BN", "128");
			set_value(sp, cfg, "CG_P_PINGPONG", "1");
		}
		return;
	}
	sm90_start_split(sp, t, cfg);
}

/*
 * The start point for a task: the family's declared start, except where the task makes it a
 * poor one. A SIMT GEMM whose tiles do not fill the GPU (kb1/6: 256x256 from K = 524288, four
 * tiles on 132 SMs) starts split-K, with the most k slices that stay within two waves, so the
 * walk does not spend its first stages at a fiftieth of the GPU.
 */
void builtin_start(const struct builtin_space *sp, const struct task *t, struct builtin_config *cfg)
{
	memcpy(cfg->v, sp->start, sizeof(cfg->v));
	if (!strcmp(sp->family, "rowwise") && find_param(sp, "CG_P_MODE", 9) >= 0) {
		rowwise_start(sp, t, cfg);
		return;
	}
	if (!strcmp(sp->family, "gemm_sm90")) {
		sm90_start(sp, t, cfg);
		return;
	}
	int i = find_param(sp, "CG_P_SPLIT_K", strlen("CG_P_SPLIT_K"));
	if (strcmp(sp->family, "gemm_simt") || i < 0)
		return;
	long tiles = simt_tiles(sp, t, cfg);
	struct builtin_config c = *cfg;
	for (int v = 0; v < sp->params[i].nvals; v++) {
		c.v[i] = v;
		if (!pruned(sp, t, &c, cfg) && tiles * pval(sp, &c, "CG_P_SPLIT_K", 0, 1) <= 2 * SM90_SMS)
			cfg->v[i] = v; /* the values are listed in increasing order */
	}
	/* no split (K too short for its slices) and a grid on under half the SMs: the smaller
	 * tile that fills its waves half again better (fp32 1000^3 on the H100: 64 tiles of
	 * 128 x 128, 0.24 waves, the FMA pipes of those 64 SMs 71% busy, 0.65x cuBLASLt) */
	int ti = find_param(sp, "CG_P_TILE", strlen("CG_P_TILE"));
	if (ti < 0 || pval(sp, cfg, "CG_P_SPLIT_K", 0, 1) > 1 || tiles >= SM90_SMS / 2)
		return;
	double best = wave_fill(tiles);
	c = *cfg;
	for (int v = 0; v < sp->params[ti].nvals; v++) {
		c.v[ti] = v;
		double f = wave_fill(simt_tiles(sp, t, &c));
		if (f > 1.5 * best) {
			best = f;
			cfg->v[ti] = v; /* the larger tiles come first */
		}
	}
}

static int same(const struct builtin_config *a, const struct builtin_config *b, int n)
{
	return !memcmp(a->v, b->v, (size_t)n * sizeof(int));
}

static int find_tried(const struct builtin_tried *tried, int n, const struct builtin_config *c,
		      int np)
{
	for (int i = 0; i < n; i++)
		if (same(&tried[i].cfg, c, np))
			return i;
	return -1;
}

/*
 * The candidates of a stage around base, in a fixed order: every combination of the stage's
 * parameter values (the last parameter varying fastest), base and pruned points left out.
 */
static int stage_candidates(const struct builtin_space *sp, const struct task *t,
			    const struct builtin_stage *st, const struct builtin_config *base,
			    struct builtin_config *out)
{
	int idx[BUILTIN_PARAMS_MAX] = { 0 }, n = 0;
	for (;;) {
		struct builtin_config c = *base;
		for (int k = 0; k < st->nparams; k++)
			c.v[st->params[k]] = idx[k];
		if (!same(&c, base, sp->nparams) && !pruned(sp, t, &c, base))
			out[n++] = c;
		if (n == BUILTIN_STAGE_CANDIDATES_MAX)
			return n; /* a stage tries at most this many: the first in this order */
		int k = st->nparams - 1;
		while (k >= 0 && ++idx[k] == sp->params[st->params[k]].nvals)
			idx[k--] = 0;
		if (k < 0)
			return n;
	}
}

static char *describe(const struct builtin_space *sp, const char *stage,
		      const struct builtin_config *from, const struct builtin_config *to)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "builtin %s, %s:", sp->family, stage);
	if (!from) {
		strbuf_addch(&sb, ' ');
		builtin_config_format(sp, to, &sb);
	}
	for (int i = 0; from && i < sp->nparams; i++)
		if (from->v[i] != to->v[i])
			strbuf_addf(&sb, " %s %s -> %s", sp->params[i].name,
				    sp->params[i].vals[from->v[i]], sp->params[i].vals[to->v[i]]);
	return strbuf_detach(&sb, NULL);
}

/*
 * Replays the walk over what was tried: the stage whose candidates are being tried now (0 = the
 * start), its base and its candidates in order; returns the index of the first one not yet
 * tried, -1 when the walk is over, -2 when it stops at the roofline (checked between stages:
 * a stage once begun is measured whole, so its candidates can be compiled together).
 */
static int walk(const struct builtin_space *sp, const struct task *t,
		const struct builtin_tried *tried, int ntried, int *stage,
		struct builtin_config *base, struct builtin_config *cands, int *ncands)
{
	struct builtin_config best = { { 0 } };
	builtin_start(sp, t, &best);
	int np = sp->nparams;
	int i = find_tried(tried, ntried, &best, np);
	*stage = 0;
	*base = best;
	cands[0] = best;
	*ncands = 1;
	if (i < 0)
		return 0;
	int have = tried[i].passed;
	double best_ms = tried[i].ms, best_roof = have ? tried[i].roof : -1;
	for (int s = 0; s < sp->nstages; s++) {
		if (best_roof >= BUILTIN_ROOF_STOP)
			return -2;
		*base = best;
		*stage = s + 1;
		*ncands = stage_candidates(sp, t, &sp->stages[s], base, cands);
		for (int k = 0; k < *ncands; k++) {
			int j = find_tried(tried, ntried, &cands[k], np);
			if (j < 0)
				return k;
			if (tried[j].passed && tried[j].ms >= 0 &&
			    (!have || best_ms < 0 || tried[j].ms < best_ms)) {
				best = cands[k];
				best_ms = tried[j].ms;
				best_roof = tried[j].roof;
				have = 1;
			}
		}
	}
	return -1;
}

int builtin_unsupported(const struct builtin_tried *tried, int ntried)
{
	for (int i = 0; i < ntried; i++)
		if (tried[i].passed || !tried[i].unsupported)
			return 0;
	return ntried > 0;
}

int builtin_next(const struct builtin_space *sp, const struct task *t,
		 const struct builtin_tried *tried, int ntried, struct builtin_config *cfg,
		 int *stage, char **what)
{
	struct builtin_config base, cands[BUILTIN_STAGE_CANDIDATES_MAX];
	int n;
	int k = walk(sp, t, tried, ntried, stage, &base, cands, &n);
	if (k < 0)
		return k == -2 ? 2 : 1;
	*cfg = cands[k];
	*what = *stage ? describe(sp, sp->stages[*stage - 1].name, &base, cfg)
		       : describe(sp, "start", NULL, cfg);
	return 0;
}

int builtin_pending(const struct builtin_space *sp, const struct task *t,
		    const struct builtin_tried *tried, int ntried,
		    struct builtin_config out[BUILTIN_STAGE_CANDIDATES_MAX])
{
	struct builtin_config base, cands[BUILTIN_STAGE_CANDIDATES_MAX];
	int n, stage, m = 0;
	int k = walk(sp, t, tried, ntried, &stage, &base, cands, &n);
	for (int i = k < 0 ? n : k; i < n; i++) /* none when the walk is over */
		if (find_tried(tried, ntried, &cands[i], sp->nparams) < 0)
			out[m++] = cands[i];
	return m;
}
