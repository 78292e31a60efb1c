//! Launch lists in the form of `validation/launches*.txt` (`kernel nx ny nz bx by bz [cz]`, `#`
//! comments), read by the examples that run over them (`rank_agreement`, `sample_study`).

/// One launch of a list: the GPU it is run on and the launch as `LaunchSpec` takes it.
pub struct Listed {
    /// The GPU (`HW` of the `HW:FILE` argument).
    pub hw: String,
    /// The trace's name: the lists name the CUDA functions, the traces use dashes.
    pub kernel: String,
    /// `NXxNYxNZ`.
    pub domain: String,
    /// `BXxBYxBZ`.
    pub block: String,
    /// `cz=N` for star1-zloop, else nothing.
    pub set: Vec<String>,
}

/// The launches of the list at `path`, in file order, for the GPU `hw`.
pub fn read(hw: &str, path: &str) -> Vec<Listed> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        assert!(
            f.len() >= 7,
            "{path}: '{line}' is not `kernel nx ny nz bx by bz [cz]`"
        );
        let kernel = f[0].replace('_', "-");
        let set = match (kernel.as_str(), f.get(7)) {
            ("star1-zloop", Some(cz)) => vec![format!("cz={cz}")],
            _ => Vec::new(),
        };
        out.push(Listed {
            hw: hw.to_string(),
            kernel,
            domain: format!("{}x{}x{}", f[1], f[2], f[3]),
            block: format!("{}x{}x{}", f[4], f[5], f[6]),
            set,
        });
    }
    out
}
