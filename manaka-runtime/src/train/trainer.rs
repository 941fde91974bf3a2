//! The training loop: epochs of shuffled mini-batches, each split across threads (data
//! parallel: every thread runs forward and backward on its share into its own gradients, the
//! gradients are summed in thread order, one optimiser step follows), with progress reports,
//! validation, atomic checkpoints and resumption. Here: the run's settings, the optimiser step
//! ([`Trainer`]), validation losses and the epoch order; [`train`] (in `session.rs`) runs the
//! epochs of one invocation with them.
//!
//! Reproducibility: the order of an epoch is a Fisher–Yates shuffle seeded by the run's seed
//! and the epoch number, and a checkpoint records the position in it, so a run interrupted and
//! resumed gives bit-for-bit the weights of an uninterrupted run with the same `--threads`
//! (the thread count changes how gradients are summed, hence the rounding).

use super::checkpoint;
use super::error::TrainError;
use super::forward::forward;
use super::grads::Grads;
use super::loss::{Example, LossSums, losses};
use super::model::Model;
use super::optim::{Adam, AdamConfig};
use super::real::Real;
pub use super::session::train;
use crate::random::SplitMix64;
use crate::runs::resume::Finished;
use crate::weights::{TensorSource, WeightFile};
use manaka_shapes::Shape;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Everything a run is told (the CLI's flags).
#[derive(Clone, Debug)]
pub struct TrainConfig {
    pub shape: Shape,
    /// The weight file written at every checkpoint and at the end; its state file is
    /// `OUT.state` (`checkpoint::state_path`).
    pub out: PathBuf,
    /// Weights to start from (default: `weights::init` random weights from the seed).
    pub init: Option<PathBuf>,
    /// Continue the run whose checkpoint is `out`.
    pub resume: bool,
    /// Start over even if `out` exists.
    pub force: bool,
    /// Train until this many epochs are complete (counting those of a resumed run).
    pub epochs: u32,
    pub batch: usize,
    /// Adam's learning rate.
    pub lr: f64,
    /// The learning rate is multiplied by this after every epoch.
    pub lr_decay: f64,
    /// Linear warm-up over this many steps from lr/warmup to lr.
    pub warmup: u64,
    pub threads: usize,
    /// Weight of the teacher's win probability in the value target (1 − λ: the game result).
    pub lambda: f64,
    /// Weight of the policy loss beside the value loss.
    pub policy_weight: f64,
    /// Reflect half the training samples left to right each epoch ([`mirrored_in_epoch`]):
    /// shogi's rules are symmetric under the reflection, so this doubles the positions the
    /// network sees. Validation is never mirrored.
    pub mirror: bool,
    pub seed: u64,
    /// Stop after this many optimiser steps in all (checkpointing first).
    pub max_steps: Option<u64>,
    /// Stop after this much time in this invocation (checkpointing first).
    pub time_limit: Option<Duration>,
    pub checkpoint_every: Duration,
    pub report_every: Duration,
    /// Validate on at most this many samples of the validation set (0: all).
    pub val_limit: usize,
    pub adam: AdamConfig,
}

impl TrainConfig {
    /// Defaults for everything but the shape and the output.
    pub fn new(shape: Shape, out: PathBuf) -> TrainConfig {
        TrainConfig {
            shape,
            out,
            init: None,
            resume: false,
            force: false,
            epochs: 1,
            batch: 256,
            lr: 1e-3,
            lr_decay: 1.0,
            warmup: 100,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            lambda: 1.0,
            policy_weight: 1.0,
            mirror: false,
            seed: 1,
            max_steps: None,
            time_limit: None,
            checkpoint_every: Duration::from_secs(600),
            report_every: Duration::from_secs(10),
            val_limit: 0,
            adam: AdamConfig::default(),
        }
    }

    /// Checks the settings and the files they name, before any data is read: numbers in
    /// range, `--out` absent for a new run (unless forced), present with its state file for
    /// `--resume`. `train` checks the same again.
    pub fn preflight(&self) -> Result<(), TrainError> {
        self.check()?;
        let state = checkpoint::state_path(&self.out);
        if self.resume {
            // An interrupted checkpoint may have left the state as `.next` alone.
            let pending = checkpoint::pending_state_path(&self.out);
            for p in [&self.out, &state] {
                if !p.exists() && !(p == &state && pending.exists()) {
                    return Err(TrainError::Checkpoint {
                        path: p.clone(),
                        reason: "missing: --resume needs the weights and the state file of an earlier run; to start from \
                                 weights with a fresh optimiser, use --init"
                            .into(),
                    });
                }
            }
        } else if !self.force {
            for p in [&self.out, &state] {
                if p.exists() {
                    return Err(TrainError::Config(format!(
                        "{} exists; pass --resume to continue that run, or --force to start over",
                        p.display()
                    )));
                }
            }
        }
        Ok(())
    }

    fn check(&self) -> Result<(), TrainError> {
        let bad = |s: String| Err(TrainError::Config(s));
        if self.batch == 0 {
            return bad("--batch must be at least 1".into());
        }
        if self.threads == 0 {
            return bad("--threads must be at least 1".into());
        }
        if !(self.lr.is_finite() && self.lr > 0.0) {
            return bad(format!("--lr {} must be a positive number", self.lr));
        }
        if !(self.lr_decay.is_finite() && self.lr_decay > 0.0) {
            return bad(format!(
                "--lr-decay {} must be a positive number",
                self.lr_decay
            ));
        }
        if !(0.0..=1.0).contains(&self.lambda) {
            return bad(format!("--lambda {} must be in [0, 1]", self.lambda));
        }
        if !(self.policy_weight.is_finite() && self.policy_weight >= 0.0) {
            return bad(format!(
                "--policy-weight {} must be a non-negative number",
                self.policy_weight
            ));
        }
        if self.resume && self.init.is_some() {
            return bad(
                "--resume continues from --out's checkpoint; it cannot also start from --init"
                    .into(),
            );
        }
        Ok(())
    }

    /// The learning rate of step `step` (0-based) in epoch `epoch` (0-based).
    pub fn learning_rate(&self, step: u64, epoch: u32) -> f64 {
        let warm = if self.warmup == 0 {
            1.0
        } else {
            ((step + 1) as f64 / self.warmup as f64).min(1.0)
        };
        self.lr * self.lr_decay.powi(epoch as i32) * warm
    }
}

/// Training progress since the previous report.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// 1-based epoch in progress.
    pub epoch: u32,
    /// Fraction of that epoch done.
    pub epoch_fraction: f64,
    pub step: u64,
    pub samples: u64,
    pub samples_per_sec: f64,
    pub loss: LossSums,
    pub lr: f64,
    pub elapsed: Duration,
}

/// Losses on the validation set.
#[derive(Clone, Debug, PartialEq)]
pub struct Validation {
    pub epoch: u32,
    pub step: u64,
    pub loss: LossSums,
}

/// Why a run stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Every requested epoch is complete.
    Finished,
    /// `--resume` of a run that had already completed every requested epoch: nothing was
    /// trained and nothing written (a larger `epochs` trains further).
    AlreadyFinished,
    StepLimit,
    TimeLimit,
}

/// What the trainer tells its caller as it goes.
#[derive(Debug)]
pub enum Event<'a> {
    Started {
        resumed: bool,
        step: u64,
        epoch: u32,
        params: usize,
        train: usize,
        val: usize,
        threads: usize,
    },
    /// Something worth knowing that needs no action (e.g. the data changed since the
    /// checkpoint).
    Note(String),
    Report(&'a Report),
    Validation(&'a Validation),
    Checkpoint {
        step: u64,
        path: &'a Path,
    },
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub stop: Stop,
    pub steps: u64,
    pub epochs: u32,
    pub samples: u64,
    /// Mean training losses over this invocation.
    pub train: LossSums,
    pub validation: Option<Validation>,
}

impl Summary {
    /// What a resumed run that found every requested epoch done says
    /// ([`Stop::AlreadyFinished`]); `None` for a run that trained.
    pub fn finished(&self, out: &Path) -> Option<Finished> {
        (self.stop == Stop::AlreadyFinished).then(|| Finished {
            out: out.to_path_buf(),
            done: format!(
                "{} epochs, {} steps, {} samples",
                self.epochs, self.steps, self.samples
            ),
            further: format!("give --epochs more than {} to train further", self.epochs),
        })
    }
}

/// A model with its optimiser and per-thread gradient buffers: one call of [`Trainer::step`]
/// is one optimiser update.
pub struct Trainer<R> {
    pub model: Model<R>,
    pub adam: Adam<R>,
    grads: Vec<Grads<R>>,
    pub policy_weight: f64,
}

impl<R: Real> Trainer<R> {
    pub fn new(model: Model<R>, adam: Adam<R>, threads: usize, policy_weight: f64) -> Trainer<R> {
        let grads = (0..threads.max(1)).map(|_| Grads::new(&model)).collect();
        Trainer {
            model,
            adam,
            grads,
            policy_weight,
        }
    }

    /// One update on a batch: `fetch(i)` gives example i (0..n) and runs on the worker
    /// threads; the loss is the batch mean.
    pub fn step<F>(&mut self, n: usize, fetch: F, lr: f64) -> Result<LossSums, TrainError>
    where
        F: Fn(usize) -> Result<Example, TrainError> + Sync,
    {
        let scale = 1.0 / n.max(1) as f64;
        let model = &self.model;
        let pw = self.policy_weight;
        let parts = self.grads.len().min(n.max(1));
        let work =
            |g: &mut Grads<R>, range: std::ops::Range<usize>| -> Result<LossSums, TrainError> {
                g.clear();
                let examples = range.map(&fetch).collect::<Result<Vec<Example>, _>>()?;
                let f = forward(model, &positions(&examples));
                let (sums, dv, dl) = losses(&examples, &f.value, &f.logits, pw, scale);
                super::backward::backward(model, &f, &dv, &dl, g);
                Ok(sums)
            };
        let results = run_parallel(&mut self.grads[..parts], n, &work);
        let mut sums = LossSums::default();
        for r in results {
            sums.add(&r?);
        }
        if !(sums.value.is_finite() && sums.policy.is_finite()) {
            return Err(TrainError::Diverged(format!(
                "the loss became {} (value) / {} (policy) at step {}; lower --lr",
                sums.value,
                sums.policy,
                self.adam.step + 1
            )));
        }
        let threads = self.grads.len();
        self.adam
            .update(&mut self.model, &self.grads[..parts], lr, threads);
        Ok(sums)
    }

    /// Losses of `n` examples without training (validation), on `threads` threads.
    pub fn evaluate<F>(&self, n: usize, fetch: F, threads: usize) -> Result<LossSums, TrainError>
    where
        F: Fn(usize) -> Result<Example, TrainError> + Sync,
    {
        evaluate(&self.model, n, fetch, threads, self.policy_weight)
    }
}

/// The (position, legal moves) pairs `forward` reads.
pub fn positions(examples: &[Example]) -> Vec<(&crate::shogi::Position, &[crate::shogi::Move])> {
    examples
        .iter()
        .map(|e| (&e.position, e.moves.as_slice()))
        .collect()
}

/// Splits `0..n` into `slots.len()` contiguous ranges and runs `work` on each in its own
/// thread (the first on this one), results in range order.
fn run_parallel<S: Send, T: Send>(
    slots: &mut [S],
    n: usize,
    work: &(dyn Fn(&mut S, std::ops::Range<usize>) -> T + Sync),
) -> Vec<T> {
    let parts = slots.len();
    let range = |k: usize| (k * n / parts)..((k + 1) * n / parts);
    if parts == 1 {
        return vec![work(&mut slots[0], 0..n)];
    }
    std::thread::scope(|scope| {
        let (first, rest) = slots.split_at_mut(1);
        let handles: Vec<_> = rest
            .iter_mut()
            .enumerate()
            .map(|(k, slot)| scope.spawn(move || work(slot, range(k + 1))))
            .collect();
        let mut out = vec![work(&mut first[0], range(0))];
        out.extend(
            handles
                .into_iter()
                .map(|h| h.join().expect("a training thread panicked")),
        );
        out
    })
}

/// Losses of `n` examples under `model`, in chunks of 256 spread over `threads` threads.
pub fn evaluate<R: Real, F>(
    model: &Model<R>,
    n: usize,
    fetch: F,
    threads: usize,
    policy_weight: f64,
) -> Result<LossSums, TrainError>
where
    F: Fn(usize) -> Result<Example, TrainError> + Sync,
{
    const CHUNK: usize = 256;
    let mut sums = LossSums::default();
    let mut start = 0;
    let mut slots = vec![(); threads.max(1)];
    while start < n {
        let len = (n - start).min(CHUNK * slots.len());
        let parts = slots.len().min(len);
        let work = |_: &mut (), range: std::ops::Range<usize>| -> Result<LossSums, TrainError> {
            let examples = range
                .map(|i| fetch(start + i))
                .collect::<Result<Vec<Example>, _>>()?;
            let f = forward(model, &positions(&examples));
            Ok(losses(&examples, &f.value, &f.logits, policy_weight, 1.0).0)
        };
        for r in run_parallel(&mut slots[..parts], len, &work) {
            sums.add(&r?);
        }
        start += len;
    }
    Ok(sums)
}

/// The order of epoch `epoch`: a Fisher–Yates shuffle of `0..n` from the seed.
pub fn epoch_order(n: usize, seed: u64, epoch: u32) -> Vec<u32> {
    let mut order: Vec<u32> = (0..n as u32).collect();
    let mut rng = SplitMix64::stream(seed, u64::from(epoch));
    for i in (1..n).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
    order
}

/// Whether training sample `index` is reflected left to right in `epoch` of a `--mirror`
/// run: a hash of the seed, the epoch and the index, so about half the samples are, a
/// different half each epoch, and a resumed run reflects the same ones.
pub fn mirrored_in_epoch(seed: u64, epoch: u32, index: u32) -> bool {
    let stream = u64::from(epoch) << 32 | u64::from(index);
    SplitMix64::stream(seed ^ 0x6d69_7272_6f72, stream).next_u64() >> 63 == 1
}

/// Reads `path`'s weights as a model (e.g. a finished run's output).
pub fn load_model(path: &Path) -> Result<Model<f32>, TrainError> {
    let file = WeightFile::open(path)?;
    let model = Model::<f32>::from_source(&file)?;
    debug_assert_eq!(TensorSource::shape(&model), file.shape());
    Ok(model)
}
