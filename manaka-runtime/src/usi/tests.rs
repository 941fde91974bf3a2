//! Protocol tests, in process: an [`Engine`] fed line by line, its output collected.

use super::*;
use crate::eval::MaterialEvaluator;
use crate::shogi::Position;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

struct Session {
    engine: Engine,
    buffer: SharedBuffer,
}

impl Session {
    fn new() -> Session {
        Session::with_loader(default_loader())
    }

    fn with_loader(loader: Loader) -> Session {
        let buffer = SharedBuffer::default();
        let engine = Engine::new(Output::new(Box::new(buffer.clone())), loader);
        let mut s = Session { engine, buffer };
        s.send("setoption name EvalFile value builtin:material");
        s
    }

    fn send(&mut self, line: &str) -> bool {
        self.engine.handle(line)
    }

    fn text(&self) -> String {
        String::from_utf8(self.buffer.0.lock().unwrap().clone()).unwrap()
    }

    fn lines(&self) -> Vec<String> {
        self.text().lines().map(str::to_string).collect()
    }

    /// Waits (at most 10 s) until a line starting with `prefix` appears after `skip` lines.
    fn wait_for(&self, prefix: &str, skip: usize) -> String {
        let start = Instant::now();
        loop {
            if let Some(l) = self
                .lines()
                .into_iter()
                .skip(skip)
                .find(|l| l.starts_with(prefix))
            {
                return l;
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "no '{prefix}' in:\n{}",
                self.text()
            );
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    fn bestmoves(&self) -> Vec<String> {
        self.lines()
            .into_iter()
            .filter(|l| l.starts_with("bestmove"))
            .collect()
    }
}

fn after(sfen: &str, moves: &[&str]) -> Position {
    let mut p = Position::from_sfen(sfen).unwrap();
    p.play_usi_moves(moves.iter().copied()).unwrap();
    p
}

fn assert_clean_output(text: &str) {
    for l in text.lines() {
        assert!(l.is_ascii(), "non-ASCII line: {l}");
        if l.starts_with("info") && l.contains(" score ") {
            assert!(l.contains(" pv "), "a scored info line without pv: {l}");
        }
    }
}

/// The move of a `bestmove` line, checked legal in `position`.
fn legal_bestmove(line: &str, position: &Position) -> String {
    let m = line.split_whitespace().nth(1).unwrap().to_string();
    assert!(
        position.parse_usi_move(&m).is_ok(),
        "illegal bestmove {m} in {}",
        position.to_sfen()
    );
    m
}

#[test]
fn handshake_announces_options() {
    let mut s = Session::new();
    s.send("usi");
    let text = s.text();
    assert!(text.starts_with("id name Manaka"));
    for name in [
        "EvalFile",
        "Simulations",
        "MaxConsidered",
        "BatchSize",
        "VirtualLoss",
        "PolicyOnly",
        "GumbelScale",
        "CVisit",
        "CScale",
        "PuctC",
        "FpuReduction",
        "PolicyTemperature",
        "Threads",
        "USI_Hash",
        "USI_Ponder",
        "PonderOpponentPosition",
        "EnteringKingRule",
    ] {
        assert!(
            text.contains(&format!("option name {name} type ")),
            "{name}"
        );
    }
    assert!(text.trim_end().ends_with("usiok"));
    assert_clean_output(&text);
}

#[test]
fn weights_load_at_isready_not_at_start() {
    let loads = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = loads.clone();
    let loader: Loader = Box::new(move |_, _| {
        counter.fetch_add(1, Ordering::SeqCst);
        Ok(LoadedNetwork::new(
            MaterialEvaluator::factory(),
            "counted".into(),
            "test".into(),
        ))
    });
    let mut s = Session::with_loader(loader);
    s.send("usi");
    assert_eq!(loads.load(Ordering::SeqCst), 0);
    s.send("isready");
    assert_eq!(loads.load(Ordering::SeqCst), 1);
    assert!(s.text().contains("info string counted\nreadyok"));
    // Ready again with the same EvalFile: nothing reloaded.
    s.send("isready");
    assert_eq!(loads.load(Ordering::SeqCst), 1);
    s.send("setoption name EvalFile value other");
    s.send("isready");
    assert_eq!(loads.load(Ordering::SeqCst), 2);
}

/// A file that fails to load never becomes another network: `isready` still answers
/// `readyok` (GUIs wait for it forever) after an error line, every `go` says so again and
/// answers `bestmove resign` — a match shows the failure at once — and a good `EvalFile`
/// plays again.
#[test]
fn a_bad_eval_file_is_loud_and_resigns_instead_of_playing_another_network() {
    let mut s = Session::new();
    s.send("setoption name EvalFile value /no/such/net.mnw");
    s.send("isready");
    let text = s.text();
    assert!(
        text.contains("info string error: EvalFile '/no/such/net.mnw' could not be loaded"),
        "{text}"
    );
    assert!(text.contains("until a network loads"), "{text}");
    assert!(
        !text.contains("EvalFile not set"),
        "no fallback network: {text}"
    );
    assert!(text.trim_end().ends_with("readyok"));
    for _ in 0..2 {
        let n = s.lines().len();
        s.send("position startpos");
        s.send("go btime 1000 wtime 1000 byoyomi 100");
        assert_eq!(s.wait_for("bestmove", n), "bestmove resign");
        let after = s.lines()[n..].join("\n");
        assert!(
            after.contains("info string error: no network (EvalFile '/no/such/net.mnw'"),
            "{after}"
        );
    }
    // Each isready tries again (the file may have been put in place) and says so again.
    let n = s.lines().len();
    s.send("isready");
    assert!(
        s.lines()[n].starts_with("info string error: EvalFile"),
        "{}",
        s.text()
    );
    // go mate needs no network: it still answers, after the error line.
    let n = s.lines().len();
    s.send("position sfen 4k4/9/4G4/9/9/9/9/9/4K4 b G 1");
    s.send("go mate 1000");
    assert_eq!(s.wait_for("checkmate", n), "checkmate G*5b");
    // A loadable file plays again.
    let n = s.lines().len();
    s.send("setoption name EvalFile value builtin:material");
    s.send("isready");
    s.send("position startpos");
    s.send("go nodes 16");
    legal_bestmove(&s.wait_for("bestmove", n), &Position::startpos());
    assert_clean_output(&s.text());
}

#[test]
fn malformed_input_is_answered_not_fatal() {
    let mut s = Session::new();
    for line in [
        "fly",
        "setoption",
        "setoption name Simulations value lots",
        "setoption name NoSuch value 1",
        "position",
        "position sfen nonsense b - 1",
        "position startpos moves 7g7f 7g7f",
        "\u{ff}\u{fe} garbage",
    ] {
        assert!(s.send(line), "{line}");
    }
    let text = s.text();
    assert_eq!(
        text.lines().count(),
        8,
        "one info string per bad line:\n{text}"
    );
    assert!(
        text.lines().all(|l| l.starts_with("info string error: ")),
        "{text}"
    );
    assert!(text.contains("move 2 of the list"));
    // After a refused position, go answers resign (never an illegal move).
    s.send("go nodes 8");
    assert_eq!(s.wait_for("bestmove", 0), "bestmove resign");
    // A good position makes it play again.
    s.send("position startpos moves 7g7f");
    s.send("go nodes 8");
    let b = s.wait_for("bestmove", s.lines().len() - 1);
    legal_bestmove(&b, &after("startpos", &["7g7f"]));
    assert_clean_output(&s.text());
}

#[test]
fn go_nodes_plays_a_legal_move_with_info() {
    let mut s = Session::new();
    s.send("isready");
    s.send("position startpos moves 7g7f 3c3d");
    s.send("go nodes 64");
    let b = s.wait_for("bestmove", 0);
    let p = after("startpos", &["7g7f", "3c3d"]);
    legal_bestmove(&b, &p);
    let text = s.text();
    let info = text.lines().rfind(|l| l.starts_with("info depth")).unwrap();
    assert!(
        info.contains(" nodes 64 ") && info.contains(" score cp ") && info.contains(" pv "),
        "{info}"
    );
    assert_clean_output(&text);
}

#[test]
fn go_infinite_waits_for_stop() {
    let mut s = Session::new();
    s.send("position startpos");
    s.send("go infinite");
    std::thread::sleep(Duration::from_millis(150));
    assert!(s.bestmoves().is_empty(), "bestmove before stop");
    let t = Instant::now();
    s.send("stop");
    let b = s.wait_for("bestmove", 0);
    assert!(
        t.elapsed() < Duration::from_millis(500),
        "stop took {:?}",
        t.elapsed()
    );
    legal_bestmove(&b, &Position::startpos());
    s.send("isready");
    assert_eq!(s.bestmoves().len(), 1);
    assert_clean_output(&s.text());
}

#[test]
fn go_infinite_with_a_finished_search_still_waits() {
    // A tiny budget that cannot grow: mate in one is found at once, but bestmove waits.
    let mut s = Session::new();
    s.send("position sfen 4k4/9/4G4/9/9/9/9/9/4K4 b G 1");
    s.send("go infinite");
    std::thread::sleep(Duration::from_millis(100));
    assert!(s.bestmoves().is_empty());
    assert!(s.text().contains("score mate 1 pv G*5b"), "{}", s.text());
    s.send("stop");
    assert_eq!(s.wait_for("bestmove", 0), "bestmove G*5b");
}

#[test]
fn ponder_then_ponderhit_or_stop() {
    let mut s = Session::new();
    s.send("setoption name USI_Ponder value true");
    s.send("position startpos moves 7g7f 3c3d");
    s.send("go ponder btime 0 wtime 0 byoyomi 300");
    std::thread::sleep(Duration::from_millis(100));
    assert!(s.bestmoves().is_empty(), "no bestmove while pondering");
    let t = Instant::now();
    s.send("ponderhit");
    let b = s.wait_for("bestmove", 0);
    assert!(
        t.elapsed() < Duration::from_millis(1000),
        "ponderhit then {:?}",
        t.elapsed()
    );
    let p = after("startpos", &["7g7f", "3c3d"]);
    legal_bestmove(&b, &p);
    assert!(b.contains(" ponder "), "{b}");
    // Ponder miss: stop answers a bestmove; gameover while pondering answers none.
    let n = s.lines().len();
    s.send("go ponder btime 0 wtime 0 byoyomi 300");
    std::thread::sleep(Duration::from_millis(50));
    s.send("stop");
    s.wait_for("bestmove", n);
    let n = s.bestmoves().len();
    s.send("go ponder btime 0 wtime 0 byoyomi 300");
    std::thread::sleep(Duration::from_millis(50));
    s.send("gameover lose");
    s.send("isready");
    assert_eq!(s.bestmoves().len(), n, "no bestmove after gameover");
}

#[test]
fn byoyomi_is_respected() {
    let mut s = Session::new();
    s.send("setoption name Simulations value 100000000");
    s.send("isready");
    s.send("position startpos");
    let t = Instant::now();
    s.send("go btime 0 wtime 0 byoyomi 300");
    let b = s.wait_for("bestmove", 0);
    let took = t.elapsed();
    assert!(took < Duration::from_millis(300), "took {took:?}");
    assert!(
        took >= Duration::from_millis(150),
        "used the byoyomi: {took:?}"
    );
    legal_bestmove(&b, &Position::startpos());
}

#[test]
fn exact_answers_resign_win_and_mate() {
    let mut s = Session::new();
    s.send("position sfen 4k4/4G4/4G4/9/9/9/9/9/4K4 w - 1");
    s.send("go byoyomi 100");
    assert_eq!(s.wait_for("bestmove", 0), "bestmove resign");
    let n = s.lines().len();
    s.send("position sfen RRBBGGGGK/SS7/9/9/9/9/9/9/4k4 b 2P 1");
    s.send("go byoyomi 100");
    assert_eq!(s.wait_for("bestmove", n), "bestmove win");
    let n = s.lines().len();
    s.send("setoption name EnteringKingRule value NoEnteringKing");
    s.send("go nodes 8");
    assert_ne!(s.wait_for("bestmove", n), "bestmove win");
    assert_clean_output(&s.text());
}

#[test]
fn piped_commands_get_their_bestmove_at_end_of_input() {
    let input = "setoption name EvalFile value builtin:material\nposition startpos\ngo nodes 200\n";
    let mut out = Vec::new();
    run_to_string(input.as_bytes(), &mut out, default_loader()).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains(" nodes 200 "), "{text}");
    assert_eq!(
        text.lines().filter(|l| l.starts_with("bestmove")).count(),
        1
    );
}

#[test]
fn threads_and_batches() {
    let mut s = Session::new();
    s.send("setoption name Threads value 2");
    s.send("setoption name BatchSize value 8");
    s.send("isready");
    assert!(s.text().contains("readyok"));
    s.send("position startpos");
    s.send("go nodes 200");
    let b = s.wait_for("bestmove", 0);
    legal_bestmove(&b, &Position::startpos());
    // Two search threads on one tree, and the budget spent exactly.
    let text = s.text();
    assert!(text.contains(" threads 2 "), "{text}");
    assert!(text.contains(" nodes 200 "), "{text}");
}

#[test]
fn a_failing_evaluator_still_gets_a_legal_answer() {
    use crate::eval::{Evaluation, Evaluator, FnFactory, Leaf};
    struct Broken;
    impl Evaluator for Broken {
        fn name(&self) -> String {
            "broken".into()
        }
        fn evaluate(&mut self, _: &[Leaf<'_>], _: &mut Vec<Evaluation>) {
            panic!("deliberate evaluator failure (test)");
        }
    }
    let loads = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = loads.clone();
    let loader: Loader = Box::new(move |_, _| {
        counter.fetch_add(1, Ordering::SeqCst);
        let factory = FnFactory::new("broken", || Box::new(Broken) as Box<dyn Evaluator>);
        Ok(LoadedNetwork::new(
            std::sync::Arc::new(factory),
            "broken".into(),
            "test".into(),
        ))
    });
    let mut s = Session::with_loader(loader);
    s.send("isready");
    s.send("position startpos");
    s.send("go nodes 16");
    let b = s.wait_for("bestmove", 0);
    legal_bestmove(&b, &Position::startpos());
    assert!(s.text().contains("info string error: the search failed"));
    // The evaluator is rebuilt for the next search.
    s.send("isready");
    assert_eq!(loads.load(Ordering::SeqCst), 2);
}

#[test]
fn movetime_and_depth() {
    let mut s = Session::new();
    s.send("setoption name Simulations value 100000000");
    s.send("position startpos");
    let t = Instant::now();
    s.send("go movetime 300");
    let b = s.wait_for("bestmove", 0);
    let took = t.elapsed();
    assert!(
        took >= Duration::from_millis(150) && took < Duration::from_millis(300),
        "{took:?}"
    );
    legal_bestmove(&b, &Position::startpos());
    // go depth caps the tree.
    let n = s.lines().len();
    s.send("setoption name Simulations value 2000");
    s.send("go depth 2");
    s.wait_for("bestmove", n);
    let info = s
        .lines()
        .into_iter()
        .rfind(|l| l.starts_with("info depth"))
        .unwrap();
    let seldepth: u32 = info
        .split_whitespace()
        .skip_while(|w| *w != "seldepth")
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    assert!(seldepth <= 2, "{info}");
}

/// Every defence of `first` in `p` leaves a mate in one (checked by trying each reply).
fn mate_in_three(p: &Position, first: &str) -> bool {
    crate::search::solver_tests::is_mate_in_three(p, p.parse_usi_move(first).unwrap())
}

#[test]
fn go_mate_answers_checkmate_nomate_and_timeout() {
    let mut s = Session::new();
    // A mate in 3 (cshogi's mate_move(3): B*3c): the whole line, ending in checkmate.
    let sfen = "8k/9/7pp/9/9/9/9/9/K8 b BG 1";
    s.send(&format!("position sfen {sfen}"));
    s.send("go mate 5000");
    let line = s.wait_for("checkmate", 0);
    let moves: Vec<&str> = line.split_whitespace().skip(1).collect();
    assert_eq!(moves.len(), 3, "{line}");
    let mut end = after(sfen, &[]);
    assert!(mate_in_three(&end, moves[0]), "{line}");
    end.play_usi_moves(moves.iter().copied()).unwrap();
    assert!(end.is_checkmate(), "{line}");
    // No check at all: proven, no mate.
    let n = s.lines().len();
    s.send("position startpos");
    s.send("go mate infinite");
    assert_eq!(s.wait_for("checkmate", n), "checkmate nomate");
    // Many checks and no quick answer: the time runs out.
    let n = s.lines().len();
    s.send("position sfen 4k4/9/9/9/9/9/9/9/4K4 b RBGSNLPrbgsnlp 1");
    s.send("go mate 200");
    assert_eq!(s.wait_for("checkmate", n), "checkmate timeout");
    // `stop` ends an infinite one with what it knows.
    let n = s.lines().len();
    s.send("go mate infinite");
    std::thread::sleep(Duration::from_millis(50));
    s.send("stop");
    assert_eq!(s.wait_for("checkmate", n), "checkmate timeout");
    // And a normal search still works afterwards.
    let n = s.lines().len();
    s.send("position startpos");
    s.send("go nodes 50");
    legal_bestmove(&s.wait_for("bestmove", n), &after("startpos", &[]));
    assert_clean_output(&s.text());
}

#[test]
fn a_search_reports_a_found_mate_as_score_mate() {
    // With the root mate search: the mate at once, the whole line as PV.
    let mut s = Session::new();
    let sfen = "8k/9/7pp/9/9/9/9/9/K8 b BG 1";
    s.send(&format!("position sfen {sfen}"));
    s.send("go byoyomi 1000");
    let best = s.wait_for("bestmove", 0);
    let info = s.wait_for("info depth", 0);
    assert!(info.contains(" score mate 3 pv "), "{info}");
    assert!(mate_in_three(&after(sfen, &[]), &best[9..]), "{best}");
    // Without it, the tree proves the mate (leaf mate checks below the root).
    let n = s.lines().len();
    s.send("setoption name RootMateNodes value 0");
    s.send("go nodes 5000");
    let best = s.wait_for("bestmove", n);
    let info = s.lines()[n..]
        .iter()
        .rev()
        .find(|l| l.starts_with("info depth"))
        .cloned()
        .unwrap();
    assert!(info.contains(" score mate 3 pv "), "{info}");
    assert!(mate_in_three(&after(sfen, &[]), &best[9..]), "{best}");
    // The side being mated says so with a negative count.
    let n = s.lines().len();
    s.send(&format!("position sfen {sfen} moves B*3c"));
    s.send("go nodes 5000");
    s.wait_for("bestmove", n);
    let info = s.lines()[n..]
        .iter()
        .rev()
        .find(|l| l.starts_with("info depth"))
        .cloned()
        .unwrap();
    assert!(info.contains(" score mate -2 pv "), "{info}");
}

#[test]
fn an_unreadable_position_line_never_leaves_the_old_position_in_play() {
    // Issue 16, fault 1: a `position` line that fails the word-level parse used to keep the
    // previous position, and `go` then played a move of it (3c3d with Black to move).
    for bad in [
        "position sfen lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1 1",
        "position startpos 2g2f",
        "position sfen",
        "position",
        "position sfen 9/9/9 b",
    ] {
        let mut s = Session::new();
        s.send("position startpos moves 7g7f");
        s.send("go nodes 10");
        s.wait_for("bestmove", 0);
        let n = s.lines().len();
        s.send(bad);
        s.send("go nodes 10");
        assert_eq!(
            s.wait_for("bestmove", n),
            "bestmove resign",
            "after '{bad}'"
        );
        assert!(s.text().contains("position refused"), "{bad}: {}", s.text());
        // A valid position afterwards plays again.
        let n = s.lines().len();
        s.send("position startpos");
        s.send("go nodes 10");
        legal_bestmove(&s.wait_for("bestmove", n), &after("startpos", &[]));
    }
}

/// The `info depth` lines after line `skip`.
fn infos_after(s: &Session, skip: usize) -> Vec<String> {
    s.lines()
        .into_iter()
        .skip(skip)
        .filter(|l| l.starts_with("info depth"))
        .collect()
}

/// The word after `name` in `line`.
fn word_after<'a>(line: &'a str, name: &str) -> &'a str {
    let mut w = line.split_whitespace();
    w.find(|x| *x == name)
        .unwrap_or_else(|| panic!("no {name} in {line}"));
    w.next().unwrap()
}

#[test]
fn every_new_option_is_announced_and_accepted() {
    let mut s = Session::new();
    s.send("usi");
    for (name, kind) in [
        ("MultiPV", "spin default 1 min 1 max 600"),
        ("DrawValueBlack", "spin default 500 min 0 max 1000"),
        ("DrawValueWhite", "spin default 500 min 0 max 1000"),
        ("ResignValue", "spin default 99999 min 0 max 99999"),
        ("MaxMovesToDraw", "spin default 0 min 0 max 100000"),
        ("NetworkDelay", "spin default 0 min 0 max 10000"),
        ("NetworkDelay2", "spin default 0 min 0 max 10000"),
        ("MinimumThinkingTime", "spin default 0 min 0 max 100000"),
    ] {
        assert!(
            s.text()
                .contains(&format!("option name {name} type {kind}\n")),
            "{name}"
        );
    }
    let n = s.lines().len();
    for set in [
        "MultiPV value 4",
        "DrawValueBlack value 450",
        "DrawValueWhite value 550",
        "ResignValue value 3000",
        "MaxMovesToDraw value 256",
        "NetworkDelay value 120",
        "NetworkDelay2 value 1120",
        "MinimumThinkingTime value 1000",
    ] {
        s.send(&format!("setoption name {set}"));
    }
    assert_eq!(s.lines().len(), n, "accepted silently:\n{}", s.text());
    let o = s.engine.options();
    assert_eq!(
        (
            o.multipv,
            o.draw_value_black,
            o.draw_value_white,
            o.resign_value
        ),
        (4, 450, 550, 3000)
    );
    assert_eq!(
        (
            o.max_moves_to_draw,
            o.network_delay_ms,
            o.network_delay2_ms,
            o.minimum_thinking_ms
        ),
        (256, 120, 1120, 1000)
    );
    s.send("setoption name MultiPV value 0");
    s.send("setoption name ResignValue value many");
    assert!(
        s.lines()[n..]
            .iter()
            .all(|l| l.starts_with("info string error: ")),
        "{}",
        s.text()
    );
    assert_eq!(s.engine.options().multipv, 4);
}

/// `go` never leaves the GUI without a `bestmove`: unknown words, bad numbers and
/// `movestogo` are answered (with a warning for what was ignored).
#[test]
fn tolerant_go_always_answers() {
    let mut s = Session::new();
    s.send("position startpos");
    for (line, warning) in [
        ("go btime 1000 wtime 1000 movestogo 10", None),
        ("go searchmoves 7g7f nodes 100", None),
        (
            "go nodes 100 multipv 3",
            Some("unknown parameter 'multipv 3' ignored"),
        ),
        (
            "go sideways nodes 50",
            Some("unknown parameter 'sideways' ignored"),
        ),
        ("go nodes many byoyomi 100", Some("'many' is not a number")),
        ("go btime", Some("go btime needs a number")),
    ] {
        let n = s.lines().len();
        s.send(line);
        let b = s.wait_for("bestmove", n);
        legal_bestmove(&b, &Position::startpos());
        let warnings: Vec<String> = s.lines()[n..]
            .iter()
            .filter(|l| l.starts_with("info string warning: "))
            .cloned()
            .collect();
        match warning {
            None => assert!(warnings.is_empty(), "{line}: {warnings:?}"),
            Some(w) => assert!(
                warnings.len() == 1 && warnings[0].contains(w),
                "{line}: {warnings:?}"
            ),
        }
        if line.contains("searchmoves") {
            assert_eq!(b, "bestmove 7g7f");
        }
        if line.contains("nodes 100") {
            let info = infos_after(&s, n).pop().unwrap();
            assert_eq!(word_after(&info, "nodes"), "100", "{info}");
        }
    }
    assert!(
        s.text()
            .lines()
            .all(|l| !l.starts_with("info string error")),
        "{}",
        s.text()
    );
    assert_clean_output(&s.text());
}

#[test]
fn searchmoves_restrict_the_root() {
    let mut s = Session::new();
    s.send("position startpos");
    s.send("go nodes 200 searchmoves 9g9f 1g1f");
    let b = s.wait_for("bestmove", 0);
    assert!(
        ["bestmove 9g9f", "bestmove 1g1f"].contains(&b.as_str()),
        "{b}"
    );
    // Moves that are not legal here are named and left out.
    let n = s.lines().len();
    s.send("go nodes 50 searchmoves 7g7f 7g7e 5a4b");
    assert_eq!(s.wait_for("bestmove", n), "bestmove 7g7f");
    assert!(
        s.text()
            .contains("info string warning: go searchmoves: 7g7e 5a4b not legal here"),
        "{}",
        s.text()
    );
    // None legal: every legal move is searched, saying so.
    let n = s.lines().len();
    s.send("go nodes 50 searchmoves 7g7e");
    legal_bestmove(&s.wait_for("bestmove", n), &Position::startpos());
    assert!(
        s.text()
            .contains("none of the moves is legal; searching every legal move")
    );
    // MultiPV lines cover only the moves searched.
    let n = s.lines().len();
    s.send("setoption name MultiPV value 3");
    s.send("go nodes 100 searchmoves 2g2f 7g7f");
    s.wait_for("bestmove", n);
    let lines = infos_after(&s, n);
    let last: Vec<&String> = lines.iter().rev().take(2).collect();
    for l in &last {
        let first = word_after(l, "pv");
        assert!(["2g2f", "7g7f"].contains(&first), "{l}");
    }
}

#[test]
fn multipv_prints_one_line_per_candidate_best_first() {
    let mut s = Session::new();
    s.send("setoption name MultiPV value 3");
    s.send("position startpos moves 7g7f 3c3d");
    s.send("go nodes 300");
    let b = s.wait_for("bestmove", 0);
    let lines = infos_after(&s, 0);
    let last = &lines[lines.len() - 3..];
    for (k, l) in last.iter().enumerate() {
        assert_eq!(word_after(l, "multipv"), (k + 1).to_string(), "{l}");
        assert!(l.contains(" score cp "), "{l}");
    }
    let firsts: Vec<&str> = last.iter().map(|l| word_after(l, "pv")).collect();
    assert_eq!(
        format!("bestmove {}", firsts[0]),
        b.split(" ponder").next().unwrap()
    );
    assert!(firsts[0] != firsts[1] && firsts[1] != firsts[2] && firsts[0] != firsts[2]);
    // An exact answer (mate in one, before any search) is one line, multipv 1.
    let n = s.lines().len();
    s.send("position sfen 4k4/9/4G4/9/9/9/9/9/4K4 b G 1");
    s.send("go nodes 300");
    assert_eq!(s.wait_for("bestmove", n), "bestmove G*5b");
    let lines = infos_after(&s, n);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].contains(" multipv 1 score mate 1 pv G*5b"),
        "{}",
        lines[0]
    );
    // MultiPV 1 keeps the plain line.
    let n = s.lines().len();
    s.send("setoption name MultiPV value 1");
    s.send("position startpos");
    s.send("go nodes 50");
    s.wait_for("bestmove", n);
    assert!(infos_after(&s, n).iter().all(|l| !l.contains("multipv")));
    assert_clean_output(&s.text());
}

/// MaxMovesToDraw: the last plies are decided exactly, a mate after the limit is the draw the
/// game ends in (scored with the draw value), a mate before it still counts.
#[test]
fn max_moves_to_draw_settles_the_last_plies() {
    let mut s = Session::new();
    s.send("setoption name MaxMovesToDraw value 256");
    s.send("setoption name DrawValueBlack value 400");
    // Move 255 of 256: after 5i4i White mates with G*4h on the last move; the others draw.
    s.send("position sfen 4k4/9/9/9/9/9/5s3/9/4K4 b g 255");
    s.send("go byoyomi 1000");
    let b = s.wait_for("bestmove", 0);
    assert!(
        ["bestmove 5i6h", "bestmove 5i6i"].contains(&b.as_str()),
        "{b}"
    );
    assert!(
        s.text()
            .contains("info string MaxMovesToDraw 256: 2 plies left")
    );
    // The draw's score is DrawValueBlack's: 400 per mille is 1200·atanh(−0.2) = −243 cp.
    let info = infos_after(&s, 0).pop().unwrap();
    assert!(info.contains(" score cp -243 "), "{info}");
    // A mate in three with two plies left cannot be completed: a draw, not `mate 3`.
    let mate3 = "8k/9/7pp/9/9/9/9/9/K8 b BG 255";
    let n = s.lines().len();
    s.send(&format!("position sfen {mate3}"));
    s.send("go nodes 200");
    s.wait_for("bestmove", n);
    let info = infos_after(&s, n).pop().unwrap();
    assert!(info.contains(" score cp -243 "), "{info}");
    // With three plies left the mate comes in time.
    let n = s.lines().len();
    s.send("setoption name MaxMovesToDraw value 257");
    s.send("go nodes 200");
    let b = s.wait_for("bestmove", n);
    let info = infos_after(&s, n).pop().unwrap();
    assert!(info.contains(" score mate 3 "), "{info}");
    assert_eq!(b, "bestmove B*3c");
    // The last move may still mate.
    let n = s.lines().len();
    s.send("setoption name MaxMovesToDraw value 1");
    s.send("position sfen 4k4/9/4G4/9/9/9/9/9/4K4 b G 1");
    s.send("go byoyomi 1000");
    assert_eq!(s.wait_for("bestmove", n), "bestmove G*5b");
    // Past the limit (the GUI plays on) the rule is not applied.
    let n = s.lines().len();
    s.send("position startpos moves 7g7f 3c3d");
    s.send("go nodes 50");
    legal_bestmove(
        &s.wait_for("bestmove", n),
        &after("startpos", &["7g7f", "3c3d"]),
    );
    assert!(!s.lines()[n..].iter().any(|l| l.contains("MaxMovesToDraw")));
}

/// ResignValue: resigns on a hopeless score or a proven loss, never on a forced move, and
/// not on a loss that the move limit turns into a draw.
#[test]
fn resign_value() {
    let mut s = Session::new();
    // Black has a king against a full army: the material evaluator calls it lost.
    let hopeless = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/9/9/4K4 b - 1";
    s.send(&format!("position sfen {hopeless}"));
    s.send("go nodes 100");
    assert_ne!(
        s.wait_for("bestmove", 0),
        "bestmove resign",
        "off by default"
    );
    let n = s.lines().len();
    s.send("setoption name ResignValue value 1000");
    s.send("go nodes 100");
    assert_eq!(s.wait_for("bestmove", n), "bestmove resign");
    let why = s.lines()[n..]
        .iter()
        .find(|l| l.starts_with("info string resign: "))
        .cloned()
        .unwrap();
    assert!(
        why.contains("at or below the ResignValue threshold -1000"),
        "{why}"
    );
    // A single legal move is played, however bad.
    let n = s.lines().len();
    s.send("position sfen lnsgkgsnl/1r5b1/ppppppppp/9/9/9/7g1/9/8K b - 1");
    s.send("go nodes 100");
    assert_eq!(s.wait_for("bestmove", n), "bestmove 1i2i");
    // Mated in two (every reply allows a mate in one): resigned on the proof...
    let mated = "8k/9/7pp/9/9/9/9/9/K8 b BG 255 moves B*3c";
    let n = s.lines().len();
    s.send("setoption name ResignValue value 29000");
    s.send(&format!("position sfen {mated}"));
    s.send("go nodes 500");
    assert_eq!(s.wait_for("bestmove", n), "bestmove resign");
    assert!(
        s.lines()[n..]
            .iter()
            .any(|l| l.contains("resign: proven loss in 2"))
    );
    // ... but with the game's last move to play, the mate comes too late: a draw.
    let n = s.lines().len();
    s.send("setoption name MaxMovesToDraw value 256");
    s.send("go nodes 500");
    let b = s.wait_for("bestmove", n);
    legal_bestmove(&b, &after("8k/9/7pp/9/9/9/9/9/K8 b BG 255", &["B*3c"]));
}

#[test]
fn network_delay2_keeps_its_margin_at_the_end_of_the_byoyomi() {
    let mut s = Session::new();
    s.send("setoption name Simulations value 100000000");
    s.send("setoption name NetworkDelay2 value 500");
    s.send("isready");
    s.send("position startpos");
    let t = Instant::now();
    s.send("go btime 0 wtime 0 byoyomi 1000");
    legal_bestmove(&s.wait_for("bestmove", 0), &Position::startpos());
    // 1000 − 100 (MoveOverhead) − 500 (NetworkDelay2): about 400 ms.
    let took = t.elapsed();
    assert!(took < Duration::from_millis(800), "took {took:?}");
}

#[test]
fn bench_prints_a_deterministic_node_count() {
    let mut s = Session::new();
    let run = |s: &mut Session, line: &str| {
        let n = s.lines().len();
        s.send(line);
        let lines = s.lines()[n..].to_vec();
        let total = lines
            .iter()
            .find(|l| l.starts_with("info string bench nodes "))
            .unwrap_or_else(|| panic!("{lines:?}"))
            .clone();
        let searched = lines
            .iter()
            .find(|l| l.starts_with("Nodes searched: "))
            .unwrap()
            .clone();
        let nodes = word_after(&total, "nodes").to_string();
        assert_eq!(searched, format!("Nodes searched: {nodes}"));
        assert!(word_after(&total, "nps").parse::<u64>().is_ok(), "{total}");
        nodes
    };
    let a = run(&mut s, "bench 100");
    // The engine's options do not change plain bench's signature.
    s.send("setoption name BatchSize value 8");
    s.send("setoption name MaxConsidered value 4");
    let b = run(&mut s, "bench 100");
    assert_eq!(a, b);
    // bench net: the loaded network (here the material evaluator) with the engine's options.
    let c = run(&mut s, "bench net 100");
    assert!(c.parse::<u64>().unwrap() > 0);
    // And a game afterwards starts clean.
    let n = s.lines().len();
    s.send("position startpos");
    s.send("go nodes 50");
    legal_bestmove(&s.wait_for("bestmove", n), &Position::startpos());
}

/// EvalFile takes a YaneuraOu nn.bin directly (recognised by its header, converted at load);
/// a damaged one is refused like any bad file.
#[test]
fn eval_file_takes_an_nn_bin() {
    use crate::nnue::{IntWeights, file};
    let dir = std::env::temp_dir().join(format!("manaka-usi-nnbin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let shape = manaka_shapes::Shape::parse("pair0_d256_o1_h32_h232_kp_nnue").unwrap();
    let (ints, _) = IntWeights::quantise(&crate::weights::init::random_weights(&shape, 3)).unwrap();
    let mut bytes = Vec::new();
    file::write_to(&mut bytes, &ints).unwrap();
    let good = dir.join("nn.bin");
    std::fs::write(&good, &bytes).unwrap();
    let cut = dir.join("cut.bin");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();

    let mut s = Session::new();
    s.send(&format!("setoption name EvalFile value {}", good.display()));
    s.send("isready");
    assert!(
        s.text().contains(&format!(
            "info string EvalFile {}: YaneuraOu nn.bin (kp_256x2-32-32), converted to shape \
             pair0_d256_o1_h32_h232_kp_nnue",
            good.display()
        )),
        "{}",
        s.text()
    );
    s.send("position startpos");
    s.send("go nodes 8");
    legal_bestmove(&s.wait_for("bestmove", 0), &Position::startpos());

    let n = s.lines().len();
    s.send(&format!("setoption name EvalFile value {}", cut.display()));
    s.send("isready");
    let error = s.lines()[n].clone();
    assert!(
        error.starts_with("info string error: EvalFile") && error.contains("as an nn.bin"),
        "{error}"
    );
    assert!(error.contains("truncated"), "{error}");
    s.send("go nodes 8");
    assert_eq!(s.wait_for("bestmove", n), "bestmove resign");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The summary reports what tree reuse carried over; `usinewgame` starts clean.
#[test]
fn reuse_is_reported_and_usinewgame_starts_clean() {
    let mut s = Session::new();
    let reused = |s: &Session, skip: usize| -> u64 {
        let summary = s.lines()[skip..]
            .iter()
            .rfind(|l| l.starts_with("info string value "))
            .cloned()
            .unwrap();
        word_after(&summary, "reused_visits").parse().unwrap()
    };
    s.send("position startpos");
    s.send("go nodes 400");
    s.wait_for("bestmove", 0);
    let info = infos_after(&s, 0).pop().unwrap();
    let pv: Vec<&str> = info.split(" pv ").nth(1).unwrap().split(' ').collect();
    assert!(pv.len() >= 2, "{info}");
    assert_eq!(reused(&s, 0), 0);
    let next = format!("position startpos moves {} {}", pv[0], pv[1]);
    let n = s.lines().len();
    s.send(&next);
    s.send("go nodes 100");
    s.wait_for("bestmove", n);
    assert!(reused(&s, n) > 0, "{}", s.text());
    let n = s.lines().len();
    s.send("usinewgame");
    s.send(&next);
    s.send("go nodes 100");
    s.wait_for("bestmove", n);
    assert_eq!(reused(&s, n), 0);
}

#[test]
fn a_full_hash_says_so_and_still_spends_the_budget() {
    let mut s = Session::new();
    s.send("setoption name USI_Hash value 1");
    s.send("position startpos moves 7g7f 3c3d");
    s.send("go nodes 20000");
    let b = s.wait_for("bestmove", 0);
    legal_bestmove(&b, &after("startpos", &["7g7f", "3c3d"]));
    let text = s.text();
    assert_eq!(text.matches("tree full (USI_Hash)").count(), 1, "{text}");
    let last = s
        .lines()
        .into_iter()
        .rev()
        .find(|l| l.starts_with("info depth"))
        .unwrap();
    assert!(last.contains(" nodes 20000 "), "{last}");
    let hashfull: u32 = last
        .split_whitespace()
        .skip_while(|w| *w != "hashfull")
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    assert!(hashfull <= 1000, "{last}");
}

/// Issue 16, fault 3: the largest `USI_Hash` the engine announces (1,048,576 MiB) aborted the
/// process on a 16 GiB allocation. Now it is reduced to what the machine can give, an
/// `info string` says so, and the engine answers `readyok` and plays.
#[test]
fn the_largest_usi_hash_is_reduced_and_the_engine_still_plays() {
    let mut s = Session::new();
    s.send("setoption name USI_Hash value 1048576");
    s.send("isready");
    s.wait_for("readyok", 0);
    s.send("position startpos");
    s.send("go nodes 100");
    legal_bestmove(&s.wait_for("bestmove", 0), &Position::startpos());
    if crate::search::cache::available_memory_bytes().is_some() {
        let note = s.wait_for("info string", 0);
        assert!(
            note.contains("USI_Hash 1048576 MiB is more than this machine can give"),
            "{}",
            s.text()
        );
        assert!(!note.contains("error"), "a note, not an error: {note}");
    }
}

#[test]
fn the_draw_value_is_what_a_repetition_is_worth_inside_the_search() {
    // Black to move in the start position again (both kings stepped away and back): 5i5h
    // repeats the position after the first move. Searching only that move, the score is the
    // draw's value for Black.
    let position =
        "position sfen 4k4/9/9/9/9/9/9/9/4K4 b RBGSNLPrbgsnlp 1 moves 5i5h 5a5b 5h5i 5b5a";
    for (black, white, cp) in [
        (500, 200, 0),
        (700, 500, crate::search::cp_from_value(0.4)),
        (300, 900, crate::search::cp_from_value(-0.4)),
    ] {
        let mut s = Session::new();
        s.send(&format!("setoption name DrawValueBlack value {black}"));
        s.send(&format!("setoption name DrawValueWhite value {white}"));
        s.send("setoption name RootMateNodes value 0");
        s.send("isready");
        s.send(position);
        s.send("go nodes 64 searchmoves 5i5h");
        let b = s.wait_for("bestmove", 0);
        assert_eq!(b, "bestmove 5i5h");
        let last = s
            .lines()
            .into_iter()
            .filter(|l| l.starts_with("info depth"))
            .last()
            .unwrap();
        assert!(
            last.contains(&format!("score cp {cp} ")),
            "DrawValueBlack {black}: {last}"
        );
    }
}

/// The `reused_visits` of the last search summary after line `skip`.
fn reused_visits(s: &Session, skip: usize) -> u64 {
    let line = s
        .lines()
        .into_iter()
        .skip(skip)
        .filter(|l| l.contains(" reused_visits "))
        .last()
        .unwrap_or_else(|| panic!("no search summary: {}", s.text()));
    let after = line.split(" reused_visits ").nth(1).unwrap();
    after.split_whitespace().next().unwrap().parse().unwrap()
}

#[test]
fn pondering_keeps_every_reply_of_the_opponent_in_the_tree() {
    // Ponder hit: the search carries what pondering found into the pondered position.
    let mut s = Session::new();
    s.send("setoption name USI_Ponder value true");
    s.send("position startpos moves 7g7f 3c3d");
    s.send("go ponder btime 0 wtime 0 byoyomi 300");
    std::thread::sleep(Duration::from_millis(200));
    assert!(s.bestmoves().is_empty(), "no bestmove while pondering");
    assert!(
        s.text()
            .contains("info string ponder: searching the position before")
    );
    s.send("ponderhit");
    let b = s.wait_for("bestmove", 0);
    legal_bestmove(&b, &after("startpos", &["7g7f", "3c3d"]));
    assert!(reused_visits(&s, 0) > 0, "ponderhit reuses: {}", s.text());
    // Ponder miss: the opponent played another move; its subtree is kept too.
    let n = s.lines().len();
    s.send("position startpos moves 7g7f 3c3d 2g2f 8c8d");
    s.send("go ponder btime 0 wtime 0 byoyomi 300");
    std::thread::sleep(Duration::from_millis(200));
    s.send("stop");
    s.wait_for("bestmove", n);
    let n = s.lines().len();
    s.send("position startpos moves 7g7f 3c3d 2g2f 4a3b");
    s.send("go btime 0 wtime 0 byoyomi 300");
    let b = s.wait_for("bestmove", n);
    legal_bestmove(&b, &after("startpos", &["7g7f", "3c3d", "2g2f", "4a3b"]));
    assert!(
        reused_visits(&s, n) > 0,
        "a ponder miss reuses the reply's subtree: {}",
        s.text()
    );
    // Off: the pondered position is searched itself, and a miss starts clean.
    let mut s = Session::new();
    s.send("setoption name USI_Ponder value true");
    s.send("setoption name PonderOpponentPosition value false");
    s.send("position startpos moves 7g7f 3c3d");
    s.send("go ponder btime 0 wtime 0 byoyomi 300");
    std::thread::sleep(Duration::from_millis(100));
    s.send("stop");
    s.wait_for("bestmove", 0);
    assert!(!s.text().contains("info string ponder:"));
    let n = s.lines().len();
    s.send("position startpos moves 7g7f 8c8d");
    s.send("go btime 0 wtime 0 byoyomi 200");
    s.wait_for("bestmove", n);
    assert_eq!(reused_visits(&s, n), 0);
}

#[test]
fn with_pondering_on_a_bestmove_names_a_ponder_move_whenever_a_reply_exists() {
    // One simulation: the PV ends at the best move, yet the opponent has replies.
    let mut s = Session::new();
    s.send("setoption name USI_Ponder value true");
    s.send("setoption name RootMateNodes value 0");
    s.send("position startpos");
    s.send("go nodes 1");
    let b = s.wait_for("bestmove", 0);
    let p = Position::startpos();
    legal_bestmove(&b, &p);
    let words: Vec<&str> = b.split_whitespace().collect();
    assert_eq!(words.len(), 4, "{b}");
    assert_eq!(words[2], "ponder");
    let mut after = p.clone();
    after.do_move(p.parse_usi_move(words[1]).unwrap());
    assert!(after.parse_usi_move(words[3]).is_ok(), "a legal reply: {b}");
    // A mate has no reply to ponder on.
    let n = s.lines().len();
    s.send("position sfen 4k4/9/4P4/9/9/9/9/9/4K4 b G 1");
    s.send("go nodes 10");
    assert_eq!(s.wait_for("bestmove", n), "bestmove G*5b");
}

#[test]
fn unusable_evaluations_are_reported_not_silent() {
    use crate::eval::{Evaluation, Evaluator, FnFactory, Leaf};
    /// Answers every leaf with a NaN value.
    struct Nan;
    impl Evaluator for Nan {
        fn name(&self) -> String {
            "nan".into()
        }
        fn evaluate(&mut self, batch: &[Leaf<'_>], out: &mut Vec<Evaluation>) {
            out.clear();
            out.extend(batch.iter().map(|l| Evaluation {
                value_logit: f32::NAN,
                policy_logits: vec![0.0; l.moves.len()],
            }));
        }
    }
    let loader: Loader = Box::new(|_, _| {
        let factory = FnFactory::new("nan", || Box::new(Nan) as Box<dyn Evaluator>);
        Ok(LoadedNetwork::new(
            std::sync::Arc::new(factory),
            "nan".into(),
            "test".into(),
        ))
    });
    let mut s = Session::with_loader(loader);
    s.send("isready");
    s.send("position startpos");
    s.send("go nodes 16");
    legal_bestmove(&s.wait_for("bestmove", 0), &Position::startpos());
    assert!(
        s.text()
            .contains("info string warning: the evaluator returned"),
        "{}",
        s.text()
    );
}
