// Includes a CuTe header that does not exist (parser fixture).
#include <cute/tensor.hpp>
#include <cute/algorithm/no_such_header.hpp>

__global__ void k(float *x) { x[threadIdx.x] = 0.0f; }
