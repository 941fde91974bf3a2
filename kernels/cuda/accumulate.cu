// Accumulate: each leaf's token lists → the head input u (SPEC §4–6). Follows common.cuh.
//
// Grid (batch, 2): block (leaf, perspective) builds that perspective's half of u, perspective
// 0 being the side to move, so u = [blocks(side to move), blocks(other side)] as SPEC §5
// orders it. Manaka arithmetic: every aggregate block is summed over the active tokens in
// double, written raw, then RMS-normalised with its gains once the block's sum of squares is
// known; with `ks` the log-RMS scalars follow the blocks. NNUE arithmetic: clip(b + Σ E[z]).
// The side to move's raw field is also written to `stm_field` for the policy's field term.

#if !MK_NNUE
// The normalised blocks of one perspective, in `Shape::blocks()` order: width and offset in
// the perspective's half of u (the same offset indexes the concatenated gains), and for
// power block (group g, order k) its index, at [g * O + k - 1].
__constant__ int mk_block_width[MK_NB] = MK_BLOCK_WIDTHS;
__constant__ int mk_block_offset[MK_NB] = MK_BLOCK_OFFSETS;
__constant__ int mk_power_block[MK_G * MK_O] = MK_POWER_BLOCKS;
#endif

extern "C" __global__ void __launch_bounds__(MK_THREADS) manaka_accumulate(
    const unsigned* __restrict__ packed,     // the batch's inputs (common.cuh)
    const float* __restrict__ embed,         // [T][D]
    const float* __restrict__ embed_bias,    // [D] (nnue)
    const float* __restrict__ pair,          // [T(T-1)/2][PAIR]
    const float* __restrict__ moment_proj,   // [T][M]
    const float* __restrict__ field,         // [T][81 F]
    const float* __restrict__ gains,         // every block's norm gains, in block order
    float* __restrict__ u,                   // [batch][IN]
    float* __restrict__ stm_field,           // [batch][81 F]
    int batch) {
    const int leaf = blockIdx.x;
    const int persp = blockIdx.y;
    const int t = threadIdx.x;
    if (leaf >= batch) {
        return;  // the whole block leaves together
    }
    __shared__ unsigned tok[MK_MAX_TOKENS];
    const unsigned count_word = packed[MK_PACKED_COUNTS(batch) + (size_t)leaf * 2 + persp];
    const int n = min((int)(count_word & 0xffffu), MK_MAX_TOKENS);
    const int n_own = min((int)(count_word >> 16), n);
    const unsigned* ids = packed + MK_PACKED_TOKENS(batch) + ((size_t)leaf * 2 + persp) * MK_MAX_TOKENS;
    for (int i = t; i < n; i += MK_THREADS) {
        tok[i] = ids[i];
    }
    __syncthreads();
    float* out = u + (size_t)leaf * MK_IN + (size_t)persp * MK_INP;
    (void)n_own;
    (void)embed_bias;
    (void)pair;
    (void)moment_proj;
    (void)field;
    (void)gains;
    (void)stm_field;

#if MK_NNUE
    // SPEC §6: acc = b_ft + Σ_z E[z]; u = clip(acc) to [0, 1].
    for (int c = t; c < MK_D; c += MK_THREADS) {
        double s = (double)embed_bias[c];
        for (int i = 0; i < n; ++i) {
            s += (double)embed[(size_t)tok[i] * MK_D + c];
        }
        out[c] = (float)fmin(fmax(s, 0.0), 1.0);
    }
#else
    __shared__ double scratch[MK_THREADS];
    __shared__ double reduced;
    __shared__ double rms[MK_NB];
    // This thread's share of each block's sum of squares.
    double sq[MK_NB];
#pragma unroll
    for (int b = 0; b < MK_NB; ++b) {
        sq[b] = 0.0;
    }

    // Power sums p_k = Σ E[z]^k per channel and group, then e_1..e_O by Newton's identities:
    // e_0 = 1, k·e_k = Σ_{i=1..k} (−1)^(i−1) e_(k−i) p_i (SPEC §4). With `split` the own
    // tokens come first in the list, n_own of them.
    for (int c = t; c < MK_D; c += MK_THREADS) {
#pragma unroll
        for (int g = 0; g < MK_G; ++g) {
            const int lo = (MK_G == 2 && g == 1) ? n_own : 0;
            const int hi = (MK_G == 2 && g == 0) ? n_own : n;
            double p[MK_O];
#pragma unroll
            for (int k = 0; k < MK_O; ++k) {
                p[k] = 0.0;
            }
            for (int i = lo; i < hi; ++i) {
                const double e = (double)embed[(size_t)tok[i] * MK_D + c];
                double x = e;
#pragma unroll
                for (int k = 0; k < MK_O; ++k) {
                    p[k] += x;
                    x *= e;
                }
            }
            double el[MK_O + 1];
            el[0] = 1.0;
#pragma unroll
            for (int k = 1; k <= MK_O; ++k) {
                double s = 0.0;
#pragma unroll
                for (int i = 1; i <= k; ++i) {
                    const double term = el[k - i] * p[i - 1];
                    s += (i & 1) ? term : -term;
                }
                el[k] = s / (double)k;
            }
#pragma unroll
            for (int k = 1; k <= MK_O; ++k) {
                const int b = mk_power_block[g * MK_O + k - 1];
                out[mk_block_offset[b] + c] = (float)el[k];
#pragma unroll
                for (int bb = 0; bb < MK_NB; ++bb) {
                    if (bb == b) {
                        sq[bb] += el[k] * el[k];
                    }
                }
            }
        }
    }

#if MK_PAIR > 0
    // Pair block: the sum of the rows of all unordered pairs of distinct active ids,
    // row(a, b) = b(b−1)/2 + a for a < b (SPEC §4). Thread t sums channel t % PAIR over the
    // pairs q ≡ t / PAIR (mod groups); the groups' sums are then added in group order.
    {
        const int groups = MK_THREADS / MK_PAIR;
        const int c = t % MK_PAIR;
        const int grp = t / MK_PAIR;
        const int npairs = n * (n - 1) / 2;
        double s = 0.0;
        if (grp < groups) {
            for (int q = grp; q < npairs; q += groups) {
                // q enumerates (i, j), i < j, as q = j(j−1)/2 + i.
                int j = (int)((1.0f + sqrtf(1.0f + 8.0f * (float)q)) * 0.5f);
                while (j * (j - 1) / 2 > q) {
                    --j;
                }
                while ((j + 1) * j / 2 <= q) {
                    ++j;
                }
                const int i = q - j * (j - 1) / 2;
                unsigned a = tok[i];
                unsigned b = tok[j];
                if (a == b) {
                    continue;  // equal ids never form a row (the diagonal, SPEC §3–4)
                }
                if (a > b) {
                    const unsigned x = a;
                    a = b;
                    b = x;
                }
                const size_t row = (size_t)b * (size_t)(b - 1) / 2 + (size_t)a;
                s += (double)pair[row * MK_PAIR + c];
            }
        }
        scratch[t] = s;
        __syncthreads();
        if (t < MK_PAIR) {
            double total = 0.0;
            for (int g = 0; g < groups; ++g) {
                total += scratch[g * MK_PAIR + t];
            }
#if MK_BLOCK_PAIR >= 0
            if (t < MK_PAIR - MK_LSE) {
                out[MK_OFFSET_PAIR + t] = (float)total;
                sq[MK_BLOCK_PAIR] += total * total;
            }
#endif
#if MK_BLOCK_LSE >= 0
            if (t >= MK_PAIR - MK_LSE) {
                // The last lse channels hold exp(x); the readout is ln of the sum, floored at
                // the smallest normal float so that it stays finite (SPEC §4).
                const double v = log(fmax(total, (double)MK_FLT_MIN));
                out[MK_OFFSET_LSE + t - (MK_PAIR - MK_LSE)] = (float)v;
                sq[MK_BLOCK_LSE] += v * v;
            }
#endif
        }
        __syncthreads();
    }
#endif

#if MK_M > 0
    // Second moments Σ v vᵀ, upper triangle row-major (SPEC §4); row a starts at
    // a·M − a(a−1)/2.
    {
        __shared__ float v[MK_MAX_TOKENS * MK_M];
        for (int x = t; x < n * MK_M; x += MK_THREADS) {
            v[x] = moment_proj[(size_t)tok[x / MK_M] * MK_M + x % MK_M];
        }
        __syncthreads();
        for (int e = t; e < MK_MT; e += MK_THREADS) {
            int a = 0;
            while (e >= (a + 1) * MK_M - (a + 1) * a / 2) {
                ++a;
            }
            const int b = a + e - (a * MK_M - a * (a - 1) / 2);
            double s = 0.0;
            for (int i = 0; i < n; ++i) {
                s += (double)v[i * MK_M + a] * (double)v[i * MK_M + b];
            }
            out[MK_OFFSET_MOMENT + e] = (float)s;
            sq[MK_BLOCK_MOMENT] += s * s;
        }
    }
#endif

#if MK_F > 0
    // Square field F[s][c] = Σ_z K[z][s][c], square-major (SPEC §4).
    for (int e = t; e < MK_FF; e += MK_THREADS) {
        double s = 0.0;
        for (int i = 0; i < n; ++i) {
            s += (double)field[(size_t)tok[i] * MK_FF + e];
        }
        out[MK_OFFSET_FIELD + e] = (float)s;
        sq[MK_BLOCK_FIELD] += s * s;
        if (persp == 0) {
            stm_field[(size_t)leaf * MK_FF + e] = (float)s;
        }
    }
#endif

    // RMS of every block: sqrt(mean(x²) + 1e-6) (SPEC §5).
#pragma unroll
    for (int b = 0; b < MK_NB; ++b) {
        const double total = mk_block_sum(sq[b], scratch, &reduced);
        if (t == 0) {
            rms[b] = sqrt(total / (double)mk_block_width[b] + MK_RMS_EPS);
        }
    }
    __syncthreads();
    // x̂_i = g_i · x_i / rms of x's block. The gains of all blocks are concatenated in block
    // order, so a value and its gain share one index.
    for (int i = t; i < MK_BLOCK_WIDTH_SUM; i += MK_THREADS) {
        int b = 0;
        while (b + 1 < MK_NB && i >= mk_block_offset[b + 1]) {
            ++b;
        }
        out[i] = (float)((double)gains[i] * (double)out[i] / rms[b]);
    }
#if MK_KS
    // With `ks`, one scalar per block after the blocks: ln(rms) (SPEC §5).
    for (int b = t; b < MK_NB; b += MK_THREADS) {
        out[MK_BLOCK_WIDTH_SUM + b] = (float)log(rms[b]);
    }
#endif
#endif
}
