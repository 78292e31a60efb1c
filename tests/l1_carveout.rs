//! The L1 beside the shared-memory carve-out the driver picks, against `validation/l1_carveout.cu`
//! measured on the H100 and H200 (`tests/data/{h100,h200}/micro/l1_carveout_*.csv`): the
//! configs' `driver_carveouts` give every measured kernel without dynamic shared memory the
//! carve-out Nsight Compute reported for it, and the L1 they leave is where the one-block pointer
//! chase starts to miss.

use gputraffic::analysis::measured;
use gputraffic::input::hw::HwConfig;
use std::collections::BTreeMap;
use std::path::Path;

struct Launch {
    kernel: String,
    threads: u32,
    dynamic_shared: u32,
    lines: u64,
    cycles_per_load: f64,
    /// ncu's launch metrics of this launch.
    metrics: BTreeMap<String, f64>,
}

fn launches(gpu: &str) -> Vec<Launch> {
    let dir = format!("tests/data/{gpu}/micro");
    let runs = std::fs::read_to_string(format!("{dir}/l1_carveout_runs.csv")).unwrap();
    let counters =
        measured::ncu_counters(Path::new(&format!("{dir}/l1_carveout_ncu.csv"))).unwrap();
    let rows: Vec<&str> = runs.lines().skip(1).collect();
    assert_eq!(rows.len(), counters.len(), "{gpu}: one ncu launch per run");
    rows.iter()
        .zip(counters)
        .map(|(row, metrics)| {
            let f: Vec<&str> = row.split(',').collect();
            Launch {
                kernel: f[0].to_string(),
                threads: f[1].parse().unwrap(),
                dynamic_shared: f[2].parse().unwrap(),
                lines: f[3].parse().unwrap(),
                cycles_per_load: f[4].parse().unwrap_or(0.0),
                metrics,
            }
        })
        .collect()
}

/// The blocks an SM holds by everything but shared memory, as ncu reports the limits.
fn blocks_per_sm(l: &Launch) -> u32 {
    [
        "launch__occupancy_limit_registers",
        "launch__occupancy_limit_warps",
        "launch__occupancy_limit_blocks",
    ]
    .iter()
    .map(|m| l.metrics[*m] as u32)
    .min()
    .unwrap()
}

#[test]
fn the_driver_picks_the_carve_out_by_the_blocks_an_sm_holds_as_the_configs_say() {
    for (gpu, config) in [("h100", "h100-sxm"), ("h200", "h200")] {
        let hw = HwConfig::load(config).unwrap();
        let smallest = hw.l1.driver_carveouts[0][1];
        let mut checked = 0;
        for l in launches(gpu).iter().filter(|l| l.dynamic_shared == 0) {
            let picked = l.metrics["launch__shared_mem_config_size"] as u64;
            let blocks = blocks_per_sm(l);
            // The carve-out the config implies is what it takes out of the L1 beyond the smallest.
            let implied =
                hw.l1.size_bytes - hw.l1.size_for(blocks, blocks as u64 * 1024) + smallest;
            assert_eq!(
                implied, picked,
                "{gpu} {} {} threads, {blocks} blocks per SM",
                l.kernel, l.threads
            );
            checked += 1;
        }
        // 16 light probes, 3 register-heavy ones, the chase at 4 block sizes × 13 chain lengths.
        assert_eq!(checked, 16 + 3 + 4 * 13, "{gpu}");
    }
}

#[test]
fn the_chase_in_one_block_starts_to_miss_where_the_carve_out_leaves_the_l1_full() {
    for (gpu, config) in [("h100", "h100-sxm"), ("h200", "h200")] {
        let hw = HwConfig::load(config).unwrap();
        let all = launches(gpu);
        for threads in [1024, 512, 256, 128] {
            let chase: Vec<&Launch> = all
                .iter()
                .filter(|l| l.kernel == "lat_chase" && l.threads == threads)
                .collect();
            // An L1 hit takes 32 cycles; a chain that fits hits on every load.
            let fits = |l: &&&Launch| l.cycles_per_load < 33.0;
            let longest_hitting = chase.iter().filter(fits).map(|l| l.lines).max().unwrap();
            let shortest_missing = chase
                .iter()
                .filter(|l| !fits(l))
                .map(|l| l.lines)
                .min()
                .unwrap();
            assert!(longest_hitting < shortest_missing, "{gpu} {threads}");
            let blocks = blocks_per_sm(chase[0]);
            let l1_lines = hw.l1.size_for(blocks, blocks as u64 * 1024) / 128;
            assert!(
                longest_hitting < l1_lines && l1_lines <= shortest_missing,
                "{gpu} {threads} threads: the config's L1 of {l1_lines} lines, the chase hits up to \
                 {longest_hitting} and misses from {shortest_missing}"
            );
        }
    }
}

#[test]
fn a_launch_of_256_thread_blocks_simulates_with_the_l1_its_carve_out_leaves() {
    use gputraffic::launch::{Launch as Bound, LaunchRequest};
    let hw = HwConfig::load("h100-sxm").unwrap();
    let kernel = gputraffic::input::trace::load("star4").unwrap();
    let l1 = |block: [u32; 3]| {
        let req = LaunchRequest {
            block: Some(block),
            domain: Some([640, 512, 64]),
            set: Vec::new(),
        };
        Bound::new(&kernel, &hw, &req).unwrap().l1_bytes(&hw)
    };
    // star4 takes 32 registers: 2, 4 and 8 blocks of 1024, 512 and 256 threads per SM.
    assert_eq!(l1([2, 16, 32]), 248 * 1024);
    assert_eq!(l1([16, 8, 4]), 240 * 1024);
    assert_eq!(l1([2, 16, 8]), 224 * 1024);
    assert_eq!(l1([32, 4, 1]), 224 * 1024);
}
