//! What the Fibril (SPAA'16) and libfork figures share: their benchmarks (the paper's name and
//! our workload spec), the one mapping of the papers' systems to our runtime arms, the rows
//! built from them, the sentences of the captions that say what ran, and the constructors of
//! Fibril's figures (its tables' rows, the ratios of its Figures 3 and 4).
//!
//! The mapping of the papers' systems to ours (the figures name these constants, never an arm
//! of their own for a paper's system):
//!
//! | paper | ours |
//! |---|---|
//! | Fibril | [`FIBRIL`]: `fibril` |
//! | Fibril (w/o unmap), Fibril's Figure 4 | [`FIBRIL_NO_UNMAP`]: `fibril/unmap=off` |
//! | Intel Cilk Plus (Fibril's comparison) | [`CILK_PLUS`]: `abp`, a stand-in ([`no_cilk_plus!`], [`CILK_PLUS_STAND_IN`]) |
//! | Intel TBB (both papers) | [`TBB`]: `tbb`, oneTBB (`--features tbb`) |
//! | OpenMP, libomp (libfork's comparison) | [`OPENMP`]: `openmp`, LLVM's libomp (`--features openmp`) |
//! | libfork lazy / busy (Lazy-LF, Busy-LF) | [`LAZY_LF`], [`BUSY_LF`] in libfork's figures |
//! | taskflow (libfork's comparison) | none ([`no_taskflow!`]) |
//!
//! After a paper's systems come its baselines, the runtimes that paper did not run: the
//! registry says which ([`baselines`]: every runtime whose role is a baseline, and the other
//! papers' systems that name the paper), in listing order. A build without `tbb` or `openmp`
//! lists their rows as not built, and a claim that reads them is `n/a` with the feature that
//! builds them.

use super::ratio::Relative;
use super::{Figure, Metric, Reference, ReferenceCsv, reference_csv};
use crate::grid::{PaperValues, Row};
use crate::runtimes::{Arm, registered_arms};
use stealbench_schedulers::registry::{Paper, baselines};
use stealbench_workloads::Variant;

/// Fibril's twelve benchmarks (its Table 1): the paper's name, then our workload (matmul is
/// `mm` on Fibril's matrix, n = 2048 at paper size).
pub(crate) const FIBRIL_BENCHMARKS: [(&str, &str); 12] = [
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

/// Fibril: `fibril`.
pub(crate) const FIBRIL: &str = "fibril";

/// The arm of Fibril (w/o unmap), the paper's Fibril with its unmap a no-op (the third line of
/// Fibril's Figure 4): `fibril` with no page of a suspended stack released.
macro_rules! fibril_no_unmap {
    () => {
        "fibril/unmap=off"
    };
}
pub(crate) use fibril_no_unmap;

/// Fibril (w/o unmap): `fibril/unmap=off` (`fibril_no_unmap!`).
pub(crate) const FIBRIL_NO_UNMAP: &str = fibril_no_unmap!();

/// Intel Cilk Plus: stood in for by `abp`, work stealing on stackful fibers as Cilk's
/// ([`no_cilk_plus!`]); a claim that compares Fibril with it is `n/a` ([`CILK_PLUS_STAND_IN`]).
pub(crate) const CILK_PLUS: &str = "abp";

/// Why the paper's Cilk Plus has no real row (`no_cilk_plus!`, also in the captions).
macro_rules! no_cilk_plus {
    () => {
        "Cilk Plus has no real row (icc's Cilk Plus is gone from compilers): `abp` stands in \
         for it, running Fibril's own join and fiber pool"
    };
}
pub(crate) use no_cilk_plus;

/// Why a claim that compares Fibril with Cilk Plus is `n/a`: the one place the stand-in is
/// explained for the claims ([`no_cilk_plus!`], then why `abp` cannot decide it). One rule for
/// every such claim (Fibril's Figures 3 and 4, Tables 2 and 4): `n/a`, its numbers shown; where
/// the paper's sentence names a cause that one of our arms isolates, the claim compares with
/// that arm instead (unmapping's page faults: [`FIBRIL_NO_UNMAP`]).
pub(crate) const CILK_PLUS_STAND_IN: &str = concat!(
    no_cilk_plus!(),
    "; the two differ only in their stack pools and in `fibril`'s release of a suspended \
     stack's pages, and the paper's lead over Cilk Plus comes from Fibril's calling \
     conventions, which `abp` has too, so the ratio is about 1 by construction"
);

/// Intel TBB: `tbb`, oneTBB through the schedulers' C++ shim (cargo feature `tbb`).
pub(crate) const TBB: &str = "tbb";

/// OpenMP: `openmp`, LLVM's libomp with untied tasks (cargo feature `openmp`).
pub(crate) const OPENMP: &str = "openmp";

/// Why taskflow has no row (`no_taskflow!`, also in the captions).
macro_rules! no_taskflow {
    () => {
        "taskflow has no row (no Debian package provides it)"
    };
}
pub(crate) use no_taskflow;

/// The sentence of the captions on TBB and OpenMP: the real libraries, each behind its cargo
/// feature.
macro_rules! tbb_openmp_caption {
    () => {
        "TBB is `tbb` (oneTBB, `--features tbb`), OpenMP `openmp` (libomp, `--features openmp`)"
    };
}
pub(crate) use tbb_openmp_caption;

/// The sentence of the captions on TBB alone (Fibril's paper has no OpenMP).
macro_rules! tbb_caption {
    () => {
        "TBB is `tbb` (oneTBB, `--features tbb`)"
    };
}
pub(crate) use tbb_caption;

/// The sentence of the captions on the baselines, the rows after the paper's systems.
macro_rules! baselines_caption {
    () => {
        "the rows after the paper's systems are baselines the paper did not run (`stealbench          list` describes each)"
    };
}
pub(crate) use baselines_caption;

/// The sentences of Fibril's tables' captions that say what ran ([`FIBRIL_TABLE_RUNTIMES`]).
macro_rules! fibril_table_runtimes_caption {
    () => {
        concat!(
            "Here Fibril is `fibril`; ",
            $crate::figures::suites::tbb_caption!(),
            "; ",
            $crate::figures::suites::no_cilk_plus!(),
            "; OpenMP and taskflow are not in this paper. "
        )
    };
}
pub(crate) use fibril_table_runtimes_caption;

/// The sentences of Fibril's Figures 3 and 4's captions that say what ran
/// ([`fibril_runtimes`]).
macro_rules! fibril_runtimes_caption {
    () => {
        concat!(
            $crate::figures::suites::fibril_table_runtimes_caption!(),
            "In Figures 3 and 4 ",
            $crate::figures::suites::baselines_caption!(),
            ", each in every arm the registry lists for it. "
        )
    };
}
pub(crate) use fibril_runtimes_caption;

/// The arms of `paper`'s baselines, in the order of their rows: each runtime in every arm the
/// registry lists for it (`all_arms`), or on its default alone.
fn baseline_arms(paper: Paper, all_arms: bool) -> Vec<String> {
    baselines(paper)
        .flat_map(|r| match all_arms {
            true => registered_arms(r).iter().map(Arm::spec).collect(),
            false => vec![r.name.to_string()],
        })
        .collect()
}

/// `systems`, the paper's systems in its order, then `paper`'s baselines ([`baseline_arms`]).
fn with_baseline_arms(systems: &[&str], paper: Paper, all_arms: bool) -> Vec<String> {
    let systems = systems.iter().map(|s| s.to_string());
    systems.chain(baseline_arms(paper, all_arms)).collect()
}

/// The runtimes of Fibril's Figure 3 here: Fibril, Cilk Plus (`abp`), TBB (`tbb`), then the
/// paper's baselines, each in every registered arm.
pub(crate) fn fibril_runtimes() -> Vec<String> {
    with_baseline_arms(&FIBRIL_TABLE_RUNTIMES, Paper::Fibril, true)
}

/// The runtimes of Fibril's Figure 4: [`fibril_runtimes`] with Fibril (w/o unmap) as its third
/// line, as in the paper's figure.
pub(crate) fn fibril_fig4_runtimes() -> Vec<String> {
    with_baseline_arms(
        &[FIBRIL, CILK_PLUS, FIBRIL_NO_UNMAP, TBB],
        Paper::Fibril,
        true,
    )
}

/// The runtimes of Fibril's Tables 2 and 4: Fibril, Cilk Plus (`abp`), TBB (`tbb`), the
/// paper's columns.
pub(crate) const FIBRIL_TABLE_RUNTIMES: [&str; 3] = [FIBRIL, CILK_PLUS, TBB];

/// The thread count of Fibril's tables and of its Figure 4's ratios: the 72 hardware threads of
/// its machine (2 x 18 cores, 2-way SMT).
pub(crate) const FIBRIL_P: usize = 72;

/// libfork's classic benchmarks (its Table I, Figure 5; matmul on libfork's n = 8192).
pub(crate) const LIBFORK_CLASSIC: [(&str, &str); 4] = [
    ("fib", "fib"),
    ("integrate", "integrate"),
    ("nqueens", "nqueens"),
    ("matmul", "mm/input=libfork"),
];

/// libfork's UTS trees (its Table I, Figure 6), each a spec of the `uts` workload.
pub(crate) const LIBFORK_UTS: [(&str, &str); 6] = [
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
pub(crate) const LAZY_LF: &str = lazy_lf!();

/// Busy-LF as libfork's figures run it (`busy_lf!`).
pub(crate) const BUSY_LF: &str = busy_lf!();

/// The name of `runtime` in a plot's legend: the paper's for libfork's two arms of its figures
/// (Lazy-LF, Busy-LF: their spellings, long for a legend, are in the captions and tables), the
/// arm's spelling for every other.
pub(crate) fn legend_name(runtime: &Arm) -> String {
    let spelt = runtime.to_string();
    match spelt.as_str() {
        LAZY_LF => "Lazy-LF".to_string(),
        BUSY_LF => "Busy-LF".to_string(),
        _ => spelt,
    }
}

/// The sentences of libfork's figures' captions that say what ran: Lazy-LF and Busy-LF on
/// libfork's paper settings, TBB and OpenMP the real libraries, the other runtimes baselines on
/// their defaults ([`libfork_runtimes`]).
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
             other worker; pinned). ",
            $crate::figures::suites::tbb_openmp_caption!(),
            "; ",
            $crate::figures::suites::baselines_caption!(),
            "; all but Lazy-LF and Busy-LF run on their own defaults, unpinned unless \
             `--pinning` is given; ",
            $crate::figures::suites::no_taskflow!(),
            ". "
        )
    };
}
pub(crate) use libfork_runtimes_caption;

/// The runtimes of libfork's figures here: Lazy-LF and Busy-LF on libfork's paper settings,
/// then on their defaults (unpinned, unless `--pinning` says otherwise) TBB (`tbb`), OpenMP
/// (`openmp`) and the paper's baselines.
pub(crate) fn libfork_runtimes() -> Vec<String> {
    with_baseline_arms(&LIBFORK_SYSTEMS, Paper::Libfork, false)
}

/// libfork's systems, in its figures' order: Lazy-LF, Busy-LF, TBB, OpenMP.
const LIBFORK_SYSTEMS: [&str; 4] = [LAZY_LF, BUSY_LF, TBB, OPENMP];

/// The numbers libfork's text states outside its tables (`claim,value,unit`), embedded: the
/// bands of its figures' claims read them by [`libfork_claim`].
pub(crate) const LIBFORK_CLAIMS: ReferenceCsv = reference_csv!("libfork_claims.csv");

/// The value of the record `claim` of [`LIBFORK_CLAIMS`] (`fib overhead T1/Ts libfork`: 8.8).
/// Panics when there is none or it is no number: the claims that read it are built by every
/// figure's test.
pub(crate) fn libfork_claim(claim: &str) -> f64 {
    libfork_claim_record(claim).0
}

/// The value of the record `claim` of [`LIBFORK_CLAIMS`] with its unit, as a claim's paper
/// number (`8.8x`).
pub(crate) fn libfork_claim_text(claim: &str) -> String {
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

/// Why a claim about the large UTS trees (T1L, T1XXL, T3L, T3XXL) decides from size `small`
/// on: `quick` cuts them to no more than their base trees, `small` keeps the paper's order of
/// sizes.
pub(crate) const LARGE_TREES_FROM_SMALL: &str = "at quick the large trees are no larger than their \
     base trees (T1L 1.6M nodes and T1XXL, cut at T1's depth 10, T1 itself, against T1's \
     4.1M; T3L and T3XXL cut at depth 750, 2.4M and 2.5M nodes against T3's 4.1M); small \
     keeps the paper's order, T1 < T1L (6.4M) < T1XXL (264M) and T3 < T3L (12.7M, depth \
     2500) < T3XXL (155M, depth 20000)";

/// One fj row per benchmark and runtime, grouped by benchmark; `paper` gives a row its paper
/// values (`None`: a runtime the paper did not run, or no number).
pub(crate) fn rows(
    benchmarks: &[(&str, &str)],
    runtimes: &[impl AsRef<str>],
    paper: impl Fn(&str, &str) -> Option<PaperValues>,
) -> Vec<Row> {
    let mut out = Vec::new();
    for &(bench, workload) in benchmarks {
        for rt in runtimes.iter().map(AsRef::as_ref) {
            out.push(Row {
                paper: paper(bench, rt),
                ..Row::new(bench, workload, Variant::Fj, rt)
            });
        }
    }
    out
}

/// The rows of libfork's figures: `benchmarks` on [`libfork_runtimes`], none with paper
/// values.
pub(crate) fn libfork_rows(benchmarks: &[(&str, &str)]) -> Vec<Row> {
    rows(benchmarks, &libfork_runtimes(), |_, _| None)
}

/// One of Fibril's Tables 2 and 4: the twelve benchmarks on [`FIBRIL_TABLE_RUNTIMES`], then
/// on the arms of `extra` (rows the paper's table has no column for), at [`FIBRIL_P`], the
/// paper's rows with its cells (of `reference`) beside ours.
pub(crate) fn fibril_table(
    id: &'static str,
    title: &'static str,
    caption: &'static str,
    reference: ReferenceCsv,
    metric: &'static dyn Metric,
    extra: &[&str],
) -> Figure {
    let runtimes: Vec<&str> = FIBRIL_TABLE_RUNTIMES.iter().chain(extra).copied().collect();
    let rows = rows(&FIBRIL_BENCHMARKS, &runtimes, |_, rt| {
        FIBRIL_TABLE_RUNTIMES
            .contains(&rt)
            .then(PaperValues::default)
    });
    Figure::new(id, title, caption, &[FIBRIL_P], metric, rows).with_reference(reference)
}

/// The ratios Fibril's text states (its Figures 3 and 4), embedded.
const FIBRIL_SPEEDUPS: ReferenceCsv = reference_csv!("fibril_speedups.csv");

/// The metric of Fibril's Figures 3 and 4: time, T_s / T_P and the ratios against
/// [`CILK_PLUS`] and [`TBB`], with the paper's ratios from the columns `paper_columns`
/// (against Cilk Plus, against TBB) of its speedups at `paper_p`.
pub(crate) const fn fibril_ratios(
    paper_columns: &'static [&'static str; 2],
    paper_p: usize,
    ideal: bool,
    y_label: &'static str,
) -> Relative {
    Relative {
        against: &[CILK_PLUS, TBB],
        paper_names: &["Cilk Plus", "TBB"],
        reference: FIBRIL_SPEEDUPS.text,
        paper_columns,
        paper_p,
        ideal,
        y_label,
    }
}

/// Fibril's Figure 3 or 4 of `metric` (one of [`fibril_ratios`]): the twelve benchmarks on
/// `runtimes` ([`fibril_runtimes`], [`fibril_fig4_runtimes`]), the [`FIBRIL`] rows with the
/// paper's ratio against Cilk Plus at the metric's P.
pub(crate) fn fibril_ratio_figure(
    id: &'static str,
    title: &'static str,
    caption: &'static str,
    paper_workers: &'static [usize],
    metric: &'static Relative,
    runtimes: &[String],
) -> Figure {
    let rows = rows(&FIBRIL_BENCHMARKS, runtimes, |bench, rt| {
        (rt == FIBRIL).then(|| PaperValues {
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
pub(crate) fn assert_claims(fig: &Figure, ids: &[&str]) {
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
                    && (crate::runtimes::kernel(Default::default()) == pt.runtime
                        || (r.variant == pt.variant && r.runtime == pt.runtime))
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
        let runtimes = fibril_runtimes();
        let n = runtimes.len();
        let r = rows(&FIBRIL_BENCHMARKS, &runtimes, |b, rt| {
            (b == "fib" && rt == FIBRIL).then(PaperValues::default)
        });
        assert_eq!(r.len(), 12 * n);
        assert_eq!(
            (
                r[7 * n].bench.as_str(),
                r[7 * n].workload.to_string().as_str()
            ),
            ("matmul", "mm/input=fibril")
        );
        assert_eq!(r.iter().filter(|r| r.paper.is_some()).count(), 1);
        assert!(r.iter().all(|r| r.variant == Variant::Fj));
    }

    #[test]
    fn the_papers_systems_map_to_registered_arms_once() {
        // Every arm of the mapping parses (`tbb` and `openmp` in a build without them too)
        // and is spelt canonically.
        for arm in [FIBRIL, FIBRIL_NO_UNMAP, CILK_PLUS, TBB, OPENMP] {
            assert_eq!(Arm::parse(arm).unwrap().spec(), arm);
        }
        assert_eq!(Arm::parse(FIBRIL_NO_UNMAP).unwrap().info.name, FIBRIL);
        // Figure 4 is Figures 3's runtimes with Fibril (w/o unmap) as its third line.
        let mut fig4 = fibril_runtimes();
        fig4.insert(2, FIBRIL_NO_UNMAP.to_string());
        assert_eq!(fig4, fibril_fig4_runtimes());
        assert_eq!(FIBRIL_TABLE_RUNTIMES, fibril_runtimes()[..3]);
        // Each paper's systems are, by the registry, its own; the rows after them are its
        // baselines, in listing order, Fibril's in every registered arm, libfork's on their
        // defaults.
        let fibril_systems = [FIBRIL, CILK_PLUS, FIBRIL_NO_UNMAP, TBB];
        for (paper, systems, runtimes) in [
            (Paper::Fibril, &fibril_systems[..], fibril_fig4_runtimes()),
            (Paper::Libfork, &LIBFORK_SYSTEMS[..], libfork_runtimes()),
        ] {
            assert_eq!(runtimes[..systems.len()], *systems);
            for rt in systems {
                assert!(
                    Arm::parse(rt).unwrap().info.of(paper),
                    "{rt} is not {paper:?}'s"
                );
            }
            let mut tail: Vec<&str> = runtimes[systems.len()..]
                .iter()
                .map(|rt| Arm::parse(rt).unwrap().info.name)
                .collect();
            let arms = tail.len();
            tail.dedup();
            assert_eq!(tail, baselines(paper).map(|r| r.name).collect::<Vec<_>>());
            let every_arm: usize = baselines(paper).map(|r| 1 + r.arms.len()).sum();
            let want = if paper == Paper::Fibril {
                every_arm
            } else {
                tail.len()
            };
            assert_eq!(arms, want, "{paper:?}");
        }
    }

    #[test]
    fn the_captions_name_the_mappings_arms() {
        let fibril = fibril_runtimes_caption!();
        for arm in [FIBRIL, CILK_PLUS, TBB] {
            assert!(fibril.contains(&format!("`{arm}`")), "{arm}: {fibril}");
        }
        assert!(fibril.contains(no_cilk_plus!()));
        let libfork = libfork_runtimes_caption!();
        for arm in LIBFORK_SYSTEMS {
            assert!(libfork.contains(&format!("`{arm}`")), "{arm}: {libfork}");
        }
        assert!(libfork.contains(no_taskflow!()));
        for caption in [fibril, libfork] {
            assert!(caption.contains(baselines_caption!()), "{caption}");
        }
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
        for rt in &libfork_runtimes()[2..] {
            let c = Arm::parse(rt)
                .unwrap()
                .configure(PoolConfig::with_workers(4));
            assert_eq!(c, PoolConfig::with_workers(4), "{rt}");
        }
    }
}
