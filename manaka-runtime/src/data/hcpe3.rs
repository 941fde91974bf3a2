//! dlshogi's HCPE3 game records: whole games with the search's candidate moves, so a
//! trainer can learn the improved policy and not just the move played.
//!
//! Layout, little-endian, games back to back (dlshogi `cppshogi/cppshogi.h`:
//! `HuffmanCodedPosAndEval3`, `MoveInfo`, `MoveVisits`):
//!
//! ```text
//! per game   hcp        32 bytes  start position (HuffmanCodedPos)
//!            moveNum    u16       number of moves that follow
//!            result     u8        bits 0–1 winner (0 draw, 1 Black, 2 White),
//!                                 bit 2 sennichite, bit 3 nyugyoku (entering-king
//!                                 declaration), bit 4 maximum game length reached
//!            opponent   u8        0 self-play, 1/2 a USI opponent played one side
//! per move   move16     u16       the move played (cshogi move16)
//!            eval       i16       score of the position before the move, from its side to
//!                                 move: round(756.0864962951762 · logit(p)) for win
//!                                 probability p
//!            candNum    u16       number of candidates that follow (0: no search, e.g. a
//!                                 forced or book move)
//! per cand.  move16     u16
//!            visitNum   u16       the trainer's policy target is visitNum / Σ visitNum
//! ```

use super::io::{AtomicFile, DataError, FormatError, read_all};
use super::packed::{self, DecodeError, EncodeError, Packing};
use super::records::{GameResult, move_from_cshogi16, move_to_cshogi16};
use crate::shogi::{Move, Position};
use std::path::Path;

/// dlshogi's score scale: a win probability p is stored as `756.0864962951762 · ln(p/(1−p))`
/// (its `score_to_value` is the inverse sigmoid with this scale).
pub const EVAL_SCALE: f64 = 756.0864962951762;

/// The largest |eval| we write; keeps scores of won and lost positions finite and inside
/// the range USI engines use for non-mate scores.
pub const EVAL_LIMIT: i16 = 30000;

/// `round(−ln(1/p − 1) × 756.0864962951762)`, clamped to ±[`EVAL_LIMIT`] (p = 0 and 1
/// included).
pub fn eval_from_win_probability(p: f64) -> i16 {
    let v = (-(1.0 / p - 1.0).ln() * EVAL_SCALE).round();
    if v.is_nan() {
        return 0;
    }
    v.clamp(-f64::from(EVAL_LIMIT), f64::from(EVAL_LIMIT)) as i16
}

/// The eval for a search value v ∈ [−1, 1] (SPEC §8: v = tanh(ℓ/2), so the win probability
/// is (1 + v) / 2).
pub fn eval_from_value(v: f64) -> i16 {
    eval_from_win_probability((1.0 + v) * 0.5)
}

/// The result byte of a game header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GameOutcome {
    pub result: GameResult,
    /// Ended by repetition (a draw, or a perpetual-check loss).
    pub sennichite: bool,
    /// Ended by an entering-king declaration.
    pub nyugyoku: bool,
    /// Ended by reaching the maximum game length (a draw).
    pub max_moves: bool,
}

impl GameOutcome {
    pub fn to_byte(self) -> u8 {
        self.result as u8
            | u8::from(self.sennichite) << 2
            | u8::from(self.nyugyoku) << 3
            | u8::from(self.max_moves) << 4
    }

    pub fn from_byte(b: u8) -> Option<GameOutcome> {
        if b & 0xe0 != 0 {
            return None;
        }
        Some(GameOutcome {
            result: GameResult::from_u8(b & 3)?,
            sennichite: b & 4 != 0,
            nyugyoku: b & 8 != 0,
            max_moves: b & 16 != 0,
        })
    }
}

/// A searched candidate and its visit count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub move16: u16,
    pub visits: u16,
}

/// One move of a game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hcpe3Move {
    pub move16: u16,
    pub eval: i16,
    pub candidates: Vec<Candidate>,
}

impl Hcpe3Move {
    /// A move with its candidates (`(move, visits)`).
    pub fn new(mv: Move, eval: i16, candidates: &[(Move, u16)]) -> Hcpe3Move {
        Hcpe3Move {
            move16: move_to_cshogi16(mv),
            eval,
            candidates: candidates
                .iter()
                .map(|&(m, visits)| Candidate {
                    move16: move_to_cshogi16(m),
                    visits,
                })
                .collect(),
        }
    }
}

/// One game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hcpe3Game {
    pub start: [u8; 32],
    pub outcome: GameOutcome,
    pub opponent: u8,
    pub moves: Vec<Hcpe3Move>,
}

impl Hcpe3Game {
    pub fn new(start: &Position, outcome: GameOutcome) -> Result<Hcpe3Game, EncodeError> {
        Ok(Hcpe3Game {
            start: packed::encode(Packing::Hcp, start)?,
            outcome,
            opponent: 0,
            moves: Vec::new(),
        })
    }

    /// The start position.
    pub fn start_position(&self) -> Result<Position, DecodeError> {
        packed::decode(Packing::Hcp, &self.start, 1)
    }

    /// Bytes of this game in the file.
    pub fn encoded_len(&self) -> usize {
        36 + self
            .moves
            .iter()
            .map(|m| 6 + 4 * m.candidates.len())
            .sum::<usize>()
    }

    /// Appends the game's bytes. Fails (writing nothing) if a count does not fit in u16.
    pub fn write_bytes(&self, out: &mut Vec<u8>) -> Result<(), WriteError> {
        let n = u16::try_from(self.moves.len())
            .map_err(|_| WriteError::TooManyMoves(self.moves.len()))?;
        if let Some(m) = self
            .moves
            .iter()
            .find(|m| m.candidates.len() > usize::from(u16::MAX))
        {
            return Err(WriteError::TooManyCandidates(m.candidates.len()));
        }
        out.reserve(self.encoded_len());
        out.extend_from_slice(&self.start);
        out.extend_from_slice(&n.to_le_bytes());
        out.push(self.outcome.to_byte());
        out.push(self.opponent);
        for m in &self.moves {
            out.extend_from_slice(&m.move16.to_le_bytes());
            out.extend_from_slice(&m.eval.to_le_bytes());
            out.extend_from_slice(&(m.candidates.len() as u16).to_le_bytes());
            for c in &m.candidates {
                out.extend_from_slice(&c.move16.to_le_bytes());
                out.extend_from_slice(&c.visits.to_le_bytes());
            }
        }
        Ok(())
    }

    /// Plays the game from its start position, checking every move and candidate for
    /// legality; returns the final position (with the game as its history, so repetition
    /// can be judged). The error names the move (0-based) and what is wrong.
    pub fn replay(&self) -> Result<Position, ReplayError> {
        let mut pos = self.start_position().map_err(ReplayError::Start)?;
        for (i, m) in self.moves.iter().enumerate() {
            let mv =
                legal(&pos, m.move16).map_err(|reason| ReplayError::Move { index: i, reason })?;
            let mut seen = Vec::with_capacity(m.candidates.len());
            for (j, c) in m.candidates.iter().enumerate() {
                let at = |problem| ReplayError::Candidate {
                    index: i,
                    mv,
                    candidate: j,
                    problem,
                };
                legal(&pos, c.move16).map_err(|e| at(CandidateProblem::Move(e)))?;
                if seen.contains(&c.move16) {
                    return Err(at(CandidateProblem::Repeated));
                }
                seen.push(c.move16);
            }
            pos.do_move(mv);
        }
        Ok(pos)
    }
}

/// Why a game cannot be written as HCPE3.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WriteError {
    #[error("{0} moves do not fit HCPE3's u16 move count")]
    TooManyMoves(usize),
    #[error("{0} candidates do not fit a u16 count")]
    TooManyCandidates(usize),
}

/// Why a stored game does not replay ([`Hcpe3Game::replay`]); moves are numbered from 0.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    #[error("start position: {0}")]
    Start(DecodeError),
    #[error("move {index}: {reason}")]
    Move { index: usize, reason: MoveError },
    #[error("move {index} ({mv}), candidate {candidate}: {problem}")]
    Candidate {
        index: usize,
        /// The move played there.
        mv: Move,
        candidate: usize,
        problem: CandidateProblem,
    },
}

/// What is wrong with a candidate of a stored move.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CandidateProblem {
    #[error("{0}")]
    Move(MoveError),
    #[error("listed twice")]
    Repeated,
}

/// Why a stored move16 is not a move of its position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    #[error("{mv} ({raw:#06x}) is not legal in {sfen}")]
    Illegal { mv: Move, raw: u16, sfen: String },
    #[error("{raw:#06x} is not a move16")]
    NotAMove16 { raw: u16 },
}

/// Callers that gather messages as text (test helpers) can `?` a replay.
impl From<ReplayError> for String {
    fn from(e: ReplayError) -> String {
        e.to_string()
    }
}

fn legal(pos: &Position, raw: u16) -> Result<Move, MoveError> {
    match move_from_cshogi16(raw) {
        Some(m) if pos.is_legal(m) => Ok(m),
        Some(mv) => Err(MoveError::Illegal {
            mv,
            raw,
            sfen: pos.to_sfen(),
        }),
        None => Err(MoveError::NotAMove16 { raw }),
    }
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

/// Parses games from bytes, replaying each to check its moves; the error names the game,
/// the byte offset and the problem.
pub fn parse_hcpe3(bytes: &[u8]) -> Result<Vec<Hcpe3Game>, FormatError> {
    let mut games = Vec::new();
    let mut at = 0usize;
    while at < bytes.len() {
        let index = games.len() as u64;
        let start = at;
        let bad = |offset: usize, reason: String| FormatError {
            what: "game",
            index,
            offset: offset as u64,
            reason,
        };
        let need = |at: usize, n: usize, what: &str| -> Result<(), FormatError> {
            if bytes.len() - at < n {
                Err(bad(
                    at,
                    format!(
                        "truncated: {what} needs {n} bytes at byte {at}, the input has {} left \
                         (game starts at byte {start})",
                        bytes.len() - at
                    ),
                ))
            } else {
                Ok(())
            }
        };
        need(at, 36, "the 36-byte game header")?;
        let mut hcp = [0u8; 32];
        hcp.copy_from_slice(&bytes[at..at + 32]);
        let move_count = usize::from(u16_at(bytes, at + 32));
        let result_byte = bytes[at + 34];
        let outcome = GameOutcome::from_byte(result_byte).ok_or_else(|| {
            bad(at + 34, format!("result byte {result_byte:#04x} is not a result (bits 0-1 must be 0..2, bits 5-7 clear)"))
        })?;
        let opponent = bytes[at + 35];
        at += 36;
        let mut moves = Vec::with_capacity(move_count);
        for i in 0..move_count {
            need(at, 6, &format!("move {i}"))?;
            let move16 = u16_at(bytes, at);
            let eval = u16_at(bytes, at + 2) as i16;
            let n = usize::from(u16_at(bytes, at + 4));
            at += 6;
            need(at, 4 * n, &format!("move {i}'s {n} candidates"))?;
            let candidates = (0..n)
                .map(|j| Candidate {
                    move16: u16_at(bytes, at + 4 * j),
                    visits: u16_at(bytes, at + 4 * j + 2),
                })
                .collect();
            at += 4 * n;
            moves.push(Hcpe3Move {
                move16,
                eval,
                candidates,
            });
        }
        let game = Hcpe3Game {
            start: hcp,
            outcome,
            opponent,
            moves,
        };
        game.replay().map_err(|e| bad(start, e.to_string()))?;
        games.push(game);
    }
    Ok(games)
}

/// Reads and checks an HCPE3 file.
pub fn read_hcpe3(path: impl AsRef<Path>) -> Result<Vec<Hcpe3Game>, DataError> {
    let path = path.as_ref();
    let bytes = read_all(path)?;
    parse_hcpe3(&bytes).map_err(|source| DataError::Format {
        path: path.to_path_buf(),
        source,
    })
}

/// Why a list of games cannot be written: the first game that cannot, and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("game {game}: {reason}")]
pub struct GamesEncodeError {
    /// The game's index in the list.
    pub game: usize,
    pub reason: WriteError,
}

/// The bytes of `games`, back to back.
pub fn encode_hcpe3(games: &[Hcpe3Game]) -> Result<Vec<u8>, GamesEncodeError> {
    let mut out = Vec::with_capacity(games.iter().map(Hcpe3Game::encoded_len).sum());
    for (i, g) in games.iter().enumerate() {
        g.write_bytes(&mut out)
            .map_err(|reason| GamesEncodeError { game: i, reason })?;
    }
    Ok(out)
}

/// Writes `games` to `path` atomically.
pub fn write_hcpe3(path: impl AsRef<Path>, games: &[Hcpe3Game]) -> Result<(), DataError> {
    let path = path.as_ref();
    let bytes = encode_hcpe3(games).map_err(|source| DataError::Encode {
        path: path.to_path_buf(),
        source,
    })?;
    let mut f = AtomicFile::create(path)?;
    f.write_all(&bytes)?;
    f.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte-exact vector of issue 8, produced and read by dlshogi's own code: 7g7f
    /// (eval 50; candidates 7g7f:600, 2g2f:300, 5i4h:100), 3c3d (eval −20; 3c3d:1,
    /// 8c8d:1), 2g2f (no candidates), Black wins.
    const VECTOR: &str = "58a449210cd757217e8e4d212caf427814c2ab109e4d212cd75f213e8e49210c030001003b1e320003003b1e58028e072c0122166400150aecff0200150a0100c22001008e0700000000";

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn vector_game() -> Hcpe3Game {
        let pos = Position::startpos();
        let m = |s: &str| Move::parse_usi_syntax(s).unwrap();
        let outcome = GameOutcome {
            result: GameResult::BlackWin,
            sennichite: false,
            nyugyoku: false,
            max_moves: false,
        };
        let mut g = Hcpe3Game::new(&pos, outcome).unwrap();
        g.moves.push(Hcpe3Move::new(
            m("7g7f"),
            50,
            &[(m("7g7f"), 600), (m("2g2f"), 300), (m("5i4h"), 100)],
        ));
        g.moves.push(Hcpe3Move::new(
            m("3c3d"),
            -20,
            &[(m("3c3d"), 1), (m("8c8d"), 1)],
        ));
        g.moves.push(Hcpe3Move::new(m("2g2f"), 0, &[]));
        g
    }

    #[test]
    fn writer_produces_the_issue_vector_exactly() {
        let bytes = encode_hcpe3(&[vector_game()]).unwrap();
        assert_eq!(bytes.len(), 74);
        assert_eq!(bytes, hex(VECTOR));
    }

    #[test]
    fn reader_reads_the_issue_vector() {
        let games = parse_hcpe3(&hex(VECTOR)).unwrap();
        assert_eq!(games, vec![vector_game()]);
        let g = &games[0];
        assert_eq!(
            g.start_position().unwrap().to_sfen(),
            Position::startpos().to_sfen()
        );
        assert_eq!(g.outcome.result, GameResult::BlackWin);
        assert_eq!(g.moves[0].eval, 50);
        assert_eq!(g.moves[1].eval, -20);
        assert_eq!(
            g.moves[0].candidates[1],
            Candidate {
                move16: 0x078e,
                visits: 300
            }
        );
        let end = g.replay().unwrap();
        assert_eq!(
            end.to_sfen(),
            "lnsgkgsnl/1r5b1/pppppp1pp/6p2/9/2P4P1/PP1PPPP1P/1B5R1/LNSGKGSNL w - 4"
        );
    }

    #[test]
    fn reader_names_game_and_offset_of_bad_input() {
        let one = hex(VECTOR);
        let mut two = one.clone();
        two.extend_from_slice(&one[..50]); // second game cut inside its first move list
        let e = parse_hcpe3(&two).unwrap_err();
        assert_eq!(e.index, 1);
        assert!(e.reason.contains("truncated"), "{e}");
        let mut bad = one.clone();
        bad[34] = 0x23; // bit 5 set
        let e = parse_hcpe3(&bad).unwrap_err();
        assert_eq!((e.index, e.offset), (0, 34));
        let mut illegal = one.clone();
        illegal[36..38].copy_from_slice(&0x0a15u16.to_le_bytes()); // 3c3d for Black
        let e = parse_hcpe3(&illegal).unwrap_err();
        assert!(e.reason.starts_with("move 0"), "{e}");
        let mut game = vector_game();
        game.moves[0].move16 = 0x0a15;
        match game.replay() {
            Err(ReplayError::Move {
                index: 0,
                reason: MoveError::Illegal { raw: 0x0a15, .. },
            }) => {}
            other => panic!("{other:?}"),
        }
        let mut game = vector_game();
        let first = game.moves[0].candidates[0];
        game.moves[0].candidates.push(first);
        let e = game.replay().unwrap_err();
        assert!(
            matches!(
                e,
                ReplayError::Candidate {
                    index: 0,
                    problem: CandidateProblem::Repeated,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().ends_with("listed twice"), "{e}");
        // Every prefix of a valid file is either valid (whole games) or refused, never a
        // panic.
        for n in 0..one.len() {
            let _ = parse_hcpe3(&one[..n]);
        }
    }

    #[test]
    fn eval_conversion_is_dlshogis() {
        assert_eq!(eval_from_win_probability(0.5), 0);
        // p = σ(1): 756.086…
        let p = 1.0 / (1.0 + (-1.0f64).exp());
        assert_eq!(eval_from_win_probability(p), 756);
        assert_eq!(eval_from_win_probability(1.0 - p), -756);
        assert_eq!(eval_from_win_probability(1.0), EVAL_LIMIT);
        assert_eq!(eval_from_win_probability(0.0), -EVAL_LIMIT);
        assert_eq!(eval_from_value(0.0), 0);
        // v = tanh(ℓ/2) ⇒ eval = 756.086 ℓ
        assert_eq!(
            eval_from_value((0.25f64).tanh()),
            (0.5 * EVAL_SCALE).round() as i16
        );
    }
}
