//! The discrete-event loop shared by both schedulers: workers, time, deviations, idle thieves.
//!
//! Each worker has exactly one pending event, unless it sleeps (below): the completion of the
//! node it runs, or the end of its current steal attempt. Events are processed in time order;
//! at equal times completions come before steal attempts (a thief attempting at the instant a
//! node finishes sees what that node pushed), and within a class the order is a hash of
//! (seed, time, worker): fixed by the seed, unbiased between workers, and independent of the
//! generator's stream. A node of weight w started at time t completes at t + w; its effects
//! (counters of its successors, pushes, suspensions, resumptions) take place at t + w. A steal
//! attempt takes `steal_cost`: a worker that runs out of work at t completes its first attempt
//! at t + cost, and a successful attempt at t starts the stolen node at t.
//!
//! **Idle thieves.** An attempt made while no deque in the system holds a ready node fails
//! whatever the victim, so it draws no victim; the thief then *sleeps*, with no event, until an
//! event ends with some deque holding a ready node. It wakes at its next attempt time on its
//! original schedule (the first `since + k · cost` at or after that moment), and the `k - 1`
//! attempts it slept through are counted as failed attempts. This is exactly what polling every
//! `cost` would do (those attempts find nothing, and the tie-break hash does not depend on the
//! generator), without an event per attempt: a serial phase on 1024 workers costs nothing.
//!
//! **Steal budget** ([`SimConfig::steals`]). Once the run has had its budget of steals,
//! an attempt made while another worker runs a node fails without a victim (the thief holds
//! its steals; it keeps attempting every `cost`), and one made while no worker runs succeeds
//! as usual, so the replay always ends.

use crate::{SimConfig, SimReport, Step};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use stealbench_schedulers::record::{Dag, NONE, Node};
use stealbench_schedulers::rng::{SplitMix64, mix};

/// The counters a policy bumps.
#[derive(Debug, Default, Clone)]
pub(crate) struct Counters {
    pub steals: u64,
    pub suspensions: u64,
    pub muggings: u64,
    pub resumptions: u64,
    pub deques_resumable: u64,
    pub rebalances: u64,
}

/// What both policies share: the DAG, its counters of unfinished predecessors, the generator,
/// the number of ready nodes in all deques, the counters.
pub(crate) struct Core<'d> {
    pub dag: &'d Dag,
    pub nodes: &'d [Node],
    /// Per node: predecessors not finished yet. A node is ready when its count reaches 0.
    pending: Vec<u32>,
    pub rng: SplitMix64,
    /// Workers P.
    pub p: usize,
    /// Ready nodes in all deques together (the active deques and every other deque object).
    /// Policies keep it exact: +1 per push, -1 per pop or steal.
    pub ready: u64,
    pub c: Counters,
    /// Scratch for a node's enabled successors.
    pub buf: Vec<u32>,
}

impl Core<'_> {
    /// One predecessor of `x` finished; whether `x` is now ready.
    #[inline]
    pub fn dec(&mut self, x: u32) -> bool {
        let c = &mut self.pending[x as usize];
        debug_assert!(*c > 0, "node {x} enabled twice");
        *c -= 1;
        *c == 0
    }
}

/// A scheduler's rules.
pub(crate) trait Policy {
    /// Worker `w` finished node `v` (its effects take place now); the node `w` runs next, or
    /// `None` if it must steal.
    fn complete(&mut self, core: &mut Core, w: usize, v: u32) -> Option<u32>;
    /// One steal attempt by `w`, called only while some deque holds a ready node; the node `w`
    /// runs next if it succeeded.
    fn attempt(&mut self, core: &mut Core, w: usize) -> Option<u32>;
    /// The largest number of deques that existed at once.
    fn max_deques(&self) -> u64;
    /// The largest number of deques in stealable sets at once.
    fn max_stealable(&self) -> u64;
}

const COMPLETION: u128 = 0;
const ATTEMPT: u128 = 1;

/// An event key: time, class, tie-break hash, worker; smaller first.
#[inline]
fn key(time: u64, class: u128, seed: u64, w: usize) -> Reverse<u128> {
    let tie =
        mix(seed ^ time.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (w as u64).rotate_left(32)) >> 33;
    Reverse(u128::from(time) << 64 | class << 63 | u128::from(tie) << 32 | w as u128)
}

/// Replays `dag` under `pol` with the configuration's P, seed and steal cost.
pub(crate) fn run<Pol: Policy>(
    dag: &Dag,
    cfg: &SimConfig,
    steal_cost: u64,
    mut pol: Pol,
) -> SimReport {
    let p = cfg.workers;
    let n = dag.len();
    let mut report = SimReport::empty(cfg, steal_cost, dag);
    if n == 0 {
        return report;
    }
    let mut core = Core {
        dag,
        nodes: dag.nodes(),
        pending: dag.in_degrees(),
        rng: SplitMix64::new(cfg.seed),
        p,
        ready: 0,
        c: Counters::default(),
        buf: Vec::with_capacity(8),
    };
    let seed = mix(cfg.seed ^ 0xD1B5_4A32_D192_ED03);
    let cost = steal_cost;
    let mut ws = Workers {
        running: vec![NONE; p],
        last: vec![NONE; p],
        trace: cfg.trace.then(Vec::new),
        deviations: 0,
        seed,
    };
    let mut sleepers: Vec<(usize, u64)> = Vec::new();
    let mut heap = BinaryHeap::with_capacity(p);
    let mut attempts = 0u64;

    ws.start(dag, 0, 0, 0, &mut heap);
    for w in 1..p {
        heap.push(key(cost, ATTEMPT, seed, w));
    }
    let mut executed = 0usize;
    let end = loop {
        let Some(Reverse(k)) = heap.pop() else {
            panic!(
                "the simulation cannot finish: {executed} of {n} nodes ran and no worker has \
                 anything to do (is the DAG valid?)"
            );
        };
        let t = (k >> 64) as u64;
        let w = (k & 0xFFFF_FFFF) as usize;
        let next = if (k >> 63) & 1 == COMPLETION {
            let v = std::mem::replace(&mut ws.running[w], NONE);
            executed += 1;
            if executed == n {
                break t;
            }
            pol.complete(&mut core, w, v)
        } else {
            // A held attempt (the steal budget spent while another worker runs a node) is
            // not made, so not counted, as on the runtimes, where a held worker does not try.
            let held = |k| core.c.steals >= k && ws.running.iter().any(|&r| r != NONE);
            if core.ready == 0 {
                attempts += 1;
                None
            } else if cfg.steals.is_some_and(held) {
                None
            } else {
                attempts += 1;
                pol.attempt(&mut core, w)
            }
        };
        match next {
            Some(x) => ws.start(dag, w, x, t, &mut heap),
            None if core.ready == 0 => sleepers.push((w, t)),
            None => heap.push(key(t + cost, ATTEMPT, seed, w)),
        }
        if core.ready > 0 && !sleepers.is_empty() {
            for (s, since) in sleepers.drain(..) {
                let k = (t - since).div_ceil(cost).max(1);
                attempts += k - 1;
                heap.push(key(since + k * cost, ATTEMPT, seed, s));
            }
        }
    };
    // Attempts the sleepers would have completed before the end.
    for (_, since) in sleepers {
        attempts += (end - since).saturating_sub(1) / cost;
    }
    let Counters {
        steals,
        suspensions,
        muggings,
        resumptions,
        deques_resumable,
        rebalances,
    } = core.c;
    report.time = end;
    report.steals = steals;
    report.steal_attempts = attempts;
    report.deviations = ws.deviations;
    report.suspensions = suspensions;
    report.muggings = muggings;
    report.resumptions = resumptions;
    report.deques_resumable = deques_resumable;
    report.rebalances = rebalances;
    report.max_deques = pol.max_deques();
    report.max_stealable = pol.max_stealable();
    report.trace = ws.trace;
    report
}

/// The workers' running nodes and execution orders.
struct Workers {
    /// The node each worker runs, or [`NONE`] while it steals or sleeps.
    running: Vec<u32>,
    /// The node each worker ran last (Definition 1 compares it with the serial predecessor).
    last: Vec<u32>,
    trace: Option<Vec<Step>>,
    deviations: u64,
    seed: u64,
}

impl Workers {
    /// Starts node `x` on worker `w` at time `t`: a deviation unless `w` ran `x - 1` just
    /// before (Spoonhower et al., Definition 1; nodes are numbered in serial order).
    #[inline]
    fn start(&mut self, dag: &Dag, w: usize, x: u32, t: u64, heap: &mut BinaryHeap<Reverse<u128>>) {
        if x != 0 && self.last[w] != x - 1 {
            self.deviations += 1;
        }
        self.last[w] = x;
        self.running[w] = x;
        if let Some(tr) = self.trace.as_mut() {
            tr.push(Step {
                worker: w as u32,
                node: x,
                start: t,
            });
        }
        heap.push(key(
            t + u64::from(dag.node(x).work()),
            COMPLETION,
            self.seed,
            w,
        ));
    }
}
