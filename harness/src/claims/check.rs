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
//!
//! # The band rule
//!
//! Every claim's band comes from one rule, written here once ([`Band::ratio`], [`Band::same`],
//! [`Band::more`], [`Band::less`], [`Band::exponent`]):
//!
//! 1. **Where the paper prints a number for a case, the band is two-sided around that case's
//!    number**, each case its own band ([`Check::Each`]):
//!    - a ratio between two systems or two versions (of times, of counts, of memory), a
//!      speedup or an overhead T_1 / T_s: **± 25 %** ([`Band::ratio`]). The spread between
//!      processes is the estimate's, not the band's (a spread across an edge is inconclusive,
//!      never a pass); the band allows for what differs between the paper's machine,
//!      compiler and inputs and ours, and no more: it still tells the paper's neighbouring
//!      numbers apart (futures over fork-join 1.21 against 1.56; TBB's overhead 57 against
//!      80; Fibril over TBB 2.0 against 2.5). A count is judged as a ratio of two counts of
//!      the same input (sf over fj deviations, unmaps over steals), never as a count, whose
//!      size is the input's; a memory ratio is judged as one of times, the process's own
//!      memory being in both;
//!    - "about the same", "comparable", "similar", "negligible", "roughly constant": **± 10 %**
//!      ([`Band::same`]), around the case's number (1 where the paper only says so);
//!    - where the paper's words also give the ratio a direction ("costs more", "fewer still",
//!      "much less"), the band does not cross 1 to the other side, unless the case's own
//!      number does ([`Band::more`], [`Band::less`]);
//!    - a growth exponent printed as `n ± e`: **n ± max(2e, 0.1)** ([`Band::exponent`]): the
//!      paper's own uncertainty, at least a tenth.
//! 2. **A one-sided band only where the paper's statement is one-sided**, and the claim quotes
//!    the words: a theorem's bound ("O(n) deviations", "P(S_1 + D) pages"), "at least 3.6×",
//!    "less than 60%", "an increase" ([`Band::at_least`], [`Band::at_most`]).
//! 3. Where the paper prints no number and its words are not one-sided (a plot, "linear"),
//!    the band is ours, from a stated model, and the claim's paper text says which (linear
//!    speedup: P ± 25 %).

use super::quantity::{Estimate, Missing, Pt, Q, number};
use crate::fit;
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

    /// The band rule's width for a ratio between two systems or versions: ± 25 %.
    pub(crate) const RATIO: f64 = 0.25;

    /// The band rule's width for "about the same": ± 10 %.
    pub(crate) const SAME: f64 = 0.10;

    /// A ratio (of times, counts or memory), a speedup or an overhead the paper prints as `x`:
    /// `x` ± [`Band::RATIO`].
    pub(crate) fn ratio(x: f64) -> Band {
        Band::around(x, Band::RATIO)
    }

    /// Two things the paper finds about the same, its number `x` (1 where it gives none):
    /// `x` ± [`Band::SAME`].
    pub(crate) fn same(x: f64) -> Band {
        Band::around(x, Band::SAME)
    }

    /// [`Band::ratio`] of `x` for a ratio the paper's words say is above 1 ("costs more",
    /// "faster"): not below 1, unless `x` itself is.
    pub(crate) fn more(x: f64) -> Band {
        let b = Band::ratio(x);
        Band {
            lo: b.lo.map(|l| if x >= 1.0 { l.max(1.0) } else { l }),
            ..b
        }
    }

    /// [`Band::ratio`] of `x` for a ratio the paper's words say is below 1 ("much less"):
    /// not above 1, unless `x` itself is.
    pub(crate) fn less(x: f64) -> Band {
        let b = Band::ratio(x);
        Band {
            hi: b.hi.map(|h| if x <= 1.0 { h.min(1.0) } else { h }),
            ..b
        }
    }

    /// A growth exponent the paper prints as `n ± error`: `n` ± the larger of twice its error
    /// and 0.1.
    pub(crate) fn exponent(n: f64, error: f64) -> Band {
        let w = (2.0 * error).max(0.1);
        Band::within(n - w, n + w)
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

/// A case of [`Check::Exponent`]: its label, its series of (x, quantity) and the exponents
/// it accepts.
pub(crate) type Series = (String, Vec<(f64, Q)>, Band);

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
    /// Each case's value within a band of its own: the band rule applied to the case's own
    /// paper number (Fibril over TBB: fib around 6.0, quicksort around 2.0).
    Each {
        /// The cases, each with its band.
        cases: Vec<(Case, Band)>,
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
    /// Each case's growth exponent within the case's own band (the band rule: around the
    /// exponent the paper prints for that case, [`Band::exponent`]).
    Exponent {
        /// How the exponent is fitted.
        model: Growth,
        /// Each case: a label, its series of (x, quantity) and its accepted exponents.
        cases: Vec<Series>,
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
            Check::Each { cases, .. } => cases.iter().map(|(c, _)| &c.q).collect(),
            Check::Order { cases, .. } => cases.iter().flat_map(|(_, qs)| qs).collect(),
            Check::Exact { cases, .. } => cases.iter().map(|(c, _)| &c.q).collect(),
            Check::Exponent { cases, .. } => cases
                .iter()
                .flat_map(|(_, s, _)| s.iter().map(|(_, q)| q))
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
            Check::Each { cases, .. } => cases
                .iter()
                .map(|(c, _)| (c.label.clone(), vec![&c.q]))
                .collect(),
            Check::Exponent { cases, .. } => cases
                .iter()
                .map(|(label, s, _)| (label.clone(), s.iter().map(|(_, q)| q).collect()))
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
            Check::Each { cases, unit } => {
                let q = cases
                    .first()
                    .map(|(c, _)| c.q.to_string())
                    .unwrap_or_default();
                format!("{q} within its case's band ({})", each_band(cases, unit))
                    + &more(cases.len(), "case")
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
            Check::Exponent { model, cases } => {
                let how = match model {
                    Growth::Eq17 => "the exponent n of Eq. (17), y = a + b M_1 P^n",
                };
                let q = cases
                    .first()
                    .and_then(|(_, s, _)| s.first())
                    .map(|(_, q)| q.to_string())
                    .unwrap_or_default();
                format!(
                    "{how} of {q} within its series' band ({}), n ± 2 standard errors",
                    self.band()
                ) + &more(cases.len(), "series")
            }
        }
    }

    /// The band, in words.
    pub(crate) fn band(&self) -> String {
        match self {
            Check::Within { band, unit, .. } => {
                format!("{band}{}{unit}", if unit.is_empty() { "" } else { " " })
            }
            Check::Each { cases, unit } => each_band(cases, unit),
            Check::Order { band, .. } => format!("each over the one before {band}"),
            Check::Exact { formula, .. } => format!("= {formula}"),
            Check::Exponent { cases, .. } => cases
                .iter()
                .map(|(label, _, band)| format!("{label} n {band}"))
                .collect::<Vec<_>>()
                .join("; "),
        }
    }

    /// The band of the case at `index` (of [`Check::cases`]), in words: its own where the
    /// check has a band per case, else the check's.
    pub(crate) fn case_band(&self, index: usize) -> String {
        let with_unit = |band: String, unit: &str| {
            format!("{band}{}{unit}", if unit.is_empty() { "" } else { " " })
        };
        match self {
            Check::Each { cases, unit } => cases
                .get(index)
                .map_or_else(|| self.band(), |(_, b)| with_unit(b.to_string(), unit)),
            Check::Exponent { cases, .. } => cases
                .get(index)
                .map_or_else(|| self.band(), |(_, _, b)| format!("n {b}")),
            _ => self.band(),
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
            Check::Each { cases, .. } => cases
                .iter()
                .map(|(c, band)| match estimate(&c.q, run) {
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
            Check::Exponent { model, cases } => cases
                .iter()
                .map(|(label, series, band)| exponent(label, *model, series, band, run))
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

/// The bands of [`Check::Each`], case by case: `fib [4.50, 7.50]; lu [1.50, 2.50] x`.
fn each_band(cases: &[(Case, Band)], unit: &str) -> String {
    let bands = cases
        .iter()
        .map(|(c, b)| {
            if c.label.is_empty() {
                b.to_string()
            } else {
                format!("{} {b}", c.label)
            }
        })
        .collect::<Vec<_>>()
        .join("; ");
    format!("{bands}{}{unit}", if unit.is_empty() { "" } else { " " })
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
    fn the_band_rule_is_two_sided_around_the_papers_number() {
        // A ratio: ± 25 %; TBB's fib overhead 57 does not take our 80.
        assert_eq!(Band::ratio(57.0), Band::within(57.0 * 0.75, 57.0 * 1.25));
        assert_eq!(
            Band::ratio(57.0).judge(&est(80.0, 78.6, 85.1)),
            Outcome::Fails
        );
        // "About the same": ± 10 %.
        assert_eq!(Band::same(1.0).to_string(), "[0.900, 1.10]");
        // A direction in the words clips the band at 1, unless the paper's own number is
        // beyond it: futures cost more (1.21), Fibril's knapsack uses fewer stacks (0.97).
        assert_eq!(Band::more(1.21), Band::within(1.0, 1.21 * 1.25));
        assert_eq!(Band::more(0.97), Band::ratio(0.97));
        assert_eq!(Band::less(0.935), Band::within(0.935 * 0.75, 1.0));
        assert_eq!(Band::less(3.0 / 108.0), Band::ratio(3.0 / 108.0));
        // An exponent: ± twice its error, at least a tenth.
        assert_eq!(Band::exponent(1.30, 0.07).to_string(), "[1.16, 1.44]");
        assert_eq!(Band::exponent(0.38, 0.01).to_string(), "[0.280, 0.480]");
        for b in [
            Band::ratio(6.0),
            Band::same(1.0),
            Band::more(1.21),
            Band::less(0.5),
            Band::exponent(1.0, 0.1),
        ] {
            assert!(b.lo.is_some() && b.hi.is_some(), "{b}");
        }
    }

    #[test]
    fn each_case_is_judged_against_its_own_band() {
        let q = |x: f64| Q::Const(x);
        let check = Check::Each {
            cases: vec![
                (case("fib", q(6.5)), Band::ratio(6.0)),
                (case("quicksort", q(6.5)), Band::ratio(2.0)),
            ],
            unit: "x",
        };
        let run = crate::results::Summaries::default();
        let outcomes: Vec<Outcome> = check.run(&run).into_iter().map(|r| r.outcome).collect();
        assert_eq!(outcomes, [Outcome::Holds, Outcome::Fails]);
        assert_eq!(check.band(), "fib [4.50, 7.50]; quicksort [1.50, 2.50] x");
        assert_eq!(check.case_band(1), "[1.50, 2.50] x");
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
