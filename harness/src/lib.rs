//! The stealbench harness: the command line, the experiment grid, the runner of child
//! processes, result files, tables and plots.
//!
//! * [`cli`]: commands and argument checks; [`spec`]: the typed model of a point and how it is
//!   measured, with the value parsers and defaults of every setting; [`suggest`]: nearest
//!   valid names; [`failure`]: why a command failed, and its exit code.
//! * [`runtimes`]: the harness's side of the runtime registry (which is
//!   `stealbench_schedulers::registry`): arms, their settings, and the refusals that come
//!   before anything runs; workloads come from `stealbench_workloads::with_workload!`.
//! * [`point`]: one point measured in this process (`stealbench run`, `bench-point`);
//!   [`measure`]: its measurement loop; [`probe`]: the process's memory and page faults;
//!   [`protocol`]: what the point's process tells its parent, and the record of what it ran;
//!   [`inputs`]: the checks of a workload's name, variant, input files and parameters.
//! * [`grid`]: a figure's rows and points; [`runner`]: a grid's points in child processes;
//!   [`supervise`]: a child process started, read, reaped, killed on timeout or interrupt;
//!   [`plan`]: a run's plan (figure, settings, resume checks, run directory, grid);
//!   [`page`]: a run's page (view, Markdown, figure files) and the books it keeps;
//!   [`reproduce`]: the `reproduce` command; [`all`]: `reproduce all`, a set of figures in
//!   turn; [`forecast`]: what a `reproduce` would take and decide here (`stealbench plan`);
//!   [`bench`](mod@bench): the `bench` command.
//! * [`shard`]: a grid's part for one machine; [`cluster`]: the `merge` and `slurm` commands.
//! * [`results`]: raw.csv, summary.csv, meta.json; [`stats`]: median and friends; [`files`]:
//!   how every file is written (never through a symbolic link; whole files beside their name,
//!   then renamed, never torn); [`escape`]: text from outside the code made safe for a page.
//! * [`figures`]: the papers' figures; [`table`] and [`plot`] (its panels, then their drawing)
//!   render them.
//! * [`claims`]: the papers' claims each figure tests, and their verdicts on a run;
//!   [`fit`]: the fit of libfork's Eq. (17) that a figure and a claim read;
//!   [`report`]: every figure's latest run and verdicts in one page; [`against`]: beside a
//!   reference's runs.
//!
//! Modules import one way, from the commands down; no two import each other, directly or
//! through others (`tests/module_graph.rs`).
//!
//! The binary `stealbench` (root package) calls [`main`] with the name of its allocator.

#![warn(missing_docs, unreachable_pub)]

/// `println!` that never stops the program: when stdout is closed (`stealbench reproduce ...
/// | head`), the text is lost, not the run. Any other failure to write (a full disk,
/// `/dev/full`) is noted ([`note_stdout`]) and makes the command exit 3 at its end.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        $crate::note_stdout(writeln!(std::io::stdout(), $($arg)*));
    }};
}

/// `print!` that never stops the program (see [`outln!`]).
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        $crate::note_stdout(write!(std::io::stdout(), $($arg)*));
    }};
}

/// `eprintln!` that never stops the program: a closed stderr loses the text, not the run.
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod against;
mod all;
mod bench;
mod claims;
mod cli;
mod cluster;
mod escape;
mod failure;
mod figures;
mod files;
mod fit;
mod forecast;
mod grid;
mod inputs;
mod measure;
mod page;
mod plan;
mod plot;
mod point;
mod probe;
mod protocol;
mod report;
mod reproduce;
mod results;
mod runner;
mod runtimes;
mod shard;
mod spec;
mod stats;
mod suggest;
mod supervise;
mod table;
#[cfg(test)]
mod testutil;

use clap::Parser;
use clap::error::ErrorKind;
use cli::{Cli, Command};
use std::ffi::OsString;
use std::io::{self, Write as _};
use std::sync::Mutex;
use stealbench_schedulers::FenceMode;
use stealbench_workloads::Size;

/// The first failure to write stdout since the command began, other than a broken pipe (a
/// reader that stopped reading, `| head`, which costs the text only).
static STDOUT_FAILURE: Mutex<Option<String>> = Mutex::new(None);

/// Notes the outcome of a write to stdout: a failure other than a broken pipe makes the
/// command exit 3 with one line once it is done ([`run`]).
pub(crate) fn note_stdout(written: io::Result<()>) {
    if let Err(e) = written
        && e.kind() != io::ErrorKind::BrokenPipe
    {
        let mut first = STDOUT_FAILURE.lock().unwrap_or_else(|p| p.into_inner());
        first.get_or_insert_with(|| e.to_string());
    }
}

/// Runs the command line of this process; returns the exit code. `allocator` (`jemalloc` or
/// `system`) is recorded in every result's `meta.json`. A child process of `reproduce` or
/// `bench` first ties its life to its parent's ([`supervise::die_with_parent`]).
pub fn main(allocator: &'static str) -> i32 {
    if let Err(e) = supervise::die_with_parent() {
        errln!("stealbench: {e}");
        return 2;
    }
    run(std::env::args_os(), allocator)
}

/// Runs the command line `args` (program name first); returns the exit code. Its environment
/// is read here, once: the deques' fence mode ([`FenceMode::from_env`]), which `reproduce`
/// stores and `reproduce` and `bench` give every child process as `--fence`, and which every
/// pool of `run` and `bench-point` applies where no `--fence` is given.
/// A malformed value, or an argument that is not UTF-8, is refused (exit 2) before anything
/// is created. stdout is flushed at the end; a failure to write it exits 3 ([`note_stdout`]).
pub fn run<I, T>(args: I, allocator: &'static str) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    STDOUT_FAILURE
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take();
    let code = run_command_line(args.into_iter().map(Into::into).collect(), allocator);
    note_stdout(io::stdout().flush());
    let failed = STDOUT_FAILURE
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take();
    match failed {
        Some(e) => {
            errln!("stealbench: cannot write to stdout: {e}");
            if code == 0 { 3 } else { code }
        }
        None => code,
    }
}

/// [`run`] but for the flush of stdout at its end.
fn run_command_line(args: Vec<OsString>, allocator: &'static str) -> i32 {
    if let Err(e) = cli::check_utf8(&args) {
        errln!("stealbench: {e}");
        return 2;
    }
    let fence = match FenceMode::from_env() {
        Ok(f) => f,
        Err(e) => {
            errln!("stealbench: {e}");
            return 2;
        }
    };
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            return match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                    note_stdout(e.print());
                    0
                }
                ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                    let _ = e.print();
                    2
                }
                _ => {
                    errln!("stealbench: {}", cli::one_line_clap_error(&e));
                    2
                }
            };
        }
    };
    let result = match &cli.command {
        Command::List => {
            list();
            Ok(0)
        }
        Command::Run(a) => point::run_command(a, fence).map(|()| 0),
        Command::BenchPoint(a) => point::bench_point_command(a, fence).map(|()| 0),
        Command::Reproduce(a) if all::is_set(a) => all::reproduce_set(a, allocator, fence),
        Command::Reproduce(a) => reproduce::reproduce_command(a, allocator, fence),
        Command::Plan(a) => forecast::plan_command(a, fence),
        Command::Bench(a) => bench::bench_command(a, fence),
        Command::Merge(a) => cluster::merge_command(a, allocator),
        Command::Claims(a) => claims_command(a),
        Command::Report(a) => report::report_command(a),
        Command::Slurm(a) => cluster::slurm_command(a).map(|()| 0),
    };
    match result {
        Ok(code) => code,
        Err(f) => {
            errln!("stealbench: {}", f.message());
            f.exit_code()
        }
    }
}

/// `stealbench claims [ID] [--format text|csv]`: every claim of the figure `ID`, or of every
/// figure.
fn claims_command(a: &cli::ClaimsArgs) -> Result<i32, failure::Failure> {
    let figures = match &a.id {
        Some(id) => vec![plan::lookup_figure(id)?],
        None => figures::FIGURES.iter().map(|f| (f.build)()).collect(),
    };
    let figures: Vec<claims::Claimed<'_>> = figures.iter().map(figures::Figure::claimed).collect();
    match a.format {
        cli::ClaimsFormat::Text => out!("{}", claims::listing(&figures)),
        cli::ClaimsFormat::Csv => out!(
            "{}",
            claims::listing_csv(&figures).map_err(|e| failure::Failure::Io(e.to_string()))?
        ),
    }
    Ok(0)
}

/// A runtime's state in `list`: `implemented`, or the feature that builds it.
fn built(r: &runtimes::Runtime) -> String {
    r.feature
        .filter(|_| !r.built())
        .map_or_else(|| "implemented".to_string(), |f| format!("--features {f}"))
}

/// `stealbench list`.
fn list() {
    outln!("Figures and tables (stealbench reproduce <id>):");
    for f in figures::FIGURES {
        outln!("  {:<16} {}", f.id, f.title);
    }
    outln!("\nRuntimes (--runtime):");
    for r in runtimes::RUNTIMES {
        outln!(
            "  {:<14} {:<20} {:<17} {}",
            r.name,
            r.front_ends
                .iter()
                .map(|f| f.name())
                .collect::<Vec<_>>()
                .join(","),
            built(r),
            r.description
        );
    }
    outln!("\nWorkloads (--workload), variants on the closure / async front-ends:");
    let names = |v: &[stealbench_workloads::Variant]| {
        if v.is_empty() {
            "-".to_string()
        } else {
            v.iter().map(|x| x.name()).collect::<Vec<_>>().join(",")
        }
    };
    for w in stealbench_workloads::all() {
        outln!(
            "  {:<10} closure: {:<16} async: {:<16} {}",
            w.name,
            names(w.variants),
            names(w.async_variants),
            w.description
        );
        outln!(
            "  {:<10} parameters (paper size): {}",
            "",
            (w.preset)(Size::Paper)
        );
    }
    outln!("\nSizes (--size): paper (default), small, quick, test");
}
