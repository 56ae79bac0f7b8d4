//! The papers' bounds, checked on the simulator's counts for every workload variant (recorded
//! with unit weights at `Size::Test`, so a node's weight is 1 and the span counts nodes) on
//! P = 2, 16 and 64 workers, 3 seeds each, under every scheduler.
//!
//! * Every run: T_P >= max(T_1 / P, T_∞) (no schedule beats the work or the span).
//! * Fork-join (no futures): at most two deviations per steal (Acar, Blelloch and Blumofe;
//!   Spoonhower et al., Section 3), under ABP and ProWS alike (ProWS behaves as ABP without
//!   futures: no suspension, no stealable deque, at most P deques).
//! * ABP with futures: deviations <= P·T_∞ + t·T_∞ (Spoonhower et al., Theorem 3, O(P d + t d),
//!   with constant 1 and t touches), and at most one suspension per touch.
//! * ProWS with futures: Theorem 4.11's accounting. By Lemma 4.10 a deviation can only be the
//!   first node of a trace, which starts after a steal, after a mugging, at a sync whose fork's
//!   continuation was stolen (Lemma 4.7), or after a put made a resumed deque active
//!   (Algorithm 1, line 40): deviations <= 2·steals + resumptions (`steals` counts muggings).
//!   With structured futures a suspension needs its future's creation to have been stolen
//!   (Lemma 4.12's argument), so resumptions <= steals and deviations <= 3·steals; and the
//!   stealable deques number at most P·T_∞ (Lemma 4.12). With general futures they number at
//!   most the touches (Lemma 4.13: m_k <= t).

mod common;

use stealbench_sim::{Model, SimReport, simulate};
use stealbench_workloads::Variant;

const PS: [usize; 3] = [2, 16, 64];
const SEEDS: u64 = 3;

/// The bounds on every workload variant under every scheduler at `p` workers, `SEEDS` seeds
/// each; returns the runs checked. One test per P, so the test harness runs them in parallel.
fn bounds_hold_at(p: usize) -> usize {
    let mut checked = 0;
    for (name, variant, dag) in common::every_variant() {
        let (work, span) = (dag.total_work(), dag.span());
        let touches = dag.touches() as u64;
        for s in Model::ALL {
            for seed in 0..SEEDS {
                let r = simulate(&dag, s, p, seed);
                let ctx = format!("{name} on {s}, P={p}, seed {seed}: {}", r.counters());
                let p64 = p as u64;
                assert!(r.time >= work.div_ceil(p64).max(span), "{ctx}");
                if touches == 0 {
                    fork_join(&r, p64, &ctx);
                } else if s == Model::Abp {
                    assert!(r.deviations <= (p64 + touches) * span, "{ctx}");
                    assert!(r.suspensions <= touches, "{ctx}");
                } else {
                    prows_futures(&r, variant, p64, span, touches, &ctx);
                }
                checked += 1;
            }
        }
    }
    checked
}

#[test]
fn the_papers_bounds_hold_on_every_workload_at_p2() {
    assert!(bounds_hold_at(PS[0]) >= 130, "too few runs checked");
}

#[test]
fn the_papers_bounds_hold_on_every_workload_at_p16() {
    assert!(bounds_hold_at(PS[1]) >= 130, "too few runs checked");
}

#[test]
fn the_papers_bounds_hold_on_every_workload_at_p64() {
    assert!(bounds_hold_at(PS[2]) >= 130, "too few runs checked");
}

fn fork_join(r: &SimReport, p: u64, ctx: &str) {
    assert!(r.deviations <= 2 * r.steals, "{ctx}");
    assert_eq!(
        (r.suspensions, r.max_stealable, r.muggings),
        (0, 0, 0),
        "{ctx}"
    );
    assert!(r.max_deques <= p, "{ctx}");
}

fn prows_futures(r: &SimReport, v: Variant, p: u64, span: u64, touches: u64, ctx: &str) {
    assert!(r.deviations <= 2 * r.steals + r.resumptions, "{ctx}");
    assert!(r.muggings <= r.steals - r.muggings, "{ctx}");
    if v == Variant::Sf {
        assert!(r.resumptions <= r.steals, "{ctx}");
        assert!(r.max_stealable <= p * span, "{ctx}");
    } else {
        assert!(r.max_stealable <= touches, "{ctx}");
    }
}
