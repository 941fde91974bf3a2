//! Positions to label, from any of the files this module writes or reads: SFEN lines (as
//! `manaka positions` writes them), HCPE3 games, HCPE or PackedSfenValue records.

use super::hcpe3::parse_hcpe3;
use super::io::{DataError, FormatError, excerpt, read_all, shorten_echoes};
use super::records::{GameResult, HcpeRecord, PsvRecord, parse_records};
use crate::shogi::{Color, Position};
use std::path::Path;

/// A position and what its file says about the game it came from.
#[derive(Clone, Debug)]
pub struct SourcePosition {
    pub position: Position,
    /// The result of the game the position was played in, where the file records one
    /// (HCPE3 games, HCPE records); `None` for SFEN lines.
    pub result: Option<GameResult>,
}

/// The kinds of position file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceFormat {
    /// One position per line: an SFEN, `startpos`, `sfen …`, or `position …`, optionally
    /// followed by `moves …`; blank lines and lines starting with `#` are skipped.
    Sfen,
    /// Every position in which a move was played, from dlshogi HCPE3 games.
    Hcpe3,
    /// The position of every HCPE record.
    Hcpe,
    /// The position of every PackedSfenValue record.
    Psv,
}

impl SourceFormat {
    /// By file extension: `.hcpe3`, `.hcpe`, `.psv`/`.bin` (YaneuraOu's usual name), else SFEN
    /// text.
    pub fn from_path(path: &Path) -> SourceFormat {
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("hcpe3") => SourceFormat::Hcpe3,
            Some("hcpe") => SourceFormat::Hcpe,
            Some("psv" | "bin") => SourceFormat::Psv,
            _ => SourceFormat::Sfen,
        }
    }
}

/// Parses SFEN lines; errors name the line (1-based) and its byte offset.
pub fn parse_sfen_lines(text: &str) -> Result<Vec<Position>, FormatError> {
    let mut out = Vec::new();
    let mut offset = 0u64;
    for (i, raw) in text.split_inclusive('\n').enumerate() {
        let line = raw.trim();
        let at = offset;
        offset += raw.len() as u64;
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |reason: String| FormatError {
            what: "line",
            index: i as u64 + 1,
            offset: at,
            reason,
        };
        let line = line.strip_prefix("position ").unwrap_or(line).trim();
        let (sfen, moves) = match line.split_once(" moves") {
            Some((s, m)) if m.is_empty() || m.starts_with(' ') => (s, m),
            _ => (line, ""),
        };
        let mut pos = Position::from_sfen(sfen)
            .map_err(|e| bad(shorten_echoes(&format!("'{}': {e}", excerpt(sfen)))))?;
        pos.play_usi_moves(moves.split_whitespace())
            .map_err(|e| bad(shorten_echoes(&e.to_string())))?;
        // Labelling sees the position alone, as a fresh start.
        out.push(Position::from_sfen(&pos.to_sfen()).map_err(|e| bad(e.to_string()))?);
    }
    Ok(out)
}

/// Reads the positions of a file of `format`.
pub fn read_positions(
    path: impl AsRef<Path>,
    format: SourceFormat,
) -> Result<Vec<SourcePosition>, DataError> {
    let path = path.as_ref();
    let bytes = read_all(path)?;
    let fmt = |source| DataError::Format {
        path: path.to_path_buf(),
        source,
    };
    let decode = |e: String| DataError::Format {
        path: path.to_path_buf(),
        source: FormatError {
            what: "record",
            index: 0,
            offset: 0,
            reason: e,
        },
    };
    Ok(match format {
        SourceFormat::Sfen => {
            let text = std::str::from_utf8(&bytes).map_err(|e| {
                fmt(FormatError {
                    what: "byte",
                    index: e.valid_up_to() as u64,
                    offset: e.valid_up_to() as u64,
                    reason: "not UTF-8 text (an SFEN file was expected; give --positions-format for binary files)".into(),
                })
            })?;
            parse_sfen_lines(text)
                .map_err(fmt)?
                .into_iter()
                .map(|position| SourcePosition {
                    position,
                    result: None,
                })
                .collect()
        }
        SourceFormat::Hcpe3 => {
            let mut out = Vec::new();
            for g in parse_hcpe3(&bytes).map_err(fmt)? {
                let mut pos = g.start_position().map_err(|e| decode(e.to_string()))?;
                for m in &g.moves {
                    out.push(SourcePosition {
                        position: Position::from_sfen(&pos.to_sfen())
                            .map_err(|e| decode(e.to_string()))?,
                        result: Some(g.outcome.result),
                    });
                    // parse_hcpe3 replayed the game: every move is legal.
                    match super::records::move_from_cshogi16(m.move16) {
                        Some(mv) => {
                            pos.do_move(mv);
                        }
                        None => break,
                    }
                }
            }
            out
        }
        SourceFormat::Hcpe => parse_records::<HcpeRecord>(&bytes)
            .map_err(fmt)?
            .iter()
            .map(|r| {
                let position = r.position().map_err(|e| decode(e.to_string()))?;
                Ok(SourcePosition {
                    position,
                    result: GameResult::from_u8(r.game_result),
                })
            })
            .collect::<Result<_, DataError>>()?,
        SourceFormat::Psv => parse_records::<PsvRecord>(&bytes)
            .map_err(fmt)?
            .iter()
            .map(|r| {
                let position = r.position().map_err(|e| decode(e.to_string()))?;
                let stm = position.side_to_move();
                let result = match r.game_result {
                    1 => Some(GameResult::win_for(stm)),
                    -1 => Some(GameResult::win_for(stm.flip())),
                    _ => None,
                };
                Ok(SourcePosition { position, result })
            })
            .collect::<Result<_, DataError>>()?,
    })
}

/// A game result from the side to move's point of view, as PackedSfenValue stores it: 1 won,
/// −1 lost, 0 draw or unknown.
pub fn result_for_side(result: Option<GameResult>, side: Color) -> i8 {
    match result.and_then(GameResult::winner) {
        Some(w) if w == side => 1,
        Some(_) => -1,
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sfen_lines_in_every_spelling() {
        let text = "# comment\n\nstartpos\nposition startpos moves 7g7f 3c3d\nsfen lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1\n8k/9/8P/9/9/9/9/9/K8 b G\n";
        let p = parse_sfen_lines(text).unwrap();
        assert_eq!(p.len(), 4);
        assert_eq!(
            p[1].to_sfen(),
            "lnsgkgsnl/1r5b1/pppppp1pp/6p2/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL b - 3"
        );
        assert_eq!(p[2].side_to_move(), Color::White);
        let e = parse_sfen_lines("startpos\nstartpos moves 7g7f 7g7f\n").unwrap_err();
        assert_eq!((e.what, e.index, e.offset), ("line", 2, 9));
        assert!(e.to_string().contains("7g7f is not a legal move"), "{e}");
        assert!(
            parse_sfen_lines("bogus\n")
                .unwrap_err()
                .to_string()
                .starts_with("line 1 at byte 0")
        );
    }

    #[test]
    fn psv_side_relative_results() {
        assert_eq!(result_for_side(Some(GameResult::BlackWin), Color::Black), 1);
        assert_eq!(
            result_for_side(Some(GameResult::BlackWin), Color::White),
            -1
        );
        assert_eq!(result_for_side(Some(GameResult::Draw), Color::White), 0);
        assert_eq!(result_for_side(None, Color::White), 0);
    }
}
