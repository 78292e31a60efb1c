//! Fuzzing every input a user hands over: trace files, hardware configs, expressions, measured
//! CSVs (wide and Nsight Compute exports) and manifests, sweep files given to `--resume`, and
//! the tables and fit files `fit` and `plot` read, and the PTX the lifter reads (the fixtures of
//! tests/data/ptx/, one entry lifted per case). Inputs are mutations of the valid files the
//! project ships (numbers swapped for edge values, names for other names of the grammar, lines
//! dropped, duplicated, swapped or spliced from another file, brackets and quotes inserted,
//! files cut short), fed to the library's entry points; whatever parses is bound, simulated (when
//! small) and given to every model. Every input must end in a result or in one error of one line
//! naming its source: no panic, no hang. Measured files also get a metric renamed (misspelt, an
//! unmodelled ncu metric, no metric at all), and one that loads must hold no misspelling and a
//! metric to compare.
//!
//! CI runs a fixed-seed slice (`GPUTRAFFIC_FUZZ_CASES`, default 20000). The 10^6-input run of
//! docs/validation.md ("Fuzzing the inputs"):
//! `GPUTRAFFIC_FUZZ_CASES=1000000 cargo test --release --test fuzz -- --nocapture`.

use gputraffic::Bound;
use gputraffic::analysis::{fit, measured, sweep};
use gputraffic::input::expr::{self, Binding};
use gputraffic::input::hw::HwConfig;
use gputraffic::input::table::Table;
use gputraffic::input::trace::Kernel;
use gputraffic::launch::LaunchRequest;
use gputraffic::plot;
use gputraffic::sim::SimOptions;
use rayon::prelude::*;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// splitmix64: a small deterministic generator, one per case.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
}

/// Numbers that find edges: zero, signs, powers of two around the integer widths, huge, not
/// numbers at all.
const NUMBERS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "3",
    "7",
    "31",
    "32",
    "33",
    "64",
    "127",
    "128",
    "255",
    "256",
    "1023",
    "1024",
    "1025",
    "4096",
    "65535",
    "65536",
    "2147483647",
    "2147483648",
    "-2147483648",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "-9223372036854775808",
    "99999999999999999999",
    "1e309",
    "nan",
    "inf",
    "-0",
    "0.5",
    "1e-300",
    "1_000",
    "0x10",
];

/// Names and symbols of the grammars: trace keys and built-ins, config keys, operators.
const WORDS: &[&str] = &[
    "load",
    "store",
    "atomic",
    "loop",
    "if",
    "while",
    "count",
    "let",
    "body",
    "index",
    "bytes",
    "guard",
    "grid",
    "block",
    "dims",
    "element_bytes",
    "align_bytes",
    "name",
    "params",
    "nx",
    "ny",
    "nz",
    "threadIdx.x",
    "threadIdx.y",
    "blockIdx.z",
    "blockDim.x",
    "gridDim.y",
    "cdiv",
    "min",
    "max",
    "abs",
    "in",
    "out",
    "x",
    "y",
    "z",
    "c",
    "k",
    "true",
    "false",
    "size_bytes",
    "ways",
    "sets",
    "partitions",
    "sector_bytes",
    "line_bytes",
    "count",
    "max_threads",
    "replacement",
    "lru",
    "plru",
    "set_indexing",
    "modulo",
    "xor",
    "fill_bytes",
    "local_ways",
    "home_hash",
    "address_bits",
    "ID",
    "Metric Name",
    "Metric Value",
    "trace",
    "function",
    "domain",
    "set",
    "id",
    "kernel",
    "bx",
    "by",
    "bz",
    "n/a",
    "",
    "+",
    "-",
    "*",
    "/",
    "%",
    "<",
    "<=",
    "==",
    "!=",
    "&&",
    "||",
    "!",
    "?",
    ":",
    "(",
    ")",
    ",",
    "[",
    "]",
    "{",
    "}",
    "\"",
    "'",
    "=",
    "#",
    "\\",
    "\n",
    ".",
];

/// Structural characters worth inserting anywhere.
const PUNCT: &[char] = &[
    '[', ']', '{', '}', '"', '\'', '=', ',', '\n', '(', ')', '#', '.', ' ', '-', '\\', '\0', 'é',
];

fn char_floor(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Byte ranges of the numbers and of the words in `s`.
fn tokens(s: &str, numeric: bool) -> Vec<(usize, usize)> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let is = |c: u8| {
            if numeric {
                c.is_ascii_digit()
            } else {
                c.is_ascii_alphabetic() || c == b'_'
            }
        };
        if is(b[i]) {
            let start = i;
            while i < b.len() && (is(b[i]) || (!numeric && b[i].is_ascii_digit())) {
                i += 1;
            }
            out.push((start, i));
        } else {
            i += 1;
        }
    }
    out
}

/// One to four mutations of `text`; `others` are files of the same kind to splice from.
fn mutate(text: &str, others: &[String], rng: &mut Rng) -> String {
    let mut s = text.to_string();
    for _ in 0..1 + rng.below(4) {
        let lines: Vec<&str> = s.split_inclusive('\n').collect();
        s = match rng.below(11) {
            k @ 0..=3 => {
                // A number replaced by an edge value, or a word by another of the grammars.
                let (numeric, pool) = if k < 2 {
                    (true, NUMBERS)
                } else {
                    (false, WORDS)
                };
                let t = tokens(&s, numeric);
                if t.is_empty() {
                    continue;
                }
                let (a, b) = *rng.pick(&t);
                format!("{}{}{}", &s[..a], rng.pick(pool), &s[b..])
            }
            4 if !lines.is_empty() => {
                let i = rng.below(lines.len());
                lines
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| *j != i)
                    .map(|(_, l)| *l)
                    .collect()
            }
            5 if !lines.is_empty() => {
                let i = rng.below(lines.len());
                let mut v = lines.clone();
                v.insert(i, lines[i]);
                v.concat()
            }
            6 if lines.len() > 1 => {
                let mut v = lines.clone();
                let (i, j) = (rng.below(v.len()), rng.below(v.len()));
                v.swap(i, j);
                v.concat()
            }
            7 => {
                let other = rng.pick(others);
                let olines: Vec<&str> = other.split_inclusive('\n').collect();
                if olines.is_empty() || lines.is_empty() {
                    continue;
                }
                let mut v = lines.clone();
                let i = rng.below(v.len());
                v[i] = *rng.pick(olines.as_slice());
                v.concat()
            }
            8 => {
                let at = char_floor(&s, rng.below(s.len() + 1));
                format!("{}{}{}", &s[..at], rng.pick(PUNCT), &s[at..])
            }
            9 => {
                let at = char_floor(&s, rng.below(s.len() + 1));
                s[..at].to_string()
            }
            _ => {
                let a = char_floor(&s, rng.below(s.len() + 1));
                let b = char_floor(&s, a + rng.below(16));
                format!("{}{}", &s[..a], &s[b.max(a)..])
            }
        };
    }
    s
}

/// An error must be one line naming its source.
fn one_line(e: &gputraffic::Error) -> Result<(), String> {
    let text = e.to_string();
    if text.contains('\n') || e.source_name.is_empty() || e.message.is_empty() {
        return Err(format!("not one line naming its source: {text:?}"));
    }
    Ok(())
}

/// Checks a result: Ok, or an error of one line.
fn judged<T>(r: gputraffic::Result<T>) -> Result<Option<T>, String> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) => one_line(&e).map(|_| None),
    }
}

/// The shipped files of each kind, and the scratch folder.
struct Corpus {
    traces: Vec<String>,
    hws: Vec<String>,
    exprs: Vec<String>,
    wide: Vec<String>,
    ncu: String,
    manifests: Vec<String>,
    tables: Vec<String>,
    validation_json: String,
    fit_json: String,
    sweep_rows: String,
    /// PTX files (tests/data/ptx/) and the entries each holds.
    ptx: Vec<(String, Vec<String>)>,
    dir: PathBuf,
}

fn read(p: &str) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

impl Corpus {
    fn new() -> Corpus {
        let traces: Vec<String> = gputraffic::input::trace::SHIPPED
            .iter()
            .map(|(_, t)| t.to_string())
            .collect();
        let mut exprs: Vec<String> = Vec::new();
        for t in &traces {
            for piece in t.split('"').skip(1).step_by(2) {
                if piece.chars().any(|c| "+-*/%<>=(".contains(c)) {
                    exprs.push(piece.to_string());
                }
            }
        }
        let dir = std::env::temp_dir().join(format!("gputraffic-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // A valid sweep file to resume from.
        let spec = tiny_sweep();
        let out = dir.join("seed-sweep.csv");
        sweep::Sweep::plan(&spec)
            .unwrap()
            .run(&out, false, &|_, _| {})
            .unwrap();
        Corpus {
            traces,
            hws: gputraffic::input::hw::SHIPPED
                .iter()
                .map(|(_, t)| t.to_string())
                .collect(),
            exprs,
            wide: vec![
                read("tests/data/validate/hand.csv"),
                read("tests/data/h200_dev_set.csv"),
            ],
            ncu: read("tests/data/h100/small_ncu.csv"),
            manifests: vec![
                read("tests/data/h100/small_manifest.toml"),
                read("tests/data/h100/new_kernels/manifest.toml"),
            ],
            tables: vec![
                read("tests/data/plot/star4.csv"),
                read("tests/data/plot/layers.csv"),
            ],
            validation_json: read("tests/data/plot/validation.json"),
            fit_json: read("tests/data/plot/fit.json"),
            sweep_rows: std::fs::read_to_string(&out).unwrap(),
            ptx: [
                "stencils",
                "new_kernels",
                "constructs",
                "loops",
                "control",
                "shared_stencil",
            ]
            .iter()
            .map(|f| {
                let text = read(&format!("tests/data/ptx/{f}.ptx"));
                let entries = gputraffic::input::ptx::parse::parse(&text, f)
                    .unwrap()
                    .into_iter()
                    .map(|e| e.name)
                    .collect();
                (text, entries)
            })
            .collect(),
            dir,
        }
    }

    fn scratch(&self, case: u64, name: &str) -> PathBuf {
        self.dir.join(format!("{case}-{name}"))
    }
}

/// A sweep small enough to run in every resume case: star1 on 16 x 16 x 8, two shapes.
fn tiny_sweep() -> sweep::SweepSpec {
    sweep::SweepSpec {
        kernel: gputraffic::request::KernelSource::Load("star1".into()),
        hws: vec!["h200".into()],
        blocks: vec!["8x8x1".into(), "16x8x1".into()],
        domains: vec!["16x16x8".into()],
        sets: vec![],
        l1_scales: vec![],
        l2_scales: vec![],
        models: vec![],
        clock: "boost".into(),
        sample: None,
    }
}

/// Whether every loop of the launch has a constant count of at most 64, so that a simulation of
/// a small grid stays small.
fn loops_are_small(launch: &gputraffic::launch::Launch) -> bool {
    fn nodes(n: &[gputraffic::launch::Node]) -> bool {
        n.iter().all(|n| match n {
            gputraffic::launch::Node::Access(_) => true,
            gputraffic::launch::Node::If(i) => nodes(&i.body),
            gputraffic::launch::Node::Loop(l) => {
                l.count
                    .as_affine()
                    .is_some_and(|a| a.coef.iter().all(|&c| c == 0) && a.c0 <= 64)
                    && nodes(&l.body)
            }
        })
    }
    nodes(&launch.program.tree)
}

/// Binds, simulates (when small) and runs every model on a kernel that parsed.
fn exercise(kernel: Kernel, hw: &str) -> Result<(), String> {
    // Shrink the domain the kernel declares, so that the launch is small.
    let set: Vec<(String, i64)> = ["nx", "ny", "nz", "n"]
        .iter()
        .filter(|p| kernel.params.contains_key(**p))
        .map(|p| (p.to_string(), 24))
        .collect();
    let req = LaunchRequest {
        set,
        ..Default::default()
    };
    let Some(b) = judged(Bound::new(kernel, hw, &req))? else {
        return Ok(());
    };
    // A loop of 2^24 trips is a legitimate request that takes its time: the simulation and the
    // models (which walk representative blocks) run only where the loops are short.
    if !loops_are_small(&b.launch) {
        return Ok(());
    }
    let threads = b.launch.total_blocks * b.launch.threads_per_block as u64;
    if threads <= 1 << 16 {
        judged(b.simulate(&SimOptions::default(), None))?;
    }
    for m in gputraffic::models::MODELS {
        judged(b.predict(m, &Default::default(), None))?;
    }
    Ok(())
}

/// Prints a replayed input (`GPUTRAFFIC_FUZZ_DUMP=1`).
fn dump(text: &str) {
    if std::env::var_os("GPUTRAFFIC_FUZZ_DUMP").is_some() {
        eprintln!("{text}");
    }
}

/// The input kinds, each with its entry point.
const KINDS: &[&str] = &[
    "trace",
    "trace",
    "trace",
    "hw",
    "expr",
    "wide-csv",
    "ncu-csv",
    "manifest",
    "sweep-resume",
    "fit-table",
    "plot-table",
    "validation-json",
    "fit-json",
    "ptx",
    "ptx",
];

/// In one case of three, renames a modelled metric of a measured file (the wide CSV's header
/// line; every `"name"` cell of an ncu export) to a misspelling of it, a real Nsight Compute
/// metric the simulator does not model, or a column that is no metric. Returns the new name.
fn rename_metric(text: &mut String, ncu: bool, rng: &mut Rng) -> Option<String> {
    use gputraffic::metrics::modelled;
    if rng.below(3) != 0 {
        return None;
    }
    let header_end = text.find('\n').unwrap_or(text.len());
    let quoted = |m: &str| {
        if ncu {
            format!("\"{m}\"")
        } else {
            m.to_string()
        }
    };
    let present: Vec<&str> = modelled()
        .filter(|m| match ncu {
            true => text.contains(&quoted(m)),
            false => text[..header_end].split(',').any(|c| c == *m),
        })
        .collect();
    if present.is_empty() {
        return None;
    }
    let m = *rng.pick(&present);
    let base = m.trim_end_matches(".sum");
    let variant = match rng.below(8) {
        0 => m.replacen("__", "_", 1),
        1 => base.to_string(),
        2 => m.to_uppercase(),
        3 => format!("{base}x.sum"),
        4 => "dram__bytes_read.sum".to_string(),
        5 => "lts__t_requests_srcunit_tex_op_read.sum".to_string(),
        6 => "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum".to_string(),
        _ => "notes".to_string(),
    };
    if ncu {
        *text = text.replace(&quoted(m), &quoted(&variant));
    } else {
        let header: Vec<&str> = text[..header_end]
            .split(',')
            .map(|c| if c == m { variant.as_str() } else { c })
            .collect();
        text.replace_range(..header_end, &header.join(","));
    }
    Some(variant)
}

/// What a measured input that loads must be: free of misspellings of modelled metrics (and, in
/// a wide CSV, of columns that are no metric), with a metric to compare. A name put in by
/// [`rename_metric`] that the checks refuse must have made the load fail.
fn check_measured(
    loaded: Option<(Vec<measured::MeasuredLaunch>, Vec<String>)>,
    renamed: Option<String>,
    ncu: bool,
) -> Result<(), String> {
    use gputraffic::metrics::{looks_like_metric, misspelt_metric};
    let refused = |n: &str| misspelt_metric(n).is_some() || (!ncu && !looks_like_metric(n));
    let Some((launches, _)) = loaded else {
        return Ok(());
    };
    if let Some(n) = renamed.filter(|n| refused(n)) {
        return Err(format!(
            "accepted the measured file with the column or metric '{n}'"
        ));
    }
    for l in &launches {
        if let Some(k) = l.counters.keys().find(|k| refused(k)) {
            return Err(format!("{}: accepted the counter '{k}'", l.origin));
        }
    }
    let compared = gputraffic::analysis::validate::compared_metrics();
    if !launches
        .iter()
        .any(|l| compared.iter().any(|m| l.counters.contains_key(*m)))
    {
        return Err("accepted a measured file with no metric to compare".into());
    }
    Ok(())
}

/// Runs case `case`: returns the kind, whether the input was accepted, and the problem found.
fn run_case(c: &Corpus, seed: u64, case: u64) -> (&'static str, bool, Result<(), String>) {
    let mut rng = Rng(seed ^ case.wrapping_mul(0xD1B5_4A32_D192_ED03));
    let kind = *rng.pick(KINDS);
    let mut accepted = false;
    let result = (|| -> Result<(), String> {
        match kind {
            "trace" => {
                let text = mutate(rng.pick::<String>(&c.traces), &c.traces, &mut rng);
                dump(&text);
                if let Some(k) = judged(Kernel::parse(&text, "fuzz.toml"))? {
                    accepted = true;
                    exercise(k, "h200")?;
                }
            }
            "ptx" => {
                let (original, entries) = rng.pick(&c.ptx);
                let others: Vec<String> = c.ptx.iter().map(|(t, _)| t.clone()).collect();
                let text = mutate(original, &others, &mut rng);
                dump(&text);
                let options = gputraffic::input::ptx::LiftOptions {
                    entry: Some(rng.pick(entries).clone()),
                    registers: Some(32),
                    ..Default::default()
                };
                let lifted = gputraffic::input::ptx::lift_ptx(&text, "fuzz.ptx", &options);
                if let Some(k) = judged(lifted)? {
                    accepted = true;
                    exercise(k.kernel, "h200")?;
                }
            }
            "hw" => {
                let text = mutate(rng.pick::<String>(&c.hws), &c.hws, &mut rng);
                dump(&text);
                if let Some(hw) = judged(HwConfig::parse(&text, "fuzz-hw.toml"))? {
                    accepted = true;
                    let k = gputraffic::input::trace::load("star1").unwrap();
                    let req = LaunchRequest {
                        domain: Some([32, 16, 8]),
                        block: Some([16, 4, 2]),
                        ..Default::default()
                    };
                    if let Some(b) = judged(Bound::with_hw(k, hw, &req))? {
                        judged(b.simulate(&SimOptions::default(), None))?;
                    }
                }
            }
            "expr" => {
                let text = mutate(rng.pick::<String>(&c.exprs), &c.exprs, &mut rng);
                if let Ok(e) = expr::parse(&text) {
                    accepted = true;
                    let _ = e.eval_with(&|n: &str| {
                        (n.len() as i64 % 5 != 0).then_some(n.len() as i64 - 3)
                    });
                    let resolve = |n: &str| -> Option<Binding<'_>> {
                        Some(match n.len() % 3 {
                            0 => Binding::Const(n.len() as i64),
                            1 => Binding::Slot(n.len() % 12),
                            _ => return None,
                        })
                    };
                    if let Ok(compiled) = expr::compile(&e, &resolve) {
                        let slots = [3, -2, 7, 1, 0, 5, 2, 9, -4, 6];
                        let _ = compiled.eval(&slots);
                    }
                    // Printing parses back.
                    let again = expr::parse(&e.to_string())
                        .map_err(|err| format!("{text:?} prints as {e}, which fails: {err}"))?;
                    if again != e {
                        return Err(format!("{text:?} does not round-trip through {e}"));
                    }
                }
            }
            "wide-csv" => {
                let mut text = mutate(rng.pick::<String>(&c.wide), &c.wide, &mut rng);
                let renamed = rename_metric(&mut text, false, &mut rng);
                let p = c.scratch(case, "measured.csv");
                std::fs::write(&p, text).unwrap();
                let loaded = judged(measured::load(&p, None))?;
                accepted = loaded.is_some();
                check_measured(loaded, renamed, false)?;
            }
            "ncu-csv" | "manifest" => {
                let (mut csv, manifest) = if kind == "ncu-csv" {
                    (mutate(&c.ncu, &c.wide, &mut rng), c.manifests[0].clone())
                } else {
                    let m = rng.pick::<String>(&c.manifests);
                    (c.ncu.clone(), mutate(m, &c.manifests, &mut rng))
                };
                let renamed = rename_metric(&mut csv, true, &mut rng);
                let p = c.scratch(case, "ncu.csv");
                let m = c.scratch(case, "manifest.toml");
                std::fs::write(&p, csv).unwrap();
                std::fs::write(&m, manifest).unwrap();
                let loaded = judged(measured::load(&p, Some(&m)))?;
                accepted = loaded.is_some();
                check_measured(loaded, renamed, true)?;
            }
            "sweep-resume" => {
                let text = mutate(&c.sweep_rows, &c.tables, &mut rng);
                let p = c.scratch(case, "sweep.csv");
                std::fs::write(&p, text).unwrap();
                let plan = sweep::Sweep::plan(&tiny_sweep()).unwrap();
                accepted = judged(plan.run(&p, true, &|_, _| {}))?.is_some();
            }
            "fit-table" | "plot-table" => {
                let text = mutate(rng.pick::<String>(&c.tables), &c.tables, &mut rng);
                let table = if rng.below(4) == 0 {
                    judged(Table::parse_jsonl(&text, "fuzz.jsonl"))?
                } else {
                    judged(Table::parse_csv(&text, "fuzz.csv"))?
                };
                let Some(t) = table else { return Ok(()) };
                accepted = true;
                if kind == "fit-table" {
                    for model in ["gompertz", "su2015"] {
                        if let Some(r) = judged(fit::Request::new(model, None, None))? {
                            judged(r.fit(&t))?;
                        }
                    }
                } else {
                    let kinds = [
                        plot::KindName::HitRate,
                        plot::KindName::Scatter,
                        plot::KindName::LayerCondition,
                        plot::KindName::BlockTable,
                        plot::KindName::Composition,
                    ];
                    let name = *rng.pick(&kinds);
                    let options = plot::PlotOptions {
                        x: (name == plot::KindName::Scatter)
                            .then(|| "lts__t_sectors_srcunit_tex_op_read.sum".to_string()),
                        y: (name == plot::KindName::Scatter)
                            .then(|| "dram__sectors_read.sum".to_string()),
                        level: (name == plot::KindName::Composition).then_some(plot::Level::L2),
                        ..Default::default()
                    };
                    if let Some(kind) = judged(plot::PlotKind::from_options(name, &options))? {
                        let spec = plot::PlotSpec {
                            kind,
                            title: None,
                            size: (400, 300),
                            filters: vec![],
                            x_label: None,
                            y_label: None,
                        };
                        judged(plot::build(&spec, &t))?;
                    }
                }
            }
            "validation-json" => {
                let text = mutate(&c.validation_json, &c.tables, &mut rng);
                let p = c.scratch(case, "validation.json");
                std::fs::write(&p, text).unwrap();
                if let Some(t) = judged(plot::load_input(plot::KindName::Validation, &p))? {
                    accepted = true;
                    let options = plot::PlotOptions::default();
                    let kind = plot::PlotKind::from_options(plot::KindName::Validation, &options)
                        .map_err(|e| e.to_string())?;
                    let spec = plot::PlotSpec {
                        kind,
                        title: None,
                        size: (400, 300),
                        filters: vec![],
                        x_label: None,
                        y_label: None,
                    };
                    judged(plot::build(&spec, &t))?;
                }
            }
            _ => {
                let text = mutate(&c.fit_json, &c.tables, &mut rng);
                accepted = judged(plot::FitCurve::parse(&text, "fuzz-fit.json"))?.is_some();
            }
        }
        Ok(())
    })();
    for f in [
        "measured.csv",
        "ncu.csv",
        "manifest.toml",
        "sweep.csv",
        "validation.json",
    ] {
        let _ = std::fs::remove_file(c.scratch(case, f));
    }
    (kind, accepted, result)
}

/// Per kind: cases, accepted inputs, and the slowest case.
#[derive(Default, Clone)]
struct Tally {
    cases: u64,
    accepted: u64,
    slowest: Duration,
    slowest_case: u64,
}

#[test]
fn no_input_panics_hangs_or_fails_to_say_what_is_wrong() {
    let cases: u64 = std::env::var("GPUTRAFFIC_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20000);
    let seed: u64 = std::env::var("GPUTRAFFIC_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20261123);
    let corpus = Corpus::new();
    // GPUTRAFFIC_FUZZ_CASE=N replays case N alone.
    let only: Option<u64> = std::env::var("GPUTRAFFIC_FUZZ_CASE")
        .ok()
        .and_then(|v| v.parse().ok());
    let tallies: Mutex<std::collections::BTreeMap<&str, Tally>> = Mutex::default();
    let problems: Mutex<Vec<String>> = Mutex::default();
    let hang = Duration::from_secs(10);
    let range = match only {
        Some(c) => c..c + 1,
        None => 0..cases,
    };
    range.into_par_iter().for_each(|case| {
        let start = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| run_case(&corpus, seed, case)));
        let took = start.elapsed();
        let (kind, accepted, result) = match outcome {
            Ok(o) => o,
            Err(_) => ("panic", false, Err(format!("case {case} panicked"))),
        };
        if let Err(p) = result {
            problems
                .lock()
                .unwrap()
                .push(format!("seed {seed} case {case} ({kind}): {p}"));
        }
        if took > hang {
            problems
                .lock()
                .unwrap()
                .push(format!("seed {seed} case {case} ({kind}) took {took:?}"));
        }
        let mut t = tallies.lock().unwrap();
        let e = t.entry(kind).or_default();
        e.cases += 1;
        e.accepted += accepted as u64;
        if took > e.slowest {
            e.slowest = took;
            e.slowest_case = case;
        }
    });
    let _ = std::fs::remove_dir_all(&corpus.dir);
    println!("{cases} inputs, seed {seed}:");
    for (kind, t) in tallies.lock().unwrap().iter() {
        println!(
            "  {kind:<16} {:>8} cases {:>8} accepted  slowest {:.1?} (case {})",
            t.cases, t.accepted, t.slowest, t.slowest_case
        );
    }
    let problems = problems.into_inner().unwrap();
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn mutations_are_deterministic_and_change_the_input() {
    let text = "name = \"k\"\nx = 12\ny = [1, 2]\n";
    let a = mutate(text, &[text.to_string()], &mut Rng(7));
    let b = mutate(text, &[text.to_string()], &mut Rng(7));
    assert_eq!(a, b);
    let changed = (0..50)
        .filter(|s| mutate(text, &[text.to_string()], &mut Rng(*s)) != text)
        .count();
    assert!(changed > 40, "{changed} of 50 mutations changed the text");
    let _ = Path::new("");
}
