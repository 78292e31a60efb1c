//! Sweeps split across machines (a Slurm job array, say): `sweep --shard K/N` runs every N-th
//! configuration of the plan into its own file, and [`merge`] puts the shards of one sweep back
//! together into exactly the bytes the unsharded sweep writes.
//!
//! Shard K of N (K counts from 1, as `sbatch --array=1-N` numbers its tasks) holds the
//! configurations i with i mod N = K − 1. A shard file is a sweep file with one line in front, its
//! [`ShardHeader`]: `# {"gputraffic_shard":{…}}` in CSV, the JSON object itself in JSON lines,
//! naming K, N, the sweep's [fingerprint](crate::analysis::sweep::Sweep::fingerprint), its number
//! of configurations and the gputraffic build. Rows carry their global `config` index and are
//! encoded as the unsharded sweep encodes them, so merging is checking and interleaving; the
//! header line is all it drops.

use crate::analysis::sweep_file::{OutputFormat, ShardHeader};
use crate::error::{Error, Result};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The shards of one sweep, merged.
#[derive(Debug, Clone)]
pub struct Merged {
    /// The shards' (and the merged file's) encoding.
    pub format: OutputFormat,
    /// The merged file: the unsharded sweep's bytes.
    pub text: String,
    /// The sweep's fingerprint.
    pub sweep: String,
    /// Configurations (rows).
    pub configurations: usize,
    /// Shards (N).
    pub shards: usize,
}

/// One shard file, read.
struct ShardFile<'a> {
    name: String,
    header: ShardHeader,
    format: OutputFormat,
    /// Everything after the header line.
    body: &'a str,
    /// 1-based line number of the body's first line.
    first_line: usize,
}

/// Merges the shard files of one sweep, given in any order, into the unsharded sweep's bytes.
/// Every shard 1/N … N/N must be there exactly once, complete, from the same sweep and build;
/// otherwise the error names the files or the missing shards.
pub fn merge(files: &[PathBuf]) -> Result<Merged> {
    let texts: Vec<(String, String)> = files
        .iter()
        .map(|f| Ok((f.display().to_string(), crate::error::read_file(f)?)))
        .collect::<Result<_>>()?;
    let Some((first_name, _)) = texts.first() else {
        return Err(Error::new("merge", "no shard file given"));
    };
    let shards: Vec<ShardFile> = texts
        .iter()
        .map(|(name, text)| read_header(name, text))
        .collect::<Result<_>>()?;
    let reference = &shards[0];
    let describe = |s: &ShardFile| {
        format!(
            "sweep {} of {} configurations in {} shards",
            s.header.sweep,
            s.header.configurations,
            s.header.shard.count()
        )
    };
    for s in &shards[1..] {
        let (h, r) = (&s.header, &reference.header);
        if (&h.sweep, h.configurations, h.shard.count())
            != (&r.sweep, r.configurations, r.shard.count())
        {
            return Err(Error::new(
                &s.name,
                format!(
                    "a shard of another sweep ({}) than {first_name} ({})",
                    describe(s),
                    describe(reference)
                ),
            ));
        }
        if s.format != reference.format {
            return Err(Error::new(
                &s.name,
                format!(
                    "{}, but {first_name} is {}: the shards of one sweep share its format",
                    format_name(s.format),
                    format_name(reference.format)
                ),
            ));
        }
        if h.build != r.build {
            return Err(Error::new(
                &s.name,
                format!(
                    "written by gputraffic {}, but {first_name} by {}: merge the shards of one build \
                     (rerun these with one build)",
                    h.build, r.build
                ),
            ));
        }
    }
    let n = reference.header.shard.count();
    let mut by_index: Vec<Vec<&ShardFile>> = vec![Vec::new(); n];
    for s in &shards {
        by_index[s.header.shard.index() - 1].push(s);
    }
    let mut problems = Vec::new();
    let missing: Vec<String> = (1..=n)
        .filter(|k| by_index[k - 1].is_empty())
        .map(|k| format!("{k}/{n}"))
        .collect();
    if !missing.is_empty() {
        problems.push(format!(
            "{} {} missing",
            plural(missing.len(), "shard", "shards"),
            list(&missing, 20)
        ));
    }
    for (k, given) in by_index.iter().enumerate() {
        if given.len() > 1 {
            let names: Vec<String> = given.iter().map(|s| s.name.clone()).collect();
            problems.push(format!(
                "shard {}/{n} is given {} times ({})",
                k + 1,
                given.len(),
                names.join(", ")
            ));
        }
    }
    if !problems.is_empty() {
        return Err(Error::new(
            format!("sweep {}", reference.header.sweep),
            problems.join("; "),
        ));
    }
    let total = reference.header.configurations;
    let mut rows: Vec<Option<&str>> = vec![None; total];
    let mut column_line: Option<(&str, &str)> = None;
    let mut jsonl_keys: Option<(Vec<String>, &str)> = None;
    for s in by_index.iter().map(|g| g[0]) {
        let mut lines = s.body.split_inclusive('\n').filter(|l| l.ends_with('\n'));
        let mut line_no = s.first_line;
        let mut fields = 0;
        if s.format == OutputFormat::Csv {
            let columns = lines.next().unwrap_or("");
            match column_line {
                None => column_line = Some((columns, &s.name)),
                Some((c, from)) if c != columns => {
                    return Err(Error::new(
                        &s.name,
                        format!("line {line_no}: its column line differs from {from}'s"),
                    ));
                }
                Some(_) => {}
            }
            fields = csv_fields(columns).map_or(0, |f| f.len());
            line_no += 1;
        }
        let mut seen = vec![false; total];
        for line in lines {
            let bad = |m: String| Error::new(&s.name, format!("line {line_no}: {m}"));
            let config = match s.format {
                OutputFormat::Csv => csv_fields(line)
                    .filter(|f| f.len() == fields && fields > 0)
                    .and_then(|f| f[0].parse::<usize>().ok()),
                OutputFormat::Jsonl => match serde_json::from_str::<Value>(line) {
                    Ok(Value::Object(m)) => {
                        let keys: Vec<String> = m.keys().cloned().collect();
                        match &jsonl_keys {
                            None => jsonl_keys = Some((keys, &s.name)),
                            Some((k, from)) if *k != keys => {
                                return Err(Error::new(
                                    &s.name,
                                    format!("line {line_no}: its keys differ from those of {from}"),
                                ));
                            }
                            Some(_) => {}
                        }
                        m.get("config").and_then(Value::as_u64).map(|c| c as usize)
                    }
                    _ => None,
                },
            }
            .ok_or_else(|| bad("not a row of a sweep".into()))?;
            if config >= total || !s.header.shard.contains(config) {
                return Err(bad(format!(
                    "config {config} is not in shard {} of a sweep of {total} configurations",
                    s.header.shard
                )));
            }
            if seen[config] {
                return Err(bad(format!("config {config} appears twice")));
            }
            seen[config] = true;
            rows[config] = Some(line);
            line_no += 1;
        }
        let absent: Vec<String> = s
            .header
            .shard
            .configs(total)
            .filter(|&i| !seen[i])
            .map(|i| i.to_string())
            .collect();
        if !absent.is_empty() {
            return Err(Error::new(
                &s.name,
                format!(
                    "shard {} is incomplete: {} of its {} configurations are missing ({} {}); \
                     finish it by running its sweep command again with --resume",
                    s.header.shard,
                    absent.len(),
                    s.header.shard_configurations(),
                    plural(absent.len(), "config", "configs"),
                    list(&absent, 10)
                ),
            ));
        }
    }
    let mut text = String::new();
    if let Some((columns, _)) = column_line {
        text.push_str(columns);
    }
    // Every configuration is in exactly one shard, and every shard is complete.
    text.extend(rows.iter().flatten().copied());
    Ok(Merged {
        format: reference.format,
        text,
        sweep: reference.header.sweep.clone(),
        configurations: total,
        shards: n,
    })
}

/// [`merge`]s `files` and writes the result to `out` in one piece (nothing on an error). The
/// name of `out` must ask for the shards' format (`.jsonl` for JSON lines).
pub fn merge_into(out: &Path, files: &[PathBuf]) -> Result<Merged> {
    let merged = merge(files)?;
    let wanted = OutputFormat::for_path(out);
    if wanted != merged.format {
        return Err(Error::in_file(
            out,
            format!(
                "the shards are {}, but this name asks for {} (.jsonl for JSON lines, anything else CSV)",
                format_name(merged.format),
                format_name(wanted)
            ),
        ));
    }
    crate::error::write_file_atomically(out, merged.text.as_bytes())?;
    Ok(merged)
}

/// Reads a shard's header line.
fn read_header<'a>(name: &str, text: &'a str) -> Result<ShardFile<'a>> {
    let (first, body) = match text.split_once('\n') {
        Some((first, body)) => (first, body),
        None => (text, ""),
    };
    let (header, format) = ShardHeader::parse(first).ok_or_else(|| {
        Error::new(
            name,
            "not a shard of a sweep: its first line is not the shard line `sweep --shard K/N` writes",
        )
    })?;
    Ok(ShardFile {
        name: name.to_string(),
        header,
        format,
        body,
        first_line: 2,
    })
}

/// The cells of one CSV line.
fn csv_fields(line: &str) -> Option<Vec<String>> {
    let mut r = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(line.as_bytes());
    let rec = r.records().next()?.ok()?;
    Some(rec.iter().map(str::to_string).collect())
}

fn format_name(f: OutputFormat) -> &'static str {
    match f {
        OutputFormat::Csv => "CSV",
        OutputFormat::Jsonl => "JSON lines",
    }
}

fn plural(n: usize, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}

/// `a, b and c`, at most `max` items and then how many more.
fn list(items: &[String], max: usize) -> String {
    let shown = &items[..items.len().min(max)];
    let rest = items.len() - shown.len();
    match (shown, rest) {
        ([one], 0) => one.clone(),
        ([init @ .., last], 0) => format!("{} and {last}", init.join(", ")),
        _ => format!("{} and {rest} more", shown.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_short() {
        let items: Vec<String> = (0..5).map(|i| i.to_string()).collect();
        assert_eq!(list(&items[..1], 3), "0");
        assert_eq!(list(&items[..3], 3), "0, 1 and 2");
        assert_eq!(list(&items, 3), "0, 1, 2 and 2 more");
    }
}
