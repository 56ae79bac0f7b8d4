//! Spoonhower et al. (SPAA'09) Figure 6: steals and deviations against the number of
//! processors for Halstead's quicksort (`hqsort`), under work stealing with futures (the
//! paper's `ws` scheduler: our `abp`) and under proactive work stealing (`prows`, and its
//! artifact placement `prows/placement=artifact`), to show that deviations outgrow steals under
//! parsimonious stealing.
//!
//! The paper plots its numbers without printing them, so there is nothing to set beside ours.
//! The counts are measured with up to 16 workers, oversubscribed past this machine's cores (a
//! count, not a time), and simulated (`sim=unit`: the recorded DAG, unit strands, replayed in
//! `stealbench-sim`'s model of each scheduler) up to 1024.
//!
//! Its claims, at the measured P from 2 on: `abp`'s deviations many per steal (the paper's
//! observation), `prows`'s at most 3 per steal (ProWS's Theorem 4.11) and no more than `abp`'s.

use super::Figure;
use super::prows_fig4::{DEVIATIONS_PER_STEAL, THEOREM_4_11};
use crate::claims::{Band, Check, Claim, case, counter};
use super::metric::{Count, Reduce};
use crate::grid::Row;
use stealbench_workloads::Variant;

/// The figure's id.
pub(crate) const ID: &str = "spoonhower-fig6";
/// The figure's title.
pub(crate) const TITLE: &str =
    "Spoonhower et al. (SPAA'09) Figure 6: steals and deviations of Halstead's quicksort";

/// The rows' runtime arms: measured, then simulated.
const RUNTIMES: [&str; 6] = [
    "abp",
    "prows",
    "prows/placement=artifact",
    "abp/sim=unit",
    "prows/sim=unit",
    "prows/placement=artifact/sim=unit",
];

/// The metric of Spoonhower et al.'s figures: the medians of the steals and of the deviations.
pub(crate) const STEALS_AND_DEVIATIONS: Count = Count {
    stats: &["steals", "deviations"],
    reduce: Reduce::Median,
};

/// The figure: hqsort (gf) on each runtime, measured and simulated.
pub(crate) fn figure() -> Figure {
    let rows = RUNTIMES
        .iter()
        .map(|rt| Row::new("quicksort", "hqsort", Variant::Gf, *rt))
        .collect();
    Figure {
        sim_workers: &[32, 64, 128, 256, 512, 1024],
        ..Figure::new(
            ID,
            TITLE,
            "Empirical measurements for quicksort: the number of steals and of deviations \
             against the number of processors under the paper's work-stealing scheduler \
             (`ws`, in its parallel ML). Halstead's quicksort streams its partitions and \
             passes one recursive call's result to the other as a future: span O(n), \
             O(n log n) futures, each touched at least once. Here `ws` is `abp`; `prows` \
             and `prows/placement=artifact` show proactive work stealing on the same program; the \
             `sim=unit` rows replay the program's recorded DAG (unit-weight strands) in the \
             simulator's model of each, one seed per repetition, up to P = 1024.",
            &[1, 2, 4, 8, 16],
            &STEALS_AND_DEVIATIONS,
            rows,
        )
        .with_claims(claims())
    }
}

/// Deviations per steal of hqsort on `runtime` at each measured P from 2 on, within `band`.
fn per_steal(
    id: &'static str,
    quote: &'static str,
    paper: &str,
    runtime: &'static str,
    band: Band,
) -> Claim {
    let at = |p| {
        counter(runtime, "hqsort", Variant::Gf, p, "deviations").over(counter(
            runtime,
            "hqsort",
            Variant::Gf,
            p,
            "steals",
        ))
    };
    Claim::new(
        id,
        quote,
        paper.to_string(),
        Check::Within {
            cases: [2, 4, 8, 16]
                .into_iter()
                .map(|p| case(format!("P={p}"), at(p)))
                .collect(),
            band,
            unit: "deviations per steal",
        },
    )
}

/// ProWS's words on its deviations against parsimonious work stealing's, for the claims that
/// compare the two on one program under the machine's own schedule (a bound, one-sided: no
/// more deviations than `abp`).
pub(crate) const NO_MORE_THAN_PARSIMONIOUS: &str = "We show that ProWS, for programs that use \
     futures, can provide provably efficient execution time and equal or better bounds on the \
     number of deviations compared to classic parsimonious work stealing (ProWS, abstract)";

/// The paper's observation on the parsimonious scheduler (`abp`: most deviations come after
/// suspended touches, not from steals, at least 10 per steal), and ProWS's on the same program
/// (a few per steal: its deviations are bounded by its steals).
fn claims() -> Vec<Claim> {
    vec![
        per_steal(
            "parsimonious-deviations-not-from-steals",
            "only a small fraction of the deviations can be attributed to steals",
            "ws: about 40,000 deviations against a small number of steals (Figure 6, drawn)",
            "abp",
            Band::at_least(10.0),
        ),
        per_steal(
            "proactive-few-per-steal",
            THEOREM_4_11,
            "O(n) deviations for n steals: at most 3 per steal by the proof (its three kinds \
             of trace start, each bounded by the steals)",
            "prows",
            Band::at_most(DEVIATIONS_PER_STEAL),
        ),
        Claim::new(
            "no-more-than-parsimonious",
            NO_MORE_THAN_PARSIMONIOUS,
            "deviations of prows over abp's at most 1, at each measured P",
            Check::Within {
                cases: [2, 4, 8, 16]
                    .into_iter()
                    .map(|p| {
                        let dev = |rt| counter(rt, "hqsort", Variant::Gf, p, "deviations");
                        case(format!("P={p}"), dev("prows").over(dev("abp")))
                    })
                    .collect(),
                band: Band::at_most(1.0),
                unit: "x",
            },
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hqsort_measured_to_16_and_simulated_to_1024() {
        let f = figure();
        let rows: Vec<String> = f.rows.iter().map(|r| r.runtime.to_string()).collect();
        assert_eq!(rows, RUNTIMES);
        assert!(
            f.rows
                .iter()
                .all(|r| r.workload == "hqsort" && r.paper.is_none())
        );
        assert_eq!(f.metric.lines(), ["steals", "deviations"]);
        assert_eq!(crate::plan::default_workers(&f), [1, 2, 4, 8, 16]);
        assert_eq!(f.sim_workers.last(), Some(&1024));
        let mut g =
            crate::grid::Grid::build(f.rows.clone(), &[1, 16], &crate::grid::Selection::default());
        g.simulate_also(&[1024]);
        let at_1024: Vec<String> = g
            .points
            .iter()
            .filter(|k| k.workers == 1024)
            .map(|k| k.runtime.to_string())
            .collect();
        assert_eq!(at_1024, RUNTIMES[3..]);
        super::super::suites::assert_claims(
            &f,
            &[
                "parsimonious-deviations-not-from-steals",
                "proactive-few-per-steal",
                "no-more-than-parsimonious",
            ],
        );
    }
}
