//! Result tables read back: a sweep's CSV (or JSONL) output as named columns, for `fit`, `plot`
//! and `validate`. Every problem (missing column, a cell that is not a number) is an [`Error`]
//! naming the file, the column and the row.

use crate::error::{Error, Result};
use serde_json::Value;
use std::path::Path;

/// A table of text cells with named columns.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Where it came from (for error messages).
    pub source: String,
    /// Column names, in file order.
    pub columns: Vec<String>,
    /// Rows of cells, one per column (an empty string for a missing value).
    pub rows: Vec<Vec<String>>,
    /// Each row's number in the file (1 = the first data row), kept through [`Table::filtered`]
    /// so that messages name the row the user can find.
    pub row_numbers: Vec<usize>,
}

impl Table {
    /// Reads a `.jsonl` file (one flat JSON object per line) or, for any other name, a CSV file
    /// with a header line. (A sweep's output, which may be a shard, reads back through
    /// `analysis::sweep_file::read_table`.)
    pub fn load(path: &Path) -> Result<Table> {
        Table::parse_named(&crate::error::read_file(path)?, path)
    }

    /// Parses `text` as JSON lines when `path` ends in `.jsonl`, else as CSV; `path` names it
    /// in errors.
    pub fn parse_named(text: &str, path: &Path) -> Result<Table> {
        let source = path.display().to_string();
        if path.extension().is_some_and(|e| e == "jsonl") {
            Table::parse_jsonl(text, &source)
        } else {
            Table::parse_csv(text, &source)
        }
    }

    /// Parses CSV text with a header line.
    pub fn parse_csv(text: &str, source: &str) -> Result<Table> {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(true)
            .from_reader(text.as_bytes());
        let columns: Vec<String> = reader
            .headers()
            .map_err(|e| Error::new(source, format!("CSV header: {e}")))?
            .iter()
            .map(str::to_string)
            .collect();
        if columns.iter().all(|c| c.is_empty()) {
            return Err(Error::new(source, "empty file: no CSV header line"));
        }
        let mut rows = Vec::new();
        for (i, rec) in reader.records().enumerate() {
            let rec = rec.map_err(|e| Error::new(source, format!("CSV row {}: {e}", i + 1)))?;
            rows.push(rec.iter().map(str::to_string).collect());
        }
        Ok(Table::new(source, columns, rows))
    }

    /// A table whose rows are numbered 1, 2, … in order.
    pub fn new(source: &str, columns: Vec<String>, rows: Vec<Vec<String>>) -> Table {
        Table {
            source: source.to_string(),
            columns,
            row_numbers: (1..=rows.len()).collect(),
            rows,
        }
    }

    /// The file's number for row `i` of this table (1 = the first data row of the file).
    pub fn row_number(&self, i: usize) -> usize {
        self.row_numbers.get(i).copied().unwrap_or(i + 1)
    }

    /// Parses JSON Lines: every line one flat object; the columns are the keys in order of first
    /// appearance.
    pub fn parse_jsonl(text: &str, source: &str) -> Result<Table> {
        let mut columns: Vec<String> = Vec::new();
        let mut objects = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let v: Value = serde_json::from_str(line)
                .map_err(|e| Error::new(source, format!("line {}: {e}", i + 1)))?;
            let Value::Object(m) = v else {
                return Err(Error::new(
                    source,
                    format!("line {}: not a JSON object", i + 1),
                ));
            };
            for k in m.keys() {
                if !columns.contains(k) {
                    columns.push(k.clone());
                }
            }
            objects.push(m);
        }
        let rows = objects
            .iter()
            .map(|m| {
                columns
                    .iter()
                    .map(|c| match m.get(c) {
                        None | Some(Value::Null) => String::new(),
                        Some(Value::String(s)) => s.clone(),
                        Some(other) => other.to_string(),
                    })
                    .collect()
            })
            .collect();
        Ok(Table::new(source, columns, rows))
    }

    /// The index of column `name`; the error lists the columns that contain it as a part.
    pub fn column(&self, name: &str) -> Result<usize> {
        self.columns.iter().position(|c| c == name).ok_or_else(|| {
            let similar: Vec<&str> = self
                .columns
                .iter()
                .filter(|c| c.contains(name) || name.contains(c.as_str()))
                .map(String::as_str)
                .take(8)
                .collect();
            let hint = if similar.is_empty() {
                String::new()
            } else {
                format!(" (similar: {})", similar.join(", "))
            };
            Error::new(&self.source, format!("no column '{name}'{hint}"))
        })
    }

    /// Whether the table has column `name`.
    pub fn has(&self, name: &str) -> bool {
        self.columns.iter().any(|c| c == name)
    }

    /// The text cells of column `name`.
    pub fn text(&self, name: &str) -> Result<Vec<&str>> {
        let c = self.column(name)?;
        Ok(self.rows.iter().map(|r| r[c].as_str()).collect())
    }

    /// The cells of column `name` as numbers: `None` for an empty cell; `NaN`, `inf` and the
    /// like parse as such (callers decide whether they are acceptable); anything else is an
    /// error naming the row (1 = the first data row).
    pub fn numbers(&self, name: &str) -> Result<Vec<Option<f64>>> {
        let c = self.column(name)?;
        self.rows
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let s = r[c].trim();
                if s.is_empty() {
                    return Ok(None);
                }
                s.parse::<f64>().map(Some).map_err(|_| {
                    Error::new(
                        &self.source,
                        format!(
                            "row {}, column '{name}': '{s}' is not a number",
                            self.row_number(i)
                        ),
                    )
                })
            })
            .collect()
    }

    /// The rows whose cells equal the given values, each condition `COLUMN=VALUE` (as
    /// `--where` takes them); values compare as text, or as numbers when both parse (so `1`
    /// matches `1.0`). No row left is an error.
    pub fn filtered(&self, conditions: &[String]) -> Result<Table> {
        if conditions.is_empty() {
            return Ok(self.clone());
        }
        let mut tests = Vec::new();
        for c in conditions {
            let (col, value) = c
                .split_once('=')
                .ok_or_else(|| Error::new("--where", format!("'{c}' is not COLUMN=VALUE")))?;
            tests.push((self.column(col.trim())?, value.trim().to_string()));
        }
        let same = |cell: &str, want: &str| {
            cell == want
                || matches!((cell.parse::<f64>(), want.parse::<f64>()), (Ok(a), Ok(b)) if a == b)
        };
        let keep: Vec<usize> = (0..self.rows.len())
            .filter(|&i| tests.iter().all(|(c, v)| same(&self.rows[i][*c], v)))
            .collect();
        if keep.is_empty() {
            return Err(Error::new(
                &self.source,
                format!("no row has {}", conditions.join(" and ")),
            ));
        }
        Ok(Table {
            source: self.source.clone(),
            columns: self.columns.clone(),
            rows: keep.iter().map(|&i| self.rows[i].clone()).collect(),
            row_numbers: keep.iter().map(|&i| self.row_number(i)).collect(),
        })
    }

    /// The block shape of every row, from the columns `block_x`, `block_y`, `block_z`.
    pub fn block_shapes(&self) -> Result<Vec<[u32; 3]>> {
        let cols = ["block_x", "block_y", "block_z"].map(|n| self.numbers(n));
        let [x, y, z] = cols;
        let (x, y, z) = (x?, y?, z?);
        (0..self.rows.len())
            .map(|i| {
                let mut out = [0u32; 3];
                for (d, v) in [&x, &y, &z].into_iter().enumerate() {
                    match v[i] {
                        Some(f) if f >= 1.0 && f.fract() == 0.0 && f <= u32::MAX as f64 => {
                            out[d] = f as u32
                        }
                        _ => {
                            return Err(Error::new(
                                &self.source,
                                format!(
                                    "row {}: block_{} is not a positive integer",
                                    self.row_number(i),
                                    ["x", "y", "z"][d]
                                ),
                            ));
                        }
                    }
                }
                Ok(out)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_columns_numbers_and_empty_cells() {
        let t = Table::parse_csv(
            "a,b,block_x,block_y,block_z\n1,,32,8,4\n2.5,x,1,1,1\n",
            "t.csv",
        )
        .unwrap();
        assert_eq!(t.columns, ["a", "b", "block_x", "block_y", "block_z"]);
        assert_eq!(t.numbers("a").unwrap(), [Some(1.0), Some(2.5)]);
        let e = t.numbers("b").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.csv: row 2, column 'b': 'x' is not a number"
        );
        assert_eq!(t.block_shapes().unwrap(), [[32, 8, 4], [1, 1, 1]]);
        let e = t.column("block").unwrap_err().to_string();
        assert!(
            e.contains("no column 'block'") && e.contains("block_x"),
            "{e}"
        );
    }

    #[test]
    fn jsonl_union_of_keys_and_nulls() {
        let t = Table::parse_jsonl("{\"a\":1,\"b\":null}\n\n{\"a\":2,\"c\":\"s\"}\n", "t.jsonl")
            .unwrap();
        assert_eq!(t.columns, ["a", "b", "c"]);
        assert_eq!(t.numbers("a").unwrap(), [Some(1.0), Some(2.0)]);
        assert_eq!(t.text("c").unwrap(), ["", "s"]);
        assert!(Table::parse_jsonl("[1]\n", "t.jsonl").is_err());
    }

    #[test]
    fn where_conditions_keep_matching_rows() {
        let t = Table::parse_csv("hw,s\nk20,1\nh200,1.0\nh200,2\n", "t.csv").unwrap();
        let f = t.filtered(&["hw=h200".into(), "s=1".into()]).unwrap();
        assert_eq!(f.rows, [vec!["h200".to_string(), "1.0".to_string()]]);
        // Messages keep naming the row as the file numbers it.
        assert_eq!(f.row_numbers, [2]);
        let g = t
            .filtered(&["hw=h200".into()])
            .unwrap()
            .filtered(&["s=2".into()])
            .unwrap();
        assert_eq!(g.row_number(0), 3);
        assert!(t.filtered(&["hw=v100".into()]).is_err());
        assert!(t.filtered(&["nope=1".into()]).is_err());
        assert!(t.filtered(&["hw".into()]).is_err());
    }

    #[test]
    fn empty_csv_is_an_error() {
        assert!(Table::parse_csv("", "e.csv").is_err());
    }
}
