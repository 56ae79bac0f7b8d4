//! `stealbench reproduce <id>`: settings (or those of the run being resumed), the run
//! directory, every point in a child process with progress, then summary, table and plots.

use crate::cli::{self, Failure, ReproduceArgs};
use crate::figures::metric::Context;
use crate::figures::{self, Figure};
use crate::grid::{Availability, Grid, Status, workload_info};
use crate::results::{self, Meta, Settings, Store};
use crate::runner::{ChildExecutor, ExecError, PointOutcome, Progress, run_missing};
use crate::spec::{PointSpec, workload_name};
use crate::{claims, plot, point, runtimes, spec, suggest, table};
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};
use stealbench_schedulers::topology::Topology;
use stealbench_schedulers::{FenceMode, Pinning};
use stealbench_workloads::{Shape, Size};

/// The figure with id `id`, or a one-line reason.
pub(crate) fn lookup_figure(id: &str) -> Result<Figure, Failure> {
    let Some(entry) = figures::find(id) else {
        let ids: Vec<&str> = figures::FIGURES.iter().map(|f| f.id).collect();
        return Err(Failure::Usage(suggest::unknown("figure id", id, &ids)));
    };
    Ok((entry.build)())
}

/// The paper's worker counts: those that fit on this machine's physical cores (at least
/// `[1]`) for a figure whose metric needs a core per worker; for a figure of counts or memory,
/// all of them and every P its claims read (libfork-fig7's claims at P = 112 beyond its
/// 1 to 16), measured oversubscribed past this machine's cores and marked so.
pub(crate) fn default_workers(fig: &Figure) -> Vec<usize> {
    if !fig.metric.needs_cores() {
        let mut w = fig.paper_workers.to_vec();
        for c in &fig.claims {
            w.extend(c.points().iter().map(|(p, _)| p.p));
        }
        w.sort_unstable();
        w.dedup();
        return w;
    }
    let cores = Topology::detect().cores();
    let w: Vec<usize> = fig
        .paper_workers
        .iter()
        .copied()
        .filter(|&p| p <= cores)
        .collect();
    if w.is_empty() { vec![1] } else { w }
}

/// The settings of a run of `fig`: the options `args` gives, the others from `stored` (the
/// settings of the run being resumed) or, for a new run, the figure's and the size's defaults;
/// checked as a whole ([`check_settings`]), with the input files, before anything runs. The
/// figures directory is made absolute when given, else left as stored (`open_run` settles it).
pub(crate) fn resolve_settings(
    args: &ReproduceArgs,
    fig: &Figure,
    stored: Option<&Settings>,
    fence: FenceMode,
) -> Result<Settings, Failure> {
    let size = args
        .size
        .and_then(cli::SizeChoice::fixed)
        .or(stored.map(|s| s.measure.size))
        .unwrap_or(Size::Paper);
    let rounds = args
        .rounds
        .or(stored.map(|s| s.rounds))
        .unwrap_or(fig.rounds);
    let reps = args
        .reps
        .or(stored.map(Settings::reps))
        .or(fig.reps)
        .unwrap_or_else(|| cli::default_reps(size).div_ceil(rounds));
    let workers = match (&args.workers, stored) {
        (Some(w), _) => {
            let mut w = w.clone();
            w.sort_unstable();
            w.dedup();
            w
        }
        (None, Some(s)) => s.workers.clone(),
        (None, None) => default_workers(fig),
    };
    if workers.is_empty() {
        return Err(Failure::Usage(
            "--workers lists no worker count".to_string(),
        ));
    }
    let given = cli::input_options(args.hw_video.as_deref(), args.hw_points.as_deref())?;
    let stored_file = |f: fn(&Settings) -> &Option<PathBuf>| stored.and_then(|s| f(s).clone());
    let settings = Settings {
        measure: spec::Measure {
            size,
            reps: Some(reps),
            pinning: args
                .pinning
                .or(stored.map(|s| s.measure.pinning))
                .unwrap_or_default(),
            stack_size: args
                .stack_size
                .or(stored.and_then(|s| s.measure.stack_size)),
            hw_video: given
                .hw_video
                .or_else(|| stored_file(|s| &s.measure.hw_video)),
            hw_points: given
                .hw_points
                .or_else(|| stored_file(|s| &s.measure.hw_points)),
            params: Vec::new(),
        },
        rounds,
        workers,
        runtimes: match &args.runtimes {
            Some(r) => Some(spec::stored::dedup(r)),
            None => stored.and_then(|s| s.runtimes.clone()),
        },
        workloads: match &args.workloads {
            Some(w) => Some(spec::stored::dedup(w)),
            None => stored.and_then(|s| s.workloads.clone()),
        },
        timeout_secs: args
            .timeout
            .or(stored.map(|s| s.timeout_secs))
            .unwrap_or_else(|| cli::default_timeout(size)),
        figures_dir: match &args.figures_dir {
            Some(d) => Some(cli::output_dir("--figures-dir", d)?),
            None => stored.and_then(|s| s.figures_dir.clone()),
        },
        shard: match &args.shard {
            Some(s) => Some(s.parse()?),
            None => stored.and_then(|s| s.shard),
        },
        fence,
    };
    check_settings(&settings, fig)?;
    // The input files are checked now, before a run directory exists or a point runs.
    point::check_inputs(
        &selected_workloads(fig, settings.workloads.as_deref()),
        size,
        &settings.input_options(),
    )?;
    Ok(settings)
}

/// Checks settings against the figure they run, wherever they come from (the command line,
/// or a run's `meta.json`, whose every value its option's check has read): the workloads and
/// runtimes selected must be the figure's, and a shard count at most its points (see
/// [`crate::shard::check_count`]). The input files are checked when the run starts
/// (`check_inputs`).
pub(crate) fn check_settings(s: &Settings, fig: &Figure) -> Result<(), Failure> {
    if let Some(ws) = &s.workloads {
        check_workload_selection(fig, ws)?;
    }
    if let Some(rs) = &s.runtimes {
        crate::grid::check_runtime_selection(&fig.rows, rs).map_err(Failure::Usage)?;
    }
    if let Some(shard) = s.shard {
        let points = run_grid(fig, s).points.len();
        crate::shard::check_count(&format!("--shard {shard}"), shard.count, points, fig.id)?;
    }
    Ok(())
}

/// Checks a workload selection of `fig`: each a workload name of its rows (`uts`: every tree)
/// or one of their specs (`uts/tree=T3L`).
fn check_workload_selection(fig: &Figure, selection: &[String]) -> Result<(), Failure> {
    let mut known: Vec<&str> = Vec::new();
    for r in &fig.rows {
        for w in [workload_name(&r.workload), &r.workload] {
            if !known.contains(&w) {
                known.push(w);
            }
        }
    }
    for w in selection {
        if !known.contains(&w.as_str()) {
            return Err(Failure::Usage(format!(
                "{} in {}",
                suggest::unknown("workload", w, &known),
                fig.id
            )));
        }
    }
    Ok(())
}

/// The `meta.json` of the run directory `dir` that `--resume` continues: `dir` must exist and
/// be a run of `fig` whose stored settings read (by the command line's checks) and pass
/// [`check_settings`].
fn resumable_meta(dir: &Path, fig: &Figure) -> Result<Meta, Failure> {
    let cannot = |why: String| Failure::Usage(format!("cannot resume {}: {why}", dir.display()));
    if !dir.exists() {
        return Err(cannot("no such directory".to_string()));
    }
    if !dir.is_dir() {
        return Err(cannot("not a directory".to_string()));
    }
    if !dir.join("meta.json").exists() {
        return Err(cannot(
            "not a run directory (it has no meta.json)".to_string(),
        ));
    }
    // A value the command line would refuse does not even read (the settings are read by its
    // checks); what the figure must agree with is checked below.
    let meta = Meta::read(dir).map_err(|e| cannot(format!("its meta.json is invalid: {e}")))?;
    if meta.id != fig.id {
        return Err(Failure::Usage(format!(
            "{} is a run of {}, not {}",
            dir.display(),
            meta.id,
            fig.id
        )));
    }
    check_settings(&meta.settings, fig)
        .map_err(|f| cannot(format!("its meta.json is invalid: {}", f.message())))?;
    Ok(meta)
}

/// The `raw.csv` of the run directory `dir`, read for `--resume` before anything in `dir`
/// changes: a file this build cannot read (a header or a row of no known shape) is bad input
/// that names it, a file that cannot be read an I/O failure.
fn resumable_store(dir: &Path) -> Result<Store, Failure> {
    Store::open(&dir.join("raw.csv")).map_err(|e| match e.kind() {
        std::io::ErrorKind::InvalidData => {
            Failure::Usage(format!("cannot resume {}: {e}", dir.display()))
        }
        _ => Failure::from(e),
    })
}

/// On `--resume`, the machine and build must be those that measured the run: a point
/// measured on another machine or by another build would be shown beside the others as if
/// they were comparable, under the run's recorded machine and build.
fn check_resume_machine(meta: &Meta, allocator: &str, dir: &Path) -> Result<(), Failure> {
    let d: Vec<String> = results::run_differences(
        (&meta.machine, &meta.build),
        (&results::this_machine(), &results::this_build(allocator)),
    )
    .into_iter()
    .map(|(what, was, now)| format!("{what} {was} (now {now})"))
    .collect();
    if d.is_empty() {
        return Ok(());
    }
    Err(Failure::Usage(format!(
        "cannot resume {}: it was measured with {}; start a new run (or merge runs with \
         `stealbench merge --force`)",
        dir.display(),
        d.join(", ")
    )))
}

/// The implemented workload specs of `fig` that a selection (`None` = all; workload names
/// or specs) runs, in row order.
fn selected_workloads(fig: &Figure, selection: Option<&[String]>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in &fig.rows {
        let chosen = selection.is_none_or(|s| {
            s.iter()
                .any(|w| *w == r.workload || w == workload_name(&r.workload))
        });
        if chosen && !out.contains(&r.workload) && workload_info(&r.workload).is_some() {
            out.push(r.workload.clone());
        }
    }
    out
}

/// The settings a resumed run may change: the timeout, and where its figures go.
const CHANGEABLE_ON_RESUME: [&str; 2] = ["timeout_secs", "figures_dir"];

/// On `--resume`, the settings resolved from the command line over the stored ones must be the
/// stored ones but for [`CHANGEABLE_ON_RESUME`]: an option that differs is refused, every one
/// named with both values.
fn check_resume_conflicts(given: &Settings, stored: &Settings, dir: &Path) -> Result<(), Failure> {
    let d = stored.differences(given, &CHANGEABLE_ON_RESUME);
    if d.is_empty() {
        return Ok(());
    }
    let each: Vec<String> = d
        .iter()
        .map(|d| format!("{} {}, not {}", d.option(), d.ours, d.theirs))
        .collect();
    Err(Failure::Usage(format!(
        "{} was made with {}; drop {} to resume it",
        dir.display(),
        each.join("; "),
        if d.len() == 1 {
            "the option"
        } else {
            "those options"
        }
    )))
}

/// Prints progress: a bar with ETA on a terminal, one plain line per finished point otherwise.
/// The bar advances by each point's expected time (`plan`'s model, when there is one), so its
/// ETA is in time, not in points.
struct Reporter {
    bar: Option<ProgressBar>,
    total: usize,
    done: usize,
    failed: usize,
    expected: crate::plan::Expected,
}

impl Reporter {
    fn new(expected: crate::plan::Expected) -> Self {
        Reporter {
            bar: None,
            total: 0,
            done: 0,
            failed: 0,
            expected,
        }
    }

    fn line(&self, s: &str) {
        match &self.bar {
            Some(b) => b.println(s),
            None => errln!("{s}"),
        }
    }

    fn observe(&mut self, e: Progress<'_>) {
        match e {
            Progress::Plan {
                skipped,
                to_run,
                retried,
            } => {
                self.total = to_run;
                if skipped > 0 || !retried.is_empty() {
                    self.line(&format!(
                        "{skipped} points already recorded, {to_run} to run"
                    ));
                }
                if !retried.is_empty() {
                    let list: Vec<String> = retried
                        .iter()
                        .map(|(k, why)| format!("{k} ({why})"))
                        .collect();
                    self.line(&format!(
                        "retrying {} recorded point(s) that did not finish ok or were cut \
                         short (their rows are kept in attempts.csv): {}",
                        retried.len(),
                        list.join(", ")
                    ));
                }
                let terminal = std::io::stderr().is_terminal();
                if cli::progress_bar_wanted(terminal, std::env::var_os("TERM").as_deref())
                    && to_run > 0
                {
                    let bar = ProgressBar::new(self.expected.units_of(to_run));
                    bar.set_style(
                        ProgressStyle::with_template(
                            "[{elapsed_precise}] {bar:30} {prefix} points, ETA {eta} {msg}",
                        )
                        .expect("a valid template"),
                    );
                    bar.set_prefix(format!("0/{to_run}"));
                    self.bar = Some(bar);
                }
            }
            Progress::Started(p) => {
                if let Some(b) = &self.bar {
                    b.set_message(p.to_string());
                }
            }
            Progress::Finished(p, o) => {
                self.done += 1;
                if o.status != Status::Ok {
                    self.failed += 1;
                }
                let line = format!("[{}/{}] {p}: {}", self.done, self.total, describe(o));
                self.line(&line);
                if let Some(b) = &self.bar {
                    b.inc(self.expected.units(p));
                    b.set_prefix(format!("{}/{}", self.done, self.total));
                }
            }
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// One line about a finished point.
fn describe(o: &PointOutcome) -> String {
    let rss = o
        .peak_rss_kb
        .map(|k| format!(", peak RSS {:.1} MiB", k as f64 / 1024.0))
        .unwrap_or_default();
    if o.status == Status::Ok {
        let times: Vec<f64> = o.reps.iter().map(|r| r.seconds).collect();
        let m = crate::stats::median(&times).unwrap_or(f64::NAN);
        format!(
            "ok, median {} s over {} reps{rss}",
            table::format_time(m),
            times.len()
        )
    } else {
        format!("{}: {}{rss}", o.status, o.note)
    }
}

fn command_line() -> String {
    std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Which run directory, with which settings and meta, and its raw.csv, read.
fn open_run(
    args: &ReproduceArgs,
    fig: &Figure,
    allocator: &str,
    fence: FenceMode,
) -> Result<(PathBuf, Meta, Store, results::RunLock), Failure> {
    let (stamp, dir_stamp) = results::timestamps(SystemTime::now());
    match &args.resume {
        Some(choice) => {
            let dir = match choice {
                Some(d) => d.clone(),
                None => results::latest_unfinished(&args.out, fig.id)?.ok_or_else(|| {
                    Failure::Usage(format!(
                        "no unfinished run of {} under {}; start one without --resume",
                        fig.id,
                        args.out.join(fig.id).display()
                    ))
                })?,
            };
            // A directory that is not a run is refused before anything is written in it.
            resumable_meta(&dir, fig)?;
            let lock = results::RunLock::acquire(&dir).map_err(Failure::Runtime)?;
            // Read again under the lock: another process may have changed it meanwhile.
            let mut meta = resumable_meta(&dir, fig)?;
            let mut given = resolve_settings(args, fig, Some(&meta.settings), fence)?;
            check_resume_conflicts(&given, &meta.settings, &dir)?;
            check_resume_machine(&meta, allocator, &dir)?;
            let store = resumable_store(&dir)?;
            // Where the figure goes: as given now (checked), else as stored, else the default.
            if args.figures_dir.is_none() {
                given.figures_dir = Some(match given.figures_dir.take() {
                    Some(d) => cli::output_dir("the stored figures directory", &d)?,
                    None => cli::output_dir("--figures-dir", Path::new(DEFAULT_FIGURES_DIR))?,
                });
            }
            meta.settings = given;
            meta.resumed.push(format!("{stamp} {}", command_line()));
            meta.write(&dir)?;
            Ok((dir, meta, store, lock))
        }
        None => {
            let mut given = resolve_settings(args, fig, None, fence)?;
            if given.figures_dir.is_none() {
                given.figures_dir = Some(cli::output_dir(
                    "--figures-dir",
                    Path::new(DEFAULT_FIGURES_DIR),
                )?);
            }
            cli::output_dir("--out", &args.out)?;
            // A shard's directory says which it is: the shards of one array may start in the
            // same second on a shared file system.
            let name = match given.shard {
                Some(s) => format!("{dir_stamp}-shard-{}-of-{}", s.index, s.count),
                None => dir_stamp,
            };
            let dir = results::create_run_dir(&args.out, fig.id, &name)?;
            let lock = results::RunLock::acquire(&dir).map_err(Failure::Runtime)?;
            let meta = Meta {
                id: fig.id.to_string(),
                title: fig.title.to_string(),
                timestamp: stamp,
                command_line: command_line(),
                resumed: Vec::new(),
                finished: false,
                finished_at: None,
                settings: given,
                machine: results::this_machine(),
                build: results::this_build(allocator),
                merged_from: Vec::new(),
                ran: Default::default(),
            };
            meta.write(&dir)?;
            let store = Store::open(&dir.join("raw.csv"))?;
            Ok((dir, meta, store, lock))
        }
    }
}

/// The Markdown page of a reproduced figure.
#[allow(clippy::too_many_arguments)]
fn markdown(
    fig: &Figure,
    meta: &Meta,
    grid: &Grid,
    tbl: &table::Table,
    run_dir: &Path,
    params_of: &HashMap<String, String>,
    rounds_note: Option<&str>,
    lacking_note: Option<&str>,
    verdicts: &[claims::Judgement],
) -> String {
    let s = &meta.settings;
    let params: Vec<String> = grid
        .workloads()
        .iter()
        .filter_map(|w| params_of.get(w.as_str()).map(|p| format!("{w} {p}")))
        .collect();
    let m = &meta.machine;
    let b = &meta.build;
    let mut out = format!("# {}\n\n", fig.title);
    out.push_str(&format!("Paper: {}\n\n", fig.caption));
    out.push_str(&format!(
        "Reproduced with `stealbench reproduce {}` ({}).\n\n",
        fig.id, meta.timestamp
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
    out.push_str(&format!(
        "- Machine: {}, {} cores / {} logical CPUs, {} NUMA node(s), {}\n",
        m.cpu_model, m.cores, m.logical_cpus, m.numa_nodes, m.kernel
    ));
    let flags = if b.rustflags.is_empty() {
        String::new()
    } else {
        format!(", rustflags `{}`", b.rustflags)
    };
    out.push_str(&format!(
        "- Build: stealbench {}, {}, commit {}, allocator {}, {} profile{flags}\n",
        b.stealbench_version, b.rustc, b.git_commit, b.allocator, b.profile
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
    if let Some(p) = s.workers.iter().find(|&&p| p > meta.machine.logical_cpus) {
        out.push_str(&format!(
            "- Oversubscribed: P={p} and above exceed this machine's {} logical CPUs: {}\n",
            meta.machine.logical_cpus,
            fig.metric.oversubscribed_note()
        ));
    }
    out.push_str(&format!(
        "- Raw data: `{}` (raw.csv, summary.csv, meta.json)\n\n",
        run_dir.display()
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

/// Writes `<id>.md`, `<id>.svg`, `<id>.png` into `dir`.
pub(crate) fn write_figure_files(
    dir: &Path,
    fig: &Figure,
    md: &str,
    grid: &Grid,
    panels: &[plot::Panel],
    subtitle: &str,
) -> Result<(), Failure> {
    std::fs::create_dir_all(dir).map_err(|e| Failure::Io(format!("{}: {e}", dir.display())))?;
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

/// Where the figures go when neither `--figures-dir` nor a resumed run says.
pub(crate) const DEFAULT_FIGURES_DIR: &str = "paper-figures";

/// The command that continues the run in `run_dir` with the same output, runnable from any
/// directory: the run's settings (workers, sizes, input files) are in its `meta.json`.
fn continue_command(id: &str, run_dir: &Path, figures_dir: &Path) -> String {
    let quote = |p: &Path| {
        let s = p.display().to_string();
        if s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@".contains(c))
        {
            s
        } else {
            format!("'{}'", s.replace('\'', "'\\''"))
        }
    };
    let abs = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    format!(
        "stealbench reproduce {id} --resume {} --figures-dir {}",
        quote(&abs(run_dir)),
        quote(&abs(figures_dir))
    )
}

/// The grid of `fig` that a run with settings `s` measures: the figure's rows at the run's
/// workers under its selection, and the simulated rows at the figure's extra P (the whole grid:
/// a shard's part is taken from it).
pub(crate) fn run_grid(fig: &Figure, s: &Settings) -> Grid {
    let mut grid = Grid::build_with(fig.rows.clone(), fig.ts, &s.workers, &s.selection());
    grid.simulate_also(fig.sim_workers);
    grid
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
    params_of: &HashMap<String, String>,
) -> View {
    let summaries = results::summarize(store).with_ts(fig.ts);
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
        fig,
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
            meta.settings.measure.size, meta.machine.cpu_model
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
    params_of: &HashMap<String, String>,
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
            let ran = crate::point::Ran {
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

/// `stealbench reproduce`. Returns the exit code: 0 when every point finished ok, 1 when some
/// failed (recorded), 130 when interrupted.
pub(crate) fn reproduce_command(
    args: &ReproduceArgs,
    allocator: &str,
    fence: FenceMode,
) -> Result<i32, Failure> {
    if crate::all::is_set(args) {
        return crate::all::reproduce_set(args, allocator, fence);
    }
    let fig = lookup_figure(&args.id)?;
    let (run_dir, mut meta, mut store, _lock) = open_run(args, &fig, allocator, fence)?;
    crate::runner::catch_interrupts();
    let s = meta.settings.clone();
    let figures_dir = s
        .figures_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(DEFAULT_FIGURES_DIR));
    let size = s.measure.size;
    let sel = s.selection();
    let mut grid = run_grid(&fig, &s);
    if let Some(shard) = s.shard {
        let all = grid.points.len();
        grid.points = crate::shard::shard_points(&grid.points, shard);
        outln!(
            "shard {shard}: {} of the grid's {all} points (merge the {} shards' run directories \
             with `stealbench merge`)",
            grid.points.len(),
            shard.count
        );
    }
    let count =
        |f: fn(&crate::grid::Availability) -> bool| grid.rows.iter().filter(|(_, a)| f(a)).count();
    let not_impl = count(|a| matches!(a, crate::grid::Availability::NotImplemented(_)));
    let not_built = count(|a| matches!(a, crate::grid::Availability::NotBuilt(_)));
    outln!("{}", fig.title);
    outln!(
        "size {}, workers {:?}, {} reps per point, timeout {}, run directory {}",
        s.measure.size,
        s.workers,
        s.reps(),
        if s.timeout_secs == 0 {
            "none".to_string()
        } else {
            format!("{} s", s.timeout_secs)
        },
        run_dir.display()
    );
    outln!(
        "{} rows ({} not yet implemented, {} not built), {} points",
        grid.rows.len(),
        not_impl,
        not_built,
        grid.points.len()
    );
    outln!(
        "runtime settings: {}",
        settings_note(&grid, s.measure.pinning)
    );
    for n in crate::grid::added_arms_notes(&fig.rows, &sel) {
        outln!("note: {n}");
    }
    let cpus = meta.machine.logical_cpus;
    if let Some(p) = s.workers.iter().find(|&&p| p > cpus) {
        outln!(
            "note: P={p} exceeds this machine's {cpus} logical CPUs: those points are oversubscribed"
        );
    }
    if cfg!(debug_assertions) {
        outln!("note: this is a debug build; its times are not comparable (use --release)");
    }

    // Every workload's parameters with the run's input files, checked again (a resumed run's
    // files may have gone or changed since).
    let options = s.input_options();
    let specs: Vec<String> = grid
        .workloads()
        .into_iter()
        .filter(|w| workload_info(w).is_some())
        .collect();
    let params_of: HashMap<String, String> = point::check_inputs(&specs, size, &options)?
        .into_iter()
        .collect();
    if let Some(v) = &options.hw_video {
        outln!(
            "hw input: {}",
            params_of
                .get("hw")
                .map_or_else(|| v.display().to_string(), String::clone)
        );
    }

    let (estimate, expected) = crate::plan::run_estimate(
        &args.reference,
        &fig,
        &grid.points,
        &params_of,
        s.rounds,
        s.reps(),
    );
    outln!("{estimate}");

    let exe = std::env::current_exe()?;
    let mut executor = ChildExecutor {
        exe,
        measure: s.measure.clone(),
        timeout: (s.timeout_secs > 0).then(|| Duration::from_secs(s.timeout_secs)),
    };
    if let Some(n) = results::left_out_note(&grid, &store) {
        outln!("note: {n}");
    }
    // A resumed run must measure the inputs its recorded rows measured: an input file (or
    // the input generation) may have changed since.
    for row in store.rows() {
        if let Some(now) = params_of.get(row.point.workload.as_str())
            && *now != row.params
        {
            return Err(Failure::Usage(format!(
                "{}: its {} rows were measured on input '{}', now it is '{}'; start a new run",
                run_dir.display(),
                row.point.workload,
                row.params,
                now
            )));
        }
    }
    let params = |p: &PointSpec| {
        params_of
            .get(p.workload.as_str())
            .cloned()
            .unwrap_or_default()
    };
    let mut reporter = Reporter::new(expected);
    let r = run_missing(
        &grid.points,
        &mut store,
        size,
        s.reps(),
        s.rounds,
        &params,
        &mut executor,
        &mut |e| reporter.observe(e),
    );
    reporter.finish();
    match r {
        Ok(()) => {}
        Err(ExecError::Interrupted) => {
            let recorded = if store.is_empty() {
                "no point finished, nothing is recorded yet".to_string()
            } else {
                format!("finished points are in {}", store.path().display())
            };
            errln!(
                "interrupted; {recorded}. Continue with: {}",
                continue_command(fig.id, &run_dir, &figures_dir)
            );
            return Ok(130);
        }
        Err(ExecError::Io(e)) => return Err(Failure::from(e)),
    }

    let summaries = render(&fig, &grid, &mut meta, &store, &figures_dir, &params_of)?;

    let failed: Vec<String> = summaries
        .iter()
        .filter(|s| s.status != Status::Ok && grid.points.contains(&s.key))
        .map(|s| format!("{} ({})", s.key, s.status))
        .collect();
    if failed.is_empty() {
        Ok(0)
    } else {
        errln!(
            "{} point(s) did not finish ok: {}",
            failed.len(),
            failed.join(", ")
        );
        Ok(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tempfile::TempDir;

    #[test]
    fn the_continue_command_names_the_output_absolutely() {
        let dir = TempDir::with_prefix("stealbench-hint-").unwrap();
        let figs = dir.path().join("my figs");
        std::fs::create_dir_all(&figs).unwrap();
        let c = continue_command("prows-fig3", dir.path(), &figs);
        let abs = dir.path().canonicalize().unwrap();
        assert!(c.starts_with(&format!(
            "stealbench reproduce prows-fig3 --resume {} --figures-dir '",
            abs.display()
        )));
        assert!(c.ends_with("my figs'"), "{c}");
    }

    #[test]
    fn the_notes_say_what_libforks_figures_ran() {
        let fig = lookup_figure("libfork-fig5").unwrap();
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

    /// `stealbench reproduce ARGS...` as clap reads it.
    fn reproduce_args(args: &[&str]) -> ReproduceArgs {
        use clap::Parser;
        let line = [&["stealbench", "reproduce"][..], args].concat();
        match cli::Cli::try_parse_from(line).unwrap().command {
            cli::Command::Reproduce(a) => a,
            other => panic!("not reproduce: {other:?}"),
        }
    }

    #[test]
    fn settings_are_checked_against_their_figure() {
        let fig = lookup_figure("prows-fig3").unwrap();
        let args = [
            "prows-fig3",
            "--size",
            "test",
            "--workers",
            "1,2",
            "--runtimes",
            "serial,libfork/idle=busy",
            "--workloads",
            "fib",
            "--shard",
            "2/3",
        ];
        let good =
            resolve_settings(&reproduce_args(&args), &fig, None, FenceMode::default()).unwrap();
        check_settings(&good, &fig).unwrap();
        type Spoil = fn(&mut Settings);
        let bad: [(Spoil, &str); 3] = [
            (|s| s.workloads = Some(vec!["mm".into()]), "workload 'mm'"),
            (
                |s| s.runtimes = Some(vec!["fibril".into()]),
                "this figure does not run fibril",
            ),
            (
                |s| s.shard = Some("1/1000".parse().unwrap()),
                "--shard 1/1000: prows-fig3 has",
            ),
        ];
        for (spoil, want) in bad {
            let mut s = good.clone();
            spoil(&mut s);
            let e = check_settings(&s, &fig).unwrap_err();
            assert!(e.message().contains(want), "{want}: {}", e.message());
        }
    }

    /// What `reproduce` takes, what meta.json stores and what a point's child gets are one
    /// `Settings` and the `Measure` it holds: resolved from the command line, written to and
    /// read from meta.json unchanged, and given to the child as arguments that its command line
    /// reads back as the same `Measure`.
    #[test]
    fn settings_round_trip_from_the_command_line_through_meta_json_to_the_child() {
        use crate::runner::ChildExecutor;
        use stealbench_workloads::hw::{VideoSpec, avi};
        let dir = TempDir::with_prefix("stealbench-settings-trip-").unwrap();
        let video = dir.path().join("heart.avi");
        std::fs::write(&video, avi::encode_gray8(&VideoSpec::test(12).generate())).unwrap();
        let points = dir.path().join("points.txt");
        let pts = stealbench_workloads::hw::points_text(&VideoSpec::test(12).initial_points());
        std::fs::write(&points, pts).unwrap();
        let figs = dir.path().join("figs");
        let fig = lookup_figure("prows-fig2").unwrap();
        let args = reproduce_args(&[
            "prows-fig2",
            "--size",
            "test",
            "--reps",
            "3",
            "--rounds",
            "2",
            "--workers",
            "2,1,2",
            "--pinning",
            "compact",
            "--stack-size",
            "64K",
            "--timeout",
            "30",
            "--runtimes",
            "prows,prows",
            "--workloads",
            "hw",
            "--hw-video",
            video.to_str().unwrap(),
            "--hw-points",
            points.to_str().unwrap(),
            "--figures-dir",
            figs.to_str().unwrap(),
        ]);
        let settings = resolve_settings(&args, &fig, None, FenceMode::default()).unwrap();
        let abs = |p: &Path| p.canonicalize().unwrap();
        assert_eq!(
            settings.measure,
            spec::Measure {
                size: Size::Test,
                reps: Some(3),
                pinning: Pinning::Compact,
                stack_size: Some(64 << 10),
                hw_video: Some(abs(&video)),
                hw_points: Some(abs(&points)),
                params: Vec::new(),
            }
        );
        assert_eq!(
            (&settings.workers, settings.rounds, settings.timeout_secs),
            (&vec![1, 2], 2, 30)
        );
        assert_eq!(settings.runtimes, Some(vec!["prows".into()]));
        assert_eq!(settings.figures_dir, Some(abs(&figs)));

        let mut meta = Meta::sample(fig.id, 1);
        meta.settings = settings.clone();
        meta.write(dir.path()).unwrap();
        let stored = Meta::read(dir.path()).unwrap().settings;
        assert_eq!(stored, settings);

        // The child of an hw point on a fiber runtime is given every setting of the Measure.
        let point = PointSpec {
            runtime: "prows".into(),
            workload: "hw".to_string(),
            variant: stealbench_workloads::Variant::Gf,
            workers: 2,
        };
        let executor = ChildExecutor {
            exe: PathBuf::from("stealbench"),
            measure: stored.measure.clone(),
            timeout: None,
        };
        let argv = [vec!["stealbench".to_string()], executor.args(&point)].concat();
        let cli::Command::Run(child) = <cli::Cli as clap::Parser>::try_parse_from(&argv)
            .unwrap()
            .command
        else {
            panic!("not run: {argv:?}")
        };
        assert_eq!(
            (child.point, child.measure),
            (point, settings.measure.clone())
        );

        // A resume that gives nothing resolves to the stored settings.
        let resume = reproduce_args(&["prows-fig2", "--resume"]);
        assert_eq!(
            resolve_settings(&resume, &fig, Some(&stored), FenceMode::default()).unwrap(),
            stored
        );
    }

    #[test]
    fn a_resume_names_every_option_that_differs_from_the_stored_settings() {
        let fig = lookup_figure("prows-fig3").unwrap();
        let first = ["prows-fig3", "--size", "test", "--workers", "1,2"];
        let stored =
            resolve_settings(&reproduce_args(&first), &fig, None, FenceMode::default()).unwrap();
        let resume = |extra: &[&str]| {
            let args = reproduce_args(&[&["prows-fig3", "--resume"][..], extra].concat());
            let given = resolve_settings(&args, &fig, Some(&stored), FenceMode::default()).unwrap();
            check_resume_conflicts(&given, &stored, Path::new("D"))
        };
        resume(&[]).unwrap();
        // The same values, and a new timeout, which a resume may change.
        resume(&["--size", "test", "--workers", "2,1", "--timeout", "5"]).unwrap();
        // Two repetitions of size test over the figure's three rounds: one a round.
        let e = resume(&["--reps", "4"]).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert_eq!(
            e.message(),
            "D was made with --reps 1, not 4; drop the option to resume it"
        );
        let e = resume(&["--size", "quick", "--workers", "1", "--stack-size", "1M"]).unwrap_err();
        assert_eq!(
            e.message(),
            "D was made with --size test, not quick; --stack-size default, not 1048576; \
             --workers 1,2, not 1; drop those options to resume it"
        );
    }

    #[test]
    fn output_directories_are_checked_first() {
        let dir = TempDir::with_prefix("stealbench-outdir-").unwrap();
        let file = dir.path().join("a-file");
        std::fs::write(&file, b"x").unwrap();
        let e = cli::output_dir("--out", &file)
            .unwrap_err()
            .message()
            .to_string();
        assert!(e.contains("--out") && e.contains("not a directory"), "{e}");
        let nested = dir.path().join("new/deeper");
        assert_eq!(
            cli::output_dir("--figures-dir", &nested).unwrap(),
            nested.canonicalize().unwrap()
        );
        let e = cli::output_dir("--out", &file.join("below"))
            .unwrap_err()
            .message()
            .to_string();
        assert!(e.contains("cannot create"), "{e}");
    }
}
