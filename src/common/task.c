/*
 * The task model (see task.h): parsing and validating task JSON, its canonical form, the
 * kernel's arguments as the ABI passes them, work and traffic counts, and the built-in suites
 * embedded from the files under tasks/.
 *
 * Validation is strict on purpose: a task file is untrusted input that decides what the runner
 * allocates and what the agent is asked to write, so every field is checked for type, range and
 * fit with the op, unknown fields are errors (they are usually typos), and every size is checked
 * for 64-bit overflow of element and byte counts. Messages name the task and the field.
 * Not for: how a task is checked or timed (runner/), or prompted (agent).
 */
#include "common/task.h"

#include "common/embedded.h"
#include "util/suggest.h"
#include "util/xalloc.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define TASK_FILE_MAX (1 << 20) /* a task file larger than this is not a task file */
#define NAME_MAX_LEN 128
#define DESC_MAX_LEN 4096
#define MAX_SEEDS 16
#define MAX_M_DIMS 3

/* ---- names <-> enums ---- */

static const char *const dtype_names[] = { NULL, "fp32", "fp16", "bf16", "fp8_e4m3" };
static const int dtype_sizes[] = { 0, 4, 2, 2, 1 };
static const char *const op_names[] = { NULL, "gemm", "matvec", "scalar_mul", "diag_matmul",
					"elementwise", "softmax", "log_softmax" };
static const char *const act_names[] = { "none", "relu", "leaky_relu", "sigmoid", "tanh", "swish",
					 "gelu", "gelu_tanh", "selu", "hardsigmoid", "softplus",
					 "softsign", "elu", "hardtanh", "mingpt_gelu", "silu" };
static const char *const precision_names[] = { NULL, "strict", "tf32", "fp16", "bf16", "fp8" };
static const char *const dist_names[] = { "uniform", "normal", "large", "branches", "sparse" };
static const char *const layout_names[] = { "row", "col" };
static const char *const structure_names[] = { "general", "symmetric", "upper", "lower" };
static const char *const mask_names[] = { "none", "upper", "lower" };

static int name_index(const char *const *names, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (names[i] && s && !strcmp(names[i], s))
			return i;
	return -1;
}

#define NAME_OF(tab, i) ((i) >= 0 && (size_t)(i) < ARRAY_SIZE(tab) && tab[i] ? tab[i] : "?")

const char *dtype_name(enum dtype d) { return NAME_OF(dtype_names, (int)d); }
int dtype_size(enum dtype d) { return (int)d > 0 && (size_t)d < ARRAY_SIZE(dtype_sizes) ? dtype_sizes[d] : 0; }
const char *op_name(enum op o) { return NAME_OF(op_names, (int)o); }
const char *act_name(enum act a) { return NAME_OF(act_names, (int)a); }
const char *precision_name(enum precision p) { return NAME_OF(precision_names, (int)p); }
const char *dist_name(enum dist d) { return NAME_OF(dist_names, (int)d); }

enum dtype dtype_parse(const char *s)
{
	int i = name_index(dtype_names, ARRAY_SIZE(dtype_names), s);
	return i < 0 ? DT_INVALID : (enum dtype)i;
}

enum op op_parse(const char *s)
{
	int i = name_index(op_names, ARRAY_SIZE(op_names), s);
	return i < 0 ? OP_INVALID : (enum op)i;
}

enum act act_parse(const char *s)
{
	int i = name_index(act_names, ARRAY_SIZE(act_names), s);
	return i <= 0 ? ACT_NONE : (enum act)i; /* "none" is not an activation to parse into */
}

enum precision precision_parse(const char *s)
{
	int i = name_index(precision_names, ARRAY_SIZE(precision_names), s);
	return i < 0 ? PREC_INVALID : (enum precision)i;
}

int dist_parse(const char *s)
{
	return name_index(dist_names, ARRAY_SIZE(dist_names), s);
}

/* "a, b, c" of a name table (skipping NULL slots), into a static-lifetime-free heap string. */
static char *names_list(const char *const *names, int n, int from)
{
	struct strbuf sb = STRBUF_INIT;
	for (int i = from; i < n; i++) {
		if (!names[i])
			continue;
		if (sb.len)
			strbuf_addstr(&sb, ", ");
		strbuf_addstr(&sb, names[i]);
	}
	return strbuf_detach(&sb, NULL);
}

/* ---- the parse context: one error message, prefixed with the task's name ---- */

struct pctx {
	const char *name; /* for messages */
	char *err;        /* heap, first error only */
};

__attribute__((format(printf, 2, 3))) static int fail(struct pctx *c, const char *fmt, ...)
{
	if (c->err)
		return -1;
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "task '%s': ", c->name);
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	c->err = str_one_line(strbuf_detach(&sb, NULL)); /* control bytes quoted from a file */
	return -1;
}

/* A JSON value as the user wrote it, shortened, for "(got ...)". Heap string. */
static char *shown(const json_t *v)
{
	char *s = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
	if (!s)
		return xstrdup("nothing");
	char *r = strlen(s) > 48 ? xasprintf("%.45s...", s) : xstrdup(s);
	free(s);
	return r;
}

/* A key from the file, safe to quote in a one-line message: control bytes become '?' and long
 * keys are cut. Heap string. */
static char *shown_key(const char *key)
{
	size_t n = strlen(key);
	char *s = n > 40 ? xasprintf("%.37s...", key) : xstrdup(key);
	for (char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return s;
}

static int fail_got(struct pctx *c, const char *field, const char *what, const json_t *v)
{
	char *g = shown(v);
	fail(c, "field '%s' must be %s (got %s)", field, what, g);
	free(g);
	return -1;
}

/* Integer field: required or not; in [lo, hi]. Leaves *out alone when absent and optional. */
static int get_int(struct pctx *c, json_t *obj, const char *key, const char *field, int required,
		   int64_t lo, int64_t hi, const char *what, int64_t *out)
{
	json_t *v = json_object_get(obj, key);
	if (!v) {
		if (required)
			return fail(c, "field '%s' is required and must be %s", field, what);
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
		return fail_got(c, field, what, v);
	*out = json_integer_value(v);
	return 0;
}

static int get_pos(struct pctx *c, json_t *obj, const char *key, int required, int64_t *out)
{
	return get_int(c, obj, key, key, required, 1, INT64_MAX, "a positive integer", out);
}

static int get_number(struct pctx *c, json_t *obj, const char *key, const char *field,
		      int required, double *out)
{
	json_t *v = json_object_get(obj, key);
	if (!v) {
		if (required)
			return fail(c, "field '%s' is required and must be a number", field);
		return 0;
	}
	if (!json_is_number(v) || !isfinite(json_number_value(v)))
		return fail_got(c, field, "a number", v);
	*out = json_number_value(v);
	return 0;
}

static int get_bool(struct pctx *c, json_t *obj, const char *key, const char *field, int *out)
{
	json_t *v = json_object_get(obj, key);
	if (!v)
		return 0;
	if (!json_is_boolean(v))
		return fail_got(c, field, "true or false", v);
	*out = json_is_true(v);
	return 0;
}

/* A string field naming one of names[from..n); *out gets its index. */
static int get_enum(struct pctx *c, json_t *obj, const char *key, const char *field, int required,
		    const char *const *names, int n, int from, int *out)
{
	json_t *v = json_object_get(obj, key);
	char *valid = NULL;
	int rc = 0;
	if (!v && !required)
		return 0;
	int i = v && json_is_string(v) ? name_index(names, n, json_string_value(v)) : -1;
	if (i < from) {
		valid = names_list(names, n, from);
		if (!v) {
			rc = fail(c, "field '%s' is required (one of: %s)", field, valid);
		} else {
			char *g = shown(v);
			rc = fail(c, "field '%s' must be one of: %s (got %s)", field, valid, g);
			free(g);
		}
		goto out;
	}
	*out = i;
out:
	free(valid);
	return rc;
}

/* Edit distance of two short names (longer ones count as far apart). */
static int edit_distance(const char *a, const char *b)
{
	enum { MAXL = 32 };
	size_t la = strlen(a), lb = strlen(b);
	int row[MAXL + 1];
	if (la > MAXL || lb > MAXL)
		return MAXL;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		int diag = row[0];
		row[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int up = row[j];
			int best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/* Rejects keys of obj outside allowed[]; `where` prefixes nested fields ("epilogue."). */
static int check_fields(struct pctx *c, json_t *obj, const char *where, const char *const *allowed,
			int nallowed, const char *const *known_elsewhere, const char *why)
{
	const char *rawkey;
	json_t *v;
	json_object_foreach(obj, rawkey, v) {
		if (name_index(allowed, nallowed, rawkey) >= 0)
			continue;
		char *key = shown_key(rawkey);
		struct strbuf valid = STRBUF_INIT;
		for (int i = 0; i < nallowed; i++)
			strbuf_addf(&valid, "%s%s", i ? ", " : "", allowed[i]);
		int elsewhere = 0;
		for (int i = 0; known_elsewhere && known_elsewhere[i]; i++)
			if (!strcmp(known_elsewhere[i], key))
				elsewhere = 1;
		if (elsewhere)
			fail(c, "field '%s%s' does not apply to %s (fields here: %s)", where, key, why,
			     nallowed ? valid.buf : "none");
		else {
			const char *near = NULL;
			int best = 3; /* suggest only close names: typos, not guesses */
			for (int i = 0; i < nallowed; i++) {
				int d = edit_distance(key, allowed[i]);
				if (d < best && d < (int)strlen(key)) {
					best = d;
					near = allowed[i];
				}
			}
			char *hint = near ? xasprintf("; did you mean '%s%s'?", where, near) : xstrdup("");
			fail(c, "unknown field '%s%s'%s (fields here: %s)", where, key, hint,
			     nallowed ? valid.buf : "none");
			free(hint);
		}
		strbuf_release(&valid);
		free(key);
		return -1;
	}
	return 0;
}

/* ---- per-op field sets ---- */

#define COMMON_FIELDS "name", "description", "op", "dtype", "out_dtype", "precision", \
		      "distributions", "seeds", "tolerance"

static const char *const fields_gemm[] = { COMMON_FIELDS, "batch", "m", "n", "k", "m_dims",
	"a_layout", "b_layout", "a_structure", "b_structure", "mask", "alpha", "epilogue" };
static const char *const fields_matvec[] = { COMMON_FIELDS, "m", "k" };
static const char *const fields_scalar[] = { COMMON_FIELDS, "shape", "scalar" };
static const char *const fields_diag[] = { COMMON_FIELDS, "n", "m" };
static const char *const fields_elementwise[] = { COMMON_FIELDS, "shape", "activation", "params" };
static const char *const fields_softmax[] = { COMMON_FIELDS, "shape" };
static const char *const all_fields[] = { COMMON_FIELDS, "batch", "m", "n", "k", "m_dims",
	"a_layout", "b_layout", "a_structure", "b_structure", "mask", "alpha", "epilogue", "shape",
	"scalar", "activation", "params", NULL };

static void op_fields(enum op op, const char *const **f, int *n)
{
#define SET(a) do { *f = a; *n = (int)ARRAY_SIZE(a); } while (0)
	switch (op) {
	case OP_GEMM: SET(fields_gemm); break;
	case OP_MATVEC: SET(fields_matvec); break;
	case OP_SCALAR_MUL: SET(fields_scalar); break;
	case OP_DIAG_MATMUL: SET(fields_diag); break;
	case OP_ELEMENTWISE: SET(fields_elementwise); break;
	case OP_SOFTMAX:
	case OP_LOG_SOFTMAX: SET(fields_softmax); break;
	default: *f = NULL; *n = 0; break;
	}
#undef SET
}

/* The activation parameters each activation takes, by PyTorch's names. */
struct act_param {
	enum act act;
	const char *name;
	size_t offset; /* into struct task */
};

static const struct act_param act_params[] = {
	{ ACT_LEAKY_RELU, "negative_slope", offsetof(struct task, negative_slope) },
	{ ACT_ELU, "alpha", offsetof(struct task, elu_alpha) },
	{ ACT_HARDTANH, "min_val", offsetof(struct task, min_val) },
	{ ACT_HARDTANH, "max_val", offsetof(struct task, max_val) },
	{ ACT_SOFTPLUS, "beta", offsetof(struct task, sp_beta) },
	{ ACT_SOFTPLUS, "threshold", offsetof(struct task, sp_threshold) },
};

#define PARAM(t, p) (*(double *)((char *)(t) + (p)->offset))
#define CPARAM(t, p) (*(const double *)((const char *)(t) + (p)->offset))

static int dist_applies(enum op op, enum dist d)
{
	if (d == DIST_BRANCHES)
		return op == OP_ELEMENTWISE;
	if (d == DIST_SPARSE)
		return op == OP_GEMM || op == OP_MATVEC;
	return 1;
}

static void default_dists(struct task *t)
{
	static const enum dist gemm[] = { DIST_UNIFORM, DIST_NORMAL, DIST_SPARSE };
	static const enum dist elem[] = { DIST_UNIFORM, DIST_NORMAL, DIST_LARGE, DIST_BRANCHES };
	static const enum dist rows[] = { DIST_UNIFORM, DIST_NORMAL, DIST_LARGE };
	static const enum dist plain[] = { DIST_UNIFORM, DIST_NORMAL };
	const enum dist *d = plain;
	int n = (int)ARRAY_SIZE(plain);
	switch (t->op) {
	case OP_GEMM:
	case OP_MATVEC: d = gemm; n = (int)ARRAY_SIZE(gemm); break;
	case OP_ELEMENTWISE: d = elem; n = (int)ARRAY_SIZE(elem); break;
	case OP_SOFTMAX:
	case OP_LOG_SOFTMAX: d = rows; n = (int)ARRAY_SIZE(rows); break;
	default: break;
	}
	memcpy(t->dists, d, (size_t)n * sizeof(*d));
	t->n_dists = n;
}

static void task_defaults(struct task *t)
{
	t->batch = 1;
	t->alpha = 1.0;
	t->negative_slope = 0.01;
	t->elu_alpha = 1.0;
	t->min_val = -1.0;
	t->max_val = 1.0;
	t->sp_beta = 1.0;
	t->sp_threshold = 20.0;
	t->seeds = 2;
	t->rtol = -1;
	t->atol = -1;
}

/* ---- sections of the parser ---- */

/* "shape": [d0, ...], 1..TASK_MAX_DIMS positive integers. */
static int parse_shape(struct pctx *c, json_t *obj, struct task *t)
{
	json_t *v = json_object_get(obj, "shape");
	if (!v)
		return fail(c, "field 'shape' is required for op '%s' (e.g. [4096, 4096])",
			    op_name(t->op));
	if (!json_is_array(v) || json_array_size(v) < 1 || json_array_size(v) > TASK_MAX_DIMS)
		return fail_got(c, "shape", "an array of 1 to 4 positive integers", v);
	t->ndim = (int)json_array_size(v);
	for (int i = 0; i < t->ndim; i++) {
		json_t *d = json_array_get(v, (size_t)i);
		if (!json_is_integer(d) || json_integer_value(d) < 1) {
			char field[32];
			snprintf(field, sizeof(field), "shape[%d]", i);
			return fail_got(c, field, "a positive integer", d);
		}
		t->shape[i] = json_integer_value(d);
	}
	return 0;
}

static int parse_gemm(struct pctx *c, json_t *obj, struct task *t)
{
	int i, rc;
	int64_t m = 0;
	if ((rc = get_pos(c, obj, "batch", 0, &t->batch)) ||
	    (rc = get_pos(c, obj, "m", 0, &m)) ||
	    (rc = get_pos(c, obj, "n", 1, &t->n)) ||
	    (rc = get_pos(c, obj, "k", 1, &t->k)))
		return rc;

	json_t *md = json_object_get(obj, "m_dims");
	if (md) {
		if (!json_is_array(md) || json_array_size(md) < 1 || json_array_size(md) > MAX_M_DIMS)
			return fail_got(c, "m_dims", "an array of 1 to 3 positive integers", md);
		t->m_ndims = (int)json_array_size(md);
		int64_t prod = 1;
		for (i = 0; i < t->m_ndims; i++) {
			json_t *d = json_array_get(md, (size_t)i);
			if (!json_is_integer(d) || json_integer_value(d) < 1) {
				char field[32];
				snprintf(field, sizeof(field), "m_dims[%d]", i);
				return fail_got(c, field, "a positive integer", d);
			}
			t->m_dims[i] = json_integer_value(d);
			if (__builtin_mul_overflow(prod, t->m_dims[i], &prod))
				return fail(c, "field 'm_dims' has a product that overflows 64 bits");
		}
		if (m && m != prod)
			return fail(c, "field 'm_dims' must multiply to m = %lld (got product %lld)",
				    (long long)m, (long long)prod);
		m = prod;
	} else {
		if (!m)
			return fail(c, "field 'm' is required and must be a positive integer");
		t->m_ndims = 1;
		t->m_dims[0] = m;
	}
	t->m = m;

	int v = 0;
	if ((rc = get_enum(c, obj, "a_layout", "a_layout", 0, layout_names, 2, 0, &v)))
		return rc;
	t->a_layout = (enum layout)v;
	v = 0;
	if ((rc = get_enum(c, obj, "b_layout", "b_layout", 0, layout_names, 2, 0, &v)))
		return rc;
	t->b_layout = (enum layout)v;
	v = 0;
	if ((rc = get_enum(c, obj, "a_structure", "a_structure", 0, structure_names, 4, 0, &v)))
		return rc;
	t->a_struct = (enum structure)v;
	v = 0;
	if ((rc = get_enum(c, obj, "b_structure", "b_structure", 0, structure_names, 4, 0, &v)))
		return rc;
	t->b_struct = (enum structure)v;
	v = 0;
	if ((rc = get_enum(c, obj, "mask", "mask", 0, mask_names, 3, 0, &v)))
		return rc;
	t->out_mask = (enum mask)v;
	if ((rc = get_number(c, obj, "alpha", "alpha", 0, &t->alpha)))
		return rc;

	json_t *epi = json_object_get(obj, "epilogue");
	if (epi) {
		static const char *const ef[] = { "bias", "activation" };
		if (!json_is_object(epi))
			return fail_got(c, "epilogue", "an object like {\"bias\": true, \"activation\": \"relu\"}", epi);
		if ((rc = check_fields(c, epi, "epilogue.", ef, 2, NULL, NULL)) ||
		    (rc = get_bool(c, epi, "bias", "epilogue.bias", &t->epi_bias)))
			return rc;
		static const char *const epi_acts[] = { "none", "relu", "gelu", "gelu_tanh", "silu" };
		v = 0;
		if ((rc = get_enum(c, epi, "activation", "epilogue.activation", 0, epi_acts, 5, 0, &v)))
			return rc;
		t->epi_act = v ? act_parse(epi_acts[v]) : ACT_NONE;
	}

	/* Shapes the structured inputs and masks can take (KernelBench 13-15 are plain 2D). */
	int plain2d = t->batch == 1 && t->m_ndims == 1;
	if (!plain2d && (t->a_struct || t->b_struct || t->out_mask))
		return fail(c, "field '%s' needs a plain 2D GEMM (batch 1, no m_dims)",
			    t->a_struct ? "a_structure" : t->b_struct ? "b_structure" : "mask");
	if (t->a_struct == STRUCT_SYMMETRIC && t->m != t->k)
		return fail(c, "field 'a_structure' 'symmetric' needs a square A (m == k; got m %lld, k %lld)",
			    (long long)t->m, (long long)t->k);
	if (t->b_struct == STRUCT_SYMMETRIC && t->k != t->n)
		return fail(c, "field 'b_structure' 'symmetric' needs a square B (k == n; got k %lld, n %lld)",
			    (long long)t->k, (long long)t->n);
	if (t->a_layout == LAYOUT_COL && t->m_ndims > 1)
		return fail(c, "field 'a_layout' 'col' needs a 2D A (drop m_dims)");
	return 0;
}

static int parse_elementwise(struct pctx *c, json_t *obj, struct task *t)
{
	int rc, v = 0;
	if ((rc = parse_shape(c, obj, t)) ||
	    (rc = get_enum(c, obj, "activation", "activation", 1, act_names, ARRAY_SIZE(act_names),
			   1, &v)))
		return rc;
	t->act = (enum act)v;

	json_t *params = json_object_get(obj, "params");
	if (!params)
		return 0;
	if (!json_is_object(params))
		return fail_got(c, "params", "an object of the activation's parameters", params);
	const char *names[ARRAY_SIZE(act_params)];
	int n = 0;
	for (size_t i = 0; i < ARRAY_SIZE(act_params); i++)
		if (act_params[i].act == t->act)
			names[n++] = act_params[i].name;
	const char *rawkey;
	json_t *val;
	json_object_foreach(params, rawkey, val) {
		if (name_index(names, n, rawkey) >= 0)
			continue;
		char *key = shown_key(rawkey);
		struct strbuf valid = STRBUF_INIT;
		for (int i = 0; i < n; i++)
			strbuf_addf(&valid, "%s%s", i ? ", " : "", names[i]);
		if (!n)
			fail(c, "field 'params.%s' does not apply: activation '%s' takes no parameters",
			     key, act_name(t->act));
		else
			fail(c, "field 'params.%s' does not apply to activation '%s' (its parameters: %s)",
			     key, act_name(t->act), valid.buf);
		strbuf_release(&valid);
		free(key);
		return -1;
	}
	for (size_t i = 0; i < ARRAY_SIZE(act_params); i++) {
		const struct act_param *p = &act_params[i];
		if (p->act != t->act)
			continue;
		char field[48];
		snprintf(field, sizeof(field), "params.%s", p->name);
		if ((rc = get_number(c, params, p->name, field, 0, &PARAM(t, p))))
			return rc;
	}
	if (t->act == ACT_HARDTANH && !(t->min_val < t->max_val))
		return fail(c, "field 'params.min_val' must be below 'params.max_val' (got %g and %g)",
			    t->min_val, t->max_val);
	if (t->act == ACT_SOFTPLUS && !(t->sp_beta > 0))
		return fail(c, "field 'params.beta' must be a positive number (got %g)", t->sp_beta);
	return 0;
}

/* The precision contract against the dtypes and the op. */
static int check_precision(struct pctx *c, struct task *t)
{
	int gemm_family = t->op == OP_GEMM || t->op == OP_MATVEC;
	const char *p = precision_name(t->precision), *in = dtype_name(t->in_dtype);
	switch (t->precision) {
	case PREC_STRICT:
	case PREC_TF32:
		if (t->in_dtype != DT_FP32)
			return fail(c, "field 'precision' '%s' needs dtype 'fp32' (got dtype '%s'; "
				    "use precision '%s')", p, in,
				    precision_name(t->in_dtype == DT_FP16 ? PREC_FP16 :
						   t->in_dtype == DT_BF16 ? PREC_BF16 : PREC_FP8));
		if (t->precision == PREC_TF32 && !gemm_family)
			return fail(c, "field 'precision' 'tf32' applies only to ops gemm and matvec "
				    "(got op '%s'; use 'strict')", op_name(t->op));
		if (t->out_dtype != DT_FP32)
			return fail(c, "field 'out_dtype' must be 'fp32' under precision '%s' (got '%s')",
				    p, dtype_name(t->out_dtype));
		break;
	case PREC_FP16:
	case PREC_BF16:
	case PREC_FP8: {
		enum dtype want = t->precision == PREC_FP16 ? DT_FP16 :
				  t->precision == PREC_BF16 ? DT_BF16 : DT_FP8_E4M3;
		if (t->in_dtype != want)
			return fail(c, "field 'precision' '%s' needs dtype '%s' (got dtype '%s')", p,
				    dtype_name(want), in);
		if (t->precision == PREC_FP8 && t->op != OP_GEMM)
			return fail(c, "field 'precision' 'fp8' applies only to op 'gemm' (got op '%s')",
				    op_name(t->op));
		break;
	}
	default:
		BUG("precision %d", (int)t->precision);
	}
	/* Hopper's FP8 tensor cores (and cuBLASLt's FP8 GEMMs) read A and B K-major only. */
	if (t->precision == PREC_FP8 && (t->a_layout != LAYOUT_ROW || t->b_layout != LAYOUT_COL))
		return fail(c, "precision 'fp8' needs a_layout 'row' and b_layout 'col' (K-major A "
			    "and B, the only form FP8 tensor cores read; got a_layout '%s', b_layout '%s')",
			    layout_names[t->a_layout], layout_names[t->b_layout]);
	return 0;
}

static int parse_checking(struct pctx *c, json_t *obj, struct task *t)
{
	int rc;
	json_t *ds = json_object_get(obj, "distributions");
	if (ds) {
		char *valid = names_list(dist_names, DIST_COUNT, 0);
		if (!json_is_array(ds) || json_array_size(ds) < 1 || json_array_size(ds) > DIST_COUNT) {
			char *what = xasprintf("a non-empty array of distinct names from: %s", valid);
			fail_got(c, "distributions", what, ds);
			free(what);
			free(valid);
			return -1;
		}
		t->n_dists = 0;
		for (size_t i = 0; i < json_array_size(ds); i++) {
			json_t *d = json_array_get(ds, i);
			int di = json_is_string(d) ? dist_parse(json_string_value(d)) : -1;
			char field[48];
			snprintf(field, sizeof(field), "distributions[%zu]", i);
			if (di < 0) {
				char *g = shown(d);
				fail(c, "field '%s' must be one of: %s (got %s)", field, valid, g);
				free(g);
				break;
			}
			if (!dist_applies(t->op, (enum dist)di)) {
				fail(c, "field '%s' '%s' does not apply to op '%s' (%s)", field,
				     dist_names[di], op_name(t->op), di == DIST_BRANCHES ?
				     "it probes activation branches" : "it probes GEMM precision");
				break;
			}
			for (int j = 0; j < t->n_dists; j++)
				if ((int)t->dists[j] == di)
					fail(c, "field '%s' repeats '%s'", field, dist_names[di]);
			if (c->err)
				break;
			t->dists[t->n_dists++] = (enum dist)di;
		}
		free(valid);
		if (c->err)
			return -1;
	} else {
		default_dists(t);
	}

	int64_t seeds = t->seeds;
	if ((rc = get_int(c, obj, "seeds", "seeds", 0, 1, MAX_SEEDS, "an integer from 1 to 16", &seeds)))
		return rc;
	t->seeds = (int)seeds;

	json_t *tol = json_object_get(obj, "tolerance");
	if (tol) {
		static const char *const tf[] = { "rtol", "atol" };
		if (!json_is_object(tol))
			return fail_got(c, "tolerance", "an object like {\"rtol\": 1e-4, \"atol\": 1e-5}", tol);
		if ((rc = check_fields(c, tol, "tolerance.", tf, 2, NULL, NULL)))
			return rc;
		double *dst[] = { &t->rtol, &t->atol };
		for (int i = 0; i < 2; i++) {
			json_t *v = json_object_get(tol, tf[i]);
			char field[32];
			snprintf(field, sizeof(field), "tolerance.%s", tf[i]);
			if (!v || json_is_null(v))
				continue; /* null: the contract's default */
			if (!json_is_number(v) || !(json_number_value(v) >= 0))
				return fail_got(c, field, "a number >= 0, or null for the contract's default", v);
			*dst[i] = json_number_value(v);
		}
	}
	return 0;
}

/* Checked element and byte counts of every tensor. */
static int check_sizes(struct pctx *c, const struct task *t)
{
	struct tensor_spec ts[TASK_MAX_TENSORS];
	int n = task_tensors(t, ts);
	for (int i = 0; i < n; i++) {
		int64_t numel = 1;
		int bad = 0;
		for (int d = 0; d < ts[i].ndim; d++)
			bad |= __builtin_mul_overflow(numel, ts[i].shape[d], &numel);
		bad |= __builtin_mul_overflow(numel, (int64_t)dtype_size(ts[i].dtype), &numel);
		if (!bad)
			continue;
		struct strbuf sb = STRBUF_INIT;
		for (int d = 0; d < ts[i].ndim; d++)
			strbuf_addf(&sb, "%s%lld", d ? ", " : "", (long long)ts[i].shape[d]);
		fail(c, "sizes too large: tensor '%s' [%s] of %s overflows a 64-bit byte count",
		     ts[i].name, sb.buf, dtype_name(ts[i].dtype));
		strbuf_release(&sb);
		return -1;
	}
	return 0;
}

static int valid_name(const char *s)
{
	size_t n = strlen(s);
	if (!n || n > NAME_MAX_LEN || s[0] == '/' || s[0] == '.' || strstr(s, ".."))
		return 0;
	for (; *s; s++)
		if (!(('a' <= *s && *s <= 'z') || ('A' <= *s && *s <= 'Z') ||
		      ('0' <= *s && *s <= '9') || strchr("_-./+", *s)))
			return 0;
	return 1;
}

/* The name of a task that has none: its file's base name without ".json", made valid. */
static char *name_from_origin(const char *origin)
{
	const char *base = origin ? strrchr(origin, '/') : NULL;
	base = base ? base + 1 : origin;
	if (!base || !*base)
		return xstrdup("task");
	char *s = xstrdup(base);
	if (ends_with(s, ".json"))
		s[strlen(s) - 5] = 0;
	for (char *p = s; *p; p++)
		if (!strchr("_-+", *p) && !(('a' <= *p && *p <= 'z') || ('A' <= *p && *p <= 'Z') ||
					    ('0' <= *p && *p <= '9')))
			*p = '_';
	if (!*s || strlen(s) > NAME_MAX_LEN) {
		free(s);
		s = xstrdup("task");
	}
	return s;
}

/* The validating parser of one task object. */
static struct task *task_from_json(json_t *obj, const char *origin, char **err)
{
	struct task *t = xcalloc(1, sizeof(*t));
	struct pctx c = { "?", NULL };
	int v, rc = 0;
	char *shown_name = NULL;

	task_defaults(t);
	if (!json_is_object(obj)) {
		char *g = shown(obj);
		shown_name = name_from_origin(origin);
		c.name = shown_name;
		rc = fail(&c, "expected a JSON object of the task's fields (got %s)", g);
		free(g);
		goto out;
	}

	json_t *name = json_object_get(obj, "name");
	if (name) {
		if (!json_is_string(name) || !valid_name(json_string_value(name))) {
			shown_name = name_from_origin(origin);
			c.name = shown_name;
			rc = fail_got(&c, "name", "1-128 characters of letters, digits and _ - . / + "
				      "(not starting with '/' or '.')", name);
			goto out;
		}
		t->name = xstrdup(json_string_value(name));
	} else {
		t->name = name_from_origin(origin);
	}
	c.name = t->name;

	json_t *desc = json_object_get(obj, "description");
	if (desc && (!json_is_string(desc) || strlen(json_string_value(desc)) > DESC_MAX_LEN)) {
		rc = fail_got(&c, "description", "a string of at most 4096 bytes", desc);
		goto out;
	}
	t->description = xstrdup(desc ? json_string_value(desc) : "");

	if (!json_object_get(obj, "op") && json_is_array(json_object_get(obj, "tasks"))) {
		rc = fail(&c, "this is a suite file (it has \"tasks\"), not one task");
		goto out;
	}
	v = 0;
	if ((rc = get_enum(&c, obj, "op", "op", 1, op_names, ARRAY_SIZE(op_names), 1, &v)))
		goto out;
	t->op = (enum op)v;

	const char *const *fields;
	int nfields;
	op_fields(t->op, &fields, &nfields);
	char *why = xasprintf("op '%s'", op_name(t->op));
	rc = check_fields(&c, obj, "", fields, nfields, all_fields, why);
	free(why);
	if (rc)
		goto out;

	v = DT_FP32;
	if ((rc = get_enum(&c, obj, "dtype", "dtype", 0, dtype_names, ARRAY_SIZE(dtype_names), 1, &v)))
		goto out;
	t->in_dtype = (enum dtype)v;
	v = t->in_dtype == DT_FP8_E4M3 ? DT_BF16 : t->in_dtype;
	if ((rc = get_enum(&c, obj, "out_dtype", "out_dtype", 0, dtype_names, ARRAY_SIZE(dtype_names) - 1,
			   1, &v)))
		goto out;
	t->out_dtype = (enum dtype)v;
	v = t->in_dtype == DT_FP32 ? PREC_STRICT : t->in_dtype == DT_FP16 ? PREC_FP16 :
	    t->in_dtype == DT_BF16 ? PREC_BF16 : PREC_FP8;
	if ((rc = get_enum(&c, obj, "precision", "precision", 0, precision_names,
			   ARRAY_SIZE(precision_names), 1, &v)))
		goto out;
	t->precision = (enum precision)v;

	switch (t->op) {
	case OP_GEMM:
		rc = parse_gemm(&c, obj, t);
		break;
	case OP_MATVEC:
		if (!(rc = get_pos(&c, obj, "m", 1, &t->m)) && !(rc = get_pos(&c, obj, "k", 1, &t->k))) {
			t->n = 1;
			t->m_ndims = 1;
			t->m_dims[0] = t->m;
		}
		break;
	case OP_DIAG_MATMUL:
		if (!(rc = get_pos(&c, obj, "n", 1, &t->n)))
			rc = get_pos(&c, obj, "m", 1, &t->m);
		break;
	case OP_SCALAR_MUL:
		if (!(rc = parse_shape(&c, obj, t)))
			rc = get_number(&c, obj, "scalar", "scalar", 1, &t->scalar);
		break;
	case OP_ELEMENTWISE:
		rc = parse_elementwise(&c, obj, t);
		break;
	case OP_SOFTMAX:
	case OP_LOG_SOFTMAX:
		rc = parse_shape(&c, obj, t);
		break;
	default:
		BUG("op %d", (int)t->op);
	}
	if (!rc && !(rc = check_precision(&c, t)) && !(rc = parse_checking(&c, obj, t)))
		rc = check_sizes(&c, t);
out:
	free(shown_name);
	if (rc || c.err) {
		if (!c.err)
			BUG("task parse failed without a message");
		*err = c.err;
		task_free(t);
		return NULL;
	}
	return t;
}

/* Whether a task file that is not JSON starts as Python source does (a module file under
 * another name): its first word after blank lines and comments. */
static int looks_like_python(const char *text, size_t len)
{
	static const char *const words[] = { "import ", "from ", "class ", "def " };
	size_t i = 0;
	for (;;) {
		while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n'))
			i++;
		if (i < len && text[i] == '#') { /* a comment line */
			while (i < len && text[i] != '\n')
				i++;
			continue;
		}
		break;
	}
	for (size_t w = 0; w < sizeof(words) / sizeof(*words); w++)
		if (len - i >= strlen(words[w]) && !strncmp(text + i, words[w], strlen(words[w])))
			return 1;
	return 0;
}

/*
 * Text that is not UTF-8: a byte order mark of UTF-16 or UTF-32, or a NUL byte (UTF-16 with no
 * mark has one in every ASCII character). Jansson would say "unable to decode byte 0xff" or,
 * stopping at the NUL, "'}' expected near end of file". A message (heap) naming what it is,
 * or NULL for text to parse.
 */
static char *not_utf8(const char *text, size_t len, const char *origin)
{
	static const struct {
		const char *bom;
		size_t n;
		const char *name;
	} boms[] = { /* UTF-32 first: its little-endian mark begins like UTF-16's */
		{ "\xff\xfe\0\0", 4, "UTF-32 (little-endian)" },
		{ "\0\0\xfe\xff", 4, "UTF-32 (big-endian)" },
		{ "\xff\xfe", 2, "UTF-16 (little-endian)" },
		{ "\xfe\xff", 2, "UTF-16 (big-endian)" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(boms); i++)
		if (len >= boms[i].n && !memcmp(text, boms[i].bom, boms[i].n))
			return xasprintf("task file '%s' is %s; save it as UTF-8", origin, boms[i].name);
	const char *nul = memchr(text, '\0', len);
	if (!nul)
		return NULL;
	if (len >= 4 && text[0] && !text[1] && text[2] && !text[3])
		return xasprintf("task file '%s' is UTF-16 (little-endian); save it as UTF-8", origin);
	if (len >= 4 && !text[0] && text[1] && !text[2] && text[3])
		return xasprintf("task file '%s' is UTF-16 (big-endian); save it as UTF-8", origin);
	return xasprintf("task file '%s' has a NUL byte at offset %zu; save it as UTF-8 text",
			 origin, (size_t)(nul - text));
}

struct task *task_parse_json(const char *text, size_t len, const char *origin, char **err)
{
	json_error_t je;
	const char *shown = origin ? origin : "<input>";
	/* A UTF-8 byte order mark (Windows editors write one) is no part of the JSON. */
	if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3)) {
		text += 3;
		len -= 3;
	}
	if ((*err = not_utf8(text, len, shown)))
		return NULL;
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		*err = str_one_line(xasprintf("task file '%s': invalid JSON at line %d, column %d: %s%s",
					  shown, je.line, je.column, je.text,
					  looks_like_python(text, len)
						  ? " (it reads as Python: a PyTorch module in KernelBench's "
						    "format is a task when its file name ends in .py)"
						  : ""));
		return NULL;
	}
	struct task *t = task_from_json(root, origin, err);
	json_decref(root);
	return t;
}

void task_free(struct task *t)
{
	if (!t)
		return;
	free(t->name);
	free(t->description);
	free(t);
}

struct task *task_dup(const struct task *t)
{
	struct task *d = xmalloc(sizeof(*d));
	*d = *t;
	d->name = xstrdup(t->name);
	d->description = xstrdup(t->description);
	return d;
}

int task_equal(const struct task *a, const struct task *b)
{
#define SAME(f) (a->f == b->f)
	if (strcmp(a->name, b->name) || strcmp(a->description, b->description))
		return 0;
	if (!(SAME(op) && SAME(in_dtype) && SAME(out_dtype) && SAME(precision) && SAME(batch) &&
	      SAME(m) && SAME(n) && SAME(k) && SAME(m_ndims) && SAME(a_layout) && SAME(b_layout) &&
	      SAME(a_struct) && SAME(b_struct) && SAME(out_mask) && SAME(alpha) && SAME(epi_bias) &&
	      SAME(epi_act) && SAME(ndim) && SAME(act) && SAME(negative_slope) && SAME(elu_alpha) &&
	      SAME(min_val) && SAME(max_val) && SAME(sp_beta) && SAME(sp_threshold) &&
	      SAME(scalar) && SAME(n_dists) && SAME(seeds) && SAME(rtol) && SAME(atol)))
		return 0;
#undef SAME
	if (memcmp(a->m_dims, b->m_dims, sizeof(a->m_dims)) || memcmp(a->shape, b->shape, sizeof(a->shape)))
		return 0;
	for (int i = 0; i < a->n_dists; i++)
		if (a->dists[i] != b->dists[i])
			return 0;
	return 1;
}

/* ---- canonical JSON ---- */

static void json_str(struct strbuf *sb, const char *s)
{
	strbuf_addch(sb, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			strbuf_addf(sb, "\\%c", *p);
		else if (*p == '\n')
			strbuf_addstr(sb, "\\n");
		else if (*p == '\t')
			strbuf_addstr(sb, "\\t");
		else if (*p < 0x20)
			strbuf_addf(sb, "\\u%04x", *p);
		else
			strbuf_addch(sb, *p);
	}
	strbuf_addch(sb, '"');
}

/* The shortest decimal that reads back as the same double. */
static void json_num(struct strbuf *sb, double d)
{
	char buf[40];
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	strbuf_addstr(sb, buf);
}

static void json_int_array(struct strbuf *sb, const int64_t *v, int n)
{
	strbuf_addch(sb, '[');
	for (int i = 0; i < n; i++)
		strbuf_addf(sb, "%s%lld", i ? ", " : "", (long long)v[i]);
	strbuf_addch(sb, ']');
}

#define KEY(k) strbuf_addstr(out, ",\n  \"" k "\": ")

void task_to_json(const struct task *t, struct strbuf *out)
{
	strbuf_addstr(out, "{\n  \"name\": ");
	json_str(out, t->name);
	KEY("description");
	json_str(out, t->description ? t->description : "");
	KEY("op");
	json_str(out, op_name(t->op));
	KEY("dtype");
	json_str(out, dtype_name(t->in_dtype));
	KEY("out_dtype");
	json_str(out, dtype_name(t->out_dtype));
	KEY("precision");
	json_str(out, precision_name(t->precision));
	switch (t->op) {
	case OP_GEMM:
		strbuf_addf(out, ",\n  \"batch\": %lld,\n  \"m\": %lld,\n  \"n\": %lld,\n  \"k\": %lld",
			    (long long)t->batch, (long long)t->m, (long long)t->n, (long long)t->k);
		if (t->m_ndims > 1) {
			KEY("m_dims");
			json_int_array(out, t->m_dims, t->m_ndims);
		}
		strbuf_addf(out, ",\n  \"a_layout\": \"%s\",\n  \"b_layout\": \"%s\"",
			    layout_names[t->a_layout], layout_names[t->b_layout]);
		strbuf_addf(out, ",\n  \"a_structure\": \"%s\",\n  \"b_structure\": \"%s\"",
			    structure_names[t->a_struct], structure_names[t->b_struct]);
		strbuf_addf(out, ",\n  \"mask\": \"%s\"", mask_names[t->out_mask]);
		KEY("alpha");
		json_num(out, t->alpha);
		strbuf_addf(out, ",\n  \"epilogue\": {\"bias\": %s, \"activation\": \"%s\"}",
			    t->epi_bias ? "true" : "false", act_name(t->epi_act));
		break;
	case OP_MATVEC:
		strbuf_addf(out, ",\n  \"m\": %lld,\n  \"k\": %lld", (long long)t->m, (long long)t->k);
		break;
	case OP_DIAG_MATMUL:
		strbuf_addf(out, ",\n  \"n\": %lld,\n  \"m\": %lld", (long long)t->n, (long long)t->m);
		break;
	case OP_SCALAR_MUL:
		KEY("shape");
		json_int_array(out, t->shape, t->ndim);
		KEY("scalar");
		json_num(out, t->scalar);
		break;
	case OP_ELEMENTWISE: {
		KEY("shape");
		json_int_array(out, t->shape, t->ndim);
		KEY("activation");
		json_str(out, act_name(t->act));
		int n = 0;
		for (size_t i = 0; i < ARRAY_SIZE(act_params); i++) {
			if (act_params[i].act != t->act)
				continue;
			strbuf_addstr(out, n++ ? ", " : ",\n  \"params\": {");
			strbuf_addf(out, "\"%s\": ", act_params[i].name);
			json_num(out, CPARAM(t, &act_params[i]));
		}
		if (n)
			strbuf_addch(out, '}');
		break;
	}
	case OP_SOFTMAX:
	case OP_LOG_SOFTMAX:
		KEY("shape");
		json_int_array(out, t->shape, t->ndim);
		break;
	default:
		break;
	}
	KEY("distributions");
	strbuf_addch(out, '[');
	for (int i = 0; i < t->n_dists; i++)
		strbuf_addf(out, "%s\"%s\"", i ? ", " : "", dist_name(t->dists[i]));
	strbuf_addch(out, ']');
	strbuf_addf(out, ",\n  \"seeds\": %d", t->seeds);
	KEY("tolerance");
	strbuf_addstr(out, "{\"rtol\": ");
	if (t->rtol < 0)
		strbuf_addstr(out, "null");
	else
		json_num(out, t->rtol);
	strbuf_addstr(out, ", \"atol\": ");
	if (t->atol < 0)
		strbuf_addstr(out, "null");
	else
		json_num(out, t->atol);
	strbuf_addstr(out, "}\n}\n");
}

#undef KEY

/* ---- the kernel's arguments ---- */

static struct tensor_spec *add_tensor(struct tensor_spec *out, int *n, const char *name,
				      int is_output, enum dtype dt, enum structure st)
{
	if (*n >= TASK_MAX_TENSORS)
		BUG("too many tensors");
	struct tensor_spec *s = &out[(*n)++];
	memset(s, 0, sizeof(*s));
	s->name = name;
	s->is_output = is_output;
	s->dtype = dt;
	s->structure = st;
	return s;
}

static void push_dim(struct tensor_spec *s, int64_t d)
{
	if (s->ndim >= TASK_MAX_DIMS + 1)
		BUG("too many dims");
	s->shape[s->ndim++] = d;
}

/* The structure of a stored transpose: the triangle flips. */
static enum structure transposed(enum structure s)
{
	return s == STRUCT_UPPER ? STRUCT_LOWER : s == STRUCT_LOWER ? STRUCT_UPPER : s;
}

static void push_shape(struct tensor_spec *s, const struct task *t)
{
	for (int i = 0; i < t->ndim; i++)
		push_dim(s, t->shape[i]);
}

int task_tensors(const struct task *t, struct tensor_spec out[TASK_MAX_TENSORS])
{
	int n = 0;
	struct tensor_spec *s;
	switch (t->op) {
	case OP_GEMM:
		s = add_tensor(out, &n, "A", 0, t->in_dtype,
			       t->a_layout == LAYOUT_COL ? transposed(t->a_struct) : t->a_struct);
		if (t->batch > 1)
			push_dim(s, t->batch);
		if (t->a_layout == LAYOUT_COL) {
			push_dim(s, t->k);
			push_dim(s, t->m);
		} else {
			for (int i = 0; i < t->m_ndims; i++)
				push_dim(s, t->m_dims[i]);
			push_dim(s, t->k);
		}
		s = add_tensor(out, &n, "B", 0, t->in_dtype,
			       t->b_layout == LAYOUT_COL ? transposed(t->b_struct) : t->b_struct);
		if (t->batch > 1)
			push_dim(s, t->batch);
		push_dim(s, t->b_layout == LAYOUT_COL ? t->n : t->k);
		push_dim(s, t->b_layout == LAYOUT_COL ? t->k : t->n);
		if (t->epi_bias) {
			s = add_tensor(out, &n, "bias", 0, t->out_dtype, STRUCT_GENERAL);
			push_dim(s, t->n);
		}
		s = add_tensor(out, &n, "C", 1, t->out_dtype, STRUCT_GENERAL);
		if (t->batch > 1)
			push_dim(s, t->batch);
		for (int i = 0; i < t->m_ndims; i++)
			push_dim(s, t->m_dims[i]);
		push_dim(s, t->n);
		break;
	case OP_MATVEC:
		s = add_tensor(out, &n, "A", 0, t->in_dtype, STRUCT_GENERAL);
		push_dim(s, t->m);
		push_dim(s, t->k);
		s = add_tensor(out, &n, "x", 0, t->in_dtype, STRUCT_GENERAL);
		push_dim(s, t->k);
		push_dim(s, 1);
		s = add_tensor(out, &n, "y", 1, t->out_dtype, STRUCT_GENERAL);
		push_dim(s, t->m);
		push_dim(s, 1);
		break;
	case OP_SCALAR_MUL:
		push_shape(add_tensor(out, &n, "A", 0, t->in_dtype, STRUCT_GENERAL), t);
		push_shape(add_tensor(out, &n, "C", 1, t->out_dtype, STRUCT_GENERAL), t);
		break;
	case OP_DIAG_MATMUL:
		s = add_tensor(out, &n, "a", 0, t->in_dtype, STRUCT_GENERAL);
		push_dim(s, t->n);
		s = add_tensor(out, &n, "B", 0, t->in_dtype, STRUCT_GENERAL);
		push_dim(s, t->n);
		push_dim(s, t->m);
		s = add_tensor(out, &n, "C", 1, t->out_dtype, STRUCT_GENERAL);
		push_dim(s, t->n);
		push_dim(s, t->m);
		break;
	case OP_ELEMENTWISE:
	case OP_SOFTMAX:
	case OP_LOG_SOFTMAX:
		push_shape(add_tensor(out, &n, "x", 0, t->in_dtype, STRUCT_GENERAL), t);
		push_shape(add_tensor(out, &n, "y", 1, t->out_dtype, STRUCT_GENERAL), t);
		break;
	default:
		break;
	}
	return n;
}

int task_scalars(const struct task *t, double vals[TASK_MAX_SCALARS],
		 const char *names[TASK_MAX_SCALARS])
{
	int n = 0;
	if (t->op == OP_GEMM) {
		names[n] = "alpha";
		vals[n++] = t->alpha;
	} else if (t->op == OP_SCALAR_MUL) {
		names[n] = "scalar";
		vals[n++] = t->scalar;
	} else if (t->op == OP_ELEMENTWISE) {
		for (size_t i = 0; i < ARRAY_SIZE(act_params); i++)
			if (act_params[i].act == t->act) {
				names[n] = act_params[i].name;
				vals[n++] = CPARAM(t, &act_params[i]);
			}
	}
	return n;
}

/* ---- work and traffic ---- */

static double numel(const struct tensor_spec *s)
{
	double n = 1;
	for (int i = 0; i < s->ndim; i++)
		n *= (double)s->shape[i];
	return n;
}

/*
 * Multiply-adds a GEMM with structured inputs and an output mask must do: the (i, j, k) with
 * A[i][k] and B[k][j] possibly nonzero and C[i][j] kept. Closed form per row i.
 */
static double structured_macs(const struct task *t)
{
	int64_t M = t->m, N = t->n, K = t->k;
	double total = 0;
	for (int64_t i = 0; i < M; i++) {
		int64_t L = 0, H = K - 1; /* k range allowed by A's row i */
		if (t->a_struct == STRUCT_UPPER)
			L = i;
		else if (t->a_struct == STRUCT_LOWER)
			H = i < K - 1 ? i : K - 1;
		int64_t a = 0, b = N - 1; /* j range kept by the mask */
		if (t->out_mask == MASK_UPPER)
			a = i;
		else if (t->out_mask == MASK_LOWER)
			b = i < N - 1 ? i : N - 1;
		if (L > H || a > b)
			continue;
		double w = (double)(H - L + 1), row = 0;
		if (t->b_struct == STRUCT_UPPER) { /* B[k][j] != 0 needs k <= j */
			int64_t s = a > L ? a : L, e = b < H ? b : H;
			if (s <= e)
				row += (double)(e - s + 1) * (double)((s - L + 1) + (e - L + 1)) / 2;
			s = a > H + 1 ? a : H + 1;
			if (s <= b)
				row += (double)(b - s + 1) * w;
		} else if (t->b_struct == STRUCT_LOWER) { /* k >= j */
			int64_t e = b < L - 1 ? b : L - 1;
			if (a <= e)
				row += (double)(e - a + 1) * w;
			int64_t s = a > L ? a : L;
			e = b < H ? b : H;
			if (s <= e)
				row += (double)(e - s + 1) * (double)((H - s + 1) + (H - e + 1)) / 2;
		} else {
			row = (double)(b - a + 1) * w;
		}
		total += row;
	}
	return total;
}

double task_flops(const struct task *t)
{
	struct tensor_spec ts[TASK_MAX_TENSORS];
	int n = task_tensors(t, ts);
	double out = n ? numel(&ts[n - 1]) : 0;
	switch (t->op) {
	case OP_GEMM: {
		int triangular = t->a_struct == STRUCT_UPPER || t->a_struct == STRUCT_LOWER ||
				 t->b_struct == STRUCT_UPPER || t->b_struct == STRUCT_LOWER ||
				 t->out_mask != MASK_NONE;
		if (triangular)
			return 2.0 * structured_macs(t);
		return 2.0 * (double)t->batch * (double)t->m * (double)t->n * (double)t->k;
	}
	case OP_MATVEC:
		return 2.0 * (double)t->m * (double)t->k;
	case OP_SOFTMAX:
	case OP_LOG_SOFTMAX:
		return 5.0 * out; /* max, subtract, exp, sum, scale */
	default:
		return out; /* about one operation per output element */
	}
}

double task_min_bytes(const struct task *t)
{
	struct tensor_spec ts[TASK_MAX_TENSORS];
	int n = task_tensors(t, ts);
	double bytes = 0;
	for (int i = 0; i < n; i++)
		bytes += numel(&ts[i]) * dtype_size(ts[i].dtype);
	return bytes;
}

double task_dram_bytes(const struct task *t, double l2_bytes)
{
	struct tensor_spec ts[TASK_MAX_TENSORS];
	int n = task_tensors(t, ts);
	double in = 0, out = 0;
	for (int i = 0; i < n; i++)
		*(ts[i].is_output ? &out : &in) += numel(&ts[i]) * dtype_size(ts[i].dtype);
	return in + (out > l2_bytes ? out - l2_bytes : 0);
}

int task_is_gemm_like(const struct task *t)
{
	return t->op == OP_GEMM || t->op == OP_MATVEC;
}

const char *task_workload(const struct task *t)
{
	if (task_is_gemm_like(t))
		return "gemm";
	if (t->op == OP_SOFTMAX || t->op == OP_LOG_SOFTMAX)
		return "rowwise";
	return "elementwise";
}

void task_shape_summary(const struct task *t, struct strbuf *out)
{
	switch (t->op) {
	case OP_GEMM:
		strbuf_addf(out, "M=%lld", (long long)t->m);
		if (t->m_ndims > 1) {
			strbuf_addstr(out, " (");
			for (int i = 0; i < t->m_ndims; i++)
				strbuf_addf(out, "%s%lld", i ? "x" : "", (long long)t->m_dims[i]);
			strbuf_addch(out, ')');
		}
		strbuf_addf(out, " N=%lld K=%lld", (long long)t->n, (long long)t->k);
		if (t->batch > 1)
			strbuf_addf(out, " batch=%lld", (long long)t->batch);
		if (t->a_layout == LAYOUT_COL)
			strbuf_addstr(out, " A^T");
		if (t->b_layout == LAYOUT_COL)
			strbuf_addstr(out, " B^T");
		if (t->a_struct)
			strbuf_addf(out, " A:%s", structure_names[t->a_struct]);
		if (t->b_struct)
			strbuf_addf(out, " B:%s", structure_names[t->b_struct]);
		if (t->out_mask)
			strbuf_addf(out, " mask:%s", mask_names[t->out_mask]);
		if (t->alpha != 1.0)
			strbuf_addf(out, " alpha=%g", t->alpha);
		if (t->epi_bias)
			strbuf_addstr(out, " +bias");
		if (t->epi_act)
			strbuf_addf(out, " +%s", act_name(t->epi_act));
		break;
	case OP_MATVEC:
		strbuf_addf(out, "M=%lld K=%lld", (long long)t->m, (long long)t->k);
		break;
	case OP_DIAG_MATMUL:
		strbuf_addf(out, "N=%lld M=%lld", (long long)t->n, (long long)t->m);
		break;
	default:
		for (int i = 0; i < t->ndim; i++)
			strbuf_addf(out, "%s%lld", i ? "x" : "", (long long)t->shape[i]);
		if (t->op == OP_SCALAR_MUL)
			strbuf_addf(out, " *%g", t->scalar);
		break;
	}
}

/* ---- loading, and the built-in suites ---- */

const char *const builtin_suites[] = { "kb1", "hopper", "llm", NULL };

struct suite {
	struct task **tasks;
	const char **names;
	int n;
};

static struct suite suites[ARRAY_SIZE(builtin_suites) - 1];
static pthread_once_t suites_once = PTHREAD_ONCE_INIT;

/* Our own files: a broken one is a bug in cutegen, caught by the unit tests. */
static void load_suites(void)
{
	for (size_t s = 0; builtin_suites[s]; s++) {
		char path[64];
		snprintf(path, sizeof(path), "tasks/%s.json", builtin_suites[s]);
		const struct embedded_file *f = embedded_find(path);
		if (!f)
			BUG("suite file %s is not embedded", path);
		json_error_t je;
		json_t *root = json_loadb(f->data, f->len, JSON_REJECT_DUPLICATES, &je);
		json_t *arr = root ? json_object_get(root, "tasks") : NULL;
		const char *sname = json_string_value(json_object_get(root, "suite"));
		if (!root || !json_is_array(arr) || !sname || strcmp(sname, builtin_suites[s]))
			BUG("%s: not a suite (%s at line %d)", path, root ? "no tasks" : je.text, je.line);
		struct suite *su = &suites[s];
		su->n = (int)json_array_size(arr);
		su->tasks = xcalloc((size_t)su->n, sizeof(*su->tasks));
		su->names = xcalloc((size_t)su->n + 1, sizeof(*su->names));
		for (int i = 0; i < su->n; i++) {
			char *err = NULL;
			su->tasks[i] = task_from_json(json_array_get(arr, (size_t)i), path, &err);
			if (!su->tasks[i])
				BUG("%s: %s", path, err);
			su->names[i] = su->tasks[i]->name;
			size_t pl = strlen(builtin_suites[s]);
			if (strncmp(su->names[i], builtin_suites[s], pl) || su->names[i][pl] != '/')
				BUG("%s: task '%s' is not named %s/...", path, su->names[i], builtin_suites[s]);
		}
		json_decref(root);
	}
}

static struct suite *find_suite(const char *name)
{
	pthread_once(&suites_once, load_suites);
	for (size_t s = 0; builtin_suites[s]; s++)
		if (!strcmp(builtin_suites[s], name))
			return &suites[s];
	return NULL;
}

int suite_tasks(const char *suite, const char *const **names)
{
	struct suite *su = find_suite(suite);
	if (!su)
		return -1;
	*names = su->names;
	return su->n;
}

const struct task *task_builtin(const char *name)
{
	const char *slash = strchr(name, '/');
	if (!slash || slash == name)
		return NULL;
	char *sname = xstrndup(name, (size_t)(slash - name));
	struct suite *su = find_suite(sname);
	free(sname);
	if (!su)
		return NULL;
	const struct task *hit = NULL;
	size_t len = strlen(name);
	for (int i = 0; i < su->n; i++) {
		const char *tn = su->tasks[i]->name;
		if (!strcmp(tn, name))
			return su->tasks[i];
		/* "kb1/19" names "kb1/19_relu" when only one task starts so */
		if (!strncmp(tn, name, len) && tn[len] == '_') {
			if (hit)
				return NULL;
			hit = su->tasks[i];
		}
	}
	return hit;
}

/* " (did you mean 'kb1/19_relu'?)" for a name close to built-in tasks' names, else ""; heap */
static char *task_suggestion(const char *name)
{
	pthread_once(&suites_once, load_suites);
	size_t n = 0;
	for (size_t s = 0; builtin_suites[s]; s++)
		n += (size_t)suites[s].n;
	const char **all = xcalloc(n + 1, sizeof(char *)), *best[5];
	n = 0;
	for (size_t s = 0; builtin_suites[s]; s++)
		for (int i = 0; i < suites[s].n; i++)
			all[n++] = suites[s].names[i];
	struct strbuf sb = STRBUF_INIT;
	suggest_format(&sb, "", best, suggest_similar(name, all, n, best, ARRAY_SIZE(best)));
	free(all);
	return strbuf_detach(&sb, NULL);
}

struct task *task_load(const char *name_or_path, char **err)
{
	const struct task *b = task_builtin(name_or_path);
	if (b)
		return task_dup(b);

	struct strbuf sb = STRBUF_INIT;
	struct task *t = NULL;
	int r = strbuf_read_file(&sb, name_or_path, TASK_FILE_MAX);
	if (r == CG_INPUT_TOOBIG) {
		*err = xasprintf("task file '%s' is larger than 1 MiB", name_or_path);
	} else if (r) {
		int e = errno;
		char *why = xstrdup(strbuf_read_strerror(r, name_or_path));
		const char *slash = strchr(name_or_path, '/');
		char *sname = slash ? xstrndup(name_or_path, (size_t)(slash - name_or_path)) : NULL;
		char *hint = e == ENOENT ? task_suggestion(name_or_path) : xstrdup("");
		if (e == ENOENT && sname && find_suite(sname))
			*err = xasprintf("no built-in task '%s'%s; 'cutegen tasks --suite %s' lists "
					 "them", name_or_path, hint, sname);
		else if (*hint)
			*err = xasprintf("no built-in task or task file '%s'%s; 'cutegen tasks' lists "
					 "the built-in tasks", name_or_path, hint);
		else
			*err = xasprintf("cannot read task file '%s': %s", name_or_path, why);
		free(why);
		free(hint);
		free(sname);
	} else {
		t = task_parse_json(sb.buf, sb.len, name_or_path, err);
	}
	strbuf_release(&sb);
	return t;
}

static double unit_roundoff(enum dtype d)
{
	switch (d) {
	case DT_FP16: return ldexp(1.0, -11);
	case DT_BF16: return ldexp(1.0, -8);
	case DT_FP8_E4M3: return ldexp(1.0, -4);
	default: return ldexp(1.0, -24);
	}
}

/* The spacing of an output type's subnormals: rounding a correct result that small to the
 * output type loses up to half of it, whatever rtol says. */
static double subnormal_step(enum dtype d)
{
	switch (d) {
	case DT_FP16: return ldexp(1.0, -24);
	case DT_BF16: return ldexp(1.0, -133);
	case DT_FP8_E4M3: return ldexp(1.0, -9);
	default: return ldexp(1.0, -149);
	}
}

/*
 * The tolerance of each op and contract (docs/evaluation.md explains them), shared by the
 * runner (which judges with it) and the prompt (which states it). GEMMs are judged
 * against the scale of the computation, sum |a||b|: an fp32 dot product of K terms is within
 * a few sqrt(K) roundings of that scale, while TF32 or fp16 rounding of the inputs is off by
 * about 2^-11 of it, which the sparse distribution (few terms per dot product) makes plain.
 */
void task_tolerance(const struct task *t, enum dist dist, struct task_tolerance *cmp)
{
	int gemm_like = task_is_gemm_like(t);
	cmp->eps_scale = 0;
	double u32 = ldexp(1.0, -24), uo = unit_roundoff(t->out_dtype);
	if (gemm_like) {
		double keff = (double)t->k;
		if (dist == DIST_SPARSE) {
			double dens = fmin(1.0, sqrt(8.0 / keff));
			keff = fmax(1.0, keff * dens * dens);
		}
		double acc = u32 * (8.0 * sqrt(keff) + 16.0);
		switch (t->precision) {
		/* TF32 keeps 10 of fp32's 23 mantissa bits: rounded to nearest, each operand is off
		 * by up to 2^-11 and a product by 2^-10; truncated (tensor cores may drop the low
		 * 13 bits instead of rounding them) by 2^-10 and 2^-9, all of one sign. The contract
		 * allows either: 2^-9 of the scale. A bf16 shortcut (2^-8 per operand) still fails. */
		case PREC_TF32: cmp->eps_scale = ldexp(1.0, -9) + acc; break;
		case PREC_FP16: case PREC_BF16: cmp->eps_scale = 4.0 * acc; break;
		case PREC_FP8: cmp->eps_scale = ldexp(1.0, -10); break;
		default: cmp->eps_scale = acc; break;
		}
		cmp->rtol = t->out_dtype == DT_FP32 ? 4 * u32 : 1.01 * uo;
		cmp->atol = subnormal_step(t->out_dtype);
	} else if (t->op == OP_SOFTMAX) {
		struct tensor_spec ts[TASK_MAX_TENSORS];
		int n = task_tensors(t, ts);
		const struct tensor_spec *o = NULL;
		for (int i = 0; i < n; i++)
			if (ts[i].is_output)
				o = &ts[i];
		double cols = o && o->ndim ? (double)o->shape[o->ndim - 1] : 1.0;
		cmp->rtol = t->out_dtype == DT_FP32 ? 1e-5 + 2 * u32 * sqrt(cols) : 2 * uo;
		cmp->atol = 1e-3 / cols; /* a thousandth of a row's mean value */
	} else if (t->op == OP_LOG_SOFTMAX) {
		cmp->rtol = t->out_dtype == DT_FP32 ? 1e-5 : 2 * uo;
		cmp->atol = 3e-7 * (1.0 + (dist == DIST_LARGE ? 100.0 : 8.0));
	} else if (t->op == OP_ELEMENTWISE) {
		cmp->rtol = t->out_dtype == DT_FP32 ? 1e-5 : 2 * uo;
		cmp->atol = 1e-6;
	} else {
		cmp->rtol = t->out_dtype == DT_FP32 ? 1e-6 : 2 * uo;
		cmp->atol = 1e-7;
	}
	if (t->rtol >= 0)
		cmp->rtol = t->rtol;
	if (t->atol >= 0) {
		if (gemm_like)
			cmp->eps_scale = t->atol;
		else
			cmp->atol = t->atol;
	}
}
