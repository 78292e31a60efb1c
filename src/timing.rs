//! The time model: traffic volumes and the launch's shape → the kernel's duration.
//!
//! The SMs' busy time comes from the per-SM queueing model of [`crate::sim::queueing`] (the
//! simulator needs it mid-run, so it lives a layer below); this adds what needs the kernel: the
//! limiter that sets the pace, waves and occupancy efficiency (Su et al.), the launch's
//! floating-point work, lattice updates per second, the clock choice, and the time inputs of a
//! simulation ([`inputs_from_counts`]). The roofline / Su et al. formula (2) argument is kept as
//! [`TimeEstimate::bandwidth_bound_s`] and the per-limiter times. Details and the measurements
//! behind the constants: `docs/model.md`.

use crate::input::hw::{HwConfig, check_clock_ghz};
use crate::input::trace::{FpOps, Kernel};
use crate::launch::Launch;
use crate::sim::Counts;
use crate::sim::queueing::queueing;
pub use crate::sim::queueing::{LIMITERS, LimiterTime, TimeInputs};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::Value;

/// A time estimate. Serialised as one flat object: `predicted_s`, `limiter`, each limiter's
/// `<name>_s` and `<name>_utilisation`, `bandwidth_bound_s`, `latency_s`, `block_turnover_s`,
/// `launch_overhead_s` (the four terms of `predicted_s`, [`TimeEstimate::terms`]),
/// `resident_warps`, `effective_warps`, `delay_cycles` (with `rounds_per_warp`,
/// `loads_per_round`, `barriers_per_warp` and `active_warps`, the inputs it and the queueing model come from),
/// `time_adjusted_s`, `lups_per_s`,
/// `waves`, `occupancy_efficiency`, `clock_ghz` and `clock` (which clock, [`Clock`]).
#[derive(Debug, Clone, PartialEq)]
pub struct TimeEstimate {
    /// Clock assumed (GHz).
    pub clock_ghz: f64,
    /// Which clock `clock_ghz` is.
    pub clock: Clock,
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
    /// The queueing model's time beyond the bandwidth bound: memory latency the resident warps
    /// do not hide, the last partial wave's included (seconds; part of `predicted_s`).
    pub latency_s: f64,
    /// Time the SMs lose to blocks turning over in their slots (seconds; part of `predicted_s`).
    pub block_turnover_s: f64,
    /// The fixed cost of a launch, `[timing] launch_overhead_us` (seconds; part of
    /// `predicted_s`).
    pub launch_overhead_s: f64,
    /// The queueing model's delay: cycles a warp waits on latency per pass through the network
    /// (its rounds of loads' latency, `barrier_cycles` per barrier and
    /// `own_cycles_per_instruction` per instruction it issues).
    pub delay_cycles: f64,
    /// Dependent rounds of loads per warp (at least 1), the factor `delay_cycles` grows with.
    pub rounds_per_warp: f64,
    /// Global load instructions a warp issues per round, which lengthen a round's latency.
    pub loads_per_round: f64,
    /// Block barriers a warp passes, each `[timing] barrier_cycles` of `delay_cycles`.
    pub barriers_per_warp: f64,
    /// Warps of the launch with at least one lane inside the guard.
    pub active_warps: f64,
    /// Sectors the stores left partly written in the L2 (`l2.sectors_left_partial`).
    pub sectors_left_partial: f64,
    /// Of those, the sectors two SMs (two blocks) write between them
    /// (`l2.partial_sectors_across_sms`).
    pub partial_sectors_across_sms: f64,
    /// Partly written sectors waiting in the L2 at once: the GPU's resident warps times the
    /// partly written sectors a warp stores per round of loads.
    pub partial_sectors_waiting: f64,
    /// What the partly written sectors add to the DRAM limiter's time (`[partial_writeback]`;
    /// seconds, part of `dram_s`).
    pub partial_writeback_s: f64,
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
    /// The four terms `predicted_s` is the sum of, as the model composes it (`docs/model.md`,
    /// "Time"): the bandwidth bound (the largest limiter's time at full bandwidth), the latency
    /// the resident warps do not hide (the queueing model's time beyond the bound), the block
    /// turnover and the launch overhead.
    pub fn terms(&self) -> [(&'static str, f64); 4] {
        [
            ("bandwidth bound", self.bandwidth_bound_s),
            ("latency", self.latency_s),
            ("block turnover", self.block_turnover_s),
            ("launch overhead", self.launch_overhead_s),
        ]
    }

    /// The limiter whose time is the bandwidth bound (the largest), if any.
    pub fn bound_by(&self) -> Option<&'static str> {
        (self.limiters.iter())
            .filter(|l| l.seconds == self.bandwidth_bound_s)
            .map(|l| l.name)
            .next()
    }

    /// The clock for people: `clock 1.50 GHz (base, the clock Nsight Compute locks; …)`.
    pub fn clock_text(&self) -> String {
        format!(
            "clock {:.2} GHz ({})",
            self.clock_ghz,
            self.clock.describe()
        )
    }

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
        let clock = Clock::from_name(o.get("clock")?.as_str()?)?;
        Some(TimeEstimate {
            clock_ghz: num("clock_ghz")?,
            clock,
            limiters,
            predicted_s: num("predicted_s")?,
            limiter,
            utilisation,
            bandwidth_bound_s: num("bandwidth_bound_s")?,
            latency_s: num("latency_s")?,
            launch_overhead_s: num("launch_overhead_s")?,
            resident_warps: num("resident_warps")?,
            effective_warps: num("effective_warps")?,
            block_turnover_s: num("block_turnover_s")?,
            delay_cycles: num("delay_cycles")?,
            // Absent from journals written before they were reported.
            rounds_per_warp: num("rounds_per_warp").unwrap_or(f64::NAN),
            loads_per_round: num("loads_per_round").unwrap_or(f64::NAN),
            barriers_per_warp: num("barriers_per_warp").unwrap_or(f64::NAN),
            active_warps: num("active_warps").unwrap_or(f64::NAN),
            sectors_left_partial: num("sectors_left_partial").unwrap_or(f64::NAN),
            partial_sectors_across_sms: num("partial_sectors_across_sms").unwrap_or(f64::NAN),
            partial_sectors_waiting: num("partial_sectors_waiting").unwrap_or(f64::NAN),
            partial_writeback_s: num("partial_writeback_s").unwrap_or(f64::NAN),
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
    latency_s: f64,
    block_turnover_s: f64,
    launch_overhead_s: f64,
    resident_warps: f64,
    effective_warps: f64,
    delay_cycles: f64,
    rounds_per_warp: f64,
    loads_per_round: f64,
    barriers_per_warp: f64,
    active_warps: f64,
    sectors_left_partial: f64,
    partial_sectors_across_sms: f64,
    partial_sectors_waiting: f64,
    partial_writeback_s: f64,
    time_adjusted_s: f64,
    lups_per_s: f64,
    waves: u64,
    occupancy_efficiency: f64,
    clock_ghz: f64,
    clock: &'a str,
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
            latency_s: self.latency_s,
            block_turnover_s: self.block_turnover_s,
            launch_overhead_s: self.launch_overhead_s,
            resident_warps: self.resident_warps,
            effective_warps: self.effective_warps,
            delay_cycles: self.delay_cycles,
            rounds_per_warp: self.rounds_per_warp,
            loads_per_round: self.loads_per_round,
            barriers_per_warp: self.barriers_per_warp,
            active_warps: self.active_warps,
            sectors_left_partial: self.sectors_left_partial,
            partial_sectors_across_sms: self.partial_sectors_across_sms,
            partial_sectors_waiting: self.partial_sectors_waiting,
            partial_writeback_s: self.partial_writeback_s,
            time_adjusted_s: self.time_adjusted_s,
            lups_per_s: self.lups_per_s,
            waves: self.waves,
            occupancy_efficiency: self.occupancy_efficiency,
            clock_ghz: self.clock_ghz,
            clock: self.clock.name(),
        }
        .serialize(serializer)
    }
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

/// Which clock a time estimate is at. The default is the base clock: Nsight Compute locks the
/// clock to base (`--clock-control base`), so that is the clock of the measured times the model
/// is validated against and the one a user compares with (`docs/model.md`, "Time").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// The config's `sm.base_clock_ghz` (the default).
    Base,
    /// The config's `sm.clock_ghz`, the boost clock (`--clock boost`).
    Boost,
    /// The config's one clock, `sm.clock_ghz`: it gives no base clock (the default there).
    Only,
    /// A clock given in GHz (`--clock 1.2`) that is neither of the config's.
    Given,
}

impl Clock {
    /// Every clock with its name in JSON and CSV.
    const NAMES: [(Clock, &'static str); 4] = [
        (Clock::Base, "base"),
        (Clock::Boost, "boost"),
        (Clock::Only, "only"),
        (Clock::Given, "given"),
    ];

    /// The name in JSON and CSV: `base`, `boost`, `only` or `given`.
    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(c, _)| *c == self)
            .map_or("given", |(_, n)| n)
    }

    /// The clock named `name` ([`Clock::name`]).
    pub fn from_name(name: &str) -> Option<Clock> {
        Self::NAMES
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(c, _)| *c)
    }

    /// Which of `hw`'s clocks `ghz` is.
    pub fn of(ghz: f64, hw: &HwConfig) -> Clock {
        match hw.sm.base_clock_ghz {
            Some(base) if ghz == base => Clock::Base,
            Some(_) if ghz == hw.sm.clock_ghz => Clock::Boost,
            None if ghz == hw.sm.clock_ghz => Clock::Only,
            _ => Clock::Given,
        }
    }

    /// What the clock is, for people: `base, the clock Nsight Compute locks; --clock boost for
    /// the boost clock`.
    pub fn describe(self) -> &'static str {
        match self {
            Clock::Base => {
                "base, the clock Nsight Compute locks; --clock boost for the boost clock"
            }
            Clock::Boost => "boost; Nsight Compute measures at the base clock, --clock base",
            Clock::Only => "the config's one clock, sm.clock_ghz: it gives no base clock",
            Clock::Given => "--clock",
        }
    }
}

/// The clock in GHz the time model runs at by default: the config's base clock, or its one
/// clock where it gives no base clock ([`Clock`]).
pub fn default_clock_ghz(hw: &HwConfig) -> f64 {
    hw.sm.base_clock_ghz.unwrap_or(hw.sm.clock_ghz)
}

/// The clock in GHz for `--clock` (`base`, `boost` or a number of GHz), or `None` for the
/// default, [`default_clock_ghz`] (`base`).
pub fn clock_choice(clock: &str, hw: &HwConfig) -> crate::Result<Option<f64>> {
    match clock {
        "base" => Ok(None),
        "boost" => Ok(Some(hw.sm.clock_ghz)),
        ghz => match ghz.parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 => check_clock_ghz(v)
                .map(|()| Some(v))
                .map_err(|m| crate::Error::new("--clock", m)),
            _ => Err(crate::Error::new(
                "--clock",
                format!("'{ghz}' is neither base, boost nor a positive number of GHz"),
            )),
        },
    }
}

/// Floating-point operations of the launch by precision, if the trace gives its flops per
/// update.
pub fn launch_flops(launch: &Launch) -> Option<FpOps> {
    launch
        .flops_per_update
        .map(|per_update| per_update.scaled(launch.lattice_updates as f64))
}

/// Estimates the time of `launch` from `inputs` at `clock_ghz` ([`default_clock_ghz`], the base
/// clock, when `None`).
pub fn estimate(
    hw: &HwConfig,
    kernel: &Kernel,
    launch: &Launch,
    inputs: &TimeInputs,
    clock_ghz: Option<f64>,
) -> TimeEstimate {
    let clock_ghz = clock_ghz.unwrap_or_else(|| default_clock_ghz(hw));
    let q = queueing(hw, launch, inputs, Some(clock_ghz));
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
        clock: Clock::of(q.clock, hw),
        limiters: q.limiters,
        predicted_s: q.predicted_s,
        limiter,
        utilisation: q.utilisation,
        bandwidth_bound_s: q.bandwidth_bound_s,
        latency_s: q.busy_s - q.bandwidth_bound_s,
        launch_overhead_s: hw.timing.launch_overhead_us * 1e-6,
        resident_warps: q.resident_warps,
        effective_warps: q.effective_warps,
        block_turnover_s: q.block_turnover_s,
        delay_cycles: q.delay,
        rounds_per_warp: q.rounds_per_warp,
        loads_per_round: q.loads_per_round,
        barriers_per_warp: q.barriers_per_warp,
        active_warps: q.active_warps,
        sectors_left_partial: q.partial.left_partial,
        partial_sectors_across_sms: q.partial.across_sms,
        partial_sectors_waiting: q.partial.waiting,
        partial_writeback_s: q.partial.seconds,
        waves,
        occupancy_efficiency,
        time_adjusted_s,
        lups_per_s,
    }
}

/// Time inputs from simulated counts: their traffic ([`Counts::time_inputs`]), the launch's
/// floating-point work and its instructions (per warp, times the warps with an active lane).
pub fn inputs_from_counts(counts: &Counts, launch: &Launch) -> TimeInputs {
    TimeInputs {
        flops: launch_flops(launch),
        warp_instructions: launch
            .instructions_per_warp
            .map(|n| n * counts.active_warps as f64),
        ..counts.time_inputs()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::LaunchRequest;
    use crate::sim::queueing::mva_throughput;

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

    /// A copy of 64 blocks of one warp on a one-SM GPU: hand-computed limits of the model.
    fn one_sm_copy(blocks_per_sm: u32, latency: f64) -> TimeEstimate {
        one_sm_copy_of(64, blocks_per_sm, latency)
    }

    /// [`one_sm_copy`] with `blocks` blocks of one warp.
    fn one_sm_copy_of(blocks: u64, blocks_per_sm: u32, latency: f64) -> TimeEstimate {
        let (mut hw, k, mut l) = setup("h200", "copy");
        hw.sm.count = 1;
        hw.timing.dram_latency_cycles = latency;
        hw.timing.loaded_latency_factor = 1.0;
        hw.timing.latency_per_load_factor = 0.0;
        hw.timing.block_turnover_cycles = 0.0;
        hw.timing.launch_overhead_us = 0.0;
        hw.timing.block_launch_ns = None;
        hw.bandwidth.l2_gbs = None;
        l.total_blocks = blocks;
        l.occupancy.warps_per_block = 1;
        l.occupancy.blocks_per_sm = blocks_per_sm;
        // Each warp moves 1000 B of DRAM traffic at 100 GB/s: 10 cycles per warp at 1 GHz.
        hw.bandwidth.dram_gbs = Some(100.0);
        estimate(
            &hw,
            &k,
            &l,
            &TimeInputs {
                dram_bytes: Some(blocks as f64 * 1000.0),
                active_warps: Some(blocks as f64),
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
        // SMs: 16384 / 132 blocks per SM, of which all but the first wave's 2 take over a slot,
        // each costing 1000 / 2^2 cycles at 1 GHz.
        assert_eq!(l.total_blocks, 16384);
        assert_eq!(l.occupancy.blocks_per_sm, 2);
        let expected = 1000.0 * (16384.0 / 132.0 - 2.0) / 4.0 * 1e-9;
        assert!((some.block_turnover_s - expected).abs() < 1e-15);
        assert!((some.predicted_s - none.predicted_s - expected).abs() < 1e-12);
        assert_eq!(none.block_turnover_s, 0.0);
    }

    #[test]
    fn a_launch_of_one_wave_turns_no_block_over() {
        let (mut hw, k, mut l) = setup("h200", "star1");
        hw.timing.block_turnover_cycles = 1000.0;
        let inputs = TimeInputs {
            dram_bytes: Some(1e8),
            ..Default::default()
        };
        // 264 blocks fill the 132 SMs' 2 slots each once: none waits for a slot.
        l.total_blocks = 264;
        assert_eq!(
            estimate(&hw, &k, &l, &inputs, Some(1.0)).block_turnover_s,
            0.0
        );
        // 396: one block per SM takes over a slot, at 1000 / 2^2 cycles.
        l.total_blocks = 396;
        let t = estimate(&hw, &k, &l, &inputs, Some(1.0));
        assert!(
            (t.block_turnover_s - 250e-9).abs() < 1e-18,
            "{}",
            t.block_turnover_s
        );
    }

    #[test]
    fn a_block_of_one_warp_turns_over_at_no_cost() {
        let (mut hw, k, mut l) = setup("h200", "star1");
        hw.timing.block_turnover_cycles = 1000.0;
        let inputs = TimeInputs {
            dram_bytes: Some(1e8),
            ..Default::default()
        };
        // 396 blocks on 132 SMs with 2 slots each: one per SM takes over a slot. Blocks of two
        // warps pay 1000 / 2^2 cycles for it; a block of one warp leaves no warp behind.
        l.total_blocks = 396;
        l.occupancy.warps_per_block = 2;
        let two = estimate(&hw, &k, &l, &inputs, Some(1.0)).block_turnover_s;
        assert!((two - 250e-9).abs() < 1e-18, "{two}");
        l.occupancy.warps_per_block = 1;
        assert_eq!(
            estimate(&hw, &k, &l, &inputs, Some(1.0)).block_turnover_s,
            0.0
        );
    }

    #[test]
    fn a_block_whose_warps_only_store_turns_over_at_no_cost() {
        let (mut hw, k, mut l) = setup("h200", "star1");
        hw.timing.block_turnover_cycles = 1000.0;
        l.total_blocks = 396;
        l.occupancy.warps_per_block = 2;
        let turnover = |l: &Launch, inputs: &TimeInputs| {
            estimate(&hw, &k, l, inputs, Some(1.0)).block_turnover_s
        };
        // no loads: the warps end as they issue their stores (validation/dirty_budget.cu)
        let stores = TimeInputs {
            dram_bytes: Some(1e8),
            loads_per_round: Some(0.0),
            ..Default::default()
        };
        assert_eq!(turnover(&l, &stores), 0.0);
        // a load, a barrier or an atomic gives them something to wait for: 1000 / 2^2 cycles
        let loads = TimeInputs {
            loads_per_round: Some(1.0),
            ..stores
        };
        let atomics = TimeInputs {
            atomic_requests: Some([1e3, 1e3]),
            ..stores
        };
        assert!((turnover(&l, &loads) - 250e-9).abs() < 1e-18);
        assert!((turnover(&l, &atomics) - 250e-9).abs() < 1e-18);
        l.barriers_per_thread = 1;
        assert!((turnover(&l, &stores) - 250e-9).abs() < 1e-18);
    }

    #[test]
    fn a_slot_turns_over_at_one_cost_however_many_rounds_its_blocks_run() {
        let (mut hw, k, mut l) = setup("h200", "star1");
        hw.timing.block_turnover_cycles = 1000.0;
        l.total_blocks = 396;
        // One block per SM takes over a slot, at 1000 / 2^2 cycles, whether its warps run one
        // round or 256 (validation/turnover.cu: the same copy in longer blocks runs faster).
        for rounds in [1.0, 16.0, 256.0] {
            let inputs = TimeInputs {
                dram_bytes: Some(1e8),
                rounds_per_warp: rounds,
                ..Default::default()
            };
            let t = estimate(&hw, &k, &l, &inputs, Some(1.0)).block_turnover_s;
            assert!((t - 250e-9).abs() < 1e-18, "{rounds} rounds: {t}");
        }
    }

    #[test]
    fn the_last_partial_wave_runs_at_its_own_population() {
        // One SM with 4 slots of one-warp blocks, a 1000-cycle delay and a 10-cycle queue.
        let time = |blocks: u64| one_sm_copy_of(blocks, 4, 1000.0).predicted_s * 1e9;
        let full = mva_throughput(4.0, 1000.0, &[10.0]);
        // Two whole waves go at the full population's pace; so does one wave alone.
        assert!((time(8) - 8.0 / full).abs() < 1e-6, "{}", time(8));
        assert!((time(4) - 4.0 / full).abs() < 1e-6, "{}", time(4));
        // A wave and a half: the last two blocks run on their own, at two warps' pace, taking
        // a warp's whole life there (2 / X(2)) instead of their share of the full pace (2 / X(4)).
        let half = mva_throughput(2.0, 1000.0, &[10.0]);
        let expected = 6.0 / full + 2.0 / half - 2.0 / full;
        assert!(
            (time(6) - expected).abs() < 1e-6,
            "{} against {expected}",
            time(6)
        );
        // Almost latency-bound, that is close to two whole waves' time.
        assert!(
            (time(6) / time(8) - 1.0).abs() < 0.02,
            "{} {}",
            time(6),
            time(8)
        );
    }

    #[test]
    fn each_load_of_a_round_lengthens_the_delay() {
        let (hw, k, l) = setup("h200", "star1");
        let delay = |loads: Option<f64>, rounds: f64| {
            let inputs = TimeInputs {
                dram_bytes: Some(1e8),
                rounds_per_warp: rounds,
                loads_per_round: loads,
                ..Default::default()
            };
            estimate(&hw, &k, &l, &inputs, None).delay_cycles
        };
        // (1.25 + 0.15 x loads) idle DRAM latencies of 535 cycles per round.
        assert!((delay(Some(5.0), 1.0) - 2.0 * 535.0).abs() < 1e-9);
        assert!((delay(Some(5.0), 3.0) - 3.0 * 2.0 * 535.0).abs() < 1e-9);
        // Unknown: the program's loads as one round (star1: 7 loads, counted up to the
        // config's round_loads_limit of 6).
        assert!((delay(None, 1.0) - (1.25 + 0.15 * 6.0) * 535.0).abs() < 1e-9);
        // Past the limit a round's loads add nothing (validation/round_latency.cu).
        assert_eq!(delay(Some(25.0), 1.0), delay(Some(6.0), 1.0));
        assert!(delay(Some(6.0), 1.0) > delay(Some(5.0), 1.0));
    }

    #[test]
    fn many_small_blocks_go_at_the_dispatchers_pace() {
        // 2^21 blocks at 0.61 ns each: 1.279 ms whatever the clock, the H200's measured pace
        // (jacobi2d_f32 8192^2 in 32x1 blocks: 1288 us, tests/data/h200/families/).
        let (hw, k, mut l) = setup("h200", "copy");
        // One-warp blocks, 32 of them on each SM.
        l.total_blocks = 1 << 21;
        l.occupancy.warps_per_block = 1;
        l.occupancy.blocks_per_sm = 32;
        let inputs = TimeInputs {
            dram_bytes: Some(5e8),
            active_warps: Some((1 << 21) as f64),
            ..Default::default()
        };
        for clock in [1.5, 1.98] {
            let t = estimate(&hw, &k, &l, &inputs, Some(clock));
            let launch = t.limiters.iter().find(|x| x.name == "launch").unwrap();
            assert!((launch.seconds - 2097152.0 * 0.61e-9).abs() < 1e-12);
            assert_eq!(t.limiter, "launch");
            assert!(t.predicted_s >= launch.seconds);
        }
        // A config without a measured pace has no such limiter.
        let v100 = HwConfig::load("v100").unwrap();
        let t = estimate(&v100, &k, &l, &inputs, None);
        assert!(t.limiters.iter().all(|x| x.name != "launch"));
    }

    #[test]
    fn partly_written_sectors_cost_the_l2_at_their_own_rate() {
        let (hw, k, l) = setup("h200", "copy");
        let l2_with = |partial: Option<f64>, requests: Option<f64>| {
            let inputs = TimeInputs {
                l2_bytes: Some(32.0 * 1e6),
                l2_partial_write_sectors: partial,
                l2_partial_write_requests: requests,
                ..Default::default()
            };
            let t = estimate(&hw, &k, &l, &inputs, None);
            t.limiters.iter().find(|x| x.name == "l2").unwrap().seconds
        };
        let l2 = |partial: Option<f64>| l2_with(partial, None);
        // 1e6 whole sectors at 10 TB/s: 3.2 us; the same sectors all partly written, one a
        // request, at 143 sectors and 133 requests a ns: 14.5 us, the 69 a ns that
        // validation/store_patterns.cu measured
        assert!((l2(None) - 3.2e-6).abs() < 1e-15);
        assert!((l2(Some(0.0)) - 3.2e-6).abs() < 1e-15);
        let one_a_request = 1e6 / 143.0 * 1e-9 + 1e6 / 133.0 * 1e-9;
        assert!((l2(Some(1e6)) - one_a_request).abs() < 1e-15);
        assert!((l2(Some(1e6)) / (1e6 / 69.0 * 1e-9) - 1.0).abs() < 0.002);
        assert_eq!(l2_with(Some(1e6), Some(1e6)), l2(Some(1e6)));
        // four a request (validation/store_merge.cu's halves of sectors): the requests' part
        // is a quarter
        let four_a_request = 1e6 / 143.0 * 1e-9 + 0.25e6 / 133.0 * 1e-9;
        assert!((l2_with(Some(1e6), Some(0.25e6)) - four_a_request).abs() < 1e-15);
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
    fn the_l1_is_held_up_for_a_share_of_the_drams_time() {
        let (hw, k, l) = setup("h200", "star4");
        let share = hw.timing.l1_busy_per_dram_time;
        assert_eq!(share, 0.2);
        let limit = |name: &str, t: &TimeEstimate| {
            (t.limiters.iter().find(|x| x.name == name).unwrap()).seconds
        };
        // One second of wavefronts and 0.5 s of DRAM reads at 4518 GB/s: the L1 is busy 1.1 s.
        let inputs = TimeInputs {
            l1_wavefronts: Some(1.98e11),
            dram_bytes: Some(0.5 * 4518e9),
            dram_read_bytes: Some(0.5 * 4518e9),
            ..Default::default()
        };
        let at_base = |inputs: TimeInputs| estimate(&hw, &k, &l, &inputs, Some(1.5));
        let t = at_base(inputs);
        assert!((limit("dram", &t) - 0.5).abs() < 1e-12);
        assert!((limit("l1", &t) - (1.0 + share * 0.5)).abs() < 1e-12);
        assert_eq!(t.limiter, "l1");
        // DRAM-bound (2 s of reads, 1.4 s of L1): the L1 work stays hidden behind the DRAM's.
        let t = at_base(TimeInputs {
            dram_bytes: Some(2.0 * 4518e9),
            dram_read_bytes: Some(2.0 * 4518e9),
            ..inputs
        });
        assert!((limit("l1", &t) - (1.0 + share * 2.0)).abs() < 1e-12);
        assert_eq!(t.limiter, "dram");
        assert!((t.bandwidth_bound_s - 2.0).abs() < 1e-12);
        // Without DRAM traffic nothing holds the L1 up.
        let t = at_base(TimeInputs {
            dram_bytes: None,
            dram_read_bytes: None,
            ..inputs
        });
        assert!((limit("l1", &t) - 1.0).abs() < 1e-12);
    }

    /// `t`'s terms add up to its predicted time (to rounding).
    fn assert_terms_compose(t: &TimeEstimate) {
        let sum: f64 = t.terms().iter().map(|(_, s)| s).sum();
        assert!(
            (sum - t.predicted_s).abs() <= 1e-12 * t.predicted_s,
            "{:?} sum to {sum}, predicted {}",
            t.terms(),
            t.predicted_s
        );
        assert!(t.terms().iter().all(|(_, s)| *s >= 0.0), "{:?}", t.terms());
    }

    #[test]
    fn the_predicted_time_is_the_sum_of_its_terms() {
        // Latency-bound, one warp per SM: the bound is the 10-cycle transfers, the latency the
        // 64 × 1000 cycles of waiting (the config's turnover and overhead set to 0).
        let t = one_sm_copy(1, 1000.0);
        assert_terms_compose(&t);
        assert!((t.bandwidth_bound_s - 640e-9).abs() < 1e-18);
        assert!((t.latency_s - 64000e-9).abs() < 1e-15, "{}", t.latency_s);
        assert_eq!((t.block_turnover_s, t.launch_overhead_s), (0.0, 0.0));
        assert_eq!(t.bound_by(), Some("dram"));
        // Bandwidth-bound: next to no latency left.
        let t = one_sm_copy(64, 100.0);
        assert_terms_compose(&t);
        assert!(t.latency_s < 1e-6 * t.predicted_s, "{}", t.latency_s);
        // A real launch with every term: the H200's turnover and launch overhead.
        let (hw, k, l) = setup("h200", "star1");
        let t = estimate(
            &hw,
            &k,
            &l,
            &TimeInputs {
                dram_bytes: Some(1e7),
                l2_bytes: Some(3e7),
                l1_wavefronts: Some(1e7),
                ..Default::default()
            },
            None,
        );
        assert_terms_compose(&t);
        assert_eq!(t.launch_overhead_s, hw.timing.launch_overhead_us * 1e-6);
        assert!(t.block_turnover_s > 0.0 && t.latency_s > 0.0);
        // The JSON carries the terms and reads back.
        let back = TimeEstimate::from_json(&t.to_json()).unwrap();
        assert_eq!(back, t);
    }

    #[test]
    fn the_time_model_defaults_to_the_base_clock_and_names_its_clock() {
        let (hw, k, l) = setup("h200", "star1");
        let inputs = TimeInputs {
            l1_wavefronts: Some(1e9),
            ..Default::default()
        };
        let at = |clock: &str| {
            let ghz = clock_choice(clock, &hw).unwrap();
            estimate(&hw, &k, &l, &inputs, ghz)
        };
        // The H200: base 1.50 GHz (what Nsight Compute locks), boost 1.98.
        let base = at("base");
        assert_eq!((base.clock_ghz, base.clock), (1.5, Clock::Base));
        assert_eq!(estimate(&hw, &k, &l, &inputs, None), base);
        let boost = at("boost");
        assert_eq!((boost.clock_ghz, boost.clock), (1.98, Clock::Boost));
        assert_eq!(at("1.5").clock, Clock::Base);
        assert_eq!((at("1.2").clock_ghz, at("1.2").clock), (1.2, Clock::Given));
        // The L1 limiter's wavefronts go at one per SM per cycle: 1.98 / 1.5 times as long.
        let l1 = |t: &TimeEstimate| t.limiters.iter().find(|x| x.name == "l1").unwrap().seconds;
        assert!((l1(&base) / l1(&boost) - 1.98 / 1.5).abs() < 1e-12);
        assert!(base.clock_text().starts_with("clock 1.50 GHz (base, "));
        // A config with one clock (no base_clock_ghz): that clock, named so.
        let k20 = HwConfig::load("k20").unwrap();
        let l20 = Launch::new(&k, &k20, &LaunchRequest::default()).unwrap();
        let t = estimate(&k20, &k, &l20, &inputs, clock_choice("base", &k20).unwrap());
        assert_eq!((t.clock_ghz, t.clock), (0.706, Clock::Only));
        for c in [Clock::Base, Clock::Boost, Clock::Only, Clock::Given] {
            assert_eq!(Clock::from_name(c.name()), Some(c));
        }
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
