//! libfork (Williams and Elliott) Figure 7: the peak memory (MRSS) of the benchmarks against
//! P, fit to Eq. (17) (the fit is `libfork-table2`).
//!
//! As the paper, matmul is left out (its MRSS is the input and output matrices). Here Lazy-LF
//! is [`LAZY_LF`](super::suites::LAZY_LF) and Busy-LF [`BUSY_LF`](super::suites::BUSY_LF)
//! (libfork on its paper's settings), TBB `rayon`, with `abp`, `fibril` and `tokio`, all four
//! on their defaults; OpenMP and taskflow have no counterpart. The peak RSS is the point
//! process's own (see [`super::memory`]). Memory does not need a core per worker, so the
//! default P list goes past this machine's cores (points past its logical CPUs, oversubscribed,
//! marked): the paper's went to 112.

use super::memory::PeakRss;
use super::suites::{LIBFORK_CLASSIC, LIBFORK_UTS, libfork_rows, libfork_runtimes_caption};
use super::{Figure, Metric};

/// The figure's id.
pub const ID: &str = "libfork-fig7";
/// The figure's title.
pub const TITLE: &str =
    "libfork Figure 7: peak memory (MRSS) against P (fib, integrate, nqueens, UTS trees)";

/// The default P of the memory figures: enough points for a fit of three parameters. The
/// paper's went to 112 cores; pass `--workers` for more.
pub const MEMORY_WORKERS: &[usize] = &[1, 2, 4, 8, 12, 16];

/// A memory figure of libfork's (Figure 7, Table II): `benchmarks` on every runtime at
/// [`MEMORY_WORKERS`], one repetition per point (a point's peak RSS is its process's, after its
/// last repetition).
pub fn memory_figure(
    id: &'static str,
    title: &'static str,
    caption: &'static str,
    metric: &'static dyn Metric,
    benchmarks: &[(&str, &str)],
) -> Figure {
    Figure {
        reps: Some(1),
        ..Figure::new(
            id,
            title,
            caption,
            MEMORY_WORKERS,
            metric,
            libfork_rows(benchmarks),
        )
    }
}

/// The benchmarks of Figure 7: the classic ones but matmul, and the UTS trees.
pub fn benchmarks() -> Vec<(&'static str, &'static str)> {
    LIBFORK_CLASSIC
        .iter()
        .filter(|(b, _)| *b != "matmul")
        .chain(LIBFORK_UTS.iter())
        .copied()
        .collect()
}

/// The figure: the benchmarks on every runtime.
pub fn figure() -> Figure {
    memory_figure(
        ID,
        TITLE,
        concat!(
            "Peak memory consumption (MRSS, GNU time, 4 KiB quanta) during the benchmarks \
             against the number of cores, fit to MRSS = a + b M_1 P^n (Eq. 17); matmul is \
             excluded, its MRSS being its matrices; taskflow exhausted 500 GiB on T3L, T1XXL \
             and T3XXL. The text: taskflow uses 2-4 orders of magnitude more memory than \
             libfork, OpenMP and TBB up to 12x and 3.1x more; on T3XXL TBB 13x and OpenMP 17x \
             more. Paper machine: 2 x 56-core Xeon Platinum 8480+, 500 GiB, P up to 112, \
             medians of 5 runs. ",
            libfork_runtimes_caption!(),
            "OpenMP and taskflow have no counterpart here. The peak RSS is the point process's \
             own VmHWM after its last repetition (input, libraries and pool included, as GNU \
             time's), one process per point. P past this machine's cores puts pinned workers \
             on SMT siblings; P past its logical CPUs runs oversubscribed (memory, not time), \
             marked, pinned workers sharing CPUs (libfork's victims weigh a worker on the same \
             CPU as distance 1)."
        ),
        &PeakRss,
        &benchmarks(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_matmul_and_memory_past_the_cores() {
        let f = figure();
        assert_eq!(f.rows.len(), 9 * 6);
        assert!(
            f.rows
                .iter()
                .all(|r| crate::spec::workload_name(&r.workload) != "mm")
        );
        assert_eq!(crate::reproduce::default_workers(&f), MEMORY_WORKERS);
        assert_eq!(f.reps, Some(1));
    }
}
