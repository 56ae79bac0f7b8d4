//! End-to-end test of a set of figures (`reproduce ID,ID,...`, as `reproduce all` runs every
//! figure): killed halfway with its whole process group, then resumed as a whole, it finishes
//! without running a finished point again, and ends with the report against the committed runs.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tempfile::TempDir;

const BIN: &str = env!("CARGO_BIN_EXE_stealbench");

/// The committed runs, the reference of the time model and of the report.
fn reference() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("paper-figures/runs")
}

/// The points of `raw.csv` (as `RUNTIME WORKLOAD-VARIANT P=N`) with `reps` repetitions
/// recorded; a last line cut short counts for nothing.
fn finished_points(raw: &Path, reps: usize) -> BTreeSet<String> {
    let text = fs::read_to_string(raw).unwrap_or_default();
    let complete = text.rfind('\n').map_or("", |i| &text[..=i]);
    let mut count: std::collections::BTreeMap<String, usize> = Default::default();
    for line in complete.lines().skip(1) {
        let c: Vec<&str> = line.splitn(5, ',').collect();
        if c.len() == 5 {
            *count
                .entry(format!("{} {}-{} P={}", c[0], c[1], c[2], c[3]))
                .or_default() += 1;
        }
    }
    count
        .into_iter()
        .filter(|(_, n)| *n >= reps)
        .map(|(p, _)| p)
        .collect()
}

/// The one run directory of `figure` under `results`.
fn run_dir(results: &Path, figure: &str) -> Option<PathBuf> {
    fs::read_dir(results.join(figure))
        .ok()?
        .filter_map(|e| Some(e.ok()?.path()))
        .next()
}

/// The points a `reproduce`'s progress lines say it ran (`[i/N] POINT: ok, ...`).
fn ran(progress: &str) -> Vec<String> {
    progress
        .lines()
        .filter(|l| l.starts_with('['))
        .filter_map(|l| Some(l.split_once("] ")?.1.split_once(": ")?.0.to_string()))
        .collect()
}

#[test]
fn a_set_killed_halfway_resumes_without_running_a_finished_point_again() {
    let dir = TempDir::with_prefix("stealbench-sets-").unwrap();
    let reference = reference();
    let args = [
        "reproduce",
        "prows-fig3,prows-fig4",
        "--size",
        "test",
        "--workers",
        "1",
        "--rounds",
        "1",
        "--runtimes",
        "abp",
        "--out",
        "r",
        "--figures-dir",
        "f",
        "--reference",
        reference.to_str().unwrap(),
    ];
    let mut first = Command::new(BIN);
    first
        .args(args)
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    std::os::unix::process::CommandExt::process_group(&mut first, 0);
    let mut child = first.spawn().unwrap();
    // Kill the whole group (the set and its point's process) halfway: the first figure
    // finished (2 points), the second (9 points, 3 repetitions each) with 2 points recorded.
    let deadline = Instant::now() + Duration::from_secs(120);
    let results = dir.path().join("r");
    let raw = loop {
        if let Some(d) = run_dir(&results, "prows-fig4")
            && finished_points(&d.join("raw.csv"), 3).len() >= 2
        {
            break d.join("raw.csv");
        }
        assert!(
            Instant::now() < deadline,
            "no 2 points of prows-fig4 recorded in 120 s"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "the set ended before it was killed"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    let group = format!("-{}", child.id());
    assert!(
        Command::new("kill")
            .args(["-9", "--", &group])
            .status()
            .unwrap()
            .success()
    );
    child.wait().unwrap();
    let before = finished_points(&raw, 3);
    assert!((2..9).contains(&before.len()), "{before:?}");

    let out = Command::new(BIN)
        .args([
            "reproduce",
            "prows-fig3,prows-fig4",
            "--resume",
            "--out",
            "r",
        ])
        .arg("--reference")
        .arg(&reference)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("resuming the set started"), "{stdout}");
    assert!(stdout.contains("prows-fig3: done"), "{stdout}");
    let again: Vec<String> = ran(&stderr)
        .into_iter()
        .filter(|p| before.contains(p))
        .collect();
    assert!(again.is_empty(), "ran again: {again:?}\n{stderr}");
    assert!(
        stderr.contains(&format!("{} points already recorded", before.len())),
        "{stderr}"
    );
    // Every point of both figures is recorded once, and both runs are finished.
    for fig in ["prows-fig3", "prows-fig4"] {
        let d = run_dir(&results, fig).expect("a run of each figure");
        assert_eq!(
            fs::read_dir(results.join(fig)).unwrap().count(),
            1,
            "{fig}: one run"
        );
        let meta = fs::read_to_string(d.join("meta.json")).unwrap();
        assert!(meta.contains("\"finished\": true"), "{fig}: {meta}");
        let mut reader = csv::Reader::from_path(d.join("raw.csv")).unwrap();
        let header = reader.headers().unwrap().clone();
        let col = |name: &str| header.iter().position(|h| h == name).unwrap();
        let key = ["runtime", "workload", "variant", "workers", "round", "rep"].map(col);
        let mut rows = BTreeSet::new();
        for r in reader.records() {
            let r = r.unwrap();
            let k: Vec<&str> = key.iter().map(|&i| &r[i]).collect();
            assert!(rows.insert(k.join(" ")), "{fig}: a repetition twice: {k:?}");
        }
    }
    // The set ends with the report, set beside the committed runs: three columns per claim,
    // and the verdicts that a run of one round at the test size cannot share with the
    // reference's are marked.
    let readme = fs::read_to_string(dir.path().join("f/README.md")).unwrap();
    assert!(
        readme.contains("| claim | paper | reference machine | this machine |"),
        "{readme}"
    );
    assert!(readme.contains("**differs**"), "{readme}");
    assert!(
        readme.contains("sizes differ (test here, quick on the reference)"),
        "{readme}"
    );
    assert!(
        fs::read_to_string(dir.path().join("f/report.html"))
            .unwrap()
            .contains("id=\"against\"")
    );
}
