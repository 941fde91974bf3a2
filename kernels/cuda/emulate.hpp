// Host emulation of the Manaka CUDA kernels: test support only (docs/gpu.md, "Checks").
//
// `manaka_kernels::cuda::emulation_source(shape)` puts this prelude before a shape's kernel
// source and emulate_launch.cpp after it; g++ compiles the whole as C++20 into a shared
// library whose `mk_emu_launch` runs a kernel on host memory. Each block of the grid runs on
// MK_THREADS real threads, `__syncthreads()` is a barrier among them, and `__shared__`
// variables are statics shared by those threads (blocks run one after another), which is all
// the kernels rely on (common.cuh). The tests drive this library through the same host code
// that drives the GPU, so the kernels' arithmetic, the packing of the batch and the launch
// sequence are checked against the reference evaluator on machines without a GPU.

#include <barrier>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

struct dim3 {
    unsigned x, y, z;
};

static thread_local dim3 threadIdx;
static thread_local dim3 blockIdx;
static std::barrier<>* mk_emu_barrier = nullptr;

static inline void __syncthreads() { mk_emu_barrier->arrive_and_wait(); }

// The C library's math functions (sqrt, log, fmax, fmaf, ...) stand in for CUDA's; integer
// min and max come from the standard library.
using std::max;
using std::min;

#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
#define __constant__ static const
#define __restrict__ __restrict
#define __launch_bounds__(n)
