//! Embeds every shipped kernel trace (`traces/*.toml`) and hardware config (`hw-configs/*.toml`)
//! in the binary, so adding a file there is all it takes to ship it; and records the git commit
//! and the shipped GPUs for `--version`.

use std::fmt::Write;
use std::path::Path;

/// The stems of the `.toml` files of `dir`, sorted.
fn stems(dir: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {dir}: {e}"))
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter_map(|n| n.strip_suffix(".toml").map(str::to_string))
        .collect();
    names.sort();
    names
}

/// The commit the binary is built from (`unknown` outside a git checkout), `+` when the working
/// tree has changes.
fn git_commit() -> String {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(commit) => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            format!("{commit}{}", if dirty { "+" } else { "" })
        }
        None => "unknown".to_string(),
    }
}

fn embed(dir: &str, out_name: &str) {
    println!("cargo:rerun-if-changed={dir}");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {dir}: {e}"))
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    names.sort();
    let root = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let mut code = String::from("&[\n");
    for n in &names {
        println!("cargo:rerun-if-changed={dir}/{n}");
        let stem = n.trim_end_matches(".toml");
        let path = Path::new(&root).join(dir).join(n);
        writeln!(
            code,
            "    ({stem:?}, include_str!({:?})),",
            path.display().to_string()
        )
        .expect("writing to a String");
    }
    code.push(']');
    let out = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join(out_name);
    std::fs::write(&out, code).unwrap_or_else(|e| panic!("writing {}: {e}", out.display()));
}

fn main() {
    embed("traces", "shipped_traces.rs");
    embed("hw-configs", "shipped_hw.rs");
    // Rebuild when the commit changes: HEAD and the branch refs, wherever git keeps them (a
    // worktree's `.git` is a file pointing elsewhere). A path that does not exist would make
    // cargo rerun this script on every build, so only existing ones are watched.
    for what in ["HEAD", "refs/heads", "packed-refs"] {
        let path = std::process::Command::new("git")
            .args(["rev-parse", "--git-path", what])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
        if let Some(p) = path.filter(|p| Path::new(p).exists()) {
            println!("cargo:rerun-if-changed={p}");
        }
    }
    println!("cargo:rustc-env=GPUTRAFFIC_GIT_COMMIT={}", git_commit());
    println!(
        "cargo:rustc-env=GPUTRAFFIC_SHIPPED_GPUS={}",
        stems("hw-configs").join(", ")
    );
}
