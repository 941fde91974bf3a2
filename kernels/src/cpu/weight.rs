//! The low-precision numbers of a head's weight copies (issue 17 item 3; docs/evaluator.md,
//! "Precision"): [`Bf16`], the bfloat16 of the bf16 affine map (`bf16.rs`), and
//! `quantize_i8`, the int8 rows of the integer path (`int::quantized`).

/// A bfloat16 number: the high 16 bits of an f32 (8 exponent bits, 7 mantissa bits).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Bf16(pub u16);

impl Bf16 {
    /// The nearest bfloat16 to `x` (ties to even), so `|to_f32 − x| ≤ 2^-8·|x|` for normal
    /// `x`; NaN stays NaN.
    pub fn from_f32(x: f32) -> Bf16 {
        let bits = x.to_bits();
        if x.is_nan() {
            return Bf16((bits >> 16) as u16 | 0x40);
        }
        let round = 0x7fff + ((bits >> 16) & 1);
        Bf16((bits.wrapping_add(round) >> 16) as u16)
    }

    /// The f32 of the same value (exact).
    pub fn to_f32(self) -> f32 {
        f32::from_bits(u32::from(self.0) << 16)
    }
}

/// `row` as int8 steps of one scale, `row[i] ≈ scale · q[i]`: the scale maps the row's largest
/// magnitude to 127 and each value rounds to the nearest step, so `|scale·q[i] − row[i]| ≤
/// scale / 2`. A row of zeros gets scale 0.
pub fn quantize_i8<const N: usize>(row: &[f32; N]) -> ([i8; N], f32) {
    let max = row.iter().fold(0.0f32, |m, &x| m.max(x.abs()));
    if max == 0.0 || !max.is_finite() {
        return ([0; N], if max == 0.0 { 0.0 } else { f32::NAN });
    }
    let scale = max / 127.0;
    let q = std::array::from_fn(|i| (row[i] / scale).round().clamp(-127.0, 127.0) as i8);
    (q, scale)
}
