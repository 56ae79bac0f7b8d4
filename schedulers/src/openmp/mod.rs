//! `openmp`: LLVM's OpenMP runtime (libomp), the OpenMP of the libfork paper, as a baseline
//! runtime (feature `openmp`; Debian's `libomp-dev`, the shim compiled by clang), through the
//! C ABI of `shim/openmp.cpp` ([`ffi`]).
//!
//! # How it maps onto the closure front-end
//!
//! * [`ForkJoin::run`] is one parallel region of exactly P threads (dynamic adjustment off; a
//!   team of another size panics), the root in a `single`: the other threads wait at its
//!   barrier, running the region's tasks.
//! * `join(a, b)`: `a` as a `task untied`, `b` inline, `taskwait`; serially (P = 1, where
//!   libomp runs a task at its creation) `a` runs before `b`. A scope is a `taskgroup`, each
//!   spawn a `task untied`; serially every spawned task runs at its spawn. Every task is a
//!   function pointer and a context across the boundary, and a panic never crosses it: each
//!   task runs under `catch_unwind`, the first panic is re-raised after the wait, and the
//!   runtime stays usable.
//! * No futures (the paper runs OpenMP fork-join only): the worker does not implement
//!   [`Futures`](crate::Futures).
//!
//! # One OpenMP runtime per process
//!
//! libomp is one runtime per process: one thread pool, its settings read from the environment
//! at its first call. So a pool holds nothing of it: [`Scheduler::start`] checks the
//! configuration and asks for worker stacks of [`THREAD_STACK_BYTES`], as every library
//! runtime here gets (libomp takes the size only before the process's first region; its
//! default is 4 MiB), every `run` forks one region, and dropping
//! the pool ends nothing (libomp's threads stay in its pool for the next region, of this pool
//! or another). Every region is forked by one long-lived thread of [`ffi`], the caller
//! blocking meanwhile: libomp 14 corrupts its task allocator when regions with tasks are
//! forked by short-lived threads one after another (as a test harness does), and the runs of
//! every pool of the process are serialised there.
//!
//! # Settings
//!
//! * Idle: a libomp thread out of work spins for the *blocktime*, then sleeps. `idle=lazy` (the
//!   default) keeps libomp's blocktime (200 ms, or what `KMP_BLOCKTIME` / `OMP_WAIT_POLICY`
//!   set at its start): back off, then sleep. `idle=busy` sets it infinite for the pool's runs
//!   (`kmp_set_blocktime`, as `OMP_WAIT_POLICY=active`): never sleep. Its own victims only.
//! * Pinning: each thread entering a region pins itself to the CPU of its thread number
//!   (libomp binds nothing unless `OMP_PROC_BIND` / `OMP_PLACES` say so at its start); a pin
//!   the OS refuses leaves that thread unpinned.
//! * It counts nothing we can read, so its [`Stats`] are empty.
//!
//! The cost of the boundary (fib written in C++ with the same tasks against our Rust fib
//! through the shim) is measured by `workloads/examples/baseline_floor.rs`; see
//! `paper-figures/measurements.md`.

pub mod ffi;

use crate::api::{ForkJoin, Scheduler, StartError};
use crate::config::{Capabilities, IdlePolicy, PoolConfig, THREAD_STACK_BYTES, VictimPolicy};
use crate::stats::Stats;
use crate::topology::{Topology, pin_current_thread};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicI32, Ordering};

/// The `openmp` pool: the team size, idle policy and CPUs of its regions.
#[derive(Debug)]
pub struct OpenMpPool {
    workers: usize,
    idle: IdlePolicy,
    cpus: Option<Vec<usize>>,
}

/// The blocktime the last run set (`-1`: none yet). Runs are serialised by [`ffi`]'s root
/// thread, so a swap here is enough.
static BLOCKTIME: AtomicI32 = AtomicI32::new(-1);

/// libomp's blocktime before any pool changed it (its default or the environment's).
fn own_blocktime() -> i32 {
    static OWN: OnceLock<i32> = OnceLock::new();
    *OWN.get_or_init(ffi::blocktime)
}

impl Scheduler for OpenMpPool {
    const NAME: &'static str = "openmp";

    /// Both idle policies (through the blocktime), pinning from each thread's entry into a
    /// region, its own victims, no futures.
    const CAPABILITIES: Capabilities = Capabilities {
        futures: false,
        general_futures: false,
        victims: &[VictimPolicy::RuntimeDefault],
        idle: IdlePolicy::ALL,
        ..Capabilities::OWN_POLICIES
    };

    fn start(config: &PoolConfig) -> Result<Self, StartError> {
        Self::CAPABILITIES.admit(Self::NAME, config)?;
        // Read before any pool sets it; taken only before the process's first region.
        own_blocktime();
        ffi::set_stack_size(THREAD_STACK_BYTES);
        let p = config.workers;
        Ok(OpenMpPool {
            workers: p,
            idle: config.idle,
            cpus: Topology::detect().placement(config.pinning, p),
        })
    }

    fn workers(&self) -> usize {
        self.workers
    }

    fn stats(&self) -> Stats {
        Stats::default()
    }

    fn reset_stats(&self) {}
}

impl ForkJoin for OpenMpPool {
    type Worker = OmpWorker;

    fn run<R, F>(&self, f: F) -> R
    where
        F: FnOnce(&OmpWorker) -> R + Send,
        R: Send,
    {
        let blocktime = match self.idle {
            IdlePolicy::Lazy => own_blocktime(),
            IdlePolicy::Busy => i32::MAX,
        };
        // Only when another pool's runs left another one: each set is a trip to the root.
        if BLOCKTIME.swap(blocktime, Ordering::Relaxed) != blocktime {
            ffi::set_blocktime(u32::try_from(blocktime).unwrap_or(0));
        }
        let pin = |n: usize| {
            if let Some(&cpu) = self.cpus.as_ref().and_then(|c| c.get(n)) {
                // A refused pin leaves the thread unpinned (see the module doc).
                let _ = pin_current_thread(cpu);
            }
        };
        let (r, team) = ffi::run_observed(self.workers, pin, || f(&OmpWorker(())));
        assert_eq!(
            team, self.workers,
            "OpenMP: a team of {team} threads, not the pool's {}",
            self.workers
        );
        r
    }
}

crate::cabi::c_abi_front_end! {
    /// The handle of a task on `openmp`: nothing, as libomp finds the calling thread's team
    /// itself.
    worker OmpWorker;
    /// A scope of [`OmpWorker`]: one OpenMP `taskgroup`.
    scope OmpScope = ffi::OmpScope;
}
