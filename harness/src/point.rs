//! In-process measurement of one point (`stealbench run`): start the pool, generate the input
//! (untimed), one checked warm-up, then per repetition prepare (untimed), the timed computation,
//! check (untimed) and read-and-reset the pool's statistics. A failed check is an error, never a
//! timing; a passed one gives the repetition's answer and what it was checked against, which
//! the text output prints (once, and again when it changes). With `--json` every event is one
//! JSON line on stdout, read by the parent's runner.
//!
//! T_s is a point as every other: the arm `serial/front=kernel` (with `shape=`, a paper's
//! serial shape) runs the same protocol, its timed computation the workload's kernel
//! ([`Workload::kernel_shaped`]), the serial code with no runtime and no trait in it; its
//! `serial` pool is started as every point's is, and never called.
//!
//! The checks of the workloads a command names (the name, the variant, the input files and
//! parameters) are here too; `reproduce` checks its figure's workloads with them.

use crate::cli::{self, BenchPointArgs, Failure, RunArgs};
use crate::runtimes;
use crate::stats;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::time::Instant;
use stealbench_schedulers::serial::Serial;
use stealbench_schedulers::{
    Capabilities, FenceMode, FutureStack, IdlePolicy, Pinning, Placement, PoolConfig, Scheduler,
    StartError, Stats, Unmap, VictimPolicy,
};
use stealbench_schedulers::{
    FrontEnd, with_async_runtime, with_closure_runtime, with_future_runtime,
};
use stealbench_workloads::params::split_spec;
use stealbench_workloads::{
    InputOptions, Size, Variant, Workload, WorkloadInfo, resolve, with_workload,
};

/// One message of the child-to-parent protocol (one JSON object per line).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub(crate) enum Event {
    /// The point, before it measures: what it runs ([`Ran`]), which the parent records as
    /// the point's.
    Start(Ran),
    /// A timed repetition whose answer checked.
    Rep {
        /// 1-based repetition number.
        rep: usize,
        /// Wall-clock seconds of the computation alone.
        seconds: f64,
        /// The answer and what it was checked against, one line
        /// ([`stealbench_workloads::Checked`]).
        answer: String,
        /// The pool's counters during this repetition (`None` = cannot count).
        stats: Vec<(String, Option<u64>)>,
    },
    /// A check failed; no time is reported for that repetition (0 = the warm-up).
    CheckFailed {
        /// The repetition (0 = warm-up).
        rep: usize,
        /// What the check said.
        message: String,
    },
    /// The point could not run (the pool refused to start).
    Error {
        /// Why.
        message: String,
    },
    /// Every repetition ran and checked.
    Done {
        /// Number of timed repetitions.
        reps: usize,
        /// Their median, in seconds.
        median: f64,
        /// This process's peak resident set, KiB (getrusage).
        peak_rss_kb: u64,
    },
}

/// What a point's process ran, as that process reports it (its [`Event::Start`]): the record
/// `raw.csv` keeps of every repetition, and `meta.json` of every point, rather than what the
/// parent meant to run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Ran {
    /// The workload's parameters as the process resolved them (`n=32`).
    pub params: String,
    /// The pool's configuration as the process started it (`None`: a simulated point, which
    /// starts no pool).
    pub pool: Option<PoolRecord>,
}

/// A pool's configuration ([`PoolConfig`]) as the pool applied it: each setting the runtime
/// honours (its [`Capabilities`]), typed; a setting it ignores is left out, being no part of
/// what ran (`serial` records its one worker and nothing else). A setting added to
/// `PoolConfig` is one more field here and one line in each of [`PoolRecord::of`],
/// [`PoolRecord::spelling`] and [`PoolRecord::parse`]. In `raw.csv` and `meta.json` it is one
/// text spelt as an arm is, `workers=2/pinning=none/idle=lazy/...`, read back by the value
/// parsers of the settings' own types.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub(crate) struct PoolRecord {
    /// Workers P.
    pub workers: usize,
    /// Thread pinning (where it has worker threads it can pin).
    pub pinning: Option<Pinning>,
    /// Victim selection (where it has worker threads and more than one policy).
    pub victim: Option<VictimPolicy>,
    /// Idle behaviour (where it has worker threads and more than one policy).
    pub idle: Option<IdlePolicy>,
    /// Where future tasks run (a runtime on fiber stacks).
    pub futures: Option<FutureStack>,
    /// Usable bytes of every fiber stack, the default's included (a runtime on fiber stacks).
    pub stack_size: Option<usize>,
    /// The forced schedule's steal budget (where one is forced).
    pub steals: Option<u64>,
    /// Where a deque that becomes stealable goes (a runtime with stealable sets).
    pub placement: Option<Placement>,
    /// Whether suspended stacks' unused pages go back to the OS (where it can tell).
    pub unmap: Option<Unmap>,
    /// The fence mode the pool's deques applied (a runtime on this crate's deques).
    pub fence: Option<FenceMode>,
}

impl PoolRecord {
    /// The record of `config` as a pool of a runtime with `capabilities` applies it.
    pub(crate) fn of(config: &PoolConfig, capabilities: &Capabilities) -> PoolRecord {
        let c = capabilities;
        let fibers = c.fiber_stacks;
        PoolRecord {
            workers: config.workers,
            pinning: (c.threads && c.pinning).then_some(config.pinning),
            // The serial elision takes every policy and has no thief or idle worker to apply
            // one to.
            victim: (c.threads && c.victims.len() > 1).then_some(config.victim),
            idle: (c.threads && c.idle.len() > 1).then_some(config.idle),
            futures: fibers.then_some(config.futures),
            stack_size: fibers.then(|| {
                config
                    .stack_size
                    .unwrap_or(stealbench_schedulers::abp::DEFAULT_STACK_SIZE)
            }),
            steals: config.steals.filter(|_| c.steals),
            placement: c.placement.then_some(config.placement),
            unmap: c.unmap.then_some(config.unmap),
            fence: c.fence_applied(config),
        }
    }

    /// The record as one line, `key=value` per setting recorded, joined with `/`.
    pub(crate) fn spelling(&self) -> String {
        let text = |k: &str, v: Option<String>| v.map(|v| format!("{k}={v}"));
        [
            text("workers", Some(self.workers.to_string())),
            text("pinning", self.pinning.map(|v| v.to_string())),
            text("victim", self.victim.map(|v| v.to_string())),
            text("idle", self.idle.map(|v| v.to_string())),
            text("futures", self.futures.map(|v| v.to_string())),
            text("stack_size", self.stack_size.map(|v| v.to_string())),
            text("steals", self.steals.map(|v| v.to_string())),
            text("placement", self.placement.map(|v| v.to_string())),
            text("unmap", self.unmap.map(|v| v.to_string())),
            text("fence", self.fence.map(|v| v.to_string())),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("/")
    }

    /// Reads [`PoolRecord::spelling`] back, each value by its type's parser; an unknown key,
    /// a value its type refuses, a key given twice or no `workers` is refused in one line.
    pub(crate) fn parse(s: &str) -> Result<PoolRecord, String> {
        fn put<T: std::str::FromStr>(slot: &mut Option<T>, v: &str) -> Result<(), String>
        where
            T::Err: std::fmt::Display,
        {
            if slot.is_some() {
                return Err("given twice".into());
            }
            *slot = Some(v.parse().map_err(|e: T::Err| e.to_string())?);
            Ok(())
        }
        let mut workers: Option<usize> = None;
        let mut r = PoolRecord {
            workers: 0,
            pinning: None,
            victim: None,
            idle: None,
            futures: None,
            stack_size: None,
            steals: None,
            placement: None,
            unmap: None,
            fence: None,
        };
        for part in s.split('/') {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| format!("pool '{s}': '{part}' is not key=value"))?;
            match k {
                "workers" => put(&mut workers, v),
                "pinning" => put(&mut r.pinning, v),
                "victim" => put(&mut r.victim, v),
                "idle" => put(&mut r.idle, v),
                "futures" => put(&mut r.futures, v),
                "stack_size" => put(&mut r.stack_size, v),
                "steals" => put(&mut r.steals, v),
                "placement" => put(&mut r.placement, v),
                "unmap" => put(&mut r.unmap, v),
                "fence" => put(&mut r.fence, v),
                _ => Err("not a pool setting".into()),
            }
            .map_err(|e| format!("pool '{s}': {k}: {e}"))?;
        }
        r.workers = workers.ok_or_else(|| format!("pool '{s}': no workers"))?;
        Ok(r)
    }
}

impl From<PoolRecord> for String {
    fn from(r: PoolRecord) -> String {
        r.spelling()
    }
}

impl TryFrom<String> for PoolRecord {
    type Error = String;
    fn try_from(s: String) -> Result<PoolRecord, String> {
        PoolRecord::parse(&s)
    }
}

/// Formats statistics as `steals=3;steal_attempts=n/a;...`.
pub(crate) fn format_stats(stats: &[(String, Option<u64>)]) -> String {
    stats
        .iter()
        .map(|(k, v)| match v {
            Some(v) => format!("{k}={v}"),
            None => format!("{k}=n/a"),
        })
        .collect::<Vec<_>>()
        .join(";")
}

/// Peak resident set size of this process in KiB: `VmHWM`, the high-water mark of this
/// program's own memory. `getrusage`'s `ru_maxrss` is no such thing in a child: the kernel
/// carries into it, at `exec`, the high-water mark of the memory it was spawned from (the
/// parent's, which a `vfork`-like spawn shares until `exec`), so a small point would report a
/// parent's hundreds of MiB. `ru_maxrss` only where `/proc` cannot be read.
pub(crate) fn self_peak_rss_kb() -> u64 {
    if let Some((_, hwm)) = self_rss_kb() {
        return hwm;
    }
    // SAFETY: `rusage` is plain old data for which all-zeroes is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, exclusively borrowed `rusage` for the call to fill in.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    if rc == 0 {
        // Linux reports ru_maxrss in KiB.
        usage.ru_maxrss.max(0) as u64
    } else {
        0
    }
}

/// Minor page faults of this whole process so far (`getrusage(RUSAGE_SELF)`): measured from
/// outside the runtime, so every runtime has it (rayon included), as `process_minor_faults`
/// of each repetition (the timed computation's faults, all threads).
pub(crate) fn self_minor_faults() -> u64 {
    // SAFETY: `rusage` is plain old data for which all-zeroes is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, exclusively borrowed `rusage` for the call to fill in.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    if rc == 0 {
        usage.ru_minflt.max(0) as u64
    } else {
        0
    }
}

/// This process's resident set now and its peak so far, KiB (`VmRSS` and `VmHWM` of
/// `/proc/self/status`); `None` where the file or either line cannot be read.
pub(crate) fn self_rss_kb() -> Option<(u64, u64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| {
                rest.trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .ok()
            })
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// The memory counters of a repetition: the resident set (`process_rss_before_kb`) and its
/// peak (`process_hwm_before_kb`) just before the point's first computation (the warm-up; the
/// pool started, the input generated, the work prepared), and the peak after this
/// repetition's computation (`process_hwm_kb`, so the warm-up and every earlier repetition
/// included). `process_hwm_kb - process_rss_before_kb` is what the computation added to the
/// resident set at its peak (Fibril's "incremental RSS"), unless the peak was reached before
/// the computation (`process_hwm_kb == process_hwm_before_kb`): then it is an upper bound.
fn memory_stats(
    before: Option<(u64, u64)>,
    after: Option<(u64, u64)>,
) -> [(String, Option<u64>); 3] {
    [
        ("process_rss_before_kb".to_string(), before.map(|b| b.0)),
        ("process_hwm_before_kb".to_string(), before.map(|b| b.1)),
        ("process_hwm_kb".to_string(), after.map(|a| a.1)),
    ]
}

/// Why a measurement stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MeasureError {
    /// The answer of repetition `rep` (0 = warm-up) was wrong.
    CheckFailed {
        /// The repetition (0 = warm-up).
        rep: usize,
        /// What the check said.
        message: String,
    },
}

/// Measures `reps` timed repetitions of `run` on `pool` (after one warm-up), checking each.
/// Every event goes to `sink`; returns the times of the repetitions.
pub(crate) fn measure<S, W, R>(
    pool: &S,
    input: &W::Input,
    reps: usize,
    run: R,
    sink: &mut dyn FnMut(Event),
) -> Result<Vec<f64>, MeasureError>
where
    S: Scheduler,
    W: Workload,
    R: Fn(&S, &W::Input, &mut W::Work) -> W::Answer,
{
    // Warm-up: same steps, untimed, its counters discarded.
    let mut work = W::prepare(input);
    let before = self_rss_kb();
    let answer = run(pool, input, &mut work);
    if let Err(message) = W::check(input, &work, &answer) {
        sink(Event::CheckFailed {
            rep: 0,
            message: message.clone(),
        });
        return Err(MeasureError::CheckFailed { rep: 0, message });
    }
    drop((answer, work));
    pool.reset_stats();

    let mut times = Vec::with_capacity(reps);
    for rep in 1..=reps {
        let mut work = W::prepare(input);
        let faults = self_minor_faults();
        // `black_box` on the input before and the answer inside the timed region: a pure
        // computation (integrate, nqueens on the serial elision) must be computed every
        // repetition, not once for the warm-up and reused.
        let start = Instant::now();
        let answer = std::hint::black_box(run(pool, std::hint::black_box(input), &mut work));
        let seconds = start.elapsed().as_secs_f64();
        let faults = self_minor_faults() - faults;
        let after = self_rss_kb();
        let stats: Stats = pool.stats();
        pool.reset_stats();
        let checked = match W::check(input, &work, &answer) {
            Ok(checked) => checked,
            Err(message) => {
                sink(Event::CheckFailed {
                    rep,
                    message: message.clone(),
                });
                return Err(MeasureError::CheckFailed { rep, message });
            }
        };
        drop((answer, work));
        times.push(seconds);
        let mut stats = stats.named();
        stats.push(("process_minor_faults".to_string(), Some(faults)));
        stats.extend(memory_stats(before, after));
        sink(Event::Rep {
            rep,
            seconds,
            answer: checked.to_string(),
            stats,
        });
    }
    Ok(times)
}

/// Where the events of a point go: JSON lines, or text for a person.
struct Printer {
    json: bool,
    /// The answer last printed as text: a repetition's answer is printed when it differs.
    answer: std::cell::RefCell<String>,
}

impl Printer {
    /// A printer of JSON lines (`json`) or of text.
    fn new(json: bool) -> Self {
        Printer {
            json,
            answer: Default::default(),
        }
    }

    /// The input `r`, or its error (a parameter value or an input file the workload cannot
    /// use) reported as an error event and returned as bad input.
    fn or_error<T>(&self, r: Result<T, String>) -> Result<T, Failure> {
        r.map_err(|message| {
            self.emit(&Event::Error {
                message: message.clone(),
            });
            Failure::Usage(message)
        })
    }

    fn emit(&self, e: &Event) {
        let mut out = std::io::stdout().lock();
        let written = if self.json {
            let line = serde_json::to_string(e).expect("events serialise");
            writeln!(out, "{line}")
        } else {
            match e {
                Event::Start(ran) => writeln!(out, "input: {}", ran.params),
                Event::Rep {
                    rep,
                    seconds,
                    answer,
                    stats,
                } => writeln!(
                    out,
                    "rep {rep:>3}: {seconds:.6} s  check ok  {}",
                    format_stats(stats)
                )
                .and_then(|()| {
                    let mut last = self.answer.borrow_mut();
                    if *last == *answer {
                        return Ok(());
                    }
                    last.clone_from(answer);
                    writeln!(out, "answer: {answer}")
                }),
                Event::CheckFailed { rep: 0, message } => {
                    writeln!(out, "warm-up: CHECK FAILED: {message}")
                }
                Event::CheckFailed { rep, message } => {
                    writeln!(out, "rep {rep:>3}: CHECK FAILED: {message}")
                }
                // The same message ends the command on stderr.
                Event::Error { .. } => Ok(()),
                Event::Done {
                    reps,
                    median,
                    peak_rss_kb,
                } => writeln!(
                    out,
                    "median {median:.6} s over {reps} repetitions; peak RSS {peak_rss_kb} KiB; \
                     check ok on the warm-up and every repetition"
                ),
            }
        };
        // A closed stdout means the reader (the parent process) is gone: stop measuring. Any
        // other failure to write loses the results: say so and stop, as an I/O failure.
        if let Err(e) = written.and_then(|()| out.flush()) {
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                errln!("stealbench: cannot write to stdout: {e}");
                std::process::exit(Failure::Io(String::new()).exit_code());
            }
            std::process::exit(1);
        }
    }
}

/// Starts `S`, measures, reports. `input` runs after the pool started (so a refused
/// configuration costs no input generation); its `Err` (a parameter value the workload cannot
/// use, an input that would not fit in memory, an input file that became unusable after the
/// parameters were checked) is reported as an error event and is bad input.
fn execute<S, W, I, R>(
    config: &PoolConfig,
    params: String,
    input: I,
    reps: usize,
    run: R,
    printer: &Printer,
) -> Result<(), Failure>
where
    S: Scheduler,
    W: Workload,
    I: FnOnce() -> Result<W::Input, String>,
    R: Fn(&S, &W::Input, &mut W::Work) -> W::Answer,
{
    let pool = match S::start(config) {
        Ok(p) => p,
        Err(e) => {
            let message = format!("{} could not start: {e}", S::NAME);
            printer.emit(&Event::Error {
                message: message.clone(),
            });
            return Err(match e {
                StartError::Unsupported(_) => Failure::Usage(message),
                StartError::Os(_) => Failure::Runtime(message),
            });
        }
    };
    printer.emit(&Event::Start(Ran {
        params,
        pool: Some(PoolRecord::of(config, &S::CAPABILITIES)),
    }));
    let input = printer.or_error(input())?;
    let mut sink = |e: Event| printer.emit(&e);
    match measure::<S, W, R>(&pool, &input, reps, run, &mut sink) {
        Ok(times) => {
            let median = stats::median(&times).unwrap_or(f64::NAN);
            printer.emit(&Event::Done {
                reps: times.len(),
                median,
                peak_rss_kb: self_peak_rss_kb(),
            });
            if let (false, Some(s)) = (printer.json, stats::summarize(&times)) {
                outln!(
                    "min {:.6} s, mean {:.6} s, stddev {:.6} s",
                    s.min,
                    s.mean,
                    s.stddev
                );
            }
            Ok(())
        }
        Err(MeasureError::CheckFailed { rep, message }) => Err(Failure::Runtime(format!(
            "check failed at {}: {message}",
            if rep == 0 {
                "the warm-up".to_string()
            } else {
                format!("repetition {rep}")
            }
        ))),
    }
}

/// A simulated point: records the program's DAG once on the `record` runtime (a checked run,
/// untimed), then replays it as `sim` says (the model, P, the steal budget), one seed per
/// repetition (seed = the repetition's number). A repetition's `seconds` is the replay's wall
/// time; its statistics are the simulator's counters, `sim_time` being the simulated time in
/// the DAG's weight units.
fn simulate_point<W: Workload>(
    sim: stealbench_sim::SimConfig,
    weights: stealbench_schedulers::record::Weights,
    variant: Variant,
    params: String,
    input: impl FnOnce() -> Result<W::Input, String>,
    reps: usize,
    printer: &Printer,
) -> Result<(), Failure> {
    use stealbench_schedulers::record::Recorder;
    printer.emit(&Event::Start(Ran { params, pool: None }));
    let input = printer.or_error(input())?;
    let recorder = Recorder::new(weights);
    let mut work = W::prepare(&input);
    let answer = W::run_futures(&recorder, variant, &input, &mut work);
    let checked = match W::check(&input, &work, &answer) {
        Ok(checked) => checked.to_string(),
        Err(message) => {
            printer.emit(&Event::CheckFailed {
                rep: 0,
                message: message.clone(),
            });
            return Err(Failure::Runtime(format!(
                "check failed on the recorded run: {message}"
            )));
        }
    };
    drop((answer, work));
    let dag = recorder.take_dag();
    let depth = fork_depth(&dag);
    let mut times = Vec::with_capacity(reps);
    for rep in 1..=reps {
        let sim = stealbench_sim::SimConfig {
            seed: rep as u64,
            ..sim.clone()
        };
        let start = Instant::now();
        let report = stealbench_sim::simulate_with(&dag, &sim);
        let seconds = start.elapsed().as_secs_f64();
        times.push(seconds);
        let mut stats: Vec<(String, Option<u64>)> = report
            .named()
            .iter()
            .map(|&(k, v)| (k.to_string(), Some(v)))
            .collect();
        stats.push(("fork_depth".to_string(), Some(depth)));
        printer.emit(&Event::Rep {
            rep,
            seconds,
            answer: checked.clone(),
            stats,
        });
    }
    printer.emit(&Event::Done {
        reps: times.len(),
        median: stats::median(&times).unwrap_or(f64::NAN),
        peak_rss_kb: self_peak_rss_kb(),
    });
    Ok(())
}

/// The fork depth of a recorded program (Fibril's *Fibril depth* D, reported by a simulated
/// point as `fork_depth`): the most forked children enclosing one strand, i.e. the most
/// stealable continuations on a path from the root to a leaf. A fork's child (a `join`'s first
/// branch, a spawned task, a future's task) runs one level deeper than the strand that forked
/// it; the continuation (a `join`'s second branch, the rest of a scope) and the sync after it
/// stay at the forking strand's level. For `join(fib(n-1), fib(n-2))` down to `n < 2` it is
/// `n - 1`, as the paper's fib(42) has D = 41.
pub(crate) fn fork_depth(dag: &stealbench_schedulers::record::Dag) -> u64 {
    use stealbench_schedulers::record::Kind;
    let nodes = dag.nodes();
    // Every strand but the first is given its level by the one strand whose end leads to it
    // (a fork its child and continuation, a `Seq` or a touch the node after it), which comes
    // before it in the serial order.
    let mut level = vec![0u32; nodes.len()];
    let mut deepest = 0;
    for (v, node) in nodes.iter().enumerate() {
        let d = level[v];
        deepest = deepest.max(d);
        let mut set = |i: usize, d: u32| {
            if let Some(l) = level.get_mut(i) {
                *l = d;
            }
        };
        match node.kind() {
            Kind::Fork | Kind::Future => {
                set(v + 1, d + 1);
                set(node.target() as usize, d);
            }
            Kind::Seq | Kind::Touch => set(v + 1, d),
            Kind::Jump | Kind::Put | Kind::End => {}
        }
    }
    u64::from(deepest)
}

/// The workload named `name`, or a one-line reason naming the nearest one.
pub(crate) fn lookup_workload(name: &str) -> Result<WorkloadInfo, Failure> {
    let all = stealbench_workloads::all();
    if let Some(w) = all.iter().find(|w| w.name == name) {
        return Ok(*w);
    }
    let names: Vec<&str> = all.iter().map(|w| w.name).collect();
    Err(Failure::Usage(crate::suggest::unknown(
        "workload", name, &names,
    )))
}

/// Checks that `workload` offers `variant` on `front_end`.
pub(crate) fn check_variant(
    workload: &WorkloadInfo,
    variant: Variant,
    front_end: FrontEnd,
) -> Result<(), Failure> {
    let offered = crate::grid::offered(workload, front_end);
    if offered.contains(&variant) {
        return Ok(());
    }
    let names: Vec<&str> = offered.iter().map(|v| v.name()).collect();
    let nearest = crate::suggest::nearest(variant.name(), names.iter().copied())
        .map(|n| format!("did you mean '{n}'? "))
        .unwrap_or_default();
    Err(Failure::Usage(format!(
        "workload '{}' has no variant '{variant}' on the {front_end} front-end ({nearest}it has: {})",
        workload.name,
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    )))
}

/// Checks that every input option set concerns one of the workloads that will run (`specs`,
/// `NAME[/key=value]...`) and that each can use its files and parameter overrides (the
/// spec's, then `options.params`) at `size`. Returns every spec with its parameters at `size`
/// ([`Workload::params_with`]), in the order given.
///
/// [`Workload::params_with`]: stealbench_workloads::Workload::params_with
pub(crate) fn check_inputs(
    specs: &[String],
    size: Size,
    options: &InputOptions,
) -> Result<Vec<(String, String)>, Failure> {
    let workloads = specs
        .iter()
        .map(|spec| {
            let (name, mut overrides) = split_spec(spec).map_err(Failure::Usage)?;
            let info = lookup_workload(name)?;
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

/// `stealbench run`: one point in this process, its pool in fence mode `fence` (the command
/// line's, [`stealbench_schedulers::FenceMode::from_env`]).
pub(crate) fn run_command(args: &RunArgs, fence: FenceMode) -> Result<(), Failure> {
    let (point, m) = (&args.point, &args.measure);
    let (arm, variant, workers, size) = (point.runtime, point.variant, point.workers, m.size);
    let runtime = arm.info;
    let (name, spec_overrides) = split_spec(&point.workload).map_err(Failure::Usage)?;
    let workload = lookup_workload(name)?;
    check_variant(&workload, variant, arm.front_end())?;
    if let Some(why) = runtimes::unsupported(&arm, variant) {
        return Err(Failure::Usage(format!(
            "runtime '{}' does not run {variant} variants: {why}",
            runtime.name
        )));
    }
    if let (Some(why), true) = (arm.no_worker_to_pin(), m.pinning != Pinning::None) {
        // As the arm's own `pinning=` is refused.
        return Err(Failure::Usage(format!(
            "--pinning {}: {why}: drop --pinning",
            m.pinning
        )));
    }
    let reps = m.reps.unwrap_or_else(|| cli::default_reps(size));
    let mut options = cli::input_options(m.hw_video.as_deref(), m.hw_points.as_deref())?;
    // The spec's overrides, then `--param`'s: a later value of a key wins.
    options.params = spec_overrides;
    options.params.extend(cli::param_overrides(&m.params)?);
    // Checks the input files and parameters before anything starts; the parameters name them.
    let params = check_inputs(&[workload.name.to_string()], size, &options)?
        .remove(0)
        .1;
    let config = arm.configure(PoolConfig {
        pinning: m.pinning,
        stack_size: m.stack_size,
        fence,
        ..PoolConfig::with_workers(workers)
    });
    let printer = Printer::new(args.json);
    if !args.json {
        // The fence mode where the pool applies one (a runtime on this crate's deques).
        let fence = arm
            .info
            .capabilities
            .filter(|_| arm.sim.is_none())
            .and_then(|c| c.fence_applied(&config))
            .map_or_else(String::new, |f| format!(" fence={f}"));
        outln!(
            "{} {} {variant} P={workers} size={size} pinning={} reps={reps}{fence}",
            arm.spec(),
            point.workload,
            config.pinning
        );
    }
    let name = runtime.name;
    let options = &options;
    let params = if fault_hook(&arm.spec(), workers) {
        format!("{params} (misreported)")
    } else {
        params
    };
    if let (Some(weights), Some(model)) = (arm.sim, arm.model()) {
        let sim = stealbench_sim::SimConfig {
            steals: arm.steals,
            ..stealbench_sim::SimConfig::new(model, workers, 0)
        };
        return with_workload!(workload.name, W => {
            simulate_point::<W>(sim, weights, variant, params,
                || W::input_with(&resolve::<W>(size, options)?, options), reps, &printer)
        })
        .expect("a registered workload dispatches");
    }
    // The point on pool type `S` through `W::$run` (`run`, `run_futures`, `run_async`).
    macro_rules! point {
        ($S:ident, $run:ident) => {
            with_workload!(workload.name, W => {
                execute::<$S, W, _, _>(&config, params,
                    || W::input_with(&resolve::<W>(size, options)?, options), reps,
                    |p: &$S, i: &<W as Workload>::Input, w: &mut <W as Workload>::Work| {
                        W::$run(p, variant, i, w)
                    }, &printer)
            })
        };
    }
    let done = match arm.front_end() {
        // A runtime with futures runs every variant through `run_futures`; one without them
        // runs the fj variants only (`unsupported` refused the others) through `run`.
        FrontEnd::Closure if has_futures(&arm) => {
            with_future_runtime!(name, S => point!(S, run_futures))
        }
        FrontEnd::Closure => with_closure_runtime!(name, S => point!(S, run)),
        FrontEnd::Async => with_async_runtime!(name, S => point!(S, run_async)),
        // The kernel, the workload's serial code called directly (T_s): the pool (`serial`'s,
        // the one runtime with this front-end) is started as every point's is, and never
        // called.
        FrontEnd::Kernel => {
            let shape = arm.shape.unwrap_or_default();
            Some(with_workload!(workload.name, W => {
                execute::<Serial, W, _, _>(&config, params,
                    || W::input_with(&resolve::<W>(size, options)?, options), reps,
                    |_: &Serial, i: &<W as Workload>::Input, w: &mut <W as Workload>::Work| {
                        W::kernel_shaped(shape, i, w)
                    }, &printer)
            }))
        }
    };
    // Both lookups succeeded above, so both dispatches find their type.
    done.flatten()
        .expect("a registered runtime and workload dispatch")
}

/// Whether the arm's runtime has futures (its closure-front-end pool is a `FutureForkJoin`).
fn has_futures(arm: &runtimes::Arm) -> bool {
    arm.info.capabilities.is_some_and(|c| c.futures)
}

/// The environment variable of the test-only fault hook: `ARM@P=KIND[,...]` makes the point
/// of runtime arm `ARM` at `P` workers fail before it measures anything, as KIND says:
/// `panic`, `abort` or `hang` (sleeps until killed), or measures it but reports parameters of
/// its own (`params`: the input's, with ` (misreported)` after them). The end-to-end tests use
/// it to check what `reproduce` records for a crashed or overrunning child, that `--resume`
/// retries it, and that a point's record is what its process reported.
pub(crate) const FAULT_ENV: &str = "STEALBENCH_FAULT";

/// Acts on [`FAULT_ENV`] for the point of `arm` at `workers`, if it names it; whether the point
/// is to misreport its parameters.
fn fault_hook(arm: &str, workers: usize) -> bool {
    let Ok(spec) = std::env::var(FAULT_ENV) else {
        return false;
    };
    let me = format!("{arm}@{workers}");
    for fault in spec.split(',') {
        match fault.rsplit_once('=') {
            Some((at, "panic")) if at == me => panic!("{FAULT_ENV}: a deliberate panic"),
            Some((at, "abort")) if at == me => std::process::abort(),
            Some((at, "hang")) if at == me => loop {
                std::thread::sleep(std::time::Duration::from_secs(3600));
            },
            Some((at, "params")) if at == me => return true,
            _ => {}
        }
    }
    false
}

/// `stealbench bench-point`: fib(n), one variant, P = 1, on one runtime.
pub(crate) fn bench_point_command(args: &BenchPointArgs, fence: FenceMode) -> Result<(), Failure> {
    use stealbench_workloads::fib::Fib;
    let (arm, variant) = (args.arm, args.variant);
    let runtime = arm.info;
    check_variant(&lookup_workload("fib")?, variant, arm.front_end())?;
    if let Some(why) = runtimes::unsupported(&arm, variant) {
        return Err(Failure::Usage(format!(
            "runtime '{}' does not run {variant} variants: {why}",
            runtime.name
        )));
    }
    let config = arm.configure(PoolConfig {
        pinning: Pinning::None,
        stack_size: args.stack_size,
        fence,
        ..PoolConfig::with_workers(1)
    });
    let printer = Printer::new(args.json);
    let n = args.n;
    let params = format!("n={n}");
    let name = runtime.name;
    // fib's point on pool type `S` through `Fib::$run`.
    macro_rules! point {
        ($S:ident, $run:ident) => {
            execute::<$S, Fib, _, _>(
                &config,
                params,
                || Ok(n),
                args.reps,
                |p: &$S, i: &u64, w: &mut ()| Fib::$run(p, variant, i, w),
                &printer,
            )
        };
    }
    let done = match arm.front_end() {
        FrontEnd::Closure if has_futures(&arm) => {
            with_future_runtime!(name, S => point!(S, run_futures))
        }
        FrontEnd::Closure => with_closure_runtime!(name, S => point!(S, run)),
        FrontEnd::Async => with_async_runtime!(name, S => point!(S, run_async)),
        FrontEnd::Kernel => {
            let shape = arm.shape.unwrap_or_default();
            Some(execute::<Serial, Fib, _, _>(
                &config,
                params,
                || Ok(n),
                args.reps,
                |_: &Serial, i: &u64, w: &mut ()| Fib::kernel_shaped(shape, i, w),
                &printer,
            ))
        }
    };
    done.expect("a registered runtime dispatches")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pool_record_holds_what_the_runtime_honours_typed() {
        use stealbench_schedulers::Scheduler as _;
        let config = PoolConfig::with_workers(2);
        let serial = PoolRecord::of(
            &config,
            &stealbench_schedulers::serial::Serial::CAPABILITIES,
        );
        assert_eq!(serial.spelling(), "workers=2");
        let abp = PoolRecord::of(&config, &stealbench_schedulers::abp::Abp::CAPABILITIES);
        let text = abp.spelling();
        assert!(
            text.contains("stack_size=16777216") && text.contains("fence="),
            "{text}"
        );
        assert_eq!(PoolRecord::parse(&text).unwrap(), abp);
        for bad in [
            "pinning=banana/workers=1",
            "workers=1/workers=2",
            "idle=lazy",
            "x=1/workers=1",
        ] {
            assert!(PoolRecord::parse(bad).is_err(), "{bad}");
        }
    }
    use stealbench_workloads::fib::Fib;

    #[test]
    fn measure_reports_every_rep_and_checks() {
        let pool = Serial::start(&PoolConfig::with_workers(1)).unwrap();
        let mut events = Vec::new();
        let times = measure::<Serial, Fib, _>(
            &pool,
            &15,
            3,
            |p, i, w| Fib::run(p, Variant::Fj, i, w),
            &mut |e| events.push(e),
        )
        .unwrap();
        assert_eq!(times.len(), 3);
        assert_eq!(events.len(), 3);
        assert!(matches!(&events[2], Event::Rep { rep: 3, stats, .. } if stats[0].0 == "steals"));
        for e in &events {
            let Event::Rep { answer, .. } = e else {
                panic!("a repetition: {e:?}")
            };
            assert_eq!(
                answer,
                "fib(15) = 610; checked against the iterative fib(n)"
            );
        }
    }

    #[test]
    fn a_wrong_answer_is_an_error_not_a_time() {
        let pool = Serial::start(&PoolConfig::with_workers(1)).unwrap();
        let mut events = Vec::new();
        // Wrong from the second call on: the warm-up passes, repetition 1 fails.
        let calls = std::cell::Cell::new(0);
        let r = measure::<Serial, Fib, _>(
            &pool,
            &15,
            3,
            |p, i, w| {
                calls.set(calls.get() + 1);
                Fib::run(p, Variant::Fj, i, w) + u64::from(calls.get() > 1)
            },
            &mut |e| events.push(e),
        );
        assert!(matches!(r, Err(MeasureError::CheckFailed { rep: 1, .. })));
        assert_eq!(events.len(), 1);
        assert!(matches!(events[0], Event::CheckFailed { rep: 1, .. }));
    }

    #[test]
    fn events_round_trip_through_json() {
        let e = Event::Rep {
            rep: 2,
            seconds: 0.125,
            answer: "fib(3) = 2; checked against the iterative fib(n)".into(),
            stats: vec![("steals".into(), None), ("x".into(), Some(4))],
        };
        let line = serde_json::to_string(&e).unwrap();
        assert!(line.contains("\"event\":\"rep\""), "{line}");
        assert!(line.contains("\"answer\":\"fib(3) = 2; checked"), "{line}");
        assert_eq!(serde_json::from_str::<Event>(&line).unwrap(), e);
        assert_eq!(
            format_stats(&[("steals".into(), None), ("x".into(), Some(4))]),
            "steals=n/a;x=4"
        );
    }

    #[test]
    fn variant_checks_name_what_exists() {
        let fib = lookup_workload("fib").unwrap();
        assert!(check_variant(&fib, Variant::Fj, FrontEnd::Closure).is_ok());
        let e = check_variant(&fib, Variant::Gf, FrontEnd::Closure).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.message().contains("it has: fj, sf"), "{}", e.message());
        assert!(
            lookup_workload("fibb")
                .unwrap_err()
                .message()
                .contains("'fib'")
        );
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
    fn repetitions_record_the_resident_set_before_the_first_run_and_the_peak_after() {
        let pool = Serial::start(&PoolConfig::with_workers(1)).unwrap();
        // Each run maps 64 MiB of fresh pages, touches them and unmaps them: the process's
        // resident set grows by 64 MiB during the run, whatever the allocator keeps.
        const GROW: usize = 64 << 20;
        let touch = || {
            // SAFETY: a fresh private anonymous mapping, written page by page, then unmapped;
            // nothing else refers to it.
            unsafe {
                let m = libc::mmap(
                    std::ptr::null_mut(),
                    GROW,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                );
                assert_ne!(m, libc::MAP_FAILED);
                for off in (0..GROW).step_by(4096) {
                    std::ptr::write_volatile(m.cast::<u8>().add(off), 1);
                }
                libc::munmap(m, GROW);
            }
        };
        let mut events = Vec::new();
        measure::<Serial, Fib, _>(
            &pool,
            &15,
            2,
            |p, i, w| {
                touch();
                Fib::run(p, Variant::Fj, i, w)
            },
            &mut |e| events.push(e),
        )
        .unwrap();
        let stat = |e: &Event, name: &str| match e {
            Event::Rep { stats, .. } => stats.iter().find(|(k, _)| k == name).unwrap().1,
            _ => panic!("a repetition"),
        };
        let Some((rss, hwm)) = self_rss_kb() else {
            return; // no /proc here: nothing to compare
        };
        assert!(rss > 0 && hwm >= rss);
        for e in &events {
            let before = stat(e, "process_rss_before_kb").unwrap();
            let hwm_before = stat(e, "process_hwm_before_kb").unwrap();
            let peak = stat(e, "process_hwm_kb").unwrap();
            assert!(hwm_before >= before);
            // The pages touched by the runs are in the peak, above the resident set before (by
            // half of them at least: the other tests of this process may free memory meanwhile).
            assert!(
                peak >= before + (GROW as u64 >> 11),
                "{before} KiB, then {peak} KiB"
            );
        }
        // The resident set before is read once, before the warm-up: the same in every rep.
        assert_eq!(
            stat(&events[0], "process_rss_before_kb"),
            stat(&events[1], "process_rss_before_kb")
        );
    }

    #[test]
    fn the_fork_depth_of_fib_is_n_minus_1() {
        use stealbench_schedulers::record::{Recorder, Weights};
        for (n, d) in [(0, 0), (1, 0), (2, 1), (3, 2), (10, 9), (15, 14)] {
            use stealbench_workloads::fib;
            for (variant, v, dag) in [
                (
                    Variant::Fj,
                    Recorder::record(Weights::Unit, |w| fib::fj(w, n)),
                ),
                (
                    Variant::Sf,
                    Recorder::record(Weights::Unit, |w| fib::sf(w, n)),
                ),
            ]
            .map(|(variant, (v, dag))| (variant, v, dag))
            {
                assert_eq!(v, fib::expected(n));
                assert_eq!(fork_depth(&dag), d, "fib({n}) {variant}");
            }
        }
        // Nested joins in the second branch do not add up: the continuation stays on its level.
        let (_, dag) = Recorder::record(Weights::Unit, |w| {
            use stealbench_schedulers::Worker;
            w.join(
                |_| (),
                |w| w.join(|_| (), |w| w.join(|_| (), |w| w.join(|_| (), |_| ()))),
            )
        });
        assert_eq!(fork_depth(&dag), 1);
        let (_, dag) = Recorder::record(Weights::Unit, |w| {
            use stealbench_schedulers::Worker;
            w.join(|w| w.join(|w| w.join(|_| (), |_| ()), |_| ()), |_| ())
        });
        assert_eq!(fork_depth(&dag), 3);
    }

    #[test]
    fn peak_rss_is_positive() {
        assert!(self_peak_rss_kb() > 0);
    }
}
