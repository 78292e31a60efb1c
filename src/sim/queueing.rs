//! The per-SM queueing model: traffic volumes and the launch's shape → how long the SMs are busy.
//!
//! It sits in the simulator's layer because the simulator needs it mid-run (the chance that a
//! block keeps to its GPC, [`super::gpc_chain_chance`], and the length of a tick at the base
//! clock); the time model ([`crate::timing`]) builds its estimate on it. It takes plain volumes
//! ([`TimeInputs`]), so simulations ([`super::Counts::time_inputs`]) and closed-form models
//! (`models::PredictedVolumes::time_inputs`) feed it alike.
//!
//! Each level (DRAM, L2, L1, floating point, instruction issue) has a bandwidth; alone, the busiest one would set the
//! pace (the per-limiter times). But an SM reaches those bandwidths only with enough warps waiting
//! on memory, so the time comes from a closed queueing model per SM, solved exactly by
//! mean-value analysis ([`mva_throughput`]): the SM's effective resident warps cycle through a
//! delay (the loaded memory latency of their dependent rounds of loads: (`[timing]`
//! `loaded_latency_factor` + `latency_per_load_factor` × loads per round, counted up to
//! `round_loads_limit`) × the measured `dram_latency_cycles` per round, `barrier_cycles` per
//! block barrier and `own_cycles_per_instruction` per instruction the warp issues)
//! and one queue per level, whose service demand is the warp's share of that level's traffic at
//! the SM's share of its bandwidth. With one warp the time is latency-bound (warps × (latency +
//! demands)); with many it tends to the largest demand, the bandwidth bound. A block holds its
//! slot until its last warp ends, and every block that finishes idles its share of the SM while
//! its slot turns over: `[timing] block_turnover_cycles` × (1 / blocks per SM)² per block that
//! takes over a slot, however many rounds it runs (large blocks lose more; the first wave's blocks
//! start together; a block of one warp loses nothing, having no warps to wait for). The last,
//! partial wave runs at its own, smaller population (docs/model.md, "The last, partial wave"). The
//! block dispatcher is one more station (`launch`: `[timing] block_launch_ns` per block, for the
//! whole GPU), and partly written sectors cost the L2 at their own rate. A fixed launch overhead
//! is added. Details and the measurements behind the constants: `docs/model.md`.
//!
//! Bandwidths come from the hardware config's `[bandwidth]` (measured values where there are
//! some; the DRAM peak of `[dram]` otherwise). The L1 and the FP units run at the SM clock, so
//! their rates scale with the clock the kernel runs at (the time model's default is the base
//! clock, which Nsight Compute locks; [`busy_seconds`] is at the boost clock); the measured DRAM
//! and L2 bandwidths are used as they are. The L1 limiter counts wavefronts at one per SM per
//! cycle when the config gives no L1 bandwidth, else bytes over `l1_gbs` (the Kepler configs
//! carry Su et al.'s measured on-SMX bandwidth), plus `[timing] l1_busy_per_dram_time` × the DRAM's
//! time: the pipe is held up while the DRAM works (measured, docs/model.md "Time").

use crate::input::hw::HwConfig;
use crate::input::trace::{AccessKind, FpOps};
use crate::launch::Launch;
use crate::metrics::SECTOR_BYTES;

/// The volumes a time estimate starts from; `None` where unknown (that limiter is skipped).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TimeInputs {
    /// Bytes read from and written to DRAM.
    pub dram_bytes: Option<f64>,
    /// Of those, the bytes read (the DRAM's rates by direction apply where the config has them,
    /// [`crate::input::hw::BandwidthConfig::dram_seconds`]); `None`: one rate for all.
    pub dram_read_bytes: Option<f64>,
    /// Bytes moved between L1 and L2 (both directions).
    pub l2_bytes: Option<f64>,
    /// Bytes moved between registers and L1 (both directions).
    pub l1_bytes: Option<f64>,
    /// L1 data-stage wavefronts (cycles of one SM's L1), summed over SMs.
    pub l1_wavefronts: Option<f64>,
    /// Floating-point operations by precision.
    pub flops: Option<FpOps>,
    /// Warp instructions of the whole launch, all of them (the issue limiter's work).
    pub warp_instructions: Option<f64>,
    /// Warps with at least one active lane over the whole launch; every warp of every block when
    /// `None`.
    pub active_warps: Option<f64>,
    /// Dependent rounds of memory accesses per warp (loop trips; one without a loop; values
    /// below one count as one).
    pub rounds_per_warp: f64,
    /// Global load instructions per warp and round (each lengthens the round's delay,
    /// `[timing] latency_per_load_factor`); when unknown, the program's load instructions over
    /// its rounds (each access once).
    pub loads_per_round: Option<f64>,
    /// Sectors the stores write only in part: the L2 takes them at
    /// `[bandwidth] l2_partial_write_sectors_per_ns` instead of its byte rate.
    pub l2_partial_write_sectors: Option<f64>,
    /// The write requests (lines) that carry those sectors: each costs the L2
    /// `[bandwidth] l2_partial_write_requests_per_ns` on top of its sectors; `None`: one a sector.
    pub l2_partial_write_requests: Option<f64>,
    /// Sectors the stores left partly written in the L2 (`l2.sectors_left_partial`).
    pub sectors_left_partial: Option<f64>,
    /// Of those, the sectors two SMs (two blocks) write between them
    /// (`l2.partial_sectors_across_sms`).
    pub partial_sectors_across_sms: Option<f64>,
    /// The atomics of the busiest L2 slice: requests, sectors of 1- to 4-byte operations,
    /// sectors of 8-byte ones, and requests that take the float add's latency instead
    /// ([`crate::sim::Counts::atomic_busiest_slice`]); `None` without atomics.
    pub atomic_busiest_slice: Option<[f64; 4]>,
    /// The atomic requests the SMs send the L2 and their sectors (`l2.atomic_requests`,
    /// `l2.atomic_sectors`); `None` without atomics.
    pub atomic_requests: Option<[f64; 2]>,
}

/// Every limiter's name, in report order: the memory levels, the floating-point units, the
/// SMs' instruction issue (`issue`: `[sm] warp_instructions_per_cycle`; only where the kernel's
/// instructions are known), the block dispatcher (`launch`: blocks at `[timing]
/// block_launch_ns` each), the L2 slice that applies the most atomics (`atomic`: `[atomics]`;
/// only for kernels with atomics) and the SMs sending their atomic requests (`atomic_sm`:
/// `[atomics] sm_request_cycles`, `sm_sector_cycles`; only for kernels with atomics).
pub const LIMITERS: [&str; 8] = [
    "dram",
    "l2",
    "l1",
    "fp",
    "issue",
    "launch",
    "atomic",
    "atomic_sm",
];

/// One limiter's time.
#[derive(Debug, Clone, PartialEq)]
pub struct LimiterTime {
    /// One of [`LIMITERS`].
    pub name: &'static str,
    /// Seconds.
    pub seconds: f64,
}

/// The partly written sectors a launch leaves in the L2, those waiting at once, and the DRAM
/// time they take (`[partial_writeback]`; 0 without it or without such sectors).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PartialWritebacks {
    /// Sectors the stores left partly written (`l2.sectors_left_partial`).
    pub left_partial: f64,
    /// Of those, the sectors two SMs write between them (`l2.partial_sectors_across_sms`).
    pub across_sms: f64,
    /// Partly written sectors waiting at once: the resident warps of the GPU times the partly
    /// written sectors a warp stores per round of loads (those of one round wait together; a
    /// loop's trips are rounds, so a program gives the same however it is written).
    pub waiting: f64,
    /// What they add to the DRAM's time.
    pub seconds: f64,
}

/// [`PartialWritebacks`] of a launch with `resident` warps on the GPU at once, of `warps` that
/// run `rounds` rounds of loads each.
fn partial_writebacks(
    hw: &HwConfig,
    inputs: &TimeInputs,
    resident: f64,
    warps: f64,
    rounds: f64,
) -> PartialWritebacks {
    let (Some(left_partial), Some(stored)) =
        (inputs.sectors_left_partial, inputs.l2_partial_write_sectors)
    else {
        return PartialWritebacks::default();
    };
    let waiting = resident * stored / warps / rounds;
    let across_sms = inputs.partial_sectors_across_sms.unwrap_or(0.0);
    PartialWritebacks {
        left_partial,
        across_sms,
        waiting,
        seconds: hw
            .partial_writeback
            .map_or(0.0, |p| p.seconds(left_partial, across_sms, waiting)),
    }
}

/// Sectors the stores write only in part, and the write requests (lines) that carry them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PartialWrites {
    /// Partly written sectors.
    pub sectors: f64,
    /// Requests with at least one of them.
    pub requests: f64,
}

/// The L2 slices' time for `bytes` between the L1s and the L2, of which `partial` are sectors
/// the stores write only in part; `None` without an L2 rate (`bandwidth.l2_gbs`). A partly
/// written sector occupies its slice far longer than a whole one moved at the byte rate
/// (validation/store_patterns.cu), so such sectors are charged at their own rate
/// (`l2_partial_write_sectors_per_ns`), and each request carrying them at another
/// (`l2_partial_write_requests_per_ns`, where the config has one: a request of four half-written
/// sectors costs less than four of one, validation/store_merge.cu); the slices work on the rest
/// of the traffic meanwhile, in part, so the two times combine as a norm between their sum and
/// the larger (`l2_partial_write_overlap_exponent`, validation/partial_mix.cu).
pub fn l2_seconds(hw: &HwConfig, bytes: f64, partial: Option<PartialWrites>) -> Option<f64> {
    let gbs = hw.bandwidth.l2_gbs?;
    let b = &hw.bandwidth;
    let (partial, partial_s) = match (partial, b.l2_partial_write_sectors_per_ns) {
        (Some(p), Some(per_ns)) => {
            let requests_s = b
                .l2_partial_write_requests_per_ns
                .map_or(0.0, |r| p.requests / r * 1e-9);
            (
                p.sectors * SECTOR_BYTES as f64,
                p.sectors / per_ns * 1e-9 + requests_s,
            )
        }
        _ => (0.0, 0.0),
    };
    let rest_s = (bytes - partial).max(0.0) / (gbs * 1e9);
    let k = hw
        .bandwidth
        .l2_partial_write_overlap_exponent
        .unwrap_or(1.0);
    Some(overlapped(rest_s, partial_s, k))
}

/// Two times of one unit that overlap in part: the norm `(a^k + b^k)^(1/k)`, their sum at
/// `k = 1` and towards the larger as `k` grows.
fn overlapped(a: f64, b: f64, k: f64) -> f64 {
    if a <= 0.0 || b <= 0.0 || k == 1.0 {
        return a + b;
    }
    let big = a.max(b);
    // Scaled by the larger, so that the powers neither overflow nor vanish.
    big * (1.0 + (a.min(b) / big).powf(k)).powf(1.0 / k)
}

/// Throughput (jobs per cycle) of a closed queueing network by exact mean-value analysis:
/// `customers` jobs cycle through a pure delay of `delay` cycles and through queueing stations
/// with service demands `demands` (cycles per job at each). A fractional customer count is
/// interpolated linearly between its neighbours. One customer gives 1 / (delay + Σ demands);
/// many tend to 1 / max(demands).
pub fn mva_throughput(customers: f64, delay: f64, demands: &[f64]) -> f64 {
    let customers = customers.max(1.0);
    let whole = customers.floor() as u64;
    let mut queue = vec![0.0; demands.len()];
    let mut x_prev = 0.0;
    let mut x = 0.0;
    for n in 1..=whole + 1 {
        let residence: Vec<f64> = demands
            .iter()
            .zip(&queue)
            .map(|(d, q)| d * (1.0 + q))
            .collect();
        x_prev = x;
        x = n as f64 / (delay + residence.iter().sum::<f64>());
        for (q, r) in queue.iter_mut().zip(&residence) {
            *q = x * r;
        }
    }
    // x is the throughput at whole + 1 customers, x_prev at whole.
    x_prev + (x - x_prev) * (customers - whole as f64)
}

/// What the queueing model works out from the volumes alone (no kernel needed).
pub(crate) struct Queueing {
    pub(crate) clock: f64,
    pub(crate) limiters: Vec<LimiterTime>,
    pub(crate) bandwidth_bound_s: f64,
    pub(crate) utilisation: Vec<f64>,
    pub(crate) resident_warps: f64,
    pub(crate) effective_warps: f64,
    pub(crate) block_turnover_s: f64,
    pub(crate) delay: f64,
    /// Dependent rounds of loads per warp (at least 1).
    pub(crate) rounds_per_warp: f64,
    /// Global load instructions per round.
    pub(crate) loads_per_round: f64,
    /// Block barriers a warp passes, each `[timing] barrier_cycles` of the delay.
    pub(crate) barriers_per_warp: f64,
    /// Warps of the launch with a lane inside the guard.
    pub(crate) active_warps: f64,
    /// Partly written sectors, those waiting at once, and their DRAM time.
    pub(crate) partial: PartialWritebacks,
    /// The queueing network's time (the last partial wave's included), without the block
    /// turnover and the launch overhead.
    pub(crate) busy_s: f64,
    /// Of `busy_s`, what the last, partial wave adds ([`last_wave_cycles`]).
    pub(crate) last_wave_s: f64,
    pub(crate) predicted_s: f64,
}

/// The seconds the SMs are busy with `launch` by the queueing model (the predicted time less
/// the launch overhead), at the boost clock.
pub fn busy_seconds(hw: &HwConfig, launch: &Launch, inputs: &TimeInputs) -> f64 {
    busy_seconds_at(hw, launch, inputs, None)
}

/// [`busy_seconds`] without the last, partial wave's slower end (whose blocks run with fewer
/// warps than the slots hold): the pace of the SMs while every slot is taken, at the boost
/// clock. The dispatcher's GPC chance takes this: it is about how fast blocks are handed out
/// while they are, and it keeps the chance independent of how a program is written (the last
/// wave's small population makes the delay count, and the delay's loads per round fall back on
/// the program's text where unknown).
pub fn steady_busy_seconds(hw: &HwConfig, launch: &Launch, inputs: &TimeInputs) -> f64 {
    let q = queueing(hw, launch, inputs, None);
    q.predicted_s - q.last_wave_s - hw.timing.launch_overhead_us * 1e-6
}

/// [`busy_seconds`] at `clock_ghz` (the config's boost clock when `None`).
pub fn busy_seconds_at(
    hw: &HwConfig,
    launch: &Launch,
    inputs: &TimeInputs,
    clock_ghz: Option<f64>,
) -> f64 {
    queueing(hw, launch, inputs, clock_ghz).predicted_s - hw.timing.launch_overhead_us * 1e-6
}

/// What the last, partial wave of blocks adds to the steady pace, in cycles: an SM whose last
/// blocks fill only part of its slots runs them with fewer warps to hide the delay, so they take
/// the life of a warp at that population, not their share of the full one's pace
/// (`throughput`, warps per cycle). Nothing for a launch of at most one wave (its population is
/// the resident warps already) or of whole waves. The blocks of the last wave are spread evenly
/// over the SMs, as the steady pace spreads every block.
fn last_wave_cycles(
    launch: &Launch,
    sms: f64,
    active_per_block: f64,
    delay: f64,
    demands: &[f64],
    throughput: f64,
) -> f64 {
    let slots = launch.occupancy.blocks_per_sm.max(1) as f64;
    let waves = launch.total_blocks as f64 / sms / slots;
    let part = waves - waves.floor();
    if waves <= 1.0 || part <= 0.0 {
        return 0.0;
    }
    let warps = part * slots * active_per_block;
    let population = warps.max(1.0);
    let life = population / mva_throughput(population, delay, demands);
    (life - warps / throughput).max(0.0)
}

/// The limiters and the per-SM queueing model (the time model's [`crate::timing::estimate`]
/// adds what needs the kernel).
pub(crate) fn queueing(
    hw: &HwConfig,
    launch: &Launch,
    inputs: &TimeInputs,
    clock_ghz: Option<f64>,
) -> Queueing {
    let clock = clock_ghz.unwrap_or(hw.sm.clock_ghz);
    let clock_scale = clock / hw.sm.clock_ghz;
    let sms = hw.sm.count as f64;
    let warps_per_block = launch.occupancy.warps_per_block as f64;
    let all_warps = launch.total_blocks as f64 * warps_per_block;
    let warps = inputs.active_warps.unwrap_or(all_warps).max(1.0);
    let active_per_block = warps / launch.total_blocks.max(1) as f64;
    let resident_warps = launch.occupancy.blocks_per_sm as f64 * active_per_block;
    let rounds = inputs.rounds_per_warp.max(1.0);
    let partial = partial_writebacks(hw, inputs, resident_warps * sms, warps, rounds);
    let mut limiters = Vec::new();
    let dram_gbs = hw.bandwidth.dram_gbs.unwrap_or(hw.dram.bandwidth_gbs);
    if let Some(b) = inputs.dram_bytes {
        limiters.push(LimiterTime {
            name: "dram",
            seconds: hw
                .bandwidth
                .dram_seconds(b, inputs.dram_read_bytes, dram_gbs)
                + partial.seconds,
        });
    }
    // Not scaled with the SM clock: the H200's measured L2 rate holds at base clocks (the dev
    // set's star4 128x2x1 moves 9.9 TB/s between L1 and L2 under ncu's base-clock lock; the
    // partly written sectors' rate and overlap were measured at base clocks too).
    if let Some(seconds) = inputs.l2_bytes.and_then(|b| {
        let partial = inputs
            .l2_partial_write_sectors
            .map(|sectors| PartialWrites {
                sectors,
                requests: inputs.l2_partial_write_requests.unwrap_or(sectors),
            });
        l2_seconds(hw, b, partial)
    }) {
        limiters.push(LimiterTime {
            name: "l2",
            seconds,
        });
    }
    // The L1 data pipe is held up while the DRAM works: an L1-bound launch runs past its
    // wavefronts' time by a share of its DRAM time (validation/l1_dram_overlap.cu), charged to
    // the L1 as busy time, so that a DRAM-bound launch still hides its L1 work. Fills from the
    // L2 hold it up about half as long per line, but fitted across the kernels their share came
    // out 0: not charged.
    let dram_s = limiters
        .iter()
        .find(|l| l.name == "dram")
        .map_or(0.0, |l| l.seconds);
    let l1_held = hw.timing.l1_busy_per_dram_time * dram_s;
    match (hw.bandwidth.l1_gbs, inputs.l1_bytes, inputs.l1_wavefronts) {
        (Some(gbs), Some(b), _) => limiters.push(LimiterTime {
            name: "l1",
            seconds: b / (gbs * clock_scale * 1e9) + l1_held,
        }),
        (None, _, Some(w)) => limiters.push(LimiterTime {
            name: "l1",
            seconds: w / (hw.sm.count as f64 * clock * 1e9) + l1_held,
        }),
        _ => {}
    }
    // The FP32 and FP64 pipes take the warps' instructions in turn: their times add. A
    // precision the config gives no peak for leaves the limiter out.
    if let Some(ops) = inputs.flops {
        let pipe = |n: f64, peak: Option<f64>| match peak {
            _ if n == 0.0 => Some(0.0),
            Some(g) => Some(n / (g * clock_scale * 1e9)),
            None => None,
        };
        if let (Some(single), Some(double)) = (
            pipe(ops.fp32, hw.bandwidth.fp32_gflops),
            pipe(ops.fp64, hw.bandwidth.fp64_gflops),
        ) {
            limiters.push(LimiterTime {
                name: "fp",
                seconds: single + double,
            });
        }
    }
    // Each of an SM's schedulers issues one warp instruction a cycle: kernels with many
    // instructions per byte go at that pace (validation/issue_bound.cu).
    if let (Some(n), Some(per_cycle)) =
        (inputs.warp_instructions, hw.sm.warp_instructions_per_cycle)
    {
        limiters.push(LimiterTime {
            name: "issue",
            seconds: n / (sms * per_cycle * clock * 1e9),
        });
    }
    // The dispatcher hands out blocks one at a time for the whole GPU, at a rate that does not
    // follow the SM clock (empty blocks, tests/data/h200/store_patterns/launch_*.csv): launches
    // of many small blocks go at its pace.
    if let Some(ns) = hw.timing.block_launch_ns {
        limiters.push(LimiterTime {
            name: "launch",
            seconds: launch.total_blocks as f64 * ns * 1e-9,
        });
    }
    // Each L2 slice applies its atomics one after another: the busiest one's work is a floor
    // however many slices idle (validation/atomics_contention.cu).
    if let (Some(a), Some(tally)) = (hw.atomics, inputs.atomic_busiest_slice) {
        limiters.push(LimiterTime {
            name: "atomic",
            seconds: a.slice_ns(tally) * 1e-9,
        });
    }
    // Before the slices, each SM sends its atomic requests one after another: atomics spread
    // over every slice go at the SMs' pace (validation/atomics_contention.cu, 2^20 words and
    // more).
    if let Some(cycles) = (hw.atomics)
        .zip(inputs.atomic_requests)
        .and_then(|(a, [requests, sectors])| a.sm_cycles(requests, sectors))
    {
        limiters.push(LimiterTime {
            name: "atomic_sm",
            seconds: cycles / (sms * clock * 1e9),
        });
    }
    let bandwidth_bound_s = limiters.iter().map(|l| l.seconds).fold(0.0, f64::max);

    // The per-SM queueing model, in cycles of the SM clock.
    let cycles_per_s = clock * 1e9;
    let warps_per_sm = warps / sms;
    let effective_warps = resident_warps.max(1.0).min(warps_per_sm.max(1.0));
    // A level moving B bytes at bandwidth W serves one warp's share of B at W / SMs per SM.
    let demands: Vec<f64> = limiters
        .iter()
        .map(|l| l.seconds * sms / warps * cycles_per_s)
        .collect();
    let loads_per_round = inputs.loads_per_round.unwrap_or_else(|| {
        let loads = (launch.program.accesses.iter())
            .filter(|a| a.kind == AccessKind::Load)
            .count();
        loads as f64 / rounds
    });
    // A barrier is not a round of loads: the warp waits there for its block's other warps, not
    // for the memory (validation/reductions.cu: a shared-memory tree's 6-10 barriers more than
    // its warp-shuffle twin cost about 100 cycles each, a seventh of a round).
    let barriers = launch.barriers_per_thread as f64;
    // Nor is a warp's own chain of instructions: each waits on the one before it, whatever the
    // other warps do (the compiled code's stall counts, docs/model.md "Time"). Unknown
    // instructions add nothing.
    let instructions_per_warp = inputs.warp_instructions.map_or(0.0, |n| n / warps);
    let delay = hw.timing.round_latency_cycles(loads_per_round) * rounds
        + barriers * hw.timing.barrier_cycles
        + instructions_per_warp * hw.timing.own_cycles_per_instruction;
    let throughput = mva_throughput(effective_warps, delay, &demands);
    let utilisation: Vec<f64> = demands.iter().map(|d| (d * throughput).min(1.0)).collect();
    // Only a block that takes over a slot another block left waits for it: the first wave's
    // blocks start together (a launch of at most one wave turns nothing over). A block of one
    // warp has no warps to wait for: its slot is free the moment its warp ends. Nor has a block
    // whose warps only store, which neither load, nor meet at a barrier, nor send atomics:
    // they end as they issue (validation/dirty_budget.cu and store_merge.cu on the H100:
    // write-only launches of 256-thread blocks go at 2.5 us + 0.60 ns a block, the
    // dispatcher's pace and nothing more; the H200's fma_ilp in 1024-thread blocks).
    let slots = launch.occupancy.blocks_per_sm.max(1) as f64;
    let waits = loads_per_round > 0.0 || barriers > 0.0 || inputs.atomic_requests.is_some();
    let blocks_turning_over = if launch.occupancy.warps_per_block <= 1 || !waits {
        0.0
    } else {
        (launch.total_blocks as f64 / sms - slots).max(0.0)
    };
    // A slot turns over at the same cost however long its blocks run (validation/turnover.cu:
    // the same copy in blocks of 1 to 256 rounds per warp runs faster, not slower, as the
    // blocks get fewer and longer).
    let block_turnover_s =
        hw.timing.block_turnover_cycles * blocks_turning_over / (slots * slots) / cycles_per_s;
    let last_wave = last_wave_cycles(launch, sms, active_per_block, delay, &demands, throughput);
    let busy_s = (warps_per_sm / throughput + last_wave) / cycles_per_s;
    let last_wave_s = last_wave / cycles_per_s;
    let predicted_s = busy_s + block_turnover_s + hw.timing.launch_overhead_us * 1e-6;
    Queueing {
        clock,
        limiters,
        bandwidth_bound_s,
        utilisation,
        resident_warps,
        effective_warps,
        block_turnover_s,
        delay,
        rounds_per_warp: rounds,
        loads_per_round,
        barriers_per_warp: barriers,
        active_warps: warps,
        partial,
        busy_s,
        last_wave_s,
        predicted_s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_times_lie_between_their_sum_and_the_larger() {
        // k = 2: the 3-4-5 triangle; k = 1: the sum; either alone: itself.
        assert!((overlapped(3e-6, 4e-6, 2.0) - 5e-6).abs() < 1e-18);
        assert_eq!(overlapped(3e-6, 4e-6, 1.0), 7e-6);
        assert_eq!(overlapped(3e-6, 0.0, 1.2), 3e-6);
        let t = overlapped(3e-6, 4e-6, 1.2);
        assert!(t > 5e-6 && t < 7e-6, "{t}");
        // A large k tends to the larger.
        assert!((overlapped(3e-6, 4e-6, 60.0) / 4e-6 - 1.0).abs() < 1e-6);
    }

    #[test]
    fn mva_with_one_customer_is_the_sum_of_delay_and_demands() {
        // 1 / (1000 + 10 + 30) jobs per cycle.
        let x = mva_throughput(1.0, 1000.0, &[10.0, 30.0]);
        assert!((x - 1.0 / 1040.0).abs() < 1e-15);
        // Two customers by hand: R(2) = 10 (1 + 10/1040) + 30 (1 + 30/1040); X = 2 / (1000 + R).
        let r2 = 10.0 * (1.0 + 10.0 / 1040.0) + 30.0 * (1.0 + 30.0 / 1040.0);
        assert!((mva_throughput(2.0, 1000.0, &[10.0, 30.0]) - 2.0 / (1000.0 + r2)).abs() < 1e-15);
        // Halfway between one and two customers.
        let half = mva_throughput(1.5, 1000.0, &[10.0, 30.0]);
        assert!((half - (1.0 / 1040.0 + 2.0 / (1000.0 + r2)) / 2.0).abs() < 1e-15);
    }

    #[test]
    fn mva_with_many_customers_tends_to_the_largest_demand() {
        let x = mva_throughput(2000.0, 1000.0, &[10.0, 30.0]);
        assert!((x - 1.0 / 30.0).abs() < 1e-6 / 30.0, "{x}");
        assert!(x <= 1.0 / 30.0);
    }
}
