//! `abp`: parsimonious work stealing with futures on stackful fibers, the `ws` scheduler of
//! Spoonhower et al. (SPAA 2009, Figure 2), i.e. Arora, Blumofe and Plaxton's deque scheduler
//! extended to futures.
//!
//! # The algorithm
//!
//! Every worker owns one Chase-Lev deque ([`crate::deque`]: LIFO at the bottom for the owner,
//! FIFO at the top for thieves, no fence on the owner's side while thieves are rare, a SeqCst
//! fence on both sides while they are many; that module says why it is not
//! `crossbeam-deque`).
//! Root tasks of [`ForkJoin::run`](crate::api::ForkJoin::run) arrive through a `crossbeam-deque` injector. A deque entry is either a *task* (a type-erased job record) or
//! a *fiber* to resume. A worker takes work from the bottom of its own deque, and only when it is
//! empty does it steal: a uniformly random victim, the top of its deque (parsimonious).
//!
//! * **`join(a, b)`** (work-first): the continuation after spawning `a` is exactly "run `b`,
//!   then sync", so `b` is pushed as a job record that lives on the caller's stack frame and `a`
//!   runs inline. At the sync the worker pops its deque bottom: if that is `b`, `b` runs inline
//!   (the fast path: no allocation, no `Arc`, no fiber switch). Otherwise `b` was taken by
//!   someone; if it has not finished, the fiber *suspends*: it records itself on `b`'s signal
//!   and the worker goes on with the bottom of its own deque on a fresh fiber. Whoever finishes
//!   `b` last pushes the suspended fiber onto the bottom of *its* deque, so it resumes there.
//! * **Future creation** (`Futures::future`, `Futures::shared_future`) and **`Scope::spawn`** are
//!   work-first too, as in Cilk-F: the current fiber (the continuation) is pushed onto the deque,
//!   where it is stealable, and the child runs eagerly on a new fiber from the pool. When the
//!   child returns, its fiber pops the deque bottom: if that is its own continuation (nobody
//!   took it), the child leaves its result in the continuation's frame and switches to it: no
//!   atomic instruction, no allocation, and the future's handle holds the value itself. If the
//!   continuation was taken, the two sides *part* and meet at the child fiber's rendezvous
//!   (`fiberpool/rendezvous.rs`; every fiber owns one, so a fork takes none): the
//!   continuation makes a result cell and counts the task in the scope; the child delivers
//!   into that cell (or leaves its boxed result, if it arrives first, and takes a fresh
//!   rendezvous for its next fork).
//! * **Touch** (`get`) of an unfinished future suspends the current fiber on the future's list
//!   of waiters, and the worker goes on with the bottom of its own deque. When the future
//!   finishes (`put`), every waiter is pushed onto the bottom of the finishing worker's deque.
//! * **Scope end** waits for every spawn and future task of the scope the same way: a counter,
//!   and a signal the last finisher sets.
//! * **Latency-hiding futures** (`Futures::latency_future`): a touch of an unfinished one parks
//!   the fiber as above; the pool's I/O thread, which has no deque, does the put when the I/O
//!   future completes and hands every parked fiber to a worker through the injector
//!   (`put_external`; see `fiberpool/latency.rs`).
//!
//! A fiber works in *rounds*: a round runs its first task (a forked child, or a job the driver
//! gives it), then keeps popping its worker's deque bottom and running the tasks inline; when
//! it pops a fiber to resume, it becomes idle and switches straight to that fiber; when it
//! finds the deque empty, it switches to the *driver* on the worker thread's own stack, which
//! steals and sleeps, and carries out what a fiber asks for when it suspends (park on a
//! signal, a touch). A round's last switch is final: an idle fiber's next round starts over at
//! the top of its stack, with the entry of its first task. A fork starts an idle (or new) fiber
//! over with the child's own entry and switches straight to it, and the child, on the fast
//! path, straight back to its parent ([`crate::fiber`]: symmetric switches).
//! A fiber never holds worker state across a switch: every switch into a fiber passes the
//! worker's state, and the task's [`AbpWorker`] handle (one per fiber, at the top of its
//! stack) is updated with it.
//!
//! # Idle workers
//!
//! A worker that finds nothing tries to steal a few dozen times, then yields its CPU a few
//! times, then sleeps (with [`IdlePolicy::Lazy`](crate::config::IdlePolicy::Lazy), the default). Sleep is a Dekker handshake:
//! the sleeper announces itself (`sleepers += 1`, its flag set, then the *heavy* side of the
//! asymmetric fence of [`crate::deque`]) and looks at every deque once more before it parks; a
//! push issues the *light* side (a compiler fence when `membarrier` is available) after writing
//! the deque and wakes one sleeper if `sleepers > 0`. The pair acts as two SeqCst fences, so
//! either the sleeper sees the new entry or the pusher sees the sleeper: no lost wakeup. A
//! resumed fiber is pushed the same way, so it is always found.
//!
//! # Statistics
//!
//! `steals` and `steal_attempts`; extras: `heavy_fences` (the `membarrier`s of the steal path, of
//! owners switching their deques back to asymmetric mode and of the sleep protocol's
//! handshake, or on the fallback those places' SeqCst fences),
//! `fence_switches` and `symmetric_pops` (a deque under steal pressure fences its pops instead:
//! see [`crate::deque`]), `suspensions` (fibers parked at a touch or a sync),
//! `resumptions` (parked fibers made ready again), `fibers_created`, `fiber_runs` (fibers
//! started on a task), `forks_parted` (spawns and future creations whose continuation was taken
//! before the child ended), `sleeps` (idle workers parked), `deviations` (strands whose worker
//! did not run their predecessor in the serial order just before them: Spoonhower et al.'s
//! Definition 1, counted exactly, per worker, at no cost on the fast paths; see
//! `fiberpool/deviation.rs`), `unmaps`, `unmaps_resident` and `pages_released` (always 0 here:
//! `abp` keeps a suspended stack's pages; see [`crate::fibril`]), `minor_faults` (of the worker
//! threads since the last reset); gauges `stacks_high_water`, `stacks_mapped`, `stacks_in_use`,
//! `stack_pages_resident` (exact, by `mincore`, when the statistics are read),
//! `stack_pages_touched` (stack pages touched at least once since the pool started, see
//! [`crate::stack`]) and `stack_depth_pages_high_water`.
//!
//! Parsimonious stealing is what makes deviations grow with futures: a touch that suspends
//! leaves its worker popping its own deque, whose every entry then deviates, and so does every
//! join above the touch once it resumes (Spoonhower et al., Section 4.2 and Figure 5(a); the
//! test `deviations::abp::joins_after_a_stolen_future` forces that schedule: 2 + 2d deviations
//! for a chain of d joins, against 2 for `prows`).
//!
//! # Limits
//!
//! A task may migrate at every `join`, `scope`, `get` and fork, so it must not hold a reference
//! into thread-local storage across them, nor a lock guard whose unlock must happen on the
//! locking thread. `run` must not be called from inside a task of the same pool.

use crate::config::{Capabilities, PoolConfig};
use crate::deque::{self, Entry, FenceCounts, Owner, Stolen, Thief};
use crate::fiberpool::future::{FiberFuture, FiberScope, FiberShared};
use crate::fiberpool::handle::FiberWorker;
use crate::fiberpool::job::{FiberBox, Job};
use crate::fiberpool::latency;
use crate::fiberpool::pool::FiberPool;
use crate::fiberpool::signal::Signal;
use crate::fiberpool::worker::{Local, Shared};
use crate::fiberpool::{Names, Policy, StackUse};
use crate::rng::SplitMix64;
use std::marker::PhantomData;
use std::sync::Arc;

pub use crate::fiberpool::DEFAULT_STACK_SIZE;

/// The `abp` pool: P worker threads, one deque each, parsimonious stealing.
pub type Abp = FiberPool<AbpPolicy>;
/// The handle of one fiber of [`Abp`]: every task running on that fiber receives it. It stays
/// valid when the fiber migrates, because every switch into the fiber updates the worker it
/// points to.
pub type AbpWorker = FiberWorker<AbpPolicy>;
/// A scope of [`AbpWorker::scope`](crate::api::Worker::scope). Spawns are work-first: the
/// spawned task runs at once on a new fiber while the spawner's continuation is pushed and may
/// be stolen; the same holds for future creation.
pub type AbpScope<'s> = FiberScope<'s, AbpPolicy>;
/// A single-touch future of `abp`.
pub type AbpFuture<T> = FiberFuture<AbpPolicy, T>;
/// A multi-touch future of `abp`.
pub type AbpShared<T> = FiberShared<AbpPolicy, T>;

/// The deque policy of `abp` (see the module documentation): one Chase-Lev deque per worker,
/// stealing from a uniformly random victim, a touch parks only the touching fiber. `F` names
/// the runtime and says how it uses stacks: [`Plain`] is `abp`; `fibril` is this policy with
/// Fibril's stacks ([`crate::fibril`]).
pub struct AbpPolicy<F: Flavor = Plain>(PhantomData<fn() -> F>);

impl<F: Flavor> std::fmt::Debug for AbpPolicy<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(F::NAMES.pool)
    }
}

/// A runtime made of [`AbpPolicy`]'s deques: its names, and how it keeps and releases stacks.
pub trait Flavor: Send + Sync + 'static {
    /// The runtime's name.
    const NAME: &'static str;
    /// The names of its public types.
    const NAMES: Names;
    /// Its stacks.
    const STACKS: StackUse;
}

/// `abp` itself: the names `abp`, `Abp`..., stacks kept (`StackUse::KEEP`).
#[derive(Debug)]
pub struct Plain;

impl Flavor for Plain {
    const NAME: &'static str = "abp";
    const NAMES: Names = Names {
        pool: "Abp",
        worker: "AbpWorker",
        scope: "AbpScope",
        future: "AbpFuture",
        shared: "AbpShared",
    };
    const STACKS: StackUse = StackUse::KEEP;
}

/// The thieves' ends of every worker's deque.
pub struct AbpDeques {
    thieves: Box<[Thief]>,
}

impl<F: Flavor> Policy for AbpPolicy<F> {
    const NAME: &'static str = F::NAME;
    const NAMES: Names = F::NAMES;
    const STACKS: StackUse = F::STACKS;
    /// `fibril` can keep its pages (Fibril w/o unmap), as its stacks release them.
    const CAPABILITIES: Capabilities = Capabilities {
        unmap: F::STACKS.release_suspended,
        ..crate::fiberpool::CAPABILITIES
    };
    type Shared = AbpDeques;
    type Seed = Owner;
    type Local = Owner;
    /// A touch parks its fiber on the future's signal; the put pushes them all.
    type Fut = Signal<Self>;

    fn new(config: &PoolConfig, fences: &Arc<FenceCounts>) -> (AbpDeques, Vec<Owner>) {
        let p = config.workers;
        let (deques, thieves): (Vec<Owner>, Vec<Thief>) =
            (0..p).map(|_| deque::in_pool(256, fences)).unzip();
        (
            AbpDeques {
                thieves: thieves.into_boxed_slice(),
            },
            deques,
        )
    }

    fn local(seed: Owner) -> Owner {
        seed
    }

    #[inline(always)]
    fn owner(l: &Local<Self>) -> &Owner {
        &l.pol
    }

    #[inline(always)]
    fn pop(l: &Local<Self>) -> Option<Entry> {
        l.pol.pop()
    }

    fn work_visible(sh: &AbpDeques) -> bool {
        sh.thieves.iter().any(|t| !t.is_empty())
    }

    fn took_root_task(_: &Local<Self>) {}

    /// One steal attempt from a uniformly random victim.
    fn steal(l: &Local<Self>) -> Option<Job<Self>> {
        let sh = &*l.shared;
        let n = sh.pol.thieves.len();
        if n < 2 {
            return None;
        }
        let mut v = (l.next_rand() % (n as u64 - 1)) as usize;
        if v >= l.index {
            v += 1;
        }
        if sh.in_run() {
            sh.counters.attempts.add_single_writer(l.index, 1);
        }
        loop {
            match sh.pol.thieves[v].steal() {
                Stolen::Entry(e) => {
                    sh.counters.steals.add_single_writer(l.index, 1);
                    // SAFETY: the entry was encoded by its owner's `push`; stealing took it.
                    return Some(unsafe { Job::decode(e) });
                }
                Stolen::Retry => continue,
                Stolen::Empty => return None,
            }
        }
    }

    fn exit(_: &Local<Self>) {}

    fn new_fut() -> Signal<Self> {
        Signal::new()
    }

    fn new_done_fut() -> Signal<Self> {
        Signal::new_set()
    }

    #[inline]
    fn is_done(fut: &Signal<Self>) -> bool {
        fut.is_set()
    }

    fn suspend_touch(
        l: &Local<Self>,
        fut: &Signal<Self>,
        f: FiberBox<Self>,
    ) -> Option<FiberBox<Self>> {
        l.park(fut, f)
    }

    fn put(w: &FiberWorker<Self>, fut: &Signal<Self>) {
        w.set(fut);
    }

    /// The I/O thread's put of a latency future: every fiber parked on it goes to a worker
    /// through the injector (`fiberpool/latency.rs`).
    fn put_external(sh: &Shared<Self>, fut: &Signal<Self>, _: &mut SplitMix64) -> usize {
        latency::set_external(sh, fut)
    }

    fn stats(_: &AbpDeques) -> Vec<(&'static str, u64)> {
        Vec::new()
    }

    fn reset_stats(_: &AbpDeques) {}
}
