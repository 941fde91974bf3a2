//! Self-play with the material evaluator (no weights needed): games are legal, end as their
//! headers say, are reproducible for a seed whatever the batching, and runs resume.

use super::*;
use crate::data::hcpe3::GameOutcome;
use crate::data::records::{GameResult, move_from_cshogi16};
use crate::eval::MaterialEvaluator;
use crate::search::{RootNoise, SearchLimits};
use crate::shogi::{EnteringKingRule, Position};

fn settings() -> GameSettings {
    GameSettings {
        simulations: 8,
        max_considered: 4,
        gumbel_scale: 1.0,
        max_moves: 120,
        entering_king: EnteringKingRule::Csa27,
        cache_entries: 1024,
        resign: None,
    }
}

/// `parallel` games through the batch server, or (0) one game at a time per thread.
fn config(games: u64, parallel: usize) -> SelfplayConfig {
    SelfplayConfig {
        games,
        settings: settings(),
        seed: 11,
        batching: match parallel {
            0 => Batching::PerThread,
            games => Batching::Server { games },
        },
        games_per_file: 4,
        openings: Default::default(),
        shard: Default::default(),
    }
}

/// The ending a game's header claims, checked against the rules on the replayed game.
pub(crate) fn check_ending(g: &Hcpe3Game, max_moves: usize) -> Result<&'static str, String> {
    check_ending_or_resignation(g, max_moves, false)
}

/// As [`check_ending`]; with `resigning`, a game without flags that is not a checkmate must
/// be a resignation by the side to move (the other side wins).
fn check_ending_or_resignation(
    g: &Hcpe3Game,
    max_moves: usize,
    resigning: bool,
) -> Result<&'static str, String> {
    let end = g.replay()?;
    let stm = end.side_to_move();
    let GameOutcome {
        result,
        sennichite,
        nyugyoku,
        max_moves: at_limit,
    } = g.outcome;
    let flags = usize::from(sennichite) + usize::from(nyugyoku) + usize::from(at_limit);
    if flags > 1 {
        return Err(format!("several ending flags: {:?}", g.outcome));
    }
    if sennichite {
        let want = match end.sennichite() {
            Some(crate::shogi::Repetition::Win) => GameResult::win_for(stm),
            Some(crate::shogi::Repetition::Lose) => GameResult::win_for(stm.flip()),
            Some(_) => GameResult::Draw,
            None => {
                return Err(
                    "sennichite flag, but the final position is not a fourfold repetition".into(),
                );
            }
        };
        return if result == want {
            Ok("sennichite")
        } else {
            Err(format!("repetition result {result:?}, expected {want:?}"))
        };
    }
    if end.sennichite().is_some() {
        return Err("a fourfold repetition the header does not mention".into());
    }
    if nyugyoku {
        return if end.can_declare_win(EnteringKingRule::Csa27) && result == GameResult::win_for(stm)
        {
            Ok("nyugyoku")
        } else {
            Err("nyugyoku flag without a valid declaration by the winner".into())
        };
    }
    if at_limit {
        return if g.moves.len() == max_moves && result == GameResult::Draw && end.has_legal_moves()
        {
            Ok("max moves")
        } else {
            Err(format!(
                "max-moves flag after {} moves with result {result:?}",
                g.moves.len()
            ))
        };
    }
    if end.is_checkmate() && result == GameResult::win_for(stm.flip()) {
        Ok("checkmate")
    } else if resigning && end.has_legal_moves() && result == GameResult::win_for(stm.flip()) {
        Ok("resignation")
    } else {
        Err(format!(
            "no flag, so a checkmate was expected; final {} result {result:?}",
            end.to_sfen()
        ))
    }
}

fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(name).tempdir().unwrap()
}

fn all_bytes(dir: &Path, chunks: u64) -> Vec<Vec<u8>> {
    (0..chunks)
        .map(|c| std::fs::read(chunk_path(dir, c)).unwrap())
        .collect()
}

#[test]
fn games_are_legal_end_as_headed_and_resume_identically() {
    let dir = scratch("selfplay");
    let cfg = config(6, 3);
    let mut reports = 0;
    let p = run(
        &cfg,
        "material",
        MaterialEvaluator::factory(),
        1,
        dir.path(),
        &mut |_| reports += 1,
    )
    .unwrap();
    assert!(reports >= 1);
    assert_eq!((p.games_done, p.games_resumed, p.files_written), (6, 0, 2));
    assert!(p.calls > 0 && p.leaves >= p.calls);
    assert_eq!(
        p.finished(dir.path()),
        None,
        "a run that played is not 'finished'"
    );
    let mut endings = Vec::new();
    let mut games = Vec::new();
    for c in 0..2 {
        games.extend(read_hcpe3(chunk_path(dir.path(), c)).unwrap());
    }
    assert_eq!(games.len(), 6);
    for (i, g) in games.iter().enumerate() {
        endings.push(check_ending(g, 120).unwrap_or_else(|e| panic!("game {i}: {e}")));
        assert!(!g.moves.is_empty());
        for m in &g.moves {
            assert!(
                !m.candidates.is_empty(),
                "game {i}: a searched move without candidates"
            );
            assert!(m.eval.abs() <= 30000);
            assert!(
                m.candidates.iter().any(|c| c.visits == u16::MAX),
                "the top candidate gets 65535"
            );
        }
    }
    // Games differ (noise), and none is cut short.
    let firsts: std::collections::HashSet<Vec<u16>> = games
        .iter()
        .map(|g| g.moves.iter().take(6).map(|m| m.move16).collect())
        .collect();
    assert!(
        firsts.len() > 1,
        "all games opened alike: the noise is not applied"
    );
    eprintln!("endings: {endings:?}");

    // Same seed, one game at a time: the same files, byte for byte.
    let one = scratch("selfplay-serial");
    run(
        &config(6, 1),
        "material",
        MaterialEvaluator::factory(),
        1,
        one.path(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(all_bytes(dir.path(), 2), all_bytes(one.path(), 2));

    // No batch server: two threads, each playing its games with its own evaluator, one
    // leaf a call.
    let direct = scratch("selfplay-per-thread");
    let p = run(
        &config(6, 0),
        "material",
        MaterialEvaluator::factory(),
        2,
        direct.path(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(p.calls, p.leaves, "one leaf a call: {p:?}");
    assert_eq!(all_bytes(dir.path(), 2), all_bytes(direct.path(), 2));

    // Resume: a lost file is played again, identically; the other is kept.
    let before = all_bytes(dir.path(), 2);
    std::fs::remove_file(chunk_path(dir.path(), 1)).unwrap();
    let p = run(
        &cfg,
        "material",
        MaterialEvaluator::factory(),
        2,
        dir.path(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!((p.games_resumed, p.games_done, p.files_written), (4, 6, 1));
    assert_eq!(all_bytes(dir.path(), 2), before);
    // Nothing left to do.
    let p = run(
        &cfg,
        "material",
        MaterialEvaluator::factory(),
        1,
        dir.path(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!((p.games_resumed, p.moves), (6, 0));
    let finished = p.finished(dir.path()).expect("nothing left to play");
    assert!(
        finished
            .to_string()
            .contains("that run is finished (6 games)"),
        "{finished}"
    );

    // Other settings in the same directory are refused, naming the field.
    let mut other = cfg.clone();
    other.settings.simulations = 16;
    let e = run(
        &other,
        "material",
        MaterialEvaluator::factory(),
        1,
        dir.path(),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("simulations: '8' there, '16' now"),
        "{e}"
    );
    let e = run(
        &cfg,
        "another net",
        MaterialEvaluator::factory(),
        1,
        dir.path(),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(e.to_string().contains("network"), "{e}");
}

#[test]
fn refuses_noise_free_or_empty_runs() {
    let dir = scratch("selfplay-bad");
    let mut cfg = config(2, 1);
    cfg.settings.gumbel_scale = 0.0;
    let e = run(
        &cfg,
        "m",
        MaterialEvaluator::factory(),
        1,
        dir.path(),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(e.to_string().contains("needs noise"), "{e}");
    cfg = config(0, 1);
    assert!(
        run(
            &cfg,
            "m",
            MaterialEvaluator::factory(),
            1,
            dir.path(),
            &mut |_| {}
        )
        .is_err()
    );
}

#[test]
fn candidate_counts_are_proportional_to_the_improved_policy() {
    let pos =
        Position::from_sfen("lnsgkgsnl/1r5b1/ppppppppp/9/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL w - 2")
            .unwrap();
    let mut search = GumbelSearch::new(SearchConfig {
        max_considered: 8,
        noise: RootNoise::Sampled {
            scale: 1.0,
            seed: Some(3),
        },
        ..SearchConfig::default()
    });
    let r = search.run(&pos, &mut MaterialEvaluator, &SearchLimits::simulations(32));
    let c = candidates(&r);
    let total: f64 = c.iter().map(|&(_, n)| f64::from(n)).sum();
    let max = r
        .root_moves
        .iter()
        .map(|m| m.improved_policy)
        .fold(0.0, f64::max);
    for m in &r.root_moves {
        let n = c
            .iter()
            .find(|(mv, _)| *mv == m.mv)
            .map_or(0.0, |&(_, n)| f64::from(n));
        // Each count is π' scaled by 65535 / max π', rounded.
        assert!(
            (n / VISIT_SCALE * max - m.improved_policy).abs() <= 0.5 / VISIT_SCALE * max + 1e-12,
            "{}: {n} vs π' {}",
            m.mv,
            m.improved_policy
        );
        // A reader normalising the counts recovers π' (which sums to 1).
        assert!((n / total - m.improved_policy).abs() < 1e-3, "{}", m.mv);
    }
    assert!(
        c.iter()
            .all(|&(m, _)| move_from_cshogi16(m.to_u16()) == Some(m) && pos.is_legal(m))
    );
}

/// Black can declare at once under the CSA 27-point rule: king on 5b, ten pieces in the zone
/// (R B G G S S N N L on rank a promoted where they must be, a lance on 9c) worth 18 points,
/// and ten pawns in hand: 28.
const DECLARABLE: &str = "+R+BGGSS+N+N+L/4K4/+L8/9/9/rbgsnl3/gsnl5/pppppppp1/4k4 b 10P 1";

#[test]
fn judge_sees_repetition_declaration_and_the_move_limit() {
    let s = settings();
    let mut pos = Position::startpos();
    assert_eq!(judge(&pos, 0, &s), None);
    // King shuffles: the start position comes back for the fourth time after 12 plies.
    for (i, m) in ["5i4h", "5a4b", "4h5i", "4b5a"]
        .iter()
        .cycle()
        .take(12)
        .enumerate()
    {
        assert_eq!(judge(&pos, i, &s), None, "ply {i}");
        pos.play_usi_moves([*m]).unwrap();
    }
    assert_eq!(
        judge(&pos, 12, &s),
        Some((
            Ending::Repetition(crate::shogi::Repetition::Draw),
            GameResult::Draw
        ))
    );
    let declarable = Position::from_sfen(DECLARABLE).unwrap();
    assert_eq!(
        judge(&declarable, 0, &s),
        Some((Ending::Declaration, GameResult::BlackWin))
    );
    assert_eq!(
        judge(&Position::startpos(), 120, &s),
        Some((Ending::MaxMoves, GameResult::Draw))
    );
    let mated = Position::from_sfen("8k/8G/8P/9/9/9/9/9/K8 w 2r2b3g4s4n4l17p 2").unwrap();
    assert!(mated.is_checkmate());
    assert_eq!(
        judge(&mated, 5, &s),
        Some((Ending::Checkmate, GameResult::BlackWin))
    );
}

#[test]
fn a_declaring_side_to_move_ends_the_game_with_the_nyugyoku_flag() {
    let start = Position::from_sfen(DECLARABLE).unwrap();
    let mut search = GumbelSearch::new(SearchConfig::default());
    let g = play(
        &start,
        &settings(),
        1,
        0,
        &mut search,
        &mut MaterialEvaluator,
        &|| false,
    )
    .unwrap();
    assert_eq!(g.ending, Ending::Declaration);
    assert!(g.record.moves.is_empty());
    assert_eq!(check_ending(&g.record, 120), Ok("nyugyoku"));
    let mut bytes = Vec::new();
    g.record.write_bytes(&mut bytes).unwrap();
    assert_eq!(bytes[34], 1 | 8, "Black won, by declaration");
}

fn run_material(cfg: &SelfplayConfig, dir: &Path) -> Progress {
    run(
        cfg,
        "material",
        MaterialEvaluator::factory(),
        1,
        dir,
        &mut |_| {},
    )
    .unwrap()
}

fn files_in(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "hcpe3"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect()
}

#[test]
fn shards_write_exactly_the_files_of_one_unsharded_run() {
    // 10 games in files of 4: files 0, 1, 2 (the last holds 2 games).
    let cfg = config(10, 3);
    let whole = scratch("selfplay-whole");
    run_material(&cfg, whole.path());
    let all = files_in(whole.path());
    assert_eq!(all.len(), 3);

    let mut union = std::collections::BTreeMap::new();
    let shared = scratch("selfplay-shared");
    for i in 0..2 {
        let shard = Shard { index: i, count: 2 };
        let own = scratch("selfplay-shard");
        let p = run_material(
            &SelfplayConfig {
                shard,
                ..cfg.clone()
            },
            own.path(),
        );
        // Shard 0 plays files 0 and 2 (4 + 2 games), shard 1 file 1 (4 games).
        assert_eq!(p.games_total, if i == 0 { 6 } else { 4 }, "shard {shard}");
        let files = files_in(own.path());
        for name in files.keys() {
            assert!(!union.contains_key(name), "{name} written by two shards");
        }
        union.extend(files);
        // Shards may also share one directory (one manifest for all).
        run_material(
            &SelfplayConfig {
                shard,
                ..cfg.clone()
            },
            shared.path(),
        );
    }
    assert_eq!(union, all, "the shards' files are the unsharded run's");
    assert_eq!(files_in(shared.path()), all);

    assert_eq!(Shard::parse("1/4"), Ok(Shard { index: 1, count: 4 }));
    for bad in ["4/4", "1", "a/2", "0/0", "-1/3"] {
        assert!(Shard::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn games_start_from_the_openings_after_the_random_plies() {
    let a = Position::startpos();
    let b =
        Position::from_sfen("lnsgkgsnl/1r5b1/ppppppppp/9/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL w - 2")
            .unwrap();
    let plies = 3;
    let openings = Openings::new(&[a.clone(), b.clone()], plies).unwrap();
    let cfg = SelfplayConfig {
        openings: openings.clone(),
        ..config(8, 4)
    };
    let dir = scratch("selfplay-openings");
    run_material(&cfg, dir.path());
    let mut games = Vec::new();
    for c in 0..2 {
        games.extend(read_hcpe3(chunk_path(dir.path(), c)).unwrap());
    }
    let mut starts = std::collections::HashSet::new();
    for (i, g) in games.iter().enumerate() {
        // HCP keeps the board, hands and side to move, not the move number.
        let board = |p: &Position| p.to_sfen().rsplit_once(' ').unwrap().0.to_string();
        let start = g.start_position().unwrap();
        let want = openings.start(cfg.seed, i as u64);
        assert_eq!(board(&start), board(&want), "game {i}");
        // `plies` legal moves from its opening (game i's is opening i mod 2).
        let base = if i % 2 == 0 { &a } else { &b };
        assert_eq!(want.ply(), base.ply() + plies, "game {i}");
        assert_eq!(
            want.side_to_move(),
            base.side_to_move().flip(),
            "3 plies: the other side moves"
        );
        assert_ne!(board(&start), board(base));
        check_ending(g, 120).unwrap_or_else(|e| panic!("game {i}: {e}"));
        starts.insert(board(&start));
    }
    assert!(
        starts.len() > 4,
        "random plies differ between games: {starts:?}"
    );
    // Another opening list is another run.
    let e = run(
        &SelfplayConfig {
            openings: Openings::startpos(plies),
            ..cfg.clone()
        },
        "material",
        MaterialEvaluator::factory(),
        1,
        dir.path(),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(e.to_string().contains("start"), "{e}");
}

#[test]
fn resigning_ends_lost_games_and_played_out_games_are_unchanged() {
    let base = config(8, 4);
    let plain = scratch("selfplay-no-resign");
    let p0 = run_material(&base, plain.path());
    assert_eq!(p0.tally.resigned, 0);

    // The material evaluator's values are modest; a threshold of 0.45 resigns often.
    let with = |check_share| {
        let mut cfg = base.clone();
        cfg.settings.resign = Some(Resign {
            below: 0.45,
            check_share,
        });
        cfg
    };
    let resigning = scratch("selfplay-resign");
    let p = run_material(&with(0.0), resigning.path());
    assert!(p.tally.resigned > 0, "no game resigned: {:?}", p.tally);
    assert_eq!(p.tally.resign_checks, 0);
    assert!(p.moves < p0.moves, "resigning saves moves");
    let mut games = Vec::new();
    for c in 0..2 {
        games.extend(read_hcpe3(chunk_path(resigning.path(), c)).unwrap());
    }
    let resigned = games
        .iter()
        .map(|g| check_ending_or_resignation(g, 120, true).unwrap())
        .filter(|&e| e == "resignation")
        .count() as u64;
    assert_eq!(resigned, p.tally.resigned);
    // Read back on resume, the tally tells resignations from checkmates.
    let again = run_material(&with(0.0), resigning.path());
    assert_eq!(again.tally, p.tally);

    // Every game played out: the same games as without resigning, byte for byte, and the
    // due resignations counted.
    let checked = scratch("selfplay-resign-checked");
    let p = run_material(&with(1.0), checked.path());
    assert_eq!(files_in(checked.path()), files_in(plain.path()));
    assert_eq!(p.tally.resigned, 0);
    assert!(p.tally.resign_checks > 0);
    assert!(p.tally.false_resignations <= p.tally.resign_checks);
}
