//! libfork (Williams and Elliott) Figure 5: time and speedup T_s / T_P of the classic
//! benchmarks (fib, integrate, nqueens, matmul) against P for libfork's busy and lazy
//! schedulers, TBB, OpenMP and taskflow.
//!
//! The paper plots them (no numbers); its text states the overheads T_1 / T_s on fib (libfork
//! 8.8, OpenMP 41, TBB 57, taskflow 180) and the ratios at 112 cores (fib: libfork 7.5x
//! faster than TBB, 24x than OpenMP; integrate 4.5x and 14x), which the caption repeats. Here
//! Lazy-LF is [`LAZY_LF`](super::suites::LAZY_LF) and Busy-LF
//! [`BUSY_LF`](super::suites::BUSY_LF) (libfork on its paper's settings: NUMA victims by Eq. 6,
//! pinned workers) and TBB `rayon`; `abp`, `fibril` and `tokio` run beside them, all four on
//! their defaults; OpenMP and taskflow have no counterpart. A time needs a core per worker: by
//! default the figure measures the paper's P up to this machine's cores.
//!
//! Its claims ([`claims`]): libfork's fib overhead T_1 / T_s against the paper's 8.8 and below
//! the other libraries' (41 and up), its busy and lazy schedulers alike, linear scaling at
//! P = 2 and up to 56 cores (the latter inconclusive on fewer cores), and its ratios against
//! TBB (`n/a`: `rayon` stands in for TBB). The numbers come from
//! `paper-figures/reference/libfork_claims.csv`; OpenMP and taskflow have no row, so their
//! numbers are only the bounds of the claims that name them.

use super::metric::Time;
use super::suites::{
    BUSY_LF, LAZY_LF, LIBFORK_CLASSIC, TBB_STAND_IN, libfork_claim, libfork_claim_text,
    libfork_rows, libfork_runtimes_caption,
};
use super::{Figure, SpeedupBase};
use crate::claims::{Band, Case, Check, Claim, Q, case, time, ts};
use stealbench_workloads::Variant;

/// The figure's id.
pub const ID: &str = "libfork-fig5";
/// The figure's title.
pub const TITLE: &str = "libfork Figure 5: classic benchmarks (fib, integrate, nqueens, matmul), time and speedup against P";

/// The paper's P: 1 to 112 (2 x 56 cores); the plot's exact points are not in the text.
pub const PAPER_WORKERS: &[usize] = &[1, 2, 4, 8, 16, 32, 56, 112];

/// The figure: the four benchmarks on every runtime.
pub fn figure() -> Figure {
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
            "OpenMP and taskflow have no counterpart here. matmul is our `mm`. The paper \
             prints no times: no paper value is beside ours."
        ),
        PAPER_WORKERS,
        &Time(SpeedupBase::Serial),
        libfork_rows(&LIBFORK_CLASSIC),
    )
    .with_claims(claims())
}

/// libfork's two arms of the figures, with their names in the paper.
pub const LIBFORK_ARMS: [(&str, &str); 2] = [("Lazy-LF", LAZY_LF), ("Busy-LF", BUSY_LF)];

/// The fraction of P that a speedup T_1 / T_P must reach to count as linear.
pub const LINEAR: f64 = 0.75;

/// T_1 / T_P of `arm` on `workload`.
fn self_speedup(arm: &'static str, workload: &str, p: usize) -> Q {
    time(arm, workload, Variant::Fj, 1).over(time(arm, workload, Variant::Fj, p))
}

/// T_P of `rayon` over T_P of `arm` on `workload`: how many times faster than TBB.
fn over_tbb(arm: &'static str, workload: &str, p: usize) -> Q {
    time("rayon", workload, Variant::Fj, p).over(time(arm, workload, Variant::Fj, p))
}

/// For each of libfork's arms, `q` of it, labelled `what` and the arm.
fn per_arm(what: &str, q: impl Fn(&'static str) -> Q) -> Vec<Case> {
    LIBFORK_ARMS
        .iter()
        .map(|(name, arm)| case(format!("{what} {name}"), q(arm)))
        .collect()
}

/// The linear-scaling claim at `p`: T_1 / T_P of both arms on the four benchmarks at least
/// [`LINEAR`] P.
fn linear_at(id: &'static str, p: usize) -> Claim {
    Claim::new(
        id,
        "libfork's execution time should scale as Eq. (2). This linear scaling is apparent \
         in almost all the benchmarks up to around 56 cores",
        format!("T_1/T_P linear in P up to 56 cores (here: at least {LINEAR} P at P = {p})"),
        Check::Within {
            cases: LIBFORK_CLASSIC
                .iter()
                .flat_map(|(bench, w)| per_arm(bench, |arm| self_speedup(arm, w, p)))
                .collect(),
            band: Band::at_least(LINEAR * p as f64),
            unit: "x",
        },
    )
}

/// The paper's claims the figure tests (see the module documentation).
pub fn claims() -> Vec<Claim> {
    let overhead = |arm: &'static str| time(arm, "fib", Variant::Fj, 1).over(ts("fib"));
    let libfork = libfork_claim("fib overhead T1/Ts libfork");
    let openmp = libfork_claim("fib overhead T1/Ts openmp");
    let tbb = libfork_claim("fib overhead T1/Ts tbb");
    let vs_tbb = |id, bench: &'static str, workload: &'static str, key: &str| {
        Claim::new(
            id,
            "at 112 cores where libfork is 7.5× and 4.5× faster than TBB (fib, integrate)",
            format!("{} at P = 112", libfork_claim_text(key)),
            Check::Within {
                cases: per_arm(bench, |arm| over_tbb(arm, workload, 112)),
                band: Band::around(libfork_claim(key), 0.25),
                unit: "x",
            },
        )
        .stand_in(TBB_STAND_IN)
    };
    vec![
        Claim::new(
            "fib-overhead",
            "for Fibonacci ... the overheads, T_1/T_S, where 8.8, 41, 57 and, 180 for libfork, \
             openMP, TBB, and, taskflow",
            libfork_claim_text("fib overhead T1/Ts libfork"),
            Check::Within {
                cases: per_arm("fib", overhead),
                band: Band::around(libfork, 0.5),
                unit: "x",
            },
        ),
        Claim::new(
            "fib-overhead-lowest",
            "the overheads, T_1/T_S, where 8.8, 41, 57 and, 180 for libfork, openMP, TBB, and, \
             taskflow",
            format!("libfork {libfork}x, below OpenMP's {openmp}x, the lowest of the others'"),
            Check::Within {
                cases: per_arm("fib", overhead),
                band: Band::at_most(openmp),
                unit: "x",
            },
        ),
        Claim::new(
            "tbb-fib-overhead",
            "the overheads, T_1/T_S, where ... 57 ... for ... TBB",
            libfork_claim_text("fib overhead T1/Ts tbb"),
            Check::Within {
                cases: vec![case("fib rayon", overhead("rayon"))],
                band: Band::around(tbb, 0.5),
                unit: "x",
            },
        )
        .stand_in(TBB_STAND_IN),
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
        ),
        linear_at("linear-at-2", 2),
        linear_at("linear-to-56", 56),
        vs_tbb(
            "fib-faster-than-tbb",
            "fib",
            "fib",
            "fib at 112 cores: libfork faster than tbb",
        ),
        vs_tbb(
            "integrate-faster-than-tbb",
            "integrate",
            "integrate",
            "integrate at 112 cores: libfork faster than tbb",
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_benchmarks_on_six_runtimes() {
        let f = figure();
        assert_eq!(f.rows.len(), 24);
        assert!(f.rows.iter().all(|r| r.paper.is_none()));
        let runtimes: Vec<String> = f.rows[..6].iter().map(|r| r.runtime.to_string()).collect();
        assert_eq!(
            runtimes,
            [
                "libfork/victim=numa/pinning=scatter",
                "libfork/idle=busy/victim=numa/pinning=scatter",
                "abp",
                "fibril",
                "rayon",
                "tokio"
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
    fn claims_read_the_figures_rows_and_the_claims_csv() {
        let f = figure();
        super::super::suites::assert_claims(
            &f,
            &[
                "fib-overhead",
                "fib-overhead-lowest",
                "tbb-fib-overhead",
                "busy-lazy-alike",
                "linear-at-2",
                "linear-to-56",
                "fib-faster-than-tbb",
                "integrate-faster-than-tbb",
            ],
        );
        let claim = |id: &str| f.claims.iter().find(|c| c.id == id).unwrap();
        assert_eq!(claim("fib-overhead").paper, "8.8x");
        assert_eq!(claim("fib-overhead-lowest").check.band(), "≤ 41 x");
        // Every claim against TBB is n/a here; the ones on libfork alone are not.
        for c in &f.claims {
            let tbb = c.points().iter().any(|(p, _)| p.runtime == "rayon");
            assert_eq!(c.stand_in.is_some(), tbb, "{}", c.id);
        }
        assert_eq!(claim("linear-to-56").max_p(), 56);
    }
}
