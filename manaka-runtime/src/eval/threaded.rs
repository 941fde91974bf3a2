//! Several evaluators of one network working on the parts of one batch at once.
//!
//! The search walks its tree on one thread (tree work is small next to network evaluation)
//! and hands the evaluator a batch of leaves; this wrapper splits that batch into contiguous
//! chunks and evaluates them on scoped threads, one evaluator each. With one worker, or a
//! batch of one leaf, it is exactly its single evaluator. The USI `Threads` option sets the
//! worker count; `BatchSize` has to be at least as large for the workers to have work.
//!
//! Which worker gets a leaf depends on the batch, and each worker has its own caches, so the
//! answers are the same for any thread count only because an evaluator's answer for a leaf
//! does not depend on what it evaluated before (for the compiled engines:
//! `network::NetworkEvaluator`, whose cached accumulators are a function of the leaf's
//! history; tested there with two workers).

use super::{Evaluation, Evaluator, EvaluatorFactory, Leaf};

pub struct ThreadedEvaluator {
    workers: Vec<Box<dyn Evaluator>>,
    /// One output buffer per worker, kept between calls.
    parts: Vec<Vec<Evaluation>>,
}

impl ThreadedEvaluator {
    /// `threads` evaluators from `factory` (at least one).
    pub fn new(factory: &dyn EvaluatorFactory, threads: usize) -> ThreadedEvaluator {
        let workers = (0..threads.max(1)).map(|_| factory.create()).collect();
        ThreadedEvaluator::from_workers(workers)
    }

    /// Wraps evaluators that already exist (at least one).
    ///
    /// # Panics
    /// If `workers` is empty (a programming error, not user input).
    pub fn from_workers(workers: Vec<Box<dyn Evaluator>>) -> ThreadedEvaluator {
        assert!(
            !workers.is_empty(),
            "ThreadedEvaluator needs at least one evaluator"
        );
        let parts = workers.iter().map(|_| Vec::new()).collect();
        ThreadedEvaluator { workers, parts }
    }

    pub fn threads(&self) -> usize {
        self.workers.len()
    }
}

impl Evaluator for ThreadedEvaluator {
    fn name(&self) -> String {
        let inner = self.workers[0].name();
        if self.workers.len() == 1 {
            inner
        } else {
            format!("{inner} x{} threads", self.workers.len())
        }
    }

    fn evaluate(&mut self, batch: &[Leaf<'_>], out: &mut Vec<Evaluation>) {
        let n = self.workers.len().min(batch.len());
        if n <= 1 {
            self.workers[0].evaluate(batch, out);
            return;
        }
        let chunk = batch.len().div_ceil(n);
        std::thread::scope(|scope| {
            let mut jobs = self
                .workers
                .iter_mut()
                .zip(self.parts.iter_mut())
                .zip(batch.chunks(chunk));
            // The calling thread takes the first chunk itself.
            let first = jobs.next();
            for ((worker, part), leaves) in jobs {
                scope.spawn(move || worker.evaluate(leaves, part));
            }
            if let Some(((worker, part), leaves)) = first {
                worker.evaluate(leaves, part);
            }
        });
        out.clear();
        for part in self.parts.iter_mut().take(batch.len().div_ceil(chunk)) {
            out.append(part);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::MaterialEvaluator;
    use crate::shogi::Position;

    #[test]
    fn split_batches_answer_in_order() {
        let positions: Vec<Position> = [
            "startpos",
            "4k4/9/9/9/9/9/9/9/4K4 b R 1",
            "4k4/9/9/9/9/9/9/9/4K4 w 2P 1",
        ]
        .iter()
        .map(|s| Position::from_sfen(s).unwrap())
        .collect();
        let moves: Vec<_> = positions.iter().map(|p| p.legal_moves()).collect();
        let leaves: Vec<Leaf<'_>> = positions
            .iter()
            .zip(&moves)
            .map(|(p, m)| Leaf {
                position: p,
                moves: m,
            })
            .collect();
        let mut single = MaterialEvaluator;
        let mut expected = Vec::new();
        single.evaluate(&leaves, &mut expected);
        for threads in 1..=4 {
            let mut t = ThreadedEvaluator::new(MaterialEvaluator::factory().as_ref(), threads);
            let mut out = Vec::new();
            t.evaluate(&leaves, &mut out);
            assert_eq!(out, expected, "threads = {threads}");
            // Reuse keeps working (buffers are drained, not accumulated).
            t.evaluate(&leaves[..2], &mut out);
            assert_eq!(out, expected[..2], "threads = {threads}, second call");
        }
    }
}
