//! Every model on every shipped trace: a prediction, or one clear line and exit code 2 when the
//! model does not apply (wrong block dimensionality, missing parameters) — never a panic.

use std::process::Command;

#[test]
fn every_model_on_every_trace_predicts_or_says_why_not() {
    let mut predicted = 0;
    for m in gputraffic::models::MODELS {
        for (kernel, _) in gputraffic::input::trace::SHIPPED {
            let k = gputraffic::input::trace::load(kernel).unwrap();
            let mut args = vec![
                "predict", "--model", m.name, "--kernel", kernel, "--hw", "h200", "--format",
                "json",
            ];
            if ["nx", "ny", "nz"].iter().all(|p| k.params.contains_key(*p)) {
                args.extend(["--domain", "64x64x64"]);
            }
            let out = Command::new(env!("CARGO_BIN_EXE_gputraffic"))
                .args(&args)
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            match out.status.code() {
                Some(0) => {
                    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
                        .unwrap_or_else(|e| panic!("{} on {kernel}: {e}", m.name));
                    assert_eq!(v["model"], m.name);
                    predicted += 1;
                }
                Some(2) => {
                    assert!(out.stdout.is_empty(), "{} on {kernel}", m.name);
                    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
                }
                other => panic!("{} on {kernel}: exit {other:?}: {stderr}", m.name),
            }
        }
    }
    // Each paper's own kernels at least: not everything may be refused.
    assert!(predicted >= 40, "only {predicted} predictions");
}

/// Every field any model outputs on any shipped trace (on two GPUs, with and without a domain)
/// has an entry in its model's quantity table, with a label, a unit or none, and a meaning;
/// and every entry of a table is output somewhere (no entry outlives its field).
#[test]
fn every_field_of_every_model_is_explained_and_every_entry_is_used() {
    use gputraffic::request::{KernelSource, LaunchSpec};
    use std::collections::BTreeSet;
    let mut seen: BTreeSet<(&str, String)> = BTreeSet::new();
    for m in gputraffic::models::MODELS {
        let mut names = BTreeSet::new();
        for q in m.quantities {
            assert!(names.insert(&q.name), "{}: {} listed twice", m.name, q.name);
            assert!(
                !q.label.is_empty() && !q.meaning.is_empty(),
                "{}: {} needs a label and a meaning",
                m.name,
                q.name
            );
        }
        for (kernel, _) in gputraffic::input::trace::SHIPPED {
            for (hw, domain) in [("h200", Some("64x64x64")), ("k20", None)] {
                let spec = LaunchSpec {
                    kernel: KernelSource::Load(kernel.to_string()),
                    hw: hw.into(),
                    block: None,
                    domain: domain.map(str::to_string),
                    set: Vec::new(),
                    clock: "base".into(),
                };
                let Ok(p) = spec.prediction(m.name) else {
                    continue;
                };
                for name in p.prediction.fields.keys() {
                    assert!(
                        p.prediction.quantity(name).is_some(),
                        "model {} outputs '{name}' (on {kernel}) without an entry in its \
                         QUANTITIES table",
                        m.name
                    );
                    seen.insert((m.name, name.clone()));
                }
            }
        }
        for q in m.quantities {
            assert!(
                seen.contains(&(m.name, q.name.to_string())),
                "model {}: the table lists '{}', which no shipped trace makes it output",
                m.name,
                q.name
            );
        }
    }
}
