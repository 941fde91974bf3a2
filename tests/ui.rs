//! Compile-time behaviour of `manaka_net!` (trybuild).
//!
//! `ui/fail/*.rs` must each fail to compile with the error in the `.stderr` beside it: every
//! `ShapeError` variant that a shape string can produce (spanned on the literal, carrying the
//! shapes crate's message and its "did you mean" suggestion) and the macro's own syntax errors.
//! `ShapeError::TooLarge` cannot be reached from a string: no shape within SPEC §2's token
//! ranges reaches 16 GiB (the shapes crate tests that rule with a smaller limit).
//! `ui/pass/*.rs` must compile and run: valid shapes, both forms of the macro.
//!
//! After an intended change of a message, regenerate the expectations with
//! `TRYBUILD=overwrite cargo test --test ui` and review the diff of `tests/ui/fail/*.stderr`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
