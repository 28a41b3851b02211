/*
 * The run store: one SQLite database per run directory (RUN_DIR/run.db) holding the run (task,
 * configuration, budgets, status), every node the agent produced (one candidate kernel with its
 * verdict, timings and costs), every model call, and content-addressed blobs (sources, compile
 * logs, runner reports, prompts, feedback). docs/store.md documents the schema.
 *
 * Durability: WAL journal; each node (its blobs, its row, its model call, the run's counters) is
 * written in one transaction, so a run killed at any point (SIGKILL included) leaves a database
 * that opens and holds every node that completed. Not for: deciding anything (agent.c) or
 * printing (cmd_*).
 *
 * One writer at a time: a store opened to write (STORE_CREATE, STORE_EXISTING) holds an
 * exclusive flock(2) on RUN_DIR/run.lock (which holds the writer's pid) until store_close, and
 * a second writer, in this process or another, is refused at once. The kernel drops the lock
 * when the process ends, however it ends. Readers (STORE_READONLY) take no lock and never write.
 *
 * Usage:
 *   1. struct store *s = store_open(run_dir, STORE_CREATE, &err)  (STORE_EXISTING to resume,
 *      STORE_READONLY to inspect);
 *   2. a new run: store_run_begin(s, &run, &err); a resumed one: store_run_get(s, &run, &err);
 *   3. per node: store_add_node(s, &node, &call, &err) (node->id is filled in);
 *      store_nodes(s, &nodes, &n, &err) reads them back (for resume and reports);
 *   4. store_run_finish(s, status, reason, best_node, &err); store_close(s).
 * Every function returns 0 or -1 with a heap message in *err (the caller frees it).
 */
#ifndef CUTEGEN_STORE_H
#define CUTEGEN_STORE_H

#include <stddef.h>

/* The schema this build writes; older databases are migrated on open, newer ones refused. */
#define STORE_SCHEMA_VERSION 5

enum { STORE_CREATE = 1, STORE_EXISTING = 2, STORE_READONLY = 3 };

struct store;

/*
 * Opens RUN_DIR/run.db; NULL with a heap message in *err when it cannot.
 *   STORE_CREATE   makes the directory and a fresh database, and takes the run's lock. It
 *                  refuses a directory that already holds a run, and an existing directory
 *                  that holds files but no run.db (it never writes among files of the user's).
 *   STORE_EXISTING (resume) requires a run, takes the run's lock, migrates an older schema.
 *   STORE_READONLY (show, report, runs, export) requires a run and opens run.db read-only: no
 *                  lock, no schema made, nothing written (an older schema is migrated in a
 *                  private copy in memory). Its write functions fail.
 * An empty database (no schema), one whose meta table lost its schema version (its rows were
 * deleted) or a newer schema is refused with a message saying so, never rewritten; a lock
 * held by another writer is refused naming its pid.
 */
struct store *store_open(const char *run_dir, int mode, char **err);
/* Closes the database and drops the run's lock. NULL is a no-op. */
void store_close(struct store *s);
/* 1 when a write failed because the disk or the file size limit was full (SQLITE_FULL,
 * ENOSPC, EFBIG, EDQUOT): what committed is intact; free space and resume. */
int store_disk_full(const struct store *s);
/* The kind of the last failure of a function on s, as a code of util/err.h: CG_OK when none
 * failed, CG_INPUT when the database is damaged (not a database, corrupt, a row missing),
 * CG_IO when it could not be read or written (locked by another program, read-only, disk
 * full, an I/O error). Commands turn it into the exit status (exit_status_for). */
int store_error_code(const struct store *s);
/* 1 when the last failure was SQLite's "database is locked": another program (a sqlite3
 * shell, a backup) held run.db past the busy timeout. */
int store_busy(const struct store *s);
/* The database's path (owned by s). */
const char *store_path(const struct store *s);
/* The schema version of the open database (STORE_SCHEMA_VERSION after a successful open). */
int store_schema_version(struct store *s);

/* The run's one row. Strings are heap copies owned by the struct (store_run_release). */
struct store_run {
	char *task_name;
	char *task_json;     /* canonical task (task_to_json) */
	char *config_json;   /* the model configuration used (no keys) and the agent options */
	char *budgets_json;  /* {"iters", "fix_attempts", "max_tokens_total", "max_cost", "max_wall"} */
	char *status;        /* running | done | stopped | failed | interrupted */
	char *stop_reason;   /* why it ended, in words; NULL while running */
	char *cutegen_version;
	double started, finished; /* unix seconds; finished 0 while running */
	long best_node;      /* 0 = none yet */
	int resumes;         /* how many times `cutegen resume` continued it */
	/* the work of nodes cut short by an environment error (no node row holds it): seconds in
	 * all, of the model, of compiling (ahead and its own) and of evaluating; compiles made */
	double cut_s, cut_llm_s, cut_compile_s, cut_eval_s;
	int cut_compiles;
	/* `cutegen run --torch`: the best kernel judged against PyTorch eager and torch.compile,
	 * as JSON ({"node", "ms", "eager_ms", "compile_ms", "compile_mode", "torch",
	 * "speedup_vs_torch", "speedup_vs_torch_compile", "error", "compile_error"}: docs/store.md);
	 * NULL when the run was not asked for them (or has not ended yet) */
	char *torch_json;
};

void store_run_release(struct store_run *r);

/* Writes the run row (status "running"). */
int store_run_begin(struct store *s, const struct store_run *r, char **err);
int store_run_get(struct store *s, struct store_run *out, char **err);
/* The PyTorch figures of torch_json read back (a transparent value; no heap). Numbers < 0 are
 * unknown; asked is 0 when torch_json is NULL; error says why there is no eager figure,
 * compile_error why there is no torch.compile one ("" when there is). */
struct store_torch {
	int asked;
	double ms, eager_ms, compile_ms, speedup_eager, speedup_compile;
	char torch[32], compile_mode[32], error[640], compile_error[640];
};
void store_torch_parse(const char *torch_json, struct store_torch *t);
/* Stores the run's PyTorch figures (torch_json above; NULL clears them). */
int store_run_set_torch(struct store *s, const char *torch_json, char **err);
/* Sets status "running" again, counts a resume, and replaces the budgets (NULL = keep). */
int store_run_resumed(struct store *s, const char *budgets_json, char **err);
/* The time of a node cut short (stopped by an environment error before it was stored). */
struct store_cut {
	double total_s, llm_s, compile_s, eval_s;
	int compiles;
};
/* Adds c to the run's cut_* figures and its wall time. */
int store_run_add_cut(struct store *s, const struct store_cut *c, char **err);
int store_run_finish(struct store *s, const char *status, const char *stop_reason, long best_node,
		     char **err);

/*
 * One node. It owns its strings, one rule both ways: they are heap strings (NULL = none),
 * freed by store_node_release. store_add_node reads them and leaves them to the caller;
 * store_nodes fills heap copies (compile_log, report, prompt and profile are not loaded back:
 * their sha256 fields say where they are). The verdict is a name of common/verdict.h.
 */
/* A node's message is one line of at most this many bytes; a longer one is cut after its last
 * whole word that fits, with "..." (older cutegens cut it here mid-word). */
#define NODE_MESSAGE_MAX 240

struct store_node {
	long id;             /* filled by store_add_node: 1, 2, ... */
	int iteration;       /* 1-based count of nodes, as the budget counts them */
	int stage;           /* stage index in the workload's stage machine */
	int step;            /* optimization step within the run (a step = a change plus its fixes) */
	int attempt;         /* 0 = the step's first try, 1.. = fix attempts */
	long parent;         /* node whose source this one started from; 0 = none */
	char *kind;          /* seed | generate | fix | optimize */
	char *verdict;       /* pass, compile_error, policy, bad_reply, incorrect, ... */
	char *outcome;       /* what the agent did with it: best, kept, slower, failed, ... */
	char *message;       /* one line for humans: the verdict's gist */
	char *change;        /* what the model said it changed (its "Change:" line), or NULL */
	char *source;        /* the candidate (blob); NULL when the reply gave none */
	char *feedback;      /* what the next prompt tells the model about this node (blob) */
	char *compile_log;   /* (blob) */
	char *report_json;   /* the runner report (blob) */
	char *prompt;        /* the user prompt that produced it (blob) */
	char *profile;       /* the Nsight Compute summary taken while this node was made (of the
				best kernel then; blob), or NULL */
	char source_sha[65], feedback_sha[65], compile_log_sha[65], report_sha[65], prompt_sha[65];
	char profile_sha[65];
	double llm_s, compile_s, eval_s, evaluator_s, profile_s, total_s;
	double compile_ahead_s; /* wall of the compiles made ahead of it, in parallel (builtin
				   walks: a stage's candidates; later nodes find them cached) */
	double ms, speedup, roofline_fraction; /* < 0 = unknown */
	long tokens_in, tokens_out;
	double cost_usd;
	double created;      /* unix seconds */
};

void store_node_release(struct store_node *n);

/* One model call (for the llm_calls table); strings are read, not taken. */
struct store_llm_call {
	const char *request_json, *response_raw, *reply_text, *model, *stop, *error;
	long in_tokens, out_tokens, cached_tokens;
	long cache_write_tokens; /* the part of in_tokens written to the prompt cache */
	double cost_usd, seconds;
	int attempts;
};

/* Writes the node (id filled in), its blobs and its model call (call may be NULL) in one
 * transaction. */
int store_add_node(struct store *s, struct store_node *n, const struct store_llm_call *call,
		   char **err);
/* A model call that produced no node (the backend failed); node column NULL. */
int store_add_call(struct store *s, const struct store_llm_call *call, char **err);
/* The prompt tokens of all model calls that the provider served from its prompt cache. */
long store_cached_tokens(struct store *s);
/* Every node in id order; *out is a heap array freed with store_nodes_free. */
int store_nodes(struct store *s, struct store_node **out, size_t *n, char **err);
void store_nodes_free(struct store_node *nodes, size_t n);

/* Stores content (once per sha256), writing its hex digest into sha. */
int store_put_blob(struct store *s, const char *kind, const void *data, size_t len,
		   char sha[65], char **err);
/* A blob's content as a heap NUL-terminated string (*len its size), or NULL when absent. */
char *store_get_blob(struct store *s, const char *sha, size_t *len);

#endif
