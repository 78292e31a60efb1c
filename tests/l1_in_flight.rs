//! Hits on lines whose fill is still in flight (`sim::data_stage::hit_in_flight`): a load that
//! finds every sector it wants present while the SM's last miss on the line is at most
//! `l1.in_flight_hit_ticks` ago counts one `load_in_flight_lines` per line, which the data stage
//! charges as a replay (`in_flight_hit_wavefronts`). Hand-counted on a warp re-reading one line
//! at one instruction a tick, on warps of one block sharing a line, on blocks of one SM sharing
//! a line (as measured on the H200, `validation/inflight_share.cu`) and on blocks of other SMs;
//! the count spans the simulator's chunks of ticks.

use gputraffic::Bound;
use gputraffic::analysis::measured;
use gputraffic::input::hw::HwConfig;
use gputraffic::input::trace::Kernel;
use gputraffic::launch::LaunchRequest;
use gputraffic::metrics;
use gputraffic::sim::SimOptions;
use gputraffic::sim::counters::Counts;
use std::path::Path;

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
    let k = Kernel::parse(REREAD, "reread.toml").unwrap();
    let mut hw = HwConfig::load("h200").unwrap();
    hw.l1.in_flight_hit_ticks = window;
    let set = [("reads", reads), ("blocks", blocks)];
    let req = LaunchRequest {
        block: Some([threads, 1, 1]),
        domain: None,
        set: set.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
    };
    let b = Bound::with_hw(k, hw, &req).unwrap();
    let opts = SimOptions {
        chunk_ticks,
        ..SimOptions::default()
    };
    gputraffic::sim::simulate(&b.launch, &b.hw, &opts).unwrap()
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

#[test]
fn two_blocks_of_one_sm_reading_a_line_together_miss_it_once_as_on_the_h200() {
    // tests/data/h200/inflight_share/: two one-warp blocks an SM streaming the SM's lines
    // together (or 2 and 20 µs apart) miss each line once between them, as one two-warp block
    // does; the L2 sees one read. Here 264 one-warp blocks, two an SM, read one line: one
    // missing line an SM, and the second block's load is an in-flight hit.
    let c = run(1, 264, 32, 63, 4096);
    assert_eq!(c.l1.load_requests, 264);
    assert_eq!(c.l1.load_miss_request_lines, 132);
    assert_eq!(c.l1.load_miss_sectors, 132 * 4);
    assert_eq!(c.l1.load_in_flight_lines, 132);
}

#[test]
fn the_measured_blocks_miss_each_line_once() {
    // The measurement the test above stands on: every launch's L1 lookup misses are the
    // regions' sectors (132 SMs x 4096 lines x 4 sectors), whatever the sharers.
    let launches = measured::ncu_counters(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/h200/inflight_share/ncu.csv"
    )))
    .unwrap();
    let misses: Vec<f64> = launches.iter().map(|c| c[metrics::L1_LD_MISS]).collect();
    assert_eq!(misses.len(), 10);
    assert!(
        misses.iter().all(|&m| m == (132 * 4096 * 4) as f64),
        "{misses:?}"
    );
}
