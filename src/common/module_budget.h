/*
 * The budget a module's output element is judged by (docs/evaluation.md, "Module tasks"), one
 * definition for the runner's device code (runner/devkern.cu) and the unit tests (host C):
 *   budget = multiple * max(|r - t|, E * max(1, |t| / mean|t|)) + ulps * ulp_out(t)
 * with t the float64 truth, r the task-dtype reference, E the mean of |r - t| over the output
 * and mean|t| the mean of |t|. NaN in t wants NaN; an infinity wants the same infinity.
 * Not for: integer and bool outputs (exact), the sums (devkern.cu's kernels).
 */
#ifndef CUTEGEN_MODULE_BUDGET_H
#define CUTEGEN_MODULE_BUDGET_H

#include <math.h>

#ifdef __CUDACC__
#define MB_FN __host__ __device__ static inline
#else
#define MB_FN static inline
#endif

/* Output dtypes, as enum dk_dtype / enum mrun_dtype number them. */
enum { MB_FP32 = 1, MB_FP16 = 2, MB_BF16 = 3, MB_FP8 = 4, MB_FP64 = 5 };

/* The spacing of dtype's values at |t|, at least its smallest subnormal spacing. */
MB_FN double mb_ulp(double t, int dtype)
{
	int mant, emin; /* explicit mantissa bits; exponent of the smallest subnormal spacing */
	switch (dtype) {
	case MB_FP16: mant = 10; emin = -24; break;
	case MB_BF16: mant = 7; emin = -133; break;
	case MB_FP8: mant = 3; emin = -9; break;
	case MB_FP64: mant = 52; emin = -1074; break;
	default: mant = 23; emin = -149; break;
	}
	int ex = 0;
	double a = fabs(t);
	if (!(a > 0) || isinf(a))
		return ldexp(1.0, emin);
	frexp(a, &ex); /* a = m 2^ex, m in [0.5, 1): the binade's spacing is 2^(ex-1-mant) */
	int e = ex - 1 - mant;
	return ldexp(1.0, e > emin ? e : emin);
}

/* 1 when g is within the budget of t (set in *budget; 0 for NaN and infinite t). */
MB_FN int mb_check(double g, double r, double t, double E, double mean_t, double multiple, double ulps,
		   int dtype, double *budget)
{
	if (isnan(t)) {
		*budget = 0;
		return isnan(g);
	}
	if (isinf(t)) {
		*budget = 0;
		return g == t;
	}
	double eref = fabs(r - t);
	if (!isfinite(eref)) { /* the task dtype overflowed where the truth did not: what PyTorch
				  gives passes, and |t| is the reference's error */
		eref = fabs(t);
		if (g == r) {
			*budget = eref;
			return 1;
		}
	}
	/* E at least: near a zero of the truth (cancellation) the reference's own error there is
	 * as likely tiny by luck as the candidate's is not; its mean is the floor */
	double rel = E * fmax(fabs(t) / (mean_t + 1e-300), 1.0);
	*budget = multiple * fmax(eref, rel) + ulps * mb_ulp(t, dtype);
	return fabs(g - t) <= *budget;
}

#endif
