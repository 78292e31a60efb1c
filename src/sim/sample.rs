//! Sampled simulation (`--sample`): simulate the first waves and the last ones exactly, a few
//! interior waves chosen by stratified sampling, and extrapolate the traffic of the rest, with a
//! 95% confidence interval for every count.
//!
//! The head runs until the L2 has filled once (its turnover, below, plus a wave), so that the
//! interior starts in the steady state of write-backs.
//!
//! A wave is labelled by the blocks dispatched when its ticks run: label `k` covers the ticks
//! in which `k·B ≤ dispatched < (k+1)·B` (B = blocks per wave), so the labels partition the
//! launch and their traffic sums to the total. The per-SM stage and the L2 run only for the waves
//! simulated in detail. The scheduler runs through the other waves too, but jumps over skipped
//! waves where it can, a whole number of waves at a time, the resident blocks becoming those as
//! many waves later with their progress kept (`Scheduler::fast_forward`): from the third skipped
//! wave on (so that no block the caches saw is still resident), where every resident block has
//! the shape of the one it becomes (else the scheduler runs on and tries again a chunk later).
//! The labels then start where they would have, and in a launch whose schedule repeats wave
//! after wave every count is what the scheduler running through would give. The ticks are
//! estimated like the traffic; instructions, thread accesses and active warps are summed over
//! the blocks, exactly. Before each sampled wave a warm-up runs in full
//! detail without being counted, so that the L1s and the L2 hold what they would hold in the
//! exact run: one wave more than the longer of one layer of blocks (the reuse distance of a
//! stencil's outermost grid dimension) and the waves in which the kernel's data fills the L2
//! once (its turnover: the L2's lines, dirty ones too, are then all the warm-up's own).
//!
//! The interior is split into strata of equal length; in each, a seeded generator (so results
//! are deterministic) picks where its counted waves start, except in the first and the last
//! ([`SampleOptions::join_ends`]): the first stratum's run starts right after the head, whose
//! exact waves are its warm-up, and the last one's ends right before the tail, whose warm-up it
//! and its own warm-up then are. That saves two warm-ups (82 of 1986 waves in detail instead of
//! 116 for star4 1024×1024×512 in 32×8×4 blocks on the h200). The estimate of each count is the
//! exact head and tail plus a ratio estimate of the interior: the count per warp instruction
//! (stratified: per stratum, its length times the mean of its counted waves, for the count and
//! for the instructions) times the interior's instructions, which are known exactly. Its
//! interval comes from what the ratio leaves unexplained (d = y − R·x per wave), read two ways
//! and the wider taken: the counted waves as independent draws, half-width
//! t(n−1) · N · s_d / √n · √(1 − n/N); and each stratum's run of counted waves as one cluster
//! (consecutive waves share the caches' state), z_h = N_h · mean(d) over the run, half-width
//! t(m−1) · √(m · s_z²) · √(1 − n/N), for m strata and n counted of N interior waves.

use crate::input::hw::HwConfig;
use crate::launch::Launch;
use crate::metrics::{COUNTERS, Counter, Sampling};
use crate::sim::counters::{self, Counts};

/// How a wave is simulated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaveMode {
    /// In full detail, counted.
    Count,
    /// In full detail, not counted (warming the caches for a counted wave).
    Warm,
    /// Scheduled only: the caches do not see it.
    Skip,
}

/// What a sampled simulation simulates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampleOptions {
    /// Strata of the interior waves (one sampled run of waves each): as many as fit in
    /// `budget_percent` of the waves (warm-ups included), within `min_strata..=max_strata`, and
    /// at least two (one for a screen, whose error is not taken from their spread).
    pub min_strata: u32,
    /// The most strata.
    pub max_strata: u32,
    /// Share of the waves to simulate in detail, in percent, when the launch is long enough.
    pub budget_percent: u32,
    /// Consecutive waves counted per stratum.
    pub counted_waves: u32,
    /// Waves at the start simulated exactly (cold caches, the first wave's spread); at least
    /// those until the L2 has turned over once (see [`WavePlan::new`]).
    pub head_waves: u32,
    /// Waves at the end simulated exactly (the last partial wave and the drain).
    pub tail_waves: u32,
    /// Seed of the stratified choice.
    pub seed: u64,
    /// Let the scheduler jump over skipped waves (else it runs through them).
    pub jump: bool,
    /// Join the strata at the ends to the exact waves beside them: the first stratum's counted
    /// run starts right after the head, whose exact waves warm it, and the last stratum's ends
    /// right before the tail, whose warm-up it then is; the other strata's runs start where the
    /// seeded draw puts them. Two warm-ups fewer.
    pub join_ends: bool,
    /// Screen rather than sample ([`WavePlan::plan`]): the head (until the L2 has turned over
    /// once), then every stratum's counted waves back to back right after it, the rest skipped,
    /// no tail. The cheapest estimate (no warm-ups: the head warms the first counted wave, each
    /// counted wave the next), biased towards the launch's start; `rank` screens block shapes
    /// with it.
    pub screen: bool,
    /// A screen's head, in percent of the waves in which the kernel's data fills the L2 once
    /// (100: until the L2 has turned over, then one wave more); at least [`Self::head_waves`].
    /// Ignored unless [`Self::screen`].
    pub screen_head_percent: u32,
}

impl Default for SampleOptions {
    fn default() -> Self {
        SampleOptions {
            min_strata: 4,
            max_strata: 16,
            budget_percent: 5,
            counted_waves: 3,
            head_waves: 2,
            tail_waves: 2,
            seed: 0x5eed_9e37_79b9_7f4a,
            jump: true,
            join_ends: true,
            screen: false,
            screen_head_percent: 100,
        }
    }
}

impl SampleOptions {
    /// What `rank` screens block shapes with: two strata of two counted waves right after the
    /// head ([`SampleOptions::screen`]).
    pub fn screening() -> SampleOptions {
        SampleOptions {
            min_strata: 2,
            max_strata: 2,
            counted_waves: 2,
            screen: true,
            ..SampleOptions::default()
        }
    }

    /// What `rank` pre-screens block shapes with before screening them: a screen whose head is
    /// the first two waves (they warm the L1s; the L2 is not waited for), then one stratum of
    /// two counted waves: 4 waves in detail where a screen of a launch whose L2 turns over in 15
    /// takes 20. Run with an L2 that never evicts, it is a lower estimate of the time
    /// (`time_bound::pre_screen`).
    pub fn pre_screening() -> SampleOptions {
        SampleOptions {
            screen_head_percent: 0,
            head_waves: 1,
            min_strata: 1,
            max_strata: 1,
            ..SampleOptions::screening()
        }
    }
}

/// The waves of one launch and how each is simulated.
#[derive(Debug, Clone)]
pub struct WavePlan {
    /// Blocks per wave.
    pub blocks_per_wave: u64,
    /// Mode by label (`0..=last`).
    pub modes: Vec<WaveMode>,
    /// The interior labels `[lo, hi)`, estimated from samples.
    pub interior: (u64, u64),
    /// Each stratum's labels `[lo, hi)` and its counted labels.
    pub strata: Vec<((u64, u64), Vec<u64>)>,
    /// Waves of warm-up before each counted run.
    pub warmup_waves: u64,
    /// Whether the scheduler may jump over skipped waves ([`SampleOptions::jump`]).
    pub jump: bool,
}

impl WavePlan {
    /// The plan for `launch`, or `None` when the launch is too short for sampling to pay (it is
    /// then simulated exactly; [`WavePlan::plan`] says why).
    pub fn new(launch: &Launch, hw: &HwConfig, o: &SampleOptions) -> Option<WavePlan> {
        WavePlan::plan(launch, hw, o).ok()
    }

    /// The plan for `launch`, or why it is simulated exactly: a sentence naming its interior
    /// waves and the least that sampling needs.
    pub fn plan(
        launch: &Launch,
        hw: &HwConfig,
        o: &SampleOptions,
    ) -> std::result::Result<WavePlan, String> {
        let b = (launch.occupancy.blocks_per_sm as u64 * hw.sm.count as u64).max(1);
        let last = launch.total_blocks / b;
        let g = launch.grid;
        // One layer of blocks: the blocks of one step of the slowest grid dimension in use.
        let layer = if g[2] > 1 {
            g[0] as u64 * g[1] as u64
        } else if g[1] > 1 {
            g[0] as u64
        } else {
            1
        };
        // The L2 must also have turned over since the last detailed wave, or its stale lines
        // (dirty ones too) stand in for what the skipped waves would have left: the waves in
        // which the kernel's data, spread evenly, fills the L2 once.
        let data: u64 = launch.arrays.iter().map(|a| a.bytes()).sum();
        let waves = launch.total_blocks.div_ceil(b).max(1);
        let per_wave = data.div_ceil(waves).max(1);
        let turnover = hw.l2.size_bytes.div_ceil(per_wave);
        let warmup = layer.div_ceil(b).max(turnover) + 1;
        let counted = o.counted_waves.max(2) as u64;
        let budget = waves * o.budget_percent as u64 / 100 / (warmup + counted);
        // A sampled run's interval needs two strata at least; a screen's (a fixed margin) not.
        let least = if o.screen { 1 } else { 2 };
        let strata = budget.clamp(
            o.min_strata.max(least) as u64,
            o.max_strata.max(least) as u64,
        );
        // The first label the scheduler can see is the one after the first wave's dispatch.
        let first = b.min(launch.total_blocks) / b;
        if o.screen {
            return WavePlan::screen(b, last, first, turnover, counted, strata, o);
        }
        // The head runs until the L2 has filled once: before then nothing is written back, and a
        // first stratum that extrapolated its steady write-backs over those waves would count
        // them (2.4% of the DRAM writes of star4 640x512x512, 16x4x4 blocks, on the h200).
        let head = (o.head_waves as u64).max(turnover + 1);
        let lo = first + head;
        let hi = (last + 1).saturating_sub(o.tail_waves as u64);
        let interior = hi.saturating_sub(lo);
        // Each stratum needs room for its counted waves, and sampling must leave most waves
        // out to be worth its warm-ups.
        let needed = strata * (counted + warmup) * 2;
        if interior < needed {
            return Err(format!(
                "too short to sample: {interior} interior waves of {waves}, sampling needs at least {needed} ({strata} strata of {counted} counted and {warmup} warm-up waves, twice)"
            ));
        }
        let mut modes = vec![WaveMode::Skip; last as usize + 1];
        for m in modes.iter_mut().take(lo as usize) {
            *m = WaveMode::Count;
        }
        for m in modes.iter_mut().skip(hi as usize) {
            *m = WaveMode::Count;
        }
        let warm = |modes: &mut Vec<WaveMode>, start: u64| {
            for l in start.saturating_sub(warmup)..start {
                if modes[l as usize] == WaveMode::Skip {
                    modes[l as usize] = WaveMode::Warm;
                }
            }
        };
        warm(&mut modes, hi);
        let mut rng = SplitMix(o.seed ^ launch.total_blocks.rotate_left(17));
        let mut plan_strata = Vec::new();
        for s in 0..strata {
            let a = lo + interior * s / strata;
            let z = lo + interior * (s + 1) / strata;
            // Drawn in every stratum, so that the strata between draw what they always drew.
            let drawn = a + rng.below(z - a - counted + 1);
            let start = match s {
                0 if o.join_ends => a,
                _ if o.join_ends && s + 1 == strata => z - counted,
                _ => drawn,
            };
            let labels: Vec<u64> = (start..start + counted).collect();
            for &l in &labels {
                modes[l as usize] = WaveMode::Count;
            }
            warm(&mut modes, start);
            plan_strata.push(((a, z), labels));
        }
        Ok(WavePlan {
            blocks_per_wave: b,
            modes,
            interior: (lo, hi),
            strata: plan_strata,
            warmup_waves: warmup,
            jump: o.jump,
        })
    }

    /// The screening plan ([`SampleOptions::screen`]): the head runs until the L2 has turned
    /// over once, then `strata` runs of `counted` waves back to back; the rest is skipped. Each
    /// run stands for an equal share of the interior, as a stratum. Unlike a sampled wave's
    /// warm-up, the head need not last a layer of blocks: where a layer takes longer than the L2
    /// takes to turn over, the reuse from one layer to the next misses in the L2 anyway, as in
    /// the first layer.
    fn screen(
        b: u64,
        last: u64,
        first: u64,
        turnover: u64,
        counted: u64,
        strata: u64,
        o: &SampleOptions,
    ) -> std::result::Result<WavePlan, String> {
        let head = (turnover * o.screen_head_percent as u64).div_ceil(100) + 1;
        let lo = first + head.max(o.head_waves as u64);
        let hi = last + 1;
        let interior = hi.saturating_sub(lo);
        // Screening pays only where most of the launch is left out.
        let needed = strata * counted * 4;
        if interior < needed {
            return Err(format!(
                "too short to screen: {interior} waves after the {} of the head, screening needs at least {needed}",
                lo - first
            ));
        }
        let mut modes = vec![WaveMode::Skip; last as usize + 1];
        for m in modes.iter_mut().take((lo + strata * counted) as usize) {
            *m = WaveMode::Count;
        }
        let plan_strata = (0..strata)
            .map(|s| {
                let range = (lo + interior * s / strata, lo + interior * (s + 1) / strata);
                let start = lo + s * counted;
                (range, (start..start + counted).collect())
            })
            .collect();
        Ok(WavePlan {
            blocks_per_wave: b,
            modes,
            interior: (lo, hi),
            strata: plan_strata,
            warmup_waves: 0,
            jump: o.jump,
        })
    }

    /// The label of the ticks run while `dispatched` blocks have been dispatched.
    pub fn label(&self, dispatched: u64) -> u64 {
        (dispatched / self.blocks_per_wave).min(self.modes.len() as u64 - 1)
    }

    /// How the wave `label` is simulated.
    pub fn mode(&self, label: u64) -> WaveMode {
        self.modes[label as usize]
    }

    /// The dispatch count at which wave `label` ends.
    pub fn end_of(&self, label: u64) -> u64 {
        (label + 1) * self.blocks_per_wave
    }

    /// The dispatch count at which a chunk of ticks that starts in wave `label` must end: where
    /// the wave does if it is skipped or one a stratum counts (each is tallied on its own), else
    /// where the run of waves like it ends: warm-ups are not tallied and the head and the tail
    /// only as a whole, so their waves may share chunks (fewer, longer chunks: each meeting of
    /// the pipeline's stages costs time).
    pub fn chunk_end(&self, label: u64) -> u64 {
        let mode = self.mode(label);
        // The counted waves between the head and the tail are the strata's.
        let (lo, hi) = self.interior;
        let sampled = |l: u64| (lo..hi).contains(&l) && self.mode(l) == WaveMode::Count;
        if mode == WaveMode::Skip || sampled(label) {
            return self.end_of(label);
        }
        let last = (label + 1..self.modes.len() as u64)
            .take_while(|&l| self.mode(l) == mode && !sampled(l))
            .last()
            .unwrap_or(label);
        self.end_of(last)
    }

    /// Whether the scheduler may jump over wave `label`: it is skipped, and so are the two
    /// before it, so that no block the caches saw is still resident.
    pub fn jumpable(&self, label: u64) -> bool {
        self.jump && label >= 2 && (label - 2..=label).all(|l| self.mode(l) == WaveMode::Skip)
    }

    /// The first wave after `label` simulated in detail (the tail always is).
    pub fn next_detailed(&self, label: u64) -> u64 {
        (label + 1..self.modes.len() as u64)
            .find(|&l| self.mode(l) != WaveMode::Skip)
            .unwrap_or(self.modes.len() as u64 - 1)
    }

    /// The dispatch count at which wave `label` starts.
    pub fn start_of(&self, label: u64) -> u64 {
        label * self.blocks_per_wave
    }

    /// Labels simulated in detail (counted or warming).
    pub fn detailed(&self) -> usize {
        self.modes.iter().filter(|m| **m != WaveMode::Skip).count()
    }
}

/// The counts the sampler extrapolates, as one vector: each sampled counter of the table
/// (`metrics::counter_table!`, in its order: the L1's first), then the compulsory volume and the
/// ticks.
pub const FIELDS: usize = counters::SAMPLED + 2;
/// How many of [`FIELDS`] are the L1's (then come the L2's, the DRAM's, the compulsory volume
/// and the ticks).
pub const L1_FIELDS: usize = {
    let mut n = 0;
    let mut i = 0;
    while i < COUNTERS.len() {
        let c = &COUNTERS[i];
        if matches!(c.level.as_bytes(), b"l1") && !matches!(c.sampling, Sampling::Derived) {
            n += 1;
        }
        i += 1;
    }
    n
};
/// The place of the ticks in [`FIELDS`].
pub const TICKS_FIELD: usize = FIELDS - 1;

/// The additive fields of `c`, in [`FIELDS`] order (the compulsory volume as 0 when untracked).
pub fn fields(c: &Counts) -> [u64; FIELDS] {
    let mut c = c.clone();
    let mut compulsory = c.compulsory_dram_read_sectors.unwrap_or(0);
    let f = fields_mut(&mut c, &mut compulsory);
    f.map(|v| *v)
}

fn fields_mut<'a>(c: &'a mut Counts, compulsory: &'a mut u64) -> [&'a mut u64; FIELDS] {
    counters::fields_mut(c, compulsory)
}

/// The sampled counters of the table, in [`FIELDS`] order.
fn sampled_counters() -> impl Iterator<Item = &'static Counter> {
    COUNTERS
        .iter()
        .filter(|c| !matches!(c.sampling, Sampling::Derived))
}

/// The place in [`FIELDS`] of the sampled counter `field` of `level`.
fn place(level: &str, field: &str) -> usize {
    sampled_counters()
        .position(|c| c.level == level && c.field == field)
        .unwrap_or_else(|| panic!("{level}.{field} is a sampled counter"))
}

/// How many sampled counters are instruction counts, or (`with_addresses`) decided by the
/// addresses alone (instruction counts included).
const fn count_places(with_addresses: bool) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < COUNTERS.len() {
        match COUNTERS[i].sampling {
            Sampling::Instruction => n += 1,
            Sampling::Address if with_addresses => n += 1,
            _ => {}
        }
        i += 1;
    }
    n
}

/// The places in [`FIELDS`] that [`count_places`] counts.
const fn places<const N: usize>(with_addresses: bool) -> [usize; N] {
    let mut out = [0; N];
    let (mut n, mut place, mut i) = (0, 0, 0);
    while i < COUNTERS.len() {
        let picked = match COUNTERS[i].sampling {
            Sampling::Instruction => true,
            Sampling::Address => with_addresses,
            _ => false,
        };
        if picked {
            out[n] = place;
            n += 1;
        }
        if !matches!(COUNTERS[i].sampling, Sampling::Derived) {
            place += 1;
        }
        i += 1;
    }
    out
}

/// `c` with its additive fields replaced by `values`.
pub fn with_fields(c: &Counts, values: &[u64; FIELDS]) -> Counts {
    let mut out = c.clone();
    let mut compulsory = 0;
    for (f, v) in fields_mut(&mut out, &mut compulsory)
        .into_iter()
        .zip(values)
    {
        *f = *v;
    }
    if out.compulsory_dram_read_sectors.is_some() {
        out.compulsory_dram_read_sectors = Some(compulsory);
    }
    out
}

/// What the counted waves of a sampled simulation added, by label.
#[derive(Debug, Clone, Default)]
pub struct WaveTallies {
    /// Per counted label, the fields it added.
    pub by_label: std::collections::BTreeMap<u64, [u64; FIELDS]>,
    /// Blocks the scheduler jumped over.
    pub jumped_blocks: u64,
}

impl WaveTallies {
    /// Adds `delta` to the tally of `label`.
    pub fn add(&mut self, label: u64, delta: &[u64; FIELDS]) {
        let t = self.by_label.entry(label).or_insert([0; FIELDS]);
        for (a, d) in t.iter_mut().zip(delta) {
            *a += d;
        }
    }
}

/// The estimate of every field: the point and the 95% interval.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// Point estimates.
    pub point: [u64; FIELDS],
    /// Lower ends of the intervals.
    pub lo: [u64; FIELDS],
    /// Upper ends.
    pub hi: [u64; FIELDS],
}

/// The places in [`FIELDS`] of the L1's counts that the lanes' addresses alone decide, whatever
/// the schedule and the caches (the table's `address` and `instruction` rows): requests and
/// sectors of loads, stores and atomics, the blocks' distinct load sectors and lines, the
/// data-stage passes. A sampled simulation of the simple
/// form counts them over every warp ([`crate::sim::sm_stage::instruction_counts`]) instead of
/// estimating them.
pub const ADDRESS_FIELDS: [usize; count_places(true)] = places(true);

impl Estimate {
    /// Replaces the estimates of [`ADDRESS_FIELDS`] by the exact values in `exact`, intervals
    /// of zero width, and those of the L2's write and atomic sectors by the L1's store and
    /// atomic sectors.
    pub fn with_exact_address_fields(mut self, exact: &[u64; FIELDS]) -> Estimate {
        // Every store and atomic sector of the L1 goes on to the L2 (write-through, atomics
        // bypass it): the L2's write and atomic sectors are the L1's.
        let mut exact = *exact;
        let mirrors: Vec<(usize, usize)> = sampled_counters()
            .enumerate()
            .filter_map(|(f, c)| match c.sampling {
                Sampling::Mirrors(of) => Some((f, place("l1", of))),
                _ => None,
            })
            .collect();
        for &(f, of) in &mirrors {
            exact[f] = exact[of];
        }
        for f in ADDRESS_FIELDS
            .into_iter()
            .chain(mirrors.iter().map(|m| m.0))
        {
            (self.point[f], self.lo[f], self.hi[f]) = (exact[f], exact[f], exact[f]);
        }
        self
    }
}

/// The places in [`FIELDS`] of the L1's load, store and atomic requests (the table's
/// `instruction` rows): every warp instruction is one of them.
const INSTRUCTION_FIELDS: [usize; count_places(false)] = places(false);

/// The warp instructions a tally holds.
fn instructions(t: &[u64; FIELDS]) -> f64 {
    INSTRUCTION_FIELDS.iter().map(|&f| t[f]).sum::<u64>() as f64
}

/// Extrapolates the tallies of a plan's counted waves to a launch of `total_instructions` warp
/// instructions (known exactly: the blocks decide them).
///
/// A ratio estimate: each count per warp instruction, from the counted waves, times the
/// instructions of the interior. The waves' labels are cut by dispatched blocks, so the
/// instructions a label holds vary from label to label (where the schedule does not repeat, at
/// ragged edges), and every count varies with them; dividing that out leaves what varies per
/// instruction. The interval is the wider of two readings of what the ratio does not explain:
/// wave by wave, and run by run (see the module's documentation).
pub fn estimate(plan: &WavePlan, tallies: &WaveTallies, total_instructions: u64) -> Estimate {
    let tally = |l: u64| tallies.by_label.get(&l).copied().unwrap_or([0; FIELDS]);
    let (lo, hi) = plan.interior;
    let mut exact = [0f64; FIELDS];
    for l in (0..lo).chain(hi..plan.modes.len() as u64) {
        for (e, v) in exact.iter_mut().zip(tally(l)) {
            *e += v as f64;
        }
    }
    let big_n = (hi - lo) as f64;
    let samples: Vec<[u64; FIELDS]> = plan
        .strata
        .iter()
        .flat_map(|(_, labels)| labels.iter().map(|&l| tally(l)))
        .collect();
    let n = samples.len() as f64;
    // Stratified totals of the interior: each stratum's length times its counted waves' mean.
    let stratified = |value: &dyn Fn(&[u64; FIELDS]) -> f64| -> f64 {
        plan.strata
            .iter()
            .map(|((a, z), labels)| {
                let mean =
                    labels.iter().map(|&l| value(&tally(l))).sum::<f64>() / labels.len() as f64;
                (z - a) as f64 * mean
            })
            .sum()
    };
    let strat_x = stratified(&instructions);
    let interior_x =
        total_instructions as f64 - INSTRUCTION_FIELDS.iter().map(|&f| exact[f]).sum::<f64>();
    let mut point = [0u64; FIELDS];
    let mut low = [0u64; FIELDS];
    let mut high = [0u64; FIELDS];
    for f in 0..FIELDS {
        let strat_y = stratified(&|t: &[u64; FIELDS]| t[f] as f64);
        // Where no counted wave issued anything, there is nothing to divide by: the mean alone.
        let (interior, residuals): (f64, Vec<f64>) = if strat_x > 0.0 {
            let r = strat_y / strat_x;
            let d = samples.iter().map(|s| s[f] as f64 - r * instructions(s));
            (r * interior_x.max(0.0), d.collect())
        } else {
            (strat_y, samples.iter().map(|s| s[f] as f64).collect())
        };
        // Two readings of the same spread, and the wider is taken. Waves as independent draws:
        // the residuals' variance over the n counted waves. Runs as clusters: a stratum's counted
        // waves run back to back and share the caches' state, so each run is one draw, z_h =
        // N_h · (mean residual of its run), over m strata. The first misses runs that differ
        // from one another; the second, with few strata, runs that happen to agree.
        let mean = residuals.iter().sum::<f64>() / n;
        let var = residuals.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
        let by_wave = student_t_975(samples.len().saturating_sub(1)) * big_n * (var / n).sqrt();
        let mut z = Vec::with_capacity(plan.strata.len());
        let mut first = 0;
        for ((a, b), labels) in &plan.strata {
            let run = &residuals[first..first + labels.len()];
            first += labels.len();
            z.push((b - a) as f64 * run.iter().sum::<f64>() / run.len() as f64);
        }
        let m = z.len() as f64;
        let z_mean = z.iter().sum::<f64>() / m;
        let z_var = z.iter().map(|v| (v - z_mean).powi(2)).sum::<f64>() / (m - 1.0).max(1.0);
        let by_run = student_t_975(z.len().saturating_sub(1)) * (m * z_var).sqrt();
        let half = by_wave.max(by_run) * (1.0 - n / big_n).max(0.0).sqrt();
        let est = exact[f] + interior;
        point[f] = est.round() as u64;
        low[f] = (est - half).floor().max(exact[f]) as u64;
        high[f] = (est + half).ceil() as u64;
    }
    Estimate {
        point,
        lo: low,
        hi: high,
    }
}

/// The 97.5% quantile of Student's t with `df` degrees of freedom (two-sided 95%).
pub fn student_t_975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => T[df - 1],
        31..=60 => 2.042 - (df - 30) as f64 * (2.042 - 2.000) / 30.0,
        _ => 1.96,
    }
}

/// A small deterministic generator (SplitMix64) for the stratified choice.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n ≥ 1).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn student_t_matches_the_table_values() {
        assert_eq!(student_t_975(1), 12.706);
        assert_eq!(student_t_975(15), 2.131);
        assert!((student_t_975(45) - 2.021).abs() < 0.01);
        assert_eq!(student_t_975(1000), 1.96);
    }

    #[test]
    fn counts_proportional_to_the_instructions_are_estimated_exactly_where_waves_differ() {
        // Labels 0..10: two head and two tail waves exact, the interior 2..8 in two strata of
        // three waves, two counted in each. Waves hold 50..120 warp instructions (loads), each
        // loading four sectors; the uncounted waves 4 and 7 are short.
        let count = |l: u64| !(2..8).contains(&l) || [2, 3, 5, 6].contains(&l);
        let plan = WavePlan {
            blocks_per_wave: 1,
            modes: (0..10)
                .map(|l| {
                    if count(l) {
                        WaveMode::Count
                    } else {
                        WaveMode::Skip
                    }
                })
                .collect(),
            interior: (2, 8),
            strata: vec![((2, 5), vec![2, 3]), ((5, 8), vec![5, 6])],
            warmup_waves: 0,
            jump: false,
        };
        let loads = [50, 50, 100, 120, 60, 80, 100, 40, 50, 50];
        let mut tallies = WaveTallies::default();
        for (l, &x) in loads.iter().enumerate() {
            if count(l as u64) {
                let mut t = [0; FIELDS];
                t[0] = x;
                t[1] = 4 * x;
                tallies.add(l as u64, &t);
            }
        }
        let total: u64 = loads.iter().sum();
        let e = estimate(&plan, &tallies, total);
        assert_eq!((e.point[0], e.point[1]), (total, 4 * total));
        assert_eq!((e.lo[1], e.hi[1]), (4 * total, 4 * total));
        // (The counted waves' means alone would say 3·110 + 3·90 = 600 interior loads, not 500.)
    }

    #[test]
    fn the_instruction_fields_are_the_l1_requests() {
        let mut c = Counts::default();
        c.l1.load_requests = 1;
        c.l1.store_requests = 2;
        c.l1.atomic_requests = 4;
        c.l1.load_sectors = 8;
        c.l2.atomic_requests = 16;
        assert_eq!(instructions(&fields(&c)), 7.0);
    }

    #[test]
    fn fields_round_trip() {
        let mut c = Counts::default();
        c.l1.load_sectors = 7;
        c.dram.write_sectors = 3;
        c.compulsory_dram_read_sectors = Some(5);
        let f = fields(&c);
        assert_eq!(f.iter().sum::<u64>(), 15);
        assert_eq!(with_fields(&Counts::default(), &f).l1.load_sectors, 7);
        assert_eq!(with_fields(&c, &f), c);
    }
}
