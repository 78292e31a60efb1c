//! Accuracy, honesty and speed of sampled simulation (`--sample`) against exact simulation, over
//! launch lists in the form of `validation/launches*.txt` (`kernel nx ny nz bx by bz [cz]`). Each
//! launch is simulated exactly and then sampled once per budget asked for; per run it prints the
//! waves (in the launch, in detail, counted), both wall times, the errors of the L1 misses, L2
//! reads, DRAM reads and writes against the exact counts, and how many of the counters with an
//! Nsight Compute metric hold the exact value inside their 95% interval; then, per budget, the
//! medians and largest errors, the share inside, and the summed exact and sampled times. Launches
//! too short to sample are listed and left out of the summary. Run through
//! `benches/sample_study.sh` (docs/performance.md).
//!
//! `--join off,on` runs each budget with the strata at the ends drawn (`off`) and joined to the
//! exact waves beside them (`on`, [`sample::SampleOptions::join_ends`]; marked `j`). `--chunk
//! T[,T...]` runs each plan with chunks of at most T ticks (up to [`sim::SAMPLED_CHUNK_TICKS`],
//! the default; marked `/T` where shorter): the sampled results depend on it.
//!
//! Usage: `sample_study [--threads N] [--budget P[,P...]] [--join off|on|off,on] [--chunk T[,T...]] [--only SUBSTRING] HW:FILE...`

#[path = "common/launch_list.rs"]
mod launch_list;

use gputraffic::analysis::stats::median;
use gputraffic::metrics::{COUNTERS, Sampling};
use gputraffic::request::{KernelSource, LaunchSpec, on_threads};
use gputraffic::sim::{self, sample};
use std::time::Instant;

/// The sampler's fields that have a metric: (place in [`sample::FIELDS`], metric).
fn metric_fields() -> Vec<(usize, &'static str)> {
    COUNTERS
        .iter()
        .filter(|c| !matches!(c.sampling, Sampling::Derived))
        .enumerate()
        .filter_map(|(i, c)| c.metric.map(|m| (i, m)))
        .collect()
}

/// Per budget: the errors of the four shown counters (percent), inside / counted intervals,
/// summed exact and sampled seconds.
#[derive(Default)]
struct Summary {
    errors: [Vec<f64>; 4],
    inside: usize,
    intervals: usize,
    exact_s: f64,
    sampled_s: f64,
    launches: usize,
}

/// The comma-separated whole numbers of an option's value (`usage` if it has none, `what` if one
/// is not a number).
fn numbers(value: Option<String>, usage: &str, what: &str) -> Vec<u32> {
    (value.expect(usage).split(','))
        .map(|n| n.parse().expect(what))
        .collect()
}

fn main() {
    let mut threads = None;
    let mut only = None;
    let mut budgets = vec![sample::SampleOptions::default().budget_percent];
    let mut joins = vec![sample::SampleOptions::default().join_ends];
    let mut chunks = vec![sim::SAMPLED_CHUNK_TICKS];
    let mut lists = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--threads" => threads = args.next().and_then(|v| v.parse().ok()),
            "--only" => only = args.next(),
            "--budget" => {
                budgets = numbers(
                    args.next(),
                    "--budget P[,P...]",
                    "a budget is a whole percent",
                )
            }
            "--chunk" => {
                chunks = numbers(
                    args.next(),
                    "--chunk T[,T...]",
                    "a chunk is a whole number of ticks",
                );
                assert!(
                    chunks.iter().all(|&t| t <= sim::SAMPLED_CHUNK_TICKS),
                    "a sampled run's chunks are at most {} ticks",
                    sim::SAMPLED_CHUNK_TICKS
                );
            }
            "--join" => {
                joins = args
                    .next()
                    .expect("--join off|on|off,on")
                    .split(',')
                    .map(|j| match j {
                        "off" => false,
                        "on" => true,
                        _ => panic!("--join takes off, on or off,on"),
                    })
                    .collect()
            }
            _ => lists.push(a),
        }
    }
    assert!(
        !lists.is_empty(),
        "usage: sample_study [--threads N] [--budget P[,P...]] [--join off|on|off,on] [--chunk T[,T...]] [--only SUBSTRING] HW:FILE..."
    );
    let fields = metric_fields();
    let shown = [
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum",
        "lts__t_sectors_srcunit_tex_op_read.sum",
        "dram__sectors_read.sum",
        "dram__sectors_write.sum",
    ];
    let shown_at: Vec<usize> = shown
        .iter()
        .map(|m| {
            fields
                .iter()
                .find(|(_, f)| f == m)
                .expect("a shown metric")
                .0
        })
        .collect();
    println!(
        "{:<8} {:<12} {:<14} {:<8} {:>7} | {:>5} {:>4} {:>3} | {:>7} {:>7} {:>6} | {:>7} {:>7} {:>7} {:>7} | {:>6}",
        "hw",
        "kernel",
        "domain",
        "block",
        "%",
        "waves",
        "det",
        "cnt",
        "exact s",
        "samp s",
        "ratio",
        "L1miss%",
        "L2rd%",
        "DRrd%",
        "DRwr%",
        "inside"
    );
    // Each plan: a budget, whether the end strata are joined, and the longest chunk.
    let plans: Vec<(u32, bool, u32)> = budgets
        .iter()
        .flat_map(|&b| joins.iter().map(move |&j| (b, j)))
        .flat_map(|(b, j)| chunks.iter().map(move |&t| (b, j, t)))
        .collect();
    let plan_name = |&(budget, join, chunk): &(u32, bool, u32)| {
        format!(
            "{budget}{}{}",
            if join { "j" } else { "" },
            if chunk < sim::SAMPLED_CHUNK_TICKS {
                format!("/{chunk}")
            } else {
                String::new()
            }
        )
    };
    let mut summaries: Vec<Summary> = plans.iter().map(|_| Summary::default()).collect();
    let mut too_short = Vec::new();
    for list in &lists {
        let (hw, path) = list
            .split_once(':')
            .unwrap_or_else(|| panic!("'{list}' is not HW:FILE"));
        for launch_list::Listed {
            hw,
            kernel,
            domain,
            block,
            set,
        } in launch_list::read(hw, path)
        {
            let label = format!("{hw} {kernel} {domain} {block} {}", set.join(" "));
            if only.as_ref().is_some_and(|o| !label.contains(o.as_str())) {
                continue;
            }
            let spec = LaunchSpec {
                kernel: KernelSource::Load(kernel.clone()),
                hw: hw.clone(),
                block: Some(block.clone()),
                domain: Some(domain.clone()),
                set,
                clock: "base".into(),
            };
            let bound = spec
                .prepare(None)
                .unwrap_or_else(|e| panic!("{label}: {e}"))
                .bound;
            let opts = sim::SimOptions::default();
            // Sampled first: a launch too short to sample costs no exact run.
            let mut sampled = Vec::new();
            for &(budget, join_ends, chunk_ticks) in &plans {
                let opts = sim::SimOptions {
                    chunk_ticks,
                    ..opts
                };
                let sampling = sample::SampleOptions {
                    budget_percent: budget,
                    join_ends,
                    ..sample::SampleOptions::default()
                };
                let start = Instant::now();
                let run = on_threads(threads, || {
                    sim::simulate_sampled(&bound.launch, &bound.hw, &opts, &sampling, &|_, _| {})
                })
                .unwrap_or_else(|e| panic!("{label}: {e}"));
                sampled.push((run, start.elapsed().as_secs_f64()));
            }
            if sampled.iter().all(|(r, _)| r.is_none()) {
                too_short.push(label);
                continue;
            }
            let start = Instant::now();
            let exact = on_threads(threads, || sim::simulate(&bound.launch, &bound.hw, &opts))
                .unwrap_or_else(|e| panic!("{label}: {e}"));
            let exact_s = start.elapsed().as_secs_f64();
            let exact = sample::fields(&exact);
            for ((run, secs), (plan, summary)) in
                sampled.iter().zip(plans.iter().zip(&mut summaries))
            {
                let budget = plan_name(plan);
                let Some(run) = run else {
                    println!("{label}: budget {budget}%: too short to sample");
                    continue;
                };
                let (point, lo, hi) = (
                    sample::fields(&run.counts),
                    sample::fields(&run.lo),
                    sample::fields(&run.hi),
                );
                let err = |i: usize| {
                    if exact[i] == 0 {
                        0.0
                    } else {
                        (point[i] as f64 / exact[i] as f64 - 1.0) * 100.0
                    }
                };
                let inside = fields
                    .iter()
                    .filter(|(i, _)| lo[*i] <= exact[*i] && exact[*i] <= hi[*i])
                    .count();
                summary.inside += inside;
                summary.intervals += fields.len();
                summary.exact_s += exact_s;
                summary.sampled_s += secs;
                summary.launches += 1;
                for (k, &i) in shown_at.iter().enumerate() {
                    summary.errors[k].push(err(i).abs());
                }
                println!(
                    "{:<8} {:<12} {:<14} {:<8} {:>7} | {:>5} {:>4} {:>3} | {:>7.2} {:>7.3} {:>6.1} | {:>+7.3} {:>+7.3} {:>+7.3} {:>+7.3} | {:>2}/{:<2}",
                    hw,
                    kernel,
                    domain,
                    block,
                    budget,
                    run.waves,
                    run.waves_simulated,
                    run.waves_counted,
                    exact_s,
                    secs,
                    exact_s / secs,
                    err(shown_at[0]),
                    err(shown_at[1]),
                    err(shown_at[2]),
                    err(shown_at[3]),
                    inside,
                    fields.len()
                );
                for (i, m) in &fields {
                    if exact[*i] < lo[*i] || exact[*i] > hi[*i] {
                        println!(
                            "    {m}: exact {} outside [{}, {}] ({:+.3}%)",
                            exact[*i],
                            lo[*i],
                            hi[*i],
                            err(*i)
                        );
                    }
                }
            }
        }
    }
    for label in &too_short {
        println!("too short to sample: {label}");
    }
    for (plan, s) in plans.iter().zip(&summaries) {
        let budget = plan_name(plan);
        let med_max = |k: usize| {
            format!(
                "{:.3} / {:.3}%",
                median(&s.errors[k]).unwrap_or(f64::NAN),
                s.errors[k].iter().cloned().fold(0f64, f64::max)
            )
        };
        println!(
            "budget {budget}%: {} launches; inside {} of {} ({:.1}%); median / max |error|: L1 misses {}, L2 reads {}, DRAM reads {}, DRAM writes {}; exact {:.1} s, sampled {:.1} s ({:.1}x)",
            s.launches,
            s.inside,
            s.intervals,
            100.0 * s.inside as f64 / s.intervals.max(1) as f64,
            med_max(0),
            med_max(1),
            med_max(2),
            med_max(3),
            s.exact_s,
            s.sampled_s,
            s.exact_s / s.sampled_s
        );
    }
}
