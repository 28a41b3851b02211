/*
 * The run store (see store.h; schema in docs/store.md). Plain SQLite: WAL journal,
 * synchronous=NORMAL (a power loss may lose the last transactions, a killed process loses
 * nothing that committed), foreign keys on, a busy timeout so a reader (`cutegen runs`) never
 * makes the writer fail. Schema changes go through the migrations[] table: migrations[v] takes
 * a database from version v to v+1, all of them inside one transaction.
 *
 * Writers lock the run (RUN_DIR/run.lock, flock) so that two processes never interleave nodes
 * in one run; SQLite's own locking only makes each transaction atomic. Readers open run.db with
 * SQLITE_OPEN_READONLY: inspecting a run never changes it, and works where the user may not
 * write (a run made by another user, a read-only copy).
 */
#include "store/store.h"
#include "util/err.h"
#include "util/fsutil.h"
#include "util/sha256.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/time.h>
#include <unistd.h>

struct store {
	sqlite3 *db;
	char *path;
	int full;    /* a write failed because the disk (or the file size limit) was full */
	int busy;    /* the last failure was "database is locked" */
	int code;    /* the kind of the last failure (util/err.h), CG_OK when none */
	int lock_fd; /* RUN_DIR/run.lock, flock()ed while open for writing; -1 for a reader */
};

static const char *const migrations[] = {
	/* 0 -> 1: the first schema */
	"CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);\n"
	"CREATE TABLE blobs (\n"
	"  sha256 TEXT PRIMARY KEY,\n"
	"  kind TEXT NOT NULL,\n"
	"  size INTEGER NOT NULL,\n"
	"  content BLOB NOT NULL\n"
	");\n"
	"CREATE TABLE runs (\n"
	"  id INTEGER PRIMARY KEY CHECK (id = 1),\n"
	"  task_name TEXT NOT NULL,\n"
	"  task_json TEXT NOT NULL,\n"
	"  config_json TEXT NOT NULL,\n"
	"  budgets_json TEXT NOT NULL,\n"
	"  status TEXT NOT NULL,\n"
	"  stop_reason TEXT,\n"
	"  cutegen_version TEXT NOT NULL,\n"
	"  started REAL NOT NULL,\n"
	"  finished REAL,\n"
	"  best_node INTEGER,\n"
	"  resumes INTEGER NOT NULL DEFAULT 0,\n"
	"  nodes INTEGER NOT NULL DEFAULT 0,\n"
	"  tokens_in INTEGER NOT NULL DEFAULT 0,\n"
	"  tokens_out INTEGER NOT NULL DEFAULT 0,\n"
	"  cost_usd REAL NOT NULL DEFAULT 0,\n"
	"  wall_s REAL NOT NULL DEFAULT 0\n"
	");\n"
	"CREATE TABLE nodes (\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  iteration INTEGER NOT NULL,\n"
	"  stage INTEGER NOT NULL,\n"
	"  step INTEGER NOT NULL,\n"
	"  attempt INTEGER NOT NULL,\n"
	"  parent INTEGER REFERENCES nodes(id),\n"
	"  kind TEXT NOT NULL CHECK (kind IN ('seed','generate','fix','optimize')),\n"
	"  verdict TEXT NOT NULL,\n"
	"  outcome TEXT NOT NULL,\n"
	"  message TEXT,\n"
	"  change TEXT,\n"
	"  source_sha TEXT REFERENCES blobs(sha256),\n"
	"  feedback_sha TEXT REFERENCES blobs(sha256),\n"
	"  compile_log_sha TEXT REFERENCES blobs(sha256),\n"
	"  report_sha TEXT REFERENCES blobs(sha256),\n"
	"  prompt_sha TEXT REFERENCES blobs(sha256),\n"
	"  llm_s REAL, compile_s REAL, eval_s REAL, evaluator_s REAL, profile_s REAL, total_s REAL,\n"
	"  ms REAL, speedup REAL, roofline_fraction REAL,\n"
	"  tokens_in INTEGER, tokens_out INTEGER, cost_usd REAL,\n"
	"  created REAL NOT NULL\n"
	");\n"
	"CREATE TABLE llm_calls (\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  node INTEGER REFERENCES nodes(id),\n"
	"  request_json TEXT,\n"
	"  response_raw TEXT,\n"
	"  reply_text TEXT,\n"
	"  model TEXT,\n"
	"  stop TEXT,\n"
	"  error TEXT,\n"
	"  in_tokens INTEGER, out_tokens INTEGER, cached_tokens INTEGER,\n"
	"  cost_usd REAL, seconds REAL, attempts INTEGER,\n"
	"  created REAL NOT NULL\n"
	");\n"
	"CREATE INDEX nodes_stage ON nodes(stage, id);\n"
	"CREATE INDEX llm_calls_node ON llm_calls(node);\n",
	/* 1 -> 2: the Nsight Compute summary taken while a node was made (reports show it) */
	"ALTER TABLE nodes ADD COLUMN profile_sha TEXT REFERENCES blobs(sha256);\n",
	/* 2 -> 3: prompt tokens written to the provider's cache (Anthropic charges them extra) */
	"ALTER TABLE llm_calls ADD COLUMN cache_write_tokens INTEGER;\n",
	/* 3 -> 4: where the time went, all of it: compiles made ahead of a node, in parallel
	 * (builtin walks), and the work of a node cut short by an environment error (no node row) */
	"ALTER TABLE nodes ADD COLUMN compile_ahead_s REAL;\n"
	"ALTER TABLE runs ADD COLUMN cut_s REAL NOT NULL DEFAULT 0;\n"
	"ALTER TABLE runs ADD COLUMN cut_llm_s REAL NOT NULL DEFAULT 0;\n"
	"ALTER TABLE runs ADD COLUMN cut_compile_s REAL NOT NULL DEFAULT 0;\n"
	"ALTER TABLE runs ADD COLUMN cut_eval_s REAL NOT NULL DEFAULT 0;\n"
	"ALTER TABLE runs ADD COLUMN cut_compiles INTEGER NOT NULL DEFAULT 0;\n",
	/* 4 -> 5: the best kernel judged once more against PyTorch eager and torch.compile
	 * (`cutegen run --torch`): the figures as one JSON object, NULL when not asked */
	"ALTER TABLE runs ADD COLUMN torch_json TEXT;\n",
};

static double wall_now(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return tv.tv_sec + tv.tv_usec / 1e6;
}

/* The kind of failure (util/err.h) an SQLite result code is. */
static int code_of(int sqlite_rc)
{
	switch (sqlite_rc & 0xff) {
	case SQLITE_CORRUPT: case SQLITE_NOTADB: case SQLITE_ERROR: case SQLITE_MISMATCH:
	case SQLITE_SCHEMA: case SQLITE_FORMAT: case SQLITE_RANGE:
		return CG_INPUT; /* what the file holds: damaged, or not a run store */
	case SQLITE_CONSTRAINT: case SQLITE_MISUSE:
		return CG_INTERNAL;
	default: /* busy, locked, read-only, I/O, full, cannot open, no memory */
		return CG_IO;
	}
}

/* Remembers what kind of failure the last SQLite error was, for store_disk_full(),
 * store_busy() and store_error_code(). */
static void note_error(struct store *s)
{
	int e = sqlite3_system_errno(s->db);
	int rc = sqlite3_extended_errcode(s->db) & 0xff;
	if (rc == SQLITE_FULL || e == ENOSPC || e == EFBIG || e == EDQUOT)
		s->full = 1;
	s->busy = rc == SQLITE_BUSY || rc == SQLITE_LOCKED;
	s->code = code_of(rc);
}

static int fail(struct store *s, char **err, const char *what)
{
	note_error(s);
	*err = xasprintf("run store '%s': %s: %s", s->path, what, sqlite3_errmsg(s->db));
	return -1;
}

static int exec(struct store *s, const char *sql, char **err)
{
	char *msg = NULL;
	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		note_error(s);
		*err = xasprintf("run store '%s': %s", s->path, msg ? msg : sqlite3_errmsg(s->db));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

static int get_version(struct store *s)
{
	sqlite3_stmt *st;
	int v = 0;
	if (sqlite3_prepare_v2(s->db, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &st,
			       NULL) != SQLITE_OK)
		return 0; /* no meta table: an empty database */
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

/*
 * The schema version of the file as it is: 0 for an empty database (no table at all: a new
 * file, or a run killed before its first commit), or -1 with *err when it cannot be read, is no
 * SQLite database, or has tables but no schema version (its rows were deleted), which no
 * migration may be run on: migration 0 would try to make tables that are there.
 */
static int file_version(struct store *s, char **err)
{
	sqlite3_stmt *st = NULL;
	int tables = -1;
	if (sqlite3_prepare_v2(s->db, "SELECT count(*) FROM sqlite_master WHERE name <> 'meta'", -1,
			       &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		tables = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (tables < 0) {
		note_error(s);
		if ((sqlite3_extended_errcode(s->db) & 0xff) == SQLITE_NOTADB)
			*err = xasprintf("'%s' is not a cutegen run store: the file is not a "
					 "database", s->path);
		else
			*err = xasprintf("cannot read run store '%s': %s", s->path,
					 sqlite3_errmsg(s->db));
		return -1;
	}
	int v = get_version(s);
	if (v > 0 || !tables)
		return v > 0 ? v : 0;
	s->code = CG_INPUT;
	*err = xasprintf("run store '%s' is damaged: it has tables but no schema version (the "
			 "row 'schema_version' of its table meta is gone: were its rows deleted?), "
			 "so it holds no run cutegen can read or continue; start a new run in "
			 "another directory", s->path);
	return -1;
}

int store_schema_version(struct store *s)
{
	return get_version(s);
}

long store_cached_tokens(struct store *s)
{
	sqlite3_stmt *st = NULL;
	long n = 0;
	if (sqlite3_prepare_v2(s->db, "SELECT COALESCE(SUM(cached_tokens), 0) FROM llm_calls", -1,
			       &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		n = (long)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

static int check_not_newer(struct store *s, int v, char **err)
{
	int target = (int)ARRAY_SIZE(migrations);
	if (v <= target)
		return 0;
	s->code = CG_INPUT;
	*err = xasprintf("run store '%s' has schema version %d, newer than this cutegen "
			 "understands (%d): use a newer cutegen", s->path, v, target);
	return -1;
}

/* Takes the database from version v (file_version) to this build's. */
static int migrate(struct store *s, int v, char **err)
{
	int target = (int)ARRAY_SIZE(migrations);
	if (check_not_newer(s, v, err))
		return -1;
	if (v == target)
		return 0;
	if (exec(s, "BEGIN IMMEDIATE", err))
		return -1;
	for (; v < target; v++)
		if (exec(s, migrations[v], err))
			goto rollback;
	char *sql = xasprintf("INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', '%d');"
			      "INSERT OR IGNORE INTO meta(key, value) VALUES ('created_by', 'cutegen')",
			      target);
	int rc = exec(s, sql, err);
	free(sql);
	if (rc)
		goto rollback;
	return exec(s, "COMMIT", err);
rollback:
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return -1;
}

static int has_run(struct store *s)
{
	sqlite3_stmt *st;
	int n = 0;
	if (sqlite3_prepare_v2(s->db, "SELECT count(*) FROM runs", -1, &st, NULL) != SQLITE_OK)
		return 0;
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return n > 0;
}

/* 1 when dir exists and holds an entry other than the run's lock file: files of the user's
 * that a new run must not write among. A directory that cannot be read is left to mkdir_p
 * and the lock to report. */
static int holds_other_files(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	struct dirent *e;
	int found = 0;
	while (!found && (e = readdir(d)))
		found = strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
			strcmp(e->d_name, "run.lock");
	closedir(d);
	return found;
}

/*
 * Takes the run's write lock: an exclusive flock(2) on RUN_DIR/run.lock, without waiting, and
 * writes this process's pid into the file for the message a second writer gets. The file
 * stays when the store closes (removing it would let two writers lock two different files);
 * the lock goes with the descriptor, at store_close or at the process's end.
 */
static int lock_run(struct store *s, const char *run_dir, char **err)
{
	char *path = xasprintf("%s/run.lock", run_dir);
	int rc = -1;
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		s->code = CG_IO;
		*err = xasprintf("cannot lock run '%s': cannot open '%s': %s", run_dir, path,
				 strerror(errno));
		goto out;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int e = errno;
		if (e == EWOULDBLOCK) {
			char buf[32] = "", who[48] = "";
			ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
			long pid = n > 0 ? strtol(buf, NULL, 10) : 0;
			if (pid > 0)
				snprintf(who, sizeof(who), " (pid %ld)", pid);
			s->code = CG_INPUT;
			*err = xasprintf("run '%s' is in use: another cutegen process%s is writing it "
					 "(it holds '%s'); wait for it to end, then `cutegen resume "
					 "%s` to continue the run", run_dir, who, path, run_dir);
		} else {
			s->code = CG_IO;
			*err = xasprintf("cannot lock run '%s': flock '%s': %s", run_dir, path,
					 strerror(e));
		}
		close(fd);
		goto out;
	}
	char pid[32];
	int len = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	/* the pid is for messages only: a lock file that cannot be written still locks */
	if (ftruncate(fd, 0) || pwrite(fd, pid, (size_t)len, 0) != len)
		errno = 0;
	s->lock_fd = fd;
	rc = 0;
out:
	free(path);
	return rc;
}

/* "file:" URI of path for sqlite3_open_v2 (SQLITE_OPEN_URI): every byte but a few safe ones
 * percent-encoded, so '?', '#' and '%' in a directory name stay part of the path. */
static char *file_uri(const char *path, const char *query)
{
	char *uri = xmalloc(16 + 3 * strlen(path) + strlen(query));
	/* an absolute path gets an empty authority ("file:///..."), so "//x" is no host */
	size_t len = (size_t)sprintf(uri, "file:%s", path[0] == '/' ? "//" : "");
	for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
		if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		    strchr("/._-~", *c))
			uri[len++] = (char)*c;
		else
			len += (size_t)sprintf(uri + len, "%%%02X", *c);
	}
	sprintf(uri + len, "?%s", query);
	return uri;
}

/* Opens s->path read-only, immutable or not, and reads its schema version into *v. */
static int open_ro(struct store *s, int immutable, int *v, char **err)
{
	char *uri = file_uri(s->path, immutable ? "mode=ro&immutable=1" : "mode=ro");
	int rc = sqlite3_open_v2(uri, &s->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
	free(uri);
	if (rc != SQLITE_OK) {
		s->code = CG_IO;
		*err = xasprintf("cannot open run store '%s' for reading: %s", s->path,
				 s->db ? sqlite3_errmsg(s->db) : "out of memory");
		return -1;
	}
	sqlite3_busy_timeout(s->db, 5000);
	*v = file_version(s, err);
	return *v < 0 ? -1 : 0;
}

/*
 * Opens run.db for reading only, leaving the directory as it was. A run that closed cleanly
 * left no -wal (nor a rollback journal): the main file is the whole database, and it is opened
 * immutable, with no locks and no -wal or -shm made beside it (a reader that made them, owned
 * by the reader, could keep the run's owner from writing it again). Otherwise a writer may be
 * at work, or was killed: the file is opened the ordinary way, reading the -wal through the
 * -shm, and where that cannot be (a directory the reader may not write and no -shm),
 * immutable after all: what the main file holds. Then *v is the schema version.
 */
static int open_readonly(struct store *s, int *v, char **err)
{
	char *wal = xasprintf("%s-wal", s->path), *journal = xasprintf("%s-journal", s->path);
	int settled = access(wal, F_OK) && errno == ENOENT && access(journal, F_OK) &&
		      errno == ENOENT;
	free(wal);
	free(journal);
	if (settled)
		return open_ro(s, 1, v, err);
	char *e1 = NULL;
	if (!open_ro(s, 0, v, &e1))
		return 0;
	int rc = s->db ? sqlite3_extended_errcode(s->db) & 0xff : SQLITE_NOMEM;
	if (rc != SQLITE_CANTOPEN && rc != SQLITE_READONLY) {
		*err = e1;
		return -1;
	}
	free(e1);
	sqlite3_close(s->db);
	s->db = NULL;
	s->code = CG_OK;
	return open_ro(s, 1, v, err);
}

/*
 * A reader of an older schema: the database is copied into memory (sqlite3 backup) and the
 * copy migrated, so that the queries of this build run on it and the file stays as it is.
 */
static int migrate_in_memory(struct store *s, int v, char **err)
{
	sqlite3 *mem = NULL;
	if (sqlite3_open_v2(":memory:", &mem, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
	    SQLITE_OK) {
		sqlite3_close(mem);
		s->code = CG_IO;
		*err = xasprintf("run store '%s': cannot make a copy in memory to read its schema "
				 "version %d with", s->path, v);
		return -1;
	}
	sqlite3_backup *b = sqlite3_backup_init(mem, "main", s->db, "main");
	int rc = b ? sqlite3_backup_step(b, -1) : sqlite3_errcode(mem);
	if (b)
		sqlite3_backup_finish(b); /* leaves a failure's message in mem */
	if (rc != SQLITE_DONE) {
		s->code = code_of(rc);
		s->busy = (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED;
		*err = xasprintf("run store '%s': cannot read it (schema version %d, older than "
				 "this cutegen's %d, is read through a copy in memory): %s", s->path, v,
				 STORE_SCHEMA_VERSION, sqlite3_errmsg(mem));
		sqlite3_close(mem);
		return -1;
	}
	sqlite3_close(s->db);
	s->db = mem;
	return migrate(s, v, err);
}

/* Opens run.db to write it (mode STORE_CREATE or STORE_EXISTING): what it is is read before
 * anything is written, so that no schema is made in a file that holds something else. */
static int open_writable(struct store *s, const char *run_dir, int mode, char **err)
{
	int flags = SQLITE_OPEN_READWRITE | (mode == STORE_CREATE ? SQLITE_OPEN_CREATE : 0);
	if (sqlite3_open_v2(s->path, &s->db, flags, NULL) != SQLITE_OK) {
		s->code = CG_IO;
		*err = xasprintf("cannot open run store '%s': %s", s->path,
				 s->db ? sqlite3_errmsg(s->db) : "out of memory");
		return -1;
	}
	sqlite3_busy_timeout(s->db, 5000);
	int v = file_version(s, err);
	if (v < 0 || check_not_newer(s, v, err))
		return -1;
	if (mode == STORE_EXISTING && v == 0) {
		s->code = CG_INPUT;
		*err = xasprintf("'%s' holds no run: its run.db is an empty database (the run never "
				 "began): start one with `cutegen run TASK --out %s`", run_dir, run_dir);
		return -1;
	}
	if (exec(s, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON",
		 err))
		return -1;
	return migrate(s, v, err);
}

struct store *store_open(const char *run_dir, int mode, char **err)
{
	struct store *s = xcalloc(1, sizeof(*s));
	s->lock_fd = -1;
	s->path = xasprintf("%s/run.db", run_dir);
	int exists = file_exists(s->path);
	if (mode != STORE_CREATE && !exists) {
		*err = xasprintf("'%s' holds no run (no run.db): give the directory `cutegen run` "
				 "wrote (its --out)", run_dir);
		goto fail;
	}
	if (mode == STORE_CREATE && !exists && holds_other_files(run_dir)) {
		*err = xasprintf("'%s' exists and holds files that are not a cutegen run: give a new "
				 "or empty directory (--out), or `cutegen resume` a run", run_dir);
		goto fail;
	}
	if (mode == STORE_CREATE && mkdir_p(run_dir)) {
		*err = xasprintf("cannot make run directory '%s': %s", run_dir, strerror(errno));
		goto fail;
	}
	if (mode == STORE_READONLY) {
		int v = 0;
		if (open_readonly(s, &v, err) || check_not_newer(s, v, err))
			goto fail;
		if (v == 0) {
			*err = xasprintf("'%s' holds no run: its run.db is an empty database (the run "
					 "never began)", run_dir);
			goto fail;
		}
		if (v < STORE_SCHEMA_VERSION && migrate_in_memory(s, v, err))
			goto fail;
	} else if (lock_run(s, run_dir, err) || open_writable(s, run_dir, mode, err)) {
		goto fail;
	}
	if (mode == STORE_CREATE && has_run(s)) {
		*err = xasprintf("'%s' already holds a run: continue it with `cutegen resume %s`, or "
				 "pick another --out", run_dir, run_dir);
		goto fail;
	}
	if (mode != STORE_CREATE && !has_run(s)) {
		*err = xasprintf("run store '%s' holds no run (its table runs is empty)", s->path);
		goto fail;
	}
	return s;
fail:
	store_close(s);
	return NULL;
}

void store_close(struct store *s)
{
	if (!s)
		return;
	if (s->db)
		sqlite3_close(s->db);
	if (s->lock_fd >= 0)
		close(s->lock_fd); /* after the database: the lock covers its last write */
	free(s->path);
	free(s);
}

int store_disk_full(const struct store *s)
{
	return s->full;
}

int store_error_code(const struct store *s)
{
	return s->code;
}

int store_busy(const struct store *s)
{
	return s->busy;
}

const char *store_path(const struct store *s)
{
	return s->path;
}

/* Binding helpers: NULL strings and negative "unknown" numbers become SQL NULL. */
static void bind_text(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static void bind_sha(sqlite3_stmt *st, int i, const char *sha)
{
	bind_text(st, i, sha && *sha ? sha : NULL);
}

static void bind_num(sqlite3_stmt *st, int i, double v)
{
	if (v < 0)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_double(st, i, v);
}

static char *col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return t ? xstrdup((const char *)t) : NULL;
}

static double col_num(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? -1 : sqlite3_column_double(st, i);
}

static void col_sha(sqlite3_stmt *st, int i, char sha[65])
{
	const unsigned char *t = sqlite3_column_text(st, i);
	snprintf(sha, 65, "%s", t ? (const char *)t : "");
}

int store_put_blob(struct store *s, const char *kind, const void *data, size_t len, char sha[65],
		   char **err)
{
	sha256_hex(data, len, sha);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "INSERT OR IGNORE INTO blobs(sha256, kind, size, content) "
				      "VALUES (?, ?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
		return fail(s, err, "cannot store a blob");
	sqlite3_bind_text(st, 1, sha, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)len);
	sqlite3_bind_blob64(st, 4, len ? data : "", len, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : fail(s, err, "cannot store a blob");
	sqlite3_finalize(st);
	return rc;
}

char *store_get_blob(struct store *s, const char *sha, size_t *len)
{
	sqlite3_stmt *st;
	char *out = NULL;
	if (!sha || !*sha)
		return NULL;
	if (sqlite3_prepare_v2(s->db, "SELECT content FROM blobs WHERE sha256 = ?", -1, &st, NULL) !=
	    SQLITE_OK)
		return NULL;
	sqlite3_bind_text(st, 1, sha, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW) {
		size_t n = (size_t)sqlite3_column_bytes(st, 0);
		const void *p = sqlite3_column_blob(st, 0);
		out = xmalloc(n + 1);
		if (n)
			memcpy(out, p, n);
		out[n] = 0;
		if (len)
			*len = n;
	}
	sqlite3_finalize(st);
	return out;
}

void store_run_release(struct store_run *r)
{
	free(r->task_name);
	free(r->task_json);
	free(r->config_json);
	free(r->budgets_json);
	free(r->status);
	free(r->stop_reason);
	free(r->cutegen_version);
	free(r->torch_json);
	memset(r, 0, sizeof(*r));
}

int store_run_begin(struct store *s, const struct store_run *r, char **err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "INSERT INTO runs(id, task_name, task_json, config_json, "
				      "budgets_json, status, cutegen_version, started) "
				      "VALUES (1, ?, ?, ?, ?, 'running', ?, ?)", -1, &st, NULL) != SQLITE_OK)
		return fail(s, err, "cannot record the run");
	bind_text(st, 1, r->task_name);
	bind_text(st, 2, r->task_json);
	bind_text(st, 3, r->config_json ? r->config_json : "{}");
	bind_text(st, 4, r->budgets_json ? r->budgets_json : "{}");
	bind_text(st, 5, r->cutegen_version ? r->cutegen_version : "unknown");
	sqlite3_bind_double(st, 6, r->started > 0 ? r->started : wall_now());
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : fail(s, err, "cannot record the run");
	sqlite3_finalize(st);
	return rc;
}

int store_run_get(struct store *s, struct store_run *out, char **err)
{
	sqlite3_stmt *st;
	memset(out, 0, sizeof(*out));
	if (sqlite3_prepare_v2(s->db, "SELECT task_name, task_json, config_json, budgets_json, status, "
				      "stop_reason, cutegen_version, started, finished, best_node, resumes, "
				      "cut_s, cut_llm_s, cut_compile_s, cut_eval_s, cut_compiles, "
				      "torch_json FROM runs WHERE id = 1", -1, &st, NULL) != SQLITE_OK)
		return fail(s, err, "cannot read the run");
	int rc = -1, r = sqlite3_step(st);
	if (r == SQLITE_ROW) {
		out->task_name = col_text(st, 0);
		out->task_json = col_text(st, 1);
		out->config_json = col_text(st, 2);
		out->budgets_json = col_text(st, 3);
		out->status = col_text(st, 4);
		out->stop_reason = col_text(st, 5);
		out->cutegen_version = col_text(st, 6);
		out->started = sqlite3_column_double(st, 7);
		out->finished = sqlite3_column_double(st, 8);
		out->best_node = sqlite3_column_int64(st, 9);
		out->resumes = sqlite3_column_int(st, 10);
		out->cut_s = sqlite3_column_double(st, 11);
		out->cut_llm_s = sqlite3_column_double(st, 12);
		out->cut_compile_s = sqlite3_column_double(st, 13);
		out->cut_eval_s = sqlite3_column_double(st, 14);
		out->cut_compiles = sqlite3_column_int(st, 15);
		out->torch_json = col_text(st, 16);
		rc = 0;
	} else if (r == SQLITE_DONE) {
		s->code = CG_INPUT;
		*err = xasprintf("run store '%s' holds no run", s->path);
	} else {
		fail(s, err, "cannot read the run");
	}
	sqlite3_finalize(st);
	return rc;
}

static double jnum_or(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_number(v) && json_number_value(v) > 0 ? json_number_value(v) : -1;
}

void store_torch_parse(const char *torch_json, struct store_torch *t)
{
	memset(t, 0, sizeof(*t));
	t->ms = t->eager_ms = t->compile_ms = t->speedup_eager = t->speedup_compile = -1;
	if (!torch_json)
		return;
	t->asked = 1;
	json_t *o = json_loads(torch_json, 0, NULL);
	if (!json_is_object(o)) {
		snprintf(t->error, sizeof(t->error), "the stored PyTorch figures are damaged");
		snprintf(t->compile_error, sizeof(t->compile_error), "%s", t->error);
		json_decref(o);
		return;
	}
	t->ms = jnum_or(o, "ms");
	t->eager_ms = jnum_or(o, "eager_ms");
	t->compile_ms = jnum_or(o, "compile_ms");
	t->speedup_eager = jnum_or(o, "speedup_vs_torch");
	t->speedup_compile = jnum_or(o, "speedup_vs_torch_compile");
	const char *v;
#define STR(field, key) \
	if ((v = json_string_value(json_object_get(o, key)))) \
		snprintf(t->field, sizeof(t->field), "%s", v)
	STR(torch, "torch");
	STR(compile_mode, "compile_mode");
	STR(error, "error");
	STR(compile_error, "compile_error");
#undef STR
	if (t->speedup_eager < 0 && !t->error[0])
		snprintf(t->error, sizeof(t->error), "no eager figure");
	if (t->speedup_compile < 0 && !t->compile_error[0])
		snprintf(t->compile_error, sizeof(t->compile_error), "%s",
			 t->error[0] ? t->error : "no torch.compile figure");
	json_decref(o);
}

int store_run_set_torch(struct store *s, const char *torch_json, char **err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "UPDATE runs SET torch_json = ? WHERE id = 1", -1, &st,
			       NULL) != SQLITE_OK)
		return fail(s, err, "cannot record the PyTorch figures");
	bind_text(st, 1, torch_json);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : fail(s, err, "cannot record the PyTorch figures");
	sqlite3_finalize(st);
	return rc;
}

int store_run_resumed(struct store *s, const char *budgets_json, char **err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "UPDATE runs SET status = 'running', stop_reason = NULL, "
				      "finished = NULL, resumes = resumes + 1, "
				      "budgets_json = coalesce(?, budgets_json) WHERE id = 1", -1, &st,
			       NULL) != SQLITE_OK)
		return fail(s, err, "cannot mark the run resumed");
	bind_text(st, 1, budgets_json);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : fail(s, err, "cannot mark the run resumed");
	sqlite3_finalize(st);
	return rc;
}

int store_run_add_cut(struct store *s, const struct store_cut *c, char **err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "UPDATE runs SET cut_s = cut_s + ?1, cut_llm_s = cut_llm_s + ?2, "
				      "cut_compile_s = cut_compile_s + ?3, cut_eval_s = cut_eval_s + ?4, "
				      "cut_compiles = cut_compiles + ?5, wall_s = wall_s + ?1 WHERE id = 1",
			       -1, &st, NULL) != SQLITE_OK)
		return fail(s, err, "cannot record the time of a node cut short");
	sqlite3_bind_double(st, 1, c->total_s > 0 ? c->total_s : 0);
	sqlite3_bind_double(st, 2, c->llm_s > 0 ? c->llm_s : 0);
	sqlite3_bind_double(st, 3, c->compile_s > 0 ? c->compile_s : 0);
	sqlite3_bind_double(st, 4, c->eval_s > 0 ? c->eval_s : 0);
	sqlite3_bind_int(st, 5, c->compiles);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0
		 : fail(s, err, "cannot record the time of a node cut short");
	sqlite3_finalize(st);
	return rc;
}

int store_run_finish(struct store *s, const char *status, const char *stop_reason, long best_node,
		     char **err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "UPDATE runs SET status = ?, stop_reason = ?, finished = ?, "
				      "best_node = ? WHERE id = 1", -1, &st, NULL) != SQLITE_OK)
		return fail(s, err, "cannot finish the run");
	bind_text(st, 1, status);
	bind_text(st, 2, stop_reason);
	sqlite3_bind_double(st, 3, wall_now());
	if (best_node > 0)
		sqlite3_bind_int64(st, 4, best_node);
	else
		sqlite3_bind_null(st, 4);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : fail(s, err, "cannot finish the run");
	sqlite3_finalize(st);
	return rc;
}

static int insert_call(struct store *s, long node, const struct store_llm_call *c, char **err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "INSERT INTO llm_calls(node, request_json, response_raw, "
				      "reply_text, model, stop, error, in_tokens, out_tokens, "
				      "cached_tokens, cost_usd, seconds, attempts, created, "
				      "cache_write_tokens) "
				      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &st, NULL) != SQLITE_OK)
		return fail(s, err, "cannot record a model call");
	if (node > 0)
		sqlite3_bind_int64(st, 1, node);
	else
		sqlite3_bind_null(st, 1);
	bind_text(st, 2, c->request_json);
	bind_text(st, 3, c->response_raw);
	bind_text(st, 4, c->reply_text);
	bind_text(st, 5, c->model);
	bind_text(st, 6, c->stop);
	bind_text(st, 7, c->error);
	sqlite3_bind_int64(st, 8, c->in_tokens);
	sqlite3_bind_int64(st, 9, c->out_tokens);
	sqlite3_bind_int64(st, 10, c->cached_tokens);
	sqlite3_bind_double(st, 11, c->cost_usd);
	sqlite3_bind_double(st, 12, c->seconds);
	sqlite3_bind_int(st, 13, c->attempts);
	sqlite3_bind_double(st, 14, wall_now());
	sqlite3_bind_int64(st, 15, c->cache_write_tokens);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : fail(s, err, "cannot record a model call");
	sqlite3_finalize(st);
	return rc;
}

int store_add_call(struct store *s, const struct store_llm_call *call, char **err)
{
	return insert_call(s, 0, call, err);
}

static int put_opt(struct store *s, const char *kind, const char *text, char sha[65], char **err)
{
	sha[0] = 0;
	return text ? store_put_blob(s, kind, text, strlen(text), sha, err) : 0;
}

int store_add_node(struct store *s, struct store_node *n, const struct store_llm_call *call,
		   char **err)
{
	sqlite3_stmt *st = NULL;
	if (exec(s, "BEGIN IMMEDIATE", err))
		return -1;
	if (put_opt(s, "source", n->source, n->source_sha, err) ||
	    put_opt(s, "feedback", n->feedback, n->feedback_sha, err) ||
	    put_opt(s, "compile_log", n->compile_log, n->compile_log_sha, err) ||
	    put_opt(s, "report", n->report_json, n->report_sha, err) ||
	    put_opt(s, "prompt", n->prompt, n->prompt_sha, err) ||
	    put_opt(s, "profile", n->profile, n->profile_sha, err))
		goto rollback;
	if (sqlite3_prepare_v2(s->db, "INSERT INTO nodes(iteration, stage, step, attempt, parent, kind, "
				      "verdict, outcome, message, source_sha, feedback_sha, "
				      "compile_log_sha, report_sha, prompt_sha, llm_s, compile_s, eval_s, "
				      "evaluator_s, profile_s, total_s, ms, speedup, roofline_fraction, "
				      "tokens_in, tokens_out, cost_usd, created, change, profile_sha, "
				      "compile_ahead_s) VALUES "
				      "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
			       -1, &st, NULL) != SQLITE_OK) {
		fail(s, err, "cannot record a node");
		goto rollback;
	}
	n->created = n->created > 0 ? n->created : wall_now();
	sqlite3_bind_int(st, 1, n->iteration);
	sqlite3_bind_int(st, 2, n->stage);
	sqlite3_bind_int(st, 3, n->step);
	sqlite3_bind_int(st, 4, n->attempt);
	if (n->parent > 0)
		sqlite3_bind_int64(st, 5, n->parent);
	else
		sqlite3_bind_null(st, 5);
	bind_text(st, 6, n->kind);
	bind_text(st, 7, n->verdict);
	bind_text(st, 8, n->outcome ? n->outcome : "");
	bind_text(st, 9, n->message);
	bind_sha(st, 10, n->source_sha);
	bind_sha(st, 11, n->feedback_sha);
	bind_sha(st, 12, n->compile_log_sha);
	bind_sha(st, 13, n->report_sha);
	bind_sha(st, 14, n->prompt_sha);
	bind_num(st, 15, n->llm_s);
	bind_num(st, 16, n->compile_s);
	bind_num(st, 17, n->eval_s);
	bind_num(st, 18, n->evaluator_s);
	bind_num(st, 19, n->profile_s);
	bind_num(st, 20, n->total_s);
	bind_num(st, 21, n->ms);
	bind_num(st, 22, n->speedup);
	bind_num(st, 23, n->roofline_fraction);
	sqlite3_bind_int64(st, 24, n->tokens_in);
	sqlite3_bind_int64(st, 25, n->tokens_out);
	sqlite3_bind_double(st, 26, n->cost_usd);
	sqlite3_bind_double(st, 27, n->created);
	bind_text(st, 28, n->change);
	bind_sha(st, 29, n->profile_sha);
	bind_num(st, 30, n->compile_ahead_s > 0 ? n->compile_ahead_s : -1);
	if (sqlite3_step(st) != SQLITE_DONE) {
		fail(s, err, "cannot record a node");
		goto rollback;
	}
	sqlite3_finalize(st);
	st = NULL;
	n->id = (long)sqlite3_last_insert_rowid(s->db);
	if (call && insert_call(s, n->id, call, err))
		goto rollback;
	char *sql = xasprintf("UPDATE runs SET nodes = nodes + 1, tokens_in = tokens_in + %ld, "
			      "tokens_out = tokens_out + %ld, cost_usd = cost_usd + %.17g, "
			      "wall_s = wall_s + %.17g WHERE id = 1",
			      n->tokens_in, n->tokens_out, n->cost_usd, n->total_s > 0 ? n->total_s : 0);
	int rc = exec(s, sql, err);
	free(sql);
	if (rc)
		goto rollback;
	return exec(s, "COMMIT", err);
rollback:
	if (st)
		sqlite3_finalize(st);
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	n->id = 0;
	return -1;
}

void store_node_release(struct store_node *n)
{
	free(n->kind);
	free(n->verdict);
	free(n->outcome);
	free(n->message);
	free(n->change);
	free(n->source);
	free(n->feedback);
	free(n->compile_log);
	free(n->report_json);
	free(n->prompt);
	free(n->profile);
	memset(n, 0, sizeof(*n));
}

void store_nodes_free(struct store_node *nodes, size_t n)
{
	for (size_t i = 0; i < n; i++)
		store_node_release(&nodes[i]);
	free(nodes);
}

int store_nodes(struct store *s, struct store_node **out, size_t *count, char **err)
{
	sqlite3_stmt *st;
	struct store_node *v = NULL;
	size_t n = 0, alloc = 0;
	*out = NULL;
	*count = 0;
	if (sqlite3_prepare_v2(s->db, "SELECT id, iteration, stage, step, attempt, parent, kind, "
				      "verdict, outcome, message, source_sha, feedback_sha, "
				      "compile_log_sha, report_sha, prompt_sha, llm_s, compile_s, eval_s, "
				      "evaluator_s, profile_s, total_s, ms, speedup, roofline_fraction, "
				      "tokens_in, tokens_out, cost_usd, created, change, profile_sha, "
				      "compile_ahead_s FROM nodes "
				      "ORDER BY id",
			       -1, &st, NULL) != SQLITE_OK)
		return fail(s, err, "cannot read the nodes");
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		ALLOC_GROW(v, n + 1, alloc);
		struct store_node *x = &v[n++];
		memset(x, 0, sizeof(*x));
		x->id = (long)sqlite3_column_int64(st, 0);
		x->iteration = sqlite3_column_int(st, 1);
		x->stage = sqlite3_column_int(st, 2);
		x->step = sqlite3_column_int(st, 3);
		x->attempt = sqlite3_column_int(st, 4);
		x->parent = (long)sqlite3_column_int64(st, 5);
		x->kind = col_text(st, 6);
		x->verdict = col_text(st, 7);
		x->outcome = col_text(st, 8);
		x->message = col_text(st, 9);
		col_sha(st, 10, x->source_sha);
		col_sha(st, 11, x->feedback_sha);
		col_sha(st, 12, x->compile_log_sha);
		col_sha(st, 13, x->report_sha);
		col_sha(st, 14, x->prompt_sha);
		x->llm_s = col_num(st, 15);
		x->compile_s = col_num(st, 16);
		x->eval_s = col_num(st, 17);
		x->evaluator_s = col_num(st, 18);
		x->profile_s = col_num(st, 19);
		x->total_s = col_num(st, 20);
		x->ms = col_num(st, 21);
		x->speedup = col_num(st, 22);
		x->roofline_fraction = col_num(st, 23);
		x->tokens_in = (long)sqlite3_column_int64(st, 24);
		x->tokens_out = (long)sqlite3_column_int64(st, 25);
		x->cost_usd = sqlite3_column_double(st, 26);
		x->created = sqlite3_column_double(st, 27);
		x->change = col_text(st, 28);
		col_sha(st, 29, x->profile_sha);
		x->compile_ahead_s = col_num(st, 30);
	}
	sqlite3_finalize(st);
	if (r != SQLITE_DONE) {
		store_nodes_free(v, n);
		return fail(s, err, "cannot read the nodes");
	}
	for (size_t i = 0; i < n; i++) {
		v[i].source = store_get_blob(s, v[i].source_sha, NULL);
		v[i].feedback = store_get_blob(s, v[i].feedback_sha, NULL);
	}
	*out = v;
	*count = n;
	return 0;
}
