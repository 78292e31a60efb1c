//! The output formats that scripts, `plot` and `fit` read, pinned byte for byte: `simulate` as
//! JSON, CSV and table, `rank` as table and JSON, `validate --format json`, a sweep file (header
//! and rows), `list`. A change
//! to any of them shows up here as a snapshot diff to review (`cargo insta review`).

mod common;
use common::{gputraffic, scratch};

/// Runs the binary and returns its stdout, failing on a non-zero exit.
fn stdout_of(args: &[&str]) -> String {
    let (code, stdout, stderr) = gputraffic(args);
    assert_eq!(code, 0, "{args:?} failed: {stderr}");
    stdout
}

const SIMULATE: &[&str] = &[
    "simulate",
    "--kernel",
    "star1",
    "--hw",
    "h200",
    "--block",
    "32x4x2",
    "--domain",
    "64x48x40",
    "--threads",
    "2",
];

fn simulate(format: &str) -> String {
    let mut args = SIMULATE.to_vec();
    args.extend(["--format", format]);
    stdout_of(&args)
}

#[test]
fn simulate_json() {
    insta::assert_snapshot!(simulate("json"));
}

#[test]
fn simulate_csv() {
    insta::assert_snapshot!(simulate("csv"));
}

#[test]
fn simulate_table() {
    insta::assert_snapshot!(simulate("table"));
}

#[test]
fn simulate_table_with_a_model_beside_it() {
    insta::assert_snapshot!(stdout_of(&[
        "simulate",
        "--kernel",
        "su-7pt-1",
        "--hw",
        "k20-rodc",
        "--block",
        "32x4x1",
        "--domain",
        "64x64x32",
        "--compare",
        "su2015",
    ]));
}

#[test]
fn validate_json() {
    insta::assert_snapshot!(stdout_of(&[
        "validate",
        "--measured",
        "tests/data/h100/small_ncu.csv",
        "--manifest",
        "tests/data/h100/small_manifest.toml",
        "--hw",
        "h100-sxm",
        "--format",
        "json",
        "--threads",
        "2",
    ]));
}

#[test]
fn sweep_file() {
    let dir = scratch("snapshot-sweep");
    let out = dir.join("s.csv");
    stdout_of(&[
        "sweep",
        "--kernel",
        "star1",
        "--hw",
        "h200",
        "--blocks",
        "32x4x1,8x16x1",
        "--domains",
        "64x64x32",
        "--out",
        out.to_str().unwrap(),
    ]);
    insta::assert_snapshot!(std::fs::read_to_string(&out).unwrap());
}

/// `rank` of four star1 shapes on a small domain, every shape exact.
fn rank(format: &str) -> String {
    stdout_of(&[
        "rank",
        "--kernel",
        "star1",
        "--hw",
        "h200",
        "--blocks",
        "32x4x2,64x2x1,32x8x1,256x1x1",
        "--domain",
        "64x48x40",
        "--exact",
        "--threads",
        "2",
        "--format",
        format,
    ])
}

#[test]
fn rank_table() {
    insta::assert_snapshot!(rank("table"));
}

#[test]
fn rank_json() {
    insta::assert_snapshot!(rank("json"));
}

#[test]
fn list() {
    insta::assert_snapshot!(stdout_of(&["list"]));
}
