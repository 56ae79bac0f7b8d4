//! The floor under `fib` `fj` on `libfork` on this machine: what a stackless fork costs when
//! nothing but its mandated steps happen. Rungs, each T_1/T_s against `workloads::fib::serial`:
//!
//! - `async`: fib's async state machines, every child polled in place to completion (the
//!   `serial/front=async` arm: no frame of its own, nothing stealable);
//! - `frames`: every child's future in a frame of its own on a linear stack (bump allocation,
//!   freed LIFO), polled through a function pointer by a trampoline; the parent is polled
//!   twice per join (fork `a`; finish after `b`): when `a` returns, the trampoline makes `b`
//!   through the join's hint without polling the parent;
//! - `frames+deque`: as `frames`, and the parent is pushed on a work-stealing deque
//!   ([`stealbench_schedulers::deque`]) at the fork and popped back when `a` returns.
//!
//! `libfork` does every step of the `frames+deque` rung (with the same deque), and adds what a
//! real runtime needs: segmented stacks, the split counter's check, outcomes that carry panics,
//! the request hand-over, counters. The last line times `libfork` itself at P = 1.
//!
//! `cargo run --release -p stealbench-workloads --example fork_floor [n] [reps]`
//! (defaults 35 and 7; every figure is the best of `reps` runs, and every answer is checked).

#![allow(clippy::manual_async_fn)]

mod common;

use common::best;
use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::ptr;
use std::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};
use stealbench_schedulers::deque::{self, Owner};
use stealbench_schedulers::libfork::LibforkPool;
use stealbench_schedulers::serial::Serial;
use stealbench_schedulers::{AsyncForkJoin, PoolConfig, Scheduler};
use stealbench_workloads::fib::{expected, fj_async, serial};

/// A join's hint: makes its second child, given the join and the machine.
type Resume = (unsafe fn(*mut (), &Machine) -> *mut Hdr, *mut ());

/// A frame's header: its poll, its parent, where the stack pointer goes back to, and the
/// hint its join left at its fork (make the second child).
#[repr(C)]
struct Hdr {
    poll: unsafe fn(*mut Hdr, &mut Context<'_>) -> bool,
    parent: *mut Hdr,
    mark: usize,
    forked: bool,
    resume: Option<Resume>,
}

/// A frame: header, where the result goes, the future.
#[repr(C)]
struct Frame<F> {
    h: Hdr,
    out: *mut u64,
    fut: F,
}

/// What the last poll asks of the trampoline.
#[derive(Clone, Copy)]
enum Req {
    None,
    Run(*mut Hdr),
}

/// The machine: one linear stack, the frame being polled, the request, an optional deque.
struct Machine {
    stack: Box<[u128]>,
    sp: Cell<usize>,
    current: Cell<*mut Hdr>,
    req: Cell<Req>,
    deque: Option<Owner>,
}

static VTABLE: RawWakerVTable =
    RawWakerVTable::new(|d| RawWaker::new(d, &VTABLE), |_| {}, |_| {}, |_| {});

fn machine<'a>(cx: &Context<'a>) -> &'a Machine {
    // SAFETY: only `run` polls these futures, with a waker whose data is the machine.
    unsafe { &*cx.waker().data().cast::<Machine>() }
}

/// # Safety
/// `h` heads a live `Frame<F>` that has not finished.
unsafe fn poll_frame<F: Future<Output = u64>>(h: *mut Hdr, cx: &mut Context<'_>) -> bool {
    let fr = h.cast::<Frame<F>>();
    // SAFETY: the frame does not move until freed.
    match unsafe { Pin::new_unchecked(&mut (*fr).fut) }.poll(cx) {
        Poll::Pending => false,
        Poll::Ready(v) => {
            // SAFETY: finished: dropped once, result written to the parent's slot.
            unsafe {
                ptr::drop_in_place(&raw mut (*fr).fut);
                *(*fr).out = v;
            }
            true
        }
    }
}

impl Machine {
    /// A child frame for the future `make` makes, on top of the stack.
    fn frame<F: Future<Output = u64>>(
        &self,
        make: impl FnOnce() -> F,
        out: *mut u64,
        forked: bool,
    ) -> *mut Hdr {
        let mark = self.sp.get();
        let at = (mark + 15) & !15;
        let end = at + size_of::<Frame<F>>();
        let base = self.stack.as_ptr() as usize;
        assert!(
            end - base <= self.stack.len() * 16,
            "the linear stack is full"
        );
        self.sp.set(end);
        let fr = at as *mut Frame<F>;
        // SAFETY: the space is ours, aligned to 16 (enough for these frames).
        unsafe {
            (&raw mut (*fr).h).write(Hdr {
                poll: poll_frame::<F>,
                parent: self.current.get(),
                mark,
                forked,
                resume: None,
            });
            (&raw mut (*fr).out).write(out);
            (&raw mut (*fr).fut).write(make());
        }
        fr.cast()
    }

    /// Polls from `f` until the root returns.
    ///
    /// # Safety
    /// `f` is a live frame of this machine with a null parent.
    unsafe fn run(&self, mut f: *mut Hdr) {
        let raw = RawWaker::new((self as *const Machine).cast(), &VTABLE);
        // SAFETY: the vtable's functions do nothing with the data.
        let waker = unsafe { Waker::from_raw(raw) };
        let mut cx = Context::from_waker(&waker);
        loop {
            self.current.set(f);
            // SAFETY: `f` is live and unfinished.
            if unsafe { ((*f).poll)(f, &mut cx) } {
                // SAFETY: `f` finished; it is the last frame on the stack.
                let (parent, mark, forked) = unsafe { ((*f).parent, (*f).mark, (*f).forked) };
                self.sp.set(mark);
                if parent.is_null() {
                    return;
                }
                if forked && let Some(d) = &self.deque {
                    assert_eq!(d.pop(), Some([parent as usize, 0]), "the parent came back");
                }
                // SAFETY: the parent is live; its hint, if any, is its join's.
                f = match unsafe { (*parent).resume.take() } {
                    Some((make, op)) => {
                        self.current.set(parent);
                        // SAFETY: `op` is the parent's join, in state 1.
                        unsafe { make(op, self) }
                    }
                    None => parent,
                };
            } else {
                let Req::Run(child) = self.req.replace(Req::None) else {
                    unreachable!("only joins return Pending here")
                };
                // SAFETY: the child's header was just written.
                if unsafe { (*child).forked }
                    && let Some(d) = &self.deque
                {
                    d.push([f as usize, 0]);
                }
                f = child;
            }
        }
    }
}

/// Fork `a`, call `b`, join: the parent is polled at the start, after `a`, after `b`.
struct Join<A, B> {
    state: u8,
    a: Option<A>,
    b: Option<B>,
    ra: u64,
    rb: u64,
}

impl<A, B, FA, FB> Future for Join<A, B>
where
    A: FnOnce() -> FA,
    B: FnOnce() -> FB,
    FA: Future<Output = u64>,
    FB: Future<Output = u64>,
{
    type Output = (u64, u64);
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<(u64, u64)> {
        let m = machine(cx);
        // SAFETY: the slots do not move (the future is pinned in its frame).
        let this = unsafe { self.get_unchecked_mut() };
        match this.state {
            0 => {
                let child = m.frame(this.a.take().unwrap(), &mut this.ra, true);
                m.req.set(Req::Run(child));
                this.state = 1;
                let op: *mut Self = this;
                // SAFETY: the current frame is this join's; the join is pinned.
                unsafe { (*m.current.get()).resume = Some((Self::make_second, op.cast())) };
                Poll::Pending
            }
            _ => Poll::Ready((this.ra, this.rb)),
        }
    }
}

impl<A, B, FA, FB> Join<A, B>
where
    A: FnOnce() -> FA,
    B: FnOnce() -> FB,
    FA: Future<Output = u64>,
    FB: Future<Output = u64>,
{
    /// The hint: state 1, done by the trampoline.
    ///
    /// # Safety
    /// `op` is a `Self` in state 1 whose frame is current.
    unsafe fn make_second(op: *mut (), m: &Machine) -> *mut Hdr {
        // SAFETY: the caller's contract.
        let this = unsafe { &mut *op.cast::<Self>() };
        this.state = 2;
        m.frame(this.b.take().unwrap(), &mut this.rb, false)
    }
}

fn fib_frames(n: u64) -> impl Future<Output = u64> {
    async move {
        if n < 2 {
            return n;
        }
        let (a, b) = Join {
            state: 0,
            a: Some(move || fib_frames(n - 1)),
            b: Some(move || fib_frames(n - 2)),
            ra: 0,
            rb: 0,
        }
        .await;
        a + b
    }
}

fn run_frames(n: u64, with_deque: bool) -> u64 {
    let m = Machine {
        stack: vec![0u128; 1 << 16].into_boxed_slice(),
        sp: Cell::new(0),
        current: Cell::new(ptr::null_mut()),
        req: Cell::new(Req::None),
        deque: with_deque.then(|| deque::new(64).0),
    };
    m.sp.set(m.stack.as_ptr() as usize);
    let mut out = 0u64;
    let root = m.frame(|| fib_frames(n), &mut out, false);
    // SAFETY: the root was just made, with a null parent (`current` is null).
    unsafe { m.run(root) };
    out
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().map_or(35, |s| s.parse().expect("n"));
    let reps: usize = args.next().map_or(7, |s| s.parse().expect("reps"));
    let want = expected(n);
    let ts = best(reps, want, || serial(std::hint::black_box(n)));
    println!("fib({n}), best of {reps}: T_s = {:.4} s", ts);
    let pool = Serial::start(&PoolConfig::with_workers(1)).expect("serial");
    let rungs: [(&str, f64); 3] = [
        (
            "async",
            best(reps, want, || pool.run_async(|c| fj_async(c, n))),
        ),
        ("frames", best(reps, want, || run_frames(n, false))),
        ("frames+deque", best(reps, want, || run_frames(n, true))),
    ];
    for (name, t) in rungs {
        println!("{name:>14}: {t:.4} s = {:.2} x T_s", t / ts);
    }
    let lf = LibforkPool::start(&PoolConfig::with_workers(1)).expect("libfork");
    let t = best(reps, want, || lf.run_async(|c| fj_async(c, n)));
    println!("{:>14}: {t:.4} s = {:.2} x T_s", "libfork P=1", t / ts);
}
