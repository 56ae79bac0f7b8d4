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
use stealbench_schedulers::Pinning;
use stealbench_schedulers::topology::Topology;
use stealbench_workloads::Size;

/// The figure with id `id`, or a one-line reason.
pub(crate) fn lookup_figure(id: &str) -> Result<Figure, Failure> {
    let Some(entry) = figures::find(id) else {
        let ids: Vec<&str> = figures::FIGURES.iter().map(|f| f.id).collect();
        return Err(Failure::Usage(suggest::unknown("figure id", id, &ids)));
    };
    Ok((entry.build)())
}

/// The paper's worker counts: those that fit on this machine's physical cores (at least
/// `[1]`) for a figure whose metric needs a core per worker, all of them otherwise.
pub(crate) fn default_workers(fig: &Figure) -> Vec<usize> {
    if !fig.metric.needs_cores() {
        return fig.paper_workers.to_vec();
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

/// Checks the explicit options and fills in the defaults.
pub(crate) fn settings_from_args(args: &ReproduceArgs, fig: &Figure) -> Result<Settings, Failure> {
    let size = args.size.unwrap_or(Size::Paper);
    let mut workers = match &args.workers {
        Some(w) => w.clone(),
        None => default_workers(fig),
    };
    workers.sort_unstable();
    workers.dedup();
    if workers.is_empty() {
        return Err(Failure::Usage(
            "--workers lists no worker count".to_string(),
        ));
    }
    if let Some(ws) = &args.workloads {
        check_workload_selection(fig, ws)?;
    }
    if let Some(rs) = &args.runtimes {
        crate::grid::check_runtime_selection(&fig.rows, rs).map_err(Failure::Usage)?;
    }
    let pinning = args.pinning.unwrap_or_default();
    let rounds = args.rounds.unwrap_or(fig.rounds);
    if rounds == 0 {
        return Err(Failure::Usage("rounds must be at least 1".to_string()));
    }
    let reps = args
        .reps
        .or(fig.reps)
        .unwrap_or_else(|| cli::default_reps(size).div_ceil(rounds));
    if reps == 0 {
        return Err(Failure::Usage("reps must be at least 1".to_string()));
    }
    let options = cli::input_options(args.hw_video.as_deref(), args.hw_points.as_deref())?;
    // The input files are checked now, before a run directory exists or a point runs.
    point::check_inputs(
        &selected_workloads(fig, args.workloads.as_deref()),
        size,
        &options,
    )?;
    let settings = Settings {
        size,
        reps,
        rounds,
        workers,
        runtimes: args.runtimes.as_deref().map(dedup),
        workloads: args.workloads.as_deref().map(dedup),
        timeout_secs: args.timeout.unwrap_or_else(|| cli::default_timeout(size)),
        pinning,
        hw_video: options.hw_video,
        hw_points: options.hw_points,
        stack_size: args.stack_size,
        figures_dir: match &args.figures_dir {
            Some(d) => Some(cli::output_dir("--figures-dir", d)?),
            None => None,
        },
        shard: args.shard.as_deref().map(str::parse).transpose()?,
    };
    check_shard_count(&settings, fig)?;
    Ok(settings)
}

/// Refuses a shard count above the number of points of the grid the settings give (see
/// [`crate::shard::check_count`]).
fn check_shard_count(s: &Settings, fig: &Figure) -> Result<(), Failure> {
    if let Some(shard) = s.shard {
        let points = run_grid(fig, s).points.len();
        crate::shard::check_count(&format!("--shard {shard}"), shard.count, points, fig.id)?;
    }
    Ok(())
}

/// `list` without its repetitions, in order: `--runtimes abp,abp` selects what `abp` does.
fn dedup<T: PartialEq + Clone>(list: &[T]) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for x in list {
        if !out.contains(x) {
            out.push(x.clone());
        }
    }
    out
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

/// Checks settings read from a run's `meta.json` as the command line's are checked (a file
/// edited or damaged since would otherwise run points with P = 0, no repetition or a runtime
/// that does not exist). The input files are checked when the run starts (`check_inputs`).
pub(crate) fn check_stored_settings(s: &Settings, fig: &Figure) -> Result<(), Failure> {
    if s.workers.is_empty() {
        return Err(Failure::Usage("workers: none listed".to_string()));
    }
    for &p in &s.workers {
        spec::check_workers(p).map_err(Failure::Usage)?;
    }
    let within = |what: &str, v: u64, lo: u64, hi: u64| {
        if (lo..=hi).contains(&v) {
            Ok(())
        } else {
            Err(Failure::Usage(format!("{what} {v}: must be {lo} to {hi}")))
        }
    };
    within("reps", s.reps as u64, 1, spec::MAX_REPS as u64)?;
    within("rounds", s.rounds as u64, 1, spec::MAX_ROUNDS as u64)?;
    within("timeout_secs", s.timeout_secs, 0, spec::MAX_TIMEOUT)?;
    if let Some(ws) = &s.workloads {
        check_workload_selection(fig, ws)?;
    }
    if let Some(b) = s.stack_size {
        spec::parse_stack_size(&b.to_string()).map_err(Failure::Usage)?;
    }
    if let Some(rs) = &s.runtimes {
        crate::grid::check_runtime_selection(&fig.rows, rs).map_err(Failure::Usage)?;
    }
    if let Some(shard) = s.shard {
        shard.to_string().parse::<crate::shard::Shard>()?;
    }
    check_shard_count(s, fig)
}

/// The `meta.json` of the run directory `dir` that `--resume` continues: `dir` must exist and
/// be a run of `fig` whose stored settings pass [`check_stored_settings`].
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
    // parsers); the counts and lists are checked below.
    let meta = Meta::read(dir).map_err(|e| cannot(format!("its meta.json is invalid: {e}")))?;
    if meta.id != fig.id {
        return Err(Failure::Usage(format!(
            "{} is a run of {}, not {}",
            dir.display(),
            meta.id,
            fig.id
        )));
    }
    check_stored_settings(&meta.settings, fig)
        .map_err(|f| cannot(format!("its meta.json is invalid: {}", f.message())))?;
    let mut meta = meta;
    // An older build stored a selection as given, repetitions and all.
    meta.settings.runtimes = meta.settings.runtimes.as_deref().map(dedup);
    meta.settings.workloads = meta.settings.workloads.as_deref().map(dedup);
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
    let d = results::run_differences(
        (&meta.machine, &meta.build),
        (&results::this_machine(), &results::this_build(allocator)),
    );
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

/// On `--resume`, an explicit option must agree with the resumed run's settings (except the
/// timeout, which may change).
fn check_resume_conflicts(
    args: &ReproduceArgs,
    given: &Settings,
    stored: &Settings,
    dir: &Path,
) -> Result<(), Failure> {
    let conflict = |what: &str, theirs: String, ours: String| {
        Failure::Usage(format!(
            "{} was made with {what} {theirs}, not {ours}; drop the option to resume it",
            dir.display()
        ))
    };
    let list = |v: Option<Vec<String>>| v.map_or("all".to_string(), |v| v.join(","));
    let arms = |v: &Option<Vec<runtimes::Arm>>| {
        list(v.as_ref().map(|v| v.iter().map(|a| a.spec()).collect()))
    };
    if args.size.is_some() && given.size != stored.size {
        return Err(conflict(
            "--size",
            stored.size.to_string(),
            given.size.to_string(),
        ));
    }
    if args.reps.is_some() && given.reps != stored.reps {
        return Err(conflict(
            "--reps",
            stored.reps.to_string(),
            given.reps.to_string(),
        ));
    }
    if args.workers.is_some() && given.workers != stored.workers {
        let j = |w: &[usize]| {
            w.iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        return Err(conflict("--workers", j(&stored.workers), j(&given.workers)));
    }
    if args.runtimes.is_some() && given.runtimes != stored.runtimes {
        return Err(conflict(
            "--runtimes",
            arms(&stored.runtimes),
            arms(&given.runtimes),
        ));
    }
    if args.workloads.is_some() && given.workloads != stored.workloads {
        return Err(conflict(
            "--workloads",
            list(stored.workloads.clone()),
            list(given.workloads.clone()),
        ));
    }
    if args.rounds.is_some() && given.rounds != stored.rounds {
        return Err(conflict(
            "--rounds",
            stored.rounds.to_string(),
            given.rounds.to_string(),
        ));
    }
    if args.stack_size.is_some() && given.stack_size != stored.stack_size {
        let show = |s: Option<usize>| s.map_or("default".to_string(), |b| format!("{b} bytes"));
        return Err(conflict(
            "--stack-size",
            show(stored.stack_size),
            show(given.stack_size),
        ));
    }
    if args.shard.is_some() && given.shard != stored.shard {
        let show = |s: Option<crate::shard::Shard>| s.map_or("none".to_string(), |s| s.to_string());
        return Err(conflict("--shard", show(stored.shard), show(given.shard)));
    }
    if args.pinning.is_some() && given.pinning != stored.pinning {
        return Err(conflict(
            "--pinning",
            stored.pinning.to_string(),
            given.pinning.to_string(),
        ));
    }
    let path = |p: &Option<PathBuf>| {
        p.as_ref()
            .map_or("none".to_string(), |p| p.display().to_string())
    };
    if args.hw_video.is_some() && given.hw_video != stored.hw_video {
        return Err(conflict(
            "--hw-video",
            path(&stored.hw_video),
            path(&given.hw_video),
        ));
    }
    if args.hw_points.is_some() && given.hw_points != stored.hw_points {
        return Err(conflict(
            "--hw-points",
            path(&stored.hw_points),
            path(&given.hw_points),
        ));
    }
    Ok(())
}

/// Prints progress: a bar with ETA on a terminal, one plain line per finished point otherwise.
struct Reporter {
    bar: Option<ProgressBar>,
    total: usize,
    done: usize,
    failed: usize,
}

impl Reporter {
    fn new() -> Self {
        Reporter {
            bar: None,
            total: 0,
            done: 0,
            failed: 0,
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
                    let bar = ProgressBar::new(to_run as u64);
                    bar.set_style(
                        ProgressStyle::with_template(
                            "[{elapsed_precise}] {bar:30} {pos}/{len} points, ETA {eta} {msg}",
                        )
                        .expect("a valid template"),
                    );
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
                    b.inc(1);
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
) -> Result<(PathBuf, Meta, Store, results::RunLock), Failure> {
    let given = settings_from_args(args, fig)?;
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
            check_resume_conflicts(args, &given, &meta.settings, &dir)?;
            check_resume_machine(&meta, allocator, &dir)?;
            let store = resumable_store(&dir)?;
            if let Some(t) = args.timeout {
                meta.settings.timeout_secs = t;
            }
            // Where the figure goes: as given now, else as stored, else the default.
            meta.settings.figures_dir = Some(match given.figures_dir {
                Some(d) => d,
                None => match meta.settings.figures_dir.take() {
                    Some(d) => cli::output_dir("the stored figures directory", &d)?,
                    None => cli::output_dir("--figures-dir", Path::new(DEFAULT_FIGURES_DIR))?,
                },
            });
            meta.resumed.push(format!("{stamp} {}", command_line()));
            meta.write(&dir)?;
            Ok((dir, meta, store, lock))
        }
        None => {
            let mut given = given;
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
        s.size,
        if params.is_empty() {
            "no implemented workload".to_string()
        } else {
            params.join(", ")
        },
        s.reps,
        s.workers
            .iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
            .join(", "),
        match s.stack_size {
            Some(b) => format!("{}; fiber stacks of {b} bytes", s.pinning),
            None => s.pinning.to_string(),
        }
    ));
    out.push_str(&format!(
        "- Runtime settings: {}\n",
        settings_note(grid, s.pinning)
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
fn write_figure_files(
    dir: &Path,
    fig: &Figure,
    md: &str,
    grid: &Grid,
    panels: &[plot::Panel],
    subtitle: &str,
) -> Result<(), Failure> {
    std::fs::create_dir_all(dir)?;
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
const DEFAULT_FIGURES_DIR: &str = "paper-figures";

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
    let mut grid = Grid::build(fig.rows.clone(), &s.workers, &s.selection());
    grid.simulate_also(fig.sim_workers);
    grid
}

/// A run's points as its figure shows them: the points' summaries, the table, the claims'
/// verdicts and the plot's panels with its subtitle. `render` writes them out; `report`
/// gathers them from every figure's latest run.
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
}

/// The view of the run `meta` whose `raw.csv` holds `rows`, through `grid`.
pub(crate) fn view(fig: &Figure, grid: &Grid, meta: &Meta, store: &Store) -> View {
    let summaries = results::summarize(store);
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
    let verdicts = claims::judge(
        fig,
        &claims::Run {
            summaries: &summaries,
            cores: meta.machine.cores,
            size: meta.settings.size,
        },
    );
    View {
        table,
        panels,
        verdicts,
        subtitle: format!("size {}, {}", meta.settings.size, meta.machine.cpu_model),
        summaries,
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
    let s = meta.settings.clone();
    let run_dir = store.path().parent().unwrap_or(Path::new("."));
    let mut params_of = params_of.clone();
    for r in store.rows() {
        params_of.insert(r.point.workload.clone(), r.params.clone());
    }
    let params_of = &params_of;
    let View {
        summaries,
        table: tbl,
        verdicts,
        panels,
        subtitle,
    } = view(fig, grid, meta, store);
    results::write_summary(
        &run_dir.join("summary.csv"),
        &results::summary_rows(&summaries, meta.machine.logical_cpus),
    )?;
    outln!();
    out!("{}", tbl.to_text());
    outln!("{}", fig.metric.describe());
    let rounds_note = (s.rounds > 1).then(|| rounds_note(s.rounds, &summaries));
    if let Some(n) = &rounds_note {
        outln!("rounds: {n}");
    }
    claims::write_csv(&run_dir.join("claims.csv"), &verdicts)
        .map_err(|e| results::with_path(&run_dir.join("claims.csv"), e))?;
    if !verdicts.is_empty() {
        outln!(
            "\nThe paper's claims on this run ({}):",
            claims::tally(&verdicts)
        );
        out!("{}", claims::text(&verdicts));
    }

    let lacking = results::left_out_note(grid, store);
    let md = markdown(
        fig,
        meta,
        grid,
        &tbl,
        run_dir,
        params_of,
        rounds_note.as_deref(),
        lacking.as_deref(),
        &verdicts,
    );
    write_figure_files(run_dir, fig, &md, grid, &panels, &subtitle)?;
    write_figure_files(figures_dir, fig, &md, grid, &panels, &subtitle)?;
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
pub(crate) fn reproduce_command(args: &ReproduceArgs, allocator: &str) -> Result<i32, Failure> {
    let fig = lookup_figure(&args.id)?;
    let (run_dir, mut meta, mut store, _lock) = open_run(args, &fig, allocator)?;
    crate::runner::catch_interrupts();
    let s = meta.settings.clone();
    let figures_dir = s
        .figures_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(DEFAULT_FIGURES_DIR));
    let size = s.size;
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
        s.size,
        s.workers,
        s.reps,
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
    outln!("runtime settings: {}", settings_note(&grid, s.pinning));
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

    let exe = std::env::current_exe()?;
    let mut executor = ChildExecutor {
        exe,
        measure: spec::Measure {
            size,
            reps: Some(s.reps),
            pinning: s.pinning,
            stack_size: s.stack_size,
            hw_video: options.hw_video.clone(),
            hw_points: options.hw_points.clone(),
            params: Vec::new(),
        },
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
    let mut reporter = Reporter::new();
    let r = run_missing(
        &grid.points,
        &mut store,
        size,
        s.reps,
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

    #[test]
    fn stored_settings_are_checked_as_the_command_lines() {
        let fig = lookup_figure("prows-fig3").unwrap();
        let good = Settings {
            size: Size::Test,
            reps: 2,
            workers: vec![1, 2],
            runtimes: Some(vec!["serial".into(), "libfork/idle=busy".into()]),
            workloads: Some(vec!["fib".into()]),
            timeout_secs: 0,
            pinning: Pinning::None,
            hw_video: None,
            hw_points: None,
            rounds: 1,
            stack_size: Some(1 << 20),
            figures_dir: None,
            shard: Some(crate::shard::Shard { index: 2, count: 3 }),
        };
        check_stored_settings(&good, &fig).unwrap();
        type Spoil = fn(&mut Settings);
        let bad: [(Spoil, &str); 9] = [
            (|s| s.workers = vec![1, 0], "P=0"),
            (|s| s.workers = Vec::new(), "none listed"),
            (|s| s.reps = 0, "reps 0: must be 1 to 10000"),
            (|s| s.rounds = 0, "rounds 0: must be 1 to 100"),
            (|s| s.rounds = 101, "rounds 101: must be 1 to 100"),
            (
                |s| s.timeout_secs = u64::MAX,
                "timeout_secs 18446744073709551615",
            ),
            (|s| s.workloads = Some(vec!["mm".into()]), "workload 'mm'"),
            (|s| s.stack_size = Some(1), "between 16K and 4G"),
            (
                |s| s.shard = Some(crate::shard::Shard { index: 4, count: 3 }),
                "--shard 4/3",
            ),
        ];
        for (spoil, want) in bad {
            let mut s = good.clone();
            spoil(&mut s);
            let e = check_stored_settings(&s, &fig).unwrap_err();
            assert!(e.message().contains(want), "{want}: {}", e.message());
        }
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
