//! Parsing one line of USI input into a [`Command`]. Pure: the engine decides what to do.
//!
//! Malformed input never panics; it becomes an `Err` with a message the engine sends back as
//! an `info string`.

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
    pub infinite: bool,
    pub ponder: bool,
    /// `go mate <ms>|infinite`: a mate search, answered with `checkmate …`.
    pub mate: Option<MateTime>,
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
    Stop,
    PonderHit,
    GameOver(String),
    Quit,
    /// A blank line.
    Empty,
}

/// Parses one input line (surrounding whitespace and a trailing `\r` are ignored).
pub fn parse(line: &str) -> Result<Command, String> {
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
        "go" => parse_go(&rest).map(Command::Go),
        _ => Err(format!("unknown command '{head}'")),
    }
}

/// `setoption name <id> [value <x>]`; the name and the value may contain spaces (file paths).
fn parse_setoption(line: &str) -> Result<Command, String> {
    let body = line
        .trim()
        .strip_prefix("setoption")
        .unwrap_or("")
        .trim_start();
    let Some(body) = body.strip_prefix("name ") else {
        return Err("setoption needs 'name <id> [value <x>]'".to_string());
    };
    let (name, value) = match body.find(" value ") {
        Some(i) => (&body[..i], &body[i + " value ".len()..]),
        None => (body.strip_suffix(" value").unwrap_or(body), ""),
    };
    let name = name.trim();
    if name.is_empty() {
        return Err("setoption without an option name".to_string());
    }
    Ok(Command::SetOption {
        name: name.to_string(),
        value: value.trim().to_string(),
    })
}

/// `position startpos [moves …]` or `position sfen <board> <side> <hand> [<ply>] [moves …]`.
fn parse_position(words: &[&str]) -> Result<Command, String> {
    let (sfen, rest) = match words.first() {
        Some(&"startpos") => ("startpos".to_string(), &words[1..]),
        Some(&"sfen") => {
            let n = words[1..]
                .iter()
                .position(|w| *w == "moves")
                .unwrap_or(words.len() - 1);
            if !(3..=4).contains(&n) {
                return Err(format!("position sfen needs 3 or 4 SFEN fields, got {n}"));
            }
            let mut fields = words[1..1 + n].join(" ");
            if n == 3 {
                fields.push_str(" 1");
            }
            (fields, &words[1 + n..])
        }
        _ => return Err("position needs 'startpos' or 'sfen <SFEN>'".to_string()),
    };
    let moves = match rest.split_first() {
        None => Vec::new(),
        Some((&"moves", ms)) => ms.iter().map(|m| m.to_string()).collect(),
        Some((w, _)) => return Err(format!("position: expected 'moves', found '{w}'")),
    };
    Ok(Command::Position { sfen, moves })
}

fn parse_go(words: &[&str]) -> Result<GoParams, String> {
    let mut g = GoParams::default();
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        i += 1;
        let mut number = |what: &str| -> Result<u64, String> {
            let v = words
                .get(i)
                .ok_or_else(|| format!("go {what} needs a number"))?;
            i += 1;
            // Some GUIs send negative remaining times when a clock has run over.
            v.parse::<i64>()
                .map(|x| x.max(0) as u64)
                .map_err(|_| format!("go {what}: '{v}' is not a number"))
        };
        match w {
            "btime" => g.btime = Some(number(w)?),
            "wtime" => g.wtime = Some(number(w)?),
            "binc" => g.binc = Some(number(w)?),
            "winc" => g.winc = Some(number(w)?),
            "byoyomi" => g.byoyomi = Some(number(w)?),
            "movetime" => g.movetime = Some(number(w)?),
            "nodes" => g.nodes = Some(number(w)?),
            "depth" => g.depth = Some(number(w)?.min(u64::from(u32::MAX)) as u32),
            "infinite" => g.infinite = true,
            "ponder" => g.ponder = true,
            "mate" => {
                // `go mate` alone waits like `go mate infinite` (some GUIs send it bare).
                g.mate = Some(match words.get(i) {
                    None | Some(&"infinite") => MateTime::Infinite,
                    Some(v) => MateTime::Millis(
                        v.parse::<i64>()
                            .map(|x| x.max(0) as u64)
                            .map_err(|_| format!("go mate: '{v}' is not a number or 'infinite'"))?,
                    ),
                });
                i += 1;
            }
            _ => return Err(format!("go: unknown parameter '{w}'")),
        }
    }
    Ok(g)
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
        assert!(
            parse("fly away")
                .unwrap_err()
                .contains("unknown command 'fly'")
        );
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
        assert!(parse("setoption").is_err());
        assert!(parse("setoption name").is_err());
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
        assert!(parse("position").is_err());
        assert!(parse("position sfen").is_err());
        assert!(parse("position startpos 7g7f").is_err());
        assert!(parse("position sfen a b c d e f moves").is_err());
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
        assert!(
            parse("go mate soon")
                .unwrap_err()
                .contains("not a number or 'infinite'")
        );
        assert!(parse("go btime").unwrap_err().contains("needs a number"));
        assert!(parse("go nodes many").unwrap_err().contains("not a number"));
        assert!(
            parse("go sideways")
                .unwrap_err()
                .contains("unknown parameter")
        );
    }
}
