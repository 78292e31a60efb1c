//! The memory-footprint model of Krotkiewski & Dabrowski 2013, "Efficient 3D stencil computations
//! using CUDA" (Parallel Computing 39, `shared/papers/krotkiewski2013-efficient-3d-stencils-cuda.txt`).
//!
//! A 2.5D-blocked stencil streams one XY tile per thread block and plane. The paper counts the
//! bytes of global memory traffic per grid point (BpP): the optimum reads and writes every point
//! once (eq. 5); a thread block of BX × BY also reads a halo, and because the smallest memory
//! transaction is 32 B the one-value X halo costs 32 B per row and side (eqs. 6–7), which gives
//! BpP = 12 for the paper's 32 × 6 single-precision tile (eq. 9). Condition (8) picks tiles whose
//! interior holds an integer multiple M of the halo values, so that M + 1 coalesced instructions
//! read the tile with its halo (the 48 × 4 remapped read of Fig. 4). Sect. 6.2 turns measured
//! throughputs into an effective footprint, and eq. (10) throughput into bandwidth.
//!
//! Formulas are pure functions of plain numbers (`tile_values`, `bpp`, `m_condition`, ...);
//! [`MODEL`]'s `predict` derives their inputs from the launch: the tile is the launch block
//! (`--set BX=, BY=` override), the element size is that of the first loaded array, the halo
//! width is the trace's `halo` parameter (0 for copycube, 1 otherwise).

use super::{Domain, ModelInfo, ModelInput, ParamSpec, Prediction, Quantity};
use crate::error::{Error, Result};
use crate::input::trace::{AccessKind, Step};
use serde_json::Value;

/// Name used in error messages from the pure functions.
const NAME: &str = "krotkiewski2013";

/// Settable constants.
const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "transaction_bytes",
        default: Some(32.0),
        doc: "minimum memory transaction in bytes that one X-halo value costs (Sect. 4: 32 B)",
        domain: Domain::COUNT,
    },
    ParamSpec {
        name: "element_bytes",
        default: None,
        doc: "size(FP) of eq. (6); default: element size of the trace's first loaded array",
        domain: Domain::COUNT,
    },
    ParamSpec {
        name: "halo",
        default: None,
        doc: "halo width (0: copycube, 1: the stencils); default: the trace's `halo` parameter, else 1",
        domain: Domain::COUNT_OR_ZERO,
    },
    ParamSpec {
        name: "BX",
        default: None,
        doc: "tile width BX of eqs. (6)-(8); default: blockDim.x",
        domain: Domain::COUNT,
    },
    ParamSpec {
        name: "BY",
        default: None,
        doc: "tile height BY of eqs. (6)-(8); default: blockDim.y (the block must be 2D)",
        domain: Domain::COUNT,
    },
];

/// The model as the command line knows it.
pub const MODEL: ModelInfo = ModelInfo {
    name: "krotkiewski2013",
    summary: "Krotkiewski & Dabrowski 2013: 2.5D tile + halo memory footprint BpP (eqs. 5-9), M-condition (8)",
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
        "bpp",
        "bytes per point",
        "B/LUP",
        Some(Domain::NON_NEGATIVE),
        "(9): bytes read and written per grid point, halo overhead included",
    ),
    Quantity::new(
        "bpp_optimal",
        "optimal bytes per point",
        "B/LUP",
        Some(Domain::NON_NEGATIVE),
        "(5): every value read once and written once, 2 × element size",
    ),
    Quantity::new(
        "bpp_read",
        "bytes read per point",
        "B/LUP",
        Some(Domain::NON_NEGATIVE),
        "the read part of bpp, element size × (interior + halo) / interior",
    ),
    Quantity::new(
        "bpp_write",
        "bytes written per point",
        "B/LUP",
        Some(Domain::NON_NEGATIVE),
        "the write part of bpp, one element",
    ),
    Quantity::new(
        "halo_overhead",
        "halo overhead",
        "1",
        Some(Domain::NON_NEGATIVE),
        "bpp / bpp_optimal − 1: the extra traffic the halo costs",
    ),
    Quantity::new(
        "interior_values",
        "interior values",
        "values",
        Some(Domain::COUNT_OR_ZERO),
        "(6): values a tile updates per plane, BX·BY",
    ),
    Quantity::new(
        "halo_values",
        "halo values",
        "values",
        Some(Domain::COUNT_OR_ZERO),
        "(7): halo values a tile reads per plane, in 32 B transactions",
    ),
    Quantity::new(
        "values_per_tile",
        "values per tile",
        "values",
        Some(Domain::COUNT_OR_ZERO),
        "interior + halo values read per tile and plane",
    ),
    Quantity::new(
        "m_condition_holds",
        "M condition holds",
        "",
        None,
        "(8): whether M · halo = interior for a whole M (tile and halo read in M + 1 instructions)",
    ),
    Quantity::new(
        "m",
        "M",
        "1",
        Some(Domain::COUNT_OR_ZERO),
        "the whole M of (8), empty when the condition fails",
    ),
    Quantity::new(
        "interior_per_halo",
        "interior per halo value",
        "1",
        Some(Domain::NON_NEGATIVE),
        "interior / halo values (empty without halo)",
    ),
    Quantity::new(
        "read_instructions",
        "read instructions per thread",
        "instructions",
        Some(Domain::COUNT_OR_ZERO),
        "coalesced read instructions a thread issues per plane to load tile and halo",
    ),
    Quantity::new(
        "remap_width",
        "remapped tile width",
        "values",
        Some(Domain::COUNT_OR_ZERO),
        "BX + 2 × the x halo values per side: the shared tile's width",
    ),
    Quantity::new(
        "remap_rows",
        "remapped tile rows",
        "rows",
        Some(Domain::COUNT_OR_ZERO),
        "BY + 2 × halo: the shared tile's rows",
    ),
    Quantity::new(
        "x_halo_values_per_side",
        "x halo values per side",
        "values",
        Some(Domain::COUNT_OR_ZERO),
        "values one 32 B transaction brings per row and side, 32 B / element size",
    ),
    Quantity::new(
        "bx",
        "BX",
        "threads",
        Some(Domain::COUNT),
        "tile width (block x unless --set BX)",
    ),
    Quantity::new(
        "by",
        "BY",
        "threads",
        Some(Domain::COUNT),
        "tile height (block y unless --set BY)",
    ),
    Quantity::new(
        "element_bytes",
        "element size",
        "B",
        Some(Domain::COUNT),
        "bytes per value",
    ),
    Quantity::new(
        "halo_width",
        "halo width",
        "values",
        Some(Domain::COUNT_OR_ZERO),
        "stencil radius (--set halo)",
    ),
];

/// The values one thread block reads from one XY plane (eq. 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TileValues {
    /// `BX · BY`: the tile interior.
    pub interior: u64,
    /// `2·BX + 2·(BY + 2)·32/size(FP)`: Y halo rows plus X halo columns (with the four corners)
    /// at one 32 B transaction per row and side; 0 for a halo width of 0.
    pub halo: u64,
}

impl TileValues {
    /// Interior plus halo: what the block requests per plane.
    pub fn total(&self) -> u64 {
        self.interior + self.halo
    }
}

/// Values of one minimum transaction, `transaction_bytes / size(FP)` (8 in single precision,
/// the "8" of eq. 7 and the 8-word offset of Fig. 4).
pub fn x_halo_values_per_side(element_bytes: u64, transaction_bytes: u64) -> Result<u64> {
    if element_bytes == 0 || transaction_bytes == 0 {
        return Err(Error::new(
            NAME,
            format!(
                "element size ({element_bytes} B) and transaction size ({transaction_bytes} B) must be positive"
            ),
        ));
    }
    if !transaction_bytes.is_multiple_of(element_bytes) {
        return Err(Error::new(
            NAME,
            format!(
                "a {transaction_bytes} B transaction does not hold a whole number of {element_bytes} B values (eq. 6 needs 32/size(FP) to be an integer)"
            ),
        ));
    }
    Ok(transaction_bytes / element_bytes)
}

/// Eq. (6): the values a `bx × by` block reads per XY tile with a halo of width `halo`
/// (1 for the stencils; 0 for copycube, which reads just the interior).
pub fn tile_values(
    bx: u64,
    by: u64,
    element_bytes: u64,
    transaction_bytes: u64,
    halo: u64,
) -> Result<TileValues> {
    if bx == 0 || by == 0 {
        return Err(Error::new(
            NAME,
            format!("tile {bx} x {by} has a zero side"),
        ));
    }
    let xh = x_halo_values_per_side(element_bytes, transaction_bytes)?;
    let halo_values = match halo {
        0 => 0,
        1 => 2 * bx + 2 * (by + 2) * xh,
        w => {
            return Err(Error::new(
                NAME,
                format!("eq. (6) is for a halo of width 1 (or 0 for copycube), not {w}"),
            ));
        }
    };
    Ok(TileValues {
        interior: bx * by,
        halo: halo_values,
    })
}

/// Eq. (5): read every value once and write it once, `2 · size(FP)` bytes per point
/// (8 in single precision).
pub fn bpp_optimal(element_bytes: u64) -> f64 {
    2.0 * element_bytes as f64
}

/// Bytes read per grid point with the halo overhead of eq. (6): the tile's values over its
/// interior, times `size(FP)` (8 for the 32 × 6 single-precision tile, the "8(read)" of eq. 9).
pub fn bpp_read(tile: TileValues, element_bytes: u64) -> f64 {
    element_bytes as f64 * tile.total() as f64 / tile.interior as f64
}

/// Eq. (9): the memory footprint with the halo overhead, read part plus one write of
/// `size(FP)` (12 for the 32 × 6 single-precision tile).
pub fn bpp(tile: TileValues, element_bytes: u64) -> f64 {
    bpp_read(tile, element_bytes) + element_bytes as f64
}

/// Eq. (8): the integer `M` with `M · halo = interior`, if there is one (`None` when the tile
/// reads no halo or the ratio is not a positive integer). With it, `M + 1` coalesced
/// instructions read tile and halo and the block has `interior / M` threads.
pub fn m_condition(tile: TileValues) -> Option<u64> {
    (tile.halo > 0 && tile.interior.is_multiple_of(tile.halo)).then(|| tile.interior / tile.halo)
}

/// Read instructions per tile when `threads` threads read it with the linear remap of Fig. 4
/// (2 for 32 × 6: 384 values, 192 threads).
pub fn read_instructions(tile: TileValues, threads: u64) -> Result<u64> {
    if threads == 0 {
        return Err(Error::new(NAME, "a thread block needs at least one thread"));
    }
    Ok(tile.total().div_ceil(threads))
}

/// Sect. 6.2: the effective footprint of a kernel from its throughput relative to copycube's,
/// `BpP_eff = copy_throughput / kernel_throughput · copy_bpp` (13.3 / 12.4 · 8 ≈ 8.6 on the C2050).
pub fn bpp_effective(copy_throughput: f64, kernel_throughput: f64, copy_bpp: f64) -> Result<f64> {
    let ok = |x: f64| x.is_finite() && x > 0.0;
    if !(ok(copy_throughput) && ok(kernel_throughput) && ok(copy_bpp)) {
        return Err(Error::new(
            NAME,
            "throughputs and the copy footprint must be positive finite numbers",
        ));
    }
    Ok(copy_throughput / kernel_throughput * copy_bpp)
}

/// Eq. (10): effective bandwidth in GB/s of a kernel that processes `points` grid points with
/// footprint `bpp` in `seconds`.
pub fn effective_bandwidth_gbs(points: f64, bpp: f64, seconds: f64) -> Result<f64> {
    let ok = |x: f64| x.is_finite() && x >= 0.0;
    if !(ok(points) && ok(bpp) && ok(seconds) && seconds > 0.0) {
        return Err(Error::new(
            NAME,
            "points and BpP must be non-negative and the time positive",
        ));
    }
    Ok(points * bpp / (seconds * 1e9))
}

/// A user-set or derived parameter as a positive (or, with `allow_zero`, non-negative) integer.
fn integer(name: &str, v: f64, allow_zero: bool) -> Result<u64> {
    let ok = v.is_finite() && v.fract() == 0.0 && v <= u32::MAX as f64 && v >= 0.0;
    if !ok || (!allow_zero && v == 0.0) {
        return Err(Error::new(
            "--set",
            format!(
                "{NAME}: {name} = {v} must be a {} integer",
                if allow_zero {
                    "non-negative"
                } else {
                    "positive"
                }
            ),
        ));
    }
    Ok(v as u64)
}

/// Element size of the first array the kernel loads (the stencil input).
fn first_loaded_element_bytes(input: &ModelInput) -> Option<u64> {
    fn find(steps: &[Step]) -> Option<usize> {
        steps.iter().find_map(|s| match s {
            Step::Access(a) if a.kind == AccessKind::Load => Some(a.array),
            Step::Loop(l) => find(&l.body),
            Step::If(i) => find(&i.body),
            Step::Access(_) | Step::Sync(_) => None,
        })
    }
    let array = find(&input.kernel.body)?;
    input
        .kernel
        .arrays
        .get(array)
        .map(|a| a.element_bytes as u64)
}

fn predict(input: &ModelInput) -> Result<Prediction> {
    let launch = input.launch;
    let block = launch.block;
    if block[2] != 1 && input.user_param("BY").is_none() {
        return Err(Error::new(
            &launch.source_name,
            format!(
                "{NAME} models 2.5D blocking with 2D thread blocks; block {}x{}x{} has blockDim.z > 1 (set BY to model it anyway)",
                block[0], block[1], block[2]
            ),
        ));
    }
    let derived_elem = first_loaded_element_bytes(input).ok_or_else(|| {
        Error::new(
            &launch.source_name,
            format!("{NAME}: the kernel loads no array (set element_bytes)"),
        )
    })?;
    let elem = integer(
        "element_bytes",
        input.param_or(PARAMS, "element_bytes", derived_elem as f64),
        false,
    )?;
    let transaction = integer(
        "transaction_bytes",
        input.param_or(PARAMS, "transaction_bytes", 32.0),
        false,
    )?;
    let trace_halo = launch.params.get("halo").copied().unwrap_or(1) as f64;
    let halo = integer("halo", input.param_or(PARAMS, "halo", trace_halo), true)?;
    let bx = integer("BX", input.param_or(PARAMS, "BX", block[0] as f64), false)?;
    let by = integer("BY", input.param_or(PARAMS, "BY", block[1] as f64), false)?;

    let tile = tile_values(bx, by, elem, transaction, halo)?;
    let xh = if halo == 0 {
        0
    } else {
        x_halo_values_per_side(elem, transaction)?
    };
    let read = bpp_read(tile, elem);
    let total = bpp(tile, elem);
    let optimal = bpp_optimal(elem);
    let m = m_condition(tile);
    let threads = launch.threads_per_block as u64;
    let updates = launch.lattice_updates as f64;

    let mut p = Prediction::new(MODEL.name);
    p.field("bpp", total)
        .field("bpp_optimal", optimal)
        .field("bpp_read", read)
        .field("bpp_write", elem as f64)
        .field("halo_overhead", total / optimal - 1.0)
        .field("interior_values", tile.interior)
        .field("halo_values", tile.halo)
        .field("values_per_tile", tile.total())
        .field("m_condition_holds", m.is_some())
        .field("m", m.map_or(Value::Null, Value::from))
        .field(
            "interior_per_halo",
            if tile.halo == 0 {
                Value::Null
            } else {
                Value::from(tile.interior as f64 / tile.halo as f64)
            },
        )
        .field("read_instructions", read_instructions(tile, threads)?)
        .field("remap_width", bx + 2 * xh)
        .field("remap_rows", by + 2 * halo)
        .field("x_halo_values_per_side", xh)
        .field("bx", bx)
        .field("by", by)
        .field("element_bytes", elem)
        .field("halo_width", halo);
    // Eq. (9) read part: what the blocks request, with no reuse between blocks (exact on GPUs
    // whose L1 does not cache global loads); eq. (5): perfect reuse in the caches, every value
    // from DRAM once; writes once everywhere.
    p.volumes.l1_load_bytes = Some(read * updates);
    p.volumes.l2_load_bytes = Some(read * updates);
    p.volumes.dram_load_bytes = Some(elem as f64 * updates);
    p.volumes.l2_store_bytes = Some(elem as f64 * updates);
    p.volumes.dram_store_bytes = Some(elem as f64 * updates);
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eq6_by_hand() {
        // 32 x 4 doubles: 128 interior; 2*32 + 2*6*4 = 112 halo.
        let t = tile_values(32, 4, 8, 32, 1).unwrap();
        assert_eq!(
            t,
            TileValues {
                interior: 128,
                halo: 112
            }
        );
        // 64 x 2 floats: 128 interior; 128 + 2*4*8 = 192 halo.
        let t = tile_values(64, 2, 4, 32, 1).unwrap();
        assert_eq!((t.interior, t.halo, t.total()), (128, 192, 320));
        // No halo: the interior only.
        assert_eq!(tile_values(32, 6, 4, 32, 0).unwrap().halo, 0);
    }

    #[test]
    fn footprints_by_hand() {
        // 64 x 2 floats: read 4 * 320 / 128 = 10, write 4, optimum 8.
        let t = tile_values(64, 2, 4, 32, 1).unwrap();
        assert_eq!(bpp_read(t, 4), 10.0);
        assert_eq!(bpp(t, 4), 14.0);
        assert_eq!(bpp_optimal(8), 16.0);
        // Copycube: interior only, BpP = optimum.
        let c = tile_values(32, 6, 4, 32, 0).unwrap();
        assert_eq!(bpp(c, 4), bpp_optimal(4));
    }

    #[test]
    fn m_condition_by_hand() {
        // 16 x 6 doubles: 96 interior, 32 + 2*8*4 = 96 halo: M = 1.
        assert_eq!(m_condition(tile_values(16, 6, 8, 32, 1).unwrap()), Some(1));
        // 64 x 2 floats: 128 / 192 is not an integer.
        assert_eq!(m_condition(tile_values(64, 2, 4, 32, 1).unwrap()), None);
        // 32 x 14 floats: 448 interior, 64 + 2*16*8 = 320 halo: no.
        assert_eq!(m_condition(tile_values(32, 14, 4, 32, 1).unwrap()), None);
        // 64 x 18 floats: 1152 interior, 128 + 2*20*8 = 448 halo: no.
        assert_eq!(m_condition(tile_values(64, 18, 4, 32, 1).unwrap()), None);
        // M = 2: 32 x BY with 32 BY = 2 (64 + 16 (BY + 2)) = 192 + 32 BY has no solution, but
        // 64 x BY with 64 BY = 2 (128 + 16 BY + 32) gives BY = 10: 640 = 2 * 320.
        assert_eq!(m_condition(tile_values(64, 10, 4, 32, 1).unwrap()), Some(2));
        assert_eq!(m_condition(tile_values(32, 6, 4, 32, 0).unwrap()), None);
    }

    #[test]
    fn read_instructions_by_hand() {
        let t = tile_values(64, 10, 4, 32, 1).unwrap(); // 960 values
        assert_eq!(read_instructions(t, 320).unwrap(), 3); // M + 1 with M = 2
        assert_eq!(read_instructions(t, 640).unwrap(), 2);
        assert!(read_instructions(t, 0).is_err());
    }

    #[test]
    fn bad_inputs_are_errors() {
        assert!(tile_values(0, 6, 4, 32, 1).is_err());
        assert!(tile_values(32, 6, 3, 32, 1).is_err());
        assert!(tile_values(32, 6, 0, 32, 1).is_err());
        assert!(tile_values(32, 6, 4, 32, 2).is_err());
        assert!(bpp_effective(0.0, 1.0, 8.0).is_err());
        assert!(bpp_effective(f64::NAN, 1.0, 8.0).is_err());
        assert!(effective_bandwidth_gbs(1.0, 8.0, 0.0).is_err());
        assert!(integer("BX", 2.5, false).is_err());
        assert!(integer("BX", 0.0, false).is_err());
        assert!(integer("halo", 0.0, true).is_ok());
        assert!(integer("halo", -1.0, true).is_err());
    }

    #[test]
    fn eq10_by_hand() {
        // 1e9 points at 8 B in one second: 8 GB/s.
        assert_eq!(effective_bandwidth_gbs(1e9, 8.0, 1.0).unwrap(), 8.0);
        assert_eq!(bpp_effective(10.0, 5.0, 8.0).unwrap(), 16.0);
    }
}
