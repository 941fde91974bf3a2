//! Move generation benchmarks: perft on fixed positions, Manaka beside shunsai 0.1.2 (the
//! fastest Rust shogi move generator on crates.io) in the same run, both bulk-counting the
//! last ply. `scripts/perft-vs.sh` adds fairy-stockfish to the comparison.

#[path = "common/shunsai.rs"]
mod shunsai_adapter;

use criterion::{Criterion, criterion_group, criterion_main};
use manaka::runtime::shogi::Position;
use std::hint::black_box;

/// (name, SFEN, depth, nodes): the perft positions of issue 2.
const CASES: &[(&str, &str, u32, u64)] = &[
    ("startpos/4", "startpos", 4, 719_731),
    ("startpos/5", "startpos", 5, 19_861_490),
    (
        "matsuri/3",
        "l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w GR5pnsg 1",
        3,
        4_809_015,
    ),
    (
        "max593/3",
        "R8/2K1S1SSk/4B4/9/9/9/9/9/1L1L1L3 b RBGSNLP3g3n17p 1",
        3,
        53_393_368,
    ),
];

fn perft(c: &mut Criterion) {
    let mut g = c.benchmark_group("perft");
    g.sample_size(10);
    for &(name, sfen, depth, nodes) in CASES {
        let start = Position::from_sfen(sfen).unwrap();
        g.bench_function(format!("manaka/{name}"), |b| {
            let mut p = start.clone();
            b.iter(|| assert_eq!(p.perft(black_box(depth)), nodes))
        });
        g.bench_function(format!("shunsai/{name}"), |b| {
            let mut p = shunsai_adapter::to_shunsai(&start);
            b.iter(|| assert_eq!(shunsai_adapter::perft(&mut p, black_box(depth)), nodes))
        });
    }
    g.finish();
}

/// Legal-move generation alone, into a list, on the same positions.
fn generate(c: &mut Criterion) {
    let mut g = c.benchmark_group("legal_moves");
    for &(name, sfen, _, _) in CASES.iter().filter(|c| !c.0.starts_with("startpos/5")) {
        let pos = Position::from_sfen(sfen).unwrap();
        let name = name.split('/').next().unwrap();
        g.bench_function(format!("manaka/{name}"), |b| {
            b.iter(|| black_box(&pos).legal_moves().len())
        });
        let s = shunsai_adapter::to_shunsai(&pos);
        g.bench_function(format!("shunsai/{name}"), |b| {
            b.iter(|| black_box(&s).legal_moves().len())
        });
    }
    g.finish();
}

/// The early-stopping questions (`has_legal_moves`, `is_legal`) beside the full generation
/// they used to run (`count_legal_moves() > 0` is the former `has_legal_moves` exactly). The
/// mated position has no move to stop at: its figures are the early stop's overhead.
fn early_stop(c: &mut Criterion) {
    let mut g = c.benchmark_group("early_stop");
    g.measurement_time(std::time::Duration::from_secs(3));
    g.warm_up_time(std::time::Duration::from_secs(1));
    let cases = [
        ("startpos", "startpos"),
        ("matsuri", CASES[2].1),
        ("max593", CASES[3].1),
        ("mated", "4k4/4G4/4P4/9/9/9/9/9/4K4 w RBGSNLP 1"),
    ];
    for (name, sfen) in cases {
        let pos = Position::from_sfen(sfen).unwrap();
        g.bench_function(format!("count_legal_moves>0/{name}"), |b| {
            b.iter(|| black_box(&pos).count_legal_moves() > 0)
        });
        g.bench_function(format!("has_legal_moves/{name}"), |b| {
            b.iter(|| black_box(&pos).has_legal_moves())
        });
        // The first move generated (a king step where there is one) and the last (a drop
        // where there are drops): the probe's best and worst cases.
        let legal = pos.legal_moves();
        for (which, m) in [("first", legal.first()), ("last", legal.last())] {
            if let Some(&m) = m {
                g.bench_function(format!("is_legal_{which}/{name}"), |b| {
                    b.iter(|| black_box(&pos).is_legal(black_box(m)))
                });
            }
        }
    }
    g.finish();
}

criterion_group!(benches, perft, generate, early_stop);
criterion_main!(benches);
