//! The GPU layer condition of Ernst et al. 2023, Sect. 5.7
//! (shared/papers/ernst2023-analytical-performance-estimation-code-generation-a100.txt).
//!
//! A wave of concurrently running blocks that is `d` grid layers deep updates `d` layers of a
//! range-`r` star stencil and reads `d + 2r` layers of the source grid. Without reuse from the
//! previous wave it loads `(d + 2r) / d` values per lattice update ("With 1/2/4/8/16/32 layers deep
//! wave shapes, 9/1, 10/2, 12/4, 16/8, 24/16, 40/32 values have to be loaded from the DRAM,
//! resulting in a volume of 72/40/24/16/12/10 B/Lup" for r = 4, doubles). If the `d + 2r` layers
//! fit into the part of the L2 available to the source grid, the previous wave's layers are still
//! there and only one value per update is loaded (the "absolute minimum of 8B/Lup"). The layer
//! condition is `X · Y · (d + 2r) · element_bytes ≤ V_L2 / 2` ("fulfilled for X, Y <
//! sqrt(10 MB / (9 · 8B)) = 381" for the A100's 20 MB effective L2 and d = 1, Sects. 4.4.2, 5.7).

use super::{Domain, ModelInfo, ModelInput, ParamSpec, Prediction, Quantity};
use crate::error::{Error, Result};
use crate::input::trace::AccessKind;
use crate::launch::Launch;

/// The model as the command line knows it.
pub const MODEL: ModelInfo = ModelInfo {
    name: "layer-condition",
    summary: "Ernst et al. 2023 Sect. 5.7 GPU layer condition: DRAM B/LUP of a d-deep wave, largest plane the L2 holds",
    scope: crate::models::Scope {
        applies_to: "3-D stencils whose loads sit at constant offsets from the stored point",
        dims: &[3],
        any_control_flow: true,
        atomics: false,
    },
    params: PARAMS,
    quantities: QUANTITIES,
    predict,
};

/// The prediction's fields explained, in the order `predict` prints them.
const QUANTITIES: &[Quantity] = &[
    Quantity::new(
        "dram_bytes_per_lup",
        "DRAM loads without the layer condition",
        "B/LUP",
        Some(Domain::NON_NEGATIVE),
        "element size × (d + 2r) / d: each wave reads its z halo again (Sect. 5.7)",
    ),
    Quantity::new(
        "max_plane_points",
        "largest plane",
        "points",
        Some(Domain::NON_NEGATIVE),
        "the largest XY plane whose d + 2r layers fit half the L2 (Sect. 4.4.2)",
    ),
    Quantity::new(
        "max_square_side",
        "largest square side",
        "points",
        Some(Domain::NON_NEGATIVE),
        "the side of the largest square plane, ⌊√max_plane_points⌋",
    ),
    Quantity::new(
        "r",
        "stencil radius",
        "points",
        Some(Domain::NON_NEGATIVE),
        "stencil range in z (derived from the trace or --set r)",
    ),
    Quantity::new(
        "d",
        "wave depth",
        "layers",
        Some(Domain::POSITIVE),
        "layers one wave of blocks spans in z",
    ),
    Quantity::new(
        "layers",
        "layers to keep",
        "layers",
        Some(Domain::NON_NEGATIVE),
        "layers the L2 must hold for z reuse, 2r + d",
    ),
    Quantity::new(
        "element_bytes",
        "element size",
        "B",
        Some(Domain::POSITIVE),
        "bytes per value",
    ),
    Quantity::new(
        "l2_bytes",
        "L2 capacity",
        "B",
        Some(Domain::POSITIVE),
        "L2 size the model assumes, one partition by default",
    ),
    Quantity::new(
        "wave_blocks",
        "blocks per wave",
        "blocks",
        Some(Domain::COUNT_OR_ZERO),
        "blocks resident on the GPU at once",
    ),
    Quantity::new(
        "plane_points",
        "plane size",
        "points",
        Some(Domain::NON_NEGATIVE),
        "the domain's XY plane, nx · ny",
    ),
    Quantity::new(
        "layer_condition_fulfilled",
        "layer condition holds",
        "",
        None,
        "whether the plane is at most max_plane_points",
    ),
    Quantity::new(
        "dram_load_bytes_per_lup",
        "DRAM loads per update",
        "B/LUP",
        Some(Domain::NON_NEGATIVE),
        "element size where the condition holds, else dram_bytes_per_lup",
    ),
];

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "r",
        default: None,
        doc: "stencil range (default: the longest arm of the star, from the compiled load offsets)",
        domain: Domain::NON_NEGATIVE,
    },
    ParamSpec {
        name: "d",
        default: None,
        doc: "wave depth in grid layers (default: block z extent x fold_z x the wave's block layers)",
        domain: Domain::POSITIVE,
    },
    ParamSpec {
        name: "l2_bytes",
        default: None,
        doc: "effective L2 capacity (default: hw l2.size_bytes / partitions, 20 MB on the A100 as in Sect. 3)",
        domain: Domain::POSITIVE,
    },
];

// ---------------------------------------------------------------------------------------------
// Pure formulas
// ---------------------------------------------------------------------------------------------

/// Grid layers a `d`-deep wave of a range-`r` star stencil reads: `d + 2r`.
pub fn layers(r: f64, d: f64) -> f64 {
    d + 2.0 * r
}

/// DRAM load volume per lattice update of a `d`-deep wave without reuse from earlier waves:
/// `element_bytes · (d + 2r) / d` (Sect. 5.7; 72/40/24/16/12/10 B for r = 4, d = 1..32, doubles).
pub fn dram_bytes_per_lup(element_bytes: f64, r: f64, d: f64) -> f64 {
    element_bytes * layers(r, d) / d
}

/// The largest `X · Y` plane whose `d + 2r` layers fit into half the L2 (the half available to
/// the source grid, Sect. 4.4.2): `⌊(V_L2 / 2) / ((d + 2r) · element_bytes)⌋` points.
pub fn max_plane_points(l2_bytes: f64, element_bytes: f64, r: f64, d: f64) -> f64 {
    (l2_bytes / 2.0 / (layers(r, d) * element_bytes)).floor()
}

/// The range of a star stencil from its access offsets relative to the centre (in elements, any
/// sign, the centre itself allowed): the distinct nonzero distances are split into arms, smallest
/// stride first (the arm of stride `u` is `u, 2u, 3u, …` as long as they are present), and the
/// longest arm is the range. `None` without a nonzero offset.
pub fn star_range(offsets: &[i64]) -> Option<u64> {
    let mut dist: Vec<u64> = offsets
        .iter()
        .map(|o| o.unsigned_abs())
        .filter(|&o| o != 0)
        .collect();
    dist.sort_unstable();
    dist.dedup();
    let mut r = 0;
    while let Some(&u) = dist.first() {
        let mut k = 1;
        while let Some(next) = u.checked_mul(k + 1) {
            if dist.binary_search(&next).is_err() {
                break;
            }
            k += 1;
        }
        r = r.max(k);
        dist.retain(|&x| !(x % u == 0 && x / u <= k));
    }
    (r > 0).then_some(r)
}

/// Depth in grid layers of a wave of `wave_blocks` blocks over a grid of `grid` blocks, each
/// covering `block_depth` layers: one block layer while the wave fits into an xy layer of blocks,
/// else `wave_blocks / (gx · gy)` block layers; never more than `nz` layers.
pub fn wave_depth(grid: [u32; 3], block_depth: f64, wave_blocks: u64, nz: Option<f64>) -> f64 {
    let layer_blocks = (grid[0].max(1) as u64 * grid[1].max(1) as u64) as f64;
    let d = block_depth * (wave_blocks as f64 / layer_blocks).max(1.0);
    match nz {
        Some(n) => d.min(n),
        None => d,
    }
}

// ---------------------------------------------------------------------------------------------
// Inputs from the launch
// ---------------------------------------------------------------------------------------------

/// The stencil's source array (the one with the most load instructions) and the offsets of its
/// loads from the first store's index (constant parts of the affine indices).
fn source_offsets(launch: &Launch) -> Option<(usize, Vec<i64>)> {
    let accesses = launch.program.flattened();
    let mut counts = vec![0usize; launch.arrays.len()];
    for a in &accesses {
        if a.kind == AccessKind::Load {
            counts[a.array] += 1;
        }
    }
    let (src, &n) = counts.iter().enumerate().max_by_key(|(_, c)| **c)?;
    if n == 0 {
        return None;
    }
    let centre = accesses
        .iter()
        .find(|a| a.kind == AccessKind::Store)?
        .index
        .as_affine()?
        .c0;
    let offsets = accesses
        .iter()
        .filter(|a| a.kind == AccessKind::Load && a.array == src)
        .map(|a| a.index.as_affine()?.c0.checked_sub(centre))
        .collect::<Option<Vec<i64>>>()?;
    Some((src, offsets))
}

fn predict(input: &ModelInput) -> Result<Prediction> {
    let l = input.launch;
    let hw = input.hw;
    let found = source_offsets(l);
    let element_bytes = match &found {
        Some((src, _)) => l.arrays[*src].element_bytes as f64,
        None => l
            .arrays
            .first()
            .map(|a| a.element_bytes as f64)
            .ok_or_else(|| Error::new(&l.source_name, "the kernel has no arrays"))?,
    };
    let r = match input.user_param("r") {
        Some(r) => r,
        None => found
            .as_ref()
            .and_then(|(_, o)| star_range(o))
            .map(|r| r as f64)
            .ok_or_else(|| {
                Error::new(
                    &l.source_name,
                    format!(
                        "layer-condition cannot derive the stencil range of '{}' from its accesses (it needs a store and affine loads at constant offsets from it); give the range with --set r=R",
                        l.kernel
                    ),
                )
            })?,
    };
    if !(r.is_finite() && r >= 0.0) {
        return Err(Error::new("--set", format!("r = {r} must be 0 or more")));
    }
    let wave_blocks = hw.sm.count as u64 * l.occupancy.blocks_per_sm as u64;
    let fold_z = l.params.get("fold_z").copied().unwrap_or(1).max(1) as f64;
    let nz = l.params.get("nz").map(|&n| n as f64);
    let d = input.param_or(
        PARAMS,
        "d",
        wave_depth(l.grid, l.block[2] as f64 * fold_z, wave_blocks, nz),
    );
    if !(d.is_finite() && d > 0.0) {
        return Err(Error::new("--set", format!("d = {d} must be positive")));
    }
    let l2_bytes = input.param_or(
        PARAMS,
        "l2_bytes",
        hw.l2.size_bytes as f64 / hw.l2.partitions.max(1) as f64,
    );
    if !(l2_bytes.is_finite() && l2_bytes > 0.0) {
        return Err(Error::new(
            "--set",
            format!("l2_bytes = {l2_bytes} must be positive"),
        ));
    }

    let dram = dram_bytes_per_lup(element_bytes, r, d);
    let max_plane = max_plane_points(l2_bytes, element_bytes, r, d);
    let mut p = Prediction::new(MODEL.name);
    p.field("dram_bytes_per_lup", dram)
        .field("max_plane_points", max_plane)
        .field("max_square_side", max_plane.sqrt().floor())
        .field("r", r)
        .field("d", d)
        .field("layers", layers(r, d))
        .field("element_bytes", element_bytes)
        .field("l2_bytes", l2_bytes)
        .field("wave_blocks", wave_blocks);
    if let Some([nx, ny, _]) = l.domain() {
        let plane = nx as f64 * ny as f64;
        let holds = plane <= max_plane;
        // Layer condition fulfilled: the previous wave's layers still hit, one value per update.
        let predicted = if holds { element_bytes } else { dram };
        p.field("plane_points", plane)
            .field("layer_condition_fulfilled", holds)
            .field("dram_load_bytes_per_lup", predicted);
        p.volumes.dram_load_bytes = Some(predicted * l.lattice_updates as f64);
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn star_range_splits_arms() {
        let pitch = 648;
        let plane = 648 * 520;
        let mut o = vec![0];
        for k in 1..=4 {
            o.extend([k, -k, k * pitch, -k * pitch, k * plane, -k * plane]);
        }
        assert_eq!(star_range(&o), Some(4));
        assert_eq!(star_range(&[0, 1, -1, 264, -264]), Some(1));
        // A longer x arm than y arm.
        assert_eq!(star_range(&[1, 2, 3, 100, -100]), Some(3));
        assert_eq!(star_range(&[0]), None);
    }

    #[test]
    fn wave_depth_counts_block_layers() {
        // 216 blocks in a 10 x 128 layer: one block layer.
        assert_eq!(wave_depth([10, 128, 128], 4.0, 216, Some(512.0)), 4.0);
        // 216 blocks over 2 x 2 layers: 54 block layers of depth 1, capped at nz = 40.
        assert_eq!(wave_depth([2, 2, 100], 1.0, 216, None), 54.0);
        assert_eq!(wave_depth([2, 2, 100], 1.0, 216, Some(40.0)), 40.0);
    }

    #[test]
    fn plane_limit_by_hand() {
        // 1 MiB L2, doubles, r = 1, d = 2: 524288 / (4 * 8) = 16384 points.
        assert_eq!(max_plane_points(1048576.0, 8.0, 1.0, 2.0), 16384.0);
        assert_eq!(dram_bytes_per_lup(4.0, 1.0, 2.0), 8.0);
    }
}
