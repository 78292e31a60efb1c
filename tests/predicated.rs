//! Memory instructions the compiled code predicates instead of branching around them
//! (`validation/predicated_probe.cu`, counters in tests/data/h200/predicated/): every warp issues
//! them, and one with no lane meeting the condition still takes a data-pipe wavefront per
//! instruction (under `_mem_shared`, not its loads' or stores'), counts it as an executed
//! shared instruction, and makes no request. A trace says so with `predicated = true` on the
//! `if`. The probe's kernels are written as traces (2^16 blocks of 256 threads on the H200; the
//! probe's sink is a float comparison that never holds, which the lifter does not follow).

use gputraffic::analysis::measured;
use gputraffic::input::trace::Kernel;
use gputraffic::metrics;
use gputraffic::sim::Counts;
use std::collections::BTreeMap;
use std::path::Path;

/// `body` over a global array `in` and a shared tile of 256 floats, in the probe's launch.
fn probe_trace(body: &str) -> Kernel {
    let text = format!(
        r#"
name = "predicated-probe"
params = {{ blocks = 65536 }}
[[arrays]]
name = "in"
element_bytes = 4
dims = ["blocks + 1"]
[[shared]]
name = "tile"
element_bytes = 4
dims = ["256"]
[launch]
block = [256, 1, 1]
grid = ["blocks", "1", "1"]
[thread]
lattice_updates = "blocks"
body = [{body}]
"#
    );
    Kernel::parse(&text, "predicated-probe.toml").unwrap()
}

mod common;

fn simulate(kernel: Kernel) -> Counts {
    common::simulate_as_written(kernel, "h200")
}

/// The probe's launches by kernel name (`k_ldg`, …), in tests/data/h200/predicated/ncu.csv's
/// order.
fn measured_probe() -> BTreeMap<&'static str, BTreeMap<String, f64>> {
    let m = measured::ncu_counters(Path::new("tests/data/h200/predicated/ncu.csv")).unwrap();
    let names = [
        "k_none",
        "k_ldg",
        "k_ldg_base",
        "k_sts",
        "k_sts_base",
        "k_lds",
        "k_lds_base",
        "k_stg",
        "k_count_all",
        "k_sum_all",
    ];
    assert_eq!(m.len(), names.len());
    names.into_iter().zip(m).collect()
}

const MEM_SHARED: &str = "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum";
const WARPS: &str = "smsp__warps_launched.sum";

#[test]
fn a_warp_with_no_lane_in_a_predicated_if_still_issues_its_loads_as_one_wavefront_each() {
    let m = &measured_probe()["k_ldg"];
    // if (threadIdx.x == 0) a = in[blockIdx.x]; if (threadIdx.x == 1) b = in[blockIdx.x + 1];
    // (`@!P0 LDG`, `@!P1 LDG` in tests/data/h200/predicated/sass_ops.txt)
    let ifs = |predicated: &str| {
        probe_trace(&format!(
            r#"{{ if = "threadIdx.x == 0"{predicated}, body = [{{ load = "in", index = "blockIdx.x" }}] }},
               {{ if = "threadIdx.x == 1"{predicated}, body = [{{ load = "in", index = "blockIdx.x + 1" }}] }}"#
        ))
    };
    let c = simulate(ifs(", predicated = true"));
    // seven of each block's eight warps issue both loads with no lane: 2 * 7 * 2^16
    assert_eq!(c.l1.predicated_off, 917_504);
    // the GPU's shared-pipe wavefronts beyond the one per launched warp (the threadIdx.x read)
    // are exactly those
    assert_eq!(m[MEM_SHARED] - m[WARPS], c.l1.predicated_off as f64);
    // and they make no request: only warp 0's loads reach the L1's tags
    assert_eq!(
        c.l1.load_requests as f64,
        m[metrics::L1_LD_REQUESTS],
        "requests"
    );
    let (got, want) = (c.l1.wavefronts as f64, m[metrics::L1_WAVEFRONTS]);
    assert!(
        (got / want - 1.0).abs() < 0.01,
        "wavefronts: simulated {got}, measured {want}"
    );
    // the same trace without the mark, a branch around the body, takes that many fewer (to a
    // few of the misses' replays: the warps that skip the loads reach the next ones sooner)
    let branched = simulate(ifs(""));
    assert_eq!(branched.l1.predicated_off, 0);
    assert_eq!(branched.l1.load_requests, c.l1.load_requests);
    let fewer = c.l1.wavefronts as f64 - branched.l1.wavefronts as f64;
    assert!((fewer - 917_504.0).abs() < 10.0, "{fewer}");
}

#[test]
fn a_predicated_off_shared_access_counts_as_an_executed_instruction_without_its_wavefronts() {
    let probe = measured_probe();
    let blocks = 65_536.0;
    // k_sts: if (threadIdx.x == 0) tile[0] = ...; __syncthreads(); v = tile[0]
    let sts = simulate(probe_trace(
        r#"{ if = "threadIdx.x == 0", predicated = true, body = [{ store = "tile", index = "0" }] },
           { sync = true },
           { load = "tile", index = "0" }"#,
    ));
    // k_lds: tile[threadIdx.x] = ...; __syncthreads(); if (threadIdx.x == 0) v = tile[1]
    let lds = simulate(probe_trace(
        r#"{ store = "tile", index = "threadIdx.x" },
           { sync = true },
           { if = "threadIdx.x == 0", predicated = true, body = [{ load = "tile", index = "1" }] }"#,
    ));
    for (name, c) in [("k_sts", &sts), ("k_lds", &lds)] {
        let m = &probe[name];
        // every warp's LDS and STS counts as executed, those with no lane too
        assert_eq!(
            c.l1.shared_load_requests as f64,
            m[metrics::SHARED_LD_INSTRUCTIONS],
            "{name}"
        );
        assert_eq!(
            c.l1.shared_store_requests as f64,
            m[metrics::SHARED_ST_INSTRUCTIONS],
            "{name}"
        );
        // one wavefront each for the 7 of 8 warps with no lane: what the GPU's shared pipe
        // takes beyond its loads', its stores', one per launched warp (the threadIdx read) and
        // one per block (the barrier), within 0.2%
        assert_eq!(c.l1.predicated_off, 458_752, "{name}");
        let rest = m[MEM_SHARED]
            - m[metrics::SHARED_LD_WAVEFRONTS]
            - m[metrics::SHARED_ST_WAVEFRONTS]
            - m[WARPS]
            - blocks;
        assert!(
            (rest / c.l1.predicated_off as f64 - 1.0).abs() < 0.002,
            "{name}: {rest}"
        );
    }
    // the STS's own wavefronts are those of warp 0 alone
    assert_eq!(
        sts.l1.shared_store_wavefronts as f64,
        probe["k_sts"][metrics::SHARED_ST_WAVEFRONTS]
    );
}

#[test]
fn a_predicated_if_holds_only_plain_accesses_and_the_mark_only_an_if() {
    let refused = |body: &str| {
        let text = format!(
            r#"
name = "p"
[[arrays]]
name = "a"
element_bytes = 4
dims = ["64"]
[launch]
block = [32, 1, 1]
grid = ["1", "1", "1"]
[thread]
lattice_updates = "32"
body = [{body}]
"#
        );
        Kernel::parse(&text, "p.toml").unwrap_err().to_string()
    };
    let e = refused(
        r#"{ if = "threadIdx.x == 0", predicated = true, body = [{ loop = "k", count = "2", body = [{ load = "a", index = "k" }] }] }"#,
    );
    assert!(
        e.contains("p.toml")
            && e.contains("a predicated if's body holds only loads, stores and atomics"),
        "{e}"
    );
    let e = refused(r#"{ if = "threadIdx.x == 0", predicated = true, body = [{ shuffles = 1 }] }"#);
    assert!(e.contains("holds only loads, stores and atomics"), "{e}");
    let e = refused(r#"{ load = "a", index = "threadIdx.x", predicated = true }"#);
    assert!(e.contains("predicated marks an if"), "{e}");
}
