//! `manaka build-engine` end to end: a tiny shape becomes a standalone USI engine that
//! answers `usi`, loads an MNW1 file of its shape at `isready` and plays a move; an invalid
//! shape is refused before anything is generated.
//!
//! The engine is built with `--debug` (cargo's dev profile: the build takes seconds, not
//! minutes) into a target directory under this test's `CARGO_TARGET_TMPDIR`, which persists
//! between runs, so only the first run compiles the dependencies.

use manaka::runtime::weights::{init, write_file};
use manaka::shapes::Shape;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const TINY: &str = "pair0_d8_o1_h8";

fn scratch() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("build-engine")
}

#[test]
fn builds_a_usi_engine_for_a_tiny_shape() {
    let root = scratch();
    let project = root.join(format!("project-{TINY}"));
    let out = Command::new(env!("CARGO_BIN_EXE_manaka"))
        .args(["build-engine", TINY, "--debug", "--out"])
        .arg(&project)
        .env("CARGO_TARGET_DIR", root.join("target"))
        .stderr(Stdio::inherit())
        .output()
        .expect("run manaka build-engine");
    assert!(
        out.status.success(),
        "build-engine failed: {:?}",
        out.status
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let exe = PathBuf::from(stdout.lines().last().expect("the binary's path is printed"));
    assert!(
        exe.is_file(),
        "{} is not the built binary (stdout {stdout:?})",
        exe.display()
    );
    let main = std::fs::read_to_string(project.join("src/main.rs")).unwrap();
    assert!(
        main.contains(&format!("manaka_net!(Net = \"{TINY}\")")),
        "the project expands the shape"
    );

    // A weight file of the shape, loaded through the USI option EvalFile.
    let weights = root.join(format!("{TINY}.mnw"));
    write_file(
        &weights,
        &init::random_weights(&Shape::parse(TINY).unwrap(), 9),
    )
    .unwrap();
    let script = format!(
        "usi\nsetoption name EvalFile value {}\nisready\nposition startpos moves 7g7f 3c3d\ngo nodes 16\nquit\n",
        weights.display()
    );
    let mut child = Command::new(&exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("run the engine");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "engine exit {:?}", out.status);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("usiok") && text.contains("readyok"), "{text}");
    // The compiled engine of the shape, not a fallback, evaluates with the file's weights.
    let loaded = text
        .lines()
        .find(|l| l.starts_with("info string") && l.contains(TINY))
        .unwrap_or("");
    assert!(
        loaded.contains("compiled") && loaded.contains(&weights.display().to_string()),
        "{text}"
    );
    let best = text
        .lines()
        .find_map(|l| l.strip_prefix("bestmove "))
        .expect("a bestmove line");
    assert!(best.len() >= 4 && best != "resign", "{text}");
}

#[test]
fn refuses_an_invalid_shape_before_generating_anything() {
    let project = scratch().join("project-refused");
    let out = Command::new(env!("CARGO_BIN_EXE_manaka"))
        .args(["build-engine", "pair16_d0128_o3_h512", "--out"])
        .arg(&project)
        .output()
        .expect("run manaka build-engine");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("leading zero") && stderr.contains("did you mean `d128`?"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
    assert!(
        !project.exists(),
        "nothing is generated for an invalid shape"
    );
}
