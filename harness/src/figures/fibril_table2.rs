//! Fibril (SPAA'16) Table 2: the average number of key operations on 72 threads: steals and
//! unmaps of Fibril, and the page faults of Fibril, Cilk Plus and TBB.
//!
//! Here Fibril is `fibril`, Cilk Plus `abp`, TBB `rayon`. `steals`, `unmaps` and
//! `unmaps_resident` are the runtimes' own counters. `unmaps` is Fibril's count: every
//! suspension whose driver releases the stack below the frame, as Fibril's code calls
//! `madvise(MADV_DONTNEED)` on every suspension of a frame on the worker's own stack, so the
//! paper's "33% to 92% of steals cause an unmap" is `unmaps / steals` here. `unmaps_resident`
//! (no paper column) is ours: those unmaps that found resident pages below the frame by
//! `mincore` and made the one `madvise` call (`fibril` makes none where nothing is resident).
//! `abp` never releases, so it counts 0 of both; `rayon` counts none. The page faults are
//! `process_minor_faults`, the minor faults of the whole process during the timed computation
//! (`getrusage`), measured the same way for all three. Each is the median over the point's
//! repetitions (the paper: the average of 10 runs). Counts do not need a core per worker: the
//! figure runs 72 workers wherever it runs (oversubscribed here, marked).

use super::counters::PaperCounts;
use super::metric::{Count, Reduce};
use super::suites::{FIBRIL_P, fibril_table};
use super::{Figure, ReferenceCsv, reference_csv};

/// The figure's id.
pub const ID: &str = "fibril-table2";
/// The figure's title.
pub const TITLE: &str =
    "Fibril (SPAA'16) Table 2: steals, unmaps and page faults on 72 threads (fibril / abp / rayon)";

/// The reference numbers (thousands), embedded.
const CSV: ReferenceCsv = reference_csv!("fibril_table2.csv");

/// Steals, unmaps (Fibril's count, then ours of those that found resident pages) and the
/// process's page faults, medians, with the paper's beside.
pub const METRIC: PaperCounts = PaperCounts {
    count: Count {
        stats: &[
            "steals",
            "unmaps",
            "unmaps_resident",
            "process_minor_faults",
        ],
        reduce: Reduce::Median,
    },
    reference: CSV.text,
    columns: &[
        (
            "fibril",
            &[
                "fibril_steals_K",
                "fibril_unmaps_K",
                "",
                "fibril_page_faults_K",
            ],
        ),
        ("abp", &["", "", "", "cilkplus_page_faults_K"]),
        ("rayon", &["", "", "", "tbb_page_faults_K"]),
    ],
    scale: 1000.0,
    paper_p: FIBRIL_P,
};

/// The figure: the twelve benchmarks on `fibril`, `abp` and `rayon` at P = 72.
pub fn figure() -> Figure {
    fibril_table(
        ID,
        TITLE,
        "Profile of key operations on 72 threads, thousands: steals and unmaps of \
         Fibril; page faults of Fibril, Cilk Plus and TBB. The text: 33% to 92% of \
         Fibril's steals cause an unmap, and unmapping adds page faults (a released \
         page touched again when a suspended frame resumes) without costing time. \
         Paper machine: 2 x 18-core Haswell, 72 hardware threads, average of 10 runs, \
         1 MiB stacks, 4 KiB pages. Here Fibril is `fibril`, Cilk Plus `abp` and TBB \
         `rayon`; OpenMP and taskflow are not in this paper. Each cell: `steals / \
         unmaps / unmaps_resident / process_minor_faults`, the medians over the point's \
         repetitions. Steals and both unmap counts are the runtime's counters (`abp` \
         never releases pages: 0 unmaps; `rayon` counts none: n/a). `unmaps` is Fibril's \
         count, the paper's column: every suspension of a frame on its own stack, on \
         which Fibril's code calls madvise unconditionally; the text's 33% to 92% is \
         `unmaps / steals`. `unmaps_resident` is ours, no paper column: the unmaps that \
         found resident pages below the frame (mincore) and made the one madvise call; \
         `fibril` skips the call where nothing is resident. Page faults are the whole \
         process's minor faults during the timed computation (getrusage), the same \
         measure for all three. 72 workers run on this machine's cores oversubscribed \
         (counts, not times). matmul is our `mm` and strassen our `smm`.",
        CSV,
        &METRIC,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_benchmark_on_three_runtimes_with_the_papers_counts() {
        let f = figure();
        assert_eq!(f.rows.len(), 36);
        let row = |bench, rt| f.row(bench, rt);
        assert_eq!(
            f.paper_cell("cholesky", "fibril", 72),
            "[paper 6568K / 2795K / — / 89K]"
        );
        assert_eq!(
            f.paper_cell("strassen", "abp", 72),
            "[paper — / — / — / 9494K]"
        );
        assert_eq!(
            f.paper_cell("strassen", "rayon", 72),
            "[paper — / — / — / 23926K]"
        );
        assert_eq!(row("strassen", "rayon").workload, "smm");
        // The paper's unmaps are beside our like-for-like count; ours of the releases that
        // found resident pages has no paper value.
        assert_eq!(f.metric.lines()[1], "unmaps");
        assert_eq!(
            f.metric.plot_paper(row("cholesky", "fibril"), 72, 1),
            Some(2_795_000.0)
        );
        assert_eq!(f.metric.lines()[2], "unmaps_resident");
        assert_eq!(f.metric.plot_paper(row("cholesky", "fibril"), 72, 2), None);
        assert!(!f.metric.needs_cores());
        assert_eq!(crate::reproduce::default_workers(&f), [72]);
    }
}
