//! Experiment points: a figure's rows (benchmark, variant, runtime), which of them this build
//! can measure, and the points (runtime, workload, variant, P) to run, T_s points first.

use crate::runtimes::{self, FrontEnd};
use serde::{Deserialize, Serialize};
use std::fmt;
use stealbench_workloads::{Variant, WorkloadInfo};

/// One point: a runtime running a workload variant on P workers.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PointKey {
    /// Runtime name.
    pub runtime: String,
    /// Workload name.
    pub workload: String,
    /// Variant.
    pub variant: Variant,
    /// Workers P.
    pub workers: usize,
}

impl fmt::Display for PointKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}-{} P={}",
            self.runtime, self.workload, self.variant, self.workers
        )
    }
}

/// How a measured point ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
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
    pub fn name(self) -> &'static str {
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
pub struct PaperValues {
    /// T_s, seconds (time figures).
    pub ts: Option<f64>,
    /// The value at each P (`None` = not legible / not given).
    pub values: Vec<(usize, Option<f64>)>,
}

impl PaperValues {
    /// The value at `p`, if the paper gives it.
    pub fn value(&self, p: usize) -> Option<f64> {
        self.values
            .iter()
            .find(|(q, _)| *q == p)
            .and_then(|(_, t)| *t)
    }
}

/// One row of a figure.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The benchmark as the paper names it.
    pub bench: String,
    /// Our workload.
    pub workload: String,
    /// The variant.
    pub variant: Variant,
    /// The runtime that runs it, in its configuration: an arm's canonical spelling
    /// ([`runtimes::Arm::spec`]).
    pub runtime: String,
    /// The paper's values; `None` for the baselines the paper did not measure.
    pub paper: Option<PaperValues>,
}

/// Whether a row is measured in this run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Availability {
    /// Measured.
    Ready,
    /// The runtime, the workload or the variant does not exist yet; the string says which.
    NotImplemented(String),
    /// The runtime refuses the variant (see `runtimes::UNSUPPORTED`); the string says why.
    Unsupported(String),
    /// Left out by `--runtimes` / `--workloads`.
    NotSelected(String),
}

impl fmt::Display for Availability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Availability::Ready => f.write_str("measured"),
            Availability::NotImplemented(s) => write!(f, "not yet implemented: {s}"),
            Availability::Unsupported(s) => write!(f, "not supported: {s}"),
            Availability::NotSelected(s) => write!(f, "not selected ({s})"),
        }
    }
}

/// The `--runtimes` / `--workloads` filters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// Only these runtimes (`None` = all).
    pub runtimes: Option<Vec<String>>,
    /// Only these workloads (`None` = all).
    pub workloads: Option<Vec<String>>,
}

impl Selection {
    /// A bare workload name selects every spec of that workload; a spec, that spec.
    fn workload_selected(&self, spec: &str) -> bool {
        self.workloads
            .as_ref()
            .is_none_or(|ws| ws.iter().any(|x| x == spec || x == workload_name(spec)))
    }
    /// A bare runtime name selects every arm of that runtime; an arm's spelling, that arm.
    fn runtime_selected(&self, arm: &str) -> bool {
        let name = arm.split('/').next().unwrap_or(arm);
        self.runtimes
            .as_ref()
            .is_none_or(|rs| rs.iter().any(|x| x == arm || x == name))
    }
}

/// The workload of a spec `NAME[/key=value]...` in this build.
pub fn workload_info(spec: &str) -> Option<WorkloadInfo> {
    let name = workload_name(spec);
    stealbench_workloads::all()
        .into_iter()
        .find(|w| w.name == name)
}

/// The workload's name in a spec `NAME[/key=value]...`.
pub fn workload_name(spec: &str) -> &str {
    spec.split('/').next().unwrap_or_default()
}

/// The variant whose `serial` run at P = 1 is the workload's T_s: `fj` where the workload has
/// it, else its first closure variant (a pipeline-only workload's `lp`).
pub fn ts_variant(info: &WorkloadInfo) -> Option<Variant> {
    if info.variants.contains(&Variant::Fj) {
        Some(Variant::Fj)
    } else {
        info.variants.first().copied()
    }
}

/// Does `info` offer `variant` on `front_end`?
pub fn offers(info: &WorkloadInfo, variant: Variant, front_end: FrontEnd) -> bool {
    match front_end {
        FrontEnd::Closure => info.variants.contains(&variant),
        FrontEnd::Async => info.async_variants.contains(&variant),
    }
}

/// Whether `row` can be measured by this build under `sel`.
pub fn availability(row: &Row, sel: &Selection) -> Availability {
    let mut missing = Vec::new();
    let rt = runtimes::Arm::parse(&row.runtime).ok().map(|a| a.info);
    if !rt.is_some_and(|r| r.implemented()) {
        missing.push(format!("runtime {}", row.runtime));
    }
    match workload_info(&row.workload) {
        None => missing.push(format!("workload {}", row.workload)),
        Some(info) => {
            if let Some(rt) = rt {
                if !offers(&info, row.variant, rt.front_end) {
                    missing.push(format!(
                        "{} has no {} variant on the {} front-end",
                        row.workload, row.variant, rt.front_end
                    ));
                }
            }
        }
    }
    if !missing.is_empty() {
        return Availability::NotImplemented(missing.join(", "));
    }
    let name = rt.map_or(row.runtime.as_str(), |r| r.name);
    if let Some(why) = runtimes::unsupported(name, row.variant) {
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

/// A figure's rows with their availability, and the points to measure.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    /// Every row of the figure, measured or not.
    pub rows: Vec<(Row, Availability)>,
    /// Worker counts.
    pub workers: Vec<usize>,
    /// The points, without duplicates: each selected workload's T_s first, then row by row.
    pub points: Vec<PointKey>,
}

impl Grid {
    /// The grid of `rows` on `workers` under `sel`. T_s (`serial`, P = 1) is measured for every
    /// selected workload that exists, whatever `--runtimes` says: speedups need it.
    pub fn build(rows: Vec<Row>, workers: &[usize], sel: &Selection) -> Grid {
        let rows: Vec<(Row, Availability)> = rows
            .into_iter()
            .map(|r| {
                let a = availability(&r, sel);
                (r, a)
            })
            .collect();
        let mut points: Vec<PointKey> = Vec::new();
        let mut push = |k: PointKey| {
            if !points.contains(&k) {
                points.push(k);
            }
        };
        for (row, _) in &rows {
            if !sel.workload_selected(&row.workload) {
                continue;
            }
            if let Some(v) = workload_info(&row.workload).as_ref().and_then(ts_variant) {
                push(PointKey {
                    runtime: runtimes::SERIAL.to_string(),
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
                push(PointKey {
                    runtime: row.runtime.to_string(),
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

    /// Adds the worker counts `extra` for the simulated rows only (their arms have `sim=`):
    /// the simulator runs at P no machine here has. The columns show them for every row.
    pub fn simulate_also(&mut self, extra: &[usize]) {
        for &p in extra {
            if self.workers.contains(&p) {
                continue;
            }
            self.workers.push(p);
            for (row, a) in &self.rows {
                if *a == Availability::Ready && runtimes::is_simulated(&row.runtime) {
                    self.points.push(PointKey {
                        runtime: row.runtime.clone(),
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
    pub fn workloads(&self) -> Vec<String> {
        let mut w: Vec<String> = Vec::new();
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
        Row {
            bench: workload.into(),
            workload: workload.into(),
            variant,
            runtime: runtime.to_string(),
            paper: None,
        }
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
    fn ts_comes_first_and_points_are_unique() {
        let rows = vec![
            row("fib", Variant::Fj, "serial"),
            row("fib", Variant::Sf, "serial"),
            row("nosuch", Variant::Fj, "serial"),
        ];
        let g = Grid::build(rows, &[1], &Selection::default());
        let names: Vec<String> = g.points.iter().map(|p| p.to_string()).collect();
        // The fj row at P=1 is the T_s point itself: measured once.
        assert_eq!(names, ["serial fib-fj P=1", "serial fib-sf P=1"]);
        assert_eq!(g.workloads(), ["fib", "nosuch"]);
        assert_eq!(g.rows.len(), 3);
    }

    #[test]
    fn ts_is_measured_even_when_serial_is_not_selected() {
        let sel = Selection {
            runtimes: Some(vec!["rayon".into()]),
            workloads: None,
        };
        let g = Grid::build(vec![row("fib", Variant::Fj, "serial")], &[1, 2], &sel);
        assert_eq!(g.points.len(), 1);
        assert_eq!(g.points[0].runtime, "serial");
    }
}
