//! Kernels as written: PTX (or CUDA source, compiled to PTX by nvcc) lifted into a kernel trace,
//! so that a compiled kernel is simulated without anyone re-describing it by hand.
//!
//! [`parse`] reads the PTX statements, [`lift`] evaluates one entry symbolically (integer index
//! arithmetic, predicates, forward branches, counted loops) and writes the trace TOML, which
//! [`crate::input::trace::Kernel::parse`] reads back: what `gputraffic lift` prints is exactly
//! what `simulate --kernel file.ptx` simulates. [`nvcc`] finds nvcc and ptxas, compiles `.cu`
//! files (cached by content) and reads registers per thread. What cannot be lifted (an address
//! loaded from memory, a loop whose trip count is not affine, a call) is an error naming the
//! file, the PTX line (and, for a `.cu` file, its own line first) and the reason.

pub mod lift;
pub mod nvcc;
pub mod parse;
pub mod sass;
pub mod symbolic;

use crate::error::{Error, Result};
use crate::input::trace::Kernel;

/// What the user tells the lifter beyond the PTX (all optional).
#[derive(Debug, Clone, Default)]
pub struct LiftOptions {
    /// Which `.entry` (mangled name, plain name, or `name<args>` of a template instance).
    pub entry: Option<String>,
    /// Names of the parameters in order (from the CUDA source's `__global__` signature).
    pub param_names: Vec<String>,
    /// Grid expressions, x, y, z (else inferred from the guard).
    pub grid: Option<[String; 3]>,
    /// Default block shape of the trace.
    pub block: Option<[u32; 3]>,
    /// Registers per thread (from ptxas, or given).
    pub registers: Option<u32>,
    /// Static shared memory per block in bytes (from ptxas).
    pub shared_bytes: Option<u64>,
    /// Element count of arrays, by name (else the footprint of the guarded threads).
    pub extents: Vec<(String, String)>,
    /// Lattice updates of the launch (else the threads passing the guard).
    pub updates: Option<String>,
    /// Default values of scalar parameters.
    pub defaults: Vec<(String, i64)>,
    /// nvcc to use for `.cu` files (else `$CUDA_HOME/bin`, `PATH`, the project's venv).
    pub nvcc: Option<String>,
    /// The GPU whose architecture `.cu` files are compiled for (`sm_90`).
    pub arch: Option<String>,
    /// Extra nvcc options (`-D…`, `-I…`, `-std=…`).
    pub nvcc_args: Vec<String>,
    /// The order the compiled code issues each entry's accesses in, and its runs of loads (from
    /// ptxas and nvdisasm); without it the accesses go in PTX order, every run unbounded.
    pub issue_order: Option<std::sync::Arc<sass::IssueOrder>>,
}

/// A lifted kernel: the trace text, the parsed kernel and warnings for stderr.
#[derive(Debug, Clone)]
pub struct Lifted {
    /// The trace TOML.
    pub toml: String,
    /// The trace, parsed.
    pub kernel: Kernel,
    /// What the user should know (assumed registers, spills, parameters left at 0, …).
    pub warnings: Vec<String>,
}

/// Whether `path` names a file the lifter reads (`.ptx` or `.cu`).
pub fn is_liftable(path: &str) -> bool {
    path.ends_with(".ptx") || path.ends_with(".cu")
}

/// The readable name of a mangled entry: `_Z4starILi1EEvPKdPdiiiil` → `star<1>`,
/// `_Z4copyPKdPdiiiil` → `copy`; an unmangled name (`extern "C"`) is itself.
pub fn demangle(name: &str) -> String {
    let Some(rest) = name.strip_prefix("_Z") else {
        return name.to_string();
    };
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let Ok(len) = digits.parse::<usize>() else {
        return name.to_string();
    };
    let after = &rest[digits.len()..];
    let Some(base) = after.get(..len) else {
        return name.to_string();
    };
    let mut args = Vec::new();
    if let Some(mut t) = after[len..].strip_prefix('I') {
        // integer template arguments: Li<n>E (n<digits> for negatives)
        while let Some(lit) = t.strip_prefix('L') {
            let end = match lit.find('E') {
                Some(e) => e,
                None => break,
            };
            let body = &lit[..end];
            let value: String = body
                .trim_start_matches(|c: char| c.is_ascii_alphabetic())
                .to_string();
            let value = value
                .strip_prefix('n')
                .map_or(value.clone(), |v| format!("-{v}"));
            args.push(value);
            t = &lit[end + 1..];
        }
    }
    if args.is_empty() {
        base.to_string()
    } else {
        format!("{base}<{}>", args.join(", "))
    }
}

/// Lifts one entry of PTX text (`source` names it in errors).
pub fn lift_ptx(text: &str, source: &str, options: &LiftOptions) -> Result<Lifted> {
    let entries = parse::parse(text, source)?;
    if entries.is_empty() {
        return Err(Error::new(source, "no `.entry` (kernel) in this PTX"));
    }
    let listing = || {
        entries
            .iter()
            .map(|e| demangle(&e.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let entry = match &options.entry {
        None if entries.len() == 1 => &entries[0],
        None => {
            return Err(Error::new(
                source,
                format!(
                    "holds {} kernels ({}); pick one with --entry",
                    entries.len(),
                    listing()
                ),
            ));
        }
        Some(want) => {
            let exact: Vec<&parse::Entry> = entries
                .iter()
                .filter(|e| e.name == *want || demangle(&e.name) == *want)
                .collect();
            let by_base: Vec<&parse::Entry> = entries
                .iter()
                .filter(|e| demangle(&e.name).split('<').next() == Some(want.as_str()))
                .collect();
            match (exact.as_slice(), by_base.as_slice()) {
                ([e], _) | ([], [e]) => *e,
                ([], []) => {
                    return Err(Error::new(
                        "--entry",
                        format!("no kernel '{want}' in {source}; it holds {}", listing()),
                    ));
                }
                _ => {
                    return Err(Error::new(
                        "--entry",
                        format!("'{want}' names several kernels in {source}: {}", listing()),
                    ));
                }
            }
        }
    };
    let kernel_name = demangle(&entry.name);
    let lifted = lift::lift_entry(entry, source, &kernel_name, options)?;
    let mut kernel = Kernel::parse(&lifted.toml, source)?;
    kernel.point_into_ptx(&lifted.toml);
    Ok(Lifted {
        toml: lifted.toml,
        kernel,
        warnings: lifted.warnings,
    })
}

/// Lifts a `.ptx` file, or a `.cu` file through nvcc (PTX cached by content; registers, static
/// shared memory and parameter names from ptxas and the source).
pub fn lift_file(path: &str, options: &LiftOptions) -> Result<Lifted> {
    let file = std::path::Path::new(path);
    let text = crate::error::read_file(file)?;
    if path.ends_with(".cu") {
        let compiled = nvcc::compile(file, &text, options)?;
        let mut options = options.clone();
        // What names a line of the PTX, which the user never wrote, names the source line too.
        let at_source =
            |message: &str| nvcc::with_source_line(message, file, &compiled.source_lines);
        let at_source_error = |mut e: Error| {
            if e.source_name == path {
                e.message = at_source(&e.message);
            }
            e
        };
        let entries = parse::parse(&compiled.ptx, path).map_err(at_source_error)?;
        // the entry lifted decides which signature names its parameters
        let chosen = match &options.entry {
            Some(want) => entries.iter().find(|e| {
                e.name == *want
                    || demangle(&e.name) == *want
                    || demangle(&e.name).split('<').next() == Some(want.as_str())
            }),
            None if entries.len() == 1 => entries.first(),
            None => None,
        };
        let mut warnings = compiled.warnings.clone();
        if options.issue_order.is_none() {
            options.issue_order = nvcc::issue_order(file, &compiled.ptx, &options, &mut warnings)
                .map(std::sync::Arc::new);
        }
        if let Some(e) = chosen {
            let base = demangle(&e.name);
            let base = base.split('<').next().unwrap_or("");
            if options.param_names.is_empty()
                && let Some(names) = nvcc::signature_names(&text, base)
                && names.len() == e.params.len()
            {
                options.param_names = names;
            }
            if let Some(usage) = compiled.usage.get(&e.name) {
                options.registers = options.registers.or(Some(usage.registers));
                options.shared_bytes = options.shared_bytes.or(Some(usage.shared_bytes));
                if usage.spill_bytes > 0 {
                    warnings.push(format!(
                        "{path}: ptxas spills {} bytes per thread of {base} to local memory; that traffic is not modelled",
                        usage.spill_bytes
                    ));
                }
            }
        }
        let mut lifted = lift_ptx(&compiled.ptx, path, &options).map_err(at_source_error)?;
        warnings.append(&mut lifted.warnings);
        let prefix = format!("{path}: ");
        lifted.warnings = (warnings.iter())
            .map(|w| match w.strip_prefix(&prefix) {
                Some(rest) => format!("{prefix}{}", at_source(rest)),
                None => w.clone(),
            })
            .collect();
        return Ok(lifted);
    }
    let mut options = options.clone();
    let mut warnings = Vec::new();
    // the CUDA source beside the PTX (same stem) names the parameters
    if options.param_names.is_empty()
        && let Ok(source) = std::fs::read_to_string(file.with_extension("cu"))
    {
        let entries = parse::parse(&text, path)?;
        let chosen: Vec<&parse::Entry> = entries
            .iter()
            .filter(|e| {
                options.entry.as_ref().map_or(entries.len() == 1, |want| {
                    e.name == *want
                        || demangle(&e.name) == *want
                        || demangle(&e.name).split('<').next() == Some(want.as_str())
                })
            })
            .collect();
        if let [e] = chosen.as_slice() {
            let base = demangle(&e.name);
            let base = base.split('<').next().unwrap_or("");
            if let Some(names) = nvcc::signature_names(&source, base)
                && names.len() == e.params.len()
            {
                options.param_names = names;
            }
        }
    }
    if options.issue_order.is_none() {
        options.issue_order =
            nvcc::issue_order(file, &text, &options, &mut warnings).map(std::sync::Arc::new);
    }
    if options.registers.is_none()
        && let Some(usage) = nvcc::ptx_usage(file, &text, &options, &mut warnings)
    {
        let entries = parse::parse(&text, path)?;
        if let Some(e) = entries.iter().find(|e| {
            options.entry.as_ref().is_none_or(|want| {
                e.name == *want
                    || demangle(&e.name) == *want
                    || demangle(&e.name).split('<').next() == Some(want.as_str())
            })
        }) && let Some(u) = usage.get(&e.name)
        {
            options.registers = Some(u.registers);
            options.shared_bytes = options.shared_bytes.or(Some(u.shared_bytes));
        }
    }
    let mut lifted = lift_ptx(&text, path, &options)?;
    warnings.append(&mut lifted.warnings);
    lifted.warnings = warnings;
    Ok(lifted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_names_demangle_to_what_the_source_calls_them() {
        assert_eq!(demangle("_Z4starILi1EEvPKdPdiiiil"), "star<1>");
        assert_eq!(demangle("_Z4starILi4EEvPKdPdiiiil"), "star<4>");
        assert_eq!(demangle("_Z11star1_zloopPKdPdiiiili"), "star1_zloop");
        assert_eq!(demangle("kernel_c"), "kernel_c");
        assert_eq!(demangle("_Zbad"), "_Zbad");
    }
}
