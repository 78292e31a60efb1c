//! Loads that miss cost the L1 data pipe more passes than the bank rule only as far as the launch
//! writes, by stores, atomics or shared stores (`[l1] replay_store_share`, docs/model.md "The
//! read-only streams pay nothing for their misses"). Checked against validation/streams.cu as
//! the H200 ran it (tests/data/h200/streams/, ncu at base clocks), lifted from its PTX (tests/data/ptx/streams.ptx, nvcc 13.5 sm_90):
//! `read_k32` reads 32 streams of doubles, every line missing, and writes one double a warp;
//! `copy_k32` writes each element it reads. And against validation/replay_stores.cu as an H100
//! ran it (tests/data/h100/replay_stores/, 2026-12-07; PTX tests/data/ptx/replay_stores.ptx),
//! which the fit never saw: `rK_lane0shfl` are read_kK over 2^25 / K elements.

use gputraffic::Bound;
use gputraffic::analysis::measured;
use gputraffic::input::hw::HwConfig;
use gputraffic::input::ptx::{LiftOptions, lift_file};
use gputraffic::launch::LaunchRequest;
use gputraffic::sim::{Counts, SimOptions};
use std::path::Path;

const WAVEFRONTS: &str = "l1tex__data_pipe_lsu_wavefronts.sum";
/// The streams' length (`n`, the PTX's p2) of both measured launches.
const N: i64 = 4_194_304;

/// The measured data-pipe wavefronts of tests/data/h200/streams/ncu.csv's launch `id`.
fn measured_wavefronts(id: usize) -> f64 {
    measured::ncu_counters(Path::new("tests/data/h200/streams/ncu.csv")).unwrap()[id][WAVEFRONTS]
}

/// `entry` of the PTX file `ptx` over streams of `n` doubles (its p2, one update a thread) in
/// 256-thread blocks on `hw`, its output p1 given the extent `p1_extent`.
fn simulate_ptx(ptx: &str, entry: &str, n: i64, p1_extent: &str, hw: HwConfig) -> Counts {
    let options = LiftOptions {
        entry: Some(entry.into()),
        extents: vec![("p1".into(), p1_extent.into())],
        updates: Some(n.to_string()),
        ..Default::default()
    };
    let lifted = lift_file(ptx, &options).unwrap();
    simulate_bound(lifted.kernel, hw, &streams_of(n))
}

/// 256-thread blocks over streams of `n` elements (the PTX's p2).
fn streams_of(n: i64) -> LaunchRequest {
    LaunchRequest {
        block: Some([256, 1, 1]),
        set: vec![("p2".into(), n)],
        ..Default::default()
    }
}

/// The exact counts of `kernel` on `hw`, launched as `req` says.
fn simulate_bound(
    kernel: gputraffic::input::trace::Kernel,
    hw: HwConfig,
    req: &LaunchRequest,
) -> Counts {
    let b = Bound::with_hw(kernel, hw, req).unwrap();
    b.simulate(&SimOptions::default(), None).unwrap().counts
}

/// `kernel` of streams.cu over 32 streams of `N` doubles on `hw` (the h200 as shipped, or with
/// its replays charged whatever the stores); `read_k32`'s sums get more room than the `N / 32`
/// doubles they fill.
fn simulate(kernel: &str, hw: HwConfig) -> Counts {
    let p1 = if kernel == "read_k32" {
        "p2"
    } else {
        "p2 * 32"
    };
    simulate_ptx("tests/data/ptx/streams.ptx", kernel, N, p1, hw)
}

fn h200() -> HwConfig {
    HwConfig::load("h200").unwrap()
}

#[test]
fn a_read_only_stream_takes_the_bank_rules_passes_for_its_misses() {
    // ID 19: read_k32, 256-thread blocks; the H200 takes 2.00 passes a load (two lines of a
    // warp's 32 doubles) and 12.7 a warp (its ten shuffles, the threadIdx read, the sum's store)
    let measured = measured_wavefronts(19);
    let c = simulate("read_k32", h200());
    assert_eq!(c.l1.load_miss_sectors, c.l1.load_sectors);
    let err = c.l1.wavefronts as f64 / measured - 1.0;
    assert!(err.abs() < 0.02, "read_k32: {err:+.3}");
    // charged a replay per missing line whatever the stores, as before: +23 %
    let mut always = h200();
    always.l1.replay_store_share = None;
    let over = simulate("read_k32", always).l1.wavefronts as f64 / measured - 1.0;
    assert!(over > 0.2, "read_k32 with every miss replayed: {over:+.3}");
}

#[test]
fn a_copy_whose_stores_match_its_misses_replays_them_in_full() {
    // ID 40: copy_k32, 256-thread blocks: a sector stored per sector missed, so the replays stay
    let measured = measured_wavefronts(40);
    let c = simulate("copy_k32", h200());
    assert_eq!(c.l1.store_sectors, c.l1.load_miss_sectors);
    let err = c.l1.wavefronts as f64 / measured - 1.0;
    assert!(err.abs() < 0.02, "copy_k32: {err:+.3}");
    let mut always = h200();
    always.l1.replay_store_share = None;
    assert_eq!(simulate("copy_k32", always).l1.wavefronts, c.l1.wavefronts);
}

/// `rK_lane0shfl` of validation/replay_stores.cu (read_kK: K streams of 2^25 / K doubles, a
/// warp's sum stored by its lane 0) in 256-thread blocks on `hw`.
fn simulate_read_sum(k: i64, hw: HwConfig) -> Counts {
    let entry = format!("r{k}_lane0shfl");
    simulate_ptx(
        "tests/data/ptx/replay_stores.ptx",
        &entry,
        (1 << 25) / k,
        "p2 / 32",
        hw,
    )
}

#[test]
fn the_h100s_read_only_sums_take_no_replays_for_their_misses_either() {
    // IDs 1, 6, 11, 16, 21, 26: K = 1 to 32 streams; stores 1/(32 K) of the missing sectors
    let measured =
        measured::ncu_counters(Path::new("tests/data/h100/replay_stores/ncu.csv")).unwrap();
    let h100 = || HwConfig::load("h100-sxm").unwrap();
    for (id, k) in [(1, 1), (6, 2), (11, 4), (16, 8), (21, 16), (26, 32)] {
        let m = measured[id][WAVEFRONTS];
        let err = simulate_read_sum(k, h100()).l1.wavefronts as f64 / m - 1.0;
        assert!(err.abs() < 0.045, "K = {k}: {err:+.3}");
        if k == 32 {
            let mut always = h100();
            always.l1.replay_store_share = None;
            let over = simulate_read_sum(k, always).l1.wavefronts as f64 / m - 1.0;
            assert!(over > 0.15, "K = 32 with every miss replayed: {over:+.3}");
        }
    }
}

/// What the threads of [`sum_of_streams`] do with their sums.
#[derive(Clone, Copy)]
enum SumsGo {
    /// Kept in registers: the launch writes nothing.
    Nowhere,
    /// Every thread stores its sum to a shared tile, as a tiled matrix product or a tree
    /// reduction stores what it loads.
    ToSharedByEveryLane,
    /// Lane 0 of each warp stores its own sum to the tile, as a reduction stores a warp's total.
    ToSharedByLaneZero,
}

/// A trace whose threads sum element i of eight streams of 2^20 doubles (every line missing) in
/// 256-thread blocks and put the sum where `sums` says; nothing is written to global memory.
fn sum_of_streams(sums: SumsGo) -> gputraffic::input::trace::Kernel {
    let store = r#"{ store = "tile", index = ["threadIdx.x"] }"#;
    let after = match sums {
        SumsGo::Nowhere => String::new(),
        SumsGo::ToSharedByEveryLane => format!(", {store}"),
        SumsGo::ToSharedByLaneZero => {
            format!(r#", {{ if = "threadIdx.x % 32 == 0", body = [{store}] }}"#)
        }
    };
    let text = format!(
        r#"
name = "sum-of-streams"
params = {{ n = 1048576 }}
[[arrays]]
name = "a"
element_bytes = 8
dims = ["n", "8"]
[[shared]]
name = "tile"
element_bytes = 8
dims = ["blockDim.x"]
[launch]
block = [256, 1, 1]
grid = ["n / blockDim.x", "1", "1"]
[thread]
let = ["i = blockIdx.x * blockDim.x + threadIdx.x"]
lattice_updates = "n"
body = [
  {{ loop = "k", count = "8", body = [{{ load = "a", index = ["i", "k"] }}] }}{after},
]
"#
    );
    gputraffic::input::trace::Kernel::parse(&text, "sum-of-streams.toml").unwrap()
}

/// The exact counts of `kernel` on `hw` with the trace's own block and domain.
fn simulate_trace(kernel: gputraffic::input::trace::Kernel, hw: HwConfig) -> Counts {
    simulate_bound(kernel, hw, &LaunchRequest::default())
}

#[test]
fn loads_stored_to_shared_memory_replay_their_misses_as_a_copys_do() {
    let mut always = h200();
    always.l1.replay_store_share = None;
    // Every lane stores its double to a shared tile: a sector written per missing sector of
    // one of the eight streams, an eighth, so the missing lines replay in full, as with no
    // share in the config.
    let shared = simulate_trace(sum_of_streams(SumsGo::ToSharedByEveryLane), h200());
    assert_eq!(shared.l1.shared_store_bytes, 1 << 23);
    assert_eq!(shared.l1.store_sectors + shared.l1.atomic_sectors, 0);
    let in_full = simulate_trace(sum_of_streams(SumsGo::ToSharedByEveryLane), always.clone());
    assert_eq!(shared.l1.wavefronts, in_full.l1.wavefronts);
    // The same loads kept in registers replay nothing: the difference is the replay term of
    // every missing line, less the shared stores' own wavefronts.
    let read_only = simulate_trace(sum_of_streams(SumsGo::Nowhere), h200());
    assert_eq!(
        read_only.l1.load_miss_request_lines,
        shared.l1.load_miss_request_lines
    );
    let replays =
        shared.l1.wavefronts - shared.l1.shared_store_wavefronts - read_only.l1.wavefronts;
    let expected =
        h200().l1.missing_request_line_wavefronts * read_only.l1.load_miss_request_lines as f64;
    assert!(
        (replays as f64 / expected - 1.0).abs() < 0.01,
        "{replays} replays against {expected:.0}"
    );
    // Lane 0 alone storing a warp's sum writes 8 bytes a warp, 1/256 of a sector per missing
    // one: a twelfth of replay_store_share (0.05 × 256 = 12.8), so a twelfth of the replays.
    let lane_zero = simulate_trace(sum_of_streams(SumsGo::ToSharedByLaneZero), h200());
    assert_eq!(lane_zero.l1.shared_store_bytes, (1 << 23) / 32);
    let replays = lane_zero.l1.wavefronts
        - lane_zero.l1.shared_store_wavefronts
        - lane_zero.l1.predicated_off
        - read_only.l1.wavefronts;
    assert!(
        (replays as f64 / (expected / 12.8) - 1.0).abs() < 0.01,
        "{replays} replays against {:.0}",
        expected / 12.8
    );
}

/// `entry` of replay_stores.ptx lifted with the compiled code's issue order
/// (tests/data/ptx/replay_stores.sass: ptxas and nvdisasm of CUDA 13.5 for sm_90, the sections
/// of r8_none, r8_indep1 and r8_lane0shfl), as `gputraffic lift` does where ptxas is found.
fn lift_compiled(entry: &str) -> gputraffic::Result<gputraffic::input::ptx::Lifted> {
    let sass = std::fs::read_to_string("tests/data/ptx/replay_stores.sass").unwrap();
    let options = LiftOptions {
        entry: Some(entry.into()),
        extents: vec![("p1".into(), "2 * p2".into())],
        updates: Some("p2".into()),
        issue_order: Some(std::sync::Arc::new(gputraffic::input::ptx::sass::parse(
            &sass,
        ))),
        ..Default::default()
    };
    lift_file("tests/data/ptx/replay_stores.ptx", &options)
}

#[test]
fn loads_the_compiled_code_drops_are_not_simulated() {
    // r8_indep1 stores each thread's index, then sums 8 loads into an empty asm: ptxas drops the
    // loads (none in its SASS), and the H100 counts no load request and 3 wavefronts a warp
    // (ID 19: the store's 2 passes and the threadIdx read).
    let lifted = lift_compiled("r8_indep1").unwrap();
    assert!(
        lifted
            .warnings
            .iter()
            .any(|w| w.contains("issues no instruction for 8 global load(s)")),
        "{:?}",
        lifted.warnings
    );
    assert!(!lifted.toml.contains("{ load"), "{}", lifted.toml);
    let h100 = HwConfig::load("h100-sxm").unwrap();
    let c = simulate_bound(lifted.kernel, h100, &streams_of(1 << 22));
    let measured =
        measured::ncu_counters(Path::new("tests/data/h100/replay_stores/ncu.csv")).unwrap();
    assert_eq!(
        measured[19]["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"],
        0.0
    );
    assert_eq!(c.l1.load_requests, 0);
    assert_eq!(c.l1.wavefronts as f64, measured[19][WAVEFRONTS]);
    // r8_lane0shfl's sums are stored: its 8 loads stay, in one run
    let kept = lift_compiled("r8_lane0shfl").unwrap();
    assert_eq!(kept.toml.matches("{ load").count(), 8, "{}", kept.toml);
    assert!(kept.warnings.iter().all(|w| !w.contains("issues no")));
    // r8_none keeps nothing: an error that says so and names the file, not an empty launch
    let err = lift_compiled("r8_none").unwrap_err().to_string();
    assert!(
        err.starts_with("tests/data/ptx/replay_stores.ptx: ")
            && err.contains("issues no memory instruction"),
        "{err}"
    );
}
