//! ProWS (PPoPP'19) Figure 3: the overhead of futures on fib without base-case coarsening:
//! spawn/sync on Cilk Plus (our `abp`), structured futures on Cilk-F (our `prows`), and
//! structured futures without the stack switch per fut-create (`prows/futures=nostack`);
//! speedups are scalability over T_1.

use super::metric::Time;
use super::{Figure, ReferenceCsv, SpeedupBase, prows_time_figure, reference_csv};
use crate::claims::quantity::number;
use crate::claims::{Band, Case, Check, Claim, Q, case, time};
use stealbench_workloads::Variant;

/// The three paper rows' arms and variants: fib-fj, fib-sf, fib-sf without a stack.
const ROWS: [(&str, Variant); 3] = [
    ("abp", Variant::Fj),
    ("prows", Variant::Sf),
    ("prows/futures=nostack", Variant::Sf),
];

/// T_1 over T_`p` of a paper row: its scalability.
fn scalability(rt: &'static str, v: Variant, p: usize) -> Q {
    time(rt, "fib", v, 1).over(time(rt, "fib", v, p))
}

/// The paper's T_1 of a row of its reference (`fib-fj`, `fib-sf-nostack`).
fn paper_t1(bench: &str) -> f64 {
    let r = CSV.parse();
    let rec = r
        .records
        .iter()
        .find(|rec| r.field(rec, "bench") == Some(bench))
        .unwrap_or_else(|| panic!("{}: no {bench}", CSV.path));
    r.paper_values(rec)
        .value(1)
        .unwrap_or_else(|| panic!("{}: {bench} has no T1", CSV.path))
}

/// fib-sf's T_1, not legible in the paper: its printed T_2 times its printed scalability,
/// 17.09 x 2.01.
const SF_T1_DERIVED: f64 = 17.09 * 2.01;

/// The claims of the figure: what a future and its stack cost against a join (each around the
/// paper's ratio, not below 1: the words say "costs more"), and how fib scales on each
/// (around each row's printed scalability).
fn claims() -> Vec<Claim> {
    let t1 = |rt, v| time(rt, "fib", v, 1);
    let (fj, nostack) = (paper_t1("fib-fj"), paper_t1("fib-sf-nostack"));
    // The scalability each row prints in parentheses, at P = 2 and 16 (fib-sf's T_16 is not
    // legible: no case there).
    let scales = |id, p: usize, printed: [Option<f64>; 3]| {
        let cases: Vec<(Case, Band)> = ROWS
            .iter()
            .zip(printed)
            .filter_map(|(&(rt, v), x)| {
                Some((
                    case(format!("{rt} {v}"), scalability(rt, v, p)),
                    Band::ratio(x?),
                ))
            })
            .collect();
        let paper = cases
            .iter()
            .zip(printed.iter().flatten())
            .map(|((c, _), x)| format!("{} {x}x", c.label))
            .collect::<Vec<_>>()
            .join(", ");
        Claim::new(
            id,
            "the numbers in parenthesis are the scalability over T_1 (Figure 3's caption; its \
             columns show each version scaling about linearly)",
            format!("T_1/T_{p} as printed: {paper}"),
            Check::Each { cases, unit: "x" },
        )
    };
    vec![
        Claim::new(
            "stack-switch-costs",
            "By comparing the numbers between fib-sf and -stack, we see a big drop in T_1",
            format!(
                "T_1 of fib-sf over -stack: {SF_T1_DERIVED:.2} / {nostack} = {}, fib-sf's T_1 \
                 derived from its printed T_2 17.09 (2.01x), its T_1 not legible",
                number(SF_T1_DERIVED / nostack)
            ),
            Check::Within {
                cases: vec![case(
                    "",
                    t1("prows", Variant::Sf).over(t1("prows/futures=nostack", Variant::Sf)),
                )],
                band: Band::more(SF_T1_DERIVED / nostack),
                unit: "x",
            },
        ),
        Claim::new(
            "futures-cost-more",
            "future operations do incur higher scheduling overhead compared to pure fork-join \
             parallelism",
            format!(
                "T_1 of -stack over fib-fj: {nostack} / {fj} = {} (fib-sf, from its derived \
                 T_1: {})",
                number(nostack / fj),
                number(SF_T1_DERIVED / fj)
            ),
            Check::Within {
                cases: vec![case(
                    "",
                    t1("prows/futures=nostack", Variant::Sf).over(t1("abp", Variant::Fj)),
                )],
                band: Band::more(nostack / fj),
                unit: "x",
            },
        ),
        scales("scales-p2", 2, [Some(2.04), Some(2.01), Some(1.99)]),
        scales("scales-p16", 16, [Some(16.29), None, Some(15.41)]),
    ]
}

/// The figure's id.
pub(crate) const ID: &str = "prows-fig3";
/// The figure's title.
pub(crate) const TITLE: &str = "ProWS (PPoPP'19) Figure 3: fib(42) with spawn/sync, structured futures, futures without a stack switch";

/// The reference numbers, embedded so the binary works from any directory.
const CSV: ReferenceCsv = reference_csv!("prows_fig3.csv");

/// The figure with its three paper rows (the paper's `fib-sf-nostack`: workload `fib`, variant
/// `sf` on `prows/futures=nostack`) and the baselines, over [`super::TIME_ROUNDS`] rounds as every time figure.
pub(crate) fn figure() -> Figure {
    prows_time_figure(
            ID,
            TITLE,
            "Execution times in seconds of fib(42): fib-fj on Cilk Plus, fib-sf on Cilk-F, \
             and fib-sf without the switch to a new stack on every fut-create (\"-stack\"); \
             in parentheses the scalability over T_1. T_s (serial elision) = 2.46 s. \
             Paper machine: Intel Xeon E5-2665, 2 x 8 cores. Here fib-fj runs on `abp` (for \
             Cilk Plus), fib-sf on `prows` and fib-sf-nostack on `prows/futures=nostack` (for \
             Cilk-F); our T_s is fib's kernel, the plain recursion (the serial elision), no \
             runtime.",
            CSV,
        &Time(SpeedupBase::OneWorker),
    )
    .with_claims(claims())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Row;

    #[test]
    fn has_the_three_fib_rows() {
        let f = figure();
        let paper: Vec<&Row> = f.rows.iter().filter(|r| r.paper.is_some()).collect();
        let names: Vec<String> = paper
            .iter()
            .map(|r| format!("{}-{}@{}", r.workload, r.variant, r.runtime))
            .collect();
        assert_eq!(
            names,
            ["fib-fj@abp", "fib-sf@prows", "fib-sf@prows/futures=nostack"]
        );
        let sf = paper[1].paper.as_ref().unwrap();
        assert_eq!(sf.ts, Some(2.46));
        assert_eq!(
            sf.value(1),
            None,
            "T1 of fib-sf is not legible in the paper"
        );
        assert_eq!(sf.value(2), Some(17.09));
        assert_eq!(f.metric.describe(), SpeedupBase::OneWorker.describe());
        // fib offers fj and sf on both front-ends: every baseline arm has both, or fj alone
        // where it is fork-join only.
        let baselines: Vec<String> = f
            .rows
            .iter()
            .filter(|r| r.paper.is_none())
            .map(|r| format!("{}-{}", r.variant, r.runtime))
            .collect();
        super::super::suites::assert_claims(
            &f,
            &["stack-switch-costs", "futures-cost-more", "scales-p2", "scales-p16"],
        );
        // Every band is closed, around the paper's own number.
        let bands: Vec<String> = f.claims.iter().map(|c| c.check.band()).collect();
        assert_eq!(bands[1], "[1, 1.52] x", "{}", f.claims[1].paper);
        assert!(f.claims[1].paper.contains("26.78 / 22.05 = 1.21"));
        assert_eq!(bands[0], "[1, 1.60] x");
        let Check::Each { cases, .. } = &f.claims[3].check else {
            panic!("a band per case");
        };
        assert_eq!(cases.len(), 2, "fib-sf's T_16 is not legible");
        assert_eq!(cases[1].1, Band::ratio(15.41));
        let want: Vec<String> =
            crate::figures::tests::baseline_rows(&[Variant::Fj, Variant::Sf]).collect();
        assert_eq!(baselines, want);
    }
}
