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
    CILK_PLUS, CILK_PLUS_STAND_IN, FIBRIL, FIBRIL_BENCHMARKS, FIBRIL_P, TBB, fibril_table,
    fibril_table_runtimes_caption,
};
use super::{Figure, ReferenceCsv, paper_number, reference_csv};
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
        &[],
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

/// The paper's ratio of columns `num` over `den` of Table 4 for `bench`.
fn paper_ratio(bench: &str, num: &str, den: &str) -> f64 {
    paper_number(CSV.text, bench, num)
        .zip(paper_number(CSV.text, bench, den))
        .map(|(a, b)| a / b)
        .unwrap_or_else(|| panic!("{}: {bench} has no {num} or {den}", CSV.path))
}

/// Per benchmark, `fibril`'s `q` over `other`'s, within `band` of the paper's ratio of the
/// columns `num` over `den`.
fn per_benchmark(
    q: impl Fn(&'static str, &str) -> Q,
    other: &'static str,
    (num, den): (&str, &str),
    band: fn(f64) -> Band,
) -> Check {
    Check::Each {
        cases: FIBRIL_BENCHMARKS
            .iter()
            .map(|&(b, w)| {
                (
                    case(b, q(FIBRIL, w).over(q(other, w))),
                    band(paper_ratio(b, num, den)),
                )
            })
            .collect(),
        unit: "x",
    }
}

/// The stacks of `runtime`'s point of workload `w` at 72 workers: the most it had mapped.
fn stacks(runtime: &'static str, w: &str) -> Q {
    counter(runtime, w, Variant::Fj, FIBRIL_P, "stacks_high_water")
}

/// The figure's claims, each benchmark around its own ratio in Table 4: Fibril's incremental
/// RSS similar to Cilk Plus's (± 10 %, [`Band::same`]) and below TBB's (± 25 %, not above 1:
/// "much less", [`Band::less`]), and its stacks more than Cilk Plus's ([`Band::more`]). The
/// comparisons with Cilk Plus are `n/a`, as every claim against it ([`CILK_PLUS_STAND_IN`]:
/// `abp` is Fibril's join and pools without the unmap); their numbers are still shown.
fn claims() -> Vec<Claim> {
    let rss = ("fibril_delta_rss", "cilkplus_delta_rss");
    let tbb = ("fibril_delta_rss", "tbb_delta_rss");
    let stack_columns = ("fibril_stacks", "cilkplus_stacks");
    vec![
        Claim::new(
            "rss-like-cilkplus",
            "The RSSes of Fibril benchmarks are similar to those of Cilk Plus",
            format!(
                "ΔRSS Fibril / Cilk Plus of Table 4: {}",
                paper_range(CSV.text, rss.0, rss.1)
            ),
            per_benchmark(delta_rss, CILK_PLUS, rss, Band::same),
        )
        .stand_in(CILK_PLUS_STAND_IN),
        Claim::new(
            "rss-below-tbb",
            "Comparing with TBB, Fibril uses much less memory to execute the same computations",
            format!(
                "ΔRSS Fibril / TBB of Table 4: {} (fib 3 MB against 108)",
                paper_range(CSV.text, tbb.0, tbb.1)
            ),
            per_benchmark(delta_rss, TBB, tbb, Band::less),
        ),
        Claim::new(
            "more-stacks-than-cilkplus",
            "This may be because Fibril uses more stacks than Cilk Plus to execute these \
             computations",
            format!(
                "stacks Fibril / Cilk Plus of Table 4: {}",
                paper_range(CSV.text, stack_columns.0, stack_columns.1)
            ),
            per_benchmark(stacks, CILK_PLUS, stack_columns, Band::more),
        )
        .stand_in(CILK_PLUS_STAND_IN),
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
        assert_eq!(crate::plan::default_workers(&f), [72]);
        crate::figures::suites::assert_claims(
            &f,
            &["rss-like-cilkplus", "rss-below-tbb", "more-stacks-than-cilkplus"],
        );
        assert_eq!(
            f.claims[0].paper,
            "ΔRSS Fibril / Cilk Plus of Table 4: 0.754 (rectmul) to 1.67 (nqueens)"
        );
        // The comparisons with Cilk Plus are n/a, as Figure 3's: one rule for its stand-in.
        let stood_in: Vec<bool> = f.claims.iter().map(|c| c.stand_in.is_some()).collect();
        assert_eq!(stood_in, [true, false, true]);
        assert!(f.claims[1].points().iter().any(|(p, _)| p.runtime == "tbb"));
        // fib around the paper's 3 MB against 108, strassen around 2434 against 2603.
        let Check::Each { cases, .. } = &f.claims[1].check else {
            panic!("a band per case");
        };
        assert_eq!(cases[2].1, Band::less(3.0 / 108.0));
        assert_eq!(cases[11].1, Band::within(0.75 * 2434.0 / 2603.0, 1.0));
    }

    #[test]
    fn the_incremental_rss_is_the_peak_less_the_rss_before() {
        use crate::claims::{Run, Verdict, judge};
        use crate::testutil::ok_point;
        use stealbench_workloads::Size;
        // fib: fibril adds 3 MiB, tbb 120 MiB: 0.025, within fib's band around the paper's
        // 3 MB against 108.
        let point = |rt: &str, before: u64, hwm: &[u64]| {
            let mut s = ok_point(rt, Variant::Fj, 72, 1.0);
            s.counters = vec![
                ("process_rss_before_kb".into(), vec![before; hwm.len()]),
                ("process_hwm_kb".into(), hwm.to_vec()),
            ];
            s
        };
        let run = [point("fibril", 8192, &[11264, 11264]),
            point("tbb", 8192, &[131072, 131072])];
        let f = Figure {
            claims: vec![claims().remove(1)],
            ..figure()
        };
        let j = judge(
            f.claimed(),
            &Run {
                summaries: &crate::results::Summaries::from(run.to_vec()),
                cores: 72,
                size: Size::Quick,
            },
        );
        assert!(j[0].ours.contains("fib 0.0250"), "{}", j[0].ours);
        // The other benchmarks were not measured: n/a, on a machine of 72 cores and on one of 2,
        // where a count at P = 72 is measured too, oversubscribed.
        assert!(matches!(j[0].verdict, Verdict::NotApplicable(_)));
        let small = judge(
            f.claimed(),
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
