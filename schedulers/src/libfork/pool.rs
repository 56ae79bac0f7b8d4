//! The pool: what every worker shares, starting and stopping the workers, statistics, and
//! `run_async` (the root frame and its latch).

use super::frame::{Frame, Header, Kind, Slot};
use super::idle::Group;
use super::numa::{groups_of, victim_tables};
use super::ops::LibforkWorker;
use super::stack::{SegStack, StackCounters};
use super::worker::{Request, WorkerState};
use crate::api::{AsyncForkJoin, Scheduler, StartError};
use crate::config::{Capabilities, IdlePolicy, PoolConfig, VictimPolicy};
use crate::deque::{self, FenceCounts, Owner, Thief};
use crate::stats::{PerWorker, Stats};
use crate::topology::{Topology, pin_current_thread};
use std::cell::Cell;
use std::future::Future;
use std::panic::resume_unwind;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::{self, JoinHandle};

/// The pool's counters.
#[derive(Debug)]
pub(super) struct Counters {
    pub(super) steals: PerWorker,
    pub(super) attempts: PerWorker,
    pub(super) frames: PerWorker,
    pub(super) sleeps: PerWorker,
}

/// What every worker shares.
pub(super) struct Shared {
    pub(super) thieves_handles: Box<[Thief]>,
    /// Root frames submitted by `run_async`, not taken by a worker yet (one queue for the pool,
    /// not libfork's queue per worker: see the module docs of [`super`], "Where this differs").
    pub(super) injector: Mutex<Vec<RootRef>>,
    /// Whether `injector` may be non-empty (read without the lock).
    pub(super) injected: AtomicBool,
    pub(super) idle: IdlePolicy,
    /// Workers running a task, in the whole pool.
    pub(super) active: AtomicUsize,
    /// `run_async` calls in progress: the idle-time counters (steal attempts, sleeps) count
    /// only while one is, so an idle busy pool does not run them up between runs.
    pub(super) runs: AtomicUsize,
    /// The lazy pool's groups: the workers of each NUMA node of the placement.
    pub(super) groups: Box<[Group]>,
    pub(super) terminate: AtomicBool,
    pub(super) counters: Counters,
    pub(super) stacks: StackCounters,
    /// The deques' fence counts (see [`crate::deque::FenceCounts`]).
    pub(super) fences: Arc<FenceCounts>,
}

/// A root frame on its way to a worker.
pub(super) struct RootRef(*mut Header);

// SAFETY: the root frame is handed to exactly one worker through the injector's lock; its
// state is `Send` (the bounds of `run_async`).
unsafe impl Send for RootRef {}

impl Shared {
    /// Wakes one sleeper of the first group that has one (a new root needs one worker; every
    /// worker that is awake looks at the injector anyway).
    pub(super) fn wake_one(&self) {
        if let Some(g) = self
            .groups
            .iter()
            .find(|g| g.sleepers.load(Ordering::SeqCst) > 0)
        {
            g.wake_one();
        }
    }

    pub(super) fn wake_all(&self) {
        for g in &self.groups {
            g.wake_all();
        }
    }

    pub(super) fn take_root(&self) -> Option<*mut Header> {
        if !self.injected.load(Ordering::SeqCst) {
            return None;
        }
        let mut q = self.injector.lock().unwrap_or_else(PoisonError::into_inner);
        let r = q.pop().map(|r| r.0);
        if q.is_empty() {
            self.injected.store(false, Ordering::SeqCst);
        }
        r
    }
}

/// Where `run_async` waits for its root.
pub(super) struct Latch {
    pub(super) done: Mutex<bool>,
    pub(super) cv: Condvar,
}

impl Latch {
    /// Opens the latch.
    ///
    /// # Safety
    /// `l` is live; it may be freed as soon as this returns.
    pub(super) unsafe fn open(l: *const Latch) {
        // SAFETY: the caller's contract; the waiter cannot see `done` before we unlock.
        let l = unsafe { &*l };
        let mut d = l.done.lock().unwrap_or_else(PoisonError::into_inner);
        *d = true;
        l.cv.notify_all();
    }
}

/// The libfork pool.
pub struct LibforkPool {
    pub(super) shared: Arc<Shared>,
    handles: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for LibforkPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LibforkPool")
            .field("workers", &self.handles.len())
            .field("idle", &self.shared.idle)
            .finish()
    }
}

impl Drop for LibforkPool {
    fn drop(&mut self) {
        self.shared.terminate.store(true, Ordering::SeqCst);
        self.shared.wake_all();
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}

impl LibforkPool {
    /// Starts a pool as [`Scheduler::start`] does, on `topology` (the machine's, or a made-up
    /// one in tests: it decides the victims and the lazy pool's groups; pinning uses its CPU
    /// numbers).
    pub(super) fn start_on(config: &PoolConfig, topology: &Topology) -> Result<Self, StartError> {
        Self::CAPABILITIES.admit(Self::NAME, config)?;
        let p = config.workers;
        let placement = topology.placement(config.pinning, p);
        let mut tables = victim_tables(config, topology).into_iter();
        let groups = groups_of(config, topology);
        let group_count = groups.iter().max().map_or(1, |g| g + 1);
        let fences = Arc::new(FenceCounts::for_mode(config.fence));
        let owners: Vec<(Owner, Thief)> = (0..p).map(|_| deque::in_pool(64, &fences)).collect();
        let shared = Arc::new(Shared {
            thieves_handles: owners.iter().map(|(_, t)| t.clone()).collect(),
            injector: Mutex::new(Vec::new()),
            injected: AtomicBool::new(false),
            idle: config.idle,
            active: AtomicUsize::new(0),
            runs: AtomicUsize::new(0),
            groups: (0..group_count).map(|_| Group::new()).collect(),
            terminate: AtomicBool::new(false),
            counters: Counters {
                steals: PerWorker::new(p),
                attempts: PerWorker::new(p),
                frames: PerWorker::new(p),
                sleeps: PerWorker::new(p),
            },
            stacks: StackCounters::default(),
            fences,
        });
        let mut pool = LibforkPool {
            shared: Arc::clone(&shared),
            handles: Vec::with_capacity(p),
        };
        // Each worker says whether it got its CPU: a refused pin fails the start, as in rayon's
        // and tokio's pools, so no run meant to be pinned runs unpinned.
        let (pinned_tx, pinned_rx) = std::sync::mpsc::channel::<Result<(), String>>();
        for (i, (owner, _)) in owners.into_iter().enumerate() {
            let sh = Arc::clone(&shared);
            let cpu = placement.as_ref().map(|pl| pl[i]);
            let victims = tables.next().expect("one victim table per worker");
            let group = groups[i];
            let pinned_tx = pinned_tx.clone();
            let h = thread::Builder::new()
                .name(format!("libfork-{i}"))
                .spawn(move || {
                    let pinned = cpu.map_or(Ok(()), pin_current_thread);
                    // The start waits for every worker's sender to go: send, then drop it.
                    let _ = pinned_tx.send(pinned.map_err(|e| format!("worker {i}: {e}")));
                    drop(pinned_tx);
                    // SAFETY: the counters live in `sh`, which outlives the worker's stacks
                    // (dropped with the `WorkerState` below).
                    let first = Box::into_raw(Box::new(unsafe { SegStack::new(&sh.stacks) }));
                    let frames: *const AtomicU64 = sh.counters.frames.cell(i);
                    let w = WorkerState {
                        index: i,
                        shared: sh,
                        owner,
                        stack: Cell::new(first),
                        spare: Cell::new(ptr::null_mut()),
                        current: Cell::new(ptr::null_mut()),
                        request: Cell::new(Request::None),
                        frames,
                        rng: Cell::new(0x9E37_79B9_7F4A_7C15 ^ ((i as u64 + 1) << 17)),
                        victims,
                        group,
                    };
                    w.main_loop();
                })
                .map_err(|e| StartError::Os(format!("spawning worker {i}: {e}")))?;
            pool.handles.push(h);
        }
        drop(pinned_tx);
        let refused: Vec<String> = pinned_rx.iter().filter_map(Result::err).collect();
        if !refused.is_empty() {
            return Err(StartError::Os(refused.join("; ")));
        }
        Ok(pool)
    }
}

impl Scheduler for LibforkPool {
    const NAME: &'static str = "libfork";
    /// Fork-join only, as in its paper: no futures; segmented stacks that grow as deep as the
    /// tasks go (no fixed size to choose); no forced schedule; uniform or NUMA-weighted
    /// victims; busy or lazy pool.
    const CAPABILITIES: Capabilities = Capabilities {
        futures: false,
        general_futures: false,
        victims: VictimPolicy::ALL,
        idle: IdlePolicy::ALL,
        fence_modes: true,
        ..Capabilities::OWN_POLICIES
    };

    fn start(config: &PoolConfig) -> Result<Self, StartError> {
        Self::start_on(config, &Topology::detect())
    }

    fn workers(&self) -> usize {
        self.handles.len()
    }

    fn stats(&self) -> Stats {
        let c = &self.shared.counters;
        let s = &self.shared.stacks;
        Stats {
            steals: Some(c.steals.sum()),
            steal_attempts: Some(c.attempts.sum()),
            extra: vec![
                ("frames", c.frames.sum()),
                (
                    "stacklets_allocated",
                    s.stacklets_allocated.load(Ordering::Relaxed),
                ),
                ("sleeps", c.sleeps.sum()),
            ]
            .into_iter()
            .chain(self.shared.fences.named())
            .collect(),
            gauges: vec![
                (
                    "stack_bytes_high_water",
                    s.bytes_high_water.load(Ordering::Relaxed),
                ),
                ("stack_bytes_live", s.bytes_live.load(Ordering::Relaxed)),
                ("stacklets_live", s.stacklets_live.load(Ordering::Relaxed)),
                ("stacks_live", s.stacks_live.load(Ordering::Relaxed)),
            ],
        }
    }

    fn reset_stats(&self) {
        let c = &self.shared.counters;
        for x in [&c.steals, &c.attempts, &c.frames, &c.sleeps] {
            x.reset();
        }
        self.shared.fences.reset();
        let s = &self.shared.stacks;
        s.stacklets_allocated.store(0, Ordering::Relaxed);
        s.bytes_high_water
            .store(s.bytes_live.load(Ordering::Relaxed), Ordering::Relaxed);
    }
}

/// The root frame of a `run_async` call, in a box of its own.
///
/// # Safety
/// `out` and `latch` outlive the computation.
pub(super) unsafe fn root_frame<Fut: Future>(
    fut: Fut,
    out: &Slot<Fut::Output>,
    latch: &Latch,
) -> (Box<std::mem::MaybeUninit<Frame<Fut>>>, *mut Header) {
    let mut root = Box::<Frame<Fut>>::new_uninit();
    // SAFETY: the box has the frame's layout; the rest is the caller's contract.
    let h = unsafe {
        Frame::write_with(
            root.as_mut_ptr().cast(),
            || fut,
            out,
            (latch as *const Latch).cast_mut().cast(),
            ptr::null_mut(),
            ptr::null_mut(),
            Kind::Root,
        )
    };
    (root, h)
}

impl AsyncForkJoin for LibforkPool {
    type Worker<'scope> = LibforkWorker<'scope>;

    fn run_async<'scope, R, F, Fut>(&self, f: F) -> R
    where
        F: FnOnce(LibforkWorker<'scope>) -> Fut + Send,
        Fut: Future<Output = R> + Send + 'scope,
        R: Send + 'scope,
    {
        let latch = Latch {
            done: Mutex::new(false),
            cv: Condvar::new(),
        };
        let out: Slot<R> = Slot::new();
        // SAFETY: `out` and `latch` live until the latch is opened, which is the worker's
        // last touch of the root frame.
        let (root, h) = unsafe { root_frame(f(LibforkWorker::new()), &out, &latch) };
        self.shared.runs.fetch_add(1, Ordering::Relaxed);
        {
            let mut q = self
                .shared
                .injector
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            q.push(RootRef(h));
            self.shared.injected.store(true, Ordering::SeqCst);
        }
        self.shared.wake_one();
        let mut d = latch.done.lock().unwrap_or_else(PoisonError::into_inner);
        while !*d {
            d = latch.cv.wait(d).unwrap_or_else(PoisonError::into_inner);
        }
        drop(d);
        self.shared.runs.fetch_sub(1, Ordering::Relaxed);
        // The root's future was dropped when it finished: free the memory only.
        drop(root);
        // SAFETY: the root wrote its outcome before opening the latch.
        match unsafe { out.take() } {
            Ok(r) => r,
            Err(payload) => resume_unwind(payload),
        }
    }
}
