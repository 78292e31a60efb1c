//! gputraffic: a trace-driven simulator of GPU memory traffic.
//!
//! The library follows the data: a kernel trace and a GPU config ([`input`]) are bound into a
//! [`launch`]; the [`sim`] pipeline schedules warp instructions, generates and coalesces lane
//! addresses, runs the per-SM L1s in parallel and replays the L2 and DRAM in global order;
//! [`report`] names the counts as Nsight Compute does ([`metrics`] spells every name once), and
//! [`timing`] turns volumes into time. [`Bound`] ties a loaded kernel and GPU together; [`run`]
//! adds file loading. Next to the simulator, [`models`] holds the closed-form models of the
//! literature, each predicting the same volumes; [`analysis`] sweeps configurations, fits model
//! constants and validates simulations against measured hardware counters; [`plot`] draws them.
//! The `gputraffic` binary is a thin command line over this; enums it offers by name implement
//! [`choice::Choice`].

pub mod analysis;
pub mod choice;
pub mod error;
pub mod input;
pub mod launch;
pub mod metrics;
pub mod models;
pub mod plot;
pub mod report;
pub mod request;
pub mod sim;
pub mod timing;

pub use error::{Error, Result};
use input::{hw, trace};

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

    /// Simulates the launch; the report includes the time model at `clock_ghz` (the base clock
    /// when `None`, [`timing::default_clock_ghz`]). Arrays larger than the GPU's memory are an error unless
    /// [`sim::SimOptions::exceed_memory`].
    pub fn simulate(
        &self,
        opts: &sim::SimOptions,
        clock_ghz: Option<f64>,
    ) -> Result<report::Report> {
        self.simulate_with_progress(opts, clock_ghz, &|_, _| {})
    }

    /// [`Bound::simulate`], calling `progress(blocks dispatched, total blocks)` as it goes.
    pub fn simulate_with_progress(
        &self,
        opts: &sim::SimOptions,
        clock_ghz: Option<f64>,
        progress: &(dyn Fn(u64, u64) + Sync),
    ) -> Result<report::Report> {
        self.simulate_given(opts, clock_ghz, None, progress)
    }

    /// [`Bound::simulate_with_progress`], given for a sampled run the L1 counts that the
    /// addresses alone decide when already worked out ([`sim::simulate_sampled_given`]; not
    /// read by an exact run).
    pub fn simulate_given(
        &self,
        opts: &sim::SimOptions,
        clock_ghz: Option<f64>,
        exact_l1: Option<sim::counters::L1Counters>,
        progress: &(dyn Fn(u64, u64) + Sync),
    ) -> Result<report::Report> {
        if !opts.exceed_memory {
            self.launch.check_memory(&self.hw)?;
        }
        if opts.by_array && opts.sample.is_some() {
            return Err(Error::new("--by-array", sim::BY_ARRAY_SAMPLED));
        }
        let sampled = match &opts.sample {
            Some(sampling) => sim::simulate_sampled_given(
                &self.launch,
                &self.hw,
                opts,
                sampling,
                exact_l1,
                progress,
            )?,
            None => None,
        };
        let (counts, sampled) = match sampled {
            Some(s) => {
                let counts = s.counts.clone();
                (counts, Some(s))
            }
            None => (
                sim::simulate_with_progress(&self.launch, &self.hw, opts, progress)?,
                None,
            ),
        };
        let inputs = timing::inputs_from_counts(&counts, &self.launch);
        let time = timing::estimate(&self.hw, &self.kernel, &self.launch, &inputs, clock_ghz);
        let mut report = report::Report::new(&self.launch, &self.hw, counts).with_time(time);
        match (sampled, &opts.sample) {
            (Some(s), _) => report = report.with_sample(s),
            (None, Some(sampling)) => {
                report.sample_fallback =
                    sim::sample::WavePlan::plan(&self.launch, &self.hw, sampling).err();
            }
            (None, None) => {}
        }
        Ok(report)
    }

    /// Runs `model` with its constants `params` on the launch; also returns the time model
    /// applied to the predicted volumes. A kernel outside the model's [`models::Scope`] is an
    /// error, or carries warnings in the prediction.
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
        let warnings = models::check_scope(model, &self.kernel, &self.launch)?;
        let mut prediction = (model.predict)(&input)?;
        prediction.warnings = warnings;
        let mut inputs = prediction.volumes.time_inputs();
        inputs.flops = timing::launch_flops(&self.launch);
        // every warp of every block: a model does not say which warps the guard leaves empty
        inputs.warp_instructions = self.launch.instructions_per_warp.map(|n| {
            n * self.launch.total_blocks as f64 * self.launch.occupancy.warps_per_block as f64
        });
        let time = timing::estimate(&self.hw, &self.kernel, &self.launch, &inputs, clock_ghz);
        Ok((prediction, time))
    }
}

/// Loads, binds and simulates: the whole of `gputraffic simulate` (time model at the base clock).
pub fn run(
    kernel: &str,
    hw: &str,
    req: &launch::LaunchRequest,
    opts: &sim::SimOptions,
) -> Result<report::Report> {
    Bound::new(input::kernel_source::load(kernel)?, hw, req)?.simulate(opts, None)
}
