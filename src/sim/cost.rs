//! What a simulation will cost, worked out before it runs: its thread accesses (lane accesses,
//! the simulator's unit of work), the time they take at a throughput measured on the
//! development machine, and what `--sample` would simulate instead. An estimate for the command
//! line to warn about long runs, never asserted: the throughput varies several-fold with the
//! kernel (docs/performance.md).

use crate::error::Result;
use crate::input::hw::HwConfig;
use crate::launch::Launch;
use crate::sim::sample::{SampleOptions, WavePlan};

/// Thread accesses simulated per second per worker thread, exactly: the one constant of the
/// estimate. The development machine (2 cores, docs/performance.md) simulates star4 640×512×512
/// (32×8×4, h200) at 405–420 M/s on two threads when idle, 240 M/s on a busy day, and star1 256³
/// at 73 M/s: about 100 M/s per thread, within a factor of three for the shipped stencils.
pub const THREAD_ACCESSES_PER_SECOND_PER_THREAD: f64 = 100e6;

/// Blocks whose thread accesses are counted to estimate a launch's: spread evenly over it.
const PROBED_BLOCKS: u64 = 64;

/// A simulation's expected cost (the default: nothing to run).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Cost {
    /// Thread accesses (estimated from `PROBED_BLOCKS` blocks where the launch has more).
    pub thread_accesses: u64,
    /// Expected seconds of an exact simulation on the given threads.
    pub seconds: f64,
    /// With sampling: the waves simulated in detail of all, and the expected seconds; `None`
    /// when the launch is too short to sample (it would run exactly).
    pub sampled: Option<(u64, u64, f64)>,
}

/// The expected cost of simulating `launch` on `hw` with `threads` worker threads, and of
/// sampling it with `sampling`.
///
/// Thread accesses: for the simple form, the mean of `PROBED_BLOCKS` blocks spread evenly over
/// the launch (all of them where there are fewer) times the blocks; for other programs, one
/// access per lattice update and access of the program text (loops counted once). A sampled run
/// costs the waves it simulates in detail, at the same rate.
pub fn estimate(
    launch: &Launch,
    hw: &HwConfig,
    threads: usize,
    sampling: &SampleOptions,
) -> Result<Cost> {
    let blocks = launch.total_blocks;
    let thread_accesses = if launch.program.simple && blocks > 0 {
        let probes = blocks.min(PROBED_BLOCKS);
        // The i-th probe lies i blocks into the i-th stretch of the launch (modulo a stretch),
        // so that probes do not all fall on one column of the grid where a stretch is a multiple
        // of its width.
        let stretch = (blocks / probes).max(1);
        let mut sum = 0u64;
        for i in 0..probes {
            let b = i * blocks / probes + i % stretch;
            sum += crate::sim::schedule::block_thread_accesses(launch, b)?;
        }
        (sum as f64 / probes as f64 * blocks as f64).round() as u64
    } else {
        launch.lattice_updates * launch.program.accesses.len() as u64
    };
    let seconds =
        thread_accesses as f64 / (THREAD_ACCESSES_PER_SECOND_PER_THREAD * threads.max(1) as f64);
    let sampled = WavePlan::new(launch, hw, sampling).map(|plan| {
        let (detailed, waves) = (plan.detailed() as u64, plan.modes.len() as u64);
        (
            detailed,
            waves,
            seconds * detailed as f64 / waves.max(1) as f64,
        )
    });
    Ok(Cost {
        thread_accesses,
        seconds,
        sampled,
    })
}

impl Cost {
    /// The cost of `n` runs like this one (rank's shapes of one launch).
    pub fn times(mut self, n: usize) -> Cost {
        let n = n.max(1);
        self.thread_accesses *= n as u64;
        self.seconds *= n as f64;
        if let Some((detailed, waves, s)) = &mut self.sampled {
            *detailed *= n as u64;
            *waves *= n as u64;
            *s *= n as f64;
        }
        self
    }

    /// The cost of this run and then `other` (validate's launches). Sampled, a launch too short
    /// to sample runs exactly: its seconds count in full, its waves in neither count.
    pub fn plus(self, other: Cost) -> Cost {
        let sampled = match (self.sampled, other.sampled) {
            (None, None) => None,
            (a, b) => {
                let part = |p: Option<(u64, u64, f64)>, exact: f64| p.unwrap_or((0, 0, exact));
                let (a, b) = (part(a, self.seconds), part(b, other.seconds));
                Some((a.0 + b.0, a.1 + b.1, a.2 + b.2))
            }
        };
        Cost {
            thread_accesses: self.thread_accesses + other.thread_accesses,
            seconds: self.seconds + other.seconds,
            sampled,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::LaunchRequest;

    fn launch(kernel: &str, domain: [i64; 3]) -> (Launch, HwConfig) {
        let k = crate::input::trace::load(kernel).unwrap();
        let hw = HwConfig::load("h200").unwrap();
        let req = LaunchRequest {
            block: Some([32, 8, 4]),
            domain: None,
            set: [("nx", domain[0]), ("ny", domain[1]), ("nz", domain[2])]
                .map(|(n, v)| (n.to_string(), v))
                .into(),
        };
        (Launch::new(&k, &hw, &req).unwrap(), hw)
    }

    #[test]
    fn a_launch_of_alike_blocks_costs_its_thread_accesses_at_the_constant_rate() {
        // star1: 7 loads and a store per lattice update, every block full.
        let (l, hw) = launch("star1", [512, 512, 256]);
        let c = estimate(&l, &hw, 2, &SampleOptions::default()).unwrap();
        assert_eq!(c.thread_accesses, 8 * 512 * 512 * 256);
        let expected = c.thread_accesses as f64 / (2.0 * THREAD_ACCESSES_PER_SECOND_PER_THREAD);
        assert_eq!(c.seconds, expected);
        let (detailed, waves, s) = c.sampled.expect("long enough to sample");
        assert!(detailed < waves);
        assert_eq!(s, expected * detailed as f64 / waves as f64);
    }

    #[test]
    fn a_short_launch_would_not_be_sampled() {
        let (l, hw) = launch("star1", [64, 64, 64]);
        let c = estimate(&l, &hw, 1, &SampleOptions::default()).unwrap();
        assert_eq!(c.thread_accesses, 8 * 64 * 64 * 64);
        assert_eq!(c.sampled, None);
    }

    #[test]
    fn ragged_blocks_are_estimated_from_the_probed_ones() {
        // star1 100x64x64 in 32x8x4 blocks: 4 blocks in x, the last with 4 of its 32 columns
        // inside the guard. The 64 probes, blocks 8i + i mod 8, are at x = i mod 4: each
        // column of blocks 16 times, so the estimate is exact (blocks 8i alone would all be at
        // x = 0, full, and give 128/100 of it).
        let (l, hw) = launch("star1", [100, 64, 64]);
        assert_eq!(l.total_blocks, 4 * 8 * 16);
        let c = estimate(&l, &hw, 1, &SampleOptions::default()).unwrap();
        assert_eq!(c.thread_accesses, 8 * 100 * 64 * 64);
    }

    #[test]
    fn costs_add_up_and_a_launch_too_short_to_sample_counts_in_full() {
        let sampleable = Cost {
            thread_accesses: 1000,
            seconds: 10.0,
            sampled: Some((2, 20, 1.0)),
        };
        let short = Cost {
            thread_accesses: 30,
            seconds: 0.5,
            sampled: None,
        };
        let both = sampleable.clone().plus(short.clone());
        assert_eq!(both.thread_accesses, 1030);
        assert_eq!(both.seconds, 10.5);
        // The short launch runs exactly when sampled: its 0.5 s count, its waves do not.
        assert_eq!(both.sampled, Some((2, 20, 1.5)));
        assert_eq!(short.clone().plus(short.clone()).sampled, None);
        assert_eq!(Cost::default().plus(short.clone()), short);
        let three = sampleable.times(3);
        assert_eq!(three.thread_accesses, 3000);
        assert_eq!(three.seconds, 30.0);
        assert_eq!(three.sampled, Some((6, 60, 3.0)));
    }
}
