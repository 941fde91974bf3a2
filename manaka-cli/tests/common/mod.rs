//! What the CLI tests share: running `manaka` and the three outcomes a user or script relies
//! on — success, one JSON object, a refusal (exit status 2, one line on stderr, nothing on
//! stdout) — and a scratch directory. Each test binary uses part of it.
#![allow(dead_code)]

pub mod oracles;

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs the `manaka` binary under test.
pub fn manaka(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_manaka"))
        .args(args)
        .output()
        .expect("run manaka")
}

/// Runs a command that must succeed.
pub fn ok(args: &[&str]) -> Output {
    let out = manaka(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs a command that must succeed and print one JSON object on one line.
pub fn json(args: &[&str]) -> Value {
    let text = String::from_utf8(ok(args).stdout).unwrap();
    assert_eq!(
        text.trim().lines().count(),
        1,
        "{args:?}: one JSON line expected, got {text:?}"
    );
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{args:?}: {e}: {text}"))
}

/// Runs a command that must be refused: status 2, one line on stderr, empty stdout.
pub fn refused(args: &[&str]) -> String {
    let out = manaka(args);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?}: status {:?}, stderr {stderr:?}",
        out.status
    );
    assert_eq!(
        stderr.lines().count(),
        1,
        "{args:?}: stderr must be one line: {stderr:?}"
    );
    assert!(!stderr.trim().is_empty());
    assert!(
        out.stdout.is_empty(),
        "{args:?}: stdout {:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    stderr
}

/// A scratch directory, removed at the end of the test.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("manaka-cli-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    pub fn file(&self, name: &str) -> String {
        self.0.join(name).to_string_lossy().into_owned()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
