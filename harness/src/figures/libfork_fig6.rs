//! libfork (Williams and Elliott) Figure 6: time and speedup T_s / T_P of the UTS trees of its
//! Table I (T1, T1L, T1XXL geometric; T3, T3L, T3XXL binomial) against P for libfork's busy
//! and lazy schedulers, TBB, OpenMP and taskflow.
//!
//! Each row's workload is a spec of `uts` naming the tree (`uts/tree=T3L`); the size preset
//! sets the rest: `small`, `quick` and `test` cut each tree at a depth of its own (the `uts`
//! workload's `cut`, a table per tree: `quick` is 0.1 to 0.3 s serially). The paper plots
//! the times (no numbers). Here Lazy-LF is [`LAZY_LF`](super::suites::LAZY_LF) and Busy-LF
//! [`BUSY_LF`](super::suites::BUSY_LF) (libfork on its paper's settings) and TBB `rayon`;
//! `abp`, `fibril` and `tokio` run beside them, all four on their defaults; OpenMP and taskflow
//! have no counterpart. The paper's '*' rows (libfork's stack allocation API for the return
//! values) have none either: our `uts` sums its counts on the way back up, with no heap
//! allocation for them.

use super::metric::Time;
use super::suites::{LIBFORK_UTS, libfork_rows, libfork_runtimes_caption};
use super::{Figure, SpeedupBase};

/// The figure's id.
pub const ID: &str = "libfork-fig6";
/// The figure's title.
pub const TITLE: &str =
    "libfork Figure 6: UTS trees (T1, T1L, T1XXL, T3, T3L, T3XXL), time and speedup against P";

/// The figure: the six trees on every runtime.
pub fn figure() -> Figure {
    Figure::new(
        ID,
        TITLE,
        concat!(
            "UTS benchmarks, Busy-LF and Lazy-LF being libfork's busy and lazy schedulers: \
             parallel speedup T_s/T_P and efficiency against the number of cores; '*' marks \
             libfork runs using its stack allocation API for the return values; taskflow \
             exhausted the 500 GiB of memory on T3L, T1XXL and T3XXL. The text: T1 and T3 take \
             10 ms and 13 ms with libfork at 112 cores, too little work to scale; on T3XXL \
             libfork needs 13x less memory than TBB and 17x less than OpenMP while at least 3.6x \
             faster than both. Paper machine: 2 x 56-core Xeon Platinum 8480+, medians of 5 \
             runs. ",
            libfork_runtimes_caption!(),
            "OpenMP, taskflow and the '*' variant have no counterpart here. Each tree is the \
             `uts` workload with `tree=` set; the size preset sets its other parameters. The \
             paper prints no times: no paper value is beside ours."
        ),
        super::libfork_fig5::PAPER_WORKERS,
        &Time(SpeedupBase::Serial),
        libfork_rows(&LIBFORK_UTS),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::workload_name;

    #[test]
    fn six_trees_each_a_spec_of_uts() {
        let f = figure();
        assert_eq!(f.rows.len(), 36);
        assert!(f.rows.iter().all(|r| workload_name(&r.workload) == "uts"));
        let specs: Vec<&str> = f
            .rows
            .iter()
            .step_by(6)
            .map(|r| r.workload.as_str())
            .collect();
        assert_eq!(
            specs,
            [
                "uts/tree=T1",
                "uts/tree=T1L",
                "uts/tree=T1XXL",
                "uts/tree=T3",
                "uts/tree=T3L",
                "uts/tree=T3XXL"
            ]
        );
        assert_eq!(f.rows[3 * 6].bench, "T3");
    }
}
