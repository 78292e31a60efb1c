//! Tree pseudo-LRU: a binary tree of one bit per node over each set's ways (a power of two, at
//! most 32: [`Replacement::check_ways`]) points away from the most recent use; the victim is the
//! leaf the bits lead to from the root.
//!
//! [`Replacement::check_ways`]: crate::input::hw::Replacement::check_ways

/// Tree-PLRU keeps each set to itself.
pub const SETS_ARE_INDEPENDENT: bool = true;

/// The tree bits of every set.
#[derive(Debug, Clone)]
pub struct Plru {
    /// One word per set: node i has children 2i+1 and 2i+2; a set bit means "the victim is on
    /// the right".
    tree: Vec<u32>,
    /// Per way, what a use does to its set's tree bits: `(bits & keep) | point`.
    paths: Vec<PlruPath>,
    ways: usize,
    /// log2 of the ways, to split a slot without dividing.
    ways_shift: u32,
}

/// The tree-PLRU nodes on the path from the root to one way (`keep` clears them) and the value
/// that points each of them away from the way (`point`): a use is one AND and one OR, where
/// walking the path costs a loop of dependent steps on the L1's hottest path.
#[derive(Debug, Clone, Copy)]
struct PlruPath {
    keep: u32,
    point: u32,
}

impl PlruPath {
    /// The path to `way` in a tree of `ways` leaves.
    fn to_way(way: usize, ways: usize) -> PlruPath {
        let (mut keep, mut point) = (u32::MAX, 0u32);
        // Leaves are nodes ways-1 .. 2·ways-2; walk up from the leaf of `way`.
        let mut node = way + ways - 1;
        while node > 0 {
            let parent = (node - 1) / 2;
            let came_from_right = node == 2 * parent + 2;
            // Victim goes to the other side: right (1) if we came from the left.
            keep &= !(1 << parent);
            point |= u32::from(!came_from_right) << parent;
            node = parent;
        }
        PlruPath { keep, point }
    }
}

impl Plru {
    /// An empty cache of `sets` sets of `ways` ways (a power of two, at most 32).
    pub fn new(sets: usize, ways: usize) -> Plru {
        debug_assert!(
            crate::input::hw::Replacement::Plru
                .check_ways(ways as u32)
                .is_ok()
        );
        Plru {
            tree: vec![0; sets],
            paths: (0..ways).map(|w| PlruPath::to_way(w, ways)).collect(),
            ways,
            ways_shift: ways.trailing_zeros(),
        }
    }

    /// A hit points every node on the path to `slot` away from it.
    #[inline(always)]
    pub fn on_hit(&mut self, slot: usize) {
        let (set, way) = (slot >> self.ways_shift, slot & (self.ways - 1));
        let path = self.paths[way];
        self.tree[set] = (self.tree[set] & path.keep) | path.point;
    }

    /// A fill is a use like a hit.
    #[inline(always)]
    pub fn on_fill(&mut self, slot: usize) {
        self.on_hit(slot);
    }

    /// The leaf the tree bits of the set starting at `start` lead to.
    #[inline]
    pub fn victim(&self, start: usize) -> usize {
        let bits = self.tree[start >> self.ways_shift];
        let mut node = 0;
        while node < self.ways - 1 {
            node = 2 * node + 1 + (bits >> node & 1) as usize;
        }
        start + node - (self.ways - 1)
    }
}

#[cfg(test)]
mod tests {
    use crate::input::hw::{Replacement, SetIndexing};
    use crate::sim::cache::{Cache, Geometry};

    /// A tree-PLRU cache of one set of `ways` ways.
    fn one_set(ways: usize) -> Cache {
        Cache::new(Geometry {
            sets: 1,
            ways,
            replacement: Replacement::Plru,
            indexing: SetIndexing::Modulo,
            pair_bit: None,
            matrix: None,
        })
    }

    #[test]
    fn tree_plru_evicts_away_from_recent_uses() {
        let mut c = one_set(4);
        for line in 0..4 {
            c.insert(line);
        }
        // Fill order 0,1,2,3: the last touch (3, right half) points the root left, and the left
        // node away from 1: victim 0.
        assert_eq!(c.insert(4).1.unwrap().line, 0);
        // 4 took way 0; using 1 now sends the root right, where 3 was used after 2: victim 2.
        assert!(c.access(1).is_some());
        assert_eq!(c.insert(5).1.unwrap().line, 2);
        // Ways: 4,1,5,3. Using 3 and 5 (right) points the root left, away from 1 (used last on
        // the left): victim 4.
        assert!(c.access(3).is_some());
        assert!(c.access(5).is_some());
        assert_eq!(c.insert(6).1.unwrap().line, 4);
    }

    #[test]
    fn tree_plru_never_picks_the_way_just_used_at_any_width() {
        for ways in [2, 4, 8, 16, 32] {
            let mut c = one_set(ways);
            for line in 0..ways as u64 {
                c.insert(line);
            }
            // Touch every way in a scrambled order: each insert must evict some other line.
            let mut next = ways as u64;
            for step in 0..4 * ways as u64 {
                let used = (step * 7 + 3) % next;
                if c.access(used).is_none() {
                    continue;
                }
                let (_, evicted) = c.insert(next);
                assert_ne!(evicted.unwrap().line, used, "{ways} ways, step {step}");
                next += 1;
            }
        }
    }
}
