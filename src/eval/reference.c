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
#include "util/fsutil.h"
#include "util/osrand.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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
	cp.err_tail = 1;
	cp.deadline_s = reference_deadline();
	if (run_command(&cp)) {
		*err = xasprintf("cannot run the reference process with '%s' (%s); module tasks need "
				 "Python 3 with PyTorch: install them, or name a python with "
				 "'cutegen --python PATH' or $CUTEGEN_PYTHON", py, cp.errmsg);
		rc = REFERENCE_E_NO_PYTHON;
		goto out;
	}
	/* a reply that arrived whole is used even when the process then had to be killed (a
	 * thread or a helper of the module kept it alive): only one that did not is a timeout */
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
		if (cp.timed_out)
			goto timed_out;
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
		if (cp.timed_out)
			goto timed_out;
		/* it said hello, and it answers describe whatever the module does, unless the
		 * module (or a library it calls) ends or breaks the process: the module's fault */
		char *t = tail_line(&se);
		if (cp.signaled && cp.status == 128 + SIGKILL)
			*err = xasprintf("module '%s': the reference process was killed (SIGKILL) before "
					 "describing it; the kernel's out-of-memory killer does this when "
					 "memory runs out: describing runs get_inputs() and forward at full "
					 "size (on the GPU where PyTorch sees one, else on the CPU), so run it "
					 "where more memory is free (%s)", file, *t ? t : "no message");
		else if (cp.signaled)
			*err = xasprintf("module '%s': the reference process died from %s (signal %d) "
					 "while describing it (importing it, building Model and its inputs, "
					 "running forward): a crash in the module's own code or in a library "
					 "it calls (a C extension, ctypes); run the module alone with "
					 "'python3 -X faulthandler' (import it, call "
					 "Model(*get_init_inputs())(*get_inputs())) to see where (%s)", file,
					 signal_name(cp.status - 128), cp.status - 128, *t ? t : "no message");
		else if (cp.status == REFERENCE_EXIT_CHANNEL)
			*err = xasprintf("module '%s': the module closed the reference process's reply "
					 "channel, a file descriptor it did not open (os.closerange(), "
					 "os.close() of descriptors it does not own), so the description "
					 "could not be sent; a module must close only the files it opened "
					 "(%s)", file, *t ? t : "no message");
		else
			*err = xasprintf("module '%s': the reference process exited with status %d while "
					 "describing it, before replying: the module, or a library it calls, "
					 "ended the process (os._exit(), or exit() in native code), which a "
					 "module must not do at import, in Model() or in forward; run the "
					 "module alone with python3 to see where (%s)", file, cp.status,
					 *t ? t : "no message");
		free(t);
		rc = CG_INPUT;
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
	goto out;
timed_out:
	*err = xasprintf("module '%s': the reference process did not answer within %.0f s and "
			 "was killed (importing the file, building Model or its inputs, or its "
			 "forward hangs); fix the module, or give a slow one more time with "
			 "$CUTEGEN_REFERENCE_TIMEOUT=SECONDS", file, cp.deadline_s);
	rc = CG_TIMEOUT;
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
	cp.err_tail = 1;
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

/* Whether s is UTF-8 without control characters: what the reference protocol's JSON can carry
 * of a file name. */
static int printable_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		int n = *p < 0x80 ? 0 : (*p & 0xe0) == 0xc0 && *p >= 0xc2 ? 1 : (*p & 0xf0) == 0xe0 ? 2
			: (*p & 0xf8) == 0xf0 && *p <= 0xf4 ? 3 : -1;
		if (n < 0 || (!n && (*p < 0x20 || *p == 0x7f)))
			return 0;
		for (int i = 1; i <= n; i++)
			if ((p[i] & 0xc0) != 0x80)
				return 0;
		p += n + 1;
	}
	return 1;
}

int task_resolve(const char *spec, struct task **t, struct module_desc **md, char **err)
{
	*t = NULL;
	*md = NULL;
	if (!task_spec_is_module(spec)) {
		*t = task_load(spec, err);
		return *t ? CG_OK : CG_INPUT;
	}
	if (!printable_utf8(spec)) {
		char *shown = str_one_line(xstrdup(spec));
		*err = xasprintf("module file '%s': its path has a control character or bytes that are "
				 "not UTF-8, which the reference process's messages cannot carry; rename "
				 "it (letters, digits, '_', '-' and '.' are always safe)", shown);
		free(shown);
		return CG_INPUT;
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
	if (!rc && !*t && !md) {
		*err = xasprintf("module '%s' is not one of cutegen's built-in ops (%s), and this command "
				 "judges built-in tasks only; 'cutegen eval KERNEL --task %s' judges it "
				 "through the reference process", spec,
				 m->lowered_why ? m->lowered_why : "not lowered", spec);
		rc = CG_INPUT;
	}
	if (md)
		*md = m;
	else
		module_desc_free(m);
	return rc;
}

/* ---- prepare / release ------------------------------------------------------------------ */

struct reference_session {
	struct child_process cp;
	struct child_session *cs;
	struct strbuf err;           /* its stderr, capped */
	struct strbuf outmark;       /* stdout is a pipe (read line by line, never filled) */
	const char *argv[4];
};

int reference_session_pid(const struct reference_session *rs)
{
	return rs && rs->cs ? (int)child_session_pid(rs->cs) : 0;
}

int reference_session_alive(struct reference_session *rs)
{
	return rs && rs->cs && child_session_alive(rs->cs);
}

/* The process groups of the sessions not yet released, for reference_kill_all (a signal
 * handler reads them; a slot is 0 when free). */
#define LIVE_MAX 8
static volatile sig_atomic_t live_pgid[LIVE_MAX];

static void live_add(pid_t pg)
{
	for (int i = 0; i < LIVE_MAX; i++)
		if (!live_pgid[i]) {
			live_pgid[i] = (sig_atomic_t)pg;
			return;
		}
}

static void live_remove(pid_t pg)
{
	for (int i = 0; i < LIVE_MAX; i++)
		if (live_pgid[i] == (sig_atomic_t)pg)
			live_pgid[i] = 0;
}

void reference_kill_all(void)
{
	for (int i = 0; i < LIVE_MAX; i++) {
		pid_t pg = (pid_t)live_pgid[i];
		if (pg > 0)
			kill(-pg, SIGKILL);
	}
}

int reference_keep_matches(const struct reference_keep *k, const struct module_desc *md,
			   const struct reference_prepare_opts *po)
{
	const char *prec = po->precision ? po->precision : "strict";
	return k && k->rs && k->file && md && md->file && !strcmp(k->file, md->file) &&
	       k->device == po->device && !k->quick == !po->quick && !k->baselines == !po->baselines &&
	       k->precision && !strcmp(k->precision, prec);
}

void reference_keep_set(struct reference_keep *k, struct reference_session *rs, json_t *prep,
			const struct module_desc *md, const struct reference_prepare_opts *po)
{
	if (k->rs)
		BUG("reference_keep_set over a kept session");
	k->rs = rs;
	k->prep = prep;
	free(k->file);
	free(k->precision);
	k->file = xstrdup(md->file);
	k->precision = xstrdup(po->precision ? po->precision : "strict");
	k->device = po->device;
	k->quick = po->quick;
	k->baselines = po->baselines;
}

void reference_keep_drop(struct reference_keep *k)
{
	if (!k)
		return;
	reference_release(k->rs);
	k->rs = NULL;
	json_decref(k->prep);
	k->prep = NULL;
}

void reference_keep_release(struct reference_keep *k)
{
	if (!k)
		return;
	reference_keep_drop(k);
	free(k->file);
	free(k->precision);
	k->file = k->precision = NULL;
}

static int prepare_kind_code(const char *kind)
{
	if (!strcmp(kind, "memory") || !strcmp(kind, "ipc"))
		return CG_ENV;
	return kind_code(kind);
}

/* A case seed: drawn from the kernel's generator for each session, in 1 .. 2^31 - 1 (the run
 * file's range), so no two sessions judge on the same inputs: a kernel cannot carry outputs it
 * learned in one run (a failed check's feedback, a module small enough to tabulate) into the
 * next. */
static int case_seed(void)
{
	static uint32_t calls;
	uint64_t v;
	calls++;
	if (os_random64(&v)) /* no getrandom: the time's and the pid's bits, a new one each call */
		v = ((uint32_t)time(NULL) ^ (uint32_t)getpid() * 2654435761u) + calls * 0x9e3779b9u;
	return (int)(v % 2147483646u) + 1;
}

/* The cases asked for: seeds drawn per session (case_seed, all different) over the
 * distributions module, normal, large (twice each; once with quick). */
static json_t *prepare_cases(int quick)
{
	static const char *dists[] = { "module", "normal", "large" };
	json_t *a = json_array();
	int n = quick ? 3 : 6, seeds[6];
	for (int i = 0; i < n; i++) {
		int dup;
		do {
			seeds[i] = case_seed();
			dup = 0;
			for (int j = 0; j < i; j++)
				dup |= seeds[j] == seeds[i];
		} while (dup);
		json_array_append_new(a, json_pack("{s:i,s:s}", "seed", seeds[i], "dist", dists[i % 3]));
	}
	return a;
}

int reference_prepare(const struct module_desc *md, const struct reference_prepare_opts *po,
		      struct reference_session **rsp, json_t **prepared, char **err)
{
	const struct embedded_file *f = embedded_find("tools/reference.py");
	const char *py = reference_python();
	struct strbuf line = STRBUF_INIT;
	json_t *rep = NULL;
	int rc = CG_EXTERNAL;
	double deadline = po->deadline_s > 0 ? po->deadline_s : reference_deadline();
	*rsp = NULL;
	*prepared = NULL;
	if (!f)
		BUG("tools/reference.py is not embedded");
	struct reference_session *rs = xcalloc(1, sizeof(*rs));
	strbuf_init(&rs->err, 0);
	rs->err.cap = 1 << 16;
	rs->argv[0] = py;
	rs->argv[1] = "-c";
	rs->argv[2] = f->data;
	rs->argv[3] = NULL;
	struct child_process init = CHILD_PROCESS_INIT;
	rs->cp = init;
	rs->cp.argv = rs->argv;
	strbuf_init(&rs->outmark, 0);
	rs->cp.out = &rs->outmark;
	rs->cp.err = &rs->err;
	rs->cp.err_tail = 1;
	rs->cs = child_session_start(&rs->cp);
	if (!rs->cs) {
		*err = xasprintf("cannot run the reference process with '%s' (%s); module tasks need "
				 "Python 3 with PyTorch: install them, or name a python with "
				 "'cutegen --python PATH' or $CUTEGEN_PYTHON", py, rs->cp.errmsg);
		strbuf_release(&rs->err);
		free(rs);
		strbuf_release(&line);
		return REFERENCE_E_NO_PYTHON;
	}

	json_t *req = json_pack("{s:s,s:s,s:i,s:i,s:o,s:s,s:b,s:f}", "op", "prepare", "file", md->file,
				"seed", REFERENCE_SEED, "device", po->device, "cases", prepare_cases(po->quick),
				"precision", po->precision ? po->precision : (md->precision ? md->precision : "strict"),
				"baselines", po->baselines, "memory_fraction",
				po->memory_fraction > 0 ? po->memory_fraction : 0.55);
	char *text = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	strbuf_addstr(&line, text);
	strbuf_addch(&line, '\n');
	free(text);
	/* a child that died before reading fails the write (EPIPE): its hello or stderr says why */
	(void)child_session_write(rs->cs, line.buf, line.len);

	int lr = child_session_read_line(rs->cs, &line, 1 << 16, deadline);
	json_t *hello = lr == CHILD_LINE_OK ? json_loadb(line.buf, line.len, 0, NULL) : NULL;
	int spoke = json_is_object(hello) && json_is_string(json_object_get(hello, "hello"));
	json_decref(hello);
	if (!spoke) {
		child_session_finish(rs->cs, 2);
		rs->cs = NULL;
		char *t = tail_line(&rs->err);
		if (lr == CHILD_LINE_TIMEOUT)
			*err = xasprintf("the reference process ('%s') said nothing within %.0f s and was "
					 "killed", py, deadline);
		else
			*err = xasprintf("'%s' exited with status %d before speaking the reference protocol "
					 "(%s); module tasks need Python 3 (3.8 or later) with PyTorch: name "
					 "one with 'cutegen --python PATH' or $CUTEGEN_PYTHON", py,
					 rs->cp.status, *t ? t : "it printed nothing");
		free(t);
		rc = lr == CHILD_LINE_TIMEOUT ? CG_TIMEOUT : REFERENCE_E_NO_PYTHON;
		goto fail;
	}
	lr = child_session_read_line(rs->cs, &line, REFERENCE_PREPARE_MAX, deadline);
	if (lr == CHILD_LINE_TIMEOUT) {
		*err = xasprintf("module '%s': the reference process did not prepare its cases within "
				 "%.0f s and was killed, its whole process group (building the module, its "
				 "inputs, its forward in float64, or torch.compile hangs); fix the module, or "
				 "give a slow one more time with $CUTEGEN_REFERENCE_TIMEOUT=SECONDS",
				 md->file, deadline);
		rc = CG_TIMEOUT;
		goto fail;
	}
	if (lr == CHILD_LINE_TOOLONG) {
		*err = xasprintf("module '%s': the reference process's prepare reply is larger than %d "
				 "bytes", md->file, REFERENCE_PREPARE_MAX);
		rc = CG_EXTERNAL;
		goto fail;
	}
	rep = lr == CHILD_LINE_OK ? json_loadb(line.buf, line.len, 0, NULL) : NULL;
	if (!json_is_object(rep)) {
		child_session_finish(rs->cs, 2);
		rs->cs = NULL;
		char *t = tail_line(&rs->err);
		*err = xasprintf("module '%s': the reference process %s without preparing its cases "
				 "(%s)", md->file, lr == CHILD_LINE_OK ? "answered no JSON object" :
				 rs->cp.signaled ? "was killed by a signal" : "exited",
				 *t ? t : "no message");
		free(t);
		rc = CG_EXTERNAL;
		goto fail;
	}
	if (!json_is_true(json_object_get(rep, "ok"))) {
		const char *kind = json_string_value(json_object_get(rep, "kind"));
		const char *msg = json_string_value(json_object_get(rep, "message"));
		kind = kind ? kind : "unknown";
		*err = xasprintf("module '%s': %.2000s [%s]", md->file,
				 msg ? msg : "the reference process failed", kind);
		rc = prepare_kind_code(kind);
		goto fail;
	}
	json_t *p = json_object_get(rep, "prepare");
	if (!json_is_object(p)) {
		*err = xasprintf("module '%s': the reference process's reply has no \"prepare\" object",
				 md->file);
		rc = CG_EXTERNAL;
		goto fail;
	}
	*prepared = json_incref(p);
	*rsp = rs;
	live_add(child_session_pid(rs->cs));
	json_decref(rep);
	strbuf_release(&line);
	return CG_OK;
fail:
	json_decref(rep);
	strbuf_release(&line);
	reference_release(rs);
	return rc;
}

void reference_release(struct reference_session *rs)
{
	if (!rs)
		return;
	if (rs->cs) {
		pid_t pg = child_session_pid(rs->cs);
		static const char rel[] = "{\"op\":\"release\"}\n";
		struct strbuf line = STRBUF_INIT;
		/* its reply ({"ok": true}) is awaited briefly; then end of input, a grace, the kill */
		if (child_session_write(rs->cs, rel, sizeof(rel) - 1) == 0)
			(void)child_session_read_line(rs->cs, &line, 4096, 10);
		strbuf_release(&line);
		child_session_finish(rs->cs, 10);
		live_remove(pg);
	}
	strbuf_release(&rs->err);
	free(rs);
}

/* ---- the module-run file ------------------------------------------------------------------ */

/* The contract a module is judged by ("strict" when describe named none). */
const char *reference_precision(const struct module_desc *md)
{
	const char *p = md ? md->precision : NULL;
	return p && (!strcmp(p, "strict") || !strcmp(p, "tf32") || !strcmp(p, "fp16") ||
		     !strcmp(p, "bf16") || !strcmp(p, "none")) ? p : "strict";
}

#define MODULE_TOL_MULTIPLE 8 /* docs/evaluation.md, "Module tasks": the budget's multiple of */
#define MODULE_TOL_ULPS 4     /* the reference's own error, and its floor in output ulps */

static json_t *module_tensor_json(const struct module_tensor *mt)
{
	json_t *shape = json_array();
	for (int d = 0; d < mt->ndim; d++)
		json_array_append_new(shape, json_integer(mt->shape[d]));
	return json_pack("{s:s,s:s,s:s,s:o}", "name", mt->name, "role", module_role_name(mt->role),
			 "dtype", mt->dtype, "shape", shape);
}

/* Whether the prepare reply's tensor list is describe's, name by name: NULL, or why not. */
static char *module_tensors_differ(const struct module_desc *md, json_t *got)
{
	if (!json_is_array(got) || json_array_size(got) != (size_t)md->ntensors)
		return xasprintf("it lists %zu tensors, describe %d", json_array_size(got), md->ntensors);
	for (int i = 0; i < md->ntensors; i++) {
		json_t *want = module_tensor_json(&md->tensors[i]);
		int same = json_equal(want, json_array_get(got, (size_t)i));
		json_decref(want);
		if (!same)
			return xasprintf("tensor %d ('%s') differs", i, md->tensors[i].name);
	}
	return NULL;
}

/* RUN.json (docs/evaluation.md, "Module tasks") from the description and the prepare reply.
 * 0, or -1 with *err. */
int reference_write_run(const struct module_desc *md, json_t *prep, double lim_gbps,
			double lim_tflops, const char *path, char **err)
{
	char *why = module_tensors_differ(md, json_object_get(prep, "tensors"));
	if (why) {
		*err = xasprintf("module '%s': the reference process prepared other tensors than it "
				 "described (%s); this is a bug of the reference process", md->file, why);
		free(why);
		return -1;
	}
	json_t *tensors = json_array(), *scalars = json_array();
	for (int i = 0; i < md->ntensors; i++)
		json_array_append_new(tensors, module_tensor_json(&md->tensors[i]));
	for (int i = 0; i < md->nscalars; i++)
		json_array_append_new(scalars, json_pack("{s:s,s:f}", "name", md->scalars[i].name,
							 "value", md->scalars[i].value));
	const char *truth = json_string_value(json_object_get(prep, "truth"));
	json_t *run = json_pack("{s:s,s:s,s:o,s:o,s:s,s:s,s:{s:i,s:i},s:f,s:f,s:{s:f,s:f},s:O}",
				"name", md->name ? md->name : "module", "file", md->file,
				"tensors", tensors, "scalars", scalars,
				"precision", reference_precision(md), "truth", truth ? truth : "",
				"tolerance", "multiple", MODULE_TOL_MULTIPLE, "ulps", MODULE_TOL_ULPS,
				"flops", md->flops >= 0 ? md->flops : -1.0,
				"bytes", md->bytes >= 0 ? md->bytes : -1.0,
				"limits", "gbps", lim_gbps, "tflops", lim_tflops,
				"cases", json_object_get(prep, "cases") ? json_object_get(prep, "cases")
									: json_null());
	char *text = run ? json_dumps(run, JSON_COMPACT) : NULL;
	int rc = text && write_file_atomic(path, text, strlen(text)) == 0 ? 0 : -1;
	if (rc)
		*err = xasprintf("cannot write '%s'", path);
	free(text);
	json_decref(run);
	return rc;
}
