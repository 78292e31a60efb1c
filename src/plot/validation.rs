//! `gputraffic plot validation`: measured (Nsight Compute) against simulated values, one log–log
//! panel per metric, from the JSON that `gputraffic validate --format json` prints.
//!
//! [`load`] flattens the file's `rows` into a long [`Table`] ([`COLUMNS`], one table row per
//! launch and metric), so that `--where` means what it means for every other kind
//! ([`Table::filtered`]). The file's summary statistics are ignored: each panel's n and median
//! |rel err| are computed from the points it draws, so they stay right under `--where`.

use super::{Data, Figure, Marker, PanelGrid, Rgb, Scale, Series, SeriesStyle, categorical_style};
use crate::error::{Error, Result};
use crate::input::table::Table;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

/// The columns of the long table before the `set_<NAME>` columns (one per name in any row's
/// `set`, sorted), which come before [`VALUE_COLUMNS`].
pub const COLUMNS: [&str; 11] = [
    "id", "launch", "kernel", "group", "hw", "block_x", "block_y", "block_z", "domain_x",
    "domain_y", "domain_z",
];

/// The last columns of the long table: the metric's name and its values.
pub const VALUE_COLUMNS: [&str; 4] = ["metric", "measured", "simulated", "rel_err"];

/// What the input should have been, appended to messages about its structure.
const EXPECTED: &str = "expected the output of gputraffic validate --format json";

/// Reads `gputraffic validate --format json` output from `path` as a long table ([`parse`]).
pub fn load(path: &Path) -> Result<Table> {
    let text = crate::error::read_file(path)?;
    parse(&text, &path.display().to_string())
}

/// Parses the JSON text of `gputraffic validate --format json` into a long table: one row per
/// launch and metric, with the columns [`COLUMNS`], `set_<NAME>`… and [`VALUE_COLUMNS`].
/// `source` names the input in errors. Bad JSON, a missing `rows`, `kernel`, `metrics`,
/// `measured` or `simulated`, a value of the wrong type, or no rows are errors.
pub fn parse(text: &str, source: &str) -> Result<Table> {
    let err = |message: String| Error::new(source, message);
    let v: Value =
        serde_json::from_str(text).map_err(|e| err(format!("JSON: {e} ({EXPECTED})")))?;
    let Some(top) = v.as_object() else {
        return Err(err(format!("not a JSON object ({EXPECTED})")));
    };
    let rows = match top.get("rows") {
        None => return Err(err(format!("no key 'rows' ({EXPECTED})"))),
        Some(Value::Array(rows)) => rows,
        Some(other) => {
            return Err(err(format!(
                "key 'rows' is {}, not an array ({EXPECTED})",
                kind_of(other)
            )));
        }
    };
    if rows.is_empty() {
        return Err(err("no rows: 'rows' is empty".into()));
    }
    let hw = optional_text(top.get("hw"), "hw").map_err(&err)?;

    // Every name any row sets becomes a column, so rows with different settings line up.
    let mut set_names = BTreeSet::new();
    for row in rows {
        if let Some(Value::Object(set)) = row.get("set") {
            set_names.extend(set.keys().cloned());
        }
    }
    let mut columns: Vec<String> = COLUMNS.iter().map(|c| c.to_string()).collect();
    columns.extend(set_names.iter().map(|n| format!("set_{n}")));
    columns.extend(VALUE_COLUMNS.iter().map(|c| c.to_string()));

    let mut table_rows = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let at = |message: String| err(format!("rows[{i}]: {message}"));
        let Some(row) = row.as_object() else {
            return Err(at(format!("is {}, not an object", kind_of(row))));
        };
        let kernel = match row.get("kernel") {
            Some(Value::String(k)) if !k.is_empty() => k.clone(),
            Some(Value::String(_)) => return Err(at("'kernel' is empty".into())),
            None => return Err(at("no key 'kernel'".into())),
            Some(other) => return Err(at(format!("'kernel' is {}, not a string", kind_of(other)))),
        };
        let mut identity = vec![
            number_cell(row.get("id"), "id").map_err(&at)?,
            optional_text(row.get("launch"), "launch").map_err(&at)?,
            kernel,
            optional_text(row.get("group"), "group").map_err(&at)?,
            hw.clone(),
        ];
        identity.extend(triple(row.get("block"), "block").map_err(&at)?);
        identity.extend(triple(row.get("domain"), "domain").map_err(&at)?);
        let set = match row.get("set") {
            None | Some(Value::Null) => None,
            Some(Value::Object(set)) => Some(set),
            Some(other) => return Err(at(format!("'set' is {}, not an object", kind_of(other)))),
        };
        for name in &set_names {
            identity.push(set.and_then(|s| s.get(name)).map_or_else(String::new, cell));
        }
        let metrics = match row.get("metrics") {
            Some(Value::Object(m)) => m,
            None => return Err(at("no key 'metrics'".into())),
            Some(other) => {
                return Err(at(format!(
                    "'metrics' is {}, not an object",
                    kind_of(other)
                )));
            }
        };
        for (name, values) in metrics {
            let what = format!("metrics.{name}");
            let Some(values) = values.as_object() else {
                return Err(at(format!(
                    "'{what}' is {}, not an object",
                    kind_of(values)
                )));
            };
            let mut cells = identity.clone();
            cells.push(name.clone());
            for key in ["measured", "simulated"] {
                if !values.contains_key(key) {
                    return Err(at(format!("no key '{what}.{key}'")));
                }
                cells.push(number_cell(values.get(key), &format!("{what}.{key}")).map_err(&at)?);
            }
            cells
                .push(number_cell(values.get("rel_err"), &format!("{what}.rel_err")).map_err(&at)?);
            table_rows.push(cells);
        }
    }
    if table_rows.is_empty() {
        return Err(err(format!(
            "none of the {} rows has a metric ('metrics' is empty everywhere)",
            rows.len()
        )));
    }
    Ok(Table::new(source, columns, table_rows))
}

/// "a string", "an array", … for messages about a value of the wrong type.
fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A table cell for any JSON value: empty for null, a string's text, else the JSON text.
fn cell(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A string or null (or absent) as a cell; anything else is an error naming `key`.
fn optional_text(v: Option<&Value>, key: &str) -> std::result::Result<String, String> {
    match v {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(format!("'{key}' is {}, not a string", kind_of(other))),
    }
}

/// A number or null (or absent) as a cell; anything else is an error naming `key`.
fn number_cell(v: Option<&Value>, key: &str) -> std::result::Result<String, String> {
    match v {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::Number(n)) => Ok(n.to_string()),
        Some(other) => Err(format!("'{key}' is {}, not a number", kind_of(other))),
    }
}

/// `[x, y, z]` (block or domain) as three cells; absent or null gives three empty cells.
fn triple(v: Option<&Value>, key: &str) -> std::result::Result<[String; 3], String> {
    match v {
        None | Some(Value::Null) => Ok(Default::default()),
        Some(Value::Array(a)) if a.len() == 3 && a.iter().all(Value::is_number) => {
            Ok([0, 1, 2].map(|d| a[d].to_string()))
        }
        Some(other) => Err(format!("'{key}' is {other}, not [x, y, z]")),
    }
}

/// Colour of the ±10 % guides: lighter than the diagonal, which is the line that matters.
const BAND: Rgb = Rgb(160, 160, 160);

/// Panels per row for `n` panels: a near-square grid (1, 2, 2, 2, 3, …), at most 4 wide.
fn columns_for(n: usize) -> usize {
    let mut c = 1;
    while c * c < n && c < 4 {
        c += 1;
    }
    c
}

/// The value shared by all selected rows in `column`, if it is one non-empty value.
fn single(data: &Data, column: &str) -> Option<String> {
    let cells = data.table.text(column).ok()?;
    let first = cells[*data.rows.first()?];
    (!first.is_empty() && data.rows.iter().all(|&r| cells[r] == first)).then(|| first.to_string())
}

/// The grid of measured-vs-simulated panels for `wanted` metrics (all present, sorted, when
/// empty) from the long table of [`load`] (rows already filtered by `filters`).
pub(super) fn figure(
    data: &Data,
    wanted: &[String],
    filters: &[String],
    notes: &mut Vec<String>,
) -> Result<Figure> {
    let names = data.table.text("metric")?;
    let kernel_cells = data.table.text("kernel")?;
    let measured = data.numbers("measured")?;
    let simulated = data.numbers("simulated")?;
    let metric_of = |j: usize| names[data.rows[j]];
    let present: BTreeSet<&str> = (0..data.rows.len()).map(metric_of).collect();
    let condition = if filters.is_empty() {
        String::new()
    } else {
        format!(" ({})", filters.join(", "))
    };
    let metrics: Vec<String> = if wanted.is_empty() {
        present.iter().map(|m| m.to_string()).collect()
    } else {
        if let Some(unknown) = wanted.iter().find(|m| !present.contains(m.as_str())) {
            let after = if filters.is_empty() {
                ""
            } else {
                " left by --where"
            };
            return Err(data.error(format!(
                "no metric '{unknown}' in the rows{after} (--metric; the rows have: {})",
                present.iter().copied().collect::<Vec<_>>().join(", ")
            )));
        }
        wanted.to_vec()
    };
    // One colour and marker per kernel for the whole grid, by sorted name, so panels agree and
    // reruns give the same picture.
    let kernels: BTreeSet<&str> = data.rows.iter().map(|&r| kernel_cells[r]).collect();
    let style =
        |k: &str| categorical_style(kernels.iter().position(|&x| x == k).unwrap_or_default());

    let mut panels = Vec::new();
    for metric in &metrics {
        let mut groups: Vec<Series> = kernels
            .iter()
            .map(|&k| Series {
                label: k.to_string(),
                colour: style(k).0,
                points: Vec::new(),
                style: SeriesStyle::Markers,
                marker: style(k).1,
                details: Vec::new(),
            })
            .collect();
        let (mut total, mut errors) = (0, Vec::new());
        for j in (0..data.rows.len()).filter(|&j| metric_of(j) == metric) {
            total += 1;
            if let (Some(m), Some(s)) = (measured[j], simulated[j])
                && m > 0.0
                && s > 0.0
            {
                let k = kernel_cells[data.rows[j]];
                if let Some(g) = groups.iter_mut().find(|g| g.label == k) {
                    g.points.push((m, s));
                }
                errors.push(((s - m) / m).abs());
            }
        }
        let shown = errors.len();
        if shown < total {
            notes.push(format!(
                "{}: {metric}: left out {} of {total} point(s) without a measured and a simulated \
                 value > 0 (log axes)",
                data.table.source,
                total - shown
            ));
        }
        if shown == 0 {
            notes.push(format!(
                "{}: {metric}: nothing to draw, panel left out",
                data.table.source
            ));
            continue;
        }
        groups.retain(|g| !g.points.is_empty());
        let heading = format!(
            "{metric}\nn = {shown}, median |rel err| = {} %",
            // `shown > 0` and finite errors, so the median exists.
            percent(crate::analysis::stats::median(&errors).expect("shown points") * 100.0)
        );
        // Both axes in the metric's unit (sectors, requests, ns), from the quantity table.
        let unit = crate::models::describe_column(metric)
            .map(|q| q.unit)
            .filter(|u| !u.is_empty() && *u != "1");
        let axis = |side: &str| match unit {
            Some(u) => format!("{side} [{u}]"),
            None => side.to_string(),
        };
        let Some(mut f) = super::scatter_with_diagonal(
            heading,
            axis("measured"),
            axis("simulated"),
            groups,
            Scale::Log10,
        ) else {
            continue;
        };
        // ±10 % guides, ending where they leave the (equal) axis ranges so the drawing does
        // not cut them away as leaving the plot.
        let (lo, hi) = f.x.range;
        let band = |points: Vec<(f64, f64)>| Series {
            label: "±10 %".into(),
            colour: BAND,
            points,
            style: SeriesStyle::Dashed,
            marker: Marker::Circle,
            details: Vec::new(),
        };
        f.series
            .insert(1, band(vec![(lo, lo * 1.1), (hi / 1.1, hi)]));
        f.series
            .insert(2, band(vec![(lo / 0.9, lo), (hi, hi * 0.9)]));
        panels.push(f);
    }
    if panels.is_empty() {
        return Err(data.error(format!(
            "no metric has a point with measured and simulated values > 0 to draw{condition}"
        )));
    }
    let subject = match (single(data, "kernel"), single(data, "hw")) {
        (Some(k), Some(h)) => format!("{k} on {h}: "),
        (Some(k), None) => format!("{k}: "),
        (None, Some(h)) => format!("{h}: "),
        (None, None) => String::new(),
    };
    Ok(Figure::Grid(PanelGrid {
        title: format!("{subject}simulated vs measured{condition}"),
        columns: columns_for(panels.len()),
        panels,
        legend_title: "kernel".into(),
        legend_notes: vec!["rel err =".into(), "(sim − meas) / meas".into()],
    }))
}

/// A percentage with digits a reader needs: two decimals below 10 (`0.96`, `3.42`), one below
/// 100 (`12.3`), none above; `< 0.01` for what rounds to zero, trailing zeros dropped.
pub fn percent(p: f64) -> String {
    if p.abs() < 0.005 && p != 0.0 {
        return "< 0.01".into();
    }
    let decimals = if p.abs() < 10.0 {
        2
    } else if p.abs() < 100.0 {
        1
    } else {
        0
    };
    let s = format!("{p:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn percentages_get_sensible_digits() {
        use super::percent;
        assert_eq!(percent(0.9617), "0.96");
        assert_eq!(percent(0.009617), "0.01");
        assert_eq!(percent(0.0009617), "< 0.01");
        assert_eq!(percent(12.345), "12.3");
        assert_eq!(percent(3.0), "3");
        assert_eq!(percent(0.0), "0");
        assert_eq!(percent(250.4), "250");
    }

    use super::*;

    const ONE_ROW: &str = r#"{"hw":"h200","rows":[{"id":null,"launch":"star1 8x8x8 8x1x1",
        "kernel":"star1","group":"star1 8x8x8","domain":[8,8,8],"block":[8,1,1],
        "set":{"cz":4},"metrics":{"a.sum":{"measured":100.0,"simulated":110,"rel_err":0.1},
        "b.sum":{"measured":0,"simulated":5,"rel_err":null}}}]}"#;

    #[test]
    fn rows_become_one_table_row_per_metric() {
        let t = parse(ONE_ROW, "v.json").unwrap();
        assert_eq!(
            t.columns,
            [
                "id",
                "launch",
                "kernel",
                "group",
                "hw",
                "block_x",
                "block_y",
                "block_z",
                "domain_x",
                "domain_y",
                "domain_z",
                "set_cz",
                "metric",
                "measured",
                "simulated",
                "rel_err"
            ]
        );
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.text("metric").unwrap(), ["a.sum", "b.sum"]);
        assert_eq!(t.text("id").unwrap(), ["", ""]);
        assert_eq!(t.text("hw").unwrap(), ["h200", "h200"]);
        assert_eq!(t.block_shapes().unwrap(), [[8, 1, 1], [8, 1, 1]]);
        assert_eq!(t.numbers("measured").unwrap(), [Some(100.0), Some(0.0)]);
        assert_eq!(t.numbers("rel_err").unwrap(), [Some(0.1), None]);
        assert_eq!(t.text("set_cz").unwrap(), ["4", "4"]);
    }

    #[test]
    fn structural_problems_name_the_file_and_the_row() {
        let msg = |text: &str| parse(text, "v.json").unwrap_err().to_string();
        assert!(msg("{").starts_with("v.json: JSON: "), "{}", msg("{"));
        assert!(msg("[]").contains("not a JSON object"));
        assert!(msg(r#"{"metrics":{}}"#).contains("no key 'rows'"));
        assert!(msg(r#"{"rows":[]}"#).contains("no rows"));
        assert_eq!(
            msg(r#"{"rows":[{"metrics":{}}]}"#),
            "v.json: rows[0]: no key 'kernel'"
        );
        assert_eq!(
            msg(r#"{"rows":[{"kernel":"k","metrics":{"m":{"measured":1}}}]}"#),
            "v.json: rows[0]: no key 'metrics.m.simulated'"
        );
        assert_eq!(
            msg(r#"{"rows":[{"kernel":"k","metrics":{"m":{"measured":"1","simulated":1}}}]}"#),
            "v.json: rows[0]: 'metrics.m.measured' is a string, not a number"
        );
        assert!(msg(r#"{"rows":[{"kernel":"k","block":[1,2],"metrics":{}}]}"#).contains("'block'"));
        assert!(msg(r#"{"rows":[{"kernel":"k","metrics":{}}]}"#).contains("has a metric"));
    }

    #[test]
    fn grid_is_near_square() {
        let c: Vec<usize> = [1, 2, 3, 4, 5, 9, 10, 16, 20].map(columns_for).to_vec();
        assert_eq!(c, [1, 2, 2, 2, 3, 3, 4, 4, 4]);
    }
}
