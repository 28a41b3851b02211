/*
 * The cutegen kernel contract (docs/kernel-abi.md is the full text).
 *
 * A candidate is one CUDA C++17 file that includes this header and defines
 *
 *   CUTEGEN_KERNEL int cutegen_launch(const DLTensor *inputs, int num_inputs,
 *                                     DLTensor *outputs, int num_outputs,
 *                                     const double *scalars, int num_scalars,
 *                                     void *workspace, size_t workspace_bytes,
 *                                     cudaStream_t stream);
 *
 * Tensors come in the order `cutegen task show NAME` lists them: contiguous row-major device
 * tensors (strides given, never NULL), shapes as PyTorch holds them. It launches its work on
 * `stream` and returns 0, or nonzero when it cannot handle the arguments. It must not
 * synchronize the device, create streams or events, allocate memory, call cuBLAS/cuDNN or
 * prebuilt CUTLASS GEMMs, touch files or the environment, or keep results between calls.
 *
 * A kernel that needs scratch memory also defines cutegen_workspace_bytes(); the runner then
 * allocates that much once and passes it to every call.
 */
#ifndef CUTEGEN_KERNEL_ABI_H
#define CUTEGEN_KERNEL_ABI_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime.h>
#include <dlpack/dlpack.h>

#define CUTEGEN_ABI_VERSION 1

#ifdef __cplusplus
#define CUTEGEN_KERNEL extern "C" __attribute__((visibility("default")))
#else
#define CUTEGEN_KERNEL __attribute__((visibility("default")))
#endif

typedef int (*cutegen_launch_fn)(const DLTensor *inputs, int num_inputs, DLTensor *outputs,
				 int num_outputs, const double *scalars, int num_scalars,
				 void *workspace, size_t workspace_bytes, cudaStream_t stream);
typedef size_t (*cutegen_workspace_fn)(const DLTensor *inputs, int num_inputs,
				       const DLTensor *outputs, int num_outputs,
				       const double *scalars, int num_scalars);

/* Every candidate states the ABI version it was written for. */
#define CUTEGEN_DECLARE_ABI() CUTEGEN_KERNEL const int cutegen_abi_version = CUTEGEN_ABI_VERSION

#endif
