//! `manaka positions`: random positions for labelling, as SFEN lines.

use anyhow::{Context, Result, bail};
use manaka_runtime::data::write_atomic;
use manaka_runtime::random::{RandomPositions, random_positions};
use std::path::PathBuf;

/// Write distinct random positions, one SFEN per line.
///
/// Each position is reached by a playout of uniformly random legal moves from the start
/// position, of a length drawn uniformly from --min-ply..=--max-ply. Repeats (same board,
/// hands and side to move) and positions without a legal move are dropped. The same seed
/// always gives the same file.
///
/// Example: `manaka positions --random 10000 --seed 1 --min-ply 8 --max-ply 80 -o pos.sfen`
#[derive(clap::Args)]
pub struct Args {
    /// How many positions.
    #[arg(long, value_name = "N")]
    random: usize,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Shortest playout, in plies.
    #[arg(long, default_value_t = 1, value_name = "A")]
    min_ply: u32,
    /// Longest playout, in plies.
    #[arg(long, default_value_t = 60, value_name = "B")]
    max_ply: u32,
    /// Output file (written atomically).
    #[arg(short, long, value_name = "FILE")]
    out: PathBuf,
}

pub fn run(args: Args) -> Result<()> {
    if args.random == 0 {
        bail!("--random must be at least 1");
    }
    if args.min_ply > args.max_ply {
        bail!(
            "--min-ply {} is above --max-ply {}",
            args.min_ply,
            args.max_ply
        );
    }
    let settings = RandomPositions {
        count: args.random,
        seed: args.seed,
        min_ply: args.min_ply,
        max_ply: args.max_ply,
    };
    let positions = random_positions(&settings).map_err(anyhow::Error::msg)?;
    let mut text = String::with_capacity(positions.len() * 80);
    for p in &positions {
        text.push_str(&p.to_sfen());
        text.push('\n');
    }
    write_atomic(&args.out, text.as_bytes())
        .with_context(|| format!("writing {}", args.out.display()))?;
    eprintln!(
        "wrote {} positions to {}",
        positions.len(),
        args.out.display()
    );
    Ok(())
}
