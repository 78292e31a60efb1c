//! The `gputraffic` command line: a thin layer over the library.

use clap::{CommandFactory, Parser, Subcommand};
use gputraffic::choice::Choice;
use gputraffic::models;
use gputraffic::report::Format;
use gputraffic::request::{LaunchSpec, LiftSettings, on_threads};
use gputraffic::sim::SimOptions;
use gputraffic::sim::sample::SampleOptions;
use gputraffic::{Error, Result};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "gputraffic",
    version = VERSION,
    long_version = LONG_VERSION,
    about = "Trace-driven simulator of GPU memory traffic"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// `-V`: the version and the commit built from.
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("GPUTRAFFIC_GIT_COMMIT"),
    ")"
);
/// `--version`: also the GPUs shipped in the binary.
const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("GPUTRAFFIC_GIT_COMMIT"),
    ")\nshipped GPUs: ",
    env!("GPUTRAFFIC_SHIPPED_GPUS")
);

#[derive(Subcommand)]
enum Command {
    /// Simulate one kernel launch and report the traffic at every level.
    Simulate(SimulateArgs),
    /// Print a shell completion script: `gputraffic completions bash > /etc/bash_completion.d/gputraffic`.
    /// It offers the shipped kernel and GPU names for --kernel and --hw, besides file names.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print a manual page (roff): the overview, or a command's page with every option, the exit
    /// status and examples: `gputraffic man rank > gputraffic-rank.1; man ./gputraffic-rank.1`.
    Man(ManArgs),
    /// Evaluate a closed-form model from the literature on one kernel launch.
    Predict(PredictArgs),
    /// Simulate many configurations (block shapes, domains, parameters, GPUs, cache sizes) into
    /// one CSV or JSONL file, with derived cache quantities and model predictions.
    Sweep(SweepArgs),
    /// Merge the shard files of one `sweep --shard K/N` (any order) into the file the unsharded
    /// sweep writes, byte for byte.
    Merge(MergeArgs),
    /// Fit a model's constants to sweep results (gompertz: y = a*exp(b*exp(c*x)); su2015).
    Fit(FitArgs),
    /// Draw sweep results or a validation report as a PNG or SVG picture.
    Plot(PlotArgs),
    /// Simulate measured launches and compare with their hardware counters (Nsight Compute).
    Validate(ValidateArgs),
    /// Simulate a set of block shapes and list them fastest first by predicted time.
    Rank(RankArgs),
    /// List the shipped kernels, hardware configurations and models.
    List,
    /// Print a shipped kernel trace or hardware configuration (a template to start from).
    Show(ShowArgs),
    /// Lift a kernel from PTX or CUDA source (nvcc) into a trace and print it (docs/cuda.md).
    Lift(LiftCommandArgs),
}

/// How a .ptx or .cu kernel is lifted (docs/cuda.md).
#[derive(clap::Args, Default)]
struct LiftArgs {
    /// The kernel (entry) to lift from a .ptx or .cu file holding several: its name, e.g.
    /// copy or star<1>, or its mangled PTX name.
    #[arg(long)]
    entry: Option<String>,
    /// nvcc to compile .cu files with (else $CUDA_HOME/bin, PATH, scripts/install-nvcc.sh's venv).
    #[arg(long, value_name = "PATH")]
    nvcc: Option<String>,
    /// An option passed to nvcc (-DNAME=V, -IDIR, -std=c++17; repeatable).
    #[arg(long = "nvcc-arg", value_name = "ARG", allow_hyphen_values = true)]
    nvcc_args: Vec<String>,
    /// Grid of the lifted kernel, three expressions X,Y,Z (else inferred from the guard).
    #[arg(long, value_name = "X,Y,Z")]
    grid: Option<String>,
    /// Registers per thread (else read off ptxas, or 32 with a warning).
    #[arg(long)]
    registers: Option<u32>,
    /// Elements of an array, NAME=EXPR of the parameters (else the guarded threads' footprint;
    /// repeatable).
    #[arg(long = "extent", value_name = "NAME=EXPR")]
    extents: Vec<String>,
    /// Lattice updates of the launch, an expression of the parameters (else the threads the
    /// guard lets through).
    #[arg(long, value_name = "EXPR")]
    updates: Option<String>,
}

impl LiftArgs {
    /// The settings as the library takes them.
    fn settings(&self) -> LiftSettings {
        LiftSettings {
            entry: self.entry.clone(),
            nvcc: self.nvcc.clone(),
            nvcc_args: self.nvcc_args.clone(),
            grid: self.grid.clone(),
            registers: self.registers,
            extents: self.extents.clone(),
            updates: self.updates.clone(),
        }
    }
}

#[derive(clap::Args)]
struct LiftCommandArgs {
    /// The .ptx or .cu file.
    file: String,
    #[command(flatten)]
    lift: LiftArgs,
    /// GPU whose architecture .cu files are compiled for.
    #[arg(long, default_value = "h200")]
    hw: String,
}

/// The kernel, the GPU and the run, each flag declared once and flattened into simulate,
/// predict, rank, sweep and validate. Where a flag does not apply to a command, the command hides
/// it ([`hide`]) and refuses it with a line saying why ([`LaunchArgs::refuse`]); where a command
/// needs one, it makes it required ([`require`]).
#[derive(clap::Args)]
struct LaunchArgs {
    /// Kernel: a trace path, the name of a shipped trace (e.g. star1), - for standard input, or
    /// a .ptx or .cu file to lift (docs/cuda.md).
    #[arg(long)]
    kernel: Option<String>,
    #[command(flatten)]
    lift: LiftArgs,
    /// GPU: a shipped configuration name (e.g. h200) or a path to one.
    // sweep and validate say what they take: several_gpus, measured_gpu
    #[arg(long, value_delimiter = ',', default_value = "h200")]
    hw: Vec<String>,
    /// Domain N, NXxNY or NXxNYxNZ: sets the kernel's nx (, ny, nz), as many as it has.
    #[arg(long)]
    domain: Option<String>,
    /// Set a kernel parameter or a constant of the model (--model / --compare), NAME=VALUE
    /// (repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
    /// Clock for the time model: base (the default: the clock Nsight Compute locks, the
    /// config's one clock where it gives no base clock), boost, or a value in GHz.
    #[arg(long, default_value = "base")]
    clock: String,
    /// Worker threads (default: all cores). Results do not depend on it.
    #[arg(long)]
    threads: Option<usize>,
    /// Sample the interior waves of long launches instead of simulating every one: counts
    /// become estimates (see simulate --sample).
    #[arg(long)]
    sample: bool,
}

/// Hides a flag of [`LaunchArgs`] from a command's help (the command refuses it).
fn hide(a: clap::Arg) -> clap::Arg {
    a.hide(true)
}

/// Makes a flag of [`LaunchArgs`] required by a command.
fn require(a: clap::Arg) -> clap::Arg {
    a.required(true)
}

/// What simulate makes of the shared flags.
fn simulate_flags(a: clap::Arg) -> clap::Arg {
    match a.get_id().as_str() {
        "kernel" => require(a),
        "sample" => sample_waves(a),
        _ => a,
    }
}

/// What predict makes of the shared flags: it simulates nothing.
fn predict_flags(a: clap::Arg) -> clap::Arg {
    match a.get_id().as_str() {
        "kernel" => require(a),
        "threads" | "sample" => hide(a),
        _ => a,
    }
}

/// What rank makes of the shared flags.
fn rank_flags(a: clap::Arg) -> clap::Arg {
    match a.get_id().as_str() {
        "kernel" => require(a),
        "set" => kernel_parameter(a),
        "sample" => sample_shapes(a),
        _ => a,
    }
}

/// What sweep makes of the shared flags: lists, and `--domains` in place of `--domain`.
fn sweep_flags(a: clap::Arg) -> clap::Arg {
    match a.get_id().as_str() {
        "kernel" => require(a),
        "domain" => hide(a),
        "hw" => several_gpus(a),
        "set" => parameter_values(a),
        "sample" => sample_rows(a),
        _ => a,
    }
}

/// What validate makes of the shared flags: the launches come from its input.
fn validate_flags(a: clap::Arg) -> clap::Arg {
    match a.get_id().as_str() {
        "hw" => measured_gpu(a),
        "kernel" | "entry" | "nvcc" | "nvcc_args" | "grid" | "registers" | "extents"
        | "updates" | "domain" | "set" | "clock" => hide(a),
        _ => a,
    }
}

/// `--hw` of sweep: a list.
fn several_gpus(a: clap::Arg) -> clap::Arg {
    a.help("GPUs, comma-separated shipped names or paths")
}

/// `--hw` of validate: the GPU measured, which has no default.
fn measured_gpu(a: clap::Arg) -> clap::Arg {
    a.required(true)
        .default_value(None::<&str>)
        .help("GPU the counters were measured on: a shipped configuration name (e.g. h200) or a path to one")
}

/// `--sample` of simulate, which says what is sampled.
fn sample_waves(a: clap::Arg) -> clap::Arg {
    a.help(
        "Simulate the first and last waves exactly and a stratified sample of the others, and \
         extrapolate: every count with a 95% interval (exact when the launch is too short)",
    )
}

/// `--sample` of sweep, which says what it adds to the rows.
fn sample_rows(a: clap::Arg) -> clap::Arg {
    a.help(
        "Sample the interior waves of long launches instead of simulating every one: counts \
         become estimates, and every row gains `sampled` and a 95% interval per metric \
         (METRIC_ci95_lo, METRIC_ci95_hi; see simulate --sample)",
    )
}

/// `--sample` of rank: every shape sampled, none confirmed.
fn sample_shapes(a: clap::Arg) -> clap::Arg {
    a.help(
        "Simulate every shape sampled (see simulate --sample) and rank them by the estimates, \
         with 95% intervals, confirming none (by default shapes are screened and the contenders \
         simulated exactly)",
    )
}

/// `--set` of rank, which takes no model.
fn kernel_parameter(a: clap::Arg) -> clap::Arg {
    a.help("Set a kernel parameter, NAME=VALUE (repeatable)")
}

/// `--set` of sweep: a list of values.
fn parameter_values(a: clap::Arg) -> clap::Arg {
    a.value_name("NAME=V1,V2,…").help(
        "A kernel parameter or model constant and its values, NAME=V1,V2,… (repeatable; every \
         combination runs)",
    )
}

impl LaunchArgs {
    /// The one GPU of simulate, predict and rank (h200 when none is given).
    fn one_hw(&self, command: &str) -> Result<String> {
        match self.hw.as_slice() {
            [hw] => Ok(hw.clone()),
            _ => Err(Error::new(
                "--hw",
                format!("{command} takes one GPU (sweep takes several)"),
            )),
        }
    }

    /// The `--kernel` every command but validate requires (clap checks it is there).
    fn kernel(&self) -> &str {
        self.kernel.as_deref().unwrap_or_default()
    }

    /// A one-line refusal of each flag in `flags` the user gave, which `command` does not use:
    /// `why` says why.
    fn refuse(&self, command: &str, flags: &[&str], why: &str) -> Result<()> {
        let given = |flag: &str| match flag {
            "--kernel" => self.kernel.is_some(),
            "--entry" => self.lift.entry.is_some(),
            "--nvcc" => self.lift.nvcc.is_some(),
            "--nvcc-arg" => !self.lift.nvcc_args.is_empty(),
            "--grid" => self.lift.grid.is_some(),
            "--registers" => self.lift.registers.is_some(),
            "--extent" => !self.lift.extents.is_empty(),
            "--updates" => self.lift.updates.is_some(),
            "--domain" => self.domain.is_some(),
            "--set" => !self.set.is_empty(),
            "--clock" => self.clock != "base",
            "--threads" => self.threads.is_some(),
            "--sample" => self.sample,
            _ => false,
        };
        match flags.iter().find(|f| given(f)) {
            Some(flag) => Err(Error::new(
                *flag,
                format!("does not apply to {command}: {why}"),
            )),
            None => Ok(()),
        }
    }
}

/// What `simulate` and `predict` share beyond [`LaunchArgs`]: the block and the output.
#[derive(clap::Args)]
struct OneLaunchArgs {
    #[command(flatten)]
    launch: LaunchArgs,
    /// Block shape XxYxZ (default: the trace's).
    #[arg(long)]
    block: Option<String>,
    /// Output format.
    #[arg(long, value_parser = choice::<Format>(), default_value = "table")]
    format: Format,
}

#[derive(clap::Args)]
#[command(mut_args(simulate_flags))]
struct SimulateArgs {
    #[command(flatten)]
    launch: OneLaunchArgs,
    /// Also evaluate this model (see `gputraffic list`) and show it next to the simulation.
    #[arg(long, value_name = "MODEL")]
    compare: Option<String>,
    /// Give every SM an L1 that never evicts.
    #[arg(long)]
    infinite_l1: bool,
    /// Give the L2 partitions infinite capacity.
    #[arg(long)]
    infinite_l2: bool,
    /// Skip tracking the compulsory volumes (a little faster).
    #[arg(long)]
    no_compulsory: bool,
    /// Replay the L2 serially in one piece, the reference the parallel sharded replay equals
    /// exactly (for comparing speed and checking exactness).
    #[arg(long, hide = true)]
    reference_l2: bool,
    /// Coalesce every warp instruction lane by lane, without the per-launch line patterns (the
    /// reference they must equal).
    #[arg(long, hide = true)]
    lane_by_lane: bool,
    /// Schedule all SMs tick by tick, the reference the event-driven schedule equals.
    #[arg(long, hide = true)]
    tick_by_tick: bool,
    /// Simulate even when the kernel's arrays exceed the GPU's memory (dram.capacity_gib in its
    /// config), where the kernel could not run.
    #[arg(long)]
    exceed_memory: bool,
    /// Write the report to this file instead of stdout.
    #[arg(long)]
    out: Option<std::path::PathBuf>,
    /// Also report the traffic of every array at every level, and each access's in the L1
    /// (counted exactly, adding up to the totals; not with --sample).
    #[arg(long)]
    by_array: bool,
}

#[derive(clap::Args)]
#[command(mut_args(predict_flags))]
struct PredictArgs {
    /// Model name (see `gputraffic list`).
    #[arg(long)]
    model: String,
    #[command(flatten)]
    launch: OneLaunchArgs,
}

#[derive(clap::Args)]
#[command(mut_args(sweep_flags))]
struct SweepArgs {
    #[command(flatten)]
    launch: LaunchArgs,
    /// Block shapes: AxBxC, all-N (every power-of-two shape of N threads), ernst-1024,
    /// ernst-512, tabik-2d; comma-separated.
    #[arg(long, required = true)]
    blocks: Vec<String>,
    /// Domains: NXxNYxNZ (NXxNY or N for 2-D and 1-D kernels), or
    /// square-xy:total=T:from=A:to=B[:points=K] (square XY planes at constant total size);
    /// comma-separated.
    #[arg(long)]
    domains: Vec<String>,
    /// Factors for the L1 capacity, comma-separated.
    #[arg(long = "l1-scale", value_delimiter = ',')]
    l1_scale: Vec<f64>,
    /// Factors for the L2 capacity, comma-separated.
    #[arg(long = "l2-scale", value_delimiter = ',')]
    l2_scale: Vec<f64>,
    /// Models whose predictions go into every row: names, `all` or `none`.
    #[arg(long, default_value = "all", value_delimiter = ',')]
    models: Vec<String>,
    /// Output file: .jsonl gives JSON lines, anything else CSV.
    #[arg(long)]
    out: std::path::PathBuf,
    /// Continue an interrupted sweep: keep the rows already in --out, run the rest.
    #[arg(long)]
    resume: bool,
    /// Replace an existing --out.
    #[arg(long, conflicts_with = "resume")]
    force: bool,
    /// Run only shard K of N (1 ≤ K ≤ N, as sbatch --array=1-N numbers its tasks): the
    /// configurations i with i mod N = K-1, into their own --out; `gputraffic merge` joins the N
    /// shards.
    #[arg(long, value_name = "K/N")]
    shard: Option<String>,
}

#[derive(clap::Args)]
struct MergeArgs {
    /// The shard files, every K of 1..N exactly once, in any order.
    #[arg(required = true, value_name = "SHARD")]
    shards: Vec<std::path::PathBuf>,
    /// The merged file; its name must ask for the shards' format (.jsonl for JSON lines).
    #[arg(long)]
    out: std::path::PathBuf,
    /// Replace an existing --out.
    #[arg(long)]
    force: bool,
}

/// A clap parser for a library enum chosen by name: offers exactly its names, with their help.
fn choice<T: Choice + Send + Sync + Clone>() -> impl clap::builder::TypedValueParser<Value = T> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(
        T::CHOICES
            .iter()
            .map(|(_, name, help)| PossibleValue::new(*name).help(*help)),
    )
    .map(|name| T::from_name(&name).expect("clap offers only listed names"))
}

#[derive(clap::Args)]
struct ShowArgs {
    /// A shipped trace (e.g. star1) or hardware configuration (e.g. h200).
    name: String,
}

/// The text of the shipped trace or configuration `name`, exactly as shipped.
fn show(a: &ShowArgs) -> Result<String> {
    gputraffic::input::shipped_text(&a.name).map(str::to_string)
}

#[derive(clap::Args)]
#[command(mut_args(rank_flags))]
struct RankArgs {
    #[command(flatten)]
    launch: LaunchArgs,
    /// Block shapes: AxBxC, all-N (every power-of-two shape of N threads), ernst-1024,
    /// ernst-512, tabik-2d; comma-separated.
    #[arg(long, required = true)]
    blocks: Vec<String>,
    /// Output format.
    #[arg(long, value_parser = choice::<Format>(), default_value = "table")]
    format: Format,
    /// Simulate even when the kernel's arrays exceed the GPU's memory (dram.capacity_gib in its
    /// config), where the kernel could not run.
    #[arg(long)]
    exceed_memory: bool,
    /// Simulate every shape exactly. Without it, shapes whose lower bound of their time is
    /// already above the leader's are not simulated, the others are screened (a sampled
    /// simulation of a few waves), and only those that may be the fastest are simulated exactly.
    #[arg(long)]
    exact: bool,
    /// Write the ranking to this file instead of stdout.
    #[arg(long)]
    out: Option<std::path::PathBuf>,
}

fn rank(a: &RankArgs) -> Result<String> {
    use gputraffic::analysis::rank;
    if let Some(out) = &a.out {
        gputraffic::error::check_writable(out)?;
    }
    let mode = gputraffic::request::rank_mode(a.launch.sample, a.exact)?;
    let spec = launch_spec(&a.launch, None, "rank")?;
    // The memory and the cost up front, from the launch with the trace's own block: the shapes
    // share its arrays, and their thread accesses differ only by lanes outside the guard.
    // Where that block cannot launch on the GPU, the shapes' own simulations check the memory.
    if let Ok(prepared) = spec.prepare(None) {
        let bound = &prepared.bound;
        if !a.exceed_memory {
            bound.launch.check_memory(&bound.hw)?;
        }
        let shapes = gputraffic::launch::geometry::expand_blocks(&a.blocks, &bound.hw)?;
        let threads = a
            .launch
            .threads
            .unwrap_or_else(rayon::current_num_threads)
            .max(1);
        let n = shapes.len();
        // A race costs its pre-screens, screens and confirmations; where the launch is too
        // short to screen, the shapes run exactly, as with --exact.
        let sampled_cost = |sampling: &SampleOptions| {
            gputraffic::sim::cost::estimate(&bound.launch, &bound.hw, threads, sampling)
        };
        let screens = sampled_cost(&SampleOptions::screening())?;
        let racing = mode == rank::RankMode::Screen && n > 1 && screens.sampled.is_some();
        let line = if racing {
            let pre = sampled_cost(&SampleOptions::pre_screening())?;
            race_cost_line(&screens, pre.sampled, n, threads)
        } else {
            let what = match n {
                1 => String::new(),
                _ => format!("{n} shapes, "),
            };
            cost_line(
                estimate_cost(bound, threads)?.times(n),
                threads,
                a.launch.sample,
                &what,
            )
        };
        if let Some(line) = line {
            eprintln!("{line}");
        }
    }
    let bar = progress_bar("shapes");
    let ranking = on_threads(a.launch.threads, || {
        spec.rank(&a.blocks, mode, a.exceed_memory, &follow(&bar, "shapes"))
    })?;
    bar.finish_and_clear();
    for s in &ranking.skipped {
        eprintln!("note: skipped {s}");
    }
    if let Some(note) = ranking.note() {
        eprintln!("note: {note}");
    }
    let text = match a.format {
        Format::Table => ranking.to_table(),
        Format::Csv => ranking.to_csv(),
        Format::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&ranking.to_json()).expect("JSON of plain values")
        ),
    };
    write_or_print(a.out.as_deref(), text)
}

fn sweep(a: &SweepArgs) -> Result<String> {
    let l = &a.launch;
    l.refuse(
        "sweep",
        &["--domain"],
        "sweep takes --domains, a list of domains and series",
    )?;
    let (kernel, warnings) =
        gputraffic::request::sweep_kernel(l.kernel(), &l.lift.settings(), &l.hw, &l.set)?;
    for w in warnings {
        eprintln!("warning: {w}");
    }
    let spec = gputraffic::analysis::sweep::SweepSpec {
        kernel,
        hws: l.hw.clone(),
        blocks: a.blocks.clone(),
        domains: a.domains.clone(),
        sets: l.set.clone(),
        l1_scales: a.l1_scale.clone(),
        l2_scales: a.l2_scale.clone(),
        models: models::select(&a.models)?,
        clock: l.clock.clone(),
        sample: l.sample.then(SampleOptions::default),
    };
    let out_name = a.out.display().to_string();
    let shard = a
        .shard
        .as_deref()
        .map(gputraffic::analysis::sweep_file::Shard::parse)
        .transpose()?;
    if a.out.exists() && !a.resume && !a.force {
        return Err(Error::new(
            &out_name,
            "exists: add --resume to continue that sweep or --force to replace it",
        ));
    }
    gputraffic::error::check_writable(&a.out)?;
    let plan = gputraffic::analysis::sweep::Sweep::plan(&spec)?;
    if !plan.skipped.is_empty() {
        eprintln!(
            "note: {} shape(s) of the named block sets cannot launch and are left out: {}",
            plan.skipped.len(),
            plan.skipped.join("; ")
        );
    }
    let bar = progress_bar("configurations");
    let progress = follow(&bar, "configurations");
    let summary = on_threads(l.threads, || {
        plan.run_shard(&a.out, shard, a.resume, &progress)
    })?;
    bar.finish_and_clear();
    let what = match shard {
        Some(s) => format!("shard {s}, {} of the sweep's {}", summary.total, plan.len()),
        None => summary.total.to_string(),
    };
    eprintln!(
        "{out_name}: {what} configurations ({} kept from before, {} simulated)",
        summary.kept, summary.simulated
    );
    Ok(String::new())
}

fn merge(a: &MergeArgs) -> Result<String> {
    if a.out.exists() && !a.force {
        return Err(Error::new(
            a.out.display().to_string(),
            "exists: add --force to replace it",
        ));
    }
    gputraffic::error::check_writable(&a.out)?;
    let merged = gputraffic::analysis::shard::merge_into(&a.out, &a.shards)?;
    eprintln!(
        "{}: {} configurations of sweep {} from {} shards",
        a.out.display(),
        merged.configurations,
        merged.sweep,
        merged.shards
    );
    Ok(String::new())
}

/// A progress bar on stderr counting `what` (hidden when stderr is no terminal).
fn progress_bar(what: &str) -> indicatif::ProgressBar {
    indicatif::ProgressBar::new(0).with_style(
        indicatif::ProgressStyle::with_template(&format!(
            "{{bar:40}} {{pos}}/{{len}} {what}, {{elapsed}} elapsed, about {{eta}} left"
        ))
        .expect("a valid progress template"),
    )
}

/// The waves of a long simulation on stderr: a bar once it has run a second, on a terminal
/// (indicatif draws nothing into a pipe or a file); elsewhere a line a minute ([`PipeProgress`]).
struct WaveBar {
    bar: indicatif::ProgressBar,
    start: std::time::Instant,
    blocks_per_wave: u64,
    shown: std::sync::atomic::AtomicBool,
    lines: PipeProgress,
}

fn wave_bar(launch: &gputraffic::launch::Launch, hw: &gputraffic::input::hw::HwConfig) -> WaveBar {
    let bar =
        indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::hidden())
            .with_style(
                indicatif::ProgressStyle::with_template(
                    "{bar:40} {pos}/{len} waves, {elapsed} elapsed, about {eta} left",
                )
                .expect("a valid progress template"),
            );
    WaveBar {
        bar,
        start: std::time::Instant::now(),
        blocks_per_wave: (launch.occupancy.blocks_per_sm as u64 * hw.sm.count as u64).max(1),
        shown: std::sync::atomic::AtomicBool::new(false),
        lines: PipeProgress::new("waves"),
    }
}

impl WaveBar {
    fn update(&self, blocks_done: u64, blocks: u64) {
        use std::sync::atomic::Ordering::Relaxed;
        let waves = blocks.div_ceil(self.blocks_per_wave);
        self.lines.update(blocks_done / self.blocks_per_wave, waves);
        if !self.shown.load(Relaxed) {
            if self.start.elapsed() < std::time::Duration::from_secs(1) {
                return;
            }
            self.shown.store(true, Relaxed);
            self.bar
                .set_draw_target(indicatif::ProgressDrawTarget::stderr());
        }
        self.bar.set_length(blocks.div_ceil(self.blocks_per_wave));
        self.bar.set_position(blocks_done / self.blocks_per_wave);
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// A `progress(done, total)` callback that moves `bar` and, where stderr is not a terminal,
/// writes a line a minute ([`PipeProgress`]).
fn follow<'a>(
    bar: &'a indicatif::ProgressBar,
    what: &'static str,
) -> impl Fn(usize, usize) + Sync + 'a {
    let lines = PipeProgress::new(what);
    move |done, total| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
        lines.update(done as u64, total as u64);
    }
}

/// Progress on stderr where it is not a terminal (a pipe, a file, a batch job's log), where a
/// bar cannot draw: one line per [`PipeProgress::period`] (a minute), the first after a minute,
/// so short runs write nothing.
struct PipeProgress {
    what: &'static str,
    start: std::time::Instant,
    last: std::sync::Mutex<std::time::Instant>,
    on: bool,
    period: std::time::Duration,
}

impl PipeProgress {
    fn new(what: &'static str) -> PipeProgress {
        use std::io::IsTerminal;
        let now = std::time::Instant::now();
        PipeProgress {
            what,
            start: now,
            last: std::sync::Mutex::new(now),
            on: !std::io::stderr().is_terminal(),
            period: PipeProgress::period(),
        }
    }

    /// A minute; tests set it with `GPUTRAFFIC_PROGRESS_SECONDS` (`tests/cli.rs`).
    fn period() -> std::time::Duration {
        let seconds = std::env::var("GPUTRAFFIC_PROGRESS_SECONDS")
            .ok()
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|s| *s >= 0.0 && s.is_finite())
            .unwrap_or(60.0);
        std::time::Duration::from_secs_f64(seconds)
    }

    fn update(&self, done: u64, total: u64) {
        if !self.on {
            return;
        }
        let Ok(mut last) = self.last.lock() else {
            return;
        };
        if last.elapsed() < self.period {
            return;
        }
        *last = std::time::Instant::now();
        let elapsed = self.start.elapsed().as_secs_f64();
        let left = if done > 0 {
            let rest = total.saturating_sub(done) as f64;
            format!(", about {} left", seconds(elapsed * rest / done as f64))
        } else {
            String::new()
        };
        eprintln!(
            "progress: {done}/{total} {}, {} elapsed{left}",
            self.what,
            seconds(elapsed)
        );
    }
}

/// `s` seconds for people: `42 s`, `7 min`, `3.5 h`.
fn seconds(s: f64) -> String {
    if s < 100.0 {
        format!("{s:.0} s")
    } else if s < 6000.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// The line `simulate`, `rank` and `validate` write on stderr before a run expected to take
/// longer than [`cost_line_seconds`]: its thread accesses, the expected time on `threads`
/// threads, and what `--sample` costs (or would cost), all summed over what is run; `what`
/// says what that is when it is more than one launch ("42 shapes, "). `None` for shorter runs.
fn cost_line(
    c: gputraffic::sim::cost::Cost,
    threads: usize,
    sampling: bool,
    what: &str,
) -> Option<String> {
    use gputraffic::sim::cost;
    let expected = match (sampling, c.sampled) {
        (true, Some((_, _, s))) => s,
        _ => c.seconds,
    };
    if expected <= cost_line_seconds() {
        return None;
    }
    let time = match c.sampled {
        Some((detailed, waves, s)) if sampling => format!(
            "sampled, {detailed} of {waves} waves in detail: about {} (exactly: about {})",
            seconds(s),
            seconds(c.seconds)
        ),
        Some((detailed, waves, s)) => format!(
            "about {}; --sample would simulate {detailed} of {waves} waves in detail, about {}",
            seconds(c.seconds),
            seconds(s)
        ),
        None => format!(
            "about {} (too short for --sample to pay)",
            seconds(c.seconds)
        ),
    };
    Some(format!(
        "note: {what}{} thread accesses on {threads} thread{}: {time} (estimated at {:.0} M accesses/s per thread)",
        c.thread_accesses,
        if threads == 1 { "" } else { "s" },
        cost::THREAD_ACCESSES_PER_SECOND_PER_THREAD / 1e6
    ))
}

/// The cost line of a race of `n` shapes (each costing `c`, screened, and `pre`, pre-screened:
/// its detailed waves, all waves and seconds): the rounds pre-screen at least the first round's
/// shapes and at most all of them (those whose lower bounds lie above the leader's are not), and
/// screen at least one and at most all of them (those whose pre-screens lie above the leader's
/// are not), then the contenders run exactly, usually one or two; the range given is from the
/// first round's pre-screens and one screen to every shape's pre-screen and screen and one
/// exact run. `None` where even that is shorter than [`cost_line_seconds`].
fn race_cost_line(
    c: &gputraffic::sim::cost::Cost,
    pre: Option<(u64, u64, f64)>,
    n: usize,
    threads: usize,
) -> Option<String> {
    use gputraffic::sim::cost;
    let (detailed, waves, screen) = c.sampled?;
    let least = n.min(gputraffic::analysis::rank::SCREEN_ROUND);
    let pre_screen = pre.map_or(0.0, |(_, _, s)| s);
    let most = n as f64 * (pre_screen + screen) + c.seconds;
    if most <= cost_line_seconds() {
        return None;
    }
    let pre_screens = match pre {
        Some((d, w, s)) => format!(
            "{least} to {n} pre-screened (sampled with an L2 that never evicts, {d} of {w} waves in detail, about {} each) and ",
            seconds_fine(s)
        ),
        None => String::new(),
    };
    Some(format!(
        "note: {n} shapes raced, {} thread accesses each, on {threads} thread{}: {pre_screens}1 to {n} screened (sampled, {detailed} of {waves} waves in detail, about {} each; those whose lower bounds or pre-screens lie above the leader's are not), then the contenders exactly (about {} each): about {} (the first round's pre-screens and one screen) to {} (every shape pre-screened and screened, one confirmed) (estimated at {:.0} M accesses/s per thread)",
        c.thread_accesses,
        if threads == 1 { "" } else { "s" },
        seconds_fine(screen),
        seconds_fine(c.seconds),
        seconds_fine(least as f64 * pre_screen + screen),
        seconds(most),
        cost::THREAD_ACCESSES_PER_SECOND_PER_THREAD / 1e6
    ))
}

/// [`seconds`], with a tenth of a second below 10 s.
fn seconds_fine(s: f64) -> String {
    if s < 10.0 {
        format!("{s:.1} s")
    } else {
        seconds(s)
    }
}

/// What simulating `bound` costs on `threads` threads, exactly and sampled.
fn estimate_cost(bound: &gputraffic::Bound, threads: usize) -> Result<gputraffic::sim::cost::Cost> {
    gputraffic::sim::cost::estimate(&bound.launch, &bound.hw, threads, &SampleOptions::default())
}

/// Expected seconds above which `simulate` writes its cost line: 5; tests set it with
/// `GPUTRAFFIC_COST_LINE_SECONDS` (`tests/cli.rs`), so that a small launch shows the line.
fn cost_line_seconds() -> f64 {
    std::env::var("GPUTRAFFIC_COST_LINE_SECONDS")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(5.0)
}

/// `gputraffic lift`: the trace of a .ptx or .cu kernel on stdout.
fn lift(a: &LiftCommandArgs) -> Result<String> {
    if !gputraffic::input::ptx::is_liftable(&a.file) {
        return Err(Error::new(&a.file, "lift reads .ptx and .cu files only"));
    }
    let hw = gputraffic::input::hw::HwConfig::load(&a.hw)?;
    let lifted = gputraffic::input::ptx::lift_file(&a.file, &a.lift.settings().options(&hw, &[])?)?;
    for w in &lifted.warnings {
        eprintln!("warning: {w}");
    }
    Ok(lifted.toml)
}

/// The launch `command` (simulate, predict or rank) asks for, with `block` in place of the
/// trace's block shape when given; a .ptx or .cu kernel is lifted here, once, its warnings on
/// stderr.
fn launch_spec(a: &LaunchArgs, block: Option<String>, command: &str) -> Result<LaunchSpec> {
    let (spec, warnings) = LaunchSpec::resolve(
        a.kernel(),
        &a.lift.settings(),
        &a.one_hw(command)?,
        block,
        a.domain.clone(),
        a.set.clone(),
        a.clock.clone(),
    )?;
    for w in warnings {
        eprintln!("warning: {w}");
    }
    Ok(spec)
}

fn simulate(a: &SimulateArgs) -> Result<String> {
    let l = &a.launch.launch;
    if let Some(out) = &a.out {
        gputraffic::error::check_writable(out)?;
    }
    let simulation =
        launch_spec(l, a.launch.block.clone(), "simulate")?.simulation(a.compare.as_deref())?;
    for w in simulation.warnings() {
        eprintln!("warning: {w}");
    }
    let opts = SimOptions {
        infinite_l1: a.infinite_l1,
        infinite_l2: a.infinite_l2,
        compulsory: !a.no_compulsory,
        serial_l2: a.reference_l2,
        lane_by_lane: a.lane_by_lane,
        tick_by_tick: a.tick_by_tick,
        sample: l.sample.then(SampleOptions::default),
        exceed_memory: a.exceed_memory,
        by_array: a.by_array,
        ..SimOptions::default()
    };
    if a.by_array && l.sample {
        return Err(Error::new("--by-array", gputraffic::sim::BY_ARRAY_SAMPLED));
    }
    let bound = &simulation.prepared.bound;
    // Before the cost line: a launch that could not run is one line of error.
    if !a.exceed_memory {
        bound.launch.check_memory(&bound.hw)?;
    }
    let threads = l.threads.unwrap_or_else(rayon::current_num_threads).max(1);
    let c = estimate_cost(bound, threads)?;
    if let Some(line) = cost_line(c, threads, l.sample, "") {
        eprintln!("{line}");
    }
    let bar = wave_bar(&bound.launch, &bound.hw);
    let progress = |done: u64, total: u64| bar.update(done, total);
    let report = on_threads(l.threads, || simulation.run(&opts, &progress));
    bar.finish();
    let report = report?;
    if let Some(why) = &report.sample_fallback {
        eprintln!("note: --sample: {why}; simulated exactly");
    }
    write_or_print(a.out.as_deref(), report.render(a.launch.format))
}

fn predict(a: &PredictArgs) -> Result<String> {
    let l = &a.launch.launch;
    l.refuse(
        "predict",
        &["--threads", "--sample"],
        "predict evaluates a closed-form model and simulates nothing",
    )?;
    let prediction = launch_spec(l, a.launch.block.clone(), "predict")?.prediction(&a.model)?;
    for w in prediction.warnings() {
        eprintln!("warning: {w}");
    }
    Ok(prediction.render(a.launch.format))
}

/// `gputraffic man`: which page, or every page into a folder.
#[derive(clap::Args)]
struct ManArgs {
    /// The command whose page to print, e.g. rank (default: the overview page, gputraffic(1)).
    #[arg(value_name = "COMMAND")]
    command: Option<String>,
    /// Write every page into this folder instead: gputraffic.1 and gputraffic-COMMAND.1 for
    /// each command (for `man -M`, or to install under share/man/man1).
    #[arg(long, value_name = "DIR", conflicts_with = "command")]
    dir: Option<std::path::PathBuf>,
}

/// The exit status of every command, for the manual pages (`main` returns them).
const EXIT_STATUS: &[(&str, &str)] = &[
    ("0", "Success: the output is complete."),
    (
        "2",
        "Bad input (a malformed or unknown file, kernel, GPU or option, impossible geometry, \
         a launch that cannot run) or a run that failed: one line on standard error naming the \
         file (and line) or the option and the problem, and nothing on standard output or in \
         --out. Command-line syntax errors also exit with 2.",
    ),
];

/// Example command lines of each command for its manual page, with what each does. They run
/// as written from the repository's root, in this order (`tests/cli.rs` runs them all but the
/// two that need nvcc or measured counters).
const EXAMPLES: &[(&str, &[(&str, &str)])] = &[
    (
        "simulate",
        &[
            (
                "gputraffic simulate --kernel star1 --domain 128x128x128 --block 32x8x1",
                "Simulate the shipped 7-point star on a 128x128x128 domain with 32x8x1 blocks on the default GPU (h200): the traffic at every level and the predicted time, as a table.",
            ),
            (
                "gputraffic simulate --kernel star4 --hw h100-sxm --domain 128x128x128 --format json",
                "The same report as JSON (schemas/simulate.schema.json describes it).",
            ),
            (
                "gputraffic simulate --kernel star1 --domain 128x128x128 --compare su2015",
                "Show Su et al.'s model beside the simulation.",
            ),
        ],
    ),
    (
        "predict",
        &[(
            "gputraffic predict --kernel su-7pt-1 --model su2015 --hw k20",
            "Evaluate Su et al.'s closed-form model of the su-7pt-1 kernel on a K20.",
        )],
    ),
    (
        "rank",
        &[(
            "gputraffic rank --kernel star1 --domain 64x64x64 --blocks 32x8x1,32x4x2,64x4x1",
            "Rank three block shapes of 256 threads by predicted time, fastest first (all-256: every power-of-two shape).",
        )],
    ),
    (
        "sweep",
        &[
            (
                "gputraffic sweep --kernel star1 --blocks 32x4x2,64x4x1 --domains 64x64x64 --l2-scale 0.01,0.02,0.05,0.1,1 --out sweep.csv",
                "Simulate two shapes at five L2 sizes into sweep.csv, a row per configuration with the metrics, derived quantities and every model's prediction.",
            ),
            (
                "gputraffic sweep --kernel star1 --blocks 32x4x1,64x2x1,16x8x1 --domains 64x64x64 --shard 1/2 --out shard1.csv",
                "Run the first half of a sweep (e.g. one task of a Slurm array)...",
            ),
            (
                "gputraffic sweep --kernel star1 --blocks 32x4x1,64x2x1,16x8x1 --domains 64x64x64 --shard 2/2 --out shard2.csv",
                "... and the second half.",
            ),
        ],
    ),
    (
        "merge",
        &[(
            "gputraffic merge shard1.csv shard2.csv --out merged.csv",
            "Join the shards of a sweep into the file the unsharded sweep writes.",
        )],
    ),
    (
        "fit",
        &[(
            "gputraffic fit --model gompertz --input sweep.csv --x l2_oversubscription --y l2_redundant_hit_rate --bound a=0..1 --out fit.json",
            "Fit a Gompertz curve of the L2's hit rate on redundant loads over its oversubscription.",
        )],
    ),
    (
        "plot",
        &[(
            "gputraffic plot hit-rate --input sweep.csv --fit fit.json --out hit-rate.png",
            "Draw the sweep's points and the fitted curve.",
        )],
    ),
    (
        "validate",
        &[(
            "gputraffic validate --measured ncu.csv --manifest manifest.toml --hw h200 --format json --out report.json",
            "Simulate the launches measured by validation/measure.sh (an Nsight Compute export and its manifest) and compare every counter (schemas/validate.schema.json describes the JSON; docs/validation.md).",
        )],
    ),
    (
        "list",
        &[("gputraffic list", "The shipped kernels, GPUs and models.")],
    ),
    (
        "show",
        &[(
            "gputraffic show h200 > my-gpu.toml",
            "Start a configuration of your own from the H200's.",
        )],
    ),
    (
        "lift",
        &[
            (
                "gputraffic lift tests/data/ptx/stencils.ptx --entry copy > copy.toml",
                "Write the trace of the kernel copy of a PTX file.",
            ),
            (
                "gputraffic lift star.cu --entry 'star<1>' --hw h100-sxm > star1.toml",
                "Compile a CUDA kernel with nvcc for the H100 and write its trace (docs/cuda.md).",
            ),
        ],
    ),
    (
        "completions",
        &[(
            "gputraffic completions bash > gputraffic.bash",
            "A bash completion script: source it, or install it as /usr/share/bash-completion/completions/gputraffic.",
        )],
    ),
    (
        "man",
        &[
            (
                "gputraffic man rank > gputraffic-rank.1",
                "The page of rank; read it with man ./gputraffic-rank.1.",
            ),
            (
                "gputraffic man --dir man1",
                "Write every page into man1/ (then man -M . gputraffic-simulate).",
            ),
        ],
    ),
];

/// The command line with its subcommands built, as the manual pages and completions show it.
fn built_cli() -> clap::Command {
    let mut cli = Cli::command().disable_help_subcommand(true);
    cli.build();
    cli
}

/// `text` with roff's special characters escaped, for a line of running text.
fn roff_text(text: &str) -> String {
    let text = text.replace('\\', "\\e").replace('-', "\\-");
    match text.starts_with(['.', '\'']) {
        true => format!("\\&{text}"),
        false => text,
    }
}

/// The manual page of `cmd` (a subcommand of [`built_cli`], or the whole command line): clap's
/// sections from the one definition of every flag, then the exit status, examples and where to
/// read on.
fn man_page(cmd: &clap::Command, examples: &[(&str, &str)], see_also: &[String]) -> Result<String> {
    let page = clap_mangen::Man::new(cmd.clone())
        .source(format!("gputraffic {VERSION}"))
        .manual("gputraffic manual");
    let mut out = Vec::new();
    let io = |e: std::io::Error| Error::new("man", e.to_string());
    page.render_title(&mut out).map_err(io)?;
    page.render_name_section(&mut out).map_err(io)?;
    page.render_synopsis_section(&mut out).map_err(io)?;
    page.render_description_section(&mut out).map_err(io)?;
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        page.render_options_section(&mut out).map_err(io)?;
    }
    if cmd.has_subcommands() {
        page.render_subcommands_section(&mut out).map_err(io)?;
    }
    // Each section rendered alone starts with clap_mangen's prologue (the quote string); once
    // is enough.
    let prologue = ".ie \\n(.g .ds Aq \\(aq\n.el .ds Aq '\n";
    let text = String::from_utf8_lossy(&out);
    let mut roff = prologue.to_string();
    roff.push_str(&text.replace(prologue, ""));
    roff.push_str(".SH \"EXIT STATUS\"\n");
    for (code, meaning) in EXIT_STATUS {
        roff.push_str(&format!(".TP\n\\fB{code}\\fR\n{}\n", roff_text(meaning)));
    }
    if !examples.is_empty() {
        roff.push_str(".SH EXAMPLES\n");
        for (line, what) in examples {
            roff.push_str(&format!(
                ".PP\n{}\n.PP\n.RS 4\n.nf\n\\fB{}\\fR\n.fi\n.RE\n",
                roff_text(what),
                roff_text(line)
            ));
        }
    }
    roff.push_str(".SH \"SEE ALSO\"\n");
    roff.push_str(&roff_text(&see_also.join(", ")));
    roff.push('\n');
    roff.push_str(&format!(".SH VERSION\n{}\n", roff_text(VERSION)));
    Ok(roff)
}

/// Every manual page: (file name, roff), the overview `gputraffic.1` first, then one page per
/// command in the order of `gputraffic --help`.
fn man_pages() -> Result<Vec<(String, String)>> {
    let cli = built_cli();
    let page_of = |name: &str| format!("gputraffic-{name}(1)");
    let commands: Vec<&clap::Command> = cli.get_subcommands().collect();
    let mut see_also = vec![
        "docs/trace-format.md".to_string(),
        "docs/hw-config.md".to_string(),
        "the JSON Schemas in schemas/".to_string(),
    ];
    see_also.extend(commands.iter().map(|c| page_of(c.get_name())));
    let tour: Vec<(&str, &str)> = EXAMPLES
        .iter()
        .filter(|(c, _)| ["simulate", "rank", "sweep"].contains(c))
        .map(|(_, e)| e[0])
        .collect();
    let mut pages = vec![(
        "gputraffic.1".to_string(),
        man_page(&cli, &tour, &see_also)?,
    )];
    for c in commands {
        let examples = EXAMPLES
            .iter()
            .find(|(name, _)| *name == c.get_name())
            .map_or(&[][..], |(_, e)| e);
        let see_also = vec!["gputraffic(1)".to_string()];
        pages.push((
            format!("gputraffic-{}.1", c.get_name()),
            man_page(c, examples, &see_also)?,
        ));
    }
    Ok(pages)
}

/// `gputraffic man`: the overview page, one command's page, or every page written into `--dir`.
fn man(a: &ManArgs) -> Result<String> {
    let pages = man_pages()?;
    if let Some(dir) = &a.dir {
        for (file, roff) in &pages {
            gputraffic::error::write_file_atomically(&dir.join(file), roff.as_bytes())?;
        }
        eprintln!("{}: {} manual pages", dir.display(), pages.len());
        return Ok(String::new());
    }
    let file = match &a.command {
        None => "gputraffic.1".to_string(),
        Some(c) => format!("gputraffic-{c}.1"),
    };
    match pages.into_iter().find(|(f, _)| *f == file) {
        Some((_, roff)) => Ok(roff),
        None => {
            let command = a.command.as_deref().unwrap_or_default();
            let cli = built_cli();
            let names = cli.get_subcommands().map(|c| c.get_name());
            Err(Error::new(
                "man",
                format!(
                    "'{command}' is no command{}",
                    gputraffic::input::did_you_mean(command, names)
                ),
            ))
        }
    }
}

/// The command line as the completion scripts offer it: only the visible flags (clap_complete
/// offers hidden ones too), with the shipped kernel names for `--kernel`, the shipped GPU names
/// for `--hw`, both for `show`, and the commands for `man`.
fn completion_view(cmd: &clap::Command) -> clap::Command {
    let kernels = || gputraffic::input::trace::SHIPPED.iter().map(|(n, _)| *n);
    let gpus = || gputraffic::input::hw::SHIPPED.iter().map(|(n, _)| *n);
    let offer = |arg: clap::Arg, names: Vec<&'static str>| {
        arg.value_parser(clap::builder::PossibleValuesParser::new(names))
    };
    // A fresh command holds the visible arguments only; the name is leaked once per command,
    // as clap takes names as &'static str.
    let name: &'static str = Box::leak(cmd.get_name().to_string().into_boxed_str());
    let mut view = clap::Command::new(name);
    if let Some(about) = cmd.get_about() {
        view = view.about(about.clone());
    }
    if cmd.get_version().is_some() {
        view = view.version(VERSION);
    }
    for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
        let arg = arg.clone();
        view = view.arg(match (name, arg.get_id().as_str()) {
            (_, "kernel") => offer(arg, kernels().collect()),
            (_, "hw") => offer(arg, gpus().collect()),
            ("show", "name") => offer(arg, kernels().chain(gpus()).collect()),
            ("man", "command") => offer(arg, EXAMPLES.iter().map(|(c, _)| *c).collect()),
            _ => arg,
        });
    }
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        view = view.subcommand(completion_view(sub));
    }
    view
}

/// The completion script for `shell`: [`completion_view`]'s, where a shell allows it with file
/// names offered beside the shipped names of `--kernel` and `--hw`.
fn completions(shell: clap_complete::Shell) -> String {
    let mut out = Vec::new();
    let mut view = completion_view(&Cli::command());
    clap_complete::generate(shell, &mut view, "gputraffic", &mut out);
    let mut script = String::from_utf8_lossy(&out).into_owned();
    let kernels: Vec<&str> = gputraffic::input::trace::SHIPPED
        .iter()
        .map(|(n, _)| *n)
        .collect();
    let gpus: Vec<&str> = gputraffic::input::hw::SHIPPED
        .iter()
        .map(|(n, _)| *n)
        .collect();
    for (names, what) in [(kernels.join(" "), "kernel"), (gpus.join(" "), "GPU")] {
        script = match shell {
            clap_complete::Shell::Bash => script.replace(
                &format!("compgen -W \"{names}\" -- \"${{cur}}\"))"),
                &format!("compgen -W \"{names}\" -- \"${{cur}}\") $(compgen -f -- \"${{cur}}\"))"),
            ),
            clap_complete::Shell::Zsh => script.replace(
                &format!(":({names})'"),
                // _arguments splits a spec at colons (the alternatives' own are escaped) and passes
                // options to an action unless it starts with a space.
                &format!(
                    ": _alternative \"shipped\\:shipped {what}\\:({names})\" \"files\\:file\\:_files\"'"
                ),
            ),
            _ => script,
        };
    }
    if shell == clap_complete::Shell::Fish {
        // -F: file names as well as the listed ones.
        let files_too = |line: &str| match line.contains(" -l kernel ") || line.contains(" -l hw ")
        {
            true => line.replacen(" -r -f -a ", " -r -F -a ", 1),
            false => line.to_string(),
        };
        script = script.lines().map(files_too).collect::<Vec<_>>().join("\n") + "\n";
    }
    script
}

#[derive(clap::Args)]
struct FitArgs {
    /// Model: gompertz (y = a*exp(b*exp(c*x)) on --x, --y) or su2015 (delta, epsilon, eta).
    #[arg(long)]
    model: String,
    /// Sweep results: a CSV file with a header line, or .jsonl.
    #[arg(long)]
    input: std::path::PathBuf,
    /// Column of the independent variable (gompertz), e.g. l2_oversubscription.
    #[arg(long)]
    x: Option<String>,
    /// Column of the dependent variable (gompertz), e.g. l2_redundant_hit_rate.
    #[arg(long)]
    y: Option<String>,
    /// Output format.
    #[arg(long, value_parser = choice::<gputraffic::analysis::fit::FitFormat>(), default_value = "json")]
    format: gputraffic::analysis::fit::FitFormat,
    /// Use only the rows where COLUMN equals VALUE (repeatable), e.g. --where hw=k20-rodc.
    #[arg(long = "where", value_name = "COLUMN=VALUE")]
    where_: Vec<String>,
    /// Keep a fitted constant within LO..HI (repeatable; a side may be empty), e.g.
    /// --bound a=0..1 (gompertz: a, b, c; su2015: delta, epsilon, eta).
    #[arg(long, value_name = "NAME=LO..HI")]
    bound: Vec<String>,
    /// Write the fit to this file instead of stdout (only when the fit succeeds).
    #[arg(long)]
    out: Option<std::path::PathBuf>,
}

fn fit(a: &FitArgs) -> Result<String> {
    use gputraffic::analysis::fit::{Bounds, Request};
    let request = Request::new(&a.model, a.x.as_deref(), a.y.as_deref())?;
    let bounds = Bounds::parse(&a.bound, &request)?;
    if let Some(out) = &a.out {
        // A table in a .json file would look like what `plot --fit` reads, and is not.
        if a.format == gputraffic::analysis::fit::FitFormat::Table
            && out
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("json"))
        {
            return Err(Error::new(
                out.display().to_string(),
                "--format table writes aligned text for people, which `plot --fit` cannot read: \
                 leave out --format table (JSON is the default) or give --out a name not \
                 ending in .json",
            ));
        }
        gputraffic::error::check_writable(out)?;
    }
    let table = gputraffic::analysis::sweep_file::read_table(&a.input)?.filtered(&a.where_)?;
    let fitted = request.fit_bounded(&table, &bounds)?;
    for w in fit_warnings(&fitted) {
        eprintln!("warning: {w}");
    }
    write_or_print(a.out.as_deref(), fitted.render(a.format))
}

/// What is physically wrong with a fit (the library's facts in words): each constant outside its
/// range with the `--bound` that keeps it in, and each r² below 0, which no bound can raise (a
/// bound only constrains the fit).
fn fit_warnings(fitted: &gputraffic::analysis::fit::Fitted) -> Vec<String> {
    use gputraffic::analysis::fit::significant;
    let mut warnings: Vec<String> = fitted
        .out_of_range()
        .iter()
        .map(|o| {
            format!(
                "fitted {} = {} is outside its physical range ({} must be {}); fit again with {}",
                o.name,
                significant(o.value, 6),
                o.what,
                o.domain,
                o.bound()
            )
        })
        .collect();
    for (name, r2) in fitted.negative_r2() {
        warnings.push(format!(
            "{name} = {} is below 0: the fit describes y worse than y's mean does, and no --bound \
             raises it (a bound only constrains the fit); the model does not describe these points \
             (check the columns and --where)",
            significant(r2, 6)
        ));
    }
    warnings
}

/// Writes `text` to `out` (all or nothing), or hands it back for stdout when there is no `--out`.
fn write_or_print(out: Option<&std::path::Path>, text: String) -> Result<String> {
    match out {
        Some(path) => {
            gputraffic::error::write_file_atomically(path, text.as_bytes())?;
            Ok(String::new())
        }
        None => Ok(text),
    }
}

#[derive(clap::Args)]
#[command(mut_args(validate_flags))]
struct ValidateArgs {
    /// Measured counters: a wide CSV (kernel,nx,ny,nz,bx,by,bz[,cz], then one column per
    /// metric) or the export of `ncu --csv --print-units base` (then --manifest).
    #[arg(long)]
    measured: std::path::PathBuf,
    /// TOML file naming the kernel (a trace, or a .cu/.ptx file with its entry and lift
    /// options), domain and parameters of each launch of an ncu export (validation/measure.sh
    /// writes one; docs/validation.md).
    #[arg(long)]
    manifest: Option<std::path::PathBuf>,
    #[command(flatten)]
    launch: LaunchArgs,
    /// Output format.
    #[arg(long, value_parser = choice::<gputraffic::analysis::validate::ValidateFormat>(), default_value = "table")]
    format: gputraffic::analysis::validate::ValidateFormat,
    /// Write the report to this file instead of stdout (only when every launch simulated).
    /// Each finished launch is also journalled in OUT.journal, so that an interrupted run can
    /// continue with --resume; the journal goes when the report is written.
    #[arg(long)]
    out: Option<std::path::PathBuf>,
    /// Continue an interrupted run from the journal beside --out: launches it holds are not
    /// simulated again, and the report is the one an uninterrupted run writes.
    #[arg(long, requires = "out")]
    resume: bool,
    /// Start afresh even though an interrupted run left its journal beside --out.
    #[arg(long, requires = "out", conflicts_with = "resume")]
    force: bool,
}

fn validate(a: &ValidateArgs) -> Result<String> {
    use gputraffic::analysis::{journal, validate::JournalOptions};
    if let Some(out) = &a.out {
        gputraffic::error::check_writable(out)?;
    }
    let l = &a.launch;
    l.refuse(
        "validate",
        &["--kernel", "--domain", "--set"],
        "the kernels, domains and parameters of the launches come from --measured and --manifest",
    )?;
    l.refuse(
        "validate",
        &LiftSettings::NAMES,
        "a manifest launch names its .cu or .ptx kernel with its entry and lift options (docs/validation.md)",
    )?;
    l.refuse(
        "validate",
        &["--clock"],
        "the time is compared at the base clock, which Nsight Compute locks",
    )?;
    let (launches, notes) =
        gputraffic::analysis::measured::load(&a.measured, a.manifest.as_deref())?;
    let hw = gputraffic::input::hw::HwConfig::load(&l.one_hw("validate")?)?;
    let threads = l.threads.unwrap_or_else(rayon::current_num_threads).max(1);
    // Bound once: for the cost line here, then simulated.
    let (bound, warnings) = gputraffic::analysis::validate::bind_launches(&launches, &hw)?;
    for w in warnings {
        eprintln!("warning: {w}");
    }
    let mut cost = gputraffic::sim::cost::Cost::default();
    for b in &bound {
        cost = cost.plus(estimate_cost(b, threads)?);
    }
    let what = format!("{} launches, ", launches.len());
    if let Some(line) = cost_line(cost, threads, l.sample, &what) {
        eprintln!("{line}");
    }
    let bar = progress_bar("launches");
    let progress = follow(&bar, "launches");
    let measured = a.measured.display().to_string();
    let journal_path = a.out.as_deref().map(journal::path_for);
    let journal = journal_path.as_deref().map(|path| JournalOptions {
        path,
        resume: a.resume,
        replace: a.force,
    });
    let validation = on_threads(l.threads, || {
        gputraffic::analysis::validate::validate_resumable(
            launches,
            bound,
            &hw,
            &measured,
            l.sample.then(SampleOptions::default),
            journal,
            &progress,
        )
    })?;
    bar.finish_and_clear();
    // After the run, so that bad input stays a one-line error.
    for note in notes {
        eprintln!("note: {note}");
    }
    write_or_print(a.out.as_deref(), validation.render(a.format))
}

#[derive(clap::Args)]
struct PlotArgs {
    /// What to draw.
    #[arg(value_parser = choice::<gputraffic::plot::KindName>())]
    kind: gputraffic::plot::KindName,
    /// The sweep's output (CSV with a header, or .jsonl); for validation the JSON of
    /// `gputraffic validate --format json`.
    #[arg(long)]
    input: std::path::PathBuf,
    /// The picture to write: a .png or .svg name.
    #[arg(long)]
    out: std::path::PathBuf,
    /// Caption (default: made from the columns).
    #[arg(long)]
    title: Option<String>,
    /// Description under the x axis, e.g. "L2 oversubscription O" (default: the column and
    /// its unit).
    #[arg(long, value_name = "TEXT")]
    x_label: Option<String>,
    /// Description beside the y axis (default: the column and its unit).
    #[arg(long, value_name = "TEXT")]
    y_label: Option<String>,
    /// Picture size WIDTHxHEIGHT in pixels.
    #[arg(long, default_value = gputraffic::plot::DEFAULT_SIZE_TEXT)]
    size: String,
    /// Only rows whose column COL equals VALUE (repeatable; all must hold).
    #[arg(long = "where", value_name = "COL=VALUE")]
    filters: Vec<String>,
    /// Column on the x axis (hit-rate: default l2_oversubscription; scatter).
    #[arg(long, value_name = "COL")]
    x: Option<String>,
    /// Column on the y axis (hit-rate: default l2_redundant_hit_rate; scatter;
    /// layer-condition: default dram__sectors_read.sum_bytes_per_lup).
    #[arg(long, value_name = "COL")]
    y: Option<String>,
    /// hit-rate: draw the curve from `gputraffic fit --model gompertz --format json`.
    #[arg(long, value_name = "FILE")]
    fit: Option<std::path::PathBuf>,
    /// scatter: logarithmic axes.
    #[arg(long)]
    log: bool,
    /// block-table: the column shown in the cells; validation: a metric to draw (repeatable,
    /// one panel each; default every metric in the file).
    #[arg(long, value_name = "COL")]
    metric: Vec<String>,
    /// composition: the cache level (default l2).
    #[arg(long, value_parser = choice::<gputraffic::plot::Level>())]
    level: Option<gputraffic::plot::Level>,
    /// hit-rate, scatter, layer-condition: how block shapes are told apart (default auto:
    /// categorical for up to 16 shapes, else ernst).
    #[arg(long, value_parser = choice::<gputraffic::plot::Colours>())]
    colours: Option<gputraffic::plot::Colours>,
}

fn plot(a: &PlotArgs) -> Result<String> {
    use gputraffic::plot;
    // Check the cheap things (output name, options) before reading anything.
    plot::format_of(&a.out)?;
    gputraffic::error::check_writable(&a.out)?;
    let options = plot::PlotOptions {
        x: a.x.clone(),
        y: a.y.clone(),
        fit: a.fit.clone(),
        log: a.log,
        metric: a.metric.clone(),
        level: a.level,
        colours: a.colours,
    };
    let spec = plot::PlotSpec {
        kind: plot::PlotKind::from_options(a.kind, &options)?,
        title: a.title.clone(),
        size: plot::parse_size(&a.size)?,
        filters: a.filters.clone(),
        x_label: a.x_label.clone(),
        y_label: a.y_label.clone(),
    };
    let table = plot::load_input(a.kind, &a.input)?;
    for note in plot::render(&spec, &table, &a.out)? {
        eprintln!("note: {note}");
    }
    Ok(String::new())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Simulate(a) => simulate(a),
        Command::Predict(a) => predict(a),
        Command::Sweep(a) => sweep(a),
        Command::Merge(a) => merge(a),
        Command::Fit(a) => fit(a),
        Command::Plot(a) => plot(a),
        Command::Validate(a) => validate(a),
        Command::Rank(a) => rank(a),
        Command::Show(a) => show(a),
        Command::Lift(a) => lift(a),
        Command::List => Ok(gputraffic::request::listing()),
        Command::Completions { shell } => Ok(completions(*shell)),
        Command::Man(a) => man(a),
    };
    match result {
        Ok(out) => {
            print!("{out}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
