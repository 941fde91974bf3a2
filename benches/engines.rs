//! Criterion benches of `manaka_net!` engines: one group per shape, for a representative
//! subset of the CLI's compiled-in shapes (the baseline, the NNUE shape and the tiny one;
//! `manaka bench` measures every compiled-in shape).
//!
//! Per shape: `refresh` (both accumulators from scratch), `update/{quiet,capture,drop,king}`
//! (one incremental update; under HalfKP a king move rebuilds the mover's perspective),
//! `head` (value only, batch of one), `policy` (value and every legal move's logit),
//! `batch_head/N` (N leaves sharing one pass over W1; reported per batch, with the element
//! throughput giving leaves per second). Weights are random (`weights::init`, seed 1): speed
//! does not depend on the values.
//!
//! `cargo bench --bench engines`; one shape: `cargo bench --bench engines -- pair16_d128_o3_h512`;
//! the SIMD level follows `MANAKA_SIMD` (default: the best this CPU has).

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use manaka::manaka_net;
use manaka::runtime::eval::Leaf;
use manaka::runtime::network::{Network, StateLeaf};
use manaka::runtime::shogi::{Move, PieceKind, Position};
use manaka::runtime::weights::{TensorSource, init};
use manaka::shapes::Shape;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

manaka_net!(Baseline = "pair16_d128_o3_h512");
manaka_net!(Nnue = "pair0_d256_o1_h32_h232_halfkp_nnue");
manaka_net!(Tiny = "pair4_d16_o2_h32");

/// A middle-game position with Black to move that has a quiet move, a capture (8g8f,
/// 2d2c+), a drop (Black holds a bishop) and a king move.
const MOVES: &str = "7g7f 3c3d 8h2b+ 3a2b 2g2f 8c8d 2f2e 8d8e 2e2d 8e8f";

fn position() -> Position {
    let mut pos = Position::startpos();
    pos.play_usi_moves(MOVES.split(' ')).expect("legal moves");
    pos
}

/// The first legal move of each kind the update benches need.
fn move_kinds(pos: &Position) -> [(&'static str, Move); 4] {
    let legal = pos.legal_moves();
    let is_king = |m: &Move| {
        m.from()
            .and_then(|f| pos.piece_at(f))
            .is_some_and(|p| p.kind == PieceKind::King)
    };
    let is_capture = |m: &Move| pos.piece_at(m.to()).is_some();
    let find = |what: &str, f: &dyn Fn(&Move) -> bool| -> Move {
        *legal
            .iter()
            .find(|m| f(m))
            .unwrap_or_else(|| panic!("the bench position has no {what}"))
    };
    [
        (
            "quiet",
            find("quiet move", &|m| {
                !m.is_drop() && !is_capture(m) && !is_king(m)
            }),
        ),
        (
            "capture",
            find("capture", &|m| is_capture(m) && !is_king(m)),
        ),
        ("drop", find("drop", &|m| m.is_drop())),
        ("king", find("king move", &|m| is_king(m) && !is_capture(m))),
    ]
}

fn bench_engine<N: Network>(c: &mut Criterion, net: N) {
    let name = net.shape().to_string();
    let pos = position();
    let legal = pos.legal_moves();
    let state = net.new_state(&pos);
    let mut g = c.benchmark_group(&name);
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(2));
    g.sample_size(30);

    let mut scratch = state.clone();
    g.bench_function("refresh", |b| {
        b.iter(|| {
            net.refresh(&mut scratch, black_box(&pos));
        })
    });
    for (kind, m) in move_kinds(&pos) {
        let mut after = pos.clone();
        let effect = after.do_move(m);
        // The state copy is setup, not timed: an update changes the state it is given.
        g.bench_function(format!("update/{kind}"), |b| {
            b.iter_batched_ref(
                || state.clone(),
                |s| net.update(s, black_box(&effect), &after),
                BatchSize::SmallInput,
            )
        });
    }
    g.bench_function("head", |b| {
        b.iter(|| {
            net.evaluate(
                &state,
                Leaf {
                    position: &pos,
                    moves: &[],
                },
            )
        })
    });
    g.throughput(Throughput::Elements(legal.len() as u64));
    g.bench_function("policy", |b| {
        b.iter(|| {
            net.evaluate(
                &state,
                Leaf {
                    position: &pos,
                    moves: &legal,
                },
            )
        })
    });
    let mut out = Vec::new();
    for n in [1usize, 4, 16, 64] {
        let batch: Vec<StateLeaf<'_, N::State>> = (0..n)
            .map(|_| StateLeaf {
                state: &state,
                leaf: Leaf {
                    position: &pos,
                    moves: &[],
                },
            })
            .collect();
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(format!("batch_head/{n}"), |b| {
            b.iter(|| net.evaluate_batch(black_box(&batch), &mut out))
        });
    }
    g.finish();
}

fn source(shape: &Shape) -> Arc<dyn TensorSource + Send + Sync> {
    Arc::new(init::random_weights(shape, 1))
}

fn engines(c: &mut Criterion) {
    // One shape's weights at a time: the baseline's pair table alone is 175 MB.
    bench_engine(
        c,
        Baseline::from_source(source(&Baseline::shape())).expect("random weights fit"),
    );
    bench_engine(
        c,
        Nnue::from_source(source(&Nnue::shape())).expect("random weights fit"),
    );
    bench_engine(
        c,
        Tiny::from_source(source(&Tiny::shape())).expect("random weights fit"),
    );
}

criterion_group!(benches, engines);
criterion_main!(benches);
