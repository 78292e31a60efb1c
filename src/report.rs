//! Reports: simulated counts under their Nsight Compute metric names, bytes per lattice update,
//! hit rates and the launch, printed as a table, one JSON object, or CSV.

pub mod by_array;

use crate::input::hw::HwConfig;
use crate::launch::Launch;
use crate::metrics::{self, sector_bytes};
use crate::models::Prediction;
use crate::sim::Counts;
use crate::timing::TimeEstimate;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Aligned text for people.
    Table,
    /// One JSON object.
    Json,
    /// A header line and one row.
    Csv,
}

impl crate::choice::Choice for Format {
    const CHOICES: &'static [(Self, &'static str, &'static str)] = &[
        (Format::Table, "table", "Aligned text for people"),
        (Format::Json, "json", "One JSON object"),
        (Format::Csv, "csv", "A header line and one row"),
    ];
}

/// The launch as the report shows it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LaunchSummary {
    /// Blocks in the grid.
    pub blocks: u64,
    /// Threads per block.
    pub threads_per_block: u32,
    /// Resident blocks per SM.
    pub blocks_per_sm: u32,
    /// What limits residency.
    pub occupancy_limiter: String,
    /// Resident warps over the maximum.
    pub occupancy: f64,
    /// Blocks / (blocks per SM × SMs).
    pub waves: f64,
    /// SMs of the GPU.
    pub sms: u32,
    /// L1 capacity per SM beside the shared-memory carve-out the driver picks for this residency.
    pub l1_bytes: u64,
}

/// A finished simulation, ready to print. Serialised as `simulate --format json`'s object:
/// `kernel`, `hw`, `block`, `grid`, `domain`, `params`, `lattice_updates`, `launch`,
/// `metrics`, `bytes_per_lup`, `hit_rates`, `dirty_at_end_sectors`, `compulsory`,
/// `simulation`, `time` and `compare` (`null` when absent), and with `--by-array` `by_array`
/// ([`by_array::json`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// Kernel name.
    pub kernel: String,
    /// Hardware name.
    pub hw: String,
    /// Block shape.
    pub block: [u32; 3],
    /// Grid shape.
    pub grid: [u32; 3],
    /// `nx, ny, nz` if the kernel has them.
    pub domain: Option<[i64; 3]>,
    /// Effective parameters.
    pub params: BTreeMap<String, i64>,
    /// Lattice updates.
    pub lattice_updates: u64,
    /// Launch summary.
    pub launch: LaunchSummary,
    /// The counts.
    pub counts: Counts,
    /// Whether the kernel performs atomics (then [`metrics::ATOMIC`] are reported too).
    pub atomics: bool,
    /// Whether the kernel accesses shared memory (then [`metrics::SHARED`] are reported too).
    pub shared: bool,
    /// The time model applied to the simulated volumes.
    pub time: Option<TimeEstimate>,
    /// A model's prediction next to the simulation (`simulate --compare`).
    pub comparison: Option<Comparison>,
    /// For a sampled simulation, the intervals of its estimates and the waves it simulated.
    pub sample: Option<crate::sim::SampledCounts>,
    /// Where sampling was asked for and the launch was simulated exactly instead, why
    /// ([`crate::sim::sample::WavePlan::plan`]).
    pub sample_fallback: Option<String>,
}

/// One volume, simulated and predicted. Serialised with its fields in this order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComparisonRow {
    /// The model's quantity (`dram_load_bytes`, …).
    pub quantity: &'static str,
    /// The simulator metric it is compared with.
    pub metric: &'static str,
    /// Simulated bytes.
    pub simulated_bytes: f64,
    /// Predicted bytes.
    pub predicted_bytes: f64,
    /// (predicted − simulated) / simulated; `None` when nothing was simulated.
    pub rel_diff: Option<f64>,
}

/// A model's prediction next to the simulation. Serialised as `{"model", "volumes": [rows],
/// "time": predicted time, "prediction": the model's fields}`.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The prediction.
    pub prediction: Prediction,
    /// Volumes side by side.
    pub rows: Vec<ComparisonRow>,
    /// The time model applied to the predicted volumes.
    pub predicted_time: TimeEstimate,
}

/// The keys of a [`Comparison`] in JSON, in order.
#[derive(Serialize)]
struct ComparisonJson<'a> {
    model: &'a str,
    volumes: &'a [ComparisonRow],
    time: &'a TimeEstimate,
    prediction: &'a Map<String, Value>,
}

impl Serialize for Comparison {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        ComparisonJson {
            model: self.prediction.model,
            volumes: &self.rows,
            time: &self.predicted_time,
            prediction: &self.prediction.fields,
        }
        .serialize(serializer)
    }
}

impl Report {
    /// Builds the report of a simulation.
    pub fn new(launch: &Launch, hw: &HwConfig, counts: Counts) -> Report {
        let per_wave = launch.occupancy.blocks_per_sm as u64 * hw.sm.count as u64;
        Report {
            kernel: launch.kernel.clone(),
            hw: hw.name.clone(),
            block: launch.block,
            grid: launch.grid,
            domain: launch.domain(),
            params: launch.params.clone(),
            lattice_updates: launch.lattice_updates,
            launch: LaunchSummary {
                blocks: launch.total_blocks,
                threads_per_block: launch.threads_per_block,
                blocks_per_sm: launch.occupancy.blocks_per_sm,
                occupancy_limiter: launch.occupancy.limiter.to_string(),
                occupancy: launch.occupancy.occupancy,
                waves: launch.total_blocks as f64 / per_wave as f64,
                sms: hw.sm.count,
                l1_bytes: launch.l1_bytes(hw),
            },
            counts,
            atomics: launch
                .program
                .accesses
                .iter()
                .any(|a| a.kind == crate::input::trace::AccessKind::Atomic),
            shared: launch.program.accesses.iter().any(|a| a.kind.is_shared()),
            time: None,
            comparison: None,
            sample: None,
            sample_fallback: None,
        }
    }

    /// Marks the report as a sampled simulation's, with its intervals.
    pub fn with_sample(mut self, sample: crate::sim::SampledCounts) -> Report {
        self.sample = Some(sample);
        self
    }

    /// For a sampled simulation, each metric's 95% interval, in [`Report::metrics`] order.
    pub fn metrics_ci95(&self) -> Option<Vec<(&'static str, [u64; 2])>> {
        let s = self.sample.as_ref()?;
        let with = |counts: &Counts| {
            let mut r = self.clone();
            r.sample = None;
            r.counts = counts.clone();
            r.metrics()
        };
        Some(
            with(&s.lo)
                .into_iter()
                .zip(with(&s.hi))
                .map(|((n, lo), (_, hi))| (n, [lo, hi]))
                .collect(),
        )
    }

    /// Adds the time model applied to the simulated volumes.
    pub fn with_time(mut self, time: TimeEstimate) -> Report {
        self.time = Some(time);
        self
    }

    /// Puts `prediction` (with its time estimate) next to the simulated volumes.
    pub fn compare(&mut self, prediction: Prediction, predicted_time: TimeEstimate) {
        let rows = prediction
            .volumes
            .named()
            .into_iter()
            .map(|(quantity, metric, predicted_bytes)| {
                let simulated_bytes = sector_bytes(self.metric(metric).unwrap_or(0));
                ComparisonRow {
                    quantity,
                    metric,
                    simulated_bytes,
                    predicted_bytes,
                    rel_diff: (simulated_bytes > 0.0)
                        .then(|| (predicted_bytes - simulated_bytes) / simulated_bytes),
                }
            })
            .collect();
        self.comparison = Some(Comparison {
            prediction,
            rows,
            predicted_time,
        });
    }

    /// The metric counts in [`metrics::ALL`] order, then [`metrics::ATOMIC`] for a kernel with
    /// atomics and [`metrics::SHARED`] for one with shared accesses.
    pub fn metrics(&self) -> Vec<(&'static str, u64)> {
        let values = crate::sim::counters::values(&self.counts);
        let reported = |as_: metrics::Reported| {
            (metrics::COUNTERS.iter().zip(values))
                .filter(move |(c, _)| c.reported == as_)
                .map(|(c, v)| (c.metric.expect("a reported counter has a metric"), v))
        };
        let mut out: Vec<(&'static str, u64)> = reported(metrics::Reported::All).collect();
        if self.atomics {
            out.extend(reported(metrics::Reported::Atomic));
        }
        if self.shared {
            out.extend(reported(metrics::Reported::Shared));
        }
        out
    }

    /// A metric's count by name.
    pub fn metric(&self, name: &str) -> Option<u64> {
        self.metrics()
            .into_iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v)
    }

    /// Bytes per lattice update of every sector metric (requests have no byte volume).
    pub fn bytes_per_lup(&self) -> Vec<(&'static str, f64)> {
        let lups = self.lattice_updates as f64;
        self.metrics()
            .into_iter()
            .filter(|(n, _)| !metrics::is_request_count(n))
            .map(|(n, v)| (n, sector_bytes(v) / lups))
            .collect()
    }

    /// Hit rates: L1 loads, L2 near-partition lookups, and L2 as seen from DRAM (the data's
    /// reads, without the launch's own).
    pub fn hit_rates(&self) -> Vec<(&'static str, f64)> {
        let c = &self.counts;
        // Atomics read DRAM outside the read counters: a hit rate is never below 0.
        let ratio = |miss: u64, total: u64| {
            if total == 0 {
                0.0
            } else {
                (1.0 - miss as f64 / total as f64).max(0.0)
            }
        };
        vec![
            ("l1_load", ratio(c.l1.load_miss_sectors, c.l1.load_sectors)),
            (
                "l2_near_read",
                ratio(c.l2.read_lookup_miss_sectors, c.l2.read_sectors),
            ),
            (
                "l2_read",
                ratio(c.data_dram_read_sectors(), c.l2.read_sectors),
            ),
        ]
    }

    /// Compulsory volumes in sectors: per-block unique L1 load sectors (what L1s holding each
    /// block's data would fetch from L2) and the infinite-L2 DRAM reads.
    pub fn compulsory(&self) -> Vec<(&'static str, Option<u64>)> {
        let c = &self.counts;
        vec![
            (
                "l2_to_l1_read_sectors",
                (c.l1.block_unique_load_sectors > 0).then_some(c.l1.block_unique_load_sectors),
            ),
            ("dram_to_l2_read_sectors", c.compulsory_dram_read_sectors),
        ]
    }

    /// The report as one JSON object (see its [`Serialize`] impl).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).expect("a report is strings and numbers")
    }

    /// The report as (column, value) pairs: the row of `--format csv` and of a sweep. The
    /// columns depend only on the kernel's parameters and on whether a model is compared (every
    /// time limiter has its column, empty where the config gives it no bandwidth).
    pub fn columns(&self) -> Vec<(String, String)> {
        let mut cols: Vec<(String, String)> = vec![
            ("kernel".into(), self.kernel.clone()),
            ("hw".into(), self.hw.clone()),
        ];
        for (i, d) in ["x", "y", "z"].iter().enumerate() {
            cols.push((format!("block_{d}"), self.block[i].to_string()));
        }
        for (i, d) in ["x", "y", "z"].iter().enumerate() {
            cols.push((format!("grid_{d}"), self.grid[i].to_string()));
        }
        for (n, v) in &self.params {
            cols.push((format!("param_{n}"), v.to_string()));
        }
        cols.push(("lattice_updates".into(), self.lattice_updates.to_string()));
        let l = &self.launch;
        cols.push(("blocks".into(), l.blocks.to_string()));
        cols.push(("blocks_per_sm".into(), l.blocks_per_sm.to_string()));
        cols.push(("occupancy".into(), l.occupancy.to_string()));
        cols.push(("waves".into(), l.waves.to_string()));
        cols.push(("l1_bytes".into(), l.l1_bytes.to_string()));
        for (n, v) in self.metrics() {
            cols.push((n.into(), v.to_string()));
        }
        for (n, v) in self.bytes_per_lup() {
            cols.push((metrics::bytes_per_lup_column(n), v.to_string()));
        }
        for (n, v) in self.hit_rates() {
            cols.push((format!("hit_rate_{n}"), v.to_string()));
        }
        cols.push((
            "dirty_at_end_sectors".into(),
            self.counts.dirty_at_end_sectors.to_string(),
        ));
        for (n, v) in self.compulsory() {
            cols.push((
                format!("compulsory_{n}"),
                v.map_or(String::new(), |v| v.to_string()),
            ));
        }
        if let Some(t) = &self.time {
            for name in crate::timing::LIMITERS {
                let seconds = t.limiters.iter().find(|l| l.name == name);
                cols.push((
                    format!("time_{name}_s"),
                    seconds.map_or(String::new(), |l| l.seconds.to_string()),
                ));
            }
            cols.push(("time_predicted_s".into(), t.predicted_s.to_string()));
            cols.push((
                "time_bandwidth_bound_s".into(),
                t.bandwidth_bound_s.to_string(),
            ));
            cols.push(("time_latency_s".into(), t.latency_s.to_string()));
            cols.push((
                "time_block_turnover_s".into(),
                t.block_turnover_s.to_string(),
            ));
            cols.push((
                "time_launch_overhead_s".into(),
                t.launch_overhead_s.to_string(),
            ));
            cols.push(("time_limiter".into(), t.limiter.to_string()));
            cols.push(("time_adjusted_s".into(), t.time_adjusted_s.to_string()));
            cols.push(("lups_per_s".into(), t.lups_per_s.to_string()));
            cols.push(("clock_ghz".into(), t.clock_ghz.to_string()));
            cols.push(("clock".into(), t.clock.name().to_string()));
        }
        if let Some(c) = &self.comparison {
            cols.push(("model".into(), c.prediction.model.to_string()));
            for r in &c.rows {
                cols.push((
                    format!("predicted_{}", r.quantity),
                    r.predicted_bytes.to_string(),
                ));
                cols.push((
                    format!("rel_diff_{}", r.quantity),
                    r.rel_diff.map_or(String::new(), |d| d.to_string()),
                ));
            }
            cols.push((
                "predicted_time_s".into(),
                c.predicted_time.predicted_s.to_string(),
            ));
        }
        if let Some(b) = &self.counts.by_array {
            cols.extend(by_array::columns(self, b));
        }
        cols
    }

    /// The report as a header line and one row.
    pub fn to_csv(&self) -> String {
        let cols = self.columns();
        let header: Vec<String> = cols.iter().map(|(k, _)| csv_field(k)).collect();
        let row: Vec<String> = cols.iter().map(|(_, v)| csv_field(v)).collect();
        format!("{}\n{}\n", header.join(","), row.join(","))
    }

    /// The report as aligned text.
    pub fn to_table(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let l = &self.launch;
        let b = self.block;
        let g = self.grid;
        let _ = write!(
            s,
            "kernel {} on {}, block {}x{}x{}, grid {}x{}x{}",
            self.kernel, self.hw, b[0], b[1], b[2], g[0], g[1], g[2]
        );
        if let Some(d) = self.domain {
            let _ = write!(s, ", domain {}x{}x{}", d[0], d[1], d[2]);
        }
        let _ = writeln!(s);
        let others: Vec<String> = self
            .params
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "nx" | "ny" | "nz"))
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        if !others.is_empty() {
            let _ = writeln!(s, "parameters {}", others.join(" "));
        }
        let _ = writeln!(
            s,
            "launch: {} blocks of {} threads, {} per SM (limited by {}), occupancy {:.0}%, {:.2} waves on {} SMs, L1 {} KiB",
            l.blocks,
            l.threads_per_block,
            l.blocks_per_sm,
            l.occupancy_limiter,
            l.occupancy * 100.0,
            l.waves,
            l.sms,
            l.l1_bytes / 1024
        );
        let _ = writeln!(s, "lattice updates: {}\n", self.lattice_updates);
        let blup: BTreeMap<&str, f64> = self.bytes_per_lup().into_iter().collect();
        let intervals: BTreeMap<&str, [u64; 2]> =
            self.metrics_ci95().into_iter().flatten().collect();
        if let Some(sample) = &self.sample {
            let _ = writeln!(
                s,
                "sampled: {} of {} waves simulated ({} counted, {} jumped over unscheduled), the rest extrapolated with 95% intervals\n",
                sample.waves_simulated, sample.waves, sample.waves_counted, sample.waves_jumped
            );
        }
        if let Some(why) = &self.sample_fallback {
            let _ = writeln!(s, "not sampled, simulated exactly: {why}\n");
        }
        let interval_header = if intervals.is_empty() {
            ""
        } else {
            "  95% interval"
        };
        let _ = writeln!(
            s,
            "{:<58} {:>16} {:>10}{interval_header}",
            "metric", "count", "B/LUP"
        );
        for (n, v) in self.metrics() {
            let bl = blup.get(n).map_or("-".to_string(), |x| format!("{x:.3}"));
            let interval = intervals
                .get(n)
                .map_or(String::new(), |[lo, hi]| format!("  {lo} .. {hi}"));
            let _ = writeln!(s, "{n:<58} {v:>16} {bl:>10}{interval}");
        }
        let _ = writeln!(s);
        for (n, v) in self.hit_rates() {
            let _ = writeln!(s, "hit rate {n:<20} {:>8.2}%", v * 100.0);
        }
        let lups = self.lattice_updates as f64;
        let dirty = self.counts.dirty_at_end_sectors;
        let _ = writeln!(
            s,
            "dirty in L2 at kernel end: {dirty} sectors ({:.3} B/LUP, not counted as DRAM writes)",
            sector_bytes(dirty) / lups
        );
        for (n, v) in self.compulsory() {
            if let Some(v) = v {
                let _ = writeln!(
                    s,
                    "compulsory {n}: {v} ({:.3} B/LUP)",
                    sector_bytes(v) / lups
                );
            }
        }
        if let Some(b) = &self.counts.by_array {
            let _ = write!(s, "\n{}", by_array::table(self, b));
        }
        if let Some(t) = &self.time {
            let _ = writeln!(s, "\n{}", time_table(t, "time model (simulated volumes)"));
        }
        if let Some(c) = &self.comparison {
            let _ = writeln!(
                s,
                "\n{:<18} {:<52} {:>16} {:>16} {:>9}",
                format!("vs {}", c.prediction.model),
                "simulator metric",
                "simulated B",
                "predicted B",
                "diff"
            );
            for r in &c.rows {
                let d = r
                    .rel_diff
                    .map_or("-".to_string(), |d| format!("{:+.1}%", d * 100.0));
                let _ = writeln!(
                    s,
                    "{:<18} {:<52} {:>16.0} {:>16.0} {:>9}",
                    r.quantity, r.metric, r.simulated_bytes, r.predicted_bytes, d
                );
            }
            let _ = writeln!(
                s,
                "\n{}",
                time_table(&c.predicted_time, "time model (predicted volumes)")
            );
            if let Some(t) = self
                .time
                .as_ref()
                .filter(|_| c.predicted_time.predicted_s > 0.0)
            {
                let _ = writeln!(
                    s,
                    "predicted / simulated time: {:.3}",
                    c.predicted_time.predicted_s / t.predicted_s
                );
            }
        }
        s
    }

    /// Renders in the chosen format.
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Table => self.to_table(),
            Format::Json => format!(
                "{}\n",
                serde_json::to_string_pretty(self).expect("a report is strings and numbers")
            ),
            Format::Csv => self.to_csv(),
        }
    }
}

/// The keys of a [`Report`] in JSON, in order.
#[derive(Serialize)]
struct ReportJson<'a> {
    kernel: &'a str,
    hw: &'a str,
    block: [u32; 3],
    grid: [u32; 3],
    domain: Option<[i64; 3]>,
    params: &'a BTreeMap<String, i64>,
    lattice_updates: u64,
    launch: &'a LaunchSummary,
    #[serde(serialize_with = "pairs_as_map")]
    metrics: Vec<(&'static str, u64)>,
    #[serde(serialize_with = "optional_pairs_as_map")]
    metrics_ci95: Option<Vec<(&'static str, [u64; 2])>>,
    #[serde(serialize_with = "pairs_as_map")]
    bytes_per_lup: Vec<(&'static str, f64)>,
    #[serde(serialize_with = "pairs_as_map")]
    hit_rates: Vec<(&'static str, f64)>,
    dirty_at_end_sectors: u64,
    compulsory: CompulsoryJson<'a>,
    simulation: SimulationJson<'a>,
    time: Option<&'a TimeEstimate>,
    compare: Option<&'a Comparison>,
    #[serde(skip_serializing_if = "Option::is_none")]
    by_array: Option<by_array::ByArrayJson>,
}

/// Each compulsory volume of [`Report::compulsory`] in sectors, followed by its bytes per
/// lattice update (`<name less _sectors>_bytes_per_lup`); `null` where not counted.
struct CompulsoryJson<'a>(&'a Report);

impl Serialize for CompulsoryJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let lups = self.0.lattice_updates as f64;
        let volumes = self.0.compulsory();
        let mut map = serializer.serialize_map(Some(2 * volumes.len()))?;
        for (n, v) in volumes {
            map.serialize_entry(n, &v)?;
            map.serialize_entry(
                &metrics::bytes_per_lup_column(n.trim_end_matches("_sectors")),
                &v.map(|v| sector_bytes(v) / lups),
            )?;
        }
        map.end()
    }
}

/// The simulation's own statistics in a report's JSON.
#[derive(Serialize)]
struct SimulationJson<'a> {
    ticks: u64,
    warp_instructions: u64,
    thread_accesses: u64,
    warps_launched: u64,
    active_warps: u64,
    l1_data_passes: u64,
    l1_load_miss_request_lines: u64,
    l1_load_partial_lines: u64,
    l1_load_in_flight_lines: u64,
    sampled: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    not_sampled_because: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    exact_l1_instruction_counts: Option<bool>,
    waves: Option<u64>,
    waves_simulated: Option<u64>,
    waves_counted: Option<u64>,
    waves_jumped: Option<u64>,
}

impl Serialize for Report {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let c = &self.counts;
        ReportJson {
            kernel: &self.kernel,
            hw: &self.hw,
            block: self.block,
            grid: self.grid,
            domain: self.domain,
            params: &self.params,
            lattice_updates: self.lattice_updates,
            launch: &self.launch,
            metrics: self.metrics(),
            metrics_ci95: self.metrics_ci95(),
            bytes_per_lup: self.bytes_per_lup(),
            hit_rates: self.hit_rates(),
            dirty_at_end_sectors: c.dirty_at_end_sectors,
            compulsory: CompulsoryJson(self),
            simulation: SimulationJson {
                ticks: c.ticks,
                warp_instructions: c.warp_instructions,
                thread_accesses: c.thread_accesses,
                warps_launched: c.warps_launched,
                active_warps: c.active_warps,
                l1_data_passes: c.l1.data_passes,
                l1_load_miss_request_lines: c.l1.load_miss_request_lines,
                l1_load_partial_lines: c.l1.load_partial_lines,
                l1_load_in_flight_lines: c.l1.load_in_flight_lines,
                sampled: self.sample.is_some(),
                not_sampled_because: self.sample_fallback.as_deref(),
                exact_l1_instruction_counts: self
                    .sample
                    .as_ref()
                    .map(|s| s.exact_l1_instruction_counts),
                waves: self.sample.as_ref().map(|s| s.waves),
                waves_simulated: self.sample.as_ref().map(|s| s.waves_simulated),
                waves_counted: self.sample.as_ref().map(|s| s.waves_counted),
                waves_jumped: self.sample.as_ref().map(|s| s.waves_jumped),
            },
            time: self.time.as_ref(),
            compare: self.comparison.as_ref(),
            by_array: c.by_array.as_ref().map(|b| by_array::json(self, b)),
        }
        .serialize(serializer)
    }
}

/// Serialises `(key, value)` pairs as one JSON object, keys in order (for
/// `#[serde(serialize_with)]` on a list of pairs).
pub(crate) fn pairs_as_map<S, K, V>(pairs: &[(K, V)], serializer: S) -> Result<S::Ok, S::Error>
where
    S: Serializer,
    K: Serialize,
    V: Serialize,
{
    serializer.collect_map(pairs.iter().map(|(k, v)| (k, v)))
}

/// [`pairs_as_map`] for an optional list: `null` when absent.
fn optional_pairs_as_map<S, K, V>(
    pairs: &Option<Vec<(K, V)>>,
    serializer: S,
) -> Result<S::Ok, S::Error>
where
    S: Serializer,
    K: Serialize,
    V: Serialize,
{
    match pairs {
        Some(p) => pairs_as_map(p, serializer),
        None => serializer.serialize_none(),
    }
}

/// A time estimate as aligned text: the clock, every limiter, and the predicted time as the sum
/// of its terms ([`TimeEstimate::terms`]).
pub fn time_table(t: &TimeEstimate, title: &str) -> String {
    use std::fmt::Write;
    let mut s = format!("{title}, {}\n", t.clock_text());
    if t.limiters.is_empty() {
        s.push_str("  no limiter: the volumes, or the bandwidths the config gives, do not overlap");
        return s;
    }
    for (l, u) in t.limiters.iter().zip(&t.utilisation) {
        let mark = if l.name == t.limiter {
            "  <- limiter"
        } else {
            ""
        };
        let _ = writeln!(
            s,
            "  {:<6} {:>12.3} us at full bandwidth, {:>5.1}% busy{mark}",
            l.name,
            l.seconds * 1e6,
            u * 100.0
        );
    }
    let _ = writeln!(s, "  {}", time_sum(t));
    let _ = writeln!(
        s,
        "  limiter {}, {:.3} GLUP/s; {:.1} resident warps per SM, {:.1} effective",
        t.limiter,
        t.lups_per_s / 1e9,
        t.resident_warps,
        t.effective_warps
    );
    let _ = writeln!(
        s,
        "  Su et al. (18) adjusted {:.3} us ({} waves, occupancy efficiency {:.2})",
        t.time_adjusted_s * 1e6,
        t.waves,
        t.occupancy_efficiency
    );
    s.trim_end().to_string()
}

/// The predicted time as the sum of its terms, in µs: `predicted 12.345 us = 10.000 bandwidth
/// bound (dram) + 2.000 latency + 0.345 block turnover + 0.000 launch overhead`.
pub fn time_sum(t: &TimeEstimate) -> String {
    let terms: Vec<String> = t
        .terms()
        .iter()
        .map(|(name, seconds)| match (*name, t.bound_by()) {
            ("bandwidth bound", Some(by)) => format!("{:.3} {name} ({by})", seconds * 1e6),
            _ => format!("{:.3} {name}", seconds * 1e6),
        })
        .collect();
    format!(
        "predicted {:.3} us = {}",
        t.predicted_s * 1e6,
        terms.join(" + ")
    )
}

/// One CSV field, quoted when it must be.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The keys of [`prediction_json`], in order.
#[derive(Serialize)]
struct PredictionJson<'a> {
    model: &'a str,
    kernel: &'a str,
    hw: &'a str,
    block: [u32; 3],
    grid: [u32; 3],
    domain: Option<[i64; 3]>,
    lattice_updates: u64,
    #[serde(flatten)]
    fields: &'a Map<String, Value>,
    /// Fields outside their physical range: name → the range (absent when none is).
    #[serde(skip_serializing_if = "Map::is_empty")]
    out_of_range: Map<String, Value>,
    volumes: &'a crate::models::PredictedVolumes,
    time: &'a TimeEstimate,
}

/// `gputraffic predict`'s output: the launch, the model's fields at top level (the names the
/// papers use), the comparable volumes and the time model on them.
pub fn prediction_json(launch: &Launch, hw: &HwConfig, p: &Prediction, t: &TimeEstimate) -> Value {
    serde_json::to_value(PredictionJson {
        model: p.model,
        kernel: &launch.kernel,
        hw: &hw.name,
        block: launch.block,
        grid: launch.grid,
        domain: launch.domain(),
        lattice_updates: launch.lattice_updates,
        fields: &p.fields,
        out_of_range: p
            .out_of_range()
            .into_iter()
            .map(|(name, _, range)| (name.to_string(), Value::from(range.to_string())))
            .collect(),
        volumes: &p.volumes,
        time: t,
    })
    .expect("a prediction is strings and numbers")
}

/// Renders [`prediction_json`] as a table, JSON or CSV.
pub fn render_prediction(
    launch: &Launch,
    hw: &HwConfig,
    p: &Prediction,
    t: &TimeEstimate,
    format: Format,
) -> String {
    let v = prediction_json(launch, hw, p, t);
    match format {
        Format::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&v).expect("a JSON value serialises")
        ),
        Format::Csv => {
            let mut cols = Vec::new();
            flatten("", &v, &mut cols);
            let header: Vec<String> = cols.iter().map(|(k, _)| csv_field(k)).collect();
            let row: Vec<String> = cols.iter().map(|(_, v)| csv_field(v)).collect();
            format!("{}\n{}\n", header.join(","), row.join(","))
        }
        Format::Table => {
            use std::fmt::Write;
            let b = launch.block;
            let mut s = format!(
                "model {} for kernel {} on {}, block {}x{}x{}",
                p.model, launch.kernel, hw.name, b[0], b[1], b[2]
            );
            if let Some(d) = launch.domain() {
                let _ = write!(s, ", domain {}x{}x{}", d[0], d[1], d[2]);
            }
            s.push_str("\n\n");
            s.push_str(&prediction_fields_table(p));
            let named = p.volumes.named();
            if !named.is_empty() {
                let _ = writeln!(
                    s,
                    "\n  {:<18} {:<52} {:>16}",
                    "volume", "comparable simulator metric", "bytes"
                );
                for (q, metric, v) in named {
                    let _ = writeln!(s, "  {q:<18} {metric:<52} {v:>16.0}");
                }
            }
            let _ = writeln!(s, "\n{}", time_table(t, "time model (predicted volumes)"));
            s
        }
    }
}

/// The model's fields as `predict` prints them: name, value (in the unit shown, times in µs or
/// ns), unit and one-line meaning from the model's quantity table; a value outside its physical
/// range carries a `!` and a footnote line saying the range.
fn prediction_fields_table(p: &Prediction) -> String {
    use std::fmt::Write;
    let flagged = p.out_of_range();
    let rows: Vec<[String; 4]> = p
        .fields
        .iter()
        .map(|(name, value)| {
            let q = p.quantity(name);
            let unit = q.map_or("", |q| q.unit);
            let (value, unit) = match value.as_f64() {
                Some(v) if !value.is_boolean() => {
                    let (factor, shown) = crate::metrics::display_unit(unit, &[v]);
                    let mark = if flagged.iter().any(|(n, _, _)| n == name) {
                        " !"
                    } else {
                        ""
                    };
                    (format!("{}{mark}", readable_number(v * factor)), shown)
                }
                _ => (scalar(value), unit),
            };
            let unit = if unit == "1" { "" } else { unit };
            let meaning = q.map_or(String::new(), |q| q.meaning.to_string());
            [name.clone(), value, unit.to_string(), meaning]
        })
        .collect();
    let width = |i: usize, title: &str| {
        rows.iter()
            .map(|r| r[i].chars().count())
            .chain([title.len()])
            .max()
            .unwrap_or(0)
    };
    let (w0, w1, w2) = (width(0, "quantity"), width(1, "value"), width(2, "unit"));
    let mut s = String::new();
    let _ = writeln!(
        s,
        "  {:<w0$}  {:>w1$}  {:<w2$}  meaning",
        "quantity", "value", "unit"
    );
    for [name, value, unit, meaning] in &rows {
        let pad = w1 - value.chars().count();
        let _ = writeln!(
            s,
            "  {name:<w0$}  {}{value}  {unit:<w2$}  {meaning}",
            " ".repeat(pad)
        );
    }
    if !flagged.is_empty() {
        let list: Vec<String> = flagged
            .iter()
            .map(|(name, v, range)| format!("{name} = {} (should be {range})", readable_number(*v)))
            .collect();
        let _ = writeln!(
            s,
            "  ! outside its physical range: {}; the model is applied beyond the assumptions \
             behind it",
            list.join(", ")
        );
    }
    s
}

/// `v` with at most six significant digits, trailing zeros dropped (whole numbers as they are).
pub fn readable_number(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    if v.fract() == 0.0 && v.abs() < 1e15 {
        return format!("{v:.0}");
    }
    let magnitude = v.abs().log10().floor() as i32;
    let decimals = (5 - magnitude).clamp(0, 12) as usize;
    let s = format!("{v:.decimals$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    if s == "0" || s == "-0" {
        // Smaller than the digits shown: keep its magnitude visible.
        return format!("{v:.3e}");
    }
    s
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let name = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}_{k}")
                };
                flatten(&name, x, out);
            }
        }
        Value::Array(a) if a.iter().all(|x| !x.is_object() && !x.is_array()) => {
            let parts: Vec<String> = a.iter().map(scalar).collect();
            out.push((prefix.to_string(), parts.join("x")));
        }
        other => out.push((prefix.to_string(), scalar(other))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predict_table_gives_units_meanings_and_flags_values_outside_their_range() {
        let mut p = Prediction::new("su2015");
        p.field("thread_blocks", 16384)
            .field("occupancy_efficiency", 1.25)
            .field("time_s", 1.3095e-4)
            .field("limiter", "gm");
        let table = prediction_fields_table(&p);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 6, "{table}");
        assert!(
            lines[0]
                .split_whitespace()
                .eq(["quantity", "value", "unit", "meaning"])
        );
        assert!(
            lines[1]
                .split_whitespace()
                .take(3)
                .eq(["thread_blocks", "16384", "blocks"]),
            "{table}"
        );
        assert!(lines[1].ends_with("blocks launched (B)"), "{table}");
        // Outside (0, 1]: marked, and explained in the footnote.
        assert!(lines[2].contains("1.25 !"), "{table}");
        // Seconds shown in µs.
        assert!(
            lines[3]
                .split_whitespace()
                .take(3)
                .eq(["time_s", "130.95", "µs"]),
            "{table}"
        );
        assert_eq!(
            lines[5],
            "  ! outside its physical range: occupancy_efficiency = 1.25 (should be in (0, 1]); \
             the model is applied beyond the assumptions behind it"
        );
    }

    #[test]
    fn readable_numbers_keep_six_significant_digits() {
        assert_eq!(readable_number(4194304.0), "4194304");
        assert_eq!(readable_number(0.8571428571428571), "0.857143");
        assert_eq!(readable_number(3098.3314285714287), "3098.33");
        assert_eq!(readable_number(0.0046433105468750005), "0.00464331");
        assert_eq!(readable_number(-0.3), "-0.3");
        assert_eq!(readable_number(1.5e-14), "1.500e-14");
    }
}
