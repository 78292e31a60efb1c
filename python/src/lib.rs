//! `gputraffic._native`: the Rust side of the Python package. Each function takes the command
//! line's arguments as plain values, runs the library with the GIL released, and hands back the
//! JSON text the command line prints (the Python side parses it), so that Python and the shell
//! always agree. Errors become `ValueError` with the command line's one-line message.

// Each function takes the options of one command, as Python keyword arguments.
#![allow(clippy::too_many_arguments)]

use gputraffic::analysis::sweep::{Sweep, SweepSpec};
use gputraffic::input::kernel_source::{KernelLanguage, lift_text};
use gputraffic::input::trace;
use gputraffic::models;
use gputraffic::report::Format;
use gputraffic::request::{
    KernelSource, LaunchSpec, LiftSettings, on_threads, rank_mode, sweep_kernel,
};
use gputraffic::sim::SimOptions;
use gputraffic::sim::sample::SampleOptions;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::collections::BTreeMap;

/// A library error as the `ValueError` Python users expect, with the CLI's message.
fn value_error(e: gputraffic::Error) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// A kernel description: parsed from TOML text (what a code generator writes), or lifted from
/// CUDA source or PTX text (`from_cuda`, `from_ptx`; its `text` is then the lifted trace).
#[pyclass(frozen, module = "gputraffic._native", name = "Kernel")]
struct Kernel {
    inner: trace::Kernel,
    text: String,
}

/// The lift keyword arguments as the library takes them: `grid` as `X,Y,Z` text or three
/// expressions, `extents` as {array: expression}.
fn lift_settings(
    entry: Option<String>,
    nvcc: Option<String>,
    options: Vec<String>,
    grid: Option<&Bound<'_, PyAny>>,
    registers: Option<u32>,
    extents: Option<BTreeMap<String, String>>,
    updates: Option<String>,
) -> PyResult<LiftSettings> {
    let grid = match grid {
        None => None,
        Some(g) => Some(match g.extract::<String>() {
            Ok(text) => text,
            Err(_) => g
                .extract::<Vec<Bound<'_, PyAny>>>()
                .map_err(|_| {
                    pyo3::exceptions::PyTypeError::new_err(
                        "grid must be \"X,Y,Z\" or three expressions (str or int)",
                    )
                })?
                .iter()
                .map(|p| p.str().map(|s| s.to_string()))
                .collect::<PyResult<Vec<_>>>()?
                .join(","),
        }),
    };
    Ok(LiftSettings {
        entry,
        nvcc,
        nvcc_args: options,
        grid,
        registers,
        extents: extents
            .unwrap_or_default()
            .into_iter()
            .map(|(name, expr)| format!("{name}={expr}"))
            .collect(),
        updates,
    })
}

/// Lifts `text` (in `language`) on a thread without the GIL; the lift's warnings become
/// Python `UserWarning`s.
#[allow(clippy::too_many_arguments)]
fn lifted_kernel(
    py: Python<'_>,
    text: &str,
    language: KernelLanguage,
    cuda: Option<&str>,
    source: &str,
    lift: LiftSettings,
    hw: &str,
    params: Option<BTreeMap<String, i64>>,
) -> PyResult<Kernel> {
    let set: Vec<String> = params
        .unwrap_or_default()
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let lifted = py
        .detach(|| {
            let hw = gputraffic::input::hw::HwConfig::load(hw)?;
            lift_text(text, language, cuda, source, &lift, &hw, &set)
        })
        .map_err(value_error)?;
    warn_all(py, &lifted.warnings)?;
    Ok(Kernel {
        inner: lifted.kernel,
        text: lifted.toml,
    })
}

/// Each of `warnings` as a Python `UserWarning`.
fn warn_all(py: Python<'_>, warnings: &[String]) -> PyResult<()> {
    for w in warnings {
        let message = std::ffi::CString::new(w.replace('\0', " ")).expect("no NUL left");
        PyErr::warn(
            py,
            &py.get_type::<pyo3::exceptions::PyUserWarning>(),
            &message,
            2,
        )?;
    }
    Ok(())
}

#[pymethods]
impl Kernel {
    /// Parses `text` (the trace format of docs/trace-format.md); `source` names it in errors.
    #[new]
    #[pyo3(signature = (text, source = "<kernel text>"))]
    fn new(text: &str, source: &str) -> PyResult<Kernel> {
        let inner = trace::Kernel::parse(text, source).map_err(value_error)?;
        Ok(Kernel {
            inner,
            text: text.to_string(),
        })
    }

    /// Lifts a kernel from CUDA source text (compiled to PTX by nvcc for `hw`'s architecture,
    /// as `gputraffic simulate --kernel FILE.cu` does): `entry` picks the kernel of a text
    /// holding several, `options` are passed to nvcc, `nvcc` names it (else `$CUDA_HOME/bin`,
    /// `PATH`, scripts/install-nvcc.sh's venv); `grid`, `registers`, `extents` and `updates` as
    /// the command line's options; `params` give parameters their default values. `source`
    /// names the text in messages.
    #[staticmethod]
    #[pyo3(signature = (source_text, entry = None, *, options = Vec::new(), nvcc = None, hw = "h200", grid = None, registers = None, extents = None, updates = None, params = None, source = "<cuda source>"))]
    fn from_cuda(
        py: Python<'_>,
        source_text: &str,
        entry: Option<String>,
        options: Vec<String>,
        nvcc: Option<String>,
        hw: &str,
        grid: Option<&Bound<'_, PyAny>>,
        registers: Option<u32>,
        extents: Option<BTreeMap<String, String>>,
        updates: Option<String>,
        params: Option<BTreeMap<String, i64>>,
        source: &str,
    ) -> PyResult<Kernel> {
        let lift = lift_settings(entry, nvcc, options, grid, registers, extents, updates)?;
        lifted_kernel(
            py,
            source_text,
            KernelLanguage::Cuda,
            None,
            source,
            lift,
            hw,
            params,
        )
    }

    /// Lifts a kernel from PTX text, as `gputraffic simulate --kernel FILE.ptx` does: `cuda`,
    /// the CUDA source it was compiled from, names the parameters (else `p0, p1, …`); registers
    /// come from ptxas when it is at hand; the other arguments as for `from_cuda`.
    #[staticmethod]
    #[pyo3(signature = (ptx_text, entry = None, *, cuda = None, hw = "h200", grid = None, registers = None, extents = None, updates = None, params = None, source = "<ptx text>"))]
    fn from_ptx(
        py: Python<'_>,
        ptx_text: &str,
        entry: Option<String>,
        cuda: Option<&str>,
        hw: &str,
        grid: Option<&Bound<'_, PyAny>>,
        registers: Option<u32>,
        extents: Option<BTreeMap<String, String>>,
        updates: Option<String>,
        params: Option<BTreeMap<String, i64>>,
        source: &str,
    ) -> PyResult<Kernel> {
        let lift = lift_settings(entry, None, Vec::new(), grid, registers, extents, updates)?;
        lifted_kernel(
            py,
            ptx_text,
            KernelLanguage::Ptx,
            cuda,
            source,
            lift,
            hw,
            params,
        )
    }

    /// The kernel's name.
    #[getter]
    fn name(&self) -> String {
        self.inner.name.clone()
    }

    /// The kernel's one-line description.
    #[getter]
    fn description(&self) -> String {
        self.inner.description.clone()
    }

    /// The TOML text it was parsed from.
    #[getter]
    fn text(&self) -> String {
        self.text.clone()
    }

    /// The parameters and their default values.
    #[getter]
    fn params(&self) -> BTreeMap<String, i64> {
        self.inner.params.clone()
    }

    /// The block shape used when none is given.
    #[getter]
    fn default_block(&self) -> (u32, u32, u32) {
        let [x, y, z] = self.inner.default_block;
        (x, y, z)
    }

    fn __repr__(&self) -> String {
        format!("Kernel(name={:?})", self.inner.name)
    }
}

/// The kernel argument: a `Kernel`, or a shipped name or path; a `.ptx` or `.cu` path is lifted
/// with the default settings for the GPUs `hws` (as the command line lifts it, see
/// [`gputraffic::request::sweep_kernel`]), its warnings as Python warnings.
fn kernel_source(
    py: Python<'_>,
    kernel: &Bound<'_, PyAny>,
    hws: &[String],
    set: &[String],
) -> PyResult<KernelSource> {
    if let Ok(k) = kernel.cast::<Kernel>() {
        return Ok(KernelSource::Parsed(Box::new(k.get().inner.clone())));
    }
    let name = kernel.extract::<String>().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(
            "kernel must be a shipped kernel name, a path, or a gputraffic.Kernel",
        )
    })?;
    let (source, warnings) = py
        .detach(|| sweep_kernel(&name, &LiftSettings::default(), hws, set))
        .map_err(value_error)?;
    warn_all(py, &warnings)?;
    Ok(source)
}

/// `gputraffic simulate --format json`: returns (JSON text, model warnings).
#[pyfunction]
#[pyo3(signature = (kernel, hw, block, domain, set, clock, compare, threads, infinite_l1, infinite_l2, compulsory, sample, by_array))]
fn simulate(
    py: Python<'_>,
    kernel: &Bound<'_, PyAny>,
    hw: String,
    block: Option<String>,
    domain: Option<String>,
    set: Vec<String>,
    clock: String,
    compare: Option<String>,
    threads: Option<usize>,
    infinite_l1: bool,
    infinite_l2: bool,
    compulsory: bool,
    sample: bool,
    by_array: bool,
) -> PyResult<(String, Vec<String>)> {
    let spec = LaunchSpec {
        kernel: kernel_source(py, kernel, std::slice::from_ref(&hw), &set)?,
        hw,
        block,
        domain,
        set,
        clock,
    };
    let opts = SimOptions {
        infinite_l1,
        infinite_l2,
        compulsory,
        sample: sample.then(SampleOptions::default),
        by_array,
        ..SimOptions::default()
    };
    py.detach(|| {
        let simulation = spec.simulation(compare.as_deref())?;
        let warnings = simulation.warnings().to_vec();
        let report = on_threads(threads, || simulation.run(&opts, &|_, _| {}))?;
        Ok((report.render(Format::Json), warnings))
    })
    .map_err(value_error)
}

/// `gputraffic predict --format json`: returns (JSON text, model warnings).
#[pyfunction]
#[pyo3(signature = (kernel, model, hw, block, domain, set, clock))]
fn predict(
    py: Python<'_>,
    kernel: &Bound<'_, PyAny>,
    model: String,
    hw: String,
    block: Option<String>,
    domain: Option<String>,
    set: Vec<String>,
    clock: String,
) -> PyResult<(String, Vec<String>)> {
    let spec = LaunchSpec {
        kernel: kernel_source(py, kernel, std::slice::from_ref(&hw), &set)?,
        hw,
        block,
        domain,
        set,
        clock,
    };
    py.detach(|| {
        let prediction = spec.prediction(&model)?;
        Ok((
            prediction.render(Format::Json),
            prediction.warnings().to_vec(),
        ))
    })
    .map_err(value_error)
}

/// `gputraffic rank --format json`: returns (JSON text, shapes skipped with the reason). By
/// default shapes are screened and the contenders confirmed exactly; `exact` simulates every
/// shape exactly, `sample` every shape sampled (not both).
#[pyfunction]
#[pyo3(signature = (kernel, blocks, hw, domain, set, clock, threads, sample, exact))]
#[allow(clippy::too_many_arguments)]
fn rank(
    py: Python<'_>,
    kernel: &Bound<'_, PyAny>,
    blocks: Vec<String>,
    hw: String,
    domain: Option<String>,
    set: Vec<String>,
    clock: String,
    threads: Option<usize>,
    sample: bool,
    exact: bool,
) -> PyResult<(String, Vec<String>)> {
    let mode = rank_mode(sample, exact).map_err(value_error)?;
    let spec = LaunchSpec {
        kernel: kernel_source(py, kernel, std::slice::from_ref(&hw), &set)?,
        hw,
        block: None,
        domain,
        set,
        clock,
    };
    py.detach(|| {
        let ranking = on_threads(threads, || spec.rank(&blocks, mode, false, &|_, _| {}))?;
        let json = serde_json::to_string(&ranking.to_json()).expect("JSON of plain values");
        Ok((json, ranking.skipped))
    })
    .map_err(value_error)
}

/// `gputraffic sweep` into memory: returns (a JSON array of the rows a `.jsonl` output would
/// hold, in configuration order; shapes of named sets that cannot launch).
#[pyfunction]
#[pyo3(signature = (kernel, blocks, hws, domains, set, l1_scales, l2_scales, models, clock, threads, sample))]
fn sweep(
    py: Python<'_>,
    kernel: &Bound<'_, PyAny>,
    blocks: Vec<String>,
    hws: Vec<String>,
    domains: Vec<String>,
    set: Vec<String>,
    l1_scales: Vec<f64>,
    l2_scales: Vec<f64>,
    models: Vec<String>,
    clock: String,
    threads: Option<usize>,
    sample: bool,
) -> PyResult<(String, Vec<String>)> {
    let kernel = kernel_source(py, kernel, &hws, &set)?;
    py.detach(|| {
        let spec = SweepSpec {
            kernel,
            hws,
            blocks,
            domains,
            sets: set,
            l1_scales,
            l2_scales,
            models: models::select(&models)?,
            clock,
            sample: sample.then(SampleOptions::default),
        };
        let plan = Sweep::plan(&spec)?;
        let rows = on_threads(threads, || plan.records(&|_, _| {}))?;
        let json = serde_json::to_string(&rows).expect("JSON of plain values");
        Ok((json, plan.skipped.clone()))
    })
    .map_err(value_error)
}

/// The shipped kernels: (name, description) pairs.
#[pyfunction]
fn list_kernels() -> Vec<(&'static str, String)> {
    gputraffic::input::shipped_kernels()
}

/// The shipped GPUs: (name, description) pairs.
#[pyfunction]
fn list_hw() -> Vec<(&'static str, String)> {
    gputraffic::input::shipped_hw()
}

/// The models as a JSON array of {name, summary, applies_to, params: [{name, default, doc}]}.
#[pyfunction]
fn list_models() -> String {
    serde_json::to_string(&gputraffic::request::listed_models()).expect("JSON of plain values")
}

/// The text of a shipped kernel or GPU configuration (`gputraffic show NAME`).
#[pyfunction]
fn show(name: &str) -> PyResult<String> {
    gputraffic::input::shipped_text(name)
        .map(str::to_string)
        .map_err(value_error)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Kernel>()?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(predict, m)?)?;
    m.add_function(wrap_pyfunction!(rank, m)?)?;
    m.add_function(wrap_pyfunction!(sweep, m)?)?;
    m.add_function(wrap_pyfunction!(list_kernels, m)?)?;
    m.add_function(wrap_pyfunction!(list_hw, m)?)?;
    m.add_function(wrap_pyfunction!(list_models, m)?)?;
    m.add_function(wrap_pyfunction!(show, m)?)?;
    Ok(())
}
