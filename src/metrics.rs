//! The one place that spells the names other programs read: the Nsight Compute metric names the
//! simulator reports under, the column names of sweep files that `fit` and `plot` consume, and
//! the sector and line sizes every traffic count is measured in. Everyone else imports them.

/// Bytes per sector, the unit of every traffic counter (the L1/L2 transfer size).
pub const SECTOR_BYTES: u64 = 32;
/// log2 of [`SECTOR_BYTES`].
pub const SECTOR_SHIFT: u32 = 5;
/// Bytes per cache line, the L1/L2 allocation size (four sectors).
pub const LINE_BYTES: u64 = 128;
/// log2 of [`LINE_BYTES`].
pub const LINE_SHIFT: u32 = 7;
/// Sectors per line.
pub const SECTORS_PER_LINE: u32 = 1 << (LINE_SHIFT - SECTOR_SHIFT);

/// Largest line address the simulated caches hold (tags are 32-bit to keep a set's tags in one
/// CPU cache line): byte addresses below 2^39. Launches whose arrays reach beyond are refused.
pub const MAX_LINE: u64 = u32::MAX as u64 - 2;

/// `count` sectors in bytes.
#[inline]
pub fn sector_bytes(count: u64) -> f64 {
    count as f64 * SECTOR_BYTES as f64
}

/// Warp-level global load instructions.
pub const L1_LD_REQUESTS: &str = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum";
/// Sectors touched by global loads.
pub const L1_LD_SECTORS: &str = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";
/// Global load sectors missing in L1.
pub const L1_LD_MISS: &str = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum";
/// Warp-level global store instructions.
pub const L1_ST_REQUESTS: &str = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum";
/// Sectors written by global stores.
pub const L1_ST_SECTORS: &str = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum";
/// L1 data-stage wavefronts (cycles of the L1 data pipeline, global and shared accesses): what
/// the time model's L1 limiter counts.
pub const L1_WAVEFRONTS: &str = "l1tex__data_pipe_lsu_wavefronts.sum";
/// Read sectors arriving at L2 from the SMs.
pub const L2_READ: &str = "lts__t_sectors_srcunit_tex_op_read.sum";
/// Write sectors arriving at L2 from the SMs.
pub const L2_WRITE: &str = "lts__t_sectors_srcunit_tex_op_write.sum";
/// L2 read sectors missing in the near partition.
pub const L2_READ_MISS: &str = "lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum";
/// Sectors crossing the fabric between L2 partitions.
pub const L2_FABRIC: &str = "lts__t_sectors_srcunit_ltcfabric.sum";
/// DRAM sectors read.
pub const DRAM_READ: &str = "dram__sectors_read.sum";
/// DRAM sectors written.
pub const DRAM_WRITE: &str = "dram__sectors_write.sum";
/// Warp-level global atomic (reduction) instructions.
pub const L1_RED_REQUESTS: &str = "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum";
/// Sectors of global atomics (reductions) at L1.
pub const L1_RED_SECTORS: &str = "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum";
/// Atomic (reduction) requests arriving at L2 from the SMs.
pub const L2_RED_REQUESTS: &str = "lts__t_requests_srcunit_tex_op_red.sum";
/// Atomic (reduction) sectors arriving at L2 from the SMs.
pub const L2_RED: &str = "lts__t_sectors_srcunit_tex_op_red.sum";

/// The one table of the simulator's counters. Each row declares a counter once: its level (the
/// struct it lives in, which also says how it sums: an L1's over the SMs, the L2's and the
/// DRAM's over the L2's shards), its field, the Nsight Compute metric it is reported under (`[]`:
/// none, an internal count), when it is reported (`all`: always, in table order, [`ALL`];
/// `atomic`: for kernels with atomics, after those, [`ATOMIC`]; `none`), and how a sampled
/// simulation scales it ([`Sampling`]).
///
/// From it `crate::sim::counters` derives `L1Counters`, `L2Counters`, `DramCounters` with their
/// `add` and `minus`, the sampler's vector of fields, and each counter's value in table order
/// (what `Report::metrics` reports); here [`COUNTERS`], [`ALL`] and [`ATOMIC`]. A new counter
/// is one row here (and its metric's name above when it has one) plus the code that counts it.
///
/// Invoked as `counter_table!(callback)`: the callback macro receives the rows.
macro_rules! counter_table {
    ($callback:ident) => {
        $callback! {
            /// Counters of one SM's L1.
            l1 L1Counters {
                /// Warp-level global load instructions.
                load_requests: [L1_LD_REQUESTS] all instruction;
                /// Sectors those loads touch.
                load_sectors: [L1_LD_SECTORS] all address;
                /// Load sectors that missed in L1.
                load_miss_sectors: [L1_LD_MISS] all extrapolated;
                /// Warp-level global store instructions.
                store_requests: [L1_ST_REQUESTS] all instruction;
                /// Sectors written by stores.
                store_sectors: [L1_ST_SECTORS] all address;
                /// Of those, sectors a store request writes only in part (fewer than its 32
                /// bytes): the L2 takes them far more slowly than whole ones (the time model).
                store_partial_sectors: [] none address;
                /// Of those, sectors that reach the L2 whole, or not on their own, as a warp's
                /// stores in a row merge on the way (`sim::sm_stage::SmWorker::store`): the L2
                /// takes `store_partial_sectors` less these in part.
                store_partial_sectors_merged: [] none extrapolated;
                /// Lines of store requests with at least one sector written in part: each
                /// reaches the L2 as a write request it takes far more slowly than a whole one,
                /// on top of its partly written sectors (the time model).
                store_partial_lines: [] none address;
                /// Of those, lines that reach the L2 whole, or not as their own request, as a
                /// warp's stores in a row merge (as `store_partial_sectors_merged`).
                store_partial_lines_merged: [] none extrapolated;
                /// Sum over blocks of the distinct sectors each block loads (compulsory L2→L1
                /// volume).
                block_unique_load_sectors: [] none address;
                /// Sum over blocks of the distinct 128 B lines each block loads (what a block
                /// allocates in L1).
                block_unique_load_lines: [] none address;
                /// Lines (128 B) of the load instructions that miss in L1 (at least one sector
                /// missing), every line of such an instruction counted, present ones too.
                load_miss_request_lines: [] none extrapolated;
                /// Load lines with some sectors present in L1 and some missing, counted per
                /// instruction.
                load_partial_lines: [] none extrapolated;
                /// Load lines that found every sector they want present while the line's fill was
                /// still in flight (`sim::data_stage::hit_in_flight`), counted per instruction.
                load_in_flight_lines: [] none extrapolated;
                /// L1 data-stage passes of the loads and stores by the measured per-instruction
                /// rule (`sim::data_stage::passes`).
                data_passes: [] none address;
                /// Warp-level global atomic (reduction) instructions.
                atomic_requests: [L1_RED_REQUESTS] atomic instruction;
                /// Sectors of their L2 requests (`l1tex__t_sectors_pipe_lsu_mem_global_op_red`: a
                /// sector hit by lanes on one address counts once per lane-round).
                atomic_sectors: [L1_RED_SECTORS] atomic address;
                /// Warp-level shared load instructions (`LDS`); shared accesses never pass the
                /// data pipe.
                shared_load_requests: [SHARED_LD_INSTRUCTIONS] shared instruction;
                /// Warp-level shared store instructions (`STS`).
                shared_store_requests: [SHARED_ST_INSTRUCTIONS] shared instruction;
                /// Data-pipe wavefronts of the shared loads, by the bank rule
                /// (`sim::data_stage::shared_wavefronts`).
                shared_load_wavefronts: [SHARED_LD_WAVEFRONTS] shared address;
                /// Data-pipe wavefronts of the shared stores.
                shared_store_wavefronts: [SHARED_ST_WAVEFRONTS] shared address;
                /// Bytes the shared stores write (active lanes × element bytes): what
                /// `sim::data_stage::LaunchTerms` counts as written beside the global stores.
                shared_store_bytes: [] none address;
                /// Bank conflicts of the shared loads: their wavefronts beyond the conflict-free
                /// count.
                shared_load_bank_conflicts: [SHARED_LD_BANK_CONFLICTS] shared address;
                /// Bank conflicts of the shared stores.
                shared_store_bank_conflicts: [SHARED_ST_BANK_CONFLICTS] shared address;
                /// Warp-level shuffle instructions (`SHFL`), each one data-pipe wavefront: the
                /// GPU counts them under `l1tex__data_pipe_lsu_wavefronts_mem_shared`, not under
                /// its loads or stores (`validation/warp_ops_probe.cu`).
                shuffles: [] none instruction;
                /// Warp-level instructions issued with no lane active: those of a predicated
                /// `if` none of whose lanes meets the condition. Each takes a data-pipe
                /// wavefront (`wavefronts_per_predicated_off`), counted by the GPU under
                /// `l1tex__data_pipe_lsu_wavefronts_mem_shared`, and counts as an executed
                /// instruction, but makes no request (`validation/predicated_probe.cu`).
                predicated_off: [] none instruction;
                /// L1 data-stage wavefronts, what the time model's L1 limiter counts:
                /// `data_passes` plus what `sim::data_stage::extra_wavefronts` adds for the
                /// launch, the shared wavefronts, the shuffles' and the predicated-off
                /// instructions'; set when the simulation ends.
                wavefronts: [L1_WAVEFRONTS] all derived;
            }
            /// L2 counters under their Nsight Compute meaning.
            l2 L2Counters {
                /// Read sectors arriving from the SMs (near-partition lookups).
                read_sectors: [L2_READ] all extrapolated;
                /// Write sectors arriving from the SMs.
                write_sectors: [L2_WRITE] all mirrors(store_sectors);
                /// Of the reads (after rounding to the fill unit), sectors missing in the near
                /// partition.
                read_lookup_miss_sectors: [L2_READ_MISS] all extrapolated;
                /// Sectors crossing the fabric between the partitions.
                fabric_sectors: [L2_FABRIC] all extrapolated;
                /// Sectors a store left partly written in the L2: written in part while whole
                /// or absent before (each time a sector becomes partly written).
                sectors_left_partial: [] none extrapolated;
                /// Of those, sectors an SM other than their first writer's writes into while
                /// they are partly written (each once): sectors two blocks write between them.
                partial_sectors_across_sms: [] none extrapolated;
                /// Sectors stores and atomics made dirty while clean: each is written back once,
                /// unless still dirty when the kernel ends, so the DRAM writes are these less the
                /// dirty sectors left (what a sampled run estimates its writes from).
                sectors_made_dirty: [] none extrapolated;
                /// Atomic (reduction) requests arriving from the SMs.
                atomic_requests: [L2_RED_REQUESTS] atomic extrapolated;
                /// Their sectors.
                atomic_sectors: [L2_RED] atomic mirrors(atomic_sectors);
            }
            /// Sector traffic between the L2 and device memory.
            dram DramCounters {
                /// 32 B sectors read (fills, and merges of partially written sectors).
                read_sectors: [DRAM_READ] all extrapolated;
                /// 32 B sectors written back (evictions of dirty sectors during the kernel).
                write_sectors: [DRAM_WRITE] all extrapolated;
            }
        }
    };
}
pub(crate) use counter_table;

/// When a counter is reported (a column of `counter_table!`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reported {
    /// Always, in [`ALL`].
    All,
    /// For kernels that perform atomics, in [`ATOMIC`].
    Atomic,
    /// For kernels with shared-memory accesses, in [`SHARED`].
    Shared,
    /// Never: a count the simulator keeps for itself (the time model, the checks, the models).
    None,
}

/// How a sampled simulation (`--sample`) gets a counter (a column of `counter_table!`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sampling {
    /// Extrapolated from the counted waves (per warp instruction), with a 95% interval.
    Extrapolated,
    /// Decided by the lanes' addresses alone: counted exactly over every warp where the kernel
    /// allows, else extrapolated.
    Address,
    /// A warp-instruction count (one of the loads, stores and atomics every instruction is), and
    /// like [`Sampling::Address`]: the sampler's ratio estimates divide by their sum.
    Instruction,
    /// Equal to the named L1 counter where that is exact (write-through stores, atomics that
    /// bypass the L1), else extrapolated.
    Mirrors(&'static str),
    /// Not sampled: worked out from the others when the simulation ends.
    Derived,
}

/// One row of `counter_table!`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counter {
    /// `l1`, `l2` or `dram`.
    pub level: &'static str,
    /// The field in its level's struct.
    pub field: &'static str,
    /// The Nsight Compute metric, if it is one.
    pub metric: Option<&'static str>,
    /// When it is reported.
    pub reported: Reported,
    /// How sampling gets it.
    pub sampling: Sampling,
}

/// `Some(metric)`, or `None` for a row without one.
macro_rules! optional_metric {
    () => {
        None
    };
    ($metric:ident) => {
        Some($metric)
    };
}

/// The [`Sampling`] of a row's sampling column.
macro_rules! sampling_of {
    (extrapolated) => {
        Sampling::Extrapolated
    };
    (address) => {
        Sampling::Address
    };
    (instruction) => {
        Sampling::Instruction
    };
    (derived) => {
        Sampling::Derived
    };
    (mirrors ($of:ident)) => {
        Sampling::Mirrors(stringify!($of))
    };
}

/// The [`Reported`] of a row's report column.
macro_rules! reported_of {
    (all) => {
        Reported::All
    };
    (atomic) => {
        Reported::Atomic
    };
    (shared) => {
        Reported::Shared
    };
    (none) => {
        Reported::None
    };
}

/// [`COUNTERS`] from the table's rows.
macro_rules! counter_rows {
    ($($(#[$sdoc:meta])* $level:ident $Struct:ident {
        $($(#[$doc:meta])* $field:ident : [$($metric:ident)?] $report:ident $sample:ident $(($of:ident))?;)*
    })*) => {
        /// Every counter, in table order (`counter_table!`).
        pub const COUNTERS: &[Counter] = &[$($(Counter {
            level: stringify!($level),
            field: stringify!($field),
            metric: optional_metric!($($metric)?),
            reported: reported_of!($report),
            sampling: sampling_of!($sample $(($of))?),
        },)*)*];
    };
}
counter_table!(counter_rows);

/// How many counters are reported as `reported`.
const fn count_reported(reported: Reported) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < COUNTERS.len() {
        if COUNTERS[i].reported as u8 == reported as u8 {
            n += 1;
        }
        i += 1;
    }
    n
}

/// The metric names of the counters reported as `reported`, in table order.
const fn reported_names<const N: usize>(reported: Reported) -> [&'static str; N] {
    let mut out = [""; N];
    let mut n = 0;
    let mut i = 0;
    while i < COUNTERS.len() {
        if COUNTERS[i].reported as u8 == reported as u8 {
            out[n] = match COUNTERS[i].metric {
                Some(m) => m,
                None => panic!("a reported counter has a metric name"),
            };
            n += 1;
        }
        i += 1;
    }
    out
}

/// Every sector/request counter the simulator always reports, in hierarchy order.
pub const ALL: [&str; count_reported(Reported::All)] = reported_names(Reported::All);
/// The atomic counters, reported for kernels that perform atomics (after [`ALL`]).
pub const ATOMIC: [&str; count_reported(Reported::Atomic)] = reported_names(Reported::Atomic);

// --- Shared memory (`[[shared]]` arrays): instructions and data-pipe wavefronts. ---
/// Warp-level shared load instructions (`LDS`).
pub const SHARED_LD_INSTRUCTIONS: &str = "smsp__inst_executed_op_shared_ld.sum";
/// Warp-level shared store instructions (`STS`).
pub const SHARED_ST_INSTRUCTIONS: &str = "smsp__inst_executed_op_shared_st.sum";
/// L1 data-pipe wavefronts of shared loads (the bank rule; part of [`L1_WAVEFRONTS`]).
pub const SHARED_LD_WAVEFRONTS: &str = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum";
/// L1 data-pipe wavefronts of shared stores (part of [`L1_WAVEFRONTS`]).
pub const SHARED_ST_WAVEFRONTS: &str = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum";
/// Bank conflicts of shared loads: wavefronts beyond the conflict-free count.
pub const SHARED_LD_BANK_CONFLICTS: &str =
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum";
/// Bank conflicts of shared stores.
pub const SHARED_ST_BANK_CONFLICTS: &str =
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum";
/// The shared-memory counters, reported for kernels with shared accesses (after [`ATOMIC`]).
pub const SHARED: [&str; count_reported(Reported::Shared)] = reported_names(Reported::Shared);

/// Whether `metric` counts requests, instructions or wavefronts, not sectors: it has no byte
/// volume.
pub fn is_request_count(metric: &str) -> bool {
    metric.contains("__t_requests_") || metric == L1_WAVEFRONTS || SHARED.contains(&metric)
}

/// Every counter the simulator produces or estimates, the names a measured file is read for:
/// [`ALL`] (the L1 wavefronts among them), [`ATOMIC`], [`SHARED`] and [`DURATION`].
pub fn modelled() -> impl Iterator<Item = &'static str> {
    ALL.into_iter()
        .chain(ATOMIC)
        .chain(SHARED)
        .chain([DURATION])
}

/// Whether a column name has the form of an Nsight Compute metric (`unit__counter.rollup`):
/// it contains `__` or a `.`. A measured file's columns that do not are launch columns or are
/// refused (`gputraffic validate`).
pub fn looks_like_metric(name: &str) -> bool {
    name.contains("__") || name.contains('.')
}

/// Words of real Nsight Compute metrics, not modelled, whose names lie one or two letters from a
/// modelled one: `…_op_st` beside `…_op_ld`, `lts__t_requests_…_op_read` beside `…_op_red`,
/// `…_mem_local_…` beside `…_mem_global_…`. A name made of these and the modelled names' words
/// is a metric gputraffic does not model, not a misspelling ([`misspelt_metric`]).
pub const NCU_WORDS: &[&str] = &[
    "st",
    "ld",
    "red",
    "atom",
    "read",
    "write",
    "hit",
    "miss",
    "local",
    "shared",
    "global",
    "lg",
    "gds",
    "lgds",
    "bytes",
    "sectors",
    "requests",
    "avg",
    "min",
    "max",
    "sum",
    "pct",
    "per",
    "second",
    "peak",
    "sustained",
    "elapsed",
    "active",
    "op",
    "mem",
    "lookup",
    "cmd",
];

/// The modelled metric ([`modelled`]) that `name` misspells, if any:
/// - the same letters in another case or with other `_`/`.` separators
///   (`dram_sectors_read.sum`, `DRAM__sectors_read.sum`);
/// - a modelled name without its `.sum` (`dram__sectors_read`);
/// - at most two letters from a modelled name and with a word (between `_`, `__` and `.`)
///   that no modelled name and no [`NCU_WORDS`] has (`dram__sector_read.sum`).
///
/// Real Nsight Compute metrics near a modelled name (`lts__t_requests_srcunit_tex_op_read.sum`,
/// one letter from `…_sectors_…_op_red.sum`) are made of known words and are not misspellings.
pub fn misspelt_metric(name: &str) -> Option<&'static str> {
    if modelled().any(|m| m == name) {
        return None;
    }
    let letters = |s: &str| -> String {
        s.chars()
            .filter(|c| !matches!(c, '_' | '.'))
            .flat_map(char::to_lowercase)
            .collect()
    };
    let words = |s: &str| -> Vec<String> {
        s.to_lowercase()
            .split(['_', '.'])
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect()
    };
    let spelt = letters(name);
    if let Some(m) = modelled().find(|m| {
        letters(m) == spelt
            || m.strip_suffix(".sum")
                .is_some_and(|base| letters(base) == spelt)
    }) {
        return Some(m);
    }
    let known =
        |w: &String| NCU_WORDS.contains(&w.as_str()) || modelled().any(|m| words(m).contains(w));
    if words(name).iter().all(known) {
        return None;
    }
    let lower = name.to_lowercase();
    modelled()
        .map(|m| (crate::error::edit_distance(&lower, m), m))
        .filter(|&(d, _)| d <= 2)
        .min_by_key(|&(d, _)| d)
        .map(|(_, m)| m)
}

/// Kernel duration in nanoseconds.
pub const DURATION: &str = "gpu__time_duration.sum";

/// Suffix of a sweep column holding a metric in bytes per lattice update.
pub const BYTES_PER_LUP_SUFFIX: &str = "_bytes_per_lup";

/// The sweep column of `metric` in bytes per lattice update.
pub fn bytes_per_lup_column(metric: &str) -> String {
    format!("{metric}{BYTES_PER_LUP_SUFFIX}")
}

/// The sweep columns of a sampled `metric`'s 95% interval: its low and high ends.
pub fn ci95_columns(metric: &str) -> [String; 2] {
    [format!("{metric}_ci95_lo"), format!("{metric}_ci95_hi")]
}

/// Sweep column of a sampled sweep: whether the row's launch was sampled (`false`: too short
/// to sample, simulated exactly, its interval the value itself).
pub const SAMPLED: &str = "sampled";

/// Sweep column: DRAM reads in bytes per lattice update (the layer-condition plot's y); the
/// same as `bytes_per_lup_column(DRAM_READ)`, spelled out to be a constant.
pub const DRAM_READ_BYTES_PER_LUP: &str = "dram__sectors_read.sum_bytes_per_lup";

/// Sweep column: the factor applied to the L1 capacity.
pub const L1_SCALE: &str = "l1_scale";
/// Sweep column: the factor applied to the L2 capacity.
pub const L2_SCALE: &str = "l2_scale";
/// Sweep column: Ernst et al.'s L2 oversubscription (the hit-rate plot's x).
pub const L2_OVERSUBSCRIPTION: &str = "l2_oversubscription";
/// Sweep column: the L2's redundant-volume hit rate (the hit-rate plot's y).
pub const L2_REDUNDANT_HIT_RATE: &str = "l2_redundant_hit_rate";
/// Sweep column: Su et al.'s SMX (L1) miss ratio.
pub const SU_SMX_MISS_RATIO: &str = "su_smx_miss_ratio";
/// Sweep column: Su et al.'s SMX capacity term.
pub const SU_SMX_CAPACITY_TERM: &str = "su_smx_capacity_term";
/// Sweep column: Su et al.'s SMX scheduling term.
pub const SU_SMX_SCHEDULING_TERM: &str = "su_smx_scheduling_term";
/// Sweep column: Su et al.'s L2 miss ratio (the su2015 fit's y).
pub const SU_L2_MISS_RATIO: &str = "su_l2_miss_ratio";
/// Sweep column: Su et al.'s L2 capacity term (the su2015 fit's x).
pub const SU_L2_CAPACITY_TERM: &str = "su_l2_capacity_term";

// --- Quantities: the label, unit, meaning and physical range of every number reported. ---
//
// `predict` prints them beside its fields, `plot` labels its axes and titles with them,
// `docs/models.md` lists them (checked by a test), and values outside their range are flagged
// where printed. The sweep's columns are described here ([`describe`]); each model's own fields
// in its file under `src/models/` (`ModelInfo::quantities` of src/models/mod.rs).

use std::borrow::Cow;

/// The values a model constant may take: from `lo` to `hi`, each end included or not, and only
/// whole numbers where the constant counts something (bytes, loads, blocks).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Domain {
    /// Lower end (−∞ for none).
    pub lo: f64,
    /// Whether `lo` itself is allowed.
    pub lo_included: bool,
    /// Upper end (∞ for none).
    pub hi: f64,
    /// Whether `hi` itself is allowed.
    pub hi_included: bool,
    /// Whether only whole numbers are allowed.
    pub whole: bool,
}

impl Domain {
    /// Any finite number (the inner factor and rate of a Gompertz curve).
    pub const ANY: Domain = Domain::new(f64::NEG_INFINITY, false, f64::INFINITY, false);
    /// Above 0 (capacities, line sizes, depths).
    pub const POSITIVE: Domain = Domain::new(0.0, false, f64::INFINITY, false);
    /// 0 or above (halo widths, ranges).
    pub const NON_NEGATIVE: Domain = Domain::new(0.0, true, f64::INFINITY, false);
    /// From 0 to 1 (miss-ratio constants, which scale an oversubscription into a ratio).
    pub const UNIT: Domain = Domain::new(0.0, true, 1.0, true);
    /// Above 0, at most 1: a rate's ceiling, an occupancy.
    pub const RATE_CEILING: Domain = Domain::new(0.0, false, 1.0, true);
    /// 1 or more, whole (sizes in bytes, block sides, counts that cannot be 0).
    pub const COUNT: Domain = Domain::new(1.0, true, f64::INFINITY, false).whole();
    /// 0 or more, whole (counts that may be 0).
    pub const COUNT_OR_ZERO: Domain = Domain::new(0.0, true, f64::INFINITY, false).whole();

    /// The numbers from `lo` to `hi`, each end included when its flag says so.
    pub const fn new(lo: f64, lo_included: bool, hi: f64, hi_included: bool) -> Domain {
        Domain {
            lo,
            lo_included,
            hi,
            hi_included,
            whole: false,
        }
    }

    /// The same, whole numbers only.
    pub const fn whole(self) -> Domain {
        Domain {
            whole: true,
            ..self
        }
    }

    /// Whether `v` is in the domain (never for NaN or ±∞).
    pub fn contains(&self, v: f64) -> bool {
        let above = v > self.lo || (self.lo_included && v == self.lo);
        let below = v < self.hi || (self.hi_included && v == self.hi);
        v.is_finite() && above && below && (!self.whole || v.fract() == 0.0)
    }

    /// The closed interval `LO..HI` that `gputraffic fit --bound` takes to keep a constant in
    /// the domain (an open end is the end itself, an infinite one left empty).
    pub fn as_bound(&self) -> String {
        let end = |v: f64| {
            if v.is_finite() {
                v.to_string()
            } else {
                String::new()
            }
        };
        format!("{}..{}", end(self.lo), end(self.hi))
    }
}

impl std::fmt::Display for Domain {
    /// `in [0, 1]`, `in (0, 1]`, `> 0`, `>= 1`, with `a whole number ` in front where whole.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.whole {
            write!(f, "a whole number ")?;
        }
        match (self.lo.is_finite(), self.hi.is_finite()) {
            (true, true) => write!(
                f,
                "in {}{}, {}{}",
                if self.lo_included { '[' } else { '(' },
                self.lo,
                self.hi,
                if self.hi_included { ']' } else { ')' }
            ),
            (true, false) => write!(
                f,
                "{} {}",
                if self.lo_included { ">=" } else { ">" },
                self.lo
            ),
            (false, true) => write!(
                f,
                "{} {}",
                if self.hi_included { "<=" } else { "<" },
                self.hi
            ),
            (false, false) => write!(f, "any finite number"),
        }
    }
}

/// One reported number explained.
#[derive(Debug, Clone, PartialEq)]
pub struct Quantity {
    /// Its name in the output: a JSON key, a CSV or sweep column.
    pub name: Cow<'static, str>,
    /// A short human label for axes, titles and tables, e.g. `DRAM reads per update`.
    pub label: Cow<'static, str>,
    /// Its unit as stored (`B`, `B/LUP`, `s`, `sectors`, …); `1` for a pure number (a ratio,
    /// a rate), empty for text and yes/no.
    pub unit: &'static str,
    /// One line: what it is.
    pub meaning: Cow<'static, str>,
    /// Where its values can physically lie (`None`: no such bound, or not a number).
    pub range: Option<Domain>,
}

impl Quantity {
    /// A quantity with a fixed name (the form of the tables in this file and in `src/models/`).
    pub const fn new(
        name: &'static str,
        label: &'static str,
        unit: &'static str,
        range: Option<Domain>,
        meaning: &'static str,
    ) -> Quantity {
        Quantity {
            name: Cow::Borrowed(name),
            label: Cow::Borrowed(label),
            unit,
            meaning: Cow::Borrowed(meaning),
            range,
        }
    }

    /// `label [unit]` (the unit as shown, after [`display_unit`] for `values`), or the label
    /// alone for a pure number or text: an axis description.
    pub fn axis_label(&self, values: &[f64]) -> String {
        let (_, unit) = display_unit(self.unit, values);
        if unit.is_empty() || unit == "1" {
            self.label.to_string()
        } else {
            format!("{} [{unit}]", self.label)
        }
    }

    /// Whether `v` lies outside the quantity's physical range (never for a quantity without
    /// one). Not-a-number and infinite values are outside any range.
    pub fn out_of_range(&self, v: f64) -> bool {
        self.range.is_some_and(|r| !r.contains(v))
    }
}

/// How values in `unit` are best shown: the factor to multiply them by and the unit then
/// shown. Seconds become ms, µs or ns after the largest magnitude of `values` (a block of
/// 1.06×10⁻⁵ s reads 10.6 µs), LUP/s become GLUP/s from 10⁹ up; every other unit is kept.
pub fn display_unit(unit: &'static str, values: &[f64]) -> (f64, &'static str) {
    let largest = values
        .iter()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |m, v| m.max(v.abs()));
    match unit {
        "s" if largest == 0.0 || largest >= 1.0 => (1.0, "s"),
        "s" if largest >= 1e-3 => (1e3, "ms"),
        "s" if largest >= 1e-6 => (1e6, "µs"),
        "s" => (1e9, "ns"),
        "LUP/s" if largest >= 1e9 => (1e-9, "GLUP/s"),
        other => (1.0, other),
    }
}

const COUNT: Option<Domain> = Some(Domain::COUNT_OR_ZERO);
const BYTES: Option<Domain> = Some(Domain::NON_NEGATIVE);
const RATE: Option<Domain> = Some(Domain::UNIT);

/// The simulator's Nsight Compute metrics ([`modelled`]): label, unit, meaning. Each is also a
/// sweep column, and in bytes per lattice update under [`bytes_per_lup_column`].
pub const METRIC_QUANTITIES: &[Quantity] = &[
    Quantity::new(
        L1_LD_REQUESTS,
        "L1 load requests",
        "requests",
        COUNT,
        "warp-level global load instructions",
    ),
    Quantity::new(
        L1_LD_SECTORS,
        "L1 load sectors",
        "sectors",
        COUNT,
        "32 B sectors the global loads touch in L1",
    ),
    Quantity::new(
        L1_LD_MISS,
        "L1 load misses",
        "sectors",
        COUNT,
        "global load sectors that miss in L1 (requested from L2)",
    ),
    Quantity::new(
        L1_ST_REQUESTS,
        "L1 store requests",
        "requests",
        COUNT,
        "warp-level global store instructions",
    ),
    Quantity::new(
        L1_ST_SECTORS,
        "L1 store sectors",
        "sectors",
        COUNT,
        "32 B sectors the global stores write through L1",
    ),
    Quantity::new(
        L2_READ,
        "L2 reads",
        "sectors",
        COUNT,
        "read sectors arriving at L2 from the SMs",
    ),
    Quantity::new(
        L2_WRITE,
        "L2 writes",
        "sectors",
        COUNT,
        "write sectors arriving at L2 from the SMs",
    ),
    Quantity::new(
        L2_READ_MISS,
        "L2 read misses",
        "sectors",
        COUNT,
        "L2 read sectors missing in the near partition",
    ),
    Quantity::new(
        L2_FABRIC,
        "L2 fabric sectors",
        "sectors",
        COUNT,
        "sectors crossing the fabric between the two L2 partitions",
    ),
    Quantity::new(
        DRAM_READ,
        "DRAM reads",
        "sectors",
        COUNT,
        "sectors read from DRAM",
    ),
    Quantity::new(
        DRAM_WRITE,
        "DRAM writes",
        "sectors",
        COUNT,
        "sectors written to DRAM",
    ),
    Quantity::new(
        L1_RED_REQUESTS,
        "L1 atomic requests",
        "requests",
        COUNT,
        "warp-level global atomic (reduction) instructions",
    ),
    Quantity::new(
        L1_RED_SECTORS,
        "L1 atomic sectors",
        "sectors",
        COUNT,
        "sectors of global atomics at L1",
    ),
    Quantity::new(
        L2_RED_REQUESTS,
        "L2 atomic requests",
        "requests",
        COUNT,
        "atomic requests arriving at L2 from the SMs",
    ),
    Quantity::new(
        L2_RED,
        "L2 atomic sectors",
        "sectors",
        COUNT,
        "atomic sectors arriving at L2 from the SMs",
    ),
    Quantity::new(
        SHARED_LD_INSTRUCTIONS,
        "shared loads",
        "instructions",
        COUNT,
        "warp-level shared-memory load instructions (LDS)",
    ),
    Quantity::new(
        SHARED_ST_INSTRUCTIONS,
        "shared stores",
        "instructions",
        COUNT,
        "warp-level shared-memory store instructions (STS)",
    ),
    Quantity::new(
        SHARED_LD_WAVEFRONTS,
        "shared load wavefronts",
        "wavefronts",
        COUNT,
        "L1 data-pipe wavefronts of shared loads (one per bank pass)",
    ),
    Quantity::new(
        SHARED_ST_WAVEFRONTS,
        "shared store wavefronts",
        "wavefronts",
        COUNT,
        "L1 data-pipe wavefronts of shared stores",
    ),
    Quantity::new(
        SHARED_LD_BANK_CONFLICTS,
        "shared load bank conflicts",
        "wavefronts",
        COUNT,
        "shared load wavefronts beyond the conflict-free count",
    ),
    Quantity::new(
        SHARED_ST_BANK_CONFLICTS,
        "shared store bank conflicts",
        "wavefronts",
        COUNT,
        "shared store wavefronts beyond the conflict-free count",
    ),
    Quantity::new(
        L1_WAVEFRONTS,
        "L1 wavefronts",
        "wavefronts",
        COUNT,
        "L1 data-pipe wavefronts (cycles of the L1 data stage), summed over the SMs",
    ),
    Quantity::new(
        DURATION,
        "kernel time",
        "ns",
        Some(Domain::NON_NEGATIVE),
        "kernel duration",
    ),
];

/// The sweep's (and `simulate --format csv`'s) columns with fixed names. Patterned columns
/// (`param_*`, `set_*`, a metric's `_bytes_per_lup` and `_ci95_*`, a model's predictions) are
/// made by [`describe`].
pub const COLUMN_QUANTITIES: &[Quantity] = &[
    Quantity::new(
        "config",
        "configuration",
        "1",
        COUNT,
        "the row's index in the sweep's configuration order",
    ),
    Quantity::new(
        L1_SCALE,
        "L1 capacity scale",
        "1",
        Some(Domain::POSITIVE),
        "factor applied to the GPU's L1 capacity (--l1-scale)",
    ),
    Quantity::new(
        L2_SCALE,
        "L2 capacity scale",
        "1",
        Some(Domain::POSITIVE),
        "factor applied to the GPU's L2 capacity (--l2-scale)",
    ),
    Quantity::new(
        SAMPLED,
        "sampled",
        "",
        None,
        "whether the launch was sampled (false: simulated exactly, too short to sample)",
    ),
    Quantity::new("kernel", "kernel", "", None, "the kernel's name"),
    Quantity::new("hw", "GPU", "", None, "the GPU configuration's name"),
    Quantity::new(
        "block_x",
        "block x",
        "threads",
        Some(Domain::COUNT),
        "threads per block in x",
    ),
    Quantity::new(
        "block_y",
        "block y",
        "threads",
        Some(Domain::COUNT),
        "threads per block in y",
    ),
    Quantity::new(
        "block_z",
        "block z",
        "threads",
        Some(Domain::COUNT),
        "threads per block in z",
    ),
    Quantity::new(
        "grid_x",
        "grid x",
        "blocks",
        Some(Domain::COUNT),
        "blocks in the grid in x",
    ),
    Quantity::new(
        "grid_y",
        "grid y",
        "blocks",
        Some(Domain::COUNT),
        "blocks in the grid in y",
    ),
    Quantity::new(
        "grid_z",
        "grid z",
        "blocks",
        Some(Domain::COUNT),
        "blocks in the grid in z",
    ),
    Quantity::new(
        "lattice_updates",
        "lattice updates",
        "LUP",
        COUNT,
        "points the kernel updates (the unit of B/LUP)",
    ),
    Quantity::new("blocks", "blocks", "blocks", COUNT, "blocks launched"),
    Quantity::new(
        "blocks_per_sm",
        "resident blocks per SM",
        "blocks",
        COUNT,
        "blocks one SM holds at once (occupancy limit)",
    ),
    Quantity::new(
        "occupancy",
        "occupancy",
        "1",
        RATE,
        "resident warps over the SM's maximum",
    ),
    Quantity::new(
        "waves",
        "waves",
        "1",
        Some(Domain::NON_NEGATIVE),
        "blocks launched over the blocks the GPU holds at once",
    ),
    Quantity::new(
        "l1_bytes",
        "L1 data capacity",
        "B",
        BYTES,
        "L1 bytes left for data after the shared-memory carveout",
    ),
    Quantity::new(
        "hit_rate_l1_load",
        "L1 load hit rate",
        "1",
        RATE,
        "fraction of load sectors that hit in L1",
    ),
    Quantity::new(
        "hit_rate_l2_near_read",
        "L2 near-partition hit rate",
        "1",
        RATE,
        "fraction of L2 reads that hit in the near partition",
    ),
    Quantity::new(
        "hit_rate_l2_read",
        "L2 read hit rate",
        "1",
        RATE,
        "fraction of L2 reads that do not go to DRAM",
    ),
    Quantity::new(
        "dirty_at_end_sectors",
        "dirty sectors at the end",
        "sectors",
        COUNT,
        "sectors still dirty in L2 when the kernel ends (not written back)",
    ),
    Quantity::new(
        "compulsory_l2_to_l1_read_sectors",
        "compulsory L2→L1 reads",
        "sectors",
        COUNT,
        "L2 reads with an infinite L1 (each block's distinct sectors)",
    ),
    Quantity::new(
        "compulsory_dram_to_l2_read_sectors",
        "compulsory DRAM reads",
        "sectors",
        COUNT,
        "DRAM reads with an infinite L2 (every distinct sector once)",
    ),
    Quantity::new(
        "time_dram_s",
        "DRAM time",
        "s",
        Some(Domain::NON_NEGATIVE),
        "DRAM bytes at the DRAM's sustained bandwidth",
    ),
    Quantity::new(
        "time_l2_s",
        "L2 time",
        "s",
        Some(Domain::NON_NEGATIVE),
        "L2 bytes at the L2's sustained bandwidth",
    ),
    Quantity::new(
        "time_l1_s",
        "L1 time",
        "s",
        Some(Domain::NON_NEGATIVE),
        "L1 wavefronts at one per SM cycle, plus the share of the DRAM time the L1 is held up for",
    ),
    Quantity::new(
        "time_fp_s",
        "arithmetic time",
        "s",
        Some(Domain::NON_NEGATIVE),
        "floating-point operations at peak throughput",
    ),
    Quantity::new(
        "time_issue_s",
        "issue time",
        "s",
        Some(Domain::NON_NEGATIVE),
        "the warps' instructions at the SMs' issue rate (warp_instructions_per_cycle per SM cycle)",
    ),
    Quantity::new(
        "time_launch_s",
        "launch time",
        "s",
        Some(Domain::NON_NEGATIVE),
        "the launch's blocks at the block dispatcher's rate (block_launch_ns each)",
    ),
    Quantity::new(
        "time_atomic_s",
        "atomic time",
        "s",
        Some(Domain::NON_NEGATIVE),
        "the atomics of the busiest L2 slice, applied one after another ([atomics])",
    ),
    Quantity::new(
        "time_atomic_sm_s",
        "SMs' atomic time",
        "s",
        Some(Domain::NON_NEGATIVE),
        "the atomic requests and sectors the SMs send the L2, one after another ([atomics] sm_request_cycles, sm_sector_cycles)",
    ),
    Quantity::new(
        "time_predicted_s",
        "predicted time",
        "s",
        Some(Domain::NON_NEGATIVE),
        "the time model's kernel time: bandwidth bound + latency + block turnover + launch overhead",
    ),
    Quantity::new(
        "time_latency_s",
        "latency term",
        "s",
        Some(Domain::NON_NEGATIVE),
        "latency the resident warps do not hide (part of the predicted time)",
    ),
    Quantity::new(
        "time_block_turnover_s",
        "block turnover",
        "s",
        Some(Domain::NON_NEGATIVE),
        "time lost while blocks after the first wave take over freed slots (part of the predicted time)",
    ),
    Quantity::new(
        "time_launch_overhead_s",
        "launch overhead",
        "s",
        Some(Domain::NON_NEGATIVE),
        "the launch's fixed overhead (part of the predicted time)",
    ),
    Quantity::new(
        "time_bandwidth_bound_s",
        "bandwidth bound",
        "s",
        Some(Domain::NON_NEGATIVE),
        "the longest limiter time: the time at full bandwidth",
    ),
    Quantity::new(
        "time_limiter",
        "limiter",
        "",
        None,
        "the level whose time bounds the kernel (dram, l2, l1, fp, issue, launch, atomic, latency)",
    ),
    Quantity::new(
        "time_adjusted_s",
        "occupancy-adjusted time",
        "s",
        Some(Domain::NON_NEGATIVE),
        "Su et al.'s (18): the bound scaled by waves and occupancy efficiency",
    ),
    Quantity::new(
        "clock_ghz",
        "SM clock",
        "GHz",
        Some(Domain::NON_NEGATIVE),
        "the SM clock of the time model",
    ),
    Quantity::new(
        "clock",
        "clock",
        "",
        None,
        "which clock clock_ghz is: base (the default, as Nsight Compute locks it), boost, only (the config's one) or given",
    ),
    Quantity::new(
        "lups_per_s",
        "throughput",
        "LUP/s",
        Some(Domain::NON_NEGATIVE),
        "lattice updates per second at the predicted time",
    ),
    Quantity::new(
        "model",
        "compared model",
        "",
        None,
        "the model of simulate --compare",
    ),
    Quantity::new(
        "predicted_time_s",
        "model's predicted time",
        "s",
        Some(Domain::NON_NEGATIVE),
        "the time model on the compared model's volumes",
    ),
    Quantity::new(
        "l1_v_up_bytes",
        "L1 V_up",
        "B",
        BYTES,
        "Ernst et al.'s V_up at L1: load sectors requested from L1",
    ),
    Quantity::new(
        "l1_v_comp_bytes",
        "L1 V_comp",
        "B",
        BYTES,
        "compulsory L1 volume: each block's distinct load sectors",
    ),
    Quantity::new(
        "l1_v_red_bytes",
        "L1 V_red",
        "B",
        BYTES,
        "redundant L1 volume: V_up − V_comp",
    ),
    Quantity::new(
        "l1_v_down_bytes",
        "L1 V_down",
        "B",
        BYTES,
        "L1 load misses, the volume requested from L2",
    ),
    Quantity::new(
        "l1_v_alloc_bytes",
        "L1 V_alloc",
        "B",
        BYTES,
        "128 B lines the resident blocks of one SM allocate",
    ),
    Quantity::new(
        "l1_v_cache_bytes",
        "L1 V_cache",
        "B",
        BYTES,
        "the L1's data capacity",
    ),
    Quantity::new(
        "l1_oversubscription",
        "L1 oversubscription O",
        "1",
        Some(Domain::NON_NEGATIVE),
        "Ernst et al.'s eq. (4): V_alloc / V_cache at L1",
    ),
    Quantity::new(
        "l1_redundant_hit_rate",
        "L1 redundant hit rate",
        "1",
        RATE,
        "hit rate in L1's redundant volume, 1 − (V_down − V_comp)/V_red; above 1 when blocks on one SM share lines",
    ),
    Quantity::new(
        "l2_v_up_bytes",
        "L2 V_up",
        "B",
        BYTES,
        "Ernst et al.'s V_up at L2: read sectors from the SMs",
    ),
    Quantity::new(
        "l2_v_comp_bytes",
        "L2 V_comp",
        "B",
        BYTES,
        "compulsory L2 volume: the DRAM reads of an infinite L2",
    ),
    Quantity::new(
        "l2_v_red_bytes",
        "L2 V_red",
        "B",
        BYTES,
        "redundant L2 volume: V_up − V_comp",
    ),
    Quantity::new("l2_v_down_bytes", "L2 V_down", "B", BYTES, "DRAM reads"),
    Quantity::new(
        "l2_v_alloc_bytes",
        "L2 V_alloc",
        "B",
        BYTES,
        "lines one wave of blocks allocates (loads and stores)",
    ),
    Quantity::new(
        "l2_v_cache_bytes",
        "L2 V_cache",
        "B",
        BYTES,
        "one partition's share of the L2",
    ),
    Quantity::new(
        L2_OVERSUBSCRIPTION,
        "L2 oversubscription O",
        "1",
        Some(Domain::NON_NEGATIVE),
        "Ernst et al.'s eq. (4): V_alloc / V_cache at L2",
    ),
    Quantity::new(
        L2_REDUNDANT_HIT_RATE,
        "L2 redundant hit rate",
        "1",
        RATE,
        "hit rate in L2's redundant volume, 1 − (V_down − V_comp)/V_red",
    ),
    Quantity::new(
        SU_SMX_MISS_RATIO,
        "Su SMX miss ratio",
        "1",
        Some(Domain::NON_NEGATIVE),
        "Su et al.'s (7) solved for the simulation: L2 loads per block / net volume − 1; below 0 the L1 moves less than the model's net volume",
    ),
    Quantity::new(
        SU_L2_MISS_RATIO,
        "Su L2 miss ratio",
        "1",
        Some(Domain::NON_NEGATIVE),
        "Su et al.'s (11) solved for the simulation: DRAM loads per group / net volume − 1; below 0 the L2 moves less than the net volume",
    ),
    Quantity::new(
        SU_SMX_CAPACITY_TERM,
        "Su SMX capacity term",
        "1",
        Some(Domain::NON_NEGATIVE),
        "the factor of δ in Su et al.'s (8)/(17)",
    ),
    Quantity::new(
        SU_SMX_SCHEDULING_TERM,
        "Su SMX scheduling term",
        "1",
        Some(Domain::NON_NEGATIVE),
        "the factor of η in Su et al.'s (17)",
    ),
    Quantity::new(
        SU_L2_CAPACITY_TERM,
        "Su L2 capacity term",
        "1",
        Some(Domain::NON_NEGATIVE),
        "the factor of ε in Su et al.'s (15)",
    ),
];

/// The volumes a model predicts (`PredictedVolumes` of src/models/mod.rs), each a sweep column
/// `<model>_<name>` and a `simulate --compare` column `predicted_<name>` (with `rel_diff_<name>`).
pub const PREDICTED_QUANTITIES: &[Quantity] = &[
    Quantity::new(
        "l1_load_bytes",
        "L1 load volume",
        "B",
        BYTES,
        "load sectors requested from L1, × 32 B",
    ),
    Quantity::new(
        "l2_load_bytes",
        "L2→L1 load volume",
        "B",
        BYTES,
        "load traffic from L2 to the SMs",
    ),
    Quantity::new(
        "l2_store_bytes",
        "L1→L2 store volume",
        "B",
        BYTES,
        "store traffic from the SMs into L2",
    ),
    Quantity::new(
        "dram_load_bytes",
        "DRAM load volume",
        "B",
        BYTES,
        "bytes read from DRAM",
    ),
    Quantity::new(
        "dram_store_bytes",
        "DRAM store volume",
        "B",
        BYTES,
        "bytes written to DRAM",
    ),
    Quantity::new(
        "time_s",
        "predicted time",
        "s",
        Some(Domain::NON_NEGATIVE),
        "the time model on the predicted volumes",
    ),
];

/// What the sweep (or `simulate --format csv`) column `column` is, or `None` for a name no
/// table knows. Fixed names come from [`COLUMN_QUANTITIES`] and [`METRIC_QUANTITIES`]; the
/// patterns are `param_NAME` and `set_NAME` (kernel parameters), `METRIC_bytes_per_lup`,
/// `METRIC_ci95_lo`/`_hi`, `predicted_VOLUME` and `rel_diff_VOLUME`. A model's own columns
/// (`MODEL_VOLUME`) are the models' to describe: `describe_column` in src/models/mod.rs adds them.
pub fn describe(column: &str) -> Option<Quantity> {
    let fixed = |table: &[Quantity]| table.iter().find(|q| q.name == column).cloned();
    if let Some(q) = fixed(COLUMN_QUANTITIES).or_else(|| fixed(METRIC_QUANTITIES)) {
        return Some(q);
    }
    let owned = |label: String, unit, range, meaning: String| Quantity {
        name: Cow::Owned(column.to_string()),
        label: Cow::Owned(label),
        unit,
        meaning: Cow::Owned(meaning),
        range,
    };
    let metric = |name: &str| METRIC_QUANTITIES.iter().find(|q| q.name == name);
    if let Some(m) = column.strip_suffix(BYTES_PER_LUP_SUFFIX).and_then(metric) {
        return Some(owned(
            format!("{} per update", m.label),
            "B/LUP",
            BYTES,
            format!("{} × 32 B over the lattice updates", m.name),
        ));
    }
    for (suffix, end) in [("_ci95_lo", "low"), ("_ci95_hi", "high")] {
        if let Some(m) = column.strip_suffix(suffix).and_then(metric) {
            return Some(owned(
                format!("{} (95% {end})", m.label),
                m.unit,
                m.range,
                format!("{end} end of the sampled {}'s 95% interval", m.name),
            ));
        }
    }
    for (prefix, what) in [("param_", "as launched"), ("set_", "as set by --set")] {
        if let Some(p) = column.strip_prefix(prefix).filter(|p| !p.is_empty()) {
            return Some(owned(
                p.to_string(),
                "1",
                None,
                format!("kernel parameter {p}, {what}"),
            ));
        }
    }
    let predicted = |name: &str| PREDICTED_QUANTITIES.iter().find(|q| q.name == name);
    if let Some(v) = column.strip_prefix("predicted_").and_then(predicted) {
        return Some(owned(
            format!("model's {}", v.label),
            v.unit,
            v.range,
            format!("the compared model's {}", v.meaning),
        ));
    }
    if let Some(v) = column.strip_prefix("rel_diff_").and_then(predicted) {
        return Some(owned(
            format!("{} error", v.label),
            "1",
            None,
            format!("(predicted − simulated) / simulated {}", v.name),
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_shifts_agree() {
        assert_eq!(1 << SECTOR_SHIFT, SECTOR_BYTES);
        assert_eq!(1 << LINE_SHIFT, LINE_BYTES);
        assert_eq!(SECTORS_PER_LINE as u64, LINE_BYTES / SECTOR_BYTES);
        assert_eq!(sector_bytes(3), 96.0);
    }

    #[test]
    fn misspellings_of_modelled_metrics_are_told_from_other_ncu_metrics() {
        // The column, a case slip, a missing rollup, a dropped and a swapped letter.
        for (typo, meant) in [
            ("dram_sectors_read.sum", DRAM_READ),
            ("DRAM__sectors_read.sum", DRAM_READ),
            ("dram__sectors_read", DRAM_READ),
            ("dram__sectors_read_sum", DRAM_READ),
            ("dram__sector_read.sum", DRAM_READ),
            (
                "lts__t_sectors_srcunit_tex_op_read_lookup_mis.sum",
                L2_READ_MISS,
            ),
            ("gpu__time_duraiton.sum", DURATION),
        ] {
            assert_eq!(misspelt_metric(typo), Some(meant), "{typo}");
        }
        // Modelled names, and real ncu metrics next to them: another rollup, the request count
        // one letter from the atomics' sector count, stores beside loads, local beside global,
        // hits beside misses, bytes beside sectors; and metrics far from every modelled name.
        for real in modelled().chain([
            "dram__sectors_read.avg",
            "lts__t_requests_srcunit_tex_op_read.sum",
            "lts__t_sectors_srcunit_tex_op_red_lookup_miss.sum",
            "l1tex__t_sectors_pipe_lsu_mem_global_op_st_lookup_miss.sum",
            "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
            "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
            "dram__bytes_read.sum",
            "sm__warps_active.avg.pct_of_peak_sustained_active",
            "launch__occupancy_limit_blocks",
        ]) {
            assert_eq!(misspelt_metric(real), None, "{real}");
        }
    }

    #[test]
    fn metric_looking_names_have_a_double_underscore_or_a_dot() {
        assert!(looks_like_metric("launch__waves_per_multiprocessor"));
        assert!(looks_like_metric("dram_sectors_read.sum"));
        assert!(!looks_like_metric("kernel_fn") && !looks_like_metric("notes"));
    }

    #[test]
    fn the_spelled_out_column_is_the_derived_one() {
        assert_eq!(DRAM_READ_BYTES_PER_LUP, bytes_per_lup_column(DRAM_READ));
    }
}
