/*
 * `cutegen llm "PROMPT"`: one prompt through the configured backend, the reply on stdout and
 * what it cost on stderr (or everything as one JSON object with --json). For checking a
 * backend's setup, and as a small scriptable client.
 */
#include "llm/llm_config.h"
#include "cmd/cutegen.h"
#include "llm/llm.h"
#include "util/opt.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_PROMPT ((size_t)4 << 20)

struct counter {
	int shown;
	long last;
};

static void show_progress(void *ctx, long tokens)
{
	struct counter *c = ctx;
	if (c->shown && tokens >= c->last && tokens - c->last < 8)
		return;
	c->last = tokens;
	c->shown = 1;
	fprintf(stderr, "\r  receiving... ~%ld tokens", tokens);
	fflush(stderr);
}

static void clear_progress(struct counter *c)
{
	if (c->shown)
		fputs("\r\033[K", stderr);
	c->shown = 0;
}

static const char *stop_word(enum llm_stop s)
{
	return s == LLM_STOP_END ? "end" : s == LLM_STOP_LENGTH ? "length" : "other";
}

static void print_json(const struct llm_config *cfg, const struct llm_reply *r, int rc,
		       const char *err)
{
	json_t *j = json_object();
	if (rc) {
		json_object_set_new(j, "error", json_pack("{s:s, s:s}", "kind", llm_error_name(rc),
							  "message", err ? err : ""));
	} else {
		json_object_set_new(j, "text", json_string(r->text ? r->text : ""));
		json_object_set_new(j, "stop", json_string(stop_word(r->stop)));
		if (r->stop_raw)
			json_object_set_new(j, "stop_raw", json_string(r->stop_raw));
		json_object_set_new(j, "usage", json_pack("{s:I, s:I, s:I}",
							  "in", (json_int_t)r->in_tokens,
							  "out", (json_int_t)r->out_tokens,
							  "cached", (json_int_t)r->cached_tokens));
		json_object_set_new(j, "cost_usd", json_real(r->cost_usd));
	}
	if (cfg) {
		json_object_set_new(j, "backend", json_string(cfg->backend));
		/* always there, as the help promises: the model that replied, else the one asked
		 * for, else null (a cmd or replay backend given no --model) */
		const char *model = r && r->model ? r->model : cfg->model;
		json_object_set_new(j, "model", model ? json_string(model) : json_null());
	}
	if (r) {
		json_object_set_new(j, "seconds", json_real(r->seconds));
		json_object_set_new(j, "attempts", json_integer(r->attempts));
	}
	char *s = json_dumps(j, JSON_INDENT(2) | JSON_ENSURE_ASCII);
	puts(s);
	free(s);
	json_decref(j);
}

static int read_prompt(const char *arg, struct strbuf *prompt)
{
	if (arg && strcmp(arg, "-")) {
		strbuf_addstr(prompt, arg);
		return 0;
	}
	if (!arg && isatty(0)) {
		error("no prompt: give it as an argument (quoted), or '-' to read it from stdin");
		return EXIT_USAGE;
	}
	int r = strbuf_read_fd(prompt, 0);
	if (r == CG_INPUT_TOOBIG || prompt->len > MAX_PROMPT) {
		error("the prompt on stdin is larger than %zu bytes", MAX_PROMPT);
		return EXIT_INPUT;
	}
	if (r) {
		error("cannot read the prompt from stdin: %s", strerror(errno));
		return EXIT_INPUT;
	}
	return 0;
}

int cmd_llm(int argc, char **argv)
{
	struct llm_flags flags;
	struct opt opts[LLM_FLAGS_MAX + 2];
	const char *system = NULL;
	int json = 0, npos = 0, rc = EXIT_OK, lrc = 0;
	char errbuf[256];
	char *err = NULL;
	struct llm_config cfg;
	struct llm *m = NULL;
	struct llm_reply reply = LLM_REPLY_INIT;
	struct strbuf prompt = STRBUF_INIT;
	struct counter counter = { 0, 0 };

	llm_config_init(&cfg);
	int n = llm_flags_opts(&flags, opts);
	opts[n++] = (struct opt){ "system", 's', OPT_STRING, &system };
	opts[n++] = (struct opt){ "json", 0, OPT_BOOL, &json };
	if (opt_parse(argc, argv, opts, n, &npos, errbuf, sizeof(errbuf))) {
		error("%s; 'cutegen help llm' lists the options", errbuf);
		rc = EXIT_USAGE;
		goto out;
	}
	if (npos > 1) {
		error("give the prompt as one argument (quote it); got %d arguments", npos);
		rc = EXIT_USAGE;
		goto out;
	}
	prompt.cap = MAX_PROMPT + 1;
	if ((rc = read_prompt(npos ? argv[1] : NULL, &prompt)))
		goto out;
	if (!prompt.len) {
		error("the prompt is empty");
		rc = EXIT_USAGE;
		goto out;
	}
	if ((lrc = config_load_llm(&cfg, &err)) || (lrc = llm_flags_apply(&flags, &cfg, &err)))
		goto fail;
	m = llm_open(&cfg, &lrc, &err);
	if (!m)
		goto fail;
	const struct llm_config *used = llm_config_of(m);
	int live = isatty(2) && used->stream &&
		   (!strcmp(used->backend, "openai") || !strcmp(used->backend, "anthropic"));
	if (live)
		llm_set_progress(m, show_progress, &counter);

	struct llm_message msgs[2];
	int nmsgs = 0;
	if (system)
		msgs[nmsgs++] = (struct llm_message){ "system", system };
	msgs[nmsgs++] = (struct llm_message){ "user", prompt.buf };
	lrc = llm_complete(m, msgs, nmsgs, &reply, &err);
	clear_progress(&counter);
	if (lrc)
		goto fail;

	if (json) {
		print_json(used, &reply, 0, NULL);
	} else {
		fputs(reply.text, stdout);
		if (!*reply.text || reply.text[strlen(reply.text) - 1] != '\n')
			putchar('\n');
		fflush(stdout);
		const char *model = reply.model ? reply.model : used->model;
		fprintf(stderr, "%s%s%s: %ld in", used->backend, model ? " " : "", model ? model : "",
			reply.in_tokens);
		if (reply.cached_tokens)
			fprintf(stderr, " (%ld cached)", reply.cached_tokens);
		fprintf(stderr, " + %ld out tokens, ", reply.out_tokens);
		if (reply.cost_usd > 0)
			fprintf(stderr, "$%.4f, ", reply.cost_usd);
		else
			fprintf(stderr, "cost unknown, ");
		fprintf(stderr, "%.1f s, %d attempt%s\n", reply.seconds, reply.attempts,
			reply.attempts == 1 ? "" : "s");
	}
	if (reply.stop == LLM_STOP_LENGTH)
		warning("the reply was cut off at the token limit (stop reason '%s'); raise "
			"--max-tokens", reply.stop_raw ? reply.stop_raw : "length");
	else if (reply.stop == LLM_STOP_OTHER)
		warning("the model stopped for another reason: '%s'",
			reply.stop_raw ? reply.stop_raw : "?");
	goto out;

fail:
	error("%s", err ? err : llm_error_name(lrc));
	if (json)
		print_json(m ? llm_config_of(m) : NULL, m ? &reply : NULL, lrc, err);
	rc = exit_status_for(llm_error_code(lrc));
out:
	llm_reply_release(&reply);
	llm_close(m);
	llm_config_release(&cfg);
	strbuf_release(&prompt);
	free(err);
	return rc;
}
