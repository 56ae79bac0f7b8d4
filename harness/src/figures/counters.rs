//! [`PaperCounts`]: runtime counters of a point, as [`Count`] shows them, with the paper's
//! number of every counter beside ours where the paper gives one for the row's runtime (Fibril's
//! Table 2: steals, unmaps and page faults for Fibril, page faults only for Cilk Plus and TBB).

use super::metric::{Context, Count, Metric};
use super::paper_number;
use crate::grid::Row;

/// [`Count`]'s counters, each with the paper's value from a reference CSV (one record per
/// benchmark) where the row's runtime has a column for it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PaperCounts {
    /// Our counters and how the repetitions reduce.
    pub count: Count,
    /// The reference CSV.
    pub reference: &'static str,
    /// Per runtime arm, the reference column of each counter of `count.stats` (`""`: none).
    pub columns: &'static [(&'static str, &'static [&'static str])],
    /// What a reference number is worth in counts (1000: the paper prints thousands).
    pub scale: f64,
    /// The P of the paper's numbers.
    pub paper_p: usize,
}

impl PaperCounts {
    /// The paper's count `i` (of `count.stats`) for `row`.
    pub(crate) fn paper_value(&self, row: &Row, i: usize) -> Option<f64> {
        let (_, cols) = self.columns.iter().find(|(rt, _)| row.runtime == *rt)?;
        let col = cols.get(i).filter(|c| !c.is_empty())?;
        paper_number(self.reference, &row.bench, col).map(|v| v * self.scale)
    }
}

/// A count as the paper prints it: thousands, `K`.
fn thousands(v: f64) -> String {
    format!("{:.0}K", v / 1000.0)
}

impl Metric for PaperCounts {
    fn lead(&self, ctx: &Context<'_>, row: &Row) -> Vec<(String, String)> {
        self.count.lead(ctx, row)
    }

    fn column(&self, p: usize) -> String {
        self.count.column(p)
    }

    fn cell(&self, ctx: &Context<'_>, row: &Row, p: usize) -> String {
        self.count.cell(ctx, row, p)
    }

    fn paper_cell(&self, row: &Row, p: usize) -> String {
        if p != self.paper_p {
            return "[paper —]".to_string();
        }
        let parts: Vec<String> = (0..self.count.stats.len())
            .map(|i| self.paper_value(row, i).map_or("—".to_string(), thousands))
            .collect();
        format!("[paper {}]", parts.join(" / "))
    }

    fn lines(&self) -> &'static [&'static str] {
        self.count.lines()
    }

    fn plot(&self, ctx: &Context<'_>, row: &Row, p: usize, line: usize) -> Option<f64> {
        self.count.plot(ctx, row, p, line)
    }

    fn plot_paper(&self, row: &Row, p: usize, line: usize) -> Option<f64> {
        (p == self.paper_p)
            .then(|| self.paper_value(row, line))
            .flatten()
    }

    fn y_label(&self) -> &'static str {
        self.count.y_label()
    }

    fn ideal_line(&self) -> bool {
        false
    }

    fn describe(&self) -> String {
        self.count.describe()
    }

    fn note_label(&self) -> &'static str {
        self.count.note_label()
    }

    fn cell_legend(&self) -> &'static str {
        "Each cell: our counts, separated by ` / ` in the order of the columns' names [the \
         paper's, in thousands (K) as it prints them; `—` where the paper gives none for that \
         runtime]. `n/a` = the runtime does not count it. Counts grow with the input: at other \
         sizes than the paper's compare their ratios (unmaps per steal, faults against the \
         other runtimes), not the counts."
    }

    fn plot_name(&self) -> &'static str {
        self.count.plot_name()
    }

    fn needs_cores(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::metric::Reduce;
    use crate::testutil::{fib_row, ok_point};
    use stealbench_workloads::Variant;

    const METRIC: PaperCounts = PaperCounts {
        count: Count {
            stats: &["steals", "unmaps", "process_minor_faults"],
            reduce: Reduce::Median,
        },
        reference: "bench,s,u,f,g\nfib,20,12,6,9\n",
        columns: &[("fibril", &["s", "u", "f"]), ("tbb", &["", "", "g"])],
        scale: 1000.0,
        paper_p: 72,
    };

    #[test]
    fn ours_are_counts_and_the_papers_are_per_runtime() {
        let mut p = ok_point("fibril", Variant::Fj, 72, 1.0);
        p.counters = vec![
            ("steals".into(), vec![300, 100, 200]),
            ("unmaps".into(), vec![50, 70, 60]),
            ("process_minor_faults".into(), vec![1000, 1200, 1100]),
        ];
        let s = [p];
        let ctx = Context {
            summaries: &crate::results::Summaries::from(s.to_vec()),
            cpus: 2,
        };
        assert_eq!(
            METRIC.cell(&ctx, &fib_row("fibril"), 72),
            "200 / 60 / 1100 (oversubscribed)"
        );
        assert_eq!(
            METRIC.paper_cell(&fib_row("fibril"), 72),
            "[paper 20K / 12K / 6K]"
        );
        assert_eq!(METRIC.paper_cell(&fib_row("tbb"), 72), "[paper — / — / 9K]");
        assert_eq!(METRIC.paper_cell(&fib_row("abp"), 72), "[paper — / — / —]");
        assert_eq!(METRIC.paper_cell(&fib_row("fibril"), 2), "[paper —]");
        assert_eq!(METRIC.plot_paper(&fib_row("fibril"), 72, 1), Some(12000.0));
        assert_eq!(METRIC.plot_paper(&fib_row("tbb"), 72, 0), None);
        assert_eq!(METRIC.plot(&ctx, &fib_row("fibril"), 72, 2), Some(1100.0));
    }
}
