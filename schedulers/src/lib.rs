//! The schedulers of stealbench behind one trait family.
//!
//! * [`api`]: the [`Scheduler`] trait, its closure front-end [`ForkJoin`] / [`Worker`] /
//!   [`Scope`] with the futures of the runtimes that have them ([`Futures`],
//!   [`FutureForkJoin`]), and its async front-end [`AsyncForkJoin`] / [`AsyncWorker`].
//! * [`registry`]: the one list of runtimes ([`runtimes!`], [`registry::RUNTIMES`], and
//!   [`with_closure_runtime!`], [`with_future_runtime!`], [`with_async_runtime!`] from a name
//!   to its pool type).
//! * One module per runtime: [`serial`] (the serial elision, T_s; both front-ends),
//!   [`rayon`] (rayon's pool, [`rayon::RayonPool`]; closure front-end, futures built on rayon
//!   scopes), [`chili`] (chili's heartbeat scheduling; fork-join only), [`tokio`] (tokio's
//!   multi-thread runtime, [`tokio::TokioPool`]; async front-end, every fork a heap-allocated
//!   task), `tbb` and `openmp` (Intel oneTBB and LLVM's OpenMP runtime through C++ shims of
//!   ours, behind the cargo features of those names; fork-join only), [`abp`] (parsimonious
//!   work stealing with futures on stackful fibers), [`fibril`] (`abp`'s deques and join with
//!   Fibril's stacks: a suspended stack's unused pages are given back to the OS, unless
//!   [`Unmap::Off`]), [`prows`] (proactive work stealing: whole deques suspend at a touch of an
//!   unfinished future; [`prows::Prows`], whose stealable deques go where the [`Placement`] of
//!   its [`PoolConfig`] says: the paper's or the authors' artifact's), [`libfork`] (stackless
//!   continuation stealing: task frames on segmented stacks, polled by the worker directly;
//!   async front-end, fork-join only), and [`record`] (not a scheduler to measure: a serial
//!   run that records the computation's DAG for the simulator, `stealbench-sim`).
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

pub mod abp;
pub mod api;
#[cfg(any(feature = "tbb", feature = "openmp"))]
pub(crate) mod cabi;
pub mod chili;
pub mod config;
pub mod deque;
pub mod fiber;
pub(crate) mod fiberpool;
pub mod fibril;
pub mod io;
pub mod libfork;
#[cfg(feature = "openmp")]
pub mod openmp;
pub mod overflow;
pub mod prows;
pub mod rayon;
pub mod record;
// The registry names `tokio`, which a `--cfg loom` build leaves out (below).
#[cfg(not(loom))]
pub mod registry;
pub mod rng;
pub mod serial;
pub mod stack;
pub mod stats;
pub(crate) mod sync;
#[cfg(feature = "tbb")]
pub mod tbb;
// Under `--cfg loom` tokio drops part of its builder's API (`on_thread_start`); nothing of this
// runtime is modelled.
#[cfg(not(loom))]
pub mod tokio;
pub mod topology;
pub mod victims;

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
    Unmap, VictimPolicy,
};
pub use stats::Stats;
