//! The `gputraffic` command line: a thin layer over the library.

use clap::{Parser, Subcommand};
use gputraffic::Bound;
use gputraffic::launch::LaunchRequest;
use gputraffic::models::{self, ModelInfo};
use gputraffic::report::Format;
use gputraffic::sim::SimOptions;
use gputraffic::{Error, Result};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "gputraffic",
    version,
    about = "Trace-driven simulator of GPU memory traffic"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate one kernel launch and report the traffic at every level.
    Simulate(SimulateArgs),
    /// Evaluate a closed-form model from the literature on one kernel launch.
    Predict(PredictArgs),
    /// List the shipped kernels, hardware configurations and models.
    List,
    /// Draw a sweep's results as a PNG or SVG picture.
    Plot(PlotArgs),
}

/// What `simulate` and `predict` share: the kernel, the GPU, the launch and the output.
#[derive(clap::Args)]
struct LaunchArgs {
    /// Kernel trace: a path, or the name of a shipped trace (e.g. star1).
    #[arg(long)]
    kernel: String,
    /// GPU: a shipped configuration name (e.g. h200) or a path to one.
    #[arg(long, default_value = "h200")]
    hw: String,
    /// Block shape XxYxZ (default: the trace's).
    #[arg(long)]
    block: Option<String>,
    /// Domain XxYxZ: sets the parameters nx, ny, nz.
    #[arg(long)]
    domain: Option<String>,
    /// Set a kernel parameter or a constant of the model (--model / --compare), NAME=VALUE
    /// (repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
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
}

#[derive(clap::Args)]
struct PredictArgs {
    /// Model name (see `gputraffic list`).
    #[arg(long)]
    model: String,
    #[command(flatten)]
    launch: LaunchArgs,
}

fn parse_dims(option: &str, s: &str) -> Result<[i64; 3]> {
    let parts: Vec<&str> = s.split('x').collect();
    let bad = || {
        Error::new(
            option,
            format!("'{s}' is not of the form AxBxC with positive integers"),
        )
    };
    if parts.len() != 3 {
        return Err(bad());
    }
    let mut out = [0i64; 3];
    for (o, p) in out.iter_mut().zip(parts) {
        *o = p.trim().parse().map_err(|_| bad())?;
        if *o <= 0 {
            return Err(bad());
        }
    }
    Ok(out)
}

fn parse_block(block: &Option<String>) -> Result<Option<[u32; 3]>> {
    match block {
        Some(b) => {
            let d = parse_dims("--block", b)?;
            if d.iter().any(|&v| v > 1024) {
                return Err(Error::new(
                    "--block",
                    format!("'{b}': a block dimension above 1024"),
                ));
            }
            Ok(Some(d.map(|v| v as u32)))
        }
        None => Ok(None),
    }
}

/// The clock in GHz for `--clock`, or `None` for the config's boost clock.
fn parse_clock(clock: &str, hw: &gputraffic::hw::HwConfig) -> Result<Option<f64>> {
    match clock {
        "boost" => Ok(None),
        "base" => hw.sm.base_clock_ghz.map(Some).ok_or_else(|| {
            Error::new(
                "--clock",
                format!("hw config '{}' has no sm.base_clock_ghz", hw.name),
            )
        }),
        ghz => match ghz.parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 => Ok(Some(v)),
            _ => Err(Error::new(
                "--clock",
                format!("'{ghz}' is neither boost, base nor a positive number of GHz"),
            )),
        },
    }
}

/// A launch ready for `simulate` and `predict`: the bound kernel, the model constants from
/// `--set`, and the clock for the time model.
struct Prepared {
    bound: Bound,
    model_params: std::collections::BTreeMap<String, f64>,
    clock: Option<f64>,
}

/// Loads the kernel and binds it, splitting `--set` between the kernel and `model`.
fn prepare(a: &LaunchArgs, model: Option<&ModelInfo>) -> Result<Prepared> {
    let block = parse_block(&a.block)?;
    let domain = a
        .domain
        .as_deref()
        .map(|d| parse_dims("--domain", d))
        .transpose()?;
    let kernel = gputraffic::load_kernel(&a.kernel)?;
    let sets = models::split_sets(&kernel, model, &a.set)?;
    let req = LaunchRequest {
        block,
        domain,
        set: sets.kernel,
    };
    let bound = Bound::new(kernel, &a.hw, &req)?;
    let clock = parse_clock(&a.clock, &bound.hw)?;
    Ok(Prepared {
        bound,
        model_params: sets.model,
        clock,
    })
}

fn simulate(a: &SimulateArgs) -> Result<String> {
    let model = a.compare.as_deref().map(models::find).transpose()?;
    let Prepared {
        bound,
        model_params,
        clock,
    } = prepare(&a.launch, model)?;
    // The model runs first: a model error should not cost a simulation.
    let predicted = model
        .map(|m| bound.predict(m, &model_params, clock))
        .transpose()?;
    let opts = SimOptions {
        infinite_l1: a.infinite_l1,
        infinite_l2: a.infinite_l2,
        compulsory: !a.no_compulsory,
        ..SimOptions::default()
    };
    let run = || bound.simulate(&opts, clock);
    let mut report = match a.threads {
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build()
            .map_err(|e| Error::new("--threads", e.to_string()))?
            .install(run)?,
        None => run()?,
    };
    if let Some((p, t)) = predicted {
        report.compare(p, t);
    }
    Ok(report.render(a.launch.format))
}

fn predict(a: &PredictArgs) -> Result<String> {
    let model = models::find(&a.model)?;
    let Prepared {
        bound,
        model_params,
        clock,
    } = prepare(&a.launch, Some(model))?;
    let (p, t) = bound.predict(model, &model_params, clock)?;
    Ok(gputraffic::report::render_prediction(
        &bound.launch,
        &bound.hw,
        &p,
        &t,
        a.launch.format,
    ))
}

fn list() -> String {
    let mut s = String::from("kernels (traces/):\n");
    for (name, text) in gputraffic::trace::SHIPPED {
        let desc = gputraffic::trace::Kernel::parse(text, name)
            .map(|k| k.description)
            .unwrap_or_default();
        s += &format!("  {name:<22} {desc}\n");
    }
    s += "hardware (hw-configs/):\n";
    for (name, text) in gputraffic::hw::SHIPPED {
        let desc = gputraffic::hw::HwConfig::parse(text, name)
            .map(|h| h.description)
            .unwrap_or_default();
        s += &format!("  {name:<22} {desc}\n");
    }
    s += "models (--model, --compare):\n";
    for m in models::MODELS {
        s += &format!("  {:<22} {}\n", m.name, m.summary);
        for p in m.params {
            s += &format!("      --set {:<18} {}\n", format!("{}=", p.name), p.doc);
        }
    }
    s
}

// ---- plot ----------------------------------------------------------------------------------

#[derive(clap::Args)]
struct PlotArgs {
    /// What to draw.
    #[arg(value_enum)]
    kind: gputraffic::plot::KindName,
    /// The sweep's output (CSV with a header, or .jsonl).
    #[arg(long)]
    input: std::path::PathBuf,
    /// The picture to write: a .png or .svg name.
    #[arg(long)]
    out: std::path::PathBuf,
    /// Caption (default: made from the columns).
    #[arg(long)]
    title: Option<String>,
    /// Picture size WIDTHxHEIGHT in pixels.
    #[arg(long, default_value = "1024x768")]
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
    /// block-table: the column shown in the cells.
    #[arg(long, value_name = "COL")]
    metric: Option<String>,
    /// composition: the cache level (default l2).
    #[arg(long, value_enum)]
    level: Option<gputraffic::plot::Level>,
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
    };
    let spec = plot::PlotSpec {
        kind: plot::PlotKind::from_options(a.kind, &options)?,
        title: a.title.clone(),
        size: plot::parse_size(&a.size)?,
        filters: a
            .filters
            .iter()
            .map(|f| plot::Filter::parse(f))
            .collect::<Result<_>>()?,
    };
    let table = gputraffic::table::Table::load(&a.input)?;
    for note in plot::render(&spec, &table, &a.out)? {
        eprintln!("note: {note}");
    }
    Ok(String::new())
}

// ---- end plot ------------------------------------------------------------------------------

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Simulate(a) => simulate(a),
        Command::Predict(a) => predict(a),
        Command::List => Ok(list()),
        Command::Plot(a) => plot(a),
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
