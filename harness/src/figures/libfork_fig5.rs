//! libfork (Williams and Elliott) Figure 5: time and speedup T_s / T_P of the classic
//! benchmarks (fib, integrate, nqueens, matmul) against P for libfork's busy and lazy
//! schedulers, TBB, OpenMP and taskflow.
//!
//! The paper plots them (no numbers); its text states the overheads T_1 / T_s on fib (libfork
//! 8.8, OpenMP 41, TBB 57, taskflow 180) and the ratios at 112 cores (fib: libfork 7.5x
//! faster than TBB, 24x than OpenMP; integrate 4.5x and 14x), which the caption repeats. The
//! rows are [`libfork_runtimes`](super::suites::libfork_runtimes), the paper's systems mapped
//! to our arms in [`super::suites`] (Lazy-LF and Busy-LF libfork on its paper's settings, TBB
//! oneTBB, OpenMP libomp, then the baselines). A time needs a core per worker: by default the figure measures the paper's P up
//! to this machine's cores.
//!
//! T_s is the serial code of libfork's benchmark ([`Shape::Libfork`]): its fib is never inlined
//! and returns through an out-parameter, a slower serial fib than the plain recursion, and the
//! one the paper's overheads divide by.
//!
//! Its claims ([`claims`]), each band ± 25 % around the paper's number (the band rule,
//! `claims/check.rs`): libfork's fib overhead T_1 / T_s against the paper's 8.8, and OpenMP's
//! T_1 over libfork's against 41 / 8.8 (the lowest of the others' overheads over libfork's: no
//! T_s in it), TBB's and OpenMP's overheads against the paper's 57 and 41 (the overheads' texts
//! name the serial code they divide by, [`FIB_TS`], libfork's, which the paper divides
//! by too), its busy and lazy schedulers alike, linear scaling (T_1 / T_P about P) at P = 2 and up
//! to 56 cores (the latter inconclusive on fewer cores), its ratios against TBB and OpenMP at
//! 112 cores, and the abstract's averages, 7.2x faster than OpenMP and 2.7x than TBB (the mean
//! over the four benchmarks at 112 cores). The numbers come from
//! `paper-figures/reference/libfork_claims.csv`; taskflow has no row, so its number is in no
//! band.

use super::metric::Time;
use super::suites::{
    BUSY_LF, LAZY_LF, LIBFORK_CLASSIC, OPENMP, TBB, libfork_claim,
    libfork_claim_text, libfork_rows, libfork_runtimes_caption,
};
use super::{Figure, SpeedupBase};
use crate::claims::quantity::number;
use crate::claims::{Band, Case, Check, Claim, Q, case, time, ts};
use stealbench_workloads::{Shape, Variant};

/// The figure's id.
pub(crate) const ID: &str = "libfork-fig5";
/// The figure's title.
pub(crate) const TITLE: &str = "libfork Figure 5: classic benchmarks (fib, integrate, nqueens, matmul), time and speedup against P";

/// The paper's P: 1 to 112 (2 x 56 cores); the plot's exact points are not in the text.
pub(crate) const PAPER_WORKERS: &[usize] = &[1, 2, 4, 8, 16, 32, 56, 112];

/// The figure: the four benchmarks on every runtime.
pub(crate) fn figure() -> Figure {
    Figure::new(
        ID,
        TITLE,
        concat!(
            "Classical benchmarks, Busy-LF and Lazy-LF being libfork's busy and lazy \
             schedulers: parallel speedup T_s/T_P (Eq. 15) and efficiency (speedup / P) against \
             the number of cores. The text: on fib the overheads T_1/T_s are 8.8 (libfork), 41 \
             (OpenMP), 57 (TBB) and 180 (taskflow); at 112 cores libfork is 7.5x (fib) and 4.5x \
             (integrate) faster than TBB and 24x and 14x faster than OpenMP. Paper machine: 2 x \
             56-core Xeon Platinum 8480+ (112 cores, two NUMA nodes), Clang 18, medians of 5 \
             runs; inputs fib n=42, integrate n=10^4 eps=1e-9, nqueens n=14, matmul n=8192. ",
            libfork_runtimes_caption!(),
            "matmul is our `mm`. T_s, as the paper's benchmark times it, is the serial code of \
             libfork's benchmark: its fib is never inlined and returns through an \
             out-parameter, the shape the overheads T_1/T_s divide by; its integrate, nqueens \
             and matmul are plain (the page's T_s line). The paper prints no times: no paper \
             value is beside ours."
        ),
        PAPER_WORKERS,
        &Time(SpeedupBase::Serial),
        libfork_rows(&LIBFORK_CLASSIC),
    )
    .with_ts(Shape::Libfork)
    .with_claims(claims())
}

/// libfork's two arms of the figures, with their names in the paper.
pub(crate) const LIBFORK_ARMS: [(&str, &str); 2] = [("Lazy-LF", LAZY_LF), ("Busy-LF", BUSY_LF)];

/// T_1 / T_P of `arm` on `workload`.
fn self_speedup(arm: &'static str, workload: &str, p: usize) -> Q {
    time(arm, workload, Variant::Fj, 1).over(time(arm, workload, Variant::Fj, p))
}

/// T_P of `other` over T_P of `arm` on `workload`: how many times faster than `other`.
fn faster_than(other: &'static str, arm: &'static str, workload: &str, p: usize) -> Q {
    time(other, workload, Variant::Fj, p).over(time(arm, workload, Variant::Fj, p))
}

/// For each of libfork's arms, `q` of it, labelled `what` and the arm.
fn per_arm(what: &str, q: impl Fn(&'static str) -> Q) -> Vec<Case> {
    LIBFORK_ARMS
        .iter()
        .map(|(name, arm)| case(format!("{what} {name}"), q(arm)))
        .collect()
}

/// The linear-scaling claim at `p`: T_1 / T_P of both arms on the four benchmarks about P
/// (Eq. (2), T_P = T_1 / P; the paper prints no speedups, so the band is the model's P within
/// [`Band::ratio`]'s 25 %).
fn linear_at(id: &'static str, p: usize) -> Claim {
    Claim::new(
        id,
        "libfork's execution time should scale as Eq. (2). This linear scaling is apparent \
         in almost all the benchmarks up to around 56 cores",
        format!("T_1/T_P linear in P up to 56 cores, Eq. (2): T_1/T_P = P (here at P = {p})"),
        Check::Within {
            cases: LIBFORK_CLASSIC
                .iter()
                .flat_map(|(bench, w)| per_arm(bench, |arm| self_speedup(arm, w, p)))
                .collect(),
            band: Band::ratio(p as f64),
            unit: "x",
        },
    )
}

/// The serial code T_s of fib is here, for the overhead claims' texts: the paper's T_1 / T_s
/// divides by libfork's own serial fib, and so does ours.
pub(crate) const FIB_TS: &str = "T_s of `fib`, libfork's serial shape \
     (`serial/front=kernel/shape=libfork`: never inlined, its result through an out-parameter)";

/// The text of an overhead claim's paper number `key` of the claims CSV: the number and the
/// serial code both divide by ([`FIB_TS`]).
fn overhead_text(key: &str) -> String {
    format!(
        "{}, T_1 / T_s with T_s libfork's serial fib (bench/source/fib/serial.cpp), as ours: \
         {FIB_TS}, slower than a plain recursive fib (30.8 against 17.0 ms for fib(35) in C++ \
         with g++ 12 -O3)",
        libfork_claim_text(key)
    )
}

/// The mean over the classic benchmarks of T(`other`) / T(Lazy-LF) at `p`.
fn mean_faster_than(other: &'static str, p: usize) -> Q {
    let sum = LIBFORK_CLASSIC
        .iter()
        .map(|(_, w)| faster_than(other, LAZY_LF, w, p))
        .reduce(Q::plus)
        .expect("four benchmarks");
    sum.over(Q::Const(LIBFORK_CLASSIC.len() as f64))
}

/// The abstract's "on average N× faster" than `other` (the record `key` of the claims CSV):
/// the mean over the figure's four benchmarks of T(other) / T(Lazy-LF) at 112 cores.
fn on_average(id: &'static str, other: &'static str, quote: &'static str, key: &str) -> Claim {
    Claim::new(
        id,
        quote,
        format!(
            "{} on average (here the mean over the figure's 4 benchmarks at P = 112, Lazy-LF)",
            libfork_claim_text(key)
        ),
        Check::Within {
            cases: vec![case("mean", mean_faster_than(other, 112))],
            band: Band::ratio(libfork_claim(key)),
            unit: "x",
        },
    )
}

/// The paper's claims the figure tests (see the module documentation).
pub(crate) fn claims() -> Vec<Claim> {
    let overhead = |arm: &'static str| time(arm, "fib", Variant::Fj, 1).over(ts("fib"));
    let libfork = libfork_claim("fib overhead T1/Ts libfork");
    let openmp = libfork_claim("fib overhead T1/Ts openmp");
    let tbb = libfork_claim("fib overhead T1/Ts tbb");
    let faster = |id: &'static str,
                  quote: &'static str,
                  other: &'static str,
                  bench: &'static str,
                  key: &str| {
        Claim::new(
            id,
            quote,
            format!("{} at P = 112", libfork_claim_text(key)),
            Check::Within {
                cases: per_arm(bench, |arm| faster_than(other, arm, bench, 112)),
                band: Band::more(libfork_claim(key)),
                unit: "x",
            },
        )
    };
    let vs_tbb = "at 112 cores where libfork is 7.5× and 4.5× faster than TBB (fib, integrate)";
    let vs_openmp = "at 112 cores where libfork is ... 24× and 14× faster than openMP (fib, \
                     integrate)";
    vec![
        Claim::new(
            "fib-overhead",
            "for Fibonacci ... the overheads, T_1/T_S, where 8.8, 41, 57 and, 180 for libfork, \
             openMP, TBB, and, taskflow",
            overhead_text("fib overhead T1/Ts libfork"),
            Check::Within {
                cases: per_arm("fib", overhead),
                band: Band::ratio(libfork),
                unit: "x",
            },
        ),
        Claim::new(
            "fib-overhead-lowest",
            "the overheads, T_1/T_S, where 8.8, 41, 57 and, 180 for libfork, openMP, TBB, and, \
             taskflow",
            format!(
                "libfork {libfork}x, below OpenMP's {openmp}x, the lowest of the others': \
                 T_1(OpenMP) / T_1(libfork) = {openmp} / {libfork} = {} (no T_s in it)",
                number(openmp / libfork)
            ),
            Check::Within {
                cases: per_arm("fib", |arm| faster_than(OPENMP, arm, "fib", 1)),
                band: Band::more(openmp / libfork),
                unit: "x",
            },
        ),
        Claim::new(
            "tbb-fib-overhead",
            "the overheads, T_1/T_S, where ... 57 ... for ... TBB",
            overhead_text("fib overhead T1/Ts tbb"),
            Check::Within {
                cases: vec![case("fib TBB", overhead(TBB))],
                band: Band::ratio(tbb),
                unit: "x",
            },
        ),
        Claim::new(
            "openmp-fib-overhead",
            "the overheads, T_1/T_S, where ... 41 ... for ... openMP",
            overhead_text("fib overhead T1/Ts openmp"),
            Check::Within {
                cases: vec![case("fib OpenMP", overhead(OPENMP))],
                band: Band::ratio(openmp),
                unit: "x",
            },
        ),
        Claim::new(
            "busy-lazy-alike",
            "Across all the classic benchmarks, libfork's lazy and busy schedulers have almost \
             identical performance",
            "T(Busy-LF) / T(Lazy-LF) = 1 (here within 10 %, at P = 1 and 2)",
            Check::Within {
                cases: LIBFORK_CLASSIC
                    .iter()
                    .flat_map(|(bench, w)| {
                        [1, 2].map(|p| {
                            case(
                                format!("{bench} P={p}"),
                                time(BUSY_LF, w, Variant::Fj, p).over(time(
                                    LAZY_LF,
                                    w,
                                    Variant::Fj,
                                    p,
                                )),
                            )
                        })
                    })
                    .collect(),
                band: Band::around(1.0, 0.1),
                unit: "x",
            },
        )
        .regression(
            "at P = 1 a busy and a lazy pool run the same code path (no worker idles), and at \
             P = 2 they differ only while a worker waits",
        ),
        linear_at("linear-at-2", 2),
        linear_at("linear-to-56", 56),
        faster(
            "fib-faster-than-tbb",
            vs_tbb,
            TBB,
            "fib",
            "fib at 112 cores: libfork faster than tbb",
        ),
        faster(
            "integrate-faster-than-tbb",
            vs_tbb,
            TBB,
            "integrate",
            "integrate at 112 cores: libfork faster than tbb",
        ),
        faster(
            "fib-faster-than-openmp",
            vs_openmp,
            OPENMP,
            "fib",
            "fib at 112 cores: libfork faster than openmp",
        ),
        faster(
            "integrate-faster-than-openmp",
            vs_openmp,
            OPENMP,
            "integrate",
            "integrate at 112 cores: libfork faster than openmp",
        ),
        on_average(
            "faster-than-openmp-on-average",
            OPENMP,
            "Compared to openMP (libomp), libfork is on average 7.2× faster (abstract)",
            "average speedup over openmp",
        ),
        on_average(
            "faster-than-tbb-on-average",
            TBB,
            "compared to Intel's TBB, libfork is on average 2.7× faster (abstract)",
            "average speedup over tbb",
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_benchmarks_on_libforks_runtimes() {
        let f = figure();
        let n = crate::figures::suites::libfork_runtimes().len();
        assert_eq!(f.rows.len(), 4 * n);
        assert!(f.rows.iter().all(|r| r.paper.is_none()));
        let runtimes: Vec<String> = f.rows[..n].iter().map(|r| r.runtime.to_string()).collect();
        assert_eq!(runtimes, crate::figures::suites::libfork_runtimes());
        assert_eq!(
            runtimes[..4],
            [
                "libfork/victim=numa/pinning=scatter",
                "libfork/idle=busy/victim=numa/pinning=scatter",
                "tbb",
                "openmp",
            ]
        );
        assert!(
            f.caption
                .contains("Lazy-LF is `libfork/victim=numa/pinning=scatter`")
        );
        let matmul = f.rows.iter().find(|r| r.bench == "matmul").unwrap();
        assert_eq!(matmul.workload, "mm/input=libfork");
        assert!(f.metric.needs_cores());
    }

    #[test]
    fn overheads_divide_by_libforks_serial_shape_and_the_page_says_so() {
        use crate::testutil::ok_point;
        let f = figure();
        assert_eq!(f.ts, Shape::Libfork);
        let note = crate::figures::ts_note(f.ts);
        assert!(
            note.starts_with("`serial/front=kernel/shape=libfork`")
                && note.contains("never inlined")
                && note.contains("out-parameter"),
            "{note}"
        );
        assert!(f.caption.contains("returns through an out-parameter"));
        // The grid measures libfork's serial fib as T_s, and T_1 / T_s divides by it.
        let grid = crate::grid::Grid::build_with(f.rows.clone(), f.ts, &[1], &Default::default());
        assert_eq!(
            grid.points[0].to_string(),
            "serial/front=kernel/shape=libfork fib-fj P=1"
        );
        let run = crate::results::Summaries::from(vec![
            ok_point("serial/front=kernel", Variant::Fj, 1, 0.05),
            ok_point("serial/front=kernel/shape=libfork", Variant::Fj, 1, 0.1),
            ok_point(LAZY_LF, Variant::Fj, 1, 1.0),
        ])
        .with_ts(f.ts);
        let overhead = time(LAZY_LF, "fib", Variant::Fj, 1).over(ts("fib"));
        assert_eq!(overhead.samples(&run).unwrap().values, [10.0]);
    }

    #[test]
    fn claims_read_the_figures_rows_and_the_claims_csv() {
        let f = figure();
        super::super::suites::assert_claims(
            &f,
            &[
                "fib-overhead",
                "fib-overhead-lowest",
                "tbb-fib-overhead",
                "openmp-fib-overhead",
                "busy-lazy-alike",
                "linear-at-2",
                "linear-to-56",
                "fib-faster-than-tbb",
                "integrate-faster-than-tbb",
                "fib-faster-than-openmp",
                "integrate-faster-than-openmp",
                "faster-than-openmp-on-average",
                "faster-than-tbb-on-average",
            ],
        );
        let claim = |id: &str| f.claims.iter().find(|c| c.id == id).unwrap();
        // Every band closed, ± 25 % around the paper's number; the overheads name the serial
        // code they divide by.
        assert!(claim("fib-overhead").paper.starts_with("8.8x, T_1 / T_s with T_s libfork's"));
        assert!(claim("fib-overhead").paper.contains(FIB_TS));
        assert_eq!(claim("fib-overhead").check.band(), "[6.60, 11] x");
        assert_eq!(claim("tbb-fib-overhead").check.band(), "[42.8, 71.2] x");
        assert_eq!(claim("fib-overhead-lowest").check.band(), "[3.49, 5.82] x");
        assert!(claim("openmp-fib-overhead").paper.starts_with("41x"));
        assert_eq!(claim("fib-faster-than-openmp").check.band(), "[18, 30] x");
        assert_eq!(claim("linear-at-2").check.band(), "[1.50, 2.50] x");
        assert_eq!(claim("faster-than-openmp-on-average").check.band(), "[5.40, 9] x");
        assert_eq!(claim("faster-than-tbb-on-average").check.band(), "[2.03, 3.38] x");
        // The claims against TBB and OpenMP read the real libraries' rows (n/a in a build
        // without them, by the gate, not by a stand-in), each only its own (OpenMP's T_1 is
        // the lowest of the others' in fib-overhead-lowest).
        for c in &f.claims {
            assert!(c.stand_in.is_none(), "{}", c.id);
            for (rt, name) in [("tbb", "tbb"), ("openmp", "openmp")] {
                let reads = c.points().iter().any(|(p, _)| p.runtime == rt);
                let lowest = c.id == "fib-overhead-lowest" && rt == "openmp";
                assert_eq!(reads, c.id.contains(name) || lowest, "{}", c.id);
            }
        }
        assert_eq!(claim("linear-to-56").max_p(), 56);
    }
}
