//! Regression tests for the faults issue 16 found by attacking the CLI: endless reads of
//! files that are not regular files, and the smaller faults of its item 6.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::refused;

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("manaka-cli-faults-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Runs `manaka` with its address space limited to 4 GiB, so that a command that reads
/// without end fails fast (an allocation failure aborts it) instead of exhausting the
/// machine.
fn manaka_limited(args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4194304 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_manaka"))
        .args(args)
        .output()
        .expect("run manaka")
}

/// Issue 16, fault 2: every command that loads a file refuses `/dev/zero` and a directory at
/// once (exit 2, one line naming the file and saying it is not a regular file) instead of
/// reading without end: `manaka eval --weights /dev/zero` grew to 24 GB.
#[test]
fn commands_refuse_files_that_are_not_regular_files() {
    let dir = scratch("irregular");
    let out = dir.join("out");
    let o = s(&out);
    for (bad, kind) in [
        ("/dev/zero", "a character device"),
        (s(&dir), "a directory"),
    ] {
        if !Path::new(bad).exists() {
            continue;
        }
        let commands: Vec<Vec<&str>> = vec![
            vec!["eval", "--weights", bad],
            vec!["go", "--weights", bad, "--simulations", "8"],
            vec!["weights", "verify", bad],
            vec!["weights", "inspect", bad],
            vec!["weights", "import-nnue", bad, "-o", o],
            vec![
                "selfplay",
                "--weights",
                bad,
                "--games",
                "1",
                "--simulations",
                "8",
                "--out",
                o,
            ],
            vec![
                "label",
                "--engine",
                "true",
                "--depth",
                "1",
                "--positions",
                bad,
                "--out",
                o,
            ],
        ];
        let mut commands = commands;
        if kind != "a directory" {
            // A directory given as --data is a directory of data files (it is listed).
            commands.push(vec![
                "train",
                "--shape",
                "pair4_d16_o2_h32",
                "--data",
                bad,
                "--format",
                "hcpe",
                "--out",
                o,
            ]);
            commands.push(vec![
                "train",
                "--shape",
                "pair4_d16_o2_h32",
                "--data",
                bad,
                "--format",
                "hcpe",
                "--init",
                bad,
                "--out",
                o,
            ]);
        }
        for args in commands {
            let run = manaka_limited(&args);
            let stderr = String::from_utf8_lossy(&run.stderr);
            assert_eq!(
                run.status.code(),
                Some(2),
                "{args:?}: {:?} {stderr}",
                run.status
            );
            assert!(
                stderr.contains(&format!("not a regular file ({kind})")) && stderr.contains(bad),
                "{args:?}: {stderr}"
            );
        }
    }
    // `refused` also checks the one-line, nothing-on-stdout contract for one of them.
    refused(&["eval", "--weights", "/dev/zero"]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 16, fault 5: resuming a finished run says it is finished (and what to do) instead
/// of training or refusing.
#[test]
fn resuming_a_finished_run_says_so() {
    use manaka_runtime::data::records::{GameResult, HcpeRecord, write_records};
    use manaka_runtime::random::{RandomPositions, random_positions};
    let dir = scratch("finished");
    let data = dir.join("d.hcpe");
    let positions = random_positions(&RandomPositions {
        count: 40,
        seed: 5,
        min_ply: 10,
        max_ply: 40,
    })
    .unwrap();
    let records: Vec<HcpeRecord> = positions
        .iter()
        .map(|p| HcpeRecord::new(p, 0, p.legal_moves().first().copied(), GameResult::Draw).unwrap())
        .collect();
    write_records(&data, &records).unwrap();
    let out = dir.join("net.mnw");
    let args = |resume: bool| {
        let mut a = vec![
            "train",
            "--shape",
            "pair2_d4_o1_h4",
            "--data",
            s(&data),
            "--out",
            s(&out),
            "--epochs",
            "1",
            "--batch",
            "16",
        ];
        if resume {
            a.push("--resume");
        }
        a
    };
    common::ok(&args(false));
    let weights = std::fs::read(&out).unwrap();
    let text = String::from_utf8(common::ok(&args(true)).stdout).unwrap();
    assert!(
        text.contains("that run is finished (1 epochs, 3 steps, 40 samples); nothing to do")
            && text.contains("--epochs more than 1"),
        "{text}"
    );
    assert_eq!(
        std::fs::read(&out).unwrap(),
        weights,
        "nothing is rewritten"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 16, item 6: re-running a finished `label` relabelled everything. Now it says the run
/// is finished and leaves OUT alone; `--force` labels again. The teacher is `manaka usi`.
#[test]
fn rerunning_a_finished_label_says_it_is_finished() {
    let dir = scratch("label");
    let input = dir.join("in.sfen");
    let out = dir.join("out.hcpe");
    common::ok(&["positions", "--random", "3", "--seed", "2", "-o", s(&input)]);
    let engine = format!("{} usi", env!("CARGO_BIN_EXE_manaka"));
    let label = |extra: &[&str]| {
        let mut a = vec![
            "label",
            "--engine",
            &engine,
            "--nodes",
            "8",
            "--positions",
            s(&input),
            "--out",
            s(&out),
        ];
        a.extend_from_slice(extra);
        common::ok(&a)
    };
    label(&[]);
    assert_eq!(std::fs::metadata(&out).unwrap().len(), 3 * 38);
    // Marked, so that a relabelling would show.
    std::fs::write(&out, [0u8; 3 * 38]).unwrap();
    let again = label(&[]);
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(
        stderr.contains("that run is finished (3 records); nothing to do (pass --force"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&out).unwrap(), [0u8; 3 * 38]);
    label(&["--force"]);
    assert_ne!(std::fs::read(&out).unwrap(), [0u8; 3 * 38]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 16, item 6: `manaka shape list`, named in help texts, errors and docs/data.md,
/// did not exist. It lists exactly the compiled-in shapes, and which have integer engines.
#[test]
fn shape_list_lists_the_compiled_in_shapes() {
    let v = common::json(&["shape", "list", "--json"]);
    let shapes = v["shapes"].as_array().unwrap();
    let names: Vec<&str> = shapes.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, manaka_cli::engines::COMPILED);
    for s in shapes {
        let name = s["name"].as_str().unwrap();
        let integer = manaka_cli::engines::COMPILED_INT.contains(&name);
        assert_eq!(s["integer"].as_bool(), Some(integer), "{name}");
        assert!(s["params"].as_u64().unwrap() > 0 && s["file_bytes"].as_u64().unwrap() > 0);
    }
    let text = String::from_utf8(common::ok(&["shape", "list"]).stdout).unwrap();
    assert_eq!(text.lines().count(), 1 + names.len(), "{text}");
    assert!(text.lines().all(|l| !l.trim().is_empty()));
}

/// Issue 16, item 6: error lines repeated a whole 120 KB input. Now the echo is an
/// 80-character excerpt with an ellipsis, on the command line and in USI `setoption`.
#[test]
fn error_lines_repeat_only_an_excerpt_of_long_input() {
    let long = "x".repeat(120_000);
    let moves = ["7g7f "; 20_000].concat();
    for args in [
        vec!["eval", "--sfen", long.as_str()],
        vec!["eval", "--moves", long.as_str()],
        vec!["shape", "info", long.as_str()],
        vec!["perft", "--sfen", long.as_str(), "--depth", "1"],
        vec!["moves", "--sfen", long.as_str()],
        vec!["eval", "--moves", "7g7f", moves.as_str()],
    ] {
        let line = refused(&args);
        assert!(line.len() < 1000, "{} bytes: {}", line.len(), &line[..200]);
        assert!(line.contains("..."), "{line}");
    }
    let mut usi = Command::new(env!("CARGO_BIN_EXE_manaka"))
        .arg("usi")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    let mut input = usi.stdin.take().unwrap();
    writeln!(input, "setoption name {long} value 1").unwrap();
    writeln!(input, "setoption name USI_Hash value {long}").unwrap();
    writeln!(input, "quit").unwrap();
    drop(input);
    let out = usi.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let errors: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("info string"))
        .collect();
    assert_eq!(errors.len(), 2, "{text:.400}");
    for l in errors {
        assert!(l.len() < 300 && l.contains("x..."), "{l}");
    }
}

/// Issue 16, item 6: `manaka eval … | head` panicked on the broken pipe (exit 101 and a
/// backtrace). A reader that has closed its end gets a quiet exit 0.
#[test]
fn a_closed_output_pipe_ends_the_command_quietly() {
    for args in [
        &["eval", "--sfen", "startpos", "--top", "600"][..],
        &["moves", "--sfen", "startpos"][..],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_manaka"))
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take()); // the reader is gone before the first line
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}
