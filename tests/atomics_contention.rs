//! Atomics that crowd into few L2 slices, against the H200's times (`validation/atomics_contention.cu`,
//! counters in tests/data/h200/atomics_contention/) and the H100's histogram
//! (tests/data/h100/new_kernels/): each slice applies its atomics one after another
//! (`[atomics]`, the time model's `atomic` limiter), so 2^24 updates of a few bins take
//! milliseconds where their bytes take microseconds. Before the limiter the time model put these
//! launches 90–99.7 % short.

use gputraffic::Bound;
use gputraffic::analysis::measured;
use gputraffic::input::trace::Kernel;
use gputraffic::launch::LaunchRequest;
use gputraffic::metrics;
use gputraffic::sim::SimOptions;
use gputraffic::timing::TimeEstimate;
use std::path::Path;

mod common;

/// `validation/atomics_contention.cu`'s kernels: 2^22 threads, 4 updates each at j = i + r * 2^22,
/// on bins[f(j) % nbins]; `PATTERN` is f, `BYTES` the bins' element size.
const PROBE: &str = r#"
name = "atomics_contention"
params = { nbins = 256 }
[[arrays]]
name = "bins"
element_bytes = BYTES
dims = ["nbins"]
[launch]
block = [256, 1, 1]
grid = ["cdiv(4194304, blockDim.x)", "1", "1"]
[thread]
let = ["i = blockIdx.x * blockDim.x + threadIdx.x"]
lattice_updates = "16777216"
body = [
  { loop = "r", count = "4", let = ["j = i + r * 4194304"], body = [
    { atomic = "bins", index = "(PATTERN) % nbins" },
  ] },
]
"#;

/// The probe's trace for one line of its launches file (`None`: a kernel the trace language
/// cannot say: `rand`'s hash, `lanes_w`'s ATOM, whose result the kernel uses).
fn probe(kernel: &str) -> Option<String> {
    let (pattern, bytes, float) = match kernel {
        "lanes" => ("j", 4, false),
        "lanes_f32" => ("j", 4, true),
        "lanes_f64" => ("j", 8, true),
        "bins7" => ("7 * j", 4, false),
        "warp" => ("j / 32", 4, false),
        _ => return None,
    };
    let text = PROBE
        .replace("PATTERN", pattern)
        .replace("BYTES", &bytes.to_string());
    Some(if float {
        text.replace("% nbins\" }", "% nbins\", float = true }")
    } else {
        text
    })
}

/// The time model's estimate of `kernel` launched as `req` on `hw`, simulated exactly.
fn estimate(kernel: Kernel, hw: &str, req: &LaunchRequest) -> TimeEstimate {
    let b = Bound::new(kernel, hw, req).unwrap();
    b.simulate(&SimOptions::default(), None)
        .unwrap()
        .time
        .unwrap()
}

/// n threads in 256-thread blocks running `body` (`i` their index) over floats `a` (n of them)
/// and one word `sum`.
fn one_word_trace(n: u64, body: &str) -> Kernel {
    let text = format!(
        r#"
name = "one_word"
params = {{ n = {n} }}
[[arrays]]
name = "a"
element_bytes = 4
dims = ["n"]
[[arrays]]
name = "sum"
element_bytes = 4
dims = ["1"]
[launch]
block = [256, 1, 1]
grid = ["cdiv(n, blockDim.x)", "1", "1"]
[thread]
let = ["i = blockIdx.x * blockDim.x + threadIdx.x"]
guard = "i < n"
lattice_updates = "n"
body = [{body}]
"#
    );
    Kernel::parse(&text, "one_word.toml").unwrap()
}

/// Predicted time and limiter of the probe's launch `line`.
fn predict(line: &[String]) -> Option<(f64, String)> {
    let kernel = Kernel::parse(&probe(&line[0])?, "atomics_contention.toml").unwrap();
    let req = LaunchRequest {
        block: Some([line[2].parse().unwrap(), 1, 1]),
        set: [("nbins".to_string(), line[1].parse().unwrap())].into(),
        ..Default::default()
    };
    let t = estimate(kernel, "h200", &req);
    Some((t.predicted_s, t.limiter.to_string()))
}

#[test]
fn atomics_on_a_few_slices_take_the_time_the_busiest_slice_needs() {
    let dir = "tests/data/h200/atomics_contention";
    let m = measured::ncu_counters(Path::new(&format!("{dir}/ncu.csv"))).unwrap();
    let lines = common::launch_lines(&format!("{dir}/launches.txt"));
    assert_eq!(lines.len(), m.len());
    let mut checked = 0;
    for (line, measured) in lines.iter().zip(&m) {
        let nbins: u64 = line[1].parse().unwrap();
        let bytes = if line[0] == "lanes_f64" { 8 } else { 4 };
        // Bins on at most 8 KiB: a few slices do all the work (the measured time at least 4x
        // what the same updates take spread over every slice).
        if nbins * bytes > 8192 {
            continue;
        }
        let Some((predicted, limiter)) = predict(line) else {
            continue;
        };
        let time = measured[metrics::DURATION] * 1e-9;
        let err = predicted / time - 1.0;
        assert_eq!(limiter, "atomic", "{line:?}");
        // Every lane on one line or one word: within 8 %; the histogram's pattern (a warp on
        // 7 lines, 4.6 words a request) 14 % short.
        let tolerance = if line[0] == "bins7" { 0.16 } else { 0.08 };
        assert!(err.abs() < tolerance, "{line:?}: {err:+.3}");
        checked += 1;
    }
    assert_eq!(checked, 19);
}

#[test]
fn atomics_spread_over_every_slice_go_at_the_pace_the_sms_send_them() {
    // 2^20 words: the two launches `[atomics] sm_request_cycles` and `sm_sector_cycles` are
    // solved from (every lane on one word: 2^24 one-sector requests; the histogram's 7 j: 3.67 M
    // requests of 4 sectors). 2^16 words: not solved on; the slices' work is then a half to
    // four fifths of the SMs' and the two overlap less than the queueing model has it (the warp
    // pattern 19 % short, 60 % before the SMs' side was charged).
    let dir = "tests/data/h200/atomics_contention";
    let m = measured::ncu_counters(Path::new(&format!("{dir}/ncu.csv"))).unwrap();
    let lines = common::launch_lines(&format!("{dir}/launches.txt"));
    let mut checked = 0;
    for (line, measured) in lines.iter().zip(&m) {
        let nbins: u64 = line[1].parse().unwrap();
        if !matches!(line[0].as_str(), "warp" | "bins7") || nbins < 65536 {
            continue;
        }
        let (predicted, limiter) = predict(line).unwrap();
        let err = predicted / (measured[metrics::DURATION] * 1e-9) - 1.0;
        assert_eq!(limiter, "atomic_sm", "{line:?}");
        let tolerance = match (line[0].as_str(), nbins) {
            (_, 1048576) => 0.02,
            ("bins7", _) => 0.08,
            _ => 0.21,
        };
        assert!(err.abs() < tolerance, "{line:?}: {err:+.3}");
        checked += 1;
    }
    assert_eq!(checked, 4);
}

#[test]
fn the_h100s_histogram_of_few_bins_is_predicted_within_15_percent() {
    // tests/data/h100/new_kernels: launch 20 is histogram n = 2^24, 256 bins, 256-thread blocks
    // (5.05 ms), 23 the same into one bin (12.3 ms); the shipped trace is that kernel.
    let m = measured::ncu_counters(Path::new("tests/data/h100/new_kernels/ncu.csv")).unwrap();
    let lines = common::launch_lines("tests/data/h100/new_kernels/launches.txt");
    let kernel = gputraffic::input::trace::load("histogram").unwrap();
    let mut checked = 0;
    for (line, measured) in lines.iter().zip(&m) {
        if line[0] != "histogram" || line[2] == "65536" {
            continue;
        }
        let req = LaunchRequest {
            block: Some([line[4].parse().unwrap(), 1, 1]),
            set: [
                ("n".to_string(), line[1].parse().unwrap()),
                ("nbins".to_string(), line[2].parse().unwrap()),
            ]
            .into(),
            ..Default::default()
        };
        let t = estimate(kernel.clone(), "h100-sxm", &req);
        let err = t.predicted_s / (measured[metrics::DURATION] * 1e-9) - 1.0;
        assert_eq!(t.limiter, "atomic", "{line:?}");
        assert!(err.abs() < 0.15, "{line:?}: {err:+.3}");
        checked += 1;
    }
    assert_eq!(checked, 4);
}

#[test]
fn an_aggregated_atomic_sends_one_update_per_address_and_only_atomics_take_the_mark() {
    // The warp pattern on one bin: every lane on one word. Aggregated (what ptxas makes of a
    // warp-uniform address and operand), one update per warp; else 32.
    let text = probe("warp").unwrap();
    let aggregated = text.replace("% nbins\" }", "% nbins\", aggregated = true }");
    assert_ne!(aggregated, text);
    let run = |t: &str, nbins: i64| {
        let kernel = Kernel::parse(t, "atomics_contention.toml").unwrap();
        let req = LaunchRequest {
            set: [("nbins".to_string(), nbins)].into(),
            ..Default::default()
        };
        let b = Bound::new(kernel, "h200", &req).unwrap();
        gputraffic::sim::simulate(&b.launch, &b.hw, &SimOptions::default()).unwrap()
    };
    let (one, every) = (run(&aggregated, 1), run(&text, 1));
    // 2^22 threads, 4 updates each: 2^19 warp instructions
    assert_eq!(one.l2.atomic_requests, 1 << 19);
    assert_eq!(every.l2.atomic_requests, 1 << 24);
    assert_eq!(one.l1.data_passes, 1 << 19);
    // lanes on different words stay apart: `lanes` on 256 bins aggregated changes nothing
    let lanes = probe("lanes").unwrap();
    let marked = lanes.replace("% nbins\" }", "% nbins\", aggregated = true }");
    assert_eq!(run(&marked, 256).l2, run(&lanes, 256).l2);
    let err = Kernel::parse(
        &text.replace(
            "{ atomic = \"bins\", index = \"(j / 32) % nbins\" }",
            "{ load = \"bins\", index = \"j\", aggregated = true }",
        ),
        "t.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains(
            "aggregated marks an atomic (the warp's lanes on one address make one update)"
        ),
        "{err}"
    );
}

#[test]
fn the_h100s_warp_aggregated_updates_of_one_word_take_the_time_measured() {
    // tests/data/h100/micro/atomics/summary.md, ID 1: red_same, 2^22 threads in 256-thread
    // blocks adding 1 to one word (`atomicAdd(&a[0], 1)`, which ptxas aggregates: one RED per
    // warp); the time is the row's last cell, in ns.
    let summary = std::fs::read_to_string("tests/data/h100/micro/atomics/summary.md").unwrap();
    let row = summary
        .lines()
        .find(|l| l.starts_with("| 1 | red_same 4194304 256 |"))
        .unwrap();
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    let measured_s = cells[cells.len() - 2].parse::<f64>().unwrap() * 1e-9;
    let predict = |mark: &str| {
        let body = format!(r#"{{ atomic = "sum", index = "0"{mark} }}"#);
        let t = estimate(
            one_word_trace(1 << 22, &body),
            "h100-sxm",
            &LaunchRequest::default(),
        );
        (t.predicted_s, t.limiter.to_string())
    };
    let (same, limiter) = predict(", aggregated = true");
    let err = same / measured_s - 1.0;
    assert_eq!(limiter, "atomic");
    assert!(err.abs() < 0.05, "red_same {err:+.3}");
    // not aggregated, the same word would take 32 times as long
    let (per_lane, _) = predict("");
    assert!(per_lane > 30.0 * same);
}

#[test]
fn one_word_takes_an_int_count_per_warp_and_a_float_sum_per_lane_at_the_h200s_pace() {
    // tests/data/h200/predicated (validation/predicated_probe.cu): 2^16 blocks of 256 threads;
    // ID 8 k_count_all, `atomicAdd(count, 1)`, aggregated by ptxas (392 us); ID 9 k_sum_all,
    // `atomicAdd(sum, a[i])` of floats, a RED.F32 per lane (30.0 ms).
    let m = measured::ncu_counters(Path::new("tests/data/h200/predicated/ncu.csv")).unwrap();
    let predict = |body: &str| {
        estimate(
            one_word_trace(1 << 24, body),
            "h200",
            &LaunchRequest::default(),
        )
        .predicted_s
    };
    let count = predict(r#"{ atomic = "sum", index = "0", aggregated = true }"#);
    let sum =
        predict(r#"{ load = "a", index = "i" }, { atomic = "sum", index = "0", float = true }"#);
    let err = |p: f64, id: usize| p / (m[id][metrics::DURATION] * 1e-9) - 1.0;
    assert!(
        err(count, 8).abs() < 0.05,
        "count_all {:+.3}",
        err(count, 8)
    );
    assert!(err(sum, 9).abs() < 0.05, "sum_all {:+.3}", err(sum, 9));
}
