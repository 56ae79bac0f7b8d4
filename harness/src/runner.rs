//! Running a grid's points in child processes: each point is `stealbench run ... --json` in a
//! fresh process ([`crate::supervise`]), its events turned into the point's outcome and rows.
//! The loop [`run_missing`] appends each finished point to `raw.csv` at once and skips the
//! points already there, so an interrupted run resumes where it stopped; with several rounds,
//! each round runs in its own shuffled order.

use crate::grid::Status;
use crate::protocol::{Event, Ran};
use crate::results::{self, RawRow, RepCheck, Store};
use crate::spec::{Measure, PointSpec};
use crate::supervise::{ChildEnd, ChildResult, interrupted, run_child};
use std::io;
use std::path::PathBuf;
use std::time::Duration;
use stealbench_schedulers::FenceMode;
use stealbench_workloads::Size;

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
    /// How every point is measured: its size and repetitions among the rest.
    fn measure(&self) -> &Measure;
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
/// arguments by the typed model ([`PointSpec::to_args`], [`Measure::to_args`]), and the run's
/// fence mode (`--fence`).
#[derive(Debug, Clone)]
pub(crate) struct ChildExecutor {
    /// The stealbench binary (`std::env::current_exe()`).
    pub exe: PathBuf,
    /// How every point is measured (its repetitions given).
    pub measure: Measure,
    /// The deques' fence mode of every point's pool.
    pub fence: FenceMode,
    /// Per-point timeout.
    pub timeout: Option<Duration>,
}

impl ChildExecutor {
    /// The child's arguments for `p`.
    pub(crate) fn args(&self, p: &PointSpec) -> Vec<String> {
        std::iter::once("run".to_string())
            .chain(p.to_args())
            .chain(self.measure.to_args(p))
            .chain(["--fence".to_string(), self.fence.name().to_string()])
            .chain(std::iter::once("--json".to_string()))
            .collect()
    }
}

impl PointExecutor for ChildExecutor {
    fn measure(&self) -> &Measure {
        &self.measure
    }

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
        check: RepCheck::NotRun,
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
            check: RepCheck::Ok,
            counters: r.stats.clone(),
            answer: r.answer.clone(),
            ..base.clone()
        })
        .collect();
    if let Some((rep, m)) = &o.failed_check {
        rows.push(RawRow {
            rep: Some(*rep),
            check: RepCheck::Failed(m.clone()),
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
/// point's round that did not finish ok, or has fewer timed repetitions than the executor's
/// [`Measure`] asks, runs again whole: its old rows move to `attempts.csv` first
/// ([`Store::set_aside`]). Stops early (returning `Interrupted`) when the user interrupts.
pub(crate) fn run_missing(
    points: &[PointSpec],
    store: &mut Store,
    rounds: usize,
    params: &dyn Fn(&PointSpec) -> String,
    executor: &mut dyn PointExecutor,
    observe: &mut dyn FnMut(Progress<'_>),
) -> Result<(), ExecError> {
    store.upgrade().map_err(ExecError::Io)?;
    let (size, reps) = (executor.measure().size, executor.measure().reps());
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
    use std::path::Path;
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
        measure: Measure,
    }

    impl Fake {
        /// A fake that is interrupted after `limit` calls, measuring two repetitions at size
        /// test.
        fn new(limit: usize) -> Fake {
            Fake {
                calls: vec![],
                limit,
                measure: Measure {
                    size: Size::Test,
                    reps: Some(2),
                    pinning: Default::default(),
                    stack_size: None,
                    hw_video: None,
                    hw_points: None,
                    params: Vec::new(),
                },
            }
        }
    }

    impl PointExecutor for Fake {
        fn measure(&self) -> &Measure {
            &self.measure
        }

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
        let mut first = Fake::new(2);
        let r = run_missing(
            &points,
            &mut Store::open(&raw).unwrap(),
            1,
            &params,
            &mut first,
            &mut |_| {},
        );
        assert!(matches!(r, Err(ExecError::Interrupted)));
        assert_eq!(first.calls, points[..2]);
        assert_eq!(Store::open(&raw).unwrap().rows().to_vec().len(), 4);
        // Resume: only the other two run.
        let mut second = Fake::new(usize::MAX);
        let mut plan = None;
        run_missing(
            &points,
            &mut Store::open(&raw).unwrap(),
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
        let mut fake = Fake::new(usize::MAX);
        let mut retried = Vec::new();
        let params = |_: &PointSpec| "n=20".to_string();
        let observe = &mut |e: Progress<'_>| {
            if let Progress::Plan { retried: r, .. } = e {
                retried = r.to_vec();
            }
        };
        let mut store = Store::open(raw).unwrap();
        run_missing(points, &mut store, 1, &params, &mut fake, observe).unwrap();
        (fake.calls, retried)
    }

    #[test]
    fn rounds_run_every_point_once_each_in_shuffled_orders() {
        let dir = TempDir::with_prefix("stealbench-rounds-").unwrap();
        let raw = dir.path().join("raw.csv");
        let points: Vec<PointSpec> = (1..=6).map(|p| key("abp", p)).collect();
        let mut fake = Fake::new(usize::MAX);
        let params = |_: &PointSpec| "n=20".to_string();
        run_missing(
            &points,
            &mut Store::open(&raw).unwrap(),
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
        let mut fake = Fake::new(usize::MAX);
        let params = |_: &PointSpec| "n=20".to_string();
        run_missing(
            points,
            &mut Store::open(raw).unwrap(),
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
        assert_eq!(rows[1].check, RepCheck::Failed("wrong".to_string()));
        assert_eq!(rows[1].answer, "", "a failed check has no answer");
        assert!(outcome_of(child(vec![], ChildEnd::Signaled(libc::SIGINT)), None).is_none());
    }

    #[test]
    fn a_points_record_and_peak_are_what_its_process_reported() {
        let ran = Ran {
            params: "n=21 (the child's)".into(),
            pool: Some(crate::protocol::PoolRecord::of(
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
}
