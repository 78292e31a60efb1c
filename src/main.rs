//! The `gputraffic` command line: a thin layer over the library.

use clap::{Parser, Subcommand};
use gputraffic::launch::LaunchRequest;
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
    /// List the shipped kernels and hardware configurations.
    List,
}

#[derive(clap::Args)]
struct SimulateArgs {
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
    /// Set a kernel parameter, NAME=VALUE (repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
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

fn simulate(a: &SimulateArgs) -> Result<String> {
    let block = match &a.block {
        Some(b) => {
            let d = parse_dims("--block", b)?;
            if d.iter().any(|&v| v > 1024) {
                return Err(Error::new(
                    "--block",
                    format!("'{b}': a block dimension above 1024"),
                ));
            }
            Some(d.map(|v| v as u32))
        }
        None => None,
    };
    let domain = a
        .domain
        .as_deref()
        .map(|d| parse_dims("--domain", d))
        .transpose()?;
    let mut set = Vec::new();
    for s in &a.set {
        let Some((name, value)) = s.split_once('=') else {
            return Err(Error::new("--set", format!("'{s}' is not NAME=VALUE")));
        };
        let value: i64 = value
            .trim()
            .parse()
            .map_err(|_| Error::new("--set", format!("'{s}': '{value}' is not an integer")))?;
        set.push((name.trim().to_string(), value));
    }
    let req = LaunchRequest { block, domain, set };
    let opts = SimOptions {
        infinite_l1: a.infinite_l1,
        infinite_l2: a.infinite_l2,
        compulsory: !a.no_compulsory,
        ..SimOptions::default()
    };
    let run = || gputraffic::run(&a.kernel, &a.hw, &req, &opts);
    let report = match a.threads {
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build()
            .map_err(|e| Error::new("--threads", e.to_string()))?
            .install(run)?,
        None => run()?,
    };
    Ok(report.render(a.format))
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
    s
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Simulate(a) => simulate(a),
        Command::List => Ok(list()),
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
