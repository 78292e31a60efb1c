//! Every `gputraffic …` command in the code blocks of README.md and docs/*.md runs: each file's
//! commands in order in a scratch folder of their own (so a later command finds what an earlier
//! one wrote), against the built binary, and must exit 0.
//!
//! The docs say themselves what the test needs, in HTML comments on the lines right before a
//! code block (invisible when rendered):
//! - `<!-- docs-test: skip (REASON) -->` skips the whole block (it needs nvcc, a GPU, a cluster or
//!   minutes of CPU); `<!-- docs-test: skip "TEXT" (REASON) -->` only its commands containing
//!   TEXT;
//! - `<!-- docs-test: given PATH = FILE -->` copies FILE of the repository to PATH in the scratch
//!   folder first: the sample data a command's input stands for (`runs/star4.csv` =
//!   `docs/data/star4-h200.csv`).
//!
//! A failure names the doc, the line and the command, with its stderr. Commands run through
//! `sh -c` with the binary first on PATH, so pipes, redirections and `&&` work as written.

use std::path::{Path, PathBuf};
use std::process::Command;

/// One command of a doc: the file, the line it starts on, the text (continuation lines joined).
#[derive(Debug)]
struct DocCommand {
    doc: String,
    line: usize,
    text: String,
    skip: Option<String>,
}

/// What the comments before a block say.
#[derive(Debug, Default)]
struct Directives {
    /// `(substring, reason)`; an empty substring skips every command.
    skips: Vec<(String, String)>,
    /// `(path in the scratch folder, file of the repository)`.
    given: Vec<(String, String)>,
}

fn parse_directive(line: &str, doc: &str, n: usize, d: &mut Directives) {
    let body = line
        .trim()
        .strip_prefix("<!-- docs-test:")
        .and_then(|r| r.strip_suffix("-->"))
        .unwrap_or_else(|| panic!("{doc}:{n}: a docs-test comment must be one line"))
        .trim();
    if let Some(rest) = body.strip_prefix("skip") {
        let rest = rest.trim();
        let (text, rest) = match rest.strip_prefix('"') {
            Some(r) => {
                let end = r
                    .find('"')
                    .unwrap_or_else(|| panic!("{doc}:{n}: unclosed quote"));
                (r[..end].to_string(), r[end + 1..].trim())
            }
            None => (String::new(), rest),
        };
        let reason = rest
            .strip_prefix('(')
            .and_then(|r| r.strip_suffix(')'))
            .filter(|r| !r.trim().is_empty())
            .unwrap_or_else(|| panic!("{doc}:{n}: a skip needs a reason in parentheses"));
        d.skips.push((text, reason.to_string()));
    } else if let Some(rest) = body.strip_prefix("given") {
        let (path, file) = rest
            .split_once('=')
            .unwrap_or_else(|| panic!("{doc}:{n}: given PATH = FILE"));
        d.given
            .push((path.trim().to_string(), file.trim().to_string()));
    } else {
        panic!("{doc}:{n}: unknown docs-test directive '{body}'");
    }
}

/// Whether a shell line runs gputraffic: its first word, or the first after `|`, `&&`, `&` or
/// `;` (and after a loop's `do`).
fn runs_gputraffic(line: &str) -> bool {
    line.split(['|', ';', '&']).any(|part| {
        let mut words = part.split_whitespace().skip_while(|w| *w == "do");
        words.next() == Some("gputraffic")
    })
}

/// The commands of one doc and the files they are given.
fn commands(doc: &str, text: &str) -> (Vec<DocCommand>, Vec<(String, String)>) {
    let mut out = Vec::new();
    let mut given = Vec::new();
    let mut pending = Directives::default();
    let mut block: Option<Directives> = None;
    let mut current: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let trimmed = raw.trim_start();
        if trimmed.starts_with("```") {
            block = match block {
                None => Some(std::mem::take(&mut pending)),
                Some(_) => None,
            };
            continue;
        }
        let Some(d) = &mut block else {
            if trimmed.starts_with("<!-- docs-test:") {
                parse_directive(trimmed, doc, n, &mut pending);
                given.append(&mut pending.given);
            } else if !trimmed.is_empty() {
                // Directives apply to the block right after them.
                pending.skips.clear();
            }
            continue;
        };
        let (start, mut joined) = current.take().unwrap_or((n, String::new()));
        let (piece, continues) = match raw.trim_end().strip_suffix('\\') {
            Some(p) => (p, true),
            None => (raw.trim_end(), false),
        };
        joined.push_str(piece.trim_start_matches("$ "));
        joined.push(' ');
        if continues {
            current = Some((start, joined));
            continue;
        }
        let command = joined.trim().to_string();
        if runs_gputraffic(&command) {
            let skip = d
                .skips
                .iter()
                .find(|(t, _)| t.is_empty() || command.contains(t.as_str()))
                .map(|(_, why)| why.clone());
            out.push(DocCommand {
                doc: doc.to_string(),
                line: start,
                text: command,
                skip,
            });
        }
    }
    (out, given)
}

fn docs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    let mut in_docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    in_docs.sort();
    files.extend(in_docs);
    files
}

#[test]
fn every_documented_command_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin = Path::new(env!("CARGO_BIN_EXE_gputraffic"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut failures = Vec::new();
    let (mut ran, mut skipped) = (0, Vec::new());
    for file in docs() {
        let doc = file.strip_prefix(root).unwrap().display().to_string();
        let text = std::fs::read_to_string(&file).unwrap();
        let (cmds, given) = commands(&doc, &text);
        if cmds.is_empty() {
            continue;
        }
        let dir = std::env::temp_dir().join(format!(
            "gputraffic-docs-{}-{}",
            std::process::id(),
            doc.replace(['/', '.'], "-")
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // The repository's inputs (traces/, tests/data/, validation/) where the docs name them.
        for entry in ["traces", "tests", "validation", "hw-configs", "docs"] {
            std::os::unix::fs::symlink(root.join(entry), dir.join(entry)).unwrap();
        }
        for (to, from) in &given {
            let to = dir.join(to);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(root.join(from), &to)
                .unwrap_or_else(|e| panic!("{doc}: given {from}: {e}"));
        }
        for c in cmds {
            if let Some(why) = &c.skip {
                skipped.push(format!("{}:{}: {} ({why})", c.doc, c.line, c.text));
                continue;
            }
            ran += 1;
            let out = Command::new("sh")
                .arg("-c")
                .arg(&c.text)
                .current_dir(&dir)
                .env("PATH", &path)
                .output()
                .unwrap();
            if !out.status.success() {
                let stderr = String::from_utf8_lossy(&out.stderr);
                failures.push(format!(
                    "{}:{}: `{}` exited {:?}: {}",
                    c.doc,
                    c.line,
                    c.text,
                    out.status.code(),
                    stderr.trim_end().lines().last().unwrap_or("")
                ));
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    eprintln!(
        "ran {ran} documented commands, skipped {}:\n  {}",
        skipped.len(),
        skipped.join("\n  ")
    );
    assert!(
        failures.is_empty(),
        "{} documented command(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // The skips are the exception: most documented commands must run.
    assert!(ran > skipped.len(), "ran {ran}, skipped {}", skipped.len());
}

#[test]
fn commands_are_read_as_the_docs_write_them() {
    let doc = "<!-- docs-test: given runs/a.csv = docs/data/x.csv -->\n\
               <!-- docs-test: skip \"all-1024\" (30 minutes) -->\n\
               ```sh\n\
               gputraffic sweep --blocks all-1024 \\\n    --out runs/a.csv   # slow\n\
               gputraffic plot hit-rate --input runs/a.csv --out h.png\n\
               my-generator | gputraffic simulate --kernel -\n\
               cargo build --release && cp target/release/gputraffic ~/bin/\n\
               ```\n\
               <!-- docs-test: skip (needs nvcc) -->\n\
               \n\
               text between\n\
               ```\n\
               gputraffic list\n\
               ```\n";
    let (cmds, given) = commands("d.md", doc);
    assert_eq!(given, [("runs/a.csv".into(), "docs/data/x.csv".into())]);
    let got: Vec<(usize, &str, Option<&str>)> = cmds
        .iter()
        .map(|c| (c.line, c.text.as_str(), c.skip.as_deref()))
        .collect();
    assert_eq!(
        got,
        [
            (
                4,
                "gputraffic sweep --blocks all-1024      --out runs/a.csv   # slow",
                Some("30 minutes")
            ),
            (
                6,
                "gputraffic plot hit-rate --input runs/a.csv --out h.png",
                None
            ),
            (7, "my-generator | gputraffic simulate --kernel -", None),
            // A skip not right before its block (text between) does not apply.
            (14, "gputraffic list", None),
        ]
    );
}
