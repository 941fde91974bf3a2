//! `manaka positions`: random positions for labelling, as SFEN lines.

use anyhow::{Context, Result, bail};
use manaka_runtime::data::sources::{SourceFormat, read_positions};
use manaka_runtime::data::write_atomic;
use manaka_runtime::random::{RandomPositions, random_children, random_positions};
use std::path::PathBuf;

/// Write distinct random positions, one SFEN per line.
///
/// Each position is reached by a playout of uniformly random legal moves from the start
/// position, of a length drawn uniformly from --min-ply..=--max-ply. Repeats (same board,
/// hands and side to move) and positions without a legal move are dropped. The same seed
/// always gives the same file.
///
/// Example: `manaka positions --random 10000 --seed 1 --min-ply 8 --max-ply 80 -o pos.sfen`
///
/// With --children-of FILE instead: for about one in --sample of FILE's positions (SFEN lines,
/// HCPE3 games, HCPE or PSV records — whatever `manaka label` reads), the position after one
/// uniformly random legal move. These are the positions a search evaluates and rejects, where
/// a network trained on its own games alone is least like its teacher (docs/history.md,
/// "Positions one move off the games"); label them and train on them beside the games.
///
/// Example: `manaka positions --children-of games.hcpe3 --sample 4 --seed 1 -o children.sfen`
#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["random", "children_of"])))]
pub struct Args {
    /// How many positions.
    #[arg(long, value_name = "N")]
    random: Option<usize>,
    /// The positions one random legal move from those of this file.
    #[arg(long, value_name = "FILE")]
    children_of: Option<PathBuf>,
    /// With --children-of: about one position in K, chosen by a hash of its index (as
    /// `manaka label --sample`).
    #[arg(long, value_name = "K", default_value_t = 1,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    sample: u64,
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
    let positions = match (&args.children_of, args.random) {
        (Some(file), _) => {
            let parents = read_positions(file, SourceFormat::from_path(file))
                .with_context(|| format!("reading --children-of {}", file.display()))?
                .into_iter()
                .map(|p| p.position)
                .collect::<Vec<_>>();
            let children = random_children(&parents, args.sample, args.seed);
            if children.is_empty() {
                bail!(
                    "{} gave no positions ({} read, about one in {} kept): sample fewer",
                    file.display(),
                    parents.len(),
                    args.sample
                );
            }
            children
        }
        (None, Some(n)) => random_playouts(&args, n)?,
        (None, None) => bail!("give --random N or --children-of FILE"),
    };
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

fn random_playouts(args: &Args, count: usize) -> Result<Vec<manaka_runtime::shogi::Position>> {
    if count == 0 {
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
        count,
        seed: args.seed,
        min_ply: args.min_ply,
        max_ply: args.max_ply,
    };
    random_positions(&settings).map_err(anyhow::Error::msg)
}
