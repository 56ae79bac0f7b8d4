//! `tbb`: Intel oneTBB, the TBB of the Fibril and libfork papers, as a baseline runtime
//! (feature `tbb`; Debian's `libtbb-dev`), through the C ABI of `shim/tbb.cpp` ([`ffi`]).
//!
//! # How it maps onto the closure front-end
//!
//! * The pool is a oneTBB `task_arena` of P threads, the thread that calls [`ForkJoin::run`]
//!   one of them (`task_arena(P, 1)`: one slot reserved for it, P - 1 workers of oneTBB's);
//!   `run` is `task_arena::execute`. The workers' stacks are those of every library runtime
//!   here ([`THREAD_STACK_BYTES`](crate::config::THREAD_STACK_BYTES): UTS's deepest trees nest joins 20,000 deep; oneTBB fixes
//!   the size when its thread pool starts, so the first arena's holds).
//! * `join(a, b)` is one `task_group`, as a TBB program writes it: `b` run on it (spawned,
//!   stealable), `a` inline, then `wait`. A scope is one `task_group`: each spawn is `run` on
//!   it, the scope's end its `wait`. Every task is a function pointer and a context across the
//!   boundary; a Rust closure in a slot (a join's) or a box (a spawn's) that oneTBB allocates a
//!   task object for, as it does for every task of a TBB program.
//! * A panic never crosses into C++: each task runs under `catch_unwind`, and the first panic
//!   is re-raised after the wait (`a`'s before `b`'s, the scope body's before a spawned
//!   task's). The arena stays usable.
//! * Serially (P = 1) a join runs `a` then `b`; a scope runs its spawned tasks at its end,
//!   newest first (oneTBB's owner takes its own deque last in, first out).
//! * No futures (the papers run TBB fork-join only): the worker does not implement
//!   [`Futures`](crate::Futures).
//! * Pinning through oneTBB's own means: a `task_scheduler_observer` on the arena pins each
//!   thread entering it to the CPU of its slot; a pin the OS refuses leaves that thread
//!   unpinned. Its own victims and sleeping idle workers (`lazy`) only; it counts nothing we
//!   can read, so its [`Stats`] are empty.
//!
//! The cost of the boundary (fib written in C++ on the same `task_group` pattern against our
//! Rust fib through the shim) is measured by `workloads/examples/baseline_floor.rs`; see
//! `paper-figures/measurements.md`.

pub mod ffi;

use crate::api::{ForkJoin, Scheduler, StartError};
use crate::config::{Capabilities, PoolConfig};
use crate::stats::Stats;
use crate::topology::{Topology, pin_current_thread};

/// The `tbb` pool: a oneTBB arena of P threads.
pub struct TbbPool {
    arena: ffi::TbbArena,
    workers: usize,
}

impl std::fmt::Debug for TbbPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TbbPool")
            .field("workers", &self.workers)
            .finish()
    }
}

impl Scheduler for TbbPool {
    const NAME: &'static str = "tbb";

    /// Its own policies (victims, sleeping idle workers), pinning through an observer, no
    /// futures.
    const CAPABILITIES: Capabilities = Capabilities {
        futures: false,
        general_futures: false,
        ..Capabilities::OWN_POLICIES
    };

    fn start(config: &PoolConfig) -> Result<Self, StartError> {
        Self::CAPABILITIES.admit(Self::NAME, config)?;
        let p = config.workers;
        let mut arena =
            ffi::TbbArena::new(p).map_err(|e| StartError::Os(format!("oneTBB: {e}")))?;
        if let Some(cpus) = Topology::detect().placement(config.pinning, p) {
            arena.observe(move |slot| {
                if let Some(&cpu) = cpus.get(slot) {
                    // A refused pin leaves the thread unpinned (see the module doc).
                    let _ = pin_current_thread(cpu);
                }
            });
        }
        Ok(TbbPool { arena, workers: p })
    }

    fn workers(&self) -> usize {
        self.workers
    }

    fn stats(&self) -> Stats {
        Stats::default()
    }

    fn reset_stats(&self) {}
}

impl ForkJoin for TbbPool {
    type Worker = TbbWorker;

    fn run<R, F>(&self, f: F) -> R
    where
        F: FnOnce(&TbbWorker) -> R + Send,
        R: Send,
    {
        self.arena.execute(|| f(&TbbWorker(())))
    }
}

crate::cabi::c_abi_front_end! {
    /// The handle of a task on `tbb`: nothing, as oneTBB finds the calling thread's arena
    /// itself.
    worker TbbWorker;
    /// A scope of [`TbbWorker`]: one oneTBB `task_group`.
    scope TbbScope = ffi::TbbScope;
}
