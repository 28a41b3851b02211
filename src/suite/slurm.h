/*
 * Slurm as the engine of a suite on a cluster: submitting a job array (sbatch), reading the
 * states of its elements (sacct, or squeue when the cluster keeps no accounting) and
 * classifying them. Everything Slurm prints is untrusted input: lines and fields are capped.
 * Not for: deciding what to run or merging results (slurm_array.c); scheduling nodes (Slurm's).
 *
 * Usage:
 *   1. slurm_submit(argv_of_sbatch, job, &err) -> the job id;
 *   2. poll slurm_query(job, n, states, &err) until every element's slurm_class() is final;
 *   3. element states that are SLURM_LOST (preempted, node failure) may be submitted again.
 */
#ifndef CUTEGEN_SLURM_H
#define CUTEGEN_SLURM_H

#include <stddef.h>

#define SLURM_JOB_MAX 32     /* a job id: digits (plus ";cluster", dropped) */
#define SLURM_STATE_MAX 24   /* a state name: "OUT_OF_MEMORY" */

enum slurm_class {
	SLURM_UNSEEN = 0,  /* not listed (not yet, or forgotten by the controller) */
	SLURM_ACTIVE,      /* pending, running, requeued, suspended, completing... */
	SLURM_COMPLETED,   /* ended with exit code 0 */
	SLURM_FAILED,      /* failed, timeout, cancelled, out of memory, boot failure, deadline */
	SLURM_LOST         /* preempted or its node failed: worth submitting again */
};

/* The class of a state name as sacct/squeue print it ("CANCELLED by 0" reads as CANCELLED);
 * unknown names are SLURM_ACTIVE (wait rather than judge). */
enum slurm_class slurm_class(const char *state);

/* Parses `sbatch --parsable` output ("1234" or "1234;cluster") into job; -1 if not a job id. */
int slurm_parse_job_id(const char *out, char job[SLURM_JOB_MAX]);

/*
 * Parses lines "JOB_IDX|STATE[|...]" (sacct -P, squeue -o "%i|%T") into states[IDX] for the
 * elements of `job` with 0 <= IDX < n; other lines (steps "1234_0.batch", other jobs, pending
 * ranges "1234_[2-5]") are skipped, except that a range marks its elements PENDING. At most
 * 100000 lines and 256 bytes a line are read. Returns the number of elements set.
 */
int slurm_parse_states(const char *text, size_t len, const char *job, int n,
		       char (*states)[SLURM_STATE_MAX]);

/* Runs sbatch (argv[0] "sbatch", with --parsable among the flags) and reads the job id. */
int slurm_submit(const char *const *argv, char job[SLURM_JOB_MAX], char **err);

/* Fills states[0..n) ("" = not listed) from sacct, or from squeue when sacct fails. */
int slurm_query(const char *job, int n, char (*states)[SLURM_STATE_MAX], char **err);

#endif
