//! Test helpers: a row and its points for the metrics' tests, and a figure measured.

/// A point of workload `fib` that finished ok with median `median` seconds and no counters.
pub(crate) fn ok_point(
    runtime: &str,
    variant: stealbench_workloads::Variant,
    workers: usize,
    median: f64,
) -> crate::results::PointSummary {
    crate::results::PointSummary {
        key: crate::spec::PointSpec {
            runtime: runtime.into(),
            workload: "fib".into(),
            variant,
            workers,
        },
        size: stealbench_workloads::Size::Test,
        params: "n=20".into(),
        status: crate::grid::Status::Ok,
        summary: Some(crate::stats::Summary {
            n: 3,
            median,
            mean: median,
            stddev: 0.0,
            min: median,
        }),
        peak_rss_kb: Some(1),
        counters: Vec::new(),
        round_medians: vec![median],
        note: String::new(),
    }
}

/// The row of workload `fib`, variant fj, on `runtime`, without paper values: the row of
/// [`ok_point`]'s points.
pub(crate) fn fib_row(runtime: &str) -> crate::grid::Row {
    crate::grid::Row::new("fib", "fib", stealbench_workloads::Variant::Fj, runtime)
}

/// libfork's Figure 5 at P = 1 and the points of its fib row on every arm of it (a second
/// each), for the tests of what a table and a plot call libfork's arms.
pub(crate) fn libfork_fig5_at_1() -> (
    crate::figures::Figure,
    crate::grid::Grid,
    Vec<crate::results::PointSummary>,
) {
    use crate::figures::suites::{BUSY_LF, LAZY_LF};
    let fig = crate::figures::libfork_fig5::figure();
    let grid = crate::grid::Grid::build(fig.rows.clone(), &[1], &Default::default());
    let summaries = ["serial/front=kernel", LAZY_LF, BUSY_LF, "rayon"]
        .into_iter()
        .map(|rt| ok_point(rt, stealbench_workloads::Variant::Fj, 1, 0.1))
        .collect();
    (fig, grid, summaries)
}
