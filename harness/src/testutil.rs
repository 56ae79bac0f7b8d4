//! Test helpers: a temporary directory removed on drop (the allowed dependencies have no
//! tempfile crate), and a row and its points for the metrics' tests.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A fresh directory under the system's temporary directory, removed when dropped.
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl TempDir {
    /// Creates `<tmp>/stealbench-<tag>-<pid>-<counter>`.
    pub fn new(tag: &str) -> TempDir {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!("stealbench-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("create a temporary directory");
        TempDir(p)
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

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
