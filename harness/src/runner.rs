//! Running points in child processes: each point is `stealbench run ... --json` in a fresh
//! process, read line by line, reaped with `wait4` (its peak RSS), killed after the timeout.
//! The loop [`run_missing`] appends each finished point to `raw.csv` at once and skips the
//! points already there, so an interrupted run resumes where it stopped.
//!
//! Interruption: after [`catch_interrupts`], SIGINT and SIGTERM only set a flag. The running
//! child is killed (its point records nothing), the loop stops, and the command prints how to
//! continue. A child started from a terminal gets the terminal's SIGINT itself; one whose
//! parent alone was signalled is killed by the parent.

use crate::grid::Status;
use crate::point::{Event, Ran};
use crate::results::{self, RawRow, Store};
use crate::spec::{Measure, PointSpec};
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use stealbench_workloads::Size;

/// How a child process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChildEnd {
    /// It exited with this code.
    Exited(i32),
    /// A signal killed it (not ours).
    Signaled(i32),
    /// We killed it after the timeout.
    TimedOut,
    /// We killed it because this process was interrupted.
    Interrupted,
}

/// The flag SIGINT and SIGTERM set once [`catch_interrupts`] ran.
static INTERRUPT: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// From now on SIGINT and SIGTERM set a flag instead of ending this process: the runner stops
/// its child and the caller reports the interruption ([`interrupted`]).
pub(crate) fn catch_interrupts() {
    INTERRUPT.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            // A signal that cannot be caught keeps its default action: it ends the process,
            // as before, and no finished point is lost either way.
            let _ = signal_hook::flag::register(sig, Arc::clone(&flag));
        }
        flag
    });
}

/// Whether SIGINT or SIGTERM arrived since [`catch_interrupts`].
pub(crate) fn interrupted() -> bool {
    INTERRUPT.get().is_some_and(|f| f.load(Ordering::Relaxed))
}

/// Everything a child process left behind.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ChildResult {
    /// The JSON events it printed, in order.
    pub events: Vec<Event>,
    /// How it ended.
    pub end: ChildEnd,
    /// Its peak resident set in KiB, from `wait4`: an upper bound only, since a spawned
    /// process inherits, at `exec`, the high-water mark of the memory it was spawned from
    /// (this process's); [`outcome_of`] takes what the child reported instead.
    pub peak_rss_kb: Option<u64>,
    /// The last lines of its stderr, joined with ` | `.
    pub stderr_tail: String,
    /// Wall-clock time from spawn to reaping.
    pub elapsed: Duration,
}

/// The last `keep` non-empty lines of `text`, joined with ` | `.
fn tail(text: &str, keep: usize) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines[lines.len().saturating_sub(keep)..].join(" | ")
}

/// The environment variable through which a parent gives its child process its own pid: the
/// child ([`die_with_parent`]) dies with that parent.
pub(crate) const PARENT_ENV: &str = "STEALBENCH_PARENT_PID";

/// In a child process started by [`run_child`] (one with [`PARENT_ENV`] set), makes the kernel
/// kill this process when its parent dies (`PR_SET_PDEATHSIG`), then exits at once if the
/// parent is already gone (the process's parent is no longer the pid [`PARENT_ENV`] gives: it
/// died between the spawn and the `prctl`). `main` calls it before anything else, so a point's
/// process never outlives an interrupted or killed `reproduce` or `bench`. Does nothing when
/// [`PARENT_ENV`] is unset or empty; a value that is not a process id is refused (`Err`, one
/// line: bad input).
pub(crate) fn die_with_parent() -> Result<(), String> {
    let Some(expected) = parent_pid(std::env::var_os(PARENT_ENV).as_deref())? else {
        return Ok(());
    };
    #[cfg(target_os = "linux")]
    {
        // SAFETY: PR_SET_PDEATHSIG takes a signal number and touches no memory of ours.
        unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
    }
    // SAFETY: getppid has no preconditions and touches no memory of ours.
    let parent = unsafe { libc::getppid() };
    if expected != parent {
        errln!("stealbench: the parent process ({PARENT_ENV}={expected}) is gone; exiting");
        std::process::exit(1);
    }
    Ok(())
}

/// The parent's pid that [`PARENT_ENV`]'s value `v` gives: `None` if unset or empty, an error
/// if it is not a positive process id.
fn parent_pid(v: Option<&std::ffi::OsStr>) -> Result<Option<libc::pid_t>, String> {
    let Some(v) = v.filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    match v.to_str().and_then(|s| s.parse::<libc::pid_t>().ok()) {
        Some(pid) if pid > 0 => Ok(Some(pid)),
        _ => Err(format!(
            "{PARENT_ENV}={v:?} is not a process id (it is set by stealbench for its child \
             processes; unset it)"
        )),
    }
}

/// Runs `exe args`, reading JSON events from its stdout, killing it after `timeout`. The child
/// gets this process's pid in [`PARENT_ENV`], so it dies with this process. A process or a
/// reader thread that cannot be started (a limit on processes, `ulimit -u`) is an error that
/// says which, never a panic; a child already started is killed and reaped first.
pub(crate) fn run_child(
    exe: &Path,
    args: &[String],
    timeout: Option<Duration>,
) -> io::Result<ChildResult> {
    run_child_with(exe, args, timeout, std::thread::Builder::new)
}

/// [`run_child`], its reader threads made by `threads` (the tests' seam for a thread that
/// cannot be started).
fn run_child_with(
    exe: &Path,
    args: &[String],
    timeout: Option<Duration>,
    threads: fn() -> std::thread::Builder,
) -> io::Result<ChildResult> {
    let start = Instant::now();
    let mut child = Command::new(exe)
        .args(args)
        .env(PARENT_ENV, std::process::id().to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot start a point's process ({}): {e}", exe.display()),
            )
        })?;
    let pid = libc::pid_t::try_from(child.id()).map_err(io::Error::other)?;
    let stdout = child.stdout.take().expect("stdout is piped");
    let mut stderr = child.stderr.take().expect("stderr is piped");
    let mut reader = |what: &str, spawned: io::Result<()>| -> io::Result<()> {
        spawned.map_err(|e| {
            let _ = child.kill();
            let _ = child.wait();
            io::Error::new(
                e.kind(),
                format!("cannot start a thread to read a point's {what}: {e}"),
            )
        })
    };
    let mut out_reader = None;
    reader(
        "output",
        threads()
            .spawn(move || {
                BufReader::new(stdout)
                    .lines()
                    .map_while(Result::ok)
                    .filter_map(|l| serde_json::from_str::<Event>(&l).ok())
                    .collect::<Vec<Event>>()
            })
            .map(|h| out_reader = Some(h)),
    )?;
    let mut err_reader = None;
    reader(
        "errors",
        threads()
            .spawn(move || {
                let mut bytes = Vec::new();
                let _ = stderr.read_to_end(&mut bytes);
                String::from_utf8_lossy(&bytes).into_owned()
            })
            .map(|h| err_reader = Some(h)),
    )?;
    let (out_reader, err_reader) = (
        out_reader.expect("spawned above"),
        err_reader.expect("spawned above"),
    );

    let deadline = timeout.map(|t| start + t);
    let mut timed_out = false;
    let mut stopped = false;
    let mut pause = Duration::from_millis(1);
    let (status, usage) = loop {
        let mut status: libc::c_int = 0;
        // SAFETY: `rusage` is plain old data for which all-zeroes is a valid value.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `pid` is our unreaped child (only this loop reaps it; `Child::wait` is never
        // called), and `status` and `usage` are valid, exclusively borrowed outputs.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            break (status, usage);
        }
        if r == -1 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if !stopped && !timed_out && interrupted() {
            // SAFETY: `pid` is still our unreaped child (wait4 just returned 0), so the id
            // cannot have been reused by another process.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            stopped = true;
        }
        if let Some(d) = deadline
            && !timed_out
            && !stopped
            && Instant::now() >= d
        {
            // SAFETY: `pid` is still our unreaped child (wait4 just returned 0), so the id
            // cannot have been reused by another process.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            timed_out = true;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    };
    let elapsed = start.elapsed();
    let events = out_reader.join().unwrap_or_default();
    let stderr_text = err_reader.join().unwrap_or_default();
    let end = if stopped {
        ChildEnd::Interrupted
    } else if timed_out {
        ChildEnd::TimedOut
    } else if libc::WIFEXITED(status) {
        ChildEnd::Exited(libc::WEXITSTATUS(status))
    } else if libc::WIFSIGNALED(status) {
        ChildEnd::Signaled(libc::WTERMSIG(status))
    } else {
        ChildEnd::Signaled(0)
    };
    Ok(ChildResult {
        events,
        end,
        // Linux reports ru_maxrss in KiB.
        peak_rss_kb: u64::try_from(usage.ru_maxrss).ok().filter(|&k| k > 0),
        stderr_tail: tail(&stderr_text, 3),
        elapsed,
    })
}

/// One timed repetition as the runner records it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RepRecord {
    /// 1-based repetition number.
    pub rep: usize,
    /// Seconds.
    pub seconds: f64,
    /// The answer and what it was checked against.
    pub answer: String,
    /// Scheduler statistics (`None`: cannot count).
    pub stats: Vec<(String, Option<u64>)>,
}

/// What one point produced.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PointOutcome {
    /// Repetitions that ran and checked.
    pub reps: Vec<RepRecord>,
    /// A failed check: its repetition (0 = warm-up) and message.
    pub failed_check: Option<(usize, String)>,
    /// The point's status.
    pub status: Status,
    /// Peak RSS of its process, KiB, as the process reported it (its high-water mark when it
    /// finished, else after its last repetition); `None` if it reported none.
    pub peak_rss_kb: Option<u64>,
    /// What the process reported it ran (`None`: it never started measuring).
    pub ran: Option<Ran>,
    /// What went wrong, one line.
    pub note: String,
}

/// Why a point produced nothing to record.
#[derive(Debug)]
pub(crate) enum ExecError {
    /// The user interrupted the run (the child died of SIGINT / SIGTERM / SIGHUP).
    Interrupted,
    /// The child could not be started.
    Io(io::Error),
}

/// Measures one point. The real one runs a child process; tests inject their own.
pub(crate) trait PointExecutor {
    /// Runs `point` and reports what it produced.
    fn execute(&mut self, point: &PointSpec) -> Result<PointOutcome, ExecError>;
}

/// Turns a child's events and end into a point outcome (`None` when the user interrupted it).
pub(crate) fn outcome_of(child: ChildResult, timeout: Option<Duration>) -> Option<PointOutcome> {
    let mut reps = Vec::new();
    let mut failed_check = None;
    let mut error = None;
    let mut done = false;
    let mut ran = None;
    let mut peak = None;
    for e in child.events {
        match e {
            Event::Start(r) => ran = Some(r),
            Event::Rep {
                rep,
                seconds,
                answer,
                stats,
            } => {
                // The process's high-water mark after the repetition, should it not finish.
                let hwm = stats.iter().find(|(k, _)| k == "process_hwm_kb");
                peak = hwm.and_then(|(_, v)| *v).or(peak);
                reps.push(RepRecord {
                    rep,
                    seconds,
                    answer,
                    stats,
                })
            }
            Event::CheckFailed { rep, message } => failed_check = Some((rep, message)),
            Event::Error { message } => error = Some(message),
            Event::Done { peak_rss_kb, .. } => {
                done = true;
                peak = Some(peak_rss_kb);
            }
        }
    }
    let with_stderr = |what: String| {
        if child.stderr_tail.is_empty() {
            what
        } else {
            format!("{what}; stderr: {}", child.stderr_tail)
        }
    };
    let (status, note) = match child.end {
        ChildEnd::Interrupted => return None,
        ChildEnd::Signaled(sig) if [libc::SIGINT, libc::SIGTERM, libc::SIGHUP].contains(&sig) => {
            return None;
        }
        ChildEnd::TimedOut => (
            Status::Timeout,
            format!(
                "killed after the {} s timeout",
                timeout.map_or(0, |t| t.as_secs())
            ),
        ),
        _ if failed_check.is_some() => {
            let (rep, m) = failed_check.as_ref().expect("checked");
            (
                Status::CheckFailed,
                if *rep == 0 {
                    format!("warm-up check failed: {m}")
                } else {
                    format!("repetition {rep} check failed: {m}")
                },
            )
        }
        _ if error.is_some() => (Status::Error, error.clone().expect("checked")),
        ChildEnd::Exited(0) if done => (Status::Ok, String::new()),
        ChildEnd::Exited(code) => (
            Status::Crashed,
            with_stderr(format!("exited with code {code} without finishing")),
        ),
        ChildEnd::Signaled(sig) => (
            Status::Crashed,
            with_stderr(format!("killed by signal {sig}")),
        ),
    };
    Some(PointOutcome {
        reps,
        failed_check,
        status,
        peak_rss_kb: peak,
        ran,
        note,
    })
}

/// Runs each point as `<exe> run ... --json`: the point and how it is measured, written as
/// arguments by the typed model ([`PointSpec::to_args`], [`Measure::to_args`]).
#[derive(Debug, Clone)]
pub(crate) struct ChildExecutor {
    /// The stealbench binary (`std::env::current_exe()`).
    pub exe: PathBuf,
    /// How every point is measured (its repetitions given).
    pub measure: Measure,
    /// Per-point timeout.
    pub timeout: Option<Duration>,
}

impl ChildExecutor {
    /// The child's arguments for `p`.
    pub(crate) fn args(&self, p: &PointSpec) -> Vec<String> {
        std::iter::once("run".to_string())
            .chain(p.to_args())
            .chain(self.measure.to_args(p))
            .chain(std::iter::once("--json".to_string()))
            .collect()
    }
}

impl PointExecutor for ChildExecutor {
    fn execute(&mut self, p: &PointSpec) -> Result<PointOutcome, ExecError> {
        let child = run_child(&self.exe, &self.args(p), self.timeout).map_err(ExecError::Io)?;
        outcome_of(child, self.timeout).ok_or(ExecError::Interrupted)
    }
}

/// The `raw.csv` rows of a finished point: one per checked repetition, one for a repetition
/// whose check failed (no time), or a single point-level row when there is neither. The rows
/// record what the point's process reported it ran ([`PointOutcome::ran`]); `params` (what
/// this process computed) only where it reported nothing.
pub(crate) fn rows_of(
    p: &PointSpec,
    round: usize,
    size: Size,
    params: &str,
    o: &PointOutcome,
) -> Vec<RawRow> {
    let base = RawRow {
        point: p.clone(),
        size,
        params: o
            .ran
            .as_ref()
            .map_or_else(|| params.to_string(), |r| r.params.clone()),
        rep: None,
        seconds: None,
        peak_rss_kb: o.peak_rss_kb,
        check: String::new(),
        status: o.status,
        note: o.note.clone(),
        round,
        answer: String::new(),
        pool: o.ran.as_ref().and_then(|r| r.pool.clone()),
        counters: Vec::new(),
    };
    let mut rows: Vec<RawRow> = o
        .reps
        .iter()
        .map(|r| RawRow {
            rep: Some(r.rep),
            seconds: Some(r.seconds),
            check: "ok".to_string(),
            counters: r.stats.clone(),
            answer: r.answer.clone(),
            ..base.clone()
        })
        .collect();
    if let Some((rep, m)) = &o.failed_check {
        rows.push(RawRow {
            rep: Some(*rep),
            check: format!("failed: {m}"),
            ..base.clone()
        });
    }
    if rows.is_empty() {
        rows.push(base);
    }
    rows
}

/// What [`run_missing`] tells its observer.
#[derive(Debug)]
pub(crate) enum Progress<'a> {
    /// Points already recorded (skipped) and points to run.
    Plan {
        /// Already in raw.csv and finished ok.
        skipped: usize,
        /// To run now (the retried ones included).
        to_run: usize,
        /// Recorded points that run again, with why (not ok, cut short); their old rows are
        /// in `attempts.csv` beside raw.csv.
        retried: &'a [(PointSpec, String)],
    },
    /// A point starts.
    Started(&'a PointSpec),
    /// A point finished and is on disk.
    Finished(&'a PointSpec, &'a PointOutcome),
}

/// Runs every point of `points` once per round (`rounds` of them, the rounds one after the
/// other; with more than one, each round in its own shuffled order, seeded by the round) unless
/// `store` (the run's raw.csv) already has it, appending each point's rows as soon as it finishes. A recorded
/// point's round that did not finish ok, or has fewer than `reps` timed repetitions, runs
/// again whole: its old rows move to `attempts.csv` first ([`Store::set_aside`]). Stops
/// early (returning `Interrupted`) when the user interrupts.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_missing(
    points: &[PointSpec],
    store: &mut Store,
    size: Size,
    reps: usize,
    rounds: usize,
    params: &dyn Fn(&PointSpec) -> String,
    executor: &mut dyn PointExecutor,
    observe: &mut dyn FnMut(Progress<'_>),
) -> Result<(), ExecError> {
    store.upgrade().map_err(ExecError::Io)?;
    let reruns: Vec<(PointSpec, usize, String)> = results::points_to_rerun(store, reps)
        .into_iter()
        .filter(|(k, round, _)| points.contains(k) && *round <= rounds)
        .collect();
    if !reruns.is_empty() {
        let set: std::collections::BTreeSet<(PointSpec, usize)> =
            reruns.iter().map(|(k, r, _)| (k.clone(), *r)).collect();
        let attempts = store.path().with_file_name("attempts.csv");
        store.set_aside(&attempts, &set).map_err(ExecError::Io)?;
    }
    let retried: Vec<(PointSpec, String)> = reruns
        .into_iter()
        .map(|(k, round, why)| {
            let why = if rounds > 1 {
                format!("round {round}: {why}")
            } else {
                why
            };
            (k, why)
        })
        .collect();
    let done = results::recorded_rounds(store);
    let mut todo: Vec<(usize, &PointSpec)> = Vec::new();
    for round in 1..=rounds {
        for p in round_order(points, round, rounds) {
            if !done.contains(&(p.clone(), round)) {
                todo.push((round, p));
            }
        }
    }
    observe(Progress::Plan {
        skipped: points.len() * rounds - todo.len(),
        to_run: todo.len(),
        retried: &retried,
    });
    for (round, p) in todo {
        if interrupted() {
            return Err(ExecError::Interrupted);
        }
        observe(Progress::Started(p));
        let outcome = executor.execute(p)?;
        store
            .append(&rows_of(p, round, size, &params(p), &outcome))
            .map_err(ExecError::Io)?;
        observe(Progress::Finished(p, &outcome));
    }
    Ok(())
}

/// The order of round `round` of `rounds`: the points as given when there is one round, else
/// shuffled (Fisher-Yates, seeded by the round), so no runtime always runs in the same spell of
/// a drifting machine.
fn round_order(points: &[PointSpec], round: usize, rounds: usize) -> Vec<&PointSpec> {
    let mut order: Vec<&PointSpec> = points.iter().collect();
    if rounds > 1 {
        let mut rng = stealbench_schedulers::rng::SplitMix64::new(0x726f_756e_6400 ^ round as u64);
        for i in (1..order.len()).rev() {
            order.swap(i, rng.index(i + 1));
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Store;
    use stealbench_workloads::Variant;
    use tempfile::TempDir;

    fn key(rt: &str, p: usize) -> PointSpec {
        PointSpec {
            runtime: rt.into(),
            workload: "fib".into(),
            variant: Variant::Fj,
            workers: p,
        }
    }

    /// Succeeds with two fixed repetitions, or simulates an interruption after `limit` calls.
    struct Fake {
        calls: Vec<PointSpec>,
        limit: usize,
    }

    impl PointExecutor for Fake {
        fn execute(&mut self, p: &PointSpec) -> Result<PointOutcome, ExecError> {
            if self.calls.len() == self.limit {
                return Err(ExecError::Interrupted);
            }
            self.calls.push(p.clone());
            Ok(PointOutcome {
                reps: vec![
                    RepRecord {
                        rep: 1,
                        seconds: 0.5,
                        answer: "fib(20) = 6765; checked against the iterative fib(n)".into(),
                        stats: vec![],
                    },
                    RepRecord {
                        rep: 2,
                        seconds: 0.25,
                        answer: "fib(20) = 6765; checked against the iterative fib(n)".into(),
                        stats: vec![],
                    },
                ],
                failed_check: None,
                status: Status::Ok,
                peak_rss_kb: Some(1000),
                ran: None,
                note: String::new(),
            })
        }
    }

    #[test]
    fn resume_runs_only_the_missing_points() {
        let dir = TempDir::with_prefix("stealbench-resume-").unwrap();
        let raw = dir.path().join("raw.csv");
        let points = vec![
            key("serial", 1),
            key("rayon", 1),
            key("rayon", 2),
            key("tokio", 1),
        ];
        let params = |_: &PointSpec| "n=20".to_string();
        // First run: interrupted after two points.
        let mut first = Fake {
            calls: vec![],
            limit: 2,
        };
        let r = run_missing(
            &points,
            &mut Store::open(&raw).unwrap(),
            Size::Test,
            2,
            1,
            &params,
            &mut first,
            &mut |_| {},
        );
        assert!(matches!(r, Err(ExecError::Interrupted)));
        assert_eq!(first.calls, points[..2]);
        assert_eq!(Store::open(&raw).unwrap().rows().to_vec().len(), 4);
        // Resume: only the other two run.
        let mut second = Fake {
            calls: vec![],
            limit: usize::MAX,
        };
        let mut plan = None;
        run_missing(
            &points,
            &mut Store::open(&raw).unwrap(),
            Size::Test,
            2,
            1,
            &params,
            &mut second,
            &mut |e| {
                if let Progress::Plan {
                    skipped, to_run, ..
                } = e
                {
                    plan = Some((skipped, to_run));
                }
            },
        )
        .unwrap();
        assert_eq!(second.calls, points[2..]);
        assert_eq!(plan, Some((2, 2)));
        let rows = Store::open(&raw).unwrap().rows().to_vec();
        assert_eq!(rows.len(), 8);
        assert_eq!(
            results::recorded_points(&Store::open(&raw).unwrap()).len(),
            4
        );
    }

    /// The points `run_missing` runs on `raw` (2 repetitions each), and its plan's retries.
    fn run_all(points: &[PointSpec], raw: &Path) -> (Vec<PointSpec>, Vec<(PointSpec, String)>) {
        let mut fake = Fake {
            calls: vec![],
            limit: usize::MAX,
        };
        let mut retried = Vec::new();
        let params = |_: &PointSpec| "n=20".to_string();
        let observe = &mut |e: Progress<'_>| {
            if let Progress::Plan { retried: r, .. } = e {
                retried = r.to_vec();
            }
        };
        let mut store = Store::open(raw).unwrap();
        run_missing(
            points,
            &mut store,
            Size::Test,
            2,
            1,
            &params,
            &mut fake,
            observe,
        )
        .unwrap();
        (fake.calls, retried)
    }

    #[test]
    fn rounds_run_every_point_once_each_in_shuffled_orders() {
        let dir = TempDir::with_prefix("stealbench-rounds-").unwrap();
        let raw = dir.path().join("raw.csv");
        let points: Vec<PointSpec> = (1..=6).map(|p| key("abp", p)).collect();
        let mut fake = Fake {
            calls: vec![],
            limit: usize::MAX,
        };
        let params = |_: &PointSpec| "n=20".to_string();
        run_missing(
            &points,
            &mut Store::open(&raw).unwrap(),
            Size::Test,
            2,
            3,
            &params,
            &mut fake,
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(fake.calls.len(), 18);
        let round = |r: usize| fake.calls[6 * (r - 1)..6 * r].to_vec();
        for r in 1..=3 {
            let mut sorted = round(r);
            sorted.sort();
            assert_eq!(sorted, points, "round {r} runs every point once");
        }
        assert!(
            round(1) != round(2) || round(2) != round(3),
            "the orders are shuffled"
        );
        let rows = Store::open(&raw).unwrap().rows().to_vec();
        assert_eq!(rows.iter().filter(|r| r.round == 3).count(), 12);
        let s = results::summarize(&Store::open(&raw).unwrap());
        assert_eq!(s[0].round_medians.len(), 3);
        // Everything is recorded: a resume runs nothing.
        assert!(run_all_rounds(&points, &raw, 3).is_empty());
    }

    /// The points `run_missing` runs in `rounds` rounds.
    fn run_all_rounds(points: &[PointSpec], raw: &Path, rounds: usize) -> Vec<PointSpec> {
        let mut fake = Fake {
            calls: vec![],
            limit: usize::MAX,
        };
        let params = |_: &PointSpec| "n=20".to_string();
        run_missing(
            points,
            &mut Store::open(raw).unwrap(),
            Size::Test,
            2,
            rounds,
            &params,
            &mut fake,
            &mut |_| {},
        )
        .unwrap();
        fake.calls
    }

    #[test]
    fn a_raw_csv_of_an_older_header_is_read_and_upgraded() {
        for columns in [13, 14, 15] {
            let dir = TempDir::with_prefix("stealbench-old-raw-").unwrap();
            let raw = dir.path().join("raw.csv");
            let points = vec![key("serial", 1), key("abp", 2)];
            // Round 1 as an older build wrote it: the counters in one `stats` cell, and the
            // first `columns` columns of its header.
            let older = crate::results::older_fixture(columns);
            std::fs::write(&raw, &older).unwrap();
            let old = Store::open(&raw).unwrap().rows().to_vec();
            assert_eq!(old.len(), 4);
            assert!(
                old.iter().all(|r| r.round == 1 && r.counters.len() == 2),
                "{columns} columns"
            );
            // Round 1 is recorded; a second round appends to it, after the upgrade.
            assert_eq!(run_all_rounds(&points, &raw, 2).len(), 2);
            let text = std::fs::read_to_string(&raw).unwrap();
            assert!(
                text.starts_with(&crate::results::RAW_COLUMNS.join(",")),
                "{text}"
            );
            let rows = Store::open(&raw).unwrap().rows().to_vec();
            assert_eq!(rows.len(), 8);
            assert_eq!(rows[..4], old[..], "the older rows, as they read before");
            let new: Vec<_> = rows.iter().filter(|r| r.round == 2).collect();
            assert_eq!(new.len(), 4);
            assert!(new.iter().all(|r| r.answer.starts_with("fib(20) = 6765")));
        }
    }

    #[test]
    fn resume_retries_what_did_not_finish_ok_or_was_cut_short() {
        let dir = TempDir::with_prefix("stealbench-retry-").unwrap();
        let raw = dir.path().join("raw.csv");
        let points = vec![key("serial", 1), key("abp", 1), key("abp", 2)];
        assert_eq!(run_all(&points, &raw).0, points);
        // abp P=1 crashed; abp P=2 lost its last repetition (a cut last line).
        let mut rows = Store::open(&raw).unwrap().rows().to_vec();
        for r in rows.iter_mut().filter(|r| r.point == key("abp", 1)) {
            r.status = Status::Crashed;
        }
        rows.pop();
        std::fs::remove_file(&raw).unwrap();
        Store::create(&raw, &rows, &[]).unwrap();
        let (calls, retried) = run_all(&points, &raw);
        assert_eq!(calls, points[1..]);
        assert_eq!(
            retried,
            [
                (key("abp", 1), "crashed".to_string()),
                (key("abp", 2), "1 of 2 repetitions".to_string())
            ]
        );
        let rows = Store::open(&raw).unwrap().rows().to_vec();
        assert_eq!(rows.len(), 6);
        assert!(rows.iter().all(|r| r.status == Status::Ok));
        let attempts = Store::open(&dir.path().join("attempts.csv"))
            .unwrap()
            .rows()
            .to_vec();
        assert_eq!(attempts.len(), 3, "the old rows are kept aside");
        // A third run has nothing to do.
        assert!(run_all(&points, &raw).0.is_empty());
    }

    fn child(events: Vec<Event>, end: ChildEnd) -> ChildResult {
        ChildResult {
            events,
            end,
            peak_rss_kb: Some(5),
            stderr_tail: "thread 'main' panicked at x.rs:1".into(),
            elapsed: Duration::ZERO,
        }
    }

    #[test]
    fn outcomes_classify_every_ending() {
        let rep = Event::Rep {
            rep: 1,
            seconds: 0.1,
            answer: "fib(20) = 6765; checked against the iterative fib(n)".into(),
            stats: vec![],
        };
        let done = Event::Done {
            reps: 1,
            median: 0.1,
            peak_rss_kb: 4,
        };
        let ok = outcome_of(child(vec![rep.clone(), done], ChildEnd::Exited(0)), None).unwrap();
        assert_eq!((ok.status, ok.reps.len()), (Status::Ok, 1));
        let ok_rows = rows_of(&key("rayon", 2), 1, Size::Test, "n=20", &ok);
        assert_eq!(
            ok_rows[0].answer,
            "fib(20) = 6765; checked against the iterative fib(n)"
        );
        let crash = outcome_of(child(vec![rep.clone()], ChildEnd::Exited(101)), None).unwrap();
        assert_eq!(crash.status, Status::Crashed);
        assert!(crash.note.contains("panicked"), "{}", crash.note);
        let seg = outcome_of(child(vec![], ChildEnd::Signaled(libc::SIGSEGV)), None).unwrap();
        assert_eq!(seg.status, Status::Crashed);
        let t = Some(Duration::from_secs(7));
        let to = outcome_of(child(vec![rep.clone()], ChildEnd::TimedOut), t).unwrap();
        assert_eq!(to.status, Status::Timeout);
        assert!(to.note.contains("7 s"));
        let bad = Event::CheckFailed {
            rep: 2,
            message: "wrong".into(),
        };
        let cf = outcome_of(child(vec![rep, bad], ChildEnd::Exited(1)), None).unwrap();
        assert_eq!(cf.status, Status::CheckFailed);
        let rows = rows_of(&key("rayon", 2), 1, Size::Test, "n=20", &cf);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].seconds, None, "a failed check is never a time");
        assert_eq!(rows[1].check, "failed: wrong");
        assert_eq!(rows[1].answer, "", "a failed check has no answer");
        assert!(outcome_of(child(vec![], ChildEnd::Signaled(libc::SIGINT)), None).is_none());
    }

    #[test]
    fn a_points_record_and_peak_are_what_its_process_reported() {
        let ran = Ran {
            params: "n=21 (the child's)".into(),
            pool: Some(crate::point::PoolRecord::of(
                &stealbench_schedulers::PoolConfig::with_workers(2),
                &<stealbench_schedulers::abp::Abp as stealbench_schedulers::Scheduler>::CAPABILITIES,
            )),
        };
        let rep = Event::Rep {
            rep: 1,
            seconds: 0.1,
            answer: "fib(21) = 10946; checked against the iterative fib(n)".into(),
            stats: vec![("process_hwm_kb".into(), Some(3))],
        };
        let done = Event::Done {
            reps: 1,
            median: 0.1,
            peak_rss_kb: 4,
        };
        // wait4 says 5 (the parent's high-water mark carried over); the child said 4.
        let events = vec![Event::Start(ran.clone()), rep.clone(), done];
        let ok = outcome_of(child(events, ChildEnd::Exited(0)), None).unwrap();
        assert_eq!(ok.peak_rss_kb, Some(4));
        let rows = rows_of(&key("abp", 2), 1, Size::Test, "n=20", &ok);
        assert_eq!(
            rows[0].params, ran.params,
            "the child's parameters, not the parent's"
        );
        assert_eq!(rows[0].pool, ran.pool);
        // A child that died after a repetition: its high-water mark after it.
        let events = vec![Event::Start(ran), rep];
        let crashed = outcome_of(child(events, ChildEnd::Signaled(libc::SIGSEGV)), None).unwrap();
        assert_eq!(crashed.peak_rss_kb, Some(3));
        // One that never reported: the parent's parameters, no peak.
        let silent = outcome_of(child(vec![], ChildEnd::Exited(101)), None).unwrap();
        assert_eq!(silent.peak_rss_kb, None);
        assert_eq!(
            rows_of(&key("abp", 2), 1, Size::Test, "n=20", &silent)[0].params,
            "n=20"
        );
    }

    #[test]
    fn a_real_child_is_reaped_with_its_rss_and_killed_on_timeout() {
        let sh = Path::new("/bin/sh");
        let args = |s: &str| vec!["-c".to_string(), s.to_string()];
        let r = run_child(
            sh,
            &args("echo '{\"event\":\"error\",\"message\":\"m\"}'; exit 3"),
            None,
        )
        .unwrap();
        assert_eq!(r.end, ChildEnd::Exited(3));
        assert_eq!(
            r.events,
            [Event::Error {
                message: "m".into()
            }]
        );
        assert!(r.peak_rss_kb.is_some());
        let t = run_child(sh, &args("exec sleep 5"), Some(Duration::from_millis(100))).unwrap();
        assert_eq!(t.end, ChildEnd::TimedOut);
        assert!(t.elapsed < Duration::from_secs(4), "{:?}", t.elapsed);
        let k = run_child(sh, &args("echo oops >&2; kill -SEGV $$"), None).unwrap();
        assert_eq!(k.end, ChildEnd::Signaled(libc::SIGSEGV));
        assert_eq!(k.stderr_tail, "oops");
    }

    /// A reader thread that cannot be started (as under `ulimit -u`) is an error naming it,
    /// not a panic, and the child already started is killed and reaped, not left to run.
    #[test]
    fn a_thread_that_cannot_start_is_an_error_and_the_child_is_reaped() {
        let start = Instant::now();
        let e = run_child_with(
            Path::new("/bin/sh"),
            &["-c".to_string(), "exec sleep 30".to_string()],
            None,
            // A stack larger than any address space: pthread_create fails, as at a limit.
            || std::thread::Builder::new().stack_size(1 << 60),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("cannot start a thread to read a point's output: "),
            "{e}"
        );
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the child ran on"
        );
        let e = run_child(Path::new("/nonexistent/stealbench"), &[], None)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("cannot start a point's process (/nonexistent/stealbench): "),
            "{e}"
        );
    }

    /// An empty parent pid is no parent; a malformed one is refused, not taken as a parent
    /// that is gone.
    #[test]
    fn the_parent_pid_is_parsed_strictly() {
        use std::ffi::OsStr;
        assert_eq!(parent_pid(None), Ok(None));
        assert_eq!(parent_pid(Some(OsStr::new(""))), Ok(None));
        assert_eq!(parent_pid(Some(OsStr::new("4242"))), Ok(Some(4242)));
        for bad in ["abc", "0", "-5", " 12", "99999999999"] {
            let e = parent_pid(Some(OsStr::new(bad))).unwrap_err();
            assert!(e.contains("is not a process id"), "{e}");
        }
    }
}
