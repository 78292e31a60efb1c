//! What a simulation counts ([`Counts`]) and the counter structs of the simulator, derived from the one table of counters
//! (`metrics::counter_table!`): `L1Counters`, `L2Counters` and `DramCounters` with their `add`
//! and `minus`, each counter's value in table order ([`values`], what the report reads) and the
//! sampler's vector of fields ([`fields_mut`]). Nothing here names a counter: a new one is a row
//! of the table.

use crate::metrics::{COUNTERS, Sampling, counter_table};
use crate::sim::queueing::TimeInputs;

/// Everything a simulation counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    /// L1 counters summed over SMs.
    pub l1: L1Counters,
    /// L2 counters.
    pub l2: L2Counters,
    /// DRAM traffic during the kernel.
    pub dram: DramCounters,
    /// The atomics of the L2 slice that takes longest to apply its share
    /// ([`crate::sim::atomic_slices`]): requests, sectors of 1- to 4-byte operations, sectors
    /// of 8-byte ones (those three of requests taking their sectors' time), and requests of
    /// float adds that take the add's latency instead. Zeros without atomics, or where the
    /// config does not say how the slices take them.
    pub atomic_busiest_slice: [u64; 4],
    /// Dirty sectors left in L2 at kernel end.
    pub dirty_at_end_sectors: u64,
    /// Of the DRAM reads, those of the launch itself, not of its data
    /// ([`crate::sim::launch_read_sectors`]): left out where the reads stand for the data's
    /// misses (the L2's hit rate, the models' volumes).
    pub launch_read_sectors: u64,
    /// Compulsory L2→DRAM read sectors (infinite L2), if tracked.
    pub compulsory_dram_read_sectors: Option<u64>,
    /// Ticks the launch took in the timing model.
    pub ticks: u64,
    /// Warp instructions issued.
    pub warp_instructions: u64,
    /// Lane accesses (thread accesses) simulated.
    pub thread_accesses: u64,
    /// Warps with at least one active lane.
    pub active_warps: u64,
    /// Warps launched (every block's, guarded-off ones too).
    pub warps_launched: u64,
    /// Rounds of loads the warps wait for, all warps together
    /// ([`crate::launch::stream::StreamTotals::load_rounds`]; the time model's delay).
    pub load_rounds: u64,
    /// The traffic per array and per access, when asked for ([`crate::sim::SimOptions::by_array`]).
    pub by_array: Option<Box<ByArray>>,
}

impl Counts {
    /// The DRAM reads of the launch's data, without the launch's own
    /// ([`Counts::launch_read_sectors`]): what the L2's misses stand for.
    pub fn data_dram_read_sectors(&self) -> u64 {
        self.dram.read_sectors - self.launch_read_sectors
    }

    /// What the time model needs from the counts, without the floating-point work (which needs
    /// the kernel's description, not only its launch).
    pub fn time_inputs(&self) -> TimeInputs {
        use crate::metrics::sector_bytes;
        let rounds_per_warp = self.rounds_per_warp();
        TimeInputs {
            dram_bytes: Some(sector_bytes(
                self.dram.read_sectors + self.dram.write_sectors,
            )),
            dram_read_bytes: Some(sector_bytes(self.dram.read_sectors)),
            l2_bytes: Some(sector_bytes(self.l2.read_sectors + self.l2.write_sectors)),
            // a byte-based L1 limiter (`bandwidth.l1_gbs`) also moves one pass of the 128-byte
            // data array per shared wavefront (shared memory and the L1 are one storage)
            l1_bytes: Some(
                sector_bytes(self.l1.load_sectors + self.l1.store_sectors)
                    + ((self.l1.shared_load_wavefronts + self.l1.shared_store_wavefronts)
                        * crate::metrics::LINE_BYTES) as f64,
            ),
            // shared wavefronts are in the total: they take the same data pipe
            l1_wavefronts: Some(self.l1.wavefronts as f64),
            active_warps: Some(self.active_warps as f64),
            rounds_per_warp,
            loads_per_round: Some(
                self.l1.load_requests as f64 / self.active_warps.max(1) as f64 / rounds_per_warp,
            ),
            l2_partial_write_sectors: Some(
                self.l1
                    .store_partial_sectors
                    .saturating_sub(self.l1.store_partial_sectors_merged) as f64,
            ),
            l2_partial_write_requests: Some(
                self.l1
                    .store_partial_lines
                    .saturating_sub(self.l1.store_partial_lines_merged) as f64,
            ),
            sectors_left_partial: Some(self.l2.sectors_left_partial as f64),
            partial_sectors_across_sms: Some(self.l2.partial_sectors_across_sms as f64),
            atomic_busiest_slice: self
                .atomic_busiest_slice
                .iter()
                .any(|&n| n > 0)
                .then(|| self.atomic_busiest_slice.map(|n| n as f64)),
            atomic_requests: (self.l2.atomic_requests > 0)
                .then(|| [self.l2.atomic_requests, self.l2.atomic_sectors].map(|n| n as f64)),
            ..Default::default()
        }
    }

    /// Mean rounds of loads of the active warps, at least one: each round is one more wait for
    /// loads issued together (a loop whose body ends in a store: one per trip). Counted on the
    /// warps' instruction streams ([`crate::launch::stream::StreamTotals`]), so a program gives the same however it is
    /// written (loops, `if`s that always hold, or unrolled).
    fn rounds_per_warp(&self) -> f64 {
        if self.active_warps == 0 {
            return 1.0;
        }
        (self.load_rounds as f64 / self.active_warps as f64).max(1.0)
    }
}

/// The structs, `add`, `minus`, [`values`] and [`fields_mut`] from the table's rows.
macro_rules! counter_structs {
    ($($(#[$sdoc:meta])* $level:ident $Struct:ident {
        $($(#[$doc:meta])* $field:ident : [$($metric:ident)?] $report:ident $sample:ident $(($of:ident))?;)*
    })*) => {
        $(
            $(#[$sdoc])*
            #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
            pub struct $Struct {
                $($(#[$doc])* pub $field: u64,)*
            }

            impl $Struct {
                /// Adds another SM's or shard's counters.
                pub fn add(&mut self, o: &$Struct) {
                    $(self.$field += o.$field;)*
                }

                /// These counters less `o` (counters taken earlier from the same SM or shard).
                pub fn minus(&self, o: &$Struct) -> $Struct {
                    $Struct {
                        $($field: self.$field - o.$field,)*
                    }
                }
            }
        )*

        /// Every counter's value in `c`, in table order ([`COUNTERS`]).
        pub fn values(c: &Counts) -> [u64; COUNTERS.len()] {
            [$($(c.$level.$field,)*)*]
        }

        /// The sampled counters of `c` ([`Sampling`] other than `Derived`) in table order, and
        /// its ticks.
        fn sampled_and_ticks(c: &mut Counts) -> (Vec<&mut u64>, &mut u64) {
            let Counts { $($level,)* ticks, .. } = c;
            let mut out = Vec::with_capacity(SAMPLED);
            $($(push_sampled!(out, $level.$field, $sample);)*)*
            (out, ticks)
        }
    };
}

/// Pushes `&mut place` onto `out` unless the counter is derived (not sampled).
macro_rules! push_sampled {
    ($out:ident, $place:expr, derived) => {};
    ($out:ident, $place:expr, $sample:ident) => {
        $out.push(&mut $place)
    };
}

counter_table!(counter_structs);

/// How many counters a sampled simulation samples (all but the derived ones).
pub const SAMPLED: usize = {
    let mut n = 0;
    let mut i = 0;
    while i < COUNTERS.len() {
        if !matches!(COUNTERS[i].sampling, Sampling::Derived) {
            n += 1;
        }
        i += 1;
    }
    n
};

/// The sampler's vector of places in `c`: the sampled counters in table order, then the
/// compulsory volume (`compulsory`, a stand-in for the optional count) and the ticks.
pub fn fields_mut<'a, const N: usize>(
    c: &'a mut Counts,
    compulsory: &'a mut u64,
) -> [&'a mut u64; N] {
    let (mut all, ticks) = sampled_and_ticks(c);
    all.push(compulsory);
    all.push(ticks);
    all.try_into()
        .unwrap_or_else(|v: Vec<_>| panic!("{} sampled fields, not {N}", v.len()))
}

/// What each array and each access of the trace cost (the arrays add up to the launch's totals).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ByArray {
    /// Per global array, in the trace's order: its name and its counts (the L1's, the L2's and
    /// DRAM's; the other fields zero).
    pub arrays: Vec<(String, Counts)>,
    /// Per access of the trace, in the trace's order (global and shared), its L1 counters.
    pub accesses: Vec<AccessCounts>,
}

/// One access of the trace and what the L1 counted for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessCounts {
    /// `load`, `store`, `atomic`, `shared_load` or `shared_store`.
    pub kind: &'static str,
    /// The array's name (a `[[shared]]` one for shared accesses).
    pub array: String,
    /// The index as written in the trace.
    pub index: String,
    /// Its L1 counters.
    pub l1: L1Counters,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::*;
    use crate::sim::sample;

    #[test]
    fn the_table_reports_the_nsight_names_in_hierarchy_order() {
        assert_eq!(
            ALL,
            [
                L1_LD_REQUESTS,
                L1_LD_SECTORS,
                L1_LD_MISS,
                L1_ST_REQUESTS,
                L1_ST_SECTORS,
                L1_WAVEFRONTS,
                L2_READ,
                L2_WRITE,
                L2_READ_MISS,
                L2_FABRIC,
                DRAM_READ,
                DRAM_WRITE,
            ]
        );
        assert_eq!(
            ATOMIC,
            [L1_RED_REQUESTS, L1_RED_SECTORS, L2_RED_REQUESTS, L2_RED]
        );
    }

    #[test]
    fn values_and_the_sampled_fields_follow_the_table() {
        let mut c = Counts::default();
        let mut compulsory = 0;
        let places: [&mut u64; sample::FIELDS] = fields_mut(&mut c, &mut compulsory);
        for (i, p) in places.into_iter().enumerate() {
            *p = i as u64 + 1;
        }
        // Twenty-six L1 counters (seventeen of global accesses, seven of shared memory, the
        // shuffles, the predicated-off instructions; wavefronts is derived, not sampled), nine
        // L2, two DRAM, then the compulsory volume and the ticks.
        assert_eq!((sample::FIELDS, sample::L1_FIELDS), (39, 26));
        assert_eq!((c.l1.load_requests, c.l1.store_partial_sectors), (1, 6));
        assert_eq!(c.l1.store_partial_sectors_merged, 7);
        assert_eq!(
            (c.l1.store_partial_lines, c.l1.store_partial_lines_merged),
            (8, 9)
        );
        assert_eq!(
            (c.l1.load_partial_lines, c.l1.load_in_flight_lines),
            (13, 14)
        );
        assert_eq!(c.l1.atomic_sectors, 17);
        assert_eq!(
            (c.l1.shared_load_requests, c.l1.shared_store_bank_conflicts),
            (18, 24)
        );
        assert_eq!(c.l1.shared_store_bytes, 22);
        assert_eq!((c.l1.shuffles, c.l1.predicated_off), (25, 26));
        assert_eq!(c.l1.wavefronts, 0);
        assert_eq!((c.l2.read_sectors, c.l2.write_sectors), (27, 28));
        assert_eq!(
            (c.l2.read_lookup_miss_sectors, c.l2.atomic_sectors),
            (29, 35)
        );
        assert_eq!(
            (c.l2.sectors_left_partial, c.l2.partial_sectors_across_sms),
            (31, 32)
        );
        assert_eq!(c.l2.sectors_made_dirty, 33);
        assert_eq!((c.dram.read_sectors, c.dram.write_sectors), (36, 37));
        assert_eq!((compulsory, c.ticks), (38, 39));
        c.l1.wavefronts = 99;
        let by_name = |level: &str, field: &str| {
            let at = COUNTERS
                .iter()
                .position(|k| k.level == level && k.field == field)
                .unwrap();
            values(&c)[at]
        };
        assert_eq!(by_name("l1", "store_sectors"), 5);
        assert_eq!(by_name("l1", "wavefronts"), 99);
        assert_eq!(by_name("l2", "fabric_sectors"), 30);
        assert_eq!(by_name("dram", "write_sectors"), 37);
        assert_eq!(by_name("l2", "partial_sectors_across_sms"), 32);
        // The places the sampler treats apart: what the addresses decide, the instructions (the
        // shared ones, the shuffles and the predicated-off ones too).
        assert_eq!(
            sample::ADDRESS_FIELDS,
            [
                0, 1, 3, 4, 5, 7, 9, 10, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25
            ]
        );
    }

    #[test]
    fn add_and_minus_cover_every_field() {
        let mut a = L1Counters {
            load_requests: 3,
            wavefronts: 7,
            ..L1Counters::default()
        };
        let b = L1Counters {
            load_requests: 2,
            data_passes: 5,
            ..L1Counters::default()
        };
        a.add(&b);
        assert_eq!((a.load_requests, a.data_passes, a.wavefronts), (5, 5, 7));
        assert_eq!(a.minus(&b).load_requests, 3);
        let mut d = DramCounters {
            read_sectors: 1,
            write_sectors: 2,
        };
        d.add(&d.clone());
        assert_eq!((d.read_sectors, d.write_sectors), (2, 4));
    }
}
