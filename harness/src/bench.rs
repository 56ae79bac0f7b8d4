//! `stealbench bench`: fib(n) at P = 1 on every implemented runtime, each in its own process,
//! and T_1 / T_s per runtime (T_s = the `serial` runtime's fork-join time, the serial elision):
//! the cost of a fork (`--variant fj`) or of a future (`sf`, `sf-nostack`).

use crate::cli::{self, BenchArgs, Failure};
use crate::grid::Status;
use crate::runner::{outcome_of, run_child};
use crate::runtimes::{self, RUNTIMES};
use crate::stats;
use crate::table::format_time;
use std::time::Duration;
use stealbench_workloads::{Variant, Workload, fib::Fib};

/// Runs the benchmark; returns the exit code (1 if a runtime failed).
pub fn bench_command(args: &BenchArgs) -> Result<i32, Failure> {
    if args.reps == 0 {
        return Err(Failure::Usage("reps must be at least 1".to_string()));
    }
    let variant = cli::parse_variant(&args.variant)?;
    if !Fib::VARIANTS.contains(&variant) {
        let names: Vec<&str> = Fib::VARIANTS.iter().map(|v| v.name()).collect();
        return Err(Failure::Usage(format!(
            "bench measures fib, which has no variant '{variant}' (it has: {})",
            names.join(", ")
        )));
    }
    let exe = std::env::current_exe()?;
    let timeout = (args.timeout > 0).then(|| Duration::from_secs(args.timeout));
    println!(
        "fib({}) {variant} at P=1, median of {} repetitions after a warm-up, each runtime in its own process",
        args.n, args.reps
    );
    let mut results: Vec<(&str, &str, Option<f64>, String)> = Vec::new();
    for r in RUNTIMES.iter().filter(|r| r.implemented()) {
        // The serial elision is T_s whatever the variant; the others run the variant if they can.
        let v = if r.name == runtimes::SERIAL {
            Variant::Fj
        } else {
            variant
        };
        let offered = match r.front_end {
            runtimes::FrontEnd::Closure => Fib::VARIANTS,
            runtimes::FrontEnd::Async => Fib::ASYNC_VARIANTS,
        };
        let refused = runtimes::unsupported(r.name, v).or_else(|| {
            (!offered.contains(&v)).then_some("fib has no such variant on this front-end")
        });
        if let Some(why) = refused {
            results.push((
                r.name,
                r.front_end.name(),
                None,
                format!("not supported: {why}"),
            ));
            continue;
        }
        let child_args: Vec<String> = [
            "bench-point",
            "--runtime",
            r.name,
            "--variant",
            v.name(),
            "--n",
            &args.n.to_string(),
            "--reps",
            &args.reps.to_string(),
            "--json",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let child = run_child(&exe, &child_args, timeout)?;
        let Some(o) = outcome_of(child, timeout) else {
            return Ok(130);
        };
        let times: Vec<f64> = o.reps.iter().map(|x| x.seconds).collect();
        let median = (o.status == Status::Ok)
            .then(|| stats::median(&times))
            .flatten();
        let status = if o.status == Status::Ok {
            "ok".to_string()
        } else {
            format!("{}: {}", o.status, o.note)
        };
        eprintln!(
            "{}: {}",
            r.name,
            median.map_or(status.clone(), |m| format!("{} s", format_time(m)))
        );
        results.push((r.name, r.front_end.name(), median, status));
    }
    let ts = results
        .iter()
        .find(|r| r.0 == runtimes::SERIAL)
        .and_then(|r| r.2);
    println!(
        "\n{:<14} {:<8} {:>12} {:>10}  status",
        "runtime", "front", "T1 (s)", "T1/Ts"
    );
    for (name, front, median, status) in &results {
        println!(
            "{:<14} {:<8} {:>12} {:>10}  {}",
            name,
            front,
            median.map_or("—".to_string(), format_time),
            stats::speedup(*median, ts).map_or("—".to_string(), |x| format!("{x:.2}")),
            status
        );
    }
    println!(
        "\nT_s = the serial runtime's fork-join time (the serial elision); T1/Ts is the overhead \
         of a {} at P=1.",
        if variant == Variant::Fj {
            "fork"
        } else {
            "future"
        }
    );
    Ok(
        if results
            .iter()
            .all(|r| r.3 == "ok" || r.3.starts_with("not supported"))
        {
            0
        } else {
            1
        },
    )
}
