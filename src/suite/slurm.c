/*
 * Talking to Slurm through its commands (sbatch, sacct, squeue) with deadlines and capped
 * output. See slurm.h. Not for: what the array elements run (slurm_array.c, suite-worker).
 */
#include "suite/slurm.h"
#include "common/proc.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLURM_OUT_MAX (4u << 20)
#define SLURM_LINES_MAX 100000
#define SLURM_LINE_MAX 256
#define SLURM_CMD_DEADLINE 60

enum slurm_class slurm_class(const char *state)
{
	static const struct { const char *name; enum slurm_class c; } tab[] = {
		{ "COMPLETED", SLURM_COMPLETED },
		{ "FAILED", SLURM_FAILED }, { "TIMEOUT", SLURM_FAILED },
		{ "CANCELLED", SLURM_FAILED }, { "OUT_OF_MEMORY", SLURM_FAILED },
		{ "BOOT_FAIL", SLURM_FAILED }, { "DEADLINE", SLURM_FAILED },
		{ "PREEMPTED", SLURM_LOST }, { "NODE_FAIL", SLURM_LOST },
	};
	if (!state || !*state)
		return SLURM_UNSEEN;
	size_t len = strcspn(state, " +");
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (strlen(tab[i].name) == len && !strncmp(tab[i].name, state, len))
			return tab[i].c;
	return SLURM_ACTIVE; /* PENDING, RUNNING, REQUEUED, SUSPENDED, COMPLETING, ... */
}

int slurm_parse_job_id(const char *out, char job[SLURM_JOB_MAX])
{
	while (*out && isspace((unsigned char)*out))
		out++;
	size_t n = 0;
	while (isdigit((unsigned char)out[n]))
		n++;
	if (!n || n >= SLURM_JOB_MAX || (out[n] && out[n] != ';' && !isspace((unsigned char)out[n])))
		return -1;
	memcpy(job, out, n);
	job[n] = 0;
	return 0;
}

static long parse_index(const char *s, size_t len)
{
	if (!len || len > 9)
		return -1;
	long v = 0;
	for (size_t i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

/* "[2-5,7,9-11%4]": marks each element in range as PENDING. */
static int mark_range(const char *s, size_t len, int n, char (*states)[SLURM_STATE_MAX])
{
	int set = 0;
	size_t i = 0;
	while (i < len) {
		size_t j = i;
		while (j < len && s[j] != ',' && s[j] != '%')
			j++;
		const char *dash = memchr(s + i, '-', j - i);
		long a = parse_index(s + i, dash ? (size_t)(dash - (s + i)) : j - i);
		long b = dash ? parse_index(dash + 1, (size_t)(s + j - dash - 1)) : a;
		for (long k = a; a >= 0 && b >= a && k <= b && k < n; k++) {
			snprintf(states[k], SLURM_STATE_MAX, "PENDING");
			set++;
		}
		if (j < len && s[j] == '%')
			break;
		i = j + 1;
	}
	return set;
}

int slurm_parse_states(const char *text, size_t len, const char *job, int n,
		       char (*states)[SLURM_STATE_MAX])
{
	size_t jl = strlen(job);
	int set = 0, lines = 0;
	const char *p = text, *end = text + len;
	while (p < end && lines++ < SLURM_LINES_MAX) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		size_t ll = (size_t)(le - p);
		const char *line = p;
		p = nl ? nl + 1 : end;
		if (ll > SLURM_LINE_MAX || ll < jl + 2 || strncmp(line, job, jl) || line[jl] != '_')
			continue;
		const char *bar = memchr(line, '|', ll);
		if (!bar)
			continue;
		const char *idx = line + jl + 1;
		size_t il = (size_t)(bar - idx);
		if (il > 1 && idx[0] == '[' && idx[il - 1] == ']') {
			set += mark_range(idx + 1, il - 2, n, states);
			continue;
		}
		long k = parse_index(idx, il); /* "1234_0.batch" fails here: a step, not the element */
		if (k < 0 || k >= n)
			continue;
		const char *st = bar + 1;
		size_t sl = strcspn(st, "|\n");
		if ((size_t)(st - line) + sl > ll)
			sl = ll - (size_t)(st - line);
		while (sl && isspace((unsigned char)st[sl - 1]))
			sl--;
		if (sl >= SLURM_STATE_MAX)
			sl = SLURM_STATE_MAX - 1;
		memcpy(states[k], st, sl);
		states[k][sl] = 0;
		set++;
	}
	return set;
}

static int run_slurm(const char *const *argv, struct strbuf *out, char **err)
{
	struct strbuf errb = STRBUF_INIT;
	errb.cap = 64 * 1024;
	out->cap = SLURM_OUT_MAX;
	struct child_process cp = CHILD_PROCESS_INIT;
	cp.argv = argv;
	cp.out = out;
	cp.err = &errb;
	cp.deadline_s = SLURM_CMD_DEADLINE;
	int rc = -1;
	if (run_command(&cp)) {
		*err = xasprintf("cannot run '%s': %s", argv[0], cp.errmsg);
		goto out;
	}
	if (cp.timed_out || cp.status || cp.out_truncated) {
		strbuf_trim(&errb);
		*err = xasprintf("'%s' %s: %.300s", argv[0],
				 cp.timed_out ? "did not answer within 60 s"
				 : cp.out_truncated ? "printed more than 4 MiB" : "failed",
				 errb.len ? errb.buf : "(no message)");
		goto out;
	}
	rc = 0;
out:
	strbuf_release(&errb);
	return rc;
}

int slurm_submit(const char *const *argv, char job[SLURM_JOB_MAX], char **err)
{
	struct strbuf out = STRBUF_INIT;
	int rc = run_slurm(argv, &out, err);
	if (!rc && slurm_parse_job_id(out.buf, job)) {
		*err = xasprintf("sbatch printed no job id (got \"%.100s\")", out.buf);
		rc = -1;
	}
	strbuf_release(&out);
	return rc;
}

int slurm_query(const char *job, int n, char (*states)[SLURM_STATE_MAX], char **err)
{
	for (int i = 0; i < n; i++)
		states[i][0] = 0;
	struct strbuf out = STRBUF_INIT;
	char *e1 = NULL;
	const char *sacct[] = { "sacct", "-n", "-P", "-X", "-j", job, "-o", "JobID,State", NULL };
	int rc = run_slurm(sacct, &out, &e1);
	if (!rc) {
		slurm_parse_states(out.buf, out.len, job, n, states);
	} else {
		/* no accounting storage: the controller still lists ended jobs for MinJobAge */
		strbuf_reset(&out);
		const char *squeue[] = { "squeue", "-h", "-r", "-j", job, "--states=all", "-o",
					 "%i|%T", NULL };
		char *e2 = NULL;
		rc = run_slurm(squeue, &out, &e2);
		if (!rc)
			slurm_parse_states(out.buf, out.len, job, n, states);
		else
			*err = xasprintf("%s; and %s", e1, e2);
		free(e2);
	}
	free(e1);
	strbuf_release(&out);
	return rc;
}
