//! The command line (clap derive) and its checks: every bad value becomes one line on stderr
//! naming the nearest valid name, and exit code 2.

use crate::suggest;
use clap::builder::RangedU64ValueParser;
use clap::{Args, Parser, Subcommand};
use std::path::{Path, PathBuf};
use stealbench_schedulers::Pinning;
use stealbench_workloads::params::split_spec;
use stealbench_workloads::{InputOptions, Size, Variant};

/// Work-stealing schedulers from five research papers behind one trait, with the papers'
/// figures regenerated on this machine.
#[derive(Debug, Parser)]
#[command(name = "stealbench", version)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the figures and tables, runtimes and workloads this build knows.
    List,
    /// Measure one point in this process: warm-up, then timed repetitions, each checked.
    Run(RunArgs),
    /// Reproduce a paper's figure: every point in a fresh child process, results under
    /// results/ID/TIMESTAMP/, table and plot under paper-figures/.
    Reproduce(ReproduceArgs),
    /// fib(30) fork-join at P = 1 on every implemented runtime: T_1 / T_s per runtime.
    Bench(BenchArgs),
    /// Combine the run directories of one figure's shards into one run, and render it.
    Merge(MergeArgs),
    /// Write a Slurm job array that runs a figure's shards, one exclusive node each, and the
    /// merge step after them.
    Slurm(SlurmArgs),
    /// One runtime's fib(n) fork-join at P = 1 (the child process of `bench`).
    #[command(hide = true)]
    BenchPoint(BenchPointArgs),
}

/// Arguments of `run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Runtime name (see `stealbench list`), optionally with settings, `NAME[/key=value]...`:
    /// idle=busy|lazy, victim=uniform|numa|default, pin=none|compact|scatter (in place of
    /// --pinning), steals=K, sim=unit|nanos (e.g. libfork/idle=busy/victim=numa/pin=scatter,
    /// Busy-LF as libfork's figures run it).
    #[arg(long)]
    pub runtime: String,
    /// Workload name (see `stealbench list`), or a spec `NAME/key=value...` with parameters
    /// set (`uts/tree=T3L`), as figures' rows and result files name it.
    #[arg(long)]
    pub workload: String,
    /// Variant: fj, sf, sf-nostack, gf, lp (the workload must offer it on the runtime's
    /// front-end).
    #[arg(long)]
    pub variant: String,
    /// Number of workers P (at least 1).
    #[arg(long)]
    pub workers: usize,
    /// Input size: paper, small, quick (or test).
    #[arg(long, default_value = "paper")]
    pub size: String,
    /// Timed repetitions, 1 to 10000 (default: 10 for paper, 5 small, 3 quick, 2 test).
    #[arg(long, value_parser = count(MAX_REPS))]
    pub reps: Option<usize>,
    /// Thread pinning: none, compact, scatter (the runtime's `pin=`, if given, instead).
    #[arg(long, default_value = "none")]
    pub pinning: String,
    /// Usable size of every fiber stack of a fiber runtime (abp, fibril, prows), in bytes or
    /// with K, M, G (KiB, MiB, GiB); default 16M. Other runtimes refuse it.
    #[arg(long, value_name = "SIZE")]
    pub stack_size: Option<String>,
    /// Print one JSON object per line (for the parent process of `reproduce`).
    #[arg(long)]
    pub json: bool,
    /// Workload hw: track this uncompressed AVI (e.g. Rodinia's test.avi) instead of the
    /// synthetic video.
    #[arg(long, value_name = "PATH")]
    pub hw_video: Option<PathBuf>,
    /// Workload hw: the initial points for --hw-video, one `row col` per line (0-based, row 0
    /// at the top). Default: Rodinia's points for a 609x590 video, else two rings.
    #[arg(long, value_name = "PATH", requires = "hw_video")]
    pub hw_points: Option<PathBuf>,
    /// Override one input parameter of the size's preset (repeatable, applied in order; e.g.
    /// `--param n=30`, `--param tree=T3`). `list` shows every workload's parameters.
    /// The row's params record the values used.
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub params: Vec<String>,
}

/// Arguments of `reproduce`.
#[derive(Debug, Args)]
pub struct ReproduceArgs {
    /// Figure or table id (see `stealbench list`), e.g. prows-fig3.
    pub id: String,
    /// Input size: paper (default), small, quick (or test).
    #[arg(long)]
    pub size: Option<String>,
    /// Worker counts, comma-separated (default: the paper's, capped at this machine's cores).
    #[arg(long, value_delimiter = ',')]
    pub workers: Option<Vec<usize>>,
    /// Only these runtimes, comma-separated (T_s on `serial` is always measured): a name
    /// selects every arm of the runtime, `NAME/key=value` one arm (e.g.
    /// libfork/idle=busy/victim=numa/pin=scatter, Busy-LF in libfork's figures); an arm the
    /// figure lacks is added where the figure runs its runtime, in place of the figure's
    /// nearest arm of it unless that one is selected too (the run says which).
    #[arg(long, value_delimiter = ',')]
    pub runtimes: Option<Vec<String>>,
    /// Only these workloads, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub workloads: Option<Vec<String>>,
    /// Timed repetitions per point and round, 1 to 10000 (default: 10 for paper, 5 small, 3
    /// quick, 2 test, divided among the rounds, at least 1 a round).
    #[arg(long, value_parser = count(MAX_REPS))]
    pub reps: Option<usize>,
    /// Rounds over the grid: every point runs once per round, each round in a shuffled order,
    /// so a machine whose speed drifts favours no runtime; the tables give the spread of each
    /// point's round medians; 1 to 100 (default: the figure's, 3 for prows-fig3, else 1).
    #[arg(long, value_parser = count(MAX_ROUNDS))]
    pub rounds: Option<usize>,
    /// Seconds after which a point's process is killed and recorded as a timeout, at most
    /// 604800 (a week); 0 = never (default: 3600 paper, 1200 small, 300 quick, 120 test).
    #[arg(long, value_parser = seconds())]
    pub timeout: Option<u64>,
    /// Thread pinning: none (default), compact, scatter, for every arm without `pin=`.
    #[arg(long)]
    pub pinning: Option<String>,
    /// Usable size of every fiber stack of the fiber runtimes' points (abp, fibril, prows), in
    /// bytes or with K, M, G; default 16M. The other runtimes' points are not affected.
    #[arg(long, value_name = "SIZE")]
    pub stack_size: Option<String>,
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

/// Arguments of `merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
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
pub struct SlurmArgs {
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
pub struct BenchArgs {
    /// The Fibonacci number computed, 0 to 93 (the largest that fits 64 bits).
    #[arg(long, default_value_t = 30, value_parser = fib_n())]
    pub n: u64,
    /// fib's variant: fj (a join per call), sf (a future per call, on its own fiber) or
    /// sf-nostack (a future per call without a stack of its own). T_s is always serial fj.
    #[arg(long, default_value = "fj")]
    pub variant: String,
    /// Timed repetitions per runtime and round (their median is the round's time), 1 to 10000.
    #[arg(long, default_value_t = 10, value_parser = count(MAX_REPS))]
    pub reps: usize,
    /// Rounds over all the runtimes in turn, each with its own T_s: T1/Ts is the median of the
    /// rounds' ratios, so a machine whose speed drifts during the run moves T_s with the rest;
    /// 1 to 100.
    #[arg(long, default_value_t = 3, value_parser = count(MAX_ROUNDS))]
    pub rounds: usize,
    /// Usable size of every fiber stack of the fiber runtimes (abp, fibril, prows), in bytes
    /// or with K, M, G; default 16M.
    #[arg(long, value_name = "SIZE")]
    pub stack_size: Option<String>,
    /// Seconds after which a runtime's process is killed, at most 604800 (a week); 0 = never.
    #[arg(long, default_value_t = 300, value_parser = seconds())]
    pub timeout: u64,
}

/// Arguments of the hidden `bench-point`.
#[derive(Debug, Args)]
pub struct BenchPointArgs {
    /// Runtime name, or an arm (`NAME/key=value`).
    #[arg(long)]
    pub runtime: String,
    /// Fiber stack size (bytes, or with K, M, G).
    #[arg(long, value_name = "SIZE")]
    pub stack_size: Option<String>,
    /// The Fibonacci number computed.
    #[arg(long, value_parser = fib_n())]
    pub n: u64,
    /// fib's variant.
    #[arg(long, default_value = "fj")]
    pub variant: String,
    /// Timed repetitions.
    #[arg(long, value_parser = count(MAX_REPS))]
    pub reps: usize,
    /// Print one JSON object per line.
    #[arg(long)]
    pub json: bool,
}

/// Why a command failed; decides the exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// Bad input: one line on stderr, exit code 2.
    Usage(String),
    /// The command could not do its work (I/O, a failed check): exit code 1.
    Runtime(String),
}

impl Failure {
    /// The process exit code for this failure.
    pub fn exit_code(&self) -> i32 {
        match self {
            Failure::Usage(_) => 2,
            Failure::Runtime(_) => 1,
        }
    }
    /// The message.
    pub fn message(&self) -> &str {
        match self {
            Failure::Usage(m) | Failure::Runtime(m) => m,
        }
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        Failure::Runtime(e.to_string())
    }
}

/// The most timed repetitions of a point (`--reps`): the papers take 10.
pub const MAX_REPS: usize = 10_000;

/// The most rounds over a grid or over `bench`'s runtimes (`--rounds`).
pub const MAX_ROUNDS: usize = 100;

/// The longest timeout (`--timeout`), in seconds: a week.
pub const MAX_TIMEOUT: u64 = 7 * 24 * 3600;

/// The value parser of a count from 1 to `max`: anything else is refused by clap, before the
/// command does anything.
fn count(max: usize) -> RangedU64ValueParser<usize> {
    RangedU64ValueParser::new().range(1..=max as u64)
}

/// The value parser of `--timeout`: 0 (never) to [`MAX_TIMEOUT`] seconds.
fn seconds() -> RangedU64ValueParser<u64> {
    RangedU64ValueParser::new().range(0..=MAX_TIMEOUT)
}

/// The value parser of `bench`'s `--n`: the Fibonacci numbers that fit 64 bits, as `run`
/// takes them.
fn fib_n() -> RangedU64ValueParser<u64> {
    RangedU64ValueParser::new().range(0..=stealbench_workloads::fib::MAX_N)
}

/// Collapses a clap error into one line: its first line, without `error: `, plus its tip.
pub fn one_line_clap_error(e: &clap::Error) -> String {
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

/// Parses a size, with the nearest valid name in the error.
pub fn parse_size(s: &str) -> Result<Size, Failure> {
    s.parse::<Size>()
        .map_err(|_| Failure::Usage(suggest::unknown("size", s, &Size::NAMES)))
}

/// Parses a variant, with the nearest valid name in the error.
pub fn parse_variant(s: &str) -> Result<Variant, Failure> {
    s.parse::<Variant>().map_err(|_| {
        let names: Vec<&str> = Variant::ALL.iter().map(|v| v.name()).collect();
        Failure::Usage(suggest::unknown("variant", s, &names))
    })
}

/// Parses a pinning policy, with the nearest valid name in the error.
pub fn parse_pinning(s: &str) -> Result<Pinning, Failure> {
    s.parse::<Pinning>()
        .map_err(|_| Failure::Usage(suggest::unknown("pinning", s, Pinning::NAMES)))
}

/// The smallest and largest fiber stack `--stack-size` accepts.
pub const STACK_SIZE_RANGE: (usize, usize) = (16 << 10, 4 << 30);

/// Parses `--stack-size`: bytes, or a number with `K`, `M`, `G` (powers of 1024, `KiB`,
/// `MiB`, `GiB` also accepted), between [`STACK_SIZE_RANGE`]'s bounds.
pub fn parse_stack_size(s: &str) -> Result<usize, Failure> {
    let t = s.trim();
    let bad = |why: &str| Failure::Usage(format!("--stack-size {s}: {why}"));
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = t.split_at(digits);
    let n: usize = n
        .parse()
        .map_err(|_| bad("expected bytes, or a number with K, M or G (16M)"))?;
    let shift = match unit.to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        _ => return Err(bad("unknown unit (use K, M or G)")),
    };
    let bytes = n.checked_shl(shift).filter(|b| b >> shift == n);
    match bytes {
        Some(b) if (STACK_SIZE_RANGE.0..=STACK_SIZE_RANGE.1).contains(&b) => Ok(b),
        _ => Err(bad("must be between 16K and 4G")),
    }
}

/// Checks a worker count: at least 1, at most [`MAX_WORKERS`].
pub fn check_workers(p: usize) -> Result<usize, Failure> {
    if p == 0 {
        Err(Failure::Usage(
            "workers must be at least 1 (P=0 given)".to_string(),
        ))
    } else if p > MAX_WORKERS {
        Err(Failure::Usage(format!(
            "workers must be at most {MAX_WORKERS} (P={p} given): every worker is a thread of \
             this machine; larger P is the simulator's"
        )))
    } else {
        Ok(p)
    }
}

/// The most workers a measured point may have (each is an OS thread).
pub const MAX_WORKERS: usize = 1024;

/// The directory named by option `flag`, made if missing and checked writable before anything
/// runs; returned absolute (so a stored setting or a printed command names it wherever it is
/// used). Every error names the option and the path.
pub fn output_dir(flag: &str, path: &Path) -> Result<PathBuf, Failure> {
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
/// ([`check_inputs`]).
pub fn input_options(
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
/// checked by the workload's preset ([`check_inputs`]).
pub fn param_overrides(args: &[String]) -> Result<Vec<(String, String)>, Failure> {
    args.iter()
        .map(|a| stealbench_workloads::params::parse_override(a).map_err(Failure::Usage))
        .collect()
}

/// The command-line arguments that give `options` to a `stealbench run` of `workload` (none
/// when no option set concerns that workload). The inverse of [`input_options`].
pub fn input_args(options: &InputOptions, workload: &str) -> Vec<String> {
    let mut args = Vec::new();
    if crate::grid::workload_name(workload) == "hw" {
        for (flag, path) in [
            ("--hw-video", &options.hw_video),
            ("--hw-points", &options.hw_points),
        ] {
            if let Some(p) = path {
                args.push(flag.to_string());
                args.push(p.to_string_lossy().into_owned());
            }
        }
    }
    args
}

/// Checks that every input option set concerns one of the workloads that will run (`specs`,
/// `NAME[/key=value]...`) and that each can use its files and parameter overrides (the
/// spec's, then `options.params`) at `size`. Returns every spec with its parameters at `size`
/// ([`Workload::params_with`]), in the order given.
///
/// [`Workload::params_with`]: stealbench_workloads::Workload::params_with
pub fn check_inputs(
    specs: &[String],
    size: Size,
    options: &InputOptions,
) -> Result<Vec<(String, String)>, Failure> {
    let workloads = specs
        .iter()
        .map(|spec| {
            let (name, mut overrides) = split_spec(spec).map_err(Failure::Usage)?;
            let info = crate::point::lookup_workload(name)?;
            overrides.extend(options.params.iter().cloned());
            Ok((spec, info, overrides))
        })
        .collect::<Result<Vec<_>, Failure>>()?;
    for w in options.workloads() {
        if !workloads.iter().any(|(_, i, _)| i.name == w) {
            let running: Vec<&str> = workloads.iter().map(|(_, i, _)| i.name).collect();
            return Err(Failure::Usage(format!(
                "--{w}-video/--{w}-points are inputs of workload '{w}', which is not run here \
                 (workloads: {})",
                if running.is_empty() {
                    "none".to_string()
                } else {
                    running.join(", ")
                }
            )));
        }
    }
    workloads
        .into_iter()
        .map(|(spec, w, overrides)| {
            let options = InputOptions {
                params: overrides,
                ..options.clone()
            };
            (w.describe)(size, &options)
                .map(|p| (spec.clone(), p))
                .map_err(|e| Failure::Usage(format!("{spec} input: {e}")))
        })
        .collect()
}

/// The default number of timed repetitions of a size.
pub fn default_reps(size: Size) -> usize {
    match size {
        Size::Paper => 10,
        Size::Small => 5,
        Size::Quick => 3,
        Size::Test => 2,
    }
}

/// The default per-point timeout of a size, in seconds.
pub fn default_timeout(size: Size) -> u64 {
    match size {
        Size::Paper => 3600,
        Size::Small => 1200,
        Size::Quick => 300,
        Size::Test => 120,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
        assert_eq!(a.size.as_deref(), Some("quick"));
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
        assert_eq!(a.reps, Some(MAX_REPS));
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
    fn an_input_file_of_a_workload_not_run_is_one_plain_line() {
        let options = InputOptions {
            hw_video: Some(std::env::current_exe().unwrap()),
            ..InputOptions::default()
        };
        let e = check_inputs(&["fib".to_string()], Size::Test, &options).unwrap_err();
        assert_eq!(
            e.message(),
            "--hw-video/--hw-points are inputs of workload 'hw', which is not run here \
             (workloads: fib)"
        );
    }

    #[test]
    fn input_options_are_absolute_files_and_go_to_hw_points_only() {
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
        let args = input_args(&o, "hw");
        assert_eq!(args[0], "--hw-video");
        assert_eq!(Path::new(&args[1]), o.hw_video.as_deref().unwrap());
        assert!(input_args(&o, "fib").is_empty());
        assert!(input_args(&InputOptions::default(), "hw").is_empty());
    }

    #[test]
    fn bad_values_name_the_nearest() {
        let e = parse_size("quik").unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.message().contains("did you mean 'quick'"));
        assert!(
            parse_variant("sf-nostak")
                .unwrap_err()
                .message()
                .contains("'sf-nostack'")
        );
        assert!(check_workers(0).is_err());
        assert_eq!(parse_stack_size("1M").unwrap(), 1 << 20);
        assert_eq!(parse_stack_size("64KiB").unwrap(), 64 << 10);
        assert_eq!(parse_stack_size("1048576").unwrap(), 1 << 20);
        for bad in ["1", "8G", "12Q", "M", ""] {
            assert!(parse_stack_size(bad).is_err(), "{bad}");
        }
        assert_eq!(check_workers(MAX_WORKERS).unwrap(), MAX_WORKERS);
        let e = check_workers(MAX_WORKERS + 1).unwrap_err();
        assert!(e.message().contains("at most 1024"), "{}", e.message());
        assert_eq!(parse_pinning("compact").unwrap(), Pinning::Compact);
    }
}
