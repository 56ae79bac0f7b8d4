//! The figure's table in the paper's layout (bench, variant, runtime, the metric's lead
//! columns, one column per P, status), each cell ours with the paper's value beside it, for the
//! terminal and for Markdown. What a cell holds is the figure's [`Metric`](crate::figures::metric::Metric)'s to say.

use crate::figures::Figure;
use crate::figures::metric::{Context, key};
use crate::grid::{Availability, Grid, Row, Status};
use crate::results::PointSummary;

pub(crate) use crate::figures::metric::format_time;

/// A rendered table: header and cells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Table {
    /// Column titles.
    pub header: Vec<String>,
    /// Rows of cells.
    pub rows: Vec<Vec<String>>,
}

/// Every worker count a column is shown for: the measured ones and the paper's.
pub(crate) fn columns(fig: &Figure, grid: &Grid) -> Vec<usize> {
    let mut ps: Vec<usize> = grid.workers.clone();
    ps.extend_from_slice(fig.paper_workers);
    ps.sort_unstable();
    ps.dedup();
    ps
}

/// The row's status: why it is not measured, or which of its points failed.
fn row_status(row: &Row, a: &Availability, summaries: &[PointSummary], ps: &[usize]) -> String {
    if *a != Availability::Ready {
        return a.to_string();
    }
    let failed: Vec<String> = ps
        .iter()
        .filter_map(|&p| {
            let s = summaries.iter().find(|s| s.key == key(row, p))?;
            (s.status != Status::Ok).then(|| format!("{} at P={p}", s.status))
        })
        .collect();
    if failed.is_empty() {
        "ok".to_string()
    } else {
        failed.join(", ")
    }
}

/// Builds the table of `fig` from the run's points.
pub(crate) fn build(fig: &Figure, grid: &Grid, ctx: &Context<'_>) -> Table {
    let metric = fig.metric;
    let ps = columns(fig, grid);
    let mut header: Vec<String> = ["bench", "variant", "runtime"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    if let Some((row, _)) = grid.rows.first() {
        header.extend(metric.lead(ctx, row).into_iter().map(|(h, _)| h));
    }
    header.extend(ps.iter().map(|&p| metric.column(p)));
    header.push("status".to_string());
    let rows = grid
        .rows
        .iter()
        .map(|(row, a)| {
            let mut cells = vec![
                row.bench.clone(),
                row.variant.name().to_string(),
                row.runtime.to_string(),
            ];
            cells.extend(metric.lead(ctx, row).into_iter().map(|(_, c)| c));
            for &p in &ps {
                let ours = if *a == Availability::Ready {
                    metric.cell(ctx, row, p)
                } else {
                    "—".to_string()
                };
                cells.push(match &row.paper {
                    Some(_) if fig.paper_workers.contains(&p) => {
                        format!("{ours} {}", metric.paper_cell(row, p))
                    }
                    _ => ours,
                });
            }
            cells.push(row_status(row, a, ctx.summaries, &grid.workers));
            cells
        })
        .collect();
    Table { header, rows }
}

impl Table {
    /// Aligned plain text for the terminal.
    pub(crate) fn to_text(&self) -> String {
        let widths: Vec<usize> = (0..self.header.len())
            .map(|c| {
                std::iter::once(&self.header[c])
                    .chain(self.rows.iter().map(|r| &r[c]))
                    .map(|s| s.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |cells: &[String]| {
            cells
                .iter()
                .zip(&widths)
                .map(|(s, w)| format!("{s:<w$}"))
                .collect::<Vec<_>>()
                .join("  ")
                .trim_end()
                .to_string()
        };
        let mut out = line(&self.header);
        out.push('\n');
        out.push_str(&"-".repeat(widths.iter().sum::<usize>() + 2 * (widths.len() - 1)));
        out.push('\n');
        for r in &self.rows {
            out.push_str(&line(r));
            out.push('\n');
        }
        out
    }

    /// A Markdown table.
    pub(crate) fn to_markdown(&self) -> String {
        let esc = |s: &String| s.replace('|', "\\|");
        let mut out = format!(
            "| {} |\n|{}|\n",
            self.header.iter().map(esc).collect::<Vec<_>>().join(" | "),
            self.header
                .iter()
                .map(|_| "---")
                .collect::<Vec<_>>()
                .join("|")
        );
        for r in &self.rows {
            out.push_str(&format!(
                "| {} |\n",
                r.iter().map(esc).collect::<Vec<_>>().join(" | ")
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::metric::format_speedup;

    use crate::figures::prows_fig3;
    use crate::grid::Selection;
    use crate::testutil::ok_point;
    use stealbench_workloads::Variant;

    #[test]
    fn times_have_four_significant_digits() {
        assert_eq!(format_time(0.008702), "0.008702");
        assert_eq!(format_time(0.512), "0.5120");
        assert_eq!(format_time(12.344), "12.34");
        assert_eq!(format_time(172.34), "172.3");
        assert_eq!(format_time(2460.0), "2460");
        assert_eq!(format_speedup(1.956), "1.96x");
    }

    #[test]
    fn fig3_cells_show_measured_and_paper_values() {
        let fig = prows_fig3::figure();
        let grid = Grid::build(fig.rows.clone(), &[1, 2], &Selection::default());
        let summaries = [ok_point("serial/front=kernel", Variant::Fj, 1, 0.25)];
        let ctx = Context {
            summaries: &crate::results::Summaries::from(summaries.to_vec()),
            cpus: 2,
        };
        let t = build(&fig, &grid, &ctx);
        assert_eq!(
            t.header[..6],
            ["bench", "variant", "runtime", "Ts", "T1", "T2"]
        );
        assert_eq!(t.header.last().unwrap(), "status");
        let fj = &t.rows[0];
        assert_eq!(fj[..3], ["fib", "fj", "abp"]);
        assert_eq!(fj[3], "0.2500 [paper 2.46]");
        // abp was not measured here: no time, but the paper's, with T1/T2 scalability.
        assert!(fj[4].starts_with("— [paper 22.05]"), "{}", fj[4]);
        assert_eq!(
            fj[5],
            format!("— [paper 10.84 ({})]", format_speedup(22.05 / 10.84))
        );
        // fib-sf's T1 is not legible in the paper.
        assert!(t.rows[1][4].contains("[paper —]"), "{}", t.rows[1][4]);
        assert!(t.to_text().contains("fib "));
        assert!(t.to_markdown().starts_with("| bench | variant |"));
    }

    #[test]
    fn the_table_spells_libforks_arms_out() {
        let (fig, grid, summaries) = crate::testutil::libfork_fig5_at_1();
        let ctx = Context {
            summaries: &crate::results::Summaries::from(summaries.to_vec()),
            cpus: 2,
        };
        let busy = crate::figures::suites::BUSY_LF;
        assert!(build(&fig, &grid, &ctx).to_text().contains(busy));
    }
}
