//! ProWS (PPoPP'19) Figure 3: the overhead of futures on fib without base-case coarsening:
//! spawn/sync on Cilk Plus (our `abp`), structured futures on Cilk-F (our `prows`), and
//! structured futures without the stack switch per fut-create (`prows/futures=nostack`);
//! speedups are scalability over T_1.

use super::metric::Time;
use super::{Figure, ReferenceCsv, SpeedupBase, prows_time_figure, reference_csv};

/// The figure's id.
pub const ID: &str = "prows-fig3";
/// The figure's title.
pub const TITLE: &str = "ProWS (PPoPP'19) Figure 3: fib(42) with spawn/sync, structured futures, futures without a stack switch";

/// The reference numbers, embedded so the binary works from any directory.
const CSV: ReferenceCsv = reference_csv!("prows_fig3.csv");

/// The figure with its three paper rows (the paper's `fib-sf-nostack`: workload `fib`, variant
/// `sf` on `prows/futures=nostack`) and the baselines, over [`super::TIME_ROUNDS`] rounds as every time figure.
pub fn figure() -> Figure {
    prows_time_figure(
            ID,
            TITLE,
            "Execution times in seconds of fib(42): fib-fj on Cilk Plus, fib-sf on Cilk-F, \
             and fib-sf without the switch to a new stack on every fut-create (\"-stack\"); \
             in parentheses the scalability over T_1. T_s (serial elision) = 2.46 s. \
             Paper machine: Intel Xeon E5-2665, 2 x 8 cores. Here fib-fj runs on `abp` (for \
             Cilk Plus), fib-sf on `prows` and fib-sf-nostack on `prows/futures=nostack` (for \
             Cilk-F).",
            CSV,
        &Time(SpeedupBase::OneWorker),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Row;

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
            ["fib-fj@abp", "fib-sf@prows", "fib-sf@prows/futures=nostack"]
        );
        let sf = paper[1].paper.as_ref().unwrap();
        assert_eq!(sf.ts, Some(2.46));
        assert_eq!(
            sf.value(1),
            None,
            "T1 of fib-sf is not legible in the paper"
        );
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
