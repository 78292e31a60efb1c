//! The JSON Schemas in `schemas/` against what they describe: every shipped trace and GPU
//! configuration, and real `simulate`, `validate` and `rank` outputs, validate; wrong documents do not;
//! and the trace and config schemas refuse a misspelt key wherever the parser refuses it.

mod common;
use common::gputraffic;
use serde_json::{Value, json};
use std::path::Path;

/// The published schemas, with the relative `$ref`s between them resolved offline.
const SCHEMAS: [&str; 6] = ["trace", "hw-config", "time", "simulate", "validate", "rank"];

/// The URI a schema file stands under in the tests' registry (its `$ref`s are relative to it).
fn uri(name: &str) -> String {
    format!("file:///gputraffic/schemas/{name}.schema.json")
}

fn schema_json(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("schemas/{name}.schema.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

/// A validator for the schema `name`, its references to the other schema files resolved.
fn validator(name: &str) -> jsonschema::Validator {
    let mut registry = jsonschema::Registry::new();
    for other in SCHEMAS {
        registry = registry.add(uri(other), schema_json(other)).unwrap();
    }
    let registry = registry.prepare().unwrap();
    jsonschema::options()
        .with_registry(&registry)
        .with_base_uri(uri(name))
        .build(&schema_json(name))
        .unwrap_or_else(|e| panic!("schemas/{name}.schema.json: {e}"))
}

/// The schema's complaints about `doc`, one line each (empty when it validates).
fn errors(v: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    v.iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

fn assert_valid(v: &jsonschema::Validator, doc: &Value, what: &str) {
    let errors = errors(v, doc);
    assert!(errors.is_empty(), "{what}:\n{}", errors.join("\n"));
}

fn assert_invalid(v: &jsonschema::Validator, doc: &Value, what: &str) {
    assert!(!v.is_valid(doc), "{what} validates but should not");
}

/// A TOML file as the JSON the schemas describe.
fn toml_as_json(path: &Path) -> (String, Value) {
    let text = std::fs::read_to_string(path).unwrap();
    let v: Value = toml::from_str(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    (text, v)
}

/// The `.toml` files of a folder of the repository, sorted.
fn toml_files(folder: &str) -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(folder);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_schema_is_a_valid_draft_2020_12_schema() {
    for name in SCHEMAS {
        let schema = schema_json(name);
        assert_eq!(
            schema["$schema"], "https://json-schema.org/draft/2020-12/schema",
            "{name}"
        );
        if let Err(e) = jsonschema::meta::validate(&schema) {
            panic!("schemas/{name}.schema.json is no valid schema: {e}");
        }
        validator(name);
    }
}

#[test]
fn every_shipped_trace_and_gpu_configuration_validates() {
    let trace = validator("trace");
    let traces = toml_files("traces");
    assert!(traces.len() >= 30, "{traces:?}");
    for path in &traces {
        let (_, doc) = toml_as_json(path);
        assert_valid(&trace, &doc, &path.display().to_string());
    }
    let hw = validator("hw-config");
    let configs: Vec<_> = toml_files("hw-configs")
        .into_iter()
        .chain(toml_files("tests/data/hw"))
        .collect();
    assert!(configs.len() >= 10, "{configs:?}");
    for path in &configs {
        let (_, doc) = toml_as_json(path);
        assert_valid(&hw, &doc, &path.display().to_string());
    }
}

/// Every object key at any depth of `doc`, as the path of keys and array indices leading to it.
fn key_paths(doc: &Value, path: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
    match doc {
        Value::Object(map) => {
            for (k, v) in map {
                path.push(Value::String(k.clone()));
                out.push(path.clone());
                key_paths(v, path, out);
                path.pop();
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                path.push(json!(i));
                key_paths(v, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

/// `doc` with the key at `path` spelt `misspelt` instead.
fn with_key_renamed(doc: &Value, path: &[Value], misspelt: &str) -> Value {
    let mut doc = doc.clone();
    let (last, parents) = path.split_last().unwrap();
    let mut at = &mut doc;
    for step in parents {
        at = match step {
            Value::String(k) => &mut at[k.as_str()],
            Value::Number(i) => &mut at[i.as_u64().unwrap() as usize],
            _ => unreachable!(),
        };
    }
    let map = at.as_object_mut().unwrap();
    let value = map.remove(last.as_str().unwrap()).unwrap();
    map.insert(misspelt.to_string(), value);
    doc
}

/// For every key of every file, a misspelling (a letter doubled at its end) that both the
/// parser `parse` and the schema refuse, except in the tables whose keys are names the file
/// chooses (`params`): there the schema accepts any name (the parser then finds the expressions
/// naming the old one). Returns how many misspellings were tried.
fn misspellings_are_refused_alike(
    schema: &jsonschema::Validator,
    files: &[std::path::PathBuf],
    parse: &dyn Fn(&str, &str) -> bool,
    free_tables: &[&str],
) -> usize {
    let mut tried = 0;
    for path in files {
        let (_, doc) = toml_as_json(path);
        let mut paths = Vec::new();
        key_paths(&doc, &mut Vec::new(), &mut paths);
        for p in paths {
            let key = p.last().unwrap().as_str().unwrap();
            let misspelt = format!("{key}{}", key.chars().last().unwrap());
            let wrong = with_key_renamed(&doc, &p, &misspelt);
            let text = toml::to_string(&wrong).unwrap();
            let name = format!("{} with {p:?} spelt {misspelt}", path.display());
            let free = p.len() == 2 && free_tables.contains(&p[0].as_str().unwrap());
            assert_eq!(schema.is_valid(&wrong), free, "the schema on {name}");
            if !free {
                assert!(!parse(&text, &name), "the parser accepts {name}");
            }
            tried += 1;
        }
    }
    tried
}

#[test]
fn a_misspelt_key_in_a_trace_or_configuration_fails_the_schema_as_it_fails_the_parser() {
    // Every key of a few traces that between them hold every kind of step and table.
    let traces: Vec<_> = [
        "star1",
        "star1-zloop",
        "histogram",
        "transpose-tiled",
        "jacobi2d-shared",
        "ernst-13pt-r2",
    ]
    .iter()
    .map(|n| Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("traces/{n}.toml")))
    .collect();
    let parse_trace =
        |text: &str, name: &str| gputraffic::input::trace::Kernel::parse(text, name).is_ok();
    let tried =
        misspellings_are_refused_alike(&validator("trace"), &traces, &parse_trace, &["params"]);
    assert!(tried > 200, "{tried}");
    // Every key of two configurations: one split L2 with everything set, one Kepler.
    let configs: Vec<_> = ["h200", "k20"]
        .iter()
        .map(|n| Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("hw-configs/{n}.toml")))
        .collect();
    let parse_hw =
        |text: &str, name: &str| gputraffic::input::hw::HwConfig::parse(text, name).is_ok();
    let tried = misspellings_are_refused_alike(&validator("hw-config"), &configs, &parse_hw, &[]);
    assert!(tried > 80, "{tried}");
}

#[test]
fn wrong_traces_and_configurations_fail() {
    let trace = validator("trace");
    let (_, star1) = toml_as_json(Path::new("traces/star1.toml"));
    let mut no_body = star1.clone();
    no_body["thread"].as_object_mut().unwrap().remove("body");
    assert_invalid(&trace, &no_body, "a trace without a body");
    let mut two_kinds = star1.clone();
    two_kinds["thread"]["body"][0]["store"] = json!("out");
    assert_invalid(&trace, &two_kinds, "a step both load and store");
    let mut two_sizes = star1.clone();
    two_sizes["launch"]["block"] = json!([32, 8]);
    assert_invalid(&trace, &two_sizes, "a block of two sizes");
    let mut unsynced = star1.clone();
    unsynced["thread"]["body"][0] = json!({ "sync": false });
    assert_invalid(&trace, &unsynced, "sync = false");
    let mut numeric_dims = star1;
    numeric_dims["arrays"][0]["dims"] = json!([64, 64, 64]);
    assert_invalid(&trace, &numeric_dims, "dims as numbers, not expressions");

    let hw = validator("hw-config");
    let (_, h200) = toml_as_json(Path::new("hw-configs/h200.toml"));
    let mut policy = h200.clone();
    policy["l2"]["replacement"] = json!("least-recent");
    assert_invalid(&hw, &policy, "an unknown replacement policy");
    let mut three = h200.clone();
    three["l2"]["partitions"] = json!(3);
    assert_invalid(&hw, &three, "three L2 partitions");
    let mut both_hashes = h200.clone();
    both_hashes["l2"]["home_hash"]["low_bit"] = json!(7);
    assert_invalid(&hw, &both_hashes, "home_hash both listed and a run");
    let mut no_sms = h200;
    no_sms["sm"].as_object_mut().unwrap().remove("count");
    assert_invalid(&hw, &no_sms, "no SM count");
}

/// Whether a simulate output shows what a case is for.
type Shows = dyn Fn(&Value) -> bool;

/// `simulate --format json` with `extra` arguments, parsed.
fn simulate_json(extra: &[&str]) -> Value {
    let args = [&["simulate", "--format", "json", "--threads", "2"], extra].concat();
    let (code, out, err) = gputraffic(&args);
    assert_eq!(code, 0, "{args:?}: {err}");
    serde_json::from_str(&out).unwrap()
}

#[test]
fn simulate_outputs_validate() {
    let schema = validator("simulate");
    let star1 = simulate_json(&["--kernel", "star1", "--domain", "64x48x40"]);
    assert_valid(&schema, &star1, "star1");
    let cases: [(&str, &[&str], &Shows); 6] = [
        ("atomics", &["--kernel", "histogram"], &|v| {
            v["metrics"]["lts__t_sectors_srcunit_tex_op_red.sum"].as_u64() > Some(0)
        }),
        (
            "shared memory",
            &["--kernel", "transpose-tiled", "--domain", "256x256"],
            &|v| v["metrics"]["smsp__inst_executed_op_shared_ld.sum"].as_u64() > Some(0),
        ),
        (
            "--sample",
            &[
                "--kernel",
                "star1",
                "--hw",
                "tests/data/hw/sampling-small.toml",
                "--domain",
                "128x128x256",
                "--block",
                "32x8x4",
                "--sample",
            ],
            &|v| v["simulation"]["sampled"] == true && v["metrics_ci95"].is_object(),
        ),
        (
            "--compare",
            &[
                "--kernel",
                "star1",
                "--domain",
                "64x48x40",
                "--compare",
                "su2015",
                "--hw",
                "k20",
            ],
            &|v| v["compare"]["model"] == "su2015" && v["compare"]["volumes"].is_array(),
        ),
        (
            "--no-compulsory",
            &[
                "--kernel",
                "star1-zloop",
                "--domain",
                "64x48x40",
                "--no-compulsory",
            ],
            &|v| v["compulsory"]["dram_to_l2_read_sectors"].is_null(),
        ),
        (
            "--by-array",
            &["--kernel", "histogram", "--by-array"],
            &|v| {
                v["by_array"]["arrays"].as_array().map(Vec::len) == Some(3)
                    && v["by_array"]["accesses"]
                        .as_array()
                        .is_some_and(|a| !a.is_empty())
            },
        ),
    ];
    for (what, args, shows_it) in cases {
        let v = simulate_json(args);
        assert!(
            shows_it(&v),
            "{what}: the output lacks what the case is for: {v:#}"
        );
        assert_valid(&schema, &v, what);
    }

    // The metrics take a further ncu-named counter; a by_array of another shape fails.
    let mut more = star1.clone();
    more["metrics"]["l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum"] = json!(0);
    assert_valid(&schema, &more, "star1 with a further counter");
    let mut odd = star1.clone();
    odd["by_array"] = json!({ "in": {}, "out": {} });
    assert_invalid(&schema, &odd, "a by_array without arrays and accesses");

    // Wrong documents fail.
    let mut missing = star1.clone();
    missing.as_object_mut().unwrap().remove("metrics");
    assert_invalid(&schema, &missing, "no metrics");
    let mut misspelt = star1.clone();
    let v = misspelt
        .as_object_mut()
        .unwrap()
        .remove("hit_rates")
        .unwrap();
    misspelt["hit_rate"] = v;
    assert_invalid(&schema, &misspelt, "hit_rates misspelt");
    let mut no_ncu_name = star1.clone();
    no_ncu_name["metrics"]["dram_reads"] = json!(5);
    assert_invalid(
        &schema,
        &no_ncu_name,
        "a metric not named as ncu names them",
    );
    let mut negative = star1.clone();
    negative["metrics"]["dram__sectors_read.sum"] = json!(-1);
    assert_invalid(&schema, &negative, "a negative count");
    let mut fraction = star1.clone();
    fraction["metrics"]["dram__sectors_read.sum"] = json!(1.5);
    assert_invalid(&schema, &fraction, "a fractional count");
    let mut rate = star1.clone();
    rate["hit_rates"]["l1_load"] = json!(1.2);
    assert_invalid(&schema, &rate, "a hit rate above 1");
    let mut limiter = star1.clone();
    limiter["time"]["limiter"] = json!("pcie");
    assert_invalid(&schema, &limiter, "an unknown limiter");
    let mut limiter_time = star1;
    limiter_time["time"]["tlb_s"] = json!(1e-6);
    assert_invalid(&schema, &limiter_time, "a time of an unknown limiter");
}

#[test]
fn a_validate_output_validates() {
    let (code, out, err) = gputraffic(&[
        "validate",
        "--measured",
        "tests/data/h100/small_ncu.csv",
        "--manifest",
        "tests/data/h100/small_manifest.toml",
        "--hw",
        "h100-sxm",
        "--format",
        "json",
        "--threads",
        "2",
    ]);
    assert_eq!(code, 0, "{err}");
    let report: Value = serde_json::from_str(&out).unwrap();
    let schema = validator("validate");
    assert!(!report["groups"].as_array().unwrap().is_empty());
    assert!(report["rows"][0]["time"].is_object());
    assert_valid(
        &schema,
        &report,
        "validate of tests/data/h100/small_ncu.csv",
    );

    let mut groups_in_kernels = report.clone();
    let first = groups_in_kernels["kernels"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    groups_in_kernels["kernels"][&first]["dram__sectors_read.sum"]["spearman_groups"] = json!({});
    assert_invalid(
        &schema,
        &groups_in_kernels,
        "spearman_groups in a kernel's statistics",
    );
    let mut no_pair = report.clone();
    no_pair["rows"][0]["metrics"]["dram__sectors_read.sum"]
        .as_object_mut()
        .unwrap()
        .remove("simulated");
    assert_invalid(&schema, &no_pair, "a pair without its simulated value");
    let mut efficiency = report.clone();
    efficiency["groups"][0]["pick_efficiency"] = json!(1.5);
    assert_invalid(&schema, &efficiency, "a pick efficiency above 1");
    let mut launches = report;
    launches["launches"] = json!("six");
    assert_invalid(&schema, &launches, "launches as a string");
}

/// The names the schemas offer for a configuration's enumerated keys, each accepted by the
/// parser in the shipped H200 configuration.
#[test]
fn the_config_schemas_names_are_the_parsers() {
    let schema = schema_json("hw-config");
    let (text, _) = toml_as_json(Path::new("hw-configs/h200.toml"));
    let names = |pointer: &str| -> Vec<String> {
        schema
            .pointer(pointer)
            .and_then(|e| e.as_array())
            .unwrap_or_else(|| panic!("{pointer}"))
            .iter()
            .map(|n| n.as_str().unwrap().to_string())
            .collect()
    };
    let cases = [
        ("l2", "replacement", "/$defs/replacement/enum"),
        ("l1", "replacement", "/$defs/replacement/enum"),
        (
            "l2",
            "set_indexing",
            "/properties/l2/properties/set_indexing/enum",
        ),
        (
            "l1",
            "set_indexing",
            "/properties/l1/properties/set_indexing/enum",
        ),
        (
            "schedule",
            "warp_issue",
            "/properties/schedule/properties/warp_issue/enum",
        ),
    ];
    for (table, key, pointer) in cases {
        let offered = names(pointer);
        assert!(offered.len() >= 2, "{pointer}");
        for name in offered {
            let mut doc: toml::Table = toml::from_str(&text).unwrap();
            let t = doc[table].as_table_mut().unwrap();
            t.insert(key.to_string(), toml::Value::String(name.clone()));
            // The shipped L2's dirty budget needs LRU; the other policies go without it.
            if (table, key) == ("l2", "replacement") && name != "lru" {
                t.remove("dirty_ways");
            }
            let changed = toml::to_string(&doc).unwrap();
            if let Err(e) = gputraffic::input::hw::HwConfig::parse(&changed, "h200") {
                panic!("{table}.{key} = \"{name}\" is in the schema, but: {e}");
            }
        }
    }
}

/// Every key the trace and configuration schemas describe is in their docs' tables.
#[test]
fn the_docs_list_every_key_of_the_schemas() {
    fn keys(schema: &Value, out: &mut Vec<String>) {
        match schema {
            Value::Object(map) => {
                if let Some(Value::Object(props)) = map.get("properties") {
                    out.extend(props.keys().cloned());
                }
                map.values().for_each(|v| keys(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| keys(v, out)),
            _ => {}
        }
    }
    for (name, doc) in [
        ("hw-config", "docs/hw-config.md"),
        ("trace", "docs/trace-format.md"),
    ] {
        let text = std::fs::read_to_string(doc).unwrap();
        let mut all = Vec::new();
        keys(&schema_json(name), &mut all);
        assert!(all.len() > 20, "{name}");
        for key in all {
            assert!(
                text.contains(&format!("`{key}`"))
                    || text.contains(&format!("`[{key}]`"))
                    || text.contains(&format!("`[[{key}]]`")),
                "{doc} does not list {name}'s key {key}"
            );
        }
    }
}

/// `rank --format json` with `extra` arguments, parsed.
fn rank_json(extra: &[&str]) -> Value {
    let args = [&["rank", "--format", "json", "--threads", "2"], extra].concat();
    let (code, out, err) = gputraffic(&args);
    assert_eq!(code, 0, "{args:?}: {err}");
    serde_json::from_str(&out).unwrap()
}

#[test]
fn rank_outputs_validate() {
    let schema = validator("rank");
    // short launches: every shape exact
    let exact = rank_json(&[
        "--kernel",
        "star1",
        "--domain",
        "64x48x40",
        "--blocks",
        "32x4x2,256x1x1,1024x1x1",
    ]);
    assert_eq!(exact["mode"], "screen");
    assert_eq!(exact["shapes"][0]["rank"], 1);
    assert_valid(&schema, &exact, "star1, exact shapes");
    // the race: screened shapes with their intervals, a bounded one; and --sample
    let race = [
        "--kernel",
        "star4",
        "--hw",
        "tests/data/hw/sampling-small.toml",
        "--domain",
        "128x128x256",
        "--blocks",
        "32x8x4,8x8x16,256x1x4",
    ];
    // Nine shapes and more: the first round of screens (8, by their bounds) sets the leader,
    // and the 1-wide shape's bound is far above it.
    let nine = "32x8x4,8x8x16,256x1x4,16x16x4,64x4x4,32x4x8,128x2x4,16x4x16,1x32x32";
    let race_of_nine = [&race[..race.len() - 1], &[nine]].concat();
    let screened = rank_json(&race_of_nine);
    let simulated: Vec<&str> = (screened["shapes"].as_array().unwrap().iter())
        .map(|s| s["simulated"].as_str().unwrap())
        .collect();
    assert!(simulated.contains(&"screened"), "{simulated:?}");
    // 1-wide, far slower: dropped by its bound, without an upper end; 8-wide, slower: dropped
    // by its pre-screen
    assert!(simulated.contains(&"bounded"), "{simulated:?}");
    assert!(simulated.contains(&"prescreened"), "{simulated:?}");
    assert_valid(&schema, &screened, "star4, screened");
    let sampled = rank_json(&[&race[..], &["--sample"]].concat());
    assert_eq!(sampled["mode"], "sampled");
    assert_valid(&schema, &sampled, "star4, --sample");
    // wrong documents
    let mut wrong = exact.clone();
    wrong["shapes"][0]["rank"] = json!(0);
    assert_invalid(&schema, &wrong, "rank 0");
    let mut wrong = exact.clone();
    wrong["clock"] = json!("turbo");
    assert_invalid(&schema, &wrong, "an unknown clock");
    let mut wrong = exact.clone();
    wrong["shapes"][0]["latency_us"] = json!(1.0);
    assert_invalid(&schema, &wrong, "an unknown key");
    let mut wrong = exact;
    wrong.as_object_mut().unwrap().remove("shapes");
    assert_invalid(&schema, &wrong, "no shapes");
}
