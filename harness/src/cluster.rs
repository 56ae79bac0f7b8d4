//! Many machines: a figure's grid cut into shards (`reproduce ID --shard i/N`, the deal in
//! [`shard`](crate::shard)), the shards' run directories merged into one run (`stealbench
//! merge`), and a Slurm job array that does both (`stealbench slurm`).

use crate::cli::{MergeArgs, SlurmArgs};
use crate::failure::Failure;
use crate::figures::Figure;
use crate::grid::Status;
use crate::results::{self, Meta, RawRow, Store};
use crate::shard::{Shard, shard_points};
use crate::spec::PointSpec;
use crate::{page, plan};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// What must agree between the runs `merge` combines unless `--force`: the machine and build
/// (as on `--resume`, [`results::run_differences`]), and every setting
/// ([`results::Settings::differences`]) but those that do not shape the grid or its points
/// ([`MAY_DIFFER`]).
fn differences(a: &Meta, b: &Meta) -> Vec<String> {
    let mut d: Vec<String> =
        results::run_differences((&a.machine, &a.build), (&b.machine, &b.build))
            .into_iter()
            .map(|(what, x, y)| format!("{what} {x} vs {y}"))
            .collect();
    d.extend(
        a.settings
            .differences(&b.settings, &MAY_DIFFER)
            .into_iter()
            .map(|d| format!("{} {} vs {}", d.key, d.ours, d.theirs)),
    );
    d
}

/// The settings in which the shards of one run differ, or may: the shard itself, the timeout
/// and where the figures go.
const MAY_DIFFER: [&str; 3] = ["shard", "timeout_secs", "figures_dir"];

/// The measurements (point, round) a run with settings `s` of `fig` makes: its shard's part of
/// the grid (all of it without a shard), every point once per round.
fn measurements_of(fig: &Figure, s: &results::Settings) -> BTreeSet<(PointSpec, usize)> {
    let grid = plan::run_grid(fig, s);
    let points = match s.shard {
        Some(shard) => shard_points(&grid.points, shard),
        None => grid.points,
    };
    points
        .into_iter()
        .flat_map(|p| (1..=s.rounds).map(move |r| (p.clone(), r)))
        .collect()
}

/// A measurement for a person: the point, and its round when there are several.
fn measurement_name(p: &PointSpec, round: usize, rounds: usize) -> String {
    if rounds > 1 {
        format!("{p} round {round}")
    } else {
        p.to_string()
    }
}

/// The first few of `names`, and how many more there are.
fn first_few(names: &[String]) -> String {
    const SHOWN: usize = 3;
    let mut s = names[..names.len().min(SHOWN)].join(", ");
    if names.len() > SHOWN {
        s.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    s
}

/// What a run directory gives a merge: the rows of its whole measurements, and what is wrong
/// with the others (each one line naming the file).
pub(crate) struct Part {
    rows: Vec<RawRow>,
    /// What is wrong with the run's `raw.csv`, each one line naming the file.
    pub problems: Vec<String>,
    /// Which of the run's measurements its `raw.csv` lacks, if any (a run merged with
    /// `--force` may lack some, and says so).
    pub lacking: Option<String>,
    /// The run's rows as read, those this build cannot read among them (kept by the merge).
    store: Option<Store>,
}

/// Reads the `raw.csv` of the run `dir` (its meta `meta`) for a merge or a report, without
/// changing it: a file missing, empty or with its last line cut short, a row of another size
/// or of a round the run does not have, a measurement recorded twice or cut short
/// ([`results::incomplete_measurements`]), or one of the run's measurements absent, is a
/// problem; the rows of the whole measurements are kept.
pub(crate) fn read_part(fig: &Figure, dir: &Path, meta: &Meta) -> Result<Part, Failure> {
    let path = dir.join("raw.csv");
    let mut problems = Vec::new();
    let text = match crate::files::read_regular(&path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map_err(|_| Failure::Usage(format!("{}: not UTF-8 text", path.display())))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            problems.push(format!("{} is missing", path.display()));
            return Ok(Part {
                rows: Vec::new(),
                problems,
                lacking: None,
                store: None,
            });
        }
        Err(e) => return Err(Failure::Io(e.to_string())),
    };
    if text.is_empty() {
        problems.push(format!("{} is empty", path.display()));
        return Ok(Part {
            rows: Vec::new(),
            problems,
            lacking: None,
            store: None,
        });
    }
    let whole_lines = match results::cut_last_line(text.as_bytes()) {
        Some(keep) => {
            problems.push(format!("{}: its last line is cut short", path.display()));
            &text[..keep]
        }
        None => &text[..],
    };
    let store = Store::parse(&path, whole_lines).map_err(|e| Failure::Usage(e.to_string()))?;
    let s = &meta.settings;
    if let Some(r) = store
        .rows()
        .iter()
        .find(|r| r.size != s.measure.size || r.round > s.rounds)
    {
        problems.push(format!(
            "{}: a row of {} (size {}, round {}) is not of this run (size {}, {} round(s))",
            path.display(),
            r.point,
            r.size,
            r.round,
            s.measure.size,
            s.rounds
        ));
    }
    let incomplete = results::incomplete_measurements(&store, s.reps());
    for (p, round, why) in &incomplete {
        problems.push(format!(
            "{}: {}: {why}",
            path.display(),
            measurement_name(p, *round, s.rounds)
        ));
    }
    let expected = measurements_of(fig, s);
    let recorded = results::recorded_rounds(&store);
    let missing: Vec<String> = expected
        .iter()
        .filter(|m| !recorded.contains(*m))
        .map(|(p, r)| measurement_name(p, *r, s.rounds))
        .collect();
    let lacking = (!missing.is_empty()).then(|| {
        format!(
            "{} lacks {} of the run's {} measurements ({})",
            path.display(),
            missing.len(),
            expected.len(),
            first_few(&missing)
        )
    });
    let cut: BTreeSet<(PointSpec, usize)> =
        incomplete.into_iter().map(|(p, r, _)| (p, r)).collect();
    let rows = store
        .rows()
        .iter()
        .filter(|r| !cut.contains(&(r.point.clone(), r.round)))
        .filter(|r| r.size == s.measure.size && r.round <= s.rounds)
        .cloned()
        .collect();
    Ok(Part {
        rows,
        problems,
        lacking,
        store: Some(store),
    })
}

/// `stealbench merge DIR...`: the rows of the runs of one figure, checked to agree, to measure
/// disjoint points and to be whole, in a new run directory (`ID/TIMESTAMP-merged`),
/// summarised and rendered as `reproduce` renders. A run that is damaged or unfinished (a
/// `raw.csv` missing, empty, cut short, with a row twice or a measurement missing) or a shard
/// that is not given is refused, naming what is wrong; `--force` merges the whole measurements
/// of what is given instead and says what is missing. Exit code 0 when every point of the
/// grid is there and ok, 1 otherwise.
pub(crate) fn merge_command(args: &MergeArgs, allocator: &str) -> Result<i32, Failure> {
    // SIGINT and SIGTERM stop the merge between its files, never inside one.
    crate::supervise::catch_interrupts();
    let mut metas = Vec::new();
    for d in &args.dirs {
        let not_a_run =
            |why: String| Failure::Usage(format!("{}: not a run directory ({why})", d.display()));
        let m = Meta::read(d).map_err(|e| not_a_run(e.to_string()))?;
        if let Ok(fig) = plan::lookup_figure(&m.id) {
            plan::check_settings(&m.settings, &fig)
                .map_err(|f| not_a_run(format!("its meta.json is invalid: {}", f.message())))?;
        }
        metas.push(m);
    }
    let first = &metas[0];
    for (d, m) in args.dirs.iter().zip(&metas).skip(1) {
        if m.id != first.id {
            return Err(Failure::Usage(format!(
                "{} is a run of {}, {} of {}: merge runs of one figure",
                d.display(),
                m.id,
                args.dirs[0].display(),
                first.id
            )));
        }
        let diff = differences(first, m);
        if !diff.is_empty() && !args.force {
            return Err(Failure::Usage(format!(
                "{} and {} differ ({}); --force merges them anyway",
                args.dirs[0].display(),
                d.display(),
                diff.join("; ")
            )));
        }
    }
    for (d, m) in args.dirs.iter().zip(&metas) {
        if !m.finished && !args.force {
            return Err(Failure::Usage(format!(
                "{} is unfinished: resume it (stealbench reproduce {} --resume {}) or --force",
                d.display(),
                m.id,
                d.display()
            )));
        }
    }
    let shards: Vec<Shard> = metas.iter().filter_map(|m| m.settings.shard).collect();
    let mut seen: Vec<usize> = shards.iter().map(|x| x.index).collect();
    seen.sort_unstable();
    seen.dedup();
    let shard_dirs: Vec<(&PathBuf, Shard)> = args
        .dirs
        .iter()
        .zip(&metas)
        .filter_map(|(d, m)| Some((d, m.settings.shard?)))
        .collect();
    for (i, (a, sa)) in shard_dirs.iter().enumerate() {
        if let Some((b, _)) = shard_dirs[i + 1..].iter().find(|(_, sb)| sb == sa) {
            return Err(Failure::Usage(format!(
                "{} and {} are both shard {sa}: merge each shard's run directory once",
                a.display(),
                b.display()
            )));
        }
    }
    if let Some(s) = shards.iter().find(|s| s.count != shards[0].count) {
        return Err(Failure::Usage(format!(
            "shard {} and shard {s} are parts of different cuts of the grid: merge the shards \
             of one --shard run",
            shards[0]
        )));
    }
    let fig = plan::lookup_figure(&first.id)?;
    let mut rows = Vec::new();
    let mut stores = Vec::new();
    let mut owner: BTreeMap<PointSpec, &Path> = BTreeMap::new();
    let mut problems = Vec::new();
    for (d, m) in args.dirs.iter().zip(&metas) {
        let mut part = read_part(&fig, d, m)?;
        part.problems.extend(part.lacking.take());
        if let (Some(problem), false) = (part.problems.first(), args.force) {
            return Err(Failure::Usage(format!(
                "{problem}: resume the run (stealbench reproduce {} --resume {}) and merge \
                 again, or --force to merge its whole measurements",
                m.id,
                d.display()
            )));
        }
        problems.extend(part.problems);
        let points: BTreeSet<&PointSpec> = part.rows.iter().map(|r| &r.point).collect();
        for p in points {
            if let Some(other) = owner.insert(p.clone(), d) {
                return Err(Failure::Usage(format!(
                    "point {p} is in both {} and {}: merge disjoint runs (the shards of one \
                     --shard run)",
                    other.display(),
                    d.display()
                )));
            }
        }
        rows.extend(part.rows);
        stores.extend(part.store);
    }
    if let Some(s) = shards.first() {
        let absent: Vec<String> = (1..=s.count)
            .filter(|i| !seen.contains(i))
            .map(|i| format!("{i}/{}", s.count))
            .collect();
        if !absent.is_empty() {
            let what = format!(
                "{} of {} shards given (shard {} missing)",
                seen.len(),
                s.count,
                first_few(&absent)
            );
            if !args.force {
                return Err(Failure::Usage(format!(
                    "{what}: merge the run directories of all {} shards, or --force to merge \
                     these alone",
                    s.count
                )));
            }
            problems.push(what);
        }
    }
    for p in &problems {
        errln!("note: {p}");
    }

    crate::cli::output_dir("--out", &args.out)?;
    let figures_dir = crate::cli::output_dir("--figures-dir", &args.figures_dir)?;
    // An interrupted merge leaves no half-merged run: its directory, all of it written by this
    // process, is removed.
    let interrupted = |run_dir: Option<&Path>| {
        if let Some(d) = run_dir {
            let _ = std::fs::remove_dir_all(d);
        }
        errln!(
            "interrupted: nothing merged{}",
            run_dir.map_or(String::new(), |d| format!(" ({} removed)", d.display()))
        );
        Ok(130)
    };
    if crate::supervise::interrupted() {
        return interrupted(None);
    }
    let (stamp, dir_stamp) = results::timestamps(SystemTime::now());
    let run_dir = results::create_run_dir(&args.out, fig.id, &format!("{dir_stamp}-merged"))?;
    let _lock = results::RunLock::acquire(&run_dir).map_err(Failure::of_lock)?;
    let others: Vec<&Store> = stores.iter().collect();
    let store = Store::create(&run_dir.join("raw.csv"), &rows, &others)?;
    if crate::supervise::interrupted() {
        return interrupted(Some(&run_dir));
    }
    let mut meta = first.clone();
    meta.timestamp = stamp;
    meta.command_line = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    meta.resumed = Vec::new();
    meta.finished = false;
    meta.finished_at = None;
    meta.settings.shard = None;
    meta.settings.figures_dir = Some(figures_dir.clone());
    // Runs merged with --force across builds name every build's commit, compiler and
    // allocator.
    let every = |f: fn(&Meta) -> &str| {
        let mut seen: Vec<&str> = Vec::new();
        for m in &metas {
            if !seen.contains(&f(m)) {
                seen.push(f(m));
            }
        }
        seen.join(", ")
    };
    // Runs merged with --force across machines keep every machine with the points it measured
    // (Meta::machines); `machine` is the one with the fewest logical CPUs.
    meta.machines = Vec::new();
    for (p, d) in &owner {
        let Some(m) = args
            .dirs
            .iter()
            .position(|x| x.as_path() == *d)
            .map(|i| &metas[i])
        else {
            continue;
        };
        let machine = m.machine_of(&p.to_string());
        match meta.machines.iter_mut().find(|x| &x.machine == machine) {
            Some(x) => x.points.push(p.to_string()),
            None => meta.machines.push(results::Measured {
                machine: machine.clone(),
                points: vec![p.to_string()],
            }),
        }
    }
    if meta.machines.len() < 2 {
        meta.machines.clear();
    } else if let Some(smallest) = meta
        .machines
        .iter()
        .map(|x| &x.machine)
        .min_by_key(|m| (m.logical_cpus, m.cores))
    {
        meta.machine = smallest.clone();
    }
    meta.build.git_commit = every(|m| &m.build.git_commit);
    meta.build.rustc = every(|m| &m.build.rustc);
    meta.build.allocator = every(|m| &m.build.allocator);
    meta.merged_from = args
        .dirs
        .iter()
        .zip(&metas)
        .map(|(d, m)| {
            format!(
                "{} (commit {}, size {}, {}, started {})",
                d.canonicalize().unwrap_or_else(|_| d.clone()).display(),
                m.build.git_commit,
                m.settings.measure.size,
                m.machine.cpu_model,
                m.timestamp
            )
        })
        .collect();
    // The allocator of the merged run is the shards', not this process's.
    let _ = allocator;
    meta.write(&run_dir)?;
    if crate::supervise::interrupted() {
        return interrupted(Some(&run_dir));
    }

    let s = meta.settings.clone();
    let grid = plan::run_grid(&fig, &s);
    let missing = grid
        .points
        .iter()
        .filter(|p| !owner.contains_key(*p))
        .count();
    let recorded = results::recorded_rounds(&store);
    let absent: Vec<String> = measurements_of(&fig, &s)
        .into_iter()
        .filter(|m| !recorded.contains(m))
        .map(|(p, r)| measurement_name(&p, r, s.rounds))
        .collect();
    outln!(
        "{}: {} runs merged into {}, {} points ({} of the grid's missing)",
        fig.id,
        args.dirs.len(),
        run_dir.display(),
        owner.len(),
        missing
    );
    if let Some(n) = results::left_out_note(&grid, &store) {
        outln!("note: {n}");
    }
    // `render` prints the one `wrote ...` line, naming every file it wrote.
    let summaries = page::render(
        &fig,
        &grid,
        &mut meta,
        &store,
        &figures_dir,
        &HashMap::new(),
    )?;
    if !absent.is_empty() {
        errln!(
            "incomplete: the merged run lacks {} of the grid's measurements ({})",
            absent.len(),
            first_few(&absent)
        );
    }
    Ok(i32::from(
        !absent.is_empty() || summaries.iter().any(|s| s.status != Status::Ok),
    ))
}

/// Quotes `s` for a POSIX shell where it needs it.
fn sh(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The most array tasks `slurm` writes: Slurm's default `MaxArraySize` (1001) allows indices
/// up to 1000.
pub(crate) const MAX_SHARDS: usize = 1000;

/// Checks a value written into a Slurm script: no control character (a newline would start a
/// line of its own in the script).
fn no_control(what: &str, value: &str) -> Result<(), Failure> {
    if value.chars().any(char::is_control) {
        return Err(Failure::Usage(format!(
            "{what} {value:?}: a control character (newline, tab, ...) cannot go into a Slurm \
             script"
        )));
    }
    Ok(())
}

/// Checks `--time` against Slurm's formats: `M`, `M:S`, `H:M:S`, `D-H`, `D-H:M`, `D-H:M:S`
/// (numbers; minutes and seconds after the first field below 60, hours after days below 24),
/// or `INFINITE` / `UNLIMITED`.
pub(crate) fn check_slurm_time(t: &str) -> Result<(), Failure> {
    let bad = || {
        Failure::Usage(format!(
            "--time {t:?}: not a Slurm time limit (minutes, minutes:seconds, \
             hours:minutes:seconds, days-hours, days-hours:minutes or \
             days-hours:minutes:seconds, e.g. 04:00:00 or 1-12:00:00)"
        ))
    };
    if ["infinite", "unlimited"].contains(&t.to_ascii_lowercase().as_str()) {
        return Ok(());
    }
    let number = |f: &str| -> Result<u64, Failure> {
        if f.is_empty() || f.len() > 9 || !f.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        f.parse().map_err(|_| bad())
    };
    let (days, clock) = match t.split_once('-') {
        Some((d, c)) => (Some(number(d)?), c),
        None => (None, t),
    };
    let fields = clock
        .split(':')
        .map(number)
        .collect::<Result<Vec<u64>, _>>()?;
    let below = |v: u64, limit: u64| if v < limit { Ok(()) } else { Err(bad()) };
    match (days, fields.as_slice()) {
        // minutes, minutes:seconds, hours:minutes:seconds
        (None, [_]) => Ok(()),
        (None, [_, s]) => below(*s, 60),
        (None, [_, m, s]) => below(*m, 60).and(below(*s, 60)),
        // days-hours, days-hours:minutes, days-hours:minutes:seconds
        (Some(_), [h]) => below(*h, 24),
        (Some(_), [h, m]) => below(*h, 24).and(below(*m, 60)),
        (Some(_), [h, m, s]) => below(*h, 24).and(below(*m, 60)).and(below(*s, 60)),
        _ => Err(bad()),
    }
}

/// The reproduce options `slurm` passes to every shard, checked as `reproduce` checks them
/// (by its parser, then its settings), with the number of points of the grid they give.
fn check_reproduce_args(fig: &Figure, args: &[String]) -> Result<usize, Failure> {
    use clap::Parser;
    let bad = |why: &str| Failure::Usage(format!("the reproduce options after --: {why}"));
    let line = ["stealbench", "reproduce", fig.id]
        .into_iter()
        .map(str::to_string)
        .chain(args.iter().cloned());
    let cli = crate::cli::Cli::try_parse_from(line)
        .map_err(|e| bad(&crate::cli::one_line_clap_error(&e)))?;
    let crate::cli::Command::Reproduce(r) = cli.command else {
        unreachable!("the line starts with `reproduce`")
    };
    // The fence mode is no part of the grid.
    let s =
        plan::resolve_settings(&r, fig, None, Default::default()).map_err(|f| bad(f.message()))?;
    plan::input_params(fig, &s).map_err(|f| bad(f.message()))?;
    Ok(plan::run_grid(fig, &s).points.len())
}

/// `stealbench slurm ID --shards N`: writes `ID.sbatch` (a job array of N tasks, one exclusive
/// node each, task i running `reproduce ID --shard i/N`), `ID-merge.sbatch` (the merge of the
/// shards' run directories) and `ID-submit.sh` (submits the array, then the merge to run after
/// it succeeded).
/// `args` (reproduce options) with the value of each input file option (`--hw-video`,
/// `--hw-points`, as `--flag VALUE` or `--flag=VALUE`) made absolute against the current
/// directory, which the Slurm tasks, run in `--dir`, do not share.
fn absolute_inputs(args: &[String]) -> Result<Vec<String>, Failure> {
    const INPUTS: [&str; 2] = ["--hw-video", "--hw-points"];
    let absolute = |v: &str| -> Result<String, Failure> {
        let p = std::path::absolute(v).map_err(|e| Failure::Io(format!("{v}: {e}")))?;
        Ok(p.display().to_string())
    };
    let mut out = Vec::with_capacity(args.len());
    let mut value_of_input = false;
    for a in args {
        if value_of_input {
            out.push(absolute(a)?);
            value_of_input = false;
        } else if INPUTS.contains(&a.as_str()) {
            out.push(a.clone());
            value_of_input = true;
        } else if let Some((flag, v)) = a.split_once('=').filter(|(f, _)| INPUTS.contains(f)) {
            out.push(format!("{flag}={}", absolute(v)?));
        } else {
            out.push(a.clone());
        }
    }
    Ok(out)
}

pub(crate) fn slurm_command(args: &SlurmArgs) -> Result<(), Failure> {
    let fig = plan::lookup_figure(&args.id)?;
    if args.shards == 0 {
        return Err(Failure::Usage("--shards must be at least 1".to_string()));
    }
    if args.shards > MAX_SHARDS {
        return Err(Failure::Usage(format!(
            "--shards {}: at most {MAX_SHARDS} (the array indices Slurm's default MaxArraySize \
             allows)",
            args.shards
        )));
    }
    no_control("--time", &args.time)?;
    check_slurm_time(&args.time)?;
    if let Some(p) = &args.partition {
        no_control("--partition", p)?;
        if p.is_empty() || p.chars().any(char::is_whitespace) {
            return Err(Failure::Usage(format!(
                "--partition {p:?}: a partition name (or a comma-separated list), without spaces"
            )));
        }
    }
    for a in &args.reproduce_args {
        no_control("the reproduce option", a)?;
        let flag = a.split('=').next().unwrap_or_default();
        if ["--shard", "--out", "--resume", "--figures-dir"].contains(&flag) {
            return Err(Failure::Usage(format!(
                "{flag} is set by the job array itself; leave it out of the reproduce options"
            )));
        }
    }
    let points = check_reproduce_args(&fig, &args.reproduce_args)?;
    // The tasks run in --dir, not here: a relative input path is made absolute.
    let reproduce_args = absolute_inputs(&args.reproduce_args)?;
    crate::shard::check_count(
        &format!("--shards {}", args.shards),
        args.shards,
        points,
        fig.id,
    )?;
    let dir = crate::cli::output_dir("--dir", &args.dir)?;
    let exe = std::env::current_exe()?;
    let exe = exe.display().to_string();
    no_control("the stealbench binary's path", &exe)?;
    let exe = sh(&exe);
    let (id, n) = (fig.id, args.shards);
    let shards_dir = format!("results-{id}-shards");
    let partition = args
        .partition
        .as_ref()
        .map(|p| format!("#SBATCH --partition={}\n", sh(p)))
        .unwrap_or_default();
    let extra: String = reproduce_args
        .iter()
        .map(|a| format!(" {}", sh(a)))
        .collect();
    let header = |name: &str, time: &str| {
        format!(
            "#!/bin/bash\n#SBATCH --job-name={name}\n#SBATCH --nodes=1\n#SBATCH --time={time}\n\
             {partition}"
        )
    };
    let array = format!(
        "{}#SBATCH --array=1-{n}\n#SBATCH --exclusive\n#SBATCH --output=stealbench-{id}-%A_%a.out\n\
         # One node per shard: task i measures the i-th of {n} disjoint parts of the grid, into\n\
         # a directory of this array job's own; a requeued task resumes its shard's run.\n\
         set -euo pipefail\ncd \"$SLURM_SUBMIT_DIR\"\n\
         out={shards_dir}/\"$SLURM_ARRAY_JOB_ID\"\n\
         prev=$(ls -d \"$out\"/{id}/*-shard-\"$SLURM_ARRAY_TASK_ID\"-of-{n} 2>/dev/null | tail -n 1 || true)\n\
         if [ -n \"$prev\" ]; then\n    \
         {exe} reproduce {id} --resume \"$prev\"\n\
         else\n    \
         {exe} reproduce {id} --shard \"$SLURM_ARRAY_TASK_ID/{n}\" --out \"$out\" \\\n        \
         --figures-dir \"$out\"/figures-\"$SLURM_ARRAY_TASK_ID\"{extra}\n\
         fi\n",
        header(&format!("stealbench-{id}"), &args.time)
    );
    let merge = format!(
        "{}#SBATCH --output=stealbench-{id}-merge-%j.out\n\
         # Merges the shards of one array job: sbatch {id}-merge.sbatch ARRAY_JOB_ID\n\
         set -euo pipefail\ncd \"$SLURM_SUBMIT_DIR\"\n\
         array=${{1:?usage: sbatch {id}-merge.sbatch ARRAY_JOB_ID}}\n\
         {exe} merge {shards_dir}/\"$array\"/{id}/*-shard-*-of-{n} --out results --figures-dir paper-figures\n",
        header(&format!("stealbench-{id}-merge"), "00:30:00")
    );
    let submit = format!(
        "#!/bin/bash\n# Submits the {n} shards of {id}, then their merge once all succeeded.\n\
         set -euo pipefail\ncd \"$(dirname \"$0\")\"\n\
         array=$(sbatch --parsable {id}.sbatch)\n\
         sbatch --dependency=afterok:\"${{array%%;*}}\" {id}-merge.sbatch \"${{array%%;*}}\"\n\
         echo \"submitted array $array and its merge\"\n"
    );
    let write = |name: String, text: &str, exec: bool| -> Result<PathBuf, Failure> {
        let path = dir.join(name);
        crate::files::write_atomic(&path, text.as_bytes())?;
        if exec {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                .map_err(|e| Failure::Io(format!("{}: {e}", path.display())))?;
        }
        Ok(path)
    };
    let a = write(format!("{id}.sbatch"), &array, false)?;
    let m = write(format!("{id}-merge.sbatch"), &merge, false)?;
    let s = write(format!("{id}-submit.sh"), &submit, true)?;
    outln!(
        "wrote {}, {} and {}; submit both with {} (a shard that fails keeps the merge from \
         running: resume it with `reproduce {id} --resume DIR`, then sbatch the merge)",
        a.display(),
        m.display(),
        s.display(),
        s.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_may_differ_in_their_shard_timeout_and_figures_only() {
        let a = Meta::sample("prows-fig3", 2);
        let mut b = a.clone();
        b.settings.shard = Some("2/2".parse().unwrap());
        b.settings.timeout_secs = 60;
        b.settings.figures_dir = Some(PathBuf::from("/elsewhere"));
        assert!(differences(&a, &b).is_empty());
        b.settings.measure.size = stealbench_workloads::Size::Quick;
        b.settings.rounds = 3;
        b.build.git_commit = "abc".to_string();
        b.build.allocator = "jemalloc".to_string();
        b.machine.logical_cpus = a.machine.logical_cpus + 2;
        let d = differences(&a, &b);
        assert_eq!(
            d[3..],
            [
                "rounds 1 vs 3".to_string(),
                "size test vs quick".to_string()
            ]
        );
        assert!(d[0].starts_with("logical CPUs "), "{d:?}");
        assert!(
            d[1].starts_with("commit ") && d[1].ends_with(" vs abc"),
            "{d:?}"
        );
        assert_eq!(d[2], "allocator system vs jemalloc");
    }

    #[test]
    fn slurm_input_paths_are_made_absolute() {
        let args: Vec<String> = [
            "--hw-video",
            "v.avi",
            "--hw-points=p.txt",
            "--size",
            "test",
            "--hw-video=/abs/v.avi",
        ]
        .map(String::from)
        .to_vec();
        let here = std::env::current_dir().unwrap();
        let got = absolute_inputs(&args).unwrap();
        assert_eq!(
            got,
            [
                "--hw-video".to_string(),
                here.join("v.avi").display().to_string(),
                format!("--hw-points={}", here.join("p.txt").display()),
                "--size".into(),
                "test".into(),
                "--hw-video=/abs/v.avi".into(),
            ]
        );
    }

    #[test]
    fn slurm_times_are_slurms_formats() {
        for good in [
            "30",
            "0",
            "90:00",
            "04:00:00",
            "100:00:00",
            "2-0",
            "1-12",
            "1-12:30",
            "7-23:59:59",
            "UNLIMITED",
            "infinite",
        ] {
            assert!(check_slurm_time(good).is_ok(), "{good}");
        }
        for bad in [
            "banana",
            "",
            "1:2:3:4",
            "4h",
            "1-24",
            "1-12:60",
            "00:60:00",
            "00:00:60",
            "-1",
            "1-",
            ":30",
            "1 2",
            "1-2-3",
            "+5",
            "12345678901",
        ] {
            let e = check_slurm_time(bad).unwrap_err();
            assert!(e.message().contains("not a Slurm time limit"), "{bad}");
        }
        assert!(no_control("--partition", "cpu,gpu").is_ok());
        for bad in ["cpu\n#SBATCH x", "a\tb", "x\u{7f}"] {
            let e = no_control("--partition", bad).unwrap_err();
            assert!(e.message().contains("control character"), "{bad:?}");
        }
    }
}
