//! [`Relative`]: a row's median time, its speedup over the serial elision, and how many times
//! faster it is than each of a few other runtimes on the same workload at the same P (Fibril's
//! "Fibril outperforms Cilk Plus by 1.9x": T_P(Cilk Plus) / T_P(Fibril)). The paper's ratios
//! sit beside ours at the P the paper gives them for.
//!
//! Only points with a core per worker have a speedup or a ratio: an oversubscribed point shows
//! its time, marked, and nothing else. [`time_cell`] writes such a cell from its parts, for
//! the metrics that add parts of their own (`steal_scaling`: heavy fences per steal).

use super::metric::{
    Context, Metric, format_speedup, format_time, key, mark_oversubscribed, unfinished,
};
use super::paper_number;
use crate::grid::{Row, Status};
use crate::results;
use crate::spec::PointSpec;
use crate::stats;

/// Time, speedup T_s / T_P and the ratios T_P(other) / T_P(row) for each runtime of `against`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Relative {
    /// The runtimes a row is compared with (`abp`, `tbb`).
    pub against: &'static [&'static str],
    /// The paper's names of those runtimes (`Cilk Plus`, `TBB`).
    pub paper_names: &'static [&'static str],
    /// The reference CSV with the paper's ratios, one record per benchmark (column `bench`).
    pub reference: &'static str,
    /// Per runtime of `against`, the reference column of the paper's ratio.
    pub paper_columns: &'static [&'static str],
    /// The P of the paper's ratios.
    pub paper_p: usize,
    /// Whether the plot draws the ideal speedup.
    pub ideal: bool,
    /// The plot's y axis.
    pub y_label: &'static str,
}

/// A speedup or ratio: two decimals, or two significant digits below 0.1 (`0.0042x`: tokio's
/// fib is hundreds of times slower than the serial code).
pub(crate) fn format_ratio(x: f64) -> String {
    if x >= 0.1 || x <= 0.0 || !x.is_finite() {
        format_speedup(x)
    } else {
        let decimals = (1 - x.log10().floor() as i32).clamp(2, 9) as usize;
        format!("{x:.decimals$}x")
    }
}

impl Relative {
    /// T_s / T_P of `row` (none when oversubscribed or simulated).
    pub(crate) fn speedup(&self, ctx: &Context<'_>, row: &Row, p: usize) -> Option<f64> {
        if ctx.no_speedup(row, p) {
            return None;
        }
        stats::speedup(
            results::ts_of(ctx.summaries, &row.workload)
                .and_then(|s| s.summary)
                .map(|s| s.median),
            results::median_of(ctx.summaries, &key(row, p)),
        )
    }

    /// T_P(`other`) / T_P(`row`), same workload, variant and P: how many times faster the row
    /// is than `other` (none when oversubscribed, simulated, or either is missing).
    pub(crate) fn ratio(&self, ctx: &Context<'_>, row: &Row, p: usize, other: &str) -> Option<f64> {
        if ctx.no_speedup(row, p) {
            return None;
        }
        // The other arm as the run recorded it: looked up by its spelling, not parsed.
        let theirs = PointSpec {
            runtime: ctx.summaries.arm(other)?,
            ..key(row, p)
        };
        stats::speedup(
            results::median_of(ctx.summaries, &theirs),
            results::median_of(ctx.summaries, &key(row, p)),
        )
    }

    /// What a cell says after the time, in parentheses: T_s / T_P, then `<ratio> vs <other>`
    /// for each runtime of `against` but the row's own (those measured; none when
    /// oversubscribed).
    pub(crate) fn parts(&self, ctx: &Context<'_>, row: &Row, p: usize) -> Vec<String> {
        let mut parts: Vec<String> = Vec::new();
        if let Some(sp) = self.speedup(ctx, row, p) {
            parts.push(format_ratio(sp));
        }
        for other in self.against.iter().filter(|o| row.runtime != **o) {
            if let Some(r) = self.ratio(ctx, row, p, other) {
                parts.push(format!("{} vs {other}", format_ratio(r)));
            }
        }
        parts
    }

    /// The paper's ratio of `bench` against the `i`-th runtime of `against`.
    pub(crate) fn paper_ratio(&self, bench: &str, i: usize) -> Option<f64> {
        paper_number(self.reference, bench, self.paper_columns.get(i)?)
    }
}

/// The cell of `row` at `p` when it finished ok: its median time, then `parts` in parentheses
/// (if any), marked when oversubscribed; otherwise its status, or `—` if not measured.
pub(crate) fn time_cell(ctx: &Context<'_>, row: &Row, p: usize, parts: Vec<String>) -> String {
    let s = ctx.point(row, p);
    let c = match s.map(|s| (s.status, s.summary)) {
        Some((Status::Ok, Some(x))) if parts.is_empty() => format_time(x.median),
        Some((Status::Ok, Some(x))) => {
            format!("{} ({})", format_time(x.median), parts.join("; "))
        }
        _ => unfinished(s),
    };
    mark_oversubscribed(ctx, row, p, c)
}

impl Metric for Relative {
    fn lead(&self, ctx: &Context<'_>, row: &Row) -> Vec<(String, String)> {
        let ts = results::ts_of(ctx.summaries, &row.workload);
        let cell = match ts.map(|s| (s.status, s.summary)) {
            Some((Status::Ok, Some(x))) => format_time(x.median),
            _ => unfinished(ts),
        };
        vec![("Ts".to_string(), cell)]
    }

    fn column(&self, p: usize) -> String {
        format!("T{p}")
    }

    fn cell(&self, ctx: &Context<'_>, row: &Row, p: usize) -> String {
        time_cell(ctx, row, p, self.parts(ctx, row, p))
    }

    fn paper_cell(&self, row: &Row, p: usize) -> String {
        if p != self.paper_p {
            return "[paper —]".to_string();
        }
        let parts: Vec<String> = self
            .paper_names
            .iter()
            .enumerate()
            .map(|(i, name)| match self.paper_ratio(&row.bench, i) {
                Some(r) => format!("{} vs {name}", format_speedup(r)),
                None => format!("— vs {name}"),
            })
            .collect();
        format!("[paper {}]", parts.join("; "))
    }

    fn lines(&self) -> &'static [&'static str] {
        &["Ts/TP"]
    }

    fn plot(&self, ctx: &Context<'_>, row: &Row, p: usize, _: usize) -> Option<f64> {
        self.speedup(ctx, row, p)
    }

    /// The paper prints no speedups for these figures (they are plots): nothing to draw.
    fn plot_paper(&self, _: &Row, _: usize, _: usize) -> Option<f64> {
        None
    }

    fn y_label(&self) -> &'static str {
        self.y_label
    }

    fn ideal_line(&self) -> bool {
        self.ideal
    }

    fn describe(&self) -> String {
        let quote = if self.paper_names.is_empty() {
            ""
        } else {
            "; the paper's \"Fibril outperforms Cilk Plus by 1.9x\""
        };
        format!(
            "in parentheses: T_s / T_P (speedup over T_s, the serial code at P=1, no runtime and \
             no trait), then T_P({0}) / T_P(row) for {0}: how many times faster the row is than each \
             at the same P (medians{quote}); none for an oversubscribed point",
            self.against.join(", ")
        )
    }

    fn note_label(&self) -> &'static str {
        "Speedup and ratios"
    }

    fn cell_legend(&self) -> &'static str {
        "Each cell: our median time in seconds (our speedup T_s / T_P; how many times faster \
         than each compared runtime at the same P) [the paper's \"x times faster\" of Fibril \
         against Cilk Plus and TBB, from its text, at the P it gives them for]. `—` = not \
         measured or not given. The paper prints its Figures 3-4 as plots: its times and \
         speedups are not legible, so only its stated ratios are beside ours."
    }

    fn plot_name(&self) -> &'static str {
        "speedup"
    }

    fn needs_cores(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{fib_row, ok_point};
    use stealbench_workloads::Variant;

    const CSV: &str = "bench,vs_a,vs_b\nfib,1.9,6.0\n";
    const METRIC: Relative = Relative {
        against: &["abp", "tbb"],
        paper_names: &["Cilk Plus", "TBB"],
        reference: CSV,
        paper_columns: &["vs_a", "vs_b"],
        paper_p: 1,
        ideal: false,
        y_label: "Ts/T1",
    };

    #[test]
    fn ratios_are_the_others_time_over_the_rows() {
        let s = [
            ok_point("serial/front=kernel", Variant::Fj, 1, 1.0),
            ok_point("fibril", Variant::Fj, 1, 2.0),
            ok_point("abp", Variant::Fj, 1, 4.0),
            ok_point("tbb", Variant::Fj, 1, 12.0),
            ok_point("fibril", Variant::Fj, 2, 1.0),
            ok_point("abp", Variant::Fj, 2, 3.0),
            ok_point("fibril", Variant::Fj, 4, 0.5),
            ok_point("abp", Variant::Fj, 4, 1.0),
        ];
        let ctx = Context {
            summaries: &crate::results::Summaries::from(s.to_vec()),
            cpus: 2,
        };
        let f = fib_row("fibril");
        assert_eq!(METRIC.ratio(&ctx, &f, 1, "abp"), Some(2.0));
        assert_eq!(METRIC.ratio(&ctx, &f, 1, "tbb"), Some(6.0));
        assert_eq!(METRIC.speedup(&ctx, &f, 1), Some(0.5));
        assert_eq!(
            METRIC.cell(&ctx, &f, 1),
            "2.000 (0.50x; 2.00x vs abp; 6.00x vs tbb)"
        );
        // tbb was not measured at P = 2: no ratio against it.
        assert_eq!(METRIC.cell(&ctx, &f, 2), "1.000 (1.00x; 3.00x vs abp)");
        // abp is not compared with itself.
        assert_eq!(
            METRIC.cell(&ctx, &fib_row("abp"), 1),
            "4.000 (0.25x; 3.00x vs tbb)"
        );
        // P = 4 > 2 CPUs: the time, marked, no speedup or ratio.
        assert_eq!(METRIC.ratio(&ctx, &f, 4, "abp"), None);
        assert_eq!(METRIC.cell(&ctx, &f, 4), "0.5000 (oversubscribed)");
        assert_eq!(METRIC.plot(&ctx, &f, 4, 0), None);
        assert_eq!(METRIC.plot(&ctx, &f, 2, 0), Some(1.0));
        assert_eq!(METRIC.cell(&ctx, &f, 8), "—");
        assert_eq!(
            METRIC.lead(&ctx, &f),
            [("Ts".to_string(), "1.000".to_string())]
        );
    }

    #[test]
    fn small_ratios_keep_two_significant_digits() {
        assert_eq!(format_ratio(1.956), "1.96x");
        assert_eq!(format_ratio(0.25), "0.25x");
        assert_eq!(format_ratio(0.0423), "0.042x");
        assert_eq!(format_ratio(0.004256), "0.0043x");
    }

    #[test]
    fn the_papers_ratios_are_read_by_benchmark() {
        assert_eq!(
            METRIC.paper_cell(&fib_row("fibril"), 1),
            "[paper 1.90x vs Cilk Plus; 6.00x vs TBB]"
        );
        assert_eq!(METRIC.paper_cell(&fib_row("fibril"), 72), "[paper —]");
        let mut lu = fib_row("fibril");
        lu.bench = "lu".into();
        assert_eq!(
            METRIC.paper_cell(&lu, 1),
            "[paper — vs Cilk Plus; — vs TBB]"
        );
    }
}
