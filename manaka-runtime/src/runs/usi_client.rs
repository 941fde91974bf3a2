//! A small client for USI engines (the protocol of shogi engines, as UCI is for chess), for
//! labelling positions with another engine's score and best move.
//!
//! The client starts the engine, waits for `usiok`, sets options, waits for `readyok`, and
//! then answers [`UsiClient::analyse`]: `position sfen …` and `go depth D` / `go nodes N`,
//! collecting `info … score …` lines until `bestmove`. Every wait has a timeout; an engine
//! that exits, stops answering, or answers something the protocol does not allow is
//! reported as a [`UsiError`] naming the engine, what was awaited and the offending line
//! (with the last lines the engine wrote to stderr, when it died).
//!
//! fairy-stockfish speaks USI when it is sent `usi` and then plays shogi by default (its
//! `UCI_Variant` becomes `shogi`); `--option UCI_Variant=shogi` states it explicitly — and
//! changes its evaluation: Debian's 11.1 then reports scores about half as large and picks
//! other moves, at equal strength (docs/strength.md, "Evaluation or search?"). The archived
//! labels were made without it, in the scale of the engine that matches play.

use crate::shogi::{Move, Position};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use thiserror::Error;

/// What went wrong talking to an engine.
#[derive(Debug, Error)]
pub enum UsiError {
    #[error("cannot start engine '{command}': {source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    #[error("engine '{engine}' exited while {waiting}{stderr}")]
    Died {
        engine: String,
        waiting: String,
        stderr: String,
    },
    #[error("engine '{engine}' did not answer {waiting} within {secs:.0} s")]
    Timeout {
        engine: String,
        waiting: String,
        secs: f64,
    },
    #[error("engine '{engine}' sent '{line}' {context}: {why}")]
    Unexpected {
        engine: String,
        line: String,
        context: String,
        why: String,
    },
    #[error("engine '{engine}' has no option '{name}' (it offers: {offered})")]
    NoSuchOption {
        engine: String,
        name: String,
        offered: String,
    },
    #[error("cannot write to engine '{engine}': {source}")]
    Write {
        engine: String,
        source: std::io::Error,
    },
}

/// How long the engine may search one position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    Depth(u32),
    Nodes(u64),
}

/// A USI score, from the side to move's point of view (the protocol's convention).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    /// Centipawns.
    Cp(i32),
    /// `mate N`: the side to move mates in N plies (N > 0) or is mated in −N (N ≤ 0).
    Mate(i32),
    /// `mate +` / `mate -`: a mate of unknown length, for (true) or against the side to move.
    MateUnknown(bool),
}

/// Largest non-mate score written to training data; mate scores lie above it.
pub const CP_LIMIT: i32 = 30000;
/// YaneuraOu's `VALUE_MATE`: a mate in n plies is scored `MATE_SCORE − n`.
pub const MATE_SCORE: i32 = 32000;

impl Score {
    /// The score as a 16-bit training-data eval, YaneuraOu's convention: centipawns clamped
    /// to ±30000; a mate in n plies is 32000 − n (n capped at 1999, so mates stay above
    /// every centipawn score), being mated in n is −(32000 − n), `mate 0` (mated now) is
    /// −32000, and a mate of unknown length counts as n = 1.
    pub fn to_eval(self) -> i16 {
        let v = match self {
            Score::Cp(cp) => cp.clamp(-CP_LIMIT, CP_LIMIT),
            Score::Mate(n) if n > 0 => MATE_SCORE - n.min(1999),
            Score::Mate(n) => -(MATE_SCORE - n.saturating_neg().min(1999)),
            Score::MateUnknown(true) => MATE_SCORE - 1,
            Score::MateUnknown(false) => -(MATE_SCORE - 1),
        };
        v as i16
    }
}

/// The engine's final word on a position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BestMove {
    Move(Move),
    /// `bestmove resign`.
    Resign,
    /// `bestmove win`: an entering-king declaration.
    Win,
}

/// The result of one [`UsiClient::analyse`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Analysis {
    /// The last exact score reported (a bound if no exact one came), `None` if the engine
    /// reported none.
    pub score: Option<Score>,
    pub best_move: BestMove,
    /// The principal variation of the line the score came from (USI text).
    pub pv: Vec<String>,
    pub depth: u32,
    pub nodes: u64,
}

/// A running USI engine.
pub struct UsiClient {
    name: String,
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    timeout: Duration,
    options: Vec<String>,
}

impl UsiClient {
    /// Starts `program` with `args`, performs the `usi` handshake, sets `options` (name,
    /// value) and waits until it is ready. `timeout` bounds every wait for the engine
    /// except searches (see [`UsiClient::analyse`]).
    pub fn start(
        program: &str,
        args: &[String],
        options: &[(String, String)],
        timeout: Duration,
    ) -> Result<UsiClient, UsiError> {
        let command = std::iter::once(program.to_string())
            .chain(args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ");
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| UsiError::Spawn {
                command: command.clone(),
                source,
            })?;
        let (stdin, stdout, stderr_pipe) =
            match (child.stdin.take(), child.stdout.take(), child.stderr.take()) {
                (Some(i), Some(o), Some(e)) => (i, o, e),
                _ => {
                    let _ = child.kill();
                    return Err(UsiError::Spawn {
                        command,
                        source: std::io::Error::other("no pipes to the engine"),
                    });
                }
            };
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let sink = Arc::clone(&stderr);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr_pipe).lines() {
                let Ok(line) = line else { break };
                if let Ok(mut q) = sink.lock() {
                    if q.len() == 5 {
                        q.pop_front();
                    }
                    q.push_back(line);
                }
            }
        });
        let mut client = UsiClient {
            name: command,
            child,
            stdin,
            lines: rx,
            stderr,
            timeout,
            options: Vec::new(),
        };
        client.send("usi")?;
        let deadline = Instant::now() + timeout;
        loop {
            let line = client.recv(deadline, "'usiok' after 'usi'")?;
            let mut words = line.split_whitespace();
            match words.next() {
                Some("usiok") => break,
                Some("id") if words.next() == Some("name") => {
                    let name = words.collect::<Vec<_>>().join(" ");
                    if !name.is_empty() {
                        client.name = name;
                    }
                }
                Some("option") if words.next() == Some("name") => {
                    let name: Vec<&str> = words.take_while(|w| *w != "type").collect();
                    client.options.push(name.join(" "));
                }
                _ => {} // other lines (banners, id author) are allowed before usiok
            }
        }
        for (name, value) in options {
            if !name.starts_with("USI_") && !client.options.iter().any(|o| o == name) {
                return Err(UsiError::NoSuchOption {
                    engine: client.name.clone(),
                    name: name.clone(),
                    offered: client.options.join(", "),
                });
            }
            client.send(&format!("setoption name {name} value {value}"))?;
        }
        client.ready("'readyok' after 'isready'")?;
        Ok(client)
    }

    /// The engine's `id name` (or its command line, if it sent none).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The option names the engine listed.
    pub fn options(&self) -> &[String] {
        &self.options
    }

    /// `usinewgame`, then waits until the engine is ready.
    pub fn new_game(&mut self) -> Result<(), UsiError> {
        self.send("usinewgame")?;
        self.ready("'readyok' after 'usinewgame'")
    }

    fn ready(&mut self, waiting: &str) -> Result<(), UsiError> {
        self.send("isready")?;
        let deadline = Instant::now() + self.timeout;
        loop {
            let line = self.recv(deadline, waiting)?;
            if line.trim() == "readyok" {
                return Ok(());
            }
        }
    }

    fn send(&mut self, line: &str) -> Result<(), UsiError> {
        let r = writeln!(self.stdin, "{line}").and_then(|_| self.stdin.flush());
        r.map_err(|source| {
            if self.exited() {
                UsiError::Died {
                    engine: self.name.clone(),
                    waiting: format!("being sent '{line}'"),
                    stderr: self.stderr_tail(),
                }
            } else {
                UsiError::Write {
                    engine: self.name.clone(),
                    source,
                }
            }
        })
    }

    fn exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    fn stderr_tail(&self) -> String {
        let lines: Vec<String> = self
            .stderr
            .lock()
            .map(|q| q.iter().cloned().collect())
            .unwrap_or_default();
        if lines.is_empty() {
            String::new()
        } else {
            format!(" (its stderr ends: {})", lines.join(" | "))
        }
    }

    fn recv(&mut self, deadline: Instant, waiting: &str) -> Result<String, UsiError> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(left) {
            Ok(line) => Ok(line),
            Err(RecvTimeoutError::Timeout) => Err(UsiError::Timeout {
                engine: self.name.clone(),
                waiting: waiting.to_string(),
                secs: self.timeout.as_secs_f64(),
            }),
            Err(RecvTimeoutError::Disconnected) => {
                // Give the process a moment to be reaped so stderr is complete.
                std::thread::sleep(Duration::from_millis(50));
                Err(UsiError::Died {
                    engine: self.name.clone(),
                    waiting: format!("waiting for {waiting}"),
                    stderr: self.stderr_tail(),
                })
            }
        }
    }

    /// Searches `pos` (sent as `position sfen …`, without history) within `limit` and
    /// returns the engine's score and best move. The search may take up to `search_timeout`;
    /// after that the client sends `stop` and waits [`UsiClient::start`]'s timeout more for
    /// `bestmove` before giving up. A best move that is not legal in `pos` is an error.
    pub fn analyse(
        &mut self,
        pos: &Position,
        limit: Limit,
        search_timeout: Duration,
    ) -> Result<Analysis, UsiError> {
        let sfen = pos.to_sfen();
        self.send(&format!("position sfen {sfen}"))?;
        self.send(&match limit {
            Limit::Depth(d) => format!("go depth {d}"),
            Limit::Nodes(n) => format!("go nodes {n}"),
        })?;
        let mut exact: Option<(Score, Vec<String>)> = None;
        let mut bound: Option<(Score, Vec<String>)> = None;
        let (mut depth, mut nodes) = (0, 0);
        let mut deadline = Instant::now() + search_timeout;
        let mut stopped = false;
        let waiting = format!("'bestmove' for {sfen}");
        loop {
            let line = match self.recv(deadline, &waiting) {
                Err(UsiError::Timeout { .. }) if !stopped => {
                    self.send("stop")?;
                    stopped = true;
                    deadline = Instant::now() + self.timeout;
                    continue;
                }
                Err(UsiError::Timeout {
                    engine, waiting, ..
                }) => {
                    return Err(UsiError::Timeout {
                        engine,
                        waiting,
                        secs: (search_timeout + self.timeout).as_secs_f64(),
                    });
                }
                other => other?,
            };
            let mut words = line.split_whitespace();
            match words.next() {
                Some("info") => {
                    let info =
                        parse_info(&line).map_err(|why| self.unexpected(&line, &sfen, why))?;
                    depth = info.depth.unwrap_or(depth);
                    nodes = info.nodes.unwrap_or(nodes);
                    if let Some(score) = info.score {
                        let entry = Some((score, info.pv));
                        if info.bound {
                            bound = entry
                        } else {
                            exact = entry
                        }
                    }
                }
                Some("bestmove") => {
                    let text = words.next().unwrap_or("");
                    let best_move = match text {
                        "resign" => BestMove::Resign,
                        "win" => BestMove::Win,
                        _ => BestMove::Move(
                            pos.parse_usi_move(text)
                                .map_err(|e| self.unexpected(&line, &sfen, e.to_string()))?,
                        ),
                    };
                    let (score, pv) = match exact.or(bound) {
                        Some((s, pv)) => (Some(s), pv),
                        None => (None, Vec::new()),
                    };
                    return Ok(Analysis {
                        score,
                        best_move,
                        pv,
                        depth,
                        nodes,
                    });
                }
                _ => {} // USI allows engines to print other lines; ignore them
            }
        }
    }

    fn unexpected(&self, line: &str, sfen: &str, why: String) -> UsiError {
        UsiError::Unexpected {
            engine: self.name.clone(),
            line: line.to_string(),
            context: format!("while searching {sfen}"),
            why,
        }
    }

    /// Sends `quit` and waits briefly for the engine to exit, killing it otherwise.
    pub fn quit(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        let _ = writeln!(self.stdin, "quit").and_then(|_| self.stdin.flush());
        let until = Instant::now() + Duration::from_millis(500);
        while Instant::now() < until {
            if !matches!(self.child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for UsiClient {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.shutdown();
        }
    }
}

/// The parts of an `info` line the client uses.
#[derive(Debug, Default, PartialEq, Eq)]
struct Info {
    depth: Option<u32>,
    nodes: Option<u64>,
    score: Option<Score>,
    bound: bool,
    pv: Vec<String>,
    multipv: Option<u32>,
}

/// Parses an `info` line. Lines of `multipv` 2 and beyond carry no score for our purpose.
fn parse_info(line: &str) -> Result<Info, String> {
    let mut info = Info::default();
    let words: Vec<&str> = line.split_whitespace().collect();
    let mut i = 1;
    while i < words.len() {
        let num = |j: usize| -> Result<&str, String> {
            words
                .get(j)
                .copied()
                .ok_or_else(|| format!("'{}' lacks its value", words[j - 1]))
        };
        match words[i] {
            "depth" => {
                info.depth = num(i + 1)?.parse().ok();
                i += 2;
            }
            "nodes" => {
                info.nodes = num(i + 1)?.parse().ok();
                i += 2;
            }
            "multipv" => {
                info.multipv = num(i + 1)?.parse().ok();
                i += 2;
            }
            "score" => {
                let kind = num(i + 1)?;
                let v = num(i + 2)?;
                info.score = Some(match kind {
                    "cp" => Score::Cp(
                        v.parse()
                            .map_err(|_| format!("score cp '{v}' is not a number"))?,
                    ),
                    "mate" => match v {
                        "+" => Score::MateUnknown(true),
                        "-" => Score::MateUnknown(false),
                        // `mate 0` and `mate -0` (mated now) are both 0, a loss.
                        _ => Score::Mate(
                            v.parse()
                                .map_err(|_| format!("score mate '{v}' is not a number"))?,
                        ),
                    },
                    other => {
                        return Err(format!(
                            "unknown score kind '{other}' (USI has cp and mate)"
                        ));
                    }
                });
                i += 3;
                if words
                    .get(i)
                    .is_some_and(|b| *b == "lowerbound" || *b == "upperbound")
                {
                    info.bound = true;
                    i += 1;
                }
            }
            "pv" => {
                info.pv = words[i + 1..].iter().map(|s| s.to_string()).collect();
                break;
            }
            "string" => break, // free text to the end of the line
            _ => i += 1,
        }
    }
    if info.multipv.is_some_and(|m| m > 1) {
        info.score = None;
    }
    Ok(info)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_lines_parse() {
        let i = parse_info(
            "info depth 8 seldepth 11 multipv 1 score cp 161 nodes 9188 nps 1 pv 7g7f 5a4b",
        )
        .unwrap();
        assert_eq!(
            (i.depth, i.nodes, i.score, i.bound),
            (Some(8), Some(9188), Some(Score::Cp(161)), false)
        );
        assert_eq!(i.pv, ["7g7f", "5a4b"]);
        let i = parse_info("info depth 3 score mate -4 pv 1a1b").unwrap();
        assert_eq!(i.score, Some(Score::Mate(-4)));
        let i = parse_info("info score mate + pv G*1b").unwrap();
        assert_eq!(i.score, Some(Score::MateUnknown(true)));
        let i = parse_info("info depth 9 score cp -30 upperbound nodes 5").unwrap();
        assert!(i.bound);
        assert_eq!(i.nodes, Some(5));
        assert_eq!(parse_info("info multipv 2 score cp 5").unwrap().score, None);
        assert_eq!(parse_info("info string score cp x").unwrap().score, None);
        assert!(parse_info("info score cp").is_err());
        assert!(parse_info("info score cp abc").is_err());
        assert!(parse_info("info score wdl 1 2 3").is_err());
    }

    #[test]
    fn scores_convert_to_evals() {
        assert_eq!(Score::Cp(161).to_eval(), 161);
        assert_eq!(Score::Cp(-99_999).to_eval(), -30000);
        assert_eq!(Score::Mate(1).to_eval(), 31999);
        assert_eq!(Score::Mate(-4).to_eval(), -31996);
        assert_eq!(Score::Mate(0).to_eval(), -32000);
        assert_eq!(Score::Mate(100_000).to_eval(), 30001);
        assert_eq!(Score::MateUnknown(false).to_eval(), -31999);
    }

    #[test]
    fn missing_engine_is_a_spawn_error() {
        let e = UsiClient::start("/nonexistent/engine", &[], &[], Duration::from_secs(1))
            .err()
            .unwrap();
        assert!(
            e.to_string()
                .contains("cannot start engine '/nonexistent/engine'"),
            "{e}"
        );
    }

    #[test]
    fn an_engine_that_is_not_usi_is_reported() {
        // `cat` echoes `usi` back and never says usiok: a timeout naming what was awaited.
        let e = UsiClient::start("cat", &[], &[], Duration::from_millis(300))
            .err()
            .unwrap();
        assert!(
            e.to_string().contains("did not answer 'usiok' after 'usi'"),
            "{e}"
        );
        // `true` exits at once: the engine died.
        let e = UsiClient::start("true", &[], &[], Duration::from_secs(5))
            .err()
            .unwrap();
        assert!(e.to_string().contains("exited while"), "{e}");
    }
}
