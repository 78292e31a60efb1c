//! The L2 slices' share of a launch's atomics: each slice applies the atomic requests on the
//! lines it holds one after another ([`AtomicsConfig`]), so the slice with the most work sets a
//! floor under the launch's time however many slices idle (the time model's `atomic` limiter).
//! The SMs tally each atomic request by the slice of its line; the busiest slice's tally is
//! what a simulation reports ([`crate::sim::Counts::atomic_busiest_slice`]).

use crate::input::hw::AtomicsConfig;

/// Per slice: atomic requests, their sectors of 1- to 4-byte operations and of 8-byte ones,
/// and the requests of float adds that take the add's latency rather than their sectors' time
/// (kept apart: [`AtomicsConfig::slice_ns`]).
#[derive(Debug, Clone)]
pub struct SliceTally {
    config: AtomicsConfig,
    per_slice: Vec<[u64; 4]>,
}

impl SliceTally {
    /// An empty tally over `config`'s slices.
    pub fn new(config: AtomicsConfig) -> SliceTally {
        SliceTally {
            config,
            per_slice: vec![[0; 4]; config.slices.max(1) as usize],
        }
    }

    /// One atomic request on `sectors` sectors of `line`, of `bytes`-byte operations, adding
    /// floating-point values when `float`.
    #[inline]
    pub fn add(&mut self, line: u64, sectors: u32, bytes: u32, float: bool) {
        let wide = bytes > 4;
        let c = &self.config;
        let t = &mut self.per_slice[c.slice(line)];
        if float && c.request_ns(sectors, wide) < c.float_update_ns {
            t[3] += 1;
        } else {
            t[0] += 1;
            t[if wide { 2 } else { 1 }] += sectors as u64;
        }
    }

    /// Adds `other`'s tallies, slice by slice.
    pub fn merge(&mut self, other: &SliceTally) {
        for (t, o) in self.per_slice.iter_mut().zip(&other.per_slice) {
            for (a, b) in t.iter_mut().zip(o) {
                *a += b;
            }
        }
    }

    /// The tally of the slice that takes longest (the first of equals; zeros without atomics).
    pub fn busiest(&self) -> [u64; 4] {
        let ns = |t: &[u64; 4]| self.config.slice_ns(t.map(|n| n as f64));
        let mut best = [0; 4];
        for t in &self.per_slice {
            if ns(t) > ns(&best) {
                best = *t;
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h200_like() -> AtomicsConfig {
        AtomicsConfig {
            slices: 94,
            slice_bytes: 256,
            request_ns: 0.2,
            sector_ns: 0.55,
            wide_sector_ns: 1.1,
            float_update_ns: 1.8,
            sm_request_cycles: None,
            sm_sector_cycles: None,
        }
    }

    /// Distinct slices that `lines` consecutive lines from 0 fall in.
    fn slices_of(lines: u64) -> usize {
        let c = h200_like();
        let mut s: Vec<usize> = (0..lines).map(|l| c.slice(l)).collect();
        s.sort_unstable();
        s.dedup();
        s.len()
    }

    #[test]
    fn consecutive_lines_spread_over_slices_as_the_h200s_atomics_did() {
        // validation/atomics_contention.cu, `lanes`: 1 and 2 lines run at one slice's pace,
        // 4 and 8 lines at two slices', 16 at four, 32 at eight.
        let measured = [(1, 1), (2, 1), (4, 2), (8, 2), (16, 4), (32, 8)];
        for (lines, slices) in measured {
            assert_eq!(slices_of(lines), slices, "{lines} lines");
        }
        // A wide span covers every slice.
        assert_eq!(slices_of(4096), 94);
    }

    #[test]
    fn the_busiest_slice_is_the_one_with_the_longest_time_and_tallies_merge() {
        let mut a = SliceTally::new(h200_like());
        // Line 0: three one-sector requests; line 2 (another slice): one of four sectors of
        // doubles, 0.2 + 4.4 ns against 3 * 0.75.
        for _ in 0..3 {
            a.add(0, 1, 4, false);
        }
        a.add(2, 4, 8, false);
        assert_eq!(a.busiest(), [1, 0, 4, 0]);
        let mut b = SliceTally::new(h200_like());
        for _ in 0..4 {
            b.add(1, 1, 4, false);
        }
        a.merge(&b);
        // Line 1 shares line 0's slice: seven requests of one sector, 5.25 ns.
        assert_eq!(a.busiest(), [7, 7, 0, 0]);
        assert_eq!(SliceTally::new(h200_like()).busiest(), [0, 0, 0, 0]);
    }

    #[test]
    fn a_float_add_takes_at_least_the_adds_latency_and_more_sectors_their_own_time() {
        let mut t = SliceTally::new(h200_like());
        // one sector of floats: 0.75 ns of sectors, 1.8 of latency
        t.add(0, 1, 4, true);
        assert_eq!(t.busiest(), [0, 0, 0, 1]);
        // four sectors: 2.4 ns, above the latency
        let mut u = SliceTally::new(h200_like());
        u.add(0, 4, 4, true);
        assert_eq!(u.busiest(), [1, 4, 0, 0]);
        assert!((h200_like().slice_ns([1.0, 4.0, 0.0, 2.0]) - (0.2 + 2.2 + 3.6)).abs() < 1e-12);
    }
}
