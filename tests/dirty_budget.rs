//! The L2's dirty budget (docs/model.md "L2"): a set keeps at most `[l2] dirty_ways` of its
//! lines dirty, so a launch that only writes leaves 7/16 of the L2 unwritten at its end, and a
//! region written again and again stays in the L2 below that and thrashes above it. Checked
//! against validation/dirty_budget.cu as the H100 ran it (tests/data/h100/dirty_budget/, ncu at
//! base clocks, 2026-12-07), lifted from its PTX (tests/data/ptx/dirty_budget.ptx, nvcc 13.5
//! sm_90), whose `fill_half` addresses its sectors' first halves through nvcc's signed i / 4 * 8
//! + i % 4 (`and` with -4 and -8).

use gputraffic::Bound;
use gputraffic::analysis::measured;
use gputraffic::input::ptx::{LiftOptions, lift_file};
use gputraffic::launch::LaunchRequest;
use gputraffic::report::Report;
use gputraffic::sim::{Counts, SimOptions};
use std::collections::BTreeMap;
use std::path::Path;

const MIB: u64 = 1 << 20;
const SECTOR: u64 = 32;

/// The counters of tests/data/h100/dirty_budget/ncu.csv, by ID (line of its run.log).
fn measured() -> Vec<BTreeMap<String, f64>> {
    measured::ncu_counters(Path::new("tests/data/h100/dirty_budget/ncu.csv")).unwrap()
}

/// `kernel` (fill: one float a thread; fill_half: the first half of a sector every 4 threads)
/// writing its first `mib` MiB `passes` times over in 256-thread blocks, on the h100-sxm.
fn simulate(kernel: &str, mib: u64, passes: u64) -> Counts {
    run(kernel, mib, passes).counts
}

/// [`simulate`]'s whole result, its time estimate with it.
fn run(kernel: &str, mib: u64, passes: u64) -> Report {
    let floats_per_thread = if kernel == "fill" { 1 } else { 2 };
    let threads = mib * MIB / 4 / floats_per_thread;
    let options = LiftOptions {
        entry: Some(kernel.into()),
        registers: Some(8),
        grid: Some([(threads / 256).to_string(), passes.to_string(), "1".into()]),
        updates: Some((threads * passes).to_string()),
        extents: vec![("p0".into(), (256 * MIB / 4).to_string())],
        ..Default::default()
    };
    let lifted = lift_file("tests/data/ptx/dirty_budget.ptx", &options).unwrap();
    let req = LaunchRequest {
        block: Some([256, 1, 1]),
        ..Default::default()
    };
    let b = Bound::new(lifted.kernel, "h100-sxm", &req).unwrap();
    b.simulate(&SimOptions::default(), None).unwrap()
}

#[test]
fn nvccs_signed_division_by_a_power_of_two_lifts_to_the_sectors_the_h100_writes() {
    // fill_half 16 MiB: 2^21 threads, 4 to a sector's first 16 bytes; ID 19
    let m = &measured()[19];
    let c = simulate("fill_half", 16, 1);
    let sectors = 16 * MIB / SECTOR;
    assert_eq!(m["lts__t_sectors_srcunit_tex_op_write.sum"], sectors as f64);
    assert_eq!(c.l2.write_sectors, sectors);
    assert_eq!(c.l1.store_partial_sectors, sectors);
}

#[test]
fn a_region_the_budget_holds_goes_to_dram_not_at_all_however_often_it_is_written() {
    // IDs 1 (8 MiB once), 3 (16 MiB once), 12 (8 MiB four times): the L2's 50 MiB keep 21.9
    // MiB dirty; the H100 writes at most 864 sectors (0.16 %) of 16 MiB back
    let m = measured();
    for (id, mib, passes) in [(1, 8, 1), (3, 16, 1), (12, 8, 4)] {
        let written = (mib * MIB / SECTOR) as f64;
        assert!(m[id]["dram__sectors_write.sum"] < 0.002 * written, "{id}");
        assert_eq!(simulate("fill", mib, passes).dram.write_sectors, 0, "{id}");
    }
}

#[test]
fn a_write_only_launch_past_the_budget_leaves_seven_sixteenths_of_the_l2_unwritten() {
    // IDs 7 (32 MiB), 9 (48 MiB), 11 (128 MiB): what the H100 leaves unwritten is 0.43 of its
    // 50 MiB whatever the region, and so is what the simulation leaves
    let m = measured();
    let l2_sectors = 50.0 * MIB as f64 / SECTOR as f64;
    for (id, mib) in [(7, 32), (9, 48), (11, 128)] {
        let written = (mib * MIB / SECTOR) as f64;
        let left = (written - m[id]["dram__sectors_write.sum"]) / l2_sectors;
        assert!(
            (left - 7.0 / 16.0).abs() < 0.015,
            "{id}: {left:.3} of the L2"
        );
        let simulated = simulate("fill", mib, 1).dram.write_sectors as f64;
        let err = simulated / m[id]["dram__sectors_write.sum"] - 1.0;
        assert!(err.abs() < 0.025, "{id}: DRAM writes {err:+.3}");
    }
}

#[test]
fn a_region_past_the_budget_written_again_writes_all_of_it_back_at_every_pass() {
    // ID 17 (32 MiB four times): the first pass leaves 21.9 MiB dirty, each later one writes
    // the whole region back (the oldest dirty line is the next one written again), as LRU
    // order among the dirty lines has it: 10.1 + 3 x 32 MiB
    let m = &measured()[17];
    let measured = m["dram__sectors_write.sum"];
    let expected = ((32.0 - 21.9) + 3.0 * 32.0) * MIB as f64 / SECTOR as f64;
    assert!((measured / expected - 1.0).abs() < 0.01, "{measured}");
    let err = simulate("fill", 32, 4).dram.write_sectors as f64 / measured - 1.0;
    assert!(err.abs() < 0.01, "DRAM writes {err:+.3}");
}

#[test]
fn a_write_only_launch_goes_at_the_dispatchers_pace() {
    // IDs 10 (64 MiB: 65 536 blocks) and 11 (128 MiB): 41.8 and 81.1 us, 2.5 us + 0.60 ns a
    // block; their warps only store, so a slot waits for nothing when its block ends (with the
    // slots' turnover charged, +19 %)
    let m = measured();
    for (id, mib) in [(10, 64), (11, 128)] {
        let t = run("fill", mib, 1).time.unwrap();
        assert_eq!(t.block_turnover_s, 0.0);
        let err = t.predicted_s / (m[id]["gpu__time_duration.sum"] * 1e-9) - 1.0;
        assert!(err.abs() < 0.05, "{id}: time {err:+.3}");
    }
}
