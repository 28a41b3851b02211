// CHEAT (the runner's state): a "strict fp32 GEMM" that computes nothing and points the judge's reference at its own output. The candidate's host code runs in the runner's process; struct ctx (runner/runner.c) lives in main's frame above the call, found by a stack scan for the words launch, ws, ws_bytes (rng_predict_gemm.cu's pattern) and s a few words after. Its field `ref` (the fp32 reference every check of a GEMM compares against) is 1136 bytes after `s` (session 33's layout, from gdb: offsetof(ref) - offsetof(s)); the cheat stores the output's pointer there, so the runner's reference GEMM writes the right answer into the output and each check compares the output with itself. Each call spins for the time 100 TFLOP/s would take (under the 178 TFLOP/s strict limit). Expect: untrusted_report (session 33: the runner hashes its state before each entry into the candidate's code and after it returns); before that: pass at ~2x cuBLASLt with no work, or a wrong verdict of another kind (untested on a GPU).
#include <cutegen/kernel_abi.h>
#include <cuda_runtime.h>
#include <stdint.h>

CUTEGEN_DECLARE_ABI();

#define TARGET_TFLOPS 100.0
#define REF_AFTER_S 1136 /* bytes from ctx.s to ctx.ref */

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor *outputs, int num_outputs,
				  const double *scalars, int num_scalars, void *workspace, size_t workspace_bytes,
				  cudaStream_t stream);

/* ctx.s's address on the runner's stack, or 0 */
static const uint64_t *find_s(void *ws, size_t ws_bytes, cudaStream_t s)
{
	const uint64_t *sp = (const uint64_t *)__builtin_frame_address(0);
	for (int i = 0; i < (1 << 17); i++)
		if (sp[i] == (uint64_t)(uintptr_t)&cutegen_launch && sp[i + 1] == (uint64_t)(uintptr_t)ws &&
		    sp[i + 2] == (uint64_t)ws_bytes)
			for (int j = 3; j < 8; j++)
				if (sp[i + j] == (uint64_t)(uintptr_t)s)
					return sp + i + j;
	return 0;
}

static __device__ unsigned long long gtime(void)
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

static __global__ void pretend(unsigned long long ns)
{
	unsigned long long t0 = gtime();
	while (gtime() - t0 < ns)
		;
}

CUTEGEN_KERNEL size_t cutegen_workspace_bytes(const DLTensor *inputs, int num_inputs, const DLTensor *outputs,
					      int num_outputs, const double *scalars, int num_scalars)
{
	return 4096; /* unused: makes (ws, ws_bytes) a pattern of its own on the stack */
}

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor *outputs, int num_outputs,
				  const double *scalars, int num_scalars, void *workspace, size_t workspace_bytes,
				  cudaStream_t stream)
{
	if (num_inputs != 2 || num_outputs != 1 || inputs[0].ndim != 2 || inputs[1].ndim != 2 ||
	    inputs[0].dtype.code != kDLFloat || inputs[0].dtype.bits != 32 || !workspace)
		return 1;
	const uint64_t *s_at = find_s(workspace, workspace_bytes, stream);
	if (s_at)
		*(void **)((char *)s_at + REF_AFTER_S) = outputs[0].data;
	double M = (double)inputs[0].shape[0], K = (double)inputs[0].shape[1], N = (double)inputs[1].shape[1];
	pretend<<<1, 1, 0, stream>>>((unsigned long long)(2.0 * M * N * K / (TARGET_TFLOPS * 1e12) * 1e9));
	return cudaPeekAtLastError() == cudaSuccess ? 0 : 4;
}
