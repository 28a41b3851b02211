/*
 * Prompt templates and the size budget (see prompt.h). The renderer is a small subset of
 * mustache: {{name}} and {{#name}}...{{/name}}, no escaping (prompts are plain text).
 */
#include "agent/prompt.h"
#include "common/embedded.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct prompt_var *find_var(const struct prompt_var *vars, size_t n, const char *name,
					 size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(vars[i].name) == len && !memcmp(vars[i].name, name, len))
			return &vars[i];
	return NULL;
}

static int render(const char *t, size_t len, const struct prompt_var *vars, size_t nvars,
		  struct strbuf *out, int depth, char **err)
{
	size_t i = 0;
	while (i < len) {
		const char *open = NULL;
		for (size_t j = i; j + 1 < len; j++)
			if (t[j] == '{' && t[j + 1] == '{') {
				open = t + j;
				break;
			}
		if (!open) {
			strbuf_add(out, t + i, len - i);
			return 0;
		}
		strbuf_add(out, t + i, (size_t)(open - (t + i)));
		const char *body = open + 2, *close = NULL;
		for (const char *p = body; p + 1 < t + len; p++)
			if (p[0] == '}' && p[1] == '}') {
				close = p;
				break;
			}
		if (!close) {
			*err = xasprintf("template: '{{' without '}}' at byte %zu", (size_t)(open - t));
			return -1;
		}
		int section = *body == '#';
		const char *name = body + (section ? 1 : 0);
		size_t nlen = (size_t)(close - name);
		const struct prompt_var *v = find_var(vars, nvars, name, nlen);
		if (!v) {
			*err = xasprintf("template: unknown placeholder '{{%.*s}}'", (int)(close - body), body);
			return -1;
		}
		const char *after = close + 2;
		if (!section) {
			if (v->value)
				strbuf_addstr(out, v->value);
			i = (size_t)(after - t);
			continue;
		}
		/* find {{/name}} */
		char *end_tag = xasprintf("{{/%.*s}}", (int)nlen, name);
		size_t el = strlen(end_tag);
		const char *end = NULL;
		for (const char *p = after; p + el <= t + len; p++)
			if (!memcmp(p, end_tag, el)) {
				end = p;
				break;
			}
		free(end_tag);
		if (!end) {
			*err = xasprintf("template: section '{{#%.*s}}' is not closed", (int)nlen, name);
			return -1;
		}
		if (depth > 8) {
			*err = xstrdup("template: sections nested too deep");
			return -1;
		}
		/* tags alone on their lines leave no blank lines behind */
		int open_alone = (open == t || open[-1] == '\n') && after < t + len && *after == '\n';
		int close_alone = (end == after || end[-1] == '\n') && end + el < t + len && end[el] == '\n';
		const char *inner = open_alone ? after + 1 : after;
		if (v->value && *v->value && inner < end &&
		    render(inner, (size_t)(end - inner), vars, nvars, out, depth + 1, err))
			return -1;
		i = (size_t)(end + el - t) + (open_alone && close_alone ? 1 : 0);
	}
	return 0;
}

int prompt_render(const char *tmpl, const struct prompt_var *vars, size_t nvars,
		  struct strbuf *out, char **err)
{
	return render(tmpl, strlen(tmpl), vars, nvars, out, 0, err);
}

void prompt_describe_task(const struct task *t, struct strbuf *out)
{
	strbuf_addf(out, "task: %s\n", t->name ? t->name : "(unnamed)");
	if (t->description && *t->description)
		strbuf_addf(out, "what it computes: %s\n", t->description);
	strbuf_addf(out, "op: %s", op_name(t->op));
	if (t->op == OP_ELEMENTWISE && t->act)
		strbuf_addf(out, " (%s)", act_name(t->act));
	strbuf_addstr(out, "; sizes: ");
	task_shape_summary(t, out);
	strbuf_addf(out, "\ndtypes: inputs %s, outputs %s\n", dtype_name(t->in_dtype),
		    dtype_name(t->out_dtype));
	strbuf_addf(out, "precision contract: %s", precision_name(t->precision));
	switch (t->precision) {
	case PREC_STRICT:
		strbuf_addstr(out, " (fp32 data computed in fp32: TF32, fp16 or bf16 tensor-core "
				   "shortcuts and approximate intrinsics like tanh.approx fail the check)\n");
		break;
	case PREC_TF32:
		strbuf_addstr(out, " (fp32 data; TF32 tensor-core products allowed, fp32 accumulation)\n");
		break;
	default:
		strbuf_addstr(out, " (products and sums in fp32 at least)\n");
		break;
	}
	struct tensor_spec ts[TASK_MAX_TENSORS];
	int n = task_tensors(t, ts), in = 0, outn = 0;
	strbuf_addstr(out, "arguments of cutegen_launch, in order (row-major, contiguous, on the "
			   "device):\n");
	for (int i = 0; i < n; i++) {
		strbuf_addf(out, "  %s[%d] %-5s %-5s [", ts[i].is_output ? "outputs" : "inputs",
			    ts[i].is_output ? outn++ : in++, ts[i].name, dtype_name(ts[i].dtype));
		for (int d = 0; d < ts[i].ndim; d++)
			strbuf_addf(out, "%s%lld", d ? ", " : "", (long long)ts[i].shape[d]);
		strbuf_addstr(out, "]");
		if (ts[i].structure == STRUCT_UPPER)
			strbuf_addstr(out, " (upper triangular)");
		else if (ts[i].structure == STRUCT_LOWER)
			strbuf_addstr(out, " (lower triangular)");
		else if (ts[i].structure == STRUCT_SYMMETRIC)
			strbuf_addstr(out, " (symmetric)");
		strbuf_addch(out, '\n');
	}
	double vals[TASK_MAX_SCALARS];
	const char *names[TASK_MAX_SCALARS];
	int ns = task_scalars(t, vals, names);
	if (ns) {
		strbuf_addstr(out, "scalars (const double *scalars, in order):");
		for (int i = 0; i < ns; i++)
			strbuf_addf(out, "%s %s = %g", i ? "," : "", names[i], vals[i]);
		strbuf_addch(out, '\n');
	} else {
		strbuf_addstr(out, "scalars: none (num_scalars is 0)\n");
	}
	/* the numbers the checker uses, per input distribution (equal ones said once) */
	strbuf_addstr(out, "checked against the reference on inputs");
	int nd = t->n_dists ? t->n_dists : 1;
	for (int i = 0; i < nd; i++)
		strbuf_addf(out, "%s %s", i ? "," : "", dist_name(t->n_dists ? t->dists[i] : DIST_UNIFORM));
	strbuf_addf(out, " (%d seeds each); an element passes when\n", t->seeds > 0 ? t->seeds : 2);
	struct task_tolerance tol[DIST_COUNT];
	enum dist dist[DIST_COUNT];
	for (int i = 0; i < nd; i++) {
		dist[i] = t->n_dists ? t->dists[i] : DIST_UNIFORM;
		task_tolerance(t, dist[i], &tol[i]);
	}
	int all_same = 1;
	for (int i = 1; i < nd; i++)
		all_same &= !memcmp(&tol[i], &tol[0], sizeof(tol[0]));
	for (int i = 0; i < nd; i++) {
		int first = 1;
		for (int j = 0; j < i; j++)
			first &= !!memcmp(&tol[j], &tol[i], sizeof(tol[i]));
		if (!first)
			continue;
		if (tol[i].eps_scale > 0)
			strbuf_addf(out, "  |got - want| <= %.3g * sum_k |a_ik||b_kj| (the scale of each "
				    "dot product)", tol[i].eps_scale);
		else
			strbuf_addf(out, "  |got - want| <= %.3g + %.3g * |want|", tol[i].atol, tol[i].rtol);
		if (!all_same) {
			strbuf_addstr(out, " for");
			for (int j = i, k = 0; j < nd; j++)
				if (!memcmp(&tol[j], &tol[i], sizeof(tol[i])))
					strbuf_addf(out, "%s %s", k++ ? "," : "", dist_name(dist[j]));
		}
		strbuf_addch(out, '\n');
	}
	strbuf_addf(out, "workload class: %s (%s)\n", task_workload(t),
		    task_is_gemm_like(t) ? "compute-bound: compared with cuBLASLt and the tensor-core / "
					   "FMA peak"
					 : "memory-bound: compared with the device's copy bandwidth");
}

const char *prompt_module_stages(const char *workload)
{
	if (!workload)
		return "elementwise";
	if (!strcmp(workload, "gemm-like") || !strcmp(workload, "convolution") ||
	    !strcmp(workload, "attention"))
		return "gemm";
	if (!strcmp(workload, "reduction"))
		return "rowwise";
	return "elementwise";
}

/* The first paragraph of docs/kernel-abi.md's "### Module tasks" (embedded), on one line per
 * source line; empty when the heading is not there. */
static void module_contract(struct strbuf *out)
{
	const struct embedded_file *f = embedded_find("docs/kernel-abi.md");
	static const char head[] = "### Module tasks\n";
	const char *p = f ? strstr(f->data, head) : NULL;
	if (!p)
		return;
	p += sizeof(head) - 1;
	while (*p == '\n')
		p++;
	const char *end = strstr(p, "\n\n");
	strbuf_add(out, p, end ? (size_t)(end - p) : strlen(p));
	strbuf_addch(out, '\n');
}

static const char *module_workload_note(const char *w)
{
	if (!strcmp(w, "convolution"))
		return "the GEMM stages apply to the convolution's implicit GEMM (rows: output "
		       "positions N*OH*OW, columns: output channels, K: input channels x kernel "
		       "window); the im2col indexing goes in the A tile's copy, never in a buffer";
	if (!strcmp(w, "attention"))
		return "the GEMM stages apply to its two products (Q K^T, then P V) with the softmax "
		       "between them done online per row block (docs: online softmax), never writing "
		       "the score matrix to memory";
	if (!strcmp(w, "gemm-like"))
		return "compute-bound: the product's tiles and the tensor cores (where the "
		       "precision allows) matter most; fuse what follows the product into its epilogue";
	if (!strcmp(w, "reduction"))
		return "bound by memory: read each input once, reduce in registers and shared memory, "
		       "write the small output once";
	return "one pass over memory, wide coalesced loads and stores, every element op fused "
	       "into that pass";
}

void prompt_describe_module(const struct module_desc *md, const char *source, struct strbuf *out)
{
	strbuf_addf(out, "task: module %s (a PyTorch module in KernelBench's format: %s)\n",
		    md->name ? md->name : "?", md->file ? md->file : "?");
	strbuf_addstr(out, "what it computes: what Model.forward computes, for the inputs listed "
			   "below and the module's parameters and buffers as given (the kernel "
			   "replaces the whole forward):\n");
	if (source && *source) {
		size_t n = strlen(source);
		strbuf_addstr(out, "```python\n");
		strbuf_add(out, source, n > PROMPT_MODULE_SOURCE_MAX ? PROMPT_MODULE_SOURCE_MAX : n);
		if (n > PROMPT_MODULE_SOURCE_MAX)
			strbuf_addf(out, "\n# [... %zu more bytes of the module file not shown]",
				    n - PROMPT_MODULE_SOURCE_MAX);
		if (out->len && out->buf[out->len - 1] != '\n')
			strbuf_addch(out, '\n');
		strbuf_addstr(out, "```\n");
	} else {
		strbuf_addstr(out, "(the module's source could not be read)\n");
	}
	strbuf_addf(out, "dtypes: floating inputs %s\n", md->dtype ? md->dtype : "?");
	const char *prec = md->precision ? md->precision : "none";
	strbuf_addf(out, "precision contract: %s", prec);
	if (!strcmp(prec, "strict"))
		strbuf_addstr(out, " (fp32 data computed in fp32: TF32, fp16 or bf16 tensor-core "
				   "shortcuts and approximate intrinsics like tanh.approx fail the check)\n");
	else if (!strcmp(prec, "tf32"))
		strbuf_addstr(out, " (fp32 data; TF32 tensor-core products allowed, fp32 accumulation)\n");
	else
		strbuf_addstr(out, " (products and sums in fp32 at least)\n");
	strbuf_addstr(out, "the module contract: ");
	module_contract(out);
	strbuf_addstr(out, "arguments of cutegen_launch, in order (row-major, contiguous, on the "
			   "device): inputs[0..] are the rows marked input, parameter and buffer, in "
			   "this order; outputs[0..] the rows marked output:\n");
	int in = 0, outn = 0;
	for (int i = 0; i < md->ntensors; i++) {
		const struct module_tensor *t = &md->tensors[i];
		int o = t->role == MROLE_OUTPUT;
		strbuf_addf(out, "  %s[%d] %-9s %-20s %-5s [", o ? "outputs" : "inputs", o ? outn++ : in++,
			    module_role_name(t->role), t->name, t->dtype);
		for (int d = 0; d < t->ndim; d++)
			strbuf_addf(out, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
		strbuf_addstr(out, "]\n");
	}
	if (md->nscalars) {
		strbuf_addstr(out, "scalars (const double *scalars, in order):");
		for (int i = 0; i < md->nscalars; i++)
			strbuf_addf(out, "%s %s = %.17g (from %s)", i ? "," : "", md->scalars[i].name,
				    md->scalars[i].value, md->scalars[i].from_init ? "get_init_inputs" : "get_inputs");
		strbuf_addch(out, '\n');
	} else {
		strbuf_addstr(out, "scalars: none (num_scalars is 0); values the module fixes in "
				   "__init__ (a kernel size, a dim) are constants of this task\n");
	}
	strbuf_addstr(out, "mode: forward is judged as the module computes in ");
	module_mode_note(md, out);
	strbuf_addch(out, '\n');
	strbuf_addstr(out, "checked against the module run in float64 (the truth) on several seeds "
			   "of get_inputs()'s own draw, N(0,1) and 64 N(0,1) inputs (inputs the module "
			   "names in CUTEGEN keep their own draw); an element passes when its error "
			   "against the truth is within a small multiple of the error of PyTorch's own "
			   "run in the task's dtype at that element, plus a few units in the last place "
			   "of the output dtype; integer outputs (indices) must be exact\n");
	if (md->flops >= 0)
		strbuf_addf(out, "work: %.0f FLOPs, %.0f bytes of inputs, parameters and outputs\n",
			    md->flops, md->bytes);
	else
		strbuf_addf(out, "work: %.0f bytes of inputs, parameters and outputs\n", md->bytes);
	const char *w = md->workload ? md->workload : "other";
	strbuf_addf(out, "workload class: %s (%s): %s\n", w, md->workload_why ? md->workload_why : "",
		    module_workload_note(w));
}

/* The last lines of text that fit in max bytes, with a note on what was left out. */
static void tail_lines(const char *text, size_t max, struct strbuf *out)
{
	size_t len = strlen(text);
	strbuf_reset(out);
	if (len <= max) {
		strbuf_addstr(out, text);
		return;
	}
	size_t start = len - max;
	while (start < len && text[start - 1] != '\n')
		start++;
	size_t dropped = 0;
	for (size_t i = 0; i < start; i++)
		dropped += text[i] == '\n';
	strbuf_addf(out, "(%zu earlier lines not shown)\n", dropped);
	strbuf_addstr(out, text + start);
}

/* Head and tail of text within max bytes, with a note in the middle. */
static void cut_middle(const char *text, size_t max, struct strbuf *out)
{
	size_t len = strlen(text);
	strbuf_reset(out);
	if (len <= max) {
		strbuf_addstr(out, text);
		return;
	}
	size_t head = max * 2 / 3, tail = max - head;
	strbuf_add(out, text, head);
	strbuf_addf(out, "\n[... %zu bytes cut to fit the prompt ...]\n", len - head - tail);
	strbuf_addstr(out, text + len - tail);
}

static int render_both(const struct prompt_input *in, const char *task_desc, const char *history,
		       const char *feedback, const char *profile, const char *docs,
		       struct strbuf *system, struct strbuf *user, char **err)
{
	char idx[16], count[16];
	snprintf(idx, sizeof(idx), "%d", in->stage_index);
	snprintf(count, sizeof(count), "%d", in->stage_count);
	struct prompt_var vars[] = {
		{ "task", task_desc },
		{ "kernel", in->kernel },
		{ "kernel_status", in->kernel_status },
		{ "best_status", in->best_status },
		{ "history", history },
		{ "stage", idx },
		{ "stage_count", count },
		{ "stage_name", in->stage_name },
		{ "guidance", in->stage_guidance },
		{ "watch", in->stage_watch },
		{ "feedback", feedback },
		{ "profile", profile },
		{ "docs", docs },
		{ "target", in->target },
	};
	strbuf_reset(system);
	strbuf_reset(user);
	if (prompt_render(in->system_tmpl ? in->system_tmpl : "", vars, ARRAY_SIZE(vars), system, err))
		return -1;
	return prompt_render(in->user_tmpl ? in->user_tmpl : "", vars, ARRAY_SIZE(vars), user, err);
}

int prompt_build(const struct prompt_input *in, struct strbuf *system, struct strbuf *user,
		 char **err)
{
	size_t budget = in->budget ? in->budget : PROMPT_DEFAULT_BUDGET;
	struct strbuf desc = STRBUF_INIT, hist = STRBUF_INIT, fb = STRBUF_INIT;
	const char *history = in->history ? in->history : "";
	const char *feedback = in->feedback ? in->feedback : "";
	const char *profile = in->profile, *docs = in->docs;
	int rc = -1, docs_cut = 0, profile_cut = 0;
	if (in->module && !in->task) {
		prompt_describe_module(in->module, in->module_source, &desc);
	} else {
		prompt_describe_task(in->task, &desc);
		if (in->module_file) { /* a module judged as its built-in twin: where it comes from */
			strbuf_addf(&desc, "this task is the PyTorch module %s, judged as the built-in op "
				    "above (its twin: the same tensors in the same order, names aside)%s\n",
				    in->module_file, in->module_source ? ":" : "");
			if (in->module_source) {
				size_t n = strlen(in->module_source);
				strbuf_addstr(&desc, "```python\n");
				strbuf_add(&desc, in->module_source,
					   n > PROMPT_MODULE_SOURCE_MAX ? PROMPT_MODULE_SOURCE_MAX : n);
				if (desc.len && desc.buf[desc.len - 1] != '\n')
					strbuf_addch(&desc, '\n');
				strbuf_addstr(&desc, "```\n");
			}
		}
	}
	strbuf_addstr(&hist, history);
	strbuf_addstr(&fb, feedback);
	/* Shrink in order of least value: old history, long feedback, then the optional parts. */
	for (int round = 0; round < 40; round++) {
		if (render_both(in, desc.buf, hist.buf, fb.buf, profile, docs, system, user, err))
			goto out;
		size_t total = system->len + user->len;
		if (total <= budget) {
			rc = 0;
			goto out;
		}
		size_t over = total - budget;
		if (hist.len > 400) {
			size_t keep = hist.len > over + 400 ? hist.len - over - 100 : 300;
			struct strbuf t = STRBUF_INIT;
			tail_lines(hist.buf, keep, &t);
			strbuf_release(&hist);
			hist = t;
			continue;
		}
		if (fb.len > 1500) {
			size_t keep = fb.len > over + 1500 ? fb.len - over - 100 : 1400;
			struct strbuf t = STRBUF_INIT;
			cut_middle(fb.buf, keep, &t);
			strbuf_release(&fb);
			fb = t;
			continue;
		}
		if (docs && *docs && !docs_cut) {
			docs_cut = 1;
			docs = "(retrieved documentation left out: the prompt was over its size budget)";
			continue;
		}
		if (profile && *profile && !profile_cut) {
			profile_cut = 1;
			profile = "(profile left out: the prompt was over its size budget)";
			continue;
		}
		break;
	}
	*err = xasprintf("the prompt is %zu bytes, over its budget of %zu even with the history and "
			 "feedback cut: the kernel itself is too large (raise the budget with "
			 "--prompt-budget)", system->len + user->len, budget);
out:
	strbuf_release(&desc);
	strbuf_release(&hist);
	strbuf_release(&fb);
	return rc;
}
