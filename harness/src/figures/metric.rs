//! What a figure shows of its points: the [`Metric`] its table's cells and its plot's lines
//! hold, ours with the paper's beside. The table (`table.rs`) and the plot (`plot.rs`) are
//! shared renderers that ask the figure's metric for every value; a figure with a quantity of
//! its own implements [`Metric`] in its module.
//!
//! Two metrics are shared: [`Time`] (the median time and its speedup: ProWS Figures 2 and 3)
//! and [`Count`] (a runtime counter of the point's repetitions: deviations, steals).
//!
//! A point measured with more workers than its machine has logical CPUs is *oversubscribed*:
//! its time says nothing about speedup. Every metric marks such cells, and [`Time`] shows no
//! speedup for them, in the table or the plot; nor, in a run merged across machines, for a point
//! whose row's T_1 or T_s another machine measured.

use crate::grid::{Row, Status};
use crate::results::{self, PointSummary, Summaries};
use crate::spec::PointSpec;
use crate::stats;

/// What a metric reads: the run's points and the machine they ran on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Context<'a> {
    /// Every measured point of the run.
    pub summaries: &'a Summaries,
    /// The run's machine's logical CPUs: a point with more workers is oversubscribed (a point
    /// of a run merged across machines, against its own machine's: [`Summaries::cpus_of`]).
    pub cpus: usize,
}

impl<'a> Context<'a> {
    /// The summary of `row` at `p`, if measured.
    pub(crate) fn point(&self, row: &Row, p: usize) -> Option<&'a PointSummary> {
        self.summaries.get(&key(row, p))
    }

    /// Whether `row` at P = `p` ran more worker threads than the machine that measured it has
    /// logical CPUs (a simulated row runs none).
    pub(crate) fn oversubscribed(&self, row: &Row, p: usize) -> bool {
        p > self.summaries.cpus_of(&key(row, p), self.cpus) && row.runtime.sim.is_none()
    }

    /// Whether `row` at P = `p` has no speedup or ratio to show: oversubscribed, simulated (a
    /// simulated point's seconds are the replay's wall time, not the program's), or, in a run
    /// merged across machines, measured on another machine than its row's T_1 or its
    /// workload's T_s (times of two machines make no speedup).
    pub(crate) fn no_speedup(&self, row: &Row, p: usize) -> bool {
        let machine = |k: &PointSpec| self.summaries.machine_of(k);
        let here = machine(&key(row, p));
        let ts = results::ts_of(self.summaries, &row.workload).map(|s| &s.key);
        let t1 = key(row, 1);
        let elsewhere = (self.summaries.get(&t1).is_some() && machine(&t1) != here)
            || ts.is_some_and(|k| machine(k) != here);
        self.oversubscribed(row, p) || row.runtime.sim.is_some() || elsewhere
    }
}

/// The point of `row` at `p`.
pub(crate) fn key(row: &Row, p: usize) -> PointSpec {
    PointSpec {
        runtime: row.runtime,
        workload: row.workload.clone(),
        variant: row.variant,
        workers: p,
    }
}

/// The quantity of a figure: its table's columns and cells and its plot's values.
pub(crate) trait Metric: Send + Sync + std::fmt::Debug {
    /// Columns before the per-P ones (`Ts` for times), with their cells for `row` (the
    /// paper's value beside ours where the row has one); none by default.
    fn lead(&self, ctx: &Context<'_>, row: &Row) -> Vec<(String, String)> {
        let _ = (ctx, row);
        Vec::new()
    }
    /// The title of the column of P = `p`; `P=p` by default.
    fn column(&self, p: usize) -> String {
        format!("P={p}")
    }
    /// Our cell of a measured `row` at `p`.
    fn cell(&self, ctx: &Context<'_>, row: &Row, p: usize) -> String;
    /// The paper's cell of `row` at `p` (the row has paper values; `p` is a paper column).
    fn paper_cell(&self, row: &Row, p: usize) -> String;
    /// The quantities a row plots, one line each (`["steals", "deviations"]`); a metric of
    /// one quantity plots one line per row, named after the row alone.
    fn lines(&self) -> &'static [&'static str];
    /// The value of our line `line` (an index into [`Metric::lines`]) at `p`, if plotted.
    fn plot(&self, ctx: &Context<'_>, row: &Row, p: usize, line: usize) -> Option<f64>;
    /// The value of the paper's line `line` at `p`, if any (the paper's values are the first
    /// line's).
    fn plot_paper(&self, row: &Row, p: usize, line: usize) -> Option<f64>;
    /// The plot's y axis.
    fn y_label(&self) -> &'static str;
    /// Whether the ideal speedup y = P means something for these values: the plot then draws
    /// it, fits the y axis to the values and the ideal (log2 over two doublings or more), and
    /// sets ours against the paper's at the same P. A count or a size, which grows with the
    /// input, and a ratio such as Ts/T1 have none.
    fn ideal_line(&self) -> bool;
    /// One sentence for the table's notes.
    fn describe(&self) -> String;
    /// What the notes call that sentence (`Speedup`).
    fn note_label(&self) -> &'static str;
    /// The paragraph above the Markdown table: what a cell holds.
    fn cell_legend(&self) -> &'static str;
    /// What the plot shows, for its alt text (`speedup`).
    fn plot_name(&self) -> &'static str;
    /// Whether the figure's default worker counts stop at this machine's cores (a time means
    /// something only with a core per worker; a count or memory is measured oversubscribed).
    fn needs_cores(&self) -> bool;
    /// Whether the figure's claims compare times, which this kind of machine moves by up to 2x
    /// from one process to the next: such a figure runs [`super::TIME_ROUNDS`] rounds by
    /// default, so that its verdicts rest on medians over rounds with their spread. The
    /// figures whose times need a core per worker, by default.
    fn compares_times(&self) -> bool {
        self.needs_cores()
    }
    /// What the Markdown notes say of the oversubscribed cells, after "those cells".
    fn oversubscribed_note(&self) -> &'static str {
        "those cells are marked `(oversubscribed)` and show no speedup"
    }
}

/// What a figure's speedups are relative to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SpeedupBase {
    /// T_s / T_P: over the serial code, the kernel (ProWS Figure 2).
    Serial,
    /// T_1 / T_P of the same row: scalability (ProWS Figure 3).
    OneWorker,
}

impl SpeedupBase {
    /// One sentence for the table's notes.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            SpeedupBase::Serial => {
                "speedup in parentheses = T_s / T_P, T_s being the serial code at P=1, no runtime and no trait (the T_s line says which)"
            }
            SpeedupBase::OneWorker => {
                "speedup in parentheses = T_1 / T_P of the same row (scalability over T_1, as the paper's figure); T_s is the serial code at P=1, no runtime and no trait (the T_s line says which)"
            }
        }
    }
}

/// Seconds with four significant digits (`0.008702`, `0.5120`, `12.34`, `172.3`).
pub(crate) fn format_time(t: f64) -> String {
    if !(t.is_finite() && t > 0.0) {
        return format!("{t}");
    }
    let decimals = (3 - t.log10().floor() as i32).clamp(0, 9) as usize;
    format!("{t:.decimals$}")
}

/// A speedup: `1.96x`.
pub(crate) fn format_speedup(s: f64) -> String {
    format!("{s:.2}x")
}

/// The mark of an oversubscribed cell.
const OVERSUBSCRIBED: &str = "(oversubscribed)";

/// `cell`, marked if its point was measured with more workers than this machine's CPUs.
pub(crate) fn mark_oversubscribed(ctx: &Context<'_>, row: &Row, p: usize, cell: String) -> String {
    if ctx.oversubscribed(row, p) && ctx.point(row, p).is_some() {
        format!("{cell} {OVERSUBSCRIBED}")
    } else {
        cell
    }
}

/// A cell for a point that did not finish ok, or was not measured.
pub(crate) fn unfinished(s: Option<&PointSummary>) -> String {
    match s {
        None => "—".to_string(),
        Some(s) => s.status.name().to_string(),
    }
}

/// The median time of a point and its speedup over `SpeedupBase`, the paper's times beside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Time(pub SpeedupBase);

impl Time {
    /// Our speedup of `row` at `p` (`None` if either time is missing, for the base itself,
    /// and for an oversubscribed or simulated point).
    pub(crate) fn speedup(&self, ctx: &Context<'_>, row: &Row, p: usize) -> Option<f64> {
        if ctx.no_speedup(row, p) {
            return None;
        }
        let t = results::median_of(ctx.summaries, &key(row, p));
        match self.0 {
            SpeedupBase::Serial => stats::speedup(
                results::ts_of(ctx.summaries, &row.workload)
                    .and_then(|s| s.summary)
                    .map(|s| s.median),
                t,
            ),
            SpeedupBase::OneWorker if p == 1 => None,
            SpeedupBase::OneWorker => {
                stats::speedup(results::median_of(ctx.summaries, &key(row, 1)), t)
            }
        }
    }

    /// The paper's speedup of `row` at `p`, from the paper's times.
    pub(crate) fn paper_speedup(&self, row: &Row, p: usize) -> Option<f64> {
        let v = row.paper.as_ref()?;
        match self.0 {
            SpeedupBase::Serial => stats::speedup(v.ts, v.value(p)),
            SpeedupBase::OneWorker if p == 1 => None,
            SpeedupBase::OneWorker => stats::speedup(v.value(1), v.value(p)),
        }
    }

    fn time_cell(s: Option<&PointSummary>, speedup: Option<f64>) -> String {
        match s.map(|s| (s.status, s.summary)) {
            Some((Status::Ok, Some(x))) => match speedup {
                Some(sp) => format!("{} ({})", format_time(x.median), format_speedup(sp)),
                None => format_time(x.median),
            },
            _ => unfinished(s),
        }
    }

    /// The paper's time as the paper prints it (two decimals), with its speedup.
    fn paper_time_cell(t: Option<f64>, speedup: Option<f64>) -> String {
        match (t, speedup) {
            (Some(t), Some(s)) => format!("[paper {t:.2} ({})]", format_speedup(s)),
            (Some(t), None) => format!("[paper {t:.2}]"),
            (None, _) => "[paper —]".to_string(),
        }
    }
}

impl Metric for Time {
    fn lead(&self, ctx: &Context<'_>, row: &Row) -> Vec<(String, String)> {
        let ours = Self::time_cell(results::ts_of(ctx.summaries, &row.workload), None);
        let cell = match &row.paper {
            Some(v) => format!("{ours} {}", Self::paper_time_cell(v.ts, None)),
            None => ours,
        };
        vec![("Ts".to_string(), cell)]
    }

    fn column(&self, p: usize) -> String {
        format!("T{p}")
    }

    fn cell(&self, ctx: &Context<'_>, row: &Row, p: usize) -> String {
        let c = Self::time_cell(ctx.point(row, p), self.speedup(ctx, row, p));
        mark_oversubscribed(ctx, row, p, c)
    }

    fn paper_cell(&self, row: &Row, p: usize) -> String {
        let t = row.paper.as_ref().and_then(|v| v.value(p));
        Self::paper_time_cell(t, self.paper_speedup(row, p))
    }

    fn lines(&self) -> &'static [&'static str] {
        &["speedup"]
    }

    /// The speedup, and T_1 / T_1 = 1 at P = 1 for a scalability figure where T_1 exists.
    fn plot(&self, ctx: &Context<'_>, row: &Row, p: usize, _: usize) -> Option<f64> {
        if self.0 == SpeedupBase::OneWorker && p == 1 {
            return results::median_of(ctx.summaries, &key(row, 1)).map(|_| 1.0);
        }
        self.speedup(ctx, row, p)
    }

    fn plot_paper(&self, row: &Row, p: usize, _: usize) -> Option<f64> {
        if self.0 == SpeedupBase::OneWorker && p == 1 {
            return row.paper.as_ref()?.value(1).map(|_| 1.0);
        }
        self.paper_speedup(row, p)
    }

    fn y_label(&self) -> &'static str {
        match self.0 {
            SpeedupBase::Serial => "speedup Ts/TP",
            SpeedupBase::OneWorker => "scalability T1/TP",
        }
    }

    fn ideal_line(&self) -> bool {
        true
    }

    fn describe(&self) -> String {
        self.0.describe().to_string()
    }

    fn note_label(&self) -> &'static str {
        "Speedup"
    }

    fn cell_legend(&self) -> &'static str {
        "Each cell: our median time in seconds (our speedup) [the paper's time (its speedup, \
         recomputed from the paper's times)]. `—` = not measured. Rows without a paper value \
         are baselines the paper did not run. Paper times are for the paper's inputs on the \
         paper's machine: at other sizes compare speedups, not times."
    }

    fn plot_name(&self) -> &'static str {
        "speedup"
    }

    fn needs_cores(&self) -> bool {
        true
    }
}

/// How a [`Count`] summarises a point's repetitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reduce {
    /// The largest (ProWS Figure 4: "the maximum of 3 runs").
    Max,
    /// The median.
    Median,
}

/// Runtime counters (`deviations`, `steals`, ...) of a point's repetitions, each reduced over
/// them: a cell shows them separated by ` / `, the plot draws a line for each; the paper's
/// count (of the first counter) beside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Count {
    /// The counters' names in the runtime's statistics.
    pub stats: &'static [&'static str],
    /// How the repetitions' counts become one.
    pub reduce: Reduce,
}

impl Count {
    /// Our count `stat` of `row` at `p`: `None` if the point did not finish ok or its runtime
    /// does not count `stat`.
    pub(crate) fn value(&self, ctx: &Context<'_>, row: &Row, p: usize, stat: &str) -> Option<f64> {
        let s = ctx.point(row, p).filter(|s| s.status == Status::Ok)?;
        let xs: Vec<f64> = s.counter(stat)?.iter().map(|&x| x as f64).collect();
        match self.reduce {
            Reduce::Max => xs.iter().copied().reduce(f64::max),
            Reduce::Median => stats::median(&xs),
        }
    }

    fn reduce_name(&self) -> &'static str {
        match self.reduce {
            Reduce::Max => "maximum",
            Reduce::Median => "median",
        }
    }
}

impl Metric for Count {
    fn cell(&self, ctx: &Context<'_>, row: &Row, p: usize) -> String {
        let c = match ctx.point(row, p) {
            Some(s) if s.status == Status::Ok => self
                .stats
                .iter()
                .map(|stat| match self.value(ctx, row, p, stat) {
                    Some(v) => format!("{v:.0}"),
                    None => "n/a".to_string(),
                })
                .collect::<Vec<_>>()
                .join(" / "),
            s => unfinished(s),
        };
        mark_oversubscribed(ctx, row, p, c)
    }

    fn paper_cell(&self, row: &Row, p: usize) -> String {
        match row.paper.as_ref().and_then(|v| v.value(p)) {
            Some(v) => format!("[paper {v:.0}]"),
            None => "[paper —]".to_string(),
        }
    }

    fn lines(&self) -> &'static [&'static str] {
        self.stats
    }

    fn plot(&self, ctx: &Context<'_>, row: &Row, p: usize, line: usize) -> Option<f64> {
        self.value(ctx, row, p, self.stats[line])
    }

    fn plot_paper(&self, row: &Row, p: usize, line: usize) -> Option<f64> {
        (line == 0).then(|| row.paper.as_ref()?.value(p)).flatten()
    }

    fn y_label(&self) -> &'static str {
        match self.stats {
            [one] => one,
            _ => "count",
        }
    }

    fn ideal_line(&self) -> bool {
        false
    }

    fn describe(&self) -> String {
        format!(
            "cells = {}, the {} over the point's repetitions (`n/a`: the runtime does not count it)",
            self.stats
                .iter()
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(" / "),
            self.reduce_name()
        )
    }

    fn note_label(&self) -> &'static str {
        "Cells"
    }

    fn cell_legend(&self) -> &'static str {
        "Each cell: our count [the paper's count]. `—` = not measured, `n/a` = the runtime \
         does not count it. Rows without a paper value are baselines the paper did not run. \
         Counts grow with the input: at other sizes than the paper's compare their growth with \
         P, not the counts."
    }

    fn plot_name(&self) -> &'static str {
        self.y_label()
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

    #[test]
    fn speedups_follow_the_base() {
        let s = [
            ok_point("serial/front=kernel", Variant::Fj, 1, 2.0),
            ok_point("serial", Variant::Fj, 1, 2.0),
            ok_point("serial", Variant::Fj, 2, 0.5),
        ];
        let ctx = Context {
            summaries: &crate::results::Summaries::from(s.to_vec()),
            cpus: 2,
        };
        let r = fib_row("serial");
        assert_eq!(Time(SpeedupBase::Serial).speedup(&ctx, &r, 2), Some(4.0));
        assert_eq!(Time(SpeedupBase::OneWorker).speedup(&ctx, &r, 2), Some(4.0));
        assert_eq!(Time(SpeedupBase::OneWorker).speedup(&ctx, &r, 1), None);
        assert_eq!(Time(SpeedupBase::Serial).speedup(&ctx, &r, 1), Some(1.0));
        assert_eq!(
            Time(SpeedupBase::Serial).cell(&ctx, &r, 2),
            "0.5000 (4.00x)"
        );
        // With one logical CPU, P = 2 is oversubscribed: its time, marked, no speedup.
        let one = Context { cpus: 1, ..ctx };
        assert_eq!(Time(SpeedupBase::Serial).speedup(&one, &r, 2), None);
        assert_eq!(
            Time(SpeedupBase::Serial).cell(&one, &r, 2),
            "0.5000 (oversubscribed)"
        );
        assert_eq!(Time(SpeedupBase::Serial).plot(&one, &r, 2, 0), None);
    }

    /// In a run merged across machines, each point is oversubscribed against its own machine,
    /// and shows no speedup over a base that another machine measured.
    #[test]
    fn a_point_is_judged_on_its_own_machine() {
        let s = [
            ok_point("serial/front=kernel", Variant::Fj, 1, 2.0),
            ok_point("serial", Variant::Fj, 1, 2.0),
            ok_point("serial", Variant::Fj, 2, 0.5),
            ok_point("serial", Variant::Fj, 16, 0.25),
        ];
        let small = crate::results::this_machine();
        let big = crate::results::Machine {
            cpu_model: "Big".into(),
            cores: 64,
            logical_cpus: 128,
            ..small.clone()
        };
        // P = 16 on the big machine, the rest on the small one (one logical CPU).
        let on = |p16: &crate::results::Machine, rest: &crate::results::Machine| {
            let mut meta = crate::results::Meta::sample("prows-fig3", 1);
            meta.machines = vec![
                crate::results::Measured {
                    machine: p16.clone(),
                    points: vec![s[3].key.to_string()],
                },
                crate::results::Measured {
                    machine: rest.clone(),
                    points: s[..3].iter().map(|x| x.key.to_string()).collect(),
                },
            ];
            crate::results::Summaries::from(s.to_vec()).measured_on(&meta)
        };
        let one_cpu = crate::results::Machine {
            logical_cpus: 1,
            ..small.clone()
        };
        let mixed = on(&big, &one_cpu);
        let ctx = Context {
            summaries: &mixed,
            cpus: 1,
        };
        let r = fib_row("serial");
        // P = 2 on one CPU is oversubscribed; P = 16 on 128 is not, but its bases are another
        // machine's: no speedup either.
        assert!(ctx.oversubscribed(&r, 2));
        assert!(!ctx.oversubscribed(&r, 16));
        assert_eq!(Time(SpeedupBase::OneWorker).speedup(&ctx, &r, 16), None);
        assert_eq!(Time(SpeedupBase::Serial).cell(&ctx, &r, 16), "0.2500");
        // All on the big machine: P = 16 has its speedups.
        let all_big = on(&big, &big);
        let ctx = Context {
            summaries: &all_big,
            cpus: 1,
        };
        assert!(!ctx.oversubscribed(&r, 2));
        assert_eq!(
            Time(SpeedupBase::OneWorker).speedup(&ctx, &r, 16),
            Some(8.0)
        );
        let rows = crate::results::summary_rows(&mixed, 1);
        assert_eq!(
            (
                rows[3].oversubscribed,
                rows[3].scalability_t1,
                rows[3].speedup_ts
            ),
            (false, None, None)
        );
        assert!(rows[2].oversubscribed);
        let rows = crate::results::summary_rows(&all_big, 1);
        assert_eq!(
            (rows[3].oversubscribed, rows[3].scalability_t1),
            (false, Some(8.0))
        );
    }

    #[test]
    fn a_simulated_row_shows_its_time_and_no_speedup() {
        // prows-fig2's `--runtimes abp/sim=unit`: the replay's wall time is no T_P.
        let s = vec![
            ok_point("serial/front=kernel", Variant::Fj, 1, 2.0),
            ok_point("abp/sim=unit", Variant::Fj, 1, 0.1),
            ok_point("abp/sim=unit", Variant::Fj, 2, 0.1),
        ];
        let ctx = Context {
            summaries: &crate::results::Summaries::from(s),
            cpus: 2,
        };
        let r = fib_row("abp/sim=unit");
        for base in [SpeedupBase::Serial, SpeedupBase::OneWorker] {
            assert_eq!(Time(base).speedup(&ctx, &r, 2), None);
            assert_eq!(Time(base).cell(&ctx, &r, 2), "0.1000");
        }
        let rel = crate::figures::ratio::Relative {
            against: &["serial"],
            paper_names: &["serial"],
            reference: "",
            paper_columns: &[],
            paper_p: 1,
            ideal: true,
            y_label: "",
        };
        assert_eq!(rel.cell(&ctx, &r, 2), "0.1000");
    }

    #[test]
    fn counts_reduce_the_repetitions() {
        let mut p1 = ok_point("prows", Variant::Fj, 1, 1.0);
        p1.counters = vec![("deviations".into(), vec![0, 0, 0])];
        let mut p16 = ok_point("prows", Variant::Fj, 16, 1.0);
        p16.counters = vec![
            ("deviations".into(), vec![40, 7, 12]),
            ("steals".into(), Vec::new()),
        ];
        let s = [p1, p16];
        let ctx = Context {
            summaries: &crate::results::Summaries::from(s.to_vec()),
            cpus: 2,
        };
        let r = fib_row("prows");
        let max = Count {
            stats: &["deviations"],
            reduce: Reduce::Max,
        };
        let median = Count {
            reduce: Reduce::Median,
            ..max
        };
        assert_eq!(max.value(&ctx, &r, 16, "deviations"), Some(40.0));
        assert_eq!(median.value(&ctx, &r, 16, "deviations"), Some(12.0));
        assert_eq!(max.cell(&ctx, &r, 1), "0");
        assert_eq!(max.cell(&ctx, &r, 16), "40 (oversubscribed)");
        assert_eq!(max.plot(&ctx, &r, 16, 0), Some(40.0));
        assert_eq!(max.cell(&ctx, &r, 4), "—");
        let both = Count {
            stats: &["steals", "deviations"],
            reduce: Reduce::Max,
        };
        assert_eq!(both.cell(&ctx, &r, 1), "n/a / 0");
        assert_eq!(both.cell(&ctx, &r, 16), "n/a / 40 (oversubscribed)");
        assert_eq!(both.plot(&ctx, &r, 16, 1), Some(40.0));
        assert_eq!(both.y_label(), "count");
    }
}
