//! What the Fibril (SPAA'16) and libfork figures share: their benchmarks (the paper's name and
//! our workload spec), the runtimes that stand in for the papers' ones, the rows built from
//! them, and the constructors of Fibril's figures (its tables' rows, the ratios of its Figures 3
//! and 4).
//!
//! The mapping of the papers' runtimes to ours:
//!
//! | paper | ours |
//! |---|---|
//! | Fibril | `fibril` |
//! | Intel Cilk Plus (Fibril's comparison) | `abp` (work stealing on stackful fibers, as Cilk) |
//! | Intel TBB | `rayon` (a library work-stealing pool, as TBB) |
//! | libfork lazy / busy (Lazy-LF, Busy-LF) | [`LAZY_LF`], [`BUSY_LF`] in libfork's figures |
//! | OpenMP (libomp), taskflow | none here |
//!
//! `tokio` runs as a baseline neither paper measured.

use super::ratio::Relative;
use super::{Figure, Metric, Reference, ReferenceCsv, reference_csv};
use crate::grid::{PaperValues, Row};
use crate::runtimes::Arm;
use stealbench_workloads::Variant;

/// Fibril's twelve benchmarks (its Table 1): the paper's name, then our workload (matmul is
/// `mm` on Fibril's matrix, n = 2048 at paper size).
pub const FIBRIL_BENCHMARKS: [(&str, &str); 12] = [
    ("cholesky", "cholesky"),
    ("fft", "fft"),
    ("fib", "fib"),
    ("heat", "heat"),
    ("integrate", "integrate"),
    ("knapsack", "knapsack"),
    ("lu", "lu"),
    ("matmul", "mm/input=fibril"),
    ("nqueens", "nqueens"),
    ("quicksort", "quicksort"),
    ("rectmul", "rectmul"),
    ("strassen", "smm"),
];

/// The runtimes of Fibril's Figures 3-4 here: Fibril, Cilk Plus (`abp`), TBB (`rayon`), and the
/// baselines `tokio` and libfork's two arms.
pub const FIBRIL_RUNTIMES: [&str; 6] = [
    "fibril",
    "abp",
    "rayon",
    "tokio",
    "libfork",
    "libfork/idle=busy",
];

/// The runtimes of Fibril's Tables 2 and 4: Fibril, Cilk Plus (`abp`), TBB (`rayon`).
pub const FIBRIL_TABLE_RUNTIMES: [&str; 3] = ["fibril", "abp", "rayon"];

/// The thread count of Fibril's tables and of its Figure 4's ratios: the 72 hardware threads of
/// its machine (2 x 18 cores, 2-way SMT).
pub const FIBRIL_P: usize = 72;

/// libfork's classic benchmarks (its Table I, Figure 5; matmul on libfork's n = 8192).
pub const LIBFORK_CLASSIC: [(&str, &str); 4] = [
    ("fib", "fib"),
    ("integrate", "integrate"),
    ("nqueens", "nqueens"),
    ("matmul", "mm/input=libfork"),
];

/// libfork's UTS trees (its Table I, Figure 6), each a spec of the `uts` workload.
pub const LIBFORK_UTS: [(&str, &str); 6] = [
    ("T1", "uts/tree=T1"),
    ("T1L", "uts/tree=T1L"),
    ("T1XXL", "uts/tree=T1XXL"),
    ("T3", "uts/tree=T3"),
    ("T3L", "uts/tree=T3L"),
    ("T3XXL", "uts/tree=T3XXL"),
];

/// libfork's settings in its paper's runs, as arm settings (the one place they are spelt):
/// victims by Eq. 6 (`victim=numa`: its NUMA-weighted victims, with the distance r_ij) and
/// every worker pinned to a CPU, spread over the machine (`pinning=scatter`: its pools'
/// default `numa_strategy::fan`, `hwloc_distrib` over the whole machine, which the
/// benchmarks keep; `scatter` deals the workers over the NUMA nodes as it does, then fills
/// each node core by core where `hwloc_distrib` also spreads them over the node's caches).
macro_rules! libfork_paper_settings {
    () => {
        "victim=numa/pinning=scatter"
    };
}
pub(crate) use libfork_paper_settings;

/// Lazy-LF as libfork's figures run it, the lazy pool on the paper's settings: the arm's one
/// spelling, for [`LAZY_LF`] and the captions.
macro_rules! lazy_lf {
    () => {
        concat!(
            "libfork/",
            $crate::figures::suites::libfork_paper_settings!()
        )
    };
}
pub(crate) use lazy_lf;

/// Busy-LF as libfork's figures run it, the busy pool on the paper's settings: the arm's one
/// spelling, for [`BUSY_LF`] and the captions.
macro_rules! busy_lf {
    () => {
        concat!(
            "libfork/idle=busy/",
            $crate::figures::suites::libfork_paper_settings!()
        )
    };
}
pub(crate) use busy_lf;

/// Lazy-LF as libfork's figures run it (`lazy_lf!`).
pub const LAZY_LF: &str = lazy_lf!();

/// Busy-LF as libfork's figures run it (`busy_lf!`).
pub const BUSY_LF: &str = busy_lf!();

/// The name of `runtime` in a plot's legend: the paper's for libfork's two arms of its figures
/// (Lazy-LF, Busy-LF: their spellings, long for a legend, are in the captions and tables), the
/// arm's spelling for every other.
pub fn legend_name(runtime: &Arm) -> String {
    let spelt = runtime.to_string();
    match spelt.as_str() {
        LAZY_LF => "Lazy-LF".to_string(),
        BUSY_LF => "Busy-LF".to_string(),
        _ => spelt,
    }
}

/// The sentence of libfork's figures' captions that says what ran: Lazy-LF and Busy-LF on
/// libfork's paper settings, the other runtimes on their defaults.
macro_rules! libfork_runtimes_caption {
    () => {
        concat!(
            "Here Lazy-LF is `",
            $crate::figures::suites::lazy_lf!(),
            "` and Busy-LF `",
            $crate::figures::suites::busy_lf!(),
            "`: libfork on its paper's settings, victims drawn by its Eq. 6 with the \
             topological distance r_ij, and every worker pinned to a CPU, spread over the \
             machine as libfork's default placement (hwloc_distrib) spreads them (on one NUMA \
             node with one L3, at P up to its cores: uniform draws after one sweep of every \
             other worker; pinned). TBB is `rayon`; `abp`, `fibril` and `tokio` are baselines \
             the paper did not run; these four run on their own defaults, unpinned unless \
             `--pinning` is given. "
        )
    };
}
pub(crate) use libfork_runtimes_caption;

/// The runtimes of libfork's figures here: Lazy-LF and Busy-LF on libfork's paper settings,
/// then `abp`, `fibril`, `rayon` (TBB) and `tokio` on their defaults (unpinned, unless
/// `--pinning` says otherwise).
pub const LIBFORK_RUNTIMES: [&str; 6] = [LAZY_LF, BUSY_LF, "abp", "fibril", "rayon", "tokio"];

/// The numbers libfork's text states outside its tables (`claim,value,unit`), embedded: the
/// bands of its figures' claims read them by [`libfork_claim`].
pub const LIBFORK_CLAIMS: ReferenceCsv = reference_csv!("libfork_claims.csv");

/// The value of the record `claim` of [`LIBFORK_CLAIMS`] (`fib overhead T1/Ts libfork`: 8.8).
/// Panics when there is none or it is no number: the claims that read it are built by every
/// figure's test.
pub fn libfork_claim(claim: &str) -> f64 {
    libfork_claim_record(claim).0
}

/// The value of the record `claim` of [`LIBFORK_CLAIMS`] with its unit, as a claim's paper
/// number (`8.8x`).
pub fn libfork_claim_text(claim: &str) -> String {
    let (value, unit) = libfork_claim_record(claim);
    format!("{value}{unit}")
}

fn libfork_claim_record(claim: &str) -> (f64, String) {
    let r: Reference = LIBFORK_CLAIMS.parse();
    let rec = r
        .records
        .iter()
        .find(|rec| r.field(rec, "claim") == Some(claim))
        .unwrap_or_else(|| panic!("{}: no claim `{claim}`", LIBFORK_CLAIMS.path));
    let value = r
        .field(rec, "value")
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{}: `{claim}` has no number", LIBFORK_CLAIMS.path));
    (value, r.field(rec, "unit").unwrap_or("").to_string())
}

/// Why a claim against TBB is `n/a` here.
pub const TBB_STAND_IN: &str = "TBB is stood in for by `rayon`, whose join keeps its jobs on \
                                the stack where TBB allocates a task per spawn (issue 30 \
                                builds the real oneTBB rows)";

/// Why a claim about the large UTS trees (T1L, T1XXL, T3L, T3XXL) decides from size `small`
/// on: `quick` cuts them to no more than their base trees, `small` keeps the paper's order of
/// sizes.
pub const LARGE_TREES_FROM_SMALL: &str = "at quick the large trees are no larger than their \
     base trees (T1L 1.6M nodes and T1XXL, cut at T1's depth 10, T1 itself, against T1's \
     4.1M; T3L and T3XXL cut at depth 750, 2.4M and 2.5M nodes against T3's 4.1M); small \
     keeps the paper's order, T1 < T1L (6.4M) < T1XXL (264M) and T3 < T3L (12.7M, depth \
     2500) < T3XXL (155M, depth 20000)";

/// One fj row per benchmark and runtime, grouped by benchmark; `paper` gives a row its paper
/// values (`None`: a runtime the paper did not run, or no number).
pub fn rows(
    benchmarks: &[(&str, &str)],
    runtimes: &[&str],
    paper: impl Fn(&str, &str) -> Option<PaperValues>,
) -> Vec<Row> {
    let mut out = Vec::new();
    for &(bench, workload) in benchmarks {
        for &rt in runtimes {
            out.push(Row {
                paper: paper(bench, rt),
                ..Row::new(bench, workload, Variant::Fj, rt)
            });
        }
    }
    out
}

/// The rows of libfork's figures: `benchmarks` on [`LIBFORK_RUNTIMES`], none with paper
/// values.
pub fn libfork_rows(benchmarks: &[(&str, &str)]) -> Vec<Row> {
    rows(benchmarks, &LIBFORK_RUNTIMES, |_, _| None)
}

/// One of Fibril's Tables 2 and 4: the twelve benchmarks on [`FIBRIL_TABLE_RUNTIMES`] at
/// [`FIBRIL_P`], every row with the paper's cells (of `reference`) beside ours.
pub fn fibril_table(
    id: &'static str,
    title: &'static str,
    caption: &'static str,
    reference: ReferenceCsv,
    metric: &'static dyn Metric,
) -> Figure {
    let rows = rows(&FIBRIL_BENCHMARKS, &FIBRIL_TABLE_RUNTIMES, |_, _| {
        Some(PaperValues::default())
    });
    Figure::new(id, title, caption, &[FIBRIL_P], metric, rows).with_reference(reference)
}

/// The ratios Fibril's text states (its Figures 3 and 4), embedded.
const FIBRIL_SPEEDUPS: ReferenceCsv = reference_csv!("fibril_speedups.csv");

/// The metric of Fibril's Figures 3 and 4: time, T_s / T_P and the ratios against `abp`
/// (Cilk Plus) and `rayon` (TBB), with the paper's ratios from the columns `paper_columns`
/// (against Cilk Plus, against TBB) of its speedups at `paper_p`.
pub const fn fibril_ratios(
    paper_columns: &'static [&'static str; 2],
    paper_p: usize,
    ideal: bool,
    y_label: &'static str,
) -> Relative {
    Relative {
        against: &["abp", "rayon"],
        paper_names: &["Cilk Plus", "TBB"],
        reference: FIBRIL_SPEEDUPS.text,
        paper_columns,
        paper_p,
        ideal,
        y_label,
    }
}

/// Fibril's Figure 3 or 4 of `metric` (one of [`fibril_ratios`]): the twelve benchmarks on
/// [`FIBRIL_RUNTIMES`], the `fibril` rows with the paper's ratio against Cilk Plus at the
/// metric's P.
pub fn fibril_ratio_figure(
    id: &'static str,
    title: &'static str,
    caption: &'static str,
    paper_workers: &'static [usize],
    metric: &'static Relative,
) -> Figure {
    let rows = rows(&FIBRIL_BENCHMARKS, &FIBRIL_RUNTIMES, |bench, rt| {
        (rt == "fibril").then(|| PaperValues {
            ts: None,
            values: vec![(metric.paper_p, metric.paper_ratio(bench, 0))],
        })
    });
    Figure::new(id, title, caption, paper_workers, metric, rows).with_reference(FIBRIL_SPEEDUPS)
}

/// Asserts that `fig` declares the claims `ids`, in order, and that every point a claim reads
/// is one of the figure's rows (its arm as the rows spell it, its workload and variant; T_s of
/// a row's workload), so that no claim names a point the figure never measures.
#[cfg(test)]
pub fn assert_claims(fig: &Figure, ids: &[&str]) {
    let declared: Vec<&str> = fig.claims.iter().map(|c| c.id).collect();
    assert_eq!(declared, ids, "{}", fig.id);
    for c in &fig.claims {
        assert!(
            !c.quote.is_empty() && !c.paper.is_empty(),
            "{}/{}",
            fig.id,
            c.id
        );
        for (pt, _) in c.points() {
            let read = |r: &&Row| {
                r.workload == pt.workload
                    && (pt.runtime == crate::runtimes::SERIAL
                        || (r.variant == pt.variant
                            && Some(&r.runtime) == Arm::parse(pt.runtime).ok().as_ref()))
            };
            assert!(
                fig.rows.iter().any(|r| read(&r)),
                "{}/{}: {pt} is no row of the figure",
                fig.id,
                c.id
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_grouped_by_benchmark() {
        let r = rows(&FIBRIL_BENCHMARKS, &FIBRIL_RUNTIMES, |b, rt| {
            (b == "fib" && rt == "fibril").then(PaperValues::default)
        });
        assert_eq!(r.len(), 72);
        assert_eq!(
            (r[42].bench.as_str(), r[42].workload.as_str()),
            ("matmul", "mm/input=fibril")
        );
        assert_eq!(r.iter().filter(|r| r.paper.is_some()).count(), 1);
        assert!(r.iter().all(|r| r.variant == Variant::Fj));
    }

    #[test]
    fn libforks_claims_csv_gives_numbers_and_units() {
        assert_eq!(libfork_claim("fib overhead T1/Ts libfork"), 8.8);
        assert_eq!(
            libfork_claim_text("fib at 112 cores: libfork faster than tbb"),
            "7.5x"
        );
        let r = LIBFORK_CLAIMS.parse();
        assert_eq!(r.header, ["claim", "value", "unit"]);
        for rec in &r.records {
            libfork_claim(r.field(rec, "claim").expect("a claim"));
        }
    }

    #[test]
    fn libforks_arms_are_canonical_and_on_its_paper_settings() {
        use crate::runtimes::Arm;
        use stealbench_schedulers::{IdlePolicy, Pinning, PoolConfig, VictimPolicy};
        for (arm, idle) in [(LAZY_LF, IdlePolicy::Lazy), (BUSY_LF, IdlePolicy::Busy)] {
            let a = Arm::parse(arm).unwrap();
            assert_eq!(a.spec(), arm, "the rows' spelling is the canonical one");
            // Whatever the run's pinning, libfork's arms are pinned as the paper's runs.
            let c = a.configure(PoolConfig::with_workers(4));
            assert_eq!(
                (c.idle, c.victim, c.pinning),
                (idle, VictimPolicy::NumaWeighted, Pinning::Scatter)
            );
        }
        // The other runtimes of libfork's figures keep their defaults.
        for rt in &LIBFORK_RUNTIMES[2..] {
            let c = Arm::parse(rt)
                .unwrap()
                .configure(PoolConfig::with_workers(4));
            assert_eq!(c, PoolConfig::with_workers(4), "{rt}");
        }
    }
}
