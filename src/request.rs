//! What the front ends ask of the library, written once for the command line and the Python
//! package, so that they accept and refuse exactly the same input and print the same results:
//! one launch as a user asks for it — a kernel (a trace, or a `.ptx`/`.cu` file with its
//! [`LiftSettings`]), a GPU, a block shape, a domain, `NAME=VALUE` settings and a clock, all as
//! text — checked and bound into a [`Prepared`] launch; then simulated beside a model
//! ([`LaunchSpec::simulation`]), predicted by one ([`LaunchSpec::prediction`]) or ranked over
//! block shapes ([`LaunchSpec::rank`]); and the [`listing`] of what is shipped.
//!
//! The top layer of the library: it builds on [`crate::analysis`] and [`crate::report`], and
//! nothing in the library builds on it.

use crate::analysis::rank;
use crate::error::{Error, Result};
use crate::input::hw::HwConfig;
use crate::input::trace::Kernel;
use crate::launch::geometry::expand_blocks;
use crate::launch::{self, LaunchRequest};
use crate::models::{self, ModelInfo};
use crate::report::Format;
use crate::{Bound, report, sim, timing};
use std::collections::BTreeMap;

pub use crate::input::kernel_source::{KernelSource, LiftSettings};

/// A launch as asked for, every part still as the user wrote it.
#[derive(Debug, Clone)]
pub struct LaunchSpec {
    /// The kernel.
    pub kernel: KernelSource,
    /// GPU: a shipped configuration name or a path.
    pub hw: String,
    /// Block shape `XxYxZ`; the trace's when `None`.
    pub block: Option<String>,
    /// Domain `N`, `NXxNY` or `NXxNYxNZ`; the trace's when `None`.
    pub domain: Option<String>,
    /// `NAME=VALUE` settings of kernel parameters and model constants.
    pub set: Vec<String>,
    /// Clock of the time model: `base` (the default), `boost` or GHz.
    pub clock: String,
}

/// A launch ready to simulate and predict: the bound kernel, the model constants among the
/// settings, and the clock of the time model.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The kernel bound to the GPU.
    pub bound: Bound,
    /// The settings that were constants of the model rather than kernel parameters.
    pub model_params: BTreeMap<String, f64>,
    /// Clock in GHz; `None` is the default, the base clock ([`timing::default_clock_ghz`]).
    pub clock: Option<f64>,
}

impl LaunchSpec {
    /// The launch of `kernel` on `hw` (shipped name or path): a `.ptx` or `.cu` kernel is
    /// lifted now, with `lift`, for the GPU's architecture (see [`KernelSource::resolve`]); the
    /// lift's warnings come back beside the spec. The rest is checked by [`LaunchSpec::prepare`].
    pub fn resolve(
        kernel: &str,
        lift: &LiftSettings,
        hw: &str,
        block: Option<String>,
        domain: Option<String>,
        set: Vec<String>,
        clock: String,
    ) -> Result<(LaunchSpec, Vec<String>)> {
        let (kernel, warnings) = KernelSource::resolve(kernel, lift, || HwConfig::load(hw), &set)?;
        let spec = LaunchSpec {
            kernel,
            hw: hw.to_string(),
            block,
            domain,
            set,
            clock,
        };
        Ok((spec, warnings))
    }

    /// A simulation with the model `compare` names beside it: finds the model, prepares the
    /// launch and runs the model first (a model error should not cost a simulation).
    pub fn simulation(&self, compare: Option<&str>) -> Result<Simulation> {
        let model = compare.map(models::find).transpose()?;
        let prepared = self.prepare(model)?;
        let predicted = model.map(|m| prepared.predict(m)).transpose()?;
        Ok(Simulation {
            prepared,
            predicted,
        })
    }

    /// The prediction of the model named `model`, with the time model on its volumes.
    pub fn prediction(&self, model: &str) -> Result<Prediction> {
        let model = models::find(model)?;
        let prepared = self.prepare(Some(model))?;
        let (prediction, time) = prepared.predict(model)?;
        Ok(Prediction {
            prepared,
            prediction,
            time,
        })
    }

    /// Loads the kernel and the GPU and binds them, splitting the settings between the kernel
    /// and `model` (whose constants they may set).
    pub fn prepare(&self, model: Option<&ModelInfo>) -> Result<Prepared> {
        let block = parse_block(self.block.as_deref())?;
        let (kernel, hw, mut req, model_params) = self.parts(model)?;
        req.block = block;
        let bound = Bound::with_hw(kernel, hw, &req)?;
        let clock = timing::clock_choice(&self.clock, &bound.hw)?;
        Ok(Prepared {
            bound,
            model_params,
            clock,
        })
    }

    /// Simulates the kernel with each of `blocks` (shapes `AxBxC` or named sets, see
    /// [`expand_blocks`]) in place of the spec's block shape, as `mode` says (screened and
    /// confirmed, exactly, or sampled; see [`rank::rank`]; arrays larger than the GPU's memory an
    /// error unless `exceed_memory`), and ranks them fastest first.
    /// `progress(done, total)` is called after each simulation.
    pub fn rank(
        &self,
        blocks: &[String],
        mode: rank::RankMode,
        exceed_memory: bool,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<rank::Ranking> {
        let (kernel, hw, req, _) = self.parts(None)?;
        let blocks = expand_blocks(blocks, &hw)?;
        let clock = timing::clock_choice(&self.clock, &hw)?;
        let opts = sim::SimOptions {
            compulsory: false,
            exceed_memory,
            ..sim::SimOptions::default()
        };
        rank::rank(&kernel, &hw, &blocks, &req, clock, mode, &opts, progress)
    }

    /// The kernel, the GPU, the launch request without a block shape, and the model constants.
    fn parts(
        &self,
        model: Option<&ModelInfo>,
    ) -> Result<(Kernel, HwConfig, LaunchRequest, BTreeMap<String, f64>)> {
        let kernel = self.kernel.kernel()?;
        let hw = HwConfig::load(&self.hw)?;
        let (domain, sizes) = match self.domain.as_deref() {
            Some(d) => launch::domain_request(&kernel, d)?,
            None => (None, Vec::new()),
        };
        let sets = models::split_sets(&kernel, model.as_slice(), &self.set)?;
        let req = LaunchRequest {
            block: None,
            domain,
            set: [sizes, sets.kernel].concat(),
        };
        Ok((kernel, hw, req, sets.model))
    }
}

impl Prepared {
    /// Simulates the launch, calling `progress(blocks dispatched, total blocks)` as it goes.
    pub fn simulate(
        &self,
        opts: &sim::SimOptions,
        progress: &(dyn Fn(u64, u64) + Sync),
    ) -> Result<report::Report> {
        self.bound
            .simulate_with_progress(opts, self.clock, progress)
    }

    /// Runs `model` on the launch with the model constants among the settings.
    pub fn predict(&self, model: &ModelInfo) -> Result<(models::Prediction, timing::TimeEstimate)> {
        self.bound.predict(model, &self.model_params, self.clock)
    }
}

/// The kernel of a sweep over the GPUs `hws` (shipped names or paths): as
/// [`KernelSource::resolve`] gives it, a `.ptx` or `.cu` kernel lifted for the GPUs'
/// architecture. A lift holds for one architecture (registers, and so occupancy, depend on it),
/// so GPUs of different architectures are refused with a line that says to sweep each alone.
pub fn sweep_kernel(
    kernel: &str,
    lift: &LiftSettings,
    hws: &[String],
    set: &[String],
) -> Result<(KernelSource, Vec<String>)> {
    let gpu = || {
        let configs = hws
            .iter()
            .map(|h| HwConfig::load(h))
            .collect::<Result<Vec<_>>>()?;
        let Some(first) = configs.first() else {
            return Err(Error::new("--hw", "no GPU given"));
        };
        let arch = |c: &HwConfig| c.arch.clone().unwrap_or_else(|| "no arch".into());
        if let Some((name, other)) = hws.iter().zip(&configs).find(|(_, c)| c.arch != first.arch) {
            return Err(Error::new(
                "--hw",
                format!(
                    "{kernel} is lifted once, for one architecture, but {} is {} and {name} is {}: sweep each architecture on its own",
                    hws[0],
                    arch(first),
                    arch(other)
                ),
            ));
        }
        Ok(first.clone())
    };
    KernelSource::resolve(kernel, lift, gpu, set)
}

/// A launch prepared for simulation, with the prediction of the model compared beside it.
#[derive(Debug)]
pub struct Simulation {
    /// The launch.
    pub prepared: Prepared,
    predicted: Option<(models::Prediction, timing::TimeEstimate)>,
}

impl Simulation {
    /// What the compared model warns of (a kernel at the edge of its scope).
    pub fn warnings(&self) -> &[String] {
        self.predicted
            .as_ref()
            .map_or(&[], |(p, _)| p.warnings.as_slice())
    }

    /// Simulates the launch (see [`Prepared::simulate`]) and puts the compared model's
    /// prediction beside the counts.
    pub fn run(
        self,
        opts: &sim::SimOptions,
        progress: &(dyn Fn(u64, u64) + Sync),
    ) -> Result<report::Report> {
        let mut report = self.prepared.simulate(opts, progress)?;
        if let Some((p, t)) = self.predicted {
            report.compare(p, t);
        }
        Ok(report)
    }
}

/// A model's prediction for a launch, with the time model applied to its volumes.
#[derive(Debug)]
pub struct Prediction {
    /// The launch.
    pub prepared: Prepared,
    /// The model's volumes, and its warnings.
    pub prediction: models::Prediction,
    /// The time model on the predicted volumes.
    pub time: timing::TimeEstimate,
}

impl Prediction {
    /// What the model warns of.
    pub fn warnings(&self) -> &[String] {
        &self.prediction.warnings
    }

    /// The prediction as `predict` prints it.
    pub fn render(&self, format: Format) -> String {
        let b = &self.prepared.bound;
        report::render_prediction(&b.launch, &b.hw, &self.prediction, &self.time, format)
    }
}

/// A model of [`models::MODELS`] as listed: `gputraffic list` and Python's `list_models`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ListedModel {
    /// Its name (`--model`, `--compare`).
    pub name: &'static str,
    /// One line on what it is.
    pub summary: &'static str,
    /// The kernels it applies to.
    pub applies_to: &'static str,
    /// Its constants, settable with `--set`.
    pub params: Vec<ListedParam>,
}

/// A constant of a listed model.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ListedParam {
    /// Its name.
    pub name: &'static str,
    /// Its value when not set (`None`: it must be set).
    pub default: Option<f64>,
    /// What it is.
    pub doc: &'static str,
}

/// The models, in [`models::MODELS`] order.
pub fn listed_models() -> Vec<ListedModel> {
    models::MODELS
        .iter()
        .map(|m| ListedModel {
            name: m.name,
            summary: m.summary,
            applies_to: m.scope.applies_to,
            params: m
                .params
                .iter()
                .map(|p| ListedParam {
                    name: p.name,
                    default: p.default,
                    doc: p.doc,
                })
                .collect(),
        })
        .collect()
}

/// What `gputraffic list` prints: the shipped kernels and GPUs, the models with their
/// constants, and the fits.
pub fn listing() -> String {
    let mut s = String::from("kernels (traces/):\n");
    for (name, desc) in crate::input::shipped_kernels() {
        s += &format!("  {name:<22} {desc}\n");
    }
    s += "hardware (hw-configs/):\n";
    for (name, desc) in crate::input::shipped_hw() {
        s += &format!("  {name:<22} {desc}\n");
    }
    s += "models (--model, --compare):\n";
    for m in listed_models() {
        s += &format!("  {:<22} {}\n", m.name, m.summary);
        s += &format!("      applies to {}\n", m.applies_to);
        for p in m.params {
            s += &format!("      --set {:<18} {}\n", format!("{}=", p.name), p.doc);
        }
    }
    s += "fits (gputraffic fit --model):\n";
    for (name, summary) in crate::analysis::fit::MODELS {
        s += &format!("  {name:<22} {summary}\n");
    }
    s
}

/// How `rank` simulates its shapes, from its `--sample` and `--exact` (Python's `sample=` and
/// `exact=`): a race of screens and exact confirmations when neither is given; the two together
/// are refused.
pub fn rank_mode(sample: bool, exact: bool) -> Result<rank::RankMode> {
    match (sample, exact) {
        (false, false) => Ok(rank::RankMode::Screen),
        (false, true) => Ok(rank::RankMode::Exact),
        (true, false) => Ok(rank::RankMode::Sampled(
            crate::sim::sample::SampleOptions::default(),
        )),
        (true, true) => Err(Error::new(
            "--exact",
            "--exact simulates every shape exactly and --sample every shape sampled: give one",
        )),
    }
}

/// `--block XxYxZ`, checked against CUDA's per-side limits (the GPU's thread limit is checked
/// when the launch is bound).
pub fn parse_block(block: Option<&str>) -> Result<Option<[u32; 3]>> {
    use crate::launch::geometry::{BlockLimit, MAX_BLOCK, check_block};
    let Some(b) = block else {
        return Ok(None);
    };
    let d = launch::parse_dims("--block", b)?;
    check_block(d, u64::MAX).map(Some).map_err(|limit| {
        let why = match limit {
            BlockLimit::Side(dim) => format!(
                "block{} is above {}",
                [".x", ".y", ".z"][dim],
                MAX_BLOCK[dim]
            ),
            _ => "every dimension must be positive".into(),
        };
        Error::new("--block", format!("'{b}': {why}"))
    })
}

/// Runs `f` on a pool of `threads` workers, or on the global pool when `None`. Results never
/// depend on the number of threads.
pub fn on_threads<T: Send>(
    threads: Option<usize>,
    f: impl FnOnce() -> Result<T> + Send,
) -> Result<T> {
    match threads {
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build()
            .map_err(|e| Error::new("--threads", e.to_string()))?
            .install(f),
        None => f(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(kernel: &str) -> LaunchSpec {
        LaunchSpec {
            kernel: KernelSource::Load(kernel.into()),
            hw: "h200".into(),
            block: Some("32x4x2".into()),
            domain: Some("64x32x16".into()),
            set: vec!["delta=0.5".into()],
            clock: "base".into(),
        }
    }

    #[test]
    fn settings_are_split_between_the_kernel_and_the_model() {
        let p = spec("star1").prepare(Some(&models::su2015::MODEL)).unwrap();
        assert_eq!(p.bound.launch.block, [32, 4, 2]);
        assert_eq!(p.model_params.get("delta"), Some(&0.5));
        // `base` is the default: the time model at the H200's base clock.
        assert_eq!(p.clock, None);
        let (_, time) = p.predict(&models::su2015::MODEL).unwrap();
        assert_eq!((time.clock_ghz, time.clock), (1.5, timing::Clock::Base));
    }

    #[test]
    fn a_model_constant_without_its_model_is_refused() {
        let e = spec("star1").prepare(None).unwrap_err();
        assert!(e.to_string().contains("delta"), "{e}");
    }

    #[test]
    fn a_parsed_kernel_binds_like_its_file() {
        let text = crate::input::trace::SHIPPED
            .iter()
            .find(|(n, _)| *n == "star1")
            .unwrap()
            .1;
        let mut s = spec("star1");
        s.set.clear();
        let from_name = s.prepare(None).unwrap();
        s.kernel = KernelSource::Parsed(Box::new(Kernel::parse(text, "generated").unwrap()));
        let from_text = s.prepare(None).unwrap();
        assert_eq!(from_name.bound.launch.grid, from_text.bound.launch.grid);
        assert_eq!(from_name.bound.launch.block, from_text.bound.launch.block);
    }

    #[test]
    fn a_block_side_above_cudas_limit_is_named() {
        let e = parse_block(Some("32x4x128")).unwrap_err();
        assert_eq!(e.to_string(), "--block: '32x4x128': block.z is above 64");
    }
}
