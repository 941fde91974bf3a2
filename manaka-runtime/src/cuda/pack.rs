//! A batch of leaves as the kernels read it: one array of `u32` words in the layout of
//! `manaka_kernels::cuda::PackedLayout` (tokens per perspective, then the legal moves'
//! policy labels and `policy.from` indices).

use crate::eval::Leaf;
use crate::labels::{move_feature, move_label};
use crate::tokens::{self, MAX_ACTIVE};
use manaka_kernels::cuda::{MAX_TOKENS, PackedLayout, pack_move};
use manaka_shapes::Shape;

// The kernels reserve MAX_TOKENS slots per perspective; every token list must fit.
const _: () = assert!(MAX_ACTIVE <= MAX_TOKENS);

/// Batches of at least this many leaves are packed on several threads.
const PARALLEL_FROM: usize = 256;

/// Packs `batch` into `words` (cleared first) and returns its layout.
///
/// Per leaf, perspective 0 is the side to move and 1 the other side (so the head input is
/// `[blocks(side to move), blocks(other side)]`, SPEC §5). With `split` each list holds the
/// perspective's own tokens first, and the count word carries how many (SPEC §4). Each move
/// becomes its label in the side to move's view and its `policy.from` index `kind · 82 +
/// from`, `kind` the piece before promotion, `from` relative to the side to move or 81 for a
/// drop (SPEC §5). Large batches are split into runs of leaves packed on scoped threads, each
/// writing its own parts of the array.
pub(crate) fn pack(shape: &Shape, batch: &[Leaf<'_>], words: &mut Vec<u32>) -> PackedLayout {
    let n = batch.len();
    let moves: usize = batch.iter().map(|l| l.moves.len()).sum();
    let layout = PackedLayout::new(n, moves);
    words.clear();
    words.resize(layout.len, 0);
    let (head, mut move_words) = words.split_at_mut(layout.moves);
    let (front, move_start) = head.split_at_mut(layout.move_start);
    let (mut counts, mut tokens) = front.split_at_mut(layout.tokens);
    let mut next = 0u32;
    for (slot, leaf) in move_start.iter_mut().zip(batch) {
        *slot = next;
        next += leaf.moves.len() as u32;
    }
    move_start[n] = next;
    let threads = if n >= PARALLEL_FROM {
        std::thread::available_parallelism()
            .map_or(1, |t| t.get())
            .min(n / (PARALLEL_FROM / 2))
            .max(1)
    } else {
        1
    };
    std::thread::scope(|scope| {
        for run in batch.chunks(n.div_ceil(threads).max(1)) {
            let (c, rest) = std::mem::take(&mut counts).split_at_mut(2 * run.len());
            counts = rest;
            let (t, rest) = std::mem::take(&mut tokens).split_at_mut(2 * MAX_TOKENS * run.len());
            tokens = rest;
            let run_moves = run.iter().map(|l| l.moves.len()).sum();
            let (m, rest) = std::mem::take(&mut move_words).split_at_mut(run_moves);
            move_words = rest;
            if threads == 1 {
                pack_leaves(shape, run, c, t, m);
            } else {
                scope.spawn(move || pack_leaves(shape, run, c, t, m));
            }
        }
    });
    layout
}

/// Packs a run of leaves into its parts of the array: `counts` (2 per leaf), `tokens`
/// (2 · MAX_TOKENS per leaf) and `moves` (the run's moves, in order).
fn pack_leaves(
    shape: &Shape,
    run: &[Leaf<'_>],
    counts: &mut [u32],
    tokens: &mut [u32],
    moves: &mut [u32],
) {
    let mut next_move = 0usize;
    for (i, leaf) in run.iter().enumerate() {
        let pos = leaf.position;
        let stm = pos.side_to_move();
        for (p, color) in [stm, stm.flip()].into_iter().enumerate() {
            let active = tokens::active_tokens(shape.features, pos, color);
            let ids = active.as_slice();
            let slot = &mut tokens[(2 * i + p) * MAX_TOKENS..(2 * i + p + 1) * MAX_TOKENS];
            let mut own = 0usize;
            if shape.split {
                // Own tokens first, each group in list order.
                for &t in ids.iter().filter(|&&t| tokens::is_own(shape.features, t)) {
                    slot[own] = t;
                    own += 1;
                }
                let others = ids.iter().filter(|&&t| !tokens::is_own(shape.features, t));
                for (s, &t) in slot[own..].iter_mut().zip(others) {
                    *s = t;
                }
            } else {
                slot[..ids.len()].copy_from_slice(ids);
            }
            counts[2 * i + p] = ids.len() as u32 | ((own as u32) << 16);
        }
        for &m in leaf.moves {
            let label = move_label(m, stm);
            moves[next_move] = pack_move(label, move_feature(pos, m));
            next_move += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shogi::Position;

    #[test]
    fn packs_both_perspectives_side_to_move_first_and_every_move() {
        let shape = Shape::parse("pair4_d16_o2_h32_split").unwrap();
        let mut white = Position::startpos();
        white.play_usi_moves(["7g7f"]).unwrap();
        let black = Position::startpos();
        let (bm, wm) = (black.legal_moves(), white.legal_moves());
        let batch = [
            Leaf {
                position: &black,
                moves: &bm,
            },
            Leaf {
                position: &white,
                moves: &wm,
            },
        ];
        let mut words = Vec::new();
        let l = pack(&shape, &batch, &mut words);
        assert_eq!(words.len(), l.len);
        assert_eq!(l.len, l.moves + bm.len() + wm.len());
        // 40 native tokens per perspective, 20 of them the perspective's own.
        for w in &words[l.counts..l.counts + 4] {
            assert_eq!((w & 0xffff, w >> 16), (40, 20));
        }
        // Leaf 1 (White to move): perspective 0 is White's view.
        let white_view = tokens::active_tokens(shape.features, &white, white.side_to_move());
        let slot = &words[l.tokens + 2 * MAX_TOKENS..l.tokens + 3 * MAX_TOKENS];
        let mut got = slot.to_vec();
        let mut want = white_view.as_slice().to_vec();
        assert!(
            got[..20].iter().all(|&t| tokens::is_own(shape.features, t)),
            "own tokens first"
        );
        got.sort_unstable();
        want.sort_unstable();
        assert_eq!(got, want);
        assert_eq!(words[l.move_start], 0);
        assert_eq!(words[l.move_start + 1] as usize, bm.len());
        assert_eq!(words[l.move_start + 2] as usize, bm.len() + wm.len());
        // Black's 7g7f: label 59 (SPEC §5), a pawn (kind 0) from 7g (square 60).
        let k = bm.iter().position(|m| m.to_string() == "7g7f").unwrap();
        assert_eq!(words[l.moves + k], pack_move(59, Some(60)));
        // White's 3c3d is its 7g7f once rotated: the same label and origin.
        let k = wm.iter().position(|m| m.to_string() == "3c3d").unwrap();
        assert_eq!(words[l.moves + bm.len() + k], pack_move(59, Some(60)));
    }

    /// A batch large enough to be packed on several threads packs exactly as its leaves do
    /// one at a time.
    #[test]
    fn parallel_packing_equals_packing_leaf_by_leaf() {
        let shape = Shape::parse("pair4_d16_o2_h32_split").unwrap();
        let positions = crate::random::random_positions(&crate::random::RandomPositions {
            count: 64,
            seed: 3,
            min_ply: 0,
            max_ply: 120,
        })
        .unwrap();
        let moves: Vec<_> = positions.iter().map(|p| p.legal_moves()).collect();
        let batch: Vec<Leaf<'_>> = (0..3 * PARALLEL_FROM + 5)
            .map(|i| Leaf {
                position: &positions[i % 64],
                moves: &moves[i % 64],
            })
            .collect();
        let mut words = Vec::new();
        let l = pack(&shape, &batch, &mut words);
        let mut one = Vec::new();
        for (i, leaf) in batch.iter().enumerate() {
            let k = pack(&shape, std::slice::from_ref(leaf), &mut one);
            assert_eq!(
                words[l.counts + 2 * i..l.counts + 2 * i + 2],
                one[k.counts..k.counts + 2]
            );
            let t = |x: usize| x * MAX_TOKENS;
            assert_eq!(
                words[l.tokens + t(2 * i)..l.tokens + t(2 * i + 2)],
                one[k.tokens..k.tokens + t(2)]
            );
            let first = words[l.move_start + i] as usize;
            let last = words[l.move_start + i + 1] as usize;
            assert_eq!(words[l.moves + first..l.moves + last], one[k.moves..]);
        }
    }
}
