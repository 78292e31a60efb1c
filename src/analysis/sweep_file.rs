//! The sweep file format, in one place: the [`OutputFormat`] a file's name asks for, the
//! [`ShardHeader`] line in front of a shard (`sweep --shard K/N`, [`Shard`]), the [`Fnv1a`] hash
//! of a sweep's fingerprint, and reading a sweep's output back as a [`Table`] ([`read_table`]),
//! for `fit` and `plot`. [`crate::analysis::sweep`] writes these files and
//! [`crate::analysis::shard`] merges shards; both build on this module, which builds on neither.

use crate::error::{Error, Result};
use crate::input::table::Table;
use serde_json::Value;
use std::fmt;
use std::path::Path;

/// Output encoding, chosen from the file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    /// A header line, then one CSV line per configuration.
    Csv,
    /// One JSON object per line.
    Jsonl,
}

impl OutputFormat {
    /// JSONL for a `.jsonl` name, CSV otherwise.
    pub fn for_path(path: &Path) -> OutputFormat {
        if path.extension().is_some_and(|e| e == "jsonl") {
            OutputFormat::Jsonl
        } else {
            OutputFormat::Csv
        }
    }
}

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

/// Reads a sweep's output back (`.jsonl` as JSON lines, any other name as CSV): a shard's
/// header line is skipped, so a shard reads as the rows it holds.
pub fn read_table(path: &Path) -> Result<Table> {
    let text = crate::error::read_file(path)?;
    let text = match text.split_once('\n') {
        Some((first, rest)) if ShardHeader::parse(first).is_some() => rest,
        _ => &text,
    };
    Table::parse_named(text, path)
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
    fn a_shard_reads_back_as_its_rows() {
        let dir =
            std::env::temp_dir().join(format!("gputraffic-sweep-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let h = ShardHeader {
            shard: Shard::new(1, 2).unwrap(),
            sweep: "0123456789abcdef".into(),
            configurations: 3,
            build: build(),
        };
        let csv = dir.join("s.csv");
        std::fs::write(
            &csv,
            format!("{}config,x\n0,1.5\n2,3\n", h.line(OutputFormat::Csv)),
        )
        .unwrap();
        let t = read_table(&csv).unwrap();
        assert_eq!(t.columns, ["config", "x"]);
        assert_eq!(t.numbers("x").unwrap(), [Some(1.5), Some(3.0)]);
        let jsonl = dir.join("s.jsonl");
        std::fs::write(
            &jsonl,
            format!("{}{{\"config\":1}}\n", h.line(OutputFormat::Jsonl)),
        )
        .unwrap();
        assert_eq!(read_table(&jsonl).unwrap().rows, [["1"]]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
