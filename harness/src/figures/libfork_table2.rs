//! libfork (Williams and Elliott) Table II: the exponent n of MRSS = a + b * M_1 * P^n
//! (Eq. 17) fitted to each runtime's and benchmark's peak memory against P, with its error from
//! the fit's covariance.
//!
//! The fit is [`super::fit`]: least squares over every P the row was measured at (each point's
//! peak RSS, one process per point, see [`super::memory`]), exact in `a` and `b * M_1` for
//! each `n`, `n` found on a fine grid and refined; its standard error is that of the nonlinear
//! model's covariance. The lead columns give n ± s.e. with the paper's beside, a, b and the
//! number of points fitted. Lazy-LF is [`LAZY_LF`] and Busy-LF [`BUSY_LF`] (libfork on its
//! paper's settings), TBB `rayon`; `abp`, `fibril` and `tokio` are fitted too, all four on their
//! defaults; OpenMP and taskflow have no counterpart.

use super::libfork_fig7::memory_figure;
use super::memory::Exponent;
use super::suites::{BUSY_LF, LAZY_LF, LIBFORK_CLASSIC, LIBFORK_UTS, libfork_runtimes_caption};
use super::{Figure, ReferenceCsv, reference_csv};

/// The figure's id.
pub const ID: &str = "libfork-table2";
/// The figure's title.
pub const TITLE: &str =
    "libfork Table II: fitted exponent n of MRSS = a + b M_1 P^n per runtime and benchmark";

/// The reference numbers (`n±error`), embedded.
const CSV: ReferenceCsv = reference_csv!("libfork_table2.csv");

/// The fit, with the paper's columns of our runtimes.
pub const METRIC: Exponent = Exponent {
    reference: CSV.text,
    columns: &[(LAZY_LF, "lazy_lf"), (BUSY_LF, "busy_lf"), ("rayon", "tbb")],
};

/// The figure: every benchmark of Table II (the classic four and the six trees) on every
/// runtime.
pub fn figure() -> Figure {
    let benchmarks: Vec<(&str, &str)> = LIBFORK_CLASSIC
        .iter()
        .chain(LIBFORK_UTS.iter())
        .copied()
        .collect();
    memory_figure(
        ID,
        TITLE,
        concat!(
            "Fitted exponent n from Eq. (17), MRSS = a + b M_1 P^n, and the data of Fig. 7; \
             errors estimated from the fit's covariance matrix. The text: libfork's exponents \
             are all below 1 (its memory scales better than its bound, b never above 0.2), \
             TBB's just above 1, OpenMP's up to 1.3; taskflow's 0 (it allocates every task \
             whatever P); the binomial trees' drop well below 1. Paper machine: 2 x 56-core \
             Xeon Platinum 8480+, P up to 112. ",
            libfork_runtimes_caption!(),
            "Every runtime is fitted; OpenMP and taskflow have no counterpart here. n is fitted \
             by least squares to the peak RSS (the point process's own VmHWM) at every P \
             measured, M_1 being the peak at P = 1; `points` is the number of P in the fit (at \
             least 4 are needed for an error); P past this machine's cores runs oversubscribed \
             (memory, not time). A fit over P = 1..16 sees less of the curve than the paper's \
             1..112: compare the exponents' order across runtimes more than their values."
        ),
        &METRIC,
        &benchmarks,
    )
    .with_reference(CSV)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::libfork_fig7::MEMORY_WORKERS;
    use crate::figures::metric::Context;

    #[test]
    fn ten_benchmarks_and_the_papers_exponents() {
        let f = figure();
        assert_eq!(f.rows.len(), 10 * 6);
        let row = |bench, rt| f.row(bench, rt);
        assert_eq!(
            METRIC.paper(row("T3XXL", LAZY_LF)).as_deref(),
            Some("0.38±0.01")
        );
        assert_eq!(
            METRIC.paper(row("matmul", BUSY_LF)).as_deref(),
            Some("1.09±0.11")
        );
        assert_eq!(
            METRIC.paper(row("nqueens", "rayon")).as_deref(),
            Some("1.11±0.03")
        );
        assert_eq!(METRIC.paper(row("fib", "tokio")), None);
        assert_eq!(row("matmul", "abp").workload, "mm/input=libfork");
        let ctx = Context {
            summaries: &[],
            cpus: 2,
        };
        let lead = f.metric.lead(&ctx, row("T1", BUSY_LF));
        assert_eq!(lead[0].1, "— (fewer than 4 points) [paper 1.04 ± 0.03]");
        assert_eq!(crate::reproduce::default_workers(&f), MEMORY_WORKERS);
    }
}
