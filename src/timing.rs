//! The time model: traffic volumes → time per limiter (DRAM, L2, L1, floating point), the
//! predicted time as the largest (the roofline / Su et al. formula (2) argument: the levels
//! overlap, the busiest one sets the pace), Su et al.'s imbalance-adjusted time (18), and
//! lattice updates per second.
//!
//! Bandwidths come from the hardware config's `[bandwidth]` (measured values where there are
//! some; the DRAM peak of `[dram]` otherwise). The L1 and the FP units run at the SM clock, so
//! their rates scale with the clock the kernel runs at (boost by default; Nsight Compute measures
//! at the base clock); the measured DRAM and L2 bandwidths are used as they are. The L1 limiter counts wavefronts at one per SM per cycle when the config
//! gives no L1 bandwidth, else bytes over `l1_gbs` (the Kepler configs carry Su et al.'s measured
//! on-SMX bandwidth).

use crate::input::hw::HwConfig;
use crate::input::trace::Kernel;
use crate::launch::Launch;
use serde_json::{Map, Value, json};

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

/// A time estimate.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeEstimate {
    /// Clock assumed (GHz).
    pub clock_ghz: f64,
    /// Every limiter the inputs and the config allow.
    pub limiters: Vec<LimiterTime>,
    /// The largest limiter time (seconds).
    pub time_s: f64,
    /// Its name.
    pub limiter: &'static str,
    /// Waves of blocks (Su et al.'s #groups).
    pub waves: u64,
    /// Occupancy over the largest occupancy any block size reaches for this kernel.
    pub occupancy_efficiency: f64,
    /// Su et al. (18): time × (1 + 1/#groups) / occupancy efficiency.
    pub time_adjusted_s: f64,
    /// Lattice updates per second at `time_s`.
    pub lups_per_s: f64,
}

impl TimeEstimate {
    /// The estimate as JSON fields.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        for l in &self.limiters {
            m.insert(format!("{}_s", l.name), json!(l.seconds));
        }
        m.insert("time_s".into(), json!(self.time_s));
        m.insert("limiter".into(), json!(self.limiter));
        m.insert("time_adjusted_s".into(), json!(self.time_adjusted_s));
        m.insert("lups_per_s".into(), json!(self.lups_per_s));
        m.insert("waves".into(), json!(self.waves));
        m.insert(
            "occupancy_efficiency".into(),
            json!(self.occupancy_efficiency),
        );
        m.insert("clock_ghz".into(), json!(self.clock_ghz));
        Value::Object(m)
    }
}

/// The largest occupancy any block size (a multiple of the warp size) reaches with the kernel's
/// registers and shared memory: the denominator of Su et al.'s occupancy efficiency.
pub fn max_occupancy(hw: &HwConfig, kernel: &Kernel) -> f64 {
    (1..=hw.sm.max_threads_per_block / hw.sm.warp_size)
        .filter_map(|w| {
            crate::launch::occupancy(
                hw,
                w * hw.sm.warp_size,
                kernel.registers_per_thread,
                kernel.shared_bytes_per_block,
            )
            .ok()
        })
        .map(|o| o.occupancy)
        .fold(0.0, f64::max)
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
            Ok(v) if v.is_finite() && v > 0.0 => Ok(Some(v)),
            _ => Err(crate::Error::new(
                "--clock",
                format!("'{ghz}' is neither boost, base nor a positive number of GHz"),
            )),
        },
    }
}

/// Floating-point operations of the launch, if the trace gives its flops per update.
pub fn launch_flops(kernel: &Kernel, launch: &Launch) -> Option<f64> {
    kernel
        .flops_per_update
        .map(|f| f * launch.lattice_updates as f64)
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
    let (limiter, time_s) = limiters.iter().fold(("none", 0.0), |(n, t), l| {
        if l.seconds > t {
            (l.name, l.seconds)
        } else {
            (n, t)
        }
    });
    let per_wave = launch.occupancy.blocks_per_sm as u64 * hw.sm.count as u64;
    let waves = launch.total_blocks.div_ceil(per_wave.max(1));
    let best = max_occupancy(hw, kernel);
    let occupancy_efficiency = if best > 0.0 {
        launch.occupancy.occupancy / best
    } else {
        1.0
    };
    let time_adjusted_s = time_s * (1.0 + 1.0 / waves.max(1) as f64) / occupancy_efficiency;
    let lups_per_s = if time_s > 0.0 {
        launch.lattice_updates as f64 / time_s
    } else {
        0.0
    };
    TimeEstimate {
        clock_ghz: clock,
        limiters,
        time_s,
        limiter,
        waves,
        occupancy_efficiency,
        time_adjusted_s,
        lups_per_s,
    }
}

/// Time inputs from simulated counts.
pub fn inputs_from_counts(
    counts: &crate::sim::Counts,
    kernel: &Kernel,
    launch: &Launch,
) -> TimeInputs {
    let sector = 32.0;
    TimeInputs {
        dram_bytes: Some((counts.dram.read_sectors + counts.dram.write_sectors) as f64 * sector),
        l2_bytes: Some((counts.l2.read_sectors + counts.l2.write_sectors) as f64 * sector),
        l1_bytes: Some((counts.l1.load_sectors + counts.l1.store_sectors) as f64 * sector),
        l1_wavefronts: Some(counts.l1.wavefronts as f64),
        flops: launch_flops(kernel, launch),
    }
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
    fn the_largest_limiter_wins() {
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
        assert_eq!(t.limiter, "dram");
        assert!((t.time_s - 0.002).abs() < 1e-15);
        assert_eq!(t.limiters.len(), 3);
        // 256^3 / (32*4) = 131072 blocks, 16 per SMX on 13 SMX: 631 waves (Table 2 row 20).
        assert_eq!(t.waves, 631);
        assert!((t.time_adjusted_s - 0.002 * (1.0 + 1.0 / 631.0)).abs() < 1e-15);
        assert!((t.lups_per_s - 256f64.powi(3) / 0.002).abs() < 1.0);
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
        assert_eq!(t.limiter, "l1");
        assert!((t.time_s - 1.0).abs() < 1e-12);
    }
}
