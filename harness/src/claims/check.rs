//! The checks a claim makes of its quantities, each against a band with a tolerance, in the
//! spirit of ReFrame's performance references (a reference, lower and upper bounds, a unit):
//! a value within a band (a ratio, or a bound: a band open on one side), an order, an exact
//! formula, a growth exponent.
//!
//! A check decides on an estimate's whole spread, never on its median alone (an exponent's
//! spread is its fit's ± 2 standard errors): it holds when the spread lies inside the band,
//! fails when it lies outside, and is inconclusive when the spread crosses the band's edge.
//!
//! Every case of a check (a benchmark, a d, a series) gets an [`Outcome`] of its own
//! ([`CaseResult`], with the points it read), and the claim's is the [`worst`] of its cases':
//! it fails if one fails, holds only if all hold, and is otherwise undecided by the first case
//! that is (a spread across an edge before a point the run did not measure).

use super::quantity::{Estimate, Missing, Pt, Q, number};
use crate::figures::fit;
use crate::results::Summaries;

use std::fmt;

/// The values a check accepts: `lo <= x <= hi`, either side open.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Band {
    /// The lower bound.
    pub lo: Option<f64>,
    /// The upper bound.
    pub hi: Option<f64>,
}

impl Band {
    /// `lo <= x <= hi`.
    pub(crate) fn within(lo: f64, hi: f64) -> Band {
        Band {
            lo: Some(lo),
            hi: Some(hi),
        }
    }

    /// `reference` within a relative `tolerance` (0.05: 5 %) either side.
    pub(crate) fn around(reference: f64, tolerance: f64) -> Band {
        Band::within(reference * (1.0 - tolerance), reference * (1.0 + tolerance))
    }

    /// `x <= hi`.
    pub(crate) fn at_most(hi: f64) -> Band {
        Band {
            lo: None,
            hi: Some(hi),
        }
    }

    /// `x >= lo`.
    pub(crate) fn at_least(lo: f64) -> Band {
        Band {
            lo: Some(lo),
            hi: None,
        }
    }

    /// Whether `x` is in the band.
    pub(crate) fn contains(&self, x: f64) -> bool {
        self.lo.is_none_or(|l| x >= l) && self.hi.is_none_or(|h| x <= h)
    }

    /// How an estimate's spread lies against the band: inside it, wholly outside it, or
    /// across an edge.
    pub(crate) fn judge(&self, e: &Estimate) -> Outcome {
        let below = self.lo.is_some_and(|l| e.hi < l);
        let above = self.hi.is_some_and(|h| e.lo > h);
        if self.contains(e.lo) && self.contains(e.hi) {
            Outcome::Holds
        } else if below || above {
            Outcome::Fails
        } else {
            let edge = match (self.lo, self.hi) {
                (Some(l), _) if e.lo < l => l,
                (_, Some(h)) => h,
                (Some(l), None) => l,
                (None, None) => e.value,
            };
            Outcome::Inconclusive(format!(
                "the spread {}–{} crosses the band's edge {}",
                number(e.lo),
                number(e.hi),
                number(edge)
            ))
        }
    }
}

impl fmt::Display for Band {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.lo, self.hi) {
            (Some(l), Some(h)) => write!(f, "[{}, {}]", number(l), number(h)),
            (Some(l), None) => write!(f, "≥ {}", number(l)),
            (None, Some(h)) => write!(f, "≤ {}", number(h)),
            (None, None) => f.write_str("any"),
        }
    }
}

/// What one case of a check came to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Outcome {
    /// The spread lies inside the band.
    Holds,
    /// The spread lies outside the band.
    Fails,
    /// The spread crosses the band's edge, or the case cannot be judged (a point that did
    /// not finish, a counter its runtime does not keep); why.
    Inconclusive(String),
    /// A point the case reads is not in the run (not selected, or not built); which.
    NotMeasured(String),
}

impl Outcome {
    /// How bad it is, for [`worst`]: holds < not measured < inconclusive < fails.
    fn rank(&self) -> u8 {
        match self {
            Outcome::Holds => 0,
            Outcome::NotMeasured(_) => 1,
            Outcome::Inconclusive(_) => 2,
            Outcome::Fails => 3,
        }
    }
}

/// A case of a check: a label (`mm`, `d=64`) and its quantity.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Case {
    /// What the case is, in the claim's words.
    pub label: String,
    /// Its quantity.
    pub q: Q,
}

/// A case labelled `label`.
pub(crate) fn case(label: impl Into<String>, q: Q) -> Case {
    Case {
        label: label.into(),
        q,
    }
}

/// How a growth is fitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Growth {
    /// libfork's Eq. (17), `y = a + b y_1 P^n`, `y_1` the value at the smallest x
    /// ([`fit::fit`]), x being P.
    Eq17,
}

/// A check over a claim's quantities.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Check {
    /// Each case's value within `band` (a ratio within a tolerance, or a bound).
    Within {
        /// The cases.
        cases: Vec<Case>,
        /// The accepted values.
        band: Band,
        /// The unit of the values (`x` for a ratio, `pages`).
        unit: &'static str,
    },
    /// In each case, its values in increasing order: each next over the previous within
    /// `band` (`≥ 1`: not below it).
    Order {
        /// Each case: a label and its quantities, smallest first.
        cases: Vec<(String, Vec<Q>)>,
        /// The accepted ratio of each value to the one before.
        band: Band,
    },
    /// Each case's value exactly the formula's, in every sample (a count under a forced
    /// schedule).
    Exact {
        /// The formula in words (`2 + 2d`).
        formula: &'static str,
        /// Each case with the formula's value.
        cases: Vec<(Case, f64)>,
    },
    /// Each case's growth exponent within `band`.
    Exponent {
        /// How the exponent is fitted.
        model: Growth,
        /// Each case: a label and its series of (x, quantity).
        cases: Vec<(String, Vec<(f64, Q)>)>,
        /// The accepted exponents.
        band: Band,
    },
}

/// A case's result: its label, what we measured, its outcome, and the points it read.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CaseResult {
    /// The case's label.
    pub label: String,
    /// What we measured, with its spread.
    pub ours: String,
    /// The outcome.
    pub outcome: Outcome,
    /// The points its quantities read, each with whether it is read as a time.
    pub points: Vec<(Pt, bool)>,
}

impl Check {
    /// Every quantity the check reads.
    pub(crate) fn quantities(&self) -> Vec<&Q> {
        match self {
            Check::Within { cases, .. } => cases.iter().map(|c| &c.q).collect(),
            Check::Order { cases, .. } => cases.iter().flat_map(|(_, qs)| qs).collect(),
            Check::Exact { cases, .. } => cases.iter().map(|(c, _)| &c.q).collect(),
            Check::Exponent { cases, .. } => cases
                .iter()
                .flat_map(|(_, s)| s.iter().map(|(_, q)| q))
                .collect(),
        }
    }

    /// Each case: its label and the quantities it reads.
    pub(crate) fn cases(&self) -> Vec<(String, Vec<&Q>)> {
        match self {
            Check::Within { cases, .. } => cases
                .iter()
                .map(|c| (c.label.clone(), vec![&c.q]))
                .collect(),
            Check::Order { cases, .. } => cases
                .iter()
                .map(|(label, qs)| (label.clone(), qs.iter().collect()))
                .collect(),
            Check::Exact { cases, .. } => cases
                .iter()
                .map(|(c, _)| (c.label.clone(), vec![&c.q]))
                .collect(),
            Check::Exponent { cases, .. } => cases
                .iter()
                .map(|(label, s)| (label.clone(), s.iter().map(|(_, q)| q).collect()))
                .collect(),
        }
    }

    /// The check in words, with its band.
    pub(crate) fn describe(&self) -> String {
        match self {
            Check::Within { cases, band, unit } => {
                let q = cases.first().map(|c| c.q.to_string()).unwrap_or_default();
                format!(
                    "{} within {band}{}{}",
                    q,
                    if unit.is_empty() { "" } else { " " },
                    unit,
                ) + &more(cases.len(), "case")
            }
            Check::Order { cases, band } => {
                let q = cases
                    .first()
                    .map(|(_, qs)| {
                        qs.iter()
                            .map(|q| q.to_string())
                            .collect::<Vec<_>>()
                            .join(" < ")
                    })
                    .unwrap_or_default();
                format!("in order {q} (each over the one before {band})")
                    + &more(cases.len(), "case")
            }
            Check::Exact { formula, cases } => {
                let q = cases
                    .first()
                    .map(|(c, _)| c.q.to_string())
                    .unwrap_or_default();
                format!("{q} = {formula} exactly, in every repetition") + &more(cases.len(), "case")
            }
            Check::Exponent { model, cases, band } => {
                let how = match model {
                    Growth::Eq17 => "the exponent n of Eq. (17), y = a + b M_1 P^n",
                };
                let q = cases
                    .first()
                    .and_then(|(_, s)| s.first())
                    .map(|(_, q)| q.to_string())
                    .unwrap_or_default();
                format!("{how} of {q} within {band}, n ± 2 standard errors")
                    + &more(cases.len(), "series")
            }
        }
    }

    /// The band, in words.
    pub(crate) fn band(&self) -> String {
        match self {
            Check::Within { band, unit, .. } => {
                format!("{band}{}{unit}", if unit.is_empty() { "" } else { " " })
            }
            Check::Order { band, .. } => format!("each over the one before {band}"),
            Check::Exact { formula, .. } => format!("= {formula}"),
            Check::Exponent { band, .. } => format!("n {band}"),
        }
    }

    /// Runs the check on `run`: a result per case, in [`Check::cases`]' order.
    pub(crate) fn run(&self, run: &Summaries) -> Vec<CaseResult> {
        let mut results = self.outcomes(run);
        for (r, (_, qs)) in results.iter_mut().zip(self.cases()) {
            for q in qs {
                for p in q.points() {
                    if !r.points.contains(&p) {
                        r.points.push(p);
                    }
                }
            }
        }
        results
    }

    /// Each case's result, without its points.
    fn outcomes(&self, run: &Summaries) -> Vec<CaseResult> {
        match self {
            Check::Within { cases, band, .. } => cases
                .iter()
                .map(|c| match estimate(&c.q, run) {
                    Ok(e) => result(&c.label, e.to_string(), band.judge(&e)),
                    Err(m) => missing(&c.label, m),
                })
                .collect(),
            Check::Order { cases, band } => cases
                .iter()
                .map(|(label, qs)| order(label, qs, band, run))
                .collect(),
            Check::Exact { cases, .. } => cases
                .iter()
                .map(|(c, want)| match c.q.samples(run) {
                    Ok(s) => {
                        let Some(e) = s.estimate() else {
                            return missing(&c.label, no_samples(&c.q));
                        };
                        let exact = s.values.iter().all(|x| x == want);
                        let ours = if exact {
                            e.to_string()
                        } else {
                            format!("{e} ≠ {}", number(*want))
                        };
                        result(
                            &c.label,
                            ours,
                            if exact {
                                Outcome::Holds
                            } else {
                                Outcome::Fails
                            },
                        )
                    }
                    Err(m) => missing(&c.label, m),
                })
                .collect(),
            Check::Exponent { model, cases, band } => cases
                .iter()
                .map(|(label, series)| exponent(label, *model, series, band, run))
                .collect(),
        }
    }
}

/// `", for each of N cases"` for more than one case, else nothing.
fn more(n: usize, what: &str) -> String {
    if n > 1 {
        format!(", for each of {n} {what}s")
    } else {
        String::new()
    }
}

fn result(label: &str, ours: String, outcome: Outcome) -> CaseResult {
    CaseResult {
        label: label.to_string(),
        ours,
        outcome,
        points: Vec::new(),
    }
}

fn missing(label: &str, m: Missing) -> CaseResult {
    let outcome = match m {
        Missing::NotMeasured(_) => Outcome::NotMeasured(m.to_string()),
        _ => Outcome::Inconclusive(m.to_string()),
    };
    result(label, "—".to_string(), outcome)
}

fn no_samples(q: &Q) -> Missing {
    Missing::Failed(format!("{q}: no value"))
}

/// The estimate of `q` in `run`.
fn estimate(q: &Q, run: &Summaries) -> Result<Estimate, Missing> {
    q.samples(run)?.estimate().ok_or_else(|| no_samples(q))
}

/// One case of [`Check::Order`]: each value over the one before, within `band`.
fn order(label: &str, qs: &[Q], band: &Band, run: &Summaries) -> CaseResult {
    let mut values = Vec::new();
    let mut outcomes = Vec::new();
    let mut prev: Option<super::quantity::Samples> = None;
    for q in qs {
        let s = match q.samples(run) {
            Ok(s) => s,
            Err(m) => return missing(label, m),
        };
        let Some(e) = s.estimate() else {
            return missing(label, no_samples(q));
        };
        values.push(e.to_string());
        if let Some(p) = &prev {
            outcomes.push(match s.combine(p, |x, y| x / y).estimate() {
                Some(r) => band.judge(&r),
                None => Outcome::Inconclusive(format!("{q}: no value")),
            });
        }
        prev = Some(s);
    }
    result(label, values.join(" < "), worst(outcomes))
}

/// One case of [`Check::Exponent`].
fn exponent(
    label: &str,
    model: Growth,
    series: &[(f64, Q)],
    band: &Band,
    run: &Summaries,
) -> CaseResult {
    let mut points = Vec::new();
    for (x, q) in series {
        match estimate(q, run) {
            Ok(e) => points.push((*x, e.value)),
            Err(m) => return missing(label, m),
        }
    }
    let fitted = match model {
        Growth::Eq17 => {
            let m1 = points.first().map_or(0.0, |p| p.1);
            // An exponent on the edge of the range searched is none the data determine.
            fit::fit(&points, m1)
                .filter(|f| !f.at_bound)
                .and_then(|f| Some((f.n, f.se?.0)))
        }
    };
    let Some((n, se)) = fitted else {
        return result(
            label,
            "—".to_string(),
            Outcome::Inconclusive(format!(
                "{} points do not determine an exponent (too few, flat, or fitted on the edge \
                 of the range searched)",
                points.len()
            )),
        );
    };
    let e = Estimate {
        value: n,
        lo: n - 2.0 * se,
        hi: n + 2.0 * se,
        n: points.len(),
    };
    result(
        label,
        format!("n = {} ± {}", number(n), number(2.0 * se)),
        band.judge(&e),
    )
}

/// The outcome of several, the worst of them: fails if one fails, holds if all hold (or there
/// are none), else the first inconclusive one, else the first not measured (a case the run
/// measured decides before one it did not).
pub(crate) fn worst(outcomes: Vec<Outcome>) -> Outcome {
    let mut worst = Outcome::Holds;
    for o in outcomes {
        if o.rank() > worst.rank() {
            worst = o;
        }
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(value: f64, lo: f64, hi: f64) -> Estimate {
        Estimate {
            value,
            lo,
            hi,
            n: 3,
        }
    }

    #[test]
    fn a_band_decides_on_the_whole_spread() {
        let b = Band::around(1.0, 0.05);
        assert_eq!(b.judge(&est(1.0, 0.97, 1.03)), Outcome::Holds);
        assert_eq!(b.judge(&est(1.3, 1.2, 1.4)), Outcome::Fails);
        assert_eq!(b.judge(&est(0.8, 0.7, 0.9)), Outcome::Fails);
        // The median is inside, the spread crosses the upper edge: not decided.
        match b.judge(&est(1.02, 0.99, 1.10)) {
            Outcome::Inconclusive(why) => assert!(why.contains("1.05"), "{why}"),
            o => panic!("{o:?}"),
        }
        // A spread wider than the band on both sides is not a failure either.
        assert!(matches!(
            b.judge(&est(1.0, 0.5, 1.5)),
            Outcome::Inconclusive(_)
        ));
        assert_eq!(
            Band::at_most(0.6).judge(&est(0.3, 0.2, 0.4)),
            Outcome::Holds
        );
        assert_eq!(
            Band::at_least(1.3).judge(&est(1.0, 0.9, 1.1)),
            Outcome::Fails
        );
        assert_eq!(Band::at_least(1.3).to_string(), "≥ 1.30");
        assert_eq!(Band::within(0.95, 1.05).to_string(), "[0.950, 1.05]");
    }

    #[test]
    fn the_worst_outcome_decides() {
        let inc = Outcome::Inconclusive("x".into());
        assert_eq!(worst(vec![Outcome::Holds, Outcome::Holds]), Outcome::Holds);
        assert_eq!(worst(vec![Outcome::Holds, inc.clone()]), inc);
        let unmeasured = Outcome::NotMeasured("y".into());
        assert_eq!(worst(vec![unmeasured.clone(), inc.clone()]), inc);
        assert_eq!(worst(vec![Outcome::Holds, unmeasured.clone()]), unmeasured);
        let first = Outcome::Inconclusive("first".into());
        assert_eq!(worst(vec![first.clone(), inc.clone()]), first);
        assert_eq!(worst(vec![inc, Outcome::Fails]), Outcome::Fails);
        assert_eq!(worst(Vec::new()), Outcome::Holds);
    }
}
