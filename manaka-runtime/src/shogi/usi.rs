//! USI move text in the context of a position.

use super::moves::Move;
use super::position::Position;
use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MoveError {
    #[error("'{0}' is not a USI move (expected e.g. 7g7f, 8h2b+ or P*5e)")]
    Syntax(String),
    #[error("{mv} is not a legal move in {sfen}")]
    Illegal { mv: String, sfen: String },
}

impl Position {
    /// Parses a USI move and checks that it is legal here.
    pub fn parse_usi_move(&self, text: &str) -> Result<Move, MoveError> {
        let m = Move::parse_usi_syntax(text).ok_or_else(|| MoveError::Syntax(text.to_string()))?;
        if self.is_legal(m) {
            Ok(m)
        } else {
            Err(MoveError::Illegal {
                mv: text.to_string(),
                sfen: self.to_sfen(),
            })
        }
    }

    /// Parses and plays a sequence of USI moves, stopping at the first bad one; the
    /// position then holds every move before it.
    pub fn play_usi_moves<'a>(
        &mut self,
        moves: impl IntoIterator<Item = &'a str>,
    ) -> Result<(), MoveError> {
        for text in moves {
            let m = self.parse_usi_move(text)?;
            self.do_move(m);
        }
        Ok(())
    }
}
