//! ProWS (PPoPP'19) Figure 2: execution times of the eight benchmarks, fork-join and pipeline
//! versions on Cilk Plus (our `abp`) against future versions on Cilk-F (our `prows`), with
//! speedups over the serial elision T_s.

use super::metric::Time;
use super::{Figure, ReferenceCsv, SpeedupBase, prows_time_figure, reference_csv};

/// The figure's id.
pub const ID: &str = "prows-fig2";
/// The figure's title.
pub const TITLE: &str =
    "ProWS (PPoPP'19) Figure 2: benchmark times, Cilk Plus (fj, lp) vs Cilk-F (sf, gf)";

/// The reference numbers, embedded so the binary works from any directory.
const CSV: ReferenceCsv = reference_csv!("prows_fig2.csv");

/// The figure with its 19 paper rows and the baselines.
pub fn figure() -> Figure {
    prows_time_figure(
        ID,
        TITLE,
        "Execution times in seconds of the benchmarks running with Cilk Plus (fj and lp) \
         and Cilk-F (sf and gf); T_s is the serial elision, T_P the time on P cores, \
         in parentheses the speedup over T_s. Paper machine: Intel Xeon E5-2665, \
         2 x 8 cores, 10 runs per point. Here the fj and lp rows run on `abp` (for \
         Cilk Plus) and the sf and gf rows on `prows` (for Cilk-F). bst is parallel in the \
         top 5 levels of its merge, and its gf splits make futures only in their first \
         5 steps, as in the authors' artifact.",
        CSV,
        &Time(SpeedupBase::Serial),
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
}
