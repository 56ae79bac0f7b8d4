//! Fibril (SPAA'16) Table 4: the incremental and peak resident set and the number of stacks
//! on 72 threads, Fibril, Cilk Plus and TBB.
//!
//! Here Fibril is `fibril`, Cilk Plus `abp`, TBB `rayon`. See [`super::memory`] for how the
//! incremental RSS (the peak minus the resident set before the first computation) and the peak
//! are measured; the stacks are `stacks_high_water`, the most fiber stacks the pool had mapped
//! at once. Memory does not need a core per worker: the table runs the paper's 72 workers
//! (oversubscribed here, marked).

use super::memory::RssTable;
use super::suites::{FIBRIL_P, fibril_table};
use super::{Figure, ReferenceCsv, reference_csv};

/// The figure's id.
pub const ID: &str = "fibril-table4";
/// The figure's title.
pub const TITLE: &str = "Fibril (SPAA'16) Table 4: incremental and peak RSS and stacks on 72 threads (fibril / abp / rayon)";

/// The reference numbers (MB; stacks), embedded.
const CSV: ReferenceCsv = reference_csv!("fibril_table4.csv");

/// The table's cells.
pub const METRIC: RssTable = RssTable {
    reference: CSV.text,
    columns: &[
        (
            "fibril",
            ["fibril_delta_rss", "fibril_max_rss", "fibril_stacks"],
        ),
        (
            "abp",
            ["cilkplus_delta_rss", "cilkplus_max_rss", "cilkplus_stacks"],
        ),
        ("rayon", ["tbb_delta_rss", "tbb_max_rss", ""]),
    ],
    paper_p: FIBRIL_P,
};

/// The figure: the twelve benchmarks on `fibril`, `abp` and `rayon` at P = 72.
pub fn figure() -> Figure {
    fibril_table(
        ID,
        TITLE,
        "The RSS and stack usage on 72 threads: ΔRSS / Max RSS in MB (ΔRSS = the \
         incremental RSS during the computation, excluding the physical memory of the \
         input data and libraries) for Fibril, Cilk Plus (C.P.) and TBB, and the \
         number of stacks of Fibril and Cilk Plus. The text: Fibril's RSS is similar \
         to Cilk Plus's (it uses more stacks), and much less than TBB's. Paper \
         machine: 2 x 18-core Haswell, 72 hardware threads, 1 MiB stacks. Here Fibril \
         is `fibril`, Cilk Plus `abp`, TBB `rayon`; OpenMP and taskflow are not in \
         this paper. Each cell: incremental / peak RSS in MiB and the stacks. The \
         incremental RSS is the process's peak (its VmHWM after the repetition) minus \
         its resident set just before the first computation (pool started, input \
         generated and prepared), the largest over the repetitions, `≤` if the peak \
         was reached before the computation; the peak RSS is the process's VmHWM after \
         its last repetition; the stacks are `stacks_high_water`, the most fiber \
         stacks mapped at once (in use or in the pools' free lists: an upper bound of \
         those in use; rayon has none). 72 workers run oversubscribed on this \
         machine's cores (memory, not time). matmul is our `mm` and strassen our \
         `smm`.",
        CSV,
        &METRIC,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_papers_megabytes_and_stacks_per_runtime() {
        let f = figure();
        assert_eq!(f.rows.len(), 36);
        assert_eq!(
            f.paper_cell("fft", "fibril", 72),
            "[paper 1540 / 2055 MB; 334 stacks]"
        );
        assert_eq!(
            f.paper_cell("heat", "abp", 72),
            "[paper 31 / 31 MB; 314 stacks]"
        );
        assert_eq!(
            f.paper_cell("quicksort", "rayon", 72),
            "[paper 883 / 883 MB; — stacks]"
        );
        assert_eq!(crate::reproduce::default_workers(&f), [72]);
    }
}
