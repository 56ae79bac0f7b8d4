//! Spoonhower et al. (SPAA'09) Figure 6: steals and deviations against the number of
//! processors for Halstead's quicksort (`hqsort`), under work stealing with futures (the
//! paper's `ws` scheduler: our `abp`) and under proactive work stealing (`prows`, and its
//! artifact placement `prows-artifact`), to show that deviations outgrow steals under
//! parsimonious stealing.
//!
//! The paper plots its numbers without printing them, so there is nothing to set beside ours.
//! The counts are measured with up to 16 workers, oversubscribed past this machine's cores (a
//! count, not a time).

use super::Figure;
use super::metric::{Count, Reduce};
use crate::grid::Row;
use stealbench_workloads::Variant;

/// The figure's id.
pub const ID: &str = "spoonhower-fig6";
/// The figure's title.
pub const TITLE: &str =
    "Spoonhower et al. (SPAA'09) Figure 6: steals and deviations of Halstead's quicksort";

/// The runtimes, in the order of the rows.
const RUNTIMES: [&str; 3] = ["abp", "prows", "prows-artifact"];

/// The figure: hqsort (gf) on each runtime.
pub fn figure() -> Figure {
    let rows = RUNTIMES
        .iter()
        .map(|rt| Row {
            bench: "quicksort".to_string(),
            workload: "hqsort".to_string(),
            variant: Variant::Gf,
            runtime: rt.to_string(),
            paper: None,
        })
        .collect();
    Figure {
        id: ID,
        title: TITLE,
        caption: "Empirical measurements for quicksort: the number of steals and of deviations \
                  against the number of processors under the paper's work-stealing scheduler \
                  (`ws`, in its parallel ML). Halstead's quicksort streams its partitions and \
                  passes one recursive call's result to the other as a future: span O(n), \
                  O(n log n) futures, each touched at least once. Here `ws` is `abp`; `prows` \
                  and `prows-artifact` show proactive work stealing on the same program.",
        reference_path: "",
        reference: Default::default(),
        paper_workers: &[1, 2, 4, 8, 16],
        metric: &Count {
            stats: &["steals", "deviations"],
            reduce: Reduce::Median,
        },
        reps: None,
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hqsort_on_three_runtimes_up_to_16() {
        let f = figure();
        let rows: Vec<String> = f.rows.iter().map(|r| r.runtime.clone()).collect();
        assert_eq!(rows, RUNTIMES);
        assert!(f.rows.iter().all(|r| r.workload == "hqsort" && r.paper.is_none()));
        assert_eq!(f.metric.lines(), ["steals", "deviations"]);
        assert_eq!(crate::reproduce::default_workers(&f), [1, 2, 4, 8, 16]);
    }
}
