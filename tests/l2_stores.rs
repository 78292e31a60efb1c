//! Where a store leaves a line in the split L2, against the placement measured on both GPUs
//! (`validation/l2_near_far.cu --stores`; `validation/l2_stores_summary.py` counts each line of
//! `tests/data/{h100,h200}/micro/l2_stores.csv.gz` into `l2_stores_summary.csv`). After a reading
//! flush, SMs read or write 2048 lines in a configuration's order, then SM 0 reads each once: a
//! hit in its own partition ("near"), a hit in the other one ("far"), or a DRAM read ("dram"). The
//! replay runs the same steps through the library's L2 with the GPU's config and asks the same of
//! its counters. The lines are homed on SM 0's side ("own") or the other ("other").

use gputraffic::input::hw::HwConfig;
use gputraffic::sim::l2::{L2, sector_byte_mask};
use std::collections::HashMap;

#[derive(Clone, Copy)]
enum Op {
    Read,
    /// A whole-sector store (four lanes of 8 bytes).
    Write,
    /// 8 bytes of the sector.
    Part,
}

#[derive(Clone, Copy)]
enum Who {
    /// SM 0, the reader measured afterwards.
    Itself,
    /// An SM of SM 0's side.
    Same,
    /// An SM of the other side.
    Other,
}

/// The benchmark's configurations: name and steps, in `l2_near_far.cu`'s order.
const CONFIGS: &[(&str, &[(Op, Who)])] = &[
    ("cold", &[]),
    ("rd_self", &[(Op::Read, Who::Itself)]),
    ("rd_other", &[(Op::Read, Who::Other)]),
    ("wr_self", &[(Op::Write, Who::Itself)]),
    ("wr_same", &[(Op::Write, Who::Same)]),
    ("wr_other", &[(Op::Write, Who::Other)]),
    (
        "rd_self_wr_self",
        &[(Op::Read, Who::Itself), (Op::Write, Who::Itself)],
    ),
    (
        "rd_self_wr_other",
        &[(Op::Read, Who::Itself), (Op::Write, Who::Other)],
    ),
    (
        "rd_other_wr_self",
        &[(Op::Read, Who::Other), (Op::Write, Who::Itself)],
    ),
    (
        "wr_self_rd_other",
        &[(Op::Write, Who::Itself), (Op::Read, Who::Other)],
    ),
    (
        "wr_self_wr_other",
        &[(Op::Write, Who::Itself), (Op::Write, Who::Other)],
    ),
    ("part_self", &[(Op::Part, Who::Itself)]),
    (
        "rd_self_part_self",
        &[(Op::Read, Who::Itself), (Op::Part, Who::Itself)],
    ),
    (
        "rd_self_part_other",
        &[(Op::Read, Who::Itself), (Op::Part, Who::Other)],
    ),
];

/// The measured place of every (configuration, home) group: every line of a group, in both
/// repetitions, was found in the same place.
fn measured(gpu: &str) -> HashMap<(String, String), &'static str> {
    let path = format!("tests/data/{gpu}/micro/l2_stores_summary.csv");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut rows = text.lines();
    assert_eq!(
        rows.next(),
        Some("config,rep,home,lines,near,far,dram"),
        "{path}"
    );
    let mut place = HashMap::new();
    for row in rows {
        let f: Vec<&str> = row.split(',').collect();
        let n: Vec<u32> = f[3..].iter().map(|x| x.parse().unwrap()).collect();
        assert!(n[0] > 900, "{path}: {row}");
        let found = ["near", "far", "dram"]
            .into_iter()
            .zip(&n[1..])
            .find(|(_, c)| **c == n[0])
            .unwrap_or_else(|| panic!("{path}: {row} is split between places"))
            .0;
        let before = place.insert((f[0].to_string(), f[2].to_string()), found);
        assert!(
            before.is_none_or(|p| p == found),
            "{path}: reps differ on {row}"
        );
    }
    assert_eq!(place.len(), 2 * CONFIGS.len(), "{path}");
    place
}

/// Where SM 0 finds `line` in the model: near hit, far hit or DRAM read.
fn place(l2: &mut L2, line: u64) -> &'static str {
    let (misses, dram) = (l2.counters.read_lookup_miss_sectors, l2.dram.read_sectors);
    l2.read(0, line, 0b0001);
    if l2.counters.read_lookup_miss_sectors == misses {
        "near"
    } else if l2.dram.read_sectors == dram {
        "far"
    } else {
        "dram"
    }
}

/// The replay's place for every (configuration, home).
fn simulated(hw_name: &str) -> HashMap<(String, String), &'static str> {
    let hw = HwConfig::load(hw_name).unwrap();
    let near = hw.near_partition_of_sms();
    let same = (1..near.len()).find(|&s| near[s] == near[0]).unwrap();
    let other = (1..near.len()).find(|&s| near[s] != near[0]).unwrap();
    let probe = L2::new(&hw, false, None);
    // 64 lines of each home, one per 4 KiB page as in the benchmark.
    let (mut own, mut far) = (Vec::new(), Vec::new());
    for line in (0u64..).step_by(32) {
        let v = if probe.home(line) == near[0] as usize {
            &mut own
        } else {
            &mut far
        };
        if v.len() < 64 {
            v.push(line);
        }
        if own.len() == 64 && far.len() == 64 {
            break;
        }
    }
    let mut out = HashMap::new();
    for (name, steps) in CONFIGS {
        let mut l2 = L2::new(&hw, false, None);
        for &(op, who) in *steps {
            let sm = match who {
                Who::Itself => 0,
                Who::Same => same,
                Who::Other => other,
            };
            for &line in own.iter().chain(&far) {
                match op {
                    Op::Read => l2.read(sm, line, 0b0001),
                    Op::Write => l2.write(sm, line, 0b0001, sector_byte_mask(0b0001)),
                    Op::Part => l2.write(sm, line, 0b0001, 0xFF),
                }
            }
        }
        for (home, lines) in [("own", &own), ("other", &far)] {
            let places: Vec<&str> = lines.iter().map(|&l| place(&mut l2, l)).collect();
            assert!(
                places.iter().all(|p| *p == places[0]),
                "{hw_name} {name} {home}: lines of one home in different places"
            );
            out.insert((name.to_string(), home.to_string()), places[0]);
        }
    }
    out
}

fn check(gpu: &str, hw: &str) {
    let measured = measured(gpu);
    let simulated = simulated(hw);
    let mut wrong = Vec::new();
    for (name, _) in CONFIGS {
        for home in ["own", "other"] {
            let key = (name.to_string(), home.to_string());
            if measured[&key] != simulated[&key] {
                wrong.push(format!(
                    "{name} ({home} home): measured {}, simulated {}",
                    measured[&key], simulated[&key]
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{hw} against {gpu}:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn stores_leave_lines_where_the_h100_leaves_them() {
    check("h100", "h100-sxm");
}

#[test]
fn stores_leave_lines_where_the_h200_leaves_them() {
    check("h200", "h200");
}
