//! The `gputraffic` command line: a thin layer over the library.

use clap::{CommandFactory, Parser, Subcommand};
use gputraffic::choice::Choice;
use gputraffic::models;
use gputraffic::report::Format;
use gputraffic::request::{KernelSource, LaunchSpec, on_threads};
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
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff): `gputraffic man > gputraffic.1; man ./gputraffic.1`.
    Man,
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
}

/// What `simulate` and `predict` share: the kernel, the GPU, the launch and the output.
#[derive(clap::Args)]
struct LaunchArgs {
    /// Kernel trace: a path, the name of a shipped trace (e.g. star1), or - for standard input.
    #[arg(long)]
    kernel: String,
    /// GPU: a shipped configuration name (e.g. h200) or a path to one.
    #[arg(long, default_value = "h200")]
    hw: String,
    /// Block shape XxYxZ (default: the trace's).
    #[arg(long)]
    block: Option<String>,
    /// Domain N, NXxNY or NXxNYxNZ: sets the kernel's nx (, ny, nz), as many as it has.
    #[arg(long)]
    domain: Option<String>,
    /// Set a kernel parameter or a constant of the model (--model / --compare), NAME=VALUE
    /// (repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
    /// Output format.
    #[arg(long, value_parser = choice::<Format>(), default_value = "table")]
    format: Format,
    /// Clock for the time model: boost, base (Nsight Compute's default), or a value in GHz.
    #[arg(long, default_value = "boost")]
    clock: String,
}

#[derive(clap::Args)]
struct SimulateArgs {
    #[command(flatten)]
    launch: LaunchArgs,
    /// Also evaluate this model (see `gputraffic list`) and show it next to the simulation.
    #[arg(long, value_name = "MODEL")]
    compare: Option<String>,
    /// Worker threads (default: all cores). Results do not depend on it.
    #[arg(long)]
    threads: Option<usize>,
    /// Give every SM an L1 that never evicts.
    #[arg(long)]
    infinite_l1: bool,
    /// Give the L2 partitions infinite capacity.
    #[arg(long)]
    infinite_l2: bool,
    /// Skip tracking the compulsory volumes (a little faster).
    #[arg(long)]
    no_compulsory: bool,
    /// Simulate the first and last waves exactly and a stratified sample of the others, and
    /// extrapolate: every count with a 95% interval (exact when the launch is too short).
    #[arg(long)]
    sample: bool,
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
}

#[derive(clap::Args)]
struct PredictArgs {
    /// Model name (see `gputraffic list`).
    #[arg(long)]
    model: String,
    #[command(flatten)]
    launch: LaunchArgs,
}

#[derive(clap::Args)]
struct SweepArgs {
    /// Kernel trace: a path, the name of a shipped trace (e.g. star4), or - for standard input.
    #[arg(long)]
    kernel: String,
    /// GPUs, comma-separated shipped names or paths.
    #[arg(long, default_value = "h200", value_delimiter = ',')]
    hw: Vec<String>,
    /// Block shapes: AxBxC, all-N (every power-of-two shape of N threads), ernst-1024,
    /// ernst-512, tabik-2d; comma-separated.
    #[arg(long, required = true)]
    blocks: Vec<String>,
    /// Domains: NXxNYxNZ (NXxNY or N for 2-D and 1-D kernels), or
    /// square-xy:total=T:from=A:to=B[:points=K] (square XY planes at constant total size);
    /// comma-separated.
    #[arg(long)]
    domains: Vec<String>,
    /// A kernel parameter or model constant and its values, NAME=V1,V2,… (repeatable; every
    /// combination runs).
    #[arg(long = "set", value_name = "NAME=V1,V2,…")]
    set: Vec<String>,
    /// Factors for the L1 capacity, comma-separated.
    #[arg(long = "l1-scale", value_delimiter = ',')]
    l1_scale: Vec<f64>,
    /// Factors for the L2 capacity, comma-separated.
    #[arg(long = "l2-scale", value_delimiter = ',')]
    l2_scale: Vec<f64>,
    /// Models whose predictions go into every row: names, `all` or `none`.
    #[arg(long, default_value = "all", value_delimiter = ',')]
    models: Vec<String>,
    /// Clock for the time model: boost, base, or GHz.
    #[arg(long, default_value = "boost")]
    clock: String,
    /// Output file: .jsonl gives JSON lines, anything else CSV.
    #[arg(long)]
    out: std::path::PathBuf,
    /// Continue an interrupted sweep: keep the rows already in --out, run the rest.
    #[arg(long)]
    resume: bool,
    /// Replace an existing --out.
    #[arg(long, conflicts_with = "resume")]
    force: bool,
    /// Worker threads (default: all cores). Results do not depend on it.
    #[arg(long)]
    threads: Option<usize>,
    /// Sample the interior waves of long launches instead of simulating every one: counts
    /// become estimates, and every row gains `sampled` and a 95% interval per metric
    /// (METRIC_ci95_lo, METRIC_ci95_hi; see simulate --sample).
    #[arg(long)]
    sample: bool,
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
struct RankArgs {
    /// Kernel trace: a path, the name of a shipped trace (e.g. star4), or - for standard input.
    #[arg(long)]
    kernel: String,
    /// GPU: a shipped configuration name (e.g. h200) or a path to one.
    #[arg(long, default_value = "h200")]
    hw: String,
    /// Block shapes: AxBxC, all-N (every power-of-two shape of N threads), ernst-1024,
    /// ernst-512, tabik-2d; comma-separated.
    #[arg(long, required = true)]
    blocks: Vec<String>,
    /// Domain N, NXxNY or NXxNYxNZ: sets the kernel's nx (, ny, nz), as many as it has.
    #[arg(long)]
    domain: Option<String>,
    /// Set a kernel parameter, NAME=VALUE (repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
    /// Clock for the time model: boost, base (Nsight Compute's default), or a value in GHz.
    #[arg(long, default_value = "boost")]
    clock: String,
    /// Output format.
    #[arg(long, value_parser = choice::<Format>(), default_value = "table")]
    format: Format,
    /// Sample the interior waves of long launches instead of simulating every one: counts
    /// become estimates (see simulate --sample).
    #[arg(long)]
    sample: bool,
    /// Worker threads (default: all cores). Results do not depend on it.
    #[arg(long)]
    threads: Option<usize>,
}

fn rank(a: &RankArgs) -> Result<String> {
    use gputraffic::analysis::rank;
    let spec = LaunchSpec {
        kernel: KernelSource::Load(a.kernel.clone()),
        hw: a.hw.clone(),
        block: None,
        domain: a.domain.clone(),
        set: a.set.clone(),
        clock: a.clock.clone(),
    };
    let bar = progress_bar("shapes");
    let sample = a.sample.then(SampleOptions::default);
    let ranking = on_threads(a.threads, || spec.rank(&a.blocks, sample, &follow(&bar)))?;
    bar.finish_and_clear();
    for s in &ranking.skipped {
        eprintln!("note: skipped {s}");
    }
    let shapes = ranking.shapes;
    Ok(match a.format {
        Format::Table => rank::to_table(&shapes),
        Format::Csv => rank::to_csv(&shapes),
        Format::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&shapes).expect("JSON of plain values")
        ),
    })
}

fn sweep(a: &SweepArgs) -> Result<String> {
    let spec = gputraffic::analysis::sweep::SweepSpec {
        kernel: KernelSource::Load(a.kernel.clone()),
        hws: a.hw.clone(),
        blocks: a.blocks.clone(),
        domains: a.domains.clone(),
        sets: a.set.clone(),
        l1_scales: a.l1_scale.clone(),
        l2_scales: a.l2_scale.clone(),
        models: models::select(&a.models)?,
        clock: a.clock.clone(),
        sample: a.sample.then(SampleOptions::default),
    };
    let out_name = a.out.display().to_string();
    let shard = a
        .shard
        .as_deref()
        .map(gputraffic::analysis::shard::Shard::parse)
        .transpose()?;
    if a.out.exists() && !a.resume && !a.force {
        return Err(Error::new(
            &out_name,
            "exists: add --resume to continue that sweep or --force to replace it",
        ));
    }
    let plan = gputraffic::analysis::sweep::Sweep::plan(&spec)?;
    if !plan.skipped.is_empty() {
        eprintln!(
            "note: {} shape(s) of the named block sets cannot launch and are left out: {}",
            plan.skipped.len(),
            plan.skipped.join("; ")
        );
    }
    let bar = progress_bar("configurations");
    let progress = follow(&bar);
    let summary = on_threads(a.threads, || {
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

/// The waves of a long simulation on stderr: shown once it has run a second, and only on a
/// terminal (indicatif draws nothing into a pipe or a file).
struct WaveBar {
    bar: indicatif::ProgressBar,
    start: std::time::Instant,
    blocks_per_wave: u64,
    shown: std::sync::atomic::AtomicBool,
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
    }
}

impl WaveBar {
    fn update(&self, blocks_done: u64, blocks: u64) {
        use std::sync::atomic::Ordering::Relaxed;
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

/// A `progress(done, total)` callback that moves `bar`.
fn follow(bar: &indicatif::ProgressBar) -> impl Fn(usize, usize) + Sync + '_ {
    move |done, total| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    }
}

/// The launch `simulate` and `predict` ask for.
fn launch_spec(a: &LaunchArgs) -> LaunchSpec {
    LaunchSpec {
        kernel: KernelSource::Load(a.kernel.clone()),
        hw: a.hw.clone(),
        block: a.block.clone(),
        domain: a.domain.clone(),
        set: a.set.clone(),
        clock: a.clock.clone(),
    }
}

fn simulate(a: &SimulateArgs) -> Result<String> {
    let model = a.compare.as_deref().map(models::find).transpose()?;
    let prepared = launch_spec(&a.launch).prepare(model)?;
    // The model runs first: a model error should not cost a simulation.
    let predicted = model.map(|m| prepared.predict(m)).transpose()?;
    for w in predicted.iter().flat_map(|(p, _)| &p.warnings) {
        eprintln!("warning: {w}");
    }
    let opts = SimOptions {
        infinite_l1: a.infinite_l1,
        infinite_l2: a.infinite_l2,
        compulsory: !a.no_compulsory,
        serial_l2: a.reference_l2,
        lane_by_lane: a.lane_by_lane,
        tick_by_tick: a.tick_by_tick,
        sample: a.sample.then(SampleOptions::default),
        ..SimOptions::default()
    };
    let bar = wave_bar(&prepared.bound.launch, &prepared.bound.hw);
    let progress = |done: u64, total: u64| bar.update(done, total);
    let report = on_threads(a.threads, || prepared.simulate(&opts, &progress));
    bar.finish();
    let mut report = report?;
    if let Some((p, t)) = predicted {
        report.compare(p, t);
    }
    Ok(report.render(a.launch.format))
}

fn predict(a: &PredictArgs) -> Result<String> {
    let model = models::find(&a.model)?;
    let prepared = launch_spec(&a.launch).prepare(Some(model))?;
    let (p, t) = prepared.predict(model)?;
    for w in &p.warnings {
        eprintln!("warning: {w}");
    }
    let bound = &prepared.bound;
    Ok(gputraffic::report::render_prediction(
        &bound.launch,
        &bound.hw,
        &p,
        &t,
        a.launch.format,
    ))
}

/// The completion script for `shell`.
fn completions(shell: clap_complete::Shell) -> String {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "gputraffic", &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// The manual page.
fn man() -> Result<String> {
    let mut out = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut out)
        .map_err(|e| Error::new("man", e.to_string()))?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

fn list() -> String {
    let mut s = String::from("kernels (traces/):\n");
    for (name, desc) in gputraffic::input::shipped_kernels() {
        s += &format!("  {name:<22} {desc}\n");
    }
    s += "hardware (hw-configs/):\n";
    for (name, desc) in gputraffic::input::shipped_hw() {
        s += &format!("  {name:<22} {desc}\n");
    }
    s += "models (--model, --compare):\n";
    for m in models::MODELS {
        s += &format!("  {:<22} {}\n", m.name, m.summary);
        s += &format!("      applies to {}\n", m.scope.applies_to);
        for p in m.params {
            s += &format!("      --set {:<18} {}\n", format!("{}=", p.name), p.doc);
        }
    }
    s += "fits (gputraffic fit --model):\n";
    for (name, summary) in gputraffic::analysis::fit::MODELS {
        s += &format!("  {name:<22} {summary}\n");
    }
    s
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
    let table = gputraffic::input::table::Table::load(&a.input)?.filtered(&a.where_)?;
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
struct ValidateArgs {
    /// Measured counters: a wide CSV (kernel,nx,ny,nz,bx,by,bz[,cz], then one column per
    /// metric) or the export of `ncu --csv --print-units base` (then --manifest).
    #[arg(long)]
    measured: std::path::PathBuf,
    /// TOML file naming the trace, domain and parameters of each launch of an ncu export
    /// (validation/measure.sh writes one).
    #[arg(long)]
    manifest: Option<std::path::PathBuf>,
    /// GPU: a shipped configuration name (e.g. h200) or a path to one.
    #[arg(long)]
    hw: String,
    /// Output format.
    #[arg(long, value_parser = choice::<gputraffic::analysis::validate::ValidateFormat>(), default_value = "table")]
    format: gputraffic::analysis::validate::ValidateFormat,
    /// Write the report to this file instead of stdout (only when every launch simulated).
    #[arg(long)]
    out: Option<std::path::PathBuf>,
    /// Sample the interior waves of long launches instead of simulating every one: counts
    /// become estimates (see simulate --sample).
    #[arg(long)]
    sample: bool,
    /// Worker threads (default: all cores). Results do not depend on it.
    #[arg(long)]
    threads: Option<usize>,
}

fn validate(a: &ValidateArgs) -> Result<String> {
    let (launches, notes) =
        gputraffic::analysis::measured::load(&a.measured, a.manifest.as_deref())?;
    let bar = progress_bar("launches");
    let progress = follow(&bar);
    let measured = a.measured.display().to_string();
    let validation = on_threads(a.threads, || {
        gputraffic::analysis::validate::validate(
            launches,
            &a.hw,
            &measured,
            a.sample.then(SampleOptions::default),
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
        Command::List => Ok(list()),
        Command::Completions { shell } => Ok(completions(*shell)),
        Command::Man => man(),
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
