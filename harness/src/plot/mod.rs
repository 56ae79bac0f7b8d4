//! The figure's plot: one panel per workload, its metric against P, one line per (variant,
//! runtime): measured lines solid with markers, the paper's dashed in the same colour, and,
//! where the metric is a speedup ([`Metric::ideal_line`](crate::figures::Metric::ideal_line)),
//! the ideal speedup dotted.
//!
//! Axes: P (and a spec's parameter) on a log2 axis, each doubling the same width, ticks at
//! the powers of two. It reaches the paper's largest P where a paper line is drawn, so the
//! paper's curve stays whole, and our few P still take a doubling's width each (P = 1, 2: a
//! quarter of an axis to 16, where a linear one gives them a fifteenth). A speedup's y axis is
//! fitted to the panel's values and the ideal: log2 when they span two doublings or more
//! (equal factors take equal heights, the ideal is the diagonal, a speedup of 1/100 reads as
//! well as one of 16), linear otherwise. A count against a spec's parameter (its growth with
//! the input, over doublings) is fitted the same way, zeros left out of a log2 axis; any other
//! count or size is linear from 0. A panel measured at one P only, of a metric without the
//! ideal (ProWS Figure 4's deviations at P = 16), is drawn as bars, one per line.
//!
//! A speedup figure with the paper's values sets, beside each workload's chart, our value
//! against the paper's at the same P ([`Panel::versus_paper`]): a marker in the line's colour,
//! labelled with P, for every (line, P) where both have a value, and y = x (as fast as the
//! paper) dotted. Both axes share one range fitted to these points alone (log2 or linear as
//! above), so our few P stay readable however far the paper's P go; a marker below the
//! diagonal is a speedup below the paper's. In such a figure a workload without pairs says so
//! in place of that chart; a figure without any (no paper values, or a count, which grows with
//! the input) has no such chart. Each panel's legend is beside its charts, never over the data.
//!
//! The panels are computed from the figure's [`Metric`](crate::figures::Metric) by
//! [`panels`] (`panels.rs`); one drawing code writes them as SVG (`<text>` elements, in the
//! viewer's sans-serif) and PNG (text drawn from the outlines of Hack, a monospace font
//! embedded from `epaint_default_fonts` and registered under the family name the plots ask
//! for, "sans-serif", by [`register_font`], so no font need be installed on the machine).
//! plotters' outline drawing ignores a glyph's left bearing, so narrow glyphs in the PNGs sit
//! a little left of their cell ("1. 04"); a monospace face keeps that smallest.

mod panels;

pub(crate) use panels::{Panel, panels};

use crate::failure::Failure;
use crate::figures::{Figure, XAxis};
use crate::grid::Grid;
use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::ops::{Range, RangeInclusive};
use std::path::Path;
use std::sync::LazyLock;

/// Distinct line colours: the panels' largest, spoonhower-fig5, has 16 lines.
const COLORS: [RGBColor; 20] = [
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
    RGBColor(0, 0, 0),
    RGBColor(255, 187, 120),
    RGBColor(152, 223, 138),
    RGBColor(174, 199, 232),
    RGBColor(255, 152, 150),
    RGBColor(197, 176, 213),
];

/// One axis of a chart: its range and ticks in chart coordinates (the log2 of the value on a
/// log axis) and how a tick is labelled.
#[derive(Debug, Clone, PartialEq)]
struct Axis {
    /// Chart coordinates are log2 of the values.
    log: bool,
    /// The range shown.
    range: Range<f64>,
    /// Where the ticks are.
    ticks: Vec<f64>,
    /// Decimals of a tick's label; `None`: the ticks are powers of two (`16`, `1/4`).
    decimals: Option<usize>,
}

impl Axis {
    /// Linear from 0 to a little above `hi` (at least 1): counts and sizes.
    fn linear(hi: f64) -> Axis {
        let top = hi.max(1.0) * 1.08;
        let (ticks, decimals) = round_ticks(0.0, top, 8);
        Axis {
            log: false,
            range: 0.0..top,
            ticks,
            decimals: Some(decimals),
        }
    }

    /// log2 from 2^`lo` to 2^`hi` and a quarter of a doubling more each side, a tick at every
    /// power of two: worker counts (P = 12 falls between 8 and 16).
    fn octaves(lo: f64, hi: f64) -> Axis {
        Axis::powers_of_two(lo - 0.25..hi + 0.25, lo..=hi)
    }

    /// log2 over `range` (chart coordinates), a tick at every power of two in `ticks`.
    fn powers_of_two(range: Range<f64>, ticks: RangeInclusive<f64>) -> Axis {
        Axis {
            log: true,
            range,
            ticks: (ticks.start().ceil() as i32..=ticks.end().floor() as i32)
                .map(f64::from)
                .collect(),
            decimals: None,
        }
    }

    /// Fitted to the positive values `lo ..= hi`: log2, a tick at every power of two, when
    /// `hi` is 4 `lo` or more (speedups of many P: equal factors take equal lengths); else
    /// linear (over less than two doublings it differs little) with about `n` round ticks.
    fn fitted(lo: f64, hi: f64, n: usize) -> Axis {
        let (a, b) = (lo.log2(), hi.log2());
        if b - a < 2.0 {
            let pad = ((hi - lo) * 0.08).max(hi * 0.04);
            let range = lo - pad..hi + pad;
            let (ticks, decimals) = round_ticks(range.start, range.end, n);
            return Axis {
                log: false,
                range,
                ticks,
                decimals: Some(decimals),
            };
        }
        let mut range = a - (b - a) * 0.06..b + (b - a) * 0.06;
        // A power of two within 0.6 of a doubling beyond the outermost values is shown, so
        // that most values lie between two ticks.
        if a - a.floor() < 0.6 {
            range.start = range.start.min(a.floor() - 0.05);
        }
        if b.ceil() - b < 0.6 {
            range.end = range.end.max(b.ceil() + 0.05);
        }
        Axis::powers_of_two(range.clone(), range.start..=range.end)
    }

    /// The chart coordinate of value `v`.
    fn at(&self, v: f64) -> f64 {
        if self.log { v.log2() } else { v }
    }

    /// The label of the tick at chart coordinate `t`.
    fn label(&self, t: f64) -> String {
        let v = if self.log { t.exp2() } else { t };
        match self.decimals {
            Some(d) => format!("{v:.d$}"),
            None if v >= 1.0 => format!("{v:.0}"),
            None => format!("1/{:.0}", 1.0 / v),
        }
    }

    /// Pixels for the widest tick label and the axis title beside the axis: 12 pixels a
    /// character at size 16, more than the PNG's monospace font takes (its advance is about
    /// 8 pixels there) and than an SVG viewer's sans-serif, so no label is clipped.
    fn label_area(&self) -> u32 {
        let widest = self.ticks.iter().map(|&t| self.label(t).len()).max();
        36 + 12 * widest.unwrap_or(1) as u32
    }
}

/// The axis as a plotters coordinate: its ticks are the key points (no light lines).
impl Ranged for Axis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        RangedCoordf64::from(self.range.clone()).map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.range.clone()
    }
}

/// Ticks at round values in `lo ..= hi`, 1, 2 or 5 times a power of ten apart (the step
/// nearest to `n` ticks), and the decimals that tell them apart.
fn round_ticks(lo: f64, hi: f64, n: usize) -> (Vec<f64>, usize) {
    let raw = (hi - lo) / n as f64;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .min_by(|a, b| (a / raw).ln().abs().total_cmp(&(b / raw).ln().abs()))
        .unwrap_or(magnitude);
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    let ticks = ((lo / step).ceil() as i64..=(hi / step).floor() as i64)
        .map(|k| k as f64 * step)
        .collect();
    (ticks, decimals)
}

/// The grey of the ideal and of y = x.
fn reference_style() -> ShapeStyle {
    BLACK.mix(0.35).stroke_width(1)
}

/// The workers of a panel whose every line has one point, all at the same P, if it is one.
fn one_p(panel: &Panel) -> Option<usize> {
    let mut ps = panel
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|q| q.0));
    let first = ps.next()?;
    let single = panel.series.iter().all(|s| s.points.len() <= 1);
    (single && ps.all(|p| p == first)).then_some(first)
}

/// The chart of a panel at one P ([`one_p`]) of a metric without the ideal line (a count, a
/// size, a ratio) as bars, one per line in the legend's order: ours filled with a marker on
/// top, the paper's hollow with a cross, in the line's colour, on a linear axis from 0.
fn draw_bars<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &Panel,
    p: usize,
    fig: &Figure,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let n = panel.series.len() as f64;
    let x = Axis {
        log: false,
        range: -0.6..n - 0.4,
        ticks: Vec::new(),
        decimals: Some(0),
    };
    let top = panel
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|q| q.1))
        .fold(0.0, f64::max);
    let y = Axis::linear(top);
    let x_desc = format!("P = {p}: a bar per line, in the legend's order");
    let mut chart = ChartBuilder::on(area)
        .caption(&panel.workload, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(y.label_area())
        .build_cartesian_2d(x, y.clone())?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .y_label_formatter(&|t| y.label(*t))
        .x_desc(x_desc.as_str())
        .y_desc(fig.metric.y_label())
        .label_style(("sans-serif", 16))
        .axis_desc_style(("sans-serif", 16))
        .draw()?;
    for (i, s) in panel.series.iter().enumerate() {
        let Some(&(_, v)) = s.points.first() else {
            continue;
        };
        let (color, i) = (COLORS[s.color % COLORS.len()], i as f64);
        let corners = [(i - 0.35, 0.0), (i + 0.35, v)];
        if s.paper {
            chart.draw_series(std::iter::once(Rectangle::new(
                corners,
                color.stroke_width(2),
            )))?;
            chart.draw_series(std::iter::once(Cross::new(
                (i, v),
                5,
                color.stroke_width(2),
            )))?;
        } else {
            chart.draw_series(std::iter::once(Rectangle::new(corners, color.filled())))?;
            chart.draw_series(std::iter::once(Circle::new((i, v), 4, color.filled())))?;
        }
    }
    Ok(())
}

/// The chart of a panel's lines against P (or the spec's parameter); a panel at one P of a
/// metric without the ideal goes to [`draw_bars`] instead.
fn draw_lines<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &Panel,
    max_p: usize,
    fig: &Figure,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let metric = fig.metric;
    if let Some(p) = one_p(panel).filter(|_| !metric.ideal_line()) {
        return draw_bars(area, panel, p, fig);
    }
    let x_max = (max_p as f64).log2().max(1.0);
    // P starts at 1; a parameter's axis starts at its smallest value.
    let x_min = match fig.x_axis {
        XAxis::Workers => 0.0,
        XAxis::SpecParam => panel
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|q| (q.0 as f64).log2().floor()))
            .fold(x_max, f64::min),
    };
    let x = Axis::octaves(x_min, x_max);
    let values = || {
        panel
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
    };
    let positive = || values().filter(|v| *v > 0.0 && v.is_finite());
    let y = if metric.ideal_line() {
        // The ideal runs from 1 to max_p.
        Axis::fitted(
            positive().fold(1.0, f64::min),
            positive().fold(x_max.exp2(), f64::max),
            6,
        )
    } else if matches!(fig.x_axis, XAxis::SpecParam) && positive().next().is_some() {
        // A count against doublings of the input: its growth is the point.
        Axis::fitted(
            positive().fold(f64::INFINITY, f64::min),
            positive().fold(0.0, f64::max),
            6,
        )
    } else {
        Axis::linear(values().fold(0.0, f64::max))
    };
    let mut chart = ChartBuilder::on(area)
        .caption(&panel.workload, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(y.label_area())
        .build_cartesian_2d(x.clone(), y.clone())?;
    chart
        .configure_mesh()
        .x_label_formatter(&|t| x.label(*t))
        .y_label_formatter(&|t| y.label(*t))
        .x_desc(panel.x_desc.as_str())
        .y_desc(metric.y_label())
        .label_style(("sans-serif", 16))
        // Many doublings of a parameter (up to 4096 and more) would overlap at full size.
        .x_label_style(("sans-serif", if x.ticks.len() > 8 { 12 } else { 16 }))
        .axis_desc_style(("sans-serif", 16))
        .draw()?;

    if metric.ideal_line() {
        let ideal: Vec<(f64, f64)> = (0..=x_max.round() as i32)
            .map(|k| (f64::from(k), y.at(f64::from(k).exp2())))
            .collect();
        chart.draw_series(DashedLineSeries::new(ideal, 2, 4, reference_style()))?;
    }
    for s in &panel.series {
        let color = COLORS[s.color % COLORS.len()];
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .filter(|&&(_, v)| !y.log || v > 0.0)
            .map(|&(p, v)| (x.at(p as f64), y.at(v)))
            .collect();
        if s.paper {
            chart.draw_series(DashedLineSeries::new(
                pts.clone(),
                6,
                4,
                color.stroke_width(2),
            ))?;
            // A lone point draws no line: a cross marks it.
            if let [c] = pts[..] {
                chart.draw_series(std::iter::once(Cross::new(c, 5, color.stroke_width(2))))?;
            }
        } else {
            chart.draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))?;
            chart.draw_series(pts.iter().map(|&c| Circle::new(c, 4, color.filled())))?;
        }
    }
    Ok(())
}

/// The chart of ours against the paper's at the same P: a marker per pair in its line's
/// colour, labelled with P (once where several coincide), the line y = x dotted.
fn draw_versus_paper<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &Panel,
    fig: &Figure,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let values = || {
        panel
            .versus_paper
            .iter()
            .flat_map(|l| l.pairs.iter().flat_map(|q| [q.ours, q.paper]))
            .filter(|v| *v > 0.0 && v.is_finite())
    };
    let Some(lo) = values().reduce(f64::min) else {
        return Ok(());
    };
    let a = Axis::fitted(lo, values().fold(lo, f64::max), 5);
    let mut chart = ChartBuilder::on(area)
        .caption("ours against the paper's, same P", ("sans-serif", 16))
        .margin(12)
        .margin_top(18)
        .x_label_area_size(44)
        .y_label_area_size(a.label_area())
        .build_cartesian_2d(a.clone(), a.clone())?;
    let x_desc = format!("the paper's {}", fig.metric.y_label());
    let y_desc = format!("ours: {}", fig.metric.y_label());
    chart
        .configure_mesh()
        .x_label_formatter(&|t| a.label(*t))
        .y_label_formatter(&|t| a.label(*t))
        .x_desc(x_desc.as_str())
        .y_desc(y_desc.as_str())
        .label_style(("sans-serif", 16))
        .axis_desc_style(("sans-serif", 16))
        .draw()?;
    let (r0, r1) = (a.range.start, a.range.end);
    chart.draw_series(DashedLineSeries::new(
        [(r0, r0), (r1, r1)],
        2,
        4,
        reference_style(),
    ))?;
    // Labels of one P that would overlap (closer than about 13% of the chart's width and 8%
    // of its height) say the same: the first is drawn.
    let (near_x, near_y) = ((r1 - r0) * 0.13, (r1 - r0) * 0.08);
    let mut labelled: Vec<(usize, f64, f64)> = Vec::new();
    // A label sits above its marker, to the right, or to the left in the right third (it
    // would leave the chart).
    let text = ("sans-serif", 14).into_font().color(&BLACK.mix(0.75));
    let right = text.pos(Pos::new(HPos::Left, VPos::Bottom));
    let left = text.pos(Pos::new(HPos::Right, VPos::Bottom));
    for l in &panel.versus_paper {
        let color = COLORS[l.color % COLORS.len()];
        let pts: Vec<(usize, f64, f64)> = l
            .pairs
            .iter()
            .filter(|q| q.ours > 0.0 && q.paper > 0.0)
            .map(|q| (q.p, a.at(q.paper), a.at(q.ours)))
            .collect();
        chart.draw_series(LineSeries::new(
            pts.iter().map(|&(_, x, y)| (x, y)),
            color.mix(0.5).stroke_width(1),
        ))?;
        for &(p, x, y) in &pts {
            chart.draw_series(std::iter::once(Circle::new((x, y), 4, color.filled())))?;
            let seen = labelled
                .iter()
                .any(|&(q, u, v)| q == p && (u - x).abs() < near_x && (v - y).abs() < near_y);
            if !seen {
                labelled.push((p, x, y));
                let (dx, style) = if x < r0 + (r1 - r0) * 0.67 {
                    (5, &right)
                } else {
                    (-5, &left)
                };
                chart.draw_series(std::iter::once(
                    EmptyElement::at((x, y)) + Text::new(format!("P={p}"), (dx, -4), style),
                ))?;
            }
        }
    }
    Ok(())
}

/// A panel: its chart of lines, its chart of ours against the paper's where the plot has one
/// (`versus`: some panel of the plot has pairs; a panel without says why), and its legend.
fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &Panel,
    max_p: usize,
    fig: &Figure,
    versus: bool,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    // The legend goes beside the data, never over it.
    let (width, height) = area.dim_in_pixel();
    let (charts, legend) = area.split_horizontally(width * if versus { 76 } else { 58 } / 100);
    if versus {
        let (lines, pairs) = charts.split_horizontally(width * 38 / 100);
        draw_lines(&lines, panel, max_p, fig)?;
        if panel.versus_paper.is_empty() {
            pairs.draw_text(
                "no P with both our value and the paper's",
                &("sans-serif", 13).into_text_style(&pairs),
                (20, height as i32 / 2),
            )?;
        } else {
            draw_versus_paper(&pairs, panel, fig)?;
        }
    } else {
        draw_lines(&charts, panel, max_p, fig)?;
    }
    draw_legend(&legend, panel, fig.metric.ideal_line())
}

/// The legend of a panel, in its own area beside the charts: a sample of each line (the ideal
/// and y = x dotted grey, ours solid with a marker, the paper's dashed) and its label.
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
    let dotted = |y| {
        for x in [6, 16, 26] {
            area.draw(&PathElement::new(
                vec![(x, y), (x + 5, y)],
                reference_style(),
            ))?;
        }
        Ok(())
    };
    if ideal {
        entry(&dotted, "ideal (y = P)")?;
    }
    if !panel.versus_paper.is_empty() {
        entry(&dotted, "ours = the paper's (y = x)")?;
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

/// Whether the plot sets ours against the paper's: some panel has pairs.
fn has_versus(panels: &[Panel]) -> bool {
    panels.iter().any(|p| !p.versus_paper.is_empty())
}

/// Pixel size of the whole plot and the panel grid (columns, rows).
fn layout(panels: &[Panel]) -> ((u32, u32), (usize, usize)) {
    let n = panels.len();
    let versus = has_versus(panels);
    // Wide panels: the chart of lines takes 58% of the width, its legend the rest; with ours
    // against the paper's, the two charts 38% each of a wider panel, the legend the rest.
    let cols = n.clamp(1, if versus { 2 } else { 3 });
    let rows = n.max(1).div_ceil(cols);
    let (w, h) = match (n <= 1, versus) {
        (true, false) => (1100, 520),
        (true, true) => (1500, 520),
        (false, false) => (760, 420),
        (false, true) => (1160, 420),
    };
    ((w * cols as u32, 40 + h * rows as u32), (cols, rows))
}

/// Registers the plots' font once: plotters' `ab_glyph` text looks a family up by name, and
/// every text style here names "sans-serif". Hack (MIT and the Bitstream Vera licence) comes
/// as bytes from `epaint_default_fonts`. Monospace: a label's width is its length (see
/// [`Axis::label_area`]), and plotters, which sets each glyph at its pen position without its
/// left bearing, spaces even cells more evenly than a proportional face's (egui's Ubuntu
/// Light ran "fj abp" together). SVG output needs it too: plotters lays text out by its measure.
fn register_font() -> Result<(), String> {
    static REGISTERED: LazyLock<bool> = LazyLock::new(|| {
        plotters::style::register_font(
            "sans-serif",
            FontStyle::Normal,
            epaint_default_fonts::HACK_REGULAR,
        )
        .is_ok()
    });
    if *REGISTERED {
        Ok(())
    } else {
        Err("the plots' font (Hack, from epaint_default_fonts) could not be read".to_string())
    }
}

fn draw_all<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    fig: &Figure,
    panels: &[Panel],
    max_p: usize,
    subtitle: &str,
) -> Result<(), String> {
    register_font()?;
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(e)?;
    let (title, body) = root.split_vertically(40);
    // The subtitle holds text from outside the code (the CPU model): a control character,
    // which no XML document may hold, even escaped, is drawn as a space.
    let text: String = format!("{}: {subtitle}", fig.id)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    title
        .draw_text(&text, &("sans-serif", 18).into_text_style(&title), (10, 12))
        .map_err(e)?;
    let (_, (cols, rows)) = layout(panels);
    let versus = has_versus(panels);
    for (area, panel) in body.split_evenly((rows, cols)).iter().zip(panels) {
        draw_panel(area, panel, max_p, fig, versus).map_err(e)?;
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

/// Writes the plot as SVG to `path`, whole ([`crate::files::write_atomic`]).
pub(crate) fn write_svg(
    path: &Path,
    fig: &Figure,
    grid: &Grid,
    panels: &[Panel],
    subtitle: &str,
) -> Result<(), Failure> {
    let text = svg_text(fig, grid, panels, subtitle).map_err(Failure::Runtime)?;
    Ok(crate::files::write_atomic(path, text.as_bytes())?)
}

/// The plot as SVG text (for a page that holds it inline).
pub(crate) fn svg_text(
    fig: &Figure,
    grid: &Grid,
    panels: &[Panel],
    subtitle: &str,
) -> Result<String, String> {
    let (size, _) = layout(panels);
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        draw_all(root, fig, panels, max_p(fig, grid, panels), subtitle)?;
    }
    Ok(out)
}

/// Writes the plot as PNG to `path`, whole ([`crate::files::replace_with`]), its text in the
/// registered font ([`register_font`]).
pub(crate) fn write_png(
    path: &Path,
    fig: &Figure,
    grid: &Grid,
    panels: &[Panel],
    subtitle: &str,
) -> Result<(), Failure> {
    let (size, _) = layout(panels);
    // The drawing's errors here are the bitmap backend's, which writes the file: I/O.
    Ok(crate::files::replace_with(path, |tmp| {
        let root = BitMapBackend::new(tmp, size).into_drawing_area();
        draw_all(root, fig, panels, max_p(fig, grid, panels), subtitle)
            .map_err(std::io::Error::other)
    })?)
}

#[cfg(test)]
mod tests {
    use super::panels::{Pair, Pairs, Series, spec_param};
    use super::*;
    use crate::figures::metric::Context;
    use crate::figures::metric::{Count, Reduce};
    use crate::figures::{prows_fig2, prows_fig3};
    use crate::grid::Row;
    use crate::grid::{PaperValues, Selection};
    use crate::testutil::ok_point;
    use stealbench_workloads::Variant;
    use tempfile::TempDir;

    #[test]
    fn paper_lines_and_files() {
        let fig = prows_fig3::figure();
        let grid = Grid::build(fig.rows.clone(), &[1, 2], &Selection::default());
        let summaries = [ok_point("serial/front=kernel", Variant::Fj, 1, 0.1)];
        let ctx = Context {
            summaries: &crate::results::Summaries::from(summaries.to_vec()),
            cpus: 2,
        };
        let ps = panels(&fig, &grid, &ctx);
        assert_eq!(ps.len(), 1);
        let fj_paper = &ps[0].series[0];
        assert!(fj_paper.paper);
        assert_eq!(fj_paper.points[0], (1, 1.0));
        assert_eq!(fj_paper.points[1].0, 2);
        assert!((fj_paper.points[1].1 - 22.05 / 10.84).abs() < 1e-12);
        // fib-sf has no legible T1: no paper scalability at all (its "-stack" row has).
        assert!(
            ps[0]
                .series
                .iter()
                .all(|s| !s.label.starts_with("sf prows") || s.label.contains("nostack"))
        );

        let dir = TempDir::with_prefix("stealbench-plot-").unwrap();
        write_svg(&dir.path().join("p.svg"), &fig, &grid, &ps, "test").unwrap();
        write_png(&dir.path().join("p.png"), &fig, &grid, &ps, "test").unwrap();
        let svg = std::fs::read_to_string(dir.path().join("p.svg")).unwrap();
        assert!(svg.contains("workers P"));
        assert!(svg.contains("ideal"));
        // A control character in the subtitle (a CPU model's) would make the XML invalid.
        let svg = svg_text(&fig, &grid, &ps, "cpu\u{1}model\u{1b}[0m <&>").unwrap();
        assert!(!svg.chars().any(|c| c.is_control() && c != '\n'), "{svg}");
        assert!(svg.contains("cpu model"), "{svg}");
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
            summaries: &crate::results::Summaries::from(summaries.to_vec()),
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
        let dir = TempDir::with_prefix("stealbench-plot-count-").unwrap();
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
            s.key.workload = (*spec).into();
            s.counters = vec![
                ("steals".into(), vec![steals]),
                ("deviations".into(), vec![2 * steals]),
            ];
            s
        };
        let summaries = [point("touchchain/d=32", 5), point("touchchain/d=16", 3)];
        let ctx = Context {
            summaries: &crate::results::Summaries::from(summaries.to_vec()),
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
        assert_eq!(
            spec_param(&"touchtree/t=4095".into()),
            Some(("t".into(), 4095))
        );
        assert_eq!(spec_param(&"touchtree".into()), None);
        let dir = TempDir::with_prefix("stealbench-plot-param-").unwrap();
        write_svg(&dir.path().join("x.svg"), &fig, &grid, &ps, "test").unwrap();
        let svg = std::fs::read_to_string(dir.path().join("x.svg")).unwrap();
        assert!(!svg.contains("workers P"));
    }

    #[test]
    fn speedups_pair_up_with_the_papers_at_the_same_p() {
        let mut fig = prows_fig2::figure();
        let row = |runtime: &str, paper| Row {
            paper,
            ..crate::testutil::fib_row(runtime)
        };
        // The paper: T_s = 8, T1 = 8, T2 not given, T4 = 2, T8 = 1.
        let values = PaperValues {
            ts: Some(8.0),
            values: vec![(1, Some(8.0)), (2, None), (4, Some(2.0)), (8, Some(1.0))],
        };
        fig.rows = vec![row("abp", Some(values)), row("rayon", None)];
        let grid = Grid::build(fig.rows.clone(), &[1, 2, 4], &Selection::default());
        let mut summaries = vec![ok_point("serial/front=kernel", Variant::Fj, 1, 1.0)];
        for rt in ["abp", "rayon"] {
            for (p, t) in [(1, 2.0), (2, 1.0), (4, 0.5)] {
                let mut s = ok_point(rt, Variant::Fj, p, t);
                s.counters = vec![("steals".into(), vec![10 * p as u64])];
                summaries.push(s);
            }
        }
        let ctx = Context {
            summaries: &crate::results::Summaries::from(summaries.to_vec()),
            cpus: 4,
        };
        let ps = panels(&fig, &grid, &ctx);
        // Ours at 1, 2, 4; the paper's at 1, 4, 8: pairs at 1 and 4 only, and none for
        // rayon, which has no paper values.
        let pair = |p, paper, ours| Pair { p, paper, ours };
        assert_eq!(
            ps[0].versus_paper,
            [Pairs {
                label: "fj abp".into(),
                color: 0,
                pairs: vec![pair(1, 1.0, 0.5), pair(4, 4.0, 2.0)],
            }]
        );
        let dir = TempDir::with_prefix("stealbench-plot-versus-").unwrap();
        write_svg(&dir.path().join("v.svg"), &fig, &grid, &ps, "test").unwrap();
        write_png(&dir.path().join("v.png"), &fig, &grid, &ps, "test").unwrap();
        let svg = std::fs::read_to_string(dir.path().join("v.svg")).unwrap();
        assert!(svg.contains("ours against the paper") && svg.contains("P=4"));
        assert!(svg.contains("width=\"1500\""), "one panel, two charts wide");

        // With two CPUs our P = 4 is no speedup: only P = 1 pairs.
        let two = Context { cpus: 2, ..ctx };
        let ps = panels(&fig, &grid, &two);
        assert_eq!(ps[0].versus_paper[0].pairs, [pair(1, 1.0, 0.5)]);

        // A count grows with the input: never set against the paper's, though both exist.
        fig.metric = &Count {
            stats: &["steals"],
            reduce: Reduce::Max,
        };
        let ps = panels(&fig, &grid, &ctx);
        assert!(ps[0].series.iter().any(|s| s.paper));
        assert!(ps[0].versus_paper.is_empty());
        write_svg(&dir.path().join("c.svg"), &fig, &grid, &ps, "test").unwrap();
        let svg = std::fs::read_to_string(dir.path().join("c.svg")).unwrap();
        assert!(!svg.contains("ours against the paper"));
        assert!(svg.contains("width=\"1100\""));
    }

    #[test]
    fn axes_tick_powers_of_two_or_round_values() {
        // Six doublings: log2, a tick at each power of two inside the range, and at the ones
        // just beyond the values.
        let wide = Axis::fitted(0.3, 16.0, 6);
        assert!(wide.log);
        assert_eq!(wide.ticks, [-2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0]);
        let labels: Vec<String> = wide.ticks.iter().map(|&t| wide.label(t)).collect();
        assert_eq!(labels, ["1/4", "1/2", "1", "2", "4", "8", "16"]);
        assert!(wide.range.start < -2.0 && wide.range.end > 4.0);
        assert_eq!(wide.at(8.0), 3.0);
        // Less than two doublings (ours at P = 2 against the paper's): linear, round values.
        let narrow = Axis::fitted(1.0, 2.03, 6);
        assert!(!narrow.log);
        let labels: Vec<String> = narrow.ticks.iter().map(|&t| narrow.label(t)).collect();
        assert_eq!(labels, ["1.0", "1.2", "1.4", "1.6", "1.8", "2.0"]);
        assert!(narrow.range.start < 1.0 && narrow.range.end > 2.03);
        // A lone value still has a range.
        let one = Axis::fitted(1.0, 1.0, 6);
        assert!(one.range.start < 1.0 && one.range.end > 1.0);
        // P: every power of two, however few.
        let p = Axis::octaves(0.0, 1.0);
        assert_eq!(p.ticks, [0.0, 1.0]);
        assert_eq!(p.label(1.0), "2");
        let count = Axis::linear(900.0);
        assert_eq!(count.ticks.first(), Some(&0.0));
        assert_eq!(count.label(200.0), "200");
        assert_eq!(count.at(200.0), 200.0);
    }

    #[test]
    fn a_panel_at_one_p_is_drawn_as_bars() {
        let series = |label: &str, points: Vec<(usize, f64)>| Series {
            label: label.into(),
            color: 0,
            paper: false,
            points,
        };
        let panel = |series| Panel {
            workload: "hw".into(),
            x_desc: "workers P".into(),
            series,
            versus_paper: Vec::new(),
        };
        let at16 = panel(vec![
            series("a", vec![(16, 3.0)]),
            series("b", vec![(16, 5.0)]),
        ]);
        assert_eq!(one_p(&at16), Some(16));
        let apart = panel(vec![
            series("a", vec![(16, 3.0)]),
            series("b", vec![(8, 5.0)]),
        ]);
        assert_eq!(one_p(&apart), None);
        let line = panel(vec![series("a", vec![(1, 3.0), (2, 5.0)])]);
        assert_eq!(one_p(&line), None);
        assert_eq!(one_p(&panel(Vec::new())), None);
    }

    /// PNG text is drawn from the registered font's outlines: the title strip holds ink and
    /// anti-aliased edges (greys between ink and paper), which a bitmap font has none of.
    #[test]
    fn png_text_is_drawn_from_a_real_font() {
        let fig = prows_fig3::figure();
        let grid = Grid::build(fig.rows.clone(), &[1, 2], &Selection::default());
        let summaries = crate::results::Summaries::from(vec![ok_point(
            "serial/front=kernel",
            Variant::Fj,
            1,
            0.1,
        )]);
        let ctx = Context {
            summaries: &summaries,
            cpus: 2,
        };
        let ps = panels(&fig, &grid, &ctx);
        let ((w, h), _) = layout(&ps);
        let mut rgb = vec![0u8; (w * h * 3) as usize];
        let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
        draw_all(root, &fig, &ps, 2, "test").unwrap();
        let title = &rgb[..(w * 40 * 3) as usize];
        let ink = title.iter().filter(|&&v| v < 64).count();
        let edges = title.iter().filter(|&&v| (64..192).contains(&v)).count();
        assert!(ink > 100, "{ink} dark subpixels in the title");
        assert!(edges > 100, "{edges} grey subpixels in the title");
    }

    /// A y axis's label area allows 12 pixels a character at size 16: no tick label of the
    /// registered font is wider.
    #[test]
    fn tick_labels_fit_their_area() {
        register_font().unwrap();
        let font = ("sans-serif", 16).into_font();
        for label in ["1/1024", "0.25", "16384", "100%", "WWWW"] {
            let (width, _) = font.box_size(label).unwrap();
            assert!(width <= 12 * label.len() as u32, "{label}: {width} pixels");
        }
    }
}
