//! The time model: traffic volumes and the launch's shape → the kernel's duration.
//!
//! Each level (DRAM, L2, L1, floating point) has a bandwidth; alone, the busiest one would set the
//! pace (the roofline / Su et al. formula (2) argument, kept as [`TimeEstimate::bandwidth_bound_s`]
//! and the per-limiter times). But an SM reaches those bandwidths only with enough warps waiting
//! on memory, so the predicted time comes from a closed queueing model per SM, solved exactly by
//! mean-value analysis ([`mva_throughput`]): the SM's effective resident warps cycle through a
//! delay (the loaded memory latency of their dependent rounds of loads, `[timing]`
//! `loaded_latency_factor` × the measured `dram_latency_cycles`)
//! and one queue per level, whose service demand is the warp's share of that level's traffic at
//! the SM's share of its bandwidth. With one warp the time is latency-bound (warps × (latency +
//! demands)); with many it tends to the largest demand, the bandwidth bound. A block holds its
//! slot until its last warp ends, and every block that finishes idles its share of the SM while
//! its slot turns over: `[timing] block_turnover_cycles` × rounds × (1 / blocks per SM)² per block
//! (large blocks lose more). A fixed launch overhead is added. Details and the measurements behind the constants: `docs/model.md`.
//!
//! Bandwidths come from the hardware config's `[bandwidth]` (measured values where there are
//! some; the DRAM peak of `[dram]` otherwise). The L1 and the FP units run at the SM clock, so
//! their rates scale with the clock the kernel runs at (boost by default; Nsight Compute measures
//! at the base clock); the measured DRAM and L2 bandwidths are used as they are. The L1 limiter
//! counts wavefronts at one per SM per cycle when the config gives no L1 bandwidth, else bytes
//! over `l1_gbs` (the Kepler configs carry Su et al.'s measured on-SMX bandwidth).

use crate::input::hw::HwConfig;
use crate::input::trace::Kernel;
use crate::launch::Launch;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::Value;

/// The volumes a time estimate starts from; `None` where unknown (that limiter is skipped).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TimeInputs {
    /// Bytes read from and written to DRAM.
    pub dram_bytes: Option<f64>,
    /// Bytes moved between L1 and L2 (both directions).
    pub l2_bytes: Option<f64>,
    /// Bytes moved between registers and L1 (both directions).
    pub l1_bytes: Option<f64>,
    /// L1 data-stage wavefronts (cycles of one SM's L1), summed over SMs.
    pub l1_wavefronts: Option<f64>,
    /// Floating-point operations.
    pub flops: Option<f64>,
    /// Warps with at least one active lane over the whole launch; every warp of every block when
    /// `None`.
    pub active_warps: Option<f64>,
    /// Dependent rounds of memory accesses per warp (loop trips; one without a loop; values
    /// below one count as one).
    pub rounds_per_warp: f64,
}

/// Every limiter's name, in report order.
pub const LIMITERS: [&str; 4] = ["dram", "l2", "l1", "fp"];

/// One limiter's time.
#[derive(Debug, Clone, PartialEq)]
pub struct LimiterTime {
    /// `dram`, `l2`, `l1` or `fp`.
    pub name: &'static str,
    /// Seconds.
    pub seconds: f64,
}

/// A time estimate. Serialised as one flat object: `predicted_s`, `limiter`, each limiter's
/// `<name>_s` and `<name>_utilisation`, `bandwidth_bound_s`, `resident_warps`,
/// `effective_warps`, `block_turnover_s`, `delay_cycles`, `time_adjusted_s`, `lups_per_s`, `waves`, `occupancy_efficiency`,
/// `clock_ghz`.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeEstimate {
    /// Clock assumed (GHz).
    pub clock_ghz: f64,
    /// Every limiter the inputs and the config allow: its time at full bandwidth.
    pub limiters: Vec<LimiterTime>,
    /// The predicted kernel duration (seconds): the queueing model plus the launch overhead.
    pub predicted_s: f64,
    /// What sets the pace: the level whose queue is busiest when it is at least 75 % busy,
    /// else `latency` (too few warps in flight to fill any level).
    pub limiter: &'static str,
    /// Each limiter's utilisation in the queueing model (0..1), in `limiters` order.
    pub utilisation: Vec<f64>,
    /// The largest limiter time: the bound if every level ran at full bandwidth (seconds).
    pub bandwidth_bound_s: f64,
    /// Resident warps per SM (blocks per SM × active warps per block).
    pub resident_warps: f64,
    /// Of those, the warps the queueing model runs (at most the warps an SM has in all).
    pub effective_warps: f64,
    /// Time the SMs lose to blocks turning over in their slots (seconds; part of `predicted_s`).
    pub block_turnover_s: f64,
    /// The queueing model's delay: cycles a warp waits on latency per pass through the network
    /// (`loaded_latency_factor` × `dram_latency_cycles` × rounds of loads).
    pub delay_cycles: f64,
    /// Waves of blocks (Su et al.'s #groups).
    pub waves: u64,
    /// Occupancy over the largest occupancy any block size reaches for this kernel.
    pub occupancy_efficiency: f64,
    /// Su et al. (18): bandwidth bound × (1 + 1/#groups) / occupancy efficiency.
    pub time_adjusted_s: f64,
    /// Lattice updates per second at `predicted_s`.
    pub lups_per_s: f64,
}

impl TimeEstimate {
    /// The estimate as JSON fields (see its [`Serialize`] impl).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).expect("a time estimate is strings and numbers")
    }

    /// The estimate [`to_json`](Self::to_json) wrote, read back exactly (a `validate` journal
    /// keeps it); `None` when `v` is not such an object. A number JSON cannot hold (written as
    /// `null`) comes back as NaN.
    pub fn from_json(v: &Value) -> Option<TimeEstimate> {
        let o = v.as_object()?;
        let num = |k: &str| match o.get(k)? {
            Value::Null => Some(f64::NAN),
            n => n.as_f64(),
        };
        let limiter = o.get("limiter")?.as_str()?;
        let limiter = LIMITERS
            .iter()
            .chain(&["latency"])
            .find(|l| **l == limiter)?;
        let mut limiters = Vec::new();
        let mut utilisation = Vec::new();
        for key in o.keys() {
            if let Some(name) = LIMITERS.iter().find(|l| key == &format!("{l}_s")) {
                limiters.push(LimiterTime {
                    name,
                    seconds: num(key)?,
                });
                utilisation.push(num(&format!("{name}_utilisation"))?);
            }
        }
        Some(TimeEstimate {
            clock_ghz: num("clock_ghz")?,
            limiters,
            predicted_s: num("predicted_s")?,
            limiter,
            utilisation,
            bandwidth_bound_s: num("bandwidth_bound_s")?,
            resident_warps: num("resident_warps")?,
            effective_warps: num("effective_warps")?,
            block_turnover_s: num("block_turnover_s")?,
            delay_cycles: num("delay_cycles")?,
            waves: o.get("waves")?.as_u64()?,
            occupancy_efficiency: num("occupancy_efficiency")?,
            time_adjusted_s: num("time_adjusted_s")?,
            lups_per_s: num("lups_per_s")?,
        })
    }
}

/// The keys of a [`TimeEstimate`] in JSON, in order; the limiters' keys come from
/// [`LimiterKeys`].
#[derive(Serialize)]
struct TimeJson<'a> {
    predicted_s: f64,
    limiter: &'a str,
    #[serde(flatten)]
    limiters: LimiterKeys<'a>,
    bandwidth_bound_s: f64,
    resident_warps: f64,
    effective_warps: f64,
    block_turnover_s: f64,
    delay_cycles: f64,
    time_adjusted_s: f64,
    lups_per_s: f64,
    waves: u64,
    occupancy_efficiency: f64,
    clock_ghz: f64,
}

/// Every limiter's time and utilisation as `<name>_s` and `<name>_utilisation`, in `limiters`
/// order (flattened into [`TimeJson`]).
struct LimiterKeys<'a>(&'a TimeEstimate);

impl Serialize for LimiterKeys<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let t = self.0;
        let mut map = serializer.serialize_map(Some(2 * t.limiters.len()))?;
        for (l, u) in t.limiters.iter().zip(&t.utilisation) {
            map.serialize_entry(&format!("{}_s", l.name), &l.seconds)?;
            map.serialize_entry(&format!("{}_utilisation", l.name), u)?;
        }
        map.end()
    }
}

impl Serialize for TimeEstimate {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        TimeJson {
            predicted_s: self.predicted_s,
            limiter: self.limiter,
            limiters: LimiterKeys(self),
            bandwidth_bound_s: self.bandwidth_bound_s,
            resident_warps: self.resident_warps,
            effective_warps: self.effective_warps,
            block_turnover_s: self.block_turnover_s,
            delay_cycles: self.delay_cycles,
            time_adjusted_s: self.time_adjusted_s,
            lups_per_s: self.lups_per_s,
            waves: self.waves,
            occupancy_efficiency: self.occupancy_efficiency,
            clock_ghz: self.clock_ghz,
        }
        .serialize(serializer)
    }
}

/// Throughput (jobs per cycle) of a closed queueing network by exact mean-value analysis:
/// `customers` jobs cycle through a pure delay of `delay` cycles and through queueing stations
/// with service demands `demands` (cycles per job at each). A fractional customer count is
/// interpolated linearly between its neighbours. One customer gives 1 / (delay + Σ demands);
/// many tend to 1 / max(demands).
pub fn mva_throughput(customers: f64, delay: f64, demands: &[f64]) -> f64 {
    let customers = customers.max(1.0);
    let whole = customers.floor() as u64;
    let mut queue = vec![0.0; demands.len()];
    let mut x_prev = 0.0;
    let mut x = 0.0;
    for n in 1..=whole + 1 {
        let residence: Vec<f64> = demands
            .iter()
            .zip(&queue)
            .map(|(d, q)| d * (1.0 + q))
            .collect();
        x_prev = x;
        x = n as f64 / (delay + residence.iter().sum::<f64>());
        for (q, r) in queue.iter_mut().zip(&residence) {
            *q = x * r;
        }
    }
    // x is the throughput at whole + 1 customers, x_prev at whole.
    x_prev + (x - x_prev) * (customers - whole as f64)
}

/// The largest occupancy any block size (a multiple of the warp size, as a 1-D block) reaches
/// with the kernel's registers and shared memory at the launch's parameters, and at least the
/// launch's own (shared memory that grows with the block may favour its 2-D shape): the
/// denominator of Su et al.'s occupancy efficiency.
pub fn max_occupancy(hw: &HwConfig, kernel: &Kernel, launch: &Launch) -> f64 {
    (1..=hw.sm.max_threads_per_block / hw.sm.warp_size)
        .filter_map(|w| {
            let threads = w * hw.sm.warp_size;
            let scope = crate::launch::ConstScope {
                params: &launch.params,
                block: [threads, 1, 1],
                src: &kernel.source_name,
            };
            let (registers, shared) = scope.resources(kernel).ok()?;
            crate::launch::occupancy(hw, threads, registers, shared).ok()
        })
        .map(|o| o.occupancy)
        .fold(launch.occupancy.occupancy, f64::max)
}

/// The clock in GHz for `--clock` (`boost`, `base` or a number of GHz), or `None` for the
/// config's boost clock.
pub fn clock_choice(clock: &str, hw: &HwConfig) -> crate::Result<Option<f64>> {
    match clock {
        "boost" => Ok(None),
        "base" => hw.sm.base_clock_ghz.map(Some).ok_or_else(|| {
            crate::Error::new(
                "--clock",
                format!("hw config '{}' has no sm.base_clock_ghz", hw.name),
            )
        }),
        ghz => match ghz.parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 => check_clock_ghz(v)
                .map(|()| Some(v))
                .map_err(|m| crate::Error::new("--clock", m)),
            _ => Err(crate::Error::new(
                "--clock",
                format!("'{ghz}' is neither boost, base nor a positive number of GHz"),
            )),
        },
    }
}

/// The SM clocks, in GHz, that any GPU this simulator describes runs at (the shipped configs
/// span 0.706–1.98 GHz): a clock outside is a number in another unit, not a GPU.
pub const PLAUSIBLE_CLOCK_GHZ: (f64, f64) = (0.1, 5.0);

/// Whether `ghz` is a plausible SM clock in GHz ([`PLAUSIBLE_CLOCK_GHZ`]); if not, why, with
/// the unit the number was probably written in (`1500` → "did you mean 1.5 GHz (1500 MHz)?").
pub fn check_clock_ghz(ghz: f64) -> std::result::Result<(), String> {
    let (lo, hi) = PLAUSIBLE_CLOCK_GHZ;
    let plausible = |v: f64| v.is_finite() && (lo..=hi).contains(&v);
    if plausible(ghz) {
        return Ok(());
    }
    let meant = [(1e3, "MHz"), (1e6, "kHz"), (1e9, "Hz")]
        .into_iter()
        .find(|&(per_ghz, _)| plausible(ghz / per_ghz))
        .map_or(String::new(), |(per_ghz, unit)| {
            format!("; did you mean {} GHz ({ghz} {unit})?", ghz / per_ghz)
        });
    Err(format!(
        "{ghz} GHz is no GPU clock (clocks are given in GHz, between {lo} and {hi}){meant}"
    ))
}

/// Floating-point operations of the launch, if the trace gives its flops per update.
pub fn launch_flops(kernel: &Kernel, launch: &Launch) -> Option<f64> {
    kernel
        .flops_per_update
        .map(|f| f * launch.lattice_updates as f64)
}

/// What the queueing model works out from the volumes alone (no kernel needed).
struct Queueing {
    clock: f64,
    limiters: Vec<LimiterTime>,
    bandwidth_bound_s: f64,
    utilisation: Vec<f64>,
    resident_warps: f64,
    effective_warps: f64,
    block_turnover_s: f64,
    delay: f64,
    predicted_s: f64,
}

/// Estimates the time of `launch` from `inputs` at `clock_ghz` (the config's boost clock when
/// `None`).
pub fn estimate(
    hw: &HwConfig,
    kernel: &Kernel,
    launch: &Launch,
    inputs: &TimeInputs,
    clock_ghz: Option<f64>,
) -> TimeEstimate {
    let q = queueing(hw, launch, inputs, clock_ghz);
    let busiest = q.utilisation.iter().enumerate().fold(
        None,
        |best: Option<(usize, f64)>, (i, &u)| match best {
            Some((_, b)) if b >= u => best,
            _ => Some((i, u)),
        },
    );
    let limiter = match busiest {
        Some((i, u)) if u >= 0.75 => q.limiters[i].name,
        _ => "latency",
    };

    let per_wave = launch.occupancy.blocks_per_sm as u64 * hw.sm.count as u64;
    let waves = launch.total_blocks.div_ceil(per_wave.max(1));
    let best = max_occupancy(hw, kernel, launch);
    let occupancy_efficiency = if best > 0.0 {
        launch.occupancy.occupancy / best
    } else {
        1.0
    };
    let time_adjusted_s =
        q.bandwidth_bound_s * (1.0 + 1.0 / waves.max(1) as f64) / occupancy_efficiency;
    let lups_per_s = launch.lattice_updates as f64 / q.predicted_s;
    TimeEstimate {
        clock_ghz: q.clock,
        limiters: q.limiters,
        predicted_s: q.predicted_s,
        limiter,
        utilisation: q.utilisation,
        bandwidth_bound_s: q.bandwidth_bound_s,
        resident_warps: q.resident_warps,
        effective_warps: q.effective_warps,
        block_turnover_s: q.block_turnover_s,
        delay_cycles: q.delay,
        waves,
        occupancy_efficiency,
        time_adjusted_s,
        lups_per_s,
    }
}

/// The seconds the SMs are busy with `launch` by the queueing model (the predicted time less
/// the launch overhead), at the boost clock.
pub fn busy_seconds(hw: &HwConfig, launch: &Launch, inputs: &TimeInputs) -> f64 {
    busy_seconds_at(hw, launch, inputs, None)
}

/// [`busy_seconds`] at `clock_ghz` (the config's boost clock when `None`).
pub fn busy_seconds_at(
    hw: &HwConfig,
    launch: &Launch,
    inputs: &TimeInputs,
    clock_ghz: Option<f64>,
) -> f64 {
    queueing(hw, launch, inputs, clock_ghz).predicted_s - hw.timing.launch_overhead_us * 1e-6
}

/// The limiters and the per-SM queueing model of [`estimate`].
fn queueing(
    hw: &HwConfig,
    launch: &Launch,
    inputs: &TimeInputs,
    clock_ghz: Option<f64>,
) -> Queueing {
    let clock = clock_ghz.unwrap_or(hw.sm.clock_ghz);
    let clock_scale = clock / hw.sm.clock_ghz;
    let mut limiters = Vec::new();
    let dram_gbs = hw.bandwidth.dram_gbs.unwrap_or(hw.dram.bandwidth_gbs);
    if let Some(b) = inputs.dram_bytes {
        limiters.push(LimiterTime {
            name: "dram",
            seconds: b / (dram_gbs * 1e9),
        });
    }
    // Not scaled with the SM clock: the H200's measured L2 rate holds at base clocks (the dev
    // set's star4 128x2x1 moves 9.9 TB/s between L1 and L2 under ncu's base-clock lock).
    if let (Some(b), Some(gbs)) = (inputs.l2_bytes, hw.bandwidth.l2_gbs) {
        limiters.push(LimiterTime {
            name: "l2",
            seconds: b / (gbs * 1e9),
        });
    }
    match (hw.bandwidth.l1_gbs, inputs.l1_bytes, inputs.l1_wavefronts) {
        (Some(gbs), Some(b), _) => limiters.push(LimiterTime {
            name: "l1",
            seconds: b / (gbs * clock_scale * 1e9),
        }),
        (None, _, Some(w)) => limiters.push(LimiterTime {
            name: "l1",
            seconds: w / (hw.sm.count as f64 * clock * 1e9),
        }),
        _ => {}
    }
    let double = launch.arrays.iter().any(|a| a.element_bytes == 8);
    let peak = if double {
        hw.bandwidth.fp64_gflops
    } else {
        hw.bandwidth.fp32_gflops
    };
    if let (Some(f), Some(g)) = (inputs.flops, peak) {
        limiters.push(LimiterTime {
            name: "fp",
            seconds: f / (g * clock_scale * 1e9),
        });
    }
    let bandwidth_bound_s = limiters.iter().map(|l| l.seconds).fold(0.0, f64::max);

    // The per-SM queueing model, in cycles of the SM clock.
    let sms = hw.sm.count as f64;
    let cycles_per_s = clock * 1e9;
    let warps_per_block = launch.occupancy.warps_per_block as f64;
    let all_warps = launch.total_blocks as f64 * warps_per_block;
    let warps = inputs.active_warps.unwrap_or(all_warps).max(1.0);
    let active_per_block = warps / launch.total_blocks.max(1) as f64;
    let resident_warps = launch.occupancy.blocks_per_sm as f64 * active_per_block;
    let warps_per_sm = warps / sms;
    let effective_warps = resident_warps.max(1.0).min(warps_per_sm.max(1.0));
    // A level moving B bytes at bandwidth W serves one warp's share of B at W / SMs per SM.
    let demands: Vec<f64> = limiters
        .iter()
        .map(|l| l.seconds * sms / warps * cycles_per_s)
        .collect();
    let delay = hw.timing.warp_latency_cycles() * inputs.rounds_per_warp.max(1.0);
    let throughput = mva_throughput(effective_warps, delay, &demands);
    let utilisation: Vec<f64> = demands.iter().map(|d| (d * throughput).min(1.0)).collect();
    let blocks_per_sm = launch.total_blocks as f64 / sms;
    let slots = launch.occupancy.blocks_per_sm.max(1) as f64;
    let block_turnover_s =
        hw.timing.block_turnover_cycles * inputs.rounds_per_warp.max(1.0) * blocks_per_sm
            / (slots * slots)
            / cycles_per_s;
    let predicted_s = warps_per_sm / throughput / cycles_per_s
        + block_turnover_s
        + hw.timing.launch_overhead_us * 1e-6;
    Queueing {
        clock,
        limiters,
        bandwidth_bound_s,
        utilisation,
        resident_warps,
        effective_warps,
        block_turnover_s,
        delay,
        predicted_s,
    }
}

/// Mean rounds of loads of the active warps, at least one: each round is one more wait for loads
/// issued together (a loop whose body ends in a store: one per trip). Counted on the warps'
/// instruction streams ([`crate::launch::stream::StreamTotals`]), so a program gives the same
/// however it is written (loops, `if`s that always hold, or unrolled).
fn rounds_per_warp(counts: &crate::sim::Counts) -> f64 {
    if counts.active_warps == 0 {
        return 1.0;
    }
    (counts.load_rounds as f64 / counts.active_warps as f64).max(1.0)
}

/// Time inputs from simulated counts.
pub fn inputs_from_counts(
    counts: &crate::sim::Counts,
    kernel: &Kernel,
    launch: &Launch,
) -> TimeInputs {
    TimeInputs {
        flops: launch_flops(kernel, launch),
        ..traffic_inputs(counts)
    }
}

/// Time inputs from simulated counts, without the floating-point work (which needs the kernel's
/// description, not only its launch).
pub fn traffic_inputs(counts: &crate::sim::Counts) -> TimeInputs {
    let sector = crate::metrics::SECTOR_BYTES as f64;
    TimeInputs {
        dram_bytes: Some((counts.dram.read_sectors + counts.dram.write_sectors) as f64 * sector),
        l2_bytes: Some((counts.l2.read_sectors + counts.l2.write_sectors) as f64 * sector),
        l1_bytes: Some(
            (counts.l1.load_sectors + counts.l1.store_sectors) as f64 * sector
                + shared_bytes(&counts.l1),
        ),
        // Shared accesses' wavefronts are in the total: they take the same data pipe.
        l1_wavefronts: Some(counts.l1.wavefronts as f64),
        active_warps: Some(counts.active_warps as f64),
        rounds_per_warp: rounds_per_warp(counts),
        ..Default::default()
    }
}

/// What the shared accesses move through the L1's data array for a byte-based L1 limiter
/// (`bandwidth.l1_gbs`): one pass of the 128-byte-wide array per wavefront (shared memory and
/// the L1 are one storage).
fn shared_bytes(l1: &crate::sim::sm_stage::L1Counters) -> f64 {
    ((l1.shared_load_wavefronts + l1.shared_store_wavefronts) * crate::metrics::LINE_BYTES) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::LaunchRequest;

    fn setup(hw: &str, kernel: &str) -> (HwConfig, Kernel, Launch) {
        let hw = HwConfig::load(hw).unwrap();
        let k = crate::input::trace::load(kernel).unwrap();
        let l = Launch::new(&k, &hw, &LaunchRequest::default()).unwrap();
        (hw, k, l)
    }

    #[test]
    fn the_bandwidth_bound_is_the_largest_limiter() {
        let (hw, k, l) = setup("k20", "su-7pt-1");
        let t = estimate(
            &hw,
            &k,
            &l,
            &TimeInputs {
                dram_bytes: Some(160.88e9 * 0.002),
                l2_bytes: Some(367.87e9 * 0.001),
                l1_bytes: Some(1215.35e9 * 0.0005),
                ..Default::default()
            },
            None,
        );
        assert!((t.bandwidth_bound_s - 0.002).abs() < 1e-15);
        assert_eq!(t.limiters.len(), 3);
        // 256^3 / (32*4) = 131072 blocks, 16 per SMX on 13 SMX: 631 waves (Table 2 row 20).
        assert_eq!(t.waves, 631);
        assert!((t.time_adjusted_s - 0.002 * (1.0 + 1.0 / 631.0)).abs() < 1e-15);
        // With 64 resident warps per SMX the queueing model ends close to the bound, DRAM-bound.
        assert_eq!(t.limiter, "dram");
        assert!(
            t.predicted_s > 0.002 && t.predicted_s < 0.0021,
            "{}",
            t.predicted_s
        );
        assert!((t.lups_per_s - 256f64.powi(3) / t.predicted_s).abs() < 1.0);
    }

    #[test]
    fn mva_with_one_customer_is_the_sum_of_delay_and_demands() {
        // 1 / (1000 + 10 + 30) jobs per cycle.
        let x = mva_throughput(1.0, 1000.0, &[10.0, 30.0]);
        assert!((x - 1.0 / 1040.0).abs() < 1e-15);
        // Two customers by hand: R(2) = 10 (1 + 10/1040) + 30 (1 + 30/1040); X = 2 / (1000 + R).
        let r2 = 10.0 * (1.0 + 10.0 / 1040.0) + 30.0 * (1.0 + 30.0 / 1040.0);
        assert!((mva_throughput(2.0, 1000.0, &[10.0, 30.0]) - 2.0 / (1000.0 + r2)).abs() < 1e-15);
        // Halfway between one and two customers.
        let half = mva_throughput(1.5, 1000.0, &[10.0, 30.0]);
        assert!((half - (1.0 / 1040.0 + 2.0 / (1000.0 + r2)) / 2.0).abs() < 1e-15);
    }

    #[test]
    fn mva_with_many_customers_tends_to_the_largest_demand() {
        let x = mva_throughput(2000.0, 1000.0, &[10.0, 30.0]);
        assert!((x - 1.0 / 30.0).abs() < 1e-6 / 30.0, "{x}");
        assert!(x <= 1.0 / 30.0);
    }

    /// A copy of 64 blocks of one warp on a one-SM GPU: hand-computed limits of the model.
    fn one_sm_copy(blocks_per_sm: u32, latency: f64) -> TimeEstimate {
        let (mut hw, k, mut l) = setup("h200", "copy");
        hw.sm.count = 1;
        hw.timing.dram_latency_cycles = latency;
        hw.timing.loaded_latency_factor = 1.0;
        hw.timing.block_turnover_cycles = 0.0;
        hw.timing.launch_overhead_us = 0.0;
        hw.bandwidth.l2_gbs = None;
        l.total_blocks = 64;
        l.occupancy.warps_per_block = 1;
        l.occupancy.blocks_per_sm = blocks_per_sm;
        // 64 warps, each moving 1000 B of DRAM traffic at 100 GB/s: 10 cycles per warp at 1 GHz.
        hw.bandwidth.dram_gbs = Some(100.0);
        estimate(
            &hw,
            &k,
            &l,
            &TimeInputs {
                dram_bytes: Some(64.0 * 1000.0),
                active_warps: Some(64.0),
                ..Default::default()
            },
            Some(1.0),
        )
    }

    #[test]
    fn one_warp_per_sm_is_latency_bound() {
        // Each warp waits 1000 cycles plus its 10-cycle transfer: 64 × 1010 cycles at 1 GHz.
        let t = one_sm_copy(1, 1000.0);
        assert!(
            (t.predicted_s - 64.0 * 1010e-9).abs() < 1e-15,
            "{}",
            t.predicted_s
        );
        assert_eq!(t.limiter, "latency");
        assert!((t.bandwidth_bound_s - 640e-9).abs() < 1e-18);
    }

    #[test]
    fn many_warps_per_sm_are_bandwidth_bound() {
        // 64 resident warps against a 100-cycle delay and a 10-cycle queue: far past the knee
        // at (100 + 10) / 10 = 11 warps, the queue is saturated (X = 0.1 warps per cycle to
        // within 1e-9), so the 64 warps take the bandwidth bound's 640 cycles.
        let t = one_sm_copy(64, 100.0);
        let x = mva_throughput(64.0, 100.0, &[10.0]);
        assert!((x - 0.1).abs() < 1e-9, "{x}");
        assert!((t.predicted_s - 64.0 / x * 1e-9).abs() < 1e-15);
        assert!((t.predicted_s - 640e-9).abs() < 1e-15, "{}", t.predicted_s);
        assert_eq!(t.limiter, "dram");
    }

    #[test]
    fn every_block_turning_over_costs_its_share_of_the_sm_squared() {
        let (mut hw, k, l) = setup("h200", "star1");
        let inputs = TimeInputs {
            dram_bytes: Some(1e8),
            ..Default::default()
        };
        hw.timing.block_turnover_cycles = 0.0;
        let none = estimate(&hw, &k, &l, &inputs, Some(1.0));
        hw.timing.block_turnover_cycles = 1000.0;
        let some = estimate(&hw, &k, &l, &inputs, Some(1.0));
        // star1's default 32x8x4 blocks at 256^3: 8 x 32 x 64 = 16384 blocks, 2 per SM on 132
        // SMs: 16384 / 132 blocks per SM, each costing 1000 / 2^2 cycles at 1 GHz.
        assert_eq!(l.total_blocks, 16384);
        assert_eq!(l.occupancy.blocks_per_sm, 2);
        let expected = 1000.0 * 16384.0 / 132.0 / 4.0 * 1e-9;
        assert!((some.block_turnover_s - expected).abs() < 1e-15);
        assert!((some.predicted_s - none.predicted_s - expected).abs() < 1e-12);
        assert_eq!(none.block_turnover_s, 0.0);
    }

    #[test]
    fn l1_wavefronts_count_one_per_sm_per_cycle() {
        let (hw, k, l) = setup("h200", "star4");
        // 132 SMs × 1.5e9 cycles/s: 1.98e11 wavefronts take one second at base clock.
        let t = estimate(
            &hw,
            &k,
            &l,
            &TimeInputs {
                l1_wavefronts: Some(1.98e11),
                ..Default::default()
            },
            Some(1.5),
        );
        assert!((t.bandwidth_bound_s - 1.0).abs() < 1e-12);
        assert_eq!(t.limiters[0].name, "l1");
    }

    #[test]
    fn clocks_are_gigahertz_of_a_gpu_and_other_units_are_named() {
        for ok in [0.1, 0.706, 1.98, 5.0] {
            assert_eq!(check_clock_ghz(ok), Ok(()), "{ok}");
        }
        let e = check_clock_ghz(1500.0).unwrap_err();
        assert!(e.ends_with("did you mean 1.5 GHz (1500 MHz)?"), "{e}");
        let e = check_clock_ghz(1.41e9).unwrap_err();
        assert!(e.ends_with("did you mean 1.41 GHz (1410000000 Hz)?"), "{e}");
        // Neither a GPU clock nor one in another unit: no guess.
        for bad in [0.05, 7.0, f64::INFINITY] {
            let e = check_clock_ghz(bad).unwrap_err();
            assert!(
                e.contains("between 0.1 and 5") && !e.contains("did you mean"),
                "{e}"
            );
        }
        let (hw, _, _) = setup("h200", "star1");
        assert_eq!(clock_choice("1.2", &hw), Ok(Some(1.2)));
        let e = clock_choice("1500", &hw).unwrap_err();
        assert_eq!(e.source_name, "--clock");
        assert!(e.message.starts_with("1500 GHz is no GPU clock"), "{e}");
    }
}
