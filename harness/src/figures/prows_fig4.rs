//! ProWS (PPoPP'19) Figure 4: the number of deviations on 16 processors, the maximum of 3
//! runs, for hw, lcs and sw in their fork-join (Cilk Plus, our `abp`), structured-futures and
//! general-futures versions (Cilk-F, our `prows`, with the authors' artifact placement beside
//! it as `prows/placement=artifact`).
//!
//! Deviations are counted exactly by the runtimes (Definition 1 of Spoonhower et al.: a strand
//! whose predecessor in the one-worker order is not what its worker ran just before it). On a
//! machine with fewer than 16 cores the 16 workers are oversubscribed: a count, not a time,
//! so the figure measures P = 16 wherever it runs.
//!
//! Its claims: sf over fj and gf over sf deviations each around the paper's own ratio (± 25 %,
//! not below 1: "fewer still", "many fewer"; sw's fj = sf included), and Theorem 4.11 on the
//! same runs: at most 3 deviations per steal on `prows` ([`DEVIATIONS_PER_STEAL`]).

use super::metric::{Count, Reduce};
use super::{Figure, ReferenceCsv, paper_number, prows_runtime, reference_csv};
use crate::claims::quantity::number;
use crate::claims::{Band, Check, Claim, Q, case, counter};
use crate::grid::{PaperValues, Row};
use stealbench_workloads::Variant;

/// The figure's id.
pub(crate) const ID: &str = "prows-fig4";
/// The figure's title.
pub(crate) const TITLE: &str = "ProWS (PPoPP'19) Figure 4: deviations on 16 processors, fj / sf / gf";

/// The reference numbers, embedded so the binary works from any directory.
const CSV: ReferenceCsv = reference_csv!("prows_fig4.csv");

/// The paper's processor count.
const P: usize = 16;

/// The figure: per benchmark, fj on `abp`, sf and gf on `prows` with the paper's count, and
/// sf and gf on `prows/placement=artifact`.
pub(crate) fn figure() -> Figure {
    let reference = CSV.parse();
    let mut rows = Vec::new();
    for rec in &reference.records {
        let bench = reference.field(rec, "bench").expect("bench column");
        for variant in [Variant::Fj, Variant::Sf, Variant::Gf] {
            let count = reference
                .field(rec, variant.name())
                .and_then(|s| s.parse::<f64>().ok());
            let row = |runtime: &str, paper| Row {
                paper,
                ..Row::new(bench, bench, variant, runtime)
            };
            rows.push(row(
                prows_runtime(variant),
                Some(PaperValues {
                    ts: None,
                    values: vec![(P, count)],
                }),
            ));
            if variant != Variant::Fj {
                rows.push(row("prows/placement=artifact", None));
            }
            // The same program simulated at P = 16 (`stealbench-sim`, unit strands).
            rows.push(row(&format!("{}/sim=unit", prows_runtime(variant)), None));
            if variant != Variant::Fj {
                rows.push(row("prows/placement=artifact/sim=unit", None));
            }
        }
    }
    Figure {
        reps: Some(3),
        ..Figure::new(
            ID,
            TITLE,
            "Number of deviations on 16 processors, the maximum of 3 runs, for the \
             fork-join (Cilk Plus), structured-futures and general-futures (Cilk-F) \
             versions of the benchmarks. Paper machine: Intel Xeon E5-2665, 2 x 8 cores. \
             Here the fj rows run on `abp` (for Cilk Plus) and the sf and gf rows on \
             `prows` (for Cilk-F, the paper's placement) and on `prows/placement=artifact` (the \
             authors' artifact placement: the less loaded of two random workers, no \
             rebalancing); runtimes that do not count deviations are left out. The \
             `sim=unit` rows replay each program's recorded DAG (unit-weight strands) in \
             the simulator's model of the same scheduler at P = 16, one seed per \
             repetition.",
            &[P],
            &Count {
                stats: &["deviations"],
                reduce: Reduce::Max,
            },
            rows,
        )
        .with_reference(CSV)
        .with_claims(claims())
    }
}

/// The benchmarks of the figure.
const BENCHES: [&str; 3] = ["hw", "lcs", "sw"];

/// The deviations of `bench`'s `variant` on its paper runtime at P = 16.
fn deviations(bench: &str, variant: Variant) -> Q {
    counter(prows_runtime(variant), bench, variant, P, "deviations")
}

/// Theorem 4.11's constant: a trace, and so a deviation, begins at a sync node, a stolen node
/// or a mugged deque, and each of the three is bounded by the successful steals (its proof), so
/// the deviations are at most three per steal.
pub(crate) const DEVIATIONS_PER_STEAL: f64 = 3.0;

/// Theorem 4.11 of ProWS, with its words, for the claims that check it.
pub(crate) const THEOREM_4_11: &str = "Theorem 4.11. Given an execution of ProWS. Let n be the \
     number of successful steals in the execution. Then, the number of deviations is O(n) \
     ... bounded by the sum of the numbers for deviated sync nodes, successful steals, and \
     muggings";

/// The paper's claim over the order of deviations, in two parts, each case around its own
/// ratio of Figure 4's counts and not below 1 (the words' direction): fork-join fewest (sf
/// over fj: hw 1.30, lcs 1.15, sw 1.00: the paper's sw ties), general futures many more than
/// structured ones (gf over sf: 1.86 to 2.95); and Theorem 4.11 on the same runs.
fn claims() -> Vec<Claim> {
    let ratio = |a: Variant, b: Variant, id: &'static str| {
        let mut paper = Vec::new();
        let mut cases = Vec::new();
        for bench in BENCHES {
            let x = paper_number(CSV.text, bench, a.name()).expect("the paper's count");
            let y = paper_number(CSV.text, bench, b.name()).expect("the paper's count");
            paper.push(format!("{bench} {}", number(x / y)));
            cases.push((
                case(bench, deviations(bench, a).over(deviations(bench, b))),
                Band::more(x / y),
            ));
        }
        Claim::new(
            id,
            "structured futures generate many fewer deviations than general futures, but \
             fork-join parallelism generates fewer still",
            format!("{a}/{b} deviations at P = 16: {}", paper.join(", ")),
            Check::Each { cases, unit: "x" },
        )
    };
    let per_steal = |bench: &str, variant: Variant| {
        let rt = prows_runtime(variant);
        case(
            format!("{bench} {variant}"),
            counter(rt, bench, variant, P, "deviations").over(counter(
                rt, bench, variant, P, "steals",
            )),
        )
    };
    vec![
        ratio(Variant::Sf, Variant::Fj, "fork-join-fewest"),
        ratio(Variant::Gf, Variant::Sf, "general-futures-many-more"),
        Claim::new(
            "deviations-per-steal",
            THEOREM_4_11,
            "O(n) deviations for n steals; at most 3 per steal by the proof's three kinds of \
             trace start (the paper prints no steals)",
            Check::Within {
                cases: BENCHES
                    .iter()
                    .flat_map(|b| [Variant::Sf, Variant::Gf].map(|v| per_steal(b, v)))
                    .collect(),
                band: Band::at_most(DEVIATIONS_PER_STEAL),
                unit: "deviations per steal",
            },
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nine_paper_rows_and_their_counts() {
        let f = figure();
        let paper: Vec<String> = f
            .rows
            .iter()
            .filter(|r| r.paper.is_some())
            .map(|r| format!("{}-{}@{}", r.workload, r.variant, r.runtime))
            .collect();
        assert_eq!(paper.len(), 9);
        assert_eq!(paper[..3], ["hw-fj@abp", "hw-sf@prows", "hw-gf@prows"]);
        let hw_gf = f
            .rows
            .iter()
            .find(|r| r.workload == "hw" && r.variant == Variant::Gf);
        assert_eq!(
            hw_gf.unwrap().paper.as_ref().unwrap().value(16),
            Some(24904.0)
        );
        let artifact = f
            .rows
            .iter()
            .filter(|r| r.runtime == "prows/placement=artifact");
        assert_eq!(artifact.count(), 6);
        super::super::suites::assert_claims(
            &f,
            &[
                "fork-join-fewest",
                "general-futures-many-more",
                "deviations-per-steal",
            ],
        );
        assert!(f.claims[1].paper.contains("hw 1.86"), "{}", f.claims[1].paper);
        // sw's fj = sf is tested: its band is closed around the paper's 1.00.
        let Check::Each { cases, .. } = &f.claims[0].check else {
            panic!("a band per case");
        };
        assert_eq!(cases[2].0.label, "sw");
        assert_eq!(cases[2].1, Band::within(1.0, 1.25));
        assert_eq!(cases[1].1, Band::within(1.0, 4231.0 / 3672.0 * 1.25));
        let simulated = f.rows.iter().filter(|r| r.runtime.sim.is_some());
        assert_eq!(simulated.count(), 15);
        assert!(!f.metric.needs_cores());
        assert_eq!(crate::plan::default_workers(&f), [16]);
    }
}
