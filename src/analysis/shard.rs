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

use crate::analysis::sweep::OutputFormat;
use crate::error::{Error, Result};
use serde_json::Value;
use std::fmt;
use std::path::{Path, PathBuf};

/// Shard K of N: the configurations i with i mod N = K − 1 (1 ≤ K ≤ N).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    index: usize,
    count: usize,
}

impl Shard {
    /// Shard `index` (K, from 1) of `count` (N).
    pub fn new(index: usize, count: usize) -> Result<Shard> {
        let bad = |m: &str| Error::new("--shard", format!("'{index}/{count}': {m}"));
        if count == 0 {
            return Err(bad("N must be at least 1"));
        }
        if index == 0 {
            return Err(bad(
                "K counts from 1 (1 ≤ K ≤ N, as sbatch --array=1-N numbers its tasks)",
            ));
        }
        if index > count {
            return Err(bad("K is larger than N (1 ≤ K ≤ N)"));
        }
        Ok(Shard { index, count })
    }

    /// Parses `K/N`.
    pub fn parse(s: &str) -> Result<Shard> {
        let number = |v: &str| v.trim().parse::<usize>().ok();
        match s.split_once('/').map(|(k, n)| (number(k), number(n))) {
            Some((Some(k), Some(n))) => Shard::new(k, n),
            _ => Err(Error::new(
                "--shard",
                format!("'{s}' is not K/N (two whole numbers, 1 ≤ K ≤ N, e.g. 2/8)"),
            )),
        }
    }

    /// K, from 1.
    pub fn index(&self) -> usize {
        self.index
    }

    /// N.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Whether configuration `config` (from 0) is this shard's.
    pub fn contains(&self, config: usize) -> bool {
        config % self.count == self.index - 1
    }

    /// This shard's configurations of a sweep of `total`, in order.
    pub fn configs(&self, total: usize) -> impl Iterator<Item = usize> + use<> {
        (self.index - 1..total).step_by(self.count)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The first line of a shard file: which shard of which sweep, written by which build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardHeader {
    /// K of N.
    pub shard: Shard,
    /// The sweep's fingerprint (16 hex digits).
    pub sweep: String,
    /// Configurations in the whole sweep.
    pub configurations: usize,
    /// The gputraffic build that wrote it ([`build`]).
    pub build: String,
}

/// The key of the header object.
const KEY: &str = "gputraffic_shard";

impl ShardHeader {
    /// The header line (with its line break): the JSON object, behind `# ` in CSV.
    pub fn line(&self, format: OutputFormat) -> String {
        let json = format!(
            "{{\"{KEY}\":{{\"shard\":{},\"of\":{},\"sweep\":{},\"configurations\":{},\"build\":{}}}}}",
            self.shard.index,
            self.shard.count,
            Value::from(self.sweep.as_str()),
            self.configurations,
            Value::from(self.build.as_str()),
        );
        match format {
            OutputFormat::Csv => format!("# {json}\n"),
            OutputFormat::Jsonl => format!("{json}\n"),
        }
    }

    /// Reads a header line (without its line break) and the format it is written in; `None`
    /// when the line is no shard header.
    pub fn parse(line: &str) -> Option<(ShardHeader, OutputFormat)> {
        let (json, format) = match line.strip_prefix("# ") {
            Some(json) => (json, OutputFormat::Csv),
            None => (line, OutputFormat::Jsonl),
        };
        if !json.starts_with(&format!("{{\"{KEY}\"")) {
            return None;
        }
        let v: Value = serde_json::from_str(json).ok()?;
        let h = v.get(KEY)?;
        let number = |k: &str| h.get(k)?.as_u64().map(|v| v as usize);
        let text = |k: &str| h.get(k)?.as_str().map(str::to_string);
        let shard = Shard::new(number("shard")?, number("of")?).ok()?;
        Some((
            ShardHeader {
                shard,
                sweep: text("sweep")?,
                configurations: number("configurations")?,
                build: text("build")?,
            },
            format,
        ))
    }

    /// How many configurations the shard holds.
    pub fn shard_configurations(&self) -> usize {
        self.shard.configs(self.configurations).count()
    }
}

/// This build: the package version and the commit (`+` for uncommitted changes), as `-V` shows.
pub fn build() -> String {
    format!(
        "{} ({})",
        env!("CARGO_PKG_VERSION"),
        env!("GPUTRAFFIC_GIT_COMMIT")
    )
}

/// FNV-1a, 64 bits: a hash that is the same on every machine and run (unlike the standard
/// library's randomly keyed one).
#[derive(Debug, Clone)]
pub struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Self {
        Fnv1a(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv1a {
    /// Hashes `bytes` in.
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// Hashes `s` in, then a separator (so that "ab","c" and "a","bc" differ).
    pub fn field(&mut self, s: &str) {
        self.write(s.as_bytes());
        self.write(&[0x1f]);
    }

    /// The hash as 16 hex digits.
    pub fn hex(&self) -> String {
        format!("{:016x}", self.0)
    }
}

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
            s.header.sweep, s.header.configurations, s.header.shard.count
        )
    };
    for s in &shards[1..] {
        let (h, r) = (&s.header, &reference.header);
        if (&h.sweep, h.configurations, h.shard.count)
            != (&r.sweep, r.configurations, r.shard.count)
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
    let n = reference.header.shard.count;
    let mut by_index: Vec<Vec<&ShardFile>> = vec![Vec::new(); n];
    for s in &shards {
        by_index[s.header.shard.index - 1].push(s);
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
    fn shards_partition_the_configurations() {
        let total = 10;
        let mut owner = vec![0; total];
        for k in 1..=4 {
            let s = Shard::new(k, 4).unwrap();
            for i in s.configs(total) {
                assert!(s.contains(i));
                owner[i] += k;
            }
        }
        // Shard K holds K−1, K−1+4, …: 1/4 has 0, 4, 8; 2/4 has 1, 5, 9; 3/4 and 4/4 two each.
        assert_eq!(owner, [1, 2, 3, 4, 1, 2, 3, 4, 1, 2]);
        assert_eq!(
            Shard::parse("2/4")
                .unwrap()
                .configs(total)
                .collect::<Vec<_>>(),
            [1, 5, 9]
        );
        // More shards than configurations: the last ones are empty.
        assert_eq!(Shard::new(8, 8).unwrap().configs(5).count(), 0);
        for bad in ["0/4", "5/4", "1/0", "2", "a/b", "-1/4", "2/4/8", ""] {
            let e = Shard::parse(bad).unwrap_err();
            assert_eq!(e.source_name, "--shard", "{bad}");
        }
        assert!(Shard::parse("0/4").unwrap_err().message.contains("from 1"));
        assert!(Shard::parse("5/4").unwrap_err().message.contains("larger"));
    }

    #[test]
    fn header_lines_round_trip() {
        let h = ShardHeader {
            shard: Shard::new(3, 8).unwrap(),
            sweep: "0123456789abcdef".into(),
            configurations: 20,
            build: "0.1.0 (abc \"x\")".into(),
        };
        let csv = h.line(OutputFormat::Csv);
        assert_eq!(
            csv,
            "# {\"gputraffic_shard\":{\"shard\":3,\"of\":8,\"sweep\":\"0123456789abcdef\",\
             \"configurations\":20,\"build\":\"0.1.0 (abc \\\"x\\\")\"}}\n"
        );
        let jsonl = h.line(OutputFormat::Jsonl);
        assert_eq!(jsonl, csv[2..]);
        assert_eq!(
            ShardHeader::parse(csv.trim_end()),
            Some((h.clone(), OutputFormat::Csv))
        );
        assert_eq!(
            ShardHeader::parse(jsonl.trim_end()),
            Some((h.clone(), OutputFormat::Jsonl))
        );
        // 3/8 of 20: configurations 2, 10, 18.
        assert_eq!(h.shard_configurations(), 3);
        assert_eq!(ShardHeader::parse("config,l1_scale"), None);
        assert_eq!(ShardHeader::parse("{\"config\":0}"), None);
    }

    #[test]
    fn fnv1a_matches_the_published_vectors() {
        // The FNV-1a 64 test vectors of the reference implementation.
        let hash = |s: &str| {
            let mut h = Fnv1a::default();
            h.write(s.as_bytes());
            h.hex()
        };
        assert_eq!(hash(""), "cbf29ce484222325");
        assert_eq!(hash("a"), "af63dc4c8601ec8c");
        assert_eq!(hash("foobar"), "85944171f73967e8");
    }

    #[test]
    fn lists_are_short() {
        let items: Vec<String> = (0..5).map(|i| i.to_string()).collect();
        assert_eq!(list(&items[..1], 3), "0");
        assert_eq!(list(&items[..3], 3), "0, 1 and 2");
        assert_eq!(list(&items, 3), "0, 1, 2 and 2 more");
    }
}
