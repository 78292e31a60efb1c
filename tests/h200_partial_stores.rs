//! The H200 partial-sector store probe (tests/data/h200_partial_sector_stores.csv): strided stores
//! over a 2 GiB buffer. Partial-sector stores cost one DRAM sector read each (when their line is
//! evicted); full-sector stores cost none; DRAM writes are the written sectors that leave the L2.

use gputraffic::input::hw::HwConfig;
use gputraffic::input::trace::Kernel;
use gputraffic::launch::{Launch, LaunchRequest};
use gputraffic::sim::{SimOptions, simulate};

#[test]
fn dram_traffic_of_strided_partial_stores_matches_the_probe() {
    let hw = HwConfig::load("h200").unwrap();
    let text = std::fs::read_to_string("traces/partial-store.toml").unwrap();
    let mut r = csv::Reader::from_path("tests/data/h200_partial_sector_stores.csv").unwrap();
    let mut rows = 0;
    for rec in r.records() {
        let rec = rec.unwrap();
        let v: Vec<u64> = rec.iter().map(|x| x.parse().unwrap()).collect();
        let (buffer, stride, store, stores, dram_read, dram_write) =
            (v[0], v[1], v[2], v[3], v[4], v[5]);
        let kernel = Kernel::parse(
            &text.replace("bytes = 8 }", &format!("bytes = {store} }}")),
            "partial-store",
        )
        .unwrap();
        let req = LaunchRequest {
            block: None,
            domain: None,
            set: vec![
                ("buffer_bytes".into(), buffer as i64),
                ("stride".into(), stride as i64),
            ],
        };
        let launch = Launch::new(&kernel, &hw, &req).unwrap();
        let c = simulate(&launch, &hw, &SimOptions::default()).unwrap();
        assert_eq!(c.thread_accesses, stores);
        assert_eq!(
            c.l2.write_sectors, v[6],
            "L2 write sectors, stride {stride} store {store}"
        );
        let sim_read = c.dram.read_sectors as f64;
        let sim_write = c.dram.write_sectors as f64;
        if dram_read < 10_000 {
            // Full-sector stores: no DRAM reads but the launch's own (the probe's ~100 are too).
            assert_eq!(
                c.dram.read_sectors,
                gputraffic::sim::launch_read_sectors(&launch, &hw),
                "stride {stride} store {store}"
            );
        } else {
            let e = sim_read / dram_read as f64 - 1.0;
            assert!(
                e.abs() < 0.05,
                "DRAM reads {sim_read} vs {dram_read}, stride {stride} store {store}"
            );
        }
        let e = sim_write / dram_write as f64 - 1.0;
        assert!(
            e.abs() < 0.05,
            "DRAM writes {sim_write} vs {dram_write}, stride {stride} store {store}"
        );
        rows += 1;
    }
    assert_eq!(rows, 7);
}
