//! The geometry of a launch's threads: which block shapes CUDA can launch ([`check_block`], the
//! one place the limits are checked, and the named sets of shapes, [`expand_blocks`]), block and thread coordinates of linear ids, and what each
//! warp of a block will execute (the lanes its guard lets through, its loop trips). The scheduler
//! dispatches these warps; the models read the same facts for one representative block.

use super::{Launch, Predicate, SLOT_BLOCK, SLOT_LOOP, SLOT_THREAD, SLOTS};
use crate::error::{Error, Position, Result};
use crate::input::expr::{Affine, BinaryOp};
use crate::input::hw::HwConfig;

/// Most loop trips a lane may take before the launch is rejected (a runaway count is bad input).
pub const MAX_TRIPS: i64 = 1 << 24;

/// CUDA's limits on blockDim.x, .y and .z (every compute capability since 2.0); the threads of a
/// block are limited by the GPU ([`crate::input::hw::SmConfig::max_threads_per_block`], 1024 on
/// all of them).
pub const MAX_BLOCK: [u32; 3] = [1024, 1024, 64];
/// CUDA's limit on blockDim.z.
pub const MAX_BLOCK_Z: u32 = MAX_BLOCK[2];

/// The limit a block shape breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockLimit {
    /// Side `dim` (0 = x) is 0 or negative.
    NotPositive(usize),
    /// Side `dim` is above [`max_side`].
    Side(usize),
    /// The block has this many threads, more than allowed.
    Threads(u64),
}

/// The largest side `dim` of a block may have when a block may have `max_threads` threads.
pub fn max_side(dim: usize, max_threads: u64) -> u64 {
    (MAX_BLOCK[dim] as u64).min(max_threads)
}

/// Checks a block shape against CUDA's limits and at most `max_threads` threads per block (a
/// GPU's limit; `u64::MAX` where no GPU is known yet, leaving only the sides' limits): x, y, z in
/// that order, each positive and at most [`max_side`], then the thread count. Returns the shape.
pub fn check_block(block: [i64; 3], max_threads: u64) -> std::result::Result<[u32; 3], BlockLimit> {
    for (dim, &side) in block.iter().enumerate() {
        if side <= 0 {
            return Err(BlockLimit::NotPositive(dim));
        }
        if side as u64 > max_side(dim, max_threads) {
            return Err(BlockLimit::Side(dim));
        }
    }
    let threads = block.iter().map(|&b| b as u64).product::<u64>();
    if threads > max_threads {
        return Err(BlockLimit::Threads(threads));
    }
    Ok(block.map(|b| b as u32))
}

/// Expands block entries: `AxBxC`, `all-N` (every power-of-two shape with N threads),
/// `ernst-1024` / `ernst-512` (Ernst et al. eq. (6): X, Y ∈ {1, …, 1024}, Z ∈ {1, …, 64},
/// X·Y·Z = 1024 for the stencil, 512 for LBM — the same shapes as `all-1024` / `all-512`),
/// `tabik-2d` (Tabik et al. Sect. 4.1: Blk.x, Blk.y powers of two, Blk.z = 1, from a warp to the
/// block-size limit). Each shape comes with whether it came from a named set (those that cannot
/// launch are skipped rather than fatal).
pub fn expand_blocks(entries: &[String], hw: &HwConfig) -> Result<Vec<([u32; 3], bool)>> {
    let max = hw.sm.max_threads_per_block;
    let mut out: Vec<([u32; 3], bool)> = Vec::new();
    let mut push = |b: [u32; 3], named: bool| {
        if !out.iter().any(|(o, _)| *o == b) {
            out.push((b, named));
        }
    };
    for entry in entries.iter().flat_map(|e| e.split(',')) {
        let e = entry.trim();
        let threads = match e {
            "ernst-1024" => Some(1024),
            "ernst-512" => Some(512),
            _ => e
                .strip_prefix("all-")
                .map(|n| {
                    n.parse::<u32>()
                        .ok()
                        .filter(|n| n.is_power_of_two() && *n <= max)
                        .ok_or_else(|| {
                            Error::new(
                                "--blocks",
                                format!("'{e}': N must be a power of two up to {max} threads"),
                            )
                        })
                })
                .transpose()?,
        };
        if let Some(n) = threads {
            for z in powers_of_two(MAX_BLOCK_Z.min(n)) {
                for y in powers_of_two(n / z) {
                    push([n / z / y, y, z], true);
                }
            }
        } else if e == "tabik-2d" {
            for y in powers_of_two(max) {
                for x in powers_of_two(max / y) {
                    if x * y >= hw.sm.warp_size {
                        push([x, y, 1], true);
                    }
                }
            }
        } else {
            let d = super::parse_dims("--blocks", e)?;
            match check_block(d, max as u64) {
                Ok(b) => push(b, false),
                // Too many threads in all: reported when the shape is bound (`Launch::new`), as
                // for `simulate --block`.
                Err(BlockLimit::Threads(_)) => push(d.map(|v| v as u32), false),
                Err(_) => {
                    return Err(Error::new(
                        "--blocks",
                        format!("'{e}': a block dimension above {max} (or z above {MAX_BLOCK_Z})"),
                    ));
                }
            }
        }
    }
    if out.is_empty() {
        return Err(Error::new("--blocks", "no block shape given"));
    }
    Ok(out)
}

fn powers_of_two(max: u32) -> impl Iterator<Item = u32> {
    (0..32).map(|k| 1u32 << k).take_while(move |&v| v <= max)
}

/// What a warp will execute: its active lanes and, for programs of the simple form, its loop
/// trip counts and instructions (other programs are walked by a [`super::control::WarpCursor`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WarpInfo {
    /// Lanes that pass the guard.
    pub mask: u32,
    /// Loop trips of the warp (the most of any active lane).
    pub trips: u32,
    /// Per-lane trips, only when the active lanes disagree.
    pub lane_trips: Option<Box<[u32; 32]>>,
    /// Dynamic instructions the warp issues (simple form; 0 otherwise).
    pub instructions: u64,
}

impl WarpInfo {
    /// Lanes still in the loop at `iteration`.
    #[inline]
    pub fn loop_mask(&self, iteration: u32) -> u32 {
        match &self.lane_trips {
            None => self.mask,
            Some(t) => {
                let mut m = 0;
                for (lane, &n) in t.iter().enumerate() {
                    if n > iteration {
                        m |= 1 << lane;
                    }
                }
                m & self.mask
            }
        }
    }
}

/// Block coordinates of a linear block id (x fastest).
#[inline]
pub fn block_coords(id: u64, grid: [u32; 3]) -> [i64; 3] {
    let gx = grid[0] as u64;
    let gy = grid[1] as u64;
    [
        (id % gx) as i64,
        ((id / gx) % gy) as i64,
        (id / (gx * gy)) as i64,
    ]
}

/// Linear block id of block coordinates (x fastest): the inverse of [`block_coords`].
#[inline]
pub fn block_id(coords: [u64; 3], grid: [u32; 3]) -> u64 {
    coords[0] + grid[0] as u64 * (coords[1] + grid[1] as u64 * coords[2])
}

/// Thread coordinates of a linear thread id within a block.
#[inline]
pub fn thread_coords(tid: u32, block: [u32; 3]) -> [i64; 3] {
    [
        (tid % block[0]) as i64,
        ((tid / block[0]) % block[1]) as i64,
        (tid / (block[0] * block[1])) as i64,
    ]
}

/// Works out the warps of one block: guard masks and loop trips.
///
/// Blocks that an affine guard lets through whole (or stops whole), with a loop count that is the
/// same for every thread, are decided once for the block from the extremes of each expression
/// over its thread box; any other block is worked out thread by thread. Both give the same warps
/// and the same errors (tested), so interior blocks of large launches cost O(warps), not O(threads).
pub fn block_warps(launch: &Launch, block_id: u64) -> Result<Vec<WarpInfo>> {
    match uniform_block_shape(launch, block_id)? {
        Some(shape) => Ok(warps_of_shape(launch, shape)),
        None => block_warps_per_thread(launch, block_id),
    }
}

/// The smallest and largest value of `a` over the threads of a block, with the block and loop
/// slots as in `slots`; `None` when a value could overflow or `a` reads a slot beyond [`SLOTS`]
/// (the per-thread path then reports it). Affine over a box, the extremes lie at its corners.
fn affine_range(a: &Affine, slots: &[i64; SLOTS], block: [u32; 3]) -> Option<(i64, i64)> {
    if a.coef[SLOTS.min(a.coef.len())..].iter().any(|&c| c != 0) {
        return None;
    }
    let mut lo = i128::from(a.c0);
    for (i, &s) in slots.iter().enumerate() {
        if !(SLOT_THREAD..SLOT_THREAD + 3).contains(&i) {
            lo += i128::from(a.coef[i]) * i128::from(s);
        }
    }
    let mut hi = lo;
    for (d, &side) in block.iter().enumerate() {
        let span = i128::from(a.coef[SLOT_THREAD + d]) * i128::from(side - 1);
        if span < 0 {
            lo += span;
        } else {
            hi += span;
        }
    }
    Some((i64::try_from(lo).ok()?, i64::try_from(hi).ok()?))
}

/// How a guard term `d op 0` fares over a whole block, from the range of `d`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TermOverBlock {
    /// Holds for every thread.
    All,
    /// Holds for no thread.
    None,
    /// Holds for some: the block needs the per-thread path.
    Mixed,
}

fn term_over_block(op: BinaryOp, (lo, hi): (i64, i64)) -> TermOverBlock {
    let (all, none) = match op {
        BinaryOp::Lt => (hi < 0, lo >= 0),
        BinaryOp::Le => (hi <= 0, lo > 0),
        BinaryOp::Gt => (lo > 0, hi <= 0),
        BinaryOp::Ge => (lo >= 0, hi < 0),
        BinaryOp::Eq => (lo == 0 && hi == 0, lo > 0 || hi < 0),
        _ => (lo > 0 || hi < 0, lo == 0 && hi == 0),
    };
    if all {
        TermOverBlock::All
    } else if none {
        TermOverBlock::None
    } else {
        TermOverBlock::Mixed
    }
}

/// Whether a condition holds for every thread of a block (`Some(true)`) or for none
/// (`Some(false)`), with the block and loop slots as in `slots`; `None` when it is mixed, not a
/// conjunction of affine terms, or could fail for some thread.
fn predicate_over_block(p: &Predicate, slots: &[i64; SLOTS], block: [u32; 3]) -> Option<bool> {
    let Predicate::Conjunction(terms) = p else {
        return None;
    };
    // Threads test the terms in order and stop at the first false one, so a term that stops the
    // whole block decides only if every term before it holds everywhere and cannot fail.
    for (d, op) in terms {
        match term_over_block(*op, affine_range(d, slots, block)?) {
            TermOverBlock::All => {}
            TermOverBlock::None => return Some(false),
            TermOverBlock::Mixed => return None,
        }
    }
    Some(true)
}

/// How a block decided as a whole runs: whether its threads pass the guard, and the loop trips
/// they all take. Every block of one shape has the same warps ([`warps_of_shape`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct UniformShape {
    active: bool,
    trips: u32,
}

/// The shape of a block decided as a whole ([`block_warps`]'s fast path), or `None` when the
/// block needs the per-thread path.
fn uniform_block_shape(launch: &Launch, block_id: u64) -> Result<Option<UniformShape>> {
    let p = &launch.program;
    let mut slots = [0i64; SLOTS];
    slots[SLOT_BLOCK..SLOT_BLOCK + 3].copy_from_slice(&block_coords(block_id, launch.grid));
    let active = match &p.guard {
        None => Some(true),
        Some(g) => predicate_over_block(g, &slots, launch.block),
    };
    let Some(active) = active else {
        return Ok(None);
    };
    let mut trips = 0u32;
    if active && let Some(lp) = &p.lp {
        let Some(count) = lp.count.as_affine() else {
            return Ok(None);
        };
        let Some((lo, hi)) = affine_range(count, &slots, launch.block) else {
            return Ok(None);
        };
        if lo != hi {
            return Ok(None);
        }
        if lo > MAX_TRIPS {
            // The per-thread path names the block's first thread.
            return Ok(None);
        }
        trips = lo.max(0) as u32;
        if let Some(c) = &lp.while_cond {
            let mut k = 0;
            while k < trips {
                slots[SLOT_LOOP] = i64::from(k);
                match predicate_over_block(c, &slots, launch.block) {
                    Some(true) => k += 1,
                    Some(false) => break,
                    None => return Ok(None),
                }
            }
            trips = k;
        }
    }
    Ok(Some(UniformShape { active, trips }))
}

/// The warps of every block of `shape`.
fn warps_of_shape(launch: &Launch, shape: UniformShape) -> Vec<WarpInfo> {
    let p = &launch.program;
    let UniformShape { active, trips } = shape;
    let warps = launch.occupancy.warps_per_block;
    (0..warps)
        .map(|w| {
            let lanes = launch.threads_per_block.saturating_sub(w * 32).min(32);
            let mask = if !active || lanes == 0 {
                0
            } else if lanes == 32 {
                u32::MAX
            } else {
                (1u32 << lanes) - 1
            };
            let trips = if mask == 0 { 0 } else { trips };
            WarpInfo {
                mask,
                trips,
                lane_trips: None,
                instructions: if mask == 0 || !p.simple {
                    0
                } else {
                    p.instructions(trips as u64)
                },
            }
        })
        .collect()
}

/// [`block_warps`] block after block, for passes over a launch's blocks: the warps of the block
/// before are kept and handed out again where a block has their shape, as most neighbours do,
/// instead of being built anew.
#[derive(Debug, Default)]
pub struct BlockWarps {
    shape: Option<UniformShape>,
    warps: Vec<WarpInfo>,
}

impl BlockWarps {
    /// The warps of block `block_id` ([`block_warps`]).
    pub fn of(&mut self, launch: &Launch, block_id: u64) -> Result<&[WarpInfo]> {
        match uniform_block_shape(launch, block_id)? {
            Some(shape) => {
                if self.shape != Some(shape) {
                    self.warps = warps_of_shape(launch, shape);
                    self.shape = Some(shape);
                }
            }
            None => {
                self.warps = block_warps_per_thread(launch, block_id)?;
                self.shape = None;
            }
        }
        Ok(&self.warps)
    }
}

/// [`block_warps`] thread by thread: the reference for every block.
fn block_warps_per_thread(launch: &Launch, block_id: u64) -> Result<Vec<WarpInfo>> {
    let p = &launch.program;
    let b = block_coords(block_id, launch.grid);
    let warps = launch.occupancy.warps_per_block;
    let mut out = Vec::with_capacity(warps as usize);
    let mut slots = [0i64; SLOTS];
    slots[SLOT_BLOCK..SLOT_BLOCK + 3].copy_from_slice(&b);
    let err = |e: crate::input::expr::EvalError, at: Position, what: &str, slots: &[i64; SLOTS]| {
        Error::new(
            &launch.source_name,
            format!(
                "{at}: {what} for thread ({}, {}, {}) of block ({}, {}, {}): {e}",
                slots[0], slots[1], slots[2], slots[3], slots[4], slots[5]
            ),
        )
    };
    for w in 0..warps {
        let mut mask = 0u32;
        let mut lane_trips = [0u32; 32];
        for lane in 0..32 {
            let tid = w * 32 + lane;
            if tid >= launch.threads_per_block {
                break;
            }
            let t = thread_coords(tid, launch.block);
            slots[SLOT_THREAD..SLOT_THREAD + 3].copy_from_slice(&t);
            let active = match &p.guard {
                Some(g) => g
                    .holds(&slots)
                    .map_err(|e| err(e, p.guard_at, "guard", &slots))?,
                None => true,
            };
            if !active {
                continue;
            }
            mask |= 1 << lane;
            if let Some(lp) = &p.lp {
                let count = lp
                    .count
                    .eval(&slots)
                    .map_err(|e| err(e, lp.at, "loop count", &slots))?;
                if count > MAX_TRIPS {
                    return Err(err(
                        crate::input::expr::EvalError::Overflow,
                        lp.at,
                        "loop count above 2^24",
                        &slots,
                    ));
                }
                let mut k = 0;
                while k < count {
                    if let Some(c) = &lp.while_cond {
                        slots[SLOT_LOOP] = k;
                        if !c
                            .holds(&slots)
                            .map_err(|e| err(e, lp.at, "loop condition", &slots))?
                        {
                            break;
                        }
                    }
                    k += 1;
                }
                slots[SLOT_LOOP] = 0;
                lane_trips[lane as usize] = k as u32;
            }
        }
        let active_trips = (0..32)
            .filter(|l| mask >> l & 1 == 1)
            .map(|l| lane_trips[l]);
        let trips = active_trips.clone().max().unwrap_or(0);
        let uniform = active_trips.clone().all(|t| t == trips);
        let instructions = if mask == 0 || !p.simple {
            0
        } else {
            p.instructions(trips as u64)
        };
        out.push(WarpInfo {
            mask,
            trips,
            lane_trips: (!uniform).then(|| Box::new(lane_trips)),
            instructions,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shapes(entry: &str, hw: &str) -> Vec<[u32; 3]> {
        let hw = HwConfig::load(hw).unwrap();
        expand_blocks(&[entry.to_string()], &hw)
            .unwrap()
            .into_iter()
            .map(|(b, _)| b)
            .collect()
    }

    #[test]
    fn named_block_sets_by_count() {
        // x + y + z = 10 (powers of two) with z ≤ 6: C(12, 2) − (4 + 3 + 2 + 1) = 56.
        let all = shapes("all-1024", "h200");
        assert_eq!(all.len(), 56);
        assert!(all.iter().all(|b| b[0] * b[1] * b[2] == 1024 && b[2] <= 64));
        assert_eq!(shapes("ernst-1024", "h200"), all);
        // x + y + z = 9, z ≤ 6: C(11, 2) − (3 + 2 + 1) = 49.
        assert_eq!(shapes("ernst-512", "h200").len(), 49);
        // 2^5 … 2^10 threads in two power-of-two factors: 6 + 7 + 8 + 9 + 10 + 11 = 51.
        let tabik = shapes("tabik-2d", "k20");
        assert_eq!(tabik.len(), 51);
        assert!(tabik.iter().all(|b| b[2] == 1 && b[0] * b[1] >= 32));
        // Lists mix explicit shapes and sets; duplicates are dropped.
        assert_eq!(
            shapes("32x8x4,all-1,32x8x4", "h200"),
            [[32, 8, 4], [1, 1, 1]]
        );
    }

    #[test]
    fn block_limits_in_order_sides_then_threads() {
        assert_eq!(check_block([32, 8, 4], 1024), Ok([32, 8, 4]));
        assert_eq!(check_block([1, 1024, 1], 1024), Ok([1, 1024, 1]));
        assert_eq!(check_block([2000, 0, 1], 1024), Err(BlockLimit::Side(0)));
        assert_eq!(
            check_block([4, 0, 1], 1024),
            Err(BlockLimit::NotPositive(1))
        );
        assert_eq!(check_block([1, 1, 65], 1024), Err(BlockLimit::Side(2)));
        assert_eq!(check_block([1, 1, 65], u64::MAX), Err(BlockLimit::Side(2)));
        assert_eq!(
            check_block([32, 32, 2], 1024),
            Err(BlockLimit::Threads(2048))
        );
        // Without a GPU only the sides count.
        assert_eq!(check_block([32, 32, 2], u64::MAX), Ok([32, 32, 2]));
        // A GPU allowing fewer threads lowers the side limits too.
        assert_eq!(check_block([1, 1, 64], 32), Err(BlockLimit::Side(2)));
        assert_eq!(max_side(0, 512), 512);
    }
}

#[cfg(test)]
mod block_fast_path_tests {
    use super::*;
    use crate::input::hw::HwConfig;
    use crate::input::trace::Kernel;
    use crate::launch::LaunchRequest;

    /// A kernel over a 3-D domain with the given guard and body, launched with `block`.
    fn launch(guard: &str, body: &str, block: [u32; 3]) -> Launch {
        let text = format!(
            r#"
name = "t"
[params]
nx = 45
ny = 13
nz = 7
cz = 3
[[arrays]]
name = "a"
element_bytes = 8
dims = ["(nx + 64) * (ny + 64) * (nz + 64)"]
[launch]
block = [32, 1, 1]
grid = ["cdiv(nx, blockDim.x)", "cdiv(ny, blockDim.y)", "cdiv(nz, blockDim.z)"]
[thread]
let = [
  "x = blockIdx.x * blockDim.x + threadIdx.x",
  "y = blockIdx.y * blockDim.y + threadIdx.y",
  "z = blockIdx.z * blockDim.z + threadIdx.z",
]
guard = "{guard}"
lattice_updates = "nx * ny * nz"
body = [{body}]
"#
        );
        let k = Kernel::parse(&text, "t.toml").unwrap();
        let req = LaunchRequest {
            block: Some(block),
            ..Default::default()
        };
        Launch::new(&k, &HwConfig::load("h200").unwrap(), &req).unwrap()
    }

    #[test]
    fn whole_block_decisions_match_the_thread_by_thread_reference() {
        let guards = [
            "x < nx && y < ny && z < nz",
            "x < nx && y <= ny - 1 && z >= 0",
            "x != 40 && y > 2",
            "y == 5 || z == 1",
            "2 * x - y >= 10 && z < nz",
            "x - 3 * z < 20",
        ];
        let bodies = [
            r#"{ load = "a", index = "x + y * nx" }"#,
            r#"{ load = "a", index = "x" }, { loop = "k", count = "cz", body = [{ store = "a", index = "x + k" }] }"#,
            r#"{ loop = "k", count = "cz", while = "z + k < nz", body = [{ load = "a", index = "x + k" }] }"#,
            r#"{ loop = "k", count = "cz + blockIdx.y", while = "blockIdx.z * 2 + k < 9", body = [{ load = "a", index = "x + k" }] }"#,
            r#"{ loop = "k", count = "y % 4", body = [{ load = "a", index = "x + k" }] }"#,
            r#"{ loop = "k", count = "4 - y", body = [{ load = "a", index = "x + k" }] }"#,
        ];
        let mut whole = 0;
        let mut blocks = 0;
        for guard in guards {
            for body in bodies {
                for block in [[32, 1, 1], [7, 3, 3], [16, 4, 2], [33, 2, 1], [64, 1, 2]] {
                    let l = launch(guard, body, block);
                    // Handed out block after block, reused where the shape repeats.
                    let mut handed = BlockWarps::default();
                    for b in 0..l.total_blocks {
                        let fast = block_warps(&l, b).unwrap();
                        let reference = block_warps_per_thread(&l, b).unwrap();
                        assert_eq!(fast, reference, "{guard} / {body} / {block:?} block {b}");
                        let reused = handed.of(&l, b).unwrap();
                        assert_eq!(reused, &reference[..], "{guard} / {body} / {block:?} {b}");
                        whole += uniform_block_shape(&l, b).unwrap().is_some() as u32;
                        blocks += 1;
                    }
                }
            }
        }
        assert!(
            whole > 0 && whole < blocks,
            "{whole} of {blocks} blocks decided whole"
        );
    }

    #[test]
    fn blocks_inside_the_domain_are_decided_whole() {
        // 45 x 13 x 7 in 32 x 1 x 1 blocks: a grid of 2 x 13 x 7; the second column of blocks
        // (x from 32 to 63) straddles nx = 45, the first lies inside.
        let l = launch(
            "x < nx && y < ny && z < nz",
            r#"{ load = "a", index = "x" }"#,
            [32, 1, 1],
        );
        let whole: Vec<u64> = (0..l.total_blocks)
            .filter(|&b| uniform_block_shape(&l, b).unwrap().is_some())
            .collect();
        assert_eq!(whole, (0..91).map(|i| 2 * i).collect::<Vec<_>>());
        // With 8 x 2 x 4 blocks (grid 6 x 7 x 2), the blocks of x column 5, y row 6 or z layer 1
        // straddle the domain's edge: 5 * 6 * 1 = 30 of 84 lie inside.
        let l = launch(
            "x < nx && y < ny && z < nz",
            r#"{ load = "a", index = "x" }"#,
            [8, 2, 4],
        );
        let whole = (0..l.total_blocks)
            .filter(|&b| uniform_block_shape(&l, b).unwrap().is_some())
            .count();
        assert_eq!(whole, 30);
    }

    #[test]
    fn whole_block_decisions_report_the_reference_errors() {
        for (guard, body) in [
            (
                "x < nx",
                r#"{ loop = "k", count = "cz * 16777216", body = [{ load = "a", index = "x" }] }"#,
            ),
            (
                "x * 4611686018427387904 < 1",
                r#"{ load = "a", index = "x" }"#,
            ),
        ] {
            let l = launch(guard, body, [32, 2, 1]);
            for b in [0, l.total_blocks - 1] {
                let fast = block_warps(&l, b).unwrap_err().to_string();
                let reference = block_warps_per_thread(&l, b).unwrap_err().to_string();
                assert_eq!(fast, reference);
            }
        }
    }
}
