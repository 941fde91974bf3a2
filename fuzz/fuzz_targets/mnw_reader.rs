//! Fuzz the MNW1 reader (SPEC §7: nothing panics on a bad file).
//!
//! Input byte 0 picks the mode:
//! - even: the rest is a whole file, read as is (mostly refused at the magic or a length);
//! - odd: the rest is a list of (position, byte) overwrites of the header of a small valid
//!   file, whose checksum is then repaired, so that only the structural checks stand between the
//!   damage and the caller.

#![no_main]

#[path = "../checks.rs"]
#[allow(dead_code)] // each target uses one of the checks
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::mnw_reader(data));
