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

/// `kernel` bound on the h200 with `block` (else its default) and the parameters `set`.
fn bind(kernel: Kernel, block: Option<[u32; 3]>, set: &[(&str, i64)]) -> gputraffic::Result<Bound> {
    let req = LaunchRequest {
        block,
        set: set.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
        ..Default::default()
    };
    Bound::new(kernel, "h200", &req)
}

/// The counts of the data traffic: the launch's own DRAM reads are left out, since a lifted
/// kernel's code is its SASS's and a trace's is what it says (or nothing).
fn counts(kernel: Kernel, block: [u32; 3], set: &[(&str, i64)]) -> Counts {
    let b = bind(kernel, Some(block), set).unwrap();
    let mut c = gputraffic::sim::simulate(&b.launch, &b.hw, &SimOptions::default()).unwrap();
    c.dram.read_sectors -= gputraffic::sim::launch_read_sectors(&b.launch, &b.hw);
    c
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

/// star7_coarse_yz's lifting options: each thread updates 4 points, so the updates are given;
/// the arrays padded by one on each side.
fn star7_coarse_yz_options() -> LiftOptions {
    LiftOptions {
        entry: Some("star7_coarse_yz".into()),
        registers: Some(32),
        updates: Some("nx * ny * nz".into()),
        extents: ["in", "out"]
            .map(|a| (a.to_string(), "(nx + 2) * (ny + 2) * (nz + 2)".to_string()))
            .to_vec(),
        issue_order: ptx_order(),
        ..Default::default()
    }
}

#[test]
fn lifted_star7_coarse_yz_unrolled_counts_as_the_trace_with_nested_loops() {
    // nvcc unrolls the 2 x 2 loops: 32 straight-line accesses; the guard `2 * yb < ny` bounds
    // the y index by cdiv(ny, 2); each thread updates 4 points, so the updates are given
    let options = star7_coarse_yz_options();
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
    // pitch and plane neighbours (PTX order, not source order). The source's `x + P` is an
    // `int`, computed in 32 bits (add.s32) and widened where the PTX adds it to a neighbour's
    // offset: i32(x + 4) there (y + 4 and z + 4 cannot leave the 32-bit range: y, z < 65535 * 1024)
    let c = "pitch * y + plane * z + 4 * pitch + 4 * plane + x + 4";
    let wrapped =
        |pitch_and_plane: &str| format!("pitch * y + plane * z + i32(x + 4) + {pitch_and_plane}");
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
            wrapped("3 * pitch + 4 * plane")
        ),
        format!(
            "{{ load = \"in\", index = \"{}\" }},  # PTX line 686",
            c.replace("4 * pitch", "5 * pitch")
        ),
        format!(
            "{{ load = \"in\", index = \"{}\" }},  # PTX line 691",
            wrapped("4 * pitch + 3 * plane")
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
    assert!(
        (k.toml).contains("flops_per_update = { fp32 = 0, fp64 = 8 }\n"),
        "{}",
        k.toml
    );
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
        "tests/data/ptx/constructs.ptx: line 136: the extent of array 'in' cannot be inferred from index u32(nx * y + min(x + 1, nx - 1)); pass --extent in=EXPR (elements)"
    );
    let t = construct("clamp2d", &[("in", "nx * ny")]);
    assert_eq!(
        body(&t),
        [
            // unsigned arithmetic, widened modulo 2^32
            "{ load = \"in\", index = \"u32(nx * y + x)\" },",
            "{ load = \"in\", index = \"u32(nx * y + min(x + 1, nx - 1))\" },",
            "{ store = \"out\", index = \"u32(nx * y + x)\" },"
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
            "{ load = \"in\", index = \"i32((x == 0 ? n : x) - 1)\" },",
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
    // 2 * x in int (32 bits), widened: it could leave the 32-bit range
    assert_eq!(body(&t), ["{ atomic = \"a\", index = \"i32(2 * x)\" },"]);
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

/// A `.cu` file's errors name its own lines, not only the PTX's, which the user never wrote
/// (nvcc's `-lineinfo` line table); run by scripts/test-cuda.sh with the test above.
#[test]
fn cuda_source_lifts_through_nvcc_and_what_it_refuses_names_the_source_line() {
    let Some(nvcc) = gputraffic::input::ptx::nvcc::find_tool("nvcc", &LiftOptions::default())
    else {
        eprintln!("skipped: no nvcc (scripts/install-nvcc.sh installs one)");
        return;
    };
    let dir = scratch("lift-cuda-lines");
    let refuse = |file: &str, entry: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_gputraffic"))
            .args([
                "lift",
                file,
                "--entry",
                entry,
                "--nvcc",
                nvcc.to_str().unwrap(),
            ])
            .env("XDG_CACHE_HOME", &dir)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(out.stdout.is_empty());
        String::from_utf8(out.stderr).unwrap()
    };
    // constructs.cu line 26: out[y * nx + x] = in[y * nx + right] - in[y * nx + x]; the PTX
    // line moves with nvcc's version, the source line does not
    let clamp = refuse("tests/data/ptx/constructs.cu", "clamp2d");
    assert!(
        clamp.starts_with("error: tests/data/ptx/constructs.cu: line 26 (PTX line "),
        "{clamp}"
    );
    assert!(
        clamp.contains("the extent of array 'in' cannot be inferred"),
        "{clamp}"
    );
    // control.cu line 58: if (in[k * nx + x] < 0) break; inside the loop of line 57
    let search = refuse("tests/data/ptx/control.cu", "search");
    assert!(
        search.starts_with("error: tests/data/ptx/control.cu: line 58 (PTX line "),
        "{search}"
    );
    assert!(
        search.contains("a floating-point comparison (line 58, PTX line "),
        "{search}"
    );
    assert_eq!(search.lines().count(), 1, "{search}");
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
fn a_copied_access_takes_its_first_place_a_dropped_load_goes_a_missing_store_keeps_ptx_order() {
    let text = std::fs::read_to_string("tests/data/ptx/stencils.sass").unwrap();
    let real = gputraffic::input::ptx::sass::parse(&text);
    let (name, copy) = real
        .functions
        .iter()
        .find(|(name, _)| name.starts_with("_Z4copy"))
        .unwrap();
    let lift = |issued: Vec<gputraffic::input::ptx::sass::Issued>| {
        let options = LiftOptions {
            entry: Some("copy".into()),
            registers: Some(10),
            issue_order: Some(Arc::new(IssueOrder::from([(name.clone(), issued)]))),
            ..Default::default()
        };
        lift_file(STENCILS, &options).unwrap()
    };
    // ptxas issuing copy's load twice (as when it unrolls a loop further): still its order
    let mut twice = copy.clone();
    twice.push(twice[0]);
    let ordered = lift(twice);
    assert!(ordered.warnings.iter().all(|w| !w.contains("one for one")));
    assert!(ordered.toml.contains("ends_run = true"));
    // a load the SASS does not issue, which no wider load covers (its value unused): not
    // simulated, with a warning, and the rest in the compiled order
    let dropped = lift(copy[1..].to_vec());
    assert!(
        dropped
            .warnings
            .iter()
            .any(|w| w.contains("issues no instruction for 1 global load(s)")),
        "{:?}",
        dropped.warnings
    );
    assert!(!dropped.toml.contains("{ load"), "{}", dropped.toml);
    // a store the SASS does not issue (merged away): PTX order, unbounded runs, a warning
    let missing = lift(copy[..copy.len() - 1].to_vec());
    assert!(
        missing
            .warnings
            .iter()
            .any(|w| w.contains("does not issue the accesses of the PTX one for one")),
        "{:?}",
        missing.warnings
    );
    assert!(!missing.toml.contains("ends_run"));
}

/// Lifting options for a kernel whose grid and updates cannot be inferred from a guard.
fn lift_with(
    file: &str,
    entry: &str,
    registers: u32,
    grid: [&str; 3],
    updates: &str,
    extents: &[(&str, &str)],
) -> gputraffic::input::ptx::Lifted {
    let options = LiftOptions {
        entry: Some(entry.into()),
        registers: Some(registers),
        grid: Some(grid.map(String::from)),
        updates: Some(updates.into()),
        extents: extents
            .iter()
            .map(|(n, e)| (n.to_string(), e.to_string()))
            .collect(),
        issue_order: ptx_order(),
        ..Default::default()
    };
    lift_file(file, &options).unwrap()
}

/// star1_zloop of the stencils fixture, lifted with its grid (one block per `cz` planes), its
/// register count, its updates and its arrays' extents (4 halo planes on each side).
fn lifted_star1_zloop() -> gputraffic::input::ptx::Lifted {
    lift_with(
        STENCILS,
        "star1_zloop",
        34,
        [
            "cdiv(nx, blockDim.x)",
            "cdiv(ny, blockDim.y)",
            "cdiv(nz, cz)",
        ],
        "nx * ny * nz",
        &[("in", "(nz + 8) * plane"), ("out", "(nz + 8) * plane")],
    )
}

#[test]
fn lifted_star1_zloop_unrolled_with_a_remainder_counts_as_the_hand_written_trace() {
    // for (k = 0; k < cz && z0 + k < nz; k++), unrolled by nvcc: N = min(cz, nz - z0) planes
    // as a loop of N / 4 trips of four planes, then a remainder loop of N % 4 planes
    let lift = lifted_star1_zloop();
    let body = body(&lift.toml);
    assert_eq!(body.iter().filter(|l| l.starts_with("{ loop")).count(), 2);
    assert_eq!(
        body.iter().filter(|l| l.starts_with("{ load")).count(),
        2 + 4 * 5 + 5
    );
    assert_eq!(
        body.iter().filter(|l| l.starts_with("{ store")).count(),
        4 + 1
    );
    // the remainder loop's planes follow the 4 * trips_k planes of the main loop
    // trips of both loops: N = -max(z0 - nz, -cz), the main loop entered where N >= 4
    let n = "max(blockIdx.z * cz - nz, -cz)";
    assert!(
        lift.toml.contains(&format!(
            "\"trips_k = ({n} + 4 <= 0 ? (-((-{n}) % 4) - {n}) / 4 : 0)\"]"
        )),
        "{}",
        lift.toml
    );
    assert!(lift.toml.contains(&format!(
        "{{ loop = \"k1\", count = \"((-{n}) % 4)\", body = ["
    )));
    assert!(lift.toml.contains("4 * plane * trips_k"), "{}", lift.toml);
    assert!(
        lift.toml
            .contains("guard = \"cz >= 1 && blockIdx.z * cz < nz && x < nx && y < ny\"")
    );
    // cz from 1 (no main loop) to 16; nz not a multiple of cz: the last blocks run fewer planes
    for (block, n, cz) in [
        ([32, 8, 1], [64, 32, 16], 16),
        ([32, 4, 1], [40, 19, 18], 4),
        ([64, 2, 1], [70, 9, 18], 5),
        ([8, 8, 1], [40, 38, 13], 7),
        ([128, 1, 1], [130, 7, 5], 1),
        ([16, 4, 1], [33, 10, 11], 3),
    ] {
        let mut set = layout(n).to_vec();
        set.push(("cz", cz));
        let lifted = counts(lift.kernel.clone(), block, &set);
        let hand = counts(
            shipped("star1-zloop"),
            block,
            &[&set[..3], &set[5..]].concat(),
        );
        let what = format!("block {block:?}, domain {n:?}, cz {cz}");
        assert_eq!(coalescing(&lifted), coalescing(&hand), "{what}");
        // every plane of every column once: 2 + 6 * planes accesses per thread
        assert_eq!(
            lifted.thread_accesses,
            (n[0] * n[1] * (2 * ((n[2] + cz - 1) / cz) + 6 * n[2])) as u64,
            "{what}"
        );
        // the same sectors reach the L2 and DRAM (the load order differs: the PTX loads c before
        // c - plane and the in-plane neighbours before c + plane; the trace in source order)
        assert_eq!(lifted.dram, hand.dram, "{what}");
        // each block loads the same distinct sectors and lines: the lifted program's counted
        // whole by its loads' fingerprints (its remainder loop's indices are not affine), the
        // trace's by block keys, and both as counting them load by load gives
        let footprint = |c: &Counts| [c.l1.block_unique_load_sectors, c.l1.block_unique_load_lines];
        assert_eq!(footprint(&lifted), footprint(&hand), "{what}");
        let b = bind(lift.kernel.clone(), Some(block), &set).unwrap();
        let cx = gputraffic::sim::sm_stage::GenContext::new(&b.launch, true);
        assert!(
            matches!(
                cx.whole_block_keys(&b.launch),
                Some(gputraffic::sim::sm_stage::WholeBlockKeys::Fingerprint { .. })
            ),
            "{what}"
        );
        let load_by_load = SimOptions {
            footprints_load_by_load: true,
            ..SimOptions::default()
        };
        let mut reference = gputraffic::sim::simulate(&b.launch, &b.hw, &load_by_load).unwrap();
        // `counts` leaves the launch's own reads out
        reference.dram.read_sectors -= gputraffic::sim::launch_read_sectors(&b.launch, &b.hw);
        assert_eq!(format!("{reference:?}"), format!("{lifted:?}"), "{what}");
    }
}

#[test]
fn lifted_transposes_count_as_the_hand_written_traces() {
    // transpose_naive: the guard gives the grid
    let naive = lifted(
        NEW_KERNELS,
        "transpose_naive",
        32,
        &[("in", "nx * ny"), ("out", "nx * ny")],
    );
    for (block, n) in [
        ([32, 8, 1], [64, 64]),
        ([16, 4, 1], [70, 33]),
        ([128, 2, 1], [129, 5]),
    ] {
        let set = [("nx", n[0]), ("ny", n[1])];
        let lift = counts(naive.clone(), block, &set);
        let hand = counts(shipped("transpose-naive"), block, &set);
        assert_eq!(
            coalescing(&lift),
            coalescing(&hand),
            "naive {block:?} {n:?}"
        );
        assert_eq!(lift.dram, hand.dram, "naive {block:?} {n:?}");
        assert_eq!(
            lift.l1.load_miss_sectors, hand.l1.load_miss_sectors,
            "naive {block:?} {n:?}"
        );
    }
    // transpose_tiled: for (j = 0; j < 32; j += R), R = blockDim.y, runs cdiv(32, R) rows,
    // as (31 / R + 1) / 4 trips of four rows (entered where R <= 10) and (31 / R + 1) % 4 more;
    // its global accesses and its shared tile
    let tiled = lift_with(
        NEW_KERNELS,
        "transpose_tiled",
        32,
        ["nx / 32", "ny / 32", "1"],
        "nx * ny",
        &[("in", "nx * ny"), ("out", "nx * ny")],
    );
    assert!(tiled.toml.contains(
        "\"trips_k = (blockDim.y <= 10 ? (-(((31 / blockDim.y) + 1) % 4) + (31 / blockDim.y) + 1) / 4 : 0)\""
    ));
    let mut shapes = 0;
    for rows in [1, 2, 4, 8, 16, 32] {
        for n in [[64, 64], [96, 32], [128, 160]] {
            let block = [32, rows, 1];
            let set = [("nx", n[0]), ("ny", n[1])];
            let lift = counts(tiled.kernel.clone(), block, &set);
            let hand = counts(shipped("transpose-tiled"), block, &set);
            assert_eq!(
                coalescing(&lift),
                coalescing(&hand),
                "tiled {block:?} {n:?}"
            );
            // each element read and written once globally, once through the tile
            assert_eq!(lift.thread_accesses, 4 * (n[0] * n[1]) as u64);
            assert_eq!(
                shared_counts(&lift),
                shared_counts(&hand),
                "tiled {block:?} {n:?}"
            );
            assert_eq!(lift.dram, hand.dram, "tiled {block:?} {n:?}");
            assert_eq!(
                lift.l1.load_miss_sectors, hand.l1.load_miss_sectors,
                "tiled {block:?} {n:?}"
            );
            shapes += 1;
        }
    }
    assert_eq!(shapes, 18);
}

const CONTROL: &str = "tests/data/ptx/control.ptx";

fn control(entry: &str) -> gputraffic::input::ptx::Lifted {
    lift_file(
        CONTROL,
        &LiftOptions {
            entry: Some(entry.into()),
            registers: Some(32),
            extents: [("in", "nx * 64"), ("out", "nx * 64")]
                .map(|(n, e)| (n.to_string(), e.to_string()))
                .to_vec(),
            issue_order: ptx_order(),
            ..Default::default()
        },
    )
    .unwrap()
}

#[test]
fn a_loop_unrolled_with_a_remainder_lifts_as_two_loops() {
    let k = control("unrolled");
    // for (k = 0; k < n; k++) s += in[x + k * nx]: n / 4 trips of four loads (entered where
    // n >= 4), then n % 4 trips (entered where it is not 0) after the 4 * trips_k rows
    assert!(k.toml.contains(
        "\"trips_k = (n >= 4 && n >= 1 ? (-(n % 4) + n) / 4 : 0)\", \"trips_k1 = (n >= 1 && (n % 4) != 0 ? (n % 4) : 0)\""
    ), "{}", k.toml);
    assert_eq!(
        body(&k.toml),
        [
            "{ loop = \"k\", count = \"trips_k\", body = [",
            "{ load = \"in\", index = \"4 * k * nx + x\" },",
            "{ load = \"in\", index = \"4 * k * nx + nx + x\" },",
            "{ load = \"in\", index = \"4 * k * nx + 2 * nx + x\" },",
            "{ load = \"in\", index = \"4 * k * nx + 3 * nx + x\" },",
            "] },",
            "{ loop = \"k1\", count = \"trips_k1\", body = [",
            "{ load = \"in\", index = \"k1 * nx + i32(4 * nx * trips_k + x)\" },",
            "] },",
            "{ store = \"out\", index = \"x\" },",
        ]
    );
    // each thread loads rows 0..n in order: n loads of one warp-wide row, whatever n % 4
    let hand = r#"
name = "unrolled-by-hand"
[params]
nx = 64
n = 4
[[arrays]]
name = "in"
element_bytes = 4
dims = ["nx * 64"]
[[arrays]]
name = "out"
element_bytes = 4
dims = ["nx * 64"]
[launch]
block = [32, 1, 1]
grid = ["cdiv(nx, blockDim.x)", "1", "1"]
registers_per_thread = 32
[thread]
let = ["x = blockIdx.x * blockDim.x + threadIdx.x"]
guard = "x < nx"
lattice_updates = "nx"
body = [
  { loop = "k", count = "n", body = [{ load = "in", index = "x + k * nx" }] },
  { store = "out", index = "x" },
]
"#;
    for n in [0, 1, 3, 4, 5, 7, 8, 13] {
        for (block, nx) in [([32, 1, 1], 64), ([96, 1, 1], 100)] {
            let set = [("nx", nx), ("n", n)];
            let lift = counts(k.kernel.clone(), block, &set);
            let by_hand = counts(Kernel::parse(hand, "hand.toml").unwrap(), block, &set);
            assert_eq!(coalescing(&lift), coalescing(&by_hand), "n {n}, nx {nx}");
            assert_eq!(lift.thread_accesses, (nx * (n + 1)) as u64, "n {n}");
            assert_eq!(lift.l1.load_miss_sectors, by_hand.l1.load_miss_sectors);
            assert_eq!(lift.dram, by_hand.dram, "n {n}, nx {nx}");
        }
    }
}

#[test]
fn nested_loops_lift_with_the_outer_variable_in_the_inner_bound_and_address() {
    let k = control("triangle");
    // for (j < m) for (i <= j) s += in[(j * m + i) * nx + x]: the inner loop runs j + 1 times
    // (its test i <= j needs no entry test: j >= 0)
    assert_eq!(
        body(&k.toml),
        [
            "{ loop = \"k\", count = \"trips_k\", body = [",
            "{ loop = \"k1\", count = \"max(0, k) + 1\", body = [",
            "{ load = \"in\", index = \"k1 * nx + i32(k * m * nx + x)\" },",
            "] },",
            "] },",
            "{ store = \"out\", index = \"x\" },",
        ]
    );
    assert!(
        k.toml
            .contains("\"trips_k = (m >= 1 ? max(0, m - 1) + 1 : 0)\"")
    );
    for m in [0, 1, 2, 5] {
        let c = counts(k.kernel.clone(), [32, 1, 1], &[("nx", 64), ("m", m)]);
        // m (m + 1) / 2 loads and a store per thread, one warp instruction per 32 threads
        assert_eq!(
            c.thread_accesses,
            64 * (m * (m + 1) / 2 + 1) as u64,
            "m {m}"
        );
        assert_eq!(
            c.warp_instructions,
            2 * (m * (m + 1) / 2 + 1) as u64,
            "m {m}"
        );
    }
}

#[test]
fn branches_inside_a_loop_become_ifs_inside_it() {
    // if (z % 2 == 0) out[z * nx + x] = in[z * nx + x]: the loop variable in the condition
    let alternate = control("alternate");
    assert_eq!(
        body(&alternate.toml),
        [
            "{ loop = \"k\", count = \"max(0, nz - 1) + 1\", body = [",
            "{ if = \"(k % 2) != 1\", body = [",
            "{ load = \"in\", index = \"i32(k * nx + x)\" },",
            "{ store = \"out\", index = \"i32(k * nx + x)\" },",
            "] },",
            "] },",
        ]
    );
    // the guard holds only what is tested before the loop
    assert!(alternate.toml.contains("guard = \"nz >= 1 && x < nx\""));
    for nz in [1, 4, 7] {
        let c = counts(
            alternate.kernel.clone(),
            [32, 1, 1],
            &[("nx", 64), ("nz", nz)],
        );
        // the even planes: cdiv(nz, 2) loads and stores per thread
        assert_eq!(c.thread_accesses, 64 * 2 * ((nz + 1) / 2) as u64, "nz {nz}");
    }
    // if (threadIdx.x < lim) s += in[…]: a condition on the thread inside the loop
    let lanes = control("lanes");
    assert_eq!(
        body(&lanes.toml),
        [
            "{ loop = \"k\", count = \"max(0, nz - 1) + 1\", body = [",
            "{ if = \"threadIdx.x < lim\", body = [",
            "{ load = \"in\", index = \"i32(k * nx + x)\" },",
            "] },",
            "{ store = \"out\", index = \"i32(k * nx + x)\" },",
            "] },",
        ]
    );
    let c = counts(
        lanes.kernel.clone(),
        [32, 1, 1],
        &[("nx", 64), ("nz", 3), ("lim", 8)],
    );
    // 8 lanes of each warp load (one sector of doubles), all 32 store (8 sectors)
    assert_eq!(c.thread_accesses, 3 * (2 * 8 + 64));
    assert_eq!(c.l1.load_sectors, 3 * 2 * 2);
    assert_eq!(c.l1.store_sectors, 3 * 2 * 8);
}

#[test]
fn microbenchmarks_lift_where_affine_and_pointer_chases_are_refused() {
    // validation/*.cu compiled as tests/data/ptx/{latency,stream,atomics_probe,warp_timeline}.ptx
    let refuse = |file: &str, entry: &str| {
        let options = LiftOptions {
            entry: Some(entry.into()),
            registers: Some(32),
            issue_order: ptx_order(),
            ..Default::default()
        };
        lift_file(file, &options).unwrap_err().to_string()
    };
    // latency.cu: p = (const T*)*p, the chase
    assert_eq!(
        refuse("tests/data/ptx/latency.ptx", "lat_chase"),
        "tests/data/ptx/latency.ptx: line 209: the address of this load cannot be lifted: it depends on the value loaded at line 206"
    );
    // micro.cuh: base[offs[i] / 8] = …, the chain's set-up (a grid-stride loop)
    assert_eq!(
        refuse("tests/data/ptx/latency.ptx", "chain_scatter"),
        "tests/data/ptx/latency.ptx: line 93: the address of this store cannot be lifted: it depends on the value loaded at line 90"
    );
    // stream.cu: if (i < n) a[i] = 2 * a[i] + 1
    let stream = lift_file(
        "tests/data/ptx/stream.ptx",
        &LiftOptions {
            registers: Some(32),
            issue_order: ptx_order(),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        body(&stream.toml),
        [
            "{ load = \"a\", index = \"x\" },",
            "{ store = \"a\", index = \"x\" },"
        ]
    );
    let c = counts(stream.kernel, [256, 1, 1], &[("n", 1000)]);
    assert_eq!(c.thread_accesses, 2000);
    assert_eq!(c.l1.store_sectors, 250);
    // atomics_probe.cu: atomicAdd(&a[i], 1) as a statement
    let red = lift_file(
        "tests/data/ptx/atomics_probe.ptx",
        &LiftOptions {
            entry: Some("red_distinct".into()),
            registers: Some(32),
            issue_order: ptx_order(),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(body(&red.toml), ["{ atomic = \"a\", index = \"x\" },"]);
    // warp_timeline.cu: for (i = x; i < n; i += gridDim.x * blockDim.x) a[i] = v, unrolled by
    // nvcc as a remainder loop of (trips % 4) first, then four stores per trip
    for (blocks, block, n) in [(4, 64, 1000), (3, 32, 96), (2, 128, 257), (5, 32, 3)] {
        let fill = lift_file(
            "tests/data/ptx/warp_timeline.ptx",
            &LiftOptions {
                entry: Some("fill".into()),
                registers: Some(32),
                grid: Some([blocks.to_string(), "1".into(), "1".into()]),
                extents: vec![("a".into(), "n".into())],
                updates: Some("n".into()),
                issue_order: ptx_order(),
                ..Default::default()
            },
        )
        .unwrap();
        let c = counts(fill.kernel, [block, 1, 1], &[("n", n)]);
        // every element stored once, in warp-wide runs of 32 doubles (8 sectors)
        assert_eq!(c.thread_accesses, n as u64, "{blocks} x {block}, n {n}");
        assert_eq!(
            c.l1.store_sectors,
            (n as u64).div_ceil(4),
            "{blocks} x {block}, n {n}"
        );
    }
}

/// A grid-stride loop's test bounds its index, so the arrays' extents are inferred without
/// `--extent`, whatever grid the user launches (tests/data/ptx/gridstride.cu).
#[test]
fn a_grid_stride_loops_test_gives_its_arrays_extents() {
    let lift = |entry: &str, blocks: u64| {
        lift_file(
            "tests/data/ptx/gridstride.ptx",
            &LiftOptions {
                entry: Some(entry.into()),
                registers: Some(16),
                grid: Some([blocks.to_string(), "1".into(), "1".into()]),
                updates: Some("n".into()),
                issue_order: ptx_order(),
                ..Default::default()
            },
        )
        .unwrap()
    };
    let dims = |toml: &str| -> Vec<String> {
        (toml.lines())
            .filter_map(|l| l.strip_prefix("dims = "))
            .map(str::to_string)
            .collect()
    };
    // y[i] = a * x[i] + y[i]: both arrays n elements; in[i] + in[i + 1]: in one more
    assert_eq!(dims(&lift("saxpy", 4).toml), ["[\"n\"]", "[\"n\"]"]);
    assert_eq!(dims(&lift("shifted", 4).toml), ["[\"n + 1\"]", "[\"n\"]"]);
    // every element once, within the arrays (an access past them is an error), for grids of
    // fewer, as many and more threads than elements
    for (blocks, block, n) in [
        (4, 64, 1000),
        (3, 32, 96),
        (2, 128, 257),
        (5, 32, 3),
        (1, 32, 1),
    ] {
        let c = counts(lift("saxpy", blocks).kernel, [block, 1, 1], &[("n", n)]);
        assert_eq!(c.thread_accesses, 3 * n as u64, "{blocks} x {block}, n {n}");
        let c = counts(lift("shifted", blocks).kernel, [block, 1, 1], &[("n", n)]);
        assert_eq!(c.thread_accesses, 3 * n as u64, "{blocks} x {block}, n {n}");
    }
}

#[test]
fn early_exits_and_accesses_under_loaded_conditions_are_refused_and_a_division_test_joins() {
    let refuse = |entry: &str| {
        let options = LiftOptions {
            entry: Some(entry.into()),
            registers: Some(32),
            issue_order: ptx_order(),
            ..Default::default()
        };
        lift_file(CONTROL, &options).unwrap_err().to_string()
    };
    // for (; k < n; k++) if (in[k * nx + x] < 0) break;
    assert_eq!(
        refuse("search"),
        "tests/data/ptx/control.ptx: line 322: a branch out of the loop at line 315 (an early exit or `break`) is not lifted: its condition cannot be lifted: a floating-point comparison (line 321) is not lifted"
    );
    // if (v == -1.0f) out[0] = v, v loaded
    assert_eq!(
        refuse("sink"),
        "tests/data/ptx/control.ptx: line 370: whether this store runs cannot be lifted: the condition of the branch at line 366 cannot be lifted: a floating-point comparison (line 365) is not lifted"
    );
    // in[i / w] with 64-bit i and w: nvcc's test (i | w) >> 32 == 0 picks a 32- or a 64-bit
    // division; the lifter cannot read that test, but both paths give i / w
    let per_row = lift_file(
        CONTROL,
        &LiftOptions {
            entry: Some("per_row".into()),
            registers: Some(32),
            extents: vec![("in".into(), "n".into()), ("out".into(), "n".into())],
            issue_order: ptx_order(),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        body(&per_row.toml),
        [
            "{ load = \"in\", index = \"(x / w)\" },",
            "{ store = \"out\", index = \"x\" },"
        ]
    );
    assert!(per_row.toml.contains("guard = \"x < n\"\n"));
    // 64 threads, rows of w = 16: the loads of a warp read 2 neighbouring doubles (one sector)
    let c = counts(per_row.kernel, [32, 1, 1], &[("n", 64), ("w", 16)]);
    assert_eq!(c.thread_accesses, 2 * 64);
    assert_eq!(c.l1.load_sectors, 2);
    assert_eq!(c.l1.store_sectors, 2 * 8);
}

/// The shared-memory counters of a simulation.
fn shared_counts(c: &Counts) -> [u64; 6] {
    [
        c.l1.shared_load_requests,
        c.l1.shared_store_requests,
        c.l1.shared_load_wavefronts,
        c.l1.shared_store_wavefronts,
        c.l1.shared_load_bank_conflicts,
        c.l1.shared_store_bank_conflicts,
    ]
}

#[test]
fn a_helpers_shared_array_declared_outside_the_entries_lifts_with_its_size_and_its_warp_slots() {
    // tests/data/ptx/warp_slots.cu: two kernels inline one helper, so nvcc declares its
    // `__shared__ float slots[8]` once, before both entries, and addresses warp w's slot as
    // (threadIdx.x >> 3) & 0x1ffffffc, a mask of bits 2-28 (nvcc 13.5; was refused, "not a
    // low-bit mask", and the array's size unknown)
    let options = LiftOptions {
        entry: Some("warp_slots".into()),
        registers: Some(16),
        grid: Some(["4".into(), "1".into(), "1".into()]),
        updates: Some("1024".into()),
        extents: vec![("in".into(), "1024".into()), ("out".into(), "32".into())],
        issue_order: ptx_order(),
        ..Default::default()
    };
    let l = lift_file("tests/data/ptx/warp_slots.ptx", &options).unwrap();
    assert!(
        l.toml
            .contains("[[shared]]\nname = \"slots\"\nelement_bytes = 4\ndims = [\"8\"]"),
        "{}",
        l.toml
    );
    let store = body(&l.toml)
        .into_iter()
        .find(|s| s.starts_with("{ store = \"slots\""))
        .unwrap();
    assert_eq!(
        store,
        "{ store = \"slots\", index = \"(((threadIdx.x / 8) / 4) % 134217728)\" },"
    );
    // 256 threads: lane 0 of each of the 8 warps stores its slot (8 different words, one per
    // warp: one shared store request and wavefront each); the 8 threads of warp 0 then read
    // the 8 slots, 8 banks, in one wavefront
    let c = counts(l.kernel, [256, 1, 1], &[]);
    assert_eq!(shared_counts(&c), [4, 4 * 8, 4, 4 * 8, 0, 0]);
}

#[test]
fn tiled_kernels_lift_with_their_shared_memory_and_count_as_the_hand_written_traces() {
    // transpose_tiled: the 32 x 33 tile (declared static: 4224 bytes = 1056 floats), its stores,
    // the barrier and its transposed loads; the trace writes the tile 2-D, the lift 1-D
    let tiled = lift_with(
        NEW_KERNELS,
        "transpose_tiled",
        32,
        ["nx / 32", "ny / 32", "1"],
        "nx * ny",
        &[("in", "nx * ny"), ("out", "nx * ny")],
    );
    assert!(
        tiled
            .toml
            .contains("[[shared]]\nname = \"tile\"\nelement_bytes = 4\ndims = [\"1056\"]")
    );
    assert_eq!(tiled.toml.matches("{ sync = true }").count(), 1);
    assert!(!tiled.toml.contains("shared_bytes_per_block"));
    // (counted against the trace in lifted_transposes_count_as_the_hand_written_traces); the
    // padded tile is conflict-free: one wavefront per shared instruction
    let lift = counts(tiled.kernel, [32, 8, 1], &[("nx", 128), ("ny", 96)]);
    assert_eq!(lift.l1.shared_load_requests, 128 * 96 / 32);
    assert_eq!(lift.l1.shared_load_wavefronts, lift.l1.shared_load_requests);
    assert_eq!(
        lift.l1.shared_store_wavefronts,
        lift.l1.shared_store_requests
    );
    assert_eq!(lift.l1.shared_load_bank_conflicts, 0);
    // jacobi2d_shared: a dynamic (extern) tile, its size inferred from the threads' indices;
    // in the compiled order, which loads the centre and the four halo values before storing
    // them, each halo load and store predicated (`@!P1 LDG`, `@!P1 STS`)
    let options = LiftOptions {
        registers: Some(26),
        issue_order: compiled_order("tests/data/ptx/shared_stencil.sass"),
        ..Default::default()
    };
    let stencil = lift_file("tests/data/ptx/shared_stencil.ptx", &options).unwrap();
    // every thread reaches the barrier and the shared loads after it: the paths through the
    // four edge `if`s join to always true, so they stand at the body's top level, unconditional
    let body = body(&stencil.toml);
    let sync = body
        .iter()
        .position(|l| l.starts_with("{ sync = true }"))
        .unwrap();
    let ifs: Vec<&String> = body.iter().filter(|l| l.starts_with("{ if")).collect();
    assert_eq!(ifs.len(), 8, "{}", stencil.toml);
    assert!(
        ifs.iter()
            .all(|l| l.contains(", predicated = true, body = [")),
        "{}",
        stencil.toml
    );
    assert!(body[sync..].iter().all(|l| !l.starts_with("{ if")));
    assert_eq!(body.len() - sync, 1 + 5 + 1, "{}", stencil.toml);
    assert!(
        stencil.toml.contains("\n  { sync = true },"),
        "{}",
        stencil.toml
    );
    assert!(stencil.toml.contains(
        "[[shared]]\nname = \"tile\"\nelement_bytes = 4\ndims = [\"blockDim.x * blockDim.y + 2 * blockDim.x + 2 * blockDim.y + 3\"]"
    ));
    for (block, n) in [([32, 8, 1], [64, 40]), ([16, 16, 1], [50, 37])] {
        let set = [("nx", n[0]), ("ny", n[1])];
        let lift = counts(stencil.kernel.clone(), block, &set);
        let hand = counts(shipped("jacobi2d-shared"), block, &set);
        assert_eq!(coalescing(&lift), coalescing(&hand), "{block:?} {n:?}");
        assert_eq!(
            shared_counts(&lift),
            shared_counts(&hand),
            "{block:?} {n:?}"
        );
        // a warp with no edge lane issues the halo's loads and stores with no lane active
        assert!(lift.l1.predicated_off > 0);
        assert_eq!(lift.l1.predicated_off, hand.l1.predicated_off, "{block:?}");
    }
}

/// The launch's floating-point operations per update of `entry` in `file` lifted with
/// `extents`, bound on the h200 with `set`, and the lift's warnings.
fn lifted_flops(
    file: &str,
    entry: &str,
    extents: &[(&str, &str)],
    set: &[(&str, i64)],
) -> (Option<gputraffic::input::trace::FpOps>, Vec<String>) {
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
    let lifted = lift_file(file, &options).unwrap();
    let req = LaunchRequest {
        set: set.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
        ..Default::default()
    };
    let b = Bound::new(lifted.kernel, "h200", &req).unwrap();
    (b.launch.flops_per_update, lifted.warnings)
}

#[test]
fn flops_are_counted_per_precision_with_an_fma_as_two() {
    use gputraffic::input::trace::FpOps;
    // star<1> on doubles: five adds, one mul, one FMA = 8 double-precision operations
    let (star1, _) = lifted_flops(
        STENCILS,
        "star<1>",
        &[],
        &[("pitch", 264), ("plane", 264 * 264)],
    );
    assert_eq!(
        star1,
        Some(FpOps {
            fp32: 0.0,
            fp64: 8.0
        })
    );
    // `four`: s += in[i + k * n] over a #pragma unroll 1 loop of 4 trips, on floats
    let (four, warnings) = lifted_flops("tests/data/ptx/loops.ptx", "four", &[], &[("n", 1000)]);
    assert_eq!(
        four,
        Some(FpOps {
            fp32: 4.0,
            fp64: 0.0
        })
    );
    assert!(
        warnings.iter().all(|w| !w.contains("floating-point")),
        "{warnings:?}"
    );
}

#[test]
fn flops_in_loops_of_a_runtime_trip_count_follow_the_count() {
    use gputraffic::input::trace::FpOps;
    // `unrolled`: n float adds, as nvcc's loop of n / 4 trips of four and its remainder loop of
    // n % 4 trips, each entered only where its count is not 0
    for n in [0, 1, 3, 4, 7, 10, 33] {
        let (flops, _) = lifted_flops(
            "tests/data/ptx/control.ptx",
            "unrolled",
            &[("in", "(n + 1) * nx")],
            &[("n", n)],
        );
        assert_eq!(
            flops,
            Some(FpOps {
                fp32: n as f64,
                fp64: 0.0
            }),
            "n = {n}"
        );
    }
}

#[test]
fn flops_in_a_loop_whose_trips_depend_on_the_block_are_counted_per_store_as_the_trace_gives_them() {
    use gputraffic::input::trace::FpOps;
    // star1_zloop: each block runs min(cz, nz - blockIdx.z * cz) planes, nvcc's main loop four
    // per trip (32 operations, 4 stores), its remainder loop one (8, 1), nothing outside: 8
    // double-precision operations per updated point whatever the trips, the trace's 8
    let lift = lifted_star1_zloop();
    assert!(
        lift.toml
            .contains("flops_per_update = { fp32 = 0, fp64 = 8 }\n"),
        "{}",
        lift.toml
    );
    assert!(
        lift.warnings.iter().all(|w| !w.contains("floating-point")),
        "{:?}",
        lift.warnings
    );
    let req = LaunchRequest {
        set: [("cz", 5), ("pitch", 264), ("plane", 264 * 264)]
            .map(|(n, v)| (n.to_string(), v))
            .into(),
        ..Default::default()
    };
    let lifted = Bound::new(lift.kernel, "h200", &req).unwrap();
    let trace_req = LaunchRequest {
        set: [("cz".to_string(), 5)].into(),
        ..Default::default()
    };
    let shipped = Bound::new(shipped("star1-zloop"), "h200", &trace_req).unwrap();
    assert_eq!(
        lifted.launch.flops_per_update,
        Some(FpOps {
            fp32: 0.0,
            fp64: 8.0
        })
    );
    assert_eq!(
        lifted.launch.flops_per_update,
        shipped.launch.flops_per_update
    );
}

#[test]
fn flops_that_are_not_the_same_per_store_are_left_out_with_a_warning() {
    // triangle: an inner loop of k + 1 trips inside a loop of m, one store after both; the
    // operations per thread depend on the outer loop and are not a constant number per store
    let lift = control("triangle");
    assert!(!lift.toml.contains("flops_per_update"), "{}", lift.toml);
    assert!(
        lift.warnings.iter().any(|w| w
            .contains(": the trip count of this loop is not a constant of the launch")
            && w.contains("not the same per store")
            && w.contains("thread.flops_per_update")),
        "{:?}",
        lift.warnings
    );
}

#[test]
fn flops_with_the_updates_given_are_counted_per_store() {
    use gputraffic::input::trace::FpOps;
    // star7_coarse_yz: each thread updates 4 points, 4 stores; 8 operations per point, the
    // trace's 8
    let options = star7_coarse_yz_options();
    let lift = lift_file(NEW_KERNELS, &options).unwrap();
    assert!(
        lift.toml
            .contains("flops_per_update = { fp32 = 0, fp64 = 8 }\n"),
        "{}",
        lift.toml
    );
    let req = LaunchRequest::default();
    let lifted = Bound::new(lift.kernel, "h200", &req).unwrap();
    assert_eq!(
        lifted.launch.flops_per_update,
        Some(FpOps {
            fp32: 0.0,
            fp64: 8.0
        })
    );
    assert_eq!(
        lifted.launch.flops_per_update,
        Bound::new(shipped("star7-coarse-yz"), "h200", &req)
            .unwrap()
            .launch
            .flops_per_update
    );
}

/// The kernels pystencils generates for Ernst et al.'s stars (validation/pystencils_star.cu,
/// the source of ernst-25pt-r4 and ernst-13pt-r2) at two smaller fields: the same code with the
/// sizes' constants (tests/data/ptx/pystencils_resize.py), so that a test simulates them fully.
const PYSTENCILS: &str = "tests/data/ptx/pystencils_small.ptx";

/// pystencils' `entry` lifted in the compiled order, as the authors' runner launches it: the
/// field pointers 128 - `ghost` elements past an aligned allocation, `src` allocated before
/// `dst`, and with `fold` points per thread along z, thread z starting at `fold * z` (their
/// fork's GPU indexing; pystencils 0.3.4 emits the folded body over the unfolded grid).
fn pystencils(entry: &str, field: [i64; 3], ghost: i64, fold: i64) -> Kernel {
    let shift = 128 - ghost;
    let elements = (shift + field[0] * field[1] * field[2]).to_string();
    let interior = field.map(|n| n - 2 * ghost);
    let options = LiftOptions {
        entry: Some(entry.into()),
        registers: Some(32),
        grid: Some([
            format!("cdiv({}, blockDim.x)", interior[0]),
            format!("cdiv({}, blockDim.y)", interior[1]),
            format!("cdiv({}, {fold} * blockDim.z)", interior[2]),
        ]),
        updates: Some(format!(
            "{} * {} * {}",
            interior[0], interior[1], interior[2]
        )),
        extents: vec![("p0".into(), elements.clone()), ("p1".into(), elements)],
        issue_order: compiled_order("tests/data/ptx/pystencils_small.sass"),
        ..Default::default()
    };
    let lift = lift_file(PYSTENCILS, &options).unwrap();
    assert!(lift.warnings.iter().all(|w| !w.contains("PTX order")));
    let toml = &lift.toml;
    // the parameters are (dst, src): p1 is src, declared first as the trace allocates it
    let (head, rest) = toml.split_once("[[arrays]]\nname = \"p0\"").unwrap();
    let (dst, rest) = rest.split_once("[[arrays]]\nname = \"p1\"").unwrap();
    let (src, tail) = rest.split_once("[launch]").unwrap();
    let toml =
        format!("{head}[[arrays]]\nname = \"p1\"{src}[[arrays]]\nname = \"p0\"{dst}[launch]{tail}")
            .replace("index = \"", &format!("index = \"{shift} + "))
            .replace(
                "\"z = blockIdx.z * blockDim.z + threadIdx.z\"",
                &format!("\"z = {fold} * (blockIdx.z * blockDim.z + threadIdx.z)\""),
            );
    Kernel::parse(&toml, entry).unwrap()
}

#[test]
fn lifted_pystencils_stars_count_as_the_hand_written_ernst_traces() {
    // (block, interior) of the two field sizes of the fixture: x not a multiple of the block
    // (guarded edges), odd sizes, blocks of up to 1024 threads (the kernels' launch bounds)
    let shapes: [([u32; 3], [i64; 3]); 4] = [
        ([64, 4, 4], [70, 36, 20]),
        ([32, 8, 2], [70, 36, 20]),
        ([16, 4, 2], [33, 17, 12]),
        ([128, 1, 2], [33, 17, 12]),
    ];
    for (block, n) in shapes {
        let size = format!("{}x{}x{}", n[0], n[1], n[2]);
        let set = [("nx", n[0]), ("ny", n[1]), ("nz", n[2])];
        // range 4, unfolded: the same addresses, so the same coalescing, L1 misses and DRAM
        // traffic; the trace's loads are in the order and runs (9, 11, 5) of the measured sm_75
        // binary, ptxas 13.5 for sm_90 issues them in another (runs 11, 10, 4), which moves the
        // L2's read coalescing and the L1's partial lines
        let lifted = counts(
            pystencils(&format!("star3d_r4_{size}"), n.map(|v| v + 8), 4, 1),
            block,
            &[],
        );
        let hand = counts(shipped("ernst-25pt-r4"), block, &set);
        let what = format!("r4 block {block:?}, domain {n:?}");
        assert_eq!(coalescing(&lifted), coalescing(&hand), "{what}");
        assert_eq!(same_misses(&lifted), same_misses(&hand), "{what}");
        assert_eq!(lifted.dram, hand.dram, "{what}");
        // every point once: 25 loads and a store per updated point
        assert_eq!(
            lifted.thread_accesses,
            26 * (n[0] * n[1] * n[2]) as u64,
            "{what}"
        );
        // that order is the whole difference: the trace with its loads in ptxas 13.5's order
        // and runs counts every L1, L2 and DRAM counter of the lifted kernel
        let reordered = counts(ernst_25pt_r4_in_sm90_order(), block, &set);
        assert_eq!(lifted.l1, reordered.l1, "{what}");
        assert_eq!(lifted.l2, reordered.l2, "{what}");
        assert_eq!(lifted.dram, reordered.dram, "{what}");
        // range 2, 1, 2 and 4 points per thread along z, each distinct address loaded once
        for fold in [1, 2, 4] {
            let lifted = counts(
                pystencils(
                    &format!("star3d_r2_fold{fold}_{size}"),
                    n.map(|v| v + 4),
                    2,
                    fold,
                ),
                block,
                &[],
            );
            let mut set = set.to_vec();
            set.push(("fold_z", fold));
            let hand = counts(shipped("ernst-13pt-r2"), block, &set);
            let what = format!("r2 fold {fold} block {block:?}, domain {n:?}");
            assert_eq!(coalescing(&lifted), coalescing(&hand), "{what}");
            assert_eq!(
                lifted.thread_accesses,
                ((4 + 10 * fold) * n[0] * n[1] * n[2] / fold) as u64,
                "{what}"
            );
            // the trace's order is the sm_75 binary's, which sm_90's differs from by a few
            // loads (its header): the L1 misses and DRAM agree, the L2's read coalescing not
            assert_eq!(same_misses(&lifted), same_misses(&hand), "{what}");
            assert_eq!(lifted.dram, hand.dram, "{what}");
        }
    }
}

/// What the L1 misses of the same addresses in another order within a block keep: the sectors
/// that miss, and the block's distinct sectors and lines.
fn same_misses(c: &Counts) -> [u64; 3] {
    [
        c.l1.load_miss_sectors,
        c.l1.block_unique_load_sectors,
        c.l1.block_unique_load_lines,
    ]
}

/// ernst-25pt-r4 with its unfolded loads in the order and runs ptxas 13.5 gives pystencils'
/// kernel for sm_90 (tests/data/ptx/pystencils_small.sass), not the measured sm_75 binary's.
fn ernst_25pt_r4_in_sm90_order() -> Kernel {
    let text = std::fs::read_to_string("traces/ernst-25pt-r4.toml").unwrap();
    let start = "  { if = \"fold_y * fold_z == 1\", body = [\n";
    let (head, rest) = text.split_once(start).unwrap();
    let store = "    { store = \"dst\", index = \"c0\" },\n";
    let (_, tail) = rest.split_once(store).unwrap();
    let runs: [&[&str]; 3] = [
        &[
            "2",
            "1",
            "3",
            "4",
            "-1",
            "-2",
            "-3",
            "-4",
            "",
            "plane",
            "-4 * pitch",
        ],
        &[
            "2 * plane",
            "3 * plane",
            "4 * plane",
            "-plane",
            "-2 * plane",
            "-3 * plane",
            "-4 * plane",
            "pitch",
            "2 * pitch",
            "3 * pitch",
        ],
        &["4 * pitch", "-pitch", "-2 * pitch", "-3 * pitch"],
    ];
    let mut body = String::from(start);
    for run in runs {
        for (i, offset) in run.iter().enumerate() {
            let index = match offset.strip_prefix('-') {
                Some(o) => format!("c0 - {o}"),
                None if offset.is_empty() => "c0".to_string(),
                None => format!("c0 + {offset}"),
            };
            let end = if i + 1 == run.len() {
                ", ends_run = true"
            } else {
                ""
            };
            body += &format!("    {{ load = \"src\", index = \"{index}\"{end} }},\n");
        }
    }
    Kernel::parse(&format!("{head}{body}{store}{tail}"), "ernst-25pt-r4-sm90").unwrap()
}

#[test]
fn lifted_l2cap_sweep_counts_as_the_l2_sweep_trace_with_its_sm_record() {
    // validation/l2_capacity.cu's l2cap_sweep, the source of l2-sweep: nvcc unrolls the m loop
    // by 4 (runs of 4 loads, the trace's loads_per_run) with a remainder; the kernel also
    // records each block's SM (block_sm[blockIdx.x] = smid(), thread 0), which the trace
    // leaves out: 264 more store instructions and sectors, and a third array
    let blocks = 264;
    let options = LiftOptions {
        entry: Some("l2cap_sweep".into()),
        registers: Some(16),
        grid: Some([blocks.to_string(), "1".into(), "1".into()]),
        updates: Some(format!("m * passes * {blocks} * 1024")),
        extents: vec![
            ("a".into(), format!("m * {blocks} * 1024")),
            ("block_sm".into(), blocks.to_string()),
            ("sink".into(), format!("{blocks} * 1024")),
        ],
        issue_order: compiled_order("tests/data/ptx/l2_capacity.sass"),
        ..Default::default()
    };
    let lift = lift_file("tests/data/ptx/l2_capacity.ptx", &options).unwrap();
    assert!(lift.warnings.iter().all(|w| !w.contains("PTX order")));
    // the trace with that record: every counter of the lifted kernel where m is a multiple of 4
    let text = std::fs::read_to_string("traces/l2-sweep.toml").unwrap();
    let sink = "[[arrays]]\nname = \"sink\"";
    let store = "  { store = \"sink\", index = \"blockIdx.x * blockDim.x + threadIdx.x\" },\n";
    assert!(text.contains(sink) && text.contains(store));
    let with_record = text
        .replace(
            sink,
            &format!("[[arrays]]\nname = \"block_sm\"\nelement_bytes = 4\ndims = [\"blocks\"]\n\n{sink}"),
        )
        .replace(
            store,
            &format!("{store}  {{ if = \"threadIdx.x == 0\", body = [{{ store = \"block_sm\", index = \"blockIdx.x\" }}] }},\n"),
        );
    let with_record = Kernel::parse(&with_record, "l2-sweep-with-block-sm").unwrap();
    for (m, passes, rot) in [(12, 4, 1), (8, 3, 5), (7, 3, 5), (2, 2, 0)] {
        let set = [("m", m), ("passes", passes), ("rot", rot)];
        let lifted = counts(lift.kernel.clone(), [1024, 1, 1], &set);
        let hand = counts(shipped("l2-sweep"), [1024, 1, 1], &set);
        let what = format!("m {m}, passes {passes}, rot {rot}");
        let mut expected = coalescing(&hand);
        for i in [0, 1, 4, 5] {
            // warp instructions, thread accesses, store requests and sectors: one per block
            expected[i] += blocks as u64;
        }
        assert_eq!(coalescing(&lifted), expected, "{what}");
        assert_eq!(same_misses(&lifted), same_misses(&hand), "{what}");
        let recorded = counts(with_record.clone(), [1024, 1, 1], &set);
        if m % 4 == 0 {
            assert_eq!(lifted.l1, recorded.l1, "{what}");
            assert_eq!(lifted.l2, recorded.l2, "{what}");
            assert_eq!(lifted.dram, recorded.dram, "{what}");
        } else {
            // the remainder's m % 4 loads issue in runs of their own, the first alone (its
            // compiled code), the trace's as one run: the L2 sees other groups of requests
            assert_eq!(coalescing(&lifted), coalescing(&recorded), "{what}");
            assert_ne!(lifted.l2, recorded.l2, "{what}");
        }
    }
}

const WRAP: &str = "tests/data/ptx/wrap.ptx";

fn wrap_kernel(entry: &str) -> gputraffic::input::ptx::Lifted {
    lift_file(
        WRAP,
        &LiftOptions {
            entry: Some(entry.into()),
            registers: Some(32),
            issue_order: ptx_order(),
            ..Default::default()
        },
    )
    .unwrap()
}

#[test]
fn an_index_computed_in_32_bits_wraps_as_the_ptx_computes_it() {
    // int idx = (z * ny + y) * nx + x: two mad.lo.s32, then mul.wide.s32 by 4 for the address
    let int = wrap_kernel("copy_int");
    let idx = "nx * ny * z + nx * y + x";
    assert_eq!(
        body(&int.toml),
        [
            format!("{{ load = \"in\", index = \"i32({idx})\" }},"),
            format!("{{ store = \"out\", index = \"i32({idx})\" }},"),
        ]
    );
    // the extents assume no wrap: the largest index of a thread passing the guard, plus one
    assert!(
        int.toml.contains("dims = [\"nx * ny * nz\"]"),
        "{}",
        int.toml
    );
    // unsigned: mul.wide.u32, modulo 2^32
    let unsigned = wrap_kernel("copy_unsigned");
    assert_eq!(
        body(&unsigned.toml)[0],
        format!("{{ load = \"in\", index = \"u32({idx})\" }},")
    );
    // long idx = ((long)z * ny + y) * nx + x: each 32-bit value widened alone (mul.wide.s32 of
    // ny and z, cvt of y, nx and x), the sums in 64 bits: nothing wraps
    let long = wrap_kernel("copy_long");
    assert_eq!(
        body(&long.toml)[0],
        format!("{{ load = \"in\", index = \"{idx}\" }},")
    );
    assert_eq!(
        body(&wrap_kernel("gather_int").toml)[0],
        "{ load = \"in\", index = \"i32(stride * x)\" },"
    );
}

#[test]
fn a_launch_too_small_to_wrap_counts_exactly_as_the_64_bit_kernel_with_affine_indices() {
    for (block, domain) in CASES {
        let set = [("nx", domain[0]), ("ny", domain[1]), ("nz", domain[2])];
        let bound = |entry: &str| bind(wrap_kernel(entry).kernel, Some(block), &set).unwrap();
        let (int, long) = (bound("copy_int"), bound("copy_long"));
        // the wraps are dropped at binding: the launch cannot leave 32 bits, the index is affine
        for a in &int.launch.program.accesses {
            assert!(a.index.as_affine().is_some(), "{}", a.index_text);
        }
        let run = |b: &Bound| gputraffic::sim::simulate(&b.launch, &b.hw, &SimOptions::default());
        assert_eq!(
            run(&int).unwrap(),
            run(&long).unwrap(),
            "{block:?} {domain:?}"
        );
    }
}

#[test]
fn a_32_bit_index_that_wraps_out_of_its_array_is_one_error_naming_the_thread() {
    let gather = |entry: &str, stride: i64| {
        let b = Bound::new(
            wrap_kernel(entry).kernel,
            "h200",
            &LaunchRequest {
                block: Some([32, 1, 1]),
                set: [("n".to_string(), 16), ("stride".to_string(), stride)].into(),
                ..Default::default()
            },
        )
        .unwrap();
        gputraffic::sim::simulate(&b.launch, &b.hw, &SimOptions::default())
    };
    // 16 threads read in[x * 2^27]: the largest, 15 * 2^27, fits in an int; 16 sectors
    let fits = gather("gather_int", 1 << 27).unwrap();
    assert_eq!((fits.l1.load_sectors, fits.l1.store_sectors), (16, 2));
    // x * 2^28 is 2^31 at x = 8: i32 makes it -2^31, byte -2^33 of the 4 * (15 * 2^28 + 1)
    let err = gather("gather_int", 1 << 28).unwrap_err().to_string();
    assert!(
        err.starts_with("tests/data/ptx/wrap.ptx: line 207: a load of array 'in'")
            && err.contains(": a load of array 'in' is outside it: thread (8, 0, 0) of block (0, 0, 0) accesses byte offset -8589934592 of 16106127364 (the index is computed in 32 bits, i32/u32, and wraps around in this launch: the kernel as written indexes outside its array)")
            && !err.contains('\n'),
        "{err}"
    );
}

#[test]
fn an_unsigned_index_that_wraps_inside_its_array_is_simulated_as_the_gpu_computes_it() {
    let gather = |stride: i64| {
        let b = Bound::new(
            wrap_kernel("gather_unsigned").kernel,
            "h200",
            &LaunchRequest {
                block: Some([32, 1, 1]),
                set: [("n".to_string(), 16), ("stride".to_string(), stride)].into(),
                ..Default::default()
            },
        )
        .unwrap();
        gputraffic::sim::simulate(&b.launch, &b.hw, &SimOptions::default()).unwrap()
    };
    // x * 2^28 stays below 2^32: 16 addresses, 16 sectors
    assert_eq!(gather(1 << 28).l1.load_sectors, 16);
    // x * 2^29 mod 2^32: threads 8..15 read what threads 0..7 read, 8 sectors
    let wrapped = gather(1 << 29);
    assert_eq!(wrapped.l1.load_sectors, 8);
    assert_eq!(wrapped.thread_accesses, 32);
}

const BREAKS: &str = "tests/data/ptx/breaks.ptx";

fn breaks(entry: &str) -> gputraffic::Result<gputraffic::input::ptx::Lifted> {
    lift_file(
        BREAKS,
        &LiftOptions {
            entry: Some(entry.into()),
            registers: Some(32),
            issue_order: ptx_order(),
            ..Default::default()
        },
    )
}

#[test]
fn a_break_on_a_parameter_lifts_with_the_fewest_trips_either_test_allows() {
    // for (k = 0; k < n; k++) { if (k >= m) break; s += in[x + k * nx]; }: nvcc tests both
    // before the back edge: min(n, m) trips where both are positive, else none
    let k = breaks("sum_break").unwrap();
    assert!(
        k.toml.contains(
            "\"trips_k = (m >= 1 && n >= 1 ? min(max(0, m - 1) + 1, max(0, n - 1) + 1) : 0)\""
        ),
        "{}",
        k.toml
    );
    assert_eq!(
        body(&k.toml),
        [
            "{ loop = \"k\", count = \"trips_k\", body = [",
            "{ load = \"in\", index = \"k * nx + x\" },",
            "] },",
            "{ store = \"out\", index = \"x\" },",
        ]
    );
    for (n, m, trips) in [(5, 3, 3), (3, 5, 3), (4, 4, 4), (5, 0, 0), (0, 5, 0)] {
        let c = counts(
            k.kernel.clone(),
            [32, 1, 1],
            &[("nx", 64), ("n", n), ("m", m)],
        );
        assert_eq!(c.thread_accesses, 64 * (trips + 1), "n {n} m {m}");
        assert_eq!(c.l1.load_sectors, 2 * 4 * trips, "n {n} m {m}");
    }
}

#[test]
fn loop_exits_that_cannot_give_a_trip_count_are_refused_with_the_reason() {
    let data = breaks("until_negative").unwrap_err().to_string();
    assert_eq!(
        data,
        "tests/data/ptx/breaks.ptx: line 179: a branch out of the loop at line 172 (an early exit or `break`) is not lifted: its condition cannot be lifted: a floating-point comparison (line 178) is not lifted"
    );
    let middle = breaks("half_break").unwrap_err().to_string();
    assert_eq!(
        middle,
        "tests/data/ptx/breaks.ptx: line 246: a branch out of the loop at line 241 (an early exit or `break`) is not lifted: it leaves in the middle of the body, so the last iteration is cut short (an exit tested just before the back edge is lifted)"
    );
}

#[test]
fn a_while_loop_on_parameters_lifts_as_a_counted_loop() {
    // r = start; while (r < stop) { s += in[x + r * nx]; r += 2; }
    let k = breaks("walk_while").unwrap();
    assert!(
        k.toml
            .contains("\"trips_k = (start < stop ? max(0, cdiv(-start + stop - 2, 2)) + 1 : 0)\""),
        "{}",
        k.toml
    );
    // start 1, stop 8: r = 1, 3, 5, 7; start 8: none; start 3, stop 4: r = 3
    for (start, stop, trips) in [(1, 8, 4), (8, 8, 0), (3, 4, 1)] {
        let c = counts(
            k.kernel.clone(),
            [32, 1, 1],
            &[("nx", 64), ("start", start), ("stop", stop)],
        );
        assert_eq!(c.thread_accesses, 64 * (trips + 1), "{start}..{stop}");
    }
}

#[test]
fn the_wraps_of_the_shipped_stencils_are_dropped_at_binding_so_their_indices_stay_affine() {
    // star<1>, star<4>, box27 (x + P in int), jacobi2d, transpose_naive: i32(…) in the lifted
    // text; at 256^3 (and 64^2) nothing can wrap, and every index binds to the affine form
    let extent = [("in", "(nz + 8) * plane"), ("out", "(nz + 8) * plane")];
    let bound = |k: Kernel, set: &[(&str, i64)]| bind(k, None, set).unwrap();
    let mut wrapped = 0;
    for entry in ["star<1>", "star<4>", "box27"] {
        let k = lifted(STENCILS, entry, 32, &extent);
        let b = bound(k, &[("pitch", 264), ("plane", 264 * 264)]);
        for a in &b.launch.program.accesses {
            wrapped += usize::from(a.index_text.contains("i32("));
            assert!(a.index.as_affine().is_some(), "{entry}: {}", a.index_text);
        }
    }
    let square = [
        ("in", "(nx + 2) * (ny + 2)"),
        ("out", "(nx + 2) * (ny + 2)"),
    ];
    for entry in ["jacobi2d", "transpose_naive"] {
        let k = lifted(NEW_KERNELS, entry, 32, &square);
        let b = bound(k, &[("nx", 64), ("ny", 64)]);
        for a in &b.launch.program.accesses {
            wrapped += usize::from(a.index_text.contains("i32("));
            assert!(a.index.as_affine().is_some(), "{entry}: {}", a.index_text);
        }
    }
    // inside a loop: i32(k * nx + x), k below its count max(0, nz - 1) + 1 = 4
    let b = bound(control("alternate").kernel, &[("nx", 64), ("nz", 4)]);
    for a in &b.launch.program.accesses {
        wrapped += usize::from(a.index_text.contains("i32("));
        assert!(a.index.as_affine().is_some(), "alternate: {}", a.index_text);
    }
    assert!(wrapped >= 12, "{wrapped} wrapped indices");
}

#[test]
fn a_lifted_kernels_errors_name_the_ptx_line_of_the_access_or_the_place_in_its_printed_trace() {
    // `in` allocated four planes short: the upper neighbour of a block's last plane, the load at
    // PTX line 348 (`ld.global.nc.f64 %fd71, [%rd97+32]`: in[c + plane] of the fourth unrolled
    // plane), is the first access outside it
    let lift = lift_with(
        STENCILS,
        "star1_zloop",
        34,
        [
            "cdiv(nx, blockDim.x)",
            "cdiv(ny, blockDim.y)",
            "cdiv(nz, cz)",
        ],
        "nx * ny * nz",
        &[("in", "(nz + 4) * plane"), ("out", "(nz + 8) * plane")],
    );
    let ptx = std::fs::read_to_string(STENCILS).unwrap();
    assert_eq!(
        ptx.lines().nth(347).map(str::trim),
        Some("ld.global.nc.f64 \t%fd71, [%rd97+32];")
    );
    let simulate = |kernel: Kernel, set: &[(&str, i64)]| {
        bind(kernel, Some([32, 8, 1]), set)
            .and_then(|b| gputraffic::sim::simulate(&b.launch, &b.hw, &SimOptions::default()))
            .unwrap_err()
            .to_string()
    };
    let mut set = layout([64, 64, 64]).to_vec();
    set.push(("cz", 16));
    let error = simulate(lift.kernel.clone(), &set);
    assert!(
        error.starts_with(
            "tests/data/ptx/stencils.ptx: line 348: a load of array 'in' is outside it: thread ("
        ),
        "{error}"
    );
    // the grid has no PTX line: its place in the trace `gputraffic lift` prints
    let mut set = layout([64, 64, 64]).to_vec();
    set.push(("cz", 0));
    let error = simulate(lift.kernel, &set);
    let line = 1 + lift
        .toml
        .lines()
        .position(|l| l.starts_with("grid"))
        .unwrap();
    assert!(
        error.starts_with(&format!(
            "tests/data/ptx/stencils.ptx: line {line}, column "
        )),
        "{error}"
    );
    assert!(
        error.contains(
            " of the lifted trace (as `gputraffic lift` prints it): launch.grid \"cdiv(nz, cz)\": cdiv requires a positive divisor"
        ),
        "{error}"
    );
}

const SHUFFLES: &str = "tests/data/ptx/shuffles.ptx";

/// A warp shuffle (`shfl.sync`) lifts as a `shuffles` step in its place and under its
/// conditions; each costs every warp that issues it one data-pipe wavefront, whatever lanes
/// take part (validation/warp_ops_probe.cu on the H200), and nothing else.
#[test]
fn a_warp_shuffle_lifts_as_a_step_that_costs_each_warp_issuing_it_one_wavefront() {
    let warp_sum = lifted(SHUFFLES, "warp_sum", 16, &[("out", "n / 32")]);
    let body = format!("{:?}", warp_sum.body);
    assert_eq!(body.matches("kind: Shuffle").count(), 10, "{body}");
    let half_swap = lifted(SHUFFLES, "half_swap", 16, &[]);
    // 4096 elements in 256-thread blocks: 16 blocks of 8 warps
    let set = [("n", 4096)];
    let with_hw = |kernel: &Kernel, per_shuffle: f64| {
        let mut b = bind(kernel.clone(), Some([256, 1, 1]), &set).unwrap();
        b.hw.l1.wavefronts_per_shuffle = per_shuffle;
        gputraffic::sim::simulate(&b.launch, &b.hw, &SimOptions::default()).unwrap()
    };
    // the sum: ten shuffles in each of the 128 warps
    let (one, none) = (with_hw(&warp_sum, 1.0), with_hw(&warp_sum, 0.0));
    assert_eq!(one.l1.shuffles, 128 * 10);
    assert_eq!(one.l1.wavefronts - none.l1.wavefronts, 128 * 10);
    // no memory moves for them: the counters but the wavefronts are the same
    let mut same = one.clone();
    same.l1.wavefronts = none.l1.wavefronts;
    assert_eq!(same, none);
    // the swap: the first warp of each block, half its lanes, one shuffle
    let (one, none) = (with_hw(&half_swap, 1.0), with_hw(&half_swap, 0.0));
    assert_eq!(one.l1.shuffles, 16);
    assert_eq!(one.l1.wavefronts - none.l1.wavefronts, 16);
    // a sampled run counts them as it counts the other instructions (exactly here)
    let b = bind(warp_sum.clone(), Some([256, 1, 1]), &[("n", 1 << 24)]).unwrap();
    let sampled = gputraffic::sim::simulate(
        &b.launch,
        &b.hw,
        &SimOptions {
            sample: Some(gputraffic::sim::sample::SampleOptions::default()),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(sampled.l1.shuffles, (1 << 24) / 32 * 10);
}

/// A kernel that copies global memory into shared memory asynchronously (CUDA's
/// `__pipeline_memcpy_async`, nvcc 13.5 for sm_90), its copy on line 30.
const ASYNC_COPY: &str = r#".version 9.5
.target sm_90
.address_size 64

.visible .entry _Z10async_copyPKfPfi(
	.param .u64 _Z10async_copyPKfPfi_param_0,
	.param .u64 _Z10async_copyPKfPfi_param_1,
	.param .u32 _Z10async_copyPKfPfi_param_2
)
{
	.reg .pred 	%p<2>;
	.reg .f32 	%f<2>;
	.reg .b32 	%r<9>;
	.reg .b64 	%rd<7>;
	.shared .align 4 .b8 _ZZ10async_copyPKfPfiE4tile[1024];
	ld.param.u64 	%rd1, [_Z10async_copyPKfPfi_param_0];
	ld.param.u64 	%rd2, [_Z10async_copyPKfPfi_param_1];
	ld.param.u32 	%r3, [_Z10async_copyPKfPfi_param_2];
	mov.u32 	%r4, %ctaid.x;
	mov.u32 	%r5, %ntid.x;
	mov.u32 	%r1, %tid.x;
	mad.lo.s32 	%r2, %r4, %r5, %r1;
	setp.ge.s32 	%p1, %r2, %r3;
	@%p1 bra 	$L__BB0_2;
	cvta.to.global.u64 	%rd4, %rd2;
	mul.wide.s32 	%rd5, %r2, 4;
	add.s64 	%rd3, %rd1, %rd5;
	shl.b32 	%r7, %r1, 2;
	mov.u32 	%r8, _ZZ10async_copyPKfPfiE4tile;
	add.s32 	%r6, %r8, %r7;
	cp.async.ca.shared.global [%r6], [%rd3], 4, 4;
	cp.async.commit_group;
	cp.async.wait_group 0;
	ld.shared.f32 	%f1, [%r6];
	add.s64 	%rd6, %rd4, %rd5;
	st.global.f32 	[%rd6], %f1;
$L__BB0_2:
	ret;
}
"#;

/// Instructions that move memory the trace language cannot say are refused in one line (an
/// asynchronous copy's global reads would otherwise vanish from the trace, its array with
/// them), or, where they only hint the caches, lifted with a warning: never dropped silently.
#[test]
fn memory_instructions_the_trace_cannot_say_are_refused_or_warned_never_dropped() {
    let options = LiftOptions {
        registers: Some(32),
        issue_order: ptx_order(),
        ..Default::default()
    };
    let lift = |text: &str| gputraffic::input::ptx::lift_ptx(text, "copy.ptx", &options);
    assert_eq!(
        lift(ASYNC_COPY).unwrap_err().to_string(),
        "copy.ptx: line 31: an asynchronous copy between global and shared memory (`cp.async`, LDGSTS or a bulk/TMA copy) is not lifted: the trace language has none (write it as a global load and a shared store)"
    );
    let ldmatrix = ASYNC_COPY.replace(
        "cp.async.ca.shared.global [%r6], [%rd3], 4, 4;",
        "ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r7}, [%r6];",
    );
    assert!(lift(&ldmatrix).unwrap_err().to_string().starts_with(
        "copy.ptx: line 31: `ldmatrix` (a matrix, texture or surface access) is not lifted"
    ));
    // a prefetch into the L2 beside a plain load: lifted, with a warning naming it
    let prefetch = ASYNC_COPY.replace(
        "cp.async.ca.shared.global [%r6], [%rd3], 4, 4;",
        "prefetch.global.L2 [%rd3];\n\tcvta.to.global.u64 \t%rd7, %rd1;\n\tadd.s64 \t%rd8, %rd7, %rd5;\n\tld.global.f32 \t%f1, [%rd8];",
    )
    .replace(".reg .b64 \t%rd<7>;", ".reg .b64 \t%rd<9>;");
    let lifted = lift(&prefetch).unwrap();
    assert!(
        lifted.warnings.iter().any(|w| w
            == "copy.ptx: line 31: `prefetch.global.L2` is not modelled (the trace language has no such step): what it does to the caches is left out"),
        "{:?}",
        lifted.warnings
    );
    assert!(
        lifted.toml.contains("{ load = \"p0\", index = \"x\" }"),
        "{}",
        lifted.toml
    );
    // a load of the L2 only (`__ldcg`: `ld.global.cg`) bypasses the L1
    // (validation/load_cache_ops.cu; tests/load_cache_ops.rs)
    let cg = prefetch
        .replace("prefetch.global.L2 [%rd3];\n\t", "")
        .replace("ld.global.f32", "ld.global.cg.f32");
    let lifted = lift(&cg).unwrap();
    assert!(
        lifted
            .toml
            .contains("{ load = \"p0\", index = \"x\", bypass_l1 = true }"),
        "{}",
        lifted.toml
    );
}

const ATOMICS_AGGREGATED: &str = "tests/data/ptx/atomics_aggregated.ptx";

/// An atomic that ptxas aggregates over the warp (a warp-uniform address and operand:
/// `VOTEU.ANY`, `POPC`, one lane's `RED`) lifts marked `aggregated`, and sends one update per
/// warp, as the H100 counted for `red_same` (tests/data/h100/micro/atomics); one whose lanes'
/// values or addresses differ keeps an update per lane. Without the compiled code (PTX order)
/// nothing is marked.
#[test]
fn an_atomic_the_compiled_code_aggregates_over_the_warp_sends_one_update_per_warp() {
    let lift = |entry: &str, order: Option<Arc<IssueOrder>>| {
        // count_all(count, n); sum_all(a, sum, n); count_bins(bins, n)
        let extents = match entry {
            "count_all" => vec![("count", "1")],
            "sum_all" => vec![("sum", "1")],
            _ => vec![("bins", "1024")],
        };
        let options = LiftOptions {
            entry: Some(entry.into()),
            registers: Some(8),
            extents: (extents.iter())
                .map(|(a, e)| (a.to_string(), e.to_string()))
                .collect(),
            issue_order: order,
            ..Default::default()
        };
        lift_file(ATOMICS_AGGREGATED, &options).unwrap()
    };
    let sass = || compiled_order("tests/data/ptx/atomics_aggregated.sass");
    let count_all = lift("count_all", sass());
    assert!(
        count_all.toml.contains("aggregated = true"),
        "{}",
        count_all.toml
    );
    for entry in ["sum_all", "count_bins"] {
        assert!(
            !lift(entry, sass()).toml.contains("aggregated = true"),
            "{entry}"
        );
    }
    assert!(
        !lift("count_all", ptx_order())
            .toml
            .contains("aggregated = true")
    );
    // 2^16 threads in 256-thread blocks: 2048 warps, one one-sector update each, where the
    // PTX order's lift sends every lane's
    let set = [("n", 65536)];
    let run = |k: Kernel| counts(k, [256, 1, 1], &set);
    let aggregated = run(count_all.kernel);
    assert_eq!(aggregated.l1.atomic_requests, 2048);
    assert_eq!(aggregated.l2.atomic_requests, 2048);
    assert_eq!(aggregated.l2.atomic_sectors, 2048);
    assert_eq!(aggregated.l1.data_passes, 2048);
    let per_lane = run(lift("count_all", ptx_order()).kernel);
    assert_eq!(per_lane.l2.atomic_requests, 65536);
    assert_eq!(per_lane.l1.data_passes, 2048 * 32);
    // the busiest L2 slice applies them all: 32 times the work per lane
    assert_eq!(aggregated.atomic_busiest_slice, [2048, 2048, 0, 0]);
    assert_eq!(per_lane.atomic_busiest_slice, [65536, 65536, 0, 0]);
    // the float sum is marked as such: each of its one-sector requests waits for the add
    let sum_all = lift("sum_all", sass());
    assert!(sum_all.toml.contains("float = true"), "{}", sum_all.toml);
    assert!(!count_all.toml.contains("float = true"));
    let floats = run(sum_all.kernel);
    assert_eq!(floats.atomic_busiest_slice, [0, 0, 0, 65536]);
}

#[test]
fn a_lifted_kernel_issues_as_many_instructions_a_warp_as_the_h200_counts() {
    // The instructions per warp the lift reads off the SASS (tests/data/ptx/stencils.sass) against
    // the H200's smsp__inst_executed.sum per launched warp of the dev set's kernels, on launches
    // whose blocks lie inside the domain (no warp leaves early): star1 256x4x1, star4 128x8x1,
    // copy 256x1x1 (tests/data/h200/instructions/dev_instructions.csv, IDs 2, 39 and 73).
    let measured = gputraffic::analysis::measured::ncu_counters(std::path::Path::new(
        "tests/data/h200/instructions/dev_instructions.csv",
    ))
    .unwrap();
    for (entry, id, threads) in [
        ("star<1>", 2, 1024.0),
        ("star<4>", 39, 1024.0),
        ("copy", 73, 256.0),
    ] {
        let m = &measured[id];
        let per_warp = m["smsp__inst_executed.sum"] / (m["sm__ctas_launched.sum"] * threads / 32.0);
        let options = LiftOptions {
            entry: Some(entry.into()),
            registers: Some(32),
            issue_order: compiled_order("tests/data/ptx/stencils.sass"),
            ..Default::default()
        };
        let lift = lift_file(STENCILS, &options).unwrap();
        let lifted = lift.kernel.instructions_per_warp.clone().unwrap();
        assert_eq!(lifted.to_string(), format!("{per_warp}"), "{entry}");
    }
    // without the SASS the lift does not guess
    let options = LiftOptions {
        entry: Some("star<4>".into()),
        registers: Some(32),
        issue_order: ptx_order(),
        ..Default::default()
    };
    assert!(
        lift_file(STENCILS, &options)
            .unwrap()
            .kernel
            .instructions_per_warp
            .is_none()
    );
}

/// validation/gemm.cu's naive matrix product (tests/data/ptx/gemm_naive.cu): its k loop loads a
/// row of A and a column of B and stores nothing, and ptxas unrolls nvcc's four-trip body again
/// (by 16 with tails by 8 and 4: 56 copies of its 8 loads, waiting 4 times among them). The
/// first copies, which give the lifted loop its order, mark no wait, so until 2026-12-04 the
/// whole loop went as one run: a warp issued its 2n loads in one turn, the warps of a 2-D block
/// never met on B's lines, and at n = 1024 in 64×4 blocks the L1 missed 4× what the H200
/// measured (L2 reads from L1 +268 %; n = 2048 in 32×32 blocks +1019 %). Its loads now go in
/// the SASS's runs, 56 / 4 = 14 loads a turn (`loads_per_run`), and the L2 reads come within a
/// third of the measured (the warps of the simulation keep closer together than the GPU's).
#[test]
fn a_loop_that_ptxas_unrolled_further_issues_its_loads_in_the_sass_runs_not_all_at_once() {
    let options = LiftOptions {
        registers: Some(32),
        extents: ["a", "b", "c"]
            .map(|n| (n.to_string(), "n * n".to_string()))
            .to_vec(),
        issue_order: compiled_order("tests/data/ptx/gemm_naive.sass"),
        ..Default::default()
    };
    let lift = lift_file("tests/data/ptx/gemm_naive.ptx", &options).unwrap();
    assert!(
        lift.toml.contains("\nloads_per_run = 14\n"),
        "{}",
        lift.toml
    );
    // a loop whose body stores already ends a run every trip: star1_zloop keeps its trace
    assert!(!lifted_star1_zloop().toml.contains("loads_per_run"));
    // n = 1024, 64×4 blocks: launch 10 of tests/data/h200/gemm/
    let kernel = Kernel::parse(&lift.toml, "gemm_naive").unwrap();
    let c = counts(kernel, [64, 4, 1], &[("n", 1024)]);
    let measured = gputraffic::analysis::measured::ncu_counters(std::path::Path::new(
        "tests/data/h200/gemm/ncu.csv",
    ))
    .unwrap()[10]["lts__t_sectors_srcunit_tex_op_read.sum"];
    let err = c.l2.read_sectors as f64 / measured - 1.0;
    assert!(err.abs() < 0.4, "L2 reads from L1 {err:+.3}");
}

/// validation/gemm.cu's tiled matrix product in 32×8 tiles (tests/data/ptx/gemm_tiled.cu): ptxas
/// merges the four broadcast loads `as[ty][k]` … `as[ty][k + 3]` of each step into one `LDS.128`,
/// so the SASS issues fewer accesses than the PTX. Until 2026-12-04 the lift then fell back to
/// PTX order with unbounded runs and 32 one-word loads of `as` a step; now the merged loads are
/// one 16-byte load each, in the SASS's order and runs, and the shared wavefronts of n = 1024
/// (launch 23 of tests/data/h200/gemm/) come within 2 % of the H200's (+30 % before): per warp
/// and step 5 stores, 32 loads of `bs` and 8 of `as` at 2 wavefronts (a 16-byte broadcast's
/// quarter-warp phases paired, docs/model.md "Shared memory").
#[test]
fn shared_loads_that_ptxas_merged_into_one_wider_load_lift_as_that_load() {
    let options = LiftOptions {
        entry: Some("tiled<32, 8>".into()),
        registers: Some(32),
        grid: Some(["n / 32", "n / 8", "1"].map(String::from)),
        updates: Some("n * n".into()),
        extents: ["a", "b", "c"]
            .map(|n| (n.to_string(), "n * n".to_string()))
            .to_vec(),
        issue_order: compiled_order("tests/data/ptx/gemm_tiled.sass"),
        ..Default::default()
    };
    let lift = lift_file("tests/data/ptx/gemm_tiled.ptx", &options).unwrap();
    assert!(
        lift.warnings.iter().all(|w| !w.contains("one for one")),
        "{:?}",
        lift.warnings
    );
    let as_loads: Vec<String> = body(&lift.toml)
        .into_iter()
        .filter(|l| l.starts_with("{ load = \"as\""))
        .collect();
    assert_eq!(as_loads.len(), 8, "{as_loads:?}");
    assert!(as_loads.iter().all(|l| l.contains("bytes = 16")));
    assert!(lift.toml.contains("ends_run = true"));
    let kernel = Kernel::parse(&lift.toml, "gemm_tiled").unwrap();
    let c = counts(kernel, [32, 8, 1], &[("n", 1024)]);
    let simulated = c.l1.shared_load_wavefronts + c.l1.shared_store_wavefronts;
    assert_eq!(simulated, 32768 * 32 * (5 + 32 + 8 * 2));
    let measured = gputraffic::analysis::measured::ncu_counters(std::path::Path::new(
        "tests/data/h200/gemm/ncu.csv",
    ))
    .unwrap()[23]["l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"];
    let err = simulated as f64 / measured - 1.0;
    assert!(err.abs() < 0.02, "shared wavefronts {err:+.3}");
}

/// A loop whose variable halves (`s >>= 1`) or doubles (`d *= 2`, `d <<= 1`) lifts with the
/// variable as a power of the iteration and the trips worked out from its test
/// (tests/data/ptx/halving.cu): the tutorial block reduction, its variant that stops at 32
/// for the last warp's shuffles, a Hillis-Steele scan, a stride doubling up to a parameter, and
/// a stride that an access after the loop takes at its last value (nvcc works the next address
/// out at the end of the body). Each is checked against the C loops run here for every block,
/// in block sizes that are and are not powers of two: shared instructions (a predicated body is
/// issued by every warp, a branched one by the warps with a lane in it), the instructions no
/// lane executes, shuffles, thread accesses and the sectors of the store after the loop.
#[test]
fn loops_whose_variable_halves_or_doubles_run_the_trips_their_test_allows() {
    let order = compiled_order("tests/data/ptx/halving.sass");
    let lift = |entry: &str| {
        let options = LiftOptions {
            entry: Some(entry.into()),
            registers: Some(16),
            grid: Some(["cdiv(n, blockDim.x)".into(), "1".into(), "1".into()]),
            updates: Some("n".into()),
            extents: match entry {
                "doubling_reads" => vec![("in", "n + m"), ("out", "n")],
                _ => vec![("in", "n"), ("out", "n"), ("sdata", "blockDim.x")],
            }
            .into_iter()
            .map(|(a, e)| (a.to_string(), e.to_string()))
            .collect(),
            issue_order: order.clone(),
            ..Default::default()
        };
        lift_file("tests/data/ptx/halving.ptx", &options).unwrap()
    };
    // what one block of `threads` does in a loop over `strides`, each trip a predicated body of
    // `per_trip` shared instructions under `active(tid, stride)`: (issued, issued with no lane)
    let trips =
        |threads: u64, strides: &[u64], per_trip: u64, active: &dyn Fn(u64, u64) -> bool| {
            let warps = threads.div_ceil(32);
            let mut idle = 0;
            for &s in strides {
                idle += (0..warps)
                    .filter(|w| !(w * 32..threads.min(w * 32 + 32)).any(|t| active(t, s)))
                    .count() as u64;
            }
            (warps * strides.len() as u64 * per_trip, idle * per_trip)
        };
    let halving = |from: u64, above: u64| {
        std::iter::successors(Some(from), |s| Some(s / 2))
            .take_while(|s| *s > above)
            .collect::<Vec<u64>>()
    };
    let doubling = |below: u64| {
        std::iter::successors(Some(1u64), |d| Some(d * 2))
            .take_while(|d| *d < below)
            .collect::<Vec<u64>>()
    };
    let (sum, sum_warp, scan) = (
        lift("block_sum"),
        lift("block_sum_warp"),
        lift("block_scan"),
    );
    // s = (blockDim.x / 2) / 2^k = blockDim.x / 2^(k + 1), going on while it stays above 0
    assert!(
        sum.toml.contains("max(0, ilog(2, blockDim.x) - 1) + 1")
            && sum
                .toml
                .contains("threadIdx.x < (blockDim.x / pow(2, k + 1))"),
        "{}",
        sum.toml
    );
    for threads in [32u64, 64, 96, 256, 1000, 1024] {
        let blocks = 40;
        let n = (blocks * threads) as i64;
        let warps = threads.div_ceil(32);
        let block = [threads as u32, 1, 1];
        // for (s = blockDim.x / 2; s > 0; s >>= 1) if (tid < s) sdata[tid] += sdata[tid + s]
        let strides = halving(threads / 2, 0);
        let (loop_issued, idle) = trips(threads, &strides, 3, &|t, s| t < s);
        let c = counts(sum.kernel.clone(), block, &[("n", n)]);
        let what = format!("block_sum, {threads} threads");
        assert_eq!(
            c.l1.shared_store_requests,
            blocks * (warps + loop_issued / 3),
            "{what}"
        );
        assert_eq!(
            c.l1.shared_load_requests,
            blocks * (2 * loop_issued / 3 + 1),
            "{what}"
        );
        assert_eq!(c.l1.predicated_off, blocks * idle, "{what}");
        // lanes: the global load and store, the first shared store, three accesses of each
        // lane below the stride, the last shared load
        let lanes: u64 = strides.iter().map(|s| 3 * s.min(&threads)).sum();
        assert_eq!(
            c.thread_accesses,
            n as u64 + blocks * (1 + threads + lanes + 1),
            "{what}"
        );
        // for (d = 1; d < blockDim.x; d *= 2): a predicated load of sdata[tid - d], then a
        // load and a store every thread makes
        let strides = doubling(threads);
        let (loop_issued, idle) = trips(threads, &strides, 1, &|t, d| t >= d);
        let c = counts(scan.kernel.clone(), block, &[("n", n)]);
        let what = format!("block_scan, {threads} threads");
        let all = warps * strides.len() as u64;
        assert_eq!(
            c.l1.shared_load_requests,
            blocks * (loop_issued + all + warps),
            "{what}"
        );
        assert_eq!(c.l1.shared_store_requests, blocks * (warps + all), "{what}");
        assert_eq!(c.l1.predicated_off, blocks * idle, "{what}");
        // the same loop stopped at 32, then the first warp's five shuffles (it reads
        // sdata[tid + 32]: blocks of fewer than 64 threads read outside their array, an error)
        let c = bind(sum_warp.kernel.clone(), Some(block), &[("n", n)])
            .and_then(|b| gputraffic::sim::simulate(&b.launch, &b.hw, &SimOptions::default()));
        if threads < 64 {
            let e = c.unwrap_err().to_string();
            assert!(
                e.contains("a shared load of array 'sdata' is outside it"),
                "{e}"
            );
            continue;
        }
        let strides = halving(threads / 2, 32);
        let (loop_issued, idle) = trips(threads, &strides, 3, &|t, s| t < s);
        let c = c.unwrap();
        let what = format!("block_sum_warp, {threads} threads");
        assert_eq!(
            c.l1.shared_load_requests,
            blocks * (2 * loop_issued / 3 + 2),
            "{what}"
        );
        assert_eq!(c.l1.predicated_off, blocks * idle, "{what}");
        assert_eq!(c.l1.shuffles, blocks * 5, "{what}");
    }
    // for (d = 1; d < m; d <<= 1) s += in[x + d]: the reads 1, 2, 4, … below m
    let reads = lift("doubling_reads");
    for m in [0i64, 1, 2, 3, 8, 9, 1000] {
        let c = counts(reads.kernel.clone(), [128, 1, 1], &[("n", 1024), ("m", m)]);
        assert_eq!(
            c.thread_accesses,
            1024 * (doubling(m.max(0) as u64).len() as u64 + 1),
            "doubling_reads, m = {m}"
        );
    }
    // for (s = blockDim.x; s > 4; s >>= 1) acc += in[x + s]; out[x + s] = acc: nvcc works the
    // next `x + s` out at the end of the body; the store takes the last one (4 or 3 here, so
    // each warp's 128 bytes straddle two lines)
    let after = lift_file(
        "tests/data/ptx/halving.ptx",
        &LiftOptions {
            entry: Some("after_loop".into()),
            registers: Some(16),
            extents: vec![
                ("in".into(), "n + 1024".into()),
                ("out".into(), "n + 4".into()),
            ],
            issue_order: order.clone(),
            ..Default::default()
        },
    )
    .unwrap();
    for threads in [32u64, 96, 256, 1000, 1024] {
        let strides = halving(threads, 4);
        let last = strides.last().map_or(threads, |s| s / 2);
        let blocks = 24;
        let n = blocks * threads;
        let c = counts(
            after.kernel.clone(),
            [threads as u32, 1, 1],
            &[("n", n as i64)],
        );
        let what = format!("after_loop, {threads} threads, last stride {last}");
        assert_eq!(c.thread_accesses, n * (strides.len() as u64 + 1), "{what}");
        // the store of 4-byte out[x + last]: the sectors each warp's lanes touch
        let sectors: u64 = (0..blocks)
            .flat_map(|b| (0..threads.div_ceil(32)).map(move |w| (b, w)))
            .map(|(b, w)| {
                let lanes =
                    (w * 32..threads.min(w * 32 + 32)).map(|t| (b * threads + t + last) * 4 / 32);
                lanes.collect::<std::collections::BTreeSet<u64>>().len() as u64
            })
            .sum();
        assert_eq!(c.l1.store_sectors, sectors, "{what}");
    }
}
