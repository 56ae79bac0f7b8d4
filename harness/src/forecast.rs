//! `stealbench plan ID|all`: what a `reproduce` with the same options would measure on this
//! machine, how long it would take and which of its claims it could decide, before anything
//! runs.
//!
//! **Which claims decide** is the claims' own gates ([`claims::gates_before_run`]: a stand-in,
//! a runtime this build lacks, a time at a P beyond this machine's cores, a size below the
//! claim's, fewer than 3 rounds for a time), plus the points a claim reads that the run's
//! selection leaves out (`--workers`, `--runtimes`, `--workloads`). An undecided claim gets
//! the smallest size at which it would decide here, if a size is all it lacks.
//!
//! **The time model.** The reference is a set of finished runs (default: the committed runs,
//! `paper-figures/runs`, every figure at `quick` on a 2-core Xeon VM), read from each point's
//! `raw.csv` rows: a point's time `t_ref` is the median over its rounds of each round's median
//! repetition. A point of the plan takes the reference's time of the same point (the same
//! figure's run first, else any run's), else of the same runtime, workload and variant at the
//! nearest P, else its workload's T_s (the kernel at P = 1). It is scaled
//! * by P, under perfect speedup up to the cores: `t_ref · min(P_ref, cores_ref) /
//!   min(P, cores)` (a simulated point, which runs no worker thread, is not scaled);
//! * by the input, from the two parameter strings (the reference's and this size's), with
//!   each workload's growth in its size parameters ([`GROWTH`]: fib's n as 1.618^n, mm's n as
//!   n^3, ...); a parameter that differs and has no growth entry is named and counted as no
//!   growth, so the estimate is then a lower bound and says so;
//! * by this machine's speed: `plan` and `reproduce` time the fib kernel
//!   (`stealbench_workloads::fib::serial` at the reference's `serial/front=kernel` fib n, in
//!   this process for about half a second, the fastest repetition) and divide it by the
//!   reference's time of that same kernel point.
//!
//! A point's process then costs `C0 + C1 · threads + (reps + 1) · t` seconds (its start,
//! input and checks; a thread per worker; a warm-up and the timed repetitions), once per
//! round. `C0` and `C1` are fitted on the committed runs: each figure's wall time is its
//! `meta.json`'s `finished_at` less its `timestamp`, and the model predicts each within 2x (the
//! test `the_model_predicts_every_committed_figure_within_2x`; `paper-figures/measurements.md`
//! gives each figure's prediction). The disk a run needs is the reference run's bytes per
//! `raw.csv` row times the rows the plan writes.

use crate::claims::{self, Claim, Verdict};
use crate::cli::ReproduceArgs;
use crate::failure::Failure;
use crate::figures::{self, Figure};
use crate::grid::workload_info;
use crate::results::{self, Meta, Settings, Summaries};
use crate::runtimes::Arm;
use crate::spec::{PointSpec, WorkloadSpec};
use crate::{plan, table};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use stealbench_schedulers::FenceMode;
use stealbench_schedulers::topology::Topology;
use stealbench_workloads::Size;

/// The sizes, smallest first.
pub(crate) const SIZES: [Size; 4] = [Size::Test, Size::Quick, Size::Small, Size::Paper];

/// Seconds a point's process costs besides its repetitions (its start, input and checks).
const C0: f64 = 0.1;
/// Seconds a point's process costs per worker thread.
const C1: f64 = 0.005;

/// How a workload's work grows with one of its parameters.
#[derive(Debug, Clone, Copy)]
enum Growth {
    /// As the parameter to this power.
    Power(f64),
    /// As this base to the parameter.
    Exp(f64),
}

/// Each workload's growth in its size parameters (workload, parameter, growth). A parameter
/// not listed (a seed, a block size, a cutoff) is taken not to change the work when it is the
/// same at both sizes; when it differs, the estimate names it.
const GROWTH: &[(&str, &str, Growth)] = &[
    ("fib", "n", Growth::Exp(1.618)),
    ("mapreduce-fib", "items", Growth::Power(1.0)),
    ("mapreduce-fib", "n", Growth::Exp(1.618)),
    ("mm", "n", Growth::Power(3.0)),
    ("mm", "shrink", Growth::Power(0.0)),
    ("smm", "n", Growth::Power(2.807)),
    ("lu", "n", Growth::Power(3.0)),
    ("rectmul", "n", Growth::Power(3.0)),
    ("cholesky", "n", Growth::Power(3.0)),
    ("cholesky", "nonzeros", Growth::Power(0.0)),
    ("sort", "n", Growth::Power(1.0)),
    ("quicksort", "n", Growth::Power(1.0)),
    ("hqsort", "n", Growth::Power(1.0)),
    ("fft", "n", Growth::Power(1.0)),
    ("lcs", "n", Growth::Power(2.0)),
    ("lcs", "b", Growth::Power(0.0)),
    ("sw", "b", Growth::Power(0.0)),
    ("fft", "b", Growth::Power(0.0)),
    ("knapsack", "capacity", Growth::Power(1.0)),
    ("touchchain", "spin_us", Growth::Power(1.0)),
    ("touchtree", "spin_us", Growth::Power(1.0)),
    ("hw", "tSize", Growth::Power(2.0)),
    ("hw", "sSize", Growth::Power(2.0)),
    ("hw", "maxMove", Growth::Power(0.0)),
    ("sw", "n", Growth::Power(3.0)),
    ("heat", "nx", Growth::Power(1.0)),
    ("heat", "ny", Growth::Power(1.0)),
    ("heat", "nt", Growth::Power(1.0)),
    ("bst", "s1", Growth::Power(1.0)),
    ("bst", "s2", Growth::Power(0.0)),
    ("ferret", "queries", Growth::Power(1.0)),
    ("ferret", "db", Growth::Power(0.0)),
    ("hw", "frames", Growth::Power(1.0)),
    ("touchchain", "d", Growth::Power(1.0)),
    ("touchtree", "t", Growth::Power(1.0)),
    ("nqueens", "n", Growth::Exp(5.0)),
    ("knapsack", "n", Growth::Exp(2.0)),
    ("integrate", "n", Growth::Power(1.0)),
];

/// `key=value` pairs of a parameter string (`n=32`, `frames=4 scale=paper: 609x590 ...`).
fn pairs(params: &str) -> Vec<(&str, &str)> {
    params
        .split_whitespace()
        .filter_map(|t| t.split_once('='))
        .collect()
}

/// The nodes of the UTS tree of parameters `params`: as a reference row's answer counted them
/// (`nodes`, by parameters), else the published count of a whole named tree, else a tenth of
/// it for the tree cut where the `small` preset cuts it (the cut's definition,
/// `stealbench_workloads::uts::Cuts`).
fn uts_nodes(params: &str, nodes: &HashMap<String, u64>) -> Option<f64> {
    if let Some(&n) = nodes.get(params) {
        return Some(n as f64);
    }
    let get = |key: &str| {
        pairs(params)
            .into_iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
    };
    let tree = stealbench_workloads::uts::named(get("tree")?)?;
    let whole = tree.count.nodes as f64;
    match get("cut")? {
        "none" => Some(whole),
        c if c.parse().ok() == tree.cuts.small => Some(whole / 10.0),
        _ => None,
    }
}

/// How much more work `to` is than `from` for workload `spec`, and the parameters that differ
/// without a growth entry (counted at the reference's value). UTS's work is its node count
/// ([`uts_nodes`], from the reference's counted `nodes`).
fn input_factor(
    spec: &WorkloadSpec,
    from: &str,
    to: &str,
    nodes: &HashMap<String, u64>,
) -> (f64, Vec<String>) {
    if from == to {
        return (1.0, Vec::new());
    }
    let name = spec.name();
    if name == "uts" {
        return match (uts_nodes(from, nodes), uts_nodes(to, nodes)) {
            (Some(a), Some(b)) => (b / a, Vec::new()),
            _ => (
                1.0,
                vec![format!("{spec}: {to} (its node count is not known)")],
            ),
        };
    }
    let (a, b) = (pairs(from), pairs(to));
    let mut factor = 1.0;
    let mut unmodelled = Vec::new();
    for (key, new) in &b {
        let Some(old) = a.iter().find(|(k, _)| k == key).map(|(_, v)| *v) else {
            continue;
        };
        if old == *new {
            continue;
        }
        let growth = GROWTH
            .iter()
            .find(|(w, k, _)| *w == name && k == key)
            .map(|(_, _, g)| *g);
        match (growth, old.parse::<f64>(), new.parse::<f64>()) {
            (Some(Growth::Power(e)), Ok(x), Ok(y)) if x > 0.0 => factor *= (y / x).powf(e),
            (Some(Growth::Exp(base)), Ok(x), Ok(y)) => factor *= base.powf(y - x),
            _ => unmodelled.push(format!("{name} {key}={old} → {new}")),
        }
    }
    (factor, unmodelled)
}

/// One figure's finished reference run.
struct RefRun {
    meta: Meta,
    summaries: Summaries,
    /// The bytes of its run directory per `raw.csv` row.
    bytes_per_row: f64,
}

/// One way of finding a point in a reference run.
type Search<'a> = dyn Fn(&RefRun) -> Option<&results::PointSummary> + 'a;

/// A reference point's time, for the model.
struct RefTime {
    /// One repetition, seconds (the median over its rounds of each round's median).
    seconds: f64,
    /// Its P.
    workers: usize,
    /// Its workload's parameters.
    params: String,
    /// The cores of the machine that measured it.
    cores: usize,
}

/// The reference runs of the time model, by figure.
pub(crate) struct Reference {
    dir: PathBuf,
    runs: Vec<RefRun>,
    /// The node count of each UTS input the reference ran, by parameters (from its rows'
    /// answers, `4130071 nodes, ...`).
    nodes: HashMap<String, u64>,
}

impl Reference {
    /// The latest finished run of each figure under `dir` (a results root or run directories).
    pub(crate) fn read(dir: &Path) -> Result<Reference, Failure> {
        let mut runs = Vec::new();
        let mut nodes = HashMap::new();
        for (run, meta) in crate::report::latest_runs(&[dir.to_path_buf()])? {
            let store = results::Store::read(&run.join("raw.csv"))?;
            for r in store.rows() {
                let counted = r.answer.split_once(" nodes").map(|(n, _)| n.parse::<u64>());
                if let Some(Ok(n)) = counted {
                    nodes.insert(r.params.clone(), n);
                }
            }
            let rows = store.rows().len().max(1);
            let bytes: u64 = std::fs::read_dir(&run)
                .map_err(|e| Failure::Io(format!("{}: {e}", run.display())))?
                .filter_map(|e| e.ok()?.metadata().ok())
                .filter(|m| m.is_file())
                .map(|m| m.len())
                .sum();
            runs.push(RefRun {
                summaries: results::summarize(&store),
                meta,
                bytes_per_row: bytes as f64 / rows as f64,
            });
        }
        Ok(Reference {
            dir: dir.to_path_buf(),
            runs,
            nodes,
        })
    }

    /// The machine of the reference's runs (its first), in words.
    fn machine(&self) -> String {
        self.runs.first().map_or_else(String::new, |r| {
            format!(
                "{} ({} cores)",
                r.meta.machine.cpu_model, r.meta.machine.cores
            )
        })
    }

    /// The reference runs, the run of `id` first.
    fn ordered<'a>(&'a self, id: &'a str) -> impl Iterator<Item = &'a RefRun> + 'a {
        let own = self.runs.iter().filter(move |r| r.meta.id == id);
        own.chain(self.runs.iter().filter(move |r| r.meta.id != id))
    }

    /// The reference's time of a point like `p`: the same point, else the same row at the
    /// nearest P, else the workload's T_s.
    fn time_of(&self, id: &str, p: &PointSpec) -> Option<RefTime> {
        let ok = |s: &&results::PointSummary| s.status == crate::grid::Status::Ok;
        let same_row = |s: &&results::PointSummary| {
            s.key.runtime == p.runtime && s.key.workload == p.workload && s.key.variant == p.variant
        };
        let kernel = Arm::parse("serial/front=kernel").ok()?;
        let searches: [&Search<'_>; 3] = [
            &|r| r.summaries.iter().filter(ok).find(|s| s.key == *p),
            &|r| {
                r.summaries
                    .iter()
                    .filter(ok)
                    .filter(same_row)
                    .min_by_key(|s| s.key.workers.abs_diff(p.workers))
            },
            &|r| {
                r.summaries.iter().filter(ok).find(|s| {
                    s.key.runtime == kernel && s.key.workload == p.workload && s.key.workers == 1
                })
            },
        ];
        searches.iter().find_map(|search| {
            self.ordered(id).find_map(|r| {
                let s = search(r)?;
                Some(RefTime {
                    seconds: crate::stats::median(&s.round_medians)?,
                    workers: s.key.workers,
                    params: s.params.clone(),
                    cores: r.meta.machine.cores,
                })
            })
        })
    }

    /// The reference's bytes per `raw.csv` row of figure `id` (else of all its runs).
    fn bytes_per_row(&self, id: &str) -> f64 {
        match self.runs.iter().find(|r| r.meta.id == id) {
            Some(r) => r.bytes_per_row,
            None if self.runs.is_empty() => 0.0,
            None => self.runs.iter().map(|r| r.bytes_per_row).sum::<f64>() / self.runs.len() as f64,
        }
    }

    /// The reference's time of the fib kernel at P = 1 and its n, for the calibration.
    fn kernel_fib(&self) -> Option<(f64, u64)> {
        let kernel = Arm::parse("serial/front=kernel").ok()?;
        self.runs.iter().find_map(|r| {
            let s = r.summaries.iter().find(|s| {
                s.key.runtime == kernel
                    && s.key.workload == "fib"
                    && s.key.workers == 1
                    && s.status == crate::grid::Status::Ok
            })?;
            let n = pairs(&s.params)
                .into_iter()
                .find(|(k, _)| *k == "n")?
                .1
                .parse()
                .ok()?;
            Some((crate::stats::median(&s.round_medians)?, n))
        })
    }
}

/// The time model: the reference and this machine's speed against it.
pub(crate) struct Model {
    reference: Reference,
    /// This machine's time of the reference work over the reference machine's.
    factor: f64,
    /// How the factor was measured, in words.
    calibration: String,
    /// This machine's physical cores.
    cores: usize,
}

impl Model {
    /// The model on the reference in `dir`, calibrated now: the fib kernel timed in this
    /// process (about half a second) against the reference's time of it.
    pub(crate) fn calibrated(dir: &Path) -> Result<Model, Failure> {
        if !dir.exists() {
            return Err(Failure::Usage(format!(
                "no reference runs at {} (--reference DIR)",
                dir.display()
            )));
        }
        let reference = Reference::read(dir)?;
        let (t_ref, n) = reference.kernel_fib().ok_or_else(|| {
            Failure::Usage(format!(
                "{}: no finished run with the fib kernel (serial/front=kernel fib at P = 1) to \
                 calibrate the time model on",
                dir.display()
            ))
        })?;
        let here = time_kernel(n);
        Ok(Model {
            calibration: format!(
                "fib({n})'s kernel takes {} s here and {} s on the reference machine, {}: this \
                 machine is {:.2}x its time",
                table::format_time(here),
                table::format_time(t_ref),
                reference.machine(),
                here / t_ref
            ),
            factor: here / t_ref,
            reference,
            cores: Topology::detect().cores(),
        })
    }

    /// The model on `reference` with a known `factor`, for a machine of `cores` cores.
    #[cfg(test)]
    fn with_factor(reference: Reference, factor: f64, cores: usize) -> Model {
        Model {
            reference,
            factor,
            calibration: format!("factor {factor}"),
            cores,
        }
    }

    /// The seconds one repetition of point `p` of figure `id` on input `params` takes here,
    /// with the input parameters the model could not scale; `None` when the reference has
    /// nothing of the point's workload.
    fn rep_seconds(&self, id: &str, p: &PointSpec, params: &str) -> Option<(f64, Vec<String>)> {
        let r = self.reference.time_of(id, p)?;
        let by_p = if p.runtime.sim.is_some() {
            1.0
        } else {
            r.workers.min(r.cores).max(1) as f64 / p.workers.min(self.cores).max(1) as f64
        };
        let (by_input, unmodelled) =
            input_factor(&p.workload, &r.params, params, &self.reference.nodes);
        Some((r.seconds * by_p * by_input * self.factor, unmodelled))
    }
}

/// The time of the fib kernel at `n` in this process: the fastest of its repetitions for about
/// half a second (at least 3, at most 15), since a busy machine slows some repetitions, not the
/// kernel.
fn time_kernel(n: u64) -> f64 {
    let start = Instant::now();
    let mut times = Vec::new();
    while times.len() < 3 || (times.len() < 15 && start.elapsed() < Duration::from_millis(500)) {
        let t = Instant::now();
        std::hint::black_box(stealbench_workloads::fib::serial(std::hint::black_box(n)));
        times.push(t.elapsed().as_secs_f64());
    }
    times.into_iter().fold(f64::INFINITY, f64::min)
}

/// What the plan says of one claim.
#[derive(Debug, Clone)]
pub(crate) struct ClaimPlan {
    /// `FIGURE/ID`.
    pub id: String,
    /// Why this run cannot decide it, every reason; empty when it can.
    pub undecided: Vec<Verdict>,
    /// The smallest size at which it would decide here, for an undecided claim that a size
    /// would decide.
    pub decides_from: Option<Size>,
}

/// The plan of one figure's run.
#[derive(Debug, Clone)]
pub(crate) struct FigurePlan {
    /// The figure.
    pub id: &'static str,
    /// The settings its `reproduce` would resolve.
    pub settings: Settings,
    /// Its points (of one round).
    pub points: usize,
    /// The expected wall time, seconds.
    pub seconds: f64,
    /// The expected disk, bytes.
    pub bytes: f64,
    /// What the estimate could not model (points without a reference, unscaled inputs).
    pub unmodelled: Vec<String>,
    /// Each claim.
    pub claims: Vec<ClaimPlan>,
}

impl FigurePlan {
    /// The claims this run decides.
    pub(crate) fn decided(&self) -> usize {
        self.claims
            .iter()
            .filter(|c| c.undecided.is_empty())
            .count()
    }

    /// The smallest size at which every claim that some size decides here would decide.
    pub(crate) fn deciding_size(&self) -> Size {
        let size = self.settings.measure.size;
        self.claims
            .iter()
            .filter_map(|c| c.decides_from)
            .chain([size])
            .max_by_key(|s| SIZES.iter().position(|x| x == s))
            .unwrap_or(size)
    }
}

/// Whether the points `claim` of `fig` reads are among `points` (the run's selection keeps
/// them); T_s, which a claim names as the plain kernel, is the figure's kernel.
fn unmeasured(fig: &Figure, claim: &Claim, points: &[PointSpec]) -> Option<String> {
    let plain = Arm::parse("serial/front=kernel").ok()?;
    claim.points().into_iter().find_map(|(pt, _)| {
        let mut arm = pt.runtime;
        if arm == plain {
            arm = crate::runtimes::kernel(fig.ts);
        }
        let there = points.iter().any(|p| {
            p.runtime == arm
                && p.workload == pt.workload
                && p.variant == pt.variant
                && p.workers == pt.p
        });
        (!there)
            .then(|| format!("this run does not measure {pt} (--workers, --runtimes, --workloads)"))
    })
}

/// The expected seconds of `points` of figure `id` on `model`, run `rounds` times with `reps`
/// repetitions each, their workloads' parameters by `params`; with what the model could not
/// scale.
fn estimate(
    model: &Model,
    id: &str,
    points: &[PointSpec],
    params: &dyn Fn(&WorkloadSpec) -> String,
    rounds: usize,
    reps: usize,
) -> (f64, Vec<String>) {
    let mut seconds = 0.0;
    let mut unmodelled: Vec<String> = Vec::new();
    for p in points {
        let threads = if p.runtime.sim.is_some() {
            0
        } else {
            p.workers
        };
        let rep = match model.rep_seconds(id, p, &params(&p.workload)) {
            Some((t, notes)) => {
                for n in notes {
                    if !unmodelled.contains(&n) {
                        unmodelled.push(n);
                    }
                }
                t
            }
            None => {
                unmodelled.push(format!("{p}: the reference has no time of its workload"));
                0.0
            }
        };
        seconds += rounds as f64 * (C0 + C1 * threads as f64 + (reps + 1) as f64 * rep);
    }
    (seconds, unmodelled)
}

/// The plan of `fig` with the options `args` at `size` (`None`: the options' own), on `model`.
pub(crate) fn plan_figure(
    model: &Model,
    fig: &Figure,
    args: &ReproduceArgs,
    size: Option<Size>,
    fence: FenceMode,
) -> Result<FigurePlan, Failure> {
    let mut a = args.clone();
    a.id = fig.id.to_string();
    if let Some(s) = size {
        a.size = Some(crate::cli::SizeChoice::Fixed(s));
    }
    let settings = plan::resolve_settings(&a, fig, None, fence)?;
    let mut grid = plan::run_grid(fig, &settings);
    if let Some(shard) = settings.shard {
        grid.points = crate::shard::shard_points(&grid.points, shard);
    }
    let size = settings.measure.size;
    let specs: Vec<WorkloadSpec> = grid
        .workloads()
        .into_iter()
        .filter(|w| workload_info(w).is_some())
        .collect();
    let params_of: HashMap<WorkloadSpec, String> =
        crate::inputs::check_inputs(&specs, size, &settings.input_options())?
            .into_iter()
            .collect();
    let reps = settings.reps();
    let (seconds, unmodelled) = estimate(
        model,
        fig.id,
        &grid.points,
        &|w| params_of.get(w).cloned().unwrap_or_default(),
        settings.rounds,
        reps,
    );
    let rows = grid.points.len() * settings.rounds * reps;
    let bytes = model.reference.bytes_per_row(fig.id) * rows as f64;
    let claims = fig
        .claims
        .iter()
        .map(|c| {
            let gates = |s: Size| {
                let mut g = claims::gates_before_run(c, model.cores, s, settings.rounds);
                if g.is_empty() {
                    g.extend(unmeasured(fig, c, &grid.points).map(Verdict::NotApplicable));
                }
                g
            };
            let undecided = gates(size);
            let decides_from = (!undecided.is_empty())
                .then(|| {
                    SIZES
                        .iter()
                        .skip_while(|s| **s != size)
                        .find(|s| gates(**s).is_empty())
                        .copied()
                })
                .flatten();
            ClaimPlan {
                id: format!("{}/{}", fig.id, c.id),
                undecided,
                decides_from,
            }
        })
        .collect();
    Ok(FigurePlan {
        id: fig.id,
        points: grid.points.len(),
        seconds,
        bytes,
        unmodelled,
        claims,
        settings,
    })
}

/// A duration in words: `42 s`, `3 min 20 s`, `2 h 05 min`.
pub(crate) fn duration(seconds: f64) -> String {
    let s = seconds.round() as u64;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, (s % 3600) / 60),
    }
}

/// Bytes in words.
fn bytes(b: f64) -> String {
    if b < 1024.0 * 1024.0 {
        format!("{:.0} KiB", (b / 1024.0).ceil())
    } else {
        format!("{:.1} MiB", b / (1024.0 * 1024.0))
    }
}

/// The one-line estimate of a figure's run (what `reproduce` prints at its start).
pub(crate) fn estimate_line(p: &FigurePlan) -> String {
    let s = &p.settings;
    format!(
        "{} at {}: {} points x {} round(s), {} rep(s) + a warm-up each; expected {} here, {} of disk; {} of {} claims decided here",
        p.id,
        s.measure.size,
        p.points,
        s.rounds,
        s.reps(),
        duration(p.seconds),
        bytes(p.bytes),
        p.decided(),
        p.claims.len()
    )
}

/// The plan of a figure in words: the estimate, then each claim this run cannot decide, why,
/// and from which size it would.
pub(crate) fn text(p: &FigurePlan) -> String {
    let mut out = estimate_line(p);
    out.push('\n');
    for n in &p.unmodelled {
        let _ = writeln!(
            out,
            "  an input the model cannot scale (counted at the reference's): {n}"
        );
    }
    for c in &p.claims {
        if c.undecided.is_empty() {
            continue;
        }
        let why: Vec<String> = c.undecided.iter().map(ToString::to_string).collect();
        let from = match c.decides_from {
            Some(s) => format!("decides here from --size {s}"),
            None => "no size decides it here".to_string(),
        };
        let _ = writeln!(
            out,
            "  undecidable here: {}: {}; {from}",
            c.id,
            why.join("; ")
        );
    }
    out
}

/// The figures `id` names: `all`, one figure, or a comma-separated list.
pub(crate) fn figures_of(id: &str) -> Result<Vec<Figure>, Failure> {
    if id == "all" {
        return Ok(figures::FIGURES.iter().map(|f| (f.build)()).collect());
    }
    id.split(',')
        .map(|i| plan::lookup_figure(i.trim()))
        .collect()
}

/// The size each figure of `figures` runs at under `--size decide`: the smallest at which its
/// claims that some size decides here decide, within `budget` seconds in all (a figure whose
/// size does not fit what is left of the budget takes the largest smaller size that does, down
/// to `test`). Returns each figure's plan.
pub(crate) fn decide_sizes(
    model: &Model,
    figures: &[Figure],
    args: &ReproduceArgs,
    budget: f64,
    fence: FenceMode,
) -> Result<Vec<FigurePlan>, Failure> {
    let mut left = budget;
    let mut out = Vec::new();
    for fig in figures {
        let want = plan_figure(model, fig, args, Some(Size::Test), fence)?.deciding_size();
        let mut chosen = None;
        for s in SIZES.iter().rev().skip_while(|s| **s != want) {
            let p = plan_figure(model, fig, args, Some(*s), fence)?;
            if p.seconds <= left || *s == Size::Test {
                chosen = Some(p);
                break;
            }
        }
        let p = chosen.expect("the test size is always chosen");
        left -= p.seconds;
        out.push(p);
    }
    Ok(out)
}

/// Each point's expected seconds for one round, for a progress bar whose ETA is in time: the
/// bar counts milliseconds of expected time, a point without an estimate counting as the mean.
#[derive(Debug, Clone, Default)]
pub(crate) struct Expected(HashMap<PointSpec, f64>);

impl Expected {
    /// The mean expected seconds of a point (1 when nothing is known).
    fn mean(&self) -> f64 {
        if self.0.is_empty() {
            1.0
        } else {
            self.0.values().sum::<f64>() / self.0.len() as f64
        }
    }

    /// The bar's units of one run of point `p`.
    pub(crate) fn units(&self, p: &PointSpec) -> u64 {
        (self.0.get(p).copied().unwrap_or_else(|| self.mean()) * 1000.0).ceil() as u64
    }

    /// The bar's units of `points` runs of points of the mean expected time.
    pub(crate) fn units_of(&self, points: usize) -> u64 {
        (self.mean() * 1000.0 * points as f64).ceil() as u64
    }
}

/// The line `reproduce` prints at its start, the expected time of `points` of `fig` (each run
/// `rounds` times with `reps` repetitions, on the inputs `params_of`) on the model of the
/// reference in `reference`, calibrated now, or why there is none; and each point's expected
/// time for the progress bar.
pub(crate) fn run_estimate(
    reference: &Path,
    fig: &Figure,
    points: &[PointSpec],
    params_of: &HashMap<WorkloadSpec, String>,
    rounds: usize,
    reps: usize,
) -> (String, Expected) {
    let model = match Model::calibrated(reference) {
        Ok(m) => m,
        Err(e) => {
            return (
                format!("expected time: none ({})", e.message()),
                Expected::default(),
            );
        }
    };
    let params = |w: &WorkloadSpec| params_of.get(w).cloned().unwrap_or_default();
    let (seconds, unmodelled) = estimate(&model, fig.id, points, &params, rounds, reps);
    let each = points
        .iter()
        .map(|p| {
            let (s, _) = estimate(&model, fig.id, std::slice::from_ref(p), &params, 1, reps);
            (p.clone(), s)
        })
        .collect();
    let unscaled = if unmodelled.is_empty() {
        String::new()
    } else {
        format!(
            " (inputs counted at the reference's: {})",
            unmodelled.join(", ")
        )
    };
    (
        format!(
            "expected time: {} here for the whole run{unscaled}; {}",
            duration(seconds),
            model_note(&model)
        ),
        Expected(each),
    )
}

/// The model's calibration and reference, in words.
pub(crate) fn model_note(model: &Model) -> String {
    format!(
        "time model: each point's time on the reference runs in {} ({}), scaled by P, input \
         and repetitions; calibrated: {}",
        model.reference.dir.display(),
        model.reference.machine(),
        model.calibration
    )
}

/// `stealbench plan ID|all [reproduce's options]`: runs nothing (but the calibration).
pub(crate) fn plan_command(args: &ReproduceArgs, fence: FenceMode) -> Result<i32, Failure> {
    if args.resume.is_some() {
        return Err(Failure::Usage(
            "plan estimates a new run; drop --resume".to_string(),
        ));
    }
    let figures = figures_of(&args.id)?;
    let model = Model::calibrated(&args.reference)?;
    outln!("{}", model_note(&model));
    let plans = match args.size {
        Some(crate::cli::SizeChoice::Decide) => {
            let budget = args.budget.unwrap_or(crate::cli::DEFAULT_BUDGET).seconds();
            outln!(
                "--size decide: each figure at the smallest size at which its claims decide \
                 here, within {} in all",
                duration(budget)
            );
            decide_sizes(&model, &figures, args, budget, fence)?
        }
        _ => figures
            .iter()
            .map(|f| plan_figure(&model, f, args, None, fence))
            .collect::<Result<_, _>>()?,
    };
    for p in &plans {
        out!("{}", text(p));
    }
    if plans.len() > 1 {
        let total: f64 = plans.iter().map(|p| p.seconds).sum();
        let decided: usize = plans.iter().map(FigurePlan::decided).sum();
        let claims: usize = plans.iter().map(|p| p.claims.len()).sum();
        outln!(
            "all {} figures: expected {} here, {} of disk; {decided} of {claims} claims decided \
             here",
            plans.len(),
            duration(total),
            bytes(plans.iter().map(|p| p.bytes).sum())
        );
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn committed() -> Reference {
        Reference::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../paper-figures/runs"))
            .expect("the committed runs read")
    }

    /// The model, at the factor 1 (the committed runs' own machine), predicts the wall time of
    /// each committed figure's points within 2x (its `meta.json`'s `finished_at` less its
    /// `timestamp`). `--nocapture` prints each figure's prediction.
    #[test]
    fn the_model_predicts_every_committed_figure_within_2x() {
        let reference = committed();
        assert_eq!(reference.runs.len(), figures::FIGURES.len());
        let runs: Vec<(Meta, Vec<PointSpec>, HashMap<WorkloadSpec, String>)> = reference
            .runs
            .iter()
            .map(|r| {
                let points = r.summaries.iter().map(|s| s.key.clone()).collect();
                let params = r
                    .summaries
                    .iter()
                    .map(|s| (s.key.workload.clone(), s.params.clone()))
                    .collect();
                (r.meta.clone(), points, params)
            })
            .collect();
        let model = Model::with_factor(reference, 1.0, 2);
        let t = |s: &str| {
            s.parse::<jiff::Timestamp>()
                .expect("a timestamp")
                .as_second()
        };
        let mut worst: f64 = 1.0;
        for (meta, points, params) in runs {
            let wall =
                (t(meta.finished_at.as_deref().expect("finished")) - t(&meta.timestamp)) as f64;
            let s = &meta.settings;
            let (predicted, unmodelled) = estimate(
                &model,
                &meta.id,
                &points,
                &|w| params.get(w).cloned().unwrap_or_default(),
                s.rounds,
                s.reps(),
            );
            assert!(unmodelled.is_empty(), "{}: {unmodelled:?}", meta.id);
            let ratio = predicted / wall;
            println!(
                "{}: predicted {predicted:.0} s, measured {wall} s, ratio {ratio:.2}",
                meta.id
            );
            assert!(
                (0.5..2.0).contains(&ratio),
                "{}: predicted {predicted:.0} s against {wall} s",
                meta.id
            );
            worst = worst.max(ratio.max(1.0 / ratio));
        }
        println!("worst {worst:.2}x");
    }

    /// `stealbench ARGV...` (`reproduce` or `plan`) as clap reads it.
    fn reproduce_args_of(argv: &[&str]) -> ReproduceArgs {
        use clap::Parser;
        let line = [&["stealbench"][..], argv].concat();
        match crate::cli::Cli::try_parse_from(line).unwrap().command {
            crate::cli::Command::Reproduce(a) | crate::cli::Command::Plan(a) => a,
            other => panic!("not reproduce: {other:?}"),
        }
    }

    #[test]
    fn inputs_scale_by_their_growth_and_unknown_changes_are_named() {
        let none = HashMap::new();
        let (f, left) = input_factor(&"fib".into(), "n=32", "n=34", &none);
        assert!((f - 1.618f64.powi(2)).abs() < 1e-9 && left.is_empty());
        let (f, _) = input_factor(
            &"mm/input=libfork".into(),
            "input=libfork n=1024 shrink=4 b=32",
            "input=libfork n=2048 shrink=2 b=32",
            &none,
        );
        assert!((f - 8.0).abs() < 1e-9);
        let (f, left) = input_factor(&"sort".into(), "n=32 seed=1", "n=32 seed=2", &none);
        assert_eq!((f, left), (1.0, vec!["sort seed=1 → 2".to_string()]));
        // UTS by its nodes: the counted quick tree against the published whole tree.
        let counted = HashMap::from([("tree=T1L cut=10".to_string(), 1_000_000)]);
        let (f, left) = input_factor(
            &"uts/tree=T1L".into(),
            "tree=T1L cut=10",
            "tree=T1L cut=none",
            &counted,
        );
        assert!((f - 102.181082).abs() < 1e-6 && left.is_empty(), "{f}");
        let (_, left) = input_factor(
            &"uts/tree=T1L".into(),
            "tree=T1L cut=10",
            "tree=T1L cut=5",
            &counted,
        );
        assert_eq!(left.len(), 1);
    }

    /// The plan of figure `id` at quick on 2 cores of the committed runs' speed, with its
    /// model, figure and options.
    fn quick_plan(id: &str) -> (Model, Figure, ReproduceArgs, FigurePlan) {
        let model = Model::with_factor(committed(), 1.0, 2);
        let fig = plan::lookup_figure(id).unwrap();
        let args = reproduce_args_of(&["reproduce", id, "--size", "quick"]);
        let p = plan_figure(&model, &fig, &args, None, FenceMode::default()).unwrap();
        (model, fig, args, p)
    }

    /// libfork-fig5's claims at P = 56 and 112 are undecidable on 2 cores, with the cores as
    /// the reason and no size that decides them.
    #[test]
    fn libfork_fig5_on_two_cores_cannot_decide_its_many_core_claims() {
        let (_, fig, _, p) = quick_plan("libfork-fig5");
        let many: Vec<&ClaimPlan> = p
            .claims
            .iter()
            .filter(|c| {
                let claim = fig.claims.iter().find(|x| c.id.ends_with(x.id)).unwrap();
                claim.reads_time() && claim.max_time_p() > 2
            })
            .collect();
        assert!(many.len() >= 2, "{:?}", p.claims);
        for c in many {
            let why: Vec<&str> = c.undecided.iter().map(Verdict::reason).collect();
            assert!(
                why.iter().any(|w| w.contains("this machine has 2 cores")),
                "{}: {why:?}",
                c.id
            );
            assert_eq!(c.decides_from, None);
        }
        let t = text(&p);
        assert!(t.contains("P = 56; this machine has 2 cores"), "{t}");
        assert!(t.contains("P = 112; this machine has 2 cores"), "{t}");
    }

    #[test]
    fn a_size_gated_claim_names_the_size_that_decides_it() {
        let (model, fig, args, p) = quick_plan("fibril-table2");
        assert!(
            p.claims
                .iter()
                .any(|c| !c.undecided.is_empty() && c.decides_from == Some(Size::Paper)),
            "{}",
            text(&p)
        );
        assert_eq!(p.deciding_size(), Size::Paper);
        // A larger input takes longer.
        let paper =
            plan_figure(&model, &fig, &args, Some(Size::Paper), FenceMode::default()).unwrap();
        assert!(paper.seconds > p.seconds);
    }
}
