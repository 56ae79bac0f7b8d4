//! `libfork`: stackless continuation stealing with task frames on geometric segmented stacks
//! (the libfork paper, Section III, Algorithms 3-5), through the async front-end.
//!
//! # Frames, not nested futures
//!
//! Every forked, called and root task is a frame of its own (`frame`) on a segmented stack
//! (`stack`), with a link to its parent, and the worker polls the frame directly. A parent's
//! future never contains or polls a child's: at a fork or call the parent's awaitable
//! allocates the child's frame, leaves a request with the worker and returns `Pending`, and
//! the worker loop (the trampoline that stands for C++'s symmetric transfer) does the rest. So
//! resuming a task costs one poll of its own state machine, whatever its depth.
//!
//! The awaitables reach their worker through the [`Context`] they are polled with: its waker's
//! data pointer is the worker's state, recognised by the waker's vtable (a task polled by
//! anything else panics). No `thread_local`: a task may resume on another thread, and what it
//! needs comes with each poll.
//!
//! # The operations (a parent P, on worker W with stack g)
//!
//! * **fork** (first child `a` of [`AsyncWorker::join`]; Algorithm 3): `a`'s frame is
//!   allocated on g, P is pushed on W's deque (its continuation, stealable), `a` is polled.
//! * **call** (`b` of `join`, and [`AsyncWorker::call`]): the same without the push.
//! * **return** (Algorithm 5): the frame is freed from g. A called child resumes its parent.
//!   A forked child pops W's deque: finding its parent there (the fast path, no atomic
//!   read-modify-write) it resumes it; finding the deque empty, its parent was stolen, and it
//!   does the implicit join: one `fetch_sub` on the parent's join counter. The last to arrive
//!   resumes the parent, taking over the parent's stack if it is not on it (its own is empty
//!   then); otherwise, if it is on the parent's stack, it leaves that stack to whoever will
//!   resume the parent and takes an empty one, and goes stealing.
//! * **join** (Algorithm 4): if P's continuation was never stolen since its last join, both
//!   children are done and P goes on. Otherwise P subtracts `JOIN_BIAS - steals` from its
//!   counter (the split counter: each thief counted its steal in P's frame without an atomic
//!   instruction, each robbed child subtracts 1); the last to arrive goes on with P as above.
//! * **steal**: a thief takes the oldest continuation from a victim's deque, counts the steal
//!   in that frame and resumes it on its own (empty) stack; the parent's later children are
//!   allocated there.
//! * **n-ary fork** ([`AsyncWorker::fork_reduce`], libfork's loop of `fork`s and one `join`):
//!   the parent forks a child per item and calls the last, one frame each; between two forks
//!   its continuation (the rest of the loop) is on the deque. Each steal of it leaves one child
//!   behind, which arrives at the join counter as a binary join's robbed child does, so the one
//!   join at the end is Algorithm 4 with `steals` as large as the loop was stolen. The outputs
//!   are reduced in item order (the awaitable's docs say how, whoever stole what).
//!
//! A panic in a task is caught in its frame and delivered as its outcome; the join re-raises it
//! in the parent once both children are done, so it climbs to `run_async`, which re-raises it
//! after the whole computation has stopped. The pool stays usable.
//!
//! # Pools: busy and lazy
//!
//! [`IdlePolicy::Busy`]: idle workers never sleep, they keep stealing (yielding the CPU now
//! and then). [`IdlePolicy::Lazy`] (the default): the adaptive scheme of Lin, Huang and Wong
//! as libfork uses it, per NUMA node: the workers are grouped by the node of their CPU
//! (`numa::groups_of`), and while any worker of the pool is active, each group keeps at least one
//! thief awake; the others sleep when they find nothing. A thief that finds work first counts
//! itself active, then stops counting itself a thief of its group, and if it was the group's
//! last thief it wakes a sleeper of the group; if it is the pool's first active worker, it also
//! wakes a sleeper of every other group left without a thief (one whose last thief went to
//! sleep while nobody was active). A thief that gives up sleeps only if it is not its group's
//! last thief while some worker is active. All these counters are `SeqCst`, so of a last thief
//! going to sleep and a first worker turning active, at least one sees the other. Pushes never
//! wake anyone.
//!
//! # Victims
//!
//! Each worker holds a [`VictimTable`] built at start
//! (`numa::victim_tables`) and walks it with a [`StealPass`],
//! drawing from its own xorshift64* generator: one draw and a scan of the (few) levels per
//! attempt. [`VictimPolicy::Uniform`] and
//! [`VictimPolicy::RuntimeDefault`] (the papers'
//! runtimes steal uniformly, and so does libfork without hwloc): every other worker equally
//! likely.
//! [`VictimPolicy::NumaWeighted`]: libfork's
//! weighting ([`crate::victims`]): the other workers in levels by topology distance from this
//! worker's CPU, a worker at topological distance r weighing 1 / (n r^2) (the paper's Equation
//! 6), n being how many workers are that far, and a pass first tries each worker of the nearest
//! level once, then draws. A worker's CPU is the one its pinning puts it on; unpinned workers
//! get the compact order's as a nominal placement (`numa::nominal_placement`).
//!
//! # Counters
//!
//! `steals`, `steal_attempts`; extras `frames` (frames allocated), `stacklets_allocated`,
//! `sleeps` (attempts and sleeps count only while a `run_async` is in progress), and the
//! deques' `heavy_fences`, `fence_switches` and `symmetric_pops`
//! ([`crate::deque::FenceCounts`]; the lazy pool's sleep needs no heavy fence: its counters
//! are SeqCst); gauges `stack_bytes_high_water` (the most bytes of stacklets alive at once, all
//! stacks together), `stack_bytes_live`, `stacklets_live` and `stacks_live`. Between runs
//! each worker holds at most two stacks (its own and a spare), each of at most two stacklets
//! (the first and a cached one): more would be a leak, and the tests check it.
//!
//! # Where this differs from libfork's code
//!
//! * Roots: `run_async` submits its root to one queue of the pool (a locked `Vec`, taken by
//!   whichever worker looks first), where libfork gives every worker a lock-free submission
//!   queue. libfork's queues also serve explicit scheduling (a task moving itself to a given
//!   worker), which this front-end has no operation for; a run submits a single root, so the
//!   queue is off every measured path.
//! * Stacklets are cached by the paper's rule (the `stack` module): an emptied stacklet at
//!   most twice the size of the one below it is kept, one per stack.
//!
//! # Layout
//!
//! The mechanism: `frame` (a task's frame and its join counter), `stack` (segmented
//! stacks), `worker` (the trampoline, fork, call, joins and returns of one worker) and `ops`
//! (the awaitables of the front-end: join, call, `fork_reduce`). The scheduling: `schedule`
//! (stealing and the worker loop) and `pool` (starting, stopping, statistics, `run_async`). The
//! policies: `idle` (busy and lazy) and `numa` (victims, placement, the lazy pool's groups).
//!
//! [`Context`]: std::task::Context
//! [`AsyncWorker::join`]: crate::api::AsyncWorker::join
//! [`AsyncWorker::call`]: crate::api::AsyncWorker::call
//! [`AsyncWorker::fork_reduce`]: crate::api::AsyncWorker::fork_reduce
//! [`IdlePolicy::Busy`]: crate::config::IdlePolicy::Busy
//! [`IdlePolicy::Lazy`]: crate::config::IdlePolicy::Lazy
//! [`VictimTable`]: crate::victims::VictimTable
//! [`StealPass`]: crate::victims::StealPass
//! [`VictimPolicy::Uniform`]: crate::config::VictimPolicy::Uniform
//! [`VictimPolicy::RuntimeDefault`]: crate::config::VictimPolicy::RuntimeDefault
//! [`VictimPolicy::NumaWeighted`]: crate::config::VictimPolicy::NumaWeighted

pub(crate) mod frame;
mod idle;
mod numa;
mod ops;
mod pool;
mod schedule;
mod stack;
mod worker;

pub use ops::{LibforkWorker, NoFuture};
pub use pool::LibforkPool;
pub use stack::FIRST_STACKLET_BYTES;
