//! The scheduler: which warp of which block issues which instruction on which SM, tick by tick.
//!
//! Timing model: every SM issues one warp instruction per tick, round-robin over its resident
//! warps in the order they arrived; all SMs advance together. Blocks are dispatched in linear
//! block-id order (x fastest). The first wave is spread over the SMs in the hardware's dispatch
//! order (TPC pairs rotating across GPCs); afterwards a freed slot takes the next block when its
//! SM issues again, slots coming back in the same tick in an order drawn from the blocks that
//! freed them (`free_order`), except that the dispatcher may keep to the GPC of the last block
//! ([`Scheduler::gpc_chain`]). An SM whose block ends may sit out a turn per warp of it before
//! it issues again ([`Scheduler::turnover_turns`]).
//! Lanes outside the guard issue nothing, and a warp with no active lane issues no instruction at
//! all.
//!
//! The output is a stream of [`Issued`] records per SM, each a run of one warp's instructions
//! at consecutive ticks (a warp's run of loads issues back to back) or a single instruction;
//! the per-SM stage ([`crate::sim::sm_stage`]) expands them into [`Issue`]s and works out what
//! they touch, in parallel.

use crate::error::Result;
use crate::input::hw::{HwConfig, WarpIssue};
use crate::input::trace::AccessKind;
use crate::input::trace::MAX_LOOP_DEPTH;
use crate::launch::control::WarpCursor;
use crate::launch::geometry::{WarpInfo, block_warps};
use crate::launch::stream::{StreamTotals, lane_accesses};
use crate::launch::{Launch, Layout};
use rayon::prelude::*;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

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

/// What an SM issued, in tick order: a run of one warp's instructions at consecutive ticks, or
/// one instruction. The scheduler only works out when each warp issues; the per-SM stage expands
/// runs into [`Issue`]s ([`Issued::expand`]), in parallel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Issued {
    /// Consecutive instructions of a warp of the simple form.
    Run(WarpRun),
    /// One instruction (warps walked by cursors, or whose lanes leave the loop apart).
    One(Issue),
}

/// `count` consecutive dynamic instructions of one warp of the simple form, from its `first`,
/// issued at ticks `tick`, `tick + 1`, …, every one with lanes `mask`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WarpRun {
    /// Tick of the first, within the current chunk.
    pub tick: u32,
    /// Linear block id.
    pub block: u32,
    /// The first instruction's number in the warp's dynamic sequence ([`Layout::decode`]).
    pub first: u64,
    /// Instructions in the run (at least one).
    pub count: u32,
    /// Active lanes.
    pub mask: u32,
    /// The warp's loop trips.
    pub trips: u32,
    /// Warp within the block.
    pub warp: u16,
}

impl Issued {
    /// Tick of the first instruction.
    #[inline]
    pub fn tick(&self) -> u32 {
        match self {
            Issued::Run(r) => r.tick,
            Issued::One(i) => i.tick,
        }
    }

    /// Instructions issued.
    #[inline]
    pub fn count(&self) -> u32 {
        match self {
            Issued::Run(r) => r.count,
            Issued::One(_) => 1,
        }
    }

    /// The tick after the last instruction.
    #[inline]
    pub fn end(&self) -> u32 {
        self.tick() + self.count()
    }

    fn block_mut(&mut self) -> &mut u32 {
        match self {
            Issued::Run(r) => &mut r.block,
            Issued::One(i) => &mut i.block,
        }
    }

    /// Moves every tick `by` earlier (what runs past a chunk's end, into the next chunk).
    fn shift_ticks(&mut self, by: u32) {
        match self {
            Issued::Run(r) => r.tick -= by,
            Issued::One(i) => i.tick -= by,
        }
    }

    /// Calls `f` on each instruction, in order.
    #[inline(always)]
    pub fn expand<E>(
        &self,
        layout: &Layout,
        mut f: impl FnMut(&Issue) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        match self {
            Issued::One(i) => f(i),
            Issued::Run(r) => {
                for k in 0..r.count {
                    let (access, iteration) = layout.decode(r.first + k as u64, r.trips as u64);
                    let mut iterations = [0; MAX_LOOP_DEPTH];
                    iterations[0] = iteration as u32;
                    f(&Issue {
                        tick: r.tick + k,
                        block: r.block,
                        iterations,
                        mask: r.mask,
                        warp: r.warp,
                        access: access as u16,
                    })?;
                }
                Ok(())
            }
        }
    }
}

/// Moves what `out` issues from tick `end` on to `carried`, its ticks counted from `end` (a run
/// across `end` is cut in two).
fn carry_from(out: &mut Vec<Issued>, end: u32, carried: &mut Vec<Issued>) {
    let keep = out.partition_point(|i| i.end() <= end);
    let head = match out.get_mut(keep) {
        Some(Issued::Run(r)) if r.tick < end => {
            let before = end - r.tick;
            let head = WarpRun {
                count: before,
                ..*r
            };
            r.tick = end;
            r.first += before as u64;
            r.count -= before;
            Some(Issued::Run(head))
        }
        _ => None,
    };
    carried.extend(out.drain(keep..).map(|mut i| {
        i.shift_ticks(end);
        i
    }));
    out.extend(head);
}

#[derive(Debug)]
struct ResidentWarp {
    block: u32,
    warp: u16,
    slot: u16,
    /// Loads issued in the warp's current run (see [`Scheduler::run_until`]).
    run: u32,
    /// Turns the warp was offered at the start of a run (see [`Scheduler::turn_skip`]).
    turns: u32,
    /// Simple form: the next dynamic instruction.
    next: u64,
    info: WarpInfo,
    /// Other programs: whether the warp is walked by its cursor (`SmQueue::cursors`, at the
    /// warp's place), at its next instruction.
    walks: bool,
}

#[derive(Debug, Default)]
struct SmQueue<'a> {
    /// The resident warps in the order they arrived, as places in `warps` (removing one from
    /// the middle then moves two bytes per warp behind it, not the warps).
    ring: Vec<u16>,
    /// The resident warps' state, in places reused as warps finish.
    warps: Vec<ResidentWarp>,
    /// The cursors of warps walked by cursors, by place: restarted in place for each new warp,
    /// so a warp costs no allocation, and next to each other for the scheduler's reads.
    cursors: Vec<WarpCursor<'a>>,
    /// Places in `warps` free for the next warps.
    free_places: Vec<u16>,
    /// Position in `ring` of the warp issuing next.
    cursor: usize,
    /// Live warps per block slot.
    live: Vec<u32>,
    free_slots: Vec<u16>,
    /// The tick this SM issues at next, counted from the current chunk's start.
    clock: u32,
    /// The warps each slot's block brought (see [`Scheduler::turnover_turns`]).
    slot_warps: Vec<u32>,
    /// Whether the SM has freed a slot that is not yet filled (it waits in the event queue).
    waiting: bool,
    /// Issues run past the previous chunk's end, their ticks counted from this chunk's start.
    carried: Vec<Issued>,
    /// Blocks finished (tick, block) and not yet reported.
    finished: Vec<(u32, u32)>,
    /// One past the tick of the SM's last issue in the current chunk (0: none).
    last_issue_end: u32,
}

impl SmQueue<'_> {
    /// Moves the cursor to the next resident warp, round the ring.
    #[inline]
    fn next_warp(&mut self) {
        self.cursor += 1;
        if self.cursor == self.ring.len() {
            self.cursor = 0;
        }
    }
}

/// A slot freed on an SM, as [`Scheduler`] queues it: (the last tick the SM sits out after the
/// block, [`free_order`] of the block, SM, the ticks it sits out). The slot takes its next block
/// at the end of that tick, when the SM issues again; the block's identity does not matter
/// before. Ordered so, slots take their blocks in the order their SMs come back.
type Freed = (u32, u32, u32, u32);

/// How many jump lengths [`Scheduler::fast_forward`] tries, longest first.
pub const JUMP_TRIES: u64 = 32;

/// Blocks are worked out this many at a time, in parallel, ahead of dispatch.
const BLOCK_BATCH: u64 = 2048;

/// Dispatches blocks and emits one issue per SM per tick.
pub struct Scheduler<'a> {
    launch: &'a Launch,
    order: Vec<u32>,
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
    /// Run the reference schedule: all SMs tick by tick (the same issues, slower).
    pub tick_by_tick: bool,
    /// The largest chance that a warp passes up its turn at the start of a run; each block's
    /// chance is drawn in `[0, turn_skip)` from its id, each decision from (block, warp, turn),
    /// so the schedule stays deterministic (`[schedule] turn_skip`, default 0: never).
    pub turn_skip: f32,
    /// The largest chance, added to the block's, that a warp passes up its turn; each warp's is
    /// drawn in `[0, warp_drift)` from (block, warp), so the warps of a block issue at different
    /// rates and drift apart (`[schedule] warp_drift`, default 0: none).
    pub warp_drift: f32,
    /// Turns of each warp of a finished block that its SM sits out before it issues again, a
    /// turn being the launch's mean (`[schedule] turnover_turns`, default 0: none): the block's
    /// exit and its successor's launch. Every SM's blocks end in clusters (blocks that start
    /// together progress together in the round robin), and an SM that frees two slots a few
    /// ticks apart would otherwise take consecutive blocks, which share their halo lines in its
    /// L1; the GPU puts a block on the SM of one 1-7 ids earlier no more often than chance.
    pub turnover_turns: u32,
    /// The GPC of each SM, for [`Scheduler::gpc_chain`] (empty: one GPC).
    pub gpc_of_sm: Vec<u32>,
    /// After the first wave, the chance that the block after one dispatched to a GPC goes to a
    /// slot of another SM of that GPC which has freed by then (the next such slot in line, if
    /// any) rather than to the next slot in line anywhere (drawn per block; default 0): the GPU's
    /// dispatcher hands a GPC the next block when another of its slots frees within a few
    /// nanoseconds, a window the ticks do not resolve, so the model takes the chance of that,
    /// the GPC's slot-free rate times the window ([`crate::sim::gpc_chain_chance`];
    /// docs/model.md "Schedule").
    pub gpc_chain: f32,
    /// SMs that freed a slot, in the order the slots take their next blocks: (the last tick the
    /// SM sits out after the block, [`free_order`] of the block, SM, the ticks it sits out).
    events: BinaryHeap<Reverse<Freed>>,
    /// Ids the jumps moved blocks on by ([`Scheduler::fast_forward`]), all jumps together (see
    /// [`free_order`]).
    renamed: u32,
    /// What the launch's warps issue in all, and in how many turns ([`StreamTotals`]).
    streams: StreamTotals,
}

impl<'a> Scheduler<'a> {
    /// A scheduler for `launch` on `hw` with the first wave dispatched: its dispatch order, its
    /// warp issue and the rest of its `[schedule]` (each setting off where the config has none;
    /// the GPC chain chance, which needs the time model's view of the launch, is the caller's).
    pub fn for_gpu(launch: &'a Launch, hw: &HwConfig) -> Result<Scheduler<'a>> {
        let schedule = &hw.schedule;
        let mut s = Scheduler::new(launch, hw.dispatch_order(), schedule.warp_issue)?;
        s.turn_skip = schedule.turn_skip.unwrap_or(0.0) as f32;
        s.warp_drift = schedule.warp_drift.unwrap_or(0.0) as f32;
        s.turnover_turns = schedule.turnover_turns.unwrap_or(0);
        s.gpc_of_sm = hw.gpc_of_sms();
        Ok(s)
    }

    /// A scheduler with the first wave dispatched.
    pub fn new(
        launch: &'a Launch,
        dispatch_order: Vec<u32>,
        warp_issue: WarpIssue,
    ) -> Result<Scheduler<'a>> {
        let n = dispatch_order.len();
        let per_sm = launch.occupancy.blocks_per_sm as usize;
        let burst_loads = warp_issue == WarpIssue::LoadRuns;
        let streams = StreamTotals::of_launch(launch, burst_loads)?;
        let sms = (0..n)
            .map(|_| SmQueue {
                live: vec![0; per_sm],
                slot_warps: vec![0; per_sm],
                free_slots: (0..per_sm as u16).rev().collect(),
                ..Default::default()
            })
            .collect();
        let mut s = Scheduler {
            launch,
            order: dispatch_order,
            sms,
            next_block: 0,
            ready: VecDeque::new(),
            tick: 0,
            active_warps: 0,
            thread_accesses: 0,
            list_issues: true,
            burst_loads,
            unlisted_instructions: 0,
            tick_by_tick: false,
            turn_skip: 0.0,
            warp_drift: 0.0,
            turnover_turns: 0,
            gpc_of_sm: Vec::new(),
            gpc_chain: 0.0,
            events: BinaryHeap::new(),
            renamed: 0,
            streams,
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

    /// What the launch's warps issue in all: instructions, turns and rounds of loads, whatever
    /// the form of their program.
    pub fn streams(&self) -> &StreamTotals {
        &self.streams
    }

    /// Blocks dispatched so far.
    pub fn blocks_dispatched(&self) -> u64 {
        self.next_block
    }

    /// True when every block has been dispatched and has finished.
    pub fn done(&self) -> bool {
        self.next_block >= self.launch.total_blocks
            && self
                .sms
                .iter()
                .all(|q| q.ring.is_empty() && q.carried.is_empty())
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
    /// Returns the block that took the slot (`None`: no blocks left).
    fn dispatch(&mut self, sm: u32) -> Result<Option<u32>> {
        loop {
            let Some((block, warps)) = self.next_block_info()? else {
                return Ok(None);
            };
            let q = &mut self.sms[sm as usize];
            let slot = q.free_slots.pop().expect("dispatch needs a free slot");
            let mut live = 0;
            let simple = self.launch.program.simple;
            for (w, info) in warps.into_iter().enumerate() {
                let walks = !simple && info.mask != 0;
                if walks {
                    // The place this warp takes, if it has an instruction.
                    let place = q.free_places.last().map_or(q.warps.len(), |&p| p as usize);
                    while q.cursors.len() <= place {
                        q.cursors.push(WarpCursor::new(self.launch, 0, 0, 0));
                    }
                    let c = &mut q.cursors[place];
                    c.restart(block as u64, w as u32, info.mask);
                    if !c.advance()? {
                        continue;
                    }
                }
                if info.instructions > 0 || walks {
                    live += 1;
                    self.active_warps += 1;
                    if !walks {
                        // Counted here rather than lane by lane as it issues: the same total.
                        self.thread_accesses += lane_accesses(&self.launch.program, &info);
                    }
                    let warp = ResidentWarp {
                        block,
                        warp: w as u16,
                        slot,
                        run: 0,
                        turns: 0,
                        next: 0,
                        info,
                        walks,
                    };
                    let place = match q.free_places.pop() {
                        Some(p) => {
                            q.warps[p as usize] = warp;
                            p
                        }
                        None => {
                            q.warps.push(warp);
                            (q.warps.len() - 1) as u16
                        }
                    };
                    q.ring.push(place);
                }
            }
            if live > 0 {
                q.live[slot as usize] = live;
                q.slot_warps[slot as usize] = live;
                return Ok(Some(block));
            }
            q.free_slots.push(slot);
        }
    }

    /// Jumps over up to `blocks` blocks, a whole number of periods of `period` blocks, without
    /// issuing them: every resident block (and what it ran ahead) becomes the block that many
    /// ids later, keeping its progress, and dispatch goes on from there. The jump is the
    /// longest (of the [`JUMP_TRIES`] longest) in which every resident block and the one it
    /// becomes have the same shape (guards, trips); none when the program is not of the simple
    /// form (cursors know their block). Returns the blocks jumped.
    ///
    /// The schedule is not simulated over the jump, so it goes on as from the same point of a
    /// later period: sampled simulation jumps over waves that nothing counts, a whole number of
    /// waves, so that the waves it counts start where they would have (the ticks,
    /// instructions and lanes of the blocks jumped over are then not the scheduler's to count).
    pub fn fast_forward(&mut self, blocks: u64, period: u64) -> Result<u64> {
        let launch = self.launch;
        let period = period.max(1);
        let most = blocks.min(launch.total_blocks - self.next_block) / period;
        if most == 0 || !launch.program.simple || launch.total_blocks > u32::MAX as u64 {
            return Ok(0);
        }
        let mut resident: Vec<u32> = (self.sms.iter())
            .flat_map(|q| q.ring.iter().map(|&p| q.warps[p as usize].block))
            .collect();
        resident.sort_unstable();
        resident.dedup();
        let shapes = (resident.par_iter())
            .map(|&b| block_warps(launch, b as u64))
            .collect::<Vec<_>>()
            .into_iter()
            .collect::<Result<Vec<_>>>()?;
        let mut delta = 0;
        for k in (most.saturating_sub(JUMP_TRIES - 1)..=most).rev() {
            let d = k * period;
            let differs = (resident.par_iter().zip(&shapes))
                .map(|(&b, shape)| Ok(block_warps(launch, b as u64 + d)? != *shape))
                .collect::<Vec<_>>()
                .into_iter()
                .collect::<Result<Vec<bool>>>()?;
            if !differs.contains(&true) {
                delta = d;
                break;
            }
        }
        if delta == 0 {
            return Ok(0);
        }
        let d = delta as u32;
        for q in &mut self.sms {
            for &p in &q.ring {
                q.warps[p as usize].block += d;
            }
            for i in &mut q.carried {
                *i.block_mut() += d;
            }
            for f in &mut q.finished {
                f.1 += d;
            }
        }
        self.next_block += delta;
        self.renamed = self.renamed.wrapping_add(d);
        self.ready.clear();
        Ok(delta)
    }

    /// Runs up to `ticks` ticks, putting each SM's issues in `out[sm]` and the blocks that
    /// finished on it in `finished[sm]` (both cleared first). Returns the number of ticks run
    /// (fewer only when the launch finished).
    pub fn run(
        &mut self,
        ticks: u32,
        out: &mut [Vec<Issued>],
        finished: &mut [Vec<u32>],
    ) -> Result<u32> {
        self.run_until(ticks, u64::MAX, out, finished)
    }

    /// [`Scheduler::run`], stopping early after the tick in which the blocks dispatched reach
    /// `dispatched` (so that a chunk of ticks never spans two waves of a sampled simulation).
    ///
    /// SMs only meet where a freed slot takes the next block, so each SM runs on its own, tick
    /// after tick, until it frees a slot; the freed slots are then filled in the order of the
    /// tick-by-tick schedule (the tick the SM comes back, then `free_order`, the GPC chains
    /// taking theirs out of turn), each SM running on to its next one.
    /// An SM may run past the chunk's end when the chunk ends early; those issues are kept for
    /// the next chunk. [`Scheduler::tick_by_tick`] runs the reference: all SMs tick by tick.
    pub fn run_until(
        &mut self,
        ticks: u32,
        dispatched: u64,
        out: &mut [Vec<Issued>],
        finished: &mut [Vec<u32>],
    ) -> Result<u32> {
        if self.tick_by_tick {
            return self.run_tick_by_tick(ticks, dispatched, out, finished);
        }
        for ((o, f), q) in out.iter_mut().zip(finished.iter_mut()).zip(&mut self.sms) {
            o.clear();
            // An SM issues at most one instruction a tick: room for a whole chunk at once, so
            // the list never grows by copies (pages it leaves unused are never touched).
            o.reserve(ticks as usize + q.carried.len());
            o.append(&mut q.carried);
            f.clear();
            q.last_issue_end = o.last().map_or(0, |i| i.end());
        }
        if self.done() {
            return Ok(0);
        }
        // The chunk's end: the tick after the one in which `dispatched` was reached.
        let mut end = if self.next_block >= dispatched {
            1.min(ticks)
        } else {
            ticks
        };
        let mut ctx = RunContext::new(
            self.launch,
            self.burst_loads,
            (self.turn_skip, self.warp_drift, self.turnover_turns),
            self.streams.mean_turn_ticks(),
            ticks,
        );
        for (sm, q) in self.sms.iter_mut().enumerate() {
            if !q.waiting
                && let Some((t, block)) = ctx.run_sm(q, &mut out[sm])?
            {
                q.waiting = true;
                self.events
                    .push(Reverse(freed(t, q.clock, block, self.renamed, sm as u32)));
            }
        }
        // Every SM has run to its next freed slot or to the chunk's end, so the slots freed up
        // to any tick before the end are all known.
        while let Some(&Reverse((ready, _, sm, _))) = self.events.peek() {
            if ready >= end {
                break;
            }
            self.events.pop();
            let mut sm = sm;
            loop {
                let placed = self.dispatch(sm)?;
                if self.next_block >= dispatched {
                    end = end.min(ready + 1);
                }
                let q = &mut self.sms[sm as usize];
                q.waiting = false;
                if let Some((t, block)) = ctx.run_sm(q, &mut out[sm as usize])? {
                    q.waiting = true;
                    self.events
                        .push(Reverse(freed(t, q.clock, block, self.renamed, sm)));
                }
                match placed.and_then(|b| self.chained(b, sm, ready)) {
                    Some(next) => sm = next,
                    None => break,
                }
            }
        }
        self.thread_accesses += ctx.thread_accesses;
        if self.next_block >= self.launch.total_blocks && self.sms.iter().all(|q| q.ring.is_empty())
        {
            let last = self.sms.iter().map(|q| q.last_issue_end).max().unwrap_or(0);
            end = end.min(last);
        }
        // What ran past the end belongs to the next chunk, its ticks counted from the end.
        for ((o, f), q) in out.iter_mut().zip(finished.iter_mut()).zip(&mut self.sms) {
            carry_from(o, end, &mut q.carried);
            q.finished.retain_mut(|(t, block)| {
                if *t < end {
                    f.push(*block);
                    false
                } else {
                    *t -= end;
                    true
                }
            });
            q.clock = q.clock.saturating_sub(end);
            if !self.list_issues {
                self.unlisted_instructions += o.iter().map(|i| i.count() as u64).sum::<u64>();
                o.clear();
            }
        }
        if !self.events.is_empty() {
            let events = std::mem::take(&mut self.events);
            self.events = events
                .into_iter()
                .map(|Reverse((ready, key, sm, pause))| Reverse((ready - end, key, sm, pause)))
                .collect();
        }
        self.tick += end as u64;
        Ok(end)
    }

    /// Where the block after `block`, just dispatched to `sm` at the end of tick `ready`, goes
    /// when the dispatcher keeps to `sm`'s GPC ([`Scheduler::gpc_chain`], drawn from the block):
    /// the slot of another SM of the GPC that freed by then and is next in line, taken out of
    /// the queue. Those slots are all known at that tick in either schedule.
    fn chained(&mut self, block: u32, sm: u32, ready: u32) -> Option<u32> {
        if self.gpc_chain <= 0.0
            || unit(block.wrapping_sub(self.renamed) as u64 ^ 0xC4A1_9E57) >= self.gpc_chain
        {
            return None;
        }
        let gpc_of = |s: u32| self.gpc_of_sm.get(s as usize).copied().unwrap_or(0);
        let gpc = gpc_of(sm);
        let first = (self.events.iter())
            .filter(|Reverse((r, _, s, pause))| {
                *s != sm && gpc_of(*s) == gpc && *r <= ready + *pause
            })
            .min()
            .copied()?;
        let mut events = std::mem::take(&mut self.events).into_vec();
        events.retain(|e| *e != first);
        self.events = BinaryHeap::from(events);
        Some(first.0.2)
    }

    /// The reference for [`Scheduler::run_until`]: every SM issues tick by tick, and after each
    /// tick the slots whose SMs come back then take their blocks in [`free_order`], the GPC
    /// chains ([`Scheduler::gpc_chain`]) taking theirs out of turn.
    fn run_tick_by_tick(
        &mut self,
        ticks: u32,
        dispatched: u64,
        out: &mut [Vec<Issued>],
        finished: &mut [Vec<u32>],
    ) -> Result<u32> {
        for o in out.iter_mut() {
            o.clear();
        }
        for f in finished.iter_mut() {
            f.clear();
        }
        let mut ctx = RunContext::new(
            self.launch,
            self.burst_loads,
            (self.turn_skip, self.warp_drift, self.turnover_turns),
            self.streams.mean_turn_ticks(),
            ticks,
        );
        let mut result = Ok(ticks);
        for t in 0..ticks {
            if self.done() {
                result = Ok(t);
                break;
            }
            for (sm, q) in self.sms.iter_mut().enumerate() {
                if q.ring.is_empty() || t < q.clock {
                    continue;
                }
                let (issue, block_done) = ctx.issue_next(q, t)?;
                q.clock = t + 1 + if block_done { ctx.turnover_pause(q) } else { 0 };
                if self.list_issues {
                    out[sm].push(Issued::One(issue));
                } else {
                    self.unlisted_instructions += 1;
                }
                if block_done {
                    finished[sm].push(issue.block);
                    let f = freed(t, q.clock, issue.block, self.renamed, sm as u32);
                    self.events.push(Reverse(f));
                }
            }
            while let Some(&Reverse((ready, _, sm, _))) = self.events.peek() {
                if ready > t {
                    break;
                }
                self.events.pop();
                let mut sm = sm;
                while let Some(b) = self.dispatch(sm)? {
                    match self.chained(b, sm, ready) {
                        Some(next) => sm = next,
                        None => break,
                    }
                }
            }
            self.tick += 1;
            if self.next_block >= dispatched {
                result = Ok(t + 1);
                break;
            }
        }
        if let Ok(ran) = result {
            for q in &mut self.sms {
                q.clock = q.clock.saturating_sub(ran);
            }
            let events = std::mem::take(&mut self.events);
            self.events = (events.into_iter())
                .map(|Reverse((ready, key, sm, pause))| Reverse((ready - ran, key, sm, pause)))
                .collect();
        }
        self.thread_accesses += ctx.thread_accesses;
        result
    }
}

/// The lane accesses (thread accesses) of block `b` of a launch of the simple form.
pub fn block_thread_accesses(launch: &Launch, b: u64) -> Result<u64> {
    Ok(block_warps(launch, b)?
        .iter()
        .filter(|info| info.instructions > 0)
        .map(|info| lane_accesses(&launch.program, info))
        .sum())
}

/// What an SM's issue loop reads.
struct RunContext<'a> {
    launch: &'a Launch,
    burst_loads: bool,
    turn_skip: f32,
    warp_drift: f32,
    /// The chunk's length in ticks.
    limit: u32,
    /// Instructions before the loop, and in its body (simple form).
    layout: Layout,
    /// Per flattened access of the simple form: the loads in a row from it within its part of
    /// the program (before, in or after the loop; 0 for a store or atomic) up to the first that
    /// ends a run, and whether they reach the part's end.
    load_streaks: Vec<(u64, bool)>,
    /// Lanes that issued.
    thread_accesses: u64,
    /// Ticks an SM sits out per warp of a block that finished on it: [`Scheduler::turnover_turns`]
    /// mean turns, a mean turn being the launch's instructions over its turns (a run of loads,
    /// or one other instruction: [`StreamTotals::mean_turn_ticks`]).
    turnover_ticks: u32,
}

impl<'a> RunContext<'a> {
    /// `skips`: [`Scheduler::turn_skip`], [`Scheduler::warp_drift`] and
    /// [`Scheduler::turnover_turns`]; `mean_turn_ticks`: the launch's mean turn.
    fn new(
        launch: &'a Launch,
        burst_loads: bool,
        (turn_skip, warp_drift, turnover_turns): (f32, f32, u32),
        mean_turn_ticks: u32,
        limit: u32,
    ) -> RunContext<'a> {
        let program = &launch.program;
        let layout = program.layout();
        let n = program.accesses.len();
        let mut load_streaks = vec![(0, false); n];
        let part_ends = [layout.pre, layout.pre + layout.body, n as u64];
        for a in (0..n).rev() {
            if program.accesses[a].kind != AccessKind::Load {
                continue;
            }
            let last_of_part = part_ends.contains(&(a as u64 + 1));
            load_streaks[a] = if program.accesses[a].ends_run {
                (1, false)
            } else if last_of_part {
                (1, true)
            } else {
                let (s, to_end) = load_streaks[a + 1];
                (s + 1, to_end)
            };
        }
        RunContext {
            launch,
            burst_loads,
            turn_skip,
            warp_drift,
            limit,
            layout,
            load_streaks,
            thread_accesses: 0,
            turnover_ticks: turnover_turns * mean_turn_ticks,
        }
    }

    /// Runs `q` from its clock until it frees a block slot (returns that tick and the block that
    /// freed it) or reaches the chunk's limit, appending its issues to `out`: a warp of the simple
    /// form issues its run of loads (or its one other instruction) as one [`WarpRun`], exactly
    /// what issuing them tick by tick ([`RunContext::issue_next`]) does.
    fn run_sm(&mut self, q: &mut SmQueue, out: &mut Vec<Issued>) -> Result<Option<(u32, u32)>> {
        while q.clock < self.limit && !q.ring.is_empty() {
            let t = q.clock;
            if self.passes_turns() {
                self.pass_up_turns(q);
            }
            let place = q.ring[q.cursor] as usize;
            let w = &q.warps[place];
            if w.walks || w.info.lane_trips.is_some() {
                // The warp issues its run of loads here, one instruction a tick, while it keeps
                // its turn: the same as going round this loop again, where it would pass no
                // turn up (a warp inside a run never does) and be the ring's warp again.
                loop {
                    let t = q.clock;
                    q.clock += 1;
                    let (issue, block_done) = self.issue_at_cursor(q, t)?;
                    out.push(Issued::One(issue));
                    q.last_issue_end = t + 1;
                    if block_done {
                        q.clock += self.turnover_pause(q);
                        q.finished.push((t, issue.block));
                        return Ok(Some((t, issue.block)));
                    }
                    let keeps_turn =
                        q.ring.get(q.cursor) == Some(&(place as u16)) && q.warps[place].run > 0;
                    if !keeps_turn || q.clock >= self.limit {
                        break;
                    }
                }
                continue;
            }
            let (count, natural) = self.run_length(w, self.limit - t);
            let w = &mut q.warps[place];
            out.push(Issued::Run(WarpRun {
                tick: t,
                block: w.block,
                first: w.next,
                count,
                mask: w.info.mask,
                trips: w.info.trips,
                warp: w.warp,
            }));
            w.next += count as u64;
            q.clock = t + count;
            q.last_issue_end = q.clock;
            if w.next == w.info.instructions {
                let block = w.block;
                if retire(q, place as u16) {
                    q.clock += self.turnover_pause(q);
                    let last = t + count - 1;
                    q.finished.push((last, block));
                    return Ok(Some((last, block)));
                }
            } else if count < natural {
                // The chunk ends inside the run: it goes on in the next one.
                w.run += count;
            } else {
                w.run = 0;
                q.next_warp();
            }
        }
        Ok(None)
    }

    /// How many instructions warp `w` (simple form, no per-lane trips) issues back to back from
    /// its next one, at most `cap`; and the run's own length, its first `cap + 1` counted.
    /// After every load but the last of a run the warp keeps its turn: the next instruction is
    /// a load too, the warp has it, and the run is below `loads_per_run`.
    #[inline]
    fn run_length(&self, w: &ResidentWarp, cap: u32) -> (u32, u32) {
        let remaining = w.info.instructions - w.next;
        let natural = if !self.burst_loads {
            1
        } else {
            let trips = w.info.trips as u64;
            let bound = remaining
                .min((self.launch.loads_per_run - w.run) as u64)
                .min(cap as u64 + 1);
            let mut n = 0;
            let mut i = w.next;
            loop {
                let (streak, to_end) = self.load_streaks[self.layout.decode(i, trips).0];
                n += streak;
                i += streak;
                if streak == 0 || n >= bound || !to_end {
                    break;
                }
            }
            n.clamp(1, bound)
        };
        let natural = natural.min(remaining) as u32;
        (natural.min(cap), natural)
    }

    /// The ticks `q` sits out for the block whose slot it has just freed, the last in
    /// `free_slots` ([`Scheduler::turnover_turns`]).
    #[inline]
    fn turnover_pause(&self, q: &SmQueue) -> u32 {
        let slot = *q.free_slots.last().expect("a block just freed its slot");
        q.slot_warps[slot as usize] * self.turnover_ticks
    }

    /// Whether warps ever pass up their turn.
    #[inline]
    fn passes_turns(&self) -> bool {
        self.turn_skip > 0.0 || self.warp_drift > 0.0
    }

    /// Moves `q`'s cursor past the warps that pass up their turn: a warp at the start of a run
    /// issues unless its (block, warp, turn) draw falls under its chance, its block's (below
    /// `turn_skip`) plus its own (below `warp_drift`). The SM still issues every tick: if every
    /// warp passes, the last one offered issues.
    fn pass_up_turns(&self, q: &mut SmQueue) {
        for _ in 0..q.ring.len() {
            let w = &mut q.warps[q.ring[q.cursor] as usize];
            if w.run > 0 {
                return;
            }
            w.turns += 1;
            let draw = unit(((w.block as u64) << 32) ^ ((w.warp as u64) << 16) ^ w.turns as u64);
            // The chance is below `turn_skip + warp_drift`: most draws need not work it out.
            if draw >= self.turn_skip + self.warp_drift
                || draw >= self.turn_skip * unit(w.block as u64) + self.warp_drift * warp_unit(w)
            {
                return;
            }
            q.next_warp();
        }
    }

    /// The instruction `q` issues at tick `t`, and whether it finished its block (whose slot is
    /// then free).
    fn issue_next(&mut self, q: &mut SmQueue, t: u32) -> Result<(Issue, bool)> {
        if self.passes_turns() {
            self.pass_up_turns(q);
        }
        self.issue_at_cursor(q, t)
    }

    /// [`RunContext::issue_next`] once the warps that pass up their turn are passed.
    #[inline(always)]
    fn issue_at_cursor(&mut self, q: &mut SmQueue, t: u32) -> Result<(Issue, bool)> {
        let program = &self.launch.program;
        let (pre, body) = (self.layout.pre, self.layout.body);
        let place = q.ring[q.cursor];
        let w = &mut q.warps[place as usize];
        let (access, iterations, mask, done) = match w.walks {
            false => {
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
            true => {
                let c = &mut q.cursors[place as usize];
                let step = c.step;
                let done = !c.advance()?;
                self.thread_accesses += step.mask.count_ones() as u64;
                (step.access, step.iterations, step.mask, done)
            }
        };
        let issue = Issue {
            tick: t,
            block: w.block,
            iterations,
            mask,
            warp: w.warp,
            access: access as u16,
        };
        if done {
            return Ok((issue, retire(q, place)));
        } else {
            // A warp issues a run of loads back to back: nothing waits on a load until its
            // value is used, so the scheduler only moves on after the last load of a run (or
            // any other instruction). The compiled code bounds a run: after a load marked
            // `ends_run`, or `loads_per_run` loads, an instruction uses one of them and the warp
            // waits. The next instruction is only decoded where it can matter.
            let keep = self.burst_loads
                && program.accesses[access].kind == AccessKind::Load
                && !program.accesses[access].ends_run
                && w.run + 1 < self.launch.loads_per_run
                && {
                    let next_access = match w.walks {
                        false => program.decode(w.next, w.info.trips as u64).0,
                        true => q.cursors[place as usize].step.access,
                    };
                    program.accesses[next_access].kind == AccessKind::Load
                };
            if keep {
                w.run += 1;
            } else {
                w.run = 0;
                q.next_warp();
            }
        }
        Ok((issue, false))
    }
}

/// Takes the warp at `q`'s cursor (in `place`), which issued its last instruction, off the SM;
/// true when that frees its block's slot.
fn retire(q: &mut SmQueue, place: u16) -> bool {
    let slot = q.warps[place as usize].slot as usize;
    q.ring.remove(q.cursor);
    q.free_places.push(place);
    if q.cursor >= q.ring.len() {
        q.cursor = 0;
    }
    q.live[slot] -= 1;
    if q.live[slot] == 0 {
        q.free_slots.push(slot as u16);
        return true;
    }
    false
}

/// A 64-bit mix of `key`.
fn mix(key: u64) -> u64 {
    let h = key.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h ^ (h >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9)
}

/// A warp's own draw in [0, 1) for [`RunContext::pass_up_turns`], from its block and warp id.
#[inline]
fn warp_unit(w: &ResidentWarp) -> f32 {
    unit(((w.block as u64) << 20) ^ w.warp as u64 ^ 0x5eed)
}

/// A deterministic draw in [0, 1) from `key` (24 bits of its mix).
fn unit(key: u64) -> f32 {
    (mix(key) >> 40) as f32 / (1u64 << 24) as f32
}

/// The queue entry ([`Freed`]) of a slot that `block` freed on `sm` at tick `t`, the SM issuing
/// again at `clock`.
fn freed(t: u32, clock: u32, block: u32, renamed: u32, sm: u32) -> Freed {
    let ready = clock - 1;
    (ready, free_order(block, renamed), sm, ready - t)
}

/// Where a slot freed by `block` comes among the slots freed in the same tick, smallest first
/// (ties: the lower SM id). Slots free in the same tick only because every SM issues in step; the
/// GPU's free at their own instants, and two blocks that end within the same 32 ns of
/// `%globaltimer` ran in one GPC no more often than by chance (12.1-12.8% of such pairs in the
/// H100's logs, 12.3-16.2% in the H200's, chance 11.9%: `tests/data/{h100,h200}/sched/`,
/// `validation/placement_stats.py`). So the order is a hash of the block, which puts no GPC, TPC
/// or SM next to itself; the dispatch order it replaced filled same-tick slots GPC by GPC and ran
/// block b + 1 in block b's GPC for 70-79% of 1024-thread blocks, where the H100 has 13-22%.
/// The hash takes the id less `renamed`, the ids the jumps moved blocks on by, so that a jump
/// leaves the order as it was.
fn free_order(block: u32, renamed: u32) -> u32 {
    (mix(block.wrapping_sub(renamed) as u64 ^ 0xF4EE_0D3B_1C5A_7E29) >> 32) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::hw::HwConfig;
    use crate::input::trace::Kernel;
    use crate::launch::LaunchRequest;

    fn launch(block: [u32; 3], domain: [i64; 3]) -> Launch {
        launch_on(&HwConfig::load("h200").unwrap(), block, domain)
    }

    /// The 7-point stencil `star1` on `hw`.
    fn launch_on(hw: &HwConfig, block: [u32; 3], domain: [i64; 3]) -> Launch {
        kernel_on("star1", hw, block, domain)
    }

    /// The shipped trace `kernel` on `hw`.
    fn kernel_on(kernel: &str, hw: &HwConfig, block: [u32; 3], domain: [i64; 3]) -> Launch {
        let k = Kernel::load(std::path::Path::new(&format!("traces/{kernel}.toml"))).unwrap();
        Launch::new(
            &k,
            hw,
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

    /// Every SM's instructions, one [`Issue`] each.
    fn flat(out: &[Vec<Issued>], l: &Launch) -> Vec<Vec<Issue>> {
        let layout = l.program.layout();
        let expand = |issued: &Vec<Issued>| {
            let mut v = Vec::new();
            for i in issued {
                i.expand(&layout, |i| {
                    v.push(*i);
                    Ok::<(), ()>(())
                })
                .unwrap();
            }
            v
        };
        out.iter().map(expand).collect()
    }

    /// What [`issue_order`] saw.
    struct Seen<'a> {
        /// Ticks run.
        ran: u32,
        /// (warp, access) of every issue of the last SM, the one the block went to.
        seq: Vec<(u16, u16)>,
        /// Every SM's issues.
        out: Vec<Vec<Issue>>,
        scheduler: Scheduler<'a>,
    }

    /// Runs `l` (one block) for up to 100 ticks on 132 SMs dispatched last SM first.
    fn issue_order(l: &Launch, warp_issue: WarpIssue) -> Seen<'_> {
        let order: Vec<u32> = (0..132).rev().collect();
        let mut scheduler = Scheduler::new(l, order, warp_issue).unwrap();
        let mut out = vec![Vec::new(); 132];
        let ran = scheduler
            .run(100, &mut out, &mut vec![Vec::new(); 132])
            .unwrap();
        let out = flat(&out, l);
        let seq = out[131].iter().map(|i| (i.warp, i.access)).collect();
        Seen {
            ran,
            seq,
            out,
            scheduler,
        }
    }

    #[test]
    fn round_robin_over_resident_warps_and_first_wave_order() {
        let l = launch([32, 2, 1], [32, 2, 1]); // one block of two warps
        let Seen {
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
        let Seen {
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
        let Seen { ran, seq, .. } = issue_order(&l, WarpIssue::LoadRuns);
        assert_eq!(ran, 16);
        assert_eq!(seq, two_warps_in_runs(&[0..3, 3..6, 6..7]));
    }

    /// The (warp, access) order of star1's two warps sending each of `runs` of loads in turn,
    /// then their stores.
    fn two_warps_in_runs(runs: &[std::ops::Range<u16>]) -> Vec<(u16, u16)> {
        let mut order = Vec::new();
        for run in runs {
            for warp in 0..2 {
                order.extend(run.clone().map(|a| (warp, a)));
            }
        }
        order.extend([(0, 7), (1, 7)]);
        order
    }

    #[test]
    fn a_run_of_loads_ends_at_a_load_the_trace_marks_ends_run() {
        // star1's 7 loads, the compiled code waiting after loads 1 and 4: warp 0 sends loads
        // 0-1, warp 1 its 0-1, then 2-4 each, then 5-6 each, then the stores.
        let mut l = launch([32, 2, 1], [32, 2, 1]);
        l.program.accesses[1].ends_run = true;
        l.program.accesses[4].ends_run = true;
        let Seen { ran, seq, .. } = issue_order(&l, WarpIssue::LoadRuns);
        assert_eq!(ran, 16);
        assert_eq!(seq, two_warps_in_runs(&[0..2, 2..5, 5..7]));
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
        let blocks: Vec<u32> = flat(&out, &l)[0].iter().map(|i| i.block).collect();
        assert!(blocks[..512].iter().all(|&b| b < 2));
        assert_eq!(&blocks[..2], &[0, 0]);
        // The ring holds block 0's 32 warps, then block 1's; each round visits all 64.
        assert_eq!(
            (blocks[31], blocks[32], blocks[63], blocks[64]),
            (0, 1, 1, 0)
        );
        assert!(blocks[512..].iter().all(|&b| b == 2));
    }

    /// A kernel whose loop runs a different number of trips lane by lane (z marches through it
    /// and stops at the domain's end), behind a guard; with `with_if`, the loop sits in an `if`,
    /// so the program is not of the simple form and warps walk it with cursors.
    fn looped(block: [u32; 3], with_if: bool) -> Launch {
        let lp = r#"{ loop = "k", count = "3", while = "zb * 3 + k < nz", body = [
              { load = "a", index = ["x", "y", "zb * 3 + k"] },
              { load = "a", index = ["x", "y", "zb * 3 + k + 1"] },
              { store = "a", index = ["x", "y", "zb * 3 + k + 2"] },
            ] }"#;
        let lp = if with_if {
            format!(r#"{{ if = "(x + y) % 3 != 1", body = [ {lp} ] }}"#)
        } else {
            lp.to_string()
        };
        let text = format!(
            r#"name = "looped"
[params]
nx = 40
ny = 6
nz = 11
[[arrays]]
name = "a"
element_bytes = 8
dims = ["nx", "ny", "nz + 8"]
[launch]
block = [8, 2, 2]
grid = ["cdiv(nx, blockDim.x)", "cdiv(ny, blockDim.y)", "cdiv(nz, blockDim.z * 3)"]
[thread]
let = [
  "x = blockIdx.x * blockDim.x + threadIdx.x",
  "y = blockIdx.y * blockDim.y + threadIdx.y",
  "zb = blockIdx.z * blockDim.z + threadIdx.z",
]
guard = "x < nx && y < ny && zb * 3 < nz"
lattice_updates = "nx * ny * nz"
body = [
  {{ load = "a", index = ["x", "y", "zb"] }},
  {lp},
  {{ store = "a", index = ["x", "y", "zb"] }},
]
"#
        );
        let k = Kernel::parse(&text, "looped.toml").unwrap();
        let hw = HwConfig::load("h200").unwrap();
        let req = LaunchRequest {
            block: Some(block),
            ..Default::default()
        };
        Launch::new(&k, &hw, &req).unwrap()
    }

    #[test]
    fn each_sm_on_its_own_between_freed_slots_issues_exactly_what_the_tick_by_tick_schedule_does() {
        let mut launches = vec![
            launch([32, 32, 1], [40, 400, 1]),
            launch([32, 2, 1], [72, 30, 5]),
            launch([16, 4, 2], [40, 12, 9]),
        ];
        for block in [[8, 2, 2], [4, 2, 4], [32, 1, 1]] {
            launches.push(looped(block, false));
            launches.push(looped(block, true));
        }
        // Runs of loads cut by the compiler's bound, inside and across the loop's trips.
        for mut l in [launch([32, 2, 1], [72, 30, 5]), looped([8, 2, 2], false)] {
            l.loads_per_run = 2;
            launches.push(l);
        }
        // Runs ended where the trace marks a load `ends_run`: in straight code, before a loop and
        // inside its body, and inside a body that the warps of an `if` walk with cursors.
        for (mut l, marked) in [
            (launch([32, 2, 1], [72, 30, 5]), vec![2, 3]),
            (looped([8, 2, 2], false), vec![0, 1]),
            (looped([8, 2, 2], true), vec![1]),
        ] {
            for a in marked {
                l.program.accesses[a].ends_run = true;
            }
            launches.push(l);
        }
        // Five SMs of two blocks each: waves of ten blocks, freed slots taking the next ones.
        let order = vec![3, 1, 4, 0, 2];
        for l in &mut launches {
            l.occupancy.blocks_per_sm = 2;
            assert!(l.total_blocks > 20, "{} blocks", l.total_blocks);
        }
        let mut compared = 0;
        // Without and with passed-up turns, with SMs sitting out one or three turns per warp of
        // a finished block, and with the dispatcher keeping to a GPC (SMs 3, 1 and 0 in one, 4
        // and 2 in the other) half the time or always.
        let skips = [
            (0.0, 0, 0.0),
            (0.3, 0, 0.0),
            (0.0, 1, 0.0),
            (0.3, 3, 0.0),
            (0.3, 1, 0.5),
            (0.0, 3, 1.0),
        ];
        let gpc_of_sm = vec![0, 0, 1, 0, 1];
        for (l, (turn_skip, turnover, chain)) in launches.iter().flat_map(|l| skips.map(|s| (l, s)))
        {
            for warp_issue in [WarpIssue::RoundRobin, WarpIssue::LoadRuns] {
                // Chunks end at the chunk length, at a wave of `wave` blocks (as in a sampled
                // run, which also stops listing some of them) or where the launch ends.
                for (chunk, wave) in [(64, u64::MAX), (7, 3), (50, 4), (1000, 11)] {
                    let mut event = Scheduler::new(l, order.clone(), warp_issue).unwrap();
                    let mut reference = Scheduler::new(l, order.clone(), warp_issue).unwrap();
                    reference.tick_by_tick = true;
                    event.turn_skip = turn_skip;
                    reference.turn_skip = turn_skip;
                    event.turnover_turns = turnover;
                    reference.turnover_turns = turnover;
                    for s in [&mut event, &mut reference] {
                        (s.gpc_of_sm, s.gpc_chain) = (gpc_of_sm.clone(), chain);
                    }
                    let (mut out_e, mut fin_e) = (vec![Vec::new(); 5], vec![Vec::new(); 5]);
                    let (mut out_r, mut fin_r) = (vec![Vec::new(); 5], vec![Vec::new(); 5]);
                    let mut lanes = 0;
                    for step in 0.. {
                        let until = match wave {
                            u64::MAX => u64::MAX,
                            w => (event.blocks_dispatched() / w + 1) * w,
                        };
                        let listed = wave == u64::MAX || step % 3 != 2;
                        event.list_issues = listed;
                        reference.list_issues = listed;
                        let ran_e = event
                            .run_until(chunk, until, &mut out_e, &mut fin_e)
                            .unwrap();
                        let ran_r =
                            (reference.run_until(chunk, until, &mut out_r, &mut fin_r)).unwrap();
                        assert_eq!(
                            (ran_e, flat(&out_e, l), &fin_e),
                            (ran_r, flat(&out_r, l), &fin_r)
                        );
                        assert_eq!(event.tick, reference.tick);
                        assert!(listed || out_e.iter().all(|o| o.is_empty()));
                        lanes += (flat(&out_e, l).iter().flatten())
                            .map(|i| i.mask.count_ones() as u64)
                            .sum::<u64>();
                        compared += 1;
                        if ran_e == 0 {
                            break;
                        }
                    }
                    assert!(event.done());
                    assert_eq!(event.thread_accesses, reference.thread_accesses);
                    assert_eq!(event.active_warps, reference.active_warps);
                    let unlisted = event.unlisted_instructions;
                    assert_eq!(unlisted, reference.unlisted_instructions);
                    if wave == u64::MAX {
                        // Every issue listed: the lanes counted up front are those issued.
                        assert_eq!(lanes, event.thread_accesses);
                    }
                }
            }
        }
        assert!(compared > 2000, "{compared} chunks");
    }

    /// The turn skip, the warp drift and the turnover turns of a schedule.
    type Skips = (f32, f32, u32);

    /// The SM each block ran on, from a whole run with `skips`.
    fn placement(l: &Launch, order: &[u32], skips: Skips) -> Vec<u32> {
        placement_chained(l, order, skips, Vec::new(), 0.0)
    }

    /// [`placement`] with [`Scheduler::gpc_of_sm`] and [`Scheduler::gpc_chain`] set.
    fn placement_chained(
        l: &Launch,
        order: &[u32],
        skips: Skips,
        gpc_of_sm: Vec<u32>,
        gpc_chain: f32,
    ) -> Vec<u32> {
        let mut s = Scheduler::new(l, order.to_vec(), WarpIssue::LoadRuns).unwrap();
        (s.turn_skip, s.warp_drift, s.turnover_turns) = skips;
        (s.gpc_of_sm, s.gpc_chain) = (gpc_of_sm, gpc_chain);
        let n = order.len();
        let (mut out, mut finished) = (vec![Vec::new(); n], vec![Vec::new(); n]);
        let mut sm_of = vec![u32::MAX; l.total_blocks as usize];
        while s.run(1000, &mut out, &mut finished).unwrap() > 0 {
            for (sm, blocks) in finished.iter().enumerate() {
                for &b in blocks {
                    sm_of[b as usize] = sm as u32;
                }
            }
        }
        assert!(sm_of.iter().all(|&sm| sm != u32::MAX));
        sm_of
    }

    /// Of the blocks from `from + d` on, the share that ran on the SM of the block `d` ids earlier
    /// (`sm_of` from [`placement`]).
    fn same_sm_share(sm_of: &[u32], d: usize, from: usize) -> f64 {
        let pairs = sm_of[from + d..].iter().zip(&sm_of[from..]);
        pairs.filter(|(a, b)| a == b).count() as f64 / (sm_of.len() - d - from) as f64
    }

    #[test]
    fn a_wave_does_not_repeat_the_placement_of_the_wave_before() {
        // The H200's dispatch order, 8 blocks of 256 threads per SM: waves of 1056 blocks.
        let l = launch([32, 4, 2], [256, 256, 64]);
        let order = HwConfig::load("h200").unwrap().dispatch_order();
        let wave = (l.occupancy.blocks_per_sm as usize) * order.len();
        assert_eq!(wave, 1056);
        let same_sm = |sm_of: &[u32], d: usize| same_sm_share(sm_of, d, 0);
        let near = |sm_of: &[u32]| (1..=8).map(|d| same_sm(sm_of, d)).fold(0.0, f64::max);
        // The H200's logs of these blocks (shared/measurements/h200/sched_32x4x2.csv.gz) put a
        // block on the SM of the block one wave earlier 1.2% of the time, and on that of one 1-8
        // ids earlier at most 0.6% (chance: 1 in 132). Even in lockstep (no turn skip), where all
        // SMs free their slots in the same ticks, the free order keeps a wave from taking the
        // places of the one before (filled in dispatch order, every block ran where the block a
        // wave earlier had); so does the configs' turn skip of 2%, which breaks the lockstep, with
        // or without the SM sitting out a turn per warp of a finished block.
        for skips in [(0.0, 0.0, 0), (0.02, 0.0, 0), (0.02, 0.0, 1)] {
            let sm_of = placement(&l, &order, skips);
            assert!(same_sm(&sm_of, wave) < 0.03, "{}", same_sm(&sm_of, wave));
            assert!(near(&sm_of) < 0.015, "{}", near(&sm_of));
            // Deterministic: the same placement again.
            assert_eq!(placement(&l, &order, skips), sm_of);
        }
    }

    #[test]
    fn an_sm_that_sits_out_its_finished_blocks_turns_keeps_star4_blocks_from_their_neighbours() {
        // star4's narrow 2x32x4 blocks in 10 waves along x (as launches-occupancy-waves.txt,
        // tests/l1_occupancy.rs, in half the length). The H100's logs of star4 put a block on the
        // SM of one 1-7 ids earlier 0.5-0.6% of the time, 2x32x4 and 2x16x8 included, less than
        // by chance (1 in 132; tests/data/h100/sched/placement_near.csv; the logging kernel holds
        // 6 blocks per SM, not 8). A 2-wide block shares each 128-byte line with those 7
        // neighbours, so a neighbour on the same SM turns misses into hits.
        let hw = HwConfig::load("h100-sxm").unwrap();
        let l = kernel_on("star4", &hw, [2, 32, 4], [21120, 32, 4]);
        let order = hw.dispatch_order();
        let wave = (l.occupancy.blocks_per_sm as usize) * order.len();
        let near = |sm_of: &[u32]| -> f64 {
            (1..8).map(|d| same_sm_share(sm_of, d, wave)).sum::<f64>() / 7.0
        };
        let text = std::fs::read_to_string("tests/data/h100/sched/placement_near.csv").unwrap();
        let gpu: Vec<f64> = (text.lines().skip(1))
            .map(|r| r.split(',').nth(3).unwrap().parse().unwrap())
            .collect();
        assert_eq!(gpu.len(), 6);
        assert!(
            gpu.iter().all(|&g| (0.004..1.0 / 132.0).contains(&g)),
            "{gpu:?}"
        );
        // The configs' turn skip alone breaks the lockstep, but an SM's blocks, which start
        // together, end in clusters a few ticks apart and take consecutive blocks: after the
        // first wave a block runs on the SM of one 1-7 ids earlier 3.6% of the time on average
        // (3.2-4.1% at each distance), six times the GPU's; the 20-wave launch's L1 misses were
        // 23-28% short of the H100's.
        let (turn_skip, drift, turnover) = skips_of(&hw);
        assert_eq!(turnover, 1);
        let turn_skip_alone = near(&placement(&l, &order, (turn_skip, drift, 0)));
        assert!(
            (0.03..0.045).contains(&turn_skip_alone),
            "{turn_skip_alone:.4}"
        );
        assert!(gpu.iter().all(|&g| turn_skip_alone > 5.0 * g));
        // Sitting out a turn per warp of a finished block (32 ticks for these 8 warps) keeps the
        // SM's next free at least that far off, and the blocks freed meanwhile elsewhere come
        // between: the share falls below the GPU's (the L1 misses come to 12-17% short).
        let shipped = near(&placement(&l, &order, skips_of(&hw)));
        assert!(shipped < 0.002, "{shipped:.4}");
        // In lockstep (no turn skip) it is as low: every SM frees its slots in the same ticks and
        // the free order deals the blocks out.
        let lockstep = near(&placement(&l, &order, (0.0, 0.0, 0)));
        assert!(lockstep < 0.002, "{lockstep:.4}");
    }

    /// The median life of a block after the first wave, in ticks: its first warp's first issue
    /// to its last warp's last.
    fn median_block_life(l: &Launch, order: &[u32], skips: Skips) -> f64 {
        let mut s = Scheduler::new(l, order.to_vec(), WarpIssue::LoadRuns).unwrap();
        (s.turn_skip, s.warp_drift, s.turnover_turns) = skips;
        let n = order.len();
        let (mut out, mut finished) = (vec![Vec::new(); n], vec![Vec::new(); n]);
        let mut life = vec![(u64::MAX, 0u64); l.total_blocks as usize];
        let mut base = 0u64;
        loop {
            let ticks = s.run(1000, &mut out, &mut finished).unwrap();
            if ticks == 0 {
                break;
            }
            for issued in out.iter().flatten() {
                let block = match issued {
                    Issued::Run(r) => r.block,
                    Issued::One(i) => i.block,
                };
                let span = &mut life[block as usize];
                span.0 = span.0.min(base + issued.tick() as u64);
                span.1 = span.1.max(base + issued.end() as u64);
            }
            base += ticks as u64;
        }
        let wave = l.occupancy.blocks_per_sm as usize * n;
        let mut lives: Vec<f64> = life[wave..].iter().map(|(a, b)| (b - a) as f64).collect();
        lives.sort_by(f64::total_cmp);
        lives[lives.len() / 2]
    }

    #[test]
    fn the_turnover_is_as_long_against_a_blocks_life_as_the_gpus_wait_for_the_next_block() {
        // tests/data/h100/sched/dispatch_delay.csv (validation/dispatch_delay.py over the H100's
        // star4 logs at 640x512x64): the next block on an SM starts a median 160 ns after the last
        // one there ends (288 and 384 ns for the 2-wide blocks), 3.7-6.8% of a median block's
        // life. A turn per warp of star4 (4 ticks) is 32 ticks for 8 warps and 128 for 32: 2.1-2.4%
        // of the simulated life of the 256-thread blocks, 7.7% for the 1024-thread 32x8x4 (6.6%
        // logged). The pause grows with the block's warps where the GPU's wait barely does, so it
        // is short for small blocks; two turns per warp count the same on the 20-wave launches of
        // tests/l1_occupancy.rs (docs/model.md "Schedule").
        let path = std::path::Path::new("tests/data/h100/sched/dispatch_delay.csv");
        let table = crate::input::table::Table::load(path).unwrap();
        let shares = table.numbers("delay_over_life").unwrap();
        let hw = HwConfig::load("h100-sxm").unwrap();
        let order = hw.dispatch_order();
        let mut compared = 0;
        for (log, share) in table.text("log").unwrap().into_iter().zip(shares) {
            let Some(shape) = log.strip_prefix("sched_star4_") else {
                continue;
            };
            let shape = shape.trim_end_matches(".csv.gz");
            let dims: Vec<u32> = shape.split('x').map(|d| d.parse().unwrap()).collect();
            let gpu = share.unwrap();
            // An eighth of the logged depth: the same blocks, eight times fewer waves.
            let l = kernel_on("star4", &hw, [dims[0], dims[1], dims[2]], [640, 512, 8]);
            let warps = (dims.iter().product::<u32>() / 32) as f64;
            let pause = warps * 4.0;
            let share = pause / median_block_life(&l, &order, skips_of(&hw));
            let expected = if warps == 8.0 {
                0.019..0.026
            } else {
                0.07..0.085
            };
            assert!(expected.contains(&share), "{shape}: {share:.3}");
            assert!(
                (0.3..1.5).contains(&(share / gpu)),
                "{shape}: {share:.3} against {gpu}"
            );
            compared += 1;
        }
        assert_eq!(compared, 7);
    }

    #[test]
    fn an_sm_sits_out_a_turn_per_warp_of_a_block_that_ends_before_it_issues_again() {
        // 3 blocks of 1024 threads (32 warps of star1's 8 instructions) on one SM, 2 resident,
        // one instruction a turn: without the turnover they take 768 ticks (see
        // freed_slots_take_the_next_blocks). Block 0's warps issue their last instructions at
        // ticks 448-479; the SM then sits out 32 ticks, so block 1's last round runs at ticks
        // 512-543, and after another 32 block 2 runs alone from 576 to 831.
        let l = launch([32, 32, 1], [32, 96, 1]);
        let mut s = Scheduler::new(&l, vec![0], WarpIssue::RoundRobin).unwrap();
        s.turnover_turns = 1;
        let mut out = vec![Vec::new(); 1];
        let ran = s.run(1_000_000, &mut out, &mut vec![Vec::new(); 1]);
        assert_eq!(ran.unwrap(), 832);
        let issues = &flat(&out, &l)[0];
        assert_eq!(issues.len(), 768);
        let ticks_of = |b: u32| -> Vec<u32> {
            (issues.iter().filter(|i| i.block == b))
                .map(|i| i.tick)
                .collect()
        };
        let (t0, t1, t2) = (ticks_of(0), ticks_of(1), ticks_of(2));
        assert_eq!(*t0.last().unwrap(), 479);
        assert_eq!(t1[t1.len() - 32..], (512..544).collect::<Vec<_>>()[..]);
        assert_eq!(t2[0], 576);
        assert_eq!(*t2.last().unwrap(), 831);
        // Nothing issues while the SM sits out the turns.
        assert!(issues.iter().all(|i| !(480..512).contains(&i.tick)));
        assert!(issues.iter().all(|i| !(544..576).contains(&i.tick)));
    }

    #[test]
    fn a_mean_turn_is_a_programs_instructions_over_its_runs_of_loads_and_other_instructions() {
        let hw = HwConfig::load("h100-sxm").unwrap();
        let turn = |kernel: &str, burst: bool| {
            let l = kernel_on(kernel, &hw, [32, 8, 4], [256, 256, 256]);
            let issue = if burst {
                WarpIssue::LoadRuns
            } else {
                WarpIssue::RoundRobin
            };
            let s = Scheduler::new(&l, vec![0], issue).unwrap();
            RunContext::new(&l, burst, (0.0, 0.0, 1), s.streams().mean_turn_ticks(), 100)
                .turnover_ticks
        };
        // star1: 7 loads in one run and a store, 8 instructions in 2 turns; star4: 25 loads in
        // runs of 5, 4, 4, 6 and 6 and a store, 26 in 6 (4.33); box27: 27 loads in runs of 8,
        // 3, 6 and 10 and a store, 28 in 5 (5.6); copy: a load and a store.
        assert_eq!(turn("star1", true), 4);
        assert_eq!(turn("star4", true), 4);
        assert_eq!(turn("box27", true), 6);
        assert_eq!(turn("copy", true), 1);
        // One instruction a turn when warps take turns instruction by instruction.
        assert_eq!(turn("star4", false), 1);
    }

    /// The turn skip, warp drift and turnover turns of `hw`.
    fn skips_of(hw: &HwConfig) -> Skips {
        let s = &hw.schedule;
        let f = |p: Option<f64>| p.unwrap_or(0.0) as f32;
        (
            f(s.turn_skip),
            f(s.warp_drift),
            s.turnover_turns.unwrap_or(0),
        )
    }

    /// When the warps of blocks `first..first + count` of `l` end, as fractions of their block's
    /// life (its first warp's first issue to its last warp's last), with `skips` (see
    /// [`placement`]).
    fn warp_end_fractions(
        l: &Launch,
        order: &[u32],
        skips: Skips,
        first: u32,
        count: u32,
    ) -> Vec<f64> {
        let mut s = Scheduler::new(l, order.to_vec(), WarpIssue::LoadRuns).unwrap();
        (s.turn_skip, s.warp_drift, s.turnover_turns) = skips;
        let n = order.len();
        let (mut out, mut finished) = (vec![Vec::new(); n], vec![Vec::new(); n]);
        let blocks = first..first + count;
        // Per block and warp: first issue and end of the last, in ticks since the start.
        let mut warps = vec![std::collections::BTreeMap::new(); count as usize];
        let (mut base, mut done) = (0u64, 0);
        while done < count {
            let ticks = s.run(1000, &mut out, &mut finished).unwrap();
            assert!(ticks > 0, "the run ended before blocks {blocks:?} did");
            for issued in out.iter().flatten() {
                let (block, warp) = match issued {
                    Issued::Run(r) => (r.block, r.warp),
                    Issued::One(i) => (i.block, i.warp),
                };
                if blocks.contains(&block) {
                    let start = base + issued.tick() as u64;
                    let times = warps[(block - first) as usize].entry(warp);
                    times.or_insert((start, 0)).1 = base + issued.end() as u64;
                }
            }
            let ended = finished.iter().flatten().filter(|b| blocks.contains(b));
            done += ended.count() as u32;
            base += ticks as u64;
        }
        let mut fractions = Vec::new();
        for block in &warps {
            let start = block.values().map(|w| w.0).min().unwrap();
            let life = (block.values().map(|w| w.1).max().unwrap() - start) as f64;
            fractions.extend(block.values().map(|w| (w.1 - start) as f64 / life));
        }
        fractions
    }

    /// The nine deciles of `values`, as Python's `statistics.quantiles(n=10)` (the default
    /// "exclusive" method) computes them.
    fn deciles(mut values: Vec<f64>) -> Vec<f64> {
        values.sort_by(f64::total_cmp);
        let n = values.len();
        (1..10)
            .map(|i| {
                let at = (i * (n + 1)) as f64 / 10.0;
                let j = (at.floor() as usize).clamp(1, n - 1);
                let delta = at - j as f64;
                values[j - 1] + (values[j] - values[j - 1]) * delta
            })
            .collect()
    }

    #[test]
    fn a_warp_drift_of_a_fifth_spreads_the_ends_of_a_blocks_warps_as_on_the_h100() {
        // tests/data/h100/micro/warp_timeline_deciles.csv (validation/warp_timeline_summary.py
        // over clock64 logs of 300 blocks per launch, validation/warp_timeline.cu): when each
        // warp ends, as a fraction of its block's life, deciles.
        let text = std::fs::read_to_string("tests/data/h100/micro/warp_timeline_deciles.csv");
        let measured: Vec<(String, Vec<f64>)> = (text.unwrap().lines().skip(1))
            .map(|r| r.split(',').collect::<Vec<_>>())
            .filter(|f| f[3] == "warp_end")
            .map(|f| {
                (
                    f[0].to_string(),
                    f[4..].iter().map(|d| d.parse().unwrap()).collect(),
                )
            })
            .collect();
        assert_eq!(measured.len(), 8);
        let hw = HwConfig::load("h100-sxm").unwrap();
        let order = hw.dispatch_order();
        // Mean |simulated - measured| decile over the launches, with `skips`.
        let distance = |skips: Skips| {
            let mut total = 0.0;
            for (name, gpu) in &measured {
                let (kernel, shape) = name.split_once(' ').unwrap();
                let dims: Vec<u32> = shape.split('x').map(|d| d.parse().unwrap()).collect();
                let domain = if kernel == "star4" {
                    [640, 512, 512]
                } else {
                    [256; 3]
                };
                let l = kernel_on(kernel, &hw, [dims[0], dims[1], dims[2]], domain);
                // 300 blocks after the first wave, as the logs hold 300 from mid-run.
                let wave = l.occupancy.blocks_per_sm * order.len() as u32;
                let sim = deciles(warp_end_fractions(&l, &order, skips, wave, 300));
                let off = sim.iter().zip(gpu).map(|(s, g)| (s - g).abs()).sum::<f64>() / 9.0;
                total += off / measured.len() as f64;
            }
            total
        };
        // With the configs' turn skip, a warp drift of 0.2 is the value of 0, 0.05, ..., 0.4 that
        // comes closest (0.066; 0.15: 0.076, 0.25: 0.067, 0.3: 0.071). Without it, as the configs
        // have it (docs/model.md "Schedule": the drift is not shipped), the warps of a block end
        // together, all but the last round's: 0.141. The GPU's star4 1x16x64 warps end between
        // 77% and 97% of their block's life (deciles 1 to 9), the simulated ones between 67% and
        // 98% with the drift and between 87% and 100% without.
        let (turn_skip, _, turnover) = skips_of(&hw);
        assert_eq!(skips_of(&hw), (0.02, 0.0, 1));
        let with = distance((turn_skip, 0.2, turnover));
        assert!(with < 0.075, "{with:.3}");
        let without = distance((turn_skip, 0.0, turnover));
        assert!(without > 0.12, "{without:.3}");
    }

    /// [`crate::sim::gpc_chain_chance`] of `l` on `hw`, as the simulation draws it.
    fn gpc_chance(l: &Launch, hw: &HwConfig) -> f32 {
        let load_runs = hw.schedule.warp_issue == WarpIssue::LoadRuns;
        let streams = StreamTotals::of_launch(l, load_runs).unwrap();
        crate::sim::gpc_chain_chance(l, hw, &streams)
    }

    /// Measured rows of `tests/data/{gpu}/sched/placement.csv` (`validation/placement_stats.py`):
    /// (block shape, resident blocks per SM, same GPC, same TPC, same SM, same side of the L2).
    fn measured_placement(gpu: &str) -> Vec<([u32; 3], u32, f64, f64, f64, f64)> {
        let path = format!("tests/data/{gpu}/sched/placement.csv");
        let table = crate::input::table::Table::load(std::path::Path::new(&path)).unwrap();
        let column = |name: &str| -> Vec<f64> {
            (table.numbers(name).unwrap().into_iter())
                .map(|v| v.unwrap())
                .collect()
        };
        let (slots, gpc, tpc) = (column("slots"), column("same_gpc"), column("same_tpc"));
        let (sm, side) = (column("same_sm"), column("same_side"));
        (table.text("log").unwrap().iter().enumerate())
            .map(|(i, log)| {
                let shape = log.trim_start_matches("sched_").trim_end_matches(".csv.gz");
                let dims: Vec<u32> = shape.split('x').map(|d| d.parse().unwrap()).collect();
                let block = [dims[0], dims[1], dims[2]];
                (block, slots[i] as u32, gpc[i], tpc[i], sm[i], side[i])
            })
            .collect()
    }

    #[test]
    fn the_chance_to_keep_to_a_gpc_is_its_block_rate_times_the_window() {
        let hw = HwConfig::load("h100-sxm").unwrap();
        assert_eq!(hw.schedule.gpc_window_ns, Some(4.5));
        let l = launch_on(&hw, [256, 1, 1], [256, 256, 256]);
        // Both arrays once to or from DRAM, at the launch's active warps, through the time
        // model while every slot is taken.
        let footprint = 2.0 * 264.0 * 264.0 * 264.0 * 8.0;
        let inputs = crate::sim::queueing::TimeInputs {
            dram_bytes: Some(footprint),
            active_warps: Some(65536.0 * 8.0),
            rounds_per_warp: 1.0,
            ..Default::default()
        };
        let busy_ns = crate::sim::queueing::steady_busy_seconds(&hw, &l, &inputs) * 1e9;
        let chance = gpc_chance(&l, &hw) as f64;
        assert!(
            (chance - 4.5 * 65536.0 / 8.0 / busy_ns).abs() < 1e-6,
            "{chance}"
        );
        // About 0.34: 8192 blocks per GPC over some 108 us, where the H100's log has 43.4% of
        // the blocks in their predecessor's GPC, 11.9% by chance.
        assert!((0.3..0.4).contains(&chance), "{chance}");
        // 1024-thread blocks with 8 active warps of 32 come four times slower per GPC.
        let wide = launch_on(&hw, [1024, 1, 1], [256, 256, 256]);
        let wide_chance = gpc_chance(&wide, &hw) as f64;
        assert!((0.08..0.16).contains(&wide_chance), "{wide_chance}");
        // A GPU without the window never keeps to a GPC.
        let a100 = HwConfig::load("a100-40gb").unwrap();
        assert_eq!(a100.schedule.gpc_window_ns, None);
        let l = launch_on(&a100, [256, 1, 1], [256, 256, 256]);
        assert_eq!(gpc_chance(&l, &a100), 0.0);
    }

    #[test]
    fn after_the_first_wave_consecutive_blocks_share_a_gpc_as_often_as_on_the_gpus() {
        for (config, gpu) in [("h100-sxm", "h100"), ("h200", "h200")] {
            // The GPCs as the L2 request coalescer groups SMs (validation/l2_gpc_map.py --csv):
            // the configs' `gpc_sms`.
            let map = std::fs::read_to_string(format!("tests/data/{gpu}/micro/l2_gpc_map.csv"));
            let gpc: Vec<u32> = (map.unwrap().lines().skip(1))
                .map(|r| r.split_once(',').unwrap().1.parse().unwrap())
                .collect();
            assert_eq!(gpc.len(), 132);
            let hw = HwConfig::load(config).unwrap();
            assert_eq!(hw.gpc_of_sms(), gpc, "{config}: gpc_sms");
            let order = hw.dispatch_order();
            let measured = measured_placement(gpu);
            assert_eq!(measured.len(), 4);
            let near = hw.near_partition_of_sms();
            for (block, slots, gpu_gpc, gpu_tpc, gpu_sm, gpu_side) in measured {
                // The logs' kernel: sched.cu's 7-point stencil at 256^3.
                let l = launch_on(&hw, block, [256, 256, 256]);
                assert_eq!(l.occupancy.blocks_per_sm, slots, "{gpu} {block:?}");
                let what = format!("{gpu} {block:?}");
                let wave = slots as usize * order.len();
                // Shares of blocks b whose block b + 1 ran in the same GPC, TPC, SM and side.
                let shares = |chain: f32| {
                    let sm_of = placement_chained(&l, &order, skips_of(&hw), gpc.clone(), chain);
                    let pairs = sm_of[wave..].iter().zip(&sm_of[wave + 1..]);
                    let n = (sm_of.len() - wave - 1) as f64;
                    let share = |same: &dyn Fn(u32, u32) -> bool| {
                        pairs.clone().filter(|&(&a, &b)| same(a, b)).count() as f64 / n
                    };
                    [
                        share(&|a, b| gpc[a as usize] == gpc[b as usize]),
                        share(&|a, b| a / 2 == b / 2),
                        share(&|a, b| a == b),
                        share(&|a, b| near[a as usize] == near[b as usize]),
                    ]
                };
                // Slots taking their blocks in the order their SMs come back, consecutive blocks
                // share a GPC about as often as by chance (11.9%), and a side of the L2 too
                // (65 / 131), where the GPUs have 13-52% and 50-79%.
                let [by_chance, _, _, side_by_chance] = shares(0.0);
                assert!((0.09..0.15).contains(&by_chance), "{what}: {by_chance:.3}");
                assert!((0.45..0.55).contains(&side_by_chance), "{what}");
                // The dispatcher keeping to the GPC of the last block (`gpc_window_ns`) brings both
                // within 0.07 of the logs: 0.22 / 0.18 / 0.18 / 0.44 on the H100 (1024x1x1,
                // 32x8x4, 1x16x64, 256x1x1; logged 0.22 / 0.19 / 0.13 / 0.43) and 0.23 / 0.53 on
                // the H200 (1024x1x1, the 256-thread blocks; logged 0.24 / 0.46-0.52). 1x16x64
                // is L1-bound, so its time is underestimated and its chance overstated. The
                // H200's three 256-thread logs spread over 0.46-0.52 for one simulated 0.53, so
                // the bound is 0.075 (0.0701 off the 8x8x4 log since the time model's launch
                // station and per-load delay, 0.0699 before).
                let chance = gpc_chance(&l, &hw);
                let [same_gpc, same_tpc, same_sm, same_side] = shares(chance);
                assert!(
                    (same_gpc - gpu_gpc).abs() < 0.075,
                    "{what}: same GPC {same_gpc:.3}, GPU {gpu_gpc:.3}"
                );
                assert!(
                    (same_side - gpu_side).abs() < 0.07,
                    "{what}: same side {same_side:.3}, GPU {gpu_side:.3}"
                );
                // The GPU also favours the TPC of the last block (7-12% of the 256-thread
                // blocks against the simulated 3%, not modelled), but never its SM: the chain
                // skips the SM itself.
                assert!(
                    same_tpc < gpu_tpc + 0.01,
                    "{what}: same TPC {same_tpc:.3}, GPU {gpu_tpc:.3}"
                );
                assert!(
                    same_sm < gpu_sm + 0.005,
                    "{what}: same SM {same_sm:.3}, GPU {gpu_sm:.3}"
                );
            }
        }
    }

    #[test]
    fn a_jump_goes_on_as_the_schedule_would_from_the_same_point_blocks_later() {
        // Blocks all of one shape: after a jump of 40 blocks the schedule is the one without the
        // jump, every block 40 ids on.
        let mut l = launch([32, 2, 1], [64, 64, 16]);
        l.occupancy.blocks_per_sm = 2;
        let order = vec![3, 1, 4, 0, 2];
        let mut jumping = Scheduler::new(&l, order.clone(), WarpIssue::LoadRuns).unwrap();
        let mut through = Scheduler::new(&l, order, WarpIssue::LoadRuns).unwrap();
        let (mut out_j, mut fin_j) = (vec![Vec::new(); 5], vec![Vec::new(); 5]);
        let (mut out_t, mut fin_t) = (vec![Vec::new(); 5], vec![Vec::new(); 5]);
        jumping.run(37, &mut out_j, &mut fin_j).unwrap();
        through.run(37, &mut out_t, &mut fin_t).unwrap();
        assert_eq!(jumping.fast_forward(45, 10).unwrap(), 40);
        assert_eq!(
            jumping.blocks_dispatched(),
            through.blocks_dispatched() + 40
        );
        for _ in 0..20 {
            jumping.run(29, &mut out_j, &mut fin_j).unwrap();
            through.run(29, &mut out_t, &mut fin_t).unwrap();
            let later = |o: &Vec<Vec<Issue>>| -> Vec<Vec<Issue>> {
                (o.iter())
                    .map(|v| {
                        v.iter()
                            .map(|i| Issue {
                                block: i.block + 40,
                                ..*i
                            })
                            .collect()
                    })
                    .collect()
            };
            assert_eq!(flat(&out_j, &l), later(&flat(&out_t, &l)));
            let fin_later: Vec<Vec<u32>> = (fin_t.iter())
                .map(|v| v.iter().map(|b| b + 40).collect())
                .collect();
            assert_eq!(fin_j, fin_later);
        }
    }

    #[test]
    fn a_jump_keeps_every_resident_block_s_shape_or_is_not_made() {
        // 40 points in x with 32-wide blocks: even blocks are full, odd ones have 8 lanes.
        let mut l = launch([32, 2, 1], [40, 64, 16]);
        l.occupancy.blocks_per_sm = 2;
        let mut s = Scheduler::new(&l, vec![3, 1, 4, 0, 2], WarpIssue::LoadRuns).unwrap();
        let resident = |s: &Scheduler| -> Vec<(u32, u16, WarpInfo)> {
            let mut v: Vec<_> = (s.sms.iter())
                .flat_map(|q| q.ring.iter().map(|&p| &q.warps[p as usize]))
                .map(|w| (w.block, w.warp, w.info.clone()))
                .collect();
            v.sort_by_key(|(b, w, _)| (*b, *w));
            v
        };
        let before = resident(&s);
        // Jumps of 3·k blocks: only even k keeps odd blocks odd. The longest within 40 is 36.
        assert_eq!(s.fast_forward(40, 3).unwrap(), 36);
        let after = resident(&s);
        assert_eq!(before.len(), after.len());
        assert!(before.iter().any(|(_, _, i)| i.mask == 0xFF));
        for ((b, w, info), (b2, w2, info2)) in before.iter().zip(&after) {
            assert_eq!((*b2, w2, info2), (b + 36, w, info));
            assert_eq!(*info2, block_warps(&l, *b2 as u64).unwrap()[*w2 as usize]);
        }
        // A period that can never keep the parity finds no jump.
        let mut s = Scheduler::new(&l, vec![3, 1, 4, 0, 2], WarpIssue::LoadRuns).unwrap();
        assert_eq!(s.fast_forward(1, 1).unwrap(), 0);
        // Cursors know their block: a program not of the simple form is never jumped.
        let mut general = looped([8, 2, 2], true);
        general.occupancy.blocks_per_sm = 1;
        let mut s = Scheduler::new(&general, vec![0, 1], WarpIssue::LoadRuns).unwrap();
        assert_eq!(s.fast_forward(10, 1).unwrap(), 0);
    }

    /// When each warp of the L2 capacity sweep (`traces/l2-sweep.toml`, one wave) starts pass 3, as
    /// a fraction of the launch's span: the spread between the first and ninth decile over the
    /// warps, with the turn skip `turn_skip`.
    fn sweep_pass3_spread(hw: &HwConfig, m: i64, rot: i64, turn_skip: f32) -> f64 {
        let k = Kernel::load(std::path::Path::new("traces/l2-sweep.toml")).unwrap();
        let set = vec![("m".to_string(), m), ("rot".to_string(), rot)];
        let req = LaunchRequest {
            block: None,
            domain: None,
            set,
        };
        let l = Launch::new(&k, hw, &req).unwrap();
        let order = hw.dispatch_order();
        let mut s = Scheduler::new(&l, order.clone(), WarpIssue::LoadRuns).unwrap();
        s.turn_skip = turn_skip;
        let (mut out, mut finished) =
            (vec![Vec::new(); order.len()], vec![Vec::new(); order.len()]);
        // Per (block, warp): loads issued so far, the tick of its first load of pass 3, its end.
        let mut warps: std::collections::HashMap<(u32, u32), (u64, u64, u64)> =
            std::collections::HashMap::new();
        let pass3 = 3 * m as u64;
        let mut base = 0u64;
        while !s.done() {
            let ticks = s.run(1000, &mut out, &mut finished).unwrap();
            for issued in out.iter().flatten() {
                let (block, warp) = match issued {
                    Issued::Run(r) => (r.block, r.warp as u32),
                    Issued::One(i) => (i.block, i.warp as u32),
                };
                let w = warps.entry((block, warp)).or_insert((0, 0, 0));
                let count = issued.count() as u64;
                if (w.0..w.0 + count).contains(&pass3) {
                    w.1 = base + issued.tick() as u64 + (pass3 - w.0);
                }
                w.0 += count;
                w.2 = base + issued.end() as u64;
            }
            base += ticks as u64;
        }
        let span = warps.values().map(|w| w.2).max().unwrap() as f64;
        let d = deciles(warps.values().map(|w| w.1 as f64 / span).collect());
        d[8] - d[0]
    }

    #[test]
    fn the_warps_of_the_capacity_sweep_drift_apart_on_the_gpus_more_than_in_the_tick_schedule() {
        // validation/l2_capacity_skew.sh (%globaltimer at every pass boundary of every warp,
        // tests/data/{h100,h200}/micro/l2_capacity_skew.csv): by the start of pass 3 the warps of
        // the one wave are spread over 0.10-0.16 of the launch (first to ninth decile; H100
        // 0.102/0.137 at m = 16/20 with rot 1, 0.106/0.162 with rot 8; H200 0.135/0.110,
        // 0.141/0.133), alike on both GPUs. The schedule, with the configs' turn skip (0.02),
        // spreads them over 0.057-0.060; a turn skip of 0.1 over 0.117-0.129, about as the GPUs
        // do, and replays the H100's capacity curve closer (tests/l2_capacity.rs: mean gap 0.111
        // -> 0.035) but the H200's further (0.023 -> 0.086): the spread is not what sets the two
        // GPUs' curves apart (docs/model.md "L2").
        for (gpu, config) in [("h100", "h100-sxm"), ("h200", "h200")] {
            let path = format!("tests/data/{gpu}/micro/l2_capacity_skew.csv");
            let text = std::fs::read_to_string(path).unwrap();
            let hw = HwConfig::load(config).unwrap();
            let turn_skip = skips_of(&hw).0;
            let mut checked = 0;
            for row in text.lines().skip(1) {
                let f: Vec<&str> = row.split(',').collect();
                let (rot, m): (i64, i64) = (f[0].parse().unwrap(), f[1].parse().unwrap());
                if f[4] != "pass3" || m > 20 {
                    continue;
                }
                let gpu_spread = f[13].parse::<f64>().unwrap() - f[5].parse::<f64>().unwrap();
                assert!(
                    (0.10..0.17).contains(&gpu_spread),
                    "{gpu} m {m} rot {rot}: {gpu_spread:.3}"
                );
                let shipped = sweep_pass3_spread(&hw, m, rot, turn_skip);
                assert!(
                    shipped < 0.6 * gpu_spread,
                    "{gpu} m {m} rot {rot}: {shipped:.3} simulated, {gpu_spread:.3} measured"
                );
                let skewed = sweep_pass3_spread(&hw, m, rot, 0.1);
                assert!(
                    (skewed - gpu_spread).abs() < 0.05,
                    "{gpu} m {m} rot {rot}: {skewed:.3} simulated, {gpu_spread:.3} measured"
                );
                checked += 1;
            }
            assert_eq!(checked, 4, "{gpu}");
        }
    }
}
