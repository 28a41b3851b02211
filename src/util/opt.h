/*
 * Command-line option parsing shared by every subcommand, so that bad flags get the same clear
 * errors everywhere. Accepts --name VALUE, --name=VALUE, -x VALUE, and "--" to end options;
 * options and positional arguments may mix.
 */
#ifndef CUTEGEN_OPT_H
#define CUTEGEN_OPT_H

/*
 * The _NONNEG and _POS types are INT or DOUBLE with a range opt_parse checks, naming the flag
 * and the value given: NONNEG is >= 0, POS is >= 1 for an INT and > 0 for a DOUBLE.
 */
enum opt_type {
	OPT_BOOL,
	OPT_STRING,
	OPT_INT,
	OPT_DOUBLE,
	OPT_INT_NONNEG,
	OPT_INT_POS,
	OPT_DOUBLE_NONNEG,
	OPT_DOUBLE_POS,
};

struct opt {
	const char *name;   /* long name without dashes, e.g. "json" */
	char short_name;    /* 0 = none */
	enum opt_type type;
	void *value;        /* int* for BOOL/INT*, const char** for STRING, double* for DOUBLE* */
};

/*
 * Parses argv[1..argc-1] (argv[0] is the command name). Positional arguments are moved, in
 * order, to the front of argv starting at argv[1]; *npos receives their count.
 * Returns 0, or -1 with a message in err (e.g. "unknown option '--foo'", "option '--deadline'
 * must not be negative (got \"-5\")"). An unknown long option gets the closest known name as a
 * suggestion when one is close ("(did you mean '--iters'?)").
 */
int opt_parse(int argc, char **argv, const struct opt *opts, int nopts, int *npos,
	      char *err, int errlen);

/*
 * The environment variable `name` as seconds: `dflt` when it is unset or empty. Returns 0 with
 * *v its value, or -1 with *v = dflt when it is not a number, is negative, or is 0 and
 * zero_ok is not set (the caller says so where it may print).
 */
int opt_env_seconds(const char *name, double dflt, int zero_ok, double *v);

#endif
