//! The lab page's JSON API (docs/lab.md): the inspector's view of one position.
//!
//! - `GET /api/network`: the loaded network (shape, backend, parameter count).
//! - `POST /api/inspect` `{"sfen", "moves"}`: the position after the moves, its legal moves,
//!   `manaka eval`'s value, win probability, cp and policy, and the reference evaluator's
//!   tokens, last-move delta, accumulator blocks and hidden layers.
//! - `POST /api/search` `{"sfen", "moves", "simulations"}`: a short Gumbel search.
//!
//! Every refusal is a 4xx with `{"error": "..."}` naming what was wrong.

use super::Reply;
use anyhow::{Context, Result, bail};
use manaka_runtime::inspect::{self, Token};
use manaka_runtime::loader::{self, Backend, LoadedNetwork, Weights};
use manaka_runtime::nnue;
use manaka_runtime::reference::ReferenceNet;
use manaka_runtime::search::{GumbelSearch, SearchLimits};
use manaka_runtime::shogi::{Color, HandKind, Move, Position, Square};
use manaka_runtime::usi::options::EngineOptions;
use manaka_runtime::weights::{TensorSource, WeightFile};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;

/// The most simulations one search request may ask for (the page waits for the answer).
pub const MAX_SIMULATIONS: u64 = 4096;

/// The loaded network, shared by every request: as the loader gives it to `manaka eval`
/// (value, policy, search), and its weights for the reference evaluator (the inspection).
pub struct Lab {
    network: LoadedNetwork,
    weights: Arc<dyn TensorSource + Send + Sync>,
    reference: ReferenceNet,
    source: String,
}

fn color_name(c: Color) -> &'static str {
    match c {
        Color::Black => "b",
        Color::White => "w",
    }
}

fn tokens_json(tokens: &[Token]) -> Value {
    tokens
        .iter()
        .map(|t| json!({ "id": t.id, "meaning": t.meaning }))
        .collect()
}

impl Lab {
    /// Loads `--weights` (an MNW1 file or a YaneuraOu nn.bin; the embedded default without
    /// it) the way `manaka eval` does, with the same loader and backend.
    pub fn load(path: Option<&Path>) -> Result<Lab> {
        let network = crate::engines::loader()
            .load(&Weights::from_path(path), Backend::Auto)
            .map_err(anyhow::Error::from)?;
        let (weights, source): (Arc<dyn TensorSource + Send + Sync>, String) = match path {
            None => (loader::default_weights()?, "embedded default".to_string()),
            Some(p) if network.shape.is_none() => {
                bail!(
                    "--weights {}: the material evaluator has no network to inspect; give an MNW1 file or an nn.bin",
                    p.display()
                )
            }
            Some(p) if loader::is_nn_bin(p) => (
                Arc::new(
                    nnue::import(p)
                        .with_context(|| format!("cannot load --weights {}", p.display()))?
                        .weights,
                ),
                p.display().to_string(),
            ),
            Some(p) => (
                Arc::new(
                    WeightFile::open(p)
                        .with_context(|| format!("cannot load --weights {}", p.display()))?,
                ),
                p.display().to_string(),
            ),
        };
        let reference = ReferenceNet::new(weights.clone())?;
        Ok(Lab {
            network,
            weights,
            reference,
            source,
        })
    }

    pub fn description(&self) -> String {
        format!("{} ({})", self.weights.shape(), self.source)
    }

    pub fn network(&self) -> Value {
        let shape = self.weights.shape();
        json!({
            "shape": shape.to_string(),
            "source": self.source,
            "parameters": shape.param_count(),
            "tokens": shape.token_count(),
            "features": format!("{:?}", shape.features).to_lowercase(),
            "evaluator": self.network.factory.name(),
        })
    }

    pub fn inspect(&self, body: &Value) -> Reply {
        let (start, moves) = match position_request(body) {
            Ok(p) => p,
            Err(e) => return Reply::error(400, e),
        };
        let eval = self.evaluation(&start, &moves);
        let (pos, ins) = inspect::inspect(&self.reference, &start, &moves);
        let perspectives: Vec<Value> = ins
            .perspectives
            .iter()
            .map(|p| {
                json!({
                    "color": color_name(p.color),
                    "tokens": tokens_json(&p.tokens),
                    "power_sums": p.power_sums.iter().map(|(n, v)| json!({"name": n, "values": v})).collect::<Vec<_>>(),
                    "blocks": p.blocks.iter().map(|b| json!({
                        "name": b.name, "raw": b.raw, "rms": b.rms, "input": b.input,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        let last_move = ins.last_move.as_ref().map(|(m, deltas)| {
            json!({
                "usi": m.to_usi(),
                "deltas": deltas.iter().map(|d| json!({
                    "color": color_name(d.color),
                    "removed": tokens_json(&d.removed),
                    "added": tokens_json(&d.added),
                    "refresh": d.refresh,
                })).collect::<Vec<_>>(),
            })
        });
        Reply::json(
            200,
            &json!({
                "position": position_json(&pos),
                "eval": eval,
                "perspectives": perspectives,
                "last_move": last_move,
                "hidden": ins.hidden,
                "reference_value_logit": ins.value_logit,
            }),
        )
    }

    /// Value, win probability, cp and policy: [`loader::evaluate_line`], the function
    /// `manaka eval` prints, so the numbers are its numbers.
    fn evaluation(&self, start: &Position, moves: &[Move]) -> Value {
        let line = loader::evaluate_line(&self.network, start, moves);
        let policy: Vec<Value> = line
            .policy
            .iter()
            .map(|m| json!({ "usi": m.usi, "label": m.label, "logit": m.logit, "prob": m.prob }))
            .collect();
        json!({
            "evaluator": line.evaluator,
            "value_logit": line.value_logit,
            "win_prob": line.win_prob,
            "cp": line.cp,
            "policy": policy,
        })
    }

    pub fn search(&self, body: &Value) -> Reply {
        let (start, moves) = match position_request(body) {
            Ok(p) => p,
            Err(e) => return Reply::error(400, e),
        };
        let simulations = match body.get("simulations") {
            None => 64,
            Some(v) => match v.as_u64() {
                Some(n) if (1..=MAX_SIMULATIONS).contains(&n) => n,
                _ => {
                    return Reply::error(
                        400,
                        format!(
                            "\"simulations\" must be an integer 1..={MAX_SIMULATIONS}, not {v}"
                        ),
                    );
                }
            },
        };
        let mut pos = start;
        for &m in &moves {
            pos.do_move(m);
        }
        let mut evaluator = self.network.factory.create();
        // The engine's own settings at its defaults, as `manaka go` (docs/search.md).
        let mut search = GumbelSearch::new(EngineOptions::default().search_config());
        let r = search.run(
            &pos,
            evaluator.as_mut(),
            &SearchLimits::simulations(simulations as u32),
        );
        let moves: Vec<Value> = r
            .ranked_moves()
            .into_iter()
            .take(16)
            .map(|m| {
                json!({
                    "usi": m.mv.to_usi(),
                    "visits": m.visits,
                    "prior": m.prior,
                    "improved_policy": m.improved_policy,
                    "q": m.q,
                })
            })
            .collect();
        Reply::json(
            200,
            &json!({
                "bestmove": r.best_move.map(|m| m.to_usi()),
                "pv": r.pv.iter().map(|m| m.to_usi()).collect::<Vec<_>>(),
                "root_value": r.root_value,
                "score_cp": r.score_cp(),
                "simulations": r.stats.simulations,
                "evaluator": evaluator.name(),
                "moves": moves,
            }),
        )
    }
}

/// `{"sfen": "...", "moves": ["7g7f", ...]}` → the start position and the checked moves.
fn position_request(body: &Value) -> std::result::Result<(Position, Vec<Move>), String> {
    let Some(obj) = body.as_object() else {
        return Err("the body must be a JSON object {\"sfen\": ..., \"moves\": [...]}".into());
    };
    let sfen = match obj.get("sfen") {
        None => "startpos",
        Some(Value::String(s)) => s.as_str(),
        Some(v) => return Err(format!("\"sfen\" must be a string, not {v}")),
    };
    let start = Position::from_sfen(sfen).map_err(|e| format!("bad sfen '{sfen}': {e}"))?;
    let texts: &[Value] = match obj.get("moves") {
        None => &[],
        Some(Value::Array(a)) => a,
        Some(v) => {
            return Err(format!(
                "\"moves\" must be an array of USI strings, not {v}"
            ));
        }
    };
    let mut replay = start.clone();
    let mut moves = Vec::with_capacity(texts.len());
    for (i, v) in texts.iter().enumerate() {
        let Some(text) = v.as_str() else {
            return Err(format!("move {} must be a USI string, not {v}", i + 1));
        };
        let m = replay
            .parse_usi_move(text)
            .map_err(|e| format!("move {} '{text}': {e}", i + 1))?;
        replay.do_move(m);
        moves.push(m);
    }
    Ok((start, moves))
}

/// The board (81 squares in SPEC §1 order, SFEN piece letters), hands and legal moves.
fn position_json(pos: &Position) -> Value {
    let board: Vec<String> = Square::all()
        .map(|sq| pos.piece_at(sq).map(|p| p.sfen()).unwrap_or_default())
        .collect();
    let hand = |c: Color| {
        let h = pos.hand(c);
        HandKind::ALL
            .iter()
            .map(|&k| (k.letter().to_string(), json!(h.count(k))))
            .collect::<serde_json::Map<_, _>>()
    };
    json!({
        "sfen": pos.to_sfen(),
        "side": color_name(pos.side_to_move()),
        "board": board,
        "hands": { "b": hand(Color::Black), "w": hand(Color::White) },
        "legal": pos.legal_moves().iter().map(|m| m.to_usi()).collect::<Vec<_>>(),
        "in_check": pos.in_check(),
        "last_move": pos.last_move().map(|m| m.to_usi()),
    })
}
