//! Fibril (SPAA'16) Table 4: the incremental and peak resident set and the number of stacks
//! on 72 threads, Fibril, Cilk Plus and TBB.
//!
//! The rows are [`FIBRIL_TABLE_RUNTIMES`](super::suites::FIBRIL_TABLE_RUNTIMES), the paper's
//! columns mapped to our arms in [`super::suites`] (Cilk Plus a stand-in, TBB oneTBB). See
//! [`super::memory`] for how the incremental RSS (the peak minus the resident set before the
//! first computation) and the peak are measured; the stacks are `stacks_high_water`, the most
//! fiber stacks the pool had mapped at once. Memory does not need a core per worker: the table runs the paper's 72 workers
//! (oversubscribed here, marked).

use super::fibril_table2::paper_range;
use super::memory::RssTable;
use super::suites::{
    CILK_PLUS, FIBRIL, FIBRIL_BENCHMARKS, FIBRIL_P, TBB, fibril_table,
    fibril_table_runtimes_caption,
};
use super::{Figure, ReferenceCsv, reference_csv};
use crate::claims::{Band, Check, Claim, Q, case, counter};
use stealbench_workloads::Variant;

/// The figure's id.
pub(crate) const ID: &str = "fibril-table4";
/// The figure's title.
pub(crate) const TITLE: &str = "Fibril (SPAA'16) Table 4: incremental and peak RSS and stacks on 72 threads (fibril / abp / tbb)";

/// The reference numbers (MB; stacks), embedded.
const CSV: ReferenceCsv = reference_csv!("fibril_table4.csv");

/// The table's cells.
pub(crate) const METRIC: RssTable = RssTable {
    reference: CSV.text,
    columns: &[
        (
            FIBRIL,
            ["fibril_delta_rss", "fibril_max_rss", "fibril_stacks"],
        ),
        (
            CILK_PLUS,
            ["cilkplus_delta_rss", "cilkplus_max_rss", "cilkplus_stacks"],
        ),
        (TBB, ["tbb_delta_rss", "tbb_max_rss", ""]),
    ],
    paper_p: FIBRIL_P,
};

/// The figure: the twelve benchmarks on
/// [`FIBRIL_TABLE_RUNTIMES`](super::suites::FIBRIL_TABLE_RUNTIMES) at P = 72.
pub(crate) fn figure() -> Figure {
    fibril_table(
        ID,
        TITLE,
        concat!(
            "The RSS and stack usage on 72 threads: ΔRSS / Max RSS in MB (ΔRSS = the \
         incremental RSS during the computation, excluding the physical memory of the \
         input data and libraries) for Fibril, Cilk Plus (C.P.) and TBB, and the \
         number of stacks of Fibril and Cilk Plus. The text: Fibril's RSS is similar \
         to Cilk Plus's (it uses more stacks), and much less than TBB's. Paper \
         machine: 2 x 18-core Haswell, 72 hardware threads, 1 MiB stacks. ",
            fibril_table_runtimes_caption!(),
            "Each cell: incremental / peak RSS in MiB and the stacks. The \
         incremental RSS is the process's peak (its VmHWM after the repetition) minus \
         its resident set just before the first computation (pool started, input \
         generated and prepared), the largest over the repetitions, `≤` if the peak \
         was reached before the computation; the peak RSS is the process's VmHWM after \
         its last repetition; the stacks are `stacks_high_water`, the most fiber \
         stacks mapped at once (in use or in the pools' free lists: an upper bound of \
         those in use; tbb has none). 72 workers run oversubscribed on this \
         machine's cores (memory, not time). matmul is our `mm` and strassen our \
         `smm`."
        ),
        CSV,
        &METRIC,
    )
    .with_claims(claims())
}

/// The incremental resident set of `runtime`'s point of workload `w` at 72 workers, KiB, one
/// sample per repetition: its peak after the repetition minus its resident set before the
/// first computation (added as that over -1), as the table's first number (which is the
/// largest of these).
fn delta_rss(runtime: &'static str, w: &str) -> Q {
    let kb = |name| counter(runtime, w, Variant::Fj, FIBRIL_P, name);
    kb("process_hwm_kb").plus(kb("process_rss_before_kb").over(Q::Const(-1.0)))
}

/// `fibril`'s incremental RSS over `other`'s, per benchmark, within `band`.
fn delta_rss_ratio(other: &'static str, band: Band) -> Check {
    Check::Within {
        cases: FIBRIL_BENCHMARKS
            .iter()
            .map(|&(b, w)| case(b, delta_rss(FIBRIL, w).over(delta_rss(other, w))))
            .collect(),
        band,
        unit: "x",
    }
}

/// The figure's claims on the incremental RSS: Fibril's within a factor of 2 of Cilk Plus's
/// (its stand-in `abp`, Fibril's join and pools without releasing pages), and below TBB's.
fn claims() -> Vec<Claim> {
    vec![
        Claim::new(
            "rss-like-cilkplus",
            "The RSSes of Fibril benchmarks are similar to those of Cilk Plus",
            format!(
                "ΔRSS Fibril / Cilk Plus of Table 4: {}",
                paper_range(CSV.text, "fibril_delta_rss", "cilkplus_delta_rss")
            ),
            delta_rss_ratio(CILK_PLUS, Band::within(0.5, 2.0)),
        ),
        Claim::new(
            "rss-below-tbb",
            "Comparing with TBB, Fibril uses much less memory to execute the same computations",
            format!(
                "ΔRSS Fibril / TBB of Table 4: {}",
                paper_range(CSV.text, "fibril_delta_rss", "tbb_delta_rss")
            ),
            delta_rss_ratio(TBB, Band::at_most(1.0)),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_papers_megabytes_and_stacks_per_runtime() {
        let f = figure();
        assert_eq!(
            f.rows.len(),
            12 * crate::figures::suites::FIBRIL_TABLE_RUNTIMES.len()
        );
        assert_eq!(
            f.paper_cell("fft", "fibril", 72),
            "[paper 1540 / 2055 MB; 334 stacks]"
        );
        assert_eq!(
            f.paper_cell("heat", "abp", 72),
            "[paper 31 / 31 MB; 314 stacks]"
        );
        assert_eq!(
            f.paper_cell("quicksort", "tbb", 72),
            "[paper 883 / 883 MB; — stacks]"
        );
        assert_eq!(crate::reproduce::default_workers(&f), [72]);
        crate::figures::suites::assert_claims(&f, &["rss-like-cilkplus", "rss-below-tbb"]);
        assert_eq!(
            f.claims[0].paper,
            "ΔRSS Fibril / Cilk Plus of Table 4: 0.754 (rectmul) to 1.67 (nqueens)"
        );
        assert!(f.claims.iter().all(|c| c.stand_in.is_none()));
        assert!(f.claims[1].points().iter().any(|(p, _)| p.runtime == "tbb"));
    }

    #[test]
    fn the_incremental_rss_is_the_peak_less_the_rss_before() {
        use crate::claims::{Run, Verdict, judge};
        use crate::testutil::ok_point;
        use stealbench_workloads::Size;
        // fib: fibril adds 3 MiB, abp 2 in one repetition and 6 in the other.
        let point = |rt: &str, before: u64, hwm: &[u64]| {
            let mut s = ok_point(rt, Variant::Fj, 72, 1.0);
            s.counters = vec![
                ("process_rss_before_kb".into(), vec![before; hwm.len()]),
                ("process_hwm_kb".into(), hwm.to_vec()),
            ];
            s
        };
        let run = [point("fibril", 8192, &[11264, 11264]),
            point("abp", 8192, &[10240, 14336])];
        let f = Figure {
            claims: vec![claims().remove(0)],
            ..figure()
        };
        let j = judge(
            &f,
            &Run {
                summaries: &crate::results::Summaries::from(run.to_vec()),
                cores: 72,
                size: Size::Quick,
            },
        );
        assert!(j[0].ours.contains("fib 1 [0.500–1.50]"), "{}", j[0].ours);
        // The other benchmarks were not measured: n/a, on a machine of 72 cores and on one of 2,
        // where a count at P = 72 is measured too, oversubscribed.
        assert!(matches!(j[0].verdict, Verdict::NotApplicable(_)));
        let small = judge(
            &f,
            &Run {
                summaries: &crate::results::Summaries::from(run.to_vec()),
                cores: 2,
                size: Size::Quick,
            },
        );
        assert!(
            matches!(&small[0].verdict, Verdict::NotApplicable(why) if why.contains("oversubscribed")),
            "{:?}",
            small[0].verdict
        );
    }
}
