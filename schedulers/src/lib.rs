//! The schedulers of stealbench behind one trait family.
//!
//! * [`api`]: the [`Scheduler`] trait, its closure front-end [`ForkJoin`] / [`Worker`] /
//!   [`Scope`] with the futures of the runtimes that have them ([`Futures`],
//!   [`FutureForkJoin`]), and its async front-end [`AsyncForkJoin`] / [`AsyncWorker`].
//! * [`registry`]: the one list of runtimes ([`runtimes!`], [`registry::RUNTIMES`] with each
//!   runtime's role in the papers' figures, [`with_closure_runtime!`],
//!   [`with_future_runtime!`], [`with_async_runtime!`] from a name to its pool type, and
//!   [`for_each_built_runtime!`] over every pool type); it declares each runtime's module.
//! * One module per runtime, each declared by its registry entry (`src/NAME/mod.rs`; the
//!   entries' descriptions in [`registry::RUNTIMES`], and how each maps onto the design in
//!   `schedulers/README.md`), and [`record`] (not a scheduler to measure: a serial run that
//!   records the computation's DAG for the simulator, `stealbench-sim`).
//! * Shared pieces: [`io`] (the I/O threads of latency-hiding futures, tokio's driver on a
//!   thread of its own, and the classic blocking wait), [`config`] (pool configuration, and
//!   the [`Capabilities`] each runtime declares), [`stats`] (counters), [`rng`] (the seeded
//!   generator of the inputs and the simulator), [`topology`]
//!   (CPUs, caches, NUMA nodes and their distances, pinning), [`victims`] (uniform or
//!   NUMA-weighted victim selection, as libfork), and for the fiber runtimes [`stack`] (mmap'd stacks with a
//!   guard page, per-worker pools), [`overflow`] (a fiber stack overflow is reported, not a
//!   bare fault), [`fiber`] (migratable stackful fibers), [`deque`] (a
//!   Chase-Lev deque whose owner side needs no fence) and the crate-private `fiberpool` (the
//!   runtime `abp`, `fibril` and `prows` share, generic over their deque policy).
//! * The lock-free protocols take their atomics from the crate-private `sync`, which is std's
//!   in a normal build and loom's in a `--cfg loom` build, whose models (`tests/loom.rs`,
//!   reaching the private types through `internals`) check them; see the README.
//!
//! The design, and how each runtime maps onto it, is in `schedulers/README.md`.

pub mod api;
#[cfg(any(feature = "tbb", feature = "openmp"))]
pub(crate) mod cabi;
pub mod config;
pub mod deque;
pub mod fiber;
pub(crate) mod fiberpool;
pub mod io;
pub mod overflow;
pub mod record;
pub mod registry;
pub mod rng;
pub mod stack;
pub mod stats;
pub(crate) mod sync;
pub mod topology;
pub mod victims;

// One module per runtime of the registry, each behind its runtime's gate.
runtimes!(__for_each { __module () });

/// The crate-private protocols the loom models (`tests/loom.rs`) check, reachable only in a
/// `--cfg loom` build.
#[cfg(loom)]
#[doc(hidden)]
pub mod internals {
    pub use crate::abp::AbpPolicy;
    pub use crate::fiberpool::job::{FiberBox, FiberNode};
    pub use crate::fiberpool::rendezvous::{Rendezvous, RvPool};
    pub use crate::fiberpool::signal::Signal;
    pub use crate::fiberpool::sleep::Sleepers;
    pub use crate::libfork::frame::{JOIN_BIAS, JoinCounter};
    pub use crate::prows::future::FutState;
}

pub use api::{
    AsyncForkJoin, AsyncShared, AsyncWorker, ForkJoin, FutureForkJoin, FutureHandle, Futures,
    Scheduler, Scope, SharedHandle, StartError, Worker,
};
pub use config::{
    Capabilities, FenceMode, FrontEnd, FutureStack, IdlePolicy, Pinning, Placement, PoolConfig,
    SETTINGS, Setting, Unmap, VictimPolicy,
};
pub use stats::Stats;
