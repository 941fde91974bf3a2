//! What the long runs share about being interrupted and started again: labelling
//! ([`super::label`]), self-play ([`super::selfplay`]) and training ([`crate::train`]).
//!
//! - [`Manifest`]: the parameters that make two runs the same run, and [`Mismatch`], the one
//!   refusal when a resume's parameters differ from those on disk (naming the first field
//!   that differs, both values, and what to do).
//! - [`Journal`]: a run's progress kept beside its output — its manifest and its counters in
//!   one JSON file, replaced atomically ([`write_atomic`]) after the data it counts is synced.
//! - [`Finished`]: the one message of a run that, started again, finds itself finished.
//!
//! Each run keeps its own data files (labelled records, self-play game files, weights and
//! optimiser state); this module owns only the bookkeeping around them.

use crate::data::io::{DataError, write_atomic};
use std::fmt;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The parameters that make two runs the same run, as named text values in a fixed order.
///
/// Stored as `name = value` lines (self-play's `selfplay.manifest`) or as a JSON object
/// (the `settings` of a labelling journal); both read back to the same manifest. Two
/// manifests agree when every field either has has the same value in the other: a field only
/// one of them has differs from the other's absence. Runs add a field only when it is set, so
/// that manifests written before the field existed still agree.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Manifest {
    fields: Vec<(String, String)>,
}

/// The first field two manifests disagree on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    pub field: String,
    /// Its value on disk ("" where the field is absent).
    pub found: String,
    /// Its value in this run ("" where the field is absent).
    pub wanted: String,
}

impl Manifest {
    pub fn new() -> Manifest {
        Manifest::default()
    }

    /// This manifest with `name` set to `value` (replacing an earlier value of `name`).
    pub fn with(mut self, name: &str, value: impl fmt::Display) -> Manifest {
        let value = value.to_string();
        match self.fields.iter_mut().find(|(n, _)| n == name) {
            Some((_, v)) => *v = value,
            None => self.fields.push((name.to_string(), value)),
        }
        self
    }

    /// The value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// `name = value` lines, in order.
    pub fn to_text(&self) -> String {
        self.fields
            .iter()
            .map(|(n, v)| format!("{n} = {v}\n"))
            .collect()
    }

    /// The manifest of [`Manifest::to_text`]'s lines (lines without ` = ` are ignored).
    pub fn from_text(text: &str) -> Manifest {
        text.lines()
            .filter_map(|l| l.split_once(" = "))
            .fold(Manifest::new(), |m, (n, v)| m.with(n, v))
    }

    /// A JSON object of the fields, every value a string.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::Value::Object(
            self.fields
                .iter()
                .map(|(n, v)| (n.clone(), serde_json::Value::String(v.clone())))
                .collect(),
        )
    }

    /// The manifest of a JSON object: strings as they are, other values as JSON text (so
    /// `{"total": 12}` and `{"total": "12"}` agree). `None` for anything but an object.
    pub fn from_json(value: &serde_json::Value) -> Option<Manifest> {
        let object = value.as_object()?;
        Some(object.iter().fold(Manifest::new(), |m, (n, v)| match v {
            serde_json::Value::String(s) => m.with(n, s),
            other => m.with(n, other),
        }))
    }

    /// The first field, in this manifest's order and then `found`'s, whose value differs
    /// between this run's manifest (`self`) and the one on disk (`found`).
    pub fn difference(&self, found: &Manifest) -> Option<Difference> {
        let names = self
            .fields
            .iter()
            .chain(&found.fields)
            .map(|(n, _)| n.as_str());
        for name in names {
            let (wanted, there) = (self.get(name), found.get(name));
            if wanted != there {
                return Some(Difference {
                    field: name.to_string(),
                    found: there.unwrap_or_default().to_string(),
                    wanted: wanted.unwrap_or_default().to_string(),
                });
            }
        }
        None
    }

    /// Refuses, as [`Mismatch`], a `found` manifest (read from `path`, describing a `run`)
    /// that differs from this one; `advice` says what to do instead.
    pub fn check(
        &self,
        found: &Manifest,
        path: &Path,
        run: &str,
        advice: &str,
    ) -> Result<(), Mismatch> {
        match self.difference(found) {
            None => Ok(()),
            Some(d) => Err(Mismatch {
                path: path.to_path_buf(),
                run: run.to_string(),
                difference: d,
                advice: advice.to_string(),
            }),
        }
    }

    /// Writes this manifest as text to `path` when no run wrote one there yet, else checks
    /// that the one there agrees ([`Manifest::check`]).
    pub fn write_or_check(&self, path: &Path, run: &str, advice: &str) -> Result<(), ResumeError> {
        match std::fs::read_to_string(path) {
            Ok(found) => Ok(self.check(&Manifest::from_text(&found), path, run, advice)?),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Ok(write_atomic(path, self.to_text().as_bytes())?)
            }
            Err(source) => Err(DataError::Io {
                path: path.to_path_buf(),
                source,
            }
            .into()),
        }
    }
}

/// A resume refused because the run on disk was made with other parameters.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error(
    "{} holds {run} with other settings ({}: '{}' there, '{}' now); {advice}",
    path.display(), difference.field, difference.found, difference.wanted
)]
pub struct Mismatch {
    /// The manifest or journal on disk.
    pub path: PathBuf,
    /// What is there, e.g. "a self-play run".
    pub run: String,
    pub difference: Difference,
    /// What to do: resume with the same settings, or start elsewhere.
    pub advice: String,
}

/// Why a run's bookkeeping could not be read or written.
#[derive(Debug, Error)]
pub enum ResumeError {
    #[error(transparent)]
    Mismatch(#[from] Mismatch),
    /// A journal that is not what [`Journal::save`] writes.
    #[error("{}: {reason}; delete it and the data beside it to start over", path.display())]
    Damaged { path: PathBuf, reason: String },
    #[error(transparent)]
    Data(#[from] DataError),
}

/// A run's progress kept beside its output: one JSON file holding the run's manifest (as
/// `settings`) and named counters (`{"settings": {…}, "records": 5, "skipped": 0}`).
///
/// The run appends and syncs the data the counters describe first, then [`Journal::save`]s
/// (atomically): a kill between the two leaves counters that describe a prefix of the data,
/// which the run cuts back to on resume, so nothing is lost or counted twice.
#[derive(Clone, Debug)]
pub struct Journal {
    path: PathBuf,
    manifest: Manifest,
    /// What the run is, for the refusal: e.g. "an unfinished labelling run".
    run: String,
    /// What to do when the journal is another run's.
    advice: String,
}

impl Journal {
    pub fn new(path: PathBuf, manifest: Manifest, run: &str, advice: &str) -> Journal {
        Journal {
            path,
            manifest,
            run: run.to_string(),
            advice: advice.to_string(),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether a journal (of any run) lies at the path: the run it belongs to is unfinished.
    pub fn exists(&self) -> bool {
        self.path.exists()
    }

    /// The counters `names` of the journal at the path, `None` when there is none. A
    /// journal of other settings is refused ([`Mismatch`]), as is one without a counter.
    pub fn load(&self, names: &[&str]) -> Result<Option<Vec<u64>>, ResumeError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(DataError::Io {
                    path: self.path.clone(),
                    source,
                }
                .into());
            }
        };
        let damaged = |reason: String| ResumeError::Damaged {
            path: self.path.clone(),
            reason,
        };
        let saved: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| damaged(format!("not valid JSON ({e})")))?;
        let found = saved
            .get("settings")
            .and_then(Manifest::from_json)
            .ok_or_else(|| damaged("has no object 'settings'".into()))?;
        self.manifest
            .check(&found, &self.path, &self.run, &self.advice)?;
        names
            .iter()
            .map(|k| {
                saved
                    .get(*k)
                    .and_then(|v| v.as_u64())
                    .ok_or_else(|| damaged(format!("has no number '{k}'")))
            })
            .collect::<Result<Vec<u64>, _>>()
            .map(Some)
    }

    /// The counters of an unfinished run's journal at `path`, whatever its settings; `None`
    /// without a readable journal holding them all (for messages after a failure).
    pub fn counters_at(path: &Path, names: &[&str]) -> Option<Vec<u64>> {
        let saved: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
        names.iter().map(|k| saved.get(*k)?.as_u64()).collect()
    }

    /// Replaces the journal, atomically, with this run's manifest and `counters`.
    pub fn save(&self, counters: &[(&str, u64)]) -> Result<(), ResumeError> {
        let mut state = serde_json::Map::new();
        state.insert("settings".into(), self.manifest.to_json());
        for (k, v) in counters {
            state.insert((*k).into(), (*v).into());
        }
        let text = serde_json::Value::Object(state).to_string();
        Ok(write_atomic(&self.path, text.as_bytes())?)
    }

    /// Removes the journal (the run is finished, or kept nothing worth resuming).
    pub fn remove(&self) -> Result<(), ResumeError> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(source) => Err(DataError::Io {
                path: self.path.clone(),
                source,
            }
            .into()),
        }
    }
}

/// A run that, started again, finds its work already done: what it wrote, and how to do
/// more. Its text is the one message every run gives then ("OUT: that run is finished (3
/// records); nothing to do (pass --force to label again and replace it)").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finished {
    /// The run's output (a file or a directory).
    pub out: PathBuf,
    /// What it holds, e.g. "3 records".
    pub done: String,
    /// How to do more, e.g. "give --epochs more than 1 to train further".
    pub further: String,
}

impl fmt::Display for Finished {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: that run is finished ({}); nothing to do ({})",
            self.out.display(),
            self.done,
            self.further
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("manaka-resume-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Text and JSON read back to the manifest written, and the hand-written forms a run
    /// made before this module read to the same manifest.
    #[test]
    fn a_manifest_reads_back_from_text_and_json() {
        let m = Manifest::new()
            .with("format", "manaka self-play 1")
            .with("seed", 7)
            .with("start", "startpos")
            .with("seed", 8);
        assert_eq!(m.get("seed"), Some("8"));
        assert_eq!(
            m.to_text(),
            "format = manaka self-play 1\nseed = 8\nstart = startpos\n"
        );
        assert_eq!(Manifest::from_text(&m.to_text()), m);
        assert_eq!(Manifest::from_json(&m.to_json()), Some(m.clone()));
        let old = serde_json::json!({"total": 12, "limit": "depth 3", "options": ["a=b"]});
        let read = Manifest::from_json(&old).unwrap();
        assert_eq!(
            (read.get("total"), read.get("limit"), read.get("options")),
            (Some("12"), Some("depth 3"), Some(r#"["a=b"]"#))
        );
        assert_eq!(Manifest::from_json(&serde_json::json!([1])), None);
    }

    /// The first differing field is named with both values, a field only one side has
    /// differs from its absence, and agreeing manifests pass.
    #[test]
    fn a_difference_names_the_first_field_that_differs() {
        let here = Manifest::new().with("a", 1).with("b", 2);
        assert_eq!(here.difference(&here.clone()), None);
        let there = Manifest::new().with("a", 1).with("b", 3);
        let d = here.difference(&there).unwrap();
        assert_eq!(
            (d.field.as_str(), d.found.as_str(), d.wanted.as_str()),
            ("b", "3", "2")
        );
        let more = here.clone().with("shard", "0/2");
        let d = here.difference(&more).unwrap();
        assert_eq!(
            (d.field.as_str(), d.found.as_str(), d.wanted.as_str()),
            ("shard", "0/2", "")
        );
        let d = more.difference(&here).unwrap();
        assert_eq!((d.found.as_str(), d.wanted.as_str()), ("", "0/2"));
        let e = here
            .check(
                &there,
                Path::new("/x/m"),
                "a self-play run",
                "use another --out",
            )
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "/x/m holds a self-play run with other settings (b: '3' there, '2' now); use another --out"
        );
    }

    /// The manifest file is written once, then checked; a journal keeps its counters, refuses
    /// other settings and damaged text, and is gone once removed.
    #[test]
    fn the_manifest_file_and_the_journal_resume_only_their_own_run() {
        let dir = scratch("journal");
        let path = dir.join("run.manifest");
        let m = Manifest::new().with("seed", 1);
        m.write_or_check(&path, "a run", "advice").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "seed = 1\n");
        m.write_or_check(&path, "a run", "advice").unwrap();
        let other = Manifest::new().with("seed", 2);
        assert!(matches!(
            other.write_or_check(&path, "a run", "advice"),
            Err(ResumeError::Mismatch(_))
        ));

        let jpath = dir.join("out.partial.json");
        let j = Journal::new(jpath.clone(), m.clone(), "an unfinished run", "advice");
        assert_eq!(j.load(&["records"]).unwrap(), None);
        j.save(&[("records", 5), ("skipped", 1)]).unwrap();
        assert!(j.exists());
        assert_eq!(j.load(&["records", "skipped"]).unwrap(), Some(vec![5, 1]));
        assert_eq!(
            Journal::counters_at(&jpath, &["records", "skipped"]),
            Some(vec![5, 1])
        );
        let foreign = Journal::new(jpath.clone(), other, "an unfinished run", "advice");
        let e = foreign.load(&["records"]).unwrap_err();
        assert!(e.to_string().contains("seed: '1' there, '2' now"), "{e}");
        assert!(matches!(
            j.load(&["missing"]),
            Err(ResumeError::Damaged { .. })
        ));
        std::fs::write(&jpath, "{not json").unwrap();
        assert!(matches!(
            j.load(&["records"]),
            Err(ResumeError::Damaged { .. })
        ));
        j.remove().unwrap();
        j.remove().unwrap();
        assert!(!j.exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn finished_says_what_was_done_and_how_to_do_more() {
        let f = Finished {
            out: "out.hcpe".into(),
            done: "3 records".into(),
            further: "pass --force to label again".into(),
        };
        assert_eq!(
            f.to_string(),
            "out.hcpe: that run is finished (3 records); nothing to do (pass --force to label again)"
        );
    }
}
