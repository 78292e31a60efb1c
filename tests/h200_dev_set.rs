//! The simulator against real Nsight Compute counters of 77 stencil launches on an H200
//! (tests/data/h200_dev_set.csv, copied from shared/measurements/h200/dev_set.csv), through the
//! library behind `gputraffic validate`.
//!
//! Coalescing alone sets load requests, load sectors, store sectors and L2 write sectors, so those
//! must match exactly; L2 read sectors and DRAM read sectors depend on the cache models and must
//! meet issue 5's targets at the median (5% and 10%); the L1 data-stage wavefronts and the time
//! model must stay within 8% and 6% at the median and pick a star1 block shape within 3% of the
//! fastest (issue 12; on these 47 launches 6.7%, 4.0% and 99.2%). Every star1 and copy row is simulated; the
//! star4 rows (each a 4.4·10⁹-access kernel) are simulated when GPUTRAFFIC_FULL_VALIDATION=1,
//! otherwise a fixed spread of 6 shapes. `gputraffic validate --measured
//! tests/data/h200_dev_set.csv --hw h200` reports the full set (docs/validation.md).

use gputraffic::analysis::validate::{self, LaunchResult};
use gputraffic::metrics;
use std::path::Path;

const EXACT: [&str; 4] = [
    metrics::L1_LD_REQUESTS,
    metrics::L1_LD_SECTORS,
    metrics::L1_ST_SECTORS,
    metrics::L2_WRITE,
];

fn pair(r: &LaunchResult, m: &str) -> validate::Pair {
    r.pairs
        .iter()
        .find(|(n, _)| *n == m)
        .unwrap_or_else(|| panic!("{} lacks {m}", r.launch.label()))
        .1
}

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
    let (launches, notes) =
        gputraffic::analysis::measured::load(Path::new("tests/data/h200_dev_set.csv"), None)
            .unwrap();
    assert!(notes.is_empty());
    assert_eq!(launches.len(), 77);
    let launches: Vec<_> = launches
        .into_iter()
        .filter(|l| l.kernel != "star4" || full || star4_sample.contains(&l.request.block.unwrap()))
        .collect();
    assert_eq!(launches.len(), if full { 77 } else { 36 + 5 + 6 });
    let v = validate::validate(launches, "h200", "dev set", None, &|_, _| {}).unwrap();
    eprint!("{}", v.to_table());

    for r in &v.rows {
        for m in EXACT {
            let p = pair(r, m);
            // One launch (copy 1×16×16) shows 224 fewer L2 write sectors than its own L1 store
            // sectors (16,776,992 of 16,777,216): the counters disagree with each other there,
            // and the simulator, whose L2 sees every store sector, can only match to 0.002%.
            let self_inconsistent =
                m == metrics::L2_WRITE && p.measured != pair(r, metrics::L1_ST_SECTORS).measured;
            if self_inconsistent {
                assert!(
                    p.rel_err().unwrap().abs() < 1e-4,
                    "{}: {p:?}",
                    r.launch.label()
                );
            } else {
                assert_eq!(p.simulated, p.measured, "{m} of {}", r.launch.label());
            }
        }
    }
    let stats = |m: &str| &v.metrics.iter().find(|(n, _)| *n == m).unwrap().1;
    assert_eq!(stats(metrics::L1_LD_SECTORS).n, v.rows.len());
    let l2 = stats(metrics::L2_READ).median_rel_err.unwrap();
    let dram = stats(metrics::DRAM_READ).median_rel_err.unwrap();
    assert!(l2 <= 0.05, "L2 read sectors: median relative error {l2}");
    assert!(
        dram <= 0.10,
        "DRAM read sectors: median relative error {dram}"
    );
    let wavefronts = stats(metrics::L1_WAVEFRONTS).median_rel_err.unwrap();
    assert!(
        wavefronts <= 0.08,
        "L1 wavefronts: median relative error {wavefronts}"
    );
    let time = stats(metrics::DURATION).median_rel_err.unwrap();
    assert!(time <= 0.06, "kernel time: median relative error {time}");
    let star1 = v
        .groups
        .iter()
        .find(|g| g.group == "star1 256x256x256")
        .unwrap();
    assert_eq!(star1.shapes, 36);
    assert!(
        star1.pick_efficiency >= 0.97,
        "star1: the model's first shape runs at {} of the fastest",
        star1.pick_efficiency
    );
}
