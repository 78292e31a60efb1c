//! Differential tests: the production pipeline (`gputraffic::sim::simulate`) against the
//! reference simulator of `tests/reference/` (tick by tick, lane by lane, one request at a
//! time, plain caches), every counter equal. The timing-dependent corrections (the L2
//! coalescer's merges, the far-read races) and the dispatcher's GPC chain are switched off in
//! the config given to both (`without_timing_corrections`); what the reference covers and leaves
//! out is in docs/testing.md.
//!
//! `random_small_kernels_count_as_the_reference_counts` runs in CI; the shipped traces on every
//! shipped GPU are opt-in: `cargo test --release --test differential -- --ignored`.

mod reference;

use gputraffic::input::hw::{HwConfig, PartitionHash, Replacement, SetIndexing, WarpIssue};
use gputraffic::input::trace::Kernel;
use gputraffic::launch::{Launch, LaunchRequest};
use gputraffic::metrics::COUNTERS;
use gputraffic::sim::counters::values;
use gputraffic::sim::{Counts, SimOptions, simulate};
use proptest::prelude::*;

/// `hw` with the timing-dependent corrections off: no L2 coalescer, no far-read races, no GPC
/// chain (the reference has none of them).
fn without_timing_corrections(mut hw: HwConfig) -> HwConfig {
    hw.l2.coalescer_survival.clear();
    hw.l2.far_read_extra_ns = None;
    hw.schedule.gpc_window_ns = None;
    hw
}

/// The counters on which `a` and `b` differ, by name, with both values; empty when equal.
fn differences(a: &Counts, b: &Counts) -> Vec<String> {
    let mut out: Vec<String> = (COUNTERS.iter().zip(values(a)).zip(values(b)))
        .filter(|((_, x), y)| x != y)
        .map(|((c, x), y)| format!("{}.{}: {x} vs {y}", c.level, c.field))
        .collect();
    let scalars = [
        ("dirty_at_end_sectors", a.dirty_at_end_sectors, b.dirty_at_end_sectors),
        (
            "compulsory_dram_read_sectors",
            a.compulsory_dram_read_sectors.unwrap_or(u64::MAX),
            b.compulsory_dram_read_sectors.unwrap_or(u64::MAX),
        ),
        ("ticks", a.ticks, b.ticks),
        ("warp_instructions", a.warp_instructions, b.warp_instructions),
        ("thread_accesses", a.thread_accesses, b.thread_accesses),
        ("active_warps", a.active_warps, b.active_warps),
        ("warps_launched", a.warps_launched, b.warps_launched),
        ("load_rounds", a.load_rounds, b.load_rounds),
    ];
    out.extend(
        (scalars.iter())
            .filter(|(_, x, y)| x != y)
            .map(|(n, x, y)| format!("{n}: {x} vs {y}")),
    );
    out
}

/// Production against the reference on `launch` and `hw`: both fail, or every counter is
/// equal. Returns the differences (production's value first), or `None` when both failed.
fn compare(launch: &Launch, hw: &HwConfig) -> Option<Vec<String>> {
    let production = simulate(launch, hw, &SimOptions::default());
    let slow = reference::simulate(launch, hw);
    match (production, slow) {
        (Ok(p), Ok(r)) => Some(differences(&p, &r)),
        (Err(_), Err(_)) => None,
        (p, r) => Some(vec![format!(
            "one failed: production {:?}, reference {:?}",
            p.err().map(|e| e.to_string()),
            r.err().map(|e| e.to_string())
        )]),
    }
}

/// A shipped trace bound to `hw` at a small domain (`nx`, `ny`, `nz` where it has them).
fn shipped_launch(name: &str, hw: &HwConfig, domain: [i64; 3]) -> gputraffic::Result<Launch> {
    let kernel = gputraffic::input::trace::load(name)?;
    let dims = ["nx", "ny", "nz"];
    let domain = dims
        .iter()
        .all(|p| kernel.params.contains_key(*p))
        .then_some(domain);
    Launch::new(
        &kernel,
        hw,
        &LaunchRequest {
            domain,
            ..Default::default()
        },
    )
}

#[test]
fn star1_on_the_h200_counts_as_the_reference_counts() {
    let hw = without_timing_corrections(HwConfig::load("h200").unwrap());
    let launch = shipped_launch("star1", &hw, [64, 16, 8]).unwrap();
    let diff = compare(&launch, &hw).expect("both simulate");
    assert!(diff.is_empty(), "{diff:#?}");
}

