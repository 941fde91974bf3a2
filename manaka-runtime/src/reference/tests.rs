use super::*;
use crate::random::SplitMix64;
use crate::weights::{WeightSet, init};

fn shape(s: &str) -> Shape {
    Shape::parse(s).unwrap()
}

fn net_of(ws: WeightSet) -> ReferenceNet {
    ReferenceNet::new(Arc::new(ws)).unwrap()
}

/// Brute-force e_k: the sum over all k-subsets of the product of their members.
fn brute_elementary(x: &[f64], k: usize) -> f64 {
    fn rec(x: &[f64], k: usize, start: usize) -> f64 {
        if k == 0 {
            return 1.0;
        }
        (start..x.len()).map(|i| x[i] * rec(x, k - 1, i + 1)).sum()
    }
    rec(x, k, 0)
}

#[test]
fn newton_identities_equal_brute_force_elementary_polynomials() {
    let mut rng = SplitMix64::new(7);
    for n in [1usize, 2, 5, 9, 12] {
        let x: Vec<f64> = (0..n)
            .map(|_| rng.below(2001) as f64 / 1000.0 - 1.0)
            .collect();
        let p: Vec<f64> = (1..=8).map(|k| x.iter().map(|v| v.powi(k)).sum()).collect();
        let e = head::newton(&p);
        for k in 1..=8 {
            let want = brute_elementary(&x, k);
            assert!(
                (e[k - 1] - want).abs() <= 1e-9 * (1.0 + want.abs()),
                "n={n} k={k}: {} vs {want}",
                e[k - 1]
            );
        }
    }
}

/// Incremental updates along random games equal a refresh (relative error ≤ 1e-6), for
/// every block type and all three token spaces, king moves under HalfKP included.
#[test]
fn incremental_equals_refresh_along_random_games() {
    let shapes = [
        "pair2_d4_o3_h8_h24_m3_f2_lse1_ks_split", // native: every block
        "pair2_d4_o2_h8_m2_f1_kp",                // kp with pair, moments, field
        "pair0_d4_o4_h8_halfkp",                  // halfkp (no pair/field allowed)
        "pair0_d8_o1_h8_h24_halfkp_nnue",         // nnue arithmetic
    ];
    let mut rng = SplitMix64::new(0xfeed);
    let mut checked = 0u64;
    for (si, s) in shapes.iter().enumerate() {
        let sh = shape(s);
        let net = net_of(init::random_weights(&sh, 11 + si as u64));
        let games = 60;
        for g in 0..games {
            let mut pos = if g % 5 == 0 {
                Position::from_sfen("lnsgkgsnl/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1")
                    .unwrap()
            } else {
                Position::startpos()
            };
            let mut state = net.refresh(&pos);
            for _ in 0..300 {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                let m = moves[rng.below(moves.len() as u64) as usize];
                let e = pos.do_move(m);
                net.update(&mut state, &e, &pos);
                let fresh = net.refresh(&pos);
                for c in 0..2 {
                    assert_close(&state.acc[c], &fresh.acc[c], s);
                }
                checked += 1;
            }
            // The outputs agree too (through the whole head).
            let moves = pos.legal_moves();
            let a = net.evaluate(&state, &pos, &moves);
            let b = net.evaluate_position(&pos, &moves);
            assert!((a.value_logit - b.value_logit).abs() <= 1e-6 * (1.0 + b.value_logit.abs()));
        }
    }
    assert!(checked > 40_000, "{checked} plies checked");
}

fn assert_close(a: &Accumulator, b: &Accumulator, what: &str) {
    let mut ta = a.tokens.clone();
    let mut tb = b.tokens.clone();
    ta.sort_unstable();
    tb.sort_unstable();
    assert_eq!(ta, tb, "{what}: token sets");
    let pairs = a
        .power
        .iter()
        .flatten()
        .flatten()
        .zip(b.power.iter().flatten().flatten())
        .chain(a.pair.iter().zip(&b.pair))
        .chain(a.moments.iter().zip(&b.moments))
        .chain(a.field.iter().zip(&b.field))
        .chain(a.nnue.iter().zip(&b.nnue));
    for (x, y) in pairs {
        assert!(
            (x - y).abs() <= 1e-6 * (1.0 + y.abs()),
            "{what}: {x} vs {y}"
        );
    }
}

/// Sets every element of tensor `name` to `v`.
fn fill(ws: &mut WeightSet, name: &str, v: f32) {
    ws.tensor_mut(name)
        .unwrap_or_else(|| panic!("{name}"))
        .fill(v);
}

#[test]
fn nnue_arithmetic_by_hand() {
    // acc = b_ft + Σ E; u = [clip(acc_stm), clip(acc_nstm)]; h = clip(W1 u + b1); ℓ = w·h + b.
    let sh = shape("pair0_d2_o1_h1_kp_nnue");
    let mut ws = WeightSet::zeros(&sh);
    ws.tensor_mut("embed.bias")
        .unwrap()
        .copy_from_slice(&[0.25, 2.0]);
    // Black's own king on 5i is KP token 1548 + 44 (from Black's view; from White's view it is
    // the opponent's king on 80 − 44 = 36 → 1548 + 81 + 36).
    let e = ws.tensor_mut("embed").unwrap();
    e[(1548 + 44) * 2] = 0.5; // channel 0 of Black's view gets +0.5 → 0.75
    e[(1548 + 81 + 36) * 2 + 1] = -1.5; // channel 1 of White's view: 2.0 − 1.5 = 0.5
    ws.tensor_mut("w1")
        .unwrap()
        .copy_from_slice(&[1.0, 1.0, 1.0, 1.0]);
    fill(&mut ws, "b1", -2.0);
    fill(&mut ws, "value.w", 2.0);
    fill(&mut ws, "value.b", 0.1);
    let net = net_of(ws);
    let pos = Position::startpos();
    // Black to move: u = [0.75, 1.0 (clipped), 0.25, 0.5]; W1 u + b1 = 2.5 − 2 = 0.5.
    let o = net.evaluate_position(&pos, &[]);
    assert!(
        (o.value_logit - (2.0 * 0.5 + 0.1)).abs() < 1e-6,
        "{}",
        o.value_logit
    );
    // A second clip at 1: raise b1 so the hidden unit saturates.
    let mut ws = WeightSet::from_source(net.source.as_ref()).unwrap();
    fill(&mut ws, "b1", 5.0);
    let o = net_of(ws).evaluate_position(&pos, &[]);
    assert!((o.value_logit - 2.1).abs() < 1e-6);
}

fn rms_normalise(x: &[f64]) -> Vec<f64> {
    let r = (x.iter().map(|v| v * v).sum::<f64>() / x.len() as f64 + 1e-6).sqrt();
    x.iter().map(|v| v / r).collect()
}

#[test]
fn split_power_sums_and_ks_by_hand() {
    // Every embedding is (1, 2). In the start position each side has 20 tokens, so for both
    // groups p1 = (20, 40), p2 = (20, 80), e1 = p1, e2 = (p1² − p2)/2 = (190, 760).
    let sh = shape("pair0_d2_o2_h1_ks_split");
    let mut ws = WeightSet::zeros(&sh);
    for (i, v) in ws.tensor_mut("embed").unwrap().iter_mut().enumerate() {
        *v = if i % 2 == 0 { 1.0 } else { 2.0 };
    }
    for b in ["own.e1", "own.e2", "opp.e1", "opp.e2"] {
        fill(&mut ws, &format!("norm.{b}"), 1.0);
    }
    let net = net_of(ws);
    let pos = Position::startpos();
    let st = net.refresh(&pos);
    let params = net.params();
    let u = head::perspective_input(&sh, &params, &st.acc[0]);
    let e1 = rms_normalise(&[20.0, 40.0]);
    let e2 = rms_normalise(&[190.0, 760.0]);
    let ks = |x: &[f64]| {
        (x.iter().map(|v| v * v).sum::<f64>() / 2.0 + 1e-6)
            .sqrt()
            .ln()
    };
    let want = [
        e1.clone(),
        e2.clone(),
        e1,
        e2,
        vec![
            ks(&[20.0, 40.0]),
            ks(&[190.0, 760.0]),
            ks(&[20.0, 40.0]),
            ks(&[190.0, 760.0]),
        ],
    ]
    .concat();
    assert_eq!(u.len(), want.len());
    for (a, b) in u.iter().zip(&want) {
        assert!((a - b).abs() < 1e-9, "{u:?} vs {want:?}");
    }
    // Move a black pawn off the board by capture? Simpler: after 7g7f nothing changes in
    // counts; after a capture the own group grows by a hand token: check the groups split.
    let mut p = Position::from_sfen("4k4/9/9/9/9/9/9/9/4K4 b 2P 1").unwrap();
    let st = net.refresh(&p);
    // Black's view: own = king + 2 hand pawns = 3 tokens, opp = 1 token.
    assert_eq!(st.acc[0].power[0][0], vec![3.0, 6.0]);
    assert_eq!(st.acc[0].power[1][0], vec![1.0, 2.0]);
    let m = p.parse_usi_move("P*5e").unwrap();
    let e = p.do_move(m);
    let mut st2 = st.clone();
    net.update(&mut st2, &e, &p);
    assert_eq!(st2.acc[1].power[1][0], vec![3.0, 6.0]); // White's view: Black's are opp
}

#[test]
fn lse_readout_by_hand() {
    // pair2 with lse1: channel 0 linear, channel 1 stores exp(x). Rows are 0.5 in channel 0
    // and exp(0.1) in channel 1; with 4 tokens (2 kings, 2 hand pawns) there are 6 pairs.
    let sh = shape("pair2_d1_o1_h1_lse1_ks");
    let mut ws = WeightSet::zeros(&sh);
    for (i, v) in ws.tensor_mut("pair").unwrap().iter_mut().enumerate() {
        *v = if i % 2 == 0 { 0.5 } else { 0.1f32.exp() };
    }
    for b in ["e1", "pair", "lse"] {
        fill(&mut ws, &format!("norm.{b}"), 1.0);
    }
    let net = net_of(ws);
    let pos = Position::from_sfen("4k4/9/9/9/9/9/9/9/4K4 b 2P 1").unwrap();
    let st = net.refresh(&pos);
    let blocks = head::raw_blocks(&sh, &st.acc[0]);
    assert!(
        (blocks[1][0] - 3.0).abs() < 1e-6,
        "linear pair sum {:?}",
        blocks[1]
    );
    let want = (6.0 * (0.1f32.exp() as f64)).ln();
    assert!(
        (blocks[2][0] - want).abs() < 1e-6,
        "lse {:?} vs {want}",
        blocks[2]
    );
    // ks exposes ln(sqrt(x² + 1e-6)) for each one-wide block.
    let u = head::perspective_input(&sh, &net.params(), &st.acc[0]);
    let ks_lse = (want * want + 1e-6).sqrt().ln();
    assert!((u[5] - ks_lse).abs() < 1e-6, "{u:?}");
}

#[test]
fn moments_by_hand() {
    // v(z) = (1, 2) for every token: M = N [[1,2],[2,4]], upper triangle N·(1, 2, 4).
    let sh = shape("pair0_d1_o1_h1_m2");
    let mut ws = WeightSet::zeros(&sh);
    for (i, v) in ws.tensor_mut("moment.proj").unwrap().iter_mut().enumerate() {
        *v = if i % 2 == 0 { 1.0 } else { 2.0 };
    }
    fill(&mut ws, "norm.moment", 1.0);
    let net = net_of(ws);
    let st = net.refresh(&Position::startpos());
    let blocks = head::raw_blocks(&sh, &st.acc[0]);
    assert_eq!(blocks[1], vec![40.0, 80.0, 160.0]);
    let u = head::perspective_input(&sh, &net.params(), &st.acc[0]);
    let want = rms_normalise(&[40.0, 80.0, 160.0]);
    for (a, b) in u[1..4].iter().zip(&want) {
        assert!((a - b).abs() < 1e-12);
    }
}

#[test]
fn policy_terms_by_hand() {
    // h = ReLU(b1) = (1, 2) with W1 = 0. Label of Black's 7g7f is 59.
    // logit = W_p[59]·h + b_p[59] + PF[pawn][7g = 60] = 0.5·1 + 0.25·2 + 0.1 + 0.2 = 1.3.
    let sh = shape("pair0_d1_o1_h2_f1");
    let mut ws = WeightSet::zeros(&sh);
    ws.tensor_mut("b1").unwrap().copy_from_slice(&[1.0, 2.0]);
    let pw = ws.tensor_mut("policy.w").unwrap();
    pw[59 * 2] = 0.5;
    pw[59 * 2 + 1] = 0.25;
    ws.tensor_mut("policy.b").unwrap()[59] = 0.1;
    ws.tensor_mut("policy.from").unwrap()[60] = 0.2;
    // Field term: K[token][s][0] = 1 for Black's own king token (7·81 + 44) at square 34
    // (4h), so F_black[34][0] = 1; U[class 2 = UP_RIGHT][0] = 3. Black's king move 5i4h
    // (to 4h, UP_RIGHT) gains 3; 3i4h (silver, UP_LEFT) gains nothing.
    let king_token = 7 * 81 + 44;
    ws.tensor_mut("field").unwrap()[king_token * 81 + 34] = 1.0;
    ws.tensor_mut("policy.field").unwrap()[2] = 3.0;
    // Drops: PF[gold][81] for a drop.
    ws.tensor_mut("policy.from").unwrap()[4 * 82 + 81] = -0.7;
    let net = net_of(ws);
    let pos = Position::startpos();
    let mv = |s: &str| pos.parse_usi_move(s).unwrap();
    let moves = [mv("7g7f"), mv("5i4h"), mv("3i4h"), mv("2g2f")];
    let o = net.evaluate_position(&pos, &moves);
    assert!((o.policy[0] - 1.3).abs() < 1e-6, "{:?}", o.policy);
    assert!((o.policy[1] - 3.0).abs() < 1e-9, "{:?}", o.policy);
    assert!(
        o.policy[2].abs() < 1e-9 && o.policy[3].abs() < 1e-9,
        "{:?}",
        o.policy
    );
    // White to move: its pawn push 3c3d is label 59 too, origin 3c rotates to 7g (60).
    let w =
        Position::from_sfen("lnsgkgsnl/1r5b1/ppppppppp/9/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL w - 2")
            .unwrap();
    let o = net.evaluate_position(&w, &[w.parse_usi_move("3c3d").unwrap()]);
    assert!((o.policy[0] - 1.3).abs() < 1e-6, "{:?}", o.policy);
    let d = Position::from_sfen("4k4/9/9/9/9/9/9/9/4K4 b G 1").unwrap();
    let o = net.evaluate_position(&d, &[d.parse_usi_move("G*5e").unwrap()]);
    assert!((o.policy[0] + 0.7).abs() < 1e-6, "{:?}", o.policy);
}

#[test]
fn random_weights_give_sane_outputs_for_the_baseline_family() {
    for s in [
        "pair4_d16_o2_h32",
        "pair0_d128_o3_h512",
        "pair0_d128_o2_h256_kp",
        "pair0_d16_o1_h8_halfkp_nnue",
    ] {
        let sh = shape(s);
        let net = net_of(init::random_weights(&sh, 1));
        let pos = Position::startpos();
        let moves = pos.legal_moves();
        let o = net.evaluate_position(&pos, &moves);
        assert!(
            o.value_logit.is_finite() && o.value_logit.abs() < 10.0,
            "{s}: {}",
            o.value_logit
        );
        assert!(o.policy.iter().all(|x| x.is_finite()), "{s}");
        let spread = o.policy.iter().cloned().fold(f64::MIN, f64::max)
            - o.policy.iter().cloned().fold(f64::MAX, f64::min);
        assert!(spread > 1e-3, "{s}: policy is flat");
    }
}
