//! A discrete-event simulator of work stealing that replays a recorded computation DAG
//! (`stealbench_schedulers::record`) under ABP (Spoonhower et al., SPAA 2009, Figure 2) or
//! ProWS (Singer, Xu and Lee, PPoPP 2019, Algorithms 1 and 2, with the paper's or the authors'
//! artifact's placement of stealable deques) on any number of workers P, seeded, and counts
//! what the papers count: time, steals, deviations, suspensions, deques.
//!
//! ```
//! use stealbench_schedulers::record::{Recorder, Weights};
//! use stealbench_schedulers::Worker;
//! use stealbench_sim::{Model, Placement, simulate};
//!
//! fn fib<W: Worker>(w: &W, n: u64) -> u64 {
//!     if n < 2 { return n; }
//!     let (a, b) = w.join(|w| fib(w, n - 1), |w| fib(w, n - 2));
//!     a + b
//! }
//!
//! let (_, dag) = Recorder::record(Weights::Unit, |w| fib(w, 16));
//! let serial = simulate(&dag, Model::Abp, 1, 0);
//! assert_eq!((serial.time, serial.deviations), (dag.total_work(), 0));
//! let r = simulate(&dag, Model::Prows { placement: Placement::Paper }, 64, 7);
//! assert!(r.time < serial.time / 8 && r.deviations <= 2 * r.steals);
//! ```
//!
//! See `sim/README.md` for what is modelled and what is not, and for the validation.

mod abp;
mod engine;
mod prows;

use std::fmt;
use stealbench_schedulers::record::{Dag, Weights};

/// Where ProWS puts a deque that becomes stealable: the runtime's own setting
/// (`PoolConfig::placement`), modelled by [`Model::Prows`].
pub use stealbench_schedulers::Placement;

/// The scheduler a simulation models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Model {
    /// Parsimonious work stealing with futures (Spoonhower et al., Figure 2): runtime `abp`.
    Abp,
    /// Proactive work stealing (Singer et al., Algorithms 1 and 2): runtime `prows`.
    Prows {
        /// Where stealable deques go (`prows/placement=...`).
        placement: Placement,
    },
}

impl Model {
    /// Every model: `abp`, then `prows` with each placement.
    pub const ALL: [Model; 3] = [
        Model::Abp,
        Model::Prows {
            placement: Placement::Paper,
        },
        Model::Prows {
            placement: Placement::Artifact,
        },
    ];

    /// The name of the runtime it models: `abp` or `prows`.
    pub fn runtime(self) -> &'static str {
        match self {
            Model::Abp => "abp",
            Model::Prows { .. } => "prows",
        }
    }

    /// The model of the runtime named `runtime` in the configuration `placement`, if there is
    /// one.
    pub fn of(runtime: &str, placement: Placement) -> Option<Model> {
        match runtime {
            "abp" if placement == Placement::default() => Some(Model::Abp),
            "prows" => Some(Model::Prows { placement }),
            _ => None,
        }
    }
}

/// The runtime's arm as the harness spells it: `abp`, `prows`, `prows/placement=artifact`.
impl fmt::Display for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.runtime())?;
        match self {
            Model::Prows { placement } if *placement != Placement::default() => {
                write!(f, "/placement={placement}")
            }
            _ => Ok(()),
        }
    }
}

/// The steal cost [`SimConfig::steal_cost`] defaults to on a [`Weights::Unit`] DAG: one unit.
pub const DEFAULT_STEAL_COST_UNIT: u64 = 1;
/// The steal cost [`SimConfig::steal_cost`] defaults to on a [`Weights::Nanos`] DAG: 100 ns,
/// about a miss on another core's deque plus the bookkeeping of an attempt.
pub const DEFAULT_STEAL_COST_NANOS: u64 = 100;

/// A simulation's parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimConfig {
    /// The scheduler modelled.
    pub model: Model,
    /// Workers P (at least 1).
    pub workers: usize,
    /// Seeds every random choice (victims, deques, placements) and the tie-break between
    /// simultaneous events: the same seed gives the same run.
    pub seed: u64,
    /// The time a steal attempt takes, in the DAG's units (at least 1); `None`:
    /// [`DEFAULT_STEAL_COST_UNIT`] or [`DEFAULT_STEAL_COST_NANOS`] by the DAG's weights.
    pub steal_cost: Option<u64>,
    /// Whether to return every node's worker and start time ([`SimReport::trace`]).
    pub trace: bool,
    /// A forced schedule, as the runtimes' `PoolConfig::steals`: after the first `k`
    /// steals (muggings included), a worker out of work steals nothing while another worker
    /// runs a node, and steals again when none does; a held worker makes no attempt, so none
    /// is counted. `None`: no budget.
    pub steals: Option<u64>,
}

impl SimConfig {
    /// `model` on `workers` workers with `seed`, the default steal cost, no trace.
    pub fn new(model: Model, workers: usize, seed: u64) -> SimConfig {
        SimConfig {
            model,
            workers,
            seed,
            steal_cost: None,
            trace: false,
            steals: None,
        }
    }
}

/// One node's execution in a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// The worker that ran it.
    pub worker: u32,
    /// The node (serial index).
    pub node: u32,
    /// When it started.
    pub start: u64,
}

/// What a simulation counted. Times are in the DAG's units ([`Weights`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimReport {
    /// The scheduler modelled.
    pub model: Model,
    /// Workers P.
    pub workers: usize,
    /// The seed.
    pub seed: u64,
    /// The steal cost used.
    pub steal_cost: u64,
    /// Nodes in the DAG.
    pub nodes: u64,
    /// Total work T_1.
    pub work: u64,
    /// Simulated time T_P: when the last node finished (the first started at 0).
    pub time: u64,
    /// Successful steals (for ProWS including muggings, as the runtimes count them).
    pub steals: u64,
    /// Steal attempts, successful or not.
    pub steal_attempts: u64,
    /// Deviations (Spoonhower et al., Definition 1; ProWS Definition 4.5): nodes whose worker
    /// did not run their serial predecessor immediately before them.
    pub deviations: u64,
    /// Touches that found their future unfinished: ABP suspends the toucher on the future,
    /// ProWS suspends its whole deque.
    pub suspensions: u64,
    /// ProWS: muggable deques taken whole by a thief.
    pub muggings: u64,
    /// ProWS: deques that a put made its worker's active deque (`setToActive` at line 40).
    pub resumptions: u64,
    /// ProWS: deques that a put made resumable.
    pub deques_resumable: u64,
    /// ProWS, paper placement: deques moved by `rebalanceStealables`.
    pub rebalances: u64,
    /// The largest number of deques at once: P for ABP; for ProWS every deque object alive
    /// (active, suspended, resumable, muggable).
    pub max_deques: u64,
    /// The largest number of deques in all stealable sets at once (ProWS; the runtime's
    /// `stealable_high_water`); 0 for ABP.
    pub max_stealable: u64,
    /// With [`SimConfig::trace`]: every node's execution, in the order they started.
    pub trace: Option<Vec<Step>>,
}

impl SimReport {
    fn empty(cfg: &SimConfig, steal_cost: u64, dag: &Dag) -> SimReport {
        SimReport {
            model: cfg.model,
            workers: cfg.workers,
            seed: cfg.seed,
            steal_cost,
            nodes: dag.len() as u64,
            work: dag.total_work(),
            time: 0,
            steals: 0,
            steal_attempts: 0,
            deviations: 0,
            suspensions: 0,
            muggings: 0,
            resumptions: 0,
            deques_resumable: 0,
            rebalances: 0,
            max_deques: 0,
            max_stealable: 0,
            trace: None,
        }
    }

    /// The counters as `name=value` pairs, `;`-separated, for a line of text (`sim_time` is
    /// [`SimReport::time`], in the DAG's weight units).
    pub fn counters(&self) -> String {
        self.named()
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(";")
    }

    /// The counters of [`SimReport::counters`], each with its name, in that order: the harness
    /// records them as a simulated point's statistics.
    pub fn named(&self) -> [(&'static str, u64); 11] {
        [
            ("sim_time", self.time),
            ("steals", self.steals),
            ("steal_attempts", self.steal_attempts),
            ("deviations", self.deviations),
            ("suspensions", self.suspensions),
            ("muggings", self.muggings),
            ("resumptions", self.resumptions),
            ("deques_resumable", self.deques_resumable),
            ("rebalances", self.rebalances),
            ("max_deques", self.max_deques),
            ("max_stealable", self.max_stealable),
        ]
    }
}

/// Simulates `dag` under `model` on `workers` workers with `seed` and the default steal
/// cost. Panics if `workers` is 0.
pub fn simulate(dag: &Dag, model: Model, workers: usize, seed: u64) -> SimReport {
    simulate_with(dag, &SimConfig::new(model, workers, seed))
}

/// Simulates `dag` as `config` says. Panics if `config.workers` or `config.steal_cost` is 0,
/// or if the DAG cannot finish (an invalid DAG: see [`Dag::validate`]).
pub fn simulate_with(dag: &Dag, config: &SimConfig) -> SimReport {
    assert!(config.workers >= 1, "a simulation needs at least 1 worker");
    assert!(
        u32::try_from(config.workers).is_ok(),
        "at most 2^32 - 1 workers"
    );
    let cost = config.steal_cost.unwrap_or(match dag.weights() {
        Weights::Unit => DEFAULT_STEAL_COST_UNIT,
        Weights::Nanos => DEFAULT_STEAL_COST_NANOS,
    });
    assert!(cost >= 1, "a steal attempt takes at least 1 unit");
    let p = config.workers;
    match config.model {
        Model::Abp => engine::run(dag, config, cost, abp::Abp::new(p)),
        Model::Prows { placement } => {
            engine::run(dag, config, cost, prows::Prows::new(p, placement))
        }
    }
}
