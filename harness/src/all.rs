//! `stealbench reproduce all` (every figure) and `reproduce ID,ID,...` (those figures): one
//! figure after the other, each a `reproduce` of its own, then `report` over their runs.
//!
//! A set is resumable as a whole. Its state is `<out>/sets/<timestamp>/set.json`: the ids,
//! the size each figure runs at (fixed before the first figure starts, so `--size decide`
//! chooses once), the command line's options and when the set started. A figure's run is the
//! latest run directory of that id under `<out>` that started after the set did: finished, it
//! is done; unfinished, `--resume` continues it as `reproduce ID --resume DIR` does (its
//! finished points are not run again); none, the figure starts. `reproduce all --resume`
//! continues the latest unfinished set of the same ids, with its stored options.

use crate::cli::{Cli, Command, ReportArgs, ReproduceArgs, SizeChoice};
use crate::failure::Failure;
use crate::figures::Figure;
use crate::forecast::{self, FigurePlan};
use crate::results::{self, Meta};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::SystemTime;
use stealbench_schedulers::FenceMode;
use stealbench_workloads::Size;

/// The state of a set of figures' runs (`set.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct SetState {
    /// The ids as given (`all`, or `a,b`).
    ids: String,
    /// Each figure and the size it runs at.
    sizes: Vec<(String, String)>,
    /// The options of `reproduce` after the ids, as given (without `--resume`).
    options: Vec<String>,
    /// When the set started (ISO 8601, UTC).
    started: String,
    /// Whether every figure ran and the report was written.
    finished: bool,
}

/// Whether `args` names a set (`all`, a comma-separated list, or `--size decide`), which
/// [`reproduce_set`] runs.
pub(crate) fn is_set(args: &ReproduceArgs) -> bool {
    args.id == "all" || args.id.contains(',') || args.size == Some(SizeChoice::Decide)
}

/// The options of this process's `reproduce` command line after the ids, without
/// `--resume [DIR]`.
fn given_options() -> Vec<String> {
    let argv: Vec<String> = std::env::args().collect();
    let start = argv
        .iter()
        .position(|a| a == "reproduce")
        .map_or(argv.len(), |i| i + 2);
    let mut out = Vec::new();
    let mut rest = argv.into_iter().skip(start).peekable();
    while let Some(a) = rest.next() {
        if a == "--resume" {
            rest.next_if(|v| !v.starts_with('-'));
            continue;
        }
        out.push(a);
    }
    out
}

/// `reproduce IDS OPTIONS` read back from a set's stored options.
fn stored_args(ids: &str, options: &[String]) -> Result<ReproduceArgs, Failure> {
    use clap::Parser;
    let line = ["stealbench", "reproduce", ids]
        .into_iter()
        .map(String::from)
        .chain(options.iter().cloned());
    match Cli::try_parse_from(line) {
        Ok(Cli {
            command: Command::Reproduce(a),
        }) => Ok(a),
        Ok(_) => Err(Failure::Usage(
            "the stored set is not a reproduce".to_string(),
        )),
        Err(e) => Err(Failure::Usage(format!(
            "the stored set's options do not read: {}",
            crate::cli::one_line_clap_error(&e)
        ))),
    }
}

/// The latest unfinished set of `ids` under `out`.
fn latest_unfinished_set(out: &Path, ids: &str) -> Result<Option<(PathBuf, SetState)>, Failure> {
    let root = out.join("sets");
    let Ok(entries) = std::fs::read_dir(&root) else {
        return Ok(None);
    };
    let mut dirs: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    dirs.sort();
    for d in dirs.into_iter().rev() {
        let Ok(text) = std::fs::read_to_string(d.join("set.json")) else {
            continue;
        };
        let state: SetState = serde_json::from_str(&text)
            .map_err(|e| Failure::Usage(format!("{}: {e}", d.join("set.json").display())))?;
        if state.ids == ids && !state.finished {
            return Ok(Some((d, state)));
        }
    }
    Ok(None)
}

/// Writes the set's state.
fn write_state(dir: &Path, state: &SetState) -> Result<(), Failure> {
    let text = serde_json::to_string_pretty(state).map_err(|e| Failure::Runtime(e.to_string()))?;
    crate::files::write_atomic(&dir.join("set.json"), text.as_bytes())
        .map_err(|e| Failure::Io(e.to_string()))
}

/// The latest run directory of `id` under `out` that started at `started` or later, with its
/// meta.
fn run_of(out: &Path, id: &str, started: &str) -> Result<Option<(PathBuf, Meta)>, Failure> {
    let Ok(entries) = std::fs::read_dir(out.join(id)) else {
        return Ok(None);
    };
    let mut best: Option<(PathBuf, Meta)> = None;
    for e in entries.filter_map(Result::ok) {
        let dir = e.path();
        let Ok(meta) = Meta::read(&dir) else { continue };
        if meta.timestamp.as_str() >= started
            && best
                .as_ref()
                .is_none_or(|(_, m)| m.timestamp <= meta.timestamp)
        {
            best = Some((dir, meta));
        }
    }
    Ok(best)
}

/// The sizes of a new set: fixed, or chosen by `--size decide` within the budget (printed).
fn choose_sizes(
    args: &ReproduceArgs,
    figures: &[Figure],
    fence: FenceMode,
) -> Result<Vec<Size>, Failure> {
    let model = forecast::Model::calibrated(&args.reference);
    let plans: Vec<FigurePlan> = match (args.size, &model) {
        (Some(SizeChoice::Decide), Ok(m)) => {
            let budget = args.budget.unwrap_or(crate::cli::DEFAULT_BUDGET).seconds();
            outln!(
                "--size decide: each figure at the smallest size at which its claims decide \
                 here, within {}",
                forecast::duration(budget)
            );
            forecast::decide_sizes(m, figures, args, budget, fence)?
        }
        (Some(SizeChoice::Decide), Err(e)) => {
            return Err(Failure::Usage(format!(
                "--size decide needs the time model: {}",
                e.message()
            )));
        }
        (_, Ok(m)) => figures
            .iter()
            .map(|f| forecast::plan_figure(m, f, args, None, fence))
            .collect::<Result<_, _>>()?,
        (_, Err(e)) => {
            outln!("no time estimate: {}", e.message());
            let size = args.size.and_then(SizeChoice::fixed).unwrap_or(Size::Paper);
            return Ok(vec![size; figures.len()]);
        }
    };
    if let Ok(m) = &model {
        outln!("{}", forecast::model_note(m));
    }
    outln!("the plan:");
    for p in &plans {
        out!("{}", forecast::text(p));
    }
    let total: f64 = plans.iter().map(|p| p.seconds).sum();
    outln!("expected {} in all", forecast::duration(total));
    Ok(plans.iter().map(|p| p.settings.measure.size).collect())
}

/// `stealbench reproduce all|ID,ID,...|ID --size decide`: every figure of the set in turn
/// (each as `reproduce` runs it), then `report` over their runs (against the reference runs
/// when they exist). Exit code: 0 when every point of every figure finished ok, 1 when some
/// did not, 130 when interrupted (`--resume` continues).
pub(crate) fn reproduce_set(
    args: &ReproduceArgs,
    allocator: &str,
    fence: FenceMode,
) -> Result<i32, Failure> {
    let out = crate::cli::output_dir("--out", &args.out)?;
    let (set_dir, state, args) = match &args.resume {
        Some(None) => {
            let given = [
                ("--size", args.size.is_some()),
                ("--budget", args.budget.is_some()),
                ("--workers", args.workers.is_some()),
                ("--runtimes", args.runtimes.is_some()),
                ("--workloads", args.workloads.is_some()),
                ("--reps", args.reps.is_some()),
                ("--rounds", args.rounds.is_some()),
                ("--shard", args.shard.is_some()),
            ];
            let named: Vec<&str> = given.iter().filter(|(_, g)| *g).map(|(n, _)| *n).collect();
            if !named.is_empty() {
                return Err(Failure::Usage(format!(
                    "a set resumes with the options it was started with; drop {}",
                    named.join(", ")
                )));
            }
            let (dir, state) = latest_unfinished_set(&out, &args.id)?.ok_or_else(|| {
                Failure::Usage(format!(
                    "no unfinished set {} under {}; start one without --resume",
                    args.id,
                    out.join("sets").display()
                ))
            })?;
            let mut stored = stored_args(&state.ids, &state.options)?;
            stored.out.clone_from(&out);
            outln!(
                "resuming the set started {} ({})",
                state.started,
                dir.display()
            );
            (dir, state, stored)
        }
        Some(Some(_)) => {
            return Err(Failure::Usage(
                "a set resumes by its ids (reproduce all --resume), not a directory".to_string(),
            ));
        }
        None => {
            let figures = forecast::figures_of(&args.id)?;
            let sizes = choose_sizes(args, &figures, fence)?;
            let (started, stamp) = results::timestamps(SystemTime::now());
            let dir = out.join("sets").join(stamp);
            std::fs::create_dir_all(&dir)
                .map_err(|e| Failure::Io(format!("{}: {e}", dir.display())))?;
            let state = SetState {
                ids: args.id.clone(),
                sizes: figures
                    .iter()
                    .zip(&sizes)
                    .map(|(f, s)| (f.id.to_string(), s.name().to_string()))
                    .collect(),
                options: given_options(),
                started,
                finished: false,
            };
            write_state(&dir, &state)?;
            let mut a = args.clone();
            a.out.clone_from(&out);
            (dir, state, a)
        }
    };
    crate::supervise::catch_interrupts();
    let mut failed = false;
    let mut runs = Vec::new();
    let n = state.sizes.len();
    for (i, (id, size)) in state.sizes.iter().enumerate() {
        let size: Size = size
            .parse()
            .map_err(|_| Failure::Usage(format!("set.json: size '{size}' of {id}")))?;
        let mut a = args.clone();
        a.id.clone_from(id);
        a.size = Some(SizeChoice::Fixed(size));
        a.budget = None;
        a.resume = None;
        match run_of(&out, id, &state.started)? {
            Some((dir, meta)) if meta.finished => {
                outln!("=== [{}/{n}] {id}: done ({})", i + 1, dir.display());
                runs.push(dir);
                continue;
            }
            Some((dir, _)) => {
                outln!(
                    "=== [{}/{n}] {id} at {size}: resuming {}",
                    i + 1,
                    dir.display()
                );
                a.resume = Some(Some(dir));
            }
            None => outln!("=== [{}/{n}] {id} at {size}", i + 1),
        }
        let code = crate::reproduce::reproduce_command(&a, allocator, fence)?;
        if code == 130 {
            errln!(
                "the set is interrupted; continue it with: stealbench reproduce {} --resume \
                 --out {}",
                state.ids,
                out.display()
            );
            return Ok(130);
        }
        failed |= code != 0;
        if let Some((dir, _)) = run_of(&out, id, &state.started)? {
            runs.push(dir);
        }
    }
    let reference = args.reference.join("");
    let report = ReportArgs {
        dirs: runs,
        figures_dir: args
            .figures_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from(crate::plan::DEFAULT_FIGURES_DIR)),
        against: reference.is_dir().then_some(reference),
    };
    outln!("\n=== report");
    crate::report::report_command(&report)?;
    let mut state = state;
    state.finished = true;
    write_state(&set_dir, &state)?;
    Ok(if failed { 1 } else { 0 })
}
