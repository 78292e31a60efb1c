//! The trace language's control flow and atomics: nested loops give exactly the counts of the
//! same accesses unrolled, an `if` masking half the threads loads exactly half the sectors, the
//! general control-flow walker reproduces the simple form's counts, and the new shipped traces
//! (jacobi2d, transpose-naive, transpose-tiled, star7-coarse-yz, histogram) coalesce exactly as
//! the H100 measured (tests/data/h100/new_kernels/).

use gputraffic::Bound;
use gputraffic::input::trace::Kernel;
use gputraffic::launch::LaunchRequest;
use gputraffic::metrics;
use gputraffic::report::Report;
use gputraffic::sim::{Counts, SimOptions};

fn counts(text: &str, hw: &str, block: [u32; 3], set: &[(&str, i64)]) -> Counts {
    let k = Kernel::parse(text, "test.toml").unwrap();
    let req = LaunchRequest {
        block: Some(block),
        set: set.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
        ..Default::default()
    };
    let b = Bound::new(k, hw, &req).unwrap();
    gputraffic::sim::simulate(&b.launch, &b.hw, &SimOptions::default()).unwrap()
}

fn shipped(name: &str) -> String {
    std::fs::read_to_string(format!("traces/{name}.toml")).unwrap()
}

/// star7-coarse-yz's body with both loops unrolled by hand: the four (jz, jy) points in loop
/// order, each its 7 loads and store.
fn star7_unrolled() -> String {
    let text = shipped("star7-coarse-yz");
    let start = text.find("body = [\n  { loop").unwrap();
    let mut body = String::from("body = [\n");
    for (jz, jy) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
        let c = format!("((2 * zb + {jz} + 1) * plane + (2 * yb + {jy} + 1) * pitch + x + 1)");
        for off in [
            "", " - 1", " + 1", " - pitch", " + pitch", " - plane", " + plane",
        ] {
            body += &format!("  {{ load = \"in\", index = \"{c}{off}\" }},\n");
        }
        body += &format!("  {{ store = \"out\", index = \"{c}\" }},\n");
    }
    body += "]\n";
    format!("{}{body}", &text[..start])
}

#[test]
fn nested_loops_count_exactly_as_the_unrolled_accesses() {
    let nested = shipped("star7-coarse-yz");
    let unrolled = star7_unrolled();
    // Blocks that divide the domain and ones that leave guarded edges (ny/2 = 19, nz/2 = 9).
    for (block, n) in [
        ([32, 4, 2], [64, 32, 16]),
        ([64, 2, 2], [64, 38, 18]),
        ([8, 8, 4], [40, 38, 18]),
    ] {
        let set = [("nx", n[0]), ("ny", n[1]), ("nz", n[2])];
        let a = counts(&nested, "h200", block, &set);
        let b = counts(&unrolled, "h200", block, &set);
        assert_eq!(a, b, "block {block:?}, domain {n:?}");
        // 8 accesses per point, each thread 4 points.
        let points = (n[0] * n[1] * n[2]) as u64;
        assert_eq!(a.thread_accesses, 8 * points);
    }
}

#[test]
fn an_if_masking_half_the_threads_loads_exactly_half_the_sectors() {
    let all = shipped("jacobi2d");
    // Only even rows: with 32-wide blocks a warp is one row, so odd rows issue nothing at all.
    let half = all.replace(
        "body = [\n  { load",
        "body = [{ if = \"y % 2 == 0\", body = [\n  { load",
    );
    let half = half.replace(
        "index = [\"x\", \"y\"] },\n]",
        "index = [\"x\", \"y\"] },\n] }]",
    );
    assert!(half.contains("if = "), "the body was rewritten");
    let set = [("nx", 128), ("ny", 64)];
    let a = counts(&all, "h200", [32, 8, 1], &set);
    let b = counts(&half, "h200", [32, 8, 1], &set);
    assert_eq!(a.l1.load_sectors, 2 * b.l1.load_sectors);
    assert_eq!(a.l1.load_requests, 2 * b.l1.load_requests);
    assert_eq!(a.l1.store_sectors, 2 * b.l1.store_sectors);
    assert_eq!(a.warp_instructions, 2 * b.warp_instructions);
    assert_eq!(a.active_warps, 2 * b.active_warps);
    // A 16x16 block puts an even and an odd row in every warp: half the lanes, every warp.
    let a = counts(&all, "h200", [16, 16, 1], &set);
    let b = counts(&half, "h200", [16, 16, 1], &set);
    assert_eq!(a.l1.load_sectors, 2 * b.l1.load_sectors);
    assert_eq!(a.warp_instructions, b.warp_instructions);
    assert_eq!(a.thread_accesses, 2 * b.thread_accesses);
}

/// The scheduler decodes simple programs arithmetically; the general walker must give the very
/// same simulation (loops with a per-lane `while`, guarded edges, a count of one).
#[test]
fn the_general_walker_reproduces_the_simple_form() {
    for (kernel, block, set) in [
        (
            "star1-zloop",
            [32, 4, 1],
            vec![("nx", 64), ("ny", 40), ("nz", 30), ("cz", 8)],
        ),
        ("tabik-gx", [32, 4, 1], vec![]),
        ("su-7pt-1-zblock", [32, 4, 1], vec![("chunk_z", 4)]),
        (
            "star1",
            [32, 8, 4],
            vec![("nx", 64), ("ny", 64), ("nz", 32)],
        ),
    ] {
        let k = gputraffic::input::trace::load(kernel).unwrap();
        let req = LaunchRequest {
            block: Some(block),
            set: set.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
            ..Default::default()
        };
        let mut b = Bound::new(k, "h200", &req).unwrap();
        assert!(b.launch.program.simple);
        let simple = gputraffic::sim::simulate(&b.launch, &b.hw, &SimOptions::default()).unwrap();
        b.launch.program.simple = false;
        let general = gputraffic::sim::simulate(&b.launch, &b.hw, &SimOptions::default()).unwrap();
        assert_eq!(simple, general, "{kernel}");
    }
}

/// Hand counts on 64 x 64 floats, 32 x 8 blocks (rows of 256 B, every row line-aligned): 128
/// warps. transpose-naive: a warp loads 32 floats of one row (1 line, 4 sectors) and stores one
/// float into each of 32 rows (32 sectors). transpose-tiled: a warp loads one tile row and stores
/// one tile row, 32 floats each; 4 of each per thread.
#[test]
fn transposes_coalesce_as_counted_by_hand() {
    let set = [("nx", 64), ("ny", 64)];
    let c = counts(&shipped("transpose-naive"), "h100-sxm", [32, 8, 1], &set);
    assert_eq!((c.l1.load_requests, c.l1.load_sectors), (128, 512));
    assert_eq!(c.l1.store_requests, 128);
    assert_eq!(c.l1.store_sectors, 128 * 32);
    let c = counts(&shipped("transpose-tiled"), "h100-sxm", [32, 8, 1], &set);
    assert_eq!((c.l1.load_requests, c.l1.load_sectors), (128, 512));
    assert_eq!((c.l1.store_requests, c.l1.store_sectors), (128, 512));
}

/// 1024 ints, 256 bins: warp w adds to bins 7i mod 256 for its 32 values of i, 32 distinct
/// words 28 bytes apart spanning 7 lines and 28 sectors (7 is odd, so i -> 7i mod 256 never
/// repeats within 256 consecutive i and a warp's words never wrap back into a line it used).
#[test]
fn a_histogram_makes_seven_atomic_requests_per_warp() {
    let c = counts(
        &shipped("histogram"),
        "h100-sxm",
        [256, 1, 1],
        &[("n", 1024)],
    );
    assert_eq!((c.l1.load_requests, c.l1.load_sectors), (32, 128));
    assert_eq!((c.l1.atomic_requests, c.l1.atomic_sectors), (32, 32 * 28));
    assert_eq!(
        (c.l2.atomic_requests, c.l2.atomic_sectors),
        (32 * 7, 32 * 28)
    );
    assert_eq!(c.l2.write_sectors, 0);
    // One bin: 32 lanes on one word, 32 one-sector requests per warp, one DRAM fill in all.
    let c = counts(
        &shipped("histogram"),
        "h100-sxm",
        [256, 1, 1],
        &[("n", 1024), ("nbins", 1)],
    );
    assert_eq!(
        (c.l2.atomic_requests, c.l2.atomic_sectors),
        (32 * 32, 32 * 32)
    );
    assert_eq!(
        c.dram.read_sectors,
        128 + 2 + 76,
        "the data, the bin's 64-byte fill, and the launch's own 76 (the trace gives no code)"
    );
}

/// Every coalescing counter of the 25 launches measured on the H100 (four new kernels, the
/// histogram at three bin counts), exactly; DRAM reads within 6 %.
#[test]
fn the_new_traces_match_the_h100_counters() {
    let (launches, _) = gputraffic::analysis::measured::load(
        std::path::Path::new("tests/data/h100/new_kernels/ncu.csv"),
        Some(std::path::Path::new(
            "tests/data/h100/new_kernels/manifest.toml",
        )),
    )
    .unwrap();
    assert_eq!(launches.len(), 25);
    let exact = [
        metrics::L1_LD_REQUESTS,
        metrics::L1_LD_SECTORS,
        metrics::L1_ST_SECTORS,
        metrics::L1_RED_REQUESTS,
        metrics::L1_RED_SECTORS,
        metrics::L2_RED_REQUESTS,
        metrics::L2_RED,
    ];
    for m in &launches {
        let r: Report =
            gputraffic::run(&m.kernel, "h100-sxm", &m.request, &SimOptions::default()).unwrap();
        for name in exact {
            let measured = m.counters.get(name).copied().unwrap_or(0.0);
            let simulated = r.metric(name).unwrap_or(0) as f64;
            assert_eq!(simulated, measured, "{} {name}", m.label());
        }
        let measured = m.counters[metrics::DRAM_READ];
        let simulated = r.metric(metrics::DRAM_READ).unwrap() as f64;
        assert!(
            (simulated / measured - 1.0).abs() < 0.06,
            "{} DRAM reads {simulated} vs {measured}",
            m.label()
        );
    }
}
