//! Fixed-size training records: cshogi's HCPE (`HuffmanCodedPosAndEval`, 38 bytes) and
//! YaneuraOu's `PackedSfenValue` (40 bytes), with the two 16-bit move layouts they use.
//!
//! HCPE, little-endian (cshogi `position.hpp`; numpy dtype `cshogi.HuffmanCodedPosAndEval`):
//!
//! ```text
//! 0   hcp         32 bytes   HuffmanCodedPos (packed.rs)
//! 32  eval        i16        score from the side to move's point of view
//! 34  bestMove16  u16        cshogi move16 (0 = none)
//! 36  gameResult  u8         0 draw, 1 Black won, 2 White won (Apery's GameResult)
//! 37  dummy       u8         padding, 0
//! ```
//!
//! PackedSfenValue, little-endian (YaneuraOu `learn.h`; `cshogi.PackedSfenValue`):
//!
//! ```text
//! 0   sfen        32 bytes   PackedSfen (packed.rs)
//! 32  score       i16        score from the side to move's point of view
//! 34  move        u16        YaneuraOu Move16 (0 = none)
//! 36  gamePly     u16        move number of the position
//! 38  game_result i8         1 the side to move won the game, -1 lost, 0 draw/unknown
//! 39  padding     u8         0
//! ```

use super::io::{AtomicFile, DataError, FormatError, open_regular};
use super::packed::{self, DecodeError, EncodeError, Packing};
use crate::shogi::{Color, HandKind, Move, Position, Square};
use std::io::Read;
use std::path::Path;

/// Game result as Apery, cshogi and dlshogi store it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum GameResult {
    Draw = 0,
    BlackWin = 1,
    WhiteWin = 2,
}

impl GameResult {
    pub fn from_u8(v: u8) -> Option<GameResult> {
        match v {
            0 => Some(GameResult::Draw),
            1 => Some(GameResult::BlackWin),
            2 => Some(GameResult::WhiteWin),
            _ => None,
        }
    }

    /// The result in which `color` wins.
    pub fn win_for(color: Color) -> GameResult {
        match color {
            Color::Black => GameResult::BlackWin,
            Color::White => GameResult::WhiteWin,
        }
    }

    pub fn winner(self) -> Option<Color> {
        match self {
            GameResult::Draw => None,
            GameResult::BlackWin => Some(Color::Black),
            GameResult::WhiteWin => Some(Color::White),
        }
    }
}

/// cshogi's `move16` (the HCPE and HCPE3 layout) for a move: `to | from << 7 | promote <<
/// 14`, a drop's `from` being 81 + its piece type in Apery's order P L N S B R G. This is
/// [`Move`]'s own encoding (checked against cshogi by the oracle tests).
pub fn move_to_cshogi16(m: Move) -> u16 {
    m.to_u16()
}

/// The move a cshogi `move16` stands for; `None` for 0 or a malformed value (legality is
/// the caller's business).
pub fn move_from_cshogi16(v: u16) -> Option<Move> {
    Move::from_u16(v)
}

/// YaneuraOu's piece type numbers (PAWN 1 … ROOK 6, GOLD 7), indexed by [`HandKind`].
const YO_DROP_TYPE: [u16; 7] = [1, 2, 3, 4, 7, 5, 6];
const YO_DROP: u16 = 1 << 14;
const YO_PROMOTE: u16 = 1 << 15;

/// YaneuraOu's `Move16` for a move (`types.h`): bits 0–6 destination, 7–13 origin or, for
/// a drop, the piece type (P 1 L 2 N 3 S 4 B 5 R 6 G 7), bit 14 drop, bit 15 promotion.
pub fn move_to_psv16(m: Move) -> u16 {
    let to = m.to().index() as u16;
    match (m.from(), m.drop_kind()) {
        (Some(from), _) => {
            to | (from.index() as u16) << 7 | if m.is_promotion() { YO_PROMOTE } else { 0 }
        }
        (None, Some(k)) => to | YO_DROP_TYPE[k.index()] << 7 | YO_DROP,
        (None, None) => 0,
    }
}

/// The move a YaneuraOu `Move16` stands for; `None` for 0 or a malformed value.
pub fn move_from_psv16(v: u16) -> Option<Move> {
    let to = Square::new((v & 0x7f) as u8)?;
    let field = (v >> 7) & 0x7f;
    if v & YO_DROP != 0 {
        if v & YO_PROMOTE != 0 {
            return None;
        }
        let k = YO_DROP_TYPE.iter().position(|&t| t == field)?;
        Some(Move::drop(HandKind::ALL[k], to))
    } else {
        let from = Square::new(field as u8)?;
        if from == to {
            return None;
        }
        Some(Move::normal(from, to, v & YO_PROMOTE != 0))
    }
}

/// A fixed-size record type with a file format.
pub trait Record: Sized + Clone {
    /// Bytes per record.
    const SIZE: usize;
    /// The format's name in messages (`HCPE`, `PSV`).
    const FORMAT: &'static str;
    /// Splits one record's bytes into fields; `bytes.len() == SIZE`.
    fn from_bytes(bytes: &[u8]) -> Self;
    /// Appends the record's bytes.
    fn write_bytes(&self, out: &mut Vec<u8>);
    /// Checks that the fields make sense: the position decodes, the move is legal there (or
    /// 0), the result is in range. The error text names the field.
    fn validate(&self) -> Result<(), String>;
}

/// One HCPE record (cshogi's `HuffmanCodedPosAndEval`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HcpeRecord {
    pub hcp: [u8; 32],
    pub eval: i16,
    pub best_move16: u16,
    pub game_result: u8,
    pub dummy: u8,
}

impl HcpeRecord {
    /// A record for `position` with `eval` from its side to move, its best move (or none)
    /// and the game's result.
    pub fn new(
        position: &Position,
        eval: i16,
        best_move: Option<Move>,
        result: GameResult,
    ) -> Result<HcpeRecord, EncodeError> {
        Ok(HcpeRecord {
            hcp: packed::encode(Packing::Hcp, position)?,
            eval,
            best_move16: best_move.map_or(0, move_to_cshogi16),
            game_result: result as u8,
            dummy: 0,
        })
    }

    /// The stored position (move number 1: HCP stores none).
    pub fn position(&self) -> Result<Position, DecodeError> {
        packed::decode(Packing::Hcp, &self.hcp, 1)
    }

    pub fn best_move(&self) -> Option<Move> {
        move_from_cshogi16(self.best_move16)
    }
}

fn check_move(pos: &Position, raw: u16, decoded: Option<Move>, field: &str) -> Result<(), String> {
    if raw == 0 {
        return Ok(());
    }
    match decoded {
        Some(m) if pos.is_legal(m) => Ok(()),
        Some(m) => Err(format!(
            "{field} {raw:#06x} ({m}) is not legal in {}",
            pos.to_sfen()
        )),
        None => Err(format!("{field} {raw:#06x} is not a move")),
    }
}

impl Record for HcpeRecord {
    const SIZE: usize = 38;
    const FORMAT: &'static str = "HCPE";

    fn from_bytes(b: &[u8]) -> HcpeRecord {
        let mut hcp = [0u8; 32];
        hcp.copy_from_slice(&b[..32]);
        HcpeRecord {
            hcp,
            eval: i16::from_le_bytes([b[32], b[33]]),
            best_move16: u16::from_le_bytes([b[34], b[35]]),
            game_result: b[36],
            dummy: b[37],
        }
    }

    fn write_bytes(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.hcp);
        out.extend_from_slice(&self.eval.to_le_bytes());
        out.extend_from_slice(&self.best_move16.to_le_bytes());
        out.push(self.game_result);
        out.push(self.dummy);
    }

    fn validate(&self) -> Result<(), String> {
        let pos = self.position().map_err(|e| format!("hcp (byte 0): {e}"))?;
        check_move(
            &pos,
            self.best_move16,
            self.best_move(),
            "bestMove16 (byte 34)",
        )?;
        if GameResult::from_u8(self.game_result).is_none() {
            return Err(format!(
                "gameResult (byte 36) is {}; expected 0, 1 or 2",
                self.game_result
            ));
        }
        Ok(())
    }
}

/// One YaneuraOu `PackedSfenValue` record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PsvRecord {
    pub sfen: [u8; 32],
    pub score: i16,
    /// YaneuraOu `Move16` ([`move_to_psv16`]).
    pub move16: u16,
    pub game_ply: u16,
    pub game_result: i8,
    pub padding: u8,
}

impl PsvRecord {
    /// A record for `position` (its move number becomes `gamePly`), `score` from its side to
    /// move, its best move (or none) and the game result from its side to move (1, 0, −1).
    pub fn new(
        position: &Position,
        score: i16,
        best_move: Option<Move>,
        game_result: i8,
    ) -> Result<PsvRecord, EncodeError> {
        Ok(PsvRecord {
            sfen: packed::encode(Packing::PackedSfen, position)?,
            score,
            move16: best_move.map_or(0, move_to_psv16),
            game_ply: position.ply().min(u32::from(u16::MAX)) as u16,
            game_result,
            padding: 0,
        })
    }

    /// The stored position, with `gamePly` as its move number.
    pub fn position(&self) -> Result<Position, DecodeError> {
        packed::decode(Packing::PackedSfen, &self.sfen, u32::from(self.game_ply))
    }

    pub fn best_move(&self) -> Option<Move> {
        move_from_psv16(self.move16)
    }
}

impl Record for PsvRecord {
    const SIZE: usize = 40;
    const FORMAT: &'static str = "PackedSfenValue";

    fn from_bytes(b: &[u8]) -> PsvRecord {
        let mut sfen = [0u8; 32];
        sfen.copy_from_slice(&b[..32]);
        PsvRecord {
            sfen,
            score: i16::from_le_bytes([b[32], b[33]]),
            move16: u16::from_le_bytes([b[34], b[35]]),
            game_ply: u16::from_le_bytes([b[36], b[37]]),
            game_result: b[38] as i8,
            padding: b[39],
        }
    }

    fn write_bytes(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.sfen);
        out.extend_from_slice(&self.score.to_le_bytes());
        out.extend_from_slice(&self.move16.to_le_bytes());
        out.extend_from_slice(&self.game_ply.to_le_bytes());
        out.push(self.game_result as u8);
        out.push(self.padding);
    }

    fn validate(&self) -> Result<(), String> {
        let pos = self.position().map_err(|e| format!("sfen (byte 0): {e}"))?;
        check_move(&pos, self.move16, self.best_move(), "move (byte 34)")?;
        if !(-1..=1).contains(&self.game_result) {
            return Err(format!(
                "game_result (byte 38) is {}; expected -1, 0 or 1",
                self.game_result
            ));
        }
        Ok(())
    }
}

/// Parses and validates records from bytes; the error names the first bad record and its
/// byte offset.
pub fn parse_records<T: Record>(bytes: &[u8]) -> Result<Vec<T>, FormatError> {
    let mut out = Vec::with_capacity(bytes.len() / T::SIZE);
    parse_records_into(bytes, 0, &mut out)?;
    Ok(out)
}

/// Parses the records in `bytes`, the first of which is record `first` of its file, onto
/// `out`.
fn parse_records_into<T: Record>(
    bytes: &[u8],
    first: u64,
    out: &mut Vec<T>,
) -> Result<(), FormatError> {
    for (k, chunk) in bytes.chunks(T::SIZE).enumerate() {
        let i = first + k as u64;
        let offset = i * T::SIZE as u64;
        let bad = |reason: String| FormatError {
            what: "record",
            index: i as u64,
            offset,
            reason,
        };
        if chunk.len() < T::SIZE {
            return Err(bad(format!(
                "truncated: the input ends {} bytes into this {}-byte {} record",
                chunk.len(),
                T::SIZE,
                T::FORMAT
            )));
        }
        let r = T::from_bytes(chunk);
        r.validate().map_err(bad)?;
        out.push(r);
    }
    Ok(())
}

/// Records read from a file per refill of [`read_records`]'s buffer.
const RECORDS_PER_READ: usize = 1 << 14;

/// Reads and validates a file of records (a regular file; [`super::io::open_regular`]).
/// The file is streamed through a buffer of a few hundred kilobytes, never read whole, and
/// no further than the length it had when opened.
pub fn read_records<T: Record>(path: impl AsRef<Path>) -> Result<Vec<T>, DataError> {
    let path = path.as_ref();
    let (file, len) = open_regular(path).map_err(|e| DataError::io(path, e))?;
    let mut input = file.take(len);
    let mut out = Vec::new();
    let mut buf = vec![0u8; RECORDS_PER_READ * T::SIZE];
    let mut first = 0u64;
    loop {
        // Fill the buffer, or as much of it as the file has left.
        let mut filled = 0;
        while filled < buf.len() {
            match input.read(&mut buf[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(DataError::io(path, e)),
            }
        }
        if filled == 0 {
            return Ok(out);
        }
        parse_records_into(&buf[..filled], first, &mut out).map_err(|source| {
            DataError::Format {
                path: path.to_path_buf(),
                source,
            }
        })?;
        first += (filled / T::SIZE) as u64;
        if filled < buf.len() {
            return Ok(out);
        }
    }
}

/// Writes records to `path` atomically.
pub fn write_records<T: Record>(path: impl AsRef<Path>, records: &[T]) -> Result<(), DataError> {
    let mut bytes = Vec::with_capacity(records.len() * T::SIZE);
    for r in records {
        r.write_bytes(&mut bytes);
    }
    let mut f = AtomicFile::create(path)?;
    f.write_all(&bytes)?;
    f.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn psv_move16_matches_yaneuraou_layout() {
        // Hand-derived from YaneuraOu's types.h: 7g7f = 59 | 60 << 7; G*5e = 40 | 7 << 7 |
        // 1 << 14 = 17320 (cshogi's move16_to_psv gives the same); 8h2b+ = 10 | 70 << 7 |
        // 1 << 15.
        let m = |s| Move::parse_usi_syntax(s).unwrap();
        assert_eq!(move_to_psv16(m("7g7f")), 59 | 60 << 7);
        assert_eq!(move_to_psv16(m("G*5e")), 17320);
        assert_eq!(move_to_psv16(m("B*5e")), 40 | 5 << 7 | 1 << 14);
        assert_eq!(move_to_psv16(m("8h2b+")), 10 | 70 << 7 | 1 << 15);
        for s in ["7g7f", "G*5e", "P*1b", "R*9i", "8h2b+", "1a1b"] {
            assert_eq!(move_from_psv16(move_to_psv16(m(s))), Some(m(s)), "{s}");
        }
        for bad in [
            0u16,
            40 | 8 << 7 | 1 << 14,
            40 | 1 << 7 | 3 << 14,
            81,
            5 | 5 << 7,
        ] {
            assert_eq!(move_from_psv16(bad), None, "{bad:#x}");
        }
    }

    #[test]
    fn records_round_trip_and_refuse_bad_bytes() {
        let pos = Position::from_sfen("startpos").unwrap();
        let best = pos.parse_usi_move("2g2f").unwrap();
        let r = HcpeRecord::new(&pos, -123, Some(best), GameResult::WhiteWin).unwrap();
        let mut bytes = Vec::new();
        r.write_bytes(&mut bytes);
        assert_eq!(bytes.len(), 38);
        assert_eq!(&bytes[32..], &[0x85, 0xff, 0x8e, 0x07, 2, 0]);
        let back: Vec<HcpeRecord> = parse_records(&bytes).unwrap();
        assert_eq!(back, vec![r]);
        assert_eq!(back[0].position().unwrap().to_sfen(), pos.to_sfen());
        assert_eq!(back[0].best_move(), Some(best));

        // Second record truncated: named with its offset.
        let mut two = bytes.clone();
        two.extend_from_slice(&bytes[..10]);
        let e = parse_records::<HcpeRecord>(&two).unwrap_err();
        assert_eq!((e.index, e.offset), (1, 38));
        // An illegal best move.
        let mut bad = bytes.clone();
        bad[34..36].copy_from_slice(
            &Move::parse_usi_syntax("2g2e")
                .unwrap()
                .to_u16()
                .to_le_bytes(),
        );
        let e = parse_records::<HcpeRecord>(&bad).unwrap_err();
        assert!(e.reason.contains("not legal"), "{e}");
        bad = bytes.clone();
        bad[36] = 3;
        assert!(
            parse_records::<HcpeRecord>(&bad)
                .unwrap_err()
                .reason
                .contains("gameResult")
        );

        let p = PsvRecord::new(&pos, 77, Some(best), -1).unwrap();
        let mut pb = Vec::new();
        p.write_bytes(&mut pb);
        assert_eq!(pb.len(), 40);
        assert_eq!(&pb[32..], &[77, 0, 0x8e, 0x07, 1, 0, 0xff, 0]);
        let back: Vec<PsvRecord> = parse_records(&pb).unwrap();
        assert_eq!(back[0].position().unwrap().to_sfen(), pos.to_sfen());
    }
}
