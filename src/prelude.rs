//! What a crate that declares its own engine needs, in one `use`:
//!
//! ```
//! use manaka::prelude::*;
//!
//! manaka_net!(Net = "pair0_d8_o1_h8");
//! # fn main() -> Result<(), manaka::app::Error> {
//! let app = Net::app().random_weights(1);
//! let result = app.search(&Position::startpos(), &SearchLimits::simulations(16))?;
//! assert!(Position::startpos().is_legal(result.best_move.unwrap()));
//! # Ok(()) }
//! ```
//!
//! The macro ([`manaka_net!`]), the program API ([`App`], [`app()`], [`CompiledNetwork`]),
//! the network trait ([`Network`]: `new_state`, `update`, `evaluate`) and the evaluator
//! boundary the search sees ([`Evaluator`], [`Leaf`], [`Evaluation`]), the rules
//! ([`Position`], [`Move`], [`Color`]), the search ([`GumbelSearch`], [`SearchConfig`],
//! [`SearchLimits`], [`SearchResult`]), weight files ([`WeightFile`]) and shapes
//! ([`Shape`]).

pub use crate::manaka_net;
pub use manaka_runtime::app::{App, CompiledNetwork, app};
pub use manaka_runtime::eval::{Evaluation, Evaluator, EvaluatorFactory, Leaf, MaterialEvaluator};
pub use manaka_runtime::network::{Network, NetworkEvaluator, NetworkFactory};
pub use manaka_runtime::search::{GumbelSearch, SearchConfig, SearchLimits, SearchResult};
pub use manaka_runtime::shogi::{Color, Move, MoveEffect, Position};
pub use manaka_runtime::weights::{TensorSource, WeightFile};
pub use manaka_shapes::Shape;
