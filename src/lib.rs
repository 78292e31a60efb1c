//! gputraffic: a trace-driven simulator of GPU memory traffic.
//!
//! The library follows the data: a kernel [`trace`] and a [`hw`] config are bound into a
//! [`launch`]; the [`schedule`] decides which warp instruction issues where and when; the per-SM
//! stage ([`sm`]) generates lane addresses, [`coalesce`]s them and runs the L1 ([`cache`]); the
//! [`l2`] and [`dram`] replay the SMs' requests in global order; [`report`] names the counts as
//! Nsight Compute does. [`sim::simulate`] runs the whole pipeline; [`run`] adds file loading.
//! The `gputraffic` binary is a thin command line over this.

pub mod cache;
pub mod coalesce;
pub mod dram;
pub mod error;
pub mod expr;
pub mod hw;
pub mod l2;
pub mod launch;
pub mod models;
pub mod report;
pub mod schedule;
pub mod sim;
pub mod sm;
pub mod trace;

pub use error::{Error, Result};

/// Loads a kernel by path, or by the name of a shipped trace (`star1` → `traces/star1.toml`).
pub fn load_kernel(name_or_path: &str) -> Result<trace::Kernel> {
    let path = std::path::Path::new(name_or_path);
    if path.exists() {
        return trace::Kernel::load(path);
    }
    let stem = name_or_path
        .trim_end_matches(".toml")
        .rsplit('/')
        .next()
        .unwrap_or(name_or_path);
    if let Some((_, text)) = trace::SHIPPED
        .iter()
        .find(|(n, _)| *n == stem || n.replace('-', "_") == stem.replace('-', "_"))
    {
        return trace::Kernel::parse(text, &format!("traces/{stem}.toml"));
    }
    let names: Vec<&str> = trace::SHIPPED.iter().map(|(n, _)| *n).collect();
    Err(Error::new(
        "--kernel",
        format!(
            "'{name_or_path}' is neither a file nor a shipped trace ({})",
            names.join(", ")
        ),
    ))
}

/// Loads, binds and simulates: the whole of `gputraffic simulate`.
pub fn run(
    kernel: &str,
    hw: &str,
    req: &launch::LaunchRequest,
    opts: &sim::SimOptions,
) -> Result<report::Report> {
    let kernel = load_kernel(kernel)?;
    let hw = hw::HwConfig::load(hw)?;
    let launch = launch::Launch::new(&kernel, &hw, req)?;
    let counts = sim::simulate(&launch, &hw, opts)?;
    Ok(report::Report::new(&launch, &hw, counts))
}
