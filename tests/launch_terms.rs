//! What every launched warp costs the L1 data pipe beyond its memory instructions
//! (`validation/launch_terms_probe.cu`, counters in tests/data/h200/launch_terms/): one
//! wavefront per special register it reads with an `S2R`, each `threadIdx` component and
//! `%laneid`, and none for `blockIdx`. Each probe kernel is written as a trace whose `if` on the
//! registers never holds (the probe's store of a comparison with -1), and simulated: with no
//! memory instruction issued, its wavefronts are those reads alone.

use gputraffic::analysis::measured;
use gputraffic::input::trace::Kernel;
use gputraffic::metrics;
use gputraffic::sim::Counts;
use std::collections::BTreeMap;
use std::path::Path;

/// A launch of `grid` blocks of `block` threads whose body is `body`, over an array `out`.
fn probe_trace(block: [u32; 3], grid: [u32; 3], body: &str) -> Kernel {
    let text = format!(
        r#"
name = "launch-terms"
params = {{ key = -1 }}
[[arrays]]
name = "out"
element_bytes = 4
dims = ["2 * 65536 + 128"]
[launch]
block = [{}, {}, {}]
grid = ["{}", "{}", "{}"]
[thread]
lattice_updates = "65536"
body = [{body}]
"#,
        block[0], block[1], block[2], grid[0], grid[1], grid[2]
    );
    Kernel::parse(&text, "launch-terms.toml").unwrap()
}

mod common;

fn simulate(kernel: Kernel) -> Counts {
    common::simulate_as_written(kernel, "h200")
}

/// The probe's launches by kernel (`k_bar` runs three times: `k_bar1`, `k_bar2`, `k_bar4`).
fn measured_probe() -> BTreeMap<String, BTreeMap<String, f64>> {
    let m = measured::ncu_counters(Path::new("tests/data/h200/launch_terms/ncu.csv")).unwrap();
    let names = [
        "k_t1c1", "k_t2c1", "k_t3c1", "k_t1c3", "k_t0c1", "k_t1c0", "k_lane", "k_bar1", "k_bar2",
        "k_bar4", "k_stg2", "k_red2",
    ];
    assert_eq!(m.len(), names.len());
    names.into_iter().map(String::from).zip(m).collect()
}

#[test]
fn a_warp_pays_one_wavefront_per_thread_index_component_it_reads_and_none_for_block_indices() {
    let probe = measured_probe();
    // blocks of 256 threads in one, two and three dimensions
    let (x, xy, xyz) = ([256, 1, 1], [32, 8, 1], [32, 4, 2]);
    let g1 = [65536, 1, 1];
    for (name, block, grid, value, per_warp) in [
        ("k_t1c1", x, g1, "threadIdx.x + blockIdx.x * 3", 1),
        (
            "k_t2c1",
            xy,
            g1,
            "threadIdx.x + threadIdx.y * 5 + blockIdx.x * 3",
            2,
        ),
        (
            "k_t3c1",
            xyz,
            g1,
            "threadIdx.x + threadIdx.y * 5 + threadIdx.z * 7 + blockIdx.x * 3",
            3,
        ),
        (
            "k_t1c3",
            x,
            [64, 32, 32],
            "threadIdx.x + blockIdx.x * 3 + blockIdx.y * 11 + blockIdx.z * 13",
            1,
        ),
        ("k_t0c1", x, g1, "blockIdx.x * 3", 0),
        ("k_t1c0", x, g1, "threadIdx.x * 3", 1),
    ] {
        let m = &probe[name];
        let warps = m["smsp__warps_launched.sum"];
        assert_eq!(warps, 524_288.0, "{name}");
        assert_eq!(m[metrics::L1_WAVEFRONTS], per_warp as f64 * warps, "{name}");
        let c = simulate(probe_trace(
            block,
            grid,
            &format!(r#"{{ if = "{value} == key", body = [{{ store = "out", index = "0" }}] }}"#),
        ));
        assert_eq!(c.warps_launched as f64, warps, "{name}");
        assert_eq!(
            c.l1.wavefronts as f64,
            m[metrics::L1_WAVEFRONTS],
            "{name}: simulated {}, measured {}",
            c.l1.wavefronts,
            m[metrics::L1_WAVEFRONTS]
        );
    }
}

#[test]
fn an_aggregated_atomic_reads_the_lane_id_at_one_wavefront_more() {
    // k_lane (threadIdx.x and %laneid): two per warp, as the aggregated k_count_all of the
    // predicated probe (tests/data/h200/predicated: threadIdx.x and the vote's %laneid) takes
    // beside its one RED per warp
    let probe = measured_probe();
    assert_eq!(
        probe["k_lane"][metrics::L1_WAVEFRONTS],
        2.0 * probe["k_lane"]["smsp__warps_launched.sum"]
    );
    let count_all =
        &measured::ncu_counters(Path::new("tests/data/h200/predicated/ncu.csv")).unwrap()[8];
    let c = simulate(probe_trace(
        [256, 1, 1],
        [65536, 1, 1],
        r#"{ if = "threadIdx.x + blockIdx.x * 256 < 16777216", body = [{ atomic = "out", index = "0", aggregated = true }] }"#,
    ));
    assert_eq!(
        c.l1.atomic_requests as f64,
        count_all[metrics::L1_RED_REQUESTS]
    );
    assert_eq!(
        c.l1.wavefronts as f64,
        count_all[metrics::L1_WAVEFRONTS],
        "simulated {}",
        c.l1.wavefronts
    );
}

#[test]
fn a_predicated_off_global_store_takes_one_wavefront_and_no_request() {
    // k_stg2: `@!P0 STG` for threadIdx.x == 0 (every warp issues it), then the store for
    // threadIdx.x == 1 past an EXIT of the other warps (tests/data/h200/launch_terms/sass_ops.txt)
    let probe = measured_probe();
    let m = &probe["k_stg2"];
    let c = simulate(probe_trace(
        [256, 1, 1],
        [65536, 1, 1],
        r#"{ if = "threadIdx.x == 0", predicated = true, body = [{ store = "out", index = "2 * blockIdx.x + 64" }] },
           { if = "threadIdx.x == 1", body = [{ store = "out", index = "2 * blockIdx.x + 65" }] }"#,
    ));
    assert_eq!(c.l1.predicated_off, 7 * 65_536);
    assert_eq!(c.l1.store_requests as f64, m[metrics::L1_ST_REQUESTS]);
    // the executed stores are the requests and the predicated-off ones
    assert_eq!(
        (c.l1.store_requests + c.l1.predicated_off) as f64,
        m["smsp__inst_executed_op_global_st.sum"]
    );
    assert_eq!(c.l1.wavefronts as f64, m[metrics::L1_WAVEFRONTS]);
}
