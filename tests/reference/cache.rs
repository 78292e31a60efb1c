//! The reference's cache: a set-associative, sectored cache of 128-byte lines kept as a vector
//! of sets, each a vector of ways, looked up by a linear scan. No shards, no order words, no
//! SIMD: the replacement policies as docs/model.md and `Replacement`'s doc comments state them.

use gputraffic::input::hw::{Replacement, SetIndexing};

/// The state of one line (what the levels above read and write).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Line {
    /// Sectors holding valid data.
    pub valid: u8,
    /// Sectors written since they came from DRAM.
    pub dirty: u8,
    /// In a home partition: a store of the other side passed through since the home side last
    /// stored here.
    pub stored_from_far: bool,
}

/// One way of a set.
#[derive(Debug, Clone, Copy, Default)]
struct Way {
    /// The line held, if any.
    tag: Option<u64>,
    line: Line,
    /// Recency (LRU: last use; FIFO: insertion; the near-way limit: last near-limited use).
    stamp: u64,
    /// SRRIP's re-reference prediction.
    rrpv: u32,
    /// Brought in for the far side (near-way limit only).
    far: bool,
}

/// The index function of a cache: which set a line goes to.
#[derive(Debug, Clone)]
pub enum Index {
    /// `line % sets`.
    Modulo,
    /// A multiplicative mix of the line, scaled to the sets.
    Hash,
    /// The line XOR-folded onto itself in 7-bit steps, `% sets`.
    XorFold,
    /// Bit i of the set is the parity of `line & masks[i]`; bits from `hashed_from` up add a
    /// pseudo-random value.
    XorMatrix {
        masks: Vec<u64>,
        hashed_from: Option<u32>,
    },
    /// Runs of `sets` partition-local lines (the pair bit left out) each fill every set once, in
    /// a permuted order shifted per run.
    Balanced { pair_bit: Option<u32> },
}

impl Index {
    /// The index function `indexing` names, with what it needs.
    pub fn new(
        indexing: SetIndexing,
        masks: &[u64],
        hashed_from: Option<u32>,
        pair_bit: Option<u32>,
    ) -> Index {
        match indexing {
            SetIndexing::Modulo => Index::Modulo,
            SetIndexing::Hash => Index::Hash,
            SetIndexing::XorFold => Index::XorFold,
            SetIndexing::XorMatrix => Index::XorMatrix {
                masks: masks.to_vec(),
                hashed_from,
            },
            SetIndexing::Balanced => Index::Balanced { pair_bit },
        }
    }

    /// The set of `line` among `sets`.
    pub fn set(&self, line: u64, sets: u64) -> usize {
        let set = match self {
            Index::Modulo => line % sets,
            Index::Hash => {
                let h = (line ^ (line >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                let h = h ^ (h >> 32);
                ((h as u128 * sets as u128) >> 64) as u64
            }
            Index::XorFold => {
                let mut folded = 0;
                let mut rest = line;
                while rest != 0 {
                    folded ^= rest;
                    rest >>= 7;
                }
                folded % sets
            }
            Index::XorMatrix { masks, hashed_from } => {
                let mut set = 0u64;
                for (i, m) in masks.iter().enumerate() {
                    set |= ((line & m).count_ones() as u64 % 2) << i;
                }
                if let Some(from) = hashed_from.filter(|&b| b < 64) {
                    let mut h = (line >> from).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                    h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                    h ^= h >> 27;
                    set ^= h >> (64 - masks.len());
                }
                set
            }
            Index::Balanced { pair_bit } => {
                let local = match pair_bit {
                    Some(b) => ((line >> (b + 1)) << b) | (line & ((1u64 << b) - 1)),
                    None => line,
                };
                let run = local / sets;
                let place = local % sets;
                let h = (run ^ (run >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                let offset = (((h >> 32) as u128 * sets as u128) >> 32) as u64;
                (feistel_permutation(place, sets) + offset) % sets
            }
        };
        set as usize
    }
}

/// A pseudo-random permutation of `0..n`: four Feistel rounds on the smallest square power of
/// two holding `n` values, walked until the value falls below `n`.
fn feistel_permutation(x: u64, n: u64) -> u64 {
    let bits = 64 - n.saturating_sub(1).leading_zeros();
    let half = bits.div_ceil(2).max(1);
    let mask = (1u64 << half) - 1;
    let mut v = x;
    loop {
        let (mut l, mut r) = (v >> half, v & mask);
        for round in 0..4u64 {
            let f = ((r ^ (round << 32)).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - half)) & mask;
            (l, r) = (r, l ^ f);
        }
        v = (l << half) | r;
        if v < n {
            return v;
        }
    }
}

/// A set-associative cache.
#[derive(Debug, Clone)]
pub struct Cache {
    sets: Vec<Vec<Way>>,
    index: Index,
    policy: Replacement,
    /// Tree-PLRU bits per set: node i has children 2i+1 and 2i+2, a set bit points right.
    tree: Vec<u64>,
    /// Ways of a set lines of the near side may hold (the number of ways: no limit).
    local_ways: usize,
    clock: u64,
    /// xorshift64 state of random replacement.
    rng: u64,
}

impl Cache {
    /// An empty cache of `sets` sets of `ways` ways.
    pub fn new(sets: usize, ways: usize, policy: Replacement, index: Index) -> Cache {
        Cache {
            sets: vec![vec![Way::default(); ways]; sets.max(1)],
            index,
            policy,
            tree: vec![0; sets.max(1)],
            local_ways: ways,
            clock: 0,
            rng: 0x9E37_79B9_7F4A_7C15,
        }
    }

    /// This cache with near lines limited to `local_ways` ways of a set.
    pub fn with_local_ways(mut self, local_ways: usize) -> Cache {
        self.local_ways = local_ways.min(self.ways());
        self
    }

    fn ways(&self) -> usize {
        self.sets[0].len()
    }

    fn limited(&self) -> bool {
        self.local_ways < self.ways()
    }

    fn find(&self, line: u64) -> (usize, Option<usize>) {
        let s = self.index.set(line, self.sets.len() as u64);
        (s, self.sets[s].iter().position(|w| w.tag == Some(line)))
    }

    fn next_stamp(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// Tree-PLRU: every node on the path to `way` points away from it.
    fn touch_tree(&mut self, set: usize, way: usize) {
        let ways = self.ways();
        let mut node = way + ways - 1;
        while node > 0 {
            let parent = (node - 1) / 2;
            let from_right = node == 2 * parent + 2;
            if from_right {
                self.tree[set] &= !(1 << parent);
            } else {
                self.tree[set] |= 1 << parent;
            }
            node = parent;
        }
    }

    /// What a use (a hit) does to the policy's state.
    fn mark_used(&mut self, set: usize, way: usize) {
        match self.policy {
            Replacement::Lru => self.sets[set][way].stamp = self.next_stamp(),
            Replacement::Plru => self.touch_tree(set, way),
            Replacement::Srrip => self.sets[set][way].rrpv = 0,
            Replacement::Fifo | Replacement::Random => {}
        }
    }

    /// The way a new line of `set` takes: an empty one (the first), else the policy's victim.
    fn victim(&mut self, set: usize) -> usize {
        let ways = self.ways();
        if let Some(w) = self.sets[set].iter().position(|w| w.tag.is_none()) {
            return w;
        }
        match self.policy {
            Replacement::Lru | Replacement::Fifo => (0..ways)
                .min_by_key(|&w| self.sets[set][w].stamp)
                .expect("a set has ways"),
            Replacement::Plru => {
                let mut node = 0;
                while node < ways - 1 {
                    node = 2 * node + 1 + (self.tree[set] >> node & 1) as usize;
                }
                node - (ways - 1)
            }
            Replacement::Random => {
                self.rng ^= self.rng << 13;
                self.rng ^= self.rng >> 7;
                self.rng ^= self.rng << 17;
                ((self.rng >> 32) as usize * ways) >> 32
            }
            Replacement::Srrip => loop {
                if let Some(w) = self.sets[set].iter().position(|w| w.rrpv >= 3) {
                    break w;
                }
                for w in &mut self.sets[set] {
                    w.rrpv += 1;
                }
            },
        }
    }

    /// Puts `line` into `way` of `set`, returning what left (its tag and state).
    fn fill(&mut self, set: usize, way: usize, line: u64) -> Option<(u64, Line)> {
        let old = &self.sets[set][way];
        let evicted = old.tag.map(|t| (t, old.line));
        let stamp = self.next_stamp();
        let w = &mut self.sets[set][way];
        w.tag = Some(line);
        w.line = Line::default();
        match self.policy {
            Replacement::Lru | Replacement::Fifo => w.stamp = stamp,
            Replacement::Srrip => w.rrpv = 2,
            Replacement::Plru => self.touch_tree(set, way),
            Replacement::Random => {}
        }
        evicted
    }

    /// Looks `line` up for a request of the far side (`far`) or the near side, inserting it
    /// when absent: its state, and what its insertion evicted (tag and state). Under a near-way
    /// limit a near line entering a set whose near lines fill the limit replaces the least
    /// recently used of them, and a near use makes a far line near.
    pub fn access_or_insert(&mut self, line: u64, far: bool) -> (&mut Line, Option<(u64, Line)>) {
        let (set, found) = self.find(line);
        if let Some(way) = found {
            self.mark_used(set, way);
            if self.limited() {
                let stamp = self.next_stamp();
                let w = &mut self.sets[set][way];
                w.stamp = stamp;
                if !far {
                    w.far = false;
                }
            }
            return (&mut self.sets[set][way].line, None);
        }
        let near_lines: Vec<usize> = (0..self.ways())
            .filter(|&w| self.sets[set][w].tag.is_some() && !self.sets[set][w].far)
            .collect();
        let way = if self.limited() && !far && near_lines.len() >= self.local_ways {
            *near_lines
                .iter()
                .min_by_key(|&&w| self.sets[set][w].stamp)
                .expect("the limit is at least one way")
        } else {
            self.victim(set)
        };
        let evicted = self.fill(set, way, line);
        if self.limited() {
            let stamp = self.next_stamp();
            let w = &mut self.sets[set][way];
            w.stamp = stamp;
            w.far = far;
        }
        (&mut self.sets[set][way].line, evicted)
    }

    /// Looks `line` up, marking it used (for the near-line limit too); `None` when absent
    /// (nothing inserted).
    pub fn access(&mut self, line: u64) -> Option<&mut Line> {
        let (set, way) = self.find(line);
        let way = way?;
        self.mark_used(set, way);
        if self.limited() {
            // the near-line limit's recency, whatever the policy
            let stamp = self.next_stamp();
            self.sets[set][way].stamp = stamp;
        }
        Some(&mut self.sets[set][way].line)
    }

    /// The state of `line` if present, without counting as a use.
    pub fn peek_mut(&mut self, line: u64) -> Option<&mut Line> {
        let (set, way) = self.find(line);
        way.map(|w| &mut self.sets[set][w].line)
    }

    /// The dirty budget (LRU caches only): when more than `limit` lines of `line`'s set hold
    /// dirty sectors, the least recently used of them is written back and stays, clean, its
    /// dirty sectors valid; its tag and state before come back.
    pub fn clean_over_dirty_limit(&mut self, line: u64, limit: usize) -> Option<(u64, Line)> {
        assert_eq!(self.policy, Replacement::Lru, "the dirty budget needs LRU");
        let (set, _) = self.find(line);
        let dirty: Vec<usize> = (0..self.ways())
            .filter(|&w| self.sets[set][w].tag.is_some() && self.sets[set][w].line.dirty != 0)
            .collect();
        if dirty.len() <= limit {
            return None;
        }
        let way = *dirty
            .iter()
            .min_by_key(|&&w| self.sets[set][w].stamp)
            .expect("more dirty lines than the limit");
        let w = &mut self.sets[set][way];
        let before = w.line;
        w.line.valid |= before.dirty;
        w.line.dirty = 0;
        Some((w.tag.expect("a dirty way holds a line"), before))
    }

    /// Every line held.
    pub fn lines(&self) -> impl Iterator<Item = &Line> {
        self.sets
            .iter()
            .flatten()
            .filter(|w| w.tag.is_some())
            .map(|w| &w.line)
    }
}
