//! `gputraffic rank`: simulate every block shape of a set for one kernel, domain and GPU, and
//! order them by predicted duration, fastest first — the question a code generator asks.
//!
//! By default a race ([`RankMode::Screen`]): every shape is screened cheaply (a sampled
//! simulation of the waves right after the L2 has turned over, [`SampleOptions::screening`]),
//! its predicted time given an interval of ± [`SCREEN_MARGIN`] (the screen's error measured on
//! the H200 dev set and the H100 data, docs/performance.md), and only the shapes whose interval
//! reaches below the leader's upper end are simulated exactly and ranked by their exact figures.
//! The others keep their screened estimates, after them. Launches too short to screen are
//! simulated exactly at once.

use crate::Bound;
use crate::error::Result;
use crate::input::hw::HwConfig;
use crate::input::trace::Kernel;
use crate::launch::LaunchRequest;
use crate::metrics;
use crate::report::Report;
use crate::sim::SimOptions;
use crate::sim::sample::SampleOptions;
use crate::timing;
use rayon::prelude::*;
use serde::Serialize;

/// The screen's error bound: a screened predicted time is taken to lie within a factor of
/// 1 + `SCREEN_MARGIN` of the exact one either way. Chosen from the largest error measured over
/// the H200 dev set and the H100 data (docs/performance.md, "rank: screen, then confirm").
pub const SCREEN_MARGIN: f64 = 0.03;

/// How `rank` simulates the shapes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RankMode {
    /// Screen every shape, then simulate exactly those that may be the fastest (the default).
    Screen,
    /// Simulate every shape exactly (`rank --exact`).
    Exact,
    /// Simulate every shape sampled with these options and rank by the estimates, confirming
    /// none (`rank --sample`).
    Sampled(SampleOptions),
}

/// How a shape's figures were obtained: `exact`, `screened` or `sampled`.
pub const EXACT: &str = "exact";
/// See [`EXACT`].
pub const SCREENED: &str = "screened";
/// See [`EXACT`].
pub const SAMPLED: &str = "sampled";

/// One block shape's simulation, as `rank` lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankedShape {
    /// Block shape.
    pub block: [u32; 3],
    /// How its figures were obtained: [`EXACT`] (confirmed), [`SCREENED`] or [`SAMPLED`].
    pub simulated: &'static str,
    /// Predicted kernel duration (seconds).
    pub predicted_s: f64,
    /// Lower end of the predicted duration's interval (`predicted_s` when exact): a screened
    /// shape's over 1 + [`SCREEN_MARGIN`], a sampled shape's at the lower ends of its traffic's
    /// 95% intervals.
    pub predicted_lo_s: f64,
    /// Upper end of the interval.
    pub predicted_hi_s: f64,
    /// What sets the pace (`dram`, `l2`, `l1`, `fp` or `latency`).
    pub limiter: &'static str,
    /// Predicted time over the first shape's (1 for the first).
    pub relative: f64,
    /// Lattice updates per second.
    pub lups_per_s: f64,
    /// DRAM bytes (read + written) per lattice update.
    pub dram_bytes_per_lup: f64,
    /// Bytes between L1 and L2 (read + written) per lattice update.
    pub l2_bytes_per_lup: f64,
    /// Bytes between registers and L1 (loaded + stored sectors) per lattice update.
    pub l1_bytes_per_lup: f64,
    /// Resident blocks per SM.
    pub blocks_per_sm: u32,
    /// Resident warps over the maximum.
    pub occupancy: f64,
}

impl RankedShape {
    fn from_report(
        block: [u32; 3],
        r: &Report,
        simulated: &'static str,
        interval: (f64, f64),
    ) -> RankedShape {
        let bytes_per_lup = r.bytes_per_lup();
        let per_lup = |names: &[&str]| {
            bytes_per_lup
                .iter()
                .filter(|(n, _)| names.contains(n))
                .map(|(_, v)| v)
                .sum::<f64>()
        };
        let t = r.time.as_ref().expect("simulate adds the time model");
        RankedShape {
            block,
            simulated,
            predicted_s: t.predicted_s,
            predicted_lo_s: interval.0,
            predicted_hi_s: interval.1,
            limiter: t.limiter,
            relative: 1.0,
            lups_per_s: t.lups_per_s,
            dram_bytes_per_lup: per_lup(&[metrics::DRAM_READ, metrics::DRAM_WRITE]),
            l2_bytes_per_lup: per_lup(&[metrics::L2_READ, metrics::L2_WRITE]),
            l1_bytes_per_lup: per_lup(&[metrics::L1_LD_SECTORS, metrics::L1_ST_SECTORS]),
            blocks_per_sm: r.launch.blocks_per_sm,
            occupancy: r.launch.occupancy,
        }
    }
}

/// A ranking: the shapes fastest first, and the shapes of named sets that cannot launch.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranking {
    /// The shapes: those simulated exactly first, by their exact predicted time, then the
    /// screened ones by their estimates (ties in the order given).
    pub shapes: Vec<RankedShape>,
    /// Shapes from a named set (`all-N`, `ernst-1024`, …) left out, each with the reason.
    pub skipped: Vec<String>,
    /// With sampling (`--sample`): the shapes too short to sample, simulated exactly, each as
    /// `AxBxC: why` (in the order given).
    pub not_sampled: Vec<String>,
    /// Shapes screened ([`RankMode::Screen`]; the others were too short to screen).
    pub screened: usize,
    /// Of those, the shapes then simulated exactly.
    pub confirmed: usize,
    /// Whether the shapes were raced ([`RankMode::Screen`]).
    pub raced: bool,
    /// Every screened shape's screened predicted time (seconds), confirmed or not, in the order
    /// given: what the screen's error is measured on (`benches/rank_agreement.sh`).
    pub screens: Vec<([u32; 3], f64)>,
}

impl Ranking {
    /// The one-line note on how the shapes were simulated: for a race that screened shapes, how
    /// many were confirmed exactly; with `--sample`, how many were too short to sample. `None`
    /// otherwise.
    pub fn note(&self) -> Option<String> {
        let n = self.shapes.len();
        if let Some(first) = self.not_sampled.first() {
            return Some(format!(
                "--sample: {} of {n} shapes simulated exactly, too short to sample (the first, {first})",
                self.not_sampled.len()
            ));
        }
        // Nothing screened (not raced, or every launch too short): every shape is exact, as
        // with --exact, and there is nothing to say.
        if !self.raced || self.screened == 0 {
            return None;
        }
        let exact = self.shapes.iter().filter(|s| s.simulated == EXACT).count();
        let short = match exact - self.confirmed {
            0 => String::new(),
            k => format!(", {k} too short to screen"),
        };
        Some(format!(
            "{exact} of {n} shapes simulated exactly ({} of {} screened shapes confirmed{short}); the other {} ranked by their screened estimates, within ±{:.0}% (--exact simulates every shape exactly)",
            self.confirmed,
            self.screened,
            n - exact,
            SCREEN_MARGIN * 100.0
        ))
    }
}

/// Simulates `kernel` on `hw` with each of `blocks` (the rest of the launch from `base`), in
/// parallel, as `mode` says (each with `opts`, whose own sampling is ignored), the time model
/// at `clock_ghz` (boost when `None`), and ranks them. `blocks` pairs
/// each shape with whether it came from a named set (as [`crate::launch::geometry::expand_blocks`] gives
/// them): such a shape that cannot launch is skipped, any other is an error, reported before
/// anything is simulated. `progress(done, total)` is called after each simulation (screens
/// and confirmations together; the total grows when the confirmations are known).
#[allow(clippy::too_many_arguments)]
pub fn rank(
    kernel: &Kernel,
    hw: &HwConfig,
    blocks: &[([u32; 3], bool)],
    base: &LaunchRequest,
    clock_ghz: Option<f64>,
    mode: RankMode,
    opts: &SimOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Ranking> {
    let mut bound = Vec::new();
    let mut skipped = Vec::new();
    for &(b, named) in blocks {
        let req = LaunchRequest {
            block: Some(b),
            ..base.clone()
        };
        match Bound::with_hw(kernel.clone(), hw.clone(), &req) {
            Ok(x) => bound.push((b, x)),
            Err(e) if named => skipped.push(format!("{}x{}x{}: {}", b[0], b[1], b[2], e.message)),
            Err(e) => return Err(e),
        }
    }
    if bound.is_empty() {
        return Err(crate::Error::new(
            "--blocks",
            format!(
                "no block shape can launch ({})",
                skipped.first().map_or("", String::as_str)
            ),
        ));
    }
    // One shape is the fastest without a race: simulate it exactly.
    let mode = match mode {
        RankMode::Screen if bound.len() == 1 => RankMode::Exact,
        m => m,
    };
    let first_pass = match mode {
        RankMode::Screen => Some(SampleOptions::screening()),
        RankMode::Exact => None,
        RankMode::Sampled(s) => Some(s),
    };
    let done = std::sync::atomic::AtomicUsize::new(0);
    let total = std::sync::atomic::AtomicUsize::new(bound.len());
    let tick = || {
        let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        progress(n, total.load(std::sync::atomic::Ordering::Relaxed));
    };
    progress(0, bound.len());
    let run = |b: &Bound, sample: Option<SampleOptions>| {
        let opts = SimOptions { sample, ..*opts };
        let r = b.simulate(&opts, clock_ghz);
        tick();
        r
    };
    let first: Vec<Report> = bound
        .par_iter()
        .with_max_len(1)
        .map(|(_, b)| run(b, first_pass))
        .collect::<Result<_>>()?;
    let mut not_sampled = Vec::new();
    let mut shapes = Vec::with_capacity(bound.len());
    let mut screened = Vec::new();
    for (i, ((block, b), r)) in bound.iter().zip(&first).enumerate() {
        let name = format!("{}x{}x{}", block[0], block[1], block[2]);
        let t = r
            .time
            .as_ref()
            .expect("simulate adds the time model")
            .predicted_s;
        match (mode, &r.sample) {
            (_, None) => {
                if let (RankMode::Sampled(_), Some(why)) = (mode, &r.sample_fallback) {
                    not_sampled.push(format!("{name}: {why}"));
                }
                shapes.push(RankedShape::from_report(*block, r, EXACT, (t, t)));
            }
            (RankMode::Screen, Some(_)) => {
                let interval = (t / (1.0 + SCREEN_MARGIN), t * (1.0 + SCREEN_MARGIN));
                screened.push(i);
                shapes.push(RankedShape::from_report(*block, r, SCREENED, interval));
            }
            (_, Some(s)) => {
                let at = |c: &crate::sim::counters::Counts| {
                    let inputs = timing::inputs_from_counts(c, &b.launch);
                    timing::estimate(&b.hw, &b.kernel, &b.launch, &inputs, clock_ghz).predicted_s
                };
                let (lo, hi) = (at(&s.lo), at(&s.hi));
                let interval = (lo.min(hi).min(t), lo.max(hi).max(t));
                shapes.push(RankedShape::from_report(*block, r, SAMPLED, interval));
            }
        }
    }
    // The race: a screened shape is dropped when the lower end of its interval lies above the
    // leader's upper end (the least upper end of any shape, exact ones at their exact time);
    // the rest are simulated exactly. Decided once, from the screens, so that the same shapes
    // are confirmed on any thread count.
    let leader = shapes
        .iter()
        .map(|s| s.predicted_hi_s)
        .fold(f64::INFINITY, f64::min);
    let contenders: Vec<usize> = screened
        .iter()
        .copied()
        .filter(|&i| shapes[i].predicted_lo_s <= leader)
        .collect();
    let screens = screened
        .iter()
        .map(|&i| (shapes[i].block, shapes[i].predicted_s))
        .collect();
    total.fetch_add(contenders.len(), std::sync::atomic::Ordering::Relaxed);
    let confirmed: Vec<RankedShape> = contenders
        .par_iter()
        .with_max_len(1)
        .map(|&i| {
            let (block, b) = &bound[i];
            let r = run(b, None)?;
            let t = r
                .time
                .as_ref()
                .expect("simulate adds the time model")
                .predicted_s;
            Ok(RankedShape::from_report(*block, &r, EXACT, (t, t)))
        })
        .collect::<Result<_>>()?;
    for (&i, s) in contenders.iter().zip(confirmed) {
        shapes[i] = s;
    }
    // Exact shapes first, by their exact times; then the screened ones by their estimates.
    shapes.sort_by(|a, b| {
        (a.simulated == SCREENED)
            .cmp(&(b.simulated == SCREENED))
            .then(a.predicted_s.total_cmp(&b.predicted_s))
    });
    let fastest = shapes.first().map_or(1.0, |s| s.predicted_s);
    for s in &mut shapes {
        s.relative = s.predicted_s / fastest;
    }
    Ok(Ranking {
        shapes,
        skipped,
        not_sampled,
        screened: screened.len(),
        confirmed: contenders.len(),
        raced: mode == RankMode::Screen,
        screens,
    })
}

/// The ranking as aligned text, one shape per line: `simulated` says how each shape's figures
/// were obtained, and `interval us` gives a screened or sampled time's interval.
pub fn to_table(shapes: &[RankedShape]) -> String {
    let mut s = format!(
        "{:>4}  {:<14} {:<9} {:>12} {:>19} {:>7} {:<8} {:>10} {:>10} {:>10} {:>6} {:>6}\n",
        "rank",
        "block",
        "simulated",
        "predicted us",
        "interval us",
        "x best",
        "limiter",
        "DRAM B/LUP",
        "L2 B/LUP",
        "L1 B/LUP",
        "blk/SM",
        "occup."
    );
    for (i, r) in shapes.iter().enumerate() {
        let interval = if r.simulated == EXACT {
            String::new()
        } else {
            format!(
                "{:.3}–{:.3}",
                r.predicted_lo_s * 1e6,
                r.predicted_hi_s * 1e6
            )
        };
        s += &format!(
            "{:>4}  {:<14} {:<9} {:>12.3} {:>19} {:>7.3} {:<8} {:>10.2} {:>10.2} {:>10.2} {:>6} {:>6.2}\n",
            i + 1,
            format!("{}x{}x{}", r.block[0], r.block[1], r.block[2]),
            r.simulated,
            r.predicted_s * 1e6,
            interval,
            r.relative,
            r.limiter,
            r.dram_bytes_per_lup,
            r.l2_bytes_per_lup,
            r.l1_bytes_per_lup,
            r.blocks_per_sm,
            r.occupancy
        );
    }
    s
}

/// The ranking as CSV: a header and one row per shape, in ranking order.
pub fn to_csv(shapes: &[RankedShape]) -> String {
    let mut s = String::from(
        "rank,block_x,block_y,block_z,simulated,predicted_s,predicted_lo_s,predicted_hi_s,relative,limiter,lups_per_s,dram_bytes_per_lup,l2_bytes_per_lup,l1_bytes_per_lup,blocks_per_sm,occupancy\n",
    );
    for (i, r) in shapes.iter().enumerate() {
        s += &format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
            i + 1,
            r.block[0],
            r.block[1],
            r.block[2],
            r.simulated,
            r.predicted_s,
            r.predicted_lo_s,
            r.predicted_hi_s,
            r.relative,
            r.limiter,
            r.lups_per_s,
            r.dram_bytes_per_lup,
            r.l2_bytes_per_lup,
            r.l1_bytes_per_lup,
            r.blocks_per_sm,
            r.occupancy
        );
    }
    s
}
