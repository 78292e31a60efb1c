//! What a launch reads from DRAM besides its data: its code and a fixed part, once per launch
//! (`[dram] launch_read_sectors`, `[launch] code_bytes`; docs/model.md "DRAM"), measured by
//! `validation/launch_fetch.cu` on the H200 (tests/data/h200/launch_fetch/).

mod common;

use common::simulate_as_written;
use gputraffic::analysis::measured::ncu_counters;
use gputraffic::input::hw::HwConfig;
use gputraffic::input::trace::Kernel;
use gputraffic::sim::{self, SimOptions};
use std::collections::BTreeMap;
use std::path::Path;

const DATA: &str = "tests/data/h200/launch_fetch";
const DRAM_READS: &str = "dram__sectors_read.sum";

/// The probe's kernels in launch order within each grid (launch_fetch.cu's `main`), by the
/// mangled names of sass_bytes.txt.
const KERNELS: [&str; 6] = [
    "_Z7k_emptyPfi",
    "_Z6k_codeILi256EEvPfi",
    "_Z6k_codeILi1024EEvPfi",
    "_Z6k_codeILi4096EEvPfi",
    "_Z6k_codeILi16384EEvPfi",
    "_Z8k_paramsPfi3Big",
];
/// The grids, in launch order: 1, 132 and 2112 blocks of 256 threads.
const GRIDS: usize = 3;

/// Bytes of SASS per kernel, as the script counted them (16 per instruction).
fn code_bytes() -> BTreeMap<String, u64> {
    std::fs::read_to_string(format!("{DATA}/sass_bytes.txt"))
        .unwrap()
        .lines()
        .map(|l| {
            let (name, bytes) = l.split_once(' ').unwrap();
            (name.to_string(), bytes.parse().unwrap())
        })
        .collect()
}

/// The measured DRAM reads of every launch with `cache_control`, with its kernel's code bytes.
fn measured(cache_control: &str) -> Vec<(&'static str, u64, f64)> {
    let code = code_bytes();
    let launches = ncu_counters(Path::new(&format!("{DATA}/ncu_{cache_control}.csv"))).unwrap();
    assert_eq!(launches.len(), GRIDS * KERNELS.len());
    launches
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let k = KERNELS[i % KERNELS.len()];
            (k, code[k], c[DRAM_READS])
        })
        .collect()
}

#[test]
fn a_launch_reads_its_code_and_a_fixed_part_from_dram_whatever_its_grid() {
    let fixed = HwConfig::load("h200")
        .unwrap()
        .dram
        .launch_read_sectors
        .expect("measured on the h200");
    let rule = |code: u64| (fixed + code.div_ceil(32)) as f64;
    let runs = measured("all");
    // The fixed part is the least that the launches of up to 16768 bytes of code read beyond
    // their code (the empty kernel: 88 - 384 / 32).
    let least = (runs.iter().filter(|r| r.1 <= 16768))
        .map(|r| r.2 - (r.1 / 32) as f64)
        .fold(f64::MAX, f64::min);
    assert_eq!(
        least, fixed as f64,
        "the fixed part is the smallest launch's"
    );
    let mut exact = 0;
    for (k, code, reads) in &runs {
        let err = reads / rule(*code) - 1.0;
        // 2112 blocks of k_code<4096> read 256 sectors more than its 1 and 132 blocks.
        assert!(
            err.abs() < 0.12,
            "{k}: {reads} sectors against {}",
            rule(*code)
        );
        exact += usize::from(err.abs() < 0.02);
    }
    assert_eq!(exact, 17, "all launches but one within 2% of the rule");
    // From 384 to 16768 bytes of code the reads grow by a sector per 32 bytes, to the sector.
    for (k, code, reads) in runs.iter().filter(|r| r.1 <= 16768) {
        assert_eq!(*reads, rule(*code), "{k}");
    }
}

#[test]
fn without_the_profilers_cache_flush_the_code_stays_in_the_l2() {
    // ncu --cache-control none: the code and constants of the launch before are still in the L2.
    for (k, _, reads) in measured("none") {
        assert!(reads <= 224.0, "{k}: {reads}");
    }
    let with_flush: f64 = measured("all").iter().map(|r| r.2).sum();
    let without: f64 = measured("none").iter().map(|r| r.2).sum();
    assert!(
        without < 0.05 * with_flush,
        "{without} against {with_flush}"
    );
}

/// A trace that reads and writes one double per thread, `code` bytes of code.
fn copy_trace(code: Option<u64>) -> Kernel {
    let line = code.map_or(String::new(), |c| format!("code_bytes = {c}"));
    Kernel::parse(&copy_text(&line), "copy-code.toml").unwrap()
}

/// The text of [`copy_trace`], `code_line` in its `[launch]` table.
fn copy_text(code_line: &str) -> String {
    format!(
        r#"
name = "copy-code"
[params]
n = 8192
[[arrays]]
name = "a"
element_bytes = 8
dims = ["n"]
[[arrays]]
name = "b"
element_bytes = 8
dims = ["n"]
[launch]
block = [256, 1, 1]
grid = ["cdiv(n, blockDim.x)", "1", "1"]
{code_line}
[thread]
let = ["i = blockIdx.x * blockDim.x + threadIdx.x"]
guard = "i < n"
lattice_updates = "n"
body = [
  {{ load = "a", index = "i" }},
  {{ store = "b", index = "i" }},
]
"#
    )
}

#[test]
fn the_launch_reads_are_counted_once_beside_the_data_where_the_gpu_gives_them() {
    // 8192 doubles read: 2048 sectors, all from DRAM (the L2 starts empty).
    let data = 8192 * 8 / 32;
    let on_h200 = simulate_as_written(copy_trace(Some(4480)), "h200");
    assert_eq!(on_h200.dram.read_sectors, data + 76 + 4480 / 32);
    // Without code_bytes only the fixed part.
    let unknown = simulate_as_written(copy_trace(None), "h200");
    assert_eq!(unknown.dram.read_sectors, data + 76);
    // A GPU whose config does not give them counts the data alone.
    let a100 = simulate_as_written(copy_trace(Some(4480)), "a100-40gb");
    assert_eq!(a100.dram.read_sectors, data);
}

#[test]
fn a_negative_code_size_is_refused_in_one_line() {
    let e = Kernel::parse(&copy_text("code_bytes = -1"), "copy-code.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("launch.code_bytes = -1 is not a non-negative integer"),
        "{e}"
    );
}

#[test]
fn per_array_the_launch_reads_are_a_row_of_their_own() {
    let b = gputraffic::Bound::new(
        copy_trace(Some(4480)),
        "h200",
        &gputraffic::launch::LaunchRequest::default(),
    )
    .unwrap();
    let by_array = SimOptions {
        by_array: true,
        ..SimOptions::default()
    };
    let c = sim::simulate(&b.launch, &b.hw, &by_array).unwrap();
    let b = c.by_array.as_ref().unwrap();
    let names: Vec<&str> = b.arrays.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["a", "b", sim::LAUNCH_ROW]);
    assert_eq!(b.arrays[2].1.dram.read_sectors, 76 + 140);
    let sum: u64 = b.arrays.iter().map(|(_, a)| a.dram.read_sectors).sum();
    assert_eq!(sum, c.dram.read_sectors);
}
