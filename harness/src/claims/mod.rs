//! The papers' claims and the verdicts a run gives them.
//!
//! Every figure module declares the claims it exists to test ([`Claim`]: an id, the paper's
//! words, the paper's number or formula, and a [`Check`] of the measured points against a
//! band), and [`judge`] gives each a [`Verdict`] on one run:
//!
//! - `n/a (why)` when the claim compares with a system stealbench only stands in for (Cilk
//!   Plus is `abp`), one it does not have (taskflow) or one this build lacks (`tbb`,
//!   `openmp` without their features), or when a point it reads was not measured in this run
//!   (but a claim at a P beyond this machine's cores is inconclusive: a larger machine
//!   decides it);
//! - `inconclusive (why)` when the run cannot decide it: a time claim at a P beyond this
//!   machine's cores, a time point with fewer than [`MIN_TIME_ROUNDS`] rounds (one process
//!   per round: a VM's times move between processes, so one round reads noise as a result), a
//!   count or memory claim at an input below the size where the paper's effect shows, a point
//!   that did not finish, or a spread that crosses the band's edge;
//! - else `holds` or `fails`, by the check.
//!
//! A time is the median over the rounds of each round's median, its spread the smallest and
//! largest round (`quantity.rs`); a check decides on the whole spread (`check.rs`). A claim
//! that rests on T_s says so when a row of the same program at P = 1 beat T_s in every round:
//! T_s, the kernel with no runtime and no trait in it, must be the fastest serial code, and a
//! row faster than it in every process (the `serial` elision's included) makes it suspect.

pub(crate) mod check;
pub(crate) mod quantity;

pub(crate) use check::{Band, Case, Check, Growth, Outcome, case};
pub(crate) use quantity::{Q, counter, peak_rss, time, ts};

use crate::figures::Figure;
use crate::results::Summaries;
use std::fmt;
use std::io;
use std::path::Path;
use stealbench_workloads::Size;

/// The rounds a time point needs for a claim to be judged on it.
pub(crate) const MIN_TIME_ROUNDS: usize = 3;

/// A claim of a paper that a figure tests.
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
}

impl Claim {
    /// A claim with its check, on every size, with no stand-in.
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

    /// The largest P among the points it reads.
    pub(crate) fn max_p(&self) -> usize {
        self.points().iter().map(|(p, _)| p.p).max().unwrap_or(1)
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

/// A claim's verdict on one run.
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
    /// The machine's physical cores.
    pub cores: usize,
    /// The run's input size.
    pub size: Size,
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
    /// The verdict.
    pub verdict: Verdict,
    /// A caveat beside the verdict (a suspect T_s).
    pub caveat: Option<String>,
}

/// The verdicts of `fig`'s claims on `run`.
pub(crate) fn judge(fig: &Figure, run: &Run<'_>) -> Vec<Judgement> {
    fig.claims
        .iter()
        .map(|c| judge_one(fig.id, c, run))
        .collect()
}

/// The rank of a size: test < quick < small < paper.
fn rank(s: Size) -> u8 {
    match s {
        Size::Test => 0,
        Size::Quick => 1,
        Size::Small => 2,
        Size::Paper => 3,
    }
}

fn judge_one(figure: &str, claim: &Claim, run: &Run<'_>) -> Judgement {
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
    let verdict = gate(claim, run).unwrap_or_else(|| {
        // The reason names the case it comes from. A case the run did measure decides
        // before one it did not: fails, then an undecided case, then a point not measured
        // (n/a; inconclusive at a P beyond this machine's cores).
        let outcomes: Vec<Outcome> = results
            .into_iter()
            .map(|r| match r.outcome {
                Outcome::Inconclusive(why) if !r.label.is_empty() => {
                    Outcome::Inconclusive(format!("{}: {why}", r.label))
                }
                o => o,
            })
            .collect();
        let unmeasured = |o: &Outcome| {
            matches!(o, Outcome::Inconclusive(why) if why.contains("not measured in this run"))
        };
        let (missing, measured): (Vec<Outcome>, Vec<Outcome>) =
            outcomes.into_iter().partition(unmeasured);
        match check::worst(measured) {
            Outcome::Holds if !missing.is_empty() => {
                let Outcome::Inconclusive(why) = missing[0].clone() else {
                    unreachable!("partitioned on Inconclusive")
                };
                // A point at a P beyond this machine's cores, which a figure of times does not
                // measure by default: a larger machine decides it.
                if claim.max_p() > run.cores {
                    Verdict::Inconclusive(format!(
                        "the claim is at P = {}, not measured on this machine's {} cores ({why})",
                        claim.max_p(),
                        run.cores
                    ))
                } else {
                    Verdict::NotApplicable(why)
                }
            }
            Outcome::Holds => Verdict::Holds,
            Outcome::Fails => Verdict::Fails,
            Outcome::Inconclusive(why) => Verdict::Inconclusive(why),
        }
    });
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
        verdict,
        caveat,
    }
}

/// The verdict a claim gets before its check decides, if the run cannot decide it.
fn gate(claim: &Claim, run: &Run<'_>) -> Option<Verdict> {
    if let Some(why) = claim.stand_in {
        return Some(Verdict::NotApplicable(why.to_string()));
    }
    // A point of a runtime this build lacks, of which the run holds nothing (a run made by a
    // build with it is judged on its data whatever build reads it).
    let missing = claim.points().into_iter().find_map(|(pt, _)| {
        let arm = crate::runtimes::Arm::parse(pt.runtime).ok()?;
        let why = arm.info.not_built()?;
        let measured = run.summaries.iter().any(|s| s.key.runtime == arm);
        (!measured).then(|| format!("{} is {why}", arm.info.name))
    });
    if let Some(why) = missing {
        return Some(Verdict::NotApplicable(why));
    }
    let max_p = claim.max_p();
    if claim.reads_time() && max_p > run.cores {
        return Some(Verdict::Inconclusive(format!(
            "a time claim at P = {max_p}; this machine has {} cores",
            run.cores
        )));
    }
    if let Some((size, why)) = claim.min_size
        && rank(run.size) < rank(size)
    {
        return Some(Verdict::Inconclusive(format!(
            "this run's size is {}; the effect shows from size {} on: {why}",
            run.size, size
        )));
    }
    for q in claim.check.quantities().iter().flat_map(|q| q.times()) {
        let rounds = q.samples(run.summaries).ok().map(|s| s.values.len());
        if let Some(n) = rounds.filter(|&n| n < MIN_TIME_ROUNDS) {
            return Some(Verdict::Inconclusive(format!(
                "{q}: {n} round(s); a time claim needs {MIN_TIME_ROUNDS} (--rounds \
                 {MIN_TIME_ROUNDS}): times move between processes"
            )));
        }
    }
    None
}

/// Why T_s of `workload` is suspect in `summaries`: a row of the same program (T_s's variant)
/// at P = 1 that beat it in every round, by more than 2 % (the `serial` elision included: the
/// kernel, with no trait in it, must be the fastest serial code). Another variant may beat it by
/// design (a latency-hiding version overlaps the waits that the serial elision sleeps through).
pub(crate) fn suspect_ts(summaries: &Summaries, workload: &str) -> Option<String> {
    let ts = crate::results::ts_of(summaries, workload)?;
    let t = quantity::Samples::rounds(&ts.round_medians);
    summaries
        .iter()
        .filter(|s| {
            s.key.workload == workload
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

/// One line per verdict, for the terminal.
pub(crate) fn text(judgements: &[Judgement]) -> String {
    let mut out = String::new();
    for j in judgements {
        out.push_str(&format!("claim {}: {}\n", j.id, j.verdict));
        out.push_str(&format!(
            "  ours {} | band {} | paper {}\n",
            j.ours,
            j.claim.check.band(),
            j.claim.paper
        ));
        if let Some(c) = &j.caveat {
            out.push_str(&format!("  {c}\n"));
        }
    }
    out
}

/// The verdicts in a line: `3 hold, 1 fails, 2 inconclusive, 1 n/a`.
pub(crate) fn tally(judgements: &[Judgement]) -> String {
    let count = |w: &str| judgements.iter().filter(|j| j.verdict.word() == w).count();
    format!(
        "{} holds, {} fails, {} inconclusive, {} n/a",
        count("holds"),
        count("fails"),
        count("inconclusive"),
        count("n/a")
    )
}

/// Escapes `|` for a Markdown table cell.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The "Claims" section of a figure's Markdown page.
pub(crate) fn markdown(judgements: &[Judgement]) -> String {
    if judgements.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "## Claims\n\n{}. Each claim is checked on this run's points against its band: \
         `holds` when our whole spread (the smallest to the largest round for a time, \
         repetition for a count) lies inside it, `fails` when it lies outside, \
         `inconclusive` when it crosses the band's edge or the run cannot decide, `n/a` \
         when the paper's system is only stood in for here or not in this build, or the run \
         did not measure the claim's points. `stealbench claims` lists every check.\n\n",
        tally(judgements)
    );
    out.push_str("| claim | paper | check | ours | verdict |\n|---|---|---|---|---|\n");
    for j in judgements {
        let mut verdict = format!("**{}**", j.verdict.word());
        if !j.verdict.reason().is_empty() {
            verdict.push_str(&format!(" ({})", j.verdict.reason()));
        }
        if let Some(c) = &j.caveat {
            verdict.push_str(&format!("; {c}"));
        }
        out.push_str(&format!(
            "| `{}` | {} ({}) | {} | {} | {} |\n",
            j.id,
            cell(j.claim.quote),
            cell(&j.claim.paper),
            cell(&j.claim.check.band()),
            cell(&j.ours),
            cell(&verdict)
        ));
    }
    out.push('\n');
    out
}

/// The columns of `claims.csv`.
pub(crate) const CSV_HEADER: [&str; 8] = [
    "claim", "verdict", "reason", "caveat", "ours", "band", "paper", "quote",
];

/// Writes `claims.csv` whole ([`crate::files::replace_with`]): one row per claim of the run.
pub(crate) fn write_csv(path: &Path, judgements: &[Judgement]) -> io::Result<()> {
    crate::files::replace_with(path, |tmp| write_rows(tmp, judgements))
}

/// The rows of `claims.csv` into the fresh file `path`.
fn write_rows(path: &Path, judgements: &[Judgement]) -> io::Result<()> {
    let mut w = csv::Writer::from_path(path).map_err(io::Error::other)?;
    w.write_record(CSV_HEADER).map_err(io::Error::other)?;
    for j in judgements {
        w.write_record([
            j.id.as_str(),
            j.verdict.word(),
            j.verdict.reason(),
            j.caveat.as_deref().unwrap_or(""),
            j.ours.as_str(),
            &j.claim.check.band(),
            &j.claim.paper,
            j.claim.quote,
        ])
        .map_err(io::Error::other)?;
    }
    w.flush()
}

/// Every claim of `figures`, with its check and band, for `stealbench claims`.
pub(crate) fn listing(figures: &[Figure]) -> String {
    let mut out = String::new();
    let mut n = 0;
    for f in figures {
        out.push_str(&format!("{} ({} claims)\n", f.id, f.claims.len()));
        for c in &f.claims {
            n += 1;
            out.push_str(&format!("  {}/{}\n", f.id, c.id));
            out.push_str(&format!("    paper: \"{}\" ({})\n", c.quote, c.paper));
            out.push_str(&format!("    check: {}\n", c.check.describe()));
            out.push_str(&format!("    band:  {}\n", c.check.band()));
            if let Some(why) = c.stand_in {
                out.push_str(&format!("    n/a here: {why}\n"));
            }
            if let Some((size, why)) = c.min_size {
                out.push_str(&format!("    decides from size {size} on: {why}\n"));
            }
        }
    }
    out.push_str(&format!("\n{n} claims in {} figures\n", figures.len()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
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
        judge(&figure(claim), &run).remove(0).verdict
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
        let why = suspect_ts(&crate::results::Summaries::from(pts.to_vec()), "fib").unwrap();
        assert!(why.contains("abp fib-fj"), "{why}");
        // The trait's elision beating the kernel makes it suspect too.
        let elision = rounds("serial", 1, &[0.95, 0.96, 0.94]);
        let why = suspect_ts(
            &crate::results::Summaries::from([pts[0].clone(), elision].to_vec()),
            "fib",
        )
        .unwrap();
        assert!(why.contains("serial fib-fj"), "{why}");
        // Another program (sf) beating the kernel, fj's elision, is no sign of a bad T_s.
        let mut sf = rounds("prows", 1, &[0.5, 0.5, 0.5]);
        sf.key.variant = Variant::Sf;
        assert_eq!(
            suspect_ts(
                &crate::results::Summaries::from([pts[0].clone(), sf].to_vec()),
                "fib"
            ),
            None
        );
        assert_eq!(
            suspect_ts(&crate::results::Summaries::from(pts[..1].to_vec()), "fib"),
            None
        );
    }

    #[test]
    fn claims_csv_replaces_a_planted_link_and_never_writes_its_target() {
        let dir = tempfile::TempDir::with_prefix("stealbench-claims-csv-").unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let path = dir.path().join("claims.csv");
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        write_csv(&path, &[]).unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.trim_end(), CSV_HEADER.join(","));
    }
}
