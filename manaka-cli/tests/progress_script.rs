//! `scripts/progress.py`, the training loop's progress as a picture: the scores it reads from a
//! "Progress by generation" table (computed here by hand from the W–L cells), the chart's
//! series, an error that names a missing table, and that docs/strength-progress.svg is the
//! chart of docs/strength.md's table as committed (remade, byte for byte).

mod common;

use common::{repo, target_scratch};
use serde_json::Value;
use std::process::Command;

fn progress(doc: &std::path::Path, out: &std::path::Path) -> std::process::Output {
    Command::new("python3")
        .arg(repo().join("scripts/progress.py"))
        .arg("--doc")
        .arg(doc)
        .arg("--out")
        .arg(out)
        .arg("--json")
        .output()
        .unwrap()
}

#[test]
fn the_progress_chart_reads_the_table_and_matches_the_docs() {
    let dir = target_scratch("progress_script");
    let doc = dir.join("strength.md");
    std::fs::write(
        &doc,
        "# x\n\n## Progress by generation\n\ntext\n\n\
         | generation (shipped) | against its parent | Skill 0, 300 ms | full strength, 1 s |\n\
         |---|---|---|---|\n\
         | 6 (2026-12-02) | — | 20–0 | 0–20 |\n\
         | **7** (2026-12-08) | +31 [+5, +57] (700 games) | 18–1–1 | 3–17 |\n\n\
         | not | this | 1–1 | 1–1 |\n",
    )
    .unwrap();
    let svg = dir.join("p.svg");
    let out = progress(&doc, &svg);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let scores: Value = serde_json::from_slice(&out.stdout).unwrap();
    let pts = |k: &str| -> Vec<(u64, f64)> {
        scores[k]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["generation"].as_u64().unwrap(),
                    p["score"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    // (W + D/2) / N by hand: 20–0 is 1, 18–1–1 is 18.5/20, 0–20 is 0, 3–17 is 0.15.
    assert_eq!(pts("Skill 0, 300 ms"), [(6, 1.0), (7, 0.925)]);
    assert_eq!(pts("full strength, 1 s"), [(6, 0.0), (7, 0.15)]);
    assert!(
        scores.get("against its parent").is_none(),
        "Elo cells are not scores"
    );
    let picture = std::fs::read_to_string(&svg).unwrap();
    for name in [
        "fairy-stockfish Skill 0, 300 ms",
        "fairy-stockfish full strength, 1 s",
        "goal: half of the games at full strength, 1 s",
    ] {
        assert!(
            picture.contains(&format!("class=\"series\" data-name=\"{name}\"")),
            "{name}: {picture}"
        );
    }
    assert_eq!(picture.matches("class=\"point\"").count(), 6);

    // A document without the table: an error that names what is missing.
    std::fs::write(&doc, "# nothing here\n").unwrap();
    let out = progress(&doc, &svg);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no section '## Progress by generation'")
    );

    // The committed chart is the chart of the committed table.
    let remade = dir.join("remade.svg");
    let out = progress(&repo().join("docs/strength.md"), &remade);
    assert!(out.status.success());
    assert_eq!(
        std::fs::read_to_string(&remade).unwrap(),
        std::fs::read_to_string(repo().join("docs/strength-progress.svg")).unwrap(),
        "docs/strength-progress.svg is out of date: run scripts/progress.py"
    );
}
