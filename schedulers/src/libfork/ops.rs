//! The awaitables of the async front-end: [`LibforkWorker`]'s join, call and n-ary fork.

use super::frame::{Header, Kind, Outcome, Slot};
use super::worker::{Request, WorkerState, worker_of};
use crate::api::{AsyncShared, AsyncWorker};
use std::future::Future;
use std::marker::{PhantomData, PhantomPinned};
use std::mem::ManuallyDrop;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

/// The handle of a libfork task. It carries nothing: the operations find their worker in the
/// context they are polled with.
pub struct LibforkWorker<'scope> {
    _marker: PhantomData<&'scope mut &'scope ()>,
}

impl LibforkWorker<'_> {
    pub(super) fn new() -> Self {
        LibforkWorker {
            _marker: PhantomData,
        }
    }
}

impl Clone for LibforkWorker<'_> {
    fn clone(&self) -> Self {
        LibforkWorker::new()
    }
}

impl std::fmt::Debug for LibforkWorker<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LibforkWorker")
    }
}

/// Aborts the process if a libfork operation is dropped while one of its children may still
/// run (the child would write into freed memory). The runtime never does that; a program that
/// drops an unfinished `join` or `call` (a `select` over it, say) cannot run on libfork.
fn dropped_unfinished(op: &str) -> ! {
    eprintln!("libfork: a {op} was dropped before it finished (its children write into it)");
    std::process::abort();
}

/// The awaitable of [`AsyncWorker::join`]: fork `a`, call `b`, join. It owns both result
/// slots, so it must not move once polled (`PhantomPinned`) and must finish before it is
/// dropped (`Drop` aborts otherwise).
struct JoinOp<A, B, RA, RB> {
    /// 0: nothing started; 1: `a` forked; 2: `b` called; 3: waiting at the join; 4: finished;
    /// 5: making `b` after `a` returned here (nothing outstanding).
    state: u8,
    a: Option<A>,
    b: Option<B>,
    // Dropped by hand (`Drop`): only state 5 can leave an outcome in them.
    ra: ManuallyDrop<Slot<RA>>,
    rb: ManuallyDrop<Slot<RB>>,
    _pinned: PhantomPinned,
}

impl<A, B, FA, FB> Future for JoinOp<A, B, FA::Output, FB::Output>
where
    A: FnOnce() -> FA,
    B: FnOnce() -> FB,
    FA: Future,
    FB: Future,
{
    type Output = (FA::Output, FB::Output);

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let w = worker_of(cx);
        // SAFETY: nothing is moved out of the pinned fields; the slots stay where they are.
        let this = unsafe { self.get_unchecked_mut() };
        match this.state {
            0 => {
                let a = this.a.take().expect("state 0 holds the first child");
                let child = w.new_frame(a, &*this.ra, Kind::Fork);
                w.request.set(Request::Fork(child));
                this.state = 1;
                let op: *mut Self = this;
                // SAFETY: the current frame is the one this join belongs to; the join does
                // not move (pinned) and waits in state 1 until the hint is taken or cleared.
                unsafe {
                    (*w.current.get())
                        .resume
                        .set(Some((Self::make_second, op.cast())))
                };
                return Poll::Pending;
            }
            1 => {
                // Resumed by a poll (stolen, or after a panic): the hint is void.
                // SAFETY: the current frame is the one this join belongs to.
                unsafe { (*w.current.get()).resume.set(None) };
                let b = this.b.take().expect("state 1 holds the second child");
                let rb: *const Slot<_> = &*this.rb;
                // SAFETY: the current frame is the one this join belongs to.
                if unsafe { (*w.current.get()).steals.get() } == 0 {
                    // `a` is done: a panic in making `b` may unwind through this join.
                    this.state = 5;
                    let child = w.new_frame(b, rb, Kind::Call);
                    w.request.set(Request::Call(child));
                    this.state = 2;
                    return Poll::Pending;
                }
                // `a` may still run elsewhere: a panic in making `b` is `b`'s outcome.
                match catch_unwind(AssertUnwindSafe(|| w.new_frame(b, rb, Kind::Call))) {
                    Ok(child) => {
                        w.request.set(Request::Call(child));
                        this.state = 2;
                        return Poll::Pending;
                    }
                    // SAFETY: no child writes `rb`.
                    Err(p) => unsafe { *this.rb.0.get() = Some(Err(p)) },
                }
                this.state = 2;
                return self_join(w, this);
            }
            2 => return self_join(w, this),
            3 => {}
            _ => panic!("a libfork join was polled after it finished"),
        }
        this.finish()
    }
}

/// State 2 of a join (both children returned to this worker, or `b` did and `a` was stolen):
/// goes on if the continuation was never stolen, else arrives at the join counter.
#[inline(always)]
fn self_join<A, B, RA, RB>(w: &WorkerState, this: &mut JoinOp<A, B, RA, RB>) -> Poll<(RA, RB)> {
    // SAFETY: the current frame is the one this join belongs to.
    if unsafe { (*w.current.get()).steals.get() } != 0 {
        w.request.set(Request::Join);
        this.state = 3;
        return Poll::Pending;
    }
    this.finish()
}

impl<A, B, FA, FB> JoinOp<A, B, FA::Output, FB::Output>
where
    A: FnOnce() -> FA,
    B: FnOnce() -> FB,
    FA: Future,
    FB: Future,
{
    /// The join's [`ResumeFn`](super::frame::ResumeFn): state 1 of `poll` when the continuation was not stolen, done
    /// by the worker without polling the parent. A panic in making `b` unwinds to the worker
    /// loop with the parent current, as it would through the parent's poll.
    ///
    /// # Safety
    /// `op` is this join in state 1, its first child returned to this worker, `worker` the
    /// worker's [`WorkerState`] with the join's frame current.
    unsafe fn make_second(op: *mut (), worker: *const ()) -> *mut Header {
        // SAFETY: the caller's contract.
        let (this, w) = unsafe { (&mut *op.cast::<Self>(), &*worker.cast::<WorkerState>()) };
        let b = this.b.take().expect("state 1 holds the second child");
        this.state = 5;
        let child = w.new_frame(b, &*this.rb, Kind::Call);
        this.state = 2;
        child
    }
}

impl<A, B, RA, RB> JoinOp<A, B, RA, RB> {
    /// Both children are done: their outcomes, or the first panic in serial order.
    fn finish(&mut self) -> Poll<(RA, RB)> {
        self.state = 4;
        // SAFETY: both children have returned and the join ordered their writes before us.
        let (ra, rb) = unsafe { (self.ra.take(), self.rb.take()) };
        match (ra, rb) {
            (Ok(a), Ok(b)) => Poll::Ready((a, b)),
            (Err(p), _) | (_, Err(p)) => resume_unwind(p),
        }
    }
}

impl<A, B, RA, RB> Drop for JoinOp<A, B, RA, RB> {
    fn drop(&mut self) {
        match self.state {
            1..=3 => dropped_unfinished("join"),
            // Making `b` panicked: `a`'s outcome is in its slot, `b`'s slot is empty. (States 0
            // and 4 leave both slots empty: nothing written yet, or both taken.)
            // SAFETY: `a` has returned and nothing else touches the slot; dropped once.
            5 => unsafe { ManuallyDrop::drop(&mut self.ra) },
            _ => {}
        }
    }
}

/// The awaitable of [`AsyncWorker::call`].
struct CallOp<F, R> {
    /// 0: not started; 1: the child runs; 2: finished.
    state: u8,
    f: Option<F>,
    r: Slot<R>,
    _pinned: PhantomPinned,
}

impl<F, Fut> Future for CallOp<F, Fut::Output>
where
    F: FnOnce() -> Fut,
    Fut: Future,
{
    type Output = Fut::Output;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Fut::Output> {
        let w = worker_of(cx);
        // SAFETY: nothing is moved out of the pinned slot.
        let this = unsafe { self.get_unchecked_mut() };
        match this.state {
            0 => {
                let f = this.f.take().expect("state 0 holds the child");
                let child = w.new_frame(f, &this.r, Kind::Call);
                w.request.set(Request::Call(child));
                this.state = 1;
                Poll::Pending
            }
            1 => {
                this.state = 2;
                // SAFETY: a called child has returned before its parent is resumed.
                match unsafe { this.r.take() } {
                    Ok(v) => Poll::Ready(v),
                    Err(p) => resume_unwind(p),
                }
            }
            _ => panic!("a libfork call was polled after it finished"),
        }
    }
}

impl<F, R> Drop for CallOp<F, R> {
    fn drop(&mut self) {
        if self.state == 1 {
            dropped_unfinished("call");
        }
    }
}

/// A run of children of a [`ForkReduceOp`] left behind by a steal: the fold of the children
/// that returned to the parent before it (`None`: none did), then the slot of the child that
/// was running when the continuation was stolen (it returns to another worker).
struct Stolen<R> {
    folded: Option<Outcome<R>>,
    /// `None`: the op's own slot.
    out: Option<Box<Slot<R>>>,
}

/// What a [`ForkReduceOp`] keeps once its continuation has been stolen (on the heap: most
/// scopes are never stolen from, and pay one null pointer for it).
struct Spill<R> {
    /// The runs left behind, in order.
    runs: Vec<Stolen<R>>,
    /// Where the running child writes.
    out: Box<Slot<R>>,
}

/// `a` then `b`, reduced; the first panic in order wins.
#[inline(always)]
fn combine<R>(
    reduce: &mut impl FnMut(R, R) -> R,
    a: Option<Outcome<R>>,
    b: Outcome<R>,
) -> Outcome<R> {
    match (a, b) {
        (None, b) => b,
        (Some(Err(p)), _) | (Some(Ok(_)), Err(p)) => Err(p),
        (Some(Ok(a)), Ok(b)) => Ok(reduce(a, b)),
    }
}

/// Nothing started yet.
const START: u8 = 0;
/// A forked child runs; the continuation is on the deque.
const FORKED: u8 = 1;
/// The last child, called, runs.
const CALLED: u8 = 2;
/// Waiting at the join (the continuation was stolen).
const JOINING: u8 = 3;
/// Finished.
const DONE: u8 = 4;
/// The parent is advancing the iterator, making a child or reducing: only children left
/// behind by steals may run.
const BUSY: u8 = 5;

/// The awaitable of [`AsyncWorker::fork_reduce`]: forks a child per item but the last, calls
/// the last, joins once (libfork's loop of forks). It must not move once polled (the running
/// child writes into it) and must finish before it is dropped (`Drop` aborts otherwise).
///
/// While the continuation is never stolen, each child returns to this worker, which pops the
/// parent back and polls it: the child's outcome is in the op's own slot and is folded at once,
/// then the next child is made. A thief that resumes the parent sees the frame's `steals`
/// changed since the fork: the running child will return elsewhere, so its slot and the fold
/// so far are set aside ([`Stolen`], in the [`Spill`]) and later children write into a new
/// slot. The join then waits for the left-behind children (the frame's split counter, as a
/// binary join), and the runs are reduced in order: the output does not depend on who stole
/// what, given an associative `reduce`. While some child may still run (the frame's `steals`
/// is not 0), a panic of the parent's own steps (the iterator, making a child, `reduce`) is
/// caught and kept as the scope's outcome, so the op is not dropped under a running child.
struct ForkReduceOp<I: Iterator, F, Fut: Future, G> {
    state: u8,
    items: I,
    /// The item after the running child's (`None`: that child is the last).
    next: Option<I::Item>,
    child: F,
    reduce: G,
    /// The fold of the current run: `init`, then each child that returned here.
    folded: Option<Outcome<Fut::Output>>,
    /// The children's slot until the first steal. Not dropped: it is empty whenever the op can
    /// be dropped (each outcome is taken when its child returns, or by `finish`).
    slot: ManuallyDrop<Slot<Fut::Output>>,
    spill: Option<Box<Spill<Fut::Output>>>,
    /// The frame's `steals` when the running child was forked.
    seen: u32,
    _pinned: PhantomPinned,
}

impl<I, F, Fut, G> ForkReduceOp<I, F, Fut, G>
where
    I: Iterator,
    F: FnMut(I::Item) -> Fut,
    Fut: Future,
    G: FnMut(Fut::Output, Fut::Output) -> Fut::Output,
{
    /// Where the running (or next) child writes.
    #[inline(always)]
    fn out_ptr(&self) -> *const Slot<Fut::Output> {
        match &self.spill {
            None => &*self.slot,
            Some(s) => &*s.out,
        }
    }

    /// Folds a child's outcome (or a panic of the parent's own steps) into the current run,
    /// catching a panic of `reduce` if some child may still run.
    #[inline(always)]
    fn fold(&mut self, outcome: Outcome<Fut::Output>, steals: u32) {
        let folded = self.folded.take();
        let reduce = &mut self.reduce;
        self.folded = Some(if steals == 0 {
            combine(reduce, folded, outcome)
        } else {
            catch_unwind(AssertUnwindSafe(|| combine(reduce, folded, outcome))).and_then(|r| r)
        });
    }

    /// Starts the child of `item`: forked if another item follows, else called.
    #[inline(always)]
    fn start(&mut self, w: &WorkerState, item: I::Item, steals: u32) -> Poll<Fut::Output> {
        let last = self.next.is_none();
        let out = self.out_ptr();
        let child = &mut self.child;
        let kind = if last { Kind::Call } else { Kind::Fork };
        let made = if steals == 0 {
            Ok(w.new_frame(|| child(item), out, kind))
        } else {
            catch_unwind(AssertUnwindSafe(|| w.new_frame(|| child(item), out, kind)))
        };
        match made {
            Ok(h) => {
                self.seen = steals;
                self.state = if last { CALLED } else { FORKED };
                w.request.set(if last {
                    Request::Call(h)
                } else {
                    Request::Fork(h)
                });
                Poll::Pending
            }
            Err(p) => {
                self.fold(Err(p), steals);
                self.join(w, steals)
            }
        }
    }

    /// The running child was left behind by a steal: sets its slot and the current run aside.
    #[cold]
    fn left_behind(&mut self) {
        let folded = self.folded.take();
        match &mut self.spill {
            None => {
                self.spill = Some(Box::new(Spill {
                    runs: vec![Stolen { folded, out: None }],
                    out: Box::new(Slot::new()),
                }))
            }
            Some(s) => {
                let out = std::mem::replace(&mut s.out, Box::new(Slot::new()));
                s.runs.push(Stolen {
                    folded,
                    out: Some(out),
                });
            }
        }
    }

    /// Every child is started: goes on if the continuation was never stolen, else arrives at
    /// the join counter.
    #[inline(always)]
    fn join(&mut self, w: &WorkerState, steals: u32) -> Poll<Fut::Output> {
        if steals != 0 {
            w.request.set(Request::Join);
            self.state = JOINING;
            return Poll::Pending;
        }
        self.finish()
    }

    /// Every child is done: the runs reduced in order.
    #[inline(always)]
    fn finish(&mut self) -> Poll<Fut::Output> {
        self.state = DONE;
        let mut total = None;
        if let Some(spill) = self.spill.take() {
            for run in spill.runs {
                if let Some(f) = run.folded {
                    total = Some(combine(&mut self.reduce, total, f));
                }
                // SAFETY: the join ordered the left-behind child's write before us.
                let outcome = unsafe {
                    match run.out {
                        None => self.slot.take(),
                        Some(b) => b.take(),
                    }
                };
                total = Some(combine(&mut self.reduce, total, outcome));
            }
        }
        if let Some(f) = self.folded.take() {
            total = Some(combine(&mut self.reduce, total, f));
        }
        match total.expect("a fork_reduce folds its init first") {
            Ok(v) => Poll::Ready(v),
            Err(p) => resume_unwind(p),
        }
    }
}

impl<I, F, Fut, G> Future for ForkReduceOp<I, F, Fut, G>
where
    I: Iterator,
    F: FnMut(I::Item) -> Fut,
    Fut: Future,
    G: FnMut(Fut::Output, Fut::Output) -> Fut::Output,
{
    type Output = Fut::Output;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Fut::Output> {
        let w = worker_of(cx);
        // SAFETY: nothing is moved out of the pinned slot; the boxed slots do not move.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: the current frame is the one this op belongs to.
        let steals = unsafe { (*w.current.get()).steals.get() };
        match this.state {
            START => {
                // Nothing of ours runs yet: a panic here unwinds through the op.
                this.state = BUSY;
                let Some(item) = this.items.next() else {
                    return this.finish();
                };
                this.next = this.items.next();
                return this.start(w, item, steals);
            }
            FORKED | CALLED => {
                let forked = this.state == FORKED;
                this.state = BUSY;
                if forked && steals != this.seen {
                    // Stolen while the child ran: it returns elsewhere, into its own slot.
                    this.left_behind();
                } else {
                    // SAFETY: the child returned to this worker before it resumed the parent.
                    let outcome = unsafe { (*this.out_ptr()).take() };
                    this.fold(outcome, steals);
                }
                let failed = matches!(this.folded, Some(Err(_)));
                if let (true, false, Some(item)) = (forked, failed, this.next.take()) {
                    let next = if steals == 0 {
                        Ok(this.items.next())
                    } else {
                        let items = &mut this.items;
                        catch_unwind(AssertUnwindSafe(|| items.next()))
                    };
                    match next {
                        Ok(next) => {
                            this.next = next;
                            return this.start(w, item, steals);
                        }
                        Err(p) => this.fold(Err(p), steals),
                    }
                }
                return this.join(w, steals);
            }
            JOINING => {}
            _ => panic!("a libfork fork_reduce was polled after it finished"),
        }
        this.finish()
    }
}

impl<I: Iterator, F, Fut: Future, G> Drop for ForkReduceOp<I, F, Fut, G> {
    fn drop(&mut self) {
        if matches!(self.state, FORKED | CALLED | JOINING)
            || (self.state != DONE && self.spill.is_some())
        {
            dropped_unfinished("fork_reduce");
        }
    }
}

/// The future handles of a runtime without futures: no value of this type exists.
#[derive(Debug)]
pub struct NoFuture<T>(std::convert::Infallible, PhantomData<T>);

impl<T> Clone for NoFuture<T> {
    fn clone(&self) -> Self {
        match self.0 {}
    }
}

impl<T> Future for NoFuture<T> {
    type Output = T;
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<T> {
        match self.0 {}
    }
}

impl<T: Send + Sync> AsyncShared<T> for NoFuture<T> {
    #[allow(unreachable_code)]
    fn get<'a>(&'a self) -> impl Future<Output = &'a T> + Send + 'a
    where
        T: 'a,
    {
        match self.0 {}
        std::future::pending()
    }
}

/// The panic of a spawn on libfork (`Scheduler::CAPABILITIES.futures` is false; the harness
/// never asks).
fn no_futures() -> ! {
    panic!("libfork is a fork-join runtime: it has no futures (spawn, spawn_shared)")
}

impl<'scope> AsyncWorker<'scope> for LibforkWorker<'scope> {
    type Handle<T: Send + 'scope> = NoFuture<T>;
    type Shared<T: Send + Sync + 'scope> = NoFuture<T>;

    #[inline(always)]
    fn join<A, B, FA, FB>(
        &self,
        a: A,
        b: B,
    ) -> impl Future<Output = (FA::Output, FB::Output)> + Send
    where
        A: FnOnce(Self) -> FA + Send + 'scope,
        B: FnOnce(Self) -> FB + Send + 'scope,
        FA: Future + Send + 'scope,
        FB: Future + Send + 'scope,
        FA::Output: Send + 'scope,
        FB::Output: Send + 'scope,
    {
        JoinOp {
            state: 0,
            a: Some(move || a(LibforkWorker::new())),
            b: Some(move || b(LibforkWorker::new())),
            ra: ManuallyDrop::new(Slot::new()),
            rb: ManuallyDrop::new(Slot::new()),
            _pinned: PhantomPinned,
        }
    }

    #[inline(always)]
    fn fork_reduce<I, F, Fut, G>(
        &self,
        items: I,
        mut child: F,
        init: Fut::Output,
        reduce: G,
    ) -> impl Future<Output = Fut::Output> + Send
    where
        I: IntoIterator + Send + 'scope,
        I::IntoIter: Send + 'scope,
        I::Item: Send + 'scope,
        F: FnMut(Self, I::Item) -> Fut + Send + 'scope,
        Fut: Future + Send + 'scope,
        Fut::Output: Send + 'scope,
        G: FnMut(Fut::Output, Fut::Output) -> Fut::Output + Send + 'scope,
    {
        ForkReduceOp {
            state: START,
            items: items.into_iter(),
            next: None,
            child: move |item| child(LibforkWorker::new(), item),
            reduce,
            folded: Some(Ok(init)),
            slot: ManuallyDrop::new(Slot::new()),
            spill: None,
            seen: 0,
            _pinned: PhantomPinned,
        }
    }

    #[inline(always)]
    fn call<F, Fut>(&self, f: F) -> impl Future<Output = Fut::Output> + Send
    where
        F: FnOnce(Self) -> Fut + Send + 'scope,
        Fut: Future + Send + 'scope,
        Fut::Output: Send + 'scope,
    {
        CallOp {
            state: 0,
            f: Some(move || f(LibforkWorker::new())),
            r: Slot::new(),
            _pinned: PhantomPinned,
        }
    }

    fn spawn<F, Fut>(&self, _f: F) -> impl Future<Output = NoFuture<Fut::Output>> + Send
    where
        F: FnOnce(Self) -> Fut + Send + 'scope,
        Fut: Future + Send + 'scope,
        Fut::Output: Send + 'scope,
    {
        std::future::poll_fn(|_| no_futures())
    }

    fn spawn_shared<F, Fut>(&self, _f: F) -> impl Future<Output = NoFuture<Fut::Output>> + Send
    where
        F: FnOnce(Self) -> Fut + Send + 'scope,
        Fut: Future + Send + 'scope,
        Fut::Output: Send + Sync + 'scope,
    {
        std::future::poll_fn(|_| no_futures())
    }
}
