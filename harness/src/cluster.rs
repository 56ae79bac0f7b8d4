//! Many machines: a figure's grid cut into shards (`reproduce ID --shard i/N`), the shards'
//! run directories merged into one run (`stealbench merge`), and a Slurm job array that does
//! both (`stealbench slurm`).
//!
//! A shard is a disjoint part of the grid's points. Every node computes the same grid from the
//! same figure and settings, so every node cuts it the same way: the points are dealt, largest
//! expected time first, each to the shard with the least expected time so far (greedy longest
//! processing time). The harness has measured nothing before a run, so a point's expected time
//! is its share of its workload's work under perfect speedup: 1/P, and 1/16 for a simulated
//! point (a replay, no worker thread). Every point of every round is in exactly one shard; a
//! merged run is the unsharded run's point set (the test `three_shards_merge_to_the_whole_grid`
//! in `tests/cli.rs`).

use crate::cli::{Failure, MergeArgs, SlurmArgs};
use crate::grid::{Grid, PointKey, Selection, Status};
use crate::results::{self, Meta};
use crate::{reproduce, runtimes};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::SystemTime;

/// The `i`-th of `n` shards, 1-based (as `SLURM_ARRAY_TASK_ID` of `--array=1-N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// Which shard, `1..=count`.
    pub index: usize,
    /// How many shards.
    pub count: usize,
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = Failure;
    fn from_str(s: &str) -> Result<Shard, Failure> {
        let bad = || {
            Failure::Usage(format!(
                "--shard {s}: expected i/N with 1 <= i <= N (e.g. 2/8)"
            ))
        };
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count) = (
            i.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if count == 0 || index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

/// The expected time of a point, relative to its workload's serial time.
fn expected_time(p: &PointKey) -> f64 {
    if runtimes::is_simulated(&p.runtime) {
        1.0 / 16.0
    } else {
        1.0 / p.workers.max(1) as f64
    }
}

/// The points of `shard`, in grid order: the greedy longest-processing-time deal of the
/// module docs. Deterministic: equal expected times keep grid order, ties in load go to the
/// lower shard.
pub fn shard_points(points: &[PointKey], shard: Shard) -> Vec<PointKey> {
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by(|&a, &b| {
        expected_time(&points[b])
            .total_cmp(&expected_time(&points[a]))
            .then(a.cmp(&b))
    });
    let mut load = vec![0.0f64; shard.count];
    let mut mine = vec![false; points.len()];
    for i in order {
        let s = (0..shard.count)
            .min_by(|&x, &y| load[x].total_cmp(&load[y]).then(x.cmp(&y)))
            .expect("at least one shard");
        load[s] += expected_time(&points[i]);
        mine[i] = s + 1 == shard.index;
    }
    points
        .iter()
        .zip(mine)
        .filter(|(_, m)| *m)
        .map(|(p, _)| p.clone())
        .collect()
}

/// What must agree between the runs `merge` combines unless `--force`: the commit, the size,
/// the CPU model, and every setting that shapes the grid or its points (all but the shard, the
/// timeout and the figures directory).
fn differences(a: &Meta, b: &Meta) -> Vec<String> {
    let mut d = Vec::new();
    let mut check = |what: &str, x: String, y: String| {
        if x != y {
            d.push(format!("{what} {x} vs {y}"));
        }
    };
    check(
        "commit",
        a.build.git_commit.clone(),
        b.build.git_commit.clone(),
    );
    check(
        "CPU",
        a.machine.cpu_model.clone(),
        b.machine.cpu_model.clone(),
    );
    let (s, t) = (&a.settings, &b.settings);
    check("size", s.size.clone(), t.size.clone());
    let key = |x: &results::Settings| {
        format!(
            "workers {:?} reps {} rounds {} runtimes {:?} workloads {:?} pinning {} stack {:?} \
             video {:?} points {:?}",
            x.workers,
            x.reps,
            x.rounds,
            x.runtimes,
            x.workloads,
            x.pinning,
            x.stack_size,
            x.hw_video,
            x.hw_points
        )
    };
    check("settings", key(s), key(t));
    d
}

/// `stealbench merge DIR...`: the rows of the runs of one figure, checked to agree and to
/// measure disjoint points, in a new run directory (`ID/TIMESTAMP-merged`), summarised and
/// rendered as `reproduce` renders. Exit code 0 when every point is ok, 1 otherwise.
pub fn merge_command(args: &MergeArgs, allocator: &str) -> Result<i32, Failure> {
    let mut metas = Vec::new();
    for d in &args.dirs {
        let m = Meta::read(d)
            .map_err(|e| Failure::Usage(format!("{}: not a run directory ({e})", d.display())))?;
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
    if let Some(s) = shards.first() {
        let mut seen: Vec<usize> = shards.iter().map(|x| x.index).collect();
        seen.sort_unstable();
        seen.dedup();
        if seen.len() < shards.len() {
            return Err(Failure::Usage(
                "a shard is given twice: merge each shard's run directory once".to_string(),
            ));
        }
        if seen.len() < s.count {
            outln!(
                "note: {} of {} shards merged: the points of the others are missing",
                seen.len(),
                s.count
            );
        }
    }
    let fig = reproduce::lookup_figure(&first.id)?;
    let mut rows = Vec::new();
    let mut owner: BTreeMap<PointKey, &Path> = BTreeMap::new();
    for d in &args.dirs {
        let raw = results::read_raw(&d.join("raw.csv"))
            .map_err(|e| Failure::Runtime(format!("{}: {e}", d.join("raw.csv").display())))?;
        for p in results::recorded_points(&raw) {
            if let Some(other) = owner.insert(p.clone(), d) {
                return Err(Failure::Usage(format!(
                    "point {p} is in both {} and {}: merge disjoint runs (the shards of one \
                     --shard run)",
                    other.display(),
                    d.display()
                )));
            }
        }
        rows.extend(raw);
    }

    crate::cli::output_dir("--out", &args.out)?;
    let figures_dir = crate::cli::output_dir("--figures-dir", &args.figures_dir)?;
    let (stamp, dir_stamp) = results::timestamps(SystemTime::now());
    let run_dir = results::create_run_dir(&args.out, fig.id, &format!("{dir_stamp}-merged"))?;
    let _lock = results::RunLock::acquire(&run_dir).map_err(Failure::Runtime)?;
    results::append_rows(&run_dir.join("raw.csv"), &rows)?;
    let mut meta = first.clone();
    meta.timestamp = stamp;
    meta.command_line = std::env::args().collect::<Vec<_>>().join(" ");
    meta.resumed = Vec::new();
    meta.finished = false;
    meta.finished_at = None;
    meta.settings.shard = None;
    meta.settings.figures_dir = Some(figures_dir.clone());
    meta.merged_from = args
        .dirs
        .iter()
        .zip(&metas)
        .map(|(d, m)| {
            format!(
                "{} (commit {}, size {}, {}, started {})",
                d.canonicalize().unwrap_or_else(|_| d.clone()).display(),
                m.build.git_commit,
                m.settings.size,
                m.machine.cpu_model,
                m.timestamp
            )
        })
        .collect();
    // The allocator of the merged run is the shards', not this process's.
    let _ = allocator;
    meta.write(&run_dir)?;

    let s = meta.settings.clone();
    let sel = Selection {
        runtimes: s.runtimes.clone(),
        workloads: s.workloads.clone(),
    };
    let mut grid = Grid::build(fig.rows.clone(), &s.workers, &sel);
    grid.simulate_also(fig.sim_workers);
    let missing = grid
        .points
        .iter()
        .filter(|p| !owner.contains_key(*p))
        .count();
    outln!(
        "{}: {} runs merged into {}, {} points ({} of the grid's missing)",
        fig.id,
        args.dirs.len(),
        run_dir.display(),
        owner.len(),
        missing
    );
    if let Some(n) = grid.lacking_note(rows.iter().map(|r| r.runtime.as_str())) {
        outln!("note: {n}");
    }
    let mut params_of: HashMap<String, String> = HashMap::new();
    for r in &rows {
        params_of
            .entry(r.workload.clone())
            .or_insert_with(|| r.params.clone());
    }
    let summaries = reproduce::render(&fig, &grid, &mut meta, &run_dir, &figures_dir, &params_of)?;
    outln!(
        "\nwrote {0}/summary.csv, {1}/{2}.md, {1}/{2}.svg, {1}/{2}.png",
        run_dir.display(),
        figures_dir.display(),
        fig.id
    );
    Ok(i32::from(summaries.iter().any(|s| s.status != Status::Ok)))
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

/// `stealbench slurm ID --shards N`: writes `ID.sbatch` (a job array of N tasks, one exclusive
/// node each, task i running `reproduce ID --shard i/N`), `ID-merge.sbatch` (the merge of the
/// shards' run directories) and `ID-submit.sh` (submits the array, then the merge to run after
/// it succeeded).
pub fn slurm_command(args: &SlurmArgs) -> Result<(), Failure> {
    let fig = reproduce::lookup_figure(&args.id)?;
    if args.shards == 0 {
        return Err(Failure::Usage("--shards must be at least 1".to_string()));
    }
    for a in &args.reproduce_args {
        let flag = a.split('=').next().unwrap_or_default();
        if ["--shard", "--out", "--resume", "--figures-dir"].contains(&flag) {
            return Err(Failure::Usage(format!(
                "{flag} is set by the job array itself; leave it out of the reproduce options"
            )));
        }
    }
    let dir = crate::cli::output_dir("--dir", &args.dir)?;
    let exe = std::env::current_exe()?;
    let exe = sh(&exe.display().to_string());
    let (id, n) = (fig.id, args.shards);
    let shards_dir = format!("results-{id}-shards");
    let partition = args
        .partition
        .as_ref()
        .map(|p| format!("#SBATCH --partition={}\n", sh(p)))
        .unwrap_or_default();
    let extra: String = args
        .reproduce_args
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
         # One node per shard: task i measures the i-th of {n} disjoint parts of the grid.\n\
         set -euo pipefail\ncd \"$SLURM_SUBMIT_DIR\"\n\
         {exe} reproduce {id} --shard \"$SLURM_ARRAY_TASK_ID/{n}\" --out {shards_dir} \\\n    \
         --figures-dir {shards_dir}/figures-\"$SLURM_ARRAY_TASK_ID\"{extra}\n",
        header(&format!("stealbench-{id}"), &args.time)
    );
    let merge = format!(
        "{}#SBATCH --output=stealbench-{id}-merge-%j.out\n\
         set -euo pipefail\ncd \"$SLURM_SUBMIT_DIR\"\n\
         {exe} merge {shards_dir}/{id}/*-shard-*-of-{n} --out results --figures-dir paper-figures\n",
        header(&format!("stealbench-{id}-merge"), "00:30:00")
    );
    let submit = format!(
        "#!/bin/bash\n# Submits the {n} shards of {id}, then their merge once all succeeded.\n\
         set -euo pipefail\ncd \"$(dirname \"$0\")\"\n\
         array=$(sbatch --parsable {id}.sbatch)\n\
         sbatch --dependency=afterok:\"${{array%%;*}}\" {id}-merge.sbatch\n\
         echo \"submitted array $array and its merge\"\n"
    );
    let write = |name: String, text: &str, exec: bool| -> Result<PathBuf, Failure> {
        let path = dir.join(name);
        std::fs::write(&path, text)
            .map_err(|e| Failure::Runtime(format!("{}: {e}", path.display())))?;
        if exec {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
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
    use stealbench_workloads::Variant;

    fn points() -> Vec<PointKey> {
        let mut v = Vec::new();
        for rt in ["serial", "abp", "prows", "abp/sim=unit"] {
            for p in [1, 2, 4, 8, 16] {
                v.push(PointKey {
                    runtime: rt.into(),
                    workload: "fib".into(),
                    variant: Variant::Fj,
                    workers: p,
                });
            }
        }
        v
    }

    #[test]
    fn shards_partition_the_points_and_balance_them() {
        let all = points();
        for n in 1..=7 {
            let parts: Vec<Vec<PointKey>> = (1..=n)
                .map(|i| shard_points(&all, Shard { index: i, count: n }))
                .collect();
            let mut union: Vec<PointKey> = parts.iter().flatten().cloned().collect();
            assert_eq!(union.len(), all.len(), "{n} shards: disjoint and complete");
            union.sort();
            let mut sorted = all.clone();
            sorted.sort();
            assert_eq!(union, sorted);
            let loads: Vec<f64> = parts
                .iter()
                .map(|p| p.iter().map(expected_time).sum())
                .collect();
            let (lo, hi) = loads
                .iter()
                .fold((f64::MAX, 0.0f64), |(l, h), &x| (l.min(x), h.max(x)));
            // LPT: no shard exceeds another by more than the largest single point.
            assert!(hi - lo <= 1.0 + 1e-12, "{n} shards: loads {loads:?}");
        }
    }

    #[test]
    fn shard_spellings() {
        assert_eq!(
            "2/8".parse::<Shard>().ok(),
            Some(Shard { index: 2, count: 8 })
        );
        for bad in ["0/3", "4/3", "1/0", "3", "a/b", ""] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        assert_eq!(Shard { index: 1, count: 3 }.to_string(), "1/3");
    }
}
