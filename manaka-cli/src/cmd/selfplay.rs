//! `manaka selfplay`: Gumbel self-play games as dlshogi HCPE3 training data.

use anyhow::{Context, Result, anyhow, bail};
use manaka_cli::engines;
use manaka_runtime::data::sources::{SourceFormat, read_positions};
use manaka_runtime::eval::EvaluatorFactory;
use manaka_runtime::loader::{Backend, Precision, Weights};
use manaka_runtime::runs::selfplay::{
    self, Batching, GameSettings, Openings, Progress, Resign, SelfplayConfig, Shard,
};
use manaka_runtime::shogi::EnteringKingRule;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Play Gumbel self-play games and write them as HCPE3 (dlshogi's game format).
///
/// Every move spends the full Sequential Halving schedule of --simulations with root Gumbel
/// noise (so games differ); --threads games are played side by side, each thread evaluating
/// its own leaves (or, with --parallel P, P games whose leaves share one network call). Games end by
/// checkmate, entering-king declaration (CSA 27-point rule), fourfold repetition (perpetual
/// check loses) or --max-moves (a draw). Each move is stored with the search's root value as
/// eval and every root move's improved-policy probability as its visit count (scaled so the
/// largest is 65535).
///
/// Games are written to DIR in files of --games-per-file games, each file atomically once
/// complete. Run the same command again to resume: finished files are kept, the missing
/// games are played again exactly as before (a game depends only on the seed and its
/// number), and other settings in the same DIR are refused.
///
/// Openings: game i starts from line i mod n of --openings (SFEN lines, as `manaka positions`
/// writes them; default: the start position), then plays --random-plies uniformly random
/// legal moves, drawn from the seed and the game number.
///
/// Resigning: with --resign-below P the side to move resigns when the search gives it a win
/// probability below P; a share (--resign-playout) of games is played out anyway, and the
/// summary counts how many of their due resignations would have been wrong.
///
/// Several machines: --shard i/n plays only the files whose number is i mod n. The shards'
/// files are exactly those of one unsharded run (same seed and settings), so they can share
/// a directory, or be copied into one, with no merge step (docs/training.md shows Slurm and
/// Kubernetes job arrays).
///
/// Example: `manaka selfplay --weights net.mnw --games 1000 --simulations 32 --out games/`
#[derive(clap::Args)]
pub struct Args {
    /// MNW1 weight file, or `builtin:material` (material value, uniform policy: no network).
    #[arg(long, value_name = "FILE")]
    weights: String,
    /// Games in the run.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    games: u64,
    /// Simulations per move (the Sequential Halving budget).
    #[arg(long, value_name = "S", value_parser = clap::value_parser!(u32).range(1..))]
    simulations: u32,
    /// Root moves Sequential Halving starts with.
    #[arg(long, default_value_t = 16, value_name = "M", value_parser = clap::value_parser!(u32).range(1..=600))]
    max_considered: u32,
    /// Threads: each plays one game at a time and evaluates its own leaves (with --parallel:
    /// the evaluator threads sharing each network call).
    #[arg(long, default_value_t = 1, value_name = "T", value_parser = clap::value_parser!(u32).range(1..=256))]
    threads: u32,
    /// Play P games at once, each on a thread of its own, their leaves evaluated together by
    /// a batch server (one simulation of every game per network call, split over --threads).
    /// Default: no batch server — on a CPU about 3× faster (docs/data.md); the games are the
    /// same either way.
    #[arg(long, value_name = "P", value_parser = clap::value_parser!(u32).range(1..=4096))]
    parallel: Option<u32>,
    /// Output directory.
    #[arg(long, default_value = "selfplay", value_name = "DIR")]
    out: PathBuf,
    /// Seed: the same seed, network and settings give the same games.
    #[arg(long, default_value_t = 1, value_name = "X")]
    seed: u64,
    /// A game still going after this many moves is a draw.
    #[arg(long, default_value_t = 320, value_parser = clap::value_parser!(u32).range(1..=65535))]
    max_moves: u32,
    /// Scale of the root Gumbel noise (must be above 0).
    #[arg(long, default_value_t = 1.0)]
    gumbel_scale: f64,
    /// Games per output file.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..))]
    games_per_file: u64,
    /// Which evaluator runs an MNW1 file: the compiled engine for its shape when there is one
    /// (auto), only that (compiled), or the shape-generic reference evaluator (reference).
    #[arg(long, default_value = "auto", value_parser = super::eval::backend_parser(&BACKENDS))]
    backend: Backend,
    /// Number format of the compiled engine's hidden-layer weights: f32, bf16 or int8 (as
    /// `manaka eval --precision`); any but f32 is named in the run's manifest.
    #[arg(long, default_value = "f32", value_parser = super::eval::precision_parser())]
    precision: Precision,
    /// Opening positions, one per line (SFEN, `startpos`, `sfen …`, `position … moves …`);
    /// game i starts from line i mod n. Default: the start position.
    #[arg(long, value_name = "FILE")]
    openings: Option<PathBuf>,
    /// Uniformly random legal plies played from the opening before the first searched move.
    #[arg(long, default_value_t = 0, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=64))]
    random_plies: u32,
    /// Resign when the searched win probability of the side to move is below P (e.g. 0.03).
    /// Default: play every game out.
    #[arg(long, value_name = "P")]
    resign_below: Option<f64>,
    /// With --resign-below: the share of games played out anyway, to count the resignations
    /// that would have been wrong.
    #[arg(long, default_value_t = 0.1, value_name = "SHARE")]
    resign_playout: f64,
    /// Play only part i of n of the run (0 <= i < n): the files numbered i mod n.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    shard: Option<Shard>,
}

fn parse_shard(text: &str) -> Result<Shard, String> {
    Shard::parse(text)
}

/// The backends self-play offers (the integer and CUDA ones are for single evaluations and
/// the USI engine).
const BACKENDS: [Backend; 3] = [Backend::Auto, Backend::Compiled, Backend::Reference];

/// The evaluator factory and the network's identity for the run's manifest (shape and
/// weights checksum, or `builtin:material`).
fn load(
    weights: &str,
    backend: Backend,
    precision: Precision,
) -> Result<(Arc<dyn EvaluatorFactory>, String)> {
    if precision != Precision::F32 && backend == Backend::Reference {
        return Err(anyhow!(
            "--precision {precision} applies to the compiled engines of float shapes, not to \
             the reference backend; drop --precision or use --backend auto or compiled"
        ));
    }
    let net = engines::loader()
        .with_precision(precision)
        .load(&Weights::parse(weights), backend)
        .map_err(|e| anyhow!("--weights: {e}"))?;
    if backend == Backend::Auto && net.reference.is_some() {
        eprintln!("note: {}", net.description);
    }
    if let Some(note) = net.precision_note(precision) {
        eprintln!("note: {note}");
    }
    // Games played at another precision are another network's games: a run resumed at a
    // different precision is refused by its manifest.
    let identity = match net.precision {
        Precision::F32 => net.identity,
        p => format!("{} precision {p}", net.identity),
    };
    Ok((net.factory, identity))
}

fn line(p: &Progress) -> String {
    let t = &p.tally;
    format!(
        "selfplay: {}/{} games{}, {:.1} moves/s, B {} W {} D {} (mate {}, sennichite {}, nyugyoku {}, max-moves {}{}){}",
        p.games_done,
        p.games_total,
        if p.games_resumed > 0 {
            format!(" ({} resumed)", p.games_resumed)
        } else {
            String::new()
        },
        p.moves_per_second(),
        t.black_wins,
        t.white_wins,
        t.draws,
        t.checkmates,
        t.sennichite,
        t.nyugyoku,
        t.max_moves,
        if t.resigned > 0 || t.resign_checks > 0 {
            format!(
                ", resigned {}; played out with a resignation due {}, of which wrong {}",
                t.resigned, t.resign_checks, t.false_resignations
            )
        } else {
            String::new()
        },
        // Only the batch server (`--parallel`) gathers several leaves per evaluator call;
        // per-thread games always evaluate one, which is not worth a column.
        if p.batch_fill() > 1.0 {
            format!(", {:.1} leaves/call", p.batch_fill())
        } else {
            String::new()
        },
    )
}

pub fn run(args: Args) -> Result<()> {
    if !(args.gumbel_scale.is_finite() && args.gumbel_scale > 0.0) {
        bail!(
            "--gumbel-scale must be a finite number above 0 (self-play needs noise so games differ), not {}",
            args.gumbel_scale
        );
    }
    let openings = match &args.openings {
        None => Openings::startpos(args.random_plies),
        Some(path) => {
            let positions: Vec<_> = read_positions(path, SourceFormat::Sfen)
                .with_context(|| format!("cannot read --openings {}", path.display()))?
                .into_iter()
                .map(|p| p.position)
                .collect();
            Openings::new(&positions, args.random_plies).ok_or_else(|| {
                anyhow!(
                    "--openings {} holds no positions (one SFEN per line expected)",
                    path.display()
                )
            })?
        }
    };
    let resign = match args.resign_below {
        None => None,
        Some(p) if p > 0.0 && p < 0.5 => {
            if !(0.0..=1.0).contains(&args.resign_playout) {
                bail!(
                    "--resign-playout is a share of games in [0, 1], not {}",
                    args.resign_playout
                );
            }
            Some(Resign {
                below: p,
                check_share: args.resign_playout,
            })
        }
        Some(p) => bail!("--resign-below is a win probability in (0, 0.5), e.g. 0.03, not {p}"),
    };
    let (factory, network) = load(&args.weights, args.backend, args.precision)?;
    let config = SelfplayConfig {
        games: args.games,
        settings: GameSettings {
            simulations: args.simulations,
            max_considered: args.max_considered,
            gumbel_scale: args.gumbel_scale,
            max_moves: args.max_moves,
            entering_king: EnteringKingRule::Csa27,
            cache_entries: 1 << 12,
            resign,
        },
        seed: args.seed,
        batching: match args.parallel {
            None => Batching::PerThread,
            Some(p) => Batching::Server { games: p as usize },
        },
        games_per_file: args.games_per_file,
        openings,
        shard: args.shard.unwrap_or_default(),
    };
    let tty = std::io::stderr().is_terminal();
    let every = if tty {
        Duration::from_millis(500)
    } else {
        Duration::from_secs(10)
    };
    let mut last: Option<Instant> = None;
    let mut printed = false;
    let mut progress = |p: &Progress| {
        if last.is_some_and(|t| t.elapsed() < every) {
            return;
        }
        last = Some(Instant::now());
        if tty {
            eprint!("\r{}   ", line(p));
            printed = true;
        } else {
            eprintln!("{}", line(p));
        }
    };
    let result = selfplay::run(
        &config,
        &network,
        factory,
        args.threads as usize,
        &args.out,
        &mut progress,
    );
    if printed {
        eprintln!();
    }
    let p = result.map_err(|e| anyhow!("{e}"))?;
    eprintln!("{}", line(&p));
    if let Some(finished) = p.finished(&args.out) {
        eprintln!("selfplay: {finished}");
        return Ok(());
    }
    eprintln!(
        "selfplay: {} moves in {:.1} s this session, {} files written to {}",
        p.moves,
        p.elapsed.as_secs_f64(),
        p.files_written,
        args.out.display()
    );
    Ok(())
}
