//! The geometry of a launch's threads: which block shapes CUDA can launch ([`check_block`], the
//! one place the limits are checked), block and thread coordinates of linear ids, and what each
//! warp of a block will execute (the lanes its guard lets through, its loop trips). The scheduler
//! dispatches these warps; the models read the same facts for one representative block.

use super::control::MAX_TRIPS;
use super::{Launch, SLOT_BLOCK, SLOT_LOOP, SLOT_THREAD, SLOTS};
use crate::error::{Error, Result};

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
pub fn block_warps(launch: &Launch, block_id: u64) -> Result<Vec<WarpInfo>> {
    let p = &launch.program;
    let b = block_coords(block_id, launch.grid);
    let warps = launch.occupancy.warps_per_block;
    let mut out = Vec::with_capacity(warps as usize);
    let mut slots = [0i64; SLOTS];
    slots[SLOT_BLOCK..SLOT_BLOCK + 3].copy_from_slice(&b);
    let err = |e: crate::input::expr::EvalError, what: &str, slots: &[i64; SLOTS]| {
        Error::new(
            &launch.source_name,
            format!(
                "{what} for thread ({}, {}, {}) of block ({}, {}, {}): {e}",
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
                Some(g) => g.holds(&slots).map_err(|e| err(e, "guard", &slots))?,
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
                    .map_err(|e| err(e, "loop count", &slots))?;
                if count > MAX_TRIPS {
                    return Err(err(
                        crate::input::expr::EvalError::Overflow,
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
                            .map_err(|e| err(e, "loop condition", &slots))?
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
