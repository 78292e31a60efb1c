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
                /// Bank conflicts of the shared loads: their wavefronts beyond the conflict-free
                /// count.
                shared_load_bank_conflicts: [SHARED_LD_BANK_CONFLICTS] shared address;
                /// Bank conflicts of the shared stores.
                shared_store_bank_conflicts: [SHARED_ST_BANK_CONFLICTS] shared address;
                /// L1 data-stage wavefronts, what the time model's L1 limiter counts:
                /// `data_passes` plus what `sim::data_stage::extra_wavefronts` adds for the
                /// launch and the shared wavefronts; set when the simulation ends.
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
