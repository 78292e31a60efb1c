//! Fitting model constants to sweep results: the library behind `gputraffic fit`.
//!
//! Two models. `gompertz` fits y = a·exp(b·exp(c·x)) (Ernst et al.'s hit-rate curve, a
//! [`Gompertz`] without the shift) to two columns of a table by
//! Levenberg–Marquardt, started from linearisations ln(±ln(y/a)) = ln(±b) + c·x at a few
//! candidate amplitudes. `su2015` fits Su et al.'s miss-ratio constants δ, ε and η by linear
//! least squares through the origin, from the effective miss ratios and the model factors a sweep
//! records (`su_smx_miss_ratio` = δ·`su_smx_capacity_term` + η·`su_smx_scheduling_term`,
//! `su_l2_miss_ratio` = ε·`su_l2_capacity_term`).
//!
//! Everything is deterministic. Bad data (fewer points than constants, NaN or infinite cells, no
//! variation, no convergence) is one [`Error`] naming the input file and the problem.

use crate::error::{Error, Result};
use crate::input::table::Table;
use crate::models::Domain;
use crate::models::gompertz::Gompertz;
use serde::{Serialize, Serializer};
use serde_json::Value;

/// The models `fit` knows, with one line each (shown by `gputraffic list`).
pub const MODELS: &[(&str, &str)] = &[
    (
        "gompertz",
        "y = a*exp(b*exp(c*x)) on two columns (--x, --y), Levenberg-Marquardt",
    ),
    (
        "su2015",
        "Su et al. 2015 miss-ratio constants delta (8), epsilon (15), eta (17), linear least squares",
    ),
];

/// The columns `su2015` reads (all written by `gputraffic sweep`).
pub const SU_COLUMNS: [&str; 5] = [
    SMX_RATIO,
    SMX_CAPACITY,
    SMX_SCHEDULING,
    L2_RATIO,
    L2_CAPACITY,
];
const SMX_RATIO: &str = crate::metrics::SU_SMX_MISS_RATIO;
const SMX_CAPACITY: &str = crate::metrics::SU_SMX_CAPACITY_TERM;
const SMX_SCHEDULING: &str = crate::metrics::SU_SMX_SCHEDULING_TERM;
const L2_RATIO: &str = crate::metrics::SU_L2_MISS_RATIO;
const L2_CAPACITY: &str = crate::metrics::SU_L2_CAPACITY_TERM;

/// How a fit is written out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FitFormat {
    /// One pretty-printed JSON object (what `plot --fit` reads).
    Json,
    /// Aligned `name value` lines for people.
    Table,
}

impl crate::choice::Choice for FitFormat {
    const CHOICES: &'static [(Self, &'static str, &'static str)] = &[
        (
            FitFormat::Json,
            "json",
            "One pretty-printed JSON object (what `plot --fit` reads)",
        ),
        (
            FitFormat::Table,
            "table",
            "Aligned `name value` lines for people",
        ),
    ];
}

/// What to fit: the model and, for `gompertz`, the two columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// y = a·exp(b·exp(c·x)) on columns `x` and `y`.
    Gompertz {
        /// Column of the independent variable.
        x: String,
        /// Column of the dependent variable.
        y: String,
    },
    /// Su et al. 2015's δ, ε, η from the [`SU_COLUMNS`].
    Su2015,
}

impl Request {
    /// Checks the command-line choices before any file is read: a known model, and `--x`/`--y`
    /// exactly when the model takes columns.
    pub fn new(model: &str, x: Option<&str>, y: Option<&str>) -> Result<Request> {
        match model {
            "gompertz" => match (x, y) {
                (Some(x), Some(y)) => Ok(Request::Gompertz {
                    x: x.to_string(),
                    y: y.to_string(),
                }),
                (None, _) => Err(Error::new(
                    "--x",
                    "gompertz needs --x COLUMN (the independent variable)",
                )),
                (_, None) => Err(Error::new(
                    "--y",
                    "gompertz needs --y COLUMN (the dependent variable)",
                )),
            },
            "su2015" => match (x, y) {
                (None, None) => Ok(Request::Su2015),
                (Some(_), _) => Err(Error::new(
                    "--x",
                    format!(
                        "su2015 reads fixed columns ({}); drop --x",
                        SU_COLUMNS.join(", ")
                    ),
                )),
                (_, Some(_)) => Err(Error::new(
                    "--y",
                    format!(
                        "su2015 reads fixed columns ({}); drop --y",
                        SU_COLUMNS.join(", ")
                    ),
                )),
            },
            other => {
                let known: Vec<&str> = MODELS.iter().map(|(n, _)| *n).collect();
                Err(Error::new(
                    "--model",
                    format!("unknown model '{other}' (known: {})", known.join(", ")),
                ))
            }
        }
    }

    /// The model's name, as `--model` spells it.
    pub fn model(&self) -> &'static str {
        match self {
            Request::Gompertz { .. } => "gompertz",
            Request::Su2015 => "su2015",
        }
    }

    /// The constants the model fits, the names `--bound` takes.
    pub fn constants(&self) -> &'static [&'static str] {
        match self {
            Request::Gompertz { .. } => &["a", "b", "c"],
            Request::Su2015 => &["delta", "epsilon", "eta"],
        }
    }

    /// Fits the model to `table`.
    pub fn fit(&self, table: &Table) -> Result<Fitted> {
        self.fit_bounded(table, &Bounds::default())
    }

    /// Fits the model to `table` with its constants kept within `bounds` ([`Bounds::parse`]).
    pub fn fit_bounded(&self, table: &Table, bounds: &Bounds) -> Result<Fitted> {
        match self {
            Request::Gompertz { x, y } => {
                let points = Points::from_table(table, x, y)?;
                Ok(Fitted::Gompertz(fit_gompertz_bounded(&points, bounds)?))
            }
            Request::Su2015 => Ok(Fitted::Su2015(fit_su2015_bounded(
                &SuRows::from_table(table)?,
                bounds,
            )?)),
        }
    }
}

/// A finished fit of either model. Serialised as one flat object, starting with `"model"`
/// (`gompertz` or `su2015`) and followed by the fit's own keys; undefined values are `null`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "model", rename_all = "lowercase")]
pub enum Fitted {
    /// A Gompertz curve.
    Gompertz(GompertzFit),
    /// Su et al.'s constants.
    Su2015(Su2015Fit),
}

/// A fitted constant outside the range where it means something ([`Fitted::out_of_range`]).
#[derive(Debug, Clone, PartialEq)]
pub struct OutOfRange {
    /// The constant, as `--bound` names it.
    pub name: &'static str,
    /// Its fitted value.
    pub value: f64,
    /// Where it means something.
    pub domain: Domain,
    /// What it is, for the message.
    pub what: &'static str,
}

impl OutOfRange {
    /// The `--bound NAME=LO..HI` that keeps the constant in its range.
    pub fn bound(&self) -> String {
        format!("--bound {}={}", self.name, self.domain.as_bound())
    }
}

/// Whether the column `y` holds a rate (a fraction of accesses): a word of its name, between
/// `_`, `.` or `-`, is `rate` or `ratio` (`l2_redundant_hit_rate`, `su_l2_miss_ratio`).
pub fn is_rate_column(y: &str) -> bool {
    y.to_lowercase()
        .split(['_', '.', '-', ' '])
        .any(|w| w == "rate" || w == "ratio")
}

/// The domain of su2015's constant `name`, as the model declares it for `--set`.
fn su2015_domain(name: &str) -> Domain {
    crate::models::su2015::MODEL
        .params
        .iter()
        .find(|p| p.name == name)
        .map_or(Domain::ANY, |p| p.domain)
}

impl Fitted {
    /// The fitted constants outside their physical range: a gompertz ceiling `a` outside
    /// (0, 1] when y is a rate ([`is_rate_column`]; b and c have no range), su2015's δ, ε, η
    /// outside the domains the model declares ([`crate::models::su2015`]). The caller warns.
    pub fn out_of_range(&self) -> Vec<OutOfRange> {
        let candidates: Vec<(&'static str, f64, Domain, &'static str)> = match self {
            Fitted::Gompertz(g) if is_rate_column(&g.y) => vec![(
                "a",
                g.curve.a,
                Domain::RATE_CEILING,
                "the ceiling of a rate",
            )],
            Fitted::Gompertz(_) => vec![],
            Fitted::Su2015(f) => {
                let mut v = vec![
                    (
                        "delta",
                        f.delta,
                        su2015_domain("delta"),
                        "Su et al.'s on-SMX miss constant",
                    ),
                    (
                        "epsilon",
                        f.epsilon,
                        su2015_domain("epsilon"),
                        "Su et al.'s L2 miss constant",
                    ),
                ];
                if let Some(eta) = f.eta {
                    v.push((
                        "eta",
                        eta,
                        su2015_domain("eta"),
                        "Su et al.'s scheduling miss constant",
                    ));
                }
                v
            }
        };
        candidates
            .into_iter()
            .filter(|(_, v, d, _)| !d.contains(*v))
            .map(|(name, value, domain, what)| OutOfRange {
                name,
                value,
                domain,
                what,
            })
            .collect()
    }

    /// The coefficients of determination below 0, by name (`r2`, and su2015's `r2_delta`,
    /// `r2_epsilon`, `r2_eta`): the fit describes y worse than y's mean does.
    pub fn negative_r2(&self) -> Vec<(&'static str, f64)> {
        let all = match self {
            Fitted::Gompertz(g) => vec![("r2", Some(g.r2))],
            Fitted::Su2015(f) => vec![
                ("r2", Some(f.r2)),
                ("r2_delta", f.r2_delta),
                ("r2_epsilon", f.r2_epsilon),
                ("r2_eta", f.r2_eta),
            ],
        };
        all.into_iter()
            .filter_map(|(n, v)| v.filter(|v| *v < 0.0).map(|v| (n, v)))
            .collect()
    }

    /// The fit as one flat JSON object, starting with `"model"`; undefined values are `null`.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).expect("a fit is strings and numbers")
    }

    /// The fit written in `format`, ending with a newline.
    pub fn render(&self, format: FitFormat) -> String {
        let json = self.to_json();
        match format {
            FitFormat::Json => {
                let mut s = serde_json::to_string_pretty(&json).unwrap_or_default();
                s.push('\n');
                s
            }
            FitFormat::Table => render_table(&json),
        }
    }
}

/// `name  value` lines, the names padded to one width; numbers with 6 significant digits.
fn render_table(json: &Value) -> String {
    let Value::Object(map) = json else {
        return String::new();
    };
    let width = map.keys().map(|k| k.len()).max().unwrap_or(0);
    let mut s = String::new();
    for (k, v) in map {
        let text = match v {
            Value::Null => "-".to_string(),
            Value::String(t) => t.clone(),
            Value::Number(n) if n.is_f64() => significant(n.as_f64().unwrap_or(f64::NAN), 6),
            Value::Object(o) => o
                .iter()
                .map(|(name, v)| format!("{name} {}", table_value(v)))
                .collect::<Vec<_>>()
                .join(", "),
            other => other.to_string(),
        };
        s += &format!("{k:<width$}  {text}\n");
    }
    s
}

/// A value inside an object of the table output: `[lo, hi]` as `lo..hi` (an open side empty),
/// a string as itself.
fn table_value(v: &Value) -> String {
    match v {
        Value::Array(a) if a.len() == 2 => {
            let side = |x: &Value| x.as_f64().map_or(String::new(), |f| significant(f, 6));
            format!("{}..{}", side(&a[0]), side(&a[1]))
        }
        Value::String(t) => t.clone(),
        other => other.to_string(),
    }
}

/// `v` with `digits` significant digits: fixed notation for moderate magnitudes, else scientific
/// (the table output, and the CLI's warnings about a fit).
pub fn significant(v: f64, digits: usize) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    // The exponent after rounding to `digits` (0.9999999 is 1.00000e0, not 9.99999e-1).
    let scientific = format!("{v:.prec$e}", prec = digits - 1);
    let magnitude: i32 = scientific
        .rsplit('e')
        .next()
        .and_then(|e| e.parse().ok())
        .unwrap_or(0);
    if (-4..6).contains(&magnitude) {
        let decimals = (digits as i32 - 1 - magnitude).max(0) as usize;
        format!("{v:.decimals$}")
    } else {
        scientific
    }
}

/// The numbers of column `name`, with `None` for an empty cell; a NaN or infinite cell is an
/// error naming the file, the row (1 = the first data row) and the column.
fn finite_column(table: &Table, name: &str) -> Result<Vec<Option<f64>>> {
    let values = table.numbers(name)?;
    if let Some((i, v)) = values
        .iter()
        .enumerate()
        .find_map(|(i, v)| v.filter(|v| !v.is_finite()).map(|v| (i, v)))
    {
        return Err(Error::new(
            &table.source,
            format!(
                "row {}, column '{name}': {v} is not a finite number",
                table.row_number(i)
            ),
        ));
    }
    Ok(values)
}

/// Paired (x, y) data from two columns of a table.
#[derive(Debug, Clone, PartialEq)]
pub struct Points {
    /// The table it came from (for error messages).
    pub source: String,
    /// Name of the x column.
    pub x_name: String,
    /// Name of the y column.
    pub y_name: String,
    /// Independent variable.
    pub x: Vec<f64>,
    /// Dependent variable.
    pub y: Vec<f64>,
    /// Rows left out because the x or the y cell is empty.
    pub skipped: usize,
}

impl Points {
    /// The rows of `table` where both columns have a value. An empty cell skips its row (sweeps
    /// leave a quantity empty where it is undefined); a NaN or infinite cell is an error.
    pub fn from_table(table: &Table, x: &str, y: &str) -> Result<Points> {
        let xs = finite_column(table, x)?;
        let ys = finite_column(table, y)?;
        let mut points = Points {
            source: table.source.clone(),
            x_name: x.to_string(),
            y_name: y.to_string(),
            x: Vec::new(),
            y: Vec::new(),
            skipped: 0,
        };
        for (xv, yv) in xs.into_iter().zip(ys) {
            match (xv, yv) {
                (Some(xv), Some(yv)) => {
                    points.x.push(xv);
                    points.y.push(yv);
                }
                _ => points.skipped += 1,
            }
        }
        Ok(points)
    }
}

// ---------------------------------------------------------------------------------------------
// Bounds on fitted constants
// ---------------------------------------------------------------------------------------------

/// A bound on one fitted constant, `--bound NAME=LO..HI`; either side may be open.
#[derive(Debug, Clone, PartialEq)]
pub struct Bound {
    /// The constant (`a`, `b`, `c` of gompertz; `delta`, `epsilon`, `eta` of su2015).
    pub name: String,
    /// The lowest value allowed; `None` for no lower bound.
    pub lo: Option<f64>,
    /// The highest value allowed; `None` for no upper bound.
    pub hi: Option<f64>,
}

impl Bound {
    /// Parses `NAME=LO..HI` (`a=0..1`, `a=..1`, `c=0..`). A side that is not a finite number,
    /// or LO above HI, is an error naming `--bound`.
    pub fn parse(text: &str) -> Result<Bound> {
        let err = |m: String| Error::new("--bound", m);
        let shape = || {
            err(format!(
                "'{text}' is not NAME=LO..HI (e.g. a=0..1; leave a side empty for no bound: a=..1)"
            ))
        };
        let (name, range) = text.split_once('=').ok_or_else(shape)?;
        let (lo, hi) = range.split_once("..").ok_or_else(shape)?;
        let name = name.trim();
        if name.is_empty() {
            return Err(shape());
        }
        let side = |s: &str| -> Result<Option<f64>> {
            let s = s.trim();
            if s.is_empty() {
                return Ok(None);
            }
            match s.parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(Some(v)),
                Ok(_) => Err(err(format!(
                    "'{text}': {s} is not a finite number (leave the side empty for no bound)"
                ))),
                Err(_) => Err(err(format!("'{text}': '{s}' is not a number"))),
            }
        };
        let (lo, hi) = (side(lo)?, side(hi)?);
        if let (Some(l), Some(h)) = (lo, hi)
            && l > h
        {
            return Err(err(format!(
                "'{text}': the lower bound {l} is above the upper bound {h}"
            )));
        }
        Ok(Bound {
            name: name.to_string(),
            lo,
            hi,
        })
    }

    /// The interval, open sides as ±∞.
    pub fn interval(&self) -> (f64, f64) {
        (
            self.lo.unwrap_or(f64::NEG_INFINITY),
            self.hi.unwrap_or(f64::INFINITY),
        )
    }
}

/// Which bound a fitted constant sits on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// At its lower bound.
    Lower,
    /// At its upper bound.
    Upper,
}

/// The bounds of a fit, each constant at most once, all of the model's constants.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Bounds {
    /// In the order given.
    pub bounds: Vec<Bound>,
}

impl Bounds {
    /// Parses the `--bound` texts for `request`: a constant the model does not fit, or one
    /// bounded twice, is an error naming `--bound` and the model's constants.
    pub fn parse(texts: &[String], request: &Request) -> Result<Bounds> {
        let mut bounds: Vec<Bound> = Vec::new();
        let constants = request.constants();
        for text in texts {
            let b = Bound::parse(text)?;
            if !constants.contains(&b.name.as_str()) {
                return Err(Error::new(
                    "--bound",
                    format!(
                        "'{}' is not a constant of {} (it fits {})",
                        b.name,
                        request.model(),
                        constants.join(", ")
                    ),
                ));
            }
            if bounds.iter().any(|o| o.name == b.name) {
                return Err(Error::new(
                    "--bound",
                    format!("'{}' is bounded twice", b.name),
                ));
            }
            bounds.push(b);
        }
        Ok(Bounds { bounds })
    }

    /// The interval of constant `name` (±∞ without a bound).
    pub fn interval(&self, name: &str) -> (f64, f64) {
        self.bounds
            .iter()
            .find(|b| b.name == name)
            .map_or((f64::NEG_INFINITY, f64::INFINITY), Bound::interval)
    }

    /// The report of a fit with these bounds: `None` without bounds; else the bounds and the
    /// constants (`values`, by name) that sit on one.
    fn report(&self, values: &[(&str, f64)]) -> Option<BoundReport> {
        if self.bounds.is_empty() {
            return None;
        }
        let at_bound = values
            .iter()
            .filter_map(|&(name, v)| {
                let b = self.bounds.iter().find(|b| b.name == name)?;
                if b.lo == Some(v) {
                    Some((name.to_string(), Side::Lower))
                } else if b.hi == Some(v) {
                    Some((name.to_string(), Side::Upper))
                } else {
                    None
                }
            })
            .collect();
        Some(BoundReport {
            bounds: self.bounds.clone(),
            at_bound,
        })
    }
}

/// The bounds a fit honoured and the constants that ended on one, written after the fit's
/// keys as `"bounds": {"a": [0.0, 1.0]}` (an open side `null`) and `"at_bound": {"a": "upper"}`.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundReport {
    /// The bounds given.
    pub bounds: Vec<Bound>,
    /// The constants on a bound, in the model's order.
    pub at_bound: Vec<(String, Side)>,
}

impl Serialize for BoundReport {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut bounds = serde_json::Map::new();
        for b in &self.bounds {
            bounds.insert(b.name.clone(), serde_json::json!([b.lo, b.hi]));
        }
        let mut at = serde_json::Map::new();
        for (name, side) in &self.at_bound {
            at.insert(name.clone(), serde_json::json!(side));
        }
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("bounds", &bounds)?;
        map.serialize_entry("at_bound", &at)?;
        map.end()
    }
}

// ---------------------------------------------------------------------------------------------
// Small linear least squares
// ---------------------------------------------------------------------------------------------

/// Solves the 3×3 system `m · v = rhs` by Gaussian elimination with partial pivoting; `None`
/// when `m` is singular (a pivot vanishes relative to the largest entry) or the result is not
/// finite.
pub fn solve3(m: [[f64; 3]; 3], rhs: [f64; 3]) -> Option<[f64; 3]> {
    let mut a = [[0.0; 4]; 3];
    for i in 0..3 {
        a[i][..3].copy_from_slice(&m[i]);
        a[i][3] = rhs[i];
    }
    let scale = m.iter().flatten().fold(0.0f64, |s, v| s.max(v.abs()));
    if scale == 0.0 || !scale.is_finite() {
        return None;
    }
    for col in 0..3 {
        let pivot = (col..3).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() <= scale * 1e-14 {
            return None;
        }
        a.swap(col, pivot);
        let pivot_row = a[col];
        for row in a.iter_mut().skip(col + 1) {
            let f = row[col] / pivot_row[col];
            for (r, p) in row.iter_mut().zip(pivot_row).skip(col) {
                *r -= f * p;
            }
        }
    }
    let mut v = [0.0; 3];
    for i in (0..3).rev() {
        let tail: f64 = (i + 1..3).map(|k| a[i][k] * v[k]).sum();
        v[i] = (a[i][3] - tail) / a[i][i];
    }
    v.iter().all(|x| x.is_finite()).then_some(v)
}

/// Solves the 2×2 system `m · v = rhs` by Cramer's rule; `None` when the determinant vanishes
/// relative to the products it is made of (the columns are proportional).
pub fn solve2(m: [[f64; 2]; 2], rhs: [f64; 2]) -> Option<[f64; 2]> {
    let det = m[0][0] * m[1][1] - m[0][1] * m[1][0];
    let size = (m[0][0] * m[1][1]).abs().max((m[0][1] * m[1][0]).abs());
    if det.is_nan() || det.abs() <= size * 1e-12 {
        return None;
    }
    let v = [
        (rhs[0] * m[1][1] - m[0][1] * rhs[1]) / det,
        (m[0][0] * rhs[1] - m[1][0] * rhs[0]) / det,
    ];
    v.iter().all(|x| x.is_finite()).then_some(v)
}

/// Ordinary least squares of y = intercept + slope·x; `None` with fewer than two distinct x.
/// Returns (intercept, slope). Centred sums, so large offsets in x do not cancel digits.
pub fn line_fit(x: &[f64], y: &[f64]) -> Option<(f64, f64)> {
    let n = x.len().min(y.len());
    if n < 2 {
        return None;
    }
    let mx = x[..n].iter().sum::<f64>() / n as f64;
    let my = y[..n].iter().sum::<f64>() / n as f64;
    let sxx: f64 = x[..n].iter().map(|v| (v - mx) * (v - mx)).sum();
    let sxy: f64 = x[..n]
        .iter()
        .zip(&y[..n])
        .map(|(a, b)| (a - mx) * (b - my))
        .sum();
    if sxx.is_nan() || sxx <= 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    (slope.is_finite() && intercept.is_finite()).then_some((intercept, slope))
}

/// Least squares of y = k·x through the origin: k = Σxy / Σx²; `None` when every x is 0.
pub fn through_origin(x: &[f64], y: &[f64]) -> Option<f64> {
    let sxx: f64 = x.iter().map(|v| v * v).sum();
    let sxy: f64 = x.iter().zip(y).map(|(a, b)| a * b).sum();
    let k = sxy / sxx;
    (sxx > 0.0 && k.is_finite()).then_some(k)
}

/// Σ(y − ȳ)², the total sum of squares about the mean.
fn sst(y: &[f64]) -> f64 {
    if y.is_empty() {
        return 0.0;
    }
    let m = y.iter().sum::<f64>() / y.len() as f64;
    y.iter().map(|v| (v - m) * (v - m)).sum()
}

// ---------------------------------------------------------------------------------------------
// Gompertz
// ---------------------------------------------------------------------------------------------

/// A fitted Gompertz curve y = a·exp(b·exp(c·x)) and how well it fits.
#[derive(Debug, Clone, PartialEq)]
pub struct GompertzFit {
    /// The x column.
    pub x: String,
    /// The y column.
    pub y: String,
    /// The curve (unshifted: `o0` is 0).
    pub curve: Gompertz,
    /// Coefficient of determination 1 − SSE/SST.
    pub r2: f64,
    /// Root mean squared residual sqrt(SSE/n).
    pub rmse: f64,
    /// Points fitted.
    pub n: usize,
    /// Rows skipped for an empty cell.
    pub skipped: usize,
    /// The bounds honoured and the constants on one; `None` without `--bound`.
    pub bounded: Option<BoundReport>,
}

/// The keys of a Gompertz fit in JSON, in order: `x`, `y`, `a`, `b`, `c`, `r2`, `rmse`, `n`,
/// `skipped` (after `"model":"gompertz"`, see [`Fitted`]), then `bounds` and `at_bound` when
/// bounded ([`BoundReport`]); `plot --fit` reads them.
#[derive(Serialize)]
struct GompertzJson<'a> {
    x: &'a str,
    y: &'a str,
    a: f64,
    b: f64,
    c: f64,
    r2: f64,
    rmse: f64,
    n: usize,
    skipped: usize,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    bounded: &'a Option<BoundReport>,
}

impl Serialize for GompertzFit {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        GompertzJson {
            x: &self.x,
            y: &self.y,
            a: self.curve.a,
            b: self.curve.b,
            c: self.curve.c,
            r2: self.r2,
            rmse: self.rmse,
            n: self.n,
            skipped: self.skipped,
            bounded: &self.bounded,
        }
        .serialize(serializer)
    }
}

/// The sum of squared residuals of the curve `p` = [a, b, c] on the data, evaluated unclamped
/// ([`Gompertz::eval_unclamped`]); ∞ when any value is not finite.
fn gompertz_sse(p: &[f64; 3], x: &[f64], y: &[f64]) -> f64 {
    let curve = Gompertz::from_params(*p);
    let s: f64 = x
        .iter()
        .zip(y)
        .map(|(&xi, &yi)| (yi - curve.eval_unclamped(xi)).powi(2))
        .sum();
    if s.is_finite() { s } else { f64::INFINITY }
}

/// Margins, as fractions of the y range, between the extreme y and a candidate amplitude.
/// One close start suits data that nearly reach their asymptote; the wider ones suit data that
/// stop well short of it (a hit rate still falling at the largest x).
pub const START_MARGINS: [f64; 3] = [0.01, 0.1, 0.5];

/// The starting parameters for Levenberg–Marquardt: for each candidate amplitude a with the sign
/// σ of b it implies, the ordinary least squares line ln(σ·ln(y/a)) = ln(σ·b) + c·x over the
/// points where the left side is defined. The candidates, for each margin d = m·(max y − min y)
/// of [`START_MARGINS`]:
/// - a = max y + d when max y > 0: every positive y has 0 < y/a < 1, so b < 0 (σ = −1), the
///   form of a hit rate falling towards 0 and of a miss fraction rising towards a;
/// - a = min y − min(d, m·min y) when min y > 0 (below every y, yet positive): y/a > 1, b > 0;
/// - their mirrors for negative y: a = min y − d (σ = −1) when min y < 0, and
///   a = max y + min(d, m·|max y|) when max y < 0 (σ = +1).
///
/// Returns [a, b, c] per candidate whose line is defined (two distinct x at least), in the order
/// above; the order only breaks exact ties in the final SSE.
pub fn gompertz_starts(x: &[f64], y: &[f64]) -> Vec<[f64; 3]> {
    let ymax = y.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let ymin = y.iter().copied().fold(f64::INFINITY, f64::min);
    let range = ymax - ymin;
    let mut candidates: Vec<(f64, f64)> = Vec::new();
    for m in START_MARGINS {
        let d = m * range;
        if ymax > 0.0 {
            candidates.push((ymax + d, -1.0));
        }
        if ymin > 0.0 {
            candidates.push((ymin - d.min(m * ymin), 1.0));
        }
        if ymin < 0.0 {
            candidates.push((ymin - d, -1.0));
        }
        if ymax < 0.0 {
            candidates.push((ymax + d.min(-m * ymax), 1.0));
        }
    }
    candidates
        .into_iter()
        .filter_map(|(a, sign)| linearised_start(x, y, a, sign))
        .collect()
}

/// The start for amplitude `a` and sign `sign` (±1) of b: the least squares line through
/// (x, ln(sign·ln(y/a))) over the points where that is defined, giving b = sign·exp(intercept)
/// and c = slope. `None` when fewer than two distinct x remain or the result is not finite.
pub fn linearised_start(x: &[f64], y: &[f64], a: f64, sign: f64) -> Option<[f64; 3]> {
    let (xs, ws): (Vec<f64>, Vec<f64>) = x
        .iter()
        .zip(y)
        .filter_map(|(&xi, &yi)| {
            let inner = sign * (yi / a).ln();
            (inner > 0.0 && inner.is_finite()).then(|| (xi, inner.ln()))
        })
        .unzip();
    let (intercept, slope) = line_fit(&xs, &ws)?;
    let p = [a, sign * intercept.exp(), slope];
    p.iter().all(|v| v.is_finite()).then_some(p)
}

/// Upper bound on Levenberg–Marquardt iterations (accepted or not) from one start.
const MAX_ITERATIONS: usize = 2000;
/// Converged when every column of the Jacobian is this close to orthogonal to the residual (the
/// cosine; MINPACK's gtol): the gradient of the SSE vanishes, scale-free.
const GRADIENT_TOLERANCE: f64 = 1e-10;
/// When no step reduces the SSE any more (the damping grew past [`MAX_DAMPING`]), rounding has
/// the last word; the point still counts as a minimum if the cosine is below this.
const STALLED_GRADIENT_TOLERANCE: f64 = 1e-6;
/// Damping beyond which a step is a vanishing gradient step: nothing left to gain.
const MAX_DAMPING: f64 = 1e16;
/// A root mean squared residual below this fraction of max |y| is an exact fit (noise-free data);
/// the cosine test is meaningless there, the residual being rounding noise.
const EXACT_FIT: f64 = 1e-13;

/// JᵀJ and Jᵀr at `p` = [a, b, c], with J the analytic Jacobian of the curve
/// ([`Gompertz::value_and_gradient`]) and r the residual.
fn normal_equations(p: &[f64; 3], x: &[f64], y: &[f64]) -> ([[f64; 3]; 3], [f64; 3]) {
    let curve = Gompertz::from_params(*p);
    let mut jtj = [[0.0; 3]; 3];
    let mut jtr = [0.0; 3];
    for (&xi, &yi) in x.iter().zip(y) {
        let (f, j) = curve.value_and_gradient(xi);
        let r = yi - f;
        for k in 0..3 {
            jtr[k] += j[k] * r;
            for l in 0..3 {
                jtj[k][l] += j[k] * j[l];
            }
        }
    }
    (jtj, jtr)
}

/// The largest |cos| between a Jacobian column of a `free` parameter and the residual vector.
fn gradient_cosine(jtj: &[[f64; 3]; 3], jtr: &[f64; 3], sse: f64, free: &[bool; 3]) -> f64 {
    (0..3)
        .filter(|&k| free[k] && jtj[k][k] > 0.0)
        .map(|k| jtr[k].abs() / (jtj[k][k].sqrt() * sse.sqrt()))
        .fold(0.0, f64::max)
}

/// The Levenberg–Marquardt step: (JᵀJ + λ·diag(JᵀJ)) δ = Jᵀr, solved in the scaled variables
/// u = D^½ δ (D = diag JᵀJ) so the three parameters' very different magnitudes do not spoil the
/// elimination. A parameter that is not `free` (held on its bound) does not move: its row and
/// column become the identity's.
fn damped_step(
    jtj: &[[f64; 3]; 3],
    jtr: &[f64; 3],
    lambda: f64,
    free: &[bool; 3],
) -> Option<[f64; 3]> {
    // A zero column (e.g. ∂f/∂c when b = 0) gets unit scale: its row becomes λ·u = 0.
    let s: [f64; 3] = std::array::from_fn(|k| {
        if jtj[k][k] > 0.0 {
            1.0 / jtj[k][k].sqrt()
        } else {
            1.0
        }
    });
    let m: [[f64; 3]; 3] = std::array::from_fn(|i| {
        std::array::from_fn(|j| {
            if !free[i] || !free[j] {
                if i == j { 1.0 } else { 0.0 }
            } else {
                jtj[i][j] * s[i] * s[j] + if i == j { lambda } else { 0.0 }
            }
        })
    });
    let rhs: [f64; 3] = std::array::from_fn(|k| if free[k] { jtr[k] * s[k] } else { 0.0 });
    let u = solve3(m, rhs)?;
    Some(std::array::from_fn(|k| u[k] * s[k]))
}

/// No bounds on [a, b, c].
const UNBOUNDED: [(f64, f64); 3] = [(f64::NEG_INFINITY, f64::INFINITY); 3];

/// Refines `start` by Levenberg–Marquardt. Returns the parameters and their SSE, or why it did
/// not converge.
pub fn levenberg_marquardt(
    x: &[f64],
    y: &[f64],
    start: [f64; 3],
) -> std::result::Result<([f64; 3], f64), String> {
    levenberg_marquardt_bounded(x, y, start, &UNBOUNDED)
}

/// [`levenberg_marquardt`] with [a, b, c] kept in the intervals `bounds` (projected: every
/// trial point is clamped into the box, and a parameter on its bound whose gradient points out of
/// the box is held there for the step and left out of the convergence test). Without bounds it
/// is exactly the unbounded method.
pub fn levenberg_marquardt_bounded(
    x: &[f64],
    y: &[f64],
    start: [f64; 3],
    bounds: &[(f64, f64); 3],
) -> std::result::Result<([f64; 3], f64), String> {
    let clamp =
        |p: [f64; 3]| -> [f64; 3] { std::array::from_fn(|k| p[k].clamp(bounds[k].0, bounds[k].1)) };
    let mut p = clamp(start);
    let mut sse = gompertz_sse(&p, x, y);
    if !sse.is_finite() {
        return Err("the curve is not finite at the start".into());
    }
    let scale = y.iter().fold(0.0f64, |s, v| s.max(v.abs()));
    let exact = (EXACT_FIT * scale).powi(2) * x.len() as f64;
    let mut lambda = 1e-3;
    for _ in 0..MAX_ITERATIONS {
        if sse <= exact {
            return Ok((p, sse));
        }
        let (jtj, jtr) = normal_equations(&p, x, y);
        // Jᵀr is the descent direction of the SSE: held where it leaves the box.
        let free: [bool; 3] = std::array::from_fn(|k| {
            !((p[k] <= bounds[k].0 && jtr[k] < 0.0) || (p[k] >= bounds[k].1 && jtr[k] > 0.0))
        });
        let cosine = gradient_cosine(&jtj, &jtr, sse, &free);
        if cosine <= GRADIENT_TOLERANCE {
            return Ok((p, sse));
        }
        // Raise the damping until a step lowers the SSE (NaN and ∞ never do).
        loop {
            if let Some(d) = damped_step(&jtj, &jtr, lambda, &free) {
                let q = clamp([p[0] + d[0], p[1] + d[1], p[2] + d[2]]);
                let s = gompertz_sse(&q, x, y);
                if s < sse {
                    p = q;
                    sse = s;
                    lambda = (lambda / 10.0).max(1e-12);
                    break;
                }
            }
            lambda *= 10.0;
            if lambda > MAX_DAMPING {
                return if cosine <= STALLED_GRADIENT_TOLERANCE {
                    Ok((p, sse))
                } else {
                    Err(format!(
                        "no step reduces the squared error at a = {}, b = {}, c = {}, where the gradient does not vanish",
                        p[0], p[1], p[2]
                    ))
                };
            }
        }
    }
    Err(format!(
        "{MAX_ITERATIONS} iterations without convergence (last a = {}, b = {}, c = {})",
        p[0], p[1], p[2]
    ))
}

/// Fits y = a·exp(b·exp(c·x)) to `points`: every start of [`gompertz_starts`] refined by
/// [`levenberg_marquardt`], keeping the converged one with the smallest SSE.
pub fn fit_gompertz(points: &Points) -> Result<GompertzFit> {
    fit_gompertz_bounded(points, &Bounds::default())
}

/// [`fit_gompertz`] with a, b and c within `bounds`: each start is moved into the box (a start
/// whose amplitude moves gets b and c from the linearisation at the new amplitude) and refined
/// by [`levenberg_marquardt_bounded`]. The result reports the constants that end on a bound.
pub fn fit_gompertz_bounded(points: &Points, bounds: &Bounds) -> Result<GompertzFit> {
    let src = points.source.as_str();
    let (x, y) = (&points.x, &points.y);
    let n = x.len();
    let columns = format!("'{}' and '{}'", points.x_name, points.y_name);
    if n < 3 {
        return Err(Error::new(
            src,
            format!(
                "gompertz has 3 parameters but only {n} rows have both {columns} ({} skipped for an empty cell)",
                points.skipped
            ),
        ));
    }
    for (name, v) in [(&points.x_name, x), (&points.y_name, y)] {
        if v.iter().all(|&e| e == v[0]) {
            return Err(Error::new(
                src,
                format!("no variation: column '{name}' is {} on all {n} rows", v[0]),
            ));
        }
    }
    let boxed = [
        bounds.interval("a"),
        bounds.interval("b"),
        bounds.interval("c"),
    ];
    let starts: Vec<[f64; 3]> = gompertz_starts(x, y)
        .into_iter()
        .map(|s| {
            let a = s[0].clamp(boxed[0].0, boxed[0].1);
            if a == s[0] {
                return s;
            }
            linearised_start(x, y, a, s[1].signum()).unwrap_or([a, s[1], s[2]])
        })
        .collect();
    let mut best: Option<([f64; 3], f64)> = None;
    let mut why = String::from("no start: ln(±ln(y/a)) is defined at fewer than two distinct x");
    for start in starts {
        match levenberg_marquardt_bounded(x, y, start, &boxed) {
            Ok((p, s)) => {
                if best.is_none_or(|(_, b)| s < b) {
                    best = Some((p, s));
                }
            }
            Err(e) => why = e,
        }
    }
    let no_convergence = |why: &str| {
        Error::new(
            src,
            format!("gompertz fit of {columns} did not converge: {why}"),
        )
    };
    let (p, sse) = best.ok_or_else(|| no_convergence(&why))?;
    let r2 = 1.0 - sse / sst(y);
    let rmse = (sse / n as f64).sqrt();
    if !(p.iter().all(|v| v.is_finite()) && r2.is_finite() && rmse.is_finite()) {
        return Err(no_convergence("the parameters or r2 are not finite"));
    }
    Ok(GompertzFit {
        x: points.x_name.clone(),
        y: points.y_name.clone(),
        curve: Gompertz::from_params(p),
        r2,
        rmse,
        n,
        skipped: points.skipped,
        bounded: bounds.report(&[("a", p[0]), ("b", p[1]), ("c", p[2])]),
    })
}

// ---------------------------------------------------------------------------------------------
// Su et al. 2015
// ---------------------------------------------------------------------------------------------

/// The rows of a sweep that su2015 can use, split by equation.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SuRows {
    /// The table it came from (for error messages).
    pub source: String,
    /// (SMX miss ratio, capacity term) of the rows where formula (8) applies (scheduling term 0).
    pub formula8: Vec<(f64, f64)>,
    /// (SMX miss ratio, capacity term, scheduling term) of the rows under formula (17).
    pub formula17: Vec<(f64, f64, f64)>,
    /// (L2 miss ratio, L2 capacity term) of the rows with L2 data, formula (15).
    pub l2: Vec<(f64, f64)>,
    /// Rows that feed neither level (an empty cell in each).
    pub skipped: usize,
}

impl SuRows {
    /// Splits `table` by equation: a row feeds the SMX level when its three SMX cells are all
    /// filled, the L2 level when its two L2 cells are; a row feeding neither counts as skipped.
    /// NaN or infinite cells are errors.
    pub fn from_table(table: &Table) -> Result<SuRows> {
        let [r, cap, sched, r2, cap2] = SU_COLUMNS.map(|c| finite_column(table, c));
        let (r, cap, sched, r2, cap2) = (r?, cap?, sched?, r2?, cap2?);
        let mut rows = SuRows {
            source: table.source.clone(),
            ..SuRows::default()
        };
        for i in 0..table.rows.len() {
            let mut used = false;
            if let (Some(r), Some(c), Some(s)) = (r[i], cap[i], sched[i]) {
                if s == 0.0 {
                    rows.formula8.push((r, c));
                } else {
                    rows.formula17.push((r, c, s));
                }
                used = true;
            }
            if let (Some(r), Some(c)) = (r2[i], cap2[i]) {
                rows.l2.push((r, c));
                used = true;
            }
            if !used {
                rows.skipped += 1;
            }
        }
        Ok(rows)
    }
}

/// Su et al.'s fitted constants and how well they fit. In JSON (after `"model":"su2015"`, see
/// [`Fitted`]) the fields in this order, under their names.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Su2015Fit {
    /// δ of (8) and (17).
    pub delta: f64,
    /// ε of (15).
    pub epsilon: f64,
    /// η of (17); `None` without formula-(17) rows.
    pub eta: Option<f64>,
    /// Coefficient of determination over both levels: 1 − (SSE_SMX + SSE_L2)/(SST_SMX + SST_L2),
    /// each SST about its own level's mean.
    pub r2: f64,
    /// R² of (8) on its rows; `None` without rows or without variation in the ratio.
    pub r2_delta: Option<f64>,
    /// R² of (15).
    pub r2_epsilon: Option<f64>,
    /// R² of (17) on its rows (δ and η together).
    pub r2_eta: Option<f64>,
    /// Formula-(8) rows.
    pub n_delta: usize,
    /// L2 rows.
    pub n_epsilon: usize,
    /// Formula-(17) rows.
    pub n_eta: usize,
    /// Rows that fed neither level.
    pub skipped: usize,
    /// The bounds honoured and the constants on one (`bounds`, `at_bound`); `None` without
    /// `--bound`.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub bounded: Option<BoundReport>,
}

/// 1 − SSE/SST, or `None` when SST is 0 (no variation, or no rows).
fn r_squared(sse: f64, sst: f64) -> Option<f64> {
    (sst > 0.0).then(|| 1.0 - sse / sst)
}

/// Fits δ, ε, η (see the module doc and docs/fitting.md):
/// - δ through the origin on the formula-(8) rows: ratio = δ·capacity;
/// - ε through the origin on the L2 rows: ratio = ε·capacity;
/// - η on the formula-(17) rows with δ fixed: ratio − δ·capacity = η·scheduling; without
///   formula-(8) rows, δ and η together on the formula-(17) rows (two-parameter least squares).
pub fn fit_su2015(rows: &SuRows) -> Result<Su2015Fit> {
    fit_su2015_bounded(rows, &Bounds::default())
}

/// The minimum of the convex quadratic q(d, e) = [d e]·m·[d e]ᵀ − 2·(d·v₀ + e·v₁) over the box
/// `db` × `eb`, given its unconstrained minimum `free`: that point if inside, else the best of
/// the edges' minima (one variable on a finite bound, the other minimising and clamped).
fn box_minimum(
    m: [[f64; 2]; 2],
    v: [f64; 2],
    free: [f64; 2],
    db: (f64, f64),
    eb: (f64, f64),
) -> [f64; 2] {
    let inside = |p: [f64; 2]| p[0] >= db.0 && p[0] <= db.1 && p[1] >= eb.0 && p[1] <= eb.1;
    if inside(free) {
        return free;
    }
    let q = |p: [f64; 2]| {
        m[0][0] * p[0] * p[0] + 2.0 * m[0][1] * p[0] * p[1] + m[1][1] * p[1] * p[1]
            - 2.0 * (p[0] * v[0] + p[1] * v[1])
    };
    let mut candidates = Vec::new();
    for d in [db.0, db.1].into_iter().filter(|d| d.is_finite()) {
        let e = if m[1][1] > 0.0 {
            (v[1] - m[1][0] * d) / m[1][1]
        } else {
            0.0
        };
        candidates.push([d, e.clamp(eb.0, eb.1)]);
    }
    for e in [eb.0, eb.1].into_iter().filter(|e| e.is_finite()) {
        let d = if m[0][0] > 0.0 {
            (v[0] - m[0][1] * e) / m[0][0]
        } else {
            0.0
        };
        candidates.push([d.clamp(db.0, db.1), e]);
    }
    candidates
        .into_iter()
        .filter(|p| inside(*p))
        .min_by(|a, b| q(*a).total_cmp(&q(*b)))
        .unwrap_or(free)
}

/// [`fit_su2015`] with δ, ε, η within `bounds`: each one-constant least squares is clamped to
/// its interval (exact for a one-dimensional quadratic), η after δ is; δ and η fitted together
/// take the minimum of their quadratic over the box. The result reports the constants that end
/// on a bound.
pub fn fit_su2015_bounded(rows: &SuRows, bounds: &Bounds) -> Result<Su2015Fit> {
    let (db, eb, hb) = (
        bounds.interval("delta"),
        bounds.interval("epsilon"),
        bounds.interval("eta"),
    );
    let src = rows.source.as_str();
    let too_few = |what: &str| Error::new(src, what.to_string());
    let (n8, n17, nl2) = (rows.formula8.len(), rows.formula17.len(), rows.l2.len());
    if n8 == 0 && n17 < 2 {
        return Err(too_few(&format!(
            "su2015 needs a row with {SMX_SCHEDULING} = 0 (formula 8) for delta, or two formula-17 rows to fit delta and eta together; found {n8} and {n17} ({} rows fed neither level)",
            rows.skipped
        )));
    }
    if nl2 == 0 {
        return Err(too_few(&format!(
            "su2015 needs at least 1 row with {L2_RATIO} and {L2_CAPACITY} for epsilon; found 0 ({} rows fed neither level)",
            rows.skipped
        )));
    }
    let no_variation = |what: String| Error::new(src, format!("no variation: {what}"));

    // δ and η.
    let (delta, eta) = if n8 > 0 {
        let (r, c): (Vec<f64>, Vec<f64>) = rows.formula8.iter().copied().unzip();
        let delta = through_origin(&c, &r)
            .ok_or_else(|| {
                no_variation(format!(
                    "{SMX_CAPACITY} is 0 on all {n8} formula-8 rows, delta is undetermined"
                ))
            })?
            .clamp(db.0, db.1);
        let eta = (n17 > 0).then(|| {
            let (t, s): (Vec<f64>, Vec<f64>) = rows
                .formula17
                .iter()
                .map(|&(r, c, s)| (r - delta * c, s))
                .unzip();
            // The scheduling term is nonzero on every formula-17 row, so Σs² > 0; only an
            // overflow gives None, which the finiteness check below reports.
            through_origin(&s, &t).unwrap_or(f64::NAN).clamp(hb.0, hb.1)
        });
        (delta, eta)
    } else {
        let (mut m, mut v) = ([[0.0; 2]; 2], [0.0; 2]);
        for &(r, c, s) in &rows.formula17 {
            m[0][0] += c * c;
            m[0][1] += c * s;
            m[1][0] += s * c;
            m[1][1] += s * s;
            v[0] += c * r;
            v[1] += s * r;
        }
        let free = solve2(m, v).ok_or_else(|| {
            no_variation(format!(
                "without formula-8 rows delta and eta come from the {n17} formula-17 rows together, but there {SMX_CAPACITY} and {SMX_SCHEDULING} are proportional"
            ))
        })?;
        let [d, e] = box_minimum(m, v, free, db, hb);
        (d, Some(e))
    };

    // ε.
    let (r2s, c2s): (Vec<f64>, Vec<f64>) = rows.l2.iter().copied().unzip();
    let epsilon = through_origin(&c2s, &r2s)
        .ok_or_else(|| {
            no_variation(format!(
                "{L2_CAPACITY} is 0 on all {nl2} L2 rows, epsilon is undetermined"
            ))
        })?
        .clamp(eb.0, eb.1);

    // Goodness of fit per equation and per level.
    let sse8: f64 = rows
        .formula8
        .iter()
        .map(|&(r, c)| (r - delta * c).powi(2))
        .sum();
    let eta_value = eta.unwrap_or(0.0);
    let sse17: f64 = rows
        .formula17
        .iter()
        .map(|&(r, c, s)| (r - delta * c - eta_value * s).powi(2))
        .sum();
    let sse_l2: f64 = rows
        .l2
        .iter()
        .map(|&(r, c)| (r - epsilon * c).powi(2))
        .sum();
    let r8: Vec<f64> = rows.formula8.iter().map(|p| p.0).collect();
    let r17: Vec<f64> = rows.formula17.iter().map(|p| p.0).collect();
    let smx: Vec<f64> = r8.iter().chain(&r17).copied().collect();
    let sst_total = sst(&smx) + sst(&r2s);
    if sst_total.is_nan() || sst_total <= 0.0 {
        return Err(no_variation(format!(
            "{SMX_RATIO} and {L2_RATIO} are each constant, r2 is undefined"
        )));
    }
    let r2 = 1.0 - (sse8 + sse17 + sse_l2) / sst_total;
    let fit = Su2015Fit {
        delta,
        epsilon,
        eta,
        r2,
        r2_delta: r_squared(sse8, sst(&r8)),
        r2_epsilon: r_squared(sse_l2, sst(&r2s)),
        r2_eta: r_squared(sse17, sst(&r17)),
        n_delta: n8,
        n_epsilon: nl2,
        n_eta: n17,
        skipped: rows.skipped,
        bounded: bounds.report(&{
            let mut values = vec![("delta", delta), ("epsilon", epsilon)];
            values.extend(eta.map(|e| ("eta", e)));
            values
        }),
    };
    let finite = [delta, epsilon, eta_value, r2]
        .iter()
        .all(|v| v.is_finite());
    if !finite {
        return Err(Error::new(
            src,
            "su2015 fit did not converge: delta, epsilon, eta or r2 is not finite (values too large?)",
        ));
    }
    Ok(fit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_columns_are_named_so() {
        assert!(is_rate_column(crate::metrics::L2_REDUNDANT_HIT_RATE));
        assert!(is_rate_column(crate::metrics::SU_L2_MISS_RATIO));
        assert!(!is_rate_column("dram__sectors_read.sum_bytes_per_lup"));
        assert!(!is_rate_column("generated"));
    }

    #[test]
    fn a_rate_ceiling_above_one_is_reported_with_its_bound() {
        // Exact points of 1.56·exp(−2·exp(−x/2)) for x = 0 … 3: every y ≤ 1, the ceiling not.
        let x: Vec<f64> = (0..=6).map(|i| i as f64 * 0.5).collect();
        let y: Vec<f64> = x
            .iter()
            .map(|x| 1.56 * (-2.0 * (-0.5 * x).exp()).exp())
            .collect();
        assert!(y.iter().all(|&y| (0.0..=1.0).contains(&y)), "{y:?}");
        let points = |y_name: &str| Points {
            source: "t.csv".into(),
            x_name: "x".into(),
            y_name: y_name.into(),
            x: x.clone(),
            y: y.clone(),
            skipped: 0,
        };
        let fit = Fitted::Gompertz(fit_gompertz(&points("l2_redundant_hit_rate")).unwrap());
        let out = fit.out_of_range();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].name, "a");
        assert!((out[0].value - 1.56).abs() < 1e-6, "{}", out[0].value);
        assert_eq!(out[0].bound(), "--bound a=0..1");
        assert!(fit.negative_r2().is_empty());
        // The same curve of a quantity that is no rate has no ceiling to keep.
        let bytes = Fitted::Gompertz(fit_gompertz(&points("bytes")).unwrap());
        assert!(bytes.out_of_range().is_empty());
    }

    #[test]
    fn su2015_constants_outside_the_paper_and_negative_r2_are_reported() {
        // SMX: ratios 0.3, 0.2, 0.1 at capacity 1, 2, 3: δ = Σrc/Σc² = 1/14, SSE = 0.14 − 2/14 +
        // 14/196 = 0.0685714, SST = 0.02, r² = 1 − 24/7 = −17/7. L2: ratio −0.2·capacity
        // exactly: ε = −0.2, below the paper's [0, 1].
        let rows = SuRows {
            source: "t.csv".into(),
            formula8: vec![(0.3, 1.0), (0.2, 2.0), (0.1, 3.0)],
            formula17: vec![],
            l2: vec![(-0.2, 1.0), (-0.4, 2.0), (-0.6, 3.0)],
            skipped: 0,
        };
        let fit = Fitted::Su2015(fit_su2015(&rows).unwrap());
        let out = fit.out_of_range();
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(
            (out[0].name, out[0].bound().as_str()),
            ("epsilon", "--bound epsilon=0..1")
        );
        assert!((out[0].value + 0.2).abs() < 1e-12);
        let negative = fit.negative_r2();
        assert_eq!(negative.len(), 1, "{negative:?}");
        assert_eq!(negative[0].0, "r2_delta");
        assert!(
            (negative[0].1 + 17.0 / 7.0).abs() < 1e-9,
            "{}",
            negative[0].1
        );
        // Bounded as suggested, ε sits on 0 and nothing is outside any more.
        let bounds = Bounds::parse(&["epsilon=0..1".into()], &Request::Su2015).unwrap();
        let bounded = Fitted::Su2015(fit_su2015_bounded(&rows, &bounds).unwrap());
        assert!(bounded.out_of_range().is_empty());
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn gompertz_fits_points_where_exp_c_x_overflows() {
        // At x = 1500 and 2000, exp(0.5 x) overflows and g = exp(b·E) underflows to 0: the
        // Jacobian must be 0 there, not NaN (0·∞), or no step is ever accepted.
        let truth = [0.9, -0.3, 0.5];
        let x: Vec<f64> = (0..=10).map(f64::from).chain([1500.0, 2000.0]).collect();
        let y: Vec<f64> = x
            .iter()
            .map(|&v| Gompertz::from_params(truth).eval_unclamped(v))
            .collect();
        let points = Points {
            source: "t.csv".into(),
            x_name: "x".into(),
            y_name: "y".into(),
            x,
            y,
            skipped: 0,
        };
        let f = fit_gompertz(&points).unwrap();
        assert!(
            close(f.curve.a, 0.9, 1e-6)
                && close(f.curve.b, -0.3, 1e-6)
                && close(f.curve.c, 0.5, 1e-6),
            "{f:?}"
        );
    }

    #[test]
    fn solve3_by_hand_with_pivoting_and_singularity() {
        // Solution [1, 2, 3]: rhs = m · [1, 2, 3].
        let v = solve3(
            [[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]],
            [4.0, 10.0, 14.0],
        )
        .unwrap();
        assert!(
            v.iter()
                .zip([1.0, 2.0, 3.0])
                .all(|(a, b)| close(*a, b, 1e-14)),
            "{v:?}"
        );
        // A zero first pivot needs a row swap: x1 = 5, x0 = 7, 2 x2 = 8.
        let v = solve3(
            [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 2.0]],
            [5.0, 7.0, 8.0],
        )
        .unwrap();
        assert_eq!(v, [7.0, 5.0, 4.0]);
        // Row 2 is twice row 1.
        assert!(
            solve3(
                [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 0.0, 1.0]],
                [1.0, 2.0, 3.0]
            )
            .is_none()
        );
        assert!(solve3([[0.0; 3]; 3], [0.0; 3]).is_none());
    }

    #[test]
    fn box_minimum_by_hand() {
        // q = d² + e² − 2(2d + 2e): minimum (2, 2).
        let (m, v) = ([[1.0, 0.0], [0.0, 1.0]], [2.0, 2.0]);
        let open = (f64::NEG_INFINITY, f64::INFINITY);
        assert_eq!(box_minimum(m, v, [2.0, 2.0], open, open), [2.0, 2.0]);
        // e ≤ 1: on the edge, d still 2.
        assert_eq!(box_minimum(m, v, [2.0, 2.0], open, (0.0, 1.0)), [2.0, 1.0]);
        // Both capped: the corner.
        assert_eq!(
            box_minimum(m, v, [2.0, 2.0], (0.0, 1.5), (0.0, 1.0)),
            [1.5, 1.0]
        );
        // Coupled: q = d² + de + e² − 2(d + e)·1.5 → free (1, 1); with e ≥ 2 the edge minimum
        // is d = (1.5 − 0.5·2) / 1 = 0.5.
        let m = [[1.0, 0.5], [0.5, 1.0]];
        assert_eq!(
            box_minimum(m, [1.5, 1.5], [1.0, 1.0], open, (2.0, 3.0)),
            [0.5, 2.0]
        );
        assert_eq!(
            Bound::parse(" a = ..1 ").unwrap().interval(),
            (f64::NEG_INFINITY, 1.0)
        );
    }

    #[test]
    fn solve2_by_hand() {
        // Solution [1, -1].
        assert_eq!(
            solve2([[2.0, 1.0], [1.0, 3.0]], [1.0, -2.0]),
            Some([1.0, -1.0])
        );
        assert!(solve2([[1.0, 2.0], [2.0, 4.0]], [1.0, 2.0]).is_none());
    }

    #[test]
    fn line_and_origin_fits_by_hand() {
        assert_eq!(
            line_fit(&[0.0, 1.0, 2.0, 3.0], &[1.0, 3.0, 5.0, 7.0]),
            Some((1.0, 2.0))
        );
        // x̄ = 1, ȳ = 1, Sxx = 2, Sxy = (−1)(−1) + 0 + (1)(0) = 1: slope 1/2, intercept 1/2.
        assert_eq!(
            line_fit(&[0.0, 1.0, 2.0], &[0.0, 2.0, 1.0]),
            Some((0.5, 0.5))
        );
        assert_eq!(line_fit(&[2.0, 2.0], &[0.0, 1.0]), None);
        assert_eq!(line_fit(&[2.0], &[1.0]), None);
        // (1·2 + 2·5) / (1 + 4) = 12/5.
        assert_eq!(through_origin(&[1.0, 2.0], &[2.0, 5.0]), Some(2.4));
        assert_eq!(through_origin(&[0.0, 0.0], &[2.0, 5.0]), None);
    }

    #[test]
    fn linearised_start_is_exact_at_the_true_amplitude() {
        // y = exp(−2^x) = 1·exp(−1·exp(ln 2 · x)): ln(−ln y) = x·ln 2, so b = −1, c = ln 2.
        let x = [0.0, 1.0, 2.0];
        let y = x.map(|v: f64| (-(2f64.powf(v))).exp());
        let [a, b, c] = linearised_start(&x, &y, 1.0, -1.0).unwrap();
        assert_eq!(a, 1.0);
        assert!(
            close(b, -1.0, 1e-14) && close(c, 2f64.ln(), 1e-14),
            "{b} {c}"
        );
        // With b > 0 assumed nothing is defined (every ln(y/1) < 0).
        assert!(linearised_start(&x, &y, 1.0, 1.0).is_none());
    }

    #[test]
    fn start_amplitudes_bracket_the_data() {
        let x = [0.0, 1.0, 2.0];
        // Range 0.4, margins d = 0.004, 0.04, 0.2: above the max by d (b < 0); below the min
        // by min(d, m·0.2) = 0.002, 0.02, 0.1, so a stays positive (b > 0).
        let starts = gompertz_starts(&x, &[0.2, 0.4, 0.6]);
        let expected = [
            (0.604, -1.0),
            (0.198, 1.0),
            (0.64, -1.0),
            (0.18, 1.0),
            (0.8, -1.0),
            (0.1, 1.0),
        ];
        assert_eq!(starts.len(), expected.len());
        for (s, (a, sign)) in starts.iter().zip(expected) {
            assert!(close(s[0], a, 1e-12), "{starts:?}");
            assert_eq!(s[1].signum(), sign, "{starts:?}");
        }
        // The mirror image for negative data: a beyond the most negative y with b < 0, and a
        // between the least negative y and 0 with b > 0.
        let starts = gompertz_starts(&x, &[-0.2, -0.4, -0.6]);
        let expected = [
            (-0.604, -1.0),
            (-0.198, 1.0),
            (-0.64, -1.0),
            (-0.18, 1.0),
            (-0.8, -1.0),
            (-0.1, 1.0),
        ];
        for (s, (a, sign)) in starts.iter().zip(expected) {
            assert!(close(s[0], a, 1e-12), "{starts:?}");
            assert_eq!(s[1].signum(), sign, "{starts:?}");
        }
    }

    #[test]
    fn levenberg_marquardt_refines_and_guards() {
        let x: Vec<f64> = (0..21).map(|i| i as f64 * 0.15).collect();
        let truth = Gompertz::new(0.9, -0.5, 1.1);
        let y: Vec<f64> = x.iter().map(|&v| truth.eval_unclamped(v)).collect();
        let (p, sse) = levenberg_marquardt(&x, &y, [1.0, -0.3, 0.8]).unwrap();
        assert!(sse < 1e-25, "{sse}");
        assert!(
            p.iter()
                .zip([0.9, -0.5, 1.1])
                .all(|(a, b)| close(*a, b, 1e-9)),
            "{p:?}"
        );
        // exp(exp(400·3)) overflows: no finite curve to start from.
        let e = levenberg_marquardt(&x, &y, [1.0, 1.0, 400.0]).unwrap_err();
        assert!(e.contains("not finite"), "{e}");
    }

    #[test]
    fn exponential_data_has_no_finite_gompertz_minimum() {
        // y = e^{x/2} is only the limit b → ∞, c → 0 (b·c = 1/2) of the family, so every start
        // runs away and the fit reports no convergence instead of returning a runaway point.
        let x: Vec<f64> = (0..31).map(|i| i as f64 * 0.1).collect();
        let y: Vec<f64> = x.iter().map(|&v| (0.5 * v).exp()).collect();
        for s in gompertz_starts(&x, &y) {
            assert!(levenberg_marquardt(&x, &y, s).is_err());
        }
        let points = Points {
            source: "exp.csv".into(),
            x_name: "x".into(),
            y_name: "y".into(),
            x,
            y,
            skipped: 0,
        };
        let e = fit_gompertz(&points).unwrap_err().to_string();
        assert!(
            e.starts_with("exp.csv: ") && e.contains("did not converge"),
            "{e}"
        );
    }

    #[test]
    fn su2015_by_hand() {
        let rows = SuRows {
            source: "t.csv".into(),
            // δ = (2·0.02 + 3·0.031) / (4 + 9) = 0.133 / 13.
            formula8: vec![(0.02, 2.0), (0.031, 3.0)],
            // With δ fixed: t = 0.05 − 4δ, η = t / 2 (one row).
            formula17: vec![(0.05, 4.0, 2.0)],
            // ε = (1·0.01 + 2·0.02) / (1 + 4) = 0.01, exact.
            l2: vec![(0.01, 1.0), (0.02, 2.0)],
            skipped: 0,
        };
        let f = fit_su2015(&rows).unwrap();
        let delta = 0.133 / 13.0;
        assert!(close(f.delta, delta, 1e-15));
        assert!(close(f.eta.unwrap(), (0.05 - 4.0 * delta) / 2.0, 1e-15));
        assert!(close(f.epsilon, 0.01, 1e-15));
        assert_eq!(f.r2_epsilon, Some(1.0));
        // One formula-17 row: its equation is exact, but there is no variation to explain.
        assert_eq!(f.r2_eta, None);
        assert_eq!((f.n_delta, f.n_epsilon, f.n_eta), (2, 2, 1));
    }

    #[test]
    fn requests_check_model_and_columns() {
        let e = Request::new("weibull", None, None).unwrap_err().to_string();
        assert!(
            e.contains("--model") && e.contains("gompertz, su2015"),
            "{e}"
        );
        assert!(
            Request::new("gompertz", None, Some("y"))
                .unwrap_err()
                .to_string()
                .starts_with("--x")
        );
        assert!(
            Request::new("gompertz", Some("x"), None)
                .unwrap_err()
                .to_string()
                .starts_with("--y")
        );
        assert!(Request::new("su2015", Some("x"), None).is_err());
        assert_eq!(Request::new("su2015", None, None), Ok(Request::Su2015));
    }

    #[test]
    fn significant_digits() {
        assert_eq!(significant(0.98, 6), "0.980000");
        assert_eq!(significant(-1.5, 6), "-1.50000");
        assert_eq!(significant(1234567.0, 6), "1.23457e6");
        assert_eq!(significant(0.0000123456, 3), "1.23e-5");
        assert_eq!(significant(0.9999999954, 6), "1.00000");
        assert_eq!(significant(999999.7, 6), "1.00000e6");
    }
}
