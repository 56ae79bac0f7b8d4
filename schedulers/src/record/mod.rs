//! `record`: the serial elision that records the computation's DAG as it runs.
//!
//! It runs a program exactly as [`serial`](crate::serial) does (P = 1, eager: a `join`'s first
//! branch, a spawned task and a future's task run to completion where they start, a touch reads
//! the value), and numbers every strand in that serial order while noting the operation that
//! ended it: fork, future creation, touch, put, or the end of a branch or spawned task. The
//! result is a [`Dag`] (see [`dag`] for the model and the edges), which the simulator in the
//! `stealbench-sim` crate replays under ABP and ProWS at any P.
//!
//! ```
//! use stealbench_schedulers::record::{Recorder, Weights};
//! use stealbench_schedulers::{FutureHandle, Futures, Worker};
//!
//! let (v, dag) = Recorder::record(Weights::Unit, |w| {
//!     w.scope(|s, w| {
//!         let f = w.future(s, |_, _| 20);
//!         let (a, b) = w.join(|_| 1, |_| 2);
//!         f.get(w) + a + b
//!     })
//! });
//! assert_eq!(v, 23);
//! // root, future, continuation, join's two branches and sync, touch join, scope sync
//! assert_eq!((dag.len(), dag.futures(), dag.touches()), (8, 1, 1));
//! dag.validate().unwrap();
//! ```
//!
//! # Weights
//!
//! [`Weights::Unit`] gives every strand weight 1; [`Weights::Nanos`] measures it with the
//! monotonic clock (one clock read per event). Either way a program may add to the current
//! strand's weight with [`RecordWorker::work`], which is how tests build DAGs of known shape.
//!
//! # Recording
//!
//! The recording is a `Vec` of 12-byte nodes with `u32` indices (plus 8 bytes per future and 4
//! per touch), so a 10-million-strand computation takes about 120 MB (up to three times that
//! for a moment while the vector grows). Every `run` of the pool appends to the same recording
//! (a later run continues the previous run's last strand), until [`Recorder::take_dag`] takes
//! it or [`Scheduler::reset_stats`] discards it. A run that panics discards the recording.
//! `run` must not be called from inside a task of the pool.
//!
//! The pool refuses more than one worker, and
//! [`FutureStack::Current`](crate::config::FutureStack::Current) (futures that do not run at
//! their creation): it records the eager order only (its [`Scheduler::CAPABILITIES`]).

pub mod dag;

pub use dag::{Dag, Kind, NONE, Node, Weights};

use crate::api::{ForkJoin, FutureHandle, Scheduler, Scope, SharedHandle, StartError, Worker};
use crate::config::{Capabilities, PoolConfig};
use crate::stats::Stats;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

/// The runtime's name as the harness would print it.
pub const NAME: &str = "record";

/// The recording pool: no threads, the caller runs everything and every strand is recorded.
#[derive(Debug)]
pub struct Recorder {
    weights: Weights,
    /// The recording so far (`None` until the first run, and while a run holds it).
    state: Mutex<Option<Builder>>,
}

/// The handle every task of a [`Recorder`] receives; it holds the recording while a run lasts.
#[derive(Debug)]
pub struct RecordWorker {
    b: Mutex<Builder>,
}

/// A scope of [`RecordWorker::scope`]: its level among the open scopes, where its children
/// wait for its sync node.
#[derive(Debug)]
pub struct RecordScope<'s> {
    level: usize,
    _marker: PhantomData<&'s mut &'s ()>,
}

/// A single-touch future of the recorder: the value and the future's id.
#[derive(Debug)]
pub struct RecordFuture<T> {
    value: T,
    id: u32,
}

/// A multi-touch future of the recorder: the shared value and the future's id.
#[derive(Debug)]
pub struct RecordShared<T>(Arc<(T, u32)>);

impl<T> Clone for RecordShared<T> {
    fn clone(&self) -> Self {
        RecordShared(Arc::clone(&self.0))
    }
}

impl Recorder {
    /// A recorder whose strands weigh `weights`.
    pub fn new(weights: Weights) -> Recorder {
        Recorder {
            weights,
            state: Mutex::new(None),
        }
    }

    /// Runs `f` on a new recorder and returns its value with the recorded DAG.
    pub fn record<R, F>(weights: Weights, f: F) -> (R, Dag)
    where
        F: FnOnce(&RecordWorker) -> R + Send,
        R: Send,
    {
        let rec = Recorder::new(weights);
        let r = rec.run(f);
        (r, rec.take_dag())
    }

    /// What the strands' weights measure.
    pub fn weights(&self) -> Weights {
        self.weights
    }

    /// The DAG of every run since the pool started or since the last `take_dag` or
    /// `reset_stats`; the recording starts over empty.
    pub fn take_dag(&self) -> Dag {
        match self.lock().take() {
            Some(b) => b.finish(),
            None => Dag {
                weights: self.weights,
                ..Dag::default()
            },
        }
    }

    fn lock(&self) -> MutexGuard<'_, Option<Builder>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Scheduler for Recorder {
    const NAME: &'static str = NAME;
    /// The serial elision, recording: one worker, the calling thread, futures general and
    /// not, run where they are created (the eager order the simulator replays).
    const CAPABILITIES: Capabilities = Capabilities::SERIAL_ELISION;

    /// Starts a recorder measuring [`Weights::Nanos`]; [`Recorder::new`] chooses the weights.
    fn start(config: &PoolConfig) -> Result<Self, StartError> {
        Self::CAPABILITIES.admit(NAME, config)?;
        Ok(Recorder::new(Weights::Nanos))
    }

    fn workers(&self) -> usize {
        1
    }

    /// No steals; extras `dag_nodes`, `futures`, `touches`: the recording so far.
    fn stats(&self) -> Stats {
        let (nodes, futures, touches) = self.lock().as_ref().map_or((0, 0, 0), |b| {
            (b.nodes.len(), b.puts.len(), b.touch_pairs.len())
        });
        Stats {
            steals: Some(0),
            steal_attempts: Some(0),
            extra: vec![
                ("dag_nodes", nodes as u64),
                ("futures", futures as u64),
                ("touches", touches as u64),
            ],
            gauges: Vec::new(),
        }
    }

    /// Discards the recording.
    fn reset_stats(&self) {
        *self.lock() = None;
    }
}

impl ForkJoin for Recorder {
    type Worker = RecordWorker;

    fn run<R, F>(&self, f: F) -> R
    where
        F: FnOnce(&RecordWorker) -> R + Send,
        R: Send,
    {
        let mut b = self
            .lock()
            .take()
            .unwrap_or_else(|| Builder::new(self.weights));
        b.begin_run();
        let w = RecordWorker { b: Mutex::new(b) };
        let r = f(&w);
        let mut b = w.b.into_inner().unwrap_or_else(|e| e.into_inner());
        b.end_run();
        *self.lock() = Some(b);
        r
    }
}

impl RecordWorker {
    fn b(&self) -> MutexGuard<'_, Builder> {
        self.b.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds `units` to the weight of the strand running now (in either [`Weights`] mode).
    pub fn work(&self, units: u32) {
        let mut b = self.b();
        b.added = b.added.saturating_add(u64::from(units));
    }
}

impl Worker for RecordWorker {
    type Scope<'s> = RecordScope<'s>;

    fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce(&Self) -> RA + Send,
        B: FnOnce(&Self) -> RB + Send,
        RA: Send,
        RB: Send,
    {
        let fork = self.b().end_strand(Kind::Fork, NONE);
        let ra = a(self);
        let a_last = {
            let mut g = self.b();
            let a_last = g.end_strand(Kind::Jump, NONE);
            let cont = g.cur;
            g.nodes[fork as usize].set_target(cont);
            a_last
        };
        let rb = b(self);
        {
            let mut g = self.b();
            g.end_strand(Kind::Seq, NONE);
            let sync = g.cur;
            g.nodes[a_last as usize].set_target(sync);
        }
        (ra, rb)
    }

    fn scope<'s, F, R>(&self, f: F) -> R
    where
        F: FnOnce(&RecordScope<'s>, &RecordWorker) -> R + Send,
        R: Send,
    {
        let level = self.b().open_scope();
        let r = f(
            &RecordScope {
                level,
                _marker: PhantomData,
            },
            self,
        );
        self.b().close_scope(level);
        r
    }
}

impl<'s> RecordScope<'s> {
    /// Records the start of a child (spawned task or future task), runs it, records its end as
    /// `kind` and the continuation's start; returns the child's value.
    fn child<T>(
        &self,
        w: &RecordWorker,
        start: Kind,
        end: Kind,
        f: impl FnOnce(&Self, &RecordWorker) -> T,
    ) -> (T, u32) {
        let (fork, fut) = {
            let mut g = w.b();
            let fut = if start == Kind::Future {
                g.new_future()
            } else {
                NONE
            };
            (g.end_strand(start, NONE), fut)
        };
        let v = f(self, w);
        let mut g = w.b();
        let last = g.end_strand(end, fut);
        let cont = g.cur;
        g.nodes[fork as usize].set_target(cont);
        g.scopes[self.level].push(last);
        if fut != NONE {
            g.puts[fut as usize] = last;
        }
        (v, fut)
    }
}

impl<'s> Scope<'s> for RecordScope<'s> {
    type Worker = RecordWorker;

    fn spawn<F>(&self, w: &RecordWorker, f: F)
    where
        F: FnOnce(&Self, &RecordWorker) + Send + 's,
    {
        self.child(w, Kind::Fork, Kind::Jump, f);
    }
}

impl<'s> RecordScope<'s> {
    pub(crate) fn future<T, F>(&self, w: &RecordWorker, f: F) -> RecordFuture<T>
    where
        F: FnOnce(&Self, &RecordWorker) -> T + Send + 's,
        T: Send + 's,
    {
        let (value, id) = self.child(w, Kind::Future, Kind::Put, f);
        RecordFuture { value, id }
    }

    pub(crate) fn shared_future<T, F>(&self, w: &RecordWorker, f: F) -> RecordShared<T>
    where
        F: FnOnce(&Self, &RecordWorker) -> T + Send + 's,
        T: Send + Sync + 's,
    {
        let (value, id) = self.child(w, Kind::Future, Kind::Put, f);
        RecordShared(Arc::new((value, id)))
    }
}

crate::api::futures_by_scope!(impl[] RecordWorker {
    scope: RecordScope, future: RecordFuture, shared: RecordShared, params: [], latency: default
});

impl<T: Send> FutureHandle<T> for RecordFuture<T> {
    type Worker = RecordWorker;
    fn get(self, w: &RecordWorker) -> T {
        w.b().touch(self.id);
        self.value
    }
}

impl<T: Send + Sync> SharedHandle<T> for RecordShared<T> {
    type Worker = RecordWorker;
    fn get(&self, w: &RecordWorker) -> &T {
        w.b().touch(self.0.1);
        &self.0.0
    }
}

/// The recording in progress.
#[derive(Debug)]
struct Builder {
    weights: Weights,
    /// The strands so far; the last one is running (a placeholder until it ends).
    nodes: Vec<Node>,
    /// The running strand, or [`NONE`] between runs.
    cur: u32,
    /// When the running strand's measurement started ([`Weights::Nanos`]).
    mark: Option<Instant>,
    /// Weight added to the running strand by [`RecordWorker::work`].
    added: u64,
    /// Per open scope (by level): the last strands of its children, whose target is its sync.
    scopes: Vec<Vec<u32>>,
    /// Open scopes (`scopes` keeps the closed ones' vectors for reuse).
    depth: usize,
    /// Future id -> put node.
    puts: Vec<u32>,
    /// (future id, future-join node) per touch, in serial order.
    touch_pairs: Vec<(u32, u32)>,
}

impl Builder {
    fn new(weights: Weights) -> Builder {
        Builder {
            weights,
            nodes: Vec::new(),
            cur: NONE,
            mark: None,
            added: 0,
            scopes: Vec::new(),
            depth: 0,
            puts: Vec::new(),
            touch_pairs: Vec::new(),
        }
    }

    /// Starts a strand, the next index, whose measurement starts at `now`.
    fn begin_strand(&mut self, now: Option<Instant>) {
        let next = u32::try_from(self.nodes.len())
            .ok()
            .filter(|&n| n != NONE)
            .expect("more than 2^32 - 1 strands");
        self.nodes.push(Node::PLACEHOLDER);
        self.cur = next;
        self.added = 0;
        self.mark = now;
    }

    /// Ends the running strand as `kind` (future `fut` for puts and touches; the target is
    /// patched later) and starts the next one. Returns the ended strand. One clock read: the
    /// end of one strand is the start of the next.
    fn end_strand(&mut self, kind: Kind, fut: u32) -> u32 {
        let now = self.now();
        let ended = self.seal(kind, fut, now);
        self.begin_strand(now);
        ended
    }

    /// The clock, if the weights are measured.
    fn now(&self) -> Option<Instant> {
        (self.weights == Weights::Nanos).then(Instant::now)
    }

    /// Ends the running strand as `kind` with its weight: the time since its start (or 1),
    /// plus what the program added, at least 1 and at most `u32::MAX`.
    fn seal(&mut self, kind: Kind, fut: u32, now: Option<Instant>) -> u32 {
        let base = match (self.mark, now) {
            (Some(m), Some(t)) => u64::try_from(t.duration_since(m).as_nanos())
                .unwrap_or(u64::MAX)
                .max(1),
            _ => 1,
        };
        let work = u32::try_from(base.saturating_add(self.added)).unwrap_or(u32::MAX);
        let i = self.cur;
        self.nodes[i as usize] = Node::new(work, kind, NONE, fut);
        i
    }

    fn begin_run(&mut self) {
        if let Some(last) = self.nodes.last_mut() {
            // The previous run's sink continues into this run.
            last.set_kind(Kind::Seq);
        }
        let now = self.now();
        self.begin_strand(now);
    }

    fn end_run(&mut self) {
        let now = self.now();
        self.seal(Kind::End, NONE, now);
        self.cur = NONE;
        self.mark = None;
    }

    fn new_future(&mut self) -> u32 {
        let id = u32::try_from(self.puts.len())
            .ok()
            .filter(|&id| id < dag::MAX_FUTURES)
            .expect("too many futures for one recording");
        self.puts.push(NONE);
        id
    }

    fn open_scope(&mut self) -> usize {
        if self.scopes.len() == self.depth {
            self.scopes.push(Vec::new());
        }
        self.depth += 1;
        self.depth - 1
    }

    /// The end of the scope at `level`: if it had children, the body's last strand continues
    /// into a new sync node, which every child's last strand targets.
    fn close_scope(&mut self, level: usize) {
        debug_assert_eq!(level + 1, self.depth, "scopes close in reverse order");
        let mut children = std::mem::take(&mut self.scopes[level]);
        if !children.is_empty() {
            self.end_strand(Kind::Seq, NONE);
            let sync = self.cur;
            for &c in &children {
                self.nodes[c as usize].set_target(sync);
            }
            children.clear();
        }
        self.scopes[level] = children;
        self.depth = level;
    }

    fn touch(&mut self, fut: u32) {
        self.end_strand(Kind::Touch, fut);
        let join = self.cur;
        self.touch_pairs.push((fut, join));
    }

    fn finish(self) -> Dag {
        let futures = self.puts.len();
        let mut touch_start = vec![0u32; futures + usize::from(futures > 0)];
        for &(f, _) in &self.touch_pairs {
            touch_start[f as usize + 1] += 1;
        }
        for f in 1..touch_start.len() {
            touch_start[f] += touch_start[f - 1];
        }
        let mut fill = touch_start.clone();
        let mut touches = vec![0u32; self.touch_pairs.len()];
        for &(f, j) in &self.touch_pairs {
            touches[fill[f as usize] as usize] = j;
            fill[f as usize] += 1;
        }
        Dag {
            nodes: self.nodes,
            puts: self.puts,
            touch_start,
            touches,
            weights: self.weights,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Futures;
    use crate::config::FutureStack;

    fn fib_fj<W: Worker>(w: &W, n: u64) -> u64 {
        if n < 2 {
            return n;
        }
        let (a, b) = w.join(|w| fib_fj(w, n - 1), |w| fib_fj(w, n - 2));
        a + b
    }

    fn fib_sf<W: Futures>(w: &W, n: u64) -> u64 {
        if n < 2 {
            return n;
        }
        w.scope(|s, w| {
            let x = w.future(s, move |_, w| fib_sf(w, n - 1));
            let y = fib_sf(w, n - 2);
            x.get(w) + y
        })
    }

    /// Calls of fib(n) that are not leaves: F(n+1) - 1.
    fn internal_calls(n: u64) -> usize {
        let (mut a, mut b) = (0usize, 1usize);
        for _ in 0..=n {
            (a, b) = (b, a + b);
        }
        a - 1
    }

    #[test]
    fn fork_join_fib_has_three_strands_per_join() {
        let (v, dag) = Recorder::record(Weights::Unit, |w| fib_fj(w, 15));
        assert_eq!(v, 610);
        dag.validate().unwrap();
        assert_eq!(dag.len(), 1 + 3 * internal_calls(15));
        assert_eq!((dag.futures(), dag.touches()), (0, 0));
        assert_eq!(dag.total_work(), dag.len() as u64);
        // fib(n)'s longest path: a fork and a sync per level down the n-1 side, then the leaf.
        assert_eq!(dag.span(), 2 * 14 + 1);
    }

    #[test]
    fn structured_future_fib_has_four_strands_per_call() {
        let (v, dag) = Recorder::record(Weights::Unit, |w| fib_sf(w, 12));
        assert_eq!(v, 144);
        dag.validate().unwrap();
        let k = internal_calls(12);
        assert_eq!(dag.len(), 1 + 4 * k);
        assert_eq!((dag.futures(), dag.touches()), (k, k));
        for f in 0..k as u32 {
            let put = dag.put(f);
            assert_eq!(dag.node(put).kind(), Kind::Put);
            let joins = dag.touch_joins(f);
            assert_eq!(joins.len(), 1);
            assert_eq!(dag.node(joins[0] - 1).kind(), Kind::Touch);
            assert!(put < joins[0]);
        }
    }

    #[test]
    fn the_exact_shape_of_a_small_program() {
        let (_, dag) = Recorder::record(Weights::Unit, |w| {
            w.work(4); // node 0 weighs 5
            w.scope(|s, w| {
                let f = w.shared_future(s, |_, w| w.work(9)); // node 1: the future (put)
                s.spawn(w, |_, _| {}); // node 2: continuation, forks 3
                let g = f.clone();
                g.get(w); // node 4 touches, 5 is its join
                f.get(w); // node 5 touches again, 6 is its join
            }); // node 7: the scope's sync
            let _ = w.join(|_| (), |w| w.work(1)); // 7 forks 8 | 9, sync 10
        });
        dag.validate().unwrap();
        let kinds: Vec<Kind> = dag.nodes().iter().map(|n| n.kind()).collect();
        use Kind::*;
        assert_eq!(
            kinds,
            [
                Future, Put, Fork, Jump, Touch, Touch, Seq, Fork, Jump, Seq, End
            ]
        );
        let targets: Vec<u32> = dag.nodes().iter().map(|n| n.target()).collect();
        assert_eq!(targets, [2, 7, 4, 7, NONE, NONE, NONE, 9, 10, NONE, NONE]);
        let work: Vec<u32> = dag.nodes().iter().map(|n| n.work()).collect();
        assert_eq!(work, [5, 10, 1, 1, 1, 1, 1, 1, 1, 2, 1]);
        assert_eq!(dag.touch_joins(0), [5, 6]);
        assert_eq!(dag.in_degrees(), [0, 1, 1, 1, 1, 2, 2, 3, 1, 1, 2]);
        // 0 -> 1 (the future) -> 5 -> 6 -> 7 -> 9 -> 10
        assert_eq!(dag.span(), 5 + 10 + 1 + 1 + 1 + 2 + 1);
    }

    #[test]
    fn runs_chain_and_reset_discards() {
        let rec = Recorder::start(&PoolConfig::with_workers(1)).unwrap();
        assert_eq!(rec.weights(), Weights::Nanos);
        rec.run(|w| fib_fj(w, 3));
        rec.run(|w| fib_fj(w, 3));
        assert_eq!(rec.stats().extra[0], ("dag_nodes", 2 * (1 + 3 * 2)));
        let dag = rec.take_dag();
        dag.validate().unwrap();
        assert_eq!(dag.node(6).kind(), Kind::Seq);
        assert!(dag.nodes().iter().all(|n| n.work() >= 1));
        rec.run(|w| fib_fj(w, 3));
        rec.reset_stats();
        assert!(rec.take_dag().is_empty());
        assert!(Recorder::start(&PoolConfig::with_workers(2)).is_err());
        let mut c = PoolConfig::with_workers(1);
        c.futures = FutureStack::Current;
        assert!(Recorder::start(&c).is_err());
    }
}
