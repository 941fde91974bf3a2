//! `manaka build-engine`: a standalone USI engine binary for any valid shape.
//!
//! The `manaka` binary has a fixed set of shapes compiled in (`manaka shape list`); any other
//! shape runs on the reference evaluator. This command writes a small Cargo project whose
//! `main` expands `manaka::manaka_net!("SHAPE")` and runs the USI loop with that engine,
//! depending on this checkout's `manaka` crate by path, and builds it with cargo (whose
//! progress is streamed to stderr). The binary's path is the last line on stdout.

use anyhow::{Context, Result, bail};
use manaka::shapes::Shape;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Generate and build a standalone USI engine for SHAPE (any valid shape).
///
/// The engine loads an MNW1 file of that shape from the USI option `EvalFile`; without one it
/// plays on random weights. Its `main` is one call of the library (`Net::app().run_usi()`,
/// docs/library.md). Progress (cargo's) goes to stderr; the last line on stdout is the
/// binary's path. Set CARGO_TARGET_DIR to share compiled dependencies between engines. The
/// project depends on the `manaka` crate of the checkout this binary was built from (set
/// MANAKA_SRC to use another).
///
/// Example: `manaka build-engine pair8_d64_o2_h256 --native`
#[derive(clap::Args)]
pub struct Args {
    /// The network shape, e.g. pair16_d128_o3_h512 (see `manaka shape --help`).
    shape: String,
    /// Directory for the generated project (created if missing; default: a directory
    /// under the system's temporary directory, named after the shape).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Optimise for this machine's CPU (`-C target-cpu=native`); the binary may not run on
    /// older CPUs.
    #[arg(long)]
    native: bool,
    /// Build cargo's dev profile instead of release: a much faster build, a much slower
    /// engine (for trying the protocol and for tests).
    #[arg(long)]
    debug: bool,
}

/// Where this checkout's `manaka` crate is: `MANAKA_SRC` if set, else the source tree this
/// binary was built from.
fn manaka_source() -> Result<PathBuf> {
    let dir = match std::env::var_os("MANAKA_SRC") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join(".."),
    };
    let dir = dir.canonicalize().with_context(|| {
        format!(
            "the manaka sources are not at {} (set MANAKA_SRC to a checkout)",
            dir.display()
        )
    })?;
    if !dir.join("Cargo.toml").is_file() || !dir.join("manaka-macros").is_dir() {
        bail!(
            "{} is not a manaka checkout (set MANAKA_SRC to one)",
            dir.display()
        );
    }
    Ok(dir)
}

pub fn run(args: Args) -> Result<()> {
    let shape =
        Shape::parse(&args.shape).with_context(|| format!("invalid shape '{}'", args.shape))?;
    let canonical = shape.to_string();
    let source = manaka_source()?;
    let dir = match &args.out {
        Some(d) => d.clone(),
        None => std::env::temp_dir().join(format!("manaka-engine-{canonical}")),
    };
    let package = format!("manaka-{canonical}");
    write_project(&dir, &package, &canonical, &source)?;
    let profile = if args.debug { "dev" } else { "release" };
    eprintln!(
        "build-engine: {canonical} ({} parameters, {} MB of f32 weights): project {}, {profile} build{}",
        shape.param_count(),
        shape.bytes() >> 20,
        dir.display(),
        if args.native {
            ", target-cpu=native"
        } else {
            ""
        }
    );

    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(&cargo);
    cmd.arg("build")
        .arg("--manifest-path")
        .arg(dir.join("Cargo.toml"))
        .args(["--message-format", "json-render-diagnostics"])
        .args(if args.debug {
            &[][..]
        } else {
            &["--release"][..]
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if args.native {
        let mut flags = std::env::var("RUSTFLAGS").unwrap_or_default();
        flags.push_str(" -C target-cpu=native");
        cmd.env("RUSTFLAGS", flags.trim());
    }
    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot run {}", Path::new(&cargo).display()))?;
    // Cargo's human progress goes to stderr as it happens; its stdout carries JSON messages,
    // of which the executable of our package is the one we need.
    let mut executable = None;
    let stdout = child.stdout.take().expect("piped");
    for line in BufReader::new(stdout).lines() {
        let line = line.context("reading cargo's output")?;
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        if msg["reason"] == "compiler-artifact"
            && msg["target"]["name"] == package.as_str()
            && let Some(exe) = msg["executable"].as_str()
        {
            executable = Some(PathBuf::from(exe));
        }
    }
    let status = child.wait().context("waiting for cargo")?;
    if !status.success() {
        bail!(
            "cargo build failed ({status}) for the project in {}",
            dir.display()
        );
    }
    let exe = executable.context("cargo built the project but reported no executable")?;
    eprintln!(
        "build-engine: done; run it as a USI engine (set EvalFile to an MNW1 file of shape {canonical})"
    );
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", exe.display())?;
    Ok(())
}

/// Writes `Cargo.toml`, `Cargo.lock` (this checkout's, so that the same dependency versions
/// are used and nothing new is fetched) and `src/main.rs`.
fn write_project(dir: &Path, package: &str, shape: &str, source: &Path) -> Result<()> {
    std::fs::create_dir_all(dir.join("src"))
        .with_context(|| format!("cannot create {}", dir.display()))?;
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
    };
    // A `[workspace]` of its own, so that an --out inside another workspace still builds.
    let manifest = format!(
        r#"# Generated by `manaka build-engine {shape}`.
[package]
name = "{package}"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
manaka = {{ path = {source} }}

[workspace]

[profile.release]
codegen-units = 1
lto = "fat"
"#,
        source = toml_string(&source.display().to_string()),
    );
    write("Cargo.toml", &manifest)?;
    let lock = dir.join("Cargo.lock");
    if !lock.exists()
        && let Ok(text) = std::fs::read_to_string(source.join("Cargo.lock"))
    {
        write("Cargo.lock", &text)?;
    }
    write("src/main.rs", &main_rs(shape))
}

/// A TOML string holding `s`: a literal string (no escapes: Windows paths stay readable)
/// unless `s` contains a quote or a control character.
fn toml_string(s: &str) -> String {
    if s.contains('\'') || s.chars().any(char::is_control) {
        let escaped: String = s
            .chars()
            .map(|c| match c {
                '"' => "\\\"".to_string(),
                '\\' => "\\\\".to_string(),
                c if c.is_control() => format!("\\u{:04X}", c as u32),
                c => c.to_string(),
            })
            .collect();
        format!("\"{escaped}\"")
    } else {
        format!("'{s}'")
    }
}

/// The engine's `main.rs`: the shape's engine and the library's one-call USI program
/// (`manaka_runtime::app::App::run_usi`, docs/library.md).
fn main_rs(shape: &str) -> String {
    format!(
        r#"//! A standalone USI engine for the Manaka shape `{shape}`, generated by
//! `manaka build-engine {shape}`.
//!
//! Set the USI option `EvalFile` to an MNW1 weight file of this shape (a file of another
//! shape runs on the slow reference evaluator). Without one the engine plays on random
//! weights (seed 1), which is enough to try the protocol (the shape of the `manaka` binary's
//! embedded default network plays that network); `builtin:material` selects the material
//! evaluator. To build your own weights in: `Net::app().embedded(include_bytes!(…))`.

manaka::manaka_net!(Net = "{shape}");

fn main() -> std::process::ExitCode {{
    Net::app().run_usi()
}}
"#
    )
}

#[cfg(test)]
mod tests {
    use super::main_rs;

    /// The generated engine is the library's one-call program, not a copy of it.
    #[test]
    fn generated_main_uses_the_app_api() {
        let main = main_rs("pair0_d8_o1_h8");
        assert!(main.contains(r#"manaka::manaka_net!(Net = "pair0_d8_o1_h8");"#));
        assert!(main.contains("Net::app().run_usi()"));
        assert!(main.lines().count() < 20, "{main}");
    }
}
