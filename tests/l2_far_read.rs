//! The H100 and H200 configs' far-read latency against the near/far latencies measured on both
//! GPUs (`validation/l2_near_far.cu`; `validation/l2_far_extra.py` writes
//! `tests/data/{h100,h200}/micro/l2_far_extra.csv`): per configuration whose warmer sits across
//! the L2, the median pass-0 latency of the lines homed on the warmer's side less that of the near
//! hits, at the clock the launch ran at. The simulator counts a home-side read within that time of
//! a far miss of its sectors as a near-partition miss (`src/sim/l2.rs`).

use gputraffic::input::hw::HwConfig;

/// (near cycles, far cycles, clock MHz, extra ns) per configuration.
fn rows(gpu: &str) -> Vec<(f64, f64, f64, f64)> {
    let path = format!("tests/data/{gpu}/micro/l2_far_extra.csv");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("config,near_lines,far_lines,near_cycles,far_cycles,clock_mhz,extra_ns")
    );
    lines
        .map(|l| {
            let f: Vec<f64> = l.split(',').skip(3).map(|v| v.parse().unwrap()).collect();
            (f[0], f[1], f[2], f[3])
        })
        .collect()
}

fn check(gpu: &str, hw: &str) {
    let rows = rows(gpu);
    assert_eq!(rows.len(), 3, "{gpu}");
    for &(near, far, mhz, ns) in &rows {
        // The column is the cycles' difference at the launch's clock.
        assert!(((far - near) / mhz * 1e3 - ns).abs() < 0.06, "{gpu}: {ns}");
        // Near hits of 250-260 cycles, far ones about 140-155 cycles more (~92 ns).
        assert!((250.0..=260.0).contains(&near) && (135.0..=155.0).contains(&(far - near)));
    }
    let mut ns: Vec<f64> = rows.iter().map(|r| r.3).collect();
    ns.sort_by(f64::total_cmp);
    let config = HwConfig::load(hw).unwrap().l2.far_read_extra_ns.unwrap();
    assert!(
        (config - ns[1]).abs() <= 0.5,
        "{hw}: far_read_extra_ns = {config}, measured median {}",
        ns[1]
    );
}

#[test]
fn the_h100_config_s_far_read_latency_is_the_measured_one() {
    check("h100", "h100-sxm");
}

#[test]
fn the_h200_config_s_far_read_latency_is_the_measured_one() {
    check("h200", "h200");
}
