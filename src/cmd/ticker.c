/*
 * The terminal progress line of ticker.h: a thread that wakes every second (or at once when
 * stopped) and redraws "WHAT ... N s" on stderr.
 */
#include "cmd/ticker.h"
#include "util/xalloc.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

struct ticker {
	char *what;
	struct timespec start;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;
};

static double since(const struct timespec *t0)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) + (now.tv_nsec - t0->tv_nsec) / 1e9;
}

static void *tick(void *arg)
{
	struct ticker *t = arg;
	pthread_mutex_lock(&t->mu);
	while (!t->stop) {
		fprintf(stderr, "\r\033[K%s ... %.0f s", t->what, since(&t->start));
		fflush(stderr);
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 1;
		while (!t->stop && pthread_cond_timedwait(&t->cv, &t->mu, &until) != ETIMEDOUT)
			;
	}
	fputs("\r\033[K", stderr);
	fflush(stderr);
	pthread_mutex_unlock(&t->mu);
	return NULL;
}

struct ticker *ticker_start(const char *what, int quiet)
{
	if (quiet || !isatty(2))
		return NULL;
	struct ticker *t = xcalloc(1, sizeof(*t));
	t->what = xstrdup(what);
	clock_gettime(CLOCK_MONOTONIC, &t->start);
	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->cv, NULL);
	if (pthread_create(&t->thread, NULL, tick, t)) {
		free(t->what);
		free(t);
		return NULL; /* no line: the step itself still runs */
	}
	return t;
}

void ticker_stop(struct ticker *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&t->mu);
	t->stop = 1;
	pthread_cond_signal(&t->cv);
	pthread_mutex_unlock(&t->mu);
	pthread_join(t->thread, NULL);
	pthread_mutex_destroy(&t->mu);
	pthread_cond_destroy(&t->cv);
	free(t->what);
	free(t);
}
