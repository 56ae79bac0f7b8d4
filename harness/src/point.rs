//! One point measured in this process: the `run` and `bench-point` commands. `run` starts the
//! pool, generates the input (untimed) and measures ([`crate::measure`]: one checked warm-up,
//! then timed, checked repetitions); a simulated point records the program's DAG and replays
//! it. A failed check is an error, never a timing; a passed one gives the repetition's answer
//! and what it was checked against, which the text output prints (once, and again when it
//! changes). With `--json` every event is one JSON line on stdout ([`crate::protocol`]), read
//! by the parent's runner.
//!
//! T_s is a point as every other: the arm `serial/front=kernel` (with `shape=`, a paper's
//! serial shape) runs the same protocol, its timed computation the workload's kernel
//! ([`Workload::kernel_shaped`]), the serial code with no runtime and no trait in it; its
//! `serial` pool is started as every point's is, and never called.

use crate::cli::{self, BenchPointArgs, RunArgs};
use crate::failure::Failure;
use crate::inputs::{check_inputs, check_variant, lookup_workload};
use crate::measure::{MeasureError, measure};
use crate::probe::self_peak_rss_kb;
use crate::protocol::{Event, PoolRecord, Ran};
use crate::runtimes;
use crate::spec::WorkloadSpec;
use crate::stats;
use std::io::Write;
use std::time::Instant;
use stealbench_schedulers::serial::Serial;
use stealbench_schedulers::{FenceMode, Pinning, PoolConfig, Scheduler, StartError};
use stealbench_schedulers::{
    FrontEnd, with_async_runtime, with_closure_runtime, with_future_runtime,
};
use stealbench_workloads::{Variant, Workload, resolve, with_workload};

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

/// `stealbench run`: one point in this process, its pool in the fence mode `--fence` gives
/// (as a parent gives it to its child), else `env_fence`, the one the environment chose
/// ([`stealbench_schedulers::FenceMode::from_env`]).
pub(crate) fn run_command(args: &RunArgs, env_fence: FenceMode) -> Result<(), Failure> {
    let fence = args.fence.unwrap_or(env_fence);
    let (point, m) = (&args.point, &args.measure);
    let (arm, variant, workers, size) = (point.runtime, point.variant, point.workers, m.size);
    let runtime = arm.info;
    let workload = lookup_workload(point.workload.name())?;
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
    let reps = m.reps();
    let mut options = cli::input_options(m.hw_video.as_deref(), m.hw_points.as_deref())?;
    // The spec's overrides, then `--param`'s: a later value of a key wins.
    options.params = point.workload.params().to_vec();
    options.params.extend(cli::param_overrides(&m.params)?);
    // Checks the input files and parameters before anything starts; the parameters name them.
    let bare = WorkloadSpec::parse(workload.name).map_err(Failure::Usage)?;
    let params = check_inputs(&[bare], size, &options)?.remove(0).1;
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
            steals: arm.settings.steals,
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

/// `stealbench bench-point`: fib(n), one variant, P = 1, on one runtime, its pool in the fence
/// mode `--fence` gives, else `env_fence` (as [`run_command`]).
pub(crate) fn bench_point_command(
    args: &BenchPointArgs,
    env_fence: FenceMode,
) -> Result<(), Failure> {
    use stealbench_workloads::fib::Fib;
    let fence = args.fence.unwrap_or(env_fence);
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
    fn stats_are_formatted_as_text() {
        assert_eq!(
            format_stats(&[("steals".into(), None), ("x".into(), Some(4))]),
            "steals=n/a;x=4"
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
}
