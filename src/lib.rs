//! gputraffic: a trace-driven simulator of GPU memory traffic.
//!
//! The library follows the data: a kernel [`trace`] and a [`hw`] config are bound into a
//! [`launch`]; the [`schedule`] decides which warp instruction issues where and when; the per-SM
//! stage ([`sm`]) generates lane addresses, [`coalesce`]s them and runs the L1 ([`cache`]); the
//! [`l2`] and [`dram`] replay the SMs' requests in global order; [`report`] names the counts as
//! Nsight Compute does, and [`timing`] turns volumes into a time per limiter. [`sim::simulate`]
//! runs the whole pipeline; [`run`] adds file loading. Next to the simulator, [`models`] holds
//! the closed-form models of the literature, each predicting the same volumes; [`fit`] fits
//! model constants (a Gompertz hit-rate curve, Su et al.'s δ, ε, η) to sweep results;
//! [`validate`] compares simulations with [`measured`] hardware counters.
//! The `gputraffic` binary is a thin command line over this.

pub mod cache;
pub mod coalesce;
pub mod dram;
pub mod error;
pub mod expr;
pub mod fit;
pub mod hw;
pub mod l2;
pub mod launch;
pub mod measured;
pub mod models;
pub mod plot;
pub mod report;
pub mod schedule;
pub mod sim;
pub mod sm;
pub mod stats;
pub mod sweep;
pub mod table;
pub mod timing;
pub mod trace;
pub mod validate;

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

/// A kernel and a GPU, loaded and bound with the user's choices.
#[derive(Debug, Clone)]
pub struct Bound {
    /// The kernel trace.
    pub kernel: trace::Kernel,
    /// The GPU.
    pub hw: hw::HwConfig,
    /// The launch.
    pub launch: launch::Launch,
}

impl Bound {
    /// Binds an already loaded kernel to the GPU named `hw` (shipped name or path).
    pub fn new(kernel: trace::Kernel, hw: &str, req: &launch::LaunchRequest) -> Result<Bound> {
        Bound::with_hw(kernel, hw::HwConfig::load(hw)?, req)
    }

    /// Binds an already loaded kernel to an already loaded GPU config.
    pub fn with_hw(
        kernel: trace::Kernel,
        hw: hw::HwConfig,
        req: &launch::LaunchRequest,
    ) -> Result<Bound> {
        let launch = launch::Launch::new(&kernel, &hw, req)?;
        Ok(Bound { kernel, hw, launch })
    }

    /// Simulates the launch; the report includes the time model at `clock_ghz` (boost when
    /// `None`).
    pub fn simulate(
        &self,
        opts: &sim::SimOptions,
        clock_ghz: Option<f64>,
    ) -> Result<report::Report> {
        let counts = sim::simulate(&self.launch, &self.hw, opts)?;
        let inputs = timing::inputs_from_counts(&counts, &self.kernel, &self.launch);
        let time = timing::estimate(&self.hw, &self.kernel, &self.launch, &inputs, clock_ghz);
        Ok(report::Report::new(&self.launch, &self.hw, counts).with_time(time))
    }

    /// Runs `model` with its constants `params` on the launch; also returns the time model
    /// applied to the predicted volumes.
    pub fn predict(
        &self,
        model: &models::ModelInfo,
        params: &std::collections::BTreeMap<String, f64>,
        clock_ghz: Option<f64>,
    ) -> Result<(models::Prediction, timing::TimeEstimate)> {
        let input = models::ModelInput {
            kernel: &self.kernel,
            hw: &self.hw,
            launch: &self.launch,
            params,
        };
        let prediction = (model.predict)(&input)?;
        let mut inputs = prediction.volumes.time_inputs();
        inputs.flops = timing::launch_flops(&self.kernel, &self.launch);
        let time = timing::estimate(&self.hw, &self.kernel, &self.launch, &inputs, clock_ghz);
        Ok((prediction, time))
    }
}

/// Loads, binds and simulates: the whole of `gputraffic simulate` (time model at the boost clock).
pub fn run(
    kernel: &str,
    hw: &str,
    req: &launch::LaunchRequest,
    opts: &sim::SimOptions,
) -> Result<report::Report> {
    Bound::new(load_kernel(kernel)?, hw, req)?.simulate(opts, None)
}
