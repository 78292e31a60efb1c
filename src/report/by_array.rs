//! The per-array and per-access part of a report (`simulate --by-array`): a section of the table,
//! the `by_array` object of the JSON and `array.NAME.METRIC` / `access.N.METRIC` columns of the
//! CSV. Absent from all three without the flag.

use super::Report;
use crate::metrics::{self, COUNTERS, Reported, Sampling, sector_bytes};
use crate::sim::Counts;
use crate::sim::by_array::{AccessCounts, ByArray};
use serde::Serialize;
use std::fmt::Write;

/// The metrics counted per array: the report's ([`Report::metrics`]) less the shared-memory ones
/// (no array of global memory has them) and the derived ones (worked out for the launch as a
/// whole), in table order, with their values in `c`.
pub fn array_metrics(report: &Report, c: &Counts) -> Vec<(&'static str, u64)> {
    let values = crate::sim::counters::values(c);
    (COUNTERS.iter().zip(values))
        .filter(|(k, _)| {
            k.reported == Reported::All || (k.reported == Reported::Atomic && report.atomics)
        })
        .filter(|(k, _)| k.sampling != Sampling::Derived)
        .map(|(k, v)| (k.metric.expect("a reported counter has a metric"), v))
        .collect()
}

/// The L1 ones of [`array_metrics`]: what is counted per access.
fn access_metrics(report: &Report, a: &AccessCounts) -> Vec<(&'static str, u64)> {
    let c = Counts {
        l1: a.l1,
        ..Counts::default()
    };
    array_metrics(report, &c)
        .into_iter()
        .filter(|(n, _)| n.starts_with("l1tex__"))
        .collect()
}

/// Bytes per lattice update of the sector counts among `pairs` (requests have no byte volume).
fn per_lup(report: &Report, pairs: &[(&'static str, u64)]) -> Vec<(&'static str, f64)> {
    let lups = report.lattice_updates as f64;
    pairs
        .iter()
        .filter(|(n, _)| !metrics::is_request_count(n))
        .map(|&(n, v)| (n, sector_bytes(v) / lups))
        .collect()
}

/// How an access is named in the table: `load in[c + 1]`.
fn access_label(a: &AccessCounts) -> String {
    format!("{} {}[{}]", a.kind, a.array, a.index)
}

/// The table's section: per array the count and bytes per update of every metric, then per
/// access the L1's requests, sectors and load misses.
pub fn table(report: &Report, b: &ByArray) -> String {
    let mut s = String::new();
    let names: Vec<&str> = b.arrays.iter().map(|(n, _)| n.as_str()).collect();
    let per_array: Vec<Vec<(&'static str, u64)>> = b
        .arrays
        .iter()
        .map(|(_, c)| array_metrics(report, c))
        .collect();
    let Some(first) = per_array.first() else {
        return s;
    };
    let lups = report.lattice_updates as f64;
    for (title, bytes) in [("count", false), ("B/LUP", true)] {
        let _ = write!(s, "{:<58}", format!("by array, {title}"));
        for n in &names {
            let _ = write!(s, " {n:>14}");
        }
        let _ = writeln!(s);
        for (row, &(metric, _)) in first.iter().enumerate() {
            if bytes && metrics::is_request_count(metric) {
                continue;
            }
            let _ = write!(s, "{metric:<58}");
            for values in &per_array {
                let v = values[row].1;
                if bytes {
                    let _ = write!(s, " {:>14.3}", sector_bytes(v) / lups);
                } else {
                    let _ = write!(s, " {v:>14}");
                }
            }
            let _ = writeln!(s);
        }
        let _ = writeln!(s);
    }
    let width = (b.accesses.iter().map(|a| access_label(a).len()))
        .max()
        .unwrap_or(0)
        .max(24);
    let _ = writeln!(
        s,
        "{:<width$} {:>14} {:>14} {:>8} {:>14} {:>8}",
        "by access (L1)", "requests", "sectors", "B/LUP", "load misses", "B/LUP"
    );
    for a in &b.accesses {
        let l1 = &a.l1;
        let requests = l1.load_requests
            + l1.store_requests
            + l1.atomic_requests
            + l1.shared_load_requests
            + l1.shared_store_requests;
        let sectors = l1.load_sectors + l1.store_sectors + l1.atomic_sectors;
        let blup = |v: u64| format!("{:.3}", sector_bytes(v) / lups);
        let (sectors, sectors_blup, misses, misses_blup) = if a.kind.starts_with("shared") {
            ("-".into(), "-".into(), "-".into(), "-".into())
        } else if a.kind == "load" {
            let m = l1.load_miss_sectors;
            (sectors.to_string(), blup(sectors), m.to_string(), blup(m))
        } else {
            (sectors.to_string(), blup(sectors), "-".into(), "-".into())
        };
        let _ = writeln!(
            s,
            "{:<width$} {requests:>14} {sectors:>14} {sectors_blup:>8} {misses:>14} {misses_blup:>8}",
            access_label(a)
        );
    }
    s
}

/// The CSV's columns: `array.NAME.METRIC` and `array.NAME.METRIC_bytes_per_lup` per array, then
/// `access.N.METRIC` per access (N from 0 in the trace's order; its L1 metrics).
pub fn columns(report: &Report, b: &ByArray) -> Vec<(String, String)> {
    let mut cols = Vec::new();
    for (name, c) in &b.arrays {
        let counts = array_metrics(report, c);
        for (m, v) in &counts {
            cols.push((format!("array.{name}.{m}"), v.to_string()));
        }
        for (m, v) in per_lup(report, &counts) {
            let column = metrics::bytes_per_lup_column(m);
            cols.push((format!("array.{name}.{column}"), v.to_string()));
        }
    }
    for (i, a) in b.accesses.iter().enumerate() {
        for (m, v) in access_metrics(report, a) {
            cols.push((format!("access.{i}.{m}"), v.to_string()));
        }
    }
    cols
}

/// The JSON's `by_array` object: `arrays` (each `array`, `metrics`, `bytes_per_lup`) and
/// `accesses` (each `access`, `kind`, `array`, `index`, `metrics`, `bytes_per_lup`).
#[derive(Serialize)]
pub struct ByArrayJson {
    arrays: Vec<ArrayJson>,
    accesses: Vec<AccessJson>,
}

/// One array in [`ByArrayJson`].
#[derive(Serialize)]
struct ArrayJson {
    array: String,
    #[serde(serialize_with = "super::pairs_as_map")]
    metrics: Vec<(&'static str, u64)>,
    #[serde(serialize_with = "super::pairs_as_map")]
    bytes_per_lup: Vec<(&'static str, f64)>,
}

/// One access in [`ByArrayJson`].
#[derive(Serialize)]
struct AccessJson {
    access: usize,
    kind: &'static str,
    array: String,
    index: String,
    #[serde(serialize_with = "super::pairs_as_map")]
    metrics: Vec<(&'static str, u64)>,
    #[serde(serialize_with = "super::pairs_as_map")]
    bytes_per_lup: Vec<(&'static str, f64)>,
}

/// [`ByArrayJson`] of `b`.
pub fn json(report: &Report, b: &ByArray) -> ByArrayJson {
    ByArrayJson {
        arrays: (b.arrays.iter())
            .map(|(name, c)| {
                let metrics = array_metrics(report, c);
                ArrayJson {
                    array: name.clone(),
                    bytes_per_lup: per_lup(report, &metrics),
                    metrics,
                }
            })
            .collect(),
        accesses: (b.accesses.iter().enumerate())
            .map(|(i, a)| {
                let metrics = access_metrics(report, a);
                AccessJson {
                    access: i,
                    kind: a.kind,
                    array: a.array.clone(),
                    index: a.index.clone(),
                    bytes_per_lup: per_lup(report, &metrics),
                    metrics,
                }
            })
            .collect(),
    }
}
