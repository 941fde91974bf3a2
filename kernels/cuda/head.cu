// Head: hidden layers as batched GEMMs, then value and policy (SPEC §5–6). Follows
// common.cuh.

// Dense layer for the whole batch: out[r][c] = act(bias[c] + Σ_k in[r][k] · w[c][k]), with
// `w` row-major [N][K] as in the weight file (each output unit's row contiguous), `in`
// [rows][K] and `out` [rows][N]. One block computes a 64 × 64 tile of `out` (64 leaves × 64
// units), 4 × 4 per thread, stepping through K in slices of 16 staged in shared memory; each
// weight element is read from global memory once per 64 leaves. Accumulation is in float,
// in k order, with fused multiply-adds.
#define MK_TILE_ROWS 64
#define MK_TILE_COLS 64
#define MK_TILE_K 16

template <int K, int N>
__device__ __forceinline__ void mk_dense(const float* __restrict__ in, const float* __restrict__ w,
                                         const float* __restrict__ bias, float* __restrict__ out,
                                         int rows) {
    __shared__ float in_tile[MK_TILE_K][MK_TILE_ROWS + 4];
    __shared__ float w_tile[MK_TILE_K][MK_TILE_COLS + 4];
    const int t = threadIdx.x;
    const int tc = t % 16;  // this thread's 4 columns: tc * 4 ..
    const int tr = t / 16;  // this thread's 4 rows: tr * 4 ..
    const int row0 = blockIdx.y * MK_TILE_ROWS;
    const int col0 = blockIdx.x * MK_TILE_COLS;
    float acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            acc[i][j] = 0.0f;
        }
    }
    for (int k0 = 0; k0 < K; k0 += MK_TILE_K) {
        // 16 consecutive threads read 16 consecutive k of one row: 64-byte segments.
        const int kk = t % MK_TILE_K;
        const int gk = k0 + kk;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int r = t / MK_TILE_K + 16 * i;
            const int gr = row0 + r;
            const int gc = col0 + r;
            in_tile[kk][r] = (gr < rows && gk < K) ? in[(size_t)gr * K + gk] : 0.0f;
            w_tile[kk][r] = (gc < N && gk < K) ? w[(size_t)gc * K + gk] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < MK_TILE_K; ++k) {
            float a[4];
            float b[4];
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                a[i] = in_tile[k][tr * 4 + i];
                b[i] = w_tile[k][tc * 4 + i];
            }
#pragma unroll
            for (int i = 0; i < 4; ++i) {
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
                }
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int r = row0 + tr * 4 + i;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int c = col0 + tc * 4 + j;
            if (r < rows && c < N) {
                out[(size_t)r * N + c] = mk_activate(acc[i][j] + bias[c]);
            }
        }
    }
}

// h1 = act(W1 u + b1). Grid (ceil(H / 64), ceil(batch / 64)).
extern "C" __global__ void __launch_bounds__(MK_THREADS) manaka_hidden1(
    const float* __restrict__ u, const float* __restrict__ w1, const float* __restrict__ b1,
    float* __restrict__ h1, int batch) {
    mk_dense<MK_IN, MK_H>(u, w1, b1, h1, batch);
}

#if MK_H2 > 0
// h2 = act(W2 h1 + b2). Grid (ceil(H2 / 64), ceil(batch / 64)).
extern "C" __global__ void __launch_bounds__(MK_THREADS) manaka_hidden2(
    const float* __restrict__ h1, const float* __restrict__ w2, const float* __restrict__ b2,
    float* __restrict__ h2, int batch) {
    mk_dense<MK_H, MK_H2>(h1, w2, b2, h2, batch);
}
#endif

// Value and policy of every leaf. Grid (batch): block `leaf` reads its last hidden vector
// into shared memory; the value logit is w_v · h + b_v; the policy logit of each of the leaf's
// moves is W_p[label] · h + b_p[label] + PF[kind][from] + Σ_j F_stm[to][j] · U[class][j], with
// to = label mod 81, class = label / 81 and F_stm the raw field of the side to move (SPEC §5).
// Moves are scored 32 at a time: 8 threads per move, each summing every 8th element of the
// row (so the 8 read adjacent words), then one thread adds the 8 partials in order.
extern "C" __global__ void __launch_bounds__(MK_THREADS) manaka_outputs(
    const unsigned* __restrict__ packed,       // the batch's inputs (common.cuh)
    const float* __restrict__ hidden,          // [batch][HL]
    const float* __restrict__ value_w,         // [HL]
    const float* __restrict__ value_b,         // [1]
    const float* __restrict__ policy_w,        // [2187][HL]
    const float* __restrict__ policy_b,        // [2187]
    const float* __restrict__ policy_from,     // [14][82]
    const float* __restrict__ policy_field,    // [27][F]
    const float* __restrict__ stm_field,       // [batch][81 F]
    float* __restrict__ out,                   // value [batch], then policy [total moves]
    int batch) {
    const int leaf = blockIdx.x;
    const int t = threadIdx.x;
    if (leaf >= batch) {
        return;  // the whole block leaves together
    }
    __shared__ float h[MK_HL];
    __shared__ double scratch[MK_THREADS];
    __shared__ double reduced;
    __shared__ float partial[MK_THREADS];
    for (int i = t; i < MK_HL; i += MK_THREADS) {
        h[i] = hidden[(size_t)leaf * MK_HL + i];
    }
    __syncthreads();
    double v = 0.0;
    for (int i = t; i < MK_HL; i += MK_THREADS) {
        v += (double)value_w[i] * (double)h[i];
    }
    v = mk_block_sum(v, scratch, &reduced);
    if (t == 0) {
        out[leaf] = (float)(v + (double)value_b[0]);
    }

    const unsigned* move_start = packed + MK_PACKED_MOVE_START(batch);
    const unsigned* moves = packed + MK_PACKED_MOVES(batch);
    float* policy = out + batch;
    const int first = (int)move_start[leaf];
    const int end = (int)move_start[leaf + 1];
    const int lane = t % 8;
    const int slot = t / 8;  // 32 moves per round
    (void)stm_field;
    (void)policy_field;
    for (int m0 = first; m0 < end; m0 += MK_THREADS / 8) {
        const int m = m0 + slot;
        float s = 0.0f;
        if (m < end) {
            const unsigned label = moves[m] & 0xffffu;
            const float* row = policy_w + (size_t)label * MK_HL;
            for (int i = lane; i < MK_HL; i += 8) {
                s = fmaf(row[i], h[i], s);
            }
        }
        partial[t] = s;
        __syncthreads();
        if (t < MK_THREADS / 8 && m0 + t < end) {
            const int mm = m0 + t;
            const unsigned word = moves[mm];
            const unsigned label = word & 0xffffu;
            const unsigned from_index = word >> 16;
            float dot = 0.0f;
            for (int l = 0; l < 8; ++l) {
                dot += partial[t * 8 + l];
            }
            // A move with no piece at its origin reads no policy.from entry (as on the CPU).
            float logit = dot + policy_b[label]
                + (from_index == MK_NO_FEATURE ? 0.0f : policy_from[from_index]);
#if MK_F > 0
            const unsigned to = label % MK_SQUARES;
            const unsigned cls = label / MK_SQUARES;
            const float* f = stm_field + (size_t)leaf * MK_FF + (size_t)to * MK_F;
            const float* uu = policy_field + (size_t)cls * MK_F;
            float ft = 0.0f;
            for (int j = 0; j < MK_F; ++j) {
                ft = fmaf(f[j], uu[j], ft);
            }
            logit += ft;
#endif
            policy[mm] = logit;
        }
        __syncthreads();
    }
}
