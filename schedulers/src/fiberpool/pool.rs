//! The pool: starting the worker threads, shutting them down, statistics, and `run` (a root task
//! through the injector, the caller blocked until it is done).

use super::handle::FiberWorker;
use super::job::JobRef;
use super::sleep::Sleepers;
use super::worker::{Counters, Shared, worker_main};
use super::{DEFAULT_STACK_SIZE, Policy};
use crate::api::{ForkJoin, Scheduler, StartError};
use crate::config::{Capabilities, PoolConfig, Unmap};
use crate::deque::FenceCounts;
use crate::stack::{Stack, StackCounters};
use crate::stats::Stats;
use crate::topology::{Topology, pin_current_thread};
use crossbeam_deque::Injector;
use std::cell::UnsafeCell;
use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicI32, AtomicU64, AtomicUsize, Ordering, fence};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{self, JoinHandle};

/// A fiber pool: P worker threads scheduling with policy `P` (`abp::Abp`, `prows::Prows`).
pub struct FiberPool<P: Policy> {
    shared: Arc<Shared<P>>,
    handles: Vec<JoinHandle<()>>,
    _policy: PhantomData<fn() -> P>,
}

impl<P: Policy> std::fmt::Debug for FiberPool<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(P::NAMES.pool)
            .field("workers", &self.handles.len())
            .finish()
    }
}

impl<P: Policy> FiberPool<P> {
    /// Starts a pool whose fibers get `stack_size` usable bytes of stack each.
    pub fn with_stack_size(config: &PoolConfig, stack_size: usize) -> Result<Self, StartError> {
        P::CAPABILITIES.admit(P::NAME, config)?;
        let p = config.workers;
        // Every busy worker runs on a fiber stack of its own: a pool whose workers cannot map
        // one each (too little address space, `ulimit -v`) is refused now, as a library pool
        // that cannot spawn its threads is, rather than failing mid-run. The probe's stacks are
        // unmapped again; the workers map theirs as they need them.
        let probe: Result<Vec<Stack>, _> = (0..p).map(|_| Stack::new(stack_size)).collect();
        if let Err(e) = probe {
            return Err(StartError::Os(format!(
                "{}: cannot map {p} fiber stacks of {stack_size} bytes: {e}",
                P::NAME
            )));
        }
        let placement = Topology::detect().placement(config.pinning, p);
        let fences = Arc::new(FenceCounts::for_mode(config.fence));
        let (pol, seeds) = P::new(config, &fences);
        let shared = Arc::new(Shared {
            pol,
            fences,
            injector: Injector::new(),
            sleep: Sleepers::for_mode(p, config.fence),
            futures: config.futures,
            release_suspended: P::STACKS.release_suspended && config.unmap == Unmap::On,
            idle: config.idle,
            counters: Counters::new(p),
            runs: AtomicUsize::new(0),
            stacks: Arc::new(StackCounters::new(p)),
            budget: config.steals,
            steals_base: AtomicU64::new(0),
            busy: AtomicUsize::new(p),
            tids: (0..p).map(|_| AtomicI32::new(0)).collect(),
            faults_base: AtomicU64::new(0),
            io: Default::default(),
        });
        let mut pool = FiberPool {
            shared: Arc::clone(&shared),
            handles: Vec::with_capacity(p),
            _policy: PhantomData,
        };
        for (i, seed) in seeds.into_iter().enumerate() {
            let sh = Arc::clone(&shared);
            let cpu = placement.as_ref().map(|pl| pl[i]);
            let h = thread::Builder::new()
                .name(format!("{}-{i}", P::NAME))
                .spawn(move || {
                    if let Some(cpu) = cpu {
                        // Pinning is best effort: a refusal leaves the thread unpinned.
                        let _ = pin_current_thread(cpu);
                    }
                    worker_main(sh, i, seed, stack_size)
                })
                .map_err(|e| StartError::Os(format!("spawning worker {i}: {e}")))?;
            pool.handles.push(h);
        }
        Ok(pool)
    }

    /// Fiber stacks currently in use (0 when no computation is running and every worker has
    /// retired its last fiber).
    pub fn stacks_in_use(&self) -> usize {
        self.shared.stacks.in_use()
    }

    /// The minor page faults of the worker threads so far (read from
    /// `/proc/self/task/TID/stat`; threads not started yet count 0).
    fn worker_faults(&self) -> u64 {
        self.shared
            .tids
            .iter()
            .map(|t| t.load(Ordering::Relaxed))
            .filter(|&t| t != 0)
            .map(thread_minor_faults)
            .sum()
    }

    /// The policy's shared state (for the policies' unit tests).
    #[cfg(test)]
    pub(crate) fn policy(&self) -> &P::Shared {
        &self.shared.pol
    }
}

impl<P: Policy> Drop for FiberPool<P> {
    fn drop(&mut self) {
        // The I/O thread first: what it still does (a put, the bookkeeping after one) may
        // hand work to the workers.
        self.shared.io.stop();
        self.shared.sleep.terminate();
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

impl<P: Policy> Scheduler for FiberPool<P> {
    const NAME: &'static str = P::NAME;

    const CAPABILITIES: Capabilities = P::CAPABILITIES;

    fn start(config: &PoolConfig) -> Result<Self, StartError> {
        Self::with_stack_size(config, config.stack_size.unwrap_or(DEFAULT_STACK_SIZE))
    }

    fn workers(&self) -> usize {
        self.handles.len()
    }

    fn stats(&self) -> Stats {
        let c = &self.shared.counters;
        let mut extra = vec![
            ("suspensions", c.suspensions.sum()),
            ("resumptions", c.resumptions.sum()),
            ("fibers_created", c.fibers.sum()),
            ("fiber_runs", c.fiber_runs.sum()),
            ("forks_parted", c.parted.sum()),
            ("sleeps", c.sleeps.sum()),
            ("deviations", c.deviations.sum()),
            ("unmaps", c.unmaps.sum()),
            ("unmaps_resident", c.unmaps_resident.sum()),
            ("pages_released", c.pages_released.sum()),
            (
                "minor_faults",
                self.worker_faults()
                    .saturating_sub(self.shared.faults_base.load(Ordering::Relaxed)),
            ),
        ];
        extra.extend(self.shared.fences.named());
        extra.extend(P::stats(&self.shared.pol));
        extra.extend(self.shared.io.stats());
        let st = &self.shared.stacks;
        let pages = st.scan();
        let mut gauges = vec![
            ("stacks_high_water", st.high_water() as u64),
            ("stacks_mapped", st.mapped() as u64),
            ("stacks_in_use", st.in_use() as u64),
            ("stack_pages_resident", pages.resident as u64),
            ("stack_pages_touched", pages.touched as u64),
            ("stack_depth_pages_high_water", st.deepest() as u64),
        ];
        gauges.extend(P::gauges(&self.shared.pol));
        Stats {
            steals: Some(c.steals.sum()),
            steal_attempts: Some(c.attempts.sum()),
            extra,
            gauges,
        }
    }

    fn reset_stats(&self) {
        let c = &self.shared.counters;
        for x in [
            &c.steals,
            &c.attempts,
            &c.suspensions,
            &c.resumptions,
            &c.fibers,
            &c.fiber_runs,
            &c.parted,
            &c.sleeps,
            &c.deviations,
            &c.unmaps,
            &c.unmaps_resident,
            &c.pages_released,
        ] {
            x.reset();
        }
        self.shared
            .faults_base
            .store(self.worker_faults(), Ordering::Relaxed);
        self.shared.fences.reset();
        P::reset_stats(&self.shared.pol);
        self.shared.io.reset();
        self.shared.stacks.reset_high_water();
    }
}

/// The minor page faults of thread `tid` of this process (field 10 of its `stat`), 0 if it
/// cannot be read.
fn thread_minor_faults(tid: i32) -> u64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")) else {
        return 0;
    };
    // The command name (field 2) may hold spaces and parentheses: fields 3.. follow the last ')'.
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(7))
        .and_then(|f| f.parse().ok())
        .unwrap_or(0)
}

/// The root task of a `run` call, in the caller's frame.
struct RootJob<F, R> {
    f: UnsafeCell<Option<F>>,
    result: UnsafeCell<Option<thread::Result<R>>>,
    done: Arc<(Mutex<bool>, Condvar)>,
}

impl<F, R> RootJob<F, R> {
    unsafe fn exec<P: Policy>(data: *const (), w: &FiberWorker<P>)
    where
        F: FnOnce(&FiberWorker<P>) -> R + Send,
        R: Send,
    {
        // SAFETY: `data` is the `RootJob` of a `run` call that blocks until `done` is set.
        let job = unsafe { &*(data as *const Self) };
        // SAFETY: the job runs once; nobody else touches `f` meanwhile.
        let f = unsafe { (*job.f.get()).take() }.expect("root job ran twice");
        // The root's first strand has no serial predecessor: never a deviation.
        let r = panic::catch_unwind(AssertUnwindSafe(|| f(w)));
        // Its last strand ends on a slow path (see `super::deviation`).
        w.here().end_strand();
        let done = Arc::clone(&job.done);
        // SAFETY: the caller reads `result` only after `done` is set below.
        unsafe { *job.result.get() = Some(r) };
        let mut g = done.0.lock().unwrap_or_else(|e| e.into_inner());
        *g = true;
        done.1.notify_all();
    }
}

impl<P: Policy> ForkJoin for FiberPool<P> {
    type Worker = FiberWorker<P>;

    fn run<R, F>(&self, f: F) -> R
    where
        F: FnOnce(&FiberWorker<P>) -> R + Send,
        R: Send,
    {
        let job = RootJob {
            f: UnsafeCell::new(Some(f)),
            result: UnsafeCell::new(None),
            done: Arc::new((Mutex::new(false), Condvar::new())),
        };
        self.shared.runs.fetch_add(1, Ordering::Relaxed);
        if self.shared.budget.is_some() {
            // The budget counts this run's steals (one run at a time when a schedule is
            // forced; a concurrent run would share the count).
            let steals = self.shared.counters.steals.sum();
            self.shared.steals_base.store(steals, Ordering::Relaxed);
        }
        self.shared.injector.push(JobRef {
            data: &job as *const RootJob<F, R> as *const (),
            exec: RootJob::<F, R>::exec::<P>,
        });
        fence(Ordering::SeqCst);
        self.shared.notify();
        let mut g = job.done.0.lock().unwrap_or_else(|e| e.into_inner());
        while !*g {
            g = job.done.1.wait(g).unwrap_or_else(|e| e.into_inner());
        }
        drop(g);
        self.shared.runs.fetch_sub(1, Ordering::Relaxed);
        match job
            .result
            .into_inner()
            .expect("root job finished without a result")
        {
            Ok(r) => r,
            Err(p) => panic::resume_unwind(p),
        }
    }
}
