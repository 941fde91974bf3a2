//! The trainer's own tests: its forward pass is the reference evaluator's (SPEC §4–6), its
//! gradients are the finite differences of its loss for every tensor of shapes that together
//! enable every block and both arithmetics, the optimiser does what `optim.rs` says, and a
//! checkpointed, resumed run equals an uninterrupted one.

use super::backward::backward;
use super::forward::forward;
use super::grads::Grads;
use super::loss::{Example, losses};
use super::model::Model;
use super::optim::{Adam, AdamConfig};
use super::trainer::positions;
use crate::random::{RandomPositions, SplitMix64, random_positions};
use crate::reference::ReferenceNet;
use crate::shogi::Position;
use crate::weights::{TensorSource, WeightSet, init};
use manaka_shapes::Shape;
use std::sync::Arc;

/// Shapes that together enable every block, token space and arithmetic.
const SHAPES: [&str; 6] = [
    "pair3_d3_o3_h5_h24_m2_f1_lse1_ks_split", // native: every Manaka block, two hidden layers
    "pair2_d3_o2_h4_m2_f2_lse2_kp",           // kp; pair channels all lse
    "pair2_d2_o4_h4_ks",                      // linear pair only, order 4, ks
    "pair0_d3_o3_h4_halfkp",                  // halfkp (no pair or field allowed)
    "pair0_d4_o1_h5_h23_kp_nnue",             // NNUE arithmetic, two clipped layers
    "pair0_d4_o1_h4_halfkp_nnue",             // NNUE on halfkp
];

fn shape(s: &str) -> Shape {
    Shape::parse(s).unwrap()
}

/// Random weights with the gains, biases and NNUE bias spread out too, so that no derivative
/// is checked only at a special point (gains of exactly 1, say).
fn weights(sh: &Shape, seed: u64) -> WeightSet {
    let mut ws = init::random_weights(sh, seed);
    let mut rng = SplitMix64::new(seed ^ 0x5eed);
    for spec in sh.tensors() {
        let name = spec.name.as_str();
        if name.starts_with("norm.") || name.starts_with('b') || name.ends_with(".b") {
            for v in ws.tensor_mut(name).unwrap() {
                *v = if name.starts_with("norm.") {
                    0.5 + rng.unit() as f32
                } else {
                    rng.unit() as f32 * 0.2 - 0.1
                };
            }
        }
    }
    ws
}

/// Positions with captures behind them (so hands hold pieces), and for kp/halfkp a handicap
/// position whose missing pieces repeat BonaPiece 0 (SPEC §3).
fn test_positions(sh: &Shape, count: usize, seed: u64) -> Vec<Position> {
    let mut out = random_positions(&RandomPositions {
        count,
        seed,
        min_ply: 30,
        max_ply: 90,
    })
    .unwrap();
    if sh.features != manaka_shapes::FeatureSpace::Native {
        out[0] = Position::from_sfen("lnsgkgsnl/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1")
            .unwrap();
    }
    out
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + a.abs().max(b.abs()))
}

/// In f64 the trainer's forward pass gives the reference evaluator's value and policy logits
/// (the same math, summed in a different order); in f32 it agrees to f32 precision.
#[test]
fn forward_equals_the_reference_evaluator() {
    let mut shapes: Vec<&str> = SHAPES.to_vec();
    shapes.extend(["pair4_d16_o2_h32", "pair0_d16_o1_h8_halfkp_nnue"]);
    for (si, s) in shapes.iter().enumerate() {
        let sh = shape(s);
        let ws = weights(&sh, 3 + si as u64);
        let m64: Model<f64> = Model::from_source(&ws).unwrap();
        let m32: Model<f32> = Model::from_source(&ws).unwrap();
        let net = ReferenceNet::new(Arc::new(ws)).unwrap();
        let pos = test_positions(&sh, 12, 40 + si as u64);
        let moves: Vec<_> = pos.iter().map(Position::legal_moves).collect();
        let input: Vec<_> = pos
            .iter()
            .zip(&moves)
            .map(|(p, m)| (p, m.as_slice()))
            .collect();
        let f64_out = forward(&m64, &input);
        let f32_out = forward(&m32, &input);
        for (i, (p, m)) in input.iter().enumerate() {
            let want = net.evaluate_position(p, m);
            assert!(
                close(f64_out.value[i], want.value_logit, 1e-10),
                "{s} #{i}: {} vs {}",
                f64_out.value[i],
                want.value_logit
            );
            assert!(
                close(f64::from(f32_out.value[i]), want.value_logit, 2e-4),
                "{s} #{i} f32"
            );
            assert_eq!(f64_out.logits[i].len(), want.policy.len());
            for (j, &w) in want.policy.iter().enumerate() {
                assert!(
                    close(f64_out.logits[i][j], w, 1e-10),
                    "{s} #{i} move {j}: {} vs {w}",
                    f64_out.logits[i][j]
                );
                assert!(
                    close(f64::from(f32_out.logits[i][j]), w, 2e-4),
                    "{s} #{i} move {j} f32"
                );
            }
        }
    }
}

/// A few examples with random value targets and random policy distributions.
fn examples(sh: &Shape, seed: u64) -> Vec<Example> {
    let mut rng = SplitMix64::new(seed);
    test_positions(sh, 3, seed)
        .into_iter()
        .map(|p| {
            let moves = p.legal_moves();
            let policy: Vec<_> = moves
                .iter()
                .map(|&m| (m, rng.unit() * rng.unit()))
                .collect();
            Example::new(p, rng.unit(), &policy).unwrap()
        })
        .collect()
}

const POLICY_WEIGHT: f64 = 0.7;

fn loss_of(model: &Model<f64>, ex: &[Example]) -> f64 {
    let f = forward(model, &positions(ex));
    let (sums, _, _) = losses(ex, &f.value, &f.logits, POLICY_WEIGHT, 1.0);
    (sums.value + POLICY_WEIGHT * sums.policy) / ex.len() as f64
}

fn gradients(model: &Model<f64>, ex: &[Example]) -> Grads<f64> {
    let f = forward(model, &positions(ex));
    let (_, dv, dl) = losses(
        ex,
        &f.value,
        &f.logits,
        POLICY_WEIGHT,
        1.0 / ex.len() as f64,
    );
    let mut g = Grads::new(model);
    backward(model, &f, &dv, &dl, &mut g);
    g
}

/// Entries of tensor `t` to check: all of a small tensor; otherwise up to 24 entries with a
/// non-zero gradient (spread over the touched rows) and 4 arbitrary ones (mostly zero).
fn entries(model: &Model<f64>, g: &Grads<f64>, t: usize, rng: &mut SplitMix64) -> Vec<usize> {
    let len = model.tensors[t].len();
    if len <= 48 {
        return (0..len).collect();
    }
    let nonzero: Vec<usize> = match &g.sparse[t] {
        Some(rows) => rows
            .iter()
            .flat_map(|(r, v)| {
                (0..v.len())
                    .filter(|&c| v[c] != 0.0)
                    .map(move |c| r * v.len() + c)
            })
            .collect(),
        None => (0..len).filter(|&i| g.dense[t][i] != 0.0).collect(),
    };
    let mut out: Vec<usize> = (0..24.min(nonzero.len()))
        .map(|_| nonzero[rng.below(nonzero.len() as u64) as usize])
        .collect();
    out.extend((0..4).map(|_| rng.below(len as u64) as usize));
    out
}

/// Checks every tensor's gradient against central differences; returns the entries checked
/// and the mismatches (tensor, entry, analytic, numeric).
fn check_gradients(
    model: &mut Model<f64>,
    ex: &[Example],
    g: &Grads<f64>,
    seed: u64,
) -> (usize, Vec<(String, usize, f64, f64)>) {
    let mut rng = SplitMix64::new(seed);
    let mut checked = 0;
    let mut bad = Vec::new();
    for t in 0..model.tensors.len() {
        let mut nonzero = 0;
        for i in entries(model, g, t, &mut rng) {
            let theta = model.tensors[t][i];
            // Relative step: the lse channels store values near 1e-3.
            let h = 1e-6 * theta.abs().max(1e-2);
            model.tensors[t][i] = theta + h;
            let up = loss_of(model, ex);
            model.tensors[t][i] = theta - h;
            let down = loss_of(model, ex);
            model.tensors[t][i] = theta;
            let numeric = (up - down) / (2.0 * h);
            let analytic = g.get(t, i);
            nonzero += usize::from(analytic != 0.0);
            checked += 1;
            if (analytic - numeric).abs() > 1e-7 + 1e-5 * analytic.abs().max(numeric.abs()) {
                bad.push((model.specs[t].name.clone(), i, analytic, numeric));
            }
        }
        // Every tensor must actually take part: a zero gradient everywhere would pass the
        // comparison without testing anything.
        assert!(
            nonzero > 0,
            "{}: {} has no non-zero gradient among the entries checked",
            model.shape,
            model.specs[t].name
        );
    }
    (checked, bad)
}

/// The backward pass equals finite differences of the loss for every tensor of every shape
/// in `SHAPES` (both arithmetics, every block, every token space).
#[test]
fn gradients_equal_finite_differences() {
    for (si, s) in SHAPES.iter().enumerate() {
        let sh = shape(s);
        let mut model: Model<f64> = Model::from_source(&weights(&sh, 100 + si as u64)).unwrap();
        let ex = examples(&sh, 200 + si as u64);
        let g = gradients(&model, &ex);
        let (checked, bad) = check_gradients(&mut model, &ex, &g, 300 + si as u64);
        assert!(
            bad.is_empty(),
            "{s}: {} of {checked} entries differ, e.g. {:?}",
            bad.len(),
            &bad[..bad.len().min(8)]
        );
        assert!(checked > 100, "{s}: only {checked} entries checked");
    }
}

/// The gradient check can fail: a gradient that is off by 1% in a single tensor is caught.
#[test]
fn gradient_check_catches_a_wrong_gradient() {
    let sh = shape(SHAPES[0]);
    let mut model: Model<f64> = Model::from_source(&weights(&sh, 7)).unwrap();
    let ex = examples(&sh, 8);
    let mut g = gradients(&model, &ex);
    let t = model.layout.pair_table.unwrap();
    let rows: Vec<usize> = g.rows(t).iter().map(|(r, _)| r).collect();
    for r in rows {
        g.rows(t).row_mut(r)[0] *= 1.01;
    }
    let (_, bad) = check_gradients(&mut model, &ex, &g, 9);
    assert!(
        bad.iter().any(|b| b.0 == "pair"),
        "a wrong pair gradient went unnoticed"
    );
    assert!(bad.iter().all(|b| b.0 == "pair"), "{bad:?}");
}

/// Adam as written in optim.rs: a dense entry moves by lr·m̂/(sqrt(v̂)+ε), an untouched row of
/// a token table does not move at all, and an lse channel moves as Adam on x = ln(stored).
#[test]
fn adam_is_lazy_on_token_tables_and_log_space_on_lse_channels() {
    let sh = shape("pair3_d2_o1_h2_lse2");
    let mut model: Model<f64> = Model::from_source(&init::random_weights(&sh, 1)).unwrap();
    let before = model.clone();
    let l = model.layout.clone();
    let pt = l.pair_table.unwrap();
    let mut adam = Adam::new(&model, AdamConfig::default());
    let lr = 0.01;
    let mut x = before.tensors[pt][7 * 3 + 2].ln(); // row 7, channel 2 (lse)
    let (mut mx, mut vx) = (0.0, 0.0);
    for step in 1..=3 {
        let mut g = Grads::new(&model);
        g.dense[l.b1][1] = 0.5;
        let row = g.rows(pt).row_mut(7);
        row.copy_from_slice(&[0.25, -2.0, 3.0]);
        let s = model.tensors[pt][7 * 3 + 2];
        adam.update(&mut model, std::slice::from_ref(&g), lr, 1);
        // The lse channel: Adam on x with gradient s·3.
        let gx = s * 3.0;
        mx = 0.9 * mx + 0.1 * gx;
        vx = 0.999 * vx + 0.001 * gx * gx;
        x -= lr * (mx / (1.0 - 0.9f64.powi(step)))
            / ((vx / (1.0 - 0.999f64.powi(step))).sqrt() + 1e-8);
        assert!(
            (model.tensors[pt][7 * 3 + 2] - x.exp()).abs() < 1e-15,
            "step {step}"
        );
    }
    // First Adam steps of a constant gradient move by about lr each.
    assert!((before.tensors[l.b1][1] - model.tensors[l.b1][1] - 3.0 * lr).abs() < 1e-6);
    assert!((model.tensors[pt][7 * 3] - before.tensors[pt][7 * 3] + 3.0 * lr).abs() < 1e-6);
    // Untouched rows of the pair table and untouched embeddings did not move.
    for (i, (&a, &b)) in model.tensors[pt]
        .iter()
        .zip(&before.tensors[pt])
        .enumerate()
    {
        assert!(i / 3 == 7 || a == b, "pair entry {i} moved");
    }
    assert_eq!(model.tensors[l.embed], before.tensors[l.embed]);
    assert!(model.tensors[pt][7 * 3 + 2] > 0.0);
}

/// `nnue` shapes: every value Adam updates stays within its tensor's nn.bin limit (hand
/// values: value.w 127²/9600 ≈ 1.680, w1 127/64 ≈ 1.984, embed 32767/127 ≈ 258.0); a value
/// pushed towards a limit moves as unclamped Adam until it meets it, then stays there; the
/// first update also brings untouched rows of the token table inside; tensors an nn.bin does
/// not hold (the policy) and other shapes are not clamped.
#[test]
fn adam_keeps_nnue_tensors_within_their_nn_bin_limits() {
    let sh = shape("pair0_d4_o1_h5_h23_kp_nnue");
    let mut start: Model<f64> = Model::from_source(&init::random_weights(&sh, 2)).unwrap();
    let l = start.layout.clone();
    let d = l.d;
    let (vw, w1, embed, pw) = (l.value_w, l.w1, l.embed, l.policy_w);
    start.tensors[vw][0] = 5.0; // beyond, no gradient
    start.tensors[w1][0] = -3.0; // beyond, no gradient
    start.tensors[embed][3 * d] = 300.0; // beyond, a row no batch touches
    start.tensors[pw][0] = 10.0; // no limit
    let (lim_vw, lim_w1, lim_e) = (127.0 * 127.0 / 9600.0, 127.0 / 64.0, 32767.0 / 127.0);
    let mut clamped = start.clone();
    let mut free = start.clone();
    let mut adam = Adam::new(&clamped, AdamConfig::default());
    let mut adam_free = Adam::new(&free, AdamConfig::default());
    adam_free.unclamped = true;
    let lr = 0.5;
    let grads = |m: &Model<f64>| {
        let mut g = Grads::new(m);
        g.dense[vw][1] = -1.0; // value.w[1] grows by about lr a step
        g.dense[w1][2] = 1.0; // w1[2] shrinks
        g.rows(embed).row_mut(5)[0] = -1.0; // embed row 5 grows by about lr a step
        g
    };
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * (1.0 + b.abs());
    for step in 1..=12 {
        let g = grads(&clamped);
        adam.update(&mut clamped, std::slice::from_ref(&g), lr, 1);
        adam_free.update(&mut free, std::slice::from_ref(&g), lr, 1);
        // Monotone paths: the clamped value is the free one cut at the limit.
        assert!(
            close(clamped.tensors[vw][1], free.tensors[vw][1].min(lim_vw)),
            "step {step}"
        );
        assert!(close(
            clamped.tensors[w1][2],
            free.tensors[w1][2].max(-lim_w1)
        ));
        assert!(close(
            clamped.tensors[embed][5 * d],
            free.tensors[embed][5 * d].min(lim_e)
        ));
        assert!(close(clamped.tensors[vw][0], lim_vw) && close(clamped.tensors[w1][0], -lim_w1));
        assert!(
            close(clamped.tensors[embed][3 * d], lim_e),
            "untouched row, at step 1"
        );
        assert_eq!(free.tensors[embed][3 * d], 300.0);
        assert_eq!(clamped.tensors[pw][0], 10.0, "policy: no limit");
        for (spec, t) in clamped.specs.iter().zip(&clamped.tensors) {
            if let Some(limit) = crate::nnue::quant::float_limit(&sh, &spec.name) {
                assert!(t.iter().all(|v| v.abs() <= limit), "{}", spec.name);
            }
        }
    }
    assert!(free.tensors[vw][1] > lim_vw + 1.0 && free.tensors[w1][2] < -lim_w1 - 1.0);
    // The limits were met, by the clamped paths too.
    assert!(close(clamped.tensors[vw][1], lim_vw) && close(clamped.tensors[w1][2], -lim_w1));
    // Another shape: the same weights leave any range freely.
    let native = shape("pair3_d2_o1_h2");
    let mut m: Model<f64> = Model::from_source(&init::random_weights(&native, 2)).unwrap();
    let vw = m.layout.value_w;
    m.tensors[vw][0] = 5.0;
    let mut adam = Adam::new(&m, AdamConfig::default());
    for _ in 0..3 {
        let mut g = Grads::new(&m);
        g.dense[vw][0] = -1.0;
        adam.update(&mut m, std::slice::from_ref(&g), lr, 1);
    }
    assert!(m.tensors[vw][0] > 6.0, "{}", m.tensors[vw][0]);
}

/// The update from several workers' gradients equals the update from their sum, whatever the
/// number of threads applying it.
#[test]
fn adam_sums_workers_gradients_and_threads_do_not_change_the_result() {
    // h8: policy.w has 2187 × 8 entries, enough to be split between threads.
    let sh = shape("pair3_d4_o2_h8_m2_f1_lse1_ks");
    let model: Model<f64> = Model::from_source(&weights(&sh, 21)).unwrap();
    let ex = examples(&sh, 22);
    // Two workers, each with a part of the batch (as the trainer splits it).
    let worker = |part: &[Example]| {
        let f = forward(&model, &positions(part));
        let (_, dv, dl) = losses(
            part,
            &f.value,
            &f.logits,
            POLICY_WEIGHT,
            1.0 / ex.len() as f64,
        );
        let mut g = Grads::new(&model);
        backward(&model, &f, &dv, &dl, &mut g);
        g
    };
    let parts = [worker(&ex[..1]), worker(&ex[1..])];
    let mut merged = parts[0].clone();
    merged.merge(&parts[1]);
    let mut want = model.clone();
    Adam::new(&model, AdamConfig::default()).update(
        &mut want,
        std::slice::from_ref(&merged),
        1e-2,
        1,
    );
    assert_ne!(want, model);
    for threads in [1, 2, 3, 5] {
        let mut got = model.clone();
        Adam::new(&model, AdamConfig::default()).update(&mut got, &parts, 1e-2, threads);
        for (t, (a, b)) in got.tensors.iter().zip(&want.tensors).enumerate() {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                assert!(
                    (x - y).abs() <= 1e-15 * (1.0 + y.abs()),
                    "{threads} threads: {}[{i}]",
                    model.specs[t].name
                );
            }
        }
    }
}

/// A model written as an MNW1 file evaluates in the reference evaluator as the trainer's own
/// forward pass computes it.
#[test]
fn written_weights_evaluate_identically_in_the_reference() {
    let sh = shape("pair3_d4_o2_h6_m2_f1_lse1_ks");
    let model: Model<f32> = Model::from_source(&weights(&sh, 5)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.mnw");
    crate::weights::write_file(&path, &model).unwrap();
    let file = crate::weights::WeightFile::open_expecting(&path, &sh).unwrap();
    let back: Model<f32> = Model::from_source(&file).unwrap();
    assert_eq!(back, model);
    assert_eq!(TensorSource::tensor(&model, "w1"), file.tensor("w1"));
    let net = ReferenceNet::new(Arc::new(file)).unwrap();
    for p in test_positions(&sh, 6, 9) {
        let moves = p.legal_moves();
        let f = forward(&model, &[(&p, moves.as_slice())]);
        let want = net.evaluate_position(&p, &moves);
        assert!(close(f64::from(f.value[0]), want.value_logit, 2e-4));
        for (a, &b) in f.logits[0].iter().zip(&want.policy) {
            assert!(close(f64::from(*a), b, 2e-4));
        }
    }
}
