//! DRAM: sector read/write counters, and the compulsory (infinite-cache) DRAM footprint.

use crate::metrics::SECTOR_SHIFT;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Sector traffic between the L2 and device memory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DramCounters {
    /// 32 B sectors read (fills, and merges of partially written sectors).
    pub read_sectors: u64,
    /// 32 B sectors written back (evictions of dirty sectors during the kernel).
    pub write_sectors: u64,
}

/// Tracks the DRAM reads an infinitely large L2 would make: the first read of each fill unit
/// fetches its sectors that were not fully written before. Shared by the L2's shards: the bits of
/// a line are only ever touched by the shard that owns the line, but one word holds the bits of
/// lines of several shards, hence atomic updates (whose order cannot matter).
#[derive(Debug)]
pub struct CompulsoryTracker {
    /// First sector tracked (absolute sector number).
    first_sector: u64,
    sectors_per_unit: u64,
    /// Sectors fully written by a store.
    full_written: Vec<AtomicU64>,
    /// Fill units already fetched.
    fetched: Vec<AtomicU64>,
    /// Compulsory DRAM read sectors so far.
    read_sectors: AtomicU64,
}

#[inline]
fn get(bits: &[AtomicU64], i: u64) -> bool {
    bits[(i >> 6) as usize].load(Relaxed) >> (i & 63) & 1 == 1
}

/// Sets bit `i`. Only the shard owning a bit sets it, so the plain test first is safe, and spares
/// most calls the atomic read-modify-write.
#[inline]
fn set(bits: &[AtomicU64], i: u64) {
    let word = &bits[(i >> 6) as usize];
    if word.load(Relaxed) >> (i & 63) & 1 == 0 {
        word.fetch_or(1 << (i & 63), Relaxed);
    }
}

impl CompulsoryTracker {
    /// A tracker for byte addresses `lo..hi` with fill units of `fill_bytes`.
    pub fn new(lo: u64, hi: u64, fill_bytes: u32) -> CompulsoryTracker {
        let first_sector = lo >> SECTOR_SHIFT;
        let sectors = (hi >> SECTOR_SHIFT) + 1 - first_sector;
        let per_unit = (fill_bytes / 32) as u64;
        CompulsoryTracker {
            first_sector,
            sectors_per_unit: per_unit,
            full_written: (0..sectors.div_ceil(64) + 1)
                .map(|_| AtomicU64::new(0))
                .collect(),
            fetched: (0..(sectors / per_unit).div_ceil(64) + 1)
                .map(|_| AtomicU64::new(0))
                .collect(),
            read_sectors: AtomicU64::new(0),
        }
    }

    /// Compulsory DRAM read sectors so far.
    pub fn read_sectors(&self) -> u64 {
        self.read_sectors.load(Relaxed)
    }

    /// A read of `sectors` of `line` reaching the L2.
    #[inline]
    pub fn read(&self, line: u64, sectors: u8) {
        let base = (line << 2) - self.first_sector;
        let per = self.sectors_per_unit;
        let mut s = 0u64;
        while s < 4 {
            let unit_mask = (((1u32 << per) - 1) << s) as u8;
            let wanted = sectors & unit_mask;
            if wanted != 0 {
                let unit = (base + s) / per;
                if !get(&self.fetched, unit) {
                    let needs = (0..per).any(|i| {
                        wanted >> (s + i) & 1 == 1 && !get(&self.full_written, base + s + i)
                    });
                    if needs {
                        set(&self.fetched, unit);
                        let n = (0..per)
                            .filter(|i| !get(&self.full_written, base + s + i))
                            .count() as u64;
                        self.read_sectors.fetch_add(n, Relaxed);
                    }
                }
            }
            s += per;
        }
    }

    /// A store reaching the L2 that fully writes `full` sectors of `line`.
    #[inline]
    pub fn write_full(&self, line: u64, full: u8) {
        let base = (line << 2) - self.first_sector;
        for s in 0..4 {
            if full >> s & 1 == 1 {
                set(&self.full_written, base + s);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_read_of_a_unit_fetches_the_unwritten_sectors_once() {
        let t = CompulsoryTracker::new(0, 1 << 20, 64);
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
        let t = CompulsoryTracker::new(4096, 8192, 32);
        t.read(4096 / 128, 0b1111);
        t.read(4096 / 128, 0b1111);
        assert_eq!(t.read_sectors(), 4);
    }
}
