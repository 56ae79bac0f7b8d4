//! libfork (Williams and Elliott) Figure 5: time and speedup T_s / T_P of the classic
//! benchmarks (fib, integrate, nqueens, matmul) against P for libfork's busy and lazy
//! schedulers, TBB, OpenMP and taskflow.
//!
//! The paper plots them (no numbers); its text states the overheads T_1 / T_s on fib (libfork
//! 8.8, OpenMP 41, TBB 57, taskflow 180) and the ratios at 112 cores (fib: libfork 7.5x
//! faster than TBB, 24x than OpenMP; integrate 4.5x and 14x), which the caption repeats. Here
//! Lazy-LF is [`LAZY_LF`](super::suites::LAZY_LF) and Busy-LF
//! [`BUSY_LF`](super::suites::BUSY_LF) (libfork on its paper's settings: NUMA victims by Eq. 6,
//! pinned workers) and TBB `rayon`; `abp`, `fibril` and `tokio` run beside them, all four on
//! their defaults; OpenMP and taskflow have no counterpart. A time needs a core per worker: by
//! default the figure measures the paper's P up to this machine's cores.

use super::metric::Time;
use super::suites::{LIBFORK_CLASSIC, libfork_rows, libfork_runtimes_caption};
use super::{Figure, SpeedupBase};

/// The figure's id.
pub const ID: &str = "libfork-fig5";
/// The figure's title.
pub const TITLE: &str = "libfork Figure 5: classic benchmarks (fib, integrate, nqueens, matmul), time and speedup against P";

/// The paper's P: 1 to 112 (2 x 56 cores); the plot's exact points are not in the text.
pub const PAPER_WORKERS: &[usize] = &[1, 2, 4, 8, 16, 32, 56, 112];

/// The figure: the four benchmarks on every runtime.
pub fn figure() -> Figure {
    Figure::new(
        ID,
        TITLE,
        concat!(
            "Classical benchmarks, Busy-LF and Lazy-LF being libfork's busy and lazy \
             schedulers: parallel speedup T_s/T_P (Eq. 15) and efficiency (speedup / P) against \
             the number of cores. The text: on fib the overheads T_1/T_s are 8.8 (libfork), 41 \
             (OpenMP), 57 (TBB) and 180 (taskflow); at 112 cores libfork is 7.5x (fib) and 4.5x \
             (integrate) faster than TBB and 24x and 14x faster than OpenMP. Paper machine: 2 x \
             56-core Xeon Platinum 8480+ (112 cores, two NUMA nodes), Clang 18, medians of 5 \
             runs; inputs fib n=42, integrate n=10^4 eps=1e-9, nqueens n=14, matmul n=8192. ",
            libfork_runtimes_caption!(),
            "OpenMP and taskflow have no counterpart here. matmul is our `mm`. The paper \
             prints no times: no paper value is beside ours."
        ),
        PAPER_WORKERS,
        &Time(SpeedupBase::Serial),
        libfork_rows(&LIBFORK_CLASSIC),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_benchmarks_on_six_runtimes() {
        let f = figure();
        assert_eq!(f.rows.len(), 24);
        assert!(f.rows.iter().all(|r| r.paper.is_none()));
        let runtimes: Vec<String> = f.rows[..6].iter().map(|r| r.runtime.to_string()).collect();
        assert_eq!(
            runtimes,
            [
                "libfork/victim=numa/pinning=scatter",
                "libfork/idle=busy/victim=numa/pinning=scatter",
                "abp",
                "fibril",
                "rayon",
                "tokio"
            ]
        );
        assert!(
            f.caption
                .contains("Lazy-LF is `libfork/victim=numa/pinning=scatter`")
        );
        let matmul = f.rows.iter().find(|r| r.bench == "matmul").unwrap();
        assert_eq!(matmul.workload, "mm/input=libfork");
        assert!(f.metric.needs_cores());
    }
}
