/*
 * A progress line for one long step on a terminal: "compiling k.cu (nvcc, sm_90a) ... 12 s",
 * redrawn every second on stderr by a thread of its own so that a step which blocks (nvcc,
 * the runner) still shows it is alive, and erased when the step ends. Nothing at all when
 * stderr is not a terminal, so piped output and logs stay clean.
 * Not for: a command's own status lines (run and suite draw theirs from their events).
 *
 * Usage:
 *   1. struct ticker *t = ticker_start("compiling k.cu", quiet);  (NULL: nothing is drawn)
 *   2. the long step;
 *   3. ticker_stop(t);  erases the line, frees t (NULL is fine).
 */
#ifndef CUTEGEN_TICKER_H
#define CUTEGEN_TICKER_H

/* Starts the line (what is copied) unless quiet or stderr is not a terminal; NULL then. */
struct ticker *ticker_start(const char *what, int quiet);
void ticker_stop(struct ticker *t);

#endif
