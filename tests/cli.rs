//! End-to-end tests of the `stealbench` binary: bad input, a whole reproduction at the test
//! size, and resuming an interrupted run. Every output goes to a temporary directory.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tempfile::TempDir;

const BIN: &str = env!("CARGO_BIN_EXE_stealbench");

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

/// The arguments of `run` of one point, `runtime` running `workload`'s `variant` on `workers`
/// workers, then `extra`.
fn run_args<'a>(
    runtime: &'a str,
    workload: &'a str,
    variant: &'a str,
    workers: &'a str,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let point = [
        "run",
        "--runtime",
        runtime,
        "--workload",
        workload,
        "--variant",
        variant,
        "--workers",
        workers,
    ];
    [&point[..], extra].concat()
}

/// The arguments that send a run's results to `results` and its figures to `figures`.
fn dirs_args<'a>(results: &'a str, figures: &'a str) -> [&'a str; 4] {
    ["--out", results, "--figures-dir", figures]
}

/// The arguments of `reproduce` of `figure` at the test size, then `extra`.
fn reproduce_args<'a>(figure: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    [&["reproduce", figure, "--size", "test"][..], extra].concat()
}

/// The arguments of `reproduce` of ProWS Figure 3 at the test size on fib alone, on `runtimes`
/// at `workers`, one round, then `extra`.
fn fib_fig3_args<'a>(runtimes: &'a str, workers: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let fib = [
        "--runtimes",
        runtimes,
        "--workloads",
        "fib",
        "--workers",
        workers,
        "--rounds",
        "1",
    ];
    reproduce_args("prows-fig3", &[&fib[..], extra].concat())
}

/// `claims` lists every figure's claims with its check and band, running nothing; `report`
/// with nothing to report is one line and exit code 2.
#[test]
fn claims_are_listed_for_every_figure() {
    let dir = TempDir::with_prefix("stealbench-cli-claims-").unwrap();
    let out = stealbench(&["claims"], dir.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listing = text(&out.stdout);
    let list = text(&stealbench(&["list"], dir.path()).stdout);
    let figures: Vec<&str> = list
        .lines()
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(figures.len(), 16, "{list}");
    for id in &figures {
        let header = listing
            .lines()
            .find(|l| l.starts_with(&format!("{id} (")))
            .unwrap_or_else(|| panic!("{id} not listed: {listing}"));
        assert!(!header.contains("(0 claims)"), "{header}");
    }
    let claims = listing
        .lines()
        .filter(|l| l.starts_with("    band:"))
        .count();
    assert!(claims >= 20, "{claims} claims: {listing}");
    assert!(listing.contains("= 2 + 2d"), "{listing}");
    let one = text(&stealbench(&["claims", "spoonhower-fig5"], dir.path()).stdout);
    assert!(one.starts_with("spoonhower-fig5 (8 claims)"), "{one}");
    assert!(
        one.contains("kind:  regression check (holds by construction: a forced schedule"),
        "{one}"
    );
    let bad = stealbench(&["claims", "prows-fig9"], dir.path());
    assert_eq!(bad.status.code(), Some(2));
    let empty = stealbench(&["report", dir.path().to_str().unwrap()], dir.path());
    assert_eq!(empty.status.code(), Some(2), "{}", text(&empty.stderr));
    assert!(
        text(&empty.stderr).contains("no finished run"),
        "{}",
        text(&empty.stderr)
    );
}

/// `claims --format csv`: one row per case of each claim, with its figure, id, kind, quote,
/// paper's number, band and case; the three kinds present, and the papers' claims counted as
/// the text form's last line counts them.
#[test]
fn claims_as_csv_name_each_claims_kind_and_cases() {
    let dir = TempDir::with_prefix("stealbench-cli-claims-csv-").unwrap();
    let out = stealbench(&["claims", "--format", "csv"], dir.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut r = csv::Reader::from_reader(&out.stdout[..]);
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    for col in ["figure", "id", "kind", "quote", "paper", "band", "case"] {
        assert!(header.iter().any(|h| h == col), "{col} missing: {header:?}");
    }
    let at = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    let mut claims: Vec<(String, String, String)> = rows
        .iter()
        .map(|row| {
            let (figure, id) = (&row[at("figure")], &row[at("id")]);
            (
                figure.to_string(),
                id.to_string(),
                row[at("kind")].to_string(),
            )
        })
        .collect();
    claims.dedup();
    assert!(
        rows.len() > claims.len(),
        "a claim of several cases has several rows"
    );
    for kind in ["paper", "ours", "regression"] {
        assert!(claims.iter().any(|c| c.2 == kind), "no {kind} claim");
    }
    let kind_of = |figure: &str, id: &str| {
        claims
            .iter()
            .find(|c| c.0 == figure && c.1 == id)
            .map(|c| c.2.as_str())
            .unwrap_or_else(|| panic!("{figure}/{id} not listed"))
    };
    assert_eq!(
        kind_of("spoonhower-fig5", "a-proactive-constant"),
        "regression"
    );
    assert_eq!(kind_of("steal-scaling", "no-slower-than-rayon"), "ours");
    assert_eq!(kind_of("prows-fig3", "scales-p16"), "paper");
    let papers = claims.iter().filter(|c| c.2 == "paper").count();
    let listing = text(&stealbench(&["claims"], dir.path()).stdout);
    assert!(
        listing.contains(&format!(" {papers} of the papers, ")),
        "{papers}: {listing}"
    );
    assert!(papers >= 65, "{papers} claims of the papers");
    // Where the paper prints a number per case, each case's band is closed around it: none of
    // these has an open upper bound.
    let two_sided = [
        ("prows-fig2", "comparable-t1"),
        ("prows-fig2", "comparable-t2"),
        ("prows-fig3", "futures-cost-more"),
        ("prows-fig4", "fork-join-fewest"),
        ("fibril-fig3", "faster-than-tbb"),
        ("libfork-fig5", "tbb-fib-overhead"),
    ];
    for (figure, id) in two_sided {
        let bands: Vec<&str> = rows
            .iter()
            .filter(|row| &row[at("figure")] == figure && &row[at("id")] == id)
            .map(|row| row.get(at("band")).unwrap())
            .collect();
        assert!(!bands.is_empty(), "{figure}/{id} not listed");
        for band in bands {
            assert!(
                band.starts_with('[') && !band.contains(';'),
                "{figure}/{id}: the case's band is {band}"
            );
        }
    }
    let bad = stealbench(&["claims", "--format", "json"], dir.path());
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn bad_input_is_one_line_and_exit_code_2() {
    let dir = TempDir::with_prefix("stealbench-cli-bad-").unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["reproduce", "prows-fig9"], "did you mean 'prows-fig"),
        (
            vec!["reproduce", "prows-fig3", "--size", "quik"],
            "did you mean 'quick'",
        ),
        (
            vec!["reproduce", "prows-fig3", "--workers", "0"],
            "at least 1",
        ),
        (
            vec!["reproduce", "prows-fig3", "--runtimes", "rayn"],
            "did you mean 'rayon'",
        ),
        (
            vec!["reproduce", "prows-fig3", "--workloads", "fibb"],
            "did you mean 'fib'",
        ),
        (vec!["reproduce", "prows-fig3", "--rep", "2"], "'--reps'"),
        (
            run_args("serial", "fib", "fj", "1", &["--param", "m=3"]),
            "unknown parameter 'm' (parameters: n)",
        ),
        (
            run_args("serial", "mm", "fj", "1", &["--param", "seed=lots"]),
            "seed=lots: expected a non-negative integer",
        ),
        (
            run_args("serial", "fib", "fj", "1", &["--param", "n"]),
            "expected key=value",
        ),
        (
            run_args("seriall", "fib", "fj", "1", &[]),
            "did you mean 'serial'",
        ),
        (run_args("serial", "fib", "gf", "1", &[]), "no variant 'gf'"),
        (run_args("serial", "fib", "fj", "0", &[]), "at least 1"),
        (
            run_args("serial", "fib", "fj", "2", &["--size", "test"]),
            "exactly 1 worker",
        ),
        (
            vec!["bench", "--n", "10", "--variant", "gf"],
            "no variant 'gf'",
        ),
        (
            vec!["bench", "--n", "10", "--rounds", "0"],
            "0 is not in 1..=100",
        ),
    ];
    for (args, needle) in &cases {
        let out = stealbench(args, dir.path());
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    // Nothing was written by the rejected commands.
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn bench_measures_a_variant_where_it_can() {
    let dir = TempDir::with_prefix("stealbench-cli-bench-").unwrap();
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
            "sf",
        ],
        dir.path(),
    );
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("fib(12) sf at P=1"), "{stdout}");
    let row = |name: &str| {
        stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no {name} row: {stdout}"))
            .to_string()
    };
    assert!(row("libfork").contains("not supported"), "{stdout}");
    assert!(row("prows").ends_with(" ok"), "{stdout}");
    // T_s is the kernel: fib's serial code, no runtime and no trait. The `serial` row (the
    // trait's elision, here of sf) and libfork's serial shape are rows like the others.
    assert!(
        row("serial/front=kernel").ends_with(" 1.00-1.00  ok"),
        "{stdout}"
    );
    assert!(row("serial").ends_with(" ok"), "{stdout}");
    assert!(
        row("serial/front=kernel/shape=libfork").ends_with(" ok"),
        "{stdout}"
    );
    assert!(
        stdout.contains("T_s = serial/front=kernel: fib's serial code called directly"),
        "{stdout}"
    );
    // Two rounds: every measured runtime shows the range of its two ratios.
    let range = row("prows").split_whitespace().nth(4).unwrap().to_string();
    let (lo, hi) = range.split_once('-').expect("a range lo-hi");
    let (lo, hi): (f64, f64) = (lo.parse().unwrap(), hi.parse().unwrap());
    assert!(0.0 < lo && lo <= hi, "{stdout}");
    assert_eq!(text(&out.stderr).matches("[round 2/2] prows:").count(), 1);
}

#[test]
fn run_prints_times_and_json_lines() {
    let dir = TempDir::with_prefix("stealbench-cli-run-").unwrap();
    let test = ["--size", "test", "--reps", "3", "--json"];
    let out = stealbench(&run_args("serial", "fib", "sf", "1", &test), dir.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 5, "{stdout}");
    assert!(lines[0].contains("\"event\":\"start\"") && lines[0].contains("n=20"));
    assert!(lines[3].contains("\"rep\":3"));
    for rep in &lines[1..4] {
        assert!(
            rep.contains("\"answer\":\"fib(20) = 6765; checked against the iterative fib(n)\""),
            "{rep}"
        );
    }
    assert!(lines[4].contains("\"event\":\"done\"") && lines[4].contains("peak_rss_kb"));
}

/// `run` prints the workload's answer and what it was checked against, as the original
/// benchmarks print theirs: UTS's node count, depth and leaves, of the tree the parameters give.
#[test]
fn run_prints_the_answer_and_what_it_was_checked_against() {
    let dir = TempDir::with_prefix("stealbench-cli-answer-").unwrap();
    let uts = |extra: &[&str]| {
        let mut args = run_args("abp", "uts", "fj", "2", &["--size", "test", "--reps", "2"]);
        args.extend_from_slice(extra);
        let out = stealbench(&args, dir.path());
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let answer = |stdout: &str| -> Vec<String> {
        stdout
            .lines()
            .filter_map(|l| l.strip_prefix("answer: "))
            .map(str::to_string)
            .collect()
    };
    // Printed once: both repetitions have the same answer.
    let stdout = uts(&[]);
    assert_eq!(
        answer(&stdout),
        ["3987 nodes, depth 5, 3232 leaves; checked against an iterative serial walk"],
        "{stdout}"
    );
    // A tree of one's own: another root seed.
    let stdout = uts(&["--param", "r=7"]);
    assert_eq!(
        answer(&stdout),
        ["7949 nodes, depth 5, 6338 leaves; checked against an iterative serial walk"],
        "{stdout}"
    );
}

#[test]
fn run_param_overrides_the_preset_and_is_recorded() {
    let dir = TempDir::with_prefix("stealbench-cli-param-").unwrap();
    let run = |extra: &[&str]| {
        let test = ["--size", "test", "--reps", "1", "--json"];
        let mut args = run_args("abp", "fib", "fj", "1", &test);
        args.extend_from_slice(extra);
        stealbench(&args, dir.path())
    };
    let out = run(&["--param", "n=2^4", "--param", "n=23"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let start = stdout.lines().next().unwrap();
    assert!(start.contains("\"params\":\"n=23\""), "{start}");
    // A value the workload cannot use is one line, after the parameters were printed.
    let out = run(&["--param", "n=94"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("n=94: fib(n) fits 64 bits only up to n=93"));
}

#[test]
fn unbounded_inputs_are_refused_with_one_line_before_anything_runs() {
    let dir = TempDir::with_prefix("stealbench-cli-bounds-").unwrap();
    let results = dir.path().join("results");
    let run = |workload: &str, extra: &str| {
        let point = run_args("serial", workload, "fj", "1", &["--size", "test"]);
        format!("{} {extra}", point.join(" "))
    };
    let huge = "18446744073709551615";
    let memory = "of memory; the limit is";
    let cases = [
        (
            run("sort", "--param n=10^18"),
            "n=1000000000000000000: the input needs more than 16.0 EiB of memory; the limit is",
        ),
        (run("quicksort", "--param n=10^12"), memory),
        (run("fft", "--param n=2^40"), memory),
        (run("fib", &format!("--reps {huge}")), "is not in 1..=10000"),
        (
            format!(
                "reproduce prows-fig3 --size test --rounds {huge} --out {}",
                results.display()
            ),
            "is not in 1..=100",
        ),
        ("bench --n 200".to_string(), "200 is not in 0..=93"),
        // A value the workload cannot use is bad input too, refused before or after the pool
        // started.
        (run("mm", "--param n=100"), "n=100: mm needs n = 32·2^k"),
        (run("sort", "--param n=0"), "n=0: nothing to sort"),
    ];
    for (args, needle) in &cases {
        let out = stealbench(&args.split(' ').collect::<Vec<_>>(), dir.path());
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args}: {err}");
        assert_eq!(err.lines().count(), 1, "{args}: {err}");
        assert!(err.contains(needle), "{args}: {err}");
    }
    assert!(!results.exists(), "a refused reproduce made a directory");
    // Integers take `2^k` wherever a parameter holds a number (mm's side: a number or `input`).
    let args = run("mm", "--param n=2^6 --reps 1 --json");
    let out = stealbench(&args.split(' ').collect::<Vec<_>>(), dir.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let start = text(&out.stdout).lines().next().unwrap().to_string();
    assert!(start.contains(" n=64 "), "{start}");
}

/// The run directories of `figure` under `results`, in order.
fn run_dirs(results: &Path, figure: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(results.join(figure))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

/// The run directory of shard `i` of `n` of `figure` under `results`.
fn shard_dir(results: &Path, figure: &str, i: usize, n: usize) -> PathBuf {
    run_dirs(results, figure)
        .into_iter()
        .find(|p| p.to_str().unwrap().ends_with(&format!("-shard-{i}-of-{n}")))
        .expect("the shard's run directory names it")
}

/// libfork's figures divide by libfork's serial fib (never inlined, an out-parameter): their
/// T_s points are that kernel's, `speedup_ts` reads them, and the page says which T_s it used.
#[test]
fn libforks_figures_divide_by_its_serial_shape() {
    let dir = TempDir::with_prefix("stealbench-cli-libfork-ts-").unwrap();
    let lazy = "libfork/victim=numa/pinning=scatter";
    let rest = [
        &["--runtimes", lazy, "--workloads", "fib", "--workers", "1"][..],
        &["--rounds", "1", "--reps", "2"],
        &dirs_args("r", "f"),
    ]
    .concat();
    let out = stealbench(&reproduce_args("libfork-fig5", &rest), dir.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let run = run_dirs(&dir.path().join("r"), "libfork-fig5").remove(0);
    let raw = fs::read_to_string(run.join("raw.csv")).unwrap();
    assert!(
        raw.lines()
            .any(|l| l.starts_with("serial/front=kernel/shape=libfork,fib,fj,1,test,n=20,")),
        "{raw}"
    );
    assert!(!raw.contains("\nserial/front=kernel,"), "{raw}");
    let mut r = csv::Reader::from_path(run.join("summary.csv")).unwrap();
    let h = r.headers().unwrap().clone();
    let col = |name: &str| h.iter().position(|c| c == name).unwrap();
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    let median = |rt: &str| -> (f64, Option<f64>) {
        let row = rows.iter().find(|r| &r[col("runtime")] == rt).unwrap();
        (
            row[col("median")].parse().unwrap(),
            row[col("speedup_ts")].parse().ok(),
        )
    };
    let (ts, _) = median("serial/front=kernel/shape=libfork");
    let (t1, speedup) = median(lazy);
    assert!(
        (speedup.unwrap() - ts / t1).abs() < 1e-9 * (ts / t1),
        "{rows:?}"
    );
    let md = fs::read_to_string(dir.path().join("f/libfork-fig5.md")).unwrap();
    assert!(
        md.contains("- T_s: `serial/front=kernel/shape=libfork`, the serial code of libfork's"),
        "{md}"
    );
    assert!(
        md.contains("The claims' T_s is `serial/front=kernel/shape=libfork`"),
        "{md}"
    );
}

#[test]
fn reproduce_fig3_end_to_end_then_resume() {
    let dir = TempDir::with_prefix("stealbench-cli-e2e-").unwrap();
    let results = dir.path().join("results");
    let figures = dir.path().join("figures");
    let dirs = dirs_args(results.to_str().unwrap(), figures.to_str().unwrap());
    let serial = ["--runtimes", "serial", "--rounds", "1"];
    let args = reproduce_args("prows-fig3", &[&serial[..], &dirs].concat());
    let out = stealbench(&args, dir.path());
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    // The table in the paper's layout, with the paper's values beside ours.
    assert!(
        stdout.contains("bench") && stdout.contains("T16"),
        "{stdout}"
    );
    assert!(stdout.contains("[paper 10.84 (2.03x)]"), "{stdout}");
    assert!(stdout.contains("not yet implemented"), "{stdout}");

    let runs = run_dirs(&results, "prows-fig3");
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    let raw = fs::read_to_string(run.join("raw.csv")).unwrap();
    let raw_lines: Vec<&str> = raw.lines().collect();
    assert!(raw_lines[0].starts_with("runtime,workload,variant,workers,size,params,rep,seconds"));
    // T_s: the kernel of fib (fj's elision) at P=1, two repetitions at the test size, both
    // checked.
    assert_eq!(raw_lines.len(), 3, "{raw}");
    assert!(
        raw_lines[1].starts_with("serial/front=kernel,fib,fj,1,test,n=20,1,"),
        "{raw}"
    );
    assert!(raw_lines[2].contains(",ok,ok,"), "{raw}");
    // Each repetition's answer, and what it was checked against, in its column.
    let mut r = csv::Reader::from_path(run.join("raw.csv")).unwrap();
    let answer = r.headers().unwrap().iter().position(|h| h == "answer");
    for rec in r.records() {
        assert_eq!(
            &rec.unwrap()[answer.unwrap()],
            "fib(20) = 6765; checked against the iterative fib(n)",
            "{raw}"
        );
    }
    let summary = fs::read_to_string(run.join("summary.csv")).unwrap();
    assert!(
        summary
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("serial/front=kernel,fib,fj,1,test,n=20,2,"),
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
    // The page says which T_s it used: ProWS divides by the serial elision, the plain kernel.
    assert!(
        md.contains("- T_s: `serial/front=kernel`, each workload's kernel"),
        "{md}"
    );
    // The claims' verdicts: after the table, in the page (first), and in claims.csv. Only T_s
    // ran: the claims on the figure's rows are n/a (not measured), the one at P = 16
    // inconclusive on this machine's cores.
    assert!(
        stdout.contains("claim prows-fig3/stack-switch-costs: n/a (not measured in this run"),
        "{stdout}"
    );
    assert!(md.find("## Claims") < md.find("| bench |"), "{md}");
    // P = 16: inconclusive on a machine of fewer cores, n/a (not measured) on a larger one.
    let p16 = md
        .lines()
        .find(|l| l.starts_with("| `prows-fig3/scales-p16` |"))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(
        p16.contains("**inconclusive** (a time claim at P = 16") || p16.contains("**n/a**"),
        "{p16}"
    );
    // claims.csv: one row per case of each claim, each with its claim's kind and verdict.
    let mut claims_csv = csv::Reader::from_path(run.join("claims.csv")).unwrap();
    let header: Vec<String> = claims_csv
        .headers()
        .unwrap()
        .iter()
        .map(String::from)
        .collect();
    assert_eq!(
        header[..4],
        ["claim", "kind", "kind_reason", "verdict"],
        "{header:?}"
    );
    let at = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = claims_csv.records().map(Result::unwrap).collect();
    let mut ids: Vec<&str> = rows.iter().map(|r| &r[at("claim")]).collect();
    ids.dedup();
    assert_eq!(ids.len(), 4, "{ids:?}");
    assert!(rows.len() >= 4);
    assert!(rows.iter().all(|r| &r[at("kind")] == "paper"));
    assert!(rows.iter().all(|r| !r[at("case_verdict")].is_empty()));
    // The report of that run: README.md and report.html, the verdicts in both, and the
    // figure's page and plots written again, as reproduce wrote them.
    let page = |ext: &str| figures.join(format!("prows-fig3.{ext}"));
    let (md_before, svg_before) = (
        fs::read(page("md")).unwrap(),
        fs::read(page("svg")).unwrap(),
    );
    for ext in ["md", "svg", "png"] {
        fs::remove_file(page(ext)).unwrap();
    }
    let report = stealbench(
        &[
            "report",
            results.to_str().unwrap(),
            "--figures-dir",
            figures.to_str().unwrap(),
        ],
        dir.path(),
    );
    assert!(report.status.success(), "{}", text(&report.stderr));
    assert!(
        text(&report.stdout).contains("1 figures, 4 claims"),
        "{}",
        text(&report.stdout)
    );
    let html = fs::read_to_string(figures.join("report.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("prows-fig3/scales-p16"));
    let readme = fs::read_to_string(figures.join("README.md")).unwrap();
    assert!(readme.contains("[prows-fig3](prows-fig3.md)"), "{readme}");
    let png = fs::read(figures.join("prows-fig3.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(fs::read(page("md")).unwrap(), md_before);
    assert_eq!(fs::read(page("svg")).unwrap(), svg_before);

    // Simulate an interruption before the only point finished: unfinished meta, header only.
    let meta_unfinished = meta.replace("\"finished\": true", "\"finished\": false");
    fs::write(run.join("meta.json"), meta_unfinished).unwrap();
    fs::write(run.join("raw.csv"), format!("{}\n", raw_lines[0])).unwrap();
    let resume = [&["reproduce", "prows-fig3", "--resume"][..], &dirs].concat();
    let out = stealbench(&resume, dir.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        run_dirs(&results, "prows-fig3").len(),
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
    let out = stealbench(&resume, dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("no unfinished run"));
    let run_s = run.to_str().unwrap();
    let explicit = [&["reproduce", "prows-fig3", "--resume", run_s][..], &dirs].concat();
    let out = stealbench(&explicit, dir.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("1 points already recorded, 0 to run"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(fs::read_to_string(run.join("raw.csv")).unwrap(), raw2);
    // A conflicting setting is refused.
    let mut conflicting = explicit.clone();
    conflicting.extend(["--size", "quick"]);
    let out = stealbench(&conflicting, dir.path());
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
    let dir = TempDir::with_prefix("stealbench-cli-hwvideo-").unwrap();
    let video = VideoSpec::test(12).generate();
    let bytes = avi::encode_gray8(&video);
    let good = dir.path().join("heart.avi");
    fs::write(&good, &bytes).unwrap();
    let garbage = dir.path().join("garbage.avi");
    fs::write(&garbage, b"GIF89a, not a video").unwrap();
    let bad_points = dir.path().join("bad-points.txt");
    fs::write(&bad_points, "12 x\n").unwrap();
    let bad_points = bad_points.to_str().unwrap();
    let points = dir.path().join("points.txt");
    let pts = stealbench_workloads::hw::points_text(&VideoSpec::test(12).initial_points());
    fs::write(&points, pts).unwrap();
    let (good, garbage, points) = (
        good.to_str().unwrap(),
        garbage.to_str().unwrap(),
        points.to_str().unwrap(),
    );
    let results = dir.path().join("results");
    let figures = dir.path().join("figures");
    let (results, figures) = (results.to_str().unwrap(), figures.to_str().unwrap());
    let run = |extra: &[&str]| {
        let test = ["--size", "test", "--reps", "1"];
        let mut a = run_args("serial", "hw", "fj", "1", &test);
        a.extend_from_slice(extra);
        a.iter().map(|s| s.to_string()).collect::<Vec<String>>()
    };
    let reproduce = |extra: &[&str]| {
        let hw = ["--runtimes", "serial", "--workloads", "hw"];
        let dirs = dirs_args(results, figures);
        let a = reproduce_args("prows-fig2", &[&hw[..], &dirs, extra].concat());
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
            "which is not run here (workloads: sw)",
        ),
    ];
    for (args, needle) in &cases {
        let out = stealbench(&strs(args), dir.path());
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    assert!(
        !dir.path().join("results").exists(),
        "a rejected run wrote results"
    );

    // `run`: the point tracks the file's frames; its parameters name the file.
    let out = stealbench(&strs(&run(&["--hw-video", good, "--json"])), dir.path());
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
        dir.path(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let run_dir = run_dirs(&dir.path().join("results"), "prows-fig2").remove(0);
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
            r.starts_with("serial/front=kernel,hw,fj,1,test,")
                && r.contains(&fingerprint)
                && r.contains("20 points (from ")
                && r.contains(",ok,ok,"),
            "{r}"
        );
    }
    let md = fs::read_to_string(dir.path().join("figures/prows-fig2.md")).unwrap();
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
    let other = dir.path().join("other.avi");
    fs::write(&other, &bytes).unwrap();
    let out = stealbench(
        &strs(&resume(&["--hw-video", other.to_str().unwrap()])),
        dir.path(),
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("made with --hw-video") && err.contains("heart.avi"),
        "{err}"
    );
    let changed = avi::encode_gray8(&VideoSpec::test(11).generate());
    fs::write(dir.path().join("heart.avi"), changed).unwrap();
    let out = stealbench(&strs(&resume(&[])), dir.path());
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("were measured on input"), "{err}");
}

/// A child that panics, one that aborts and one that overruns its timeout are recorded as
/// crashed and timed out, the run goes on and exits 1; `--resume` (here without the faults)
/// retries exactly those points and finishes ok.
#[test]
fn crashed_and_timed_out_points_are_recorded_then_retried_on_resume() {
    let dir = TempDir::with_prefix("stealbench-cli-faults-").unwrap();
    let run = |faults: Option<&str>, args: &[&str]| {
        let mut c = Command::new(BIN);
        c.args(args).current_dir(dir.path());
        match faults {
            Some(f) => c.env("STEALBENCH_FAULT", f),
            None => c.env_remove("STEALBENCH_FAULT"),
        };
        c.output().expect("the binary runs")
    };
    let settings = ["--runtimes", "abp,prows", "--timeout", "3", "--rounds", "1"];
    let dirs = dirs_args("r", "f");
    let first = run(
        Some("abp@1=abort,abp@2=hang,prows@2=panic,prows/futures=nostack@2=panic"),
        &reproduce_args("prows-fig3", &[&settings[..], &dirs].concat()),
    );
    assert_eq!(first.status.code(), Some(1), "{}", text(&first.stderr));
    let runs = run_dirs(&dir.path().join("r"), "prows-fig3");
    assert_eq!(runs.len(), 1);
    let raw = fs::read_to_string(runs[0].join("raw.csv")).unwrap();
    let status_of = |rt: &str, variant: &str, p: &str| {
        raw.lines()
            .find(|l| l.starts_with(&format!("{rt},fib,{variant},{p},")))
            .map(|l| l.split(',').nth(10).unwrap().to_string())
    };
    for (rt, variant, p, status) in [
        ("abp", "fj", "1", "crashed"),
        ("abp", "fj", "2", "timeout"),
        ("prows", "sf", "2", "crashed"),
        ("prows", "sf", "1", "ok"),
    ] {
        assert_eq!(status_of(rt, variant, p).as_deref(), Some(status), "{raw}");
    }

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
    assert!(dir.path().join("f/prows-fig3.md").exists());
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
    let dir = TempDir::with_prefix("stealbench-cli-shards-").unwrap();
    let path = |p: &str| dir.path().join(p).to_str().unwrap().to_string();
    let reproduce = |out: &str, extra: &[&str]| {
        let runtimes = "abp,prows,abp/sim=unit";
        let settings = ["--workers", "1,2", "--reps", "1", "--runtimes", runtimes];
        let mut args = reproduce_args("spoonhower-fig6", &settings);
        let (o, f) = (path(out), path(&format!("{out}-figures")));
        args.extend_from_slice(&dirs_args(&o, &f));
        args.extend_from_slice(extra);
        let out = stealbench(&args, dir.path());
        assert!(
            out.status.success(),
            "{}\n{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        text(&out.stdout)
    };
    reproduce("whole", &[]);
    let whole_dir = run_dirs(&dir.path().join("whole"), "spoonhower-fig6").remove(0);
    let whole = point_set(&whole_dir);
    assert!(whole.len() > 10, "{whole:?}");

    let mut shard_dirs = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for i in 1..=3 {
        let out = reproduce("shards", &["--shard", &format!("{i}/3")]);
        assert!(out.contains(&format!("shard {i}/3: ")), "{out}");
        let d = shard_dir(&dir.path().join("shards"), "spoonhower-fig6", i, 3);
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
    args.extend_from_slice(&dirs_args(&merged_out, &merged_figs));
    let out = stealbench(&args, dir.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let merged_dir = run_dirs(&dir.path().join("merged"), "spoonhower-fig6").remove(0);
    assert_eq!(
        point_set(&merged_dir),
        whole,
        "3 shards merged = the unsharded run"
    );
    assert!(
        dir.path()
            .join("merged-figures/spoonhower-fig6.png")
            .exists()
    );
    // The merged run's verdicts: printed, in claims.csv, at the top of the page.
    let merged_text = text(&out.stdout);
    assert!(
        merged_text.contains("claim spoonhower-fig6/proactive-few-per-steal: "),
        "{merged_text}"
    );
    assert!(merged_dir.join("claims.csv").is_file());
    // One `wrote` line, naming each file the merge wrote, every one there.
    let wrote: Vec<&str> = merged_text
        .lines()
        .filter_map(|l| l.strip_prefix("wrote "))
        .collect();
    assert_eq!(wrote.len(), 1, "{merged_text}");
    let named: Vec<&str> = wrote[0].split(", ").collect();
    assert_eq!(named.len(), 5, "{}", wrote[0]);
    for f in named {
        assert!(Path::new(f).is_file(), "{f} is named but not written");
    }
    let md = fs::read_to_string(dir.path().join("merged-figures/spoonhower-fig6.md")).unwrap();
    assert!(md.contains("## Claims"), "{md}");
    let meta = fs::read_to_string(merged_dir.join("meta.json")).unwrap();
    assert_eq!(meta.matches("-of-3 (commit").count(), 3, "{meta}");

    // A shard given twice, or a run of another figure, is refused with one line.
    let merge_first_and = |second: &str| {
        stealbench(
            &["merge", &shard_dirs[0], second, "--out", &merged_out],
            dir.path(),
        )
    };
    let twice = merge_first_and(&shard_dirs[0]);
    assert_eq!(twice.status.code(), Some(2), "{}", text(&twice.stderr));
    // A second run of one shard (a requeued task) is named with the first.
    let again = path("again");
    copy_run(Path::new(&shard_dirs[0]), Path::new(&again));
    let out = merge_first_and(&again);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("{} and {again} are both shard 1/3", shard_dirs[0])),
        "{err}"
    );
    let other = merge_first_and(whole_dir.to_str().unwrap());
    assert_eq!(other.status.code(), Some(2));
    assert!(
        text(&other.stderr).contains("in both"),
        "{}",
        text(&other.stderr)
    );

    // The Slurm scripts: an array of 3 exclusive nodes, each one shard, then the merge.
    let slurm_dir = path("slurm");
    let slurm = |reproduce: &[&str]| {
        let shards = [
            "slurm",
            "spoonhower-fig6",
            "--shards",
            "3",
            "--dir",
            &slurm_dir,
            "--",
        ];
        stealbench(&[&shards[..], reproduce].concat(), dir.path())
    };
    let out = slurm(&["--size", "quick"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let array = fs::read_to_string(dir.path().join("slurm/spoonhower-fig6.sbatch")).unwrap();
    for want in [
        "#SBATCH --array=1-3",
        "#SBATCH --exclusive",
        "--shard \"$SLURM_ARRAY_TASK_ID/3\"",
        "--size quick",
        // Each array job writes a directory of its own; a requeued task resumes its run.
        "out=results-spoonhower-fig6-shards/\"$SLURM_ARRAY_JOB_ID\"",
        "--out \"$out\"",
        "reproduce spoonhower-fig6 --resume \"$prev\"",
    ] {
        assert!(array.contains(want), "{want}: {array}");
    }
    let merge = fs::read_to_string(dir.path().join("slurm/spoonhower-fig6-merge.sbatch")).unwrap();
    assert!(
        merge.contains(
            "merge results-spoonhower-fig6-shards/\"$array\"/spoonhower-fig6/*-shard-*-of-3 "
        ),
        "{merge}"
    );
    let submit = fs::read_to_string(dir.path().join("slurm/spoonhower-fig6-submit.sh")).unwrap();
    assert!(
        submit.contains("spoonhower-fig6-merge.sbatch \"${array%%;*}\""),
        "{submit}"
    );
    for f in [
        "spoonhower-fig6.sbatch",
        "spoonhower-fig6-merge.sbatch",
        "spoonhower-fig6-submit.sh",
    ] {
        let check = Command::new("bash")
            .args(["-n", dir.path().join("slurm").join(f).to_str().unwrap()])
            .status()
            .unwrap();
        assert!(check.success(), "{f} is not valid bash");
    }
    let bad = slurm(&["--out", "x"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn reproduce_the_memory_fit_end_to_end() {
    // libfork's Table II on fib at four P (oversubscribed past this machine's CPUs): each point
    // records its process's resident set, and the table fits the exponent to the four peaks.
    let dir = TempDir::with_prefix("stealbench-cli-memfit-").unwrap();
    let results = dir.path().join("results");
    let figures = dir.path().join("figures");
    let fib = ["--workloads", "fib", "--runtimes", "libfork"];
    let workers = ["--workers", "1,2,3,4"];
    let dirs = dirs_args(results.to_str().unwrap(), figures.to_str().unwrap());
    let args = reproduce_args("libfork-table2", &[&fib[..], &workers, &dirs].concat());
    let out = stealbench(&args, dir.path());
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
            "- Runtime settings: `libfork/victim=numa/pinning=scatter`, \
             `libfork/idle=busy/victim=numa/pinning=scatter` with the settings their spellings give"
        ),
        "{md}"
    );
    let row = md
        .lines()
        .find(|l| l.starts_with("| fib | fj | libfork/victim=numa/pinning=scatter |"))
        .unwrap();
    // n ± its error, the paper's beside, four points.
    assert!(
        row.contains(" ± ") && row.contains("[paper 0.86 ± 0.08]"),
        "{row}"
    );
    assert!(row.contains("| 4 |"), "{row}");
    let run = run_dirs(&results, "libfork-table2").remove(0);
    let raw = fs::read_to_string(run.join("raw.csv")).unwrap();
    assert!(
        raw.contains(",process_rss_before_kb,") && raw.contains(",process_hwm_kb,"),
        "{raw}"
    );

    // The same points recorded under libfork's arms of before its paper's settings: a merge
    // says which arms of the figure replaced them, here and in the notes.
    fs::write(
        run.join("raw.csv"),
        raw.replace("/victim=numa/pinning=scatter,", ","),
    )
    .unwrap();
    // The grid's own arms are then missing: merge refuses, and `--force` merges what there is
    // (exit 1: incomplete).
    let merged = dir.path().join("merged");
    let dirs = dirs_args(merged.to_str().unwrap(), figures.to_str().unwrap());
    let args = [&["merge", run.to_str().unwrap()][..], &dirs].concat();
    let refused = stealbench(&args, dir.path());
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    let out = stealbench(&[&args[..], &["--force"]].concat(), dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let said = "the run has points of arms this figure no longer runs, in none of its tables or \
                plots: libfork (replaced by libfork/victim=numa/pinning=scatter), libfork/idle=busy \
                (replaced by libfork/idle=busy/victim=numa/pinning=scatter)";
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
    // The arm's pinning= replaces --pinning, and the header says what the pool got.
    let dir = TempDir::with_prefix("stealbench-cli-runpin-").unwrap();
    let pinning = ["--size", "test", "--reps", "1", "--pinning", "none"];
    let out = stealbench(
        &run_args("libfork/pinning=compact", "fib", "fj", "1", &pinning),
        dir.path(),
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    let header = stdout.lines().next().unwrap();
    assert!(
        header.starts_with("libfork/pinning=compact fib fj P=1 size=test pinning=compact "),
        "{header}"
    );
    // Nothing to pin on the serial pool: refused, one line.
    let out = stealbench(
        &run_args(
            "serial/pinning=compact",
            "fib",
            "fj",
            "1",
            &["--size", "test"],
        ),
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("no worker to pin: drop pinning="),
        "{}",
        text(&out.stderr)
    );
    // The same as the run's --pinning.
    let out = stealbench(
        &run_args(
            "serial",
            "fib",
            "fj",
            "1",
            &["--size", "test", "--pinning", "compact"],
        ),
        dir.path(),
    );
    refused(
        &out,
        "--pinning compact: serial runs every task on the calling thread, so there is no worker \
         to pin: drop --pinning",
        "serial --pinning",
    );
    // A reproduce with --pinning measures its serial rows unpinned (T_s among them).
    let args = fib_fig3_args(
        "serial,abp",
        "1",
        &["--pinning", "compact", "--out", "r", "--figures-dir", "f"],
    );
    let out = stealbench(&args, dir.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// The children of process `pid` (from `/proc/PID/task/PID/children`, else every process's
/// parent in `/proc/*/stat`).
fn children_of(pid: u32) -> Vec<u32> {
    if let Ok(list) = fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")) {
        return list
            .split_whitespace()
            .filter_map(|c| c.parse().ok())
            .collect();
    }
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|c| {
            fs::read_to_string(format!("/proc/{c}/stat")).is_ok_and(|stat| {
                // `pid (comm) state ppid ...`: comm may hold spaces and parentheses.
                stat.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok())
                    == Some(pid)
            })
        })
        .collect()
}

/// Whether process `pid` still runs (a zombie waiting to be reaped does not).
fn alive(pid: u32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/status")).is_ok_and(|s| {
        !s.lines()
            .any(|l| l.starts_with("State:") && l.contains('Z'))
    })
}

/// The binary with `args` in `cwd`, its T_s points (the kernel at P = 1) hanging
/// (`STEALBENCH_FAULT`).
fn hanging(args: &[&str], cwd: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.args(args)
        .env("STEALBENCH_FAULT", "serial/front=kernel@1=hang")
        .current_dir(cwd);
    c
}

/// A `reproduce` SIGKILLed as soon as its child process exists (before the child could have
/// set anything up) leaves no child running: every child hangs (`STEALBENCH_FAULT`), so one
/// that did not die with its parent would still be there.
#[test]
fn children_die_with_a_killed_parent() {
    let dir = TempDir::with_prefix("stealbench-cli-orphans-").unwrap();
    let mut children = Vec::new();
    for _ in 0..20 {
        let mut parent = hanging(
            &fib_fig3_args("serial", "1", &dirs_args("r", "f")),
            dir.path(),
        )
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let child = loop {
            if let Some(&c) = children_of(parent.id()).first() {
                break c;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "reproduce started no child"
            );
        };
        parent.kill().unwrap();
        parent.wait().unwrap();
        children.push(child);
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    while children.iter().any(|&c| alive(c)) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let survivors: Vec<u32> = children.into_iter().filter(|&c| alive(c)).collect();
    for &c in &survivors {
        let _ = Command::new("kill").args(["-9", &c.to_string()]).status();
    }
    assert!(
        survivors.is_empty(),
        "{} of 20 children outlived their parent",
        survivors.len()
    );
}

/// A child whose parent died before it could ask to die with it (its parent is not the one
/// `STEALBENCH_PARENT_PID` names) exits at once instead of measuring.
#[test]
fn a_child_whose_parent_is_gone_exits_at_once() {
    let dir = TempDir::with_prefix("stealbench-cli-parentgone-").unwrap();
    let args = run_args("serial", "fib", "fj", "1", &["--size", "test", "--json"]);
    let mut child = hanging(&args, dir.path())
        .env(
            "STEALBENCH_PARENT_PID",
            (std::process::id() + 1).to_string(),
        )
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if std::time::Instant::now() > deadline {
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    if status.is_none() {
        child.kill().unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(status.and_then(|s| s.code()), Some(1), "still running");
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr).contains("parent process (STEALBENCH_PARENT_PID="),
        "{}",
        text(&out.stderr)
    );
}

/// The run directories of the two shards of ProWS Figure 3 on fib ([`fib_fig3_args`]) on
/// serial and abp at `workers`, then `extra`, measured in `dir` into `r` (figures into `f`).
fn two_fig3_shards(dir: &Path, workers: &str, extra: &[&str]) -> Vec<PathBuf> {
    (1..=2)
        .map(|i| {
            let shard = format!("{i}/2");
            let rest = [extra, &dirs_args("r", "f"), &["--shard", &shard]].concat();
            let out = stealbench(&fib_fig3_args("serial,abp", workers, &rest), dir);
            assert!(out.status.success(), "{}", text(&out.stderr));
            shard_dir(&dir.join("r"), "prows-fig3", i, 2)
        })
        .collect()
}

/// The run directory of ProWS Figure 3 on fib on serial at P = 1 ([`fib_fig3_args`]),
/// measured in `dir` into `out` (figures into `f`).
fn serial_fig3_run(dir: &Path, out: &str) -> PathBuf {
    let done = stealbench(&fib_fig3_args("serial", "1", &dirs_args(out, "f")), dir);
    assert!(done.status.success(), "{}", text(&done.stderr));
    run_dirs(&dir.join(out), "prows-fig3").remove(0)
}

/// Copies the files of run directory `from` to `to`.
fn copy_run(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// `merge` refuses a shard whose raw.csv lost its last line, is empty, missing, cut short or
/// has a row twice, and a set of shards that lacks one: one line naming what is wrong, exit
/// code 2, the shards unchanged. `--force` merges the whole measurements and exits 1.
#[test]
fn merge_refuses_damaged_or_missing_shards() {
    let dir = TempDir::with_prefix("stealbench-cli-damaged-").unwrap();
    let shards = two_fig3_shards(dir.path(), "1,2", &["--reps", "2"]);
    let second = shards[1].to_str().unwrap();
    let merge = |first: &Path, extra: &[&str]| {
        let mut args = vec!["merge", first.to_str().unwrap(), second];
        args.extend_from_slice(&dirs_args("m", "mf"));
        args.extend_from_slice(extra);
        stealbench(&args, dir.path())
    };
    let raw = fs::read_to_string(shards[0].join("raw.csv")).unwrap();
    assert!(raw.lines().count() >= 3, "{raw}");
    let lines: Vec<&str> = raw.lines().collect();
    let last_lost = lines[..lines.len() - 1].join("\n") + "\n";
    let twice = format!("{raw}{}\n", lines[lines.len() - 1]);
    let cut = &raw[..raw.len() - 3];
    let cases: [(&str, Option<&str>, &str); 5] = [
        (
            "lost",
            Some(&last_lost),
            "1 of 2 repetitions: resume the run",
        ),
        ("empty", Some(""), "raw.csv is empty: resume the run"),
        ("missing", None, "raw.csv is missing: resume the run"),
        ("twice", Some(&twice), "recorded twice: resume the run"),
        (
            "cut",
            Some(cut),
            "its last line is cut short: resume the run",
        ),
    ];
    for (name, content, want) in cases {
        let d = dir.path().join(name);
        copy_run(&shards[0], &d);
        match content {
            Some(c) => fs::write(d.join("raw.csv"), c).unwrap(),
            None => fs::remove_file(d.join("raw.csv")).unwrap(),
        }
        let out = merge(&d, &[]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(err.contains(want), "{name}: {err}");
        if let Some(c) = content {
            assert_eq!(fs::read_to_string(d.join("raw.csv")).unwrap(), c, "{name}");
        }
    }
    assert!(!dir.path().join("m").exists(), "nothing merged");

    // One of the two shards.
    let out = stealbench(
        &[&["merge", second][..], &dirs_args("m", "mf")].concat(),
        dir.path(),
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("1 of 2 shards given (shard 1/2 missing)"),
        "{err}"
    );

    // --force merges what is whole, says what is missing, and exits 1.
    // A cell a spreadsheet would run (a note of a row this build cannot read, copied
    // through) is refused, even with --force.
    let formula = dir.path().join("formula");
    copy_run(&shards[0], &formula);
    let unread = raw.replacen("\nabp,", "\n=1+2,", 1);
    assert_ne!(unread, raw);
    fs::write(formula.join("raw.csv"), unread).unwrap();
    let out = merge(&formula, &["--force"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("runtime cell \"=1+2\" would run as a formula"),
        "{err}"
    );
    assert!(!dir.path().join("m").exists(), "nothing merged");

    let out = merge(&dir.path().join("lost"), &["--force"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("incomplete: the merged run lacks 1 of"),
        "{err}"
    );
    // The whole shards merge.
    let out = merge(&shards[0], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

/// `merge --force` of shards measured on different machines (ProWS Figure 3 at P = 1, 2, 16 in
/// two shards, shard 1's meta.json a 64-core, 128-CPU machine's; on the claims' two runtimes and
/// one round, to keep the test short: the machines gate comes before the rounds') records
/// which machine measured each point and judges each point on its own machine: P = 16 is
/// oversubscribed, with no speedup, where the small machine measured it and not where the big
/// one did. Every machine is named on the page, in report.html and in the runs table; a claim
/// whose points come from both machines is inconclusive and says so, one whose points one
/// machine measured is not.
#[test]
fn merge_force_across_machines_judges_each_point_on_its_machine() {
    let dir = TempDir::with_prefix("stealbench-cli-machines-").unwrap();
    let shards: Vec<PathBuf> = (1..=2)
        .map(|i| {
            let shard = format!("{i}/2");
            let args = [
                &["--workers", "1,2,16", "--shard", &shard][..],
                &["--runtimes", "abp,prows/futures=nostack", "--rounds", "1"],
                &dirs_args("r", "f"),
            ];
            let out = stealbench(&reproduce_args("prows-fig3", &args.concat()), dir.path());
            assert!(out.status.success(), "{}", text(&out.stderr));
            shard_dir(&dir.path().join("r"), "prows-fig3", i, 2)
        })
        .collect();
    let read_json = |p: &Path| -> serde_json::Value {
        serde_json::from_str(&fs::read_to_string(p).unwrap()).unwrap()
    };
    // Shard 1 as if measured on a larger machine.
    let meta_path = shards[0].join("meta.json");
    let mut meta = read_json(&meta_path);
    let small = meta["machine"]["cpu_model"].as_str().unwrap().to_string();
    let small_cpus = meta["machine"]["logical_cpus"].as_u64().unwrap();
    assert!(
        small_cpus < 16,
        "this test needs a machine of fewer than 16 CPUs"
    );
    meta["machine"]["cpu_model"] = "Big Machine 128".into();
    meta["machine"]["cores"] = 64.into();
    meta["machine"]["logical_cpus"] = 128.into();
    fs::write(&meta_path, meta.to_string()).unwrap();
    let (a, b) = (shards[0].to_str().unwrap(), shards[1].to_str().unwrap());
    let out = stealbench(
        &[&["merge", a, b][..], &dirs_args("m", "mf")].concat(),
        dir.path(),
    );
    refused(&out, "differ", "machines differ");
    let out = stealbench(
        &[&["merge", "--force", a, b][..], &dirs_args("m", "mf")].concat(),
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let merged = &run_dirs(&dir.path().join("m"), "prows-fig3")[0];

    // Each point's machine, from meta.json: every point of the run on exactly one.
    let meta = read_json(&merged.join("meta.json"));
    let machines = meta["machines"].as_array().unwrap();
    assert_eq!(machines.len(), 2, "{meta}");
    let mut big_of: BTreeMap<String, bool> = BTreeMap::new();
    for m in machines {
        let big = m["machine"]["cpu_model"] == "Big Machine 128";
        for p in m["points"].as_array().unwrap() {
            assert!(
                big_of
                    .insert(p.as_str().unwrap().to_string(), big)
                    .is_none(),
                "{meta}"
            );
        }
    }
    assert_eq!(meta["machine"]["logical_cpus"].as_u64(), Some(small_cpus));

    // P = 16 is oversubscribed on the small machine alone; a point shows a speedup over its
    // row's T_1 only where neither is oversubscribed and one machine measured both.
    let summary = fs::read_to_string(merged.join("summary.csv")).unwrap();
    let mut rows = csv::Reader::from_reader(summary.as_bytes());
    let header = rows.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let mut sixteen = [0, 0];
    for r in rows.records() {
        let r = r.unwrap();
        let point = format!(
            "{} {}-{} P={}",
            &r[col("runtime")],
            &r[col("workload")],
            &r[col("variant")],
            &r[col("workers")]
        );
        let big = big_of[&point];
        let t1 = format!(
            "{} {}-{} P=1",
            &r[col("runtime")],
            &r[col("workload")],
            &r[col("variant")]
        );
        let over = !big && r[col("workers")].parse::<u64>().unwrap() > small_cpus;
        if &r[col("status")] != "ok" || &r[col("workers")] == "1" {
            continue;
        }
        assert_eq!(
            &r[col("oversubscribed")],
            &over.to_string(),
            "{point}: {summary}"
        );
        assert_eq!(
            r[col("scalability_t1")].is_empty(),
            over || big_of.get(&t1) != Some(&big),
            "{point}: {summary}"
        );
        if &r[col("workers")] == "16" {
            sixteen[usize::from(big)] += 1;
            assert_eq!(over, !big, "{point}");
        }
    }
    assert!(
        sixteen[0] > 0 && sixteen[1] > 0,
        "P = 16 on both machines: {summary}"
    );

    // A claim is judged unless its points come from both machines.
    let claims = fs::read_to_string(merged.join("claims.csv")).unwrap();
    let mut rows = csv::Reader::from_reader(claims.as_bytes());
    let header = rows.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let reads: [(&str, &[&str]); 3] = [
        (
            "prows-fig3/scales-p16",
            &[
                "abp fib-fj P=1",
                "abp fib-fj P=16",
                "prows/futures=nostack fib-sf P=1",
                "prows/futures=nostack fib-sf P=16",
            ],
        ),
        (
            "prows-fig3/futures-cost-more",
            &["abp fib-fj P=1", "prows/futures=nostack fib-sf P=1"],
        ),
        (
            "prows-fig3/stack-switch-costs",
            &["prows fib-sf P=1", "prows/futures=nostack fib-sf P=1"],
        ),
    ];
    let mut mixes = [0, 0];
    for r in rows.records() {
        let r = r.unwrap();
        let Some((_, points)) = reads.iter().find(|(id, _)| &r[col("claim")] == *id) else {
            continue;
        };
        // The machines of the points it reads that the run measured.
        let on: BTreeSet<bool> = points
            .iter()
            .filter_map(|p| big_of.get(*p).copied())
            .collect();
        mixes[usize::from(on.len() == 2)] += 1;
        let mixed = r[col("reason")].starts_with("its points come from 2 machines: ");
        assert_eq!(mixed, on.len() == 2, "{}: {claims}", &r[col("claim")]);
        if mixed {
            assert_eq!(&r[col("verdict")], "inconclusive", "{claims}");
            assert!(r[col("reason")].contains("Big Machine 128 (128 logical CPUs)"));
            assert!(r[col("reason")].contains(&small), "{claims}");
        }
    }
    assert!(
        mixes[0] > 0 && mixes[1] > 0,
        "a claim of one machine and one of two: {mixes:?} {claims}"
    );

    // Every machine is named: the page, and report's runs table and report.html.
    let page = fs::read_to_string(dir.path().join("mf/prows-fig3.md")).unwrap();
    assert!(page.contains("- Machines (merged with --force"), "{page}");
    assert!(
        page.contains("Big Machine 128, 64 cores / 128 logical CPUs"),
        "{page}"
    );
    assert!(
        page.contains(&format!("{small}'s {small_cpus} logical CPUs")),
        "{page}"
    );
    let out = stealbench(&["report", "m", "--figures-dir", "rf"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let readme = fs::read_to_string(dir.path().join("rf/README.md")).unwrap();
    let row = readme
        .lines()
        .find(|l| l.starts_with("| [prows-fig3]"))
        .unwrap();
    assert!(row.contains("Big Machine 128, 64 cores"), "{row}");
    assert!(row.contains(&small), "{row}");
    let html = fs::read_to_string(dir.path().join("rf/report.html")).unwrap();
    assert!(
        html.contains("Big Machine 128, 64 cores / 128 logical CPUs"),
        "{html}"
    );

    // A run of one machine names no machines per point.
    let one = read_json(&shards[1].join("meta.json"));
    assert!(one.get("machines").is_none(), "{one}");
}

/// `raw.csv` with the cell `column` of its first row set to `value`.
fn with_cell(raw: &str, column: &str, value: &str) -> String {
    let mut r = csv::Reader::from_reader(raw.as_bytes());
    let header = r.headers().unwrap().clone();
    let at = header.iter().position(|h| h == column).unwrap();
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(&header).unwrap();
    for (i, rec) in r.records().enumerate() {
        let rec = rec.unwrap();
        let cells: Vec<&str> = (0..rec.len())
            .map(|c| if i == 0 && c == at { value } else { &rec[c] })
            .collect();
        w.write_record(cells).unwrap();
    }
    String::from_utf8(w.into_inner().unwrap()).unwrap()
}

/// `report` reads a run through the checks of `merge`: a `raw.csv` with a repetition twice, a
/// failed check with status ok, a round the run does not have, round 0, a row of another size,
/// or none at all is one line and exit code 2, and nothing is rendered.
#[test]
fn report_refuses_a_damaged_run() {
    let dir = TempDir::with_prefix("stealbench-cli-report-damaged-").unwrap();
    let rest = [&["--reps", "2"][..], &dirs_args("r", "f")].concat();
    let out = stealbench(&fib_fig3_args("serial,abp", "1", &rest), dir.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let run = &run_dirs(&dir.path().join("r"), "prows-fig3")[0];
    let raw = fs::read_to_string(run.join("raw.csv")).unwrap();
    let last = raw.lines().last().unwrap();
    let report_refused = |d: &Path, want: &str, name: &str| {
        let args = ["report", d.to_str().unwrap(), "--figures-dir", "rf"];
        refused(&stealbench(&args, dir.path()), want, name);
    };
    // (case, column of the first row, its new value, what the refusal says)
    let edits = [
        ("check", "check", "failed: x", "ok with check 'failed: x'"),
        ("round", "round", "2", "round 2) is not of this run"),
        ("zero", "round", "0", "round 0: rounds count from 1"),
        ("size", "size", "quick", "(size quick, round 1) is not of"),
    ];
    let mut cases: Vec<(&str, Option<String>, &str)> = edits
        .iter()
        .map(|&(name, column, value, want)| (name, Some(with_cell(&raw, column, value)), want))
        .collect();
    cases.push(("twice", Some(format!("{raw}{last}\n")), "recorded twice"));
    cases.push(("missing", None, "raw.csv is missing"));
    for (name, content, want) in cases {
        let d = dir.path().join(name);
        copy_run(run, &d);
        match &content {
            Some(c) => fs::write(d.join("raw.csv"), c).unwrap(),
            None => fs::remove_file(d.join("raw.csv")).unwrap(),
        }
        report_refused(&d, want, name);
        assert!(!dir.path().join("rf/prows-fig3.md").exists(), "{name}");
    }
    // meta.json settings that merge refuses: a runtime the figure does not run, another
    // figure's id over this one's data.
    let meta = fs::read_to_string(run.join("meta.json")).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&meta).unwrap();
    json["settings"]["runtimes"] = serde_json::json!(["fibril"]);
    let mut other: serde_json::Value = serde_json::from_str(&meta).unwrap();
    other["id"] = "prows-fig2".into();
    for (name, json, want) in [
        ("fibril", json, "its meta.json is invalid"),
        ("other-id", other, "unknown workload 'fib'"),
    ] {
        let d = dir.path().join(name);
        copy_run(run, &d);
        fs::write(d.join("meta.json"), json.to_string()).unwrap();
        report_refused(&d, want, name);
    }

    let out = stealbench(&["report", "r", "--figures-dir", "rf"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    // A shard, newer than the whole run, is no figure's run: report leaves it out and says so.
    let shard = [
        &["--reps", "2", "--shard", "1/2"][..],
        &dirs_args("r", "sf"),
    ]
    .concat();
    let out = stealbench(&fib_fig3_args("serial,abp", "1", &shard), dir.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = stealbench(&["report", "r", "--figures-dir", "rf"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("-shard-1-of-2 is shard 1/2 of a run of prows-fig3, left out"),
        "{err}"
    );
    // The whole run is the figure's (its directory named, then `)`, or `;` and a note on its
    // build where the tree that built this binary was dirty); the shard is not.
    let whole = run.file_name().unwrap().to_str().unwrap();
    let listed = text(&out.stdout);
    assert!(
        [')', ';']
            .iter()
            .any(|end| listed.contains(&format!("prows-fig3/{whole}{end}"))),
        "{listed}"
    );
    assert!(!listed.contains("-shard-1-of-2"), "{listed}");
    // A shard alone: nothing to report (the note, then the error).
    let shard = shard_dir(&dir.path().join("r"), "prows-fig3", 1, 2);
    let args = ["report", shard.to_str().unwrap(), "--figures-dir", "rf2"];
    let out = stealbench(&args, dir.path());
    let err = text(&out.stderr);
    let last = err.lines().last().unwrap_or_default();
    assert_eq!(
        (out.status.code(), err.lines().count()),
        (Some(2), 2),
        "{err}"
    );
    assert!(last.contains("no finished run found"), "{err}");
}

/// A FIFO or a link to `/dev/zero` at `raw.csv` is refused by `report`, `merge` and
/// `--resume`, naming the file, exit code 3: never waited on, never read without end.
#[test]
fn only_a_regular_raw_csv_is_read() {
    let dir = TempDir::with_prefix("stealbench-cli-fifo-").unwrap();
    let run = &serial_fig3_run(dir.path(), "r");
    let raw = run.join("raw.csv");
    for kind in ["fifo", "zero"] {
        fs::remove_file(&raw).unwrap();
        if kind == "fifo" {
            assert!(Command::new("mkfifo").arg(&raw).status().unwrap().success());
        } else {
            std::os::unix::fs::symlink("/dev/zero", &raw).unwrap();
        }
        let r = run.to_str().unwrap();
        for args in [
            vec!["report", r, "--figures-dir", "rf"],
            vec!["merge", "--force", r, "--out", "m", "--figures-dir", "mf"],
            vec!["reproduce", "prows-fig3", "--resume", r],
        ] {
            let out = stealbench(&args, dir.path());
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(3), "{kind} {args:?}: {err}");
            assert!(
                err.contains(&format!("{}: not a regular file", raw.display())),
                "{kind} {args:?}: {err}"
            );
        }
    }
}

/// Text from outside the code reaches the Markdown pages as text: a `|` in `--out` stays in
/// its table cell, a newline or raw HTML in `meta.json` starts no heading and no tag.
#[test]
fn outside_text_is_escaped_in_the_pages() {
    let dir = TempDir::with_prefix("stealbench-cli-mdescape-").unwrap();
    let run = &serial_fig3_run(dir.path(), "a|b");
    let meta_path = run.join("meta.json");
    let mut meta: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&meta_path).unwrap()).unwrap();
    meta["machine"]["cpu_model"] = "<img src=x>\n# boom".into();
    fs::write(&meta_path, meta.to_string()).unwrap();
    let out = stealbench(&["report", "a|b", "--figures-dir", "rf"], dir.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let readme = fs::read_to_string(dir.path().join("rf/README.md")).unwrap();
    let row = readme
        .lines()
        .find(|l| l.starts_with("| [prows-fig3]"))
        .unwrap();
    assert_eq!(row.matches(" | ").count(), 6, "{row}");
    assert!(row.contains("`a\\|b/prows-fig3/"), "{row}");
    for page in [
        readme,
        fs::read_to_string(dir.path().join("rf/prows-fig3.md")).unwrap(),
    ] {
        assert!(page.contains("&lt;img src=x&gt; # boom"), "{page}");
        assert!(!page.contains("<img"), "{page}");
        assert!(!page.lines().any(|l| l.starts_with("# boom")), "{page}");
    }
}

/// SIGTERM at any moment of a merge leaves either the whole merged run or none of it, never
/// a directory of temporary files without `meta.json`, and an interrupted merge says so.
#[test]
fn a_merge_stopped_by_sigterm_leaves_all_or_nothing() {
    let dir = TempDir::with_prefix("stealbench-cli-mergeterm-").unwrap();
    let shards = two_fig3_shards(dir.path(), "1,2", &[]);
    for delay_ms in [0u64, 2, 5, 10, 20, 40, 80] {
        let out_dir = dir.path().join(format!("m{delay_ms}"));
        let child = Command::new(BIN)
            .arg("merge")
            .args(&shards)
            .args(["--figures-dir", "mf", "--out"])
            .arg(&out_dir)
            .current_dir(dir.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let killed = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let err = text(&out.stderr);
        let merged: Vec<PathBuf> = fs::read_dir(out_dir.join("prows-fig3"))
            .map(|d| d.map(|e| e.unwrap().path()).collect())
            .unwrap_or_default();
        match out.status.code() {
            Some(0) => {
                assert_eq!(merged.len(), 1, "{delay_ms} ms: {merged:?}");
                assert!(merged[0].join("meta.json").is_file(), "{delay_ms} ms");
                for e in fs::read_dir(&merged[0]).unwrap() {
                    let name = e.unwrap().file_name().to_string_lossy().into_owned();
                    assert!(!name.starts_with(".tmp-"), "{delay_ms} ms: {name}");
                }
            }
            Some(130) => {
                assert!(err.contains("interrupted: nothing merged"), "{err}");
                assert!(merged.is_empty(), "{delay_ms} ms: {merged:?}");
            }
            // Killed before it set its handlers: it had made nothing.
            None if killed.success() => assert!(merged.is_empty(), "{delay_ms} ms: {merged:?}"),
            other => panic!("{delay_ms} ms: exit {other:?}: {err}"),
        }
    }
}

/// A refused resume leaves nothing it made: no `.lock` in the run, no `--figures-dir`.
#[test]
fn a_refused_resume_leaves_nothing_behind() {
    let dir = TempDir::with_prefix("stealbench-cli-refusedresume-").unwrap();
    let run = &serial_fig3_run(dir.path(), "r");
    fs::remove_file(run.join(".lock")).unwrap();
    let out = stealbench(
        &[
            "reproduce",
            "prows-fig3",
            "--resume",
            run.to_str().unwrap(),
            "--workers",
            "1,2",
            "--figures-dir",
            "new-figures",
        ],
        dir.path(),
    );
    refused(&out, "1,2", "a resume with other workers");
    assert!(!run.join(".lock").exists(), "the refused resume left .lock");
    assert!(!dir.path().join("new-figures").exists());
}

/// An `--out` too deep for the run's files is refused before any point is measured.
#[test]
fn an_out_too_deep_for_its_files_is_refused_first() {
    let dir = TempDir::with_prefix("stealbench-cli-deepout-").unwrap();
    // 20 components of 200 bytes: 4,019 bytes, under PATH_MAX; the run's files are not.
    let deep: PathBuf = (0..20).map(|i| format!("{i:0>200}")).collect();
    let out = stealbench(
        &fib_fig3_args(
            "serial",
            "1",
            &["--out", deep.to_str().unwrap(), "--figures-dir", "f"],
        ),
        dir.path(),
    );
    refused(
        &out,
        "the path is too long for the files written in it",
        "deep --out",
    );
    assert!(!dir.path().join(&deep).join("prows-fig3").exists());
}

/// Writers into one figures directory at once (four `report`s) each succeed, and leave whole
/// files and no temporary file.
#[test]
fn concurrent_reports_into_one_directory_all_succeed() {
    let dir = TempDir::with_prefix("stealbench-cli-concurrent-").unwrap();
    serial_fig3_run(dir.path(), "r");
    for _ in 0..3 {
        let children: Vec<_> = (0..4)
            .map(|_| {
                Command::new(BIN)
                    .args(["report", "r", "--figures-dir", "f"])
                    .current_dir(dir.path())
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for c in children {
            let out = c.wait_with_output().unwrap();
            assert!(out.status.success(), "{}", text(&out.stderr));
        }
    }
    for e in fs::read_dir(dir.path().join("f")).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        assert!(!name.starts_with(".tmp-"), "{name} left");
        assert!(e.metadata().unwrap().len() > 0, "{name} is empty");
    }
}

/// `--resume` of a missing directory, of one that is not a run, or of a run whose meta.json
/// settings are invalid is one line and exit code 2, and leaves nothing behind; a `.lock`
/// that is a symbolic link is refused, its target untouched; a row recorded twice is measured
/// again, not counted twice.
#[test]
fn resume_checks_the_run_first() {
    let dir = TempDir::with_prefix("stealbench-cli-resumecheck-").unwrap();
    let resume = |d: &str| stealbench(&["reproduce", "prows-fig3", "--resume", d], dir.path());
    let out = resume("nowhere");
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cannot resume nowhere: no such directory"),
        "{err}"
    );
    fs::create_dir(dir.path().join("empty")).unwrap();
    let out = resume("empty");
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("not a run directory (it has no meta.json)"),
        "{err}"
    );
    assert_eq!(fs::read_dir(dir.path().join("empty")).unwrap().count(), 0);

    let rest = [&["--reps", "2"][..], &dirs_args("r", "f")].concat();
    let out = stealbench(&fib_fig3_args("serial", "1", &rest), dir.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let run = run_dirs(&dir.path().join("r"), "prows-fig3").remove(0);
    let meta = fs::read_to_string(run.join("meta.json")).unwrap();
    for (name, from, to, want) in [
        (
            "p0",
            "\"workers\": [\n      1\n    ]",
            "\"workers\": [0]",
            "P=0",
        ),
        (
            "reps0",
            "\"reps\": 2",
            "\"reps\": 0",
            "reps: 0 is not in 1..=10000",
        ),
        ("rt", "\"serial\"", "\"nosuch\"", "unknown runtime 'nosuch'"),
    ] {
        assert!(meta.contains(from), "{from}: {meta}");
        let d = dir.path().join(name);
        copy_run(&run, &d);
        fs::write(d.join("meta.json"), meta.replace(from, to)).unwrap();
        let out = resume(name);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains("its meta.json is invalid: "), "{name}: {err}");
        assert!(err.contains(want), "{name}: {err}");
    }

    // A planted .lock link (in place of the lock file the run left).
    let target = dir.path().join("precious");
    fs::write(&target, "keep me").unwrap();
    let _ = fs::remove_file(run.join(".lock"));
    std::os::unix::fs::symlink(&target, run.join(".lock")).unwrap();
    let out = resume(run.to_str().unwrap());
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains(".lock is a symbolic link"), "{err}");
    assert_eq!(fs::read_to_string(&target).unwrap(), "keep me");
    fs::remove_file(run.join(".lock")).unwrap();

    // Repetition 2 on two lines, repetition 1 lost: measured again.
    let raw = fs::read_to_string(run.join("raw.csv")).unwrap();
    let lines: Vec<&str> = raw.lines().collect();
    assert_eq!(lines.len(), 3, "{raw}");
    fs::write(
        run.join("raw.csv"),
        format!("{}\n{}\n{}\n", lines[0], lines[2], lines[2]),
    )
    .unwrap();
    let out = resume(run.to_str().unwrap());
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("(repetition 2 recorded twice)"), "{err}");
    let raw = fs::read_to_string(run.join("raw.csv")).unwrap();
    let reps: Vec<&str> = raw
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(6).unwrap())
        .collect();
    assert_eq!(reps, ["1", "2"], "{raw}");
}

/// `slurm` checks its settings and the reproduce options before writing a script.
#[test]
fn slurm_checks_every_setting() {
    let dir = TempDir::with_prefix("stealbench-cli-slurmcheck-").unwrap();
    let slurm = |args: &[&str]| {
        let mut a = vec!["slurm", "prows-fig3", "--dir", "s"];
        a.extend_from_slice(args);
        stealbench(&a, dir.path())
    };
    for (args, want) in [
        (
            &["--shards", "2", "--time", "banana"][..],
            "--time \"banana\": not a Slurm time limit",
        ),
        (&["--shards", "100000"], "--shards 100000: at most 1000"),
        (&["--shards", "500"], "some shards would measure nothing"),
        (
            &["--shards", "2", "--", "--workers", "0"],
            "the reproduce options after --: invalid value '0' for '--workers <WORKERS>': workers \
             must be at least 1",
        ),
        (
            &["--shards", "2", "--", "--size", "quik"],
            "did you mean 'quick'",
        ),
        (
            &["--shards", "2", "--partition", "cpu\n#SBATCH --mail-user=x"],
            "a control character",
        ),
        (
            &["--shards", "2", "--", "--runtimes", "serial\nrm -rf ~"],
            "a control character",
        ),
    ] {
        let out = slurm(args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!dir.path().join("s/prows-fig3.sbatch").exists(), "{args:?}");
    }
    let out = slurm(&["--shards", "2", "--time", "1-12:30", "--partition", "cpu"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let array = fs::read_to_string(dir.path().join("s/prows-fig3.sbatch")).unwrap();
    assert!(
        array.contains("#SBATCH --time=1-12:30\n#SBATCH --partition=cpu\n"),
        "{array}"
    );
}

/// `stealbench ARGS` in `cwd` with the environment variables `env` set.
fn stealbench_env(args: &[&std::ffi::OsStr], env: &[(&str, &str)], cwd: &Path) -> Output {
    let mut c = Command::new(BIN);
    c.args(args).current_dir(cwd);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("the binary runs")
}

/// Exit code 2 and one line containing `needle`.
fn refused(out: &Output, needle: &str, what: &str) {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    assert_eq!(err.lines().count(), 1, "{what}: {err}");
    assert!(err.contains(needle), "{what}: {err}");
}

/// The probe's hostile environment, paths and selections: each refused with one line and exit
/// code 2 before anything is created (no run directory, not even its lock).
#[test]
fn hostile_settings_are_refused_before_anything_is_created() {
    use std::ffi::{OsStr, OsString};
    use std::os::unix::ffi::OsStringExt;
    let dir = TempDir::with_prefix("stealbench-cli-hostile-").unwrap();
    let os = |v: &[&str]| -> Vec<OsString> { v.iter().map(OsString::from).collect() };
    let list = os(&["list"]);
    let list: Vec<&OsStr> = list.iter().map(OsString::as_os_str).collect();
    for (env, needle) in [
        (
            ("STEALBENCH_FENCE_SWITCHING", "bogus"),
            "STEALBENCH_FENCE_SWITCHING='bogus' is not a fence mode",
        ),
        (
            ("STEALBENCH_NO_MEMBARRIER", "yes"),
            "STEALBENCH_NO_MEMBARRIER='yes' must be 1",
        ),
        (("STEALBENCH_PARENT_PID", "abc"), "is not a process id"),
    ] {
        refused(&stealbench_env(&list, &[env], dir.path()), needle, env.0);
    }
    // Empty is unset, for the parent's pid and the fence settings alike.
    for env in [
        ("STEALBENCH_PARENT_PID", ""),
        ("STEALBENCH_NO_MEMBARRIER", ""),
        ("STEALBENCH_FENCE_SWITCHING", ""),
        ("STEALBENCH_NO_MEMBARRIER", "0"),
    ] {
        let out = stealbench_env(&list, &[env], dir.path());
        assert!(out.status.success(), "{env:?}: {}", text(&out.stderr));
    }
    let bad = OsString::from_vec(b"bad\xffdir".to_vec());
    let fig3 = os(&[
        "reproduce",
        "prows-fig3",
        "--size",
        "test",
        "--workers",
        "1",
        "--workloads",
        "fib",
    ]);
    for flag in ["--out", "--figures-dir", "--resume", "--hw-video"] {
        let mut args = fig3.clone();
        args.extend([OsString::from(flag), bad.clone()]);
        let args: Vec<&OsStr> = args.iter().map(OsString::as_os_str).collect();
        refused(
            &stealbench_env(&args, &[], dir.path()),
            "argument bad\\xffdir is not valid UTF-8",
            flag,
        );
    }
    let merge = [OsStr::new("merge"), bad.as_os_str()];
    refused(
        &stealbench_env(&merge, &[], dir.path()),
        "not valid UTF-8",
        "merge",
    );
    let results = dir.path().join("results");
    let results = results.to_str().unwrap();
    for (extra, needle) in [
        (
            &["--runtimes", "abp", "--shard", "1/1000"][..],
            "--shard 1/1000: prows-fig3 has ",
        ),
        (
            &["--runtimes", "fibril"][..],
            "--runtimes fibril: this figure does not run fibril (it runs: ",
        ),
    ] {
        let mut args = fig3.clone();
        args.extend(os(extra));
        args.extend(os(&["--out", results]));
        let args: Vec<&OsStr> = args.iter().map(OsString::as_os_str).collect();
        refused(&stealbench_env(&args, &[], dir.path()), needle, extra[1]);
    }
    // A simulation has no threads: --pinning is refused as the arm's pinning= is.
    let sim = os(&run_args(
        "abp/sim=unit",
        "fib",
        "fj",
        "2",
        &["--size", "test", "--pinning", "compact"],
    ));
    let sim: Vec<&OsStr> = sim.iter().map(OsString::as_os_str).collect();
    refused(
        &stealbench_env(&sim, &[], dir.path()),
        "a simulation runs no threads, so there is no worker to pin",
        "sim pinning",
    );
    let many = os(&run_args("abp/sim=unit", "fib", "fj", "2000", &[]));
    let many: Vec<&OsStr> = many.iter().map(OsString::as_os_str).collect();
    refused(
        &stealbench_env(&many, &[], dir.path()),
        "at most 1024 (P=2000 given), the limit of every runtime and simulation",
        "2000 workers",
    );
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        0,
        "something was created"
    );
}

/// The fence mode the command line's environment chooses reaches the pool, which says what it
/// applied, unless `--fence` (what a parent gives its child) chooses another; a runtime with
/// deques of its own library names none.
#[test]
fn run_applies_the_environments_fence_mode() {
    use std::ffi::OsStr;
    let dir = TempDir::with_prefix("stealbench-cli-fence-").unwrap();
    let header_with = |runtime: &str, env: &[(&str, &str)], extra: &[&str]| {
        let args = run_args(
            runtime,
            "fib",
            "fj",
            "2",
            &[&["--size", "test", "--reps", "1"][..], extra].concat(),
        );
        let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        let out = stealbench_env(&args, env, dir.path());
        let stdout = text(&out.stdout);
        assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
        stdout.lines().next().unwrap().to_string()
    };
    let header = |runtime: &str, env: &[(&str, &str)]| header_with(runtime, env, &[]);
    let fenced = header("abp", &[("STEALBENCH_NO_MEMBARRIER", "1")]);
    assert!(fenced.ends_with(" fence=fenced"), "{fenced}");
    let given = header_with(
        "abp",
        &[("STEALBENCH_NO_MEMBARRIER", "1")],
        &["--fence", "eager"],
    );
    // `eager`, or `fenced` where the kernel refuses membarrier: as without the environment.
    assert!(
        given.ends_with(" fence=eager") || given.ends_with(" fence=fenced"),
        "{given}"
    );
    assert_eq!(given, header_with("abp", &[], &["--fence", "eager"]));
    let h = header("prows", &[("STEALBENCH_FENCE_SWITCHING", "0")]);
    // `asymmetric`, or `fenced` where the kernel refuses membarrier.
    assert!(
        h.ends_with(" fence=asymmetric") || h.ends_with(" fence=fenced"),
        "{h}"
    );
    let rayon = header("rayon", &[("STEALBENCH_NO_MEMBARRIER", "1")]);
    assert!(!rayon.contains("fence="), "{rayon}");
}

/// Output that cannot be written (`/dev/full`) is an I/O failure, exit 3 with one line; a
/// reader that stops reading (a closed pipe) costs the text only.
#[test]
fn stdout_that_cannot_be_written_exits_3_and_a_closed_pipe_is_silent() {
    let dir = TempDir::with_prefix("stealbench-cli-devfull-").unwrap();
    for args in [
        vec!["list"],
        run_args(
            "serial",
            "fib",
            "fj",
            "1",
            &["--size", "test", "--reps", "1"],
        ),
    ] {
        let out = Command::new(BIN)
            .args(&args)
            .current_dir(dir.path())
            .stdout(fs::File::create("/dev/full").unwrap())
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.contains("cannot write to stdout: No space left"),
            "{err}"
        );
    }
    let mut child = Command::new(BIN)
        .arg("list")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
}

/// A fiber runtime that cannot map its stacks (`ulimit -v`) says it could not start, as the
/// library runtimes do when they cannot spawn their threads, and is not killed by a signal.
#[test]
fn a_fiber_runtime_without_address_space_could_not_start() {
    let dir = TempDir::with_prefix("stealbench-cli-ulimit-").unwrap();
    for runtime in ["abp", "prows", "fibril"] {
        let script = format!(
            "ulimit -v 200000 && exec \"$0\" run --runtime {runtime} --workload fib --variant \
             fj --workers 2 --size test --reps 1 --stack-size 1G"
        );
        let out = Command::new("sh")
            .args(["-c", &script, BIN])
            .current_dir(dir.path())
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{runtime}: {err}");
        assert!(
            err.contains(&format!("{runtime} could not start")) && err.contains("fiber stacks"),
            "{runtime}: {err}"
        );
    }
}

/// A point's record is what its process reported it ran: a child that reports parameters of
/// its own (the fault hook's `params`) has them in raw.csv, with the pool configuration it
/// started (the fence mode its deques applied among them), and in meta.json's `ran`. A resume by another machine or build (here: meta.json
/// says two more logical CPUs) is refused in one line, exit 2, before anything changes.
#[test]
fn a_points_record_is_its_childs_and_a_resume_must_be_on_its_machine() {
    let dir = TempDir::with_prefix("stealbench-cli-child-record-").unwrap();
    let dirs = dirs_args("r", "f");
    let out = Command::new(BIN)
        .args(fib_fig3_args("abp,abp", "1", &dirs))
        .env("STEALBENCH_FAULT", "abp@1=params")
        .env("STEALBENCH_NO_MEMBARRIER", "1")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let run = &run_dirs(&dir.path().join("r"), "prows-fig3")[0];
    let mut r = csv::Reader::from_path(run.join("raw.csv")).unwrap();
    let h = r.headers().unwrap().clone();
    let col = |name: &str| h.iter().position(|c| c == name).unwrap();
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    let abp: Vec<_> = rows
        .iter()
        .filter(|r| &r[col("runtime")] == "abp")
        .collect();
    assert!(!abp.is_empty());
    for row in &abp {
        assert!(row[col("params")].ends_with(" (misreported)"), "{row:?}");
        assert!(row[col("pool")].contains("workers=1"), "{row:?}");
        // The fence mode the child's pool applied, from the environment of the command line.
        assert!(row[col("pool")].contains("fence=fenced"), "{row:?}");
        // The counters are columns.
        assert!(row[col("steals")].parse::<u64>().is_ok(), "{row:?}");
    }
    let serial = rows
        .iter()
        .find(|r| &r[col("runtime")] == "serial/front=kernel")
        .unwrap();
    assert!(!serial[col("params")].contains("misreported"));
    assert!(!serial[col("pool")].contains("fence="), "{serial:?}");
    let meta_path = run.join("meta.json");
    let meta = fs::read_to_string(&meta_path).unwrap();
    assert!(meta.contains("(misreported)"), "{meta}");
    // --runtimes abp,abp is stored once.
    assert!(
        meta.contains("\"runtimes\": [\n      \"abp\"\n    ]"),
        "{meta}"
    );

    let v: serde_json::Value = serde_json::from_str(&meta).unwrap();
    let cpus = v["machine"]["logical_cpus"].as_u64().unwrap();
    let moved = meta.replace(
        &format!("\"logical_cpus\": {cpus}"),
        &format!("\"logical_cpus\": {}", cpus + 2),
    );
    let moved = moved.replace("\"finished\": true", "\"finished\": false");
    fs::write(&meta_path, &moved).unwrap();
    let before = fs::read(run.join("raw.csv")).unwrap();
    let resume =
        ["reproduce", "prows-fig3", "--resume", run.to_str().unwrap()].map(std::ffi::OsStr::new);
    // The run's pools were fenced: a resume whose environment chooses another mode would mix
    // two in one table.
    let out = stealbench_env(&resume, &[], dir.path());
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("the fence mode (STEALBENCH_FENCE_SWITCHING, STEALBENCH_NO_MEMBARRIER)")
            && err.contains("fenced, not adaptive"),
        "{err}"
    );
    let out = stealbench_env(&resume, &[("STEALBENCH_NO_MEMBARRIER", "1")], dir.path());
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("it was measured with logical CPUs"), "{err}");
    assert_eq!(fs::read_to_string(&meta_path).unwrap(), moved);
    assert_eq!(fs::read(run.join("raw.csv")).unwrap(), before);
}

/// A resume whose raw.csv has a header of no known shape is refused in one line, exit 2,
/// before meta.json changes.
#[test]
fn a_resume_of_a_bad_raw_csv_changes_nothing() {
    let dir = TempDir::with_prefix("stealbench-cli-bad-header-").unwrap();
    let dirs = dirs_args("r", "f");
    let out = stealbench(&fib_fig3_args("serial", "1", &dirs), dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let run = &run_dirs(&dir.path().join("r"), "prows-fig3")[0];
    let meta_path = run.join("meta.json");
    let meta = fs::read_to_string(&meta_path)
        .unwrap()
        .replace("\"finished\": true", "\"finished\": false");
    fs::write(&meta_path, &meta).unwrap();
    fs::write(run.join("raw.csv"), "what,is,this\n").unwrap();
    let out = stealbench(
        &["reproduce", "prows-fig3", "--resume", run.to_str().unwrap()],
        dir.path(),
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("unexpected header"), "{err}");
    assert!(text(&out.stdout).is_empty(), "{}", text(&out.stdout));
    assert_eq!(fs::read_to_string(&meta_path).unwrap(), meta);
}

/// A full disk, as a file-size limit stands in for it (`ulimit -f`, with SIGXFSZ ignored so a
/// write past it fails with EFBIG): the figure files that do not fit are refused with one line
/// naming the file, exit 3 (not 1, which says a point failed), and none of them is left torn
/// or half-written under its name, nor a temporary file beside it.
#[test]
fn a_full_disk_is_an_io_failure_naming_the_file_and_tears_nothing() {
    let dir = TempDir::with_prefix("stealbench-cli-full-disk-").unwrap();
    let args = fib_fig3_args("abp", "1,2", &dirs_args("r", "f"));
    // 40 blocks (of 512 bytes in dash, 1 KiB in bash): raw.csv, summary.csv and the .md fit,
    // the SVG does not.
    let script = "trap '' XFSZ; ulimit -f 40; exec \"$@\"";
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg("sh")
        .arg(BIN)
        .args(&args)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.contains("prows-fig3.svg") && last.contains("File too large"),
        "{err}"
    );
    assert!(
        !last.contains(".tmp-"),
        "the temporary name is not the user's: {last}"
    );
    for d in [
        dir.path().join("f"),
        run_dirs(&dir.path().join("r"), "prows-fig3")[0].clone(),
    ] {
        for e in fs::read_dir(&d).into_iter().flatten() {
            let name = e.unwrap().file_name().into_string().unwrap();
            assert!(!name.starts_with(".tmp-"), "{name} left in {}", d.display());
            assert!(
                !name.ends_with(".svg") && !name.ends_with(".png"),
                "{name} in {}",
                d.display()
            );
        }
    }
}
