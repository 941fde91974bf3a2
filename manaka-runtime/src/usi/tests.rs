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
        "Threads",
        "USI_Hash",
        "USI_Ponder",
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
    let loader: Loader = Box::new(move |_| {
        counter.fetch_add(1, Ordering::SeqCst);
        Ok(LoadedNetwork {
            factory: MaterialEvaluator::factory(),
            description: "counted".into(),
        })
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

#[test]
fn bad_eval_file_falls_back_with_a_message() {
    let mut s = Session::new();
    s.send("setoption name EvalFile value /no/such/net.mnw");
    s.send("isready");
    let text = s.text();
    assert!(
        text.contains("info string error: EvalFile '/no/such/net.mnw' could not be loaded"),
        "{text}"
    );
    assert!(text.contains("info string EvalFile not set"), "{text}");
    assert!(text.trim_end().ends_with("readyok"));
    s.send("position startpos");
    s.send("go nodes 16");
    let b = s.wait_for("bestmove", 0);
    legal_bestmove(&b, &Position::startpos());
}

#[test]
fn malformed_input_is_answered_not_fatal() {
    let mut s = Session::new();
    for line in [
        "fly",
        "go sideways",
        "go btime",
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
        10,
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
    let loader: Loader = Box::new(move |_| {
        counter.fetch_add(1, Ordering::SeqCst);
        let factory = FnFactory::new("broken", || Box::new(Broken) as Box<dyn Evaluator>);
        Ok(LoadedNetwork {
            factory: std::sync::Arc::new(factory),
            description: "broken".into(),
        })
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
    let mut q = p.clone();
    q.do_move(q.parse_usi_move(first).unwrap());
    let replies = q.legal_moves();
    q.in_check()
        && replies.iter().all(|&r| {
            q.do_move(r);
            let mate = q.mate_in_one().is_some();
            q.undo_move(r);
            mate
        })
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
