//! The PTX lifter (`gputraffic lift`, `--kernel FILE.ptx`): kernels lifted from the PTX nvcc
//! emitted for the measured CUDA sources (tests/data/ptx/, nvcc 13.5 for sm_90, the `.cu`
//! beside each) simulate to the same counters as the shipped hand-written traces; each construct
//! lifts to its hand-derived expression; what cannot be lifted is one error naming the PTX line.
//! No nvcc is needed: the PTX is committed.

use gputraffic::Bound;
use gputraffic::input::ptx::sass::IssueOrder;
use gputraffic::input::ptx::{LiftOptions, lift_file};
use gputraffic::input::trace::Kernel;
use gputraffic::launch::LaunchRequest;
use gputraffic::sim::{Counts, SimOptions};
use std::sync::Arc;

const STENCILS: &str = "tests/data/ptx/stencils.ptx";
const NEW_KERNELS: &str = "tests/data/ptx/new_kernels.ptx";
const CONSTRUCTS: &str = "tests/data/ptx/constructs.ptx";

fn counts(kernel: Kernel, block: [u32; 3], set: &[(&str, i64)]) -> Counts {
    let req = LaunchRequest {
        block: Some(block),
        set: set.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
        ..Default::default()
    };
    let b = Bound::new(kernel, "h200", &req).unwrap();
    gputraffic::sim::simulate(&b.launch, &b.hw, &SimOptions::default()).unwrap()
}

/// `entry` of `file` lifted with the registers of the shipped trace and `extents` (the arrays'
/// sizes as the host allocates them), without ptxas.
fn lifted(file: &str, entry: &str, registers: u32, extents: &[(&str, &str)]) -> Kernel {
    let options = LiftOptions {
        entry: Some(entry.into()),
        registers: Some(registers),
        extents: extents
            .iter()
            .map(|(n, e)| (n.to_string(), e.to_string()))
            .collect(),
        issue_order: ptx_order(),
        ..Default::default()
    };
    lift_file(file, &options).unwrap().kernel
}

/// Accesses in PTX order with unbounded runs, whether or not ptxas and nvdisasm are at hand
/// (the tests of the compiled order give it from tests/data/ptx/*.sass).
fn ptx_order() -> Option<Arc<IssueOrder>> {
    Some(Arc::new(IssueOrder::new()))
}

fn shipped(name: &str) -> Kernel {
    gputraffic::input::trace::load(name).unwrap()
}

/// The coalescing counters: what depends only on the addresses each warp instruction makes.
fn coalescing(c: &Counts) -> [u64; 8] {
    [
        c.warp_instructions,
        c.thread_accesses,
        c.l1.load_requests,
        c.l1.load_sectors,
        c.l1.store_requests,
        c.l1.store_sectors,
        c.l1.atomic_requests,
        c.l1.atomic_sectors,
    ]
}

/// Block shapes with guarded edges and odd shapes, and small domains (odd sizes included).
const CASES: [([u32; 3], [i64; 3]); 4] = [
    ([32, 8, 4], [64, 32, 16]),
    ([64, 2, 2], [70, 19, 9]),
    ([8, 8, 4], [40, 38, 18]),
    ([128, 1, 1], [130, 7, 5]),
];

/// The stencil layout of validation/stencils.cu: pitch and plane as the host passes them.
fn layout(n: [i64; 3]) -> [(&'static str, i64); 5] {
    let pitch = n[0] + 8;
    [
        ("nx", n[0]),
        ("ny", n[1]),
        ("nz", n[2]),
        ("pitch", pitch),
        ("plane", pitch * (n[1] + 8)),
    ]
}

#[test]
fn lifted_stencils_count_exactly_as_the_hand_written_traces() {
    // (entry, shipped trace, its registers) of validation/stencils.cu
    for (entry, trace, registers) in [
        ("copy", "copy", 10),
        ("star<1>", "star1", 22),
        ("star<4>", "star4", 32),
        ("box27", "box27", 32),
    ] {
        let extent = [("in", "(nz + 8) * plane"), ("out", "(nz + 8) * plane")];
        for (block, n) in CASES {
            let set = layout(n);
            let lift = counts(lifted(STENCILS, entry, registers, &extent), block, &set);
            let hand = counts(shipped(trace), block, &set[..3]);
            assert_eq!(
                coalescing(&lift),
                coalescing(&hand),
                "{entry}, block {block:?}, domain {n:?}"
            );
            // same arrays, same places: the caches see the same sectors, in the PTX's load
            // order (the traces list star and box loads in source or SASS order)
            assert_eq!(
                lift.l1.load_miss_sectors, hand.l1.load_miss_sectors,
                "{entry}, block {block:?}, domain {n:?}"
            );
            assert_eq!(
                lift.dram, hand.dram,
                "{entry}, block {block:?}, domain {n:?}"
            );
        }
    }
}

#[test]
fn lifted_jacobi2d_counts_exactly_as_the_hand_written_trace() {
    let kernel = || {
        lifted(
            NEW_KERNELS,
            "jacobi2d",
            32,
            &[
                ("in", "(nx + 2) * (ny + 2)"),
                ("out", "(nx + 2) * (ny + 2)"),
            ],
        )
    };
    for (block, n) in [
        ([32, 8, 1], [64, 64]),
        ([16, 4, 1], [70, 33]),
        ([128, 2, 1], [129, 5]),
    ] {
        let set = [("nx", n[0]), ("ny", n[1])];
        let lift = counts(kernel(), block, &set);
        let hand = counts(shipped("jacobi2d"), block, &set);
        assert_eq!(
            coalescing(&lift),
            coalescing(&hand),
            "block {block:?}, domain {n:?}"
        );
        assert_eq!(lift.dram, hand.dram, "block {block:?}, domain {n:?}");
    }
}

#[test]
fn lifted_star7_coarse_yz_unrolled_counts_as_the_trace_with_nested_loops() {
    // nvcc unrolls the 2 x 2 loops: 32 straight-line accesses; the guard `2 * yb < ny` bounds
    // the y index by cdiv(ny, 2); each thread updates 4 points, so the updates are given
    let options = LiftOptions {
        entry: Some("star7_coarse_yz".into()),
        registers: Some(32),
        updates: Some("nx * ny * nz".into()),
        extents: ["in", "out"]
            .map(|a| (a.to_string(), "(nx + 2) * (ny + 2) * (nz + 2)".to_string()))
            .to_vec(),
        issue_order: ptx_order(),
        ..Default::default()
    };
    let k = lift_file(NEW_KERNELS, &options).unwrap();
    assert!(k.toml.contains(
        "grid = [\"cdiv(nx, blockDim.x)\", \"cdiv(cdiv(ny, 2), blockDim.y)\", \"cdiv(cdiv(nz, 2), blockDim.z)\"]"
    ));
    assert!(
        k.toml
            .contains("guard = \"x < nx && 2 * y < ny && 2 * z < nz\"")
    );
    assert_eq!(k.kernel.static_access_count(), 32);
    for (block, n) in [
        ([32, 4, 2], [64, 32, 16]),
        ([16, 2, 4], [40, 38, 18]),
        ([64, 1, 1], [70, 6, 4]),
    ] {
        let set = [("nx", n[0]), ("ny", n[1]), ("nz", n[2])];
        let lift = counts(k.kernel.clone(), block, &set);
        let hand = counts(shipped("star7-coarse-yz"), block, &set);
        assert_eq!(
            coalescing(&lift),
            coalescing(&hand),
            "block {block:?}, domain {n:?}"
        );
    }
}

#[test]
fn lifted_star1_reads_the_hand_derived_indices() {
    let k = lift_file(
        STENCILS,
        &LiftOptions {
            entry: Some("star<1>".into()),
            registers: Some(22),
            issue_order: ptx_order(),
            ..Default::default()
        },
    )
    .unwrap();
    // c = (z + 4) * plane + (y + 4) * pitch + x + 4; nvcc loads c, c + 1, c - 1, then the
    // pitch and plane neighbours (PTX order, not source order)
    let c = "pitch * y + plane * z + 4 * pitch + 4 * plane + x + 4";
    let expected = [
        format!("{{ load = \"in\", index = \"{c}\" }},  # PTX line 675"),
        format!(
            "{{ load = \"in\", index = \"{}\" }},  # PTX line 676",
            c.replace("x + 4", "x + 5")
        ),
        format!(
            "{{ load = \"in\", index = \"{}\" }},  # PTX line 677",
            c.replace("x + 4", "x + 3")
        ),
        format!(
            "{{ load = \"in\", index = \"{}\" }},  # PTX line 682",
            c.replace("4 * pitch", "3 * pitch")
        ),
        format!(
            "{{ load = \"in\", index = \"{}\" }},  # PTX line 686",
            c.replace("4 * pitch", "5 * pitch")
        ),
        format!(
            "{{ load = \"in\", index = \"{}\" }},  # PTX line 691",
            c.replace("4 * plane", "3 * plane")
        ),
        format!(
            "{{ load = \"in\", index = \"{}\" }},  # PTX line 695",
            c.replace("4 * plane", "5 * plane")
        ),
        format!("{{ store = \"out\", index = \"{c}\" }},  # PTX line 700"),
    ];
    let body: Vec<&str> = k
        .toml
        .lines()
        .skip_while(|l| *l != "body = [")
        .skip(1)
        .map(str::trim)
        .collect();
    assert_eq!(&body[..8], expected.map(|s| s).as_slice());
    assert!(k.toml.contains("guard = \"x < nx && y < ny && z < nz\"\n"));
    assert!(k.toml.contains(
        "grid = [\"cdiv(nx, blockDim.x)\", \"cdiv(ny, blockDim.y)\", \"cdiv(nz, blockDim.z)\"]\n"
    ));
    assert!(k.toml.contains("lattice_updates = \"nx * ny * nz\"\n"));
    // 0.5 * in[c] + 0.1 * (six adds): five adds, one mul, one FMA (two) = 8, the trace's figure
    assert_eq!(k.kernel.flops_per_update, Some(8.0));
    assert_eq!(
        k.kernel.params.keys().collect::<Vec<_>>(),
        ["nx", "ny", "nz", "pitch", "plane"]
    );
    // the footprint of the guarded threads: the largest index read is c + plane at the corner
    // (nx-1, ny-1, nz-1), or c + pitch or c + 1 where plane or pitch is small
    let dims = k.toml.lines().find(|l| l.starts_with("dims")).unwrap();
    assert_eq!(
        dims,
        "dims = [\"max(max(ny * pitch + nz * plane + nx + 3 * pitch + 4 * plane + 4, ny * pitch + nz * plane + nx + 4 * pitch + 3 * plane + 4), ny * pitch + nz * plane + nx + 3 * pitch + 3 * plane + 5)\"]"
    );
}

/// The trace text of a construct kernel (registers given, so no ptxas runs).
fn construct(entry: &str, extents: &[(&str, &str)]) -> String {
    let options = LiftOptions {
        entry: Some(entry.into()),
        registers: Some(32),
        extents: extents
            .iter()
            .map(|(n, e)| (n.to_string(), e.to_string()))
            .collect(),
        issue_order: ptx_order(),
        ..Default::default()
    };
    lift_file(CONSTRUCTS, &options).unwrap().toml
}

fn body(toml: &str) -> Vec<String> {
    toml.lines()
        .skip_while(|l| *l != "body = [")
        .skip(1)
        .take_while(|l| *l != "]")
        .map(|l| l.split("  #").next().unwrap_or(l).trim().to_string())
        .collect()
}

#[test]
fn vector_accesses_keep_the_element_and_move_sixteen_bytes() {
    let t = construct("vec4", &[]);
    // float4 in[i]: element 4 bytes (the .f32 of ld.global.nc.v4.f32), index 4 * i
    assert!(t.contains("name = \"in\"\nelement_bytes = 4\ndims = [\"4 * n\"]"));
    assert_eq!(
        body(&t),
        [
            "{ load = \"in\", index = \"4 * x\", bytes = 16 },",
            "{ store = \"out\", index = \"4 * x\", bytes = 16 },"
        ]
    );
    assert!(t.contains("guard = \"x < n\"\n"));
    assert!(t.contains("grid = [\"cdiv(n, blockDim.x)\", \"1\", \"1\"]"));
}

#[test]
fn a_forward_branch_inside_the_guard_becomes_an_if() {
    let t = construct("branch_if", &[]);
    assert_eq!(
        body(&t),
        [
            "{ load = \"in\", index = \"x\" },",
            "{ if = \"threadIdx.x <= 15\", body = [",
            "{ load = \"in\", index = \"x + 1\" },",
            "] },",
            "{ store = \"out\", index = \"x\" },"
        ]
    );
    // in[i + 1] at i = n - 1 is the largest index read
    assert!(t.contains("name = \"in\"\nelement_bytes = 8\ndims = [\"n + 1\"]"));
    // simulated, the if loads half of each 32-thread warp's x + 1 sectors: 16 doubles = 4 sectors
    let k = Kernel::parse(&t, "branch_if").unwrap();
    let c = counts(k, [32, 1, 1], &[("n", 64)]);
    assert_eq!(c.warp_instructions, 2 * 3);
    assert_eq!(c.thread_accesses, 64 * 2 + 2 * 16);
}

#[test]
fn unsigned_indices_and_a_clamp_lift_with_the_extent_given() {
    let err = lift_file(
        CONSTRUCTS,
        &LiftOptions {
            entry: Some("clamp2d".into()),
            registers: Some(32),
            issue_order: ptx_order(),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "tests/data/ptx/constructs.ptx: line 136: the extent of array 'in' cannot be inferred from index nx * y + min(x + 1, nx - 1); pass --extent in=EXPR (elements)"
    );
    let t = construct("clamp2d", &[("in", "nx * ny")]);
    assert_eq!(
        body(&t),
        [
            "{ load = \"in\", index = \"nx * y + x\" },",
            "{ load = \"in\", index = \"nx * y + min(x + 1, nx - 1)\" },",
            "{ store = \"out\", index = \"nx * y + x\" },"
        ]
    );
    let k = Kernel::parse(&t, "clamp2d").unwrap();
    let c = counts(k, [32, 4, 1], &[("nx", 64), ("ny", 8)]);
    assert_eq!(c.thread_accesses, 3 * 64 * 8);
}

#[test]
fn a_select_stays_whole_in_the_index() {
    // left = i == 0 ? n - 1 : i - 1 compiles to selp of (n, i), minus 1
    let t = construct("periodic", &[("in", "n")]);
    assert_eq!(
        body(&t),
        [
            "{ load = \"in\", index = \"x\" },",
            "{ load = \"in\", index = \"(x == 0 ? n : x) - 1\" },",
            "{ store = \"out\", index = \"x\" },"
        ]
    );
    // two warps of 32 doubles: x reads 8 sectors per warp; the left neighbours of warp 0 are
    // 63 and 0..30 (9 sectors), of warp 1 31..62 (9 sectors)
    let k = Kernel::parse(&t, "periodic").unwrap();
    let c = counts(k, [32, 1, 1], &[("n", 64)]);
    assert_eq!(c.l1.load_sectors, 8 + 9 + 8 + 9);
    assert_eq!(c.l1.store_sectors, 16);
}

#[test]
fn atomics_lift_as_atomics() {
    let t = construct("red_stride", &[]);
    assert_eq!(body(&t), ["{ atomic = \"a\", index = \"2 * x\" },"]);
    assert!(t.contains("dims = [\"2 * n - 1\"]"));
}

#[test]
fn what_cannot_be_lifted_is_one_line_naming_the_ptx_line() {
    let refuse = |file: &str, entry: &str| {
        let options = LiftOptions {
            entry: Some(entry.into()),
            registers: Some(32),
            issue_order: ptx_order(),
            ..Default::default()
        };
        lift_file(file, &options).unwrap_err().to_string()
    };
    // out[i] = next[next[i]]: the second address is a loaded value
    assert_eq!(
        refuse(CONSTRUCTS, "chase"),
        "tests/data/ptx/constructs.ptx: line 204: the address of this load cannot be lifted: it depends on the value loaded at line 201"
    );
    // histogram: atomicAdd(&hist[data[i]], 1)
    assert_eq!(
        refuse(NEW_KERNELS, "histogram"),
        "tests/data/ptx/new_kernels.ptx: line 513: the address of this atomic cannot be lifted: it depends on the value loaded at line 509"
    );
    // star1_zloop's loop, unrolled 4 times with a remainder loop: its exit test compares
    // with a remainder, not affine in the iteration
    let zloop = refuse(STENCILS, "star1_zloop");
    assert!(
        zloop.starts_with("tests/data/ptx/stencils.ptx: line 359: the loop's exit condition (")
            && zloop.ends_with(
                ") is not one comparison affine in the iteration; its trip count cannot be lifted"
            ),
        "{zloop}"
    );
    assert_eq!(
        refuse(STENCILS, "star"),
        "--entry: 'star' names several kernels in tests/data/ptx/stencils.ptx: box27, star1_zloop, copy, fill, star<1>, star<4>"
    );
    assert_eq!(
        refuse(STENCILS, "stra"),
        "--entry: no kernel 'stra' in tests/data/ptx/stencils.ptx; it holds box27, star1_zloop, copy, fill, star<1>, star<4>"
    );
}

mod common;
use common::{gputraffic, rejects, scratch};

#[test]
fn lift_prints_the_trace_that_simulate_reads() {
    let (code, toml, _) = gputraffic(&["lift", STENCILS, "--entry", "copy", "--registers", "10"]);
    assert_eq!(code, 0);
    assert!(toml.starts_with("# Lifted by gputraffic from tests/data/ptx/stencils.ptx, entry _Z4copyPKdPdiiiil.\nname = \"copy\"\n"));
    let dir = scratch("lift-cli");
    let file = dir.join("copy.toml");
    std::fs::write(&file, &toml).unwrap();
    let set = [
        "--domain",
        "40x20x10",
        "--set",
        "pitch=48",
        "--set",
        "plane=1344",
        "--format",
        "json",
    ];
    let from_text =
        gputraffic(&[&["simulate", "--kernel", file.to_str().unwrap()], &set[..]].concat());
    let from_ptx = gputraffic(
        &[
            &[
                "simulate",
                "--kernel",
                STENCILS,
                "--entry",
                "copy",
                "--registers",
                "10",
            ],
            &set[..],
        ]
        .concat(),
    );
    assert_eq!(from_text.0, 0, "{}", from_text.2);
    assert_eq!(from_ptx.0, 0, "{}", from_ptx.2);
    assert_eq!(from_text.1, from_ptx.1);
    // parameters given with --set are not reported as missing
    assert!(!from_ptx.2.contains("default to 0"), "{}", from_ptx.2);
    assert!(
        from_ptx.1.contains("\"thread_accesses\": 16000"),
        "{}",
        from_ptx.1
    );
}

#[test]
fn the_command_line_refuses_what_cannot_be_lifted_in_one_line() {
    rejects(
        &["lift", CONSTRUCTS, "--entry", "chase", "--registers", "8"],
        &[
            "constructs.ptx: line 204",
            "depends on the value loaded at line 201",
        ],
    );
    rejects(
        &["simulate", "--kernel", NEW_KERNELS, "--entry", "histogram"],
        &["new_kernels.ptx: line 513", "atomic cannot be lifted"],
    );
    rejects(
        &["simulate", "--kernel", STENCILS],
        &["stencils.ptx", "holds 6 kernels", "--entry"],
    );
    rejects(
        &["simulate", "--kernel", "star1", "--entry", "copy"],
        &["--kernel", "apply to .ptx and .cu kernels only"],
    );
    rejects(
        &["lift", "traces/star1.toml"],
        &["lift reads .ptx and .cu files only"],
    );
    rejects(
        &["lift", STENCILS, "--entry", "copy", "--grid", "1,2"],
        &["--grid", "not three expressions"],
    );
    let dir = scratch("lift-truncated");
    let cut = dir.join("cut.ptx");
    let text = std::fs::read_to_string(STENCILS).unwrap();
    std::fs::write(&cut, &text[..text.find("$L__BB2_2:").unwrap()]).unwrap();
    rejects(
        &["lift", cut.to_str().unwrap(), "--entry", "copy"],
        &[
            "cut.ptx: line 420",
            "the body of _Z4copyPKdPdiiiil does not end",
        ],
    );
}

/// `.cu` → nvcc → PTX → trace, end to end; skipped without nvcc (scripts/test-cuda.sh installs
/// it from the package index and runs this test).
#[test]
fn cuda_source_lifts_through_nvcc_with_registers_and_names_from_the_toolchain() {
    let Some(nvcc) = gputraffic::input::ptx::nvcc::find_tool("nvcc", &LiftOptions::default())
    else {
        eprintln!("skipped: no nvcc (scripts/install-nvcc.sh installs one)");
        return;
    };
    let dir = scratch("lift-cuda");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_gputraffic"))
            .args(args)
            .env("XDG_CACHE_HOME", &dir)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let nvcc = nvcc.to_str().unwrap();
    let (code, toml, stderr) = run(&[
        "lift",
        "tests/data/ptx/stencils.cu",
        "--entry",
        "star<1>",
        "--nvcc",
        nvcc,
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    // ptxas's count for sm_90 (22 with CUDA 13.0 and 13.5; it may move by a few across versions)
    let registers: u32 = toml
        .lines()
        .find_map(|l| l.strip_prefix("registers_per_thread = "))
        .unwrap()
        .parse()
        .unwrap();
    assert!((16..=32).contains(&registers), "{registers}");
    assert!(toml.contains("guard = \"x < nx && y < ny && z < nz\""));
    let cached = std::fs::read_dir(dir.join("gputraffic/ptx"))
        .unwrap()
        .count();
    // with nvdisasm beside nvcc (scripts/install-nvcc.sh installs it) the loads go in the
    // compiled code's order: star<1>'s seven in one run, the centre sixth as in the SASS of the
    // measured binary (tests/data/h100/sass/star1.sass)
    let nvdisasm = std::path::Path::new(nvcc)
        .with_file_name("nvdisasm")
        .is_file();
    if nvdisasm {
        assert_eq!(toml.matches("ends_run = true").count(), 1, "{toml}");
        let loads: Vec<&str> = toml.lines().filter(|l| l.contains("{ load")).collect();
        assert_eq!(loads.len(), 7);
        assert!(
            loads[5].contains("\"pitch * y + plane * z + 4 * pitch + 4 * plane + x + 4\""),
            "{}",
            loads[5]
        );
        assert!(loads[6].contains("ends_run = true"));
    } else {
        assert!(stderr.contains("PTX order"), "{stderr}");
    }
    // the PTX, ptxas's report and the issue order are cached
    assert_eq!(
        cached,
        2 + usize::from(nvdisasm),
        "the compiled files are cached"
    );
    // the second run reads the cache: the same trace
    let again = run(&[
        "lift",
        "tests/data/ptx/stencils.cu",
        "--entry",
        "star<1>",
        "--nvcc",
        nvcc,
    ]);
    assert_eq!(again.1, toml);
    let set = [
        "--domain",
        "40x20x10",
        "--set",
        "pitch=48",
        "--set",
        "plane=1344",
        "--format",
        "json",
    ];
    let from_cu = run(&[
        &[
            "simulate",
            "--kernel",
            "tests/data/ptx/stencils.cu",
            "--entry",
            "star<1>",
            "--nvcc",
            nvcc,
        ],
        &set[..],
    ]
    .concat());
    assert_eq!(from_cu.0, Some(0), "{}", from_cu.2);
    assert!(
        from_cu.1.contains("\"thread_accesses\": 64000"),
        "{}",
        from_cu.1
    );
}

const LOOPS: &str = "tests/data/ptx/loops.ptx";

#[test]
fn a_counted_loop_lifts_as_a_loop_with_its_trip_count() {
    let options = |entry: &str| LiftOptions {
        entry: Some(entry.into()),
        registers: Some(32),
        issue_order: ptx_order(),
        ..Default::default()
    };
    // for (k = 0; k < 4; k++) s += in[i + k * n]: the counter's test k + 1 < 4 gives 4 trips
    let four = lift_file(LOOPS, &options("four")).unwrap().toml;
    assert_eq!(
        body(&four),
        [
            "{ loop = \"k\", count = \"4\", body = [",
            "{ load = \"in\", index = \"k * n + x\" },",
            "] },",
            "{ store = \"out\", index = \"x\" },"
        ]
    );
    // the largest index is 3 * n + n - 1
    assert!(four.contains("name = \"in\"\nelement_bytes = 4\ndims = [\"4 * n\"]"));
    // for (z = 0; z < nz; z++) out[c] = in[c]: the pointers step by nx * ny elements; the loop
    // runs while z + 1 < nz, entered only where nz >= 1 (which joins the guard)
    let zcopy = lift_file(LOOPS, &options("zcopy")).unwrap();
    assert_eq!(
        body(&zcopy.toml),
        [
            "{ loop = \"k\", count = \"max(0, nz - 1) + 1\", body = [",
            "{ load = \"in\", index = \"k * nx * ny + nx * y + x\" },",
            "{ store = \"out\", index = \"k * nx * ny + nx * y + x\" },",
            "] },"
        ]
    );
    assert!(
        zcopy
            .toml
            .contains("guard = \"nz >= 1 && x < nx && y < ny\"")
    );
    // simulated as the trace a person writes for it
    let hand = r#"
name = "zcopy-by-hand"
[params]
nx = 64
ny = 64
nz = 8
[[arrays]]
name = "in"
element_bytes = 8
dims = ["nx", "ny", "nz"]
[[arrays]]
name = "out"
element_bytes = 8
dims = ["nx", "ny", "nz"]
[launch]
block = [32, 8, 1]
grid = ["cdiv(nx, blockDim.x)", "cdiv(ny, blockDim.y)", "1"]
registers_per_thread = 32
[thread]
let = ["x = blockIdx.x * blockDim.x + threadIdx.x", "y = blockIdx.y * blockDim.y + threadIdx.y"]
guard = "x < nx && y < ny"
lattice_updates = "nx * ny * nz"
body = [
  { loop = "z", count = "nz", body = [
    { load = "in", index = ["x", "y", "z"] },
    { store = "out", index = ["x", "y", "z"] },
  ] },
]
"#;
    for (block, n) in [
        ([32, 8, 1], [64, 64, 8]),
        ([16, 4, 1], [40, 18, 5]),
        ([96, 1, 1], [100, 3, 7]),
    ] {
        let set = [("nx", n[0]), ("ny", n[1]), ("nz", n[2])];
        let lift = counts(zcopy.kernel.clone(), block, &set);
        let by_hand = counts(Kernel::parse(hand, "zcopy.toml").unwrap(), block, &set);
        assert_eq!(
            coalescing(&lift),
            coalescing(&by_hand),
            "block {block:?}, domain {n:?}"
        );
        assert_eq!(lift.dram, by_hand.dram, "block {block:?}, domain {n:?}");
        assert_eq!(lift.thread_accesses, 2 * (n[0] * n[1] * n[2]) as u64);
    }
}

/// The issue order of tests/data/ptx/*.sass: `nvdisasm -g -c` of what ptxas (CUDA 13.5,
/// `-arch=sm_90 -lineinfo`) makes of the fixture's PTX with each instruction tagged by its line.
fn compiled_order(sass: &str) -> Option<Arc<IssueOrder>> {
    let text = std::fs::read_to_string(sass).unwrap();
    Some(Arc::new(gputraffic::input::ptx::sass::parse(&text)))
}

#[test]
fn lifted_star4_in_the_compiled_order_counts_exactly_as_the_hand_written_trace() {
    // The shipped star4 lists its loads in the SASS order and runs of the measured binary
    // (CUDA 13.0); ptxas 13.5 issues the same 25 loads in the same five runs (5, 4, 4, 6, 6), so
    // every cache counter agrees, on the narrow deep blocks where the order matters most too.
    let options = LiftOptions {
        entry: Some("star<4>".into()),
        registers: Some(32),
        extents: vec![
            ("in".into(), "(nz + 8) * plane".into()),
            ("out".into(), "(nz + 8) * plane".into()),
        ],
        issue_order: compiled_order("tests/data/ptx/stencils.sass"),
        ..Default::default()
    };
    let lift = lift_file(STENCILS, &options).unwrap();
    assert_eq!(lift.toml.matches("ends_run = true").count(), 5);
    assert!(lift.warnings.iter().all(|w| !w.contains("PTX order")));
    for (block, n) in [
        ([1, 16, 64], [24, 48, 64]),
        ([32, 8, 4], [64, 32, 16]),
        ([64, 2, 8], [70, 19, 24]),
    ] {
        let set = layout(n);
        let lifted = counts(lift.kernel.clone(), block, &set);
        let hand = counts(shipped("star4"), block, &set[..3]);
        assert_eq!(coalescing(&lifted), coalescing(&hand), "{block:?} {n:?}");
        assert_eq!(lifted.l1, hand.l1, "{block:?} {n:?}");
        assert_eq!(lifted.l2, hand.l2, "{block:?} {n:?}");
        assert_eq!(lifted.dram, hand.dram, "{block:?} {n:?}");
        assert_eq!(lifted.load_rounds, hand.load_rounds, "{block:?} {n:?}");
    }
    // in PTX order with one unbounded run the same launch keeps more in L1
    let ptx = LiftOptions {
        issue_order: ptx_order(),
        ..options
    };
    let unordered = counts(
        lift_file(STENCILS, &ptx).unwrap().kernel,
        [1, 16, 64],
        &layout([24, 48, 64]),
    );
    let hand = counts(shipped("star4"), [1, 16, 64], &layout([24, 48, 64])[..3]);
    assert_ne!(
        unordered.l1.load_miss_sectors, hand.l1.load_miss_sectors,
        "unordered {} hand {}",
        unordered.l1.load_miss_sectors, hand.l1.load_miss_sectors
    );
}

#[test]
fn an_access_the_compiled_code_issues_twice_keeps_the_ptx_order_with_a_warning() {
    // a made-up order in which ptxas issued the first load of copy twice
    let mut order = IssueOrder::new();
    let text = std::fs::read_to_string("tests/data/ptx/stencils.sass").unwrap();
    let real = gputraffic::input::ptx::sass::parse(&text);
    let copy = real
        .iter()
        .find(|(name, _)| name.starts_with("_Z4copy"))
        .unwrap();
    let mut twice = copy.1.clone();
    twice.insert(0, twice[0]);
    order.insert(copy.0.clone(), twice);
    let options = LiftOptions {
        entry: Some("copy".into()),
        registers: Some(10),
        issue_order: Some(Arc::new(order)),
        ..Default::default()
    };
    let lift = lift_file(STENCILS, &options).unwrap();
    assert!(
        lift.warnings
            .iter()
            .any(|w| w.contains("does not issue each access of the PTX once")),
        "{:?}",
        lift.warnings
    );
    assert!(!lift.toml.contains("ends_run"));
}
