//! Many games, one network call: a batch server that gathers the leaves of every game in
//! flight and evaluates them together (as lc0's multiplexing backend gathers the
//! computations of its search threads).
//!
//! Each game runs its own Gumbel search on its own thread, with a [`GameEvaluator`] as its
//! evaluator. The sequential search asks for one leaf per simulation; the game evaluator
//! sends it to the server and waits. The server waits until every registered game is
//! waiting (a game between two searches is never long away), then evaluates all of their
//! leaves in one call of the real evaluator and answers each game. So every network call
//! carries one simulation of every game in flight, and the searches themselves are exactly
//! the sequential search: batching changes which leaves share a call, never a result — as
//! long as the evaluator's answer for a leaf depends on nothing but that leaf (not on the
//! rest of the call, on which of its threads got it, or on what it evaluated before), as
//! every evaluator of this crate's does (`network::NetworkEvaluator` explains how its
//! accumulator cache keeps to that).

use crate::eval::{Evaluation, Evaluator, Leaf};
use crate::shogi::{Move, Position};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};

/// Owned copies of one game's leaves (position, legal moves).
type Leaves = Vec<(Position, Vec<Move>)>;

enum Message {
    /// A game thread starts sending requests.
    Join,
    /// A game thread will send no more requests.
    Leave,
    /// Leaves to evaluate for one game, and where to send the answer.
    Evaluate {
        leaves: Leaves,
        reply: Sender<Vec<Evaluation>>,
    },
}

/// Counters the server keeps (shared, read by the progress report).
#[derive(Debug, Default)]
pub struct BatchStats {
    /// Calls of the real evaluator.
    pub calls: AtomicU64,
    /// Leaves evaluated.
    pub leaves: AtomicU64,
}

/// The server's handle: make game evaluators from it, then [`BatchServer::run`] it on its
/// own thread until every game evaluator is gone.
pub struct BatchServer {
    tx: Sender<Message>,
    rx: Receiver<Message>,
    stats: Arc<BatchStats>,
    failed: Arc<AtomicBool>,
}

impl BatchServer {
    pub fn new() -> BatchServer {
        BatchServer::with_stats(Arc::new(BatchStats::default()))
    }

    /// A server counting into `stats`.
    pub fn with_stats(stats: Arc<BatchStats>) -> BatchServer {
        let (tx, rx) = mpsc::channel();
        BatchServer {
            tx,
            rx,
            stats,
            failed: Arc::new(AtomicBool::new(false)),
        }
    }

    pub fn stats(&self) -> Arc<BatchStats> {
        Arc::clone(&self.stats)
    }

    /// A connection for one game thread. It counts as waiting-for-or-sending work from now
    /// until it is dropped.
    pub fn connect(&self) -> GameEvaluator {
        // The server is alive until every connection and the server handle are gone, so a
        // send can only fail after the server stopped: then answers are defaults and
        // `failed()` says so.
        let _ = self.tx.send(Message::Join);
        let (reply_tx, reply_rx) = mpsc::channel();
        GameEvaluator {
            tx: self.tx.clone(),
            reply_tx,
            reply_rx,
            failed: Arc::clone(&self.failed),
        }
    }

    /// Serves until every connection has been dropped. Call after making the connections
    /// the first batch must wait for (or the server may answer a smaller first batch).
    pub fn run(self, evaluator: &mut dyn Evaluator) {
        let BatchServer {
            tx,
            rx,
            stats,
            failed,
        } = self;
        drop(tx); // only the connections keep the channel open now
        let mut live = 0usize;
        let mut pending: Vec<(Leaves, Sender<Vec<Evaluation>>)> = Vec::new();
        let mut out = Vec::new();
        loop {
            let message = match rx.recv() {
                Ok(m) => m,
                Err(_) => break, // every connection is gone
            };
            match message {
                Message::Join => live += 1,
                Message::Leave => live = live.saturating_sub(1),
                Message::Evaluate { leaves, reply } => pending.push((leaves, reply)),
            }
            if pending.is_empty() || pending.len() < live {
                continue;
            }
            // Every live game is waiting: one call for all of their leaves.
            let leaves: Vec<Leaf<'_>> = pending
                .iter()
                .flat_map(|(l, _)| l.iter().map(|(position, moves)| Leaf { position, moves }))
                .collect();
            evaluator.evaluate(&leaves, &mut out);
            stats.calls.fetch_add(1, Ordering::Relaxed);
            stats
                .leaves
                .fetch_add(leaves.len() as u64, Ordering::Relaxed);
            drop(leaves);
            let mut answers = out.drain(..);
            for (l, reply) in pending.drain(..) {
                let mine: Vec<Evaluation> = (0..l.len())
                    .map(|_| answers.next().unwrap_or_default())
                    .collect();
                if reply.send(mine).is_err() {
                    failed.store(true, Ordering::Relaxed);
                }
            }
        }
    }
}

impl Default for BatchServer {
    fn default() -> Self {
        BatchServer::new()
    }
}

/// One game thread's evaluator: forwards its leaves to the [`BatchServer`] and waits.
pub struct GameEvaluator {
    tx: Sender<Message>,
    reply_tx: Sender<Vec<Evaluation>>,
    reply_rx: Receiver<Vec<Evaluation>>,
    failed: Arc<AtomicBool>,
}

impl GameEvaluator {
    /// Whether an answer was lost (the server stopped): the search that got default
    /// answers must be thrown away.
    pub fn failed(&self) -> bool {
        self.failed.load(Ordering::Relaxed)
    }

    /// The flag behind [`GameEvaluator::failed`], to poll while the evaluator is lent out.
    pub fn failure_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.failed)
    }
}

impl Evaluator for GameEvaluator {
    fn name(&self) -> String {
        "batched across games".to_string()
    }

    fn evaluate(&mut self, batch: &[Leaf<'_>], out: &mut Vec<Evaluation>) {
        out.clear();
        let leaves = batch
            .iter()
            .map(|l| (l.position.clone(), l.moves.to_vec()))
            .collect();
        let sent = self.tx.send(Message::Evaluate {
            leaves,
            reply: self.reply_tx.clone(),
        });
        match sent.ok().and_then(|_| self.reply_rx.recv().ok()) {
            Some(answers) if answers.len() == batch.len() => *out = answers,
            _ => {
                self.failed.store(true, Ordering::Relaxed);
                out.resize(batch.len(), Evaluation::default());
            }
        }
    }
}

impl Drop for GameEvaluator {
    fn drop(&mut self) {
        let _ = self.tx.send(Message::Leave);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::MaterialEvaluator;
    use std::sync::Mutex;

    /// Counts calls and records batch sizes.
    struct Recording {
        sizes: Arc<Mutex<Vec<usize>>>,
    }

    impl Evaluator for Recording {
        fn name(&self) -> String {
            "recording".into()
        }
        fn evaluate(&mut self, batch: &[Leaf<'_>], out: &mut Vec<Evaluation>) {
            self.sizes.lock().unwrap().push(batch.len());
            MaterialEvaluator.evaluate(batch, out);
        }
    }

    #[test]
    fn every_call_carries_one_leaf_of_every_waiting_game() {
        let server = BatchServer::new();
        let games = 6;
        let rounds = 20;
        let conns: Vec<GameEvaluator> = (0..games).map(|_| server.connect()).collect();
        let sizes = Arc::new(Mutex::new(Vec::new()));
        let mut rec = Recording {
            sizes: Arc::clone(&sizes),
        };
        std::thread::scope(|s| {
            s.spawn(move || server.run(&mut rec));
            for mut c in conns {
                s.spawn(move || {
                    let pos = Position::startpos();
                    let moves = pos.legal_moves();
                    let mut direct = Vec::new();
                    MaterialEvaluator.evaluate(
                        &[Leaf {
                            position: &pos,
                            moves: &moves,
                        }],
                        &mut direct,
                    );
                    for _ in 0..rounds {
                        let e = c.evaluate_one(&pos, &moves);
                        assert_eq!(e, direct[0]);
                    }
                    assert!(!c.failed());
                });
            }
        });
        let sizes = sizes.lock().unwrap();
        assert_eq!(sizes.iter().sum::<usize>(), games * rounds);
        assert_eq!(
            sizes.len(),
            rounds,
            "each call must hold every game's leaf: {sizes:?}"
        );
    }
}
