//! `scripts/dataset.py`, the labelled-position archive (data/labels/), as a user runs it: pack a
//! set, list it, unpack it byte for byte, pack it again (nothing done), and the refusals — a
//! file that is not whole HCPE records, a name taken by other content, an unknown name, and an
//! archived file damaged after packing (caught by `verify` and `unpack`, nothing written).
//! Needs only python3 (its standard library); the records are synthetic, since the archive
//! keeps bytes and never reads positions.

mod common;

use common::{repo, target_scratch};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

const HCPE: usize = 38;

fn dataset(archive: &Path, args: &[&str]) -> Output {
    Command::new("python3")
        .arg(repo().join("scripts/dataset.py"))
        .arg("--archive")
        .arg(archive)
        .args(args)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// `n` records of a deterministic, mildly repetitive pattern (as positions of one game are).
fn records(n: usize, salt: u8) -> Vec<u8> {
    (0..n * HCPE)
        .map(|i| ((i % HCPE) as u8).wrapping_mul(7) ^ ((i / (HCPE * 5)) as u8) ^ salt)
        .collect()
}

#[test]
fn the_archive_keeps_labelled_sets_byte_for_byte_and_refuses_what_it_cannot_keep() {
    let dir = target_scratch("dataset_script");
    let archive = dir.join("archive");
    let set = dir.join("set.hcpe");
    let data = records(500, 0);
    std::fs::write(&set, &data).unwrap();
    let s = set.to_str().unwrap();

    let out = dataset(
        &archive,
        &[
            "pack",
            s,
            "--name",
            "sp1-d9",
            "--describe",
            "500 records",
            "--command",
            "manaka label …",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(archive.join("manifest.json")).unwrap())
            .unwrap();
    let entry = &manifest["sets"][0];
    assert_eq!(entry["name"], "sp1-d9");
    assert_eq!(entry["records"], 500);
    assert_eq!(entry["bytes"], 500 * HCPE);
    assert_eq!(entry["commands"][0], "manaka label …");
    let xz = archive.join("sp1-d9.hcpe.xz");
    assert_eq!(
        entry["xz_bytes"].as_u64(),
        Some(std::fs::metadata(&xz).unwrap().len())
    );
    assert!(
        std::fs::metadata(&xz).unwrap().len() < (500 * HCPE) as u64,
        "compressed"
    );
    assert!(!archive.join("sp1-d9.hcpe.xz.tmp").exists());

    // Listed, and unpacked to exactly the bytes that went in.
    let list = dataset(&archive, &["list"]);
    assert!(String::from_utf8_lossy(&list.stdout).contains("| sp1-d9 | 500 |"));
    let to = dir.join("work");
    let out = dataset(&archive, &["unpack", "--all", "--to", to.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read(to.join("sp1-d9.hcpe")).unwrap(), data);
    assert!(dataset(&archive, &["verify"]).status.success());

    // The same set again: nothing done. Other content under the name: refused.
    let again = dataset(&archive, &["pack", s, "--name", "sp1-d9"]);
    assert!(again.status.success());
    assert!(String::from_utf8_lossy(&again.stdout).contains("already archived"));
    let other = dir.join("other.hcpe");
    std::fs::write(&other, records(20, 1)).unwrap();
    let o = other.to_str().unwrap();
    let out = dataset(&archive, &["pack", o, "--name", "sp1-d9"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("archived with other content"),
        "{}",
        stderr(&out)
    );
    // A second set sits beside the first.
    assert!(
        dataset(&archive, &["pack", o, "--name", "sp2"])
            .status
            .success()
    );
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(archive.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["sets"].as_array().unwrap().len(), 2);

    // Not whole records, a bad name, an unknown set.
    let torn = dir.join("torn.hcpe");
    std::fs::write(&torn, &data[..HCPE * 3 + 5]).unwrap();
    let out = dataset(&archive, &["pack", torn.to_str().unwrap(), "--name", "t"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not a whole"), "{}", stderr(&out));
    let out = dataset(&archive, &["pack", s, "--name", "../escape"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--name"), "{}", stderr(&out));
    let out = dataset(&archive, &["unpack", "nope", "--to", to.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no set named nope") && stderr(&out).contains("sp1-d9"),
        "{}",
        stderr(&out)
    );

    // Damage after packing: a truncated file is caught, and unpack writes nothing.
    let packed = std::fs::read(&xz).unwrap();
    std::fs::write(&xz, &packed[..packed.len() / 2]).unwrap();
    let out = dataset(&archive, &["verify"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("restore it from git"),
        "{}",
        stderr(&out)
    );
    let fresh = dir.join("fresh");
    let out = dataset(
        &archive,
        &["unpack", "sp1-d9", "--to", fresh.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(!fresh.join("sp1-d9.hcpe").exists());
    assert!(!fresh.join("sp1-d9.hcpe.tmp").exists());
    // A set whose file is gone: named, not a traceback.
    std::fs::remove_file(&xz).unwrap();
    for args in [
        &["verify"][..],
        &["unpack", "sp1-d9", "--to", fresh.to_str().unwrap()],
    ] {
        let out = dataset(&archive, args);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains("is missing"), "{}", stderr(&out));
    }
}
