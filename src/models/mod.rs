//! Closed-form models from the literature, to put next to the simulator.
//!
//! Each paper is one module exposing a [`ModelInfo`]: its name on the command line, the
//! parameters it takes with `--set NAME=VALUE` (model constants such as Su et al.'s δ), and a
//! `predict` function from a bound [`Launch`] to a [`Prediction`]. A prediction carries the
//! paper's own quantities under the paper's names (`fields`) and, where the paper predicts them,
//! the volumes that the simulator also measures ([`PredictedVolumes`]), so `simulate --compare`
//! can line the two up.

pub mod ernst2023;
pub mod gompertz;
pub mod krotkiewski2013;
pub mod layer_condition;
pub mod placement2p5d;
pub mod su2015;
pub mod tabik2015;

use crate::error::{Error, Result};
use crate::input::hw::HwConfig;
use crate::input::trace::Kernel;
use crate::launch::Launch;
pub use crate::metrics::Quantity;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// A model constant settable with `--set NAME=VALUE`.
#[derive(Debug, Clone, Copy)]
pub struct ParamSpec {
    /// Name on the command line.
    pub name: &'static str,
    /// Value when not set; `None` means the model derives it (from the trace or the hardware)
    /// unless the user sets it.
    pub default: Option<f64>,
    /// One line: what it is and where it comes from.
    pub doc: &'static str,
    /// The values it may take; `--set` outside is refused ([`split_sets`]).
    pub domain: Domain,
}

pub use crate::metrics::Domain;

/// What the sweep (or `simulate --format csv`) column `column` is: [`crate::metrics::describe`],
/// and a model's prediction `MODEL_VOLUME` (`MODEL` with `_` for `-`); `None` for a name no
/// table knows.
pub fn describe_column(column: &str) -> Option<Quantity> {
    crate::metrics::describe(column).or_else(|| {
        MODELS.iter().find_map(|m| {
            let rest = column
                .strip_prefix(&m.name.replace('-', "_"))?
                .strip_prefix('_')?;
            let v = crate::metrics::PREDICTED_QUANTITIES
                .iter()
                .find(|q| q.name == rest)?;
            Some(Quantity {
                name: std::borrow::Cow::Owned(column.to_string()),
                label: std::borrow::Cow::Owned(format!("{} {}", m.name, v.label)),
                unit: v.unit,
                meaning: std::borrow::Cow::Owned(format!("{}'s prediction: {}", m.name, v.meaning)),
                range: v.range,
            })
        })
    })
}

/// Everything a model may look at.
#[derive(Debug, Clone, Copy)]
pub struct ModelInput<'a> {
    /// The kernel trace as written.
    pub kernel: &'a Kernel,
    /// The GPU.
    pub hw: &'a HwConfig,
    /// The kernel bound to the GPU, block shape and parameter values.
    pub launch: &'a Launch,
    /// Model parameters the user set (already checked against the model's [`ParamSpec`]s).
    pub params: &'a BTreeMap<String, f64>,
}

impl ModelInput<'_> {
    /// The value the user set for `name`, if any.
    pub fn user_param(&self, name: &str) -> Option<f64> {
        self.params.get(name).copied()
    }

    /// The value of `name`: the user's, else the spec's default, else `derived`.
    pub fn param_or(&self, spec: &[ParamSpec], name: &str, derived: f64) -> f64 {
        self.user_param(name)
            .or_else(|| spec.iter().find(|p| p.name == name).and_then(|p| p.default))
            .unwrap_or(derived)
    }
}

/// Volumes (bytes) a model predicts for the quantities the simulator counts; `None` where the
/// model says nothing. Names follow the simulator's levels:
/// - `l1_load_bytes`: load sectors requested from L1 (× 32 B), `l1tex__t_sectors_..._op_ld`;
/// - `l2_load_bytes`: load traffic from L2 to the SMs, `lts__t_sectors_srcunit_tex_op_read`;
/// - `l2_store_bytes`: store traffic from the SMs into L2, `lts__t_sectors_srcunit_tex_op_write`;
/// - `dram_load_bytes` / `dram_store_bytes`: `dram__sectors_read` / `dram__sectors_write`.
///
/// Serialised as an object of the volumes the model gives, under these names, in this order
/// (`predict`'s `"volumes"`).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct PredictedVolumes {
    /// Register ← L1 load bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l1_load_bytes: Option<f64>,
    /// L1 ← L2 load bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l2_load_bytes: Option<f64>,
    /// L1 → L2 store bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l2_store_bytes: Option<f64>,
    /// L2 ← DRAM load bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dram_load_bytes: Option<f64>,
    /// L2 → DRAM store bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dram_store_bytes: Option<f64>,
    /// L1 data-stage wavefronts (cycles of one SM's L1), summed over SMs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l1_wavefronts: Option<f64>,
}

impl PredictedVolumes {
    /// The volumes as time-model inputs (a level is known when any of its parts is).
    pub fn time_inputs(&self) -> crate::timing::TimeInputs {
        let sum = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        };
        crate::timing::TimeInputs {
            dram_bytes: sum(self.dram_load_bytes, self.dram_store_bytes),
            // the reads apart where both directions are predicted
            dram_read_bytes: self
                .dram_load_bytes
                .filter(|_| self.dram_store_bytes.is_some()),
            l2_bytes: sum(self.l2_load_bytes, self.l2_store_bytes),
            // Stores pass through L1 with the same bytes they bring to L2.
            l1_bytes: self
                .l1_load_bytes
                .map(|l| l + self.l2_store_bytes.unwrap_or(0.0)),
            l1_wavefronts: self.l1_wavefronts,
            flops: None,
            warp_instructions: None,
            active_warps: None,
            rounds_per_warp: 1.0,
            // the time model counts the program's loads as one round
            loads_per_round: None,
            l2_partial_write_sectors: None,
            l2_partial_write_requests: None,
            sectors_left_partial: None,
            partial_sectors_across_sms: None,
            atomic_busiest_slice: None,
            atomic_requests: None,
        }
    }

    /// `(quantity, simulator metric, predicted bytes)` for every volume the model predicts.
    pub fn named(&self) -> Vec<(&'static str, &'static str, f64)> {
        use crate::metrics;
        [
            ("l1_load_bytes", metrics::L1_LD_SECTORS, self.l1_load_bytes),
            ("l2_load_bytes", metrics::L2_READ, self.l2_load_bytes),
            ("l2_store_bytes", metrics::L2_WRITE, self.l2_store_bytes),
            ("dram_load_bytes", metrics::DRAM_READ, self.dram_load_bytes),
            (
                "dram_store_bytes",
                metrics::DRAM_WRITE,
                self.dram_store_bytes,
            ),
        ]
        .into_iter()
        .filter_map(|(q, m, v)| v.map(|v| (q, m, v)))
        .collect()
    }
}

/// What a model says about one launch.
#[derive(Debug, Clone, PartialEq)]
pub struct Prediction {
    /// The model's name.
    pub model: &'static str,
    /// Where the kernel is outside what the paper's model was written for but the number may
    /// still be wanted ([`Scope`]): printed on stderr as warnings.
    pub warnings: Vec<String>,
    /// The paper's quantities under the names the issue and `docs/models.md` give, in a
    /// meaningful order.
    pub fields: Map<String, Value>,
    /// The volumes comparable with simulation.
    pub volumes: PredictedVolumes,
}

impl Prediction {
    /// An empty prediction of `model`.
    pub fn new(model: &'static str) -> Prediction {
        Prediction {
            model,
            warnings: Vec::new(),
            fields: Map::new(),
            volumes: PredictedVolumes::default(),
        }
    }

    /// Adds one field (chainable helper for model code).
    pub fn field(&mut self, name: &str, value: impl Into<Value>) -> &mut Self {
        self.fields.insert(name.to_string(), value.into());
        self
    }

    /// The entry of field `name` in the model's [`ModelInfo::quantities`], if it has one.
    pub fn quantity(&self, name: &str) -> Option<&'static Quantity> {
        let model = MODELS.iter().find(|m| m.name == self.model)?;
        model.quantities.iter().find(|q| q.name == name)
    }

    /// The numeric fields whose value lies outside their quantity's physical range, with the
    /// value and the range, in field order (what `predict` flags).
    pub fn out_of_range(&self) -> Vec<(&str, f64, Domain)> {
        self.fields
            .iter()
            .filter_map(|(name, value)| {
                let v = value.as_f64()?;
                let range = self.quantity(name)?.range?;
                (!range.contains(v)).then_some((name.as_str(), v, range))
            })
            .collect()
    }
}

/// The kernels a paper's model is written for. `predict` and `--compare` refuse a kernel of
/// another dimensionality or with atomics (the numbers would be meaningless), and warn when the
/// kernel's control flow goes beyond what the model reads (the number may still be wanted).
#[derive(Debug, Clone, Copy)]
pub struct Scope {
    /// One line: the kernels the model applies to (`gputraffic list` shows it).
    pub applies_to: &'static str,
    /// How many of `nx`, `ny`, `nz` the kernel has (its dimensionality) for the model to apply.
    pub dims: &'static [usize],
    /// Whether it reads programs beyond one flat loop (nested loops, `if`s).
    pub any_control_flow: bool,
    /// Whether it models atomics.
    pub atomics: bool,
}

/// Whether `model` applies to the bound `launch` of `kernel`: an error saying why not, or the
/// warnings to print with its numbers.
pub fn check_scope(model: &ModelInfo, kernel: &Kernel, launch: &Launch) -> Result<Vec<String>> {
    let scope = &model.scope;
    let refuse = |why: String| {
        Error::new(
            &kernel.source_name,
            format!(
                "model {} applies to {}; {why}",
                model.name, scope.applies_to
            ),
        )
    };
    let dims = crate::launch::dimensionality(kernel);
    if !scope.dims.contains(&dims) {
        return Err(refuse(match dims {
            0 => format!(
                "kernel '{}' has none of the domain parameters nx, ny, nz",
                kernel.name
            ),
            d => format!(
                "kernel '{}' is {d}-dimensional (it has {})",
                kernel.name,
                ["nx", "ny", "nz"][..d].join(", ")
            ),
        }));
    }
    let atomics = launch
        .program
        .accesses
        .iter()
        .any(|a| a.kind == crate::input::trace::AccessKind::Atomic);
    if atomics && !scope.atomics {
        return Err(refuse(format!(
            "kernel '{}' performs atomics, which it does not model",
            kernel.name
        )));
    }
    let mut warnings = Vec::new();
    if !launch.program.simple && !scope.any_control_flow {
        warnings.push(format!(
            "model {} was written for kernels with one loop at most and no if; kernel '{}' has \
             nested loops or ifs, which it reads as one representative thread runs them: check \
             its numbers against simulate",
            model.name, kernel.name
        ));
    }
    Ok(warnings)
}

/// One model as the command line knows it.
#[derive(Debug, Clone, Copy)]
pub struct ModelInfo {
    /// Name for `--model` / `--compare`.
    pub name: &'static str,
    /// One line for `gputraffic list`.
    pub summary: &'static str,
    /// The kernels it applies to.
    pub scope: Scope,
    /// Constants it takes with `--set`.
    pub params: &'static [ParamSpec],
    /// Every field its prediction may carry, explained: label, unit, meaning and physical
    /// range (`predict` prints them beside the values, `docs/models.md` lists them).
    pub quantities: &'static [Quantity],
    /// The model itself.
    pub predict: fn(&ModelInput) -> Result<Prediction>,
}

/// Every model, by name.
pub const MODELS: &[ModelInfo] = &[
    su2015::MODEL,
    tabik2015::MODEL,
    krotkiewski2013::MODEL,
    placement2p5d::MODEL,
    ernst2023::MODEL,
    layer_condition::MODEL,
];

/// The quantity section of `docs/models.md`, generated from the tables (a test keeps the doc
/// equal to it): each model's fields, then the sweep's columns, each with its unit, physical
/// range and meaning.
pub fn quantities_markdown() -> String {
    let row = |q: &Quantity| {
        let unit = match q.unit {
            "" => "–",
            "1" => "1",
            u => u,
        };
        let range = q.range.map_or("–".to_string(), |r| r.to_string());
        format!("| `{}` | {unit} | {range} | {} |\n", q.name, q.meaning)
    };
    let head = "| quantity | unit | physical range | meaning |\n|---|---|---|---|\n";
    let mut s = String::new();
    for m in MODELS {
        s += &format!("\n### {}\n\n{head}", m.name);
        for q in m.quantities {
            s += &row(q);
        }
    }
    s += &format!(
        "\n### Sweep and `simulate --format csv` columns\n\n\
         Besides these: `param_NAME` and `set_NAME` (kernel parameters), every Nsight Compute \
         metric below and its `METRIC_bytes_per_lup` (× 32 B per lattice update, B/LUP) and, \
         sampled, `METRIC_ci95_lo`/`_hi`; per model `MODEL_VOLUME` (the volumes at the end), \
         and with `simulate --compare` `predicted_VOLUME` and `rel_diff_VOLUME`.\n\n{head}"
    );
    for q in crate::metrics::COLUMN_QUANTITIES
        .iter()
        .chain(crate::metrics::METRIC_QUANTITIES)
        .chain(crate::metrics::PREDICTED_QUANTITIES)
    {
        s += &row(q);
    }
    s
}

/// Splits `--set NAME=VALUE` pairs into kernel parameters (integers, for the launch) and
/// constants of `models` (reals). A name that is neither is an error naming both lists.
pub fn split_sets(kernel: &Kernel, models: &[&ModelInfo], sets: &[String]) -> Result<SplitSets> {
    let mut split = SplitSets::default();
    for s in sets {
        let Some((name, value)) = s.split_once('=') else {
            return Err(Error::new("--set", format!("'{s}' is not NAME=VALUE")));
        };
        let (name, value) = (name.trim(), value.trim());
        if models.is_empty() || kernel.params.contains_key(name) {
            // Kernel parameters (and, with no model, any name: the launch reports unknown ones).
            let v: i64 = value.parse().map_err(|_| {
                Error::new(
                    "--set",
                    format!("'{s}': kernel parameter values are integers, '{value}' is not"),
                )
            })?;
            split.kernel.push((name.to_string(), v));
            continue;
        }
        if !models
            .iter()
            .any(|m| m.params.iter().any(|p| p.name == name))
        {
            let kernel_names: Vec<&str> = kernel.params.keys().map(|k| k.as_str()).collect();
            let model_names: Vec<String> = models
                .iter()
                .map(|m| {
                    let names: Vec<&str> = m.params.iter().map(|p| p.name).collect();
                    format!("model '{}' ({})", m.name, names.join(", "))
                })
                .collect();
            return Err(Error::new(
                "--set",
                format!(
                    "'{name}' is neither a parameter of kernel '{}' ({}) nor of {}",
                    kernel.name,
                    kernel_names.join(", "),
                    model_names.join(" or ")
                ),
            ));
        }
        let v: f64 = value
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .ok_or_else(|| Error::new("--set", format!("'{s}': '{value}' is not a number")))?;
        // Every model that takes the constant must accept the value.
        for m in models {
            if let Some(p) = m.params.iter().find(|p| p.name == name)
                && !p.domain.contains(v)
            {
                return Err(Error::new(
                    "--set",
                    format!(
                        "'{s}': {name} of model '{}' must be {} ({})",
                        m.name, p.domain, p.doc
                    ),
                ));
            }
        }
        split.model.insert(name.to_string(), v);
    }
    Ok(split)
}

/// `--set` pairs split by [`split_sets`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SplitSets {
    /// Kernel parameters, for the launch.
    pub kernel: Vec<(String, i64)>,
    /// Model constants.
    pub model: BTreeMap<String, f64>,
}

/// The models a command line names: `all`, `none`, or a list of names.
pub fn select(names: &[String]) -> Result<Vec<&'static ModelInfo>> {
    match names {
        [m] if m == "all" => Ok(MODELS.iter().collect()),
        [m] if m == "none" => Ok(Vec::new()),
        names => names.iter().map(|n| find(n)).collect(),
    }
}

/// The model called `name`.
pub fn find(name: &str) -> Result<&'static ModelInfo> {
    MODELS.iter().find(|m| m.name == name).ok_or_else(|| {
        let names: Vec<&str> = MODELS.iter().map(|m| m.name).collect();
        Error::new(
            "--model",
            format!(
                "unknown model '{name}'{} (known: {})",
                crate::input::did_you_mean(name, names.iter().copied()),
                names.join(", ")
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domains_by_hand() {
        assert!(Domain::UNIT.contains(0.0) && Domain::UNIT.contains(1.0));
        assert!(!Domain::UNIT.contains(-0.01) && !Domain::UNIT.contains(1.5));
        assert!(!Domain::RATE_CEILING.contains(0.0) && Domain::RATE_CEILING.contains(1.0));
        assert!(!Domain::RATE_CEILING.contains(1.56));
        assert!(Domain::COUNT.contains(4.0) && !Domain::COUNT.contains(0.0));
        assert!(!Domain::COUNT.contains(2.5) && Domain::COUNT_OR_ZERO.contains(0.0));
        assert!(!Domain::POSITIVE.contains(0.0) && Domain::NON_NEGATIVE.contains(0.0));
        for d in [Domain::ANY, Domain::POSITIVE, Domain::UNIT] {
            assert!(!d.contains(f64::NAN) && !d.contains(f64::INFINITY));
        }
        assert_eq!(Domain::UNIT.to_string(), "in [0, 1]");
        assert_eq!(Domain::RATE_CEILING.to_string(), "in (0, 1]");
        assert_eq!(Domain::POSITIVE.to_string(), "> 0");
        assert_eq!(Domain::COUNT.to_string(), "a whole number >= 1");
        assert_eq!(Domain::ANY.to_string(), "any finite number");
        assert_eq!(Domain::UNIT.as_bound(), "0..1");
        assert_eq!(Domain::POSITIVE.as_bound(), "0..");
    }

    #[test]
    fn values_outside_their_physical_range_are_flagged() {
        let mut p = Prediction::new("su2015");
        p.field("occupancy", 1.5)
            .field("smx_miss_ratio", -0.3)
            .field("threads", 64)
            .field("limiter", "gm")
            .field("not_in_the_table", -1.0);
        let flagged: Vec<(&str, f64, Domain)> = p.out_of_range();
        assert_eq!(
            flagged,
            [
                ("occupancy", 1.5, Domain::RATE_CEILING),
                ("smx_miss_ratio", -0.3, Domain::NON_NEGATIVE)
            ]
        );
        assert_eq!(p.quantity("threads").unwrap().unit, "threads");
        assert!(p.quantity("not_in_the_table").is_none());
    }

    #[test]
    fn every_default_lies_in_its_domain() {
        for m in MODELS {
            for p in m.params {
                if let Some(v) = p.default {
                    assert!(p.domain.contains(v), "{}: {} = {v}", m.name, p.name);
                }
            }
        }
    }

    #[test]
    fn set_values_outside_a_domain_are_refused_naming_the_model() {
        let kernel = crate::input::trace::load("star1").unwrap();
        let su = find("su2015").unwrap();
        let set = |s: &[&str], models: &[&ModelInfo]| {
            let sets: Vec<String> = s.iter().map(|s| s.to_string()).collect();
            split_sets(&kernel, models, &sets)
        };
        let e = set(&["delta=-5"], &[su]).unwrap_err();
        assert_eq!(e.source_name, "--set");
        assert!(
            e.message
                .starts_with("'delta=-5': delta of model 'su2015' must be in [0, 1] ("),
            "{e}"
        );
        // The ends of the domain are in it.
        let ok = set(&["delta=0", "epsilon=1", "stores=2"], &[su]).unwrap();
        assert_eq!(ok.model["delta"], 0.0);
        assert!(set(&["stores=2.5"], &[su]).is_err());
        // A constant two models take must suit both: krotkiewski2013 counts whole halo values.
        let (k, p) = (
            find("krotkiewski2013").unwrap(),
            find("placement2p5d").unwrap(),
        );
        assert!(set(&["halo=1"], &[k, p]).is_ok());
        let e = set(&["halo=-1"], &[p, k]).unwrap_err().to_string();
        assert!(e.contains("model 'placement2p5d'"), "{e}");
        let e = set(&["element_bytes=2.5"], &[p, k])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("model 'krotkiewski2013' must be a whole number >= 1"),
            "{e}"
        );
    }
}
