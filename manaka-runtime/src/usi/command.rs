//! Parsing one line of USI input into a [`Command`]. Pure: the engine decides what to do.
//!
//! Malformed input never panics; it becomes an `Err` with a message the engine sends back as
//! an `info string`. `go` and `bench` are tolerant: what they cannot read is skipped and
//! listed in `ignored` (the engine says so and still answers — a GUI waiting for `bestmove`
//! must get one).

/// Parameters of `go`, all optional (a missing clock is fine).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GoParams {
    pub btime: Option<u64>,
    pub wtime: Option<u64>,
    pub binc: Option<u64>,
    pub winc: Option<u64>,
    pub byoyomi: Option<u64>,
    pub movetime: Option<u64>,
    pub nodes: Option<u64>,
    pub depth: Option<u32>,
    /// Moves until the next time control (accepted; the time plan uses it, time.rs).
    pub movestogo: Option<u64>,
    pub infinite: bool,
    pub ponder: bool,
    /// `go mate <ms>|infinite`: a mate search, answered with `checkmate …`.
    pub mate: Option<MateTime>,
    /// `go searchmoves m1 m2 …`: the root moves to search, as written (the engine checks
    /// them against the position). The list ends at the first word that is not a move.
    pub searchmoves: Option<Vec<String>>,
    /// What could not be read, one message each (ignored; the search still runs).
    pub ignored: Vec<String>,
}

/// `bench [net] [N]`: the fixed benchmark (bench.rs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BenchParams {
    /// Search with the loaded network and the engine's options instead of the built-in
    /// material evaluator and fixed settings.
    pub net: bool,
    /// Simulations per position instead of the fixed budget.
    pub simulations: Option<u32>,
    pub ignored: Vec<String>,
}

/// The time a `go mate` search may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MateTime {
    Millis(u64),
    /// Until a mate, a proof that there is none, or `stop`.
    Infinite,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    Usi,
    IsReady,
    SetOption {
        name: String,
        value: String,
    },
    UsiNewGame,
    /// `sfen` is `startpos` or the four SFEN fields.
    Position {
        sfen: String,
        moves: Vec<String>,
    },
    Go(GoParams),
    Bench(BenchParams),
    Stop,
    PonderHit,
    GameOver(String),
    Quit,
    /// A blank line.
    Empty,
}

/// Why a line is not a command the engine can act on (the engine answers with an
/// `info string error: …` naming it; docs/usi.md).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("unknown command '{0}'")]
    UnknownCommand(String),
    #[error("setoption needs 'name <id> [value <x>]'")]
    SetOptionSyntax,
    #[error("setoption without an option name")]
    NoOptionName,
    /// `position sfen` with a field count other than 3 or 4 before `moves`.
    #[error("position sfen needs 3 or 4 SFEN fields, got {0}")]
    SfenFields(usize),
    #[error("position needs 'startpos' or 'sfen <SFEN>'")]
    PositionStart,
    /// A word where `moves` (or the end of the line) belongs.
    #[error("position: expected 'moves', found '{0}'")]
    ExpectedMoves(String),
}

/// Parses one input line (surrounding whitespace and a trailing `\r` are ignored).
pub fn parse(line: &str) -> Result<Command, ParseError> {
    let mut words = line.split_whitespace();
    let Some(head) = words.next() else {
        return Ok(Command::Empty);
    };
    let rest: Vec<&str> = words.collect();
    match head {
        "usi" => Ok(Command::Usi),
        "isready" => Ok(Command::IsReady),
        "usinewgame" => Ok(Command::UsiNewGame),
        "stop" => Ok(Command::Stop),
        "ponderhit" => Ok(Command::PonderHit),
        "quit" => Ok(Command::Quit),
        "gameover" => Ok(Command::GameOver(rest.first().unwrap_or(&"").to_string())),
        "setoption" => parse_setoption(line),
        "position" => parse_position(&rest),
        "go" => Ok(Command::Go(parse_go(&rest))),
        "bench" => Ok(Command::Bench(parse_bench(&rest))),
        _ => Err(ParseError::UnknownCommand(head.to_string())),
    }
}

/// `setoption name <id> [value <x>]`; the name and the value may contain spaces (file paths).
fn parse_setoption(line: &str) -> Result<Command, ParseError> {
    let body = line
        .trim()
        .strip_prefix("setoption")
        .unwrap_or("")
        .trim_start();
    let Some(body) = body.strip_prefix("name ") else {
        return Err(ParseError::SetOptionSyntax);
    };
    let (name, value) = match body.find(" value ") {
        Some(i) => (&body[..i], &body[i + " value ".len()..]),
        None => (body.strip_suffix(" value").unwrap_or(body), ""),
    };
    let name = name.trim();
    if name.is_empty() {
        return Err(ParseError::NoOptionName);
    }
    Ok(Command::SetOption {
        name: name.to_string(),
        value: value.trim().to_string(),
    })
}

/// `position startpos [moves …]` or `position sfen <board> <side> <hand> [<ply>] [moves …]`.
fn parse_position(words: &[&str]) -> Result<Command, ParseError> {
    let (sfen, rest) = match words.first() {
        Some(&"startpos") => ("startpos".to_string(), &words[1..]),
        Some(&"sfen") => {
            let n = words[1..]
                .iter()
                .position(|w| *w == "moves")
                .unwrap_or(words.len() - 1);
            if !(3..=4).contains(&n) {
                return Err(ParseError::SfenFields(n));
            }
            let mut fields = words[1..1 + n].join(" ");
            if n == 3 {
                fields.push_str(" 1");
            }
            (fields, &words[1 + n..])
        }
        _ => return Err(ParseError::PositionStart),
    };
    let moves = match rest.split_first() {
        None => Vec::new(),
        Some((&"moves", ms)) => ms.iter().map(|m| m.to_string()).collect(),
        Some((w, _)) => return Err(ParseError::ExpectedMoves(w.to_string())),
    };
    Ok(Command::Position { sfen, moves })
}

/// Whether `w` is written like a USI move (`7g7f`, `8h2b+`, `P*5e`); legality is the
/// engine's business.
pub fn looks_like_move(w: &str) -> bool {
    let b = w.as_bytes();
    let file = |c: u8| (b'1'..=b'9').contains(&c);
    let rank = |c: u8| (b'a'..=b'i').contains(&c);
    match b {
        [p, b'*', f, r] => b"PLNSGBR".contains(p) && file(*f) && rank(*r),
        [f1, r1, f2, r2] | [f1, r1, f2, r2, b'+'] => {
            file(*f1) && rank(*r1) && file(*f2) && rank(*r2)
        }
        _ => false,
    }
}

/// The words `go` knows.
const GO_WORDS: &[&str] = &[
    "btime",
    "wtime",
    "binc",
    "winc",
    "byoyomi",
    "movetime",
    "nodes",
    "depth",
    "movestogo",
    "infinite",
    "ponder",
    "mate",
    "searchmoves",
];

/// A number as GUIs write clock values: negative (a clock that has run over) counts as 0.
fn number(w: &str) -> Option<u64> {
    w.parse::<i64>().ok().map(|x| x.max(0) as u64)
}

/// `go …`, tolerantly: an unknown word is skipped (with the number after it, as in
/// `go multipv 3`), a parameter without a readable number is skipped with the word after it
/// (unless that word is a parameter: `go btime infinite` is `go infinite`); each skip is a
/// message in `ignored`.
fn parse_go(words: &[&str]) -> GoParams {
    let mut g = GoParams::default();
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        i += 1;
        let next = words.get(i).copied();
        let value = next.and_then(number);
        if value.is_some() {
            // Consumed only when it is a number (`go btime infinite` keeps `infinite`).
            i += 1;
        }
        match w {
            "btime" | "wtime" | "binc" | "winc" | "byoyomi" | "movetime" | "nodes" | "depth"
            | "movestogo" => {
                let Some(v) = value else {
                    g.ignored.push(match next {
                        Some(n) => format!("go {w}: '{n}' is not a number; '{w}' ignored"),
                        None => format!("go {w} needs a number; ignored"),
                    });
                    // The bad value goes with it, unless it is the next parameter.
                    if next.is_some_and(|n| !GO_WORDS.contains(&n)) {
                        i += 1;
                    }
                    continue;
                };
                let slot = match w {
                    "btime" => &mut g.btime,
                    "wtime" => &mut g.wtime,
                    "binc" => &mut g.binc,
                    "winc" => &mut g.winc,
                    "byoyomi" => &mut g.byoyomi,
                    "movetime" => &mut g.movetime,
                    "nodes" => &mut g.nodes,
                    "movestogo" => &mut g.movestogo,
                    _ => {
                        g.depth = Some(v.min(u64::from(u32::MAX)) as u32);
                        continue;
                    }
                };
                *slot = Some(v);
            }
            "infinite" => g.infinite = true,
            "ponder" => g.ponder = true,
            "mate" => {
                // `go mate` alone waits like `go mate infinite` (some GUIs send it bare).
                g.mate = Some(match (value, next) {
                    (Some(ms), _) => MateTime::Millis(ms),
                    (None, Some("infinite")) => {
                        i += 1;
                        MateTime::Infinite
                    }
                    _ => MateTime::Infinite,
                });
            }
            "searchmoves" => {
                if value.is_some() {
                    i -= 1; // a number is not a move
                }
                let start = i;
                while i < words.len() && looks_like_move(words[i]) {
                    i += 1;
                }
                if i == start {
                    g.ignored
                        .push("go searchmoves without a move; ignored".to_string());
                } else {
                    let moves = words[start..i].iter().map(|m| m.to_string());
                    g.searchmoves.get_or_insert_with(Vec::new).extend(moves);
                }
            }
            _ => g.ignored.push(match value {
                Some(v) => format!("go: unknown parameter '{w} {v}' ignored"),
                None => format!("go: unknown parameter '{w}' ignored"),
            }),
        }
    }
    g
}

/// `bench [net] [N]`, tolerantly (anything else is listed in `ignored`).
fn parse_bench(words: &[&str]) -> BenchParams {
    let mut b = BenchParams::default();
    for &w in words {
        match (w, w.parse::<u32>()) {
            ("net", _) => b.net = true,
            (_, Ok(n)) if n > 0 => b.simulations = Some(n),
            _ => b.ignored.push(format!(
                "bench: '{w}' is neither 'net' nor a positive number; ignored"
            )),
        }
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands() {
        assert_eq!(parse("usi"), Ok(Command::Usi));
        assert_eq!(parse("  isready \r"), Ok(Command::IsReady));
        assert_eq!(parse(""), Ok(Command::Empty));
        assert_eq!(parse("gameover win"), Ok(Command::GameOver("win".into())));
        let e = parse("fly away").unwrap_err();
        assert_eq!(e, ParseError::UnknownCommand("fly".into()));
        assert_eq!(e.to_string(), "unknown command 'fly'");
    }

    #[test]
    fn setoption_with_spaces() {
        assert_eq!(
            parse("setoption name EvalFile value /data/my nets/a.mnw"),
            Ok(Command::SetOption {
                name: "EvalFile".into(),
                value: "/data/my nets/a.mnw".into()
            })
        );
        assert_eq!(
            parse("setoption name USI_Ponder value true"),
            Ok(Command::SetOption {
                name: "USI_Ponder".into(),
                value: "true".into()
            })
        );
        assert_eq!(
            parse("setoption name Clear Hash"),
            Ok(Command::SetOption {
                name: "Clear Hash".into(),
                value: String::new()
            })
        );
        assert_eq!(parse("setoption"), Err(ParseError::SetOptionSyntax));
        assert_eq!(parse("setoption name"), Err(ParseError::SetOptionSyntax));
        assert_eq!(
            parse("setoption name  value 3"),
            Err(ParseError::NoOptionName)
        );
    }

    #[test]
    fn positions() {
        assert_eq!(
            parse("position startpos moves 7g7f 3c3d"),
            Ok(Command::Position {
                sfen: "startpos".into(),
                moves: vec!["7g7f".into(), "3c3d".into()]
            })
        );
        assert_eq!(
            parse("position sfen 4k4/9/9/9/9/9/9/9/4K4 b G 1 moves G*5b"),
            Ok(Command::Position {
                sfen: "4k4/9/9/9/9/9/9/9/4K4 b G 1".into(),
                moves: vec!["G*5b".into()]
            })
        );
        assert_eq!(
            parse("position sfen 4k4/9/9/9/9/9/9/9/4K4 b -"),
            Ok(Command::Position {
                sfen: "4k4/9/9/9/9/9/9/9/4K4 b - 1".into(),
                moves: vec![]
            })
        );
        assert_eq!(parse("position"), Err(ParseError::PositionStart));
        assert_eq!(parse("position sfen"), Err(ParseError::SfenFields(0)));
        assert_eq!(
            parse("position startpos 7g7f"),
            Err(ParseError::ExpectedMoves("7g7f".into()))
        );
        assert_eq!(
            parse("position sfen a b c d e f moves"),
            Err(ParseError::SfenFields(6))
        );
    }

    #[test]
    fn go_parameters() {
        let g = match parse("go btime 1000 wtime 2000 byoyomi 300 binc 0 winc 0").unwrap() {
            Command::Go(g) => g,
            c => panic!("{c:?}"),
        };
        assert_eq!(
            (g.btime, g.wtime, g.byoyomi),
            (Some(1000), Some(2000), Some(300))
        );
        let g = match parse("go ponder btime -50 wtime 0 byoyomi 100").unwrap() {
            Command::Go(g) => g,
            c => panic!("{c:?}"),
        };
        assert!(g.ponder && g.btime == Some(0));
        assert_eq!(parse("go"), Ok(Command::Go(GoParams::default())));
        assert!(matches!(
            parse("go infinite"),
            Ok(Command::Go(GoParams { infinite: true, .. }))
        ));
        assert!(matches!(
            parse("go mate infinite"),
            Ok(Command::Go(GoParams {
                mate: Some(MateTime::Infinite),
                ..
            }))
        ));
        assert!(matches!(
            parse("go mate 1500"),
            Ok(Command::Go(GoParams {
                mate: Some(MateTime::Millis(1500)),
                ..
            }))
        ));
        assert!(matches!(
            parse("go mate"),
            Ok(Command::Go(GoParams {
                mate: Some(MateTime::Infinite),
                ..
            }))
        ));
        assert!(matches!(
            parse("go mate soon"),
            Ok(Command::Go(GoParams {
                mate: Some(MateTime::Infinite),
                ..
            }))
        ));
    }

    fn go(line: &str) -> GoParams {
        match parse(line) {
            Ok(Command::Go(g)) => g,
            c => panic!("{line}: {c:?}"),
        }
    }

    /// Nothing in a `go` line is fatal: what cannot be read is skipped with a message, and
    /// the rest still counts.
    #[test]
    fn go_is_tolerant() {
        let g = go("go btime 1000 wtime 1000 movestogo 10");
        assert_eq!((g.btime, g.movestogo), (Some(1000), Some(10)));
        assert!(g.ignored.is_empty(), "{:?}", g.ignored);
        let g = go("go nodes 100 multipv 3");
        assert_eq!(g.nodes, Some(100));
        assert_eq!(g.ignored, ["go: unknown parameter 'multipv 3' ignored"]);
        let g = go("go sideways");
        assert_eq!(
            g,
            GoParams {
                ignored: vec!["go: unknown parameter 'sideways' ignored".into()],
                ..GoParams::default()
            }
        );
        let g = go("go btime");
        assert!(g.btime.is_none() && g.ignored[0].contains("needs a number"));
        // A bad number leaves the next word to be read: `infinite` still counts.
        let g = go("go nodes many infinite");
        assert!(g.nodes.is_none() && g.infinite);
        assert!(
            g.ignored[0].contains("'many' is not a number"),
            "{:?}",
            g.ignored
        );
        let g = go("go btime infinite");
        assert!(g.infinite && g.btime.is_none());
    }

    #[test]
    fn searchmoves_end_at_the_first_word_that_is_not_a_move() {
        let g = go("go searchmoves 7g7f 2g2f P*5e 8h2b+ nodes 100");
        assert_eq!(
            g.searchmoves.as_deref(),
            Some(&["7g7f", "2g2f", "P*5e", "8h2b+"].map(String::from)[..])
        );
        assert_eq!(g.nodes, Some(100));
        let g = go("go nodes 5 searchmoves 7g7f");
        assert_eq!(g.searchmoves, Some(vec!["7g7f".to_string()]));
        let g = go("go searchmoves 100");
        assert!(g.searchmoves.is_none());
        assert_eq!(g.ignored.len(), 2, "{:?}", g.ignored);
        for (w, ok) in [
            ("7g7f", true),
            ("1a9i+", true),
            ("G*5b", true),
            ("K*5b", false),
            ("0g7f", false),
            ("7j7f", false),
            ("7g7f=", false),
            ("nodes", false),
            ("", false),
        ] {
            assert_eq!(looks_like_move(w), ok, "{w}");
        }
    }

    #[test]
    fn bench_parameters() {
        assert_eq!(parse("bench"), Ok(Command::Bench(BenchParams::default())));
        assert_eq!(
            parse("bench net 300"),
            Ok(Command::Bench(BenchParams {
                net: true,
                simulations: Some(300),
                ignored: vec![],
            }))
        );
        match parse("bench 0 fast").unwrap() {
            Command::Bench(b) => assert_eq!(b.ignored.len(), 2),
            c => panic!("{c:?}"),
        }
    }
}
