//! Static re-reference interval prediction (Jaleel et al., ISCA 2010), 2-bit: a line enters with
//! a long predicted re-reference, a hit predicts a near one, and the victim is a line predicted
//! distant, every line of the set aging until one is.

/// SRRIP keeps each set to itself.
pub const SETS_ARE_INDEPENDENT: bool = true;

/// The largest re-reference prediction: the next victim.
const DISTANT: u8 = 3;

/// The re-reference prediction of every way.
#[derive(Debug, Clone)]
pub struct Srrip {
    /// Per slot, 0 (near) to [`DISTANT`].
    rrpv: Vec<u8>,
    ways: usize,
}

impl Srrip {
    /// An empty cache of `sets` sets of `ways` ways.
    pub fn new(sets: usize, ways: usize) -> Srrip {
        Srrip {
            rrpv: vec![0; sets * ways],
            ways,
        }
    }

    /// A hit predicts a near re-reference.
    #[inline(always)]
    pub fn on_hit(&mut self, slot: usize) {
        self.rrpv[slot] = 0;
    }

    /// A new line is predicted long: one aging from distant.
    #[inline(always)]
    pub fn on_fill(&mut self, slot: usize) {
        self.rrpv[slot] = DISTANT - 1;
    }

    /// The first way predicted distant in the set starting at `start`, after aging the set
    /// just enough that one is.
    #[inline]
    pub fn victim(&mut self, start: usize) -> usize {
        let rrpv = &mut self.rrpv[start..start + self.ways];
        let oldest = *rrpv.iter().max().unwrap();
        if oldest < DISTANT {
            for v in rrpv.iter_mut() {
                *v += DISTANT - oldest;
            }
        }
        start + rrpv.iter().position(|&v| v == DISTANT).unwrap()
    }
}

#[cfg(test)]
mod tests {
    use crate::input::hw::{Replacement, SetIndexing};
    use crate::sim::cache::{Cache, Geometry};

    #[test]
    fn srrip_keeps_a_line_that_was_hit_while_lines_never_hit_come_and_go() {
        let mut c = Cache::new(Geometry {
            sets: 1,
            ways: 4,
            replacement: Replacement::Srrip,
            indexing: SetIndexing::Modulo,
            pair_bit: None,
            matrix: None,
        });
        c.insert(0);
        assert!(c.access(0).is_some()); // predicted near (0); the lines after it long (2)
        for line in 1..4 {
            c.insert(line);
        }
        // Hand-traced: the set ages until a line is predicted distant, so lines 1-3 go first,
        // then the next two newcomers; under LRU line 0 would be the first victim.
        let victims: Vec<u64> = (4..11).map(|l| c.insert(l).1.unwrap().line).collect();
        assert_eq!(victims, [1, 2, 3, 4, 5, 6, 0]);
    }
}
