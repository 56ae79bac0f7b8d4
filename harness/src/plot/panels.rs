//! The panels of a figure's plot, computed from its metric over the run's points: one per
//! workload, its lines against P (or a spec's parameter), and ours against the paper's at the
//! same P. The drawing code of `plot` writes them out.

use crate::figures::metric::Context;
use crate::figures::{Figure, XAxis};
use crate::grid::{Availability, Grid, Row};
use crate::runtimes::Arm;
use crate::spec::WorkloadSpec;
use stealbench_workloads::Variant;

/// One line of a panel.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Series {
    /// Legend text.
    pub label: String,
    /// Index into the colour list.
    pub color: usize,
    /// The paper's values (dashed) rather than ours.
    pub paper: bool,
    /// (P, value) points.
    pub points: Vec<(usize, f64)>,
}

/// Our value and the paper's of one line at one P.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Pair {
    /// The workers.
    pub p: usize,
    /// The paper's value.
    pub paper: f64,
    /// Ours.
    pub ours: f64,
}

/// One line's pairs: the P where both our series and the paper's have a value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Pairs {
    /// Our series' legend text.
    pub label: String,
    /// Its colour (index into the colour list).
    pub color: usize,
    /// In the order of P.
    pub pairs: Vec<Pair>,
}

/// One panel: a workload.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Panel {
    /// Workload name.
    pub workload: String,
    /// The x axis's title.
    pub x_desc: String,
    /// Its lines.
    pub series: Vec<Series>,
    /// Ours against the paper's at the same P, for a speedup; empty when no line has both at
    /// any P (and for any other metric).
    pub versus_paper: Vec<Pairs>,
}

/// The panels of `fig` from the run's points: one per workload (spec), lines against P; or,
/// with [`XAxis::SpecParam`], one per workload name, lines against the specs' parameter.
pub(crate) fn panels(fig: &Figure, grid: &Grid, ctx: &Context<'_>) -> Vec<Panel> {
    let metric = fig.metric;
    let lines = metric.lines();
    // One colour per (runtime, variant, line), in row order, the same in every panel.
    let mut keys: Vec<(Arm, Variant, usize)> = Vec::new();
    for (r, _) in &grid.rows {
        for line in 0..lines.len() {
            let k = (r.runtime, r.variant, line);
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    let color_of = |row: &Row, line: usize| {
        keys.iter()
            .position(|k| *k == (row.runtime, row.variant, line))
            .unwrap_or(0)
    };
    let label = |row: &Row, line: usize| {
        // The panel's title names the workload.
        let name = format!(
            "{} {}",
            row.variant,
            crate::figures::suites::legend_name(&row.runtime)
        );
        if lines.len() > 1 {
            format!("{name} {}", lines[line])
        } else {
            name
        }
    };
    if fig.x_axis == XAxis::SpecParam {
        return param_panels(fig, grid, ctx, &color_of, &label);
    }
    grid.workloads()
        .into_iter()
        .map(|w| {
            let mut series = Vec::new();
            let mut versus_paper = Vec::new();
            for (row, a) in grid.rows.iter().filter(|(r, _)| r.workload == w) {
                for line in 0..lines.len() {
                    let (color, name) = (color_of(row, line), label(row, line));
                    let ours: Vec<(usize, f64)> = match a {
                        Availability::Ready => grid
                            .workers
                            .iter()
                            .filter_map(|&p| Some((p, metric.plot(ctx, row, p, line)?)))
                            .collect(),
                        _ => Vec::new(),
                    };
                    let paper: Vec<(usize, f64)> = match row.paper {
                        Some(_) => fig
                            .paper_workers
                            .iter()
                            .filter_map(|&p| Some((p, metric.plot_paper(row, p, line)?)))
                            .collect(),
                        None => Vec::new(),
                    };
                    let pairs = pair_up(&ours, &paper);
                    if metric.ideal_line() && !pairs.is_empty() {
                        versus_paper.push(Pairs {
                            label: name.clone(),
                            color,
                            pairs,
                        });
                    }
                    if !ours.is_empty() {
                        series.push(Series {
                            label: name.clone(),
                            color,
                            paper: false,
                            points: ours,
                        });
                    }
                    if !paper.is_empty() {
                        series.push(Series {
                            label: format!("{name} (paper)"),
                            color,
                            paper: true,
                            points: paper,
                        });
                    }
                }
            }
            Panel {
                workload: w.to_string(),
                x_desc: "workers P".to_string(),
                series,
                versus_paper,
            }
        })
        .collect()
}

/// Our points beside the paper's of the same P, in our points' order; a P that either lacks
/// has no pair.
fn pair_up(ours: &[(usize, f64)], paper: &[(usize, f64)]) -> Vec<Pair> {
    ours.iter()
        .filter_map(|&(p, o)| {
            let &(_, v) = paper.iter().find(|q| q.0 == p)?;
            Some(Pair {
                p,
                paper: v,
                ours: o,
            })
        })
        .collect()
}

/// The parameter a workload spec sets last and its value, if an integer (`touchchain/d=64`:
/// `("d", 64)`).
pub(crate) fn spec_param(spec: &WorkloadSpec) -> Option<(String, usize)> {
    let (k, v) = spec.params().last()?;
    Some((k.clone(), v.parse().ok()?))
}

/// The panels of a figure plotted against its rows' spec parameter: per workload name, one
/// line per (variant, runtime, quantity) and P (named when the grid has several), through
/// the rows' spec values. Ours only: the papers draw these graphs, not numbers.
fn param_panels(
    fig: &Figure,
    grid: &Grid,
    ctx: &Context<'_>,
    color_of: &dyn Fn(&Row, usize) -> usize,
    label: &dyn Fn(&Row, usize) -> String,
) -> Vec<Panel> {
    let mut names: Vec<&str> = Vec::new();
    for (r, _) in &grid.rows {
        let n = r.workload.name();
        if !names.contains(&n) {
            names.push(n);
        }
    }
    names
        .into_iter()
        .map(|name| {
            let mut series: Vec<Series> = Vec::new();
            let mut x_desc = String::new();
            for (row, a) in &grid.rows {
                let x = spec_param(&row.workload);
                let (Some((key, x)), Availability::Ready) = (x, a) else {
                    continue;
                };
                if row.workload.name() != name {
                    continue;
                }
                x_desc = key;
                for line in 0..fig.metric.lines().len() {
                    for &p in &grid.workers {
                        let Some(y) = fig.metric.plot(ctx, row, p, line) else {
                            continue;
                        };
                        let mut l = label(row, line);
                        if grid.workers.len() > 1 {
                            l = format!("{l} P={p}");
                        }
                        match series.iter_mut().find(|s| s.label == l) {
                            Some(s) => s.points.push((x, y)),
                            None => series.push(Series {
                                label: l,
                                color: color_of(row, line),
                                paper: false,
                                points: vec![(x, y)],
                            }),
                        }
                    }
                }
            }
            for s in &mut series {
                s.points.sort_by_key(|&(x, _)| x);
            }
            Panel {
                workload: name.to_string(),
                x_desc,
                series,
                versus_paper: Vec::new(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_legends_name_libforks_arms_as_the_paper_does() {
        let (fig, grid, summaries) = crate::testutil::libfork_fig5_at_1();
        let ctx = Context {
            summaries: &crate::results::Summaries::from(summaries.to_vec()),
            cpus: 2,
        };
        let fib = panels(&fig, &grid, &ctx).remove(0);
        let labels: Vec<&str> = fib.series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["fj Lazy-LF", "fj Busy-LF", "fj rayon"]);
    }
}
