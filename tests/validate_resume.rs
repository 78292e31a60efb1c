//! No lost work in `validate`: an unwritable `--out` is refused before any simulation, every
//! finished launch is journalled beside `--out`, and an interrupted run continues with
//! `--resume` to the report an uninterrupted run writes, byte for byte.

mod common;
use common::{gputraffic, rejects, scratch};
use gputraffic::analysis::journal;
use gputraffic::analysis::measured;
use gputraffic::analysis::validate::{JournalOptions, ValidateFormat, validate_resumable};
use std::path::Path;
use std::sync::Mutex;

const HAND: &str = "tests/data/validate/hand.csv";

/// Validates `HAND` on the h200 on one worker thread with a journal at `journal`; `progress`
/// sees every (done, total).
fn run(
    journal: &Path,
    resume: bool,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> gputraffic::Result<gputraffic::analysis::validate::Validation> {
    let (launches, _) = measured::load(Path::new(HAND), None)?;
    let hw = gputraffic::input::hw::HwConfig::load("h200")?;
    let bound = gputraffic::analysis::validate::bind_all(&launches, &hw)?;
    let options = JournalOptions {
        path: journal,
        resume,
        replace: false,
    };
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(|| validate_resumable(launches, bound, &hw, HAND, None, Some(options), progress))
}

/// Leaves at `journal` the journal of a run stopped after its first launch: a copy of a run's
/// journal as it stood when that launch had finished.
fn interrupt_after_one_launch(journal: &Path) {
    let running = journal.with_extension("running");
    let snapshot = |done: usize, _: usize| {
        if done == 1 {
            std::fs::copy(&running, journal).unwrap();
        }
    };
    run(&running, false, &snapshot).unwrap();
    let text = std::fs::read_to_string(journal).expect("the snapshot of the journal");
    assert_eq!(text.lines().count(), 2, "a header and one launch: {text}");
}

#[test]
fn an_interrupted_validation_resumes_to_the_uninterrupted_report() {
    let dir = scratch("validate-resume-lib");
    let whole = run(&dir.join("whole.journal"), false, &|_, _| {}).unwrap();
    assert!(
        !dir.join("whole.journal").exists(),
        "a finished run removes its journal"
    );

    let journal = dir.join("cut.journal");
    interrupt_after_one_launch(&journal);
    let calls = Mutex::new(Vec::new());
    let resumed = run(&journal, true, &|done, total| {
        calls.lock().unwrap().push((done, total))
    })
    .unwrap();
    // The journalled launch is not simulated again: counting starts at 1 of 3.
    assert_eq!(*calls.lock().unwrap(), [(1, 3), (2, 3), (3, 3)]);
    assert!(!journal.exists());
    for format in [ValidateFormat::Json, ValidateFormat::Table] {
        assert_eq!(resumed.render(format), whole.render(format));
    }
}

#[test]
fn the_cli_resumes_refuses_to_discard_and_starts_over_on_request() {
    let dir = scratch("validate-resume-cli");
    let out = dir.join("v.json");
    let out_s = out.to_str().unwrap();
    let validate = |extra: &[&str]| {
        let mut args = vec![
            "validate",
            "--measured",
            HAND,
            "--hw",
            "h200",
            "--format",
            "json",
            "--out",
            out_s,
        ];
        args.extend_from_slice(extra);
        gputraffic(&args)
    };
    let (code, _, stderr) = validate(&[]);
    assert_eq!(code, 0, "{stderr}");
    let whole = std::fs::read_to_string(&out).unwrap();
    std::fs::remove_file(&out).unwrap();

    let journal = journal::path_for(&out);
    assert_eq!(journal, dir.join("v.json.journal"));
    interrupt_after_one_launch(&journal);
    // Killed while writing its second record: the cut line is dropped and that launch reruns.
    let mut cut = std::fs::read_to_string(&journal).unwrap();
    cut += "{\"i\": 1, \"launch\": \"cop";
    std::fs::write(&journal, &cut).unwrap();

    // A forgotten --resume does not throw the work away.
    rejects(
        &[
            "validate",
            "--measured",
            HAND,
            "--hw",
            "h200",
            "--out",
            out_s,
        ],
        &["v.json.journal", "1 launch(es) done", "--resume", "--force"],
    );
    assert!(!out.exists());
    // A journal of another run is refused.
    rejects(
        &[
            "validate",
            "--measured",
            HAND,
            "--hw",
            "h100-sxm",
            "--out",
            out_s,
            "--resume",
        ],
        &["v.json.journal", "belongs to another validation"],
    );
    let (code, _, stderr) = validate(&["--resume"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), whole);
    assert!(!journal.exists());

    // --force starts over and gives the same report.
    interrupt_after_one_launch(&journal);
    let (code, _, stderr) = validate(&["--force"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), whole);
    assert!(!journal.exists());
}

#[test]
fn an_unwritable_out_is_refused_before_any_work() {
    let dir = scratch("validate-unwritable");
    let file = dir.join("a-file");
    std::fs::write(&file, "not a folder").unwrap();
    let under_file = file.join("v.json");
    let under_file = under_file.to_str().unwrap();
    // The measured file does not even exist: the output is checked first.
    rejects(
        &[
            "validate",
            "--measured",
            "no/such.csv",
            "--hw",
            "h200",
            "--out",
            under_file,
        ],
        &["a-file/v.json", "cannot write there"],
    );
    rejects(
        &[
            "validate",
            "--measured",
            HAND,
            "--hw",
            "h200",
            "--out",
            dir.to_str().unwrap(),
        ],
        &["is a folder"],
    );
    for args in [
        vec![
            "fit", "--model", "gompertz", "--input", "no.csv", "--x", "a", "--y", "b", "--out",
            under_file,
        ],
        vec![
            "plot",
            "hit-rate",
            "--input",
            "no.csv",
            "--out",
            &format!("{under_file}.png"),
        ],
        vec!["merge", "--out", under_file, "no-shard.csv"],
        vec![
            "sweep", "--kernel", "copy", "--blocks", "32x1x1", "--out", under_file,
        ],
    ] {
        rejects(&args, &["a-file/v.json", "cannot write there"]);
    }
}
