//! The figure's plot: its metric against P, one panel per workload, one line per (variant,
//! runtime): measured lines solid with markers, the paper's dashed in the same colour, and,
//! where the metric is a speedup, the ideal speedup dotted; each panel's legend beside its
//! chart, never over the data. Written as SVG (real text) and PNG
//! (text in the built-in pixel font). The values are the figure's [`Metric`]'s.

use crate::figures::metric::Context;
use crate::figures::{Figure, XAxis};
use crate::grid::{Availability, Grid, Row, workload_name};
use crate::pixel_font::PixelText;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

/// One line of a panel.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend text.
    pub label: String,
    /// Index into the colour list.
    pub color: usize,
    /// The paper's values (dashed) rather than ours.
    pub paper: bool,
    /// (P, value) points.
    pub points: Vec<(usize, f64)>,
}

/// One panel: a workload.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    /// Workload name.
    pub workload: String,
    /// The x axis's title.
    pub x_desc: String,
    /// Its lines.
    pub series: Vec<Series>,
}

const COLORS: [RGBColor; 14] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(0, 0, 128),
    RGBColor(128, 128, 0),
    RGBColor(0, 128, 128),
    RGBColor(200, 0, 200),
];

/// The panels of `fig` from the run's points: one per workload (spec), lines against P; or,
/// with [`XAxis::SpecParam`], one per workload name, lines against the specs' parameter.
pub fn panels(fig: &Figure, grid: &Grid, ctx: &Context<'_>) -> Vec<Panel> {
    let metric = fig.metric;
    let lines = metric.lines();
    // One colour per (runtime, variant, line), in row order, the same in every panel.
    let mut keys: Vec<(&str, &str, usize)> = Vec::new();
    for (r, _) in &grid.rows {
        for line in 0..lines.len() {
            let k = (r.runtime.as_str(), r.variant.name(), line);
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    let color_of = |row: &Row, line: usize| {
        keys.iter()
            .position(|k| *k == (row.runtime.as_str(), row.variant.name(), line))
            .unwrap_or(0)
    };
    let label = |row: &Row, line: usize| {
        // The panel's title names the workload.
        let name = format!("{} {}", row.variant, row.runtime);
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
            for (row, a) in grid.rows.iter().filter(|(r, _)| r.workload == w) {
                for line in 0..lines.len() {
                    let (color, name) = (color_of(row, line), label(row, line));
                    if *a == Availability::Ready {
                        let points: Vec<(usize, f64)> = grid
                            .workers
                            .iter()
                            .filter_map(|&p| Some((p, metric.plot(ctx, row, p, line)?)))
                            .collect();
                        if !points.is_empty() {
                            series.push(Series {
                                label: name.clone(),
                                color,
                                paper: false,
                                points,
                            });
                        }
                    }
                    if row.paper.is_some() {
                        let points: Vec<(usize, f64)> = fig
                            .paper_workers
                            .iter()
                            .filter_map(|&p| Some((p, metric.plot_paper(row, p, line)?)))
                            .collect();
                        if !points.is_empty() {
                            series.push(Series {
                                label: format!("{name} (paper)"),
                                color,
                                paper: true,
                                points,
                            });
                        }
                    }
                }
            }
            Panel {
                workload: w,
                x_desc: "workers P".to_string(),
                series,
            }
        })
        .collect()
}

/// The parameter a workload spec sets last and its value, if an integer (`touchchain/d=64`:
/// `("d", 64)`).
pub fn spec_param(spec: &str) -> Option<(String, usize)> {
    let (_, overrides) = stealbench_workloads::params::split_spec(spec).ok()?;
    let (k, v) = overrides.last()?;
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
        let n = workload_name(&r.workload);
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
                if workload_name(&row.workload) != name {
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
            }
        })
        .collect()
}

fn x_of(p: usize) -> f64 {
    (p as f64).log2()
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &Panel,
    max_p: usize,
    fig: &Figure,
) -> Result<(), String> {
    let metric = fig.metric;
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    // The legend goes beside the data, never over it.
    let (width, _) = area.dim_in_pixel();
    let (area, legend) = area.split_horizontally(width * 58 / 100);
    let area = &area;
    let x_max = x_of(max_p).max(1.0);
    // P starts at 1; a parameter's axis starts at its smallest value.
    let x_min = match fig.x_axis {
        XAxis::Workers => 0.0,
        XAxis::SpecParam => panel
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|q| x_of(q.0).floor()))
            .fold(x_max, f64::min),
    };
    // The ideal line reaches max_p; a count starts from an empty axis.
    let y_floor = if metric.ideal_line() {
        max_p as f64
    } else {
        1.0
    };
    let y_max = panel
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(y_floor, f64::max)
        * 1.08;
    let mut chart = ChartBuilder::on(area)
        .caption(&panel.workload, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(match y_max {
            y if y >= 10_000.0 => 92,
            y if y >= 1_000.0 => 76,
            _ => 56,
        })
        .build_cartesian_2d(x_min - 0.25..x_max + 0.25, 0f64..y_max)
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_labels(((x_max - x_min) as usize + 1) * 2 + 1)
        .x_label_formatter(&|x| {
            if (x - x.round()).abs() < 1e-9 && *x >= 0.0 {
                format!("{}", 2f64.powf(x.round()) as usize)
            } else {
                String::new()
            }
        })
        .y_labels(8)
        // Values below 10 (a speedup under 1, a few MiB) need a decimal to tell the ticks apart.
        .y_label_formatter(&|y| {
            if y_max < 10.0 {
                format!("{y:.1}")
            } else {
                format!("{y:.0}")
            }
        })
        .x_desc(panel.x_desc.as_str())
        .y_desc(metric.y_label())
        .label_style(("sans-serif", 16))
        .axis_desc_style(("sans-serif", 16))
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(e)?;

    if metric.ideal_line() {
        let ideal: Vec<(f64, f64)> = (0..=x_max.round() as u32)
            .map(|k| (f64::from(k), 2f64.powi(k as i32)))
            .collect();
        chart
            .draw_series(DashedLineSeries::new(
                ideal,
                2,
                4,
                BLACK.mix(0.35).stroke_width(1),
            ))
            .map_err(e)?
            .label("ideal")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], BLACK.mix(0.35)));
    }

    for s in &panel.series {
        let color = COLORS[s.color % COLORS.len()];
        let pts: Vec<(f64, f64)> = s.points.iter().map(|&(p, v)| (x_of(p), v)).collect();
        if s.paper {
            chart
                .draw_series(DashedLineSeries::new(
                    pts.clone(),
                    6,
                    4,
                    color.stroke_width(2),
                ))
                .map_err(e)?
                .label(s.label.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 10, y)], color.stroke_width(2))
                });
            // A lone point draws no line: a cross marks it.
            if let [c] = pts[..] {
                chart
                    .draw_series(std::iter::once(Cross::new(c, 5, color.stroke_width(2))))
                    .map_err(e)?;
            }
        } else {
            chart
                .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                .map_err(e)?
                .label(s.label.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 24, y)], color.stroke_width(2))
                });
            chart
                .draw_series(pts.iter().map(|&c| Circle::new(c, 4, color.filled())))
                .map_err(e)?;
        }
    }
    draw_legend(&legend, panel, metric.ideal_line()).map_err(e)?;
    Ok(())
}

/// The legend of a panel, in its own area beside the chart: a sample of each line (the ideal
/// dotted grey, ours solid with a marker, the paper's dashed) and its label.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &Panel,
    ideal: bool,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let style = ("sans-serif", 13).into_text_style(area);
    let mut y = 48;
    let mut entry = |sample: &dyn Fn(i32) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>,
                     label: &str|
     -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        sample(y)?;
        area.draw_text(label, &style, (40, y - 7))?;
        y += 20;
        Ok(())
    };
    if ideal {
        entry(
            &|y| {
                for x in [6, 16, 26] {
                    area.draw(&PathElement::new(
                        vec![(x, y), (x + 5, y)],
                        BLACK.mix(0.35).stroke_width(1),
                    ))?;
                }
                Ok(())
            },
            "ideal",
        )?;
    }
    for s in &panel.series {
        let color = COLORS[s.color % COLORS.len()];
        entry(
            &|y| {
                if s.paper {
                    for x in [4, 18] {
                        area.draw(&PathElement::new(
                            vec![(x, y), (x + 10, y)],
                            color.stroke_width(2),
                        ))?;
                    }
                    area.draw(&Cross::new((16, y), 4, color.stroke_width(2)))
                } else {
                    area.draw(&PathElement::new(
                        vec![(4, y), (30, y)],
                        color.stroke_width(2),
                    ))?;
                    area.draw(&Circle::new((17, y), 4, color.filled()))
                }
            },
            &s.label,
        )?;
    }
    Ok(())
}

/// Pixel size of the whole plot and the panel grid (columns, rows).
fn layout(n: usize) -> ((u32, u32), (usize, usize)) {
    let cols = n.clamp(1, 3);
    let rows = n.max(1).div_ceil(cols);
    // Wide panels: the chart takes 58% of the width, its legend the rest.
    let (w, h) = if n <= 1 { (1100, 520) } else { (760, 420) };
    ((w * cols as u32, 40 + h * rows as u32), (cols, rows))
}

fn draw_all<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    fig: &Figure,
    panels: &[Panel],
    max_p: usize,
    subtitle: &str,
) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(e)?;
    let (title, body) = root.split_vertically(40);
    title
        .draw_text(
            &format!("{}: {subtitle}", fig.id),
            &("sans-serif", 18).into_text_style(&title),
            (10, 12),
        )
        .map_err(e)?;
    let (_, (cols, rows)) = layout(panels.len());
    for (area, panel) in body.split_evenly((rows, cols)).iter().zip(panels) {
        draw_panel(area, panel, max_p, fig)?;
    }
    root.present().map_err(e)?;
    Ok(())
}

/// The largest x any panel shows: P, or the parameter's largest value. P reaches the paper's
/// worker counts only where a paper line is drawn (a figure whose paper gives no plotted values
/// keeps the axis to our points).
fn max_p(fig: &Figure, grid: &Grid, panels: &[Panel]) -> usize {
    if fig.x_axis == XAxis::SpecParam {
        return panels
            .iter()
            .flat_map(|p| p.series.iter().flat_map(|s| s.points.iter().map(|q| q.0)))
            .max()
            .unwrap_or(1);
    }
    let paper_lines = panels.iter().any(|p| p.series.iter().any(|s| s.paper));
    let paper: &[usize] = if paper_lines { fig.paper_workers } else { &[] };
    grid.workers.iter().chain(paper).copied().max().unwrap_or(1)
}

/// Writes the plot as SVG to `path`.
pub fn write_svg(
    path: &Path,
    fig: &Figure,
    grid: &Grid,
    panels: &[Panel],
    subtitle: &str,
) -> Result<(), String> {
    let (size, _) = layout(panels.len());
    let root = SVGBackend::new(path, size).into_drawing_area();
    draw_all(root, fig, panels, max_p(fig, grid, panels), subtitle)
}

/// Writes the plot as PNG to `path`, its text in the built-in pixel font.
pub fn write_png(
    path: &Path,
    fig: &Figure,
    grid: &Grid,
    panels: &[Panel],
    subtitle: &str,
) -> Result<(), String> {
    let (size, _) = layout(panels.len());
    let root = PixelText(BitMapBackend::new(path, size)).into_drawing_area();
    draw_all(root, fig, panels, max_p(fig, grid, panels), subtitle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::metric::{Count, Reduce};
    use crate::figures::prows_fig3;
    use crate::grid::Selection;
    use crate::testutil::{TempDir, ok_point};
    use stealbench_workloads::Variant;

    #[test]
    fn paper_lines_and_files() {
        let fig = prows_fig3::figure();
        let grid = Grid::build(fig.rows.clone(), &[1, 2], &Selection::default());
        let summaries = vec![ok_point("serial", Variant::Fj, 1, 0.1)];
        let ctx = Context {
            summaries: &summaries,
            cpus: 2,
        };
        let ps = panels(&fig, &grid, &ctx);
        assert_eq!(ps.len(), 1);
        let fj_paper = &ps[0].series[0];
        assert!(fj_paper.paper);
        assert_eq!(fj_paper.points[0], (1, 1.0));
        assert_eq!(fj_paper.points[1].0, 2);
        assert!((fj_paper.points[1].1 - 22.05 / 10.84).abs() < 1e-12);
        // fib-sf has no legible T1: no paper scalability at all.
        assert!(
            ps[0]
                .series
                .iter()
                .all(|s| !s.label.starts_with("sf prows"))
        );

        let dir = TempDir::new("plot");
        write_svg(&dir.path().join("p.svg"), &fig, &grid, &ps, "test").unwrap();
        write_png(&dir.path().join("p.png"), &fig, &grid, &ps, "test").unwrap();
        let svg = std::fs::read_to_string(dir.path().join("p.svg")).unwrap();
        assert!(svg.contains("workers P"));
        assert!(svg.contains("ideal"));
        let png = std::fs::read(dir.path().join("p.png")).unwrap();
        assert_eq!(&png[1..4], b"PNG");
    }

    #[test]
    fn oversubscribed_points_are_no_speedup_but_counts_are_plotted() {
        let mut fig = prows_fig3::figure();
        fig.rows.retain(|r| r.runtime == "abp");
        let grid = Grid::build(fig.rows.clone(), &[1, 2, 4], &Selection::default());
        let mut summaries: Vec<_> = [(1, 1.0), (2, 0.5), (4, 0.3)]
            .into_iter()
            .map(|(p, t)| ok_point("abp", Variant::Fj, p, t))
            .collect();
        for s in &mut summaries {
            s.counters = vec![("steals".into(), vec![s.key.workers as u64, 7])];
        }
        // Two logical CPUs: P = 4 is oversubscribed.
        let ctx = Context {
            summaries: &summaries,
            cpus: 2,
        };
        let ours = |ps: &[Panel]| ps[0].series.iter().find(|s| !s.paper).unwrap().clone();
        assert_eq!(
            ours(&panels(&fig, &grid, &ctx)).points,
            [(1, 1.0), (2, 2.0)]
        );
        fig.metric = &Count {
            stats: &["steals"],
            reduce: Reduce::Max,
        };
        assert_eq!(
            ours(&panels(&fig, &grid, &ctx)).points,
            [(1, 7.0), (2, 7.0), (4, 7.0)]
        );
        let dir = TempDir::new("plot-count");
        let ps = panels(&fig, &grid, &ctx);
        write_svg(&dir.path().join("c.svg"), &fig, &grid, &ps, "test").unwrap();
        let svg = std::fs::read_to_string(dir.path().join("c.svg")).unwrap();
        assert!(svg.contains("steals") && !svg.contains("ideal"));
    }

    #[test]
    fn a_spec_parameter_is_the_x_axis() {
        let fig = crate::figures::spoonhower_fig5::figure();
        let grid = Grid::build(fig.rows.clone(), &[2], &Selection::default());
        let point = |spec: &str, steals: u64| {
            let mut s = ok_point("abp", Variant::Sf, 2, 0.01);
            s.key.workload = spec.to_string();
            s.counters = vec![
                ("steals".into(), vec![steals]),
                ("deviations".into(), vec![2 * steals]),
            ];
            s
        };
        let summaries = vec![point("touchchain/d=32", 5), point("touchchain/d=16", 3)];
        let ctx = Context {
            summaries: &summaries,
            cpus: 2,
        };
        let ps = panels(&fig, &grid, &ctx);
        assert_eq!(ps.len(), 2, "one panel per workload, not per spec");
        assert_eq!(
            (ps[0].workload.as_str(), ps[0].x_desc.as_str()),
            ("touchchain", "d")
        );
        let steals = ps[0]
            .series
            .iter()
            .find(|s| s.label == "sf abp steals")
            .unwrap();
        assert_eq!(steals.points, [(16, 3.0), (32, 5.0)]);
        assert!(ps[1].series.is_empty());
        assert_eq!(spec_param("touchtree/t=4095"), Some(("t".into(), 4095)));
        assert_eq!(spec_param("touchtree"), None);
        let dir = TempDir::new("plot-param");
        write_svg(&dir.path().join("x.svg"), &fig, &grid, &ps, "test").unwrap();
        let svg = std::fs::read_to_string(dir.path().join("x.svg")).unwrap();
        assert!(!svg.contains("workers P"));
    }
}
