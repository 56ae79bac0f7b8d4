//! The Rayon-LH thesis's evaluation: MapReduce-Fib (`mapreduce-fib`), speedup against the
//! workers P for latencies L = 0, 1, 50 and 100 ms, classic (`fj`: the wait blocks a worker)
//! against latency-hiding (`sf`: the wait is a latency future the pool's I/O thread drives),
//! with classic at 0 ms as the ideal.
//!
//! Rows per L: `fj` and `sf` on `prows` (ProWS-R, the thesis's scheduler) and on `abp` (the
//! parsimonious fiber runtime, for comparison), `fj` on `rayon` (classic work stealing, which
//! cannot hide latency: its `sf` blocks the same way), and `sf` on `tokio` (the async baseline:
//! the task awaits tokio's own timer). Each L is a workload spec
//! (`mapreduce-fib/latency_ms=50`), so each gets its own panel.
//!
//! The metric ([`LhSpeedup`]) measures every row against one time: T_s at 0 ms, the kernel of
//! the same items with no latency (`serial/front=kernel`, `mapreduce-fib/latency_ms=0`,
//! P = 1: a plain loop over the items, no runtime), i.e. the work alone. So a row's speedup says how close it comes to the ideal
//! machine that pays no latency at all, and the classic rows at 0 ms are that ideal as
//! scheduled (their line is the one to reach). Worker counts go past this machine's cores by
//! default (1, 2, 4, 8: latency is not CPU, so the times there say how the waits overlap),
//! but as everywhere in the project such points are marked `(oversubscribed)` and show no
//! speedup: classic would gain there from threads that sleep while others share a core, which
//! is not what a machine with P cores does.
//!
//! Its claims ([`claims`]; the thesis prints no numbers, so the bands are ours, from the
//! model `latency + items·T(fib(n)) / P` against `items·(latency + T(fib(n))) / P`) compare
//! times at P = 1 and 2 only: a time claim at a P past the cores is inconclusive, and the
//! waits' overlap there is the threads', not the scheduler's. At 50 and 100 ms latency
//! hiding (`sf` on `prows`) is many times faster than classic work stealing (`fj` on
//! `rayon`) and superlinear against classic work stealing on one worker (not against T_s:
//! latency hiding beats the serial program at P = 1 by design, another program than T_s's);
//! at 1 ms latency hiding gains over the classic program on the same runtime what the model
//! gives, within 25 %; at 0 ms ProWS-R's program without latency futures performs as the
//! classic scheduler of its own code base (`prows` against `abp`, the parsimonious policy of
//! the same fiber pool: the thesis compares Rayon-LH with the Rayon it extends, and `rayon`
//! is another code base); and its times stay near the ideal (classic at 0 ms) once the items'
//! work outweighs one latency, from size `small` on.

use super::Figure;
use super::metric::{Context, Metric, format_speedup, format_time, key};
use crate::claims::{Band, Case, Check, Claim, Q, case, time, ts};
use crate::grid::{Row, Status};
use crate::results::{self, PointSummary};
use crate::spec::WorkloadSpec;
use crate::stats;
use stealbench_workloads::{Size, Variant};

/// The figure's id.
pub(crate) const ID: &str = "lh-mapreduce";
/// The figure's title.
pub(crate) const TITLE: &str = "Rayon-LH (thesis) MapReduce-Fib: speedup against P for latencies of 0, 1, 50 and 100 ms, classic against latency-hiding";

/// The latencies of the figure, in milliseconds.
pub(crate) const LATENCIES_MS: [u64; 4] = [0, 1, 50, 100];

/// The rows of each latency: (variant, runtime arm).
const ROWS: [(Variant, &str); 6] = [
    (Variant::Fj, "prows"),
    (Variant::Sf, "prows"),
    (Variant::Fj, "abp"),
    (Variant::Sf, "abp"),
    (Variant::Fj, "rayon"),
    (Variant::Sf, "tokio"),
];

/// The spec of `mapreduce-fib` at `latency_ms`.
pub(crate) fn spec(latency_ms: u64) -> String {
    format!("mapreduce-fib/latency_ms={latency_ms}")
}

/// The figure.
pub(crate) fn figure() -> Figure {
    let mut rows = Vec::new();
    for l in LATENCIES_MS {
        for (variant, rt) in ROWS {
            rows.push(Row::new(format!("L={l} ms"), spec(l), variant, rt));
        }
    }
    Figure::new(
        ID,
        TITLE,
        "MapReduce-Fib (the thesis's benchmark repository): each item waits a latency L, \
         then computes fib(n) (in parallel above a cutoff); the reduce sums. The thesis \
         plots speedup against the number of workers for L = 0, 1, 50 and 100 ms, \
         classic (the wait blocks a worker) against latency-hiding (the wait suspends, \
         an I/O thread waits), with classic at 0 ms as the ideal, on 5,000 items of \
         fib(30) with cutoff 25; it prints no numbers. Here `fj` is the classic program \
         (`thread::sleep(L)` in the item's task) and `sf` the latency-hiding one (a \
         latency future of a tokio timer of L, touched at once): on `prows` its touch \
         suspends the whole deque (the thesis's ProWS-R) and the pool's I/O thread makes \
         it resumable; on `abp` the touch parks the fiber; `rayon` shows classic work \
         stealing (its `sf` would block the same way); `tokio` awaits its own timer \
         (the async baseline). Speedups are over T_s at 0 ms (the items' work alone, \
         serially), for every row and every P, P past the cores included: latency is \
         not CPU.",
        &[1, 2, 4, 8],
        &LhSpeedup,
        rows,
    )
    .with_claims(claims())
}

/// The P of the claims: no more than a 2-core machine's cores.
const CLAIM_P: [usize; 2] = [1, 2];

/// A case per latency of `latencies` and P of `ps`, labelled `L=50 ms P=2`.
fn cases(
    latencies: &[u64],
    ps: &[usize],
    q: impl Fn(&str, usize) -> crate::claims::Q,
) -> Vec<Case> {
    latencies
        .iter()
        .flat_map(|&l| {
            ps.iter()
                .map(|&p| case(format!("L={l} ms P={p}"), q(&spec(l), p)))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The thesis's claims the figure tests (see the module documentation).
pub(crate) fn claims() -> Vec<Claim> {
    let lh = |w: &str, p| time("prows", w, Variant::Sf, p);
    let classic = |w: &str, p| time("rayon", w, Variant::Fj, p);
    let zero = spec(0);
    vec![
        Claim::new(
            "hides-latency",
            "large performance gains can be made from having ... the latency-incurring \
             operation cooperatively yield",
            "T(classic) / T(latency-hiding) about items·(L + T(fib)) / (P·L + items·T(fib)): \
             15 to 30 at quick; here at least 5",
            Check::Within {
                cases: cases(&[50, 100], &CLAIM_P, |w, p| classic(w, p).over(lh(w, p))),
                band: Band::at_least(5.0),
                unit: "x",
            },
        )
        .at_least_size(
            Size::Quick,
            "test has 8 items: classic at P = 2 waits 4 latencies in turn, so latency hiding \
             gains 4x at most",
        ),
        Claim::new(
            "superlinear",
            "Evaluation: To Superlinear and Beyond (Not Really... Just Superlinear)",
            "T_1(classic, L) / T_P(latency-hiding, L) > P: more than P times faster than one \
             worker that waits out every latency",
            Check::Within {
                cases: cases(&[50, 100], &[2], |w, p| classic(w, 1).over(lh(w, p))),
                band: Band::at_least(2.0),
                unit: "x",
            },
        )
        .regression(
            "implied by hides-latency: one worker that waits out every latency is slower than \
             P = 1 of latency hiding by the waits it overlaps",
        ),
        Claim::new(
            "same-at-0-ms",
            "if latency-incurring operations (i.e. `FutureJobs`) are not used, the scheduling \
             algorithm is the exact same and also provides the exact same performance",
            "T(Rayon-LH) = T(Rayon) without FutureJobs; here T(prows fj) = T(abp fj) at 0 ms, \
             the program without latency futures on the latency-hiding scheduler and on the \
             classic one of the same fiber pool (within 10 %: the same)",
            Check::Within {
                cases: CLAIM_P
                    .iter()
                    .map(|&p| {
                        case(
                            format!("prows fj / abp fj P={p}"),
                            time("prows", &zero, Variant::Fj, p)
                                .over(time("abp", &zero, Variant::Fj, p)),
                        )
                    })
                    .collect(),
                band: Band::same(1.0),
                unit: "x",
            },
        ),
        Claim::new(
            "hides-latency-at-1-ms",
            "the bound is independent of the number of latency-incurring operations in the \
             computation, thus hiding latency",
            "the thesis's L = 1 ms panel, drawn without numbers; here T_P(classic) / \
             T_P(latency-hiding) on `prows` over the model's items·(L + T(fib)) / (P·L + \
             items·T(fib)) = T_s(1 ms) / (P·1 ms + T_s(0 ms)): 1 (± 25 %)",
            Check::Within {
                cases: CLAIM_P
                    .iter()
                    .map(|&p| {
                        let one = spec(1);
                        let gain = time("prows", &one, Variant::Fj, p).over(lh(&one, p));
                        let model = ts(&one)
                            .over(Q::Const(p as f64 * 1e-3).plus(ts(&zero)));
                        case(format!("L=1 ms P={p}"), gain.over(model))
                    })
                    .collect(),
                band: Band::ratio(1.0),
                unit: "of the model's",
            },
        ),
        Claim::new(
            "near-ideal",
            "the bound is independent of the number of latency-incurring operations in the \
             computation, thus hiding latency",
            "T_P(latency-hiding, L) / T_P(classic, 0 ms) about 1 + P·L / (items·T(fib)): 1.05 \
             to 1.2 at small, 1.02 at paper; here at most 1.5",
            Check::Within {
                cases: cases(&[50, 100], &CLAIM_P, |w, p| {
                    lh(w, p).over(time("prows", &zero, Variant::Fj, p))
                }),
                band: Band::at_most(1.5),
                unit: "x",
            },
        )
        .at_least_size(
            Size::Small,
            "quick's 64 items of fib(30) are about 60 ms of work per worker at P = 2, no more \
             than one latency: the ideal plus one latency is 1.4x to 2.7x; small's 500 items \
             make it 1.1x to 1.2x",
        ),
    ]
}

/// `spec` with its `latency_ms` set to 0 (appended if the spec does not set it).
pub(crate) fn zero_latency(spec: &WorkloadSpec) -> WorkloadSpec {
    spec.with("latency_ms", "0")
}

/// Median time of a point and its speedup over T_s at 0 ms (see the module documentation);
/// no speedup for an oversubscribed point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LhSpeedup;

impl LhSpeedup {
    /// T_s at 0 ms of `row`'s items.
    fn base(ctx: &Context<'_>, row: &Row) -> Option<f64> {
        results::ts_of(ctx.summaries, &zero_latency(&row.workload))
            .and_then(|s| s.summary)
            .map(|s| s.median)
    }

    /// The speedup of `row` at `p` (`None` when oversubscribed).
    pub(crate) fn speedup(&self, ctx: &Context<'_>, row: &Row, p: usize) -> Option<f64> {
        if ctx.oversubscribed(row, p) {
            return None;
        }
        stats::speedup(
            Self::base(ctx, row),
            results::median_of(ctx.summaries, &key(row, p)),
        )
    }

    fn time_cell(s: Option<&PointSummary>, speedup: Option<f64>) -> String {
        match s.map(|s| (s.status, s.summary)) {
            Some((Status::Ok, Some(x))) => match speedup {
                Some(sp) => format!("{} ({})", format_time(x.median), format_speedup(sp)),
                None => format_time(x.median),
            },
            Some((status, _)) => status.name().to_string(),
            None => "—".to_string(),
        }
    }
}

impl Metric for LhSpeedup {
    fn lead(&self, ctx: &Context<'_>, row: &Row) -> Vec<(String, String)> {
        let ts = results::ts_of(ctx.summaries, &row.workload);
        vec![("Ts".to_string(), Self::time_cell(ts, None))]
    }

    fn column(&self, p: usize) -> String {
        format!("T{p}")
    }

    fn cell(&self, ctx: &Context<'_>, row: &Row, p: usize) -> String {
        let s = ctx.point(row, p);
        let c = Self::time_cell(s, self.speedup(ctx, row, p));
        if ctx.oversubscribed(row, p) && s.is_some() {
            format!("{c} (oversubscribed)")
        } else {
            c
        }
    }

    fn paper_cell(&self, _: &Row, _: usize) -> String {
        "[paper —]".to_string()
    }

    fn lines(&self) -> &'static [&'static str] {
        &["speedup"]
    }

    fn plot(&self, ctx: &Context<'_>, row: &Row, p: usize, _: usize) -> Option<f64> {
        self.speedup(ctx, row, p)
    }

    fn plot_paper(&self, _: &Row, _: usize, _: usize) -> Option<f64> {
        None
    }

    fn y_label(&self) -> &'static str {
        "speedup Ts(0 ms)/TP"
    }

    fn ideal_line(&self) -> bool {
        true
    }

    fn describe(&self) -> String {
        "speedup in parentheses = T_s at 0 ms / T_P: T_s at 0 ms is the kernel of the same \
         items without latency (`serial/front=kernel`, latency_ms=0, P=1: a plain loop, no \
         runtime), the work alone, so every row is measured against the ideal of paying no \
         latency; the Ts column is the kernel at the row's own latency; none past this machine's cores (the times there \
         are measured, latency being no CPU, but threads that share a core are no speedup)"
            .to_string()
    }

    fn note_label(&self) -> &'static str {
        "Speedup"
    }

    fn cell_legend(&self) -> &'static str {
        "Each cell: our median time in seconds (our speedup over T_s at 0 ms). `—` = not \
         measured. `fj` is the classic program (the wait blocks a worker), `sf` the \
         latency-hiding one (a latency future). The thesis prints no numbers."
    }

    fn plot_name(&self) -> &'static str {
        "speedup"
    }

    /// Past the cores too (see the module documentation).
    fn needs_cores(&self) -> bool {
        false
    }

    fn compares_times(&self) -> bool {
        true
    }

    fn oversubscribed_note(&self) -> &'static str {
        "those cells are marked `(oversubscribed)` and show their time only (the waits use no \
         CPU, but threads that share a core are no speedup)"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::ok_point;

    #[test]
    fn rows_cover_every_latency_and_exist() {
        let f = figure();
        assert_eq!(f.rows.len(), LATENCIES_MS.len() * ROWS.len());
        assert_eq!(f.rows[0].workload, "mapreduce-fib/latency_ms=0");
        assert!(
            f.rows
                .iter()
                .all(|r| crate::grid::workload_info(&r.workload).is_some())
        );
        assert_eq!(crate::plan::default_workers(&f), [1, 2, 4, 8]);
    }

    #[test]
    fn claims_compare_times_at_p_up_to_2() {
        let f = figure();
        crate::figures::suites::assert_claims(
            &f,
            &[
                "hides-latency",
                "superlinear",
                "same-at-0-ms",
                "hides-latency-at-1-ms",
                "near-ideal",
            ],
        );
        // The zero-latency claim reads no `rayon` row: Rayon-LH against its own classic
        // scheduler.
        assert!(f.claims[2].points().iter().all(|(p, _)| p.runtime != "rayon"));
        assert!(f.claims.iter().all(|c| c.reads_time() && c.max_p() <= 2));
        let Check::Within { cases, .. } = &f.claims[0].check else {
            panic!("a ratio");
        };
        let labels: Vec<&str> = cases.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(
            labels,
            ["L=50 ms P=1", "L=50 ms P=2", "L=100 ms P=1", "L=100 ms P=2"]
        );
    }

    #[test]
    fn the_base_is_the_zero_latency_spec() {
        assert_eq!(zero_latency(&"mapreduce-fib/latency_ms=50".into()), spec(0).as_str());
        assert_eq!(zero_latency(&"mapreduce-fib".into()), spec(0).as_str());
        assert_eq!(
            zero_latency(&"mapreduce-fib/items=8/latency_ms=1/n=20".into()),
            "mapreduce-fib/items=8/latency_ms=0/n=20"
        );
    }

    #[test]
    fn speedups_are_over_ts_at_zero_and_never_oversubscribed() {
        let point = |rt: &str, w: &str, v, p, t| {
            let mut s = ok_point(rt, v, p, t);
            s.key.workload = (*w).into();
            s
        };
        let s = [point("serial/front=kernel", &spec(0), Variant::Fj, 1, 4.0),
            point("serial/front=kernel", &spec(50), Variant::Fj, 1, 40.0),
            point("prows", &spec(50), Variant::Sf, 2, 2.0),
            point("prows", &spec(50), Variant::Sf, 8, 1.0)];
        let ctx = Context {
            summaries: &crate::results::Summaries::from(s.to_vec()),
            cpus: 2,
        };
        let row = Row {
            bench: "L=50 ms".into(),
            workload: spec(50).as_str().into(),
            variant: Variant::Sf,
            runtime: "prows".into(),
            paper: None,
        };
        let m = LhSpeedup;
        assert_eq!(m.speedup(&ctx, &row, 2), Some(2.0));
        assert_eq!(m.cell(&ctx, &row, 2), "2.000 (2.00x)");
        assert_eq!(m.cell(&ctx, &row, 8), "1.000 (oversubscribed)");
        assert_eq!(m.plot(&ctx, &row, 8, 0), None);
        assert_eq!(m.lead(&ctx, &row)[0].1, "40.00");
        assert_eq!(m.cell(&ctx, &row, 4), "—");
    }
}
