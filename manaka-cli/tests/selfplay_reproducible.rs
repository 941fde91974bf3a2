//! Issue 16, fault 4: self-play on a compiled network gives the same bytes whatever the
//! batching. The embedded default network (`pair0_d128_o2_h512_kp`, compiled in) plays the
//! same games — byte for byte, every candidate's visit count included — one game at a time
//! on one evaluator thread, several games at once on two evaluator threads (twice), two
//! games at a time on two threads with no batch server (each its own evaluator), killed
//! mid-run and resumed, and with lost files played again beside other games. Before the fix
//! the accumulator cache that the evaluators share handed a leaf a state built along
//! another path, whose last f32 bits differ, and visit counts moved by ±1 to ±4.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn default_net() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../manaka-runtime/nets/default.mnw")
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "selfplay_reproducible-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The run's settings, written to `out` with `parallel` games in flight on `threads`
/// evaluator threads, or ("-") no batch server: `threads` games at a time, each thread
/// evaluating its own leaves (none of this is part of the run's identity).
fn args(out: &Path, parallel: &str, threads: &str) -> Vec<String> {
    let net = default_net();
    let mut a: Vec<String> = [
        "selfplay",
        "--weights",
        net.to_str().unwrap(),
        "--games",
        "6",
        "--simulations",
        "16",
        "--max-considered",
        "8",
        "--max-moves",
        "40",
        "--games-per-file",
        "1",
        "--seed",
        "3",
        "--threads",
        threads,
        "--out",
        out.to_str().unwrap(),
    ]
    .map(String::from)
    .to_vec();
    if parallel != "-" {
        a.extend(["--parallel".to_string(), parallel.to_string()]);
    }
    a
}

fn selfplay(out: &Path, parallel: &str, threads: &str) -> String {
    let a = args(out, parallel, threads);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let o = common::ok(&a);
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// The run's game files, by name.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "hcpe3"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    v.sort();
    v
}

/// Which files of `got` differ from `want` (or are missing).
fn differing(want: &[(String, Vec<u8>)], got: &[(String, Vec<u8>)]) -> Vec<String> {
    want.iter()
        .filter(|(name, bytes)| !got.iter().any(|(n, b)| n == name && b == bytes))
        .map(|(name, _)| name.clone())
        .collect()
}

#[test]
fn selfplay_on_a_compiled_network_is_the_same_whatever_the_batching_or_a_resume() {
    let dir = scratch("runs");
    let sequential = dir.join("sequential");
    let stderr = selfplay(&sequential, "1", "1");
    assert!(
        !stderr.contains("reference evaluator"),
        "the default shape is compiled in: {stderr}"
    );
    let want = files(&sequential);
    assert_eq!(want.len(), 6);

    // Several games per network call, split over two evaluator threads, twice.
    for run in ["parallel-a", "parallel-b"] {
        let out = dir.join(run);
        selfplay(&out, "3", "2");
        let d = differing(&want, &files(&out));
        assert!(d.is_empty(), "{run}: {d:?} differ from the sequential run");
    }

    // No batch server: two threads, each playing its own games with its own evaluator.
    let out = dir.join("per-thread");
    selfplay(&out, "-", "2");
    let d = differing(&want, &files(&out));
    assert!(
        d.is_empty(),
        "per thread: {d:?} differ from the sequential run"
    );

    // Killed once the first file is written, then resumed with other batching.
    let killed = dir.join("killed");
    let a = args(&killed, "2", "2");
    let mut child = Command::new(env!("CARGO_BIN_EXE_manaka"))
        .args(&a)
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("run manaka");
    let start = Instant::now();
    while !killed.join("selfplay-000000.hcpe3").exists()
        && start.elapsed() < Duration::from_secs(120)
        && child.try_wait().unwrap().is_none()
    {
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = child.kill();
    let _ = child.wait();
    eprintln!("killed with {} of 6 files written", files(&killed).len());
    let stderr = selfplay(&killed, "-", "2");
    assert!(stderr.contains("6/6 games"), "{stderr}");
    let d = differing(&want, &files(&killed));
    assert!(d.is_empty(), "killed and resumed: {d:?} differ");

    // Lost files played again, in other company than the first time.
    let lost = dir.join("parallel-a");
    for c in [1, 4] {
        std::fs::remove_file(lost.join(format!("selfplay-{c:06}.hcpe3"))).unwrap();
    }
    let stderr = selfplay(&lost, "2", "2");
    assert!(stderr.contains("(4 resumed)"), "{stderr}");
    let d = differing(&want, &files(&lost));
    assert!(d.is_empty(), "lost files played again: {d:?} differ");
}
