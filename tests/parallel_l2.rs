//! The default pipeline (sharded, parallel L2 replay; full warps coalesced from per-launch line
//! patterns; each SM scheduled on its own between freed slots; long chunks) counts exactly what
//! the reference counts (serial L2 replay, every lane coalesced, all SMs scheduled tick by tick,
//! short chunks): on random small kernels (4-, 8- and 12-byte elements, guards, per-lane
//! loop exits, nested loops, `if`s, partial-sector stores, atomics, partial blocks) and tiny cache
//! geometries that force evictions (every replacement policy that shards, both set indexings, one
//! and two partitions, infinite caches), on 1, 2 and 7 threads, every counter is identical.

use gputraffic::input::hw::{HwConfig, Replacement, SetIndexing};
use gputraffic::input::trace::Kernel;
use gputraffic::launch::{Launch, LaunchRequest};
use gputraffic::sim::{SimOptions, simulate};
use proptest::prelude::*;

/// One random kernel over a padded 3-D grid of `element_bytes` elements.
#[derive(Debug, Clone)]
struct Case {
    n: [i64; 3],
    block: [u32; 3],
    element_bytes: u32,
    offsets: Vec<[i64; 3]>,
    store_stride: i64,
    loop_count: Option<i64>,
    nested: bool,
    with_if: bool,
    atomic: bool,
    l2_kib: u64,
    l2_ways: u32,
    replacement: Replacement,
    indexing: SetIndexing,
    split: bool,
    infinite_l2: bool,
}

fn kernel_text(c: &Case) -> String {
    let loads: Vec<String> = c
        .offsets
        .iter()
        .map(|o| {
            format!(
                "{{ load = \"a\", index = [\"x + {}\", \"y + {}\", \"z + {}\"] }}",
                o[0] + 2,
                o[1] + 2,
                o[2] + 2
            )
        })
        .collect();
    let mut body = loads.join(",\n");
    // A strided store writes part of each sector: partial-sector stores.
    body += &format!(
        ",\n{{ store = \"b\", index = \"{} * (x + nx * (y + ny * z))\" }}",
        c.store_stride
    );
    if c.atomic {
        body += ",\n{ atomic = \"h\", index = \"(x * 7 + y) % 64\" }";
    }
    if c.with_if {
        body = format!("{{ if = \"(x + y) % 3 != 1\", body = [\n{body}\n] }}");
    }
    let mut lets = String::new();
    if let Some(count) = c.loop_count {
        // z marches through the loop; a per-lane early exit at the domain's end.
        lets = "\"z = zb * lc + k\",".into();
        let inner = if c.nested {
            format!("{{ loop = \"j\", count = \"1 + (x % 2)\", body = [\n{body}\n] }}")
        } else {
            body
        };
        body = format!(
            "{{ loop = \"k\", count = \"{count}\", while = \"zb * lc + k < nz\", let = [{lets}], body = [\n{inner}\n] }}"
        );
        lets = String::new();
    } else {
        lets += "\"z = zb\",";
    }
    let lc = c.loop_count.unwrap_or(1);
    format!(
        r#"name = "random"
[params]
nx = {nx}
ny = {ny}
nz = {nz}
lc = {lc}
[[arrays]]
name = "a"
element_bytes = {e}
dims = ["nx + 4", "ny + 4", "nz + 4"]
[[arrays]]
name = "b"
element_bytes = {e}
dims = ["{s} * nx * ny * nz"]
[[arrays]]
name = "h"
element_bytes = 4
dims = ["64"]
[launch]
block = [{bx}, {by}, {bz}]
grid = ["cdiv(nx, blockDim.x)", "cdiv(ny, blockDim.y)", "cdiv(nz, blockDim.z * lc)"]
[thread]
let = [
  "x = blockIdx.x * blockDim.x + threadIdx.x",
  "y = blockIdx.y * blockDim.y + threadIdx.y",
  "zb = blockIdx.z * blockDim.z + threadIdx.z",
  {lets}
]
guard = "x < nx && y < ny && zb * lc < nz"
lattice_updates = "nx * ny * nz"
body = [
{body}
]
"#,
        nx = c.n[0],
        ny = c.n[1],
        nz = c.n[2],
        e = c.element_bytes,
        s = c.store_stride,
        bx = c.block[0],
        by = c.block[1],
        bz = c.block[2],
    )
}

fn hw(c: &Case) -> HwConfig {
    let mut hw = HwConfig::load("h200").unwrap();
    hw.l1.size_bytes = 4 * 1024;
    hw.l1.ways = 4;
    let parts = if c.split { 2 } else { 1 };
    hw.l2.partitions = parts;
    if !c.split {
        hw.l2.home_hash = None;
        hw.l2.partition_sms = None;
    }
    hw.l2.ways = c.l2_ways;
    hw.l2.size_bytes = c.l2_kib * 1024 * parts as u64;
    hw.l2.replacement = c.replacement;
    hw.l2.set_indexing = c.indexing;
    hw
}

fn case() -> impl Strategy<Value = Case> {
    (
        (
            prop::array::uniform3(4i64..40),
            prop::array::uniform3(1u32..9),
        ),
        (prop::sample::select(vec![4u32, 8, 12]), 1i64..4),
        prop::collection::vec(prop::array::uniform3(-2i64..3), 1..5),
        (
            prop::option::of(1i64..5),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
        ),
        (
            prop::sample::select(vec![2u64, 4, 8]),
            prop::sample::select(vec![2u32, 4, 8]),
            prop::sample::select(vec![Replacement::Lru, Replacement::Fifo, Replacement::Plru]),
        ),
        (
            prop::sample::select(vec![
                SetIndexing::Modulo,
                SetIndexing::Hash,
                SetIndexing::Balanced,
            ]),
            any::<bool>(),
            prop::bool::weighted(0.1),
        ),
    )
        .prop_map(
            |(
                (n, b),
                (element_bytes, store_stride),
                offsets,
                (loop_count, nested, with_if, atomic),
                (l2_kib, l2_ways, replacement),
                (indexing, split, infinite_l2),
            )| Case {
                n,
                block: [b[0] * 4, b[1], b[2].min(4)],
                element_bytes,
                offsets,
                store_stride,
                loop_count,
                nested,
                with_if,
                atomic,
                l2_kib,
                l2_ways,
                replacement,
                indexing,
                split,
                infinite_l2,
            },
        )
}

/// The reference (`serial`: the serial L2 replay, lane-by-lane coalescing, the tick-by-tick
/// schedule, blocks' footprints counted load by load, chunks of 64 ticks) or the default
/// pipeline, on `threads` threads.
fn run(launch: &Launch, hw: &HwConfig, serial: bool, infinite_l2: bool, threads: usize) -> String {
    let opts = SimOptions {
        serial_l2: serial,
        lane_by_lane: serial,
        tick_by_tick: serial,
        footprints_load_by_load: serial,
        infinite_l2,
        chunk_ticks: if serial {
            64
        } else {
            SimOptions::default().chunk_ticks
        },
        ..SimOptions::default()
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    format!(
        "{:?}",
        pool.install(|| simulate(launch, hw, &opts)).unwrap()
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn the_default_pipeline_counts_exactly_as_the_reference(c in case()) {
        let k = Kernel::parse(&kernel_text(&c), "random.toml").unwrap();
        let hw = hw(&c);
        let req = LaunchRequest { block: Some(c.block), ..Default::default() };
        let launch = Launch::new(&k, &hw, &req).unwrap();
        let reference = run(&launch, &hw, true, c.infinite_l2, 1);
        for threads in [1, 2, 7] {
            prop_assert_eq!(&run(&launch, &hw, false, c.infinite_l2, threads), &reference);
        }
    }
}

#[test]
fn the_random_kernels_exercise_what_they_claim() {
    // One case by hand: evictions happen (DRAM writes during the kernel), stores are partial,
    // atomics and loops run.
    let c = Case {
        n: [36, 20, 12],
        block: [32, 2, 2],
        element_bytes: 4,
        offsets: vec![[0, 0, 0], [1, 0, -1], [0, 2, 1]],
        store_stride: 2,
        loop_count: Some(3),
        nested: true,
        with_if: true,
        atomic: true,
        l2_kib: 2,
        l2_ways: 4,
        replacement: Replacement::Plru,
        indexing: SetIndexing::Hash,
        split: true,
        infinite_l2: false,
    };
    let k = Kernel::parse(&kernel_text(&c), "random.toml").unwrap();
    let hw = hw(&c);
    let req = LaunchRequest {
        block: Some(c.block),
        ..Default::default()
    };
    let launch = Launch::new(&k, &hw, &req).unwrap();
    assert!(!launch.program.simple);
    let counts = simulate(&launch, &hw, &SimOptions::default()).unwrap();
    assert!(counts.dram.write_sectors > 0, "{counts:?}");
    assert!(counts.l2.atomic_requests > 0);
    assert!(counts.l2.fabric_sectors > 0);
    assert_eq!(
        run(&launch, &hw, true, false, 1),
        run(&launch, &hw, false, false, 7)
    );
}
