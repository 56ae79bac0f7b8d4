//! Fibril (SPAA'16) Figure 3: the twelve benchmarks on one worker, relative to the serial
//! elision and to each other: Fibril against Intel Cilk Plus and Intel TBB.
//!
//! The paper plots 1/T_1 normalised by 1/T_serial (T_s / T_1: below 1 means slower than the
//! serial code) for Fibril, Cilk Plus and TBB, and states in its text how many times faster
//! Fibril is than each (`fibril_speedups.csv`, `vs_cilkplus_serial`, `vs_tbb_serial`). Here
//! Fibril is `fibril`, Cilk Plus `abp` (work stealing on stackful fibers) and TBB `rayon` (a
//! library work-stealing pool); `tokio` and libfork's lazy and busy arms are baselines the
//! paper did not run. Every cell gives T_1, T_s / T_1 and the ratios T_1(abp) / T_1(row) and
//! T_1(rayon) / T_1(row); the paper's ratios sit beside the `fibril` rows. The paper's
//! "Fibril (w/o unmap)" is not a runtime here (`FibrilNoUnmap` is a type for the schedulers'
//! tests); OpenMP and taskflow are not in this paper.

use super::ratio::Relative;
use super::suites::{FIBRIL_BENCHMARKS, TBB_STAND_IN, fibril_ratio_figure, fibril_ratios};
use super::Figure;
use crate::claims::{Band, Check, Claim, case, time};
use stealbench_workloads::Variant;

/// The figure's id.
pub const ID: &str = "fibril-fig3";
/// The figure's title.
pub const TITLE: &str =
    "Fibril (SPAA'16) Figure 3: performance on one worker, Fibril vs Cilk Plus (abp) and TBB (rayon)";

/// The P of the figure.
const P: usize = 1;

/// The metric: time, T_s / T_1 and the ratios against `abp` and `rayon` at P = 1.
pub const METRIC: Relative = fibril_ratios(
    &["vs_cilkplus_serial", "vs_tbb_serial"],
    P,
    false,
    "Ts/T1 (1 = the serial code)",
);

/// The figure: the twelve benchmarks on every runtime at P = 1.
pub fn figure() -> Figure {
    fibril_ratio_figure(
        ID,
        TITLE,
        "The relative performance on one thread: 1/T_1 of Fibril, Cilk Plus and TBB \
         normalised by 1/T_serial (below one: slower than the serial version). The \
         text: Fibril's fib, integrate, knapsack, matmul, nqueens and quicksort \
         outperform Cilk Plus's by 1.9x, 1.3x, 1.5x, 1.7x, 1.4x and 1.6x and TBB's by \
         6.0x, 3.6x, 4.2x, 2.5x, 2.3x and 2.0x; fft, heat, lu, rectmul and strassen \
         perform about the same on all three. Paper machine: 2 x 18-core Haswell, \
         2.3 GHz, GCC 5.2 -O2, mean of 10 runs, 1 MiB stacks. Here Fibril is \
         `fibril`, Cilk Plus `abp` and TBB `rayon`; `tokio` and libfork's lazy and \
         busy arms are baselines the paper did not run; OpenMP and taskflow have no \
         counterpart here, nor has Fibril (w/o unmap). matmul is our `mm` and \
         strassen our `smm`. Each cell: T_1, then T_s/T_1 and how many times faster \
         than `abp` and `rayon` (T_1(abp)/T_1(row), T_1(rayon)/T_1(row)); the paper's \
         ratios beside the `fibril` rows.",
        &[P],
        &METRIC,
    )
    .with_claims(claims())
}

/// Why a claim against Cilk Plus's times is n/a: `abp` is `fibril`'s own join.
pub(super) const ABP_SHARES_JOIN: &str = "Cilk Plus is `abp` here, which shares `fibril`'s join \
     code and fiber pool (only their stack pools differ): the paper's lead over Cilk Plus comes \
     from Fibril's calling conventions, which `abp` has too, so the ratio is about 1 by \
     construction";

/// The claims "Fibril's BENCH outperform those of Cilk Plus and TBB by Nx" of Figure 3 (P = 1)
/// or Figure 4 (P = 72), for the benchmarks whose ratios `metric`'s reference gives: T_P(abp)
/// / T_P(fibril) and T_P(rayon) / T_P(fibril), each at least 0.9 times the smallest ratio the
/// paper gives, both n/a here (see [`ABP_SHARES_JOIN`], [`TBB_STAND_IN`]).
pub(super) fn faster_claims(
    metric: &Relative,
    p: usize,
    ids: [&'static str; 2],
    quotes: [&'static str; 2],
) -> Vec<Claim> {
    [(0, "abp", ABP_SHARES_JOIN), (1, "rayon", TBB_STAND_IN)]
        .into_iter()
        .map(|(i, against, why)| {
            let benches: Vec<(&str, &str, f64)> = FIBRIL_BENCHMARKS
                .iter()
                .filter_map(|&(b, w)| Some((b, w, metric.paper_ratio(b, i)?)))
                .collect();
            let least = benches.iter().map(|b| b.2).fold(f64::INFINITY, f64::min);
            let paper = benches
                .iter()
                .map(|(b, _, r)| format!("{b} {r:.1}x"))
                .collect::<Vec<_>>()
                .join(", ");
            Claim::new(
                ids[i],
                quotes[i],
                format!("T_{p}({}) / T_{p}(Fibril): {paper}", metric.paper_names[i]),
                Check::Within {
                    cases: benches
                        .iter()
                        .map(|&(b, w, _)| {
                            case(
                                b,
                                time(against, w, Variant::Fj, p)
                                    .over(time("fibril", w, Variant::Fj, p)),
                            )
                        })
                        .collect(),
                    band: Band::at_least(0.9 * least),
                    unit: "x",
                },
            )
            .stand_in(why)
        })
        .collect()
}

/// The floating-point benchmarks the paper finds alike on all three runtimes (our strassen is
/// `smm`).
const ALIKE: [&str; 5] = ["fft", "heat", "lu", "rectmul", "strassen"];

/// The figure's claims: Fibril faster than Cilk Plus and TBB on one thread, and fft, heat, lu,
/// rectmul and strassen alike on all three (T_1(abp) / T_1(fibril) within 10 % of 1); all n/a
/// here, where Cilk Plus's stand-in runs Fibril's own code on one worker.
fn claims() -> Vec<Claim> {
    let mut claims = faster_claims(
        &METRIC,
        P,
        ["faster-than-cilkplus", "faster-than-tbb"],
        [
            "fib, integrate, knapsack, matmul, nqueens, and quicksort outperform those of Cilk \
             Plus by 1.9x, 1.3x, 1.5x, 1.7x, 1.4x, and 1.6x",
            "and those of TBB by 6.0x, 3.6x, 4.2x, 2.5x, 2.3x, and 2.0x",
        ],
    );
    claims.push(Claim::new(
        "fp-benchmarks-alike",
        "fft, heat, lu, rectmul, and strassen ... the performance of different versions of \
         these benchmarks is almost the same",
        "T_1 about the same on Fibril, Cilk Plus and TBB (here: abp against fibril)",
        Check::Within {
            cases: FIBRIL_BENCHMARKS
                .iter()
                .filter(|(b, _)| ALIKE.contains(b))
                .map(|&(b, w)| {
                    case(
                        b,
                        time("abp", w, Variant::Fj, P).over(time("fibril", w, Variant::Fj, P)),
                    )
                })
                .collect(),
            band: Band::around(1.0, 0.1),
            unit: "x",
        },
    )
    .stand_in(
        "Cilk Plus is `abp` here, whose join and fiber pool are `fibril`'s, and on one worker \
         nothing is stolen, so nothing is unmapped: the two run the same code and 'about the \
         same' holds by construction; TBB is stood in for by `rayon`",
    ));
    claims
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twelve_benchmarks_on_six_runtimes_at_one_worker() {
        let f = figure();
        assert_eq!(f.rows.len(), 72);
        let paper: Vec<String> = f
            .rows
            .iter()
            .filter(|r| r.paper.is_some())
            .map(|r| r.runtime.to_string())
            .collect();
        assert_eq!(paper, ["fibril"; 12]);
        let strassen = f.rows.iter().find(|r| r.bench == "strassen").unwrap();
        assert_eq!(strassen.workload, "smm");
        let fib = f.row("fib", "fibril");
        assert_eq!(fib.paper.as_ref().unwrap().value(1), Some(1.9));
        assert_eq!(
            f.metric.paper_cell(fib, 1),
            "[paper 1.90x vs Cilk Plus; 6.00x vs TBB]"
        );
        assert_eq!(
            f.paper_cell("quicksort", "fibril", 1),
            "[paper 1.60x vs Cilk Plus; 2.00x vs TBB]"
        );
        assert_eq!(crate::reproduce::default_workers(&f), [1]);
        assert!(f.metric.needs_cores());
        crate::figures::suites::assert_claims(
            &f,
            &["faster-than-cilkplus", "faster-than-tbb", "fp-benchmarks-alike"],
        );
        // The paper's ratios come from the reference; both comparisons are n/a here.
        assert!(f.claims[0].paper.contains("fib 1.9x") && f.claims[0].stand_in.is_some());
        assert!(f.claims[1].paper.contains("quicksort 2.0x") && f.claims[1].stand_in.is_some());
        // Strassen is `smm`; the alike claim holds by construction here, so n/a too.
        let alike = &f.claims[2];
        assert!(alike.stand_in.is_some());
        assert_eq!(alike.max_p(), 1);
        assert!(alike.points().iter().any(|(p, _)| p.workload == "smm"));
    }
}
