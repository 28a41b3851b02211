/*
 * The "cmd" backend: any command is a model. `sh -c CMD` gets the conversation as plain text
 * on stdin (just the prompt when there is one user message; otherwise "[role]" headed
 * sections) and its stdout is the reply. The command runs in its own process group under the
 * request deadline, its output capped; a nonzero exit is an error that quotes the end of its
 * stderr. The variables CUTEGEN_LLM_MODEL and CUTEGEN_LLM_MAX_TOKENS tell it what was asked.
 * Not for: retries (a command that wants them does its own).
 */
#include "llm/llm_impl.h"
#include "common/proc.h"
#include "util/xalloc.h"

#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define STDERR_CAP (64 << 10)

/* The last few lines of s, at most ~600 bytes, for an error message. */
static char *tail_lines(const struct strbuf *s)
{
	size_t end = s->len;
	while (end && (s->buf[end - 1] == '\n' || s->buf[end - 1] == ' '))
		end--;
	size_t start = end, lines = 0;
	while (start && lines < 5 && end - start < 600) {
		start--;
		if (s->buf[start] == '\n')
			lines++;
	}
	if (start && s->buf[start] == '\n')
		start++;
	char *t = xstrndup(s->buf + start, end - start);
	for (char *c = t; *c; c++)
		if (*c == '\n')
			*c = '|';
		else if ((unsigned char)*c < ' ')
			*c = ' ';
	return t;
}

char *llm_messages_json(const struct llm_config *cfg, const struct llm_message *msgs, int n)
{
	json_t *arr = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(arr, json_pack("{s:s, s:s}", "role", msgs[i].role,
						     "content", msgs[i].content));
	json_t *j = json_pack("{s:s, s:s?, s:o}", "backend", cfg->backend, "model", cfg->model,
			      "messages", arr);
	char *s = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (!s)
		die("out of memory");
	return s;
}

static int cmd_complete(struct llm *m, const struct llm_message *msgs, int n,
			struct llm_reply *out, char **err)
{
	struct strbuf in = STRBUF_INIT, o = STRBUF_INIT, e = STRBUF_INIT;
	struct child_process cp = CHILD_PROCESS_INIT;
	const char *argv[] = { "sh", "-c", m->cfg.llm_cmd, NULL };
	char *env_model = xasprintf("CUTEGEN_LLM_MODEL=%s", m->cfg.model ? m->cfg.model : "");
	char *env_max = xasprintf("CUTEGEN_LLM_MAX_TOKENS=%d", m->cfg.max_tokens);
	const char *env[] = { env_model, env_max, NULL };
	int rc = LLM_OK;

	llm_render_plain(msgs, n, &in);
	out->request_json = llm_messages_json(&m->cfg, msgs, n);
	o.cap = LLM_MAX_TEXT;
	e.cap = STDERR_CAP;
	cp.argv = argv;
	cp.env = env;
	cp.in_data = in.buf;
	cp.in_len = in.len;
	cp.out = &o;
	cp.err = &e;
	cp.deadline_s = m->cfg.request_timeout_s;
	int r = run_command(&cp);
	if (r) {
		rc = LLM_ERR_COMMAND;
		*err = xasprintf("cannot run the model command: %s", cp.errmsg);
		goto out;
	}
	if (cp.timed_out) {
		rc = LLM_ERR_TIMEOUT;
		*err = xasprintf("the model command '%.200s' did not finish within %g s; raise "
				 "--timeout", m->cfg.llm_cmd, m->cfg.request_timeout_s);
		goto out;
	}
	if (cp.status) {
		char *tail = tail_lines(&e);
		rc = LLM_ERR_COMMAND;
		if (cp.signaled)
			*err = xasprintf("the model command '%.200s' was killed by signal %d%s%s",
					 m->cfg.llm_cmd, cp.status - 128, *tail ? ": " : "", tail);
		else
			*err = xasprintf("the model command '%.200s' exited with %d%s%s",
					 m->cfg.llm_cmd, cp.status, *tail ? ": " : "", tail);
		free(tail);
		goto out;
	}
	if (cp.out_truncated && o.len >= o.cap) {
		rc = LLM_ERR_TOO_BIG;
		*err = xasprintf("the model command's output passed the cap of %zu bytes",
				 LLM_MAX_TEXT);
		goto out;
	}
	if ((rc = llm_text_nul(o.buf, o.len, 0, err)))
		goto out;
	out->response_raw = xstrndup(o.buf, o.len);
	out->text = strbuf_detach(&o, NULL);
	out->stop = LLM_STOP_END;
	out->seconds = cp.wall_s;
out:
	free(env_model);
	free(env_max);
	strbuf_release(&in);
	strbuf_release(&o);
	strbuf_release(&e);
	return rc;
}

const struct llm_backend llm_backend_cmd = { "cmd", NULL, cmd_complete, NULL };
