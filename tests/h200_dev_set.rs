//! The simulator against real Nsight Compute counters of 77 stencil launches on an H200
//! (tests/data/h200_dev_set.csv, copied from shared/measurements/h200/dev_set.csv).
//!
//! Coalescing alone sets load requests, load sectors, store sectors and L2 write sectors, so those
//! must match exactly; L2 read sectors and DRAM read sectors depend on the cache models and must
//! be within 10% at the median. Every star1 and copy row is simulated; the star4 rows (each a
//! 4.4·10⁹-access kernel) are simulated when GPUTRAFFIC_FULL_VALIDATION=1, otherwise a fixed
//! spread of 6 shapes.

use gputraffic::launch::LaunchRequest;
use gputraffic::report::metric;
use gputraffic::sim::SimOptions;
use std::collections::HashMap;

struct Row {
    kernel: String,
    domain: [i64; 3],
    block: [u32; 3],
    measured: HashMap<String, f64>,
}

fn rows() -> Vec<Row> {
    let mut r = csv::Reader::from_path("tests/data/h200_dev_set.csv").expect("dev set present");
    let headers = r.headers().unwrap().clone();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            let get = |name: &str| {
                rec.get(headers.iter().position(|h| h == name).unwrap())
                    .unwrap()
            };
            let num = |name: &str| get(name).parse::<f64>().unwrap();
            let measured = headers
                .iter()
                .zip(rec.iter())
                .filter_map(|(h, v)| v.parse::<f64>().ok().map(|v| (h.to_string(), v)))
                .collect();
            Row {
                kernel: get("kernel").to_string(),
                domain: [num("nx") as i64, num("ny") as i64, num("nz") as i64],
                block: [num("bx") as u32, num("by") as u32, num("bz") as u32],
                measured,
            }
        })
        .collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

const EXACT: [&str; 4] = [
    metric::L1_LD_REQUESTS,
    metric::L1_LD_SECTORS,
    metric::L1_ST_SECTORS,
    metric::L2_WRITE,
];
const MODELLED: [&str; 2] = [metric::L2_READ, metric::DRAM_READ];

#[test]
fn simulated_counts_match_the_h200_counters() {
    let full = std::env::var("GPUTRAFFIC_FULL_VALIDATION").is_ok_and(|v| v == "1");
    let star4_sample = [
        [32, 8, 4],
        [1024, 1, 1],
        [16, 16, 4],
        [32, 1, 32],
        [8, 128, 1],
        [64, 4, 1],
    ];
    let rows: Vec<Row> = rows()
        .into_iter()
        .filter(|r| r.kernel != "star4" || full || star4_sample.contains(&r.block))
        .collect();
    assert!(rows.len() >= 41 + 6, "{} rows", rows.len());
    let mut errors: HashMap<&str, Vec<f64>> = HashMap::new();
    let mut lines = Vec::new();
    let mut by_kernel: HashMap<(String, &str), Vec<f64>> = HashMap::new();
    for r in &rows {
        let req = LaunchRequest {
            block: Some(r.block),
            domain: Some(r.domain),
            set: vec![],
        };
        let opts = SimOptions {
            compulsory: false,
            ..SimOptions::default()
        };
        let rep = gputraffic::run(&r.kernel, "h200", &req, &opts).unwrap();
        for m in EXACT {
            let sim = rep.metric(m).unwrap() as f64;
            let measured = r.measured[m];
            let at = format!("{m} of {} {:?} {:?}", r.kernel, r.domain, r.block);
            // One launch (copy 1×16×16) shows 224 fewer L2 write sectors than its own L1 store
            // sectors (16,776,992 of 16,777,216): the counters disagree with each other there, and
            // the simulator, whose L2 sees every store sector, can only match to 0.002%.
            let self_inconsistent =
                m == metric::L2_WRITE && measured != r.measured[metric::L1_ST_SECTORS];
            if self_inconsistent {
                assert!(
                    (sim - measured).abs() / measured < 1e-4,
                    "{at}: {sim} vs {measured}"
                );
            } else {
                assert_eq!(sim, measured, "{at}");
            }
        }
        let mut line = format!("{} {:?}", r.kernel, r.block);
        for m in MODELLED {
            let sim = rep.metric(m).unwrap() as f64;
            let err = (sim - r.measured[m]) / r.measured[m];
            errors.entry(m).or_default().push(err.abs());
            by_kernel
                .entry((r.kernel.clone(), m))
                .or_default()
                .push(err.abs());
            line += &format!("  {m} {sim} vs {} ({:+.1}%)", r.measured[m], 100.0 * err);
        }
        eprintln!("{line}");
        lines.push(line);
    }
    for m in MODELLED {
        let e = &errors[m];
        let med = median(e.clone());
        let worst = e.iter().cloned().fold(0.0, f64::max);
        eprintln!(
            "{m}: median |error| {:.1}%, worst {:.1}% over {} rows",
            100.0 * med,
            100.0 * worst,
            e.len()
        );
        assert!(med <= 0.10, "{m}: median relative error {med}");
    }
    let mut keys: Vec<_> = by_kernel.keys().cloned().collect();
    keys.sort();
    for k in keys {
        let e = &by_kernel[&k];
        let worst = e.iter().cloned().fold(0.0, f64::max);
        eprintln!(
            "{} {}: median {:.1}%, worst {:.1}% ({} rows)",
            k.0,
            k.1,
            100.0 * median(e.clone()),
            100.0 * worst,
            e.len()
        );
    }
}
