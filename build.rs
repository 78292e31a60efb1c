//! Embeds every shipped kernel trace (`traces/*.toml`) and hardware config (`hw-configs/*.toml`)
//! in the binary, so adding a file there is all it takes to ship it.

use std::fmt::Write;
use std::path::Path;

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
}
