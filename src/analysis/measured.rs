//! Measured launches: hardware counters of real kernel launches, with what is needed to simulate
//! the same launch (trace, domain, block, parameters).
//!
//! Two inputs are read:
//! - a wide CSV, one row per launch, as `tests/data/h200_dev_set.csv`: columns `kernel` (a trace
//!   name, `_` and `-` alike), `nx,ny,nz` (domain), `bx,by,bz` (block), optionally `cz` (passed to
//!   traces that have a `cz` parameter) and `grid` (checked), then one column per counter;
//! - the raw long-format export of `ncu --csv --print-units base` (one line per launch and metric,
//!   values with thousands separators) together with a TOML manifest whose `[[launch]]` entries
//!   say which trace each profiled launch runs. An entry is matched to launches by its `id` (ncu's
//!   `ID` column) or by `function`, `block` and `grid`; whatever it gives must agree with the
//!   export, so a manifest written for another run fails loudly instead of comparing wrong pairs.
//!
//! Names that look like metrics ([`metrics::looks_like_metric`]) but misspell a modelled one
//! ([`metrics::misspelt_metric`]) are refused, as are wide-CSV columns that are neither launch
//! columns nor metrics, and inputs with no metric `validate` compares: a typo must not leave the
//! report empty. Nsight Compute metrics the simulator does not model are ignored.

use crate::error::{Error, Result, from_toml, read_file};
use crate::input::kernel_source::LiftSettings;
use crate::launch::LaunchRequest;
use crate::launch::geometry::{BlockLimit, check_block, max_side};
use crate::metrics;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use toml::Spanned;

/// Every metric compared, in report order: the simulated counts (the L1 wavefronts among them),
/// then the time estimate.
pub fn compared_metrics() -> Vec<&'static str> {
    metrics::ALL
        .iter()
        .copied()
        .chain([metrics::DURATION])
        .collect()
}

/// One measured launch.
#[derive(Debug, Clone)]
pub struct MeasuredLaunch {
    /// The profiler's launch id, where the input has one.
    pub id: Option<u64>,
    /// The kernel to simulate: a trace (shipped name or path) or a `.ptx`/`.cu` file.
    pub kernel: String,
    /// How a `.ptx`/`.cu` kernel is lifted (a manifest launch's `entry` and other lift keys).
    pub lift: LiftSettings,
    /// Where the kernel is named, for errors of its lift (`manifest.toml: line 7, column 9`).
    pub kernel_at: Option<String>,
    /// Domain, block and parameters of the launch.
    pub request: LaunchRequest,
    /// The grid the hardware ran, where the input says; the simulated grid must equal it.
    pub grid: Option<[u64; 3]>,
    /// Counter values by metric name (cells without a value, such as `n/a`, are left out).
    pub counters: BTreeMap<String, f64>,
    /// Where the launch was read, for messages (`dev_set.csv line 5`, `ncu.csv ID 3`).
    pub origin: String,
    /// The group a manifest puts the launch in (its `group` key), for kernels whose block size
    /// is a template argument (`tree<256, 1>`): by default the group is [`Self::kernel_group`].
    pub group: Option<String>,
}

impl MeasuredLaunch {
    /// A short name: trace, domain, block and the parameters set (`star4 640x512x512 32x8x4`).
    pub fn label(&self) -> String {
        let dims = |d: &[i64]| {
            d.iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join("x")
        };
        let mut s = self.kernel_group();
        if let Some(b) = self.request.block {
            s += &format!(" {}", dims(&b.map(i64::from)));
        }
        s
    }

    /// The launches whose counters are ranked against each other: the manifest's `group` where
    /// it gives one, else [`Self::kernel_group`].
    pub fn group(&self) -> String {
        self.group.clone().unwrap_or_else(|| self.kernel_group())
    }

    /// Same trace, domain and parameters, any block (`star4 640x512x512`).
    pub fn kernel_group(&self) -> String {
        let mut s = self.kernel_name();
        if let Some(d) = self.request.domain {
            s += &format!(" {}x{}x{}", d[0], d[1], d[2]);
        }
        for (k, v) in &self.request.set {
            s += &format!(" {k}={v}");
        }
        s
    }
}

impl MeasuredLaunch {
    /// The kernel's short name: [`trace_stem`], and for a lifted kernel picked by `entry`, the
    /// entry too (`stencils:star<1>`).
    pub fn kernel_name(&self) -> String {
        let stem = trace_stem(&self.kernel);
        match &self.lift.entry {
            Some(entry) => format!(
                "{}:{entry}",
                stem.trim_end_matches(".cu").trim_end_matches(".ptx")
            ),
            None => stem,
        }
    }
}

/// The trace name without folders and `.toml`, with `_` written as `-` as the shipped traces
/// spell it.
pub fn trace_stem(kernel: &str) -> String {
    kernel
        .rsplit('/')
        .next()
        .unwrap_or(kernel)
        .trim_end_matches(".toml")
        .replace('_', "-")
}

/// Reads measured launches from `measured`: an ncu long-format export (then `manifest` is
/// required) or a wide CSV (then `manifest` must be absent). Also returns notes for the user
/// (launches of the export that no manifest entry names).
pub fn load(
    measured: &Path,
    manifest: Option<&Path>,
) -> Result<(Vec<MeasuredLaunch>, Vec<String>)> {
    let (name, header, records) = read_table(measured)?;
    let is_ncu = is_ncu_export(&header);
    match (is_ncu, manifest) {
        (true, Some(m)) => {
            check_ncu_metric_names(&name, &header, &records)?;
            let launches = ncu_launches(&name, &header, &records)?;
            let (measured, notes) = match_manifest(&name, launches, m)?;
            if !measured.iter().any(has_compared_metric) {
                let m = m.display().to_string();
                return Err(Error::new(
                    m,
                    format!(
                        "the launches it names in {name} have none of the metrics validate compares ({})",
                        compared_metrics().join(", ")
                    ),
                ));
            }
            Ok((measured, notes))
        }
        (true, None) => Err(Error::new(
            &name,
            "this is an Nsight Compute export; --manifest must say which trace each launch runs",
        )),
        (false, None) => {
            let launches = wide_launches(&name, &header, &records)?;
            if !launches.iter().any(has_compared_metric) {
                return Err(Error::new(
                    &name,
                    format!(
                        "no column holds a metric validate compares ({})",
                        compared_metrics().join(", ")
                    ),
                ));
            }
            Ok((launches, vec![]))
        }
        (false, Some(m)) => Err(Error::new(
            m.display().to_string(),
            format!(
                "a manifest goes with an Nsight Compute export (columns ID, Metric Name, Metric Value), and {name} is not one"
            ),
        )),
    }
}

/// The counters of every launch of an Nsight Compute long-format export (`ncu --csv
/// --print-units base`, a raw capture with the program's output before the table included), in
/// launch-ID order: for benchmarks whose launches no trace describes, read beside their own runs
/// file.
pub fn ncu_counters(path: &Path) -> Result<Vec<BTreeMap<String, f64>>> {
    let (name, header, records) = read_table(path)?;
    if !is_ncu_export(&header) {
        return Err(Error::new(
            &name,
            "not an Nsight Compute export (columns ID, Metric Name, Metric Value)",
        ));
    }
    let mut launches = ncu_launches(&name, &header, &records)?;
    launches.sort_by_key(|l| l.id);
    Ok(launches.into_iter().map(|l| l.counters).collect())
}

/// Whether `launch` has a value for a metric `validate` compares.
fn has_compared_metric(launch: &MeasuredLaunch) -> bool {
    compared_metrics()
        .iter()
        .any(|m| launch.counters.contains_key(*m))
}

/// The refusal of a metric name that misspells a modelled one ([`metrics::misspelt_metric`]).
fn misspelling(at: String, metric: &str, meant: &str) -> Error {
    Error::new(
        at,
        format!(
            "'{metric}' is no metric gputraffic knows; did you mean {meant}? (unknown Nsight Compute metrics are ignored, but this one misspells a modelled one)"
        ),
    )
}

/// Refuses an export whose `Metric Name` column has a misspelling of a modelled metric (at
/// its first line); every other name, modelled or not, is accepted.
fn check_ncu_metric_names(name: &str, header: &[String], records: &[Vec<String>]) -> Result<()> {
    let column = header
        .iter()
        .position(|h| h == "Metric Name")
        .expect("an ncu export");
    let mut seen = std::collections::BTreeSet::new();
    for (row, rec) in records.iter().enumerate() {
        let metric = rec[column].trim();
        if seen.insert(metric)
            && let Some(meant) = metrics::misspelt_metric(metric)
        {
            return Err(misspelling(
                format!("{name} line {}", row + 2),
                metric,
                meant,
            ));
        }
    }
    Ok(())
}

/// Whether a table's header is that of an Nsight Compute long-format export.
fn is_ncu_export(header: &[String]) -> bool {
    ["ID", "Metric Name", "Metric Value"]
        .iter()
        .all(|c| header.iter().any(|h| h == c))
}

/// A CSV file's name (for errors), header and records.
fn read_table(path: &Path) -> Result<(String, Vec<String>, Vec<Vec<String>>)> {
    let text = read_file(path)?;
    let name = path.display().to_string();
    // A raw `ncu --csv` capture starts with the profiled program's own output and ncu's
    // `==PROF==` lines: the table starts at ncu's header.
    let table = match text.find("\"ID\",") {
        Some(at) if at > 0 && text[..at].ends_with('\n') => &text[at..],
        _ => text.as_str(),
    };
    let mut reader = csv::ReaderBuilder::new()
        .flexible(false)
        .from_reader(table.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| Error::new(&name, format!("not a CSV file: {e}")))?
        .iter()
        .map(str::to_string)
        .collect();
    let records = reader
        .records()
        .map(|r| {
            r.map(|r| r.iter().map(str::to_string).collect::<Vec<_>>())
                .map_err(|e| Error::new(&name, format!("CSV: {e}")))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((name, header, records))
}

/// Parses a counter cell: `n/a` and empty cells have no value; thousands separators are dropped.
fn counter_value(cell: &str) -> Option<std::result::Result<f64, ()>> {
    let t = cell.trim();
    if t.is_empty() || t.eq_ignore_ascii_case("n/a") {
        return None;
    }
    Some(t.replace(',', "").parse::<f64>().map_err(|_| ()))
}

/// Parses `(1024, 1, 1)`, `[1024, 1, 1]` or `1024x1x1`.
fn parse_triple(cell: &str) -> Option<[u64; 3]> {
    let inner = cell
        .trim()
        .trim_start_matches(['(', '['])
        .trim_end_matches([')', ']']);
    let parts: Vec<u64> = inner
        .split([',', 'x'])
        .map(|p| p.trim().parse::<u64>())
        .collect::<std::result::Result<_, _>>()
        .ok()?;
    parts.try_into().ok()
}

const WIDE_IDENTITY: [&str; 7] = ["kernel", "nx", "ny", "nz", "bx", "by", "bz"];
/// The other columns of a wide CSV that are no metric: read (`cz`, `grid`, `id`) or kept for
/// people and not read (`kernel_fn`, `block`: ncu's function name and block as it prints them).
const WIDE_OPTIONAL: [&str; 5] = ["cz", "grid", "id", "kernel_fn", "block"];

/// Refuses a wide CSV column that is neither a launch column ([`WIDE_IDENTITY`],
/// [`WIDE_OPTIONAL`]) nor looks like a metric ([`metrics::looks_like_metric`]), and one that
/// misspells a modelled metric; names the column at line 1 and the closest known name.
fn check_wide_columns(name: &str, header: &[String]) -> Result<()> {
    for c in header {
        let at = || format!("{name} line 1, column {c}");
        if let Some(meant) = metrics::misspelt_metric(c) {
            return Err(misspelling(at(), c, meant));
        }
        let launch_column =
            WIDE_IDENTITY.contains(&c.as_str()) || WIDE_OPTIONAL.contains(&c.as_str());
        if !launch_column && !metrics::looks_like_metric(c) {
            let known = WIDE_IDENTITY
                .iter()
                .chain(&WIDE_OPTIONAL)
                .copied()
                .chain(metrics::modelled());
            return Err(Error::new(
                at(),
                format!(
                    "'{c}' is neither a launch column ({}) nor a metric (Nsight Compute names have '__' or '.', as {}){}",
                    WIDE_IDENTITY
                        .iter()
                        .chain(&WIDE_OPTIONAL)
                        .copied()
                        .collect::<Vec<_>>()
                        .join(", "),
                    metrics::DRAM_READ,
                    crate::input::did_you_mean(c, known)
                ),
            ));
        }
    }
    Ok(())
}

fn wide_launches(
    name: &str,
    header: &[String],
    records: &[Vec<String>],
) -> Result<Vec<MeasuredLaunch>> {
    let col = |c: &str| header.iter().position(|h| h == c);
    let missing: Vec<&str> = WIDE_IDENTITY
        .iter()
        .copied()
        .filter(|c| col(c).is_none())
        .collect();
    if !missing.is_empty() {
        return Err(Error::new(
            name,
            format!(
                "neither an Nsight Compute export nor a wide CSV: no column {} (a wide CSV has kernel,nx,ny,nz,bx,by,bz[,cz] and one column per metric)",
                missing.join(", ")
            ),
        ));
    }
    check_wide_columns(name, header)?;
    if records.is_empty() {
        return Err(Error::new(name, "no launches (only a header)"));
    }
    let cz = col("cz");
    let grid = col("grid");
    let id = col("id");
    let counter_columns: Vec<usize> = (0..header.len())
        .filter(|&i| metrics::looks_like_metric(&header[i]))
        .collect();
    let mut launches = Vec::with_capacity(records.len());
    for (row, rec) in records.iter().enumerate() {
        let line = row + 2;
        let at = |c: &str| format!("{name} line {line}, column {c}");
        let int = |c: &str| -> Result<i64> {
            let v = &rec[col(c).expect("identity column present")];
            v.trim()
                .parse::<i64>()
                .ok()
                .filter(|v| *v > 0)
                .ok_or_else(|| Error::new(at(c), format!("'{v}' is not a positive integer")))
        };
        let kernel = rec[col("kernel").expect("identity column present")]
            .trim()
            .to_string();
        if kernel.is_empty() {
            return Err(Error::new(at("kernel"), "empty kernel name"));
        }
        let block = [int("bx")?, int("by")?, int("bz")?];
        // The sides only: the threads per block depend on the GPU (checked by `Launch::new`).
        if let Err(limit) = check_block(block, u64::MAX) {
            let max = match limit {
                BlockLimit::NotPositive(d) | BlockLimit::Side(d) => max_side(d, u64::MAX),
                BlockLimit::Threads(_) => unreachable!("no thread limit was given"),
            };
            return Err(Error::new(
                format!("{name} line {line}"),
                format!("block {block:?} has a dimension above {max}"),
            ));
        }
        let mut set = vec![];
        if let Some(c) = cz {
            let v = rec[c].trim();
            if !v.is_empty() {
                let v: i64 = v.parse().ok().filter(|v| *v > 0).ok_or_else(|| {
                    Error::new(at("cz"), format!("'{v}' is not a positive integer"))
                })?;
                // The column is shared by all kernels; only traces that walk z points take it.
                let trace = crate::input::kernel_source::load(&kernel)
                    .map_err(|e| Error::new(at("kernel"), e.message))?;
                if trace.params.contains_key("cz") {
                    set.push(("cz".to_string(), v));
                } else if v != 1 {
                    return Err(Error::new(
                        at("cz"),
                        format!("cz = {v}, but trace {kernel} has no cz parameter"),
                    ));
                }
            }
        }
        let grid = match grid {
            Some(c) => Some(parse_triple(&rec[c]).ok_or_else(|| {
                Error::new(
                    at("grid"),
                    format!("'{}' is not a grid like (1, 256, 256)", rec[c]),
                )
            })?),
            None => None,
        };
        let mut counters = BTreeMap::new();
        for &c in &counter_columns {
            match counter_value(&rec[c]) {
                Some(Ok(v)) => {
                    counters.insert(header[c].clone(), v);
                }
                Some(Err(())) => {
                    return Err(Error::new(
                        at(&header[c]),
                        format!("'{}' is not a number", rec[c]),
                    ));
                }
                None => {}
            }
        }
        launches.push(MeasuredLaunch {
            id: id.and_then(|c| rec[c].trim().parse().ok()),
            kernel,
            lift: LiftSettings::default(),
            kernel_at: None,
            request: LaunchRequest {
                block: Some(block.map(|b| b as u32)),
                domain: Some([int("nx")?, int("ny")?, int("nz")?]),
                set,
            },
            grid,
            counters,
            origin: format!("{name} line {line}"),
            group: None,
        });
    }
    Ok(launches)
}

/// One profiled launch of an ncu export, before the manifest names its trace.
#[derive(Debug)]
struct NcuLaunch {
    id: u64,
    function: String,
    block: Option<[u64; 3]>,
    grid: Option<[u64; 3]>,
    counters: BTreeMap<String, f64>,
}

fn ncu_launches(name: &str, header: &[String], records: &[Vec<String>]) -> Result<Vec<NcuLaunch>> {
    let col = |c: &str| header.iter().position(|h| h == c);
    let (id_c, metric_c, value_c) = (
        col("ID").expect("checked"),
        col("Metric Name").expect("checked"),
        col("Metric Value").expect("checked"),
    );
    let (fn_c, block_c, grid_c) = (col("Kernel Name"), col("Block Size"), col("Grid Size"));
    let mut launches: Vec<NcuLaunch> = vec![];
    for (row, rec) in records.iter().enumerate() {
        let at = format!("{name} line {}", row + 2);
        let id: u64 = rec[id_c]
            .trim()
            .parse()
            .map_err(|_| Error::new(&at, format!("launch ID '{}' is not a number", rec[id_c])))?;
        let function = fn_c.map(|c| rec[c].clone()).unwrap_or_default();
        let triple = |c: Option<usize>, what: &str| -> Result<Option<[u64; 3]>> {
            match c {
                Some(c) => parse_triple(&rec[c]).map(Some).ok_or_else(|| {
                    Error::new(&at, format!("{what} '{}' is not like (32, 8, 4)", rec[c]))
                }),
                None => Ok(None),
            }
        };
        let (block, grid) = (triple(block_c, "Block Size")?, triple(grid_c, "Grid Size")?);
        let launch = match launches.iter_mut().find(|l| l.id == id) {
            Some(l) => {
                if l.function != function || l.block != block || l.grid != grid {
                    return Err(Error::new(
                        &at,
                        format!(
                            "launch ID {id} names another kernel, block or grid than its earlier lines"
                        ),
                    ));
                }
                l
            }
            None => {
                launches.push(NcuLaunch {
                    id,
                    function,
                    block,
                    grid,
                    counters: BTreeMap::new(),
                });
                launches.last_mut().expect("just pushed")
            }
        };
        let metric = rec[metric_c].trim().to_string();
        match counter_value(&rec[value_c]) {
            Some(Ok(v)) if launch.counters.insert(metric.clone(), v).is_some() => {
                return Err(Error::new(
                    &at,
                    format!("launch ID {id} has {metric} twice"),
                ));
            }
            Some(Ok(_)) => {}
            Some(Err(())) => {
                return Err(Error::new(
                    &at,
                    format!("{metric} = '{}' is not a number", rec[value_c]),
                ));
            }
            None => {}
        }
    }
    if launches.is_empty() {
        return Err(Error::new(name, "no launches (only a header)"));
    }
    Ok(launches)
}

/// The manifest: which trace each profiled launch runs.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    #[serde(default)]
    launch: Vec<ManifestEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestEntry {
    /// ncu's launch ID.
    id: Option<u64>,
    /// Kernel function as ncu names it without return type and arguments (`star<1>`).
    function: Option<String>,
    block: Option<[u64; 3]>,
    grid: Option<[u64; 3]>,
    /// Trace name or path, or a `.ptx`/`.cu` file to lift.
    trace: Spanned<String>,
    domain: Option<[i64; 3]>,
    #[serde(default)]
    set: BTreeMap<String, i64>,
    // How a .ptx/.cu kernel is lifted, as the command line's options of the same names
    // (docs/cuda.md); the grid expressions are `kernel_grid`, since `grid` is the measured one.
    entry: Option<String>,
    nvcc: Option<String>,
    #[serde(default)]
    nvcc_args: Vec<String>,
    kernel_grid: Option<String>,
    registers: Option<u32>,
    #[serde(default)]
    extents: Vec<String>,
    updates: Option<String>,
    /// The group whose shapes are ranked against each other, where the kernel's name alone does
    /// not make it (a block size given as a template argument: `tree<64, 1>`, `tree<128, 1>`).
    group: Option<String>,
}

impl ManifestEntry {
    /// The lift settings the entry gives.
    fn lift(&self) -> LiftSettings {
        LiftSettings {
            entry: self.entry.clone(),
            nvcc: self.nvcc.clone(),
            nvcc_args: self.nvcc_args.clone(),
            grid: self.kernel_grid.clone(),
            registers: self.registers,
            extents: self.extents.clone(),
            updates: self.updates.clone(),
        }
    }
}

/// `void star<1>(const double *, double *, int)` → `star<1>`: ncu's demangled name without
/// return type and arguments.
fn function_name(ncu_name: &str) -> &str {
    let mut depth = 0;
    let mut end = ncu_name.len();
    for (i, ch) in ncu_name.char_indices() {
        match ch {
            '<' => depth += 1,
            '>' => depth -= 1,
            '(' if depth == 0 => {
                end = i;
                break;
            }
            _ => {}
        }
    }
    let head = ncu_name[..end].trim();
    head.strip_prefix("void ").unwrap_or(head).trim()
}

impl ManifestEntry {
    /// Whether `launch` has everything this entry names other than its id.
    fn agrees_with(&self, launch: &NcuLaunch) -> bool {
        let function = function_name(&launch.function);
        self.function.as_ref().is_none_or(|f| {
            f == function || (!function.contains('<') && f.split('<').next() == Some(function))
        }) && self.block.is_none_or(|b| Some(b) == launch.block)
            && self.grid.is_none_or(|g| Some(g) == launch.grid)
    }

    fn describe(&self) -> String {
        let mut parts = vec![];
        if let Some(f) = &self.function {
            parts.push(f.clone());
        }
        if let Some(b) = self.block {
            parts.push(format!("block {b:?}"));
        }
        if let Some(g) = self.grid {
            parts.push(format!("grid {g:?}"));
        }
        parts.join(", ")
    }
}

fn describe_ncu(l: &NcuLaunch) -> String {
    format!(
        "{} block {:?} grid {:?}",
        function_name(&l.function),
        l.block.unwrap_or_default(),
        l.grid.unwrap_or_default()
    )
}

fn match_manifest(
    name: &str,
    launches: Vec<NcuLaunch>,
    manifest_path: &Path,
) -> Result<(Vec<MeasuredLaunch>, Vec<String>)> {
    let mname = manifest_path.display().to_string();
    let text = read_file(manifest_path)?;
    let manifest: Manifest = from_toml(&text, &mname)?;
    if manifest.launch.is_empty() {
        return Err(Error::new(&mname, "no [[launch]] entries"));
    }
    let kernel_at = |entry: &ManifestEntry| {
        format!(
            "{mname}: {}",
            crate::error::Position::of(&text, entry.trace.span().start)
        )
    };
    let mut owner: Vec<Option<usize>> = vec![None; launches.len()];
    for (e, entry) in manifest.launch.iter().enumerate() {
        let trace = entry.trace.get_ref();
        if !crate::input::ptx::is_liftable(trace) && !entry.lift().is_empty() {
            return Err(Error::new(
                kernel_at(entry),
                format!(
                    "'{trace}' is a trace: entry, nvcc, nvcc_args, kernel_grid, registers, extents and updates apply to .ptx and .cu kernels only"
                ),
            ));
        }
        let at = format!("{mname}: launch entry {} (trace {trace})", e + 1);
        let matched: Vec<usize> = match entry.id {
            Some(id) => {
                let i = launches
                    .iter()
                    .position(|l| l.id == id)
                    .ok_or_else(|| Error::new(&at, format!("id {id} is not a launch of {name}")))?;
                if !entry.agrees_with(&launches[i]) {
                    return Err(Error::new(
                        &at,
                        format!(
                            "expects {} but launch {id} of {name} is {}",
                            entry.describe(),
                            describe_ncu(&launches[i])
                        ),
                    ));
                }
                vec![i]
            }
            None => {
                if entry.function.is_none() && entry.block.is_none() && entry.grid.is_none() {
                    return Err(Error::new(
                        &at,
                        "names no launch: give id, or function, block and grid",
                    ));
                }
                let m: Vec<usize> = (0..launches.len())
                    .filter(|&i| entry.agrees_with(&launches[i]))
                    .collect();
                if m.is_empty() {
                    return Err(Error::new(
                        &at,
                        format!("no launch of {name} is {}", entry.describe()),
                    ));
                }
                m
            }
        };
        for i in matched {
            if let Some(other) = owner[i] {
                return Err(Error::new(
                    &at,
                    format!(
                        "launch {} of {name} is also named by entry {}",
                        launches[i].id,
                        other + 1
                    ),
                ));
            }
            owner[i] = Some(e);
        }
    }
    let mut notes = vec![];
    let unnamed: Vec<u64> = launches
        .iter()
        .zip(&owner)
        .filter(|(_, o)| o.is_none())
        .map(|(l, _)| l.id)
        .collect();
    if !unnamed.is_empty() {
        notes.push(format!(
            "{name}: {} launches have no manifest entry and are left out (ID {})",
            unnamed.len(),
            id_ranges(&unnamed)
        ));
    }
    let measured = launches
        .into_iter()
        .zip(owner)
        .filter_map(|(l, o)| o.map(|e| (l, &manifest.launch[e])))
        .map(|(l, entry)| MeasuredLaunch {
            id: Some(l.id),
            kernel: entry.trace.get_ref().clone(),
            lift: entry.lift(),
            kernel_at: Some(kernel_at(entry)),
            request: LaunchRequest {
                block: entry.block.or(l.block).map(|b| b.map(|v| v as u32)),
                domain: entry.domain,
                set: entry.set.iter().map(|(k, v)| (k.clone(), *v)).collect(),
            },
            grid: l.grid,
            counters: l.counters,
            origin: format!("{name} ID {}", l.id),
            group: entry.group.clone(),
        })
        .collect();
    Ok((measured, notes))
}

/// `0, 1, 2, 5, 7, 8` → `0-2, 5, 7-8`.
fn id_ranges(ids: &[u64]) -> String {
    let mut parts: Vec<String> = vec![];
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
            j += 1;
        }
        parts.push(match j > i {
            true => format!("{}-{}", ids[i], ids[j]),
            false => ids[i].to_string(),
        });
        i = j + 1;
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_lists_are_written_as_ranges() {
        assert_eq!(id_ranges(&[0, 1, 2, 5, 7, 8]), "0-2, 5, 7-8");
        assert_eq!(id_ranges(&[4]), "4");
    }

    #[test]
    fn function_names_lose_return_type_and_arguments() {
        assert_eq!(
            function_name("void star<1>(const double *, double *, int, int, int, int, long)"),
            "star<1>"
        );
        assert_eq!(function_name("copy(const double *, double *)"), "copy");
        assert_eq!(function_name("void f<(int)3>(int)"), "f<(int)3>");
    }

    #[test]
    fn triples_and_values_parse_in_every_spelling() {
        assert_eq!(parse_triple("(1024, 1, 1)"), Some([1024, 1, 1]));
        assert_eq!(parse_triple("[32, 8, 4]"), Some([32, 8, 4]));
        assert_eq!(parse_triple("32x8x4"), Some([32, 8, 4]));
        assert_eq!(parse_triple("(32, 8)"), None);
        assert_eq!(counter_value("4,393,864"), Some(Ok(4393864.0)));
        assert_eq!(counter_value("35.37"), Some(Ok(35.37)));
        assert_eq!(counter_value("n/a"), None);
        assert_eq!(counter_value("abc"), Some(Err(())));
    }

    #[test]
    fn ncu_counters_come_per_launch_in_id_order_and_only_from_an_ncu_export() {
        let dir = std::env::temp_dir().join(format!("gt-ncu-counters-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let export = dir.join("ncu.csv");
        std::fs::write(
            &export,
            "program output\n\"ID\",\"Metric Name\",\"Metric Value\"\n\
             \"1\",\"a\",\"2,048\"\n\"0\",\"a\",\"7\"\n\"0\",\"b\",\"1.5\"\n",
        )
        .unwrap();
        let c = ncu_counters(&export).unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!((c[0]["a"], c[0]["b"], c[1]["a"]), (7.0, 1.5, 2048.0));
        let wide = dir.join("wide.csv");
        std::fs::write(&wide, "kernel,nx\nstar1,256\n").unwrap();
        let e = ncu_counters(&wide).unwrap_err().to_string();
        assert!(
            e.contains("wide.csv") && e.contains("Nsight Compute"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
