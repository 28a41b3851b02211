/*
 * The reference process of module tasks (reference.h): starts tools/reference.py with the
 * user's python, speaks its JSON-lines protocol (docs/tasks.md) and turns its answers and its
 * failures (no python, no torch, a module that does not import or hangs) into result codes with
 * messages that say what to do.
 */
#include "eval/reference.h"
#include "common/embedded.h"
#include "common/proc.h"
#include "util/err.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define ERR_TAIL 2000

const char *reference_python(void)
{
	const char *p = getenv("CUTEGEN_PYTHON");
	return p && *p ? p : "python3";
}

static double reference_deadline(void)
{
	const char *s = getenv("CUTEGEN_REFERENCE_TIMEOUT");
	char *end;
	double d = s ? strtod(s, &end) : 0;
	return s && end != s && d > 0 ? d : REFERENCE_DEADLINE_S;
}

/* The last ERR_TAIL bytes of the child's stderr, on one line. */
static char *tail_line(const struct strbuf *sb)
{
	size_t off = sb->len > ERR_TAIL ? sb->len - ERR_TAIL : 0;
	char *s = xstrndup(sb->buf ? sb->buf + off : "", sb->len - off);
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = 0;
	for (char *p = s; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	return s;
}

static int kind_code(const char *kind)
{
	if (!strcmp(kind, "no_torch"))
		return REFERENCE_E_NO_TORCH;
	if (!strcmp(kind, "gpu"))
		return CG_ENV;
	if (!strcmp(kind, "request"))
		return CG_INTERNAL;
	return CG_INPUT;
}

int reference_describe(const char *file, struct module_desc **out, char **err)
{
	const struct embedded_file *f = embedded_find("tools/reference.py");
	const char *py = reference_python();
	char real[PATH_MAX];
	struct strbuf req = STRBUF_INIT, so = STRBUF_INIT, se = STRBUF_INIT;
	json_t *hello = NULL, *rep = NULL;
	int rc = CG_EXTERNAL;
	*out = NULL;
	if (!f)
		BUG("tools/reference.py is not embedded");
	if (!realpath(file, real)) {
		*err = xasprintf("cannot read module file '%s'; a module task is a .py file in "
				 "KernelBench's format", file);
		return CG_INPUT;
	}
	json_t *r = json_pack("{s:s,s:s,s:i}", "op", "describe", "file", real, "seed", REFERENCE_SEED);
	char *line = json_dumps(r, JSON_COMPACT);
	json_decref(r);
	strbuf_addf(&req, "%s\n{\"op\":\"quit\"}\n", line);
	free(line);

	const char *argv[] = { py, "-c", f->data, NULL };
	struct child_process cp = CHILD_PROCESS_INIT;
	cp.argv = argv;
	cp.in_data = req.buf;
	cp.in_len = req.len;
	so.cap = MODULE_DESC_MAX + (1 << 16);
	se.cap = 1 << 16;
	cp.out = &so;
	cp.err = &se;
	cp.deadline_s = reference_deadline();
	if (run_command(&cp)) {
		*err = xasprintf("cannot run the reference process with '%s' (%s); module tasks need "
				 "Python 3 with PyTorch: install them, or name a python with "
				 "'cutegen --python PATH' or $CUTEGEN_PYTHON", py, cp.errmsg);
		rc = REFERENCE_E_NO_PYTHON;
		goto out;
	}
	if (cp.timed_out) {
		*err = xasprintf("module '%s': the reference process did not answer within %.0f s and "
				 "was killed (importing the file, building Model or its inputs, or its "
				 "forward hangs); fix the module, or give a slow one more time with "
				 "$CUTEGEN_REFERENCE_TIMEOUT=SECONDS", file, cp.deadline_s);
		rc = CG_TIMEOUT;
		goto out;
	}
	if (cp.out_truncated) {
		*err = xasprintf("module '%s': the reference process's reply is larger than %d bytes",
				 file, MODULE_DESC_MAX);
		rc = CG_EXTERNAL;
		goto out;
	}
	/* line 1: hello; line 2: the reply to describe */
	char *nl = so.buf ? strchr(so.buf, '\n') : NULL;
	if (nl)
		hello = json_loadb(so.buf, (size_t)(nl - so.buf), 0, NULL);
	if (!json_is_object(hello) || !json_is_string(json_object_get(hello, "hello"))) {
		char *t = tail_line(&se);
		*err = xasprintf("'%s' exited with status %d before speaking the reference protocol "
				 "(%s); module tasks need Python 3 (3.8 or later) with PyTorch: name one "
				 "with 'cutegen --python PATH' or $CUTEGEN_PYTHON", py, cp.status,
				 *t ? t : "it printed nothing");
		free(t);
		rc = REFERENCE_E_NO_PYTHON;
		goto out;
	}
	char *end = strchr(nl + 1, '\n');
	rep = end ? json_loadb(nl + 1, (size_t)(end - nl - 1), 0, NULL) : NULL;
	if (!json_is_object(rep)) {
		char *t = tail_line(&se);
		*err = xasprintf("module '%s': the reference process exited with status %d without "
				 "describing it (%s)", file, cp.status, *t ? t : "no message");
		free(t);
		rc = cp.signaled ? CG_INPUT : CG_EXTERNAL;
		goto out;
	}
	if (!json_is_true(json_object_get(rep, "ok"))) {
		const char *kind = json_string_value(json_object_get(rep, "kind"));
		const char *msg = json_string_value(json_object_get(rep, "message"));
		kind = kind ? kind : "unknown";
		*err = xasprintf("module '%s': %s [%s]", file, msg ? msg : "the reference process failed",
				 kind);
		rc = kind_code(kind);
		goto out;
	}
	json_t *d = json_object_get(rep, "describe");
	char *txt = d ? json_dumps(d, JSON_COMPACT) : NULL;
	*out = txt ? module_desc_parse(txt, strlen(txt), file, err) : NULL;
	if (!txt)
		*err = xasprintf("module '%s': the reference process's reply has no description", file);
	free(txt);
	rc = *out ? CG_OK : CG_EXTERNAL;
out:
	json_decref(hello);
	json_decref(rep);
	strbuf_release(&req);
	strbuf_release(&so);
	strbuf_release(&se);
	return rc;
}

int reference_probe(char **executable, char **torch, char **torch_error, char **err)
{
	const struct embedded_file *f = embedded_find("tools/reference.py");
	const char *py = reference_python();
	const char *argv[] = { py, "-c", f ? f->data : "", NULL };
	static const char quit[] = "{\"op\":\"quit\"}\n";
	struct strbuf so = STRBUF_INIT, se = STRBUF_INIT;
	struct child_process cp = CHILD_PROCESS_INIT;
	json_t *hello = NULL;
	int rc = CG_ENV;
	*executable = *torch = *torch_error = NULL;
	cp.argv = argv;
	cp.in_data = quit;
	cp.in_len = sizeof(quit) - 1;
	so.cap = se.cap = 1 << 16;
	cp.out = &so;
	cp.err = &se;
	cp.deadline_s = 120;
	if (run_command(&cp)) {
		*err = xasprintf("cannot run '%s' (%s)", py, cp.errmsg);
		goto out;
	}
	char *nl = so.buf ? strchr(so.buf, '\n') : NULL;
	hello = nl ? json_loadb(so.buf, (size_t)(nl - so.buf), 0, NULL) : NULL;
	if (!json_is_string(json_object_get(hello, "hello"))) {
		char *t = tail_line(&se);
		*err = xasprintf("'%s' %s (%s)", py, cp.timed_out ? "did not answer within 120 s" :
				 "does not speak the reference protocol", *t ? t : "no message");
		free(t);
		goto out;
	}
	const char *e = json_string_value(json_object_get(hello, "executable"));
	const char *tv = json_string_value(json_object_get(hello, "torch"));
	const char *te = json_string_value(json_object_get(hello, "torch_error"));
	*executable = xstrndup(e ? e : py, 1024);
	*torch = tv ? xstrndup(tv, 64) : NULL;
	*torch_error = !tv ? xstrndup(te ? te : "torch does not import", 512) : NULL;
	rc = CG_OK;
out:
	json_decref(hello);
	strbuf_release(&so);
	strbuf_release(&se);
	return rc;
}

int task_resolve(const char *spec, struct task **t, struct module_desc **md, char **err)
{
	*t = NULL;
	*md = NULL;
	if (!task_spec_is_module(spec)) {
		*t = task_load(spec, err);
		return *t ? CG_OK : CG_INPUT;
	}
	int rc = reference_describe(spec, md, err);
	if (rc)
		return rc;
	if ((*md)->lowered)
		*t = task_dup((*md)->lowered);
	return CG_OK;
}

int task_resolve_judgeable(const char *spec, struct task **t, struct module_desc **md, char **err)
{
	struct module_desc *m = NULL;
	int rc = task_resolve(spec, t, &m, err);
	if (!rc && !*t) {
		*err = xasprintf("module '%s' is not one of cutegen's built-in ops (%s); judging it needs "
				 "the reference-process evaluation (its tensors handed to the runner on the "
				 "GPU, measured tolerances), which is not in this build yet; 'cutegen task "
				 "show %s' shows its tensors", spec, m->lowered_why ? m->lowered_why : "not lowered",
				 spec);
		rc = CG_ENV;
	}
	if (md)
		*md = m;
	else
		module_desc_free(m);
	return rc;
}
