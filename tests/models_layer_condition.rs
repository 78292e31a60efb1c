//! The layer-condition model against Ernst et al. 2023, Sect. 5.7.

use gputraffic::Bound;
use gputraffic::input::trace::Kernel;
use gputraffic::launch::LaunchRequest;
use gputraffic::models::Prediction;
use gputraffic::models::layer_condition::{self, dram_bytes_per_lup, layers, max_plane_points};
use std::collections::BTreeMap;

fn run(
    trace: &str,
    hw: &str,
    block: [u32; 3],
    set: &[(&str, i64)],
    params: &[(&str, f64)],
) -> gputraffic::error::Result<Prediction> {
    let req = LaunchRequest {
        block: Some(block),
        domain: None,
        set: set.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
    };
    let bound = Bound::new(Kernel::load(std::path::Path::new(trace)).unwrap(), hw, &req).unwrap();
    let params: BTreeMap<String, f64> = params.iter().map(|(n, v)| (n.to_string(), *v)).collect();
    bound
        .predict(&layer_condition::MODEL, &params, None)
        .map(|(p, _)| p)
}

fn f(p: &Prediction, name: &str) -> f64 {
    p.fields[name]
        .as_f64()
        .unwrap_or_else(|| panic!("no field {name}"))
}

/// "With 1/2/4/8/16/32 layers deep wave shapes, 9/1, 10/2, 12/4, 16/8, 24/16, 40/32 values have to
/// be loaded from the DRAM, resulting in a volume of 72/40/24/16/12/10 B/Lup" (range 4, doubles).
const SERIES: [(f64, f64, f64); 6] = [
    (1.0, 9.0, 72.0),
    (2.0, 10.0, 40.0),
    (4.0, 12.0, 24.0),
    (8.0, 16.0, 16.0),
    (16.0, 24.0, 12.0),
    (32.0, 40.0, 10.0),
];

#[test]
fn published_series_from_the_formula() {
    for (d, values, bytes) in SERIES {
        assert_eq!(layers(4.0, d), values);
        assert_eq!(dram_bytes_per_lup(8.0, 4.0, d), bytes, "d = {d}");
    }
}

/// The same series from launches: the paper's 25-point range-4 stencil at 640x512x512 on the
/// A100, blocks of 1024 threads with z extents 1..32 (one block layer per wave), r and d derived.
#[test]
fn published_series_from_launches() {
    let blocks = [
        [1024, 1, 1],
        [512, 1, 2],
        [256, 1, 4],
        [128, 1, 8],
        [64, 1, 16],
        [32, 1, 32],
    ];
    for (b, (d, _, bytes)) in blocks.into_iter().zip(SERIES) {
        let p = run("traces/ernst-25pt-r4.toml", "a100-40gb", b, &[], &[]).unwrap();
        assert_eq!(f(&p, "r"), 4.0);
        assert_eq!(f(&p, "d"), d, "{b:?}");
        assert_eq!(f(&p, "dram_bytes_per_lup"), bytes, "{b:?}");
    }
    // 2z thread folding doubles the wave depth (Sect. 5.6: "from four to eight").
    let p = run(
        "traces/ernst-25pt-r4.toml",
        "a100-40gb",
        [64, 4, 4],
        &[("fold_z", 2)],
        &[],
    )
    .unwrap();
    assert_eq!((f(&p, "r"), f(&p, "d")), (4.0, 8.0));
    assert_eq!(f(&p, "dram_bytes_per_lup"), 16.0);
    // The same from star4 and from --set.
    let p = run("traces/star4.toml", "a100-40gb", [32, 1, 32], &[], &[]).unwrap();
    assert_eq!(f(&p, "dram_bytes_per_lup"), 10.0);
    let p = run(
        "traces/star1.toml",
        "a100-40gb",
        [32, 8, 4],
        &[],
        &[("r", 4.0), ("d", 16.0)],
    )
    .unwrap();
    assert_eq!(f(&p, "dram_bytes_per_lup"), 12.0);
}

/// "The sequential layer condition is fulfilled for X, Y < sqrt(10 MB / (9 * 8B)) = 381" with the
/// A100's 20 MB effective L2 (Sect. 3: 40 MB in two halves).
#[test]
fn published_plane_limit() {
    let l2 = 20.0 * 1048576.0;
    assert_eq!(max_plane_points(l2, 8.0, 4.0, 1.0).sqrt().floor(), 381.0);
    let p = run("traces/star4.toml", "a100-40gb", [1024, 1, 1], &[], &[]).unwrap();
    assert_eq!(f(&p, "d"), 1.0);
    assert_eq!(f(&p, "l2_bytes"), l2);
    assert_eq!(f(&p, "max_square_side"), 381.0);
    // 640 x 512 is beyond it: no z reuse, 72 B/LUP.
    assert_eq!(p.fields["layer_condition_fulfilled"], false);
    assert_eq!(f(&p, "dram_load_bytes_per_lup"), 72.0);
}

#[test]
fn small_planes_fulfil_it() {
    let p = run(
        "traces/star4.toml",
        "a100-40gb",
        [32, 8, 4],
        &[("nx", 256), ("ny", 256)],
        &[],
    )
    .unwrap();
    assert_eq!(p.fields["layer_condition_fulfilled"], true);
    assert_eq!(f(&p, "dram_load_bytes_per_lup"), 8.0);
    assert_eq!(p.volumes.dram_load_bytes, Some(8.0 * 256.0 * 256.0 * 512.0));
}

#[test]
fn bad_parameters_are_errors() {
    let e = run(
        "traces/star4.toml",
        "a100-40gb",
        [32, 8, 4],
        &[],
        &[("d", 0.0)],
    )
    .unwrap_err();
    assert!(e.message.contains("d = 0"), "{e}");
    let e = run(
        "traces/star4.toml",
        "a100-40gb",
        [32, 8, 4],
        &[],
        &[("l2_bytes", -5.0)],
    )
    .unwrap_err();
    assert!(e.message.contains("l2_bytes"), "{e}");
    // A kernel without a store: the range cannot be derived.
    let k = Kernel::parse(
        r#"
name = "loads-only"
[params]
n = 1024
[[arrays]]
name = "a"
element_bytes = 8
dims = ["n + 2"]
[launch]
block = [128, 1, 1]
grid = ["cdiv(n, blockDim.x)", "1", "1"]
[thread]
let = ["x = blockIdx.x * blockDim.x + threadIdx.x"]
guard = "x < n"
lattice_updates = "n"
body = [{ load = "a", index = "x" }, { load = "a", index = "x + 2" }]
"#,
        "loads-only.toml",
    )
    .unwrap();
    let e = Bound::new(k, "a100-40gb", &LaunchRequest::default())
        .unwrap()
        .predict(&layer_condition::MODEL, &BTreeMap::new(), None)
        .unwrap_err();
    assert!(e.message.contains("none of the domain parameters"), "{e}");
    // The same loads over a 3-D grid: in scope, but the range cannot be derived.
    let k = Kernel::parse(
        r#"
name = "loads-only-3d"
[params]
nx = 64
ny = 64
nz = 64
[[arrays]]
name = "a"
element_bytes = 8
dims = ["nx + 2", "ny", "nz"]
[launch]
block = [64, 2, 1]
grid = ["cdiv(nx, blockDim.x)", "cdiv(ny, blockDim.y)", "nz"]
[thread]
let = ["x = blockIdx.x * blockDim.x + threadIdx.x", "y = blockIdx.y * blockDim.y + threadIdx.y"]
lattice_updates = "nx * ny * nz"
body = [{ load = "a", index = ["x", "y", "blockIdx.z"] }, { load = "a", index = ["x + 2", "y", "blockIdx.z"] }]
"#,
        "loads-only-3d.toml",
    )
    .unwrap();
    let e = Bound::new(k, "a100-40gb", &LaunchRequest::default())
        .unwrap()
        .predict(&layer_condition::MODEL, &BTreeMap::new(), None)
        .unwrap_err();
    assert_eq!(e.source_name, "loads-only-3d.toml");
    assert!(e.message.contains("--set r"), "{e}");
}
