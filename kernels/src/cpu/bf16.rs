//! The bf16 affine map (issue 17; docs/evaluator.md, "Precision"): W rounded to bfloat16 once,
//! at load (half the bytes of f32), the products summed in f32. Two paths:
//!
//! - **AVX-512 BF16** (Zen 4 and later, Cooper Lake, Sapphire Rapids and later):
//!   `vdpbf16ps` multiplies 16 pairs of bfloat16s and adds both products of a pair into an
//!   f32 lane — 32 products per instruction against an FMA's 16, on weights used as stored.
//!   It multiplies bfloat16s only, so each input is rounded to bf16 (`vcvtne2ps2bf16`, ties
//!   to even, as [`Bf16::from_f32`]): at batch 1 once, before the groups
//!   ([`Blocks::row_sums`]; rounding as loaded repeated it for every group of 8 rows, and
//!   the baseline's head took 6.4 µs against 5.9), in batches as each tile is loaded. Every
//!   product of two bfloat16s is exact in f32.
//! - **Widened**, every other level: the weights widened exactly to f32 lanes as they are
//!   loaded, the inputs as they are, FMAs. Rounding the inputs here too (to compute the same
//!   products as the BF16 path) cost 1.3× at batch 1 and 1.9× at batch 16 at AVX2, in
//!   the lanes' integer operations; left out, this path is the more accurate of the two.
//!
//! Both are within the bound docs/evaluator.md gives for bf16, tested per path.
//!
//! W is stored in the order the register blocks read it ([`Bf16Matrix`]): tiles of
//! [`GROUP`] rows × [`CHUNK`] inputs, a group's tiles one after another, so the batch-1 block
//! (8 rows, one input) streams its weights as one contiguous run instead of 8 rows 2·IN bytes
//! apart — what the 64-output tiles did for the int8 copy (`int::AffineI8`). On the baseline's
//! W1 it took the BF16 path's head from 7.6 to 5.8 µs (docs/benchmarks.md).
//!
//! Miri has no model of the BF16 instructions, so under Miri that path is never chosen
//! (`mod.rs`, [`bf16_dot`](super::bf16_dot)); its memory accesses are those of the widened
//! blocks (whole tiles, and inputs below `IN / CHUNK · CHUNK`).

use super::Bf16;
use super::lanes::Lanes;

/// Rows per tile: the batch-1 register block (8 rows × 1 input); batches use half a tile,
/// 4 rows × `Lanes::TILE` inputs.
pub const GROUP: usize = 8;
/// Inputs per tile: one `vdpbf16ps` (16 lanes × 2), two AVX-512 or four AVX2 vectors.
pub const CHUNK: usize = 32;

type Tile = [Bf16; GROUP * CHUNK];

/// The bytes of an `inputs → outputs` map's bf16 copy: two per weight, the rows padded to
/// whole groups and the inputs to whole chunks.
pub const fn bf16_copy_bytes(inputs: usize, outputs: usize) -> u64 {
    (inputs.div_ceil(CHUNK) * CHUNK * outputs.div_ceil(GROUP) * GROUP * size_of::<Bf16>()) as u64
}

/// An `OUT × IN` matrix of bfloat16s in tiles of [`GROUP`] rows × [`CHUNK`] inputs: tile
/// `(g, c)` holds rows `8g..8g+8`, inputs `32c..32c+32`, row by row, and tiles are stored
/// group by group, chunk by chunk. Rows past `OUT` and inputs past `IN` (the last group's and
/// the last chunk's padding) are zero and never read as weights.
pub struct Bf16Matrix<const IN: usize, const OUT: usize> {
    tiles: Box<[Tile]>,
}

impl<const IN: usize, const OUT: usize> Bf16Matrix<IN, OUT> {
    /// Tiles per group (the last may be partly padding).
    pub const CHUNKS: usize = IN.div_ceil(CHUNK);
    /// Groups of rows (the last may be partly padding).
    pub const GROUPS: usize = OUT.div_ceil(GROUP);
    /// Whole chunks: the inputs the blocks' chains sum; the `IN % CHUNK` after them are summed
    /// one by one.
    pub(super) const FULL: usize = IN / CHUNK;
    /// The bytes the copy occupies, padding included ([`bf16_copy_bytes`]).
    pub const BYTES: u64 = bf16_copy_bytes(IN, OUT);

    /// `w` rounded to bfloat16 (`Bf16::from_f32`, ties to even) and laid out in tiles.
    pub fn new(w: &[[f32; IN]; OUT]) -> Self {
        let mut tiles = vec![[Bf16(0); GROUP * CHUNK]; Self::GROUPS * Self::CHUNKS];
        for (r, row) in w.iter().enumerate() {
            for (i, &x) in row.iter().enumerate() {
                let (t, e) = Self::place(r, i);
                tiles[t][e] = Bf16::from_f32(x);
            }
        }
        Bf16Matrix {
            tiles: tiles.into_boxed_slice(),
        }
    }

    /// Tile index and element within it of row `r`, input `i`.
    fn place(r: usize, i: usize) -> (usize, usize) {
        (
            r / GROUP * Self::CHUNKS + i / CHUNK,
            r % GROUP * CHUNK + i % CHUNK,
        )
    }

    /// The weight of row `r`, input `i`.
    ///
    /// # Panics
    /// If `r >= OUT` or `i >= IN`.
    pub fn weight(&self, r: usize, i: usize) -> Bf16 {
        assert!(
            r < OUT && i < IN,
            "weight ({r}, {i}) of a {OUT} × {IN} matrix"
        );
        let (t, e) = Self::place(r, i);
        self.tiles[t][e]
    }

    /// Group `g`'s whole tiles, [`Self::FULL`] of them.
    #[inline(always)]
    pub(super) fn full_tiles(&self, g: usize) -> &[Tile] {
        &self.tiles[g * Self::CHUNKS..g * Self::CHUNKS + Self::FULL]
    }
}

/// The register blocks of the bf16 affine map: every [`Lanes`] level's (widened weights and
/// FMAs), and AVX-512 BF16's (`vdpbf16ps`).
///
/// # Safety
/// `block` runs its level's instructions: only on a CPU that has them.
pub(super) trait Blocks {
    /// Inputs per block at batch > 1 (as [`Lanes::TILE`]).
    const TILE: usize;
    /// An input as this path's products see it (the BF16 path rounds it to bf16): what the
    /// affine map multiplies the inputs past the whole chunks by.
    fn input(x: f32) -> f32;
    /// For rows `8g + k0 .. 8g + k0 + R` of `m` and each of the `T` inputs `x`, the sum of
    /// the products over the whole chunks — one chain per pair, its lanes summed — as `[k][t]`.
    unsafe fn block<const IN: usize, const OUT: usize, const R: usize, const T: usize>(
        m: &Bf16Matrix<IN, OUT>,
        g: usize,
        k0: usize,
        x: &[[f32; IN]],
    ) -> [[f32; T]; R];
    /// Batch 1: every row's sum over the whole chunks against `x`, into `sums` — one block of
    /// the group's 8 rows per group, each row's chain as [`Blocks::block`] sums it, so the bits
    /// are those of the batched blocks.
    #[inline(always)]
    unsafe fn row_sums<const IN: usize, const OUT: usize>(
        m: &Bf16Matrix<IN, OUT>,
        x: &[f32; IN],
        sums: &mut [f32; OUT],
    ) {
        for (g, rows) in sums.chunks_mut(GROUP).enumerate() {
            // SAFETY: group g and the one input exist; the caller's features.
            let s = unsafe { Self::block::<IN, OUT, GROUP, 1>(m, g, 0, std::slice::from_ref(x)) };
            for (r, s) in rows.iter_mut().zip(s) {
                *r = s[0];
            }
        }
    }
}

impl<L: Lanes> Blocks for L {
    const TILE: usize = L::TILE;
    #[inline(always)]
    fn input(x: f32) -> f32 {
        x
    }
    #[inline(always)]
    unsafe fn block<const IN: usize, const OUT: usize, const R: usize, const T: usize>(
        m: &Bf16Matrix<IN, OUT>,
        g: usize,
        k0: usize,
        x: &[[f32; IN]],
    ) -> [[f32; T]; R] {
        // SAFETY: the caller's contract.
        unsafe { L::bf16_block::<IN, OUT, R, T>(m, g, k0, x) }
    }
}

/// `out[j] = W' · x_j + b` (`W'` the bf16 weights, `x_j` as `B` sees it); the safe wrapper has checked
/// `xs.len() == out.len()`. Group by group: at batch 1 one block of the group's 8 rows, else
/// its two halves, each against `B::TILE` inputs at a time. Each output is summed the same way
/// whatever block it falls in — its chain over the whole chunks, the lanes summed, the inputs
/// past them one by one, then the bias — so a leaf's outputs are the same bits alone or in any
/// batch (docs/evaluator.md, the state cache).
#[inline(always)]
pub(super) unsafe fn affine<B: Blocks, const IN: usize, const OUT: usize>(
    m: &Bf16Matrix<IN, OUT>,
    b: &[f32; OUT],
    xs: &[[f32; IN]],
    out: &mut [[f32; OUT]],
) {
    assert_eq!(xs.len(), out.len(), "one output row per input");
    let batch = xs.len();
    let finish = |out: &mut [[f32; OUT]], r: usize, j: usize, s: f32| {
        let x = &xs[j];
        let mut tail = 0.0f32;
        for (i, &xi) in x
            .iter()
            .enumerate()
            .skip(Bf16Matrix::<IN, OUT>::FULL * CHUNK)
        {
            tail += m.weight(r, i).to_f32() * B::input(xi);
        }
        out[j][r] = b[r] + s + tail;
    };
    if batch == 1 {
        let mut sums = [0.0f32; OUT];
        // SAFETY: B's features (the caller's contract).
        unsafe { B::row_sums(m, &xs[0], &mut sums) };
        for (r, &s) in sums.iter().enumerate() {
            finish(out, r, 0, s);
        }
        return;
    }
    for g in 0..Bf16Matrix::<IN, OUT>::GROUPS {
        let rows = GROUP.min(OUT - g * GROUP);
        for k0 in (0..rows).step_by(GROUP / 2) {
            let mut j = 0;
            while j < batch {
                let n = (batch - j).min(B::TILE);
                let x = &xs[j..j + n];
                let mut sums = [[0.0f32; 4]; GROUP / 2];
                fn take<const T: usize>(
                    dst: &mut [[f32; 4]; GROUP / 2],
                    src: [[f32; T]; GROUP / 2],
                ) {
                    for (d, s) in dst.iter_mut().zip(src) {
                        d[..T].copy_from_slice(&s);
                    }
                }
                // SAFETY: rows 8g + k0 .. + 4 lie in group g; inputs j..j+n exist; B's features.
                unsafe {
                    match n {
                        1 => take(
                            &mut sums,
                            B::block::<IN, OUT, { GROUP / 2 }, 1>(m, g, k0, x),
                        ),
                        2 => take(
                            &mut sums,
                            B::block::<IN, OUT, { GROUP / 2 }, 2>(m, g, k0, x),
                        ),
                        3 => take(
                            &mut sums,
                            B::block::<IN, OUT, { GROUP / 2 }, 3>(m, g, k0, x),
                        ),
                        _ => take(
                            &mut sums,
                            B::block::<IN, OUT, { GROUP / 2 }, 4>(m, g, k0, x),
                        ),
                    }
                }
                for (k, row) in sums.iter().enumerate().take(rows - k0) {
                    for (t, &s) in row.iter().enumerate().take(n) {
                        finish(out, g * GROUP + k0 + k, j + t, s);
                    }
                }
                j += n;
            }
        }
    }
}

/// The widened block: each tile's rows `k0..k0 + R` loaded `L::W` weights at a time, widened
/// to f32, against the inputs' lanes; FMAs. Its inner loop has the shape of the f32 block's
/// (`body::block`); sharing it through an `#[inline(always)]` step function over arrays of
/// registers was tried and made LLVM keep accumulators on the stack (f32 batch-16 head 6.0 →
/// 10.5 µs at AVX-512), so each block keeps its own loop.
// Index loops over the two small register-block dimensions read more plainly than iterators.
#[allow(clippy::needless_range_loop)]
#[inline(always)]
pub(super) unsafe fn block<
    L: Lanes,
    const IN: usize,
    const OUT: usize,
    const R: usize,
    const T: usize,
>(
    m: &Bf16Matrix<IN, OUT>,
    g: usize,
    k0: usize,
    x: &[[f32; IN]],
) -> [[f32; T]; R] {
    assert!(
        x.len() == T && k0 + R <= GROUP && CHUNK.is_multiple_of(L::W),
        "a block is R rows of one group by T inputs"
    );
    let tiles = m.full_tiles(g);
    let xp: [*const f32; T] = std::array::from_fn(|t| x[t].as_ptr());
    // SAFETY (every block below): weight loads of W elements within a tile's row k0 + k <
    // GROUP, at s + W <= CHUNK; input loads at c·CHUNK + s + W <= FULL·CHUNK <= IN; L's
    // features.
    let mut acc = unsafe { [[L::zero(); T]; R] };
    for (c, tile) in tiles.iter().enumerate() {
        let base = tile.as_ptr().cast::<u16>();
        let mut s = 0;
        while s + L::W <= CHUNK {
            unsafe {
                let mut wv = [L::zero(); R];
                for k in 0..R {
                    wv[k] = L::load_bf16(base.add((k0 + k) * CHUNK + s));
                }
                for t in 0..T {
                    let xv = L::load(xp[t].add(c * CHUNK + s));
                    for k in 0..R {
                        acc[k][t] = L::fma(wv[k], xv, acc[k][t]);
                    }
                }
            }
            s += L::W;
        }
    }
    let mut sums = [[0.0f32; T]; R];
    for k in 0..R {
        for t in 0..T {
            sums[k][t] = unsafe { L::hsum(acc[k][t]) };
        }
    }
    sums
}

#[cfg(target_arch = "x86_64")]
pub(super) use dot::Avx512Bf16;

#[cfg(target_arch = "x86_64")]
mod dot {
    use super::{Bf16, Bf16Matrix, Blocks, CHUNK, GROUP};
    use std::arch::x86_64::*;

    /// The blocks with AVX-512 BF16's dot products: per tile, each row's 32 weights are one
    /// register used as stored, the inputs are rounded by `vcvtne2ps2bf16` (ties to even), and
    /// one `vdpbf16ps` per row and input adds 32 products into 16 lanes — a row's consecutive
    /// weight pairs meet the input's consecutive pairs.
    pub struct Avx512Bf16;

    impl Blocks for Avx512Bf16 {
        /// As the AVX-512 lanes: 4 rows × 4 inputs, 16 accumulators of 32 registers.
        const TILE: usize = 4;
        #[inline(always)]
        fn input(x: f32) -> f32 {
            Bf16::from_f32(x).to_f32()
        }

        // Index loops over the two small register-block dimensions read more plainly than
        // iterators.
        #[allow(clippy::needless_range_loop)]
        #[target_feature(enable = "avx512f,avx512bw,avx512bf16,avx2,fma")]
        #[inline(never)]
        unsafe fn block<const IN: usize, const OUT: usize, const R: usize, const T: usize>(
            m: &Bf16Matrix<IN, OUT>,
            g: usize,
            k0: usize,
            x: &[[f32; IN]],
        ) -> [[f32; T]; R] {
            assert!(
                x.len() == T && k0 + R <= GROUP,
                "a block is R rows of one group by T inputs"
            );
            let tiles = m.full_tiles(g);
            let xp: [*const f32; T] = std::array::from_fn(|t| x[t].as_ptr());
            let mut acc = [[_mm512_setzero_ps(); T]; R];
            for (c, tile) in tiles.iter().enumerate() {
                let base = tile.as_ptr();
                // SAFETY: row k0 + k < GROUP of the tile is 32 bf16s (64 bytes); the inputs
                // c·32 .. c·32 + 32 lie below FULL·32 <= IN; the CPU has the features.
                unsafe {
                    let mut wv = [_mm512_setzero_si512(); R];
                    for k in 0..R {
                        wv[k] = _mm512_loadu_si512(base.add((k0 + k) * CHUNK).cast());
                    }
                    for t in 0..T {
                        // Lanes 0..16 of the result come from the second operand.
                        let xv = _mm512_cvtne2ps_pbh(
                            _mm512_loadu_ps(xp[t].add(c * CHUNK + 16)),
                            _mm512_loadu_ps(xp[t].add(c * CHUNK)),
                        );
                        for k in 0..R {
                            let wk: __m512bh = std::mem::transmute(wv[k]);
                            acc[k][t] = _mm512_dpbf16_ps(acc[k][t], wk, xv);
                        }
                    }
                }
            }
            let mut sums = [[0.0f32; T]; R];
            for k in 0..R {
                for t in 0..T {
                    sums[k][t] = _mm512_reduce_add_ps(acc[k][t]);
                }
            }
            sums
        }

        /// Batch 1 with the input rounded to bf16 once (one `vcvtne2ps2bf16` per chunk, not
        /// one per chunk and group), the rounded chunks then loaded beside each group's
        /// weights: the same products in the same order as [`Avx512Bf16::block`].
        #[target_feature(enable = "avx512f,avx512bw,avx512bf16,avx2,fma")]
        #[inline(never)]
        unsafe fn row_sums<const IN: usize, const OUT: usize>(
            m: &Bf16Matrix<IN, OUT>,
            x: &[f32; IN],
            sums: &mut [f32; OUT],
        ) {
            #[repr(C, align(64))]
            struct Rounded<const IN: usize>([Bf16; IN]);
            let mut xb = Rounded([Bf16(0); IN]);
            let full = Bf16Matrix::<IN, OUT>::FULL;
            let (xp, bp) = (x.as_ptr(), xb.0.as_mut_ptr());
            for c in 0..full {
                // SAFETY: inputs c·32 .. c·32 + 32 lie below FULL·32 <= IN, in x and xb.
                unsafe {
                    let v = _mm512_cvtne2ps_pbh(
                        _mm512_loadu_ps(xp.add(c * CHUNK + 16)),
                        _mm512_loadu_ps(xp.add(c * CHUNK)),
                    );
                    _mm512_store_si512(
                        bp.add(c * CHUNK).cast(),
                        std::mem::transmute::<__m512bh, __m512i>(v),
                    );
                }
            }
            for (g, rows) in sums.chunks_mut(GROUP).enumerate() {
                let tiles = m.full_tiles(g);
                let mut acc = [_mm512_setzero_ps(); GROUP];
                for (c, tile) in tiles.iter().enumerate() {
                    let base = tile.as_ptr();
                    // SAFETY: as in `block`; xb's chunk c is 64 bytes at a 64-byte boundary.
                    unsafe {
                        let xv: __m512bh =
                            std::mem::transmute(_mm512_load_si512(bp.add(c * CHUNK).cast()));
                        for (k, a) in acc.iter_mut().enumerate() {
                            let wk: __m512bh =
                                std::mem::transmute(_mm512_loadu_si512(base.add(k * CHUNK).cast()));
                            *a = _mm512_dpbf16_ps(*a, wk, xv);
                        }
                    }
                }
                for (r, a) in rows.iter_mut().zip(acc) {
                    *r = _mm512_reduce_add_ps(a);
                }
            }
        }
    }
}
