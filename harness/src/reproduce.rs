//! `stealbench reproduce <id>`: the run's plan ([`crate::plan`]), every point in a child
//! process with progress, then the run's page and books ([`crate::page::render`]).

use crate::cli::{self, ReproduceArgs};
use crate::failure::Failure;
use crate::grid::Status;
use crate::page::{render, settings_note};
use crate::plan::{DEFAULT_FIGURES_DIR, OpenRun, lookup_figure, open_run, run_grid};
use crate::results;
use crate::runner::{ChildExecutor, ExecError, PointOutcome, Progress, run_missing};
use crate::spec::PointSpec;
use crate::table;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;
use stealbench_schedulers::FenceMode;

/// Prints progress: a bar with ETA on a terminal, one plain line per finished point otherwise.
/// The bar advances by each point's expected time (the model of [`crate::forecast`], when there
/// is one), so its ETA is in time, not in points.
struct Reporter {
    bar: Option<ProgressBar>,
    total: usize,
    done: usize,
    failed: usize,
    expected: crate::forecast::Expected,
}

impl Reporter {
    fn new(expected: crate::forecast::Expected) -> Self {
        Reporter {
            bar: None,
            total: 0,
            done: 0,
            failed: 0,
            expected,
        }
    }

    fn line(&self, s: &str) {
        match &self.bar {
            Some(b) => b.println(s),
            None => errln!("{s}"),
        }
    }

    fn observe(&mut self, e: Progress<'_>) {
        match e {
            Progress::Plan {
                skipped,
                to_run,
                retried,
            } => {
                self.total = to_run;
                if skipped > 0 || !retried.is_empty() {
                    self.line(&format!(
                        "{skipped} points already recorded, {to_run} to run"
                    ));
                }
                if !retried.is_empty() {
                    let list: Vec<String> = retried
                        .iter()
                        .map(|(k, why)| format!("{k} ({why})"))
                        .collect();
                    self.line(&format!(
                        "retrying {} recorded point(s) that did not finish ok or were cut \
                         short (their rows are kept in attempts.csv): {}",
                        retried.len(),
                        list.join(", ")
                    ));
                }
                let terminal = std::io::stderr().is_terminal();
                if cli::progress_bar_wanted(terminal, std::env::var_os("TERM").as_deref())
                    && to_run > 0
                {
                    let bar = ProgressBar::new(self.expected.units_of(to_run));
                    bar.set_style(
                        ProgressStyle::with_template(
                            "[{elapsed_precise}] {bar:30} {prefix} points, ETA {eta} {msg}",
                        )
                        .expect("a valid template"),
                    );
                    bar.set_prefix(format!("0/{to_run}"));
                    self.bar = Some(bar);
                }
            }
            Progress::Started(p) => {
                if let Some(b) = &self.bar {
                    b.set_message(p.to_string());
                }
            }
            Progress::Finished(p, o) => {
                self.done += 1;
                if o.status != Status::Ok {
                    self.failed += 1;
                }
                let line = format!("[{}/{}] {p}: {}", self.done, self.total, describe(o));
                self.line(&line);
                if let Some(b) = &self.bar {
                    b.inc(self.expected.units(p));
                    b.set_prefix(format!("{}/{}", self.done, self.total));
                }
            }
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// One line about a finished point.
fn describe(o: &PointOutcome) -> String {
    let rss = o
        .peak_rss_kb
        .map(|k| format!(", peak RSS {:.1} MiB", k as f64 / 1024.0))
        .unwrap_or_default();
    if o.status == Status::Ok {
        let times: Vec<f64> = o.reps.iter().map(|r| r.seconds).collect();
        let m = crate::stats::median(&times).unwrap_or(f64::NAN);
        format!(
            "ok, median {} s over {} reps{rss}",
            table::format_time(m),
            times.len()
        )
    } else {
        format!("{}: {}{rss}", o.status, o.note)
    }
}

/// The command that continues the run in `run_dir` with the same output, runnable from any
/// directory: the run's settings (workers, sizes, input files) are in its `meta.json`.
fn continue_command(id: &str, run_dir: &Path, figures_dir: &Path) -> String {
    let quote = |p: &Path| {
        let s = p.display().to_string();
        if s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@".contains(c))
        {
            s
        } else {
            format!("'{}'", s.replace('\'', "'\\''"))
        }
    };
    let abs = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    format!(
        "stealbench reproduce {id} --resume {} --figures-dir {}",
        quote(&abs(run_dir)),
        quote(&abs(figures_dir))
    )
}

/// `stealbench reproduce`. Returns the exit code: 0 when every point finished ok, 1 when some
/// failed (recorded), 130 when interrupted.
pub(crate) fn reproduce_command(
    args: &ReproduceArgs,
    allocator: &str,
    fence: FenceMode,
) -> Result<i32, Failure> {
    let fig = lookup_figure(&args.id)?;
    let OpenRun {
        dir: run_dir,
        mut meta,
        mut store,
        lock: _lock,
        params: params_of,
    } = open_run(args, &fig, allocator, fence)?;
    crate::supervise::catch_interrupts();
    let s = meta.settings.clone();
    let figures_dir = s
        .figures_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(DEFAULT_FIGURES_DIR));
    let sel = s.selection();
    let mut grid = run_grid(&fig, &s);
    if let Some(shard) = s.shard {
        let all = grid.points.len();
        grid.points = crate::shard::shard_points(&grid.points, shard);
        outln!(
            "shard {shard}: {} of the grid's {all} points (merge the {} shards' run directories \
             with `stealbench merge`)",
            grid.points.len(),
            shard.count
        );
    }
    let count =
        |f: fn(&crate::grid::Availability) -> bool| grid.rows.iter().filter(|(_, a)| f(a)).count();
    let not_impl = count(|a| matches!(a, crate::grid::Availability::NotImplemented(_)));
    let not_built = count(|a| matches!(a, crate::grid::Availability::NotBuilt(_)));
    outln!("{}", fig.title);
    outln!(
        "size {}, workers {:?}, {} reps per point, timeout {}, run directory {}",
        s.measure.size,
        s.workers,
        s.reps(),
        if s.timeout_secs == 0 {
            "none".to_string()
        } else {
            format!("{} s", s.timeout_secs)
        },
        run_dir.display()
    );
    outln!(
        "{} rows ({} not yet implemented, {} not built), {} points",
        grid.rows.len(),
        not_impl,
        not_built,
        grid.points.len()
    );
    outln!(
        "runtime settings: {}",
        settings_note(&grid, s.measure.pinning)
    );
    for n in crate::grid::added_arms_notes(&fig.rows, &sel) {
        outln!("note: {n}");
    }
    let cpus = meta.machine.logical_cpus;
    if let Some(p) = s.workers.iter().find(|&&p| p > cpus) {
        outln!(
            "note: P={p} exceeds this machine's {cpus} logical CPUs: those points are oversubscribed"
        );
    }
    if cfg!(debug_assertions) {
        outln!("note: this is a debug build; its times are not comparable (use --release)");
    }

    if let Some(v) = &s.measure.hw_video {
        outln!(
            "hw input: {}",
            params_of
                .iter()
                .find(|(w, _)| w.name() == "hw")
                .map_or_else(|| v.display().to_string(), |(_, p)| p.clone())
        );
    }

    let (estimate, expected) = crate::forecast::run_estimate(
        &args.reference,
        &fig,
        &grid.points,
        &params_of,
        s.rounds,
        s.reps(),
    );
    outln!("{estimate}");

    let exe = std::env::current_exe()?;
    let mut executor = ChildExecutor {
        exe,
        measure: s.measure.clone(),
        fence: s.fence,
        timeout: (s.timeout_secs > 0).then(|| Duration::from_secs(s.timeout_secs)),
    };
    if let Some(n) = results::left_out_note(&grid, &store) {
        outln!("note: {n}");
    }
    // A resumed run must measure the inputs its recorded rows measured: an input file (or
    // the input generation) may have changed since.
    for row in store.rows() {
        if let Some(now) = params_of.get(&row.point.workload)
            && *now != row.params
        {
            return Err(Failure::Usage(format!(
                "{}: its {} rows were measured on input '{}', now it is '{}'; start a new run",
                run_dir.display(),
                row.point.workload,
                row.params,
                now
            )));
        }
    }
    let params = |p: &PointSpec| params_of.get(&p.workload).cloned().unwrap_or_default();
    let mut reporter = Reporter::new(expected);
    let r = run_missing(
        &grid.points,
        &mut store,
        s.rounds,
        &params,
        &mut executor,
        &mut |e| reporter.observe(e),
    );
    reporter.finish();
    match r {
        Ok(()) => {}
        Err(ExecError::Interrupted) => {
            let recorded = if store.is_empty() {
                "no point finished, nothing is recorded yet".to_string()
            } else {
                format!("finished points are in {}", store.path().display())
            };
            errln!(
                "interrupted; {recorded}. Continue with: {}",
                continue_command(fig.id, &run_dir, &figures_dir)
            );
            return Ok(130);
        }
        Err(ExecError::Io(e)) => return Err(Failure::from(e)),
    }

    let summaries = render(&fig, &grid, &mut meta, &store, &figures_dir, &params_of)?;

    let failed: Vec<String> = summaries
        .iter()
        .filter(|s| s.status != Status::Ok && grid.points.contains(&s.key))
        .map(|s| format!("{} ({})", s.key, s.status))
        .collect();
    if failed.is_empty() {
        Ok(0)
    } else {
        errln!(
            "{} point(s) did not finish ok: {}",
            failed.len(),
            failed.join(", ")
        );
        Ok(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tempfile::TempDir;

    #[test]
    fn the_continue_command_names_the_output_absolutely() {
        let dir = TempDir::with_prefix("stealbench-hint-").unwrap();
        let figs = dir.path().join("my figs");
        std::fs::create_dir_all(&figs).unwrap();
        let c = continue_command("prows-fig3", dir.path(), &figs);
        let abs = dir.path().canonicalize().unwrap();
        assert!(c.starts_with(&format!(
            "stealbench reproduce prows-fig3 --resume {} --figures-dir '",
            abs.display()
        )));
        assert!(c.ends_with("my figs'"), "{c}");
    }
}
