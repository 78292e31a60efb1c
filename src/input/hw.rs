//! Hardware configurations: the GPU a kernel is simulated on.
//!
//! Every hardware number lives in a TOML file under `hw-configs/` (with its source in a comment);
//! this module only reads and checks them. The shipped files are embedded in the binary, so
//! `--hw h200` works from any directory; any other value of `--hw` is read as a path.

use crate::error::{Error, Result};
use crate::metrics::LINE_BYTES;
use serde::Deserialize;
use std::path::Path;

/// Threads per warp: every warp the simulator and the models handle has 32 lanes (lane masks
/// are `u32`), and a config's `sm.warp_size` must say so.
pub const WARP_SIZE: usize = 32;

/// The configurations shipped in `hw-configs/`, embedded at compile time.
pub const SHIPPED: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/shipped_hw.rs"));

/// A complete GPU description.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HwConfig {
    /// Short name, e.g. `h200`.
    pub name: String,
    /// Human-readable description.
    #[serde(default)]
    pub description: String,
    /// CUDA architecture `.cu` kernels are compiled for (`sm_90`); `None` when not given.
    #[serde(default)]
    pub arch: Option<String>,
    /// Streaming multiprocessors and their resource limits.
    pub sm: SmConfig,
    /// How blocks are dispatched onto SMs.
    #[serde(default)]
    pub schedule: ScheduleConfig,
    /// The per-SM L1 (or the cache that serves global loads).
    pub l1: L1Config,
    /// The L2 cache.
    pub l2: L2Config,
    /// Device memory.
    pub dram: DramConfig,
    /// Peak bandwidths, for the time model.
    #[serde(default)]
    pub bandwidth: BandwidthConfig,
    /// Constants of the latency-aware time model; defaults where absent.
    #[serde(default)]
    pub timing: TimingConfig,
    /// What partly written sectors cost the DRAM when many wait in the L2 at once (absent: not
    /// measured, never charged).
    #[serde(default)]
    pub partial_writeback: Option<PartialWritebackConfig>,
    /// How fast the L2 slices apply atomics (absent: not measured, no atomics limiter).
    #[serde(default)]
    pub atomics: Option<AtomicsConfig>,
}

/// How fast the L2 applies atomics: each L2 slice performs the atomic requests whose lines it
/// holds one after another, `request_ns` per request plus `sector_ns` per sector it updates
/// (`wide_sector_ns` for 8-byte operations), so atomics that crowd into few slices (a
/// histogram's few bins) take far longer than their bytes say (measured on the H200:
/// `validation/atomics_contention.cu`, docs/model.md "Atomics"). The time model's `atomic`
/// limiter is the busiest slice's time. Before the slices, each SM sends its atomic requests
/// one after another, `sm_request_cycles` per request plus `sm_sector_cycles` per sector: the
/// `atomic_sm` limiter, which sets the pace where the updates are spread over every slice.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AtomicsConfig {
    /// L2 slices that apply atomics (Nsight Compute's `lts` instances).
    pub slices: u32,
    /// Bytes of consecutive addresses one slice holds before the next slice's run begins (see
    /// [`AtomicsConfig::slice`]).
    pub slice_bytes: u32,
    /// Nanoseconds a slice spends per atomic request, beside its sectors.
    pub request_ns: f64,
    /// Nanoseconds per sector of a 1- to 4-byte atomic.
    pub sector_ns: f64,
    /// Nanoseconds per sector of an 8-byte atomic.
    pub wide_sector_ns: f64,
    /// Nanoseconds a request of floating-point adds takes at least: updates of one word wait
    /// for the previous add (where its sectors take less).
    pub float_update_ns: f64,
    /// SM cycles an SM spends per atomic request it sends the L2, beside its sectors (none:
    /// the SMs' side is not charged).
    #[serde(default)]
    pub sm_request_cycles: Option<f64>,
    /// SM cycles an SM spends per sector of the atomic requests it sends the L2.
    #[serde(default)]
    pub sm_sector_cycles: Option<f64>,
}

impl AtomicsConfig {
    /// The slice that applies atomics on 128-byte line `line`: runs of `slice_bytes` go to
    /// consecutive slices, but the run just above each pair shares its pair's two slices (the
    /// H200: 2 lines take 1 slice, 4 and 8 lines 2, 16 lines 4, 32 lines 8), so the address
    /// bit that picks between a pair and the run above it is dropped.
    pub fn slice(&self, line: u64) -> usize {
        let run = (line * LINE_BYTES) / self.slice_bytes.max(1) as u64;
        let key = ((run >> 2) << 1) | (run & 1);
        (key % self.slices.max(1) as u64) as usize
    }

    /// Nanoseconds a request takes for its sectors: `sectors` of 1- to 4-byte operations, or
    /// of 8-byte ones when `wide`.
    pub fn request_ns(&self, sectors: u32, wide: bool) -> f64 {
        let per_sector = if wide {
            self.wide_sector_ns
        } else {
            self.sector_ns
        };
        self.request_ns + sectors as f64 * per_sector
    }

    /// Nanoseconds one slice takes for a tally of its atomics: `[requests, sectors of 1- to
    /// 4-byte operations, sectors of 8-byte ones, requests at the float add's latency]`
    /// ([`crate::sim::atomic_slices::SliceTally`]).
    pub fn slice_ns(&self, tally: [f64; 4]) -> f64 {
        let [requests, sectors, wide_sectors, float_bound] = tally;
        requests * self.request_ns
            + sectors * self.sector_ns
            + wide_sectors * self.wide_sector_ns
            + float_bound * self.float_update_ns
    }

    /// SM cycles the SMs spend between them sending `requests` atomic requests of `sectors`
    /// sectors to the L2; `None` where the config does not give the SMs' cost.
    pub fn sm_cycles(&self, requests: f64, sectors: f64) -> Option<f64> {
        // `check` refuses a config with one of the two keys only.
        let (r, s) = self.sm_request_cycles.zip(self.sm_sector_cycles)?;
        Some(requests * r + sectors * s)
    }

    /// At least one slice and one line to a run; every time a finite number >= 0; the SMs' two
    /// costs both given or neither.
    fn check(&self) -> std::result::Result<(), String> {
        if self.slices == 0 {
            return Err("atomics.slices must be at least 1".into());
        }
        if self.slice_bytes == 0 || !self.slice_bytes.is_multiple_of(LINE_BYTES as u32) {
            return Err("atomics.slice_bytes must be a positive multiple of 128".into());
        }
        if ![
            self.request_ns,
            self.sector_ns,
            self.wide_sector_ns,
            self.float_update_ns,
            self.sm_request_cycles.unwrap_or(0.0),
            self.sm_sector_cycles.unwrap_or(0.0),
        ]
        .iter()
        .all(|v| v.is_finite() && *v >= 0.0)
        {
            return Err(
                "atomics.request_ns, sector_ns, wide_sector_ns, float_update_ns, sm_request_cycles and sm_sector_cycles must be numbers >= 0".into(),
            );
        }
        if self.sm_request_cycles.is_some() != self.sm_sector_cycles.is_some() {
            // One alone would price the other at nothing without a word.
            return Err(
                "atomics.sm_request_cycles and sm_sector_cycles go together: give both or neither"
                    .into(),
            );
        }
        Ok(())
    }
}

/// What partly written sectors cost the DRAM when many wait in the L2 at once: the L2 then
/// writes some back before their other writers complete them (the DRAM reads each one's missing
/// bytes, writes it, and writes it again once completed), the more so the longer they wait, so
/// chiefly those two blocks write between them (measured on the H200:
/// `validation/partial_streams.cu`, `validation/lbm_parts.cu`; docs/model.md, "Partly written
/// sectors"). The DRAM's time grows by (sectors two blocks write in part + `within_block_weight`
/// × those one block's warps complete) / `sectors_per_ns` ns, times a ramp from 0, when the
/// GPU's resident warps leave `onset_waiting_sectors` or fewer partly written sectors waiting
/// at once, to 1 at `saturation_waiting_sectors` and beyond.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PartialWritebackConfig {
    /// Partly written sectors waiting at once up to which they cost nothing.
    pub onset_waiting_sectors: f64,
    /// Partly written sectors waiting at once from which they cost in full.
    pub saturation_waiting_sectors: f64,
    /// Sectors two blocks write in part that the DRAM takes per ns at full cost, beside its
    /// byte rate.
    pub sectors_per_ns: f64,
    /// What a sector one block's warps write in part costs beside one two blocks write (0-1).
    pub within_block_weight: f64,
}

impl PartialWritebackConfig {
    /// Seconds the DRAM takes for `left_partial` sectors left partly written, `across_sms` of
    /// them written by two blocks, while `waiting` wait at once.
    pub fn seconds(&self, left_partial: f64, across_sms: f64, waiting: f64) -> f64 {
        let span = self.saturation_waiting_sectors - self.onset_waiting_sectors;
        let ramp = ((waiting - self.onset_waiting_sectors) / span).clamp(0.0, 1.0);
        let within = (left_partial - across_sms).max(0.0);
        ramp * (across_sms + self.within_block_weight * within) / self.sectors_per_ns * 1e-9
    }

    /// Every constant a finite number, the onset below the saturation, the weight a fraction,
    /// the rate positive.
    fn check(&self) -> std::result::Result<(), String> {
        let finite = [
            self.onset_waiting_sectors,
            self.saturation_waiting_sectors,
            self.within_block_weight,
            self.sectors_per_ns,
        ]
        .iter()
        .all(|v| v.is_finite());
        if !finite
            || self.onset_waiting_sectors < 0.0
            || self.saturation_waiting_sectors <= self.onset_waiting_sectors
        {
            return Err("partial_writeback.onset_waiting_sectors must be a number >= 0 below partial_writeback.saturation_waiting_sectors".into());
        }
        if !(0.0..=1.0).contains(&self.within_block_weight) {
            return Err(
                "partial_writeback.within_block_weight must be a fraction between 0 and 1".into(),
            );
        }
        if self.sectors_per_ns <= 0.0 {
            return Err("partial_writeback.sectors_per_ns must be a positive number".into());
        }
        Ok(())
    }
}

/// SM count and per-SM occupancy limits.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SmConfig {
    /// Number of SMs.
    pub count: u32,
    /// SM clock in GHz (boost: what a kernel normally runs at).
    pub clock_ghz: f64,
    /// Base SM clock in GHz: what Nsight Compute locks the clock to by default
    /// (`--clock-control base`), hence the clock of measured kernel times.
    #[serde(default)]
    pub base_clock_ghz: Option<f64>,
    /// Threads per warp.
    pub warp_size: u32,
    /// Maximum resident threads per SM.
    pub max_threads: u32,
    /// Maximum resident blocks per SM.
    pub max_blocks: u32,
    /// Maximum resident warps per SM.
    pub max_warps: u32,
    /// Maximum threads per block.
    pub max_threads_per_block: u32,
    /// 32-bit registers per SM.
    pub registers: u32,
    /// Register allocation unit per warp (registers).
    pub register_alloc_unit: u32,
    /// Warp allocation granularity of the register file (warps).
    pub warp_alloc_granularity: u32,
    /// Maximum registers per thread.
    pub max_registers_per_thread: u32,
    /// Shared memory available to blocks on one SM (bytes).
    pub shared_memory_bytes: u32,
    /// Shared memory allocation granularity (bytes).
    pub shared_alloc_unit: u32,
    /// Shared memory the system reserves per block (bytes).
    #[serde(default)]
    pub shared_reserved_per_block: u32,
    /// FP32 cores ("streaming processors") per SM, for models that count them.
    #[serde(default)]
    pub cores: Option<u32>,
    /// Warp instructions the SM issues per cycle at most (one per scheduler): the time model's
    /// `issue` limiter; `None` leaves it out.
    #[serde(default)]
    pub warp_instructions_per_cycle: Option<f64>,
}

impl SmConfig {
    /// The shared memory one block takes on an SM when it asks for `requested` bytes: the
    /// system's reservation added and the sum rounded up to the allocation unit.
    pub fn shared_bytes_per_block(&self, requested: u32) -> u32 {
        (requested + self.shared_reserved_per_block).div_ceil(self.shared_alloc_unit)
            * self.shared_alloc_unit
    }
}

/// Block dispatch: the order in which the first wave is spread over the SMs.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ScheduleConfig {
    /// Explicit SM order for first-wave dispatch (a permutation of `0..sm.count`). When absent, the
    /// order is generated from `gpcs`: TPC pairs (2k, 2k+1) rotating across GPCs.
    #[serde(default)]
    pub dispatch_order: Option<Vec<u32>>,
    /// Number of GPCs, used to generate the dispatch order when no explicit one is given (default 1).
    #[serde(default)]
    pub gpcs: Option<u32>,
    /// How an SM picks the warp that issues next (default `load-runs`).
    #[serde(default)]
    pub warp_issue: WarpIssue,
    /// The largest chance that a warp passes up its turn at the start of a run (each block
    /// draws its chance in `[0, turn_skip)` from its id; default 0, none). Without it every SM
    /// issues in step with the others and blocks of one shape last the same number of ticks;
    /// the GPU's block durations vary (docs/model.md "Schedule").
    #[serde(default)]
    pub turn_skip: Option<f64>,
    /// The largest chance, added to its block's, that a warp passes up its turn (each warp
    /// draws its own in `[0, warp_drift)` from its block and warp id; default 0, none). It
    /// makes the warps of a block issue at different rates, so they drift apart over the block's
    /// life as the GPU's do; no shipped config sets it, as it makes some counts worse (a knob for
    /// trials: docs/model.md "Schedule").
    #[serde(default)]
    pub warp_drift: Option<f64>,
    /// Turns of each warp of a finished block that its SM sits out before it issues again, a
    /// turn being the launch's mean (default 0: none): the block's exit and its successor's
    /// launch. It keeps an SM from freeing slots a few ticks apart, which puts consecutive
    /// blocks on one SM (docs/model.md "Schedule").
    #[serde(default)]
    pub turnover_turns: Option<u32>,
    /// The SMs of each GPC (every SM in exactly one). When absent, the SMs are numbered GPC by
    /// GPC, `gpcs` of them.
    #[serde(default)]
    pub gpc_sms: Option<Vec<Vec<u32>>>,
    /// After the first wave, the dispatcher hands the next block to the GPC of the last one when
    /// another of its slots frees within this many nanoseconds (default: none; docs/model.md
    /// "Schedule").
    #[serde(default)]
    pub gpc_window_ns: Option<f64>,
    /// How far two blocks that start together on different SMs fall out of step on the GPU: the
    /// standard deviation of the difference of their lives as a share of a block's life
    /// (default: none). The tick schedule keeps such blocks in step; the L2 blurs the gap
    /// between a far miss and the home side's read of the line by this drift before it decides
    /// whether they raced (docs/model.md "L2").
    #[serde(default)]
    pub block_drift: Option<f64>,
}

/// How an SM picks the warp that issues next, one instruction per tick.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum WarpIssue {
    /// Round-robin over the resident warps, but a warp keeps issuing while its instructions are
    /// loads: a load does not stall the warp until its value is used, so a warp sends a run of
    /// independent loads back to back before the scheduler moves on (docs/model.md "Schedule").
    #[default]
    LoadRuns,
    /// Round-robin over the resident warps, one instruction each.
    RoundRobin,
}

/// Replacement policy of a set-associative cache.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Replacement {
    /// Least recently used.
    Lru,
    /// First in, first out (insertion order).
    Fifo,
    /// A pseudo-random way of the set (a fixed-seed generator per cache, so runs repeat).
    Random,
    /// Tree pseudo-LRU: a binary tree of one bit per node points away from the most recent use
    /// (ways a power of two, at most 32).
    Plru,
    /// Static re-reference interval prediction (Jaleel et al., ISCA 2010), 2-bit: a line enters
    /// with a long predicted re-reference (2), a hit predicts a near one (0); the victim is a
    /// line predicted distant (3), every line of the set aging by one until there is one.
    Srrip,
}

/// What the configuration needs to know of each policy (its state and hooks are in
/// `src/sim/replacement/`, one module per policy, which rely on these checks).
impl Replacement {
    /// Whether the policy runs on sets of `ways` ways: `Err` says what it needs.
    pub fn check_ways(self, ways: u32) -> std::result::Result<(), String> {
        match self {
            Replacement::Plru if !ways.is_power_of_two() || ways > 32 => Err(format!(
                "needs a power of two of at most 32 ways (got {ways})"
            )),
            Replacement::Lru
            | Replacement::Fifo
            | Replacement::Random
            | Replacement::Plru
            | Replacement::Srrip => Ok(()),
        }
    }

    /// Whether the split L2's limit on near-side lines (`l2.local_ways`) may be used with the
    /// policy: the two it was built and measured with, where the limit's recency follows the
    /// policy's own (LRU) or stands in for it (tree-PLRU). `check` names them in its error.
    pub fn allows_local_ways(self) -> bool {
        match self {
            Replacement::Lru | Replacement::Plru => true,
            Replacement::Fifo | Replacement::Random | Replacement::Srrip => false,
        }
    }
}

/// How a line address selects its set.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SetIndexing {
    /// `line % sets`: the plain address bits above the line offset.
    Modulo,
    /// A mixing hash of the line address, reduced to the set count (models the XOR set hashing of
    /// recent GPUs, which spreads power-of-two strides).
    Hash,
    /// The line address XOR-folded onto itself in 7-bit steps (`l ^ l>>7 ^ l>>14 ^ ...`), then
    /// `% sets`: consecutive lines fill the sets evenly like `modulo`, and power-of-two strides
    /// spread over them too. Chosen against the H100/H200 L1 pointer chase (docs/model.md).
    #[serde(rename = "xor-fold")]
    XorFold,
    /// Bit `i` of the set is the parity of `line & set_index_masks[i]` (an XOR of chosen address
    /// bits, `2^masks` sets), with the line-address bits from `set_index_hashed_from_bit` up
    /// replaced by a pseudo-random value: the H100/H200 L1, measured in `validation/l1_index.cu`
    /// (docs/model.md "L1 geometry"). L1 only.
    #[serde(rename = "xor-matrix")]
    XorMatrix,
    /// Balanced over address ranges, as measured on the H100 and H200 L2 (docs/model.md "L2"):
    /// each run of `sets` consecutive partition-local lines fills every set once, in an order
    /// scrambled per run, so that a contiguous array loads the sets evenly and strides spread. In
    /// a split L2 a line and its partner in the other partition (the line that differs in the
    /// lowest bit of `home_hash`) share the set index, so each partition's own lines are balanced
    /// too.
    Balanced,
}

/// The cache that serves global loads inside an SM.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct L1Config {
    /// Data capacity in bytes available to global loads.
    pub size_bytes: u64,
    /// Allocation unit (bytes).
    pub line_bytes: u32,
    /// Transfer unit (bytes).
    pub sector_bytes: u32,
    /// Associativity.
    pub ways: u32,
    /// Replacement policy.
    pub replacement: Replacement,
    /// Set indexing.
    pub set_indexing: SetIndexing,
    /// For `set_indexing = "xor-matrix"`: one mask of line-address bits per set-index bit. The
    /// cache then has `2^masks` sets of `ways` tags, which may hold more lines than `size_bytes`:
    /// the data a launch may keep is its L1 size ([`L1Config::size_for`]), and a line that
    /// enters beyond it pushes out one elsewhere. The H100 and H200 configs carry their measured
    /// masks beside another indexing, which predicts the stencils better (docs/model.md).
    #[serde(default)]
    pub set_index_masks: Vec<u64>,
    /// For `"xor-matrix"`: the line-address bits from this one up enter the set index through a
    /// pseudo-random value instead of the masks. They stand for the physical address bits of the
    /// measured index, which a virtual address does not determine.
    #[serde(default)]
    pub set_index_hashed_from_bit: Option<u32>,
    /// Whether global loads are cached (false on Kepler: they go to L2 directly).
    pub caches_global_loads: bool,
    /// Kepler's separate read-only data cache per SM (bytes), used by `const __restrict__` /
    /// `__ldg` loads; only the analytical models read it.
    #[serde(default)]
    pub read_only_cache_bytes: Option<u64>,
    /// Data-stage wavefronts per line of a load instruction that misses, beyond the measured
    /// per-instruction rule (`sim::data_stage`): the replay under load, fitted across kernels
    /// (docs/model.md).
    #[serde(default = "default_missing_request_line_wavefronts")]
    pub missing_request_line_wavefronts: f64,
    /// Data-stage wavefronts a line with some sectors present and some missing adds.
    #[serde(default = "default_partial_line_wavefronts")]
    pub partial_line_wavefronts: f64,
    /// Load instructions per block from which the replays of loads that miss
    /// (`missing_request_line_wavefronts`, `partial_line_wavefronts`) are charged in full; a
    /// block with fewer pays in proportion (few loads in flight per block replay less:
    /// `sim::data_stage`, fitted across kernel families).
    #[serde(default = "default_replay_block_loads")]
    pub replay_block_loads: f64,
    /// The sectors stores and atomics write per missing load sector from which loads that miss
    /// replay in full (`missing_request_line_wavefronts`); a launch that writes fewer replays in
    /// proportion, one that never writes not at all: a read-only stream's loads take the bank
    /// rule's passes and nothing more (`sim::data_stage::extra_wavefronts`, docs/model.md).
    /// Absent: always in full.
    #[serde(default)]
    pub replay_store_share: Option<f64>,
    /// Data-stage wavefronts a load's line costs that finds every sector it wants present while
    /// the SM's last miss on the line is at most `in_flight_hit_ticks` ago: the data may not have
    /// arrived, and the load waits for it as a miss does (`sim::data_stage::hit_in_flight`;
    /// scaled for blocks with few loads as the replays are; fitted across kernel families,
    /// docs/model.md).
    #[serde(default = "default_in_flight_hit_wavefronts")]
    pub in_flight_hit_wavefronts: f64,
    /// How many scheduler ticks (issue slots of one SM) after a miss a hit on the same line
    /// still finds its fill in flight (`in_flight_hit_wavefronts`), 1 to 4096.
    #[serde(default = "default_in_flight_hit_ticks")]
    pub in_flight_hit_ticks: u32,
    /// Instructions a warp may issue between two global stores to one line for the second to
    /// reach the L2 in the first one's write (`sim::sm_stage`, docs/model.md "A warp's stores in
    /// a row merge"); a barrier or a memory instruction between always keeps them apart.
    #[serde(default = "default_store_merge_window_instructions")]
    pub store_merge_window_instructions: u32,

    /// Data-stage wavefronts every launched warp costs per special register the kernel reads
    /// through the LSU: each `threadIdx` component (the compiled code's `S2R` of `SR_TID.X`,
    /// `.Y`, `.Z`) and `%laneid` (read where an atomic is aggregated over the warp); `blockIdx`
    /// reads cost none (measured on the H200: `validation/launch_terms_probe.cu`). The name this
    /// key had while the cost was taken for the `blockIdx` components',
    /// `wavefronts_per_block_index`, is read as this one.
    #[serde(
        default = "default_wavefronts_per_special_register",
        alias = "wavefronts_per_block_index"
    )]
    pub wavefronts_per_special_register: f64,
    /// Data-stage wavefronts of one warp shuffle (`SHFL`), whatever its lanes and mode
    /// (measured on the H200: `validation/warp_ops_probe.cu`).
    #[serde(default = "default_wavefronts_per_shuffle")]
    pub wavefronts_per_shuffle: f64,
    /// Data-stage wavefronts of one global or shared memory instruction a warp issues with no
    /// lane active (predicated off: [`crate::input::trace::IfDecl::predicated`]; measured on
    /// the H200: `validation/predicated_probe.cu`).
    #[serde(default = "default_wavefronts_per_predicated_off")]
    pub wavefronts_per_predicated_off: f64,
    /// The shared-memory carve-out the driver picks for a kernel that sets no preference, by the
    /// most blocks one SM can hold: `[blocks, bytes]` pairs, both increasing; a launch whose SM
    /// holds up to `blocks` blocks gets `bytes` (the last pair beyond). `size_bytes` is the L1
    /// beside the first pair's carve-out; a larger one, or more shared memory than it holds, takes
    /// the difference out of the L1 ([`L1Config::size_for`]). Empty: the L1 is always `size_bytes`.
    #[serde(default)]
    pub driver_carveouts: Vec<[u64; 2]>,
    /// Latency of a load that hits in the L1, SM cycles at the base clock (pointer chase); the
    /// L2 coalescer's windows are the L2's latencies less this.
    #[serde(default)]
    pub hit_latency_cycles: Option<f64>,
}

impl L1Config {
    /// The L1 capacity of a launch whose SM holds `blocks_per_sm` blocks that together take
    /// `shared_per_sm` bytes of shared memory (reservations included): `size_bytes` less what the
    /// driver's carve-out adds over the smallest one, rounded down to whole sets.
    pub fn size_for(&self, blocks_per_sm: u32, shared_per_sm: u64) -> u64 {
        let (Some(first), Some(last)) =
            (self.driver_carveouts.first(), self.driver_carveouts.last())
        else {
            return self.size_bytes;
        };
        let pick = self
            .driver_carveouts
            .iter()
            .find(|[blocks, _]| blocks_per_sm as u64 <= *blocks)
            .unwrap_or(last)[1]
            .max(shared_per_sm);
        let set = self.line_bytes as u64 * self.ways as u64;
        let left = self
            .size_bytes
            .saturating_sub(pick.saturating_sub(first[1]));
        (left / set).max(1) * set
    }

    /// `"xor-matrix"` comes with 1 to 16 nonzero masks below the hashed bits (masks given for
    /// another indexing, as a record of the measured index, are checked the same way).
    fn check_index(&self) -> std::result::Result<(), String> {
        let masks = &self.set_index_masks;
        if self.set_indexing != SetIndexing::XorMatrix && masks.is_empty() {
            if self.set_index_hashed_from_bit.is_some() {
                return Err("l1.set_index_hashed_from_bit needs l1.set_index_masks".into());
            }
            return Ok(());
        }
        if masks.is_empty() || masks.len() > 16 {
            return Err(format!(
                "l1.set_index_masks: \"xor-matrix\" needs 1 to 16 masks (one per set-index bit), not {}",
                masks.len()
            ));
        }
        let from = self.set_index_hashed_from_bit.unwrap_or(64);
        if from == 0 || from > 64 {
            return Err(format!(
                "l1.set_index_hashed_from_bit = {from} must be between 1 and 64"
            ));
        }
        if let Some(m) = masks
            .iter()
            .find(|&&m| m == 0 || (from < 64 && m >> from != 0))
        {
            return Err(format!(
                "l1.set_index_masks: mask {m:#x} is empty or reaches the hashed bits (from bit {from})"
            ));
        }
        Ok(())
    }

    /// The driver's carve-outs increase with the blocks and leave the L1 at least one set.
    fn check_carveouts(&self) -> std::result::Result<(), String> {
        let c = &self.driver_carveouts;
        if c.windows(2)
            .any(|w| w[1][0] <= w[0][0] || w[1][1] < w[0][1])
            || c.iter().any(|p| p[0] == 0)
        {
            return Err("l1.driver_carveouts: [blocks, bytes] pairs must have blocks > 0 and increase in both".into());
        }
        if let (Some(first), Some(last)) = (c.first(), c.last()) {
            let set = self.line_bytes as u64 * self.ways as u64;
            if self.size_bytes < last[1] - first[1] + set {
                return Err(format!(
                    "l1.driver_carveouts: a carve-out of {} B leaves less than one set of the {} B L1",
                    last[1], self.size_bytes
                ));
            }
        }
        Ok(())
    }
}

fn default_missing_request_line_wavefronts() -> f64 {
    0.283
}

fn default_partial_line_wavefronts() -> f64 {
    0.096
}

fn default_in_flight_hit_wavefronts() -> f64 {
    0.145
}

fn default_in_flight_hit_ticks() -> u32 {
    63
}

fn default_store_merge_window_instructions() -> u32 {
    4
}

fn default_replay_block_loads() -> f64 {
    8.0
}

fn default_wavefronts_per_special_register() -> f64 {
    1.0
}

fn default_wavefronts_per_shuffle() -> f64 {
    1.0
}

fn default_wavefronts_per_predicated_off() -> f64 {
    1.0
}

/// The home-partition function of a split L2: the parity of a set of address bits, given either
/// as a contiguous run (`low_bit`, `bits`) or listed one by one (`address_bits`).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PartitionHash {
    /// Lowest address bit of a contiguous run of parity bits.
    #[serde(default)]
    pub low_bit: Option<u32>,
    /// Number of contiguous address bits from `low_bit` XOR-ed together.
    #[serde(default)]
    pub bits: Option<u32>,
    /// The address bits XOR-ed together, listed (instead of `low_bit` and `bits`).
    #[serde(default)]
    pub address_bits: Option<Vec<u32>>,
}

impl PartitionHash {
    /// The contiguous run of `bits` address bits from `low_bit`.
    pub fn contiguous(low_bit: u32, bits: u32) -> Self {
        PartitionHash {
            low_bit: Some(low_bit),
            bits: Some(bits),
            address_bits: None,
        }
    }

    /// The address bits as a mask; the partition of an address is the parity of `address & mask`.
    /// An error says what is wrong with the description.
    pub fn mask(&self) -> std::result::Result<u64, String> {
        match (self.low_bit, self.bits, &self.address_bits) {
            (Some(low), Some(bits), None) => {
                if bits == 0 || low.saturating_add(bits) > 63 {
                    return Err(
                        "l2.home_hash must select between 1 and 63 bits below bit 63".into(),
                    );
                }
                Ok(((1u64 << bits) - 1) << low)
            }
            (None, None, Some(list)) => {
                let mut mask = 0u64;
                for &bit in list {
                    if bit >= 63 {
                        return Err(format!(
                            "l2.home_hash.address_bits: bit {bit} is not below bit 63"
                        ));
                    }
                    if mask & (1 << bit) != 0 {
                        return Err(format!("l2.home_hash.address_bits lists bit {bit} twice"));
                    }
                    mask |= 1 << bit;
                }
                if mask == 0 {
                    return Err("l2.home_hash.address_bits is empty".into());
                }
                Ok(mask)
            }
            _ => Err("l2.home_hash takes either low_bit and bits, or address_bits".into()),
        }
    }
}

/// The L2 cache (possibly split into partitions).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct L2Config {
    /// Total capacity of all partitions (bytes).
    pub size_bytes: u64,
    /// Number of partitions (1 or 2).
    pub partitions: u32,
    /// Allocation unit (bytes).
    pub line_bytes: u32,
    /// Transfer unit (bytes).
    pub sector_bytes: u32,
    /// Associativity.
    pub ways: u32,
    /// Replacement policy.
    pub replacement: Replacement,
    /// Set indexing.
    pub set_indexing: SetIndexing,
    /// DRAM fetch unit on a read miss (bytes, a multiple of the sector): missing sectors are rounded
    /// out to this granularity.
    pub fill_bytes: u32,
    /// Ways of a set that lines brought in for a partition's own SMs (their reads, near-homed
    /// or duplicated, and their stores) may hold; lines the other partition's SMs requested may
    /// take any way (split L2 only, LRU or tree-PLRU; absent: no limit).
    #[serde(default)]
    pub local_ways: Option<u32>,
    /// Ways of a set whose lines may hold written data not yet in DRAM (the dirty budget): a
    /// store or atomic that makes one more line of a set dirty writes the least recently used
    /// dirty line of the set back and keeps it, clean (LRU only; absent: a line is written back
    /// only when it leaves).
    #[serde(default)]
    pub dirty_ways: Option<u32>,
    /// Home-partition hash (split L2 only).
    #[serde(default)]
    pub home_hash: Option<PartitionHash>,
    /// For each partition, the inclusive SM id ranges attached to it (split L2 only).
    #[serde(default)]
    pub partition_sms: Option<Vec<Vec<[u32; 2]>>>,
    /// How much longer a read served by the far partition takes than a near hit (ns, split L2
    /// only). While a far side's miss is on its way, a read of the home side's own SMs finds the
    /// sectors missing too ([`crate::sim::l2`]); absent: 0, the far read arrives at once.
    #[serde(default)]
    pub far_read_extra_ns: Option<f64>,
    /// Latency of a load served by the near partition, SM cycles at the base clock (pointer
    /// chase).
    #[serde(default)]
    pub hit_latency_cycles: Option<f64>,
    /// The L2 Request Coalescer: a read that an SM of the same GPC made for the same sectors of
    /// the same line reaches the L2 once if the second comes while the first is on its way, with
    /// the chance that the two streams are still in step, by the lines their warp instruction
    /// reads: `[lines, share]` pairs, lines increasing, interpolated over log2(lines) and held
    /// beyond the ends ([`L2Config::coalescer_share`]). Empty: no coalescer.
    #[serde(default)]
    pub coalescer_survival: Vec<[f64; 2]>,
}

impl L2Config {
    /// The share of reads of a warp instruction of `lines` lines that still merge with an
    /// identical read in flight ([`L2Config::coalescer_survival`]; 0 without a coalescer).
    pub fn coalescer_share(&self, lines: u32) -> f64 {
        let points = &self.coalescer_survival;
        let (Some(first), Some(last)) = (points.first(), points.last()) else {
            return 0.0;
        };
        let x = (lines.max(1) as f64).log2();
        if x <= first[0].log2() {
            return first[1];
        }
        if x >= last[0].log2() {
            return last[1];
        }
        for w in points.windows(2) {
            let (x0, x1) = (w[0][0].log2(), w[1][0].log2());
            if x == x1 {
                return w[1][1];
            }
            if x < x1 {
                return w[0][1] + (x - x0) / (x1 - x0) * (w[1][1] - w[0][1]);
            }
        }
        last[1]
    }
}

/// Device memory.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DramConfig {
    /// Peak bandwidth (GB/s).
    pub bandwidth_gbs: f64,
    /// Alignment of large allocations (bytes); arrays are placed at multiples of it.
    pub allocation_granularity_bytes: u64,
    /// Device memory (GiB, the product's nominal size): a launch whose arrays need more could
    /// not run there ([`crate::launch::Launch::check_memory`]). Every shipped config has it.
    #[serde(default)]
    pub capacity_gib: Option<f64>,
    /// Sectors every launch reads from DRAM besides its data and its code (the constant bank
    /// and what the launch itself needs), with all caches flushed before it as Nsight Compute
    /// does by default; the code is read once more, a sector per 32 bytes of it
    /// ([`crate::launch::Launch::code_bytes`]). `None`: not measured, no such reads counted.
    #[serde(default)]
    pub launch_read_sectors: Option<u64>,
}

/// Cache bandwidths for the time model.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BandwidthConfig {
    /// Achievable DRAM bandwidth (GB/s, measured); the time model falls back to the peak in
    /// `[dram]` when absent.
    #[serde(default)]
    pub dram_gbs: Option<f64>,
    /// DRAM rates by direction (GB/s, measured), which the time model uses in place of
    /// `dram_gbs` where it knows a launch's DRAM reads and writes apart
    /// ([`BandwidthConfig::dram_seconds`]). Set all three or none.
    #[serde(default)]
    pub dram_read_gbs: Option<f64>,
    /// DRAM write rate (GB/s, measured); see `dram_read_gbs`.
    #[serde(default)]
    pub dram_write_gbs: Option<f64>,
    /// DRAM rate of an even copy, reads and writes together (GB/s, measured): below both
    /// directions' rates by the turnarounds between them; see `dram_read_gbs`.
    #[serde(default)]
    pub dram_copy_gbs: Option<f64>,
    /// L2 bandwidth (GB/s).
    #[serde(default)]
    pub l2_gbs: Option<f64>,
    /// Aggregate L1 bandwidth (GB/s).
    #[serde(default)]
    pub l1_gbs: Option<f64>,
    /// Peak double-precision rate (GFLOP/s).
    #[serde(default)]
    pub fp64_gflops: Option<f64>,
    /// Peak single-precision rate (GFLOP/s).
    #[serde(default)]
    pub fp32_gflops: Option<f64>,
    /// Partially written sectors the L2 takes from the SMs per nanosecond (a store request
    /// whose sector is not written whole costs the L2 slice far more than a full one; measured:
    /// `validation/store_patterns.cu`). None: such sectors cost what full ones do.
    #[serde(default)]
    pub l2_partial_write_sectors_per_ns: Option<f64>,
    /// Write requests carrying partly written sectors the L2 takes per nanosecond, on top of
    /// their sectors at `l2_partial_write_sectors_per_ns` (a request of four half-written
    /// sectors costs the slice less than four requests of one: `validation/store_merge.cu`).
    /// None: the sectors' rate is all they cost.
    #[serde(default)]
    pub l2_partial_write_requests_per_ns: Option<f64>,
    /// How the L2's time for partly written sectors and its time for the rest of its traffic
    /// combine: as the norm `(a^k + b^k)^(1/k)` with this `k` (1: they add; the larger the `k`,
    /// the more they overlap, up to the larger of the two). None: 1. Measured:
    /// `validation/partial_mix.cu`.
    #[serde(default)]
    pub l2_partial_write_overlap_exponent: Option<f64>,
}

impl BandwidthConfig {
    /// Seconds the DRAM takes for `bytes` of which `read_bytes` are reads (the rest writes):
    /// with rates by direction, reads at `dram_read_gbs`, writes at `dram_write_gbs`, and the
    /// lesser of the two at the turnaround rate that makes an even copy run at `dram_copy_gbs`;
    /// else (or with the reads unknown) all of it at `one_rate_gbs`.
    pub fn dram_seconds(&self, bytes: f64, read_bytes: Option<f64>, one_rate_gbs: f64) -> f64 {
        match (
            read_bytes,
            self.dram_read_gbs,
            self.dram_write_gbs,
            self.dram_copy_gbs,
        ) {
            (Some(r), Some(read), Some(write), Some(copy)) => {
                let r = r.clamp(0.0, bytes);
                let w = bytes - r;
                let turnaround = 1.0 / (2.0 / copy - 1.0 / read - 1.0 / write);
                (r / read + w / write + r.min(w) / turnaround) * 1e-9
            }
            _ => bytes / (one_rate_gbs * 1e9),
        }
    }
}

/// Constants of the time model's per-SM queueing model (`src/timing.rs`, `docs/model.md`).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct TimingConfig {
    /// Idle latency of a load served by DRAM, in SM cycles at the base clock (a pointer chase;
    /// measured on the H100 and H200 by `validation/latency.cu`).
    pub dram_latency_cycles: f64,
    /// How many idle DRAM latencies a warp waits per dependent round of loads under load, before
    /// what each load of the round adds (`latency_per_load_factor`): the delay of the closed
    /// queueing model is (this + `latency_per_load_factor` × loads per round) ×
    /// `dram_latency_cycles` × rounds (fitted, the same for every GPU).
    pub loaded_latency_factor: f64,
    /// Idle DRAM latencies each load instruction of a round adds to the round's delay (its
    /// issue, and the later return of a longer round; fitted with `loaded_latency_factor`).
    pub latency_per_load_factor: f64,
    /// Loads per round beyond which a round's delay grows no longer: a round waits for its
    /// slowest load, and the slowest of many independent loads comes little later than that of
    /// a few (measured on the H200 by `validation/round_latency.cu`: 20 loads take 1.55 times one,
    /// which the linear delay reaches at 6 loads). None: no limit.
    pub round_loads_limit: Option<f64>,
    /// SM cycles a finishing block costs, scaled by the square of its share of the SM's block
    /// slots: while a block's last warps finish and the next block starts, its share of the SM
    /// idles for a time that grows with the block (fitted; the same however many rounds of
    /// loads its warps run, as `validation/turnover.cu` measured).
    pub block_turnover_cycles: f64,
    /// SM cycles a warp waits at each block barrier it passes, beside its rounds of loads: the
    /// barrier's own latency and the wait for the block's other warps at it (measured on the
    /// H200 by `validation/reductions.cu`, whose shared-memory tree passes 6-10 barriers more
    /// than its warp-shuffle twin: 94-127 cycles each; docs/model.md "Delay").
    pub barrier_cycles: f64,
    /// SM cycles a warp spends on its own path per instruction it issues, beside its rounds of
    /// loads and its barriers: the cycles its scheduler waits after an instruction before the
    /// warp's next (the stall counts ptxas encodes for fixed-latency results) beyond the issue
    /// limiter's share. The delay grows by this × the warp's instructions, so a warp with a long
    /// chain of instructions between its loads keeps fewer loads in flight (measured on the
    /// SASS of 132 kernels by `validation/sass_stalls.py`; docs/model.md "Time"). 0:
    /// instructions cost only their issue slots.
    pub own_cycles_per_instruction: f64,
    /// Fixed cost of a kernel launch (microseconds; measured by `validation/launch_overhead.cu`).
    pub launch_overhead_us: f64,
    /// Seconds the L1 data pipe is held up per second the DRAM is busy: the L1 limiter's time is
    /// its wavefronts' (or bytes') time plus this × the DRAM limiter's. An L1-bound launch runs
    /// longer than its wavefronts take by about this share of its DRAM time, while one bound by
    /// the DRAM hides its L1 work (measured on the H200 by `validation/l1_dram_overlap.cu`;
    /// fitted with `loaded_latency_factor`, `docs/model.md` "Time"). 0: the two overlap.
    pub l1_busy_per_dram_time: f64,
    /// Nanoseconds the GPU's block dispatcher takes per block, whatever the block's size and the
    /// SM clock (measured: empty blocks, `validation/launch_overhead.cu` and
    /// `validation/store_patterns.sh`): the time model's `launch` limiter. None: not measured,
    /// no such limiter.
    pub block_launch_ns: Option<f64>,
}

impl TimingConfig {
    /// Every constant must be a finite number, the latency and factor positive, the drain a
    /// fraction.
    fn check(&self) -> std::result::Result<(), String> {
        let ok = |v: f64| v.is_finite() && v >= 0.0;
        for (what, v) in [
            ("timing.dram_latency_cycles", self.dram_latency_cycles),
            ("timing.loaded_latency_factor", self.loaded_latency_factor),
        ] {
            if !(ok(v) && v > 0.0) {
                return Err(format!("{what} must be a positive number"));
            }
        }
        if !ok(self.block_turnover_cycles) {
            return Err("timing.block_turnover_cycles must be a number >= 0".into());
        }
        if !ok(self.launch_overhead_us) {
            return Err("timing.launch_overhead_us must be a number >= 0".into());
        }
        if !ok(self.barrier_cycles) {
            return Err("timing.barrier_cycles must be a number >= 0".into());
        }
        if !ok(self.own_cycles_per_instruction) {
            return Err("timing.own_cycles_per_instruction must be a number >= 0".into());
        }
        if !ok(self.latency_per_load_factor) {
            return Err("timing.latency_per_load_factor must be a number >= 0".into());
        }
        if !ok(self.l1_busy_per_dram_time) {
            return Err("timing.l1_busy_per_dram_time must be a number >= 0".into());
        }
        if let Some(ns) = self.block_launch_ns
            && !(ok(ns) && ns > 0.0)
        {
            return Err("timing.block_launch_ns must be a positive number".into());
        }
        if let Some(n) = self.round_loads_limit
            && !(ok(n) && n > 0.0)
        {
            return Err("timing.round_loads_limit must be a positive number".into());
        }
        Ok(())
    }

    /// Cycles a warp waits per dependent round of `loads_per_round` loads: the queueing model's
    /// delay per round.
    pub fn round_latency_cycles(&self, loads_per_round: f64) -> f64 {
        let loads = loads_per_round.min(self.round_loads_limit.unwrap_or(f64::INFINITY));
        (self.loaded_latency_factor + self.latency_per_load_factor * loads)
            * self.dram_latency_cycles
    }
}

impl Default for TimingConfig {
    fn default() -> Self {
        // The H100/H200 values as fitted before the L1's share of the DRAM time was measured,
        // documented as the defaults in the configs that lack [timing].
        TimingConfig {
            dram_latency_cycles: 550.0,
            loaded_latency_factor: 1.25,
            latency_per_load_factor: 0.2,
            block_turnover_cycles: 1500.0,
            barrier_cycles: 100.0,
            own_cycles_per_instruction: 0.0,
            launch_overhead_us: 2.5,
            l1_busy_per_dram_time: 0.0,
            block_launch_ns: None,
            round_loads_limit: None,
        }
    }
}

impl HwConfig {
    /// Finds a shipped configuration by name, or reads the file at `name_or_path`. A value that
    /// looks like a path ([`super::looks_like_path`]) is only ever read as a file.
    pub fn load(name_or_path: &str) -> Result<HwConfig> {
        let path = Path::new(name_or_path);
        if super::looks_like_path(name_or_path) {
            if !path.exists() {
                let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
                let namesake = match SHIPPED.iter().find(|(n, _)| Some(*n) == stem.as_deref()) {
                    Some((n, _)) => {
                        format!(" (the shipped configuration of that name is --hw {n})")
                    }
                    None => String::new(),
                };
                return Err(Error::in_file(path, format!("no such file{namesake}")));
            }
            return HwConfig::parse(&crate::error::read_file(path)?, name_or_path);
        }
        if let Some((_, text)) = SHIPPED.iter().find(|(n, _)| *n == name_or_path) {
            return HwConfig::parse(text, &format!("hw-configs/{name_or_path}.toml"));
        }
        if !path.is_file() {
            let names: Vec<&str> = SHIPPED.iter().map(|(n, _)| *n).collect();
            return Err(Error::new(
                "--hw",
                format!(
                    "'{name_or_path}' is neither a shipped configuration{} ({}) nor a file",
                    super::did_you_mean(name_or_path, names.iter().copied()),
                    names.join(", ")
                ),
            ));
        }
        HwConfig::parse(&crate::error::read_file(path)?, name_or_path)
    }

    /// Parses and checks a configuration; `source_name` names it in errors.
    pub fn parse(text: &str, source_name: &str) -> Result<HwConfig> {
        let hw: HwConfig = crate::error::from_toml(text, source_name)?;
        hw.check().map_err(|m| Error::new(source_name, m))?;
        Ok(hw)
    }

    /// The same GPU with its L1 and L2 capacities multiplied by `l1_scale` and `l2_scale`
    /// (`sweep --l1-scale/--l2-scale`: oversubscription varied independently of the kernel). Sizes
    /// round to the nearest whole number of sets (per partition); the ways stay. A scale that is
    /// not a positive number, or leaves no whole set, is an error naming its option
    /// (`--l1-scale`, `--l2-scale`).
    pub fn with_cache_scale(&self, l1_scale: f64, l2_scale: f64) -> Result<HwConfig> {
        let source = format!("hw-configs/{}.toml", self.name);
        let scaled = |what: &str, size: u64, unit: u64, scale: f64| -> Result<u64> {
            let option = format!("--{}-scale", &what[..2]);
            if !(scale.is_finite() && scale > 0.0) {
                return Err(Error::new(
                    option,
                    format!(
                        "{scale} is no capacity factor: a cache scale must be a positive number (0.5 halves the {})",
                        what[..2].to_uppercase()
                    ),
                ));
            }
            let units = (size as f64 * scale / unit as f64).round();
            if units < 1.0 || units * unit as f64 > (1u64 << 40) as f64 {
                return Err(Error::new(
                    option,
                    format!(
                        "{what} of {size} B ({}) scaled by {scale} leaves no whole set (or is absurdly large)",
                        self.name
                    ),
                ));
            }
            Ok(units as u64 * unit)
        };
        let mut hw = self.clone();
        let l1_set = hw.l1.line_bytes as u64 * hw.l1.ways as u64;
        hw.l1.size_bytes = scaled("l1", hw.l1.size_bytes, l1_set, l1_scale)?;
        // A carve-out takes the same share of a scaled L1.
        for pick in &mut hw.l1.driver_carveouts {
            pick[1] = (pick[1] as f64 * l1_scale).round() as u64;
        }
        if let Some(ro) = hw.l1.read_only_cache_bytes {
            hw.l1.read_only_cache_bytes = Some(scaled("l1.read_only_cache", ro, l1_set, l1_scale)?);
        }
        let l2_unit = hw.l2.line_bytes as u64 * hw.l2.ways as u64 * hw.l2.partitions.max(1) as u64;
        hw.l2.size_bytes = scaled("l2", hw.l2.size_bytes, l2_unit, l2_scale)?;
        hw.check().map_err(|m| Error::new(&source, m))?;
        Ok(hw)
    }

    /// Checks that the numbers describe a buildable machine: the SM limits, both caches'
    /// geometries and policies, the split L2's partitions, the dispatch order and the allocation
    /// granularity, in that order (the first problem is the error).
    fn check(&self) -> std::result::Result<(), String> {
        self.timing.check()?;
        if let Some(p) = &self.partial_writeback {
            p.check()?;
        }
        if let Some(a) = &self.atomics {
            a.check()?;
        }
        if let Some(rate) = self.bandwidth.l2_partial_write_sectors_per_ns
            && !(rate.is_finite() && rate > 0.0)
        {
            return Err(
                "bandwidth.l2_partial_write_sectors_per_ns must be a positive number".into(),
            );
        }
        if let Some(rate) = self.bandwidth.l2_partial_write_requests_per_ns
            && !(rate.is_finite()
                && rate > 0.0
                && self.bandwidth.l2_partial_write_sectors_per_ns.is_some())
        {
            return Err(
                "bandwidth.l2_partial_write_requests_per_ns must be a positive number, beside l2_partial_write_sectors_per_ns".into(),
            );
        }
        if let Some(k) = self.bandwidth.l2_partial_write_overlap_exponent
            && !(k.is_finite() && k >= 1.0)
        {
            return Err(
                "bandwidth.l2_partial_write_overlap_exponent must be a number of at least 1 (1: the two times add)".into(),
            );
        }
        let b = &self.bandwidth;
        match (b.dram_read_gbs, b.dram_write_gbs, b.dram_copy_gbs) {
            (None, None, None) => {}
            (Some(read), Some(write), Some(copy)) => {
                if ![read, write, copy]
                    .iter()
                    .all(|r| r.is_finite() && *r > 0.0)
                {
                    return Err(
                        "bandwidth.dram_read_gbs, dram_write_gbs and dram_copy_gbs must be positive numbers"
                            .into(),
                    );
                }
                // the turnaround between the directions takes time: a copy is slower than
                // reads and writes at their own rates
                if 2.0 / copy <= 1.0 / read + 1.0 / write {
                    return Err(format!(
                        "bandwidth.dram_copy_gbs = {copy} must be below the rate of reads and writes at their own rates ({:.0} GB/s): the turnaround between them would take no time",
                        2.0 / (1.0 / read + 1.0 / write)
                    ));
                }
            }
            _ => {
                return Err(
                    "bandwidth.dram_read_gbs, dram_write_gbs and dram_copy_gbs go together: set all three or none"
                        .into(),
                );
            }
        }
        check_sm(&self.sm)?;
        check_cache(
            "l1",
            self.l1.size_bytes,
            self.l1.line_bytes,
            self.l1.sector_bytes,
            self.l1.ways,
            1,
        )?;
        self.l1.check_carveouts()?;
        self.l1.check_index()?;
        if self.l2.set_indexing == SetIndexing::XorMatrix {
            return Err(
                "l2.set_indexing = \"xor-matrix\" needs set_index_masks, which only [l1] has"
                    .into(),
            );
        }
        for (what, v) in [
            (
                "l1.missing_request_line_wavefronts",
                self.l1.missing_request_line_wavefronts,
            ),
            (
                "l1.partial_line_wavefronts",
                self.l1.partial_line_wavefronts,
            ),
            (
                "l1.in_flight_hit_wavefronts",
                self.l1.in_flight_hit_wavefronts,
            ),
            (
                "l1.wavefronts_per_special_register",
                self.l1.wavefronts_per_special_register,
            ),
            ("l1.wavefronts_per_shuffle", self.l1.wavefronts_per_shuffle),
            (
                "l1.wavefronts_per_predicated_off",
                self.l1.wavefronts_per_predicated_off,
            ),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!("{what} must be a number >= 0"));
            }
        }
        if !(self.l1.replay_block_loads.is_finite() && self.l1.replay_block_loads > 0.0) {
            return Err("l1.replay_block_loads must be a number > 0".into());
        }
        if let Some(share) = self.l1.replay_store_share
            && !(share.is_finite() && share > 0.0)
        {
            return Err("l1.replay_store_share must be a number > 0".into());
        }
        if !(1..=4096).contains(&self.l1.in_flight_hit_ticks) {
            return Err(format!(
                "l1.in_flight_hit_ticks = {}: must be 1 to 4096",
                self.l1.in_flight_hit_ticks
            ));
        }
        let l2 = &self.l2;
        if l2.partitions != 1 && l2.partitions != 2 {
            return Err(format!(
                "l2.partitions = {}: only 1 or 2 partitions are supported",
                l2.partitions
            ));
        }
        check_cache(
            "l2",
            l2.size_bytes,
            l2.line_bytes,
            l2.sector_bytes,
            l2.ways,
            l2.partitions,
        )?;
        self.check_replacement()?;
        self.check_fill_and_sizes()?;
        if l2.partitions == 1
            && (l2.partition_sms.is_some()
                || l2.home_hash.is_some()
                || l2.local_ways.is_some()
                || l2.far_read_extra_ns.is_some())
        {
            return Err(
                "l2.partition_sms, l2.home_hash, l2.local_ways and l2.far_read_extra_ns describe a split L2: set l2.partitions = 2 or remove them"
                    .to_string(),
            );
        }
        if let Some(ns) = l2.far_read_extra_ns
            && !(ns.is_finite() && ns >= 0.0)
        {
            return Err(format!(
                "l2.far_read_extra_ns = {ns} must be a number of nanoseconds, at least 0"
            ));
        }
        self.check_coalescer()?;
        if let Some(n) = l2.local_ways {
            if n == 0 || n > l2.ways {
                return Err(format!(
                    "l2.local_ways = {n} must be between 1 and the {} ways",
                    l2.ways
                ));
            }
            if !l2.replacement.allows_local_ways() {
                return Err("l2.local_ways needs l2.replacement = \"lru\" or \"plru\"".into());
            }
        }
        if let Some(n) = l2.dirty_ways {
            if n == 0 || n >= l2.ways {
                return Err(format!(
                    "l2.dirty_ways = {n} must be between 1 and {} (the ways less one)",
                    l2.ways - 1
                ));
            }
            if l2.replacement != Replacement::Lru {
                return Err("l2.dirty_ways needs l2.replacement = \"lru\"".into());
            }
        }
        if l2.partitions == 2 {
            check_split_l2(l2, self.sm.count)?;
        }
        check_schedule(&self.schedule, self.sm.count)?;
        if self
            .dram
            .capacity_gib
            .is_some_and(|c| !(c > 0.0 && c.is_finite()))
        {
            return Err("dram.capacity_gib must be positive".into());
        }
        if self.dram.allocation_granularity_bytes == 0
            || !self.dram.allocation_granularity_bytes.is_power_of_two()
        {
            return Err("dram.allocation_granularity_bytes must be a power of two".into());
        }
        Ok(())
    }

    /// The coalescer's survival points and the latencies its windows come from.
    fn check_coalescer(&self) -> std::result::Result<(), String> {
        let points = &self.l2.coalescer_survival;
        if points.is_empty() {
            return Ok(());
        }
        let (Some(l1), Some(l2)) = (self.l1.hit_latency_cycles, self.l2.hit_latency_cycles) else {
            return Err("l2.coalescer_survival needs l1.hit_latency_cycles and l2.hit_latency_cycles (its windows are the L2's latencies less the L1's)".into());
        };
        if !(l1.is_finite() && l1 > 0.0 && l2.is_finite() && l2 > l1) {
            return Err(format!(
                "l1.hit_latency_cycles = {l1} and l2.hit_latency_cycles = {l2} must be cycles, the L2's above the L1's"
            ));
        }
        if self.timing.dram_latency_cycles <= l2 {
            return Err(format!(
                "timing.dram_latency_cycles = {} must be above l2.hit_latency_cycles = {l2}",
                self.timing.dram_latency_cycles
            ));
        }
        for (i, [lines, share]) in points.iter().enumerate() {
            let rising = i == 0 || *lines > points[i - 1][0];
            if !(lines.fract() == 0.0 && (1.0..=32.0).contains(lines) && rising) {
                return Err(format!(
                    "l2.coalescer_survival: the lines of [{lines}, {share}] must be a whole number from 1 to 32, above the pair before"
                ));
            }
            if !(0.0..=1.0).contains(share) {
                return Err(format!(
                    "l2.coalescer_survival: the share of [{lines}, {share}] must be between 0 and 1"
                ));
            }
        }
        Ok(())
    }

    /// How long a read is on its way from the L1 to where it is served and back (the window in
    /// which an identical read of the same GPC joins it), ns, by where it is served: the near
    /// partition, the far one (`l2.far_read_extra_ns` longer), DRAM. `None` without a coalescer.
    pub fn coalescer_windows_ns(&self) -> Option<[f64; 3]> {
        if self.l2.coalescer_survival.is_empty() {
            return None;
        }
        let (l1, l2) = (self.l1.hit_latency_cycles?, self.l2.hit_latency_cycles?);
        let ghz = self.sm.base_clock_ghz.unwrap_or(self.sm.clock_ghz);
        let near = (l2 - l1) / ghz;
        Some([
            near,
            near + self.l2.far_read_extra_ns.unwrap_or(0.0),
            (self.timing.dram_latency_cycles - l1) / ghz,
        ])
    }

    /// Each cache's way count suits its replacement policy ([`Replacement::check_ways`]).
    fn check_replacement(&self) -> std::result::Result<(), String> {
        for (level, ways, policy) in [
            ("l1", self.l1.ways, self.l1.replacement),
            ("l2", self.l2.ways, self.l2.replacement),
        ] {
            // serde's name of a policy is its variant's, lowercased.
            let name = format!("{policy:?}").to_lowercase();
            policy
                .check_ways(ways)
                .map_err(|why| format!("{level}.replacement = \"{name}\" {why}"))?;
        }
        Ok(())
    }

    /// The L2 fill unit is whole sectors dividing the line, and both caches share the line and
    /// sector sizes.
    fn check_fill_and_sizes(&self) -> std::result::Result<(), String> {
        let l2 = &self.l2;
        if l2.fill_bytes < l2.sector_bytes
            || !l2.fill_bytes.is_multiple_of(l2.sector_bytes)
            || !l2.line_bytes.is_multiple_of(l2.fill_bytes)
        {
            return Err(format!(
                "l2.fill_bytes = {} must be a multiple of the sector ({}) that divides the line ({})",
                l2.fill_bytes, l2.sector_bytes, l2.line_bytes
            ));
        }
        if self.l1.line_bytes != l2.line_bytes || self.l1.sector_bytes != l2.sector_bytes {
            return Err("l1 and l2 must use the same line and sector sizes".into());
        }
        Ok(())
    }

    /// The L2 partition each SM is attached to (all 0 for a unified L2).
    pub fn near_partition_of_sms(&self) -> Vec<u8> {
        let mut near = vec![0u8; self.sm.count as usize];
        if let Some(ranges) = &self.l2.partition_sms {
            for (p, list) in ranges.iter().enumerate() {
                for [lo, hi] in list {
                    for sm in *lo..=*hi {
                        near[sm as usize] = p as u8;
                    }
                }
            }
        }
        near
    }

    /// The GPC of each SM: `schedule.gpc_sms` where given, else SMs numbered GPC by GPC.
    pub fn gpc_of_sms(&self) -> Vec<u32> {
        let sms = self.sm.count;
        if let Some(groups) = &self.schedule.gpc_sms {
            let mut gpc = vec![0; sms as usize];
            for (g, list) in groups.iter().enumerate() {
                for &sm in list {
                    gpc[sm as usize] = g as u32;
                }
            }
            return gpc;
        }
        let per_gpc = sms.div_ceil(self.schedule.gpcs.unwrap_or(1).max(1));
        (0..sms).map(|sm| sm / per_gpc).collect()
    }

    /// The order in which the first wave of blocks is spread over the SMs.
    pub fn dispatch_order(&self) -> Vec<u32> {
        if let Some(order) = &self.schedule.dispatch_order {
            return order.clone();
        }
        let sms = self.sm.count;
        let gpcs = self.schedule.gpcs.unwrap_or(1).max(1);
        // SMs are numbered GPC by GPC; each GPC's TPCs (SM pairs) are visited in rotation.
        let per_gpc = sms.div_ceil(gpcs);
        let mut order = Vec::with_capacity(sms as usize);
        let mut row = 0;
        while order.len() < sms as usize {
            for g in 0..gpcs {
                for k in 0..2 {
                    let sm = g * per_gpc + 2 * row + k;
                    if 2 * row + k < per_gpc && sm < sms {
                        order.push(sm);
                    }
                }
            }
            row += 1;
        }
        order
    }
}

/// The SM limits: all positive, 32-thread warps, at most 65535 SMs of at most 65536 threads, a
/// block no larger than an SM, clocks a GPU runs at ([`check_clock_ghz`]).
fn check_sm(s: &SmConfig) -> std::result::Result<(), String> {
    for (what, ghz) in [
        ("sm.clock_ghz", Some(s.clock_ghz)),
        ("sm.base_clock_ghz", s.base_clock_ghz),
    ] {
        if let Some(ghz) = ghz {
            check_clock_ghz(ghz).map_err(|m| format!("{what}: {m}"))?;
        }
    }
    for (what, v) in [
        ("sm.count", s.count),
        ("sm.warp_size", s.warp_size),
        ("sm.max_threads", s.max_threads),
        ("sm.max_blocks", s.max_blocks),
        ("sm.max_warps", s.max_warps),
        ("sm.max_threads_per_block", s.max_threads_per_block),
        ("sm.registers", s.registers),
        ("sm.register_alloc_unit", s.register_alloc_unit),
        ("sm.warp_alloc_granularity", s.warp_alloc_granularity),
        ("sm.shared_alloc_unit", s.shared_alloc_unit),
    ] {
        if v == 0 {
            return Err(format!("{what} must be positive"));
        }
    }
    if s.warp_size as usize != WARP_SIZE {
        return Err(format!(
            "sm.warp_size = {}: only {WARP_SIZE}-thread warps are supported",
            s.warp_size
        ));
    }
    if s.count > 65535 {
        return Err(format!("sm.count = {} is more than 65535", s.count));
    }
    if s.max_threads > 1 << 16 {
        return Err(format!(
            "sm.max_threads = {} is more than 65536 threads per SM",
            s.max_threads
        ));
    }
    if s.max_threads_per_block > s.max_threads {
        return Err(format!(
            "sm.max_threads_per_block = {} is more than the SM holds (sm.max_threads = {})",
            s.max_threads_per_block, s.max_threads
        ));
    }
    Ok(())
}

/// A split L2 (two partitions) of a GPU with `sms` SMs: a usable home hash, and every SM
/// attached to exactly one partition.
fn check_split_l2(l2: &L2Config, sms: u32) -> std::result::Result<(), String> {
    let Some(hash) = &l2.home_hash else {
        return Err("a split L2 (partitions = 2) needs l2.home_hash".into());
    };
    hash.mask()?;
    let Some(ranges) = &l2.partition_sms else {
        return Err("a split L2 (partitions = 2) needs l2.partition_sms".into());
    };
    if ranges.len() != 2 {
        return Err("l2.partition_sms must list SM ranges for each of the 2 partitions".into());
    }
    let mut owner = vec![None; sms as usize];
    for (p, list) in ranges.iter().enumerate() {
        for [lo, hi] in list {
            if lo > hi || *hi >= sms {
                return Err(format!(
                    "l2.partition_sms: range [{lo}, {hi}] is not within 0..{sms}"
                ));
            }
            for sm in *lo..=*hi {
                if owner[sm as usize].replace(p).is_some() {
                    return Err(format!(
                        "l2.partition_sms: SM {sm} is attached to two partitions"
                    ));
                }
            }
        }
    }
    if let Some(sm) = owner.iter().position(|o| o.is_none()) {
        return Err(format!(
            "l2.partition_sms: SM {sm} is attached to no partition"
        ));
    }
    Ok(())
}

/// The most turns per warp an SM may sit out when a block ends (a block issues a few dozen
/// turns per warp; more would stall the launch rather than model a block's exit).
const MAX_TURNOVER_TURNS: u32 = 64;

/// The dispatch order of a GPU with `sms` SMs: a permutation of them if given, a GPC count
/// between 1 and the SM count, chances below 1 and a bounded turnover.
fn check_schedule(schedule: &ScheduleConfig, sms: u32) -> std::result::Result<(), String> {
    if let Some(order) = &schedule.dispatch_order {
        let mut seen = vec![false; sms as usize];
        if order.len() != sms as usize {
            return Err(format!(
                "schedule.dispatch_order lists {} SMs, the GPU has {sms}",
                order.len()
            ));
        }
        for &sm in order {
            if sm >= sms || std::mem::replace(&mut seen[sm as usize], true) {
                return Err(format!(
                    "schedule.dispatch_order: SM {sm} is out of range or repeated"
                ));
            }
        }
    }
    if let Some(groups) = &schedule.gpc_sms {
        let mut seen = vec![false; sms as usize];
        for &sm in groups.iter().flatten() {
            if sm >= sms || std::mem::replace(&mut seen[sm as usize], true) {
                return Err(format!(
                    "schedule.gpc_sms: SM {sm} is out of range or in two GPCs"
                ));
            }
        }
        if let Some(sm) = seen.iter().position(|&s| !s) {
            return Err(format!("schedule.gpc_sms: SM {sm} is in no GPC"));
        }
    }
    if let Some(w) = schedule.gpc_window_ns
        && !(w.is_finite() && w >= 0.0)
    {
        return Err(format!(
            "schedule.gpc_window_ns = {w} must be a number of nanoseconds, at least 0"
        ));
    }
    if let Some(d) = schedule.block_drift
        && !(d.is_finite() && (0.0..=1.0).contains(&d))
    {
        return Err(format!(
            "schedule.block_drift = {d} must be a share of a block's life, between 0 and 1"
        ));
    }
    if let Some(g) = schedule.gpcs
        && (g == 0 || g > sms)
    {
        return Err(format!(
            "schedule.gpcs = {g} must be between 1 and the SM count"
        ));
    }
    for (key, value) in [
        ("turn_skip", schedule.turn_skip),
        ("warp_drift", schedule.warp_drift),
    ] {
        if let Some(p) = value
            && !(0.0..1.0).contains(&p)
        {
            return Err(format!(
                "schedule.{key} = {p} must be at least 0 and below 1"
            ));
        }
    }
    if let Some(t) = schedule.turnover_turns
        && t > MAX_TURNOVER_TURNS
    {
        return Err(format!(
            "schedule.turnover_turns = {t} must be at most {MAX_TURNOVER_TURNS}"
        ));
    }
    let (skip, drift) = (
        schedule.turn_skip.unwrap_or(0.0),
        schedule.warp_drift.unwrap_or(0.0),
    );
    if skip + drift >= 1.0 {
        return Err(format!(
            "schedule.turn_skip + schedule.warp_drift = {} must be below 1",
            skip + drift
        ));
    }
    Ok(())
}

/// The geometry of one cache `level`: power-of-two 128 B lines of 32 B sectors, positive ways
/// and a size of whole sets in each of its `partitions`.
fn check_cache(
    level: &str,
    size: u64,
    line: u32,
    sector: u32,
    ways: u32,
    partitions: u32,
) -> std::result::Result<(), String> {
    if line == 0
        || sector == 0
        || !line.is_power_of_two()
        || !sector.is_power_of_two()
        || !line.is_multiple_of(sector)
    {
        return Err(format!(
            "{level}: line ({line} B) and sector ({sector} B) must be powers of two, the line a multiple of the sector"
        ));
    }
    if line / sector > 8 {
        return Err(format!("{level}: at most 8 sectors per line are supported"));
    }
    if line != 128 || sector != 32 {
        return Err(format!(
            "{level}: only 128-byte lines of 32-byte sectors are supported (got {line}/{sector})"
        ));
    }
    if ways == 0 {
        return Err(format!("{level}.ways must be positive"));
    }
    let per_partition = size / partitions as u64;
    let set_bytes = line as u64 * ways as u64;
    if size == 0
        || !per_partition.is_multiple_of(set_bytes)
        || !size.is_multiple_of(partitions as u64)
    {
        return Err(format!(
            "{level}: size {size} B is not a positive whole number of sets of {ways} ways × {line} B{}",
            if partitions > 1 {
                format!(" in each of {partitions} partitions")
            } else {
                String::new()
            }
        ));
    }
    Ok(())
}

/// The SM clocks, in GHz, that any GPU this simulator describes runs at (the shipped configs
/// span 0.706–1.98 GHz): a clock outside is a number in another unit, not a GPU.
pub const PLAUSIBLE_CLOCK_GHZ: (f64, f64) = (0.1, 5.0);

/// Whether `ghz` is a plausible SM clock in GHz ([`PLAUSIBLE_CLOCK_GHZ`]); if not, why, with
/// the unit the number was probably written in (`1500` → "did you mean 1.5 GHz (1500 MHz)?").
pub fn check_clock_ghz(ghz: f64) -> std::result::Result<(), String> {
    let (lo, hi) = PLAUSIBLE_CLOCK_GHZ;
    let plausible = |v: f64| v.is_finite() && (lo..=hi).contains(&v);
    if plausible(ghz) {
        return Ok(());
    }
    let meant = [(1e3, "MHz"), (1e6, "kHz"), (1e9, "Hz")]
        .into_iter()
        .find(|&(per_ghz, _)| plausible(ghz / per_ghz))
        .map_or(String::new(), |(per_ghz, unit)| {
            format!("; did you mean {} GHz ({ghz} {unit})?", ghz / per_ghz)
        });
    Err(format!(
        "{ghz} GHz is no GPU clock (clocks are given in GHz, between {lo} and {hi}){meant}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_scaling_rounds_to_whole_sets() {
        let hw = HwConfig::load("h200").unwrap();
        let half = hw.with_cache_scale(1.0, 0.5).unwrap();
        assert_eq!(half.l2.size_bytes * 2, hw.l2.size_bytes);
        assert_eq!(half.l1.size_bytes, hw.l1.size_bytes);
        // One L1 set is ways × 128 B; a scale that leaves a third of a set rounds to zero sets.
        let set = (hw.l1.ways * hw.l1.line_bytes) as f64;
        let tiny = set / 3.0 / hw.l1.size_bytes as f64;
        assert!(hw.with_cache_scale(tiny, 1.0).is_err());
        let e = hw.with_cache_scale(1.0, -1.0).unwrap_err().to_string();
        assert!(
            e.starts_with("--l2-scale: -1 is no capacity factor") && e.contains("positive"),
            "{e}"
        );
        for bad in [0.0, f64::NAN, f64::INFINITY] {
            let e = hw.with_cache_scale(bad, 1.0).unwrap_err();
            assert_eq!(e.source_name, "--l1-scale", "{e}");
        }
        // 1.3 × the L1 rounds to the nearest whole number of sets.
        let l1 = hw.with_cache_scale(1.3, 1.0).unwrap().l1.size_bytes as f64;
        assert!(
            (l1 / set).fract() == 0.0 && (l1 - 1.3 * hw.l1.size_bytes as f64).abs() <= set / 2.0
        );
    }

    #[test]
    fn partly_written_sectors_cost_the_dram_along_a_ramp_of_those_waiting() {
        let p = PartialWritebackConfig {
            onset_waiting_sectors: 40_000.0,
            saturation_waiting_sectors: 140_000.0,
            sectors_per_ns: 20.0,
            within_block_weight: 0.25,
        };
        // 2 M sectors left partly written, 1.2 M of them by two blocks: 1.2 M + 0.25 x 0.8 M =
        // 1.4 M at 20 per ns, 70 us in full; nothing at or below the onset, 60 % of it 60 000
        // above the onset of a 100 000 span, all of it from the saturation on.
        for (waiting, us) in [
            (0.0, 0.0),
            (40_000.0, 0.0),
            (100_000.0, 42.0),
            (140_000.0, 70.0),
            (1e7, 70.0),
        ] {
            assert!(
                (p.seconds(2e6, 1.2e6, waiting) * 1e6 - us).abs() < 1e-9,
                "{waiting}"
            );
        }
    }

    #[test]
    fn a_partial_writeback_table_that_cannot_ramp_is_refused() {
        let text = SHIPPED.iter().find(|(n, _)| *n == "h200").unwrap().1;
        for (table, message) in [
            (
                "onset_waiting_sectors = 9\nsaturation_waiting_sectors = 9\nwithin_block_weight = 0.2\nsectors_per_ns = 5",
                "partial_writeback.onset_waiting_sectors must be a number >= 0 below",
            ),
            (
                "onset_waiting_sectors = 0\nsaturation_waiting_sectors = 9\nwithin_block_weight = 1.5\nsectors_per_ns = 5",
                "partial_writeback.within_block_weight must be a fraction",
            ),
            (
                "onset_waiting_sectors = 0\nsaturation_waiting_sectors = 9\nwithin_block_weight = 0.2\nsectors_per_ns = 0",
                "partial_writeback.sectors_per_ns must be a positive number",
            ),
        ] {
            let cut = text.find("[partial_writeback]").unwrap_or(text.len());
            let mut bad = text[..cut].to_string();
            if let Some(next) = text[cut..].find("\n[").filter(|_| cut < text.len()) {
                bad.push_str(&text[cut + next..]);
            }
            bad.push_str(&format!("\n[partial_writeback]\n{table}\n"));
            let e = HwConfig::parse(&bad, "bad.toml").unwrap_err().to_string();
            assert!(e.starts_with("bad.toml: ") && e.contains(message), "{e}");
        }
    }

    #[test]
    fn the_sms_atomic_cycles_are_requests_and_sectors_at_their_rates_and_none_without_the_keys() {
        let h200 = HwConfig::load("h200").unwrap().atomics.unwrap();
        // 1000 requests of 4 sectors: 1000 x 2.47 + 4000 x 1.12 cycles.
        let cycles = h200.sm_cycles(1000.0, 4000.0).unwrap();
        assert!((cycles - 6950.0).abs() < 1e-9, "{cycles}");
        let bare = AtomicsConfig {
            sm_request_cycles: None,
            sm_sector_cycles: None,
            ..h200
        };
        assert_eq!(bare.sm_cycles(1000.0, 4000.0), None);
    }

    #[test]
    fn an_atomics_table_without_slices_or_with_a_negative_time_is_refused() {
        let text = SHIPPED.iter().find(|(n, _)| *n == "h200").unwrap().1;
        let good = "slices = 94\nslice_bytes = 256\nrequest_ns = 0.2\nsector_ns = 0.55\nwide_sector_ns = 1.1\nfloat_update_ns = 1.8";
        for (from, to, message) in [
            (
                "slices = 94",
                "slices = 0",
                "atomics.slices must be at least 1",
            ),
            (
                "slice_bytes = 256",
                "slice_bytes = 100",
                "atomics.slice_bytes must be a positive multiple of 128",
            ),
            (
                "float_update_ns = 1.8",
                "float_update_ns = -1",
                "atomics.request_ns, sector_ns, wide_sector_ns, float_update_ns, sm_request_cycles and sm_sector_cycles must be numbers >= 0",
            ),
            (
                "float_update_ns = 1.8",
                "float_update_ns = 1.8\nsm_sector_cycles = -1",
                "sm_request_cycles and sm_sector_cycles must be numbers >= 0",
            ),
            (
                "float_update_ns = 1.8",
                "float_update_ns = 1.8\nsm_request_cycles = 2.5",
                "atomics.sm_request_cycles and sm_sector_cycles go together: give both or neither",
            ),
        ] {
            let cut = text.find("[atomics]").unwrap();
            let next = text[cut..].find("\n[").unwrap();
            let bad = format!(
                "{}{}\n[atomics]\n{}\n",
                &text[..cut],
                &text[cut + next..],
                good.replace(from, to)
            );
            let e = HwConfig::parse(&bad, "bad.toml").unwrap_err().to_string();
            assert!(e.starts_with("bad.toml: ") && e.contains(message), "{e}");
        }
    }

    #[test]
    fn the_special_register_cost_is_read_under_its_former_name_too() {
        let text = SHIPPED.iter().find(|(n, _)| *n == "h200").unwrap().1;
        let at = text.find("wavefronts_per_special_register = 1.0").unwrap();
        let renamed = format!(
            "{}wavefronts_per_block_index = 2.5{}",
            &text[..at],
            &text[at + "wavefronts_per_special_register = 1.0".len()..]
        );
        let hw = HwConfig::parse(&renamed, "old.toml").unwrap();
        assert_eq!(hw.l1.wavefronts_per_special_register, 2.5);
        let both = renamed.replace(
            "wavefronts_per_block_index = 2.5",
            "wavefronts_per_block_index = 2.5\nwavefronts_per_special_register = 1.0",
        );
        let e = HwConfig::parse(&both, "both.toml").unwrap_err().to_string();
        assert!(
            e.starts_with("both.toml") && e.contains("wavefronts_per_special_register"),
            "{e}"
        );
    }

    #[test]
    fn clocks_in_megahertz_are_refused_with_the_unit_meant() {
        let text = SHIPPED.iter().find(|(n, _)| *n == "h200").unwrap().1;
        for (field, shipped) in [
            ("clock_ghz", "clock_ghz = 1.98"),
            ("base_clock_ghz", "base_clock_ghz = 1.50"),
        ] {
            assert!(text.contains(shipped), "{shipped}");
            let mhz = text.replacen(shipped, &format!("{field} = 1500"), 1);
            let e = HwConfig::parse(&mhz, "mhz.toml").unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("mhz.toml: sm.{field}: 1500 GHz is no GPU clock"))
                    && e.ends_with("did you mean 1.5 GHz (1500 MHz)?"),
                "{e}"
            );
        }
    }

    #[test]
    fn every_shipped_config_parses() {
        for (name, text) in SHIPPED {
            let hw = HwConfig::parse(text, name).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(&hw.name, name);
            assert_eq!(hw.dispatch_order().len(), hw.sm.count as usize);
        }
    }

    #[test]
    fn h200_numbers_match_the_device_query() {
        let hw = HwConfig::load("h200").unwrap();
        assert_eq!(hw.sm.count, 132);
        assert_eq!(hw.l2.size_bytes, 62_914_560);
        assert_eq!(hw.l2.partitions, 2);
        assert_eq!(hw.sm.shared_memory_bytes, 233_472);
        let near = hw.near_partition_of_sms();
        assert!(near.contains(&0) && near.contains(&1));
    }

    #[test]
    fn a_turn_skip_or_warp_drift_outside_0_to_1_names_the_key() {
        let hw = HwConfig::load("h200").unwrap();
        type Set = fn(&mut ScheduleConfig, Option<f64>);
        let keys: [(&str, Set); 2] = [
            ("schedule.turn_skip", |s, p| s.turn_skip = p),
            ("schedule.warp_drift", |s, p| s.warp_drift = p),
        ];
        for (key, set) in keys {
            for bad in [-0.1, 1.0, f64::NAN] {
                let mut schedule = hw.schedule.clone();
                set(&mut schedule, Some(bad));
                let err = check_schedule(&schedule, hw.sm.count).unwrap_err();
                assert!(err.contains(key), "{err}");
            }
            let mut schedule = hw.schedule.clone();
            set(&mut schedule, Some(0.0));
            assert!(check_schedule(&schedule, hw.sm.count).is_ok(), "{key}");
        }
    }

    #[test]
    fn a_turn_skip_and_warp_drift_summing_to_1_or_more_name_both_keys() {
        let hw = HwConfig::load("h200").unwrap();
        let schedule = ScheduleConfig {
            turn_skip: Some(0.5),
            warp_drift: Some(0.5),
            ..hw.schedule.clone()
        };
        let err = check_schedule(&schedule, hw.sm.count).unwrap_err();
        assert!(err.contains("turn_skip + schedule.warp_drift"), "{err}");
        let schedule = ScheduleConfig {
            turn_skip: Some(0.02),
            warp_drift: Some(0.2),
            ..hw.schedule.clone()
        };
        assert!(check_schedule(&schedule, hw.sm.count).is_ok());
    }

    #[test]
    fn a_turnover_of_more_than_64_turns_names_the_key_and_the_limit() {
        let hw = HwConfig::load("h200").unwrap();
        assert_eq!(hw.schedule.turnover_turns, Some(1));
        for (turns, ok) in [(0, true), (64, true), (65, false)] {
            let schedule = ScheduleConfig {
                turnover_turns: Some(turns),
                ..hw.schedule.clone()
            };
            match check_schedule(&schedule, hw.sm.count) {
                Ok(()) => assert!(ok, "{turns} accepted"),
                Err(e) => {
                    assert!(!ok, "{turns}: {e}");
                    assert_eq!(e, "schedule.turnover_turns = 65 must be at most 64");
                }
            }
        }
    }

    #[test]
    fn a_far_read_latency_must_be_nanoseconds_of_a_split_l2() {
        let hw = HwConfig::load("h100-sxm").unwrap();
        assert_eq!(hw.l2.far_read_extra_ns, Some(92.0));
        for (ns, ok) in [
            (0.0, true),
            (92.0, true),
            (-1.0, false),
            (f64::INFINITY, false),
        ] {
            let mut bad = hw.clone();
            bad.l2.far_read_extra_ns = Some(ns);
            match bad.check() {
                Ok(()) => assert!(ok, "{ns}"),
                Err(e) => {
                    assert!(!ok, "{ns}: {e}");
                    assert_eq!(
                        e,
                        format!(
                            "l2.far_read_extra_ns = {ns} must be a number of nanoseconds, at least 0"
                        )
                    );
                }
            }
        }
        let mut one = HwConfig::load("v100").unwrap();
        one.l2.far_read_extra_ns = Some(92.0);
        assert!(one.check().unwrap_err().contains("describe a split L2"));
    }

    #[test]
    fn the_coalescer_s_share_is_interpolated_over_log2_lines_and_held_beyond_the_ends() {
        let hw = HwConfig::load("h100-sxm").unwrap();
        let share = |lines| hw.l2.coalescer_share(lines);
        assert_eq!(share(2), 0.982);
        assert_eq!(share(1), 0.982);
        assert_eq!(share(8), 0.86);
        // 4 lines: halfway from 2 to 8 in log2.
        assert!((share(4) - (0.982 + 0.86) / 2.0).abs() < 1e-12);
        assert_eq!(share(32), 0.164);
        assert_eq!(share(255), 0.164);
        let mut none = hw.clone();
        none.l2.coalescer_survival.clear();
        assert_eq!(none.l2.coalescer_share(2), 0.0);
        assert_eq!(none.coalescer_windows_ns(), None);
    }

    #[test]
    fn the_coalescer_s_windows_are_the_measured_latencies_less_the_l1_s() {
        let hw = HwConfig::load("h100-sxm").unwrap();
        let [near, far, dram] = hw.coalescer_windows_ns().unwrap();
        // 248 and 576 cycles less 32, at the base clock of 1.58 GHz; far 92 ns longer.
        assert!((near - 216.0 / 1.58).abs() < 1e-9);
        assert!((far - near - 92.0).abs() < 1e-9);
        assert!((dram - 544.0 / 1.58).abs() < 1e-9);
    }

    #[test]
    fn a_coalescer_needs_its_latencies_and_lines_and_shares_in_range() {
        let hw = HwConfig::load("h200").unwrap();
        assert!(hw.check().is_ok());
        let mut no_l1 = hw.clone();
        no_l1.l1.hit_latency_cycles = None;
        assert!(
            no_l1
                .check()
                .unwrap_err()
                .contains("needs l1.hit_latency_cycles")
        );
        let mut slow_l1 = hw.clone();
        slow_l1.l1.hit_latency_cycles = Some(300.0);
        assert!(
            slow_l1
                .check()
                .unwrap_err()
                .contains("the L2's above the L1's")
        );
        for (points, fault) in [
            (vec![[8.0, 0.9], [2.0, 0.9]], "above the pair before"),
            (vec![[0.0, 0.9]], "from 1 to 32"),
            (vec![[64.0, 0.9]], "from 1 to 32"),
            (vec![[2.5, 0.9]], "whole number"),
            (vec![[2.0, 1.5]], "between 0 and 1"),
        ] {
            let mut bad = hw.clone();
            bad.l2.coalescer_survival = points;
            let e = bad.check().unwrap_err();
            assert!(
                e.contains(fault) && e.starts_with("l2.coalescer_survival"),
                "{e}"
            );
        }
    }

    #[test]
    fn a_block_drift_must_be_a_share_of_a_blocks_life() {
        let hw = HwConfig::load("h200").unwrap();
        assert_eq!(hw.schedule.block_drift, Some(0.093));
        for (drift, ok) in [
            (0.0, true),
            (0.5, true),
            (1.0, true),
            (-0.1, false),
            (1.5, false),
        ] {
            let mut bad = hw.clone();
            bad.schedule.block_drift = Some(drift);
            match bad.check() {
                Ok(()) => assert!(ok, "{drift}"),
                Err(e) => assert_eq!(
                    (ok, e),
                    (
                        false,
                        format!(
                            "schedule.block_drift = {drift} must be a share of a block's life, between 0 and 1"
                        )
                    )
                ),
            }
        }
    }

    #[test]
    fn gpcs_that_miss_or_repeat_an_sm_or_a_negative_window_name_the_key() {
        let hw = HwConfig::load("h200").unwrap();
        let gpcs = hw.schedule.gpc_sms.clone().unwrap();
        assert_eq!(gpcs.len(), 8);
        let mut missing = gpcs.clone();
        missing[7].pop();
        let mut twice = gpcs.clone();
        twice[0].push(2);
        let mut beyond = gpcs.clone();
        beyond[0].push(132);
        for (groups, says) in [
            (missing, "SM 123 is in no GPC"),
            (twice, "SM 2 is out of range or in two GPCs"),
            (beyond, "SM 132 is out of range or in two GPCs"),
        ] {
            let schedule = ScheduleConfig {
                gpc_sms: Some(groups),
                ..hw.schedule.clone()
            };
            let err = check_schedule(&schedule, hw.sm.count).unwrap_err();
            assert_eq!(err, format!("schedule.gpc_sms: {says}"));
        }
        for (window, ok) in [(0.0, true), (4.5, true), (-1.0, false), (f64::NAN, false)] {
            let schedule = ScheduleConfig {
                gpc_window_ns: Some(window),
                ..hw.schedule.clone()
            };
            let checked = check_schedule(&schedule, hw.sm.count);
            assert_eq!(checked.is_ok(), ok, "{window}: {checked:?}");
        }
    }

    #[test]
    fn without_gpc_sms_the_sms_are_numbered_gpc_by_gpc() {
        let mut hw = HwConfig::load("a100-40gb").unwrap();
        hw.sm.count = 8;
        hw.schedule = ScheduleConfig {
            gpc_sms: None,
            gpcs: Some(3),
            ..hw.schedule
        };
        assert_eq!(hw.gpc_of_sms(), vec![0, 0, 0, 1, 1, 1, 2, 2]);
        hw.schedule.gpc_sms = Some(vec![vec![7, 0], vec![1, 2, 3, 4, 5, 6]]);
        assert_eq!(hw.gpc_of_sms(), vec![0, 1, 1, 1, 1, 1, 1, 0]);
    }

    #[test]
    fn generated_dispatch_order_rotates_tpc_pairs_over_gpcs() {
        let mut hw = HwConfig::load("a100-40gb").unwrap();
        hw.sm.count = 8;
        hw.schedule = ScheduleConfig {
            dispatch_order: None,
            gpcs: Some(2),
            ..hw.schedule
        };
        assert_eq!(hw.dispatch_order(), vec![0, 1, 4, 5, 2, 3, 6, 7]);
    }

    #[test]
    fn impossible_geometry_is_rejected_with_the_file_name() {
        let text = include_str!("../../hw-configs/h200.toml").replace(
            "ways = 16                         # [ways]",
            "ways = 7 # [ways]",
        );
        assert!(
            text.contains("ways = 7 #"),
            "the L2's ways line of h200.toml moved"
        );
        let err = HwConfig::parse(&text, "bad.toml").unwrap_err();
        assert_eq!(err.source_name, "bad.toml");
        assert!(err.message.contains("l2: size"), "{}", err.message);
    }

    #[test]
    fn a_home_hash_is_one_form_of_bits_below_63_each_listed_once() {
        let h200 = include_str!("../../hw-configs/h200.toml");
        let shipped =
            "home_hash = { address_bits = [12, 13, 15, 17, 19, 21, 22, 23, 24, 25, 26, 27] }";
        assert!(h200.contains(shipped));
        for (hash, says) in [
            ("{ address_bits = [12, 13, 12] }", "lists bit 12 twice"),
            ("{ address_bits = [12, 63] }", "bit 63 is not below bit 63"),
            ("{ address_bits = [] }", "is empty"),
            (
                "{ low_bit = 12, bits = 3, address_bits = [14] }",
                "either low_bit and bits",
            ),
            ("{ low_bit = 12 }", "either low_bit and bits"),
            ("{ low_bit = 60, bits = 4 }", "between 1 and 63 bits"),
        ] {
            let text = h200.replace(shipped, &format!("home_hash = {hash}"));
            let err = HwConfig::parse(&text, "bad.toml").unwrap_err();
            assert!(err.message.contains(says), "{hash}: {}", err.message);
        }
        let contiguous = h200.replace(shipped, "home_hash = { low_bit = 12, bits = 3 }");
        let hw = HwConfig::parse(&contiguous, "ok.toml").unwrap();
        assert_eq!(hw.l2.home_hash.unwrap().mask(), Ok(0b111 << 12));
    }

    /// `text` (h200.toml, perhaps edited) with its L2's replacement policy set to `policy`.
    fn with_l2_policy(text: &str, policy: &str) -> String {
        let shipped = "replacement = \"lru\"               # [ways]";
        assert!(
            text.contains(shipped),
            "the L2's policy line of h200.toml moved"
        );
        // The dirty budget needs LRU: the other policies go without it.
        let text: String = text
            .lines()
            .filter(|l| policy == "lru" || !l.starts_with("dirty_ways"))
            .map(|l| format!("{l}\n"))
            .collect();
        text.replace(shipped, &format!("replacement = \"{policy}\" # [ways]"))
    }

    #[test]
    fn set_index_masks_stay_below_the_hashed_bits_and_only_the_l1_takes_them() {
        let h200 = include_str!("../../hw-configs/h200.toml");
        let err = |text: String| HwConfig::parse(&text, "h200.toml").unwrap_err().to_string();
        let hashed = "set_index_hashed_from_bit = 18";
        assert!(
            h200.contains(hashed),
            "the L1's hashed-bit line of h200.toml moved"
        );
        let low = h200.replace(hashed, "set_index_hashed_from_bit = 16");
        assert!(err(low).contains("reaches the hashed bits"));
        let indexing = "set_indexing = \"xor-fold\"         # no conflict";
        assert!(
            h200.contains(indexing),
            "the L1's indexing line of h200.toml moved"
        );
        let matrix = h200.replace(indexing, "set_indexing = \"xor-matrix\" # no conflict");
        assert!(HwConfig::parse(&matrix, "h200.toml").is_ok());
        let l2 = matrix.replace(
            "set_indexing = \"balanced\"",
            "set_indexing = \"xor-matrix\"",
        );
        assert!(err(l2).contains("only [l1] has"));
    }

    #[test]
    fn dirty_ways_leave_a_way_clean_and_need_lru() {
        let h200: String = include_str!("../../hw-configs/h200.toml")
            .lines()
            .filter(|l| !l.starts_with("dirty_ways"))
            .map(|l| format!("{l}\n"))
            .collect();
        let anchor = "[l2]\n";
        assert!(h200.contains(anchor));
        let with = |line: &str| h200.replacen(anchor, &format!("{anchor}{line}\n"), 1);
        for (line, says) in [
            ("dirty_ways = 0", "between 1 and 15"),
            ("dirty_ways = 16", "between 1 and 15"),
        ] {
            let err = HwConfig::parse(&with(line), "bad.toml").unwrap_err();
            assert!(err.message.contains(says), "{line}: {}", err.message);
        }
        let plru =
            with("dirty_ways = 7").replace("replacement = \"lru\"", "replacement = \"plru\"");
        let err = HwConfig::parse(&plru, "bad.toml").unwrap_err();
        assert!(
            err.message.contains("needs l2.replacement"),
            "{}",
            err.message
        );
        let hw = HwConfig::parse(&with("dirty_ways = 7"), "ok.toml").unwrap();
        assert_eq!(hw.l2.dirty_ways, Some(7));
        let without = HwConfig::parse(&h200, "ok.toml").unwrap();
        assert_eq!(without.l2.dirty_ways, None);
    }

    #[test]
    fn local_ways_fit_the_set_a_recency_policy_and_a_split_l2() {
        let h200 = include_str!("../../hw-configs/h200.toml");
        let anchor = "[l2]\n";
        assert!(h200.contains(anchor));
        let with = |line: &str| h200.replacen(anchor, &format!("{anchor}{line}\n"), 1);
        for (line, says) in [
            ("local_ways = 0", "between 1 and the 16 ways"),
            ("local_ways = 17", "between 1 and the 16 ways"),
        ] {
            let err = HwConfig::parse(&with(line), "bad.toml").unwrap_err();
            assert!(err.message.contains(says), "{line}: {}", err.message);
        }
        let srrip = with_l2_policy(&with("local_ways = 11"), "srrip");
        let err = HwConfig::parse(&srrip, "bad.toml").unwrap_err();
        assert!(
            err.message.contains("\"lru\" or \"plru\""),
            "{}",
            err.message
        );
        let hw = HwConfig::parse(&with("local_ways = 11"), "ok.toml").unwrap();
        assert_eq!(hw.l2.local_ways, Some(11));
        let unified = include_str!("../../hw-configs/v100.toml").replacen(
            "[l2]\n",
            "[l2]\nlocal_ways = 8\n",
            1,
        );
        let err = HwConfig::parse(&unified, "bad.toml").unwrap_err();
        assert!(err.message.contains("split L2"), "{}", err.message);
    }

    #[test]
    fn the_driver_carve_out_takes_its_excess_over_the_smallest_out_of_the_l1() {
        let h200 = include_str!("../../hw-configs/h200.toml");
        let shipped = "driver_carveouts = [[3, 8192], [7, 16384], [20, 32768], [32, 65536]]";
        assert!(
            h200.contains(shipped),
            "the carve-out line of h200.toml moved"
        );
        let hw = HwConfig::parse(h200, "h200.toml").unwrap();
        let kib = |blocks: u32, shared: u64| hw.l1.size_for(blocks, shared) / 1024;
        assert_eq!(
            [kib(2, 2048), kib(4, 4096), kib(8, 8192), kib(32, 32768)],
            [248, 240, 224, 192]
        );
        // Blocks needing more shared memory than the pick get at least what they need.
        assert_eq!(kib(2, 40 * 1024), 216);
        // More blocks than the table lists take its last pick.
        assert_eq!(kib(64, 0), 192);
        // A scaled L1 loses the same share: half of 224 KiB, rounded to whole 2 KiB sets.
        assert_eq!(
            hw.with_cache_scale(0.5, 1.0).unwrap().l1.size_for(8, 8192),
            112 * 1024
        );
        for (line, says) in [
            (
                "driver_carveouts = [[3, 8192], [3, 16384]]",
                "increase in both",
            ),
            (
                "driver_carveouts = [[3, 16384], [7, 8192]]",
                "increase in both",
            ),
            ("driver_carveouts = [[0, 8192]]", "blocks > 0"),
            (
                "driver_carveouts = [[3, 0], [7, 300000]]",
                "less than one set",
            ),
        ] {
            let err = HwConfig::parse(&h200.replace(shipped, line), "bad.toml").unwrap_err();
            assert!(err.message.contains(says), "{line}: {}", err.message);
        }
    }

    #[test]
    fn the_replays_store_share_is_checked_and_absent_means_always_in_full() {
        let h200 = include_str!("../../hw-configs/h200.toml");
        let shipped = "replay_store_share = 0.05 ";
        assert!(h200.contains(shipped));
        for bad in ["replay_store_share = 0 ", "replay_store_share = -0.05 "] {
            let err = HwConfig::parse(&h200.replace(shipped, bad), "bad.toml").unwrap_err();
            assert!(
                err.message.contains("l1.replay_store_share"),
                "{bad}: {}",
                err.message
            );
        }
        let without = HwConfig::parse(&h200.replace(shipped, "# "), "h200.toml").unwrap();
        assert_eq!(without.l1.replay_store_share, None);
        assert_eq!(
            HwConfig::load("h200").unwrap().l1.replay_store_share,
            Some(0.05)
        );
    }

    #[test]
    fn timing_constants_are_checked_and_default_where_absent() {
        let h200 = include_str!("../../hw-configs/h200.toml");
        for (from, to, says) in [
            (
                "block_turnover_cycles = 1500 ",
                "block_turnover_cycles = -1 ",
                "timing.block_turnover_cycles",
            ),
            (
                "barrier_cycles = 100 ",
                "barrier_cycles = -1 ",
                "timing.barrier_cycles",
            ),
            (
                "dram_latency_cycles = 535 ",
                "dram_latency_cycles = 0 ",
                "timing.dram_latency_cycles",
            ),
            (
                "launch_overhead_us = 1.84 ",
                "launch_overhead_us = -1 ",
                "timing.launch_overhead_us",
            ),
            (
                "block_launch_ns = 0.61 ",
                "block_launch_ns = 0 ",
                "timing.block_launch_ns",
            ),
            (
                "latency_per_load_factor = 0.15 ",
                "latency_per_load_factor = -0.2 ",
                "timing.latency_per_load_factor",
            ),
            (
                "l1_busy_per_dram_time = 0.2 ",
                "l1_busy_per_dram_time = -0.2 ",
                "timing.l1_busy_per_dram_time",
            ),
            (
                "round_loads_limit = 6 ",
                "round_loads_limit = 0 ",
                "timing.round_loads_limit",
            ),
            (
                "l2_partial_write_sectors_per_ns = 143 ",
                "l2_partial_write_sectors_per_ns = 0 ",
                "bandwidth.l2_partial_write_sectors_per_ns",
            ),
            (
                "l2_partial_write_requests_per_ns = 133 ",
                "l2_partial_write_requests_per_ns = -1 ",
                "bandwidth.l2_partial_write_requests_per_ns",
            ),
            (
                "l2_partial_write_overlap_exponent = 1.2 ",
                "l2_partial_write_overlap_exponent = 0.5 ",
                "bandwidth.l2_partial_write_overlap_exponent",
            ),
            (
                "dram_copy_gbs = 3941 ",
                "dram_copy_gbs = 4500 ",
                "the turnaround between them would take no time",
            ),
            (
                "dram_copy_gbs = 3941 ",
                "dram_copy_gbs = -3941 ",
                "must be positive numbers",
            ),
            ("dram_write_gbs = 4344 ", "", "set all three or none"),
        ] {
            assert!(h200.contains(from), "{from}");
            let err = HwConfig::parse(&h200.replace(from, to), "bad.toml").unwrap_err();
            assert!(err.message.contains(says), "{}", err.message);
        }
        let hw = HwConfig::parse(h200, "h200.toml").unwrap();
        // DRAM by direction: 1 GB read, written, and copied evenly (half each way, plus the
        // turnaround that brings a copy to its measured rate).
        let b = &hw.bandwidth;
        let one = b.dram_gbs.unwrap();
        assert!((b.dram_seconds(1e9, Some(1e9), one) - 1.0 / 4518.0).abs() < 1e-12);
        assert!((b.dram_seconds(1e9, Some(0.0), one) - 1.0 / 4344.0).abs() < 1e-12);
        assert!((b.dram_seconds(1e9, Some(0.5e9), one) - 1.0 / 3941.0).abs() < 1e-12);
        assert_eq!(b.dram_seconds(1e9, None, one), 1.0 / one);
        // A round of 5 loads: (1.25 + 0.15 * 5) idle DRAM latencies.
        assert!((hw.timing.round_latency_cycles(5.0) - 2.0 * 535.0).abs() < 1e-9);
        assert_eq!(hw.timing.l1_busy_per_dram_time, 0.2);
        // A round's delay: (1.25 + 0.15 n) latencies of 535 cycles, n counted up to 6.
        let t = &hw.timing;
        assert!((t.round_latency_cycles(3.0) - 1.7 * 535.0).abs() < 1e-9);
        assert!((t.round_latency_cycles(6.0) - 2.15 * 535.0).abs() < 1e-9);
        assert_eq!(t.round_latency_cycles(20.0), t.round_latency_cycles(6.0));
        assert_eq!(hw.timing.block_launch_ns, Some(0.61));
        // The V100 config has no [timing]: the documented defaults, and no launch limiter.
        let v100 = HwConfig::load("v100").unwrap();
        assert_eq!(v100.timing, TimingConfig::default());
        assert_eq!(v100.timing.round_latency_cycles(0.0), 1.25 * 550.0);
        assert_eq!(v100.timing.l1_busy_per_dram_time, 0.0);
        assert_eq!(v100.timing.block_launch_ns, None);
    }

    #[test]
    fn tree_plru_needs_a_power_of_two_of_ways() {
        // 12 ways divide each 30 MiB partition into whole sets, so only the policy objects.
        let text = include_str!("../../hw-configs/h200.toml").replace(
            "ways = 16                         # [ways]",
            "ways = 12 # [ways]",
        );
        assert!(
            text.contains("ways = 12 #"),
            "the L2's ways line of h200.toml moved"
        );
        // The shipped L2 is LRU: 12 ways are fine; tree-PLRU over them is not.
        assert!(HwConfig::parse(&text, "ok.toml").is_ok());
        let plru = with_l2_policy(&text, "plru");
        let err = HwConfig::parse(&plru, "bad.toml").unwrap_err();
        assert!(err.message.contains("l2.replacement"), "{}", err.message);
        assert!(err.message.contains("power of two"), "{}", err.message);
    }

    #[test]
    fn the_near_side_way_limit_takes_lru_and_tree_plru_and_refuses_the_others() {
        let h200 = include_str!("../../hw-configs/h200.toml");
        for policy in ["lru", "plru", "fifo", "random", "srrip"] {
            let text = with_l2_policy(h200, policy).replace(
                &format!("replacement = \"{policy}\" # [ways]"),
                &format!("local_ways = 11\nreplacement = \"{policy}\" # [ways]"),
            );
            assert!(text.contains("local_ways = 11"));
            match HwConfig::parse(&text, "h200.toml") {
                Ok(hw) => {
                    assert!(["lru", "plru"].contains(&policy), "{policy} was accepted");
                    assert_eq!(hw.l2.local_ways, Some(11));
                }
                Err(err) => {
                    assert!(!["lru", "plru"].contains(&policy), "{policy}: {err}");
                    assert!(
                        err.message.contains("l2.local_ways needs"),
                        "{}",
                        err.message
                    );
                }
            }
        }
    }

    #[test]
    fn unknown_fields_and_shipped_names() {
        let text = format!(
            "{}\nbogus = 1\n",
            include_str!("../../hw-configs/h200.toml")
        );
        let err = HwConfig::parse(&text, "x.toml").unwrap_err();
        assert!(err.message.contains("bogus"), "{}", err.message);
        let err = HwConfig::load("no-such-gpu").unwrap_err();
        assert!(err.message.contains("h200"), "{}", err.message);
    }
}
