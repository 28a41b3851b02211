/*
 * Stage files (see stages.h): a header of "key: value" lines, a "---" line, the guidance, and
 * "%%" lines between stages. Strict about the header (unknown keys, bad numbers, stages out of
 * order are errors naming the line), free about the guidance (any text).
 */
#include "agent/stages.h"
#include "common/embedded.h"
#include "util/fsutil.h"
#include "util/xalloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void stage_machine_release(struct stage_machine *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->stages[i].name);
		free(m->stages[i].watch);
		free(m->stages[i].docs);
		free(m->stages[i].guidance);
	}
	free(m->stages);
	free(m->workload);
	free(m->origin);
	struct stage_machine z = STAGE_MACHINE_INIT;
	*m = z;
}

static char *trim_dup(const char *p, size_t n)
{
	while (n && (*p == ' ' || *p == '\t'))
		p++, n--;
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
		n--;
	return xstrndup(p, n);
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

static int parse_double(const char *s, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= lo && v <= hi))
		return -1;
	*out = v;
	return 0;
}

static int line_is(const char *p, size_t n, const char *what)
{
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
		n--;
	return n == strlen(what) && !memcmp(p, what, n);
}

int stages_parse(const char *text, size_t len, const char *origin, struct stage_machine *out,
		 char **err)
{
	enum { BEFORE, HEADER, BODY } state = BEFORE;
	struct stage *st = NULL;
	struct strbuf body = STRBUF_INIT;
	int lineno = 0, have_keys = 0;
	size_t pos = 0;
	out->origin = xstrdup(origin);
	if (len > STAGES_MAX_FILE) {
		*err = xasprintf("stage file '%s' is larger than %zu bytes", origin, STAGES_MAX_FILE);
		goto fail;
	}
	while (pos <= len) {
		const char *p = text + pos;
		const char *nl = memchr(p, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - p) : len - pos;
		int last = !nl;
		pos += n + 1;
		lineno++;
		if (last && n == 0)
			break;
		if (state == BODY && line_is(p, n, "%%")) {
			strbuf_trim(&body);
			st->guidance = strbuf_detach(&body, NULL);
			state = HEADER;
			st = NULL;
			have_keys = 0;
			continue;
		}
		if (state == BODY) {
			strbuf_add(&body, p, n);
			strbuf_addch(&body, '\n');
			continue;
		}
		/* header lines (and, before the first stage, comments) */
		size_t k = 0;
		while (k < n && (p[k] == ' ' || p[k] == '\t'))
			k++;
		if (k == n || p[k] == '#')
			continue;
		if (line_is(p, n, "---")) {
			if (!st) {
				*err = xasprintf("%s:%d: '---' before any 'stage:' line", origin, lineno);
				goto fail;
			}
			state = BODY;
			continue;
		}
		const char *colon = memchr(p, ':', n);
		if (!colon) {
			*err = xasprintf("%s:%d: expected 'key: value' (or '---' before the guidance)",
					 origin, lineno);
			goto fail;
		}
		char *key = trim_dup(p, (size_t)(colon - p));
		char *val = trim_dup(colon + 1, n - (size_t)(colon - p) - 1);
		int bad = 0;
		if (!strcmp(key, "stage")) {
			int idx;
			if (st && have_keys) {
				*err = xasprintf("%s:%d: stage %d has no '---' line before the next stage",
						 origin, lineno, st->index);
				bad = 2;
			} else if (parse_int(val, 0, STAGES_MAX - 1, &idx) || idx != (int)out->n) {
				*err = xasprintf("%s:%d: stages must be numbered 0, 1, 2... in order: "
						 "expected 'stage: %zu' (got \"%s\")", origin, lineno, out->n, val);
				bad = 2;
			} else {
				ALLOC_GROW(out->stages, out->n + 1, out->alloc);
				st = &out->stages[out->n++];
				memset(st, 0, sizeof(*st));
				st->index = idx;
				st->max_iters = 3;
				st->min_gain = 0.03;
				st->patience = 2;
				state = HEADER;
			}
		} else if (!st) {
			*err = xasprintf("%s:%d: '%s' before the first 'stage:' line", origin, lineno, key);
			bad = 2;
		} else if (!strcmp(key, "name")) {
			free(st->name);
			st->name = xstrdup(val);
		} else if (!strcmp(key, "max_iters")) {
			bad = parse_int(val, 1, 1000, &st->max_iters) ? 1 : 0;
		} else if (!strcmp(key, "min_gain")) {
			bad = parse_double(val, 0, 10, &st->min_gain) ? 1 : 0;
		} else if (!strcmp(key, "patience")) {
			bad = parse_int(val, 1, 1000, &st->patience) ? 1 : 0;
		} else if (!strcmp(key, "watch")) {
			free(st->watch);
			st->watch = xstrdup(val);
		} else if (!strcmp(key, "docs")) {
			free(st->docs);
			st->docs = xstrdup(val);
		} else if (!strcmp(key, "needs")) {
			if (!strcmp(val, "tensor_cores"))
				st->tensor_cores = 1;
			else if (strcmp(val, "none"))
				bad = 1;
		} else {
			*err = xasprintf("%s:%d: unknown key '%s' (known: stage, name, max_iters, min_gain, "
					 "patience, watch, docs, needs)", origin, lineno, key);
			bad = 2;
		}
		if (bad == 1)
			*err = xasprintf("%s:%d: bad value for '%s': \"%s\"", origin, lineno, key, val);
		free(key);
		free(val);
		if (bad)
			goto fail;
		have_keys = 1;
		if (out->n > STAGES_MAX) {
			*err = xasprintf("%s: more than %d stages", origin, STAGES_MAX);
			goto fail;
		}
	}
	if (state == HEADER && st) {
		*err = xasprintf("%s: stage %d has no '---' line and no guidance", origin, st->index);
		goto fail;
	}
	if (state == BODY) {
		strbuf_trim(&body);
		st->guidance = strbuf_detach(&body, NULL);
	}
	if (!out->n) {
		*err = xasprintf("%s: no stages (a stage starts with 'stage: 0')", origin);
		goto fail;
	}
	for (size_t i = 0; i < out->n; i++) {
		struct stage *s = &out->stages[i];
		if (!s->name)
			s->name = xasprintf("stage %d", s->index);
		if (!s->watch)
			s->watch = xstrdup("ms");
		if (!s->guidance)
			s->guidance = xstrdup("");
	}
	strbuf_release(&body);
	return 0;
fail:
	strbuf_release(&body);
	stage_machine_release(out);
	return -1;
}

int prompt_file_load(const char *dir, const char *name, struct strbuf *out, char **err)
{
	if (dir) {
		char *path = xasprintf("%s/%s", dir, name);
		if (file_exists(path)) {
			int r = strbuf_read_file(out, path, STAGES_MAX_FILE);
			if (r)
				*err = xasprintf(r == CG_INPUT_TOOBIG ? "prompt file '%s' is too large"
							 : "cannot read prompt file '%s'", path);
			free(path);
			return r ? -1 : 0;
		}
		free(path);
	}
	char *ename = xasprintf("prompts/%s", name);
	const struct embedded_file *f = embedded_find(ename);
	free(ename);
	if (!f) {
		*err = xasprintf("no prompt file '%s' (neither in %s nor built in)", name,
				 dir ? dir : "--prompts");
		return -1;
	}
	strbuf_add(out, f->data, f->len);
	return 0;
}

int stages_load(const char *workload, const char *dir, struct stage_machine *out, char **err)
{
	struct strbuf sb = STRBUF_INIT;
	char *name = xasprintf("stages/%s.txt", workload);
	int rc = prompt_file_load(dir, name, &sb, err);
	if (!rc) {
		char *origin = dir ? xasprintf("%s (%s or built in)", name, dir) : xasprintf("prompts/%s", name);
		rc = stages_parse(sb.buf, sb.len, origin, out, err);
		free(origin);
		if (!rc)
			out->workload = xstrdup(workload);
	}
	free(name);
	strbuf_release(&sb);
	return rc;
}
