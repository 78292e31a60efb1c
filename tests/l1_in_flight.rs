//! Hits on lines whose fill is still in flight (`sim::data_stage::hit_in_flight`): a load that
//! finds every sector it wants present while the SM's last miss on the line is at most
//! `l1.in_flight_hit_ticks` ago counts one `load_in_flight_lines` per line, which the data stage
//! charges as a replay (`in_flight_hit_wavefronts`). Hand-counted on a warp re-reading one line
//! at one instruction a tick, on warps of one block sharing a line, and on blocks of other SMs;
//! the count spans the simulator's chunks of ticks. Then the trial rule `l1.cross_block_miss_ticks`
//! (no shipped config sets it): a block's first load of a line another block of its SM filled
//! within the window counts as a miss of its own.

use gputraffic::Bound;
use gputraffic::input::hw::HwConfig;
use gputraffic::input::trace::Kernel;
use gputraffic::launch::LaunchRequest;
use gputraffic::sim::SimOptions;
use gputraffic::sim::counters::Counts;

/// `blocks` blocks of `threads` threads; thread t reads float `t % 32` (one 128-byte line)
/// `reads` times in a row.
const REREAD: &str = r#"
name = "reread"
description = "every thread reads float threadIdx.x % 32 of one line, reads times"

[params]
reads = 1
blocks = 1

[[arrays]]
name = "a"
element_bytes = 4
dims = ["32"]

[launch]
block = [32, 1, 1]
grid = ["blocks", "1", "1"]
registers_per_thread = 16

[thread]
lattice_updates = "32 * blocks"
flops_per_update = 0
body = [
  { loop = "i", count = "reads", body = [
    { load = "a", index = "threadIdx.x % 32" },
  ] },
]
"#;

fn run(reads: i64, blocks: i64, threads: u32, window: u32, chunk_ticks: u32) -> Counts {
    let mut hw = HwConfig::load("h200").unwrap();
    hw.l1.in_flight_hit_ticks = window;
    let opts = SimOptions {
        chunk_ticks,
        ..SimOptions::default()
    };
    simulate_reread(reads, blocks, threads, hw, &opts)
}

/// The `reread` kernel with `reads` and `blocks`, in blocks of `threads`, on `hw`.
fn simulate_reread(
    reads: i64,
    blocks: i64,
    threads: u32,
    hw: HwConfig,
    opts: &SimOptions,
) -> Counts {
    let k = Kernel::parse(REREAD, "reread.toml").unwrap();
    let set = [("reads", reads), ("blocks", blocks)];
    let req = LaunchRequest {
        block: Some([threads, 1, 1]),
        domain: None,
        set: set.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
    };
    let b = Bound::with_hw(k, hw, &req).unwrap();
    gputraffic::sim::simulate(&b.launch, &b.hw, opts).unwrap()
}

#[test]
fn a_warp_rereading_its_line_waits_for_the_fill_for_the_window_after_the_miss() {
    // One warp issues a load a tick: the first misses, the next 63 (ticks 1..=63 after it) find
    // the line in flight, the 36 after that hit plainly.
    let c = run(100, 1, 32, 63, 4096);
    assert_eq!(c.l1.load_requests, 100);
    assert_eq!(c.l1.load_miss_request_lines, 1);
    assert_eq!(c.l1.load_in_flight_lines, 63);
    // Fewer reads than the window: every one after the miss.
    assert_eq!(run(10, 1, 32, 63, 4096).l1.load_in_flight_lines, 9);
    // The window is the config's.
    assert_eq!(run(100, 1, 32, 8, 4096).l1.load_in_flight_lines, 8);
    assert_eq!(run(100, 1, 32, 1, 4096).l1.load_in_flight_lines, 1);
}

#[test]
fn the_window_spans_the_chunks_of_ticks() {
    // Chunks of 16 and of 5 ticks cut the window in several places: the same 63.
    for chunk in [16, 5, 1] {
        assert_eq!(
            run(100, 1, 32, 63, chunk).l1.load_in_flight_lines,
            63,
            "{chunk}"
        );
    }
}

#[test]
fn a_warp_reading_the_line_its_neighbour_just_missed_on_is_in_flight() {
    // Two warps of one block read the same line once each: the first misses it, the second
    // finds it in flight.
    let c = run(1, 1, 64, 63, 4096);
    assert_eq!(c.l1.load_requests, 2);
    assert_eq!(c.l1.load_miss_request_lines, 1);
    assert_eq!(c.l1.load_in_flight_lines, 1);
}

#[test]
fn blocks_on_other_sms_miss_on_their_own() {
    // Four one-warp blocks go to four SMs, each with its own L1: four misses, nothing in flight.
    let c = run(1, 4, 32, 63, 4096);
    assert_eq!(c.l1.load_miss_request_lines, 4);
    assert_eq!(c.l1.load_in_flight_lines, 0);
}

/// [`run`] with the trial rule `l1.cross_block_miss_ticks` set to `cross` ticks.
fn run_cross(reads: i64, blocks: i64, threads: u32, cross: Option<u32>) -> Counts {
    let mut hw = HwConfig::load("h200").unwrap();
    hw.l1.cross_block_miss_ticks = cross;
    simulate_reread(reads, blocks, threads, hw, &SimOptions::default())
}

#[test]
fn a_blocks_first_load_of_a_line_another_block_just_filled_is_a_miss_under_the_trial_rule() {
    // 264 one-warp blocks, two a SM (the first wave deals one to each of the 132 SMs, then a
    // second), every block reading the same line. Without the rule the SM's second block hits
    // what its first missed: one missing line an SM.
    let off = run_cross(1, 264, 32, None);
    assert_eq!(off.l1.load_miss_request_lines, 132);
    // With it the second block meets the fill within the window: its own miss, 4 sectors more an
    // SM, which go to the L2 as requests of their own (the L2 request coalescer, which merges
    // most of the SMs' reads of the one line, leaves them alone).
    let on = run_cross(1, 264, 32, Some(4096));
    assert_eq!(on.l1.load_miss_request_lines, 264);
    assert_eq!(on.l1.load_miss_sectors, 264 * 4);
    assert_eq!(on.l2.read_sectors, off.l2.read_sectors + 132 * 4);
    // Each block misses once: their re-reads of the line hit, whoever read it last.
    let rereads = run_cross(10, 264, 32, Some(4096));
    assert_eq!(rereads.l1.load_miss_request_lines, 264);
    // Four blocks an SM: each one's first load.
    let four = run_cross(10, 528, 32, Some(4096));
    assert_eq!(four.l1.load_miss_request_lines, 528);
}

#[test]
fn warps_of_one_block_share_a_fill_under_the_trial_rule() {
    // One two-warp block an SM: the second warp finds the line in flight and hits, rule or not.
    let on = run_cross(1, 132, 64, Some(4096));
    assert_eq!(on.l1.load_miss_request_lines, 132);
    assert_eq!(on.l1.load_in_flight_lines, 132);
    assert_eq!(on, run_cross(1, 132, 64, None));
}

#[test]
fn a_block_that_meets_the_fill_after_the_window_hits() {
    // Ten one-warp blocks an SM, each loading the line once: the SM's blocks after the first
    // load it every second tick after the fill (each block ends with its load, and the SM sits
    // out a turn for it: the config's turnover), so a window of w ticks makes the first loads of
    // w / 2 of them misses; the others hit.
    for (window, followers) in [(1, 0), (2, 1), (3, 1), (4, 2), (8, 4), (16, 8), (64, 9)] {
        let c = run_cross(1, 1320, 32, Some(window));
        assert_eq!(
            c.l1.load_miss_request_lines,
            132 * (1 + followers),
            "{window}"
        );
    }
    // The shipped configs leave the rule out.
    let hw = HwConfig::load("h200").unwrap();
    assert_eq!(hw.l1.cross_block_miss_ticks, None);
}
