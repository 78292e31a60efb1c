//! Traffic per array and per access of the trace (`simulate --by-array`), counted by the
//! simulator itself: the L1's counters per access as each warp instruction is served (an
//! instruction reads or writes one access, so the counters it changes are that access's), and the
//! L2's and DRAM's per array as each request is replayed (a request is for one line, and arrays
//! occupy disjoint lines, so the line's array is the request's). A write-back is the evicted
//! line's array's, whichever request evicted it. What the L2 adds once it knows how long a tick
//! lasts (near misses of the split L2's races, reads the coalescer merges) is worked out per array
//! from each array's own logged gaps, and rounded so that the arrays add up to the total.
//!
//! Off unless asked for ([`crate::sim::SimOptions::by_array`]); off, it costs the counting stages
//! one branch per warp instruction and one per L2 request.

use crate::launch::Launch;
use crate::metrics::LINE_SHIFT;
use crate::sim::counters::{Counts, DramCounters, L1Counters, L2Counters};
use crate::sim::l2::{MergeGaps, RaceGaps};

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

/// The trace's name of an access kind.
fn kind_name(kind: crate::input::trace::AccessKind) -> &'static str {
    use crate::input::trace::AccessKind::*;
    match kind {
        Load => "load",
        Store => "store",
        Atomic => "atomic",
        SharedLoad => "shared_load",
        SharedStore => "shared_store",
    }
}

/// Finds the array of a line: the first lines of the arrays, ascending (arrays are separate
/// allocations on the allocation granularity, so no line holds two).
#[derive(Debug, Clone)]
pub struct ArrayOfLine {
    first_lines: Vec<u64>,
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

/// Splits the whole `total` into parts near `shares` (which add up to about `total`): each part
/// is its share plus the difference between `total` and the shares' sum spread in proportion to
/// the shares' sizes, rounded by largest remainders (ties to the lower index), so that the parts
/// add up to `total` exactly. Without any share, all goes to the first part.
pub fn apportion(total: i64, shares: &[f64]) -> Vec<i64> {
    if shares.is_empty() {
        return Vec::new();
    }
    let size: f64 = shares.iter().map(|s| s.abs()).sum();
    if size == 0.0 || !size.is_finite() {
        let mut out = vec![0; shares.len()];
        out[0] = total;
        return out;
    }
    let gap = total as f64 - shares.iter().sum::<f64>();
    let ideal: Vec<f64> = shares.iter().map(|s| s + gap * s.abs() / size).collect();
    let mut out: Vec<i64> = ideal.iter().map(|x| x.floor() as i64).collect();
    let left = total - out.iter().sum::<i64>();
    let mut order: Vec<usize> = (0..shares.len()).collect();
    order.sort_by(|&a, &b| {
        let (ra, rb) = (ideal[a] - ideal[a].floor(), ideal[b] - ideal[b].floor());
        rb.total_cmp(&ra).then(a.cmp(&b))
    });
    // `left` is within 0..n but for rounding of the sums; either way the parts end at `total`.
    let step = left.signum();
    let mut at = if step < 0 { order.len() - 1 } else { 0 };
    for _ in 0..left.abs() {
        out[order[at]] += step;
        at = if step < 0 {
            at.checked_sub(1).unwrap_or(order.len() - 1)
        } else {
            (at + 1) % order.len()
        };
    }
    out
}

/// What the L2 adds to its totals once it knows how long a tick lasts, and each array's share:
/// the near misses of the split L2's races and the reads the request coalescer merges (negative).
pub struct Corrections {
    /// Each array's share of the races' change to the near misses.
    pub miss_shares: Vec<f64>,
    /// The change the total took, in sectors.
    pub miss_total: i64,
    /// Each array's share of the merged reads' change to the reads (negative).
    pub read_shares: Vec<f64>,
    /// The change the total took.
    pub read_total: i64,
}

/// Assembles the [`ByArray`] of a launch from the L1's per-access counters and the L2's tally,
/// applying `corrections` as the totals took them.
pub fn assemble(
    launch: &Launch,
    by_access: &[L1Counters],
    l2: &L2Tally,
    corrections: &Corrections,
) -> ByArray {
    let mut arrays: Vec<(String, Counts)> = launch
        .arrays
        .iter()
        .map(|a| (a.name.clone(), Counts::default()))
        .collect();
    let steps = launch.program.flattened();
    for (step, l1) in steps.iter().zip(by_access) {
        if !step.kind.is_shared() {
            arrays[step.array].1.l1.add(l1);
        }
    }
    let misses = apportion(corrections.miss_total, &corrections.miss_shares);
    let reads = apportion(corrections.read_total, &corrections.read_shares);
    for (i, (_, c)) in arrays.iter_mut().enumerate() {
        let (l2c, dram) = l2.counts[i];
        c.l2 = l2c;
        c.dram = dram;
        c.l2.read_lookup_miss_sectors =
            c.l2.read_lookup_miss_sectors
                .saturating_add_signed(misses[i]);
        c.l2.read_sectors = c.l2.read_sectors.saturating_add_signed(reads[i]);
    }
    let accesses = steps
        .iter()
        .zip(by_access)
        .map(|(step, l1)| AccessCounts {
            kind: kind_name(step.kind),
            array: launch.array_of(step).name.clone(),
            index: step.index_text.clone(),
            l1: *l1,
        })
        .collect();
    ByArray { arrays, accesses }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apportion_adds_up_and_gives_the_remainders_to_the_largest_fractions() {
        assert_eq!(apportion(10, &[2.5, 2.5, 5.0]), vec![3, 2, 5]);
        assert_eq!(apportion(-7, &[-3.5, -3.5]), vec![-3, -4]);
        // The total rounded up from 2.8: the gap of 0.2 spread by size, then remainders.
        assert_eq!(apportion(3, &[0.6, 1.5, 0.7]), vec![1, 1, 1]);
        // Shares of both signs keep their own: 12 - 4 = 8.
        assert_eq!(apportion(8, &[12.2, -4.2]), vec![12, -4]);
        assert_eq!(apportion(5, &[0.0, 0.0]), vec![5, 0]);
        assert_eq!(apportion(0, &[0.4, 0.2]), vec![0, 0]);
        let parts = apportion(1234, &[0.31, 0.0, 7.9, 1e-9]);
        assert_eq!(parts.iter().sum::<i64>(), 1234);
    }

    #[test]
    fn a_line_belongs_to_the_last_array_starting_at_or_before_it() {
        let arrays = ArrayOfLine {
            first_lines: vec![16, 100, 4000],
        };
        assert_eq!(arrays.array(16), 0);
        assert_eq!(arrays.array(99), 0);
        assert_eq!(arrays.array(100), 1);
        assert_eq!(arrays.array(3999), 1);
        assert_eq!(arrays.array(1 << 30), 2);
    }
}
