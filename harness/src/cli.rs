//! The command line (clap derive) and its checks: every bad value becomes one line on stderr
//! naming the nearest valid name, and exit code 2.

use crate::failure::Failure;
use crate::runtimes::Arm;
use crate::spec::{
    MAX_REPS, MAX_ROUNDS, Measure, PointSpec, WorkloadSpec, count, fib_n, parse_arm, parse_fence,
    parse_pinning, parse_size, parse_stack_size, parse_variant, parse_workers, seconds,
};
use clap::{Args, Parser, Subcommand};
use std::path::{Path, PathBuf};
use stealbench_schedulers::{FenceMode, Pinning};
use stealbench_workloads::{InputOptions, Size, Variant};

/// Work-stealing schedulers from five research papers behind one trait, with the papers'
/// figures regenerated on this machine.
#[derive(Debug, Parser)]
#[command(name = "stealbench", version)]
pub(crate) struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// List the figures and tables, runtimes and workloads this build knows.
    List,
    /// Measure one point in this process: warm-up, then timed repetitions, each checked.
    Run(RunArgs),
    /// Reproduce a paper's figure: every point in a fresh child process, results under
    /// results/ID/TIMESTAMP/, table and plot under paper-figures/.
    Reproduce(ReproduceArgs),
    /// What `reproduce` with the same options would measure, how long it would take here and
    /// which claims it could decide, before anything runs (`plan all`: every figure).
    Plan(ReproduceArgs),
    /// fib(30) fork-join at P = 1 on every implemented runtime: T_1 / T_s per runtime, T_s the
    /// plain serial fib (`serial/front=kernel`).
    Bench(BenchArgs),
    /// Combine the run directories of one figure's shards into one run, and render it.
    Merge(MergeArgs),
    /// List the papers' claims each figure tests, with the check and band of each, without
    /// running anything.
    Claims(ClaimsArgs),
    /// Write paper-figures/README.md and one self-contained report.html from the latest run
    /// of every figure: the claims' verdicts, the plots and the tables.
    Report(ReportArgs),
    /// Write a Slurm job array that runs a figure's shards, one exclusive node each, and the
    /// merge step after them.
    Slurm(SlurmArgs),
    /// One runtime's fib(n) fork-join at P = 1 (the child process of `bench`).
    #[command(hide = true)]
    BenchPoint(BenchPointArgs),
}

/// Arguments of `run`: a point, how it is measured, and the output's form.
#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// The point.
    #[command(flatten)]
    pub point: PointSpec,
    /// How it is measured.
    #[command(flatten)]
    pub measure: Measure,
    /// The deques' fence mode: adaptive, eager, asymmetric, fenced (default: the one
    /// STEALBENCH_FENCE_SWITCHING and STEALBENCH_NO_MEMBARRIER choose, else adaptive).
    #[arg(long, value_name = "MODE", value_parser = parse_fence)]
    pub fence: Option<FenceMode>,
    /// Print one JSON object per line (for the parent process of `reproduce`).
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `reproduce`: the figure, the run directory's options, and the settings the
/// user gives, each an override (`None`: not given) that `plan::resolve_settings`
/// resolves into the run's `Settings` over the resumed run's stored ones or the defaults.
#[derive(Debug, Clone, Args)]
pub(crate) struct ReproduceArgs {
    /// Figure or table id (see `stealbench list`), e.g. prows-fig3; `all` for every figure in
    /// turn, or several ids, comma-separated (then `report` ends the run).
    pub id: String,
    /// Input size: paper (default), small, quick (or test); `decide`: each figure at the
    /// smallest size at which its claims decide on this machine, within --budget.
    #[arg(long, value_parser = parse_size_choice)]
    pub size: Option<SizeChoice>,
    /// With --size decide: the time the whole run may take, e.g. 8h, 90m, 3600s (default 8h).
    #[arg(long)]
    pub budget: Option<Budget>,
    /// The reference runs that the time estimate is calibrated against and that the report
    /// ending a run of several figures compares with.
    #[arg(long, value_name = "DIR", default_value = REFERENCE_DIR)]
    pub reference: PathBuf,
    /// Worker counts, comma-separated, each 1 to 1024 (default: the paper's, capped at this
    /// machine's cores for a figure of times; for counts or memory, the paper's and every P
    /// its claims read, oversubscribed past the cores).
    #[arg(long, value_delimiter = ',', value_parser = parse_workers)]
    pub workers: Option<Vec<usize>>,
    /// Only these runtimes, comma-separated (T_s, the kernel on `serial/front=kernel`, is
    /// always measured): a name
    /// selects every arm of the runtime, `NAME/key=value` one arm (e.g.
    /// libfork/idle=busy/victim=numa/pinning=scatter, Busy-LF in libfork's figures); an arm the
    /// figure lacks is added where the figure runs its runtime, in place of the figure's
    /// nearest arm of it unless that one is selected too (the run says which).
    #[arg(long, value_delimiter = ',', value_parser = parse_arm)]
    pub runtimes: Option<Vec<Arm>>,
    /// Only these workloads, comma-separated: a name selects every spec of the workload,
    /// `NAME/key=value` one spec (e.g. uts/tree=T3L).
    #[arg(long, value_delimiter = ',', value_parser = WorkloadSpec::parse)]
    pub workloads: Option<Vec<WorkloadSpec>>,
    /// Timed repetitions per point and round, 1 to 10000 (default: 10 for paper, 5 small, 3
    /// quick, 2 test, divided among the rounds, at least 1 a round).
    #[arg(long, value_parser = count(MAX_REPS))]
    pub reps: Option<usize>,
    /// Rounds over the grid: every point runs once per round, each round in a shuffled order,
    /// so a machine whose speed drifts favours no runtime; the tables give the spread of each
    /// point's round medians; 1 to 100 (default: 3 for a figure of times, 1 for counts and
    /// memory).
    #[arg(long, value_parser = count(MAX_ROUNDS))]
    pub rounds: Option<usize>,
    /// Seconds after which a point's process is killed and recorded as a timeout, at most
    /// 604800 (a week); 0 = never (default: 3600 paper, 1200 small, 300 quick, 120 test).
    #[arg(long, value_parser = seconds())]
    pub timeout: Option<u64>,
    /// Thread pinning: none (default), compact, scatter, for every arm without `pinning=`.
    #[arg(long, value_parser = parse_pinning)]
    pub pinning: Option<Pinning>,
    /// Usable size of every fiber stack of the fiber runtimes' points (abp, fibril, prows), in
    /// bytes or with K, M, G, 16K to 4G; default 16M. The other runtimes' points are not
    /// affected.
    #[arg(long, value_name = "SIZE", value_parser = parse_stack_size)]
    pub stack_size: Option<usize>,
    /// Continue an interrupted run: the latest unfinished run of this id, or the run
    /// directory given; points its raw.csv holds finished ok with every repetition are
    /// skipped, the others (failed, timed out, cut short) run again whole.
    #[arg(long, num_args = 0..=1, value_name = "DIR")]
    pub resume: Option<Option<PathBuf>>,
    /// Root of the results (run directories go to DIR/ID/TIMESTAMP/).
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub out: PathBuf,
    /// Where the table and plots go (ID.md, ID.svg, ID.png); default paper-figures, or the
    /// resumed run's.
    #[arg(long, value_name = "DIR")]
    pub figures_dir: Option<PathBuf>,
    /// Workload hw: track this uncompressed AVI (e.g. Rodinia's test.avi) instead of the
    /// synthetic video; recorded in meta.json and in every hw row's params.
    #[arg(long, value_name = "PATH")]
    pub hw_video: Option<PathBuf>,
    /// Workload hw: the initial points for --hw-video, one `row col` per line (0-based, row 0
    /// at the top). Default: Rodinia's points for a 609x590 video, else two rings.
    #[arg(long, value_name = "PATH", requires = "hw_video")]
    pub hw_points: Option<PathBuf>,
    /// Run only the i-th of N disjoint parts of the grid (1-based; balanced by expected time),
    /// into a run directory of its own; `stealbench merge` combines the N run directories.
    #[arg(long, value_name = "i/N")]
    pub shard: Option<String>,
}

/// `--size`: one size, or `decide`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SizeChoice {
    /// This size.
    Fixed(Size),
    /// Per figure, the smallest size at which its claims decide here, within the budget.
    Decide,
}

impl SizeChoice {
    /// The size, unless it is `decide`.
    pub(crate) fn fixed(self) -> Option<Size> {
        match self {
            SizeChoice::Fixed(s) => Some(s),
            SizeChoice::Decide => None,
        }
    }
}

/// A size or `decide`, with the nearest valid name in the error.
fn parse_size_choice(s: &str) -> Result<SizeChoice, String> {
    if s == "decide" {
        return Ok(SizeChoice::Decide);
    }
    parse_size(s)
        .map(SizeChoice::Fixed)
        .map_err(|e| format!("{e}, or decide"))
}

/// A time budget (`--budget`): a number with `s`, `m`, `h` or `d`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Budget(f64);

/// The committed runs, the default reference of the time model (`stealbench plan`) and of
/// `report --against`.
pub(crate) const REFERENCE_DIR: &str = "paper-figures/runs";

/// The budget of `--size decide` when none is given: a working day.
pub(crate) const DEFAULT_BUDGET: Budget = Budget(8.0 * 3600.0);

impl Budget {
    /// In seconds.
    pub(crate) fn seconds(self) -> f64 {
        self.0
    }
}

impl std::str::FromStr for Budget {
    type Err = String;
    fn from_str(s: &str) -> Result<Budget, String> {
        let bad = || format!("--budget {s}: expected a time like 8h, 90m, 3600s or 2d");
        let (n, unit) = s.split_at(s.len().saturating_sub(1));
        let scale = match unit {
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            "d" => 86400.0,
            _ => return Err(bad()),
        };
        match n.parse::<f64>() {
            Ok(x) if x > 0.0 && x.is_finite() => Ok(Budget(x * scale)),
            _ => Err(bad()),
        }
    }
}

/// Arguments of `claims`.
#[derive(Debug, Args)]
pub(crate) struct ClaimsArgs {
    /// Only this figure's claims (see `stealbench list`).
    pub id: Option<String>,
    /// `text`: each claim with its kind, words, check and band; `csv`: one row per case of
    /// each claim (figure, id, kind, quote, paper's number, check, band, case, quantities).
    #[arg(long, value_enum, default_value = "text")]
    pub format: ClaimsFormat,
}

/// The forms of `claims`' listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ClaimsFormat {
    /// For a reader.
    Text,
    /// For a program: one row per case of each claim.
    Csv,
}

/// Arguments of `report`.
#[derive(Debug, Clone, Args)]
pub(crate) struct ReportArgs {
    /// Run directories, or results roots holding ID/TIMESTAMP/ run directories; the latest
    /// finished run of each figure among them is reported (default: results).
    #[arg(num_args = 0..)]
    pub dirs: Vec<PathBuf>,
    /// Where README.md and report.html go.
    #[arg(long, value_name = "DIR", default_value = "paper-figures")]
    pub figures_dir: PathBuf,
    /// Set each figure beside a reference's run of it (default: the committed runs,
    /// paper-figures/runs): per claim the paper, the reference machine and this run, the
    /// verdicts that differ marked; per point this run's time over the reference's.
    #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = REFERENCE_DIR)]
    pub against: Option<PathBuf>,
}

/// Arguments of `merge`.
#[derive(Debug, Args)]
pub(crate) struct MergeArgs {
    /// Run directories of one figure (the shards of a `--shard` run), e.g.
    /// results/prows-fig2/*-shard-*.
    #[arg(required = true, num_args = 1..)]
    pub dirs: Vec<PathBuf>,
    /// Merge even when the runs' commits, sizes or CPU models differ (the merged run's
    /// meta.json then lists each).
    #[arg(long)]
    pub force: bool,
    /// Root of the results: the merged run goes to DIR/ID/TIMESTAMP-merged/.
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub out: PathBuf,
    /// Where the table and plots go; default paper-figures.
    #[arg(long, value_name = "DIR", default_value = "paper-figures")]
    pub figures_dir: PathBuf,
}

/// Arguments of `slurm`.
#[derive(Debug, Args)]
pub(crate) struct SlurmArgs {
    /// Figure or table id.
    pub id: String,
    /// Array tasks: one exclusive node each, running one shard.
    #[arg(long)]
    pub shards: usize,
    /// Where the scripts go (ID.sbatch, ID-merge.sbatch, ID-submit.sh).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    /// `#SBATCH --partition`.
    #[arg(long)]
    pub partition: Option<String>,
    /// `#SBATCH --time` of every array task (Slurm's format, e.g. 04:00:00).
    #[arg(long, default_value = "04:00:00")]
    pub time: String,
    /// Options passed to every shard's `reproduce` (e.g. --size paper --workers 1,2,4,...,64);
    /// give them after `--`.
    #[arg(last = true)]
    pub reproduce_args: Vec<String>,
}

/// Arguments of `bench`.
#[derive(Debug, Args)]
pub(crate) struct BenchArgs {
    /// The Fibonacci number computed, 0 to 93 (the largest that fits 64 bits).
    #[arg(long, default_value_t = 30, value_parser = fib_n())]
    pub n: u64,
    /// fib's variant: fj (a join per call) or sf (a future per call, on its own fiber where
    /// the runtime has fibers). T_s is always the kernel, fib's plain serial code
    /// (`serial/front=kernel`).
    #[arg(long, default_value = "fj", value_parser = parse_variant)]
    pub variant: Variant,
    /// Only these runtime arms, comma-separated (default: every registered arm;
    /// `serial/front=kernel`, T_s, is always measured), e.g. `abp/futures=nostack,prows/futures=nostack` with `--variant
    /// sf`: a future without a stack of its own.
    #[arg(long, value_delimiter = ',', value_parser = parse_arm)]
    pub runtimes: Option<Vec<Arm>>,
    /// Timed repetitions per runtime and round (their median is the round's time), 1 to 10000.
    #[arg(long, default_value_t = 10, value_parser = count(MAX_REPS))]
    pub reps: usize,
    /// Rounds over all the runtimes in turn, each with its own T_s: T1/Ts is the median of the
    /// rounds' ratios, so a machine whose speed drifts during the run moves T_s with the rest;
    /// 1 to 100.
    #[arg(long, default_value_t = 3, value_parser = count(MAX_ROUNDS))]
    pub rounds: usize,
    /// Usable size of every fiber stack of the fiber runtimes (abp, fibril, prows), in bytes
    /// or with K, M, G, 16K to 4G; default 16M.
    #[arg(long, value_name = "SIZE", value_parser = parse_stack_size)]
    pub stack_size: Option<usize>,
    /// Seconds after which a runtime's process is killed, at most 604800 (a week); 0 = never.
    #[arg(long, default_value_t = 300, value_parser = seconds())]
    pub timeout: u64,
}

/// Arguments of the hidden `bench-point`.
#[derive(Debug, Args)]
pub(crate) struct BenchPointArgs {
    /// Runtime name, or an arm (`NAME/key=value`).
    #[arg(long = "runtime", value_name = "ARM", value_parser = parse_arm)]
    pub arm: Arm,
    /// Fiber stack size (bytes, or with K, M, G).
    #[arg(long, value_name = "SIZE", value_parser = parse_stack_size)]
    pub stack_size: Option<usize>,
    /// The Fibonacci number computed.
    #[arg(long, value_parser = fib_n())]
    pub n: u64,
    /// fib's variant.
    #[arg(long, default_value = "fj", value_parser = parse_variant)]
    pub variant: Variant,
    /// Timed repetitions.
    #[arg(long, value_parser = count(MAX_REPS))]
    pub reps: usize,
    /// The deques' fence mode (default: the environment's, as `run --fence`).
    #[arg(long, value_name = "MODE", value_parser = parse_fence)]
    pub fence: Option<FenceMode>,
    /// Print one JSON object per line.
    #[arg(long)]
    pub json: bool,
}

/// Collapses a clap error into one line: its first line, without `error: `, plus its tip.
pub(crate) fn one_line_clap_error(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let mut lines = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .peekable();
    let mut first = lines
        .next()
        .unwrap_or("invalid arguments")
        .trim_start_matches("error: ")
        .to_string();
    // "the following required arguments were not provided:" lists them on the next lines.
    if first.ends_with(':') {
        let mut listed = Vec::new();
        while let Some(l) = lines.next_if(|l| {
            !l.starts_with("Usage:") && !l.starts_with("tip:") && !l.starts_with("For more")
        }) {
            listed.push(l);
        }
        first = format!("{first} {}", listed.join(", "));
    }
    let tips: Vec<&str> = lines.filter(|l| l.starts_with("tip:")).collect();
    if tips.is_empty() {
        format!("{first} (see stealbench --help)")
    } else {
        format!("{first} ({})", tips.join("; "))
    }
}

/// The directory named by option `flag`, made if missing and checked writable before anything
/// runs; returned absolute (so a stored setting or a printed command names it wherever it is
/// used). Every error names the option and the path.
pub(crate) fn output_dir(flag: &str, path: &Path) -> Result<PathBuf, Failure> {
    let bad = |why: String| Failure::Usage(format!("{flag} {}: {why}", path.display()));
    if path.exists() && !path.is_dir() {
        return Err(bad("exists and is not a directory".to_string()));
    }
    std::fs::create_dir_all(path).map_err(|e| bad(format!("cannot create it: {e}")))?;
    let probe = path.join(format!(".stealbench-probe-{}", std::process::id()));
    crate::files::create_fresh(&probe)
        .map_err(|e| bad(format!("cannot write a file in it: {e}")))?;
    let _ = std::fs::remove_file(&probe);
    path.canonicalize().map_err(|e| bad(e.to_string()))
}

/// An input file named by option `flag`, made absolute (so a record names it wherever the run
/// continues): it must exist, be a regular file and have a UTF-8 path (paths are stored in
/// JSON and passed to child processes).
fn input_file(flag: &str, path: &Path) -> Result<PathBuf, Failure> {
    let bad = |why: String| Failure::Usage(format!("{flag} {}: {why}", path.display()));
    let abs = path.canonicalize().map_err(|e| bad(e.to_string()))?;
    if !abs.is_file() {
        return Err(bad("not a file".to_string()));
    }
    if abs.to_str().is_none() {
        return Err(bad("the path is not valid UTF-8".to_string()));
    }
    Ok(abs)
}

/// The user's input files (`--hw-video`, `--hw-points`) as [`InputOptions`], each checked to
/// be a file and made absolute. Their content is checked by the workload that reads them
/// (`inputs::check_inputs`).
pub(crate) fn input_options(
    hw_video: Option<&Path>,
    hw_points: Option<&Path>,
) -> Result<InputOptions, Failure> {
    Ok(InputOptions {
        hw_video: hw_video.map(|p| input_file("--hw-video", p)).transpose()?,
        hw_points: hw_points
            .map(|p| input_file("--hw-points", p))
            .transpose()?,
        params: Vec::new(),
    })
}

/// The `--param key=value` arguments as overrides ([`InputOptions::params`]); the keys are
/// checked by the workload's preset (`inputs::check_inputs`).
pub(crate) fn param_overrides(args: &[String]) -> Result<Vec<(String, String)>, Failure> {
    args.iter()
        .map(|a| stealbench_workloads::params::parse_override(a).map_err(Failure::Usage))
        .collect()
}

/// Refuses a command line with an argument that is not UTF-8, naming it (its bytes escaped):
/// a run records its paths and command line as text (meta.json, the Slurm scripts), which
/// such a path cannot be. Checked before anything is created.
pub(crate) fn check_utf8(args: &[std::ffi::OsString]) -> Result<(), String> {
    match args.iter().find(|a| a.to_str().is_none()) {
        Some(a) => Err(format!(
            "argument {} is not valid UTF-8; stealbench records its paths as text, so give \
             a path (or value) in UTF-8",
            a.as_encoded_bytes().escape_ascii()
        )),
        None => Ok(()),
    }
}

/// Whether to draw a progress bar (escape codes, redrawn in place) on stderr: only on a
/// terminal that can move its cursor (`stderr_is_terminal`, and `TERM`, given as `term`, set
/// and not `dumb`); elsewhere the progress is plain lines only.
pub(crate) fn progress_bar_wanted(
    stderr_is_terminal: bool,
    term: Option<&std::ffi::OsStr>,
) -> bool {
    stderr_is_terminal && term.is_some_and(|t| !t.is_empty() && t != "dumb")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::MAX_TIMEOUT;
    use clap::CommandFactory;

    #[test]
    fn clap_definition_is_valid() {
        Cli::command().debug_assert();
    }

    #[test]
    fn parses_a_reproduce_line() {
        let cli = Cli::try_parse_from([
            "stealbench",
            "reproduce",
            "prows-fig3",
            "--size",
            "quick",
            "--workers",
            "1,2,4",
            "--resume",
        ])
        .unwrap();
        let Command::Reproduce(a) = cli.command else {
            panic!("not reproduce")
        };
        assert_eq!(a.workers, Some(vec![1, 2, 4]));
        assert_eq!(a.resume, Some(None));
        assert_eq!(a.size, Some(SizeChoice::Fixed(Size::Quick)));
    }

    #[test]
    fn clap_errors_become_one_line() {
        let e = Cli::try_parse_from(["stealbench", "reproduce", "x", "--rep", "3"]).unwrap_err();
        let line = one_line_clap_error(&e);
        assert!(!line.contains('\n'), "{line}");
        assert!(line.contains("--rep"), "{line}");
        // A missing argument is named.
        let e =
            Cli::try_parse_from(["stealbench", "reproduce", "x", "--hw-points", "p"]).unwrap_err();
        let line = one_line_clap_error(&e);
        assert!(!line.contains('\n'), "{line}");
        assert!(line.contains("not provided: --hw-video"), "{line}");
    }

    #[test]
    fn counts_and_seconds_are_bounded_by_clap() {
        let parse = |args: &[&str]| Cli::try_parse_from([&["stealbench"], args].concat());
        let huge = "18446744073709551615";
        let run = |extra: &[&str]| {
            let point = "--runtime serial --workload fib --variant fj --workers 1";
            parse(&[&["run"], &point.split(' ').collect::<Vec<_>>()[..], extra].concat())
        };
        let Command::Run(a) = run(&["--reps", "10000"]).unwrap().command else {
            panic!("not run")
        };
        assert_eq!(a.measure.reps, Some(MAX_REPS));
        for (args, range) in [
            (vec!["--reps", huge], "1..=10000"),
            (vec!["--reps", "0"], "1..=10000"),
        ] {
            let e = one_line_clap_error(&run(&args).unwrap_err());
            assert!(e.contains(&format!("is not in {range}")), "{args:?}: {e}");
        }
        let reproduce = |extra: &[&str]| parse(&[&["reproduce", "prows-fig3"], extra].concat());
        let bench = |extra: &[&str]| parse(&[&["bench"], extra].concat());
        for (e, range) in [
            (reproduce(&["--rounds", huge]), "1..=100"),
            (reproduce(&["--reps", "10001"]), "1..=10000"),
            (reproduce(&["--timeout", huge]), "0..=604800"),
            (bench(&["--n", "94"]), "0..=93"),
            (bench(&["--rounds", "0"]), "1..=100"),
            (bench(&["--reps", "0"]), "1..=10000"),
            (bench(&["--timeout", "604801"]), "0..=604800"),
        ] {
            let e = one_line_clap_error(&e.unwrap_err());
            assert!(e.contains(&format!("is not in {range}")), "{e}");
        }
        let most = bench(&["--n", "93", "--timeout", "604800"]).unwrap();
        let Command::Bench(b) = most.command else {
            panic!("not bench")
        };
        assert_eq!((b.n, b.timeout), (93, MAX_TIMEOUT));
        // The help names the bounds the parsers hold.
        let help = |sub: &str, arg: &str| {
            let mut cmd = Cli::command();
            let sub = cmd.find_subcommand_mut(sub).unwrap();
            let arg = sub.get_arguments().find(|a| a.get_id() == arg).unwrap();
            arg.get_help().unwrap().to_string()
        };
        for sub in ["run", "reproduce", "bench"] {
            assert!(help(sub, "reps").contains(&MAX_REPS.to_string()), "{sub}");
        }
        for sub in ["reproduce", "bench"] {
            for (arg, max) in [("rounds", MAX_ROUNDS as u64), ("timeout", MAX_TIMEOUT)] {
                assert!(help(sub, arg).contains(&max.to_string()), "{sub} {arg}");
            }
        }
        let max_n = stealbench_workloads::fib::MAX_N.to_string();
        assert!(help("bench", "n").contains(&max_n));
    }

    #[test]
    fn input_options_are_absolute_files() {
        let e = input_options(Some(Path::new("no/such.avi")), None).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(
            e.message().starts_with("--hw-video no/such.avi: "),
            "{}",
            e.message()
        );
        let dir = std::env::temp_dir();
        let e = input_options(Some(&dir), None).unwrap_err();
        assert!(e.message().contains("not a file"), "{}", e.message());
        let file = std::env::current_exe().unwrap();
        let o = input_options(Some(&file), None).unwrap();
        assert!(o.hw_video.as_ref().unwrap().is_absolute());
    }

    #[test]
    fn the_probe_of_an_output_dir_refuses_a_planted_link() {
        let dir = tempfile::TempDir::with_prefix("stealbench-cli-planted-").unwrap();
        let target = dir.path().join("target");
        std::fs::write(&target, b"precious").unwrap();
        let probe = dir
            .path()
            .join(format!(".stealbench-probe-{}", std::process::id()));
        std::os::unix::fs::symlink(&target, probe).unwrap();
        let e = output_dir("--out", dir.path()).unwrap_err();
        assert!(
            e.message().contains("is a symbolic link"),
            "{}",
            e.message()
        );
        assert_eq!(std::fs::read(&target).unwrap(), b"precious");
    }

    #[test]
    fn a_childs_argv_reads_back_as_the_same_point_and_settings() {
        let point = PointSpec {
            runtime: parse_arm("prows/placement=artifact").unwrap(),
            workload: "hw".into(),
            variant: Variant::Gf,
            workers: 3,
        };
        let file = std::env::current_exe().unwrap();
        let measure = Measure {
            size: Size::Quick,
            reps: Some(4),
            pinning: Pinning::Scatter,
            stack_size: Some(1 << 20),
            hw_video: Some(file.clone()),
            hw_points: Some(file),
            params: vec!["frames=3".to_string()],
        };
        let argv = [
            vec!["stealbench".to_string(), "run".to_string()],
            point.to_args(),
            measure.to_args(&point),
        ]
        .concat();
        let Command::Run(back) = Cli::try_parse_from(&argv).unwrap().command else {
            panic!("not run: {argv:?}")
        };
        assert_eq!((back.point, back.measure), (point.clone(), measure.clone()));
        // The stack size goes to fiber runtimes only, the hw files to hw only.
        let rayon = PointSpec {
            runtime: parse_arm("rayon").unwrap(),
            workload: "fib".into(),
            ..point.clone()
        };
        let args = measure.to_args(&rayon);
        assert!(
            !args
                .iter()
                .any(|a| a == "--stack-size" || a == "--hw-video"),
            "{args:?}"
        );
        let simulated = PointSpec {
            runtime: parse_arm("prows/sim=unit").unwrap(),
            ..point
        };
        assert!(
            !measure
                .to_args(&simulated)
                .iter()
                .any(|a| a == "--stack-size")
        );
    }

    #[test]
    fn a_non_utf8_argument_is_refused_with_its_bytes() {
        use std::ffi::OsString;
        use std::os::unix::ffi::OsStringExt;
        let ok = vec![
            OsString::from("stealbench"),
            OsString::from("--out"),
            "d".into(),
        ];
        assert!(check_utf8(&ok).is_ok());
        let bad = vec![
            OsString::from("stealbench"),
            OsString::from_vec(b"bad\xffdir".to_vec()),
        ];
        let e = check_utf8(&bad).unwrap_err();
        assert!(
            e.starts_with("argument bad\\xffdir is not valid UTF-8"),
            "{e}"
        );
    }

    #[test]
    fn progress_bars_only_on_a_capable_terminal() {
        use std::ffi::OsStr;
        assert!(progress_bar_wanted(
            true,
            Some(OsStr::new("xterm-256color"))
        ));
        assert!(!progress_bar_wanted(true, Some(OsStr::new("dumb"))));
        assert!(!progress_bar_wanted(true, Some(OsStr::new(""))));
        assert!(!progress_bar_wanted(true, None));
        assert!(!progress_bar_wanted(false, Some(OsStr::new("xterm"))));
    }
}
