/* The Nsight Compute CSV parser; see ncu_csv.h. */
#include "eval/ncu_csv.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- records ---------------------------------------------------------------------------- */

struct row {
	char **f;
	size_t nr, alloc;
};

static void row_clear(struct row *r)
{
	for (size_t i = 0; i < r->nr; i++)
		free(r->f[i]);
	r->nr = 0;
}

static void row_release(struct row *r)
{
	row_clear(r);
	free(r->f);
	r->f = NULL;
	r->alloc = 0;
}

struct cursor {
	const char *s;
	size_t len, pos;
	long line; /* 1-based line of pos, for messages */
};

/* Skips to the start of the next line. */
static void skip_line(struct cursor *c)
{
	while (c->pos < c->len && c->s[c->pos] != '\n')
		c->pos++;
	if (c->pos < c->len) {
		c->pos++;
		c->line++;
	}
}

/*
 * Reads one record starting at c->pos (which is at a '"'). Returns 1 with fields in r, 0 at a
 * record that breaks a cap or never closes its quote (r is cleared; c->pos moves past the line),
 * -1 for an unterminated quote at the end of the text.
 */
static int read_record(struct cursor *c, struct row *r)
{
	struct strbuf fb = STRBUF_INIT;
	int ok = 1;
	row_clear(r);
	fb.cap = NCU_CSV_MAX_FIELD;
	for (;;) {
		strbuf_reset(&fb);
		int over = 0;
		if (c->pos < c->len && c->s[c->pos] == '"') {
			c->pos++;
			for (;;) {
				if (c->pos >= c->len) {
					strbuf_release(&fb);
					row_clear(r);
					return -1;
				}
				char ch = c->s[c->pos++];
				if (ch == '"') {
					if (c->pos < c->len && c->s[c->pos] == '"') {
						c->pos++;
					} else {
						break;
					}
				} else if (ch == '\n') {
					c->line++;
				}
				if (!over && strbuf_addch(&fb, ch))
					over = 1;
			}
		}
		/* unquoted text, or junk after a closing quote: taken up to the next separator */
		while (c->pos < c->len && c->s[c->pos] != ',' && c->s[c->pos] != '\n') {
			char ch = c->s[c->pos++];
			if (ch != '\r' && !over && strbuf_addch(&fb, ch))
				over = 1;
		}
		if (over || r->nr >= NCU_CSV_MAX_FIELDS)
			ok = 0;
		else {
			ALLOC_GROW(r->f, r->nr + 1, r->alloc);
			r->f[r->nr++] = xstrndup(fb.buf, fb.len);
		}
		if (c->pos >= c->len)
			break;
		if (c->s[c->pos] == '\n') {
			c->pos++;
			c->line++;
			break;
		}
		c->pos++; /* ',' */
	}
	strbuf_release(&fb);
	if (!ok)
		row_clear(r);
	return ok;
}

/* Moves c to the next line that starts a CSV record (a '"'); 0 when there is none. */
static int next_csv_line(struct cursor *c)
{
	while (c->pos < c->len) {
		size_t p = c->pos;
		while (p < c->len && (c->s[p] == ' ' || c->s[p] == '\t' || c->s[p] == '\r'))
			p++;
		if (p < c->len && c->s[p] == '"') {
			c->pos = p;
			return 1;
		}
		skip_line(c);
	}
	return 0;
}

/* ---- numbers and units ------------------------------------------------------------------- */

int ncu_parse_number(const char *s, double *out)
{
	char buf[128];
	size_t n = 0;
	int digits = 0;
	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '+' || *s == '-')
		buf[n++] = *s++;
	for (; *s && n < sizeof(buf) - 1; s++) {
		if (isdigit((unsigned char)*s)) {
			buf[n++] = *s;
			digits++;
		} else if (*s == ',') {
			/* a thousands separator sits between a digit and three digits */
			if (!digits || !isdigit((unsigned char)s[1]) || !isdigit((unsigned char)s[2]) ||
			    !isdigit((unsigned char)s[3]) || isdigit((unsigned char)s[4]))
				return -1;
		} else if (*s == '.' || *s == 'e' || *s == 'E' ||
			   ((*s == '+' || *s == '-') && n && (buf[n - 1] == 'e' || buf[n - 1] == 'E'))) {
			buf[n++] = *s;
		} else {
			break;
		}
	}
	while (*s == ' ' || *s == '\t')
		s++;
	if (*s || !digits || n >= sizeof(buf) - 1)
		return -1;
	buf[n] = 0;
	char *end;
	double v = strtod(buf, &end);
	if (*end || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

const char *ncu_unit_to_base(const char *unit, double *value)
{
	static const struct {
		const char *unit, *base;
		double scale;
	} tab[] = {
		{ "nsecond", "nsecond", 1 }, { "usecond", "nsecond", 1e3 },
		{ "msecond", "nsecond", 1e6 }, { "second", "nsecond", 1e9 },
		{ "byte", "byte", 1 }, { "Kbyte", "byte", 1e3 }, { "Mbyte", "byte", 1e6 },
		{ "Gbyte", "byte", 1e9 }, { "Tbyte", "byte", 1e12 }, { "KB", "byte", 1024 },
		{ "KiB", "byte", 1024 }, { "MiB", "byte", 1048576.0 },
		{ "byte/second", "byte/second", 1 }, { "Kbyte/second", "byte/second", 1e3 },
		{ "Mbyte/second", "byte/second", 1e6 }, { "Gbyte/second", "byte/second", 1e9 },
		{ "Tbyte/second", "byte/second", 1e12 },
		{ "cycle", "cycle", 1 }, { "Kcycle", "cycle", 1e3 }, { "Mcycle", "cycle", 1e6 },
		{ "hz", "hz", 1 }, { "Khz", "hz", 1e3 }, { "Mhz", "hz", 1e6 }, { "Ghz", "hz", 1e9 },
		{ "cycle/nsecond", "hz", 1e9 }, { "cycle/usecond", "hz", 1e6 },
		{ "cycle/second", "hz", 1 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(tab); i++)
		if (!strcmp(unit, tab[i].unit)) {
			*value *= tab[i].scale;
			return tab[i].base;
		}
	return unit;
}

/* ---- the report --------------------------------------------------------------------------- */

void ncu_report_release(struct ncu_report *rep)
{
	for (size_t i = 0; i < rep->nr; i++) {
		struct ncu_kernel *k = &rep->kernels[i];
		for (size_t j = 0; j < k->nr; j++) {
			free(k->metrics[j].name);
			free(k->metrics[j].unit);
			free(k->metrics[j].text);
		}
		free(k->metrics);
		free(k->name);
		free(k->block);
		free(k->grid);
	}
	free(rep->kernels);
	struct ncu_report z = NCU_REPORT_INIT;
	*rep = z;
}

const struct ncu_metric *ncu_kernel_metric(const struct ncu_kernel *k, const char *name)
{
	for (size_t i = 0; i < k->nr; i++)
		if (!strcmp(k->metrics[i].name, name))
			return &k->metrics[i];
	return NULL;
}

double ncu_kernel_value(const struct ncu_kernel *k, const char *name, double dflt)
{
	const struct ncu_metric *m = ncu_kernel_metric(k, name);
	return m && m->has_value ? m->value : dflt;
}

static void add_metric(struct ncu_report *rep, struct ncu_kernel *k, const char *name,
		       const char *unit, const char *text)
{
	if (ncu_kernel_metric(k, name))
		return; /* first one wins (details pages repeat a few names across sections) */
	if (k->nr >= NCU_CSV_MAX_METRICS) {
		rep->truncated = 1;
		return;
	}
	ALLOC_GROW(k->metrics, k->nr + 1, k->alloc);
	struct ncu_metric *m = &k->metrics[k->nr++];
	double v = 0;
	m->has_value = ncu_parse_number(text, &v) == 0;
	const char *u = unit ? unit : "";
	if (m->has_value)
		u = ncu_unit_to_base(u, &v);
	m->value = m->has_value ? v : 0;
	m->name = xstrdup(name);
	m->unit = xstrdup(u);
	m->text = xstrdup(text);
}

/* The kernel ID in ncu's ID column, or `otherwise` when there is none or it is out of range
 * (untrusted text: casting an out-of-range double to long is undefined behaviour). */
static long kernel_id(const char *id, long otherwise)
{
	double v;
	return id && ncu_parse_number(id, &v) == 0 && v >= 0 && v < 1e15 ? (long)v : otherwise;
}

static struct ncu_kernel *new_kernel(struct ncu_report *rep, const char *id, const char *name,
				     const char *block, const char *grid)
{
	if (rep->nr >= NCU_CSV_MAX_KERNELS) {
		rep->truncated = 1;
		return NULL;
	}
	ALLOC_GROW(rep->kernels, rep->nr + 1, rep->alloc);
	struct ncu_kernel *k = &rep->kernels[rep->nr++];
	memset(k, 0, sizeof(*k));
	k->id = kernel_id(id, (long)rep->nr - 1);
	k->name = xstrdup(name ? name : "");
	k->block = xstrdup(block ? block : "");
	k->grid = xstrdup(grid ? grid : "");
	return k;
}

/* Columns of the raw page that describe the launch rather than measure it. */
static int is_launch_column(const char *h)
{
	static const char *const cols[] = {
		"ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Kernel Time",
		"Context", "Stream", "Block Size", "Grid Size", "Device", "CC", "Function Name",
		"Demangled Name", "Estimated Speedup", "Estimated Speedup Type",
	};
	for (size_t i = 0; i < ARRAY_SIZE(cols); i++)
		if (!strcmp(h, cols[i]))
			return 1;
	return 0;
}

static int col_index(const struct row *h, const char *name)
{
	for (size_t i = 0; i < h->nr; i++)
		if (!strcmp(h->f[i], name))
			return (int)i;
	return -1;
}

static const char *field(const struct row *r, int i)
{
	return i >= 0 && (size_t)i < r->nr ? r->f[i] : NULL;
}

/*
 * Display names of the details page that the summarizer reads, with their raw metric names.
 * `section` NULL matches any section; "Memory Throughput" means different things in the
 * Speed Of Light section (%) and the Memory Workload Analysis section (byte/second).
 */
static const struct {
	const char *section, *metric, *raw;
} details_map[] = {
	{ "Speed Of Light", "Duration", "gpu__time_duration.sum" },
	{ "Speed Of Light", "Compute (SM) Throughput", "sm__throughput.avg.pct_of_peak_sustained_elapsed" },
	{ "Speed Of Light", "Memory Throughput", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed" },
	{ "Speed Of Light", "DRAM Throughput", "dram__throughput.avg.pct_of_peak_sustained_elapsed" },
	{ "Speed Of Light", "L1/TEX Cache Throughput", "l1tex__throughput.avg.pct_of_peak_sustained_active" },
	{ "Speed Of Light", "L2 Cache Throughput", "lts__throughput.avg.pct_of_peak_sustained_elapsed" },
	{ NULL, "Achieved Occupancy", "sm__warps_active.avg.pct_of_peak_sustained_active" },
	{ NULL, "Theoretical Occupancy", "sm__maximum_warps_per_active_cycle_pct" },
	{ NULL, "Block Limit Registers", "launch__occupancy_limit_registers" },
	{ NULL, "Block Limit Shared Mem", "launch__occupancy_limit_shared_mem" },
	{ NULL, "Block Limit Warps", "launch__occupancy_limit_warps" },
	{ NULL, "Block Limit SM", "launch__occupancy_limit_blocks" },
	{ NULL, "Registers Per Thread", "launch__registers_per_thread" },
	{ NULL, "Static Shared Memory Per Block", "launch__shared_mem_per_block_static" },
	{ NULL, "Dynamic Shared Memory Per Block", "launch__shared_mem_per_block_dynamic" },
	{ NULL, "Block Size", "launch__block_size" },
	{ NULL, "Grid Size", "launch__grid_size" },
	{ NULL, "Waves Per SM", "launch__waves_per_multiprocessor" },
};

static char *details_name(const char *section, const char *metric)
{
	for (size_t i = 0; i < ARRAY_SIZE(details_map); i++)
		if (!strcmp(metric, details_map[i].metric) &&
		    (!details_map[i].section || strstr(section, details_map[i].section)))
			return xstrdup(details_map[i].raw);
	return xasprintf("%s: %s", section, metric);
}

int ncu_csv_parse(const char *text, size_t len, struct ncu_report *rep, char **err)
{
	struct cursor c = { text, len, 0, 1 };
	struct row hdr = { 0 }, units = { 0 }, r = { 0 };
	int rc = -1, have_units = 0;
	long bad_rows = 0, good_rows = 0;
	*err = NULL;
	if (len > NCU_CSV_MAX_BYTES) {
		*err = xasprintf("ncu output is larger than %u bytes", NCU_CSV_MAX_BYTES);
		return -1;
	}
	if (memchr(text, 0, len)) {
		/* binary: parse only the text before the first NUL */
		len = (size_t)((const char *)memchr(text, 0, len) - text);
		c.len = len;
		rep->truncated = 1;
	}

	/* the header: the first record whose first field is "ID" and that names the kernel */
	while (next_csv_line(&c)) {
		int got = read_record(&c, &r);
		if (got < 0)
			break;
		if (got && r.nr > 1 && !strcmp(r.f[0], "ID") && col_index(&r, "Kernel Name") >= 0) {
			struct row t = hdr;
			hdr = r;
			r = t;
			break;
		}
	}
	if (!hdr.nr) {
		*err = xstrdup("no CSV table in the ncu output (no header row starting with \"ID\")");
		goto out;
	}
	int i_id = col_index(&hdr, "ID"), i_name = col_index(&hdr, "Kernel Name");
	int i_block = col_index(&hdr, "Block Size"), i_grid = col_index(&hdr, "Grid Size");
	int i_sec = col_index(&hdr, "Section Name"), i_met = col_index(&hdr, "Metric Name");
	int i_unit = col_index(&hdr, "Metric Unit"), i_val = col_index(&hdr, "Metric Value");
	rep->format = i_met >= 0 && i_val >= 0 ? NCU_FMT_DETAILS : NCU_FMT_RAW;

	while (next_csv_line(&c)) {
		long at = c.line;
		int got = read_record(&c, &r);
		if (got < 0) {
			if (!*err)
				*err = xasprintf("unterminated quoted field at line %ld", at);
			break;
		}
		if (!got || r.nr != hdr.nr) {
			bad_rows++;
			continue;
		}
		if (!strcmp(r.f[0], "ID")) { /* a repeated header (another table); same columns */
			have_units = 0;
			continue;
		}
		if (rep->format == NCU_FMT_RAW) {
			if (!have_units && !r.f[i_id][0]) {
				struct row t = units;
				units = r;
				r = t;
				have_units = 1;
				continue;
			}
			struct ncu_kernel *k = new_kernel(rep, field(&r, i_id), field(&r, i_name),
							  field(&r, i_block), field(&r, i_grid));
			if (!k)
				break;
			for (size_t j = 0; j < hdr.nr; j++)
				if (!is_launch_column(hdr.f[j]))
					add_metric(rep, k, hdr.f[j], have_units ? units.f[j] : "", r.f[j]);
			good_rows++;
		} else {
			const char *id = field(&r, i_id);
			struct ncu_kernel *k = NULL;
			long idn = kernel_id(id, -1);
			for (size_t j = rep->nr; j-- > 0;)
				if (rep->kernels[j].id == idn) {
					k = &rep->kernels[j];
					break;
				}
			if (!k)
				k = new_kernel(rep, id, field(&r, i_name), field(&r, i_block), field(&r, i_grid));
			if (!k)
				break;
			char *name = details_name(i_sec >= 0 ? r.f[i_sec] : "", r.f[i_met]);
			add_metric(rep, k, name, i_unit >= 0 ? r.f[i_unit] : "", r.f[i_val]);
			free(name);
			good_rows++;
		}
	}
	if (bad_rows)
		rep->truncated = 1;
	if (*err && !good_rows)
		goto out;
	if (!good_rows && bad_rows) {
		free(*err);
		*err = xasprintf("the ncu CSV table has %ld rows and none has the header's %zu columns",
				 bad_rows, hdr.nr);
		goto out;
	}
	free(*err);
	*err = NULL;
	rc = 0;
out:
	row_release(&hdr);
	row_release(&units);
	row_release(&r);
	return rc;
}
