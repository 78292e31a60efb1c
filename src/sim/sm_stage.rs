//! The per-SM stage: addresses of each issued warp instruction → coalesced lines → the SM's L1.
//!
//! Each SM is independent here (its L1 is private), so SMs run in parallel. What leaves the SM —
//! load misses and write-through stores — is queued with its tick in one
//! [`RequestList`] per L2 shard, for the shared L2 to replay in global order.

use crate::error::{Error, Result};
use crate::input::expr::Compiled;
use crate::input::hw::WARP_SIZE;
use crate::input::hw::{HwConfig, SetIndexing};
use crate::input::trace::{AccessKind, MAX_LOOP_DEPTH};
use crate::launch::geometry::{BlockWarps, WarpInfo, block_coords, block_warps, thread_coords};
use crate::launch::{
    Access, ArrayLayout, Launch, Layout, Outside, SLOT_BLOCK, SLOT_LOOP, SLOT_THREAD, SLOTS,
    thread_name,
};
use crate::metrics::LINE_SHIFT;
use crate::sim::atomic_slices::SliceTally;
use crate::sim::cache::{Cache, Geometry, XorIndex};
use crate::sim::coalesce::{Coalescer, LineRequest, full_sectors};
use crate::sim::data_stage;
use crate::sim::l2::{L2Op, L2Router, RequestList};
use crate::sim::schedule::{Issue, Issued};
use std::collections::HashMap;

pub use crate::sim::counters::L1Counters;

/// The distinct sectors one block has loaded: an open-addressing table of line → sector mask,
/// cheaper than a general hash map on this hot path and reused from block to block. An entry
/// packs `(line + 1) << 4 | mask` (0 = empty), so a probe reads one word.
#[derive(Debug, Clone)]
struct BlockFootprint {
    block: u32,
    entries: Vec<u64>,
    len: usize,
}

/// Bits of a footprint entry holding the sector mask.
const FOOTPRINT_MASK_BITS: u32 = 4;
/// The sector mask of a footprint entry.
const FOOTPRINT_MASK: u64 = (1 << FOOTPRINT_MASK_BITS) - 1;

impl BlockFootprint {
    fn new() -> BlockFootprint {
        BlockFootprint {
            block: u32::MAX,
            entries: vec![0; 1024],
            len: 0,
        }
    }

    #[inline]
    fn slot(&self, line: u64) -> usize {
        let h = (line.wrapping_add(1)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> (64 - self.entries.len().trailing_zeros())) as usize
    }

    #[inline(always)]
    fn insert(&mut self, line: u64, sectors: u8) {
        if 4 * (self.len + 1) > 3 * self.entries.len() {
            self.grow();
        }
        let mask = self.entries.len() - 1;
        let key = (line + 1) << FOOTPRINT_MASK_BITS;
        let mut i = self.slot(line);
        loop {
            let e = self.entries[i];
            if e >> FOOTPRINT_MASK_BITS == line + 1 {
                self.entries[i] = e | sectors as u64;
                return;
            }
            if e == 0 {
                self.entries[i] = key | sectors as u64;
                self.len += 1;
                return;
            }
            i = (i + 1) & mask;
        }
    }

    #[cold]
    fn grow(&mut self) {
        let doubled = vec![0; 2 * self.entries.len()];
        let old = std::mem::replace(&mut self.entries, doubled);
        self.len = 0;
        for e in old.into_iter().filter(|&e| e != 0) {
            self.insert((e >> FOOTPRINT_MASK_BITS) - 1, (e & FOOTPRINT_MASK) as u8);
        }
    }

    /// Distinct (sectors, lines) recorded; empties the table for the next block.
    fn take(&mut self) -> (u64, u64) {
        let lines = self.len as u64;
        let mut n = 0;
        for e in &mut self.entries {
            n += (*e & FOOTPRINT_MASK).count_ones() as u64;
            *e = 0;
        }
        self.len = 0;
        self.block = u32::MAX;
        (n, lines)
    }
}

/// One access, prepared for fast address generation.
#[derive(Debug, Clone)]
struct PreparedAccess {
    kind: AccessKind,
    /// Loops around the access.
    depth: usize,
    bytes: u32,
    elem: i64,
    base: u64,
    limit: u64,
    array: usize,
    /// Every lane's access lies within one sector (see [`Coalescer::coalesce_aligned`]).
    aligned: bool,
    /// A load that never looks the L1 up ([`crate::launch::Access::bypass_l1`]).
    bypass_l1: bool,
    /// An atomic whose lanes on one address make one update ([`crate::launch::Access::aggregated`]).
    aggregated: bool,
    /// An atomic adding floating-point values ([`crate::launch::Access::float`]).
    float: bool,
    /// A store issued too long after the warp's previous memory instruction, or after a
    /// barrier, to merge with the warp's previous store ([`SmWorker::store`]).
    apart_from_previous_store: bool,
    /// Affine index split into the part shared by a warp and a per-lane table.
    fast: Option<FastIndex>,
    general: Compiled,
    /// Data-stage passes of each warp of the block with all its lanes active, where they do not
    /// depend on the warp's base address (an affine index on 4-byte-aligned elements whose lane
    /// groups reach over at most 4 lines: moving every lane by whole words only renames the
    /// banks).
    full_warp_passes: Option<Vec<u8>>,
    /// Which line pattern a full warp of this access takes (see [`LinePatterns`]): set for loads
    /// and stores that have `fast` and `full_warp_passes`, unless the launch runs lane by lane.
    pattern_class: Option<usize>,
    /// The coordinates of a per-dimension index that binding did not prove inside their
    /// dimensions ([`crate::launch::Coordinate::always_inside`]): checked per warp. Empty for a
    /// linear index.
    coordinates: Vec<CoordinateCheck>,
}

/// One coordinate of a per-dimension index, checked against its dimension: a full warp of an
/// affine coordinate by its lanes' extremes, two comparisons; lane by lane only when that fails
/// or the coordinate is not affine.
#[derive(Debug, Clone)]
struct CoordinateCheck {
    /// The dimension, 0 for x.
    dim: usize,
    /// Valid values are `0..extent`.
    extent: i64,
    fast: Option<AffineCoordinate>,
    general: Compiled,
}

/// An affine coordinate split like [`FastIndex`]: the part shared by a warp, and per thread of
/// the block its `threadIdx` part (in elements, not bytes).
#[derive(Debug, Clone)]
struct AffineCoordinate {
    c0: i64,
    block_coef: [i64; 3],
    loop_coef: [i64; MAX_LOOP_DEPTH],
    /// Per thread of the block: its `threadIdx` part.
    lanes: Vec<i64>,
    /// Per warp: the least and greatest of `lanes` over the lanes that exist.
    extremes: Vec<(i64, i64)>,
}

impl AffineCoordinate {
    /// The coordinate of thread (0, 0, 0) of block `b` at loop iterations `iterations`;
    /// `None` on overflow (then the exact per-lane evaluation decides).
    #[inline]
    fn warp_base(&self, b: [i64; 3], iterations: &[u32]) -> Option<i64> {
        let mut v = self.c0;
        for (c, x) in self.block_coef.iter().zip(b) {
            v = v.checked_add(c.checked_mul(x)?)?;
        }
        for (c, &k) in self.loop_coef.iter().zip(iterations) {
            v = v.checked_add(c.checked_mul(k as i64)?)?;
        }
        Some(v)
    }

    /// Whether every lane that exists in `warp` is inside `0..extent`.
    #[inline]
    fn warp_inside(&self, extent: i64, warp: usize, b: [i64; 3], iterations: &[u32]) -> bool {
        let Some(base) = self.warp_base(b, iterations) else {
            return false;
        };
        let (lo, hi) = self.extremes[warp];
        base.checked_add(lo).is_some_and(|v| v >= 0)
            && base.checked_add(hi).is_some_and(|v| v < extent)
    }
}

impl AffineCoordinate {
    /// The split of `f` over the block of `launch` (`threads`: its warps' lanes); `None` when a
    /// thread's part overflows (the coordinate is then evaluated per lane, exactly).
    fn new(
        f: &crate::input::expr::Affine,
        launch: &Launch,
        threads: u32,
    ) -> Option<AffineCoordinate> {
        let t = [
            f.coef[SLOT_THREAD],
            f.coef[SLOT_THREAD + 1],
            f.coef[SLOT_THREAD + 2],
        ];
        let lanes: Vec<i64> = (0..threads)
            .map(|tid| {
                let c = thread_coords(tid, launch.block);
                (t.iter().zip(c)).try_fold(0i64, |v, (t, c)| v.checked_add(t.checked_mul(c)?))
            })
            .collect::<Option<_>>()?;
        let existing = launch.threads_per_block as usize;
        let extremes = lanes
            .chunks(WARP_SIZE)
            .enumerate()
            .map(|(w, warp)| {
                let warp = &warp[..existing.saturating_sub(WARP_SIZE * w).min(WARP_SIZE)];
                let lo = warp.iter().copied().min().unwrap_or(0);
                let hi = warp.iter().copied().max().unwrap_or(0);
                (lo, hi)
            })
            .collect();
        Some(AffineCoordinate {
            c0: f.c0,
            block_coef: [
                f.coef[SLOT_BLOCK],
                f.coef[SLOT_BLOCK + 1],
                f.coef[SLOT_BLOCK + 2],
            ],
            loop_coef: std::array::from_fn(|d| f.coef[SLOT_LOOP + d]),
            lanes,
            extremes,
        })
    }
}

impl CoordinateCheck {
    /// Whether a full warp is inside without looking at its lanes one by one (false for a
    /// coordinate that is not affine).
    #[inline]
    fn full_warp_inside(&self, warp: usize, b: [i64; 3], iterations: &[u32]) -> bool {
        self.fast
            .as_ref()
            .is_some_and(|f| f.warp_inside(self.extent, warp, b, iterations))
    }
}

/// What the coalesced lines of a full warp of an affine access depend on besides the warp's base
/// address: its lane table, its size and whether byte masks are kept (stores), and the coalescer
/// used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PatternClass {
    lane_table: usize,
    bytes: u32,
    with_bytes: bool,
    aligned: bool,
}

#[derive(Debug, Clone)]
struct FastIndex {
    c0: i64,
    block_coef: [i64; 3],
    loop_coef: [i64; MAX_LOOP_DEPTH],
    lane_table: usize,
    /// A part that reads no `threadIdx` and is not affine (an index that only splits so,
    /// [`crate::launch::Access::lane_split`]): worked out once per warp instruction.
    uniform: Option<Compiled>,
}

impl PreparedAccess {
    /// The first and the last byte address at which an access of this kind may start inside its
    /// array.
    #[inline]
    fn address_bounds(&self) -> (i64, i64) {
        let lo = self.base as i64;
        (lo, lo + self.limit as i64 - self.bytes as i64)
    }
}

impl FastIndex {
    /// Byte address of thread (0, 0, 0) of block `b` at loop iterations `iterations`; a lane's
    /// address adds its lane-table offset. `None` where the uniform part fails to evaluate
    /// (the lane-by-lane path then names the error).
    #[inline]
    fn warp_base(&self, a: &PreparedAccess, b: [i64; 3], iterations: &[u32]) -> Option<i64> {
        let uniform = match &self.uniform {
            None => 0,
            Some(u) => uniform_value(u, b, iterations)?,
        };
        Some(self.warp_base_with(a, b, iterations, uniform))
    }

    /// [`FastIndex::warp_base`], given the value of the uniform part (0 where there is none).
    #[inline]
    fn warp_base_with(
        &self,
        a: &PreparedAccess,
        b: [i64; 3],
        iterations: &[u32],
        uniform: i64,
    ) -> i64 {
        let idx = self.c0
            + self.block_coef[0] * b[0]
            + self.block_coef[1] * b[1]
            + self.block_coef[2] * b[2]
            + self
                .loop_coef
                .iter()
                .zip(iterations)
                .map(|(c, &k)| c * k as i64)
                .sum::<i64>();
        let idx = idx.wrapping_add(uniform);
        (a.base as i64).wrapping_add(a.elem.wrapping_mul(idx))
    }
}

/// The uniform part of one access's index as last worked out: the warps of a block issue an
/// access at the same loop iterations one after another, so most find it here.
#[derive(Debug, Clone, Copy)]
struct UniformMemo {
    block: u32,
    iterations: [u32; MAX_LOOP_DEPTH],
    value: Option<i64>,
}

/// The uniform part `u` of an index for block `b` at loop iterations `iterations`.
#[inline(never)]
fn uniform_value(u: &Compiled, b: [i64; 3], iterations: &[u32]) -> Option<i64> {
    let mut slots = [0i64; SLOTS];
    slots[SLOT_BLOCK..SLOT_BLOCK + 3].copy_from_slice(&b);
    for (d, &k) in iterations.iter().enumerate().take(MAX_LOOP_DEPTH) {
        slots[SLOT_LOOP + d] = k as i64;
    }
    u.eval(&slots).ok()
}

impl PreparedAccess {
    /// Whether the index is affine in the slots (no uniform part): blocks with the same
    /// [`block_key`] then issue it alike.
    fn has_affine_index(&self) -> bool {
        self.fast.as_ref().is_some_and(|f| f.uniform.is_none())
    }
}

/// Read-only facts shared by all SM workers of one launch.
#[derive(Debug)]
pub struct GenContext {
    accesses: Vec<PreparedAccess>,
    /// Whether a warp can issue two stores in a row ([`stores_may_merge`]).
    stores_may_merge: bool,
    /// Per distinct (threadIdx coefficient triple, element size): byte offset of each thread of
    /// the block.
    lane_tables: Vec<Vec<i64>>,
    /// Lanes of each warp of the block that exist (the last warp may be partial).
    full_masks: Vec<u32>,
    /// Per lane table and warp: the smallest and largest byte offset of the warp's lanes that
    /// exist, so one comparison each bounds-checks a full warp.
    lane_extremes: Vec<Vec<(i64, i64)>>,
    patterns: LinePatterns,
    grid: [u32; 3],
    block: [u32; 3],
    /// Where runs of the simple form find their instructions ([`Issued::expand`]).
    layout: Layout,
    /// The launch's arrays and accesses as bound, for errors.
    arrays: Vec<ArrayLayout>,
    shared_arrays: Vec<ArrayLayout>,
    steps: Vec<Access>,
    source_name: String,
}

/// Whether a warp of `launch` can issue two global stores to one line in a run, so that the
/// second may merge into the first on its way to the L2 (`SmWorker::store`): a store in a loop
/// (it may follow itself), or two stores of one array that are not `far_apart`. Most kernels
/// store once, or to lines far apart (a lattice-Boltzmann step's 19 stores, a plane apart), and
/// skip the bookkeeping.
pub fn stores_may_merge(launch: &Launch) -> bool {
    let stores: Vec<_> = (launch.program.flattened().into_iter())
        .filter(|a| a.kind == AccessKind::Store)
        .collect();
    if stores.iter().any(|a| a.depth > 0) {
        return true;
    }
    stores.iter().enumerate().any(|(i, a)| {
        (stores[i + 1..].iter()).any(|b| a.array == b.array && !far_apart(launch, a, b))
    })
}

/// Whether no warp's two stores `a` and `b` can write one line: both indices affine with the
/// same coefficients, so that `b`'s addresses are `a`'s moved by a constant, and that constant
/// larger than the spread of a block's addresses plus a line.
fn far_apart(launch: &Launch, a: &Access, b: &Access) -> bool {
    let (Some(fa), Some(fb)) = (a.index.as_affine(), b.index.as_affine()) else {
        return false;
    };
    if fa.coef != fb.coef {
        return false;
    }
    let element = i128::from(launch.array_of(a).element_bytes);
    let spread: i128 = (0..3)
        .map(|d| i128::from(fa.coef[SLOT_THREAD + d]).abs() * i128::from(launch.block[d] - 1))
        .sum::<i128>()
        * element
        + i128::from(a.bytes.max(b.bytes));
    let apart = (i128::from(fa.c0) - i128::from(fb.c0)).abs() * element;
    apart >= spread + i128::from(crate::metrics::LINE_BYTES)
}

impl GenContext {
    /// Prepares the launch's accesses: affine indices get per-lane offset tables and, with
    /// `line_patterns`, full warps of them their coalesced lines (`LinePatterns`).
    pub fn new(launch: &Launch, line_patterns: bool) -> GenContext {
        // A lane table holds byte offsets: one per (threadIdx coefficients, element size), as
        // two accesses with the same coefficients on arrays of other element sizes move their
        // lanes by other numbers of bytes.
        let mut triples: Vec<([i64; 3], i64)> = Vec::new();
        let mut lane_tables: Vec<Vec<i64>> = Vec::new();
        let threads = launch.occupancy.warps_per_block * WARP_SIZE as u32;
        let mut accesses = launch
            .program
            .flattened()
            .into_iter()
            .map(|a| {
                let arr = launch.array_of(a);
                let elem = arr.element_bytes as i64;
                let split = a.index.as_affine().map(|f| (f, None)).or_else(|| {
                    let (f, uniform) = a.lane_split.as_ref()?;
                    Some((f, Some(uniform.clone())))
                });
                let fast = split.map(|(f, uniform)| {
                    let t = [
                        f.coef[SLOT_THREAD],
                        f.coef[SLOT_THREAD + 1],
                        f.coef[SLOT_THREAD + 2],
                    ];
                    let lane_table = match triples.iter().position(|x| *x == (t, elem)) {
                        Some(i) => i,
                        None => {
                            triples.push((t, elem));
                            lane_tables.push(
                                (0..threads)
                                    .map(|tid| {
                                        let c = thread_coords(tid, launch.block);
                                        elem.wrapping_mul(t[0] * c[0] + t[1] * c[1] + t[2] * c[2])
                                    })
                                    .collect(),
                            );
                            triples.len() - 1
                        }
                    };
                    FastIndex {
                        c0: f.c0,
                        block_coef: [
                            f.coef[SLOT_BLOCK],
                            f.coef[SLOT_BLOCK + 1],
                            f.coef[SLOT_BLOCK + 2],
                        ],
                        loop_coef: std::array::from_fn(|d| f.coef[SLOT_LOOP + d]),
                        lane_table,
                        uniform,
                    }
                });
                let b = a.bytes as u64;
                let aligned = b.is_power_of_two()
                    && b <= 32
                    && (elem as u64).is_multiple_of(b)
                    && arr.base.is_multiple_of(b);
                let coordinates = a
                    .coordinates
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| !c.always_inside)
                    .map(|(dim, c)| CoordinateCheck {
                        dim,
                        extent: c.extent,
                        fast: c
                            .index
                            .as_affine()
                            .and_then(|f| AffineCoordinate::new(f, launch, threads)),
                        general: c.index.clone(),
                    })
                    .collect();
                PreparedAccess {
                    aligned,
                    bypass_l1: a.bypass_l1,
                    aggregated: a.aggregated,
                    float: a.float,
                    apart_from_previous_store: launch.store_parts_run(a),
                    full_warp_passes: None,
                    pattern_class: None,
                    coordinates,
                    kind: a.kind,
                    depth: a.depth,
                    bytes: a.bytes,
                    elem,
                    base: arr.base,
                    limit: arr.bytes(),
                    array: a.array,
                    fast,
                    general: a.index.clone(),
                }
            })
            .collect::<Vec<PreparedAccess>>();
        let warps = launch.occupancy.warps_per_block as usize;
        let full_masks: Vec<u32> = (0..warps)
            .map(|w| {
                let lanes = (launch.threads_per_block as usize - WARP_SIZE * w).min(WARP_SIZE);
                if lanes == WARP_SIZE {
                    u32::MAX
                } else {
                    (1u32 << lanes) - 1
                }
            })
            .collect();
        let lane_extremes: Vec<Vec<(i64, i64)>> = lane_tables
            .iter()
            .map(|table| {
                (0..warps)
                    .map(|w| {
                        let lanes = full_masks[w].count_ones() as usize;
                        let offsets = &table[WARP_SIZE * w..WARP_SIZE * w + lanes];
                        let lo = offsets.iter().copied().min().unwrap_or(0);
                        let hi = offsets.iter().copied().max().unwrap_or(0);
                        (lo, hi)
                    })
                    .collect()
            })
            .collect();
        let mut pattern_classes: Vec<PatternClass> = Vec::new();
        for a in &mut accesses {
            let Some(f) = &a.fast else { continue };
            if !a.kind.is_global() {
                // Never coalesced into lines; their wavefronts are the bank rule's, per warp
                // (one per warp for a shuffle).
                continue;
            }
            if a.elem % 4 != 0 || a.base % 4 != 0 {
                continue;
            }
            let table = &lane_tables[f.lane_table];
            let warp_addrs = |w: usize| {
                let mut addrs = [0u64; WARP_SIZE];
                for (l, x) in addrs.iter_mut().enumerate() {
                    // Far from zero so negative offsets stay positive; a multiple of 128 keeps
                    // the bank of every word.
                    *x = (1u64 << 40)
                        .wrapping_add_signed(table.get(WARP_SIZE * w + l).copied().unwrap_or(0));
                }
                addrs
            };
            // Lanes reaching over more than 4 lines cost what their offset in a line gives: no
            // table for them (data_stage::passes_ignore_word_offset).
            if !(0..warps).all(|w| {
                data_stage::passes_ignore_word_offset(&warp_addrs(w), full_masks[w], a.bytes)
            }) {
                continue;
            }
            if line_patterns && a.kind != AccessKind::Atomic {
                let class = PatternClass {
                    lane_table: f.lane_table,
                    bytes: a.bytes,
                    with_bytes: a.kind == AccessKind::Store,
                    aligned: a.aligned,
                };
                a.pattern_class = Some(match pattern_classes.iter().position(|c| *c == class) {
                    Some(i) => i,
                    None => {
                        pattern_classes.push(class);
                        pattern_classes.len() - 1
                    }
                });
            }
            a.full_warp_passes = Some(
                (0..warps)
                    .map(|w| {
                        data_stage::passes(&warp_addrs(w), full_masks[w], a.bytes).min(255) as u8
                    })
                    .collect(),
            );
        }
        let patterns = LinePatterns::new(&pattern_classes, &lane_tables, &full_masks);
        GenContext {
            stores_may_merge: stores_may_merge(launch),
            accesses,
            full_masks,
            lane_extremes,
            patterns,
            lane_tables,
            grid: launch.grid,
            layout: launch.program.layout(),
            block: launch.block,
            arrays: launch.arrays.clone(),
            shared_arrays: launch.shared_arrays.clone(),
            steps: launch.program.accesses.clone(),
            source_name: launch.source_name.clone(),
        }
    }

    /// Whether blocks of `launch` with the same block key issue alike ([`instruction_counts`]
    /// relies on it): a program of the simple form whose every index is affine.
    pub fn blocks_alike_by_key(&self, launch: &Launch) -> bool {
        launch.program.simple && self.accesses.iter().all(PreparedAccess::has_affine_index)
    }

    /// How the blocks of `launch` that are alike can be told, so that each kind's footprint is
    /// worked out once ([`SmWorker::footprints_by_block`]): by their block keys where
    /// [`GenContext::blocks_alike_by_key`] holds, else by their loads' fingerprints, which need
    /// an affine access to place each block's origin. `None` when neither applies.
    pub fn whole_block_keys(&self, launch: &Launch) -> Option<WholeBlockKeys> {
        if self.blocks_alike_by_key(launch) {
            return Some(WholeBlockKeys::BlockKey);
        }
        let reference = self
            .accesses
            .iter()
            .position(PreparedAccess::has_affine_index)?;
        Some(WholeBlockKeys::Fingerprint { reference })
    }

    /// The layout of the array `a` accesses: a shared one or a global one.
    fn array_of(&self, a: &PreparedAccess) -> &ArrayLayout {
        if a.kind.is_shared() {
            &self.shared_arrays[a.array]
        } else {
            &self.arrays[a.array]
        }
    }

    /// The thread of lane `lane` of `issue`, as errors name it.
    fn thread_name(&self, a: &PreparedAccess, issue: &Issue, lane: u32) -> String {
        let b = block_coords(issue.block as u64, self.grid);
        let t = thread_coords(issue.warp as u32 * WARP_SIZE as u32 + lane, self.block);
        thread_name(t, b, &issue.iterations[..a.depth])
    }

    /// The error for lane `lane` of `issue`, outside its array as `outside` says.
    #[cold]
    fn out_of_bounds(&self, issue: &Issue, lane: u32, outside: Outside) -> Error {
        let a = &self.accesses[issue.access as usize];
        let step = &self.steps[issue.access as usize];
        step.outside_error(
            &self.source_name,
            self.array_of(a),
            outside,
            &self.thread_name(a, issue, lane),
        )
    }

    /// The error for an index of `issue` (coordinate `dim` of a per-dimension one, else the
    /// whole) that cannot be evaluated for lane `lane`.
    #[cold]
    fn index_error(
        &self,
        issue: &Issue,
        lane: u32,
        dim: Option<usize>,
        e: crate::input::expr::EvalError,
    ) -> Error {
        let a = &self.accesses[issue.access as usize];
        let step = &self.steps[issue.access as usize];
        let text = match dim {
            Some(d) => &step.coordinates[d].text,
            None => &step.index_text,
        };
        let thread = self.thread_name(a, issue, lane);
        step.index_error(&self.source_name, self.array_of(a), text, &thread, e)
    }
}

/// Checks each coordinate of `a`'s per-dimension index that binding left unproved against its
/// dimension, for the active lanes of `issue`; the first lane outside is the error. A warp whose
/// every lane is inside by the extremes costs two comparisons a coordinate.
fn check_coordinates(
    cx: &GenContext,
    a: &PreparedAccess,
    issue: &Issue,
    b: [i64; 3],
    slots: &mut [i64; SLOTS],
) -> Result<()> {
    let warp = issue.warp as usize;
    for c in &a.coordinates {
        if let Some(f) = &c.fast
            && let Some(base) = f.warp_base(b, &issue.iterations)
        {
            if f.warp_inside(c.extent, warp, b, &issue.iterations) {
                continue;
            }
            let lanes = &f.lanes[WARP_SIZE * warp..WARP_SIZE * warp + WARP_SIZE];
            let mut m = issue.mask;
            let mut exact = true;
            while m != 0 {
                let lane = m.trailing_zeros();
                m &= m - 1;
                match base.checked_add(lanes[lane as usize]) {
                    Some(value) if (0..c.extent).contains(&value) => {}
                    Some(value) => {
                        return Err(cx.out_of_bounds(
                            issue,
                            lane,
                            Outside::Coordinate { dim: c.dim, value },
                        ));
                    }
                    // Overflow: the per-lane evaluation below says so exactly.
                    None => {
                        exact = false;
                        break;
                    }
                }
            }
            if exact {
                continue;
            }
        }
        slots[SLOT_BLOCK..SLOT_BLOCK + 3].copy_from_slice(&b);
        for (d, &k) in issue.iterations.iter().enumerate() {
            slots[SLOT_LOOP + d] = k as i64;
        }
        let mut m = issue.mask;
        while m != 0 {
            let lane = m.trailing_zeros();
            m &= m - 1;
            let t = thread_coords(issue.warp as u32 * WARP_SIZE as u32 + lane, cx.block);
            slots[SLOT_THREAD..SLOT_THREAD + 3].copy_from_slice(&t);
            let value = c
                .general
                .eval(slots)
                .map_err(|e| cx.index_error(issue, lane, Some(c.dim), e))?;
            if !(0..c.extent).contains(&value) {
                return Err(cx.out_of_bounds(
                    issue,
                    lane,
                    Outside::Coordinate { dim: c.dim, value },
                ));
            }
        }
    }
    Ok(())
}

/// Coalesced lines of full warps of affine accesses, worked out once per launch. A full warp's
/// addresses are its base plus fixed lane offsets, so its lines (relative to the base's line),
/// sectors and byte masks depend only on the base's offset within its 128-byte line: each
/// (class, warp, offset) is coalesced once, by the same coalescer as the general path, and an
/// instruction only shifts the result by its base's line.
#[derive(Debug)]
struct LinePatterns {
    /// Per (class, warp, base offset): `(start, len)` in `lines`.
    index: Vec<(u32, u32)>,
    /// Lines relative to the base's line (wrapping), in the coalescer's order.
    lines: Vec<LineRequest>,
    warps: usize,
}

/// Far from zero, and a multiple of 128, so the synthetic addresses of a pattern stay positive
/// and keep every lane's offset within its line.
const PATTERN_ORIGIN: i64 = 1 << 40;

impl LinePatterns {
    fn new(classes: &[PatternClass], lane_tables: &[Vec<i64>], full_masks: &[u32]) -> LinePatterns {
        let warps = full_masks.len();
        let mut coalescer = Coalescer::default();
        let mut index = Vec::with_capacity(classes.len() * warps * 128);
        let mut lines = Vec::new();
        let origin_line = (PATTERN_ORIGIN >> LINE_SHIFT) as u64;
        for c in classes {
            for (warp, &mask) in full_masks.iter().enumerate() {
                let table =
                    &lane_tables[c.lane_table][WARP_SIZE * warp..WARP_SIZE * warp + WARP_SIZE];
                for offset in 0..128 {
                    let mut addrs = [0u64; WARP_SIZE];
                    for (x, &t) in addrs.iter_mut().zip(table) {
                        *x = (PATTERN_ORIGIN + offset + t) as u64;
                    }
                    // Offsets the access's alignment never produces are never looked up; an
                    // unaligned one must not reach the aligned coalescer.
                    if c.aligned && offset % c.bytes as i64 != 0 {
                        index.push((0, 0));
                        continue;
                    }
                    if c.aligned {
                        coalescer.coalesce_aligned(&addrs, mask, c.bytes, c.with_bytes);
                    } else {
                        coalescer.coalesce(&addrs, mask, c.bytes, c.with_bytes);
                    }
                    let start = lines.len();
                    lines.extend(coalescer.lines.iter().map(|r| LineRequest {
                        line: r.line.wrapping_sub(origin_line),
                        ..*r
                    }));
                    index.push((start as u32, (lines.len() - start) as u32));
                }
            }
        }
        LinePatterns {
            index,
            lines,
            warps,
        }
    }

    /// The lines of full warp `warp` of an access of class `class` whose base is `warp_base`:
    /// the pattern's lines, each `line` to be moved by the returned shift (wrapping).
    #[inline]
    fn lines_of(&self, class: usize, warp: usize, warp_base: i64) -> (&[LineRequest], u64) {
        let key = (class * self.warps + warp) * 128 + warp_base.rem_euclid(128) as usize;
        let (start, len) = self.index[key];
        let base_line = (warp_base >> LINE_SHIFT) as u64;
        (
            &self.lines[start as usize..(start + len) as usize],
            base_line,
        )
    }
}

/// One SM: its L1 and its outgoing requests.
#[derive(Debug)]
pub struct SmWorker {
    l1: Cache,
    caches_loads: bool,
    coalescer: Coalescer,
    addrs: [u64; WARP_SIZE],
    /// Counters so far.
    pub counters: L1Counters,
    /// Requests to the L2 from the last chunk, in issue order, one list per L2 shard.
    pub out: Vec<RequestList>,
    router: L2Router,
    /// Distinct sectors loaded by each resident block so far (for the compulsory volume).
    footprints: Vec<BlockFootprint>,
    /// Index into `footprints` of the block of the last load.
    current: usize,
    track_compulsory: bool,
    /// Whether instructions reach the L1 and the L2; without, only what the addresses alone
    /// decide is counted ([`instruction_counts`]).
    traffic: bool,
    /// The lines and sectors the load at hand missed.
    misses: Vec<(u64, u8)>,
    /// With `--by-array`: the counters of each access of the trace (flattened order).
    pub by_access: Option<Vec<L1Counters>>,
    /// Set by [`SmWorker::footprints_by_block`]: blocks' footprints counted whole, at their end.
    whole_blocks: Option<Box<WholeBlockFootprints>>,
    /// Per access with a uniform part: its last value ([`SmWorker::uniform_part`]).
    uniform_memo: Vec<Option<UniformMemo>>,
    /// The atomic requests sent, by the L2 slice that applies them (where the config says how
    /// the slices take atomics).
    pub atomic_slices: Option<SliceTally>,
    /// Ticks after a miss within which a hit on the line counts as in flight
    /// (`l1.in_flight_hit_ticks`, [`data_stage::hit_in_flight`]).
    in_flight_hit_ticks: u32,
    /// The launch's tick at which the chunk being processed starts (issues carry ticks within
    /// their chunk; the in-flight window spans chunks).
    chunk_start: u64,
    /// Per warp (block, warp): the lines its run of stores has written, with the sectors and
    /// bytes so far, for the warp's next store to continue ([`SmWorker::store`]); empty where its
    /// last instruction was not a store. Kept across chunks; a block's warps leave when it
    /// finishes.
    last_stores: HashMap<(u32, u16), Vec<RunLine>, ahash::RandomState>,
}

/// A line a warp's run of stores has written: the line, its sectors and its bytes so far.
type RunLine = (u64, u8, u128);

/// The distinct load sectors and lines of whole blocks, for an SM whose blocks' footprints are
/// counted when each block finishes rather than probed load by load: a block's footprint depends
/// only on its own loads, and blocks with the same key have the same counts, so each key's block
/// is worked out once, by issuing its instructions through a counting worker, and shared by every
/// SM of the run. The key of a program of the simple form is its [`block_key`], known before the
/// block runs; that of any other program is its loads' [`LoadFingerprint`], summed as they issue.
#[derive(Debug)]
struct WholeBlockFootprints {
    counting: SmWorker,
    known: KnownFootprints,
    /// For programs walked by cursors: the loads of each resident block so far.
    fingerprints: Option<BlockFingerprints>,
}

/// (sectors, lines) by block key, shared by the SMs of one run, at most 65536 of them
/// (`KNOWN_BLOCK_KEYS`). Whichever SM works a key out first stores it; any other gets the same counts, so the
/// sharing cannot change a result.
pub type KnownFootprints =
    std::sync::Arc<std::sync::Mutex<HashMap<Vec<i64>, (u64, u64), ahash::RandomState>>>;

/// How blocks that are alike are told apart from the others ([`GenContext::whole_block_keys`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WholeBlockKeys {
    /// By the block's key (its warps' lanes and trips and its accesses' first addresses
    /// relative to one another), known before the block runs.
    BlockKey,
    /// By the fingerprint of the block's loads, with access `reference` placing its origin.
    Fingerprint {
        /// An access whose index is affine.
        reference: usize,
    },
}

/// The most block keys a run remembers footprints of: a launch whose blocks are mostly unlike
/// works the others out again, block by block, but its memory stays flat in the grid.
const KNOWN_BLOCK_KEYS: usize = 1 << 16;

/// What decides a block's footprint in a program walked by cursors, summed over its loads as they
/// issue: each load's lanes' addresses less the block's origin (a 128-byte-aligned address of the
/// block), as an access, a warp, a mask and the warp's base where the index is affine, else lane
/// by lane. Moving every address by whole lines moves every line alike, so two blocks with the
/// same multiset of these have the same distinct sectors and lines. The sum of a 64-bit hash of
/// each is a multiset hash; with the count of loads it is the key: blocks with equal fingerprints
/// are taken to be alike (two unlike blocks collide with a chance of about 2^-64).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct LoadFingerprint {
    block: u32,
    origin: i64,
    loads: u64,
    sum: u64,
}

impl LoadFingerprint {
    /// Adds one load's `what` (its access, warp and mask, or its access alone for one lane's
    /// address) at `rel` from the origin.
    #[inline]
    fn add(&mut self, what: u64, rel: i64) {
        self.sum = (self.sum).wrapping_add(fingerprint_mix(fingerprint_mix(what) ^ rel as u64));
    }

    fn key(&self) -> Vec<i64> {
        vec![self.loads as i64, self.sum as i64]
    }
}

/// A 64-bit finaliser (splitmix64's) for [`LoadFingerprint`].
#[inline]
fn fingerprint_mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The [`LoadFingerprint`]s of an SM's resident blocks.
#[derive(Debug)]
struct BlockFingerprints {
    /// The access whose base at loop iterations 0, rounded down to its line, is a block's origin.
    reference: usize,
    open: Vec<LoadFingerprint>,
    /// Index into `open` of the block of the last load.
    current: usize,
}

/// A hash of a warp instruction's misses (line and sectors of each, in order).
fn misses_hash(misses: &[(u64, u8)]) -> u32 {
    let mut h: u64 = 0x243F_6A88_85A3_08D3;
    for &(line, sectors) in misses {
        h = (h ^ (line << 4 | sectors as u64)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^= h >> 29;
    }
    (h >> 32) as u32
}

/// An empty L1 of `l1_bytes` as `hw` describes it. An `xor-matrix` L1 has a fixed tag array
/// (`2^masks` sets of `ways`, more ways where `l1_bytes` would not fit, as for a scaled L1) and
/// holds at most `l1_bytes` of it.
pub fn l1_cache(hw: &HwConfig, l1_bytes: u64) -> Cache {
    let l1 = &hw.l1;
    if l1.set_indexing != SetIndexing::XorMatrix {
        return Cache::new(Geometry::new(
            l1_bytes,
            l1.ways,
            l1.replacement,
            l1.set_indexing,
        ));
    }
    let matrix = XorIndex::new(&l1.set_index_masks, l1.set_index_hashed_from_bit);
    let lines = (l1_bytes >> LINE_SHIFT) as usize;
    let ways = (l1.ways as usize).max(lines.div_ceil(matrix.sets()));
    Cache::new(Geometry::xor_matrix(matrix, ways as u32, l1.replacement)).with_capacity_lines(lines)
}

impl SmWorker {
    /// A worker with an empty L1 of `l1_bytes` (`infinite` gives an L1 that never evicts) whose
    /// requests go to the L2 shards of `router`.
    pub fn new(
        hw: &HwConfig,
        l1_bytes: u64,
        infinite: bool,
        track_compulsory: bool,
        router: L2Router,
    ) -> SmWorker {
        let l1 = if infinite {
            Cache::infinite()
        } else {
            l1_cache(hw, l1_bytes)
        };
        SmWorker {
            l1,
            caches_loads: hw.l1.caches_global_loads,
            coalescer: Coalescer::default(),
            addrs: [0; WARP_SIZE],
            counters: L1Counters::default(),
            out: vec![RequestList::default(); router.shards],
            router,
            footprints: Vec::new(),
            current: 0,
            track_compulsory,
            traffic: true,
            misses: Vec::with_capacity(WARP_SIZE),
            by_access: None,
            whole_blocks: None,
            uniform_memo: Vec::new(),
            atomic_slices: hw.atomics.map(SliceTally::new),
            in_flight_hit_ticks: hw.l1.in_flight_hit_ticks,
            chunk_start: 0,
            last_stores: HashMap::default(),
        }
    }

    /// Counts each block's distinct load sectors and lines when the block finishes, from its
    /// own instructions worked out once per kind of block (`keys`, from
    /// [`GenContext::whole_block_keys`]) and shared through `known` by the SMs of the run,
    /// instead of probing a table at every load (the same counts). Only where every block that
    /// loads on the SM finishes there within the run (an exact simulation, not a sampled one),
    /// as a block's footprint is counted whole. Nothing changes without compulsory tracking.
    pub fn footprints_by_block(&mut self, keys: WholeBlockKeys, known: KnownFootprints) {
        if self.track_compulsory {
            self.track_compulsory = false;
            let fingerprints = match keys {
                WholeBlockKeys::BlockKey => None,
                WholeBlockKeys::Fingerprint { reference } => Some(BlockFingerprints {
                    reference,
                    open: Vec::new(),
                    current: 0,
                }),
            };
            self.whole_blocks = Some(Box::new(WholeBlockFootprints {
                counting: SmWorker::counting(true),
                known,
                fingerprints,
            }));
        }
    }

    /// A worker that only counts what the addresses alone decide: requests, sectors, data-stage
    /// passes and (with `track_compulsory`) each block's distinct load sectors and lines. No L1,
    /// nothing sent on.
    fn counting(track_compulsory: bool) -> SmWorker {
        SmWorker {
            l1: Cache::infinite(),
            caches_loads: false,
            coalescer: Coalescer::default(),
            addrs: [0; WARP_SIZE],
            counters: L1Counters::default(),
            out: Vec::new(),
            router: L2Router::unsharded(),
            footprints: Vec::new(),
            current: 0,
            track_compulsory,
            traffic: false,
            misses: Vec::new(),
            by_access: None,
            whole_blocks: None,
            uniform_memo: Vec::new(),
            atomic_slices: None,
            in_flight_hit_ticks: 1,
            chunk_start: 0,
            last_stores: HashMap::default(),
        }
    }

    /// Ends compulsory tracking of a block that finished on this SM.
    pub fn block_finished(&mut self, block: u32) {
        if let Some(f) = self.footprints.iter_mut().find(|f| f.block == block) {
            let (sectors, lines) = f.take();
            self.counters.block_unique_load_sectors += sectors;
            self.counters.block_unique_load_lines += lines;
        }
    }

    /// Folds the still-tracked blocks into the counters (at kernel end).
    pub fn finish(&mut self) {
        for f in &mut self.footprints {
            if f.block != u32::MAX {
                let (sectors, lines) = f.take();
                self.counters.block_unique_load_sectors += sectors;
                self.counters.block_unique_load_lines += lines;
            }
        }
    }

    /// The footprint table of `block`, taking a free one if it has none yet.
    #[inline]
    fn footprint(&mut self, block: u32) -> &mut BlockFootprint {
        if self
            .footprints
            .get(self.current)
            .is_none_or(|f| f.block != block)
        {
            self.current = match self.footprints.iter().position(|f| f.block == block) {
                Some(i) => i,
                None => match self.footprints.iter().position(|f| f.block == u32::MAX) {
                    Some(i) => i,
                    None => {
                        self.footprints.push(BlockFootprint::new());
                        self.footprints.len() - 1
                    }
                },
            };
            self.footprints[self.current].block = block;
        }
        &mut self.footprints[self.current]
    }

    /// Processes one chunk of issues of `launch`, which starts at the launch's tick
    /// `chunk_start`, replacing `out`; `finished_blocks` are the blocks whose last instruction is
    /// in this chunk.
    pub fn process(
        &mut self,
        cx: &GenContext,
        launch: &Launch,
        chunk_start: u64,
        issued: &[Issued],
        finished_blocks: &[u32],
    ) -> Result<()> {
        self.chunk_start = chunk_start;
        for o in &mut self.out {
            o.clear();
        }
        let mut slots = [0i64; SLOTS];
        let mut last_block = u32::MAX;
        let mut block_xyz = [0i64; 3];
        for run in issued {
            run.expand(&cx.layout, |issue| {
                if issue.block != last_block {
                    last_block = issue.block;
                    block_xyz = block_coords(issue.block as u64, cx.grid);
                }
                if self.by_access.is_some() {
                    self.issue_tallied(cx, issue, block_xyz, &mut slots)
                } else {
                    self.issue(cx, issue, block_xyz, &mut slots)
                }
            })?;
        }
        if !self.last_stores.is_empty() && !finished_blocks.is_empty() {
            self.last_stores
                .retain(|(b, _), _| !finished_blocks.contains(b));
        }
        match &mut self.whole_blocks {
            Some(whole) => {
                for &b in finished_blocks {
                    let (sectors, lines) = whole.finished(cx, launch, b)?;
                    self.counters.block_unique_load_sectors += sectors;
                    self.counters.block_unique_load_lines += lines;
                }
            }
            None => {
                for &b in finished_blocks {
                    self.block_finished(b);
                }
            }
        }
        Ok(())
    }

    /// The uniform part `u` of the index of `issue`'s access, for its block and iterations:
    /// remembered per access, as the block's other warps ask for the same one next.
    #[inline]
    fn uniform_part(&mut self, issue: &Issue, u: &Compiled, block_xyz: [i64; 3]) -> Option<i64> {
        let i = issue.access as usize;
        if self.uniform_memo.len() <= i {
            self.uniform_memo.resize(i + 1, None);
        }
        let memo = &mut self.uniform_memo[i];
        match memo {
            Some(m) if m.block == issue.block && m.iterations == issue.iterations => m.value,
            _ => {
                let value = uniform_value(u, block_xyz, &issue.iterations);
                *memo = Some(UniformMemo {
                    block: issue.block,
                    iterations: issue.iterations,
                    value,
                });
                value
            }
        }
    }

    /// [`SmWorker::issue`], adding what it counted to its access's counters (`--by-array`): an
    /// instruction is of one access, so every counter it changes is that access's.
    fn issue_tallied(
        &mut self,
        cx: &GenContext,
        issue: &Issue,
        block_xyz: [i64; 3],
        slots: &mut [i64; SLOTS],
    ) -> Result<()> {
        let before = self.counters;
        self.issue(cx, issue, block_xyz, slots)?;
        let delta = self.counters.minus(&before);
        if let Some(by_access) = &mut self.by_access {
            by_access[issue.access as usize].add(&delta);
        }
        Ok(())
    }

    /// Generates, coalesces and sends through the L1 one warp instruction.
    #[inline(always)]
    fn issue(
        &mut self,
        cx: &GenContext,
        issue: &Issue,
        block_xyz: [i64; 3],
        slots: &mut [i64; SLOTS],
    ) -> Result<()> {
        let a = &cx.accesses[issue.access as usize];
        let merge_key = (cx.stores_may_merge && self.traffic).then_some((issue.block, issue.warp));
        if let Some(key) = merge_key
            && (a.kind != AccessKind::Store || issue.mask == 0 || a.apart_from_previous_store)
        {
            // any other memory instruction between two stores of a warp keeps them apart, as do
            // a barrier and more than a few instructions of other work (the run is emptied, not
            // removed: its warp keeps the allocation until its block finishes)
            if let Some(run) = self.last_stores.get_mut(&key) {
                run.clear();
            }
        }
        if issue.mask == 0 {
            // Predicated off in every lane: no address, no request, one data-pipe wavefront;
            // a shared one still counts as an executed instruction, as the GPU counts it.
            self.counters.predicated_off += 1;
            match a.kind {
                AccessKind::SharedLoad => self.counters.shared_load_requests += 1,
                AccessKind::SharedStore => self.counters.shared_store_requests += 1,
                _ => {}
            }
            return Ok(());
        }
        if a.kind == AccessKind::Shuffle {
            // No address: one data-pipe wavefront for the warp, however many lanes take part.
            self.counters.shuffles += 1;
            return Ok(());
        }
        // Worked out once for the pattern, the lanes and the fingerprint: with a uniform part
        // it is an evaluation of an expression.
        let warp_base = match a.fast.as_ref() {
            None => None,
            Some(f) => {
                let uniform = match &f.uniform {
                    None => Some(0),
                    Some(u) => self.uniform_part(issue, u, block_xyz),
                };
                uniform.map(|v| f.warp_base_with(a, block_xyz, &issue.iterations, v))
            }
        };
        if a.kind.is_shared() {
            // Shared memory: the bank rule decides the data-pipe wavefronts; nothing reaches
            // the L1's tags, the L2 or DRAM.
            self.addresses(cx, a, issue, block_xyz, warp_base, slots)?;
            let is_store = a.kind == AccessKind::SharedStore;
            let cost = data_stage::shared_wavefronts(&self.addrs, issue.mask, a.bytes, is_store);
            let c = &mut self.counters;
            if is_store {
                c.shared_store_requests += 1;
                c.shared_store_wavefronts += cost.wavefronts;
                c.shared_store_bank_conflicts += cost.conflicts;
                c.shared_store_bytes += u64::from(issue.mask.count_ones()) * u64::from(a.bytes);
            } else {
                c.shared_load_requests += 1;
                c.shared_load_wavefronts += cost.wavefronts;
                c.shared_load_bank_conflicts += cost.conflicts;
            }
            return Ok(());
        }
        // The warp's lines: a full warp's straight from the launch's line patterns (each line
        // `shift` past the pattern's), others coalesced here, lane by lane.
        let pattern = self.full_warp_lines(cx, a, issue, block_xyz, warp_base);
        if pattern.is_none() {
            self.addresses(cx, a, issue, block_xyz, warp_base, slots)?;
            let is_store = a.kind == AccessKind::Store;
            if a.kind == AccessKind::Atomic {
                let mask = if a.aggregated {
                    first_lane_per_address(&self.addrs, issue.mask)
                } else {
                    issue.mask
                };
                self.coalescer.atomic(&self.addrs, mask, a.bytes);
                self.counters.data_passes += data_stage::atomic_passes(&self.addrs, mask, a.bytes);
                self.atomic(issue.tick, a.bytes, a.float);
                return Ok(());
            }
            if a.aligned {
                self.coalescer
                    .coalesce_aligned(&self.addrs, issue.mask, a.bytes, is_store);
            } else {
                self.coalescer
                    .coalesce(&self.addrs, issue.mask, a.bytes, is_store);
            }
        }
        self.counters.data_passes += match &a.full_warp_passes {
            Some(p) if issue.mask == cx.full_masks[issue.warp as usize] => {
                p[issue.warp as usize] as u64
            }
            _ => data_stage::passes(&self.addrs, issue.mask, a.bytes),
        };
        let coalesced = std::mem::take(&mut self.coalescer.lines);
        let (lines, shift) = pattern.unwrap_or((&coalesced, 0));
        match a.kind {
            AccessKind::Load => {
                if let Some(f) = self
                    .whole_blocks
                    .as_mut()
                    .and_then(|w| w.fingerprints.as_mut())
                {
                    f.note_load(cx, issue, block_xyz, warp_base, &self.addrs);
                }
                self.load(lines, shift, issue.tick, issue.block, a.bypass_l1)
            }
            AccessKind::Store => self.store(lines, shift, issue.tick, merge_key),
            AccessKind::Atomic
            | AccessKind::SharedLoad
            | AccessKind::SharedStore
            | AccessKind::Shuffle => {
                unreachable!("atomics, shared accesses and shuffles are handled above")
            }
        }
        self.coalescer.lines = coalesced;
        Ok(())
    }

    /// The lines of `issue` from the launch's line patterns when it is a full warp of an access
    /// that has them and all its lanes are in bounds: the pattern's lines, and what to add to
    /// each one's line ([`LinePatterns::lines_of`]). `None` otherwise: the caller then goes lane
    /// by lane (which also reports a lane out of bounds). `warp_base` is the access's
    /// [`FastIndex::warp_base`].
    #[inline]
    fn full_warp_lines<'c>(
        &mut self,
        cx: &'c GenContext,
        a: &PreparedAccess,
        issue: &Issue,
        b: [i64; 3],
        warp_base: Option<i64>,
    ) -> Option<(&'c [LineRequest], u64)> {
        let (Some(class), Some(f), Some(warp_base)) = (a.pattern_class, &a.fast, warp_base) else {
            return None;
        };
        // The caller counts the warp's data-stage passes from this table, not its addresses.
        debug_assert!(a.full_warp_passes.is_some());
        let warp = issue.warp as usize;
        if issue.mask != cx.full_masks[warp] {
            return None;
        }
        let (lo_offset, hi_offset) = cx.lane_extremes[f.lane_table][warp];
        let (lo, hi) = a.address_bounds();
        let inside = warp_base.checked_add(lo_offset).is_some_and(|x| x >= lo)
            && warp_base.checked_add(hi_offset).is_some_and(|x| x <= hi)
            && a.coordinates
                .iter()
                .all(|c| c.full_warp_inside(warp, b, &issue.iterations));
        inside.then(|| cx.patterns.lines_of(class, warp, warp_base))
    }

    /// The lanes' addresses of `issue` into `addrs`, from the access's `warp_base`
    /// ([`FastIndex::warp_base`]) where it has one, else lane by lane.
    #[inline]
    fn addresses(
        &mut self,
        cx: &GenContext,
        a: &PreparedAccess,
        issue: &Issue,
        b: [i64; 3],
        warp_base: Option<i64>,
        slots: &mut [i64; SLOTS],
    ) -> Result<()> {
        if !a.coordinates.is_empty() {
            check_coordinates(cx, a, issue, b, slots)?;
        }
        let mut bad = None;
        match a.fast.as_ref().zip(warp_base) {
            Some((f, warp_base)) => {
                let first = issue.warp as usize * WARP_SIZE;
                let table = &cx.lane_tables[f.lane_table][first..first + WARP_SIZE];
                let (lo, hi) = a.address_bounds();
                let mut m = issue.mask;
                while m != 0 {
                    let lane = m.trailing_zeros();
                    m &= m - 1;
                    let addr = warp_base.wrapping_add(table[lane as usize]);
                    if addr < lo || addr > hi {
                        bad = Some((lane, addr - lo));
                        break;
                    }
                    self.addrs[lane as usize] = addr as u64;
                }
            }
            None => {
                slots[SLOT_BLOCK..SLOT_BLOCK + 3].copy_from_slice(&b);
                for (d, &k) in issue.iterations.iter().enumerate() {
                    slots[SLOT_LOOP + d] = k as i64;
                }
                let mut m = issue.mask;
                while m != 0 {
                    let lane = m.trailing_zeros();
                    m &= m - 1;
                    let t = thread_coords(issue.warp as u32 * WARP_SIZE as u32 + lane, cx.block);
                    slots[SLOT_THREAD..SLOT_THREAD + 3].copy_from_slice(&t);
                    let idx = a
                        .general
                        .eval(slots)
                        .map_err(|e| cx.index_error(issue, lane, None, e))?;
                    let offset = idx.checked_mul(a.elem).unwrap_or(i64::MIN);
                    if offset < 0 || offset > a.limit as i64 - a.bytes as i64 {
                        bad = Some((lane, offset));
                        break;
                    }
                    self.addrs[lane as usize] = a.base + offset as u64;
                }
            }
        }
        match bad {
            Some((lane, offset)) => Err(cx.out_of_bounds(issue, lane, Outside::Offset(offset))),
            None => Ok(()),
        }
    }

    /// A load of `lines` (each line `shift` past its `line`, wrapping).
    #[inline]
    fn load(&mut self, lines: &[LineRequest], shift: u64, tick: u32, block: u32, bypass_l1: bool) {
        self.counters.load_requests += 1;
        if self.track_compulsory {
            let f = self.footprint(block);
            for r in lines {
                f.insert(r.line.wrapping_add(shift), r.sectors);
            }
        }
        let c = &mut self.counters;
        if !self.traffic {
            c.load_sectors += (lines.iter())
                .map(|r| r.sectors.count_ones() as u64)
                .sum::<u64>();
            return;
        }
        self.misses.clear();
        for r in lines {
            let (line, sectors) = (r.line.wrapping_add(shift), r.sectors);
            c.load_sectors += sectors.count_ones() as u64;
            let missing = if !self.caches_loads || bypass_l1 {
                // Never looked up nor allocated: every sector goes to the L2.
                sectors
            } else {
                // A line that was absent comes in empty: all its sectors miss. The L1 is
                // write-through, so what it evicts is clean and simply dropped.
                let (st, _, _) = self.l1.access_or_insert(line);
                let missing = sectors & !st.valid;
                st.valid |= sectors;
                let tick = self.chunk_start + u64::from(tick);
                if data_stage::hit_in_flight(st, missing, tick, self.in_flight_hit_ticks) {
                    c.load_in_flight_lines += 1;
                }
                missing
            };
            if missing != 0 {
                if missing != sectors {
                    c.load_partial_lines += 1;
                }
                c.load_miss_sectors += missing.count_ones() as u64;
                self.misses.push((line, missing));
            }
        }
        if !self.misses.is_empty() {
            c.load_miss_request_lines += lines.len() as u64;
            // The L2 coalescer matches reads of whole instructions: their lines, how many, and
            // a hash of what they missed.
            let lines = lines.len().min(u8::MAX as usize) as u8;
            let hash = misses_hash(&self.misses);
            for &(line, missing) in &self.misses {
                self.out[self.router.shard(line)].push_read(tick, line, missing, lines, hash);
            }
        }
    }

    /// Atomics bypass the L1: each request of [`Coalescer::atomic`] goes to the L2.
    #[inline]
    fn atomic(&mut self, tick: u32, bytes: u32, float: bool) {
        let c = &mut self.counters;
        c.atomic_requests += 1;
        for r in &self.coalescer.lines {
            c.atomic_sectors += r.sectors.count_ones() as u64;
            if !self.traffic {
                continue;
            }
            if let Some(t) = &mut self.atomic_slices {
                t.add(r.line, r.sectors.count_ones(), bytes, float);
            }
            self.out[self.router.shard(r.line)].push(tick, L2Op::Atomic, r.line, r.sectors);
        }
    }

    /// A store of `lines` (each line `shift` past its `line`, wrapping) by the warp `merge_key`
    /// names, where its stores may merge.
    #[inline]
    fn store(
        &mut self,
        lines: &[LineRequest],
        shift: u64,
        tick: u32,
        merge_key: Option<(u32, u16)>,
    ) {
        // Write-through: every store goes to L2. A present line is updated in place (its valid
        // sectors stay valid); a store never allocates.
        let c = &mut self.counters;
        c.store_requests += 1;
        for r in lines {
            c.store_sectors += r.sectors.count_ones() as u64;
            let partial = (r.sectors & !r.full_sectors()).count_ones();
            c.store_partial_sectors += u64::from(partial);
            c.store_partial_lines += u64::from(partial > 0);
        }
        if !self.traffic {
            return;
        }
        let Some(key) = merge_key else {
            for r in lines {
                let line = r.line.wrapping_add(shift);
                self.out[self.router.shard(line)].push_store(tick, line, r.sectors, r.bytes);
            }
            return;
        };
        // A warp's store right after its store to the same line reaches the L2 in that one's
        // write: the three 4-byte stores of an array of 12-byte structs arrive as the whole
        // sectors they fill together (tests/data/h100/everyday/, aos_update: L2 write sectors a
        // third of the L1's store sectors). Each store still writes its bytes at its own tick;
        // the sectors the run has already sent are not counted again, and a sector the run
        // completes counts as written whole.
        let partial = |sectors: u8, bytes: u128| (sectors & !full_sectors(bytes)).count_ones();
        let run = self.last_stores.entry(key).or_default();
        for r in lines {
            let line = r.line.wrapping_add(shift);
            let out = &mut self.out[self.router.shard(line)];
            let at = run.iter().position(|e| e.0 == line);
            let (sent, written) = at.map_or((0, 0), |i| (run[i].1, run[i].2));
            out.push_store_continuing(tick, line, r.sectors, r.bytes, sent);
            let (sectors, bytes) = (sent | r.sectors, written | r.bytes);
            let (new, before, after) = (
                partial(r.sectors, r.bytes),
                partial(sent, written),
                partial(sectors, bytes),
            );
            self.counters.store_partial_sectors_merged += u64::from(new + before - after);
            // as a line: the run's request and this one become one, partly written or not
            self.counters.store_partial_lines_merged +=
                u64::from(new > 0) + u64::from(before > 0) - u64::from(after > 0);
            match at {
                Some(i) => run[i] = (line, sectors, bytes),
                None => run.push((line, sectors, bytes)),
            }
        }
    }
}

/// The lanes of `mask` that are the first active lane on their address: a warp-aggregated
/// atomic's updates ([`crate::launch::Access::aggregated`]).
pub fn first_lane_per_address(addrs: &[u64; WARP_SIZE], mask: u32) -> u32 {
    let mut kept = 0u32;
    let mut rest = mask;
    while rest != 0 {
        let l = rest.trailing_zeros() as usize;
        rest &= rest - 1;
        let mut earlier = kept;
        let mut seen = false;
        while earlier != 0 {
            let e = earlier.trailing_zeros() as usize;
            earlier &= earlier - 1;
            if addrs[e] == addrs[l] {
                seen = true;
                break;
            }
        }
        if !seen {
            kept |= 1 << l;
        }
    }
    kept
}

/// What the warp instructions of a launch of the simple form send to the L1, whatever the
/// schedule and the caches: every warp's every instruction generated and coalesced as the per-SM
/// stage does, and only its requests, sectors, data-stage passes and (with `track_compulsory`)
/// its block's distinct load sectors and lines counted. The L1's hit-and-miss counters stay
/// zero. `None` for programs of another form (their warps are walked by cursors). A sampled
/// simulation takes these counts from here instead of estimating them.
///
/// A block's counts depend only on its warps' lanes and trips and on where its accesses start
/// relative to one another and to a 128-byte line (moving every address by whole lines moves
/// every line alike and keeps every bank), so where every index is affine, blocks with the same
/// key (`block_key`) are worked out once: the interior blocks of a stencil are one block. Such
/// blocks are not bounds-checked again (a simulation checks what it simulates in detail).
pub fn instruction_counts(
    launch: &Launch,
    cx: &GenContext,
    track_compulsory: bool,
) -> Result<Option<L1Counters>> {
    use rayon::prelude::*;
    if !launch.program.simple {
        return Ok(None);
    }
    let affine = cx.accesses.iter().all(PreparedAccess::has_affine_index);
    // Blocks in a few chunks per thread, each with its own worker and its own blocks worked out
    // (a worker is too large to move from block to block as a fold's state); the counts are sums,
    // the same however the blocks are cut. Each chunk stops at its first error and the chunks are
    // read in order, so the error reported is the first in block order on any thread count.
    let chunk = launch
        .total_blocks
        .div_ceil(4 * rayon::current_num_threads() as u64)
        .max(1);
    let chunks = launch.total_blocks.div_ceil(chunk);
    let sums: Vec<Result<L1Counters>> = (0..chunks)
        .into_par_iter()
        .map(|c| {
            let mut w = SmWorker::counting(track_compulsory);
            let mut known: HashMap<Vec<i64>, L1Counters, ahash::RandomState> = HashMap::default();
            // The block before's key and counts: neighbours mostly share their key, and
            // comparing keys costs less than hashing one.
            let (mut key, mut last_key) = (Vec::new(), Vec::new());
            let mut last_counts = None;
            let mut block_warps = BlockWarps::default();
            let blocks = c * chunk..((c + 1) * chunk).min(launch.total_blocks);
            for b in blocks {
                let block_xyz = block_coords(b, cx.grid);
                let warps = block_warps.of(launch, b)?;
                if affine {
                    block_key_into(cx, warps, block_xyz, &mut key);
                    if let Some(counts) = last_counts.filter(|_| key == last_key) {
                        w.counters.add(&counts);
                        continue;
                    }
                    if let Some(counts) = known.get(key.as_slice()) {
                        w.counters.add(counts);
                        last_counts = Some(*counts);
                        std::mem::swap(&mut key, &mut last_key);
                        continue;
                    }
                }
                let before = w.counters;
                w.issue_block(cx, warps, b as u32, block_xyz)?;
                if affine {
                    let counts = w.counters.minus(&before);
                    known.insert(key.clone(), counts);
                    last_counts = Some(counts);
                    std::mem::swap(&mut key, &mut last_key);
                }
            }
            Ok(w.counters)
        })
        .collect();
    let mut counters = L1Counters::default();
    for c in sums {
        counters.add(&c?);
    }
    Ok(Some(counters))
}

impl SmWorker {
    /// Issues every instruction of block `b` (at `block_xyz`, of warps `warps`) of a program of
    /// the simple form, masked as the scheduler masks them, and ends the block.
    fn issue_block(
        &mut self,
        cx: &GenContext,
        warps: &[WarpInfo],
        b: u32,
        block_xyz: [i64; 3],
    ) -> Result<()> {
        let (pre, body) = (cx.layout.pre, cx.layout.body);
        let mut slots = [0i64; SLOTS];
        for (warp, info) in warps.iter().enumerate() {
            let trips = info.trips as u64;
            for i in 0..info.instructions {
                let (access, iteration) = cx.layout.decode(i, trips);
                // As the scheduler masks them: lanes leave the loop at their own trips.
                let in_loop = i >= pre && i < pre + body * trips;
                let mut iterations = [0; MAX_LOOP_DEPTH];
                iterations[0] = iteration as u32;
                let issue = Issue {
                    tick: 0,
                    block: b,
                    iterations,
                    mask: if in_loop {
                        info.loop_mask(iteration as u32)
                    } else {
                        info.mask
                    },
                    warp: warp as u16,
                    access: access as u16,
                };
                self.issue(cx, &issue, block_xyz, &mut slots)?;
            }
        }
        self.block_finished(b);
        Ok(())
    }

    /// Issues every load of block `b` (at `block_xyz`, of warps `warps`) of `launch`, a program
    /// walked by cursors, as the scheduler's cursors walk them, and ends the block: what the
    /// block's footprint needs, the other instructions left out.
    fn issue_block_loads_by_cursor(
        &mut self,
        cx: &GenContext,
        launch: &Launch,
        warps: &[WarpInfo],
        b: u32,
        block_xyz: [i64; 3],
    ) -> Result<()> {
        let mut slots = [0i64; SLOTS];
        for (warp, info) in warps.iter().enumerate() {
            if info.mask == 0 {
                continue;
            }
            let mut cursor =
                crate::launch::control::WarpCursor::new(launch, b as u64, warp as u32, info.mask);
            while let Some(step) = cursor.next()? {
                if cx.accesses[step.access].kind != AccessKind::Load || step.mask == 0 {
                    continue;
                }
                let issue = Issue {
                    tick: 0,
                    block: b,
                    iterations: step.iterations,
                    mask: step.mask,
                    warp: warp as u16,
                    access: step.access as u16,
                };
                self.issue(cx, &issue, block_xyz, &mut slots)?;
            }
        }
        self.block_finished(b);
        Ok(())
    }
}

impl WholeBlockFootprints {
    /// The distinct load sectors and lines of block `b` of `launch`, which has just finished.
    fn finished(&mut self, cx: &GenContext, launch: &Launch, b: u32) -> Result<(u64, u64)> {
        let block_xyz = block_coords(b as u64, cx.grid);
        let mut warps = None;
        let key = match &mut self.fingerprints {
            None => block_key(cx, warps.insert(block_warps(launch, b as u64)?), block_xyz),
            Some(f) => f.take(b).key(),
        };
        let known = self
            .known
            .lock()
            .expect("no SM panics holding the footprints");
        if let Some(&counts) = known.get(&key) {
            return Ok(counts);
        }
        drop(known);
        let warps = match warps {
            Some(w) => w,
            None => block_warps(launch, b as u64)?,
        };
        let before = self.counting.counters;
        if launch.program.simple {
            self.counting.issue_block(cx, &warps, b, block_xyz)?;
        } else {
            self.counting
                .issue_block_loads_by_cursor(cx, launch, &warps, b, block_xyz)?;
        }
        let after = self.counting.counters;
        let counts = (
            after.block_unique_load_sectors - before.block_unique_load_sectors,
            after.block_unique_load_lines - before.block_unique_load_lines,
        );
        let mut known = self
            .known
            .lock()
            .expect("no SM panics holding the footprints");
        if known.len() < KNOWN_BLOCK_KEYS {
            known.insert(key, counts);
        }
        Ok(counts)
    }
}

impl BlockFingerprints {
    /// Adds a load of `issue` to its block's fingerprint: by its `warp_base` where it has one
    /// ([`FastIndex::warp_base`]), else by its lanes' addresses in `addrs`.
    #[inline]
    fn note_load(
        &mut self,
        cx: &GenContext,
        issue: &Issue,
        block_xyz: [i64; 3],
        warp_base: Option<i64>,
        addrs: &[u64; WARP_SIZE],
    ) {
        let f = self.open_for(cx, issue.block, block_xyz);
        f.loads += 1;
        let origin = f.origin;
        match warp_base {
            Some(warp_base) => {
                let rel = warp_base.wrapping_sub(origin);
                let what = (issue.access as u64) << 48 | (issue.warp as u64) << 32;
                f.add(what | issue.mask as u64, rel);
            }
            None => {
                // Bit 47 is above any warp's (a block has at most 32).
                let what = 1 << 47 | (issue.access as u64) << 48;
                let mut m = issue.mask;
                while m != 0 {
                    let lane = m.trailing_zeros() as usize;
                    m &= m - 1;
                    f.add(what, (addrs[lane] as i64).wrapping_sub(origin));
                }
            }
        }
    }

    /// The open fingerprint of `block`, starting one if it has none yet.
    #[inline]
    fn open_for(
        &mut self,
        cx: &GenContext,
        block: u32,
        block_xyz: [i64; 3],
    ) -> &mut LoadFingerprint {
        if self.open.get(self.current).is_none_or(|f| f.block != block) {
            self.current = match self.open.iter().position(|f| f.block == block) {
                Some(i) => i,
                None => {
                    let a = &cx.accesses[self.reference];
                    let fast = a.fast.as_ref().expect("the reference access is affine");
                    let base = fast
                        .warp_base(a, block_xyz, &[0; MAX_LOOP_DEPTH])
                        .expect("an affine index has no part that can fail");
                    let started = LoadFingerprint {
                        block,
                        origin: base.div_euclid(128) * 128,
                        ..LoadFingerprint::default()
                    };
                    match self.open.iter().position(|f| f.block == u32::MAX) {
                        Some(i) => {
                            self.open[i] = started;
                            i
                        }
                        None => {
                            self.open.push(started);
                            self.open.len() - 1
                        }
                    }
                }
            };
        }
        &mut self.open[self.current]
    }

    /// The finished fingerprint of `block` (that of a block without loads if it had none),
    /// freeing its place.
    fn take(&mut self, block: u32) -> LoadFingerprint {
        match self.open.iter_mut().find(|f| f.block == block) {
            Some(f) => {
                let done = *f;
                f.block = u32::MAX;
                done
            }
            None => LoadFingerprint::default(),
        }
    }
}

/// What a block's counts in [`instruction_counts`] depend on, where every index is affine: each
/// warp's lanes and trips, and each access's first address (loop iterations 0) less the first
/// access's, rounded down to its line, with that line's offset kept.
fn block_key(cx: &GenContext, warps: &[WarpInfo], block_xyz: [i64; 3]) -> Vec<i64> {
    let mut key = Vec::with_capacity(warps.len() * 2 + cx.accesses.len());
    block_key_into(cx, warps, block_xyz, &mut key);
    key
}

/// [`block_key`] written into `key` (cleared first), so that a loop over many blocks reuses one
/// buffer.
fn block_key_into(cx: &GenContext, warps: &[WarpInfo], block_xyz: [i64; 3], key: &mut Vec<i64>) {
    key.clear();
    for w in warps {
        key.push(w.mask as i64);
        key.push(w.trips as i64);
        if let Some(t) = &w.lane_trips {
            key.extend(t.iter().map(|&n| n as i64));
            key.push(-1);
        }
    }
    let zero = [0; MAX_LOOP_DEPTH];
    let bases = cx
        .accesses
        .iter()
        .filter_map(|a| a.fast.as_ref()?.warp_base(a, block_xyz, &zero));
    let mut origin = None;
    for base in bases {
        let o = *origin.get_or_insert(base.div_euclid(128) * 128);
        key.push(base.wrapping_sub(o));
    }
}
