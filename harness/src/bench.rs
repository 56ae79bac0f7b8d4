//! `stealbench bench`: fib(n) at P = 1 on every implemented runtime (in each of its registered
//! arms: libfork lazy and busy, prows's two placements, serial on both front-ends and as the
//! kernel), each in its own process, and T_1 / T_s per runtime: the cost of a fork
//! (`--variant fj`) or of a future (`sf`). T_s is `serial/front=kernel`, [`fib::serial`]
//! called directly, with no runtime and no trait; the `serial` row is the same program
//! through the closure front-end's traits, so its T1/Ts is the trait's cost (elision /
//! kernel), and `serial/front=kernel/shape=libfork` is libfork's serial fib (never inlined, an
//! out-parameter), which libfork's figures divide by. The runtimes are measured in turn,
//! `--rounds` times over; each round's ratios use that round's T_s.
//!
//! [`fib::serial`]: stealbench_workloads::fib::serial

use crate::cli::BenchArgs;
use crate::failure::Failure;
use crate::grid::{Status, offered};
use crate::runner::outcome_of;
use crate::runtimes::{self, RUNTIMES};
use crate::stats;
use crate::supervise::run_child;
use crate::table::format_time;
use std::time::Duration;
use stealbench_schedulers::{FenceMode, FrontEnd};
use stealbench_workloads::{Shape, Variant, Workload, WorkloadInfo, fib::Fib};

/// One runtime's line of the table, filled in round by round.
struct Line {
    /// The arm.
    arm: runtimes::Arm,
    /// The arm's spelling.
    name: String,
    front: &'static str,
    /// The variant it runs, or why it does not.
    runs: Result<Variant, String>,
    /// Each finished round's median time.
    medians: Vec<f64>,
    /// The first failure, if any (the runtime is not run again after it).
    failed: Option<String>,
}

/// Runs the benchmark, every pool in fence mode `fence` (the environment's, given to each
/// child as `--fence`); returns the exit code (1 if a runtime failed).
pub(crate) fn bench_command(args: &BenchArgs, fence: FenceMode) -> Result<i32, Failure> {
    let variant = args.variant;
    if !Fib::VARIANTS.contains(&variant) {
        let names: Vec<&str> = Fib::VARIANTS.iter().map(|v| v.name()).collect();
        return Err(Failure::Usage(format!(
            "bench measures fib, which has no variant '{variant}' (it has: {})",
            names.join(", ")
        )));
    }
    let stack_size = args.stack_size;
    let exe = std::env::current_exe()?;
    crate::supervise::catch_interrupts();
    let timeout = (args.timeout > 0).then(|| Duration::from_secs(args.timeout));
    outln!(
        "fib({}) {variant} at P=1, {} round(s) over the runtimes in turn, each runtime in its own \
         process; a round's time is the median of {} repetitions after a warm-up",
        args.n,
        args.rounds,
        args.reps
    );
    // Every registered arm (those of a runtime this build lacks are listed as not built), or
    // those `--runtimes` selects as `reproduce`'s does (a bare name every registered arm of its
    // runtime), T_s's first; a simulation measures no pool.
    let ts_arm = runtimes::kernel(Shape::Plain);
    let arms: Vec<runtimes::Arm> = match &args.runtimes {
        None => std::iter::once(ts_arm)
            .chain(
                RUNTIMES
                    .iter()
                    .flat_map(runtimes::registered_arms)
                    .filter(|&a| a != ts_arm),
            )
            .collect(),
        Some(selected) => {
            let mut arms = vec![ts_arm];
            for &arm in selected {
                if arm.sim.is_some() {
                    return Err(Failure::Usage(format!(
                        "bench measures pools, and {arm} is a simulation: drop sim="
                    )));
                }
                let chosen = if arm.is_bare() {
                    runtimes::registered_arms(arm.info)
                } else {
                    vec![arm]
                };
                for a in chosen {
                    if !arms.contains(&a) {
                        arms.push(a);
                    }
                }
            }
            arms
        }
    };
    let mut lines: Vec<Line> = arms
        .into_iter()
        .map(|arm| {
            let name = arm.spec();
            // The kernel, T_s, is fj's elision whatever the variant; the others run the variant
            // if they can.
            let v = if arm.front_end() == FrontEnd::Kernel {
                Variant::Fj
            } else {
                variant
            };
            let offered = offered(&WorkloadInfo::of::<Fib>(), arm.front_end());
            let refused = runtimes::unsupported(&arm, v).or_else(|| {
                (!offered.contains(&v)).then_some("fib has no such variant on this front-end")
            });
            let runs = match (arm.info.not_built(), refused) {
                (Some(why), _) => Err(why),
                (None, Some(why)) => Err(format!("not supported: {why}")),
                (None, None) => Ok(v),
            };
            Line {
                arm,
                name,
                front: arm.front_end().name(),
                runs,
                medians: Vec::new(),
                failed: None,
            }
        })
        .collect();
    for round in 1..=args.rounds {
        for line in lines.iter_mut() {
            let Ok(v) = line.runs else { continue };
            if line.failed.is_some() {
                continue;
            }
            let mut child_args: Vec<String> = [
                "bench-point",
                "--runtime",
                &line.name,
                "--variant",
                v.name(),
                "--n",
                &args.n.to_string(),
                "--reps",
                &args.reps.to_string(),
                "--fence",
                fence.name(),
                "--json",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            if let (Some(s), true) = (stack_size, line.arm.has_fibers()) {
                child_args.extend(["--stack-size".to_string(), s.to_string()]);
            }
            let child = run_child(&exe, &child_args, timeout)?;
            let Some(o) = outcome_of(child, timeout) else {
                errln!("interrupted: nothing is recorded by bench; run it again");
                return Ok(130);
            };
            let times: Vec<f64> = o.reps.iter().map(|x| x.seconds).collect();
            let median = (o.status == Status::Ok)
                .then(|| stats::median(&times))
                .flatten();
            let shown = match median {
                Some(m) => {
                    line.medians.push(m);
                    format!("{} s", format_time(m))
                }
                None => {
                    let why = format!("{}: {}", o.status, o.note);
                    line.failed = Some(why.clone());
                    why
                }
            };
            errln!("[round {round}/{}] {}: {shown}", args.rounds, line.name);
        }
    }
    let ts = lines
        .iter()
        .find(|l| l.arm == ts_arm)
        .map(|l| l.medians.clone())
        .unwrap_or_default();
    // The widest arm's spelling sets the first column.
    let width = lines
        .iter()
        .map(|l| l.name.len())
        .max()
        .unwrap_or(0)
        .max(26);
    outln!(
        "\n{:<width$} {:<8} {:>12} {:>10} {:>13}  status",
        "runtime",
        "front",
        "T1 (s)",
        "T1/Ts",
        "rounds' range"
    );
    for l in &lines {
        // Each round's ratio against the same round's T_s.
        let ratios: Vec<f64> = l
            .medians
            .iter()
            .zip(&ts)
            .filter_map(|(&t, &s)| stats::speedup(Some(t), Some(s)))
            .collect();
        let complete = l.failed.is_none() && l.runs.is_ok();
        let t1 = complete.then(|| stats::median(&l.medians)).flatten();
        let ratio = complete.then(|| stats::median(&ratios)).flatten();
        let range = match (complete, ratios.len()) {
            (true, 2..) => {
                let lo = ratios.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                format!("{lo:.2}-{hi:.2}")
            }
            _ => "—".to_string(),
        };
        let status = match (&l.runs, &l.failed) {
            (Err(why), _) => why.clone(),
            (Ok(_), Some(why)) => why.clone(),
            (Ok(_), None) => "ok".to_string(),
        };
        outln!(
            "{:<width$} {:<8} {:>12} {:>10} {:>13}  {}",
            l.name,
            l.front,
            t1.map_or("—".to_string(), format_time),
            ratio.map_or("—".to_string(), |x| format!("{x:.2}")),
            range,
            status
        );
    }
    outln!(
        "\nT_s = {ts_arm}: fib's serial code called directly, no runtime and no trait; T1/Ts is \
         the overhead of a {} at P=1: the median over the rounds of each round's T1 / T_s (T1 \
         (s): the median of the rounds' times). The serial row is the same program through the \
         closure front-end's traits: its T1/Ts is their cost.",
        if variant == Variant::Fj {
            "fork"
        } else {
            "future"
        }
    );
    Ok(
        if lines.iter().all(|l| l.failed.is_none() || l.runs.is_err()) {
            0
        } else {
            1
        },
    )
}
