//! The shipped traces that list their loads in the order of the compiled code (star4, box27) mark
//! the same runs of loads as the SASS of the measured kernels: `ends_run` after each run but the
//! last, run lengths as `validation/sass_runs.py` read them (tests/data/h100/sass/load_runs.csv).

use gputraffic::input::trace::{AccessKind, Kernel, Step};
use std::path::Path;

/// The run lengths a trace's body marks: loads up to and including each `ends_run`, then the rest.
fn marked_runs(trace: &str) -> Vec<usize> {
    let k = Kernel::load(Path::new(&format!("traces/{trace}.toml"))).unwrap();
    let mut runs = vec![0];
    for step in &k.body {
        let Step::Access(a) = step else {
            panic!("{trace}: the body is straight-line code");
        };
        if a.kind != AccessKind::Load {
            continue;
        }
        *runs.last_mut().unwrap() += 1;
        if a.ends_run {
            runs.push(0);
        }
    }
    runs
}

/// The runs of `function` in the SASS summary.
fn sass_runs(function: &str) -> Vec<usize> {
    let csv = std::fs::read_to_string("tests/data/h100/sass/load_runs.csv").unwrap();
    let line = csv
        .lines()
        .find(|l| l.starts_with(&format!("{function},")))
        .unwrap_or_else(|| panic!("{function} not in load_runs.csv"));
    let runs = line.split(',').nth(2).unwrap();
    runs.split(' ').map(|n| n.parse().unwrap()).collect()
}

#[test]
fn star4_and_box27_mark_the_runs_of_their_compiled_code() {
    for (trace, function, runs) in [
        ("star4", "_Z4starILi4EEvPKdPdiiiil", vec![5, 4, 4, 6, 6]),
        ("box27", "_Z5box27PKdPdiiiil", vec![8, 3, 6, 10]),
    ] {
        assert_eq!(sass_runs(function), runs, "{function}");
        assert_eq!(marked_runs(trace), runs, "{trace}");
    }
}
