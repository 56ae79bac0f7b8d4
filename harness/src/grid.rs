//! Experiment points: a figure's rows (benchmark, variant, runtime), which of them this build
//! can measure, and the points (runtime, workload, variant, P) to run, T_s points first.

use crate::runtimes::{self, Arm};
use crate::spec::{PointSpec, WorkloadSpec};
use serde::{Deserialize, Serialize};
use std::fmt;
use stealbench_schedulers::FrontEnd;
use stealbench_workloads::{Shape, Variant, WorkloadInfo};

/// How a measured point ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Status {
    /// Every repetition ran and checked.
    Ok,
    /// An answer was wrong.
    CheckFailed,
    /// Killed after the timeout.
    Timeout,
    /// The process died (signal, panic) or exited without reporting.
    Crashed,
    /// The point could not run (the pool refused to start).
    Error,
}

impl Status {
    /// The spelling in result files.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::CheckFailed => "check-failed",
            Status::Timeout => "timeout",
            Status::Crashed => "crashed",
            Status::Error => "error",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The paper's numbers of one row, in the figure's metric (times in seconds for a time
/// figure, counts for a count figure).
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct PaperValues {
    /// T_s, seconds (time figures).
    pub ts: Option<f64>,
    /// The value at each P (`None` = not legible / not given).
    pub values: Vec<(usize, Option<f64>)>,
}

impl PaperValues {
    /// The value at `p`, if the paper gives it.
    pub(crate) fn value(&self, p: usize) -> Option<f64> {
        self.values
            .iter()
            .find(|(q, _)| *q == p)
            .and_then(|(_, t)| *t)
    }
}

/// One row of a figure.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row {
    /// The benchmark as the paper names it.
    pub bench: String,
    /// Our workload.
    pub workload: WorkloadSpec,
    /// The variant.
    pub variant: Variant,
    /// The runtime that runs it, in its configuration.
    pub runtime: Arm,
    /// The paper's values; `None` for the baselines the paper did not measure.
    pub paper: Option<PaperValues>,
}

impl Row {
    /// The row of benchmark `bench` (our workload spelt `workload`, `variant`) on the runtime
    /// arm spelt `runtime`, without paper values; a row with them sets `paper` by struct
    /// update. Panics on a spelling that names no registered runtime or that it refuses, or on
    /// a workload spec that does not parse: a figure's rows are part of the program (every
    /// figure is built by the registry's test).
    pub(crate) fn new(
        bench: impl Into<String>,
        workload: impl AsRef<str>,
        variant: Variant,
        runtime: impl AsRef<str>,
    ) -> Row {
        let arm = Arm::parse(runtime.as_ref()).unwrap_or_else(|e| panic!("a figure's row: {e}"));
        let workload = WorkloadSpec::parse(workload.as_ref())
            .unwrap_or_else(|e| panic!("a figure's row: {e}"));
        Row::on(bench, workload, variant, arm)
    }

    /// The row of benchmark `bench` (our `workload`, `variant`) on `arm`, without paper values.
    pub(crate) fn on(
        bench: impl Into<String>,
        workload: WorkloadSpec,
        variant: Variant,
        arm: Arm,
    ) -> Row {
        Row {
            bench: bench.into(),
            workload,
            variant,
            runtime: arm,
            paper: None,
        }
    }
}

/// Whether a row is measured in this run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Availability {
    /// Measured.
    Ready,
    /// The row's workload, or its variant on the arm's front-end, does not exist in the
    /// workloads crate (no committed figure has such a row); the string says which.
    NotImplemented(String),
    /// The runtime is behind a cargo feature this build lacks; the string says which
    /// (`not built: cargo run --release --features tbb`).
    NotBuilt(String),
    /// The runtime refuses the variant (see `runtimes::unsupported`); the string says why.
    Unsupported(String),
    /// Left out by `--runtimes` / `--workloads`.
    NotSelected(String),
}

impl fmt::Display for Availability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Availability::Ready => f.write_str("measured"),
            Availability::NotImplemented(s) => write!(f, "not yet implemented: {s}"),
            Availability::NotBuilt(s) => f.write_str(s),
            Availability::Unsupported(s) => write!(f, "not supported: {s}"),
            Availability::NotSelected(s) => write!(f, "not selected ({s})"),
        }
    }
}

/// The `--runtimes` / `--workloads` filters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Selection {
    /// Only these runtimes (`None` = all): an arm with no setting selects every arm of its
    /// runtime, one with settings that arm.
    pub runtimes: Option<Vec<Arm>>,
    /// Only these workloads (`None` = all): a bare name selects every spec of its workload, a
    /// spec that spec.
    pub workloads: Option<Vec<WorkloadSpec>>,
}

impl Selection {
    /// A bare workload name selects every spec of that workload; a spec, that spec.
    fn workload_selected(&self, spec: &WorkloadSpec) -> bool {
        self.workloads
            .as_ref()
            .is_none_or(|ws| ws.iter().any(|x| x.selects(spec)))
    }
    /// A bare runtime name selects every arm of that runtime; an arm's spelling, that arm.
    fn runtime_selected(&self, arm: &Arm) -> bool {
        self.runtimes.as_ref().is_none_or(|rs| {
            rs.iter()
                .any(|x| x == arm || (x.is_bare() && x.info.name == arm.info.name))
        })
    }
}

/// The workload of `spec` in this build.
pub(crate) fn workload_info(spec: &WorkloadSpec) -> Option<WorkloadInfo> {
    let name = spec.name();
    stealbench_workloads::all()
        .into_iter()
        .find(|w| w.name == name)
}

/// The variant T_s's point names: `fj` where the workload has it, else its first closure
/// variant (a future-only workload's `sf` or `gf`). The kernel is the serial elision of every
/// variant; the point names the one whose elision it is, and the kernel front-end offers that
/// one only ([`offered`]), so that one program has one point.
pub(crate) fn ts_variant(info: &WorkloadInfo) -> Option<Variant> {
    if info.variants.contains(&Variant::Fj) {
        Some(Variant::Fj)
    } else {
        info.variants.first().copied()
    }
}

/// The variants `info` offers on `front_end`: the kernel, T_s's variant alone.
pub(crate) fn offered(info: &WorkloadInfo, front_end: FrontEnd) -> Vec<Variant> {
    match front_end {
        FrontEnd::Closure => info.variants.to_vec(),
        FrontEnd::Async => info.async_variants.to_vec(),
        FrontEnd::Kernel => ts_variant(info).into_iter().collect(),
    }
}

/// Does `info` offer `variant` on `front_end`?
pub(crate) fn offers(info: &WorkloadInfo, variant: Variant, front_end: FrontEnd) -> bool {
    offered(info, front_end).contains(&variant)
}

/// Whether `row` can be measured by this build under `sel`.
pub(crate) fn availability(row: &Row, sel: &Selection) -> Availability {
    let mut missing = Vec::new();
    let arm = row.runtime;
    if let Some(why) = arm.info.not_built() {
        return Availability::NotBuilt(why);
    }
    match workload_info(&row.workload) {
        None => missing.push(format!("workload {}", row.workload)),
        Some(info) if !offers(&info, row.variant, arm.front_end()) => missing.push(format!(
            "{} has no {} variant on the {} front-end",
            row.workload,
            row.variant,
            arm.front_end()
        )),
        Some(_) => {}
    }
    if !missing.is_empty() {
        return Availability::NotImplemented(missing.join(", "));
    }
    if let Some(why) = runtimes::unsupported(&arm, row.variant) {
        return Availability::Unsupported(why.to_string());
    }
    if !sel.workload_selected(&row.workload) {
        return Availability::NotSelected("--workloads".to_string());
    }
    if !sel.runtime_selected(&row.runtime) {
        return Availability::NotSelected("--runtimes".to_string());
    }
    Availability::Ready
}

/// Refuses a `--runtimes` selection that names a runtime none of the figure's `rows` runs
/// (`serial`, whose kernel arm measures every T_s, excepted): it would measure T_s only. The line names
/// the runtimes the figure runs, as an unknown `--workloads` value is refused.
pub(crate) fn check_runtime_selection(rows: &[Row], selected: &[Arm]) -> Result<(), String> {
    let mut runs: Vec<&str> = Vec::new();
    for r in rows {
        if !runs.contains(&r.runtime.info.name) {
            runs.push(r.runtime.info.name);
        }
    }
    match selected
        .iter()
        .find(|a| a.info.name != "serial" && !runs.contains(&a.info.name))
    {
        Some(a) => Err(format!(
            "--runtimes {a}: this figure does not run {} (it runs: {})",
            a.info.name,
            runs.join(", ")
        )),
        None => Ok(()),
    }
}

/// The arms `sel` names that no row of `rows` has: arms with settings of a runtime the rows
/// have.
fn added_arms<'a>(rows: &[Row], sel: &'a Selection) -> Vec<&'a Arm> {
    sel.runtimes
        .iter()
        .flatten()
        .filter(|arm| {
            !arm.is_bare()
                && !rows.iter().any(|r| r.runtime == **arm)
                && rows.iter().any(|r| r.runtime.info.name == arm.info.name)
        })
        .collect()
}

/// `rows` and the arms `sel` names that no row has: such an arm (with settings, of a runtime
/// the rows have) gets a row of its own after the last row of its runtime on each benchmark,
/// workload and variant the rows run that runtime on, with no paper values. So `--runtimes
/// libfork/victim=uniform` measures that arm wherever the figure measures libfork, in place of
/// the figure's arms of libfork (which it does not select).
pub(crate) fn with_selected_arms(rows: Vec<Row>, sel: &Selection) -> Vec<Row> {
    let extra = added_arms(&rows, sel);
    if extra.is_empty() {
        return rows;
    }
    let key = |r: &Row| {
        (
            r.bench.clone(),
            r.workload.clone(),
            r.variant,
            r.runtime.info.name,
        )
    };
    let mut out = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        out.push(row.clone());
        if rows[i + 1..].iter().any(|r| key(r) == key(row)) {
            continue;
        }
        for &&arm in extra
            .iter()
            .filter(|a| a.info.name == row.runtime.info.name)
        {
            out.push(Row {
                runtime: arm,
                paper: None,
                ..row.clone()
            });
        }
    }
    out
}

/// Of the arms `arms`, the one of `arm`'s runtime nearest to it: the fewest settings apart
/// ([`runtimes::Arm::settings_apart`]), the first of those. `None` where none is of its
/// runtime.
pub(crate) fn nearest_arm<'a>(
    arm: &Arm,
    arms: impl IntoIterator<Item = &'a Arm>,
) -> Option<&'a Arm> {
    arms.into_iter()
        .filter(|b| b.info.name == arm.info.name)
        .min_by_key(|b| arm.settings_apart(b))
}

/// The distinct arms of `rows`, in row order.
fn arms_of<'a>(rows: impl IntoIterator<Item = &'a Row>) -> Vec<&'a Arm> {
    let mut arms: Vec<&Arm> = Vec::new();
    for r in rows {
        if !arms.contains(&&r.runtime) {
            arms.push(&r.runtime);
        }
    }
    arms
}

/// One line for each arm `sel` adds to the figure's `rows` ([`with_selected_arms`]): which arm
/// of the figure it runs in place of (the nearest, [`nearest_arm`], where `sel` does not
/// select that one too) or beside.
pub(crate) fn added_arms_notes(rows: &[Row], sel: &Selection) -> Vec<String> {
    let figure_arms = arms_of(rows);
    added_arms(rows, sel)
        .into_iter()
        .map(|arm| {
            let mut note = format!(
                "--runtimes {arm} is not an arm of this figure: it runs wherever the figure runs \
                 {}",
                arm.info.name
            );
            if let Some(near) = nearest_arm(arm, figure_arms.iter().copied()) {
                let placed = if sel.runtime_selected(near) {
                    "beside"
                } else {
                    "in place of"
                };
                note += &format!(", {placed} the figure's {near}");
            }
            note
        })
        .collect()
}

/// A figure's rows with their availability, and the points to measure.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Grid {
    /// Every row of the figure, measured or not.
    pub rows: Vec<(Row, Availability)>,
    /// Worker counts.
    pub workers: Vec<usize>,
    /// The points, without duplicates: each selected workload's T_s first, then row by row.
    pub points: Vec<PointSpec>,
}

impl Grid {
    /// [`Grid::build_with`] with T_s the plain kernel (the tests' grids).
    #[cfg(test)]
    pub(crate) fn build(rows: Vec<Row>, workers: &[usize], sel: &Selection) -> Grid {
        Grid::build_with(rows, Shape::Plain, workers, sel)
    }

    /// The grid of `rows`, with the arms `sel` adds ([`with_selected_arms`]), on `workers`
    /// under `sel`, T_s the kernel in `ts` (the figure's, [`Figure::ts`]). T_s
    /// (`serial/front=kernel`, P = 1) is measured for every selected workload that exists,
    /// whatever `--runtimes` says: speedups need it.
    ///
    /// [`Figure::ts`]: crate::figures::Figure::ts
    pub(crate) fn build_with(
        rows: Vec<Row>,
        ts: Shape,
        workers: &[usize],
        sel: &Selection,
    ) -> Grid {
        let rows: Vec<(Row, Availability)> = with_selected_arms(rows, sel)
            .into_iter()
            .map(|r| {
                let a = availability(&r, sel);
                (r, a)
            })
            .collect();
        let mut points: Vec<PointSpec> = Vec::new();
        let mut push = |k: PointSpec| {
            if !points.contains(&k) {
                points.push(k);
            }
        };
        for (row, _) in &rows {
            if !sel.workload_selected(&row.workload) {
                continue;
            }
            if let Some(v) = workload_info(&row.workload).as_ref().and_then(ts_variant) {
                push(PointSpec {
                    runtime: runtimes::kernel(ts),
                    workload: row.workload.clone(),
                    variant: v,
                    workers: 1,
                });
            }
        }
        for (row, a) in &rows {
            if *a != Availability::Ready {
                continue;
            }
            for &p in workers {
                push(PointSpec {
                    runtime: row.runtime,
                    workload: row.workload.clone(),
                    variant: row.variant,
                    workers: p,
                });
            }
        }
        Grid {
            rows,
            workers: workers.to_vec(),
            points,
        }
    }

    /// The line that names the runtimes (arms) of `recorded` (the runtimes of a run's recorded
    /// points) that no row or point of this grid has, each with the grid's arm that replaced
    /// it (its runtime's nearest, [`nearest_arm`]); `None` where the grid has them all. Such
    /// points (a run made before the figure's arms changed) are in no table or plot.
    pub(crate) fn lacking_note(&self, recorded: impl IntoIterator<Item = Arm>) -> Option<String> {
        let arms = arms_of(self.rows.iter().map(|(r, _)| r));
        let mut lacking: Vec<Arm> = Vec::new();
        for rt in recorded {
            if !arms.contains(&&rt)
                && !self.points.iter().any(|p| p.runtime == rt)
                && !lacking.contains(&rt)
            {
                lacking.push(rt);
            }
        }
        if lacking.is_empty() {
            return None;
        }
        let named: Vec<String> = lacking
            .iter()
            .map(|rt| match nearest_arm(rt, arms.iter().copied()) {
                Some(near) => format!("{rt} (replaced by {near})"),
                None => format!("{rt} (no arm of its runtime here)"),
            })
            .collect();
        Some(format!(
            "the run has points of arms this figure no longer runs, in none of its tables or \
             plots: {}",
            named.join(", ")
        ))
    }

    /// Adds the worker counts `extra` for the simulated rows only (their arms have `sim=`):
    /// the simulator runs at P no machine here has. The columns show them for every row.
    pub(crate) fn simulate_also(&mut self, extra: &[usize]) {
        for &p in extra {
            if self.workers.contains(&p) {
                continue;
            }
            self.workers.push(p);
            for (row, a) in &self.rows {
                if *a == Availability::Ready && row.runtime.sim.is_some() {
                    self.points.push(PointSpec {
                        runtime: row.runtime,
                        workload: row.workload.clone(),
                        variant: row.variant,
                        workers: p,
                    });
                }
            }
        }
        self.workers.sort_unstable();
    }

    /// Distinct workloads of the rows, in row order.
    pub(crate) fn workloads(&self) -> Vec<WorkloadSpec> {
        let mut w: Vec<WorkloadSpec> = Vec::new();
        for (r, _) in &self.rows {
            if !w.contains(&r.workload) {
                w.push(r.workload.clone());
            }
        }
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(workload: &str, variant: Variant, runtime: &'static str) -> Row {
        Row::new(workload, workload, variant, runtime)
    }

    #[test]
    fn a_runtime_this_build_lacks_is_listed_as_not_built() {
        let all = Selection::default();
        for r in runtimes::RUNTIMES {
            let a = availability(&row("fib", Variant::Fj, r.name), &all);
            match r.not_built() {
                Some(why) => {
                    assert!(why.contains("--features"), "{why}");
                    assert_eq!(a, Availability::NotBuilt(why));
                }
                None => assert!(!matches!(a, Availability::NotBuilt(_)), "{}: {a}", r.name),
            }
        }
        let g = Grid::build(vec![row("fib", Variant::Fj, "tbb")], &[1], &all);
        let tbb_built = runtimes::find("tbb").is_some_and(|r| r.built());
        // A row not built has no point to measure (T_s's point stays).
        assert_eq!(
            g.points.iter().any(|p| p.runtime.info.name == "tbb"),
            tbb_built
        );
    }

    #[test]
    fn availability_names_what_is_missing() {
        let all = Selection::default();
        assert_eq!(
            availability(&row("fib", Variant::Fj, "serial"), &all),
            Availability::Ready
        );
        let a = availability(&row("nosuch", Variant::Fj, "serial"), &all);
        assert_eq!(
            a,
            Availability::NotImplemented("workload nosuch".to_string())
        );
        let a = availability(&row("fib", Variant::Gf, "serial"), &all);
        assert!(
            matches!(&a, Availability::NotImplemented(s) if s.contains("no gf variant")),
            "{a}"
        );
        let a = availability(&row("fib", Variant::Gf, "rayon"), &all);
        assert!(
            matches!(&a, Availability::NotImplemented(_)),
            "a missing variant is reported before an unsupported one: {a}"
        );
        let only_rayon = Selection {
            runtimes: Some(vec!["rayon".into()]),
            workloads: None,
        };
        assert_eq!(
            availability(&row("fib", Variant::Fj, "serial"), &only_rayon),
            Availability::NotSelected("--runtimes".into())
        );
    }

    #[test]
    fn a_name_selects_every_arm_and_an_arm_itself() {
        let lazy = row("fib", Variant::Fj, "libfork");
        let busy = row("fib", Variant::Fj, "libfork/idle=busy");
        let sel = |r: &str| Selection {
            runtimes: Some(vec![r.into()]),
            workloads: None,
        };
        for r in [&lazy, &busy] {
            assert_eq!(availability(r, &sel("libfork")), Availability::Ready);
        }
        assert_eq!(
            availability(&busy, &sel("libfork/idle=busy")),
            Availability::Ready
        );
        assert_eq!(
            availability(&lazy, &sel("libfork/idle=busy")),
            Availability::NotSelected("--runtimes".into())
        );
        let a = availability(
            &row("fib", Variant::Sf, "libfork/idle=busy"),
            &sel("libfork"),
        );
        assert!(matches!(a, Availability::Unsupported(_)), "{a}");
    }

    #[test]
    fn arms_the_figure_lacks_are_named_with_the_arm_that_replaced_them() {
        const LAZY: &str = "libfork/victim=numa/pinning=scatter";
        const BUSY: &str = "libfork/idle=busy/victim=numa/pinning=scatter";
        let rows: Vec<Row> = [LAZY, BUSY, "rayon"]
            .into_iter()
            .map(|rt| row("fib", Variant::Fj, rt))
            .collect();
        let arms: Vec<Arm> = [LAZY, BUSY, "rayon"].map(Arm::from).to_vec();
        let near = |arm: &str, among: &[Arm]| nearest_arm(&arm.into(), among).map(Arm::to_string);
        assert_eq!(near("libfork", &arms).as_deref(), Some(LAZY));
        assert_eq!(near("libfork/idle=busy", &arms).as_deref(), Some(BUSY));
        assert_eq!(near("abp", &[arms[0], arms[2]]), None);
        // A run recorded before the figure's arms changed: its libfork points show nowhere.
        let g = Grid::build(rows.clone(), &[1, 2], &Selection::default());
        let recorded = [
            "serial/front=kernel",
            "libfork",
            "libfork/idle=busy",
            "rayon",
            "libfork",
            "abp",
        ];
        assert_eq!(
            g.lacking_note(recorded.map(Arm::from)).unwrap(),
            format!(
                "the run has points of arms this figure no longer runs, in none of its tables \
                 or plots: libfork (replaced by {LAZY}), libfork/idle=busy (replaced by \
                 {BUSY}), abp (no arm of its runtime here)"
            )
        );
        assert_eq!(
            g.lacking_note(["serial/front=kernel", LAZY, BUSY, "rayon"].map(Arm::from)),
            None
        );
        // An arm named on the command line stands in for the nearest of the figure's, or runs
        // beside it where that one is selected too.
        let sel = |rs: &[&str]| Selection {
            runtimes: Some(rs.iter().map(|&r| Arm::from(r)).collect()),
            workloads: None,
        };
        assert_eq!(
            added_arms_notes(&rows, &sel(&["libfork/idle=busy", "rayon/pinning=compact"])),
            [
                format!(
                    "--runtimes libfork/idle=busy is not an arm of this figure: it runs \
                     wherever the figure runs libfork, in place of the figure's {BUSY}"
                ),
                "--runtimes rayon/pinning=compact is not an arm of this figure: it runs wherever the \
                 figure runs rayon, in place of the figure's rayon"
                    .to_string(),
            ]
        );
        let notes = added_arms_notes(&rows, &sel(&["libfork", "libfork/pinning=none"]));
        assert_eq!(notes.len(), 1);
        assert!(
            notes[0].ends_with(&format!("beside the figure's {LAZY}")),
            "{notes:?}"
        );
        assert!(added_arms_notes(&rows, &sel(&[LAZY, "libfork"])).is_empty());
        // The grid that selection builds holds the added arm: its points are not left out.
        let g = Grid::build(rows, &[1], &sel(&["libfork/idle=busy"]));
        assert_eq!(g.lacking_note(["libfork/idle=busy".into()]), None);
    }

    #[test]
    fn a_named_arm_the_rows_lack_runs_where_its_runtime_does() {
        let mut rows = Vec::new();
        for v in [Variant::Fj, Variant::Sf] {
            for rt in [
                "libfork/victim=numa",
                "libfork/idle=busy/victim=numa",
                "rayon",
            ] {
                rows.push(row("fib", v, rt));
            }
        }
        let sel = Selection {
            runtimes: Some(vec![
                "libfork/victim=uniform".into(),
                "libfork/victim=numa".into(),
                "abp/steals=1".into(),
            ]),
            workloads: None,
        };
        let g = Grid::build(rows.clone(), &[2], &sel);
        let names: Vec<String> = g
            .rows
            .iter()
            .map(|(r, a)| format!("{}-{} {a}", r.variant, r.runtime))
            .collect();
        // After libfork's rows of each variant; abp has no row here, so it gets none.
        assert_eq!(
            names,
            [
                "fj-libfork/victim=numa measured",
                "fj-libfork/idle=busy/victim=numa not selected (--runtimes)",
                "fj-libfork/victim=uniform measured",
                "fj-rayon not selected (--runtimes)",
                "sf-libfork/victim=numa not supported: a fork-join runtime without futures: \
                 fj variants only",
                "sf-libfork/idle=busy/victim=numa not supported: a fork-join runtime without \
                 futures: fj variants only",
                "sf-libfork/victim=uniform not supported: a fork-join runtime without futures: \
                 fj variants only",
                "sf-rayon not selected (--runtimes)",
            ]
        );
        assert!(
            g.points
                .iter()
                .any(|p| p.runtime == "libfork/victim=uniform" && p.workers == 2)
        );
        // A bare name, or an arm the rows have, adds nothing.
        for r in ["libfork", "libfork/victim=numa"] {
            let sel = Selection {
                runtimes: Some(vec![r.into()]),
                workloads: None,
            };
            assert_eq!(with_selected_arms(rows.clone(), &sel), rows);
        }
    }

    #[test]
    fn a_runtime_the_figure_does_not_run_is_refused() {
        let rows = vec![
            row("fib", Variant::Fj, "abp"),
            row("fib", Variant::Fj, "prows"),
        ];
        let arms = |s: &[&str]| -> Vec<Arm> { s.iter().map(|a| Arm::parse(a).unwrap()).collect() };
        assert!(
            check_runtime_selection(&rows, &arms(&["abp", "serial", "prows/placement=artifact"]))
                .is_ok()
        );
        let e = check_runtime_selection(&rows, &arms(&["abp", "fibril"])).unwrap_err();
        assert_eq!(
            e,
            "--runtimes fibril: this figure does not run fibril (it runs: abp, prows)"
        );
    }

    #[test]
    fn ts_comes_first_and_points_are_unique() {
        let rows = vec![
            row("fib", Variant::Fj, "serial/front=kernel"),
            row("fib", Variant::Fj, "serial"),
            row("fib", Variant::Sf, "serial"),
            row("nosuch", Variant::Fj, "serial"),
        ];
        let g = Grid::build(rows.clone(), &[1], &Selection::default());
        let names: Vec<String> = g.points.iter().map(|p| p.to_string()).collect();
        // The kernel's row at P=1 is the T_s point itself: measured once.
        assert_eq!(
            names,
            [
                "serial/front=kernel fib-fj P=1",
                "serial fib-fj P=1",
                "serial fib-sf P=1"
            ]
        );
        assert_eq!(g.workloads(), ["fib", "nosuch"]);
        assert_eq!(g.rows.len(), 4);
        // A figure whose paper fixes the serial code's shape measures that shape as T_s.
        let g = Grid::build_with(rows, Shape::Libfork, &[1], &Selection::default());
        assert_eq!(
            g.points[0].to_string(),
            "serial/front=kernel/shape=libfork fib-fj P=1"
        );
    }

    #[test]
    fn the_kernel_offers_ts_variant_alone() {
        let fib = workload_info(&"fib".into()).unwrap();
        assert_eq!(offered(&fib, FrontEnd::Kernel), [Variant::Fj]);
        assert_eq!(offered(&fib, FrontEnd::Closure), [Variant::Fj, Variant::Sf]);
        let tree = workload_info(&"touchtree".into()).unwrap();
        assert_eq!(offered(&tree, FrontEnd::Kernel), [Variant::Gf]);
        let all = Selection::default();
        let a = availability(&row("fib", Variant::Sf, "serial/front=kernel"), &all);
        assert!(
            matches!(&a, Availability::NotImplemented(s) if s.contains("kernel front-end")),
            "{a}"
        );
    }

    #[test]
    fn ts_is_measured_even_when_serial_is_not_selected() {
        let sel = Selection {
            runtimes: Some(vec!["rayon".into()]),
            workloads: None,
        };
        let g = Grid::build(vec![row("fib", Variant::Fj, "serial")], &[1, 2], &sel);
        assert_eq!(g.points.len(), 1);
        assert_eq!(g.points[0].runtime, "serial/front=kernel");
    }
}
