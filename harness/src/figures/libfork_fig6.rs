//! libfork (Williams and Elliott) Figure 6: time and speedup T_s / T_P of the UTS trees of its
//! Table I (T1, T1L, T1XXL geometric; T3, T3L, T3XXL binomial) against P for libfork's busy
//! and lazy schedulers, TBB, OpenMP and taskflow.
//!
//! Each row's workload is a spec of `uts` naming the tree (`uts/tree=T3L`); the size preset
//! sets the rest: `small`, `quick` and `test` cut each tree at a depth of its own (the `uts`
//! workload's `cut`, a table per tree: `quick` is 0.1 to 0.3 s serially). The paper plots
//! the times (no numbers). The rows are [`libfork_runtimes`](super::suites::libfork_runtimes),
//! the paper's systems mapped to our arms in [`super::suites`]. The paper's '*' rows (libfork's stack allocation API for the
//! return values) have no counterpart: our `uts` sums its counts on the way back up, with no
//! heap allocation for them.
//!
//! Its claims ([`claims`]) are about 112 cores and the trees' sizes: T1 and T3, too small to
//! scale there, scale less than the large trees; the lazy scheduler's time does not grow
//! from 56 to 112 cores on them; the large trees scale linearly (T_1 / T_P about P, checked at
//! P = 2); libfork is
//! at least 3.6x faster than TBB and than OpenMP on T3XXL. A claim that
//! compares the large trees with their base trees, or relies on their size, decides from size
//! `small` on: `quick` cuts the large trees to no more than their base trees
//! ([`LARGE_TREES_FROM_SMALL`]). T1 and T3 are whole at `quick` and `small`, as the paper's.

use super::libfork_fig5::LIBFORK_ARMS;
use super::metric::Time;
use super::suites::{
    LARGE_TREES_FROM_SMALL, LAZY_LF, LIBFORK_UTS, OPENMP, TBB, libfork_claim,
    libfork_claim_text, libfork_rows, libfork_runtimes_caption,
};
use super::{Figure, SpeedupBase};
use crate::claims::{Band, Check, Claim, Q, case, time, ts};
use stealbench_workloads::{Shape, Size, Variant};

/// The figure's id.
pub(crate) const ID: &str = "libfork-fig6";
/// The figure's title.
pub(crate) const TITLE: &str =
    "libfork Figure 6: UTS trees (T1, T1L, T1XXL, T3, T3L, T3XXL), time and speedup against P";

/// The figure: the six trees on every runtime.
pub(crate) fn figure() -> Figure {
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
            "The '*' variant has no counterpart here. Each tree is the \
             `uts` workload with `tree=` set; the size preset sets its other parameters. T_s is \
             the serial code of libfork's benchmark, a plain recursion for UTS (the page's T_s \
             line). The paper prints no times: no paper value is beside ours."
        ),
        super::libfork_fig5::PAPER_WORKERS,
        &Time(SpeedupBase::Serial),
        libfork_rows(&LIBFORK_UTS),
    )
    .with_ts(Shape::Libfork)
    .with_claims(claims())
}

/// The workload spec of tree `name` (`uts/tree=T3L`).
fn tree(name: &str) -> String {
    format!("uts/tree={name}")
}

/// T_s / T_P of Lazy-LF on tree `name`.
fn speedup(name: &str, p: usize) -> Q {
    let w = tree(name);
    ts(&w).over(time(LAZY_LF, &w, Variant::Fj, p))
}

/// The paper's claims the figure tests (see the module documentation).
pub(crate) fn claims() -> Vec<Claim> {
    let large = ["T1L", "T1XXL", "T3L", "T3XXL"];
    let pairs = [
        ("T1", "T1L"),
        ("T1", "T1XXL"),
        ("T3", "T3L"),
        ("T3", "T3XXL"),
    ];
    let t3xxl = "T3XXL: libfork faster than tbb and openmp at least";
    let t3xxl_faster = |id: &'static str, other: &'static str| {
        Claim::new(
            id,
            "in the T3XXL benchmark ... despite delivering at least a 3.6× speedup over both",
            format!("{} at 112 cores", libfork_claim_text(t3xxl)),
            Check::Within {
                cases: vec![case(
                    "T3XXL",
                    time(other, &tree("T3XXL"), Variant::Fj, 112).over(time(
                        LAZY_LF,
                        &tree("T3XXL"),
                        Variant::Fj,
                        112,
                    )),
                )],
                band: Band::at_least(libfork_claim(t3xxl)),
                unit: "x",
            },
        )
        .at_least_size(Size::Small, LARGE_TREES_FROM_SMALL)
    };
    vec![
        Claim::new(
            "small-trees-scale-least",
            "The T1 and T3 benchmarks are relatively small benchmarks, taking only 10ms and 13ms \
             to execute with libfork at 112 cores",
            "T1, T3: 10 ms and 13 ms at 112 cores, sub-linear scaling; the other trees linear",
            Check::Order {
                cases: pairs
                    .iter()
                    .map(|(small, big)| {
                        (
                            format!("{small} < {big}"),
                            vec![speedup(small, 112), speedup(big, 112)],
                        )
                    })
                    .collect(),
                band: Band::at_least(1.0),
            },
        )
        .at_least_size(Size::Small, LARGE_TREES_FROM_SMALL),
        Claim::new(
            "lazy-no-negative-scaling",
            "the lazy scheduler mitigates this ... and does not exhibit the negative scaling",
            "T(Lazy-LF) at 112 cores no more than at 56 on T1 and T3",
            Check::Within {
                cases: ["T1", "T3"]
                    .iter()
                    .map(|name| {
                        let w = tree(name);
                        case(
                            *name,
                            time(LAZY_LF, &w, Variant::Fj, 56).over(time(
                                LAZY_LF,
                                &w,
                                Variant::Fj,
                                112,
                            )),
                        )
                    })
                    .collect(),
                band: Band::at_least(1.0),
                unit: "x",
            },
        ),
        Claim::new(
            "large-trees-scale",
            "For the remainder of the T1 family, libfork demonstrates similar linear scaling \
             ... linear time-scaling for the remainder of the binomial family",
            "linear T_1/T_P on T1L, T1XXL, T3L, T3XXL (here: T_1/T_P about P, at P = 2)",
            Check::Within {
                cases: large
                    .iter()
                    .flat_map(|name| {
                        let w = tree(name);
                        LIBFORK_ARMS.map(|(arm_name, arm)| {
                            case(
                                format!("{name} {arm_name}"),
                                time(arm, &w, Variant::Fj, 1).over(time(arm, &w, Variant::Fj, 2)),
                            )
                        })
                    })
                    .collect(),
                band: Band::ratio(2.0),
                unit: "x",
            },
        )
        .at_least_size(Size::Small, LARGE_TREES_FROM_SMALL),
        t3xxl_faster("t3xxl-faster-than-tbb", TBB),
        t3xxl_faster("t3xxl-faster-than-openmp", OPENMP),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn six_trees_each_a_spec_of_uts() {
        let f = figure();
        let n = crate::figures::suites::libfork_runtimes().len();
        assert_eq!(f.rows.len(), 6 * n);
        assert!(f.rows.iter().all(|r| r.workload.name() == "uts"));
        let specs: Vec<String> = f
            .rows
            .iter()
            .step_by(n)
            .map(|r| r.workload.to_string())
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
        assert_eq!(f.rows[3 * n].bench, "T3");
    }

    #[test]
    fn claims_on_the_large_trees_decide_from_small_on() {
        let f = figure();
        super::super::suites::assert_claims(
            &f,
            &[
                "small-trees-scale-least",
                "lazy-no-negative-scaling",
                "large-trees-scale",
                "t3xxl-faster-than-tbb",
                "t3xxl-faster-than-openmp",
            ],
        );
        assert!(f.claims.iter().all(|c| c.stand_in.is_none()));
        for c in &f.claims {
            let large = c.points().iter().any(|(p, _)| {
                ["T1L", "T1XXL", "T3L", "T3XXL"]
                    .iter()
                    .any(|t| p.workload == tree(t).as_str())
            });
            assert_eq!(
                c.min_size.map(|(s, _)| s),
                large.then_some(Size::Small),
                "{}",
                c.id
            );
        }
    }
}
