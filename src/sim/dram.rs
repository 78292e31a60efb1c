//! DRAM: sector read/write counters, and the compulsory (infinite-cache) DRAM footprint.

use crate::metrics::LINE_SHIFT;
use rayon::prelude::*;

pub use crate::sim::counters::DramCounters;

/// Lines per block of the compulsory tracker's bitmaps. Blocks are dealt round-robin to its
/// ranges (each range's bits a separate allocation), so a stencil's working set of a few planes
/// spreads over every range.
const BLOCK_LINES: u64 = 256;

/// Ranges the compulsory tracker is split into, each settled on its own thread.
pub const COMPULSORY_RANGES: usize = 32;

/// Tracks the DRAM reads an infinitely large L2 would make: the first read of each fill unit
/// fetches its sectors that were not fully written before.
///
/// Only the order of one line's requests matters, and the L2's shards each replay their own
/// lines' requests in order; so each shard logs what it saw ([`CompulsoryLog`]), bucketed by
/// range, and the ranges then settle the logs in parallel ([`CompulsoryTracker::settle`]), each
/// on bits no other range touches (sharing the bits between the shards' threads cost more than
/// half the time of a 16-thread run in atomic updates and cache-line transfers).
#[derive(Debug)]
pub struct CompulsoryTracker {
    layout: RangeLayout,
    ranges: Vec<RangeBits>,
}

/// Where a line's bits are: its range and its place there.
#[derive(Debug, Clone, Copy)]
pub struct RangeLayout {
    /// First line tracked, a multiple of [`BLOCK_LINES`].
    first_line: u64,
    /// Lines past the last one tracked.
    end_line: u64,
    /// log2 of the sectors per fill unit (0, 1 or 2).
    unit_shift: u32,
}

impl RangeLayout {
    /// The layout for byte addresses `lo..hi` with fill units of `fill_bytes`.
    fn new(lo: u64, hi: u64, fill_bytes: u32) -> RangeLayout {
        RangeLayout {
            first_line: (lo >> LINE_SHIFT) / BLOCK_LINES * BLOCK_LINES,
            end_line: (hi >> LINE_SHIFT) + 1,
            unit_shift: (fill_bytes / 32).clamp(1, 4).ilog2(),
        }
    }

    /// The range of `line` and the line's place in it.
    #[inline]
    fn place(&self, line: u64) -> (usize, u64) {
        debug_assert!(line >= self.first_line && line < self.end_line);
        let l = line - self.first_line;
        let block = l / BLOCK_LINES;
        let r = (block % COMPULSORY_RANGES as u64) as usize;
        let local = block / COMPULSORY_RANGES as u64 * BLOCK_LINES + l % BLOCK_LINES;
        (r, local)
    }
}

/// One range's bits.
#[derive(Debug, Default)]
struct RangeBits {
    /// Sectors fully written by a store.
    full_written: Vec<u64>,
    /// Fill units already fetched.
    fetched: Vec<u64>,
    /// Compulsory DRAM read sectors so far.
    read_sectors: u64,
}

impl RangeBits {
    /// A read of `sectors` of the line at `local`, with fill units of `1 << unit_shift` sectors.
    /// A line's 4 sector bits and its fill units' bits each lie within one word (4 and the
    /// units per line divide 64), so the line is read and updated a word at a time.
    #[inline]
    fn read(&mut self, local: u64, sectors: u8, unit_shift: u32) {
        let per = 1u32 << unit_shift;
        let units = 4 >> unit_shift;
        let written = (self.full_written[(local >> 4) as usize] >> ((local & 15) * 4)) as u32 & 0xF;
        let first_unit = local * units as u64;
        let word = &mut self.fetched[(first_unit >> 6) as usize];
        let at = first_unit & 63;
        let unit_sectors = (1u32 << per) - 1;
        for u in 0..units {
            let mask = unit_sectors << (u * per);
            let wanted = sectors as u32 & mask;
            let fetched = *word >> (at + u as u64) & 1 == 1;
            // The unit is fetched by the first read wanting a sector not fully written before,
            // and brings its sectors that were not.
            if wanted != 0 && !fetched && wanted & !written != 0 {
                *word |= 1 << (at + u as u64);
                self.read_sectors += (mask & !written).count_ones() as u64;
            }
        }
    }

    /// A store that fully writes `full` sectors of the line at `local`.
    #[inline]
    fn write_full(&mut self, local: u64, full: u8) {
        self.full_written[(local >> 4) as usize] |= ((full & 0xF) as u64) << ((local & 15) * 4);
    }
}

impl CompulsoryTracker {
    /// A tracker for byte addresses `lo..hi` with fill units of `fill_bytes`.
    pub fn new(lo: u64, hi: u64, fill_bytes: u32) -> CompulsoryTracker {
        let layout = RangeLayout::new(lo, hi, fill_bytes);
        let blocks = (layout.end_line - layout.first_line).div_ceil(BLOCK_LINES);
        let units_per_line = 4 >> layout.unit_shift;
        let ranges = (0..COMPULSORY_RANGES as u64)
            .map(|r| {
                let lines =
                    blocks.saturating_sub(r).div_ceil(COMPULSORY_RANGES as u64) * BLOCK_LINES;
                RangeBits {
                    full_written: vec![0; (lines * 4).div_ceil(64) as usize],
                    fetched: vec![0; (lines * units_per_line).div_ceil(64) as usize],
                    read_sectors: 0,
                }
            })
            .collect();
        CompulsoryTracker { layout, ranges }
    }

    /// An empty log of what an L2 shard sees, for this tracker.
    pub fn log(&self) -> CompulsoryLog {
        CompulsoryLog::with_layout(self.layout)
    }

    /// Compulsory DRAM read sectors so far.
    pub fn read_sectors(&self) -> u64 {
        self.ranges.iter().map(|r| r.read_sectors).sum()
    }

    /// A read of `sectors` of `line` reaching the L2.
    pub fn read(&mut self, line: u64, sectors: u8) {
        let (r, local) = self.layout.place(line);
        self.ranges[r].read(local, sectors, self.layout.unit_shift);
    }

    /// A store reaching the L2 that fully writes `full` sectors of `line`.
    pub fn write_full(&mut self, line: u64, full: u8) {
        let (r, local) = self.layout.place(line);
        self.ranges[r].write_full(local, full);
    }

    /// Applies and empties `logs` (each in its own order; different logs hold different lines),
    /// the ranges in parallel.
    pub fn settle<'a>(&mut self, logs: impl Iterator<Item = &'a mut CompulsoryLog>) {
        let mut logs: Vec<&mut CompulsoryLog> = logs.collect();
        let unit_shift = self.layout.unit_shift;
        self.ranges
            .par_iter_mut()
            .enumerate()
            .for_each(|(r, bits)| {
                for log in &logs {
                    for &op in &log.buckets[r] {
                        let (local, sectors) = (op >> 5, op as u8 & 0xF);
                        if op & WRITE_OP != 0 {
                            bits.write_full(local, sectors);
                        } else {
                            bits.read(local, sectors, unit_shift);
                        }
                    }
                }
            });
        for log in &mut logs {
            for b in &mut log.buckets {
                b.clear();
            }
        }
    }
}

/// Marks a logged full write (else a read).
const WRITE_OP: u64 = 1 << 4;

/// What one L2 shard sent the compulsory tracker since it last settled, in order, by range:
/// `place << 5 | write << 4 | sectors`.
#[derive(Debug, Clone)]
pub struct CompulsoryLog {
    layout: RangeLayout,
    buckets: Vec<Vec<u64>>,
}

impl CompulsoryLog {
    /// An empty log for a tracker of byte addresses `lo..hi` with fill units of `fill_bytes`.
    pub fn new(lo: u64, hi: u64, fill_bytes: u32) -> CompulsoryLog {
        CompulsoryLog::with_layout(RangeLayout::new(lo, hi, fill_bytes))
    }

    fn with_layout(layout: RangeLayout) -> CompulsoryLog {
        CompulsoryLog {
            layout,
            buckets: vec![Vec::new(); COMPULSORY_RANGES],
        }
    }

    /// A read of `sectors` of `line` reaching the L2.
    #[inline]
    pub fn read(&mut self, line: u64, sectors: u8) {
        let (r, local) = self.layout.place(line);
        self.buckets[r].push(local << 5 | sectors as u64);
    }

    /// A store reaching the L2 that fully writes `full` sectors of `line`.
    #[inline]
    pub fn write_full(&mut self, line: u64, full: u8) {
        if full != 0 {
            let (r, local) = self.layout.place(line);
            self.buckets[r].push(local << 5 | WRITE_OP | full as u64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_read_of_a_unit_fetches_the_unwritten_sectors_once() {
        let mut t = CompulsoryTracker::new(0, 1 << 20, 64);
        t.read(10, 0b0010); // sector 1 → unit {0,1}: 2 sectors
        assert_eq!(t.read_sectors(), 2);
        t.read(10, 0b0001); // same unit again: nothing
        assert_eq!(t.read_sectors(), 2);
        t.write_full(11, 0b0011);
        t.read(11, 0b0001); // fully written before any read: nothing
        assert_eq!(t.read_sectors(), 2);
        t.write_full(12, 0b0001);
        t.read(12, 0b0010); // unit {0,1} of line 12, sector 0 written: 1 sector
        assert_eq!(t.read_sectors(), 3);
    }

    #[test]
    fn sector_granularity() {
        let mut t = CompulsoryTracker::new(4096, 8192, 32);
        t.read(4096 / 128, 0b1111);
        t.read(4096 / 128, 0b1111);
        assert_eq!(t.read_sectors(), 4);
    }

    #[test]
    fn a_whole_line_fill_unit_fetches_every_unwritten_sector_of_the_line_once() {
        let mut t = CompulsoryTracker::new(0, 1 << 20, 128);
        t.write_full(20, 0b0100);
        t.read(20, 0b0001); // unit = the line; sector 2 fully written: 3 sectors
        assert_eq!(t.read_sectors(), 3);
        t.read(20, 0b1000);
        assert_eq!(t.read_sectors(), 3);
        t.write_full(21, 0b1111);
        t.read(21, 0b1111); // all written before: nothing
        t.read(22, 0b0000); // no sector wanted: nothing
        assert_eq!(t.read_sectors(), 3);
        // Lines 20 and 1020 lie in different ranges of the tracker; each counts on its own.
        t.read(1020, 0b0010);
        assert_eq!(t.read_sectors(), 7);
    }

    #[test]
    fn settling_the_shards_logs_counts_what_the_requests_in_order_count() {
        // Reads and full writes over 38 900 lines (every range, lines of blocks at both ends),
        // split between three logs by line as the L2's shards split them.
        for fill in [32, 64, 128] {
            let (lo, hi) = (3 * 4096 + 640, 5_000_000);
            let mut serial = CompulsoryTracker::new(lo, hi, fill);
            let mut settled = CompulsoryTracker::new(lo, hi, fill);
            let mut logs = [settled.log(), settled.log(), settled.log()];
            let mut x = 12345u64;
            for step in 0..200_000u64 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let line = (lo >> 7) + x % 38_900;
                let sectors = (x >> 20) as u8 & 0xF;
                let log = &mut logs[(line % 3) as usize];
                if x >> 40 & 3 == 0 {
                    serial.write_full(line, sectors);
                    log.write_full(line, sectors);
                } else if sectors != 0 {
                    serial.read(line, sectors);
                    log.read(line, sectors);
                }
                if step % 50_000 == 49_999 {
                    settled.settle(logs.iter_mut());
                    assert_eq!(settled.read_sectors(), serial.read_sectors());
                }
            }
            assert!(serial.read_sectors() > 100_000, "{}", serial.read_sectors());
        }
    }
}
