//! The command line as a user meets it: output formats, determinism across thread counts, and one
//! clear message with exit code 2 for every kind of bad input.

mod common;
use common::{gputraffic, gputraffic_with_env, rejects};

#[test]
fn bad_kernel_files_name_the_file_and_the_problem() {
    fn sim(f: &str) -> Vec<&str> {
        vec![
            "simulate", "--kernel", f, "--hw", "h200", "--domain", "64x64x64",
        ]
    }
    rejects(
        &sim("tests/bad/malformed.toml"),
        &["tests/bad/malformed.toml", "line 2", "expected `]`"],
    );
    rejects(
        &sim("tests/bad/parse-error.toml"),
        &["parse-error.toml", "line 44, column 33", "expected ')'"],
    );
    rejects(
        &sim("tests/bad/unknown-variable.toml"),
        &["unknown-variable.toml", "line 44", "unknown variable 'q'"],
    );
    rejects(
        &sim("tests/bad/division-by-zero.toml"),
        &[
            "division-by-zero.toml: line 40, column 19: thread.lattice_updates",
            "division or modulo by zero",
        ],
    );
    rejects(
        &sim("tests/bad/outside-array.toml"),
        &[
            "outside-array.toml: line 49, column 3:",
            "a load of array 'in' is outside it",
        ],
    );
    rejects(
        &["simulate", "--kernel", "tests/bad/zero-size.toml"],
        &["zero-size.toml: line 27, column 9: launch.grid x", "nx = 0"],
    );
    rejects(
        &sim("no/such/file.toml"),
        &["no/such/file.toml: no such file"],
    );
}

#[test]
fn a_value_that_looks_like_a_path_is_never_replaced_by_a_shipped_namesake() {
    // A missing file named like a shipped trace or GPU is an error, not the shipped one.
    rejects(
        &[
            "simulate",
            "--kernel",
            "mystuff/star4.toml",
            "--domain",
            "64x64x64",
        ],
        &["mystuff/star4.toml: no such file (the shipped trace of that name is --kernel star4)"],
    );
    rejects(
        &["simulate", "--kernel", "star4.toml", "--domain", "64x64x64"],
        &["star4.toml: no such file"],
    );
    rejects(
        &["simulate", "--kernel", "star1", "--hw", "configs/h200.toml"],
        &["configs/h200.toml: no such file (the shipped configuration of that name is --hw h200)"],
    );
    rejects(
        &[
            "predict",
            "--model",
            "su2015",
            "--kernel",
            "my/su-7pt-1",
            "--hw",
            "k20",
        ],
        &["my/su-7pt-1: no such file"],
    );
    // Names keep working as names.
    let (code, _, stderr) = gputraffic(&["simulate", "--kernel", "star4", "--domain", "64x64x64"]);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn suggestions_ignore_case() {
    rejects(
        &["simulate", "--kernel", "star1", "--hw", "H200"],
        &["--hw", "'H200'", "(did you mean h200?)"],
    );
    rejects(
        &["simulate", "--kernel", "STAR1"],
        &["--kernel", "'STAR1'", "(did you mean star1?)"],
    );
    rejects(
        &["simulate", "--kernel", "Box27"],
        &["(did you mean box27?)"],
    );
}

/// Bind-time errors are one exact line: the trace, the step's line and column, the array, and for
/// a per-dimension index the dimension, the coordinate as written, its value and range, and one
/// thread that produces it (the same one on any thread count).
#[test]
fn bind_time_errors_name_the_step_the_array_and_a_thread() {
    let cases = [
        (
            "tests/bad/outside-dimension.toml",
            "error: tests/bad/outside-dimension.toml: line 37, column 3: a load of array 'in' is outside its dimension 1 (x): \"x - 3\" = -1, not in 0..=67, for thread (0, 0, 0) of block (0, 6, 6)",
        ),
        (
            "tests/bad/index-division-by-zero.toml",
            "error: tests/bad/index-division-by-zero.toml: line 36, column 3: index \"y + (x - P) / (x - P) - 1\" of array 'in' for thread (0, 0, 0) of block (0, 6, 6): division or modulo by zero",
        ),
    ];
    for (file, line) in cases {
        for threads in ["1", "2"] {
            let args = [
                "simulate",
                "--kernel",
                file,
                "--hw",
                "h200",
                "--threads",
                threads,
            ];
            rejects(&args, &[line]);
            assert_eq!(gputraffic(&args).2.trim_end(), line);
        }
    }
}

#[test]
fn bad_hardware_and_options_are_rejected() {
    rejects(
        &[
            "simulate",
            "--kernel",
            "star1",
            "--hw",
            "tests/bad/bad-geometry.toml",
        ],
        &["bad-geometry.toml", "sets of 7 ways"],
    );
    rejects(
        &["simulate", "--kernel", "star1", "--hw", "gtx-9000"],
        &["--hw", "h200"],
    );
    rejects(
        &["simulate", "--kernel", "star1", "--block", "64x32x1"],
        &["--block", "2048 threads"],
    );
    rejects(
        &["simulate", "--kernel", "star1", "--block", "0x4x4"],
        &["--block", "positive"],
    );
    rejects(
        &["simulate", "--kernel", "star1", "--block", "8x2x128"],
        &["--block", "'8x2x128'", "block.z is above 64"],
    );
    rejects(
        &[
            "simulate",
            "--kernel",
            "star1",
            "--block",
            "99999999999x1x1",
        ],
        &["--block", "block.x is above 1024"],
    );
    rejects(
        &["simulate", "--kernel", "star1", "--domain", "64x-1x64"],
        &["--domain"],
    );
    rejects(
        &["simulate", "--kernel", "star1", "--set", "cz=4"],
        &["--set", "no parameter 'cz'"],
    );
    rejects(
        &["simulate", "--kernel", "star1", "--set", "nx"],
        &["--set", "NAME=VALUE"],
    );
    rejects(
        &["simulate", "--kernel", "star1", "--clock", "fast"],
        &["--clock", "'fast'"],
    );
    rejects(
        &["simulate", "--kernel", "star1", "--compare", "nobody2020"],
        &["--model", "unknown model 'nobody2020'"],
    );
    rejects(
        &[
            "simulate",
            "--kernel",
            "star1",
            "--compare",
            "su2015",
            "--set",
            "cz=4",
        ],
        &["--set", "'cz'", "star1", "su2015"],
    );
}

#[test]
fn the_time_model_follows_the_simulated_volumes() {
    // 64³ star1 on the H200 at the base clock: the DRAM time is its reads over the measured read
    // rate, its writes over the write rate and the lesser of the two over the turnaround rate
    // that brings a copy to its measured rate (hw-configs/h200.toml), the L1 time the
    // wavefronts over 132 SMs × 1.5 GHz and a fifth of the DRAM time (`l1_busy_per_dram_time`).
    let (code, out, err) = gputraffic(&[
        "simulate", "--kernel", "star1", "--hw", "h200", "--domain", "64x64x64", "--clock", "base",
        "--format", "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let m = |k: &str| v["metrics"][k].as_f64().unwrap();
    let t = &v["time"];
    let (r, w) = (
        m("dram__sectors_read.sum") * 32.0,
        m("dram__sectors_write.sum") * 32.0,
    );
    let turnaround = 1.0 / (2.0 / 3941.0 - 1.0 / 4518.0 - 1.0 / 4344.0);
    let dram = (r / 4518.0 + w / 4344.0 + r.min(w) / turnaround) / 1e9;
    assert!((t["dram_s"].as_f64().unwrap() - dram).abs() < 1e-15);
    let wavefronts = m(gputraffic::metrics::L1_WAVEFRONTS);
    let l1 = wavefronts / (132.0 * 1.5e9) + 0.2 * dram;
    assert!((t["l1_s"].as_f64().unwrap() - l1).abs() < 1e-15);
    // 64³ points × 8 flops / (33454 GFLOP/s × 1.5 / 1.98).
    let fp = 262144.0 * 8.0 / (33454e9 * 1.5 / 1.98);
    assert!((t["fp_s"].as_f64().unwrap() - fp).abs() < 1e-15);
    let largest = ["dram_s", "l2_s", "l1_s", "fp_s"]
        .iter()
        .map(|k| t[k].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert_eq!(t["bandwidth_bound_s"].as_f64().unwrap(), largest);
    // The queueing model never beats the bandwidth bound; the launch overhead comes on top.
    let predicted = t["predicted_s"].as_f64().unwrap();
    assert!(predicted >= largest + 1.84e-6, "{predicted} vs {largest}");
    assert_eq!(t["clock_ghz"], 1.5);
}

#[test]
fn json_has_the_documented_shape_and_csv_one_row() {
    let args = [
        "simulate", "--kernel", "star1", "--hw", "h200", "--block", "32x8x4", "--domain",
        "64x64x64",
    ];
    let (code, out, _) = gputraffic(&[&args[..], &["--format", "json"]].concat());
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["kernel"], "star1");
    assert_eq!(v["hw"], "h200");
    assert_eq!(v["block"], serde_json::json!([32, 8, 4]));
    assert_eq!(v["grid"], serde_json::json!([2, 8, 16]));
    assert_eq!(v["domain"], serde_json::json!([64, 64, 64]));
    assert_eq!(v["lattice_updates"], 262144);
    assert_eq!(v["launch"]["blocks_per_sm"], 2);
    // 64³ points × 7 loads / 32 lanes.
    assert_eq!(
        v["metrics"]["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"],
        57344
    );
    assert_eq!(
        v["bytes_per_lup"]["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"],
        8.0
    );
    // The ten sector and request counts, the store requests and the L1 wavefronts.
    assert_eq!(v["metrics"].as_object().unwrap().len(), 12);

    let (code, out, _) = gputraffic(&[&args[..], &["--format", "csv"]].concat());
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0].split(',').count(), lines[1].split(',').count());
    assert!(lines[0].contains("dram__sectors_read.sum"));
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    for (kernel, block) in [
        ("star1", "16x4x4"),
        ("star1-zloop", "32x4x1"),
        ("box27", "8x8x8"),
    ] {
        let run = |threads: &str| {
            let (code, out, err) = gputraffic(&[
                "simulate",
                "--kernel",
                kernel,
                "--hw",
                "h200",
                "--block",
                block,
                "--domain",
                "96x64x48",
                "--format",
                "json",
                "--threads",
                threads,
            ]);
            assert_eq!(code, 0, "{err}");
            out
        };
        assert_eq!(run("1"), run("2"), "{kernel}");
    }
}

#[test]
fn list_names_every_shipped_kernel_and_gpu() {
    let (code, out, _) = gputraffic(&["list"]);
    assert_eq!(code, 0);
    for name in [
        "star1",
        "star4",
        "box27",
        "star1-zloop",
        "copy",
        "su-7pt-1",
        "ernst-25pt-r4",
        "k20",
        "h200",
        "a100-40gb",
    ] {
        assert!(out.contains(name), "{name}");
    }
    // The fits follow the models, one line each.
    let fits = out
        .split("fits (gputraffic fit --model):\n")
        .nth(1)
        .unwrap();
    let names: Vec<&str> = fits
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(names, ["gompertz", "su2015"]);
}

#[test]
fn rank_lists_shapes_fastest_first_and_agrees_with_simulate() {
    let args = [
        "rank",
        "--kernel",
        "star1",
        "--hw",
        "h200",
        "--blocks",
        "32x4x2,256x1x1,8x8x4",
        "--domain",
        "64x64x32",
        "--format",
        "json",
        "--threads",
        "2",
    ];
    let (code, out, err) = gputraffic(&args);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    // The context: kernel, GPU, domain, the clock (the H200's base clock by default) and mode.
    assert_eq!(v["kernel"], "star1");
    assert_eq!(v["hw"], "h200");
    assert_eq!(v["domain"], serde_json::json!([64, 64, 32]));
    assert_eq!(
        (v["clock_ghz"].as_f64(), v["clock"].as_str()),
        (Some(1.5), Some("base"))
    );
    assert_eq!(v["mode"], "screen");
    let shapes = v["shapes"].as_array().unwrap();
    assert_eq!(shapes.len(), 3);
    let ranks: Vec<u64> = shapes.iter().map(|s| s["rank"].as_u64().unwrap()).collect();
    assert_eq!(ranks, [1, 2, 3]);
    let t: Vec<f64> = shapes
        .iter()
        .map(|s| s["predicted_s"].as_f64().unwrap())
        .collect();
    assert!(t.windows(2).all(|w| w[0] <= w[1]), "{t:?}");
    assert_eq!(shapes[0]["relative"].as_f64().unwrap(), 1.0);
    // Each entry is the predicted time `simulate` reports for that shape.
    for s in shapes {
        let b = s["block"].as_array().unwrap();
        let block = format!("{}x{}x{}", b[0], b[1], b[2]);
        let (code, out, err) = gputraffic(&[
            "simulate", "--kernel", "star1", "--hw", "h200", "--block", &block, "--domain",
            "64x64x32", "--format", "json",
        ]);
        assert_eq!(code, 0, "{err}");
        let sim: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(sim["time"]["predicted_s"], s["predicted_s"]);
        // Its terms are simulate's, and add up to the predicted time.
        let terms = [
            "bandwidth_bound_s",
            "latency_s",
            "block_turnover_s",
            "launch_overhead_s",
        ];
        let mut sum = 0.0;
        for term in terms {
            assert_eq!(sim["time"][term], s[term], "{term}");
            sum += s[term].as_f64().unwrap();
        }
        let predicted = s["predicted_s"].as_f64().unwrap();
        assert!(
            (sum - predicted).abs() <= 1e-12 * predicted,
            "{sum} {predicted}"
        );
        // The L1 column is the wavefronts the L1 limiter counts, per lattice update.
        let wavefronts = sim["metrics"][gputraffic::metrics::L1_WAVEFRONTS]
            .as_f64()
            .unwrap();
        let lups = sim["lattice_updates"].as_f64().unwrap();
        assert_eq!(
            s["l1_wavefronts_per_lup"].as_f64().unwrap(),
            wavefronts / lups
        );
    }
    // 256x1x1 on nx = 64 leaves three quarters of each block idle: the slowest here.
    assert_eq!(shapes[2]["block"], serde_json::json!([256, 1, 1]));
    crate::common::rejects(
        &["rank", "--kernel", "nosuch", "--blocks", "32x4x1"],
        &["--kernel", "nosuch"],
    );
    crate::common::rejects(
        &["rank", "--kernel", "star1", "--blocks", "64x32x1"],
        &["2048 threads"],
    );
}

#[test]
fn simulate_and_rank_write_to_out_and_print_nothing() {
    let dir = common::scratch("out-flag");
    let sim = [
        "simulate",
        "--kernel",
        "star1",
        "--domain",
        "32x32x16",
        "--threads",
        "2",
    ];
    let rank = [
        "rank",
        "--kernel",
        "star1",
        "--domain",
        "32x32x16",
        "--blocks",
        "32x4x2,64x2x1",
        "--threads",
        "2",
        "--format",
        "json",
    ];
    for (i, args) in [&sim[..], &rank[..]].into_iter().enumerate() {
        let (code, printed, err) = gputraffic(args);
        assert_eq!(code, 0, "{err}");
        let out = dir.join(format!("out{i}.txt"));
        let with_out = [args, &["--out", out.to_str().unwrap()]].concat();
        let (code, stdout, err) = gputraffic(&with_out);
        assert_eq!(code, 0, "{err}");
        assert_eq!(stdout, "", "{args:?}");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), printed, "{args:?}");
        // An --out that cannot be written (under a file) is refused before anything runs.
        std::fs::write(dir.join("file"), "").unwrap();
        let bad = dir.join("file/out.txt");
        let with_bad = [args, &["--out", bad.to_str().unwrap()]].concat();
        let (code, stdout, err) = gputraffic(&with_bad);
        assert_eq!((code, stdout.as_str()), (2, ""), "{err}");
        assert!(
            err.starts_with("error: ") && err.lines().count() == 1,
            "{err}"
        );
    }
}

#[test]
fn every_time_is_at_the_base_clock_by_default_and_says_so() {
    let sim = |extra: &[&str]| {
        let args = [
            &[
                "simulate", "--kernel", "star1", "--domain", "32x32x16", "--format", "json",
            ][..],
            extra,
        ]
        .concat();
        let (code, out, err) = gputraffic(&args);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        (
            v["time"]["clock_ghz"].as_f64().unwrap(),
            v["time"]["clock"].as_str().unwrap().to_string(),
        )
    };
    // The H200: base 1.50 GHz, boost 1.98; a config with one clock says so.
    assert_eq!(sim(&[]), (1.5, "base".to_string()));
    assert_eq!(sim(&["--clock", "base"]), (1.5, "base".to_string()));
    assert_eq!(sim(&["--clock", "boost"]), (1.98, "boost".to_string()));
    assert_eq!(sim(&["--clock", "1.2"]), (1.2, "given".to_string()));
    assert_eq!(sim(&["--hw", "v100"]), (1.38, "only".to_string()));
    // Every human output that shows a time names its clock.
    let base =
        "clock 1.50 GHz (base, the clock Nsight Compute locks; --clock boost for the boost clock)";
    for args in [
        &["simulate", "--kernel", "star1", "--domain", "32x32x16"][..],
        &[
            "simulate",
            "--kernel",
            "star1",
            "--domain",
            "32x32x16",
            "--compare",
            "ernst2023",
        ],
        &[
            "predict",
            "--kernel",
            "star1",
            "--domain",
            "32x32x16",
            "--model",
            "ernst2023",
        ],
        &[
            "rank", "--kernel", "star1", "--domain", "32x32x16", "--blocks", "32x4x2",
        ],
    ] {
        let (code, out, err) = gputraffic(args);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains(base), "{args:?}: {out}");
    }
    let (code, out, err) = gputraffic(&[
        "simulate", "--kernel", "star1", "--domain", "32x32x16", "--clock", "boost",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(
            "clock 1.98 GHz (boost; Nsight Compute measures at the base clock, --clock base)"
        ),
        "{out}"
    );
    // validate compares at the base clock and says so.
    let (code, out, err) = gputraffic(&[
        "validate",
        "--measured",
        "tests/data/h100/small_ncu.csv",
        "--manifest",
        "tests/data/h100/small_manifest.toml",
        "--hw",
        "h100-sxm",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("gpu__time_duration.sum predicted at 1.58 GHz (the base clock, which Nsight Compute locks)."),
        "{out}"
    );
    // predict's JSON carries it too.
    let (code, out, err) = gputraffic(&[
        "predict",
        "--kernel",
        "star1",
        "--domain",
        "32x32x16",
        "--model",
        "ernst2023",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["time"]["clock_ghz"].as_f64(), v["time"]["clock"].as_str()),
        (Some(1.5), Some("base"))
    );
}

#[test]
fn simulate_shows_the_terms_of_its_predicted_time() {
    let (code, out, err) = gputraffic(&[
        "simulate", "--kernel", "star1", "--domain", "64x64x32", "--format", "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let t = &serde_json::from_str::<serde_json::Value>(&out).unwrap()["time"];
    let num = |k: &str| t[k].as_f64().unwrap();
    let (bound, latency, turnover, overhead) = (
        num("bandwidth_bound_s"),
        num("latency_s"),
        num("block_turnover_s"),
        num("launch_overhead_s"),
    );
    // The H200's launch overhead, 1.84 us (hw-configs/h200.toml).
    assert_eq!(overhead, 1.84e-6);
    let sum = bound + latency + turnover + overhead;
    assert!((sum - num("predicted_s")).abs() <= 1e-12 * sum, "{t}");
    // The limiter whose time is the bound.
    let bound_by = gputraffic::timing::LIMITERS
        .into_iter()
        .find(|l| t[format!("{l}_s")].as_f64() == Some(bound))
        .unwrap();
    // The table says the same in microseconds, as a sum.
    let (code, table, err) = gputraffic(&["simulate", "--kernel", "star1", "--domain", "64x64x32"]);
    assert_eq!(code, 0, "{err}");
    let line = format!(
        "predicted {:.3} us = {:.3} bandwidth bound ({}) + {:.3} latency + {:.3} block turnover + {:.3} launch overhead",
        num("predicted_s") * 1e6,
        bound * 1e6,
        bound_by,
        latency * 1e6,
        turnover * 1e6,
        overhead * 1e6
    );
    assert!(table.contains(&line), "{line}\n{table}");
}

#[test]
fn rank_skips_shapes_of_a_named_set_that_cannot_launch() {
    // 128 registers per thread: a 1024-thread block needs 131072 registers, twice an SM's.
    let dir = common::scratch("rank-skip");
    let trace = dir.join("star1-128regs.toml");
    let text = std::fs::read_to_string("traces/star1.toml")
        .unwrap()
        .replace("registers_per_thread = 22", "registers_per_thread = 128");
    std::fs::write(&trace, text).unwrap();
    let t = trace.to_str().unwrap();
    let (code, out, err) = gputraffic(&[
        "rank",
        "--kernel",
        t,
        "--blocks",
        "32x4x1,all-1024",
        "--domain",
        "32x32x16",
        "--format",
        "csv",
    ]);
    assert_eq!(code, 0, "{err}");
    // The one explicit shape and the 1024-thread shapes that fit: none do, so one row.
    assert_eq!(out.lines().count(), 2, "{out}");
    assert!(
        out.lines().nth(1).unwrap().starts_with("1,32,4,1,"),
        "{out}"
    );
    assert!(err.contains("note: skipped 1024x1x1"), "{err}");
    // An explicit shape that cannot launch is an error, and nothing is simulated.
    common::rejects(
        &[
            "rank", "--kernel", t, "--blocks", "32x32x1", "--domain", "32x32x16",
        ],
        &["registers"],
    );
}

#[test]
fn show_prints_a_shipped_file_and_unknown_names_get_a_suggestion() {
    let (code, out, err) = gputraffic(&["show", "star1"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, std::fs::read_to_string("traces/star1.toml").unwrap());
    let (code, out, _) = gputraffic(&["show", "h100-sxm"]);
    assert_eq!(code, 0);
    assert_eq!(
        out,
        std::fs::read_to_string("hw-configs/h100-sxm.toml").unwrap()
    );
    rejects(&["show", "stra1"], &["'stra1'", "did you mean star1?"]);
    rejects(
        &["simulate", "--kernel", "box72", "--domain", "32x32x32"],
        &["--kernel", "did you mean box27?"],
    );
    rejects(
        &["simulate", "--kernel", "star1", "--hw", "h100"],
        &["--hw", "did you mean h100-sxm?"],
    );
    rejects(
        &["predict", "--model", "su2016", "--kernel", "su-7pt-1"],
        &["--model", "did you mean su2015?"],
    );
    // Far from every name: no guess, just the list.
    let (_, _, err) = gputraffic(&["show", "laplacian"]);
    assert!(!err.contains("did you mean"), "{err}");
}

#[test]
fn a_trace_on_standard_input_counts_as_the_same_file() {
    use std::io::Write;
    let run = |stdin: &str| {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_gputraffic"))
            .args([
                "simulate", "--kernel", "-", "--hw", "h200", "--domain", "32x32x32", "--format",
                "json",
            ])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let text = std::fs::read_to_string("traces/star1.toml").unwrap();
    let (code, piped, err) = run(&text);
    assert_eq!(code, Some(0), "{err}");
    let (_, from_file, _) = gputraffic(&[
        "simulate",
        "--kernel",
        "traces/star1.toml",
        "--hw",
        "h200",
        "--domain",
        "32x32x32",
        "--format",
        "json",
    ]);
    let metrics =
        |s: &str| serde_json::from_str::<serde_json::Value>(s).unwrap()["metrics"].clone();
    assert_eq!(metrics(&piped), metrics(&from_file));
    // A broken trace on stdin is named as such, with exit 2 and nothing on stdout.
    let (code, out, err) = run("name = \"x\"\n[params\n");
    assert_eq!(code, Some(2));
    assert!(out.is_empty());
    assert!(err.contains("<stdin>"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

/// A 1-D kernel whose body (and launch resources) the bad-input cases below replace.
fn control_kernel(launch_extra: &str, body: &str) -> String {
    format!(
        r#"name = "ctl"
[params]
n = 1024
[[arrays]]
name = "data"
element_bytes = 4
dims = ["n"]
[launch]
block = [256, 1, 1]
grid = ["cdiv(n, blockDim.x)", "1", "1"]
{launch_extra}
[thread]
let = ["i = blockIdx.x * blockDim.x + threadIdx.x"]
guard = "i < n"
lattice_updates = "n"
body = [
{body}
]
"#
    )
}

#[test]
fn bad_loops_ifs_atomics_and_resources_name_the_line() {
    let dir = common::scratch("control");
    let load = r#"{ load = "data", index = "i" }"#;
    let nest = |depth: usize| {
        let mut s = load.to_string();
        for d in 0..depth {
            s = format!(r#"{{ loop = "k{d}", count = "2", body = [{s}] }}"#);
        }
        s
    };
    let cases: Vec<(&str, String, String, Vec<&str>)> = vec![
        (
            "if-number",
            String::new(),
            format!(r#"{{ if = "i % 2", body = [{load}] }}"#),
            vec!["line 17", "is not a condition", "\"i % 2 != 0\""],
        ),
        (
            "if-type",
            String::new(),
            format!(r#"{{ if = 3, body = [{load}] }}"#),
            vec!["line 17", "invalid type"],
        ),
        (
            "if-unknown",
            String::new(),
            format!(r#"{{ if = "j < 3", body = [{load}] }}"#),
            vec!["line 17", "unknown variable 'j'"],
        ),
        (
            "if-empty",
            String::new(),
            r#"{ if = "i < 3", body = [] }"#.to_string(),
            vec!["line 17", "an if body needs at least one access"],
        ),
        (
            "too-deep",
            String::new(),
            nest(5),
            vec!["line 17", "loops nest at most 4 deep"],
        ),
        (
            "negative-count",
            String::new(),
            format!(r#"{{ loop = "k", count = "-3", body = [{load}] }}"#),
            vec!["line 17", "a loop count of -3 is negative"],
        ),
        (
            "atomic-bytes",
            String::new(),
            r#"{ atomic = "data", index = "i", bytes = 16 }"#.to_string(),
            vec![
                "line 17",
                "an atomic works on 4 or 8 bytes per thread, not 16",
            ],
        ),
        (
            "atomic-unknown",
            String::new(),
            r#"{ atomic = "dta", index = "i" }"#.to_string(),
            vec!["line 17", "unknown array 'dta'", "did you mean data?"],
        ),
        (
            "ends-run-on-store",
            String::new(),
            r#"{ store = "data", index = "i", ends_run = true }"#.to_string(),
            vec!["line 17", "ends_run marks a load"],
        ),
        (
            "ends-run-type",
            String::new(),
            r#"{ load = "data", index = "i", ends_run = 1 }"#.to_string(),
            vec!["line 17", "invalid type"],
        ),
        (
            "ends-run-on-loop",
            String::new(),
            format!(r#"{{ loop = "k", count = "2", ends_run = true, body = [{load}] }}"#),
            vec!["line 17", "a loop takes loop, count, while, let and body"],
        ),
        (
            "two-heads",
            String::new(),
            r#"{ atomic = "data", load = "data", index = "i" }"#.to_string(),
            vec!["line 17", "exactly one of"],
        ),
        (
            "shared-type",
            "shared_bytes_per_block = true".to_string(),
            load.to_string(),
            vec![
                "line 11",
                "must be an integer or an expression string, not a boolean",
            ],
        ),
        (
            "shared-unknown",
            "shared_bytes_per_block = \"4 * blockDim.q\"".to_string(),
            load.to_string(),
            vec!["line 11", "unknown variable 'blockDim.q'"],
        ),
        (
            "shared-negative",
            "shared_bytes_per_block = \"1000 - 4 * blockDim.x\"".to_string(),
            load.to_string(),
            vec!["launch.shared_bytes_per_block", "= -24 is negative"],
        ),
        (
            "loads-per-run-zero",
            "loads_per_run = 0".to_string(),
            load.to_string(),
            vec![
                "line 11",
                "launch.loads_per_run = 0 is not a positive integer",
            ],
        ),
        (
            "registers-zero",
            "registers_per_thread = \"blockDim.x / 1024\"".to_string(),
            load.to_string(),
            vec![
                "launch.registers_per_thread",
                "= 0 is not a positive integer",
            ],
        ),
    ];
    for (name, launch, body, expected) in cases {
        let path = dir.join(format!("{name}.toml"));
        std::fs::write(&path, control_kernel(&launch, &body)).unwrap();
        let p = path.to_str().unwrap();
        let mut expected = expected;
        expected.push(p);
        rejects(&["simulate", "--kernel", p, "--hw", "h200"], &expected);
    }
    // Four loops deep is allowed.
    let path = dir.join("deep-ok.toml");
    std::fs::write(&path, control_kernel("", &nest(4))).unwrap();
    let (code, _, stderr) = gputraffic(&["simulate", "--kernel", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn shared_memory_that_grows_with_the_block_sets_the_occupancy() {
    // 128 bytes per thread on the H200 (228 KiB per SM, 1 KiB reserved per block): 32 threads
    // take 5 KiB, 45 blocks fit but 32 is the block limit; 256 threads take 33 KiB: 6 blocks;
    // 1024 threads take 129 KiB: 1 block.
    let dir = common::scratch("shared-expr");
    let path = dir.join("smem.toml");
    let load = r#"{ load = "data", index = "i" }"#;
    let text = control_kernel(
        "shared_bytes_per_block = \"128 * blockDim.x * blockDim.y * blockDim.z\"",
        load,
    );
    std::fs::write(&path, text).unwrap();
    let occupancy = |block: &str| {
        let (code, stdout, stderr) = gputraffic(&[
            "simulate",
            "--kernel",
            path.to_str().unwrap(),
            "--hw",
            "h200",
            "--block",
            block,
            "--format",
            "json",
        ]);
        assert_eq!(code, 0, "{stderr}");
        let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        (
            v["launch"]["blocks_per_sm"].as_u64().unwrap(),
            v["launch"]["occupancy_limiter"]
                .as_str()
                .unwrap()
                .to_string(),
        )
    };
    assert_eq!(occupancy("32x1x1"), (32, "blocks".to_string()));
    assert_eq!(occupancy("256x1x1"), (6, "shared memory".to_string()));
    assert_eq!(occupancy("1024x1x1"), (1, "shared memory".to_string()));
}

/// Found by tests/fuzz.rs: a quoted CSV cell spanning lines once made a two-line error, a config
/// allowing blocks larger than an SM made the occupancy search run for 2^26 block sizes, and a
/// unified L2 listing SMs per partition indexed past the SMs (a panic).
#[test]
fn fuzzing_finds_stay_fixed() {
    let dir = common::scratch("fuzz-finds");
    let ncu = std::fs::read_to_string("tests/data/h100/small_ncu.csv").unwrap();
    let broken = ncu.replacen("\"(1024, 1, 1)\"", "\"(102\n4, 1, 1)\"", 1);
    assert_ne!(broken, ncu);
    let csv = dir.join("ncu.csv");
    std::fs::write(&csv, broken).unwrap();
    rejects(
        &[
            "validate",
            "--measured",
            csv.to_str().unwrap(),
            "--manifest",
            "tests/data/h100/small_manifest.toml",
            "--hw",
            "h100-sxm",
        ],
        &["ncu.csv", "'(102\\n4, 1, 1)'"],
    );
    let hw = std::fs::read_to_string("hw-configs/h200.toml").unwrap();
    let big = hw.replacen(
        "max_threads_per_block = 1024",
        "max_threads_per_block = 2147483648",
        1,
    );
    assert_ne!(big, hw);
    let path = dir.join("big.toml");
    std::fs::write(&path, big).unwrap();
    rejects(
        &[
            "simulate",
            "--kernel",
            "star1",
            "--hw",
            path.to_str().unwrap(),
        ],
        &[
            "big.toml",
            "sm.max_threads_per_block = 2147483648 is more than the SM holds",
        ],
    );
}

#[test]
fn models_refuse_kernels_outside_their_scope_in_one_line() {
    rejects(
        &["simulate", "--kernel", "jacobi2d", "--compare", "su2015"],
        &[
            "traces/jacobi2d.toml",
            "model su2015 applies to 3-D stencils",
            "kernel 'jacobi2d' is 2-dimensional (it has nx, ny)",
        ],
    );
    rejects(
        &[
            "predict",
            "--model",
            "layer-condition",
            "--kernel",
            "histogram",
        ],
        &[
            "traces/histogram.toml",
            "has none of the domain parameters nx, ny, nz",
        ],
    );
    rejects(
        &["predict", "--model", "ernst2023", "--kernel", "histogram"],
        &["kernel 'histogram' performs atomics, which it does not model"],
    );
    // A kernel the model can read but was not written for: the number, and a warning.
    let (code, stdout, stderr) = gputraffic(&[
        "predict",
        "--model",
        "su2015",
        "--kernel",
        "star7-coarse-yz",
        "--domain",
        "64x64x64",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("model su2015"), "{stdout}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("warning: model su2015 was written for kernels with one loop at most"),
        "{stderr}"
    );
    // ernst2023 reads any control flow and 2-D kernels: no warning.
    let (code, _, stderr) =
        gputraffic(&["predict", "--model", "ernst2023", "--kernel", "jacobi2d"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    // The layer condition on a kernel it cannot analyse names the kernel, not --set.
    let dir = common::scratch("scope");
    let path = dir.join("gather.toml");
    let text = std::fs::read_to_string("traces/star1.toml")
        .unwrap()
        .replace("index = \"c - 1\"", "index = \"(c * 7) % (nx * ny)\"");
    std::fs::write(&path, text).unwrap();
    rejects(
        &[
            "predict",
            "--model",
            "layer-condition",
            "--kernel",
            path.to_str().unwrap(),
        ],
        &[
            "gather.toml",
            "cannot derive the stencil range",
            "give the range with --set r=R",
        ],
    );
}

/// The progress bar of a long simulation goes to a terminal only: piped, stderr stays empty
/// (this run takes about 2 s on the two-core CI machine, past the bar's one-second delay, and
/// short of the minute after which a pipe gets a line, and of the cost line's 5 s).
#[test]
fn a_long_simulation_writes_no_progress_into_a_pipe() {
    let (code, stdout, stderr) = gputraffic(&[
        "simulate",
        "--kernel",
        "star4",
        "--domain",
        "640x512x32",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stderr, "");
    assert!(stdout.starts_with('{'));
}

#[test]
fn completions_man_page_and_version() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let (code, stdout, stderr) = gputraffic(&["completions", shell]);
        assert_eq!(code, 0, "{shell}: {stderr}");
        // fish spells options `-l domain`, the others `--domain`.
        assert!(
            stdout.contains("simulate") && stdout.contains("domain"),
            "{shell}"
        );
    }
    let (code, stdout, _) = gputraffic(&["man"]);
    assert_eq!(code, 0);
    assert!(stdout.contains(".TH gputraffic 1"), "{stdout}");
    assert!(stdout.contains("simulate"));
    let (code, stdout, _) = gputraffic(&["--version"]);
    assert_eq!(code, 0);
    let first = stdout.lines().next().unwrap();
    assert!(first.starts_with("gputraffic 0.1.0 (commit "), "{stdout}");
    assert!(stdout.contains("shipped GPUs: a100-40gb, "), "{stdout}");
    assert!(stdout.contains("h200"), "{stdout}");
    let (code, _, stderr) = gputraffic(&["completions", "tcsh"]);
    assert_eq!(code, 2, "{stderr}");
}

/// The commands `gputraffic --help` lists, but help.
fn commands() -> Vec<String> {
    let (code, help, _) = gputraffic(&["--help"]);
    assert_eq!(code, 0);
    let listed = help
        .split("Commands:")
        .nth(1)
        .unwrap()
        .split("Options:")
        .next()
        .unwrap();
    let names: Vec<String> = listed
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect();
    assert!(names.len() >= 13, "{names:?}");
    names
}

/// A roff page as plain text: `\-` as `-`, fonts dropped.
fn unroff(page: &str) -> String {
    page.replace("\\-", "-")
        .replace("\\fB", "")
        .replace("\\fI", "")
        .replace("\\fR", "")
}

/// The long flags of a command's `--help`, read off its option lines.
fn visible_flags(command: &str) -> Vec<String> {
    let (code, help, err) = gputraffic(&[command, "--help"]);
    assert_eq!(code, 0, "{command}: {err}");
    help.lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with('-'))
        .filter_map(|l| {
            let flag = l
                .split([' ', ',', '=', '<'])
                .find(|w| w.starts_with("--"))?;
            Some(flag.to_string())
        })
        .collect()
}

#[test]
fn every_command_has_a_manual_page_with_every_visible_flag_exit_status_and_examples() {
    let (code, overview, _) = gputraffic(&["man"]);
    assert_eq!(code, 0);
    let overview = unroff(&overview);
    assert!(overview.contains(".SH \"EXIT STATUS\""), "{overview}");
    let commands = commands();
    for command in &commands {
        assert!(
            overview.contains(&format!("gputraffic-{command}(1)")),
            "the overview does not point to {command}'s page"
        );
        let (code, page, err) = gputraffic(&["man", command]);
        assert_eq!(code, 0, "{command}: {err}");
        assert!(page.starts_with(".ie"), "{command}: {page}");
        let page = unroff(&page);
        assert!(
            page.contains(&format!(".TH gputraffic-{command} 1")),
            "{command}: {page}"
        );
        let flags = visible_flags(command);
        for flag in &flags {
            assert!(
                page.contains(flag.as_str()),
                "{command}'s page lacks {flag}"
            );
        }
        let exit = page.split(".SH \"EXIT STATUS\"").nth(1).unwrap();
        assert!(
            exit.contains(".TP\n0\n") && exit.contains(".TP\n2\n"),
            "{command}: {exit}"
        );
        let examples = page.split(".SH EXAMPLES").nth(1).unwrap();
        assert!(
            examples.contains(&format!(".nf\ngputraffic {command}")),
            "{command} has no example of its own"
        );
    }
    // The flags of the whole launch, where they apply; none of the hidden ones.
    assert!(visible_flags("simulate").len() > 20);
    let simulate = unroff(&gputraffic(&["man", "simulate"]).1);
    for hidden in ["--reference-l2", "--lane-by-lane", "--tick-by-tick"] {
        assert!(!simulate.contains(hidden), "simulate's page shows {hidden}");
    }
    let predict = unroff(&gputraffic(&["man", "predict"]).1);
    assert!(!predict.contains("--threads") && !predict.contains("--sample"));
    let validate = unroff(&gputraffic(&["man", "validate"]).1);
    assert!(!validate.contains("--kernel") && validate.contains("--measured"));

    // --dir writes the same pages, the overview and one per command.
    let dir = common::scratch("man-dir");
    let (code, stdout, stderr) = gputraffic(&["man", "--dir", dir.join("man1").to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "");
    let written = std::fs::read_dir(dir.join("man1")).unwrap().count();
    assert_eq!(written, commands.len() + 1);
    let rank = std::fs::read_to_string(dir.join("man1/gputraffic-rank.1")).unwrap();
    assert_eq!(rank, gputraffic(&["man", "rank"]).1);
    let _ = std::fs::remove_dir_all(&dir);

    rejects(
        &["man", "simlate"],
        &["man: 'simlate' is no command (did you mean simulate?)"],
    );
}

/// The roff pages render without a warning where groff is installed.
#[test]
fn manual_pages_render_cleanly_with_groff() {
    if std::process::Command::new("groff")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("groff is not installed: skipped");
        return;
    }
    for command in ["", "simulate", "rank", "man"] {
        let args: Vec<&str> = ["man", command]
            .into_iter()
            .filter(|a| !a.is_empty())
            .collect();
        let page = gputraffic(&args).1;
        let mut groff = std::process::Command::new("groff")
            .args(["-man", "-Tutf8", "-ww", "-z"])
            .stdin(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        groff
            .stdin
            .take()
            .unwrap()
            .write_all(page.as_bytes())
            .unwrap();
        let out = groff.wait_with_output().unwrap();
        let warnings = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && warnings.is_empty(),
            "man {command}: {warnings}"
        );
    }
}

/// Every example of every manual page runs as written, in a fresh folder that sees the
/// repository's tests/ (their outputs feed the later ones: the sweep the fit, the fit the plot),
/// but the two that need nvcc or measured counters.
#[test]
fn the_manual_pages_examples_run() {
    let needs_more = [
        "gputraffic lift star.cu",
        "gputraffic validate --measured ncu.csv",
    ];
    let dir = common::scratch("man-examples");
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    std::os::unix::fs::symlink(repo.join("tests"), dir.join("tests")).unwrap();
    let mut skipped = Vec::new();
    let mut ran = 0;
    for command in commands() {
        let page = unroff(&gputraffic(&["man", &command]).1);
        for block in page.split(".nf\n").skip(1) {
            let line = block.lines().next().unwrap().replace("\\e", "\\");
            if let Some(s) = needs_more.iter().find(|s| line.starts_with(*s)) {
                skipped.push(*s);
                continue;
            }
            let (command_line, to_file) = match line.split_once(" > ") {
                Some((c, f)) => (c.to_string(), Some(f.to_string())),
                None => (line.clone(), None),
            };
            let words: Vec<&str> = command_line.split_whitespace().collect();
            assert_eq!(words[0], "gputraffic");
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_gputraffic"))
                .args(&words[1..])
                .current_dir(&dir)
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(0), "{line}: {stderr}");
            match to_file {
                Some(f) => std::fs::write(dir.join(f), &out.stdout).unwrap(),
                None => assert!(
                    !out.stdout.is_empty()
                        || command_line.contains("--out")
                        || command_line.contains("--dir"),
                    "{line} printed nothing"
                ),
            }
            ran += 1;
        }
    }
    skipped.sort();
    assert_eq!(skipped, needs_more, "an example to skip is gone");
    assert!(ran >= 15, "{ran}");
    for made in [
        "sweep.csv",
        "merged.csv",
        "fit.json",
        "hit-rate.png",
        "copy.toml",
        "my-gpu.toml",
    ] {
        assert!(dir.join(made).exists(), "no {made}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn completions_offer_the_shipped_names_and_file_names_but_no_hidden_flag() {
    for shell in ["bash", "zsh", "fish"] {
        let (code, script, stderr) = gputraffic(&["completions", shell]);
        assert_eq!(code, 0, "{shell}: {stderr}");
        for name in [
            "star1",
            "transpose-tiled",
            "su-7pt-1",
            "h200",
            "k20-rodc",
            "a100-40gb",
        ] {
            assert!(script.contains(name), "{shell} does not offer {name}");
        }
        for hidden in ["reference-l2", "lane-by-lane", "tick-by-tick"] {
            assert!(!script.contains(hidden), "{shell} offers --{hidden}");
        }
    }
    let bash = gputraffic(&["completions", "bash"]).1;
    // --kernel and --hw: the names, then the file names.
    let kernel = bash
        .split("--kernel)\n")
        .nth(1)
        .unwrap()
        .lines()
        .next()
        .unwrap();
    assert!(
        kernel.contains("compgen -W \"box27 ") && kernel.contains("$(compgen -f -- \"${cur}\")"),
        "{kernel}"
    );
    let hw = bash
        .split("--hw)\n")
        .nth(1)
        .unwrap()
        .lines()
        .next()
        .unwrap();
    assert!(
        hw.contains("h200") && hw.contains("$(compgen -f -- \"${cur}\")"),
        "{hw}"
    );
    // Hidden per command: validate takes its launches from its input, predict simulates nothing.
    let opts = |command: &str| {
        let section = bash
            .split(&format!("gputraffic__subcmd__{command})\n"))
            .nth(1)
            .unwrap();
        section.lines().next().unwrap().to_string()
    };
    assert!(opts("validate").contains("--measured") && !opts("validate").contains("--kernel"));
    assert!(opts("predict").contains("--model") && !opts("predict").contains("--threads"));
    // What bash offers, asked as it asks: after --kernel tr, the shipped names and a file of
    // that prefix; after --, simulate's visible flags.
    let dir = common::scratch("bash-completion");
    std::fs::write(dir.join("trace-of-mine.toml"), "").unwrap();
    std::fs::write(dir.join("gputraffic.bash"), &bash).unwrap();
    let offer = |words: &str| {
        let script = format!(
            "source gputraffic.bash; COMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); \
             _gputraffic gputraffic \"${{COMP_WORDS[-1]}}\" \"${{COMP_WORDS[-2]}}\"; \
             printf '%s\\n' \"${{COMPREPLY[@]}}\""
        );
        let out = std::process::Command::new("bash")
            .args(["-c", &script])
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut offered: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        offered.sort();
        offered
    };
    assert_eq!(
        offer("gputraffic simulate --kernel tr"),
        ["trace-of-mine.toml", "transpose-naive", "transpose-tiled"]
    );
    assert_eq!(offer("gputraffic rank --hw k2"), ["k20", "k20-rodc"]);
    let flags = offer("gputraffic simulate --");
    assert!(flags.contains(&"--kernel".to_string()) && flags.contains(&"--compare".to_string()));
    for hidden in ["--reference-l2", "--lane-by-lane", "--tick-by-tick"] {
        assert!(!flags.iter().any(|f| f == hidden), "{flags:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
    let zsh = gputraffic(&["completions", "zsh"]).1;
    assert!(
        zsh.contains(":KERNEL: _alternative \"shipped\\:shipped kernel\\:(box27 ")
            && zsh.contains("\"files\\:file\\:_files\"'"),
        "zsh offers no file names beside the kernels"
    );
    let fish = gputraffic(&["completions", "fish"]).1;
    let kernel = fish.lines().find(|l| l.contains(" -l kernel ")).unwrap();
    assert!(kernel.contains(" -r -F -a \"box27"), "{kernel}");
}

/// Every command that writes a file creates the folders it goes in.
#[test]
fn out_creates_missing_folders() {
    let dir = common::scratch("out-folders");
    let sweep = dir.join("a/b/sweep.csv");
    let (code, _, stderr) = gputraffic(&[
        "sweep",
        "--kernel",
        "star1",
        "--blocks",
        "32x4x1",
        "--domains",
        "32x32x8",
        "--out",
        sweep.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(sweep.exists());
    let validation = dir.join("c/v.json");
    let (code, _, stderr) = gputraffic(&[
        "validate",
        "--measured",
        "tests/data/validate/hand.csv",
        "--hw",
        "h200",
        "--format",
        "json",
        "--out",
        validation.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let png = dir.join("d/e/v.png");
    let (code, _, stderr) = gputraffic(&[
        "plot",
        "validation",
        "--input",
        validation.to_str().unwrap(),
        "--out",
        png.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(png.exists());
}

/// `tests/data/hw/sampling-small.toml` with `dram.capacity_gib` set, written to a scratch file.
fn small_gpu_with_memory(test: &str, capacity_gib: f64) -> String {
    let text = std::fs::read_to_string("tests/data/hw/sampling-small.toml").unwrap();
    let key = "allocation_granularity_bytes = 2097152";
    assert!(text.contains(key));
    let text = text.replacen(key, &format!("{key}\ncapacity_gib = {capacity_gib}"), 1);
    let path = common::scratch(test).join("small-memory.toml");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn arrays_larger_than_the_gpus_memory_are_an_error_unless_forced() {
    // star1 at 2048^3 on the 32 GiB V100: two arrays of 2056^3 doubles (P = 4 points of padding
    // on every side), each rounded up to the 2 MiB allocation unit.
    let array = (2056u64.pow(3) * 8).div_ceil(2 << 20) * (2 << 20);
    let gib = format!("{:.1} GiB", 2.0 * array as f64 / (1u64 << 30) as f64);
    assert_eq!(gib, "129.5 GiB");
    let big = [
        "simulate",
        "--kernel",
        "star1",
        "--hw",
        "v100",
        "--domain",
        "2048x2048x2048",
    ];
    rejects(
        &big,
        &[
            "star1",
            &format!("the arrays take {gib} ({} bytes in 2 arrays)", 2 * array),
            "more than the v100's 32 GiB of memory (dram.capacity_gib)",
            "--exceed-memory",
        ],
    );
    rejects(
        &[
            "rank",
            "--kernel",
            "star1",
            "--hw",
            "v100",
            "--domain",
            "2048x2048x2048",
            "--blocks",
            "32x8x4",
        ],
        &["star1", &gib, "v100's 32 GiB"],
    );
    // A small launch on a GPU of 4 MiB: star1 64^3 takes two arrays of 72^3 doubles (2.99 MB),
    // 4 MiB each once rounded up to the 2 MiB unit: 8 MiB.
    let hw = small_gpu_with_memory("exceed-memory", 4.0 / 1024.0);
    let sim = |extra: &[&str]| {
        let mut args = vec![
            "simulate", "--kernel", "star1", "--hw", &hw, "--domain", "64x64x64", "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        gputraffic(&args)
    };
    rejects(
        &[
            "simulate", "--kernel", "star1", "--hw", &hw, "--domain", "64x64x64",
        ],
        &[
            "the arrays take 0.0 GiB (8388608 bytes in 2 arrays)",
            "0.00390625 GiB",
        ],
    );
    let (code, forced, stderr) = sim(&["--exceed-memory"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    // Forced, it simulates what the same GPU without a memory size simulates.
    let (code, unbounded, _) = gputraffic(&[
        "simulate",
        "--kernel",
        "star1",
        "--hw",
        "tests/data/hw/sampling-small.toml",
        "--domain",
        "64x64x64",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0);
    assert_eq!(forced, unbounded);
    let (code, _, stderr) = gputraffic(&[
        "rank",
        "--kernel",
        "star1",
        "--hw",
        &hw,
        "--domain",
        "64x64x64",
        "--blocks",
        "32x8x4",
        "--exceed-memory",
    ]);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn every_shipped_gpu_has_a_memory_size() {
    for (name, _) in gputraffic::input::shipped_hw() {
        let hw = gputraffic::input::hw::HwConfig::load(name).unwrap();
        let gib = hw.dram.capacity_gib.unwrap_or_else(|| panic!("{name}"));
        assert!((3.0..=141.0).contains(&gib), "{name}: {gib} GiB");
    }
}

#[test]
fn a_long_run_announces_its_cost_and_a_short_one_stays_silent() {
    // star1 64^3: 7 loads and a store per point, 2097152 thread accesses; far below the
    // 5-second threshold, so nothing on stderr unless a test lowers it.
    let args = [
        "simulate",
        "--kernel",
        "star1",
        "--domain",
        "64x64x64",
        "--threads",
        "1",
        "--format",
        "json",
    ];
    let (code, quiet, stderr) = gputraffic(&args);
    assert_eq!(code, 0);
    assert!(stderr.is_empty(), "{stderr}");
    let (code, out, stderr) = gputraffic_with_env(&args, &[("GPUTRAFFIC_COST_LINE_SECONDS", "0")]);
    assert_eq!(code, 0);
    assert_eq!(out, quiet, "the line changes nothing else");
    assert_eq!(
        stderr,
        "note: 2097152 thread accesses on 1 thread: about 0 s (too short for --sample to pay) (estimated at 100 M accesses/s per thread)\n"
    );
    // A launch long enough to sample names what sampling would simulate, and a sampled run what
    // it simulates.
    let long = [
        "simulate",
        "--kernel",
        "star1",
        "--hw",
        "tests/data/hw/sampling-small.toml",
        "--domain",
        "128x128x256",
        "--block",
        "32x8x4",
        "--threads",
        "2",
    ];
    let env = [("GPUTRAFFIC_COST_LINE_SECONDS", "0")];
    let (code, _, stderr) = gputraffic_with_env(&long, &env);
    assert_eq!(code, 0);
    let line = stderr.lines().next().unwrap();
    assert!(
        line.starts_with(
            "note: 33554432 thread accesses on 2 threads: about 0 s; --sample would simulate "
        ),
        "{line}"
    );
    let (code, _, stderr) = gputraffic_with_env(&[&long[..], &["--sample"]].concat(), &env);
    assert_eq!(code, 0);
    let line = stderr.lines().next().unwrap();
    assert!(
        line.starts_with("note: 33554432 thread accesses on 2 threads: sampled, "),
        "{line}"
    );
    assert!(
        line.contains(" waves in detail: about 0 s (exactly: about 0 s)"),
        "{line}"
    );
    // rank: one line for its shapes, before them.
    let rank = [
        "rank",
        "--kernel",
        "star1",
        "--domain",
        "64x64x64",
        "--blocks",
        "32x8x4,64x4x4",
        "--threads",
        "1",
    ];
    let (code, _, stderr) = gputraffic_with_env(&rank, &env);
    assert_eq!(code, 0);
    assert_eq!(
        stderr,
        "note: 2 shapes, 4194304 thread accesses on 1 thread: about 0 s (too short for --sample to pay) (estimated at 100 M accesses/s per thread)\n"
    );
    // validate: one line for its launches, summed. hand.csv holds three copy launches of
    // 32x16x8 points, a load and a store each: 3 x 4096 x 2 thread accesses.
    let validate = [
        "validate",
        "--measured",
        "tests/data/validate/hand.csv",
        "--hw",
        "h200",
        "--threads",
        "2",
    ];
    let (code, _, stderr) = gputraffic_with_env(&validate, &env);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stderr,
        "note: 3 launches, 24576 thread accesses on 2 threads: about 0 s (too short for --sample to pay) (estimated at 100 M accesses/s per thread)\n"
    );
    let (code, _, stderr) = gputraffic(&validate);
    assert_eq!(code, 0);
    assert!(stderr.is_empty(), "{stderr}");
    let (code, _, stderr) = gputraffic(&rank);
    assert_eq!(code, 0);
    assert!(stderr.is_empty(), "{stderr}");
    // Sampled, both shapes are too short: one line says so.
    let (code, _, stderr) = gputraffic(&[&rank[..], &["--sample"]].concat());
    assert_eq!(code, 0);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(
            "note: --sample: 2 of 2 shapes simulated exactly, too short to sample (the first, 32x8x4: too short to sample: "
        ),
        "{stderr}"
    );
}

#[test]
fn progress_into_a_pipe_is_a_line_per_period_and_a_fallback_says_so() {
    // star1 128^3 in 32x8x4 blocks on the h200: 2048 blocks, 264 a wave (2 per SM on 132):
    // 8 waves. With the period at zero every chunk writes a line; at the minute, a short run
    // none.
    let args = [
        "simulate",
        "--kernel",
        "star1",
        "--domain",
        "128x128x128",
        "--block",
        "32x8x4",
        "--sample",
    ];
    let (code, _, stderr) = gputraffic_with_env(&args, &[("GPUTRAFFIC_PROGRESS_SECONDS", "0")]);
    assert_eq!(code, 0);
    let progress: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("progress: "))
        .collect();
    assert!(!progress.is_empty(), "{stderr}");
    for l in &progress {
        assert!(l.contains("/8 waves, "), "{l}");
    }
    let (code, _, stderr) = gputraffic(&args);
    assert_eq!(code, 0);
    // The only line: the launch is too short to sample.
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("note: --sample: too short to sample: "),
        "{stderr}"
    );
    assert!(
        stderr.trim_end().ends_with("; simulated exactly"),
        "{stderr}"
    );
}

#[test]
fn numbers_outside_their_physical_range_are_refused_with_what_was_meant() {
    // A clock in MHz where GHz is asked for.
    rejects(
        &["simulate", "--kernel", "star1", "--clock", "1500"],
        &[
            "--clock",
            "1500 GHz is no GPU clock",
            "did you mean 1.5 GHz (1500 MHz)?",
        ],
    );
    rejects(
        &[
            "rank", "--kernel", "star1", "--blocks", "32x4x1", "--clock", "0.01",
        ],
        &["--clock", "between 0.1 and 5"],
    );
    // A model constant outside the paper's domain, wherever --set reaches the model.
    let domain = ["--set", "'delta=-5'", "su2015", "must be in [0, 1]"];
    rejects(
        &[
            "simulate",
            "--kernel",
            "star1",
            "--compare",
            "su2015",
            "--set",
            "delta=-5",
        ],
        &domain,
    );
    rejects(
        &[
            "predict", "--kernel", "star1", "--model", "su2015", "--set", "delta=-5",
        ],
        &domain,
    );
    let dir = common::scratch("physical-range");
    let out = dir.join("sweep.csv");
    let sweep = |extra: &[&str]| -> Vec<String> {
        let mut args: Vec<String> = [
            "sweep",
            "--kernel",
            "star1",
            "--blocks",
            "32x4x1",
            "--domains",
            "64x64x64",
            "--out",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.push(out.to_str().unwrap().to_string());
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    };
    let run = |extra: &[&str], expected: &[&str]| {
        let args = sweep(extra);
        rejects(
            &args.iter().map(String::as_str).collect::<Vec<_>>(),
            expected,
        );
        assert!(!out.exists(), "a refused sweep wrote {}", out.display());
    };
    run(
        &["--models", "su2015", "--set", "delta=0.01,-5"],
        &["--set", "'delta=-5'", "must be in [0, 1]"],
    );
    run(
        &["--models", "ernst2023", "--set", "y_a=1.56"],
        &["--set", "y_a of model 'ernst2023' must be in (0, 1]"],
    );
    run(
        &["--l2-scale=-1"],
        &["--l2-scale", "-1 is no capacity factor"],
    );
    run(
        &["--l1-scale=0"],
        &["--l1-scale", "0 is no capacity factor"],
    );
    run(
        &["--clock", "1410"],
        &["--clock", "did you mean 1.41 GHz (1410 MHz)?"],
    );
}

#[test]
fn validate_refuses_misspelt_and_unknown_columns_and_input_with_nothing_to_compare() {
    let dir = common::scratch("validate-columns");
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let validate = |measured: &str, manifest: Option<&str>, expected: &[&str]| {
        let mut args = vec!["validate", "--measured", measured, "--hw", "h100-sxm"];
        if let Some(m) = manifest {
            args.extend(["--manifest", m]);
        }
        rejects(&args, expected);
    };
    // The issue's column: ignored before, an empty report with exit 0.
    let wide = |column: &str| {
        format!("kernel,nx,ny,nz,bx,by,bz,kernel_fn,{column}\ncopy,32,16,8,32,1,1,copy,1024\n")
    };
    validate(
        &write("typo.csv", &wide("dram_sectors_read.sum")),
        None,
        &[
            "typo.csv line 1, column dram_sectors_read.sum",
            "did you mean dram__sectors_read.sum?",
        ],
    );
    validate(
        &write(
            "case.csv",
            &wide("L1TEX__T_SECTORS_PIPE_LSU_MEM_GLOBAL_OP_LD.SUM"),
        ),
        None,
        &[
            "case.csv line 1",
            "did you mean l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum?",
        ],
    );
    // A column that is no metric at all, with the launch column it probably meant.
    validate(
        &write("column.csv", &wide("kernel_name")),
        None,
        &[
            "column.csv line 1, column kernel_name",
            "neither a launch column",
            "did you mean kernel_fn?",
        ],
    );
    // Only metrics the simulator does not model: accepted as columns, nothing to compare.
    validate(
        &write("unmodelled.csv", &wide("dram__bytes_read.sum")),
        None,
        &[
            "unmodelled.csv",
            "no column holds a metric validate compares",
        ],
    );
    // The same in an Nsight Compute export: a misspelling at its first line.
    let ncu = std::fs::read_to_string("tests/data/h100/small_ncu.csv").unwrap();
    let manifest = "tests/data/h100/small_manifest.toml";
    let typo = ncu.replace("\"dram__sectors_write.sum\"", "\"dram__sectors_wirte.sum\"");
    assert_ne!(typo, ncu);
    validate(
        &write("typo_ncu.csv", &typo),
        Some(manifest),
        &[
            "typo_ncu.csv line 3",
            "'dram__sectors_wirte.sum'",
            "did you mean dram__sectors_write.sum?",
        ],
    );
    // An export of metrics none of which validate compares: the manifest names nothing to compare.
    let compared = gputraffic::analysis::validate::compared_metrics();
    let unmodelled: String = ncu
        .lines()
        .filter(|l| !compared.iter().any(|m| l.contains(&format!("\"{m}\""))))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(
        unmodelled.lines().count() > 1,
        "small_ncu.csv has unmodelled metrics"
    );
    validate(
        &write("unmodelled_ncu.csv", &unmodelled),
        Some(manifest),
        &[
            "small_manifest.toml",
            "the launches it names in",
            "have none of the metrics validate compares",
        ],
    );
}

#[test]
fn fits_outside_the_physical_range_warn_with_the_bound_that_keeps_them_in() {
    let dir = common::scratch("fit-range");
    let write = |name: &str, text: String| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    // A hit rate still rising at the last point: the fitted ceiling is 1.56 (every y <= 1).
    let mut rates = "l2_oversubscription,l2_redundant_hit_rate\n".to_string();
    for i in 0..=6 {
        let x = i as f64 * 0.5;
        rates += &format!("{x},{}\n", 1.56 * (-2.0 * (-0.5 * x).exp()).exp());
    }
    let rates = write("rates.csv", rates);
    let fit = |args: &[&str]| {
        let mut all = vec!["fit", "--format", "json"];
        all.extend_from_slice(args);
        let (code, stdout, stderr) = gputraffic(&all);
        assert_eq!(code, 0, "{stderr}");
        let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        (v, stderr)
    };
    let gompertz = [
        "--model",
        "gompertz",
        "--input",
        &rates,
        "--x",
        "l2_oversubscription",
        "--y",
        "l2_redundant_hit_rate",
    ];
    let (v, stderr) = fit(&gompertz);
    assert!((v["a"].as_f64().unwrap() - 1.56).abs() < 1e-6, "{v}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("warning: fitted a = 1.56000 ")
            && stderr.contains("must be in (0, 1]")
            && stderr.trim_end().ends_with("fit again with --bound a=0..1"),
        "{stderr}"
    );
    // With that bound the ceiling sits on 1 and nothing is said.
    let mut bounded = gompertz.to_vec();
    bounded.extend(["--bound", "a=0..1"]);
    let (v, stderr) = fit(&bounded);
    assert_eq!(v["a"], 1.0);
    assert_eq!(v["at_bound"]["a"], "upper");
    assert!(stderr.is_empty(), "{stderr}");
    // su2015: ε below the paper's [0, 1], and formula (8)'s line through the origin worse than
    // the mean (r2_delta = -17/7, see the unit test in src/analysis/fit.rs).
    let su = write(
        "su.csv",
        "su_smx_miss_ratio,su_smx_capacity_term,su_smx_scheduling_term,su_l2_miss_ratio,su_l2_capacity_term\n\
         0.3,1,0,-0.2,1\n0.2,2,0,-0.4,2\n0.1,3,0,-0.6,3\n"
            .to_string(),
    );
    let (v, stderr) = fit(&["--model", "su2015", "--input", &su]);
    assert!((v["epsilon"].as_f64().unwrap() + 0.2).abs() < 1e-12, "{v}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(
        lines[0].starts_with("warning: fitted epsilon = -0.200000 ")
            && lines[0].ends_with("fit again with --bound epsilon=0..1"),
        "{stderr}"
    );
    assert!(
        lines[1].starts_with("warning: r2_delta = -2.42857 ") && lines[1].contains("no --bound"),
        "{stderr}"
    );
}

#[test]
fn the_shared_launch_flags_are_refused_where_they_do_not_apply() {
    // One declaration of --kernel, --hw, --domain, --set, --clock, --threads, --sample and the
    // lift options serves simulate, predict, rank, sweep and validate; a command that cannot use
    // one hides it from its help and refuses it with the reason.
    rejects(
        &[
            "predict", "--kernel", "star1", "--model", "su2015", "--sample",
        ],
        &["--sample: does not apply to predict", "simulates nothing"],
    );
    rejects(
        &["simulate", "--kernel", "star1", "--hw", "h200,h100-sxm"],
        &["--hw: simulate takes one GPU (sweep takes several)"],
    );
    rejects(
        &[
            "validate",
            "--measured",
            "x.csv",
            "--hw",
            "h200",
            "--kernel",
            "star1",
        ],
        &["--kernel: does not apply to validate", "--manifest"],
    );
    rejects(
        &[
            "validate",
            "--measured",
            "x.csv",
            "--hw",
            "h200",
            "--entry",
            "copy",
        ],
        &["--entry: does not apply to validate", "manifest launch"],
    );
    rejects(
        &[
            "sweep",
            "--kernel",
            "star1",
            "--blocks",
            "32x4x2",
            "--domain",
            "64x64x64",
            "--out",
            "never.csv",
        ],
        &["--domain: does not apply to sweep", "--domains"],
    );
    // validate's GPU has no default: the counters were measured on one.
    let (code, _, stderr) = gputraffic(&["validate", "--measured", "x.csv"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--hw <HW>"), "{stderr}");
    let (_, help, _) = gputraffic(&["validate", "--help"]);
    for hidden in ["--kernel", "--entry", "--domain", "--set", "--clock"] {
        assert!(!help.contains(hidden), "validate --help shows {hidden}");
    }
    assert!(help.contains("GPU the counters were measured on"), "{help}");
    for command in ["simulate", "predict", "rank", "sweep"] {
        let (_, help, _) = gputraffic(&[command, "--help"]);
        for shown in ["--kernel", "--entry", "--grid", "--hw", "--set", "--clock"] {
            assert!(help.contains(shown), "{command} --help lacks {shown}");
        }
    }
}

#[test]
fn validate_lifts_the_kernels_a_manifest_names() {
    // The six H100 launches of small_ncu.csv (tests/validate.rs runs them with the hand-written
    // traces) with the kernels lifted from the PTX of the same CUDA source instead.
    let run = |manifest: &str| -> serde_json::Value {
        let (code, out, err) = gputraffic(&[
            "validate",
            "--measured",
            "tests/data/h100/small_ncu.csv",
            "--manifest",
            manifest,
            "--hw",
            "h100-sxm",
            "--format",
            "json",
        ]);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(&out).unwrap()
    };
    let lifted = run("tests/data/h100/small_manifest_lifted.toml");
    let rows = lifted["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 6);
    assert_eq!(rows[0]["kernel"], "stencils:copy");
    assert_eq!(rows[5]["kernel"], "stencils:box27");
    // Coalescing is exact: the lifted kernels issue the measured requests and sectors, launch by
    // launch (as the hand-written traces do).
    for m in [
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    ] {
        assert_eq!(lifted["metrics"][m]["n"], 6, "{m}");
        assert_eq!(lifted["metrics"][m]["max_rel_err"], 0.0, "{m}");
    }
    // Every copy launch stores 256³ doubles: 4,194,304 sectors.
    assert_eq!(
        rows[0]["metrics"]["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"]["simulated"],
        4194304.0
    );
    // A manifest's lift errors name the manifest line of the kernel.
    let dir = common::scratch("validate-lift");
    let manifest = dir.join("m.toml");
    let write = |text: &str| {
        std::fs::write(&manifest, text).unwrap();
        manifest.to_str().unwrap().to_string()
    };
    let m = write(
        "[[launch]]\nid = 72\ntrace = \"tests/data/ptx/stencils.ptx\"\nentry = \"nonesuch\"\n",
    );
    rejects(
        &[
            "validate",
            "--measured",
            "tests/data/h100/small_ncu.csv",
            "--manifest",
            &m,
            "--hw",
            "h100-sxm",
        ],
        &[
            "m.toml: line 3, column 9: --entry: no kernel 'nonesuch'",
            "copy",
        ],
    );
    let m = write("[[launch]]\nid = 72\ntrace = \"copy\"\nentry = \"copy\"\n");
    rejects(
        &[
            "validate",
            "--measured",
            "tests/data/h100/small_ncu.csv",
            "--manifest",
            &m,
            "--hw",
            "h100-sxm",
        ],
        &["m.toml: line 3, column 9: 'copy' is a trace: entry, nvcc"],
    );
}

#[test]
fn sweep_lifts_with_the_lift_options_for_one_architecture() {
    let dir = common::scratch("sweep-lift");
    let out = dir.join("s.csv");
    let lifted = dir.join("lifted.csv");
    let common_args = [
        "--blocks",
        "32x4x2,64x2x1",
        "--domains",
        "64x64x32",
        "--models",
        "none",
        "--set",
        "pitch=72",
        "--set",
        "plane=5184",
    ];
    let (code, _, err) = gputraffic(
        &[
            &[
                "sweep",
                "--kernel",
                "tests/data/ptx/stencils.ptx",
                "--entry",
                "star<1>",
            ][..],
            &["--registers", "32", "--out", lifted.to_str().unwrap()],
            &common_args,
        ]
        .concat(),
    );
    assert_eq!(code, 0, "{err}");
    // The same kernel through `lift` and a trace file: the same rows.
    let (code, toml, err) = gputraffic(&[
        "lift",
        "tests/data/ptx/stencils.ptx",
        "--entry",
        "star<1>",
        "--registers",
        "32",
    ]);
    assert_eq!(code, 0, "{err}");
    let trace = dir.join("star1.toml");
    std::fs::write(&trace, toml).unwrap();
    let (code, _, err) = gputraffic(
        &[
            &["sweep", "--kernel", trace.to_str().unwrap()][..],
            &["--out", out.to_str().unwrap()],
            &common_args,
        ]
        .concat(),
    );
    assert_eq!(code, 0, "{err}");
    let rows = |p: &std::path::Path| {
        let t = std::fs::read_to_string(p).unwrap();
        assert_eq!(t.lines().count(), 3, "{t}");
        t
    };
    assert_eq!(rows(&lifted), rows(&out));
    rejects(
        &[
            "sweep",
            "--kernel",
            "tests/data/ptx/stencils.ptx",
            "--entry",
            "copy",
            "--blocks",
            "32x4x2",
            "--hw",
            "h200,v100",
            "--out",
            "never.csv",
        ],
        &[
            "--hw: tests/data/ptx/stencils.ptx is lifted once",
            "h200 is sm_90 and v100 is sm_70",
        ],
    );
    rejects(
        &[
            "sweep",
            "--kernel",
            "star1",
            "--entry",
            "copy",
            "--blocks",
            "32x4x2",
            "--out",
            "never.csv",
        ],
        &["--kernel: 'star1' is a trace: --entry"],
    );
}

#[test]
fn flops_given_per_precision_each_take_their_pipe() {
    // star1 with 6 single- and 2·P = 8 double-precision operations per update: the fp time is
    // the sum of each pipe's share (64³ points; H200 peaks 66908 and 33454 GFLOP/s at the
    // boost clock, here at the base clock 1.5 of 1.98 GHz)
    let dir = common::scratch("flops-split");
    let text = std::fs::read_to_string("traces/star1.toml").unwrap();
    assert!(text.contains("\nflops_per_update = 8\n"));
    let split = |value: &str| {
        text.replace(
            "\nflops_per_update = 8\n",
            &format!("\nflops_per_update = {value}\n"),
        )
    };
    let path = dir.join("split.toml");
    std::fs::write(&path, split(r#"{ fp32 = 6, fp64 = "2 * P" }"#)).unwrap();
    let (code, out, err) = gputraffic(&[
        "simulate",
        "--kernel",
        path.to_str().unwrap(),
        "--hw",
        "h200",
        "--domain",
        "64x64x64",
        "--clock",
        "base",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let fp = 262144.0 * (6.0 / 66908e9 + 8.0 / 33454e9) / (1.5 / 1.98);
    let fp_s = v["time"]["fp_s"].as_f64().unwrap();
    assert!((fp_s - fp).abs() < 1e-15, "{fp_s} vs {fp}");
    for (name, value, expected) in [
        (
            "key",
            "{ fp16 = 4 }",
            "has no key 'fp16' (it takes fp32 and fp64)",
        ),
        (
            "negative",
            "{ fp32 = -1 }",
            "fp32 must be a non-negative integer",
        ),
        ("unknown", r#"{ fp64 = "2 * Q" }"#, "unknown variable 'Q'"),
        ("type", r#""8""#, "must be a non-negative number or a table"),
    ] {
        let path = dir.join(format!("{name}.toml"));
        std::fs::write(&path, split(value)).unwrap();
        let p = path.to_str().unwrap();
        let line = text
            .lines()
            .position(|l| l == "flops_per_update = 8")
            .unwrap()
            + 1;
        common::rejects(
            &[
                "simulate", "--kernel", p, "--hw", "h200", "--domain", "64x64x64",
            ],
            &[p, &format!("line {line}"), expected],
        );
    }
}

#[test]
fn instructions_given_per_warp_take_the_issue_limiter_and_bad_ones_are_refused() {
    // star1 with 74 instructions a warp (what the H200 counts for it): 64^3 points in 32x4x2
    // blocks are 8192 warps, at 4 warp instructions per SM cycle on 132 SMs at the base clock
    let dir = common::scratch("instructions");
    let text = std::fs::read_to_string("traces/star1.toml").unwrap();
    let with = |value: &str| {
        text.replace(
            "\nflops_per_update = 8\n",
            &format!("\nflops_per_update = 8\ninstructions_per_warp = {value}\n"),
        )
    };
    let path = dir.join("given.toml");
    std::fs::write(&path, with(r#""37 * 2""#)).unwrap();
    let args = |p: &str| {
        [
            "simulate", "--kernel", p, "--hw", "h200", "--domain", "64x64x64", "--block", "32x4x2",
            "--format", "json",
        ]
        .map(String::from)
    };
    let run = |p: &str| {
        let a = args(p);
        let (code, out, err) = gputraffic(&a.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(code, 0, "{err}");
        serde_json::from_str::<serde_json::Value>(&out).unwrap()
    };
    let v = run(path.to_str().unwrap());
    let issue = 74.0 * 8192.0 / (132.0 * 4.0 * 1.5e9);
    let issue_s = v["time"]["issue_s"].as_f64().unwrap();
    assert!(
        (issue_s / issue - 1.0).abs() < 1e-12,
        "{issue_s} vs {issue}"
    );
    // the shipped trace does not say: no issue limiter
    let plain = run("star1");
    assert!(plain["time"]["issue_s"].is_null(), "{}", plain["time"]);
    let line = text
        .lines()
        .position(|l| l == "flops_per_update = 8")
        .unwrap()
        + 2;
    for (name, value, expected) in [
        (
            "negative",
            "-3",
            "must be a non-negative integer or an expression",
        ),
        ("unknown", r#""2 * Q""#, "unknown variable 'Q'"),
        (
            "type",
            "1.5",
            "must be a non-negative integer or an expression",
        ),
        (
            "below",
            r#""P - 9""#,
            "thread.instructions_per_warp = -5 must not be negative",
        ),
    ] {
        let path = dir.join(format!("{name}.toml"));
        std::fs::write(&path, with(value)).unwrap();
        let p = path.to_str().unwrap();
        let a = args(p);
        let a: Vec<&str> = a.iter().map(String::as_str).take(7).collect();
        common::rejects(&a, &[p, &format!("line {line}"), expected]);
    }
}
