//! The screen's error against the exact simulation for heads of several lengths: by default over
//! the H200 dev set (star1, star4 and copy, whose exact predicted times
//! docs/data/validation-h200.json holds) and the box27 shapes of validation/launches.txt
//! (simulated exactly here), or over the shipped-trace launches of the `validate` reports given
//! with `--report` (their exact predicted times read from them; `--hw` names their GPU): how short
//! `rank`'s screen head can be while every screen stays within `SCREEN_MARGIN`
//! (docs/performance.md). Per launch and head, the screened time's error in percent; then per
//! head the largest error and the screens' total seconds.
//!
//! Usage: `cargo run --release --example screen_head -- [--only SUBSTRING]
//! [--report REPORT.json]... [--hw GPU] PERCENT|pre...` (heads in percent of the L2's turnover,
//! [`SampleOptions::screen_head_percent`]; `pre`: `rank`'s pre-screen instead,
//! [`time_bound::pre_screen`], which must not lie above the exact time by more than
//! `PRE_SCREEN_MARGIN`).

use gputraffic::Bound;
use gputraffic::analysis::{rank, time_bound};
use gputraffic::input::hw::HwConfig;
use gputraffic::input::trace;
use gputraffic::launch::LaunchRequest;
use gputraffic::sim::SimOptions;
use gputraffic::sim::sample::SampleOptions;
use std::time::Instant;

/// One launch: its label, kernel, domain (`None`: the kernel's own), the parameters it sets, its
/// block and exact predicted time (`None`: simulate it).
struct Launch {
    label: String,
    kernel: String,
    domain: Option<[i64; 3]>,
    set: Vec<(String, i64)>,
    block: [u32; 3],
    exact_s: Option<f64>,
}

/// The launches of a `validate` report of shipped traces (lifted kernels, named `file:entry`,
/// are left out), with their exact predicted times; the parameters a launch sets are read off
/// its label (`name=value`).
fn report_launches(path: &str) -> Vec<Launch> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    v["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .filter(|r| !r["kernel"].as_str().unwrap().contains(':'))
        .map(|r| {
            let label = r["launch"].as_str().unwrap().to_string();
            let set = label
                .split_whitespace()
                .filter_map(|t| t.split_once('='))
                .map(|(k, x)| (k.to_string(), x.parse().expect("an integer parameter")))
                .collect();
            let d = &r["domain"];
            let b = &r["block"];
            Launch {
                label,
                kernel: r["kernel"].as_str().unwrap().to_string(),
                domain: (!d.is_null()).then(|| [0, 1, 2].map(|i| d[i].as_i64().unwrap())),
                set,
                block: [0, 1, 2].map(|i| b[i].as_u64().unwrap() as u32),
                exact_s: r["time"]["predicted_s"].as_f64(),
            }
        })
        .collect()
}

/// The default launches: the H200 dev set's and the box27 shapes of validation/launches.txt.
fn launches() -> Vec<Launch> {
    let mut out = report_launches("docs/data/validation-h200.json");
    let path = "validation/launches.txt";
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    for line in text.lines().filter(|l| l.starts_with("box27 ")) {
        let f: Vec<i64> = line
            .split_whitespace()
            .skip(1)
            .map(|x| x.parse().unwrap())
            .collect();
        out.push(Launch {
            label: format!(
                "box27 {}x{}x{} {}x{}x{}",
                f[0], f[1], f[2], f[3], f[4], f[5]
            ),
            kernel: "box27".into(),
            domain: Some([f[0], f[1], f[2]]),
            set: Vec::new(),
            block: [f[3] as u32, f[4] as u32, f[5] as u32],
            exact_s: None,
        });
    }
    out
}

fn main() {
    let mut only = None;
    // A head in percent, or `None` for the pre-screen.
    let mut heads: Vec<Option<u32>> = Vec::new();
    let mut reports: Vec<String> = Vec::new();
    let mut gpu = "h200".to_string();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--only" => only = args.next(),
            "--report" => reports.push(args.next().expect("a report")),
            "--hw" => gpu = args.next().expect("a GPU"),
            "pre" => heads.push(None),
            _ => heads.push(Some(a.parse().expect("a head in percent, or pre"))),
        }
    }
    assert!(
        !heads.is_empty(),
        "usage: screen_head [--only SUBSTRING] [--report REPORT.json]... [--hw GPU] PERCENT|pre..."
    );
    let hw = HwConfig::load(&gpu).unwrap();
    let all = if reports.is_empty() {
        launches()
    } else {
        reports.iter().flat_map(|r| report_launches(r)).collect()
    };
    let opts = SimOptions {
        compulsory: false,
        exceed_memory: true,
        ..SimOptions::default()
    };
    print!("{:<44} {:>11}", "launch", "exact us");
    let name = |h: &Option<u32>| h.map_or("pre".to_string(), |h| format!("{h}%"));
    for h in &heads {
        print!(" {:>8}", name(h));
    }
    println!();
    let mut worst = vec![0f64; heads.len()];
    let mut highest = vec![f64::NEG_INFINITY; heads.len()];
    let mut seconds = vec![0f64; heads.len()];
    let mut screened = 0;
    for l in all {
        if only.as_ref().is_some_and(|o| !l.label.contains(o.as_str())) {
            continue;
        }
        let kernel = trace::load(&l.kernel).unwrap();
        let req = LaunchRequest {
            block: Some(l.block),
            domain: l.domain,
            set: l.set.clone(),
        };
        let b = Bound::with_hw(kernel, hw.clone(), &req).unwrap();
        let exact = l.exact_s.unwrap_or_else(|| {
            let r = b.simulate(&opts, None).unwrap();
            r.time.unwrap().predicted_s
        });
        print!("{:<44} {:>11.3}", l.label, exact * 1e6);
        for (i, &h) in heads.iter().enumerate() {
            let start = Instant::now();
            let r = match h {
                Some(h) => {
                    let sample = SampleOptions {
                        screen_head_percent: h,
                        ..SampleOptions::screening()
                    };
                    let r = b
                        .simulate(
                            &SimOptions {
                                sample: Some(sample),
                                ..opts
                            },
                            None,
                        )
                        .unwrap();
                    r.sample.is_some().then_some(r)
                }
                None => time_bound::pre_screen(&b, &opts, None, None).unwrap(),
            };
            seconds[i] += start.elapsed().as_secs_f64();
            let Some(r) = r else {
                print!(" {:>8}", "-");
                continue;
            };
            let e = (r.time.unwrap().predicted_s / exact - 1.0) * 100.0;
            worst[i] = worst[i].max(e.abs());
            highest[i] = highest[i].max(e);
            print!(" {e:>+8.3}");
        }
        screened += 1;
        println!();
    }
    println!("{screened} launches; per head: largest |error| %, largest error %, seconds");
    for (i, h) in heads.iter().enumerate() {
        println!(
            "{:>4}: largest |error| {:.3}%, largest {:+.3}% (margin {:.1}%), {:.1} s",
            name(h),
            worst[i],
            highest[i],
            h.map_or(rank::PRE_SCREEN_MARGIN, |_| rank::SCREEN_MARGIN) * 100.0,
            seconds[i]
        );
    }
}
