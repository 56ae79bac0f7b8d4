//! `stealbench report`: the latest run of every figure, its claims' verdicts, tables and plots,
//! gathered in `paper-figures/README.md` (every figure with its verdicts and links) and one
//! self-contained `report.html` (styles and plots inline: it reads offline).
//!
//! Each run is rendered again from its own files (`meta.json`, `raw.csv`) by this build's
//! figures and claims, through the same view of a run as `reproduce` (`page::view`), so
//! the page and the figures' `.md` files agree.

use crate::claims::{self, Judgement};
use crate::cli::ReportArgs;
use crate::escape::{esc, md_code, md_text};
use crate::failure::Failure;
use crate::figures::{self, Figure};
use crate::results::{self, Meta};
use crate::{page, plan, plot};
use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// One figure's run, rendered.
struct Rendered {
    fig: Figure,
    meta: Meta,
    dir: PathBuf,
    grid: crate::grid::Grid,
    svg: String,
    /// The figure's table, verdicts, page and plots.
    view: page::View,
}

/// The run directories under `path`: `path` itself if it holds a `meta.json`, else every
/// `ID/TIMESTAMP/` below it (a results root).
fn run_dirs(path: &Path) -> Result<Vec<PathBuf>, Failure> {
    if path.join("meta.json").is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    if !path.is_dir() {
        return Err(Failure::Usage(format!(
            "{}: neither a run directory (no meta.json) nor a results root",
            path.display()
        )));
    }
    let mut out = Vec::new();
    let entries = |p: &Path| -> Result<Vec<PathBuf>, Failure> {
        let mut v: Vec<PathBuf> = fs::read_dir(p)
            .map_err(|e| Failure::Io(format!("{}: {e}", p.display())))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir())
            .collect();
        v.sort();
        Ok(v)
    };
    for id_dir in entries(path)? {
        for run in entries(&id_dir)? {
            if run.join("meta.json").is_file() {
                out.push(run);
            }
        }
    }
    Ok(out)
}

/// The latest finished run of each figure among `dirs` (directory names are timestamps), in
/// the registry's order of figures. A shard (`reproduce --shard`) is a part of a run, not a
/// figure's run: it is left out, and a note names it (merge the shards first).
pub(crate) fn latest_runs(dirs: &[PathBuf]) -> Result<Vec<(PathBuf, Meta)>, Failure> {
    let mut by_id: BTreeMap<String, (PathBuf, Meta)> = BTreeMap::new();
    for d in dirs {
        for run in run_dirs(d)? {
            let meta = Meta::read(&run).map_err(Failure::from)?;
            if let Some(shard) = meta.settings.shard {
                errln!(
                    "note: {} is shard {shard} of a run of {}, left out: merge its shards \
                     (stealbench merge) and report the merged run",
                    run.display(),
                    meta.id
                );
                continue;
            }
            if !meta.finished {
                continue;
            }
            let newer = by_id
                .get(&meta.id)
                .is_none_or(|(_, m)| m.timestamp <= meta.timestamp);
            if newer {
                by_id.insert(meta.id.clone(), (run, meta));
            }
        }
    }
    Ok(figures::FIGURES
        .iter()
        .filter_map(|f| by_id.remove(f.id))
        .collect())
}

/// The `raw.csv` of the finished run `dir`, read through the checks of `merge`
/// ([`crate::cluster::read_part`]): a file missing or damaged (a row twice, of another size or
/// round, cut short), or lacking some of the run's measurements (unless a `--force` merge
/// made it so, as its page says), is one line, exit code 2.
fn whole_run(fig: &Figure, dir: &Path, meta: &Meta) -> Result<results::Store, Failure> {
    let part = crate::cluster::read_part(fig, dir, meta)?;
    let merged = !meta.merged_from.is_empty();
    let lacking = part.lacking.filter(|_| !merged);
    if let Some(problem) = part.problems.into_iter().chain(lacking).next() {
        return Err(Failure::Usage(format!(
            "{problem}: report renders whole runs; resume it (stealbench reproduce {} --resume \
             {}) and report again",
            meta.id,
            dir.display()
        )));
    }
    Ok(results::Store::read(&dir.join("raw.csv"))?)
}

/// Renders the run in `dir` with this build's figure and claims, as `reproduce` renders it.
fn render(dir: &Path, meta: Meta) -> Result<Rendered, Failure> {
    let fig = plan::lookup_figure(&meta.id)?;
    // The settings as merge and --resume check them.
    plan::check_settings(&meta.settings, &fig).map_err(|f| {
        Failure::Usage(format!(
            "{}: not a run directory (its meta.json is invalid: {})",
            dir.display(),
            f.message()
        ))
    })?;
    let grid = plan::run_grid(&fig, &meta.settings);
    let store = whole_run(&fig, dir, &meta)?;
    let view = page::view(&fig, &grid, &meta, &store, &HashMap::new());
    let svg =
        plot::svg_text(&fig, &grid, &view.panels, &view.subtitle).map_err(Failure::Runtime)?;
    Ok(Rendered {
        fig,
        meta,
        dir: dir.to_path_buf(),
        grid,
        svg,
        view,
    })
}

/// `stealbench report`.
pub(crate) fn report_command(args: &ReportArgs) -> Result<i32, Failure> {
    let dirs = if args.dirs.is_empty() {
        vec![PathBuf::from("results")]
    } else {
        args.dirs.clone()
    };
    let runs = latest_runs(&dirs)?;
    if runs.is_empty() {
        return Err(Failure::Usage(format!(
            "no finished run found in {} (run `stealbench reproduce ID` first)",
            dirs.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let rendered: Vec<Rendered> = runs
        .into_iter()
        .map(|(d, m)| render(&d, m))
        .collect::<Result<_, _>>()?;
    let missing: Vec<&str> = figures::FIGURES
        .iter()
        .map(|f| f.id)
        .filter(|id| rendered.iter().all(|r| r.fig.id != *id))
        .collect();
    let out = &args.figures_dir;
    fs::create_dir_all(out).map_err(|e| Failure::Io(format!("{}: {e}", out.display())))?;
    let readme = out.join("README.md");
    let html = out.join("report.html");
    let write = |p: &Path, text: String| {
        crate::files::write_atomic(p, text.as_bytes()).map_err(|e| Failure::Io(e.to_string()))
    };
    let against = match &args.against {
        Some(dir) => {
            let theirs: Vec<Rendered> = latest_runs(std::slice::from_ref(dir))?
                .into_iter()
                .filter(|(_, m)| rendered.iter().any(|r| r.meta.id == m.id))
                .map(|(d, m)| render(&d, m))
                .collect::<Result<_, _>>()?;
            Some(crate::against::compare(
                &sides(&rendered),
                &sides(&theirs),
                dir,
            ))
        }
        None => None,
    };
    let (md, page) = against
        .as_ref()
        .map_or_else(Default::default, |c| (c.markdown(), c.html()));
    {
        // Each figure's files below take the lock in their turn.
        let _lock = crate::files::lock_dir(out)?;
        write(&readme, readme_text(&rendered, &missing) + &md)?;
        write(&html, html_text(&rendered, &missing, &page))?;
    }
    // Each figure's page and plots, as `reproduce` wrote them, but by this build.
    for r in &rendered {
        let v = &r.view;
        page::write_figure_files(out, &r.fig, &v.page, &r.grid, &v.panels, &v.subtitle)?;
    }
    let all: Vec<Judgement> = rendered
        .iter()
        .flat_map(|r| r.view.verdicts.clone())
        .collect();
    for r in &rendered {
        outln!(
            "{:<16} {} ({}{})",
            r.fig.id,
            claims::summary(&r.view.verdicts),
            r.dir.display(),
            results::build_note(&r.meta.build)
                .map(|b| format!("; {b}"))
                .unwrap_or_default()
        );
    }
    if !missing.is_empty() {
        outln!("no run of: {}", missing.join(", "));
    }
    if let Some(c) = &against {
        outln!("{}", c.summary());
    }
    outln!(
        "\n{} figures, {}\nwrote {}, {} and each figure's .md, .svg and .png in {}",
        rendered.len(),
        claims::summary(&all),
        readme.display(),
        html.display(),
        out.display()
    );
    Ok(0)
}

/// What `paper-figures/README.md` says before the verdicts.
const README_HEAD: &str = "\
# paper-figures/

`stealbench reproduce <id>` writes here, for each figure or table `<id>` (and `stealbench
report` writes them all again from each figure's latest run):

| file | contents |
|---|---|
| `<id>.md` | the paper's claims that the figure tests with their verdicts on this run, then the table in the paper's layout (each cell ours with the paper's beside it), the machine, the build, the size (every workload's input parameters) and the run directory it came from |
| `<id>.svg`, `<id>.png` | the metric against P (log2), one panel per workload: ours solid with markers, the paper's dashed in the same colour, the ideal dotted (a count at one P: bars, the paper's hollow); for a speedup with the paper's values, beside it ours against the paper's at the same P |
| `reference/*.csv` | the papers' own numbers and inputs (copied from the papers; embedded in the binary) |
| `runs/<id>/<timestamp>/` | the committed runs' raw data: `raw.csv`, `summary.csv`, `claims.csv`, `meta.json` |

`stealbench report` writes this page and [`report.html`](report.html) (every figure's verdicts,
plot and table in one self-contained page) from the latest run of every figure; `stealbench
claims` lists every claim with its kind, check and band without running anything (`--format
csv` for a program).

A claim is of one of three kinds: a paper's (the tally below counts these only), ours (the
`steal-scaling` figure's, about our own runtimes), or a regression check of our own
construction (it holds by how it is built: a forced schedule, a claim implied by another, the
same code path twice, a band drawn from its own data); the last two are listed apart, under
their own headings, with their verdicts. Each case of a claim (a benchmark, a d, a P) has its
own verdict: `holds` or `fails` only when the run's whole spread (rounds for a time,
repetitions for a count) lies inside or outside the band, `inconclusive` when it crosses the
band's edge, `n/a` when the run did not measure it. A claim's verdict is the worst of its
cases', unless a gate says the run cannot decide it: `inconclusive` for a time at a P beyond
the machine's cores (a count or memory point is measured there, oversubscribed), fewer than 3
rounds for a time, or an input below the size where the effect shows; `n/a` for a system
stealbench only stands in for or a runtime this build lacks. A gated claim says what its cases
would give (`would fail: fib`), a failure names its measured cause or says `cause unknown`, a
verdict decided on oversubscribed points says so, and a run made by a dirty build or by another
build than the one that wrote this page is marked in the runs table and beside its verdicts.
Measured results, each with its machine and date, are in [`measurements.md`](measurements.md)
and [`steal-path.md`](steal-path.md).
";

/// The commit of the build that made the run and, when it was a dirty build or another commit
/// than this build's, why that matters ([`results::build_note`]).
fn build_cell(meta: &Meta) -> (String, Option<String>) {
    (
        meta.build.git_commit.clone(),
        results::build_note(&meta.build),
    )
}

/// One claim's bullet of `paper-figures/README.md`.
fn readme_bullet(j: &Judgement) -> String {
    let kind = match j.claim.kind {
        claims::Kind::Regression(why) => format!(" By construction: {why}."),
        _ => String::new(),
    };
    format!(
        "- `{}`: {}. Paper: \"{}\" ({}). Cases: {} (band {}).{kind}\n",
        j.id,
        j.verdict_markdown(),
        j.claim.quote,
        j.claim.paper,
        j.cases_text(),
        j.claim.check.band(),
    )
}

/// `paper-figures/README.md`.
fn readme_text(rendered: &[Rendered], missing: &[&str]) -> String {
    let mut out = README_HEAD.to_string();
    let all: Vec<Judgement> = rendered
        .iter()
        .flat_map(|r| r.view.verdicts.clone())
        .collect();
    let papers = claims::of_kind(&all, "paper");
    out.push_str(&format!(
        "\n## The committed runs' verdicts\n\n{} claims of the papers in {} figures: {}. \
         Apart from them: {}. Written by `stealbench report` on {}.\n\n",
        papers.len(),
        rendered.len(),
        claims::tally(&papers),
        claims::apart(&all).unwrap_or_else(|| "none".to_string()),
        results::timestamps(SystemTime::now()).0
    ));
    out.push_str(
        "| figure | size | machine | build | the papers' claims | ours, regression checks | run |\n\
         |---|---|---|---|---|---|---|\n",
    );
    for r in rendered {
        let (commit, note) = build_cell(&r.meta);
        let others: Vec<Judgement> = r
            .view
            .verdicts
            .iter()
            .filter(|j| j.claim.kind != claims::Kind::Paper)
            .cloned()
            .collect();
        out.push_str(&format!(
            "| [{0}]({0}.md) | {1} | {2} | {3} | {4} | {5} | `{6}` |\n",
            r.fig.id,
            r.meta.settings.measure.size,
            r.meta
                .each_machine()
                .iter()
                .map(|m| format!("{}, {} cores", md_text(&m.cpu_model), m.cores))
                .collect::<Vec<_>>()
                .join("; "),
            // The note names the run's commit; a clean run of this build's, the commit alone.
            note.map_or_else(
                || format!("`{}`", md_code(&commit)),
                |n| format!("**{}**", md_text(&n))
            ),
            claims::tally(&claims::of_kind(&r.view.verdicts, "paper")),
            if others.is_empty() {
                "none".to_string()
            } else {
                claims::tally(&others)
            },
            md_code(&r.dir.display().to_string())
        ));
    }
    if !missing.is_empty() {
        out.push_str(&format!("\nNo run of: {}.\n", missing.join(", ")));
    }
    for r in rendered {
        let papers = claims::of_kind(&r.view.verdicts, "paper");
        if papers.is_empty() {
            continue;
        }
        out.push_str(&format!(
            "\n### [{0}]({0}.md): {1}\n\n",
            r.fig.id, r.fig.title
        ));
        for j in &papers {
            out.push_str(&readme_bullet(j));
        }
    }
    for word in ["ours", "regression"] {
        let js = claims::of_kind(&all, word);
        if js.is_empty() {
            continue;
        }
        out.push_str(&format!(
            "\n## {}\n\n{}: not in the tally of the papers' claims.\n\n",
            claims::Kind::heading(word),
            claims::tally(&js)
        ));
        for j in &js {
            out.push_str(&readme_bullet(j));
        }
    }
    out
}

/// The CSS class of a claim's verdict.
fn class(j: &Judgement) -> &'static str {
    verdict_class(&j.verdict)
}

const STYLE: &str = "body{font-family:sans-serif;margin:2em auto;max-width:1400px;color:#222}\
table{border-collapse:collapse;margin:1em 0;font-size:13px}\
td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top;text-align:left}\
th{background:#f0f0f0}\
.holds{background:#d9f2d9}.fails{background:#f8d0d0}.inconclusive{background:#fff1c2}\
.na{background:#e6e6e6}.verdict{font-weight:bold;white-space:nowrap}\
.plot svg{max-width:100%;height:auto}.caption{font-size:13px;color:#444}\
.scroll{overflow-x:auto}";

/// The CSS class of a verdict.
fn verdict_class(v: &claims::Verdict) -> &'static str {
    match v {
        claims::Verdict::Holds => "holds",
        claims::Verdict::Fails => "fails",
        claims::Verdict::Inconclusive(_) => "inconclusive",
        claims::Verdict::NotApplicable(_) => "na",
    }
}

/// The verdicts of `js` as an HTML table: each claim with its cases, each case coloured by its
/// own verdict.
fn claims_table(js: &[Judgement]) -> String {
    let mut out = String::from(
        "<table><tr><th>claim</th><th>paper</th><th>band</th><th>cases</th><th>verdict</th></tr>\n",
    );
    for j in js {
        let why = esc(&j.notes().join("; "));
        let cases: Vec<String> = j
            .cases
            .iter()
            .map(|c| {
                format!(
                    "<span class=\"{}\">{}</span>",
                    verdict_class(&c.verdict),
                    esc(&c.text())
                )
            })
            .collect();
        let kind = match j.claim.kind {
            claims::Kind::Regression(why) => format!("<br>by construction: {}", esc(why)),
            _ => String::new(),
        };
        out.push_str(&format!(
            "<tr class=\"{}\"><td><code>{}</code>{kind}</td><td>“{}” ({})</td><td>{}</td><td>{}</td>\
             <td><span class=\"verdict\">{}</span>{}</td></tr>\n",
            class(j),
            esc(&j.id),
            esc(j.claim.quote),
            esc(&j.claim.paper),
            esc(&j.claim.check.band()),
            cases.join("<br>"),
            j.verdict.word(),
            if why.is_empty() {
                String::new()
            } else {
                format!("<br>{why}")
            }
        ));
    }
    out.push_str("</table>\n");
    out
}

/// The tables of `js`, one per kind of claim present, each under a heading of level `h`.
fn claims_tables(js: &[Judgement], h: u8) -> String {
    let mut out = String::new();
    for word in claims::Kind::WORDS {
        let of = claims::of_kind(js, word);
        if of.is_empty() {
            continue;
        }
        out.push_str(&format!(
            "<h{h}>{} ({})</h{h}>\n",
            esc(claims::Kind::heading(word)),
            esc(&claims::tally(&of))
        ));
        out.push_str(&claims_table(&of));
    }
    out
}

/// The runs' sides for `report --against`.
fn sides(rendered: &[Rendered]) -> Vec<crate::against::Side<'_>> {
    rendered
        .iter()
        .map(|r| crate::against::Side {
            meta: &r.meta,
            view: &r.view,
        })
        .collect()
}

/// `report.html`; `against` (HTML) before its end.
fn html_text(rendered: &[Rendered], missing: &[&str], against: &str) -> String {
    let all: Vec<Judgement> = rendered
        .iter()
        .flat_map(|r| r.view.verdicts.clone())
        .collect();
    let papers = claims::of_kind(&all, "paper");
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>stealbench: the papers' claims on this machine</title><style>{STYLE}</style>\
         </head><body>\n<h1>stealbench: the papers' claims on this machine</h1>\n\
         <p>{} claims of the papers in {} figures: <b>{}</b>. {}. Written by \
         <code>stealbench report</code> on {}. \
         Each case of a claim has its own verdict: <span class=\"holds\">holds</span> or \
         <span class=\"fails\">fails</span> only when the run's whole spread (rounds for a \
         time, repetitions for a count) lies inside or outside the claim's band, \
         <span class=\"inconclusive\">inconclusive</span> when it crosses the band's edge, \
         <span class=\"na\">n/a</span> when the run did not measure it. A claim's verdict is \
         the worst of its cases', unless the run cannot decide it (a time at a P beyond the \
         machine's cores, fewer than 3 rounds, an input below the size where the effect shows; \
         a system stealbench only stands in for): then it says what its cases would give. A \
         failure names its measured cause or says \"cause unknown\"; a verdict decided on \
         oversubscribed points says so; a run made by a dirty build or by another build than \
         this one is marked. Claims of ours and regression checks of our own construction are \
         listed apart and are not in the papers' tally.</p>\n",
        papers.len(),
        rendered.len(),
        esc(&claims::tally(&papers)),
        esc(&claims::summary(&all)),
        results::timestamps(SystemTime::now()).0
    );
    out.push_str(
        "<h2>The runs</h2>\n<table><tr><th>figure</th><th>machine</th><th>build</th>\
         <th>size</th><th>rounds, repetitions</th><th>measured</th><th>run directory</th></tr>\n",
    );
    for r in rendered {
        let (b, s) = (&r.meta.build, &r.meta.settings);
        let (commit, note) = build_cell(&r.meta);
        out.push_str(&format!(
            "<tr><td><a href=\"#{0}\">{0}</a></td><td>{1}</td><td{12}>stealbench {2}, {3}, \
             commit {4}, allocator {5}, {6}{13}</td><td>{7}</td><td>{8}, {9}</td><td>{10}</td>\
             <td><code>{11}</code></td></tr>\n",
            esc(r.fig.id),
            r.meta
                .each_machine()
                .iter()
                .map(|m| esc(&m.describe()))
                .collect::<Vec<_>>()
                .join("; "),
            esc(&b.stealbench_version),
            esc(&b.rustc),
            esc(&commit),
            esc(&b.allocator),
            esc(&b.profile),
            s.measure.size,
            s.rounds,
            s.reps(),
            esc(&r.meta.timestamp),
            esc(&r.dir.display().to_string()),
            if note.is_some() {
                " class=\"inconclusive\""
            } else {
                ""
            },
            note.map(|n| format!("<br><b>{}</b>", esc(&n)))
                .unwrap_or_default()
        ));
    }
    out.push_str("</table>\n");
    if !missing.is_empty() {
        out.push_str(&format!(
            "<p>No run of: {}.</p>\n",
            esc(&missing.join(", "))
        ));
    }
    out.push_str("<h2>Every claim</h2>\n");
    out.push_str(&claims_tables(&all, 3));
    for r in rendered {
        out.push_str(&format!(
            "<h2 id=\"{0}\">{0}: {1}</h2>\n<p class=\"caption\">{2}</p>\n<p>{3}</p>\n",
            esc(r.fig.id),
            esc(r.fig.title),
            esc(r.fig.caption),
            esc(&claims::summary(&r.view.verdicts))
        ));
        out.push_str(&claims_tables(&r.view.verdicts, 3));
        out.push_str(&format!(
            "<div class=\"plot\">{}</div>\n",
            strip_xml_header(&r.svg)
        ));
        out.push_str(&format!(
            "<p class=\"caption\">{}: {}. {}</p>\n<div class=\"scroll\"><table><tr>",
            esc(r.fig.metric.note_label()),
            esc(&r.fig.metric.describe()),
            esc(r.fig.metric.cell_legend())
        ));
        for h in &r.view.table.header {
            out.push_str(&format!("<th>{}</th>", esc(h)));
        }
        out.push_str("</tr>\n");
        for row in &r.view.table.rows {
            out.push_str("<tr>");
            for c in row {
                out.push_str(&format!("<td>{}</td>", esc(c)));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</table></div>\n");
    }
    out.push_str(against);
    out.push_str("</body></html>\n");
    out
}

/// An SVG document without its XML declaration, to sit inside HTML.
fn strip_xml_header(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_is_escaped_and_svg_inlined() {
        assert_eq!(esc("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
        assert_eq!(
            strip_xml_header("<?xml version=\"1.0\"?>\n<svg x>"),
            "<svg x>"
        );
    }
}
