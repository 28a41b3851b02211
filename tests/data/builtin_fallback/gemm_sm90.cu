/*
 * A stand-in for builtin/gemm_sm90.cu in tests/e2e/builtin_fallback.sh (CUTEGEN_BUILTIN_DIR):
 * every candidate refuses the task as unsupported (cutegen_launch returns 2), as the real
 * family does for a shape its TMA cannot take. Plain CUDA, compiles in a second or two.
 * cutegen-space: CG_P_BN=128,256 CG_P_STAGES=2,4
 * cutegen-start: CG_P_BN=128 CG_P_STAGES=2
 * cutegen-stages: tile=CG_P_BN pipeline=CG_P_STAGES
 */
#include <cutegen/kernel_abi.h>

CUTEGEN_DECLARE_ABI();

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor *outputs,
				  int num_outputs, const double *scalars, int num_scalars,
				  void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
	return 2;
}
