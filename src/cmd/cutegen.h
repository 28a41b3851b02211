/*
 * What the subcommands share: exit codes, the command table's entries, global options.
 * Only cmd_*.c and main.c print to the user and choose exit codes; modules return errors.
 */
#ifndef CUTEGEN_H
#define CUTEGEN_H

#include "common/paths.h"
#include "common/version.h"
#include "eval/build.h"
#include "eval/policy.h"
#include "util/strbuf.h"

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

/* How eval and profile build a kernel file (NULL, 0: the defaults of eval/build.h). */
struct kernel_build {
	const char *arch, *cache_dir;
	int no_cache;
	double deadline_s;
};

/*
 * Reads the kernel file and builds it (policy check, then nvcc through the cache): 0 when nvcc
 * ran (br->ok says whether it compiled), CG_REJECTED when the policy refused it (pol says
 * why), or another code of util/err.h after printing the error (CG_INPUT: the file is missing,
 * unreadable or too large; exit_status_for() gives the exit status).
 */
int build_kernel_file(const char *kernel, const struct kernel_build *kb, struct strbuf *src,
		      struct policy_report *pol, struct build_result *br);


/* The flags `cutegen eval` and `cutegen profile` share. */
struct kernel_flags {
	const char *task, *so;
	struct kernel_build build;    /* --arch, --cache-dir, --no-cache, --compile-deadline */
	int json, device, keep_scratch;
	double deadline;
	int modules;                  /* the command judges modules that are not lowered too
					 (kernel_job.module) */
};
struct opt;
/*
 * Parses argv (util/opt.h) for the shared flags and the command's own (extra, nextra); *np
 * gets the count of positional arguments. 0, or -1 after printing the error ("see 'cutegen
 * help CMD'"): the command exits EXIT_USAGE.
 */
int kernel_flags_parse(int argc, char **argv, const struct opt *extra, int nextra,
		       struct kernel_flags *f, int *np, const char *cmd);

/*
 * What eval and profile judge: the task, and the kernel file built into a library unless one
 * is given (--so).
 *   1. struct kernel_job kj = KERNEL_JOB_INIT;
 *   2. rc = kernel_job_prepare(&kj, &flags, kernel): CG_OK when there is something to judge
 *      (kj.so_path set, or kj.br.ok == 0: it does not compile, kj.txt says why), CG_REJECTED
 *      when the policy refused it (kj.txt says why), another code after printing the error
 *      (CG_INPUT with kj.task NULL: the task; with kj.task set: the kernel file);
 *   3. kernel_job_release(&kj).
 */
struct module_desc;
struct kernel_job {
	struct task *task;            /* NULL for a module that is not lowered: then md */
	struct module_desc *module;   /* a module's description (flags.modules only) */
	struct strbuf src, txt;  /* the kernel's source; what the policy or nvcc said of it */
	struct policy_report pol;
	struct build_result br;
	const char *so_path;     /* the library to run: --so, or the build's; NULL if none */
};
#define KERNEL_JOB_INIT { NULL, NULL, STRBUF_INIT, STRBUF_INIT, POLICY_REPORT_INIT, BUILD_RESULT_INIT, \
			  NULL }
int kernel_job_prepare(struct kernel_job *kj, const struct kernel_flags *f, const char *kernel);
void kernel_job_release(struct kernel_job *kj);

/* 0 when arch is NULL or a known sm_XY[a|f]; else prints the usage error and returns -1. */
int check_arch_option(const char *arch);

/* Without $CUTEGEN_PYTHON (or --python), sets it from the config file's top-level key
 * "python" when there is one (docs/tasks.md, "The reference process"). A file that does not
 * parse is left to the commands that read it to report. */
void cli_python_from_config(void);
/* Warns of a setting in the environment that is no value of its kind (the modules read it
 * and use their default): $CUTEGEN_CALL_LIMIT, $CUTEGEN_EVAL_HANG_FLOOR. */
void cli_check_env(void);

struct task;
/*
 * The task a command judges, from a built-in name, a JSON file or a module (.py, through the
 * reference process: eval/reference.h). A module lowered to a built-in op gives that op's task
 * (a note on stderr says so unless quiet); a module that is not lowered, or any error, prints
 * the error and gives NULL with a code of util/err.h in *code (CG_ENV, exit 4, for a module
 * that is not lowered: only `eval` judges those, through cli_task_load_any). The caller
 * frees the task.
 */
struct task *cli_task_load(const char *spec, int quiet, int *code);
/* As cli_task_load, but a module that is not lowered gives NULL with its description in *md
 * (the caller frees it: module_desc_free) for the evaluator (eval_opts.module). */
struct task *cli_task_load_any(const char *spec, int quiet, struct module_desc **md, int *code);

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
struct llm_config;
struct strbuf;
/*
 * doctor's picture of the model backends: one line per backend, configured or not, what it
 * would use or what to set ("openai      configured: model gpt-5 at https://..., key in
 * OPENAI_API_KEY"). Never a key. cfg NULL = the config file and environment.
 */
void doctor_describe_backends(const struct llm_config *cfg, struct strbuf *out);
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
