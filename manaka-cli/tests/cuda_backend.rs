//! The CUDA backend from the command line (docs/gpu.md): `manaka gpu-check` and the USI
//! option `Backend`. On a machine without a GPU (CI) both must say why and stay usable — the
//! check refuses with exit status 2, the engine runs on the CPU — and never panic; on a
//! machine with one, the check passes and the engine names the device.
#![cfg(feature = "cuda")]

use manaka::runtime::cuda;
use std::io::Write;
use std::process::{Command, Stdio};

fn run(args: &[&str], input: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_manaka"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn gpu_check_refuses_without_a_gpu_and_passes_with_one() {
    let (code, stdout, stderr) = run(
        &[
            "gpu-check",
            "--shapes",
            "pair4_d16_o2_h32",
            "--positions",
            "20",
            "--bench-shapes",
            "none",
            "--json",
        ],
        "",
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    match cuda::probe() {
        Err(why) => {
            assert_eq!(code, 2, "{stdout}{stderr}");
            assert!(stderr.starts_with("error: no usable GPU: "), "{stderr}");
            eprintln!("no GPU here ({why}): gpu-check refused as it should");
        }
        Ok(device) => {
            assert_eq!(code, 0, "{stdout}{stderr}");
            let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
            assert_eq!(v["ok"], true, "{stdout}");
            assert_eq!(v["equivalence"][0]["leaves"], 22);
            eprintln!("gpu-check passed on {device}");
        }
    }
}

#[test]
fn gpu_check_refuses_bad_arguments() {
    let (code, _, stderr) = run(&["gpu-check", "--shapes", "d128_pair16_o3_h512"], "");
    assert_eq!(code, 2);
    assert!(
        stderr.contains("bad shape 'd128_pair16_o3_h512'"),
        "{stderr}"
    );
    let (code, _, stderr) = run(&["gpu-check", "--batches", "0"], "");
    assert_eq!(code, 2);
    assert!(stderr.contains("--batches"), "{stderr}");
}

#[test]
fn usi_backend_cuda_says_why_it_runs_on_the_cpu_or_names_the_device() {
    let input =
        "usi\nsetoption name Backend value cuda\nisready\nposition startpos\ngo nodes 8\nquit\n";
    let (code, stdout, stderr) = run(&["usi"], input);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("option name Backend type combo default cpu var cpu var cuda"),
        "{stdout}"
    );
    assert!(stdout.contains("bestmove "), "{stdout}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let info = stdout
        .lines()
        .find(|l| l.starts_with("info string ") && l.contains("EvalFile not set"))
        .unwrap_or_else(|| panic!("no network description in:\n{stdout}"));
    match cuda::probe() {
        Err(_) => assert!(
            info.starts_with("info string Backend cuda unavailable: "),
            "{info}"
        ),
        Ok(device) => assert!(info.contains(&format!("CUDA, {}", device.name)), "{info}"),
    }
}
