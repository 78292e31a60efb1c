//! `rank`'s race (issue 54): every shape screened, those that may be the fastest simulated
//! exactly. On launches long enough to screen, the default's first shape is `--exact`'s, the
//! confirmed shapes' figures are `simulate`'s bit for bit, every shape left screened was rightly
//! dropped (its interval starts above the leader's upper end, and its exact time is no better
//! than the first's and lies in its interval), and the output is the same on 1 and 2 threads.
//! Launches too short to screen are simulated exactly, as `--exact` does.
//!
//! The GPU is tests/data/hw/sampling-small.toml (a V100 cut down to 8 SMs and a 512 KB L2), so
//! that launches simulated exactly in a second have hundreds of waves and an L2 that turns over.

mod common;
use common::{gputraffic, rejects};
use gputraffic::analysis::rank::{EXACT, SCREEN_MARGIN, SCREENED};
use serde_json::Value;

const HW: &str = "tests/data/hw/sampling-small.toml";
const SHAPES: &str = "32x8x4,16x16x4,64x4x4,32x4x8,8x8x16,128x2x4,256x1x4,16x4x16";

/// `rank` of star4 on 128×128×256 with `extra` flags: (JSON shapes, stderr).
fn rank(extra: &[&str]) -> (Vec<Value>, String, String) {
    let args = [
        &[
            "rank",
            "--kernel",
            "star4",
            "--hw",
            HW,
            "--domain",
            "128x128x256",
            "--blocks",
            SHAPES,
            "--format",
            "json",
        ][..],
        extra,
    ]
    .concat();
    let (code, out, err) = gputraffic(&args);
    assert_eq!(code, 0, "{err}");
    let ranking: Value = serde_json::from_str(&out).unwrap();
    let shapes = ranking["shapes"].as_array().unwrap().clone();
    (shapes, out, err)
}

fn block(s: &Value) -> String {
    let b = s["block"].as_array().unwrap();
    format!("{}x{}x{}", b[0], b[1], b[2])
}

fn num(s: &Value, key: &str) -> f64 {
    s[key].as_f64().unwrap_or_else(|| panic!("{key} of {s}"))
}

#[test]
fn the_race_picks_the_exact_first_shape_and_drops_only_slower_shapes() {
    let (default, out1, err) = rank(&["--threads", "1"]);
    let (_, out2, _) = rank(&["--threads", "2"]);
    assert_eq!(out1, out2, "the same ranking on 1 and 2 threads");
    let (exact, _, _) = rank(&["--exact", "--threads", "2"]);
    assert_eq!(default.len(), 8);
    assert_eq!(exact.len(), 8);
    assert!(exact.iter().all(|s| s["simulated"] == EXACT));

    // The race ran: some shapes confirmed, some left screened, and the note counts them.
    let confirmed: Vec<&Value> = default.iter().filter(|s| s["simulated"] == EXACT).collect();
    let screened: Vec<&Value> = default
        .iter()
        .filter(|s| s["simulated"] == SCREENED)
        .collect();
    assert!(!confirmed.is_empty() && !screened.is_empty(), "{out1}");
    assert_eq!(confirmed.len() + screened.len(), 8);
    assert!(
        err.contains(&format!(
            "note: {} of 8 shapes simulated exactly ({} of 8 screened shapes confirmed)",
            confirmed.len(),
            confirmed.len()
        )),
        "{err}"
    );
    // Confirmed shapes first, each part by its predicted time.
    let n = confirmed.len();
    assert!(default[..n].iter().all(|s| s["simulated"] == EXACT));
    for part in [&default[..n], &default[n..]] {
        let t: Vec<f64> = part.iter().map(|s| num(s, "predicted_s")).collect();
        assert!(t.windows(2).all(|w| w[0] <= w[1]), "{t:?}");
    }

    let exact_of = |b: &str| exact.iter().find(|s| block(s) == b).unwrap();
    // The first shape is --exact's, with the same figures.
    assert_eq!(default[0], exact[0]);
    // A confirmed shape's figures are the exact ones, interval of zero width.
    for s in &confirmed {
        let e = exact_of(&block(s));
        for key in [
            "predicted_s",
            "dram_bytes_per_lup",
            "l2_bytes_per_lup",
            "lups_per_s",
        ] {
            assert_eq!(s[key], e[key], "{key} of {}", block(s));
        }
        assert_eq!(s["predicted_lo_s"], s["predicted_s"]);
        assert_eq!(s["predicted_hi_s"], s["predicted_s"]);
    }
    // ... and `simulate`'s, bit for bit (the first confirmed shape; the others equal --exact's,
    // which tests/cli.rs compares with simulate).
    let (code, sim, err) = gputraffic(&[
        "simulate",
        "--kernel",
        "star4",
        "--hw",
        HW,
        "--domain",
        "128x128x256",
        "--block",
        &block(confirmed[0]),
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let sim: Value = serde_json::from_str(&sim).unwrap();
    assert_eq!(sim["time"]["predicted_s"], confirmed[0]["predicted_s"]);

    // Every shape left screened was dropped by the rule: the lower end of its interval lies above
    // the leader's upper end (the least upper end among the screens, before confirmation), and
    // it is rightly dropped: its exact time is no better than the first's and lies within its
    // interval of ±SCREEN_MARGIN.
    let first = num(&default[0], "predicted_s");
    for s in &screened {
        let (t, lo, hi) = (
            num(s, "predicted_s"),
            num(s, "predicted_lo_s"),
            num(s, "predicted_hi_s"),
        );
        assert_eq!(lo, t / (1.0 + SCREEN_MARGIN));
        assert_eq!(hi, t * (1.0 + SCREEN_MARGIN));
        assert!(lo > first, "{}: {lo} below the first's {first}", block(s));
        let e = num(exact_of(&block(s)), "predicted_s");
        assert!(e >= first, "{}", block(s));
        assert!(
            lo <= e && e <= hi,
            "{}: exact {e} outside [{lo}, {hi}]",
            block(s)
        );
    }
}

#[test]
fn launches_too_short_to_screen_are_ranked_exactly() {
    let args = |extra: &'static str| {
        let mut a = vec![
            "rank",
            "--kernel",
            "star1",
            "--hw",
            "h200",
            "--domain",
            "64x64x32",
            "--blocks",
            "32x4x2,8x8x4",
            "--format",
            "csv",
        ];
        if !extra.is_empty() {
            a.push(extra);
        }
        a
    };
    let (code, default, err) = gputraffic(&args(""));
    assert_eq!(code, 0, "{err}");
    let (code, exact, _) = gputraffic(&args("--exact"));
    assert_eq!(code, 0);
    assert_eq!(default, exact);
    assert!(!err.contains("note:"), "{err}");
    assert!(
        default.lines().nth(1).unwrap().contains(",exact,"),
        "{default}"
    );
}

#[test]
fn the_table_marks_each_shape_and_gives_screened_intervals() {
    let (code, out, err) = gputraffic(&[
        "rank",
        "--kernel",
        "star4",
        "--hw",
        HW,
        "--domain",
        "128x128x256",
        "--blocks",
        SHAPES,
    ]);
    assert_eq!(code, 0, "{err}");
    // The context line, the column names, 8 shapes, the legend of the terms and of the ties.
    assert!(out.starts_with("kernel star4 on sampling-small, domain 128x128x256, clock 1.38 GHz"));
    let header = out.lines().nth(1).unwrap();
    assert!(
        header.contains("simulated") && header.contains("interval us"),
        "{out}"
    );
    let rows: Vec<&str> = out.lines().skip(2).take(8).collect();
    assert_eq!(out.lines().count(), 2 + 8 + 2, "{out}");
    assert!(rows[0].split_whitespace().nth(2) == Some(EXACT), "{out}");
    for row in rows.iter().filter(|r| r.contains(SCREENED)) {
        // `lo–hi` in microseconds, around the estimate.
        let f: Vec<&str> = row.split_whitespace().collect();
        let t: f64 = f[3].parse().unwrap();
        let (lo, hi) = f[4].split_once('–').unwrap();
        let (lo, hi): (f64, f64) = (lo.parse().unwrap(), hi.parse().unwrap());
        assert!(lo < t && t < hi, "{row}");
    }
}

#[test]
fn exact_and_sample_together_are_refused() {
    rejects(
        &[
            "rank", "--kernel", "star1", "--blocks", "32x4x2", "--exact", "--sample",
        ],
        &["--exact", "--sample", "give one"],
    );
}

#[test]
fn a_screening_plan_counts_the_head_and_the_waves_right_after_it() {
    use gputraffic::sim::sample::{SampleOptions, WaveMode, WavePlan};
    let k = gputraffic::input::trace::load("star4").unwrap();
    let hw = gputraffic::input::hw::HwConfig::load(HW).unwrap();
    let req = gputraffic::launch::LaunchRequest {
        block: Some([32, 8, 4]),
        domain: Some([128, 128, 256]),
        set: vec![],
    };
    let b = gputraffic::Bound::with_hw(k, hw, &req).unwrap();
    let plan = WavePlan::plan(&b.launch, &b.hw, &SampleOptions::screening()).unwrap();
    // 4096 blocks of 2 per SM on 8 SMs: 256 waves; the L2 (512 KB) turns over in 2 waves of
    // star4's 78 MB (305 KB a wave), so the head is 2 + 1 waves after the first label the
    // scheduler sees (1); then two strata of two counted waves; no tail.
    assert_eq!(plan.blocks_per_wave, 16);
    assert_eq!(plan.modes.len(), 257);
    assert_eq!(plan.interior, (4, 257));
    let counted: Vec<u64> = (0..257)
        .filter(|&l| plan.mode(l) == WaveMode::Count)
        .collect();
    assert_eq!(counted, (0..8).collect::<Vec<u64>>());
    assert!(!plan.modes.contains(&WaveMode::Warm));
    assert_eq!(
        plan.strata,
        vec![((4, 130), vec![4, 5]), ((130, 257), vec![6, 7])]
    );
    // Twice the detailed waves of the sampled plan would be too many.
    let sampled = WavePlan::plan(&b.launch, &b.hw, &SampleOptions::default()).unwrap();
    assert!(sampled.detailed() > 2 * plan.detailed());
}

#[test]
fn a_lone_shape_is_simulated_exactly_without_a_race() {
    let args = [
        "rank",
        "--kernel",
        "star4",
        "--hw",
        HW,
        "--domain",
        "128x128x256",
        "--blocks",
        "32x8x4",
        "--format",
        "csv",
    ];
    let (code, default, err) = gputraffic(&args);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("note:"), "{err}");
    let (code, exact, _) = gputraffic(&[&args[..], &["--exact"]].concat());
    assert_eq!(code, 0);
    assert_eq!(default, exact);
    assert!(
        default
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("1,32,8,4,exact,"),
        "{default}"
    );
}
