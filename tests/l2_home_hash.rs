//! The H100 and H200 configs' L2 home-partition function against the near/far latencies measured
//! on both GPUs (`validation/l2_near_far.cu`; `validation/l2_home_fit.py` classifies each line of
//! `l2_near_far.csv.gz` and writes `tests/data/{h100,h200}/micro/l2_home_lines.csv`). A warmer on
//! the other side of the L2 leaves the lines homed there far from the measurer, so "far" marks a
//! line's home. Offsets are relative to a buffer on 2 MiB pages: below bit 21 they are the physical
//! address bits, above it the physical frame adds one unknown constant per page.

use gputraffic::input::hw::{HwConfig, PartitionHash};
use std::collections::HashMap;

const PAGE_SHIFT: u32 = 21;

/// (config, line offset, far) per measured line.
fn lines(gpu: &str) -> Vec<(String, u64, bool)> {
    let path = format!("tests/data/{gpu}/micro/l2_home_lines.csv");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut rows = text.lines();
    assert_eq!(rows.next(), Some("config,line_offset_bytes,far"));
    rows.map(|l| {
        let f: Vec<&str> = l.split(',').collect();
        (f[0].to_string(), f[1].parse().unwrap(), f[2] == "1")
    })
    .collect()
}

/// Lines whose home under `mask` disagrees with the measurement, after the best constant per
/// (configuration, 2 MiB page): the minority of each page.
fn contradicted(lines: &[(String, u64, bool)], mask: u64) -> usize {
    let within_page = mask & ((1 << PAGE_SHIFT) - 1);
    let mut agree: HashMap<(&str, u64), [usize; 2]> = HashMap::new();
    for (config, offset, far) in lines {
        let home = (offset & within_page).count_ones() & 1 == 1;
        agree.entry((config, offset >> PAGE_SHIFT)).or_default()[(home == *far) as usize] += 1;
    }
    agree.values().map(|[a, b]| *a.min(b)).sum()
}

fn check(gpu: &str, hw: &str) {
    let lines = lines(gpu);
    let configs: std::collections::HashSet<&str> = lines.iter().map(|l| l.0.as_str()).collect();
    assert_eq!((lines.len(), configs.len()), (3 * 2048, 3), "{gpu}");
    let far = lines.iter().filter(|l| l.2).count() as f64 / lines.len() as f64;
    assert!((0.45..0.55).contains(&far), "{gpu}: {far} of the lines far");

    let mask = HwConfig::load(hw)
        .unwrap()
        .l2
        .home_hash
        .unwrap()
        .mask()
        .unwrap();
    assert_eq!(
        contradicted(&lines, mask),
        0,
        "{gpu}: lines whose home the config gets wrong"
    );
    // The test tells functions apart: the parity of every bit from 12 (the configs before
    // 2026-11-24) is wrong on about half the lines.
    let every_bit = PartitionHash::contiguous(12, 16).mask().unwrap();
    let wrong = contradicted(&lines, every_bit);
    assert!(
        wrong > lines.len() / 4,
        "{gpu}: bits 12.. contradict {wrong} lines"
    );
}

#[test]
fn the_h200_config_homes_every_measured_line_where_the_gpu_does() {
    check("h200", "h200");
}

#[test]
fn the_h100_config_homes_every_measured_line_where_the_gpu_does() {
    check("h100", "h100-sxm");
}

#[test]
fn the_two_gpus_differ_in_one_bit_below_the_page() {
    let page = (1u64 << PAGE_SHIFT) - 1;
    let mask = |hw: &str| {
        HwConfig::load(hw)
            .unwrap()
            .l2
            .home_hash
            .unwrap()
            .mask()
            .unwrap()
            & page
    };
    let bits = |m: u64| (0..64).filter(|b| m >> b & 1 == 1).collect::<Vec<u32>>();
    assert_eq!(bits(mask("h200")), [12, 13, 15, 17, 19]);
    assert_eq!(bits(mask("h100-sxm")), [12, 13, 16, 17, 19]);
    // Each GPU's function contradicts the other's measurement.
    assert!(contradicted(&lines("h100"), mask("h200")) > 1000);
    assert!(contradicted(&lines("h200"), mask("h100-sxm")) > 1000);
}
