/*
 * `cutegen doctor`: a true picture of what this machine can do: compile (nvcc, CUTLASS),
 * evaluate (GPUs through the runner), profile (ncu, compute-sanitizer), which model
 * backends are configured, and whether the chosen one answers: one tiny request (the cmd
 * backend's command run once, a transcript opened), so a wrong URL, model or key shows here and
 * not an hour into a run. Exits nonzero when that backend is misconfigured or does not answer.
 */
#include "eval/build.h"
#include "cmd/cutegen.h"
#include "eval/eval.h"
#include "llm/llm.h"
#include "llm/llm_config.h"
#include "common/paths.h"
#include "common/proc.h"
#include "util/opt.h"
#include "util/strbuf.h"
#include "util/xalloc.h"
#include "eval/reference.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* First line of `prog --version` matching `needle`, or the last non-empty line. */
static char *tool_version(const char *prog, const char *needle)
{
	struct strbuf out = STRBUF_INIT;
	const char *argv[] = { prog, "--version", NULL };
	struct child_process cp = CHILD_PROCESS_INIT;
	char *v = NULL;
	if (capture_command(&cp, argv, &out, 1 << 16, 1, 20) == 0 && cp.status == 0) {
		char *save = NULL, *last = NULL;
		for (char *l = strtok_r(out.buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			if (needle && strstr(l, needle)) {
				last = l;
				break;
			}
			if (*l)
				last = l;
		}
		if (last)
			v = xstrdup(last);
	}
	strbuf_release(&out);
	return v;
}

/*
 * The LLM backends as JSON, from the lines doctor_describe_backends writes ("  default: openai
 * (...)", "  openai     not configured: set OPENAI_API_KEY (...)"): {"default": NAME or null,
 * "default_configured": bool, "config_error": text or null, "backends": [{"name", "configured",
 * "detail"}]}.
 */
static json_t *llm_json(const char *text)
{
	json_t *o = json_object(), *arr = json_array();
	json_object_set_new(o, "default", json_null());
	json_object_set_new(o, "default_configured", json_false());
	json_object_set_new(o, "config_error", json_null());
	const char *line = text;
	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char *l = xstrndup(line, len), *p = l;
		line += len + (nl != NULL);
		while (*p == ' ')
			p++;
		if (starts_with(p, "(config: ")) {
			p += strlen("(config: ");
			if (*p && p[strlen(p) - 1] == ')')
				p[strlen(p) - 1] = 0;
			json_object_set_new(o, "config_error", json_string(p));
		} else if (starts_with(p, "default: ")) {
			p += strlen("default: ");
			char *sp = strchr(p, ' ');
			if (sp)
				*sp++ = 0;
			if (strcmp(p, "none"))
				json_object_set_new(o, "default", json_string(p));
			json_object_set_new(o, "default_configured",
					    json_boolean(strcmp(p, "none") &&
							 !(sp && strstr(sp, "not configured"))));
			if (sp && *sp)
				json_object_set_new(o, "default_detail", json_string(sp));
		} else if (*p) {
			char *sp = strchr(p, ' ');
			if (sp)
				*sp++ = 0;
			while (sp && *sp == ' ')
				sp++;
			const char *detail = sp ? sp : "";
			int configured = 0;
			if (starts_with(detail, "configured: ")) {
				configured = 1;
				detail += strlen("configured: ");
			} else if (starts_with(detail, "always available: ")) {
				configured = 1;
				detail += strlen("always available: ");
			} else if (starts_with(detail, "not configured: ")) {
				detail += strlen("not configured: ");
			}
			json_array_append_new(arr, json_pack("{s:s, s:b, s:s}", "name", p, "configured",
							     configured, "detail", detail));
		}
		free(l);
	}
	json_object_set_new(o, "backends", arr);
	return o;
}

static void describe_one(const struct llm_config *base, const char *backend, struct strbuf *out)
{
	struct llm_config c;
	char *err = NULL;
	const char *key;
	llm_config_copy(&c, base);
	int explicit_env = base->api_key_env != NULL;
	int chosen = base->backend && !strcmp(base->backend, backend);
	if (!chosen) {
		/* describe this backend with the shared settings, not another backend's */
		llm_config_set(&c.backend, backend);
		if (base->backend) {
			llm_config_set(&c.base_url, NULL);
			llm_config_set(&c.model, NULL);
			llm_config_set(&c.api_key_env, NULL);
			explicit_env = 0;
		}
	}
	strbuf_addf(out, "  %-10s ", backend);
	if (llm_config_resolve(&c, &err)) {
		if (!strcmp(backend, "cmd"))
			strbuf_addstr(out, "not configured: set CUTEGEN_LLM_CMD or use --llm-cmd 'CMD'\n");
		else if (!strcmp(backend, "replay"))
			strbuf_addstr(out, "not configured: use --replay FILE (a recorded transcript)\n");
		else
			strbuf_addf(out, "not configured: %s\n", err);
		goto out;
	}
	if (!strcmp(backend, "cmd")) {
		strbuf_addf(out, "configured: runs '%.200s'\n", c.llm_cmd);
	} else if (!strcmp(backend, "replay")) {
		strbuf_addf(out, "configured: replays '%.200s'\n", c.replay_path);
	} else if (llm_config_key(&c, explicit_env, &key, NULL) == LLM_OK) {
		strbuf_addf(out, "configured: model %s at %s, ", c.model, c.base_url);
		if (key)
			strbuf_addf(out, "key in %s\n", c.api_key_env);
		else
			strbuf_addstr(out, "no key (own server)\n");
	} else {
		strbuf_addf(out, "not configured: set %s (model %s at %s)\n", c.api_key_env, c.model,
			    c.base_url);
	}
out:
	free(err);
	llm_config_release(&c);
}

/*
 * One tiny request to the backend cfg chooses. 0 when it answered, else the llm error with
 * *msg saying what to fix. Fills j with what was asked and what came back.
 */
static int probe_llm(const struct llm_config *cfg, json_t *j, char **msg)
{
	struct llm_config c;
	struct llm_reply r = LLM_REPLY_INIT;
	int rc = 0;
	llm_config_copy(&c, cfg);
	/* a probe: no retries, a short deadline, a few tokens (a reasoning model may use them
	   all and answer nothing: the call still proves the URL, key and model) */
	c.max_retries = 0;
	if (c.request_timeout_s > 60)
		c.request_timeout_s = 60;
	if (!c.max_tokens)
		c.max_tokens = 16;
	c.record_path = NULL;
	struct llm *m = llm_open(&c, &rc, msg);
	if (m) {
		const struct llm_config *u = llm_config_of(m);
		json_object_set_new(j, "backend", json_string(u->backend));
		if (u->model && (!strcmp(u->backend, "openai") || !strcmp(u->backend, "anthropic"))) {
			json_object_set_new(j, "model", json_string(u->model));
			json_object_set_new(j, "base_url", json_string(u->base_url));
		}
		if (strcmp(u->backend, "replay")) {
			struct llm_message msg1 = { "user", "Reply with the single word OK." };
			rc = llm_complete(m, &msg1, 1, &r, msg);
			json_object_set_new(j, "seconds", json_real(r.seconds));
		}
		llm_close(m);
	}
	json_object_set_new(j, "ok", json_boolean(rc == 0));
	if (rc) {
		json_object_set_new(j, "error", json_string(llm_error_name(rc)));
		json_object_set_new(j, "message", json_string(*msg ? *msg : ""));
	}
	llm_reply_release(&r);
	llm_config_release(&c);
	return rc;
}

void doctor_describe_backends(const struct llm_config *cfg, struct strbuf *out)
{
	struct llm_config loaded;
	char *err = NULL;
	llm_config_init(&loaded);
	if (!cfg) {
		if (config_load_llm(&loaded, &err)) {
			strbuf_addf(out, "  (config: %s)\n", err);
			free(err);
			err = NULL;
		}
		cfg = &loaded;
	}
	struct llm_config chosen;
	llm_config_copy(&chosen, cfg);
	if (llm_config_resolve(&chosen, &err) == LLM_OK)
		strbuf_addf(out, "  default: %s%s\n", chosen.backend,
			    llm_configured(cfg) ? "" : " (not configured: cutegen run uses the builtin agent)");
	else
		strbuf_addf(out, "  default: none (%s)\n", err);
	free(err);
	llm_config_release(&chosen);
	const char *names[] = { "openai", "anthropic", "cmd", "replay" };
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		describe_one(cfg, names[i], out);
	strbuf_addf(out, "  %-10s always available: no model, cutegen's own CuTe kernel families tuned "
			 "by measurement (what 'cutegen run' uses when no model is configured)\n",
		    "builtin");
	llm_config_release(&loaded);
}
int cmd_doctor(int argc, char **argv)
{
	int json = 0, np = 0, no_probe = 0;
	char err[256];
	struct llm_flags lf;
	struct opt opts[LLM_FLAGS_MAX + 2];
	int nopt = llm_flags_opts(&lf, opts);
	opts[nopt++] = (struct opt){ "json", 0, OPT_BOOL, &json };
	opts[nopt++] = (struct opt){ "no-probe", 0, OPT_BOOL, &no_probe };
	if (opt_parse(argc, argv, opts, nopt, &np, err, sizeof(err))) {
		error("%s; see 'cutegen help doctor'", err);
		return EXIT_USAGE;
	}
	if (np) {
		error("doctor takes no arguments (got '%s')", argv[1]);
		return EXIT_USAGE;
	}
	struct llm_config lcfg;
	char *lerr = NULL;
	llm_config_init(&lcfg);
	int lrc = config_load_llm(&lcfg, &lerr);
	if (!lrc)
		lrc = llm_flags_apply(&lf, &lcfg, &lerr);
	if (lrc) {
		error("%s", lerr);
		free(lerr);
		llm_config_release(&lcfg);
		return lrc == LLM_ERR_INPUT ? EXIT_INPUT : EXIT_USAGE;
	}
	int llm_rc = 0;
	json_t *o = json_object();
	struct strbuf txt = STRBUF_INIT;
	int can_compile = 1, can_eval = 0;

	char *nvcc = paths_nvcc();
	char *nvcc_ver = nvcc ? tool_version(nvcc, "release") : NULL;
	json_object_set_new(o, "nvcc", nvcc ? json_string(nvcc) : json_null());
	json_object_set_new(o, "nvcc_version", nvcc_ver ? json_string(nvcc_ver) : json_null());
	strbuf_addf(&txt, "nvcc               %s%s%s%s\n", nvcc ? nvcc : "not found: install the CUDA toolkit",
		    nvcc_ver ? " (" : "", nvcc_ver ? nvcc_ver : "", nvcc_ver ? ")" : "");
	can_compile &= nvcc != NULL;

	char *cutlass = build_find_cutlass_include();
	char *cver = cutlass ? paths_cutlass_version(cutlass) : NULL;
	json_object_set_new(o, "cutlass_include", cutlass ? json_string(cutlass) : json_null());
	json_object_set_new(o, "cutlass_version", cver ? json_string(cver) : json_null());
	strbuf_addf(&txt, "CUTLASS/CuTe       %s%s%s%s\n",
		    cutlass ? cutlass : "not found: run 'make' (fetches them) or set CUTLASS_DIR",
		    cver ? " (version " : "", cver ? cver : "", cver ? ")" : "");
	can_compile &= cutlass != NULL;

	/* the object check of every build reads the compiled object with binutils */
	char *objdump = paths_find_program("objdump"), *cxxfilt = paths_find_program("c++filt");
	json_object_set_new(o, "objdump", objdump ? json_string(objdump) : json_null());
	strbuf_addf(&txt, "objdump, c++filt   %s%s%s\n",
		    objdump ? objdump : "objdump not found: install binutils (the object check needs it)",
		    objdump && cxxfilt ? ", " : "",
		    objdump ? (cxxfilt ? cxxfilt : " (c++filt not found: messages keep mangled names)")
			    : "");
	can_compile &= objdump != NULL;

	char *runner = paths_runner();
	json_object_set_new(o, "runner", runner ? json_string(runner) : json_null());
	json_t *gpus = json_array();
	if (!runner) {
		strbuf_addstr(&txt, "runner             not found: build it with 'make'\n");
		json_object_set_new(o, "gpu_error", json_string("the runner (cutegen-runner) was not "
								"found: build it with 'make'"));
	} else {
		char *problem = NULL;
		json_t *j = eval_list_devices(runner, 0, &problem);
		json_t *devs = j ? json_object_get(j, "devices") : NULL;
		if (devs && json_array_size(devs)) {
			size_t i;
			json_t *d;
			json_array_foreach(devs, i, d) {
				strbuf_addf(&txt, "GPU %-14zu %s (compute capability %s, %lld SMs, %.1f GB, %.1f GB free)\n", i,
					    json_string_value(json_object_get(d, "name")),
					    json_string_value(json_object_get(d, "cc")),
					    (long long)json_integer_value(json_object_get(d, "sms")),
					    json_number_value(json_object_get(d, "memory_gb")),
					    json_number_value(json_object_get(d, "free_gb")));
				json_array_append(gpus, d);
			}
			can_eval = 1;
			json_object_set_new(o, "gpu_error", json_null());
		} else {
			const char *why = j ? json_string_value(json_object_get(j, "error")) : problem;
			strbuf_addf(&txt, "GPU                no CUDA device: kernels can be compiled but not evaluated (%s)\n",
				    why ? why : "none found");
			json_object_set_new(o, "gpu_error", json_string(why ? why : "none found"));
		}
		if (j)
			json_decref(j);
		free(problem);
	}
	json_object_set_new(o, "gpus", gpus);

	const char *tools[][2] = { { "ncu", "profiling feedback" }, { "compute-sanitizer", "memcheck reports on crashes" } };
	for (size_t i = 0; i < 2; i++) {
		char *p = paths_find_program(tools[i][0]);
		char *v = p ? tool_version(p, "Version") : NULL;
		json_object_set_new(o, tools[i][0], p ? json_string(p) : json_null());
		if (p)
			strbuf_addf(&txt, "%-18s %s%s%s%s\n", tools[i][0], p, v ? " (" : "", v ? v : "", v ? ")" : "");
		else
			strbuf_addf(&txt, "%-18s not found: %s disabled\n", tools[i][0], tools[i][1]);
		free(p);
		free(v);
	}
	char *pyexe = NULL, *torchv = NULL, *torche = NULL, *pyerr = NULL;
	if (reference_probe(&pyexe, &torchv, &torche, &pyerr) == 0) {
		json_object_set_new(o, "python", json_string(pyexe));
		json_object_set_new(o, "torch", torchv ? json_string(torchv) : json_null());
		if (torchv)
			strbuf_addf(&txt, "%-18s %s, torch %s: module tasks (.py) can be described\n",
				    "python (modules)", pyexe, torchv);
		else
			strbuf_addf(&txt, "%-18s %s has no torch (%s): module tasks (.py) need it "
				    "(pip install torch, or --python PATH)\n", "python (modules)", pyexe, torche);
	} else {
		json_object_set_new(o, "python", json_null());
		json_object_set_new(o, "torch", json_null());
		strbuf_addf(&txt, "%-18s %s: module tasks (.py) need Python 3 with PyTorch (--python PATH)\n",
			    "python (modules)", pyerr);
	}
	free(pyexe);
	free(torchv);
	free(torche);
	free(pyerr);
	struct strbuf llm = STRBUF_INIT;
	doctor_describe_backends(&lcfg, &llm);
	json_object_set_new(o, "llm", llm_json(llm.buf));
	/* the probe: the backend a run would use, when there is one (builtin needs none) */
	int chosen = lcfg.backend && strcmp(lcfg.backend, "builtin");
	int flags_given = lf.backend || lf.model || lf.base_url || lf.api_key_env || lf.llm_cmd ||
			  lf.replay;
	if (!no_probe && (chosen || flags_given || llm_configured(&lcfg)) &&
	    !(lcfg.backend && !strcmp(lcfg.backend, "builtin"))) {
		json_t *pj = json_object();
		char *pmsg = NULL;
		llm_rc = probe_llm(&lcfg, pj, &pmsg);
		const char *b = json_string_value(json_object_get(pj, "backend"));
		const char *mdl = json_string_value(json_object_get(pj, "model"));
		const char *url = json_string_value(json_object_get(pj, "base_url"));
		if (!llm_rc)
			strbuf_addf(&llm, "  probe: %s%s%s%s%s answered (%.1f s)\n", b, mdl ? " model " : "",
				    mdl ? mdl : "", url ? " at " : "", url ? url : "",
				    json_number_value(json_object_get(pj, "seconds")));
		else
			strbuf_addf(&llm, "  probe: %s%s%s%s%s failed: %s\n", b ? b : "the backend",
				    mdl ? " model " : "", mdl ? mdl : "", url ? " at " : "",
				    url ? url : "", pmsg ? pmsg : llm_error_name(llm_rc));
		json_object_set_new(json_object_get(o, "llm"), "probe", pj);
		free(pmsg);
	}
	strbuf_addstr(&txt, "LLM backends:\n");
	for (char *line = llm.buf, *nl; *line; line = nl) {
		nl = strchr(line, '\n');
		nl = nl ? nl + 1 : line + strlen(line);
		strbuf_addf(&txt, "  %.*s", (int)(nl - line), line);
	}
	if (txt.len && txt.buf[txt.len - 1] != '\n')
		strbuf_addch(&txt, '\n');
	strbuf_release(&llm);
	strbuf_addf(&txt, "summary            %s\n",
		    can_eval ? "can compile, evaluate and profile kernels"
		    : can_compile ? "can compile kernels; evaluation needs a CUDA GPU"
				  : "cannot compile kernels yet: see above");
	json_object_set_new(o, "can_compile", json_boolean(can_compile));
	json_object_set_new(o, "can_evaluate", json_boolean(can_eval));

	if (json) {
		char *s = json_dumps(o, JSON_INDENT(2));
		puts(s);
		free(s);
	} else {
		fputs(txt.buf, stdout);
	}
	json_decref(o);
	strbuf_release(&txt);
	free(nvcc);
	free(nvcc_ver);
	free(cutlass);
	free(objdump);
	free(cxxfilt);
	free(cver);
	free(runner);
	llm_config_release(&lcfg);
	if (llm_rc) {
		error("the model backend does not work: see 'probe' above, fix the setting it names "
		      "(or run without one: cutegen run uses the builtin agent)");
		return exit_status_for(llm_error_code(llm_rc));
	}
	return can_compile ? EXIT_OK : EXIT_ENV;
}
