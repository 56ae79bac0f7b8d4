//! `report --against DIR`: each figure of the report beside the reference's run of it (default
//! the committed runs, `paper-figures/runs`), both rendered by this build.
//!
//! * Per claim, three columns: the paper's number, the reference machine's verdict and this
//!   run's; a claim whose verdict differs from the reference's is marked (**differs**).
//! * Per point measured in both, this run's time over the reference's, each as the claims
//!   read a time (the median of its rounds' medians, their range its spread; a run of one
//!   round has none): `faster` when this run's whole spread lies below the reference's,
//!   `slower` when above, else `same` (the spreads overlap).
//! * Both machines are named, and the sizes checked: where they differ, the points ran
//!   different inputs, so only the claims (ratios within each run) are compared and the
//!   per-point times are left out, saying why.

use crate::claims::Judgement;
use crate::claims::quantity::{Estimate, Samples};
use crate::escape::esc;
use crate::page::View;
use crate::results::{Meta, PointSummary};
use crate::table::format_time;
use std::fmt::Write as _;
use std::path::Path;

/// One figure's run as the report rendered it.
pub(crate) struct Side<'a> {
    /// Its `meta.json`.
    pub meta: &'a Meta,
    /// Its view: summaries and verdicts.
    pub view: &'a View,
}

/// One claim in three columns.
struct ClaimRow {
    id: String,
    paper: String,
    reference: Option<String>,
    ours: String,
    differs: bool,
}

/// A point's time as the claims read it: the median of its round medians, their range its
/// spread ([`Samples::estimate`]; a run of one round has no spread).
fn time_of(s: &PointSummary) -> Option<Estimate> {
    s.summary.as_ref()?;
    Samples::rounds(&s.round_medians).estimate()
}

/// A time in seconds with its spread.
fn seconds(e: &Estimate) -> String {
    if e.hi > e.lo {
        format!(
            "{} s [{}-{}]",
            format_time(e.value),
            format_time(e.lo),
            format_time(e.hi)
        )
    } else {
        format!("{} s", format_time(e.value))
    }
}

/// `faster`, `slower` or `same` (within the spread) of `ours` against `theirs`.
fn compare_times(ours: &Estimate, theirs: &Estimate) -> &'static str {
    if ours.hi < theirs.lo {
        "faster"
    } else if ours.lo > theirs.hi {
        "slower"
    } else {
        "same"
    }
}

/// One point in both runs.
struct PointRow {
    point: String,
    ours: Estimate,
    theirs: Estimate,
}

/// One figure beside the reference's run of it.
struct FigureRows {
    id: String,
    ours: String,
    reference: Option<String>,
    /// Why the points' times are not compared (the sizes differ).
    times_left_out: Option<String>,
    claims: Vec<ClaimRow>,
    points: Vec<PointRow>,
}

/// The report's figures beside the reference's runs.
pub(crate) struct Comparison {
    reference: String,
    figures: Vec<FigureRows>,
}

/// The machine (every machine of a run merged across machines) and size of a run, in words.
fn machine(m: &Meta) -> String {
    let machines: Vec<String> = m
        .each_machine()
        .iter()
        .map(|x| format!("{}, {} cores", x.cpu_model, x.cores))
        .collect();
    format!("{}, size {}", machines.join("; "), m.settings.measure.size)
}

/// The verdict of a judgement in one cell.
fn verdict(j: &Judgement) -> String {
    j.verdict_text()
}

/// `ours` beside `theirs` (the reference in `reference`), figure by figure.
pub(crate) fn compare(ours: &[Side<'_>], theirs: &[Side<'_>], reference: &Path) -> Comparison {
    let figures = ours
        .iter()
        .map(|o| {
            let t = theirs.iter().find(|t| t.meta.id == o.meta.id);
            let claims = o
                .view
                .verdicts
                .iter()
                .map(|j| {
                    let r = t.and_then(|t| t.view.verdicts.iter().find(|x| x.id == j.id));
                    ClaimRow {
                        id: j.id.clone(),
                        paper: j.claim.paper.clone(),
                        reference: r.map(verdict),
                        ours: verdict(j),
                        differs: r.is_some_and(|r| r.verdict.word() != j.verdict.word()),
                    }
                })
                .collect();
            let (ours_size, theirs_size) = (
                o.meta.settings.measure.size,
                t.map(|t| t.meta.settings.measure.size),
            );
            let times_left_out = match theirs_size {
                Some(s) if s != ours_size => Some(format!(
                    "sizes differ ({ours_size} here, {s} on the reference): the points ran \
                     different inputs, so only the claims' ratios are compared"
                )),
                _ => None,
            };
            let mut summaries: Vec<&PointSummary> = o.view.summaries.iter().collect();
            summaries.sort_by(|a, b| a.key.cmp(&b.key));
            let points = match (t, &times_left_out) {
                (Some(t), None) => summaries
                    .into_iter()
                    .filter_map(|s| {
                        let r = t.view.summaries.get(&s.key)?;
                        Some(PointRow {
                            point: s.key.to_string(),
                            ours: time_of(s)?,
                            theirs: time_of(r)?,
                        })
                    })
                    .collect(),
                _ => Vec::new(),
            };
            FigureRows {
                id: o.meta.id.clone(),
                ours: machine(o.meta),
                reference: t.map(|t| machine(t.meta)),
                times_left_out,
                claims,
                points,
            }
        })
        .collect();
    Comparison {
        reference: reference.display().to_string(),
        figures,
    }
}

impl Comparison {
    /// How many claims' verdicts differ from the reference's, of how many compared.
    fn differing(&self) -> (usize, usize) {
        let rows = self.figures.iter().flat_map(|f| &f.claims);
        let compared = rows.clone().filter(|c| c.reference.is_some()).count();
        (rows.filter(|c| c.differs).count(), compared)
    }

    /// One line for the terminal.
    pub(crate) fn summary(&self) -> String {
        let (differ, compared) = self.differing();
        format!(
            "against {}: {differ} of {compared} claims' verdicts differ from the reference's",
            self.reference
        )
    }

    /// The section of `README.md`.
    pub(crate) fn markdown(&self) -> String {
        let (differ, compared) = self.differing();
        let mut out = format!(
            "\n## Against the reference runs\n\nEach figure of this report beside the \
             reference's run of it (`{}`), both rendered by this build: per claim the paper's \
             number, the reference machine's verdict and this run's ({differ} of {compared} \
             differ, marked **differs**); per point this run's time over the reference's, each \
             a median with its spread, `faster` or `slower` when the spreads do not overlap, \
             else `same`.\n",
            self.reference
        );
        for f in &self.figures {
            let _ = write!(
                out,
                "\n### {}\n\nThis run: {}. Reference: {}.\n\n",
                f.id,
                f.ours,
                f.reference.as_deref().unwrap_or("no run of this figure")
            );
            let claims = f.claims.iter().map(|c| {
                vec![
                    format!("`{}`{}", c.id, if c.differs { " **differs**" } else { "" }),
                    c.paper.clone(),
                    c.reference.clone().unwrap_or_else(|| "-".to_string()),
                    c.ours.clone(),
                ]
            });
            out.push_str(&md_table(&CLAIM_COLUMNS, claims));
            if let Some(why) = &f.times_left_out {
                let _ = writeln!(out, "\nPoints: not compared; {why}.");
            } else if !f.points.is_empty() {
                out.push('\n');
                out.push_str(&md_table(
                    &POINT_COLUMNS,
                    f.points.iter().map(PointRow::cells),
                ));
            }
        }
        out
    }

    /// The section of `report.html`.
    pub(crate) fn html(&self) -> String {
        let (differ, compared) = self.differing();
        let mut out = format!(
            "<h2 id=\"against\">Against the reference runs</h2>\n<p>Each figure beside the \
             reference's run of it (<code>{}</code>), both rendered by this build: {differ} of \
             {compared} claims' verdicts differ (marked). Per point, this run's time over the \
             reference's, each a median with its spread: faster or slower when the spreads do \
             not overlap, else the same.</p>\n",
            esc(&self.reference)
        );
        for f in &self.figures {
            let _ = write!(
                out,
                "<h3>{}</h3>\n<p>This run: {}. Reference: {}.</p>\n<table><tr><th>claim</th>\
                 <th>paper</th><th>reference machine</th><th>this machine</th></tr>\n",
                esc(&f.id),
                esc(&f.ours),
                esc(f.reference.as_deref().unwrap_or("no run of this figure"))
            );
            for c in &f.claims {
                let _ = writeln!(
                    out,
                    "<tr{}><td><code>{}</code>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    if c.differs { " class=\"fails\"" } else { "" },
                    esc(&c.id),
                    if c.differs { " <b>differs</b>" } else { "" },
                    esc(&c.paper),
                    esc(c.reference.as_deref().unwrap_or("-")),
                    esc(&c.ours)
                );
            }
            out.push_str("</table>\n");
            if let Some(why) = &f.times_left_out {
                let _ = writeln!(out, "<p>Points: not compared; {}.</p>", esc(why));
            } else if !f.points.is_empty() {
                out.push_str("<div class=\"scroll\"><table><tr>");
                for h in POINT_COLUMNS {
                    let _ = write!(out, "<th>{}</th>", esc(h));
                }
                out.push_str("</tr>\n");
                for p in &f.points {
                    out.push_str("<tr>");
                    for c in p.cells() {
                        let _ = write!(out, "<td>{}</td>", esc(&c));
                    }
                    out.push_str("</tr>\n");
                }
                out.push_str("</table></div>\n");
            }
        }
        out
    }
}

/// The columns of the claims' table.
const CLAIM_COLUMNS: [&str; 4] = ["claim", "paper", "reference machine", "this machine"];

/// The columns of the points' table.
const POINT_COLUMNS: [&str; 5] = ["point", "this machine", "reference", "this / reference", ""];

impl PointRow {
    /// The row's cells, in [`POINT_COLUMNS`]' order.
    fn cells(&self) -> Vec<String> {
        vec![
            self.point.clone(),
            seconds(&self.ours),
            seconds(&self.theirs),
            format!("{:.2}", self.ours.value / self.theirs.value),
            compare_times(&self.ours, &self.theirs).to_string(),
        ]
    }
}

/// A Markdown table of `rows` under `head`, each cell through [`cell`].
fn md_table(head: &[&str], rows: impl Iterator<Item = Vec<String>>) -> String {
    let mut out = format!("| {} |\n|{}\n", head.join(" | "), "---|".repeat(head.len()));
    for r in rows {
        let cells: Vec<String> = r.iter().map(|c| cell(c)).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out
}

/// A Markdown table cell: no line breaks, no bare `|`.
fn cell(s: &str) -> String {
    s.replace('\n', " ").replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_compare_by_their_spreads() {
        let s = |v: &[f64]| Samples::rounds(v).estimate().unwrap();
        assert_eq!(
            compare_times(&s(&[1.0, 0.9, 1.1]), &s(&[2.0, 1.8, 2.2])),
            "faster"
        );
        assert_eq!(
            compare_times(&s(&[2.0, 1.8, 2.2]), &s(&[1.0, 0.9, 1.1])),
            "slower"
        );
        assert_eq!(
            compare_times(&s(&[1.0, 0.9, 1.9]), &s(&[2.0, 1.8, 2.2])),
            "same"
        );
    }
}
