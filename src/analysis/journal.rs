//! The journal of a `validate` run: each launch's simulated values, appended as the launch
//! finishes, beside the report's `--out`. An interrupted run (killed, out of time on a cluster)
//! continues from it with `validate --resume`, and the report then is byte for byte the one an
//! uninterrupted run writes; a finished run removes it.
//!
//! The file is JSON lines: a header naming the run (its fingerprint: the build, the GPU config,
//! sampling and every launch), then one record per finished launch, in the order they finished:
//! `{"i": index, "launch": label, "simulated": {metric: value}, "time": {…} | null}`. Numbers
//! round-trip exactly (serde_json's `float_roundtrip`). A last line cut short by the interruption
//! is dropped; any other bad line is an error naming it.

use crate::analysis::sweep_file::{Fnv1a, build};
use crate::error::{Error, Result};
use crate::timing::TimeEstimate;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The key of the journal's header line; its value is the run's fingerprint.
const HEADER_KEY: &str = "gputraffic_validate_journal";

/// What a finished launch left: every simulated value by metric name, and the time estimate.
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    /// Simulated values, in the order the simulation reports them.
    pub simulated: Vec<(&'static str, f64)>,
    /// The time model's estimate, when there is one.
    pub time: Option<TimeEstimate>,
}

/// An open journal, shared by the worker threads.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: Mutex<std::fs::File>,
}

/// The journal that belongs to the report `out`: `out` with `.journal` appended.
pub fn path_for(out: &Path) -> PathBuf {
    let mut name = out.as_os_str().to_owned();
    name.push(".journal");
    PathBuf::from(name)
}

/// A fingerprint of everything a launch's simulated values depend on besides the launch itself:
/// this build, the GPU config and the sampling; and of the launches, by `labels`, in order.
pub fn fingerprint(hw: &crate::input::hw::HwConfig, sampled: bool, labels: &[String]) -> String {
    let mut h = Fnv1a::default();
    h.field(&build());
    h.field(&format!("{hw:?}"));
    h.field(if sampled { "sampled" } else { "exact" });
    for l in labels {
        h.field(l);
    }
    h.hex()
}

impl Journal {
    /// Starts a fresh journal at `path` for the run `fingerprint` of `launches` launches.
    /// An existing journal is an interrupted run: refused unless `replace`, so that its work is
    /// not thrown away by a forgotten `--resume`.
    pub fn start(path: &Path, fingerprint: &str, launches: usize, replace: bool) -> Result<Self> {
        if path.exists() && !replace {
            let done = std::fs::read_to_string(path)
                .map(|t| t.matches('\n').count().saturating_sub(1))
                .unwrap_or(0);
            return Err(Error::in_file(
                path,
                format!(
                    "an interrupted validation left this journal ({done} launch(es) done): add \
                     --resume to continue it, or --force to start over"
                ),
            ));
        }
        let header = json!({ HEADER_KEY: fingerprint, "build": build(), "launches": launches });
        std::fs::write(path, format!("{header}\n"))
            .map_err(|e| Error::in_file(path, format!("cannot write the journal: {e}")))?;
        Self::append_to(path)
    }

    /// Reopens the journal at `path` of the run `fingerprint` and reads back the launches it
    /// finished, by index (`metrics` lists the names a record may hold).
    pub fn resume(
        path: &Path,
        fingerprint: &str,
        labels: &[String],
        metrics: &[&'static str],
    ) -> Result<(Self, BTreeMap<usize, Finished>)> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            Error::in_file(
                path,
                format!("cannot read the journal to resume from: {e} (run without --resume)"),
            )
        })?;
        let at =
            |line: usize, what: String| Error::new(format!("{} line {line}", path.display()), what);
        let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
        // A record cut short by the interruption: the launch simply runs again.
        if lines.last().is_some_and(|l| !l.ends_with('\n')) {
            lines.pop();
        }
        let header: Value = lines
            .first()
            .and_then(|l| serde_json::from_str(l).ok())
            .ok_or_else(|| at(1, "no journal header: not a validation journal".into()))?;
        match header.get(HEADER_KEY).and_then(Value::as_str) {
            Some(f) if f == fingerprint => {}
            Some(_) => {
                return Err(Error::in_file(
                    path,
                    format!(
                        "the journal belongs to another validation (other launches, GPU config, \
                         sampling or build {}): run without --resume, with --force",
                        header["build"].as_str().unwrap_or("?")
                    ),
                ));
            }
            None => return Err(at(1, "no journal header: not a validation journal".into())),
        }
        let mut finished = BTreeMap::new();
        for (n, line) in lines.iter().enumerate().skip(1) {
            let bad = |what: &str| at(n + 1, what.to_string());
            let record: Value = serde_json::from_str(line).map_err(|e| bad(&e.to_string()))?;
            let i = record["i"]
                .as_u64()
                .map(|i| i as usize)
                .filter(|&i| i < labels.len())
                .ok_or_else(|| bad("no launch index of this validation"))?;
            if record["launch"].as_str() != Some(labels[i].as_str()) {
                return Err(bad(&format!("launch {i} is not {}", labels[i])));
            }
            let simulated = record["simulated"]
                .as_object()
                .ok_or_else(|| bad("no simulated values"))?
                .iter()
                .map(|(name, v)| {
                    let metric = metrics.iter().find(|m| **m == name);
                    match (metric, v.as_f64()) {
                        (Some(m), Some(v)) => Ok((*m, v)),
                        _ => Err(bad(&format!("bad simulated value {name} = {v}"))),
                    }
                })
                .collect::<Result<Vec<_>>>()?;
            let time = match &record["time"] {
                Value::Null => None,
                t => Some(TimeEstimate::from_json(t).ok_or_else(|| bad("bad time estimate"))?),
            };
            finished.insert(i, Finished { simulated, time });
        }
        // Rewrite without a cut-short line, so that appending starts on a line of its own.
        let kept: String = lines.concat();
        std::fs::write(path, kept)
            .map_err(|e| Error::in_file(path, format!("cannot write the journal: {e}")))?;
        Ok((Self::append_to(path)?, finished))
    }

    fn append_to(path: &Path) -> Result<Self> {
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| Error::in_file(path, format!("cannot write the journal: {e}")))?;
        Ok(Journal {
            path: path.to_path_buf(),
            file: Mutex::new(file),
        })
    }

    /// Appends launch `i` (`label`) as finished, in one write.
    pub fn record(&self, i: usize, label: &str, finished: &Finished) -> Result<()> {
        let simulated: Map<String, Value> = finished
            .simulated
            .iter()
            .map(|(m, v)| (m.to_string(), json!(v)))
            .collect();
        let time = finished
            .time
            .as_ref()
            .map_or(Value::Null, TimeEstimate::to_json);
        let line = json!({ "i": i, "launch": label, "simulated": simulated, "time": time });
        let mut file = self.file.lock().expect("a journal writer panicked");
        file.write_all(format!("{line}\n").as_bytes())
            .map_err(|e| Error::in_file(&self.path, format!("cannot write the journal: {e}")))
    }

    /// The run is complete: the journal goes.
    pub fn remove(self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
