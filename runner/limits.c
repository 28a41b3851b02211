/* The GPU's limits from its figures; see limits.h. */
#include "limits.h"

#include <math.h>

/*
 * From NVIDIA's figures (A100: 19.5 fp32, 156 tf32, 312 fp16 TFLOP/s at 1.41 GHz x 108 SMs;
 * H100 SXM: 67 fp32, 495 tf32, 989 fp16, 1979 fp8 at 1.83 GHz x 132 SMs). Newer than sm_90:
 * twice sm_90's, a bound that errs high. Strict fp32 may legitimately run as 3xTF32 (three TF32
 * products per fp32 one, accurate to fp32): its bound is the larger of fp32 SIMT and a third of
 * TF32.
 */
double limits_flops_per_clock_sm(int cc_major, enum precision p)
{
	double simt = 256, tf32, f16, f8;
	if (cc_major >= 9) {
		tf32 = 2048; f16 = 4096; f8 = 8192;
		if (cc_major >= 10) {
			tf32 *= 2; f16 *= 2; f8 *= 2; simt *= 2;
		}
	} else {
		tf32 = 1024; f16 = 2048; f8 = 2048;
	}
	switch (p) {
	case PREC_TF32: return tf32;
	case PREC_FP16: case PREC_BF16: return f16;
	case PREC_FP8: return f8;
	default: return fmax(simt, tf32 / 3);
	}
}

double limits_peak_tflops(int cc_major, int sms, int clock_khz, enum precision p)
{
	return limits_flops_per_clock_sm(cc_major, p) * sms * clock_khz * 1e3 / 1e12;
}

double limits_dram_gbps(int mem_clock_khz, int bus_bits)
{
	return 2.0 * mem_clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;
}
