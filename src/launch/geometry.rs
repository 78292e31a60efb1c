//! The geometry of a launch's threads: block and thread coordinates of linear ids, and what each
//! warp of a block will execute (the lanes its guard lets through, its loop trips). The scheduler
//! dispatches these warps; the models read the same facts for one representative block.

use super::{Launch, SLOT_BLOCK, SLOT_LOOP, SLOT_THREAD, SLOTS};
use crate::error::{Error, Result};

/// What a warp will execute: its active lanes and loop trip counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WarpInfo {
    /// Lanes that pass the guard.
    pub mask: u32,
    /// Loop trips of the warp (the most of any active lane).
    pub trips: u32,
    /// Per-lane trips, only when the active lanes disagree.
    pub lane_trips: Option<Box<[u32; 32]>>,
    /// Dynamic instructions the warp issues.
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

/// Thread coordinates of a linear thread id within a block.
#[inline]
pub fn thread_coords(tid: u32, block: [u32; 3]) -> [i64; 3] {
    [
        (tid % block[0]) as i64,
        ((tid / block[0]) % block[1]) as i64,
        (tid / (block[0] * block[1])) as i64,
    ]
}

/// Most loop trips a lane may take before the launch is rejected (a runaway count is bad input).
const MAX_TRIPS: i64 = 1 << 24;

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
        let instructions = if mask == 0 {
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
