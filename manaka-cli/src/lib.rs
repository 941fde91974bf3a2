//! Library side of the `manaka` command: the compiled-in engines, shared by the binary, its
//! integration tests and benchmarks.

pub mod engines;
