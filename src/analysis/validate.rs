//! Validation against hardware: simulates every [measured](crate::analysis::measured) launch and compares
//! the simulated counts with the counters, per metric (n, median / mean / largest relative error,
//! the worst launch) and by Spearman's rank correlation across the block shapes of one kernel,
//! domain and parameter set — the question a block-shape autotuner asks of a simulator is the
//! order, not only the size.
//!
//! Relative error is (simulated − measured) / measured; the statistics summarise its size, the
//! worst launch keeps its sign.

use crate::analysis::measured::MeasuredLaunch;
use crate::analysis::side_by_side;
use crate::error::{Error, Result};
use crate::metrics;
use crate::report::pairs_as_map;
use crate::sim::SimOptions;
use crate::sim::sample::SampleOptions;
use serde::{Serialize, Serializer};
use serde_json::Value;
use std::collections::BTreeMap;

pub use super::measured::compared_metrics;

/// How `gputraffic validate` writes its report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValidateFormat {
    /// Aligned columns for people: per metric, then per kernel.
    Table,
    /// One JSON object with the statistics and every launch (what `plot validation` reads).
    Json,
}

impl crate::choice::Choice for ValidateFormat {
    const CHOICES: &'static [(Self, &'static str, &'static str)] = &[
        (
            ValidateFormat::Table,
            "table",
            "Aligned columns for people: per metric, then per kernel",
        ),
        (
            ValidateFormat::Json,
            "json",
            "One JSON object with the statistics and every launch (what `plot validation` reads)",
        ),
    ];
}

/// A group needs this many launches for a rank correlation to say anything.
const MIN_RANKED: usize = 3;

/// One metric of one launch. Serialised as `{"measured", "simulated", "rel_err"}` (the last
/// from [`Pair::rel_err`], `null` when undefined).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pair {
    /// The counter value.
    pub measured: f64,
    /// The simulator's value.
    pub simulated: f64,
}

impl Pair {
    /// (simulated − measured) / measured; 0 when both are 0, `None` when only measured is.
    pub fn rel_err(&self) -> Option<f64> {
        let (m, s) = (self.measured, self.simulated);
        if m != 0.0 {
            Some((s - m) / m)
        } else {
            (s == 0.0).then_some(0.0)
        }
    }
}

/// The keys of a [`Pair`] in JSON, in order.
#[derive(Serialize)]
struct PairJson {
    measured: f64,
    simulated: f64,
    rel_err: Option<f64>,
}

impl Serialize for Pair {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        PairJson {
            measured: self.measured,
            simulated: self.simulated,
            rel_err: self.rel_err(),
        }
        .serialize(serializer)
    }
}

/// A measured launch with its simulated counterpart.
#[derive(Debug, Clone)]
pub struct LaunchResult {
    /// The measurement.
    pub launch: MeasuredLaunch,
    /// Metrics that both sides have, in [`compared_metrics`] order.
    pub pairs: Vec<(&'static str, Pair)>,
    /// The time model's estimate at the base clock, with what it was made of.
    pub time: Option<crate::timing::TimeEstimate>,
}

/// The summary of one metric over a set of launches. Serialised with its fields in this order
/// (undefined values `null`); in the per-kernel statistics of the JSON report without
/// `spearman_groups`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricStats {
    /// Launches with both values.
    pub n: usize,
    /// Median of |relative error| (over launches where it is defined).
    pub median_rel_err: Option<f64>,
    /// Mean of |relative error|.
    pub mean_rel_err: Option<f64>,
    /// Largest |relative error|.
    pub max_rel_err: Option<f64>,
    /// The launch with the largest |relative error|.
    pub worst: Option<String>,
    /// Its signed relative error.
    pub worst_rel_err: Option<f64>,
    /// Median over groups of the Spearman correlation between measured and simulated values
    /// across block shapes; `None` where no group has a defined correlation.
    pub spearman: Option<f64>,
    /// The correlation of each group (`None`: constant on one side).
    pub spearman_groups: BTreeMap<String, Option<f64>>,
}

/// How well the time model picks a block shape within one group of launches (same kernel, domain
/// and parameters): what a user ranking shapes by predicted time would get.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ShapePick {
    /// The group (kernel, domain, parameters).
    pub group: String,
    /// Launches in the group with a measured and a predicted duration.
    pub shapes: usize,
    /// Measured time of the fastest shape / measured time of the shape the model ranks first.
    pub pick_efficiency: f64,
    /// The same for the best measured time among the model's first three.
    pub top3_efficiency: f64,
    /// The launch the model ranks first.
    pub picked: String,
    /// The launch that was fastest.
    pub fastest: String,
    /// Spearman's correlation of predicted and measured time over all shapes of the group.
    pub spearman: Option<f64>,
    /// The same over the shapes measured within 1.5x of the fastest (`None` below 3 shapes).
    pub spearman_near_fastest: Option<f64>,
}

/// Ranks each group's shapes by predicted duration (groups of at least three launches).
pub fn shape_picks(rows: &[LaunchResult]) -> Vec<ShapePick> {
    let mut groups: BTreeMap<String, Vec<(&LaunchResult, Pair)>> = BTreeMap::new();
    for r in rows {
        if let Some((_, p)) = r.pairs.iter().find(|(m, _)| *m == metrics::DURATION) {
            groups.entry(r.launch.group()).or_default().push((r, *p));
        }
    }
    groups
        .into_iter()
        .filter(|(_, g)| g.len() >= MIN_RANKED)
        .map(|(group, g)| {
            let by_measured = |a: &&(&LaunchResult, Pair), b: &&(&LaunchResult, Pair)| {
                a.1.measured.total_cmp(&b.1.measured)
            };
            let fastest = g.iter().min_by(by_measured).expect("a non-empty group");
            let mut ranked: Vec<&(&LaunchResult, Pair)> = g.iter().collect();
            // Stable: ties keep input order, so the pick does not depend on thread count.
            ranked.sort_by(|a, b| a.1.simulated.total_cmp(&b.1.simulated));
            let best_of = |k: usize| {
                ranked[..k.min(ranked.len())]
                    .iter()
                    .map(|r| r.1.measured)
                    .fold(f64::INFINITY, f64::min)
            };
            let rank = |sel: &[&(&LaunchResult, Pair)]| {
                let m: Vec<f64> = sel.iter().map(|r| r.1.measured).collect();
                let p: Vec<f64> = sel.iter().map(|r| r.1.simulated).collect();
                (sel.len() >= MIN_RANKED)
                    .then(|| crate::analysis::stats::spearman(&m, &p))
                    .flatten()
            };
            let near: Vec<&(&LaunchResult, Pair)> = g
                .iter()
                .filter(|r| r.1.measured <= 1.5 * fastest.1.measured)
                .collect();
            ShapePick {
                shapes: g.len(),
                pick_efficiency: fastest.1.measured / best_of(1),
                top3_efficiency: fastest.1.measured / best_of(3),
                picked: ranked[0].0.launch.label(),
                fastest: fastest.0.launch.label(),
                spearman: rank(&g.iter().collect::<Vec<_>>()),
                spearman_near_fastest: rank(&near),
                group,
            }
        })
        .collect()
}

/// Everything `gputraffic validate` reports.
#[derive(Debug, Clone)]
pub struct Validation {
    /// GPU config name.
    pub hw: String,
    /// The measured file.
    pub measured: String,
    /// One result per launch, in input order.
    pub rows: Vec<LaunchResult>,
    /// Per metric over all launches, in [`compared_metrics`] order (metrics no launch has are
    /// left out).
    pub metrics: Vec<(&'static str, MetricStats)>,
    /// The same per kernel (trace).
    pub kernels: BTreeMap<String, Vec<(&'static str, MetricStats)>>,
    /// Per group of block shapes: how well ranking by predicted time picks the fastest.
    pub groups: Vec<ShapePick>,
}

/// Simulates every launch on the GPU config `hw` (in parallel; `progress(done, total)` after
/// each) and summarises the comparison. `measured` names the input in the report.
pub fn validate(
    launches: Vec<MeasuredLaunch>,
    hw: &str,
    measured: &str,
    sample: Option<SampleOptions>,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Validation> {
    let hw = crate::input::hw::HwConfig::load(hw)?;
    // Bind everything first: a bad launch is reported before minutes of simulation.
    let bound = bind_all(&launches, &hw)?;
    validate_resumable(launches, bound, &hw, measured, sample, None, progress)
}

/// Where a validation keeps its [`journal`](crate::analysis::journal) of finished launches.
#[derive(Debug, Clone, Copy)]
pub struct JournalOptions<'a> {
    /// The journal file (see [`journal::path_for`](crate::analysis::journal::path_for)).
    pub path: &'a std::path::Path,
    /// Continue the run the journal holds instead of starting afresh.
    pub resume: bool,
    /// Start afresh even when a journal of an interrupted run is there.
    pub replace: bool,
}

/// [`validate`] of `launches` already bound to `hw_config` (by [`bind_all`]), recording each
/// finished launch in a journal when `journal` is given (and continuing the run it holds when
/// asked): the report is the same, interrupted or not. The journal is removed once every launch
/// has finished.
pub fn validate_resumable(
    launches: Vec<MeasuredLaunch>,
    bound: Vec<crate::Bound>,
    hw_config: &crate::input::hw::HwConfig,
    measured: &str,
    sample: Option<SampleOptions>,
    journal: Option<JournalOptions>,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Validation> {
    use crate::analysis::journal::{self, Finished, Journal};
    let total = launches.len();
    let labels: Vec<String> = launches
        .iter()
        .map(|l| format!("{} {}", l.kernel, l.label()))
        .collect();
    let (journal, mut done_before) = match journal {
        None => (None, BTreeMap::new()),
        Some(j) => {
            let fingerprint = journal::fingerprint(hw_config, sample.is_some(), &labels);
            if j.resume {
                let (journal, finished) =
                    Journal::resume(j.path, &fingerprint, &labels, &simulated_metrics())?;
                (Some(journal), finished)
            } else {
                (
                    Some(Journal::start(j.path, &fingerprint, total, j.replace)?),
                    BTreeMap::new(),
                )
            }
        }
    };
    let done = std::sync::atomic::AtomicUsize::new(done_before.len());
    progress(done_before.len(), total);
    let clock = hw_config.sm.base_clock_ghz;
    let to_run: Vec<usize> = (0..total)
        .filter(|i| !done_before.contains_key(i))
        .collect();
    let fresh = side_by_side::map(&to_run, |&i| {
        let (b, l) = (&bound[i], &launches[i]);
        let opts = SimOptions {
            compulsory: false,
            sample,
            ..SimOptions::default()
        };
        let report = b.simulate(&opts, clock).map_err(|e| in_launch(l, e))?;
        let finished = Finished {
            simulated: simulated_values(&report),
            time: report.time,
        };
        if let Some(j) = &journal {
            j.record(i, &labels[i], &finished)?;
        }
        let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        progress(n, total);
        Ok((i, finished))
    })?;
    done_before.extend(fresh);
    if let Some(j) = journal {
        j.remove();
    }
    let pairs: Vec<_> = launches
        .iter()
        .zip(done_before.into_values())
        .map(|(l, f)| (paired(l, &f.simulated), f.time))
        .collect();
    let rows: Vec<LaunchResult> = launches
        .into_iter()
        .zip(pairs)
        .map(|(launch, (pairs, time))| LaunchResult {
            launch,
            pairs,
            time,
        })
        .collect();
    let metrics = summarise(&rows.iter().collect::<Vec<_>>());
    let mut by_kernel: BTreeMap<String, Vec<&LaunchResult>> = BTreeMap::new();
    for r in &rows {
        by_kernel.entry(r.launch.kernel_name()).or_default().push(r);
    }
    let kernels = by_kernel
        .into_iter()
        .map(|(k, rs)| (k, summarise(&rs)))
        .collect();
    let groups = shape_picks(&rows);
    Ok(Validation {
        hw: hw_config.name.clone(),
        measured: measured.to_string(),
        rows,
        metrics,
        kernels,
        groups,
    })
}

/// Every launch bound to `hw`, each checked against the grid the hardware ran; the first bad
/// launch is the error ([`bind_launches`] without the lifts' warnings).
pub fn bind_all(
    launches: &[MeasuredLaunch],
    hw: &crate::input::hw::HwConfig,
) -> Result<Vec<crate::Bound>> {
    bind_launches(launches, hw).map(|(bound, _)| bound)
}

/// Every launch bound to `hw`, each checked against the grid the hardware ran; the first bad
/// launch is the error. A `.ptx`/`.cu` kernel is lifted for `hw` with the launch's lift
/// settings (once for the launches that share them); the lifts' warnings come back too, each
/// once.
pub fn bind_launches(
    launches: &[MeasuredLaunch],
    hw: &crate::input::hw::HwConfig,
) -> Result<(Vec<crate::Bound>, Vec<String>)> {
    let mut lifted = BTreeMap::new();
    let mut warnings = Vec::new();
    let mut bound = Vec::with_capacity(launches.len());
    for l in launches {
        bound.push(bind(l, hw, &mut lifted, &mut warnings)?);
    }
    Ok((bound, warnings))
}

fn in_launch(l: &MeasuredLaunch, e: Error) -> Error {
    Error::new(&l.origin, format!("{}: {}", l.label(), e.message))
}

/// The kernels lifted so far, by file, settings and parameter values.
type LiftedKernels = BTreeMap<String, crate::input::trace::Kernel>;

fn bind(
    l: &MeasuredLaunch,
    hw: &crate::input::hw::HwConfig,
    lifted: &mut LiftedKernels,
    warnings: &mut Vec<String>,
) -> Result<crate::Bound> {
    use crate::input::kernel_source::KernelSource;
    let kernel = if crate::input::ptx::is_liftable(&l.kernel) {
        let set: Vec<String> = l
            .request
            .set
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let key = format!("{}\n{:?}\n{set:?}", l.kernel, l.lift);
        match lifted.get(&key) {
            Some(k) => k.clone(),
            None => {
                // a lift's error names where the manifest names the kernel
                let at = |e: Error| match &l.kernel_at {
                    Some(at) => Error::new(at, format!("{}: {}", e.source_name, e.message)),
                    None => in_launch(l, e),
                };
                let (source, w) =
                    KernelSource::resolve(&l.kernel, &l.lift, || Ok(hw.clone()), &set)
                        .map_err(at)?;
                let k = source.kernel().map_err(at)?;
                for w in w {
                    if !warnings.contains(&w) {
                        warnings.push(w);
                    }
                }
                lifted.insert(key, k.clone());
                k
            }
        }
    } else {
        crate::input::kernel_source::load(&l.kernel).map_err(|e| in_launch(l, e))?
    };
    let bound =
        crate::Bound::with_hw(kernel, hw.clone(), &l.request).map_err(|e| in_launch(l, e))?;
    if let Some(grid) = l.grid {
        let simulated = bound.launch.grid.map(u64::from);
        if simulated != grid {
            return Err(Error::new(
                &l.origin,
                format!(
                    "{}: the hardware ran grid {grid:?} but the trace gives {simulated:?} (domain or parameters differ from the measured launch)",
                    l.label()
                ),
            ));
        }
    }
    Ok(bound)
}

/// Every name [`simulated_values`] can give.
fn simulated_metrics() -> Vec<&'static str> {
    compared_metrics()
        .into_iter()
        .chain(metrics::ATOMIC)
        .chain(metrics::SHARED)
        .collect()
}

/// What the simulation gives for each metric it can be compared on.
fn simulated_values(report: &crate::report::Report) -> Vec<(&'static str, f64)> {
    let mut simulated: Vec<(&'static str, f64)> = report
        .metrics()
        .into_iter()
        .map(|(m, v)| (m, v as f64))
        .collect();
    if let Some(t) = &report.time {
        // Against the time model at the base clock: Nsight Compute locks clocks to base.
        simulated.push((metrics::DURATION, t.predicted_s * 1e9));
    }
    simulated
}

/// The simulated values `l` has measured counterparts of.
fn paired(l: &MeasuredLaunch, simulated: &[(&'static str, f64)]) -> Vec<(&'static str, Pair)> {
    simulated
        .iter()
        .copied()
        .filter_map(|(m, s)| {
            l.counters.get(m).map(|&measured| {
                (
                    m,
                    Pair {
                        measured,
                        simulated: s,
                    },
                )
            })
        })
        .collect()
}

/// Per-metric statistics over `rows`, in [`compared_metrics`] order, then the shared-memory
/// metrics ([`metrics::SHARED`]) where launches have them.
pub fn summarise(rows: &[&LaunchResult]) -> Vec<(&'static str, MetricStats)> {
    compared_metrics()
        .into_iter()
        .chain(metrics::SHARED)
        .filter_map(|m| {
            let have: Vec<(&LaunchResult, Pair)> = rows
                .iter()
                .filter_map(|r| r.pairs.iter().find(|(n, _)| *n == m).map(|(_, p)| (*r, *p)))
                .collect();
            (!have.is_empty()).then(|| (m, metric_stats(&have)))
        })
        .collect()
}

fn metric_stats(have: &[(&LaunchResult, Pair)]) -> MetricStats {
    let errors: Vec<(f64, &LaunchResult)> = have
        .iter()
        .filter_map(|(r, p)| p.rel_err().map(|e| (e, *r)))
        .collect();
    let sizes: Vec<f64> = errors.iter().map(|(e, _)| e.abs()).collect();
    // The first launch of the largest size, so ties resolve in input order.
    let worst = errors
        .iter()
        .fold(None::<&(f64, &LaunchResult)>, |best, e| match best {
            Some(b) if b.0.abs() >= e.0.abs() => Some(b),
            _ => Some(e),
        });
    let mut groups: BTreeMap<String, Vec<Pair>> = BTreeMap::new();
    for (r, p) in have {
        groups.entry(r.launch.group()).or_default().push(*p);
    }
    let spearman_groups: BTreeMap<String, Option<f64>> = groups
        .into_iter()
        .filter(|(_, ps)| ps.len() >= MIN_RANKED)
        .map(|(g, ps)| {
            let measured: Vec<f64> = ps.iter().map(|p| p.measured).collect();
            let simulated: Vec<f64> = ps.iter().map(|p| p.simulated).collect();
            (g, crate::analysis::stats::spearman(&measured, &simulated))
        })
        .collect();
    let defined: Vec<f64> = spearman_groups.values().filter_map(|v| *v).collect();
    MetricStats {
        n: have.len(),
        median_rel_err: crate::analysis::stats::median(&sizes),
        mean_rel_err: (!sizes.is_empty()).then(|| sizes.iter().sum::<f64>() / sizes.len() as f64),
        max_rel_err: worst.map(|w| w.0.abs()),
        worst: worst.map(|w| w.1.launch.label()),
        worst_rel_err: worst.map(|w| w.0),
        spearman: crate::analysis::stats::median(&defined),
        spearman_groups,
    }
}

/// A [`MetricStats`] without its `spearman_groups`: the per-kernel statistics in JSON.
#[derive(Serialize)]
struct KernelStatsJson<'a> {
    n: usize,
    median_rel_err: Option<f64>,
    mean_rel_err: Option<f64>,
    max_rel_err: Option<f64>,
    worst: Option<&'a str>,
    worst_rel_err: Option<f64>,
    spearman: Option<f64>,
}

impl<'a> From<&'a MetricStats> for KernelStatsJson<'a> {
    fn from(s: &'a MetricStats) -> Self {
        KernelStatsJson {
            n: s.n,
            median_rel_err: s.median_rel_err,
            mean_rel_err: s.mean_rel_err,
            max_rel_err: s.max_rel_err,
            worst: s.worst.as_deref(),
            worst_rel_err: s.worst_rel_err,
            spearman: s.spearman,
        }
    }
}

/// A kernel's per-metric statistics in JSON: `{metric: stats without spearman_groups}`.
struct KernelStats<'a>(&'a [(&'static str, MetricStats)]);

impl Serialize for KernelStats<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(m, s)| (m, KernelStatsJson::from(s))))
    }
}

/// The keys of a [`Validation`] in JSON, in order.
#[derive(Serialize)]
struct ValidationJson<'a> {
    hw: &'a str,
    measured: &'a str,
    launches: usize,
    #[serde(serialize_with = "pairs_as_map")]
    metrics: &'a [(&'static str, MetricStats)],
    kernels: BTreeMap<&'a str, KernelStats<'a>>,
    groups: &'a [ShapePick],
    rows: Vec<RowJson<'a>>,
}

/// One launch of the JSON report: what was run, and each metric's [`Pair`].
#[derive(Serialize)]
struct RowJson<'a> {
    id: Option<u64>,
    launch: String,
    kernel: String,
    group: String,
    domain: Option<[i64; 3]>,
    block: Option<[u32; 3]>,
    #[serde(serialize_with = "pairs_as_map")]
    set: &'a [(String, i64)],
    #[serde(serialize_with = "pairs_as_map")]
    metrics: &'a [(&'static str, Pair)],
    #[serde(skip_serializing_if = "Option::is_none")]
    time: Option<&'a crate::timing::TimeEstimate>,
}

impl Serialize for Validation {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let rows = self
            .rows
            .iter()
            .map(|r| {
                let l = &r.launch;
                RowJson {
                    id: l.id,
                    launch: l.label(),
                    kernel: l.kernel_name(),
                    group: l.group(),
                    domain: l.request.domain,
                    block: l.request.block,
                    set: &l.request.set,
                    metrics: &r.pairs,
                    time: r.time.as_ref(),
                }
            })
            .collect();
        ValidationJson {
            hw: &self.hw,
            measured: &self.measured,
            launches: self.rows.len(),
            metrics: &self.metrics,
            kernels: self
                .kernels
                .iter()
                .map(|(k, stats)| (k.as_str(), KernelStats(stats)))
                .collect(),
            groups: &self.groups,
            rows,
        }
        .serialize(serializer)
    }
}

impl Validation {
    /// The JSON report: `{"hw", "measured", "launches", "metrics": {metric: stats}, "kernels":
    /// {kernel: {metric: stats}}, "groups": [...], "rows": [...]}` (see its [`Serialize`] impl).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).expect("JSON of plain values")
    }

    /// The report in `format`, ending with a newline.
    pub fn render(&self, format: ValidateFormat) -> String {
        match format {
            ValidateFormat::Table => self.to_table(),
            ValidateFormat::Json => format!(
                "{}\n",
                serde_json::to_string_pretty(self).expect("JSON of plain values")
            ),
        }
    }

    /// The human-readable report: one line per metric, then the same per kernel.
    pub fn to_table(&self) -> String {
        let mut out = format!(
            "{} launches of {} simulated on {}. Relative error = (simulated - measured) / measured; \
             median, mean and max of its size; spearman: rank correlation across block shapes \
             (median over kernel/domain groups).\n\n",
            self.rows.len(),
            self.measured,
            self.hw
        );
        // The times compared are the time model's at the base clock, as Nsight Compute measures.
        let time = self.rows.iter().find_map(|r| r.time.as_ref());
        let duration = metrics::DURATION;
        if let Some(t) = time.filter(|_| self.metrics.iter().any(|(m, _)| *m == duration)) {
            let which = match t.clock {
                crate::timing::Clock::Base => "the base clock, which Nsight Compute locks",
                other => other.describe(),
            };
            out += &format!(
                "{duration} predicted at {:.2} GHz ({which}).\n\n",
                t.clock_ghz
            );
        }
        out += &stats_table(&self.metrics, None);
        for (kernel, stats) in &self.kernels {
            out += &format!("\n{kernel}\n");
            out += &stats_table(stats, Some(kernel));
        }
        if !self.groups.is_empty() {
            out += "\nPicking the block shape by predicted time (pick: fastest measured / measured \
                    time of the model's first; top 3: the same for the best of its first three)\n";
            out += &format!(
                "{:<34} {:>6} {:>7} {:>7} {:>9} {:>11}  picked\n",
                "group", "shapes", "pick", "top 3", "spearman", "sp. <=1.5x"
            );
            let r = |v: Option<f64>| v.map_or("-".into(), |r| format!("{r:.3}"));
            for g in &self.groups {
                out += &format!(
                    "{:<34} {:>6} {:>6.1}% {:>6.1}% {:>9} {:>11}  {}\n",
                    g.group,
                    g.shapes,
                    g.pick_efficiency * 100.0,
                    g.top3_efficiency * 100.0,
                    r(g.spearman),
                    r(g.spearman_near_fastest),
                    g.picked
                );
            }
        }
        out
    }
}

fn percent(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{:.1}%", 100.0 * v))
}

fn stats_table(stats: &[(&'static str, MetricStats)], kernel: Option<&str>) -> String {
    let width = stats.iter().map(|(m, _)| m.len()).max().unwrap_or(6).max(6);
    let mut out = format!(
        "{:<width$} {:>4} {:>8} {:>8} {:>8} {:>8}  worst\n",
        "metric", "n", "median", "mean", "max", "spearman"
    );
    for (m, s) in stats {
        let worst = match (&s.worst, s.worst_rel_err) {
            (Some(w), Some(e)) if e != 0.0 => {
                // Within a kernel's table the kernel name is understood.
                let w = kernel.and_then(|k| w.strip_prefix(k)).unwrap_or(w).trim();
                format!("{:+.1}% {w}", 100.0 * e)
            }
            _ => "-".into(),
        };
        out += &format!(
            "{:<width$} {:>4} {:>8} {:>8} {:>8} {:>8}  {worst}\n",
            m,
            s.n,
            percent(s.median_rel_err),
            percent(s.mean_rel_err),
            percent(s.max_rel_err),
            s.spearman.map_or("-".into(), |r| format!("{r:.3}")),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::LaunchRequest;

    fn launch(kernel: &str, block: [u32; 3], counters: &[(&str, f64)]) -> MeasuredLaunch {
        MeasuredLaunch {
            id: None,
            kernel: kernel.into(),
            lift: Default::default(),
            kernel_at: None,
            request: LaunchRequest {
                block: Some(block),
                domain: Some([64, 64, 64]),
                set: vec![],
            },
            grid: None,
            counters: counters.iter().map(|(m, v)| (m.to_string(), *v)).collect(),
            origin: "test".into(),
            group: None,
        }
    }

    fn result(block: [u32; 3], measured: f64, simulated: f64) -> LaunchResult {
        LaunchResult {
            launch: launch("star1", block, &[]),
            pairs: vec![(
                metrics::DRAM_READ,
                Pair {
                    measured,
                    simulated,
                },
            )],
            time: None,
        }
    }

    fn timed(block: [u32; 3], measured_us: f64, predicted_us: f64) -> LaunchResult {
        let mut r = result(block, 1.0, 1.0);
        r.pairs.push((
            metrics::DURATION,
            Pair {
                measured: measured_us,
                simulated: predicted_us,
            },
        ));
        r
    }

    #[test]
    fn shape_picks_by_hand() {
        // Measured 100, 110, 150, 300 us; the model ranks 64x4x1 first (measured 150), then
        // 32x8x1 (110), then 256x1x1 (100).
        let rows = vec![
            timed([256, 1, 1], 100.0, 30.0),
            timed([32, 8, 1], 110.0, 20.0),
            timed([64, 4, 1], 150.0, 10.0),
            timed([8, 32, 1], 300.0, 40.0),
        ];
        let picks = shape_picks(&rows);
        assert_eq!(picks.len(), 1);
        let p = &picks[0];
        assert_eq!(p.shapes, 4);
        assert!((p.pick_efficiency - 100.0 / 150.0).abs() < 1e-15);
        assert_eq!(p.top3_efficiency, 1.0);
        assert!(p.picked.ends_with("64x4x1"), "{}", p.picked);
        assert!(p.fastest.ends_with("256x1x1"), "{}", p.fastest);
        // Ranks measured 1 2 3 4, predicted 3 2 1 4: d² = 4 + 0 + 4 + 0, rho = 1 - 6*8/60 = 0.2.
        assert!((p.spearman.unwrap() - 0.2).abs() < 1e-12);
        // Within 1.5x of 100 us: the first three; predicted ranks 3 2 1: rho = -1.
        assert!((p.spearman_near_fastest.unwrap() + 1.0).abs() < 1e-12);
        // A group of two is not ranked; launches without a duration are left out.
        assert!(shape_picks(&rows[..2]).is_empty());
        assert!(shape_picks(&[result([32, 1, 1], 1.0, 1.0)]).is_empty());
    }

    #[test]
    fn relative_error_is_signed_and_undefined_only_for_a_lone_zero() {
        let p = |m, s| {
            Pair {
                measured: m,
                simulated: s,
            }
            .rel_err()
        };
        assert_eq!(p(100.0, 110.0), Some(0.1));
        assert_eq!(p(100.0, 75.0), Some(-0.25));
        assert_eq!(p(0.0, 0.0), Some(0.0));
        assert_eq!(p(0.0, 5.0), None);
    }

    #[test]
    fn statistics_by_hand() {
        // Errors +10%, -20%, +40%, 0%: sizes 0.1, 0.2, 0.4, 0 → median 0.15, mean 0.175, worst
        // +40% on 4x4x4. Measured order 1,2,3,4; simulated 1.1, 1.6, 4.2, 4 → ranks 1,2,4,3:
        // Spearman = 1 − 6·(0+0+1+1)/(4·15) = 0.8.
        let rows = [
            result([1, 1, 1], 1.0, 1.1),
            result([2, 2, 2], 2.0, 1.6),
            result([4, 4, 4], 3.0, 4.2),
            result([8, 8, 8], 4.0, 4.0),
        ];
        let refs: Vec<&LaunchResult> = rows.iter().collect();
        let stats = summarise(&refs);
        assert_eq!(stats.len(), 1);
        let (m, s) = &stats[0];
        assert_eq!(*m, metrics::DRAM_READ);
        assert_eq!(s.n, 4);
        assert!((s.median_rel_err.unwrap() - 0.15).abs() < 1e-12);
        assert!((s.mean_rel_err.unwrap() - 0.175).abs() < 1e-12);
        assert!((s.max_rel_err.unwrap() - 0.4).abs() < 1e-12);
        assert_eq!(s.worst.as_deref(), Some("star1 64x64x64 4x4x4"));
        assert!((s.spearman.unwrap() - 0.8).abs() < 1e-12);
        assert_eq!(s.spearman_groups.len(), 1);
    }

    #[test]
    fn small_groups_and_constant_sides_have_no_rank_correlation() {
        let two = [result([1, 1, 1], 1.0, 1.0), result([2, 2, 2], 2.0, 2.0)];
        let s = &summarise(&two.iter().collect::<Vec<_>>())[0].1;
        assert!(s.spearman_groups.is_empty());
        assert_eq!(s.spearman, None);
        let constant = [
            result([1, 1, 1], 1.0, 5.0),
            result([2, 2, 2], 2.0, 5.0),
            result([4, 4, 4], 3.0, 5.0),
        ];
        let s = &summarise(&constant.iter().collect::<Vec<_>>())[0].1;
        assert_eq!(s.spearman_groups.values().next(), Some(&None));
        assert_eq!(s.spearman, None);
    }
}
