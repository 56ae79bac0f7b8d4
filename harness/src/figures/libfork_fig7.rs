//! libfork (Williams and Elliott) Figure 7: the peak memory (MRSS) of the benchmarks against
//! P, fit to Eq. (17) (the fit is `libfork-table2`).
//!
//! As the paper, matmul is left out (its MRSS is the input and output matrices). The rows are
//! [`libfork_runtimes`](super::suites::libfork_runtimes), the paper's systems mapped to our arms
//! in [`super::suites`]. The peak RSS is the point process's own (see [`super::memory`]). Memory does not need a core per worker, so the
//! default P list goes past this machine's cores (points past its logical CPUs, oversubscribed,
//! marked): the paper's went to 112.
//!
//! Its claims ([`claims`]), on the peak RSS at the largest P of the default list (16): the
//! geometric trees' memory about constant across T1, T1L and T1XXL (from size `small` on,
//! where they differ: [`LARGE_TREES_FROM_SMALL`]), the binomial tree T3 needing more than T1
//! (from `quick` on: `test` cuts both to a few thousand nodes); and, at 112 workers (a default
//! run measures P = 112 beside [`MEMORY_WORKERS`], the claims' P, oversubscribed: memory needs
//! no core per worker), TBB's and OpenMP's memory against libfork's: up to 3.1x and 12x on the
//! classic benchmarks (the largest of the three), 13x and 17x on T3XXL, 6.2x and 10x on
//! average, up to 19x and 24x over all (the conclusion's: the largest of the nine); each band
//! ± 25 % around the paper's number (`claims/check.rs`).

use super::libfork_fig5::LIBFORK_ARMS;
use super::memory::PeakRss;
use super::suites::{
    LARGE_TREES_FROM_SMALL, LAZY_LF, LIBFORK_CLASSIC, LIBFORK_UTS, OPENMP, TBB, libfork_claim,
    libfork_claim_text, libfork_rows, libfork_runtimes_caption,
};
use super::{Figure, Metric};
use crate::claims::{Band, Check, Claim, Q, case, peak_rss};
use stealbench_workloads::{Shape, Size, Variant};

/// The figure's id.
pub(crate) const ID: &str = "libfork-fig7";
/// The figure's title.
pub(crate) const TITLE: &str =
    "libfork Figure 7: peak memory (MRSS) against P (fib, integrate, nqueens, UTS trees)";

/// The P of the memory figures' plots and fits: enough points for a fit of three parameters.
/// The paper's went to 112 cores; a default run adds the P its claims read
/// (`plan::default_workers`), `--workers` any other.
pub(crate) const MEMORY_WORKERS: &[usize] = &[1, 2, 4, 8, 12, 16];

/// A memory figure of libfork's (Figure 7, Table II): `benchmarks` on every runtime at
/// [`MEMORY_WORKERS`], one repetition per point (a point's peak RSS is its process's, after its
/// last repetition).
pub(crate) fn memory_figure(
    id: &'static str,
    title: &'static str,
    caption: &'static str,
    metric: &'static dyn Metric,
    benchmarks: &[(&str, &str)],
) -> Figure {
    Figure {
        reps: Some(1),
        ts: Shape::Libfork,
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
pub(crate) fn benchmarks() -> Vec<(&'static str, &'static str)> {
    LIBFORK_CLASSIC
        .iter()
        .filter(|(b, _)| *b != "matmul")
        .chain(LIBFORK_UTS.iter())
        .copied()
        .collect()
}

/// The figure: the benchmarks on every runtime.
pub(crate) fn figure() -> Figure {
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
            "The peak RSS is the point process's \
             own VmHWM after its last repetition (input, libraries and pool included, as GNU \
             time's), one process per point. P past this machine's cores puts pinned workers \
             on SMT siblings; P past its logical CPUs runs oversubscribed (memory, not time), \
             marked, pinned workers sharing CPUs (libfork's victims weigh a worker on the same \
             CPU as distance 1)."
        ),
        &PeakRss,
        &benchmarks(),
    )
    .with_claims(claims())
}

/// The largest P of [`MEMORY_WORKERS`] (16), where the memory claims compare.
const TOP_P: usize = MEMORY_WORKERS[MEMORY_WORKERS.len() - 1];

/// The peak RSS of `arm` on `workload` at `p`.
fn rss(arm: &'static str, workload: &str, p: usize) -> Q {
    peak_rss(arm, workload, Variant::Fj, p)
}

/// The mean over `workloads` of `other`'s peak RSS over Lazy-LF's at `p` (TBB's, OpenMP's).
pub(crate) fn mean_over_libfork(other: &'static str, workloads: &[&str], p: usize) -> Q {
    let sum = workloads
        .iter()
        .map(|w| rss(other, w, p).over(rss(LAZY_LF, w, p)))
        .reduce(Q::plus)
        .unwrap_or(Q::Const(0.0));
    sum.over(Q::Const(workloads.len() as f64))
}

/// The largest over `workloads` of `other`'s peak RSS over Lazy-LF's at `p`.
fn largest_over_libfork(other: &'static str, workloads: &[&str], p: usize) -> Q {
    workloads
        .iter()
        .map(|w| rss(other, w, p).over(rss(LAZY_LF, w, p)))
        .reduce(Q::max)
        .unwrap_or(Q::Const(0.0))
}

/// The paper's claims the figure tests (see the module documentation).
pub(crate) fn claims() -> Vec<Claim> {
    let classic: Vec<&str> = LIBFORK_CLASSIC
        .iter()
        .filter(|(b, _)| *b != "matmul")
        .map(|(_, w)| *w)
        .collect();
    let all: Vec<&str> = benchmarks().iter().map(|(_, w)| *w).collect();
    let t3xxl = "uts/tree=T3XXL";
    // The claims on the memory of `arm` (TBB, OpenMP) against libfork's, the paper's number
    // the record `key` of the claims CSV. "Up to": the largest over the benchmarks about it.
    let up_to = |id: &'static str, quote: &'static str, arm: &'static str, key: &str| {
        Claim::new(
            id,
            quote,
            format!(
                "up to {} at P up to 112 (here the largest over fib, integrate and nqueens at \
                 P = 112)",
                libfork_claim_text(key)
            ),
            Check::Within {
                cases: vec![case("largest", largest_over_libfork(arm, &classic, 112))],
                band: Band::ratio(libfork_claim(key)),
                unit: "x",
            },
        )
    };
    // The conclusion's "up to N× less memory" than `arm` over every benchmark of the figure.
    let up_to_all = |id: &'static str, arm: &'static str, n: f64| {
        Claim::new(
            id,
            "libfork achieves linear memory-scaling ... consuming up to: 19× less memory than \
             Intel's TBB, 24× less memory than openMP (libomp) (Conclusion)",
            format!(
                "up to {n}x (here the largest over the figure's 9 benchmarks at P = 112, \
                 Lazy-LF)"
            ),
            Check::Within {
                cases: vec![case("largest", largest_over_libfork(arm, &all, 112))],
                band: Band::ratio(n),
                unit: "x",
            },
        )
        .at_least_size(Size::Small, LARGE_TREES_FROM_SMALL)
    };
    let on_t3xxl = |id: &'static str, quote: &'static str, arm: &'static str, key: &str| {
        Claim::new(
            id,
            quote,
            format!("{} at 112 cores", libfork_claim_text(key)),
            Check::Within {
                cases: vec![case(
                    "T3XXL",
                    rss(arm, t3xxl, 112).over(rss(LAZY_LF, t3xxl, 112)),
                )],
                band: Band::ratio(libfork_claim(key)),
                unit: "x",
            },
        )
        .at_least_size(Size::Small, LARGE_TREES_FROM_SMALL)
    };
    let on_average = |id: &'static str, quote: &'static str, arm: &'static str, key: &str| {
        Claim::new(
            id,
            quote,
            format!(
                "{} on average (here the mean over the figure's 9 benchmarks at P = 112)",
                libfork_claim_text(key)
            ),
            Check::Within {
                cases: vec![case("mean", mean_over_libfork(arm, &all, 112))],
                band: Band::ratio(libfork_claim(key)),
                unit: "x",
            },
        )
        .at_least_size(Size::Small, LARGE_TREES_FROM_SMALL)
    };
    let classic_quote = "OpenMP and TBB perform better but still consume up to 12× and 3.1× \
                         more memory than libfork";
    vec![
        Claim::new(
            "geometric-memory-flat",
            "As the recursion depth is similar across the geometric trees, the memory \
             consumption remains roughly constant for libfork",
            "peak RSS of T1L and T1XXL = T1's (here within 10 %: roughly constant, at P = 16)",
            Check::Within {
                cases: ["T1L", "T1XXL"]
                    .iter()
                    .flat_map(|t| {
                        LIBFORK_ARMS.map(|(name, arm)| {
                            let w = format!("uts/tree={t}");
                            case(
                                format!("{t}/T1 {name}"),
                                rss(arm, &w, TOP_P).over(rss(arm, "uts/tree=T1", TOP_P)),
                            )
                        })
                    })
                    .collect(),
                band: Band::same(1.0),
                unit: "x",
            },
        )
        .at_least_size(Size::Small, LARGE_TREES_FROM_SMALL),
        Claim::new(
            "binomial-needs-more",
            "The binomial trees have a larger recursion depth hence, requiring more memory",
            "peak RSS of T3 above T1's (depth 1572 against 10)",
            Check::Order {
                cases: LIBFORK_ARMS
                    .iter()
                    .map(|(name, arm)| {
                        (
                            format!("T1 < T3 {name}"),
                            vec![
                                rss(arm, "uts/tree=T1", TOP_P),
                                rss(arm, "uts/tree=T3", TOP_P),
                            ],
                        )
                    })
                    .collect(),
                band: Band::at_least(1.0),
            },
        )
        .at_least_size(
            Size::Quick,
            "test cuts T1 at depth 5 and T3 at depth 2, a few thousand nodes each",
        ),
        up_to(
            "tbb-up-to-3.1x",
            classic_quote,
            TBB,
            "classic memory: tbb uses more than libfork up to",
        ),
        up_to(
            "openmp-up-to-12x",
            classic_quote,
            OPENMP,
            "classic memory: openmp uses more than libfork up to",
        ),
        on_t3xxl(
            "t3xxl-13x-less-than-tbb",
            "in the T3XXL benchmark, libfork requires 13× less memory than TBB",
            TBB,
            "T3XXL memory: tbb uses more than libfork",
        ),
        on_t3xxl(
            "t3xxl-17x-less-than-openmp",
            "in the T3XXL benchmark, libfork requires ... 17× less memory than openMP",
            OPENMP,
            "T3XXL memory: openmp uses more than libfork",
        ),
        on_average(
            "tbb-6.2x-on-average",
            "compared to Intel's TBB, libfork ... consumes 6.2× less memory",
            TBB,
            "average memory saving vs tbb",
        ),
        on_average(
            "openmp-10x-on-average",
            "Compared to openMP (libomp), libfork ... consumes 10× less memory",
            OPENMP,
            "average memory saving vs openmp",
        ),
        up_to_all("up-to-19x-less-than-tbb", TBB, 19.0),
        up_to_all("up-to-24x-less-than-openmp", OPENMP, 24.0),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_matmul_and_memory_past_the_cores() {
        let f = figure();
        assert_eq!(f.rows.len(), 9 * crate::figures::suites::libfork_runtimes().len());
        assert!(
            f.rows
                .iter()
                .all(|r| r.workload.name() != "mm")
        );
        // The memory figures' P, and the claims' 112.
        assert_eq!(
            crate::plan::default_workers(&f),
            [MEMORY_WORKERS, &[112]].concat()
        );
        assert_eq!(f.reps, Some(1));
    }

    #[test]
    fn claims_compare_memory_at_16_and_tbb_at_112() {
        let f = figure();
        crate::figures::suites::assert_claims(
            &f,
            &[
                "geometric-memory-flat",
                "binomial-needs-more",
                "tbb-up-to-3.1x",
                "openmp-up-to-12x",
                "t3xxl-13x-less-than-tbb",
                "t3xxl-17x-less-than-openmp",
                "tbb-6.2x-on-average",
                "openmp-10x-on-average",
                "up-to-19x-less-than-tbb",
                "up-to-24x-less-than-openmp",
            ],
        );
        assert!(f.claims.iter().all(|c| c.stand_in.is_none()));
        assert!(f.claims.iter().all(|c| !c.reads_time()));
        assert_eq!(f.claims[0].max_p(), *MEMORY_WORKERS.last().unwrap());
        assert_eq!(f.claims[2].check.band(), "[2.33, 3.88] x");
        assert_eq!(f.claims[3].check.band(), "[9, 15] x");
        assert_eq!(f.claims[9].check.band(), "[18, 30] x");
        // The mean of TBB's peak over libfork's: (300/100 + 200/100) / 2.
        let point = |rt: &str, w: &str, kb| {
            let mut s = crate::testutil::ok_point(rt, Variant::Fj, 2, 1.0);
            s.key.workload = (*w).into();
            s.peak_rss_kb = Some(kb);
            s
        };
        let run = [
            point("tbb", "fib", 300),
            point(LAZY_LF, "fib", 100),
            point("tbb", "nqueens", 200),
            point(LAZY_LF, "nqueens", 100),
        ];
        let mean = mean_over_libfork(TBB, &["fib", "nqueens"], 2).samples(&crate::results::Summaries::from(run.to_vec()));
        assert_eq!(mean.unwrap().values, [2.5]);
    }
}
