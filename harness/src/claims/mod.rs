//! The claims the figures test and the verdicts a run gives them.
//!
//! Every figure module declares the claims it exists to test ([`Claim`]: an id, the paper's
//! words, the paper's number or formula, and a [`Check`] of the measured points against a
//! band). A claim is of one of three [`Kind`]s: a paper's (the default), ours
//! ([`Claim::ours`]: the `steal-scaling` figure's), or a regression check of our own
//! construction ([`Claim::regression`], with why it holds by construction). Only the papers'
//! claims are tallied as theirs ([`summary`]); the others are shown apart, under their own
//! headings, with their verdicts.
//!
//! [`judge`] gives each case of a claim (a benchmark, a d, a series) a [`Verdict`] of its own by
//! its check ([`CaseVerdict`]: `holds`, `fails`, `inconclusive` across the band's edge or on a
//! point that did not finish, `n/a` on a point the run did not measure), and the claim the
//! worst of its cases' (fails, then inconclusive, then n/a, then holds), unless a gate says the
//! run cannot decide it:
//!
//! - `n/a (why)` when the claim compares with a system stealbench only stands in for (Cilk
//!   Plus is `abp`), one it does not have (taskflow) or one this build lacks (`tbb`,
//!   `openmp` without their features);
//! - `inconclusive (why)` for a claim whose points come from more than one machine (a run
//!   merged with `--force` across machines: a claim whose points one of them measured is judged
//!   on that machine's cores), for a time at a P beyond the machine's cores (times only: a count
//!   or memory point is measured at any P, oversubscribed, and the default workers of a
//!   figure of counts or memory include its claims' P), a time point with fewer than
//!   [`MIN_TIME_ROUNDS`] rounds (one process per round: a VM's times move between processes,
//!   so one round reads noise as a result), or a count or memory claim at an input below the
//!   size where the paper's effect shows (`gate.rs`).
//!
//! A gated claim still says what its cases would give when they decide it (`would fail: fib`,
//! [`Judgement::would`]). A failure, or a would-be one, carries the measured cause a figure
//! gives it ([`Claim::cause`]) or says "cause unknown"; a verdict decided on points with more
//! workers than the machine's cores says so (`oversubscribed: P = 16 on 2 cores`); and the
//! caller that renders a run marks a run made by a dirty build or by another commit than its
//! own ([`Judgement::build`]).
//!
//! A time is the median over the rounds of each round's median, its spread the smallest and
//! largest round (`quantity.rs`); a check decides on the whole spread (`check.rs`). A claim
//! that rests on T_s says so when a row of the same program at P = 1 beat T_s in every round:
//! T_s, the kernel with no runtime and no trait in it, must be the fastest serial code, and a
//! row faster than it in every process (the `serial` elision's included) makes it suspect.
//! The verdicts are shown (terminal, page, `claims.csv`, listings) by `show.rs`.

pub(crate) mod check;
mod gate;
pub(crate) mod quantity;
mod show;

pub(crate) use check::{Band, Case, Check, Growth, Outcome, case};
pub(crate) use gate::gates_before_run;
use gate::{cores_of, gate, machines_of, simulated};
pub(crate) use quantity::{Q, counter, peak_rss, time, ts};
pub(crate) use show::{
    apart, listing, listing_csv, markdown, of_kind, summary, tally, text, write_csv,
};

use crate::results::Summaries;
use std::fmt;
use stealbench_workloads::Size;

/// The rounds a time point needs for a claim to be judged on it.
pub(crate) const MIN_TIME_ROUNDS: usize = 3;

/// Whose claim a claim is. Only [`Kind::Paper`] claims are "the papers' claims" that every
/// tally counts ([`tally`]); the others are shown apart, under their own headings, with their
/// verdicts.
///
/// The rule where two kinds fit: a check that cannot fail by the effect it names is a
/// regression check, whoever states it ([`Claim::regression`] over [`Claim::ours`]): what
/// such a check can still catch is a bug of ours, not a property of a design.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A paper's claim, in its words, judged against its number (the default).
    Paper,
    /// A claim of ours about our own runtimes (the `steal-scaling` figure's): no paper states
    /// it.
    Ours,
    /// A regression check of our own construction: it holds by how it is built (a forced
    /// schedule, a claim implied by another, the same code path twice, a band drawn from the
    /// data it judges), with why.
    Regression(&'static str),
}

impl Kind {
    /// Every kind's word, in the order the reports show them.
    pub(crate) const WORDS: [&'static str; 3] = ["paper", "ours", "regression"];

    /// `paper`, `ours` or `regression`: its column in the CSV forms.
    pub(crate) fn word(&self) -> &'static str {
        match self {
            Kind::Paper => "paper",
            Kind::Ours => "ours",
            Kind::Regression(_) => "regression",
        }
    }

    /// The heading of its claims in a report.
    pub(crate) fn heading(word: &str) -> &'static str {
        match word {
            "ours" => "Our claims, which no paper states",
            "regression" => "Regression checks of our own construction, which hold by construction",
            _ => "The papers' claims",
        }
    }
}

/// A claim that a figure tests: by default a paper's ([`Kind`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Claim {
    /// Its id within the figure (`futures-keep-up`); `FIGURE/ID` names it everywhere.
    pub id: &'static str,
    /// The paper's words, quoted short, with their numbers.
    pub quote: &'static str,
    /// The paper's number or formula that the check's band comes from.
    pub paper: String,
    /// The check over our points.
    pub check: Check,
    /// Why the claim cannot be tested on this build (a stand-in for the paper's system):
    /// the verdict is `n/a` with this reason, the numbers are still shown.
    pub stand_in: Option<&'static str>,
    /// The smallest input size at which the paper's effect shows, and why; below it the
    /// verdict is `inconclusive`.
    pub min_size: Option<(Size, &'static str)>,
    /// Whose claim it is.
    pub kind: Kind,
    /// The measured cause of a failure, where one is known: shown beside `fails` (and beside
    /// a gated claim's "would fail"); without it a failure says "cause unknown".
    pub cause: Option<&'static str>,
}

impl Claim {
    /// A paper's claim with its check, on every size, with no stand-in.
    pub(crate) fn new(
        id: &'static str,
        quote: &'static str,
        paper: impl Into<String>,
        check: Check,
    ) -> Claim {
        Claim {
            id,
            quote,
            paper: paper.into(),
            check,
            stand_in: None,
            min_size: None,
            kind: Kind::Paper,
            cause: None,
        }
    }

    /// The claim, `n/a` for `why`.
    pub(crate) fn stand_in(self, why: &'static str) -> Claim {
        Claim {
            stand_in: Some(why),
            ..self
        }
    }

    /// The claim, inconclusive below `size` for `why`.
    pub(crate) fn at_least_size(self, size: Size, why: &'static str) -> Claim {
        Claim {
            min_size: Some((size, why)),
            ..self
        }
    }

    /// The claim, ours rather than a paper's.
    pub(crate) fn ours(self) -> Claim {
        Claim {
            kind: Kind::Ours,
            ..self
        }
    }

    /// The claim, a regression check of our own construction: it holds by construction, for
    /// `why`.
    pub(crate) fn regression(self, why: &'static str) -> Claim {
        Claim {
            kind: Kind::Regression(why),
            ..self
        }
    }

    /// The claim, with the measured cause of its failure.
    pub(crate) fn cause(self, why: &'static str) -> Claim {
        Claim {
            cause: Some(why),
            ..self
        }
    }

    /// The largest P among the points it reads.
    #[cfg(test)]
    pub(crate) fn max_p(&self) -> usize {
        self.points().iter().map(|(p, _)| p.p).max().unwrap_or(1)
    }

    /// The largest P among the points it reads as times (1 if none).
    pub(crate) fn max_time_p(&self) -> usize {
        self.points()
            .iter()
            .filter(|(_, time)| *time)
            .map(|(p, _)| p.p)
            .max()
            .unwrap_or(1)
    }

    /// The points it reads, each once, with whether it is read as a time.
    pub(crate) fn points(&self) -> Vec<(quantity::Pt, bool)> {
        let mut out: Vec<(quantity::Pt, bool)> = Vec::new();
        for q in self.check.quantities() {
            for p in q.points() {
                if !out.contains(&p) {
                    out.push(p);
                }
            }
        }
        out
    }

    /// Whether it compares times.
    pub(crate) fn reads_time(&self) -> bool {
        self.check.quantities().iter().any(|q| q.reads_time())
    }
}

/// A verdict: a claim's on one run, or one case's.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Verdict {
    /// The measured spread lies inside the band.
    Holds,
    /// The measured spread lies outside the band.
    Fails,
    /// The run cannot decide; why.
    Inconclusive(String),
    /// The claim cannot be tested here; why.
    NotApplicable(String),
}

impl Verdict {
    /// `holds`, `fails`, `inconclusive`, `n/a`.
    pub(crate) fn word(&self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::Fails => "fails",
            Verdict::Inconclusive(_) => "inconclusive",
            Verdict::NotApplicable(_) => "n/a",
        }
    }

    /// Why, for `inconclusive` and `n/a`.
    pub(crate) fn reason(&self) -> &str {
        match self {
            Verdict::Inconclusive(r) | Verdict::NotApplicable(r) => r,
            _ => "",
        }
    }

    /// A case's verdict from its outcome: a point the run did not measure makes it `n/a`.
    fn of_case(outcome: &Outcome) -> Verdict {
        match outcome {
            Outcome::Holds => Verdict::Holds,
            Outcome::Fails => Verdict::Fails,
            Outcome::Inconclusive(why) => Verdict::Inconclusive(why.clone()),
            Outcome::NotMeasured(why) => Verdict::NotApplicable(why.clone()),
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Holds | Verdict::Fails => f.write_str(self.word()),
            v => write!(f, "{} ({})", v.word(), v.reason()),
        }
    }
}

/// What a run is, for the verdicts: its points, this machine's cores and the input size.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Run<'a> {
    /// Every point of the run.
    pub summaries: &'a Summaries,
    /// The machine's physical cores: a time claim at a larger P cannot be decided here, and
    /// a count or memory point with more workers is oversubscribed (a claim whose points one
    /// machine of a run merged across machines measured: that machine's cores).
    pub cores: usize,
    /// The run's input size.
    pub size: Size,
}

/// One case of a claim judged: its label, our value, and its own verdict.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CaseVerdict {
    /// The case's label (`fib`, `d=64 abp/steals=1`); empty for a claim of one case.
    pub label: String,
    /// Our value, with its spread.
    pub ours: String,
    /// The case's verdict by its check alone (no gate): `n/a` when the run did not measure
    /// a point it reads.
    pub verdict: Verdict,
    /// The largest P of its points measured with more workers than the machine's cores (a
    /// simulated point runs none), if any.
    pub oversubscribed: Option<usize>,
}

impl CaseVerdict {
    /// `label ours → verdict`, the reason of an undecided case in brackets.
    pub(crate) fn text(&self) -> String {
        let head = if self.label.is_empty() {
            self.ours.clone()
        } else {
            format!("{} {}", self.label, self.ours)
        };
        format!("{head} → {}", self.verdict)
    }
}

/// A claim judged on a run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Judgement {
    /// `FIGURE/ID`.
    pub id: String,
    /// The claim.
    pub claim: Claim,
    /// Our values, case by case, with their spread.
    pub ours: String,
    /// Each case with its own verdict.
    pub cases: Vec<CaseVerdict>,
    /// The verdict: a gate's, when the run cannot decide the claim (a stand-in, a P beyond
    /// the cores for a time, a size, too few rounds), else the worst of its cases'.
    pub verdict: Verdict,
    /// For a gated claim, the verdict its cases would give without the gate, when they
    /// decide it (`holds` or `fails`).
    pub would: Option<Verdict>,
    /// The largest P beyond this machine's cores on which the verdict (or `would`) was
    /// decided, oversubscribed.
    pub oversubscribed: Option<usize>,
    /// This machine's cores, for the oversubscription note.
    pub cores: usize,
    /// A caveat beside the verdict (a suspect T_s).
    pub caveat: Option<String>,
    /// What a reader should know about the build that made the run (a dirty build, a build
    /// other than the one rendering it): set by the caller that knows both builds.
    pub build: Option<String>,
}

impl Judgement {
    /// The notes beside the verdict word, in order: the reason of `inconclusive` or `n/a`,
    /// what a gated claim's data would give, the cause of a failure, the oversubscription it
    /// was decided on, the caveat, the build.
    pub(crate) fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if !self.verdict.reason().is_empty() {
            notes.push(self.verdict.reason().to_string());
        }
        let cause = || match self.claim.cause {
            Some(c) => format!("cause: {c}"),
            None => "cause unknown".to_string(),
        };
        match &self.would {
            Some(Verdict::Fails) => {
                let failing: Vec<&str> = self
                    .cases
                    .iter()
                    .filter(|c| c.verdict == Verdict::Fails && !c.label.is_empty())
                    .map(|c| c.label.as_str())
                    .collect();
                if failing.is_empty() {
                    notes.push("would fail".to_string());
                } else {
                    notes.push(format!("would fail: {}", failing.join(", ")));
                }
                notes.push(cause());
            }
            // `would` is only ever `holds` or `fails`.
            Some(_) => notes.push("would hold".to_string()),
            None => {}
        }
        if self.verdict == Verdict::Fails {
            notes.push(cause());
        }
        if let Some(p) = self.oversubscribed {
            notes.push(format!("oversubscribed: P = {p} on {} cores", self.cores));
        }
        if let Some(c) = &self.caveat {
            notes.push(c.clone());
        }
        if let Some(b) = &self.build {
            notes.push(b.clone());
        }
        notes
    }

    /// The verdict with its notes: `holds`, `fails (cause unknown)`, `inconclusive (this run's
    /// size is quick; ...; would fail: fib; cause unknown)`.
    pub(crate) fn verdict_text(&self) -> String {
        self.with_notes(self.verdict.word().to_string())
    }

    /// [`Judgement::verdict_text`] with the verdict's word in bold, for Markdown.
    pub(crate) fn verdict_markdown(&self) -> String {
        self.with_notes(format!("**{}**", self.verdict.word()))
    }

    /// `word` and the notes in brackets, if any.
    fn with_notes(&self, word: String) -> String {
        let notes = self.notes();
        if notes.is_empty() {
            word
        } else {
            format!("{word} ({})", notes.join("; "))
        }
    }

    /// Each case with its verdict, `; `-separated.
    pub(crate) fn cases_text(&self) -> String {
        self.cases
            .iter()
            .map(CaseVerdict::text)
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// A figure's claims under its id: what the verdicts and the listings read of a figure
/// (`Figure::claimed`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Claimed<'a> {
    /// The figure's id (`prows-fig3`).
    pub id: &'a str,
    /// Its claims.
    pub claims: &'a [Claim],
}

/// The verdicts of `fig`'s claims on `run`.
pub(crate) fn judge(fig: Claimed<'_>, run: &Run<'_>) -> Vec<Judgement> {
    fig.claims
        .iter()
        .map(|c| judge_one(fig.id, c, run))
        .collect()
}

/// The verdict of a claim from its cases': the worst ([`check::worst`]), an undecided case's
/// reason naming the case.
fn worst_of(cases: &[CaseVerdict]) -> Verdict {
    let outcomes = cases.iter().map(|c| match &c.verdict {
        Verdict::Holds => Outcome::Holds,
        Verdict::Fails => Outcome::Fails,
        Verdict::Inconclusive(why) if !c.label.is_empty() => {
            Outcome::Inconclusive(format!("{}: {why}", c.label))
        }
        Verdict::Inconclusive(why) => Outcome::Inconclusive(why.clone()),
        Verdict::NotApplicable(why) => Outcome::NotMeasured(why.clone()),
    });
    Verdict::of_case(&check::worst(outcomes.collect()))
}

fn judge_one(figure: &str, claim: &Claim, run: &Run<'_>) -> Judgement {
    // A claim whose points one machine of a run merged across machines measured is judged on
    // that machine's cores.
    let run = &match machines_of(claim, run)[..] {
        [m] => Run {
            cores: m.cores,
            ..*run
        },
        _ => *run,
    };
    let results = claim.check.run(run.summaries);
    let ours = results
        .iter()
        .map(|r| {
            if r.label.is_empty() {
                r.ours.clone()
            } else {
                format!("{} {}", r.label, r.ours)
            }
        })
        .collect::<Vec<_>>()
        .join("; ");
    let cases: Vec<CaseVerdict> = results
        .into_iter()
        .map(|r| {
            let oversubscribed = r
                .points
                .iter()
                .filter(|(pt, _)| pt.p > cores_of(pt, run) && !simulated(pt))
                .map(|(pt, _)| pt.p)
                .max();
            let mut verdict = Verdict::of_case(&r.outcome);
            // A count or memory point with more workers than cores is measured here,
            // oversubscribed: say how.
            if let (Verdict::NotApplicable(why), Some(p)) = (&verdict, oversubscribed)
                && !r.points.iter().any(|(_, time)| *time)
            {
                verdict = Verdict::NotApplicable(format!(
                    "{why} (`--workers` with {p} measures it on this machine, oversubscribed)"
                ));
            }
            CaseVerdict {
                label: r.label,
                ours: r.ours,
                verdict,
                oversubscribed,
            }
        })
        .collect();
    let data = worst_of(&cases);
    let (verdict, would) = match gate(claim, run) {
        Some(g) => {
            let decided = matches!(data, Verdict::Holds | Verdict::Fails);
            (g, decided.then_some(data))
        }
        None => (data, None),
    };
    let decided = [Some(&verdict), would.as_ref()]
        .into_iter()
        .flatten()
        .any(|v| matches!(v, Verdict::Holds | Verdict::Fails));
    let oversubscribed = cases
        .iter()
        .filter_map(|c| c.oversubscribed)
        .max()
        .filter(|_| decided);
    let caveat = claim
        .check
        .quantities()
        .iter()
        .flat_map(|q| q.ts_workloads())
        .find_map(|w| suspect_ts(run.summaries, &w));
    Judgement {
        id: format!("{figure}/{}", claim.id),
        claim: claim.clone(),
        ours,
        cases,
        verdict,
        would,
        oversubscribed,
        cores: run.cores,
        caveat,
        build: None,
    }
}

/// Why T_s of `workload` is suspect in `summaries`: a row of the same program (T_s's variant)
/// at P = 1 that beat it in every round, by more than 2 % (the `serial` elision included: the
/// kernel, with no trait in it, must be the fastest serial code). Another variant may beat it by
/// design (a latency-hiding version overlaps the waits that the serial elision sleeps through).
pub(crate) fn suspect_ts(
    summaries: &Summaries,
    workload: &crate::spec::WorkloadSpec,
) -> Option<String> {
    let ts = crate::results::ts_of(summaries, workload)?;
    let t = quantity::Samples::rounds(&ts.round_medians);
    summaries
        .iter()
        .filter(|s| {
            s.key.workload == *workload
                && s.key.variant == ts.key.variant
                && s.key.workers == 1
                && s.key != ts.key
                && s.key.runtime.sim.is_none()
                && s.status == crate::grid::Status::Ok
                && s.round_medians.len() >= 2
        })
        .filter_map(|s| {
            let r = t
                .combine(&quantity::Samples::rounds(&s.round_medians), |a, b| a / b)
                .estimate()?;
            (r.lo > 1.02).then_some((r, s))
        })
        .max_by(|a, b| a.0.value.total_cmp(&b.0.value))
        .map(|(r, s)| {
            format!(
                "T_s suspect: {} {}-{} at P = 1 beat it in every round (T_s/T_1 {r})",
                s.key.runtime, s.key.workload, s.key.variant
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::Figure;
    use crate::results::Machine;
    use crate::results::PointSummary;
    use crate::testutil::ok_point;
    use stealbench_workloads::Variant;

    /// A point of fib on `rt` at P, one sample per round.
    fn rounds(rt: &str, p: usize, medians: &[f64]) -> PointSummary {
        let mut s = ok_point(rt, Variant::Fj, p, medians[medians.len() / 2]);
        s.round_medians = medians.to_vec();
        s
    }

    fn figure(claim: Claim) -> Figure {
        Figure {
            claims: vec![claim],
            ..crate::figures::prows_fig3::figure()
        }
    }

    fn ratio_claim(tolerance: f64) -> Claim {
        Claim::new(
            "fib-ratio",
            "fibril is as fast as abp",
            "1.0",
            Check::Within {
                cases: vec![case(
                    "fib",
                    time("abp", "fib", Variant::Fj, 1).over(time("fibril", "fib", Variant::Fj, 1)),
                )],
                band: Band::around(1.0, tolerance),
                unit: "x",
            },
        )
    }

    fn verdict(claim: Claim, points: Vec<PointSummary>) -> Verdict {
        let run = Run {
            summaries: &crate::results::Summaries::from(points.to_vec()),
            cores: 2,
            size: Size::Quick,
        };
        judge(figure(claim).claimed(), &run).remove(0).verdict
    }

    #[test]
    fn a_ratio_inside_the_band_holds() {
        let pts = vec![
            rounds("abp", 1, &[1.0, 1.1, 0.9]),
            rounds("fibril", 1, &[1.0, 1.09, 0.91]),
        ];
        assert_eq!(verdict(ratio_claim(0.05), pts), Verdict::Holds);
    }

    #[test]
    fn a_claim_is_judged_on_the_machine_of_its_points_and_not_across_machines() {
        let pts = vec![
            rounds("abp", 1, &[1.0, 1.1, 0.9]),
            rounds("fibril", 1, &[1.0, 1.09, 0.91]),
        ];
        let small = crate::results::this_machine();
        let big = Machine {
            cpu_model: "Big".into(),
            cores: 64,
            logical_cpus: 128,
            ..small.clone()
        };
        let on = |abp: &Machine, fibril: &Machine| {
            let mut meta = crate::results::Meta::sample("prows-fig3", 1);
            meta.machines = [(abp, &pts[0]), (fibril, &pts[1])]
                .into_iter()
                .map(|(m, p)| crate::results::Measured {
                    machine: m.clone(),
                    points: vec![p.key.to_string()],
                })
                .collect();
            let summaries = Summaries::from(pts.clone()).measured_on(&meta);
            let run = Run {
                summaries: &summaries,
                cores: 2,
                size: Size::Quick,
            };
            judge(figure(ratio_claim(0.05)).claimed(), &run).remove(0)
        };
        // Both points of one machine: judged, on its cores.
        let j = on(&big, &big);
        assert_eq!(j.verdict, Verdict::Holds);
        assert_eq!(j.cores, 64);
        // One point of each: not judged, and says why; what it would be is kept.
        let j = on(&big, &small);
        assert!(
            j.verdict
                .reason()
                .starts_with("its points come from 2 machines: Big (128 logical CPUs), "),
            "{}",
            j.verdict
        );
        assert_eq!(j.would, Some(Verdict::Holds));
    }

    #[test]
    fn a_ratio_outside_the_band_fails() {
        let pts = vec![
            rounds("abp", 1, &[2.0, 2.2, 1.8]),
            rounds("fibril", 1, &[1.0, 1.1, 0.9]),
        ];
        assert_eq!(verdict(ratio_claim(0.05), pts), Verdict::Fails);
    }

    #[test]
    fn a_spread_across_the_edge_is_inconclusive() {
        // The median ratio (1.02) is inside the 5 % band; round 2's 1.10 is outside it.
        let pts = vec![
            rounds("abp", 1, &[1.02, 1.10, 1.0]),
            rounds("fibril", 1, &[1.0, 1.0, 1.0]),
        ];
        match verdict(ratio_claim(0.05), pts) {
            Verdict::Inconclusive(why) => assert!(why.contains("crosses"), "{why}"),
            v => panic!("{v:?}"),
        }
    }

    #[test]
    fn one_round_or_too_large_a_p_cannot_decide_a_time_claim() {
        let pts = vec![rounds("abp", 1, &[1.0]), rounds("fibril", 1, &[1.0])];
        match verdict(ratio_claim(0.05), pts) {
            Verdict::Inconclusive(why) => assert!(why.contains("1 round(s)"), "{why}"),
            v => panic!("{v:?}"),
        }
        let at16 = Claim::new(
            "p16",
            "scales",
            "16x",
            Check::Within {
                cases: vec![case(
                    "",
                    ts("fib").over(time("abp", "fib", Variant::Fj, 16)),
                )],
                band: Band::at_least(8.0),
                unit: "x",
            },
        );
        match verdict(at16, Vec::new()) {
            Verdict::Inconclusive(why) => assert!(why.contains("P = 16"), "{why}"),
            v => panic!("{v:?}"),
        }
    }

    #[test]
    fn a_stand_in_or_a_missing_row_is_not_applicable() {
        let pts = vec![rounds("abp", 1, &[1.0, 1.0, 1.0])];
        assert!(matches!(
            verdict(ratio_claim(0.05).stand_in("Cilk Plus is abp"), pts.clone()),
            Verdict::NotApplicable(_)
        ));
        match verdict(ratio_claim(0.05), pts) {
            Verdict::NotApplicable(why) => assert!(why.contains("fibril fib-fj P=1"), "{why}"),
            v => panic!("{v:?}"),
        }
    }

    #[test]
    fn an_exact_formula_and_an_order_on_counts() {
        let mut abp = ok_point("abp", Variant::Fj, 2, 1.0);
        abp.counters = vec![("deviations".into(), vec![34, 34, 34])];
        let mut prows = ok_point("prows", Variant::Fj, 2, 1.0);
        prows.counters = vec![("deviations".into(), vec![2, 2, 3])];
        let exact = |rt: &'static str, want: f64| {
            Claim::new(
                "exact",
                "2 + 2d",
                "2 + 2d",
                Check::Exact {
                    formula: "2 + 2d",
                    cases: vec![(
                        case("d=16", counter(rt, "fib", Variant::Fj, 2, "deviations")),
                        want,
                    )],
                },
            )
        };
        let pts = vec![abp, prows];
        assert_eq!(verdict(exact("abp", 34.0), pts.clone()), Verdict::Holds);
        assert_eq!(verdict(exact("prows", 2.0), pts.clone()), Verdict::Fails);
        let order = Claim::new(
            "order",
            "fj < gf",
            "prows < abp",
            Check::Order {
                cases: vec![(
                    "fib".into(),
                    vec![
                        counter("prows", "fib", Variant::Fj, 2, "deviations"),
                        counter("abp", "fib", Variant::Fj, 2, "deviations"),
                    ],
                )],
                band: Band::at_least(1.0),
            },
        );
        assert_eq!(verdict(order, pts.clone()), Verdict::Holds);
        let small = exact("abp", 34.0).at_least_size(Size::Paper, "counts grow with the input");
        assert!(matches!(verdict(small, pts), Verdict::Inconclusive(_)));
    }

    #[test]
    fn a_row_faster_than_serial_in_every_round_makes_ts_suspect() {
        let pts = [
            rounds("serial/front=kernel", 1, &[1.0, 1.0, 1.0]),
            rounds("abp", 1, &[0.9, 0.92, 0.91]),
            rounds("fibril", 1, &[0.9, 1.1, 1.0]),
        ];
        let why = suspect_ts(
            &crate::results::Summaries::from(pts.to_vec()),
            &"fib".into(),
        )
        .unwrap();
        assert!(why.contains("abp fib-fj"), "{why}");
        // The trait's elision beating the kernel makes it suspect too.
        let elision = rounds("serial", 1, &[0.95, 0.96, 0.94]);
        let why = suspect_ts(
            &crate::results::Summaries::from([pts[0].clone(), elision].to_vec()),
            &"fib".into(),
        )
        .unwrap();
        assert!(why.contains("serial fib-fj"), "{why}");
        // Another program (sf) beating the kernel, fj's elision, is no sign of a bad T_s.
        let mut sf = rounds("prows", 1, &[0.5, 0.5, 0.5]);
        sf.key.variant = Variant::Sf;
        assert_eq!(
            suspect_ts(
                &crate::results::Summaries::from([pts[0].clone(), sf].to_vec()),
                &"fib".into()
            ),
            None
        );
        assert_eq!(
            suspect_ts(
                &crate::results::Summaries::from(pts[..1].to_vec()),
                &"fib".into()
            ),
            None
        );
    }

    /// A count claim over two cases at P: d=16 of `abp` (34 deviations) and of `prows` (2, 2,
    /// 3), each within `band`.
    pub(super) fn two_cases(p: usize, band: Band) -> (Claim, Vec<PointSummary>) {
        let mut abp = ok_point("abp", Variant::Fj, p, 1.0);
        abp.counters = vec![("deviations".into(), vec![34, 34, 34])];
        let mut prows = ok_point("prows", Variant::Fj, p, 1.0);
        prows.counters = vec![("deviations".into(), vec![2, 2, 3])];
        let claim = Claim::new(
            "few",
            "few deviations",
            "at most 10",
            Check::Within {
                cases: ["abp", "prows"]
                    .map(|rt| case(rt, counter(rt, "fib", Variant::Fj, p, "deviations")))
                    .to_vec(),
                band,
                unit: "",
            },
        );
        (claim, vec![abp, prows])
    }

    pub(super) fn judged(claim: Claim, points: Vec<PointSummary>, size: Size) -> Judgement {
        let run = Run {
            summaries: &crate::results::Summaries::from(points),
            cores: 2,
            size,
        };
        judge(figure(claim).claimed(), &run).remove(0)
    }

    #[test]
    fn each_case_has_its_verdict_and_the_claim_the_worst() {
        let (claim, pts) = two_cases(2, Band::at_most(10.0));
        let j = judged(claim.clone(), pts.clone(), Size::Quick);
        let words: Vec<&str> = j.cases.iter().map(|c| c.verdict.word()).collect();
        assert_eq!(words, ["fails", "holds"]);
        assert_eq!(j.verdict, Verdict::Fails);
        assert_eq!(j.verdict_text(), "fails (cause unknown)");
        assert!(
            j.cases_text()
                .starts_with("abp 34 → fails; prows 2 [2–3] → holds")
        );
        let known = judged(claim.cause("the forced schedule"), pts.clone(), Size::Quick);
        assert_eq!(known.verdict_text(), "fails (cause: the forced schedule)");
        // A case the run did not measure is n/a; one measured decides before it.
        let (wide, _) = two_cases(2, Band::at_least(1.0));
        let j = judged(wide.clone(), pts[1..].to_vec(), Size::Quick);
        assert_eq!(j.cases[0].verdict.word(), "n/a");
        assert!(matches!(j.verdict, Verdict::NotApplicable(_)));
        assert_eq!(judged(wide, pts, Size::Quick).verdict, Verdict::Holds);
    }

    #[test]
    fn a_gated_claim_says_what_its_data_would_give() {
        let (claim, pts) = two_cases(2, Band::at_most(10.0));
        let gated = claim.at_least_size(Size::Paper, "counts grow with the input");
        let j = judged(gated.clone(), pts.clone(), Size::Quick);
        assert!(matches!(j.verdict, Verdict::Inconclusive(_)));
        assert_eq!(j.would, Some(Verdict::Fails));
        let text = j.verdict_text();
        assert!(
            text.contains("size is quick") && text.ends_with("; would fail: abp; cause unknown)"),
            "{text}"
        );
        let (holding, _) = two_cases(2, Band::at_least(1.0));
        let j = judged(
            holding.at_least_size(Size::Paper, "big"),
            pts.clone(),
            Size::Quick,
        );
        assert!(
            j.verdict_text().ends_with("; would hold)"),
            "{}",
            j.verdict_text()
        );
        // At the size the gate opens, the data decide.
        assert_eq!(judged(gated, pts, Size::Paper).verdict, Verdict::Fails);
    }

    #[test]
    fn the_cores_gate_is_for_times_and_counts_beyond_the_cores_say_so() {
        // A count at P = 16 on 2 cores is decided, oversubscribed, and says so.
        let (claim, pts) = two_cases(16, Band::at_least(1.0));
        let j = judged(claim.clone(), pts.clone(), Size::Quick);
        assert_eq!(j.verdict, Verdict::Holds);
        assert_eq!(
            j.verdict_text(),
            "holds (oversubscribed: P = 16 on 2 cores)"
        );
        // Not measured: n/a, with the P that measures it here.
        let j = judged(claim, Vec::new(), Size::Quick);
        match &j.verdict {
            Verdict::NotApplicable(why) => assert!(why.contains("`--workers` with 16"), "{why}"),
            v => panic!("{v:?}"),
        }
        // At P = 2 nothing is oversubscribed.
        let (at2, pts2) = two_cases(2, Band::at_least(1.0));
        assert_eq!(judged(at2, pts2, Size::Quick).oversubscribed, None);
    }

    #[test]
    fn a_count_or_memory_figure_runs_the_p_of_its_claims_by_default() {
        for entry in crate::figures::FIGURES {
            let f = (entry.build)();
            if f.metric.needs_cores() {
                continue;
            }
            let workers = crate::plan::default_workers(&f);
            for c in &f.claims {
                for (pt, _) in c.points() {
                    assert!(workers.contains(&pt.p), "{}/{}: P = {}", f.id, c.id, pt.p);
                }
            }
        }
        let fig7 = crate::figures::libfork_fig7::figure();
        assert!(crate::plan::default_workers(&fig7).contains(&112));
    }
}
