//! Warp-wide register operations on the H200 (`validation/warp_ops_probe.cu`, counters in
//! tests/data/h200/warp_ops/): a shuffle (`SHFL`) takes one L1 data-pipe wavefront per warp
//! instruction, whatever its mode, width, lanes or value size (a double's is two `SHFL`), and
//! votes, reductions and matches take none. Each probe launch is written as a trace (the
//! probe's sink is a float comparison, which the lifter does not follow) and simulated.

use gputraffic::Bound;
use gputraffic::analysis::measured;
use gputraffic::input::trace::Kernel;
use gputraffic::launch::LaunchRequest;
use gputraffic::metrics;
use gputraffic::sim::SimOptions;
use std::path::Path;

mod common;

/// The probe's kernels as the trace language says them: each thread reads blockIdx.x (one
/// wavefront per launched warp) and issues `k` shuffles in a loop, the lanes below `lanes` of
/// each warp taking part.
const PROBE: &str = r#"
name = "warp-ops"
params = { blocks = 2112, k = 256, lanes = 32 }
[[arrays]]
name = "out"
element_bytes = 4
dims = ["blocks"]
[launch]
block = [256, 1, 1]
grid = ["blocks", "1", "1"]
[thread]
let = ["b = blockIdx.x"]
lattice_updates = "blocks"
body = [
  { if = "threadIdx.x % 32 < lanes", body = [
    { loop = "i", count = "k", body = [{ shuffles = 1 }] },
  ] },
]
"#;

#[test]
fn a_shuffle_takes_one_wavefront_per_warp_and_other_warp_operations_none() {
    let dir = "tests/data/h200/warp_ops";
    let m = measured::ncu_counters(Path::new(&format!("{dir}/ncu.csv"))).unwrap();
    let lines = common::launch_lines(&format!("{dir}/launches.txt"));
    assert_eq!(lines.len(), m.len());
    let kernel = Kernel::parse(PROBE, "warp-ops.toml").unwrap();
    for (line, measured) in lines.iter().zip(&m) {
        let n: i64 = line[1].parse().unwrap();
        let (block, blocks): (u32, i64) = (line[2].parse().unwrap(), line[3].parse().unwrap());
        // SHFL per thread (tests/data/h200/warp_ops/sass_ops.txt: a double's shuffle is two)
        let (k, lanes) = match line[0].as_str() {
            "xor32" | "idx32" | "up32" | "down32" | "xor32w8" | "pair32" => (n, 32),
            "xor64" => (2 * n, 32),
            "half32" => (n, 16),
            "alu" | "vote" | "redux" | "match" => (0, 32),
            other => panic!("unknown probe kernel {other}"),
        };
        let req = LaunchRequest {
            block: Some([block, 1, 1]),
            set: [("blocks", blocks), ("k", k), ("lanes", lanes)]
                .iter()
                .map(|(p, v)| (p.to_string(), *v))
                .collect(),
            ..Default::default()
        };
        let b = Bound::new(kernel.clone(), "h200", &req).unwrap();
        let c = gputraffic::sim::simulate(&b.launch, &b.hw, &SimOptions::default()).unwrap();
        let warps = (blocks * block as i64 / 32) as f64;
        assert_eq!(measured["smsp__warps_launched.sum"], warps, "{line:?}");
        let want = measured[metrics::L1_WAVEFRONTS];
        let got = c.l1.wavefronts as f64;
        // all of them shared-memory wavefronts on the GPU, none of its loads' or stores'
        assert_eq!(
            measured["l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"],
            want
        );
        // the GPU takes up to 0.6 more per warp (0.13 %) in blocks of more than one warp
        assert!(
            got <= want && want - got <= 0.6 * warps,
            "{line:?}: simulated {got}, measured {want}"
        );
        assert_eq!(c.l1.shuffles as f64, warps * k as f64, "{line:?}");
    }
}

#[test]
fn a_shuffles_step_is_a_count_from_1_to_1024_and_nothing_else() {
    let with = |step: &str| PROBE.replace("{ shuffles = 1 }", step);
    let err = |step: &str| {
        Kernel::parse(&with(step), "warp-ops.toml")
            .unwrap_err()
            .to_string()
    };
    // `shuffles = 3` is three shuffles in a row
    let k = Kernel::parse(&with("{ shuffles = 3 }"), "warp-ops.toml").unwrap();
    assert_eq!(format!("{:?}", k.body).matches("kind: Shuffle").count(), 3);
    assert_eq!(
        err("{ shuffles = 0 }"),
        "warp-ops.toml: line 16, column 53: shuffles = 0 must be a count from 1 to 1024"
    );
    assert!(err("{ shuffles = 1025 }").contains("must be a count from 1 to 1024"));
    assert_eq!(
        err("{ shuffles = 2, index = \"i\" }"),
        "warp-ops.toml: line 16, column 40: a shuffles step takes only shuffles = N"
    );
    assert!(err("{ shuffles = 1, sync = true }").contains("each body entry is exactly one of:"));
}
