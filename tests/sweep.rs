//! `gputraffic sweep`: the same file on 1 and 2 threads, after a kill and `--resume`, after a torn
//! last line; derived cache quantities checked by hand; bad input.

mod common;
use common::{gputraffic, scratch};
use gputraffic::input::table::Table;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// 16 small configurations: 4 block shapes × 4 domains of star1.
const SMALL: &[&str] = &[
    "sweep",
    "--kernel",
    "star1",
    "--hw",
    "h200",
    "--blocks",
    "32x4x1,64x2x1,16x8x1,8x16x1",
    "--domains",
    "64x64x32,128x32x32,32x128x32,64x64x64",
    "--models",
    "su2015,ernst2023",
];

fn sweep_to(out: &Path, extra: &[&str]) -> (i32, String, String) {
    let mut args: Vec<&str> = SMALL.to_vec();
    let o = out.to_str().unwrap();
    args.extend(["--out", o]);
    args.extend(extra);
    gputraffic(&args)
}

fn data_rows(text: &str) -> usize {
    text.lines().count().saturating_sub(1)
}

#[test]
fn one_and_two_threads_give_identical_files() {
    let dir = scratch("sweep-threads");
    for ext in ["csv", "jsonl"] {
        let one = dir.join(format!("one.{ext}"));
        let two = dir.join(format!("two.{ext}"));
        let (c1, o1, e1) = sweep_to(&one, &["--threads", "1"]);
        assert_eq!(c1, 0, "{e1}");
        assert!(o1.is_empty());
        let (c2, _, e2) = sweep_to(&two, &["--threads", "2"]);
        assert_eq!(c2, 0, "{e2}");
        let a = std::fs::read_to_string(&one).unwrap();
        let b = std::fs::read_to_string(&two).unwrap();
        assert_eq!(a, b, "{ext}");
        let t = Table::load(&one).unwrap();
        assert_eq!(t.rows.len(), 16);
        // In configuration order, the block varying fastest.
        let configs = t.numbers("config").unwrap();
        assert!(
            configs
                .iter()
                .enumerate()
                .all(|(i, c)| *c == Some(i as f64))
        );
        assert_eq!(
            t.text("param_nx").unwrap()[..5],
            ["64", "64", "64", "64", "128"]
        );
        assert_eq!(t.block_shapes().unwrap()[1], [64, 2, 1]);
    }
}

#[test]
fn killed_sweep_resumes_to_the_same_file() {
    let dir = scratch("sweep-kill");
    let whole = dir.join("whole.csv");
    let (code, _, err) = sweep_to(&whole, &[]);
    assert_eq!(code, 0, "{err}");
    let expected = std::fs::read_to_string(&whole).unwrap();
    assert_eq!(data_rows(&expected), 16);

    // Kill a real run once two rows are on disk.
    let cut = dir.join("cut.csv");
    let mut args: Vec<&str> = SMALL.to_vec();
    args.extend(["--out", cut.to_str().unwrap(), "--threads", "2"]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_gputraffic"))
        .args(&args)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        let rows = std::fs::read_to_string(&cut).map_or(0, |t| data_rows(&t));
        if rows >= 2 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no rows appeared"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let partial = std::fs::read_to_string(&cut).unwrap();
    assert!(
        data_rows(&partial) < 16,
        "the sweep finished before it could be killed"
    );
    assert_ne!(partial, expected);

    let (code, _, err) = sweep_to(&cut, &["--resume"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("kept from before"), "{err}");
    assert_eq!(std::fs::read_to_string(&cut).unwrap(), expected);
}

#[test]
fn torn_last_line_and_rows_out_of_order_resume_to_the_same_file() {
    let dir = scratch("sweep-torn");
    let whole = dir.join("whole.csv");
    assert_eq!(sweep_to(&whole, &[]).0, 0);
    let expected = std::fs::read_to_string(&whole).unwrap();
    let lines: Vec<&str> = expected.lines().collect();
    // Rows finish in any order; the last one was cut mid-write.
    let torn = format!(
        "{}\n{}\n{}\n{}\n{}",
        lines[0],
        lines[6],
        lines[2],
        lines[11],
        &lines[4][..lines[4].len() / 2]
    );
    let path = dir.join("torn.csv");
    std::fs::write(&path, torn).unwrap();
    let (code, _, err) = sweep_to(&path, &["--resume"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("16 configurations (3 kept from before, 13 simulated)"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), expected);
}

#[test]
fn resume_refuses_another_sweeps_file_and_out_is_never_silently_replaced() {
    let dir = scratch("sweep-other");
    let path = dir.join("s.csv");
    assert_eq!(sweep_to(&path, &[]).0, 0);
    let before = std::fs::read_to_string(&path).unwrap();
    // Without --resume or --force the file stays.
    let (code, out, err) = sweep_to(&path, &[]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(err.contains("s.csv") && err.contains("--resume"), "{err}");
    // Another domain list: the rows are not this sweep's.
    let o = path.to_str().unwrap();
    let (code, _, err) = gputraffic(&[
        "sweep",
        "--kernel",
        "star1",
        "--blocks",
        "32x4x1,64x2x1,16x8x1,8x16x1",
        "--domains",
        "64x64x16,128x32x32,32x128x32,64x64x64",
        "--models",
        "su2015,ernst2023",
        "--out",
        o,
        "--resume",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("different sweep"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
}

#[test]
fn derived_volumes_of_an_aligned_copy_by_hand() {
    // copy without padding (P = 0), 32 x 1 x 1 blocks: every warp loads 256 aligned bytes (2 lines,
    // 8 sectors) and stores 256. nx = 256 gives 8 blocks per row; ny = 528 makes an xy layer of
    // blocks exactly one wave (132 SMs × 32 resident blocks = 4224).
    let dir = scratch("sweep-copy");
    let path = dir.join("copy.csv");
    let o = path.to_str().unwrap();
    let (code, _, err) = gputraffic(&[
        "sweep",
        "--kernel",
        "copy",
        "--hw",
        "h200",
        "--blocks",
        "32x1x1",
        "--domains",
        "256x528x8",
        "--set",
        "P=0",
        "--l2-scale",
        "1,0.5",
        "--models",
        "none",
        "--out",
        o,
    ]);
    assert_eq!(code, 0, "{err}");
    let t = Table::load(&path).unwrap();
    assert_eq!(t.rows.len(), 2);
    let col = |n: &str| t.numbers(n).unwrap();
    let blocks = 8.0 * 528.0 * 8.0;
    assert_eq!(col("blocks_per_sm")[0], Some(32.0));
    // L1: no reuse at all. V_comp = V_up = 8 sectors per block; V_red = 0 leaves R_hit undefined.
    assert_eq!(col("l1_v_up_bytes")[0], Some(blocks * 256.0));
    assert_eq!(col("l1_v_comp_bytes")[0], Some(blocks * 256.0));
    assert_eq!(col("l1_v_red_bytes")[0], Some(0.0));
    assert_eq!(col("l1_redundant_hit_rate")[0], None);
    // V_alloc(L1) = 32 resident blocks × 2 lines × 128 B.
    assert_eq!(col("l1_v_alloc_bytes")[0], Some(8192.0));
    let l1_cache = col("l1_v_cache_bytes")[0].unwrap();
    assert_eq!(col("l1_oversubscription")[0], Some(8192.0 / l1_cache));
    // V_alloc(L2) = 4224 blocks × (2 load + 2 store lines) × 128 B.
    assert_eq!(col("l2_v_alloc_bytes")[0], Some(4224.0 * 4.0 * 128.0));
    // V_cache(L2) = one of the two partitions; halved by --l2-scale 0.5.
    let l2_cache = col("l2_v_cache_bytes");
    assert_eq!(l2_cache[0].unwrap(), 2.0 * l2_cache[1].unwrap());
    assert_eq!(col("l2_scale"), [Some(1.0), Some(0.5)]);
    assert_eq!(
        col("l2_oversubscription")[1],
        Some(4224.0 * 512.0 / l2_cache[1].unwrap())
    );
    // L2: V_up = the L1 misses, V_comp = everything once, V_down = the data's DRAM reads (the
    // launch's own left out: 76 sectors and the copy's 896 bytes of code).
    assert_eq!(col("l2_v_up_bytes")[0], Some(blocks * 256.0));
    assert_eq!(col("l2_v_comp_bytes")[0], Some(blocks * 256.0));
    assert_eq!(
        col("l2_v_down_bytes")[0],
        col("dram__sectors_read.sum")[0].map(|s| (s - 76.0 - 896.0 / 32.0) * 32.0)
    );
}

#[test]
fn su_ratios_solve_formulas_7_and_11_for_the_simulated_volumes() {
    // Su et al.'s own kernel and GPU: the row's ratios must reproduce the simulated L2 and DRAM
    // loads through formulas (7) and (11) with the model's own n_ld_net and group counts.
    let dir = scratch("sweep-su");
    let path = dir.join("su.csv");
    let o = path.to_str().unwrap();
    let (code, _, err) = gputraffic(&[
        "sweep",
        "--kernel",
        "su-7pt-1",
        "--hw",
        "k20-rodc",
        "--blocks",
        "32x4x1,64x4x1",
        "--domains",
        "128x128x64",
        "--models",
        "none",
        "--out",
        o,
    ]);
    assert_eq!(code, 0, "{err}");
    let t = Table::load(&path).unwrap();
    for (i, block) in ["32x4x1", "64x4x1"].iter().enumerate() {
        let (code, out, err) = gputraffic(&[
            "predict",
            "--model",
            "su2015",
            "--kernel",
            "su-7pt-1",
            "--hw",
            "k20-rodc",
            "--block",
            block,
            "--domain",
            "128x128x64",
            "--format",
            "json",
        ]);
        assert_eq!(code, 0, "{err}");
        let p: serde_json::Value = serde_json::from_str(&out).unwrap();
        let f = |k: &str| p[k].as_f64().unwrap();
        let cell = |n: &str| t.numbers(n).unwrap()[i].unwrap();
        let l2_loads = cell("lts__t_sectors_srcunit_tex_op_read.sum") * 32.0 / f("value_bytes");
        let smx = l2_loads / f("thread_blocks") / f("n_ld_net_l2_b") - 1.0;
        assert!((cell("su_smx_miss_ratio") - smx).abs() < 1e-12);
        let dram = cell("dram__sectors_read.sum") * 32.0 / f("value_bytes");
        let l2 = dram / f("groups") / f("n_ld_net_gm_g") - 1.0;
        assert!((cell("su_l2_miss_ratio") - l2).abs() < 1e-12);
        assert_eq!(cell("su_smx_capacity_term"), f("smx_capacity_term"));
        assert_eq!(cell("su_l2_capacity_term"), f("l2_miss_ratio_per_epsilon"));
        assert_eq!(cell("su_smx_scheduling_term"), 0.0);
    }
}

#[test]
fn bad_sweep_input_exits_2_with_one_line() {
    let dir = scratch("sweep-bad");
    let o = dir.join("x.csv");
    let o = o.to_str().unwrap();
    for (args, expected) in [
        (vec!["--blocks", "all-100"], "power of two"),
        (vec!["--blocks", "32x8"], "AxBxC"),
        (
            vec![
                "--blocks",
                "32x4x1",
                "--domains",
                "square-xy:total=100:from=16:to=8",
            ],
            "larger",
        ),
        (vec!["--blocks", "32x4x1", "--set", "nope=1,2"], "nope"),
        (vec!["--blocks", "32x4x1", "--l2-scale", "0"], "positive"),
        (
            vec!["--blocks", "32x4x1", "--hw", "h200,nosuchgpu"],
            "nosuchgpu",
        ),
        (
            vec!["--blocks", "32x4x1", "--models", "nosuchmodel"],
            "nosuchmodel",
        ),
    ] {
        let mut a = vec!["sweep", "--kernel", "star1", "--out", o];
        a.extend(args);
        let (code, out, err) = gputraffic(&a);
        assert_eq!((code, out.as_str()), (2, ""), "{a:?}: {err}");
        assert!(err.contains(expected), "{a:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(!Path::new(o).exists(), "{a:?} left a file");
    }
}

/// `--domains` takes as many sizes as the kernel has of nx, ny, nz: a 2-D sweep of jacobi2d.
#[test]
fn a_two_dimensional_kernel_sweeps_two_dimensional_domains() {
    let dir = scratch("sweep-2d");
    let out = dir.join("j.csv");
    let (code, _, stderr) = gputraffic(&[
        "sweep",
        "--kernel",
        "jacobi2d",
        "--hw",
        "h100-sxm",
        "--blocks",
        "32x8x1,16x16x1",
        "--domains",
        "64x32,128x64",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let t = Table::load(&out).unwrap();
    assert_eq!(t.rows.len(), 4);
    let nx: Vec<&str> = t.text("param_nx").unwrap();
    let ny: Vec<&str> = t.text("param_ny").unwrap();
    assert_eq!(nx, vec!["64", "64", "128", "128"]);
    assert_eq!(ny, vec!["32", "32", "64", "64"]);
    // A 3-D size for a 2-D kernel says which form it takes.
    common::rejects(
        &[
            "sweep",
            "--kernel",
            "jacobi2d",
            "--hw",
            "h100-sxm",
            "--blocks",
            "32x8x1",
            "--domains",
            "64x32x8",
            "--out",
            dir.join("j3.csv").to_str().unwrap(),
        ],
        &[
            "--domains",
            "2-dimensional (it has nx, ny): give --domain NXxNY",
        ],
    );
}

/// 6 configurations: 2 block shapes × 3 domains of star1, one model (the shard tests).
const TINY: &[&str] = &[
    "sweep",
    "--kernel",
    "star1",
    "--hw",
    "h200",
    "--blocks",
    "32x4x1,16x8x1",
    "--domains",
    "32x32x16,64x16x16,16x32x16",
    "--models",
    "su2015",
];

fn tiny(out: &Path, extra: &[&str]) -> (i32, String, String) {
    let mut args: Vec<&str> = TINY.to_vec();
    args.extend(["--out", out.to_str().unwrap(), "--threads", "1"]);
    args.extend(extra);
    gputraffic(&args)
}

/// Runs shards 1/n … n/n of TINY into `dir` and returns their files, in shard order.
fn shards(dir: &Path, n: usize, ext: &str) -> Vec<std::path::PathBuf> {
    (1..=n)
        .map(|k| {
            let f = dir.join(format!("s{k}-of-{n}.{ext}"));
            let (code, _, err) = tiny(&f, &["--shard", &format!("{k}/{n}")]);
            assert_eq!(code, 0, "{err}");
            f
        })
        .collect()
}

fn merge(out: &Path, files: &[&Path]) -> (i32, String, String) {
    let mut args = vec!["merge", "--out", out.to_str().unwrap()];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    gputraffic(&args)
}

#[test]
fn merged_shards_equal_the_unsharded_sweep_byte_for_byte() {
    let dir = scratch("shard-merge");
    for ext in ["csv", "jsonl"] {
        let whole = dir.join(format!("whole.{ext}"));
        assert_eq!(tiny(&whole, &[]).0, 0);
        let expected = std::fs::read_to_string(&whole).unwrap();
        let header_lines = usize::from(ext == "csv");
        assert_eq!(expected.lines().count(), 6 + header_lines);
        // 1 shard; 4 of uneven size (2, 2, 1, 1); 8, two of them empty.
        for n in [1, 4, 8] {
            let files = shards(&dir, n, ext);
            let text = |k: usize| std::fs::read_to_string(&files[k - 1]).unwrap();
            let first_lines: Vec<String> = (1..=n)
                .map(|k| text(k).lines().next().unwrap().to_string())
                .collect();
            let prefix = if ext == "csv" { "# " } else { "" };
            assert!(
                first_lines[0].starts_with(&format!(
                    "{prefix}{{\"gputraffic_shard\":{{\"shard\":1,\"of\":{n},\"sweep\":\""
                )),
                "{}",
                first_lines[0]
            );
            // Shard K holds the configurations K-1, K-1+N, …, under the unsharded file's lines.
            let whole_rows: Vec<&str> = expected.lines().skip(header_lines).collect();
            for k in 1..=n {
                let t = text(k);
                let rows: Vec<&str> = t.lines().skip(1 + header_lines).collect();
                let want: Vec<&str> = whole_rows.iter().skip(k - 1).step_by(n).copied().collect();
                assert_eq!(rows, want, "shard {k}/{n}");
                // Every shard names the same sweep.
                let sweep = |l: &str| l.split("\"sweep\":").nth(1).unwrap()[..18].to_string();
                assert_eq!(sweep(&first_lines[k - 1]), sweep(&first_lines[0]));
            }
            // Any order: reversed, then the first shard moved to the middle.
            let mut order: Vec<&Path> = files.iter().map(|f| f.as_path()).rev().collect();
            let last = order.pop().unwrap();
            order.insert(order.len() / 2, last);
            let merged = dir.join(format!("m{n}/merged.{ext}"));
            let (code, out, err) = merge(&merged, &order);
            assert_eq!((code, out.as_str()), (0, ""), "{err}");
            assert!(
                err.contains("6 configurations of sweep ")
                    && err.contains(&format!("from {n} shards")),
                "{err}"
            );
            assert_eq!(
                std::fs::read_to_string(&merged).unwrap(),
                expected,
                "{ext}, N = {n}"
            );
        }
    }
    // A shard reads back as a table of its rows (for a look before the merge).
    let read = gputraffic::analysis::sweep_file::read_table;
    let t = read(&dir.join("s2-of-4.csv")).unwrap();
    assert_eq!(t.numbers("config").unwrap(), [Some(1.0), Some(5.0)]);
    let t = read(&dir.join("s2-of-4.jsonl")).unwrap();
    assert_eq!(t.numbers("config").unwrap(), [Some(1.0), Some(5.0)]);
}

#[test]
fn merge_names_missing_duplicate_foreign_and_incomplete_shards() {
    let dir = scratch("shard-bad");
    let s = shards(&dir, 3, "csv");
    let (s1, s2, s3) = (s[0].as_path(), s[1].as_path(), s[2].as_path());
    let out = dir.join("merged.csv");
    let o = out.to_str().unwrap();
    let name = |p: &Path| p.to_str().unwrap().to_string();
    let rejects = |files: &[&Path], expected: &[&str]| {
        let mut args = vec!["merge", "--out", o];
        args.extend(files.iter().map(|f| f.to_str().unwrap()));
        common::rejects(&args, expected);
        assert!(!out.exists(), "{files:?} left a file");
    };
    // Missing and duplicate shards, by K and by file.
    rejects(&[s3, s1], &["shard 2/3 missing"]);
    rejects(&[s1], &["shards 2/3 and 3/3 missing"]);
    let copy = dir.join("copy-of-2.csv");
    std::fs::copy(s2, &copy).unwrap();
    rejects(
        &[s1, s2, s3, &copy],
        &[&format!(
            "shard 2/3 is given 2 times ({}, {})",
            name(s2),
            name(&copy)
        )],
    );
    rejects(
        &[s2, &copy],
        &["shards 1/3 and 3/3 missing; shard 2/3 is given 2 times"],
    );
    // A shard of another sweep (another model list), of another split, not a shard at all.
    let other = dir.join("other.csv");
    let mut args: Vec<&str> = TINY[..TINY.len() - 1].to_vec();
    args.extend(["none", "--out", other.to_str().unwrap(), "--shard", "2/3"]);
    assert_eq!(gputraffic(&args).0, 0);
    rejects(
        &[s1, &other, s3],
        &[&name(&other), "a shard of another sweep", &name(s1)],
    );
    let half = dir.join("half.csv");
    assert_eq!(tiny(&half, &["--shard", "2/2"]).0, 0);
    rejects(
        &[s1, s2, s3, &half],
        &[&name(&half), "in 2 shards", "in 3 shards"],
    );
    let whole = dir.join("whole.csv");
    assert_eq!(tiny(&whole, &[]).0, 0);
    rejects(&[&whole], &[&name(&whole), "not a shard of a sweep"]);
    // Another build.
    let rebuilt = dir.join("rebuilt.csv");
    let t = std::fs::read_to_string(s2).unwrap();
    let build = t
        .split("\"build\":\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    std::fs::write(&rebuilt, t.replacen(build, "0.0.9 (0123456789ab)", 1)).unwrap();
    rejects(
        &[s1, &rebuilt, s3],
        &[
            &name(&rebuilt),
            "written by gputraffic 0.0.9 (0123456789ab)",
        ],
    );
    // An incomplete shard: its last row lost, or torn in the middle; an edited row.
    let lines: Vec<&str> = t.split_inclusive('\n').collect();
    assert_eq!(lines.len(), 4, "shard line, header, configs 1 and 4");
    let cut = dir.join("cut.csv");
    std::fs::write(&cut, lines[..3].concat()).unwrap();
    rejects(
        &[s1, &cut, s3],
        &[
            &name(&cut),
            "shard 2/3 is incomplete: 1 of its 2 configurations are missing (config 4)",
            "--resume",
        ],
    );
    std::fs::write(&cut, format!("{}{}", lines[..3].concat(), &lines[3][..40])).unwrap();
    rejects(
        &[s1, &cut, s3],
        &[
            &name(&cut),
            "1 of its 2 configurations are missing (config 4)",
        ],
    );
    std::fs::write(&cut, lines[..2].concat()).unwrap();
    rejects(
        &[s1, &cut, s3],
        &["2 of its 2 configurations are missing (configs 1 and 4)"],
    );
    std::fs::write(&cut, [lines[0], lines[1], lines[2], lines[2]].concat()).unwrap();
    rejects(
        &[s1, &cut, s3],
        &[&name(&cut), "line 4: config 1 appears twice"],
    );
    let s1_text = std::fs::read_to_string(s1).unwrap();
    let foreign_row = s1_text.lines().nth(2).unwrap();
    std::fs::write(&cut, format!("{}{foreign_row}\n", lines[..3].concat())).unwrap();
    rejects(
        &[s1, &cut, s3],
        &[&name(&cut), "line 4: config 0 is not in shard 2/3"],
    );
    // The output's name must ask for the shards' format; an existing --out needs --force.
    let jsonl = dir.join("merged.jsonl");
    common::rejects(
        &[
            "merge",
            "--out",
            jsonl.to_str().unwrap(),
            s1.to_str().unwrap(),
            s2.to_str().unwrap(),
            s3.to_str().unwrap(),
        ],
        &["merged.jsonl", "the shards are CSV"],
    );
    assert!(!jsonl.exists());
    assert_eq!(merge(&out, &[s1, s2, s3]).0, 0);
    std::fs::write(&out, "keep me").unwrap();
    rejects_keeping(&out, &[s1, s2, s3]);
    let (code, _, err) = gputraffic(&[
        "merge",
        "--force",
        "--out",
        o,
        s1.to_str().unwrap(),
        s2.to_str().unwrap(),
        s3.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        std::fs::read_to_string(&whole).unwrap()
    );
}

/// `merge` onto an existing file without --force: exit 2, the file untouched.
fn rejects_keeping(out: &Path, files: &[&Path]) {
    let mut args = vec!["merge", "--out", out.to_str().unwrap()];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    common::rejects(&args, &["exists", "--force"]);
    assert_eq!(std::fs::read_to_string(out).unwrap(), "keep me");
}

#[test]
fn a_shard_resumes_after_preemption_and_bad_shards_are_refused() {
    let dir = scratch("shard-resume");
    let f = dir.join("s2.jsonl");
    assert_eq!(tiny(&f, &["--shard", "2/3"]).0, 0);
    let finished = std::fs::read_to_string(&f).unwrap();
    // Preempted after its first row, the second half written: resume keeps one, runs one.
    let lines: Vec<&str> = finished.split_inclusive('\n').collect();
    assert_eq!(lines.len(), 3, "shard line, configs 1 and 4");
    std::fs::write(&f, format!("{}{}", lines[..2].concat(), &lines[2][..30])).unwrap();
    let (code, _, err) = tiny(&f, &["--shard", "2/3", "--resume"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("s2.jsonl: shard 2/3, 2 of the sweep's 6 configurations (1 kept from before, 1 simulated)"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&f).unwrap(), finished);
    // A finished shard resumes to itself, simulating nothing.
    let (code, _, err) = tiny(&f, &["--shard", "2/3", "--resume"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("(2 kept from before, 0 simulated)"), "{err}");
    assert_eq!(std::fs::read_to_string(&f).unwrap(), finished);
    // Resuming it as another shard, unsharded, or a plain sweep file as a shard: refused, kept.
    let o = f.to_str().unwrap();
    let resume = |extra: &[&str], expected: &[&str]| {
        let mut args: Vec<&str> = TINY.to_vec();
        args.extend(["--out", o, "--resume"]);
        args.extend(extra);
        common::rejects(&args, expected);
        assert_eq!(std::fs::read_to_string(&f).unwrap(), finished);
    };
    resume(
        &["--shard", "3/3"],
        &["s2.jsonl", "it is shard 2/3 of this sweep, not 3/3"],
    );
    resume(
        &[],
        &[
            "s2.jsonl",
            "it is shard 2/3 of a sweep: resume it with --shard 2/3",
        ],
    );
    resume(
        &["--shard", "2/4"],
        &["s2.jsonl", "it is shard 2/3 of this sweep, not 2/4"],
    );
    let whole = dir.join("whole.jsonl");
    assert_eq!(tiny(&whole, &[]).0, 0);
    let mut args: Vec<&str> = TINY.to_vec();
    args.extend([
        "--out",
        whole.to_str().unwrap(),
        "--resume",
        "--shard",
        "1/2",
    ]);
    common::rejects(&args, &["whole.jsonl", "no shard line", "different sweep"]);
    // Bad K/N: one line naming --shard, nothing written.
    let none = dir.join("none.csv");
    for (bad, expected) in [
        ("0/3", "K counts from 1"),
        ("4/3", "K is larger than N"),
        ("1/0", "N must be at least 1"),
        ("3", "is not K/N"),
        ("a/3", "is not K/N"),
        ("-1/3", "is not K/N"),
    ] {
        let mut args: Vec<&str> = TINY.to_vec();
        let shard = format!("--shard={bad}");
        args.extend(["--out", none.to_str().unwrap(), &shard]);
        common::rejects(&args, &["--shard", expected]);
        assert!(!none.exists(), "{bad} left a file");
    }
}

#[test]
fn the_fingerprint_names_the_plan_not_the_paths() {
    use gputraffic::analysis::sweep::{Sweep, SweepSpec};
    let root = env!("CARGO_MANIFEST_DIR");
    let spec = |kernel: &str, hw: &str, domains: &str| SweepSpec {
        kernel: gputraffic::request::KernelSource::Load(kernel.into()),
        hws: vec![hw.into()],
        blocks: vec!["32x4x1,16x8x1".into()],
        domains: vec![domains.into()],
        sets: vec![],
        l1_scales: vec![],
        l2_scales: vec![],
        models: gputraffic::models::select(&["su2015".to_string()]).unwrap(),
        clock: "boost".into(),
        sample: None,
    };
    let fingerprint = |s: SweepSpec| Sweep::plan(&s).unwrap().fingerprint();
    let by_name = fingerprint(spec("star1", "h200", "64x64x32,128x32x32"));
    assert_eq!(by_name.len(), 16);
    assert!(by_name.chars().all(|c| c.is_ascii_hexdigit()));
    // The same plan from files given by path.
    let by_path = fingerprint(spec(
        &format!("{root}/traces/star1.toml"),
        &format!("{root}/hw-configs/h200.toml"),
        "64x64x32,128x32x32",
    ));
    assert_eq!(by_path, by_name);
    // Another domain order, another GPU: another sweep.
    assert_ne!(
        fingerprint(spec("star1", "h200", "128x32x32,64x64x32")),
        by_name
    );
    assert_ne!(
        fingerprint(spec("star1", "h100-sxm", "64x64x32,128x32x32")),
        by_name
    );
}

#[test]
fn a_sampled_sweep_marks_its_rows_and_its_intervals_hold_the_exact_counts() {
    use gputraffic::analysis::sweep::{Sweep, SweepSpec};
    use gputraffic::metrics::{DRAM_READ, L2_READ, SAMPLED, ci95_columns};
    // The cut-down GPU of tests/sampling.rs: launches with hundreds of waves that run in seconds.
    let hw = format!(
        "{}/tests/data/hw/sampling-small.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let spec = |sample| SweepSpec {
        kernel: gputraffic::request::KernelSource::Load("star1".into()),
        hws: vec![hw.clone()],
        blocks: vec!["32x8x4".into()],
        domains: vec!["128x128x192,128x128x256".into()],
        sets: vec![],
        l1_scales: vec![],
        l2_scales: vec![],
        models: vec![],
        clock: "boost".into(),
        sample,
    };
    let rows = |s: SweepSpec| Sweep::plan(&s).unwrap().records(&|_, _| {}).unwrap();
    let exact = rows(spec(None));
    let sampled = rows(spec(Some(Default::default())));
    assert_eq!(exact.len(), 2);
    assert!(exact[0].get(SAMPLED).is_none());
    let count = |row: &serde_json::Value, column: &str| row[column].as_u64().unwrap();
    for (e, s) in exact.iter().zip(&sampled) {
        assert_eq!(s[SAMPLED], serde_json::Value::Bool(true));
        assert_eq!(e["param_nz"], s["param_nz"]);
        for metric in [L2_READ, DRAM_READ] {
            let [lo, hi] = ci95_columns(metric).map(|c| count(s, &c));
            let (exact, estimate) = (count(e, metric), count(s, metric));
            assert!(
                lo <= estimate && estimate <= hi,
                "{metric}: {lo} {estimate} {hi}"
            );
            assert!(
                lo <= exact && exact <= hi,
                "{metric}: exact {exact} outside {lo}..{hi}"
            );
            assert_ne!(
                exact, estimate,
                "{metric}: a sampled count equal to the exact one"
            );
        }
    }
}
