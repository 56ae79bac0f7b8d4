//! Test helpers: a row and its points for the metrics' tests.

/// A point of workload `fib` that finished ok with median `median` seconds and no counters.
pub fn ok_point(
    runtime: &str,
    variant: stealbench_workloads::Variant,
    workers: usize,
    median: f64,
) -> crate::results::PointSummary {
    crate::results::PointSummary {
        key: crate::grid::PointKey {
            runtime: runtime.into(),
            workload: "fib".into(),
            variant,
            workers,
        },
        size: "test".into(),
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
pub fn fib_row(runtime: &str) -> crate::grid::Row {
    crate::grid::Row::new("fib", "fib", stealbench_workloads::Variant::Fj, runtime)
}
