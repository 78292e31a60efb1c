//! Sweeps: one kernel simulated over block shapes, domains, parameter values, GPUs and cache
//! sizes, one output row per configuration with every simulated metric, the derived cache
//! quantities of Ernst et al. Sect. 4.5, Su et al.'s effective miss ratios and the models'
//! predictions.
//!
//! Rows are appended as configurations finish, in whatever order they finish, each carrying its
//! `config` index, so an interrupted sweep loses nothing already done. [`Sweep::run`] with
//! `resume` keeps the complete rows of an existing file, drops a torn last line, runs the rest;
//! at the end the file is rewritten in configuration order. The finished file is therefore the
//! same, byte for byte, however the sweep was interrupted and on any number of threads.
//!
//! [`Sweep::run_shard`] runs every N-th configuration into a shard file instead (one line in
//! front names the shard and the sweep's [`Sweep::fingerprint`]); [`merge`](crate::analysis::shard::merge) puts the
//! shards back together into the unsharded file's bytes.

use crate::analysis::side_by_side;
use crate::analysis::sweep_file::{Fnv1a, OutputFormat, Shard, ShardHeader};
use crate::error::{Error, Result};
use crate::input::hw::HwConfig;
use crate::input::kernel_source::KernelSource;
use crate::input::trace::Kernel;
use crate::launch::geometry::expand_blocks;
use crate::launch::{Launch, LaunchRequest};
use crate::metrics;
use crate::models::{self, ModelInfo, ernst2023};
use crate::report::{Report, csv_field};
use crate::sim::sample::SampleOptions;
use crate::sim::{Counts, SimOptions};
use crate::{Bound, timing};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

/// What a sweep varies: every list is one dimension of the cross product.
#[derive(Debug, Clone)]
pub struct SweepSpec {
    /// The kernel.
    pub kernel: KernelSource,
    /// GPUs (shipped names or paths).
    pub hws: Vec<String>,
    /// Block shapes: `AxBxC` or a named set (see [`expand_blocks`]).
    pub blocks: Vec<String>,
    /// Domains: `AxBxC` or a series (see [`expand_domains`]); empty keeps the trace's.
    pub domains: Vec<String>,
    /// `NAME=V1,V2,…`: kernel parameters or model constants, one dimension each.
    pub sets: Vec<String>,
    /// L1 capacity factors.
    pub l1_scales: Vec<f64>,
    /// L2 capacity factors.
    pub l2_scales: Vec<f64>,
    /// Models whose predictions go into every row.
    pub models: Vec<&'static ModelInfo>,
    /// Clock of the time model: `boost`, `base` or GHz.
    pub clock: String,
    /// Sample the interior waves of every configuration ([`crate::sim::sample`]): the counts
    /// become estimates, and each row gains `sampled` and a 95% interval per metric.
    pub sample: Option<SampleOptions>,
}

/// One configuration, bound and ready to simulate.
#[derive(Debug)]
struct Planned {
    /// The bound launch (its hardware already scaled).
    bound: Bound,
    l1_scale: f64,
    l2_scale: f64,
    /// The `--set` values of this configuration, by name.
    sets: Vec<(String, String)>,
    model_params: BTreeMap<String, f64>,
    clock: Option<f64>,
}

/// A planned sweep: every configuration bound, the output columns fixed.
#[derive(Debug)]
pub struct Sweep {
    configs: Vec<Planned>,
    columns: Vec<String>,
    /// How many leading columns identify a configuration (checked on resume).
    identity_columns: usize,
    models: Vec<&'static ModelInfo>,
    sample: Option<SampleOptions>,
    /// Shapes of named block sets that cannot launch, with the reason (reported, not run).
    pub skipped: Vec<String>,
}

/// What [`Sweep::run`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunSummary {
    /// Configurations of this run: the sweep's, or the shard's.
    pub total: usize,
    /// Rows already in the file when it started (resume).
    pub kept: usize,
    /// Configurations simulated by this run.
    pub simulated: usize,
}

/// Expands domain entries: `AxBxC`, or the series `square-xy:total=T:from=A:to=B[:points=K]` —
/// square XY planes `x = y` from A to B (doubling, or K points spaced geometrically) with
/// `z = ⌊T / x²⌋`, the total size held constant as in Ernst et al. Fig. 23. T may be written as
/// a product of powers (`512*1024*1024`, `2^29`).
pub fn expand_domains(entries: &[String]) -> Result<Vec<[i64; 3]>> {
    let mut out = Vec::new();
    for e in entries.iter().flat_map(|e| e.split(',')) {
        let e = e.trim();
        if let Some(rest) = e.strip_prefix("square-xy:") {
            out.extend(square_xy_series(e, rest)?);
        } else {
            out.push(crate::launch::parse_dims("--domains", e)?);
        }
    }
    Ok(out)
}

/// The domains of `--domains` for `kernel`: a series as [`expand_domains`] gives it, and every
/// other entry as `--domain` takes it (`N`, `NXxNY` or `NXxNYxNZ`, as many sizes as the kernel
/// has of `nx`, `ny`, `nz`).
fn domain_settings(
    kernel: &Kernel,
    entries: &[String],
) -> Result<Vec<crate::launch::DomainSettings>> {
    let mut out = Vec::new();
    for e in entries.iter().flat_map(|e| e.split(',')) {
        let e = e.trim();
        if let Some(rest) = e.strip_prefix("square-xy:") {
            out.extend(
                square_xy_series(e, rest)?
                    .into_iter()
                    .map(|d| (Some(d), Vec::new())),
            );
        } else {
            out.push(
                crate::launch::domain_request(kernel, e)
                    .map_err(|err| Error::new("--domains", err.message))?,
            );
        }
    }
    Ok(out)
}

fn square_xy_series(entry: &str, rest: &str) -> Result<Vec<[i64; 3]>> {
    let bad = |m: &str| Error::new("--domains", format!("'{entry}': {m}"));
    let mut keys: BTreeMap<&str, i64> = BTreeMap::new();
    for kv in rest.split(':') {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| bad("expected total=T:from=A:to=B[:points=K]"))?;
        if !matches!(k, "total" | "from" | "to" | "points") {
            return Err(bad(&format!("unknown key '{k}' (total, from, to, points)")));
        }
        let v = parse_product(v).ok_or_else(|| bad(&format!("'{v}' is not a positive integer")))?;
        keys.insert(k, v);
    }
    let get = |k: &str| {
        keys.get(k)
            .copied()
            .ok_or_else(|| bad(&format!("missing {k}=")))
    };
    let (total, from, to) = (get("total")?, get("from")?, get("to")?);
    if from > to {
        return Err(bad("from is larger than to"));
    }
    let xs: Vec<i64> = match keys.get("points") {
        Some(&k) if k >= 2 => {
            let ratio = (to as f64 / from as f64).powf(1.0 / (k - 1) as f64);
            let mut v: Vec<i64> = (0..k)
                .map(|i| (from as f64 * ratio.powi(i as i32)).round() as i64)
                .collect();
            v.dedup();
            v
        }
        Some(_) => vec![from],
        None => std::iter::successors(Some(from), |x| x.checked_mul(2))
            .take_while(|x| *x <= to)
            .collect(),
    };
    xs.into_iter()
        .map(|x| {
            let z = total / (x * x);
            if z < 1 {
                Err(bad(&format!("x = y = {x} leaves z = {total}/{x}² < 1")))
            } else {
                Ok([x, x, z])
            }
        })
        .collect()
}

/// `2^29`, `512*1024*1024`, `1000`: a positive integer.
fn parse_product(s: &str) -> Option<i64> {
    let mut acc: i64 = 1;
    for term in s.split('*') {
        let v = match term.split_once('^') {
            Some((b, e)) => b
                .trim()
                .parse::<i64>()
                .ok()?
                .checked_pow(e.trim().parse().ok()?)?,
            None => term.trim().parse::<i64>().ok()?,
        };
        acc = acc.checked_mul(v)?;
    }
    (acc > 0).then_some(acc)
}

/// `NAME=V1,V2,…` → (name, values).
fn parse_set_list(s: &str) -> Result<(String, Vec<String>)> {
    let (name, values) = s
        .split_once('=')
        .ok_or_else(|| Error::new("--set", format!("'{s}' is not NAME=V1,V2,…")))?;
    let values: Vec<String> = values
        .split(',')
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect();
    if values.is_empty() {
        return Err(Error::new("--set", format!("'{s}' has no value")));
    }
    Ok((name.trim().to_string(), values))
}

/// Every combination of the lists, the last one varying fastest.
fn cross_product(lists: &[(String, Vec<String>)]) -> Vec<Vec<(String, String)>> {
    let mut out: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for (name, values) in lists {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                values.iter().map(move |v| {
                    let mut c = prefix.clone();
                    c.push((name.clone(), v.clone()));
                    c
                })
            })
            .collect();
    }
    out
}

/// A cell for a number that may be undefined.
fn num(v: Option<f64>) -> String {
    v.filter(|v| v.is_finite())
        .map_or(String::new(), |v| v.to_string())
}

impl Sweep {
    /// Binds every configuration of `spec` (nesting: GPU, L1 scale, L2 scale, domain, `--set`
    /// values, block shape — the block varies fastest). Any configuration that cannot launch is
    /// an error, except shapes from named block sets, which are listed in `skipped`.
    pub fn plan(spec: &SweepSpec) -> Result<Sweep> {
        let kernel = spec.kernel.kernel()?;
        if spec.hws.is_empty() {
            return Err(Error::new("--hw", "no hardware configuration given"));
        }
        let set_lists: Vec<(String, Vec<String>)> = spec
            .sets
            .iter()
            .map(|s| parse_set_list(s))
            .collect::<Result<_>>()?;
        let combos = cross_product(&set_lists);
        let domains: Vec<crate::launch::DomainSettings> = if spec.domains.is_empty() {
            vec![(None, Vec::new())]
        } else {
            domain_settings(&kernel, &spec.domains)?
        };
        let scales = |v: &[f64]| if v.is_empty() { vec![1.0] } else { v.to_vec() };
        // Each GPU at each cache scale, with its clock and its block shapes.
        let mut machines = Vec::new();
        for hw_name in &spec.hws {
            let base = HwConfig::load(hw_name)?;
            for &l1_scale in &scales(&spec.l1_scales) {
                for &l2_scale in &scales(&spec.l2_scales) {
                    let hw = base.with_cache_scale(l1_scale, l2_scale)?;
                    let clock = timing::clock_choice(&spec.clock, &hw)?;
                    let blocks = expand_blocks(&spec.blocks, &hw)?;
                    machines.push((hw, l1_scale, l2_scale, clock, blocks));
                }
            }
        }
        let mut configs = Vec::new();
        let mut skipped = Vec::new();
        for (hw, l1_scale, l2_scale, clock, blocks) in &machines {
            for (domain, combo) in domains
                .iter()
                .flat_map(|d| combos.iter().map(move |c| (d, c)))
            {
                let pairs: Vec<String> = combo.iter().map(|(n, v)| format!("{n}={v}")).collect();
                let split = models::split_sets(&kernel, &spec.models, &pairs)?;
                for &(block, named) in blocks {
                    let req = LaunchRequest {
                        block: Some(block),
                        domain: domain.0,
                        set: [domain.1.clone(), split.kernel.clone()].concat(),
                    };
                    match Launch::new(&kernel, hw, &req) {
                        Ok(launch) => configs.push(Planned {
                            bound: Bound {
                                kernel: kernel.clone(),
                                hw: hw.clone(),
                                launch,
                            },
                            l1_scale: *l1_scale,
                            l2_scale: *l2_scale,
                            sets: combo.clone(),
                            model_params: split.model.clone(),
                            clock: *clock,
                        }),
                        Err(e) if named => {
                            let why = format!(
                                "{}x{}x{} on {}: {}",
                                block[0], block[1], block[2], hw.name, e.message
                            );
                            if !skipped.contains(&why) {
                                skipped.push(why);
                            }
                        }
                        Err(e) => return Err(e),
                    }
                }
            }
        }
        if configs.is_empty() {
            return Err(Error::new(
                "--blocks",
                format!(
                    "no configuration can launch ({})",
                    skipped.first().map_or("", String::as_str)
                ),
            ));
        }
        let set_names: Vec<String> = set_lists.iter().map(|(n, _)| format!("set_{n}")).collect();
        let mut columns: Vec<String> = ["config", metrics::L1_SCALE, metrics::L2_SCALE]
            .iter()
            .map(|s| s.to_string())
            .collect();
        columns.extend(set_names);
        let report_columns = Sweep::report_columns(&configs[0]);
        // kernel, hw, block, grid and the kernel parameters identify a configuration too.
        let metric_start = report_columns
            .iter()
            .position(|c| c == "lattice_updates")
            .unwrap_or(report_columns.len());
        let identity_columns = columns.len() + metric_start;
        if spec.sample.is_some() {
            columns.push(metrics::SAMPLED.into());
            for (m, _) in Sweep::empty_report(&configs[0]).metrics() {
                columns.extend(metrics::ci95_columns(m));
            }
        }
        columns.extend(report_columns);
        columns.extend(DERIVED.iter().map(|s| s.to_string()));
        for m in &spec.models {
            for q in MODEL_QUANTITIES {
                columns.push(format!("{}_{q}", m.name.replace('-', "_")));
            }
        }
        Ok(Sweep {
            configs,
            columns,
            identity_columns,
            models: spec.models.clone(),
            sample: spec.sample,
            skipped,
        })
    }

    /// The simulate columns (the same for every configuration of one kernel).
    fn report_columns(p: &Planned) -> Vec<String> {
        Sweep::empty_report(p)
            .columns()
            .into_iter()
            .map(|(k, _)| k)
            .collect()
    }

    /// A report with zero counts: its identity columns are the configuration's.
    fn empty_report(p: &Planned) -> Report {
        let b = &p.bound;
        let counts = Counts::default();
        let inputs = timing::inputs_from_counts(&counts, &b.launch);
        let time = timing::estimate(&b.hw, &b.kernel, &b.launch, &inputs, p.clock);
        Report::new(&b.launch, &b.hw, counts).with_time(time)
    }

    /// Number of configurations.
    pub fn len(&self) -> usize {
        self.configs.len()
    }

    /// Whether there is no configuration.
    pub fn is_empty(&self) -> bool {
        self.configs.is_empty()
    }

    /// The output columns.
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// The identity cells of configuration `i` (the leading `identity_columns` columns).
    fn identity(&self, i: usize) -> Vec<String> {
        let p = &self.configs[i];
        let mut cells = vec![
            i.to_string(),
            p.l1_scale.to_string(),
            p.l2_scale.to_string(),
        ];
        cells.extend(p.sets.iter().map(|(_, v)| v.clone()));
        cells.extend(Sweep::empty_report(p).columns().into_iter().map(|(_, v)| v));
        cells.truncate(self.identity_columns);
        cells
    }

    /// Simulates configuration `i` and returns its row, one cell per column.
    pub fn row(&self, i: usize) -> Result<Vec<String>> {
        let p = &self.configs[i];
        let b = &p.bound;
        let opts = SimOptions {
            sample: self.sample,
            ..SimOptions::default()
        };
        let report = b.simulate(&opts, p.clock)?;
        let mut cells: BTreeMap<String, String> = BTreeMap::new();
        cells.insert("config".into(), i.to_string());
        cells.insert(metrics::L1_SCALE.into(), p.l1_scale.to_string());
        cells.insert(metrics::L2_SCALE.into(), p.l2_scale.to_string());
        for (n, v) in &p.sets {
            cells.insert(format!("set_{n}"), v.clone());
        }
        if self.sample.is_some() {
            let intervals = report.metrics_ci95();
            cells.insert(metrics::SAMPLED.into(), intervals.is_some().to_string());
            // A launch too short to sample is simulated exactly: its interval is the value.
            let intervals = intervals.unwrap_or_else(|| {
                report
                    .metrics()
                    .into_iter()
                    .map(|(m, v)| (m, [v, v]))
                    .collect()
            });
            for (m, [lo, hi]) in intervals {
                let [lo_column, hi_column] = metrics::ci95_columns(m);
                cells.insert(lo_column, lo.to_string());
                cells.insert(hi_column, hi.to_string());
            }
        }
        cells.extend(report.columns());
        for (k, v) in derived(&report, b)? {
            cells.insert(k.to_string(), num(v));
        }
        // Every model once; su2015 also feeds the Su ratios, whether or not its volumes are asked
        // for.
        let predictions: Vec<_> = self
            .models
            .iter()
            .map(|m| (*m, b.predict(m, &p.model_params, p.clock).ok()))
            .collect();
        let su_name = models::su2015::MODEL.name;
        let su_fields = match predictions.iter().find(|(m, _)| m.name == su_name) {
            Some((_, prediction)) => prediction.as_ref().map(|(pred, _)| pred.fields.clone()),
            None => b
                .predict(&models::su2015::MODEL, &p.model_params, p.clock)
                .ok()
                .map(|(pred, _)| pred.fields),
        };
        for (k, v) in su_ratios(&report, su_fields.as_ref()) {
            cells.insert(k.to_string(), num(v));
        }
        for (m, prediction) in &predictions {
            let prefix = m.name.replace('-', "_");
            // A model that does not apply to this kernel leaves its cells empty.
            if let Some((pred, time)) = prediction {
                let v = &pred.volumes;
                let values = [
                    v.l1_load_bytes,
                    v.l2_load_bytes,
                    v.l2_store_bytes,
                    v.dram_load_bytes,
                    v.dram_store_bytes,
                    Some(time.predicted_s),
                ];
                for (q, v) in MODEL_QUANTITIES.iter().zip(values) {
                    cells.insert(format!("{prefix}_{q}"), num(v));
                }
            }
        }
        Ok(self
            .columns
            .iter()
            .map(|c| cells.remove(c).unwrap_or_default())
            .collect())
    }

    /// A fingerprint of the plan, 16 hex digits of [`Fnv1a`] over the columns, the kernel and
    /// every configuration in order (its identity cells, its scaled GPU, its model constants and
    /// clock): the same on every machine and in every run for the same plan, whatever paths the
    /// kernel and GPUs were given by; any change to what the rows depend on changes it.
    pub fn fingerprint(&self) -> String {
        let mut h = Fnv1a::default();
        h.field("gputraffic sweep plan 1");
        for c in &self.columns {
            h.field(c);
        }
        if let Some(p) = self.configs.first() {
            // One kernel for all configurations; where it was read from does not matter.
            let mut kernel = p.bound.kernel.clone();
            kernel.source_name.clear();
            kernel.description.clear();
            h.field(&format!("{kernel:?}"));
        }
        for (i, p) in self.configs.iter().enumerate() {
            for cell in self.identity(i) {
                h.field(&cell);
            }
            let mut hw = p.bound.hw.clone();
            hw.description.clear();
            h.field(&format!("{hw:?}"));
            h.field(&format!("{:?} {:?}", p.model_params, p.clock));
        }
        // Exact sweeps keep the fingerprint they had before sampling existed.
        if let Some(s) = &self.sample {
            h.field(&format!("sampled {s:?}"));
        }
        h.hex()
    }

    /// The header line of shard `shard` of this sweep.
    pub fn shard_header(&self, shard: Shard) -> ShardHeader {
        ShardHeader {
            shard,
            sweep: self.fingerprint(),
            configurations: self.len(),
            build: crate::analysis::sweep_file::build(),
        }
    }

    /// Runs the sweep into `out`. Without `resume` an existing file is replaced; with it, the
    /// complete rows of this same sweep are kept and only the missing configurations run.
    /// `progress(done, total)` is called once the existing rows are counted and after each row
    /// is written. The finished file is in configuration order.
    pub fn run(
        &self,
        out: &Path,
        resume: bool,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<RunSummary> {
        self.run_shard(out, None, resume, progress)
    }

    /// [`Sweep::run`] for shard `shard` only (the whole sweep for `None`): its configurations,
    /// in a file that begins with its [`ShardHeader`]. Resuming a shard checks that the file is
    /// the same shard of the same sweep, written by the same build.
    pub fn run_shard(
        &self,
        out: &Path,
        shard: Option<Shard>,
        resume: bool,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<RunSummary> {
        let format = OutputFormat::for_path(out);
        let name = out.display().to_string();
        let io = |e: std::io::Error| Error::new(&name, format!("cannot write: {e}"));
        crate::error::create_parent(out)?;
        let header = shard.map(|s| self.shard_header(s));
        let mine = |i: &usize| shard.is_none_or(|s| s.contains(*i));
        let mut done = vec![false; self.len()];
        let mut kept = 0;
        let existing = match resume && out.exists() {
            true => crate::error::read_file(out)?,
            false => String::new(),
        };
        // A file killed before its first line was complete holds nothing to keep.
        if existing.contains('\n') {
            let text = existing;
            let start = self.check_shard_line(&text, header.as_ref(), format, &name)?;
            let keep =
                start + self.check_existing(&text[start..], format, &name, &mut done, shard)?;
            kept = done.iter().filter(|d| **d).count();
            // Drop a torn last line (the sweep was killed mid-write).
            std::fs::write(out, &text[..keep]).map_err(io)?;
        } else {
            let mut preamble = header.as_ref().map_or(String::new(), |h| h.line(format));
            if format == OutputFormat::Csv {
                preamble.push_str(&self.encode(&self.columns, format));
            }
            std::fs::write(out, preamble).map_err(io)?;
        }
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(out)
            .map_err(io)?;
        let file = Mutex::new(file);
        let total = (0..self.len()).filter(mine).count();
        let todo: Vec<usize> = (0..self.len()).filter(|i| mine(i) && !done[*i]).collect();
        let finished = std::sync::atomic::AtomicUsize::new(kept);
        progress(kept, total);
        side_by_side::map(&todo, |&i| -> Result<()> {
            let cells = self.row(i)?;
            let line = self.encode(&cells, format);
            let mut f = file.lock().unwrap_or_else(|e| e.into_inner());
            f.write_all(line.as_bytes())
                .and_then(|_| f.flush())
                .map_err(io)?;
            drop(f);
            let n = finished.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            progress(n, total);
            Ok(())
        })?;
        drop(file);
        self.sort_file(out, format, header.is_some())?;
        Ok(RunSummary {
            total,
            kept,
            simulated: todo.len(),
        })
    }

    /// Runs the sweep in memory: one JSON object per configuration, in configuration order, as
    /// the lines of a `.jsonl` output. `progress(done, total)` is called after each row.
    pub fn records(&self, progress: &(dyn Fn(usize, usize) + Sync)) -> Result<Vec<Value>> {
        let finished = std::sync::atomic::AtomicUsize::new(0);
        progress(0, self.len());
        let all: Vec<usize> = (0..self.len()).collect();
        side_by_side::map(&all, |&i| {
            let cells = self.row(i)?;
            let n = finished.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            progress(n, self.len());
            Ok(self.record(&cells))
        })
    }

    /// A row as a JSON object, keyed by column.
    fn record(&self, cells: &[String]) -> Value {
        let mut m = Map::new();
        for (k, c) in self.columns.iter().zip(cells) {
            let value = if k == metrics::SAMPLED {
                Value::Bool(c == "true")
            } else {
                json_cell(c)
            };
            m.insert(k.clone(), value);
        }
        Value::Object(m)
    }

    fn encode(&self, cells: &[String], format: OutputFormat) -> String {
        match format {
            OutputFormat::Csv => {
                let fields: Vec<String> = cells.iter().map(|c| csv_field(c)).collect();
                format!("{}\n", fields.join(","))
            }
            OutputFormat::Jsonl => format!("{}\n", self.record(cells)),
        }
    }

    /// Decodes one line of an output file into cells (CSV) or checks its keys (JSONL).
    fn decode(&self, line: &str, format: OutputFormat) -> Option<Vec<String>> {
        match format {
            OutputFormat::Csv => {
                let mut r = csv::ReaderBuilder::new()
                    .has_headers(false)
                    .from_reader(line.as_bytes());
                let rec = r.records().next()?.ok()?;
                Some(rec.iter().map(str::to_string).collect())
            }
            OutputFormat::Jsonl => {
                let Value::Object(m) = serde_json::from_str::<Value>(line).ok()? else {
                    return None;
                };
                if m.len() != self.columns.len()
                    || !self.columns.iter().zip(m.keys()).all(|(a, b)| a == b)
                {
                    return None;
                }
                Some(
                    m.values()
                        .map(|v| match v {
                            Value::Null => String::new(),
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        })
                        .collect(),
                )
            }
        }
    }

    /// Checks the shard line of an existing output file (none without a shard) and returns its
    /// length in bytes.
    fn check_shard_line(
        &self,
        text: &str,
        want: Option<&ShardHeader>,
        format: OutputFormat,
        name: &str,
    ) -> Result<usize> {
        let first = text.split('\n').next().unwrap_or("");
        let different = |what: String| {
            Error::new(
                name,
                format!(
                    "{what}: the file was written by a different sweep (use another --out, or --force to overwrite)"
                ),
            )
        };
        match (want, ShardHeader::parse(first)) {
            (None, None) => Ok(0),
            (None, Some((got, _))) => Err(Error::new(
                name,
                format!(
                    "it is shard {} of a sweep: resume it with --shard {} (or use another --out, or --force to overwrite)",
                    got.shard, got.shard
                ),
            )),
            (Some(_), None) => Err(different("it has no shard line".into())),
            (Some(want), Some((got, got_format))) => {
                if got_format != format
                    || (&got.sweep, got.configurations) != (&want.sweep, want.configurations)
                {
                    return Err(different(format!(
                        "it is a shard of sweep {} ({} configurations), this is sweep {} ({})",
                        got.sweep, got.configurations, want.sweep, want.configurations
                    )));
                }
                if got.shard != want.shard {
                    return Err(Error::new(
                        name,
                        format!(
                            "it is shard {} of this sweep, not {}: give each shard its own --out",
                            got.shard, want.shard
                        ),
                    ));
                }
                if got.build != want.build {
                    return Err(Error::new(
                        name,
                        format!(
                            "it was written by gputraffic {}, this is {}: resuming would mix the rows of two builds (--force starts the shard again)",
                            got.build, want.build
                        ),
                    ));
                }
                Ok(first.len() + 1)
            }
        }
    }

    /// Checks an existing output file (after its shard line) against this sweep and `shard`,
    /// marks its configurations done and returns the byte length of its complete part (a torn
    /// last line is not).
    fn check_existing(
        &self,
        text: &str,
        format: OutputFormat,
        name: &str,
        done: &mut [bool],
        shard: Option<Shard>,
    ) -> Result<usize> {
        let complete = text.rfind('\n').map_or(0, |i| i + 1);
        let mut lines = text[..complete].split_inclusive('\n');
        let different = |what: String| {
            Error::new(
                name,
                format!(
                    "{what}: the file was written by a different sweep (use another --out, or --force to overwrite)"
                ),
            )
        };
        if format == OutputFormat::Csv {
            let header = lines.next().unwrap_or("");
            if header != self.encode(&self.columns, format) {
                return Err(different("its columns differ".into()));
            }
        }
        for (n, line) in lines.enumerate() {
            let line = line.trim_end_matches('\n');
            let cells = self
                .decode(line, format)
                .ok_or_else(|| different(format!("row {} cannot be read", n + 1)))?;
            let index: usize = cells
                .first()
                .and_then(|c| c.parse().ok())
                .filter(|&i| i < self.len())
                .ok_or_else(|| different(format!("row {} has no valid config index", n + 1)))?;
            if cells.len() != self.columns.len()
                || cells[..self.identity_columns] != self.identity(index)[..]
            {
                return Err(different(format!(
                    "row {} (config {index}) is not this sweep's",
                    n + 1
                )));
            }
            if let Some(s) = shard.filter(|s| !s.contains(index)) {
                return Err(different(format!(
                    "row {} (config {index}) is not in shard {s}",
                    n + 1
                )));
            }
            if done[index] {
                return Err(Error::new(name, format!("config {index} appears twice")));
            }
            done[index] = true;
        }
        Ok(complete)
    }

    /// Rewrites the finished file in configuration order (via a temporary file and a rename),
    /// its shard line (`sharded`) and CSV header first.
    fn sort_file(&self, out: &Path, format: OutputFormat, sharded: bool) -> Result<()> {
        let text = crate::error::read_file(out)?;
        let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
        let head = usize::from(sharded) + usize::from(format == OutputFormat::Csv);
        let header: Vec<&str> = lines.drain(..head.min(lines.len())).collect();
        let index = |l: &str| -> usize {
            self.decode(l.trim_end_matches('\n'), format)
                .and_then(|c| c.first().and_then(|v| v.parse().ok()))
                .unwrap_or(usize::MAX)
        };
        let mut keyed: Vec<(usize, &str)> = lines.into_iter().map(|l| (index(l), l)).collect();
        keyed.sort_by_key(|(i, _)| *i);
        let mut sorted = String::with_capacity(text.len());
        sorted.extend(header);
        sorted.extend(keyed.iter().map(|(_, l)| *l));
        crate::error::write_file_atomically(out, sorted.as_bytes())
    }
}

/// A cell as a JSON value: a number where it is one, null where empty.
fn json_cell(c: &str) -> Value {
    if c.is_empty() {
        return Value::Null;
    }
    if let Ok(i) = c.parse::<i64>() {
        return Value::from(i);
    }
    match c.parse::<f64>() {
        Ok(f) if f.is_finite() => Value::from(f),
        _ => Value::String(c.to_string()),
    }
}

/// The model quantities every row carries per model.
const MODEL_QUANTITIES: [&str; 6] = [
    "l1_load_bytes",
    "l2_load_bytes",
    "l2_store_bytes",
    "dram_load_bytes",
    "dram_store_bytes",
    "time_s",
];

/// Derived columns, in order ([`derived`] then [`su_ratios`]).
const DERIVED: [&str; 21] = [
    "l1_v_up_bytes",
    "l1_v_comp_bytes",
    "l1_v_red_bytes",
    "l1_v_down_bytes",
    "l1_v_alloc_bytes",
    "l1_v_cache_bytes",
    "l1_oversubscription",
    "l1_redundant_hit_rate",
    "l2_v_up_bytes",
    "l2_v_comp_bytes",
    "l2_v_red_bytes",
    "l2_v_down_bytes",
    "l2_v_alloc_bytes",
    "l2_v_cache_bytes",
    metrics::L2_OVERSUBSCRIPTION,
    metrics::L2_REDUNDANT_HIT_RATE,
    metrics::SU_SMX_MISS_RATIO,
    metrics::SU_L2_MISS_RATIO,
    metrics::SU_SMX_CAPACITY_TERM,
    metrics::SU_SMX_SCHEDULING_TERM,
    metrics::SU_L2_CAPACITY_TERM,
];

/// One cache level's volumes in the terms of Ernst et al. Sect. 4.5 (bytes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LevelVolumes {
    /// V_up: requests into the level.
    pub up: f64,
    /// V_comp: first touches by the threads sharing the level.
    pub comp: f64,
    /// V_down: misses to the next level.
    pub down: f64,
    /// V_alloc: what the threads sharing the level allocate.
    pub alloc: f64,
    /// V_cache: the level's capacity.
    pub cache: f64,
}

impl LevelVolumes {
    /// V_red = V_up − V_comp.
    pub fn redundant(&self) -> f64 {
        self.up - self.comp
    }

    /// Eq. (4): O = V_alloc / V_cache.
    pub fn oversubscription(&self) -> f64 {
        ernst2023::oversubscription(self.alloc, self.cache)
    }

    /// R_hit = 1 − (V_down − V_comp) / V_red: the hit rate in the redundant volume (eq. (5)
    /// solved for it); undefined without redundant volume.
    pub fn redundant_hit_rate(&self) -> Option<f64> {
        let red = self.redundant();
        (red > 0.0).then(|| 1.0 - (self.down - self.comp) / red)
    }

    fn cells(&self, level: &'static str) -> [(String, Option<f64>); 8] {
        [
            (format!("{level}_v_up_bytes"), Some(self.up)),
            (format!("{level}_v_comp_bytes"), Some(self.comp)),
            (format!("{level}_v_red_bytes"), Some(self.redundant())),
            (format!("{level}_v_down_bytes"), Some(self.down)),
            (format!("{level}_v_alloc_bytes"), Some(self.alloc)),
            (format!("{level}_v_cache_bytes"), Some(self.cache)),
            (
                format!("{level}_oversubscription"),
                Some(self.oversubscription()),
            ),
            (
                format!("{level}_redundant_hit_rate"),
                self.redundant_hit_rate(),
            ),
        ]
    }
}

/// The L1 and L2 volumes of a simulated launch. L1: V_up the load sectors, V_comp each block's
/// distinct sectors (compulsory with one block per L1), V_down the load misses, V_alloc the
/// resident blocks' 128 B lines (blocks per SM × mean distinct lines per block), V_cache the L1.
/// L2: V_up the read sectors from the SMs, V_comp the infinite-L2 DRAM reads, V_down the DRAM
/// reads, V_alloc the lines (loads and stores) of one wave of blocks in the middle of the grid
/// ([`ernst2023::wave_metrics`]), V_cache one partition's share of the L2 (the duplicating split
/// L2 holds about that much distinct data; the ernst2023 model's convention).
pub fn level_volumes(report: &Report, bound: &Bound) -> Result<[LevelVolumes; 2]> {
    let c = &report.counts;
    let (hw, launch) = (&bound.hw, &bound.launch);
    let blocks = launch.total_blocks.max(1) as f64;
    let per_sm = launch.occupancy.blocks_per_sm as f64;
    let l1 = LevelVolumes {
        up: metrics::sector_bytes(c.l1.load_sectors),
        comp: metrics::sector_bytes(c.l1.block_unique_load_sectors),
        down: metrics::sector_bytes(c.l1.load_miss_sectors),
        alloc: per_sm * c.l1.block_unique_load_lines as f64 / blocks * hw.l1.line_bytes as f64,
        cache: launch.l1_bytes(hw) as f64,
    };
    let wave_blocks = launch.occupancy.blocks_per_sm as u64 * hw.sm.count as u64;
    let wave = ernst2023::wave_metrics(launch, wave_blocks, hw.l2.line_bytes as u64, None)?;
    let l2 = LevelVolumes {
        up: metrics::sector_bytes(c.l2.read_sectors),
        comp: metrics::sector_bytes(c.compulsory_dram_read_sectors.unwrap_or(0)),
        down: metrics::sector_bytes(c.data_dram_read_sectors()),
        alloc: wave.load_bytes + wave.store_bytes,
        cache: hw.l2.size_bytes as f64 / hw.l2.partitions.max(1) as f64,
    };
    Ok([l1, l2])
}

fn derived(report: &Report, bound: &Bound) -> Result<Vec<(String, Option<f64>)>> {
    let [l1, l2] = level_volumes(report, bound)?;
    Ok(l1.cells("l1").into_iter().chain(l2.cells("l2")).collect())
}

/// Su et al.'s miss ratios from the simulated volumes: formula (7) solved for the SMX miss ratio
/// (L2 loads per block over n^ld,net_L2,B, minus one) and (11) for the L2 miss ratio (DRAM loads
/// per group over n^ld,net_GM,G, minus one), next to the model's factors of δ, η and ε — the
/// inputs of `fit --model su2015`, from the su2015 prediction's `fields` (`None` where the model
/// does not apply to the kernel: empty cells).
fn su_ratios(
    report: &Report,
    fields: Option<&Map<String, Value>>,
) -> Vec<(&'static str, Option<f64>)> {
    let get = |k: &str| fields.and_then(|f| f.get(k)).and_then(Value::as_f64);
    let per = |metric: &str, count: &str, net: &str| -> Option<f64> {
        let bytes = metrics::sector_bytes(report.metric(metric)?);
        Some(bytes / get("value_bytes")? / get(count)? / get(net)? - 1.0)
    };
    vec![
        (
            metrics::SU_SMX_MISS_RATIO,
            per(metrics::L2_READ, "thread_blocks", "n_ld_net_l2_b"),
        ),
        (
            metrics::SU_L2_MISS_RATIO,
            per(metrics::DRAM_READ, "groups", "n_ld_net_gm_g"),
        ),
        (metrics::SU_SMX_CAPACITY_TERM, get("smx_capacity_term")),
        (metrics::SU_SMX_SCHEDULING_TERM, get("smx_scheduling_term")),
        (
            metrics::SU_L2_CAPACITY_TERM,
            get("l2_miss_ratio_per_epsilon"),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every column a sweep can write is explained in `models::describe_column`: the identity, the
    /// sampled intervals, a `--set` dimension, the metrics of kernels with atomics and shared
    /// memory, the derived cache quantities and every model's predictions; and so is each
    /// column `simulate --compare` adds.
    #[test]
    fn every_sweep_column_has_a_quantity() {
        for (kernel, set) in [
            ("star4", "nz=16,32"),
            ("histogram", "nbins=64"),
            ("jacobi2d-shared", "nx=64"),
        ] {
            let spec = SweepSpec {
                kernel: KernelSource::Load(kernel.into()),
                hws: vec!["h200".into()],
                blocks: vec!["32x4x1".into()],
                domains: Vec::new(),
                sets: vec![set.into()],
                l1_scales: vec![1.0],
                l2_scales: vec![0.5],
                models: models::MODELS.iter().collect(),
                clock: "base".into(),
                sample: Some(SampleOptions::default()),
            };
            let sweep = Sweep::plan(&spec).unwrap();
            for column in sweep.columns() {
                let q = crate::models::describe_column(column)
                    .unwrap_or_else(|| panic!("{kernel}: sweep column '{column}' has no entry"));
                assert!(!q.label.is_empty() && !q.meaning.is_empty(), "{column}");
            }
        }
        for v in metrics::PREDICTED_QUANTITIES {
            for column in [
                format!("predicted_{}", v.name),
                format!("rel_diff_{}", v.name),
            ] {
                assert!(
                    crate::models::describe_column(&column).is_some(),
                    "{column}"
                );
            }
        }
        assert!(crate::models::describe_column("predicted_time_s").is_some());
        assert!(crate::models::describe_column("no_such_column").is_none());
    }

    #[test]
    fn patterned_columns_are_described_from_their_parts() {
        let q = crate::models::describe_column(metrics::DRAM_READ_BYTES_PER_LUP).unwrap();
        assert_eq!(
            (q.label.as_ref(), q.unit),
            ("DRAM reads per update", "B/LUP")
        );
        assert_eq!(q.axis_label(&[8.0]), "DRAM reads per update [B/LUP]");
        let q = crate::models::describe_column("ernst2023_dram_load_bytes").unwrap();
        assert_eq!(
            (q.label.as_ref(), q.unit),
            ("ernst2023 DRAM load volume", "B")
        );
        let q = crate::models::describe_column("layer_condition_time_s").unwrap();
        assert_eq!(
            q.axis_label(&[1.06e-5]),
            "layer-condition predicted time [µs]"
        );
        let q = crate::models::describe_column("l1_redundant_hit_rate").unwrap();
        assert!(q.out_of_range(1.0008) && !q.out_of_range(0.93));
        let q = crate::models::describe_column(metrics::SU_SMX_MISS_RATIO).unwrap();
        assert!(q.out_of_range(-0.30) && !q.out_of_range(0.01));
        assert_eq!(
            crate::models::describe_column("set_chunk_z").unwrap().label,
            "chunk_z"
        );
    }

    #[test]
    fn square_xy_series_keeps_the_total() {
        let d = expand_domains(&["square-xy:total=2^20:from=16:to=128".to_string()]).unwrap();
        assert_eq!(
            d,
            [
                [16, 16, 4096],
                [32, 32, 1024],
                [64, 64, 256],
                [128, 128, 64]
            ]
        );
        let d = expand_domains(&["square-xy:total=512*1024*1024:from=64:to=4096:points=3".into()])
            .unwrap();
        assert_eq!(d, [[64, 64, 131072], [512, 512, 2048], [4096, 4096, 32]]);
        assert!(expand_domains(&["square-xy:total=10:from=4:to=8".into()]).is_err());
        assert!(expand_domains(&["square-xy:from=4:to=8".into()]).is_err());
    }

    #[test]
    fn cross_product_varies_the_last_list_fastest() {
        let lists = vec![
            ("a".to_string(), vec!["1".to_string(), "2".to_string()]),
            ("b".to_string(), vec!["x".to_string(), "y".to_string()]),
        ];
        let c: Vec<String> = cross_product(&lists)
            .iter()
            .map(|c| c.iter().map(|(n, v)| format!("{n}{v}")).collect())
            .collect();
        assert_eq!(c, ["a1bx", "a1by", "a2bx", "a2by"]);
    }

    #[test]
    fn redundant_hit_rate_by_hand() {
        let v = LevelVolumes {
            up: 1000.0,
            comp: 200.0,
            down: 400.0,
            alloc: 3.0,
            cache: 2.0,
        };
        // V_red = 800; capacity misses 200 of them: R_hit = 0.75.
        assert_eq!(v.redundant_hit_rate(), Some(0.75));
        assert_eq!(v.oversubscription(), 1.5);
        let none = LevelVolumes { up: 200.0, ..v };
        assert_eq!(none.redundant_hit_rate(), None);
    }
}
