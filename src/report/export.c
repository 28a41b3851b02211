/*
 * Export of the best kernel (see export.h). The size parameters of the C API are the task's
 * symbolic sizes (m, n, k, batch for a GEMM; d0.. for a shape; n, m for diag_matmul); a tensor
 * dimension that has no symbol stays the number the kernel was verified with.
 */
#include "report/export.h"
#include "eval/build.h"
#include "eval/reference.h"
#include "common/embedded.h"
#include "common/task.h"
#include "common/task_module.h"
#include "util/err.h"
#include "util/fsutil.h"
#include "util/sha256.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SYMS 12

struct shapes {
	int nt;
	struct tensor_spec t[TASK_MAX_TENSORS];
	const char *dim[TASK_MAX_TENSORS][TASK_MAX_DIMS + 1]; /* symbol or NULL (a number) */
	int nsym;
	const char *sym[MAX_SYMS];
	int64_t sym_val[MAX_SYMS];
	int sym_in[MAX_SYMS], sym_axis[MAX_SYMS]; /* first input tensor and axis holding it */
	int ns;
	double sval[TASK_MAX_SCALARS];
	const char *sname[TASK_MAX_SCALARS];
};

static const char *const mdim_names[] = { "m0", "m1", "m2", "m3" };
static const char *const d_names[] = { "d0", "d1", "d2", "d3" };

/* The symbols of tensor i's dimensions for the op, or 0 when the op has none. */
static int symbols_for(const struct task *t, const struct tensor_spec *s, const char **out)
{
	int n = 0, lead = t->op == OP_GEMM && t->batch > 1;
	const char **md = (const char *[]){ "m" };
	int nmd = 1;
	if (t->m_ndims > 1 && t->m_ndims <= 4) {
		md = (const char **)mdim_names;
		nmd = t->m_ndims;
	}
	switch (t->op) {
	case OP_GEMM:
		if (!strcmp(s->name, "bias")) {
			out[n++] = "n";
			break;
		}
		if (lead)
			out[n++] = "batch";
		if (!strcmp(s->name, "A")) {
			if (t->a_layout == LAYOUT_COL) {
				out[n++] = "k";
				out[n++] = "m";
			} else {
				for (int i = 0; i < nmd; i++)
					out[n++] = md[i];
				out[n++] = "k";
			}
		} else if (!strcmp(s->name, "B")) {
			out[n++] = t->b_layout == LAYOUT_COL ? "n" : "k";
			out[n++] = t->b_layout == LAYOUT_COL ? "k" : "n";
		} else {
			for (int i = 0; i < nmd; i++)
				out[n++] = md[i];
			out[n++] = "n";
		}
		break;
	case OP_MATVEC:
		out[n++] = !strcmp(s->name, "x") ? "k" : "m";
		out[n++] = !strcmp(s->name, "A") ? "k" : NULL;
		break;
	case OP_DIAG_MATMUL:
		out[n++] = "n";
		if (strcmp(s->name, "a"))
			out[n++] = "m";
		break;
	default:
		for (int i = 0; i < s->ndim && i < 4; i++)
			out[n++] = d_names[i];
	}
	return n;
}

static void shapes_init(struct shapes *sh, const struct task *t)
{
	memset(sh, 0, sizeof(*sh));
	sh->nt = task_tensors(t, sh->t);
	sh->ns = task_scalars(t, sh->sval, sh->sname);
	for (int i = 0; i < sh->nt; i++) {
		const char *d[TASK_MAX_DIMS + 2] = { 0 };
		int n = symbols_for(t, &sh->t[i], d);
		if (n != sh->t[i].ndim)
			continue; /* keep the verified numbers */
		for (int a = 0; a < n; a++) {
			if (!d[a])
				continue;
			int j = 0;
			while (j < sh->nsym && strcmp(sh->sym[j], d[a]))
				j++;
			if (j == sh->nsym) {
				if (sh->nsym == MAX_SYMS || sh->t[i].is_output)
					continue; /* a size only an output has: keep the number */
				sh->sym[j] = d[a];
				sh->sym_val[j] = sh->t[i].shape[a];
				sh->sym_in[j] = i;
				sh->sym_axis[j] = a;
				sh->nsym++;
			} else if (sh->sym_val[j] != sh->t[i].shape[a]) {
				continue; /* disagrees with the verified shape: keep the number */
			}
			sh->dim[i][a] = sh->sym[j];
		}
	}
}

static const char *c_type(enum dtype d)
{
	return d == DT_FP32 ? "float" : d == DT_FP8_E4M3 ? "uint8_t" : "uint16_t";
}

static const char *dl_type(enum dtype d)
{
	switch (d) {
	case DT_FP16: return "DLDataType{kDLFloat, 16, 1}";
	case DT_BF16: return "DLDataType{kDLBfloat, 16, 1}";
	case DT_FP8_E4M3: return "DLDataType{kDLFloat8_e4m3fn, 8, 1}";
	default: return "DLDataType{kDLFloat, 32, 1}";
	}
}

static const char *torch_type(enum dtype d)
{
	switch (d) {
	case DT_FP16: return "torch::kFloat16";
	case DT_BF16: return "torch::kBFloat16";
	case DT_FP8_E4M3: return "torch::kFloat8_e4m3fn";
	default: return "torch::kFloat32";
	}
}

static void dim_expr(struct strbuf *sb, const struct shapes *sh, int i, int a)
{
	if (sh->dim[i][a])
		strbuf_addstr(sb, sh->dim[i][a]);
	else
		strbuf_addf(sb, "(int64_t)%lld", (long long)sh->t[i].shape[a]);
}

/* "const float *A, const float *B, float *C, int64_t m, ..., double alpha" */
static void c_params(struct strbuf *sb, const struct shapes *sh, int with_ptrs)
{
	int first = 1;
	for (int i = 0; with_ptrs && i < sh->nt; i++) {
		strbuf_addf(sb, "%s%s%s *%s", first ? "" : ", ", sh->t[i].is_output ? "" : "const ",
			    c_type(sh->t[i].dtype), sh->t[i].name);
		first = 0;
	}
	for (int j = 0; j < sh->nsym; j++, first = 0)
		strbuf_addf(sb, "%sint64_t %s", first ? "" : ", ", sh->sym[j]);
	for (int j = 0; j < sh->ns; j++, first = 0)
		strbuf_addf(sb, "%sdouble %s", first ? "" : ", ", sh->sname[j]);
}

static void shape_doc(struct strbuf *sb, const struct shapes *sh)
{
	for (int i = 0; i < sh->nt; i++) {
		strbuf_addf(sb, " *   %s %s %s [", sh->t[i].is_output ? "output" : "input ",
			    sh->t[i].name, dtype_name(sh->t[i].dtype));
		for (int a = 0; a < sh->t[i].ndim; a++) {
			if (a)
				strbuf_addstr(sb, ", ");
			if (sh->dim[i][a])
				strbuf_addstr(sb, sh->dim[i][a]);
			else
				strbuf_addf(sb, "%lld", (long long)sh->t[i].shape[a]);
		}
		strbuf_addstr(sb, "], contiguous row-major device memory\n");
	}
	strbuf_addstr(sb, " * Verified with");
	for (int j = 0; j < sh->nsym; j++)
		strbuf_addf(sb, " %s=%lld", sh->sym[j], (long long)sh->sym_val[j]);
	for (int j = 0; j < sh->ns; j++)
		strbuf_addf(sb, " %s=%g", sh->sname[j], sh->sval[j]);
	strbuf_addstr(sb, "; other sizes run only if the kernel accepts them (it returns nonzero\n"
			  " * when it does not).\n");
}

static void gen_header(struct strbuf *sb, const char *name, const struct shapes *sh, int ws,
		       const struct run_history *h)
{
	char guard[160];
	snprintf(guard, sizeof(guard), "CUTEGEN_EXPORT_%s_H", name);
	for (char *p = guard; *p; p++)
		*p = (char)toupper((unsigned char)*p);
	strbuf_addf(sb, "/* generated by cutegen export, do not edit: node %ld of a run of task ", h->best);
	for (const char *p = h->run.task_name; p && *p; p++) /* no comment terminator from the store */
		strbuf_addch(sb, isalnum((unsigned char)*p) || strchr("_-./", *p) ? *p : '_');
	strbuf_addf(sb, " */\n#ifndef %s\n#define %s\n\n#include <stddef.h>\n#include <stdint.h>\n"
		    "#include <cuda_runtime_api.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n",
		    guard, guard);
	strbuf_addf(sb, "/*\n * %s_launch: enqueues the kernel on `stream` and returns 0, or the "
		    "kernel's nonzero code\n * when it cannot handle the arguments (1 bad arguments, "
		    "2 a size beyond its limits,\n * 3 a CUDA attribute call failed, 4 the launch failed). "
		    "It does not synchronize.\n", name);
	shape_doc(sb, sh);
	if (ws)
		strbuf_addf(sb, " * The kernel needs scratch memory: pass a device buffer of at least "
			    "%s_workspace_bytes()\n * bytes (the same one may serve every call on one "
			    "stream).\n", name);
	strbuf_addstr(sb, " */\n");
	if (ws) {
		strbuf_addf(sb, "size_t %s_workspace_bytes(", name);
		c_params(sb, sh, 0);
		if (!sh->nsym && !sh->ns)
			strbuf_addstr(sb, "void");
		strbuf_addstr(sb, ");\n");
	}
	strbuf_addf(sb, "int %s_launch(", name);
	c_params(sb, sh, 1);
	strbuf_addf(sb, "%s, cudaStream_t stream);\n\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n",
		    ws ? ", void *workspace, size_t workspace_bytes" : "");
}

/* The DLTensor array `t` and scalar array `sc` from the C API's parameters. */
static void gen_tensors(struct strbuf *sb, const struct shapes *sh, int with_ptrs)
{
	strbuf_addstr(sb, "\tint dev = 0;\n\tcudaGetDevice(&dev);\n");
	for (int i = 0; i < sh->nt; i++) {
		strbuf_addf(sb, "\tint64_t shape%d[] = {", i);
		for (int a = 0; a < sh->t[i].ndim; a++) {
			if (a)
				strbuf_addstr(sb, ", ");
			dim_expr(sb, sh, i, a);
		}
		strbuf_addf(sb, "}, strides%d[%d];\n", i, sh->t[i].ndim);
	}
	strbuf_addf(sb, "\tDLTensor t[%d];\n", sh->nt);
	for (int i = 0; i < sh->nt; i++)
		strbuf_addf(sb, "\tt[%d] = cutegen_export::tensor(%s, dev, %s, %d, shape%d, strides%d);\n",
			    i, with_ptrs ? sh->t[i].name : "nullptr", dl_type(sh->t[i].dtype),
			    sh->t[i].ndim, i, i);
	strbuf_addf(sb, "\tdouble sc[%d] = {", sh->ns ? sh->ns : 1);
	for (int j = 0; j < sh->ns; j++)
		strbuf_addf(sb, "%s%s", j ? ", " : "", sh->sname[j]);
	strbuf_addstr(sb, sh->ns ? "};\n" : "0};\n");
}

static int count_inputs(const struct shapes *sh)
{
	int n = 0;
	for (int i = 0; i < sh->nt; i++)
		n += !sh->t[i].is_output;
	return n;
}

static void gen_cu(struct strbuf *sb, const char *name, const struct shapes *sh, int ws,
		   const char *source)
{
	int nin = count_inputs(sh);
	strbuf_addstr(sb, source);
	if (sb->len && sb->buf[sb->len - 1] != '\n')
		strbuf_addch(sb, '\n');
	strbuf_addf(sb, "\n// ---- generated by cutegen export, do not edit: the plain C launch API "
		    "of %s.h ----\n#include \"%s.h\"\n\nnamespace cutegen_export {\n"
		    "static DLTensor tensor(const void *data, int dev, DLDataType dt, int ndim, "
		    "int64_t *shape, int64_t *strides)\n{\n\tint64_t s = 1;\n"
		    "\tfor (int d = ndim - 1; d >= 0; --d) {\n\t\tstrides[d] = s;\n\t\ts *= shape[d];\n\t}\n"
		    "\tDLTensor t;\n\tt.data = const_cast<void *>(data);\n"
		    "\tt.device = DLDevice{kDLCUDA, dev};\n\tt.ndim = ndim;\n\tt.dtype = dt;\n"
		    "\tt.shape = shape;\n\tt.strides = strides;\n\tt.byte_offset = 0;\n\treturn t;\n}\n"
		    "} // namespace cutegen_export\n\n", name, name);
	if (ws) {
		strbuf_addf(sb, "extern \"C\" size_t %s_workspace_bytes(", name);
		c_params(sb, sh, 0);
		strbuf_addstr(sb, ")\n{\n");
		gen_tensors(sb, sh, 0);
		strbuf_addf(sb, "\treturn cutegen_workspace_bytes(t, %d, t + %d, %d, sc, %d);\n}\n\n", nin,
			    nin, sh->nt - nin, sh->ns);
	}
	strbuf_addf(sb, "extern \"C\" int %s_launch(", name);
	c_params(sb, sh, 1);
	strbuf_addf(sb, "%s, cudaStream_t stream)\n{\n", ws ? ", void *workspace, size_t workspace_bytes" : "");
	gen_tensors(sb, sh, 1);
	strbuf_addf(sb, "\treturn cutegen_launch(t, %d, t + %d, %d, sc, %d, %s, stream);\n}\n", nin, nin,
		    sh->nt - nin, sh->ns, ws ? "workspace, workspace_bytes" : "nullptr, 0");
}

static void gen_torch(struct strbuf *sb, const char *name, const struct shapes *sh, int ws)
{
	int nin = count_inputs(sh), nout = sh->nt - nin;
	strbuf_addf(sb, "// generated by cutegen export, do not edit: the PyTorch extension of %s\n"
		    "// (setup.py builds it; example.py loads it with torch.utils.cpp_extension.load)\n"
		    "#include <torch/extension.h>\n#include <ATen/cuda/CUDAContext.h>\n"
		    "#include <cutegen/kernel_abi.h>\n\n"
		    "CUTEGEN_KERNEL int cutegen_launch(const DLTensor *, int, DLTensor *, int, "
		    "const double *, int, void *, size_t, cudaStream_t);\n", name);
	if (ws)
		strbuf_addstr(sb, "CUTEGEN_KERNEL size_t cutegen_workspace_bytes(const DLTensor *, int, "
				  "const DLTensor *, int, const double *, int);\n");
	strbuf_addstr(sb, "\nstatic DLTensor as_dl(const torch::Tensor &x, const char *what, "
			  "c10::ScalarType want, DLDataType dt)\n{\n"
			  "\tTORCH_CHECK(x.is_cuda(), what, \" must be a CUDA tensor\");\n"
			  "\tTORCH_CHECK(x.is_contiguous(), what, \" must be contiguous\");\n"
			  "\tTORCH_CHECK(x.scalar_type() == want, what, \" has the wrong dtype\");\n"
			  "\tDLTensor t;\n\tt.data = x.data_ptr();\n"
			  "\tt.device = DLDevice{kDLCUDA, (int32_t)x.get_device()};\n"
			  "\tt.ndim = (int32_t)x.dim();\n\tt.dtype = dt;\n"
			  "\tt.shape = const_cast<int64_t *>(x.sizes().data());\n"
			  "\tt.strides = const_cast<int64_t *>(x.strides().data());\n"
			  "\tt.byte_offset = 0;\n\treturn t;\n}\n\n");
	strbuf_addstr(sb, nout == 1 ? "torch::Tensor forward(" : "std::vector<torch::Tensor> forward(");
	int first = 1;
	for (int i = 0; i < sh->nt; i++)
		if (!sh->t[i].is_output) {
			strbuf_addf(sb, "%storch::Tensor %s", first ? "" : ", ", sh->t[i].name);
			first = 0;
		}
	for (int j = 0; j < sh->ns; j++)
		strbuf_addf(sb, ", double %s", sh->sname[j]);
	strbuf_addstr(sb, ")\n{\n");
	for (int i = 0; i < sh->nt; i++)
		if (!sh->t[i].is_output)
			strbuf_addf(sb, "\tTORCH_CHECK(%s.dim() == %d, \"%s must have %d dimensions\");\n",
				    sh->t[i].name, sh->t[i].ndim, sh->t[i].name, sh->t[i].ndim);
	for (int j = 0; j < sh->nsym; j++)
		strbuf_addf(sb, "\tconst int64_t %s = %s.size(%d);\n", sh->sym[j],
			    sh->t[sh->sym_in[j]].name, sh->sym_axis[j]);
	for (int i = 0; i < sh->nt; i++) {
		if (!sh->t[i].is_output)
			continue;
		strbuf_addf(sb, "\ttorch::Tensor %s = torch::empty({", sh->t[i].name);
		for (int a = 0; a < sh->t[i].ndim; a++) {
			if (a)
				strbuf_addstr(sb, ", ");
			dim_expr(sb, sh, i, a);
		}
		strbuf_addf(sb, "}, %s.options().dtype(%s));\n", sh->t[0].name, torch_type(sh->t[i].dtype));
	}
	strbuf_addf(sb, "\tDLTensor t[%d] = {", sh->nt);
	for (int i = 0; i < sh->nt; i++)
		strbuf_addf(sb, "%sas_dl(%s, \"%s\", %s, %s)", i ? ", " : "", sh->t[i].name,
			    sh->t[i].name, torch_type(sh->t[i].dtype), dl_type(sh->t[i].dtype));
	strbuf_addf(sb, "};\n\tdouble sc[%d] = {", sh->ns ? sh->ns : 1);
	for (int j = 0; j < sh->ns; j++)
		strbuf_addf(sb, "%s%s", j ? ", " : "", sh->sname[j]);
	strbuf_addstr(sb, sh->ns ? "};\n" : "0};\n");
	if (ws)
		strbuf_addf(sb, "\tsize_t wsb = cutegen_workspace_bytes(t, %d, t + %d, %d, sc, %d);\n"
			    "\ttorch::Tensor ws = torch::empty({(int64_t)wsb}, %s.options().dtype(torch::kUInt8));\n",
			    nin, nin, nout, sh->ns, sh->t[0].name);
	strbuf_addf(sb, "\tint rc = cutegen_launch(t, %d, t + %d, %d, sc, %d, %s, "
		    "at::cuda::getCurrentCUDAStream());\n"
		    "\tTORCH_CHECK(rc == 0, \"the kernel refused the arguments (code \", rc, \")\");\n",
		    nin, nin, nout, sh->ns, ws ? "ws.data_ptr(), wsb" : "nullptr, 0");
	if (nout == 1) {
		for (int i = 0; i < sh->nt; i++)
			if (sh->t[i].is_output)
				strbuf_addf(sb, "\treturn %s;\n}\n", sh->t[i].name);
	} else {
		strbuf_addstr(sb, "\treturn {");
		for (int i = 0, k = 0; i < sh->nt; i++)
			if (sh->t[i].is_output)
				strbuf_addf(sb, "%s%s", k++ ? ", " : "", sh->t[i].name);
		strbuf_addstr(sb, "};\n}\n");
	}
	strbuf_addf(sb, "\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m)\n{\n\tm.def(\"forward\", &forward, "
		    "\"the cutegen kernel %s on the current CUDA stream\");\n}\n", name);
}

static void fill_template(struct strbuf *sb, const char *tmpl, const char *name,
			  const char *gencode, const char *cutlass, const char *arch_note)
{
	const char *keys[] = { "{{NAME}}", "{{GENCODE}}", "{{CUTLASS_INCLUDE}}", "{{ARCH_NOTE}}" };
	const char *vals[] = { name, gencode, cutlass, arch_note };
	const char *p = tmpl;
	while (*p) {
		int hit = -1;
		for (int k = 0; k < 4 && hit < 0; k++)
			if (!strncmp(p, keys[k], strlen(keys[k])))
				hit = k;
		if (hit >= 0) {
			strbuf_addstr(sb, vals[hit]);
			p += strlen(keys[hit]);
		} else {
			strbuf_addch(sb, *p++);
		}
	}
}

/*
 * The files of one export, made in memory first: nothing is written until every file is known
 * and none would overwrite what the user changed. The manifest (MANIFEST_FILE, "sha256  path"
 * lines as sha256sum writes them) records what the last export wrote, so its files, unchanged,
 * may be written again, and a file that differs from it is the user's.
 */
#define MANIFEST_FILE ".cutegen-export"
#define OUT_MAX 20

struct out_file {
	char *path; /* relative to the directory */
	struct strbuf data;
};

struct outputs {
	struct out_file f[OUT_MAX];
	int n;
};

static struct strbuf *out_add(struct outputs *o, const char *path)
{
	if (o->n == OUT_MAX)
		BUG("more than %d export files", OUT_MAX);
	struct out_file *f = &o->f[o->n++];
	f->path = xstrdup(path);
	strbuf_init(&f->data, 0);
	return &f->data;
}

static void outputs_release(struct outputs *o)
{
	for (int i = 0; i < o->n; i++) {
		free(o->f[i].path);
		strbuf_release(&o->f[i].data);
	}
	o->n = 0;
}

/* 1 when the manifest text lists path with the sha256 hex sha. */
static int manifest_has(const char *manifest, const char *path, const char *sha)
{
	for (const char *l = manifest; l && *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		if (len == 64 + 2 + strlen(path) && !strncmp(l, sha, 64) && !strncmp(l + 64, "  ", 2) &&
		    !strncmp(l + 66, path, strlen(path)))
			return 1;
		l = nl ? nl + 1 : l + len;
	}
	return 0;
}

/*
 * The files of o already in dir that the user changed: not what the last export wrote (per the
 * manifest) and not what this one writes. Appends their paths to sb ("a.cu, example.py").
 */
static int changed_files(const char *dir, const struct outputs *o, struct strbuf *sb)
{
	struct strbuf cur = STRBUF_INIT, man = STRBUF_INIT;
	char *mp = xasprintf("%s/%s", dir, MANIFEST_FILE);
	if (strbuf_read_file(&man, mp, 1 << 20))
		strbuf_reset(&man);
	int n = 0;
	for (int i = 0; i < o->n; i++) {
		char *p = xasprintf("%s/%s", dir, o->f[i].path);
		strbuf_reset(&cur);
		int there = file_exists(p);
		int r = there ? strbuf_read_file(&cur, p, 64u << 20) : CG_OK;
		free(p);
		if (!there || (r == CG_OK && cur.len == o->f[i].data.len &&
			       !memcmp(cur.buf, o->f[i].data.buf, cur.len)))
			continue; /* absent, or already what we write */
		char sha[65];
		if (r == CG_OK) { /* one it cannot read counts as the user's */
			sha256_hex(cur.buf, cur.len, sha);
			if (manifest_has(man.buf, o->f[i].path, sha))
				continue; /* ours, untouched since */
		}
		strbuf_addf(sb, "%s%s", n++ ? ", " : "", o->f[i].path);
	}
	free(mp);
	strbuf_release(&cur);
	strbuf_release(&man);
	return n;
}

/* Writes every file (making their directories), then the manifest of what was written. */
static int outputs_write(const char *dir, const struct outputs *o, char **err)
{
	struct strbuf man = STRBUF_INIT;
	int rc = -1;
	for (int i = 0; i < o->n; i++) {
		char *p = xasprintf("%s/%s", dir, o->f[i].path);
		char *slash = strrchr(p, '/');
		*slash = 0;
		int mr = mkdir_p(p);
		*slash = '/';
		if (mr || write_file_atomic(p, o->f[i].data.buf, o->f[i].data.len)) {
			*err = xasprintf("cannot write '%s': %s", p, strerror(errno));
			free(p);
			goto out;
		}
		free(p);
		char sha[65];
		sha256_hex(o->f[i].data.buf, o->f[i].data.len, sha);
		strbuf_addf(&man, "%s  %s\n", sha, o->f[i].path);
	}
	/* the entries of an earlier export for files this one does not write stay (a
	 * --kernel-only export beside a full one) */
	char *mp = xasprintf("%s/%s", dir, MANIFEST_FILE);
	struct strbuf old = STRBUF_INIT;
	if (!strbuf_read_file(&old, mp, 1 << 20)) {
		for (const char *l = old.buf; *l;) {
			const char *nl = strchr(l, '\n');
			size_t len = nl ? (size_t)(nl - l) : strlen(l);
			int ours = len <= 66;
			for (int i = 0; i < o->n && !ours; i++)
				ours = len - 66 == strlen(o->f[i].path) &&
				       !strncmp(l + 66, o->f[i].path, len - 66);
			if (!ours)
				strbuf_addf(&man, "%.*s\n", (int)len, l);
			l = nl ? nl + 1 : l + len;
		}
	}
	strbuf_release(&old);
	if (write_file_atomic(mp, man.buf, man.len)) {
		*err = xasprintf("cannot write '%s': %s", mp, strerror(errno));
		free(mp);
		goto out;
	}
	free(mp);
	rc = 0;
out:
	strbuf_release(&man);
	return rc;
}

static char *default_name(const char *task_name)
{
	struct strbuf sb = STRBUF_INIT;
	const char *base = task_name ? strrchr(task_name, '/') : NULL;
	base = base ? base + 1 : task_name ? task_name : "kernel";
	if (!isalpha((unsigned char)*base))
		strbuf_addstr(&sb, "k");
	for (const char *p = base; *p && sb.len < 60; p++)
		strbuf_addch(&sb, isalnum((unsigned char)*p) ? tolower((unsigned char)*p) : '_');
	return strbuf_detach(&sb, NULL);
}

static int valid_name(const char *s)
{
	if (!s || !(isalpha((unsigned char)*s) || *s == '_') || strlen(s) > 60)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return 0;
	return 1;
}

static const char *run_arch(const struct run_history *h, char *buf, size_t len)
{
	json_t *c = h->run.config_json ? json_loads(h->run.config_json, 0, NULL) : NULL;
	const char *a = json_string_value(json_object_get(json_object_get(c, "agent"), "arch"));
	snprintf(buf, len, "%s", a && *a ? a : "sm_90a");
	json_decref(c);
	return buf;
}

/* The GPU the best node was evaluated on, from its runner report: "NVIDIA H200, cc 9.0". */
static void verified_device(const struct run_history *h, char *buf, size_t len)
{
	json_t *r = h->best_report ? json_loads(h->best_report, 0, NULL) : NULL;
	json_t *d = json_object_get(r, "device");
	const char *name = json_string_value(json_object_get(d, "name"));
	const char *cc = json_string_value(json_object_get(d, "cc"));
	snprintf(buf, len, "%s%s%s", name ? name : "", name && cc ? ", cc " : "", name && cc ? cc : "");
	if (r)
		json_decref(r);
}

/*
 * The files that make a module's kernel a drop-in for its Model: NAME_model.py (ModelNew, the
 * template export/model_new.py with the module's tensor list embedded) and NAME_reference.py (a
 * copy of the module file, which ModelNew subclasses). A module judged as a built-in op gets that
 * op's scalars (lowered, non-NULL), which need not be the module's numbers.
 */
#define MODULE_FILE_MAX (1 << 20)

static int module_files(struct outputs *out, const char *name, const struct module_desc *md,
			const struct task *lowered, const char *gencode, const char *cutlass,
			const char *note, char **err)
{
	struct strbuf sb = STRBUF_INIT;
	int rc = -1;
	int r = strbuf_read_file(&sb, md->file, MODULE_FILE_MAX);
	if (r) {
		*err = xasprintf(r == CG_INPUT_TOOBIG ? "module file '%s' is larger than 1 MiB"
						      : "cannot read module file '%s': %s; export needs it "
							"beside the kernel (restore it or export with --task FILE.py)",
				 md->file, strbuf_read_strerror(r, md->file));
		goto out;
	}
	char *f = xasprintf("%s_reference.py", name);
	strbuf_add(out_add(out, f), sb.buf, sb.len);
	free(f);

	strbuf_reset(&sb);
	module_desc_to_json(md, &sb);
	json_t *abi = json_loadb(sb.buf, sb.len, 0, NULL);
	if (!abi)
		BUG("module_desc_to_json wrote JSON jansson cannot read");
	if (lowered) {
		double v[TASK_MAX_SCALARS];
		const char *nm[TASK_MAX_SCALARS];
		int ns = task_scalars(lowered, v, nm);
		json_t *ls = json_array();
		for (int j = 0; j < ns; j++)
			json_array_append_new(ls, json_pack("{s:s, s:f}", "name", nm[j], "value", v[j]));
		json_object_set_new(abi, "lowered_scalars", ls);
	}
	char *js = json_dumps(abi, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(abi);
	if (!js)
		BUG("cannot serialize a module's tensor list");
	const struct embedded_file *e = embedded_find("export/model_new.py");
	if (!e)
		BUG("'export/model_new.py' is not embedded");
	/* {{ABI}} first (its JSON cannot hold a "{{" key of the template: names are checked
	 * identifiers and numbers), then the common keys */
	struct strbuf tmp = STRBUF_INIT;
	const char *hit = strstr(e->data, "{{ABI}}");
	if (!hit)
		BUG("export/model_new.py has no {{ABI}}");
	strbuf_add(&tmp, e->data, (size_t)(hit - e->data));
	strbuf_addstr(&tmp, js);
	strbuf_addstr(&tmp, hit + strlen("{{ABI}}"));
	free(js);
	f = xasprintf("%s_model.py", name);
	fill_template(out_add(out, f), tmp.buf, name, gencode, cutlass, note);
	free(f);
	strbuf_release(&tmp);
	rc = 0;
out:
	strbuf_release(&sb);
	return rc;
}

/* The module file of a run (its configuration's "module"), or NULL. Heap string. */
static char *run_module(const struct run_history *h)
{
	json_t *c = h->run.config_json ? json_loads(h->run.config_json, 0, NULL) : NULL;
	const char *m = json_string_value(json_object_get(c, "module"));
	char *r = m && *m ? xstrdup(m) : NULL;
	json_decref(c);
	return r;
}

static void arch_note(struct strbuf *note, const char *arch, const char *verified, const char *dev)
{
	if (!verified)
		strbuf_addf(note, "# %s: this kernel was exported without a run: cutegen has not judged it "
			    "here;\n# judge it first (cutegen eval KERNEL --task FILE.py --arch %s)",
			    arch, arch);
	else if (!strcmp(arch, verified))
		strbuf_addf(note, "# %s: the architecture the kernel was verified on%s%s%s", arch,
			    *dev ? " (" : "", dev, *dev ? ")" : "");
	else
		strbuf_addf(note, "# %s, as cutegen export --arch asked: the kernel was verified on %s%s%s%s, "
			    "NOT on %s;\n# judge it there before use (cutegen eval KERNEL --task TASK --arch %s)",
			    arch, verified, *dev ? " (" : "", dev, *dev ? ")" : "", arch, arch);
}

/* Checks the manifest and writes; see export_run. */
static int write_all(const struct export_opts *o, const struct outputs *out, char **err)
{
	struct strbuf sb = STRBUF_INIT;
	int rc = 0;
	if (!o->force && changed_files(o->out_dir, out, &sb)) {
		*err = xasprintf("export would overwrite files changed since cutegen wrote them in "
				 "'%s': %s; move them away, pick another --out, or give --force",
				 o->out_dir, sb.buf);
		rc = CG_USAGE;
	} else if (outputs_write(o->out_dir, out, err)) {
		rc = -1;
	}
	strbuf_release(&sb);
	return rc;
}

/* include/cutegen/kernel_abi.h and include/dlpack/dlpack.h (as this machine has it). */
static void add_headers(struct outputs *out)
{
	const struct embedded_file *e = embedded_find("include/cutegen/kernel_abi.h");
	if (!e)
		BUG("'include/cutegen/kernel_abi.h' is not embedded");
	strbuf_addstr(out_add(out, "include/cutegen/kernel_abi.h"), e->data);
	struct strbuf sb = STRBUF_INIT;
	if (!strbuf_read_file(&sb, "/usr/include/dlpack/dlpack.h", 1 << 20))
		strbuf_add(out_add(out, "include/dlpack/dlpack.h"), sb.buf, sb.len);
	strbuf_release(&sb);
}

/*
 * The module files without a C API: NAME.cu (the kernel as given), include/, NAME_model.py,
 * NAME_reference.py, export.json (the module's tensor list). For a module the built-in ops do
 * not cover, and for `cutegen export --kernel K.cu --task M.py`.
 */
static int module_export(const char *source, const struct module_desc *md, const char *name,
			 const char *arch, const char *gencode, const char *cutlass, const char *note,
			 const char *run_dir, long node, struct outputs *out, char **err)
{
	char *f = xasprintf("%s.cu", name);
	strbuf_addstr(out_add(out, f), source);
	free(f);
	add_headers(out);
	if (module_files(out, name, md, md->lowered, gencode, cutlass, note, err))
		return -1;
	struct strbuf sb = STRBUF_INIT;
	module_desc_to_json(md, &sb);
	json_t *abi = json_loadb(sb.buf, sb.len, 0, NULL);
	json_t *spec = json_pack("{s:s, s:s, s:s?, s:I, s:s, s:s, s:s, s:o}", "name", name, "module",
				 md->file, "run", run_dir, "node", (json_int_t)node, "arch", arch, "gencode",
				 gencode, "cutlass_include", cutlass, "abi", abi ? abi : json_null());
	char *js = spec ? json_dumps(spec, JSON_INDENT(2)) : NULL;
	json_decref(spec);
	if (js)
		strbuf_addf(out_add(out, "export.json"), "%s\n", js);
	free(js);
	strbuf_release(&sb);
	return 0;
}

int export_kernel_module(const char *source, const struct module_desc *md,
			 const struct export_opts *o, char **name_out, char **err)
{
	struct outputs out = { .n = 0 };
	struct strbuf note = STRBUF_INIT;
	char *name = o->name ? xstrdup(o->name) : default_name(md->name);
	char *cutlass = NULL;
	int rc = -1;
	if (name_out)
		*name_out = NULL;
	if (!valid_name(name)) {
		*err = xasprintf("export name '%s' is not a C identifier (letters, digits, '_')", name);
		goto out;
	}
	const char *arch = o->arch ? o->arch : "sm_90a";
	char gencode[96];
	if (build_parse_arch(arch, gencode, sizeof(gencode))) {
		*err = xasprintf("arch '%s' is not valid: use sm_XY with an optional a, e.g. sm_90a", arch);
		goto out;
	}
	if (o->verified_out)
		*o->verified_out = 1;
	arch_note(&note, arch, NULL, "");
	cutlass = o->cutlass_include ? xstrdup(o->cutlass_include) : build_find_cutlass_include();
	if (!cutlass)
		cutlass = xstrdup("");
	if (module_export(source, md, name, arch, gencode, cutlass, note.buf, NULL, -1, &out, err))
		goto out;
	rc = write_all(o, &out, err);
	if (!rc && name_out) {
		*name_out = name;
		name = NULL;
	}
out:
	outputs_release(&out);
	strbuf_release(&note);
	free(name);
	free(cutlass);
	return rc;
}

int export_run(const struct run_history *h, const struct export_opts *o, char **name_out,
	       char **err)
{
	struct outputs out = { .n = 0 };
	struct strbuf sb = STRBUF_INIT, note = STRBUF_INIT;
	struct task *t = NULL;
	struct module_desc *md = NULL;
	char *name = NULL, *cutlass = NULL, *module = run_module(h);
	int rc = -1;
	if (name_out)
		*name_out = NULL;
	if (!h->best_node || !h->best_node->source) {
		*err = xasprintf("run '%s' has no correct kernel to export (%zu nodes, none passed%s)",
				 h->dir, h->n, h->run.status ? "" : "");
		return -1;
	}
	char *derr = NULL;
	if (module && !o->kernel_only && reference_describe(module, &md, &derr))
		md = NULL; /* a module run: its tensor list, as ModelNew passes it, from its file */
	if (h->run.task_json)
		t = task_parse_json(h->run.task_json, strlen(h->run.task_json), "run.db", err);
	if (derr) {
		if (!t) { /* no built-in twin to export instead */
			free(*err);
			*err = xasprintf("exporting a module run describes its module again: %s", derr);
			free(derr);
			goto out;
		}
		/* a lowered module: the twin's files still can be written */
		if (o->note_out)
			*o->note_out = xasprintf("no ModelNew written: describing the module failed (%s)",
						 derr);
		free(derr);
	}
	if (!t) {
		if (!(md && !md->lowered))
			goto out; /* a task the store cannot give back */
		free(*err); /* a module no built-in op covers needs none */
		*err = NULL;
	}
	name = o->name ? xstrdup(o->name) : default_name(h->run.task_name);
	if (!valid_name(name)) {
		*err = xasprintf("export name '%s' is not a C identifier (letters, digits, '_')", name);
		goto out;
	}
	char archbuf[32], gencode[96], dev[160];
	const char *verified = run_arch(h, archbuf, sizeof(archbuf));
	const char *arch = o->arch ? o->arch : verified;
	if (build_parse_arch(arch, gencode, sizeof(gencode))) {
		*err = xasprintf("arch '%s' is not valid: use sm_XY with an optional a, e.g. sm_90a", arch);
		goto out;
	}
	verified_device(h, dev, sizeof(dev));
	arch_note(&note, arch, verified, dev);
	if (o->verified_out)
		*o->verified_out = !strcmp(arch, verified);

	const char *source = h->best_node->source;
	if (o->kernel_only) {
		/* the plain kernel, as verified: what `cutegen build` and `cutegen eval` take */
		char *f = xasprintf("%s.cu", name);
		strbuf_addstr(out_add(&out, f), source);
		free(f);
	} else if (md && (!md->lowered || !t)) {
		/* a module no built-in op covers: the kernel, ModelNew, no C API */
		cutlass = o->cutlass_include ? xstrdup(o->cutlass_include) : build_find_cutlass_include();
		if (!cutlass)
			cutlass = xstrdup("");
		if (module_export(source, md, name, arch, gencode, cutlass, note.buf, h->dir, h->best,
				  &out, err))
			goto out;
	} else {
		cutlass = o->cutlass_include ? xstrdup(o->cutlass_include) : build_find_cutlass_include();
		if (!cutlass)
			cutlass = xstrdup("");
		int ws = strstr(source, "cutegen_workspace_bytes") != NULL;
		struct shapes sh;
		shapes_init(&sh, t);
		char *f = xasprintf("%s.h", name);
		gen_header(out_add(&out, f), name, &sh, ws, h);
		free(f);
		f = xasprintf("%s.cu", name);
		gen_cu(out_add(&out, f), name, &sh, ws, source);
		free(f);
		f = xasprintf("%s_torch.cpp", name);
		gen_torch(out_add(&out, f), name, &sh, ws);
		free(f);
		static const char *const tmpl[][2] = {
			{ "export/CMakeLists.txt", "CMakeLists.txt" },
			{ "export/setup.py", "setup.py" },
			{ "export/example.py", "example.py" },
			{ "include/cutegen/kernel_abi.h", "include/cutegen/kernel_abi.h" },
		};
		for (size_t i = 0; i < sizeof(tmpl) / sizeof(tmpl[0]); i++) {
			const struct embedded_file *e = embedded_find(tmpl[i][0]);
			if (!e)
				BUG("'%s' is not embedded", tmpl[i][0]);
			fill_template(out_add(&out, tmpl[i][1]), e->data, name, gencode, cutlass,
				      note.buf);
		}
		/* dlpack.h as this machine has it, so the directory builds without libdlpack-dev */
		strbuf_reset(&sb);
		if (!strbuf_read_file(&sb, "/usr/include/dlpack/dlpack.h", 1 << 20))
			strbuf_add(out_add(&out, "include/dlpack/dlpack.h"), sb.buf, sb.len);
		task_to_json(t, out_add(&out, "task.json"));
		json_t *tensors = json_array(), *scalars = json_array();
		for (int i = 0; i < sh.nt; i++) {
			json_t *shape = json_array();
			for (int a = 0; a < sh.t[i].ndim; a++)
				json_array_append_new(shape, json_integer(sh.t[i].shape[a]));
			json_array_append_new(tensors, json_pack("{s:s, s:s, s:o, s:b}", "name",
								 sh.t[i].name, "dtype",
								 dtype_name(sh.t[i].dtype), "shape", shape,
								 "output", sh.t[i].is_output));
		}
		for (int j = 0; j < sh.ns; j++)
			json_array_append_new(scalars, json_pack("{s:s, s:f}", "name", sh.sname[j],
								 "value", sh.sval[j]));
		json_t *spec = json_pack("{s:s, s:s?, s:I, s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:b}",
					 "name", name, "task", h->run.task_name, "node",
					 (json_int_t)h->best, "arch", arch, "verified_arch", verified,
					 "verified_on", dev, "gencode", gencode, "cutlass_include",
					 cutlass, "tensors", tensors, "scalars", scalars, "workspace", ws);
		char *js = spec ? json_dumps(spec, JSON_INDENT(2)) : NULL;
		json_decref(spec);
		if (js)
			strbuf_addf(out_add(&out, "export.json"), "%s\n", js);
		free(js);
		/* a module judged as this built-in op: ModelNew too */
		if (md && module_files(&out, name, md, t, gencode, cutlass, note.buf, err))
			goto out;
	}
	strbuf_reset(&sb);
	if (!o->force && changed_files(o->out_dir, &out, &sb)) {
		*err = xasprintf("export would overwrite files changed since cutegen wrote them in "
				 "'%s': %s; move them away, pick another --out, or give --force",
				 o->out_dir, sb.buf);
		rc = CG_USAGE;
		goto out;
	}
	if (outputs_write(o->out_dir, &out, err))
		goto out;
	rc = 0;
	if (name_out) {
		*name_out = name;
		name = NULL;
	}
out:
	outputs_release(&out);
	strbuf_release(&sb);
	strbuf_release(&note);
	task_free(t);
	module_desc_free(md);
	free(module);
	free(name);
	free(cutlass);
	return rc;
}
