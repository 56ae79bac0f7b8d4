//! Spoonhower et al. (SPAA'09) Figure 5: the graphs of the lower bounds on deviations, built
//! as programs and measured on two workers: (a) `touchchain`, one future, one steal and one
//! touch under `d` nested joins, for d = 2^4 ... 2^12; (b) `touchtree`, a tree of `t` futures
//! produced and consumed, every node's task waiting for one gate future, for
//! t = 2^4 − 1 ... 2^12 − 1.
//!
//! The paper draws the graphs and proves the bounds; it prints no counts. This figure counts
//! steals and deviations on the real `abp` (the paper's parsimonious `ws`) and `prows` (with
//! its artifact placement), all at P = 2, the processors of the construction: first in the
//! schedule the machine gives, then in the construction's own schedule, forced by a budget of
//! one steal (`steals=1`, `PoolConfig::steals`: after the first steal, an idle worker
//! takes nothing from the other while that one runs), on the runtimes and in the simulator,
//! which replays each program's recorded DAG (`sim=nanos`: the strands' measured lengths, so
//! the producer's spin outlasts the consumer's descent there as it does on the machine).
//! The x axis is the workload parameter (`d` or `t`), set by each row's workload spec.
//!
//! Its claims: the lower bounds exactly on the forced schedule (2 + 2d and 2(t + 1) on
//! `abp`; 2 on `prows`, which holds by construction), and under the machine's own schedule
//! ProWS's Theorem 4.11 (at most 3 deviations per steal, by its proof) and its "equal or
//! better" against parsimonious stealing (`prows`'s deviations over `abp`'s at most 1).

use super::prows_fig4::{DEVIATIONS_PER_STEAL, THEOREM_4_11};
use super::spoonhower_fig6::{NO_MORE_THAN_PARSIMONIOUS, STEALS_AND_DEVIATIONS};
use super::{Figure, XAxis};
use crate::claims::{Band, Case, Check, Claim, Q, case, counter};
use crate::grid::Row;
use stealbench_workloads::Variant;

/// The figure's id.
pub(crate) const ID: &str = "spoonhower-fig5";
/// The figure's title.
pub(crate) const TITLE: &str = "Spoonhower et al. (SPAA'09) Figure 5: steals and deviations of the \
                         lower-bound graphs against their span d and touches t, P = 2";

/// The rows' runtime arms: measured in the schedule the machine gives, then under the forced
/// schedule of the construction (one steal: `steals=1`), measured and simulated.
const RUNTIMES: [&str; 8] = [
    "abp",
    "prows",
    "prows/placement=artifact",
    "abp/steals=1",
    "prows/steals=1",
    "prows/steals=1/placement=artifact",
    "abp/steals=1/sim=nanos",
    "prows/steals=1/sim=nanos",
];

/// The spans of graph (a): 2^4 ... 2^12.
pub(crate) const SPANS: [u64; 9] = [16, 32, 64, 128, 256, 512, 1024, 2048, 4096];

/// The touches of graph (b): complete binary trees of 2^k − 1 nodes, k = 4 ... 12.
pub(crate) const TOUCHES: [u64; 9] = [15, 31, 63, 127, 255, 511, 1023, 2047, 4095];

/// The figure: per graph, per parameter value, a row per runtime arm.
pub(crate) fn figure() -> Figure {
    let mut rows = Vec::new();
    let graphs: [(&str, &str, &str, Variant, &[u64]); 2] = [
        ("(a)", "touchchain", "d", Variant::Sf, &SPANS),
        ("(b)", "touchtree", "t", Variant::Gf, &TOUCHES),
    ];
    for (graph, workload, key, variant, values) in graphs {
        for v in values {
            for rt in RUNTIMES {
                rows.push(Row::new(
                    format!("{graph} {key}={v}"),
                    format!("{workload}/{key}={v}"),
                    variant,
                    rt,
                ));
            }
        }
    }
    Figure {
        x_axis: XAxis::SpecParam,
        reps: Some(3),
        ..Figure::new(
            ID,
            TITLE,
            "Graphs demonstrating lower bounds. In part (a), one future, one steal, and \
             one touch lead to Omega(d) deviations on a graph of span d. In part (b), one \
             steal and t touches lead to Omega(t) deviations (the paper draws the graphs \
             and proves the bounds for any parsimonious work stealer; it prints no \
             counts). Rows `steals=1` force the construction's schedule: after the \
             first steal, an idle worker takes nothing from the other while that one \
             runs (measured, and simulated on the recorded DAG with the strands' \
             measured lengths, `sim=nanos`). (a) is `touchchain` (a future whose task \
             spins 10 ms, and its creator's continuation going down d nested joins to the \
             touch); the continuation is stolen once and the touch suspends before the \
             put. `abp` (parsimonious) then deviates 2 + 2d times after that one steal, \
             forced or not. `prows` suspends the whole deque with the joins' right \
             children in it and, forced to one steal, resumes it after the put and takes \
             them back in serial order: 2 deviations whatever d. Unforced, the idle \
             worker steals those children back one at a time from the stealable \
             suspended deque: d + 1 steals and 2 + 2d deviations, two per steal, within \
             ProWS's bound in steals, as long as the steals fit in the 10 ms spin (up to \
             d = 512 here; beyond, it varies with the run). (b) is `touchtree`, a tree \
             of t futures produced and consumed under joins, span Theta(log t); every \
             node's task first touches one gate future (a 10 ms spin, then a parallel \
             loop of t 20 us spins) which the other worker runs while the stolen \
             continuation creates the nodes. Forced to one steal, `abp` suspends all t \
             node tasks and the consumer and resumes them on the other worker: 2(t + 1) \
             deviations; unforced it also steals about t/2 times and deviates about 3t \
             times. `prows` forced suspends one deque and takes it back whole: 2 \
             deviations; unforced, 1.1 to 1.3 deviations per steal. The deviations come \
             from the node tasks' touches of the gate, not from the producer and \
             consumer alternating as in the paper's drawing (workloads/src/touchtree.rs \
             says how the two differ and why work-first futures need the gate). The \
             `sim=nanos` rows replay each program's recorded DAG (measured strand lengths) \
             in the simulator's model of the scheduler, one seed per repetition.",
            &[2],
            &STEALS_AND_DEVIATIONS,
            rows,
        )
        .with_claims(claims())
    }
}

/// The claim `id` (the paper's `quote`, its `paper` number): the deviations of `workload`
/// (`touchchain/d=` or `touchtree/t=`) at each of `values` on the forced schedule's arms,
/// measured and simulated, exactly `formula` of the value.
fn exact(
    (id, quote, paper): (&'static str, &'static str, &'static str),
    formula: &'static str,
    (workload, key, variant): (&str, &str, Variant),
    values: &[u64],
    arms: [&'static str; 2],
    f: fn(u64) -> f64,
) -> Claim {
    let cases = values
        .iter()
        .flat_map(|&v| {
            arms.iter().map(move |&rt| {
                (
                    case(
                        format!("{key}={v} {rt}"),
                        counter(rt, &format!("{workload}/{key}={v}"), variant, 2, "deviations"),
                    ),
                    f(v),
                )
            })
        })
        .collect();
    Claim::new(id, quote, paper, Check::Exact { formula, cases })
}

/// ProWS's words on its deviations, for its rows.
const PROWS_BOUND: &str =
    "ProWS ... equal or better bounds on the number of deviations (ProWS, abstract)";

/// Why the proactive claims on the forced schedule are regression checks, not the paper's: the
/// budget of one steal makes the count 2 by construction (under the machine's own schedule
/// `prows` makes d + 1 steals and 2 + 2d deviations on graph (a), as many as `abp`).
const FORCED_TWO: &str = "a forced schedule of one steal, whose deviations are 2 by \
                          construction; under the machine's own schedule prows deviates 2 + 2d \
                          times on graph (a), as abp does";

/// A case per value of `values` of `workload` (`touchchain/d=`), and per arm of `arms`:
/// `q(arm, spec)` at P = 2.
fn natural(
    (workload, key, variant): (&str, &str, Variant),
    values: &[u64],
    arms: &[&'static str],
    q: impl Fn(&'static str, &str, Variant) -> Q,
) -> Vec<Case> {
    values
        .iter()
        .flat_map(|v| {
            let spec = format!("{workload}/{key}={v}");
            arms.iter()
                .map(|&rt| case(format!("{key}={v} {rt}"), q(rt, &spec, variant)))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// ProWS's deviations under the schedule the machine gives, on the same graphs: Theorem
/// 4.11's at most a constant per steal (on `prows` and the artifact's placement), and no more
/// deviations than the parsimonious `abp` (ProWS's abstract).
fn natural_claims(
    graph: &str,
    ids: [&'static str; 2],
    sweep: (&str, &str, Variant),
    values: &[u64],
) -> [Claim; 2] {
    let dev = |rt, w: &str, v| counter(rt, w, v, 2, "deviations");
    let per_steal = |rt, w: &str, v| dev(rt, w, v).over(counter(rt, w, v, 2, "steals"));
    [
        Claim::new(
            ids[0],
            THEOREM_4_11,
            format!(
                "O(n) deviations for n steals, at most {DEVIATIONS_PER_STEAL} per steal by the \
                 proof; graph {graph} under the machine's own schedule (the paper prints no \
                 counts)"
            ),
            Check::Within {
                cases: natural(sweep, values, &["prows", "prows/placement=artifact"], per_steal),
                band: Band::at_most(DEVIATIONS_PER_STEAL),
                unit: "deviations per steal",
            },
        ),
        Claim::new(
            ids[1],
            NO_MORE_THAN_PARSIMONIOUS,
            format!(
                "deviations of prows over abp's at most 1, graph {graph} under the machine's \
                 own schedule"
            ),
            Check::Within {
                cases: natural(sweep, values, &["prows"], |rt, w, v| {
                    dev(rt, w, v).over(dev("abp", w, v))
                }),
                band: Band::at_most(1.0),
                unit: "x",
            },
        ),
    ]
}

/// The lower bounds, exactly as the constructions give them on the forced schedule (one
/// steal), for the parsimonious `abp` and, on the same programs, the proactive `prows`; then
/// ProWS's deviations under the machine's own schedule ([`natural_claims`]).
fn claims() -> Vec<Claim> {
    let chain = ("touchchain", "d", Variant::Sf);
    let tree = ("touchtree", "t", Variant::Gf);
    let abp = ["abp/steals=1", "abp/steals=1/sim=nanos"];
    let prows = ["prows/steals=1", "prows/steals=1/sim=nanos"];
    let two = |_| 2.0;
    vec![
        exact(
            (
                "a-parsimonious-linear-in-d",
                "one future, one steal, and one touch lead to Omega(d) deviations on a \
                 graph of span d",
                "Omega(d); the construction's schedule: 2 + 2d",
            ),
            "2 + 2d",
            chain,
            &SPANS,
            abp,
            |d| 2.0 + 2.0 * d as f64,
        ),
        exact(
            (
                "b-parsimonious-linear-in-t",
                "one steal and t touches lead to Omega(t) deviations",
                "Omega(t); the construction's schedule: 2(t + 1)",
            ),
            "2(t + 1)",
            tree,
            &TOUCHES,
            abp,
            |t| 2.0 * (t as f64 + 1.0),
        ),
        exact(
            (
                "a-proactive-constant",
                PROWS_BOUND,
                "proactive stealing suspends the whole deque: 2 whatever d",
            ),
            "2",
            chain,
            &SPANS,
            prows,
            two,
        )
        .regression(FORCED_TWO),
        exact(
            (
                "b-proactive-constant",
                PROWS_BOUND,
                "proactive stealing suspends the whole deque: 2 whatever t",
            ),
            "2",
            tree,
            &TOUCHES,
            prows,
            two,
        )
        .regression(FORCED_TWO),
    ]
    .into_iter()
    .chain(natural_claims(
        "(a)",
        ["a-proactive-per-steal", "a-no-more-than-parsimonious"],
        chain,
        &SPANS,
    ))
    .chain(natural_claims(
        "(b)",
        ["b-proactive-per-steal", "b-no-more-than-parsimonious"],
        tree,
        &TOUCHES,
    ))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_sweep_both_graphs_on_every_arm() {
        let f = figure();
        assert_eq!(f.rows.len(), 2 * 9 * RUNTIMES.len());
        assert_eq!(f.rows[0].workload, "touchchain/d=16");
        assert_eq!(f.rows.last().unwrap().workload, "touchtree/t=4095");
        assert!(
            f.rows
                .iter()
                .all(|r| crate::grid::workload_info(&r.workload).is_some())
        );
        assert_eq!(crate::plan::default_workers(&f), [2]);
        // Each lower bound over its nine values on two arms, measured and simulated.
        super::super::suites::assert_claims(
            &f,
            &[
                "a-parsimonious-linear-in-d",
                "b-parsimonious-linear-in-t",
                "a-proactive-constant",
                "b-proactive-constant",
                "a-proactive-per-steal",
                "a-no-more-than-parsimonious",
                "b-proactive-per-steal",
                "b-no-more-than-parsimonious",
            ],
        );
        // The natural-schedule claims read the unforced arms only.
        for c in &f.claims[4..] {
            assert!(
                c.points()
                    .iter()
                    .all(|(p, _)| !p.runtime.to_string().contains("steals=") && p.p == 2),
                "{}",
                c.id
            );
        }
        let Check::Within { cases, .. } = &f.claims[5].check else {
            panic!("a ratio");
        };
        assert_eq!(cases[0].label, "d=16 prows");
        assert_eq!(cases.len(), 9);
        let Check::Exact { cases, .. } = &f.claims[0].check else {
            panic!("exact");
        };
        assert_eq!(cases.len(), 18);
        assert_eq!(cases[0].1, 34.0);
        let Check::Exact { cases, .. } = &f.claims[1].check else {
            panic!("exact");
        };
        assert_eq!(cases.last().unwrap().1, 8192.0);
    }
}
