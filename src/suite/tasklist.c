/*
 * The tasks of a suite and its run flags: a built-in suite name or a task list file read into
 * the suite store, and the flags passed to every `cutegen run` (kept in the store, so that a
 * resume reuses them). Not for: running the tasks (pool.c, slurm_array.c).
 */
#include "suite/engine.h"
#include "common/task.h"
#include "common/task_module.h"
#include "suite/suite_store.h"
#include "util/err.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIST_MAX (1u << 20)      /* a task list file */
#define TASKS_MAX 10000

void suite_opts_pass_add(struct suite_opts *o, const char *a)
{
	o->pass = xrealloc(o->pass, sizeof(*o->pass) * (size_t)(o->npass + 1));
	o->pass[o->npass++] = xstrdup(a);
}

void suite_opts_release(struct suite_opts *o)
{
	for (int i = 0; i < o->npass; i++)
		free(o->pass[i]);
	free(o->pass);
	o->pass = NULL;
	o->npass = 0;
}

struct task_list {
	char **specs;
	int n;
};

static void task_list_release(struct task_list *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->specs[i]);
	free(l->specs);
	l->specs = NULL;
	l->n = 0;
}

static void task_list_add(struct task_list *l, const char *spec)
{
	l->specs = xrealloc(l->specs, sizeof(*l->specs) * (size_t)(l->n + 1));
	l->specs[l->n++] = xstrdup(spec);
}

/* A built-in suite name, or a file with one task (built-in name or task file) a line; task
 * files named relative to the list are resolved against its directory, to absolute paths. */
static int load_task_list(const char *what, struct task_list *l, char **err)
{
	const char *const *names;
	int n = suite_tasks(what, &names);
	if (n >= 0) {
		for (int i = 0; i < n; i++)
			task_list_add(l, names[i]);
		return 0;
	}
	if (task_spec_is_dir(what)) { /* a module suite: each .py file is a task */
		char **paths = NULL;
		n = module_dir_list(what, &paths, err);
		if (n < 0)
			return -1;
		for (int i = 0; i < n; i++) {
			if (i < TASKS_MAX)
				task_list_add(l, paths[i]);
			free(paths[i]);
		}
		free(paths);
		if (!n)
			*err = xasprintf("directory '%s' holds no module file (*.py in KernelBench's format)", what);
		else if (n > TASKS_MAX)
			*err = xasprintf("directory '%s' has more than %d module files", what, TASKS_MAX);
		return n && n <= TASKS_MAX ? 0 : -1;
	}
	struct strbuf sb = STRBUF_INIT;
	int r = strbuf_read_file(&sb, what, LIST_MAX);
	if (r) {
		*err = r == CG_INPUT_TOOBIG ? xasprintf("task list '%s' is larger than 1 MiB", what)
			       : xasprintf("'%s' is neither a built-in suite (kb1, hopper, llm), a "
					   "directory of module files nor a readable task list file (%s)",
					   what, strbuf_read_strerror(r, what));
		strbuf_release(&sb);
		return -1;
	}
	char *dir = xstrdup(what);
	char *slash = strrchr(dir, '/');
	if (slash)
		slash[1] = 0;
	else
		strcpy(dir, "");
	int rc = 0;
	char *save = NULL;
	for (char *line = strtok_r(sb.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		while (*line == ' ' || *line == '\t')
			line++;
		size_t len = strlen(line);
		while (len && (line[len - 1] == ' ' || line[len - 1] == '\t' || line[len - 1] == '\r'))
			line[--len] = 0;
		if (!len || line[0] == '#')
			continue;
		if (l->n >= TASKS_MAX) {
			*err = xasprintf("task list '%s' has more than %d tasks", what, TASKS_MAX);
			rc = -1;
			break;
		}
		if (task_builtin(line)) {
			task_list_add(l, line);
			continue;
		}
		char *path = line[0] == '/' ? xstrdup(line) : xasprintf("%s%s", dir, line);
		char real[PATH_MAX];
		if (!realpath(path, real)) {
			*err = line[0] == '/' || !*dir
				       ? xasprintf("task list '%s': '%s' is neither a built-in task nor "
						   "a task file", what, line)
				       : xasprintf("task list '%s': '%s' is neither a built-in task nor "
						   "a task file (a relative path is read from the list's "
						   "directory: '%s' does not exist)", what, line, path);
			free(path);
			rc = -1;
			break;
		}
		task_list_add(l, real);
		free(path);
	}
	free(dir);
	strbuf_release(&sb);
	if (!rc && !l->n) {
		*err = xasprintf("task list '%s' names no task", what);
		rc = -1;
	}
	return rc;
}

int suite_tasklist_check(const char *what, char **err)
{
	struct task_list l = { 0 };
	int rc = load_task_list(what, &l, err) ? CG_INPUT : CG_OK;
	task_list_release(&l);
	return rc;
}

int suite_prepare(struct suite_store *ss, const char *what, const char *suite_dir,
		  struct suite_opts *o, char **err)
{
	struct task_list l = { 0 };
	int rc = CG_INPUT;
	if (load_task_list(what, &l, err))
		goto out;
	for (int i = 0; i < l.n; i++) {
		char *name = suite_run_dir_name(i, l.specs[i]);
		char *dir = xasprintf("%s/runs/%s", suite_dir, name);
		int r = suite_add_task(ss, i, l.specs[i], dir, err);
		free(name);
		free(dir);
		if (r)
			goto out;
	}
	/* the run flags: given ones replace the stored ones; none given reuses them (resume) */
	if (o->npass) {
		json_t *a = json_array();
		for (int i = 0; i < o->npass; i++)
			json_array_append_new(a, json_string(o->pass[i]));
		char *txt = json_dumps(a, JSON_COMPACT);
		json_decref(a);
		int r = suite_meta_set(ss, "run_args", txt, err);
		free(txt);
		if (r)
			goto out;
	} else {
		char *txt = suite_meta_get(ss, "run_args");
		json_t *a = txt ? json_loads(txt, 0, NULL) : NULL;
		size_t i;
		json_t *v;
		json_array_foreach(a, i, v)
			if (json_is_string(v) && o->npass < SUITE_RUN_ARGS_MAX)
				suite_opts_pass_add(o, json_string_value(v));
		if (a)
			json_decref(a);
		free(txt);
	}
	if (suite_meta_set(ss, "source", what, err))
		goto out;
	rc = CG_OK;
out:
	task_list_release(&l);
	return rc;
}
