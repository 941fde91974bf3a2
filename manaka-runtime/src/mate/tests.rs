//! Unit tests of the mate solver.

use super::*;
use crate::shogi::Position;

fn solve(sfen: &str, limits: MateLimits) -> MateResult {
    let pos = Position::from_sfen(sfen).unwrap();
    MateSolver::new(1 << 22).search(&pos, &limits, &AtomicBool::new(false))
}

#[test]
fn mate_in_three_with_bishop_and_gold() {
    let r = solve("8k/9/7pp/9/9/9/9/9/K8 b BG 1", MateLimits::default());
    let line: Vec<String> = r.mate().unwrap().iter().map(|m| m.to_usi()).collect();
    eprintln!("{line:?} {} nodes", r.nodes);
    assert_eq!(line.len(), 3);
    assert_eq!(line[0], "B*3c");
}
