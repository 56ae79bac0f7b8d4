//! `stealbench bench`: fib(n) fork-join at P = 1 on every implemented runtime, each in its own
//! process, and T_1 / T_s per runtime (T_s = the `serial` runtime's time): the cost of a fork.

use crate::cli::{BenchArgs, Failure};
use crate::grid::Status;
use crate::runner::{outcome_of, run_child};
use crate::runtimes::{self, RUNTIMES};
use crate::stats;
use crate::table::format_time;
use std::time::Duration;

/// Runs the benchmark; returns the exit code (1 if a runtime failed).
pub fn bench_command(args: &BenchArgs) -> Result<i32, Failure> {
    if args.reps == 0 {
        return Err(Failure::Usage("reps must be at least 1".to_string()));
    }
    let exe = std::env::current_exe()?;
    let timeout = (args.timeout > 0).then(|| Duration::from_secs(args.timeout));
    println!(
        "fib({}) fork-join at P=1, median of {} repetitions after a warm-up, each runtime in its own process",
        args.n, args.reps
    );
    let mut results: Vec<(&str, &str, Option<f64>, String)> = Vec::new();
    for r in RUNTIMES.iter().filter(|r| r.implemented()) {
        let child_args: Vec<String> = [
            "bench-point",
            "--runtime",
            r.name,
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
    println!("\nT_s = the serial runtime's time; T1/Ts is the overhead of a fork at P=1.");
    Ok(if results.iter().all(|r| r.3 == "ok") {
        0
    } else {
        1
    })
}
