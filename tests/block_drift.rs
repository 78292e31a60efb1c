//! The H100 and H200 configs' block drift against the GPUs' scheduling logs
//! (`validation/sched.cu`; `validation/block_drift.py` writes
//! `tests/data/{h100,h200}/sched/block_drift.csv`): per log, consecutive blocks that start
//! together on different SMs, and the robust standard deviation of the difference of their lives
//! as a share of the median life. The configs carry the median over a GPU's logs; the L2 blurs
//! the race of a home-side read with a far miss by it (`src/sim/l2.rs`).

use gputraffic::input::hw::HwConfig;

/// (pairs, median life ns, life difference sd ns, drift) per log.
fn rows(gpu: &str) -> Vec<(u64, f64, f64, f64)> {
    let path = format!("tests/data/{gpu}/sched/block_drift.csv");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("log,pairs,median_life_ns,life_difference_sd_ns,drift")
    );
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let num = |i: usize| f[i].parse::<f64>().unwrap();
            (f[1].parse().unwrap(), num(2), num(3), num(4))
        })
        .collect()
}

fn check(gpu: &str, hw: &str, logs: usize) {
    let rows = rows(gpu);
    assert_eq!(rows.len(), logs, "{gpu}");
    for &(pairs, life, sd, drift) in &rows {
        // Most blocks have a successor that starts with them elsewhere.
        assert!(pairs > 16_000, "{gpu}: {pairs} pairs");
        assert!(
            (sd / life - drift).abs() < 1e-4,
            "{gpu}: {sd} / {life} != {drift}"
        );
        // The %globaltimer ticks in 32 ns: the spread is a multiple of 1.4826 x 32 / 2 ns.
        let stamps = sd / (1.4826 * 16.0);
        assert!((stamps - stamps.round()).abs() < 0.01, "{gpu}: {sd}");
        // Blocks fall 3-18% of a life apart: neither in step nor unrelated.
        assert!((0.03..0.2).contains(&drift), "{gpu}: {drift}");
    }
    let mut drifts: Vec<f64> = rows.iter().map(|r| r.3).collect();
    drifts.sort_by(f64::total_cmp);
    let n = drifts.len();
    let median = (drifts[(n - 1) / 2] + drifts[n / 2]) / 2.0;
    let config = HwConfig::load(hw).unwrap().schedule.block_drift.unwrap();
    assert!(
        (config - median).abs() <= 0.0006,
        "{hw}: block_drift = {config}, measured median {median}"
    );
}

#[test]
fn the_h100_config_s_block_drift_is_the_median_of_its_twelve_logs() {
    check("h100", "h100-sxm", 12);
}

#[test]
fn the_h200_config_s_block_drift_is_the_median_of_the_dev_set_s_four_logs() {
    check("h200", "h200", 4);
}
