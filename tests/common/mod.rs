//! Helpers shared by the tests.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

/// Runs the binary: (exit code, stdout, stderr).
pub fn gputraffic(args: &[&str]) -> (i32, String, String) {
    gputraffic_with_env(args, &[])
}

/// [`gputraffic`] with these environment variables set.
pub fn gputraffic_with_env(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_gputraffic"))
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// A fresh, empty scratch directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gputraffic-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Bad input: exit 2, nothing on stdout, one line on stderr containing every `expected` piece.
pub fn rejects(args: &[&str], expected: &[&str]) {
    let (code, stdout, stderr) = gputraffic(args);
    assert_eq!(code, 2, "{args:?}: {stderr}");
    assert!(stdout.is_empty(), "{args:?} printed {stdout}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    for e in expected {
        assert!(stderr.contains(e), "{args:?}: '{stderr}' lacks '{e}'");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// A shipped config with the measured L1 it carries switched on: its `set_index_masks`, 4 ways,
/// LRU (`validation/l1_index.cu`; docs/model.md "The measured index"). The config simulates with
/// another L1, which predicts the stencils better.
pub fn measured_l1(config: &str) -> gputraffic::input::hw::HwConfig {
    use gputraffic::input::hw::{HwConfig, Replacement, SetIndexing};
    let mut hw = HwConfig::load(config).unwrap();
    assert!(
        !hw.l1.set_index_masks.is_empty(),
        "{config} carries no measured L1 index"
    );
    hw.l1.set_indexing = SetIndexing::XorMatrix;
    hw.l1.ways = 4;
    hw.l1.replacement = Replacement::Lru;
    hw
}

/// The launch lines of a launches file (`validation/*_launches.txt`, `tests/data/*/launches.txt`:
/// comments and blank lines left out), split in words.
pub fn launch_lines(path: &str) -> Vec<Vec<String>> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect()
}

/// The exact counts of `kernel` as its trace gives it (its own block and domain) on `hw`.
pub fn simulate_as_written(
    kernel: gputraffic::input::trace::Kernel,
    hw: &str,
) -> gputraffic::sim::Counts {
    let b =
        gputraffic::Bound::new(kernel, hw, &gputraffic::launch::LaunchRequest::default()).unwrap();
    gputraffic::sim::simulate(&b.launch, &b.hw, &gputraffic::sim::SimOptions::default()).unwrap()
}
