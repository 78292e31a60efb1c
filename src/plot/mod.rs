//! `gputraffic plot`: pictures of a sweep's results (PNG or SVG), after Ernst et al. 2023 and
//! Tabik et al. 2015.
//!
//! Each plot kind turns the rows of a [`Table`] into a backend-independent [`Figure`]
//! ([`build`]); [`figure::encode`] draws it with plotters and the bundled font, and
//! [`write_figure`] writes the file only once the drawing has succeeded. Block shapes are coloured
//! with Ernst et al.'s scheme ([`block_colour`]). [`scatter_with_diagonal`] is the reusable
//! "A vs B with y = x" figure (predicted or measured vs simulated); the `validation` kind
//! ([`validation`]) draws one per metric from the JSON of `gputraffic validate`.

mod bitmap;
pub mod figure;
pub mod ticks;
pub mod validation;

pub use figure::{
    Axis, BarLayer, Figure, Format, HeatMap, Marker, PanelGrid, Rgb, Scale, Series, SeriesStyle,
    StackedBars, XyFigure,
};

use crate::error::{Error, Result};
use crate::input::table::Table;
use crate::metrics;
use crate::models::gompertz::Gompertz;
use std::path::{Path, PathBuf};

/// The kinds of plot, as named on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KindName {
    /// Redundant hit rate against oversubscription, optionally with a Gompertz fit.
    HitRate,
    /// Any two columns against each other with the diagonal y = x.
    Scatter,
    /// A volume per lattice update against the XY plane size, one line per block shape.
    LayerCondition,
    /// A metric as a Blk.x × Blk.y table.
    BlockTable,
    /// Compulsory and capacity volume stacked per block shape.
    Composition,
    /// Measured vs simulated, one log–log panel per metric, from `gputraffic validate`'s JSON.
    Validation,
}

impl crate::choice::Choice for KindName {
    const CHOICES: &'static [(Self, &'static str, &'static str)] = &[
        (
            KindName::HitRate,
            "hit-rate",
            "Redundant hit rate against oversubscription, optionally with a Gompertz fit",
        ),
        (
            KindName::Scatter,
            "scatter",
            "Any two columns against each other with the diagonal y = x",
        ),
        (
            KindName::LayerCondition,
            "layer-condition",
            "A volume per lattice update against the XY plane size, one line per block shape",
        ),
        (
            KindName::BlockTable,
            "block-table",
            "A metric as a Blk.x × Blk.y table",
        ),
        (
            KindName::Composition,
            "composition",
            "Compulsory and capacity volume stacked per block shape",
        ),
        (
            KindName::Validation,
            "validation",
            "Measured vs simulated, one log–log panel per metric, from `gputraffic validate`'s JSON",
        ),
    ];
}

/// A cache level whose volumes `composition` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// The L1 (volume between L1 and L2).
    L1,
    /// The L2 (volume between L2 and DRAM).
    L2,
}

impl crate::choice::Choice for Level {
    const CHOICES: &'static [(Self, &'static str, &'static str)] = &[
        (Level::L1, "l1", "The L1 (volume between L1 and L2)"),
        (Level::L2, "l2", "The L2 (volume between L2 and DRAM)"),
    ];
}

impl Level {
    /// The column prefix (`l1`, `l2`).
    pub fn prefix(self) -> &'static str {
        match self {
            Level::L1 => "l1",
            Level::L2 => "l2",
        }
    }

    /// Where the volume `<level>_v_down_bytes` flows.
    fn flow(self) -> &'static str {
        match self {
            Level::L1 => "L1 → L2",
            Level::L2 => "L2 → DRAM",
        }
    }
}

/// How the categories of a plot (block shapes) are told apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Colours {
    /// [`Colours::Categorical`] for up to [`AUTO_CATEGORIES`] block shapes, else
    /// [`Colours::Ernst`] (a legend cannot list more, and the RGB code needs none).
    #[default]
    Auto,
    /// The colour-blind-safe palette [`CATEGORICAL`], the marker shape changing after every
    /// round of its colours ([`categorical_style`]).
    Categorical,
    /// Ernst et al.'s RGB code of the block shape ([`block_colour`]), circles.
    Ernst,
}

impl crate::choice::Choice for Colours {
    const CHOICES: &'static [(Self, &'static str, &'static str)] = &[
        (
            Colours::Auto,
            "auto",
            "categorical for up to 16 block shapes, else ernst",
        ),
        (
            Colours::Categorical,
            "categorical",
            "Okabe-Ito colour-blind-safe colours, then marker shapes, one pair per shape",
        ),
        (
            Colours::Ernst,
            "ernst",
            "Ernst et al.'s RGB code: red = log2 x, green = log2 y, blue = log2 z",
        ),
    ];
}

/// The most block shapes [`Colours::Auto`] tells apart by palette colour and marker.
pub const AUTO_CATEGORIES: usize = 16;

/// A plot kind with its settings.
#[derive(Debug, Clone, PartialEq)]
pub enum PlotKind {
    /// Scatter of `y` against `x`, coloured by block shape, with the fitted curve if given.
    HitRate {
        /// Column on the x axis.
        x: String,
        /// Column on the y axis.
        y: String,
        /// The curve from `gputraffic fit --model gompertz`.
        fit: Option<FitCurve>,
        /// How block shapes are coloured.
        colours: Colours,
    },
    /// `y` against `x` with y = x and equal axis ranges.
    Scatter {
        /// Column on the x axis (e.g. simulated).
        x: String,
        /// Column on the y axis (e.g. predicted).
        y: String,
        /// Logarithmic axes.
        log: bool,
        /// How block shapes are coloured.
        colours: Colours,
    },
    /// `y` against `param_nx·param_ny` (log2 axis), one series per block shape.
    LayerCondition {
        /// Column on the y axis.
        y: String,
        /// How block shapes are coloured.
        colours: Colours,
    },
    /// `metric` on a block_x × block_y grid.
    BlockTable {
        /// The column shown in the cells.
        metric: String,
    },
    /// Compulsory and capacity volume of `level` per block shape, in bytes per lattice update.
    Composition {
        /// The cache level.
        level: Level,
    },
    /// Simulated against measured per metric (log axes, y = x and ±10 %), points coloured by
    /// kernel, on the long table [`validation::load`] makes.
    Validation {
        /// The metrics to draw, one panel each, in this order; empty for every metric present
        /// (sorted by name).
        metrics: Vec<String>,
    },
}

/// The options of `gputraffic plot` that only some kinds take.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlotOptions {
    /// `--x COL`.
    pub x: Option<String>,
    /// `--y COL`.
    pub y: Option<String>,
    /// `--fit FILE`.
    pub fit: Option<PathBuf>,
    /// `--log`.
    pub log: bool,
    /// `--metric COL` (repeatable; only `validation` takes more than one).
    pub metric: Vec<String>,
    /// `--level l1|l2`.
    pub level: Option<Level>,
    /// `--colours auto|categorical|ernst`.
    pub colours: Option<Colours>,
}

/// Default columns: the L2 redundant hit rate against the L2 oversubscription (Ernst Figs. 16–18).
const HIT_RATE_X: &str = metrics::L2_OVERSUBSCRIPTION;
const HIT_RATE_Y: &str = metrics::L2_REDUNDANT_HIT_RATE;
/// Default layer-condition metric: DRAM read volume per lattice update (Ernst Fig. 23).
const LAYER_CONDITION_Y: &str = metrics::DRAM_READ_BYTES_PER_LUP;

impl PlotKind {
    /// The kind `name` with the options it takes; an option it does not take is an error naming
    /// that option (so a typo in the kind does not silently drop the user's settings).
    pub fn from_options(name: KindName, o: &PlotOptions) -> Result<PlotKind> {
        let given = [
            ("--x", o.x.is_some()),
            ("--y", o.y.is_some()),
            ("--fit", o.fit.is_some()),
            ("--log", o.log),
            ("--metric", !o.metric.is_empty()),
            ("--level", o.level.is_some()),
            ("--colours", o.colours.is_some()),
        ];
        let (kind_text, allowed): (&str, &[&str]) = match name {
            KindName::HitRate => ("hit-rate", &["--x", "--y", "--fit", "--colours"]),
            KindName::Scatter => ("scatter", &["--x", "--y", "--log", "--colours"]),
            KindName::LayerCondition => ("layer-condition", &["--y", "--colours"]),
            KindName::BlockTable => ("block-table", &["--metric"]),
            KindName::Composition => ("composition", &["--level"]),
            KindName::Validation => ("validation", &["--metric"]),
        };
        if let Some((option, _)) = given
            .iter()
            .find(|(option, set)| *set && !allowed.contains(option))
        {
            return Err(Error::new(
                *option,
                format!(
                    "not an option of 'plot {kind_text}' (it takes {})",
                    allowed.join(", ")
                ),
            ));
        }
        let required = |v: &Option<String>, option: &str| {
            v.clone().ok_or_else(|| {
                Error::new(option, format!("'plot {kind_text}' needs {option} COLUMN"))
            })
        };
        let colours = o.colours.unwrap_or_default();
        Ok(match name {
            KindName::HitRate => {
                let x = o.x.clone().unwrap_or_else(|| HIT_RATE_X.into());
                let y = o.y.clone().unwrap_or_else(|| HIT_RATE_Y.into());
                let fit = match o.fit.as_deref() {
                    Some(path) => Some(FitCurve::load_for(path, &x, &y)?),
                    None => None,
                };
                PlotKind::HitRate { x, y, fit, colours }
            }
            KindName::Scatter => PlotKind::Scatter {
                x: required(&o.x, "--x")?,
                y: required(&o.y, "--y")?,
                log: o.log,
                colours,
            },
            KindName::LayerCondition => PlotKind::LayerCondition {
                y: o.y.clone().unwrap_or_else(|| LAYER_CONDITION_Y.into()),
                colours,
            },
            KindName::BlockTable => {
                if o.metric.len() > 1 {
                    return Err(Error::new(
                        "--metric",
                        format!("'plot {kind_text}' shows one --metric COLUMN, not several"),
                    ));
                }
                PlotKind::BlockTable {
                    metric: required(&o.metric.first().cloned(), "--metric")?,
                }
            }
            KindName::Composition => PlotKind::Composition {
                level: o.level.unwrap_or(Level::L2),
            },
            KindName::Validation => {
                // A metric named twice gets one panel.
                let mut metrics: Vec<String> = Vec::new();
                for m in &o.metric {
                    if !metrics.contains(m) {
                        metrics.push(m.clone());
                    }
                }
                PlotKind::Validation { metrics }
            }
        })
    }
}

/// Everything `gputraffic plot` needs besides the table and the output name.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotSpec {
    /// What to draw.
    pub kind: PlotKind,
    /// The caption; `None` for one made from the columns.
    pub title: Option<String>,
    /// Width and height in pixels (an SVG's nominal size).
    pub size: (u32, u32),
    /// Only rows matching all of these `COLUMN=VALUE` conditions are drawn
    /// ([`Table::filtered`]).
    pub filters: Vec<String>,
    /// The x axis description; `None` for one made from the column (with its unit).
    pub x_label: Option<String>,
    /// The y axis description; `None` for one made from the column.
    pub y_label: Option<String>,
}

/// The default picture size, as `--size` spells it.
pub const DEFAULT_SIZE_TEXT: &str = "1024x768";

/// Parses `--size WxH` (each 200 to 10000 pixels).
pub fn parse_size(s: &str) -> Result<(u32, u32)> {
    let bad = || {
        Error::new(
            "--size",
            format!("'{s}' is not WIDTHxHEIGHT in pixels, each 200 to 10000"),
        )
    };
    let (w, h) = s.split_once('x').ok_or_else(bad)?;
    let w: u32 = w.trim().parse().map_err(|_| bad())?;
    let h: u32 = h.trim().parse().map_err(|_| bad())?;
    if !(200..=10000).contains(&w) || !(200..=10000).contains(&h) {
        return Err(bad());
    }
    Ok((w, h))
}

/// The format for output file `out`: `.png` or `.svg` (any case); anything else is an error
/// naming the file.
pub fn format_of(out: &Path) -> Result<Format> {
    let ext = out
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("png") => Ok(Format::Png),
        Some("svg") => Ok(Format::Svg),
        _ => Err(Error::in_file(
            out,
            "unknown output format: the name must end in .png or .svg",
        )),
    }
}

/// The curve written by `gputraffic fit --model gompertz`: a [`Gompertz`] (`o0` is 0 unless the
/// file gives it) and the fit's R².
#[derive(Debug, Clone, PartialEq)]
pub struct FitCurve {
    /// The curve y = a·exp(b·exp(c·(x − o0))).
    pub curve: Gompertz,
    /// The fit's coefficient of determination, shown in the legend when the file has it.
    pub r2: Option<f64>,
}

impl FitCurve {
    /// Reads a fit for the columns `x` and `y`: a file that names other columns (keys `x`, `y`
    /// of `gputraffic fit`) is an error rather than a curve drawn over the wrong data.
    pub fn load_for(path: &Path, x: &str, y: &str) -> Result<FitCurve> {
        let source = path.display().to_string();
        let text = crate::error::read_file(path)?;
        let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        for (key, want) in [("x", x), ("y", y)] {
            if let Some(got) = v.get(key).and_then(|g| g.as_str())
                && got != want
            {
                return Err(Error::new(
                    &source,
                    format!(
                        "is a fit of {key} = '{got}', but the plot's {key} is '{want}' (--{key})"
                    ),
                ));
            }
        }
        FitCurve::parse(&text, &source)
    }

    /// Parses the fit's JSON text; `source` names it in errors.
    pub fn parse(text: &str, source: &str) -> Result<FitCurve> {
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|e| Error::new(source, format!("JSON: {e}")))?;
        let number = |key: &str| -> Result<Option<f64>> {
            match v.get(key) {
                None | Some(serde_json::Value::Null) => Ok(None),
                Some(x) => match x.as_f64() {
                    Some(f) if f.is_finite() => Ok(Some(f)),
                    _ => Err(Error::new(
                        source,
                        format!("key '{key}' is {x}, not a finite number"),
                    )),
                },
            }
        };
        let required = |key: &str| {
            number(key)?.ok_or_else(|| {
                Error::new(
                    source,
                    format!(
                        "no key '{key}' (expected the output of gputraffic fit --model gompertz)"
                    ),
                )
            })
        };
        if !v.is_object() {
            return Err(Error::new(source, "not a JSON object"));
        }
        Ok(FitCurve {
            curve: Gompertz {
                a: required("a")?,
                b: required("b")?,
                c: required("c")?,
                o0: number("o0")?.unwrap_or(0.0),
            },
            r2: number("r2")?,
        })
    }
}

/// Reads the input of plot kind `kind`: the long table of [`validation::load`] for
/// `validation` (whose input is `gputraffic validate`'s JSON), else a sweep's CSV or JSONL
/// ([`crate::analysis::sweep_file::read_table`]).
pub fn load_input(kind: KindName, path: &Path) -> Result<Table> {
    match kind {
        KindName::Validation => validation::load(path),
        _ => crate::analysis::sweep_file::read_table(path),
    }
}

/// A figure and the remarks made while building it (rows skipped, values clipped), for stderr.
#[derive(Debug, Clone, PartialEq)]
pub struct Plot {
    /// What will be drawn.
    pub figure: Figure,
    /// One line each.
    pub notes: Vec<String>,
}

/// Builds the figure for `spec` from `table`, draws it and writes `out` (PNG or SVG by its
/// extension). Returns the notes for the user. On any error no file is written.
pub fn render(spec: &PlotSpec, table: &Table, out: &Path) -> Result<Vec<String>> {
    format_of(out)?;
    let plot = build(spec, table)?;
    write_figure(&plot.figure, spec.size, out)?;
    Ok(plot.notes)
}

/// Draws `figure` at `size` and writes it to `out` (format by extension). The picture is made in
/// memory and written to a temporary name beside `out`, then renamed, so a failure never leaves a
/// partial file.
pub fn write_figure(figure: &Figure, size: (u32, u32), out: &Path) -> Result<()> {
    let format = format_of(out)?;
    let bytes = figure::encode(figure, format, size)
        .map_err(|e| Error::in_file(out, format!("cannot draw the plot: {e}")))?;
    crate::error::write_file_atomically(out, &bytes)
}

/// Builds the figure for `spec` from the rows of `table` that pass its filters.
pub fn build(spec: &PlotSpec, table: &Table) -> Result<Plot> {
    if table.rows.is_empty() {
        return Err(Error::new(&table.source, "no data rows"));
    }
    let table = &table.filtered(&spec.filters)?;
    let data = Data {
        table,
        rows: (0..table.rows.len()).collect(),
    };
    let mut notes = Vec::new();
    let figure = match &spec.kind {
        PlotKind::HitRate { x, y, fit, colours } => {
            hit_rate(&data, x, y, fit.as_ref(), *colours, &mut notes)?
        }
        PlotKind::Scatter { x, y, log, colours } => {
            scatter(&data, x, y, *log, *colours, &mut notes)?
        }
        PlotKind::LayerCondition { y, colours } => layer_condition(&data, y, *colours, &mut notes)?,
        PlotKind::BlockTable { metric } => block_table(&data, metric, &spec.filters, &mut notes)?,
        PlotKind::Composition { level } => composition(&data, *level, &mut notes)?,
        PlotKind::Validation { metrics } => {
            validation::figure(&data, metrics, &spec.filters, &mut notes)?
        }
    };
    let mut figure = figure;
    if let Figure::Grid(g) = &figure {
        // About what a panel gets: four fifths of the width (the legend takes the rest) and the
        // height under the title, shared by the grid.
        let columns = g.columns.max(1);
        let rows = g.panels.len().div_ceil(columns).max(1);
        let panel = (
            spec.size.0 as f64 * 0.8 / columns as f64,
            (spec.size.1 as f64 - 50.0) / rows as f64,
        );
        if panel.0 < MIN_PANEL.0 || panel.1 < MIN_PANEL.1 {
            notes.push(format!(
                "{} panels in {}x{} pixels leave each about {}x{}: too small to read; draw fewer \
                 with --metric or enlarge --size",
                g.panels.len(),
                spec.size.0,
                spec.size.1,
                panel.0.round(),
                panel.1.round()
            ));
        }
    }
    let (title, x_label, y_label) = match &mut figure {
        Figure::Xy(f) => (&mut f.title, Some(&mut f.x.label), Some(&mut f.y.label)),
        Figure::Heat(f) => (&mut f.title, Some(&mut f.x_label), Some(&mut f.y_label)),
        Figure::Bars(f) => (&mut f.title, Some(&mut f.x_label), Some(&mut f.y_label)),
        Figure::Grid(f) => {
            for p in &mut f.panels {
                if let Some(l) = &spec.x_label {
                    p.x.label = l.clone();
                }
                if let Some(l) = &spec.y_label {
                    p.y.label = l.clone();
                }
            }
            (&mut f.title, None, None)
        }
    };
    if spec.title.is_none() {
        // The default caption is made of the axis descriptions: it follows the ones given.
        let defaults = [
            (&spec.x_label, x_label.as_deref()),
            (&spec.y_label, y_label.as_deref()),
        ];
        for (given, default) in defaults {
            if let (Some(given), Some(default)) = (given, default) {
                let bare = |l: &str| match l.rfind(" [") {
                    Some(i) if l.ends_with(']') => l[..i].to_string(),
                    _ => l.to_string(),
                };
                *title = title.replace(&bare(default), &bare(given));
            }
        }
    }
    for (given, caption) in [
        (&spec.title, Some(title)),
        (&spec.x_label, x_label),
        (&spec.y_label, y_label),
    ] {
        if let (Some(given), Some(caption)) = (given, caption) {
            *caption = given.clone();
        }
    }
    Ok(Plot { figure, notes })
}

/// The smallest panel of a grid, in pixels, that `plot validation` draws without a note.
const MIN_PANEL: (f64, f64) = (180.0, 150.0);

/// Ernst et al.'s block-shape colour (Figs. 13, 14, 16–20): red, green and blue are
/// log2 x / log2 256, log2 y / log2 256 and log2 z / log2 64, each clamped to 0..1.
pub fn block_colour(shape: [u32; 3]) -> Rgb {
    let channel = |v: u32, max_log2: f64| {
        let t = (v.max(1) as f64).log2() / max_log2;
        (t.clamp(0.0, 1.0) * 255.0).round() as u8
    };
    Rgb(
        channel(shape[0], 8.0),
        channel(shape[1], 8.0),
        channel(shape[2], 6.0),
    )
}

/// The legend lines that explain [`block_colour`].
fn block_colour_notes() -> Vec<String> {
    vec![
        "colour = block shape:".into(),
        "red = log2 x / 8".into(),
        "green = log2 y / 8".into(),
        "blue = log2 z / 6".into(),
    ]
}

/// A block shape as the legend writes it.
pub fn shape_name(s: [u32; 3]) -> String {
    format!("{}x{}x{}", s[0], s[1], s[2])
}

/// The axis description of a column: its human label and unit from the quantity table
/// ([`crate::models::describe_column`], e.g. `DRAM reads per update [B/LUP]`), else the column name with a
/// unit guessed from its suffix.
pub fn describe(column: &str) -> String {
    if let Some(q) = crate::models::describe_column(column) {
        return q.axis_label(&[]);
    }
    let unit = if column.ends_with(metrics::BYTES_PER_LUP_SUFFIX) {
        Some("B/LUP")
    } else if column.ends_with("_bytes") {
        Some("B")
    } else if column == "lups_per_s" {
        Some("LUP/s")
    } else if column.ends_with("_s") || column.starts_with("time_") {
        Some("s")
    } else {
        None
    };
    match unit {
        Some(u) => format!("{column} [{u}]"),
        None => column.to_string(),
    }
}

/// A rate or ratio: shown on a 0..1 axis when its values allow.
fn is_rate(column: &str) -> bool {
    column.contains("rate") || column.contains("ratio")
}

/// A note on stderr when values of `column` lie outside its physical range (the quantity
/// table's, e.g. a hit rate above 1): how many, the extremes and the range, so the reader of the
/// plot is told what the picture cannot say.
fn note_out_of_range(column: &str, values: &[f64], notes: &mut Vec<String>) {
    let Some(q) = crate::models::describe_column(column) else {
        return;
    };
    let Some(range) = q.range else {
        return;
    };
    let outside: Vec<f64> = values
        .iter()
        .copied()
        .filter(|&v| !range.contains(v))
        .collect();
    if outside.is_empty() {
        return;
    }
    let lo = outside.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = outside.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    notes.push(format!(
        "{column}: {} of {} value(s) outside its physical range {range} ({} .. {}): {}",
        outside.len(),
        values.len(),
        figure::format_number(lo),
        figure::format_number(hi),
        q.meaning
    ));
}

/// A unit as an error message names it (`1`: a pure number).
fn unit_name(unit: &str) -> &str {
    match unit {
        "1" => "a pure number",
        "" => "no unit (text)",
        u => u,
    }
}

/// The default caption `Y vs X` from the axis descriptions without their units.
fn versus(y_label: &str, x_label: &str) -> String {
    let bare = |l: &str| match l.rfind(" [") {
        Some(i) if l.ends_with(']') => l[..i].to_string(),
        _ => l.to_string(),
    };
    format!("{} vs {}", bare(y_label), bare(x_label))
}

/// `scatter` and (later) validation plots: the points of `groups` (one series per block shape or
/// other group, drawn as markers) on equal x and y ranges with the diagonal y = x drawn under
/// them. `scale` applies to both axes; points it cannot show (≤ 0 on a log axis) are left out.
/// `None` when no point can be shown.
pub fn scatter_with_diagonal(
    title: String,
    x_label: String,
    y_label: String,
    groups: Vec<Series>,
    scale: Scale,
) -> Option<XyFigure> {
    let shown = |v: f64| scale.to_axis(v).is_some();
    let values: Vec<f64> = groups
        .iter()
        .flat_map(|s| s.points.iter())
        .filter(|&&(x, y)| shown(x) && shown(y))
        .flat_map(|&(x, y)| [x, y])
        .collect();
    if values.is_empty() {
        return None;
    }
    let range = padded_range(&values, scale);
    let diagonal = Series {
        label: "y = x".into(),
        colour: Rgb(110, 110, 110),
        points: vec![(range.0, range.0), (range.1, range.1)],
        style: SeriesStyle::Line,
        marker: Marker::Circle,
        details: Vec::new(),
    };
    let mut series = vec![diagonal];
    series.extend(groups.into_iter().map(|mut s| {
        s.points.retain(|&(x, y)| shown(x) && shown(y));
        s
    }));
    Some(XyFigure {
        title,
        x: Axis {
            label: x_label,
            scale,
            range,
        },
        y: Axis {
            label: y_label,
            scale,
            range,
        },
        series,
        legend_title: String::new(),
        legend_notes: Vec::new(),
    })
}

/// The range of `values` widened by 5 % on each side (in log space on a log scale); a single
/// value gets a range around it.
fn padded_range(values: &[f64], scale: Scale) -> (f64, f64) {
    let positions: Vec<f64> = values.iter().filter_map(|&v| scale.to_axis(v)).collect();
    let lo = positions.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = positions.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = if hi > lo {
        let pad = (hi - lo) * 0.05;
        (lo - pad, hi + pad)
    } else {
        let pad = match scale {
            Scale::Linear if lo != 0.0 => lo.abs() * 0.1,
            Scale::Linear => 1.0,
            _ => 0.5,
        };
        (lo - pad, hi + pad)
    };
    let from_axis = |p: f64| match scale {
        Scale::Linear => p,
        Scale::Log2 => p.exp2(),
        Scale::Log10 => 10f64.powf(p),
    };
    (from_axis(lo), from_axis(hi))
}

/// A range from 0 to a little above the largest value, for volumes (all ≥ 0).
fn zero_based_range(values: &[f64]) -> (f64, f64) {
    let hi = values.iter().copied().fold(0.0, f64::max);
    (0.0, if hi > 0.0 { hi * 1.08 } else { 1.0 })
}

/// The y range for `column`: 0..1 for a rate whose values all lie there, 0-based for
/// non-negative volumes, else the padded data range.
fn value_range(column: &str, values: &[f64]) -> (f64, f64) {
    if is_rate(column) && values.iter().all(|v| (0.0..=1.0).contains(v)) {
        // A little room beyond 0 and 1, so markers there are whole inside the frame.
        (-RATE_MARGIN, 1.0 + RATE_MARGIN)
    } else if !is_rate(column) && column.contains("bytes") && values.iter().all(|&v| v >= 0.0) {
        zero_based_range(values)
    } else {
        padded_range(values, Scale::Linear)
    }
}

/// Room left below 0 and above 1 on a rate's axis: about a marker's radius at the default size.
const RATE_MARGIN: f64 = 0.03;

/// The table with the rows the filters selected (indices into `table.rows`).
struct Data<'a> {
    table: &'a Table,
    rows: Vec<usize>,
}

impl Data<'_> {
    fn error(&self, message: impl Into<String>) -> Error {
        Error::new(&self.table.source, message)
    }

    /// The finite numbers of `column` on the selected rows (`None` for empty or non-finite).
    fn numbers(&self, column: &str) -> Result<Vec<Option<f64>>> {
        let all = self.table.numbers(column)?;
        Ok(self
            .rows
            .iter()
            .map(|&r| all[r].filter(|v| v.is_finite()))
            .collect())
    }

    /// The block shapes of the selected rows.
    fn shapes(&self) -> Result<Vec<[u32; 3]>> {
        let all = self.table.block_shapes()?;
        Ok(self.rows.iter().map(|&r| all[r]).collect())
    }

    /// The block shapes when the table has the columns (any plot can be drawn without them, in
    /// one colour).
    fn shapes_if_any(&self) -> Result<Option<Vec<[u32; 3]>>> {
        if ["block_x", "block_y", "block_z"]
            .iter()
            .all(|c| self.table.has(c))
        {
            self.shapes().map(Some)
        } else {
            Ok(None)
        }
    }

    /// "star4 on h200: " when all selected rows share one kernel (and one GPU).
    fn subject(&self) -> String {
        let single = |column: &str| -> Option<String> {
            let cells = self.table.text(column).ok()?;
            let first = cells[*self.rows.first()?];
            (!first.is_empty() && self.rows.iter().all(|&r| cells[r] == first))
                .then(|| first.to_string())
        };
        match (single("kernel"), single("hw")) {
            (Some(k), Some(h)) => format!("{k} on {h}: "),
            (Some(k), None) => format!("{k}: "),
            _ => String::new(),
        }
    }

    /// Checks that `used` rows had `what` (an error naming the input file when none did) and
    /// notes how many did not.
    fn used_rows(&self, used: usize, what: &str, notes: &mut Vec<String>) -> Result<()> {
        self.require_points(used, what)?;
        let skipped = self.rows.len() - used;
        if skipped > 0 {
            notes.push(format!(
                "{}: skipped {skipped} of {} rows without {what}",
                self.table.source,
                self.rows.len()
            ));
        }
        Ok(())
    }

    /// Fails with an error naming the input file when no row had the data.
    fn require_points(&self, found: usize, what: &str) -> Result<()> {
        if found == 0 {
            Err(self.error(format!(
                "no row has {what} ({} row(s) looked at)",
                self.rows.len()
            )))
        } else {
            Ok(())
        }
    }

    /// The configuration columns in which table rows `a` and `b` differ (for telling the user
    /// what to filter on).
    fn differing_identity(&self, a: usize, b: usize, except: &[&str]) -> Vec<(String, String)> {
        // The columns a user sets, most useful to filter on first (the grid follows from the
        // block and the domain, so it comes last).
        let rank = |c: &str| -> Option<u8> {
            Some(match c {
                "block_z" => 0,
                _ if c.starts_with("param_") => 1,
                _ if c.starts_with("set_") => 2,
                "kernel" | "hw" => 3,
                metrics::L1_SCALE | metrics::L2_SCALE => 4,
                _ if c.starts_with("block_") => 5,
                _ if c.starts_with("grid_") => 6,
                _ => return None,
            })
        };
        let mut differ: Vec<(u8, String, String)> = self
            .table
            .columns
            .iter()
            .enumerate()
            .filter(|(_, c)| !except.contains(&c.as_str()))
            .filter(|&(i, _)| self.table.rows[a][i] != self.table.rows[b][i])
            .filter_map(|(i, c)| Some((rank(c)?, c.clone(), self.table.rows[a][i].clone())))
            .collect();
        differ.sort_by_key(|d| d.0);
        differ.into_iter().map(|(_, c, v)| (c, v)).collect()
    }

    /// The error for two selected rows (positions `a` < `b` in `self.rows`) that land on the same
    /// place of a plot that has room for one.
    fn ambiguous(&self, a: usize, b: usize, place: &str, except: &[&str]) -> Error {
        let (ra, rb) = (self.rows[a], self.rows[b]);
        let differ = self.differing_identity(ra, rb, except);
        let detail = match differ.first() {
            Some((column, value)) => format!(
                " (they differ in {}); add --where to pick one, e.g. --where {column}={value}",
                differ
                    .iter()
                    .map(|(c, _)| c.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None => " (the same configuration twice); add --where to pick one".to_string(),
        };
        self.error(format!(
            "rows {} and {} both fall into {place}{detail}",
            self.table.row_number(ra),
            self.table.row_number(rb)
        ))
    }
}

/// Okabe and Ito's colour-blind-safe palette ("Color Universal Design", 2008): blue, orange,
/// bluish green, vermillion, sky blue, reddish purple, yellow and black, told apart with any of
/// the common colour vision deficiencies. Categories (block shapes, kernels, bar layers) take
/// them in this order.
pub const CATEGORICAL: [Rgb; 8] = [
    Rgb(0, 114, 178),
    Rgb(230, 159, 0),
    Rgb(0, 158, 115),
    Rgb(213, 94, 0),
    Rgb(86, 180, 233),
    Rgb(204, 121, 167),
    Rgb(240, 228, 66),
    Rgb(0, 0, 0),
];

/// The colour and marker of category `i` (0-based): the [`CATEGORICAL`] colours in turn, the
/// marker changing after each round ([`Marker::ALL`]), so the first 64 categories get 64
/// different pairs.
pub fn categorical_style(i: usize) -> (Rgb, Marker) {
    let n = CATEGORICAL.len();
    (CATEGORICAL[i % n], Marker::ALL[(i / n) % Marker::ALL.len()])
}

/// A point (x, y) and the block shape of its row, if the table has block shapes.
type ShapedPoint = ((f64, f64), Option<[u32; 3]>);

/// Points grouped into one series per block shape (in order of first appearance), styled by
/// `colours`; without block shapes one series "data". Also says whether Ernst's code was used
/// (its legend needs the explanation of [`block_colour_notes`]).
fn series_by_shape(
    points: Vec<ShapedPoint>,
    style: SeriesStyle,
    colours: Colours,
) -> (Vec<Series>, bool) {
    let mut series: Vec<(Option<[u32; 3]>, Series)> = Vec::new();
    for (p, shape) in points {
        match series.iter_mut().find(|(s, _)| *s == shape) {
            Some((_, s)) => s.points.push(p),
            None => series.push((
                shape,
                Series {
                    label: shape.map_or_else(|| "data".to_string(), shape_name),
                    colour: CATEGORICAL[0],
                    points: vec![p],
                    style,
                    marker: Marker::Circle,
                    details: Vec::new(),
                },
            )),
        }
    }
    let shaped = series.iter().any(|(s, _)| s.is_some());
    let ernst = shaped
        && match colours {
            Colours::Ernst => true,
            Colours::Categorical => false,
            Colours::Auto => series.len() > AUTO_CATEGORIES,
        };
    let series = series
        .into_iter()
        .enumerate()
        .map(|(i, (shape, mut s))| {
            match shape {
                Some(shape) if ernst => s.colour = block_colour(shape),
                Some(_) => (s.colour, s.marker) = categorical_style(i),
                None => {}
            }
            s
        })
        .collect();
    (series, ernst)
}

/// Samples `f` on `x_range` for a smooth curve: 256 equal steps, each split in halves (up to 64
/// pieces) while the curve moves by more than 1/400 of `y_range` across it inside the shown
/// range. Points where `f` is not finite are left out.
pub fn sample_curve(
    f: impl Fn(f64) -> f64,
    x_range: (f64, f64),
    y_range: (f64, f64),
) -> Vec<(f64, f64)> {
    const STEPS: usize = 256;
    const MAX_DEPTH: u32 = 6;
    let (x0, x1) = x_range;
    let y_tolerance = (y_range.1 - y_range.0).abs() / 400.0;
    let shown = |y: f64| y >= y_range.0 && y <= y_range.1;
    let mut points = vec![(x0, f(x0))];
    // Refines the piece from `a` to `b` (both already evaluated), pushing the points after `a`.
    fn refine(
        f: &dyn Fn(f64) -> f64,
        a: (f64, f64),
        b: (f64, f64),
        depth: u32,
        tolerance: f64,
        shown: &dyn Fn(f64) -> bool,
        out: &mut Vec<(f64, f64)>,
    ) {
        let steep = (b.1 - a.1).abs() > tolerance && (shown(a.1) || shown(b.1));
        if depth > 0 && steep {
            let xm = (a.0 + b.0) / 2.0;
            let m = (xm, f(xm));
            refine(f, a, m, depth - 1, tolerance, shown, out);
            refine(f, m, b, depth - 1, tolerance, shown, out);
        } else {
            out.push(b);
        }
    }
    for i in 1..=STEPS {
        let x = x0 + (x1 - x0) * i as f64 / STEPS as f64;
        let b = (x, f(x));
        let a = *points.last().unwrap_or(&b);
        refine(&f, a, b, MAX_DEPTH, y_tolerance, &shown, &mut points);
    }
    points.retain(|p| p.1.is_finite());
    points
}

/// The rows where both `x` and `y` are numbers, with their block shapes; notes the rest.
fn xy_points(data: &Data, x: &str, y: &str, notes: &mut Vec<String>) -> Result<Vec<ShapedPoint>> {
    let xs = data.numbers(x)?;
    let ys = data.numbers(y)?;
    let shapes = data.shapes_if_any()?;
    let points: Vec<_> = (0..data.rows.len())
        .filter_map(|i| Some(((xs[i]?, ys[i]?), shapes.as_ref().map(|s| s[i]))))
        .collect();
    data.used_rows(
        points.len(),
        &format!("numbers in both '{x}' and '{y}'"),
        notes,
    )?;
    Ok(points)
}

fn hit_rate(
    data: &Data,
    x: &str,
    y: &str,
    fit: Option<&FitCurve>,
    colours: Colours,
    notes: &mut Vec<String>,
) -> Result<Figure> {
    let points = xy_points(data, x, y, notes)?;
    let coloured = points.iter().any(|(_, s)| s.is_some());
    let xs: Vec<f64> = points.iter().map(|((x, _), _)| *x).collect();
    let ys: Vec<f64> = points.iter().map(|((_, y), _)| *y).collect();
    let x_range = padded_range(&xs, Scale::Linear);
    let y_range = value_range(y, &ys);
    note_out_of_range(x, &xs, notes);
    note_out_of_range(y, &ys, notes);
    let (mut series, ernst) = series_by_shape(points, SeriesStyle::Markers, colours);
    if let Some(fit) = fit {
        let g = &fit.curve;
        let curve = sample_curve(|x| g.eval(x), x_range, y_range);
        let mut details = vec![
            "y = a·exp(b·exp(c·x))".to_string(),
            format!("a = {}", figure::format_number(g.a)),
            format!("b = {}", figure::format_number(g.b)),
            format!("c = {}", figure::format_number(g.c)),
        ];
        if g.o0 != 0.0 {
            details[0] = "y = a·exp(b·exp(c·(x−o0)))".into();
            details.push(format!("o0 = {}", figure::format_number(g.o0)));
        }
        if let Some(r2) = fit.r2 {
            details.push(format!("R² = {}", figure::format_number(r2)));
        }
        series.push(Series {
            label: "Gompertz fit".into(),
            colour: Rgb(0, 0, 0),
            points: curve,
            style: SeriesStyle::Line,
            marker: Marker::Circle,
            details,
        });
    }
    Ok(Figure::Xy(XyFigure {
        title: format!("{}{}", data.subject(), versus(&describe(y), &describe(x))),
        x: Axis {
            label: describe(x),
            scale: Scale::Linear,
            range: x_range,
        },
        y: Axis {
            label: describe(y),
            scale: Scale::Linear,
            range: y_range,
        },
        series,
        legend_title: if coloured {
            "block x×y×z".into()
        } else {
            String::new()
        },
        legend_notes: if ernst {
            block_colour_notes()
        } else {
            Vec::new()
        },
    }))
}

fn scatter(
    data: &Data,
    x: &str,
    y: &str,
    log: bool,
    colours: Colours,
    notes: &mut Vec<String>,
) -> Result<Figure> {
    let scale = if log { Scale::Log10 } else { Scale::Linear };
    // The diagonal y = x compares like with like: columns of two units cannot share it.
    if let (Some(qx), Some(qy)) = (
        crate::models::describe_column(x),
        crate::models::describe_column(y),
    ) && qx.unit != qy.unit
    {
        return Err(data.error(format!(
            "scatter draws y = x, but '{x}' is in {} and '{y}' in {}: plot two columns of one \
             unit (e.g. l2_v_down_bytes against ernst2023_dram_load_bytes, both B)",
            unit_name(qx.unit),
            unit_name(qy.unit)
        )));
    }
    let points = xy_points(data, x, y, notes)?;
    let coloured = points.iter().any(|(_, s)| s.is_some());
    let total = points.len();
    let positive = points
        .iter()
        .filter(|((x, y), _)| scale.to_axis(*x).is_some() && scale.to_axis(*y).is_some())
        .count();
    if positive < total {
        notes.push(format!(
            "{}: left out {} point(s) with a value ≤ 0, which a log axis cannot show",
            data.table.source,
            total - positive
        ));
    }
    data.require_points(
        positive,
        &format!("positive numbers in both '{x}' and '{y}'"),
    )?;
    let (groups, ernst) = series_by_shape(points, SeriesStyle::Markers, colours);
    let mut f = scatter_with_diagonal(
        format!("{}{}", data.subject(), versus(&describe(y), &describe(x))),
        describe(x),
        describe(y),
        groups,
        scale,
    )
    .ok_or_else(|| data.error("no point to plot"))?;
    if coloured {
        f.legend_title = "block x×y×z".into();
    }
    if ernst {
        f.legend_notes = block_colour_notes();
    }
    Ok(Figure::Xy(f))
}

fn layer_condition(
    data: &Data,
    y: &str,
    colours: Colours,
    notes: &mut Vec<String>,
) -> Result<Figure> {
    let nx = data.numbers("param_nx")?;
    let ny = data.numbers("param_ny")?;
    let ys = data.numbers(y)?;
    let shapes = data.shapes()?;
    let mut points = Vec::new();
    for i in 0..data.rows.len() {
        if let (Some(a), Some(b), Some(v)) = (nx[i], ny[i], ys[i])
            && a > 0.0
            && b > 0.0
        {
            points.push(((a * b, v), Some(shapes[i])));
        }
    }
    data.used_rows(
        points.len(),
        &format!("positive param_nx, param_ny and a number in '{y}'"),
        notes,
    )?;
    let xs: Vec<f64> = points.iter().map(|((x, _), _)| *x).collect();
    let values: Vec<f64> = points.iter().map(|((_, v), _)| *v).collect();
    note_out_of_range(y, &values, notes);
    let (mut series, ernst) = series_by_shape(points, SeriesStyle::LineAndMarkers, colours);
    // Shapes often coincide (the same B/LUP at small planes): each line is moved sideways by a
    // small fraction of a power of two and keeps its own marker shape, so lines drawn over each
    // other stay visible.
    let n = series.len();
    for (i, s) in series.iter_mut().enumerate() {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let offset = LINE_OFFSET * (i as f64 - (n as f64 - 1.0) / 2.0);
        for p in &mut s.points {
            p.0 *= offset.exp2();
        }
        if !ernst {
            s.marker = Marker::ALL[i % Marker::ALL.len()];
        }
    }
    let y_label = describe(y);
    Ok(Figure::Xy(XyFigure {
        title: format!(
            "{}{} vs XY plane size",
            data.subject(),
            versus(&y_label, "").trim_end_matches(" vs ")
        ),
        x: Axis {
            label: "XY plane size nx·ny [points]".into(),
            scale: Scale::Log2,
            range: padded_range(&xs, Scale::Log2),
        },
        y: Axis {
            label: y_label,
            scale: Scale::Linear,
            range: value_range(y, &values),
        },
        series,
        legend_title: "block x×y×z".into(),
        legend_notes: if ernst {
            block_colour_notes()
        } else {
            Vec::new()
        },
    }))
}

/// The sideways step between neighbouring lines of `layer-condition`, in powers of two (a line
/// is drawn at x · 2^(k · step), k centred on 0): small against the plot's factor-of-two ticks.
const LINE_OFFSET: f64 = 0.04;

/// The categories of one block dimension: the values present, with the powers of two between
/// them filled in when all are powers of two (so the table reads like Tabik et al.'s).
fn block_axis(values: impl Iterator<Item = u32>) -> Vec<u32> {
    let mut v: Vec<u32> = values.collect();
    v.sort_unstable();
    v.dedup();
    if let (Some(&lo), Some(&hi)) = (v.first(), v.last())
        && v.iter().all(|x| x.is_power_of_two())
    {
        return (lo.trailing_zeros()..=hi.trailing_zeros())
            .map(|k| 1u32 << k)
            .collect();
    }
    v
}

fn block_table(
    data: &Data,
    metric: &str,
    filters: &[String],
    notes: &mut Vec<String>,
) -> Result<Figure> {
    let values = data.numbers(metric)?;
    let shapes = data.shapes()?;
    let present: Vec<usize> = (0..data.rows.len())
        .filter(|&i| values[i].is_some())
        .collect();
    data.used_rows(present.len(), &format!("a number in '{metric}'"), notes)?;
    let xs = block_axis(present.iter().map(|&i| shapes[i][0]));
    let ys = block_axis(present.iter().map(|&i| shapes[i][1]));
    let mut cells: Vec<Vec<Option<(f64, usize)>>> = vec![vec![None; xs.len()]; ys.len()];
    for &i in &present {
        let [bx, by, _] = shapes[i];
        let cx = xs.iter().position(|&v| v == bx).unwrap_or_default();
        let cy = ys.iter().position(|&v| v == by).unwrap_or_default();
        if let Some((_, first)) = cells[cy][cx] {
            return Err(data.ambiguous(
                first,
                i,
                &format!("the cell block_x={bx}, block_y={by}"),
                &["block_x", "block_y"],
            ));
        }
        cells[cy][cx] = values[i].map(|v| (v, i));
    }
    let condition = if filters.is_empty() {
        String::new()
    } else {
        format!(" ({})", filters.join(", "))
    };
    let shown: Vec<f64> = present.iter().filter_map(|&i| values[i]).collect();
    note_out_of_range(metric, &shown, notes);
    // Times in µs or ns, as the quantity table says (not 1.06×10⁻⁵ s).
    let (factor, value_label, name) = match crate::models::describe_column(metric) {
        Some(q) => {
            let (factor, unit) = metrics::display_unit(q.unit, &shown);
            let label = if unit.is_empty() || unit == "1" {
                q.label.to_string()
            } else {
                format!("{} [{unit}]", q.label)
            };
            (factor, label, q.label.to_string())
        }
        None => (1.0, describe(metric), metric.to_string()),
    };
    Ok(Figure::Heat(HeatMap {
        title: format!("{}{name} per block shape{condition}", data.subject()),
        x_label: "Blk.x = block_x [threads]".into(),
        y_label: "Blk.y = block_y [threads]".into(),
        xs: xs.iter().map(u32::to_string).collect(),
        ys: ys.iter().map(u32::to_string).collect(),
        values: cells
            .into_iter()
            .map(|row| {
                row.into_iter()
                    .map(|c| c.map(|(v, _)| v * factor))
                    .collect()
            })
            .collect(),
        value_label,
    }))
}

fn composition(data: &Data, level: Level, notes: &mut Vec<String>) -> Result<Figure> {
    let p = level.prefix();
    let comp = data.numbers(&format!("{p}_v_comp_bytes"))?;
    let down = data.numbers(&format!("{p}_v_down_bytes"))?;
    let lups = data.numbers("lattice_updates")?;
    let shapes = data.shapes()?;
    let mut categories: Vec<([u32; 3], usize)> = Vec::new();
    let (mut compulsory, mut capacity) = (Vec::new(), Vec::new());
    let mut clipped = Vec::new();
    for i in 0..data.rows.len() {
        let (Some(c), Some(d), Some(n)) = (comp[i], down[i], lups[i]) else {
            continue;
        };
        if n <= 0.0 {
            continue;
        }
        if let Some(&(_, first)) = categories.iter().find(|(s, _)| *s == shapes[i]) {
            return Err(data.ambiguous(
                first,
                i,
                &format!("block shape {}", shape_name(shapes[i])),
                &["block_x", "block_y", "block_z"],
            ));
        }
        categories.push((shapes[i], i));
        compulsory.push((c / n).max(0.0));
        let cap = (d - c) / n;
        if cap < 0.0 {
            clipped.push(shape_name(shapes[i]));
        }
        capacity.push(cap.max(0.0));
    }
    data.used_rows(
        categories.len(),
        &format!("numbers in {p}_v_comp_bytes, {p}_v_down_bytes and a positive lattice_updates"),
        notes,
    )?;
    if !clipped.is_empty() {
        notes.push(format!(
            "{}: {} block shape(s) have {p}_v_down_bytes < {p}_v_comp_bytes; their capacity part is drawn as 0: {}",
            data.table.source,
            clipped.len(),
            clipped.join(", ")
        ));
    }
    Ok(Figure::Bars(StackedBars {
        title: format!(
            "{}{} volume composition per block shape",
            data.subject(),
            p.to_uppercase()
        ),
        x_label: "block shape x×y×z".into(),
        y_label: format!("{} volume [B/LUP]", level.flow()),
        categories: categories.iter().map(|(s, _)| shape_name(*s)).collect(),
        layers: vec![
            BarLayer {
                label: "compulsory".into(),
                colour: CATEGORICAL[0],
                values: compulsory,
            },
            BarLayer {
                label: "capacity".into(),
                colour: CATEGORICAL[1],
                values: capacity,
            },
        ],
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(csv: &str) -> Table {
        Table::parse_csv(csv, "t.csv").unwrap()
    }

    fn spec(kind: PlotKind) -> PlotSpec {
        PlotSpec {
            kind,
            title: None,
            size: parse_size(DEFAULT_SIZE_TEXT).unwrap(),
            filters: Vec::new(),
            x_label: None,
            y_label: None,
        }
    }

    #[test]
    fn ernst_colours_of_block_shapes() {
        assert_eq!(block_colour([1, 1, 1]), Rgb(0, 0, 0));
        assert_eq!(block_colour([256, 256, 64]), Rgb(255, 255, 255));
        assert_eq!(block_colour([16, 4, 8]), Rgb(128, 64, 128));
        // Beyond the scheme's range the channel saturates.
        assert_eq!(block_colour([1024, 1, 1]), Rgb(255, 0, 0));
    }

    #[test]
    fn gompertz_file_and_curve() {
        let f = FitCurve::parse(r#"{"a":0.9,"b":-2,"c":0.5,"r2":0.97,"n":12}"#, "f.json").unwrap();
        let g = f.curve;
        assert_eq!(
            (g.a, g.b, g.c, g.o0, f.r2),
            (0.9, -2.0, 0.5, 0.0, Some(0.97))
        );
        assert!((g.eval(0.0) - 0.9 * (-2f64).exp()).abs() < 1e-12);
        let e = FitCurve::parse(r#"{"a":1,"b":2}"#, "f.json").unwrap_err();
        assert!(e.to_string().starts_with("f.json: no key 'c'"), "{e}");
        assert!(FitCurve::parse(r#"{"a":1,"b":"x","c":1}"#, "f.json").is_err());
    }

    #[test]
    fn options_foreign_to_a_kind_are_refused() {
        let o = PlotOptions {
            log: true,
            ..PlotOptions::default()
        };
        let e = PlotKind::from_options(KindName::HitRate, &o).unwrap_err();
        assert_eq!(e.source_name, "--log");
        let e = PlotKind::from_options(KindName::Scatter, &PlotOptions::default()).unwrap_err();
        assert_eq!(e.source_name, "--x");
    }

    #[test]
    fn block_axis_fills_missing_powers_of_two() {
        assert_eq!(block_axis([8, 32, 2].into_iter()), [2, 4, 8, 16, 32]);
        assert_eq!(block_axis([96, 32].into_iter()), [32, 96]);
    }

    #[test]
    fn scatter_ranges_are_equal_and_hold_every_point() {
        let t =
            table("block_x,block_y,block_z,sim,pred\n32,8,1,10,12\n64,4,1,20,15\n32,8,1,30,31\n");
        let p = build(
            &spec(PlotKind::Scatter {
                x: "sim".into(),
                y: "pred".into(),
                log: false,
                colours: Colours::Auto,
            }),
            &t,
        )
        .unwrap();
        let Figure::Xy(f) = p.figure else { panic!() };
        assert_eq!(f.x.range, f.y.range);
        assert!(f.x.range.0 < 10.0 && f.x.range.1 > 31.0);
        // Diagonal first, then one series per shape in order of appearance.
        let labels: Vec<&str> = f.series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["y = x", "32x8x1", "64x4x1"]);
        assert_eq!(f.series[1].points, [(10.0, 12.0), (30.0, 31.0)]);
    }

    #[test]
    fn composition_splits_compulsory_and_capacity_per_lup() {
        let t = table(
            "block_x,block_y,block_z,lattice_updates,l2_v_comp_bytes,l2_v_down_bytes\n\
             32,8,1,100,800,1200\n64,4,1,100,800,700\n",
        );
        let p = build(&spec(PlotKind::Composition { level: Level::L2 }), &t).unwrap();
        let Figure::Bars(b) = p.figure else { panic!() };
        assert_eq!(b.categories, ["32x8x1", "64x4x1"]);
        assert_eq!(b.layers[0].values, [8.0, 8.0]);
        assert_eq!(b.layers[1].values, [4.0, 0.0]);
        assert_eq!(p.notes.len(), 1);
        assert!(p.notes[0].contains("64x4x1"), "{:?}", p.notes);
    }

    #[test]
    fn block_table_shows_times_in_microseconds_and_notes_rates_above_one() {
        let t = table(
            "block_x,block_y,block_z,time_predicted_s,l1_redundant_hit_rate\n\
             32,8,1,1.06e-5,1.0008\n64,4,1,2.5e-5,0.93\n",
        );
        let kind = |metric: &str| PlotKind::BlockTable {
            metric: metric.into(),
        };
        let p = build(&spec(kind("time_predicted_s")), &t).unwrap();
        let Figure::Heat(h) = p.figure else { panic!() };
        assert_eq!(h.value_label, "predicted time [µs]");
        assert!(
            h.title.starts_with("predicted time per block shape"),
            "{}",
            h.title
        );
        // Rows go up by block_y: 64x4x1 first.
        let shown: Vec<f64> = h.values.iter().flatten().flatten().copied().collect();
        assert_eq!(shown.len(), 2);
        assert!((shown[0] - 25.0).abs() < 1e-9 && (shown[1] - 10.6).abs() < 1e-9);
        assert!(p.notes.is_empty(), "{:?}", p.notes);
        let p = build(&spec(kind("l1_redundant_hit_rate")), &t).unwrap();
        assert_eq!(p.notes.len(), 1, "{:?}", p.notes);
        assert!(
            p.notes[0].starts_with(
                "l1_redundant_hit_rate: 1 of 2 value(s) outside its physical range in [0, 1]"
            ),
            "{:?}",
            p.notes
        );
    }

    /// sRGB to CIELAB (D65), for colour distances as people see them.
    fn lab(c: Rgb) -> [f64; 3] {
        let linear = |v: u8| {
            let v = v as f64 / 255.0;
            if v <= 0.04045 {
                v / 12.92
            } else {
                ((v + 0.055) / 1.055).powf(2.4)
            }
        };
        let (r, g, b) = (linear(c.0), linear(c.1), linear(c.2));
        let x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
        let y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
        let z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
        let f = |t: f64| {
            if t > 0.008856 {
                t.cbrt()
            } else {
                7.787 * t + 16.0 / 116.0
            }
        };
        [
            116.0 * f(y) - 16.0,
            500.0 * (f(x) - f(y)),
            200.0 * (f(y) - f(z)),
        ]
    }

    #[test]
    fn palette_colours_are_far_apart() {
        // Okabe–Ito: every pair at least ΔE*ab 25 apart (the closest, orange and vermillion or
        // blue and bluish green, are about 30), and none too pale for a white page.
        let mut closest = f64::INFINITY;
        for (i, a) in CATEGORICAL.iter().enumerate() {
            for b in &CATEGORICAL[i + 1..] {
                let (p, q) = (lab(*a), lab(*b));
                let d =
                    ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt();
                closest = closest.min(d);
            }
            assert!(lab(*a)[0] < 92.0, "{a:?} is too pale");
        }
        assert!(closest >= 25.0, "closest pair ΔE = {closest}");
    }

    #[test]
    fn categories_get_distinct_colour_and_marker_pairs() {
        let pairs: Vec<(Rgb, Marker)> = (0..64).map(categorical_style).collect();
        for (i, a) in pairs.iter().enumerate() {
            assert!(!pairs[i + 1..].contains(a), "category {i} repeats {a:?}");
        }
        // 20 block shapes, categorical: 20 pairs, no RGB code.
        let points: Vec<ShapedPoint> = (0..20u32)
            .map(|i| ((i as f64, 0.5), Some([1 << (i % 10), 1 << (i / 10), 1])))
            .collect();
        let (series, ernst) =
            series_by_shape(points.clone(), SeriesStyle::Markers, Colours::Categorical);
        assert!(!ernst);
        assert_eq!(series.len(), 20);
        let styles: Vec<(Rgb, Marker)> = series.iter().map(|s| (s.colour, s.marker)).collect();
        assert_eq!(styles, pairs[..20]);
        // Auto: 20 shapes are more than a legend reads, so Ernst's code; 16 are not.
        let (series, ernst) = series_by_shape(points.clone(), SeriesStyle::Markers, Colours::Auto);
        assert!(ernst);
        assert_eq!(series[3].colour, block_colour([8, 1, 1]));
        assert!(series.iter().all(|s| s.marker == Marker::Circle));
        let (_, ernst) =
            series_by_shape(points[..16].to_vec(), SeriesStyle::Markers, Colours::Auto);
        assert!(!ernst);
        let (series, ernst) =
            series_by_shape(points[..3].to_vec(), SeriesStyle::Markers, Colours::Ernst);
        assert!(ernst && series[0].colour == block_colour([1, 1, 1]));
    }

    #[test]
    fn fitted_curves_are_sampled_densely() {
        // A steep Gompertz curve: Ernst's L1 hit-rate shape over 0..3.
        let g = Gompertz::new(0.98, -0.02, 3.0);
        let (xr, yr) = ((0.0, 3.0), (0.0, 1.0));
        let points = sample_curve(|x| g.eval(x), xr, yr);
        assert!(points.len() >= 257, "{}", points.len());
        assert_eq!(points.first().unwrap().0, 0.0);
        assert_eq!(points.last().unwrap().0, 3.0);
        for w in points.windows(2) {
            let (dx, dy) = (w[1].0 - w[0].0, (w[1].1 - w[0].1).abs());
            assert!(dx > 0.0 && dx <= 3.0 / 256.0 + 1e-12, "x step {dx}");
            // Where it falls fastest the pieces are split until the curve moves < 1/400 of
            // the axis (or 64 pieces per step).
            assert!(
                dy <= 1.0 / 400.0 + 1e-12 || dx <= 3.0 / 256.0 / 64.0 + 1e-12,
                "y step {dy}"
            );
        }
        // The same input gives the same points.
        assert_eq!(points, sample_curve(|x| g.eval(x), xr, yr));
    }

    #[test]
    fn axis_labels_replace_the_default_captions() {
        let t = table("block_x,block_y,block_z,sim,pred\n32,8,1,10,12\n64,4,1,20,15\n");
        let mut s = spec(PlotKind::Scatter {
            x: "sim".into(),
            y: "pred".into(),
            log: true,
            colours: Colours::Auto,
        });
        s.x_label = Some("simulated volume [B]".into());
        let Figure::Xy(f) = build(&s, &t).unwrap().figure else {
            panic!()
        };
        assert_eq!(f.x.label, "simulated volume [B]");
        assert_eq!(f.y.label, "pred");
    }
}
