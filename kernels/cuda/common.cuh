// Shared definitions of the Manaka CUDA kernels (docs/gpu.md).
//
// `manaka_kernels::cuda::source(shape)` concatenates: the shape's constants as `#define MK_*`,
// this file, accumulate.cu and head.cu. NVRTC compiles the result with no include path, so
// nothing here includes a header; the same text also compiles as host C++ under
// emulate.hpp, which is how the kernels' arithmetic is tested on machines without a GPU.
//
// Rules every kernel follows, so that both compilers accept it and results are reproducible:
// - one block size, MK_THREADS (256), and only block-wide barriers (`__syncthreads`) with
//   every thread of the block reaching each one: no warp shuffles, no early exit before a
//   barrier except when the whole block leaves together;
// - reductions run in a fixed order (a tree over shared memory), so a batch evaluates to the
//   same bits on every run;
// - sums over tokens and pairs accumulate in double, as the reference evaluator does
//   (SPEC §4); the dense layers accumulate in float with fused multiply-adds.

// The batch's packed inputs: one array of 32-bit words, uploaded in one copy (SPEC §3–5 data,
// prepared on the host by manaka-runtime's `cuda::pack`):
//   counts     [batch][2]              active tokens | own tokens << 16, perspective 0 = the
//                                      side to move, 1 = the other side
//   tokens     [batch][2][MK_MAX_TOKENS] token ids (with `split`, own tokens first)
//   move_start [batch + 1]             the first move of each leaf; the last entry is the total
//   moves      [total]                 policy label | (kind * 82 + from) << 16, or
//                                      MK_NO_FEATURE << 16 when the origin is empty
#define MK_PACKED_COUNTS(batch) ((size_t)0)
#define MK_PACKED_TOKENS(batch) ((size_t)2 * (size_t)(batch))
#define MK_PACKED_MOVE_START(batch) ((size_t)2 * (size_t)(batch) * (1 + MK_MAX_TOKENS))
#define MK_PACKED_MOVES(batch) (MK_PACKED_MOVE_START(batch) + (size_t)(batch) + 1)

// MK_RMS_EPS (SPEC §5) and MK_FLT_MIN (the floor of the lse readout, Rust's
// f32::MIN_POSITIVE) are defined by the generator from manaka_shapes::formula.

// Sum of one double per thread over the block, the same value returned to every thread.
// The order is fixed: each of MK_THREADS / 32 threads sums 32 consecutive entries, then
// thread 0 sums those partials. `scratch` holds MK_THREADS doubles of shared memory.
__device__ __forceinline__ double mk_block_sum(double v, double* scratch, double* result) {
    const int t = threadIdx.x;
    scratch[t] = v;
    __syncthreads();
    if (t < MK_THREADS / 32) {
        double s = 0.0;
        for (int i = 0; i < 32; ++i) {
            s += scratch[t * 32 + i];
        }
        scratch[t * 32] = s;
    }
    __syncthreads();
    if (t == 0) {
        double s = 0.0;
        for (int w = 0; w < MK_THREADS / 32; ++w) {
            s += scratch[w * 32];
        }
        *result = s;
    }
    __syncthreads();
    return *result;
}

// The activation after every hidden layer: ReLU in Manaka arithmetic (SPEC §5), the clip to
// [0, 1] in NNUE arithmetic (SPEC §6).
__device__ __forceinline__ float mk_activate(float x) {
#if MK_NNUE
    return fminf(fmaxf(x, 0.0f), 1.0f);
#else
    return fmaxf(x, 0.0f);
#endif
}
