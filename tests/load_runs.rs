//! The shipped traces that list their loads in the order of the compiled code mark the same runs
//! of loads as the SASS: `ends_run` after each run but the last, run lengths as
//! `validation/sass_runs.py` read them. star4 and box27 follow the measured kernels
//! (tests/data/h100/sass/load_runs.csv); Ernst et al.'s pystencils stars, unfolded and folded,
//! list every load where their regenerated code's SASS issues it (tests/data/v100/sass).

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

/// The loads of one `if` branch of a trace: (run, dx, dy, dz) in listed order, the run counted
/// up at each `ends_run`; offsets from `c0`, read by evaluating the index with pitch = 1000 and
/// plane = 1000000 elements.
fn branch_loads(branch: &[Step]) -> Vec<[i64; 4]> {
    let (pitch, plane) = (1000, 1_000_000);
    let mut run = 0;
    let mut loads = Vec::new();
    for step in branch {
        let Step::Access(a) = step else { continue };
        if a.kind != AccessKind::Load {
            continue;
        }
        let at = a.index[0]
            .eval_with(&|name| match name {
                "c0" => Some(0),
                "pitch" => Some(pitch),
                "plane" => Some(plane),
                _ => None,
            })
            .unwrap();
        let dz = (at as f64 / plane as f64).round() as i64;
        let dy = ((at - dz * plane) as f64 / pitch as f64).round() as i64;
        loads.push([run, at - dz * plane - dy * pitch, dy, dz]);
        if a.ends_run {
            run += 1;
        }
    }
    loads
}

/// The branch of a trace's body whose `if` holds for the given parameters (and only that one).
fn branch_for(trace: &str, params: &[(&str, i64)]) -> Vec<Step> {
    let k = Kernel::load(Path::new(&format!("traces/{trace}.toml"))).unwrap();
    let taken: Vec<_> = k
        .body
        .iter()
        .filter_map(|step| match step {
            Step::If(branch) => {
                let holds = branch
                    .cond
                    .eval_with(&|name| params.iter().find(|p| p.0 == name).map(|p| p.1))
                    .unwrap();
                (holds != 0).then(|| branch.body.clone())
            }
            _ => None,
        })
        .collect();
    assert_eq!(taken.len(), 1, "{trace} {params:?}: one branch holds");
    taken.into_iter().next().unwrap()
}

/// The SASS's loads of `function` (tests/data/v100/sass/pystencils_star_load_order.csv).
fn sass_loads(function: &str) -> Vec<[i64; 4]> {
    let csv =
        std::fs::read_to_string("tests/data/v100/sass/pystencils_star_load_order.csv").unwrap();
    csv.lines()
        .filter_map(|l| l.strip_prefix(&format!("{function},")))
        .map(|l| {
            let v: Vec<i64> = l.split(',').map(|n| n.parse().unwrap()).collect();
            [v[0], v[1], v[2], v[3]]
        })
        .collect()
}

#[test]
fn the_pystencils_stars_list_their_loads_in_the_order_and_runs_of_their_sass() {
    for (trace, params, function, loads) in [
        (
            "ernst-25pt-r4",
            vec![("fold_y", 1), ("fold_z", 1)],
            "star3d_r4",
            25,
        ),
        ("ernst-13pt-r2", vec![("fold_z", 1)], "star3d_r2_fold1", 13),
        ("ernst-13pt-r2", vec![("fold_z", 2)], "star3d_r2_fold2", 22),
        ("ernst-13pt-r2", vec![("fold_z", 4)], "star3d_r2_fold4", 40),
    ] {
        let sass = sass_loads(function);
        assert_eq!(sass.len(), loads, "{function}");
        assert_eq!(
            branch_loads(&branch_for(trace, &params)),
            sass,
            "{trace} {params:?}"
        );
    }
}

#[test]
fn the_pystencils_stars_sass_runs_are_those_sass_runs_py_reads() {
    let csv =
        std::fs::read_to_string("tests/data/v100/sass/pystencils_star_load_runs.csv").unwrap();
    for (function, runs) in [
        ("star3d_r4", "9 11 5"),
        ("star3d_r2_fold1", "11 2"),
        ("star3d_r2_fold2", "10 6 6"),
        ("star3d_r2_fold4", "10 8 7 5 5 5"),
    ] {
        let line = format!("sm75r32,{function},");
        let row = csv.lines().find(|l| l.starts_with(&line)).unwrap();
        assert_eq!(row.split(',').nth(3), Some(runs), "{function}");
        let mut lengths = vec![0; runs.split(' ').count()];
        for [run, ..] in sass_loads(function) {
            lengths[run as usize] += 1;
        }
        let lengths: Vec<String> = lengths.iter().map(|n| n.to_string()).collect();
        assert_eq!(lengths.join(" "), runs, "{function}");
    }
}
