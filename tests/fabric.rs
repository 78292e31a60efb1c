//! What crosses the L2 fabric, measured on the H100 (`tests/data/h100/fabric/`): one SM reads a
//! fresh 1 MiB buffer once, whole lines or one sector of each line (`validation/fabric_probe.sh`),
//! or stores into it (`validation/store_fabric_probe.sh`), or two SMs store into it in turn
//! (`validation/store_pair_probe.sh`), under ncu with the caches flushed; a launch whose blocks all
//! return at once gives what every launch adds. The trace `fabric-probe` replays the reads, the
//! library's L2 the stores.

use gputraffic::Bound;
use gputraffic::analysis::measured;
use gputraffic::input::hw::HwConfig;
use gputraffic::input::table::Table;
use gputraffic::launch::LaunchRequest;
use gputraffic::metrics;
use gputraffic::sim::SimOptions;
use gputraffic::sim::l2::{L2, sector_byte_mask};
use std::collections::BTreeMap;
use std::path::Path;

const DIR: &str = "tests/data/h100/fabric";

/// A probe's launches: its rows' `text_columns` and the launch's counters, in launch order.
fn probe_launches(probe: &str, text_columns: &[&str]) -> Vec<(Vec<String>, BTreeMap<String, f64>)> {
    let counters = measured::ncu_counters(Path::new(&format!("{DIR}/{probe}_ncu.csv"))).unwrap();
    let runs = Table::load(Path::new(&format!("{DIR}/{probe}_runs.csv"))).unwrap();
    // Each row's blocks ran where they were asked to: `found` counts the listed SMs that ran one
    // (all `readers` of the read probe; 1 in the store probes, whose rows list their writers).
    let found = runs.numbers("found").unwrap();
    match runs.numbers("readers") {
        Ok(readers) => assert_eq!(readers, found),
        Err(_) => assert!(found.iter().all(|f| *f == Some(1.0))),
    }
    let columns: Vec<Vec<&str>> = text_columns.iter().map(|c| runs.text(c).unwrap()).collect();
    assert_eq!(columns[0].len(), counters.len());
    (counters.into_iter().enumerate())
        .map(|(i, c)| (columns.iter().map(|col| col[i].to_string()).collect(), c))
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
    let launches = probe_launches("fabric_probe", &["mode", "threads"]);
    assert_eq!(launches.len(), 14);
    // A launch that reads nothing still moves 21,396-21,398 sectors over the fabric (and reads
    // 125-128 sectors from the L2, 192 from DRAM): traffic of its own, which no access of a
    // trace causes and the simulator does not count. It is what the one-wave launches of
    // tests/data/h100/occupancy lack in fabric traffic (20.8-31.8 k sectors), and nothing
    // against the stencils' 70-190 M.
    let empty: Vec<&BTreeMap<String, f64>> = (launches.iter())
        .filter(|(key, _)| key[0] == "full")
        .map(|(_, c)| c)
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
        let runs: Vec<_> = launches.iter().filter(|(key, _)| key[0] == mode).collect();
        assert_eq!(runs.len(), if mode == "solo" { 4 } else { 8 });
        for m in COMPARED {
            // The empty launch's reads, subtracted from the measured, hold the launch's own.
            let own = if m == metrics::DRAM_READ {
                gputraffic::sim::launch_read_sectors(&bound.launch, &bound.hw) as f64
            } else {
                0.0
            };
            let simulated = report.metric(m).unwrap() as f64 - own;
            for (key, c) in &runs {
                let (threads, added) = (&key[1], c[m] - baseline(m));
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

const FABRIC_READ: &str = "lts__t_sectors_srcunit_ltcfabric_op_read.sum";
const FABRIC_WRITE: &str = "lts__t_sectors_srcunit_ltcfabric_op_write.sum";

/// Fabric sectors that are neither reads nor writes.
fn fabric_other(c: &BTreeMap<String, f64>) -> f64 {
    c[metrics::L2_FABRIC] - c[FABRIC_READ] - c[FABRIC_WRITE]
}

/// What a probe's store in `mode` writes into each line, as the first writer or the `second`:
/// (sectors, byte mask).
fn store_of(mode: &str, second: bool) -> (u8, u128) {
    match (mode, second) {
        ("whole", _) => (0b1111, sector_byte_mask(0b1111)),
        ("sector", false) | ("part32", _) => (0b0001, sector_byte_mask(0b0001)),
        ("sector", true) => (0b0010, sector_byte_mask(0b0010)),
        ("part8", false) => (0b0001, 0xFF),
        ("part8", true) => (0b0001, 0xFF00),
        ("part16", _) => (0b0001, 0xFFFF),
        _ => panic!("no store for mode {mode}"),
    }
}

/// The fabric sectors of SMs `writers` storing into the probe's 8192 lines in turn, on the H100
/// config: (far stores' sectors, invalidations).
fn simulated_stores(mode: &str, writers: &[usize]) -> (u64, u64) {
    let hw = HwConfig::load("h100-sxm").unwrap();
    let mut l2 = L2::new(&hw, false, None);
    let mut far_sectors = 0;
    let near = hw.near_partition_of_sms();
    for (k, &sm) in writers.iter().enumerate() {
        // The probe's `quad` stores the k-th double of sector 0 in pass k.
        let (sectors, bytes) = if mode == "quad" {
            (0b0001, 0xFFu128 << (64 * k))
        } else {
            store_of(mode, k == 1)
        };
        for line in 0..8192u64 {
            if l2.home(line) != near[sm] as usize {
                far_sectors += u64::from(sectors.count_ones());
            }
            l2.write(sm, line, sectors, bytes);
        }
    }
    (far_sectors, l2.counters.fabric_sectors - far_sectors)
}

#[test]
fn a_far_store_crosses_the_fabric_once_per_sector_whole_or_in_part() {
    let launches = probe_launches("store_fabric", &["mode", "sm"]);
    assert_eq!(launches.len(), 26);
    let empty: Vec<_> = launches.iter().filter(|(k, _)| k[0] == "none").collect();
    let base = |m: &str| empty.iter().map(|(_, c)| c[m]).sum::<f64>() / empty.len() as f64;
    let empty_other = empty.iter().map(|(_, c)| fabric_other(c)).sum::<f64>() / empty.len() as f64;
    // Whole lines (32,768 sectors), 8, 16 or 32 bytes of sector 0 of each line (8,192 sectors)
    // and four 8-byte stores into sector 0 of each line (4 × 8,192): the far-homed half crosses,
    // a sector a store, as the model sends them; 32 or 1024 threads and the SM (124 or 2, one
    // on each side) change nothing.
    for (key, c) in launches.iter().filter(|(k, _)| k[0] != "none") {
        let (mode, sm) = (&key[0], key[1].parse::<usize>().unwrap());
        let writes = if mode == "quad" {
            vec![sm; 4]
        } else {
            vec![sm]
        };
        let (far_sectors, invalidations) = simulated_stores(mode, &writes);
        assert_eq!(invalidations, 0);
        assert_eq!(
            c[FABRIC_WRITE] - base(FABRIC_WRITE),
            far_sectors as f64,
            "{key:?}"
        );
        // What else a launch with stores moves (1.9-2.2 k sectors against 8,192 lines stored) is
        // the same for whole and partial sectors and for one or four passes: not per store, not
        // modelled.
        let other = fabric_other(c) - empty_other;
        assert!((1_800.0..2_300.0).contains(&other), "{key:?}: {other}");
    }
}

#[test]
fn a_home_side_store_after_a_far_one_sends_an_invalidation_across_per_line() {
    let launches = probe_launches("store_pair", &["mode", "sm_a", "sm_b"]);
    assert_eq!(launches.len(), 26);
    let hw = HwConfig::load("h100-sxm").unwrap();
    let near = hw.near_partition_of_sms();
    // SMs 0 and 124 store from one side, SM 2 from the other.
    assert_eq!(near[0], near[124]);
    assert_ne!(near[0], near[2]);
    let other_of = |mode: &str, a: &str, b: &str| -> Vec<f64> {
        (launches.iter())
            .filter(|(k, _)| k[0] == mode && k[1] == a && k[2] == b)
            .map(|(_, c)| fabric_other(c))
            .collect()
    };
    for mode in ["part8", "sector", "whole"] {
        // Two writers on one side (SMs 0 and 124, or SM 0 twice) add what one writer adds: the
        // far one's stores are as simulated, and nothing else differs.
        let one_side: Vec<f64> = [other_of(mode, "0", "124"), other_of(mode, "0", "0")].concat();
        assert_eq!(one_side.len(), 4);
        let reference = one_side.iter().sum::<f64>() / 4.0;
        assert!(one_side.iter().all(|x| (x - reference).abs() < 300.0));
        assert_eq!(simulated_stores(mode, &[0, 124]).1, 0);
        // SM 0 then SM 2: the lines homed on SM 2's side, stored first from the far side, cost
        // one more fabric sector each when SM 2 stores, whichever sectors either wrote: one
        // sector in part (part8), other sectors of the line (sector) or the whole line (whole).
        let (_, invalidations) = simulated_stores(mode, &[0, 2]);
        assert_eq!(invalidations, 4096);
        for x in other_of(mode, "0", "2") {
            let added = x - reference;
            assert!(
                (added / invalidations as f64 - 1.0).abs() < 0.05,
                "{mode} 0 2: {added}"
            );
        }
        // SM 2 then SM 0: the model's 4,096 again, but the H100 adds 6.25 k, 1.5 times as many;
        // the excess is not understood (it shrinks when the writers start together, below).
        assert_eq!(simulated_stores(mode, &[2, 0]).1, 4096);
        for x in other_of(mode, "2", "0") {
            let added = x - reference;
            assert!(
                (1.4..1.6).contains(&(added / 4096.0)),
                "{mode} 2 0: {added}"
            );
        }
    }
}

#[test]
fn the_pair_probe_repeats_and_starting_together_moves_only_the_excess_of_2_then_0() {
    let first = probe_launches("store_pair", &["mode", "sm_a", "sm_b"]);
    let again = probe_launches("store_pair_together", &["mode", "sm_a", "sm_b", "together"]);
    assert_eq!(again.len(), 38);
    let mean_other = |launches: &[(Vec<String>, BTreeMap<String, f64>)], key: &[&str]| {
        let xs: Vec<f64> = (launches.iter())
            .filter(|(k, _)| k.iter().zip(key).all(|(a, b)| a == b))
            .map(|(_, c)| fabric_other(c))
            .collect();
        assert!(!xs.is_empty(), "{key:?}");
        xs.iter().sum::<f64>() / xs.len() as f64
    };
    // A later call on the device pool repeats every launch whose second writer waits.
    for (key, c) in again.iter().filter(|(k, _)| k[3] == "0") {
        let before = mean_other(&first, &[&key[0], &key[1], &key[2]]);
        assert!(
            (fabric_other(c) - before).abs() < 150.0,
            "{key:?}: {} against {before}",
            fabric_other(c)
        );
    }
    // Writers that start together: SM 0 and SM 2 move the same 4.2 k more as when 2 waits, one
    // side as little as in turn; SM 2 and SM 0 move less than when 0 waits (26.4-29.0 k against
    // 29.5 k), about what 0 → 2 moves (27.4 k): the excess of 2 → 0 in turn depends on timing.
    for mode in ["part8", "whole"] {
        let together = |a: &str, b: &str| mean_other(&again, &[mode, a, b, "1"]);
        let in_turn = |a: &str, b: &str| mean_other(&again, &[mode, a, b, "0"]);
        assert!((together("0", "2") - in_turn("0", "2")).abs() < 50.0);
        assert!((together("0", "124") - in_turn("0", "124")).abs() < 150.0);
        assert!(together("2", "0") < in_turn("2", "0") - 400.0);
        assert!((together("2", "0") - in_turn("0", "2")).abs() < 1_600.0);
    }
}
