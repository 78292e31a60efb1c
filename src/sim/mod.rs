//! The simulation pipeline, one module per stage in data order: the [`schedule`] decides which
//! warp instruction issues where and when; the per-SM stage ([`sm_stage`]) generates lane
//! addresses, [`coalesce`]s them and runs the L1 ([`cache`]); the [`l2`] and [`dram`] replay the
//! SMs' requests in global order. This file is the driver: schedule → per-SM stage (in
//! parallel) → L2 and DRAM (in global tick order).
//!
//! Work proceeds in chunks of ticks so memory stays bounded however large the kernel. Results do
//! not depend on the number of threads: SMs are independent until the L2, and the L2 is split
//! into shards of whole sets, each replaying its requests tick by tick, SM by SM — exactly the
//! serial replay of every request in that order ([`SimOptions::serial_l2`] runs that reference).
//!
//! [`simulate_sampled`] runs the same pipeline over a [`sample::WavePlan`]: only the planned
//! waves reach the SMs' stage and the L2, the scheduler jumps over most of the others, and the
//! counted ones are tallied wave by wave for the extrapolation.

pub mod atomic_slices;
pub mod by_array;
pub mod cache;
pub mod coalesce;
pub mod cost;
pub mod counters;
pub mod data_stage;
pub mod dram;
pub mod l2;
pub mod queueing;
pub mod replacement;
pub mod sample;
pub mod schedule;
pub mod sm_stage;

use crate::error::Result;
use crate::input::hw::HwConfig;
use crate::launch::Launch;
use crate::launch::stream::StreamTotals;
use crate::sim::l2::{L2Router, RequestList, ShardedL2};
use crate::sim::queueing::{TimeInputs, busy_seconds_at, steady_busy_seconds};
use crate::sim::schedule::{Issued, Scheduler};
use crate::sim::sm_stage::{GenContext, L1Counters, SmWorker};
use rayon::prelude::*;

/// Knobs that change what is simulated, not the kernel or the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimOptions {
    /// L1s that never evict.
    pub infinite_l1: bool,
    /// L2 partitions that never evict.
    pub infinite_l2: bool,
    /// Ticks per chunk. Exact results do not depend on it; speed and memory do: a longer chunk
    /// gives each SM more work while its L1 and footprint tables are warm in the CPU's caches,
    /// and the stages meet less often (star4 640×512×512, 32×8×4, h200: 4096 ticks about 7%
    /// faster than 2048 on two threads, in 58 MB instead of 43 MB; docs/performance.md).
    /// Sampled runs take at most [`SAMPLED_CHUNK_TICKS`].
    pub chunk_ticks: u32,
    /// Track compulsory volumes (costs some speed).
    pub compulsory: bool,
    /// Replay the L2 in one piece, serially (the reference the sharded replay must equal).
    pub serial_l2: bool,
    /// Coalesce every warp instruction lane by lane, without the per-launch line patterns of full
    /// warps (the reference the patterns must equal).
    pub lane_by_lane: bool,
    /// Schedule all SMs tick by tick instead of each on its own between freed slots (the
    /// reference the event-driven schedule must equal; [`Scheduler::run_until`]).
    pub tick_by_tick: bool,
    /// Count each block's distinct load sectors and lines load by load in exact runs too, in a
    /// table per resident block (the reference the whole-block counts of exact runs must equal;
    /// [`SmWorker::footprints_by_block`]).
    pub footprints_load_by_load: bool,
    /// Sample the interior waves instead of simulating every one ([`sample`]).
    pub sample: Option<sample::SampleOptions>,
    /// Simulate even when the arrays exceed the GPU's memory ([`Launch::check_memory`]; the
    /// simulation itself never checks it, [`crate::Bound::simulate`] does).
    pub exceed_memory: bool,
    /// Count the traffic per array and per access of the trace too ([`by_array`]; exact runs
    /// only).
    pub by_array: bool,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            infinite_l1: false,
            infinite_l2: false,
            chunk_ticks: 4096,
            compulsory: true,
            serial_l2: false,
            lane_by_lane: false,
            tick_by_tick: false,
            footprints_load_by_load: false,
            sample: None,
            exceed_memory: false,
            by_array: false,
        }
    }
}

/// The longest chunk of a sampled run. Its results depend on the chunk's length where the
/// schedule's turn skip is on (SMs run ahead of a chunk that ends early, at most to its full
/// length, drawing turns from their blocks' ids, and a jump over skipped waves then renumbers
/// those blocks), so it stays at the length its intervals were studied with
/// (docs/performance.md: 2048 ticks until 2026-12-08, since then the exact runs' default 4096,
/// which takes a sampled run of star4 at 2^29 points 8% less time), whatever exact runs use.
/// Its chunks also end where a counted or a skipped wave does, and where a run of warm-up
/// waves, the head or the tail ends ([`sample::WavePlan::chunk_end`]).
pub const SAMPLED_CHUNK_TICKS: u32 = 4096;

pub use counters::Counts;

/// Simulates `launch` on `hw`.
pub fn simulate(launch: &Launch, hw: &HwConfig, opts: &SimOptions) -> Result<Counts> {
    simulate_with_progress(launch, hw, opts, &|_, _| {})
}

/// Simulates `launch` on `hw`, calling `progress(blocks dispatched, total blocks)` after every
/// chunk of ticks.
pub fn simulate_with_progress(
    launch: &Launch,
    hw: &HwConfig,
    opts: &SimOptions,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<Counts> {
    let (mut counts, _, gaps, merges, tally) =
        pipeline(launch, hw, opts, None, opts.compulsory, progress)?;
    let tally = tally.as_ref();
    // Each array's share of a correction is the correction of its own gaps (both are linear in
    // the gaps, so the shares add up to the whole before rounding).
    let miss_shares = tally.map(|(_, t)| {
        (t.race_gaps.iter())
            .map(|g| far_read_races(launch, hw, &counts, g))
            .collect()
    });
    let misses = counts.l2.read_lookup_miss_sectors;
    counts.l2.read_lookup_miss_sectors =
        add_sectors(misses, far_read_races(launch, hw, &counts, &gaps));
    let read_shares = tally.map(|(_, t)| {
        (t.merge_gaps.iter())
            .map(|g| -coalesced_reads(launch, hw, &counts, g))
            .collect()
    });
    let reads = counts.l2.read_sectors;
    counts.l2.read_sectors = add_sectors(reads, -coalesced_reads(launch, hw, &counts, &merges));
    if let (Some((by_access, t)), Some(miss_shares), Some(read_shares)) =
        (tally, miss_shares, read_shares)
    {
        let corrections = by_array::Corrections {
            miss_shares,
            miss_total: counts.l2.read_lookup_miss_sectors as i64 - misses as i64,
            read_shares,
            read_total: counts.l2.read_sectors as i64 - reads as i64,
        };
        counts.by_array = Some(Box::new(by_array::assemble(
            launch,
            by_access,
            t,
            &corrections,
        )));
    }
    add_launch_reads(launch, hw, &mut counts);
    Ok(counts)
}

/// The name of the row of `--by-array` that holds the reads of the launch itself
/// ([`launch_read_sectors`]); no array of a trace can have it.
pub const LAUNCH_ROW: &str = "(launch)";

/// Sectors the launch reads from DRAM besides its data: its code, a sector per 32 bytes, and
/// `dram.launch_read_sectors` more (the constant bank and the launch's own state), once per
/// launch whatever its grid, as Nsight Compute measures it with the caches flushed before the
/// kernel (`validation/launch_fetch.cu`, docs/model.md "L2", the launch's own reads); none where the GPU's config does
/// not give them.
pub fn launch_read_sectors(launch: &Launch, hw: &HwConfig) -> u64 {
    hw.dram.launch_read_sectors.map_or(0, |fixed| {
        fixed + launch.code_bytes.div_ceil(hw.l2.sector_bytes.max(1) as u64)
    })
}

/// Adds [`launch_read_sectors`] to the DRAM reads, and to `--by-array`'s counts as a row of
/// their own so that the rows still add up to the totals.
fn add_launch_reads(launch: &Launch, hw: &HwConfig, counts: &mut Counts) {
    let sectors = launch_read_sectors(launch, hw);
    if sectors == 0 {
        return;
    }
    counts.dram.read_sectors += sectors;
    counts.launch_read_sectors = sectors;
    if let Some(b) = counts.by_array.as_mut() {
        let mut row = Counts::default();
        row.dram.read_sectors = sectors;
        b.arrays.push((LAUNCH_ROW.to_string(), row));
    }
}

/// A sampled simulation's result: the counts with their additive fields estimated, and each
/// estimate's 95% interval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SampledCounts {
    /// Point estimates (exact where the blocks alone decide them: instructions, thread accesses
    /// and active warps, and for the simple form [`sample::ADDRESS_FIELDS`]; the ticks are
    /// estimated like the traffic).
    pub counts: Counts,
    /// Lower ends of the intervals, as counts.
    pub lo: Counts,
    /// Upper ends.
    pub hi: Counts,
    /// Waves in the launch (labels).
    pub waves: u64,
    /// Waves simulated in detail (counted or warming the caches).
    pub waves_simulated: u64,
    /// Waves counted.
    pub waves_counted: u64,
    /// Waves the scheduler jumped over without scheduling them ([`Scheduler::fast_forward`]).
    pub waves_jumped: u64,
    /// Whether the L1 counts that the addresses alone decide ([`sample::ADDRESS_FIELDS`]) were
    /// counted over every warp (programs of the simple form) rather than estimated.
    pub exact_l1_instruction_counts: bool,
}

/// Simulates `launch` on `hw` by sampling waves ([`sample`]); `None` when the launch is too
/// short for sampling (simulate it exactly).
pub fn simulate_sampled(
    launch: &Launch,
    hw: &HwConfig,
    opts: &SimOptions,
    sampling: &sample::SampleOptions,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<Option<SampledCounts>> {
    simulate_sampled_given(launch, hw, opts, sampling, None, progress)
}

/// [`simulate_sampled`], given the L1 counts that the addresses alone decide when they are
/// already worked out: what [`sm_stage::instruction_counts`] returns for this launch with these
/// options (its other fields are not read), e.g. by `rank`'s lower bound of the same shape, so
/// that the pass over every block is not made twice. `None`: worked out here.
pub fn simulate_sampled_given(
    launch: &Launch,
    hw: &HwConfig,
    opts: &SimOptions,
    sampling: &sample::SampleOptions,
    exact_l1: Option<L1Counters>,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<Option<SampledCounts>> {
    if opts.by_array {
        return Err(crate::error::Error::new("--by-array", BY_ARRAY_SAMPLED));
    }
    let Some(plan) = sample::WavePlan::new(launch, hw, sampling) else {
        return Ok(None);
    };
    // What the addresses alone decide is counted over every warp, not estimated: a wave's
    // labels cut warps' programs anywhere, so its share of loads and stores is not the
    // launch's, and the ratio estimate had them off by up to 0.2%.
    let exact_l1 = match exact_l1 {
        Some(l1) => Some(l1),
        None => {
            let cx = GenContext::new(launch, !opts.lane_by_lane);
            sm_stage::instruction_counts(launch, &cx, opts.compulsory)?
        }
    };
    // The blocks' distinct load sectors and lines are among those exact counts: the detailed
    // waves need not probe the footprint tables at every load for them.
    let probe_footprints = opts.compulsory && exact_l1.is_none();
    let (counts, tallies, gaps, merges, _) =
        pipeline(launch, hw, opts, Some(&plan), probe_footprints, progress)?;
    let mut e = sample::estimate(&plan, &tallies, counts.warp_instructions);
    // Before what the addresses decide replaces their estimates: the counted waves' sectors
    // made dirty per sector stored, for the DRAM writes below.
    let counted = sample::with_fields(&counts, &e.point);
    let stored = |c: &Counts| c.l1.store_sectors + c.l1.atomic_sectors;
    let dirtied_per_stored = (stored(&counted) > 0)
        .then(|| counted.l2.sectors_made_dirty as f64 / stored(&counted) as f64);
    if let Some(l1) = &exact_l1 {
        let exact = sample::fields(&Counts {
            l1: *l1,
            ..Counts::default()
        });
        e = e.with_exact_address_fields(&exact);
    }
    let estimated = |values: &[u64; sample::FIELDS]| {
        let mut c = sample::with_fields(&counts, values);
        c.l1.wavefronts = wavefronts(launch, hw, &c.l1, c.warps_launched);
        c
    };
    // The races the detailed waves logged, scaled as their near-partition misses are.
    let races = far_read_races(launch, hw, &estimated(&e.point), &gaps);
    let detailed_misses = counts.l2.read_lookup_miss_sectors.max(1) as f64;
    // The same for the merged reads, scaled as the L2's reads are.
    let merged = coalesced_reads(launch, hw, &estimated(&e.point), &merges);
    let detailed_reads = counts.l2.read_sectors.max(1) as f64;
    let finish = |values: &[u64; sample::FIELDS]| {
        let mut c = estimated(values);
        let scale = c.l2.read_lookup_miss_sectors as f64 / detailed_misses;
        c.l2.read_lookup_miss_sectors = add_sectors(c.l2.read_lookup_miss_sectors, races * scale);
        let scale = c.l2.read_sectors as f64 / detailed_reads;
        c.l2.read_sectors = add_sectors(c.l2.read_sectors, -merged * scale);
        // The busiest slice's atomics, scaled as the atomics are.
        let scale = c.l1.atomic_sectors as f64 / counts.l1.atomic_sectors.max(1) as f64;
        c.atomic_busiest_slice =
            (counts.atomic_busiest_slice).map(|n| (n as f64 * scale).round() as u64);
        add_launch_reads(launch, hw, &mut c);
        c
    };
    let (mut point, mut lo, mut hi) = (finish(&e.point), finish(&e.lo), finish(&e.hi));
    if !sampling.screen {
        // Every sector made dirty is written back once unless still dirty at the end, and a
        // sampled run's L2 ends holding what the exact one would (its tail is exact, behind a
        // warm-up of a turnover): an estimate that does not hang on which dirty lines the few
        // counted waves happen to evict. The sectors made dirty are the sectors stored (exact
        // where the addresses decide them) times the counted waves' share of them made dirty
        // (all of them, where no sector is stored twice while dirty). Its interval keeps the
        // width of the counted write-backs' (their spread is what the end's dirty lines may
        // differ by). A screen, which has no tail, keeps its counted write-backs (`rank`'s
        // margin was measured on them).
        if let Some(share) = dirtied_per_stored {
            point.l2.sectors_made_dirty = (stored(&point) as f64 * share).round() as u64;
        }
        let writes = (point.l2.sectors_made_dirty).saturating_sub(counts.dirty_at_end_sectors);
        let below = point
            .dram
            .write_sectors
            .saturating_sub(lo.dram.write_sectors);
        let above = hi
            .dram
            .write_sectors
            .saturating_sub(point.dram.write_sectors);
        point.dram.write_sectors = writes;
        lo.dram.write_sectors = writes.saturating_sub(below);
        hi.dram.write_sectors = writes + above;
    }
    Ok(Some(SampledCounts {
        counts: point,
        lo,
        hi,
        waves: plan.modes.len() as u64,
        waves_simulated: plan.detailed() as u64,
        waves_counted: plan
            .modes
            .iter()
            .filter(|m| **m == sample::WaveMode::Count)
            .count() as u64,
        waves_jumped: tallies.jumped_blocks / plan.blocks_per_wave,
        exact_l1_instruction_counts: exact_l1.is_some(),
    }))
}

/// Why per-array counts and sampling do not go together.
pub const BY_ARRAY_SAMPLED: &str = "cannot be combined with --sample: a sampled simulation \
     estimates its totals from a sample of waves, and counts per array would not add up to them; \
     simulate exactly (drop --sample)";

/// L1 data-stage wavefronts: the passes of global accesses, the shared accesses' and the
/// shuffles' wavefronts (the hardware's total counts them all) and what the launch adds
/// ([`data_stage`]).
fn wavefronts(launch: &Launch, hw: &HwConfig, l1: &L1Counters, warps_launched: u64) -> u64 {
    data_stage::instruction_wavefronts(&hw.l1, l1)
        + data_stage::extra_wavefronts(
            &hw.l1,
            &data_stage::LaunchTerms::of(launch, l1, warps_launched),
        )
}

/// The additive fields of the L1s now (the others zero).
fn l1_fields(workers: &[SmWorker]) -> [u64; sample::FIELDS] {
    let mut c = Counts::default();
    for w in workers {
        c.l1.add(&w.counters);
    }
    sample::fields(&c)
}

/// The L2's, DRAM's and compulsory counts now, the L1's zero.
fn l2_counts(l2: &ShardedL2) -> Counts {
    Counts {
        l2: l2.counters(),
        dram: l2.dram(),
        compulsory_dram_read_sectors: l2.compulsory.as_ref().map(|t| t.read_sectors()),
        ..Counts::default()
    }
}

/// The chance that the block after one dispatched to a GPC goes to another of its freed slots
/// ([`Scheduler::gpc_chain`]): the GPC's block rate times `schedule.gpc_window_ns` (0 without
/// one). The rate is the launch's blocks over its GPCs and its time, which the simulation has
/// yet to work out: the time model's busy time while every slot is taken
/// ([`steady_busy_seconds`]) with each array the kernel touches moved to or from DRAM once, at
/// the launch's active warps and their mean rounds of loads, `streams` (an L1-bound launch takes
/// longer, so its chance is overstated). The streams depend only on the
/// instructions each warp issues, so every way of writing a program draws alike.
pub fn gpc_chain_chance(launch: &Launch, hw: &HwConfig, streams: &StreamTotals) -> f32 {
    let window_ns = hw.schedule.gpc_window_ns.unwrap_or(0.0);
    if window_ns <= 0.0 || launch.total_blocks == 0 {
        return 0.0;
    }
    let active = streams.active_warps;
    let mut touched = vec![false; launch.arrays.len()];
    for a in launch
        .program
        .accesses
        .iter()
        .filter(|a| a.kind.is_global())
    {
        touched[a.array] = true;
    }
    let footprint = (launch.arrays.iter().zip(&touched))
        .filter(|(_, t)| **t)
        .map(|(a, _)| a.bytes() as f64)
        .sum();
    let inputs = TimeInputs {
        dram_bytes: Some(footprint),
        active_warps: (active > 0).then_some(active as f64),
        rounds_per_warp: streams.rounds_per_warp(),
        ..Default::default()
    };
    let seconds = steady_busy_seconds(hw, launch, &inputs);
    let gpcs = hw.gpc_of_sms().into_iter().max().map_or(1, |g| g + 1);
    let blocks_per_ns = launch.total_blocks as f64 / gpcs as f64 / (seconds * 1e9);
    (blocks_per_ns * window_ns).clamp(0.0, 1.0) as f32
}

/// What the pipeline counted per access of the trace (the L1's) and per array (the L2's), with
/// `--by-array`.
type PipelineTally = Option<(Vec<L1Counters>, by_array::L2Tally)>;

/// The three-stage pipeline; with a `plan`, only its detailed waves reach the per-SM stage and
/// the L2, and each counted wave's traffic is tallied by label. `probe_footprints`: the SMs
/// count each block's distinct load sectors and lines (the compulsory volume's L1 side);
/// without, those counts stay zero for the caller to fill in.
fn pipeline(
    launch: &Launch,
    hw: &HwConfig,
    opts: &SimOptions,
    plan: Option<&sample::WavePlan>,
    probe_footprints: bool,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<(
    Counts,
    sample::WaveTallies,
    l2::RaceGaps,
    l2::MergeGaps,
    PipelineTally,
)> {
    let n = hw.sm.count as usize;
    let cx = GenContext::new(launch, !opts.lane_by_lane);
    let mut sched = Scheduler::for_gpu(launch, hw)?;
    sched.tick_by_tick = opts.tick_by_tick;
    sched.gpc_chain = gpc_chain_chance(launch, hw, sched.streams());
    let shards = if opts.serial_l2 { 1 } else { l2::SHARDS };
    let router = L2Router::new(hw, opts.infinite_l2, shards);
    let l1_bytes = launch.l1_bytes(hw);
    let mut workers: Vec<SmWorker> = (0..n)
        .map(|_| SmWorker::new(hw, l1_bytes, opts.infinite_l1, probe_footprints, router))
        .collect();
    let range = opts.compulsory.then(|| {
        let lo = launch.arrays.iter().map(|a| a.base).min().unwrap_or(0);
        let hi = launch
            .arrays
            .iter()
            .map(|a| a.base + a.bytes())
            .max()
            .unwrap_or(0);
        (lo, hi)
    });
    let mut l2 = ShardedL2::new(hw, opts.infinite_l2, range, &router);
    if let Some(keys) = cx.whole_block_keys(launch)
        && plan.is_none()
        && !opts.footprints_load_by_load
    {
        // An exact run ends every block it starts: each block's footprint can be counted whole.
        let known = sm_stage::KnownFootprints::default();
        for w in &mut workers {
            w.footprints_by_block(keys, known.clone());
        }
    }
    if opts.by_array {
        let accesses = launch.program.flattened().len();
        for w in &mut workers {
            w.by_access = Some(vec![L1Counters::default(); accesses]);
        }
        let arrays = by_array::ArrayOfLine::new(launch);
        for shard in &mut l2.shards {
            shard.tally_arrays(arrays.clone());
        }
    }
    // Three stages overlap: while the SMs work on chunk i, the L2 replays chunk i-1 and the
    // scheduler prepares chunk i+1.
    let mut issues: Vec<Vec<Issued>> = vec![Vec::new(); n];
    let mut finished: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut next_issues: Vec<Vec<Issued>> = vec![Vec::new(); n];
    let mut next_finished: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut pending: Vec<Vec<RequestList>> = vec![vec![RequestList::default(); router.shards]; n];
    let mut pending_ticks = 0;
    let mut warp_instructions = 0u64;
    let mut tallies = sample::WaveTallies::default();
    // With a plan: each chunk stays within one wave, and its wave decides whether the caches see
    // it. `current` is the chunk the SMs work on, `pending` the one the L2 replays.
    // Waves that nothing counts or warms are jumped over, whole waves at a time, where the
    // blocks' shapes allow ([`Scheduler::fast_forward`]).
    let chunk_wave =
        |sched: &mut Scheduler, jumped: &mut u64| -> Result<Option<(u64, sample::WaveMode)>> {
            let Some(p) = plan else {
                return Ok(None);
            };
            let mut label = p.label(sched.blocks_dispatched());
            if p.jumpable(label) {
                let to = p.start_of(p.next_detailed(label));
                let blocks = to.saturating_sub(sched.blocks_dispatched());
                *jumped += sched.fast_forward(blocks, p.blocks_per_wave)?;
                label = p.label(sched.blocks_dispatched());
            }
            let mode = p.mode(label);
            sched.list_issues = mode != sample::WaveMode::Skip;
            Ok(Some((label, mode)))
        };
    let until = |wave: Option<(u64, sample::WaveMode)>| match (plan, wave) {
        (Some(p), Some((label, _))) => p.chunk_end(label),
        _ => u64::MAX,
    };
    let counted = |wave: Option<(u64, sample::WaveMode)>| {
        wave.and_then(|(label, mode)| (mode == sample::WaveMode::Count).then_some(label))
    };
    let chunk_ticks = match plan {
        Some(_) => opts.chunk_ticks.min(SAMPLED_CHUNK_TICKS),
        None => opts.chunk_ticks,
    };
    let mut current = chunk_wave(&mut sched, &mut tallies.jumped_blocks)?;
    let mut pending_wave = None;
    // The launch's tick at which the chunk the SMs work on starts (its issues' ticks count
    // from there).
    let mut current_start = sched.tick;
    let mut ticks = sched.run_until(chunk_ticks, until(current), &mut issues, &mut finished)?;
    while ticks > 0 || pending_ticks > 0 {
        warp_instructions += (issues.iter().flatten())
            .map(|i| i.count() as u64)
            .sum::<u64>();
        let next = chunk_wave(&mut sched, &mut tallies.jumped_blocks)?;
        let l1_before = counted(current).map(|_| l1_fields(&workers));
        let (worked, (scheduled, l2_delta)) = rayon::join(
            || {
                workers
                    .par_iter_mut()
                    .zip(issues.par_iter())
                    .zip(finished.par_iter())
                    .map(|((w, iss), fin)| w.process(&cx, launch, current_start, iss, fin))
                    // Several SMs may fail in one chunk: the lowest-numbered one's error is
                    // reported, the same on any thread count.
                    .collect::<Vec<Result<()>>>()
                    .into_iter()
                    .collect::<Result<()>>()
            },
            || {
                // The L2 replays the previous chunk while the scheduler works out the next: the
                // two share nothing, and together they are the pipeline's critical path.
                let (replayed, scheduled) = rayon::join(
                    || {
                        let before = counted(pending_wave)
                            .map(|label| (label, sample::fields(&l2_counts(&l2))));
                        replay(&mut l2, &pending, pending_ticks);
                        before.map(|(label, b)| (label, b, sample::fields(&l2_counts(&l2))))
                    },
                    || {
                        let start = sched.tick;
                        let ticks = sched.run_until(
                            chunk_ticks,
                            until(next),
                            &mut next_issues,
                            &mut next_finished,
                        );
                        (start, ticks)
                    },
                );
                (scheduled, replayed)
            },
        );
        worked?;
        if let (Some(label), Some(before)) = (counted(current), l1_before) {
            let after = l1_fields(&workers);
            let mut delta = [0u64; sample::FIELDS];
            for f in 0..sample::L1_FIELDS {
                delta[f] = after[f] - before[f];
            }
            delta[sample::TICKS_FIELD] = ticks as u64;
            tallies.add(label, &delta);
        }
        if let Some((label, before, after)) = l2_delta {
            let mut delta = [0u64; sample::FIELDS];
            for f in sample::L1_FIELDS..sample::FIELDS {
                delta[f] = after[f] - before[f];
            }
            tallies.add(label, &delta);
        }
        for (w, p) in workers.iter_mut().zip(pending.iter_mut()) {
            std::mem::swap(&mut w.out, p);
        }
        pending_ticks = ticks;
        pending_wave = current;
        current = next;
        let (next_start, scheduled) = scheduled;
        current_start = next_start;
        ticks = scheduled?;
        progress(sched.blocks_dispatched(), launch.total_blocks);
        std::mem::swap(&mut issues, &mut next_issues);
        std::mem::swap(&mut finished, &mut next_finished);
    }
    warp_instructions += sched.unlisted_instructions;
    let (mut thread_accesses, mut active_warps) = (sched.thread_accesses, sched.active_warps);
    if tallies.jumped_blocks > 0 {
        // The warps' streams were summed over every block before the schedule.
        let s = sched.streams();
        (warp_instructions, thread_accesses, active_warps) =
            (s.instructions, s.thread_accesses, s.active_warps);
    }
    let mut l1 = L1Counters::default();
    for w in &mut workers {
        w.finish();
        l1.add(&w.counters);
    }
    let warps_launched = launch.total_blocks * launch.occupancy.warps_per_block as u64;
    l1.wavefronts = wavefronts(launch, hw, &l1, warps_launched);
    let mut slices: Option<atomic_slices::SliceTally> = None;
    for t in workers.iter().filter_map(|w| w.atomic_slices.as_ref()) {
        match &mut slices {
            Some(s) => s.merge(t),
            None => slices = Some(t.clone()),
        }
    }
    let counts = Counts {
        l1,
        l2: l2.counters(),
        dram: l2.dram(),
        atomic_busiest_slice: slices.map_or([0; 4], |s| s.busiest()),
        dirty_at_end_sectors: l2.dirty_sectors(),
        // added when the simulation ends (`add_launch_reads`)
        launch_read_sectors: 0,
        compulsory_dram_read_sectors: l2.compulsory.as_ref().map(|c| c.read_sectors()),
        ticks: sched.tick,
        warp_instructions,
        thread_accesses,
        active_warps,
        warps_launched,
        load_rounds: sched.streams().load_rounds,
        by_array: None,
    };
    let tally = l2.by_array().map(|t| {
        let mut by_access = vec![L1Counters::default(); launch.program.flattened().len()];
        for mine in workers.iter().filter_map(|w| w.by_access.as_deref()) {
            for (sum, c) in by_access.iter_mut().zip(mine) {
                sum.add(c);
            }
        }
        (by_access, t)
    });
    Ok((counts, tallies, l2.race_gaps(), l2.merge_gaps(), tally))
}

/// The change to the near-partition misses that the races of the home side's reads with far
/// misses make ([`l2::race_misses`]): the window is `l2.far_read_extra_ns`, the ticks turned into
/// time by the time model's busy time over the launch's ticks, both at the base clock (where the
/// window and the counters it is checked against were measured: Nsight Compute locks clocks to
/// base; `sm.base_clock_ghz`, else the boost clock), and the
/// offsets blurred by `schedule.block_drift` over a block's life (the launch's ticks times its
/// resident blocks over its blocks, at most all of them).
fn far_read_races(launch: &Launch, hw: &HwConfig, counts: &Counts, gaps: &l2::RaceGaps) -> f64 {
    let extra_ns = hw.l2.far_read_extra_ns.unwrap_or(0.0);
    if extra_ns <= 0.0 || gaps.is_empty() {
        return 0.0;
    }
    let Some(ns_per_tick) = base_clock_ns_per_tick(launch, hw, counts) else {
        return 0.0;
    };
    let resident = hw.sm.count as f64 * launch.occupancy.blocks_per_sm as f64;
    let waves = (launch.total_blocks as f64 / resident).max(1.0);
    l2::race_misses(
        gaps,
        l2::RaceTiming {
            window_ticks: extra_ns / ns_per_tick,
            life_ticks: counts.ticks as f64 / waves,
            drift: hw.schedule.block_drift.unwrap_or(0.0),
        },
    )
}

/// The L2 reads that the coalescer merges ([`l2::merged_reads`]): the windows are
/// [`HwConfig::coalescer_windows_ns`], the ticks turned into time as for the races (the time
/// model's busy time over the launch's ticks, at the base clock, where the latencies and the
/// counters were measured).
fn coalesced_reads(launch: &Launch, hw: &HwConfig, counts: &Counts, gaps: &l2::MergeGaps) -> f64 {
    let Some(windows_ns) = hw.coalescer_windows_ns() else {
        return 0.0;
    };
    if gaps.is_empty() {
        return 0.0;
    }
    let Some(ns_per_tick) = base_clock_ns_per_tick(launch, hw, counts) else {
        return 0.0;
    };
    l2::merged_reads(gaps, windows_ns.map(|ns| ns / ns_per_tick))
}

/// How long a tick of the launch lasts at the base clock, where the L2's measured windows and the
/// counters they are checked against were taken (Nsight Compute locks clocks to base;
/// `sm.base_clock_ghz`, else the boost clock): the time model's busy time for `counts` over the
/// launch's ticks. The traffic's own time: the floating-point and issue limiters are left out,
/// so that the counts do not depend on whether a kernel's flops and instructions are known.
/// `None` without ticks or a positive time.
fn base_clock_ns_per_tick(launch: &Launch, hw: &HwConfig, counts: &Counts) -> Option<f64> {
    if counts.ticks == 0 {
        return None;
    }
    let busy_s = busy_seconds_at(hw, launch, &counts.time_inputs(), hw.sm.base_clock_ghz);
    let ns_per_tick = busy_s * 1e9 / counts.ticks as f64;
    (ns_per_tick > 0.0).then_some(ns_per_tick)
}

/// Adds `change` sectors (rounded; never below none) to a count of `sectors`: the races to the
/// near-partition misses, the merged reads (negative) to the L2's reads.
fn add_sectors(sectors: u64, change: f64) -> u64 {
    (sectors as f64 + change).round().max(0.0) as u64
}

/// Replays the SMs' L2 requests of one chunk: each shard, in parallel, its own requests in
/// global order (tick by tick, SM by SM). Shards hold disjoint sets, so this is exactly the
/// serial replay of every request in that order.
fn replay(l2: &mut ShardedL2, outs: &[Vec<RequestList>], ticks: u32) {
    let first_tick = l2.ticks_replayed;
    l2.shards.par_iter_mut().enumerate().for_each(|(k, shard)| {
        shard.start_chunk(first_tick);
        shard.replay(outs, k, ticks)
    });
    l2.ticks_replayed += ticks as u64;
    l2.settle_compulsory();
}
