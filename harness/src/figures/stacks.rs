//! [`StackPages`]: Fibril's Table 3, the stack space of a program in pages: its Fibril depth
//! D, its serial stack depth S_1, the bound S_1 + D per worker (Theorem 4.2: S_P <= P (S_1 +
//! D)), and the stack pages per worker at P, S_P / P, counted two ways: the pages first
//! touched (Fibril's count) and the pages resident after the run.
//!
//! How each is measured here:
//!
//! * D: `fork_depth` of the program's DAG, recorded by a simulated point (an arm with `sim=`)
//!   of the same workload at P = 1: the most forked children enclosing one strand (see
//!   `point::fork_depth`), which for Fibril's binary forks is its depth (fib(42): 41).
//! * S_1: `stack_pages_touched` of the row's runtime at P = 1 (as S_P / P first touched
//!   below, at P = 1), the largest over the repetitions: the stack pages a one-worker
//!   execution touched, over every fiber stack it ran on. Fibril's serial execution runs on
//!   one linear stack; ours does not always: `join` runs both children on the caller's stack,
//!   but a `spawn` in a scope runs its child work-first on a fiber of its own, stolen or not,
//!   so a program that spawns (nqueens, strassen) holds one stack per nested spawn. Its S_1 is
//!   the sum of their pages, and the deepest single stack (`stack_depth_pages_high_water`)
//!   undercounts it (at the quick size nqueens touches 13 pages, its deepest stack 1 page
//!   deep; strassen 10 and 2). Counted as S_P is, S_1 is S_P at P = 1, so the bound S_1 + D
//!   and S_P / P are counts of the same kind.
//! * S_P / P first touched: `stack_pages_touched` at P over P, the largest over the
//!   repetitions: the stack pages touched at least once since the point's pool started (its
//!   warm-up and the repetitions so far), each of which cost one first-touch page fault. This
//!   is what Fibril's S_P counts: its stacks start inaccessible, and a fault handler counts each
//!   stack page's first fault (a page released and touched again faults again without
//!   `SIGSEGV`, so it is counted once), over the whole process (its ten runs). Here a stack's
//!   touched pages are its deepest page ever seen resident, by a release, a scan or its
//!   unmapping (see `stealbench_schedulers::stack`).
//! * S_P / P resident: `stack_pages_resident` at P (the pages resident in every stack the pool
//!   has mapped, by `mincore`, when the statistics are read at the end of a repetition; the
//!   largest over the repetitions) over P. It counts the pages the stacks hold after the run,
//!   those of the stacks kept in the pools' free lists included, and not a peak sampled during
//!   the run: a page a suspended stack released and did not touch again is not in it, so on
//!   `fibril` it can be well below the first-touched count.
//!
//! The process's minor page faults during a repetition (`process_minor_faults`, Fibril's Table
//! 2) are not S_P: they count a released page again each time it is touched again, the heap's
//! faults too, and none of the warm-up's.

use super::metric::{Context, Metric, key, mark_oversubscribed, unfinished};
use super::paper_number;
use crate::grid::{Row, Status};
use crate::results::PointSummary;
use crate::spec::PointSpec;

/// The two counts of S_P, in the order of a cell and of the plot's lines: the pages first
/// touched (Fibril's count) and those resident after the run.
const STATS: [&str; 2] = ["stack_pages_touched", "stack_pages_resident"];

/// Fibril's Table 3 with the paper's numbers beside.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StackPages {
    /// The arm whose P = 1 point gives D (`fork_depth`): a simulated one (`abp/sim=unit`).
    pub depth_arm: &'static str,
    /// The reference CSV (`D`, `S1`, `S1_plus_D`, `S72_per_worker`; one record per benchmark).
    pub reference: &'static str,
    /// The runtime whose rows the paper's numbers belong to (`fibril`).
    pub paper_runtime: &'static str,
    /// The P of the paper's S_P / P.
    pub paper_p: usize,
}

impl StackPages {
    /// The largest value of counter `stat` over the repetitions of `s` if it finished ok.
    fn largest(s: Option<&PointSummary>, stat: &str) -> Option<u64> {
        let s = s.filter(|s| s.status == Status::Ok)?;
        s.counter(stat)?.iter().copied().max()
    }

    /// D of the row's workload.
    pub(crate) fn depth(&self, ctx: &Context<'_>, row: &Row) -> Option<u64> {
        let k = PointSpec {
            runtime: self.depth_arm.parse().ok()?,
            ..key(row, 1)
        };
        Self::largest(ctx.summaries.iter().find(|s| s.key == k), "fork_depth")
    }

    /// S_1 of the row's runtime: its stack pages first touched at P = 1.
    pub(crate) fn s1(&self, ctx: &Context<'_>, row: &Row) -> Option<u64> {
        Self::largest(ctx.point(row, 1), STATS[0])
    }

    /// S_P / P of the row, counted as `stat` (`stack_pages_touched` or
    /// `stack_pages_resident`).
    pub(crate) fn per_worker(
        &self,
        ctx: &Context<'_>,
        row: &Row,
        p: usize,
        stat: &str,
    ) -> Option<f64> {
        Some(Self::largest(ctx.point(row, p), stat)? as f64 / p as f64)
    }

    /// The paper's number in column `col` for `row` (only the paper runtime's rows).
    fn paper(&self, row: &Row, col: &str) -> Option<f64> {
        if row.runtime != self.paper_runtime {
            return None;
        }
        paper_number(self.reference, &row.bench, col)
    }
}

/// `ours [paper x]`, the paper's part only where the row has one.
fn with_paper(ours: String, paper: Option<f64>, row: &Row, paper_runtime: &str) -> String {
    if row.runtime != paper_runtime {
        return ours;
    }
    match paper {
        Some(v) => format!("{ours} [paper {v}]"),
        None => format!("{ours} [paper —]"),
    }
}

fn or_na(v: Option<u64>) -> String {
    v.map_or("n/a".to_string(), |v| v.to_string())
}

impl Metric for StackPages {
    fn lead(&self, ctx: &Context<'_>, row: &Row) -> Vec<(String, String)> {
        let d = self.depth(ctx, row);
        let s1 = self.s1(ctx, row);
        let sum = d.zip(s1).map(|(d, s)| d + s);
        let rt = self.paper_runtime;
        vec![
            (
                "D".to_string(),
                with_paper(or_na(d), self.paper(row, "D"), row, rt),
            ),
            (
                "S_1".to_string(),
                with_paper(or_na(s1), self.paper(row, "S1"), row, rt),
            ),
            (
                "S_1 + D".to_string(),
                with_paper(or_na(sum), self.paper(row, "S1_plus_D"), row, rt),
            ),
        ]
    }

    fn column(&self, p: usize) -> String {
        format!("S_{p}/{p}")
    }

    /// `first touched / resident`, per worker.
    fn cell(&self, ctx: &Context<'_>, row: &Row, p: usize) -> String {
        let c = match ctx.point(row, p) {
            Some(s) if s.status == Status::Ok => STATS
                .iter()
                .map(|stat| match self.per_worker(ctx, row, p, stat) {
                    Some(v) => format!("{v:.2}"),
                    None => "n/a".to_string(),
                })
                .collect::<Vec<_>>()
                .join(" / "),
            s => unfinished(s),
        };
        mark_oversubscribed(ctx, row, p, c)
    }

    /// At the paper's P its S_P / P; at P = 1, its S_1 (the stack of a serial execution is S_1
    /// by definition).
    fn paper_cell(&self, row: &Row, p: usize) -> String {
        let v = if p == self.paper_p {
            self.paper(row, "S72_per_worker")
        } else if p == 1 {
            self.paper(row, "S1")
        } else {
            None
        };
        v.map_or("[paper —]".to_string(), |v| format!("[paper {v}]"))
    }

    fn lines(&self) -> &'static [&'static str] {
        &["S_P/P first touched", "S_P/P resident"]
    }

    fn plot(&self, ctx: &Context<'_>, row: &Row, p: usize, line: usize) -> Option<f64> {
        self.per_worker(ctx, row, p, STATS[line])
    }

    /// The paper's S_P / P counts first touches: it is the first line's.
    fn plot_paper(&self, row: &Row, p: usize, line: usize) -> Option<f64> {
        if line != 0 {
            None
        } else if p == self.paper_p {
            self.paper(row, "S72_per_worker")
        } else if p == 1 {
            self.paper(row, "S1")
        } else {
            None
        }
    }

    fn y_label(&self) -> &'static str {
        "stack pages per worker"
    }

    fn ideal_line(&self) -> bool {
        false
    }

    fn describe(&self) -> String {
        format!(
            "D = `fork_depth` of the program's DAG recorded by the `{}` point at P = 1 (the most \
             forked children enclosing one strand); S_1 = `stack_pages_touched` of the row's \
             runtime at P = 1 (the 4 KiB pages a one-worker execution touched over all its fiber \
             stacks, largest over the repetitions: a scope's spawn runs its child on a fiber of \
             its own, so nqueens and strassen hold a stack per nested spawn); S_P/P = \
             `stack_pages_touched / stack_pages_resident` at P over P, each the largest over the \
             repetitions: the stack pages touched at least once since the point's pool started, \
             warm-up included (each one first-touch page fault, Fibril's count of S_P; a released \
             page touched again counts once), and the pages resident in all the pool's stacks at \
             the end of a repetition (free lists included)",
            self.depth_arm
        )
    }

    fn note_label(&self) -> &'static str {
        "Columns"
    }

    fn cell_legend(&self) -> &'static str {
        "Lead columns: D, S_1 and S_1 + D in pages [the paper's, on the `fibril` rows]; each P \
         column: the stack pages per worker S_P / P, `first touched / resident` [the paper's \
         S_72 / 72, a count of first touches; at P = 1 its S_1]. \
         `n/a` = the runtime does not count it (no fiber stacks, or a simulated point), `—` = \
         not measured. Stack depths grow with the input's recursion depth: at other sizes than \
         the paper's compare S_P / P with S_1 + D, not with the paper's pages."
    }

    fn plot_name(&self) -> &'static str {
        "stack pages per worker"
    }

    fn needs_cores(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{fib_row, ok_point};
    use stealbench_workloads::Variant;

    const METRIC: StackPages = StackPages {
        depth_arm: "abp/sim=unit",
        reference: "bench,D,S1,S1_plus_D,S72_per_worker\nfib,41,3,44,8.46\n",
        paper_runtime: "fibril",
        paper_p: 72,
    };

    fn with(runtime: &str, p: usize, counters: &[(&str, &[u64])]) -> PointSummary {
        let mut s = ok_point(runtime, Variant::Fj, p, 1.0);
        s.counters = counters
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_vec()))
            .collect();
        s
    }

    #[test]
    fn depth_from_the_recording_and_pages_from_the_runtime() {
        let s = vec![
            with("abp/sim=unit", 1, &[("fork_depth", &[19, 19])]),
            with(
                "fibril",
                1,
                &[
                    ("stack_depth_pages_high_water", &[3, 4]),
                    ("stack_pages_resident", &[9, 9]),
                    ("stack_pages_touched", &[11, 12]),
                ],
            ),
            with(
                "fibril",
                72,
                &[
                    ("stack_pages_resident", &[600, 720]),
                    ("stack_pages_touched", &[1440, 1800]),
                ],
            ),
            // A point recorded without the first-touch count.
            with("abp", 72, &[("stack_pages_resident", &[144])]),
            with("rayon", 72, &[]),
        ];
        let ctx = Context {
            summaries: &crate::results::Summaries::from(s),
            cpus: 2,
        };
        let lead = METRIC.lead(&ctx, &fib_row("fibril"));
        assert_eq!(lead[0], ("D".to_string(), "19 [paper 41]".to_string()));
        // S_1 is the pages first touched at P = 1 (over every stack), not the deepest stack.
        assert_eq!(lead[1], ("S_1".to_string(), "12 [paper 3]".to_string()));
        assert_eq!(
            lead[2],
            ("S_1 + D".to_string(), "31 [paper 44]".to_string())
        );
        // First touched / resident, the largest over the repetitions, per worker.
        assert_eq!(
            METRIC.cell(&ctx, &fib_row("fibril"), 72),
            "25.00 / 10.00 (oversubscribed)"
        );
        assert_eq!(METRIC.cell(&ctx, &fib_row("fibril"), 1), "12.00 / 9.00");
        assert_eq!(
            METRIC.cell(&ctx, &fib_row("abp"), 72),
            "n/a / 2.00 (oversubscribed)"
        );
        assert_eq!(METRIC.paper_cell(&fib_row("fibril"), 72), "[paper 8.46]");
        assert_eq!(METRIC.paper_cell(&fib_row("fibril"), 1), "[paper 3]");
        assert_eq!(METRIC.paper_cell(&fib_row("abp"), 72), "[paper —]");
        // rayon has no fiber stacks: D is the program's, the rest n/a, no paper value.
        let lead = METRIC.lead(&ctx, &fib_row("rayon"));
        assert_eq!(lead[0].1, "19");
        assert_eq!(lead[1].1, "n/a");
        assert_eq!(
            METRIC.cell(&ctx, &fib_row("rayon"), 72),
            "n/a / n/a (oversubscribed)"
        );
        assert_eq!(METRIC.plot(&ctx, &fib_row("fibril"), 72, 0), Some(25.0));
        assert_eq!(METRIC.plot(&ctx, &fib_row("fibril"), 72, 1), Some(10.0));
        // The paper's S_P counts first touches: beside the first line only.
        assert_eq!(METRIC.plot_paper(&fib_row("fibril"), 72, 0), Some(8.46));
        assert_eq!(METRIC.plot_paper(&fib_row("fibril"), 72, 1), None);
    }
}
