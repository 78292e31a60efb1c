//! Ernst et al. 2023, "Analytical performance estimation during code generation on modern GPUs"
//! (shared/papers/ernst2023-analytical-performance-estimation-code-generation-a100.txt): the
//! Warpspeed metric estimator, evaluated on the launch's own address expressions.
//!
//! The estimator enumerates the threads of a representative group, puts their coordinates into
//! every compiled access ([`crate::launch::Program`]) and counts what the addresses touch:
//! - L1 ↔ registers (Sect. 4.2): wavefronts per half warp from bank conflicts (16 banks of 8 B)
//!   and the "far apart" rule (addresses 1024 B or more apart never share a wavefront);
//! - L2 → L1 (Sects. 4.3, 4.5): the unique 32 B sectors of one thread block (compulsory volume),
//!   plus the capacity misses of eq. (5) from the per-instruction (redundant) volume, with the
//!   oversubscription of eq. (4) taken from the 128 B lines the SM's resident blocks allocate;
//! - DRAM → L2 (Sects. 4.4, 4.5): the unique sectors of one wave in the middle of the grid, less
//!   what it may reuse from the thread sets one reuse distance before it in x, y and z (Fig. 10),
//!   each weighted by a fitted hit rate of that set's L2 oversubscription, plus partial-store
//!   evictions.
//!
//! Sampling (as the paper does): the L1/L2→L1 numbers come from the block at the centre of the
//! grid; the DRAM numbers from one wave-sized box of blocks (see [`wave_boxes`]). Everything is
//! normalised per lattice update of the sampled threads and scaled to the launch with
//! `launch.lattice_updates`.
//!
//! The paper does not print the fitted constants of its hit-rate functions (they are only drawn in
//! Figs. 16-18); the defaults are the values in the authors' public estimator (github
//! te42kyfo/warpspeed, `predict_metrics.py`, identical in every stored version), each settable with
//! `--set`.

use super::gompertz::Gompertz;
use super::{Domain, ModelInfo, ModelInput, ParamSpec, Prediction, Quantity};
use crate::error::{Error, Result};
use crate::input::hw::WARP_SIZE;
use crate::input::trace::AccessKind;
use crate::input::trace::MAX_LOOP_DEPTH;
use crate::launch::control::WarpCursor;
use crate::launch::geometry::{block_coords, block_warps, thread_coords};
use crate::launch::{
    Access, Launch, Outside, SLOT_BLOCK, SLOT_LOOP, SLOT_THREAD, SLOTS, thread_name,
};
use std::ops::Range;

/// L1 banks a half warp is served from per cycle (Sect. 4.2: "16 cache banks").
pub const L1_BANKS: u64 = 16;
/// Bytes one L1 bank delivers per cycle (Sect. 4.2: "each of which can deliver 8B per cycle").
pub const L1_BANK_BYTES: u64 = 8;
/// Addresses this far apart or more never share a wavefront (Sect. 4.2: "We use a distance of
/// 1024B to discern between close and far apart addresses").
pub const L1_FAR_BYTES: u64 = 1024;

/// The model as the command line knows it.
pub const MODEL: ModelInfo = ModelInfo {
    name: "ernst2023",
    summary: "Ernst et al. 2023 address-expression estimator: L1 wavefronts, L2->L1 and DRAM volumes per lattice update",
    scope: crate::models::Scope {
        applies_to: "kernels whose addresses follow from the thread indices, any dimensionality, without atomics",
        dims: &[0, 1, 2, 3],
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
        "l2_load_bytes_per_lup",
        "L2→L1 loads per update",
        "B/LUP",
        Some(Domain::NON_NEGATIVE),
        "(4), (5): compulsory + (1 − R̂hit^L1(O)) × redundant L1 volume",
    ),
    Quantity::new(
        "dram_load_bytes_per_lup",
        "DRAM loads per update",
        "B/LUP",
        Some(Domain::NON_NEGATIVE),
        "compulsory wave volume − hit overlaps + store evictions (Sects. 4.4.2, 4.5, 5.6)",
    ),
    Quantity::new(
        "l1_cycles_per_warp",
        "L1 cycles per warp",
        "cycles",
        Some(Domain::NON_NEGATIVE),
        "L1 data-stage cycles per 32 updates (bank rule over 8 B words, Sect. 4.2)",
    ),
    Quantity::new(
        "l1_load_bytes_per_lup",
        "L1 loads per update",
        "B/LUP",
        Some(Domain::NON_NEGATIVE),
        "V_up of L1: distinct sectors of every warp load instruction",
    ),
    Quantity::new(
        "l2_load_compulsory_bytes_per_lup",
        "compulsory L2→L1 loads per update",
        "B/LUP",
        Some(Domain::NON_NEGATIVE),
        "V_comp: unique sectors the centre block loads",
    ),
    Quantity::new(
        "l2_load_capacity_bytes_per_lup",
        "capacity L2→L1 loads per update",
        "B/LUP",
        Some(Domain::NON_NEGATIVE),
        "L2→L1 loads beyond the compulsory ones (L1 misses in the redundant volume)",
    ),
    Quantity::new(
        "l2_store_bytes_per_lup",
        "L1→L2 stores per update",
        "B/LUP",
        Some(Domain::NON_NEGATIVE),
        "write-through: distinct sectors of every store instruction",
    ),
    Quantity::new(
        "dram_load_compulsory_bytes_per_lup",
        "compulsory DRAM loads per update",
        "B/LUP",
        Some(Domain::NON_NEGATIVE),
        "unique sectors one wave in the middle of the grid loads",
    ),
    Quantity::new(
        "dram_load_overlap_xy_bytes_per_lup",
        "x/y overlap per update",
        "B/LUP",
        Some(Domain::NON_NEGATIVE),
        "wave loads overlapping the previous wave's in x and y",
    ),
    Quantity::new(
        "dram_load_overlap_z_bytes_per_lup",
        "z overlap per update",
        "B/LUP",
        Some(Domain::NON_NEGATIVE),
        "wave loads overlapping the previous wave's in z",
    ),
    Quantity::new(
        "dram_load_hit_xy_bytes_per_lup",
        "x/y overlap hits per update",
        "B/LUP",
        Some(Domain::NON_NEGATIVE),
        "x/y overlap that hits in L2, R̂hit^y(O_y) × overlap",
    ),
    Quantity::new(
        "dram_load_hit_z_bytes_per_lup",
        "z overlap hits per update",
        "B/LUP",
        Some(Domain::NON_NEGATIVE),
        "z overlap that hits in L2, R̂hit^z(O_z) × overlap",
    ),
    Quantity::new(
        "dram_store_bytes_per_lup",
        "DRAM stores per update",
        "B/LUP",
        Some(Domain::NON_NEGATIVE),
        "unique store sectors of the wave + missed redundant stores",
    ),
    Quantity::new(
        "dram_store_evict_bytes_per_lup",
        "store evictions per update",
        "B/LUP",
        Some(Domain::NON_NEGATIVE),
        "stores written back early, (1 − R̂hit^store(O_wave)) × redundant stores",
    ),
    Quantity::new(
        "block_x",
        "centre block x",
        "1",
        Some(Domain::COUNT_OR_ZERO),
        "the centre block's x index in the grid",
    ),
    Quantity::new(
        "block_y",
        "centre block y",
        "1",
        Some(Domain::COUNT_OR_ZERO),
        "the centre block's y index",
    ),
    Quantity::new(
        "block_z",
        "centre block z",
        "1",
        Some(Domain::COUNT_OR_ZERO),
        "the centre block's z index",
    ),
    Quantity::new(
        "block_lups",
        "block updates",
        "LUP",
        Some(Domain::COUNT_OR_ZERO),
        "lattice updates of the centre block",
    ),
    Quantity::new(
        "block_unique_load_sectors",
        "block unique load sectors",
        "sectors",
        Some(Domain::COUNT_OR_ZERO),
        "distinct 32 B sectors the centre block loads",
    ),
    Quantity::new(
        "block_unique_load_lines",
        "block unique load lines",
        "lines",
        Some(Domain::COUNT_OR_ZERO),
        "distinct 128 B lines the centre block loads",
    ),
    Quantity::new(
        "l1_alloc_bytes_per_sm",
        "L1 V_alloc",
        "B",
        Some(Domain::NON_NEGATIVE),
        "lines the resident blocks of one SM allocate",
    ),
    Quantity::new(
        "l1_bytes",
        "L1 capacity",
        "B",
        Some(Domain::POSITIVE),
        "L1 size the model assumes (--set l1_bytes)",
    ),
    Quantity::new(
        "l1_oversubscription",
        "L1 oversubscription O",
        "1",
        Some(Domain::NON_NEGATIVE),
        "eq. (4): V_alloc / V_cache at L1",
    ),
    Quantity::new(
        "l1_capacity_miss_rate",
        "L1 capacity miss rate",
        "1",
        Some(Domain::UNIT),
        "1 − R̂hit^L1(O): the fitted miss rate in the redundant volume",
    ),
    Quantity::new(
        "wave_blocks",
        "blocks per wave",
        "blocks",
        Some(Domain::COUNT_OR_ZERO),
        "blocks resident on the GPU at once, SMs × blocks per SM",
    ),
    Quantity::new(
        "wave_box_blocks_x",
        "wave extent x",
        "blocks",
        Some(Domain::COUNT_OR_ZERO),
        "the wave's bounding box in blocks, x",
    ),
    Quantity::new(
        "wave_box_blocks_y",
        "wave extent y",
        "blocks",
        Some(Domain::COUNT_OR_ZERO),
        "the wave's bounding box in blocks, y",
    ),
    Quantity::new(
        "wave_box_blocks_z",
        "wave extent z",
        "blocks",
        Some(Domain::COUNT_OR_ZERO),
        "the wave's bounding box in blocks, z",
    ),
    Quantity::new(
        "wave_lups",
        "wave updates",
        "LUP",
        Some(Domain::COUNT_OR_ZERO),
        "lattice updates of one wave",
    ),
    Quantity::new(
        "wave_load_bytes",
        "wave load volume",
        "B",
        Some(Domain::NON_NEGATIVE),
        "distinct sectors one wave loads, in bytes",
    ),
    Quantity::new(
        "wave_store_bytes",
        "wave store volume",
        "B",
        Some(Domain::NON_NEGATIVE),
        "distinct sectors one wave stores, in bytes",
    ),
    Quantity::new(
        "wave_old_x_bytes",
        "previous data in x",
        "B",
        Some(Domain::NON_NEGATIVE),
        "wave loads of data a previous wave loaded, neighbours in x",
    ),
    Quantity::new(
        "wave_old_y_bytes",
        "previous data in y",
        "B",
        Some(Domain::NON_NEGATIVE),
        "wave loads of data a previous wave loaded, neighbours in y",
    ),
    Quantity::new(
        "wave_old_z_bytes",
        "previous data in z",
        "B",
        Some(Domain::NON_NEGATIVE),
        "wave loads of data a previous wave loaded, neighbours in z",
    ),
    Quantity::new(
        "wave_overlap_x_bytes",
        "overlap in x",
        "B",
        Some(Domain::NON_NEGATIVE),
        "the wave's load overlap with its neighbours in x",
    ),
    Quantity::new(
        "wave_overlap_y_bytes",
        "overlap in y",
        "B",
        Some(Domain::NON_NEGATIVE),
        "the wave's load overlap with its neighbours in y",
    ),
    Quantity::new(
        "wave_overlap_z_bytes",
        "overlap in z",
        "B",
        Some(Domain::NON_NEGATIVE),
        "the wave's load overlap with its neighbours in z",
    ),
    Quantity::new(
        "l2_bytes",
        "L2 capacity",
        "B",
        Some(Domain::POSITIVE),
        "L2 size the model assumes, one partition by default (--set l2_bytes)",
    ),
    Quantity::new(
        "l2_oversubscription_y",
        "L2 oversubscription O_y",
        "1",
        Some(Domain::NON_NEGATIVE),
        "oversubscription for the x/y overlap's reuse distance",
    ),
    Quantity::new(
        "l2_oversubscription_z",
        "L2 oversubscription O_z",
        "1",
        Some(Domain::NON_NEGATIVE),
        "oversubscription for the z overlap's reuse distance",
    ),
    Quantity::new(
        "l2_oversubscription_wave",
        "L2 oversubscription O_wave",
        "1",
        Some(Domain::NON_NEGATIVE),
        "one wave's volume over the L2 capacity (stores)",
    ),
    Quantity::new(
        "r_hit_y",
        "R̂hit^y",
        "1",
        Some(Domain::UNIT),
        "fitted L2 hit rate of the x/y overlap (Fig. 16)",
    ),
    Quantity::new(
        "r_hit_z",
        "R̂hit^z",
        "1",
        Some(Domain::UNIT),
        "fitted L2 hit rate of the z overlap (Fig. 17)",
    ),
    Quantity::new(
        "r_hit_store",
        "R̂hit^store",
        "1",
        Some(Domain::UNIT),
        "fitted L2 hit rate of the redundant stores (Fig. 18)",
    ),
];

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "l1_bytes",
        default: None,
        doc: "L1 capacity V_cache of eq. (4) for the L1 fit (default: the launch's L1, hw l1.size_bytes less the driver's carve-out)",
        domain: Domain::POSITIVE,
    },
    ParamSpec {
        name: "l2_bytes",
        default: None,
        doc: "effective L2 capacity (default: hw l2.size_bytes / partitions, Sect. 3: 20 MB on the A100)",
        domain: Domain::POSITIVE,
    },
    ParamSpec {
        name: "lups_per_thread",
        default: None,
        doc: "lattice updates per active thread (default: its loop trips, or 1 without a loop)",
        domain: Domain::POSITIVE,
    },
    ParamSpec {
        name: "l1_a",
        default: Some(0.73),
        doc: "L1 redundant-load MISS rate 1-R_hit = a*exp(b*exp(c*O)): a (authors' code; not printed in the paper)",
        domain: Domain::RATE_CEILING,
    },
    ParamSpec {
        name: "l1_b",
        default: Some(-4.6),
        doc: "L1 miss-rate fit: b (authors' code)",
        domain: Domain::ANY,
    },
    ParamSpec {
        name: "l1_c",
        default: Some(-0.34),
        doc: "L1 miss-rate fit: c (authors' code)",
        domain: Domain::ANY,
    },
    ParamSpec {
        name: "y_a",
        default: Some(1.0),
        doc: "y-layer overlap hit rate R_hit = a*exp(b*exp(c*(O-o0))), Fig. 16: a (authors' code)",
        domain: Domain::RATE_CEILING,
    },
    ParamSpec {
        name: "y_b",
        default: Some(-0.078),
        doc: "y-layer hit-rate fit: b (authors' code)",
        domain: Domain::ANY,
    },
    ParamSpec {
        name: "y_c",
        default: Some(1.03),
        doc: "y-layer hit-rate fit: c (authors' code)",
        domain: Domain::ANY,
    },
    ParamSpec {
        name: "y_o0",
        default: Some(0.2),
        doc: "y-layer hit-rate fit: shift o0 of O (authors' code)",
        domain: Domain::ANY,
    },
    ParamSpec {
        name: "z_a",
        default: Some(1.0),
        doc: "z-layer overlap hit rate R_hit = a*exp(b*exp(c*O)), Fig. 17: a (authors' code)",
        domain: Domain::RATE_CEILING,
    },
    ParamSpec {
        name: "z_b",
        default: Some(-0.0036),
        doc: "z-layer hit-rate fit: b (authors' code)",
        domain: Domain::ANY,
    },
    ParamSpec {
        name: "z_c",
        default: Some(3.97),
        doc: "z-layer hit-rate fit: c (authors' code)",
        domain: Domain::ANY,
    },
    ParamSpec {
        name: "st_a",
        default: Some(1.0),
        doc: "L2 redundant-store hit rate R_hit = a*exp(b*exp(c*O)), Fig. 18: a (authors' code)",
        domain: Domain::RATE_CEILING,
    },
    ParamSpec {
        name: "st_b",
        default: Some(-0.044),
        doc: "L2 store hit-rate fit: b (authors' code)",
        domain: Domain::ANY,
    },
    ParamSpec {
        name: "st_c",
        default: Some(0.61),
        doc: "L2 store hit-rate fit: c (authors' code)",
        domain: Domain::ANY,
    },
];

// ---------------------------------------------------------------------------------------------
// Pure formulas
// ---------------------------------------------------------------------------------------------

/// Eq. (4): the oversubscription factor O = V_alloc / V_cache.
pub fn oversubscription(v_alloc: f64, v_cache: f64) -> f64 {
    v_alloc / v_cache
}

/// Eq. (5): V_cap = (1 − R̂hit(O)) · (V_up − V_comp), the capacity-miss part of the redundant
/// volume (never negative).
pub fn capacity_volume(r_hit: f64, v_up: f64, v_comp: f64) -> f64 {
    (1.0 - r_hit) * (v_up - v_comp).max(0.0)
}

/// Sect. 4.2: L1 cycles (wavefronts) one half warp needs for one instruction. `lane_addresses`
/// are the byte addresses of its active lanes, each accessing `bytes` bytes. Distinct 8 B words
/// are spread over 16 banks (`bank = word mod 16`); each additional word in a bank costs a cycle
/// (`cycles += max(banks)` of Fig. 5). Words 1024 B or more apart never pair: the sorted words are
/// cut into runs each shorter than 1024 B from its first word, and the runs' bank maxima add up.
///
/// The paper's examples: `A[tid]` 1, `B[2*tid]` 2, `D[16*tid]` 16 cycles per half warp (doubles).
pub fn half_warp_wavefronts(lane_addresses: &[u64], bytes: u32) -> u64 {
    let mut words: Vec<u64> = Vec::with_capacity(lane_addresses.len() * 2);
    for &a in lane_addresses {
        let last = a.saturating_add(bytes.max(1) as u64 - 1);
        words.extend(a / L1_BANK_BYTES..=last / L1_BANK_BYTES);
    }
    words.sort_unstable();
    words.dedup();
    let mut cycles = 0;
    let mut i = 0;
    while i < words.len() {
        let start = words[i];
        let mut banks = [0u64; L1_BANKS as usize];
        while i < words.len() && (words[i] - start) * L1_BANK_BYTES < L1_FAR_BYTES {
            banks[(words[i] % L1_BANKS) as usize] += 1;
            i += 1;
        }
        cycles += banks.iter().copied().max().unwrap_or(0);
    }
    cycles
}

/// Blocks (per dimension, half-open ranges of block coordinates) of the representative wave and
/// of its three layer-condition thread sets (Sect. 4.4.2, Fig. 10).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaveBoxes {
    /// Extent of the wave box in blocks.
    pub extent: [u32; 3],
    /// The current wave.
    pub current: [Range<u32>; 3],
    /// The blocks one wave width before it in x (same rows), if the wave does not fill x.
    pub x: Option<[Range<u32>; 3]>,
    /// The full-width rows one wave height before it in y, if the wave does not fill y.
    pub y: Option<[Range<u32>; 3]>,
    /// The full xy layer of blocks just below it in z, if there is one.
    pub z: Option<[Range<u32>; 3]>,
}

/// The wave of `wave_blocks` blocks as a box of whole blocks, as in the authors' estimator: it
/// fills x first (`wx = min(gx, W)`), then y (`wy = min(gy, ⌈W / gx⌉)`), then z
/// (`wz = min(gz, ⌈W / (gx·gy)⌉)`); it sits at the end of x and y and in the middle of z
/// (`z0 = min(⌊gz/2⌋, gz − wz)`, so a wave as deep as the grid starts at 0). The sets one reuse
/// distance before it: x — the `wx` blocks before it in the same rows; y — the `wy` full rows
/// before it; z — the whole xy block layer `z0 − 1`. Each is absent when the wave already spans
/// that dimension (or nothing lies before it).
pub fn wave_boxes(grid: [u32; 3], wave_blocks: u64) -> WaveBoxes {
    let [gx, gy, gz] = grid.map(|g| g.max(1) as u64);
    let w = wave_blocks.max(1);
    let wx = gx.min(w);
    let wy = gy.min(w.div_ceil(gx));
    let wz = gz.min(w.div_ceil(gx * gy));
    let z0 = (gz / 2).min(gz - wz);
    let r = |a: u64, b: u64| a as u32..b as u32;
    let zr = r(z0, z0 + wz);
    let current = [r(gx - wx, gx), r(gy - wy, gy), zr.clone()];
    let x = (wx < gx).then(|| {
        [
            r((gx - wx).saturating_sub(wx), gx - wx),
            r(gy - wy, gy),
            zr.clone(),
        ]
    });
    let y = (wy < gy).then(|| {
        [
            r(0, gx),
            r((gy - wy).saturating_sub(wy), gy - wy),
            zr.clone(),
        ]
    });
    let z = (z0 > 0).then(|| [r(0, gx), r(0, gy), r(z0 - 1, z0)]);
    WaveBoxes {
        extent: [wx as u32, wy as u32, wz as u32],
        current,
        x,
        y,
        z,
    }
}

// ---------------------------------------------------------------------------------------------
// Address enumeration
// ---------------------------------------------------------------------------------------------

/// Enumerates the threads of blocks of one launch and the addresses of their accesses.
///
/// Affine indices (the usual case) are split, as in the simulator, into a per-block part and a
/// per-thread table; other indices are evaluated thread by thread.
struct Enumerator<'a> {
    launch: &'a Launch,
    lups_per_thread: Option<f64>,
    /// Per flattened access: the affine form's per-thread index offsets (by linear thread id).
    lane_tables: Vec<Option<Vec<i64>>>,
}

impl<'a> Enumerator<'a> {
    fn new(launch: &'a Launch, lups_per_thread: Option<f64>) -> Enumerator<'a> {
        let threads = launch.occupancy.warps_per_block * WARP_SIZE as u32;
        let lane_tables = launch
            .program
            .flattened()
            .into_iter()
            .map(|a| {
                let f = a.index.as_affine()?;
                let t = [
                    f.coef[SLOT_THREAD],
                    f.coef[SLOT_THREAD + 1],
                    f.coef[SLOT_THREAD + 2],
                ];
                let table = (0..threads).map(|tid| {
                    let c = thread_coords(tid, launch.block);
                    t[0].checked_mul(c[0])?
                        .checked_add(t[1].checked_mul(c[1])?)?
                        .checked_add(t[2].checked_mul(c[2])?)
                });
                table.collect::<Option<Vec<i64>>>()
            })
            .collect();
        Enumerator {
            launch,
            lups_per_thread,
            lane_tables,
        }
    }

    /// Runs `visit` on every global-memory warp instruction of block `block_id` (shared accesses
    /// are no part of the paper's model), in program order, with its
    /// active lane mask and the byte address of each active lane (in lane order); returns the
    /// block's lattice updates (`lups_per_thread` per active thread if given, else the thread's
    /// loop trips, or 1 without a loop).
    fn visit_block(
        &self,
        block_id: u64,
        visit: &mut dyn FnMut(&Access, u32, &[u64]),
    ) -> Result<f64> {
        let launch = self.launch;
        let p = &launch.program;
        let warps = block_warps(launch, block_id)?;
        let mut slots = [0i64; SLOTS];
        slots[SLOT_BLOCK..SLOT_BLOCK + 3].copy_from_slice(&block_coords(block_id, launch.grid));
        let mut addrs: Vec<u64> = Vec::with_capacity(WARP_SIZE);
        let mut lups = 0.0;
        if !p.simple {
            // Any program: walk each warp; a thread's lattice updates are its stores over the
            // program's static stores (2 x 2 coarsening: 4).
            let static_stores = p
                .accesses
                .iter()
                .filter(|a| a.kind != AccessKind::Load && a.kind.is_global())
                .count()
                .max(1) as f64;
            for (w, info) in warps.iter().enumerate() {
                let mut cursor = WarpCursor::new(launch, block_id, w as u32, info.mask);
                let mut stores = 0u64;
                while let Some(step) = cursor.next()? {
                    let a = &p.accesses[step.access];
                    if !a.kind.is_global() || step.mask == 0 {
                        continue;
                    }
                    if a.kind != AccessKind::Load {
                        stores += step.mask.count_ones() as u64;
                    }
                    self.lane_addresses(
                        step.access,
                        a,
                        w as u32,
                        step.mask,
                        &step.iterations,
                        &mut slots,
                        &mut addrs,
                    )?;
                    visit(a, step.mask, &addrs);
                }
                lups += match self.lups_per_thread {
                    Some(v) => v * info.mask.count_ones() as f64,
                    None => stores as f64 / static_stores,
                };
            }
            return Ok(lups);
        }
        let n_pre = p.pre.len();
        let n_body = p.lp.as_ref().map_or(0, |l| l.body.len());
        for (w, info) in warps.iter().enumerate() {
            if info.mask == 0 {
                continue;
            }
            for lane in 0..WARP_SIZE {
                if info.mask >> lane & 1 == 1 {
                    lups += match (self.lups_per_thread, &p.lp, &info.lane_trips) {
                        (Some(v), _, _) => v,
                        (None, None, _) => 1.0,
                        (None, Some(_), Some(t)) => t[lane] as f64,
                        (None, Some(_), None) => info.trips as f64,
                    };
                }
            }
            let mut run = |k: usize, a: &Access, mask: u32, iteration: u32| -> Result<()> {
                if !a.kind.is_global() {
                    return Ok(());
                }
                let mut iterations = [0; MAX_LOOP_DEPTH];
                iterations[0] = iteration;
                let (w, it) = (w as u32, &iterations);
                self.lane_addresses(k, a, w, mask, it, &mut slots, &mut addrs)?;
                visit(a, mask, &addrs);
                Ok(())
            };
            for (k, a) in p.pre.iter().enumerate() {
                run(k, a, info.mask, 0)?;
            }
            if let Some(lp) = &p.lp {
                for it in 0..info.trips {
                    let m = info.loop_mask(it);
                    if m != 0 {
                        for (k, a) in lp.body.iter().enumerate() {
                            run(n_pre + k, a, m, it)?;
                        }
                    }
                }
            }
            for (k, a) in p.post.iter().enumerate() {
                run(n_pre + n_body + k, a, info.mask, 0)?;
            }
        }
        Ok(lups)
    }

    /// The byte addresses of the active lanes of warp `warp` for access `a` (flattened number
    /// `k`); block coordinates are already in `slots`. An address outside the array is an
    /// error, as in the simulator.
    #[allow(clippy::too_many_arguments)]
    fn lane_addresses(
        &self,
        k: usize,
        a: &Access,
        warp: u32,
        mask: u32,
        iterations: &[u32; MAX_LOOP_DEPTH],
        slots: &mut [i64; SLOTS],
        out: &mut Vec<u64>,
    ) -> Result<()> {
        let launch = self.launch;
        out.clear();
        let arr = &launch.arrays[a.array];
        let elem = arr.element_bytes as i64;
        let limit = arr.bytes() as i64 - a.bytes as i64;
        for (d, &k) in iterations.iter().enumerate() {
            slots[SLOT_LOOP + d] = k as i64;
        }
        // The per-block part of an affine index (thread slots zero), computed once per warp.
        let fast = match (&self.lane_tables[k], a.index.as_affine()) {
            (Some(table), Some(f)) => {
                let mut s = *slots;
                s[SLOT_THREAD..SLOT_THREAD + 3].fill(0);
                f.eval_checked(&s).ok().map(|part| (table, part))
            }
            _ => None,
        };
        let thread = |tid: u32, slots: &[i64; SLOTS]| {
            let t = thread_coords(tid, launch.block);
            let b = [
                slots[SLOT_BLOCK],
                slots[SLOT_BLOCK + 1],
                slots[SLOT_BLOCK + 2],
            ];
            thread_name(t, b, &iterations[..a.depth])
        };
        let mut m = mask;
        while m != 0 {
            let lane = m.trailing_zeros();
            m &= m - 1;
            let tid = warp * 32 + lane;
            let index_error = |text: &str, e, slots: &[i64; SLOTS]| {
                a.index_error(&launch.source_name, arr, text, &thread(tid, slots), e)
            };
            if !a.coordinates.is_empty() {
                let t = thread_coords(tid, launch.block);
                slots[SLOT_THREAD..SLOT_THREAD + 3].copy_from_slice(&t);
                if let Some(outside) = a
                    .coordinate_outside(slots)
                    .map_err(|(text, e)| index_error(text, e, slots))?
                {
                    let who = thread(tid, slots);
                    return Err(a.outside_error(&launch.source_name, arr, outside, &who));
                }
            }
            let idx = match fast {
                Some((table, part)) => part.checked_add(table[tid as usize]),
                None => None,
            };
            let idx = match idx {
                Some(i) => i,
                None => {
                    let t = thread_coords(tid, launch.block);
                    slots[SLOT_THREAD..SLOT_THREAD + 3].copy_from_slice(&t);
                    (a.index.eval(slots)).map_err(|e| index_error(&a.index_text, e, slots))?
                }
            };
            let offset = idx.checked_mul(elem).unwrap_or(i64::MIN);
            if offset < 0 || offset > limit {
                let who = thread(tid, slots);
                return Err(a.outside_error(
                    &launch.source_name,
                    arr,
                    Outside::Offset(offset),
                    &who,
                ));
            }
            out.push(arr.base + offset as u64);
        }
        Ok(())
    }
}

/// Calls `f` with every `unit`-sized piece (its index `address / unit`) one lane access touches.
#[inline]
fn pieces(addr: u64, bytes: u32, unit: u64, mut f: impl FnMut(u64)) {
    let last = addr + bytes.max(1) as u64 - 1;
    for s in addr / unit..=last / unit {
        f(s);
    }
}

/// A set of sectors over the launch's address range: a bitmap allocated in pages on first touch,
/// so a wave's footprint costs memory in proportion to what it touches.
struct SectorSet {
    lo: u64,
    pages: Vec<Option<Box<[u64; PAGE_WORDS]>>>,
}

const PAGE_WORDS: usize = 1024;
const PAGE_SECTORS: u64 = 64 * PAGE_WORDS as u64;

impl SectorSet {
    fn new(lo: u64, hi: u64) -> SectorSet {
        let n = (hi - lo).div_ceil(PAGE_SECTORS) as usize;
        SectorSet {
            lo,
            pages: (0..n).map(|_| None).collect(),
        }
    }

    #[inline]
    fn insert(&mut self, sector: u64) {
        let i = sector - self.lo;
        let page =
            self.pages[(i / PAGE_SECTORS) as usize].get_or_insert_with(|| Box::new([0; 1024]));
        page[((i / 64) % PAGE_WORDS as u64) as usize] |= 1 << (i % 64);
    }

    /// Inserts the sectors of a warp's lane accesses (neighbouring lanes mostly share one, so
    /// repeats of the previous sector are skipped).
    fn insert_lanes(&mut self, addrs: &[u64], bytes: u32, sector_bytes: u64) {
        let mut last = u64::MAX;
        for &ad in addrs {
            pieces(ad, bytes, sector_bytes, |s| {
                if s != last {
                    self.insert(s);
                    last = s;
                }
            });
        }
    }

    fn count(&self) -> u64 {
        self.pages
            .iter()
            .flatten()
            .map(|p| p.iter().map(|w| w.count_ones() as u64).sum::<u64>())
            .sum()
    }

    fn intersection_count(&self, other: &SectorSet) -> u64 {
        self.pages
            .iter()
            .zip(&other.pages)
            .filter_map(|(a, b)| Some((a.as_ref()?, b.as_ref()?)))
            .map(|(a, b)| {
                a.iter()
                    .zip(b.iter())
                    .map(|(x, y)| (x & y).count_ones() as u64)
                    .sum::<u64>()
            })
            .sum()
    }

    fn subtract(&mut self, other: &SectorSet) {
        for (a, b) in self.pages.iter_mut().zip(&other.pages) {
            if let (Some(a), Some(b)) = (a.as_mut(), b.as_ref()) {
                for (x, y) in a.iter_mut().zip(b.iter()) {
                    *x &= !y;
                }
            }
        }
    }
}

/// Linear block ids of a box of block coordinates.
fn box_blocks(grid: [u32; 3], b: &[Range<u32>; 3]) -> impl Iterator<Item = u64> + '_ {
    let [gx, gy, _] = grid.map(|g| g as u64);
    b[2].clone().flat_map(move |z| {
        b[1].clone().flat_map(move |y| {
            b[0].clone()
                .map(move |x| x as u64 + gx * (y as u64 + gy * z as u64))
        })
    })
}

/// What one thread block touches (Sects. 4.2, 4.3).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BlockMetrics {
    /// Lattice updates of the block.
    pub lups: f64,
    /// Unique 32 B sectors the block loads (compulsory L2 → L1 volume / 32).
    pub unique_load_sectors: u64,
    /// Unique 128 B lines the block loads (its L1 allocation / 128).
    pub unique_load_lines: u64,
    /// Sum over warp load instructions of their distinct sectors (the L1 → register request
    /// volume, V_up of the L1).
    pub load_request_sectors: u64,
    /// Sum over warp store instructions of their distinct sectors (write-through to L2).
    pub store_request_sectors: u64,
    /// L1 cycles of all warp instructions (both half warps).
    pub l1_cycles: u64,
}

/// The block metrics of block `block_id` of `launch`.
pub fn block_metrics(
    launch: &Launch,
    block_id: u64,
    sector_bytes: u64,
    line_bytes: u64,
    lups_per_thread: Option<f64>,
) -> Result<BlockMetrics> {
    let mut m = BlockMetrics::default();
    let mut sectors: Vec<u64> = Vec::new();
    let mut lines: Vec<u64> = Vec::new();
    let mut warp: Vec<u64> = Vec::with_capacity(64);
    let en = Enumerator::new(launch, lups_per_thread);
    m.lups = en.visit_block(block_id, &mut |a, mask, addrs| {
        warp.clear();
        for &ad in addrs {
            pieces(ad, a.bytes, sector_bytes, |s| warp.push(s));
        }
        warp.sort_unstable();
        warp.dedup();
        match a.kind {
            AccessKind::Load => {
                m.load_request_sectors += warp.len() as u64;
                sectors.extend_from_slice(&warp);
                for &ad in addrs {
                    pieces(ad, a.bytes, line_bytes, |l| lines.push(l));
                }
            }
            AccessKind::Store | AccessKind::Atomic => m.store_request_sectors += warp.len() as u64,
            AccessKind::SharedLoad | AccessKind::SharedStore | AccessKind::Shuffle => {
                unreachable!("visit_block passes no shared access nor shuffle")
            }
        }
        // Lanes 0-15 and 16-31 are the two half warps; `addrs` holds the active lanes in lane
        // order, so the lower half's are the first `popcount(mask & 0xffff)`.
        let (lo, hi) = addrs.split_at((mask & 0xffff).count_ones() as usize);
        m.l1_cycles += half_warp_wavefronts(lo, a.bytes) + half_warp_wavefronts(hi, a.bytes);
    })?;
    sectors.sort_unstable();
    sectors.dedup();
    lines.sort_unstable();
    lines.dedup();
    m.unique_load_sectors = sectors.len() as u64;
    m.unique_load_lines = lines.len() as u64;
    Ok(m)
}

/// What the representative wave and its layer-condition thread sets touch (Sect. 4.4), in bytes
/// of whole sectors.
#[derive(Debug, Clone, PartialEq)]
pub struct WaveMetrics {
    /// The wave box and its x / y / z sets.
    pub boxes: WaveBoxes,
    /// Lattice updates of the wave box.
    pub lups: f64,
    /// Unique load footprint of the wave (its compulsory DRAM load volume).
    pub load_bytes: f64,
    /// Unique store footprint of the wave.
    pub store_bytes: f64,
    /// Footprint (loads and stores) of the x, y and z sets: what the L2 must hold for the reuse.
    pub old_bytes: [f64; 3],
    /// The part of the wave's load footprint that the x set also touches, then of the rest the
    /// part the y set touches, then of the rest the part the z set touches.
    pub overlap_bytes: [f64; 3],
}

/// Footprints of the wave of `wave_blocks` blocks of `launch` (see [`wave_boxes`]), counted in
/// `sector_bytes` sectors.
pub fn wave_metrics(
    launch: &Launch,
    wave_blocks: u64,
    sector_bytes: u64,
    lups_per_thread: Option<f64>,
) -> Result<WaveMetrics> {
    let boxes = wave_boxes(launch.grid, wave_blocks);
    let lo = launch.arrays.iter().map(|a| a.base).min().unwrap_or(0) / sector_bytes;
    let hi = launch
        .arrays
        .iter()
        .map(|a| a.base + a.bytes())
        .max()
        .unwrap_or(0)
        / sector_bytes
        + 1;
    let mut loads = SectorSet::new(lo, hi);
    let mut stores = SectorSet::new(lo, hi);
    let en = Enumerator::new(launch, lups_per_thread);
    let mut lups = 0.0;
    for b in box_blocks(launch.grid, &boxes.current) {
        lups += en.visit_block(b, &mut |a, _, addrs| {
            let set = match a.kind {
                AccessKind::Load => &mut loads,
                AccessKind::Store | AccessKind::Atomic => &mut stores,
                AccessKind::SharedLoad | AccessKind::SharedStore | AccessKind::Shuffle => {
                    unreachable!("visit_block passes no shared access nor shuffle")
                }
            };
            set.insert_lanes(addrs, a.bytes, sector_bytes);
        })?;
    }
    let sb = sector_bytes as f64;
    let load_bytes = loads.count() as f64 * sb;
    let store_bytes = stores.count() as f64 * sb;
    let mut old_bytes = [0.0; 3];
    let mut overlap_bytes = [0.0; 3];
    for (d, set) in [&boxes.x, &boxes.y, &boxes.z].into_iter().enumerate() {
        let Some(set) = set else { continue };
        let mut prev = SectorSet::new(lo, hi);
        for b in box_blocks(launch.grid, set) {
            en.visit_block(b, &mut |a, _, addrs| {
                prev.insert_lanes(addrs, a.bytes, sector_bytes);
            })?;
        }
        old_bytes[d] = prev.count() as f64 * sb;
        overlap_bytes[d] = loads.intersection_count(&prev) as f64 * sb;
        loads.subtract(&prev);
    }
    Ok(WaveMetrics {
        boxes,
        lups,
        load_bytes,
        store_bytes,
        old_bytes,
        overlap_bytes,
    })
}

// ---------------------------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------------------------

fn positive(value: f64, name: &str) -> Result<f64> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(Error::new(
            "--set",
            format!("{name} = {value} must be a positive number"),
        ))
    }
}

/// The hit-rate (or miss-rate) curve `prefix` (`l1`, `y`, `z`, `st`) from its constants; only
/// the y-layer fit has a shift o0.
fn fit(input: &ModelInput, prefix: &str) -> Result<Gompertz> {
    let get = |n: &str| -> Result<f64> {
        let name = format!("{prefix}_{n}");
        let v = input.param_or(PARAMS, &name, 0.0);
        if v.is_finite() {
            Ok(v)
        } else {
            Err(Error::new("--set", format!("{name} = {v} is not a number")))
        }
    };
    Ok(Gompertz {
        a: get("a")?,
        b: get("b")?,
        c: get("c")?,
        o0: if prefix == "y" { get("o0")? } else { 0.0 },
    })
}

/// The fitted rate of Sect. 4.5 at oversubscription `o`, clamped to [0, 1] because it stands
/// for a rate.
fn rate(f: &Gompertz, prefix: &str, o: f64) -> Result<f64> {
    f.rate(o).ok_or_else(|| {
        Error::new(
            "--set",
            format!(
                "the {prefix} fit a*exp(b*exp(c*(O-o0))) with a = {}, b = {}, c = {}, o0 = {} is not a number at O = {o}",
                f.a, f.b, f.c, f.o0
            ),
        )
    })
}

/// The model's constants: capacities, lattice updates per thread and the four fitted rates.
struct Constants {
    l1_bytes: f64,
    l2_bytes: f64,
    /// `lups_per_thread` if the user set it.
    lups_per_thread: Option<f64>,
    l1_fit: Gompertz,
    y_fit: Gompertz,
    z_fit: Gompertz,
    st_fit: Gompertz,
}

impl Constants {
    /// The user's values, else the defaults of [`PARAMS`], else the GPU's.
    fn of(input: &ModelInput) -> Result<Constants> {
        let hw = input.hw;
        let l1_bytes = positive(
            input.param_or(PARAMS, "l1_bytes", input.launch.l1_bytes(hw) as f64),
            "l1_bytes",
        )?;
        let l2_bytes = positive(
            input.param_or(
                PARAMS,
                "l2_bytes",
                hw.l2.size_bytes as f64 / hw.l2.partitions.max(1) as f64,
            ),
            "l2_bytes",
        )?;
        let lups_per_thread = match input.user_param("lups_per_thread") {
            Some(v) => Some(positive(v, "lups_per_thread")?),
            None => None,
        };
        let (l1_fit, y_fit, z_fit, st_fit) = (
            fit(input, "l1")?,
            fit(input, "y")?,
            fit(input, "z")?,
            fit(input, "st")?,
        );
        Ok(Constants {
            l1_bytes,
            l2_bytes,
            lups_per_thread,
            l1_fit,
            y_fit,
            z_fit,
            st_fit,
        })
    }
}

/// What one thread block at the centre of the grid gives (Sects. 4.2, 4.3, 4.5): L1 wavefronts
/// and the L2 -> L1 volume, per lattice update.
struct BlockPart {
    /// Block coordinates of the sampled block.
    centre: [u64; 3],
    metrics: BlockMetrics,
    l1_load: f64,
    l2_comp: f64,
    l1_alloc: f64,
    o_l1: f64,
    l1_miss: f64,
    l2_cap: f64,
    l2_load: f64,
    l2_store: f64,
    l1_cycles: f64,
}

/// The L1 and L2 -> L1 part of the model on the block at the centre of the grid.
fn block_part(input: &ModelInput, c: &Constants) -> Result<BlockPart> {
    let l = input.launch;
    let hw = input.hw;
    let sector = hw.l1.sector_bytes.max(1) as u64;
    let line = hw.l1.line_bytes.max(1) as u64;
    let blocks_per_sm = l.occupancy.blocks_per_sm as u64;
    let [gx, gy, gz] = l.grid.map(|g| g as u64);
    let centre = [gx / 2, gy / 2, gz / 2];
    let centre_id = centre[0] + gx * (centre[1] + gy * centre[2]);
    let bm = block_metrics(l, centre_id, sector, line, c.lups_per_thread)?;
    if bm.lups <= 0.0 {
        return Err(Error::new(
            &l.source_name,
            format!(
                "the sampled block ({}, {}, {}) at the centre of the grid has no active thread",
                centre[0], centre[1], centre[2]
            ),
        ));
    }
    let per_lup = |sectors: u64| sectors as f64 * sector as f64 / bm.lups;
    let l1_load = per_lup(bm.load_request_sectors);
    let l2_comp = per_lup(bm.unique_load_sectors);
    let l1_alloc = (bm.unique_load_lines * line * blocks_per_sm) as f64;
    let o_l1 = oversubscription(l1_alloc, c.l1_bytes);
    // The authors fit the L1's capacity MISS rate of the redundant volume directly.
    let l1_miss = rate(&c.l1_fit, "l1", o_l1)?;
    let l2_cap = capacity_volume(1.0 - l1_miss, l1_load, l2_comp);
    let l2_load = l2_comp + l2_cap;
    let l2_store = per_lup(bm.store_request_sectors);
    let l1_cycles = WARP_SIZE as f64 * bm.l1_cycles as f64 / bm.lups;
    Ok(BlockPart {
        centre,
        metrics: bm,
        l1_load,
        l2_comp,
        l1_alloc,
        o_l1,
        l1_miss,
        l2_cap,
        l2_load,
        l2_store,
        l1_cycles,
    })
}

/// What one wave of blocks gives (Sects. 4.4, 4.5): the DRAM -> L2 volume per lattice update.
struct WavePart {
    wave_blocks: u64,
    metrics: WaveMetrics,
    dram_comp: f64,
    o_y: f64,
    o_z: f64,
    r_y: f64,
    r_z: f64,
    overlap_xy: f64,
    overlap_z: f64,
    hit_xy: f64,
    hit_z: f64,
    o_wave: f64,
    r_st: f64,
    store_evict: f64,
    dram_load: f64,
    dram_store: f64,
}

/// The DRAM part of the model on one wave-sized box of blocks; `l2_store` is the block part's
/// store volume per lattice update (the redundant stores that may be evicted).
fn wave_part(input: &ModelInput, c: &Constants, l2_store: f64) -> Result<WavePart> {
    let l = input.launch;
    let hw = input.hw;
    let l2_sector = hw.l2.sector_bytes.max(1) as u64;
    let blocks_per_sm = l.occupancy.blocks_per_sm as u64;
    let wave_blocks = hw.sm.count as u64 * blocks_per_sm;
    let wm = wave_metrics(l, wave_blocks, l2_sector, c.lups_per_thread)?;
    if wm.lups <= 0.0 {
        return Err(Error::new(
            &l.source_name,
            "the sampled wave has no active thread",
        ));
    }
    let dram_comp = wm.load_bytes / wm.lups;
    // x and y overlaps share the y fit, with the y set's footprint (the x set's when the wave
    // fills y), as in the authors' estimator.
    let old_xy = if wm.boxes.y.is_some() {
        wm.old_bytes[1]
    } else {
        wm.old_bytes[0]
    };
    let o_y = oversubscription(old_xy, c.l2_bytes);
    let o_z = oversubscription(wm.old_bytes[2], c.l2_bytes);
    let r_y = rate(&c.y_fit, "y", o_y)?;
    let r_z = rate(&c.z_fit, "z", o_z)?;
    let overlap_xy = (wm.overlap_bytes[0] + wm.overlap_bytes[1]) / wm.lups;
    let overlap_z = wm.overlap_bytes[2] / wm.lups;
    let hit_xy = r_y * overlap_xy;
    let hit_z = r_z * overlap_z;
    let dram_store_comp = wm.store_bytes / wm.lups;
    let o_wave = oversubscription(wm.load_bytes + wm.store_bytes, c.l2_bytes);
    let r_st = rate(&c.st_fit, "st", o_wave)?;
    // Redundant (partial) stores evicted before completion: written out, and read back to
    // complete the line (Sect. 5.6).
    let store_evict = capacity_volume(r_st, l2_store, dram_store_comp);
    let dram_load = dram_comp - hit_xy - hit_z + store_evict;
    let dram_store = dram_store_comp + store_evict;
    Ok(WavePart {
        wave_blocks,
        metrics: wm,
        dram_comp,
        o_y,
        o_z,
        r_y,
        r_z,
        overlap_xy,
        overlap_z,
        hit_xy,
        hit_z,
        o_wave,
        r_st,
        store_evict,
        dram_load,
        dram_store,
    })
}

fn predict(input: &ModelInput) -> Result<Prediction> {
    let c = Constants::of(input)?;
    let b = block_part(input, &c)?;
    let w = wave_part(input, &c, b.l2_store)?;
    let (bm, wm) = (&b.metrics, &w.metrics);
    let mut p = Prediction::new(MODEL.name);
    p.field("l2_load_bytes_per_lup", b.l2_load)
        .field("dram_load_bytes_per_lup", w.dram_load)
        .field("l1_cycles_per_warp", b.l1_cycles)
        .field("l1_load_bytes_per_lup", b.l1_load)
        .field("l2_load_compulsory_bytes_per_lup", b.l2_comp)
        .field("l2_load_capacity_bytes_per_lup", b.l2_cap)
        .field("l2_store_bytes_per_lup", b.l2_store)
        .field("dram_load_compulsory_bytes_per_lup", w.dram_comp)
        .field("dram_load_overlap_xy_bytes_per_lup", w.overlap_xy)
        .field("dram_load_overlap_z_bytes_per_lup", w.overlap_z)
        .field("dram_load_hit_xy_bytes_per_lup", w.hit_xy)
        .field("dram_load_hit_z_bytes_per_lup", w.hit_z)
        .field("dram_store_bytes_per_lup", w.dram_store)
        .field("dram_store_evict_bytes_per_lup", w.store_evict)
        .field("block_x", b.centre[0])
        .field("block_y", b.centre[1])
        .field("block_z", b.centre[2])
        .field("block_lups", bm.lups)
        .field("block_unique_load_sectors", bm.unique_load_sectors)
        .field("block_unique_load_lines", bm.unique_load_lines)
        .field("l1_alloc_bytes_per_sm", b.l1_alloc)
        .field("l1_bytes", c.l1_bytes)
        .field("l1_oversubscription", b.o_l1)
        .field("l1_capacity_miss_rate", b.l1_miss)
        .field("wave_blocks", w.wave_blocks)
        .field("wave_box_blocks_x", wm.boxes.extent[0])
        .field("wave_box_blocks_y", wm.boxes.extent[1])
        .field("wave_box_blocks_z", wm.boxes.extent[2])
        .field("wave_lups", wm.lups)
        .field("wave_load_bytes", wm.load_bytes)
        .field("wave_store_bytes", wm.store_bytes)
        .field("wave_old_x_bytes", wm.old_bytes[0])
        .field("wave_old_y_bytes", wm.old_bytes[1])
        .field("wave_old_z_bytes", wm.old_bytes[2])
        .field("wave_overlap_x_bytes", wm.overlap_bytes[0])
        .field("wave_overlap_y_bytes", wm.overlap_bytes[1])
        .field("wave_overlap_z_bytes", wm.overlap_bytes[2])
        .field("l2_bytes", c.l2_bytes)
        .field("l2_oversubscription_y", w.o_y)
        .field("l2_oversubscription_z", w.o_z)
        .field("l2_oversubscription_wave", w.o_wave)
        .field("r_hit_y", w.r_y)
        .field("r_hit_z", w.r_z)
        .field("r_hit_store", w.r_st);
    let n = input.launch.lattice_updates as f64;
    p.volumes.l1_load_bytes = Some(b.l1_load * n);
    p.volumes.l2_load_bytes = Some(b.l2_load * n);
    p.volumes.l2_store_bytes = Some(b.l2_store * n);
    p.volumes.dram_load_bytes = Some(w.dram_load * n);
    p.volumes.dram_store_bytes = Some(w.dram_store * n);
    // Sect. 4.2's cycles are L1 data-stage wavefronts: per 32 updates, so this many in all.
    p.volumes.l1_wavefronts = Some(b.l1_cycles * n / WARP_SIZE as f64);
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wavefronts_by_hand() {
        // 16 consecutive doubles: 16 banks, one wavefront.
        let a: Vec<u64> = (0..16).map(|i| 4096 + 8 * i).collect();
        assert_eq!(half_warp_wavefronts(&a, 8), 1);
        // Two rows of 8 doubles 5184 B apart: no bank conflict, but far apart: 2.
        let b: Vec<u64> = (0..16).map(|i| (i / 8) * 5184 + 8 * (i % 8)).collect();
        assert_eq!(half_warp_wavefronts(&b, 8), 2);
        // 16 floats share 8 words: one wavefront; 16 B per lane: 32 words, 2 per bank.
        let c: Vec<u64> = (0..16).map(|i| 4 * i).collect();
        assert_eq!(half_warp_wavefronts(&c, 4), 1);
        let d: Vec<u64> = (0..16).map(|i| 16 * i).collect();
        assert_eq!(half_warp_wavefronts(&d, 16), 2);
        // The same address in every lane: one word.
        assert_eq!(half_warp_wavefronts(&[64; 16], 8), 1);
        assert_eq!(half_warp_wavefronts(&[], 8), 0);
    }

    #[test]
    fn wave_boxes_by_hand() {
        // star4 640x512x512, block 64x4x4, 216 blocks per wave.
        let w = wave_boxes([10, 128, 128], 216);
        assert_eq!(w.extent, [10, 22, 1]);
        assert_eq!(w.current, [0..10, 106..128, 64..65]);
        assert_eq!(w.x, None);
        assert_eq!(w.y, Some([0..10, 84..106, 64..65]));
        assert_eq!(w.z, Some([0..10, 0..128, 63..64]));
        // A wave shorter than a row of blocks has an x set.
        let w = wave_boxes([100, 4, 4], 30);
        assert_eq!(w.current, [70..100, 3..4, 2..3]);
        assert_eq!(w.x, Some([40..70, 3..4, 2..3]));
        // A wave deeper than the grid covers all of it and has no sets.
        let w = wave_boxes([2, 2, 2], 3456);
        assert_eq!(
            (w.current, w.x, w.y, w.z),
            ([0..2, 0..2, 0..2], None, None, None)
        );
    }

    #[test]
    fn fits_and_capacity_volume() {
        let z = Gompertz::new(1.0, -0.0036, 3.97);
        assert_eq!(z.rate(0.0), Some((-0.0036f64).exp()));
        assert_eq!(z.rate(1e9), Some(0.0));
        let bad = Gompertz::new(0.0, 1.0, 1.0);
        assert_eq!(bad.rate(1e6), None);
        // A rate above one is clamped.
        let up = Gompertz { a: 2.0, ..z };
        assert_eq!(up.rate(0.0), Some(1.0));
        assert_eq!(capacity_volume(0.25, 10.0, 6.0), 3.0);
        assert_eq!(capacity_volume(0.25, 5.0, 6.0), 0.0);
        assert_eq!(oversubscription(30.0, 20.0), 1.5);
    }
}
