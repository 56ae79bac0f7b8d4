//! The figure's table in the paper's layout (bench, variant, runtime, Ts, T1, T2, ...), each
//! cell `time (speedup)` with the paper's value beside it, for the terminal and for Markdown.

use crate::figures::{Figure, SpeedupBase};
use crate::grid::{Availability, Grid, PointKey, Row, Status};
use crate::results::{self, PointSummary};
use crate::stats;

/// A rendered table: header and cells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    /// Column titles.
    pub header: Vec<String>,
    /// Rows of cells.
    pub rows: Vec<Vec<String>>,
}

/// Seconds with four significant digits (`0.008702`, `0.5120`, `12.34`, `172.3`).
pub fn format_time(t: f64) -> String {
    if !(t.is_finite() && t > 0.0) {
        return format!("{t}");
    }
    let decimals = (3 - t.log10().floor() as i32).clamp(0, 9) as usize;
    format!("{t:.decimals$}")
}

/// A speedup: `1.96x`.
pub fn format_speedup(s: f64) -> String {
    format!("{s:.2}x")
}

fn with_speedup(t: f64, s: Option<f64>) -> String {
    match s {
        Some(s) => format!("{} ({})", format_time(t), format_speedup(s)),
        None => format_time(t),
    }
}

/// Every worker count a column is shown for: the measured ones and the paper's.
pub fn columns(fig: &Figure, grid: &Grid) -> Vec<usize> {
    let mut ps: Vec<usize> = grid.workers.clone();
    ps.extend_from_slice(fig.paper_workers);
    ps.sort_unstable();
    ps.dedup();
    ps
}

/// The measured T_s of `workload`.
fn ts<'a>(summaries: &'a [PointSummary], workload: &str) -> Option<&'a PointSummary> {
    results::ts_of(summaries, workload)
}

fn key(row: &Row, p: usize) -> PointKey {
    PointKey {
        runtime: row.runtime.to_string(),
        workload: row.workload.clone(),
        variant: row.variant,
        workers: p,
    }
}

/// The measured speedup of `row` at `p` under `base` (`None` if either time is missing, and
/// for the base itself).
pub fn measured_speedup(
    base: SpeedupBase,
    summaries: &[PointSummary],
    row: &Row,
    p: usize,
) -> Option<f64> {
    let t = results::median_of(summaries, &key(row, p));
    match base {
        SpeedupBase::Serial => stats::speedup(
            ts(summaries, &row.workload)
                .and_then(|s| s.summary)
                .map(|s| s.median),
            t,
        ),
        SpeedupBase::OneWorker if p == 1 => None,
        SpeedupBase::OneWorker => stats::speedup(results::median_of(summaries, &key(row, 1)), t),
    }
}

/// The paper's speedup of `row` at `p` under `base`, computed from the paper's times.
pub fn paper_speedup(base: SpeedupBase, row: &Row, p: usize) -> Option<f64> {
    let v = row.paper.as_ref()?;
    match base {
        SpeedupBase::Serial => stats::speedup(v.ts, v.time(p)),
        SpeedupBase::OneWorker if p == 1 => None,
        SpeedupBase::OneWorker => stats::speedup(v.time(1), v.time(p)),
    }
}

fn measured_cell(s: Option<&PointSummary>, speedup: Option<f64>) -> String {
    match s {
        None => "—".to_string(),
        Some(s) => match (s.status, s.summary) {
            (Status::Ok, Some(x)) => with_speedup(x.median, speedup),
            (status, _) => status.name().to_string(),
        },
    }
}

/// The paper's time as the paper prints it (two decimals), with its speedup recomputed from
/// its times.
fn paper_cell(t: Option<f64>, speedup: Option<f64>) -> String {
    match (t, speedup) {
        (Some(t), Some(s)) => format!("[paper {t:.2} ({})]", format_speedup(s)),
        (Some(t), None) => format!("[paper {t:.2}]"),
        (None, _) => "[paper —]".to_string(),
    }
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

/// Builds the table of `fig` from the measured `summaries`.
pub fn build(fig: &Figure, grid: &Grid, summaries: &[PointSummary]) -> Table {
    let ps = columns(fig, grid);
    let mut header: Vec<String> = ["bench", "variant", "runtime", "Ts"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    header.extend(ps.iter().map(|p| format!("T{p}")));
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
            let ts_cell = measured_cell(ts(summaries, &row.workload), None);
            cells.push(match &row.paper {
                Some(v) => format!("{ts_cell} {}", paper_cell(v.ts, None)),
                None => ts_cell,
            });
            for &p in &ps {
                let measured = if *a == Availability::Ready {
                    measured_cell(
                        summaries.iter().find(|s| s.key == key(row, p)),
                        measured_speedup(fig.base, summaries, row, p),
                    )
                } else {
                    "—".to_string()
                };
                cells.push(match &row.paper {
                    Some(v) if fig.paper_workers.contains(&p) => format!(
                        "{measured} {}",
                        paper_cell(v.time(p), paper_speedup(fig.base, row, p))
                    ),
                    _ => measured,
                });
            }
            cells.push(row_status(row, a, summaries, &grid.workers));
            cells
        })
        .collect();
    Table { header, rows }
}

impl Table {
    /// Aligned plain text for the terminal.
    pub fn to_text(&self) -> String {
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
    pub fn to_markdown(&self) -> String {
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
    use crate::figures::prows_fig3;
    use crate::grid::Selection;
    use crate::stats::Summary;
    use stealbench_workloads::Variant;

    fn ok(rt: &str, v: Variant, p: usize, median: f64) -> PointSummary {
        PointSummary {
            key: PointKey {
                runtime: rt.into(),
                workload: "fib".into(),
                variant: v,
                workers: p,
            },
            size: "test".into(),
            params: "n=20".into(),
            status: Status::Ok,
            summary: Some(Summary {
                n: 3,
                median,
                mean: median,
                stddev: 0.0,
                min: median,
            }),
            peak_rss_kb: Some(1),
            note: String::new(),
        }
    }

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
        let summaries = vec![ok("serial", Variant::Fj, 1, 0.25)];
        let t = build(&fig, &grid, &summaries);
        assert_eq!(
            t.header[..6],
            ["bench", "variant", "runtime", "Ts", "T1", "T2"]
        );
        assert_eq!(t.header.last().unwrap(), "status");
        let fj = &t.rows[0];
        assert_eq!(fj[..3], ["fib", "fj", "abp"]);
        assert_eq!(fj[3], "0.2500 [paper 2.46]");
        // abp does not exist in this build: no time, but the paper's, with T1/T2 scalability.
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
    fn measured_speedups_follow_the_base() {
        let row = Row {
            bench: "fib".into(),
            workload: "fib".into(),
            variant: Variant::Fj,
            runtime: "serial".to_string(),
            paper: None,
        };
        let s = vec![
            ok("serial", Variant::Fj, 1, 2.0),
            ok("serial", Variant::Fj, 2, 0.5),
        ];
        assert_eq!(
            measured_speedup(SpeedupBase::Serial, &s, &row, 2),
            Some(4.0)
        );
        assert_eq!(
            measured_speedup(SpeedupBase::OneWorker, &s, &row, 2),
            Some(4.0)
        );
        assert_eq!(measured_speedup(SpeedupBase::OneWorker, &s, &row, 1), None);
        assert_eq!(
            measured_speedup(SpeedupBase::Serial, &s, &row, 1),
            Some(1.0)
        );
    }
}
