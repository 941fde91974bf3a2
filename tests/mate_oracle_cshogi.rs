//! Differential test of the mate solver against cshogi. `tests/oracles/mate_cshogi.py cases`
//! builds ~500 seeded positions — middle games, random placements, and kings on an edge or
//! in a corner built to have mates — with cshogi's answers: a mate at once (found exactly)
//! and `mate_move(3)`, `(5)`, `(7)`. For each position Manaka
//!
//! (a) must find a mate whenever cshogi sees one, and one of at most N plies when asked for
//!     mates within N, the shortest N cshogi sees; it must never prove "no mate" there;
//! (b) has every mate it claims checked by cshogi alone (`mate_cshogi.py verify`): the whole
//!     proof tree — each attack legal and checking, the defences exactly cshogi's legal
//!     moves, checkmate at every leaf, no line longer than claimed — and the mate line;
//! (c) `mate_within(pos, 1)` agrees with the exact mate-at-once scan, and
//!     `mate_within(pos, 3)` with cshogi's mate within 3, except where cshogi misses a mate
//!     (its last ply is a heuristic): there Manaka's mate must pass the tree check, and
//!     the misses are counted.
//!
//! cshogi's `mate_move` is not the last word either: its search leaves out some defences
//! (moves that decline a promotion), so it may claim a mate that a legal defence refutes.
//! Where Manaka disagrees with a claim, the verifier replays cshogi's own strategy against
//! every legal defence: if the claim holds, Manaka is wrong and the test fails; if not, the
//! case is set aside, counted and printed (and there must be few).
//!
//! Nothing expected here comes from Manaka itself. Before the claims go to the verifier, a
//! few are spoiled on purpose (a defence dropped, a non-checking move, a line cut short):
//! the verifier must reject each, so a verifier that accepts anything fails the test.
//! `MANAKA_ORACLE_SEED` and `MANAKA_ORACLE_SCALE` explore further.

mod support;

use support::Report;

use manaka::runtime::mate::{MateLimits, MateOutcome, MateSolver, ProofTree, mate_within};
use manaka::runtime::shogi::{Move, Position};
use serde_json::{Value, json};
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

const TEST: &str = "mate_oracle_cshogi";
/// Node limit of each search: every mate within 7 plies here takes far fewer.
const NODES: u64 = 300_000;
/// Largest proof tree (attacking moves) sent to the verifier; longer mates of the free
/// search are verified by their line alone (and counted).
const TREE_MAX: usize = 20_000;
/// Node limit of `mate_within`.
const WITHIN_NODES: u64 = 5_000_000;

#[derive(Default, Debug)]
struct Coverage {
    cases: usize,
    /// By the shortest mate cshogi sees: none, 1, 3, 5, 7.
    by_length: [usize; 5],
    mates_claimed: usize,
    trees_verified: usize,
    lines_only: usize,
    nomate_proven: usize,
    unknown: usize,
    /// Mates within 3 that cshogi's mate_move(3) missed (verified here).
    cshogi_misses_3: usize,
    /// Positions where Manaka's shortest mate is shorter than cshogi's.
    manaka_shorter: usize,
    /// Disagreements where cshogi's own claim fails against a legal defence.
    cshogi_unsound: usize,
    nodes: u64,
}

fn usi_line(line: &[Move]) -> Vec<String> {
    line.iter().map(|m| m.to_usi()).collect()
}

fn tree_json(t: &ProofTree) -> Value {
    let d: Vec<Value> = t
        .defences
        .iter()
        .map(|(m, sub)| json!([m.to_usi(), tree_json(sub)]))
        .collect();
    json!({ "a": t.attack.to_usi(), "d": d })
}

fn field<'a>(case: &'a Value, key: &str) -> Option<&'a str> {
    case[key].as_str()
}

/// The shortest mate cshogi (or the exact one-ply scan) sees: 1, 3, 5, 7, or 0 for none.
fn cshogi_shortest(case: &Value) -> u32 {
    [(1, "m1"), (3, "m3"), (5, "m5"), (7, "m7")]
        .into_iter()
        .find(|(_, k)| field(case, k).is_some())
        .map_or(0, |(n, _)| n)
}

struct Claims(Vec<Value>);

impl Claims {
    /// A mate claimed for `sfen` in at most `max` plies: its line, and its tree when the
    /// solver gives one small enough.
    fn mate(
        &mut self,
        id: String,
        sfen: &str,
        line: &[Move],
        tree: Option<&ProofTree>,
        max: usize,
    ) {
        self.0.push(json!({
            "id": id, "sfen": sfen, "max": max, "line": usi_line(line),
            "tree": tree.map(tree_json),
        }));
    }

    fn first(&mut self, id: String, sfen: &str, first: Move, plies: u32) {
        self.0
            .push(json!({ "id": id, "sfen": sfen, "first": first.to_usi(), "plies": plies }));
    }

    /// A disagreement: cshogi claims a mate within `plies`, Manaka says `manaka`. Settled by
    /// the verifier replaying cshogi's claim.
    fn dispute(&mut self, id: String, sfen: &str, plies: u32, manaka: String) {
        self.0
            .push(json!({ "id": id, "sfen": sfen, "guided": plies, "manaka": manaka }));
    }
}

#[test]
fn cshogi_mates() {
    if let Err(why) = support::python_with("cshogi") {
        support::missing_oracle(TEST, &why);
        return;
    }
    let seed: u64 = support::env_or("MANAKA_ORACLE_SEED", 20_250_101);
    let scale: f64 = support::env_or("MANAKA_ORACLE_SCALE", 1.0);
    let t0 = Instant::now();
    let out = Command::new("python3")
        .arg(support::oracle_script("mate_cshogi.py"))
        .args([
            "cases",
            "--seed",
            &seed.to_string(),
            "--scale",
            &scale.to_string(),
        ])
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "mate_cshogi.py cases failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cases: Vec<Value> = String::from_utf8(out.stdout)
        .expect("UTF-8 cases")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON case per line"))
        .collect();
    let generated = t0.elapsed();

    let mut solver = MateSolver::new(64 << 20);
    let stop = AtomicBool::new(false);
    let mut report = Report::default();
    let mut cov = Coverage::default();
    let mut claims = Claims(Vec::new());
    for (i, case) in cases.iter().enumerate() {
        check_case(
            i,
            case,
            &mut solver,
            &stop,
            &mut claims,
            &mut report,
            &mut cov,
        );
    }
    let solved = t0.elapsed() - generated;

    // The verifier must refuse spoiled claims; then every real claim must pass.
    let canaries = spoiled(&claims.0);
    assert_eq!(canaries.len(), 4, "every kind of claim spoiled once");
    let n_canaries = canaries.len();
    let mut all = canaries;
    all.extend(claims.0.iter().cloned());
    let verdicts = run_verifier(&all);
    assert_eq!(verdicts.len(), all.len(), "one verdict per claim");
    let mut attacks_checked = 0;
    for (claim, v) in all.iter().zip(&verdicts) {
        attacks_checked += v["nodes"].as_u64().unwrap_or(0);
        assert_eq!(claim["id"], v["id"], "verdicts in claim order");
        let id = claim["id"].as_str().unwrap();
        let ok = v["ok"].as_bool().unwrap();
        if id.starts_with("spoiled") {
            assert!(!ok, "the verifier accepted the spoiled claim {claim}");
        } else if id.starts_with("dispute") {
            let manaka = claim["manaka"].as_str().unwrap();
            if ok {
                report.fail(format!(
                    "cshogi mates within {} against every defence; {manaka}",
                    claim["guided"]
                ));
            } else {
                cov.cshogi_unsound += 1;
                eprintln!(
                    "{TEST}: set aside, cshogi's claim fails: {manaka}; {}",
                    v["why"]
                );
            }
        } else if !ok {
            report.fail(format!("cshogi refutes {id}: {}", v["why"]));
        }
    }
    eprintln!(
        "{TEST}: seed {seed}, {} cases; generated in {generated:.1?}, solved in {solved:.1?}, \
         {} claims ({attacks_checked} attacking moves) verified in {:.1?} ({n_canaries} spoiled \
         ones refused)",
        cov.cases,
        claims.0.len(),
        t0.elapsed() - generated - solved
    );
    eprintln!("{TEST}: coverage {cov:?}");
    if report.count > 0 {
        panic!(
            "{} mismatches with cshogi (seed {seed}); first ones:\n{}",
            report.count,
            report.shown.join("\n")
        );
    }
    if seed == 20_250_101 && scale >= 1.0 {
        assert!(cov.cases >= 500, "{cov:?}");
        assert!(
            cov.by_length.iter().all(|&n| n >= 50),
            "every class needs cases: {cov:?}"
        );
        assert!(cov.trees_verified >= 300, "{cov:?}");
        assert!(cov.cshogi_unsound * 50 <= cov.cases, "{cov:?}");
    }
}

#[allow(clippy::too_many_arguments)]
fn check_case(
    i: usize,
    case: &Value,
    solver: &mut MateSolver,
    stop: &AtomicBool,
    claims: &mut Claims,
    report: &mut Report,
    cov: &mut Coverage,
) {
    let sfen = field(case, "sfen").expect("sfen");
    let kind = field(case, "kind").expect("kind");
    let ctx = format!("[{i} {kind}] {sfen}");
    let pos = match Position::from_sfen(sfen) {
        Ok(p) => p,
        Err(e) => return report.fail(format!("{ctx}: SFEN refused: {e}")),
    };
    cov.cases += 1;
    let n_c = cshogi_shortest(case);
    cov.by_length[n_c.div_ceil(2) as usize] += 1;

    // (a) and (b): the free search, then the search within cshogi's length.
    let free = solver.search(&pos, &MateLimits::nodes(NODES), stop);
    cov.nodes += free.nodes;
    match &free.outcome {
        MateOutcome::Mate(line) => {
            cov.mates_claimed += 1;
            let tree = solver.proof_tree(
                &pos,
                &MateLimits::nodes(NODES).with_max_plies(line.len() as u32),
                TREE_MAX,
                stop,
            );
            if tree.is_some() {
                cov.trees_verified += 1;
            } else {
                cov.lines_only += 1;
            }
            claims.mate(format!("{i}-free"), sfen, line, tree.as_ref(), line.len());
            if n_c == 0 && line.len() <= 7 {
                // A mate cshogi does not see: the tree check settles it.
                cov.manaka_shorter += 1;
            }
        }
        MateOutcome::NoMate if n_c > 0 => claims.dispute(
            format!("dispute-{i}-free"),
            sfen,
            n_c,
            format!("{ctx}: Manaka proves no mate"),
        ),
        MateOutcome::NoMate => cov.nomate_proven += 1,
        MateOutcome::Unknown if n_c > 0 => claims.dispute(
            format!("dispute-{i}-free"),
            sfen,
            n_c,
            format!("{ctx}: Manaka finds nothing in {NODES} nodes"),
        ),
        MateOutcome::Unknown => cov.unknown += 1,
    }
    if n_c > 0 {
        let limits = MateLimits::nodes(NODES).with_max_plies(n_c);
        let r = solver.search(&pos, &limits, stop);
        cov.nodes += r.nodes;
        match &r.outcome {
            MateOutcome::Mate(line) if line.len() <= n_c as usize => {
                if line.len() < n_c as usize {
                    cov.manaka_shorter += 1;
                }
                let tree = solver.proof_tree(&pos, &limits, TREE_MAX, stop);
                match &tree {
                    Some(t) if t.depth() <= n_c as usize => cov.trees_verified += 1,
                    Some(t) => report.fail(format!(
                        "{ctx}: proof tree {} plies deep for a mate within {n_c}",
                        t.depth()
                    )),
                    None => report.fail(format!("{ctx}: no proof tree within {n_c}")),
                }
                claims.mate(
                    format!("{i}-within{n_c}"),
                    sfen,
                    line,
                    tree.as_ref(),
                    n_c as usize,
                );
            }
            other => claims.dispute(
                format!("dispute-{i}-within{n_c}"),
                sfen,
                n_c,
                format!("{ctx}: Manaka within {n_c} says {other:?}"),
            ),
        }
    }

    // (c) mate_within at 1 and 3 plies.
    let mut p = pos.clone();
    let w1 = mate_within(&mut p, 1, WITHIN_NODES);
    if w1.is_some() != field(case, "m1").is_some() {
        report.fail(format!(
            "{ctx}: mate_within(1) = {w1:?}, the exact scan says {:?}",
            field(case, "m1")
        ));
    }
    if field(case, "c1").is_some() && w1.is_none() {
        report.fail(format!(
            "{ctx}: cshogi's mate_move_in_1ply mates, mate_within(1) not"
        ));
    }
    if let Some(m) = w1 {
        claims.first(format!("{i}-within1"), sfen, m, 1);
    }
    let w3 = mate_within(&mut p, 3, WITHIN_NODES);
    if p != pos {
        report.fail(format!("{ctx}: mate_within changed the position"));
    }
    let cshogi3 = n_c == 1 || n_c == 3;
    match (w3, cshogi3) {
        (Some(m), _) => {
            claims.first(format!("{i}-mate_within3"), sfen, m, 3);
            if !cshogi3 {
                cov.cshogi_misses_3 += 1;
            }
        }
        (None, true) => claims.dispute(
            format!("dispute-{i}-mate_within3"),
            sfen,
            n_c,
            format!("{ctx}: mate_within(3) finds none"),
        ),
        (None, false) => {}
    }
}

/// A legal move of `sfen` that gives no check, if any.
fn quiet_move(sfen: &str) -> Option<Move> {
    let pos = Position::from_sfen(sfen).unwrap();
    pos.legal_moves().into_iter().find(|&m| {
        let mut p = pos.clone();
        p.do_move(m);
        !p.in_check()
    })
}

/// Spoiled copies of real claims: a tree with one defence dropped, a tree whose first
/// attack gives no check, a line cut one move short of mate, a "first move" that gives no
/// check.
fn spoiled(claims: &[Value]) -> Vec<Value> {
    let mut out = Vec::new();
    let spoil = |c: &Value, id: &str, f: &dyn Fn(&mut Value)| {
        let mut c = c.clone();
        f(&mut c);
        c["id"] = json!(id);
        c
    };
    if let Some(c) = claims
        .iter()
        .find(|c| c["tree"]["d"].as_array().is_some_and(|d| d.len() >= 2))
    {
        out.push(spoil(c, "spoiled-defence-dropped", &|c| {
            c["tree"]["d"].as_array_mut().unwrap().pop();
            c["line"] = Value::Null;
        }));
    }
    if let Some((c, q)) = claims
        .iter()
        .filter(|c| c["tree"].is_object())
        .find_map(|c| quiet_move(c["sfen"].as_str().unwrap()).map(|q| (c, q)))
    {
        out.push(spoil(c, "spoiled-no-check", &|c| {
            c["tree"]["a"] = json!(q.to_usi());
            c["line"] = Value::Null;
        }));
    }
    if let Some(c) = claims
        .iter()
        .find(|c| c["line"].as_array().is_some_and(|l| l.len() >= 3))
    {
        out.push(spoil(c, "spoiled-line-cut", &|c| {
            let line = c["line"].as_array_mut().unwrap();
            line.truncate(line.len() - 2);
            c["tree"] = Value::Null;
        }));
    }
    if let Some((c, q)) = claims
        .iter()
        .filter(|c| c["first"].is_string())
        .find_map(|c| quiet_move(c["sfen"].as_str().unwrap()).map(|q| (c, q)))
    {
        out.push(spoil(c, "spoiled-first-quiet", &|c| {
            c["first"] = json!(q.to_usi())
        }));
    }
    out
}

fn run_verifier(claims: &[Value]) -> Vec<Value> {
    let mut child = Command::new("python3")
        .arg(support::oracle_script("mate_cshogi.py"))
        .arg("verify")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run python3");
    let mut stdin = child.stdin.take().expect("stdin");
    let input: String = claims.iter().map(|c| format!("{c}\n")).collect();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("verifier output");
    writer.join().expect("writer thread").expect("write claims");
    assert!(
        out.status.success(),
        "mate_cshogi.py verify failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("UTF-8 verdicts")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON verdict per line"))
        .collect()
}
