//! Training data: HCPE, HCPE3 and PackedSfenValue files turned into compact samples, and
//! samples into [`Example`]s (position, legal moves, targets) when a batch needs them.
//!
//! A sample keeps the 32-byte packed position, the teacher's win probability, the game result
//! from the side to move, and its policy target as `(move16, weight)` pairs — about 50 bytes,
//! so ten million positions fit in half a gigabyte. Positions are decoded (and their legal
//! moves generated) by the worker threads, batch by batch.
//!
//! | format | position | teacher | result | policy target |
//! |---|---|---|---|---|
//! | HCPE | `hcp` | `σ(eval / 600)` | `gameResult` (0 draw, 1 Black, 2 White won) | `bestMove16` (none if 0) |
//! | PackedSfenValue | `sfen` | `σ(score / 600)` | `game_result` (1 won, −1 lost, 0 draw) | `move` (none if 0) |
//! | HCPE3 | every position of a game in which a move was searched | `σ(eval / 756.0864962951762)` | the game's winner | visit counts of the candidates |
//!
//! 600 is SPEC §5's centipawn scale (the scale `manaka label` stores teacher scores in);
//! 756.0864962951762 is dlshogi's, which HCPE3 evals use (`data::hcpe3::EVAL_SCALE`). Either
//! can be overridden (`--eval-scale`). HCPE3 moves without candidates (no search: a book or
//! forced move) are skipped, as dlshogi's trainer skips them.

use super::error::TrainError;
use super::loss::{Example, sigmoid};
use crate::data::hcpe3::{EVAL_SCALE, read_hcpe3};
use crate::data::packed::{self, Packing};
use crate::data::records::{GameResult, HcpeRecord, PsvRecord, read_records};
use crate::shogi::{Color, Move, Position};
use std::path::{Path, PathBuf};

/// The file formats the trainer reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DataFormat {
    /// cshogi's HCPE (38-byte records).
    Hcpe,
    /// dlshogi's HCPE3 games.
    Hcpe3,
    /// YaneuraOu's PackedSfenValue (40-byte records).
    Psv,
}

impl DataFormat {
    pub const ALL: [DataFormat; 3] = [DataFormat::Hcpe, DataFormat::Hcpe3, DataFormat::Psv];

    /// By extension: `.hcpe`, `.hcpe3`, `.psv` / `.bin` (YaneuraOu's usual name).
    pub fn from_path(path: &Path) -> Option<DataFormat> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "hcpe" => Some(DataFormat::Hcpe),
            "hcpe3" => Some(DataFormat::Hcpe3),
            "psv" | "bin" => Some(DataFormat::Psv),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            DataFormat::Hcpe => "hcpe",
            DataFormat::Hcpe3 => "hcpe3",
            DataFormat::Psv => "psv",
        }
    }

    /// The eval scale of the format's scores: the teacher's win probability is
    /// `σ(eval / scale)`.
    pub fn eval_scale(self) -> f64 {
        match self {
            DataFormat::Hcpe | DataFormat::Psv => 600.0,
            DataFormat::Hcpe3 => EVAL_SCALE,
        }
    }
}

/// One position to learn from, compactly.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Sample {
    packed: [u8; 32],
    packing: Packing,
    /// Teacher's win probability for the side to move.
    teacher: f32,
    /// Game result for the side to move: 1 win, 0.5 draw, 0 loss.
    result: f32,
    /// The policy target: `policy[at..at + len]`.
    policy_at: u32,
    policy_len: u16,
}

/// Where a run of samples came from, for error messages.
#[derive(Clone, Debug)]
struct Source {
    path: PathBuf,
    first: usize,
}

/// Samples from any number of files.
#[derive(Clone, Debug, Default)]
pub struct Dataset {
    samples: Vec<Sample>,
    /// `(cshogi move16, weight)`.
    policy: Vec<(u16, f32)>,
    sources: Vec<Source>,
}

fn result_for(result: GameResult, side: Color) -> f32 {
    match result.winner() {
        None => 0.5,
        Some(c) if c == side => 1.0,
        Some(_) => 0.0,
    }
}

impl Dataset {
    pub fn new() -> Dataset {
        Dataset::default()
    }

    pub fn len(&self) -> usize {
        self.samples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// Reads `path` (format by extension unless given) and appends its samples; returns how
    /// many. `eval_scale` overrides the format's score scale. Every record is checked (the
    /// position decodes, the move is legal); the error names the file, the record and why.
    pub fn load(
        &mut self,
        path: &Path,
        format: Option<DataFormat>,
        eval_scale: Option<f64>,
    ) -> Result<usize, TrainError> {
        let format = match format.or_else(|| DataFormat::from_path(path)) {
            Some(f) => f,
            None => {
                return Err(TrainError::Config(format!(
                    "{}: cannot tell the data format from the extension; name it .hcpe, .hcpe3, .psv or .bin, or pass --format",
                    path.display()
                )));
            }
        };
        let scale = eval_scale.unwrap_or(format.eval_scale());
        if !(scale.is_finite() && scale > 0.0) {
            return Err(TrainError::Config(format!(
                "eval scale {scale} must be a positive number"
            )));
        }
        let before = self.samples.len();
        self.sources.push(Source {
            path: path.to_path_buf(),
            first: before,
        });
        let teacher = |eval: i16| sigmoid(f64::from(eval) / scale) as f32;
        match format {
            DataFormat::Hcpe => {
                for r in read_records::<HcpeRecord>(path)? {
                    // read_records checked the position, the move and the result byte.
                    // read_records checked every field. The side to move is the packing's first
                    // bit (docs/data.md): no need to decode the position again here.
                    let pos_side = if r.hcp[0] & 1 == 0 {
                        Color::Black
                    } else {
                        Color::White
                    };
                    let result = GameResult::from_u8(r.game_result).unwrap_or(GameResult::Draw);
                    let mv = r.best_move().map(|m| m.to_u16());
                    self.push_raw(
                        r.hcp,
                        Packing::Hcp,
                        teacher(r.eval),
                        result_for(result, pos_side),
                        mv.map(|m| (m, 1.0)).as_slice(),
                    )?;
                }
            }
            DataFormat::Psv => {
                for r in read_records::<PsvRecord>(path)? {
                    let result = match r.game_result {
                        1 => 1.0,
                        -1 => 0.0,
                        _ => 0.5,
                    };
                    let mv = r.best_move().map(|m| m.to_u16());
                    self.push_raw(
                        r.sfen,
                        Packing::PackedSfen,
                        teacher(r.score),
                        result,
                        mv.map(|m| (m, 1.0)).as_slice(),
                    )?;
                }
            }
            DataFormat::Hcpe3 => {
                for (gi, game) in read_hcpe3(path)?.iter().enumerate() {
                    let at = |i: usize, e: &dyn std::fmt::Display| {
                        bad(path, &format!("game {gi} move {i}: {e}"))
                    };
                    let mut pos = game.start_position().map_err(|e| at(0, &e))?;
                    for (i, m) in game.moves.iter().enumerate() {
                        if !m.candidates.is_empty() {
                            let hcp = packed::encode(Packing::Hcp, &pos).map_err(|e| at(i, &e))?;
                            let cands: Vec<(u16, f32)> = m
                                .candidates
                                .iter()
                                .map(|c| (c.move16, f32::from(c.visits)))
                                .collect();
                            let result = result_for(game.outcome.result, pos.side_to_move());
                            self.push_raw(hcp, Packing::Hcp, teacher(m.eval), result, &cands)?;
                        }
                        // read_hcpe3 replayed the game, so every move is legal.
                        let mv = Move::from_u16(m.move16).ok_or_else(|| at(i, &"not a move16"))?;
                        pos.do_move(mv);
                    }
                }
            }
        }
        Ok(self.samples.len() - before)
    }

    /// As [`Dataset::load`], for records whose game-result field means nothing — positions
    /// labelled from SFEN lines, such as `manaka positions --children-of` writes, carry a
    /// "draw" that was never played. Their result is set to the teacher's win probability,
    /// so the value target `λ·teacher + (1 − λ)·result` is the teacher's for every λ and a
    /// `--lambda 0.7` run does not pull them towards ½ (docs/training.md).
    pub fn load_teacher_only(
        &mut self,
        path: &Path,
        format: Option<DataFormat>,
        eval_scale: Option<f64>,
    ) -> Result<usize, TrainError> {
        let before = self.samples.len();
        let n = self.load(path, format, eval_scale)?;
        for s in &mut self.samples[before..] {
            s.result = s.teacher;
        }
        Ok(n)
    }

    fn push_raw(
        &mut self,
        packed: [u8; 32],
        packing: Packing,
        teacher: f32,
        result: f32,
        policy: &[(u16, f32)],
    ) -> Result<(), TrainError> {
        let len = policy.len().min(usize::from(u16::MAX));
        let policy_at = u32::try_from(self.policy.len()).map_err(|_| {
            TrainError::Config(
                "more than 2^32 policy moves in the training data; train on fewer files at a time"
                    .into(),
            )
        })?;
        self.samples.push(Sample {
            packed,
            packing,
            teacher,
            result,
            policy_at,
            policy_len: len as u16,
        });
        self.policy.extend_from_slice(&policy[..len]);
        Ok(())
    }

    /// Appends a position directly (tests, synthetic data): the teacher's win probability,
    /// the game result for the side to move (1, 0.5, 0), and policy weights of legal moves.
    pub fn push(
        &mut self,
        position: &Position,
        teacher: f64,
        result: f64,
        policy: &[(Move, f64)],
    ) -> Result<(), TrainError> {
        let hcp = packed::encode(Packing::Hcp, position)
            .map_err(|e| TrainError::BadSample(format!("{}: {e}", position.to_sfen())))?;
        if self.sources.is_empty() {
            self.sources.push(Source {
                path: PathBuf::from("(in memory)"),
                first: 0,
            });
        }
        let policy: Vec<(u16, f32)> = policy
            .iter()
            .map(|&(m, w)| (m.to_u16(), w as f32))
            .collect();
        self.push_raw(hcp, Packing::Hcp, teacher as f32, result as f32, &policy)?;
        Ok(())
    }

    /// Appends every sample of `other`.
    pub fn extend(&mut self, other: &Dataset) {
        let (s0, p0) = (self.samples.len(), self.policy.len() as u32);
        for src in &other.sources {
            self.sources.push(Source {
                path: src.path.clone(),
                first: src.first + s0,
            });
        }
        self.samples.extend(other.samples.iter().map(|s| Sample {
            policy_at: s.policy_at + p0,
            ..*s
        }));
        self.policy.extend_from_slice(&other.policy);
    }

    /// Sample `i` as an example, with value target `λ·teacher + (1 − λ)·result`.
    pub fn example(&self, i: usize, lambda: f64) -> Result<Example, TrainError> {
        self.example_mirrored(i, lambda, false)
    }

    /// Sample `i` as [`Dataset::example`] gives it, reflected left to right when `mirror`
    /// ([`Position::mirrored`]; the policy target's moves with it, the value target as it
    /// is): the trainer's `--mirror`.
    pub fn example_mirrored(
        &self,
        i: usize,
        lambda: f64,
        mirror: bool,
    ) -> Result<Example, TrainError> {
        let s = self
            .samples
            .get(i)
            .ok_or_else(|| TrainError::BadSample(format!("no sample {i}")))?;
        let named = |e: &dyn std::fmt::Display| {
            let src = self.sources.iter().rev().find(|x| x.first <= i);
            let file = src.map_or("?".into(), |x| x.path.display().to_string());
            TrainError::BadSample(format!(
                "{file}: sample {}: {e}",
                i - src.map_or(0, |x| x.first)
            ))
        };
        let mut pos = packed::decode(s.packing, &s.packed, 1).map_err(|e| named(&e))?;
        if mirror {
            pos = pos.mirrored();
        }
        let policy: Vec<(Move, f64)> = self.policy
            [s.policy_at as usize..s.policy_at as usize + usize::from(s.policy_len)]
            .iter()
            .map(|&(m, w)| {
                Move::from_u16(m)
                    .map(|m| (if mirror { m.mirror() } else { m }, f64::from(w)))
                    .ok_or_else(|| named(&format!("{m:#06x} is not a move16")))
            })
            .collect::<Result<_, _>>()?;
        let value = lambda * f64::from(s.teacher) + (1.0 - lambda) * f64::from(s.result);
        Example::new(pos, value, &policy).map_err(|e| named(&e))
    }

    /// A 64-bit digest of every sample, so a resumed run can tell whether its data changed.
    pub fn fingerprint(&self) -> u64 {
        let mut h = xxhash_rust::xxh64::Xxh64::new(0);
        for s in &self.samples {
            h.update(&s.packed);
            h.update(&s.teacher.to_le_bytes());
            h.update(&s.result.to_le_bytes());
            h.update(&s.policy_len.to_le_bytes());
        }
        h.update(&(self.samples.len() as u64).to_le_bytes());
        h.digest()
    }
}

fn bad(path: &Path, reason: &str) -> TrainError {
    TrainError::BadSample(format!("{}: {reason}", path.display()))
}
