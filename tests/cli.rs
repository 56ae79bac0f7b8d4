//! End-to-end tests of the `stealbench` binary: bad input, a whole reproduction at the test
//! size, and resuming an interrupted run. Every output goes to a temporary directory.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_stealbench");

/// A fresh temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("stealbench-cli-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&p);
        fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn stealbench(args: &[&str], cwd: &Path) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("the binary runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn bad_input_is_one_line_and_exit_code_2() {
    let dir = TempDir::new("bad");
    let cases: &[(&[&str], &str)] = &[
        (&["reproduce", "prows-fig9"], "did you mean 'prows-fig"),
        (
            &["reproduce", "prows-fig3", "--size", "quik"],
            "did you mean 'quick'",
        ),
        (&["reproduce", "prows-fig3", "--workers", "0"], "at least 1"),
        (
            &["reproduce", "prows-fig3", "--runtimes", "rayn"],
            "did you mean 'rayon'",
        ),
        (
            &["reproduce", "prows-fig3", "--workloads", "fibb"],
            "did you mean 'fib'",
        ),
        (&["reproduce", "prows-fig3", "--rep", "2"], "'--reps'"),
        (
            &[
                "run",
                "--runtime",
                "serial",
                "--workload",
                "fib",
                "--variant",
                "fj",
                "--workers",
                "1",
                "--param",
                "m=3",
            ],
            "unknown parameter 'm' (parameters: n)",
        ),
        (
            &[
                "run",
                "--runtime",
                "serial",
                "--workload",
                "mm",
                "--variant",
                "fj",
                "--workers",
                "1",
                "--param",
                "seed=lots",
            ],
            "seed=lots: expected a non-negative integer",
        ),
        (
            &[
                "run",
                "--runtime",
                "serial",
                "--workload",
                "fib",
                "--variant",
                "fj",
                "--workers",
                "1",
                "--param",
                "n",
            ],
            "expected key=value",
        ),
        (
            &[
                "run",
                "--runtime",
                "seriall",
                "--workload",
                "fib",
                "--variant",
                "fj",
                "--workers",
                "1",
            ],
            "did you mean 'serial'",
        ),
        (
            &[
                "run",
                "--runtime",
                "serial",
                "--workload",
                "fib",
                "--variant",
                "gf",
                "--workers",
                "1",
            ],
            "no variant 'gf'",
        ),
        (
            &[
                "run",
                "--runtime",
                "serial",
                "--workload",
                "fib",
                "--variant",
                "fj",
                "--workers",
                "0",
            ],
            "at least 1",
        ),
        (
            &[
                "run",
                "--runtime",
                "serial",
                "--workload",
                "fib",
                "--variant",
                "fj",
                "--workers",
                "2",
                "--size",
                "test",
            ],
            "exactly 1 worker",
        ),
        (
            &["bench", "--n", "10", "--variant", "gf"],
            "no variant 'gf'",
        ),
        (
            &["bench", "--n", "10", "--rounds", "0"],
            "rounds must be at least 1",
        ),
    ];
    for (args, needle) in cases {
        let out = stealbench(args, &dir.0);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    // Nothing was written by the rejected commands.
    assert_eq!(fs::read_dir(&dir.0).unwrap().count(), 0);
}

#[test]
fn bench_measures_a_variant_where_it_can() {
    let dir = TempDir::new("bench");
    let out = stealbench(
        &[
            "bench",
            "--n",
            "12",
            "--reps",
            "1",
            "--rounds",
            "2",
            "--variant",
            "sf-nostack",
        ],
        &dir.0,
    );
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("fib(12) sf-nostack at P=1"), "{stdout}");
    let row = |name: &str| {
        stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no {name} row: {stdout}"))
            .to_string()
    };
    assert!(row("rayon").contains("not supported"), "{stdout}");
    assert!(row("prows").ends_with(" ok"), "{stdout}");
    assert!(row("serial").ends_with(" 1.00-1.00  ok"), "{stdout}");
    // Two rounds: every measured runtime shows the range of its two ratios.
    let range = row("prows").split_whitespace().nth(4).unwrap().to_string();
    let (lo, hi) = range.split_once('-').expect("a range lo-hi");
    let (lo, hi): (f64, f64) = (lo.parse().unwrap(), hi.parse().unwrap());
    assert!(0.0 < lo && lo <= hi, "{stdout}");
    assert_eq!(text(&out.stderr).matches("[round 2/2] prows:").count(), 1);
}

#[test]
fn run_prints_times_and_json_lines() {
    let dir = TempDir::new("run");
    let out = stealbench(
        &[
            "run",
            "--runtime",
            "serial",
            "--workload",
            "fib",
            "--variant",
            "sf",
            "--workers",
            "1",
            "--size",
            "test",
            "--reps",
            "3",
            "--json",
        ],
        &dir.0,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 5, "{stdout}");
    assert!(lines[0].contains("\"event\":\"start\"") && lines[0].contains("n=20"));
    assert!(lines[3].contains("\"rep\":3"));
    assert!(lines[4].contains("\"event\":\"done\"") && lines[4].contains("peak_rss_kb"));
}

#[test]
fn run_param_overrides_the_preset_and_is_recorded() {
    let dir = TempDir::new("param");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "--runtime",
            "abp",
            "--workload",
            "fib",
            "--variant",
            "fj",
            "--workers",
            "1",
            "--size",
            "test",
            "--reps",
            "1",
            "--json",
        ];
        args.extend_from_slice(extra);
        stealbench(&args, &dir.0)
    };
    let out = run(&["--param", "n=2^4", "--param", "n=23"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let start = stdout.lines().next().unwrap();
    assert!(start.contains("\"params\":\"n=23\""), "{start}");
    // A value the workload cannot use is one line, after the parameters were printed.
    let out = run(&["--param", "n=94"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("n=94: fib(n) fits 64 bits only up to n=93"));
}

fn run_dirs(results: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(results.join("prows-fig3"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

#[test]
fn reproduce_fig3_end_to_end_then_resume() {
    let dir = TempDir::new("e2e");
    let results = dir.0.join("results");
    let figures = dir.0.join("figures");
    let args = [
        "reproduce",
        "prows-fig3",
        "--size",
        "test",
        "--runtimes",
        "serial",
        "--rounds",
        "1",
        "--out",
        results.to_str().unwrap(),
        "--figures-dir",
        figures.to_str().unwrap(),
    ];
    let out = stealbench(&args, &dir.0);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    // The table in the paper's layout, with the paper's values beside ours.
    assert!(
        stdout.contains("bench") && stdout.contains("T16"),
        "{stdout}"
    );
    assert!(stdout.contains("[paper 10.84 (2.03x)]"), "{stdout}");
    assert!(stdout.contains("not yet implemented"), "{stdout}");

    let runs = run_dirs(&results);
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    let raw = fs::read_to_string(run.join("raw.csv")).unwrap();
    let raw_lines: Vec<&str> = raw.lines().collect();
    assert!(raw_lines[0].starts_with("runtime,workload,variant,workers,size,params,rep,seconds"));
    // T_s: serial fib fj P=1, two repetitions at the test size, both checked.
    assert_eq!(raw_lines.len(), 3, "{raw}");
    assert!(
        raw_lines[1].starts_with("serial,fib,fj,1,test,n=20,1,"),
        "{raw}"
    );
    assert!(raw_lines[2].contains(",ok,ok,"), "{raw}");
    let summary = fs::read_to_string(run.join("summary.csv")).unwrap();
    assert!(
        summary
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("serial,fib,fj,1,test,n=20,2,"),
        "{summary}"
    );
    let meta = fs::read_to_string(run.join("meta.json")).unwrap();
    for key in [
        "\"cpu_model\"",
        "\"rustc\"",
        "\"git_commit\"",
        "\"allocator\"",
        "\"finished\": true",
        "\"numa_nodes\"",
        "\"kernel\"",
    ] {
        assert!(meta.contains(key), "{key} missing: {meta}");
    }
    for f in ["prows-fig3.md", "prows-fig3.svg", "prows-fig3.png"] {
        assert!(figures.join(f).is_file(), "{f}");
        assert!(run.join(f).is_file(), "{f} in the run directory");
    }
    let md = fs::read_to_string(figures.join("prows-fig3.md")).unwrap();
    assert!(
        md.contains("| bench | variant | runtime | Ts | T1 | T2 |"),
        "{md}"
    );
    assert!(md.contains("scalability over T_1"), "{md}");
    let png = fs::read(figures.join("prows-fig3.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");

    // Simulate an interruption before the only point finished: unfinished meta, header only.
    let meta_unfinished = meta.replace("\"finished\": true", "\"finished\": false");
    fs::write(run.join("meta.json"), meta_unfinished).unwrap();
    fs::write(run.join("raw.csv"), format!("{}\n", raw_lines[0])).unwrap();
    let resume = [
        "reproduce",
        "prows-fig3",
        "--resume",
        "--out",
        results.to_str().unwrap(),
        "--figures-dir",
        figures.to_str().unwrap(),
    ];
    let out = stealbench(&resume, &dir.0);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        run_dirs(&results).len(),
        1,
        "resume made no new run directory"
    );
    let raw2 = fs::read_to_string(run.join("raw.csv")).unwrap();
    assert_eq!(raw2.lines().count(), 3, "{raw2}");
    let meta2 = fs::read_to_string(run.join("meta.json")).unwrap();
    assert!(
        meta2.contains("\"finished\": true") && meta2.contains("--resume"),
        "{meta2}"
    );

    // Resuming again with the point recorded runs nothing; a finished run is not "unfinished".
    let out = stealbench(&resume, &dir.0);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("no unfinished run"));
    let explicit = [
        "reproduce",
        "prows-fig3",
        "--resume",
        run.to_str().unwrap(),
        "--out",
        results.to_str().unwrap(),
        "--figures-dir",
        figures.to_str().unwrap(),
    ];
    let out = stealbench(&explicit, &dir.0);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("1 points already recorded, 0 to run"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(fs::read_to_string(run.join("raw.csv")).unwrap(), raw2);
    // A conflicting setting is refused.
    let mut conflicting = explicit.to_vec();
    conflicting.extend(["--size", "quick"]);
    let out = stealbench(&conflicting, &dir.0);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--size test"),
        "{}",
        text(&out.stderr)
    );
}

/// `--hw-video`: bad files and misplaced options are one line and exit code 2 before anything
/// runs; a good file reaches the point's process, and its name and fingerprint are recorded.
#[test]
fn hw_video_is_checked_recorded_and_reaches_the_points() {
    use stealbench_workloads::hw::{VideoSpec, avi, fnv1a64};
    let dir = TempDir::new("hwvideo");
    let video = VideoSpec::test(12).generate();
    let bytes = avi::encode_gray8(&video);
    let good = dir.0.join("heart.avi");
    fs::write(&good, &bytes).unwrap();
    let garbage = dir.0.join("garbage.avi");
    fs::write(&garbage, b"GIF89a, not a video").unwrap();
    let bad_points = dir.0.join("bad-points.txt");
    fs::write(&bad_points, "12 x\n").unwrap();
    let bad_points = bad_points.to_str().unwrap();
    let points = dir.0.join("points.txt");
    let pts: String = VideoSpec::test(12)
        .initial_points()
        .iter()
        .map(|p| format!("{} {}\n", p.row, p.col))
        .collect();
    fs::write(&points, pts).unwrap();
    let (good, garbage, points) = (
        good.to_str().unwrap(),
        garbage.to_str().unwrap(),
        points.to_str().unwrap(),
    );
    let results = dir.0.join("results");
    let figures = dir.0.join("figures");
    let (results, figures) = (results.to_str().unwrap(), figures.to_str().unwrap());
    let run = |extra: &[&str]| {
        let mut a = vec![
            "run",
            "--runtime",
            "serial",
            "--workload",
            "hw",
            "--variant",
            "fj",
            "--workers",
            "1",
            "--size",
            "test",
            "--reps",
            "1",
        ];
        a.extend_from_slice(extra);
        a.iter().map(|s| s.to_string()).collect::<Vec<String>>()
    };
    let reproduce = |extra: &[&str]| {
        let mut a = vec![
            "reproduce",
            "prows-fig2",
            "--size",
            "test",
            "--runtimes",
            "serial",
            "--workloads",
            "hw",
            "--out",
            results,
            "--figures-dir",
            figures,
        ];
        a.extend_from_slice(extra);
        a.iter().map(|s| s.to_string()).collect::<Vec<String>>()
    };
    fn strs(a: &[String]) -> Vec<&str> {
        a.iter().map(String::as_str).collect()
    }
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            run(&["--hw-video", "no/such.avi"]),
            "--hw-video no/such.avi",
        ),
        (run(&["--hw-video", garbage]), "hw input: "),
        (run(&["--hw-points", points]), "--hw-video"),
        (
            run(&["--hw-video", good, "--hw-points", bad_points]),
            "bad-points.txt: line 1: expected 'row col'",
        ),
        (
            {
                let mut a = run(&["--hw-video", good]);
                a[4] = "fib".into();
                a
            },
            "inputs of workload 'hw'",
        ),
        (reproduce(&["--hw-video", "no/such.avi"]), "--hw-video"),
        (reproduce(&["--hw-video", garbage]), "garbage.avi"),
        (
            {
                let mut a = reproduce(&["--hw-video", good]);
                a[7] = "sw".into();
                a
            },
            "not run here",
        ),
    ];
    for (args, needle) in &cases {
        let out = stealbench(&strs(args), &dir.0);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    assert!(
        !dir.0.join("results").exists(),
        "a rejected run wrote results"
    );

    // `run`: the point tracks the file's frames; its parameters name the file.
    let out = stealbench(&strs(&run(&["--hw-video", good, "--json"])), &dir.0);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let fingerprint = format!("fnv1a64 {:016x}", fnv1a64(&bytes));
    assert!(
        stdout.contains("heart.avi") && stdout.contains(&fingerprint),
        "{stdout}"
    );
    assert!(stdout.contains("\"event\":\"done\""), "{stdout}");

    // `reproduce`: the option reaches the child processes and is recorded.
    let out = stealbench(
        &strs(&reproduce(&["--hw-video", good, "--hw-points", points])),
        &dir.0,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let run_dir = fs::read_dir(dir.0.join("results/prows-fig2"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let meta = fs::read_to_string(run_dir.join("meta.json")).unwrap();
    assert!(
        meta.contains("\"hw_video\"") && meta.contains("heart.avi") && meta.contains("points.txt"),
        "{meta}"
    );
    let raw = fs::read_to_string(run_dir.join("raw.csv")).unwrap();
    let rows: Vec<&str> = raw.lines().skip(1).collect();
    assert!(!rows.is_empty(), "{raw}");
    for r in &rows {
        assert!(
            r.starts_with("serial,hw,fj,1,test,")
                && r.contains(&fingerprint)
                && r.contains("20 points (from ")
                && r.contains(",ok,ok,"),
            "{r}"
        );
    }
    let md = fs::read_to_string(dir.0.join("figures/prows-fig2.md")).unwrap();
    assert!(md.contains("heart.avi"), "{md}");

    // Resuming: a different --hw-video is a conflict; a video whose content changed since the
    // rows were measured is refused too.
    fs::write(
        run_dir.join("meta.json"),
        meta.replace("\"finished\": true", "\"finished\": false"),
    )
    .unwrap();
    let run_dir_s = run_dir.to_str().unwrap().to_string();
    let resume = |extra: &[&str]| {
        let mut a = reproduce(extra);
        a.extend(["--resume".to_string(), run_dir_s.clone()]);
        a
    };
    let other = dir.0.join("other.avi");
    fs::write(&other, &bytes).unwrap();
    let out = stealbench(
        &strs(&resume(&["--hw-video", other.to_str().unwrap()])),
        &dir.0,
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("made with --hw-video") && err.contains("heart.avi"),
        "{err}"
    );
    let changed = avi::encode_gray8(&VideoSpec::test(11).generate());
    fs::write(dir.0.join("heart.avi"), changed).unwrap();
    let out = stealbench(&strs(&resume(&[])), &dir.0);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("were measured on input"), "{err}");
}

/// A child that panics, one that aborts and one that overruns its timeout are recorded as
/// crashed and timed out, the run goes on and exits 1; `--resume` (here without the faults)
/// retries exactly those points and finishes ok.
#[test]
fn crashed_and_timed_out_points_are_recorded_then_retried_on_resume() {
    let dir = TempDir::new("faults");
    let run = |faults: Option<&str>, args: &[&str]| {
        let mut c = Command::new(BIN);
        c.args(args).current_dir(&dir.0);
        match faults {
            Some(f) => c.env("STEALBENCH_FAULT", f),
            None => c.env_remove("STEALBENCH_FAULT"),
        };
        c.output().expect("the binary runs")
    };
    let first = run(
        Some("abp@1=abort,abp@2=hang,prows@2=panic"),
        &[
            "reproduce",
            "prows-fig3",
            "--size",
            "test",
            "--runtimes",
            "abp,prows",
            "--timeout",
            "3",
            "--rounds",
            "1",
            "--out",
            "r",
            "--figures-dir",
            "f",
        ],
    );
    assert_eq!(first.status.code(), Some(1), "{}", text(&first.stderr));
    let runs: Vec<PathBuf> = fs::read_dir(dir.0.join("r/prows-fig3"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 1);
    let raw = fs::read_to_string(runs[0].join("raw.csv")).unwrap();
    let status_of = |rt: &str, variant: &str, p: &str| {
        raw.lines()
            .find(|l| l.starts_with(&format!("{rt},fib,{variant},{p},")))
            .map(|l| l.split(',').nth(10).unwrap().to_string())
    };
    assert_eq!(
        status_of("abp", "fj", "1").as_deref(),
        Some("crashed"),
        "{raw}"
    );
    assert_eq!(
        status_of("abp", "fj", "2").as_deref(),
        Some("timeout"),
        "{raw}"
    );
    assert_eq!(
        status_of("prows", "sf", "2").as_deref(),
        Some("crashed"),
        "{raw}"
    );
    assert_eq!(
        status_of("prows", "sf", "1").as_deref(),
        Some("ok"),
        "{raw}"
    );

    let again = run(
        None,
        &[
            "reproduce",
            "prows-fig3",
            "--resume",
            runs[0].to_str().unwrap(),
        ],
    );
    let err = text(&again.stderr);
    assert_eq!(again.status.code(), Some(0), "{err}");
    assert!(err.contains("retrying 4 recorded point(s)"), "{err}");
    let raw = fs::read_to_string(runs[0].join("raw.csv")).unwrap();
    assert!(
        raw.lines()
            .skip(1)
            .all(|l| l.split(',').nth(10) == Some("ok")),
        "{raw}"
    );
    assert!(runs[0].join("attempts.csv").exists());
    assert!(dir.0.join("f/prows-fig3.md").exists());
}

/// The (runtime, workload, variant, workers) of every row of a run directory's raw.csv.
fn point_set(run: &Path) -> std::collections::BTreeSet<String> {
    fs::read_to_string(run.join("raw.csv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split(',').take(4).collect::<Vec<_>>().join(","))
        .collect()
}

#[test]
fn three_shards_merge_to_the_whole_grid() {
    let dir = TempDir::new("shards");
    let path = |p: &str| dir.0.join(p).to_str().unwrap().to_string();
    let reproduce = |out: &str, extra: &[&str]| {
        let mut args = vec![
            "reproduce",
            "spoonhower-fig6",
            "--size",
            "test",
            "--workers",
            "1,2",
            "--reps",
            "1",
            "--runtimes",
            "abp,prows,abp/sim=unit",
        ];
        let (o, f) = (path(out), path(&format!("{out}-figures")));
        args.extend_from_slice(&["--out", &o, "--figures-dir", &f]);
        args.extend_from_slice(extra);
        let out = stealbench(&args, &dir.0);
        assert!(
            out.status.success(),
            "{}\n{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        text(&out.stdout)
    };
    reproduce("whole", &[]);
    let whole_dir = fs::read_dir(dir.0.join("whole/spoonhower-fig6"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let whole = point_set(&whole_dir);
    assert!(whole.len() > 10, "{whole:?}");

    let mut shard_dirs = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for i in 1..=3 {
        let out = reproduce("shards", &["--shard", &format!("{i}/3")]);
        assert!(out.contains(&format!("shard {i}/3: ")), "{out}");
        let d = fs::read_dir(dir.0.join("shards/spoonhower-fig6"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_str().unwrap().ends_with(&format!("-shard-{i}-of-3")))
            .expect("the shard's run directory names it");
        let pts = point_set(&d);
        assert!(!pts.is_empty(), "shard {i} is empty");
        assert!(seen.is_disjoint(&pts), "shard {i} overlaps another");
        seen.extend(pts);
        shard_dirs.push(d.to_str().unwrap().to_string());
    }

    let merged_out = path("merged");
    let merged_figs = path("merged-figures");
    let mut args = vec!["merge"];
    args.extend(shard_dirs.iter().map(String::as_str));
    args.extend_from_slice(&["--out", &merged_out, "--figures-dir", &merged_figs]);
    let out = stealbench(&args, &dir.0);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let merged_dir = fs::read_dir(dir.0.join("merged/spoonhower-fig6"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    assert_eq!(
        point_set(&merged_dir),
        whole,
        "3 shards merged = the unsharded run"
    );
    assert!(dir.0.join("merged-figures/spoonhower-fig6.png").exists());
    let meta = fs::read_to_string(merged_dir.join("meta.json")).unwrap();
    assert_eq!(meta.matches("-of-3 (commit").count(), 3, "{meta}");

    // A shard given twice, or a run of another figure, is refused with one line.
    let twice = stealbench(
        &[
            "merge",
            &shard_dirs[0],
            &shard_dirs[0],
            "--out",
            &merged_out,
        ],
        &dir.0,
    );
    assert_eq!(twice.status.code(), Some(2), "{}", text(&twice.stderr));
    let other = stealbench(
        &[
            "merge",
            &shard_dirs[0],
            whole_dir.to_str().unwrap(),
            "--out",
            &merged_out,
        ],
        &dir.0,
    );
    assert_eq!(other.status.code(), Some(2));
    assert!(
        text(&other.stderr).contains("in both"),
        "{}",
        text(&other.stderr)
    );

    // The Slurm scripts: an array of 3 exclusive nodes, each one shard, then the merge.
    let slurm_dir = path("slurm");
    let out = stealbench(
        &[
            "slurm",
            "spoonhower-fig6",
            "--shards",
            "3",
            "--dir",
            &slurm_dir,
            "--",
            "--size",
            "quick",
        ],
        &dir.0,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let array = fs::read_to_string(dir.0.join("slurm/spoonhower-fig6.sbatch")).unwrap();
    for want in [
        "#SBATCH --array=1-3",
        "#SBATCH --exclusive",
        "--shard \"$SLURM_ARRAY_TASK_ID/3\"",
        "--size quick",
    ] {
        assert!(array.contains(want), "{want}: {array}");
    }
    for f in [
        "spoonhower-fig6.sbatch",
        "spoonhower-fig6-merge.sbatch",
        "spoonhower-fig6-submit.sh",
    ] {
        let check = Command::new("bash")
            .args(["-n", dir.0.join("slurm").join(f).to_str().unwrap()])
            .status()
            .unwrap();
        assert!(check.success(), "{f} is not valid bash");
    }
    let bad = stealbench(
        &[
            "slurm",
            "spoonhower-fig6",
            "--shards",
            "3",
            "--dir",
            &slurm_dir,
            "--",
            "--out",
            "x",
        ],
        &dir.0,
    );
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn reproduce_the_memory_fit_end_to_end() {
    // libfork's Table II on fib at four P (oversubscribed past this machine's CPUs): each point
    // records its process's resident set, and the table fits the exponent to the four peaks.
    let dir = TempDir::new("memfit");
    let results = dir.0.join("results");
    let figures = dir.0.join("figures");
    let args = [
        "reproduce",
        "libfork-table2",
        "--size",
        "test",
        "--workloads",
        "fib",
        "--runtimes",
        "libfork",
        "--workers",
        "1,2,3,4",
        "--out",
        results.to_str().unwrap(),
        "--figures-dir",
        figures.to_str().unwrap(),
    ];
    let out = stealbench(&args, &dir.0);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    let md = fs::read_to_string(figures.join("libfork-table2.md")).unwrap();
    assert!(
        md.contains("| bench | variant | runtime | n | a (MiB) | b | points | P=1 |"),
        "{md}"
    );
    // libfork runs on its paper's settings, and the notes say so.
    assert!(
        md.contains(
            "- Runtime settings: `libfork/victim=numa/pin=scatter`, \
             `libfork/idle=busy/victim=numa/pin=scatter` with the settings their spellings give"
        ),
        "{md}"
    );
    let row = md
        .lines()
        .find(|l| l.starts_with("| fib | fj | libfork/victim=numa/pin=scatter |"))
        .unwrap();
    // n ± its error, the paper's beside, four points.
    assert!(
        row.contains(" ± ") && row.contains("[paper 0.86 ± 0.08]"),
        "{row}"
    );
    assert!(row.contains("| 4 |"), "{row}");
    let run = fs::read_dir(results.join("libfork-table2"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let raw = fs::read_to_string(run.join("raw.csv")).unwrap();
    assert!(
        raw.contains("process_rss_before_kb=") && raw.contains("process_hwm_kb="),
        "{raw}"
    );

    // The same points recorded under libfork's arms of before its paper's settings: a merge
    // says which arms of the figure replaced them, here and in the notes.
    fs::write(
        run.join("raw.csv"),
        raw.replace("/victim=numa/pin=scatter,", ","),
    )
    .unwrap();
    let merged = dir.0.join("merged");
    let out = stealbench(
        &[
            "merge",
            run.to_str().unwrap(),
            "--out",
            merged.to_str().unwrap(),
            "--figures-dir",
            figures.to_str().unwrap(),
        ],
        &dir.0,
    );
    let stdout = text(&out.stdout);
    let said = "the run has points of arms this figure no longer runs, in none of its tables or \
                plots: libfork (replaced by libfork/victim=numa/pin=scatter), libfork/idle=busy \
                (replaced by libfork/idle=busy/victim=numa/pin=scatter)";
    assert!(
        stdout.contains(&format!("note: {said}\n")),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    let md = fs::read_to_string(figures.join("libfork-table2.md")).unwrap();
    assert!(md.contains(&format!("- Left out: {said}\n")), "{md}");
}

#[test]
fn run_prints_the_pools_pinning() {
    // The arm's pin= replaces --pinning, and the header says what the pool got.
    let dir = TempDir::new("runpin");
    let out = stealbench(
        &[
            "run",
            "--runtime",
            "libfork/pin=compact",
            "--workload",
            "fib",
            "--variant",
            "fj",
            "--workers",
            "1",
            "--size",
            "test",
            "--reps",
            "1",
            "--pinning",
            "none",
        ],
        &dir.0,
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    let header = stdout.lines().next().unwrap();
    assert!(
        header.starts_with("libfork/pin=compact fib fj P=1 size=test pinning=compact "),
        "{header}"
    );
    // Nothing to pin on the serial pool: refused, one line.
    let out = stealbench(
        &[
            "run",
            "--runtime",
            "serial/pin=compact",
            "--workload",
            "fib",
            "--variant",
            "fj",
            "--workers",
            "1",
            "--size",
            "test",
        ],
        &dir.0,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("no worker to pin: drop pin="),
        "{}",
        text(&out.stderr)
    );
}
