//! The L2's sets, measured on both GPUs (`validation/l2_sets.cu reduce 8 POOL read`, data
//! `tests/data/{h100,h200}/micro/l2_sets_reduce_*.csv`): after a flush that leaves the sets clean,
//! group elimination shrinks a pool of random lines to a minimal set that evicts a target T, and
//! replacement sequences over that set and further lines of it show which line goes. Each test
//! checks one rule against the measured sets; the sequences are replayed through the library's
//! cache, one set of 16 ways filled with other lines first, as the flush left it.

use gputraffic::input::hw::{Replacement, SetIndexing};
use gputraffic::input::table::Table;
use gputraffic::sim::cache::{Cache, Geometry};
use std::collections::BTreeMap;
use std::path::Path;

const GPUS: [&str; 2] = ["h100", "h200"];
const WAYS: usize = 16;

fn rows(gpu: &str, file: &str) -> Vec<BTreeMap<String, String>> {
    let table = Table::load(Path::new(&format!("tests/data/{gpu}/micro/{file}"))).unwrap();
    let columns = &table.columns;
    table
        .rows
        .iter()
        .map(|r| columns.iter().cloned().zip(r.iter().cloned()).collect())
        .collect()
}

/// The lines of `l2_sets.cu`'s `replacement_sequences` read, as indices into C (C[0] = T,
/// C[1..16) the rest of the fill, C[16..) further lines of the set; `lines` of them).
fn sequence(name: &str, lines: usize) -> Vec<usize> {
    let new = lines - WAYS;
    let mut s: Vec<usize> = (0..WAYS).collect();
    let parts: Vec<&str> = name.split('-').collect();
    match &parts[1..] {
        ["1new"] => s.push(WAYS),
        ["allnew"] => s.extend(WAYS..lines),
        ["hitfirsthalf", "newhalf"] => {
            s.extend(0..WAYS / 2);
            s.extend(WAYS..WAYS + new.min(WAYS / 2));
        }
        ["hitall", "2new"] => {
            s.extend(0..WAYS);
            s.extend([WAYS, WAYS + 1]);
        }
        ["hitlast3x", "2new"] => {
            s.extend([WAYS - 1; 3]);
            s.extend([WAYS, WAYS + 1]);
        }
        [hit, news] => {
            s.push(hit.strip_prefix("hit").unwrap().parse().unwrap());
            let n: usize = news.strip_suffix("new").unwrap().parse().unwrap();
            s.extend(WAYS..WAYS + n);
        }
        _ => panic!("unknown sequence {name}"),
    }
    s
}

/// The lines of C absent after `seq`, replayed through one set of `replacement`.
fn replayed(replacement: Replacement, seq: &[usize], lines: usize) -> Vec<usize> {
    let geometry = Geometry::new(
        (WAYS * 128) as u64,
        WAYS as u32,
        replacement,
        SetIndexing::Modulo,
    );
    let mut set = Cache::new(geometry);
    let flushed = 1000u64;
    for line in flushed..flushed + WAYS as u64 {
        set.access_or_insert(line);
    }
    for &i in seq {
        set.access_or_insert(i as u64);
    }
    (0..lines)
        .filter(|&i| set.peek(i as u64).is_none())
        .collect()
}

/// Per GPU, per (target, sequence): the lines of C evicted in at least 2 of the 3 trials, and how
/// many lines C holds.
fn measured(gpu: &str) -> BTreeMap<(String, String), (Vec<usize>, usize)> {
    let mut evicted: BTreeMap<(String, String), BTreeMap<usize, u32>> = BTreeMap::new();
    for r in rows(gpu, "l2_sets_reduce_policy.csv") {
        let key = (r["target"].clone(), r["sequence"].clone());
        *evicted
            .entry(key)
            .or_default()
            .entry(r["probed"].parse().unwrap())
            .or_default() += r["evicted"].parse::<u32>().unwrap();
    }
    evicted
        .into_iter()
        .map(|(k, by_line)| {
            let lines = by_line.len();
            let gone = by_line
                .into_iter()
                .filter(|&(_, n)| n >= 2)
                .map(|(i, _)| i)
                .collect();
            (k, (gone, lines))
        })
        .collect()
}

#[test]
fn a_set_of_the_l2_holds_sixteen_lines_on_both_gpus() {
    for gpu in GPUS {
        let verified: Vec<_> = rows(gpu, "l2_sets_reduce_summary.csv")
            .into_iter()
            .filter(|r| r["stuck"] == "0" && r["full_evicts_of_5"] == "5")
            .collect();
        assert!(verified.len() >= 6, "{gpu}: {} sets", verified.len());
        for r in verified {
            // 16 lines evict T every time, and any 15 of them never.
            assert_eq!(r["set_size"], "16", "{gpu} target {}", r["target"]);
            assert_eq!(
                r["minus_one_evicts_of_3_max"], "0",
                "{gpu} target {}",
                r["target"]
            );
        }
    }
}

#[test]
fn the_l2_evicts_the_least_recently_used_line_of_a_set() {
    for gpu in GPUS {
        let sets = measured(gpu);
        assert!(sets.len() >= 60, "{gpu}: {} sequences", sets.len());
        for ((target, name), (gone, lines)) in &sets {
            let seq = sequence(name, *lines);
            assert_eq!(
                &replayed(Replacement::Lru, &seq, *lines),
                gone,
                "{gpu} target {target} {name}"
            );
        }
    }
}

#[test]
fn tree_plru_evicts_another_line_than_the_l2_after_a_hit_in_the_middle_of_a_set() {
    // After the fill and a hit on c2 or c8 one new line evicts c0 on both GPUs; tree-PLRU, the
    // configs' policy, evicts c1 (and c3 for c0 / c2 or c1 with two new lines after a hit on c1
    // or c5).
    for gpu in GPUS {
        let sets = measured(gpu);
        let mut parted = 0;
        for ((target, name), (gone, lines)) in &sets {
            let seq = sequence(name, *lines);
            let plru = replayed(Replacement::Plru, &seq, *lines);
            if [
                "fill-hit2-1new",
                "fill-hit8-1new",
                "fill-hit1-2new",
                "fill-hit5-2new",
            ]
            .contains(&name.as_str())
            {
                assert_ne!(&plru, gone, "{gpu} target {target} {name}");
                parted += 1;
            } else {
                assert_eq!(&plru, gone, "{gpu} target {target} {name}");
            }
        }
        assert!(
            parted >= 24,
            "{gpu}: {parted} sequences where the policies part"
        );
    }
}
