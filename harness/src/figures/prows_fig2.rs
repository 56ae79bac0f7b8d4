//! ProWS (PPoPP'19) Figure 2: execution times of the eight benchmarks, fork-join and pipeline
//! versions on Cilk Plus (our `abp`) against future versions on Cilk-F (our `prows`), with
//! speedups over the serial elision T_s.

use super::metric::Time;
use super::{Figure, ReferenceCsv, SpeedupBase, prows_runtime, prows_time_figure, reference_csv};
use crate::claims::{Band, Check, Claim, case, time};
use crate::claims::quantity::number;
use stealbench_workloads::Variant;

/// The figure's id.
pub(crate) const ID: &str = "prows-fig2";
/// The figure's title.
pub(crate) const TITLE: &str =
    "ProWS (PPoPP'19) Figure 2: benchmark times, Cilk Plus (fj, lp) vs Cilk-F (sf, gf)";

/// The reference numbers, embedded so the binary works from any directory.
const CSV: ReferenceCsv = reference_csv!("prows_fig2.csv");

/// The figure with its 19 paper rows and the baselines.
pub(crate) fn figure() -> Figure {
    prows_time_figure(
        ID,
        TITLE,
        "Execution times in seconds of the benchmarks running with Cilk Plus (fj and lp) \
         and Cilk-F (sf and gf); T_s is the serial elision, T_P the time on P cores, \
         in parentheses the speedup over T_s. Paper machine: Intel Xeon E5-2665, \
         2 x 8 cores, 10 runs per point. Here the fj and lp rows run on `abp` (for \
         Cilk Plus) and the sf and gf rows on `prows` (for Cilk-F). bst is parallel in the \
         top 5 levels of its merge, and its gf splits make futures only in their first \
         5 steps, as in the authors' artifact. Our T_s is each workload's kernel, the serial \
         elision of its fj (or lp) code as a plain function, no runtime.",
        CSV,
        &Time(SpeedupBase::Serial),
    )
    .with_claims(vec![
        comparable("comparable-t1", 1),
        comparable("comparable-t2", 2),
        comparable("comparable-t16", 16),
    ])
}

/// The paper's claim that Cilk-F keeps up with Cilk Plus, at `p`: each future version's time
/// (sf, gf on `prows`) over its benchmark's fork-join or pipeline version's (fj, lp on `abp`),
/// each case within 10 % of its own ratio in Figure 2 ([`Band::same`]: "comparable"; 1.00 for
/// mm, smm, sort and hw, 1.15 for sw sf at P = 1, 1.36 for lcs gf at P = 16). A case whose
/// ratio the paper does not print at `p` is left out.
fn comparable(id: &'static str, p: usize) -> Claim {
    let r = CSV.parse();
    let variant = |rec: &[String]| -> Variant {
        r.field(rec, "variant")
            .and_then(|v| v.parse().ok())
            .expect("the reference names known variants")
    };
    let mut cases = Vec::new();
    let mut paper = Vec::new();
    for rec in &r.records {
        let (bench, v) = (r.field(rec, "bench").expect("bench"), variant(rec));
        if matches!(v, Variant::Fj | Variant::Lp) {
            continue;
        }
        let base = r
            .records
            .iter()
            .find(|b| {
                r.field(b, "bench") == Some(bench) && matches!(variant(b), Variant::Fj | Variant::Lp)
            })
            .expect("every benchmark has a fork-join or pipeline version");
        let bv = variant(base);
        let (ours, theirs) = (r.paper_values(rec), r.paper_values(base));
        let (Some(a), Some(b)) = (ours.value(p), theirs.value(p)) else {
            continue;
        };
        let label = format!("{bench} {v}/{bv}");
        paper.push(format!("{label} {}", number(a / b)));
        cases.push((
            case(
                label,
                time(prows_runtime(v), bench, v, p).over(time(prows_runtime(bv), bench, bv, p)),
            ),
            Band::same(a / b),
        ));
    }
    Claim::new(
        id,
        "the performance of Cilk-F is comparable to the performance of Cilk Plus in all our \
         benchmarks ... For benchmarks where the use of futures provides additional benefit, \
         Cilk-F can obtain better speedup",
        format!(
            "T_{p} of a future version over its fork-join or pipeline version in Figure 2: {}",
            paper.join(", ")
        ),
        Check::Each { cases, unit: "x" },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::Row;
    use stealbench_workloads::Variant;

    #[test]
    fn has_the_19_paper_rows_in_order() {
        let f = figure();
        let paper: Vec<&Row> = f.rows.iter().filter(|r| r.paper.is_some()).collect();
        assert_eq!(paper.len(), 19);
        assert_eq!(
            (paper[0].bench.as_str(), paper[0].variant),
            ("mm", Variant::Fj)
        );
        assert_eq!(paper[0].runtime, "abp");
        assert_eq!(paper[1].runtime, "prows");
        let mm = paper[0].paper.as_ref().unwrap();
        assert_eq!(mm.ts, Some(87.61));
        assert_eq!(mm.value(2), Some(44.74));
        assert_eq!(mm.value(16), Some(5.59));
        let ferret_lp = paper[17];
        assert_eq!(
            (ferret_lp.bench.as_str(), ferret_lp.runtime.to_string().as_str()),
            ("ferret", "abp")
        );
        assert!(
            f.rows
                .iter()
                .any(|r| r.paper.is_none() && r.runtime == "rayon")
        );
    }

    #[test]
    fn its_claims_compare_every_future_version_with_its_fork_join_one() {
        let f = figure();
        super::super::suites::assert_claims(
            &f,
            &["comparable-t1", "comparable-t2", "comparable-t16"],
        );
        let Check::Each { cases, .. } = &f.claims[0].check else {
            panic!("a band per case");
        };
        // 11 future versions: mm, smm, sort sf; hw sf, gf; lcs sf, gf; sw sf, gf; bst gf;
        // ferret gf (over its lp), each within 10 % of its own ratio in the paper.
        assert_eq!(cases.len(), 11);
        assert_eq!(cases[10].0.label, "ferret gf/lp");
        assert_eq!(cases[0].1, Band::same(88.88 / 89.49));
        assert_eq!(cases[7].0.label, "sw sf/fj");
        assert_eq!(cases[7].1, Band::same(14.47 / 12.58));
        assert!(cases.iter().all(|(_, b)| b.lo.is_some() && b.hi.is_some()));
        assert!(f.claims[0].paper.contains("mm sf/fj 0.993"), "{}", f.claims[0].paper);
    }
}
