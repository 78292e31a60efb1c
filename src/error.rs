//! Error type shared by every pipeline stage.
//!
//! Every user-facing failure (a malformed file, an impossible launch, an access outside its array)
//! becomes one [`Error`] whose message names the file and the problem; the binary prints it and exits
//! with code 2. Nothing in the library panics on bad input.

/// A user-facing error: the input named by `source` is wrong in the way `message` says.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{source_name}: {message}")]
pub struct Error {
    /// The file (or command-line option) the problem is in.
    pub source_name: String,
    /// What is wrong, in plain words.
    pub message: String,
}

impl Error {
    /// An error about the named input (a file path, or e.g. `--block`). Line breaks and other
    /// control characters (from quoted input, such as a CSV cell spanning lines) are escaped, so
    /// that the error is one line.
    pub fn new(source_name: impl Into<String>, message: impl Into<String>) -> Self {
        Error {
            source_name: one_line(source_name.into()),
            message: one_line(message.into()),
        }
    }

    /// An error about a file.
    pub fn in_file(path: &std::path::Path, message: impl Into<String>) -> Self {
        Error::new(path.display().to_string(), message)
    }
}

/// `s` with control characters escaped (`\n` as the two characters `\` `n`).
fn one_line(s: String) -> String {
    if !s.chars().any(char::is_control) {
        return s;
    }
    s.chars()
        .map(|c| match c {
            c if c.is_control() => c.escape_default().to_string(),
            c => c.to_string(),
        })
        .collect()
}

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Reads a file, turning I/O failures into an [`Error`] that names it.
pub fn read_file(path: &std::path::Path) -> Result<String> {
    std::fs::read_to_string(path)
        .map_err(|e| Error::in_file(path, format!("cannot read file: {e}")))
}

/// Creates the folders `path` is to be written in, when missing.
pub fn create_parent(path: &std::path::Path) -> Result<()> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() && !dir.exists() => std::fs::create_dir_all(dir)
            .map_err(|e| Error::in_file(path, format!("cannot create its folder: {e}"))),
        _ => Ok(()),
    }
}

/// Checks, before any work is done, that `path` can be written (an `--out` that fails only after
/// minutes of simulation loses them): creates its folder, refuses a folder, and creates and
/// removes a probe file beside it. An existing `path` is left as it is.
pub fn check_writable(path: &std::path::Path) -> Result<()> {
    if path.is_dir() {
        return Err(Error::in_file(path, "is a folder, not a file to write"));
    }
    let name = path
        .file_name()
        .ok_or_else(|| Error::in_file(path, "not a file name"))?;
    create_parent(path)?;
    let probe = path.with_file_name(format!(
        ".{}.{}.probe",
        name.to_string_lossy(),
        std::process::id()
    ));
    std::fs::File::create(&probe)
        .map_err(|e| Error::in_file(path, format!("cannot write there: {e}")))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Writes `bytes` to `path` (creating its folder) through a temporary file beside it and a rename, so that a failure
/// never leaves a partial file under the final name.
pub fn write_file_atomically(path: &std::path::Path, bytes: &[u8]) -> Result<()> {
    let name = path
        .file_name()
        .ok_or_else(|| Error::in_file(path, "not a file name"))?;
    create_parent(path)?;
    let temporary = path.with_file_name(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    std::fs::write(&temporary, bytes)
        .and_then(|()| std::fs::rename(&temporary, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&temporary);
            Error::in_file(path, format!("cannot write: {e}"))
        })
}

/// A place in a source file, 1-based; shown as `line L, column C`, the form every error that
/// points into a file uses. A kernel lifted from PTX points at the PTX line of each access and
/// loop (shown as `line L`), and at its printed trace for the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Position {
    /// Line, from 1.
    pub line: usize,
    /// Column in characters, from 1; 0 for a whole line (of a PTX file).
    pub column: usize,
    /// Whether this is a place in the trace a kernel was lifted to (the file named is the
    /// PTX or CUDA source it was lifted from, whose lines these are not).
    pub in_lifted_trace: bool,
}

impl Position {
    /// The position of byte `offset` of `text`.
    pub fn of(text: &str, offset: usize) -> Position {
        let (line, column) = line_column(text, offset);
        Position {
            line,
            column,
            in_lifted_trace: false,
        }
    }

    /// Line `line` of a file, as a whole (a PTX line).
    pub fn line(line: usize) -> Position {
        Position {
            line,
            column: 0,
            in_lifted_trace: false,
        }
    }
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.column == 0 {
            write!(f, "line {}", self.line)
        } else if self.in_lifted_trace {
            write!(
                f,
                "line {}, column {} of the lifted trace (as `gputraffic lift` prints it)",
                self.line, self.column
            )
        } else {
            write!(f, "line {}, column {}", self.line, self.column)
        }
    }
}

/// Converts a byte offset in `text` to a 1-based (line, column).
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |s| s.chars().count()) + 1;
    (line, column)
}

/// Deserialises TOML, turning a syntax or schema error into an [`Error`] that names the source and
/// the line and column.
pub fn from_toml<T: serde::de::DeserializeOwned>(text: &str, source_name: &str) -> Result<T> {
    toml::from_str(text).map_err(|e| {
        let message = e.message().to_string();
        match e.span() {
            Some(s) => Error::new(
                source_name,
                format!("{}: {message}", Position::of(text, s.start)),
            ),
            None => Error::new(source_name, message),
        }
    })
}
/// Levenshtein distance between two strings, by characters.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}
