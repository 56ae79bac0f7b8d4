//! Fibril (SPAA'16) Figure 3: the twelve benchmarks on one worker, relative to the serial
//! elision and to each other: Fibril against Intel Cilk Plus and Intel TBB.
//!
//! The paper plots 1/T_1 normalised by 1/T_serial (T_s / T_1: below 1 means slower than the
//! serial code) for Fibril, Cilk Plus and TBB, and states in its text how many times faster
//! Fibril is than each (`fibril_speedups.csv`, `vs_cilkplus_serial`, `vs_tbb_serial`). Here
//! Fibril is `fibril`, Cilk Plus `abp` (work stealing on stackful fibers) and TBB `rayon` (a
//! library work-stealing pool); `tokio` and libfork's lazy and busy arms are baselines the
//! paper did not run. Every cell gives T_1, T_s / T_1 and the ratios T_1(abp) / T_1(row) and
//! T_1(rayon) / T_1(row); the paper's ratios sit beside the `fibril` rows. The paper's
//! "Fibril (w/o unmap)" is not a runtime here (`FibrilNoUnmap` is a type for the schedulers'
//! tests); OpenMP and taskflow are not in this paper.

use super::ratio::Relative;
use super::suites::{fibril_ratio_figure, fibril_ratios};
use super::Figure;

/// The figure's id.
pub const ID: &str = "fibril-fig3";
/// The figure's title.
pub const TITLE: &str =
    "Fibril (SPAA'16) Figure 3: performance on one worker, Fibril vs Cilk Plus (abp) and TBB (rayon)";

/// The P of the figure.
const P: usize = 1;

/// The metric: time, T_s / T_1 and the ratios against `abp` and `rayon` at P = 1.
pub const METRIC: Relative = fibril_ratios(
    &["vs_cilkplus_serial", "vs_tbb_serial"],
    P,
    false,
    "Ts/T1 (1 = the serial code)",
);

/// The figure: the twelve benchmarks on every runtime at P = 1.
pub fn figure() -> Figure {
    fibril_ratio_figure(
        ID,
        TITLE,
        "The relative performance on one thread: 1/T_1 of Fibril, Cilk Plus and TBB \
         normalised by 1/T_serial (below one: slower than the serial version). The \
         text: Fibril's fib, integrate, knapsack, matmul, nqueens and quicksort \
         outperform Cilk Plus's by 1.9x, 1.3x, 1.5x, 1.7x, 1.4x and 1.6x and TBB's by \
         6.0x, 3.6x, 4.2x, 2.5x, 2.3x and 2.0x; fft, heat, lu, rectmul and strassen \
         perform about the same on all three. Paper machine: 2 x 18-core Haswell, \
         2.3 GHz, GCC 5.2 -O2, mean of 10 runs, 1 MiB stacks. Here Fibril is \
         `fibril`, Cilk Plus `abp` and TBB `rayon`; `tokio` and libfork's lazy and \
         busy arms are baselines the paper did not run; OpenMP and taskflow have no \
         counterpart here, nor has Fibril (w/o unmap). matmul is our `mm` and \
         strassen our `smm`. Each cell: T_1, then T_s/T_1 and how many times faster \
         than `abp` and `rayon` (T_1(abp)/T_1(row), T_1(rayon)/T_1(row)); the paper's \
         ratios beside the `fibril` rows.",
        &[P],
        &METRIC,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twelve_benchmarks_on_six_runtimes_at_one_worker() {
        let f = figure();
        assert_eq!(f.rows.len(), 72);
        let paper: Vec<String> = f
            .rows
            .iter()
            .filter(|r| r.paper.is_some())
            .map(|r| r.runtime.to_string())
            .collect();
        assert_eq!(paper, ["fibril"; 12]);
        let strassen = f.rows.iter().find(|r| r.bench == "strassen").unwrap();
        assert_eq!(strassen.workload, "smm");
        let fib = f.row("fib", "fibril");
        assert_eq!(fib.paper.as_ref().unwrap().value(1), Some(1.9));
        assert_eq!(
            f.metric.paper_cell(fib, 1),
            "[paper 1.90x vs Cilk Plus; 6.00x vs TBB]"
        );
        assert_eq!(
            f.paper_cell("quicksort", "fibril", 1),
            "[paper 1.60x vs Cilk Plus; 2.00x vs TBB]"
        );
        assert_eq!(crate::reproduce::default_workers(&f), [1]);
        assert!(f.metric.needs_cores());
    }
}
