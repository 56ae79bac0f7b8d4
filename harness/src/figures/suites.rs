//! What the Fibril (SPAA'16) and libfork figures share: their benchmarks (the paper's name and
//! our workload spec), the runtimes that stand in for the papers' ones, the rows built from
//! them, and the lookup of a benchmark's number in a reference CSV.
//!
//! The mapping of the papers' runtimes to ours:
//!
//! | paper | ours |
//! |---|---|
//! | Fibril | `fibril` |
//! | Intel Cilk Plus (Fibril's comparison) | `abp` (work stealing on stackful fibers, as Cilk) |
//! | Intel TBB | `rayon` (a library work-stealing pool, as TBB) |
//! | libfork lazy / busy (Lazy-LF, Busy-LF) | `libfork`, `libfork/idle=busy` |
//! | OpenMP (libomp), taskflow | none here |
//!
//! `tokio` runs as a baseline neither paper measured.

use super::Reference;
use crate::grid::{PaperValues, Row};
use stealbench_workloads::Variant;

/// Fibril's twelve benchmarks (its Table 1): the paper's name, then our workload (matmul is
/// `mm` on Fibril's matrix, n = 2048 at paper size).
pub const FIBRIL_BENCHMARKS: [(&str, &str); 12] = [
    ("cholesky", "cholesky"),
    ("fft", "fft"),
    ("fib", "fib"),
    ("heat", "heat"),
    ("integrate", "integrate"),
    ("knapsack", "knapsack"),
    ("lu", "lu"),
    ("matmul", "mm/input=fibril"),
    ("nqueens", "nqueens"),
    ("quicksort", "quicksort"),
    ("rectmul", "rectmul"),
    ("strassen", "smm"),
];

/// The runtimes of Fibril's Figures 3-4 here: Fibril, Cilk Plus (`abp`), TBB (`rayon`), and the
/// baselines `tokio` and libfork's two arms.
pub const FIBRIL_RUNTIMES: [&str; 6] = [
    "fibril",
    "abp",
    "rayon",
    "tokio",
    "libfork",
    "libfork/idle=busy",
];

/// libfork's classic benchmarks (its Table I, Figure 5; matmul on libfork's n = 8192).
pub const LIBFORK_CLASSIC: [(&str, &str); 4] = [
    ("fib", "fib"),
    ("integrate", "integrate"),
    ("nqueens", "nqueens"),
    ("matmul", "mm/input=libfork"),
];

/// libfork's UTS trees (its Table I, Figure 6), each a spec of the `uts` workload.
pub const LIBFORK_UTS: [(&str, &str); 6] = [
    ("T1", "uts/tree=T1"),
    ("T1L", "uts/tree=T1L"),
    ("T1XXL", "uts/tree=T1XXL"),
    ("T3", "uts/tree=T3"),
    ("T3L", "uts/tree=T3L"),
    ("T3XXL", "uts/tree=T3XXL"),
];

/// The runtimes of libfork's figures here: Lazy-LF, Busy-LF, then `abp`, `fibril`, `rayon`
/// (TBB) and `tokio`.
pub const LIBFORK_RUNTIMES: [&str; 6] = [
    "libfork",
    "libfork/idle=busy",
    "abp",
    "fibril",
    "rayon",
    "tokio",
];

/// One fj row per benchmark and runtime, grouped by benchmark; `paper` gives a row its paper
/// values (`None`: a runtime the paper did not run, or no number).
pub fn rows(
    benchmarks: &[(&str, &str)],
    runtimes: &[&str],
    paper: impl Fn(&str, &str) -> Option<PaperValues>,
) -> Vec<Row> {
    let mut out = Vec::new();
    for &(bench, workload) in benchmarks {
        for &rt in runtimes {
            out.push(Row {
                bench: bench.to_string(),
                workload: workload.to_string(),
                variant: Variant::Fj,
                runtime: rt.to_string(),
                paper: paper(bench, rt),
            });
        }
    }
    out
}

/// The text of column `col` in the record of benchmark `bench` (column `bench`) of the
/// reference CSV `csv`, if present and not empty.
pub fn paper_text(csv: &str, bench: &str, col: &str) -> Option<String> {
    let r = Reference::parse(csv);
    let rec = r
        .records
        .iter()
        .find(|rec| r.field(rec, "bench") == Some(bench))?;
    r.field(rec, col).map(str::to_string)
}

/// The number in column `col` of benchmark `bench`'s record of `csv`.
pub fn paper_number(csv: &str, bench: &str, col: &str) -> Option<f64> {
    paper_text(csv, bench, col)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_find_the_benchmark_and_column() {
        let csv = "# c\nbench,x,y\nfib,1.5,\nmatmul,2,3\n";
        assert_eq!(paper_number(csv, "fib", "x"), Some(1.5));
        assert_eq!(paper_number(csv, "fib", "y"), None);
        assert_eq!(paper_number(csv, "matmul", "y"), Some(3.0));
        assert_eq!(paper_number(csv, "lu", "x"), None);
        assert_eq!(paper_text(csv, "matmul", "nosuch"), None);
    }

    #[test]
    fn rows_are_grouped_by_benchmark() {
        let r = rows(&FIBRIL_BENCHMARKS, &FIBRIL_RUNTIMES, |b, rt| {
            (b == "fib" && rt == "fibril").then(PaperValues::default)
        });
        assert_eq!(r.len(), 72);
        assert_eq!(
            (r[42].bench.as_str(), r[42].workload.as_str()),
            ("matmul", "mm/input=fibril")
        );
        assert_eq!(r.iter().filter(|r| r.paper.is_some()).count(), 1);
        assert!(r.iter().all(|r| r.variant == Variant::Fj));
    }
}
