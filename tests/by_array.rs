//! Traffic per array and per access (`simulate --by-array`): the arrays' rows add up to the
//! totals at every level on shipped traces and on GPUs with one L2 and with a split one (h200),
//! with and without evictions; the accesses' L1 counters add up to the L1's; counting per array
//! changes no total; a write-back is the evicted line's array's, not the array whose request
//! evicted it; the numbers are the same on any thread count and with the serial L2 replay; and
//! the CLI prints them in every format only when asked, refusing `--sample`.

mod common;

use common::{gputraffic, rejects};
use gputraffic::Bound;
use gputraffic::input::hw::HwConfig;
use gputraffic::launch::LaunchRequest;
use gputraffic::report::Report;
use gputraffic::report::by_array::array_metrics;
use gputraffic::sim::SimOptions;
use gputraffic::sim::counters::L1Counters;
use serde_json::Value;

/// A 512 KB L2 (a V100 cut down to 8 SMs): small launches turn it over, so lines are evicted
/// and written back during the kernel.
const SMALL_L2: &str = "tests/data/hw/sampling-small.toml";

fn bound(kernel: &str, hw: &str, block: [u32; 3], set: &[(&str, i64)]) -> Bound {
    let k = gputraffic::input::trace::load(kernel).unwrap();
    let hw = HwConfig::load(hw).unwrap();
    let req = LaunchRequest {
        block: Some(block),
        domain: None,
        set: set.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
    };
    Bound::with_hw(k, hw, &req).unwrap()
}

fn run(b: &Bound, opts: SimOptions) -> Report {
    b.simulate(&opts, None).unwrap()
}

fn by_array() -> SimOptions {
    SimOptions {
        by_array: true,
        ..SimOptions::default()
    }
}

/// The L1 counters an instruction changes (all but those counted when a block ends and the
/// derived wavefronts), as (name, value) pairs.
fn per_instruction(c: &L1Counters) -> [(&'static str, u64); 18] {
    [
        ("load_requests", c.load_requests),
        ("load_sectors", c.load_sectors),
        ("load_miss_sectors", c.load_miss_sectors),
        ("store_requests", c.store_requests),
        ("store_sectors", c.store_sectors),
        ("store_partial_sectors", c.store_partial_sectors),
        ("load_miss_request_lines", c.load_miss_request_lines),
        ("load_partial_lines", c.load_partial_lines),
        ("load_in_flight_lines", c.load_in_flight_lines),
        ("data_passes", c.data_passes),
        ("atomic_requests", c.atomic_requests),
        ("atomic_sectors", c.atomic_sectors),
        ("shared_load_requests", c.shared_load_requests),
        ("shared_store_requests", c.shared_store_requests),
        ("shared_load_wavefronts", c.shared_load_wavefronts),
        ("shared_store_wavefronts", c.shared_store_wavefronts),
        ("shared_load_bank_conflicts", c.shared_load_bank_conflicts),
        ("shared_store_bank_conflicts", c.shared_store_bank_conflicts),
    ]
}

/// Asserts that `r`'s arrays add up to its totals in every metric they report, and its accesses
/// to the L1's counters; returns the per-array metrics.
fn assert_sums(r: &Report, what: &str) -> Vec<(String, Vec<(&'static str, u64)>)> {
    let b = r.counts.by_array.as_ref().expect("counted per array");
    let totals = array_metrics(r, &r.counts);
    let rows: Vec<(String, Vec<(&'static str, u64)>)> = (b.arrays.iter())
        .map(|(n, c)| (n.clone(), array_metrics(r, c)))
        .collect();
    for (i, (metric, total)) in totals.iter().enumerate() {
        let sum: u64 = rows.iter().map(|(_, m)| m[i].1).sum();
        assert_eq!(sum, *total, "{what}: {metric} by array");
    }
    let mut accesses = L1Counters::default();
    for a in &b.accesses {
        accesses.add(&a.l1);
    }
    for ((name, sum), (_, total)) in per_instruction(&accesses)
        .into_iter()
        .zip(per_instruction(&r.counts.l1))
    {
        assert_eq!(sum, total, "{what}: l1 {name} by access");
    }
    rows
}

/// A launch: kernel, GPU, block and parameters.
type Case = (
    &'static str,
    &'static str,
    [u32; 3],
    Vec<(&'static str, i64)>,
);

/// The launches the sums are checked on: shipped traces on a GPU with one L2 partition and a
/// small L2 (evictions, write-backs, partial sectors read back), on the A100 and on the H200 (a
/// split L2 with far reads, races and the request coalescer).
fn cases() -> Vec<Case> {
    let cube = |n| vec![("nx", n), ("ny", n), ("nz", n)];
    vec![
        (
            "star4",
            "h200",
            [32, 8, 4],
            vec![("nx", 128), ("ny", 128), ("nz", 64)],
        ),
        ("star4", SMALL_L2, [32, 4, 2], cube(48)),
        ("copy", SMALL_L2, [32, 8, 4], cube(64)),
        ("copy", "h200", [32, 8, 4], cube(64)),
        ("histogram", "h200", [256, 1, 1], vec![("n", 1 << 20)]),
        ("histogram", SMALL_L2, [256, 1, 1], vec![("n", 1 << 20)]),
        // Partial sectors read back from DRAM when their lines are evicted (buffers of 8 and 1.3
        // times the L2).
        (
            "partial-store",
            SMALL_L2,
            [256, 1, 1],
            vec![("buffer_bytes", 4 << 20)],
        ),
        (
            "partial-store",
            "h200",
            [256, 1, 1],
            vec![("buffer_bytes", 80 << 20)],
        ),
        (
            "jacobi2d-shared",
            "a100-40gb",
            [32, 8, 1],
            vec![("nx", 512), ("ny", 512)],
        ),
        (
            "transpose-naive",
            SMALL_L2,
            [32, 8, 1],
            vec![("nx", 512), ("ny", 512)],
        ),
        ("tabik-7fdd", "h200", [32, 8, 1], cube(96)),
        ("ernst-lbm-d3q15", "a100-40gb", [32, 4, 1], cube(32)),
    ]
}

#[test]
fn the_arrays_add_up_to_the_totals_and_counting_them_changes_no_total() {
    for (kernel, hw, block, set) in cases() {
        let b = bound(kernel, hw, block, &set);
        let with = run(&b, by_array());
        let what = format!("{kernel} on {hw}");
        let rows = assert_sums(&with, &what);
        // One row per array, and one for the launch's own reads where the GPU gives them.
        let launch_row = gputraffic::sim::launch_read_sectors(&b.launch, &b.hw) > 0;
        assert_eq!(
            rows.len(),
            b.launch.arrays.len() + usize::from(launch_row),
            "{what}"
        );
        let mut without = with.clone();
        without.counts.by_array = None;
        assert_eq!(without, run(&b, SimOptions::default()), "{what}");
    }
}

#[test]
fn the_split_l2_s_corrections_and_the_write_backs_are_exercised() {
    // The sums above would hold trivially if nothing were corrected or written back; these
    // launches do both.
    let r = run(
        &bound(
            "star4",
            "h200",
            [32, 8, 4],
            &[("nx", 128), ("ny", 128), ("nz", 64)],
        ),
        by_array(),
    );
    let c = &r.counts;
    assert!(c.l2.fabric_sectors > 0 && c.l2.read_lookup_miss_sectors > 0);
    // Every L1 load miss is an L2 read but those the coalescer merges: the read correction,
    // shared out over the arrays, is not nothing here.
    assert!(c.l2.read_sectors < c.l1.load_miss_sectors);
    let r = run(
        &bound(
            "copy",
            SMALL_L2,
            [32, 8, 4],
            &[("nx", 64), ("ny", 64), ("nz", 64)],
        ),
        by_array(),
    );
    assert!(r.counts.dram.write_sectors > 0);
}

#[test]
fn a_copy_s_counts_per_array_are_the_hand_counted_ones() {
    // copy: out[c] = in[c] over 64^3 points of 8 bytes, rows padded by 4 points (32 bytes, one
    // sector), so every warp's 32 points are 8 whole sectors: 64^3 * 8 / 32 = 65536 sectors
    // loaded from `in` and as many stored to `out`, one request per warp (64^3 / 32 = 8192).
    let n = 64i64;
    let b = bound(
        "copy",
        SMALL_L2,
        [32, 8, 4],
        &[("nx", n), ("ny", n), ("nz", n)],
    );
    let r = run(&b, by_array());
    let rows = assert_sums(&r, "copy");
    let get = |array: &str, metric: &str| {
        let (_, m) = rows.iter().find(|(a, _)| a == array).unwrap();
        m.iter().find(|(k, _)| *k == metric).unwrap().1
    };
    use gputraffic::metrics::*;
    let sectors = (n * n * n * 8 / 32) as u64;
    assert_eq!(get("in", L1_LD_REQUESTS), sectors / 8);
    assert_eq!(get("in", L1_LD_SECTORS), sectors);
    assert_eq!(get("in", L1_ST_SECTORS), 0);
    assert_eq!(get("out", L1_LD_SECTORS), 0);
    assert_eq!(get("out", L1_ST_SECTORS), sectors);
    assert_eq!(get("out", L2_WRITE), sectors);
    assert_eq!(get("in", L2_WRITE), 0);
    // Every load misses (nothing is read twice) and reaches the L2 and, the first time, DRAM.
    assert_eq!(get("in", L1_LD_MISS), sectors);
    assert_eq!(get("out", L2_READ) + get("out", DRAM_READ), 0);
    assert!(get("in", DRAM_READ) >= sectors);
    // The 512 KB L2 turns over four times: `out`'s dirty lines are written back when reads of
    // `in` evict them, and the write-backs are `out`'s, not `in`'s.
    assert!(
        get("out", DRAM_WRITE) > sectors / 2,
        "{}",
        get("out", DRAM_WRITE)
    );
    assert_eq!(get("in", DRAM_WRITE), 0);
    // Per access: the load is `in`'s, the store `out`'s.
    let accesses = &r.counts.by_array.as_ref().unwrap().accesses;
    assert_eq!(accesses.len(), 2);
    assert_eq!(
        (
            accesses[0].kind,
            accesses[0].array.as_str(),
            accesses[0].index.as_str()
        ),
        ("load", "in", "c")
    );
    assert_eq!(accesses[0].l1.load_sectors, sectors);
    assert_eq!(
        (accesses[1].kind, accesses[1].l1.store_sectors),
        ("store", sectors)
    );
}

#[test]
fn the_counts_per_array_are_the_same_on_any_thread_count_and_with_the_serial_l2() {
    let b = bound(
        "star4",
        "h200",
        [32, 8, 4],
        &[("nx", 128), ("ny", 128), ("nz", 64)],
    );
    let on = |threads, opts| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| run(&b, opts))
    };
    let one = on(1, by_array());
    assert!(one.counts.by_array.is_some());
    assert_eq!(one, on(2, by_array()));
    assert_eq!(one, on(3, by_array()));
    let serial = SimOptions {
        serial_l2: true,
        ..by_array()
    };
    assert_eq!(one, on(2, serial));
}

/// `simulate` of a small star4 on the H200 in `format`, with `extra` flags.
fn simulate(format: &str, extra: &[&str]) -> String {
    let mut args = vec![
        "simulate",
        "--kernel",
        "traces/star4.toml",
        "--hw",
        "h200",
        "--block",
        "32x8x4",
        "--domain",
        "128x128x64",
        "--format",
        format,
    ];
    args.extend(extra);
    let (code, stdout, stderr) = gputraffic(&args);
    assert_eq!(code, 0, "{stderr}");
    stdout
}

#[test]
fn the_json_s_arrays_add_up_to_its_metrics_and_appear_only_when_asked() {
    let plain: Value = serde_json::from_str(&simulate("json", &[])).unwrap();
    assert!(plain.get("by_array").is_none());
    let json: Value = serde_json::from_str(&simulate("json", &["--by-array"])).unwrap();
    let by = &json["by_array"];
    let arrays = by["arrays"].as_array().unwrap();
    assert_eq!(
        arrays
            .iter()
            .map(|a| a["array"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["in", "out", gputraffic::sim::LAUNCH_ROW]
    );
    let metrics = json["metrics"].as_object().unwrap();
    // Every metric counted per array (every reported one but the derived: star4 has no atomics
    // and no shared memory) adds up to the total under the same name.
    let per_array = arrays[0]["metrics"].as_object().unwrap();
    use gputraffic::metrics::{COUNTERS, Reported, Sampling};
    let counted = COUNTERS
        .iter()
        .filter(|k| k.reported == Reported::All && k.sampling != Sampling::Derived);
    for k in counted {
        assert!(per_array.contains_key(k.metric.unwrap()), "{k:?}");
    }
    for name in per_array.keys() {
        let total = &metrics[name];
        let sum: u64 = arrays
            .iter()
            .map(|a| a["metrics"][name].as_u64().unwrap())
            .sum();
        assert_eq!(sum, total.as_u64().unwrap(), "{name}");
        if let Some(blup) = json["bytes_per_lup"][name].as_f64() {
            let sum: f64 = arrays
                .iter()
                .map(|a| a["bytes_per_lup"][name].as_f64().unwrap())
                .sum();
            assert!((sum - blup).abs() < 1e-9, "{name}: {sum} vs {blup}");
        }
    }
    // Everything else is as without the flag.
    let mut rest = json.clone();
    rest.as_object_mut().unwrap().remove("by_array");
    assert_eq!(rest, plain);
    let accesses = by["accesses"].as_array().unwrap();
    assert_eq!(accesses.len(), 26);
    assert_eq!(accesses[25]["kind"], "store");
    assert_eq!(accesses[25]["array"], "out");
    assert_eq!(accesses[0]["index"], "c + 1");
    let loads: u64 = accesses
        .iter()
        .map(|a| {
            a["metrics"][gputraffic::metrics::L1_LD_SECTORS]
                .as_u64()
                .unwrap()
        })
        .sum();
    assert_eq!(
        loads,
        metrics[gputraffic::metrics::L1_LD_SECTORS]
            .as_u64()
            .unwrap()
    );
}

#[test]
fn the_csv_gains_columns_per_array_and_access_only_when_asked() {
    let plain = simulate("csv", &[]);
    let csv = simulate("csv", &["--by-array"]);
    let table = |text: &str| {
        let mut lines = text.lines();
        let header: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
        let row: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
        assert_eq!(header.len(), row.len());
        header.into_iter().zip(row).collect::<Vec<_>>()
    };
    let (plain, with) = (table(&plain), table(&csv));
    assert!(plain.iter().all(|(k, _)| !k.starts_with("array.")));
    // The plain columns come first, unchanged; the new ones follow.
    assert_eq!(with[..plain.len()], plain[..]);
    let value = |k: &str| {
        with.iter()
            .find(|(c, _)| c == k)
            .unwrap()
            .1
            .parse::<u64>()
            .unwrap()
    };
    use gputraffic::metrics::DRAM_READ;
    let launch = gputraffic::sim::LAUNCH_ROW;
    assert_eq!(
        value(&format!("array.in.{DRAM_READ}"))
            + value(&format!("array.out.{DRAM_READ}"))
            + value(&format!("array.{launch}.{DRAM_READ}")),
        value(DRAM_READ)
    );
    assert!(
        with.iter()
            .any(|(k, _)| k == "access.25.l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum")
    );
}

#[test]
fn the_table_shows_the_arrays_and_the_accesses_only_when_asked() {
    let plain = simulate("table", &[]);
    let table = simulate("table", &["--by-array"]);
    assert!(!plain.contains("by array"));
    // The section comes after the totals, before the time model, and adds nothing else.
    let (before, after) = plain.split_once("\ntime model").unwrap();
    let section = table
        .strip_prefix(before)
        .and_then(|rest| rest.strip_suffix(&format!("\ntime model{after}")))
        .expect("the plain table around the section");
    insta::assert_snapshot!(section);
}

#[test]
fn sampling_is_refused_with_one_line() {
    rejects(
        &[
            "simulate",
            "--kernel",
            "traces/star4.toml",
            "--hw",
            "h200",
            "--by-array",
            "--sample",
        ],
        &["--by-array", "--sample", "per array"],
    );
}
