/*
 * cutegen's entry point: global options and the subcommand table (in the style of git.c).
 * Each subcommand lives in cmd_NAME.c; the helpers they share (messages, help pages,
 * build_kernel_file) live in cli.c, the exit statuses in exit.c.
 */
#include "cmd/cutegen.h"
#include "common/embedded.h"
#include "util/strbuf.h"
#include "util/suggest.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

const struct cmd_entry cutegen_commands[] = {
	{ "help", cmd_help, "show help for cutegen or one of its commands" },
	{ "version", cmd_version, "print the version" },
	{ "doctor", cmd_doctor, "check nvcc, CUTLASS headers, GPUs, profilers and LLM backends" },
	{ "tasks", cmd_tasks, "list the built-in tasks (suites kb1, hopper and llm)" },
	{ "task", cmd_task, "show or check one task spec" },
	{ "build", cmd_build, "policy-check and compile one kernel with nvcc (cached)" },
	{ "eval", cmd_eval, "compile a kernel, run it against the trusted reference, time it" },
	{ "builtin", cmd_builtin, "show the builtin agent's kernel family for a task, or one candidate" },
	{ "run", cmd_run, "generate, test and refine one CuTe kernel for a task, in stages" },
	{ "resume", cmd_resume, "continue a killed or stopped run from its last complete node" },
	{ "runs", cmd_runs, "list run directories with their task, status and best speedup" },
	{ "show", cmd_show, "print the history of one run: every node, its verdict and speedup" },
	{ "report", cmd_report, "write an HTML page with charts, or a Markdown summary, of a run or suite" },
	{ "export", cmd_export, "write the best kernel of a run as a standalone .cu/.h, CMake and PyTorch" },
	{ "llm", cmd_llm, "send one prompt to the configured model and print the reply" },
	{ "profile", cmd_profile, "profile a kernel with Nsight Compute and summarize its bottleneck" },
	{ "suite", cmd_suite, "run every task of a suite: one worker per GPU, or a Slurm job array" },
	{ "suite-worker", cmd_suite_worker, "one Slurm array element of a suite (run by sbatch)" },
	{ "docs", cmd_docs, "build and search the index of CuTe/CUTLASS headers, examples and notes" },
	{ "completion", cmd_completion, "print a bash or zsh completion script" },
	{ NULL, NULL, NULL },
};

static void list_commands(FILE *to)
{
	fprintf(to, "usage: cutegen [--version|-V] [--help] [--python PATH] COMMAND [ARGS]\n\ncommands:\n");
	for (const struct cmd_entry *c = cutegen_commands; c->name; c++)
		fprintf(to, "   %-12s %s\n", c->name, c->summary);
	fprintf(to, "\n'cutegen help COMMAND' shows one command's options; 'cutegen help --man' "
		"prints the man page.\n");
}

static const struct cmd_entry *find_command(const char *name)
{
	for (const struct cmd_entry *c = cutegen_commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

/* " (did you mean 'eval'?)" for a mistyped command, "" when nothing is close; heap string */
static char *command_suggestion(const char *name)
{
	const char *names[64], *best[4];
	size_t n = 0;
	for (const struct cmd_entry *c = cutegen_commands; c->name && n < ARRAY_SIZE(names); c++)
		names[n++] = c->name;
	struct strbuf sb = STRBUF_INIT;
	suggest_format(&sb, "", best, suggest_similar(name, names, n, best, ARRAY_SIZE(best)));
	return strbuf_detach(&sb, NULL);
}

int cmd_help(int argc, char **argv)
{
	if (argc < 2) {
		list_commands(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--man")) {
		print_man_page(cutegen_commands, stdout);
		return EXIT_OK;
	}
	if (!find_command(argv[1])) {
		char *hint = command_suggestion(argv[1]);
		error("no command '%s'%s; 'cutegen help' lists them", argv[1], hint);
		free(hint);
		return EXIT_USAGE;
	}
	if (print_help_page(argv[1])) {
		error("no help page for '%s'", argv[1]);
		return EXIT_INTERNAL;
	}
	return EXIT_OK;
}

int cmd_completion(int argc, char **argv)
{
	struct strbuf sb = STRBUF_INIT;
	if (argc != 2 || completion_script(cutegen_commands, argv[1], &sb)) {
		error("usage: cutegen completion bash|zsh (prints the completion script for that "
		      "shell)");
		strbuf_release(&sb);
		return EXIT_USAGE;
	}
	fwrite(sb.buf, 1, sb.len, stdout);
	strbuf_release(&sb);
	return EXIT_OK;
}

int cmd_version(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("cutegen %s\n", CUTEGEN_VERSION);
	return EXIT_OK;
}

/* No other process of the user (a candidate kernel in the runner, a module's reference
 * process, an LLM command: each a child of cutegen) may read cutegen's memory through
 * /proc/PID/mem or attach to it: it holds API keys and the run's prompts (docs/containment.md).
 * Children are dumpable again after their execve. CUTEGEN_DUMPABLE=1 keeps cutegen
 * attachable, for a debugger. */
static void keep_memory_private(void)
{
	const char *d = getenv("CUTEGEN_DUMPABLE");
	if (!d || strcmp(d, "1"))
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

int main(int argc, char **argv)
{
	keep_memory_private();
	if (argc < 2) {
		list_commands(stderr);
		return EXIT_USAGE;
	}
	/* --python PATH (global, before the command): the python of module tasks' reference
	 * process; an environment variable, so that suites' child runs inherit it */
	while (argc >= 2 && (!strcmp(argv[1], "--python") || !strncmp(argv[1], "--python=", 9))) {
		const char *py = argv[1][8] == '=' ? argv[1] + 9 : argc >= 3 ? argv[2] : NULL;
		if (!py || !*py) {
			error("--python needs a path to a python3 with PyTorch");
			return EXIT_USAGE;
		}
		setenv("CUTEGEN_PYTHON", py, 1);
		int used = argv[1][8] == '=' ? 1 : 2;
		argv[used] = argv[0];
		argv += used;
		argc -= used;
	}
	if (argc < 2) {
		list_commands(stderr);
		return EXIT_USAGE;
	}
	cli_python_from_config();
	cli_check_env();
	const char *name = argv[1];
	if (!strcmp(name, "--version") || !strcmp(name, "-v") || !strcmp(name, "-V"))
		name = "version";
	else if (!strcmp(name, "--help") || !strcmp(name, "-h"))
		name = "help";
	else if (name[0] == '-') {
		error("unknown option '%s'; 'cutegen help' lists commands and options", name);
		return EXIT_USAGE;
	}
	const struct cmd_entry *c = find_command(name);
	if (!c) {
		char *hint = command_suggestion(name);
		error("'%s' is not a cutegen command%s; 'cutegen help' lists them", name, hint);
		free(hint);
		return EXIT_USAGE;
	}
	/* "cutegen CMD --help" is "cutegen help CMD" */
	for (int i = 2; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			if (print_help_page(c->name))
				list_commands(stdout);
			return EXIT_OK;
		}
	return c->fn(argc - 1, argv + 1);
}
