//! The library's layers: every source file's `crate::` and `super::` imports (outside comments,
//! strings and `#[cfg(test)]` modules) form no circle between files, and each top-level folder or
//! file imports only the layers below it:
//!
//! shared leaves (`error`, `metrics`, `choice`) → `input` → `launch` → `sim` → `timing` →
//! `models` → `report` → `lib.rs` (`Bound`) → `analysis` → `plot` → the front ends
//! (`request.rs`, `main.rs`).
//!
//! The shared leaves are names and helpers every layer may use (`Error`, the Nsight Compute
//! metric names, the trait of enums picked by name); they import nothing of the crate but each
//! other. An edge the rules refuse fails the test with the file, the import and the two layers.
//! Run it alone with `cargo test --test layers`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The layers, bottom first: a top-level module (folder or file under `src/`) imports only its
/// own layer's files and those of the layers before it.
const LAYERS: &[&[&str]] = &[
    &["error", "metrics", "choice"],
    &["input"],
    &["launch"],
    &["sim"],
    &["timing"],
    &["models"],
    &["report"],
    &["lib"],
    &["analysis"],
    &["plot"],
    &["request", "main"],
];

/// Names `lib.rs` re-exports from a lower file: an import of `crate::NAME` is one of that file.
const ROOT_REEXPORTS: &[(&str, &str)] = &[("Error", "error.rs"), ("Result", "error.rs")];

/// Edges allowed to break the rules while work on other branches is in flight, each to be
/// removed at its merge (an entry that no longer occurs fails the test, so the list cannot go
/// stale). None now: the sweep/front-end circle and the lifter's `trace` ↔ `ptx` circle are gone
/// (a `.ptx`/`.cu` path is lifted in `input/kernel_source.rs`, above both).
const KNOWN_UNTIL_MERGE: &[(&str, &str)] = &[];

/// Every `.rs` file under `dir`, as paths relative to `src/`.
fn sources(src: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            sources(src, &p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p.strip_prefix(src).unwrap().to_path_buf());
        }
    }
}

/// The code of a Rust file with comments, string and char literals blanked (each replaced by
/// spaces, newlines kept), so that only real paths remain.
fn code_only(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, ch: char| out.push(if ch == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < c.len() {
        let at = |k: usize| c.get(i + k).copied().unwrap_or('\0');
        if at(0) == '/' && at(1) == '/' {
            while i < c.len() && c[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if at(0) == '/' && at(1) == '*' {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
        } else if at(0) == 'r'
            && (at(1) == '"' || (at(1) == '#' && (at(2) == '"' || at(2) == '#')))
            && (i == 0 || !(c[i - 1].is_alphanumeric() || c[i - 1] == '_'))
        {
            // A raw string: r"…", r#"…"#, …
            let mut hashes = 0;
            let mut j = i + 1;
            while c[j] == '#' {
                hashes += 1;
                j += 1;
            }
            j += 1;
            let closes = |j: usize| c[j] == '"' && (1..=hashes).all(|h| c.get(j + h) == Some(&'#'));
            while j < c.len() && !closes(j) {
                j += 1;
            }
            let end = (j + 1 + hashes).min(c.len());
            for &ch in &c[i..end] {
                blank(&mut out, ch);
            }
            i = end;
        } else if at(0) == '"' {
            let mut j = i + 1;
            while j < c.len() && c[j] != '"' {
                j += if c[j] == '\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(c.len());
            for &ch in &c[i..end] {
                blank(&mut out, ch);
            }
            i = end;
        } else if at(0) == '\'' && (at(2) == '\'' || (at(1) == '\\' && at(3) == '\'')) {
            // A char literal ('x', '\n'); a lifetime ('a) has no closing quote there.
            let len = if at(1) == '\\' { 4 } else { 3 };
            out.push_str(&" ".repeat(len));
            i += len;
        } else if at(0) == '\'' && at(1) == '\\' {
            // '\u{…}' or '\x..'
            let mut j = i + 2;
            while j < c.len() && c[j] != '\'' {
                j += 1;
            }
            out.push_str(&" ".repeat(j + 1 - i));
            i = j + 1;
        } else {
            out.push(at(0));
            i += 1;
        }
    }
    out
}

/// `code` without its `#[cfg(test)]` items (the test modules): the attribute and the braced
/// block that follows are blanked.
fn without_tests(code: &str) -> String {
    let mut code = code.to_string();
    while let Some(at) = code.find("#[cfg(test)]") {
        let open = at + code[at..].find('{').expect("a test module has a body");
        let semi = code[at..].find(';').map(|s| at + s);
        // `#[cfg(test)] use …;` or `mod x;` ends at its semicolon.
        let end = if semi.is_some_and(|s| s < open) {
            semi.unwrap() + 1
        } else {
            let mut depth = 0;
            let mut end = open;
            for (k, ch) in code[open..].char_indices() {
                match ch {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            end = open + k + 1;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            end
        };
        let blanked: String = code[at..end]
            .chars()
            .map(|ch| if ch == '\n' { '\n' } else { ' ' })
            .collect();
        code.replace_range(at..end, &blanked);
    }
    code
}

/// The module path of a file (`sim/cache.rs` → `["sim", "cache"]`, `sim/mod.rs` → `["sim"]`,
/// `lib.rs` → `[]`).
fn module_of(file: &Path) -> Vec<String> {
    let mut parts: Vec<String> = file
        .with_extension("")
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if parts
        .last()
        .is_some_and(|p| p == "mod" || p == "lib" || p == "main")
    {
        parts.pop();
    }
    parts
}

/// The paths of one `use` tree or path starting at `at` (just after `crate::` or `super::`):
/// `a::b::C`, `a::{b, c::D}`, … each as its segments.
fn paths_at(code: &[u8], mut at: usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    let mut path = prefix;
    loop {
        while at < code.len() && code[at].is_ascii_whitespace() {
            at += 1;
        }
        if at < code.len() && code[at] == b'{' {
            at += 1;
            loop {
                at = paths_at(code, at, path.clone(), out);
                while at < code.len() && (code[at].is_ascii_whitespace() || code[at] == b',') {
                    at += 1;
                }
                if at >= code.len() || code[at] == b'}' {
                    return at + 1;
                }
            }
        }
        let start = at;
        while at < code.len() && (code[at].is_ascii_alphanumeric() || code[at] == b'_') {
            at += 1;
        }
        if start == at {
            out.push(path);
            return at;
        }
        path.push(String::from_utf8_lossy(&code[start..at]).into_owned());
        if code[at..].starts_with(b"::") {
            at += 2;
        } else {
            out.push(path);
            return at;
        }
    }
}

/// The files (relative to `src/`) that `file`'s code imports through `crate::` and `super::`.
fn imports(file: &Path, code: &str, files: &BTreeSet<PathBuf>) -> BTreeSet<PathBuf> {
    let bytes = code.as_bytes();
    let here = module_of(file);
    let mut paths = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let word_start = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        if word_start && bytes[i..].starts_with(b"crate::") {
            i = paths_at(bytes, i + 7, Vec::new(), &mut paths);
        } else if word_start && bytes[i..].starts_with(b"super::") {
            let mut base = here.clone();
            while bytes[i..].starts_with(b"super::") {
                base.pop();
                i += 7;
            }
            i = paths_at(bytes, i, base, &mut paths);
        } else {
            i += 1;
        }
    }
    let mut found = BTreeSet::new();
    for path in paths {
        if let Some(first) = path.first()
            && let Some((_, origin)) = ROOT_REEXPORTS.iter().find(|(n, _)| n == first)
        {
            found.insert(PathBuf::from(origin));
            continue;
        }
        // The longest prefix of the path that is a file; the crate root when none is.
        let target = (1..=path.len())
            .rev()
            .find_map(|n| {
                let dir: PathBuf = path[..n].iter().collect();
                [dir.with_extension("rs"), dir.join("mod.rs")]
                    .into_iter()
                    .find(|f| files.contains(f))
            })
            .unwrap_or_else(|| PathBuf::from("lib.rs"));
        if target != file {
            found.insert(target);
        }
    }
    found
}

/// The top-level module of a file (`sim/cache.rs` → `sim`, `lib.rs` → `lib`).
fn top(file: &Path) -> String {
    let first = file.iter().next().unwrap().to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

fn layer_of(top: &str) -> usize {
    LAYERS
        .iter()
        .position(|l| l.contains(&top))
        .unwrap_or_else(|| panic!("src/{top}: in no layer of tests/layers.rs's LAYERS"))
}

/// Every file's imports, read from `src/`.
fn import_graph() -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut list = Vec::new();
    sources(&src, &src, &mut list);
    let files: BTreeSet<PathBuf> = list.iter().cloned().collect();
    list.iter()
        .map(|f| {
            let text = fs::read_to_string(src.join(f)).unwrap();
            let code = without_tests(&code_only(&text));
            (f.clone(), imports(f, &code, &files))
        })
        .collect()
}

fn known(from: &Path, to: &Path) -> bool {
    KNOWN_UNTIL_MERGE
        .iter()
        .any(|(a, b)| Path::new(a) == from && Path::new(b) == to)
}

/// The circles among `graph`'s edges (Tarjan's strongly connected components of more than one
/// file, or of a file importing itself), each sorted.
fn circles(graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: BTreeMap<&'a PathBuf, usize>,
        low: BTreeMap<&'a PathBuf, usize>,
        stack: Vec<&'a PathBuf>,
        on_stack: BTreeSet<&'a PathBuf>,
        found: Vec<Vec<PathBuf>>,
    }
    fn visit<'a>(w: &mut Walk<'a>, v: &'a PathBuf) {
        let n = w.index.len();
        w.index.insert(v, n);
        w.low.insert(v, n);
        w.stack.push(v);
        w.on_stack.insert(v);
        for u in w.graph.get(v).into_iter().flatten() {
            if !w.index.contains_key(u) {
                visit(w, u);
                let low = w.low[u].min(w.low[v]);
                w.low.insert(v, low);
            } else if w.on_stack.contains(u) {
                let low = w.index[u].min(w.low[v]);
                w.low.insert(v, low);
            }
        }
        if w.low[v] == w.index[v] {
            let mut component = Vec::new();
            loop {
                let u = w.stack.pop().unwrap();
                w.on_stack.remove(u);
                component.push(u.clone());
                if u == v {
                    break;
                }
            }
            if component.len() > 1 || w.graph.get(v).is_some_and(|s| s.contains(v)) {
                component.sort();
                w.found.push(component);
            }
        }
    }
    let mut w = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !w.index.contains_key(v) {
            visit(&mut w, v);
        }
    }
    w.found
}

#[test]
fn no_file_imports_itself_back_through_a_circle() {
    let mut graph = import_graph();
    for (from, to) in graph.iter_mut() {
        to.retain(|t| !known(from, t));
    }
    let found = circles(&graph);
    assert!(found.is_empty(), "import circles between files: {found:?}");
}

#[test]
fn every_layer_imports_only_the_layers_below_it() {
    let graph = import_graph();
    let mut wrong = Vec::new();
    let mut used_known = BTreeSet::new();
    for (from, tos) in &graph {
        let from_layer = layer_of(&top(from));
        for to in tos {
            let to_layer = layer_of(&top(to));
            // Within one top-level module any file may import another (circles aside).
            if top(from) == top(to) || to_layer < from_layer {
                continue;
            }
            if to_layer == from_layer && from_layer == 0 {
                continue;
            }
            if known(from, to) {
                used_known.insert((from.clone(), to.clone()));
                continue;
            }
            wrong.push(format!(
                "src/{} imports src/{} ({} is not below {})",
                from.display(),
                to.display(),
                top(to),
                top(from)
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layers:\n{}",
        wrong.join("\n")
    );
    // Every known edge must still occur (as an edge against the layers or in a circle).
    for (a, b) in KNOWN_UNTIL_MERGE {
        let occurs = graph
            .get(Path::new(a))
            .is_some_and(|s| s.contains(Path::new(b)));
        assert!(
            occurs,
            "KNOWN_UNTIL_MERGE lists {a} -> {b}, which no longer occurs"
        );
    }
}

#[test]
fn the_reader_finds_real_imports_and_skips_comments_strings_and_tests() {
    let files: BTreeSet<PathBuf> = [
        "lib.rs",
        "error.rs",
        "sim/mod.rs",
        "sim/cache.rs",
        "input/hw.rs",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    let text = r##"
        use crate::input::hw::{HwConfig, Cache};
        use super::{cache::Set, Counts};
        // use crate::report::Report;
        /* crate::analysis::x /* nested */ crate::plot::y */
        const S: &str = "crate::models::Model";
        const R: &str = r#"crate::timing::estimate"#;
        fn f<'a>(c: char) -> crate::Result<()> { let _ = '"'; Ok(()) }
        #[cfg(test)]
        mod tests { use crate::launch::Launch; }
    "##;
    let code = without_tests(&code_only(text));
    let got = imports(Path::new("sim/cache.rs"), &code, &files);
    let want: BTreeSet<PathBuf> = ["input/hw.rs", "sim/mod.rs", "error.rs"]
        .iter()
        .map(PathBuf::from)
        .collect();
    assert_eq!(got, want);
    // A circle of two and an edge out of it.
    let graph: BTreeMap<PathBuf, BTreeSet<PathBuf>> = [
        ("a.rs", vec!["b.rs"]),
        ("b.rs", vec!["a.rs", "c.rs"]),
        ("c.rs", vec![]),
    ]
    .into_iter()
    .map(|(f, t)| (PathBuf::from(f), t.into_iter().map(PathBuf::from).collect()))
    .collect();
    assert_eq!(
        circles(&graph),
        vec![vec![PathBuf::from("a.rs"), PathBuf::from("b.rs")]]
    );
}
