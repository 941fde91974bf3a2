//! Every script under `scripts/` that starts with a `#!` line is executable, as the README and
//! docs run them (`scripts/candidate.py …`): a script committed without its executable bit
//! works in the test suite (which starts them with `python3`) and fails for a user with
//! "Permission denied" — as `candidate.py` and `progress.py` did until 2026-12-07.

mod common;

use std::os::unix::fs::PermissionsExt;

#[test]
fn every_script_with_a_shebang_is_executable() {
    let dir = common::repo().join("scripts");
    let mut checked = 0;
    let mut not_executable = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if !path.is_file() {
            continue;
        }
        let head = std::fs::read(&path).unwrap();
        if !head.starts_with(b"#!") {
            continue;
        }
        checked += 1;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        if mode & 0o111 == 0 {
            not_executable.push(path.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    assert!(
        checked >= 10,
        "only {checked} scripts with a #! line under {dir:?}"
    );
    assert!(
        not_executable.is_empty(),
        "scripts with a #! line but no executable bit (chmod +x, and commit the mode): {not_executable:?}"
    );
}
