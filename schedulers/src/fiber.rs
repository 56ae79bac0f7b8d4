//! Stackful fibers on pooled [`Stack`]s that may suspend on one thread and resume on another.
//!
//! A [`Fiber`] wraps a `corosensei` coroutine running on a stack this crate mapped itself
//! ([`crate::stack`]). It is resumed with an input `I` (the runtimes pass a pointer to the
//! worker that resumes it: the explicit handle to worker state), suspends itself with a value
//! `Y` through its [`Suspender`], and finally returns an `R`, after which its stack can be
//! recovered with [`Fiber::into_stack`] and reused.
//!
//! # Thread-local storage
//!
//! A fiber may resume on another thread than the one it suspended on. Compiled code may keep the
//! address of a thread-local variable in a register or a stack slot across the switch (LLVM
//! treats the thread pointer as constant within a function), so fiber code must never hold a
//! thread-local across a suspension; the runtimes reach worker state only through the value
//! each resume passes in.

use crate::stack::Stack;
use corosensei::{Coroutine, CoroutineResult, Yielder};

/// The handle a fiber's body uses to suspend itself: `suspend(y)` returns the next resume's
/// input.
pub type Suspender<I, Y> = Yielder<I, Y>;

/// How a [`Fiber::resume`] ended: the fiber suspended with a value, or returned.
pub type FiberResult<Y, R> = CoroutineResult<Y, R>;

/// A stackful coroutine on an mmap'd [`Stack`] that can move between threads.
pub struct Fiber<I: 'static, Y: 'static, R: 'static> {
    co: Coroutine<I, Y, R, Stack>,
    bottom: usize,
    top: usize,
}

impl<I, Y, R> std::fmt::Debug for Fiber<I, Y, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fiber")
            .field(
                "stack",
                &format_args!("{:#x}..{:#x}", self.bottom, self.top),
            )
            .field("started", &self.co.started())
            .field("done", &self.co.done())
            .finish()
    }
}

// SAFETY: `Fiber::new` requires (as its safety contract) that every value the fiber holds on
// its stack while suspended may be moved to another thread; the body closure is `Send`. So
// moving the fiber, i.e. its stack contents, to another thread is moving `Send` data.
unsafe impl<I: Send, Y: Send, R: Send> Send for Fiber<I, Y, R> {}

impl<I: 'static, Y: 'static, R: 'static> Fiber<I, Y, R> {
    /// Prepares a fiber that will run `body(suspender, first_input)` on `stack` when first
    /// resumed. Nothing runs yet.
    ///
    /// # Safety
    ///
    /// Whatever the body holds on its stack across a `suspend` (its own locals and those of
    /// every function it calls) must be safe to move to another thread, and no thread-local
    /// reference may be held across a `suspend`: the fiber may be resumed by another thread.
    pub unsafe fn new<F>(stack: Stack, body: F) -> Self
    where
        F: FnOnce(&Suspender<I, Y>, I) -> R + Send + 'static,
    {
        let (bottom, top) = (stack.bottom(), stack.top());
        Fiber {
            co: Coroutine::with_stack(stack, body),
            bottom,
            top,
        }
    }

    /// Runs the fiber until it suspends or returns. Panics if it already returned. A panic
    /// escaping the body is propagated to the caller (the runtimes catch panics inside).
    #[inline]
    pub fn resume(&mut self, input: I) -> FiberResult<Y, R> {
        self.co.resume(input)
    }

    /// Has the body returned?
    pub fn is_done(&self) -> bool {
        self.co.done()
    }

    /// The usable stack range `[bottom, top)`.
    pub fn stack_range(&self) -> (usize, usize) {
        (self.bottom, self.top)
    }

    /// The stack of a fiber whose body returned, for reuse. Panics if it has not returned.
    pub fn into_stack(self) -> Stack {
        self.co.into_stack()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    type TestFiber = Fiber<usize, usize, Vec<usize>>;

    #[test]
    fn runs_suspends_returns_and_reuses_its_stack() {
        let stack = Stack::new(64 * 1024).unwrap();
        // SAFETY: the body holds only usizes and a Vec across suspensions.
        let mut f: TestFiber = unsafe {
            Fiber::new(stack, |s, mut x| {
                let mut seen = vec![];
                for _ in 0..3 {
                    seen.push(x);
                    x = s.suspend(x * 10);
                }
                seen.push(x);
                seen
            })
        };
        assert_eq!(f.resume(1).as_yield(), Some(10));
        assert_eq!(f.resume(2).as_yield(), Some(20));
        assert_eq!(f.resume(3).as_yield(), Some(30));
        assert_eq!(f.resume(4).as_return(), Some(vec![1, 2, 3, 4]));
        assert!(f.is_done());
        let stack = f.into_stack();
        // SAFETY: as above.
        let mut g: TestFiber = unsafe { Fiber::new(stack, |_, x| vec![x]) };
        assert_eq!(g.resume(7).as_return(), Some(vec![7]));
    }

    /// Two threads pass fibers back and forth; each fiber suspends after every step, so it
    /// resumes alternately on both threads. Each resume passes the resuming thread's index (the
    /// explicit handle), and the fiber checks it sees its stack data intact and both threads.
    #[test]
    fn fibers_migrate_between_threads_many_times() {
        const FIBERS: usize = 8;
        const STEPS: usize = 5_000;
        // `None` tells a thread to stop (each thread holds a sender to the other).
        let (to_a, from_main_a) = mpsc::channel::<Option<TestFiber>>();
        let (to_b, from_main_b) = mpsc::channel::<Option<TestFiber>>();
        let (done_tx, done_rx) = mpsc::channel::<Vec<usize>>();
        let spawn = |me: usize,
                     rx: mpsc::Receiver<Option<TestFiber>>,
                     other: mpsc::Sender<Option<TestFiber>>,
                     done: mpsc::Sender<Vec<usize>>| {
            std::thread::spawn(move || {
                while let Ok(Some(mut f)) = rx.recv() {
                    match f.resume(me) {
                        CoroutineResult::Yield(_) => other.send(Some(f)).unwrap(),
                        CoroutineResult::Return(v) => done.send(v).unwrap(),
                    }
                }
            })
        };
        let ta = spawn(0, from_main_a, to_b.clone(), done_tx.clone());
        let tb = spawn(1, from_main_b, to_a.clone(), done_tx);
        for i in 0..FIBERS {
            let stack = Stack::new(64 * 1024).unwrap();
            // SAFETY: the body holds only integers and a Vec across suspensions.
            let f: TestFiber = unsafe {
                Fiber::new(stack, move |s, mut thread| {
                    let mut per_thread = [0usize; 2];
                    let mut checksum = i;
                    for step in 0..STEPS {
                        per_thread[thread] += 1;
                        checksum = checksum.wrapping_mul(31).wrapping_add(step);
                        thread = s.suspend(step);
                    }
                    per_thread[thread] += 1;
                    vec![i, checksum, per_thread[0], per_thread[1]]
                })
            };
            if i % 2 == 0 { &to_a } else { &to_b }
                .send(Some(f))
                .unwrap();
        }
        let mut results: Vec<Vec<usize>> = (0..FIBERS).map(|_| done_rx.recv().unwrap()).collect();
        to_a.send(None).unwrap();
        to_b.send(None).unwrap();
        ta.join().unwrap();
        tb.join().unwrap();
        results.sort();
        for (i, r) in results.iter().enumerate() {
            let mut want = i;
            for step in 0..STEPS {
                want = want.wrapping_mul(31).wrapping_add(step);
            }
            assert_eq!(r[0], i);
            assert_eq!(r[1], want, "stack data survived {STEPS} migrations");
            // Strict alternation: every resume happened on the other thread.
            assert_eq!(r[2] + r[3], STEPS + 1);
            assert!(r[2].abs_diff(r[3]) <= 1, "{r:?}");
        }
    }
}
