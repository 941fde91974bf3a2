//! One invocation of the training loop ([`train`]): where a run starts (new, `--init`, or
//! the checkpoint it resumes), then the epochs left — their steps, reports, checkpoints and
//! validations — with the clocks and loss sums they keep ([`Session`]). The model, the
//! optimiser step and the data order are [`super::trainer`]'s.

use super::checkpoint::{self, RunState};
use super::data::Dataset;
use super::error::TrainError;
use super::loss::LossSums;
use super::model::Model;
use super::optim::Adam;
use super::trainer::{
    Event, Report, Stop, Summary, TrainConfig, Trainer, Validation, epoch_order, mirrored_in_epoch,
};
use crate::weights::WeightFile;
use std::path::Path;
use std::time::Instant;

/// Writes a checkpoint: the weights and the state file, as one step ([`checkpoint::save`]).
fn save(trainer: &Trainer<f32>, run: &RunState, out: &Path) -> Result<(), TrainError> {
    checkpoint::save(out, &trainer.model, &trainer.adam, run)
}

/// Runs training as `config` says, on `train` (validating on `val`), telling `observer` how
/// it goes. Weights and state are checkpointed to `config.out` every
/// `config.checkpoint_every`, after each epoch and at the end.
pub fn train(
    config: &TrainConfig,
    train: &Dataset,
    val: Option<&Dataset>,
    observer: &mut dyn FnMut(Event<'_>),
) -> Result<Summary, TrainError> {
    check_inputs(config, train)?;
    let (model, adam, run) = start(config, train.fingerprint(), observer)?;
    if config.resume && run.epoch >= config.epochs && run.offset == 0 {
        return Ok(Summary {
            stop: Stop::AlreadyFinished,
            steps: adam.step,
            epochs: run.epoch,
            samples: run.samples,
            train: LossSums::default(),
            validation: None,
        });
    }
    let trainer = Trainer::new(model, adam, config.threads, config.policy_weight);
    let val_len = val.map_or(0, |v| {
        if config.val_limit == 0 {
            v.len()
        } else {
            v.len().min(config.val_limit)
        }
    });
    observer(Event::Started {
        resumed: config.resume,
        step: trainer.adam.step,
        epoch: run.epoch,
        params: trainer.model.param_count(),
        train: train.len(),
        val: val_len,
        threads: config.threads,
    });
    Session {
        config,
        train,
        val: val.filter(|_| val_len > 0).map(|v| (v, val_len)),
        observer,
        started: Instant::now(),
        last_report: Instant::now(),
        last_checkpoint: Instant::now(),
        window: LossSums::default(),
        total: LossSums::default(),
        last_validation: None,
        saved_at: None,
    }
    .run(trainer, run)
}

/// The settings, the files they name ([`TrainConfig::preflight`]) and the training set's size.
fn check_inputs(config: &TrainConfig, train: &Dataset) -> Result<(), TrainError> {
    config.preflight()?;
    if train.is_empty() {
        return Err(TrainError::Config(
            "the training data holds no samples".into(),
        ));
    }
    if u32::try_from(train.len()).is_err() {
        return Err(TrainError::Config(format!(
            "{} training samples; at most 2^32 − 1 are supported",
            train.len()
        )));
    }
    Ok(())
}

/// The model, optimiser and place in the run to start from: the checkpoint at `config.out`
/// for `--resume` (its epoch starting over when the data's `fingerprint` changed), else
/// `--init`'s weights or random ones with a fresh optimiser.
fn start(
    config: &TrainConfig,
    fingerprint: u64,
    observer: &mut dyn FnMut(Event<'_>),
) -> Result<(Model<f32>, Adam<f32>, RunState), TrainError> {
    if config.resume {
        let out = &config.out;
        let file = WeightFile::open_expecting(out, &config.shape)?;
        let model = Model::<f32>::from_source(&file)?;
        let (adam, mut run) = checkpoint::resume(out, &model, file.checksum())?;
        if run.data != fingerprint {
            observer(Event::Note(format!(
                "the training data differs from the checkpoint's; epoch {} starts over on the new data",
                run.epoch + 1
            )));
            run.offset = 0;
            run.data = fingerprint;
        }
        return Ok((model, adam, run));
    }
    let model = match &config.init {
        Some(path) => Model::<f32>::from_source(&WeightFile::open_expecting(path, &config.shape)?)?,
        None => Model::<f32>::random(&config.shape, config.seed),
    };
    let adam = Adam::new(&model, config.adam);
    let run = RunState {
        seed: config.seed,
        data: fingerprint,
        ..RunState::default()
    };
    Ok((model, adam, run))
}

/// One invocation's training: the epochs left, their steps, reports, checkpoints and
/// validations, with the clocks and loss sums they keep.
struct Session<'a> {
    config: &'a TrainConfig,
    train: &'a Dataset,
    /// The validation set and how many of its samples to use (at least 1).
    val: Option<(&'a Dataset, usize)>,
    observer: &'a mut dyn FnMut(Event<'_>),
    started: Instant,
    last_report: Instant,
    last_checkpoint: Instant,
    /// Losses since the last report, and over the whole invocation.
    window: LossSums,
    total: LossSums,
    last_validation: Option<Validation>,
    /// The step of the last checkpoint, while no step has followed it.
    saved_at: Option<u64>,
}

impl Session<'_> {
    /// Trains until every epoch is done or a limit stops it, then makes sure the last step
    /// is checkpointed.
    fn run(mut self, mut trainer: Trainer<f32>, mut run: RunState) -> Result<Summary, TrainError> {
        let stop = loop {
            if run.epoch >= self.config.epochs {
                break Stop::Finished;
            }
            if let Some(stop) = self.epoch(&mut trainer, &mut run)? {
                break stop;
            }
        };
        if self.saved_at != Some(trainer.adam.step) || !self.config.out.exists() {
            self.checkpoint(&trainer, &run)?;
        }
        Ok(Summary {
            stop,
            steps: trainer.adam.step,
            epochs: run.epoch,
            samples: run.samples,
            train: self.total,
            validation: self.last_validation,
        })
    }

    /// The rest of epoch `run.epoch`, then its checkpoint; `Some` when a step or time limit
    /// stops it first.
    fn epoch(
        &mut self,
        trainer: &mut Trainer<f32>,
        run: &mut RunState,
    ) -> Result<Option<Stop>, TrainError> {
        let n = self.train.len();
        let order = epoch_order(n, run.seed, run.epoch);
        while (run.offset as usize) < n {
            if self
                .config
                .max_steps
                .is_some_and(|m| trainer.adam.step >= m)
            {
                return Ok(Some(Stop::StepLimit));
            }
            if self
                .config
                .time_limit
                .is_some_and(|t| self.started.elapsed() >= t)
            {
                return Ok(Some(Stop::TimeLimit));
            }
            self.step(trainer, run, &order)?;
            if self.last_checkpoint.elapsed() >= self.config.checkpoint_every
                && (run.offset as usize) < n
            {
                self.timed_checkpoint(trainer, run)?;
            }
        }
        run.epoch += 1;
        run.offset = 0;
        self.timed_checkpoint(trainer, run)?;
        Ok(None)
    }

    /// One optimiser step on the next batch of `order`, reported when a report is due.
    fn step(
        &mut self,
        trainer: &mut Trainer<f32>,
        run: &mut RunState,
        order: &[u32],
    ) -> Result<(), TrainError> {
        let (config, train, n) = (self.config, self.train, self.train.len());
        let from = run.offset as usize;
        let batch = &order[from..(from + config.batch).min(n)];
        let lr = config.learning_rate(trainer.adam.step, run.epoch);
        let sums = trainer.step(
            batch.len(),
            |i| {
                let index = batch[i];
                let mirror = config.mirror && mirrored_in_epoch(run.seed, run.epoch, index);
                train.example_mirrored(index as usize, config.lambda, mirror)
            },
            lr,
        )?;
        self.window.add(&sums);
        self.total.add(&sums);
        run.offset += batch.len() as u64;
        run.samples += batch.len() as u64;
        self.saved_at = None;
        if self.last_report.elapsed() >= config.report_every {
            let secs = self.last_report.elapsed().as_secs_f64();
            (self.observer)(Event::Report(&Report {
                epoch: run.epoch + 1,
                epoch_fraction: run.offset as f64 / n as f64,
                step: trainer.adam.step,
                samples: run.samples,
                samples_per_sec: self.window.examples as f64 / secs,
                loss: self.window,
                lr,
                elapsed: self.started.elapsed(),
            }));
            self.window = LossSums::default();
            self.last_report = Instant::now();
        }
        Ok(())
    }

    /// A checkpoint in the middle of training: its time does not count in the reported
    /// speed (reported speed is training speed).
    fn timed_checkpoint(
        &mut self,
        trainer: &Trainer<f32>,
        run: &RunState,
    ) -> Result<(), TrainError> {
        let t = Instant::now();
        self.checkpoint(trainer, run)?;
        self.saved_at = Some(trainer.adam.step);
        self.last_checkpoint = Instant::now();
        self.last_report += t.elapsed();
        Ok(())
    }

    /// Saves the weights and state as one step ([`checkpoint::save`]), then validates.
    fn checkpoint(&mut self, trainer: &Trainer<f32>, run: &RunState) -> Result<(), TrainError> {
        let out = &self.config.out;
        save(trainer, run, out)?;
        (self.observer)(Event::Checkpoint {
            step: trainer.adam.step,
            path: out,
        });
        if let Some((v, len)) = self.val {
            let loss = trainer.evaluate(
                len,
                |i| v.example(i, self.config.lambda),
                self.config.threads,
            )?;
            let v = Validation {
                epoch: run.epoch,
                step: trainer.adam.step,
                loss,
            };
            (self.observer)(Event::Validation(&v));
            self.last_validation = Some(v);
        }
        Ok(())
    }
}
