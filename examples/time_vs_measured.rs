//! Predicted kernel time (the time model on simulated volumes, at the base clock Nsight Compute
//! measures at) against the measured `gpu__time_duration.sum` of the H200 dev set.
//!
//! `cargo run --release --example time_vs_measured -- [--model NAME] [KERNEL...] > rows.csv`
//! simulates every dev-set row of the given kernels (default star4) — or, with `--model`, evaluates
//! that closed-form model instead — prints one CSV row per launch as it finishes, and ends with
//! Spearman's rank correlation and the median predicted/measured ratio per kernel on stderr. Each
//! star4 simulation takes about half a minute on two cores; a model takes under a second.

use gputraffic::Bound;
use gputraffic::analysis::stats;
use gputraffic::launch::LaunchRequest;
use gputraffic::sim::SimOptions;
use std::collections::BTreeMap;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut wanted: Vec<String> = std::env::args().skip(1).collect();
    let model = match wanted.iter().position(|a| a == "--model") {
        Some(i) if i + 1 < wanted.len() => {
            let name = wanted.remove(i + 1);
            wanted.remove(i);
            Some(gputraffic::models::find(&name)?)
        }
        Some(_) => return Err("--model needs a model name".into()),
        None => None,
    };
    let wanted = if wanted.is_empty() {
        vec!["star4".to_string()]
    } else {
        wanted
    };
    let mut r = csv::Reader::from_path("tests/data/h200_dev_set.csv")?;
    let headers = r.headers()?.clone();
    let col = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .expect("dev-set column")
    };
    let (ck, cb, cn, ct) = (
        col("kernel"),
        col("bx"),
        col("nx"),
        col("gpu__time_duration.sum"),
    );
    println!(
        "kernel,bx,by,bz,measured_us,predicted_us,ratio,limiter,dram_us,l2_us,l1_us,fp_us,time_adjusted_us"
    );
    let mut per_kernel: BTreeMap<String, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for rec in r.records() {
        let rec = rec?;
        let kernel = rec[ck].to_string();
        if !wanted.contains(&kernel) {
            continue;
        }
        let num = |i: usize| rec[i].parse::<f64>();
        let block = [num(cb)? as u32, num(cb + 1)? as u32, num(cb + 2)? as u32];
        let domain = [num(cn)? as i64, num(cn + 1)? as i64, num(cn + 2)? as i64];
        let measured = num(ct)? * 1e-9;
        let req = LaunchRequest {
            block: Some(block),
            domain: Some(domain),
            set: vec![],
        };
        let bound = Bound::new(gputraffic::input::trace::load(&kernel)?, "h200", &req)?;
        let clock = bound.hw.sm.base_clock_ghz;
        let t = match model {
            Some(m) => bound.predict(m, &BTreeMap::new(), clock)?.1,
            None => {
                let report = bound.simulate(&SimOptions::default(), clock)?;
                report.time.expect("simulate adds the time model")
            }
        };
        let part = |n: &str| {
            t.limiters
                .iter()
                .find(|l| l.name == n)
                .map_or(String::new(), |l| format!("{:.3}", l.seconds * 1e6))
        };
        println!(
            "{kernel},{},{},{},{:.3},{:.3},{:.4},{},{},{},{},{},{:.3}",
            block[0],
            block[1],
            block[2],
            measured * 1e6,
            t.predicted_s * 1e6,
            t.predicted_s / measured,
            t.limiter,
            part("dram"),
            part("l2"),
            part("l1"),
            part("fp"),
            t.time_adjusted_s * 1e6
        );
        let e = per_kernel.entry(kernel).or_default();
        e.0.push(t.predicted_s);
        e.1.push(measured);
    }
    for (k, (pred, meas)) in &per_kernel {
        let ratios: Vec<f64> = pred.iter().zip(meas).map(|(p, m)| p / m).collect();
        eprintln!(
            "{k}: n = {}, Spearman(predicted, measured) = {:.3}, median predicted/measured = {:.3}",
            pred.len(),
            stats::spearman(pred, meas).unwrap_or(f64::NAN),
            stats::median(&ratios).unwrap_or(f64::NAN)
        );
    }
    Ok(())
}
