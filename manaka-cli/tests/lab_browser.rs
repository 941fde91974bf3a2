//! `manaka lab` in a real browser: scripts/lab_browser_test.py drives headless Chromium with
//! selenium, clicks the 5×5 lab and the 9×9 inspector and checks the page's numbers (feature
//! ids, incremental = recomputed, falling losses, value/cp/top moves = `manaka eval --json`).
//! Screenshots of both parts land in `target/lab/` (docs/lab.md shows them).
//!
//! Skips with a message when python3, selenium, chromium or chromedriver is missing, unless
//! MANAKA_REQUIRE_ORACLES=1 (scripts/test sets it and installs them), which makes a missing
//! browser a failure.

mod common;

use common::oracles;
use std::path::{Path, PathBuf};
use std::process::Command;

fn on_path(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    dirs.push("/usr/lib/chromium".into());
    names
        .iter()
        .flat_map(|n| dirs.iter().map(move |d| d.join(n)))
        .find(|p| p.is_file())
}

fn missing() -> Option<String> {
    if !oracles::python_imports("selenium") {
        return Some("python3 with selenium".into());
    }
    if on_path(&["chromium", "chromium-browser", "google-chrome"]).is_none() {
        return Some("chromium".into());
    }
    if on_path(&["chromedriver"]).is_none() {
        return Some("chromedriver (Debian chromium-driver)".into());
    }
    None
}

#[test]
fn the_lab_page_in_headless_chromium() {
    if let Some(what) = missing() {
        return oracles::skip("lab_browser", &what);
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/lab_browser_test.py");
    let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target/tmp has a parent")
        .join("lab");
    let out = Command::new("python3")
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_manaka"))
        .arg(&out_dir)
        .output()
        .expect("run python3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the browser test failed\nstdout: {stdout}\nstderr: {stderr}"
    );
    let summary: serde_json::Value =
        serde_json::from_str(stdout.lines().last().unwrap_or("")).expect("a JSON summary");
    eprintln!("lab browser test: {summary}");
    eprintln!("screenshots: {}", out_dir.display());
    for png in ["lab-part1.png", "lab-part2.png"] {
        let len = std::fs::metadata(out_dir.join(png)).map(|m| m.len());
        assert!(len.is_ok_and(|n| n > 10_000), "{png} was not saved");
    }
}
