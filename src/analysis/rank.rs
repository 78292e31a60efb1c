//! `gputraffic rank`: simulate every block shape of a set for one kernel, domain and GPU, and
//! order them by predicted duration, fastest first — the question a code generator asks.

use crate::Bound;
use crate::error::Result;
use crate::input::hw::HwConfig;
use crate::input::trace::Kernel;
use crate::launch::LaunchRequest;
use crate::metrics;
use crate::report::Report;
use crate::sim::SimOptions;
use rayon::prelude::*;
use serde::Serialize;

/// One block shape's simulation, as `rank` lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankedShape {
    /// Block shape.
    pub block: [u32; 3],
    /// Predicted kernel duration (seconds).
    pub predicted_s: f64,
    /// What sets the pace (`dram`, `l2`, `l1`, `fp` or `latency`).
    pub limiter: &'static str,
    /// Predicted time over the fastest shape's (1 for the first).
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
    fn from_report(block: [u32; 3], r: &Report) -> RankedShape {
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
            predicted_s: t.predicted_s,
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
    /// The simulated shapes, fastest first (ties in the order given).
    pub shapes: Vec<RankedShape>,
    /// Shapes from a named set (`all-N`, `ernst-1024`, …) left out, each with the reason.
    pub skipped: Vec<String>,
    /// With sampling: the shapes too short to sample, simulated exactly, each as `AxBxC: why`
    /// (in the order given).
    pub not_sampled: Vec<String>,
}

/// Simulates `kernel` on `hw` with each of `blocks` (the rest of the launch from `base`), in
/// parallel (each with `opts`: sampled where they say so, see [`crate::sim::sample`]), the time model
/// at `clock_ghz` (boost when `None`), and ranks them. `blocks` pairs
/// each shape with whether it came from a named set (as [`crate::launch::geometry::expand_blocks`] gives
/// them): such a shape that cannot launch is skipped, any other is an error, reported before
/// anything is simulated. `progress(done, total)` is called after each simulation.
pub fn rank(
    kernel: &Kernel,
    hw: &HwConfig,
    blocks: &[([u32; 3], bool)],
    base: &LaunchRequest,
    clock_ghz: Option<f64>,
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
    let done = std::sync::atomic::AtomicUsize::new(0);
    progress(0, bound.len());
    let shapes = bound
        .par_iter()
        .with_max_len(1)
        .map(|(block, b)| {
            let r = b.simulate(opts, clock_ghz)?;
            let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            progress(n, bound.len());
            let why = (r.sample_fallback.as_ref())
                .map(|w| format!("{}x{}x{}: {w}", block[0], block[1], block[2]));
            Ok((RankedShape::from_report(*block, &r), why))
        })
        .collect::<Result<Vec<_>>>()?;
    let not_sampled = shapes.iter().filter_map(|(_, w)| w.clone()).collect();
    let mut shapes: Vec<RankedShape> = shapes.into_iter().map(|(s, _)| s).collect();
    shapes.sort_by(|a, b| a.predicted_s.total_cmp(&b.predicted_s));
    let fastest = shapes.first().map_or(1.0, |s| s.predicted_s);
    for s in &mut shapes {
        s.relative = s.predicted_s / fastest;
    }
    Ok(Ranking {
        shapes,
        skipped,
        not_sampled,
    })
}

/// The ranking as aligned text, one shape per line.
pub fn to_table(shapes: &[RankedShape]) -> String {
    let mut s = format!(
        "{:>4}  {:<14} {:>12} {:>7} {:<8} {:>10} {:>10} {:>10} {:>6} {:>6}\n",
        "rank",
        "block",
        "predicted us",
        "x best",
        "limiter",
        "DRAM B/LUP",
        "L2 B/LUP",
        "L1 B/LUP",
        "blk/SM",
        "occup."
    );
    for (i, r) in shapes.iter().enumerate() {
        s += &format!(
            "{:>4}  {:<14} {:>12.3} {:>7.3} {:<8} {:>10.2} {:>10.2} {:>10.2} {:>6} {:>6.2}\n",
            i + 1,
            format!("{}x{}x{}", r.block[0], r.block[1], r.block[2]),
            r.predicted_s * 1e6,
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

/// The ranking as CSV: a header and one row per shape, fastest first.
pub fn to_csv(shapes: &[RankedShape]) -> String {
    let mut s = String::from(
        "rank,block_x,block_y,block_z,predicted_s,relative,limiter,lups_per_s,dram_bytes_per_lup,l2_bytes_per_lup,l1_bytes_per_lup,blocks_per_sm,occupancy\n",
    );
    for (i, r) in shapes.iter().enumerate() {
        s += &format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
            i + 1,
            r.block[0],
            r.block[1],
            r.block[2],
            r.predicted_s,
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
