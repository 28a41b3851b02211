/*
 * A stand-in for builtin/gemm_simt.cu in tests/e2e/builtin_fallback.sh (CUTEGEN_BUILTIN_DIR):
 * the family the run falls back to (its recorded evaluations pass). Plain CUDA.
 * cutegen-space: CG_P_TILE=128x128,64x64 CG_P_SPLIT_K=1,2
 * cutegen-start: CG_P_TILE=128x128 CG_P_SPLIT_K=1
 * cutegen-stages: tile=CG_P_TILE split=CG_P_SPLIT_K
 */
#include <cutegen/kernel_abi.h>

CUTEGEN_DECLARE_ABI();

CUTEGEN_KERNEL int cutegen_launch(const DLTensor *inputs, int num_inputs, DLTensor *outputs,
				  int num_outputs, const double *scalars, int num_scalars,
				  void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
	return num_inputs == 2 && num_outputs == 1 ? 0 : 1;
}
