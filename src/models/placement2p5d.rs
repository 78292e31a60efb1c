//! The thread-block heuristic of the 2.5D data-placement paper ("data placement for 2.5D
//! blocking of 3D stencils", `shared/papers/data-placement-2p5d-blocking-3d-stencils.txt`).
//!
//! Sect. IV-A: a block of `bx × by` threads loads `(bx + 2) × (by + 2)` values per XY plane; the
//! halo is loaded again by the neighbouring blocks, so a larger `bx` lowers the redundant share,
//! rows are coalesced when `bx` is a multiple of 32, and the X-halo columns are not coalesced, so a
//! larger `by` means more uncoalesced accesses: "a larger bx and a smaller by mean better
//! performance" ("long and flat"). Formula (1) puts the block shape into the global-memory
//! throughput as `bx / by` (`α · bx · D_all · U_cache · BW / (β · by)`); with the grid, GPU and
//! cache utilisation fixed, that ratio is the heuristic's score.
//!
//! The paper uses the heuristic to prune the auto-tuning space and does not spell the pruned
//! space out. We take as candidates the shapes its rules admit on the given GPU and grid: `bx` a
//! multiple of the warp size (coalescing) up to the grid width, `by` a power of two (the
//! tuning grid of Table I) no larger than `bx` ("long and flat") or the grid height, and at most
//! the GPU's threads per block. Candidates are ranked by the score, ties broken by the smaller
//! redundant share `((bx+2)(by+2) − bx·by) / (bx·by)`, then the larger `bx`.

use super::{Domain, ModelInfo, ModelInput, ParamSpec, Prediction, Quantity};
use crate::error::{Error, Result};
use serde_json::Value;
use std::cmp::Ordering;

/// Name used in error messages from the pure functions.
const NAME: &str = "placement2p5d";

/// Settable constants.
const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "element_bytes",
        default: None,
        doc: "bytes per value for the loaded-volume estimate; default: the trace's first array",
        domain: Domain::POSITIVE,
    },
    ParamSpec {
        name: "halo",
        default: Some(1.0),
        doc: "halo width of Sect. IV-A's (bx + 2)(by + 2) (1 for the 7-point stencil)",
        domain: Domain::COUNT_OR_ZERO,
    },
];

/// The model as the command line knows it.
pub const MODEL: ModelInfo = ModelInfo {
    name: "placement2p5d",
    summary: "2.5D data-placement paper: long-and-flat thread-block heuristic (Sect. IV-A, Formula 1) as a ranking",
    scope: crate::models::Scope {
        applies_to: "3-D stencils with 2.5D blocking over 2-D thread blocks",
        dims: &[3],
        any_control_flow: false,
        atomics: false,
    },
    params: PARAMS,
    quantities: QUANTITIES,
    predict,
};

/// The prediction's fields explained, in the order `predict` prints them.
const QUANTITIES: &[Quantity] = &[
    Quantity::new(
        "heuristic_score",
        "heuristic score",
        "1",
        Some(Domain::NON_NEGATIVE),
        "the paper's score of the block shape, higher is better",
    ),
    Quantity::new(
        "rank",
        "rank",
        "1",
        Some(Domain::COUNT),
        "the shape's place among the candidates by score (1: best)",
    ),
    Quantity::new(
        "candidates",
        "candidates",
        "shapes",
        Some(Domain::COUNT_OR_ZERO),
        "block shapes the heuristic considers for this grid and GPU",
    ),
    Quantity::new(
        "in_candidates",
        "among the candidates",
        "",
        None,
        "whether this block shape is one of them",
    ),
    Quantity::new(
        "recommended_block",
        "recommended block",
        "threads",
        None,
        "the candidate with the best score, x × y × 1",
    ),
    Quantity::new(
        "recommended_score",
        "recommended score",
        "1",
        Some(Domain::NON_NEGATIVE),
        "the score of the recommended block",
    ),
    Quantity::new(
        "loaded_values_per_plane",
        "loaded values per plane",
        "values",
        Some(Domain::COUNT_OR_ZERO),
        "values a block loads per plane, tile and halo",
    ),
    Quantity::new(
        "redundant_ratio",
        "redundant ratio",
        "1",
        Some(Domain::NON_NEGATIVE),
        "halo values loaded per interior value",
    ),
    Quantity::new(
        "bx",
        "block x",
        "threads",
        Some(Domain::COUNT),
        "threads per block in x",
    ),
    Quantity::new(
        "by",
        "block y",
        "threads",
        Some(Domain::COUNT),
        "threads per block in y",
    ),
];

/// Values a `bx × by` block loads per XY plane with a halo of width `halo` (Sect. IV-A:
/// `(bx + 2) × (by + 2)` for width 1).
pub fn loaded_values_per_plane(bx: u64, by: u64, halo: u64) -> u64 {
    (bx + 2 * halo) * (by + 2 * halo)
}

/// The redundant share of Sect. IV-A: halo values (loaded again by the neighbours) over the
/// block's own values.
pub fn redundant_ratio(bx: u64, by: u64, halo: u64) -> f64 {
    let own = (bx * by) as f64;
    (loaded_values_per_plane(bx, by, halo) as f64 - own) / own
}

/// The heuristic's score: the block-shape factor `bx / by` of Formula (1); larger is better.
pub fn heuristic_score(bx: u64, by: u64) -> f64 {
    bx as f64 / by as f64
}

/// The flop-to-byte ratio of Sect. I: `flops / (accesses · bytes)` (7 / (8 · 8) ≈ 0.11).
pub fn flops_per_byte(flops: f64, accesses: f64, bytes_per_access: f64) -> f64 {
    flops / (accesses * bytes_per_access)
}

/// The block shapes the heuristic considers on a GPU with `warp`-thread warps and at most
/// `max_threads` threads per block, for an `nx × ny` plane: `bx` a multiple of `warp` not wider
/// than the plane (at least one warp), `by` a power of two with `by ≤ bx`, `by ≤ ny` (at least 1)
/// and `bx · by ≤ max_threads`. Sorted best first.
pub fn candidates(nx: u64, ny: u64, warp: u64, max_threads: u64) -> Result<Vec<(u64, u64)>> {
    if nx == 0 || ny == 0 || warp == 0 || max_threads < warp {
        return Err(Error::new(
            NAME,
            format!(
                "no candidate blocks for a {nx} x {ny} plane with {warp}-thread warps and {max_threads} threads per block"
            ),
        ));
    }
    let bx_max = nx.max(warp).min(max_threads);
    let mut out = Vec::new();
    for bx in (warp..=bx_max).step_by(warp as usize) {
        let mut by = 1;
        while by <= bx && by <= ny.max(1) && bx * by <= max_threads {
            out.push((bx, by));
            by *= 2;
        }
    }
    out.sort_by(|a, b| better(*a, *b));
    Ok(out)
}

/// Ordering of two shapes, best first: higher score, then lower redundant share, then wider.
fn better(a: (u64, u64), b: (u64, u64)) -> Ordering {
    heuristic_score(b.0, b.1)
        .total_cmp(&heuristic_score(a.0, a.1))
        .then(redundant_ratio(a.0, a.1, 1).total_cmp(&redundant_ratio(b.0, b.1, 1)))
        .then(b.0.cmp(&a.0))
}

/// The rank (1 = best) `block` takes among `candidates`: one more than the number of candidates
/// ordered strictly before it, whether or not `block` is itself a candidate.
pub fn rank(block: (u64, u64), candidates: &[(u64, u64)]) -> u64 {
    1 + candidates
        .iter()
        .filter(|c| better(**c, block) == Ordering::Less)
        .count() as u64
}

fn predict(input: &ModelInput) -> Result<Prediction> {
    let launch = input.launch;
    let [bx, by, bz] = launch.block.map(|b| b as u64);
    if bz != 1 {
        return Err(Error::new(
            &launch.source_name,
            format!(
                "{NAME}: 2.5D blocking uses 2D thread blocks; block {bx}x{by}x{bz} has blockDim.z > 1"
            ),
        ));
    }
    let [nx, ny, nz] = launch.domain().ok_or_else(|| {
        Error::new(
            &launch.source_name,
            format!("{NAME}: the kernel has no nx, ny, nz parameters (the stencil grid)"),
        )
    })?;
    if nx <= 0 || ny <= 0 || nz <= 0 {
        return Err(Error::new(
            &launch.source_name,
            format!("{NAME}: grid {nx} x {ny} x {nz} is not positive"),
        ));
    }
    let halo = input.param_or(PARAMS, "halo", 1.0);
    if !(halo.is_finite() && halo >= 0.0 && halo.fract() == 0.0 && halo <= 1024.0) {
        return Err(Error::new(
            "--set",
            format!("{NAME}: halo = {halo} must be a non-negative integer"),
        ));
    }
    let halo = halo as u64;
    let derived_elem = input
        .kernel
        .arrays
        .first()
        .map_or(4.0, |a| a.element_bytes as f64);
    let elem = input.param_or(PARAMS, "element_bytes", derived_elem);
    if !(elem.is_finite() && elem > 0.0) {
        return Err(Error::new(
            "--set",
            format!("{NAME}: element_bytes = {elem} must be positive"),
        ));
    }
    let hw = input.hw;
    let cands = candidates(
        nx as u64,
        ny as u64,
        hw.sm.warp_size as u64,
        hw.sm.max_threads_per_block as u64,
    )?;
    let best = cands[0];
    let loaded = loaded_values_per_plane(bx, by, halo);

    let mut p = Prediction::new(MODEL.name);
    p.field("heuristic_score", heuristic_score(bx, by))
        .field("rank", rank((bx, by), &cands))
        .field("candidates", cands.len() as u64)
        .field("in_candidates", cands.contains(&(bx, by)))
        .field("recommended_block", Value::from(vec![best.0, best.1, 1u64]))
        .field("recommended_score", heuristic_score(best.0, best.1))
        .field("loaded_values_per_plane", loaded)
        .field("redundant_ratio", redundant_ratio(bx, by, halo))
        .field("bx", bx)
        .field("by", by);
    // Sect. IV-A's (bx + 2)(by + 2) values per block and XY plane, every plane of the sweep once:
    // what the SMs fetch when each value is fetched once per block (the on-chip placements'
    // intent); element-granular, so it ignores the 32 B sectors of the X halo.
    p.volumes.l2_load_bytes = Some(launch.total_blocks as f64 * nz as f64 * loaded as f64 * elem);
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loaded_values_by_hand() {
        assert_eq!(loaded_values_per_plane(128, 1, 1), 130 * 3);
        assert_eq!(loaded_values_per_plane(32, 4, 0), 128);
        assert_eq!(redundant_ratio(2, 2, 1), (16.0 - 4.0) / 4.0);
    }

    #[test]
    fn score_prefers_long_and_flat() {
        assert!(heuristic_score(256, 1) > heuristic_score(128, 1));
        assert!(heuristic_score(128, 1) > heuristic_score(128, 2));
        assert_eq!(heuristic_score(64, 2), 32.0);
    }

    #[test]
    fn candidates_by_hand() {
        // 64 x 64 plane, 32-thread warps, 128 threads per block: bx in {32, 64};
        // bx = 32: by 1, 2, 4 (32 x 4 = 128); bx = 64: by 1, 2. Scores 64, 32, 32, 16, 8; the tie
        // of 64 x 2 and 32 x 1 goes to the smaller redundant share:
        // 64 x 2: 264/128 - 1 = 1.0625; 32 x 1: 102/32 - 1 = 2.1875.
        let c = candidates(64, 64, 32, 128).unwrap();
        assert_eq!(c, vec![(64, 1), (64, 2), (32, 1), (32, 2), (32, 4)]);
        assert_eq!(rank((32, 1), &c), 3);
        let c = candidates(64, 64, 32, 1024).unwrap();
        assert_eq!(rank((64, 1), &c), 1);
        // A block that is no candidate still gets the rank it would take.
        assert_eq!(rank((1000, 1), &c), 1);
        assert!(candidates(0, 64, 32, 1024).is_err());
        assert!(candidates(64, 64, 32, 16).is_err());
    }

    #[test]
    fn flops_per_byte_by_hand() {
        assert_eq!(flops_per_byte(8.0, 4.0, 2.0), 1.0);
    }
}
