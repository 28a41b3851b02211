/*
 * Module tasks: parsing the reference process's description of a KernelBench-format module
 * (task_module.h). The text comes from a child process that ran user code: every string and
 * array is capped and every field checked; a bad description fails with one line.
 */
#include "common/task_module.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <sys/stat.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define NAME_MAX_LEN 256
#define TEXT_MAX_LEN 4096

static const char *const dtype_names_ok[] = { "fp32", "fp16", "bf16", "fp64", "i64", "i32",
					      "i16", "i8", "u8", "bool", "fp8_e4m3" };
static const char *const workloads_ok[] = { "gemm-like", "memory-bound", "reduction",
					    "convolution", "attention", "other" };

const char *module_role_name(enum module_role r)
{
	switch (r) {
	case MROLE_INPUT: return "input";
	case MROLE_PARAMETER: return "parameter";
	case MROLE_BUFFER: return "buffer";
	case MROLE_OUTPUT: return "output";
	}
	return "?";
}

int task_spec_is_module(const char *spec)
{
	size_t n = strlen(spec);
	return n > 3 && !strcmp(spec + n - 3, ".py");
}

int task_spec_is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int module_dir_list(const char *dir, char ***paths, char **err)
{
	char real[PATH_MAX];
	*paths = NULL;
	DIR *d = realpath(dir, real) ? opendir(real) : NULL;
	if (!d) {
		*err = xasprintf("cannot read the module directory '%s': %s", dir, strerror(errno));
		return -1;
	}
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (e->d_name[0] == '_' || e->d_name[0] == '.' || len < 4 || strcmp(e->d_name + len - 3, ".py"))
			continue;
		if (n >= MODULE_DIR_MAX) {
			*err = xasprintf("module directory '%s' has more than %d module files", dir, MODULE_DIR_MAX);
			for (int i = 0; i < n; i++)
				free((*paths)[i]);
			free(*paths);
			*paths = NULL;
			closedir(d);
			return -1;
		}
		*paths = xrealloc(*paths, sizeof(**paths) * (size_t)(n + 1));
		(*paths)[n++] = xasprintf("%s/%s", real, e->d_name);
	}
	closedir(d);
	if (n)
		qsort(*paths, (size_t)n, sizeof(**paths), cmp_str);
	return n;
}

__attribute__((format(printf, 3, 4))) static int fail(char **err, const char *origin, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	strbuf_addf(&sb, "module '%s': the reference process's description ", origin);
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	*err = str_one_line(strbuf_detach(&sb, NULL)); /* a name or a parser's quote may hold a newline */
	return -1;
}

/* Whether the n bytes at s hold no control character (< 0x20). */
static int no_control(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20)
			return 0;
	return 1;
}

/* A string field of at most max bytes without control characters; NULL when absent and
 * optional. */
static int get_str(json_t *o, const char *key, int required, size_t max, char **out, char **err,
		   const char *origin)
{
	json_t *v = json_object_get(o, key);
	*out = NULL;
	if (!v || json_is_null(v)) {
		if (required)
			return fail(err, origin, "lacks the string '%s'", key);
		return 0;
	}
	if (!json_is_string(v))
		return fail(err, origin, "has a '%s' that is not a string", key);
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);
	if (n > max)
		return fail(err, origin, "has a '%s' longer than %zu bytes", key, max);
	if (!no_control(s, n))
		return fail(err, origin, "has a control character in '%s'", key);
	*out = xstrndup(s, n);
	return 0;
}

static int one_of(const char *s, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return 1;
	return 0;
}

static int get_tensors(json_t *o, const char *key, enum module_role role, struct module_desc *md,
		       int *count, char **err, const char *origin)
{
	json_t *a = json_object_get(o, key);
	*count = 0;
	if (!json_is_array(a))
		return fail(err, origin, "lacks the array '%s'", key);
	size_t n = json_array_size(a);
	if (md->ntensors + n > MODULE_MAX_TENSORS)
		return fail(err, origin, "has more than %d tensors", MODULE_MAX_TENSORS);
	for (size_t i = 0; i < n; i++) {
		json_t *e = json_array_get(a, i);
		if (!json_is_object(e))
			return fail(err, origin, "has a '%s' item %zu that is not an object", key, i);
		struct module_tensor *t = &md->tensors[md->ntensors];
		memset(t, 0, sizeof(*t));
		t->role = role;
		char *dt = NULL, *r = NULL;
		if (get_str(e, "name", 1, NAME_MAX_LEN, &t->name, err, origin))
			return -1;
		md->ntensors++; /* owns t->name from here */
		if (!*t->name)
			return fail(err, origin, "has an empty tensor name in '%s'", key);
		if (get_str(e, "dtype", 1, 16, &dt, err, origin))
			return -1;
		int ok = one_of(dt, dtype_names_ok, sizeof(dtype_names_ok) / sizeof(*dtype_names_ok));
		if (ok)
			strcpy(t->dtype, dt);
		else
			fail(err, origin, "gives tensor '%s' the dtype '%s', which no kernel here takes "
				     "(tensors are fp32, fp16, bf16, fp64, fp8_e4m3, i64, i32, i16, i8, u8 "
				     "or bool: convert it in get_inputs() or in the module)", t->name, dt);
		free(dt);
		if (!ok)
			return -1;
		if (role == MROLE_PARAMETER) {
			if (get_str(e, "role", 0, 16, &r, err, origin))
				return -1;
			if (r && !strcmp(r, "buffer"))
				t->role = MROLE_BUFFER;
			else if (r && strcmp(r, "parameter")) {
				fail(err, origin, "gives '%s' the role '%s' (parameter or buffer)", t->name, r);
				free(r);
				return -1;
			}
			free(r);
		}
		json_t *sh = json_object_get(e, "shape");
		if (!json_is_array(sh) || json_array_size(sh) > MODULE_MAX_DIMS)
			return fail(err, origin, "gives tensor '%s' a shape that is not an array of at most "
				    "%d sizes", t->name, MODULE_MAX_DIMS);
		t->ndim = (int)json_array_size(sh);
		double numel = 1;
		for (int d = 0; d < t->ndim; d++) {
			json_t *s = json_array_get(sh, (size_t)d);
			if (!json_is_integer(s) || json_integer_value(s) < 0)
				return fail(err, origin, "gives tensor '%s' a size that is not a "
					    "non-negative integer", t->name);
			t->shape[d] = json_integer_value(s);
			numel *= (double)t->shape[d];
		}
		if (numel > 9.0e15)
			return fail(err, origin, "gives tensor '%s' more than 2^53 elements", t->name);
		(*count)++;
	}
	return 0;
}

static int get_num(json_t *o, const char *key, double dflt, double *out, char **err, const char *origin)
{
	json_t *v = json_object_get(o, key);
	if (!v || json_is_null(v)) {
		*out = dflt;
		return 0;
	}
	if (!json_is_number(v) || !isfinite(json_number_value(v)) || json_number_value(v) < 0)
		return fail(err, origin, "has a '%s' that is not a non-negative number", key);
	*out = json_number_value(v);
	return 0;
}

/* "mode_modules": an array of strings, joined with ", " into md->mode_modules (NULL when
 * absent or empty). */
static int get_mode_modules(json_t *o, struct module_desc *md, char **err, const char *origin)
{
	json_t *a = json_object_get(o, "mode_modules");
	if (!a || json_is_null(a))
		return 0;
	if (!json_is_array(a))
		return fail(err, origin, "has a 'mode_modules' that is not an array");
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < json_array_size(a); i++) {
		json_t *e = json_array_get(a, i);
		const char *v = json_string_value(e);
		if (!v || !no_control(v, json_string_length(e)) ||
		    sb.len + json_string_length(e) > TEXT_MAX_LEN) {
			strbuf_release(&sb);
			return fail(err, origin, "has a 'mode_modules' item that is not a short line of text");
		}
		strbuf_addf(&sb, "%s%s", i ? ", " : "", v);
	}
	if (sb.len)
		md->mode_modules = strbuf_detach(&sb, NULL);
	strbuf_release(&sb);
	return 0;
}

void module_mode_note(const struct module_desc *md, struct strbuf *out)
{
	int train = md->mode && !strcmp(md->mode, "train");
	strbuf_addstr(out, train ? "train (training mode, CUTEGEN \"mode\": \"train\")" : "eval (Model().eval())");
	if (md->mode_modules)
		strbuf_addf(out, ": %s compute%s %s", md->mode_modules, strchr(md->mode_modules, ',') ? "" : "s",
			    train ? "as in training (batch statistics, dropout on)"
				  : "as in inference (running statistics, no dropout); KernelBench runs "
				    "Model() in training mode: CUTEGEN = {\"mode\": \"train\"} judges that");
}

struct module_desc *module_desc_parse(const char *text, size_t len, const char *origin, char **err)
{
	if (len > MODULE_DESC_MAX) {
		fail(err, origin, "is larger than %d bytes", MODULE_DESC_MAX);
		return NULL;
	}
	json_error_t je;
	json_t *o = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!json_is_object(o)) {
		if (o)
			fail(err, origin, "is not a JSON object");
		else
			fail(err, origin, "is not JSON (line %d: %s)", je.line, je.text);
		json_decref(o);
		return NULL;
	}
	struct module_desc *md = xcalloc(1, sizeof(*md));
	md->tensors = xcalloc(MODULE_MAX_TENSORS, sizeof(*md->tensors));
	int rc = -1;
	if (get_str(o, "file", 1, 4096, &md->file, err, origin) ||
	    get_str(o, "name", 1, NAME_MAX_LEN, &md->name, err, origin) ||
	    get_str(o, "device", 0, 16, &md->device, err, origin) ||
	    get_str(o, "torch", 0, 64, &md->torch, err, origin) ||
	    get_str(o, "dtype", 1, 16, &md->dtype, err, origin) ||
	    get_str(o, "precision", 1, 16, &md->precision, err, origin) ||
	    get_str(o, "workload", 1, 32, &md->workload, err, origin) ||
	    get_str(o, "workload_why", 0, TEXT_MAX_LEN, &md->workload_why, err, origin) ||
	    get_str(o, "lowered_why", 0, TEXT_MAX_LEN, &md->lowered_why, err, origin))
		goto out;
	if (get_str(o, "mode", 0, 16, &md->mode, err, origin))
		goto out;
	if (!md->mode)
		md->mode = xstrdup("eval");
	else if (strcmp(md->mode, "eval") && strcmp(md->mode, "train")) {
		fail(err, origin, "names the unknown mode '%s' (eval or train)", md->mode);
		goto out;
	}
	if (get_mode_modules(o, md, err, origin))
		goto out;
	if (!one_of(md->workload, workloads_ok, sizeof(workloads_ok) / sizeof(*workloads_ok))) {
		fail(err, origin, "names the unknown workload class '%s'", md->workload);
		goto out;
	}
	if (get_tensors(o, "inputs", MROLE_INPUT, md, &md->ninputs, err, origin) ||
	    get_tensors(o, "params", MROLE_PARAMETER, md, &md->nparams, err, origin) ||
	    get_tensors(o, "outputs", MROLE_OUTPUT, md, &md->noutputs, err, origin))
		goto out;
	if (!md->ninputs || !md->noutputs) {
		fail(err, origin, "has no %s tensor", md->ninputs ? "output" : "input");
		goto out;
	}
	if (get_num(o, "flops", -1, &md->flops, err, origin) || get_num(o, "bytes", 0, &md->bytes, err, origin))
		goto out;

	json_t *sc = json_object_get(o, "scalars");
	if (sc && !json_is_array(sc)) {
		fail(err, origin, "has a 'scalars' that is not an array");
		goto out;
	}
	if (json_array_size(sc) > MODULE_MAX_SCALARS) {
		fail(err, origin, "has more than %d scalars", MODULE_MAX_SCALARS);
		goto out;
	}
	md->scalars = xcalloc(json_array_size(sc) + 1, sizeof(*md->scalars));
	for (size_t i = 0; i < json_array_size(sc); i++) {
		json_t *e = json_array_get(sc, i);
		struct module_scalar *s = &md->scalars[md->nscalars];
		char *from = NULL;
		if (!json_is_object(e)) {
			fail(err, origin, "has a scalar that is not an object");
			goto out;
		}
		if (get_str(e, "name", 1, NAME_MAX_LEN, &s->name, err, origin))
			goto out;
		md->nscalars++;
		json_t *v = json_object_get(e, "value");
		if (!json_is_number(v) || !isfinite(json_number_value(v))) {
			fail(err, origin, "gives scalar '%s' a value that is not a finite number", s->name);
			goto out;
		}
		s->value = json_number_value(v);
		if (get_str(e, "from", 0, 32, &from, err, origin))
			goto out;
		s->from_init = from && !strcmp(from, "get_init_inputs");
		free(from);
	}

	json_t *low = json_object_get(o, "lowered");
	if (low && !json_is_null(low)) {
		if (!json_is_object(low)) {
			fail(err, origin, "has a 'lowered' that is not a task object");
			goto out;
		}
		char *txt = json_dumps(low, JSON_COMPACT);
		char *terr = NULL;
		md->lowered = task_parse_json(txt, strlen(txt), origin, &terr);
		free(txt);
		if (!md->lowered) {
			fail(err, origin, "lowers it to a built-in task that does not check: %s", terr);
			free(terr);
			goto out;
		}
	}
	rc = 0;
out:
	json_decref(o);
	if (rc) {
		module_desc_free(md);
		return NULL;
	}
	return md;
}

void module_desc_free(struct module_desc *md)
{
	if (!md)
		return;
	for (int i = 0; i < md->ntensors; i++)
		free(md->tensors[i].name);
	for (int i = 0; i < md->nscalars; i++)
		free(md->scalars[i].name);
	free(md->tensors);
	free(md->scalars);
	free(md->file);
	free(md->name);
	free(md->device);
	free(md->torch);
	free(md->dtype);
	free(md->precision);
	free(md->workload);
	free(md->workload_why);
	free(md->lowered_why);
	free(md->mode);
	free(md->mode_modules);
	if (md->lowered)
		task_free(md->lowered);
	free(md);
}

void module_desc_format(const struct module_desc *md, struct strbuf *out)
{
	strbuf_addf(out, "module    %s\n", md->file);
	strbuf_addf(out, "dtype     %s (precision %s)\n", md->dtype, md->precision);
	strbuf_addf(out, "workload  %s%s%s%s\n", md->workload, md->workload_why ? " (" : "",
		    md->workload_why ? md->workload_why : "", md->workload_why ? ")" : "");
	strbuf_addstr(out, "mode      ");
	module_mode_note(md, out);
	strbuf_addch(out, '\n');
	strbuf_addf(out, "arguments (as the kernel receives them: inputs, parameters and buffers, "
		    "outputs)\n");
	for (int i = 0; i < md->ntensors; i++) {
		const struct module_tensor *t = &md->tensors[i];
		strbuf_addf(out, "  %-2d %-9s %-20s %-5s [", i, module_role_name(t->role), t->name, t->dtype);
		for (int d = 0; d < t->ndim; d++)
			strbuf_addf(out, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
		strbuf_addf(out, "]\n");
	}
	if (md->nscalars) {
		strbuf_addf(out, "scalars\n");
		for (int i = 0; i < md->nscalars; i++)
			strbuf_addf(out, "  %-20s %.17g (from %s)\n", md->scalars[i].name, md->scalars[i].value,
				    md->scalars[i].from_init ? "get_init_inputs" : "get_inputs");
	}
	if (md->flops >= 0)
		strbuf_addf(out, "flops     %.0f\n", md->flops);
	else
		strbuf_addf(out, "flops     unknown (no torch.utils.flop_counter)\n");
	strbuf_addf(out, "bytes     %.0f (inputs, parameters, buffers and outputs, each once)\n", md->bytes);
	if (md->lowered)
		strbuf_addf(out, "lowered   to the built-in %s (%s)\n", op_name(md->lowered->op),
			    md->lowered_why ? md->lowered_why : "");
	else
		strbuf_addf(out, "lowered   no: %s\n", md->lowered_why ? md->lowered_why : "no reason given");
}

void module_desc_to_json(const struct module_desc *md, struct strbuf *out)
{
	json_t *o = json_object(), *ts = json_array(), *ss = json_array();
	json_object_set_new(o, "module", json_string(md->file));
	json_object_set_new(o, "name", json_string(md->name));
	json_object_set_new(o, "dtype", json_string(md->dtype));
	json_object_set_new(o, "precision", json_string(md->precision));
	json_object_set_new(o, "workload", json_string(md->workload));
	json_object_set_new(o, "mode", json_string(md->mode ? md->mode : "eval"));
	json_object_set_new(o, "mode_modules", md->mode_modules ? json_string(md->mode_modules) : json_null());
	for (int i = 0; i < md->ntensors; i++) {
		const struct module_tensor *t = &md->tensors[i];
		json_t *sh = json_array();
		for (int d = 0; d < t->ndim; d++)
			json_array_append_new(sh, json_integer(t->shape[d]));
		json_array_append_new(ts, json_pack("{s:s,s:s,s:s,s:o}", "name", t->name, "role",
						    module_role_name(t->role), "dtype", t->dtype, "shape", sh));
	}
	json_object_set_new(o, "tensors", ts);
	for (int i = 0; i < md->nscalars; i++)
		json_array_append_new(ss, json_pack("{s:s,s:f,s:s}", "name", md->scalars[i].name, "value",
						    md->scalars[i].value, "from",
						    md->scalars[i].from_init ? "get_init_inputs" : "get_inputs"));
	json_object_set_new(o, "scalars", ss);
	json_object_set_new(o, "flops", md->flops >= 0 ? json_real(md->flops) : json_null());
	json_object_set_new(o, "bytes", json_real(md->bytes));
	json_t *low = json_null();
	if (md->lowered) {
		struct strbuf sb = STRBUF_INIT;
		task_to_json(md->lowered, &sb);
		json_t *l = json_loads(sb.buf, 0, NULL);
		strbuf_release(&sb);
		if (l) {
			json_decref(low);
			low = l;
		}
	}
	json_object_set_new(o, "lowered", low);
	json_object_set_new(o, "lowered_why", md->lowered_why ? json_string(md->lowered_why) : json_null());
	char *txt = json_dumps(o, JSON_INDENT(2));
	strbuf_addf(out, "%s\n", txt);
	free(txt);
	json_decref(o);
}
