//! nvcc and ptxas for `.cu` input: finding them (`--nvcc`, `$CUDA_HOME/bin`, `PATH`, the venv
//! `scripts/install-nvcc.sh` makes), compiling to PTX for the GPU's architecture with the PTX
//! cached by a hash of the source and the command (a `rank` of 50 shapes compiles once), reading
//! registers per thread and static shared memory off `ptxas -v`, and the parameter names of a
//! `__global__` signature.

use super::LiftOptions;
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What ptxas reports for one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// Registers per thread.
    pub registers: u32,
    /// Static shared memory per block, bytes.
    pub shared_bytes: u64,
    /// Bytes per thread spilled to local memory (stores).
    pub spill_bytes: u64,
}

/// A `.cu` file compiled: its PTX, ptxas's report per (mangled) entry, warnings.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// The PTX text (without line information: what nvcc writes without `-lineinfo`).
    pub ptx: String,
    /// The source line each PTX line compiles, where nvcc's line table says (index: PTX line
    /// less one), so that errors and warnings about a PTX line name the `.cu` line too.
    pub source_lines: Vec<Option<SourceLine>>,
    /// ptxas's report per entry, when ptxas ran.
    pub usage: HashMap<String, Usage>,
    /// What the user should know (no ptxas, …).
    pub warnings: Vec<String>,
}

/// A line of the CUDA source (or of a header it includes) that a PTX line compiles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceLine {
    /// The file as nvcc names it in its `.file` directive.
    pub file: String,
    /// Its line, from 1.
    pub line: u32,
}

/// Splits the PTX nvcc writes with `-lineinfo` into the PTX it writes without (the `.loc` and
/// `.file` directives dropped, every other line kept as it is) and the source line of each line
/// kept: the last `.loc` before it, with the file its `.file` names.
pub fn strip_line_info(raw: &str) -> (String, Vec<Option<SourceLine>>) {
    let mut files = HashMap::new();
    for l in raw.lines() {
        let mut words = l.split_whitespace();
        if words.next() == Some(".file")
            && let (Some(index), Some(name)) = (words.next(), words.next())
        {
            files.insert(index.to_string(), name.trim_matches('"').to_string());
        }
    }
    let (mut kept, mut lines, mut at) = (Vec::new(), Vec::new(), None);
    for l in raw.lines() {
        let mut words = l.split_whitespace();
        match words.next() {
            Some(".loc") => {
                let index = words.next().unwrap_or("");
                let line = words
                    .next()
                    .and_then(|w| w.trim_end_matches(',').parse().ok());
                at = files
                    .get(index)
                    .zip(line)
                    .filter(|(_, line)| *line > 0)
                    .map(|(file, line)| SourceLine {
                        file: file.clone(),
                        line,
                    });
            }
            Some(".file") => {}
            _ => {
                kept.push(l);
                lines.push(at.clone());
            }
        }
    }
    // A label (a loop's header) takes the line of the instruction it labels, not the last one
    // before it.
    let mut next_instruction = None;
    for (i, l) in kept.iter().enumerate().rev() {
        let l = l.trim();
        if l.ends_with(':') {
            lines[i] = next_instruction.clone();
        } else if !l.is_empty() && !l.starts_with('.') && !l.starts_with('/') {
            next_instruction = lines[i].clone();
        }
    }
    let mut ptx = String::with_capacity(raw.len());
    for l in kept {
        ptx.push_str(l);
        ptx.push('\n');
    }
    (ptx, lines)
}

/// `message` about PTX line N (`line N: …`, as the lifter writes it) with the source line it
/// compiles put first: `line 58 (PTX line 348): …` where the line is `file`'s, `line 12 of
/// lbm.cuh (PTX line 348): …` where it is a header's; unchanged where nothing is known.
pub fn with_source_line(message: &str, file: &Path, lines: &[Option<SourceLine>]) -> String {
    let Some((ptx_line, tail)) = message
        .strip_prefix("line ")
        .and_then(leading_number)
        .and_then(|(n, rest)| Some((n, rest.strip_prefix(':')?)))
    else {
        return message.to_string();
    };
    // Lines the message names further on ("the loop at line 341", "(line 321)") are PTX lines
    // too.
    let mut tail = tail.to_string();
    let mut from = 0;
    while let Some(found) = tail[from..].find("line ") {
        let (at, start) = (from + found, from + found + "line ".len());
        let named = leading_number(&tail[start..]).map(|(n, rest)| (n, tail.len() - rest.len()));
        let word_start = at == 0 || !tail.as_bytes()[at - 1].is_ascii_alphanumeric();
        match named.filter(|_| word_start) {
            Some((n, end)) => {
                let in_brackets = at > 0 && tail.as_bytes()[at - 1] == b'(';
                let place = match source_place(n, file, lines) {
                    Some(place) if in_brackets => format!("{place}, PTX line {n}"),
                    Some(place) => format!("{place} (PTX line {n})"),
                    None => format!("PTX line {n}"),
                };
                tail.replace_range(at..end, &place);
                from = at + place.len();
            }
            None => from = start,
        }
    }
    match source_place(ptx_line, file, lines) {
        Some(place) => format!("{place} (PTX line {ptx_line}):{tail}"),
        None => format!("PTX line {ptx_line}:{tail}"),
    }
}

/// The number `s` starts with and what follows it; `None` where it starts with no digit.
fn leading_number(s: &str) -> Option<(usize, &str)> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    Some((s[..digits].parse().ok()?, &s[digits..]))
}

/// `line L` where PTX line `ptx_line` compiles line L of `file`, `line L of header.cuh` where it
/// compiles a header's; `None` where the line table says nothing.
fn source_place(ptx_line: usize, file: &Path, lines: &[Option<SourceLine>]) -> Option<String> {
    let at = lines.get(ptx_line.checked_sub(1)?)?.as_ref()?;
    let name = Path::new(&at.file).file_name();
    if name == file.file_name() {
        Some(format!("line {}", at.line))
    } else {
        let name = name.and_then(|n| n.to_str()).unwrap_or(at.file.as_str());
        Some(format!("line {} of {name}", at.line))
    }
}

/// Reads `ptxas -v` output: registers, static shared memory and spills per entry.
pub fn parse_usage(report: &str) -> HashMap<String, Usage> {
    let mut out = HashMap::new();
    let mut current: Option<String> = None;
    for line in report.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            current = rest.split('\'').next().map(String::from);
            if let Some(c) = &current {
                out.insert(c.clone(), Usage::default());
            }
            continue;
        }
        let Some(u) = current.as_ref().and_then(|c| out.get_mut(c)) else {
            continue;
        };
        let number_before = |word: &str| -> Option<u64> {
            let at = line.find(word)?;
            line[..at].split_whitespace().last()?.parse().ok()
        };
        if let Some(r) = number_before(" registers") {
            u.registers = u32::try_from(r).unwrap_or(u32::MAX);
        }
        if let Some(s) = number_before(" bytes smem") {
            u.shared_bytes = s;
        }
        if let Some(s) = number_before(" bytes spill stores") {
            u.spill_bytes = s;
        }
    }
    out
}

/// The parameter names of `__global__ … name(…)` in CUDA source, in order.
pub fn signature_names(source: &str, name: &str) -> Option<Vec<String>> {
    let mut from = 0;
    while let Some(at) = source[from..].find("__global__") {
        let start = from + at;
        from = start + 1;
        let open = start + source[start..].find('(')?;
        let head = &source[start..open];
        let fname = head
            .trim_end()
            .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .next()?;
        if fname != name {
            continue;
        }
        let mut depth = 0;
        let mut close = None;
        for (i, c) in source[open..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(open + i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let params = &source[open + 1..close?];
        if params.trim().is_empty() || params.trim() == "void" {
            return Some(Vec::new());
        }
        let mut names = Vec::new();
        let mut depth = 0;
        let mut current = String::new();
        for c in params.chars().chain(std::iter::once(',')) {
            match c {
                '<' | '(' | '[' => depth += 1,
                '>' | ')' | ']' => depth -= 1,
                _ => {}
            }
            if c == ',' && depth == 0 {
                let decl = current.split('=').next().unwrap_or("");
                let decl = decl.split('[').next().unwrap_or("");
                let ident = decl
                    .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .find(|w| !w.is_empty())?;
                names.push(ident.to_string());
                current.clear();
            } else {
                current.push(c);
            }
        }
        return Some(names);
    }
    None
}

/// The venvs `scripts/install-nvcc.sh` makes: `nvcc-venv/lib/python*/site-packages/nvidia/cu*/bin`
/// in `$CARGO_TARGET_DIR` when set, and in `target/` under the working folder and under the
/// source tree this binary was built from.
fn venv_bins() -> Vec<PathBuf> {
    let mut targets: Vec<PathBuf> = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    targets.push(PathBuf::from("target"));
    targets.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    let mut out = Vec::new();
    for target in targets {
        let lib = target.join("nvcc-venv/lib");
        let Ok(pythons) = std::fs::read_dir(&lib) else {
            continue;
        };
        let mut found: Vec<PathBuf> = pythons
            .flatten()
            .flat_map(|p| {
                let nvidia = p.path().join("site-packages/nvidia");
                std::fs::read_dir(nvidia)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|c| c.path().join("bin"))
                    .collect::<Vec<_>>()
            })
            .filter(|b| b.join("nvcc").is_file())
            .collect();
        found.sort();
        out.extend(found.into_iter().rev());
    }
    out
}

/// Where `tool` (`nvcc` or `ptxas`) is: beside `--nvcc`, in `$CUDA_HOME/bin`, on `PATH`, or in
/// the project's venv.
pub fn find_tool(tool: &str, options: &LiftOptions) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(n) = &options.nvcc {
        let p = PathBuf::from(n);
        if p.is_dir() {
            dirs.push(p);
        } else if let Some(d) = p.parent() {
            if tool == "nvcc" {
                return p.is_file().then_some(p);
            }
            dirs.push(d.to_path_buf());
        }
    }
    if let Some(h) = std::env::var_os("CUDA_HOME") {
        dirs.push(PathBuf::from(h).join("bin"));
    }
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    dirs.extend(venv_bins());
    dirs.into_iter().map(|d| d.join(tool)).find(|p| p.is_file())
}

/// A 128-bit hex digest (two FNV-1a passes with different offsets) of the cache key parts.
fn digest(parts: &[&str]) -> String {
    let mut out = String::new();
    for seed in [0xcbf2_9ce4_8422_2325u64, 0x6c62_272e_07bb_0142] {
        let mut h = seed;
        for part in parts {
            for b in part.bytes().chain(std::iter::once(0)) {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
        out.push_str(&format!("{h:016x}"));
    }
    out
}

/// The folder compiled PTX is cached in: `$XDG_CACHE_HOME/gputraffic/ptx`, `~/.cache/…`, or the
/// system's temporary folder.
fn cache_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("gputraffic").join("ptx")
}

/// Runs a tool, its output or an error naming `source` and the tool's first complaint.
fn run(cmd: &mut Command, source: &Path, what: &str) -> Result<String> {
    let out = cmd
        .output()
        .map_err(|e| Error::in_file(source, format!("cannot run {what}: {e}")))?;
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    if !out.status.success() {
        let first = stderr
            .lines()
            .find(|l| l.contains("error"))
            .or_else(|| stderr.lines().next())
            .unwrap_or("no message");
        return Err(Error::in_file(source, format!("{what} failed: {first}")));
    }
    Ok(format!("{}{stderr}", String::from_utf8_lossy(&out.stdout)))
}

/// The architecture `.cu` files are compiled for.
fn arch(options: &LiftOptions) -> String {
    options.arch.clone().unwrap_or_else(|| "sm_90".into())
}

/// ptxas's report for a PTX file, when ptxas is at hand (else a warning, `None`).
pub fn ptx_usage(
    file: &Path,
    text: &str,
    options: &LiftOptions,
    warnings: &mut Vec<String>,
) -> Option<HashMap<String, Usage>> {
    let ptxas = find_tool("ptxas", options)?;
    let key = digest(&[&ptxas.display().to_string(), &arch(options), text]);
    let cached = cache_dir().join(format!("{key}.usage"));
    if let Ok(report) = std::fs::read_to_string(&cached) {
        return Some(parse_usage(&report));
    }
    let out = run(
        Command::new(&ptxas)
            .arg(format!("-arch={}", arch(options)))
            .arg("-v")
            .arg(file)
            .arg("-o")
            .arg(if cfg!(windows) { "NUL" } else { "/dev/null" }),
        file,
        "ptxas",
    );
    match out {
        Ok(report) => {
            let _ = crate::error::write_file_atomically(&cached, report.as_bytes());
            Some(parse_usage(&report))
        }
        Err(e) => {
            warnings.push(format!("{e} (registers per thread not read)"));
            None
        }
    }
}

/// The order in which the SASS ptxas makes of `text` issues each entry's global accesses, and
/// its runs of loads ([`super::sass`]), when ptxas and nvdisasm are at hand; else a warning and
/// `None` (the accesses then go in PTX order). Cached by a hash of the PTX and the tools.
pub fn issue_order(
    file: &Path,
    text: &str,
    options: &LiftOptions,
    warnings: &mut Vec<String>,
) -> Option<super::sass::IssueOrder> {
    let (Some(ptxas), Some(nvdisasm)) =
        (find_tool("ptxas", options), find_tool("nvdisasm", options))
    else {
        warnings.push(format!(
            "{}: ptxas or nvdisasm not found: the accesses go in PTX order with unbounded runs, not the compiled code's, and no atomic is known to be aggregated over the warp nor any if predicated (scripts/install-nvcc.sh installs both)",
            file.display()
        ));
        return None;
    };
    let arch = arch(options);
    let key = digest(&[
        "issue-order-1",
        &ptxas.display().to_string(),
        &nvdisasm.display().to_string(),
        &arch,
        text,
    ]);
    let dir = cache_dir();
    let cached = dir.join(format!("{key}.sass"));
    if let Ok(disassembly) = std::fs::read_to_string(&cached) {
        return Some(super::sass::parse(&disassembly));
    }
    let scratch = dir.join(format!(".{key}.{}", std::process::id()));
    let ptx = scratch.with_extension("ptx");
    let cubin = scratch.with_extension("cubin");
    let result = crate::error::create_parent(&ptx)
        .and_then(|_| {
            crate::error::write_file_atomically(&ptx, super::sass::annotate(text).as_bytes())
        })
        .and_then(|_| {
            run(
                Command::new(&ptxas)
                    .arg(format!("-arch={arch}"))
                    .arg("-lineinfo")
                    .arg(&ptx)
                    .arg("-o")
                    .arg(&cubin),
                file,
                "ptxas",
            )
        })
        .and_then(|_| {
            run(
                Command::new(&nvdisasm).arg("-g").arg("-c").arg(&cubin),
                file,
                "nvdisasm",
            )
        });
    let _ = std::fs::remove_file(&ptx);
    let _ = std::fs::remove_file(&cubin);
    match result {
        Ok(disassembly) => {
            let _ = crate::error::write_file_atomically(&cached, disassembly.as_bytes());
            Some(super::sass::parse(&disassembly))
        }
        Err(e) => {
            warnings.push(format!("{e} (the accesses go in PTX order)"));
            None
        }
    }
}

/// The paths and texts of the headers a source includes with `#include "…"`, found beside the
/// including file or in a `-I` folder, and theirs in turn: part of the cache key, so that a
/// changed header compiles afresh. System headers (`<…>`) come with nvcc and its path is in the
/// key already.
fn local_headers(file: &Path, source: &str, nvcc_args: &[String]) -> Vec<String> {
    let mut include_dirs: Vec<PathBuf> = Vec::new();
    let mut args = nvcc_args.iter();
    while let Some(a) = args.next() {
        if a == "-I" || a == "--include-path" {
            include_dirs.extend(args.next().map(PathBuf::from));
        } else if let Some(d) = a
            .strip_prefix("-I")
            .or_else(|| a.strip_prefix("--include-path="))
        {
            include_dirs.push(PathBuf::from(d));
        }
    }
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut out = Vec::new();
    let mut pending: Vec<(PathBuf, String)> = vec![(file.to_path_buf(), source.to_string())];
    while let Some((from, text)) = pending.pop() {
        for line in text.lines() {
            let Some(name) = line
                .trim_start()
                .strip_prefix('#')
                .map(str::trim_start)
                .and_then(|l| l.strip_prefix("include"))
                .map(str::trim)
                .and_then(|l| l.strip_prefix('"'))
                .and_then(|l| l.split('"').next())
            else {
                continue;
            };
            let beside = from.parent().map(|d| d.join(name));
            let found = beside
                .into_iter()
                .chain(include_dirs.iter().map(|d| d.join(name)))
                .find(|p| p.is_file());
            if let Some(path) = found
                && !seen.contains(&path)
                && let Ok(text) = std::fs::read_to_string(&path)
            {
                seen.push(path.clone());
                out.push(path.display().to_string());
                out.push(text.clone());
                pending.push((path, text));
            }
        }
    }
    out
}

/// Compiles a `.cu` file to PTX (or takes it from the cache) and reads ptxas's report.
pub fn compile(file: &Path, source: &str, options: &LiftOptions) -> Result<Compiled> {
    let nvcc = find_tool("nvcc", options).ok_or_else(|| {
        Error::in_file(
            file,
            "nvcc not found: pass --nvcc PATH, set CUDA_HOME, put it on PATH, or run scripts/install-nvcc.sh",
        )
    })?;
    let arch = arch(options);
    let nvcc_text = nvcc.display().to_string();
    let headers = local_headers(file, source, &options.nvcc_args);
    // -lineinfo: the PTX carries the source line of each instruction (stripped before lifting).
    let mut key_parts: Vec<&str> = vec![&nvcc_text, &arch, "-lineinfo", source];
    key_parts.extend(options.nvcc_args.iter().map(String::as_str));
    key_parts.extend(headers.iter().map(String::as_str));
    let key = digest(&key_parts);
    let dir = cache_dir();
    let ptx_path = dir.join(format!("{key}.ptx"));
    let usage_path = dir.join(format!("{key}.usage"));
    let mut warnings = Vec::new();
    if let (Ok(ptx), Ok(report)) = (
        std::fs::read_to_string(&ptx_path),
        std::fs::read_to_string(&usage_path),
    ) {
        let (ptx, source_lines) = strip_line_info(&ptx);
        return Ok(Compiled {
            ptx,
            source_lines,
            usage: parse_usage(&report),
            warnings,
        });
    }
    crate::error::create_parent(&ptx_path)?;
    let scratch = dir.join(format!(".{key}.{}.ptx", std::process::id()));
    let mut cmd = Command::new(&nvcc);
    cmd.arg(format!("-arch={arch}"))
        .arg("-O3")
        .arg("-ptx")
        .arg("-lineinfo")
        .args(&options.nvcc_args)
        .arg(file)
        .arg("-o")
        .arg(&scratch);
    // nvcc finds its own ptxas, cicc and headers beside it
    if let Some(bin) = nvcc.parent() {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut paths = vec![bin.to_path_buf()];
        paths.extend(std::env::split_paths(&path));
        if let Ok(joined) = std::env::join_paths(paths) {
            cmd.env("PATH", joined);
        }
    }
    let result = run(&mut cmd, file, "nvcc");
    let ptx = result.and_then(|_| crate::error::read_file(&scratch));
    let _ = std::fs::remove_file(&scratch);
    let ptx = ptx?;
    crate::error::write_file_atomically(&ptx_path, ptx.as_bytes())?;
    let report = match find_tool("ptxas", options) {
        Some(ptxas) => run(
            Command::new(ptxas)
                .arg(format!("-arch={arch}"))
                .arg("-v")
                .arg(&ptx_path)
                .arg("-o")
                .arg(if cfg!(windows) { "NUL" } else { "/dev/null" }),
            file,
            "ptxas",
        )?,
        None => {
            warnings.push(format!(
                "{}: ptxas not found beside nvcc: registers per thread not read",
                file.display()
            ));
            String::new()
        }
    };
    crate::error::write_file_atomically(&usage_path, report.as_bytes())?;
    let (ptx, source_lines) = strip_line_info(&ptx);
    Ok(Compiled {
        usage: parse_usage(&report),
        ptx,
        source_lines,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // What nvcc -lineinfo writes (shortened): `.loc FILE LINE COLUMN` before the instructions of
    // a source line, a label taking the line of what it labels, `.file` at the end.
    const WITH_LINE_INFO: &str = "\
.visible .entry k(
.param .u64 k_param_0
)
{
.reg .b32 %r<4>;
\t.loc\t1 7 0
\tmov.u32 %r1, %tid.x;
\t.loc\t2 3 5
\tadd.s32 %r2, %r1, 1;
$L__BB0_1:
\t.pragma \"nounroll\";
\t.loc\t1 9 3
\tld.global.f32 %f1, [%rd1];
\tret;
}
\t.file\t1 \"/home/u/src/kern.cu\"
\t.file\t2 \"/home/u/src/inc/util.cuh\"
";

    #[test]
    fn the_line_table_is_stripped_and_gives_each_ptx_line_its_source_line() {
        let (ptx, lines) = strip_line_info(WITH_LINE_INFO);
        let expected: String = (WITH_LINE_INFO.lines())
            .filter(|l| !l.trim_start().starts_with(".loc") && !l.trim_start().starts_with(".file"))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(ptx, expected);
        let at = |file: &str, line| {
            Some(SourceLine {
                file: file.into(),
                line,
            })
        };
        let (cu, cuh) = ("/home/u/src/kern.cu", "/home/u/src/inc/util.cuh");
        // k( .param ) { .reg | mov | add | label | pragma | ld | ret | }
        assert_eq!(
            lines,
            vec![
                None,
                None,
                None,
                None,
                None,
                at(cu, 7),
                at(cuh, 3),
                at(cu, 9),
                at(cuh, 3),
                at(cu, 9),
                at(cu, 9),
                at(cu, 9)
            ]
        );
    }

    #[test]
    fn a_message_about_a_ptx_line_names_the_source_line_and_its_references_too() {
        let (_, lines) = strip_line_info(WITH_LINE_INFO);
        let file = Path::new("src/kern.cu");
        let say = |m: &str| with_source_line(m, file, &lines);
        assert_eq!(
            say(
                "line 10: the address of this load cannot be lifted: it depends on the value loaded at line 7"
            ),
            "line 9 (PTX line 10): the address of this load cannot be lifted: it depends on the value loaded at line 3 of util.cuh (PTX line 7)"
        );
        assert_eq!(
            say(
                "line 10: a branch out of the loop at line 8 (an early exit) is not lifted: a floating-point comparison (line 6) is not lifted"
            ),
            "line 9 (PTX line 10): a branch out of the loop at line 9 (PTX line 8) (an early exit) is not lifted: a floating-point comparison (line 7, PTX line 6) is not lifted"
        );
        // a PTX line with no source line, and messages about no line, say so or stay
        assert_eq!(say("line 2: malformed"), "PTX line 2: malformed");
        assert_eq!(say("line 99: past the end"), "PTX line 99: past the end");
        assert_eq!(
            say("no `.entry` (kernel) in this PTX"),
            "no `.entry` (kernel) in this PTX"
        );
        assert_eq!(say("lines of 128 bytes"), "lines of 128 bytes");
    }

    #[test]
    fn headers_included_beside_the_source_or_by_dash_i_are_part_of_the_key() {
        let dir = std::env::temp_dir().join(format!("gputraffic-headers-{}", std::process::id()));
        let inc = dir.join("inc");
        std::fs::create_dir_all(&inc).unwrap();
        std::fs::write(dir.join("a.cuh"), "#include \"b.cuh\"\n#define A 1\n").unwrap();
        std::fs::write(inc.join("b.cuh"), "#define B 2\n").unwrap();
        let source = "#include <cstdio>\n  #  include \"a.cuh\"\n#include \"missing.cuh\"\n";
        let file = dir.join("k.cu");
        let args = vec![format!("-I{}", inc.display())];
        let headers = local_headers(&file, source, &args);
        // a.cuh beside the source, b.cuh through -I (included by a.cuh); <cstdio> and a missing
        // header are not followed
        assert_eq!(headers.len(), 4, "{headers:?}");
        assert!(headers[0].ends_with("a.cuh") && headers[1].contains("#define A 1"));
        assert!(headers[2].ends_with("b.cuh") && headers[3].contains("#define B 2"));
        // without -I, b.cuh is not found
        assert_eq!(local_headers(&file, source, &[]).len(), 2);
        std::fs::write(inc.join("b.cuh"), "#define B 3\n").unwrap();
        assert_ne!(local_headers(&file, source, &args), headers);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn ptxas_reports_read_per_entry() {
        let report = "ptxas info    : 0 bytes gmem\nptxas info    : Compiling entry function '_Z4copyPKdPdiiiil' for 'sm_90'\nptxas info    : Function properties for _Z4copyPKdPdiiiil\n    0 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\nptxas info    : Used 10 registers, used 0 barriers\nptxas info    : Compiling entry function '_Z1tv' for 'sm_90'\nptxas info    : Used 16 registers, used 1 barriers, 4224 bytes smem\n";
        let u = parse_usage(report);
        assert_eq!(
            u["_Z4copyPKdPdiiiil"],
            Usage {
                registers: 10,
                shared_bytes: 0,
                spill_bytes: 8
            }
        );
        assert_eq!(
            u["_Z1tv"],
            Usage {
                registers: 16,
                shared_bytes: 4224,
                spill_bytes: 0
            }
        );
    }

    #[test]
    fn signatures_give_the_parameter_names() {
        let src = "template <int R>\n__global__ void star(const double* __restrict__ in, double* out, int nx, long plane) {}\n__global__ void k(float a[4], int n = 3) {}";
        assert_eq!(
            signature_names(src, "star").unwrap(),
            vec!["in", "out", "nx", "plane"]
        );
        assert_eq!(signature_names(src, "k").unwrap(), vec!["a", "n"]);
        assert_eq!(signature_names(src, "missing"), None);
    }
}
