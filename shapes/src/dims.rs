//! Every size an engine of a shape is built from, computed once (issue 17): the macro turns
//! these into the engine's constants, the float and integer engines check their constants
//! against them when weights are attached, and the CUDA generator writes them as `#define`s.

use crate::params::SQUARES;
use crate::shape::Shape;

/// The dimensions of a shape's engine (SPEC §4–7), as `usize`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dims {
    /// Token-space size `T`.
    pub t: usize,
    /// Pair-table rows `T(T−1)/2`.
    pub pair_rows: usize,
    /// Embedding width `d`.
    pub d: usize,
    /// Symmetric-polynomial order `o`.
    pub o: usize,
    /// Power-sum groups per perspective: 2 with `split`, else 1.
    pub g: usize,
    /// Pair-table width.
    pub pair: usize,
    /// Pair channels read out by log-sum-exp (the last `lse` of `pair`).
    pub lse: usize,
    /// Second-moment projection width `m` (0: none).
    pub m: usize,
    /// Second-moment triangle `m(m+1)/2`.
    pub mt: usize,
    /// Field channels per square `f` (0: none).
    pub f: usize,
    /// Field width `81·f`.
    pub ff: usize,
    /// One perspective's head input.
    pub inp: usize,
    /// The head input, `2·inp`.
    pub input: usize,
    /// First hidden width.
    pub h: usize,
    /// Second hidden width (0: none).
    pub h2: usize,
    /// The last hidden width: `h2` if present, else `h`.
    pub hl: usize,
}

impl Dims {
    /// Each field's name and value, in declaration order: what an engine reports when its
    /// constants disagree.
    pub fn fields(&self) -> [(&'static str, usize); 16] {
        [
            ("T", self.t),
            ("PAIR_ROWS", self.pair_rows),
            ("D", self.d),
            ("O", self.o),
            ("G", self.g),
            ("PAIR", self.pair),
            ("LSE", self.lse),
            ("M", self.m),
            ("MT", self.mt),
            ("F", self.f),
            ("FF", self.ff),
            ("INP", self.inp),
            ("IN", self.input),
            ("H", self.h),
            ("H2", self.h2),
            ("HL", self.hl),
        ]
    }

    /// Compares an engine's constants, named as in [`Dims::fields`], with these: the first
    /// disagreement as `NAME = have, expected want`. Every engine checks its constants here,
    /// once, at load.
    pub fn check(&self, have: &[(&str, usize)]) -> Result<(), String> {
        let fields = self.fields();
        for &(name, value) in have {
            match fields.iter().find(|(n, _)| *n == name) {
                Some(&(_, want)) if want == value => {}
                Some(&(_, want)) => return Err(format!("{name} = {value}, expected {want}")),
                None => return Err(format!("{name} is not a dimension of a shape")),
            }
        }
        Ok(())
    }
}

impl Shape {
    /// The engine dimensions of this shape (valid shapes only: every size fits in `usize`).
    pub fn dims(&self) -> Dims {
        let u = |v: u64| usize::try_from(v).expect("a valid shape's sizes fit in usize");
        let m = self.moments.unwrap_or(0) as usize;
        let f = self.field.unwrap_or(0) as usize;
        Dims {
            t: u(self.token_count()),
            pair_rows: u(self.pair_rows()),
            d: self.d as usize,
            o: self.order as usize,
            g: if self.split { 2 } else { 1 },
            pair: self.pair as usize,
            lse: self.lse.unwrap_or(0) as usize,
            m,
            mt: m * (m + 1) / 2,
            f,
            ff: SQUARES as usize * f,
            inp: u(self.perspective_width()),
            input: u(self.input_width()),
            h: self.h as usize,
            h2: self.h2.unwrap_or(0) as usize,
            hl: u(self.last_hidden()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn baseline_dims_by_hand() {
        let d = Shape::parse("pair16_d128_o3_h512").unwrap().dims();
        // 2344 native tokens (SPEC §3); 3 power blocks of 128 and the pair block of 16.
        assert_eq!((d.t, d.pair_rows), (2344, 2344 * 2343 / 2));
        assert_eq!((d.d, d.o, d.g, d.pair, d.lse), (128, 3, 1, 16, 0));
        assert_eq!((d.inp, d.input, d.h, d.h2, d.hl), (400, 800, 512, 0, 512));
        let d = Shape::parse("pair16_d32_o2_h64_h232_m4_f2_lse4_ks_split")
            .unwrap()
            .dims();
        // Blocks: own e1, e2, opp e1, e2 (32 each), pair 12, lse 4, moment 10, field 162;
        // ks adds one per block (8).
        assert_eq!((d.g, d.mt, d.ff, d.lse), (2, 10, 162, 4));
        assert_eq!(d.inp, 4 * 32 + 12 + 4 + 10 + 162 + 8);
        assert_eq!((d.h2, d.hl), (32, 32));
    }

    #[test]
    fn check_names_the_first_disagreement() {
        let d = Shape::parse("pair16_d128_o3_h512").unwrap().dims();
        assert_eq!(d.check(&[("D", 128), ("H2", 0), ("IN", 800)]), Ok(()));
        assert_eq!(
            d.check(&[("D", 128), ("H", 256), ("IN", 7)]),
            Err("H = 256, expected 512".to_string())
        );
        assert!(d.check(&[("X", 1)]).unwrap_err().contains("X"));
    }
}
