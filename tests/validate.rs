//! `gputraffic validate`: statistics checked by hand on made-up counters of launches whose
//! simulated counts are known, the Nsight Compute export path on real H100 counters, and bad input.

mod common;
use common::{gputraffic, rejects, scratch};
use serde_json::Value;

const HAND: &str = "tests/data/validate/hand.csv";
const LD_SECTORS: &str = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";
const LD_REQUESTS: &str = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum";
const ST_SECTORS: &str = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum";

fn validate_json(args: &[&str]) -> Value {
    let mut all = vec!["validate", "--format", "json"];
    all.extend_from_slice(args);
    let (code, stdout, stderr) = gputraffic(&all);
    assert_eq!(code, 0, "{stderr}");
    serde_json::from_str(&stdout).expect("validate --format json prints JSON")
}

fn close(v: &Value, expected: f64) {
    let got = v.as_f64().unwrap_or_else(|| panic!("{v} is no number"));
    assert!((got - expected).abs() < 1e-9, "{got} vs {expected}");
}

/// copy at 32×16×8 (pitch 40 doubles, so every row starts on a 32 B sector boundary), 4096 points:
/// - 32×1×1 blocks: a warp reads 32 doubles of one row = 8 sectors; 128 warps → 1024 sectors,
///   128 requests;
/// - 2×16×1: a warp reads 16 B of each of 16 rows = 16 sectors; 128 warps → 2048 sectors, 128
///   requests;
/// - 1×32×1: only 16 of 32 threads are inside ny = 16, each its own sector; 256 warps → 4096
///   sectors, 256 requests.
///
/// Stores are the same sectors as loads. hand.csv gives measured load sectors 2100, 1900, 4096,
/// requests 128, 128, 200 and store sectors 1024, n/a, 4096.
#[test]
fn statistics_of_hand_computed_launches() {
    let v = validate_json(&["--measured", HAND, "--hw", "h200"]);
    assert_eq!(v["hw"], "h200");
    assert_eq!(v["launches"], 3);
    let metrics = v["metrics"].as_object().unwrap();
    // Only what the file measures, in report order.
    let names: Vec<&str> = metrics.keys().map(String::as_str).collect();
    assert_eq!(names, [LD_REQUESTS, LD_SECTORS, ST_SECTORS]);

    // Load sectors: errors (1024-2100)/2100 = -0.5124, (2048-1900)/1900 = +0.0779, 0.
    let s = &metrics[LD_SECTORS];
    assert_eq!(s["n"], 3);
    close(&s["median_rel_err"], 148.0 / 1900.0);
    close(&s["mean_rel_err"], (1076.0 / 2100.0 + 148.0 / 1900.0) / 3.0);
    close(&s["max_rel_err"], 1076.0 / 2100.0);
    close(&s["worst_rel_err"], -1076.0 / 2100.0);
    assert_eq!(s["worst"], "copy 32x16x8 32x1x1");
    // Measured ranks 2, 1, 3 against simulated 1, 2, 3: 1 - 6·(1+1+0)/(3·8) = 0.5.
    close(&s["spearman"], 0.5);
    close(&s["spearman_groups"]["copy 32x16x8"], 0.5);

    // Requests: errors 0, 0, (256-200)/200 = +0.28; tied ranks agree exactly.
    let r = &metrics[LD_REQUESTS];
    close(&r["median_rel_err"], 0.0);
    close(&r["mean_rel_err"], 0.28 / 3.0);
    close(&r["worst_rel_err"], 0.28);
    assert_eq!(r["worst"], "copy 32x16x8 1x32x1");
    close(&r["spearman"], 1.0);

    // Store sectors: n/a leaves two launches, both exact, too few to rank.
    let st = &metrics[ST_SECTORS];
    assert_eq!(st["n"], 2);
    close(&st["max_rel_err"], 0.0);
    assert!(st["spearman"].is_null());
    assert_eq!(st["spearman_groups"].as_object().unwrap().len(), 0);

    // One kernel, so its summary is the overall one.
    assert_eq!(v["kernels"]["copy"][LD_SECTORS]["n"], 3);
    close(&v["kernels"]["copy"][LD_SECTORS]["spearman"], 0.5);

    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[1]["launch"], "copy 32x16x8 2x16x1");
    assert_eq!(rows[1]["group"], "copy 32x16x8");
    assert_eq!(rows[1]["metrics"][LD_SECTORS]["simulated"], 2048.0);
    assert_eq!(rows[1]["metrics"][LD_SECTORS]["measured"], 1900.0);
    assert!(rows[1]["metrics"].get(ST_SECTORS).is_none());
    assert_eq!(rows[2]["metrics"][LD_REQUESTS]["simulated"], 256.0);
}

#[test]
fn table_report_and_thread_count_independence() {
    let (code, table, stderr) = gputraffic(&["validate", "--measured", HAND, "--hw", "h200"]);
    assert_eq!(code, 0, "{stderr}");
    let line = table
        .lines()
        .find(|l| l.starts_with(LD_SECTORS))
        .expect("a line per metric");
    let cells: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(
        cells[1..7],
        ["3", "7.8%", "19.7%", "51.2%", "0.500", "-51.2%"],
        "{line}"
    );
    assert!(line.ends_with("copy 32x16x8 32x1x1"), "{line}");
    assert!(
        table.lines().any(|l| l == "copy"),
        "per-kernel section: {table}"
    );

    let run = |threads: &str| {
        gputraffic(&[
            "validate",
            "--measured",
            HAND,
            "--hw",
            "h200",
            "--format",
            "json",
            "--threads",
            threads,
        ])
        .1
    };
    assert_eq!(run("1"), run("2"));
}

/// `validate` of tests/data/h100/small_ncu.csv with `manifest` on the h100-sxm, as JSON written
/// to a file in the scratch folder `name`: it succeeds and prints nothing; the report.
fn small_h100_report(name: &str, manifest: &str) -> Value {
    let out = scratch(name).join("v.json");
    let (code, stdout, stderr) = gputraffic(&[
        "validate",
        "--measured",
        "tests/data/h100/small_ncu.csv",
        "--manifest",
        manifest,
        "--hw",
        "h100-sxm",
        "--format",
        "json",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.is_empty());
    serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap()
}

/// The ncu export path on real counters: 5 copy launches named by id and a box27 launch named by
/// function, block and grid. Coalescing fixes load/store sectors and requests, so they must
/// match exactly; the cache-dependent reads are checked against the targets.
#[test]
fn real_h100_counters_through_an_ncu_export_and_manifest() {
    let v = small_h100_report("validate-h100", "tests/data/h100/small_manifest.toml");
    let rows = v["rows"].as_array().unwrap();
    let ids: Vec<i64> = rows.iter().map(|r| r["id"].as_i64().unwrap()).collect();
    assert_eq!(ids, [72, 73, 74, 75, 76, 77]);
    assert_eq!(rows[5]["launch"], "box27 256x256x256 32x8x4");
    for m in [LD_REQUESTS, LD_SECTORS, ST_SECTORS] {
        assert_eq!(v["metrics"][m]["n"], 6, "{m}");
        close(&v["metrics"][m]["max_rel_err"], 0.0);
    }
    // Every copy launch stores 256³ doubles: 4,194,304 sectors, measured and simulated.
    assert_eq!(rows[0]["metrics"][ST_SECTORS]["measured"], 4194304.0);
    let l2 = v["metrics"]["lts__t_sectors_srcunit_tex_op_read.sum"]["median_rel_err"]
        .as_f64()
        .unwrap();
    let dram = v["metrics"]["dram__sectors_read.sum"]["median_rel_err"]
        .as_f64()
        .unwrap();
    assert!(l2 <= 0.05, "L2 read median {l2}");
    assert!(dram <= 0.10, "DRAM read median {dram}");
    // The time model runs at the config's base clock against ncu's base-clock durations.
    assert_eq!(v["metrics"]["gpu__time_duration.sum"]["n"], 6);
}

/// A manifest's `group` key puts launches of different kernels (as a block size given as a
/// template argument makes them) in one group, ranked together; the launches keep their names.
#[test]
fn a_manifests_group_key_ranks_its_launches_together() {
    let dir = scratch("validate-group");
    let manifest = dir.join("grouped.toml");
    let text = std::fs::read_to_string("tests/data/h100/small_manifest.toml").unwrap();
    std::fs::write(
        &manifest,
        text.replace("[[launch]]\n", "[[launch]]\ngroup = \"six shapes\"\n"),
    )
    .unwrap();
    let v = small_h100_report("validate-group-report", manifest.to_str().unwrap());
    let rows = v["rows"].as_array().unwrap();
    assert!(rows.iter().all(|r| r["group"] == "six shapes"));
    assert_eq!(rows[5]["launch"], "box27 256x256x256 32x8x4");
    assert_eq!(rows[5]["kernel"], "box27");
    let groups = v["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 1);
    assert_eq!(groups[0]["group"], "six shapes");
    assert_eq!(groups[0]["shapes"], 6);
}

#[test]
fn bad_input_is_one_message_and_exit_2() {
    let dir = scratch("validate-bad");
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let ncu = "tests/data/h100/small_ncu.csv";

    rejects(
        &["validate", "--measured", ncu, "--hw", "h100-sxm"],
        &["small_ncu.csv", "--manifest"],
    );
    let unknown = write(
        "unknown.csv",
        "kernel,nx,ny,nz,bx,by,bz,dram__sectors_read.sum\nnosuch,8,8,8,8,8,1,5\n",
    );
    rejects(
        &["validate", "--measured", &unknown, "--hw", "h200"],
        &["unknown.csv", "nosuch"],
    );
    let no_bz = write("nobz.csv", "kernel,nx,ny,nz,bx,by\ncopy,8,8,8,8,8\n");
    rejects(
        &["validate", "--measured", &no_bz, "--hw", "h200"],
        &["nobz.csv", "no column bz"],
    );
    let text = write(
        "text.csv",
        "kernel,nx,ny,nz,bx,by,bz,dram__sectors_read.sum\ncopy,8,8,8,8,8,1,lots\n",
    );
    rejects(
        &["validate", "--measured", &text, "--hw", "h200"],
        &["text.csv line 2", "dram__sectors_read.sum", "lots"],
    );
    let cz = write(
        "cz.csv",
        "kernel,nx,ny,nz,bx,by,bz,cz\ncopy,8,8,8,8,8,1,4\n",
    );
    rejects(
        &["validate", "--measured", &cz, "--hw", "h200"],
        &["cz.csv line 2", "no cz parameter"],
    );

    let entry = |id: &str, block: &str, domain: &str| {
        format!("[[launch]]\n{id}block = {block}\ntrace = \"copy\"\ndomain = {domain}\n")
    };
    let wrong_block = write(
        "block.toml",
        &entry("id = 72\n", "[32, 8, 1]", "[256, 256, 256]"),
    );
    rejects(
        &[
            "validate",
            "--measured",
            ncu,
            "--manifest",
            &wrong_block,
            "--hw",
            "h100-sxm",
        ],
        &["block.toml", "launch 72", "[1024, 1, 1]"],
    );
    let wrong_domain = write(
        "domain.toml",
        &entry("id = 72\n", "[1024, 1, 1]", "[128, 128, 128]"),
    );
    rejects(
        &[
            "validate",
            "--measured",
            ncu,
            "--manifest",
            &wrong_domain,
            "--hw",
            "h100-sxm",
        ],
        &["ID 72", "grid [1, 256, 256]", "[1, 128, 128]"],
    );
    let nothing = write("nothing.toml", &entry("", "[3, 3, 3]", "[256, 256, 256]"));
    rejects(
        &[
            "validate",
            "--measured",
            ncu,
            "--manifest",
            &nothing,
            "--hw",
            "h100-sxm",
        ],
        &["nothing.toml", "no launch of"],
    );
    rejects(
        &[
            "validate",
            "--measured",
            HAND,
            "--manifest",
            &nothing,
            "--hw",
            "h200",
        ],
        &["nothing.toml", "Nsight Compute export"],
    );
    rejects(
        &["validate", "--measured", HAND, "--hw", "nosuch-gpu"],
        &["nosuch-gpu"],
    );
}

/// Every measured file shipped in tests/data still loads under the column and metric checks,
/// with a metric to compare in every input: the wide CSVs, and each manifest with the exports
/// beside it (`manifest.toml` with `ncu*.csv`, `X_manifest.toml` with `X_ncu.csv`).
#[test]
fn every_shipped_measured_file_loads() {
    use gputraffic::analysis::{measured, validate::compared_metrics};
    use std::path::{Path, PathBuf};
    let compared = compared_metrics();
    let mut loaded = 0;
    let mut check = |m: &Path, manifest: Option<&Path>| {
        let (launches, _) = measured::load(m, manifest)
            .unwrap_or_else(|e| panic!("{} with {manifest:?}: {e}", m.display()));
        assert!(
            launches
                .iter()
                .any(|l| compared.iter().any(|c| l.counters.contains_key(*c))),
            "{}",
            m.display()
        );
        loaded += 1;
    };
    for wide in [HAND, "tests/data/h200_dev_set.csv"] {
        check(Path::new(wide), None);
    }
    fn manifests(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                manifests(&p, out);
            } else if p.to_str().unwrap().ends_with("manifest.toml") {
                out.push(p);
            }
        }
    }
    let mut found = vec![];
    manifests(Path::new("tests/data"), &mut found);
    found.sort();
    for manifest in &found {
        let dir = manifest.parent().unwrap();
        let stem = manifest.file_name().unwrap().to_str().unwrap();
        let prefix = stem.strip_suffix("manifest.toml").unwrap();
        let exports: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                let n = p.file_name().unwrap().to_str().unwrap();
                n.ends_with(".csv")
                    && match prefix {
                        "" => n.starts_with("ncu"),
                        _ => n == format!("{prefix}ncu.csv"),
                    }
            })
            .collect();
        assert!(
            !exports.is_empty(),
            "no export beside {}",
            manifest.display()
        );
        for export in exports {
            check(&export, Some(manifest));
        }
    }
    assert!(
        loaded >= 2 + found.len(),
        "{loaded} inputs for {} manifests",
        found.len()
    );
}
