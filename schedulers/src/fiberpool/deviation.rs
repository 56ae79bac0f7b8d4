//! Deviations from the serial order (Spoonhower et al., SPAA 2009, Definition 1; Singer et
//! al., PPoPP 2019, Definition 4.5), counted exactly, per worker, in O(1) per strand and
//! without a trace.
//!
//! # Strands and the serial order
//!
//! A *strand* is a maximal run of a task's code without a runtime event. The events of the
//! closure front-end are: `join(a, b)` (a fork: the strand that calls it ends), the return of
//! `a` and of `b`, the creation of a future or a spawn (a fork), the return of its task (its
//! put), a touch (`get`), and the end of a scope's body (the sync of the scope's tasks). Every
//! closure is at least one strand, possibly empty; a strand never spans a fiber switch, so a
//! worker runs one strand at a time, to its end.
//!
//! The reference order is the *serial elision*, the order `serial` runs and the papers' one-worker
//! order of eager futures: at `join(a, b)`, `a`, then `b`, then the join's continuation; at the
//! fork of a future or spawn, its task, then the creator's continuation; at a touch, the strand
//! after the `get` follows the one before it (the task ran at its creation, earlier); at a
//! scope's end, its continuation follows the body's last strand (every task of the scope ran
//! inside the body). `pred(v)` is the strand just before v in that order. v *deviates* when the
//! worker that runs v did not run `pred(v)` immediately before it. The first strand of a root
//! task has no predecessor and never deviates. With [`FutureStack::New`] (the default) a
//! one-worker run of this pool is exactly the serial elision: every join takes its `b` back,
//! every forked child pops its parent back, every touch finds its value, and every scope's end
//! finds nothing pending, so P = 1 counts nothing. [`FutureStack::Current`] is not eager and
//! deviates by design (see the last section).
//!
//! # Fast and slow starts and ends
//!
//! A strand starts *fast* where the code runs it right after `pred(v)`, on the same worker,
//! with no other strand in between: `a` of a join (after the strand that called `join`); `b`
//! taken back by the join (after `a`'s last strand); the join's continuation after that inline
//! `b`; a forked child (its fiber is switched to straight from the creator's strand); the
//! creator's continuation handed back by its child (the child's last strand switches straight
//! to it); the strand after a touch that finds the value; a scope's continuation when nothing
//! is pending. None of these deviates, and nothing is counted or recorded: these are the fast
//! paths, whose instructions are the same as without counting.
//!
//! The three starts that [`FutureStack::Current`] adds (last section) always deviate and are
//! counted without comparing. Every other start is *slow*, and is where a deviation can
//! happen. Each slow start finds the *mark* of `pred(v)`'s end (below) where the table says, or
//! knows that `pred(v)` has not ended (then v deviates):
//!
//! | slow start of v | `pred(v)` | where `pred(v)`'s mark is |
//! |---|---|---|
//! | `b` run by whoever took its entry from a deque (`StackJob::exec`: a thief, or the join's worker's deque loop after the join's fiber suspended) | `a`'s last strand | `StackJob::a_end`, written by the join when its take-back fails, before its fiber parks on the join's `done` signal: valid only if `done` holds that parked fiber; if it does not, `a` has not ended, or has ended on another worker whose driver has not parked the fiber yet: v deviates |
//! | the join's continuation after a `b` that was not run inline | `b`'s last strand | `StackJob::b_end`, written by `exec` before it sets `done` (the continuation runs after `done` is set) |
//! | a fork's continuation continued by someone other than its child (the two *parted*) | the child's last strand | the rendezvous, written by the child before it arrives; if the parent arrives first, the child had not arrived when the continuation started, so it had not ended on this worker just before: v deviates |
//! | the strand after a touch that suspended | the strand before the touch | a local of `touch` (the same fiber) |
//! | a scope's continuation after its end suspended | the body's last strand | a local of `scope` (the same fiber) |
//! | the first strand of a root task | none | never a deviation |
//!
//! These are all the ways a strand starts: a job from a deque or the injector is a join's `b`
//! (`StackJob::exec`), a root task or a queued future's task; a fiber taken from a deque,
//! a signal or a suspended deque continues after a fork (parted: the child hands a popped-back
//! parent over directly), after a join's or a scope's wait, or after a touch.
//!
//! A strand *ends fast* when the code goes straight on to the worker's next strand: its
//! successor started fast, or one of the starts of the last section, which are counted
//! without comparing. Every other end is *slow*: the failed take-back after `a`, `b`'s end in
//! `exec`, a forked child that does not pop its parent back, a touch or a scope's end that
//! suspends, the end of a root task or of a queued future's task run from a deque. Each slow
//! end advances the worker's mark ([`Local::end_strand`]) and records it where the table says
//! the successor looks.
//!
//! # Why comparing marks is exact
//!
//! Worker i's mark is i + kP, k counting its slow ends, so marks of different workers differ,
//! and a mark names one strand end. Claim: when v starts slowly on worker W and `pred(v)`
//! ended with mark m, W ran `pred(v)` immediately before v if and only if W's mark is m.
//!
//! * If W ran `pred(v)` immediately before v, `pred(v)`'s end was slow (its successor v does
//!   not start fast), so it set W's mark to m, and W ended no strand since.
//! * If W's mark is m, `pred(v)` ended on W (the marks are distinct). Had W run another strand
//!   after it and before v, the last such strand would have ended just before v, which starts
//!   slowly, so that end would have been slow and would have advanced W's mark past m.
//!
//! So [`Local::start_strand`] counts exactly the deviations at slow starts, and fast starts
//! never deviate: the count is exact, in O(1) per strand, with a per-worker counter
//! (`Counters::deviations`, reported as `deviations`) and no trace. Marks are plain words in
//! records that exist anyway (a join's record, the fork's rendezvous, the waiting fiber's
//! frame); a join's record is two words larger, left uninitialised on its fast path.
//!
//! # Futures without a stack of their own
//!
//! [`FutureStack::Current`] pushes a future's task and lets the creator go on, so against the
//! serial elision: the creator's continuation always deviates (its predecessor, the task's
//! last strand, has not run), counted at the creation; the task's first strand always
//! deviates (its predecessor, the creator's strand, was followed by the continuation on the
//! creator's worker), counted when it starts; and the strand after a touch that ran the task
//! inline deviates (its predecessor is the strand before the touch; the task's strands ran in
//! between), counted there, after the task (charged, with the task's first strand, to the
//! worker the task left the fiber on). A touch that finds the task taken by someone else is an
//! ordinary touch (it deviates only if it suspends, as above). So every queued future costs 2
//! deviations, and a one-worker run 3 per future whose touch runs it inline, which is how a
//! one-worker run of single-touch futures touched in LIFO order (fib's `sf` on
//! `X/futures=nostack`) goes.
//!
//! Counts are meaningful for runs whose tasks do not panic (a panic ends strands where no
//! event is), one `run` at a time.
//!
//! [`FutureStack::New`]: crate::config::FutureStack::New
//! [`FutureStack::Current`]: crate::config::FutureStack::Current

use super::Policy;
use super::worker::Local;
use crate::stats::PerWorker;

impl<P: Policy> Local<P> {
    /// A strand ended on a slow path: advances this worker's mark and returns it, for the
    /// start of the strand's serial successor to compare.
    #[inline]
    pub fn end_strand(&self) -> u64 {
        let m = self.mark.get() + self.mark_step;
        self.mark.set(m);
        m
    }

    /// A strand starts on a slow path; `pred` is the mark of its serial predecessor's end, or
    /// `None` if that has not ended (or not where this start can see it). Counts a deviation
    /// unless this worker's last strand was that predecessor.
    #[inline]
    pub fn start_strand(&self, pred: Option<u64>) {
        if pred != Some(self.mark.get()) {
            self.deviated(1);
        }
    }

    /// Counts `n` deviations of strands this worker starts.
    #[inline]
    pub fn deviated(&self, n: u64) {
        // SAFETY: the cell lives as long as `self` (it is in `self.shared`), and only this
        // worker writes it.
        PerWorker::bump(unsafe { &*self.deviations_cell }, n);
    }
}
