//! Memory metrics: a point's peak resident set ([`PeakRss`], libfork's Figure 7), its
//! incremental and peak resident set with the stacks it mapped ([`RssTable`], Fibril's
//! Table 4), and the fitted exponent of the peak against P ([`Exponent`], libfork's Table II,
//! fitted by [`crate::fit`]).
//!
//! What is measured (see `measure::measure`): every repetition records, from the point's own
//! process, the resident set just before its first computation (`process_rss_before_kb`: the
//! pool started, the input generated, the work prepared), the peak at that moment
//! (`process_hwm_before_kb`) and the peak after the repetition (`process_hwm_kb`, `VmHWM`). The
//! *peak RSS* of a point is its process's `VmHWM` after its last repetition (the largest
//! `process_hwm_kb`), or `wait4`'s peak where no repetition recorded one: `wait4` of a process
//! started by `exec` also counts the memory of the process image it replaced (a copy of the
//! harness), which the process's own `VmHWM` does not. The *incremental RSS* is that peak minus
//! the resident set before the first computation: what the computation added (Fibril's
//! "ΔRSS ... excludes the physical memory used for input data and libraries"). When the peak
//! was already reached before the computation (input generation), the difference is an upper
//! bound, marked `≤`.
//!
//! Memory does not need a core per worker: the points run at any P, oversubscribed ones marked.

use super::metric::{Context, Metric, key, mark_oversubscribed, unfinished};
use super::{paper_number, paper_text};
use crate::fit::{Fit, fit};
use crate::grid::{Row, Status};
use crate::results::PointSummary;

/// KiB in a MiB.
const KIB: f64 = 1024.0;

/// The incremental resident set of a point, KiB, and whether it is only an upper bound (the
/// peak was reached before the computation): the largest over the repetitions of the peak
/// after the repetition minus the resident set before the first computation.
pub(crate) fn incremental_kb(s: &PointSummary) -> Option<(u64, bool)> {
    let before = s.counter("process_rss_before_kb")?;
    let hwm_before = s.counter("process_hwm_before_kb")?;
    let after = s.counter("process_hwm_kb")?;
    before
        .iter()
        .zip(hwm_before)
        .zip(after)
        .map(|((&b, &hb), &a)| (a.saturating_sub(b), a <= hb))
        .max_by_key(|&(d, bound)| (d, bound))
}

/// MiB with three significant digits at most (`5.62`, `93.1`, `2055`).
pub(crate) fn format_mib(kb: f64) -> String {
    let m = kb / KIB;
    if m >= 100.0 {
        format!("{m:.0}")
    } else if m >= 10.0 {
        format!("{m:.1}")
    } else {
        format!("{m:.2}")
    }
}

/// The peak resident set of a point as its cells show it: MiB, `n/a` where not recorded.
fn peak_text(s: &PointSummary) -> String {
    s.peak_kb()
        .map_or("n/a".to_string(), |k| format_mib(k as f64))
}

/// The ok summary of `row` at `p`.
fn ok<'a>(ctx: &Context<'a>, row: &Row, p: usize) -> Option<&'a PointSummary> {
    ctx.point(row, p).filter(|s| s.status == Status::Ok)
}

/// The cell of a memory quantity: `value` of the point if it finished ok, else its status.
fn memory_cell(
    ctx: &Context<'_>,
    row: &Row,
    p: usize,
    value: impl Fn(&PointSummary) -> String,
) -> String {
    let c = match ctx.point(row, p) {
        Some(s) if s.status == Status::Ok => value(s),
        s => unfinished(s),
    };
    mark_oversubscribed(ctx, row, p, c)
}

/// The peak resident set of each point in MiB (libfork's MRSS, as GNU `time` reports it).
#[derive(Debug, Clone, Copy)]
pub(crate) struct PeakRss;

impl Metric for PeakRss {
    fn cell(&self, ctx: &Context<'_>, row: &Row, p: usize) -> String {
        memory_cell(ctx, row, p, peak_text)
    }

    fn paper_cell(&self, _: &Row, _: usize) -> String {
        "[paper —]".to_string()
    }

    fn lines(&self) -> &'static [&'static str] {
        &["peak RSS"]
    }

    fn plot(&self, ctx: &Context<'_>, row: &Row, p: usize, _: usize) -> Option<f64> {
        Some(ok(ctx, row, p)?.peak_kb()? as f64 / KIB)
    }

    fn plot_paper(&self, _: &Row, _: usize, _: usize) -> Option<f64> {
        None
    }

    fn y_label(&self) -> &'static str {
        "peak RSS (MiB)"
    }

    fn ideal_line(&self) -> bool {
        false
    }

    fn describe(&self) -> String {
        "cells = the peak resident set of the point's process in MiB: its own VmHWM after its \
         last repetition (warm-up included; input, libraries and pool included)"
            .to_string()
    }

    fn note_label(&self) -> &'static str {
        "Cells"
    }

    fn cell_legend(&self) -> &'static str {
        "Each cell: the peak resident set of the point's process, MiB. `—` = not measured. The \
         paper plots its MRSS without printing it: no paper value is beside ours. Memory does \
         not need a core per worker: oversubscribed points are measured and marked."
    }

    fn plot_name(&self) -> &'static str {
        "peak RSS"
    }

    fn needs_cores(&self) -> bool {
        false
    }
}

/// Fibril's Table 4: incremental and peak resident set and the stacks, with the paper's beside.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RssTable {
    /// The reference CSV (MB; one record per benchmark).
    pub reference: &'static str,
    /// Per runtime arm, its reference columns: incremental RSS, peak RSS, stacks (`""`: none).
    pub columns: &'static [(&'static str, [&'static str; 3])],
    /// The P of the paper's numbers.
    pub paper_p: usize,
}

impl RssTable {
    /// The paper's number `i` (incremental RSS, peak RSS, stacks) for `row`.
    pub(crate) fn paper_value(&self, row: &Row, i: usize) -> Option<f64> {
        let (_, cols) = self.columns.iter().find(|(rt, _)| row.runtime == *rt)?;
        let col = cols.get(i).filter(|c| !c.is_empty())?;
        paper_number(self.reference, &row.bench, col)
    }

    /// The most stacks the point's pool had mapped at once (the largest over its repetitions).
    fn stacks(s: &PointSummary) -> Option<u64> {
        s.counter("stacks_high_water")?.iter().copied().max()
    }
}

impl Metric for RssTable {
    fn cell(&self, ctx: &Context<'_>, row: &Row, p: usize) -> String {
        memory_cell(ctx, row, p, |s| {
            let delta = match incremental_kb(s) {
                Some((d, bound)) => {
                    format!("{}{}", if bound { "≤" } else { "" }, format_mib(d as f64))
                }
                None => "n/a".to_string(),
            };
            let peak = peak_text(s);
            let stacks = Self::stacks(s).map_or("n/a".to_string(), |n| n.to_string());
            format!("{delta} / {peak} MiB; {stacks} stacks")
        })
    }

    fn paper_cell(&self, row: &Row, p: usize) -> String {
        if p != self.paper_p {
            return "[paper —]".to_string();
        }
        let num = |i| {
            self.paper_value(row, i)
                .map_or("—".to_string(), |v| format!("{v:.0}"))
        };
        format!("[paper {} / {} MB; {} stacks]", num(0), num(1), num(2))
    }

    fn lines(&self) -> &'static [&'static str] {
        &["incremental RSS", "peak RSS"]
    }

    fn plot(&self, ctx: &Context<'_>, row: &Row, p: usize, line: usize) -> Option<f64> {
        let s = ok(ctx, row, p)?;
        let kb = match line {
            0 => incremental_kb(s)?.0,
            _ => s.peak_kb()?,
        };
        Some(kb as f64 / KIB)
    }

    fn plot_paper(&self, row: &Row, p: usize, line: usize) -> Option<f64> {
        (p == self.paper_p)
            .then(|| self.paper_value(row, line))
            .flatten()
    }

    fn y_label(&self) -> &'static str {
        "RSS (MiB)"
    }

    fn ideal_line(&self) -> bool {
        false
    }

    fn describe(&self) -> String {
        "cells = incremental RSS / peak RSS in MiB, then the stacks: the incremental RSS is the \
         process's peak resident set (VmHWM after the repetition, the largest over the \
         repetitions) minus its resident set just before the first computation (pool started, \
         input generated and prepared), `≤` where that peak had been reached before the \
         computation (then it is an upper bound); the peak RSS is the process's VmHWM after its \
         last repetition; stacks = `stacks_high_water`, the most fiber stacks the pool had mapped \
         at once (in use or kept in its free lists: an upper bound of those in use; `n/a` for a \
         runtime without fiber stacks)"
            .to_string()
    }

    fn note_label(&self) -> &'static str {
        "Cells"
    }

    fn cell_legend(&self) -> &'static str {
        "Each cell: our incremental RSS / peak RSS in MiB; the stacks [the paper's, in its MB, \
         and its number of stacks]. `—` = not measured or not given, `n/a` = not counted by \
         the runtime. Memory grows with the input: at other sizes than the paper's compare the \
         runtimes with each other, not with the paper's megabytes."
    }

    fn plot_name(&self) -> &'static str {
        "RSS"
    }

    fn needs_cores(&self) -> bool {
        false
    }
}

/// libfork's Table II: the exponent `n` of `MRSS = a + b * M_1 * P^n` fitted to a row's peak
/// RSS at every P it was measured at, with the paper's exponent beside; the cells are the
/// peaks, the plot draws them and the fitted curve.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Exponent {
    /// The reference CSV (`0.86±0.08`; one record per benchmark).
    pub reference: &'static str,
    /// Per runtime arm, its reference column.
    pub columns: &'static [(&'static str, &'static str)],
}

impl Exponent {
    /// The row's points `(P, peak MiB)` that finished ok, by P, and `M_1` (the peak at P = 1).
    pub(crate) fn points(&self, ctx: &Context<'_>, row: &Row) -> (Vec<(f64, f64)>, Option<f64>) {
        let mut pts: Vec<(usize, f64)> = ctx
            .summaries
            .iter()
            .filter(|s| s.status == Status::Ok && s.key == key(row, s.key.workers))
            .filter_map(|s| Some((s.key.workers, s.peak_kb()? as f64 / KIB)))
            .collect();
        pts.sort_by_key(|p| p.0);
        let m1 = pts.iter().find(|p| p.0 == 1).map(|p| p.1);
        (pts.into_iter().map(|(p, y)| (p as f64, y)).collect(), m1)
    }

    /// The fit of the row's points; `None` with fewer than 4 points or no P = 1.
    pub(crate) fn fit(&self, ctx: &Context<'_>, row: &Row) -> Option<(Fit, f64)> {
        let (pts, m1) = self.points(ctx, row);
        let m1 = m1?;
        Some((fit(&pts, m1)?, m1))
    }

    /// The paper's exponent of `row` as it prints it (`0.86±0.08`).
    pub(crate) fn paper(&self, row: &Row) -> Option<String> {
        let (_, col) = self.columns.iter().find(|(rt, _)| row.runtime == *rt)?;
        paper_text(self.reference, &row.bench, col)
    }
}

impl Metric for Exponent {
    fn lead(&self, ctx: &Context<'_>, row: &Row) -> Vec<(String, String)> {
        let (pts, _) = self.points(ctx, row);
        let f = self.fit(ctx, row);
        let mut n = match &f {
            Some((f, _)) => {
                let mut s = match f.se {
                    Some((se, _, _)) => format!("{:.2} ± {:.2}", f.n, se),
                    None => format!("{:.2} (flat: no error)", f.n),
                };
                if f.at_bound {
                    s.push_str(" (at the search bound)");
                }
                s
            }
            None if pts.len() < 4 => "— (fewer than 4 points)".to_string(),
            None => "— (no P=1 point)".to_string(),
        };
        if let Some(p) = self.paper(row) {
            n = format!("{n} [paper {}]", p.replace('±', " ± "));
        }
        let (a, b) = match &f {
            Some((f, _)) => (format!("{:.2}", f.a), format!("{:.3}", f.b)),
            None => ("—".to_string(), "—".to_string()),
        };
        vec![
            ("n".to_string(), n),
            ("a (MiB)".to_string(), a),
            ("b".to_string(), b),
            ("points".to_string(), pts.len().to_string()),
        ]
    }

    fn cell(&self, ctx: &Context<'_>, row: &Row, p: usize) -> String {
        PeakRss.cell(ctx, row, p)
    }

    fn paper_cell(&self, _: &Row, _: usize) -> String {
        "[paper —]".to_string()
    }

    fn lines(&self) -> &'static [&'static str] {
        &["peak RSS", "fit"]
    }

    fn plot(&self, ctx: &Context<'_>, row: &Row, p: usize, line: usize) -> Option<f64> {
        match line {
            0 => PeakRss.plot(ctx, row, p, 0),
            _ => {
                let (f, m1) = self.fit(ctx, row)?;
                Some(f.at(m1, p as f64))
            }
        }
    }

    fn plot_paper(&self, _: &Row, _: usize, _: usize) -> Option<f64> {
        None
    }

    fn y_label(&self) -> &'static str {
        "peak RSS (MiB)"
    }

    fn ideal_line(&self) -> bool {
        false
    }

    fn describe(&self) -> String {
        "n = the exponent of MRSS = a + b * M_1 * P^n (libfork's Eq. 17), fitted by least \
         squares to the row's peak RSS (MiB) at every P measured (`points`), M_1 being the peak \
         at P = 1; ± its standard error from the covariance s^2 (J^T J)^-1 of the nonlinear \
         model in (a, b M_1, n), s^2 = residual sum of squares / (points - 3); a in MiB; cells = \
         the peak RSS in MiB"
            .to_string()
    }

    fn note_label(&self) -> &'static str {
        "Fit"
    }

    fn cell_legend(&self) -> &'static str {
        "Lead columns: our fitted exponent n ± its standard error [the paper's], the fitted a \
         (MiB) and b, and the number of points in the fit. Each P column: the peak resident set \
         of the point's process in MiB. The paper's taskflow column has no counterpart \
         here. Memory does not need a core per worker: oversubscribed points are \
         measured, marked, and fitted."
    }

    fn plot_name(&self) -> &'static str {
        "peak RSS and its fit"
    }

    fn needs_cores(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{fib_row, ok_point};
    use stealbench_workloads::Variant;

    /// A point whose repetitions recorded these (before, hwm before, hwm after) KiB.
    fn point(runtime: &str, p: usize, reps: &[(u64, u64, u64)], wait4: u64) -> PointSummary {
        let mut s = ok_point(runtime, Variant::Fj, p, 1.0);
        s.peak_rss_kb = Some(wait4);
        s.counters = vec![
            (
                "process_rss_before_kb".into(),
                reps.iter().map(|r| r.0).collect(),
            ),
            (
                "process_hwm_before_kb".into(),
                reps.iter().map(|r| r.1).collect(),
            ),
            ("process_hwm_kb".into(), reps.iter().map(|r| r.2).collect()),
            ("stacks_high_water".into(), vec![12, 14]),
        ];
        s
    }

    #[test]
    fn peak_and_incremental_rss_come_from_the_process_itself() {
        let s = point(
            "fibril",
            72,
            &[(4096, 5000, 9216), (4096, 5000, 10240)],
            30000,
        );
        assert_eq!(s.peak_kb(), Some(10240));
        assert_eq!(incremental_kb(&s), Some((6144, false)));
        // Without the process's own numbers: wait4's.
        let mut old = s.clone();
        old.counters.clear();
        assert_eq!(old.peak_kb(), Some(30000));
        assert_eq!(incremental_kb(&old), None);
        // A peak reached before the computation: an upper bound.
        let early = point("tbb", 72, &[(4096, 20000, 20000)], 21000);
        assert_eq!(incremental_kb(&early), Some((15904, true)));

        let t = RssTable {
            reference: "bench,fd,fm,fs,td,tm\nfib,3,6,315,108,111\n",
            columns: &[("fibril", ["fd", "fm", "fs"]), ("tbb", ["td", "tm", ""])],
            paper_p: 72,
        };
        let summaries = [s, early];
        let ctx = Context {
            summaries: &crate::results::Summaries::from(summaries.to_vec()),
            cpus: 2,
        };
        assert_eq!(
            t.cell(&ctx, &fib_row("fibril"), 72),
            "6.00 / 10.0 MiB; 14 stacks (oversubscribed)"
        );
        assert_eq!(
            t.cell(&ctx, &fib_row("tbb"), 72),
            "≤15.5 / 19.5 MiB; 14 stacks (oversubscribed)"
        );
        assert_eq!(t.cell(&ctx, &fib_row("abp"), 72), "—");
        assert_eq!(
            t.paper_cell(&fib_row("fibril"), 72),
            "[paper 3 / 6 MB; 315 stacks]"
        );
        assert_eq!(
            t.paper_cell(&fib_row("tbb"), 72),
            "[paper 108 / 111 MB; — stacks]"
        );
        assert_eq!(t.plot(&ctx, &fib_row("fibril"), 72, 0), Some(6.0));
        assert_eq!(t.plot(&ctx, &fib_row("fibril"), 72, 1), Some(10.0));
        assert_eq!(t.plot_paper(&fib_row("fibril"), 72, 1), Some(6.0));
        assert_eq!(
            PeakRss.cell(&ctx, &fib_row("fibril"), 72),
            "10.0 (oversubscribed)"
        );
        assert_eq!(format_mib(2055.0 * 1024.0), "2055");
        assert_eq!(format_mib(5.62 * 1024.0), "5.62");
    }

    #[test]
    fn the_exponent_is_fitted_to_every_measured_p() {
        // MRSS = 2 + 0.5 * M_1 * P^0.8 MiB with M_1 = 2.5 MiB at P = 1.
        let mib = |p: f64| 2.0 + 0.5 * 2.5 * p.powf(0.8);
        let summaries: Vec<PointSummary> = [1usize, 2, 4, 8, 12, 16]
            .iter()
            .map(|&p| {
                let kb = (mib(p as f64) * 1024.0).round() as u64;
                point("libfork", p, &[(1000, 1000, kb)], kb + 4096)
            })
            .collect();
        let ctx = Context {
            summaries: &crate::results::Summaries::from(summaries.to_vec()),
            cpus: 2,
        };
        let e = Exponent {
            reference: "bench,lazy_lf\nfib,0.86±0.08\n",
            columns: &[("libfork", "lazy_lf")],
        };
        let (f, m1) = e.fit(&ctx, &fib_row("libfork")).unwrap();
        assert!((m1 - 3.25).abs() < 1e-3);
        // KiB rounding is the only noise.
        assert!((f.n - 0.8).abs() < 0.01, "{f:?}");
        let lead = e.lead(&ctx, &fib_row("libfork"));
        assert!(lead[0].1.starts_with("0.80 ± 0.0"), "{:?}", lead[0]);
        assert!(lead[0].1.ends_with("[paper 0.86 ± 0.08]"), "{:?}", lead[0]);
        assert_eq!(lead[3], ("points".to_string(), "6".to_string()));
        let fitted = e.plot(&ctx, &fib_row("libfork"), 16, 1).unwrap();
        assert!((fitted - mib(16.0)).abs() < 0.05, "{fitted}");
        // abp has no points: no fit, said why.
        let lead = e.lead(&ctx, &fib_row("abp"));
        assert_eq!(lead[0].1, "— (fewer than 4 points)");
        assert_eq!(lead[3].1, "0");
    }
}
