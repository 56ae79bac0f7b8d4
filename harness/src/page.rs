//! A run's page: the view of a run's points (summaries, table, verdicts, plot panels and the
//! Markdown page), the figure files written from it, and the books a finished run keeps
//! (`summary.csv`, `claims.csv`, `meta.json`'s `ran` and `finished_at`).

use crate::failure::Failure;
use crate::figures::Figure;
use crate::figures::metric::Context;
use crate::grid::{Availability, Grid};
use crate::results::{self, Meta, Store};
use crate::spec::{PointSpec, WorkloadSpec};
use crate::{claims, escape, plot, runtimes, table};
use std::collections::HashMap;
use std::path::Path;
use std::time::SystemTime;
use stealbench_schedulers::Pinning;
use stealbench_workloads::Shape;

/// The Markdown page of a reproduced figure.
#[allow(clippy::too_many_arguments)]
fn markdown(
    fig: &Figure,
    meta: &Meta,
    grid: &Grid,
    tbl: &table::Table,
    run_dir: &Path,
    params_of: &HashMap<WorkloadSpec, String>,
    rounds_note: Option<&str>,
    lacking_note: Option<&str>,
    verdicts: &[claims::Judgement],
) -> String {
    let s = &meta.settings;
    let params: Vec<String> = grid
        .workloads()
        .iter()
        .filter_map(|w| {
            params_of
                .get(w)
                .map(|p| escape::md_text(&format!("{w} {p}")))
        })
        .collect();
    let b = &meta.build;
    let mut out = format!("# {}\n\n", fig.title);
    out.push_str(&format!("Paper: {}\n\n", fig.caption));
    out.push_str(&format!(
        "Reproduced with `stealbench reproduce {}` ({}).\n\n",
        fig.id,
        escape::md_text(&meta.timestamp)
    ));
    out.push_str(&claims::markdown(verdicts));
    let reads_ts = verdicts.iter().any(|j| {
        j.claim
            .check
            .quantities()
            .iter()
            .any(|q| !q.ts_workloads().is_empty())
    });
    if fig.ts != Shape::Plain && reads_ts {
        out.push_str(&format!(
            "The claims' T_s is `{}`, the {} paper's serial code (T_s, under The run).\n\n",
            runtimes::kernel(fig.ts),
            fig.ts
        ));
    }
    out.push_str("## The run\n\n");
    out.push_str(&meta.machine_line());
    let flags = if b.rustflags.is_empty() {
        String::new()
    } else {
        format!(", rustflags `{}`", escape::md_code(&b.rustflags))
    };
    out.push_str(&format!(
        "- Build: stealbench {}, {}, commit {}, allocator {}, {} profile{flags}\n",
        escape::md_text(&b.stealbench_version),
        escape::md_text(&b.rustc),
        escape::md_text(&b.git_commit),
        escape::md_text(&b.allocator),
        escape::md_text(&b.profile)
    ));
    out.push_str(&format!(
        "- Size: {} ({}); {} timed repetitions per point after one warm-up, median shown; \
         workers {}; `--pinning` {}\n",
        s.measure.size,
        if params.is_empty() {
            "no implemented workload".to_string()
        } else {
            params.join(", ")
        },
        s.reps(),
        s.workers
            .iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
            .join(", "),
        match s.measure.stack_size {
            Some(b) => format!("{}; fiber stacks of {b} bytes", s.measure.pinning),
            None => s.measure.pinning.to_string(),
        }
    ));
    out.push_str(&format!(
        "- Runtime settings: {}\n",
        settings_note(grid, s.measure.pinning)
    ));
    if let Some(n) = lacking_note {
        out.push_str(&format!("- Left out: {n}\n"));
    }
    if let Some(n) = rounds_note {
        out.push_str(&format!("- Rounds: {n}\n"));
    }
    out.push_str(&format!(
        "- {}: {}\n",
        fig.metric.note_label(),
        fig.metric.describe()
    ));
    if fig.metric.compares_times() {
        out.push_str(&format!("- T_s: {}\n", crate::figures::ts_note(fig.ts)));
    }
    for m in meta.each_machine() {
        if let Some(p) = s.workers.iter().find(|&&p| p > m.logical_cpus) {
            let whose = if meta.machines.is_empty() {
                "this machine's".to_string()
            } else {
                format!("{}'s", escape::md_text(&m.cpu_model))
            };
            out.push_str(&format!(
                "- Oversubscribed: P={p} and above exceed {whose} {} logical CPUs: {}\n",
                m.logical_cpus,
                fig.metric.oversubscribed_note()
            ));
        }
    }
    out.push_str(&format!(
        "- Raw data: `{}` (raw.csv, summary.csv, meta.json)\n\n",
        escape::md_code(&run_dir.display().to_string())
    ));
    out.push_str(fig.metric.cell_legend());
    out.push_str("\n\n");
    out.push_str(&tbl.to_markdown());
    if !fig.reference_path.is_empty() {
        out.push_str(&format!(
            "\nNotes of the reference data (`{}`):\n\n",
            fig.reference_path
        ));
        for c in &fig.reference.comments {
            out.push_str(&format!("- {c}\n"));
        }
    }
    out.push_str(&format!(
        "\n![{} against P]({}.svg)\n\nPNG version: [{}.png]({}.png).\n",
        fig.metric.plot_name(),
        fig.id,
        fig.id,
        fig.id
    ));
    out
}

/// What the measured rows ran with: the arms whose spelling gives settings, and what every
/// other setting is (the runtime's default; the run's `pinning` where no `pinning=` says).
pub(crate) fn settings_note(grid: &Grid, pinning: Pinning) -> String {
    let mut arms: Vec<String> = Vec::new();
    for (row, a) in &grid.rows {
        let spelt = row.runtime.to_string();
        if *a == Availability::Ready && !row.runtime.is_bare() && !arms.contains(&spelt) {
            arms.push(spelt);
        }
    }
    let pinned = format!("pinning {pinning} (`--pinning`) wherever no `pinning=` is given");
    if arms.is_empty() {
        return format!("every runtime on its defaults; {pinned}");
    }
    let arms: Vec<String> = arms.iter().map(|a| format!("`{a}`")).collect();
    format!(
        "{} with the settings {}, the others at the runtime's default; every other row on its \
         runtime's defaults; {pinned}",
        arms.join(", "),
        if arms.len() == 1 {
            "its spelling gives"
        } else {
            "their spellings give"
        }
    )
}

/// Writes `<id>.md`, `<id>.svg`, `<id>.png` into `dir`, holding its lock ([`crate::files::lock_dir`]).
pub(crate) fn write_figure_files(
    dir: &Path,
    fig: &Figure,
    md: &str,
    grid: &Grid,
    panels: &[plot::Panel],
    subtitle: &str,
) -> Result<(), Failure> {
    std::fs::create_dir_all(dir).map_err(|e| Failure::Io(format!("{}: {e}", dir.display())))?;
    let _lock = crate::files::lock_dir(dir)?;
    crate::files::write_atomic(&dir.join(format!("{}.md", fig.id)), md.as_bytes())?;
    plot::write_svg(
        &dir.join(format!("{}.svg", fig.id)),
        fig,
        grid,
        panels,
        subtitle,
    )?;
    plot::write_png(
        &dir.join(format!("{}.png", fig.id)),
        fig,
        grid,
        panels,
        subtitle,
    )
}

/// What the rounds say about the machine's drift: how far apart a point's round medians are,
/// at most and typically.
fn rounds_note(rounds: usize, summaries: &[results::PointSummary]) -> String {
    let mut spreads: Vec<(f64, &PointSpec)> = summaries
        .iter()
        .filter_map(|s| Some((results::spread(&s.round_medians)?, &s.key)))
        .collect();
    spreads.sort_by(|a, b| a.0.total_cmp(&b.0));
    let typical = crate::stats::median(&spreads.iter().map(|x| x.0).collect::<Vec<_>>());
    match (spreads.last(), typical) {
        (Some((worst, at)), Some(mid)) => format!(
            "{rounds}, every point once per round in a shuffled order; a point's round medians \
             differ by {:.1}% typically (median), at most {:.1}% ({at}); the cells give the \
             median over all rounds' repetitions",
            mid * 100.0,
            worst * 100.0
        ),
        _ => format!("{rounds}, every point once per round in a shuffled order"),
    }
}

/// A run's points as its figure shows them: the points' summaries, the table, the claims'
/// verdicts, the plot's panels with its subtitle, and the figure's Markdown page. `render`
/// writes them out after a run; `report` gathers them from every figure's latest run and
/// writes the figure's page and plots again with this build.
pub(crate) struct View {
    /// Every point of the run, summarised.
    pub summaries: results::Summaries,
    /// The figure's table.
    pub table: table::Table,
    /// The verdicts of the figure's claims.
    pub verdicts: Vec<claims::Judgement>,
    /// The plot's panels.
    pub panels: Vec<plot::Panel>,
    /// The plot's subtitle.
    pub subtitle: String,
    /// What the rounds say about the machine's drift (with more than one round).
    pub rounds_note: Option<String>,
    /// The figure's Markdown page (`<id>.md`).
    pub page: String,
}

/// The view of the run `meta` whose `raw.csv` is `store`, through `grid`. The page gives each
/// workload's parameters as its points' processes reported them, else as `params_of` has
/// them (what this process computed, for a workload no point reported).
pub(crate) fn view(
    fig: &Figure,
    grid: &Grid,
    meta: &Meta,
    store: &Store,
    params_of: &HashMap<WorkloadSpec, String>,
) -> View {
    let summaries = results::summarize(store).with_ts(fig.ts).measured_on(meta);
    let ctx = Context {
        summaries: &summaries,
        cpus: meta.machine.logical_cpus,
    };
    // A row of a runtime this build lacks is shown from the run's data when the run holds its
    // points (the run was made by a build that has it).
    let mut grid = grid.clone();
    for (row, a) in &mut grid.rows {
        if matches!(a, Availability::NotBuilt(_))
            && summaries.iter().any(|s| {
                s.key.runtime == row.runtime
                    && s.key.workload == row.workload
                    && s.key.variant == row.variant
            })
        {
            *a = Availability::Ready;
        }
    }
    let grid = &grid;
    let table = table::build(fig, grid, &ctx);
    let panels = plot::panels(fig, grid, &ctx);
    let mut verdicts = claims::judge(
        fig.claimed(),
        &claims::Run {
            summaries: &summaries,
            cores: meta.machine.cores,
            size: meta.settings.measure.size,
        },
    );
    let build = results::build_note(&meta.build);
    for v in &mut verdicts {
        v.build.clone_from(&build);
    }
    let mut params_of = params_of.clone();
    for r in store.rows() {
        params_of.insert(r.point.workload.clone(), r.params.clone());
    }
    let s = &meta.settings;
    let rounds_note = (s.rounds > 1).then(|| rounds_note(s.rounds, &summaries));
    let run_dir = store.path().parent().unwrap_or(Path::new("."));
    let page = markdown(
        fig,
        meta,
        grid,
        &table,
        run_dir,
        &params_of,
        rounds_note.as_deref(),
        results::left_out_note(grid, store).as_deref(),
        &verdicts,
    );
    View {
        table,
        panels,
        verdicts,
        subtitle: format!(
            "size {}, {}",
            meta.settings.measure.size,
            meta.each_machine()
                .iter()
                .map(|m| m.cpu_model.as_str())
                .collect::<Vec<_>>()
                .join(" + ")
        ),
        summaries,
        rounds_note,
        page,
    }
}

/// Summarises a run directory's `raw.csv` and renders the figure from it: `summary.csv`, the
/// table (printed), the Markdown page and the plots (in the run directory and in
/// `figures_dir`); records in meta.json what each point's process ran and marks the run
/// finished. `reproduce` calls it after its points, `merge` on the merged rows. The page
/// gives each workload's parameters as its points' processes reported them (`params_of`, what
/// this process computed, for a workload none reported). Returns the points' summaries.
pub(crate) fn render(
    fig: &Figure,
    grid: &Grid,
    meta: &mut Meta,
    store: &Store,
    figures_dir: &Path,
    params_of: &HashMap<WorkloadSpec, String>,
) -> Result<results::Summaries, Failure> {
    let run_dir = store.path().parent().unwrap_or(Path::new("."));
    let View {
        summaries,
        table: tbl,
        verdicts,
        panels,
        subtitle,
        rounds_note,
        page,
    } = view(fig, grid, meta, store, params_of);
    results::write_summary(
        &run_dir.join("summary.csv"),
        &results::summary_rows(&summaries, meta.machine.logical_cpus),
    )?;
    outln!();
    out!("{}", tbl.to_text());
    outln!("{}", fig.metric.describe());
    if let Some(n) = &rounds_note {
        outln!("rounds: {n}");
    }
    claims::write_csv(&run_dir.join("claims.csv"), &verdicts)?;
    if !verdicts.is_empty() {
        outln!("\nThe claims on this run ({}):", claims::summary(&verdicts));
        out!("{}", claims::text(&verdicts));
    }

    write_figure_files(run_dir, fig, &page, grid, &panels, &subtitle)?;
    write_figure_files(figures_dir, fig, &page, grid, &panels, &subtitle)?;
    meta.ran = store
        .rows()
        .iter()
        .map(|r| {
            let ran = crate::protocol::Ran {
                params: r.params.clone(),
                pool: r.pool.clone(),
            };
            (r.point.to_string(), ran)
        })
        .collect();
    meta.finished = true;
    meta.finished_at = Some(results::timestamps(SystemTime::now()).0);
    meta.write(run_dir)?;
    outln!(
        "\nwrote {0}/summary.csv, {0}/claims.csv, {1}/{2}.md, {1}/{2}.svg, {1}/{2}.png",
        run_dir.display(),
        figures_dir.display(),
        fig.id
    );

    Ok(summaries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_notes_say_what_libforks_figures_ran() {
        let fig = crate::figures::libfork_fig5::figure();
        let grid = Grid::build(fig.rows.clone(), &[1], &Default::default());
        let note = settings_note(&grid, Pinning::None);
        assert!(
            note.starts_with(
                "`libfork/victim=numa/pinning=scatter`, `libfork/idle=busy/victim=numa/pinning=scatter` \
                 with the settings their spellings give"
            ),
            "{note}"
        );
        assert!(note.contains("every other row on its runtime's defaults; pinning none"));
        // Only the measured rows count.
        let sel = crate::grid::Selection {
            runtimes: Some(vec!["rayon".into()]),
            workloads: None,
        };
        let grid = Grid::build(fig.rows.clone(), &[1], &sel);
        assert!(
            settings_note(&grid, Pinning::Compact)
                .starts_with("every runtime on its defaults; pinning compact")
        );
        // An arm named on the command line runs in their place.
        let sel = crate::grid::Selection {
            runtimes: Some(vec!["libfork/victim=uniform".into()]),
            workloads: Some(vec!["fib".into()]),
        };
        let grid = Grid::build(fig.rows, &[1], &sel);
        assert!(
            settings_note(&grid, Pinning::None)
                .starts_with("`libfork/victim=uniform` with the settings its spelling gives"),
        );
    }
}
