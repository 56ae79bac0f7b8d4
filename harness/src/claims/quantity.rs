//! What a claim reads from a run: [`Q`], a quantity built from the run's points (a time, a
//! counter, a peak resident set, T_s) and numbers, evaluated to [`Samples`] that keep the
//! run's noise: one sample per round for a time, one per repetition for a counter.
//!
//! Times are per round because this kind of machine moves a process's speed by up to 2x from
//! one process to the next while the repetitions inside one process agree: the spread that
//! matters is between processes, and every round runs each point in a process of its own.
//! Two quantities combine sample by sample where their samples pair ([`Tag`]: round r with
//! round r, the same pass over the grid; repetition i with repetition i of the same point, the
//! same process); a single value combines with each; otherwise every pair is combined, which
//! can only widen the spread.

use crate::grid::Status;
use crate::results::{self, PointSummary, Summaries};
use crate::runtimes::Arm;
use crate::spec::{PointSpec, WorkloadSpec};
use crate::stats;
use std::fmt;
use stealbench_workloads::Variant;

/// A point a claim names: a runtime arm, a workload spec, a variant and P.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Pt {
    /// The runtime arm (`abp`, `prows/futures=nostack`), read once from the figure's spelling
    /// where the claim is declared ([`Pt::new`]).
    pub runtime: Arm,
    /// The workload spec (`fib`, `touchchain/d=64`).
    pub workload: WorkloadSpec,
    /// The variant.
    pub variant: Variant,
    /// The workers.
    pub p: usize,
}

impl Pt {
    /// The point of `runtime` and `workload` (an arm's spelling and a workload spec's, as a
    /// figure's rows spell them: a figure's declaration, so one that does not parse is a
    /// mistake in the figure, which its tests find), `variant` and `p`.
    pub(crate) fn new(runtime: &str, workload: &str, variant: Variant, p: usize) -> Pt {
        Pt {
            runtime: Arm::parse(runtime).unwrap_or_else(|e| panic!("a claim's point: {e}")),
            workload: declared(workload),
            variant,
            p,
        }
    }

    /// The point of a run it names.
    pub(crate) fn key(&self) -> PointSpec {
        PointSpec {
            runtime: self.runtime,
            workload: self.workload.clone(),
            variant: self.variant,
            workers: self.p,
        }
    }
}

impl fmt::Display for Pt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}-{} P={}",
            self.runtime, self.workload, self.variant, self.p
        )
    }
}

/// A quantity of a run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Q {
    /// A point's time in seconds: one sample per round (that round's median).
    Time(Pt),
    /// T_s of a workload spec: the kernel (`serial/front=kernel`, in the shape of the run's
    /// figure, [`Summaries::ts_arm`]) at P = 1, one sample per round.
    Ts(WorkloadSpec),
    /// A runtime counter of a point: one sample per repetition.
    Counter(Pt, &'static str),
    /// A point's peak resident set in KiB, as the memory figures take it (its process's
    /// `VmHWM` after its last repetition, `PointSummary::peak_kb`): one sample.
    PeakRss(Pt),
    /// A number.
    Const(f64),
    /// The first over the second.
    Div(Box<Q>, Box<Q>),
    /// The sum.
    Add(Box<Q>, Box<Q>),
    /// The larger of the two (the paper's "up to": the largest over its benchmarks).
    Max(Box<Q>, Box<Q>),
}

/// A point's time.
pub(crate) fn time(runtime: &str, workload: &str, variant: Variant, p: usize) -> Q {
    Q::Time(Pt::new(runtime, workload, variant, p))
}

/// A point's counter `name`.
pub(crate) fn counter(
    runtime: &str,
    workload: &str,
    variant: Variant,
    p: usize,
    name: &'static str,
) -> Q {
    Q::Counter(Pt::new(runtime, workload, variant, p), name)
}

/// A point's peak resident set.
pub(crate) fn peak_rss(runtime: &str, workload: &str, variant: Variant, p: usize) -> Q {
    Q::PeakRss(Pt::new(runtime, workload, variant, p))
}

/// T_s of the workload spelt `workload` (a figure's declaration, as [`Pt::new`]).
pub(crate) fn ts(workload: &str) -> Q {
    Q::Ts(declared(workload))
}

/// The workload spec a claim declares; one that does not parse is a mistake in the figure.
fn declared(workload: &str) -> WorkloadSpec {
    WorkloadSpec::parse(workload).unwrap_or_else(|e| panic!("a claim's point: {e}"))
}

impl Q {
    /// `self / other`.
    pub(crate) fn over(self, other: Q) -> Q {
        Q::Div(Box::new(self), Box::new(other))
    }

    /// `self + other`.
    pub(crate) fn plus(self, other: Q) -> Q {
        Q::Add(Box::new(self), Box::new(other))
    }

    /// The larger of `self` and `other`, sample by sample as [`Samples::combine`] pairs them.
    pub(crate) fn max(self, other: Q) -> Q {
        Q::Max(Box::new(self), Box::new(other))
    }

    /// The points it reads, with whether each is read as a time (T_s as the plain kernel's
    /// point: its shape is the run's figure's).
    pub(crate) fn points(&self) -> Vec<(Pt, bool)> {
        match self {
            Q::Time(p) => vec![(p.clone(), true)],
            Q::Ts(w) => vec![(
                Pt {
                    runtime: crate::runtimes::kernel(Default::default()),
                    workload: w.clone(),
                    variant: Variant::Fj,
                    p: 1,
                },
                true,
            )],
            Q::Counter(p, _) | Q::PeakRss(p) => vec![(p.clone(), false)],
            Q::Const(_) => Vec::new(),
            Q::Div(a, b) | Q::Add(a, b) | Q::Max(a, b) => {
                let mut v = a.points();
                v.extend(b.points());
                v
            }
        }
    }

    /// The times it reads (`Time` and `Ts`), each as a quantity of its own.
    pub(crate) fn times(&self) -> Vec<&Q> {
        match self {
            Q::Time(_) | Q::Ts(_) => vec![self],
            Q::Div(a, b) | Q::Add(a, b) | Q::Max(a, b) => {
                let mut v = a.times();
                v.extend(b.times());
                v
            }
            _ => Vec::new(),
        }
    }

    /// Whether it reads a time.
    pub(crate) fn reads_time(&self) -> bool {
        self.points().iter().any(|(_, t)| *t)
    }

    /// The workloads whose T_s it reads.
    pub(crate) fn ts_workloads(&self) -> Vec<WorkloadSpec> {
        match self {
            Q::Ts(w) => vec![w.clone()],
            Q::Div(a, b) | Q::Add(a, b) | Q::Max(a, b) => {
                let mut v = a.ts_workloads();
                v.extend(b.ts_workloads());
                v
            }
            _ => Vec::new(),
        }
    }

    /// The points it reads that `run` measured, each with its summary (T_s as the run's T_s
    /// point).
    pub(crate) fn measured<'a>(&self, run: &'a Summaries) -> Vec<&'a PointSummary> {
        match self {
            Q::Time(p) | Q::Counter(p, _) | Q::PeakRss(p) => point(run, p).into_iter().collect(),
            Q::Ts(w) => results::ts_of(run, w).into_iter().collect(),
            Q::Const(_) => Vec::new(),
            Q::Div(a, b) | Q::Add(a, b) | Q::Max(a, b) => {
                let mut v = a.measured(run);
                v.extend(b.measured(run));
                v
            }
        }
    }

    /// Its value in `run`, or why there is none.
    pub(crate) fn samples(&self, run: &Summaries) -> Result<Samples, Missing> {
        match self {
            Q::Time(p) => {
                let s = point(run, p)?;
                Ok(Samples::rounds(&s.round_medians))
            }
            Q::Ts(w) => {
                let s = results::ts_of(run, w)
                    .ok_or_else(|| Missing::NotMeasured(format!("T_s of {w}")))?;
                ok(s, &format!("T_s of {w}"))?;
                Ok(Samples::rounds(&s.round_medians))
            }
            Q::Counter(p, name) => {
                let s = point(run, p)?;
                let v = s
                    .counter(name)
                    .ok_or_else(|| Missing::NotCounted(format!("{p} counts no `{name}`")))?;
                Ok(Samples {
                    values: v.iter().map(|&x| x as f64).collect(),
                    tag: Tag::Repetitions(p.to_string()),
                })
            }
            Q::PeakRss(p) => {
                let s = point(run, p)?;
                let kb = s
                    .peak_kb()
                    .ok_or_else(|| Missing::NotCounted(format!("{p} has no peak RSS")))?;
                Ok(Samples::one(kb as f64))
            }
            Q::Const(x) => Ok(Samples::one(*x)),
            Q::Div(a, b) => Ok(a.samples(run)?.combine(&b.samples(run)?, |x, y| x / y)),
            Q::Add(a, b) => Ok(a.samples(run)?.combine(&b.samples(run)?, |x, y| x + y)),
            Q::Max(a, b) => Ok(a.samples(run)?.combine(&b.samples(run)?, f64::max)),
        }
    }
}

impl fmt::Display for Q {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Q::Time(p) => write!(f, "T({p})"),
            Q::Ts(w) => write!(f, "T_s({w})"),
            Q::Counter(p, name) => write!(f, "{name}({p})"),
            Q::PeakRss(p) => write!(f, "peak RSS({p})"),
            Q::Const(x) => write!(f, "{x}"),
            Q::Div(a, b) => write!(f, "{a} / {b}"),
            Q::Add(a, b) => write!(f, "({a} + {b})"),
            Q::Max(a, b) => write!(f, "max({a}, {b})"),
        }
    }
}

/// Why a quantity has no value in a run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Missing {
    /// A point is not in the run (not selected, not built, or a spelling no runtime takes).
    NotMeasured(String),
    /// A point did not finish ok.
    Failed(String),
    /// A point's runtime does not count what is asked.
    NotCounted(String),
}

impl fmt::Display for Missing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Missing::NotMeasured(s) => write!(f, "not measured in this run: {s}"),
            Missing::Failed(s) | Missing::NotCounted(s) => f.write_str(s),
        }
    }
}

/// The summary of `p` in `run`, finished ok.
fn point<'a>(run: &'a Summaries, p: &Pt) -> Result<&'a PointSummary, Missing> {
    let key = p.key();
    let s = run
        .get(&key)
        .ok_or_else(|| Missing::NotMeasured(p.to_string()))?;
    ok(s, &p.to_string())?;
    Ok(s)
}

/// `s`, if it finished ok with at least one value.
fn ok(s: &PointSummary, what: &str) -> Result<(), Missing> {
    if s.status != Status::Ok {
        return Err(Missing::Failed(format!("{what} ended {}", s.status)));
    }
    Ok(())
}

/// A quantity's values in a run: per round, per repetition, or one.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Samples {
    /// The values.
    pub values: Vec<f64>,
    /// What they are one of, which says with what they pair.
    pub tag: Tag,
}

/// What a quantity's values are one of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Tag {
    /// One per round, in round order: round r pairs with round r of another point (the same
    /// pass over the grid).
    Rounds,
    /// One per repetition of the point named: repetition i pairs with repetition i of the same
    /// point only (the same process and run).
    Repetitions(String),
    /// Combined from values that did not pair: they pair with nothing.
    Unpaired,
}

impl Samples {
    /// One value per round.
    pub(crate) fn rounds(values: &[f64]) -> Samples {
        Samples {
            values: values.to_vec(),
            tag: Tag::Rounds,
        }
    }

    /// A single value, which pairs with every value of another quantity.
    pub(crate) fn one(x: f64) -> Samples {
        Samples {
            values: vec![x],
            tag: Tag::Unpaired,
        }
    }

    /// `f` of `self` and `other`: value by value where the two pair (the same round of two
    /// points, the same repetition of one point), the one value against each where either
    /// has a single value, else every value against every other (which can only widen the
    /// spread).
    pub(crate) fn combine(&self, other: &Samples, f: impl Fn(f64, f64) -> f64) -> Samples {
        let (a, b) = (&self.values, &other.values);
        if b.len() == 1 {
            return Samples {
                values: a.iter().map(|x| f(*x, b[0])).collect(),
                tag: self.tag.clone(),
            };
        }
        if a.len() == 1 {
            return Samples {
                values: b.iter().map(|y| f(a[0], *y)).collect(),
                tag: other.tag.clone(),
            };
        }
        if a.len() == b.len() && self.tag == other.tag && self.tag != Tag::Unpaired {
            return Samples {
                values: a.iter().zip(b).map(|(x, y)| f(*x, *y)).collect(),
                tag: self.tag.clone(),
            };
        }
        Samples {
            values: a
                .iter()
                .flat_map(|x| b.iter().map(|y| f(*x, *y)).collect::<Vec<_>>())
                .collect(),
            tag: Tag::Unpaired,
        }
    }

    /// The estimate: the median, with the smallest and largest sample as its spread; `None`
    /// when no value is finite (a division by zero).
    pub(crate) fn estimate(&self) -> Option<Estimate> {
        let xs: Vec<f64> = self
            .values
            .iter()
            .copied()
            .filter(|x| x.is_finite())
            .collect();
        Some(Estimate {
            value: stats::median(&xs)?,
            lo: xs.iter().copied().fold(f64::INFINITY, f64::min),
            hi: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            n: xs.len(),
        })
    }
}

/// A quantity's estimate: the median of its samples and their range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Estimate {
    /// The median.
    pub value: f64,
    /// The smallest sample.
    pub lo: f64,
    /// The largest sample.
    pub hi: f64,
    /// The samples.
    pub n: usize,
}

impl fmt::Display for Estimate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.n > 1 && self.hi > self.lo {
            write!(
                f,
                "{} [{}–{}]",
                number(self.value),
                number(self.lo),
                number(self.hi)
            )
        } else {
            f.write_str(&number(self.value))
        }
    }
}

/// A number with three significant digits, integers as integers.
pub(crate) fn number(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    if x.fract() == 0.0 && x.abs() < 1e9 {
        return format!("{x:.0}");
    }
    let a = x.abs();
    let decimals = if a >= 100.0 {
        0
    } else if a >= 10.0 {
        1
    } else if a >= 1.0 {
        2
    } else if a > 0.0 {
        (2 - a.log10().floor() as i32).clamp(2, 9) as usize
    } else {
        0
    };
    format!("{x:.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_pair_by_round_or_repetition_else_every_pair() {
        let a = Samples::rounds(&[2.0, 4.0, 6.0]);
        let b = Samples::rounds(&[1.0, 2.0, 3.0]);
        assert_eq!(a.combine(&b, |x, y| x / y).values, [2.0, 2.0, 2.0]);
        let c = Samples::rounds(&[1.0, 2.0]);
        assert_eq!(a.combine(&c, |x, y| x / y).values.len(), 6);
        // Two points' repetitions are two processes: they do not pair; one point's do.
        let reps = |p: &str, v: &[f64]| Samples {
            values: v.to_vec(),
            tag: Tag::Repetitions(p.into()),
        };
        let x = reps("abp", &[2.0, 4.0]);
        assert_eq!(
            x.combine(&reps("abp", &[1.0, 2.0]), |x, y| x / y).values,
            [2.0, 2.0]
        );
        let across = x.combine(&reps("prows", &[1.0, 2.0]), |x, y| x / y);
        assert_eq!((across.values.len(), across.tag), (4, Tag::Unpaired));
        let e = a
            .combine(&Samples::one(2.0), |x, y| x / y)
            .estimate()
            .unwrap();
        assert_eq!((e.value, e.lo, e.hi, e.n), (2.0, 1.0, 3.0, 3));
        assert_eq!(e.to_string(), "2 [1–3]");
        assert_eq!(Samples::one(f64::INFINITY).estimate(), None);
    }

    #[test]
    fn numbers_keep_three_digits() {
        assert_eq!(number(2.0), "2");
        assert_eq!(number(0.9731), "0.973");
        assert_eq!(number(1.234), "1.23");
        assert_eq!(number(12.34), "12.3");
        assert_eq!(number(0.01767), "0.0177");
    }
}
