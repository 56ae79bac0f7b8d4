//! The cost of the context switch under every fiber ([`stealbench_schedulers::fiber`]): a
//! parent switches to a child context and the child straight back, as a future's fast path
//! does (two switches), many times; prints nanoseconds per round trip.
//!
//! `cargo run --release -p stealbench-schedulers --example switch_cost [round trips]`

use std::time::Instant;
use stealbench_schedulers::fiber::{prepare, switch};
use stealbench_schedulers::stack::Stack;

/// Both saved contexts, at a stable address.
struct Pair {
    parent: usize,
    child: usize,
}

/// The child: switches straight back to the parent each time it is continued.
unsafe extern "C" fn child(_: usize, pair: usize) -> ! {
    let p = pair as *mut Pair;
    let mut n = 0usize;
    loop {
        n += 1;
        // SAFETY: the parent saved itself in `parent` when it switched to us.
        unsafe { switch(n, (*p).parent, &raw mut (*p).child) };
    }
}

fn main() {
    let trips: usize = std::env::args()
        .nth(1)
        .map_or(20_000_000, |a| a.parse().expect("round trips"));
    let stack = Stack::new(64 * 1024).expect("map a stack");
    let mut pair = Box::new(Pair {
        parent: 0,
        child: 0,
    });
    let p = &mut *pair as *mut Pair;
    // SAFETY: the stack is the child's alone; the child never returns.
    pair.child = unsafe { prepare(&stack, child, p as usize) };
    let mut best = f64::INFINITY;
    let mut last = 0;
    for _ in 0..5 {
        let t = Instant::now();
        for _ in 0..trips {
            // SAFETY: the child is suspended and only we continue it; it switches back here.
            last = unsafe { switch(0, (*p).child, &raw mut (*p).parent) };
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    assert_eq!(last, 5 * trips, "every round trip reached the child");
    println!(
        "{:.2} ns per round trip (two switches), best of 5 x {trips}",
        best * 1e9 / trips as f64
    );
}
