//! A lower bound of a launch's predicted time from what the lanes' addresses alone decide, with
//! no cache simulated: `rank` drops a block shape without screening it when even this bound
//! lies above the leader's upper end (docs/performance.md, "rank: screen, then confirm").
//!
//! Why it is a lower bound of the time model's prediction for the exact simulation (and for a
//! screen's, which takes the same address-decided counts): the bound runs the same time model
//! ([`timing::estimate`]) on counts that equal the simulation's where the addresses decide them
//! and lie at or below them elsewhere:
//! - exact: the L1's requests, sectors, partial store sectors, data-stage passes and shared
//!   wavefronts (every warp's every instruction coalesced, [`sm_stage::instruction_counts`]);
//!   the L2's write and atomic sectors (the L1's store and atomic sectors: all go on to the
//!   L2); the wavefronts every launched warp costs ([`data_stage::extra_wavefronts`]' launch
//!   term); the active warps and the rounds of loads (the warps' instruction streams,
//!   [`StreamTotals`]); the floating-point work and the blocks (the launch's).
//! - lower: no DRAM traffic, no L2 reads, and the L1 wavefronts without the misses' replays
//!   (`extra_wavefronts`' replay terms, never negative; the rounded sum is at most the
//!   simulation's).
//!
//! Every limiter's time grows with its count, each level's service demand in the per-SM
//! queueing model with its limiter's time, and the model's throughput (exact mean-value
//! analysis of a closed network) does not grow with any demand; the delay, the turnover and the
//! launch overhead depend only on the exact inputs. So the bound's busy time, and its predicted
//! time, are at most the simulation's.
//!
//! Between the bound and a screen, [`pre_screen`]: a sampled run of a few waves at the launch's
//! start with an L2 that never evicts, a lower *estimate* rather than a bound. Its L1 (hits,
//! misses and so the replays, the L2's reads) is simulated as in the exact run; its DRAM moves
//! only the writes any L2 must (the sectors made dirty less what the L2 can hold at the end) and
//! no reads, so where the DRAM or the L1's share of the DRAM's time sets the pace it lies below
//! the exact time, and elsewhere its sampled counts are near the exact ones.

use crate::Bound;
use crate::error::Result;
use crate::input::hw::{HwConfig, WarpIssue};
use crate::input::trace::Kernel;
use crate::launch::Launch;
use crate::launch::stream::StreamTotals;
use crate::report::Report;
use crate::sim::SimOptions;
use crate::sim::counters::{Counts, L1Counters, L2Counters};
use crate::sim::data_stage;
use crate::sim::sample::{SampleOptions, WavePlan};
use crate::sim::sm_stage::{self, GenContext};
use crate::timing;

/// The lower bound of `launch`'s predicted time at `clock_ghz` (the base clock when `None`), as
/// a report of the time model on the bound's counts (its `time.predicted_s` is the bound); `None`
/// for a program whose warps are not of the simple form (its address-decided counts would need
/// the simulation's cursors). With `footprints`, its L1 counts include each block's distinct
/// load sectors and lines (as a simulation tracking the compulsory volume counts them; the time
/// model does not read them), so that a screen of the same shape can take all of them.
pub fn lower_bound(
    kernel: &Kernel,
    hw: &HwConfig,
    launch: &Launch,
    clock_ghz: Option<f64>,
    footprints: bool,
) -> Result<Option<Report>> {
    let cx = GenContext::new(launch, true);
    let Some(mut l1) = sm_stage::instruction_counts(launch, &cx, footprints)? else {
        return Ok(None);
    };
    // The misses' replays need the L1's hits and misses, which these counts do not have: left
    // out (they only add); what every launched warp costs is the launch's.
    let warps_launched = launch.total_blocks * launch.occupancy.warps_per_block as u64;
    let launch_terms = data_stage::LaunchTerms::of(launch, &l1, warps_launched);
    l1.wavefronts = data_stage::instruction_wavefronts(&hw.l1, &l1)
        + data_stage::extra_wavefronts(&hw.l1, &launch_terms);
    // Every store and atomic sector goes on to the L2 (write-through; atomics bypass the L1),
    // but a warp's stores in a row may merge there into fewer writes: where they can, none is
    // counted.
    let merging = sm_stage::stores_may_merge(launch);
    let l2 = L2Counters {
        write_sectors: if merging { 0 } else { l1.store_sectors },
        atomic_sectors: l1.atomic_sectors,
        ..L2Counters::default()
    };
    let streams = StreamTotals::of_launch(launch, hw.schedule.warp_issue == WarpIssue::LoadRuns)?;
    let counts = Counts {
        l1,
        l2,
        active_warps: streams.active_warps,
        warps_launched,
        load_rounds: streams.load_rounds,
        warp_instructions: streams.instructions,
        ..Counts::default()
    };
    let inputs = timing::inputs_from_counts(&counts, launch);
    let time = timing::estimate(hw, kernel, launch, &inputs, clock_ghz);
    Ok(Some(Report::new(launch, hw, counts).with_time(time)))
}

/// The pre-screen of `b` at `clock_ghz` ([`SampleOptions::pre_screening`], with `opts`' other
/// options and an L2 that never evicts; `exact_l1`: the L1 counts the addresses decide, where
/// [`lower_bound`] worked them out): a report of the time model on its counts, its DRAM writes
/// raised to the sectors made dirty less what the L2 holds (every sector made dirty is written
/// back once unless still dirty at the end, and no more than the L2's sectors can be), its DRAM
/// reads only the launch's own ([`Counts::launch_read_sectors`]). `None`, with nothing
/// simulated, when the launch is too short to screen ([`SampleOptions::screening`]): `rank` then
/// simulates it exactly, as `--exact` does, and the pre-screen's error was measured only on
/// launches long enough to screen.
pub fn pre_screen(
    b: &Bound,
    opts: &SimOptions,
    clock_ghz: Option<f64>,
    exact_l1: Option<L1Counters>,
) -> Result<Option<Report>> {
    let sampling = SampleOptions::pre_screening();
    let plan = |o: &SampleOptions| WavePlan::new(&b.launch, &b.hw, o).is_some();
    if !plan(&SampleOptions::screening()) || !plan(&sampling) {
        return Ok(None);
    }
    let opts = SimOptions {
        sample: Some(sampling),
        infinite_l2: true,
        ..*opts
    };
    let mut r = b.simulate_given(&opts, clock_ghz, exact_l1, &|_, _| {})?;
    let held = b.hw.l2.size_bytes / u64::from(b.hw.l2.sector_bytes.max(1));
    let dram = &mut r.counts.dram;
    dram.write_sectors =
        (dram.write_sectors).max(r.counts.l2.sectors_made_dirty.saturating_sub(held));
    // No DRAM reads but the launch's own (its code and parameters): the first touches of the
    // first waves are not the launch's (a z-blocked stencil's first layer reads its lower halo
    // planes fresh, which later layers find in the L2), and extrapolated they came out above
    // the exact run's reads (star1 512³ on the h100, +14 %).
    dram.read_sectors = r.counts.launch_read_sectors;
    let inputs = timing::inputs_from_counts(&r.counts, &b.launch);
    r.time = Some(timing::estimate(
        &b.hw, &b.kernel, &b.launch, &inputs, clock_ghz,
    ));
    Ok(Some(r))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::LaunchRequest;
    use crate::sim::queueing::mva_throughput;

    /// The queueing model's throughput never grows with a demand: what makes the bound a bound.
    #[test]
    fn the_mean_value_throughput_does_not_grow_with_any_demand() {
        let demands = [[0.5, 2.0, 7.0], [30.0, 1.0, 0.0], [4.0, 4.0, 4.0]];
        for customers in [1.0, 2.5, 7.0, 48.0] {
            for delay in [0.0, 100.0, 2000.0] {
                for d in demands {
                    let x = mva_throughput(customers, delay, &d);
                    for k in 0..3 {
                        for more in [0.01, 1.0, 50.0] {
                            let mut e = d;
                            e[k] += more;
                            let y = mva_throughput(customers, delay, &e);
                            assert!(
                                y <= x,
                                "{customers} {delay} {d:?} +{more} at {k}: {y} > {x}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// On real launches the bound lies at or below the exact simulation's predicted time, and
    /// its L1 counts are the simulation's where the addresses decide them.
    #[test]
    fn the_bound_lies_below_the_exact_prediction() {
        for (kernel, hw, domain, block) in [
            ("star1", "h200", [64, 64, 32], [32, 4, 2]),
            ("star1", "h200", [64, 64, 32], [1, 32, 4]),
            ("star4", "v100", [64, 64, 64], [8, 8, 4]),
            ("copy", "h100-sxm", [64, 64, 64], [256, 1, 1]),
        ] {
            let k = crate::input::trace::load(kernel).unwrap();
            let hw = HwConfig::load(hw).unwrap();
            let req = LaunchRequest {
                block: Some(block),
                domain: Some(domain),
                ..LaunchRequest::default()
            };
            let launch = Launch::new(&k, &hw, &req).unwrap();
            let bound = lower_bound(&k, &hw, &launch, None, true).unwrap().unwrap();
            let exact = crate::sim::simulate(&launch, &hw, &Default::default()).unwrap();
            let inputs = timing::inputs_from_counts(&exact, &launch);
            let t = timing::estimate(&hw, &k, &launch, &inputs, None).predicted_s;
            let b = bound.time.as_ref().unwrap().predicted_s;
            assert!(b > 0.0 && b <= t, "{kernel} {block:?}: bound {b} above {t}");
            let (l1, e) = (&bound.counts.l1, &exact.l1);
            assert_eq!(
                (
                    l1.load_requests,
                    l1.load_sectors,
                    l1.store_sectors,
                    l1.data_passes
                ),
                (
                    e.load_requests,
                    e.load_sectors,
                    e.store_sectors,
                    e.data_passes
                ),
                "{kernel} {block:?}"
            );
            assert_eq!(
                (bound.counts.active_warps, bound.counts.load_rounds),
                (exact.active_warps, exact.load_rounds),
                "{kernel} {block:?}"
            );
            assert_eq!(
                bound.counts.l2.write_sectors, exact.l2.write_sectors,
                "{kernel} {block:?}"
            );
            // The launch's wavefronts are in the bound: above the passes alone, below the
            // simulation's.
            assert!(
                l1.wavefronts > l1.data_passes && l1.wavefronts <= e.wavefronts,
                "{kernel} {block:?}: {} passes, {} bound, {} exact",
                l1.data_passes,
                l1.wavefronts,
                e.wavefronts
            );
        }
    }
}
