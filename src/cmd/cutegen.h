/*
 * What the subcommands share: exit codes, the command table's entries, global options.
 * Only cmd_*.c and main.c print to the user and choose exit codes; modules return errors.
 */
#ifndef CUTEGEN_H
#define CUTEGEN_H

#include "common/paths.h"
#include "common/version.h"

#include <stdio.h>

/* Exit codes (each command's help page in docs/cli/ says which it uses; docs/architecture.md
 * says how result codes become them: exit_status_for below). */
enum {
	EXIT_OK = 0,       /* the command did what was asked and the result is good */
	EXIT_VERDICT = 1,  /* it ran, but the verdict is negative (kernel wrong, run found nothing) */
	EXIT_USAGE = 2,    /* bad flags or arguments */
	EXIT_INPUT = 3,    /* bad input file: task, kernel, transcript, config */
	EXIT_ENV = 4,      /* something the machine lacks: nvcc, a GPU, a key, the runner */
	EXIT_EXTERNAL = 5, /* an outside service failed: the model server, ncu */
	EXIT_INTERNAL = 70, /* a bug in cutegen */
	EXIT_INTERRUPTED = 130 /* ^C: 128 + SIGINT */
};

/*
 * The one place that turns a result code of util/err.h (CG_*, extended codes too) into an exit
 * status: usage 2, input 3, rejected 1 (a verdict), env and io 4, external and timeout 5,
 * interrupted 130, internal and a plain failure (CG_ERROR) 70.
 */
int exit_status_for(int rc);

struct cmd_entry {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

/* The table in main.c. */
extern const struct cmd_entry cutegen_commands[];

struct build_opts;
struct build_result;
struct policy_report;
struct strbuf;
/*
 * Reads the kernel file and builds it (policy check, then nvcc through the cache): 0 when nvcc
 * ran (br->ok says whether it compiled), CG_REJECTED when the policy refused it (pol says
 * why), or another code of util/err.h after printing the error (CG_INPUT: the file is missing,
 * unreadable or too large; exit_status_for() gives the exit status).
 */
int build_kernel_file(const char *kernel, const struct build_opts *bo, struct strbuf *src,
		      struct policy_report *pol, struct build_result *br);

/* 0 when arch is NULL or a known sm_XY[a|f]; else prints the usage error and returns -1. */
int check_arch_option(const char *arch);

/* Prints the help page of `name` (docs/cli/NAME.txt, embedded) to stdout; -1 if none. */
int print_help_page(const char *name);

/* error: and warning: to stderr, in the house format: lower case, the thing named in quotes,
 * what to do (docs/architecture.md, "Errors"). */
void error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The message of the last error() (cut at 1 KiB), for --json outputs; "" before any. */
const char *error_last(void);

int cmd_help(int argc, char **argv);
int cmd_version(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_tasks(int argc, char **argv);
int cmd_builtin(int argc, char **argv);
int cmd_task(int argc, char **argv);
int cmd_build(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_llm(int argc, char **argv);
int cmd_profile(int argc, char **argv);
int cmd_docs(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_resume(int argc, char **argv);
int cmd_runs(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_suite(int argc, char **argv);
int cmd_suite_worker(int argc, char **argv);
int cmd_completion(int argc, char **argv);

struct strbuf;
/* The man page cutegen(1), from the command table and the help pages, in roff. */
void print_man_page(const struct cmd_entry *table, FILE *to);
/* Appends the completion script for shell ("bash" or "zsh") to out; -1 for another shell. */
int completion_script(const struct cmd_entry *table, const char *shell, struct strbuf *out);

#endif
