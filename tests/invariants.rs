//! Invariants that hold for every shipped trace, whatever the cache model's details:
//! L1 load misses are exactly the L2 reads from L1 (at most, on a GPU whose L2 Request Coalescer
//! merges identical reads of one GPC), L2 writes are the store sectors, DRAM reads
//! never undercut the compulsory footprint, and infinite caches give exactly the compulsory
//! footprint.

use gputraffic::launch::LaunchRequest;
use gputraffic::report::Report;
use gputraffic::sim::SimOptions;

/// Kernel, GPU, block shape and parameter settings of one case.
type Case = (&'static str, &'static str, [u32; 3], Vec<(String, i64)>);

/// Every shipped trace on a small domain: the hand-picked cases below, then every other shipped
/// trace with its default block on the H200 (64³ where the trace has a domain).
fn cases() -> Vec<Case> {
    let mut cases = picked_cases();
    for (name, _) in gputraffic::input::trace::SHIPPED {
        // The store probe loads nothing and streams 2 GiB; tests/h200_partial_stores.rs covers it.
        if *name == "partial-store" || cases.iter().any(|c| c.0 == *name) {
            continue;
        }
        let k = gputraffic::input::trace::load(name).unwrap();
        let domain = ["nx", "ny", "nz"]
            .iter()
            .filter(|p| k.params.contains_key(**p))
            .map(|p| (p.to_string(), 64))
            .collect();
        cases.push((name, "h200", k.default_block, domain));
    }
    cases
}

/// Cases with a block shape, GPU and parameters chosen to exercise the trace.
fn picked_cases() -> Vec<Case> {
    let set = |v: &[(&str, i64)]| {
        v.iter()
            .map(|(k, x)| (k.to_string(), *x))
            .collect::<Vec<_>>()
    };
    vec![
        (
            "star1",
            "h200",
            [32, 8, 4],
            set(&[("nx", 96), ("ny", 64), ("nz", 64)]),
        ),
        (
            "star4",
            "h200",
            [16, 8, 8],
            set(&[("nx", 80), ("ny", 64), ("nz", 48)]),
        ),
        (
            "box27",
            "a100-40gb",
            [32, 4, 2],
            set(&[("nx", 64), ("ny", 64), ("nz", 64)]),
        ),
        (
            "star1-zloop",
            "h200",
            [32, 4, 1],
            set(&[("nx", 64), ("ny", 64), ("nz", 60), ("cz", 8)]),
        ),
        (
            "copy",
            "v100",
            [128, 1, 1],
            set(&[("nx", 100), ("ny", 64), ("nz", 64)]),
        ),
        (
            "su-7pt-1",
            "k20",
            [32, 4, 1],
            set(&[("nx", 64), ("ny", 64), ("nz", 64)]),
        ),
        (
            "su-7pt-1-zblock",
            "gtx-titan",
            [32, 4, 1],
            set(&[("nx", 64), ("ny", 64), ("nz", 64)]),
        ),
        (
            "ernst-25pt-r4",
            "h100-sxm",
            [32, 8, 1],
            set(&[("nx", 64), ("ny", 64), ("nz", 64), ("fold_y", 2)]),
        ),
    ]
}

fn run(kernel: &str, hw: &str, block: [u32; 3], set: &[(String, i64)], opts: SimOptions) -> Report {
    let req = LaunchRequest {
        block: Some(block),
        domain: None,
        set: set.to_vec(),
    };
    gputraffic::run(kernel, hw, &req, &opts).unwrap_or_else(|e| panic!("{kernel}: {e}"))
}

/// The launch's own DRAM reads ([`gputraffic::sim::launch_read_sectors`]).
fn own_reads(kernel: &str, hw: &str, block: [u32; 3], set: &[(String, i64)]) -> u64 {
    let req = LaunchRequest {
        block: Some(block),
        domain: None,
        set: set.to_vec(),
    };
    let b =
        gputraffic::Bound::new(gputraffic::input::trace::load(kernel).unwrap(), hw, &req).unwrap();
    gputraffic::sim::launch_read_sectors(&b.launch, &b.hw)
}

#[test]
fn traffic_is_conserved_between_levels() {
    for (kernel, hw, block, set) in cases() {
        let r = run(kernel, hw, block, &set, SimOptions::default());
        let c = &r.counts;
        assert!(c.l1.load_requests > 0, "{kernel}");
        let coalesces = !(gputraffic::input::hw::HwConfig::load(hw).unwrap())
            .l2
            .coalescer_survival
            .is_empty();
        if coalesces {
            // Merged reads leave the L2's count; every L2 read is an L1 miss.
            assert!(
                c.l2.read_sectors <= c.l1.load_miss_sectors,
                "{kernel}: L2 reads {} > L1 misses {}",
                c.l2.read_sectors,
                c.l1.load_miss_sectors
            );
        } else {
            assert_eq!(
                c.l1.load_miss_sectors, c.l2.read_sectors,
                "{kernel}: L1 misses = L2 reads from L1"
            );
        }
        assert_eq!(
            c.l1.store_sectors, c.l2.write_sectors,
            "{kernel}: stores are written through"
        );
        assert!(c.l1.load_miss_sectors <= c.l1.load_sectors, "{kernel}");
        let compulsory = c.compulsory_dram_read_sectors.unwrap();
        assert!(
            c.dram.read_sectors >= compulsory,
            "{kernel}: DRAM {} < compulsory {compulsory}",
            c.dram.read_sectors
        );
        assert!(compulsory > 0, "{kernel}");
        // Dirty sectors are distinct written sectors (by stores or atomics); misaligned stores
        // write some sectors twice.
        assert!(
            c.dirty_at_end_sectors <= c.l2.write_sectors + c.l2.atomic_sectors,
            "{kernel}"
        );
        assert_eq!(
            c.l1.atomic_sectors, c.l2.atomic_sectors,
            "{kernel}: atomics bypass L1"
        );
    }
}

#[test]
fn infinite_caches_give_exactly_the_compulsory_footprint() {
    for (kernel, hw, block, set) in cases() {
        let opts = SimOptions {
            infinite_l1: true,
            infinite_l2: true,
            ..SimOptions::default()
        };
        let r = run(kernel, hw, block, &set, opts);
        let c = &r.counts;
        let own = own_reads(kernel, hw, block, &set);
        assert_eq!(
            c.dram.read_sectors,
            c.compulsory_dram_read_sectors.unwrap() + own,
            "{kernel}"
        );
        assert_eq!(c.dram.write_sectors, 0, "{kernel}: nothing is ever evicted");
        // Nothing is evicted, so every written sector is still dirty: each written once, except
        // where warps store parts of a sector that other warps complete (rows one element off
        // the sector grid in jacobi2d, jacobi2d-shared and star7-coarse-yz, a transposed column
        // in transpose-naive) and where many atomics update one sector (histogram).
        let shared_sectors = [
            "jacobi2d",
            "jacobi2d-shared",
            "star7-coarse-yz",
            "transpose-naive",
            "histogram",
        ];
        if shared_sectors.contains(&kernel) {
            assert!(c.dirty_at_end_sectors > 0, "{kernel}");
            assert!(
                c.dirty_at_end_sectors < c.l1.store_sectors + c.l1.atomic_sectors,
                "{kernel}"
            );
        } else {
            assert_eq!(c.dirty_at_end_sectors, c.l1.store_sectors, "{kernel}");
        }
        // An infinite L1 per SM misses each sector once per SM: no more than once per block
        // (Kepler's L1 does not cache global loads: every load sector goes to L2).
        if gputraffic::input::hw::HwConfig::load(hw)
            .unwrap()
            .l1
            .caches_global_loads
        {
            assert!(
                c.l1.load_miss_sectors <= c.l1.block_unique_load_sectors,
                "{kernel}"
            );
        } else {
            assert_eq!(c.l1.load_miss_sectors, c.l1.load_sectors, "{kernel}");
        }
    }
}

#[test]
fn with_one_block_per_sm_an_infinite_l1_misses_exactly_the_block_footprints() {
    // 64×64×8 with 32×8×4 blocks: 2×8×2 = 32 blocks, fewer than the SMs, one per SM.
    let set = vec![
        ("nx".to_string(), 64),
        ("ny".to_string(), 64),
        ("nz".to_string(), 8),
    ];
    let opts = SimOptions {
        infinite_l1: true,
        ..SimOptions::default()
    };
    let r = run("star1", "h200", [32, 8, 4], &set, opts);
    assert_eq!(r.launch.blocks, 32);
    let c = &r.counts;
    assert_eq!(c.l1.load_miss_sectors, c.l1.block_unique_load_sectors);
    // Hand count per block (pitch 72 doubles = 18 sectors, rows start 32 B into a sector): each of
    // the block's 8×4 own rows is read at x−1, x, x+1, i.e. doubles 3..36 of the row = bytes
    // 24..295 = 10 sectors; the 2×4 y-halo and 2×8 z-halo rows are read at x only: 8 sectors.
    assert_eq!(
        c.l1.block_unique_load_sectors,
        32 * (32 * 10 + 8 * 8 + 16 * 8)
    );
}

#[test]
fn a_bigger_l2_never_reads_more_from_dram_on_a_streaming_copy() {
    let set = vec![
        ("nx".to_string(), 256),
        ("ny".to_string(), 128),
        ("nz".to_string(), 64),
    ];
    let finite = run("copy", "h200", [256, 1, 1], &set, SimOptions::default());
    let infinite = run(
        "copy",
        "h200",
        [256, 1, 1],
        &set,
        SimOptions {
            infinite_l2: true,
            ..SimOptions::default()
        },
    );
    // A copy has no reuse: both read exactly the compulsory footprint: 128·64 rows of 256 doubles
    // starting 32 B into a 64 B fill unit → 66 sectors per row; and the launch's own reads, 76
    // and its 896 bytes of code.
    let own = 76 + 896 / 32;
    assert_eq!(infinite.counts.dram.read_sectors, 128 * 64 * 66 + own);
    assert_eq!(finite.counts.dram.read_sectors, 128 * 64 * 66 + own);
}
