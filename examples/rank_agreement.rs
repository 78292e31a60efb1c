//! Agreement of `rank`'s default (screen, then confirm exactly) with `rank --exact`, over launch
//! lists in the form of `validation/launches*.txt` (`kernel nx ny nz bx by bz [cz]`): the
//! launches of one kernel, domain and `cz` are one group, ranked over their shapes. Per group it
//! prints the exact mode's first shape, the default's, the gap between their exact predicted
//! times, the largest error of a screen against the exact time, how many shapes were confirmed,
//! screened, dropped by their bounds and dropped by their pre-screens, the largest error of a
//! pre-screen, and both wall times; below a group, any screen beyond the margin, bound above an
//! exact time, pre-screen above it beyond the margin, or first shape beyond the pick tolerance. Run through `benches/rank_agreement.sh` (docs/performance.md).
//!
//! Usage: `rank_agreement [--threads N] [--only SUBSTRING] HW:FILE...`

#[path = "common/launch_list.rs"]
mod launch_list;

use gputraffic::analysis::rank::{self, RankMode};
use gputraffic::request::{KernelSource, LaunchSpec, on_threads};
use std::collections::BTreeMap;
use std::time::Instant;

/// One group: the launch's fixed part, and its shapes in file order.
struct Group {
    hw: String,
    kernel: String,
    domain: String,
    set: Vec<String>,
    blocks: Vec<String>,
}

fn groups(hw: &str, path: &str) -> Vec<Group> {
    let mut by_key: BTreeMap<(usize, String), Group> = BTreeMap::new();
    let mut order = BTreeMap::new();
    for l in launch_list::read(hw, path) {
        let key = format!("{} {} {}", l.kernel, l.domain, l.set.join(" "));
        let n = order.len();
        let index = *order.entry(key.clone()).or_insert(n);
        let g = by_key.entry((index, key)).or_insert_with(|| Group {
            hw: l.hw,
            kernel: l.kernel,
            domain: l.domain,
            set: l.set,
            blocks: Vec::new(),
        });
        if !g.blocks.contains(&l.block) {
            g.blocks.push(l.block);
        }
    }
    by_key.into_values().collect()
}

fn main() {
    let mut threads = None;
    let mut only = None;
    let mut lists = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--threads" => threads = args.next().and_then(|v| v.parse().ok()),
            "--only" => only = args.next(),
            _ => lists.push(a),
        }
    }
    assert!(
        !lists.is_empty(),
        "usage: rank_agreement [--threads N] [--only SUBSTRING] HW:FILE..."
    );
    println!(
        "{:<8} {:<12} {:<12} {:<6} {:>6} | {:<10} {:<10} {:>8} | {:>9} {:>15} {:>8} | {:>8} {:>8} {:>6}",
        "hw",
        "kernel",
        "domain",
        "set",
        "shapes",
        "exact 1st",
        "default 1st",
        "gap %",
        "max scr%",
        "conf/scr/bnd/pre",
        "max pre%",
        "exact s",
        "default s",
        "ratio"
    );
    let (mut agree, mut total, mut worst_gap, mut worst_screen) = (0, 0, 0f64, 0f64);
    let mut highest_pre = f64::NEG_INFINITY;
    for list in &lists {
        let (hw, path) = list
            .split_once(':')
            .unwrap_or_else(|| panic!("'{list}' is not HW:FILE"));
        for g in groups(hw, path) {
            let label = format!("{} {} {} {}", g.hw, g.kernel, g.domain, g.set.join(" "));
            if only.as_ref().is_some_and(|o| !label.contains(o.as_str())) {
                continue;
            }
            let spec = LaunchSpec {
                kernel: KernelSource::Load(g.kernel.clone()),
                hw: g.hw.clone(),
                block: None,
                domain: Some(g.domain.clone()),
                set: g.set.clone(),
                clock: "boost".into(),
            };
            let run = |mode| {
                let start = Instant::now();
                let r = on_threads(threads, || spec.rank(&g.blocks, mode, true, &|_, _| {}))
                    .unwrap_or_else(|e| panic!("{label}: {e}"));
                (r, start.elapsed().as_secs_f64())
            };
            let (default, default_s) = run(RankMode::Screen);
            let (exact, exact_s) = run(RankMode::Exact);
            let exact_time = |b: [u32; 3]| {
                exact
                    .shapes
                    .iter()
                    .find(|s| s.block == b)
                    .map(|s| s.predicted_s)
                    .expect("the same shapes")
            };
            let best = &exact.shapes[0];
            let pick = &default.shapes[0];
            let gap = (exact_time(pick.block) / best.predicted_s - 1.0) * 100.0;
            let screen_err = default
                .screens
                .iter()
                .map(|&(b, t)| ((t / exact_time(b) - 1.0) * 100.0).abs())
                .fold(0f64, f64::max);
            let name = |b: [u32; 3]| format!("{}x{}x{}", b[0], b[1], b[2]);
            // A pre-screen's error, signed: it is a lower estimate, and may lie above the exact
            // time by no more than the margin.
            let pre_screened: Vec<&rank::RankedShape> = (default.shapes.iter())
                .filter(|s| s.simulated == rank::PRESCREENED)
                .collect();
            let pre_err =
                |s: &rank::RankedShape| (s.predicted_s / exact_time(s.block) - 1.0) * 100.0;
            let pre_max = pre_screened
                .iter()
                .map(|s| pre_err(s))
                .fold(f64::NEG_INFINITY, f64::max);
            highest_pre = highest_pre.max(pre_max);
            total += 1;
            agree += usize::from(pick.block == best.block);
            worst_gap = worst_gap.max(gap);
            worst_screen = worst_screen.max(screen_err);
            println!(
                "{:<8} {:<12} {:<12} {:<6} {:>6} | {:<10} {:<10} {:>8.3} | {:>9.3} {:>15} {:>8} | {:>8.1} {:>8.1} {:>6.2}",
                g.hw,
                g.kernel,
                g.domain,
                g.set.join(" "),
                exact.shapes.len(),
                name(best.block),
                name(pick.block),
                gap,
                screen_err,
                format!(
                    "{}/{}/{}/{}",
                    default.confirmed, default.screened, default.bounded, default.prescreened
                ),
                if pre_screened.is_empty() {
                    "-".to_string()
                } else {
                    format!("{pre_max:+.3}")
                },
                exact_s,
                default_s,
                default_s / exact_s
            );
            if gap > rank::PICK_TOLERANCE * 100.0 {
                println!(
                    "    first shape {gap:.2}% slower than the exact first (beyond the tolerance)"
                );
            }
            // A bound above the exact time would be no bound.
            for s in default
                .shapes
                .iter()
                .filter(|s| s.simulated == rank::BOUNDED)
            {
                if s.predicted_s > exact_time(s.block) {
                    println!(
                        "    bound of {} above its exact time ({} > {})",
                        name(s.block),
                        s.predicted_s,
                        exact_time(s.block)
                    );
                }
            }
            for s in &pre_screened {
                if pre_err(s) > rank::PRE_SCREEN_MARGIN * 100.0 {
                    println!(
                        "    pre-screen of {} {:+.2}% above its exact time (beyond the margin)",
                        name(s.block),
                        pre_err(s)
                    );
                }
            }
            for (b, t) in &default.screens {
                let e = (t / exact_time(*b) - 1.0) * 100.0;
                if e.abs() > rank::SCREEN_MARGIN * 100.0 {
                    println!(
                        "    screen of {} off by {e:+.2}% (beyond the margin)",
                        name(*b)
                    );
                }
            }
        }
    }
    println!(
        "{agree} of {total} groups pick the exact mode's first shape; largest gap {worst_gap:.3}%, largest screen error {worst_screen:.3}%, largest pre-screen error {highest_pre:+.3}% (margins {:.1}% and {:.1}%)",
        rank::SCREEN_MARGIN * 100.0,
        rank::PRE_SCREEN_MARGIN * 100.0
    );
}
