//! A run's plan: the figure an id names, its settings (the command line's over a resumed
//! run's, checked against the figure and the input files), the resume checks, the run
//! directory and the grid it measures.

use crate::cli::{self, ReproduceArgs};
use crate::failure::Failure;
use crate::figures::{self, Figure};
use crate::grid::{Grid, workload_info};
use crate::results::{self, Meta, Settings, Store};
use crate::spec::WorkloadSpec;
use crate::{inputs, spec, suggest};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;
use stealbench_schedulers::FenceMode;
use stealbench_schedulers::topology::Topology;
use stealbench_workloads::{InputOptions, Size};

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
/// checked as a whole ([`check_settings`]) before anything runs; the input files are checked
/// by [`input_params`]. The figures directory is made absolute when given, else left as
/// stored (`open_run` settles it).
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
        .unwrap_or_else(|| spec::default_reps(size).div_ceil(rounds));
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
            .unwrap_or_else(|| spec::default_timeout(size)),
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
    Ok(settings)
}

/// The parameters of every workload of the grid of `fig` under settings `s` (what its page
/// shows), at the run's size and with its input files, each workload checked once, before a
/// run directory exists or a point runs ([`inputs::check_inputs`]): those the run selects with
/// the input files (a file of a workload not selected is refused), the grid's other rows'
/// workloads, which no point measures, without them.
pub(crate) fn input_params(
    fig: &Figure,
    s: &Settings,
) -> Result<HashMap<WorkloadSpec, String>, Failure> {
    let size = s.measure.size;
    let selected = selected_workloads(fig, s.workloads.as_deref());
    let mut params = inputs::check_inputs(&selected, size, &s.input_options())?;
    let others: Vec<WorkloadSpec> = run_grid(fig, s)
        .workloads()
        .into_iter()
        .filter(|w| workload_info(w).is_some() && !selected.contains(w))
        .collect();
    params.extend(inputs::check_inputs(
        &others,
        size,
        &InputOptions::default(),
    )?);
    Ok(params.into_iter().collect())
}

/// Checks settings against the figure they run, wherever they come from (the command line,
/// or a run's `meta.json`, whose every value its option's check has read): the workloads and
/// runtimes selected must be the figure's, and a shard count at most its points (see
/// [`crate::shard::check_count`]). The input files are checked when the run starts
/// ([`input_params`]).
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
fn check_workload_selection(fig: &Figure, selection: &[WorkloadSpec]) -> Result<(), Failure> {
    let mut known: Vec<String> = Vec::new();
    for r in &fig.rows {
        for w in [r.workload.name().to_string(), r.workload.to_string()] {
            if !known.contains(&w) {
                known.push(w);
            }
        }
    }
    for w in selection {
        if !fig.rows.iter().any(|r| w.selects(&r.workload)) {
            let known: Vec<&str> = known.iter().map(String::as_str).collect();
            return Err(Failure::Usage(format!(
                "{} in {}",
                suggest::unknown("workload", &w.to_string(), &known),
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
fn selected_workloads(fig: &Figure, selection: Option<&[WorkloadSpec]>) -> Vec<WorkloadSpec> {
    let mut out: Vec<WorkloadSpec> = Vec::new();
    for r in &fig.rows {
        let chosen = selection.is_none_or(|s| s.iter().any(|w| w.selects(&r.workload)));
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

fn command_line() -> String {
    std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A run opened by [`open_run`]: new, or resumed.
pub(crate) struct OpenRun {
    /// Its directory.
    pub dir: PathBuf,
    /// Its `meta.json`, with the settings it runs with.
    pub meta: Meta,
    /// Its `raw.csv`, read.
    pub store: Store,
    /// Held while it runs.
    pub lock: results::RunLock,
    /// Every workload's parameters, its input files checked ([`input_params`]).
    pub params: HashMap<WorkloadSpec, String>,
}

/// Which run directory, with which settings and meta, its raw.csv, read, and its workloads'
/// parameters.
pub(crate) fn open_run(
    args: &ReproduceArgs,
    fig: &Figure,
    allocator: &str,
    fence: FenceMode,
) -> Result<OpenRun, Failure> {
    let (stamp, dir_stamp) = results::timestamps(SystemTime::now());
    let (dir, meta, store, lock, params) = match &args.resume {
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
            // A resume refused below leaves nothing it made: the lock's file, the figures
            // directory.
            let made_lock = dir.join(".lock").symlink_metadata().is_err();
            let made_figures = args.figures_dir.clone().filter(|d| !d.exists());
            let lock = results::RunLock::acquire(&dir).map_err(Failure::of_lock)?;
            // Read again under the lock: another process may have changed it meanwhile.
            let checked = (|| -> Result<_, Failure> {
                let meta = resumable_meta(&dir, fig)?;
                let given = resolve_settings(args, fig, Some(&meta.settings), fence)?;
                // The stored input files are checked again: they may have gone or changed since.
                let params = input_params(fig, &given)?;
                check_resume_conflicts(&given, &meta.settings, &dir)?;
                check_resume_machine(&meta, allocator, &dir)?;
                Ok((meta, given, params, resumable_store(&dir)?))
            })();
            let (mut meta, mut given, params, store) = checked.inspect_err(|_| {
                if made_lock {
                    let _ = std::fs::remove_file(dir.join(".lock"));
                }
                if let Some(d) = &made_figures {
                    let _ = std::fs::remove_dir(d);
                }
            })?;
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
            (dir, meta, store, lock, params)
        }
        None => {
            let mut given = resolve_settings(args, fig, None, fence)?;
            let params = input_params(fig, &given)?;
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
            // Every file of the run must fit under the run directory's path (with a suffix
            // `-N` of a taken name), and the figure's under the figures directory's.
            let run_files = [
                "raw.csv",
                "meta.json",
                "summary.csv",
                "claims.csv",
                "attempts.csv",
            ];
            let page_files = [".md", ".svg", ".png"].map(|e| format!("{}{e}", fig.id));
            let pages: Vec<&str> = page_files.iter().map(String::as_str).collect();
            let in_run = [&run_files[..], &pages].concat();
            crate::files::check_fits(&args.out.join(fig.id).join(format!("{name}-99")), &in_run)
                .and_then(|()| {
                    let figures = given.figures_dir.as_deref().unwrap_or(Path::new("."));
                    crate::files::check_fits(figures, &pages)
                })
                .map_err(Failure::Usage)?;
            let dir = results::create_run_dir(&args.out, fig.id, &name)?;
            let lock = results::RunLock::acquire(&dir).map_err(Failure::of_lock)?;
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
                machines: Vec::new(),
                ran: Default::default(),
            };
            meta.write(&dir)?;
            let store = Store::open(&dir.join("raw.csv"))?;
            (dir, meta, store, lock, params)
        }
    };
    Ok(OpenRun {
        dir,
        meta,
        store,
        lock,
        params,
    })
}

/// Where the figures go when neither `--figures-dir` nor a resumed run says.
pub(crate) const DEFAULT_FIGURES_DIR: &str = "paper-figures";

/// The grid of `fig` that a run with settings `s` measures: the figure's rows at the run's
/// workers under its selection, and the simulated rows at the figure's extra P (the whole grid:
/// a shard's part is taken from it).
pub(crate) fn run_grid(fig: &Figure, s: &Settings) -> Grid {
    let mut grid = Grid::build_with(fig.rows.clone(), fig.ts, &s.workers, &s.selection());
    grid.simulate_also(fig.sim_workers);
    grid
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::PointSpec;
    use stealbench_schedulers::Pinning;
    use tempfile::TempDir;

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
        // The environment's fence mode, which a run stores and gives its children.
        let fence = FenceMode::Eager;
        let settings = resolve_settings(&args, &fig, None, fence).unwrap();
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
        assert_eq!(settings.fence, fence);

        let mut meta = Meta::sample(fig.id, 1);
        meta.settings = settings.clone();
        meta.write(dir.path()).unwrap();
        let stored = Meta::read(dir.path()).unwrap().settings;
        assert_eq!(stored, settings);

        // The child of an hw point on a fiber runtime is given every setting of the Measure, and
        // the run's fence mode.
        let point = PointSpec {
            runtime: "prows".into(),
            workload: "hw".into(),
            variant: stealbench_workloads::Variant::Gf,
            workers: 2,
        };
        let executor = ChildExecutor {
            exe: PathBuf::from("stealbench"),
            measure: stored.measure.clone(),
            fence: stored.fence,
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
            (child.point, child.measure, child.fence),
            (point, settings.measure.clone(), Some(fence))
        );

        // A resume that gives nothing resolves to the stored settings.
        let resume = reproduce_args(&["prows-fig2", "--resume"]);
        assert_eq!(
            resolve_settings(&resume, &fig, Some(&stored), fence).unwrap(),
            stored
        );
    }

    /// A run's parameters cover every workload of its grid (its page shows them all), each
    /// checked once: a selected one with the run's input files, the others without; a file of
    /// a workload the run does not select is refused before anything runs.
    #[test]
    fn input_params_give_every_workload_of_the_grid_and_refuse_a_file_not_used() {
        use stealbench_workloads::hw::{VideoSpec, avi};
        let fig = lookup_figure("prows-fig4").unwrap();
        let lcs: Vec<&str> = "prows-fig4 --size test --workers 1 --workloads lcs"
            .split(' ')
            .collect();
        let s = resolve_settings(&reproduce_args(&lcs), &fig, None, FenceMode::default()).unwrap();
        let params = input_params(&fig, &s).unwrap();
        let mut names: Vec<&str> = params.keys().map(|w| w.name()).collect();
        names.sort_unstable();
        assert_eq!(names, ["hw", "lcs", "sw"], "{params:?}");
        assert!(params.values().all(|p| !p.is_empty()), "{params:?}");

        let dir = TempDir::with_prefix("stealbench-input-params-").unwrap();
        let video = dir.path().join("heart.avi");
        std::fs::write(&video, avi::encode_gray8(&VideoSpec::test(12).generate())).unwrap();
        let with_video = [&lcs[..], &["--hw-video", video.to_str().unwrap()]].concat();
        let s = resolve_settings(
            &reproduce_args(&with_video),
            &fig,
            None,
            FenceMode::default(),
        )
        .unwrap();
        let e = input_params(&fig, &s).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(
            e.message().contains("which is not run here"),
            "{}",
            e.message()
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
