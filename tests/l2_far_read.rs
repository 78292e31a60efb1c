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

/// (sm_a, sm_b, lines, B's measured start after A's in ns, share of B's home lines it missed
/// too) per group of `validation/l2_race_probe.sh` on the H200 (`validation/l2_race_summary.py`).
fn race_rows() -> Vec<(u32, u32, u32, f64, f64)> {
    let text = std::fs::read_to_string("tests/data/h200/micro/race/race_summary.csv").unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("sm_a,sm_b,lines,delay_ns,b_start_ns,misses,replay_misses,raced")
    );
    lines
        .map(|l| {
            let f: Vec<f64> = l.split(',').map(|v| v.parse().unwrap()).collect();
            (f[0] as u32, f[1] as u32, f[2] as u32, f[4], f[7])
        })
        .collect()
}

#[test]
fn a_home_side_read_misses_only_within_about_the_far_reads_extra_latency() {
    let rows = race_rows();
    assert_eq!(rows.len(), 66);
    // One side of the L2 (SMs 0 and 1): the second reader never misses, whatever the delay.
    assert!(rows.iter().filter(|r| r.1 == 1).all(|r| r.4 == 0.0));
    // Opposite sides, a short stream of 256 lines: B misses about half its home lines when it
    // starts 64-96 ns after A, none when it starts 200 ns or more after (or before) A.
    let short: Vec<_> = rows.iter().filter(|r| r.1 != 1 && r.2 == 256).collect();
    let raced: Vec<f64> = short.iter().filter(|r| r.4 > 0.3).map(|r| r.3).collect();
    let clean: Vec<f64> = short
        .iter()
        .filter(|r| r.4.abs() < 0.1)
        .map(|r| r.3)
        .collect();
    assert_eq!((raced.len(), clean.len()), (2, 20));
    let last_raced = raced.iter().cloned().fold(f64::MIN, f64::max);
    let first_clean = clean
        .iter()
        .cloned()
        .filter(|&t| t > 0.0)
        .fold(f64::MAX, f64::min);
    assert_eq!((last_raced, first_clean), (96.0, 208.0));
    // The config's window lies between them, within the 32 ns of %globaltimer.
    let window = HwConfig::load("h200")
        .unwrap()
        .l2
        .far_read_extra_ns
        .unwrap();
    assert!(last_raced - 32.0 <= window && window <= first_clean + 32.0);
    // A long stream (4096 lines) queues: B still misses about half its home lines when it starts
    // up to 700 ns behind A, and none when it starts 5 us behind.
    let long = rows.iter().filter(|r| r.1 != 1 && r.2 == 4096);
    assert!(long.clone().filter(|r| r.3 <= 720.0).all(|r| r.4 > 0.4));
    assert!(long.filter(|r| r.3 >= 4800.0).all(|r| r.4 < 0.02));
}
