/*
 * RUN.json, parsed and checked field by field (module_run.h): the runner trusts nothing in it
 * it has not checked here.
 */
#include "common/module_run.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_MAX_LEN 128

static const struct {
	const char *name;
	int size, is_float;
} dtypes[] = {
	[MDT_INVALID] = { "", 0, 0 },   [MDT_FP32] = { "fp32", 4, 1 }, [MDT_FP16] = { "fp16", 2, 1 },
	[MDT_BF16] = { "bf16", 2, 1 },  [MDT_FP8] = { "fp8_e4m3", 1, 1 }, [MDT_FP64] = { "fp64", 8, 1 },
	[MDT_I64] = { "i64", 8, 0 },    [MDT_I32] = { "i32", 4, 0 },   [MDT_I16] = { "i16", 2, 0 },
	[MDT_I8] = { "i8", 1, 0 },      [MDT_U8] = { "u8", 1, 0 },     [MDT_BOOL] = { "bool", 1, 0 },
};

enum mrun_dtype mrun_dtype_parse(const char *s)
{
	for (int d = MDT_FP32; s && d <= MDT_BOOL; d++)
		if (!strcmp(s, dtypes[d].name))
			return (enum mrun_dtype)d;
	return MDT_INVALID;
}

const char *mrun_dtype_name(enum mrun_dtype d)
{
	return d > MDT_INVALID && d <= MDT_BOOL ? dtypes[d].name : "invalid";
}

int mrun_dtype_size(enum mrun_dtype d)
{
	return d > MDT_INVALID && d <= MDT_BOOL ? dtypes[d].size : 0;
}

int mrun_dtype_is_float(enum mrun_dtype d)
{
	return d > MDT_INVALID && d <= MDT_BOOL && dtypes[d].is_float;
}

const char *mrun_error_words(double ratio, char *buf, size_t n)
{
	if (ratio != ratio || ratio > 1e300 || ratio < -1e300) {
		snprintf(buf, n, "not finite");
		return buf;
	}
	if (ratio <= 1) {
		snprintf(buf, n, "within its budget");
		return buf;
	}
	double lo = 1;
	while (lo < 1e9 && ratio >= 10 * lo)
		lo *= 10;
	if (ratio >= 1e9 * 10)
		snprintf(buf, n, "over 1e10 times its budget");
	else if (ratio < 3 * lo)
		snprintf(buf, n, "%g to %g times its budget", lo, 3 * lo);
	else
		snprintf(buf, n, "%g to %g times its budget", 3 * lo, 10 * lo);
	return buf;
}

void module_run_free(struct module_run *mr)
{
	if (!mr)
		return;
	for (int i = 0; i < mr->ntensors; i++)
		free(mr->tensors[i].name);
	free(mr->tensors);
	for (int i = 0; i < mr->nscalars; i++)
		free(mr->scalar_names[i]);
	free(mr->scalar_names);
	free(mr->scalars);
	for (int k = 0; k < mr->ncases; k++) {
		free(mr->cases[k].inputs);
		free(mr->cases[k].ref);
		free(mr->cases[k].truth);
	}
	free(mr->cases);
	free(mr->name);
	free(mr->file);
	free(mr);
}

static const char *str_at(json_t *o, const char *k, size_t max)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s && strlen(s) <= max ? s : NULL;
}

/* A JSON integer in [lo, hi] into *v; -1 when absent, not an integer or out of range. */
static int int_in(json_t *v, int64_t lo, int64_t hi, int64_t *out)
{
	if (!json_is_integer(v))
		return -1;
	json_int_t x = json_integer_value(v);
	if (x < lo || x > hi)
		return -1;
	*out = (int64_t)x;
	return 0;
}

static int parse_shape(json_t *a, int64_t *shape, int *ndim, int64_t *numel)
{
	if (!json_is_array(a) || json_array_size(a) > MRUN_MAX_DIMS)
		return -1;
	*ndim = (int)json_array_size(a);
	*numel = 1;
	for (int d = 0; d < *ndim; d++) {
		if (int_in(json_array_get(a, (size_t)d), 0, MRUN_MAX_BYTES, &shape[d]))
			return -1;
		if (shape[d] && *numel > MRUN_MAX_BYTES / shape[d])
			return -1;
		*numel *= shape[d];
	}
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* One handle H for a tensor whose elements are `want` (dtype) with the tensor's shape. */
static char *parse_handle(json_t *h, const struct mrun_tensor *t, enum mrun_dtype want,
			  struct mrun_handle *out)
{
	if (!json_is_object(h))
		return xasprintf("the handle of '%s' is not an object", t->name);
	const char *ipc = json_string_value(json_object_get(h, "ipc"));
	if (!ipc || strlen(ipc) != 2 * MRUN_IPC_BYTES)
		return xasprintf("the handle of '%s': \"ipc\" must be %d lowercase hex digits",
				 t->name, 2 * MRUN_IPC_BYTES);
	for (int i = 0; i < MRUN_IPC_BYTES; i++) {
		int hi = hexval(ipc[2 * i]), lo = hexval(ipc[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return xasprintf("the handle of '%s': \"ipc\" must be %d lowercase hex digits",
					 t->name, 2 * MRUN_IPC_BYTES);
		out->ipc[i] = (unsigned char)(hi << 4 | lo);
	}
	if (int_in(json_object_get(h, "offset"), 0, MRUN_MAX_BYTES, &out->offset))
		return xasprintf("the handle of '%s': \"offset\" must be an integer in [0, 2^40]", t->name);
	if (int_in(json_object_get(h, "bytes"), 0, MRUN_MAX_BYTES, &out->bytes))
		return xasprintf("the handle of '%s': \"bytes\" must be an integer in [0, 2^40]", t->name);
	const char *dt = json_string_value(json_object_get(h, "dtype"));
	out->dtype = dt ? mrun_dtype_parse(dt) : want;
	if (out->dtype != want)
		return xasprintf("the handle of '%s' holds %s, want %s", t->name, dt, mrun_dtype_name(want));
	int64_t need = t->numel * mrun_dtype_size(want);
	if (out->bytes != need)
		return xasprintf("the handle of '%s' holds %lld bytes, but %lld elements of %s are %lld",
				 t->name, (long long)out->bytes, (long long)t->numel, mrun_dtype_name(want),
				 (long long)need);
	json_t *sh = json_object_get(h, "shape");
	if (sh) {
		int64_t shape[MRUN_MAX_DIMS];
		int nd;
		int64_t numel;
		if (parse_shape(sh, shape, &nd, &numel) || nd != t->ndim ||
		    memcmp(shape, t->shape, (size_t)nd * sizeof(int64_t)))
			return xasprintf("the handle of '%s' has another shape than the tensor list",
					 t->name);
	}
	return NULL;
}

static char *parse_handles(json_t *a, const char *what, int k, struct mrun_tensor *ts, int n,
			   enum mrun_dtype truth_dt, struct mrun_handle **out)
{
	if (!json_is_array(a) || json_array_size(a) != (size_t)n)
		return xasprintf("case %d: \"%s\" must list %d handles", k, what, n);
	*out = xcalloc((size_t)(n ? n : 1), sizeof(**out));
	for (int i = 0; i < n; i++) {
		enum mrun_dtype want = ts[i].dtype;
		if (truth_dt && mrun_dtype_is_float(want))
			want = truth_dt;
		char *e = parse_handle(json_array_get(a, (size_t)i), &ts[i], want, &(*out)[i]);
		if (e) {
			char *m = xasprintf("case %d, %s: %s", k, what, e);
			free(e);
			return m;
		}
	}
	return NULL;
}

static char *parse_tensors(json_t *a, struct module_run *mr)
{
	if (!json_is_array(a) || json_array_size(a) < 2 || json_array_size(a) > MRUN_MAX_TENSORS)
		return xasprintf("\"tensors\" must list 2 to %d tensors", MRUN_MAX_TENSORS);
	mr->ntensors = (int)json_array_size(a);
	mr->tensors = xcalloc((size_t)mr->ntensors, sizeof(*mr->tensors));
	int seen_out = 0;
	for (int i = 0; i < mr->ntensors; i++) {
		json_t *o = json_array_get(a, (size_t)i);
		struct mrun_tensor *t = &mr->tensors[i];
		const char *name = str_at(o, "name", NAME_MAX_LEN);
		const char *role = json_string_value(json_object_get(o, "role"));
		const char *dt = json_string_value(json_object_get(o, "dtype"));
		if (!name || !*name)
			return xasprintf("tensor %d: \"name\" must be a string of 1 to %d bytes", i, NAME_MAX_LEN);
		t->name = xstrdup(name);
		if (!role || (strcmp(role, "input") && strcmp(role, "parameter") && strcmp(role, "buffer") &&
			      strcmp(role, "output")))
			return xasprintf("tensor '%s': \"role\" must be input, parameter, buffer or output", name);
		t->role = !strcmp(role, "input") ? MRUN_INPUT : !strcmp(role, "parameter") ? MRUN_PARAMETER
			  : !strcmp(role, "buffer") ? MRUN_BUFFER : MRUN_OUTPUT;
		t->dtype = mrun_dtype_parse(dt);
		if (!t->dtype)
			return xasprintf("tensor '%s': unknown dtype '%.20s'", name, dt ? dt : "");
		if (parse_shape(json_object_get(o, "shape"), t->shape, &t->ndim, &t->numel))
			return xasprintf("tensor '%s': \"shape\" must be at most %d sizes, at most 2^40 "
					 "elements in all", name, MRUN_MAX_DIMS);
		t->bytes = t->numel * mrun_dtype_size(t->dtype);
		if (t->bytes > MRUN_MAX_BYTES)
			return xasprintf("tensor '%s' is larger than 2^40 bytes", name);
		if (t->role == MRUN_OUTPUT) {
			seen_out = 1;
			mr->noutputs++;
		} else if (seen_out) {
			return xasprintf("tensor '%s': outputs must come last (ABI order)", name);
		} else {
			mr->ninputs++;
		}
	}
	if (!mr->noutputs || !mr->ninputs)
		return xstrdup("\"tensors\" must hold at least one input and one output");
	return NULL;
}

struct module_run *module_run_parse(const char *text, size_t len, char **err)
{
	struct module_run *mr = NULL;
	char *e = NULL;
	json_error_t je;
	if (len > MRUN_MAX_TEXT) {
		*err = xasprintf("the module-run file is larger than %d bytes", MRUN_MAX_TEXT);
		return NULL;
	}
	json_t *root = json_loadb(text, len, 0, &je);
	if (!json_is_object(root)) {
		*err = str_one_line(xasprintf("the module-run file is not a JSON object (line %d: %s)", je.line,
					      je.text));
		goto out;
	}
	mr = xcalloc(1, sizeof(*mr));
	const char *name = str_at(root, "name", 256), *file = str_at(root, "file", 4096);
	mr->name = xstrdup(name ? name : "module");
	mr->file = xstrdup(file ? file : "");
	if ((e = parse_tensors(json_object_get(root, "tensors"), mr)))
		goto bad;

	json_t *sc = json_object_get(root, "scalars");
	if (sc && (!json_is_array(sc) || json_array_size(sc) > MRUN_MAX_SCALARS)) {
		e = xasprintf("\"scalars\" must be a list of at most %d", MRUN_MAX_SCALARS);
		goto bad;
	}
	mr->nscalars = sc ? (int)json_array_size(sc) : 0;
	mr->scalars = xcalloc((size_t)mr->nscalars + 1, sizeof(double));
	mr->scalar_names = xcalloc((size_t)mr->nscalars + 1, sizeof(char *));
	for (int i = 0; i < mr->nscalars; i++) {
		json_t *o = json_array_get(sc, (size_t)i);
		const char *n = str_at(o, "name", NAME_MAX_LEN);
		json_t *v = json_object_get(o, "value");
		mr->scalar_names[i] = xstrdup(n ? n : "");
		if (!n || !json_is_number(v) || !isfinite(json_number_value(v))) {
			e = xasprintf("scalar %d must have a name and a finite \"value\"", i);
			goto bad;
		}
		mr->scalars[i] = json_number_value(v);
	}

	const char *prec = str_at(root, "precision", sizeof(mr->precision) - 1);
	if (!prec || (strcmp(prec, "strict") && strcmp(prec, "tf32") && strcmp(prec, "fp16") &&
		      strcmp(prec, "bf16") && strcmp(prec, "none"))) {
		e = xstrdup("\"precision\" must be strict, tf32, fp16, bf16 or none");
		goto bad;
	}
	strcpy(mr->precision, prec);
	const char *truth = json_string_value(json_object_get(root, "truth"));
	if (!truth || (strcmp(truth, "fp64") && strcmp(truth, "fp32"))) {
		e = xstrdup("\"truth\" must be fp64 or fp32");
		goto bad;
	}
	mr->truth_fp64 = !strcmp(truth, "fp64");
	json_t *tol = json_object_get(root, "tolerance");
	json_t *mul = json_object_get(tol, "multiple"), *ulps = json_object_get(tol, "ulps");
	mr->multiple = json_is_number(mul) ? json_number_value(mul) : -1;
	mr->ulps = json_is_number(ulps) ? json_number_value(ulps) : -1;
	if (!(mr->multiple > 0 && mr->multiple <= 1e6) || !(mr->ulps >= 0 && mr->ulps <= 1e6)) {
		e = xstrdup("\"tolerance\" must give \"multiple\" in (0, 1e6] and \"ulps\" in [0, 1e6]");
		goto bad;
	}
	json_t *fl = json_object_get(root, "flops"), *by = json_object_get(root, "bytes");
	mr->flops = json_is_number(fl) && json_number_value(fl) >= 0 && json_number_value(fl) < 1e22
		    ? json_number_value(fl) : -1;
	mr->bytes = json_is_number(by) && json_number_value(by) >= 0 && json_number_value(by) < 1e18
		    ? json_number_value(by) : -1;
	json_t *lim = json_object_get(root, "limits");
	json_t *lg = json_object_get(lim, "gbps"), *lt = json_object_get(lim, "tflops");
	mr->limit_gbps = json_is_number(lg) && json_number_value(lg) > 0 ? json_number_value(lg) : 0;
	mr->limit_tflops = json_is_number(lt) && json_number_value(lt) > 0 ? json_number_value(lt) : 0;

	json_t *cases = json_object_get(root, "cases");
	if (!json_is_array(cases) || json_array_size(cases) < MRUN_MIN_CASES ||
	    json_array_size(cases) > MRUN_MAX_CASES) {
		e = xasprintf("\"cases\" must list %d to %d cases", MRUN_MIN_CASES, MRUN_MAX_CASES);
		goto bad;
	}
	mr->cases = xcalloc(json_array_size(cases), sizeof(*mr->cases));
	struct mrun_tensor *outs = mr->tensors + mr->ninputs;
	enum mrun_dtype tdt = mr->truth_fp64 ? MDT_FP64 : MDT_FP32;
	for (size_t k = 0; k < json_array_size(cases); k++) {
		json_t *c = json_array_get(cases, k);
		struct mrun_case *mc = &mr->cases[k];
		mr->ncases = (int)k + 1;
		int64_t seed = 0;
		const char *dist = str_at(c, "dist", sizeof(mc->dist) - 1);
		if (!json_is_object(c) || int_in(json_object_get(c, "seed"), 0, 1ll << 31, &seed) || !dist) {
			e = xasprintf("case %zu must have an integer \"seed\" and a \"dist\" of at most %zu "
				      "bytes", k, sizeof(mc->dist) - 1);
			goto bad;
		}
		mc->seed = (int)seed;
		strcpy(mc->dist, dist);
		if ((e = parse_handles(json_object_get(c, "inputs"), "inputs", (int)k, mr->tensors,
				       mr->ninputs, MDT_INVALID, &mc->inputs)) ||
		    (e = parse_handles(json_object_get(c, "ref"), "ref", (int)k, outs, mr->noutputs,
				       MDT_INVALID, &mc->ref)) ||
		    (e = parse_handles(json_object_get(c, "truth"), "truth", (int)k, outs, mr->noutputs,
				       tdt, &mc->truth)))
			goto bad;
	}
	goto out;
bad:
	*err = str_one_line(xasprintf("module-run file: %s", e)); /* names quoted may hold newlines */
	free(e);
	module_run_free(mr);
	mr = NULL;
out:
	if (root)
		json_decref(root);
	return mr;
}
