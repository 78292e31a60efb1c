//! Where a kernel comes from, as a user names it: a trace (a path, a shipped name, `-`), a kernel
//! already parsed, or a `.ptx`/`.cu` file lifted ([`crate::input::ptx`]) with the user's
//! [`LiftSettings`]. The one place where every way in (the command line's `--kernel`, a
//! validation manifest's `kernel`, Python's `Kernel`) turns a kernel and its lift options into a
//! kernel, so that they all lift the same way.

use crate::error::{Error, Result};
use crate::input::hw::HwConfig;
use crate::input::ptx::{self, LiftOptions, Lifted};
use crate::input::trace::{self, Kernel};

/// A kernel by path or shipped name ([`trace::load`]), a `.ptx` or `.cu` file holding one kernel
/// lifted with the default options (for `sm_90`; the lift's warnings dropped: callers that have
/// lift settings or a GPU use [`KernelSource::resolve`]).
pub fn load(name_or_path: &str) -> Result<Kernel> {
    if ptx::is_liftable(name_or_path) && std::path::Path::new(name_or_path).is_file() {
        return ptx::lift_file(name_or_path, &LiftOptions::default()).map(|l| l.kernel);
    }
    trace::load(name_or_path)
}

/// Where the kernel comes from.
#[derive(Debug, Clone)]
pub enum KernelSource {
    /// A path, the name of a shipped trace, or `-` for standard input ([`trace::load`]).
    Load(String),
    /// A kernel already parsed, e.g. from the text a code generator produced, or lifted.
    Parsed(Box<Kernel>),
}

impl KernelSource {
    /// The kernel, loaded if need be.
    pub fn kernel(&self) -> Result<Kernel> {
        match self {
            KernelSource::Load(name) => load(name),
            KernelSource::Parsed(k) => Ok((**k).clone()),
        }
    }

    /// The kernel `kernel` names: a `.ptx` or `.cu` file is lifted now for the architecture of
    /// the GPU `hw` gives (called only then) with `lift` (parameters given in `set`,
    /// `NAME=VALUE`, need no default), anything else left to load as a trace, which takes no
    /// lift settings. Also returns the lift's warnings.
    pub fn resolve(
        kernel: &str,
        lift: &LiftSettings,
        hw: impl FnOnce() -> Result<HwConfig>,
        set: &[String],
    ) -> Result<(KernelSource, Vec<String>)> {
        if !ptx::is_liftable(kernel) {
            if !lift.is_empty() {
                return Err(Error::new(
                    "--kernel",
                    format!(
                        "'{kernel}' is a trace: {} apply to .ptx and .cu kernels only",
                        LiftSettings::NAMES.join(", ")
                    ),
                ));
            }
            return Ok((KernelSource::Load(kernel.to_string()), Vec::new()));
        }
        let lifted = ptx::lift_file(kernel, &lift.options(&hw()?, set)?)?;
        Ok((
            KernelSource::Parsed(Box::new(lifted.kernel)),
            lifted.warnings,
        ))
    }
}

/// How a `.ptx` or `.cu` kernel is lifted, as the user wrote it (docs/cuda.md): the command
/// line's `--entry`, `--nvcc`, `--nvcc-arg`, `--grid`, `--registers`, `--extent` and
/// `--updates`, a manifest launch's keys of the same names, Python's keyword arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LiftSettings {
    /// The kernel (entry) of a file holding several: its name, `name<args>`, or mangled name.
    pub entry: Option<String>,
    /// nvcc to compile `.cu` files with.
    pub nvcc: Option<String>,
    /// Options passed to nvcc (`-DNAME=V`, `-IDIR`, `-std=c++17`).
    pub nvcc_args: Vec<String>,
    /// The grid, three expressions `X,Y,Z` (else inferred from the guard).
    pub grid: Option<String>,
    /// Registers per thread (else read off ptxas).
    pub registers: Option<u32>,
    /// Elements of arrays, `NAME=EXPR` (else the guarded threads' footprint).
    pub extents: Vec<String>,
    /// Lattice updates of the launch, an expression (else the threads the guard lets through).
    pub updates: Option<String>,
}

impl LiftSettings {
    /// The settings' names, as the command line spells them.
    pub const NAMES: [&'static str; 7] = [
        "--entry",
        "--nvcc",
        "--nvcc-arg",
        "--grid",
        "--registers",
        "--extent",
        "--updates",
    ];

    /// Whether nothing is set.
    pub fn is_empty(&self) -> bool {
        *self == LiftSettings::default()
    }

    /// The lifter's options: compiling for `hw`'s architecture, and the integer values of
    /// `set` (`NAME=VALUE`) as the defaults of the parameters they name, which then need none
    /// (and no warning that they lack one).
    pub fn options(&self, hw: &HwConfig, set: &[String]) -> Result<LiftOptions> {
        let grid = match &self.grid {
            None => None,
            Some(g) => {
                let parts: Vec<String> = top_level_commas(g)
                    .iter()
                    .map(|p| p.trim().to_string())
                    .collect();
                let [x, y, z] = <[String; 3]>::try_from(parts).map_err(|_| {
                    Error::new("--grid", format!("'{g}' is not three expressions X,Y,Z"))
                })?;
                Some([x, y, z])
            }
        };
        let mut extents = Vec::new();
        for e in &self.extents {
            let (name, expr) = e
                .split_once('=')
                .ok_or_else(|| Error::new("--extent", format!("'{e}' is not NAME=EXPR")))?;
            extents.push((name.trim().to_string(), expr.trim().to_string()));
        }
        let defaults = set
            .iter()
            .filter_map(|s| s.split_once('='))
            .filter_map(|(n, v)| Some((n.trim().to_string(), v.trim().parse::<i64>().ok()?)))
            .collect();
        Ok(LiftOptions {
            entry: self.entry.clone(),
            grid,
            registers: self.registers,
            extents,
            updates: self.updates.clone(),
            defaults,
            nvcc: self.nvcc.clone(),
            nvcc_args: self.nvcc_args.clone(),
            arch: hw.arch.clone(),
            ..Default::default()
        })
    }
}

/// `s` split at the commas outside parentheses: `cdiv(nx, 32),ny,1` is three parts.
fn top_level_commas(s: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

/// What language a kernel's text is in, for [`lift_text`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelLanguage {
    /// PTX, as `nvcc -ptx` writes it.
    Ptx,
    /// CUDA C++ source, compiled to PTX by nvcc.
    Cuda,
}

/// Lifts a kernel handed over as text rather than a file (what a code generator prints):
/// exactly as [`KernelSource::resolve`] lifts a file holding `text` (PTX with `cuda`, the CUDA
/// source it came from, beside it to name the parameters), and every message names `source`
/// where it would name the file. The texts are written to a private scratch folder for nvcc and
/// ptxas, which is removed afterwards.
pub fn lift_text(
    text: &str,
    language: KernelLanguage,
    cuda: Option<&str>,
    source: &str,
    lift: &LiftSettings,
    hw: &HwConfig,
    set: &[String],
) -> Result<Lifted> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static SCRATCH: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "gputraffic-lift-{}-{}",
        std::process::id(),
        SCRATCH.fetch_add(1, Ordering::Relaxed)
    ));
    let file = dir.join(match language {
        KernelLanguage::Ptx => "kernel.ptx",
        KernelLanguage::Cuda => "kernel.cu",
    });
    let path = file.display().to_string();
    let named = |s: &str| s.replace(&path, source);
    let beside = match (language, cuda) {
        (KernelLanguage::Ptx, Some(cuda)) => {
            crate::error::write_file_atomically(&file.with_extension("cu"), cuda.as_bytes())
        }
        _ => Ok(()),
    };
    let lifted = beside
        .and_then(|()| crate::error::write_file_atomically(&file, text.as_bytes()))
        .and_then(|()| ptx::lift_file(&path, &lift.options(hw, set)?));
    let _ = std::fs::remove_dir_all(&dir);
    let lifted = lifted.map_err(|e| Error::new(named(&e.source_name), named(&e.message)))?;
    let toml = named(&lifted.toml);
    Ok(Lifted {
        kernel: Kernel::parse(&toml, source)?,
        toml,
        warnings: lifted.warnings.iter().map(|w| named(w)).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = "tests/data/ptx/stencils.ptx";

    #[test]
    fn lift_settings_on_a_trace_are_refused_by_name() {
        let hw = HwConfig::load("h200").unwrap();
        let lift = LiftSettings {
            entry: Some("copy".into()),
            ..Default::default()
        };
        let e = KernelSource::resolve("star1", &lift, || Ok(hw.clone()), &[]).unwrap_err();
        assert_eq!(e.source_name, "--kernel");
        assert!(
            e.message.starts_with("'star1' is a trace: --entry, --nvcc"),
            "{e}"
        );
        let (source, warnings) =
            KernelSource::resolve("star1", &LiftSettings::default(), || Ok(hw.clone()), &[])
                .unwrap();
        assert!(matches!(source, KernelSource::Load(ref n) if n == "star1"));
        assert!(warnings.is_empty());
    }

    #[test]
    fn settings_become_lift_options() {
        let hw = HwConfig::load("h200").unwrap();
        let lift = LiftSettings {
            grid: Some("cdiv(nx, 32), ny, 1".into()),
            extents: vec!["out = nx*ny".into()],
            registers: Some(40),
            ..Default::default()
        };
        let o = lift
            .options(&hw, &["nx=64".into(), "delta=0.5".into()])
            .unwrap();
        // commas inside a call do not split the grid
        assert_eq!(
            o.grid,
            Some(["cdiv(nx, 32)".to_string(), "ny".into(), "1".into()])
        );
        assert_eq!(o.extents, [("out".to_string(), "nx*ny".to_string())]);
        assert_eq!(o.registers, Some(40));
        // only integer settings are parameter defaults
        assert_eq!(o.defaults, [("nx".to_string(), 64)]);
        assert_eq!(o.arch, hw.arch);
        let bad = LiftSettings {
            extents: vec!["out".into()],
            ..Default::default()
        };
        let e = bad.options(&hw, &[]).unwrap_err();
        assert_eq!(e.to_string(), "--extent: 'out' is not NAME=EXPR");
    }

    #[test]
    fn text_lifts_as_its_file_does_and_messages_name_the_source() {
        let hw = HwConfig::load("h200").unwrap();
        let text = std::fs::read_to_string(FIXTURE).unwrap();
        let cuda = std::fs::read_to_string(FIXTURE.replace(".ptx", ".cu")).unwrap();
        let lift = LiftSettings {
            entry: Some("copy".into()),
            registers: Some(32),
            ..Default::default()
        };
        let lifted = |cuda| {
            lift_text(
                &text,
                KernelLanguage::Ptx,
                cuda,
                "<generated>",
                &lift,
                &hw,
                &[],
            )
        };
        let from_text = lifted(Some(&cuda)).unwrap();
        // without the source, the parameters go by position
        assert!(lifted(None).unwrap().kernel.params.contains_key("p2"));
        let (from_file, _) = KernelSource::resolve(FIXTURE, &lift, || Ok(hw.clone()), &[]).unwrap();
        let from_file = from_file.kernel().unwrap();
        assert_eq!(from_text.kernel.params, from_file.params);
        assert_eq!(from_text.kernel.default_block, from_file.default_block);
        assert!(
            !from_text.toml.contains("gputraffic-lift-"),
            "{}",
            from_text.toml
        );
        let lift = LiftSettings {
            entry: Some("nonesuch".into()),
            ..Default::default()
        };
        let e = lift_text(
            &text,
            KernelLanguage::Ptx,
            None,
            "<generated>",
            &lift,
            &hw,
            &[],
        )
        .unwrap_err();
        assert_eq!(e.source_name, "--entry");
        assert!(
            e.message
                .starts_with("no kernel 'nonesuch' in <generated>; it holds "),
            "{e}"
        );
    }
}
