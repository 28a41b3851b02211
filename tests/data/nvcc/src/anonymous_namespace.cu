// a kernel in an anonymous namespace with `using namespace cute`: nvcc's host stub names the
// anonymous namespace, which CuTe's own anonymous namespaces make ambiguous
#include <cute/tensor.hpp>
using namespace cute;
namespace {
__global__ void scale(float *y) { y[0] = 1; }
}
#include <cutegen/kernel_abi.h>
CUTEGEN_DECLARE_ABI();
CUTEGEN_KERNEL int cutegen_launch(const DLTensor *in, int nin, DLTensor *out, int nout,
				  const double *sc, int nsc, void *ws, size_t wsb, cudaStream_t stream)
{
	scale<<<1, 1, 0, stream>>>((float *)out[0].data);
	return 0;
}
