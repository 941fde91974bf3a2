//! Fuzz target: see `checks::nnue` (fuzz/checks.rs) for what it checks.

#![no_main]

#[path = "../checks.rs"]
#[allow(dead_code)] // each target uses one of the checks
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::nnue(data));
