//! A run's plan before it runs: its points, its cost here and the claims it can decide.
//!
//! `stealbench plan ID|all` says what a `reproduce` with the same options would measure on this
//! machine, how long it would take and which of its claims it could decide, before anything
//! runs; `reproduce` prints the same estimate at its start.
//!
//! **Which claims decide** is the claims' own gates ([`claims::gates_before_run`]: a stand-in,
//! a runtime this build lacks, a time at a P beyond this machine's cores, a size below the
//! claim's, fewer than 3 rounds for a time), plus the points a claim reads that the run's
//! selection leaves out (`--workers`, `--runtimes`, `--workloads`). An undecided claim gets
//! the smallest size at which it would decide here, if a size is all it lacks.
//!
//! **How long** is the time model's (`model.rs`: the reference runs' times scaled by P, input
//! and this machine's speed, calibrated once per process); `show.rs` says a plan in words.

mod model;
mod show;

pub(crate) use model::{Model, model_note};
pub(crate) use show::{duration, text};

use crate::claims::{self, Claim, Verdict};
use crate::cli::ReproduceArgs;
use crate::failure::Failure;
use crate::figures::{self, Figure};
use crate::grid::workload_info;
use crate::plan;
use crate::results::Settings;
use crate::runtimes::Arm;
use crate::spec::{PointSpec, WorkloadSpec};
use model::estimate;
use show::bytes;
use std::collections::HashMap;
use std::path::Path;
use stealbench_schedulers::FenceMode;
use stealbench_workloads::Size;

/// The sizes, smallest first.
pub(crate) const SIZES: [Size; 4] = [Size::Test, Size::Quick, Size::Small, Size::Paper];

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
    let bytes = model.bytes_per_row(fig.id) * rows as f64;
    let claims = fig
        .claims
        .iter()
        .map(|c| {
            let gates = |s: Size| {
                let mut g = claims::gates_before_run(c, model.cores(), s, settings.rounds);
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

    /// `stealbench ARGV...` (`reproduce` or `plan`) as clap reads it.
    fn reproduce_args_of(argv: &[&str]) -> ReproduceArgs {
        use clap::Parser;
        let line = [&["stealbench"][..], argv].concat();
        match crate::cli::Cli::try_parse_from(line).unwrap().command {
            crate::cli::Command::Reproduce(a) | crate::cli::Command::Plan(a) => a,
            other => panic!("not reproduce: {other:?}"),
        }
    }

    /// The plan of figure `id` at quick on 2 cores of the committed runs' speed, with its
    /// model, figure and options.
    fn quick_plan(id: &str) -> (Model, Figure, ReproduceArgs, FigurePlan) {
        let model = Model::with_factor(model::tests::committed(), 1.0, 2);
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
