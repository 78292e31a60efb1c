//! The L2: sectored, write-back, write-allocate without fetch, optionally split in two partitions.
//!
//! Reads look up the SM's near partition first (what `lts__t_sectors_srcunit_tex_*` count). A miss
//! is rounded out to the DRAM fill unit; if the near partition is the address's home, the fill
//! comes from DRAM; otherwise it crosses the fabric to the home partition (which fills from DRAM
//! if it misses too) and the line is duplicated into the near partition. Stores go to the home
//! partition, crossing the fabric when it is the far one, and then leave a clean copy in the
//! writer's partition too; from the home side they invalidate the other partition's copy (both
//! measured on the H100 and H200); a store of the home side after one of the far side sends one
//! invalidation across the fabric (measured on the H100). A store allocates without fetching and
//! keeps a byte mask, and a sector only partly written costs one DRAM sector read when it is later
//! read or evicted (measured on the H200). DRAM traffic happens at the home partition.
//!
//! A far read takes `l2.far_read_extra_ns` longer than a near one (measured on both GPUs), and
//! while a far side's miss is on its way to the home partition, a read of the home side's own
//! SMs finds the sectors missing too: the replay logs how many ticks after a far miss the home
//! side first read its sectors, and how many ticks after a home-side miss the far side first
//! fetched them ([`RaceGaps`]); the simulation, once it knows how long a tick lasts and how far
//! blocks drift apart, counts the home-side reads that came (or would on the GPU have come)
//! within that time of the far miss as near-partition misses ([`race_misses`]).
//!
//! Identical reads of two SMs of one GPC (from warp instructions that missed the same lines and
//! sectors) reach the L2 once when the second comes while the first is on its way (the L2
//! Request Coalescer; measured on both GPUs), and less often the more lines
//! their warp instruction reads, as such streams fall out of step when their SMs' other work
//! differs (measured on the H200). The replay logs, for each read with an identical one of
//! another SM of its GPC before it, the gap in ticks and where that one was served ([`MergeGaps`]);
//! the simulation, once it knows how long a tick lasts, takes the reads that came within the
//! first one's latency out of the L2's reads ([`merged_reads`]).

use crate::input::hw::HwConfig;
use crate::launch::Launch;
use crate::metrics::LINE_SHIFT;
use crate::sim::cache::{Cache, Evicted, Geometry, SetIndexer};
use crate::sim::coalesce::full_sectors;
use crate::sim::dram::{CompulsoryLog, CompulsoryTracker, DramCounters};
use crate::sim::replacement::ReplacementState;
use hashbrown::HashMap;

/// Shards the L2 is split into for the parallel replay (when its replacement keeps the sets
/// independent: [`ReplacementState::sets_are_independent`]).
pub const SHARDS: usize = 32;

/// The longest gap, in ticks, between a far miss and the home side's read (or a home-side miss
/// and the far side's fetch) that [`RaceGaps`] logs (a race window is far shorter: 92 ns is
/// 15–90 ticks on the stencils; the blocks' drift spreads it over a few hundred ns).
pub const RACE_TICKS: usize = 1024;

/// The longest gap, in ticks, between two identical reads of one GPC that [`MergeGaps`] logs (a
/// read is on its way 135-340 ns unloaded: 10-200 ticks on the stencils).
pub const MERGE_TICKS: usize = 1024;

/// Where the read that a later identical one may join was served, which sets how long it is on
/// its way: the near partition, the far one, or DRAM.
pub const MERGE_LEADERS: usize = 3;

/// Units of [`MergeGaps`]: a sector is this many.
pub const MERGE_UNIT: u64 = 1024;

/// What the replay logs for the L2 Request Coalescer: for each read whose last identical read
/// (the same sectors of the same line, from a warp instruction that missed the same lines and
/// sectors) another SM of its GPC made (the "leader"), the read's sectors, in
/// [`MERGE_UNIT`]s and weighted by the chance that its stream is still in step with the
/// leader's ([`crate::input::hw::L2Config::coalescer_share`]), by the gap in ticks, one
/// histogram per place the leader was served (near partition, far partition, DRAM).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MergeGaps {
    /// [`MERGE_TICKS`] entries per leader when logging, else none.
    pub by_leader: [Vec<u64>; MERGE_LEADERS],
}

impl MergeGaps {
    fn logging(on: bool) -> MergeGaps {
        let n = if on { MERGE_TICKS } else { 0 };
        MergeGaps {
            by_leader: std::array::from_fn(|_| vec![0; n]),
        }
    }

    /// Adds `other`'s gaps to these.
    pub fn add(&mut self, other: &MergeGaps) {
        for (mine, theirs) in self.by_leader.iter_mut().zip(&other.by_leader) {
            if mine.len() < theirs.len() {
                mine.resize(theirs.len(), 0);
            }
            for (m, t) in mine.iter_mut().zip(theirs) {
                *m += t;
            }
        }
    }

    /// Whether nothing was logged.
    pub fn is_empty(&self) -> bool {
        self.by_leader.iter().all(|g| g.iter().all(|&n| n == 0))
    }
}

/// The read sectors that merge: those logged within their leader's window, `windows_ticks` by
/// leader (near, far, DRAM), the bin a window ends in counted in proportion.
pub fn merged_reads(gaps: &MergeGaps, windows_ticks: [f64; MERGE_LEADERS]) -> f64 {
    let mut units = 0.0;
    for (hist, &w) in gaps.by_leader.iter().zip(&windows_ticks) {
        for (g, &n) in hist.iter().enumerate() {
            let inside = (w - g as f64).clamp(0.0, 1.0);
            if inside == 0.0 {
                break;
            }
            units += inside * n as f64;
        }
    }
    units / MERGE_UNIT as f64
}

/// The last read of each (line, GPC, misses of its warp instruction): its tick, SM and where it
/// was served, for [`MERGE_TICKS`] ticks. Two reads match only when their whole instructions
/// missed the same sectors of the same lines: reads of instructions that share only some of
/// their lines merge far less (validation/lrc_noise.cu, `shared`). Kept in two tables, the
/// reads of the current span of [`MERGE_TICKS`] ticks and those of the span before, so that
/// older reads are dropped whole instead of searched out.
#[derive(Debug)]
struct ReadLog {
    current: ReadTable,
    previous: ReadTable,
    /// The span of ticks `current` holds (`tick / MERGE_TICKS`).
    span: u64,
    /// GPC of each SM.
    gpc: Vec<u8>,
    /// A read's weight in [`MERGE_UNIT`]s per sector, by the lines of its warp instruction.
    weight: [u64; 33],
}

/// A read's key (line, misses of its warp instruction, GPC), hashed as 12 bytes in one go, and
/// its tick, SM and where it was served packed as [`pack_read`] does: less work a read than
/// hashing a tuple field by field, and narrower slots.
type ReadTable = HashMap<[u32; 3], u64, ahash::RandomState>;

/// Bits of a packed read below its tick: the SM (14 bits) and where it was served (2 bits).
const READ_TICK_SHIFT: u32 = 16;

/// A read's tick, SM and where it was served (0..=2) in one word.
fn pack_read((tick, sm, served): (u64, u16, u8)) -> u64 {
    debug_assert!(tick < 1 << (64 - READ_TICK_SHIFT) && sm < 1 << 14 && served < 4);
    tick << READ_TICK_SHIFT | (sm as u64) << 2 | served as u64
}

/// [`pack_read`] undone.
fn unpack_read(packed: u64) -> (u64, u16, u8) {
    (
        packed >> READ_TICK_SHIFT,
        (packed >> 2 & 0x3FFF) as u16,
        (packed & 3) as u8,
    )
}

impl ReadLog {
    fn new(hw: &HwConfig) -> Option<ReadLog> {
        if hw.l2.coalescer_survival.is_empty() {
            return None;
        }
        let table = || HashMap::with_hasher(ahash::RandomState::with_seeds(5, 3, 0, 9));
        Some(ReadLog {
            current: table(),
            previous: table(),
            span: 0,
            gpc: hw.gpc_of_sms().into_iter().map(|g| g as u8).collect(),
            weight: std::array::from_fn(|lines| {
                (hw.l2.coalescer_share(lines as u32) * MERGE_UNIT as f64).round() as u64
            }),
        })
    }

    /// Logs the read of `key` at tick `now` and returns the last one before it within
    /// [`MERGE_TICKS`] ticks, if any.
    fn replace(&mut self, key: (u32, u8, u32), read: (u64, u16, u8)) -> Option<(u64, u16, u8)> {
        let now = read.0;
        let span = now / MERGE_TICKS as u64;
        if span != self.span {
            std::mem::swap(&mut self.current, &mut self.previous);
            self.current.clear();
            if span != self.span + 1 {
                self.previous.clear();
            }
            self.span = span;
        }
        let key = [key.0, key.2, key.1 as u32];
        let last = match self.current.insert(key, pack_read(read)) {
            Some(last) => Some(last),
            None => self.previous.get(&key).copied(),
        };
        last.map(unpack_read)
            .filter(|(tick, _, _)| now - tick < MERGE_TICKS as u64)
    }
}

/// What the replay logs for the race of the two sides of a split L2 over a line that neither
/// holds: sectors by the gap in ticks from the first side's miss to the other side's first read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RaceGaps {
    /// The far side missed first: the home side's first read after it, the sectors the far
    /// miss had brought ([`RACE_TICKS`] entries when logging, else none).
    pub far_first: Vec<u64>,
    /// The home side missed first: the far side's first fetch from the home partition after
    /// it, the sectors the home miss had brought that the fetch takes.
    pub home_first: Vec<u64>,
}

impl RaceGaps {
    fn logging(on: bool) -> RaceGaps {
        let n = if on { RACE_TICKS } else { 0 };
        RaceGaps {
            far_first: vec![0; n],
            home_first: vec![0; n],
        }
    }

    /// Adds `other`'s gaps to these.
    pub fn add(&mut self, other: &RaceGaps) {
        for (mine, theirs) in [
            (&mut self.far_first, &other.far_first),
            (&mut self.home_first, &other.home_first),
        ] {
            if mine.len() < theirs.len() {
                mine.resize(theirs.len(), 0);
            }
            for (m, t) in mine.iter_mut().zip(theirs) {
                *m += t;
            }
        }
    }

    /// Whether nothing was logged.
    pub fn is_empty(&self) -> bool {
        self.far_first
            .iter()
            .chain(&self.home_first)
            .all(|&n| n == 0)
    }
}

/// How the simulation turns [`RaceGaps`] into near-partition misses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RaceTiming {
    /// How much longer a far read takes than a near one, in ticks: a home-side read that
    /// comes within it of a far miss misses too.
    pub window_ticks: f64,
    /// A block's life in ticks.
    pub life_ticks: f64,
    /// How far two blocks in step in the replay fall apart on the GPU: the standard deviation
    /// of their offset at the end of a life, as a share of it (`schedule.block_drift`).
    pub drift: f64,
}

/// Ages over a block's life at which [`race_misses`] evaluates the drift (midpoints of equal
/// parts: reads come throughout a block's life).
const DRIFT_AGES: usize = 16;

/// The change to the near-partition misses that the races of `gaps` make, in sectors.
///
/// Without drift: the sectors that the home side read within the window of a far miss bringing
/// them in (whole ticks below the window, and the tick it ends in for the part of it the window
/// covers); the home side's own misses stand. With drift, a pair of reads a gap `d` apart in the
/// replay (far miss first: `d` > 0) is `d + e` apart on the GPU, `e` normal with a standard
/// deviation of the drift times the blocks' age (uniform over a life), and the home side misses
/// when `d + e` is below the window: before the far miss arrives, or first. So a far miss's
/// gap adds the chance of that, and a home miss's gap takes away the chance it is not so.
pub fn race_misses(gaps: &RaceGaps, timing: RaceTiming) -> f64 {
    let RaceTiming {
        window_ticks,
        life_ticks,
        drift,
    } = timing;
    if window_ticks.is_nan() || window_ticks <= 0.0 {
        return 0.0;
    }
    let sd_at_end = drift * life_ticks;
    if sd_at_end.is_nan() || sd_at_end <= 0.0 {
        let whole = window_ticks.floor();
        let gaps = &gaps.far_first;
        let n = (whole as usize).min(gaps.len());
        let below: u64 = gaps[..n].iter().sum();
        let part = gaps
            .get(n)
            .map_or(0.0, |&g| g as f64 * (window_ticks - whole));
        return below as f64 + part;
    }
    let misses_at = |offset: f64| {
        (0..DRIFT_AGES)
            .map(|i| {
                let sd = sd_at_end * (i as f64 + 0.5) / DRIFT_AGES as f64;
                normal_cdf((window_ticks - offset) / sd)
            })
            .sum::<f64>()
            / DRIFT_AGES as f64
    };
    let mut change = 0.0;
    for (g, (&far, &home)) in gaps.far_first.iter().zip(&gaps.home_first).enumerate() {
        let d = g as f64 + 0.5;
        if far != 0 {
            change += far as f64 * misses_at(d);
        }
        if home != 0 {
            change -= home as f64 * (1.0 - misses_at(-d));
        }
    }
    change
}

/// The standard normal distribution function (Abramowitz and Stegun 7.1.26 for erf: within
/// 1.5e-7).
fn normal_cdf(x: f64) -> f64 {
    let z = x.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * z);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-z * z).exp();
    if x >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

/// Misses of one side of a split L2 that the other side has not yet read, by line: the tick of
/// the last such miss and the sectors brought since the other side's last read. The two orders of
/// the race ([`RaceGaps`]) each keep one.
#[derive(Debug)]
struct PendingMisses(HashMap<u64, u64, ahash::RandomState>);

/// A pending miss's tick and sectors in one word: the tick above the low byte.
fn pack_miss(tick: u64, sectors: u8) -> u64 {
    tick << 8 | sectors as u64
}

impl PendingMisses {
    fn new(seeds: (u64, u64, u64, u64)) -> PendingMisses {
        let (a, b, c, d) = seeds;
        PendingMisses(HashMap::with_hasher(ahash::RandomState::with_seeds(
            a, b, c, d,
        )))
    }

    /// A miss at tick `now` brought `sectors` of `line` in (`pending`: an earlier miss's
    /// sectors are still unread by the other side, and these join them).
    fn record(&mut self, line: u64, now: u64, sectors: u8, pending: bool) {
        let entry = self.0.entry(line).or_insert(pack_miss(now, 0));
        let earlier = if pending { *entry as u8 } else { 0 };
        *entry = pack_miss(now, earlier | sectors);
    }

    /// The other side's first read of `line` since the miss, at tick `now`, finding `sectors`
    /// there: adds those the miss brought to `gaps` at its gap in ticks, and forgets the miss.
    fn settle(&mut self, line: u64, now: u64, sectors: u8, gaps: &mut [u64]) {
        if let Some(miss) = self.0.remove(&line) {
            let (tick, brought) = (miss >> 8, miss as u8);
            let raced = brought & sectors;
            let gap = (now - tick) as usize;
            if raced != 0 && gap < RACE_TICKS {
                gaps[gap] += raced.count_ones() as u64;
            }
        }
    }

    /// Forgets misses of ticks before `tick - RACE_TICKS`.
    fn forget_before(&mut self, tick: u64) {
        if !self.0.is_empty() {
            self.0
                .retain(|_, miss| (*miss >> 8) + RACE_TICKS as u64 > tick);
        }
    }
}

/// Whether `hw`'s L2 logs far misses for the race of the home side's reads: a split L2 whose far
/// reads take longer.
fn log_races(hw: &HwConfig) -> bool {
    hw.l2.partitions == 2 && hw.l2.far_read_extra_ns.is_some_and(|ns| ns > 0.0)
}

/// Which shard of the L2 a line belongs to: a function of its set (the same set index in both
/// partitions), so each shard holds whole sets and shards never interact.
#[derive(Debug, Clone, Copy)]
pub struct L2Router {
    sets: Option<SetIndexer>,
    /// Number of shards (a power of two).
    pub shards: usize,
}

impl L2Router {
    /// A router of one shard and no sets, for workers that send nothing on.
    pub fn unsharded() -> L2Router {
        L2Router {
            sets: None,
            shards: 1,
        }
    }

    /// The router for `hw`'s L2 (`infinite`: partitions that never evict), `shards` at most;
    /// one shard where the replacement couples the sets.
    pub fn new(hw: &HwConfig, infinite: bool, shards: usize) -> L2Router {
        let c = &hw.l2;
        let geometry = partition_geometry(hw);
        // A power of two, so that shard and local set are a mask and a shift.
        let shards = if !ReplacementState::sets_are_independent(c.replacement) {
            1
        } else {
            let most = shards.clamp(1, geometry.sets.max(1));
            1 << most.ilog2()
        };
        L2Router {
            sets: (!infinite).then(|| SetIndexer::new(geometry)),
            shards,
        }
    }

    /// The shard of `line`.
    #[inline]
    pub fn shard(&self, line: u64) -> usize {
        if self.shards == 1 {
            return 0;
        }
        let mask = self.shards - 1;
        match &self.sets {
            Some(sets) => sets.set(line) & mask,
            None => (line.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) as usize & mask,
        }
    }
}

/// The geometry of one partition of `hw`'s L2. In a split L2 the lowest address bit of the home
/// hash tells a line from its partner in the other partition, which shares its set under
/// [`SetIndexing::Balanced`](crate::input::hw::SetIndexing::Balanced).
pub fn partition_geometry(hw: &HwConfig) -> Geometry {
    let c = &hw.l2;
    let per_part = c.size_bytes / c.partitions as u64;
    let pair_bit = match (&c.home_hash, c.partitions) {
        (Some(hash), 2) => hash
            .mask()
            .ok()
            .map(|mask| mask.trailing_zeros())
            .filter(|bit| (LINE_SHIFT..64).contains(bit))
            .map(|bit| bit - LINE_SHIFT),
        _ => None,
    };
    Geometry::new(per_part, c.ways, c.replacement, c.set_indexing).with_pair_bit(pair_bit)
}

/// The L2 as shards ([`L2`] each) that replay their requests independently, in parallel; their
/// counters add up to exactly what one L2 replaying every request in order counts.
#[derive(Debug)]
pub struct ShardedL2 {
    /// The shards, by [`L2Router::shard`].
    pub shards: Vec<L2>,
    /// The compulsory tracker, settling the shards' logs after each replay.
    pub compulsory: Option<CompulsoryTracker>,
    /// Ticks replayed so far: the first tick of the next chunk.
    pub ticks_replayed: u64,
}

impl ShardedL2 {
    /// The L2 of `hw` in `router.shards` shards; `address_range` enables compulsory tracking.
    pub fn new(
        hw: &HwConfig,
        infinite: bool,
        address_range: Option<(u64, u64)>,
        router: &L2Router,
    ) -> ShardedL2 {
        let compulsory =
            address_range.map(|(lo, hi)| CompulsoryTracker::new(lo, hi, hw.l2.fill_bytes));
        ShardedL2 {
            shards: (0..router.shards)
                .map(|k| {
                    let log = compulsory.as_ref().map(|t| t.log());
                    L2::shard(hw, infinite, log, k, router.shards)
                })
                .collect(),
            compulsory,
            ticks_replayed: 0,
        }
    }

    /// The identical reads the shards logged ([`L2::merge_gaps`]), summed.
    pub fn merge_gaps(&self) -> MergeGaps {
        let mut gaps = MergeGaps::default();
        for s in &self.shards {
            gaps.add(&s.merge_gaps);
            for g in s.by_array.iter().flat_map(|t| &t.merge_gaps) {
                gaps.add(g);
            }
        }
        gaps
    }

    /// The races the shards logged ([`L2::race_gaps`]), summed.
    pub fn race_gaps(&self) -> RaceGaps {
        let mut gaps = RaceGaps::default();
        for s in &self.shards {
            gaps.add(&s.race_gaps);
            for g in s.by_array.iter().flat_map(|t| &t.race_gaps) {
                gaps.add(g);
            }
        }
        gaps
    }

    /// The shards' per-array tallies added up (`None` unless counted: [`L2::tally_arrays`]).
    pub fn by_array(&self) -> Option<L2Tally> {
        let mut tallies = self.shards.iter().filter_map(|s| s.by_array.as_deref());
        let mut sum = tallies.next()?.clone();
        for t in tallies {
            sum.add(t);
        }
        Some(sum)
    }

    /// Settles what the shards logged for the compulsory tracker (after each replay).
    pub fn settle_compulsory(&mut self) {
        if let Some(t) = &mut self.compulsory {
            t.settle(self.shards.iter_mut().filter_map(|s| s.compulsory.as_mut()));
        }
    }

    /// L2 counters, summed over the shards.
    pub fn counters(&self) -> L2Counters {
        let mut c = L2Counters::default();
        for s in &self.shards {
            c.add(&s.counters);
        }
        c
    }

    /// DRAM traffic, summed over the shards.
    pub fn dram(&self) -> DramCounters {
        let mut d = DramCounters::default();
        for s in &self.shards {
            d.add(&s.dram);
        }
        d
    }

    /// Dirty sectors still in the L2.
    pub fn dirty_sectors(&self) -> u64 {
        self.shards.iter().map(|s| s.dirty_sectors()).sum()
    }
}

/// Rounds a sector mask out to whole fill units of `fill_sectors` sectors.
#[inline]
fn expand(fill_sectors: u32, sectors: u8) -> u8 {
    match fill_sectors {
        1 => sectors,
        2 => {
            let pairs = (sectors | sectors >> 1) & 0b0101;
            pairs | pairs << 1
        }
        _ => {
            if sectors != 0 {
                0b1111
            } else {
                0
            }
        }
    }
}

/// What a request asks of the L2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum L2Op {
    /// A load miss.
    Read,
    /// A write-through store.
    Write,
    /// An atomic read-modify-write, performed at the L2.
    Atomic,
}

/// A request from an SM to the L2: 16 bytes, as millions of them are written, sorted and read
/// back per chunk. A store that writes part of a sector keeps its byte mask in its
/// [`RequestList`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct L2Request {
    /// Tick within the chunk.
    pub tick: u32,
    /// Line address (every line of a launch is at most [`crate::metrics::MAX_LINE`]).
    pub line: u32,
    /// For a store writing part of a sector, its byte mask's index in
    /// [`RequestList::partial_bytes`] ([`WHOLE_SECTORS`] for other stores and atomics); for a
    /// read, a hash of the misses (lines and sectors) of its warp instruction, which the L2
    /// coalescer matches.
    pub aux: u32,
    /// Read, write or atomic.
    pub op: L2Op,
    /// Sectors requested.
    pub sectors: u8,
    /// For a read, the lines its warp instruction reads (L1 hits too); 0 otherwise.
    pub lines: u8,
}

/// A request of a chunk in the replay's global order, and the SM it came from.
#[derive(Debug, Clone, Copy)]
struct OrderedRequest {
    request: L2Request,
    sm: u32,
}

impl Default for OrderedRequest {
    fn default() -> OrderedRequest {
        OrderedRequest {
            request: L2Request {
                tick: 0,
                line: 0,
                aux: WHOLE_SECTORS,
                op: L2Op::Read,
                sectors: 0,
                lines: 0,
            },
            sm: 0,
        }
    }
}

/// [`L2Request::aux`] of a store that writes whole sectors (or none).
pub const WHOLE_SECTORS: u32 = u32::MAX;

/// One SM's requests to one L2 shard during a chunk, in issue order.
#[derive(Debug, Clone, Default)]
pub struct RequestList {
    /// The requests.
    pub requests: Vec<L2Request>,
    /// Byte masks of the stores that write part of a sector.
    pub partial_bytes: Vec<u128>,
}

impl RequestList {
    /// Empties the list, keeping its memory.
    pub fn clear(&mut self) {
        self.requests.clear();
        self.partial_bytes.clear();
    }

    /// Appends a read or an atomic.
    #[inline]
    pub fn push(&mut self, tick: u32, op: L2Op, line: u64, sectors: u8) {
        self.append(tick, op, line, sectors, WHOLE_SECTORS);
    }

    /// Appends a read of a warp instruction that reads `lines` lines and whose misses hash to
    /// `misses_hash`.
    #[inline]
    pub fn push_read(&mut self, tick: u32, line: u64, sectors: u8, lines: u8, misses_hash: u32) {
        self.append(tick, L2Op::Read, line, sectors, misses_hash);
        if let Some(r) = self.requests.last_mut() {
            r.lines = lines;
        }
    }

    /// Appends a store of `sectors` of `line` covering `bytes`.
    #[inline]
    pub fn push_store(&mut self, tick: u32, line: u64, sectors: u8, bytes: u128) {
        let partial = if bytes == sector_byte_mask(sectors) {
            WHOLE_SECTORS
        } else {
            self.partial_bytes.push(bytes);
            self.partial_bytes.len() as u32 - 1
        };
        self.append(tick, L2Op::Write, line, sectors, partial);
    }

    /// Appends a store that continues its warp's store before it on this line: of its
    /// `sectors`, those in `counted` reach the L2 in that store's write (a warp's stores in a
    /// row merge on the way, `SmWorker::store`), so neither the L2 nor the fabric counts them
    /// again; its bytes are written all the same.
    #[inline]
    pub fn push_store_continuing(
        &mut self,
        tick: u32,
        line: u64,
        sectors: u8,
        bytes: u128,
        counted: u8,
    ) {
        self.push_store(tick, line, sectors, bytes);
        if let Some(r) = self.requests.last_mut() {
            r.lines = counted;
        }
    }

    #[inline]
    fn append(&mut self, tick: u32, op: L2Op, line: u64, sectors: u8, aux: u32) {
        debug_assert!(line <= crate::metrics::MAX_LINE);
        self.requests.push(L2Request {
            tick,
            line: line as u32,
            aux,
            op,
            sectors,
            lines: 0,
        });
    }

    /// The bytes a store of this list writes.
    #[inline]
    pub fn store_bytes(&self, r: &L2Request) -> u128 {
        match r.aux {
            WHOLE_SECTORS => sector_byte_mask(r.sectors),
            i => self.partial_bytes[i as usize],
        }
    }
}

pub use crate::sim::counters::L2Counters;

/// A line's partly written sectors: the bytes written so far, the SM that first wrote them, and
/// those of them an SM other than that one has written to since.
#[derive(Debug, Clone, Copy)]
struct PartialLine {
    bytes: u128,
    sm: u16,
    crossed: u8,
}

/// The L2 and the DRAM behind it, or one shard of them (the sets `s % shards == shard` of both
/// partitions).
#[derive(Debug)]
pub struct L2 {
    parts: Vec<Cache>,
    near: Vec<u8>,
    /// The address bits whose parity is a line's home partition (0: one partition).
    home_mask: u64,
    fill_sectors: u32,
    /// The dirty budget: how many lines of a set may hold dirty sectors (`l2.dirty_ways`;
    /// `usize::MAX`: no budget, lines are written back when they leave).
    dirty_ways: usize,
    /// Accumulated byte masks of sectors that are dirty but not fully written, and who wrote
    /// them (by line).
    partial_bytes: HashMap<u64, PartialLine, ahash::RandomState>,
    /// The first tick of the chunk being replayed, and the tick of the request at hand.
    chunk_tick: u64,
    now: u64,
    /// Where the set of the request at hand starts in each partition ([`Cache::set_start`]; the
    /// partitions share their geometry, so one start serves them all).
    at: usize,
    /// The chunk's requests in global order, with their SMs ([`L2::replay`]; kept from chunk
    /// to chunk for its memory), and the counting sort's tick starts.
    order: Vec<OrderedRequest>,
    tick_starts: Vec<u32>,
    /// Far misses of the last [`RACE_TICKS`] ticks that brought sectors into the home partition
    /// of a line the home side has not read since: the tick and those sectors, by line.
    crossings: PendingMisses,
    /// Home-side misses of the last [`RACE_TICKS`] ticks that brought sectors in of a line the
    /// far side has not fetched since: the tick and those sectors, by line.
    home_misses: PendingMisses,
    /// The races logged (empty when not logging).
    pub race_gaps: RaceGaps,
    /// The last reads of each GPC, for the coalescer (none without one).
    reads: Option<ReadLog>,
    /// The identical reads logged (empty when not logging).
    pub merge_gaps: MergeGaps,
    /// Counters so far.
    pub counters: L2Counters,
    /// DRAM traffic so far.
    pub dram: DramCounters,
    /// What this shard sent the compulsory tracker since it last settled, when tracked.
    pub compulsory: Option<CompulsoryLog>,
    /// With `--by-array`: the counts, gaps and write-backs per array.
    pub by_array: Option<Box<L2Tally>>,
}

impl L2 {
    /// An empty L2 for `hw` (`infinite`: partitions that never evict). `address_range` enables
    /// compulsory-footprint tracking over those byte addresses.
    pub fn new(hw: &HwConfig, infinite: bool, address_range: Option<(u64, u64)>) -> L2 {
        let log = address_range.map(|(lo, hi)| CompulsoryLog::new(lo, hi, hw.l2.fill_bytes));
        L2::shard(hw, infinite, log, 0, 1)
    }

    /// Shard `shard` of `shards` of the L2 of `hw`, logging for the compulsory tracker.
    pub fn shard(
        hw: &HwConfig,
        infinite: bool,
        compulsory: Option<CompulsoryLog>,
        shard: usize,
        shards: usize,
    ) -> L2 {
        let c = &hw.l2;
        let parts = (0..c.partitions)
            .map(|_| {
                if infinite {
                    Cache::infinite()
                } else {
                    Cache::shard(partition_geometry(hw), shard, shards)
                        .with_local_ways(c.local_ways.unwrap_or(c.ways) as usize)
                }
            })
            .collect();
        L2 {
            parts,
            near: hw.near_partition_of_sms(),
            home_mask: match (&c.home_hash, c.partitions) {
                (Some(hash), 2) => hash
                    .mask()
                    .expect("the config's home hash was checked on load"),
                _ => 0,
            },
            fill_sectors: c.fill_bytes / c.sector_bytes,
            dirty_ways: c.dirty_ways.map_or(usize::MAX, |n| n as usize),
            partial_bytes: HashMap::with_hasher(ahash::RandomState::with_seeds(3, 1, 4, 1)),
            chunk_tick: 0,
            now: 0,
            at: 0,
            order: Vec::new(),
            tick_starts: Vec::new(),
            crossings: PendingMisses::new((2, 7, 1, 8)),
            home_misses: PendingMisses::new((2, 8, 1, 8)),
            race_gaps: RaceGaps::logging(log_races(hw)),
            reads: ReadLog::new(hw),
            merge_gaps: MergeGaps::logging(!hw.l2.coalescer_survival.is_empty()),
            counters: L2Counters::default(),
            dram: DramCounters::default(),
            compulsory,
            by_array: None,
        }
    }

    /// The partition that owns `line`.
    #[inline]
    pub fn home(&self, line: u64) -> usize {
        (((line << LINE_SHIFT) & self.home_mask).count_ones() & 1) as usize
    }

    /// Prefetches the near partition's set of a request from SM `sm` for `line` (see
    /// [`Cache::prefetch`]).
    #[inline(always)]
    pub fn prefetch(&self, sm: usize, line: u64) {
        self.parts[self.near[sm] as usize].prefetch(line);
    }

    /// Whether this L2 logs far misses and the home side's reads after them (a split L2 whose
    /// far reads take longer): it then has the gaps to log them in.
    #[inline]
    fn logs_races(&self) -> bool {
        !self.race_gaps.far_first.is_empty()
    }

    /// Starts replaying a chunk whose first tick is `tick` (requests carry ticks within their
    /// chunk), forgetting far misses too old to matter.
    pub fn start_chunk(&mut self, tick: u64) {
        self.chunk_tick = tick;
        self.crossings.forget_before(tick);
        self.home_misses.forget_before(tick);
    }

    /// Counts from now on per array of `arrays` too ([`L2::by_array`]).
    pub fn tally_arrays(&mut self, arrays: ArrayOfLine) {
        self.by_array = Some(Box::new(L2Tally::new(
            arrays,
            &self.race_gaps,
            &self.merge_gaps,
        )));
    }

    /// Replays shard `k`'s requests of one chunk of `ticks` ticks (`outs[sm][k]`, each SM's in
    /// tick order) in global order: tick by tick, SM by SM. A counting sort by tick (SMs visited
    /// in order, so each tick's requests stay in SM order) copies them into one list in that
    /// order, at a cost linear in the requests, which the replay then reads front to back.
    pub fn replay(&mut self, outs: &[Vec<RequestList>], k: usize, ticks: u32) {
        let total: usize = outs.iter().map(|o| o[k].requests.len()).sum();
        if total == 0 {
            return;
        }
        let mut starts = std::mem::take(&mut self.tick_starts);
        starts.clear();
        starts.resize(ticks as usize + 1, 0);
        for o in outs {
            for r in &o[k].requests {
                starts[r.tick as usize + 1] += 1;
            }
        }
        for t in 0..ticks as usize {
            starts[t + 1] += starts[t];
        }
        let mut order = std::mem::take(&mut self.order);
        order.clear();
        order.resize(total, OrderedRequest::default());
        for (sm, o) in outs.iter().enumerate() {
            for r in &o[k].requests {
                let slot = &mut starts[r.tick as usize];
                order[*slot as usize] = OrderedRequest {
                    request: *r,
                    sm: sm as u32,
                };
                *slot += 1;
            }
        }
        // The L2's sets do not fit in the CPU's caches: ask for a request's sets (in both
        // partitions) a few requests ahead, so that the lookups overlap instead of waiting one
        // after the other; the set is worked out there once, for every lookup of the request.
        const AHEAD: usize = 16;
        let mut sets = [0usize; AHEAD];
        for (n, o) in order.iter().take(AHEAD).enumerate() {
            sets[n] = self.set_ahead(o);
        }
        for n in 0..total {
            let o = order[n];
            let at = sets[n % AHEAD];
            if let Some(next) = order.get(n + AHEAD) {
                sets[n % AHEAD] = self.set_ahead(next);
            }
            let list = &outs[o.sm as usize][k];
            self.request_at(at, o.sm as usize, &o.request, list);
        }
        self.order = order;
        self.tick_starts = starts;
    }

    /// Where the set of request `o` starts, its sets asked for ahead of the lookups.
    #[inline(always)]
    fn set_ahead(&self, o: &OrderedRequest) -> usize {
        let line = o.request.line as u64;
        let start = self.parts[0].set_start(line);
        for part in &self.parts {
            part.prefetch_at(start);
        }
        start
    }

    /// Handles request `r` of `list`, from SM `sm`.
    #[inline]
    pub fn request(&mut self, sm: usize, r: &L2Request, list: &RequestList) {
        let at = self.parts[0].set_start(r.line as u64);
        self.request_at(at, sm, r, list);
    }

    /// [`L2::request`] of a request whose set starts at `at`.
    #[inline]
    fn request_at(&mut self, at: usize, sm: usize, r: &L2Request, list: &RequestList) {
        self.at = at;
        if self.by_array.is_some() {
            self.request_tallied(sm, r, list);
        } else {
            self.serve(sm, r, list);
        }
    }

    /// [`L2::serve`], giving what it counted to the array of the request's line: the gaps it
    /// logs go straight to the array's own, the counters it changes by their difference, less
    /// the write-backs (which [`L2::evict`] gives to the evicted line's array).
    fn request_tallied(&mut self, sm: usize, r: &L2Request, list: &RequestList) {
        let Some(t) = &mut self.by_array else {
            return;
        };
        let array = t.arrays.array(r.line as u64);
        t.evicted = DramCounters::default();
        std::mem::swap(&mut self.race_gaps, &mut t.race_gaps[array]);
        std::mem::swap(&mut self.merge_gaps, &mut t.merge_gaps[array]);
        let (counters, dram) = (self.counters, self.dram);
        self.serve(sm, r, list);
        let Some(t) = &mut self.by_array else {
            return;
        };
        std::mem::swap(&mut self.race_gaps, &mut t.race_gaps[array]);
        std::mem::swap(&mut self.merge_gaps, &mut t.merge_gaps[array]);
        let (l2, d) = &mut t.counts[array];
        l2.add(&self.counters.minus(&counters));
        d.add(&self.dram.minus(&dram).minus(&t.evicted));
    }

    /// Serves request `r` of `list`, from SM `sm`.
    #[inline]
    fn serve(&mut self, sm: usize, r: &L2Request, list: &RequestList) {
        let line = r.line as u64;
        self.now = self.chunk_tick + r.tick as u64;
        match r.op {
            L2Op::Read if self.reads.is_some() => self.read_logged(sm, r),
            L2Op::Read => self.read_here(sm, line, r.sectors),
            L2Op::Write => self.write_here(sm, line, r.sectors, list.store_bytes(r), r.lines),
            L2Op::Atomic => self.atomic_here(sm, line, r.sectors),
        }
    }

    /// An atomic from SM `sm` on `sectors` of `line`: performed in the home partition (across
    /// the fabric when it is the far one), which needs the sectors' data (a DRAM read when
    /// missing, rounded to the fill unit) and leaves them dirty. A near copy goes stale.
    pub fn atomic(&mut self, sm: usize, line: u64, sectors: u8) {
        self.at = self.parts[0].set_start(line);
        self.atomic_here(sm, line, sectors);
    }

    /// [`L2::atomic`] in the set at [`L2::at`].
    fn atomic_here(&mut self, sm: usize, line: u64, sectors: u8) {
        self.counters.atomic_requests += 1;
        self.counters.atomic_sectors += sectors.count_ones() as u64;
        if let Some(t) = &mut self.compulsory {
            t.read(line, sectors);
        }
        let home = self.send_atomic_home(sm, line, sectors);
        let fill_sectors = self.fill_sectors;
        let far = home != self.near[sm] as usize;
        let (state, _, evicted) = self.parts[home].access_or_insert_for_at(self.at, line, far);
        let missing = sectors & !state.valid;
        let fill = if missing == 0 {
            0
        } else {
            expand(fill_sectors, missing) & !state.valid
        };
        state.valid |= fill;
        let newly_dirty = state.dirty == 0;
        self.counters.sectors_made_dirty += (sectors & !state.dirty).count_ones() as u64;
        state.dirty |= sectors;
        self.dram_read_into(line, fill);
        if let Some(ev) = evicted {
            self.evict(ev);
        }
        if newly_dirty {
            self.keep_dirty_budget(home);
        }
    }

    /// [`L2::read`], logging the gap to the last identical read of another SM of the same GPC
    /// ([`MergeGaps`]); `lines`: the lines of the read's warp instruction.
    fn read_logged(&mut self, sm: usize, r: &L2Request) {
        let (line, sectors) = (r.line as u64, r.sectors);
        let (dram_before, fabric_before) = (self.dram.read_sectors, self.counters.fabric_sectors);
        self.read_here(sm, line, sectors);
        let served = if self.dram.read_sectors > dram_before {
            2
        } else if self.counters.fabric_sectors > fabric_before {
            1
        } else {
            0
        };
        let now = self.now;
        let Some(log) = &mut self.reads else {
            return;
        };
        let key = (r.line, log.gpc[sm], r.aux);
        let weight = log.weight[(r.lines as usize).min(32)] * sectors.count_ones() as u64;
        if let Some((tick, leader_sm, leader)) = log.replace(key, (now, sm as u16, served))
            && leader_sm as usize != sm
        {
            self.merge_gaps.by_leader[leader as usize][(now - tick) as usize] += weight;
        }
    }

    /// A load miss from SM `sm` for `sectors` of `line`.
    pub fn read(&mut self, sm: usize, line: u64, sectors: u8) {
        self.at = self.parts[0].set_start(line);
        self.read_here(sm, line, sectors);
    }

    /// [`L2::read`] in the set at [`L2::at`].
    #[inline(always)]
    fn read_here(&mut self, sm: usize, line: u64, sectors: u8) {
        self.counters.read_sectors += sectors.count_ones() as u64;
        if let Some(t) = &mut self.compulsory {
            t.read(line, sectors);
        }
        debug_assert_ne!(sectors, 0, "a read of no sectors would leave an empty line");
        let near = self.near[sm] as usize;
        let fill_sectors = self.fill_sectors;
        // One lookup of the near partition: a present line is marked used whether or not it
        // holds the sectors; an absent one comes in with what the fill brings.
        let home = self.home(line);
        let logs_races = self.logs_races();
        let (state, _, evicted) = self.parts[near].access_or_insert_for_at(self.at, line, false);
        let missing = sectors & !state.valid;
        let present = sectors & state.valid;
        let fill = expand(fill_sectors, missing) & !state.valid;
        state.valid |= fill;
        let logs_home_miss = home == near && fill != 0 && logs_races;
        let unfetched = logs_home_miss && std::mem::replace(&mut state.home_fill_unfetched, true);
        if home == near && std::mem::take(&mut state.far_fill_unread) {
            // The first home-side read since a far miss: later ones race nothing, as had this
            // one come before the far miss arrived, its own miss would have settled the line.
            let gaps = &mut self.race_gaps.far_first;
            self.crossings.settle(line, self.now, present, gaps);
        }
        if missing == 0 {
            return;
        }
        self.counters.read_lookup_miss_sectors += fill.count_ones() as u64;
        if home != near {
            self.counters.fabric_sectors += fill.count_ones() as u64;
            self.fill_from_dram(home, line, fill);
        } else {
            // The near partition is the home: what it lacked comes from DRAM (merging any
            // partially written sectors).
            if logs_home_miss {
                self.home_misses.record(line, self.now, fill, unfetched);
            }
            self.dram_read_into(line, fill);
        }
        if let Some(ev) = evicted {
            self.evict(ev);
        }
    }

    /// Makes `fill` sectors of `line` valid in its home partition `part` for a request of the
    /// other side, reading what it lacks from DRAM.
    fn fill_from_dram(&mut self, part: usize, line: u64, fill: u8) {
        let logs_races = self.logs_races();
        let (state, _, evicted) = self.parts[part].access_or_insert_for_at(self.at, line, true);
        let lacking = fill & !state.valid;
        let home_brought = std::mem::take(&mut state.home_fill_unfetched);
        let found = fill & state.valid;
        state.valid |= fill;
        if logs_races && lacking != 0 {
            let unread = std::mem::replace(&mut state.far_fill_unread, true);
            self.crossings.record(line, self.now, lacking, unread);
        }
        if home_brought {
            // The far side's first fetch since a home-side miss: had it come first, by more
            // than the window, the home side's read would have hit.
            let gaps = &mut self.race_gaps.home_first;
            self.home_misses.settle(line, self.now, found, gaps);
        }
        self.dram_read_into(line, lacking);
        if let Some(ev) = evicted {
            self.evict(ev);
        }
    }

    /// Counts the DRAM reads for `sectors` of `line` and forgets their partial byte masks.
    fn dram_read_into(&mut self, line: u64, sectors: u8) {
        self.dram.read_sectors += sectors.count_ones() as u64;
        // Most kernels never store part of a sector: skip hashing the line then.
        if sectors != 0
            && !self.partial_bytes.is_empty()
            && let Some(pending) = self.partial_bytes.get_mut(&line)
        {
            pending.bytes &= !sector_byte_mask(sectors);
            if pending.bytes == 0 {
                self.partial_bytes.remove(&line);
            }
        }
    }

    /// Sends a store on `sectors` of `line` (of which it writes `full` whole) from SM `sm` to the
    /// line's home partition, which it returns. Measured on the H100 and the H200
    /// (`validation/l2_near_far.cu --stores`, `tests/l2_stores.rs`): from the far side the store
    /// crosses the fabric and also leaves its data in the writer's own partition (a copy there is
    /// updated, and one that is absent comes in with the sectors written whole), so the writer's
    /// side reads it back as a near hit; from the home side it invalidates those sectors in the
    /// other partition's copy, which the other side then reads across the fabric.
    fn send_store_home(
        &mut self,
        sm: usize,
        line: u64,
        sectors: u8,
        full: u8,
        counted: u8,
    ) -> usize {
        let near = self.near[sm] as usize;
        let home = self.home(line);
        if home != near {
            self.counters.fabric_sectors += (sectors & !counted).count_ones() as u64;
            if full != 0 {
                let (st, _, evicted) =
                    self.parts[near].access_or_insert_for_at(self.at, line, false);
                st.valid |= full;
                if let Some(ev) = evicted {
                    self.evict(ev);
                }
            } else {
                // Part of a sector: a copy holding it stays valid, an absent one stays absent.
                self.parts[near].access_at(self.at, line);
            }
        } else {
            for (p, part) in self.parts.iter_mut().enumerate() {
                if p != home
                    && let Some(st) = part.peek_mut_at(self.at, line)
                {
                    st.valid &= !sectors;
                }
            }
        }
        home
    }

    /// Sends an atomic on `sectors` of `line` from SM `sm` to the line's home partition, which it
    /// returns: from the far side it crosses the fabric, and the near copy of those sectors is
    /// stale from then on (not measured for atomics; stores, measured, differ).
    fn send_atomic_home(&mut self, sm: usize, line: u64, sectors: u8) -> usize {
        let near = self.near[sm] as usize;
        let home = self.home(line);
        if home != near {
            self.counters.fabric_sectors += sectors.count_ones() as u64;
            if let Some(st) = self.parts[near].access_at(self.at, line) {
                st.valid &= !sectors;
            }
        }
        home
    }

    /// A store from SM `sm` to `sectors` of `line` covering `bytes`.
    pub fn write(&mut self, sm: usize, line: u64, sectors: u8, bytes: u128) {
        self.at = self.parts[0].set_start(line);
        self.write_here(sm, line, sectors, bytes, 0);
    }

    /// [`L2::write`] in the set at [`L2::at`]; of `sectors`, those in `counted` came with the
    /// warp's store before ([`RequestList::push_store_continuing`]) and are not counted again.
    fn write_here(&mut self, sm: usize, line: u64, sectors: u8, bytes: u128, counted: u8) {
        self.counters.write_sectors += (sectors & !counted).count_ones() as u64;
        let full = full_sectors(bytes) & sectors;
        if let Some(t) = &mut self.compulsory {
            t.write_full(line, full);
        }
        let home = self.send_store_home(sm, line, sectors, full, counted);
        let far = home != self.near[sm] as usize;
        let (state, _, evicted) = self.parts[home].access_or_insert_for_at(self.at, line, far);
        // A store of the home side to a line the other side stored into since sends that side
        // one invalidation over the fabric, whichever sectors either wrote (measured on the H100:
        // `validation/store_pair_probe.cu`, `tests/data/h100/fabric/`).
        if far {
            state.stored_from_far = true;
        } else if state.stored_from_far {
            state.stored_from_far = false;
            self.counters.fabric_sectors += 1;
        }
        let waiting = state.dirty & !state.valid;
        // Partly written sectors that another SM than their first writer's writes into: two
        // blocks write them between them (a block's warps share its SM).
        if waiting & sectors != 0
            && let Some(pending) = self.partial_bytes.get_mut(&line)
            && pending.sm as usize != sm
        {
            let shared = waiting & sectors & !pending.crossed;
            self.counters.partial_sectors_across_sms += shared.count_ones() as u64;
            pending.crossed |= shared;
        }
        let newly_dirty = state.dirty == 0;
        self.counters.sectors_made_dirty += (sectors & !state.dirty).count_ones() as u64;
        state.dirty |= sectors;
        state.valid |= full;
        let partial = sectors & !full & !state.valid;
        self.counters.sectors_left_partial += (partial & !waiting).count_ones() as u64;
        if partial != 0 {
            let acc = self.partial_bytes.entry(line).or_insert(PartialLine {
                bytes: 0,
                sm: sm as u16,
                crossed: 0,
            });
            acc.bytes |= bytes & sector_byte_mask(partial);
            let completed = full_sectors(acc.bytes) & partial;
            // A sector whose bytes have all been written by now is whole again.
            acc.bytes &= !sector_byte_mask(completed | full);
            acc.crossed &= !(completed | full);
            state.valid |= completed;
            if acc.bytes == 0 {
                self.partial_bytes.remove(&line);
            }
        } else if full != 0
            && let Some(acc) = self.partial_bytes.get_mut(&line)
        {
            acc.bytes &= !sector_byte_mask(full);
            acc.crossed &= !full;
            if acc.bytes == 0 {
                self.partial_bytes.remove(&line);
            }
        }
        if let Some(ev) = evicted {
            self.evict(ev);
        }
        if newly_dirty {
            self.keep_dirty_budget(home);
        }
    }

    /// After a line of the set at [`L2::at`] in partition `part` turned dirty: when the set now
    /// holds more dirty lines than the budget, writes the least recently used of them back (it
    /// stays, clean).
    #[inline]
    fn keep_dirty_budget(&mut self, part: usize) {
        if self.dirty_ways == usize::MAX {
            return;
        }
        if let Some(written) = self.parts[part].clean_over_dirty_limit(self.at, self.dirty_ways) {
            self.evict(written);
        }
    }

    /// Writes back a line leaving a partition: dirty sectors go to DRAM, and a partially written
    /// sector first needs its missing bytes read. (Only home copies are ever dirty.)
    fn evict(&mut self, ev: Evicted) {
        let dirty = ev.state.dirty;
        if dirty == 0 {
            return;
        }
        let partial = dirty & !ev.state.valid;
        self.dram.write_sectors += dirty.count_ones() as u64;
        self.dram.read_sectors += partial.count_ones() as u64;
        if let Some(t) = &mut self.by_array {
            t.evicted(
                ev.line,
                dirty.count_ones() as u64,
                partial.count_ones() as u64,
            );
        }
        if partial != 0 {
            self.partial_bytes.remove(&ev.line);
        }
    }

    /// Dirty sectors still in the L2 (not written to DRAM within the kernel).
    pub fn dirty_sectors(&self) -> u64 {
        self.parts
            .iter()
            .flat_map(|p| p.lines())
            .map(|(_, s)| s.dirty.count_ones() as u64)
            .sum()
    }
}

/// Byte mask of the given sectors of a line.
#[inline]
pub fn sector_byte_mask(sectors: u8) -> u128 {
    let mut m = 0u128;
    for s in 0..4 {
        if sectors >> s & 1 == 1 {
            m |= (u32::MAX as u128) << (32 * s);
        }
    }
    m
}

/// Finds the array of a line: the first lines of the arrays, ascending (arrays are separate
/// allocations on the allocation granularity, so no line holds two).
#[derive(Debug, Clone)]
pub struct ArrayOfLine {
    pub(super) first_lines: Vec<u64>,
}

impl ArrayOfLine {
    /// The arrays of `launch`.
    pub fn new(launch: &Launch) -> ArrayOfLine {
        let first_lines: Vec<u64> = launch.arrays.iter().map(|a| a.base >> LINE_SHIFT).collect();
        debug_assert!(first_lines.windows(2).all(|w| w[0] <= w[1]));
        ArrayOfLine { first_lines }
    }

    /// The array holding `line` (the last one starting at or before it).
    #[inline]
    pub fn array(&self, line: u64) -> usize {
        self.first_lines
            .partition_point(|&first| first <= line)
            .saturating_sub(1)
    }

    /// How many arrays.
    pub fn len(&self) -> usize {
        self.first_lines.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.first_lines.is_empty()
    }
}

/// One L2 shard's counts per array, kept while it replays.
#[derive(Debug, Clone)]
pub struct L2Tally {
    /// The array of a line.
    pub arrays: ArrayOfLine,
    /// Per array: L2 counters and DRAM traffic.
    pub counts: Vec<(L2Counters, DramCounters)>,
    /// Per array: the races logged for its lines.
    pub race_gaps: Vec<RaceGaps>,
    /// Per array: the identical reads logged for its lines.
    pub merge_gaps: Vec<MergeGaps>,
    /// Write-backs of the request at hand, already given to their arrays.
    pub evicted: DramCounters,
}

impl L2Tally {
    /// An empty tally over `arrays`, its gaps as long as the shard's (`race`, `merge`).
    pub fn new(arrays: ArrayOfLine, race: &RaceGaps, merge: &MergeGaps) -> L2Tally {
        let n = arrays.len();
        let empty_race = RaceGaps {
            far_first: vec![0; race.far_first.len()],
            home_first: vec![0; race.home_first.len()],
        };
        let empty_merge = MergeGaps {
            by_leader: std::array::from_fn(|k| vec![0; merge.by_leader[k].len()]),
        };
        L2Tally {
            arrays,
            counts: vec![Default::default(); n],
            race_gaps: vec![empty_race; n],
            merge_gaps: vec![empty_merge; n],
            evicted: DramCounters::default(),
        }
    }

    /// Gives a write-back of `line` to its array.
    #[inline]
    pub fn evicted(&mut self, line: u64, written: u64, read: u64) {
        let d = &mut self.counts[self.arrays.array(line)].1;
        d.write_sectors += written;
        d.read_sectors += read;
        self.evicted.write_sectors += written;
        self.evicted.read_sectors += read;
    }

    /// Adds another shard's tally.
    pub fn add(&mut self, o: &L2Tally) {
        for (mine, theirs) in self.counts.iter_mut().zip(&o.counts) {
            mine.0.add(&theirs.0);
            mine.1.add(&theirs.1);
        }
        for (mine, theirs) in self.race_gaps.iter_mut().zip(&o.race_gaps) {
            mine.add(theirs);
        }
        for (mine, theirs) in self.merge_gaps.iter_mut().zip(&o.merge_gaps) {
            mine.add(theirs);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::hw::PartitionHash;
    use crate::sim::cache::set_index;

    /// A small split L2: 2 partitions × 2 sets × 2 ways, SM 0 near partition 0, SM 1 near 1,
    /// home = parity of address bit 12 (lines 0..31 home 0, 32..63 home 1).
    fn small(fill_bytes: u32) -> L2 {
        let mut hw = HwConfig::load("h200").unwrap();
        hw.sm.count = 2;
        hw.l2.size_bytes = 2 * 2 * 2 * 128;
        hw.l2.ways = 2;
        hw.l2.set_indexing = crate::input::hw::SetIndexing::Modulo;
        hw.l2.fill_bytes = fill_bytes;
        hw.l2.home_hash = Some(PartitionHash::contiguous(12, 1));
        hw.l2.partition_sms = Some(vec![vec![[0, 0]], vec![[1, 1]]]);
        // SMs 0 and 1 in one GPC, SM 2 in another (the coalescer's groups).
        hw.sm.count = 3;
        hw.l2.partition_sms = Some(vec![vec![[0, 0], [2, 2]], vec![[1, 1]]]);
        hw.schedule.gpc_sms = Some(vec![vec![0, 1], vec![2]]);
        L2::new(&hw, false, Some((0, 1 << 20)))
    }

    #[test]
    fn every_sector_made_dirty_is_written_back_once_unless_still_dirty_at_the_end() {
        // Whole and partial stores, atomics and reads from both sides, over more lines than
        // the L2 holds: the write-backs are the sectors made dirty less those left dirty, what
        // a sampled run estimates its DRAM writes from; with a dirty budget too, which writes
        // lines back that stay.
        let written_back = [usize::MAX, 1].map(|budget| {
            let mut l2 = small(64);
            l2.dirty_ways = budget;
            every_sector_made_dirty_is_written_back_once(l2)
        });
        assert!(
            written_back[1] > written_back[0],
            "the budget wrote lines back early: {written_back:?}"
        );
    }

    /// Runs the random requests of the test above; returns the sectors written back.
    fn every_sector_made_dirty_is_written_back_once(mut l2: L2) -> u64 {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..4000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let (sm, line, sectors) = ((x % 3) as usize, (x >> 8) % 96, ((x >> 16) % 15 + 1) as u8);
            match (x >> 24) % 4 {
                0 => l2.write(sm, line, sectors, sector_byte_mask(sectors)),
                1 => l2.write(
                    sm,
                    line,
                    sectors,
                    sector_byte_mask(sectors) & 0x0F0F_0F0F_0F0F_0F0F_0F0F_0F0F_0F0F_0F0F,
                ),
                2 => l2.atomic(sm, line, sectors),
                _ => l2.read(sm, line, sectors),
            }
        }
        assert!(
            l2.dram.write_sectors > 1000,
            "the L2 turned over with dirty lines"
        );
        assert_eq!(
            l2.dram.write_sectors,
            l2.counters.sectors_made_dirty - l2.dirty_sectors()
        );
        l2.dram.write_sectors
    }

    /// A split L2 of one set of four ways a partition (otherwise as [`small`]) whose sets may
    /// hold two dirty lines: every line SM 0 stores below line 32 is homed near it, in one set.
    fn one_set_two_dirty() -> L2 {
        let mut hw = HwConfig::load("h200").unwrap();
        hw.l2.size_bytes = 2 * 4 * 128;
        hw.l2.ways = 4;
        hw.l2.set_indexing = crate::input::hw::SetIndexing::Modulo;
        hw.l2.fill_bytes = 32;
        hw.l2.home_hash = Some(PartitionHash::contiguous(12, 1));
        hw.sm.count = 3;
        hw.l2.partition_sms = Some(vec![vec![[0, 0], [2, 2]], vec![[1, 1]]]);
        hw.schedule.gpc_sms = Some(vec![vec![0, 1], vec![2]]);
        hw.l2.dirty_ways = Some(2);
        L2::new(&hw, false, None)
    }

    #[test]
    fn a_store_past_the_dirty_budget_writes_the_least_recent_dirty_line_back_and_keeps_it() {
        let mut l2 = one_set_two_dirty();
        l2.write(0, 0, 0b0011, u128::MAX);
        l2.write(0, 1, 0b1111, u128::MAX);
        l2.read(0, 2, 0b0001);
        assert_eq!(
            l2.dram.write_sectors, 0,
            "two dirty lines are within the budget"
        );
        // Line 1 used again: line 0 is now the least recently used dirty line.
        l2.write(0, 1, 0b0001, u128::MAX);
        l2.write(0, 3, 0b0001, u128::MAX);
        assert_eq!(
            l2.dram.write_sectors, 2,
            "line 0's two sectors written back"
        );
        assert_eq!(l2.dirty_sectors(), 4 + 1);
        // Still held, and clean: its read hits, and a store makes it dirty again, which writes
        // line 1 back (its four sectors).
        l2.read(0, 0, 0b0011);
        assert_eq!(l2.dram.read_sectors, 1, "only line 2's miss read DRAM");
        l2.write(0, 0, 0b0001, u128::MAX);
        assert_eq!(l2.dram.write_sectors, 2 + 4);
        assert_eq!(
            l2.dram.write_sectors,
            l2.counters.sectors_made_dirty - l2.dirty_sectors()
        );
    }

    #[test]
    fn a_partly_written_line_the_dirty_budget_writes_back_is_filled_first_once() {
        let mut l2 = one_set_two_dirty();
        l2.write(0, 0, 0b0001, 0xFF);
        l2.write(0, 1, 0b0001, u128::MAX);
        l2.write(0, 2, 0b0001, u128::MAX);
        assert_eq!((l2.dram.read_sectors, l2.dram.write_sectors), (1, 1));
        // Whole now: the line's later reads and write-backs need no fill.
        l2.read(0, 0, 0b0001);
        l2.write(0, 0, 0b0001, 0xFF);
        l2.write(0, 3, 0b0001, u128::MAX);
        assert_eq!(l2.dram.read_sectors, 1);
        assert_eq!(l2.counters.sectors_left_partial, 1);
    }

    #[test]
    fn a_request_list_keeps_byte_masks_only_for_stores_that_write_part_of_a_sector() {
        let mut list = RequestList::default();
        list.push(3, L2Op::Read, 7, 0b0011);
        list.push_store(4, 7, 0b0101, sector_byte_mask(0b0101));
        let ragged = sector_byte_mask(0b0001) | 0xFF << 32; // sector 0 whole, 8 bytes of sector 1
        list.push_store(5, 9, 0b0011, ragged);
        assert_eq!(list.partial_bytes, [ragged]);
        let [read, whole, part] = [list.requests[0], list.requests[1], list.requests[2]];
        assert_eq!((read.tick, read.line, read.aux), (3, 7, WHOLE_SECTORS));
        assert_eq!(whole.aux, WHOLE_SECTORS);
        assert_eq!(list.store_bytes(&whole), sector_byte_mask(0b0101));
        assert_eq!((part.aux, list.store_bytes(&part)), (0, ragged));
        assert_eq!(std::mem::size_of::<L2Request>(), 16);
        list.clear();
        assert!(list.requests.is_empty() && list.partial_bytes.is_empty());
    }

    #[test]
    fn home_hash_is_the_parity_of_the_selected_bits() {
        let l2 = small(32);
        assert_eq!(l2.home(0), 0);
        assert_eq!(l2.home(31), 0);
        assert_eq!(l2.home(32), 1);
        assert_eq!(l2.home(64), 0);
    }

    #[test]
    fn under_balanced_indexing_each_partition_gets_its_own_lines_evenly_and_partners_share_sets() {
        for config in ["h100-sxm", "h200"] {
            let mut hw = HwConfig::load(config).unwrap();
            hw.l2.set_indexing = crate::input::hw::SetIndexing::Balanced;
            let g = partition_geometry(&hw);
            let l2 = L2::shard(&hw, false, None, 0, 1);
            let mut count = vec![[0u32; 2]; g.sets];
            // Three runs of both partitions' lines (a run: `sets` partition-local lines).
            let first = 7 * 2 * g.sets as u64;
            for line in first..first + 6 * g.sets as u64 {
                count[set_index(&g, line)][l2.home(line)] += 1;
            }
            assert!(
                count.iter().all(|c| c == &[3, 3]),
                "{config}: a set got {:?}",
                count.iter().find(|c| *c != &[3, 3])
            );
            let partner = 1u64 << g.pair_bit.expect("a split L2 has a pair bit");
            for line in first..first + 1000 {
                assert_eq!(set_index(&g, line), set_index(&g, line ^ partner));
                assert_ne!(l2.home(line), l2.home(line ^ partner));
            }
        }
    }

    #[test]
    fn a_home_hash_can_list_its_bits() {
        let mut l2 = small(32);
        l2.home_mask = PartitionHash {
            low_bit: None,
            bits: None,
            address_bits: Some(vec![12, 14]),
        }
        .mask()
        .unwrap();
        // Lines of 128 B: line 32 is address bit 12, 64 bit 13, 128 bit 14.
        let homes: Vec<usize> = [0, 32, 64, 128, 160, 224].map(|l| l2.home(l)).into();
        assert_eq!(homes, [0, 1, 0, 1, 0, 0]);
    }

    /// A read by `sm` of `sectors` of `line` at absolute tick `tick`.
    fn read_at(l2: &mut L2, tick: u64, sm: usize, line: u64, sectors: u8) {
        l2.now = tick;
        l2.read(sm, line, sectors);
    }

    #[test]
    fn the_home_side_s_first_read_after_a_far_miss_is_logged_by_its_gap_in_ticks() {
        let mut l2 = small(64);
        // SM 0 is far from line 32 (homed in partition 1): its miss brings sectors 0 and 1
        // (a 64-byte fill) into the home partition at tick 10.
        read_at(&mut l2, 10, 0, 32, 0b0001);
        // SM 1, on the home side, reads sectors 1 and 2 three ticks later: sector 1 came with
        // the far miss (it races it), sector 2 is a miss of its own.
        read_at(&mut l2, 13, 1, 32, 0b0110);
        assert_eq!(l2.race_gaps.far_first[3], 1);
        assert_eq!(l2.race_gaps.far_first.iter().sum::<u64>(), 1);
        // Only the first read races: the next one, however soon, finds the line settled.
        read_at(&mut l2, 14, 1, 32, 0b0001);
        assert_eq!(l2.race_gaps.far_first.iter().sum::<u64>(), 1);
        // The counters themselves are those of the replay's order; the race is added later.
        assert_eq!(l2.counters.read_lookup_miss_sectors, 2 + 2);
    }

    /// A read by `sm` at absolute tick `tick` of `sectors` of `line`, from a warp instruction of
    /// `lines` lines whose misses hash to `hash`, through the replay's entry point.
    fn request_at(
        l2: &mut L2,
        tick: u32,
        sm: usize,
        (line, sectors): (u64, u8),
        lines: u8,
        hash: u32,
    ) {
        let mut list = RequestList::default();
        list.push_read(tick, line, sectors, lines, hash);
        l2.start_chunk(0);
        l2.request(sm, &list.requests[0], &list);
    }

    #[test]
    fn a_read_identical_to_one_of_another_sm_of_its_gpc_is_logged_by_the_gap_and_where_the_first_was_served()
     {
        let mut l2 = small(32);
        let per_sector = (0.982 * MERGE_UNIT as f64).round() as u64; // h200: 2-line instructions
        // SM 0 misses sectors 0-1 of line 0 (homed near it) to DRAM at tick 10; SM 1, same
        // GPC, reads them for the same instruction 4 ticks later: a DRAM leader, gap 4.
        request_at(&mut l2, 10, 0, (0, 0b0011), 2, 7);
        request_at(&mut l2, 14, 1, (0, 0b0011), 2, 7);
        assert_eq!(l2.merge_gaps.by_leader[2][4], 2 * per_sector);
        // The same sectors for another instruction (other misses) do not match.
        request_at(&mut l2, 15, 1, (0, 0b0011), 2, 8);
        // SM 0 again, 2 ticks after SM 1's read, which the far partition served (line 0 is
        // homed on SM 0's side).
        request_at(&mut l2, 16, 0, (0, 0b0011), 2, 7);
        assert_eq!(l2.merge_gaps.by_leader[1][2], 2 * per_sector);
        // An SM never joins its own read, nor one of another GPC.
        request_at(&mut l2, 17, 0, (0, 0b0011), 2, 7);
        request_at(&mut l2, 18, 2, (0, 0b0011), 2, 7);
        let logged: u64 = l2.merge_gaps.by_leader.iter().flatten().sum();
        assert_eq!(logged, 4 * per_sector);
        // Logging changes nothing the L2 counts: every read reached it.
        assert_eq!(l2.counters.read_sectors, 6 * 2);
    }

    #[test]
    fn a_leader_is_found_across_the_log_s_spans_of_ticks_but_not_beyond_the_longest_gap() {
        let mut l2 = small(32);
        let before = MERGE_TICKS as u32 - 10;
        // Across the boundary of two spans: gap 30.
        request_at(&mut l2, before, 0, (0, 0b0011), 2, 7);
        request_at(&mut l2, before + 30, 1, (0, 0b0011), 2, 7);
        assert_eq!(
            l2.merge_gaps.by_leader.iter().map(|g| g[30]).sum::<u64>(),
            2 * 1006
        );
        // Two spans later, and a gap of exactly the longest logged plus one: nothing.
        request_at(
            &mut l2,
            before + 30 + MERGE_TICKS as u32,
            0,
            (0, 0b0011),
            2,
            7,
        );
        let logged: u64 = l2.merge_gaps.by_leader.iter().flatten().sum();
        assert_eq!(logged, 2 * 1006);
    }

    #[test]
    fn reads_of_instructions_of_many_lines_weigh_less_as_their_streams_fall_apart() {
        let mut l2 = small(32);
        request_at(&mut l2, 10, 0, (64, 0b0001), 32, 9);
        request_at(&mut l2, 11, 1, (64, 0b0001), 32, 9);
        let weight = (0.164 * MERGE_UNIT as f64).round() as u64;
        assert_eq!(l2.merge_gaps.by_leader[2][1], weight);
    }

    #[test]
    fn merged_reads_are_those_within_their_leader_s_window_and_the_covered_part_of_the_last_tick() {
        let mut gaps = MergeGaps::logging(true);
        gaps.by_leader[0][..3].copy_from_slice(&[1024, 2048, 4096]);
        gaps.by_leader[2][..3].copy_from_slice(&[1024, 2048, 4096]);
        // Near leaders within 1.5 ticks: gap 0 whole (1 sector), gap 1 half (1 of 2); DRAM
        // leaders within 3 ticks: all 7.
        assert_eq!(merged_reads(&gaps, [1.5, 0.0, 3.0]), 2.0 + 7.0);
        assert_eq!(merged_reads(&gaps, [0.0, 0.0, 0.0]), 0.0);
    }

    #[test]
    fn the_far_side_s_first_fetch_after_a_home_miss_is_logged_by_its_gap_in_ticks() {
        let mut l2 = small(64);
        read_at(&mut l2, 10, 1, 32, 0b0011); // the home side first: sectors 0 and 1 from DRAM
        read_at(&mut l2, 11, 0, 32, 0b0011); // the far side misses, the home partition has them
        read_at(&mut l2, 12, 1, 32, 0b0011);
        assert_eq!(l2.race_gaps.far_first.iter().sum::<u64>(), 0);
        assert_eq!(l2.race_gaps.home_first[1], 2);
        // Only the first fetch counts: a later far fetch of sectors the home side did not miss
        // logs nothing here (sectors 2 and 3 come from DRAM for the far side: a far miss).
        read_at(&mut l2, 16, 0, 32, 0b1100);
        assert_eq!(l2.race_gaps.far_first.iter().sum::<u64>(), 0);
        assert_eq!(l2.race_gaps.home_first.iter().sum::<u64>(), 2);
        // Nor does either side log a line homed on its own side.
        read_at(&mut l2, 20, 0, 0, 0b0001);
        read_at(&mut l2, 21, 0, 0, 0b0001);
        assert_eq!(l2.race_gaps.far_first.iter().sum::<u64>(), 0);
        assert_eq!(l2.race_gaps.home_first.iter().sum::<u64>(), 2);
    }

    #[test]
    fn an_l2_whose_far_reads_take_no_longer_logs_no_races() {
        let mut hw = HwConfig::load("h200").unwrap();
        hw.l2.far_read_extra_ns = None;
        let l2 = L2::new(&hw, false, None);
        assert!(!l2.logs_races() && l2.race_gaps.home_first.is_empty());
    }

    /// Gaps of far misses only, at 0, 1, 2, ... ticks.
    fn far_first(gaps: &[u64]) -> RaceGaps {
        RaceGaps {
            far_first: gaps.to_vec(),
            home_first: vec![0; gaps.len()],
        }
    }

    /// A window of `w` ticks without drift.
    fn step(w: f64) -> RaceTiming {
        RaceTiming {
            window_ticks: w,
            life_ticks: 160.0,
            drift: 0.0,
        }
    }

    #[test]
    fn without_drift_races_within_the_window_count_whole_ticks_and_the_covered_part_of_the_last() {
        let gaps = far_first(&[4, 2, 10, 7]);
        assert_eq!(race_misses(&gaps, step(0.0)), 0.0);
        assert_eq!(race_misses(&gaps, step(0.5)), 2.0); // half of gap 0
        assert_eq!(race_misses(&gaps, step(2.0)), 6.0); // gaps 0 and 1
        assert!((race_misses(&gaps, step(2.3)) - 9.0).abs() < 1e-9); // and 0.3 of gap 2's 10
        assert_eq!(race_misses(&gaps, step(100.0)), 23.0); // every logged gap
        assert_eq!(race_misses(&gaps, step(f64::NAN)), 0.0);
        // The home side's own misses stand.
        let mut both = gaps.clone();
        both.home_first = vec![5, 5, 5, 5];
        assert_eq!(race_misses(&both, step(2.0)), 6.0);
    }

    #[test]
    fn with_drift_a_gap_counts_the_chance_that_the_home_side_read_within_the_window() {
        // A life of 160 ticks and a drift of 0.1: the offset's sd is 16 ticks at the end of a
        // life, (i + 0.5) ticks at the 16 ages i; a window of 4 ticks. A far miss's gap of 0
        // (0.5 ticks on average) counts mean_i Phi(3.5 / (i + 0.5)) = 0.72534 of a miss, one of
        // 10 (10.5) mean_i Phi(-6.5 / (i + 0.5)) = 0.18032, and a home miss's gap of 0 takes away
        // 1 - mean_i Phi(4.5 / (i + 0.5)) = 0.23821 (computed with Python's math.erf).
        let timing = RaceTiming {
            window_ticks: 4.0,
            life_ticks: 160.0,
            drift: 0.1,
        };
        let mut far = vec![0; 16];
        far[0] = 3;
        far[10] = 1;
        let mut home = vec![0; 16];
        home[0] = 2;
        let gaps = RaceGaps {
            far_first: far,
            home_first: home,
        };
        let expected = 3.0 * 0.725_342_7 + 0.180_318_9 - 2.0 * 0.238_205_2;
        assert!((race_misses(&gaps, timing) - expected).abs() < 1e-5);
        // Reads in step in the replay, either side first, come out alike on the GPU: a far
        // miss's gap of 0 counts about as much as a home miss's leaves of a whole miss (0.725
        // and 0.762: half a tick on either side).
        let in_step = race_misses(&far_first(&[1]), timing);
        let home_in_step = 1.0
            + race_misses(
                &RaceGaps {
                    far_first: vec![0],
                    home_first: vec![1],
                },
                timing,
            );
        assert!(in_step > 0.5 && home_in_step > 0.5 && (in_step - home_in_step).abs() < 0.05);
    }

    #[test]
    fn the_normal_distribution_function_matches_its_tables() {
        for (x, phi) in [
            (0.0, 0.5),
            (1.0, 0.841_344_7),
            (-1.96, 0.024_997_9),
            (3.0, 0.998_650_1),
        ] {
            assert!((normal_cdf(x) - phi).abs() < 2e-7, "{x}");
        }
    }

    #[test]
    fn a_far_homed_line_crosses_the_fabric_once_then_hits_near() {
        let mut l2 = small(32);
        l2.read(0, 32, 0b0001); // SM 0 (near 0), line 32 homed in partition 1
        assert_eq!(l2.counters.fabric_sectors, 1);
        assert_eq!(l2.counters.read_lookup_miss_sectors, 1);
        assert_eq!(l2.dram.read_sectors, 1);
        l2.read(0, 32, 0b0001);
        assert_eq!(l2.counters.fabric_sectors, 1);
        assert_eq!(l2.counters.read_lookup_miss_sectors, 1);
        // SM 1 is near the home: the line is there already, no DRAM read, no fabric.
        l2.read(1, 32, 0b0001);
        assert_eq!((l2.counters.fabric_sectors, l2.dram.read_sectors), (1, 1));
        assert_eq!(l2.counters.read_sectors, 3);
    }

    #[test]
    fn misses_fetch_whole_fill_units() {
        let mut l2 = small(64);
        l2.read(0, 0, 0b0010);
        assert_eq!(
            (l2.counters.read_lookup_miss_sectors, l2.dram.read_sectors),
            (2, 2)
        );
        l2.read(0, 0, 0b0001); // fetched with its pair
        assert_eq!(l2.dram.read_sectors, 2);
        l2.read(0, 0, 0b0110); // sector 2 misses: its pair {2,3}
        assert_eq!(l2.dram.read_sectors, 4);
    }

    #[test]
    fn a_partial_sector_store_then_eviction_costs_one_dram_read() {
        let mut l2 = small(32);
        // 8 bytes into sector 0 of line 0 (home 0), from SM 0.
        l2.write(0, 0, 0b0001, 0xFF);
        assert_eq!(l2.dram, DramCounters::default());
        // Lines 2 and 4 map to the same set (2 sets): two more lines evict line 0.
        l2.read(0, 2, 0b0001);
        l2.read(0, 4, 0b0001);
        assert_eq!(l2.dram.write_sectors, 1);
        assert_eq!(l2.dram.read_sectors, 2 + 1); // two fills + one merge read
        assert_eq!(l2.dirty_sectors(), 0);
    }

    #[test]
    fn a_sector_two_stores_write_in_part_is_left_partial_once() {
        let mut l2 = small(32);
        // The first 8 bytes of sector 0, then the other 24: partial once, then whole.
        l2.write(0, 0, 0b0001, 0xFF);
        l2.write(1, 0, 0b0001, 0xFFFF_FFFF_FFFF_FFFF_FFFF_FF00);
        assert_eq!(l2.counters.sectors_left_partial, 1);
        // Whole again, its next partial store leaves nothing partial; a whole store, neither.
        l2.write(0, 0, 0b0001, 0xFF);
        l2.write(0, 0, 0b0010, 0xFFFF_FFFF << 32);
        assert_eq!(l2.counters.sectors_left_partial, 1);
        // Two sectors of another line written in part by one store: two more.
        l2.write(0, 6, 0b0011, 0xFF | 0xFF << 32);
        assert_eq!(l2.counters.sectors_left_partial, 3);
        assert_eq!(l2.dram, DramCounters::default());
    }

    #[test]
    fn full_sector_stores_cost_no_dram_read_and_stay_dirty_at_end() {
        let mut l2 = small(32);
        l2.write(0, 0, 0b0011, u64::MAX as u128);
        l2.read(0, 0, 0b0011); // hits: written data is valid
        assert_eq!(l2.dram, DramCounters::default());
        assert_eq!(l2.dirty_sectors(), 2);
        assert_eq!(l2.counters.write_sectors, 2);
    }

    #[test]
    fn a_partial_sector_read_later_merges_once() {
        let mut l2 = small(32);
        l2.write(0, 0, 0b0001, 0xFF);
        l2.read(0, 0, 0b0001);
        assert_eq!(l2.dram.read_sectors, 1);
        l2.read(0, 0, 0b0001);
        assert_eq!(l2.dram.read_sectors, 1);
        // Completing the sector with the other 24 bytes makes it whole: no read on eviction.
        l2.write(0, 2, 0b0001, 0xFF);
        l2.write(0, 2, 0b0001, 0xFFFF_FF00);
        l2.read(0, 4, 0b0001);
        l2.read(0, 6, 0b0001);
        assert_eq!(l2.dram.read_sectors, 1 + 2);
    }

    #[test]
    fn a_far_store_crosses_the_fabric_is_dirty_at_home_and_leaves_a_clean_copy_with_the_writer() {
        let mut l2 = small(32);
        l2.write(0, 32, 0b0011, sector_byte_mask(0b0011));
        assert_eq!(l2.counters.fabric_sectors, 2);
        let home = l2.parts[1].peek(32).unwrap();
        assert_eq!((home.valid, home.dirty), (0b0011, 0b0011));
        let copy = l2.parts[0].peek(32).unwrap();
        assert_eq!((copy.valid, copy.dirty), (0b0011, 0));
        // The writer's side reads it back without crossing the fabric or reading DRAM.
        l2.read(0, 32, 0b0001);
        assert_eq!(l2.counters.read_lookup_miss_sectors, 0);
        assert_eq!(l2.counters.fabric_sectors, 2);
    }

    #[test]
    fn a_far_store_to_part_of_a_sector_makes_no_copy_but_keeps_a_valid_one() {
        let mut l2 = small(32);
        l2.write(0, 32, 0b0001, 0xFF);
        assert!(l2.parts[0].peek(32).is_none());
        l2.read(0, 34, 0b0001); // another line homed far: read into both partitions
        l2.write(0, 34, 0b0001, 0xFF);
        assert_eq!(l2.parts[0].peek(34).map(|s| s.valid), Some(0b0001));
    }

    #[test]
    fn a_home_side_store_after_a_far_store_sends_one_invalidation_over_the_fabric() {
        let mut l2 = small(32);
        // SM 0 stores 8 bytes into a line homed in partition 1: one sector crosses.
        l2.write(0, 32, 0b0001, 0xFF);
        assert_eq!(l2.counters.fabric_sectors, 1);
        // SM 1, at home, stores another sector of it: one invalidation crosses, whichever
        // sectors the two stores wrote; a second home-side store sends none.
        l2.write(1, 32, 0b0010, sector_byte_mask(0b0010));
        assert_eq!(l2.counters.fabric_sectors, 2);
        l2.write(1, 32, 0b0001, sector_byte_mask(0b0001));
        assert_eq!(l2.counters.fabric_sectors, 2);
        // Two far stores in a row and home-side stores alone send none either.
        l2.write(0, 34, 0b0001, 0xFF);
        l2.write(0, 34, 0b0001, 0xFF00);
        l2.write(1, 36, 0b0001, 0xFF);
        l2.write(1, 36, 0b0001, 0xFF00);
        assert_eq!(l2.counters.fabric_sectors, 2 + 2);
        // After the home side's store, the next far store and home store make one more.
        l2.write(0, 32, 0b0100, 0xFF << 64);
        l2.write(1, 32, 0b0100, 0xFF00 << 64);
        assert_eq!(l2.counters.fabric_sectors, 4 + 1 + 1);
    }

    #[test]
    fn a_store_from_the_home_side_invalidates_the_other_partitions_copy() {
        let mut l2 = small(32);
        l2.read(0, 32, 0b0001); // SM 0 reads a line homed in partition 1: a copy in partition 0
        assert_eq!(l2.parts[0].peek(32).map(|s| s.valid), Some(0b0001));
        l2.write(1, 32, 0b0001, sector_byte_mask(0b0001)); // SM 1 writes it at home
        assert_eq!(l2.parts[0].peek(32).map(|s| s.valid), Some(0));
        // SM 0 now misses its own partition and finds the line across the fabric.
        let dram = l2.dram.read_sectors;
        l2.read(0, 32, 0b0001);
        assert_eq!(l2.counters.read_lookup_miss_sectors, 2);
        assert_eq!(l2.dram.read_sectors, dram);
    }
}
