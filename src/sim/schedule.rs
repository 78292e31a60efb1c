//! The scheduler: which warp of which block issues which instruction on which SM, tick by tick.
//!
//! Timing model: every SM issues one warp instruction per tick, round-robin over its resident
//! warps in the order they arrived; all SMs advance together. Blocks are dispatched in linear
//! block-id order (x fastest). The first wave is spread over the SMs in the hardware's dispatch
//! order (TPC pairs rotating across GPCs); afterwards a freed slot takes the next block, slots
//! freed in the same tick in dispatch order. Lanes outside the guard issue nothing, and a warp
//! with no active lane issues no instruction at all.
//!
//! The output is a stream of [`Issue`] records per SM; what those instructions touch is worked
//! out in parallel by the per-SM stage ([`crate::sim::sm_stage`]).

use crate::error::Result;
use crate::input::hw::WarpIssue;
use crate::input::trace::AccessKind;
use crate::input::trace::MAX_LOOP_DEPTH;
use crate::launch::Launch;
use crate::launch::control::{WarpCursor, WarpStep};
use crate::launch::geometry::{WarpInfo, block_warps};
use rayon::prelude::*;
use std::collections::VecDeque;

/// One warp instruction issued on an SM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Issue {
    /// Tick within the current chunk.
    pub tick: u32,
    /// Linear block id.
    pub block: u32,
    /// Loop variables, outermost first (0 outside loops).
    pub iterations: [u32; MAX_LOOP_DEPTH],
    /// Active lanes.
    pub mask: u32,
    /// Warp within the block.
    pub warp: u16,
    /// Position of the access in [`crate::launch::Program::flattened`].
    pub access: u16,
}

#[derive(Debug)]
struct ResidentWarp<'a> {
    block: u32,
    warp: u16,
    slot: u16,
    /// Loads issued in the warp's current run (see [`Scheduler::run_until`]).
    run: u32,
    /// Simple form: the next dynamic instruction.
    next: u64,
    info: WarpInfo,
    /// Other programs: the warp's cursor and its next instruction.
    cursor: Option<Box<(WarpCursor<'a>, WarpStep)>>,
}

#[derive(Debug, Default)]
struct SmQueue<'a> {
    ring: Vec<ResidentWarp<'a>>,
    cursor: usize,
    /// Live warps per block slot.
    live: Vec<u32>,
    free_slots: Vec<u16>,
}

/// Blocks are worked out this many at a time, in parallel, ahead of dispatch.
const BLOCK_BATCH: u64 = 2048;

/// Dispatches blocks and emits one issue per SM per tick.
pub struct Scheduler<'a> {
    launch: &'a Launch,
    order: Vec<u32>,
    /// Position of each SM in the dispatch order.
    rank: Vec<u32>,
    sms: Vec<SmQueue<'a>>,
    next_block: u64,
    ready: VecDeque<Vec<WarpInfo>>,
    /// Ticks since launch.
    pub tick: u64,
    /// Warps with at least one active lane, so far.
    pub active_warps: u64,
    /// Lanes that issued an access, so far (thread accesses simulated).
    pub thread_accesses: u64,
    /// Whether [`Scheduler::run`] lists its issues; when not, it only counts them in
    /// `unlisted_instructions` (sampled simulation fast-forwards so).
    pub list_issues: bool,
    /// Whether warps issue runs of loads back to back ([`WarpIssue::LoadRuns`]).
    burst_loads: bool,
    /// Warp instructions issued while `list_issues` was off.
    pub unlisted_instructions: u64,
    freed: Vec<(u32, u32)>,
}

impl<'a> Scheduler<'a> {
    /// A scheduler with the first wave dispatched.
    pub fn new(
        launch: &'a Launch,
        dispatch_order: Vec<u32>,
        warp_issue: WarpIssue,
    ) -> Result<Scheduler<'a>> {
        let n = dispatch_order.len();
        let mut rank = vec![0; n];
        for (i, &sm) in dispatch_order.iter().enumerate() {
            rank[sm as usize] = i as u32;
        }
        let per_sm = launch.occupancy.blocks_per_sm as usize;
        let sms = (0..n)
            .map(|_| SmQueue {
                live: vec![0; per_sm],
                free_slots: (0..per_sm as u16).rev().collect(),
                ..Default::default()
            })
            .collect();
        let mut s = Scheduler {
            launch,
            order: dispatch_order,
            rank,
            sms,
            next_block: 0,
            ready: VecDeque::new(),
            tick: 0,
            active_warps: 0,
            thread_accesses: 0,
            list_issues: true,
            burst_loads: warp_issue == WarpIssue::LoadRuns,
            unlisted_instructions: 0,
            freed: Vec::new(),
        };
        // First wave: round after round over the dispatch order, one block per SM per round.
        for _ in 0..per_sm {
            for i in 0..n {
                let sm = s.order[i];
                s.dispatch(sm)?;
            }
        }
        Ok(s)
    }

    /// Blocks dispatched so far.
    pub fn blocks_dispatched(&self) -> u64 {
        self.next_block
    }

    /// True when every block has been dispatched and has finished.
    pub fn done(&self) -> bool {
        self.next_block >= self.launch.total_blocks && self.sms.iter().all(|q| q.ring.is_empty())
    }

    fn next_block_info(&mut self) -> Result<Option<(u32, Vec<WarpInfo>)>> {
        let total = self.launch.total_blocks;
        if self.next_block >= total {
            return Ok(None);
        }
        if self.ready.is_empty() {
            let lo = self.next_block;
            let hi = (lo + BLOCK_BATCH).min(total);
            let launch = self.launch;
            let batch: Vec<Result<Vec<WarpInfo>>> = (lo..hi)
                .into_par_iter()
                .map(|b| block_warps(launch, b))
                .collect();
            for r in batch {
                self.ready.push_back(r?);
            }
        }
        let info = self.ready.pop_front().expect("batch is not empty");
        let id = self.next_block as u32;
        self.next_block += 1;
        Ok(Some((id, info)))
    }

    /// Puts the next block(s) into a free slot of `sm`; blocks without instructions finish at once.
    fn dispatch(&mut self, sm: u32) -> Result<()> {
        loop {
            let Some((block, warps)) = self.next_block_info()? else {
                return Ok(());
            };
            let q = &mut self.sms[sm as usize];
            let slot = q.free_slots.pop().expect("dispatch needs a free slot");
            let mut live = 0;
            let simple = self.launch.program.simple;
            for (w, info) in warps.into_iter().enumerate() {
                let cursor = if simple || info.mask == 0 {
                    None
                } else {
                    let mut c = WarpCursor::new(self.launch, block as u64, w as u32, info.mask);
                    match c.next()? {
                        Some(first) => Some(Box::new((c, first))),
                        None => continue,
                    }
                };
                if info.instructions > 0 || cursor.is_some() {
                    live += 1;
                    self.active_warps += 1;
                    q.ring.push(ResidentWarp {
                        block,
                        warp: w as u16,
                        slot,
                        run: 0,
                        next: 0,
                        info,
                        cursor,
                    });
                }
            }
            if live > 0 {
                q.live[slot as usize] = live;
                return Ok(());
            }
            q.free_slots.push(slot);
        }
    }

    /// Runs up to `ticks` ticks, putting each SM's issues in `out[sm]` and the blocks that
    /// finished on it in `finished[sm]` (both cleared first). Returns the number of ticks run
    /// (fewer only when the launch finished).
    pub fn run(
        &mut self,
        ticks: u32,
        out: &mut [Vec<Issue>],
        finished: &mut [Vec<u32>],
    ) -> Result<u32> {
        self.run_until(ticks, u64::MAX, out, finished)
    }

    /// [`Scheduler::run`], stopping early after the tick in which the blocks dispatched reach
    /// `dispatched` (so that a chunk of ticks never spans two waves of a sampled simulation).
    pub fn run_until(
        &mut self,
        ticks: u32,
        dispatched: u64,
        out: &mut [Vec<Issue>],
        finished: &mut [Vec<u32>],
    ) -> Result<u32> {
        for o in out.iter_mut() {
            o.clear();
        }
        for f in finished.iter_mut() {
            f.clear();
        }
        let program = &self.launch.program;
        let pre = program.pre.len() as u64;
        let body = program.lp.as_ref().map_or(0, |l| l.body.len() as u64);
        for t in 0..ticks {
            if self.done() {
                return Ok(t);
            }
            for (sm, q) in self.sms.iter_mut().enumerate() {
                if q.ring.is_empty() {
                    continue;
                }
                let w = &mut q.ring[q.cursor];
                let (access, iterations, mask, done) = match &mut w.cursor {
                    None => {
                        let i = w.next;
                        let (access, iteration) = program.decode(i, w.info.trips as u64);
                        let in_loop = i >= pre && i < pre + body * w.info.trips as u64;
                        let mask = if in_loop {
                            w.info.loop_mask(iteration as u32)
                        } else {
                            w.info.mask
                        };
                        let mut iterations = [0; MAX_LOOP_DEPTH];
                        iterations[0] = iteration as u32;
                        w.next += 1;
                        (access, iterations, mask, w.next == w.info.instructions)
                    }
                    Some(c) => {
                        let step = c.1;
                        let done = match c.0.next()? {
                            Some(next) => {
                                c.1 = next;
                                false
                            }
                            None => true,
                        };
                        (step.access, step.iterations, step.mask, done)
                    }
                };
                self.thread_accesses += mask.count_ones() as u64;
                if self.list_issues {
                    out[sm].push(Issue {
                        tick: t,
                        block: w.block,
                        iterations,
                        mask,
                        warp: w.warp,
                        access: access as u16,
                    });
                } else {
                    self.unlisted_instructions += 1;
                }
                if done {
                    let slot = w.slot as usize;
                    let block = w.block;
                    q.ring.remove(q.cursor);
                    if q.cursor >= q.ring.len() {
                        q.cursor = 0;
                    }
                    q.live[slot] -= 1;
                    if q.live[slot] == 0 {
                        finished[sm].push(block);
                        q.free_slots.push(slot as u16);
                        self.freed.push((self.rank[sm], sm as u32));
                    }
                } else {
                    // A warp issues a run of loads back to back: nothing waits on a load until
                    // its value is used, so the scheduler only moves on after the last load of a
                    // run (or any other instruction). The compiler bounds a run: after
                    // `loads_per_run` loads an instruction uses one of them and the warp waits.
                    // The next instruction is only decoded where it can matter.
                    let keep = self.burst_loads
                        && program.accesses[access].kind == AccessKind::Load
                        && w.run + 1 < self.launch.loads_per_run
                        && {
                            let next_access = match &w.cursor {
                                None => program.decode(w.next, w.info.trips as u64).0,
                                Some(c) => c.1.access,
                            };
                            program.accesses[next_access].kind == AccessKind::Load
                        };
                    if keep {
                        w.run += 1;
                    } else {
                        w.run = 0;
                        q.cursor = (q.cursor + 1) % q.ring.len();
                    }
                }
            }
            if !self.freed.is_empty() {
                let mut freed = std::mem::take(&mut self.freed);
                freed.sort_unstable();
                for &(_, sm) in &freed {
                    self.dispatch(sm)?;
                }
                freed.clear();
                self.freed = freed;
            }
            self.tick += 1;
            if self.next_block >= dispatched {
                return Ok(t + 1);
            }
        }
        Ok(ticks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::hw::HwConfig;
    use crate::input::trace::Kernel;
    use crate::launch::LaunchRequest;

    fn launch(block: [u32; 3], domain: [i64; 3]) -> Launch {
        let k = Kernel::load(std::path::Path::new("traces/star1.toml")).unwrap();
        let hw = HwConfig::load("h200").unwrap();
        Launch::new(
            &k,
            &hw,
            &LaunchRequest {
                block: Some(block),
                domain: Some(domain),
                set: vec![],
            },
        )
        .unwrap()
    }

    #[test]
    fn guard_masks_partial_warps() {
        // nx = 40 with 32-wide blocks: block x = 1 has 8 active lanes per row.
        let l = launch([32, 2, 1], [40, 2, 1]);
        let w = block_warps(&l, 1).unwrap();
        assert_eq!(w.len(), 2);
        assert_eq!(w[0].mask, 0xFF);
        assert_eq!(w[0].instructions, 8);
        let w0 = block_warps(&l, 0).unwrap();
        assert_eq!(w0[1].mask, u32::MAX);
    }

    /// What [`issue_order`] saw.
    struct Issued<'a> {
        /// Ticks run.
        ran: u32,
        /// (warp, access) of every issue of the last SM, the one the block went to.
        seq: Vec<(u16, u16)>,
        /// Every SM's issues.
        out: Vec<Vec<Issue>>,
        scheduler: Scheduler<'a>,
    }

    /// Runs `l` (one block) for up to 100 ticks on 132 SMs dispatched last SM first.
    fn issue_order(l: &Launch, warp_issue: WarpIssue) -> Issued<'_> {
        let order: Vec<u32> = (0..132).rev().collect();
        let mut scheduler = Scheduler::new(l, order, warp_issue).unwrap();
        let mut out = vec![Vec::new(); 132];
        let ran = scheduler
            .run(100, &mut out, &mut vec![Vec::new(); 132])
            .unwrap();
        let seq = out[131].iter().map(|i| (i.warp, i.access)).collect();
        Issued {
            ran,
            seq,
            out,
            scheduler,
        }
    }

    #[test]
    fn round_robin_over_resident_warps_and_first_wave_order() {
        let l = launch([32, 2, 1], [32, 2, 1]); // one block of two warps
        let Issued {
            ran,
            seq,
            out,
            scheduler: s,
        } = issue_order(&l, WarpIssue::RoundRobin);
        assert_eq!(ran, 16); // 2 warps × 8 instructions on one SM
        assert!(out[..131].iter().all(|o| o.is_empty()));
        assert_eq!(&seq[..4], &[(0, 0), (1, 0), (0, 1), (1, 1)]);
        assert_eq!(s.thread_accesses, 16 * 32);
        assert!(s.done());
    }

    #[test]
    fn a_warp_issues_its_run_of_loads_back_to_back_then_the_next_warp_goes() {
        // star1: 7 loads then 1 store per thread. Two warps on one SM: warp 0 sends its 7 loads,
        // warp 1 its 7, then the stores alternate with nothing left between them.
        let l = launch([32, 2, 1], [32, 2, 1]);
        let Issued {
            ran,
            seq,
            scheduler: s,
            ..
        } = issue_order(&l, WarpIssue::LoadRuns);
        assert_eq!(ran, 16);
        let mut expected: Vec<(u16, u16)> = (0..7).map(|a| (0, a)).collect();
        expected.extend((0..7).map(|a| (1, a)));
        expected.extend([(0, 7), (1, 7)]);
        assert_eq!(seq, expected);
        assert_eq!(s.thread_accesses, 16 * 32);
    }

    #[test]
    fn the_compiler_bounds_a_run_of_loads_at_loads_per_run() {
        // star1's 7 loads with runs of at most 3: warp 0 sends loads 0-2, warp 1 its 0-2, then
        // 3-5 each, then the last load each, then the stores.
        let mut l = launch([32, 2, 1], [32, 2, 1]);
        l.loads_per_run = 3;
        let Issued { ran, seq, .. } = issue_order(&l, WarpIssue::LoadRuns);
        assert_eq!(ran, 16);
        let mut expected = Vec::new();
        for run in [0..3, 3..6, 6..7] {
            for warp in 0..2 {
                expected.extend(run.clone().map(|a| (warp, a)));
            }
        }
        expected.extend([(0, 7), (1, 7)]);
        assert_eq!(seq, expected);
    }

    #[test]
    fn freed_slots_take_the_next_blocks() {
        // 3 blocks of 1024 threads on a single SM: 2 resident, the third starts when they end.
        let l = launch([32, 32, 1], [32, 96, 1]);
        let mut s = Scheduler::new(&l, vec![0], WarpIssue::RoundRobin).unwrap();
        let mut out = vec![Vec::new(); 1];
        assert_eq!(
            s.run(1_000_000, &mut out, &mut vec![Vec::new(); 1])
                .unwrap(),
            768
        );
        let blocks: Vec<u32> = out[0].iter().map(|i| i.block).collect();
        assert!(blocks[..512].iter().all(|&b| b < 2));
        assert_eq!(&blocks[..2], &[0, 0]);
        // The ring holds block 0's 32 warps, then block 1's; each round visits all 64.
        assert_eq!(
            (blocks[31], blocks[32], blocks[63], blocks[64]),
            (0, 1, 1, 0)
        );
        assert!(blocks[512..].iter().all(|&b| b == 2));
    }
}
