//! `manaka selfplay` end to end with the tiny compiled shape `pair4_d16_o2_h32` (random
//! weights): the HCPE3 it writes is read back by our reader, every game replays legally, and
//! each ends as its header says — judged here from the rules on the replayed position, not
//! from anything the self-play loop reports. Then the run is resumed (nothing replayed, the
//! same bytes), a lost file is replayed identically, and bad settings are refused.

use manaka_runtime::data::{GameResult, Hcpe3Game, read_hcpe3};
use manaka_runtime::shogi::{EnteringKingRule, Repetition};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const MAX_MOVES: usize = 160;

fn manaka(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_manaka"))
        .args(args)
        .output()
        .expect("run manaka")
}

fn ok(out: &Output, what: &str) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{what}: {stderr}");
    stderr
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("data_selfplay-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// What the header claims, checked on the replayed final position.
fn ending(g: &Hcpe3Game) -> Result<&'static str, String> {
    let end = g.replay()?;
    let stm = end.side_to_move();
    let o = g.outcome;
    let win = |c| {
        if c == manaka_runtime::shogi::Color::Black {
            GameResult::BlackWin
        } else {
            GameResult::WhiteWin
        }
    };
    match (o.sennichite, o.nyugyoku, o.max_moves) {
        (true, false, false) => {
            let want = match end.sennichite() {
                Some(Repetition::Win) => win(stm),
                Some(Repetition::Lose) => win(stm.flip()),
                Some(_) => GameResult::Draw,
                None => return Err("sennichite flag without a fourfold repetition".into()),
            };
            (o.result == want)
                .then_some("sennichite")
                .ok_or(format!("{:?} after repetition", o.result))
        }
        (false, true, false) => (end.can_declare_win(EnteringKingRule::Csa27)
            && o.result == win(stm))
        .then_some("nyugyoku")
        .ok_or("nyugyoku flag without the winner able to declare".into()),
        (false, false, true) => (g.moves.len() == MAX_MOVES
            && o.result == GameResult::Draw
            && end.sennichite().is_none())
        .then_some("max moves")
        .ok_or(format!(
            "max-moves flag after {} moves, {:?}",
            g.moves.len(),
            o.result
        )),
        (false, false, false) => (end.is_checkmate() && o.result == win(stm.flip()))
            .then_some("checkmate")
            .ok_or(format!(
                "no flag but no checkmate either: {} {:?}",
                end.to_sfen(),
                o.result
            )),
        _ => Err(format!("several flags: {o:?}")),
    }
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "hcpe3"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().to_string(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn selfplay_with_the_tiny_shape_writes_replayable_games_and_resumes() {
    let dir = scratch("run");
    let weights = dir.join("tiny.mnw");
    ok(
        &manaka(&[
            "weights",
            "init",
            "--shape",
            "pair4_d16_o2_h32",
            "--seed",
            "3",
            "-o",
            weights.to_str().unwrap(),
        ]),
        "weights init",
    );
    let out = dir.join("games");
    let max = MAX_MOVES.to_string();
    let args = [
        "selfplay",
        "--weights",
        weights.to_str().unwrap(),
        "--games",
        "6",
        "--simulations",
        "8",
        "--max-considered",
        "4",
        "--parallel",
        "3",
        "--games-per-file",
        "4",
        "--max-moves",
        &max,
        "--seed",
        "5",
        "--out",
        out.to_str().unwrap(),
    ];
    let stderr = ok(&manaka(&args), "selfplay");
    assert!(stderr.contains("6/6 games"), "{stderr}");
    assert!(
        !stderr.contains("reference evaluator"),
        "the tiny shape is compiled in: {stderr}"
    );

    let written = files(&out);
    assert_eq!(
        written.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        ["selfplay-000000.hcpe3", "selfplay-000001.hcpe3"]
    );
    let mut games = Vec::new();
    for (name, _) in &written {
        games.extend(read_hcpe3(out.join(name)).unwrap());
    }
    assert_eq!(games.len(), 6);
    let mut seen = Vec::new();
    for (i, g) in games.iter().enumerate() {
        seen.push(ending(g).unwrap_or_else(|e| panic!("game {i}: {e}")));
        assert!(!g.moves.is_empty() && g.moves.len() <= MAX_MOVES);
        assert_eq!(g.opponent, 0, "self-play");
        for m in &g.moves {
            // Candidates' counts: the improved policy scaled so that its maximum is 65535.
            assert!(
                m.candidates.iter().any(|c| c.visits == u16::MAX),
                "game {i}"
            );
            assert!(m.eval.abs() <= 30000);
        }
    }
    eprintln!("endings: {seen:?}");

    // Resume with nothing left to do: the files are untouched.
    let stderr = ok(&manaka(&args), "resume");
    assert!(stderr.contains("(6 resumed)"), "{stderr}");
    assert!(
        stderr.contains("that run is finished (6 games); nothing to do"),
        "{stderr}"
    );
    assert_eq!(files(&out), written);
    // A lost file is played again, identically.
    std::fs::remove_file(out.join("selfplay-000001.hcpe3")).unwrap();
    let stderr = ok(&manaka(&args), "resume after loss");
    assert!(stderr.contains("(4 resumed)"), "{stderr}");
    assert_eq!(files(&out), written);

    // Refused: other settings in the same directory, and noise-free self-play.
    let mut other = args.to_vec();
    other[6] = "16"; // --simulations
    let o = manaka(&other);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("simulations: '8' there, '16' now"), "{e}");
    let mut quiet = args.to_vec();
    quiet.extend(["--gumbel-scale", "0"]);
    let o = manaka(&quiet);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("needs noise"));
}
