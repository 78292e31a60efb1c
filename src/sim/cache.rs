//! A sectored, set-associative cache of 128-byte lines made of four 32-byte sectors.
//!
//! Both the per-SM L1 and each L2 partition are one of these. The cache only keeps per-line state
//! (tag, valid / dirty sector masks, replacement stamp); what a hit or miss costs is decided by
//! the level that owns it. An "infinite" variant (a hash map) gives the compulsory behaviour.

use crate::input::hw::{Replacement, SetIndexing};
use hashbrown::HashMap;

use crate::metrics::{LINE_SHIFT, MAX_LINE};

/// The state of one line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LineState {
    /// Sectors holding valid data.
    pub valid: u8,
    /// Sectors written since they came from DRAM.
    pub dirty: u8,
    /// In a home partition of a split L2: a store of the other side has passed through since the
    /// home side last stored here, so the other partition may hold a copy that the home side's
    /// next store must invalidate across the fabric.
    pub stored_from_far: bool,
    /// In a home partition of a split L2 that logs races: a far miss brought sectors in since
    /// the home side last read the line (`crate::sim::l2`).
    pub far_fill_unread: bool,
    /// In a home partition of a split L2 that logs races: a miss of the home side brought
    /// sectors in since the other side last fetched the line (`crate::sim::l2`).
    pub home_fill_unfetched: bool,
}

/// A line pushed out of the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Evicted {
    /// Line address (byte address >> 7).
    pub line: u64,
    /// Its state when it left.
    pub state: LineState,
}

/// Geometry and policy of one cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    /// Number of sets (any positive number).
    pub sets: usize,
    /// Lines per set.
    pub ways: usize,
    /// Replacement policy.
    pub replacement: Replacement,
    /// Set indexing.
    pub indexing: SetIndexing,
    /// For [`SetIndexing::Balanced`] in a split L2: the line-address bit that tells a line from its
    /// partner in the other partition; it is left out of the set index, so partners share a set.
    pub pair_bit: Option<u32>,
    /// For [`SetIndexing::XorMatrix`]: the index function (`sets` is `2^` its bits).
    pub matrix: Option<XorIndex>,
}

/// [`SetIndexing::XorMatrix`]'s function: set-index bit `i` is the parity of `line & masks[i]`,
/// and the line-address bits from `hashed_from` up add a pseudo-random value to the whole index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XorIndex {
    masks: [u64; 16],
    bits: u32,
    hashed_from: u32,
}

impl XorIndex {
    /// The function of `masks` (1 to 16 of them, checked by the configuration) with the bits
    /// from `hashed_from` up hashed (`None`: no bit is).
    pub fn new(masks: &[u64], hashed_from: Option<u32>) -> XorIndex {
        assert!((1..=16).contains(&masks.len()), "1 to 16 set-index masks");
        let mut m = [0u64; 16];
        m[..masks.len()].copy_from_slice(masks);
        XorIndex {
            masks: m,
            bits: masks.len() as u32,
            hashed_from: hashed_from.unwrap_or(64),
        }
    }

    /// The number of sets it indexes.
    pub fn sets(&self) -> usize {
        1 << self.bits
    }

    /// The set of `line`.
    #[inline(always)]
    pub fn set(&self, line: u64) -> usize {
        let mut set = 0u64;
        for (i, m) in self.masks[..self.bits as usize].iter().enumerate() {
            set |= ((line & m).count_ones() as u64 & 1) << i;
        }
        if self.hashed_from < 64 {
            // splitmix64's finaliser: every hashed bit moves every index bit.
            let mut h = (line >> self.hashed_from).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            h ^= h >> 27;
            set ^= h >> (64 - self.bits);
        }
        set as usize
    }
}

impl Geometry {
    /// Geometry of a cache of `bytes` with `ways` ways of 128-byte lines.
    pub fn new(bytes: u64, ways: u32, replacement: Replacement, indexing: SetIndexing) -> Geometry {
        let ways = ways as usize;
        Geometry {
            sets: (bytes as usize >> LINE_SHIFT) / ways,
            ways,
            replacement,
            indexing,
            pair_bit: None,
            matrix: None,
        }
    }

    /// Geometry of a cache indexed by `matrix`, with `ways` ways.
    pub fn xor_matrix(matrix: XorIndex, ways: u32, replacement: Replacement) -> Geometry {
        Geometry {
            sets: matrix.sets(),
            ways: ways as usize,
            replacement,
            indexing: SetIndexing::XorMatrix,
            pair_bit: None,
            matrix: Some(matrix),
        }
    }

    /// This geometry with [`Geometry::pair_bit`] set.
    pub fn with_pair_bit(self, pair_bit: Option<u32>) -> Geometry {
        Geometry { pair_bit, ..self }
    }
}

/// A sectored cache: set-associative, or unbounded.
// The set-associative variant is the one every lookup uses: boxing it to even the variants' sizes
// would add a pointer chase to each of them.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Cache {
    /// Finite, set-associative.
    SetAssoc(SetAssoc),
    /// Never evicts: compulsory misses only.
    Infinite(HashMap<u64, LineState, ahash::RandomState>),
}

/// The step of [`SetIndexing::XorFold`]: on the shipped 16 × 124 tree-PLRU L1, 7 bits gives the
/// smallest error at the knee of the measured H100/H200 pointer chase (6 bits leaves fewer misses
/// below capacity; docs/model.md "L1 geometry").
pub const XOR_FOLD_BITS: u32 = 7;

/// The line address folded onto itself in steps of [`XOR_FOLD_BITS`] (before the modulo of
/// [`SetIndexing::XorFold`]).
#[inline]
fn xor_fold(line: u64) -> u64 {
    let mut folded = line;
    let mut rest = line >> XOR_FOLD_BITS;
    while rest != 0 {
        folded ^= rest;
        rest >>= XOR_FOLD_BITS;
    }
    folded
}

/// `x % d` by one multiplication for `x < 2^32` (Lemire, Kaser & Kurz, "Faster remainder by
/// direct computation", 2019: exact for every 32-bit `x` and `d`), a division otherwise. Set
/// indices of non-power-of-two set counts (the L1's 124 sets) are on the hottest path.
#[derive(Debug, Clone, Copy)]
struct FastRem {
    d: u64,
    magic: u64,
}

impl FastRem {
    fn new(d: u64) -> FastRem {
        assert!(d > 0 && d <= u32::MAX as u64, "divisor out of range");
        FastRem {
            d,
            magic: (u64::MAX / d).wrapping_add(1),
        }
    }

    #[inline]
    fn rem(self, x: u64) -> u64 {
        if x >> 32 == 0 {
            let low = self.magic.wrapping_mul(x);
            ((low as u128 * self.d as u128) >> 64) as u64
        } else {
            x % self.d
        }
    }

    /// `x / d`, by one multiplication for `x < 2^32` (the same paper's `fastdiv`).
    #[inline]
    fn div(self, x: u64) -> u64 {
        if x >> 32 == 0 && self.d > 1 {
            ((self.magic as u128 * x as u128) >> 64) as u64
        } else {
            x / self.d
        }
    }
}

/// The set a line maps to in a cache of `geometry` (0..sets).
#[inline]
pub fn set_index(geometry: &Geometry, line: u64) -> usize {
    let sets = geometry.sets as u64;
    set_index_by(
        geometry,
        line,
        |x| x % sets,
        |x| x / sets,
        |x| permute(x, sets),
    )
}

/// [`set_index`] for one geometry, with its divisions by the set count made multiplications
/// (for callers on a hot path, such as the L2's shard router).
#[derive(Debug, Clone, Copy)]
pub struct SetIndexer {
    geometry: Geometry,
    sets: FastRem,
    /// [`permutation_table`] of a balanced geometry (empty otherwise).
    perm: &'static [u32],
}

impl SetIndexer {
    /// The indexer of `geometry` (at least one set).
    pub fn new(geometry: Geometry) -> SetIndexer {
        SetIndexer {
            geometry,
            sets: FastRem::new(geometry.sets.max(1) as u64),
            perm: permutation_table(&geometry),
        }
    }

    /// The set `line` maps to, as [`set_index`].
    #[inline(always)]
    pub fn set(&self, line: u64) -> usize {
        let (sets, perm) = (self.sets, self.perm);
        set_index_by(
            &self.geometry,
            line,
            |x| sets.rem(x),
            |x| sets.div(x),
            |x| perm[x as usize] as u64,
        )
    }
}

/// The permutation [`balanced_set`] applies to a run's places, as a table: worked out once per
/// set count and kept for the process (4 bytes a set; a program meets a few set counts), since the
/// L2's lookups would spend a tenth of the run in [`permute`]. Empty unless `geometry` is
/// balanced.
fn permutation_table(geometry: &Geometry) -> &'static [u32] {
    type Tables = std::sync::Mutex<HashMap<u64, &'static [u32], ahash::RandomState>>;
    static TABLES: std::sync::OnceLock<Tables> = std::sync::OnceLock::new();
    if geometry.indexing != SetIndexing::Balanced {
        return &[];
    }
    let sets = geometry.sets as u64;
    let mut tables = TABLES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    tables.entry(sets).or_insert_with(|| {
        let table: Vec<u32> = (0..sets).map(|x| permute(x, sets) as u32).collect();
        Box::leak(table.into_boxed_slice())
    })
}

/// [`set_index`], taking `% sets` by `rem`, `/ sets` by `div` (the caches pass their
/// [`FastRem`]'s) and [`permute`] by `perm` (their [`permutation_table`]).
#[inline(always)]
fn set_index_by(
    geometry: &Geometry,
    line: u64,
    rem: impl Fn(u64) -> u64,
    div: impl Fn(u64) -> u64,
    perm: impl Fn(u64) -> u64,
) -> usize {
    let sets = geometry.sets;
    match geometry.indexing {
        SetIndexing::Modulo => rem(line) as usize,
        SetIndexing::XorFold => rem(xor_fold(line)) as usize,
        SetIndexing::Hash => {
            // Mix the line address, then map to 0..sets without a division.
            let h = (line ^ (line >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let h = h ^ (h >> 32);
            ((h as u128 * sets as u128) >> 64) as usize
        }
        SetIndexing::Balanced => balanced_set(line, sets as u64, geometry.pair_bit, div, perm),
        SetIndexing::XorMatrix => geometry
            .matrix
            .expect("an xor-matrix geometry carries its matrix")
            .set(line),
    }
}

/// [`SetIndexing::Balanced`]: the partition-local line (the pair bit left out) splits into a run
/// of `sets` lines and a place in it; the place goes through a pseudo-random permutation of the
/// sets (a bijection of the run onto the sets) and is shifted by an offset drawn from the run's
/// number.
#[inline(always)]
fn balanced_set(
    line: u64,
    sets: u64,
    pair_bit: Option<u32>,
    div: impl Fn(u64) -> u64,
    perm: impl Fn(u64) -> u64,
) -> usize {
    let local = match pair_bit {
        Some(b) => ((line >> (b + 1)) << b) | (line & ((1u64 << b) - 1)),
        None => line,
    };
    let run = div(local);
    let place = local - run * sets;
    let h = (run ^ (run >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let offset = (((h >> 32) as u128 * sets as u128) >> 32) as u64;
    let set = perm(place) + offset;
    (if set >= sets { set - sets } else { set }) as usize
}

/// A pseudo-random permutation of `0..n` (`x < n`): four Feistel rounds on the smallest square
/// power of two of at least `n` values, repeated until the value falls below `n` (cycle walking:
/// the square holds fewer than `4n` values, so fewer than four passes on average).
///
/// A multiplier, the permutation `balanced` used until 2026-11-25, maps every arithmetic
/// progression of lines (a row or plane pitch) onto one of sets, so that some pitches crowd a
/// stencil's planes into part of the sets: star4 128x4x2 at 512x512x256 (planes 16,900 lines
/// apart) read 15% more DRAM than the H100, which reads 10.6, 11.1 and 10.4 B per update at 512,
/// 520 and 496 points in x (`tests/data/h100/pitch`, `tests/l2_pitch.rs`).
#[inline(always)]
fn permute(x: u64, n: u64) -> u64 {
    let half = (64 - n.saturating_sub(1).leading_zeros())
        .div_ceil(2)
        .max(1);
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

/// A hint to bring the memory at `p` into the CPU's caches (no effect where unsupported).
#[inline(always)]
fn prefetch_read<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and does not dereference `p` in the program's sense.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// The first way of `set` holding `tag` (a tag is in a set at most once; 0 marks an empty way).
/// Sets of 16 ways, the L1s' and L2s', are compared whole without branching.
#[inline(always)]
fn first_way(set: &[u32], tag: u32) -> Option<usize> {
    match <&[u32; 16]>::try_from(set) {
        Ok(set) => {
            let hits = ways_matching(set, tag);
            (hits != 0).then(|| hits.trailing_zeros() as usize)
        }
        Err(_) => set.iter().position(|&t| t == tag),
    }
}

/// Bit w set where `set[w] == tag`. SSE2, which every x86-64 CPU has, compares four ways at a
/// time and gathers the results with one movemask each; the portable loop compiles to a compare,
/// mask and shift per way.
#[inline(always)]
fn ways_matching(set: &[u32; 16], tag: u32) -> u32 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of the x86-64 baseline; the four unaligned loads read the 64 bytes of
    // `set` and nothing beyond.
    unsafe {
        use std::arch::x86_64::*;
        let t = _mm_set1_epi32(tag as i32);
        let p = set.as_ptr().cast::<__m128i>();
        let mut hits = 0u32;
        for q in 0..4 {
            let eq = _mm_cmpeq_epi32(_mm_loadu_si128(p.add(q)), t);
            hits |= (_mm_movemask_ps(_mm_castsi128_ps(eq)) as u32) << (4 * q);
        }
        hits
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let mut hits = 0u32;
        for (w, &t) in set.iter().enumerate() {
            hits |= u32::from(t == tag) << w;
        }
        hits
    }
}

/// The largest re-reference prediction of [`Replacement::Srrip`]: the next victim.
const SRRIP_DISTANT: u32 = 3;

/// The finite cache. Arrays are laid out set by set so a lookup touches one contiguous run. A
/// shard holds only the sets `s` with `s % shards == shard` (set `s` at local position
/// `s / shards`): sets never interact, so shards of one cache can run on different threads.
#[derive(Debug, Clone)]
pub struct SetAssoc {
    geometry: Geometry,
    /// log2 of the number of shards.
    shard_shift: u32,
    /// The set of a line.
    indexer: SetIndexer,
    /// Sets held here.
    local_sets: usize,
    /// line + 1 per way (0 = empty).
    tags: Vec<u32>,
    states: Vec<LineState>,
    /// Replacement stamps: last use (LRU), insertion (FIFO) or re-reference prediction (SRRIP).
    stamps: Vec<u32>,
    clock: u32,
    /// xorshift state for random replacement.
    rng: u64,
    /// Tree-PLRU bits, one word per set (empty for other policies): node i has children 2i+1 and
    /// 2i+2; a set bit means "the victim is on the right".
    tree: Vec<u32>,
    /// Per way, what a use does to its set's tree bits: `(bits & keep) | point`.
    plru_paths: Vec<PlruPath>,
    /// log2 of the ways (tree-PLRU ways are a power of two), to split a slot without dividing.
    ways_shift: u32,
    /// Exact LRU order per set, for LRU over 2 to 16 ways (a power of two; empty otherwise, when
    /// `stamps` keep the order): way numbers in nibbles from the least recently used up, unused
    /// nibbles 0xF. One word per set where stamps take a cache line: the L2's sets are megabytes.
    lru_order: Vec<u64>,
    /// How many ways of a set lines of the near side may hold (`ways`: no limit); see
    /// [`Cache::with_local_ways`].
    local_ways: usize,
    /// Per set, a bit per way holding a line brought in for the far side (only with a limit).
    far_ways: Vec<u32>,
    /// The most lines the cache may hold (`usize::MAX`: every way); see
    /// [`Cache::with_capacity_lines`].
    capacity_lines: usize,
    /// Lines held.
    held: usize,
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

impl Cache {
    /// A finite cache with the given geometry.
    pub fn new(geometry: Geometry) -> Cache {
        Cache::shard(geometry, 0, 1)
    }

    /// Shard `shard` of `shards` (a power of two) of a finite cache with the given geometry: the
    /// sets `s` with `s % shards == shard`. Only lines of those sets may be looked up or inserted.
    pub fn shard(geometry: Geometry, shard: usize, shards: usize) -> Cache {
        assert!(shards.is_power_of_two(), "shards must be a power of two");
        let local_sets = geometry.sets.saturating_sub(shard).div_ceil(shards);
        let n = local_sets * geometry.ways;
        Cache::SetAssoc(SetAssoc {
            geometry,
            shard_shift: shards.trailing_zeros(),
            indexer: SetIndexer::new(geometry),
            local_sets,
            tags: vec![0; n],
            states: vec![LineState::default(); n],
            stamps: vec![0; n],
            clock: 0,
            rng: 0x9E37_79B9_7F4A_7C15,
            tree: match geometry.replacement {
                Replacement::Plru => vec![0; local_sets],
                _ => vec![],
            },
            plru_paths: match geometry.replacement {
                Replacement::Plru => (0..geometry.ways)
                    .map(|w| PlruPath::to_way(w, geometry.ways))
                    .collect(),
                _ => vec![],
            },
            ways_shift: geometry.ways.trailing_zeros(),
            lru_order: if lru_by_order(&geometry) {
                vec![initial_lru_order(geometry.ways); local_sets]
            } else {
                vec![]
            },
            local_ways: geometry.ways,
            far_ways: vec![],
            capacity_lines: usize::MAX,
            held: 0,
        })
    }

    /// Lets the cache hold at most `lines` lines although its ways hold more: a line that enters
    /// an empty way while that many are held pushes out the least recently used line of a
    /// pseudo-random set. Models the H100/H200 L1, whose tags cover 256 KiB while its data shares
    /// the array with shared memory (`validation/l1_index.cu`; docs/model.md "L1 geometry").
    pub fn with_capacity_lines(mut self, lines: usize) -> Cache {
        if let Cache::SetAssoc(c) = &mut self
            && lines < c.tags.len()
        {
            c.capacity_lines = lines.max(1);
        }
        self
    }

    /// Lets lines of the near side (`far == false` in [`Cache::access_or_insert_for`]) hold at
    /// most `local_ways` ways of a set: a near line entering a set that holds that many takes
    /// the place of the least recently used of them, while a far line may take any way. Needs
    /// LRU or tree-PLRU replacement (the limit keeps its own recency stamps under PLRU).
    pub fn with_local_ways(mut self, local_ways: usize) -> Cache {
        if let Cache::SetAssoc(c) = &mut self
            && local_ways < c.geometry.ways
        {
            debug_assert!(matches!(
                c.geometry.replacement,
                Replacement::Lru | Replacement::Plru
            ));
            c.local_ways = local_ways;
            c.far_ways = vec![0; c.local_sets];
            // The limit reads recency from the stamps, so LRU keeps them too.
            c.lru_order = vec![];
        }
        self
    }

    /// A cache that never evicts.
    pub fn infinite() -> Cache {
        Cache::Infinite(HashMap::with_hasher(ahash::RandomState::with_seeds(
            1, 2, 3, 4,
        )))
    }

    /// The state of `line` if it is present (does not count as a use).
    #[inline(always)]
    pub fn peek(&self, line: u64) -> Option<LineState> {
        match self {
            Cache::SetAssoc(c) => c.find(line).map(|i| c.states[i]),
            Cache::Infinite(m) => m.get(&line).copied(),
        }
    }

    /// The state of `line` for update if it is present, without counting as a use (an
    /// invalidation from elsewhere, not a request of this cache's own).
    #[inline]
    pub fn peek_mut(&mut self, line: u64) -> Option<&mut LineState> {
        match self {
            Cache::SetAssoc(c) => c.find(line).map(|i| &mut c.states[i]),
            Cache::Infinite(m) => m.get_mut(&line),
        }
    }

    /// Looks `line` up, marking it used; returns its state for update, or `None` on a line miss.
    #[inline(always)]
    pub fn access(&mut self, line: u64) -> Option<&mut LineState> {
        match self {
            Cache::SetAssoc(c) => {
                let i = c.find(line)?;
                c.use_slot(i);
                Some(&mut c.states[i])
            }
            Cache::Infinite(m) => m.get_mut(&line),
        }
    }

    /// Inserts `line` (which must be absent) with an empty state, evicting the set's victim if the
    /// set is full. Returns the new line's state and what was evicted.
    #[inline]
    pub fn insert(&mut self, line: u64) -> (&mut LineState, Option<Evicted>) {
        match self {
            Cache::SetAssoc(c) => c.insert(line),
            Cache::Infinite(m) => (m.entry(line).or_default(), None),
        }
    }

    /// Asks the CPU to bring `line`'s set (tags and states) into its cache ahead of a lookup: the
    /// L2's sets are megabytes, and its replay knows its next requests, so it need not wait for
    /// each set in turn. A hint only; nothing changes.
    #[inline(always)]
    pub fn prefetch(&self, line: u64) {
        if let Cache::SetAssoc(c) = self {
            let start = c.set_of(line) * c.geometry.ways;
            prefetch_read(c.tags.as_ptr().wrapping_add(start));
            prefetch_read(c.states.as_ptr().wrapping_add(start));
        }
    }

    /// [`Cache::access`], and on a line miss [`Cache::insert`]: the line's state (empty when
    /// new), whether it was present, and what its insertion evicted. One set lookup for both.
    #[inline(always)]
    pub fn access_or_insert(&mut self, line: u64) -> (&mut LineState, bool, Option<Evicted>) {
        match self {
            Cache::SetAssoc(c) => c.access_or_insert(line),
            Cache::Infinite(m) => match m.entry(line) {
                hashbrown::hash_map::Entry::Occupied(e) => (e.into_mut(), true, None),
                hashbrown::hash_map::Entry::Vacant(e) => {
                    (e.insert(LineState::default()), false, None)
                }
            },
        }
    }

    /// [`Cache::access_or_insert`] for a request of the far side (`far`) or the near side, under
    /// the limit of [`Cache::with_local_ways`] (without one, the same as
    /// `access_or_insert`). A use by the near side makes a far line near.
    #[inline(always)]
    pub fn access_or_insert_for(
        &mut self,
        line: u64,
        far: bool,
    ) -> (&mut LineState, bool, Option<Evicted>) {
        if matches!(self, Cache::SetAssoc(c) if !c.far_ways.is_empty()) {
            let Cache::SetAssoc(c) = self else {
                unreachable!()
            };
            c.access_or_insert_for(line, far)
        } else {
            self.access_or_insert(line)
        }
    }

    /// Removes `line` if present, returning its state.
    pub fn remove(&mut self, line: u64) -> Option<LineState> {
        match self {
            Cache::SetAssoc(c) => {
                let i = c.find(line)?;
                c.tags[i] = 0;
                c.held -= 1;
                Some(std::mem::take(&mut c.states[i]))
            }
            Cache::Infinite(m) => m.remove(&line),
        }
    }

    /// Every present line and its state (for end-of-kernel accounting).
    pub fn lines(&self) -> Box<dyn Iterator<Item = (u64, LineState)> + '_> {
        match self {
            Cache::SetAssoc(c) => Box::new(
                c.tags
                    .iter()
                    .zip(&c.states)
                    .filter(|(t, _)| **t != 0)
                    .map(|(t, s)| (*t as u64 - 1, *s)),
            ),
            Cache::Infinite(m) => Box::new(m.iter().map(|(l, s)| (*l, *s))),
        }
    }
}

/// Whether a cache of `geometry` keeps its LRU order in one word per set.
fn lru_by_order(geometry: &Geometry) -> bool {
    geometry.replacement == Replacement::Lru
        && geometry.ways.is_power_of_two()
        && (2..=16).contains(&geometry.ways)
}

/// The order of an empty set: ways 0 (least recent) to `ways - 1`, unused nibbles 0xF.
fn initial_lru_order(ways: usize) -> u64 {
    (0..16).fold(0u64, |o, k| {
        o | ((if k < ways { k } else { 0xF }) as u64) << (4 * k)
    })
}

/// `order` with `way` moved to the most recent of `ways` places.
#[inline]
fn promoted(order: u64, way: usize, ways: usize) -> u64 {
    const ONES: u64 = 0x1111_1111_1111_1111;
    let top = 4 * (ways as u32 - 1);
    if (order >> top) & 0xF == way as u64 {
        return order;
    }
    // The first nibble equal to `way` (a zero nibble of the difference: the lowest flag is
    // exact; flags above a zero may be false, and are not read).
    let x = order ^ (way as u64 * ONES);
    let zero = x.wrapping_sub(ONES) & !x & (ONES << 3);
    let rank = zero.trailing_zeros() / 4;
    debug_assert!(4 * rank < top, "way {way} not in the order {order:#x}");
    let below = order & ((1u64 << (4 * rank)) - 1);
    let above = (order >> (4 * (rank + 1))) << (4 * rank);
    let used = if ways == 16 {
        u64::MAX
    } else {
        (1u64 << (4 * ways)) - 1
    };
    ((below | above) & used & !(0xF << top)) | (way as u64) << top | !used
}

impl SetAssoc {
    /// Advances the replacement clock; when it would wrap, stamps are renumbered by age per set.
    #[inline]
    fn tick(&mut self) -> u32 {
        if self.clock == u32::MAX {
            self.renumber();
        }
        self.clock += 1;
        self.clock
    }

    #[cold]
    fn renumber(&mut self) {
        let ways = self.geometry.ways;
        for set in 0..self.local_sets {
            let r = set * ways..(set + 1) * ways;
            let mut order: Vec<usize> = r.clone().collect();
            order.sort_by_key(|&i| self.stamps[i]);
            for (age, i) in order.into_iter().enumerate() {
                self.stamps[i] = age as u32;
            }
        }
        self.clock = ways as u32;
    }

    /// Tree-PLRU: points every node on the path to `slot` away from it.
    #[inline]
    fn touch(&mut self, slot: usize) {
        debug_assert!(self.geometry.ways.is_power_of_two());
        let (set, way) = (slot >> self.ways_shift, slot & (self.geometry.ways - 1));
        let path = self.plru_paths[way];
        self.tree[set] = (self.tree[set] & path.keep) | path.point;
    }

    /// The local position of `line`'s set.
    #[inline(always)]
    fn set_of(&self, line: u64) -> usize {
        let s = self.indexer.set(line) >> self.shard_shift;
        debug_assert_eq!(s, set_index(&self.geometry, line) >> self.shard_shift);
        debug_assert!(s < self.local_sets);
        s
    }

    #[inline]
    fn find(&self, line: u64) -> Option<usize> {
        self.find_in(self.set_of(line) * self.geometry.ways, line)
    }

    /// The slot of `line` in the set starting at slot `start`.
    #[inline]
    fn find_in(&self, start: usize, line: u64) -> Option<usize> {
        let set = &self.tags[start..start + self.geometry.ways];
        first_way(set, (line + 1) as u32).map(|w| start + w)
    }

    /// Makes slot `i` its set's most recently used in the LRU order.
    #[inline(always)]
    fn promote(&mut self, i: usize) {
        let ways = self.geometry.ways;
        let (set, way) = (i >> self.ways_shift, i & (ways - 1));
        self.lru_order[set] = promoted(self.lru_order[set], way, ways);
    }

    /// Marks slot `i` used.
    #[inline(always)]
    fn use_slot(&mut self, i: usize) {
        match self.geometry.replacement {
            Replacement::Lru if !self.lru_order.is_empty() => self.promote(i),
            Replacement::Lru => self.stamps[i] = self.tick(),
            Replacement::Plru => self.touch(i),
            Replacement::Srrip => self.stamps[i] = 0,
            Replacement::Fifo | Replacement::Random => {}
        }
    }

    /// [`Cache::access_or_insert`], finding the set once.
    #[inline(always)]
    fn access_or_insert(&mut self, line: u64) -> (&mut LineState, bool, Option<Evicted>) {
        let start = self.set_of(line) * self.geometry.ways;
        if let Some(i) = self.find_in(start, line) {
            self.use_slot(i);
            return (&mut self.states[i], true, None);
        }
        let (state, evicted) = self.insert_at(start, line);
        (state, false, evicted)
    }

    /// [`Cache::access_or_insert_for`] in a set with a limit on near lines.
    fn access_or_insert_for(
        &mut self,
        line: u64,
        far: bool,
    ) -> (&mut LineState, bool, Option<Evicted>) {
        let ways = self.geometry.ways;
        let set = self.set_of(line);
        let start = set * ways;
        if let Some(i) = self.find_in(start, line) {
            self.use_slot(i);
            self.stamps[i] = self.tick();
            if !far {
                self.far_ways[set] &= !(1 << (i - start));
            }
            return (&mut self.states[i], true, None);
        }
        let mut near = 0u32;
        for w in 0..ways {
            if self.tags[start + w] != 0 && self.far_ways[set] >> w & 1 == 0 {
                near |= 1 << w;
            }
        }
        let slot = if !far && near.count_ones() as usize >= self.local_ways {
            // The least recently used near line gives way.
            let near_ways = (0..ways).filter(|w| near >> w & 1 == 1);
            start + near_ways.min_by_key(|&w| self.stamps[start + w]).unwrap()
        } else {
            self.victim(start)
        };
        let bit = 1 << (slot - start);
        self.far_ways[set] = if far {
            self.far_ways[set] | bit
        } else {
            self.far_ways[set] & !bit
        };
        let evicted = self.fill(slot, line).1;
        // The limit's own recency stamp (under LRU the insertion's, renewed; PLRU keeps none).
        self.stamps[slot] = self.tick();
        (&mut self.states[slot], false, evicted)
    }

    #[inline]
    fn insert(&mut self, line: u64) -> (&mut LineState, Option<Evicted>) {
        self.insert_at(self.set_of(line) * self.geometry.ways, line)
    }

    /// The slot a new line of the set starting at `start` goes to: an empty way, else the
    /// policy's victim.
    #[inline]
    fn victim(&mut self, start: usize) -> usize {
        let ways = self.geometry.ways;
        match first_way(&self.tags[start..start + ways], 0) {
            Some(w) => start + w,
            None if self.geometry.replacement == Replacement::Plru => {
                let bits = self.tree[start >> self.ways_shift];
                let mut node = 0;
                while node < ways - 1 {
                    node = 2 * node + 1 + (bits >> node & 1) as usize;
                }
                start + node - (ways - 1)
            }
            None if self.geometry.replacement == Replacement::Random => {
                start + self.random_below(ways)
            }
            None if self.geometry.replacement == Replacement::Srrip => {
                let rrpv = &mut self.stamps[start..start + ways];
                let oldest = *rrpv.iter().max().unwrap();
                if oldest < SRRIP_DISTANT {
                    for v in rrpv.iter_mut() {
                        *v += SRRIP_DISTANT - oldest;
                    }
                }
                start + rrpv.iter().position(|&v| v == SRRIP_DISTANT).unwrap()
            }
            None if !self.lru_order.is_empty() => {
                start + (self.lru_order[start >> self.ways_shift] & 0xF) as usize
            }
            None => {
                // Oldest stamp: least recently used (LRU) or first inserted (FIFO).
                let stamps = &self.stamps[start..start + ways];
                let mut w = 0;
                for (i, &s) in stamps.iter().enumerate() {
                    if s < stamps[w] {
                        w = i;
                    }
                }
                start + w
            }
        }
    }

    /// A pseudo-random number below `n` (xorshift64, then the high half scaled to `n`).
    #[inline]
    fn random_below(&mut self, n: usize) -> usize {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        ((self.rng >> 32) as usize * n) >> 32
    }

    /// Empties a held slot other than `keep` (the capacity is full) and returns what it held: the
    /// least recently used line of a pseudo-random set (under LRU kept as an order word; any
    /// pseudo-random held line otherwise).
    fn evict_anywhere(&mut self, keep: usize) -> Evicted {
        loop {
            let mut slot = self.random_below(self.tags.len());
            if self.tags[slot] == 0 {
                continue;
            }
            if !self.lru_order.is_empty() {
                // The least recently used held line of that slot's set.
                let set = slot >> self.ways_shift;
                let order = self.lru_order[set];
                slot = (0..self.geometry.ways)
                    .map(|k| (set << self.ways_shift) + (order >> (4 * k) & 0xF) as usize)
                    .find(|&s| self.tags[s] != 0 && s != keep)
                    .unwrap_or(keep);
            }
            if slot != keep && self.tags[slot] != 0 {
                let line = self.tags[slot] as u64 - 1;
                self.tags[slot] = 0;
                return Evicted {
                    line,
                    state: std::mem::take(&mut self.states[slot]),
                };
            }
        }
    }

    /// Inserts `line` into the set starting at slot `start`: into an empty way, else in place
    /// of the policy's victim.
    #[inline]
    fn insert_at(&mut self, start: usize, line: u64) -> (&mut LineState, Option<Evicted>) {
        let slot = self.victim(start);
        self.fill(slot, line)
    }

    /// Puts `line` in `slot` with an empty state, as the policy marks an insertion; returns
    /// the new state and the line that left.
    #[inline]
    fn fill(&mut self, slot: usize, line: u64) -> (&mut LineState, Option<Evicted>) {
        let evicted = if self.tags[slot] != 0 {
            Some(Evicted {
                line: self.tags[slot] as u64 - 1,
                state: self.states[slot],
            })
        } else if self.held >= self.capacity_lines {
            Some(self.evict_anywhere(slot))
        } else {
            self.held += 1;
            None
        };
        debug_assert!(line <= MAX_LINE);
        self.tags[slot] = (line + 1) as u32;
        match self.geometry.replacement {
            Replacement::Lru if !self.lru_order.is_empty() => self.promote(slot),
            Replacement::Lru | Replacement::Fifo => self.stamps[slot] = self.tick(),
            Replacement::Plru => self.touch(slot),
            Replacement::Srrip => self.stamps[slot] = SRRIP_DISTANT - 1,
            Replacement::Random => {}
        }
        self.states[slot] = LineState::default();
        (&mut self.states[slot], evicted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fast_remainder_and_quotient_equal_the_division() {
        let mut x = 0x1234_5678_9abc_def0u64;
        let divisors = (1..=300u64).chain([124 * 16, 40960, 65_535, 1 << 31, u32::MAX as u64]);
        for d in divisors {
            let r = FastRem::new(d);
            let edges = [0, 1, d - 1, d, d + 1, u32::MAX as u64, 1 << 32, u64::MAX];
            for v in edges {
                assert_eq!(r.rem(v), v % d, "{v} % {d}");
                assert_eq!(r.div(v), v / d, "{v} / {d}");
            }
            for _ in 0..2000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let v = x >> (x % 40); // every width, most below 2^32
                assert_eq!(r.rem(v), v % d, "{v} % {d}");
                assert_eq!(r.div(v), v / d, "{v} / {d}");
            }
        }
    }

    #[test]
    fn an_xor_matrix_index_takes_each_set_bit_as_the_parity_of_its_mask() {
        let index = XorIndex::new(&[0b011, 0b100], None);
        assert_eq!(index.sets(), 4);
        // line 1: bit 0 = parity(1 & 3) = 1, bit 1 = parity(1 & 4) = 0
        let sets: Vec<usize> = [0u64, 1, 2, 3, 4, 5, 7]
            .iter()
            .map(|&l| index.set(l))
            .collect();
        assert_eq!(sets, vec![0, 1, 1, 0, 2, 3, 2]);
        // Hashed bits move the index, the same way for lines that differ only below them.
        let hashed = XorIndex::new(&[0b011, 0b100], Some(8));
        assert_eq!(hashed.set(5), index.set(5));
        let (a, b) = (hashed.set(0x100), hashed.set(0x105));
        assert_eq!(a ^ b, index.set(5));
    }

    #[test]
    fn a_cache_that_holds_fewer_lines_than_its_ways_pushes_out_its_least_recently_used() {
        let geometry = Geometry {
            sets: 1,
            ways: 8,
            replacement: Replacement::Lru,
            indexing: SetIndexing::Modulo,
            pair_bit: None,
            matrix: None,
        };
        let mut cache = Cache::new(geometry).with_capacity_lines(4);
        for line in 0..4 {
            assert_eq!(cache.insert(line).1, None);
        }
        assert!(cache.access(0).is_some());
        // Four held: the fifth line takes a free way and line 1, the least recently used, goes.
        assert_eq!(cache.insert(4).1.map(|e| e.line), Some(1));
        assert_eq!(cache.lines().count(), 4);
        assert!(cache.remove(0).is_some());
        assert_eq!(cache.insert(5).1, None, "room again after a removal");
    }

    #[test]
    fn lru_kept_as_an_order_word_evicts_what_a_list_of_recency_evicts() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for ways in [2usize, 4, 8, 16] {
            let sets = 3;
            let geometry = Geometry {
                sets,
                ways,
                replacement: Replacement::Lru,
                indexing: SetIndexing::Modulo,
                pair_bit: None,
                matrix: None,
            };
            assert!(lru_by_order(&geometry));
            let mut cache = Cache::new(geometry);
            // Per set, lines from least to most recently used.
            let mut lists: Vec<Vec<u64>> = vec![Vec::new(); sets];
            for _ in 0..20_000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let line = x % (sets * (ways + ways / 2 + 1)) as u64;
                let list = &mut lists[line as usize % sets];
                let (_, hit, evicted) = cache.access_or_insert(line);
                let was = list.iter().position(|&l| l == line);
                assert_eq!(hit, was.is_some(), "{ways} ways, line {line}");
                if let Some(i) = was {
                    list.remove(i);
                } else if list.len() == ways {
                    let lru = list.remove(0);
                    assert_eq!(evicted.map(|e| e.line), Some(lru), "{ways} ways");
                } else {
                    assert!(evicted.is_none());
                }
                list.push(line);
            }
        }
        // Not a power of two: the stamps keep the order.
        let twelve = Geometry::new(12 * 128 * 4, 12, Replacement::Lru, SetIndexing::Modulo);
        assert!(!lru_by_order(&twelve));
    }

    #[test]
    fn promoting_the_most_recent_way_changes_nothing_and_others_move_to_the_top() {
        let o = initial_lru_order(4);
        assert_eq!(o, 0xFFFF_FFFF_FFFF_3210);
        assert_eq!(promoted(o, 3, 4), o);
        assert_eq!(promoted(o, 0, 4), 0xFFFF_FFFF_FFFF_0321);
        assert_eq!(promoted(o, 1, 4), 0xFFFF_FFFF_FFFF_1320);
        let full = initial_lru_order(16);
        assert_eq!(full, 0xFEDC_BA98_7654_3210);
        assert_eq!(promoted(full, 0, 16), 0x0FED_CBA9_8765_4321);
        assert_eq!(promoted(full, 14, 16), 0xEFDC_BA98_7654_3210);
    }

    fn two_way(replacement: Replacement) -> Cache {
        Cache::new(Geometry {
            sets: 2,
            ways: 2,
            replacement,
            indexing: SetIndexing::Modulo,
            pair_bit: None,
            matrix: None,
        })
    }

    /// One set of four ways, at most two of them for near lines.
    fn one_set_two_local_ways(replacement: Replacement) -> Cache {
        Cache::new(Geometry {
            sets: 1,
            ways: 4,
            replacement,
            indexing: SetIndexing::Modulo,
            pair_bit: None,
            matrix: None,
        })
        .with_local_ways(2)
    }

    #[test]
    fn near_lines_past_the_local_ways_replace_the_least_recent_near_line() {
        for policy in [Replacement::Lru, Replacement::Plru] {
            let mut c = one_set_two_local_ways(policy);
            let evicted = |r: (&mut LineState, bool, Option<Evicted>)| r.2.map(|e| e.line);
            assert_eq!(evicted(c.access_or_insert_for(10, true)), None); // far A
            assert_eq!(evicted(c.access_or_insert_for(11, false)), None); // near B
            assert_eq!(evicted(c.access_or_insert_for(12, false)), None); // near C
            // A third near line: B, the older near line, leaves though a way is empty.
            assert_eq!(
                evicted(c.access_or_insert_for(13, false)),
                Some(11),
                "{policy:?}"
            );
            // A far line takes the empty way, and the next one replaces by the policy: A.
            assert_eq!(evicted(c.access_or_insert_for(14, true)), None);
            assert_eq!(
                evicted(c.access_or_insert_for(15, true)),
                Some(10),
                "{policy:?}"
            );
            // A near use of far line 14 makes it near: three near lines, C the oldest of them.
            assert!(c.access_or_insert_for(14, false).1);
            assert_eq!(
                evicted(c.access_or_insert_for(16, false)),
                Some(12),
                "{policy:?}"
            );
            let mut left: Vec<u64> = c.lines().map(|(l, _)| l).collect();
            left.sort();
            assert_eq!(left, [13, 14, 15, 16], "{policy:?}");
        }
    }

    #[test]
    fn without_a_limit_the_side_of_a_request_changes_nothing() {
        let mut plain = two_way(Replacement::Plru);
        let mut sided = two_way(Replacement::Plru).with_local_ways(2);
        for (i, line) in [0u64, 2, 4, 0, 6, 2, 8].into_iter().enumerate() {
            let a = plain.access_or_insert(line);
            let (a1, a2) = (a.1, a.2.map(|e| e.line));
            let b = sided.access_or_insert_for(line, i % 2 == 0);
            assert_eq!((a1, a2), (b.1, b.2.map(|e| e.line)));
        }
    }

    #[test]
    fn lru_keeps_the_recently_used_line_and_evicts_the_other() {
        let mut c = two_way(Replacement::Lru);
        // Lines 0, 2, 4 map to set 0 of a 2-set, 2-way cache.
        c.insert(0).0.valid = 0b1111;
        c.insert(2).0.valid = 0b0001;
        assert!(c.access(0).is_some()); // 0 is now more recent than 2
        let (_, ev) = c.insert(4);
        assert_eq!(
            ev,
            Some(Evicted {
                line: 2,
                state: LineState {
                    valid: 0b0001,
                    dirty: 0,
                    stored_from_far: false,
                    far_fill_unread: false,
                    home_fill_unfetched: false,
                }
            })
        );
        assert!(c.peek(0).is_some() && c.peek(4).is_some() && c.peek(2).is_none());
        // Set 1 is untouched by all of this.
        c.insert(1);
        assert!(c.peek(0).is_some());
        // Now 0 is least recent in set 0.
        assert!(c.access(4).is_some());
        assert_eq!(c.insert(6).1.map(|e| e.line), Some(0));
    }

    /// A balanced geometry of `sets` sets (4 ways, LRU), with or without a pair bit.
    fn balanced(sets: usize, pair_bit: Option<u32>) -> Geometry {
        Geometry {
            sets,
            ways: 4,
            replacement: Replacement::Lru,
            indexing: SetIndexing::Balanced,
            pair_bit,
            matrix: None,
        }
    }

    #[test]
    fn balanced_indexing_puts_every_run_of_sets_lines_once_in_each_set() {
        for sets in [1, 7, 100, 12800] {
            let g = balanced(sets, None);
            for run in 0..5u64 {
                let mut seen: Vec<usize> = (0..sets as u64)
                    .map(|i| set_index(&g, run * sets as u64 + i))
                    .collect();
                seen.sort_unstable();
                assert_eq!(
                    seen,
                    (0..sets).collect::<Vec<_>>(),
                    "{sets} sets, run {run}"
                );
            }
        }
    }

    #[test]
    fn balanced_indexing_maps_no_pitch_of_lines_onto_a_stride_of_sets_and_shifts_each_run() {
        // A multiplier sends every pair of lines `pitch` apart the same number of sets apart;
        // the permutation sends them all over (star4's planes 16,900 lines apart, `permute`).
        let g = balanced(12800, None);
        for pitch in [1u64, 2, 16, 33, 4096, 8450, 8580] {
            let mut steps = std::collections::HashMap::new();
            for l in 0..12800 - pitch {
                let step = (set_index(&g, l + pitch) + 12800 - set_index(&g, l)) % 12800;
                *steps.entry(step).or_insert(0u32) += 1;
            }
            let most = *steps.values().max().unwrap() as f64 / (12800 - pitch) as f64;
            assert!(
                most < 0.01,
                "pitch {pitch}: {most:.3} of the pairs one step apart"
            );
        }
        let g = balanced(100, None);
        let firsts: Vec<usize> = (0..8u64).map(|run| set_index(&g, run * 100)).collect();
        let mut distinct = firsts.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert!(distinct.len() >= 6, "runs start in {firsts:?}");
    }

    #[test]
    fn balanced_indexing_gives_a_line_and_its_partner_one_set_and_leaves_the_pair_bit_out() {
        let g = balanced(100, Some(5));
        for line in 0..10_000u64 {
            assert_eq!(set_index(&g, line), set_index(&g, line ^ 32), "line {line}");
        }
        // The first 100 lines of one partition (bit 5 clear) fill every set once.
        let own: Vec<u64> = (0..).filter(|l| l & 32 == 0).take(100).collect();
        let mut seen: Vec<usize> = own.iter().map(|&l| set_index(&g, l)).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn shards_of_a_cache_together_behave_as_the_whole_cache() {
        let geometry = Geometry {
            sets: 5,
            ways: 2,
            replacement: Replacement::Lru,
            indexing: SetIndexing::Hash,
            pair_bit: None,
            matrix: None,
        };
        let mut whole = Cache::new(geometry);
        let mut shards: Vec<Cache> = (0..4).map(|k| Cache::shard(geometry, k, 4)).collect();
        let mut x = 12345u64;
        for _ in 0..2000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let line = (x >> 33) % 40;
            let s = &mut shards[set_index(&geometry, line) % 4];
            match (whole.access(line).is_some(), s.access(line).is_some()) {
                (true, true) => {}
                (false, false) => assert_eq!(whole.insert(line).1, s.insert(line).1),
                other => panic!("line {line}: whole and shard disagree: {other:?}"),
            }
        }
        // 5 sets over 4 shards: 2, 1, 1 and 1 sets.
        let held: Vec<usize> = shards.iter().map(|s| s.lines().count()).collect();
        assert_eq!(held.iter().sum::<usize>(), whole.lines().count());
        assert!(held[1..].iter().all(|&h| h <= 2), "{held:?}");
    }

    #[test]
    fn lru_order_survives_clock_wraparound() {
        let mut c = two_way(Replacement::Lru);
        c.insert(0);
        c.insert(2);
        if let Cache::SetAssoc(s) = &mut c {
            s.clock = u32::MAX - 1;
        }
        assert!(c.access(0).is_some()); // stamp u32::MAX
        assert!(c.access(2).is_some()); // wraps: renumbered, 2 newest
        assert_eq!(c.insert(4).1.map(|e| e.line), Some(0));
    }

    #[test]
    fn random_replacement_spreads_evictions_and_repeats_itself() {
        let evictions = || {
            let mut c = two_way(Replacement::Random);
            // Even lines all map to set 0; each insert beyond two evicts one of the set's ways.
            (0..200u64)
                .filter_map(|i| c.insert(2 * i).1.map(|e| e.line))
                .collect::<Vec<_>>()
        };
        let first = evictions();
        assert_eq!(first.len(), 198);
        assert_eq!(first, evictions());
        // Random, not FIFO or LRU (which always evict the older of the two): eviction i comes
        // with the insert of line 2(i+2), when the newest line present is 2(i+1).
        let young = first
            .iter()
            .enumerate()
            .filter(|&(i, &line)| line == 2 * (i as u64 + 1))
            .count();
        assert!(
            young > 40 && young < 160,
            "{young} of 198 evictions took the newest line"
        );
    }

    #[test]
    fn tree_plru_evicts_away_from_recent_uses() {
        let mut c = Cache::new(Geometry {
            sets: 1,
            ways: 4,
            replacement: Replacement::Plru,
            indexing: SetIndexing::Modulo,
            pair_bit: None,
            matrix: None,
        });
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
            let mut c = Cache::new(Geometry {
                sets: 1,
                ways,
                replacement: Replacement::Plru,
                indexing: SetIndexing::Modulo,
                pair_bit: None,
                matrix: None,
            });
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

    #[test]
    fn fifo_ignores_reuse() {
        let mut c = two_way(Replacement::Fifo);
        c.insert(0);
        c.insert(2);
        assert!(c.access(0).is_some());
        assert_eq!(c.insert(4).1.map(|e| e.line), Some(0));
    }

    #[test]
    fn hashed_indexing_stays_in_range_and_spreads_strides() {
        let g = Geometry {
            sets: 15360,
            ways: 16,
            replacement: Replacement::Lru,
            indexing: SetIndexing::Hash,
            pair_bit: None,
            matrix: None,
        };
        let Cache::SetAssoc(c) = Cache::new(g) else {
            unreachable!()
        };
        let mut used = std::collections::HashSet::new();
        for i in 0..4096u64 {
            let s = c.set_of(i * 1024); // a 128 KiB stride: one set under modulo-of-power-of-two
            assert!(s < 15360);
            used.insert(s);
        }
        assert!(used.len() > 3000, "{}", used.len());
    }

    #[test]
    fn xor_fold_indexing_gives_consecutive_lines_and_power_of_two_strides_distinct_sets() {
        // 640 sets of 3 ways: the 3-way trial L1 of docs/model.md "L1 geometry" (the shipped one
        // has 124 sets of 16), a set count that 640 consecutive lines fill exactly.
        let g = Geometry {
            sets: 640,
            ways: 3,
            replacement: Replacement::Lru,
            indexing: SetIndexing::XorFold,
            pair_bit: None,
            matrix: None,
        };
        let Cache::SetAssoc(c) = Cache::new(g) else {
            unreachable!()
        };
        for stride in [1u64, 512, 4096] {
            let sets: std::collections::HashSet<usize> =
                (0..640).map(|i| c.set_of(i * stride)).collect();
            assert_eq!(sets.len(), 640, "stride {stride} lines");
        }
        // 1920 lines 64 KiB apart fill every set exactly: no conflict misses at capacity, as the
        // chase measured; modulo indexing puts them all in 5 sets.
        let mut per_set = vec![0; 640];
        for i in 0..1920u64 {
            per_set[c.set_of(i * 512)] += 1;
        }
        assert!(per_set.iter().all(|&n| n == 3));
        let mut modulo = Cache::new(Geometry {
            indexing: SetIndexing::Modulo,
            ..g
        });
        for i in 0..1920u64 {
            if modulo.access(i * 512).is_none() {
                modulo.insert(i * 512);
            }
        }
        assert_eq!(modulo.lines().count(), 15);
    }

    #[test]
    fn infinite_never_evicts() {
        let mut c = Cache::infinite();
        for l in 0..10_000 {
            assert_eq!(c.insert(l).1, None);
        }
        assert_eq!(c.lines().count(), 10_000);
        assert_eq!(c.remove(5), Some(LineState::default()));
        assert!(c.peek(5).is_none());
    }
}
