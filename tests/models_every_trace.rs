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
