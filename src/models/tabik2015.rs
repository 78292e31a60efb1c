//! Tabik, Peemen, Guil and Corporaal 2015, "Demystifying the 16×16 thread-block for stencils on the
//! GPU" (shared/papers/tabik2015-demystifying-16x16-thread-block.txt): which 2D thread-block shapes
//! (Blk.x × Blk.y, the block marching along z) are worth trying for a shared-memory-tiled stencil.
//!
//! The paper scores every block shape of a pruned configuration space (Sect. 4.1) on four aspects
//! and keeps the shapes that are in the best group of all four (Sect. 4.6, Figure 10):
//! 1. global-memory transactions, eqs. (1)–(3) (Figure 5 for GX);
//! 2. shared-memory transactions with bank-conflict degrees, eqs. (4)–(9) (Figure 7 for GX);
//! 3. SM occupancy, eqs. (10)–(11) (Figure 8);
//! 4. thread-block efficiency, eq. (12), judged by the number of active blocks per SM (Figure 9).
//!
//! The formulas are pure functions of plain numbers below; [`MODEL`]'s `predict` derives their
//! inputs from a launch (block shape, `nx`/`ny`/`nz`, the trace's halo parameters `hx`, `hy`,
//! `halo_sides`, `shared_reads`, registers per thread, element size, the GPU's limits).
//! Where the published equations and the published figures disagree, the field that the issue
//! names reproduces the figure and the literal equation is reported beside it
//! (docs/models.md, tabik2015 section says which and why).

use super::{Domain, ModelInfo, ModelInput, ParamSpec, Prediction, Quantity};
use crate::error::{Error, Result};
use serde_json::Value;

/// Name used in error messages from the pure functions.
const NAME: &str = "tabik2015";

/// The model as the command line knows it.
pub const MODEL: ModelInfo = ModelInfo {
    name: "tabik2015",
    summary: "Tabik et al. 2015: global/shared transactions, occupancy and the optimal block-shape set",
    scope: crate::models::Scope {
        applies_to: "3-D image stencils with a shared-memory tile (Tabik et al. Table II)",
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
        "global_transactions",
        "global transactions",
        "transactions",
        Some(Domain::COUNT_OR_ZERO),
        "(1)–(3): global-memory transactions of the launch, loads and stores",
    ),
    Quantity::new(
        "global_load_transactions",
        "global load transactions",
        "transactions",
        Some(Domain::COUNT_OR_ZERO),
        "the load part of global_transactions",
    ),
    Quantity::new(
        "global_store_transactions",
        "global store transactions",
        "transactions",
        Some(Domain::COUNT_OR_ZERO),
        "the store part of global_transactions (× stores per point)",
    ),
    Quantity::new(
        "global_transactions_eq2",
        "global transactions (2)",
        "transactions",
        Some(Domain::COUNT_OR_ZERO),
        "the paper's eq. (2) alone, without the interpretation of the halo rows",
    ),
    Quantity::new(
        "shared_transactions",
        "shared transactions",
        "transactions",
        Some(Domain::COUNT_OR_ZERO),
        "(4)–(9): shared-memory transactions with bank conflicts",
    ),
    Quantity::new(
        "shared_store_transactions",
        "shared store transactions",
        "transactions",
        Some(Domain::COUNT_OR_ZERO),
        "the store part of shared_transactions (data and halo tiles)",
    ),
    Quantity::new(
        "shared_load_transactions",
        "shared load transactions",
        "transactions",
        Some(Domain::COUNT_OR_ZERO),
        "the load part of shared_transactions",
    ),
    Quantity::new(
        "shared_transactions_eq4_9",
        "shared transactions (4)–(9)",
        "transactions",
        Some(Domain::COUNT_OR_ZERO),
        "the paper's equations as printed, for comparison",
    ),
    Quantity::new(
        "bank_conflict_degree_data_store",
        "data store conflict degree",
        "1",
        Some(Domain::COUNT),
        "ways a warp's data-tile store is serialised by bank conflicts",
    ),
    Quantity::new(
        "bank_conflict_degree_halo_store",
        "halo store conflict degree",
        "1",
        Some(Domain::COUNT_OR_ZERO),
        "ways a warp's halo store is serialised (0: no halo stores)",
    ),
    Quantity::new(
        "bank_conflict_degree_load",
        "load conflict degree",
        "1",
        Some(Domain::COUNT),
        "ways a warp's shared load is serialised",
    ),
    Quantity::new(
        "shared_bytes_per_block",
        "shared memory per block",
        "B",
        Some(Domain::NON_NEGATIVE),
        "shared-memory tile with halo a block allocates",
    ),
    Quantity::new(
        "active_blocks_per_sm",
        "active blocks per SM",
        "blocks",
        Some(Domain::COUNT_OR_ZERO),
        "(10): blocks one SM holds, by threads, blocks and shared memory",
    ),
    Quantity::new(
        "occupancy",
        "occupancy",
        "1",
        Some(Domain::UNIT),
        "(11): active warps over the SM's maximum",
    ),
    Quantity::new(
        "halo_threads_per_block",
        "halo threads per block",
        "threads",
        Some(Domain::COUNT_OR_ZERO),
        "threads that also load a halo value, hx·By + hy·Bx",
    ),
    Quantity::new(
        "valid_configuration",
        "valid",
        "",
        None,
        "whether the shape survives the pruning of Sect. 4.1",
    ),
    Quantity::new(
        "invalid_because",
        "pruned because",
        "",
        None,
        "why the shape was pruned (empty when valid)",
    ),
    Quantity::new(
        "in_optimal_set",
        "in the optimal set",
        "",
        None,
        "whether the shape is in the optimal set of Sect. 4.6",
    ),
    Quantity::new(
        "best_global",
        "best global transactions",
        "transactions",
        Some(Domain::COUNT_OR_ZERO),
        "the fewest global transactions among shapes with this one's occupancy group",
    ),
    Quantity::new(
        "best_shared",
        "best shared transactions",
        "transactions",
        Some(Domain::COUNT_OR_ZERO),
        "the fewest shared transactions in that group",
    ),
    Quantity::new(
        "best_occupancy",
        "best occupancy",
        "1",
        Some(Domain::UNIT),
        "the group's occupancy",
    ),
    Quantity::new(
        "more_than_min_active_blocks",
        "more than minimum active blocks",
        "",
        None,
        "(12): whether the group keeps more than the minimum of active blocks per SM",
    ),
    Quantity::new(
        "valid_configurations",
        "valid shapes",
        "shapes",
        Some(Domain::COUNT_OR_ZERO),
        "shapes of the search space that survive the pruning",
    ),
    Quantity::new(
        "optimal_set",
        "optimal set",
        "",
        None,
        "the block shapes the model recommends (Sect. 4.6)",
    ),
];

/// Constants settable with `--set`.
const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "hx",
        default: None,
        doc: "halo width H.x of the shared tile in x, both sides together (Table II); default: the trace's parameter hx",
        domain: Domain::COUNT_OR_ZERO,
    },
    ParamSpec {
        name: "hy",
        default: None,
        doc: "halo width H.y of the shared tile in y, both sides together (Table II); default: the trace's parameter hy",
        domain: Domain::COUNT_OR_ZERO,
    },
    ParamSpec {
        name: "halo_sides",
        default: None,
        doc: "1 if the halo lies on one side (GX, GY), 2 if split over both (ST, FDD); sets the implementation limit Blk >= H/sides (Sect. 4.1); default: the trace's halo_sides, else 1",
        domain: Domain::new(1.0, true, 2.0, true).whole(),
    },
    ParamSpec {
        name: "shared_reads",
        default: None,
        doc: "num_reads of eq. (8): shared-memory reads per output point; 0 = no shared tile (GZ); default: the trace's shared_reads",
        domain: Domain::COUNT_OR_ZERO,
    },
    ParamSpec {
        name: "stores_per_point",
        default: None,
        doc: "output values stored per point (ST stores six tensor elements, Sect. 3); multiplies eq. (2)'s store term; default: the trace's store instructions",
        domain: Domain::COUNT_OR_ZERO,
    },
    ParamSpec {
        name: "transaction_bytes",
        default: Some(128.0),
        doc: "bytes of one global transaction (a warp's 32 floats; Table I: 32/128 B on Kepler), turns transactions into volumes",
        domain: Domain::COUNT,
    },
    ParamSpec {
        name: "banks",
        default: Some(32.0),
        doc: "shared-memory banks of 4 B (Table I: 32 on Tesla, Fermi and Kepler)",
        domain: Domain::COUNT,
    },
    ParamSpec {
        name: "element_bytes",
        default: None,
        doc: "sizeof(data) in eq. (10)'s shared-memory term; default: the element size of the trace's first array",
        domain: Domain::COUNT,
    },
];

/// Largest grid extent or block side the pure functions accept; keeps every product below 2^63.
const MAX_EXTENT: u64 = 1 << 20;

fn check(what: &str, v: u64, min: u64) -> Result<()> {
    if v < min || v > MAX_EXTENT {
        return Err(Error::new(
            NAME,
            format!("{what} = {v} is outside {min}..={MAX_EXTENT}"),
        ));
    }
    Ok(())
}

/// A 2D-tiled stencil on its grid (Blk.z = 1, H.z = 0): the numbers every transaction formula
/// of eqs. (2)–(9) takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tiling {
    /// N_x: grid points in x.
    pub nx: u64,
    /// N_y: grid points in y.
    pub ny: u64,
    /// N_z: grid points (planes) in z.
    pub nz: u64,
    /// Blk.x: block (tile) width.
    pub bx: u64,
    /// Blk.y: block (tile) height.
    pub by: u64,
    /// H.x: halo width of the tile in x, both sides together.
    pub hx: u64,
    /// H.y: halo width of the tile in y, both sides together.
    pub hy: u64,
    /// warp_size.
    pub warp: u64,
}

impl Tiling {
    /// Checks the grid, block and warp (not the halo), which all transaction formulas share.
    fn check_common(&self) -> Result<()> {
        check("N_x", self.nx, 1)?;
        check("N_y", self.ny, 1)?;
        check("N_z", self.nz, 1)?;
        check("Blk.x", self.bx, 1)?;
        check("Blk.y", self.by, 1)?;
        check("warp_size", self.warp, 1)
    }

    /// Number of 2D data blocks per XY plane, ⌈N_x/Blk.x⌉⌈N_y/Blk.y⌉, times the N_z planes.
    fn block_planes(&self) -> u64 {
        self.nx.div_ceil(self.bx) * self.ny.div_ceil(self.by) * self.nz
    }
}

/// Loads and stores of one formula (elements for eq. (1), transactions otherwise).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Traffic<T> {
    /// Store part.
    pub stores: T,
    /// Load part.
    pub loads: T,
}

impl Traffic<u64> {
    /// Loads plus stores.
    pub fn total(&self) -> u64 {
        self.stores + self.loads
    }
}

impl Traffic<f64> {
    /// Loads plus stores.
    pub fn total(&self) -> f64 {
        self.stores + self.loads
    }
}

/// Eq. (1): the intra-block communication volume in elements (one thread, mono-core view):
/// N_Blks × (Blk.x·Blk.y·Blk.z stores + (Blk.x+H_x)(Blk.y+H_y)(Blk.z+H_z) + Coeff loads).
pub fn eq1_data_transfers(
    n: [u64; 3],
    blk: [u64; 3],
    halo: [u64; 3],
    coeff: u64,
) -> Result<Traffic<u64>> {
    for (i, axis) in ["x", "y", "z"].iter().enumerate() {
        check(&format!("N_{axis}"), n[i], 1)?;
        check(&format!("Blk.{axis}"), blk[i], 1)?;
        check(&format!("H_{axis}"), halo[i], 0)?;
    }
    check("Coeff", coeff, 0)?;
    let blocks = (0..3).map(|i| n[i].div_ceil(blk[i])).product::<u64>();
    let stores = blk.iter().product::<u64>();
    let loads = (0..3).map(|i| blk[i] + halo[i]).product::<u64>() + coeff;
    Ok(Traffic {
        stores: blocks * stores,
        loads: blocks * loads,
    })
}

/// Eq. (2) exactly as printed, both branches: global-memory transactions of the 2D-tiled stencil
/// `t`.
///
/// Blk.x ≥ warp: ⌈Blk.x/w⌉·Blk.y stores + ⌈Blk.x/w⌉(Blk.y+H.y) + ⌈H.x/w⌉·Blk.y loads per block
/// and plane. Blk.x < warp: (Blk.x·Blk.y/w)·[⌈w/Blk.x⌉ + ⌈H.x/w⌉ + ⌈Blk.x/w⌉] + (Blk.x/w)·H.y, of
/// which we read ⌈Blk.x/w⌉ per warp as the store and the rest as loads. The second branch can be
/// fractional (Blk.x/w·H.y), hence `f64`. Figure 5 does NOT follow this branch; see
/// [`global_transactions`].
pub fn eq2_global_transactions(t: &Tiling) -> Result<Traffic<f64>> {
    t.check_common()?;
    check("H.x", t.hx, 0)?;
    check("H.y", t.hy, 0)?;
    let Tiling {
        bx,
        by,
        hx,
        hy,
        warp,
        ..
    } = *t;
    let planes = t.block_planes() as f64;
    let (stores, loads) = if bx >= warp {
        let row = bx.div_ceil(warp);
        (
            (row * by) as f64,
            (row * (by + hy) + hx.div_ceil(warp) * by) as f64,
        )
    } else {
        let warps = (bx * by) as f64 / warp as f64;
        (
            warps * bx.div_ceil(warp) as f64,
            warps * (warp.div_ceil(bx) + hx.div_ceil(warp)) as f64
                + bx as f64 / warp as f64 * hy as f64,
        )
    };
    Ok(Traffic {
        stores: planes * stores,
        loads: planes * loads,
    })
}

/// Eq. (3) exactly as printed (GX, H.y = 0, "for any Blk.x value"):
/// ⌈N_x/Blk.x⌉⌈N_y/Blk.y⌉N_z × (2⌈Blk.x/w⌉ + ⌈H.x/w⌉)·Blk.y. This is what Figure 5 tabulates.
pub fn eq3_global_transactions_gx(
    nx: u64,
    ny: u64,
    nz: u64,
    bx: u64,
    by: u64,
    hx: u64,
    warp: u64,
) -> Result<u64> {
    let t = Tiling {
        nx,
        ny,
        nz,
        bx,
        by,
        hx,
        hy: 0,
        warp,
    };
    global_transactions(&t).map(|t| t.total())
}

/// The global-memory transactions the model reports (`global_transactions`): eq. (2)'s
/// Blk.x ≥ warp branch applied to every Blk.x, as eq. (3) does for GX, with the H.y rows kept:
/// per block and plane ⌈Blk.x/w⌉·Blk.y stores and ⌈Blk.x/w⌉(Blk.y+H.y) + ⌈H.x/w⌉·Blk.y loads,
/// i.e. one transaction per started warp-width of every tile row. With H.y = 0 this is eq. (3).
pub fn global_transactions(t: &Tiling) -> Result<Traffic<u64>> {
    t.check_common()?;
    check("H.x", t.hx, 0)?;
    check("H.y", t.hy, 0)?;
    let planes = t.block_planes();
    let row = t.bx.div_ceil(t.warp);
    Ok(Traffic {
        stores: planes * row * t.by,
        loads: planes * (row * (t.by + t.hy) + t.hx.div_ceil(t.warp) * t.by),
    })
}

/// Bank-conflict degree (Sect. 4.3.1: "the maximum number of memory requests that fall in the
/// same bank") of one shared-memory instruction of a `bx` × `by` block on a tile with row pitch
/// `pitch` words: thread (tx, ty) accesses word ty·pitch + tx (a constant offset shifts every bank
/// alike and does not change the degree) if `lanes_from <= tx < lanes_to`. Words are 4 B, bank =
/// word mod `banks`; lanes reading the same word are served together. The result is the largest
/// degree over the block's warps (0 if no thread takes part).
pub fn bank_conflict_degree(
    bx: u64,
    by: u64,
    pitch: u64,
    lanes_from: u64,
    lanes_to: u64,
    warp: u64,
    banks: u64,
) -> Result<u64> {
    check("Blk.x", bx, 1)?;
    check("Blk.y", by, 1)?;
    check("pitch", pitch, 1)?;
    check("warp_size", warp, 1)?;
    check("banks", banks, 1)?;
    if bx * by > 1 << 16 || banks > 1 << 12 {
        return Err(Error::new(
            NAME,
            "bank-conflict degree: more than 65536 threads or 4096 banks",
        ));
    }
    let threads = bx * by;
    let mut worst = 0;
    let mut first = 0;
    while first < threads {
        let mut words: Vec<u64> = (first..(first + warp).min(threads))
            .filter(|t| (lanes_from..lanes_to).contains(&(t % bx)))
            .map(|t| (t / bx) * pitch + t % bx)
            .collect();
        words.sort_unstable();
        words.dedup();
        let mut per_bank = vec![0u64; banks as usize];
        for w in words {
            per_bank[(w % banks) as usize] += 1;
        }
        worst = worst.max(per_bank.into_iter().max().unwrap_or(0));
        first += warp;
    }
    Ok(worst)
}

/// Bank-conflict factors of eqs. (5)–(9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConflictFactors {
    /// F_BCD.stores: degree of the tile (data) store.
    pub data_stores: u64,
    /// F_BCH.stores: degree of the halo store.
    pub halo_stores: u64,
    /// F_BCH.loads: transactions per tile read beyond ⌈Blk.x/w⌉.
    pub halo_loads: u64,
}

/// Eqs. (6), (7) and (9) as printed: 1, 1, 0 for Blk.x ≥ warp; 2, 2, 2 below.
pub fn published_conflict_factors(bx: u64, warp: u64) -> ConflictFactors {
    if bx >= warp {
        ConflictFactors {
            data_stores: 1,
            halo_stores: 1,
            halo_loads: 0,
        }
    } else {
        ConflictFactors {
            data_stores: 2,
            halo_stores: 2,
            halo_loads: 2,
        }
    }
}

/// The factors of eqs. (6), (7), (9) from the bank-conflict degrees of the actual tile accesses,
/// as Sect. 4.3.1 and Figure 6 derive them: the tile row has pitch Blk.x + H.x words; the data
/// store and each tile read cover the whole block (degree d, so F_BCD = d and F_BCH.loads = d − 1
/// transactions beyond ⌈Blk.x/w⌉); the halo store is made by the last H.x/sides threads of each
/// row (Algorithm 3: `if (tx >= Blk.x - 2)`). For Blk.x ≥ warp this gives eqs. (6), (7), (9)'s
/// 1, 1, 0; for GX with Blk.x < 32 it gives Figure 6's 2, 1 (2 when Blk.x = 2), 1.
pub fn computed_conflict_factors(
    bx: u64,
    by: u64,
    hx: u64,
    halo_sides: u64,
    warp: u64,
    banks: u64,
) -> Result<ConflictFactors> {
    check("H.x", hx, 0)?;
    check("halo_sides", halo_sides, 1)?;
    let pitch = bx + hx;
    let data = bank_conflict_degree(bx, by, pitch, 0, bx, warp, banks)?;
    let lanes = (hx / halo_sides).min(bx);
    let halo = if hx == 0 {
        0
    } else {
        bank_conflict_degree(bx, by, pitch, bx - lanes, bx, warp, banks)?
    };
    Ok(ConflictFactors {
        data_stores: data,
        halo_stores: halo,
        halo_loads: data.saturating_sub(1),
    })
}

/// Eqs. (4), (5), (8) exactly as printed, with `num_reads` and the given factors: per tile row
/// (Blk.y + H.y rows, ⌈N_x/Blk.x⌉⌈N_y/Blk.y⌉N_z blocks and planes)
/// stores (F_BCD⌈Blk.x/w⌉ + F_BCH⌈H.x/w⌉) and loads num_reads(⌈Blk.x/w⌉ + F_BCH.loads).
/// With [`published_conflict_factors`] this matches Figure 7 for Blk.x ≥ 32 only.
pub fn eq4_shared_transactions(
    t: &Tiling,
    num_reads: u64,
    f: ConflictFactors,
) -> Result<Traffic<u64>> {
    t.check_common()?;
    shared_terms(t, num_reads, f, t.by + t.hy)
}

/// The shared-memory transactions the model reports (`shared_transactions`, Figure 7): eqs. (4),
/// (5), (8) counted per warp instead of per tile row. A warp covers one row segment of ⌈Blk.x/w⌉
/// when Blk.x ≥ w (the printed equations), but w/Blk.x rows when Blk.x < w, so the Blk.y + H.y
/// rows of a block make ⌈(Blk.y + H.y)·Blk.x / w⌉ warp-rows; `f` should be
/// [`computed_conflict_factors`]. For GX this reproduces every cell of Figure 7.
pub fn shared_transactions(t: &Tiling, num_reads: u64, f: ConflictFactors) -> Result<Traffic<u64>> {
    t.check_common()?;
    check("H.y", t.hy, 0)?;
    let rows = if t.bx >= t.warp {
        t.by + t.hy
    } else {
        ((t.by + t.hy) * t.bx).div_ceil(t.warp)
    };
    shared_terms(t, num_reads, f, rows)
}

/// The stores and loads of eqs. (4), (5), (8) over `rows` warp-rows (or tile rows) per block
/// and plane.
fn shared_terms(t: &Tiling, num_reads: u64, f: ConflictFactors, rows: u64) -> Result<Traffic<u64>> {
    check("H.x", t.hx, 0)?;
    check("H.y", t.hy, 0)?;
    check("num_reads", num_reads, 0)?;
    for (what, v) in [
        ("F_BCD.stores", f.data_stores),
        ("F_BCH.stores", f.halo_stores),
        ("F_BCH.loads", f.halo_loads),
    ] {
        check(what, v, 0)?;
    }
    let planes = t.block_planes();
    let row = t.bx.div_ceil(t.warp);
    Ok(Traffic {
        stores: (f.data_stores * row + f.halo_stores * t.hx.div_ceil(t.warp)) * rows * planes,
        loads: num_reads * (row + f.halo_loads) * rows * planes,
    })
}

/// The per-SM limits of eq. (10) and (11).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SmLimits {
    /// Reg_SM^Max: 32-bit registers per SM.
    pub registers: u64,
    /// shmem_SM^Max: shared memory per SM, bytes.
    pub shared_bytes: u64,
    /// Blk_SM^Max: resident blocks per SM.
    pub blocks: u64,
    /// Threads_SM^Max.
    pub threads: u64,
    /// Warps_SM^Max.
    pub warps: u64,
    /// Threads_Blk^Max: threads per block.
    pub threads_per_block: u64,
    /// warp_size.
    pub warp_size: u64,
}

/// Eq. (10): active blocks per SM, min(Regs_SM/Regs_Blk, shmem_SM/shmem_Blk, Blk_SM^Max,
/// Threads_SM/(Blk.x·Blk.y)). The paper prints ⌈·⌉ on the first two quotients; we take ⌊·⌋,
/// since a fraction of a block cannot be resident (they never limit the paper's examples).
/// A zero register or shared-memory use imposes no limit.
pub fn eq10_active_blocks(
    sm: &SmLimits,
    threads_per_block: u64,
    registers_per_block: u64,
    shared_bytes_per_block: u64,
) -> Result<u64> {
    check("threads per block", threads_per_block, 1)?;
    let mut blocks = sm.blocks.min(sm.threads / threads_per_block);
    if let Some(b) = sm.registers.checked_div(registers_per_block) {
        blocks = blocks.min(b);
    }
    if let Some(b) = sm.shared_bytes.checked_div(shared_bytes_per_block) {
        blocks = blocks.min(b);
    }
    Ok(blocks)
}

/// Eq. (11): occupancy = Blks_SM^active × Warps_Blk / Warps_SM^Max.
pub fn eq11_occupancy(active_blocks: u64, warps_per_block: u64, max_warps: u64) -> Result<f64> {
    check("Warps_SM^Max", max_warps, 1)?;
    Ok((active_blocks * warps_per_block) as f64 / max_warps as f64)
}

/// Eq. (12): Blk_Eff = Time_work / (Time_work + Time_idle). The paper gives no way to compute the
/// times; its selection uses the active blocks per SM instead (Figure 9), and so does
/// [`optimal_set`]. `None` when both times are zero or a time is negative or not finite.
pub fn eq12_block_efficiency(time_work: f64, time_idle: f64) -> Option<f64> {
    let ok = |t: f64| t.is_finite() && t >= 0.0;
    (ok(time_work) && ok(time_idle) && time_work + time_idle > 0.0)
        .then(|| time_work / (time_work + time_idle))
}

/// One stencil on one input and one GPU: the plain numbers every formula takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stencil {
    /// N_x, N_y, N_z.
    pub n: [u64; 3],
    /// H.x, both sides together (Table II).
    pub hx: u64,
    /// H.y, both sides together (Table II).
    pub hy: u64,
    /// 1 if the halo is on one side of the tile (GX, GY), 2 if on both (ST, FDD).
    pub halo_sides: u64,
    /// num_reads of eq. (8); 0 means the kernel has no shared tile (GZ).
    pub shared_reads: u64,
    /// sizeof(data).
    pub element_bytes: u64,
    /// Registers per thread (nvcc's count in the paper).
    pub registers_per_thread: u64,
    /// Shared-memory banks.
    pub banks: u64,
    /// The GPU's limits.
    pub sm: SmLimits,
}

/// Everything the model says about one block shape.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Evaluation {
    /// Blk.x.
    pub bx: u64,
    /// Blk.y.
    pub by: u64,
    /// Why the shape is outside the configuration space of Sect. 4.1, if it is.
    pub invalid: Option<&'static str>,
    /// `global_transactions` (eq. (3) form).
    pub global: Traffic<u64>,
    /// Eq. (2) as printed.
    pub global_eq2: Traffic<f64>,
    /// Bank-conflict factors from the tile accesses.
    pub factors: ConflictFactors,
    /// `shared_transactions` (per warp, Figure 7).
    pub shared: Traffic<u64>,
    /// Eqs. (4)–(9) as printed.
    pub shared_eq4: Traffic<u64>,
    /// Shared memory per block, bytes (Table II × sizeof(data)).
    pub shared_bytes_per_block: u64,
    /// Eq. (10).
    pub active_blocks: u64,
    /// Eq. (11).
    pub occupancy: f64,
}

impl Stencil {
    /// Shared memory per block (Table II: (Blk.x + H.x)(Blk.y + H.y) × sizeof(data); 0 for GZ).
    pub fn shared_bytes_per_block(&self, bx: u64, by: u64) -> u64 {
        if self.shared_reads == 0 {
            0
        } else {
            (bx.saturating_add(self.hx))
                .saturating_mul(by.saturating_add(self.hy))
                .saturating_mul(self.element_bytes)
        }
    }

    /// Why `bx` × `by` is outside the configuration space of Sect. 4.1, or `None`.
    /// We read "Blk.x < N_x" as ≤ (Figure 5 has Blk.x = N_x = 256) and the implementation limit
    /// Blk.x ≥ H.x as Blk.x ≥ H.x / halo_sides (the threads of one side load that side's halo:
    /// Table IX has ST at Blk.x = 1, Tables X–XI the FDDs at Blk.x = 8 < H.x).
    pub fn invalid_reason(&self, bx: u64, by: u64) -> Option<&'static str> {
        let t = bx.saturating_mul(by);
        let w = self.sm.warp_size;
        let regs = self.registers_per_thread.saturating_mul(t);
        if t < w {
            Some("fewer threads than a warp")
        } else if !t.is_multiple_of(w) {
            Some("threads not a multiple of the warp size")
        } else if t > self.sm.threads_per_block {
            Some("more threads than a block may have")
        } else if self.shared_bytes_per_block(bx, by) > self.sm.shared_bytes {
            Some("tile does not fit in shared memory")
        } else if regs > self.sm.registers {
            Some("registers of a block exceed the SM's")
        } else if bx > self.n[0] || by > self.n[1] {
            Some("block larger than the input")
        } else if !self.n[0].is_multiple_of(bx) || !self.n[1].is_multiple_of(by) {
            Some("input size not divisible by the block")
        } else if bx.saturating_mul(self.halo_sides) < self.hx
            || by.saturating_mul(self.halo_sides) < self.hy
        {
            Some("block narrower than the halo it loads")
        } else {
            None
        }
    }

    /// Evaluates every formula for `bx` × `by`.
    pub fn evaluate(&self, bx: u64, by: u64) -> Result<Evaluation> {
        let [nx, ny, nz] = self.n;
        let w = self.sm.warp_size;
        check("halo_sides", self.halo_sides, 1)?;
        check("element_bytes", self.element_bytes, 1)?;
        check("registers per thread", self.registers_per_thread, 0)?;
        let tiling = Tiling {
            nx,
            ny,
            nz,
            bx,
            by,
            hx: self.hx,
            hy: self.hy,
            warp: w,
        };
        let global = global_transactions(&tiling)?;
        let global_eq2 = eq2_global_transactions(&tiling)?;
        let (factors, shared, shared_eq4) = if self.shared_reads == 0 {
            let none = ConflictFactors {
                data_stores: 0,
                halo_stores: 0,
                halo_loads: 0,
            };
            let zero = Traffic {
                stores: 0,
                loads: 0,
            };
            (none, zero, zero)
        } else {
            let f = computed_conflict_factors(bx, by, self.hx, self.halo_sides, w, self.banks)?;
            (
                f,
                shared_transactions(&tiling, self.shared_reads, f)?,
                eq4_shared_transactions(
                    &tiling,
                    self.shared_reads,
                    published_conflict_factors(bx, w),
                )?,
            )
        };
        let threads = bx * by;
        let shared_bytes = self.shared_bytes_per_block(bx, by);
        let active = eq10_active_blocks(
            &self.sm,
            threads,
            self.registers_per_thread * threads,
            shared_bytes,
        )?;
        let occupancy = eq11_occupancy(active, threads.div_ceil(w), self.sm.warps)?;
        Ok(Evaluation {
            bx,
            by,
            invalid: self.invalid_reason(bx, by),
            global,
            global_eq2,
            factors,
            shared,
            shared_eq4,
            shared_bytes_per_block: shared_bytes,
            active_blocks: active,
            occupancy,
        })
    }

    /// The paper's configuration space: Blk.x, Blk.y powers of two from 1 to the block-size limit
    /// (Table III), every shape evaluated, valid or not.
    pub fn space(&self) -> Result<Vec<Evaluation>> {
        let mut out = Vec::new();
        let mut by = 1;
        while by <= self.sm.threads_per_block {
            let mut bx = 1;
            while bx * by <= self.sm.threads_per_block {
                out.push(self.evaluate(bx, by)?);
                bx *= 2;
            }
            by *= 2;
        }
        Ok(out)
    }
}

/// The best half of `values` (smaller is better): a value is in if no value is smaller, or if the
/// values at most as large make at most half of the list. "We consider that the optimal
/// configurations are the best 50% configurations" (Sect. 4.2); ties stay together, so a tie
/// group that would cross the half is left out (for GX this keeps exactly the Blk.x ≥ 32 shapes
/// that the text singles out in Sects. 4.2 and 4.3).
pub fn best_half(values: &[u64]) -> Vec<bool> {
    values
        .iter()
        .map(|&v| {
            let at_most = values.iter().filter(|&&u| u <= v).count();
            let below = values.iter().filter(|&&u| u < v).count();
            below == 0 || 2 * at_most <= values.len()
        })
        .collect()
}

/// Membership of one valid shape in the four groups of Figure 10 (true = G1, the best group).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Groups {
    /// Best half in global transactions (Figure 5).
    pub global: bool,
    /// Best half in shared transactions (Figure 7).
    pub shared: bool,
    /// Highest occupancy of the space (Sect. 4.4: "the optimal SM utilization, 100%").
    pub occupancy: bool,
    /// More active blocks per SM than the minimum of the space (Sect. 4.5, Figure 9).
    pub efficiency: bool,
}

impl Groups {
    /// In the optimal set: G1 in all four aspects (Sect. 4.6).
    pub fn optimal(&self) -> bool {
        self.global && self.shared && self.occupancy && self.efficiency
    }
}

/// The valid shapes of `space` with their groups (Sect. 4.6 / Figure 10). A kernel that does not
/// `synchronize` (GZ, no shared tile) has no thread-block efficiency issue (Sects. 4.5 and 5: "all
/// the configurations that provide the best occupancy have a good thread-block efficiency"), so
/// every shape is in the efficiency group.
pub fn optimal_set(space: &[Evaluation], synchronizes: bool) -> Vec<(Evaluation, Groups)> {
    let valid: Vec<&Evaluation> = space.iter().filter(|e| e.invalid.is_none()).collect();
    let g = best_half(&valid.iter().map(|e| e.global.total()).collect::<Vec<_>>());
    let s = best_half(&valid.iter().map(|e| e.shared.total()).collect::<Vec<_>>());
    let max_occ = valid.iter().map(|e| e.occupancy).fold(0.0, f64::max);
    let min_active = valid.iter().map(|e| e.active_blocks).min().unwrap_or(0);
    valid
        .iter()
        .enumerate()
        .map(|(i, e)| {
            (
                **e,
                Groups {
                    global: g[i],
                    shared: s[i],
                    occupancy: e.occupancy >= max_occ,
                    efficiency: !synchronizes || e.active_blocks > min_active,
                },
            )
        })
        .collect()
}

/// A model input from the user's setting, else the trace's parameter, else `fallback`.
fn input_param(input: &ModelInput, name: &str, fallback: Option<i64>) -> Result<u64> {
    let v = match input.user_param(name) {
        Some(v) => {
            if !(v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= MAX_EXTENT as f64) {
                return Err(Error::new(
                    "--set",
                    format!("{name} = {v} must be a whole number in 0..={MAX_EXTENT}"),
                ));
            }
            return Ok(v as u64);
        }
        None => input.launch.params.get(name).copied().or(fallback),
    };
    match v {
        Some(v) if (0..=MAX_EXTENT as i64).contains(&v) => Ok(v as u64),
        Some(v) => Err(Error::new(
            &input.launch.source_name,
            format!("parameter {name} = {v} is outside 0..={MAX_EXTENT}"),
        )),
        None => Err(Error::new(
            &input.launch.source_name,
            format!(
                "the tabik2015 model needs '{name}' (Table II): the trace has no parameter '{name}'; give it with --set {name}=VALUE"
            ),
        )),
    }
}

/// Builds the plain-number description of the launch's stencil.
fn stencil_of(input: &ModelInput) -> Result<Stencil> {
    let launch = input.launch;
    let Some([nx, ny, nz]) = launch.domain() else {
        return Err(Error::new(
            &launch.source_name,
            "the tabik2015 model needs the parameters nx, ny, nz (the input image)",
        ));
    };
    for (name, v) in [("nx", nx), ("ny", ny), ("nz", nz)] {
        if !(1..=MAX_EXTENT as i64).contains(&v) {
            return Err(Error::new(
                &launch.source_name,
                format!("{name} = {v} is outside 1..={MAX_EXTENT}"),
            ));
        }
    }
    let element = input
        .kernel
        .arrays
        .first()
        .map(|a| a.element_bytes as f64)
        .unwrap_or(4.0);
    let element_bytes = input.param_or(PARAMS, "element_bytes", element);
    let banks = input.param_or(PARAMS, "banks", 32.0);
    for (name, v) in [("element_bytes", element_bytes), ("banks", banks)] {
        if !(v.is_finite() && v >= 1.0 && v.fract() == 0.0 && v <= 4096.0) {
            return Err(Error::new(
                "--set",
                format!("{name} = {v} must be a whole number in 1..=4096"),
            ));
        }
    }
    let s = &input.hw.sm;
    let stencil = Stencil {
        n: [nx as u64, ny as u64, nz as u64],
        hx: input_param(input, "hx", None)?,
        hy: input_param(input, "hy", None)?,
        halo_sides: input_param(input, "halo_sides", Some(1))?,
        shared_reads: input_param(input, "shared_reads", None)?,
        element_bytes: element_bytes as u64,
        registers_per_thread: input.launch.registers_per_thread as u64,
        banks: banks as u64,
        sm: SmLimits {
            registers: s.registers as u64,
            shared_bytes: s.shared_memory_bytes as u64,
            blocks: s.max_blocks as u64,
            threads: s.max_threads as u64,
            warps: s.max_warps as u64,
            threads_per_block: s.max_threads_per_block as u64,
            warp_size: s.warp_size as u64,
        },
    };
    if !(1..=2).contains(&stencil.halo_sides) {
        return Err(Error::new(
            "--set",
            format!("halo_sides = {} must be 1 or 2", stencil.halo_sides),
        ));
    }
    if stencil.sm.warp_size == 0 || stencil.sm.warps == 0 {
        return Err(Error::new(
            &input.hw.name,
            "warp size and warps per SM must be positive",
        ));
    }
    Ok(stencil)
}

fn predict(input: &ModelInput) -> Result<Prediction> {
    let launch = input.launch;
    let stencil = stencil_of(input)?;
    let [bx, by, bz] = launch.block.map(|b| b as u64);
    let e = stencil.evaluate(bx, by)?;
    let space = stencil.space()?;
    let groups = optimal_set(&space, stencil.shared_reads > 0);
    let mine = groups.iter().find(|(g, _)| g.bx == bx && g.by == by);
    let invalid = if bz != 1 {
        Some("Blk.z must be 1 (2D tiles marching along z, Sect. 4.2.1)")
    } else {
        e.invalid
    };
    let in_optimal = invalid.is_none() && mine.is_some_and(|(_, g)| g.optimal());
    let optimal: Vec<Value> = groups
        .iter()
        .filter(|(_, g)| g.optimal())
        .map(|(e, _)| Value::from(format!("{}x{}", e.bx, e.by)))
        .collect();

    let bytes = input.param_or(PARAMS, "transaction_bytes", 128.0);
    if !(bytes.is_finite() && bytes > 0.0) {
        return Err(Error::new(
            "--set",
            format!("transaction_bytes = {bytes} must be positive"),
        ));
    }
    // Eq. (2) has one output image; a kernel storing several (ST) repeats the store term.
    let store_steps = count_stores(&input.kernel.body) as f64;
    let outputs = input.param_or(PARAMS, "stores_per_point", store_steps);
    if !(outputs.is_finite() && outputs >= 0.0 && outputs.fract() == 0.0 && outputs <= 1024.0) {
        return Err(Error::new(
            "--set",
            format!("stores_per_point = {outputs} must be a whole number in 0..=1024"),
        ));
    }
    let global = Traffic {
        stores: e.global.stores * outputs as u64,
        loads: e.global.loads,
    };
    let mut p = Prediction::new(MODEL.name);
    p.field("global_transactions", global.total())
        .field("global_load_transactions", global.loads)
        .field("global_store_transactions", global.stores)
        .field("global_transactions_eq2", e.global_eq2.total())
        .field("shared_transactions", e.shared.total())
        .field("shared_store_transactions", e.shared.stores)
        .field("shared_load_transactions", e.shared.loads)
        .field("shared_transactions_eq4_9", e.shared_eq4.total())
        .field("bank_conflict_degree_data_store", e.factors.data_stores)
        .field("bank_conflict_degree_halo_store", e.factors.halo_stores)
        .field("bank_conflict_degree_load", e.factors.halo_loads + 1)
        .field("shared_bytes_per_block", e.shared_bytes_per_block)
        .field("active_blocks_per_sm", e.active_blocks)
        .field("occupancy", e.occupancy)
        .field("halo_threads_per_block", stencil.hx * by + stencil.hy * bx)
        .field("valid_configuration", invalid.is_none())
        .field("invalid_because", invalid.unwrap_or(""))
        .field("in_optimal_set", in_optimal);
    if let Some((_, g)) = mine {
        p.field("best_global", g.global)
            .field("best_shared", g.shared)
            .field("best_occupancy", g.occupancy)
            .field("more_than_min_active_blocks", g.efficiency);
    }
    p.field("valid_configurations", groups.len() as u64)
        .field("optimal_set", Value::Array(optimal));
    p.volumes.l2_load_bytes = Some(global.loads as f64 * bytes);
    p.volumes.l2_store_bytes = Some(global.stores as f64 * bytes);
    Ok(p)
}

/// Store instructions in a trace body (a loop's counted once: one per point and plane).
fn count_stores(steps: &[crate::input::trace::Step]) -> usize {
    steps
        .iter()
        .map(|s| match s {
            crate::input::trace::Step::Access(a) => {
                (a.kind == crate::input::trace::AccessKind::Store) as usize
            }
            crate::input::trace::Step::Loop(l) => count_stores(&l.body),
            crate::input::trace::Step::If(i) => count_stores(&i.body),
            crate::input::trace::Step::Sync(_) => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tiling of an `n` grid in `blk` blocks with halo `h` and warp size `warp`.
    fn tiling(n: [u64; 3], blk: [u64; 2], h: [u64; 2], warp: u64) -> Tiling {
        Tiling {
            nx: n[0],
            ny: n[1],
            nz: n[2],
            bx: blk[0],
            by: blk[1],
            hx: h[0],
            hy: h[1],
            warp,
        }
    }

    /// GTX TITAN limits of Table I.
    fn titan() -> SmLimits {
        SmLimits {
            registers: 65536,
            shared_bytes: 49152,
            blocks: 16,
            threads: 2048,
            warps: 64,
            threads_per_block: 1024,
            warp_size: 32,
        }
    }

    #[test]
    fn eq1_counts_elements_with_halo() {
        // 4x4x1 domain, 2x2x1 blocks, halo 2 in x: 4 blocks x (4 stores, 4x2 loads).
        let t = eq1_data_transfers([4, 4, 1], [2, 2, 1], [2, 0, 0], 0).unwrap();
        assert_eq!(
            t,
            Traffic {
                stores: 16,
                loads: 32
            }
        );
    }

    #[test]
    fn eq2_and_eq3_agree_from_a_warp_up_and_differ_below() {
        // Figure 4(a): warp 8, H.x = 2, Blk.x = 16: 2 data + 1 halo transaction per row loaded.
        let t = eq2_global_transactions(&tiling([16, 1, 1], [16, 1], [2, 0], 8)).unwrap();
        assert_eq!(
            t,
            Traffic {
                stores: 2.0,
                loads: 3.0
            }
        );
        assert_eq!(
            eq3_global_transactions_gx(16, 1, 1, 16, 1, 2, 8).unwrap(),
            5
        );
        // Blk.x = 4 < warp 8, Blk.y = 2 (one warp): eq. (2) store 1, loads 2 + 1; eq. (3) 3 per row.
        let t = eq2_global_transactions(&tiling([4, 2, 1], [4, 2], [2, 0], 8)).unwrap();
        assert_eq!(
            t,
            Traffic {
                stores: 1.0,
                loads: 3.0
            }
        );
        assert_eq!(eq3_global_transactions_gx(4, 2, 1, 4, 2, 2, 8).unwrap(), 6);
        // H.y adds Blk.x/w of a transaction per halo row below a warp.
        let t = eq2_global_transactions(&tiling([4, 2, 1], [4, 2], [0, 2], 8)).unwrap();
        assert_eq!(t.loads, 2.0 + 1.0);
    }

    #[test]
    fn global_transactions_keep_halo_rows() {
        // Blk 32x4, H.y = 2: per block 1x4 stores, 1x6 + 0 loads; 2 blocks.
        let t = global_transactions(&tiling([64, 4, 1], [32, 4], [0, 2], 32)).unwrap();
        assert_eq!(
            t,
            Traffic {
                stores: 8,
                loads: 12
            }
        );
    }

    #[test]
    fn bank_conflict_degrees_of_figure_6() {
        // Figure 6 (8 banks, warp 8, GX tile pitch Blk.x + 2):
        // (a) Blk.x = 16 and (b) Blk.x = 8: conflict free.
        assert_eq!(bank_conflict_degree(16, 1, 18, 0, 16, 8, 8).unwrap(), 1);
        assert_eq!(bank_conflict_degree(8, 1, 10, 0, 8, 8, 8).unwrap(), 1);
        // (c) Blk.x = 4: words 0..3 and 6..9 -> banks 0,1 twice: degree 2; halo (tx >= 2) free.
        assert_eq!(bank_conflict_degree(4, 2, 6, 0, 4, 8, 8).unwrap(), 2);
        assert_eq!(bank_conflict_degree(4, 2, 6, 2, 4, 8, 8).unwrap(), 1);
        // (d) Blk.x = 2: data and halo both degree 2.
        assert_eq!(bank_conflict_degree(2, 4, 4, 0, 2, 8, 8).unwrap(), 2);
        // Nobody takes part: degree 0.
        assert_eq!(bank_conflict_degree(8, 1, 10, 8, 8, 8, 8).unwrap(), 0);
    }

    #[test]
    fn computed_factors_match_the_published_ones_from_a_warp_up() {
        for bx in [32, 64, 256] {
            assert_eq!(
                computed_conflict_factors(bx, 2, 2, 1, 32, 32).unwrap(),
                published_conflict_factors(bx, 32)
            );
        }
        // GX below a warp: Figure 6's 2 and 1 (2 at Blk.x = 2), one extra transaction per read.
        let f = computed_conflict_factors(16, 2, 2, 1, 32, 32).unwrap();
        assert_eq!((f.data_stores, f.halo_stores, f.halo_loads), (2, 1, 1));
        let f = computed_conflict_factors(2, 16, 2, 1, 32, 32).unwrap();
        assert_eq!((f.data_stores, f.halo_stores, f.halo_loads), (2, 2, 1));
    }

    #[test]
    fn shared_transactions_per_warp() {
        // Blk 8x4 = one warp of 32, GX, 1 block, 1 plane: stores 2 + 1, loads 3 x 2.
        let f = computed_conflict_factors(8, 4, 2, 1, 32, 32).unwrap();
        let t = shared_transactions(&tiling([8, 4, 1], [8, 4], [2, 0], 32), 3, f).unwrap();
        assert_eq!(
            t,
            Traffic {
                stores: 3,
                loads: 6
            }
        );
        // The printed eqs. (5)-(9) count 4 rows with 2+2 stores and 3x(1+2) loads each.
        let t = eq4_shared_transactions(
            &tiling([8, 4, 1], [8, 4], [2, 0], 32),
            3,
            published_conflict_factors(8, 32),
        )
        .unwrap();
        assert_eq!(
            t,
            Traffic {
                stores: 16,
                loads: 36
            }
        );
    }

    #[test]
    fn occupancy_eq10_eq11() {
        let sm = titan();
        // 1024 threads: 2 blocks by threads, 100 %.
        let b = eq10_active_blocks(&sm, 1024, 32 * 1024, 4096).unwrap();
        assert_eq!(b, 2);
        assert_eq!(eq11_occupancy(b, 32, 64).unwrap(), 1.0);
        // 32 threads: 16 blocks, 25 %.
        let b = eq10_active_blocks(&sm, 32, 32 * 32, 136).unwrap();
        assert_eq!(b, 16);
        assert_eq!(eq11_occupancy(b, 1, 64).unwrap(), 0.25);
        // Shared memory limits: 20 KB tiles -> 2 blocks; registers: 64 x 512 -> 2 blocks.
        assert_eq!(eq10_active_blocks(&sm, 128, 0, 20 * 1024).unwrap(), 2);
        assert_eq!(eq10_active_blocks(&sm, 512, 64 * 512, 0).unwrap(), 2);
        assert!(eq10_active_blocks(&sm, 0, 0, 0).is_err());
    }

    #[test]
    fn eq12_and_best_half() {
        assert_eq!(eq12_block_efficiency(3.0, 1.0), Some(0.75));
        assert_eq!(eq12_block_efficiency(0.0, 0.0), None);
        assert_eq!(eq12_block_efficiency(-1.0, 1.0), None);
        // 5 values: the two 1s and the 2 make 3 > 2.5, so only the 1s are in.
        assert_eq!(
            best_half(&[1, 2, 1, 3, 4]),
            [true, false, true, false, false]
        );
        // A single best group larger than half is still in.
        assert_eq!(best_half(&[1, 1, 1, 2]), [true, true, true, false]);
        assert!(best_half(&[]).is_empty());
    }

    #[test]
    fn bad_inputs_are_errors_not_panics() {
        assert!(global_transactions(&tiling([0, 1, 1], [1, 1], [0, 0], 32)).is_err());
        assert!(global_transactions(&tiling([1, 1, 1], [1, 1], [0, 0], 0)).is_err());
        assert!(eq2_global_transactions(&tiling([1, 1, 1], [0, 1], [0, 0], 32)).is_err());
        assert!(bank_conflict_degree(1, 1, 1, 0, 1, 32, 0).is_err());
        assert!(computed_conflict_factors(4, 4, 2, 0, 32, 32).is_err());
        assert!(eq11_occupancy(1, 1, 0).is_err());
        assert!(global_transactions(&tiling([u64::MAX, 1, 1], [1, 1], [0, 0], 32)).is_err());
    }
}
