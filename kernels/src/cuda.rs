//! CUDA C sources specialised per shape (docs/gpu.md).
//!
//! The templates in `kernels/cuda/` are written once for every shape; [`source`] prepends a
//! shape's constants as `#define MK_*` lines, so NVRTC compiles each shape into kernels with
//! every dimension fixed, as `manaka_net!` does for the CPU. The constants come from
//! `manaka-shapes` ([`Shape::blocks`], [`Shape::perspective_width`], ...), the one tensor
//! table (SPEC §7), so the kernels cannot disagree with the weight file about a size.
//!
//! The kernels, launched in this order for a batch of leaves (docs/gpu.md has the data
//! flow):
//!
//! | kernel | grid | does |
//! |---|---|---|
//! | [`Kernel::Accumulate`] | (batch, 2) | tokens → the head input `u`, per perspective (SPEC §4–6) |
//! | [`Kernel::Hidden1`] | (⌈H/64⌉, ⌈batch/64⌉) | `h1 = act(W1 u + b1)`, a batched GEMM |
//! | [`Kernel::Hidden2`] | (⌈H2/64⌉, ⌈batch/64⌉) | `h2 = act(W2 h1 + b2)` (shapes with `h2`) |
//! | [`Kernel::Outputs`] | (batch) | value logit, and a policy logit per legal move |
//!
//! Every block has [`THREADS`] threads. The batch's inputs travel as one array of `u32`
//! laid out by [`PackedLayout`].

use manaka_shapes::formula::{LSE_FLOOR, MOVE_FEATURES, RMS_EPS};
use manaka_shapes::{BlockKind, MOVE_CLASSES, ORIGINS, POLICY_LABELS, PowerGroup, SQUARES, Shape};
use std::fmt::Write as _;

/// Threads per block of every kernel.
pub const THREADS: u32 = 256;
/// Rows (leaves) and columns (hidden units) of one GEMM tile.
pub const GEMM_TILE: u32 = 64;
/// Token slots per leaf and perspective in the packed inputs: the most tokens a perspective
/// can have active (SPEC §3: 40 native and KP, 38 HalfKP).
pub const MAX_TOKENS: usize = 40;

const COMMON: &str = include_str!("../cuda/common.cuh");
const ACCUMULATE: &str = include_str!("../cuda/accumulate.cu");
const HEAD: &str = include_str!("../cuda/head.cu");
const EMULATE_PRELUDE: &str = include_str!("../cuda/emulate.hpp");
const EMULATE_LAUNCH: &str = include_str!("../cuda/emulate_launch.cpp");

/// A kernel of the specialised source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    Accumulate,
    Hidden1,
    Hidden2,
    Outputs,
}

impl Kernel {
    /// Every kernel, in launch order.
    pub const ALL: [Kernel; 4] = [
        Kernel::Accumulate,
        Kernel::Hidden1,
        Kernel::Hidden2,
        Kernel::Outputs,
    ];

    /// The kernel's `extern "C"` name.
    pub const fn name(self) -> &'static str {
        match self {
            Kernel::Accumulate => "manaka_accumulate",
            Kernel::Hidden1 => "manaka_hidden1",
            Kernel::Hidden2 => "manaka_hidden2",
            Kernel::Outputs => "manaka_outputs",
        }
    }

    /// Whether `shape`'s source defines this kernel (`Hidden2` only with `h2`).
    pub fn exists_for(self, shape: &Shape) -> bool {
        self != Kernel::Hidden2 || shape.h2.is_some()
    }
}

/// Where each part of a batch's packed inputs starts, in `u32` words (common.cuh has the
/// same layout as macros).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PackedLayout {
    /// `[batch][2]`: active token count, plus the own-token count `<< 16` (for `split`);
    /// perspective 0 is the side to move.
    pub counts: usize,
    /// `[batch][2][MAX_TOKENS]`: token ids, own tokens first under `split`.
    pub tokens: usize,
    /// `[batch + 1]`: index of each leaf's first move; the last entry is the move count.
    pub move_start: usize,
    /// `[moves]`: `label | feature << 16`, the feature `kind · 82 + from` or [`NO_FEATURE`]
    /// (SPEC §5; [`pack_move`]).
    pub moves: usize,
    /// Words in all.
    pub len: usize,
}

impl PackedLayout {
    /// The layout for `batch` leaves with `moves` moves in all.
    pub fn new(batch: usize, moves: usize) -> PackedLayout {
        let tokens = 2 * batch;
        let move_start = tokens + 2 * batch * MAX_TOKENS;
        let first_move = move_start + batch + 1;
        PackedLayout {
            counts: 0,
            tokens,
            move_start,
            moves: first_move,
            len: first_move + moves,
        }
    }
}

/// The packed feature of a move with no piece at its origin: it reads no `policy.from`
/// entry, as in every evaluator (`manaka_runtime::formula::move_feature`).
pub const NO_FEATURE: u32 = 0xffff;

/// One policy move as the kernels read it: its label (0..2187) and the index of its
/// `policy.from` entry ([`manaka_shapes::formula::move_feature`]), or [`NO_FEATURE`] for none.
pub fn pack_move(label: u16, feature: Option<usize>) -> u32 {
    let feature = feature.map_or(NO_FEATURE, |f| {
        assert!(f < MOVE_FEATURES, "policy.from has {MOVE_FEATURES} entries");
        f as u32
    });
    u32::from(label) | (feature << 16)
}

/// The CUDA C source of `shape`'s kernels: its constants, then the templates.
pub fn source(shape: &Shape) -> String {
    let mut out = defines(shape);
    for part in [COMMON, ACCUMULATE, HEAD] {
        out.push_str(part);
        out.push('\n');
    }
    out
}

/// `source(shape)` wrapped for the host emulation: a C++20 translation unit that g++ builds
/// into a shared library exporting `mk_emu_launch` (see `cuda/emulate.hpp`). Test support.
pub fn emulation_source(shape: &Shape) -> String {
    let mut out = String::from(EMULATE_PRELUDE);
    out.push('\n');
    out.push_str(&source(shape));
    out.push_str(EMULATE_LAUNCH);
    out
}

/// The `#define` lines of `shape`.
fn defines(shape: &Shape) -> String {
    let blocks = shape.blocks();
    let dims = shape.dims();
    let g = dims.g as u64;
    let flag = |b: bool| u64::from(b);
    let mut offsets = Vec::with_capacity(blocks.len());
    let mut at = 0u64;
    for b in &blocks {
        offsets.push(at);
        at += b.width;
    }
    let widths: Vec<u64> = blocks.iter().map(|b| b.width).collect();
    // Index of power block (group, k) at [group · O + k − 1], in Shape::blocks() order.
    let power: Vec<usize> = (0..g)
        .flat_map(|gi| (1..=shape.order).map(move |k| (gi, k)))
        .map(|(gi, k)| {
            let group = match (shape.split, gi) {
                (false, _) => PowerGroup::All,
                (true, 0) => PowerGroup::Own,
                (true, _) => PowerGroup::Opp,
            };
            blocks
                .iter()
                .position(|b| b.kind == BlockKind::Power { group, k })
                .unwrap_or(0)
        })
        .collect();
    let find = |kind: BlockKind| -> (i64, i64) {
        blocks
            .iter()
            .position(|b| b.kind == kind)
            .map_or((-1, -1), |i| (i as i64, offsets[i] as i64))
    };
    let list = |v: &[u64]| -> String {
        let items: Vec<String> = v.iter().map(u64::to_string).collect();
        format!("{{{}}}", items.join(", "))
    };

    let mut s = String::new();
    let _ = writeln!(
        s,
        "// Manaka CUDA kernels for shape `{shape}`, generated by manaka_kernels::cuda::source \
         from the templates in kernels/cuda/."
    );
    let mut def = |name: &str, value: String| {
        let _ = writeln!(s, "#define MK_{name} {value}");
    };
    // Every size from the one `Dims` the macro and the CPU engines also read.
    for (name, value) in dims.fields() {
        if name != "PAIR_ROWS" {
            def(name, value.to_string());
        }
    }
    def("SPLIT", flag(shape.split).to_string());
    def("KS", flag(shape.ks).to_string());
    def("NNUE", flag(shape.nnue).to_string());
    def("NB", blocks.len().to_string());
    def("BLOCK_WIDTH_SUM", at.to_string());
    def("BLOCK_WIDTHS", list(&widths));
    def("BLOCK_OFFSETS", list(&offsets));
    let power: Vec<u64> = power.iter().map(|&i| i as u64).collect();
    def("POWER_BLOCKS", list(&power));
    for (name, kind) in [
        ("PAIR", BlockKind::PairLinear),
        ("LSE", BlockKind::PairLse),
        ("MOMENT", BlockKind::Moment),
        ("FIELD", BlockKind::Field),
    ] {
        let (index, offset) = find(kind);
        def(&format!("BLOCK_{name}"), index.to_string());
        def(&format!("OFFSET_{name}"), offset.to_string());
    }
    def("MAX_TOKENS", MAX_TOKENS.to_string());
    def("THREADS", THREADS.to_string());
    def("SQUARES", SQUARES.to_string());
    def("LABELS", POLICY_LABELS.to_string());
    def("CLASSES", MOVE_CLASSES.to_string());
    def("ORIGINS", ORIGINS.to_string());
    def("NO_FEATURE", format!("{NO_FEATURE}u"));
    // The spec's epsilon and floor from `manaka_shapes::formula`, printed so that they parse
    // back to the same double and float.
    def("RMS_EPS", format!("{RMS_EPS:e}"));
    def("FLT_MIN", format!("{LSE_FLOOR:e}f"));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use manaka_shapes::formula;

    fn shape(name: &str) -> Shape {
        Shape::parse(name).expect("valid shape")
    }

    fn define(src: &str, name: &str) -> String {
        let prefix = format!("#define MK_{name} ");
        src.lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .unwrap_or_else(|| panic!("no MK_{name}"))
            .to_string()
    }

    #[test]
    fn baseline_constants_come_from_the_tensor_table() {
        let s = source(&shape("pair16_d128_o3_h512"));
        assert_eq!(define(&s, "T"), "2344");
        assert_eq!(define(&s, "IN"), "800");
        assert_eq!(define(&s, "INP"), "400");
        assert_eq!(define(&s, "NB"), "4");
        assert_eq!(define(&s, "BLOCK_OFFSETS"), "{0, 128, 256, 384}");
        assert_eq!(define(&s, "BLOCK_PAIR"), "3");
        assert_eq!(define(&s, "OFFSET_PAIR"), "384");
        assert_eq!(define(&s, "BLOCK_LSE"), "-1");
        assert_eq!(define(&s, "H2"), "0");
        assert!(s.contains("manaka_accumulate") && s.contains("manaka_outputs"));
    }

    /// The power-block table follows `Shape::blocks()` (SPEC §5 order: own e1..eo, then
    /// opponent e1..eo with `split`), and the offsets of the other blocks are where
    /// `blocks()` puts them.
    #[test]
    fn block_tables_follow_shape_blocks() {
        let s = source(&shape("pair16_d32_o3_h64_m4_f2_lse4_ks_split"));
        assert_eq!(define(&s, "G"), "2");
        assert_eq!(define(&s, "POWER_BLOCKS"), "{0, 1, 2, 3, 4, 5}");
        // 6 power blocks of 32, pair 12, lse 4, moments 10, field 162.
        assert_eq!(
            define(&s, "BLOCK_WIDTHS"),
            "{32, 32, 32, 32, 32, 32, 12, 4, 10, 162}"
        );
        assert_eq!(define(&s, "OFFSET_LSE"), "204");
        assert_eq!(define(&s, "OFFSET_MOMENT"), "208");
        assert_eq!(define(&s, "OFFSET_FIELD"), "218");
        assert_eq!(define(&s, "BLOCK_WIDTH_SUM"), "380");
        // ks adds one scalar per block.
        assert_eq!(define(&s, "INP"), "390");
    }

    #[test]
    fn nnue_has_no_blocks() {
        let s = source(&shape("pair0_d256_o1_h32_h232_halfkp_nnue"));
        assert_eq!(define(&s, "NNUE"), "1");
        assert_eq!(define(&s, "NB"), "0");
        assert_eq!(define(&s, "INP"), "256");
        assert_eq!(define(&s, "H2"), "32");
        assert!(Kernel::Hidden2.exists_for(&shape("pair0_d256_o1_h32_h232_halfkp_nnue")));
        assert!(!Kernel::Hidden2.exists_for(&shape("pair16_d128_o3_h512")));
    }

    #[test]
    fn packed_layout_matches_the_kernel_macros() {
        // common.cuh: tokens at 2·batch, move_start at 2·batch·(1 + MAX_TOKENS), moves after
        // batch + 1 entries.
        let l = PackedLayout::new(3, 10);
        assert_eq!((l.counts, l.tokens), (0, 6));
        assert_eq!(l.move_start, 2 * 3 * (1 + MAX_TOKENS));
        assert_eq!(l.moves, l.move_start + 4);
        assert_eq!(l.len, l.moves + 10);
        let c = COMMON;
        assert!(c.contains("#define MK_PACKED_TOKENS(batch) ((size_t)2 * (size_t)(batch))"));
        assert!(c.contains(
            "#define MK_PACKED_MOVE_START(batch) ((size_t)2 * (size_t)(batch) * (1 + MK_MAX_TOKENS))"
        ));
        assert!(c.contains(
            "#define MK_PACKED_MOVES(batch) (MK_PACKED_MOVE_START(batch) + (size_t)(batch) + 1)"
        ));
    }

    #[test]
    fn moves_pack_label_and_origin() {
        // Black's 7g7f is label 59; a pawn (kind 0) from 7g (sq 60).
        assert_eq!(
            pack_move(59, Some(formula::move_feature(0, 60))),
            59 | (60 << 16)
        );
        // A rook drop: kind 6, origin 81.
        let rook_drop = formula::move_feature(6, formula::DROP_ORIGIN);
        assert_eq!(
            pack_move(2000, Some(rook_drop)),
            2000 | ((6 * 82 + 81) << 16)
        );
        assert_eq!(pack_move(7, None), 7 | (0xffff << 16));
    }

    #[test]
    fn epsilon_and_floor_are_the_formula_modules() {
        let s = source(&shape("pair16_d128_o3_h512"));
        assert_eq!(define(&s, "RMS_EPS").parse::<f64>(), Ok(RMS_EPS));
        let floor = define(&s, "FLT_MIN");
        assert_eq!(
            floor.trim_end_matches('f').parse::<f32>(),
            Ok(f32::MIN_POSITIVE)
        );
        // Defined once, by the generator, not again by a template.
        assert_eq!(s.matches("#define MK_RMS_EPS").count(), 1);
        assert_eq!(s.matches("#define MK_FLT_MIN").count(), 1);
    }
}
