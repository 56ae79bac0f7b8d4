//! The fiber runtime shared by [`crate::abp`], [`crate::prows`] and [`crate::fibril`], generic over their deque
//! policy ([`Policy`]).
//!
//! Both runtimes run every task on a migratable stackful fiber ([`crate::fiber`]) with
//! work-first forks, and differ only in where work waits and how a worker finds it. This module
//! holds everything they share; [`crate::abp`]'s documentation explains it in full:
//!
//! * [`job`]: the deque entries (a task's job record, or a fiber to resume), fiber nodes, and
//!   the messages a switch passes (to a fiber: [`job::Input`]; to a driver: [`job::ToDriver`]).
//! * [`signal`]: the one-shot signal with a lock-free list of parked fibers (join and scope
//!   syncs, and `abp`'s futures).
//! * [`worker`]: a worker's state, the driver (resume a fiber, carry out what it asks for), the
//!   search for work (own deque bottom, the injector, the policy's steal, backoff, sleep), and
//!   a fiber's round of work (its entry for a job the driver gives it, and the end of every
//!   round).
//! * [`sleep`]: idle workers' sleep and wake-up, the Dekker handshake with a push through
//!   [`crate::deque`]'s asymmetric fence, and the shutdown.
//! * [`handle`]: the worker handle a task receives: `join` (the job record of `b` on the
//!   caller's frame, the inline fast path, suspension on `b`'s signal), `scope`, `fork`.
//! * [`future`]: scopes, spawns and futures (work-first on a new fiber, started over with the
//!   child's own entry; the child hands its result straight to its parent when it pops it
//!   back), the touch and put.
//! * [`queued`]: futures without a stack of their own (`FutureStack::Current`): a stealable
//!   job that the touch runs inline if it is still at the deque's bottom.
//! * [`rendezvous`]: where a forked task and its continuation meet when someone else took the
//!   continuation (each fiber owns one), and the per-worker pool of spare ones.
//! * [`latency`]: latency-hiding futures (`Futures::latency_future`): the pool's I/O thread
//!   drives them, and its put (the policy's [`Policy::put_external`]) makes the waiting deque
//!   or fiber ready from outside the workers.
//! * [`pool`]: starting and stopping the worker threads, `run`, statistics.
//! * Stacks: how many idle fibers and free stacks a worker keeps, whether it spills to a
//!   shared free list, and whether a suspended fiber's unused pages are given back to the OS
//!   are one setting of the policy ([`StackUse`]): `abp` and `prows` keep everything,
//!   `fibril` keeps little per worker, spills, and releases.
//! * [`deviation`]: the exact count of deviations from the serial order (each worker's mark,
//!   advanced at every strand end on a slow path and compared at every strand start on one),
//!   with the proof that it is exact.
//!
//! Invariants all of them rely on: a fiber runs on one worker thread at a time, and reaches
//! worker state only through its handle, which the last switch into it updated; a round's
//! frames hold nothing that needs dropping when it ends (the next round starts over at the
//! stack's top, and the old frames are never continued); a job record lives on the
//! frame (or in the `Arc`) of the code that waits for it, until its job has run; every deque
//! entry is encoded once by a push and decoded once by the pop or steal that took it.

pub mod deviation;
pub mod future;
pub mod handle;
pub mod job;
pub mod latency;
pub mod pool;
pub mod queued;
pub mod rendezvous;
pub mod signal;
pub mod sleep;
pub mod worker;

use crate::config::{Capabilities, IdlePolicy, PoolConfig, VictimPolicy};
use crate::deque::{Entry, FenceCounts, Owner};
use crate::rng::SplitMix64;
use job::{FiberBox, Job};
use std::sync::Arc;
use worker::{Local, Shared};

/// Usable bytes of every fiber stack unless `with_stack_size` says otherwise. Stacks are
/// mapped with `MAP_NORESERVE`, so this is address space; pages are committed when touched.
/// 16 MiB holds a join recursion 10,000 deep even in a debug build (about 1 KiB per level).
pub const DEFAULT_STACK_SIZE: usize = 16 << 20;

/// Free stacks each worker keeps for reuse; more are unmapped.
const POOL_CAP: usize = 32;

/// Idle fibers (finished their work, stack kept, ready for a new task) each worker keeps; their
/// stacks count as free. Reusing one saves mapping a stack and allocating its node.
const IDLE_CAP: usize = 32;

/// Steal rounds before an idle worker starts yielding its CPU, then before it sleeps.
const SPIN_ROUNDS: u32 = 64;
const YIELD_ROUNDS: u32 = 16;

/// How a runtime keeps its fibers' stacks, and what happens to a suspended fiber's stack: one
/// mechanism, set by each policy ([`Policy::STACKS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StackUse {
    /// Idle fibers (finished, stack kept) each worker keeps for reuse.
    pub idle: usize,
    /// Free stacks each worker keeps (fibers past `idle` give theirs back here).
    pub free: usize,
    /// Past `free`, a worker gives a stack to the free list shared by all workers instead of
    /// unmapping it, and takes from there before mapping a new one (Fibril's stack pool).
    pub spill: bool,
    /// At a suspension (a join or a touch that waits), the pages of the fiber's stack below
    /// its saved stack pointer are given back to the OS (Fibril's `unmap`).
    pub release_suspended: bool,
}

impl StackUse {
    /// `abp` and `prows`: large per-worker pools, nothing shared, nothing released.
    pub const KEEP: StackUse = StackUse {
        idle: IDLE_CAP,
        free: POOL_CAP,
        spill: false,
        release_suspended: false,
    };
}

/// The names a runtime's types print in `Debug` output.
pub struct Names {
    /// The pool, e.g. `"Abp"`.
    pub pool: &'static str,
    /// The worker handle, e.g. `"AbpWorker"`.
    pub worker: &'static str,
    /// A scope, e.g. `"AbpScope"`.
    pub scope: &'static str,
    /// A single-touch future, e.g. `"AbpFuture"`.
    pub future: &'static str,
    /// A multi-touch future, e.g. `"AbpShared"`.
    pub shared: &'static str,
}

/// What a fiber runtime honours: worker threads, futures general and not, fiber stacks to size
/// and to give a future or not, a forced schedule, a uniformly random victim, both idle
/// policies; no placement of stealable sets (prows's own).
pub const CAPABILITIES: Capabilities = Capabilities {
    fiber_stacks: true,
    steals: true,
    victims: &[VictimPolicy::Uniform, VictimPolicy::RuntimeDefault],
    idle: IdlePolicy::ALL,
    fence_modes: true,
    ..Capabilities::OWN_POLICIES
};

/// What distinguishes one fiber runtime from another: where work waits, how an idle worker
/// finds it, and what a touch of an unfinished future and its put do. Everything else (jobs,
/// fibers, join, scope, fork, sleep) is this module's.
///
/// Every method that takes a [`Local`] runs on that worker's thread (on the worker's own stack
/// or on a fiber it runs), so it may use the worker's private state.
pub trait Policy: Sized + Send + Sync + 'static {
    /// The runtime's name: `Scheduler::NAME`, thread names, panic messages.
    const NAME: &'static str;
    /// How the runtime keeps and releases stacks ([`StackUse::KEEP`] unless it says so).
    const STACKS: StackUse = StackUse::KEEP;
    /// The names of the runtime's public types.
    const NAMES: Names;
    /// What the runtime honours ([`CAPABILITIES`] unless it says so).
    const CAPABILITIES: Capabilities = CAPABILITIES;
    /// State shared by all workers (what thieves reach; the policy's counters).
    type Shared: Send + Sync;
    /// What a worker thread receives at the start to build its [`Policy::Local`].
    type Seed: Send;
    /// One worker's private state: the deque it works on.
    type Local;
    /// The completion state of a future: what a touch checks and waits on, and a put sets.
    type Fut: Send + Sync;

    /// The shared state of a pool of `config.workers` workers, and the seed of each worker; its deques
    /// count their fences in `fences`.
    fn new(config: &PoolConfig, fences: &Arc<FenceCounts>) -> (Self::Shared, Vec<Self::Seed>);
    /// A worker's private state, on its thread.
    fn local(seed: Self::Seed) -> Self::Local;
    /// The bottom end of the deque the worker works on; pushes go there. Only called while a
    /// fiber runs, and a fiber runs only while its worker has a deque.
    fn owner(l: &Local<Self>) -> &Owner;
    /// Pops the bottom of the worker's deque (`None` if it is empty or there is none).
    fn pop(l: &Local<Self>) -> Option<Entry>;
    /// Does some deque hold an entry a thief could take? (The last check before sleeping.)
    fn work_visible(sh: &Self::Shared) -> bool;
    /// The worker took a root task from the injector and is about to run it.
    fn took_root_task(l: &Local<Self>);
    /// One steal attempt from the deques (the injector was tried already).
    fn steal(l: &Local<Self>) -> Option<Job<Self>>;
    /// The worker thread exits (its idle fibers are ended).
    fn exit(l: &Local<Self>);
    /// The state of a new, unfinished future.
    fn new_fut() -> Self::Fut;
    /// The state of a future that is done already (its task finished before anyone could
    /// see the future).
    fn new_done_fut() -> Self::Fut;
    /// Is the future done? (Acquire: what its task wrote before the put is visible.)
    fn is_done(fut: &Self::Fut) -> bool;
    /// The driver's side of a touch: the fiber `f` touched `fut` and suspended. Returns `f`
    /// back if the future is done by now (the driver resumes it), else keeps it until the put
    /// makes it ready (the driver then goes on with other work).
    fn suspend_touch(l: &Local<Self>, fut: &Self::Fut, f: FiberBox<Self>)
    -> Option<FiberBox<Self>>;
    /// The put of a future, by its task on `w`, after its value is stored: mark it done and
    /// make what waits on it ready.
    fn put(w: &handle::FiberWorker<Self>, fut: &Self::Fut);
    /// The put of a latency future by the pool's I/O thread ([`latency`]), which is no worker
    /// and has no deque, after its value is stored: mark it done, make what waits on it ready
    /// and wake a sleeping worker. `rng` makes the policy's random choices. Returns how many
    /// deques or fibers it made ready.
    fn put_external(sh: &Shared<Self>, fut: &Self::Fut, rng: &mut SplitMix64) -> usize;
    /// The policy's counters, appended to the common ones in `Stats::extra`.
    fn stats(sh: &Self::Shared) -> Vec<(&'static str, u64)>;
    /// The policy's levels (high-water marks), appended to the common ones in `Stats::gauges`.
    /// None by default.
    fn gauges(sh: &Self::Shared) -> Vec<(&'static str, u64)> {
        let _ = sh;
        Vec::new()
    }
    /// Zeroes the policy's counters and sets its high-water marks to their current levels.
    fn reset_stats(sh: &Self::Shared);
}
