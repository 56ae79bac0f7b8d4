//! The floor under `fib` `sf` on this machine: what a future costs when it runs on a stack of
//! its own and nothing else happens. Each call of `fib(n)` runs `fib(n-1)` on another pooled
//! stack (switch there, switch back, as the fiber runtimes' fast path does) and `fib(n-2)` on its
//! own. Three rungs, each T_1/T_s against `workloads::fib::serial`:
//!
//! - `calls`: the same record passed to a call that is not inlined, no stack switch;
//! - `switch`: the child on its own stack (restart, switch, jump back), no deque, no scope;
//! - `switch+deque`: as `switch`, and the child pushes the parent's continuation onto a
//!   work-stealing deque ([`stealbench_schedulers::deque`]) and pops it back at its end.
//!
//! The fiber runtimes' `sf` fast path does every step of the `switch+deque` rung (with the same
//! switch and the same deque), and adds the scope, the result's hand-over and their bookkeeping:
//! the rungs say how much of a future's cost on a machine is the stack switch and the stealable
//! continuation themselves.
//!
//! `cargo run --release -p stealbench-workloads --example future_floor [n] [reps]`
//! (defaults 35 and 7; every figure is the best of `reps` runs, and every answer is checked).

mod common;

use common::best;
use std::hint::black_box;
use stealbench_schedulers::deque::{self, Owner};
use stealbench_schedulers::fiber::{jump, prepare_below, restart, switch};
use stealbench_schedulers::stack::Stack;
use stealbench_workloads::fib::{expected, serial};

/// What one fork hands its child, in the parent's frame.
struct Rec {
    n: u64,
    result: u64,
    /// The parent's saved context.
    parent: usize,
    floor: *mut Floor,
}

/// The free stacks (their tops) and, for the `switch+deque` rung, the deque.
struct Floor {
    free: Vec<usize>,
    deque: Option<Owner>,
}

#[inline(never)]
fn child_call(rec: &mut Rec) {
    rec.result = calls(black_box(rec.n));
}

/// The `calls` rung: a record and a call that is not inlined per fork.
#[inline(never)]
fn calls(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let mut rec = Rec {
        n: n - 1,
        result: 0,
        parent: 0,
        floor: std::ptr::null_mut(),
    };
    child_call(&mut rec);
    rec.result + calls(n - 2)
}

/// The child's entry on its own stack: `rec` is the parent's [`Rec`].
///
/// # Safety
/// The parent is suspended in [`switched`] with `rec` in its frame, and only we continue it.
unsafe extern "C" fn child_entry(rec: usize, _top: usize) -> ! {
    let rec = rec as *mut Rec;
    // SAFETY: by the contract; the parent's frame is alive until we jump back.
    unsafe {
        let floor = (*rec).floor;
        let with_deque = (*floor).deque.is_some();
        if let Some(d) = &(*floor).deque {
            d.push([rec as usize, 1]);
        }
        (*rec).result = switched(floor, black_box((*rec).n));
        if with_deque {
            let back = (*floor).deque.as_ref().and_then(|d| d.pop());
            assert_eq!(back, Some([rec as usize, 1]), "the continuation came back");
        }
        jump(0, (*rec).parent)
    }
}

/// The `switch` and `switch+deque` rungs: `fib(n-1)` on another stack.
#[inline(never)]
fn switched(floor: *mut Floor, n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    // SAFETY: one thread, and nothing else holds a reference into `floor` across this line.
    let top = unsafe { (*floor).free.pop() }.expect("a free stack per level of recursion");
    let mut rec = Rec {
        n: n - 1,
        result: 0,
        parent: 0,
        floor,
    };
    // SAFETY: the stack at `top` is free (prepared in `main`, nothing runs on it); the child
    // jumps back to the context saved in `rec.parent` and never touches its stack again.
    unsafe {
        let to = restart(top, child_entry, top);
        switch(&raw mut rec as usize, to, &raw mut rec.parent);
        (*floor).free.push(top);
    }
    rec.result + switched(floor, n - 2)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().map_or(35, |a| a.parse().expect("n"));
    let reps: usize = args.next().map_or(7, |a| a.parse().expect("reps"));
    assert!(
        n < 64,
        "n must be below 64 (one stack per level of recursion)"
    );
    let want = expected(n);
    let stacks: Vec<Stack> = (0..n + 1)
        .map(|_| Stack::new(256 * 1024).expect("map a stack"))
        .collect();
    let tops: Vec<usize> = stacks
        .iter()
        .map(|s| {
            let top = (s.top() - 64) & !15;
            // SAFETY: the stack is unused; `restart` needs a context prepared at `top` once.
            unsafe { prepare_below(top, child_entry, top) };
            top
        })
        .collect();
    let mut floor = Floor {
        free: tops,
        deque: None,
    };
    let ts = best(reps, want, || serial(black_box(n)));
    let tc = best(reps, want, || calls(black_box(n)));
    let tw = best(reps, want, || switched(&raw mut floor, black_box(n)));
    floor.deque = Some(deque::new(64).0);
    let td = best(reps, want, || switched(&raw mut floor, black_box(n)));
    let forks = expected(n + 1) - 1;
    println!("fib({n}): T_s = {ts:.4} s; {forks} forks; best of {reps}");
    for (name, t) in [("calls", tc), ("switch", tw), ("switch+deque", td)] {
        println!(
            "{name:>13}: {t:.4} s  T_1/T_s = {:5.2}  {:5.2} ns a fork over T_s",
            t / ts,
            (t - ts) * 1e9 / forks as f64
        );
    }
    drop(stacks);
}
