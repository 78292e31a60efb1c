//! A reference simulator for the differential tests: the simplest code that can be right, to
//! check the production pipeline (`gputraffic::sim`) against, counter by counter.
//!
//! It schedules tick by tick with production's dispatch and issue policy (docs/model.md
//! "Schedule"), walks every warp with the launch's [`WarpCursor`], evaluates every active lane's
//! address from the bound index expression, coalesces each warp instruction by collecting its
//! lanes' sectors line by line, and sends it through the SM's L1, then (one request at a time,
//! in global order: tick, then SM) through the L2 partitions and DRAM, all plain
//! set-associative caches ([`cache`], [`l2`]). None of production's run-length issue, line
//! patterns, block footprint tables, shards, chunks or sampling is here, and nothing of
//! `gputraffic::sim` is used but the [`Counts`] struct the results are written into and the GPC
//! chain's chance.
//!
//! Shared with production: the parsed trace and hw config, the bound launch ([`Launch`]: its
//! arrays, occupancy, L1 size, compiled index expressions and predicates), the warp walker
//! [`WarpCursor`] (the SIMT control flow of `launch::control`), the launch's instruction stream
//! totals (`launch::stream`, for the turnover's mean turn) and the chance of the dispatcher's GPC
//! chain (`sim::gpc_chain_chance`, a time-model estimate made before the simulation; the chain
//! itself is the reference's). Restated here from docs/model.md: the set index functions, the
//! replacement policies, the schedule's hashes (`free_order`, the turn skip's draws), the
//! coalescer, the data-stage and shared-memory bank rules and every L1, L2 and DRAM rule.
//!
//! Not covered (the differential tests switch them off in production's config, or do not
//! generate them): the L2 coalescer's merges and the far-read races (timing-dependent
//! corrections applied after the simulation), an `xor-matrix` L1 whose tags hold more than its
//! data (`evict_anywhere`), infinite caches and sampled simulation.

pub mod cache;
pub mod l2;

use cache::{Cache, Index};
use gputraffic::Result;
use gputraffic::input::hw::{HwConfig, SetIndexing, WarpIssue};
use gputraffic::input::trace::AccessKind;
use gputraffic::launch::control::{WarpCursor, WarpStep};
use gputraffic::launch::geometry::{block_coords, thread_coords};
use gputraffic::launch::stream::StreamTotals;
use gputraffic::launch::{Launch, SLOT_BLOCK, SLOT_LOOP, SLOT_THREAD, SLOTS};
use gputraffic::sim::Counts;
use l2::{ReferenceL2, sector_bytes};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// A resident warp: where it is in its program and its state in the issue policy.
struct Warp<'a> {
    block: u32,
    warp: u32,
    cursor: WarpCursor<'a>,
    /// The instruction it issues next.
    next: WarpStep,
    /// Loads issued in its current run.
    run: u32,
    /// Turns offered at the start of a run (the turn skip's draws).
    turns: u32,
}

/// One SM: its warps in arrival order, its L1, and the blocks it holds.
struct Sm<'a> {
    ring: Vec<Warp<'a>>,
    /// The warp issuing next.
    cursor: usize,
    /// The first tick it may issue at (after a turnover pause).
    clock: u64,
    /// Live warps of each resident block, and the warps it brought.
    live: HashMap<u32, (u32, u32)>,
    l1: Option<Cache>,
}

/// One line of a coalesced warp instruction.
#[derive(Debug, Clone, Copy)]
struct LineRequest {
    line: u64,
    sectors: u8,
    bytes: u128,
}

/// The reference's mutable state besides the SMs.
struct Memory {
    l2: ReferenceL2,
    counts: Counts,
    /// Distinct (line, sector) each block loaded.
    footprints: HashMap<u32, HashSet<(u64, u8)>>,
    /// The tick now.
    tick: u64,
    /// `l1.in_flight_hit_ticks`.
    in_flight_ticks: u64,
    /// The tick of each (SM, line)'s last load that missed sectors in the L1, in full.
    last_miss: HashMap<(usize, u64), u64>,
    /// Per (SM, block, warp) whose last instruction was a store: the lines its run of stores
    /// wrote, with their sectors and bytes so far.
    store_runs: HashMap<(usize, u32, u32), Vec<RunLine>>,
}

/// A line a warp's run of stores wrote: the line, its sectors and its bytes so far.
type RunLine = (u64, u8, u128);

/// A 64-bit mix of `key` (the schedule's hash).
fn mix(key: u64) -> u64 {
    let h = key.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h ^ (h >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9)
}

/// A draw in [0, 1) from `key`: 24 bits of its mix.
fn unit(key: u64) -> f32 {
    (mix(key) >> 40) as f32 / (1u64 << 24) as f32
}

/// Where a slot freed by `block` comes among the slots whose SMs come back in the same tick.
fn free_order(block: u32) -> u32 {
    (mix(block as u64 ^ 0xF4EE_0D3B_1C5A_7E29) >> 32) as u32
}

/// Simulates `launch` on `hw` the slow, simple way. Panics on a configuration it does not
/// cover (see the module's documentation).
pub fn simulate(launch: &Launch, hw: &HwConfig) -> Result<Counts> {
    assert!(
        hw.l2.coalescer_survival.is_empty() && hw.l2.far_read_extra_ns.unwrap_or(0.0) <= 0.0,
        "the reference has no timing-dependent L2 corrections"
    );
    let n = hw.sm.count as usize;
    let burst = hw.schedule.warp_issue == WarpIssue::LoadRuns;
    let turn_skip = hw.schedule.turn_skip.unwrap_or(0.0) as f32;
    let warp_drift = hw.schedule.warp_drift.unwrap_or(0.0) as f32;
    let turnover_ticks = hw.schedule.turnover_turns.unwrap_or(0) as u64
        * StreamTotals::of_launch(launch, burst)?.mean_turn_ticks() as u64;
    let l1_bytes = launch.l1_bytes(hw);
    let mut sms: Vec<Sm> = (0..n)
        .map(|_| Sm {
            ring: Vec::new(),
            cursor: 0,
            clock: 0,
            live: HashMap::new(),
            l1: hw.l1.caches_global_loads.then(|| l1_cache(hw, l1_bytes)),
        })
        .collect();
    let mut mem = Memory {
        l2: ReferenceL2::new(hw),
        counts: Counts::default(),
        footprints: HashMap::new(),
        tick: 0,
        in_flight_ticks: hw.l1.in_flight_hit_ticks as u64,
        last_miss: HashMap::new(),
        store_runs: HashMap::new(),
    };
    let mut next_block = 0u64;
    let per_sm = launch.occupancy.blocks_per_sm;
    let order = hw.dispatch_order();
    for _ in 0..per_sm {
        for &sm in &order {
            dispatch(
                launch,
                &mut sms[sm as usize],
                &mut next_block,
                &mut mem.counts,
            )?;
        }
    }
    // The dispatcher's chance to keep to the GPC of the last block: a time-model estimate of
    // the launch, taken from production as an input (the chain itself is the reference's).
    let chain =
        gputraffic::sim::gpc_chain_chance(launch, hw, &StreamTotals::of_launch(launch, burst)?);
    let gpc = hw.gpc_of_sms();
    // Slots freed and waiting for their SM to come back: (tick it comes back, free order, SM,
    // ticks it sits out).
    let mut waiting: BTreeSet<(u64, u32, usize, u64)> = BTreeSet::new();
    let mut tick = 0u64;
    loop {
        if next_block >= launch.total_blocks && sms.iter().all(|s| s.ring.is_empty()) {
            break;
        }
        for (id, sm) in sms.iter_mut().enumerate() {
            if sm.ring.is_empty() || tick < sm.clock {
                continue;
            }
            if turn_skip > 0.0 || warp_drift > 0.0 {
                pass_up_turns(sm, turn_skip, warp_drift);
            }
            mem.tick = tick;
            let finished = issue(launch, burst, sm, id, &mut mem)?;
            sm.clock = tick + 1;
            if let Some((block, warps)) = finished {
                let pause = warps as u64 * turnover_ticks;
                sm.clock += pause;
                blocks_finished(&mut mem, block);
                waiting.insert((tick + pause, free_order(block), id, pause));
            }
        }
        while let Some(&first) = waiting.first() {
            if first.0 > tick {
                break;
            }
            waiting.remove(&first);
            let (ready, mut sm) = (first.0, first.2);
            // With the chance drawn from the block it took, the next block goes to the slot last
            // in line among those another SM of the same GPC has freed by now (docs/model.md,
            // "Schedule": the rule `gpc_window_ns` was fitted with).
            while let Some(b) = dispatch(launch, &mut sms[sm], &mut next_block, &mut mem.counts)? {
                if chain <= 0.0 || unit(b as u64 ^ 0xC4A1_9E57) >= chain {
                    break;
                }
                let same_gpc = (waiting.iter())
                    .rfind(|w| w.2 != sm && gpc[w.2] == gpc[sm] && w.0 <= ready + w.3)
                    .copied();
                let Some(next) = same_gpc else { break };
                waiting.remove(&next);
                sm = next.2;
            }
        }
        tick += 1;
    }
    let leftover: Vec<u32> = mem.footprints.keys().copied().collect();
    for b in leftover {
        blocks_finished(&mut mem, b);
    }
    let mut c = mem.counts.clone();
    let t = mem.l2.totals;
    c.l2.read_sectors = t.read_sectors;
    c.l2.write_sectors = t.write_sectors;
    c.l2.read_lookup_miss_sectors = t.read_lookup_miss_sectors;
    c.l2.fabric_sectors = t.fabric_sectors;
    c.l2.atomic_requests = t.atomic_requests;
    c.l2.atomic_sectors = t.atomic_sectors;
    c.l2.sectors_left_partial = t.sectors_left_partial;
    c.l2.sectors_made_dirty = t.sectors_made_dirty;
    c.l2.partial_sectors_across_sms = t.partial_sectors_across_sms;
    c.dram.read_sectors = t.dram_read_sectors;
    c.dram.write_sectors = t.dram_write_sectors;
    c.dirty_at_end_sectors = mem.l2.dirty_sectors();
    c.compulsory_dram_read_sectors = Some(mem.l2.compulsory_reads);
    c.ticks = tick;
    c.warps_launched = launch.total_blocks * launch.occupancy.warps_per_block as u64;
    let l1 = &hw.l1;
    // Blocks with fewer than replay_block_loads load instructions replay in proportion.
    let loads_per_block = c.l1.load_requests as f64 / launch.total_blocks.max(1) as f64;
    let in_flight = (loads_per_block / l1.replay_block_loads).min(1.0);
    // Loads that miss replay in full only where the stores, atomics and shared stores (by the
    // 32-byte sectors their bytes fill) write replay_store_share of a sector per missing one.
    let storing = l1.replay_store_share.map_or(1.0, |share| {
        let shared = c.l1.shared_store_bytes.div_ceil(32);
        let written = (c.l1.store_sectors + c.l1.atomic_sectors + shared) as f64;
        (written / (share * c.l1.load_miss_sectors.max(1) as f64)).min(1.0)
    });
    let extra =
        (l1.missing_request_line_wavefronts * c.l1.load_miss_request_lines as f64 * storing
            + l1.partial_line_wavefronts * c.l1.load_partial_lines as f64
            + l1.in_flight_hit_wavefronts * c.l1.load_in_flight_lines as f64)
            * in_flight
            + l1.wavefronts_per_special_register
                * (c.warps_launched * launch.special_register_reads as u64) as f64;
    c.l1.wavefronts = c.l1.data_passes
        + c.l1.shared_load_wavefronts
        + c.l1.shared_store_wavefronts
        + (l1.wavefronts_per_shuffle * c.l1.shuffles as f64).round() as u64
        + (l1.wavefronts_per_predicated_off * c.l1.predicated_off as f64).round() as u64
        + extra.round() as u64;
    c.load_rounds = StreamTotals::of_launch(launch, burst)?.load_rounds;
    Ok(c)
}

/// The L1 of `hw` holding `bytes`.
fn l1_cache(hw: &HwConfig, bytes: u64) -> Cache {
    let l1 = &hw.l1;
    let lines = (bytes / 128) as usize;
    if l1.set_indexing == SetIndexing::XorMatrix {
        let sets = 1usize << l1.set_index_masks.len();
        let ways = (l1.ways as usize).max(lines.div_ceil(sets));
        assert_eq!(
            sets * ways,
            lines,
            "the reference has no xor-matrix L1 whose tags hold more than its data"
        );
        let index = Index::new(
            l1.set_indexing,
            &l1.set_index_masks,
            l1.set_index_hashed_from_bit,
            None,
        );
        return Cache::new(sets, ways, l1.replacement, index);
    }
    let ways = l1.ways as usize;
    let index = Index::new(l1.set_indexing, &[], None, None);
    Cache::new(lines / ways, ways, l1.replacement, index)
}

/// Puts the next block that has a live warp on `sm` (blocks whose warps issue nothing finish
/// at once) and returns it; `None` when every block is dispatched.
fn dispatch<'a>(
    launch: &'a Launch,
    sm: &mut Sm<'a>,
    next_block: &mut u64,
    counts: &mut Counts,
) -> Result<Option<u32>> {
    while *next_block < launch.total_blocks {
        let block = *next_block as u32;
        *next_block += 1;
        let mut warps = 0;
        for w in 0..launch.occupancy.warps_per_block {
            let mask = guard_mask(launch, block, w)?;
            let mut cursor = WarpCursor::new(launch, block as u64, w, mask);
            let Some(next) = cursor.next()? else {
                continue;
            };
            warps += 1;
            counts.active_warps += 1;
            sm.ring.push(Warp {
                block,
                warp: w,
                cursor,
                next,
                run: 0,
                turns: 0,
            });
        }
        if warps > 0 {
            sm.live.insert(block, (warps, warps));
            return Ok(Some(block));
        }
    }
    Ok(None)
}

/// The lanes of warp `w` of `block` that exist and pass the guard.
fn guard_mask(launch: &Launch, block: u32, w: u32) -> Result<u32> {
    let mut slots = [0i64; SLOTS];
    slots[SLOT_BLOCK..SLOT_BLOCK + 3].copy_from_slice(&block_coords(block as u64, launch.grid));
    let mut mask = 0u32;
    for lane in 0..32 {
        let tid = w * 32 + lane;
        if tid >= launch.threads_per_block {
            break;
        }
        slots[SLOT_THREAD..SLOT_THREAD + 3].copy_from_slice(&thread_coords(tid, launch.block));
        let passes = match &launch.program.guard {
            None => true,
            Some(g) => g.holds(&slots).map_err(|e| {
                gputraffic::Error::new(&launch.source_name, format!("guard: {e:?}"))
            })?,
        };
        if passes {
            mask |= 1 << lane;
        }
    }
    Ok(mask)
}

/// The turn skip: warps at the start of a run pass up their turn when their draw falls under
/// their block's chance (plus their own); if every warp passes, the last one offered issues.
fn pass_up_turns(sm: &mut Sm, turn_skip: f32, warp_drift: f32) {
    for _ in 0..sm.ring.len() {
        let w = &mut sm.ring[sm.cursor];
        if w.run > 0 {
            return;
        }
        w.turns += 1;
        let (block, warp) = (w.block as u64, w.warp as u64);
        let draw = unit((block << 32) ^ (warp << 16) ^ w.turns as u64);
        let warp_unit = unit((block << 20) ^ warp ^ 0x5eed);
        if draw >= turn_skip + warp_drift
            || draw >= turn_skip * unit(block) + warp_drift * warp_unit
        {
            return;
        }
        sm.cursor = (sm.cursor + 1) % sm.ring.len();
    }
}

/// Issues the instruction of the warp at `sm`'s cursor and sends it through the memory system;
/// returns the block (and the warps it brought) when that was its last instruction.
fn issue(
    launch: &Launch,
    burst: bool,
    sm: &mut Sm,
    id: usize,
    mem: &mut Memory,
) -> Result<Option<(u32, u32)>> {
    let w = &mut sm.ring[sm.cursor];
    let step = w.next;
    let (block, warp) = (w.block, w.warp);
    let following = w.cursor.next()?;
    mem.counts.warp_instructions += 1;
    mem.counts.thread_accesses += step.mask.count_ones() as u64;
    let accesses = &launch.program.accesses;
    let kind = accesses[step.access].kind;
    match following {
        None => {
            sm.ring.remove(sm.cursor);
            if sm.cursor >= sm.ring.len() {
                sm.cursor = 0;
            }
        }
        Some(next) => {
            w.next = next;
            let keep = burst
                && kind == AccessKind::Load
                && !accesses[step.access].ends_run
                && w.run + 1 < launch.loads_per_run
                && accesses[next.access].kind == AccessKind::Load;
            if keep {
                w.run += 1;
            } else {
                w.run = 0;
                sm.cursor = (sm.cursor + 1) % sm.ring.len();
            }
        }
    }
    memory(launch, sm.l1.as_mut(), id, block, warp, &step, mem)?;
    if following.is_none() {
        let live = sm.live.get_mut(&block).expect("a resident block");
        live.0 -= 1;
        if live.0 == 0 {
            let warps = live.1;
            sm.live.remove(&block);
            return Ok(Some((block, warps)));
        }
    }
    Ok(None)
}

/// Counts a finished block's distinct load sectors and lines.
fn blocks_finished(mem: &mut Memory, block: u32) {
    if let Some(f) = mem.footprints.remove(&block) {
        let lines: HashSet<u64> = f.iter().map(|&(l, _)| l).collect();
        mem.counts.l1.block_unique_load_sectors += f.len() as u64;
        mem.counts.l1.block_unique_load_lines += lines.len() as u64;
    }
}

/// Every active lane's byte address of `step` (index 32: none), checked against its array.
fn addresses(launch: &Launch, block: u32, warp: u32, step: &WarpStep) -> Result<[Option<u64>; 32]> {
    let a = &launch.program.accesses[step.access];
    let array = launch.array_of(a);
    let mut slots = [0i64; SLOTS];
    slots[SLOT_BLOCK..SLOT_BLOCK + 3].copy_from_slice(&block_coords(block as u64, launch.grid));
    for (d, &k) in step.iterations.iter().enumerate() {
        slots[SLOT_LOOP + d] = k as i64;
    }
    let mut out = [None; 32];
    let bad = |what: String| gputraffic::Error::new(&launch.source_name, what);
    for lane in 0..32u32 {
        if step.mask >> lane & 1 == 0 {
            continue;
        }
        let t = thread_coords(warp * 32 + lane, launch.block);
        slots[SLOT_THREAD..SLOT_THREAD + 3].copy_from_slice(&t);
        for c in &a.coordinates {
            let v = c.index.eval(&slots).map_err(|e| bad(format!("{e:?}")))?;
            if !(0..c.extent).contains(&v) {
                return Err(bad(format!("coordinate {v} outside 0..{}", c.extent)));
            }
        }
        let idx = a.index.eval(&slots).map_err(|e| bad(format!("{e:?}")))?;
        let offset = idx.checked_mul(array.element_bytes as i64);
        match offset {
            Some(o) if o >= 0 && o + a.bytes as i64 <= array.bytes() as i64 => {
                out[lane as usize] = Some(array.base + o as u64)
            }
            _ => return Err(bad(format!("index {idx} outside {}", array.name))),
        }
    }
    Ok(out)
}

/// The lines and sectors of a warp instruction's lanes, in the order their lines are first
/// touched (lanes in order), with the bytes each line's lanes touch.
fn coalesce(addrs: &[Option<u64>; 32], bytes: u32) -> Vec<LineRequest> {
    let mut first_touch: BTreeMap<u64, usize> = BTreeMap::new();
    let mut touched: BTreeMap<u64, u128> = BTreeMap::new();
    for a in addrs.iter().flatten() {
        for byte in *a..*a + bytes as u64 {
            let line = byte >> 7;
            let next = first_touch.len();
            first_touch.entry(line).or_insert(next);
            *touched.entry(line).or_default() |= 1u128 << (byte & 127);
        }
    }
    let mut lines: Vec<LineRequest> = touched
        .into_iter()
        .map(|(line, b)| LineRequest {
            line,
            sectors: (0..4)
                .filter(|s| b & sector_bytes(1 << s) != 0)
                .fold(0, |m, s| m | 1 << s),
            bytes: b,
        })
        .collect();
    lines.sort_by_key(|r| first_touch[&r.line]);
    lines
}

/// The L2 requests of an atomic warp instruction: per line (in address order), as many as its
/// busiest word has lanes, request j carrying the sectors of the words hit by more than j lanes.
fn atomic_requests(addrs: &[Option<u64>; 32], bytes: u32) -> Vec<(u64, u8)> {
    let mut per_word: BTreeMap<u64, u32> = BTreeMap::new();
    for a in addrs.iter().flatten() {
        *per_word.entry(a / bytes as u64 * bytes as u64).or_default() += 1;
    }
    let mut by_line: BTreeMap<u64, Vec<(u64, u32)>> = BTreeMap::new();
    for (a, n) in per_word {
        by_line.entry(a >> 7).or_default().push((a, n));
    }
    let mut out = Vec::new();
    for (line, words) in by_line {
        let rounds = words.iter().map(|w| w.1).max().unwrap_or(0);
        for j in 0..rounds {
            let sectors = (words.iter())
                .filter(|w| w.1 > j)
                .fold(0u8, |s, (a, _)| s | 1 << ((a >> 5) & 3));
            out.push((line, sectors));
        }
    }
    out
}

/// The most distinct 4-byte words one of the 32 banks delivers to `lanes`, each reading the
/// words `words(address)`.
fn bank_depth(lanes: impl Iterator<Item = u64>, words: impl Fn(u64) -> Vec<u64>) -> u64 {
    let mut per_bank: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
    for a in lanes {
        for w in words(a) {
            per_bank.entry(w % 32).or_default().insert(w);
        }
    }
    per_bank.values().map(|s| s.len() as u64).max().unwrap_or(0)
}

/// Lanes served together by the data stage: 128 bytes' worth.
fn group_lanes(bytes: u32) -> usize {
    (128 / bytes.clamp(4, 16)) as usize
}

/// Data-stage passes of a global load or store: per group of lanes, the bank rule within each
/// 4 lines of the group's words in address order (one tag-stage wavefront's lines).
fn passes(addrs: &[Option<u64>; 32], bytes: u32) -> u64 {
    let per_lane = (bytes / 4).max(1) as u64;
    addrs
        .chunks(group_lanes(bytes))
        .map(|g| {
            let words: BTreeSet<u64> = g
                .iter()
                .flatten()
                .flat_map(|&a| {
                    let (first, last) = (a >> 2, (a + bytes as u64 - 1) >> 2);
                    first..=last.max(first + per_lane - 1)
                })
                .collect();
            let lines: Vec<u64> = words
                .iter()
                .map(|w| w >> 5)
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            lines
                .chunks(4)
                .map(|part| {
                    let (lo, hi) = (part[0], part[part.len() - 1]);
                    bank_depth(
                        words
                            .iter()
                            .copied()
                            .filter(|w| (lo..=hi).contains(&(w >> 5))),
                        |w| vec![w],
                    )
                })
                .sum::<u64>()
        })
        .sum()
}

/// Data-stage passes of an atomic: the bank rule without lanes sharing a word, within each 4
/// lines of the group's words in address order (as for loads).
fn atomic_passes(addrs: &[Option<u64>; 32], bytes: u32) -> u64 {
    addrs
        .chunks(group_lanes(bytes))
        .map(|g| {
            let mut words: Vec<u64> = g
                .iter()
                .flatten()
                .flat_map(|a| (0..(bytes / 4).max(1) as u64).map(move |w| (a >> 2) + w))
                .collect();
            words.sort_unstable();
            let mut lines: Vec<u64> = words.iter().map(|w| w >> 5).collect();
            lines.dedup();
            lines
                .chunks(4)
                .map(|part| {
                    let (lo, hi) = (part[0], part[part.len() - 1]);
                    let mut per_bank = [0u64; 32];
                    for w in words.iter().filter(|w| (lo..=hi).contains(&(*w >> 5))) {
                        per_bank[(w % 32) as usize] += 1;
                    }
                    per_bank.into_iter().max().unwrap_or(0)
                })
                .sum::<u64>()
        })
        .sum()
}

/// Wavefronts and bank conflicts of a shared access (docs/model.md "Shared memory").
fn shared_cost(addrs: &[Option<u64>; 32], bytes: u32, store: bool) -> (u64, u64) {
    let phase = group_lanes(bytes);
    let words = |a: u64| -> Vec<u64> {
        let (first, last) = (a >> 2, (a + bytes.max(1) as u64 - 1) >> 2);
        (first..=last.min(first + 3)).collect()
    };
    let depth = |lanes: &[Option<u64>]| bank_depth(lanes.iter().flatten().copied(), words);
    let quads_two_addresses = addrs
        .chunks(4)
        .all(|q| q.iter().flatten().collect::<BTreeSet<_>>().len() <= 2);
    let pairs = !store && phase < 32 && quads_two_addresses;
    let phases: Vec<&[Option<u64>]> = addrs.chunks(phase).collect();
    let (mut wavefronts, mut conflicts) = (0, 0);
    if pairs {
        for pair in phases.chunks(2) {
            let both: Vec<Option<u64>> = pair.concat();
            if both.iter().all(Option::is_none) {
                continue;
            }
            let together = depth(&both);
            let w = if together <= 1 {
                together
            } else {
                depth(pair[0]) + depth(pair[1])
            };
            wavefronts += w;
            conflicts += w - 1;
        }
    } else {
        for p in phases {
            let w = depth(p);
            wavefronts += w;
            conflicts += w.saturating_sub(1);
        }
    }
    (wavefronts, conflicts)
}

/// One warp instruction through the SM's L1 and on to the L2.
fn memory(
    launch: &Launch,
    l1: Option<&mut Cache>,
    sm: usize,
    block: u32,
    warp: u32,
    step: &WarpStep,
    mem: &mut Memory,
) -> Result<()> {
    let a = &launch.program.accesses[step.access];
    // Any other memory instruction of the warp ends its run of stores, as do a barrier and more
    // than the window's instructions before a store.
    let run_key = (sm, block, warp);
    let mut run = mem.store_runs.remove(&run_key).unwrap_or_default();
    if a.kind != AccessKind::Store || step.mask == 0 || launch.store_parts_run(a) {
        run.clear();
    }
    if step.mask == 0 {
        // Issued with every lane predicated off: one wavefront, no request; an LDS or STS
        // still counts as an executed shared instruction.
        mem.counts.l1.predicated_off += 1;
        match a.kind {
            AccessKind::SharedLoad => mem.counts.l1.shared_load_requests += 1,
            AccessKind::SharedStore => mem.counts.l1.shared_store_requests += 1,
            _ => {}
        }
        return Ok(());
    }
    if a.kind == AccessKind::Shuffle {
        // No address: one data-pipe wavefront per warp.
        mem.counts.l1.shuffles += 1;
        return Ok(());
    }
    let addrs = addresses(launch, block, warp, step)?;
    let c = &mut mem.counts.l1;
    match a.kind {
        AccessKind::Shuffle => unreachable!("handled above"),
        AccessKind::SharedLoad | AccessKind::SharedStore => {
            let store = a.kind == AccessKind::SharedStore;
            let (w, k) = shared_cost(&addrs, a.bytes, store);
            if store {
                c.shared_store_requests += 1;
                c.shared_store_wavefronts += w;
                c.shared_store_bank_conflicts += k;
                c.shared_store_bytes += u64::from(step.mask.count_ones()) * u64::from(a.bytes);
            } else {
                c.shared_load_requests += 1;
                c.shared_load_wavefronts += w;
                c.shared_load_bank_conflicts += k;
            }
        }
        AccessKind::Atomic => {
            // A warp-aggregated atomic: the first lane on each address alone updates it.
            let mut addrs = addrs;
            if a.aggregated {
                for l in 0..32 {
                    if addrs[..l].iter().any(|e| e.is_some() && *e == addrs[l]) {
                        addrs[l] = None;
                    }
                }
            }
            c.atomic_requests += 1;
            c.data_passes += atomic_passes(&addrs, a.bytes);
            for (line, sectors) in atomic_requests(&addrs, a.bytes) {
                c.atomic_sectors += sectors.count_ones() as u64;
                mem.l2.atomic(sm, line, sectors);
            }
        }
        AccessKind::Store => {
            c.store_requests += 1;
            c.data_passes += passes(&addrs, a.bytes);
            // Write-through, never allocating, leaving the L1's lines as they are.
            for r in coalesce(&addrs, a.bytes) {
                c.store_sectors += r.sectors.count_ones() as u64;
                // a sector is written whole when its 32 bits of the byte mask are all set
                let whole = (0..4)
                    .filter(|s| (r.bytes >> (32 * s)) as u32 == u32::MAX)
                    .fold(0u8, |m, s| m | 1 << s);
                c.store_partial_sectors += (r.sectors & !whole).count_ones() as u64;
                c.store_partial_lines += u64::from(r.sectors & !whole != 0);
                // A store right after the warp's store to the same line reaches the L2 in that
                // one's write: the sectors the run sent are not counted again, and a sector the
                // run completes is written whole.
                let at = run.iter().position(|e| e.0 == r.line);
                let (sent, written) = at.map_or((0, 0), |i| (run[i].1, run[i].2));
                mem.l2.write(sm, r.line, r.sectors, r.bytes, sent);
                let partial = |sectors: u8, bytes: u128| {
                    (0..4)
                        .filter(|s| sectors >> s & 1 == 1 && (bytes >> (32 * s)) as u32 != u32::MAX)
                        .count() as u64
                };
                let (sectors, bytes) = (sent | r.sectors, written | r.bytes);
                let (new, before, after) = (
                    partial(r.sectors, r.bytes),
                    partial(sent, written),
                    partial(sectors, bytes),
                );
                c.store_partial_sectors_merged += new + before - after;
                // as a line: this store's request and the run's become one
                c.store_partial_lines_merged +=
                    u64::from(new > 0) + u64::from(before > 0) - u64::from(after > 0);
                match at {
                    Some(i) => run[i] = (r.line, sectors, bytes),
                    None => run.push((r.line, sectors, bytes)),
                }
            }
            mem.store_runs.insert(run_key, run);
        }
        AccessKind::Load => {
            c.load_requests += 1;
            c.data_passes += passes(&addrs, a.bytes);
            let lines = coalesce(&addrs, a.bytes);
            let footprint = mem.footprints.entry(block).or_default();
            let mut misses = Vec::new();
            let mut l1 = l1;
            for r in &lines {
                for s in 0..4 {
                    if r.sectors >> s & 1 == 1 {
                        footprint.insert((r.line, s));
                    }
                }
                c.load_sectors += r.sectors.count_ones() as u64;
                // a load that bypasses the L1 never looks it up nor fills it
                let missing = match l1.as_deref_mut().filter(|_| !a.bypass_l1) {
                    None => r.sectors,
                    Some(l1) => {
                        // A line that was absent comes in empty; what it evicts is clean.
                        let (st, _) = l1.access_or_insert(r.line, false);
                        let missing = r.sectors & !st.valid;
                        st.valid |= r.sectors;
                        // A hit within the window after the SM's last miss on the line waits
                        // for the fill in flight.
                        if missing != 0 {
                            mem.last_miss.insert((sm, r.line), mem.tick);
                        } else if (mem.last_miss.get(&(sm, r.line)))
                            .is_some_and(|&t| mem.tick - t <= mem.in_flight_ticks)
                        {
                            c.load_in_flight_lines += 1;
                        }
                        missing
                    }
                };
                if missing != 0 {
                    if missing != r.sectors {
                        c.load_partial_lines += 1;
                    }
                    c.load_miss_sectors += missing.count_ones() as u64;
                    misses.push((r.line, missing));
                }
            }
            if !misses.is_empty() {
                c.load_miss_request_lines += lines.len() as u64;
            }
            for (line, sectors) in misses {
                mem.l2.read(sm, line, sectors);
            }
        }
    }
    Ok(())
}
