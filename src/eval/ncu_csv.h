/*
 * A parser for the CSV that Nsight Compute (`ncu --csv`) prints, in either of its two page
 * formats, into one per-kernel table of metrics. Separate from ncu.c (which runs ncu) so that it
 * can be unit-tested on recorded output and fuzzed: the input is untrusted child output.
 *
 *  - `--page raw` (what cutegen asks for): a header row "ID","Process ID",...,"Kernel Name",...,
 *    then one column per metric; the first row after it holds the units; then one row per
 *    profiled kernel launch.
 *  - `--page details` (the fallback, with --section ...): one row per metric, the columns
 *    "ID",...,"Kernel Name",...,"Section Name","Metric Name","Metric Unit","Metric Value".
 *    Metric names here are display names ("DRAM Throughput"); the ones the summarizer uses are
 *    mapped to their raw names (dram__throughput.avg.pct_of_peak_sustained_elapsed), the rest
 *    are kept as "Section Name: Metric Name".
 * Either way, lines that are not CSV (==PROF==, ==WARNING==, the profiled program's own output)
 * may come before, between and after the rows and are skipped. Quoted fields follow RFC 4180
 * ("" is a quote); numbers may carry thousands separators ("1,234.5"); "n/a" and empty values
 * are kept as text with no number. Values are scaled to base units (time in nsecond, sizes in
 * byte, rates in byte/second, cycles in cycle) so that --print-units auto and base read alike.
 * Not for: running ncu or judging the numbers (ncu.h).
 *
 * Usage:
 *   1. struct ncu_report rep = NCU_REPORT_INIT;
 *   2. if (ncu_csv_parse(text, len, &rep, &err)) { report err; free(err); }
 *   3. read rep.kernels[i] with ncu_kernel_value(); ncu_report_release(&rep).
 */
#ifndef CUTEGEN_NCU_CSV_H
#define CUTEGEN_NCU_CSV_H

#include <stddef.h>

/* Caps on untrusted input: past them the parse fails cleanly (or stops adding). */
#define NCU_CSV_MAX_BYTES (32u << 20)  /* the whole text */
#define NCU_CSV_MAX_FIELD (64u << 10)  /* one field (kernel names can be long templates) */
#define NCU_CSV_MAX_FIELDS 2048        /* columns per row */
#define NCU_CSV_MAX_KERNELS 4096       /* kernel launches kept */
#define NCU_CSV_MAX_METRICS 1024       /* metrics per kernel */

enum ncu_format { NCU_FMT_NONE = 0, NCU_FMT_RAW, NCU_FMT_DETAILS };

struct ncu_metric {
	char *name;    /* raw metric name, or "Section: Metric" for unmapped details rows */
	char *unit;    /* after scaling to base units ("nsecond", "byte", "%", ""...) */
	char *text;    /* the value as printed */
	double value;  /* scaled to `unit`; meaningful when has_value */
	int has_value; /* 0 for "n/a", empty or non-numeric values */
};

struct ncu_kernel {
	long id;           /* the "ID" column (launch number within the profile) */
	char *name;        /* "Kernel Name", possibly a demangled template */
	char *block, *grid;/* "Block Size", "Grid Size" as printed, e.g. "(128, 1, 1)" */
	struct ncu_metric *metrics;
	size_t nr, alloc;
};

struct ncu_report {
	enum ncu_format format;
	struct ncu_kernel *kernels;
	size_t nr, alloc;
	int truncated; /* some kernels or metrics were dropped at a cap */
};
#define NCU_REPORT_INIT { NCU_FMT_NONE, NULL, 0, 0, 0 }

/*
 * Parses text (need not be NUL-terminated) into rep (which must be NCU_REPORT_INIT or released).
 * Returns 0 when a CSV table was found, even one with no kernel rows (rep->nr == 0); -1 when
 * there is none or it is malformed past use, with *err (heap string, caller frees) saying why.
 * On -1, rep holds whatever was parsed before the problem; release it either way.
 */
int ncu_csv_parse(const char *text, size_t len, struct ncu_report *rep, char **err);
void ncu_report_release(struct ncu_report *rep);

/* The metric named `name` of kernel k, or NULL. */
const struct ncu_metric *ncu_kernel_metric(const struct ncu_kernel *k, const char *name);
/* Its numeric value, or dflt when absent or not numeric. */
double ncu_kernel_value(const struct ncu_kernel *k, const char *name, double dflt);

/*
 * Parses one printed number: optional sign, digits with optional thousands separators
 * ("1,234,567.5"), decimals, exponent. Surrounding blanks allowed. Returns 0 or -1 ("n/a", "",
 * text).
 */
int ncu_parse_number(const char *s, double *out);

/*
 * Scales a value printed in `unit` to base units: *value is multiplied and the base unit name
 * (static string) returned; units it does not know are returned unchanged.
 */
const char *ncu_unit_to_base(const char *unit, double *value);

#endif
