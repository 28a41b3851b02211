/*
 * What a GPU can do at most, from its own figures: the bound a result may not pass whatever was
 * measured (docs/evaluation.md, Plausibility). Shared by cutegen-baseline, which reports it beside
 * what it measures, and cutegen-runner, which applies it when the evaluator gave no limits.
 */
#ifndef CUTEGEN_RUNNER_LIMITS_H
#define CUTEGEN_RUNNER_LIMITS_H

#include "common/task.h"

/* Dense floating-point operations per clock per SM of the precision's fastest unit. */
double limits_flops_per_clock_sm(int cc_major, enum precision p);

/* TFLOP/s: SMs x clock (kHz, the maximum) x the above. */
double limits_peak_tflops(int cc_major, int sms, int clock_khz, enum precision p);

/* GB/s of the DRAM: memory clock (kHz) x bus width (bits) x 2 (double data rate). */
double limits_dram_gbps(int mem_clock_khz, int bus_bits);

#endif
