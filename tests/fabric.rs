//! What crosses the L2 fabric, measured on the H100 (`tests/data/h100/fabric/`,
//! `validation/fabric_probe.sh`): one SM reads a fresh 1 MiB buffer once, whole lines or one
//! sector of each line, under ncu with the caches flushed; a launch whose blocks all return at once
//! gives what every launch adds. The trace `fabric-probe` replays the reads.

use gputraffic::Bound;
use gputraffic::analysis::measured;
use gputraffic::input::hw::HwConfig;
use gputraffic::input::table::Table;
use gputraffic::launch::LaunchRequest;
use gputraffic::metrics;
use gputraffic::sim::SimOptions;
use std::collections::BTreeMap;
use std::path::Path;

const DIR: &str = "tests/data/h100/fabric";

/// The probe's launches: (mode, threads, counters), in launch order.
fn measured_launches() -> Vec<(String, u32, BTreeMap<String, f64>)> {
    let counters =
        measured::ncu_counters(Path::new(&format!("{DIR}/fabric_probe_ncu.csv"))).unwrap();
    let runs = Table::load(Path::new(&format!("{DIR}/fabric_probe_runs.csv"))).unwrap();
    let (modes, threads) = (runs.text("mode").unwrap(), runs.numbers("threads").unwrap());
    // Each row's block ran where it was asked to (`found` = the SMs listed).
    assert_eq!(
        runs.numbers("readers").unwrap(),
        runs.numbers("found").unwrap()
    );
    assert_eq!(modes.len(), counters.len());
    (modes.into_iter().zip(threads).zip(counters))
        .map(|((mode, threads), c)| (mode.to_string(), threads.unwrap() as u32, c))
        .collect()
}

const COMPARED: [&str; 4] = [
    metrics::L2_READ,
    metrics::L2_READ_MISS,
    metrics::L2_FABRIC,
    metrics::DRAM_READ,
];

#[test]
fn a_far_read_crosses_the_fabric_in_fill_units_and_every_launch_adds_its_own_fabric_traffic() {
    let launches = measured_launches();
    assert_eq!(launches.len(), 14);
    // A launch that reads nothing still moves 21,396-21,398 sectors over the fabric (and reads
    // 125-128 sectors from the L2, 192 from DRAM): traffic of its own, which no access of a
    // trace causes and the simulator does not count. It is what the one-wave launches of
    // tests/data/h100/occupancy lack in fabric traffic (20.8-31.8 k sectors), and nothing
    // against the stencils' 70-190 M.
    let empty: Vec<&BTreeMap<String, f64>> = (launches.iter())
        .filter(|(mode, _, _)| mode == "full")
        .map(|(_, _, c)| c)
        .collect();
    assert_eq!(empty.len(), 2);
    let baseline = |m: &str| empty.iter().map(|c| c[m]).sum::<f64>() / 2.0;
    assert!((21_000.0..22_000.0).contains(&baseline(metrics::L2_FABRIC)));
    assert!(baseline(metrics::L2_READ) < 200.0);
    // What the reads add, against the simulation of the same reads on the H100 config: whole
    // lines (32,768 sectors) miss the near partition and come from DRAM, and the lines homed in
    // the far partition, half of them, cross the fabric, a sector per sector (16,384). One sector
    // a line (8,192 sectors) fills 64 bytes: the near partition misses two sectors a read, DRAM
    // reads two, and the far half crosses the fabric two sectors a line (8,192), not one; what
    // the simulator does with `fill_bytes = 64`. The SM (124 or 2, one in each partition's
    // half) and the threads (1024 or 32) change nothing.
    let hw = HwConfig::load("h100-sxm").unwrap();
    let kernel = gputraffic::input::trace::load("fabric-probe").unwrap();
    for (mode, stride) in [("solo", 1), ("sector", 16)] {
        let request = LaunchRequest {
            block: None,
            domain: None,
            set: vec![("stride".to_string(), stride)],
        };
        let bound = Bound::with_hw(kernel.clone(), hw.clone(), &request).unwrap();
        let report = bound.simulate(&SimOptions::default(), None).unwrap();
        let runs: Vec<_> = launches.iter().filter(|(m, _, _)| m == mode).collect();
        assert_eq!(runs.len(), if mode == "solo" { 4 } else { 8 });
        for m in COMPARED {
            let simulated = report.metric(m).unwrap() as f64;
            for (_, threads, c) in &runs {
                let added = c[m] - baseline(m);
                assert!(
                    (added - simulated).abs() <= 16.0,
                    "{mode} ({threads} threads) {m}: measured {added} over the empty launch, \
                     simulated {simulated}"
                );
            }
        }
        let fabric = report.metric(metrics::L2_FABRIC).unwrap();
        assert_eq!(fabric, if mode == "solo" { 16_384 } else { 8_192 });
    }
}
