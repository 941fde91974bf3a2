//! The CUDA kernels of every compiled-in shape compile with NVRTC to CUBIN for sm_90
//! (H100/H200) and sm_80 (A100): the check of the kernels that runs without a GPU
//! (docs/gpu.md). NVRTC comes from PyPI's `nvidia-cuda-nvrtc`; `scripts/test` installs it and
//! points `MANAKA_NVRTC_LIB` at it. Without NVRTC these tests print why and skip; under
//! `MANAKA_REQUIRE_ORACLES=1` (CI) they fail instead.
#![cfg(feature = "cuda")]

mod common;

use common::oracles;
use manaka::kernels::cuda::Kernel;
use manaka::runtime::cuda::{CudaError, nvrtc};
use manaka::shapes::Shape;
use manaka_cli::engines::{COMPILED, CUDA_SOURCES};
use std::sync::Mutex;

/// Whether NVRTC loads; otherwise skip (or fail when the oracles are required).
fn nvrtc_available() -> bool {
    match nvrtc::version() {
        Ok((major, minor)) => {
            eprintln!("NVRTC {major}.{minor}");
            true
        }
        Err(e) => {
            oracles::skip("cuda_nvrtc", &format!("NVRTC ({e})"));
            false
        }
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Each shape's embedded `CUDA_SOURCE` (what `manaka_net!` baked in at compile time) is the
/// runtime's generation for that shape, so the CUDA evaluator and the constant agree. Needs
/// no NVRTC.
#[test]
fn embedded_cuda_sources_are_the_generated_ones() {
    assert_eq!(CUDA_SOURCES.len(), COMPILED.len());
    for (&(name, source), &compiled) in CUDA_SOURCES.iter().zip(COMPILED) {
        assert_eq!(name, compiled);
        let shape = Shape::parse(name).expect("compiled-in shapes are valid");
        assert_eq!(source, manaka::kernels::cuda::source(&shape), "{name}");
        assert!(source.contains(&format!("shape `{name}`")), "{name}");
    }
}

#[test]
fn nvrtc_compiles_every_compiled_in_shape_for_sm90_and_sm80() {
    if !nvrtc_available() {
        return;
    }
    let jobs: Vec<(&str, &str, &str)> = CUDA_SOURCES
        .iter()
        .flat_map(|&(name, src)| {
            nvrtc::CHECK_ARCHS
                .iter()
                .map(move |&arch| (name, src, arch))
        })
        .collect();
    let next = Mutex::new(jobs.into_iter());
    let failures = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(4);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let Some((name, src, arch)) = next.lock().unwrap().next() else {
                        return;
                    };
                    let shape = Shape::parse(name).expect("valid");
                    match nvrtc::cubin(src, arch, name) {
                        Ok(bin) => {
                            assert_eq!(&bin[..4], b"\x7fELF", "{name} {arch}");
                            for k in Kernel::ALL {
                                assert_eq!(
                                    contains(&bin, k.name().as_bytes()),
                                    k.exists_for(&shape),
                                    "{name} {arch}: kernel {}",
                                    k.name()
                                );
                            }
                            eprintln!("{name} {arch}: {} bytes", bin.len());
                        }
                        Err(e) => failures.lock().unwrap().push(format!("{name} {arch}: {e}")),
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "NVRTC failed:\n{}",
        failures.join("\n")
    );
}

/// A compile error comes back as an error carrying NVRTC's log (never a panic), so a broken
/// template is reported with the line NVRTC complains about.
#[test]
fn nvrtc_reports_compile_errors_with_the_log() {
    if !nvrtc_available() {
        return;
    }
    let bad = "extern \"C\" __global__ void broken() { int x = undefined_identifier; }";
    match nvrtc::cubin(bad, "sm_90", "broken") {
        Err(CudaError::Compile { log, arch, .. }) => {
            assert_eq!(arch, "sm_90");
            assert!(log.contains("undefined_identifier"), "{log}");
        }
        other => panic!("expected a compile error, got {other:?}"),
    }
}
