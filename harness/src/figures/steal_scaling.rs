//! The steal path on many cores: a scaling table anyone can run. No paper: the rows are the
//! steal-heavy cases and fib, `uts/tree=T3` (fj), `lcs` and `sw` (sf) and `fib` (fj) on
//! the deque runtimes (`abp`, `fibril`, `prows`, `prows/placement=artifact`, `libfork` in both arms)
//! and `rayon`, measured at the default worker counts (1, 2, 4, 8, 16 up to this machine's
//! cores) or `--workers`'.
//!
//! Every cell is [`Relative`]'s, against `rayon` (median time, T_s / T_P and
//! T_P(rayon) / T_P(row)), with the heavy fences per successful steal of the point added to
//! its parentheses: the `heavy_fences` of all its repetitions over their `steals`, `n/a` where
//! the runtime counts neither (rayon). An oversubscribed point shows its time and fences per
//! steal, marked, and no speedup or ratio.
//!
//! `fib` runs at the size's n (`small`: 36, the steal path's fib case): a spec `fib/n=36`
//! would fix n at every size, `test` included.
//!
//! Its claims ([`claims`]) are ours, there being no paper (`Claim::ours`, out of the papers'
//! tally); the first, whose band was drawn from the runs it judges, is a regression check
//! (`Claim::regression`: a check that cannot fail by its effect is one, whoever states it). At
//! P = 2 every deque runtime makes
//! at most 2 heavy fences per successful steal: with few thieves a deque stays in asymmetric
//! mode, so each steal that finds work issues one `membarrier` and the sleep protocol adds
//! some (a run that steals a handful of times moves the ratio by a fence more or less); under
//! steal pressure a deque switches to symmetric fences and the ratio falls well below 1,
//! claimed at P = 16 (a count: decided at any P, measured only when `--workers` includes 16).
//! And at P = 2 `abp`, `fibril` and `prows` are no slower than `rayon` on fib and UTS T3. The
//! measured values the bands come from are in each claim's paper text.

use super::Figure;
use super::metric::{Context, Metric};
use super::ratio::{Relative, time_cell};
use crate::claims::{Band, Check, Claim, case, counter, time};
use crate::grid::{Row, Status};
use stealbench_workloads::Variant;

/// The figure's id.
pub(crate) const ID: &str = "steal-scaling";
/// The figure's title.
pub(crate) const TITLE: &str = "Steal path on many cores: time, speedup, ratio to rayon \
                         and heavy fences per steal against P";

/// The rows: per benchmark, its workload spec, its variant and its runtime arms.
pub(crate) const ROWS: [(&str, &str, Variant, &[&str]); 4] = [
    (
        "uts T3",
        "uts/tree=T3",
        Variant::Fj,
        &[
            "abp",
            "fibril",
            "prows",
            "prows/placement=artifact",
            "libfork",
            "libfork/idle=busy",
            "rayon",
        ],
    ),
    (
        "lcs",
        "lcs",
        Variant::Sf,
        &["prows", "prows/placement=artifact", "abp", "rayon"],
    ),
    ("sw", "sw", Variant::Sf, &["prows", "abp", "rayon"]),
    (
        "fib",
        "fib",
        Variant::Fj,
        &[
            "abp",
            "fibril",
            "prows",
            "libfork",
            "libfork/idle=busy",
            "rayon",
        ],
    ),
];

/// The counter of heavy fences (the deque runtimes' `heavy_fences`) and of successful steals.
const FENCES: &str = "heavy_fences";
const STEALS: &str = "steals";

/// [`Relative`] against `rayon`, and heavy fences per successful steal.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StealScaling {
    /// Time, T_s / T_P and T_P(rayon) / T_P(row).
    pub relative: Relative,
}

/// The metric of the figure.
pub(crate) const METRIC: StealScaling = StealScaling {
    relative: Relative {
        against: &["rayon"],
        paper_names: &[],
        reference: "",
        paper_columns: &[],
        paper_p: 0,
        ideal: true,
        y_label: "speedup Ts/TP",
    },
};

/// Heavy fences per successful steal at a point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum PerSteal {
    /// The runtime counts neither or one of them (`rayon`).
    NotCounted,
    /// No repetition stole (P = 1).
    NoSteal,
    /// The repetitions' heavy fences over their steals.
    Ratio(f64),
}

impl StealScaling {
    /// The heavy fences of the point's repetitions over their successful steals; `None` if the
    /// point did not finish ok.
    pub(crate) fn per_steal(&self, ctx: &Context<'_>, row: &Row, p: usize) -> Option<PerSteal> {
        let s = ctx.point(row, p).filter(|s| s.status == Status::Ok)?;
        let total = |stat| s.counter(stat).map(|xs| xs.iter().sum::<u64>());
        Some(match (total(FENCES), total(STEALS)) {
            (Some(_), Some(0)) => PerSteal::NoSteal,
            (Some(f), Some(n)) => PerSteal::Ratio(f as f64 / n as f64),
            _ => PerSteal::NotCounted,
        })
    }
}

impl std::fmt::Display for PerSteal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PerSteal::NotCounted => f.write_str("n/a fences/steal"),
            PerSteal::NoSteal => f.write_str("0 steals"),
            PerSteal::Ratio(x) => write!(f, "{x:.2} fences/steal"),
        }
    }
}

impl Metric for StealScaling {
    fn lead(&self, ctx: &Context<'_>, row: &Row) -> Vec<(String, String)> {
        self.relative.lead(ctx, row)
    }

    fn column(&self, p: usize) -> String {
        self.relative.column(p)
    }

    fn cell(&self, ctx: &Context<'_>, row: &Row, p: usize) -> String {
        let mut parts = self.relative.parts(ctx, row, p);
        parts.extend(self.per_steal(ctx, row, p).map(|x| x.to_string()));
        time_cell(ctx, row, p, parts)
    }

    /// No paper: no row has paper values.
    fn paper_cell(&self, _: &Row, _: usize) -> String {
        "[paper —]".to_string()
    }

    fn lines(&self) -> &'static [&'static str] {
        self.relative.lines()
    }

    fn plot(&self, ctx: &Context<'_>, row: &Row, p: usize, line: usize) -> Option<f64> {
        self.relative.plot(ctx, row, p, line)
    }

    fn plot_paper(&self, _: &Row, _: usize, _: usize) -> Option<f64> {
        None
    }

    fn y_label(&self) -> &'static str {
        self.relative.y_label()
    }

    fn ideal_line(&self) -> bool {
        self.relative.ideal_line()
    }

    fn describe(&self) -> String {
        format!(
            "{}; last, `{FENCES}` per successful steal: the sum over the point's repetitions \
             over the sum of their `{STEALS}` (`n/a`: the runtime does not count them, \
             `0 steals`: none to divide by), shown oversubscribed too",
            self.relative.describe()
        )
    }

    fn note_label(&self) -> &'static str {
        "Cells"
    }

    fn cell_legend(&self) -> &'static str {
        "Each cell: our median time in seconds (our speedup T_s / T_P; how many times faster \
         than `rayon` at the same P, T_P(rayon) / T_P(row); heavy fences per successful \
         steal). `—` = not measured, `n/a` = the runtime does not count it. No paper: there \
         are no values beside ours."
    }

    fn plot_name(&self) -> &'static str {
        self.relative.plot_name()
    }

    fn needs_cores(&self) -> bool {
        true
    }
}

/// The figure: its rows at P = 1, 2, 4, 8, 16 (up to the cores by default).
pub(crate) fn figure() -> Figure {
    let mut rows = Vec::new();
    for (bench, workload, variant, runtimes) in ROWS {
        for rt in runtimes {
            rows.push(Row::new(bench, workload, variant, *rt));
        }
    }
    Figure::new(
        ID,
        TITLE,
        "The steal path on many cores: how the deque runtimes scale, against \
         rayon, and what each successful steal costs in heavy fences (the \
         `membarrier`s that interrupt every core running the process, issued by \
         thieves of a deque in asymmetric fence mode, by owners switching back to \
         it and by workers going to sleep; on the fallback without `membarrier`, \
         the thieves' SeqCst fences). Rows: UTS T3 (`uts/tree=T3`, fj; the size \
         cuts it as for libfork's Figure 6) on `abp`, `fibril`, `prows`, \
         `prows/placement=artifact`, `libfork`, `libfork/idle=busy` and `rayon`; lcs (sf) on \
         `prows`, `prows/placement=artifact`, `abp` and `rayon`; sw (sf) on `prows`, `abp` \
         and `rayon`; fib (fj) on `abp`, `fibril`, `prows`, `libfork`, \
         `libfork/idle=busy` and `rayon`. fib runs at the size preset's n (n=36 at \
         `small`; 32 at `quick`, 42 at `paper`): a workload spec `fib/n=36` would \
         fix n at every size, `test` included. Workers: 1, 2, 4, 8, 16 up to this \
         machine's cores; on a many-core machine pass `--workers \
         1,2,4,8,16,32,64`. There are no paper values. `scripts/fence-modes.sh` \
         measures the same cases under the deque's three fence settings.",
        &[1, 2, 4, 8, 16],
        &METRIC,
        rows,
    )
    .with_claims(claims())
}

/// The runtimes that count heavy fences (every row's but `rayon`).
fn counted(runtime: &str) -> bool {
    runtime != "rayon"
}

/// The fences-per-steal claim at `p` over the rows of `benches` (every one if empty).
fn fences_per_steal(
    id: &'static str,
    quote: &'static str,
    paper: &str,
    benches: &[&str],
    p: usize,
    band: Band,
) -> Claim {
    let cases = ROWS
        .iter()
        .filter(|(bench, ..)| benches.is_empty() || benches.contains(bench))
        .flat_map(|&(bench, workload, variant, runtimes)| {
            runtimes.iter().filter(|rt| counted(rt)).map(move |&rt| {
                case(
                    format!("{bench} {rt}"),
                    counter(rt, workload, variant, p, FENCES)
                        .over(counter(rt, workload, variant, p, STEALS)),
                )
            })
        })
        .collect();
    Claim::new(
        id,
        quote,
        paper.to_string(),
        Check::Within {
            cases,
            band,
            unit: "fences/steal",
        },
    )
}

/// Our claims (no paper; see the module documentation).
pub(crate) fn claims() -> Vec<Claim> {
    let faster = ROWS
        .iter()
        .filter(|(bench, ..)| ["fib", "uts T3"].contains(bench))
        .flat_map(|&(bench, workload, variant, _)| {
            ["abp", "fibril", "prows"].map(|rt| {
                case(
                    format!("{bench} {rt}"),
                    time("rayon", workload, variant, 2).over(time(rt, workload, variant, 2)),
                )
            })
        })
        .collect();
    vec![
        fences_per_steal(
            "fences-per-steal",
            "ours: a steal costs about one heavy fence while its deque stays asymmetric",
            "at most 2 per steal at P = 2 (one membarrier per steal that finds work, plus the \
             sleep protocol's; quick: 1.0 on UTS T3, 0.003 on lcs and sw, 0.6 to 2 on fib)",
            &[],
            2,
            Band::at_most(2.0),
        )
        .regression(
            "its band was drawn from the same runs it judges (quick: 0.003 to 2); a claim of \
             ours and a check that cannot fail by its effect, it is a regression check",
        ),
        fences_per_steal(
            "fences-well-below-1",
            "ours: a deque under steal pressure switches to symmetric fences",
            "0.02 to 0.05 per steal on UTS T3 at P = 16 (steal-path.md); here at most 0.25",
            &["uts T3"],
            16,
            Band::at_most(0.25),
        )
        .ours(),
        Claim::new(
            "no-slower-than-rayon",
            "ours: the deque runtimes are no slower than rayon",
            "T_2(rayon) / T_2(row) at least 1 (quick: 1.2 to 1.3 on UTS T3, 2.1 to 2.8 on fib)",
            Check::Within {
                cases: faster,
                band: Band::at_least(1.0),
                unit: "x",
            },
        )
        .ours(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::{Availability, Selection, availability};
    use crate::testutil::{fib_row, ok_point};

    #[test]
    fn registered_with_its_rows() {
        let entry = super::super::find(ID).expect("steal-scaling is registered");
        let f = (entry.build)();
        assert_eq!((f.id, entry.title), (ID, TITLE));
        let rows: Vec<String> = f
            .rows
            .iter()
            .map(|r| format!("{} {} {}", r.workload, r.variant, r.runtime))
            .collect();
        assert_eq!(
            rows,
            [
                "uts/tree=T3 fj abp",
                "uts/tree=T3 fj fibril",
                "uts/tree=T3 fj prows",
                "uts/tree=T3 fj prows/placement=artifact",
                "uts/tree=T3 fj libfork",
                "uts/tree=T3 fj libfork/idle=busy",
                "uts/tree=T3 fj rayon",
                "lcs sf prows",
                "lcs sf prows/placement=artifact",
                "lcs sf abp",
                "lcs sf rayon",
                "sw sf prows",
                "sw sf abp",
                "sw sf rayon",
                "fib fj abp",
                "fib fj fibril",
                "fib fj prows",
                "fib fj libfork",
                "fib fj libfork/idle=busy",
                "fib fj rayon",
            ]
        );
        // Every row is measured: the runtimes, workloads and variants exist and go together.
        for r in &f.rows {
            assert_eq!(
                availability(r, &Selection::default()),
                Availability::Ready,
                "{r:?}"
            );
            assert!(r.paper.is_none());
        }
        assert!(f.reference_path.is_empty());
        let cores = stealbench_schedulers::topology::Topology::detect().cores();
        let w = crate::plan::default_workers(&f);
        assert!(w.iter().all(|&p| p <= cores.max(1)), "{w:?}");
    }

    #[test]
    fn cells_add_fences_per_steal_to_the_ratio_against_rayon() {
        let counted = |rt: &str, p, t, fences: Vec<u64>, steals: Vec<u64>| {
            let mut s = ok_point(rt, Variant::Fj, p, t);
            s.counters = vec![("steals".into(), steals), ("heavy_fences".into(), fences)];
            s
        };
        let mut rayon = ok_point("rayon", Variant::Fj, 2, 1.0);
        rayon.counters = vec![("steals".into(), Vec::new())];
        let s = [ok_point("serial/front=kernel", Variant::Fj, 1, 1.0),
            counted("abp", 1, 1.0, vec![0, 0], vec![0, 0]),
            counted("abp", 2, 0.5, vec![30, 10], vec![10, 10]),
            counted("abp", 4, 0.4, vec![8, 8], vec![4, 4]),
            rayon];
        let ctx = Context {
            summaries: &crate::results::Summaries::from(s.to_vec()),
            cpus: 2,
        };
        let abp = fib_row("abp");
        assert_eq!(METRIC.cell(&ctx, &abp, 1), "1.000 (1.00x; 0 steals)");
        assert_eq!(
            METRIC.cell(&ctx, &abp, 2),
            "0.5000 (2.00x; 2.00x vs rayon; 2.00 fences/steal)"
        );
        // rayon counts no fences: n/a, never 0; no ratio against itself.
        assert_eq!(
            METRIC.cell(&ctx, &fib_row("rayon"), 2),
            "1.000 (1.00x; n/a fences/steal)"
        );
        // P = 4 > 2 CPUs: marked, no speedup or ratio; the fences per steal stay.
        assert_eq!(
            METRIC.cell(&ctx, &abp, 4),
            "0.4000 (2.00 fences/steal) (oversubscribed)"
        );
        assert_eq!(METRIC.plot(&ctx, &abp, 4, 0), None);
        assert_eq!(METRIC.plot(&ctx, &abp, 2, 0), Some(2.0));
        assert_eq!(METRIC.cell(&ctx, &abp, 8), "—");
        assert!(METRIC.needs_cores() && METRIC.ideal_line());
    }

    #[test]
    fn claims_count_fences_on_every_deque_row_and_time_at_2() {
        let f = figure();
        crate::figures::suites::assert_claims(
            &f,
            &[
                "fences-per-steal",
                "fences-well-below-1",
                "no-slower-than-rayon",
            ],
        );
        let cases = |i: usize| f.claims[i].check.quantities().len();
        // Every row but rayon's; UTS T3's six deque rows; three runtimes on two benchmarks.
        assert_eq!((cases(0), cases(1), cases(2)), (16, 6, 6));
        assert!(!f.claims[0].reads_time() && f.claims[1].max_p() == 16);
        assert!(f.claims[2].reads_time() && f.claims[2].max_p() == 2);
    }
}
