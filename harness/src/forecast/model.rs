//! The time model: each point's time in the reference runs, scaled by P, input and speed.
//!
//! The reference is a set of finished runs (default: the committed runs, `paper-figures/runs`,
//! every figure at `quick` on a 2-core Xeon VM), read from each point's `raw.csv` rows: a
//! point's time `t_ref` is the median over its rounds of each round's median repetition. A
//! point of the plan takes the reference's time of the same point (the same figure's run
//! first, else any run's), else of the same runtime, workload and variant at the nearest P,
//! else its workload's T_s (the kernel at P = 1). It is scaled
//! * by P, under perfect speedup up to the cores: `t_ref · min(P_ref, cores_ref) /
//!   min(P, cores)` (a simulated point, which runs no worker thread, is not scaled);
//! * by the input, from the two parameter strings (the reference's and this size's), with
//!   each workload's growth in its size parameters ([`GROWTH`]: fib's n as 1.618^n, mm's n as
//!   n^3, ...); a parameter that differs and has no growth entry is named and counted as no
//!   growth, so the estimate is then a lower bound and says so;
//! * by this machine's speed: the fib kernel (`stealbench_workloads::fib::serial` at the
//!   reference's `serial/front=kernel` fib n) timed in this process, the fastest repetition,
//!   over the reference's time of that same kernel point. The timing costs about half a second
//!   of measured work, once per process ([`kernel_time`]): `plan` and `reproduce` pay it at
//!   their start (a `--resume` too), and `reproduce all` once for all its figures.
//!
//! A point's process then costs `C0 + C1 · threads + (reps + 1) · t` seconds (its start,
//! input and checks; a thread per worker; a warm-up and the timed repetitions), once per
//! round. `C0` and `C1` are fitted on the committed runs: each figure's wall time is its
//! `meta.json`'s `finished_at` less its `timestamp`, and the model predicts each within 2x (the
//! test `the_model_predicts_every_committed_figure_within_2x`; `paper-figures/measurements.md`
//! gives each figure's prediction). The disk a run needs is the reference run's bytes per
//! `raw.csv` row times the rows the plan writes.

use crate::failure::Failure;
use crate::results::{self, Meta, Summaries};
use crate::runtimes::Arm;
use crate::spec::{PointSpec, WorkloadSpec};
use crate::table;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};
use stealbench_schedulers::topology::Topology;

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
/// `stealbench_workloads::uts::Cuts`), else, for the tree cut where the `test` preset cuts
/// it (thousands of nodes), the count of a walk of it here.
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
        c if c.parse().ok() == Some(tree.cuts.test) => {
            let cut = tree.tree().with_cut(Some(tree.cuts.test));
            Some(stealbench_workloads::uts::walk(&cut).nodes as f64)
        }
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
    /// The model on the reference in `dir`, calibrated: the fib kernel timed in this process
    /// (about half a second, the first time: [`kernel_time`]) against the reference's time of
    /// it.
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
        let here = kernel_time(n);
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

    /// This machine's physical cores.
    pub(super) fn cores(&self) -> usize {
        self.cores
    }

    /// The reference's bytes per `raw.csv` row of figure `id` (else of all its runs).
    pub(super) fn bytes_per_row(&self, id: &str) -> f64 {
        self.reference.bytes_per_row(id)
    }

    /// The model on `reference` with a known `factor`, for a machine of `cores` cores.
    #[cfg(test)]
    pub(super) fn with_factor(reference: Reference, factor: f64, cores: usize) -> Model {
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

/// The fib kernel's time at each n this process has timed ([`time_kernel`]).
static KERNEL_TIMES: Mutex<BTreeMap<u64, f64>> = Mutex::new(BTreeMap::new());

/// The time of the fib kernel at `n` in this process, timed once per process ([`time_kernel`],
/// about half a second) and reused: each figure of `reproduce all`, and its plan, is
/// calibrated on the same timing.
fn kernel_time(n: u64) -> f64 {
    let mut times = KERNEL_TIMES.lock().unwrap_or_else(PoisonError::into_inner);
    *times.entry(n).or_insert_with(|| time_kernel(n))
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

/// The expected seconds of `points` of figure `id` on `model`, run `rounds` times with `reps`
/// repetitions each, their workloads' parameters by `params`; with what the model could not
/// scale.
pub(super) fn estimate(
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

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::figures;

    /// The committed runs, as the reference.
    pub(in crate::forecast) fn committed() -> Reference {
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

    /// The fib kernel is timed once per process: a second model on the same reference reuses
    /// the first one's timing (a new timing would differ in its nanoseconds).
    #[test]
    fn the_calibration_is_timed_once_per_process() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../paper-figures/runs");
        let first = Model::calibrated(&dir).unwrap();
        let (_, n) = first.reference.kernel_fib().unwrap();
        let timed = KERNEL_TIMES.lock().unwrap()[&n];
        let second = Model::calibrated(&dir).unwrap();
        assert_eq!(first.factor.to_bits(), second.factor.to_bits());
        assert_eq!(first.calibration, second.calibration);
        assert_eq!(KERNEL_TIMES.lock().unwrap()[&n].to_bits(), timed.to_bits());
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
            "tree=T1L cut=7",
            &counted,
        );
        assert_eq!(left.len(), 1);
        // The tree cut where the test preset cuts it is walked here: thousands of nodes.
        let named = stealbench_workloads::uts::named("T1L").unwrap();
        let test_cut = format!("tree=T1L cut={}", named.cuts.test);
        let (f, left) = input_factor(
            &"uts/tree=T1L".into(),
            "tree=T1L cut=10",
            &test_cut,
            &counted,
        );
        let walked = stealbench_workloads::uts::walk(&named.tree().with_cut(Some(named.cuts.test)));
        assert!(left.is_empty(), "{left:?}");
        assert!((f - walked.nodes as f64 / 1e6).abs() < 1e-12, "{f}");
        assert!(walked.nodes > 100, "{}", walked.nodes);
    }
}
