//! The integer kernel bodies, each written once over [`IntLanes`] and instantiated per level
//! by the entry points in `int/mod.rs` — as the f32 bodies (`cpu/body.rs`).
//!
//! Every size is a const parameter and every operand a fixed-size array, so each loop's trip
//! count is a constant of the instantiation: full registers of the level, then full
//! registers of its [`IntLanes::Half`] (AVX-512 → AVX2 → 4-byte scalar registers), then
//! single lanes, in the same function. Bodies are `#[inline(always)]`: they only exist
//! inlined into an entry point that enables their level's target features.
//!
//! # Safety
//! Every body is `unsafe` for one reason: it calls `L`'s methods, which need `L`'s CPU
//! features (see [`IntLanes`]). Memory accesses are in bounds by the array types: a register
//! load at element `i` happens only while `i` plus the register's elements is at most `N`.

use super::lanes::IntLanes;
use super::{AffineI8, TILE};

/// Registers kept in flight during one pass over the rows of an accumulator update.
const BLOCK: usize = 8;

/// `acc = base − Σ sub + Σ add`, every 16-bit lane wrapping; `base` is `acc` itself when
/// `None`. Wrapping addition is associative, so the order of the rows does not matter.
#[inline(always)]
pub(super) unsafe fn accumulate<L: IntLanes, const N: usize>(
    acc: &mut [i16; N],
    base: Option<&[i16; N]>,
    sub: &[&[i16; N]],
    add: &[&[i16; N]],
) {
    // Both pointers from one mutable borrow: a shared pointer taken before `as_mut_ptr`
    // would be invalidated by it (Miri's Stacked Borrows).
    let dst = acc.as_mut_ptr();
    let src = base.map_or(dst.cast_const(), |b| b.as_ptr());
    // SAFETY: L's features (module doc); every pass stays within N elements.
    let mut i = unsafe { accumulate_from::<L, N>(dst, src, sub, add, 0) };
    i = unsafe { accumulate_from::<L::Half, N>(dst, src, sub, add, i) };
    while i < N {
        // SAFETY: i < N for the accumulator, the source and every row.
        unsafe {
            let mut v = *src.add(i);
            for r in sub {
                v = v.wrapping_sub(r[i]);
            }
            for r in add {
                v = v.wrapping_add(r[i]);
            }
            *dst.add(i) = v;
        }
        i += 1;
    }
}

/// Elements `from..` of an accumulation in passes of [`BLOCK`] registers of `L`, then of one
/// register, as long as a full register fits; returns where it stopped.
#[inline(always)]
unsafe fn accumulate_from<L: IntLanes, const N: usize>(
    dst: *mut i16,
    src: *const i16,
    sub: &[&[i16; N]],
    add: &[&[i16; N]],
    from: usize,
) -> usize {
    let lanes = L::BYTES / 2;
    let mut i = from;
    // SAFETY (both loops): each pass covers i .. i + V·lanes <= N; L's features.
    while i + BLOCK * lanes <= N {
        unsafe { accumulate_pass::<L, N, BLOCK>(dst, src, sub, add, i) };
        i += BLOCK * lanes;
    }
    while i + lanes <= N {
        unsafe { accumulate_pass::<L, N, 1>(dst, src, sub, add, i) };
        i += lanes;
    }
    i
}

/// `V` registers from element `start`: loaded from the source, every row subtracted or
/// added, stored once.
#[inline(always)]
unsafe fn accumulate_pass<L: IntLanes, const N: usize, const V: usize>(
    dst: *mut i16,
    src: *const i16,
    sub: &[&[i16; N]],
    add: &[&[i16; N]],
    start: usize,
) {
    let lanes = L::BYTES / 2;
    // SAFETY (all loads and stores): start + V·lanes <= N for the accumulator, the source and
    // every row (the caller's loop bound); L's features.
    unsafe {
        let mut r = [L::zero(); V];
        for (k, v) in r.iter_mut().enumerate() {
            *v = L::load(src.add(start + k * lanes).cast());
        }
        for row in sub {
            let p = row.as_ptr();
            for (k, v) in r.iter_mut().enumerate() {
                *v = L::sub_i16(*v, L::load(p.add(start + k * lanes).cast()));
            }
        }
        for row in add {
            let p = row.as_ptr();
            for (k, v) in r.iter_mut().enumerate() {
                *v = L::add_i16(*v, L::load(p.add(start + k * lanes).cast()));
            }
        }
        for (k, v) in r.iter().enumerate() {
            L::store(dst.add(start + k * lanes).cast(), *v);
        }
    }
}

/// `out[i] = clamp(acc[i], 0, 127)` as bytes.
#[inline(always)]
pub(super) unsafe fn clip_i16<L: IntLanes, const N: usize>(acc: &[i16; N], out: &mut [u8; N]) {
    let o = out.as_mut_ptr();
    // SAFETY: L's features; in bounds (clip_from).
    let mut i = unsafe { clip_from::<L, N>(acc, o, 0) };
    i = unsafe { clip_from::<L::Half, N>(acc, o, i) };
    while i < N {
        // SAFETY: i < N.
        unsafe { *o.add(i) = acc[i].clamp(0, 127) as u8 };
        i += 1;
    }
}

/// Elements `from..` of a clip, one register of bytes (two of i16) at a time.
#[inline(always)]
unsafe fn clip_from<L: IntLanes, const N: usize>(
    acc: &[i16; N],
    out: *mut u8,
    from: usize,
) -> usize {
    let (step, a) = (L::BYTES, acc.as_ptr());
    let mut i = from;
    while i + step <= N {
        // SAFETY: i + step <= N for both arrays (step bytes out, step i16 in two registers).
        unsafe {
            let lo = L::load(a.add(i).cast());
            let hi = L::load(a.add(i + step / 2).cast());
            L::store(out.add(i), L::clip_i16(lo, hi));
        }
        i += step;
    }
    i
}

/// `out[i] = clamp(y[i] >> CRELU_SHIFT, 0, 127)` (arithmetic shift: floor division).
#[inline(always)]
pub(super) unsafe fn crelu_i32<L: IntLanes, const N: usize>(y: &[i32; N], out: &mut [u8; N]) {
    let o = out.as_mut_ptr();
    // SAFETY: L's features; in bounds (crelu_from).
    let mut i = unsafe { crelu_from::<L, N>(y, o, 0) };
    i = unsafe { crelu_from::<L::Half, N>(y, o, i) };
    while i < N {
        // SAFETY: i < N.
        unsafe { *o.add(i) = (y[i] >> super::CRELU_SHIFT).clamp(0, 127) as u8 };
        i += 1;
    }
}

/// Elements `from..` of a clipped ReLU, one register of bytes (four of i32) at a time.
#[inline(always)]
unsafe fn crelu_from<L: IntLanes, const N: usize>(
    y: &[i32; N],
    out: *mut u8,
    from: usize,
) -> usize {
    let (step, p) = (L::BYTES, y.as_ptr());
    let mut i = from;
    while i + step <= N {
        // SAFETY: i + step <= N for both arrays (step bytes out, step i32 in four registers).
        unsafe {
            let quarter = |k: usize| L::load(p.add(i + k * step / 4).cast());
            let v = L::crelu_i32([quarter(0), quarter(1), quarter(2), quarter(3)]);
            L::store(out.add(i), v);
        }
        i += step;
    }
    i
}

/// `Σ x[i]·w[i]`, wrapping in 32 bits (exact products for `x` <= 127).
#[inline(always)]
pub(super) unsafe fn dot_u8i8<L: IntLanes, const N: usize>(x: &[u8; N], w: &[i8; N]) -> i32 {
    // SAFETY: L's features; in bounds (dot_from).
    let (s, i) = unsafe { dot_from::<L, N>(x, w, 0) };
    let (t, i) = unsafe { dot_from::<L::Half, N>(x, w, i) };
    let mut sum = s.wrapping_add(t);
    for j in i..N {
        sum = sum.wrapping_add(i32::from(x[j]) * i32::from(w[j]));
    }
    sum
}

/// The dot product of elements `from..` over full registers, and where it stopped.
#[inline(always)]
unsafe fn dot_from<L: IntLanes, const N: usize>(
    x: &[u8; N],
    w: &[i8; N],
    from: usize,
) -> (i32, usize) {
    let (px, pw) = (x.as_ptr(), w.as_ptr().cast::<u8>());
    // SAFETY: register loads at i while i + BYTES <= N; L's features.
    let mut acc = unsafe { L::zero() };
    let mut i = from;
    while i + L::BYTES <= N {
        acc = unsafe { L::dpbusd(acc, L::load(px.add(i)), L::load(pw.add(i))) };
        i += L::BYTES;
    }
    (unsafe { L::hsum_i32(acc) }, i)
}

/// An affine layer `out = b + W x`, summed in 32 bits (wrapping): output blocks of `L`
/// registers (each input group of four bytes broadcast once and multiplied with the packed
/// columns of the block's outputs, [`AffineI8`]'s layout), then blocks of `L::Half`, then
/// single outputs; the inputs past the last group of four are added to every output at the
/// end.
#[inline(always)]
pub(super) unsafe fn affine<L: IntLanes, const IN: usize, const OUT: usize>(
    layer: &AffineI8<IN, OUT>,
    x: &[u8; IN],
    out: &mut [i32; OUT],
) {
    let o = out.as_mut_ptr();
    // SAFETY: L's features; in bounds (affine_from).
    let mut first = unsafe { affine_from::<L, IN, OUT>(layer, x, o, 0) };
    first = unsafe { affine_from::<L::Half, IN, OUT>(layer, x, o, first) };
    for r in first..OUT {
        let mut s = layer.biases[r];
        for g in 0..IN / 4 {
            let (w, xg) = (
                &layer.packed[AffineI8::<IN, OUT>::group(g, r)],
                &x[4 * g..4 * g + 4],
            );
            for (&w, &x) in w.iter().zip(xg) {
                s = s.wrapping_add(i32::from(x) * i32::from(w));
            }
        }
        // SAFETY: r < OUT.
        unsafe { *o.add(r) = s };
    }
    // The inputs past the last full group, row-major per output (`AffineI8::tail`).
    if !IN.is_multiple_of(4) {
        for (r, w) in layer.tail.iter().enumerate() {
            let mut s = 0i32;
            for (k, &w) in w.iter().take(IN % 4).enumerate() {
                s = s.wrapping_add(i32::from(x[IN / 4 * 4 + k]) * i32::from(w));
            }
            // SAFETY: r < OUT (one tail row per output).
            unsafe { *o.add(r) = (*o.add(r)).wrapping_add(s) };
        }
    }
}

/// Outputs `from..` in blocks of 4, 2 and 1 registers of `L` while a register fits; returns
/// the first output left.
#[inline(always)]
unsafe fn affine_from<L: IntLanes, const IN: usize, const OUT: usize>(
    layer: &AffineI8<IN, OUT>,
    x: &[u8; IN],
    out: *mut i32,
    from: usize,
) -> usize {
    let per = L::BYTES / 4;
    let mut r = from;
    // SAFETY (every block): r + R·per <= OUT; L's features.
    unsafe {
        while r + 4 * per <= OUT {
            affine_block::<L, IN, OUT, 4>(layer, x, out, r);
            r += 4 * per;
        }
        while r + 2 * per <= OUT {
            affine_block::<L, IN, OUT, 2>(layer, x, out, r);
            r += 2 * per;
        }
        while r + per <= OUT {
            affine_block::<L, IN, OUT, 1>(layer, x, out, r);
            r += per;
        }
    }
    r
}

/// Outputs `r..r + R·per` (`per` = 32-bit lanes of `L`), with [`IntLanes::PARTIALS`]
/// interleaved partial sums per register (the branch is on a constant of `L`).
#[inline(always)]
unsafe fn affine_block<L: IntLanes, const IN: usize, const OUT: usize, const R: usize>(
    layer: &AffineI8<IN, OUT>,
    x: &[u8; IN],
    out: *mut i32,
    r: usize,
) {
    // SAFETY: the caller's bounds; L's features.
    unsafe {
        if L::PARTIALS == 4 {
            affine_partials::<L, IN, OUT, R, 4>(layer, x, out, r)
        } else {
            affine_partials::<L, IN, OUT, R, 1>(layer, x, out, r)
        }
    }
}

/// [`affine_block`] with `U` partial sums per register: group `g` goes to partial `g % U`
/// (the groups past the last multiple of `U` to the first), and the partials are added at
/// the end — wrapping addition is associative, so the integers are the same.
#[inline(always)]
unsafe fn affine_partials<
    L: IntLanes,
    const IN: usize,
    const OUT: usize,
    const R: usize,
    const U: usize,
>(
    layer: &AffineI8<IN, OUT>,
    x: &[u8; IN],
    out: *mut i32,
    r: usize,
) {
    let per = L::BYTES / 4;
    let groups = IN / 4;
    // Group g's columns for outputs r.. are R registers at (start + g·width + r % TILE)·4
    // bytes: r's tile holds [IN / 4][width][4] bytes from group `start` (the block lies
    // inside one tile: blocks start at multiples of their width, a power of two ≤ TILE).
    let (start, width) = AffineI8::<IN, OUT>::tile(r);
    debug_assert!(r % TILE + R * per <= width);
    let packed = layer.packed.as_ptr().cast::<u8>();
    let (xp, bias) = (x.as_ptr(), layer.biases.as_ptr());
    // SAFETY (every access): r + R·per <= OUT, so every column load stays inside group g's
    // OUT·4 bytes and the bias loads and output stores inside OUT i32s; x has 4·groups bytes;
    // L's features.
    unsafe {
        let mut acc = [[L::zero(); R]; U];
        for (k, a) in acc[0].iter_mut().enumerate() {
            *a = L::load(bias.add(r + k * per).cast());
        }
        let step = |acc: &mut [L::V; R], g: usize| {
            let xv = L::splat_i32(xp.add(4 * g).cast::<i32>().read_unaligned());
            let col = packed.add((start + g * width + r % TILE) * 4);
            for (k, a) in acc.iter_mut().enumerate() {
                *a = L::dpbusd(*a, xv, L::load(col.add(k * L::BYTES)));
            }
        };
        let whole = groups / U * U;
        let mut g = 0;
        while g < whole {
            for (u, partial) in acc.iter_mut().enumerate() {
                step(partial, g + u);
            }
            g += U;
        }
        while g < groups {
            step(&mut acc[0], g);
            g += 1;
        }
        for k in 0..R {
            let mut s = acc[0][k];
            for partial in &acc[1..] {
                s = L::add_i32(s, partial[k]);
            }
            L::store(out.add(r + k * per).cast(), s);
        }
    }
}
