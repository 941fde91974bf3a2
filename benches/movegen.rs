//! Move generation benchmarks: perft on fixed positions, Manaka beside shunsai 0.1.2 (the
//! fastest Rust shogi move generator on crates.io) in the same run.

use criterion::{Criterion, criterion_group, criterion_main};
use manaka::runtime::shogi::Position;
use std::hint::black_box;
use std::ops::ControlFlow;

fn shunsai_perft(pos: &mut shunsai::Position, depth: u32) -> u64 {
    if depth == 1 {
        let mut n = 0u64;
        let _ = pos.generate_moves(|s| {
            n += s.len() as u64;
            ControlFlow::Continue(())
        });
        return n;
    }
    let mut n = 0;
    for m in pos.legal_moves() {
        let u = pos.do_move(m);
        n += shunsai_perft(pos, depth - 1);
        pos.undo_move(m, u);
    }
    n
}

fn perft(c: &mut Criterion) {
    let mut g = c.benchmark_group("perft");
    g.sample_size(10);
    g.bench_function("manaka/startpos/4", |b| {
        let mut p = Position::startpos();
        b.iter(|| assert_eq!(p.perft(black_box(4)), 719_731))
    });
    g.bench_function("shunsai/startpos/4", |b| {
        let mut p = shunsai::Position::startpos();
        b.iter(|| assert_eq!(shunsai_perft(&mut p, black_box(4)), 719_731))
    });
    g.bench_function("manaka/matsuri/2", |b| {
        let mut p = Position::from_sfen(
            "l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w GR5pnsg 1",
        )
        .unwrap();
        b.iter(|| assert_eq!(p.perft(black_box(2)), 28_684))
    });
    g.finish();
}

criterion_group!(benches, perft);
criterion_main!(benches);
