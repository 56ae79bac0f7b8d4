//! ProWS (PPoPP'19) Figure 3: the overhead of futures on fib without base-case coarsening:
//! spawn/sync on Cilk Plus (our `abp`), structured futures on Cilk-F (our `prows`), and
//! structured futures without the stack switch per fut-create (`prows/futures=nostack`);
//! speedups are scalability over T_1.

use super::metric::Time;
use super::{Figure, Reference, SpeedupBase, prows_runtime, with_baselines, XAxis};
use crate::grid::Row;
use stealbench_workloads::Variant;

/// The figure's id.
pub const ID: &str = "prows-fig3";
/// The figure's title.
pub const TITLE: &str = "ProWS (PPoPP'19) Figure 3: fib(42) with spawn/sync, structured futures, futures without a stack switch";

/// The reference numbers, embedded so the binary works from any directory.
const CSV: &str = include_str!("../../../paper-figures/reference/prows_fig3.csv");

/// Splits the paper's `fib-sf-nostack` into workload `fib`, variant `sf` and the arm that runs
/// it: the "-stack" row is the `sf` program on `prows/futures=nostack`.
fn split_bench(bench: &str) -> (&str, Variant, String) {
    let (w, v) = bench.split_once('-').expect("bench is workload-variant");
    let (v, settings) = v
        .strip_suffix("-nostack")
        .map_or((v, ""), |v| (v, "/futures=nostack"));
    let variant = v.parse().expect("the reference names known variants");
    (w, variant, format!("{}{settings}", prows_runtime(variant)))
}

/// The figure with its three paper rows and the baselines.
pub fn figure() -> Figure {
    let reference = Reference::parse(CSV);
    let rows = reference
        .records
        .iter()
        .map(|rec| {
            let (workload, variant, runtime) =
                split_bench(reference.field(rec, "bench").expect("bench"));
            Row {
                bench: workload.to_string(),
                workload: workload.to_string(),
                variant,
                runtime,
                paper: Some(reference.paper_values(rec)),
            }
        })
        .collect();
    Figure {
        id: ID,
        title: TITLE,
        caption: "Execution times in seconds of fib(42): fib-fj on Cilk Plus, fib-sf on Cilk-F, \
                  and fib-sf without the switch to a new stack on every fut-create (\"-stack\"); \
                  in parentheses the scalability over T_1. T_s (serial elision) = 2.46 s. \
                  Paper machine: Intel Xeon E5-2665, 2 x 8 cores. Here fib-fj runs on `abp` (for \
                  Cilk Plus), fib-sf on `prows` and fib-sf-nostack on `prows/futures=nostack` (for \
                  Cilk-F).",
        reference_path: "paper-figures/reference/prows_fig3.csv",
        reference,
        paper_workers: &[1, 2, 4, 8, 16],
        metric: &Time(SpeedupBase::OneWorker),
        rounds: 3,
        sim_workers: &[],
        x_axis: XAxis::Workers,
        reps: None,
        rows: with_baselines(rows),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn has_the_three_fib_rows() {
        let f = figure();
        let paper: Vec<&Row> = f.rows.iter().filter(|r| r.paper.is_some()).collect();
        let names: Vec<String> = paper
            .iter()
            .map(|r| format!("{}-{}@{}", r.workload, r.variant, r.runtime))
            .collect();
        assert_eq!(
            names,
            [
                "fib-fj@abp",
                "fib-sf@prows",
                "fib-sf@prows/futures=nostack"
            ]
        );
        let sf = paper[1].paper.as_ref().unwrap();
        assert_eq!(sf.ts, Some(2.46));
        assert_eq!(sf.value(1), None, "T1 of fib-sf is not legible in the paper");
        assert_eq!(sf.value(2), Some(17.09));
        assert_eq!(f.metric.describe(), SpeedupBase::OneWorker.describe());
        // fib offers fj and sf on both front-ends: rayon and tokio rows for both, libfork's
        // two arms for fj.
        let baselines: Vec<String> = f
            .rows
            .iter()
            .filter(|r| r.paper.is_none())
            .map(|r| format!("{}@{}", r.variant, r.runtime))
            .collect();
        assert_eq!(
            baselines,
            [
                "fj@rayon",
                "sf@rayon",
                "fj@tokio",
                "sf@tokio",
                "fj@libfork",
                "fj@libfork/idle=busy"
            ]
        );
    }
}
