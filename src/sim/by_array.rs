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
pub use crate::sim::counters::{AccessCounts, ByArray};
use crate::sim::counters::{Counts, L1Counters};
pub use crate::sim::l2::{ArrayOfLine, L2Tally};

/// The trace's name of an access kind.
fn kind_name(kind: crate::input::trace::AccessKind) -> &'static str {
    use crate::input::trace::AccessKind::*;
    match kind {
        Load => "load",
        Store => "store",
        Atomic => "atomic",
        SharedLoad => "shared_load",
        SharedStore => "shared_store",
        Shuffle => "shuffle",
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
        if step.kind.is_global() {
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
